"""More elementwise ops, beside pointwise.py: copysign, logaddexp/logaddexp2, hypot, and the bit shifts.

==============  ===================================  ===============================================
op              value                                derivative (derivatives.yaml)
==============  ===================================  ===============================================
copysign        |x| with the sign of y               result / x (0 where x = 0); y: zeros
logaddexp       log(e^x + e^y), without overflow     1 / (1 + e^(y - x));  1 / (1 + e^(x - y))
logaddexp2      log2(2^x + 2^y)                      1 / (1 + 2^(y - x));  1 / (1 + 2^(x - y))
hypot           sqrt(x^2 + y^2), without overflow    x / result;  y / result
<< , >>         bit shifts of integers               (none: integers)
==============  ===================================  ===============================================

A shift by the type's width or more gives 0 (or -1 for a right shift of a negative number), as torch.
"""
from .. import _dtype
from .._tensor import Tensor
from .._array import xp, asarray, asarray_like as _asarray_like
from ._op import method, promote_arrays, inplace
from .._ops import defop, aten
from .._seam import seam

__all__ = ["copysign", "logaddexp", "logaddexp2", "hypot", "bitwise_left_shift", "bitwise_right_shift"]


def _legacy(dt):
    return _dtype._BY_NUMPY[dt]._legacy


def _floats(self, other, op_name=None):
    """Both operands in the result type; integers go to the default float type (or are refused)."""
    a, b = promote_arrays(self, other)
    a = asarray(a)
    if a.dtype.kind not in "fc":
        if op_name is not None:
            raise NotImplementedError(f'"{op_name}" not implemented for \'{_legacy(a.dtype)}\'')
        a = a.astype(_dtype.get_default_dtype().numpy_dtype)
    return a, asarray(b, dtype=a.dtype)


def _copysign_kernel(self, other):
    a, b = _floats(self, other)
    return xp.copysign(a, b)


def _copysign_self_grad(grad, self, result):
    """torch's ``copysign_tensor_self_backward``: grad * result / self, 0 where self = 0."""
    nonzero = self != 0
    return grad * (result / (self + ~nonzero)) * nonzero


def _logaddexp_kernel(self, other):
    return xp.logaddexp(*_floats(self, other, "logaddexp_cpu"))


def _logaddexp2_kernel(self, other):
    return xp.logaddexp2(*_floats(self, other, "logaddexp2_cpu"))


copysign_op = defop("copysign.Tensor(Tensor self, Tensor other) -> Tensor", _copysign_kernel,
                    node="CopysignBackward0", self=_copysign_self_grad, other=lambda grad: aten.zeros_like(grad))
copysign_scalar_op = defop("copysign.Scalar(Tensor self, Scalar other) -> Tensor", _copysign_kernel,
                           node="CopysignBackward1", self=_copysign_self_grad)
logaddexp_op = defop("logaddexp(Tensor self, Tensor other) -> Tensor", _logaddexp_kernel, node="LogaddexpBackward0",
                     self=lambda grad, self, other: grad / (1 + aten.exp(other - self)),
                     other=lambda grad, self, other: grad / (1 + aten.exp(self - other)))
logaddexp2_op = defop("logaddexp2(Tensor self, Tensor other) -> Tensor", _logaddexp2_kernel,
                      node="Logaddexp2Backward0",
                      self=lambda grad, self, other: grad / (1 + aten.exp2(other - self)),
                      other=lambda grad, self, other: grad / (1 + aten.exp2(self - other)))

hypot_op = defop("hypot(Tensor self, Tensor other) -> Tensor",
                 lambda self, other: xp.hypot(*_floats(self, other, "hypot_cpu")), node="HypotBackward0",
                 self=lambda grad, self, result: grad * self / result,
                 other=lambda grad, other, result: grad * other / result)


def _shift_kernel(left):
    name = "lshift_cpu" if left else "rshift_cpu"

    def kernel(self, other):
        a, b = promote_arrays(self, other)
        a = asarray(a)
        if a.dtype.kind == "b":
            a = a.astype("int64")
        if a.dtype.kind not in "iu":
            raise NotImplementedError(f'"{name}" not implemented for \'{_legacy(a.dtype)}\'')
        b = _asarray_like(a, b).astype(a.dtype, copy=False)
        bits = a.dtype.itemsize * 8
        too_far = (b >= bits) | (b < 0)
        safe = xp.where(too_far, 0, b).astype(a.dtype, copy=False)
        if left:
            return xp.where(too_far, 0, xp.left_shift(a, safe)).astype(a.dtype, copy=False)
        return xp.where(too_far, xp.where(a < 0, -1, 0), xp.right_shift(a, safe)).astype(a.dtype, copy=False)
    return kernel


lshift_op = defop("bitwise_left_shift.Tensor(Tensor self, Tensor other) -> Tensor", _shift_kernel(True))
lshift_scalar_op = defop("bitwise_left_shift.Tensor_Scalar(Tensor self, Scalar other) -> Tensor", _shift_kernel(True))
rshift_op = defop("bitwise_right_shift.Tensor(Tensor self, Tensor other) -> Tensor", _shift_kernel(False))
rshift_scalar_op = defop("bitwise_right_shift.Tensor_Scalar(Tensor self, Scalar other) -> Tensor",
                         _shift_kernel(False))
CopysignBackward0, CopysignBackward1 = copysign_op.node, copysign_scalar_op.node
LogaddexpBackward0, Logaddexp2Backward0, HypotBackward0 = logaddexp_op.node, logaddexp2_op.node, hypot_op.node


def _as_tensor(x, like):
    from .creation import tensor
    return tensor(x, dtype=like.dtype if isinstance(x, int) and not isinstance(x, bool) else None)


@method()
def copysign(input, other):
    """|input| with the sign of ``other`` (a tensor or a number)."""
    if seam.on:
        return seam.torch_function(copysign, (input, other), {})
    return copysign_op(input, other) if isinstance(other, Tensor) else copysign_scalar_op(input, other)


@method()
def logaddexp(input, other):
    """log(exp(input) + exp(other)), computed without overflow."""
    if seam.on:
        return seam.torch_function(logaddexp, (input, other), {})
    return logaddexp_op(input, other)


@method()
def logaddexp2(input, other):
    """log2(2**input + 2**other)."""
    if seam.on:
        return seam.torch_function(logaddexp2, (input, other), {})
    return logaddexp2_op(input, other)


@method()
def hypot(input, other):
    """sqrt(input**2 + other**2) elementwise (the two broadcast), computed without overflow."""
    if seam.on:
        return seam.torch_function(hypot, (input, other), {})
    if not isinstance(other, Tensor):
        raise TypeError(f"hypot(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    return hypot_op(input, other)


@method("bitwise_left_shift", "__lshift__")
def bitwise_left_shift(input, other):
    """input * 2**other for integers (bits shifted past the type's width are lost)."""
    if seam.on:
        return seam.torch_function(bitwise_left_shift, (input, other), {})
    if not isinstance(input, Tensor):            # a number << a tensor
        input = _as_tensor(input, other)
    return lshift_op(input, other) if isinstance(other, Tensor) else lshift_scalar_op(input, other)


@method("bitwise_right_shift", "__rshift__")
def bitwise_right_shift(input, other):
    """input // 2**other for integers (arithmetic: the sign is kept)."""
    if seam.on:
        return seam.torch_function(bitwise_right_shift, (input, other), {})
    if not isinstance(input, Tensor):
        input = _as_tensor(input, other)
    return rshift_op(input, other) if isinstance(other, Tensor) else rshift_scalar_op(input, other)


def __rlshift__(self, other):
    return bitwise_left_shift(other, self)


def __rrshift__(self, other):
    return bitwise_right_shift(other, self)


Tensor.__rlshift__, Tensor.__rrshift__ = __rlshift__, __rrshift__


def _in_place(name, fn):
    def fn_(self, other):
        if seam.on:
            return seam.torch_function(fn_, (self, other), {})
        return inplace(self, name, fn, other)
    fn_.__name__ = fn_.__qualname__ = name
    return fn_


for _name, _fn in (("copysign_", copysign), ("hypot_", hypot), ("bitwise_left_shift_", bitwise_left_shift),
                   ("__ilshift__", bitwise_left_shift), ("bitwise_right_shift_", bitwise_right_shift),
                   ("__irshift__", bitwise_right_shift)):
    setattr(Tensor, _name, _in_place(_name, _fn))
del _name, _fn
