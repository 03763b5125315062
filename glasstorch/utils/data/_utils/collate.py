"""Turning a list of samples into a batch (torch/utils/data/_utils/collate.py).

``default_collate`` is what a DataLoader with a ``batch_size`` calls on the list of
samples it fetched.  It recurses into the *structure* of the first sample and
stacks the *leaves* along a new dimension 0::

    [(x0, 0), (x1, 1), (x2, 2)]          samples: (tensor of shape S, int)
      -> [stack([x0, x1, x2]), tensor([0, 1, 2])]      (tensor 3xS, int64 tensor)

    leaf / container      batch of them becomes
    ----------------      -----------------------------------------------
    Tensor                glasstorch.stack(batch, 0)
    numpy ndarray         each converted with as_tensor, then stacked
    numpy scalar          as_tensor(batch)  (keeps the numpy dtype)
    float                 float64 tensor  (like torch: Python floats are doubles)
    int (and bool)        int64 (bool) tensor
    str, bytes            the list, unchanged
    Mapping               same mapping type, each key collated
    namedtuple            same namedtuple, each field collated
    tuple                 a *list*, each position collated (torch does this too)
    other Sequence        same sequence type, each position collated

Anything else is a TypeError with torch's message.  ``collate(batch,
collate_fn_map=...)`` is the general walker; pass your own map (type -> function)
to handle more leaf types.

numpy is imported here on purpose: numpy arrays are a *data format* users hand
to the loader (as in torch), not the compute backend that ``_array/`` hides.
"""

import collections
import copy
import re

import numpy as np

import glasstorch
# Imported from its module, not as glasstorch.Tensor: this file may be imported
# while glasstorch/__init__ is still running.
from glasstorch._tensor import Tensor

# numpy dtype strings of byte strings (S), unicode (U, 'a' is the old alias) and
# Python objects (O): such arrays cannot become tensors.
np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, "
    "dicts or lists; found {}"
)


def default_convert(data):
    """Convert every numpy array inside ``data`` into a tensor; leave the rest.

    This is the collate function a DataLoader uses when batching is off
    (``batch_size=None``): one sample at a time, no new dimension.

    >>> import numpy as np
    >>> default_convert(np.array([0, 1]))
    tensor([0, 1])
    >>> default_convert((np.array(0), 'label'))
    [tensor(0), 'label']
    """
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "bytes_", "string_"):
        # ndarrays of strings or objects have no tensor equivalent: leave them.
        if isinstance(data, np.ndarray) and np_str_obj_array_pattern.search(data.dtype.str):
            return data
        return glasstorch.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]  # a list, as torch returns
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def collate(batch, *, collate_fn_map=None):
    """Collate ``batch`` (a list of samples of the same structure).

    Leaves are handled by ``collate_fn_map``: the entry for the exact type of the
    first sample is used if present, otherwise the first entry (in insertion order)
    whose key the sample is an instance of.  Each function is called as
    ``fn(batch, collate_fn_map=collate_fn_map)``.  Containers (mappings,
    namedtuples, sequences) are walked here.
    """
    elem = batch[0]
    elem_type = type(elem)

    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type, fn in collate_fn_map.items():
            if isinstance(elem, collate_type):
                return fn(batch, collate_fn_map=collate_fn_map)

    if isinstance(elem, collections.abc.Mapping):
        collated = {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem}
        return _rebuild_mapping(elem, collated)
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        # The batch is a list of equally long sequences: transpose it, collate each position.
        elem_size = len(elem)
        if any(len(e) != elem_size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        # zip gives tuples: a position of strings stays a tuple of strings, as in torch.
        collated = [collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)]
        if isinstance(elem, tuple):
            return collated  # a list, as torch returns (kept for backwards compatibility there)
        return _rebuild_sequence(elem, collated)

    raise TypeError(default_collate_err_msg_format.format(elem_type))


def _rebuild_mapping(like, values):
    """A mapping of ``like``'s type holding ``values`` (a plain dict if that type
    cannot be built that way)."""
    try:
        if isinstance(like, collections.abc.MutableMapping):
            clone = copy.copy(like)  # keeps e.g. an OrderedDict or defaultdict's extras
            clone.update(values)
            return clone
        return type(like)(values)
    except TypeError:
        return values


def _rebuild_sequence(like, values):
    """A sequence of ``like``'s type holding ``values`` (a list if that fails)."""
    try:
        if isinstance(like, collections.abc.MutableSequence):
            clone = copy.copy(like)
            for i, value in enumerate(values):
                clone[i] = value
            return clone
        return type(like)(values)
    except TypeError:
        return values


# --- the leaf functions of default_collate ---------------------------------

def collate_tensor_fn(batch, *, collate_fn_map=None):
    return glasstorch.stack(batch, 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([glasstorch.as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    # Scalars of one numpy type (what a dataset yields) keep that dtype, as in
    # torch; through a numpy array so that no per-element type inference is needed.
    if all(type(b) is type(batch[0]) for b in batch):
        return glasstorch.as_tensor(np.asarray(batch))
    return glasstorch.as_tensor(batch)


def collate_float_fn(batch, *, collate_fn_map=None):
    return glasstorch.tensor(batch, dtype=glasstorch.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    return glasstorch.tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}
"""Leaf type -> collate function used by default_collate.  Extend it in place
(``default_collate_fn_map[MyType] = fn``) or copy it for your own ``collate``."""


def default_collate(batch):
    """Stack a list of samples into a batch, recursing into their structure.

    See the table at the top of this module.  Examples (compare torch's):

    >>> default_collate([0, 1, 2, 3])
    tensor([0, 1, 2, 3])
    >>> default_collate(['a', 'b', 'c'])
    ['a', 'b', 'c']
    >>> default_collate([{'A': 0, 'B': 1}, {'A': 100, 'B': 100}])
    {'A': tensor([  0, 100]), 'B': tensor([  1, 100])}
    >>> default_collate([(1.0, 'x'), (2.0, 'y')])
    [tensor([1., 2.], dtype=torch.float64), ('x', 'y')]
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)
