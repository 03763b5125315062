"""Elementwise ops and their derivatives.

Unary ops are declared as a table, one row per op, in the spirit of torch's derivatives.yaml:
the forward on arrays, what the derivative needs saved (the input ``self`` or the ``result``),
and the derivative formula written with Tensor ops (so it can itself be differentiated).
Binary ops broadcast: their formulas return full-size gradients and the engine reduces them to
each input's shape.
"""
import builtins
import math
import numbers

from .. import _dtype, _checks
from .._tensor import Tensor, _wrap
from .._array import xp, broadcast_error, same_data, row_major, like_operands, erf as _erf, erfinv as _erfinv, lgamma as _lgamma, digamma as _digamma
from ._op import (_state, method, operands, float_array, record, make_node_class, inplace, connect,
                  result_dtype, as_tensor_arg, promote_arrays)
from .._ops import defop, aten
from .._seam import seam
from ._derivatives import conj

# What glasstorch (torch) has at its top level from this family; the other public functions here are
# Tensor methods only (x.view(...)) or torch.linalg's.
__all__ = ["neg", "neg_", "abs", "abs_", "sign", "sgn", "reciprocal", "reciprocal_", "exp", "exp_", "exp2",
           "exp2_", "expm1", "expm1_", "log", "log_", "log2", "log2_", "log10", "log10_", "log1p", "log1p_",
           "sqrt", "sqrt_", "rsqrt", "rsqrt_", "sin", "sin_", "cos", "cos_", "tan", "tan_", "asin", "asin_",
           "acos", "acos_", "atan", "atan_", "sinh", "sinh_", "cosh", "cosh_", "tanh", "tanh_", "asinh",
           "asinh_", "acosh", "acosh_", "atanh", "atanh_", "sigmoid", "sigmoid_", "relu", "relu_", "erf",
           "erf_", "erfinv", "lgamma", "digamma", "floor", "floor_", "ceil", "ceil_", "trunc", "trunc_", "frac",
           "frac_", "logical_not", "isnan", "isinf", "isfinite", "signbit", "bitwise_not", "negative", "arcsin",
           "arccos", "arctan", "absolute", "fix", "square", "round", "round_", "add", "sub", "rsub", "mul",
           "div", "floor_divide", "remainder", "fmod", "pow", "float_power", "atan2", "arctan2", "maximum",
           "minimum", "fmax", "fmin", "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less",
           "less_equal", "not_equal", "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
           "bitwise_xor", "equal", "allclose", "isclose", "isreal", "isposinf", "isneginf", "where", "clamp",
           "clip", "clamp_min", "clamp_max", "lerp", "masked_fill", "nan_to_num", "zero_", "fill_", "addcmul",
           "addcdiv"]



# ---------------------------------------------------------------------------------------------
# Unary ops: one row each -- the forward on arrays and the derivative formula (torch's
# derivatives.yaml entry), which reads the gradient and, by name, the input (`self`) or the output
# (`result`). Formulas use operators and aten ops only, so the same formula runs on arrays (the
# usual backward) and on Tensors (double backward).
# ---------------------------------------------------------------------------------------------
# Array-level code never mixes an array with a bare Python number: NumPy 1.x's value-based casting
# would make a 0-d float32 result float64. The constants take the array's own type instead.
def _sigmoid(a):
    half = a.dtype.type(0.5)
    return (half + half * xp.tanh(half * a)).astype(a.dtype, copy=False)


def _relu(a):
    return xp.maximum(a, a.dtype.type(0))


def _integral(rounding):
    """floor/ceil/trunc: integers are already integral (NumPy 1.x would return float64 for them)."""
    return lambda a: a.copy() if a.dtype.kind in "iub" else rounding(a)


def _sign(a):
    if a.dtype.kind == "c":   # z / |z| (0 at 0), torch's sgn; NumPy 1.x's sign gives the real part's sign
        magnitude = xp.abs(a)
        return xp.where(magnitude == 0, a.dtype.type(0), a / xp.where(magnitude == 0, 1, magnitude).astype(a.dtype))
    return a.copy() if a.dtype == bool else xp.sign(a)  # NumPy has no sign for bool; torch keeps it


def _zeros(grad):
    """torch's zeros_like(grad): a derivative that is zero whatever the gradient (even NaN)."""
    return aten.zeros_like(grad)


def _acosh_grad(grad, self):
    """d acosh = 1 / sqrt(x^2 - 1); for a complex x torch takes 1 / (sqrt(x - 1) sqrt(x + 1)), the branch
    that agrees with acosh's own cut (the two differ in sign off the real line)."""
    dt = self.dtype
    if dt.kind == "c" if hasattr(dt, "kind") else dt.is_complex:
        return grad * conj(aten.rsqrt(self - 1) * aten.rsqrt(self + 1))
    return grad * aten.rsqrt(self * self - 1)


LN2, LN10 = math.log(2.0), math.log(10.0)
SQRT_PI = math.sqrt(math.pi)
_UNARY = [
    # name       node                 forward                 derivative: grad of the input              ints stay ints
    ("neg",     "NegBackward0",      xp.negative,            lambda grad: -grad,                                True),
    ("abs",     "AbsBackward0",      xp.abs,                 lambda grad, self: grad * aten.sgn(self),          True),
    ("sign",    "SignBackward0",     _sign,                  _zeros,                                            True),
    ("sgn",     "SgnBackward0",      _sign,                  _zeros,                                            True),
    ("reciprocal", "ReciprocalBackward0", xp.reciprocal,      lambda grad, result: -grad * conj(result * result), False),
    ("exp",     "ExpBackward0",      xp.exp,                 lambda grad, result: grad * conj(result),          False),
    ("exp2",    "Exp2Backward0",     xp.exp2,                lambda grad, result: grad * conj(result) * LN2,    False),
    ("expm1",   "Expm1Backward0",    xp.expm1,               lambda grad, result: grad * conj(result + 1),      False),
    ("log",     "LogBackward0",      xp.log,                 lambda grad, self: grad / conj(self),              False),
    ("log2",    "Log2Backward0",     xp.log2,                lambda grad, self: grad / (conj(self) * LN2),      False),
    ("log10",   "Log10Backward0",    xp.log10,               lambda grad, self: grad / (conj(self) * LN10),     False),
    ("log1p",   "Log1PBackward0",    xp.log1p,               lambda grad, self: grad / conj(self + 1),          False),
    ("sqrt",    "SqrtBackward0",     xp.sqrt,                lambda grad, result: grad / (2 * conj(result)),    False),
    ("rsqrt",   "RsqrtBackward0",    lambda a: xp.reciprocal(xp.sqrt(a)), lambda grad, result: -0.5 * grad * conj(result * result * result), False),
    ("sin",     "SinBackward0",      xp.sin,                 lambda grad, self: grad * conj(aten.cos(self)),    False),
    ("cos",     "CosBackward0",      xp.cos,                 lambda grad, self: grad * -conj(aten.sin(self)),   False),
    ("tan",     "TanBackward0",      xp.tan,                 lambda grad, result: grad * conj(1 + result * result), False),
    ("asin",    "AsinBackward0",     xp.arcsin,              lambda grad, self: grad * conj(aten.rsqrt(1 - self * self)), False),
    ("acos",    "AcosBackward0",     xp.arccos,              lambda grad, self: -grad * conj(aten.rsqrt(1 - self * self)), False),
    ("atan",    "AtanBackward0",     xp.arctan,              lambda grad, self: grad / conj(self * self + 1),   False),
    ("sinh",    "SinhBackward0",     xp.sinh,                lambda grad, self: grad * conj(aten.cosh(self)),   False),
    ("cosh",    "CoshBackward0",     xp.cosh,                lambda grad, self: grad * conj(aten.sinh(self)),   False),
    ("tanh",    "TanhBackward0",     xp.tanh,                lambda grad, result: grad * conj(1 - result * result), False),
    ("asinh",   "AsinhBackward0",    xp.arcsinh,             lambda grad, self: grad * conj(aten.rsqrt(self * self + 1)), False),
    ("acosh",   "AcoshBackward0",    xp.arccosh,             _acosh_grad,                                       False),
    ("atanh",   "AtanhBackward0",    xp.arctanh,             lambda grad, self: grad / conj(1 - self * self),   False),
    ("sigmoid", "SigmoidBackward0",  _sigmoid,               lambda grad, result: grad * conj(result * (1 - result)), False),
    ("relu",    "ReluBackward0",     _relu,                  lambda grad, result: aten.threshold_backward(grad, result, 0), True),
    ("erf",     "ErfBackward0",      _erf,                   lambda grad, self: grad * (2 / SQRT_PI) * aten.exp(-self * self), False),
    ("erfinv",  "ErfinvBackward0",   _erfinv,                lambda grad, result: grad * (SQRT_PI / 2) * aten.exp(result * result), False),
    ("lgamma",  "LgammaBackward0",   _lgamma,                lambda grad, self: grad * aten.digamma(self),      False),
    ("digamma", "DigammaBackward0",  _digamma,               lambda grad, self: grad * aten.polygamma(1, self), False),
    ("floor",   "FloorBackward0",    _integral(xp.floor), _zeros,                                            True),
    ("ceil",    "CeilBackward0",     _integral(xp.ceil),  _zeros,                                            True),
    ("trunc",   "TruncBackward0",    _integral(xp.trunc), _zeros,                                            True),
    ("frac",    "FracBackward0",     lambda a: a - xp.trunc(a), lambda grad: grad,                              True),
    ("logical_not", None,            xp.logical_not,         None,                                              True),
    ("isnan",   None,                xp.isnan,               None,                                              True),
    ("isinf",   None,                xp.isinf,               None,                                              True),
    ("isfinite", None,               xp.isfinite,            None,                                              True),
    ("signbit", None,                xp.signbit,             None,                                              True),
    ("bitwise_not", None,            xp.invert,              None,                                              True),
]


def _not_for(kernel, kinds="b"):
    """torch's refusal of a dtype kind for an op: (kinds, error to raise)."""
    return kinds, lambda dt: NotImplementedError(f'"{kernel}" not implemented for \'{_dtype._BY_NUMPY[dt]._legacy}\'')


# dtypes an op refuses, as torch does (checked once per call, only for these ops)
_REFUSES = {
    "neg": ("b", lambda dt: RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are "
                                         "trying to invert a mask, use the `~` or `logical_not()` operator instead.")),
    "abs": _not_for("abs_cpu"), "floor": _not_for("floor_vml_cpu"), "ceil": _not_for("ceil_vml_cpu"),
    "round": _not_for("round_vml_cpu"), "trunc": _not_for("trunc_vml_cpu"), "frac": _not_for("frac_cpu", "biu"),
    "relu": ("b", lambda dt: RuntimeError("Boolean inputs not supported for relu")),
    "bitwise_not": _not_for("bitwise_not_cpu", "fc"),
}


def _unary_kernel(name, forward, int_ok):
    """The kernel of a unary op: torch's dtype refusals, integers computed in the default float type
    (unless the op keeps them), then ``forward``."""
    refuse = _REFUSES.get(name)
    default_float = _dtype.get_default_dtype  # read at call time: set_default_dtype changes it

    def kernel(self):
        if refuse is not None and self.dtype.kind in refuse[0]:
            raise refuse[1](self.dtype)
        if not int_ok and self.dtype.kind not in "fc" and not _dtype.is_bfloat16_numpy(self.dtype):
            self = self.astype(default_float().numpy_dtype)
        return forward(self)
    kernel.__name__ = kernel.__qualname__ = f"{name}_kernel"
    return kernel


def _make_unary(name, node_name, forward, derivative, int_ok):
    """The aten op of a unary row, its public function and Tensor method, and the in-place form."""
    formulas = {} if derivative is None else {"self": derivative}
    op = defop(f"{name}(Tensor self) -> Tensor", _unary_kernel(name, forward, int_ok), node=node_name, **formulas)
    namespace = {"seam": seam, "op": op, "inplace": inplace, "Tensor": Tensor, "not_a_tensor": _checks.not_a_tensor}
    exec(compile(f"def {name}(input):\n"
                 f"    if seam.on:\n"
                 f"        return seam.torch_function({name}, (input,), {{}})\n"
                 f"    if not isinstance(input, Tensor):\n"  # a list, a number, an array: torch's TypeError
                 f"        raise not_a_tensor('{name}', input)\n"
                 f"    return op(input)\n"
                 f"def {name}_(self):\n"
                 f"    if seam.on:\n"
                 f"        return seam.torch_function({name}_, (self,), {{}})\n"
                 f"    return inplace(self, '{name}_', {name})\n", f"<glasstorch: torch.{name}>", "exec"), namespace)
    public = namespace[name]
    public.__doc__ = f"torch.{name}: elementwise {name}." + (f" Backward node: {node_name}." if node_name else "")
    public.__module__ = namespace[name + "_"].__module__ = __name__
    return public, namespace[name + "_"], op


for _row in _UNARY:
    _fn, _fn_, _op_ = _make_unary(*_row)
    globals()[_row[0]] = _fn
    globals()[_row[0] + "_"] = _fn_
    setattr(Tensor, _row[0], _fn)
    setattr(Tensor, _row[0] + "_", _fn_)
    if _op_.node is not None:
        globals()[_row[1]] = _op_.node
del _row, _fn, _fn_, _op_

threshold_backward = defop(
    "threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor",
    kernel=lambda grad_output, self, threshold: xp.where(self <= threshold, xp.zeros((), grad_output.dtype), grad_output),
    node="ThresholdBackwardBackward0",
    grad_output=lambda grad, self, threshold: aten.threshold_backward(grad, self, threshold),
    self=_zeros)
zeros_like_op = defop("zeros_like(Tensor self) -> Tensor", kernel=xp.zeros_like)

negative, arcsin, arccos, arctan, absolute, fix = neg, asin, acos, atan, abs, trunc
special_expit = sigmoid
Tensor.__neg__ = neg
Tensor.__abs__ = abs
Tensor.negative, Tensor.arcsin, Tensor.arccos, Tensor.arctan, Tensor.absolute = neg, asin, acos, atan, abs


def __invert__(self):
    """~x: logical not of a bool tensor, bitwise not of an integer one."""
    if seam.on:
        return seam.torch_function(__invert__, (self,), {})
    if self._data.dtype.kind in "fc":
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return logical_not(self) if self._data.dtype == bool else bitwise_not(self)


Tensor.__invert__ = __invert__


@method()
def square(input):
    if seam.on:
        return seam.torch_function(square, (input,), {})
    return pow(input, 2)


_round_decimals = defop("round.decimals(Tensor self, *, int decimals) -> Tensor",
                        kernel=lambda self, *, decimals: xp.round(self, decimals),
                        node="RoundBackward1", self=_zeros)


@method()
def round(input, *, decimals=0):
    if seam.on:
        return seam.torch_function(round, (input,), {"decimals": decimals})
    if decimals == 0:
        return _round0(input)
    if input._data.dtype.kind not in "fc":
        raise NotImplementedError(f'"round_cpu" not implemented for \'{input.dtype._legacy}\'')
    return _round_decimals(input, decimals=decimals)


_round0, _round0_, _round_op = _make_unary("round", "RoundBackward0", xp.round, _zeros, True)
RoundBackward0, RoundBackward1 = _round_op.node, _round_decimals.node


def round_(self, *, decimals=0):
    if seam.on:
        return seam.torch_function(round_, (self,), {"decimals": decimals})
    return inplace(self, "round_", round, decimals=decimals)


Tensor.round_ = round_


# ---------------------------------------------------------------------------------------------
# Arithmetic
# ---------------------------------------------------------------------------------------------
def _other_edge(other):
    return other if isinstance(other, Tensor) else None


def _requires(input, other):
    return _state.enabled and (input._requires_grad or (isinstance(other, Tensor) and other._requires_grad))


def _shape_error(a, b):
    """torch's error for arrays whose shapes do not broadcast (NumPy raises a ValueError of its own)."""
    return broadcast_error(xp.shape(a), xp.shape(b))


def _check_alpha(a, alpha):
    if a.dtype.kind in "iub" and isinstance(alpha, float):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


def _elementwise(ufunc, self, other):
    """``ufunc`` on the promoted operands, its result laid out as torch's TensorIterator lays it out
    (``like_operands``: ``x.t() * y`` is laid out as ``x.t()``; a later view() depends on it)."""
    a, b = promote_arrays(self, other)
    return like_operands(ufunc(a, b), a, b)


def _add_kernel(self, other, *, alpha=1):
    a, b = promote_arrays(self, other)
    if alpha == 1:
        return like_operands(a + b, a, b)
    _check_alpha(a, alpha)
    return like_operands((a + b * alpha).astype(a.dtype, copy=False), a, b)  # bool + bool * 2 stays bool


def _sub_kernel(self, other, *, alpha=1):
    if self.dtype == bool or type(other) is bool or getattr(other, "dtype", None) == bool:
        _sub_bool_check(self.dtype == bool, other)
    a, b = promote_arrays(self, other)
    if alpha == 1:
        return like_operands(a - b, a, b)
    _check_alpha(a, alpha)
    return like_operands((a - b * alpha).astype(a.dtype, copy=False), a, b)


def _rsub_kernel(self, other, alpha=1):
    """other - alpha * self (what ``2 - x`` computes)."""
    if self.dtype == bool or type(other) is bool:
        _sub_bool_check(self.dtype == bool, other)
    a, b = promote_arrays(self, other)
    return b - a if alpha == 1 else (b - a * alpha).astype(a.dtype, copy=False)


add_op = defop("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", _add_kernel,
               node="AddBackward0",
               self=lambda grad: grad,
               other=lambda grad, alpha: grad if alpha == 1 else grad * alpha)
sub_op = defop("sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", _sub_kernel,
               node="SubBackward0",
               self=lambda grad: grad,
               other=lambda grad, alpha: -grad if alpha == 1 else grad * -alpha)
rsub_op = defop("rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", _rsub_kernel,
                node="RsubBackward1",
                self=lambda grad, alpha: -grad if alpha == 1 else grad * -alpha)
mul_op = defop("mul.Tensor(Tensor self, Tensor other) -> Tensor",
               lambda self, other: _elementwise(xp.multiply, self, other),
               node="MulBackward0",
               self=lambda grad, other: grad * conj(other),
               other=lambda grad, self: grad * conj(self))
AddBackward0, SubBackward0, RsubBackward1, MulBackward0 = add_op.node, sub_op.node, rsub_op.node, mul_op.node


@method("add", "__add__", "__radd__")
def add(input, other, *, alpha=1, out=None):
    if seam.on:
        return seam.torch_function(add, (input, other), {"alpha": alpha, "out": out})
    if not isinstance(input, Tensor):
        input, other = other, input
    res = add_op(input, other) if alpha == 1 else add_op(input, other, alpha=alpha)
    return res if out is None else _checks.write_out("add", res, out)


def _sub_bool_check(self_is_bool, other):
    b = isinstance(other, bool) or getattr(other, "dtype", None) == bool
    if self_is_bool and b and not isinstance(other, bool):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                           "`logical_xor()` operator instead.")
    raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
                       "invert a mask, use the `~` or `logical_not()` operator instead.")


@method("sub", "__sub__", "subtract")
def sub(input, other, *, alpha=1):
    if seam.on:
        return seam.torch_function(sub, (input, other), {"alpha": alpha})
    if type(alpha) is bool and not (input._data.dtype == bool and (type(other) is bool or
                                                                    isinstance(other, Tensor) and other.dtype == _dtype.bool)):
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    return sub_op(input, other) if alpha == 1 else sub_op(input, other, alpha=alpha)


@method("rsub", "__rsub__")
def rsub(input, other, *, alpha=1):
    """other - alpha * input (what ``2 - x`` computes)."""
    if seam.on:
        return seam.torch_function(rsub, (input, other), {"alpha": alpha})
    if isinstance(other, Tensor):
        return sub(other, input, alpha=alpha)
    return rsub_op(input, other, alpha)


@method("mul", "__mul__", "__rmul__", "multiply")
def mul(input, other):
    if seam.on:
        return seam.torch_function(mul, (input, other), {})
    if not isinstance(input, Tensor):
        input, other = other, input
    return mul_op(input, other)


def _true_divide_kernel(self, other):
    a, b = promote_arrays(self, other)
    return like_operands(_true_divide_arrays(a, b), a, b)


div_op = defop("div.Tensor(Tensor self, Tensor other) -> Tensor", _true_divide_kernel,
               node="DivBackward0",
               self=lambda grad, other: grad / conj(other),
               other=lambda grad, self, other: -grad * conj((self / other) / other))
div_mode_op = defop("div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",
                    lambda self, other, *, rounding_mode: _rounding_divide(*promote_arrays(self, other), rounding_mode),
                    node="DivBackward2", self=_zeros, other=_zeros)
DivBackward0, DivBackward2 = div_op.node, div_mode_op.node


class NotImplementedBackward(make_node_class("NotImplemented", None)):
    """An op torch gives no derivative (floor_divide, a number % tensor): it is recorded, so the
    result requires grad as in torch, and backward through it raises torch's error."""
    op = ""
    __qualname__ = "NotImplemented"

    def name(self):
        return "torch::autograd::NotImplemented"

    def backward(self, *grads):
        raise RuntimeError(f"derivative for aten::{self.op} is not implemented")


NotImplementedBackward.__name__ = "NotImplemented"  # torch's class name (name(): torch::autograd::NotImplemented)


def _not_implemented(op, res, inputs):
    record(NotImplementedBackward, res, inputs, meta_check=False).op = op
    return res


def _true_divide_arrays(da, db):
    if da.dtype.kind not in "fc":  # int / int -> the default float type, as torch does
        ft = _dtype.get_default_dtype().numpy_dtype
        da = da.astype(ft)
        if getattr(db, "dtype", None) is not None and db.dtype.kind not in "fc":
            db = db.astype(ft)
    try:
        return da / db
    except ValueError:
        raise _shape_error(da, db) from None


@method("div", "__truediv__", "divide", "true_divide")
def div(input, other, *, rounding_mode=None):
    if seam.on:
        return seam.torch_function(div, (input, other), {"rounding_mode": rounding_mode})
    if not isinstance(input, Tensor):
        return mul(reciprocal(other), input)
    if rounding_mode is None:
        return div_op(input, other)
    return div_mode_op(input, other, rounding_mode=rounding_mode)


def _rounding_divide(a, b, rounding_mode):
    if rounding_mode == "trunc":
        return xp.trunc(_true_divide_arrays(a, b)) if a.dtype.kind in "fc" or isinstance(b, float) \
            else _int_trunc_div(a, b)
    if rounding_mode == "floor":
        return _floor_div(a, b)
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'")


def _int_trunc_div(a, b):
    _check_int_zero(a, b)
    q = xp.floor_divide(a, b)
    r = a - q * b
    return q + ((r != 0) & ((a < 0) != (xp.asarray(b) < 0)))  # floor rounds down; trunc rounds to 0


def _check_int_zero(da, db):
    if da.dtype.kind in "iub" and not isinstance(db, float) and (xp.asarray(db) == 0).any():
        raise RuntimeError("ZeroDivisionError")


def _floor_div(da, db):
    _check_int_zero(da, db)
    try:
        return xp.floor_divide(da, db)
    except ValueError:
        raise _shape_error(da, db) from None


Tensor.__rtruediv__ = lambda self, other: mul(reciprocal(self), other)


@method("floor_divide", "__floordiv__")
def floor_divide(input, other):
    da, db = operands(input, other)
    res = _wrap(_floor_div(da, db))
    if _requires(input, other):
        _not_implemented("floor_divide", res, (input, _other_edge(other)))
    return res


Tensor.__rfloordiv__ = lambda self, other: floor_divide(as_tensor_arg(other, self), self)


class RemainderBackward0(make_node_class("RemainderBackward0", None)):
    """remainder(tensor, number): the gradient passes through (the number is piecewise constant)."""

    def backward(self, grad):
        return grad, None


class RemainderBackward1(make_node_class("RemainderBackward1", None, ("self", "other"))):
    """a - floor(a / b) * b:  da = grad,  db = -grad * floor(a / b)."""

    def backward(self, grad):
        a, b = self._unpack_saved()
        return grad, (None if b is None else -grad * a.div(b, rounding_mode="floor"))


@method("remainder", "__mod__")
def remainder(input, other):
    da, db = operands(input, other)
    _check_int_zero(da, db)
    try:
        res = _wrap(xp.remainder(da, db))
    except ValueError:
        raise _shape_error(da, db) from None
    if _requires(input, other):
        if isinstance(other, Tensor):
            record(RemainderBackward1, res, (input, other), (input, other) if other._requires_grad else (None, None))
        else:
            record(RemainderBackward0, res, (input, None))
    return res


def _rmod(self, other):
    """number % tensor: torch has no derivative for it."""
    da, db = operands(as_tensor_arg(other, self), self)
    _check_int_zero(da, db)
    res = _wrap(xp.remainder(da, db))
    if self._requires_grad and _state.enabled:
        _not_implemented("remainder", res, (self,))
    return res


Tensor.__rmod__ = _rmod


class FmodBackward0(make_node_class("FmodBackward0", None)):
    def backward(self, grad):
        return grad, None


class FmodBackward1(make_node_class("FmodBackward1", None, ("self", "other"))):
    """a - trunc(a / b) * b:  da = grad,  db = -grad * trunc(a / b)."""

    def backward(self, grad):
        a, b = self._unpack_saved()
        return grad, (None if b is None else -grad * a.div(b, rounding_mode="trunc"))


@method()
def fmod(input, other):
    da, db = operands(input, other)
    _check_int_zero(da, db)
    try:
        res = _wrap(xp.fmod(da, db))
    except ValueError:
        raise _shape_error(da, db) from None
    if _requires(input, other):
        if isinstance(other, Tensor):
            record(FmodBackward1, res, (input, other), (input, other) if other._requires_grad else (None, None))
        else:
            record(FmodBackward0, res, (input, None))
    return res


class PowBackward0(make_node_class("PowBackward0", None, ("self",))):
    """d(x^e)/dx = e * x^(e-1), for a number e (torch's pow_backward; e = 0 gives zeros)."""

    def backward(self, grad):
        (x,) = self._unpack_saved()
        e = self.exponent
        if e == 0:
            return _zeros(x)
        return grad * (e * x.pow(e - 1))


class PowBackward1(make_node_class("PowBackward1", None, ("self", "exponent", "result"))):
    """x^y with both tensors (torch's pow_backward_self/_exponent): dx = y x^(y-1), taken as 0
    where y = 0; dy = x^y log x, taken as 0 where x = 0 and y >= 0."""

    def backward(self, grad):
        x, y, r = self._unpack_saved()
        gx = gy = None
        if self.next_functions[0][0] is not None:
            gx = where(y == 0, 0.0, grad * (y * x.pow(y - 1)))
        if self.next_functions[1][0] is not None:
            gy = grad * where((x == 0) & (y >= 0), 0.0, r * x.log())
        return gx, gy


class PowBackward2(make_node_class("PowBackward2", None, ("exponent", "result"))):
    """c^y for a number c: dy = c^y log c (for c = 0, taken as 0 where y >= 0)."""

    def backward(self, grad):
        y, r = self._unpack_saved()
        c = self.base
        if c == 0:
            return grad * where(y >= 0, 0.0, r * -math.inf)
        return grad * (r * (math.log(c) if c > 0 else math.nan))


@method("pow", "__pow__")
def pow(input, exponent):
    if not isinstance(input, Tensor):
        return _rpow(exponent, input)
    if isinstance(exponent, Tensor):
        da, db = operands(input, exponent)
        if da.dtype == bool:
            raise NotImplementedError('"pow" not implemented for \'Bool\'')
        try:
            if da.dtype.kind in "iu" and (db < 0).any():
                # torch's integer pow: x ** -n is 1 for x == 1, +-1 for x == -1, else 0 (truncated 1 / x ** n)
                p = xp.power(da, xp.abs(db))
                r = xp.where(db >= 0, p, xp.where(xp.abs(da) == 1, p, 0)).astype(p.dtype)
            else:
                r = xp.power(da, db)
        except ValueError:
            raise _checks.broadcast_error(da.shape, db.shape) from None
        res = _wrap(like_operands(r, da, db))
        if _requires(input, exponent):
            record(PowBackward1, res, (input, exponent), (input, exponent, res), saved_output=2)
        return res
    da, e = operands(input, exponent)
    if da.dtype == bool and not isinstance(exponent, bool):
        da = da.astype(result_dtype(input, e).numpy_dtype)
    if da.dtype.kind in "iu" and type(exponent) is int and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if e == 2:
        r = da * da
    elif e == 0.5:
        r = xp.sqrt(da)
    elif e == 1:
        r = da.copy()
    else:
        r = xp.power(da, e)
    res = _wrap(r)
    if input._requires_grad and _state.enabled:
        record(PowBackward0, res, (input,), (input,)).exponent = exponent
    return res


def _rpow(input, base):
    """base ** input for a number base."""
    if not isinstance(base, (int, float, bool)):
        raise TypeError(f"unsupported operand type(s) for ** or pow(): '{type(base).__name__}' and 'Tensor'")
    da, b = operands(input, base)
    res = _wrap(xp.power(xp.asarray(b, dtype=da.dtype), da))
    if input._requires_grad and _state.enabled:
        record(PowBackward2, res, (input,), (input, res), saved_output=1).base = base
    return res


Tensor.__rpow__ = _rpow
float_power = lambda input, exponent: pow(input.double() if isinstance(input, Tensor) else input,
                                         exponent.double() if isinstance(exponent, Tensor) else exponent)


class Atan2Backward0(make_node_class("Atan2Backward0", None, ("self", "other"))):
    def backward(self, grad):
        a, b = self._unpack_saved()
        denom = a * a + b * b
        recip = denom.reciprocal().masked_fill(denom == 0, 0)  # torch's: at (0, 0) the gradient is 0, not NaN
        return grad * b * recip, grad * -a * recip


@method("atan2", "arctan2")
def atan2(input, other):
    other = as_tensor_arg(other, input)
    da, db = operands(input, other)
    if da.dtype.kind not in "fc":
        da, db = da.astype(_dtype.get_default_dtype().numpy_dtype), db.astype(_dtype.get_default_dtype().numpy_dtype)
    try:
        res = _wrap(like_operands(xp.arctan2(da, db), da, db))
    except ValueError:
        raise _checks.broadcast_error(da.shape, db.shape) from None
    if _requires(input, other):
        record(Atan2Backward0, res, (input, other), (input, other))
    return res


arctan2 = atan2


def _minmax_backward(self, grad, lower_wins):
    a, b = self._unpack_saved()
    tie = a == b
    g = where(tie, grad / 2, grad)
    first = (a < b) if not lower_wins else (a > b)
    return g.masked_fill(first, 0), g.masked_fill(~first & ~tie, 0)


MaximumBackward0 = make_node_class("MaximumBackward0", lambda self, g: _minmax_backward(self, g, False), ("self", "other"))
MinimumBackward0 = make_node_class("MinimumBackward0", lambda self, g: _minmax_backward(self, g, True), ("self", "other"))


@method()
def maximum(input, other):
    if not isinstance(other, Tensor):
        raise TypeError("maximum(): argument 'other' (position 2) must be Tensor, not " + type(other).__name__)
    da, db = operands(input, other)
    if da.dtype.kind == "c":
        raise RuntimeError("maximum not implemented for complex tensors.")
    try:
        res = _wrap(like_operands(xp.maximum(da, db), da, db))
    except ValueError:
        raise _checks.broadcast_error(da.shape, db.shape) from None
    if _requires(input, other):
        record(MaximumBackward0, res, (input, other), (input, other))
    return res


@method()
def minimum(input, other):
    if not isinstance(other, Tensor):
        raise TypeError("minimum(): argument 'other' (position 2) must be Tensor, not " + type(other).__name__)
    da, db = operands(input, other)
    if da.dtype.kind == "c":
        raise RuntimeError("minimum not implemented for complex tensors.")
    try:
        res = _wrap(like_operands(xp.minimum(da, db), da, db))
    except ValueError:
        raise _checks.broadcast_error(da.shape, db.shape) from None
    if _requires(input, other):
        record(MinimumBackward0, res, (input, other), (input, other))
    return res


fmax, fmin = maximum, minimum


# ---------------------------------------------------------------------------------------------
# Comparisons and logic: results are bool and never require grad
# ---------------------------------------------------------------------------------------------
def _compare(name, ufunc, dunder):
    ordering = name in ("lt", "le", "gt", "ge")  # complex numbers have no order

    def op(input, other):
        da, db = operands(input, other)
        if ordering and da.dtype.kind == "c":
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'{_dtype._BY_NUMPY[da.dtype]._legacy}\'')
        try:
            return _wrap(like_operands(ufunc(da, db), da, db))  # (a mask of x.t() is laid out as x.t())
        except ValueError:
            raise _shape_error(da, db) from None
    op.__name__ = name
    setattr(Tensor, name, op)
    if dunder:
        setattr(Tensor, dunder, op)
    return op


eq = _compare("eq", xp.equal, "__eq__")
ne = _compare("ne", xp.not_equal, "__ne__")
lt = _compare("lt", xp.less, "__lt__")
le = _compare("le", xp.less_equal, "__le__")
gt = _compare("gt", xp.greater, "__gt__")
ge = _compare("ge", xp.greater_equal, "__ge__")
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne
Tensor.greater, Tensor.greater_equal, Tensor.less, Tensor.less_equal, Tensor.not_equal = gt, ge, lt, le, ne
logical_and = _compare("logical_and", xp.logical_and, None)
logical_or = _compare("logical_or", xp.logical_or, None)
logical_xor = _compare("logical_xor", xp.logical_xor, None)


def _bitwise(name, ufunc, dunder, rdunder):
    def op(input, other):
        da, db = operands(input, other)
        if da.dtype.kind == "f" or isinstance(db, float) or getattr(db, "dtype", None) is not None and db.dtype.kind == "f":
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'Float\'')
        try:
            return _wrap(ufunc(da, db))
        except ValueError:
            raise _checks.broadcast_error(da.shape, xp.shape(db)) from None
    op.__name__ = name
    setattr(Tensor, name, op)
    setattr(Tensor, dunder, op)
    setattr(Tensor, rdunder, op)
    return op


bitwise_and = _bitwise("bitwise_and", xp.bitwise_and, "__and__", "__rand__")
bitwise_or = _bitwise("bitwise_or", xp.bitwise_or, "__or__", "__ror__")
bitwise_xor = _bitwise("bitwise_xor", xp.bitwise_xor, "__xor__", "__rxor__")


@method()
def equal(input, other):
    """True if both tensors have the same size and elements."""
    return input.shape == other.shape and bool((input._data == other._data).all())


@method()
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{input.dtype._legacy} did not match {other.dtype._legacy}")
    return bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


@method()
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    da, db = operands(input, other)
    try:
        return _wrap(xp.isclose(da, db, rtol=rtol, atol=atol, equal_nan=equal_nan))
    except ValueError:
        raise _checks.broadcast_error(da.shape, db.shape) from None


@method()
def isreal(input):
    return _wrap(xp.isreal(input._data))


@method()
def isposinf(input):
    return _wrap(xp.isposinf(input._data))


@method()
def isneginf(input):
    return _wrap(xp.isneginf(input._data))


# ---------------------------------------------------------------------------------------------
# Selection and clamping
# ---------------------------------------------------------------------------------------------
class WhereBackward0(make_node_class("WhereBackward0", None, ("condition",))):
    def backward(self, grad):
        (c,) = self._unpack_saved()
        return (where(c, grad, 0.0) if self.next_functions[0][0] is not None else None), \
            (where(c, 0.0, grad) if self.next_functions[1][0] is not None else None)


def where(condition, input=None, other=None):
    if (input is None) != (other is None):
        raise TypeError("where() received an invalid combination of arguments - expected (condition) or "
                        "(condition, input, other)")
    if input is None and other is None:
        from .indexing import nonzero
        return nonzero(condition, as_tuple=True)
    if condition._data.dtype != bool:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{condition.dtype._legacy}")
    if not isinstance(input, Tensor):
        if not isinstance(other, Tensor):
            dt = result_dtype(input, other)
            input, other = as_tensor_arg(input), as_tensor_arg(other)
            input, other = input.to(dt), other.to(dt)
        else:
            input = as_tensor_arg(input, other)
    elif not isinstance(other, Tensor):
        other = as_tensor_arg(other, input)
    da, db = operands(input, other)
    try:
        res = _wrap(like_operands(xp.where(condition._data, da, db), condition._data, da, db))
    except ValueError:
        raise _checks.broadcast_error(condition.shape, da.shape, db.shape) from None
    if _requires(input, other):
        record(WhereBackward0, res, (input, other), (condition,))
    return res


Tensor.where = lambda self, condition, other: where(condition, self, other)  # x.where(c, y): x where c, else y


class ClampBackward1(make_node_class("ClampBackward1", None, ("self",))):
    """Gradient passes where min <= x <= max."""

    def backward(self, grad):
        # torch's clamp_backward: where(min <= x <= max, grad, 0) -- a select, so a NaN/inf
        # gradient outside the range does not leak through as nan
        (x,) = self._unpack_saved()
        mask = None
        if self.min is not None:
            mask = x >= self.min
        if self.max is not None:
            m = x <= self.max
            mask = m if mask is None else mask & m
        return where(mask, grad, 0.0)


class ClampBackward0(make_node_class("ClampBackward0", None, ("self", "min", "max"))):
    def backward(self, grad):
        # torch's clamp_backward_min_max: three selects of grad (where, not multiplications)
        # (when min > max the result is max: all of the gradient goes to max)
        x, lo, hi = self._unpack_saved()
        below = None if lo is None else x < lo
        above = None if hi is None else x > hi
        if lo is not None and hi is not None:
            below, above = below & (lo < hi), above | (hi < lo)
            inside = (x >= lo) & (x <= hi)
        else:
            inside = ~below if above is None else ~above
        n = self.next_functions
        gx = grad.masked_fill(~inside, 0) if n[0][0] is not None else None
        glo = grad.masked_fill(~below, 0) if lo is not None and n[1][0] is not None else None
        ghi = grad.masked_fill(~above, 0) if hi is not None and n[2][0] is not None else None
        return gx, glo, ghi


def _clamp_refuses(d, min, max):
    if d.dtype.kind == "c" or ((type(min) is complex or type(max) is complex) and d.dtype.kind != "f"):
        raise NotImplementedError("clamp is not supported for complex types")
    if type(min) is complex or type(max) is complex:
        raise RuntimeError("value cannot be converted to type double without overflow")
    if all(v is None or isinstance(v, bool) for v in (min, max)):  # the result would be bool
        kernel = "clamp_scalar_cpu" if min is not None and max is not None else \
            ("clamp_min_scalar_cpu" if max is None else "clamp_max_scalar_cpu")
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


def _clamp_overload(min, max):
    """Which of torch's clamp overloads the bounds select: Tensor, Number, or None (neither: refused)."""
    kinds = {Tensor if isinstance(b, Tensor) else numbers.Number if isinstance(b, numbers.Number) else None
             for b in (min, max) if b is not None}
    return kinds.pop() if len(kinds) == 1 else None


@method("clamp", "clip")
def clamp(input, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if _clamp_overload(min, max) is None:
        # torch's overloads: (Tensor min, Tensor max) or (Number min, Number max), not a mix, not a str
        raise TypeError(f"clamp() received an invalid combination of arguments - got (min={type(min).__name__}, "
                        f"max={type(max).__name__}), but expected (Tensor min, Tensor max) or (Number min, Number max)")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        lo = min if min is None or isinstance(min, Tensor) else as_tensor_arg(min, input)
        hi = max if max is None or isinstance(max, Tensor) else as_tensor_arg(max, input)
        d = input._data
        try:
            if lo is not None:
                d = xp.maximum(d, lo._data)
            if hi is not None:
                d = xp.minimum(d, hi._data)
        except ValueError:
            raise _checks.broadcast_error(*(t.shape for t in (input, lo, hi) if t is not None)) from None
        res = _wrap(d.astype(result_dtype(input, lo, hi).numpy_dtype, copy=False))
        if _state.enabled and any(t is not None and t._requires_grad for t in (input, lo, hi)):
            record(ClampBackward0, res, (input, lo, hi), (input, lo, hi))
        return res
    return _clamp_numbers(input, min, max, ClampBackward1)


def _clamp_numbers(input, min, max, node_cls):
    """clamp with number bounds; ``node_cls`` is the node torch records for the overload called
    (clamp -> ClampBackward1, clamp_min -> ClampMinBackward0, clamp_max -> ClampMaxBackward0)."""
    d = input._data
    if d.dtype.kind in "bc" or type(min) is complex or type(max) is complex:
        _clamp_refuses(d, min, max)
    if isinstance(min, float) or isinstance(max, float):
        d = float_array(input)
    elif d.dtype == bool and (type(min) is int or type(max) is int):
        d = d.astype(xp.int64)  # bool clamped by an int: int64, by torch's promotion
    elif d.dtype.kind in "iu":  # an int bound converts to the tensor's type, wrapping as torch's does
        info = xp.iinfo(d.dtype)
        if min is not None and not info.min <= min <= info.max:
            min = xp.array(min).astype(d.dtype)[()]
        if max is not None and not info.min <= max <= info.max:
            max = xp.array(max).astype(d.dtype)[()]
    r = xp.clip(d, min, max).astype(d.dtype, copy=False) if not (min is not None and max is not None and min > max) \
        else xp.full_like(d, max)  # the cast: NumPy 1.x makes a 0-d float32 clipped by Python floats float64
    res = _wrap(r)
    if input._requires_grad and _state.enabled:
        node = record(node_cls, res, (input,), (input,))
        node.min, node.max = min, max
    return res


clip = clamp
ClampMinBackward0 = make_node_class("ClampMinBackward0", ClampBackward1.backward, ("self",),
                                    "Gradient passes where x >= min.")
ClampMaxBackward0 = make_node_class("ClampMaxBackward0", ClampBackward1.backward, ("self",),
                                    "Gradient passes where x <= max.")


class ClampMinBackward1(make_node_class("ClampMinBackward1", None, ("self", "min"))):
    """clamp_min(x, m) with a tensor bound: x's gradient where x >= m, m's where x < m."""

    def backward(self, grad):
        x, bound = self._unpack_saved()
        keep = (x >= bound) if self.is_min else (x <= bound)
        return grad.masked_fill(~keep, 0), grad.masked_fill(keep, 0)


ClampMaxBackward1 = make_node_class("ClampMaxBackward1", ClampMinBackward1.backward, ("self", "max"),
                                    "clamp_max(x, m) with a tensor bound: x's gradient where x <= m, m's where x > m.")


def _clamp_tensor_bound(input, bound, is_min):
    da, db = operands(input, bound)
    try:
        res = _wrap((xp.maximum if is_min else xp.minimum)(da, db))
    except ValueError:
        raise _shape_error(da, db) from None
    if _requires(input, bound):
        node = record(ClampMinBackward1 if is_min else ClampMaxBackward1, res, (input, bound), (input, bound))
        node.is_min = is_min
    return res


@method()
def clamp_min(input, min):
    if isinstance(min, Tensor):
        return _clamp_tensor_bound(input, min, True)
    return _clamp_numbers(input, min, None, ClampMinBackward0)


@method()
def clamp_max(input, max):
    if isinstance(max, Tensor):
        return _clamp_tensor_bound(input, max, False)
    return _clamp_numbers(input, None, max, ClampMaxBackward0)


class LerpBackward0(make_node_class("LerpBackward0", None)):
    def backward(self, grad):
        w = self.weight
        return grad * (1 - w), grad * w


class LerpBackward1(make_node_class("LerpBackward1", None, ("self", "end", "weight"))):
    def backward(self, grad):
        a, b, w = self._unpack_saved()
        return grad * (1 - w), grad * w, grad * (b - a)


@method()
def lerp(input, end, weight):
    for name, t in (("end", end), ("weight", weight)):
        if isinstance(t, Tensor) and t._data.dtype != input._data.dtype:  # torch does not promote here
            raise RuntimeError(f"expected dtype {_dtype.cpp_name(input.dtype)} for `{name}` but got dtype "
                               f"{_dtype.cpp_name(t.dtype)}")
    try:
        xp.broadcast_shapes(input._data.shape, end._data.shape,
                            weight._data.shape if isinstance(weight, Tensor) else ())
    except ValueError:
        raise broadcast_error(input._data.shape, end._data.shape) from None
    if isinstance(weight, Tensor):
        res = _wrap(like_operands(input._data + weight._data * (end._data - input._data), input._data, end._data))
        if _state.enabled and (input._requires_grad or end._requires_grad or weight._requires_grad):
            record(LerpBackward1, res, (input, end, weight), (input, end, weight))
        return res
    res = _wrap(like_operands(input._data + weight * (end._data - input._data), input._data, end._data))
    if _requires(input, end):
        record(LerpBackward0, res, (input, end)).weight = weight
    return res


def _fit(value, np_dtype):
    """A Python number as stored in a tensor of ``np_dtype`` (masked_fill, fill_, clamp bounds), with
    torch's overflow check (c10::overflows): floats are truncated if they fit; NaN, inf, complex and
    out-of-range numbers are refused -- except that an unsigned type takes -max..-1 by wrapping
    around (two's complement: uint8 -2 is 254)."""
    k = np_dtype.kind
    if k in "iu" or (k == "f" and isinstance(value, complex)):
        ok = not isinstance(value, complex)
        if ok and k in "iu":
            info = xp.iinfo(np_dtype)
            ok = value == value and (info.min <= value <= info.max or (k == "u" and -info.max <= value < 0))
        if not ok:
            raise RuntimeError(f"value cannot be converted to type {_dtype.c_scalar_type_name(np_dtype.name)}"
                               f" without overflow")
        if k == "u" and value < 0:
            value = int(value) + info.max + 1
    return value


class MaskedFillBackward0(make_node_class("MaskedFillBackward0", None, ("mask",))):
    def backward(self, grad):
        (mask,) = self._unpack_saved()
        return grad.masked_fill(mask, 0)


class MaskedFillBackward1(make_node_class("MaskedFillBackward1", None, ("mask",))):
    def backward(self, grad):
        (mask,) = self._unpack_saved()
        return grad.masked_fill(mask, 0), (grad * mask).sum()


@method()
def masked_fill(input, mask, value):
    if mask._data.dtype != bool:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_dtype.cpp_name(mask.dtype)}")
    d = input._data
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value._data.ndim} dimension(s).")
        v = value._data.astype(d.dtype)
    else:
        v = _fit(value, d.dtype) if d.dtype.kind in "iuf" else value
    try:
        out_shape = xp.broadcast_shapes(d.shape, mask._data.shape)
    except ValueError:
        raise broadcast_error(mask._data.shape, d.shape) from None
    if out_shape != d.shape:
        d = xp.broadcast_to(d, out_shape)
    res = _wrap(row_major(xp.where(mask._data, xp.asarray(v, dtype=d.dtype), d)))  # (torch: clone, then fill)
    if isinstance(value, Tensor) and value._requires_grad and _state.enabled:
        record(MaskedFillBackward1, res, (input, value), (mask,))
    elif input._requires_grad and _state.enabled:
        record(MaskedFillBackward0, res, (input,), (mask,))
    return res


class NanToNumBackward0(make_node_class("NanToNumBackward0", None, ("self",))):
    def backward(self, grad):
        (x,) = self._unpack_saved()
        return grad * x.isfinite()


@method()
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    res = _wrap(xp.nan_to_num(input._data, nan=nan, posinf=posinf, neginf=neginf))
    if input._requires_grad and _state.enabled:
        record(NanToNumBackward0, res, (input,), (input,))
    return res


# ---------------------------------------------------------------------------------------------
# In-place arithmetic: NumPy's out= when autograd is not involved (the optimizer's hot path)
# ---------------------------------------------------------------------------------------------
from ._op import _check_inplace, _write, bump_version, record_inplace, rebase_history  # noqa: E402


def _keeping_dtype(op):
    """``op`` for an in-place update: the result is written in self's dtype, so the gradient arrives
    in that dtype and each input must get its own back (float32 x += float64 y: y's is float64)."""
    def fn(src, other, **kwargs):
        res = op(src, other, **kwargs)
        node = res._grad_fn
        if node is not None and res._data.dtype != src._data.dtype:
            node._input_meta = tuple((t.shape, t.dtype) if isinstance(t, Tensor) and t._requires_grad else None
                                     for t in (src, other))
        return res
    return fn


def _scalar_in(dtype, value):
    """A Python number as a NumPy scalar of ``dtype`` when it may be written there (float into float,
    int into numbers, bool into anything), so NumPy computes in that dtype whatever its version: NumPy 1.x's
    value-based casting would compute a 0-d float32 times a Python float in float64 and round twice.
    Anything else is left as it is, for the cast check to refuse (float into an int tensor)."""
    tv = type(value)
    if tv is bool or (tv is int and dtype.kind != "b") or (tv is float and dtype.kind in "fc") or (tv is complex and dtype.kind == "c"):
        try:
            return dtype.type(value)
        except OverflowError:  # an int beyond the dtype: torch wraps around
            return xp.array(value).astype(dtype)[()]
    return value


def _inplace_binary(name, op, ufunc):
    op = _keeping_dtype(op)

    def op_(self, other, *, alpha=1):
        if seam.on:
            return seam.torch_function(op_, (self, other), {"alpha": alpha} if alpha != 1 else {})
        if _check_inplace(self, (other,)):
            return inplace(self, name, op, other, alpha=alpha) if alpha != 1 else inplace(self, name, op, other)
        d = self._data
        o = other._data if isinstance(other, Tensor) else _scalar_in(d.dtype, other)
        if alpha != 1:
            o = o * _scalar_in(xp.result_type(o), alpha)
        try:
            ufunc(d, o, out=d, casting="same_kind")
        except TypeError:
            rt = result_dtype(self, other)
            raise RuntimeError(f"result type {rt._legacy} can't be cast to the desired output type "
                               f"{self.dtype._legacy}") from None
        except ValueError:
            raise RuntimeError(f"output with shape {list(d.shape)} doesn't match the broadcast shape "
                               f"{list(_checks.broadcast_shape(d.shape, xp.shape(o)))}") from None
        bump_version(self, name)
        return self
    op_.__name__, op_.__qualname__ = name, "Tensor." + name
    return op_


Tensor.add_ = Tensor.__iadd__ = _inplace_binary("add_", add, xp.add)
Tensor.sub_ = Tensor.__isub__ = Tensor.subtract_ = _inplace_binary("sub_", sub, xp.subtract)
Tensor.mul_ = Tensor.__imul__ = Tensor.multiply_ = _inplace_binary("mul_", lambda s, o, alpha=1: mul(s, o), xp.multiply)


def _div_(self, other, *, rounding_mode=None):
    if seam.on:
        return seam.torch_function(_div_, (self, other), {"rounding_mode": rounding_mode} if rounding_mode else {})
    if rounding_mode is not None or self._data.dtype.kind not in "fc" or _check_inplace(self, (other,)):
        return inplace(self, "div_", div, other, rounding_mode=rounding_mode)
    d = self._data
    xp.true_divide(d, other._data if isinstance(other, Tensor) else other, out=d, casting="same_kind")
    bump_version(self, "div_")
    return self


_div_.__name__, _div_.__qualname__ = "div_", "Tensor.div_"
Tensor.div_ = Tensor.__itruediv__ = Tensor.divide_ = Tensor.true_divide_ = _div_
Tensor.pow_ = Tensor.__ipow__ = lambda self, e: inplace(self, "pow_", pow, e)
Tensor.__ifloordiv__ = Tensor.floor_divide_ = lambda self, o: inplace(self, "floor_divide_", floor_divide, o)
Tensor.__imod__ = Tensor.remainder_ = lambda self, o: inplace(self, "remainder_", remainder, o)
Tensor.__iand__ = lambda self, o: inplace(self, "bitwise_and_", bitwise_and, o)
Tensor.__ior__ = lambda self, o: inplace(self, "bitwise_or_", bitwise_or, o)
Tensor.__ixor__ = lambda self, o: inplace(self, "bitwise_xor_", bitwise_xor, o)
Tensor.clamp_ = Tensor.clip_ = lambda self, min=None, max=None: inplace(self, "clamp_", clamp, min, max)
Tensor.clamp_min_ = lambda self, min: inplace(self, "clamp_min_", clamp, min, None)
Tensor.clamp_max_ = lambda self, max: inplace(self, "clamp_max_", clamp, None, max)
def _masked_fill_(self, mask, value):
    if mask._data.shape != self._data.shape and _broadcast_shape(mask._data.shape, self._data.shape) != self._data.shape:
        raise broadcast_error(self._data.shape, mask._data.shape)
    return inplace(self, "masked_fill_", masked_fill, mask, value)


Tensor.masked_fill_ = _masked_fill_
Tensor.lerp_ = lambda self, end, weight: inplace(self, "lerp_", lerp, end, weight)
Tensor.nan_to_num_ = lambda self, nan=0.0, posinf=None, neginf=None: inplace(
    self, "nan_to_num_", nan_to_num, nan, posinf, neginf)
Tensor.atan2_ = lambda self, o: inplace(self, "atan2_", atan2, o)
Tensor.square_ = lambda self: inplace(self, "square_", square)


# ---------------------------------------------------------------------------------------------
# Filling and copying in place: zero_, fill_, copy_ (the derivative w.r.t. the old values is zero)
# ---------------------------------------------------------------------------------------------
class ZeroBackward0(make_node_class("ZeroBackward0", None)):
    def backward(self, grad):
        return _zeros(grad)


class FillBackward2(make_node_class("FillBackward2", None)):
    """x.fill_(number)."""

    def backward(self, grad):
        return _zeros(grad)


class FillBackward3(make_node_class("FillBackward3", None)):
    """x.fill_(0-dim tensor): the value receives the sum of the gradient."""

    def backward(self, grad):
        return _zeros(grad), grad.sum()


class CopyBackwards(make_node_class("CopyBackwards", None)):
    """x.copy_(src): src receives the gradient (the engine reduces it to src's shape and dtype)."""

    def name(self):
        return "torch::autograd::CopyBackwards"

    def backward(self, grad):
        return _zeros(grad), grad


def _broadcast_shape(a, b):
    try:
        return xp.broadcast_shapes(a, b)
    except ValueError:
        return None


@method()
def zero_(self):
    node = record_inplace(ZeroBackward0, self, (self,)) if _check_inplace(self, may_overlap=True) else None
    self._data[...] = 0
    bump_version(self, "zero_")
    if node is not None:
        rebase_history(self, node)
    return self


@method()
def fill_(self, value):
    is_t = isinstance(value, Tensor)
    if is_t and value._data.ndim != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value._data.ndim} dimensions.")
    if not is_t and (self._data.dtype.kind in "iu" or type(value) is complex):
        value = _fit(value, self._data.dtype)
    node = None
    if _check_inplace(self, (value,) if is_t else (), may_overlap=not is_t, refuse_aliases=None):
        node = record_inplace(FillBackward3, self, (self, value)) if is_t else \
            record_inplace(FillBackward2, self, (self,))
    self._data[...] = value._data if is_t else value
    bump_version(self, "fill_")
    if node is not None:
        rebase_history(self, node)
    return self


@method()
def copy_(self, src, non_blocking=False):
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not {type(src).__name__}")
    same = same_data(self._data, src._data)  # (torch's copy_ onto the same elements is a no-op: no memory checks)
    involved = _check_inplace(self, (src,), may_overlap=same, refuse_aliases=not same and "partial")
    d = src._data
    if type(d) is not type(self._data):
        from .._array import to_device, device_type_of
        d = to_device(d, device_type_of(self._data))
    if d.shape != self._data.shape and _broadcast_shape(d.shape, self._data.shape) != self._data.shape:
        bs = _broadcast_shape(d.shape, self._data.shape)
        if bs is None:
            raise _shape_error(self._data, d)
        raise RuntimeError(f"output with shape {list(self._data.shape)} doesn't match the broadcast shape {list(bs)}")
    if d.dtype.kind == "c" and self._data.dtype.kind != "c":
        d = d.real  # torch drops the imaginary part (with a warning)
    node = record_inplace(CopyBackwards, self, (self, src)) if involved else None
    self._data[...] = d  # any dtype converts, as in torch (float -> int truncates)
    bump_version(self, "copy_")
    if node is not None:
        rebase_history(self, node)
    return self


class AddcmulBackward0(make_node_class("AddcmulBackward0", None, ("tensor1", "tensor2"))):
    """input + value * t1 * t2:  d input = grad,  d t1 = grad * value * t2,  d t2 = grad * value * t1."""

    def backward(self, grad):
        t1, t2 = self._unpack_saved()
        v = self.value
        g = grad if v == 1 else grad * v
        return grad, (g * t2 if t2 is not None else None), (g * t1 if t1 is not None else None)


class AddcdivBackward0(make_node_class("AddcdivBackward0", None, ("tensor1", "tensor2"))):
    """input + value * t1 / t2:  d t1 = grad * value / t2,  d t2 = -grad * value * t1 / t2^2."""

    def backward(self, grad):
        t1, t2 = self._unpack_saved()
        g = grad if self.value == 1 else grad * self.value
        n = self.next_functions
        return grad, (g / t2 if n[1][0] is not None else None), \
            (-g * t1 / (t2 * t2) if n[2][0] is not None else None)


def _addc(input, tensor1, tensor2, value, ufunc, node_cls):
    try:
        t = ufunc(*operands(tensor1, tensor2))
    except ValueError:
        raise _checks.broadcast_error(tensor1.shape, tensor2.shape) from None
    if value != 1:
        t = t * value
    da, dt = operands(input, _wrap(t))
    try:
        res = _wrap(da + dt)
    except ValueError:
        raise _shape_error(da, dt) from None
    if _state.enabled and (input._requires_grad or tensor1._requires_grad or tensor2._requires_grad):
        # (what torch saves: tensor1 only for tensor2's gradient; tensor2 for tensor1's -- and for
        # its own when dividing; so modifying an unsaved one in place is no error at backward)
        saved = (tensor1 if tensor2._requires_grad else None,
                 tensor2 if tensor1._requires_grad or node_cls is AddcdivBackward0 else None)
        record(node_cls, res, (input, tensor1, tensor2), saved).value = value
    return res


@method()
def addcmul(input, tensor1, tensor2, *, value=1):
    return _addc(input, tensor1, tensor2, value, xp.multiply, AddcmulBackward0)


@method()
def addcdiv(input, tensor1, tensor2, *, value=1):
    return _addc(input, tensor1, tensor2, value, _true_divide_arrays, AddcdivBackward0)


def _addc_(name, ufunc, fallback):
    def op_(self, tensor1, tensor2, *, value=1):
        if _check_inplace(self, (tensor1, tensor2)):
            return inplace(self, name, fallback, tensor1, tensor2, value=value)
        t = ufunc(tensor1._data, tensor2._data)
        if value != 1:
            t *= value
        self._data += t
        bump_version(self, name)
        return self
    return op_


Tensor.addcmul_ = _addc_("addcmul_", xp.multiply, addcmul)
Tensor.addcdiv_ = _addc_("addcdiv_", xp.true_divide, addcdiv)
