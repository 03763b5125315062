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
from .._array import positions_in, storage_offset_of
from .._array.layout import element_strides
from .._dtype import _BY_NUMPY
from .._hooks import RemovableHandle

_state = grad_mode._state
_seqs = itertools.count(1)  # creation order of nodes (a counter, not a class attribute: writing a
_next_seq = _seqs.__next__  # class attribute would flush Python's method caches). (Generated code calls
#                             next(_seqs): a builtin call, ~85 instructions less than the method-wrapper's)
_NO_EDGE = (None, 0)

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward.")

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # not glasstorch_examples/
_GLASSTORCH_FILES = (_PACKAGE_DIR, "<glasstorch")     # its files, and its generated op code (_ops_codegen)


def user_frame(depth=1):
    """The innermost stack frame outside glasstorch, its files and its generated op code (where
    the user's line is)."""
    f = sys._getframe(depth)
    while f is not None and f.f_code.co_filename.startswith(_GLASSTORCH_FILES):
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
    _result_fn = None       # weakref to the history of that result when an in-place op on a view made it
    _input_meta = None
    _hooks = None
    _pre_hooks = None
    _tensor_pre_hooks = None  # {output_nr: [hook]} from Tensor.register_hook on non-leaf tensors
    _retain_grad_hooks = None  # {output_nr: tensor-weakref} from retain_grad()
    _anomaly_trace = None
    _hooked = False            # any of the hooks above: the engine checks this one flag per node
    _runs_formulas = False     # a FormulaNode: the engine runs its formula table (on arrays, usually)
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
            if t is not None and (version_of(t) != versions[i] or t._output_nr < 0):
                _check_all_saved(self, saved, versions)
        if self._result_index >= 0 and _state.enabled:
            # create_graph: the saved result must lead back to this node, as torch's is_output SavedVariable
            saved = list(saved)
            fn = self._result_fn() if self._result_fn is not None else None
            saved[self._result_index] = saved[self._result_index]._as_output_of(fn or self)
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


class FormulaNode(Node):
    """The node of a built-in op declared with ``defop`` (``glasstorch/_ops.py``): its derivative is
    a table of formulas, one per input (or per group of inputs), which read saved values by name.

    The engine runs the formulas on arrays (the usual backward: no Tensors, no nodes made) or, for
    ``create_graph=True`` and while a TorchDispatchMode watches, on Tensors, where each formula step
    is an op that records (double backward) and can be seen.

    Class attributes (set by ``defop``): ``_op`` the OpOverload, ``_schema``, ``_edge_positions``
    (the argument positions that are tensor inputs, one edge each, or one per element of a
    ``Tensor[]``), ``_formula_table`` ((input names, formula, joint, argument specs), ...),
    ``saved_names`` (inputs and outputs some formula reads), ``_out_names``.
    Per node: ``_saved``/``_versions_at_save`` (a version of -1 marks a saved Python number), the
    parameters the formulas read as ``_saved_<name>`` attributes, ``_result_slots`` {slot: output_nr}
    for saved outputs, and ``_edge_ranges`` when an input is a list.
    """
    _runs_formulas = True
    # (no hooks yet: None, not False, tells the engine in the one read of `_hooked` it makes per node
    # that this is a formula node without hooks, the usual node -- a hook sets True on the node)
    _hooked = None
    _op = None
    _result_slots = None
    _edge_ranges = None      # {input name: (first edge, end)} when a Tensor[] input makes the count vary
    _schema = None
    _edge_positions = ()
    _formula_table = ()
    _out_names = ()
    _list_inputs = frozenset()   # names of the Tensor[] inputs
    _out_dtype = None            # the (first) output's array dtype when recorded

    def backward(self, *grads):
        """The formulas on Tensors (what calling ``node(grad)`` does, as in torch)."""
        out = self._run_formulas(list(grads), False)
        return tuple(out)

    # _record(op, args, inputs, out) and _run_formulas(grads, arrays) are generated per class from
    # the formula table (glasstorch/_ops_codegen.py): see ``NodeClass._source``.

    # -- running -----------------------------------------------------------------------------
    def _unpack_values(self, as_arrays):
        """The saved tensors, version-checked: arrays, or Tensors (saved outputs then lead back to
        this node, for double backward)."""
        saved = self._saved
        if saved is None:
            raise RuntimeError(FREED_MESSAGE)
        versions = self._versions_at_save
        out = list(saved)
        for i, t in enumerate(saved):
            v = versions[i]
            if t is None or v == -1:
                continue
            if type(v) is tuple:    # a saved list (a None in it: an undefined tensor of a Tensor?[])
                for j, (x, xv) in enumerate(zip(t, v)):
                    if x is not None and version_of(x) != xv:
                        raise RuntimeError(_version_error(self, i, x, xv))
                out[i] = [x if x is None else x._data for x in t] if as_arrays else list(t)
                continue
            if version_of(t) != v or t._output_nr < 0:   # (modified, or detached in place)
                _check_all_saved(self, saved, versions)
            if as_arrays:
                out[i] = t._data
            elif self._result_slots and i in self._result_slots and _state.enabled and _differentiable(t):
                # (a saved integer output -- max's indices -- has no history to lead back to)
                # (after an in-place op on a view the result leads back through the view's new history)
                fn = self._result_fn() if self._result_fn is not None else None
                out[i] = t._as_output_of(fn, 0) if fn is not None else t._as_output_of(self, self._result_slots[i])
        return out

    def _unpack_saved(self):
        """The saved values as torch exposes them (``_saved_self``...): Tensors; a saved Python number
        as torch's wrapped-number tensor; a saved list (``Tensor?[] indices``) as a tuple."""
        values = self._unpack_values(False)
        return tuple(tuple(v) if isinstance(v, list) else
                     _wrapped_number(v) if v is not None and not hasattr(v, "_vc") else v for v in values)



def _input_meta(inputs, ref):
    """Per input that requires grad and differs from the output ``ref`` (an array) in shape or
    dtype: the (shape, dtype) its gradient must be reduced and cast to (None when none differs).

    This and the other record helpers below read the arrays, not the Tensor's public ``shape``/``dtype``/
    ``stride()``: they run while a direct ``aten`` call is recorded, where a user's function mode would
    otherwise see reads torch makes in C++."""
    meta = None
    shape, dt = ref.shape, ref.dtype
    for i, t in enumerate(inputs):
        if t is not None and t._requires_grad:
            d = t._data
            if d.shape != shape or d.dtype != dt:
                if meta is None:
                    meta = [None] * len(inputs)
                meta[i] = (d.shape, _BY_NUMPY[d.dtype])
    return None if meta is None else tuple(meta)


def _differentiable(t):
    return t is not None and ((dt := t._data.dtype).kind in "fc" or _BY_NUMPY[dt].name == "bfloat16")


def _sizes(v):
    return [tuple(t._data.shape) for t in v] if isinstance(v, (list, tuple)) else tuple(v._data.shape)


def _strides(t):
    """``t.stride()``: its strides in elements (a formula that chooses its result's layout from its
    input's, as torch's mm_mat1_backward / mm_mat2_backward do)."""
    d = t._data
    size = d.itemsize
    strides = d.strides
    if len(strides) == 2 and size:      # (mm/addmm's, saved on every call: no generator)
        return strides[0] // size, strides[1] // size
    return tuple(s // size for s in strides) if size else (0,) * d.ndim


def _geometry(t):
    """torch's TensorGeometry of ``t``: its sizes, strides and storage offset (in elements)."""
    d = t._data
    return tuple(d.shape), element_strides(d.shape, d.strides, d.itemsize), storage_offset_of(d)


_SAVED_INFERENCE = ("Inference tensors cannot be saved for backward. Please do not use Tensors created in inference "
                    "mode in computation tracked by autograd. To work around this, you can make a clone to get a "
                    "normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
                    "`torch.inference_mode()`.")


def version_of(t):
    """Tensor ``t``'s version, without making its counter: 0 while it has none (nothing bumped it)."""
    vc = t._counter
    return 0 if vc is None else vc.version


def _version(v):
    """What a saved value's version is checked against: a tensor's version, a tuple of them for a
    list, -1 for a Python number, 0 for nothing saved. (An inference tensor may not be saved.)"""
    if v is None:
        return 0
    if hasattr(v, "_counter"):  # a tensor (one with no counter yet is at version 0)
        vc = v._counter
        if vc is None:
            return 0
        if vc.inference:
            raise RuntimeError(_SAVED_INFERENCE)
        return vc.version
    if isinstance(v, (list, tuple)):
        return tuple(version_of(t) if t is not None else 0 for t in v)
    return -1


def node_helpers():
    """The names generated node code uses."""
    return {"_input_meta": _input_meta, "_differentiable": _differentiable, "_sizes": _sizes, "_strides": _strides,
            "_geometry": _geometry,
            "_version": _version, "_BY_NUMPY": _BY_NUMPY,
            "_new": object.__new__, "_NO_EDGE": _NO_EDGE, "_view_edge": _view_edge, "_next_seq": _next_seq,
            "_seqs": _seqs,
            "_anomaly": _anomaly, "_forward_trace": _forward_trace, "_check_all_saved": _check_all_saved,
            "_FREED_MESSAGE": FREED_MESSAGE}


def _wrapped_number(v):
    """torch's form of a Python number saved for backward: a 0-d tensor (float64, int64, ...)."""
    from .._tensor import _wrap
    from .._array import xp
    dt = "bool" if isinstance(v, bool) else "int64" if isinstance(v, int) else \
        "complex128" if isinstance(v, complex) else "float64"
    return _wrap(xp.asarray(v, dtype=dt))


class _HookDict(dict):
    """A dict that a weakref can point at (plain dicts can't): a RemovableHandle holds its dict weakly."""
    __slots__ = ("__weakref__",)


def _add_hook(hooks, fn):
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


def new_hook_dict():
    return _HookDict()


def _short_name(node):
    """How torch's messages name a node: ExpBackward0 -> Exp, SqueezeBackward1 -> Squeeze1."""
    return re.sub(r"Backward(\d*)$", lambda m: "" if m.group(1) in ("", "0") else m.group(1), node.name())


def mark_detached_in_place(t):
    """detach_() on ``t``, which has a history: remember since when it had one and when it was
    cut, so a node that saved ``t`` in between can refuse it (``_output_nr`` -1 flags it)."""
    since = t.__dict__.pop("_history_since", t._grad_fn._seq)
    t.__dict__["_detached_in_place"] = (since, _next_seq())
    t._grad_fn, t._output_nr = None, -1


def _check_all_saved(node, saved, versions):
    """A saved tensor failed the quick check: raise for the first one that fails, in the order
    torch's node unpacks them (its saved inputs by name, then its saved outputs), so the same
    error surfaces."""
    names = type(node).saved_names

    def torch_order(i):
        name = names[i] if i < len(names) else "~"
        return (i == node._result_index or name.startswith("result"), name, i)
    order = sorted(range(len(saved)), key=torch_order)
    for i in order:
        t = saved[i]
        if t is not None:
            _check_saved(node, i, t, versions[i])


def _check_saved(node, index, tensor, expected):
    """A saved tensor failed the quick check: detached in place after it was saved with a history
    (torch's SavedVariable refuses that first), or modified in place."""
    if tensor._base is not None and index != node._result_index:
        view_grad_fn(tensor)  # (torch's unpacking re-derives a saved view's history first: it may refuse)
    made, cut = tensor.__dict__.get("_detached_in_place", (0, 0)) if tensor._output_nr < 0 else (0, 0)
    if made < node._seq < cut and index != node._result_index:
        raise RuntimeError("Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().This "
                           "is not supported, please use out-of-place `.detach()` instead")
    if version_of(tensor) != expected:
        raise RuntimeError(_version_error(node, index, tensor, expected))


def _version_error(node, index, tensor, expected):
    """torch's message for a saved tensor modified in place, then what torch leaves out: which op
    modified it and on which line of the user's code."""
    vc = tensor._vc
    if index == node._result_index or (getattr(node, "_result_slots", None) and index in node._result_slots):
        creator = f", which is output 0 of {_short_name(node)},"
    elif tensor._grad_fn is not None:
        # (a view's history is re-derived first, as torch's unpacking does -- which may raise
        # torch's error for a view that must not be re-derived, before this one)
        fn = tensor.grad_fn
        creator = f", which is output {tensor._output_nr} of {_short_name(fn)},"
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
# Views and in-place ops, as torch models them
# ---------------------------------------------------------------------------------------------
# A view shares its base's memory and version counter; ``_base`` is always the root (a view of a
# view has the first tensor as its base). Its creation meta says how it was made (torch's
# CreationMeta): in-place ops on views made under no_grad, by multi-output ops (unbind, split) or
# returned by a custom Function are errors when autograd is involved, because the history could
# not be rewritten correctly.
DEFAULT = "DEFAULT"
NO_GRAD_MODE = "NO_GRAD_MODE"
MULTI_OUTPUT_NODE = "MULTI_OUTPUT_NODE"
IN_CUSTOM_FUNCTION = "IN_CUSTOM_FUNCTION"


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

    _overlapping = False         # the view repeats elements of the base (an expanded view)
    _base_overlapping = False    # the base itself does (a detached expand, written through a view)

    def backward(self, grad):
        from .engine import _validate
        if self._base_overlapping or self._overlapping and self.next_functions[0][0] is not None:
            # torch copies the gradient into an array of the base's geometry, and writes the view's part of it
            # back through the view's geometry when the base's history needs it: either copy refuses to write
            # a repeated element (fuzz seed 796330736927: the first)
            raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                               "single memory location. Please clone() the tensor before performing the operation.")
        fn = self.fn
        if fn is None:
            raise RuntimeError(FREED_MESSAGE)
        flat = grad.reshape(-1)
        pos = self._positions
        res = fn(flat.index_select(0, pos).reshape(self._view_shape))
        if fn._input_meta is not None:
            res = tuple(None if g is None else _validate(fn, i, g) for i, g in enumerate(res))
        grad_base = flat.index_fill(0, pos, 0)
        if res and res[0] is not None:
            grad_base = grad_base.index_add(0, pos, res[0].reshape(-1))
        return (grad_base.reshape(grad.shape),) + tuple(res[1:])

    def _free(self):
        # torch's CopySlices lets go of fn (fn's saved values stay until fn itself runs, when a
        # gradient graph reaches it as a node of its own)
        self.fn = None


def _view_positions(view):
    from .._tensor import _wrap
    return _wrap(positions_in(view._data, view._base._data).reshape(-1))


def handle_view_on_rebase(view, indirect=False):
    """torch's check before a view's history is rewritten: only a view made the ordinary way
    (creation meta DEFAULT) may be modified in place -- directly, or through its base or another
    view (``indirect``) -- while autograd records."""
    meta = view._creation_meta
    if meta == DEFAULT:
        return
    fn = view._grad_fn
    modified = "its base or another view of its base has been" if indirect else "is being"
    if meta == NO_GRAD_MODE or fn is None:
        prefix = (f"Output {view._output_nr} of {_short_name(fn)} is a view of a view which was created in"
                  if fn is not None else "A view was created in")
        msg = f"{prefix} no_grad mode and {modified} modified inplace with grad mode enabled."
    else:
        msg = f"Output {view._output_nr} of {_short_name(fn)} is a view and {modified} modified inplace."
    if meta == MULTI_OUTPUT_NODE:
        msg += (" This view is the output of a function that returns multiple views. Such functions do not allow the "
                "output views to be modified inplace. You should replace the inplace operation by an out-of-place "
                "one.")
    elif meta == NO_GRAD_MODE:
        msg += (" Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code "
                "by moving both the view and the inplace either both inside the no_grad block (if you don't want the "
                "inplace to be tracked) or both outside (if you want the inplace to be tracked).")
    else:
        msg += (" This view was created inside a custom Function (or because an input was returned as-is) and the "
                "autograd logic to handle view+inplace would override the custom backward associated with the custom "
                "Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning the "
                "output of the custom Function.")
    raise RuntimeError(msg)


def view_grad_fn(view):
    """``view.grad_fn``, kept up to date as torch's VariableHooks::grad_fn does.

    When the version counter moved since the view's grad_fn was set, the base or a view of it was
    modified in place, so the view's old history may be stale: if the base takes part in autograd,
    the view is re-derived from the base's current history, once per version: the node
    ``aten.as_strided`` records for the view's geometry over the base (``AsStridedBackward0``,
    torch's choice too). Hooks stay with the old node, a retain_grad() moves to the new one (torch's
    update_tensor_hooks_on_new_gradfn).
    """
    fn = view._grad_fn
    vc = view._vc
    if view._attr_version == vc.version:
        return fn
    base = view._base
    if fn is None and not base._requires_grad:
        return None
    handle_view_on_rebase(view, indirect=True)
    from .._ops import aten     # (here: the ops are declared after this module, which _ops imports)
    op = aten.as_strided.default
    node = op.node._record(op, (base, list(view._data.shape), list(view.stride()), view.storage_offset()), [base], view)
    _move_retained_grad(view, fn, node)
    view._grad_fn, view._output_nr, view._requires_grad = node, 0, True
    view._attr_version = vc.version
    return node


def _move_retained_grad(t, old_fn, new_fn, output_nr=0):
    """A retain_grad() follows the tensor to its new history (the hooks registered on the old one
    stay there: they belong to the old version)."""
    if t._retains_grad and old_fn is not None and old_fn._retain_grad_hooks:
        ref = old_fn._retain_grad_hooks.pop(t._output_nr, None)
        if ref is not None:
            if new_fn._retain_grad_hooks is None:
                new_fn._retain_grad_hooks = {}
            new_fn._retain_grad_hooks[output_nr] = ref
            new_fn._hooked = True


def sync_views_requires_grad(base, value):
    """``base`` now requires grad (``value``), or no longer does (detach_): so do its views that
    have no history of their own (torch asks the base). (They are listed on the version counter,
    which detached aliases of the base share too: hence the ``_base`` test.)"""
    for ref in base._vc.views:
        v = ref()
        if v is not None and v._grad_fn is None and v._base is base:
            v._requires_grad = value


def set_history(t, node, output_nr=0, move_retained_grad=True):
    """``t`` (not a view) becomes output ``output_nr`` of ``node``: the history an in-place op gives it.
    ``move_retained_grad=False``: a retain_grad() stays with the old history (torch's set_history for
    in-place view ops such as unsqueeze_, against its rebase_history for the others)."""
    old = t._grad_fn
    if move_retained_grad:
        _move_retained_grad(t, old, node, output_nr)
    # since when t has had a history (for detach_: a node that saved it since then refuses it)
    t.__dict__.setdefault("_history_since", old._seq if old is not None else node._seq)
    t._grad_fn, t._output_nr = node, output_nr
    if not t._requires_grad:
        t._requires_grad = True
        if t._vc.views:
            sync_views_requires_grad(t, True)


def _repeats_elements(d):
    """Whether array ``d`` repeats an element (a zero stride over a dim of size > 1): torch's
    has_internal_overlap YES."""
    return 0 in d.strides and d.size and any(st == 0 and n > 1 for st, n in zip(d.strides, d.shape))


def rebase_history(t, fn):
    """After an in-place op on ``t`` recorded as node ``fn`` (whose first input is ``t``'s old
    value; ``t``'s version already bumped): ``t`` takes ``fn`` as its history. When ``t`` is a
    view, the history goes onto its base instead, as torch's rebase_history does: the base's
    grad_fn becomes a CopySlices wrapping ``fn``, and the view is re-derived from it
    (AsStridedBackward0). Every other view of the base notices the version change and
    re-derives its own history when next used (``view_grad_fn``)."""
    base = t._base
    if base is None:
        set_history(t, fn)
        return fn
    cs = CopySlices.__new__(CopySlices)
    cs.fn = fn
    cs._positions, cs._view_shape = _view_positions(t), t._data.shape
    if _repeats_elements(t._data):
        cs._overlapping = True
    if _repeats_elements(base._data):
        cs._base_overlapping = True
    cs.next_functions = (edge_of(base),) + fn.next_functions[1:]
    cs._seq = _next_seq()
    cs._anomaly_trace = fn._anomaly_trace
    set_history(base, cs)
    t._attr_version = -1  # re-derive t from the base's new history now
    view_grad_fn(t)
    return cs


def check_inplace(t, any_requires_grad):
    """torch's check_inplace, before an in-place op on ``t`` records (``any_requires_grad``: ``t``
    or another input requires grad, with grad mode on)."""
    if not any_requires_grad:
        return
    if t._base is not None:
        handle_view_on_rebase(t)
        if t._requires_grad and t._base._grad_fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    if t._requires_grad and t._grad_fn is None:  # (torch's C++ is_leaf: a view not yet re-derived counts as one)
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")


# ---------------------------------------------------------------------------------------------
# Recording
# ---------------------------------------------------------------------------------------------
def _forward_trace():
    """The stack of the forward call that is recording a node, up to the user's line (anomaly mode
    prints it when the node's backward fails): glasstorch's own frames at the end are dropped."""
    import traceback
    frames = traceback.extract_stack()[:-2]
    while frames and frames[-1].filename.startswith(_PACKAGE_DIR) or frames and frames[-1].filename.startswith("<glasstorch"):
        frames.pop()
    return traceback.format_list(frames)


def edge_of(t):
    """The (node, output_nr) a gradient for tensor ``t`` flows into."""
    if not t._requires_grad:
        return _NO_EDGE
    if t._base is not None:
        return _view_edge(t)
    fn = t._grad_fn
    if fn is None:
        return (t._grad_accumulator(), 0)
    return (fn, t._output_nr)


def has_edge(t):
    """Whether a gradient flows back to ``t`` (torch's should_compute_output for an op's input):
    ``t`` requires grad and is not a view made under no_grad, which requires grad through its
    base but has no history of its own. An op saves a partner operand only for an input with an
    edge (``x * y`` keeps ``x`` for ``y``'s gradient), so modifying it is checked only then."""
    return t._requires_grad and not (t._grad_fn is None and t._base is not None and t._base._requires_grad
                                     and t._attr_version == t._vc.version)


def _view_edge(view):
    fn = view_grad_fn(view)
    if fn is not None:
        return (fn, view._output_nr)
    if view._base._requires_grad:
        return _NO_EDGE  # a view made under no_grad of a tensor that requires grad: torch gives it no edge
    return (view._grad_accumulator(), 0)  # requires_grad_() on the view itself: a leaf of its own


def connect(node, inputs, outputs, saved=(), saved_output=-1):
    """Finish recording ``node``: edges to ``inputs``, history on ``outputs``, saved tensors.

    ``inputs`` may contain None (an argument that is not a tensor, such as the 2 in ``x * 2``,
    which torch still shows as a ``(None, 0)`` edge). ``saved_output`` is the index in
    ``saved`` of the op's own result, which is stored without the result -> node -> result cycle.
    The outputs are new tensors (an in-place op hands its node to ``rebase_history`` instead).
    """
    edges = []
    for t in inputs:  # edge_of(t), written out: this runs for every input of every op
        if t is None or not t._requires_grad:
            edges.append(_NO_EDGE)
            continue
        fn = t._grad_fn
        if t._base is not None and (fn is None or t._attr_version != t._vc.version):
            edges.append(_view_edge(t))  # a view made under no_grad, or one to re-derive from its base
        elif fn is None:  # a leaf: its AccumulateGrad, while one is alive, else a new one
            acc = t._accumulator
            acc = acc() if acc is not None else None
            edges.append((acc if acc is not None else t._grad_accumulator(), 0))
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
        node._versions_at_save = tuple(map(_version, saved))
    if _anomaly.enabled:
        node._anomaly_trace = _forward_trace()
    if type(outputs) is tuple:
        for i, out in enumerate(outputs):
            if out is None:
                continue
            out._grad_fn = node
            out._requires_grad = True
            out._output_nr = i
    else:
        outputs._grad_fn = node
        outputs._requires_grad = True
    return node



# ---------------------------------------------------------------------------------------------
# Hooks on several tensors at once
# ---------------------------------------------------------------------------------------------
class _MultiHandle:
    """The handle of a hook registered on several tensors: ``remove()`` removes it from all."""

    def __init__(self, handles):
        self.handles = tuple(handles)

    def remove(self):
        for handle in self.handles:
            handle.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Call ``fn`` once the gradients with respect to ``tensors`` are computed (torch's API).

    ``mode="all"``: after every tensor's gradient that the running backward computes, ``fn(grads)``
    with ``None`` for the tensors it does not reach (those are not waited for). ``mode="any"``: after
    the first, ``fn(grad)``. Returns a handle whose ``remove()`` unregisters it.
    """
    from .engine import current_graph_task
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    if mode == "all":
        # the nodes whose gradients are waited for: each tensor's grad_fn, or a leaf's accumulator
        nodes = [t._grad_fn if t._grad_fn is not None else t._grad_accumulator() for t in tensors]
        calls, buffers, expected = {}, {}, {}

        def inner(index):
            def hook(grad):
                task = current_graph_task()
                key = task.id
                done = calls.get(key, 0)
                if done == 0:
                    expected[key] = sum(1 for n in nodes if task.will_execute(n))
                    buffers[key] = [None] * len(tensors)
                calls[key] = done + 1
                buffers[key][index] = grad
                if done + 1 == expected[key]:
                    grads = buffers.pop(key)
                    del calls[key], expected[key]
                    fn(grads)
            return hook
    else:
        fired = set()

        def inner(index):
            def hook(grad):
                key = current_graph_task().id
                if key not in fired:
                    fired.add(key)
                    fn(grad)
            return hook
    return _MultiHandle([t.register_hook(inner(i)) for i, t in enumerate(tensors) if t._requires_grad])
