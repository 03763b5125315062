"""Drawing the backward graph: what ``loss.backward()`` will walk, node by node.

``draw(loss, params=dict(model.named_parameters()))`` returns a :class:`Drawing`: one box per autograd
node, named as torch names it (``MulBackward0``, ``AccumulateGrad``), with its saved values; one arrow per
entry of ``next_functions``, in order and with repeats. Arrows point the way gradients flow in
``backward()``: from the outputs (green, at the top) through the ops (grey) down to the leaves (blue,
the parameters' ``AccumulateGrad`` nodes). torchviz draws the same graph with the arrows reversed
(forward direction).

Example::

    >>> import torch                                 # or: import glasstorch as torch
    >>> from glasstorch.inspection.draw import draw
    >>> w = torch.ones(3, requires_grad=True)
    >>> x = torch.ones(3)
    >>> d = draw((w * x).sum(), params={"w": w})
    >>> [n.name for n in d.nodes]
    ['Tensor', 'SumBackward0', 'MulBackward0', 'AccumulateGrad']
    >>> d.edges
    [('out0', 'n0'), ('n0', 'n1'), ('n1', 'n2')]

``d`` shows itself inline in Jupyter; ``d.save("graph.svg")`` writes a file, ``d.dot`` is the graphviz text.

Only the public autograd surface is read (``grad_fn``, ``next_functions``, ``variable``, ``_saved_*``,
``type(node).__name__``), so the same code draws glasstorch graphs and real torch graphs.
"""

import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ._svg import FILL, FREED, HOOKED, render_svg

__all__ = ["draw", "draw_model", "Drawing", "NodeRecord", "graph_signature"]

_MAX_VALUE_CHARS = 40  # longer reprs of saved values are cut, so boxes stay readable


@dataclass
class NodeRecord:
    """One box of a drawing.

    ``kind`` is ``'output'`` (a tensor passed to :func:`draw`), ``'op'`` (a backward node) or ``'leaf'``
    (an ``AccumulateGrad`` node, which writes ``.grad`` of its ``variable``). ``obj`` is the tensor or
    autograd node the box stands for.
    """
    id: str
    name: str
    label: str
    kind: str
    freed: bool = False
    saved: tuple = ()  # ((name without the _saved_ prefix, text), ...)
    obj: object = field(default=None, repr=False, compare=False)
    hooks: tuple = ()  # a leaf's gradient hooks that say what they do (DistributedDataParallel's all_reduce)


def draw(*tensors, params=None, freed=None):
    """Draw the backward graph reachable from the tensors' ``grad_fn``.

    Args:
        *tensors: the outputs to draw from (lists/tuples of tensors are flattened).
        params: names for the leaves: a mapping name -> tensor such as ``dict(model.named_parameters())``
            (or an iterable of (name, tensor) pairs), matched by identity.
        freed: autograd nodes to draw as freed (dashed, grey), e.g. those a backward pass has already
            released. Nodes, their ``id()``, or drawing ids ("n3") are accepted.
    """
    outputs = _flatten(tensors)
    names = {id(t): name for name, t in dict(params or {}).items()}
    freed = set() if freed is None else {x if isinstance(x, (int, str)) else id(x) for x in freed}

    order = _walk([t.grad_fn for t in outputs if t.grad_fn is not None])
    node_id = {id(node): f"n{i}" for i, node in enumerate(order)}
    nodes, edges = [], []
    for i, t in enumerate(outputs):
        title = "output" if len(outputs) == 1 else f"output {i}"
        nodes.append(NodeRecord(f"out{i}", "Tensor", f"{title}\n{_shape(t)}", "output", obj=t))
        if t.grad_fn is not None:
            edges.append((f"out{i}", node_id[id(t.grad_fn)]))
    for node in order:
        nodes.append(_record(node, node_id[id(node)], names, freed))
        edges += [(node_id[id(node)], node_id[id(child)]) for child in _children(node)]
    return Drawing(nodes, edges)


def draw_model(model, *inputs, loss=None):
    """Draw the backward graph of ``model(*inputs)`` without running it: on the meta device.

    The model is copied with its parameters and buffers on ``meta`` (a shape and a dtype each, no
    data, nothing copied), its forward runs there under ``with torch.device("meta")`` (so tensors it
    makes itself are meta too), and the graph it records is drawn with the parameters' names. No
    arithmetic is done and no memory is taken for values, so a model too large for the machine, or one
    whose data is not at hand, is drawn in a moment; the model itself is left as it was. Lazy layers
    take their shapes from the inputs on the copy.

    Args:
        model: an ``nn.Module`` (glasstorch's or real torch's).
        *inputs: example inputs: tensors (only their shapes and dtypes are used) or sizes
            (``(64, 1, 28, 28)``, ``torch.Size``), which become meta tensors of the default dtype.
        loss: optional ``loss(output) -> scalar``, to draw the graph from a loss instead of the output
            (e.g. ``lambda out: F.cross_entropy(out, torch.zeros(64, dtype=torch.long))``: runs
            under the meta device too).

    Example::

        >>> import glasstorch as torch
        >>> from glasstorch.inspection import draw_model
        >>> model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU())
        >>> [n.name for n in draw_model(model, (64, 4)).nodes]      # nothing computed, nothing allocated
        ['Tensor', 'ReluBackward0', 'AddmmBackward0', 'AccumulateGrad', 'TBackward0', 'AccumulateGrad']
    """
    import copy
    lib = _library_of(model, inputs)
    # deepcopy with every parameter and buffer given in advance as its meta counterpart: the module
    # tree is copied, no array is (lazy layers' uninitialised parameters hold none to copy).
    memo = {}
    for p in model.parameters():
        if not _is_uninitialized(p):
            memo[id(p)] = type(p)(p.detach().to("meta"), requires_grad=p.requires_grad)
    for b in model.buffers():
        if not _is_uninitialized(b):
            memo[id(b)] = b.detach().to("meta")
    on_meta = copy.deepcopy(model, memo).to("meta")
    args = [x.detach().to("meta") if isinstance(x, lib.Tensor) else lib.empty(tuple(x), device="meta")
            for x in inputs]
    with lib.device("meta"):
        out = on_meta(*args)
        if loss is not None:
            out = loss(out)
    return draw(out, params=dict(on_meta.named_parameters()))


def _library_of(model, inputs):
    """glasstorch or torch: the library the model's tensors (or the inputs) belong to."""
    import sys
    for t in list(model.parameters()) + list(model.buffers()) + list(inputs):
        if hasattr(t, "grad_fn"):
            return sys.modules[type(t).__module__.split(".")[0]]
    import glasstorch
    return glasstorch


def _is_uninitialized(t):
    return type(t).__name__ in ("UninitializedParameter", "UninitializedBuffer")


def graph_signature(*tensors):
    """A canonical form of the backward graph, equal for two graphs exactly when they have the same shape.

    Nodes are numbered in depth-first order following ``next_functions`` in order; the signature lists,
    for each node, its type name and the numbers of its children (repeats kept, ``None`` skipped), e.g.
    ``(('SumBackward0', (1,)), ('MulBackward0', (2, 2)), ('AccumulateGrad', ()))`` for ``(w * w).sum()``.
    Works on torch and glasstorch tensors alike, so the two can be compared for the same code.
    """
    order = _walk([t.grad_fn for t in _flatten(tensors) if t.grad_fn is not None])
    number = {id(node): i for i, node in enumerate(order)}
    return tuple((type(node).__name__, tuple(number[id(c)] for c in _children(node))) for node in order)


class Drawing:
    """A drawn backward graph: ``nodes`` (list of :class:`NodeRecord`), ``edges`` (list of (src_id, dst_id)).

    Edges run from a node to each entry of its ``next_functions`` (and from each output to its
    ``grad_fn``), so they point the way gradients flow.
    """

    def __init__(self, nodes, edges):
        self.nodes = nodes
        self.edges = edges

    def __repr__(self):
        return f"<Drawing of {len(self.nodes)} nodes and {len(self.edges)} edges>"

    @property
    def dot(self):
        """The graph in graphviz's DOT language."""
        lines = ["digraph backward {",
                 "  graph [rankdir=TB, nodesep=0.2, ranksep=0.3]",
                 '  node [shape=box, style="filled,rounded", fontname="monospace", fontsize=10, '
                 "height=0.2, margin=\"0.1,0.05\"]",
                 '  edge [color="#555555", arrowsize=0.7]']
        for n in self.nodes:
            if n.freed:
                style = (f'style="filled,rounded,dashed", fillcolor="{FREED["fill"]}", '
                         f'color="{FREED["stroke"]}", fontcolor="{FREED["text"]}"')
            else:
                style = f'fillcolor="{FILL[n.kind]}"'
                if n.hooks:
                    style += f', color="{HOOKED}", penwidth=2'
            lines.append(f"  {n.id} [label={_dot_label(n.label)}, tooltip={_dot_string(n.name)}, {style}]")
        lines += [f"  {src} -> {dst}" for src, dst in self.edges]
        lines.append("}")
        return "\n".join(lines) + "\n"

    def svg(self, engine=None):
        """SVG text, laid out by graphviz's ``dot`` when it is installed, else by a built-in layout.

        ``engine='dot'`` or ``engine='python'`` picks one explicitly.
        """
        if engine is None:
            engine = "dot" if shutil.which("dot") else "python"
        if engine == "dot":
            return _run_dot(self.dot, "svg").decode("utf-8")
        if engine == "python":
            return render_svg(self.nodes, self.edges)
        raise ValueError(f"engine must be 'dot' or 'python', got {engine!r}")

    def _repr_svg_(self):  # Jupyter shows the drawing inline
        return self.svg()

    def save(self, path):
        """Write the drawing; the format follows the extension: ``.dot`` (or ``.gv``), ``.svg``, ``.png``."""
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix in (".dot", ".gv"):
            path.write_text(self.dot, encoding="utf-8")
        elif suffix == ".svg":
            path.write_text(self.svg(), encoding="utf-8")
        elif suffix == ".png":
            path.write_bytes(_run_dot(self.dot, "png"))
        else:
            raise ValueError(f"Drawing.save: unknown file extension {suffix!r}; use .dot, .svg or .png")


# -- walking the graph --------------------------------------------------------------------------------

def _flatten(tensors):
    flat, seen = [], set()
    stack = list(reversed(tensors))
    while stack:
        t = stack.pop()
        if isinstance(t, (list, tuple)):
            stack.extend(reversed(t))
        elif not hasattr(t, "grad_fn"):
            raise TypeError(f"draw() expects tensors, got {type(t).__name__}")
        elif id(t) not in seen:
            seen.add(id(t))
            flat.append(t)
    return flat


def _children(node):
    return [child for child, _ in node.next_functions if child is not None]


def _walk(roots):
    """Every node reachable from ``roots``, once each, in depth-first preorder with children in
    ``next_functions`` order. Iterative: an unrolled RNN's graph is deeper than Python's recursion limit.
    """
    order, seen = [], set()
    stack = list(reversed(roots))
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        order.append(node)  # keeps node alive, so its id() stays unique for the walk
        stack.extend(reversed(_children(node)))
    return order


# -- hooks on a leaf's gradient --------------------------------------------------------------------
# After AccumulateGrad writes a parameter's .grad, its post-accumulate hooks run (``_accumulate`` in
# autograd/engine.py). DistributedDataParallel's hook there hands the gradient to its bucket's
# all_reduce; such a hook describes itself with a ``draw_label`` ("DDP all_reduce: bucket 0 (starts
# it)"), and the drawing adds that line to the leaf's box and outlines it. Other hooks are not drawn.

def _gradient_hook_labels(variable):
    hooks = getattr(variable, "_post_accumulate_grad_hooks", None) or {}
    labels = (getattr(hook, "draw_label", None) for hook in list(hooks.values()))
    return tuple(label for label in labels if label)


# -- labels -------------------------------------------------------------------------------------------

def _record(node, rid, names, freed):
    name = type(node).__name__
    variable = getattr(node, "variable", None)
    is_freed = rid in freed or id(node) in freed
    if variable is not None:  # AccumulateGrad: the leaf tensor it accumulates into
        lines = [names[id(variable)]] if id(variable) in names else []
        lines.append(_shape(variable))
        hooks = _gradient_hook_labels(variable)
        return NodeRecord(rid, name, "\n".join(lines + list(hooks)), "leaf", is_freed, obj=node, hooks=hooks)
    saved = tuple(_saved_values(node))
    label = "\n".join([name] + [f"{key}: {text}" for key, text in saved])
    return NodeRecord(rid, name, label, "op", is_freed, saved, obj=node)


def _saved_values(node):
    for attr in dir(node):
        if not attr.startswith("_saved_"):
            continue
        try:
            value = getattr(node, attr)
        except Exception as e:  # torch refuses (RuntimeError) to hand out a saved tensor backward can't use
            message = str(e)
            if isinstance(e, RuntimeError) and "freed" in message:  # "... have already been freed"
                text = "freed"
            elif isinstance(e, RuntimeError) and "inplace" in message:  # "... modified by an inplace operation"
                text = "modified in-place"
            else:  # a broken attribute should not stop the drawing; show what went wrong instead
                text = _shorten(f"unreadable: {type(e).__name__}: {message}")
        else:
            text = _describe(value)
        yield attr[len("_saved_"):], text


def _describe(value):
    if _is_tensor(value):
        return f"{_shape(value)} {str(value.dtype).removeprefix('torch.')}"
    if isinstance(value, (list, tuple)) and value and all(_is_tensor(v) for v in value):
        return "[" + ", ".join(_describe(v) for v in value) + "]"
    return _shorten(repr(value))


def _shorten(text):
    return text if len(text) <= _MAX_VALUE_CHARS else text[:_MAX_VALUE_CHARS - 3] + "..."


def _is_tensor(value):
    return hasattr(value, "shape") and hasattr(value, "dtype")


def _shape(t):
    return str(tuple(int(s) for s in t.shape))


# -- graphviz -----------------------------------------------------------------------------------------

def _dot_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _dot_label(text):
    # "\l" ends a left-justified line in graphviz, so monospace labels line up like a table.
    return _dot_string(text).replace("\n", "\\l")[:-1] + '\\l"'


def _run_dot(source, fmt):
    exe = shutil.which("dot")
    if exe is None:
        raise RuntimeError(
            f"rendering {fmt.upper()} needs graphviz's `dot` program, which was not found on PATH. "
            "Install graphviz (apt-get install graphviz, brew install graphviz, or conda install graphviz), "
            "or save as .svg (drawn without graphviz) or .dot.")
    result = subprocess.run([exe, f"-T{fmt}"], input=source.encode("utf-8"), capture_output=True)
    if result.returncode != 0:
        raise RuntimeError(f"graphviz dot failed: {result.stderr.decode(errors='replace').strip()}")
    return result.stdout
