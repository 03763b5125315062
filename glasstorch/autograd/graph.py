"""The recorded graph: one Node per differentiable operation, edges to the inputs' nodes.

A Node is what ``y.grad_fn`` returns. It is a plain, inspectable object:

* ``next_functions`` -- one ``(node, output_nr)`` pair per input, exactly as torch shows it:
  ``(None, 0)`` for an input that doesn't require grad, an :class:`AccumulateGrad` for a leaf;
* saved values -- tensors the derivative needs, read as ``_saved_self``/``_saved_other``/
  ``_saved_result``... (only a custom Function's node has ``saved_tensors``, as in torch),
  version-checked when read and freed by ``backward()`` unless ``retain_graph=True``;
* ``backward(*grads)`` -- the derivative formula, written with ordinary Tensor ops so that the
  same formula gives higher-order gradients when the engine runs it with ``create_graph=True``.

Every built-in op's node class (``MulBackward0`` ...) subclasses :class:`Node`, and so do the nodes
of user ``autograd.Function``\\ s: there is one mechanism.

    x --AccumulateGrad--.
                         MulBackward0 -- y
    w --AccumulateGrad--'    (saves x and w)
"""
import itertools
import os
import re
import sys
import weakref

from . import grad_mode
from .anomaly_mode import _anomaly
from .._array import positions_in, data_ptr

_state = grad_mode._state
_next_seq = itertools.count(1).__next__  # creation order of nodes (a counter, not a class attribute:
#                                          writing a class attribute would flush Python's method caches)
_NO_EDGE = (None, 0)

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward.")

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # not glasstorch_examples/


def user_frame(depth=1):
    """The innermost stack frame outside glasstorch (where the user's line is)."""
    f = sys._getframe(depth)
    while f is not None and f.f_code.co_filename.startswith(_PACKAGE_DIR):
        f = f.f_back
    return f


class Node:
    """Base of every backward node. Subclasses set ``saved_names`` and define ``backward``."""

    saved_names = ()        # names of the saved tensors, in order: _saved_<name>
    num_outputs = 1         # how many tensors the forward returned (multi-output: unbind, max(dim), ...)
    _seq = 0

    # Per-instance attributes (set by `connect`, kept off __init__ so node creation is one call):
    #   next_functions   tuple of (Node | None, int)
    #   _saved           tuple of tensors (None once freed), _versions_at_save tuple of ints
    #   _input_meta      None, or per input (shape, dtype) a gradient must be reduced/cast to
    #   _seq             creation order; the engine runs later nodes first among the ready ones
    _saved = ()
    _versions_at_save = ()
    _result_index = -1      # index into _saved of the forward's own result (stored without a cycle)
    _input_meta = None
    _hooks = None
    _pre_hooks = None
    _tensor_pre_hooks = None  # {output_nr: [hook]} from Tensor.register_hook on non-leaf tensors
    _retain_grad_hooks = None  # {output_nr: tensor-weakref} from retain_grad()
    _anomaly_trace = None
    _hooked = False            # any of the hooks above: the engine checks this one flag per node
    metadata = None

    def name(self):
        return type(self).__name__

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    def __lt__(self, other):
        # the engine's ready queue orders by creation number; accumulators share one, and are
        # then taken in any order (as in torch)
        return id(self) < id(other)

    # -- the derivative -------------------------------------------------------------------
    def backward(self, *grads):  # pragma: no cover - every subclass defines it
        raise NotImplementedError(f"{self.name()} has no derivative formula")

    def __call__(self, *grads):
        out = self.backward(*grads)
        return out if type(out) is tuple else (out,)

    # -- saved values ---------------------------------------------------------------------
    # Built-in nodes have no public ``saved_tensors`` (torch's don't: torchviz draws a
    # ``saved_tensors`` list when a node has one, and a built-in node's would hold None for an input
    # that needed no saving); custom Functions' nodes define it in autograd/function.py.
    def _unpack_saved(self):
        saved = self._saved
        if saved is None:
            raise RuntimeError(FREED_MESSAGE)
        versions = self._versions_at_save
        for i, t in enumerate(saved):
            if t is not None and t._vc.version != versions[i]:
                raise RuntimeError(_version_error(self, i, t, versions[i]))
        if self._result_index >= 0 and _state.enabled:
            # create_graph: the saved result must lead back to this node, as torch's is_output SavedVariable
            saved = list(saved)
            saved[self._result_index] = saved[self._result_index]._as_output_of(self)
            return tuple(saved)
        return saved

    def __init_subclass__(cls, **kwargs):
        # _saved_<name> for every saved tensor, as torch exposes them: properties made once per
        # class (a __getattr__ would do too, but it would slow down every attribute read on a node)
        super().__init_subclass__(**kwargs)
        for i, name in enumerate(cls.__dict__.get("saved_names", ())):
            setattr(cls, "_saved_" + name, property(lambda self, i=i: self._unpack_saved()[i],
                                                    doc=f"the saved tensor '{name}' (version-checked)"))

    def _free(self):
        if self._saved:
            self._saved = None

    # -- hooks ----------------------------------------------------------------------------
    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) -> None or new grad_inputs, after the node runs."""
        if self._hooks is None:
            self._hooks = new_hook_dict()
        self._hooked = True
        return _add_hook(self._hooks, fn)

    def register_prehook(self, fn):
        """fn(grad_outputs) -> None or new grad_outputs, before the node runs."""
        if self._pre_hooks is None:
            self._pre_hooks = new_hook_dict()
        self._hooked = True
        return _add_hook(self._pre_hooks, fn)


class RemovableHandle:
    _next_id = 0

    def __init__(self, hooks_dict):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle._next_id
        RemovableHandle._next_id += 1

    def remove(self):
        d = self.hooks_dict_ref()
        if d is not None:
            d.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class _HookDict(dict):
    """A dict that a weakref can point at (plain dicts can't)."""
    __slots__ = ("__weakref__",)


def _add_hook(hooks, fn):
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


def new_hook_dict():
    return _HookDict()


def _short_name(node):
    """How torch's version-mismatch message names a node: ExpBackward0 -> Exp."""
    return re.sub(r"Backward\d*$", "", node.name())


def _version_error(node, index, tensor, expected):
    """torch's message for a saved tensor modified in place, then what torch leaves out: which op
    modified it and on which line of the user's code."""
    vc = tensor._vc
    if index == node._result_index:
        creator = f", which is output 0 of {_short_name(node)},"
    elif tensor.grad_fn is not None:
        creator = f", which is output {tensor._output_nr} of {_short_name(tensor.grad_fn)},"
    else:
        creator = ""
    msg = (f"one of the variables needed for gradient computation has been modified by an inplace operation: "
           f"[{tensor.type()} {list(tensor.shape)}]{creator} is at version {vc.version}; expected version "
           f"{expected} instead. Hint: enable anomaly detection to find the operation that failed to compute its "
           f"gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")
    if vc.last_op is not None:
        names = type(node).saved_names
        name = f"_saved_{names[index]}" if index < len(names) else f"saved_tensors[{index}]"
        msg += f"\n[glasstorch] {name} of {node.name()} was last modified in place by {vc.last_op}()"
        if vc.where is not None:
            msg += f" at {vc.where[0]}:{vc.where[1]}"
        msg += ("; use the out-of-place form (x = x.mul(2) rather than x.mul_(2)) or .clone() the tensor "
                "before modifying it.")
    return msg


class AccumulateGrad(Node):
    """The sink for a leaf tensor: adds the incoming gradient into ``variable.grad``.

    A leaf holds its AccumulateGrad weakly (the node holds the leaf), so while a graph is alive
    every use of the leaf reaches the same node, and once the graph is gone the node goes too.
    """
    _seq = sys.maxsize  # torch gives accumulators the highest priority: they run as soon as they are ready

    def __init__(self, variable):
        self.variable = variable
        self.next_functions = ()

    @property
    def _hooked(self):  # the leaf's own hooks (Tensor.register_hook) run before accumulation
        return bool(self.variable._backward_hooks)

    def name(self):
        return "torch::autograd::AccumulateGrad"

    def backward(self, grad):  # the engine accumulates; this is only called by user code
        return ()


# ---------------------------------------------------------------------------------------------
# In-place ops on views: torch rewrites the base's history (CopySlices) and regenerates the views'
# ---------------------------------------------------------------------------------------------
class CopySlices(Node):
    """The history of a base after an in-place op on one of its views (``x[1:].mul_(2)``)::

        x's old history --.
                           CopySlices -- x          fn = MulBackward0, the in-place op's own node
        other inputs -----'   (wraps fn)

    Backward: outside the view, the base's gradient flows to its old history unchanged; inside it,
    it goes through ``fn``, whose first input was the view's old value, and ``fn``'s other inputs
    get their gradients from ``fn``.
    """

    def name(self):
        return "torch::autograd::CopySlices"

    def backward(self, grad):
        from .engine import _validate
        flat = grad.reshape(-1)
        pos = self._positions
        fn = self.fn
        res = fn(flat.index_select(0, pos).reshape(self._view_shape))
        if fn._input_meta is not None:
            res = tuple(None if g is None else _validate(fn, i, g) for i, g in enumerate(res))
        grad_base = flat.index_fill(0, pos, 0)
        if res and res[0] is not None:
            grad_base = grad_base.index_add(0, pos, res[0].reshape(-1))
        return (grad_base.reshape(grad.shape),) + tuple(res[1:])

    def _free(self):
        self.fn._free()


class AsStridedBackward0(Node):
    """The history of a view whose base's history was rewritten: the view is re-derived from the
    base (torch regenerates it the same way), its gradient scattered to its place in the base."""

    def backward(self, grad):
        flat = grad.new_zeros(self._base_numel).index_add(0, self._positions, grad.reshape(-1))
        return flat.reshape(self._base_shape)


def _view_positions(view):
    from .._tensor import _wrap
    return _wrap(positions_in(view._data, view._base._data).reshape(-1))


def regenerate_view_grad_fn(view, positions=None):
    """Give ``view`` an AsStridedBackward0 of its base's current history; returns the node."""
    base = view._base
    node = AsStridedBackward0.__new__(AsStridedBackward0)
    node._positions = _view_positions(view) if positions is None else positions
    node._base_shape, node._base_numel = base._data.shape, base._data.size
    d = view._data
    node._saved_size = tuple(d.shape)
    node._saved_stride = tuple(s // d.itemsize for s in d.strides)
    node._saved_storage_offset = (data_ptr(d) - data_ptr(base._data)) // d.itemsize
    node.next_functions = (edge_of(base),)
    node._seq = _next_seq()
    view._grad_fn, view._output_nr, view._requires_grad = node, 0, True
    return node


def rebase_history(view, fn):
    """After an in-place op on ``view`` recorded as node ``fn`` (whose first input is the view's old
    value), move the history onto the base: ``base.grad_fn`` becomes a CopySlices wrapping ``fn``
    and the view's an AsStridedBackward0 of it. Other views of the base notice the rewrite
    (``_VersionCounter.rewrite_seq``) and regenerate theirs when next used."""
    base = view._base
    positions = _view_positions(view)
    cs = CopySlices.__new__(CopySlices)
    cs.fn = fn
    cs._positions, cs._view_shape = positions, view._data.shape
    cs.next_functions = (edge_of(base),) + fn.next_functions[1:]
    cs._seq = _next_seq()
    cs._anomaly_trace = fn._anomaly_trace
    base._grad_fn, base._output_nr, base._requires_grad = cs, 0, True
    view._vc.rewrite_seq = cs._seq
    regenerate_view_grad_fn(view, positions)
    return cs


# ---------------------------------------------------------------------------------------------
# Recording
# ---------------------------------------------------------------------------------------------
def edge_of(t):
    """The (node, output_nr) a gradient for tensor ``t`` flows into."""
    if not t._requires_grad:
        return _NO_EDGE
    fn = t._grad_fn
    if fn is None:
        return (t._grad_accumulator(), 0)
    if t._base is not None and t._vc.rewrite_seq > fn._seq:  # a view whose base was modified in place
        return (regenerate_view_grad_fn(t), 0)
    return (fn, t._output_nr)


def connect(node, inputs, outputs, saved=(), saved_output=-1):
    """Finish recording ``node``: edges to ``inputs``, history on ``outputs``, saved tensors.

    ``inputs`` may contain None (an argument that is not a tensor, such as the 2 in ``x * 2``,
    which torch still shows as a ``(None, 0)`` edge). ``saved_output`` is the index in
    ``saved`` of the op's own result, which is stored without the result -> node -> result cycle.
    An output that is a view with history already (so the op modified it in place) hands its new
    history to its base (``rebase_history``).
    """
    edges = []
    for t in inputs:  # edge_of(t), written out: this runs for every input of every op
        if t is None or not t._requires_grad:
            edges.append(_NO_EDGE)
            continue
        fn = t._grad_fn
        if fn is None:  # a leaf: its AccumulateGrad, while one is alive, else a new one
            acc = t._accumulator
            acc = acc() if acc is not None else None
            edges.append((acc if acc is not None else t._grad_accumulator(), 0))
        elif t._base is not None and t._vc.rewrite_seq > fn._seq:
            edges.append((regenerate_view_grad_fn(t), 0))
        else:
            edges.append((fn, t._output_nr))
    node.next_functions = tuple(edges)
    node._seq = _next_seq()
    if saved:
        if saved_output >= 0:
            saved = list(saved)
            saved[saved_output] = saved[saved_output]._alias()
            node._result_index = saved_output
        node._saved = saved = tuple(saved)
        versions = []
        for t in saved:
            versions.append(0 if t is None else t._vc.version)
        node._versions_at_save = tuple(versions)
    if _anomaly.enabled:
        import traceback
        node._anomaly_trace = traceback.format_stack()[:-2]
    if type(outputs) is tuple:
        for i, out in enumerate(outputs):
            if out is None:
                continue
            if out._base is not None and out._grad_fn is not None:
                rebase_history(out, node)
            else:
                out._grad_fn = node
                out._requires_grad = True
                out._output_nr = i
    elif outputs._base is not None and outputs._grad_fn is not None:
        rebase_history(outputs, node)
    else:
        outputs._grad_fn = node
        outputs._requires_grad = True
    return node

