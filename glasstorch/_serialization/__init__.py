"""The machinery behind ``glasstorch.save`` / ``glasstorch.load`` (see ``glasstorch/serialization.py``).

One module per layer of a checkpoint, outermost first:

- ``archive``   the file: PyTorch's zip layout (``<archive>/data.pkl``, ``<archive>/data/<key>``, ...),
                the legacy pre-1.6 stream, and atomic writes of paths;
- ``pickler``   ``data.pkl`` on save: glasstorch objects pickled under torch's global names;
- ``unpickler`` ``data.pkl`` on load: a pickle interpreter that admits only an allowlist of globals;
- ``rebuild``   what those globals do here: ``torch._utils._rebuild_tensor_v2`` & co. on NumPy storage;
- ``names``     the table shared by both directions: torch dtypes, storage classes, stand-ins;
- ``tensors``   the only place that touches glasstorch tensors (tensor <-> array + flags).

Nothing here imports torch: torch's names are written and read as plain strings.
"""
