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
from ._op import method, promote_arrays
from .._ops import defop, aten, node_classes_of
from .._seam import overridable, named

__getattr__ = node_classes_of(__name__)    # (the node classes declared here, by name: TanhBackward0)

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
    return a, _asarray_like(a, b, dtype=a.dtype)   # (a number operand: on a's device, CuPy refuses a NumPy 0-d)


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


# the in-place variants (they record their twins' nodes)
copysign__op = defop("copysign_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", inplace_of=copysign_op)
copysign__scalar_op = defop("copysign_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
                            inplace_of=copysign_scalar_op)
hypot__op = defop("hypot_(Tensor(a!) self, Tensor other) -> Tensor(a!)", inplace_of=hypot_op)


@method()
@overridable
def copysign(input, other):
    """|input| with the sign of ``other`` (a tensor or a number)."""
    return copysign_op(input, other) if isinstance(other, Tensor) else copysign_scalar_op(input, other)


@method()
@overridable
def copysign_(self, other):
    return copysign__op(self, other) if isinstance(other, Tensor) else copysign__scalar_op(self, other)


@method()
@overridable
def logaddexp(input, other):
    """log(exp(input) + exp(other)), computed without overflow."""
    return logaddexp_op(input, other)


@method()
@overridable
def logaddexp2(input, other):
    """log2(2**input + 2**other)."""
    return logaddexp2_op(input, other)


@method()
@overridable
def hypot(input, other):
    """sqrt(input**2 + other**2) elementwise (the two broadcast), computed without overflow."""
    if not isinstance(other, Tensor):
        raise TypeError(f"hypot(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    return hypot_op(input, other)


@method()
@overridable
def hypot_(self, other):
    if not isinstance(other, Tensor):
        raise TypeError(f"hypot_(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")
    return hypot__op(self, other)


def _scalar_first(kernel):
    """The kernel of ``number << tensor`` (``Scalar_Tensor``): an integer shifts in the tensor's dtype."""
    def scalar_tensor_kernel(self, other):
        dtype = other.dtype if isinstance(self, int) and not isinstance(self, bool) else None
        return kernel(_asarray_like(other, self, dtype=dtype), other)   # (the number, on the tensor's device)
    return scalar_tensor_kernel


def _shifts(left):
    """A shift as torch declares it: ``aten.bitwise_left_shift.Tensor/.Tensor_Scalar/.Scalar_Tensor``,
    the operators' own ``aten.__lshift__.Tensor/.Scalar``, the in-place forms
    ``aten.bitwise_left_shift_.Tensor/.Tensor_Scalar`` and ``aten.__ilshift__.Tensor/.Scalar`` (no
    derivatives: integers); the public functions ``bitwise_left_shift``, ``bitwise_left_shift_``
    and the operators ``<<``, ``<<=`` and ``number << x``, each a function of its own, as a function
    mode sees them in torch."""
    name, dunder = ("bitwise_left_shift", "lshift") if left else ("bitwise_right_shift", "rshift")
    kernel = _shift_kernel(left)
    ops = {}
    for packet, scalar_overload in ((name, "Tensor_Scalar"), (f"__{dunder}__", "Scalar")):
        tensor_op = defop(f"{packet}.Tensor(Tensor self, Tensor other) -> Tensor", kernel)
        scalar_op = defop(f"{packet}.{scalar_overload}(Tensor self, Scalar other) -> Tensor", kernel)
        in_place = name + "_" if packet == name else f"__i{dunder}__"
        ops[packet] = (tensor_op, scalar_op)
        ops[in_place] = (
            defop(f"{in_place}.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", inplace_of=tensor_op),
            defop(f"{in_place}.{scalar_overload}(Tensor(a!) self, Scalar other) -> Tensor(a!)", inplace_of=scalar_op))
    scalar_tensor_op = defop(f"{name}.Scalar_Tensor(Scalar self, Tensor other) -> Tensor", _scalar_first(kernel))

    @overridable
    def public(input, other):
        if not isinstance(input, Tensor):            # a number << a tensor
            return scalar_tensor_op._call(input, other)
        tensor_op, scalar_op = ops[name]
        return (tensor_op if isinstance(other, Tensor) else scalar_op)._call(input, other)

    @overridable
    def reflected(self, other):                      # number << self
        return scalar_tensor_op._call(other, self)

    def by(fn_name):
        @overridable
        def shift(self, other):
            tensor_op, scalar_op = ops[fn_name]
            return (tensor_op if isinstance(other, Tensor) else scalar_op)._call(self, other)
        return shift

    for fn, fn_name in ((public, name), (reflected, f"__r{dunder}__"), (by(f"__{dunder}__"), f"__{dunder}__"),
                        (by(name + "_"), name + "_"), (by(f"__i{dunder}__"), f"__i{dunder}__")):
        named(fn, fn_name)
        setattr(Tensor, fn_name, fn)
    public.__doc__ = ("input * 2**other for integers (bits shifted past the type's width are lost)." if left else
                      "input // 2**other for integers (arithmetic: the sign is kept).")
    return public


bitwise_left_shift = _shifts(left=True)
bitwise_right_shift = _shifts(left=False)
