"""The shared mechanism every op is built on.

An op is a forward function on arrays plus a Node subclass holding its derivative, declared side
by side (see pointwise.py for the table form, reduction.py/shape.py for the hand-written form).
This module provides what they share:

* ``operands``  -- torch's type promotion for a binary op, returning the arrays to compute with;
* ``record``    -- attach a node to the result(s) when grad mode is on and an input requires grad,
                   with the per-input (shape, dtype) a gradient must be reduced to when the
                   forward broadcast or promoted (the engine's ``_validate`` does the reducing);
* ``method``    -- expose a function as a Tensor method too (``x.exp()`` and ``torch.exp(x)``);
* ``inplace``   -- the in-place form of an op (``x.exp_()``), with torch's rules for autograd.
"""
from .. import _dtype
from .._tensor import Tensor, _wrap, bump_version
from ..autograd import grad_mode
from ..autograd.graph import Node, connect, edge_of, rebase_history, _short_name
from .._array import xp

_state = grad_mode._state
_DTYPE_OF = _dtype._BY_NUMPY
_FLOAT_KINDS = "fc"


def method(*names):
    """Decorator: also make ``fn`` a Tensor method (under its own name, or the names given)."""
    def deco(fn):
        for n in names or (fn.__name__,):
            setattr(Tensor, n, fn)
        return fn
    return deco


def as_tensor_arg(x, like=None):
    """Turn a Python number or array argument into a Tensor (for ops that need a tensor)."""
    if isinstance(x, Tensor):
        return x
    from .creation import tensor as _t
    if isinstance(x, (bool, int, float)) and like is not None:
        dt = _dtype.result_type_of((), (), (_dtype.scalar_dtype(x),))
        if like._data.dtype.kind in _FLOAT_KINDS and not isinstance(x, bool) or \
                (isinstance(x, int) and like._data.dtype.kind in "iu"):
            dt = like.dtype
            if isinstance(x, int) and not isinstance(x, bool) and dt.numpy_dtype.kind in "iu":
                # a scalar operand wraps into the tensor's integer dtype (torch: where(u8, -2) is 254),
                # which torch.tensor(-2, dtype=uint8) itself refuses
                return _t(x).to(dt)
        return _t(x, dtype=dt)
    return _t(x)


def result_dtype(*args):
    """torch.result_type over tensors and Python numbers."""
    dims, zeros, scalars = [], [], []
    for a in args:
        if isinstance(a, Tensor):
            (dims if a._data.ndim else zeros).append(_DTYPE_OF[a._data.dtype])
        elif a is not None:
            scalars.append(_dtype.scalar_dtype(a))
    return _dtype.result_type_of(dims, zeros, scalars)


def operands(a, b):
    """Arrays (or a NumPy scalar for a number b) to compute ``a op b`` in torch's result dtype.

    A Python number ``b`` comes back as a NumPy scalar of the (promoted) array's dtype, so NumPy
    computes in exactly that dtype whatever its version: NumPy 2 treats a bare Python number as
    "weak" (NEP 50) and would keep the array's dtype anyway, but NumPy 1.x's value-based casting makes
    a 0-d float32 array times a Python float a float64, and a bool array plus 3 an int8.
    """
    da = a._data
    if isinstance(b, Tensor):
        db = b._data
        if da.dtype is db.dtype or da.dtype == db.dtype:
            return da, db
        rt = result_dtype(a, b).numpy_dtype
        return (da if da.dtype == rt else da.astype(rt)), (db if db.dtype == rt else db.astype(rt))
    k = da.dtype.kind
    tb = type(b)
    if tb is float:
        if k in "biu":
            da = da.astype(_dtype.get_default_dtype().numpy_dtype)
    elif tb is int:
        if k in "iu":
            info = xp.iinfo(da.dtype)
            if not info.min <= b <= info.max:  # torch wraps around; NumPy refuses: wrap explicitly
                return da, xp.array(b).astype(da.dtype)[()]
        elif k == "b":
            da = da.astype(xp.int64)
    elif tb is bool:
        pass
    elif tb is complex:
        if k != "c":
            da = da.astype("complex64" if da.dtype != xp.float64 else "complex128")
    elif isinstance(b, (int, float)):  # numpy scalars and friends behave like Python numbers
        return operands(a, b.item() if hasattr(b, "item") else float(b))
    else:
        raise TypeError(f"unsupported operand type: 'Tensor' and '{tb.__name__}'")
    return da, da.dtype.type(b)


def float_array(t):
    """The array of ``t`` for an op that computes in floating point (ints promote to the default)."""
    d = t._data
    if d.dtype.kind in _FLOAT_KINDS or d.dtype == _BF16:
        return d
    return d.astype(_dtype.get_default_dtype().numpy_dtype)


_BF16 = _dtype.bfloat16.numpy_dtype


def needs_grad(*tensors):
    if not _state.enabled:
        return False
    for t in tensors:
        if isinstance(t, Tensor) and t._requires_grad:
            return True
    return False


def record(node_cls, outputs, inputs, saved=(), saved_output=-1, meta_check=True):
    """Create ``node_cls`` and link it: ``inputs`` -> node -> ``outputs``.

    ``saved``: the tensors the derivative reads (``saved_output`` marks the op's own result among
    them). When an input's shape or dtype differs from the output's, the node remembers it so
    the engine can reduce the broadcast gradient (``sum_to``) and cast it, once, in one place.
    """
    node = node_cls.__new__(node_cls)
    if meta_check:
        out = (outputs[0] if type(outputs) is tuple else outputs)._data
        shape, dt = out.shape, out.dtype
        meta = None
        for i, t in enumerate(inputs):
            if t is not None and t._requires_grad:
                d = t._data
                if d.shape != shape or (d.dtype is not dt and d.dtype != dt):
                    if meta is None:
                        meta = [None] * len(inputs)
                    meta[i] = (t.shape, t.dtype)
        if meta is not None:
            node._input_meta = tuple(meta)
    connect(node, inputs, outputs, saved, saved_output)
    return node


def make_node_class(name, backward, saved_names=(), doc=None, num_outputs=1):
    """A Node subclass named as torch names it, with ``backward(self, grad)``."""
    return type(name, (Node,), {"backward": backward, "saved_names": tuple(saved_names),
                                "num_outputs": num_outputs, "__doc__": doc, "__module__": "torch.autograd"})


def _check_inplace(self, others=()):
    """torch's rules for an in-place op on a tensor that takes part in autograd.

    Returns whether autograd is involved (``self`` or one of ``others`` requires grad). When it is
    and ``self`` is a view, recording the op's node onto ``self`` moves the history onto the base
    (``connect`` -> ``rebase_history``: torch's CopySlices).
    """
    if not _state.enabled:
        return False
    base = self._base
    if self._requires_grad:
        fn = self._grad_fn
        if fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        if base is not None:
            if base._grad_fn is None:  # torch's test: the view's base is a leaf (whether or not it requires grad)
                raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place "
                                   "operation.")
            if fn.num_outputs > 1:
                raise RuntimeError(
                    f"Output {self._output_nr} of {_short_name(fn)} is a view and is being modified inplace. This "
                    "view is the output of a function that returns multiple views. Such functions do not allow the "
                    "output views to be modified inplace. You should replace the inplace operation by an "
                    "out-of-place one.")
    elif base is not None and base._requires_grad:
        raise RuntimeError(
            "A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that "
            "this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both "
            "the view and the inplace either both inside the no_grad block (if you don't want the inplace to be "
            "tracked) or both outside (if you want the inplace to be tracked).")
    involved = self._requires_grad
    if not involved:
        for o in others:
            if isinstance(o, Tensor) and o._requires_grad:
                involved = True
                break
    return involved


def inplace(self, op_name, fn, *args, **kwargs):
    """Run out-of-place ``fn(self, *args)`` and write the result into ``self`` (torch's x.op_()).

    With autograd involved, the derivative must see ``self``'s value from before the write, so the
    op runs on a copy and ``self`` then takes over the result's history (torch saves
    ``original_self`` the same way). When ``self`` is a view, the history goes to its base
    (``rebase_history``: CopySlices), as in torch.
    """
    if _check_inplace(self, args):
        src = _wrap(self._data.copy())
        if self._requires_grad:
            src._requires_grad = True
            src._grad_fn, src._output_nr = edge_of(self)
        result = fn(src, *args, **kwargs)
        _write(self, result, op_name)
        node = result._grad_fn
        if node is not None:
            if self._base is not None:
                rebase_history(self, node)
            else:
                self._grad_fn, self._output_nr, self._requires_grad = node, result._output_nr, True
                self._vc.rewrite_seq = node._seq  # views of self now derive from the new history
        return self
    with grad_mode.no_grad():
        result = fn(self, *args, **kwargs)
    _write(self, result, op_name)
    return self


def _write(self, result, op_name):
    d = result._data
    if d.dtype != self._data.dtype:
        if not xp.can_cast(d.dtype, self._data.dtype, "same_kind") or \
                (d.dtype.kind == "f" and self._data.dtype.kind in "iub"):
            raise RuntimeError(f"result type {_DTYPE_OF[d.dtype]._legacy} can't be cast to the desired output "
                               f"type {_DTYPE_OF[self._data.dtype]._legacy}")
    if d.shape != self._data.shape:
        try:
            xp.broadcast_shapes(d.shape, self._data.shape)
            if xp.broadcast_shapes(d.shape, self._data.shape) != self._data.shape:
                raise ValueError
        except ValueError:
            raise RuntimeError(f"output with shape {list(self._data.shape)} doesn't match the broadcast shape "
                               f"{list(xp.broadcast_shapes(d.shape, self._data.shape)) if _bc(d.shape, self._data.shape) else list(d.shape)}") from None
    self._data[...] = d
    bump_version(self, op_name)


def _bc(a, b):
    try:
        xp.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False
