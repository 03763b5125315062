"""Recording what autograd does, in order: ``record()`` and ``summary()``.

    with glasstorch.inspection.record() as rec:
        loss = ((x @ w - y) ** 2).mean()
        loss.backward()
    print(rec)                 # the timeline
    rec.draw(loss)             # the graph, with the nodes backward freed drawn dashed

The timeline has one line per event:

* ``create``      a node was recorded by the forward pass: its torch name, what it saved, the user's line;
* ``backward``    a backward pass started (from which node, ``retain_graph``, the user's line);
* ``run``         the engine called a node's derivative (the gradient shapes it got);
* ``free``/``retain``  the node's saved values were released after it ran (or kept, ``retain_graph=True``);
* ``accumulate``  a gradient was written into a leaf's ``.grad`` (new, or added to an old one);
* ``cut``, ``zero_grad``, ``step``  the user cut a path (``.item()``, ``detach()``...), reset gradients,
  stepped an optimizer.

``summary(tensor)`` describes a graph as it is now: node count, depth, leaves, bytes held by saved values.
Recording runs in the thread that opened it, and costs nothing once the block ends.
"""
import os
import threading
import weakref
from dataclasses import dataclass, field

from ..autograd.graph import AccumulateGrad
from . import _observer
from .draw import draw as _draw

__all__ = ["record", "Recording", "Event", "summary", "GraphSummary"]

Recording = None  # set below (the class is `record`, as torch names its context managers)


@dataclass
class Event:
    """One line of the timeline. ``node`` is the node's torch name (or the leaf's name for ``accumulate``)."""
    index: int
    kind: str
    node: str
    detail: str = ""
    filename: str = None
    lineno: int = None
    ref: object = field(default=None, repr=False, compare=False)   # weakref to the node, when there is one

    def __str__(self):
        where = f"{os.path.basename(self.filename)}:{self.lineno}" if self.filename else ""
        return f"{self.index:4d}  {self.kind:<10}  {self.node:<26}  {self.detail:<48}  {where}".rstrip()


class record:
    """Record node creation, backward visits, gradient accumulation and freeing while the block runs.

    Args:
        params: names for leaves, as for :func:`draw`: a mapping name -> tensor such as
            ``dict(model.named_parameters())``. Parameters of modules called in the block are
            named automatically.

    The object is its own result: ``rec.events`` (list of :class:`Event`), ``str(rec)`` (the timeline),
    ``rec.draw(*tensors)``, ``rec.freed_nodes()``.

    It watches through the seam (``_observer.py``): node creation from the public calls the block
    makes, the backward pass from the engine's events; it registers no hook on the graph.
    """

    def __init__(self, params=None):
        self.params = dict(params or {})
        self.events = []
        self._thread = None
        self._freed = []          # weakrefs to nodes whose saved values backward released
        self._running = []        # per running backward (nested: checkpoint's recompute): nodes run so far
        self._retain = []         # per running backward: retain_graph
        self._saved_before = []   # per running node: (its saved values as text, their bytes), or None
        self._grad_was_none = True  # whether the leaf about to be accumulated into had no .grad

    # -- context manager --------------------------------------------------------------------
    def __enter__(self):
        self._thread = threading.get_ident()
        _observer.start_recording(self)
        return self

    def __exit__(self, *exc):
        _observer.stop_recording(self)
        return False

    # -- reading ------------------------------------------------------------------------------
    def timeline(self):
        """The events as text, one per line."""
        head = f"{'#':>4}  {'event':<10}  {'node':<26}  {'detail':<48}  line"
        return "\n".join([head] + [str(e) for e in self.events])

    __str__ = timeline

    def __repr__(self):
        return f"<record of {len(self.events)} events>"

    def _repr_html_(self):  # Jupyter shows the timeline as a table
        from ._html import timeline
        return timeline(self)

    def freed_nodes(self):
        """The nodes (still alive) whose saved values a backward inside this block freed."""
        return [n for n in (r() for r in self._freed) if n is not None]

    def draw(self, *tensors, params=None, freed=None):
        """:func:`glasstorch.inspection.draw` of ``tensors``, with the nodes freed in this block marked."""
        names = dict(self._auto_names())
        names.update(self.params)
        names.update(dict(params or {}))
        return _draw(*tensors, params=names, freed=self.freed_nodes() if freed is None else freed)

    def _auto_names(self):
        for mod, _ in _observer.tracker.root_modules.items():
            try:
                yield from mod.named_parameters()
            except Exception:
                continue

    def _leaf_name(self, var):
        for name, t in self.params.items():
            if t is var:
                return name
        name = _observer.tracker.param_name(var)
        return name if name is not None else f"leaf {tuple(var.shape)}"

    # -- writing (called by the observers) ----------------------------------------------------
    def _add(self, kind, node, detail="", where=None, ref=None):
        self.events.append(Event(len(self.events) + 1, kind, node, detail,
                                 where[0] if where else None, where[1] if where else None, ref))

    def _event(self, kind, *args):
        getattr(self, "_on_" + kind)(*args)

    def _on_create(self, node, where, out):
        saved = _saved_text(node)
        if out is not None:
            detail = f"-> {tuple(out.shape)}"
        else:   # a node made inside the call (the t() of F.linear, the log_softmax of cross_entropy)
            detail = "(inside the call)"
        detail += f"; saves {saved}" if saved else ""
        self._add("create", node.name(), detail, where, weakref.ref(node))

    def _on_backward(self, roots, retain_graph, where):
        self._retain.append(bool(retain_graph))
        self._running.append(0)
        names = ", ".join(n.name() for n, _ in roots if n is not None)
        self._add("backward", f"from {names}", f"retain_graph={bool(retain_graph)}", where)

    def _on_node_started(self, node):
        if type(node) is AccumulateGrad:
            self._grad_was_none = node.variable._grad is None    # (for the accumulate event that follows)
            return
        if self._running:
            self._running[-1] += 1
        self._saved_before.append((_saved_text(node), _saved_bytes([node])) if node._saved else None)

    def _on_node_finished(self, node, grads_in):
        before = self._saved_before.pop() if self._saved_before else None
        grads = ", ".join("None" if g is None else str(tuple(g.shape)) for g in grads_in)
        ref = weakref.ref(node)
        self._add("run", node.name(), f"grad_output {grads}", getattr(node, "_inspect_where", None), ref)
        if before is not None:
            text, nbytes = before
            if node._saved is None:
                self._add("free", node.name(), f"releases {text} ({nbytes} bytes)", None, ref)
                self._freed.append(ref)
            else:
                self._add("retain", node.name(), f"keeps {text} ({nbytes} bytes)", None, ref)

    def _on_backward_end(self):
        reached = self._running.pop() if self._running else 0
        if self._retain:
            self._retain.pop()
        self._add("end", "backward", f"{reached} nodes reached")

    def _on_accumulate(self, var, shape):
        how = "new .grad" if self._grad_was_none else "added to .grad"
        self._add("accumulate", self._leaf_name(var), f"{how} {shape}", None, None)

    def _on_cut(self, tensor, cut):
        self._add("cut", cut.how.split(" (")[0], f"of a tensor {tuple(tensor.shape)} that requires grad",
                  (cut.filename, cut.lineno))

    def _on_step(self, optimizer, where):
        n = sum(1 for g in optimizer.param_groups for p in g["params"] if p._grad is not None)
        self._add("step", type(optimizer).__name__, f"{n} parameters with a gradient", where)

    def _on_zero_grad(self, what, params, set_to_none, where):
        detail = f"{len(params)} gradients " + ("set to None" if set_to_none else "filled with zeros")
        self._add("zero_grad", what, detail, where)


def _saved_text(node):
    """What a node saved: ``other (3,), self (3,)`` (a saved number as its value)."""
    saved = node._saved
    if not saved:
        return "nothing" if saved is None else ""
    names = type(node).saved_names
    parts = []
    for i, t in enumerate(saved):
        if t is None:
            continue
        name = names[i] if i < len(names) else str(i)
        if isinstance(t, (list, tuple)):
            parts.append(f"{name} [{len(t)} tensors]")
        elif hasattr(t, "_data"):
            parts.append(f"{name} {tuple(t.shape)}")
        else:
            parts.append(f"{name} {t!r}")
    return ", ".join(parts)


def _root_array(a):
    while getattr(a, "base", None) is not None and hasattr(a.base, "nbytes"):
        a = a.base
    return a


def _saved_bytes(nodes):
    """Bytes held by the saved tensors of ``nodes``, each underlying buffer counted once."""
    seen = set()
    total = 0
    for node in nodes:
        for t in node._saved or ():
            for x in (t if isinstance(t, (list, tuple)) else (t,)):
                if not hasattr(x, "_data"):     # nothing, or a saved number
                    continue
                base = _root_array(x._data)
                if id(base) not in seen:
                    seen.add(id(base))
                    total += int(base.nbytes)
    return total


@dataclass
class GraphSummary:
    """What :func:`summary` found: counts, depth, leaves and the memory the saved values hold."""
    nodes: int                  # backward nodes (AccumulateGrad not counted)
    depth: int                  # the longest path from the output to a leaf, in nodes
    leaves: list                # names (or shapes) of the leaves that will receive gradients
    saved_bytes: int            # held by saved values not yet freed (each buffer once)
    freed_nodes: int            # nodes whose saved values were already freed
    ops: dict = field(default_factory=dict)   # torch node name -> count

    def __str__(self):
        top = ", ".join(f"{n} x{c}" for n, c in sorted(self.ops.items(), key=lambda kv: -kv[1])[:6])
        leaves = ", ".join(self.leaves[:8]) + (f" and {len(self.leaves) - 8} more" if len(self.leaves) > 8 else "")
        n = len(self.leaves)
        return (f"{self.nodes} nodes, depth {self.depth}, {n} lea{'f' if n == 1 else 'ves'} ({leaves}); saved values hold "
                f"{_human(self.saved_bytes)}" + (f"; {self.freed_nodes} nodes already freed" if self.freed_nodes else "")
                + (f"\nops: {top}" if top else ""))

    def _repr_html_(self):  # Jupyter shows the sentence and every op with its count
        from ._html import graph_summary
        return graph_summary(self)


def _human(n):
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024


def summary(tensor, params=None):
    """Node count, depth, leaves and bytes held by saved values of the graph behind ``tensor``.

    ``params``: names for leaves (``dict(model.named_parameters())``); parameters of modules called
    under inspection are named automatically.
    """
    names = {id(t): n for n, t in dict(params or {}).items()}
    root = tensor.grad_fn
    if root is None:
        leaves = [names.get(id(tensor), "the tensor itself")] if tensor.requires_grad else []
        return GraphSummary(0, 0, leaves, 0, 0, {})
    order = []
    seen = {id(root)}
    stack = [root]
    while stack:
        node = stack.pop()
        order.append(node)
        for nxt, _ in node.next_functions:
            if nxt is not None and id(nxt) not in seen:
                seen.add(id(nxt))
                stack.append(nxt)
    ops_nodes = [n for n in order if type(n) is not AccumulateGrad]
    ops = {}
    for n in ops_nodes:
        ops[n.name()] = ops.get(n.name(), 0) + 1
    leaves = []
    for n in order:
        if type(n) is AccumulateGrad:
            v = n.variable
            name = names.get(id(v)) or _observer.tracker.param_name(v) or f"leaf {tuple(v.shape)}"
            leaves.append(name)
    freed = sum(1 for n in ops_nodes if n._saved is None)
    return GraphSummary(len(ops_nodes), _depth(root), leaves, _saved_bytes(ops_nodes), freed, ops)


def _depth(root):
    """The longest path from ``root`` down, in backward nodes (AccumulateGrad not counted), children first."""
    memo = {}
    for node in _topological(root):
        if type(node) is AccumulateGrad:
            memo[id(node)] = 0
            continue
        kids = [memo[id(n)] for n, _ in node.next_functions if n is not None]
        memo[id(node)] = 1 + (max(kids) if kids else 0)
    return memo[id(root)]


def _topological(root):
    """Nodes children-first (post-order), iteratively."""
    out = []
    seen = set()
    stack = [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            out.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for nxt, _ in node.next_functions:
            if nxt is not None and id(nxt) not in seen:
                stack.append((nxt, False))
    return out
Recording = record
