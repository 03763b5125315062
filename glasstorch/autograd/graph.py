"""The recorded graph: one Node per differentiable operation, edges to the inputs' nodes.

A Node is what ``y.grad_fn`` returns. It is a plain, inspectable object:

* ``next_functions`` -- one ``(node, output_nr)`` pair per input, exactly as torch shows it:
  ``(None, 0)`` for an input that doesn't require grad, an :class:`AccumulateGrad` for a leaf;
* saved values -- tensors the derivative needs, read as ``_saved_self``/``_saved_other``/
  ``_saved_result``... (and ``saved_tensors``), version-checked when read and freed by
  ``backward()`` unless ``retain_graph=True``;
* ``backward(*grads)`` -- the derivative formula, written with ordinary Tensor ops so that the
  same formula gives higher-order gradients when the engine runs it with ``create_graph=True``.

Every built-in op's node class (``MulBackward0`` ...) subclasses :class:`Node`, and so do the nodes
of user ``autograd.Function``\\ s: there is one mechanism.

    x --AccumulateGrad--.
                         MulBackward0 -- y
    w --AccumulateGrad--'    (saves x and w)
"""
import sys
import os
import weakref

from . import grad_mode
from .anomaly_mode import _anomaly

_state = grad_mode._state

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward.")

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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
    _sequence = 0

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
    metadata = None

    def name(self):
        return type(self).__name__

    def __repr__(self):
        return f"<{self.name()} object at {hex(id(self))}>"

    # -- the derivative -------------------------------------------------------------------
    def backward(self, *grads):  # pragma: no cover - every subclass defines it
        raise NotImplementedError(f"{self.name()} has no derivative formula")

    def __call__(self, *grads):
        out = self.backward(*grads)
        return out if type(out) is tuple else (out,)

    # -- saved values ---------------------------------------------------------------------
    @property
    def saved_tensors(self):
        return self._unpack_saved()

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

    def __getattr__(self, name):
        # _saved_<name> for every saved tensor, as torch exposes them
        if name.startswith("_saved_"):
            names = type(self).saved_names
            key = name[7:]
            if key in names:
                return self._unpack_saved()[names.index(key)]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __dir__(self):
        return list(super().__dir__()) + ["_saved_" + n for n in type(self).saved_names]

    def _free(self):
        if self._saved:
            self._saved = None

    # -- hooks ----------------------------------------------------------------------------
    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) -> None or new grad_inputs, after the node runs."""
        if self._hooks is None:
            self._hooks = new_hook_dict()
        return _add_hook(self._hooks, fn)

    def register_prehook(self, fn):
        """fn(grad_outputs) -> None or new grad_outputs, before the node runs."""
        if self._pre_hooks is None:
            self._pre_hooks = new_hook_dict()
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


def _version_error(node, index, tensor, expected):
    vc = tensor._vc
    if index == node._result_index:
        where = f"which is output 0 of {node.name()}, "
    elif tensor._grad_fn is not None:
        where = f"which is output {tensor._output_nr} of {tensor._grad_fn.name()}, "
    else:
        where = ""
    msg = (f"one of the variables needed for gradient computation has been modified by an inplace operation: "
           f"[{tensor.type()} {list(tensor.shape)}], {where}is at version {vc.version}; expected version "
           f"{expected} instead. Hint: enable anomaly detection to find the operation that failed to compute its "
           f"gradient, with torch.autograd.set_detect_anomaly(True).")
    if vc.last_op is not None:
        name = type(node).saved_names[index] if index < len(type(node).saved_names) else str(index)
        msg += (f"\n[glasstorch] The saved value '_saved_{name}' of {node.name()} was modified by "
                f"{vc.last_op}()")
        if vc.where is not None:
            msg += f" at {vc.where[0]}:{vc.where[1]}"
        msg += ("; use the out-of-place form (e.g. x = x.relu() rather than x.relu_()) or .clone() "
                "the tensor before modifying it.")
    return msg


class AccumulateGrad(Node):
    """The sink for a leaf tensor: adds the incoming gradient into ``variable.grad``."""

    def __init__(self, variable):
        self.variable = variable
        self.next_functions = ()
        self._seq = -1

    def name(self):
        return "torch::autograd::AccumulateGrad"

    def backward(self, grad):  # the engine accumulates; this is only called by user code
        return ()


def edge_of(t):
    """The (node, output_nr) a gradient for tensor ``t`` flows into."""
    if not t._requires_grad:
        return (None, 0)
    fn = t._grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    return (t._grad_accumulator(), 0)


def connect(node, inputs, outputs, saved=(), saved_output=-1):
    """Finish recording ``node``: edges to ``inputs``, history on ``outputs``, saved tensors.

    ``inputs`` may contain None (an argument that is not a tensor, such as the 2 in ``x * 2``,
    which torch still shows as a ``(None, 0)`` edge). ``saved_output`` is the index in
    ``saved`` of the op's own result, which is stored without the result -> node -> result cycle.
    """
    node.next_functions = tuple([(None, 0) if t is None else edge_of(t) for t in inputs])
    Node._sequence += 1
    node._seq = Node._sequence
    if saved:
        if saved_output >= 0:
            saved = list(saved)
            saved[saved_output] = saved[saved_output]._alias()
            node._result_index = saved_output
        node._saved = saved = tuple(saved)
        node._versions_at_save = tuple([t._vc.version if t is not None else 0 for t in saved])
    if _anomaly.enabled:
        import traceback
        node._anomaly_trace = traceback.format_stack()[:-2]
    if type(outputs) is tuple:
        for i, out in enumerate(outputs):
            if out is not None:
                out._grad_fn = node
                out._requires_grad = True
                out._output_nr = i
    else:
        outputs._grad_fn = node
        outputs._requires_grad = True
    return node
