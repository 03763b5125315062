"""Elementwise ops and their derivatives.

Unary ops are declared as a table, one row per op, in the spirit of torch's derivatives.yaml:
the forward on arrays, what the derivative needs saved (the input ``self`` or the ``result``),
and the derivative formula written with Tensor ops (so it can itself be differentiated).
Binary ops broadcast: their formulas return full-size gradients and the engine reduces them to
each input's shape.
"""
import builtins
import math

from .. import _dtype
from .._tensor import Tensor, _wrap, _scalar_type_name
from .._array import xp, same_data, row_major, like_operands, erf as _erf, erfinv as _erfinv, lgamma as _lgamma, digamma as _digamma
from ._masked_grad import masked_grad, masked_grad_node
from ._op import (_state, method, operands, float_array, record, make_node_class, inplace, connect,
                  result_dtype, as_tensor_arg)
from ..autograd.graph import has_edge


# ---------------------------------------------------------------------------------------------
# Unary ops: name, torch's node name, forward on arrays, saves, derivative(grad, saved), int ok
# ---------------------------------------------------------------------------------------------
def _sigmoid(a):
    return 0.5 * (1 + xp.tanh(0.5 * a)).astype(a.dtype, copy=False)


def _sign(a):
    return a.copy() if a.dtype == bool else xp.sign(a)  # NumPy has no sign for bool; torch keeps it


def _zeros(grad, *_):
    """torch's zeros_like(grad): a derivative that is zero whatever the gradient (even NaN)."""
    return grad.new_zeros(grad.shape)


LN2, LN10 = math.log(2.0), math.log(10.0)
ThresholdBackwardBackward0 = masked_grad_node("ThresholdBackwardBackward0")  # relu's derivative, differentiable

_UNARY = [
    # name       node                 forward                        saves     derivative                                       ints stay ints
    ("neg",     "NegBackward0",      xp.negative,                   None,     lambda g: -g,                                    True),
    ("abs",     "AbsBackward0",      xp.abs,                        "self",   lambda g, x: g * x.sign(),                       True),
    ("sign",    "SignBackward0",     _sign,                         None,     _zeros,                                         True),
    ("sgn",     "SgnBackward0",      _sign,                         None,     _zeros,                                         True),
    ("reciprocal", "ReciprocalBackward0", lambda a: 1 / a,          "result", lambda g, r: -g * (r * r),                       False),
    ("exp",     "ExpBackward0",      xp.exp,                        "result", lambda g, r: g * r,                              False),
    ("exp2",    "Exp2Backward0",     xp.exp2,                       "result", lambda g, r: g * r * LN2,                        False),
    ("expm1",   "Expm1Backward0",    xp.expm1,                      "result", lambda g, r: g * (r + 1),                        False),
    ("log",     "LogBackward0",      xp.log,                        "self",   lambda g, x: g / x,                              False),
    ("log2",    "Log2Backward0",     xp.log2,                       "self",   lambda g, x: g / (x * LN2),                      False),
    ("log10",   "Log10Backward0",    xp.log10,                      "self",   lambda g, x: g / (x * LN10),                     False),
    ("log1p",   "Log1PBackward0",    xp.log1p,                      "self",   lambda g, x: g / (x + 1),                        False),
    ("sqrt",    "SqrtBackward0",     xp.sqrt,                       "result", lambda g, r: g / (2 * r),                        False),
    ("rsqrt",   "RsqrtBackward0",    lambda a: 1 / xp.sqrt(a),      "result", lambda g, r: -0.5 * g * r * r * r,               False),
    ("sin",     "SinBackward0",      xp.sin,                        "self",   lambda g, x: g * x.cos(),                        False),
    ("cos",     "CosBackward0",      xp.cos,                        "self",   lambda g, x: g * -x.sin(),                       False),
    ("tan",     "TanBackward0",      xp.tan,                        "result", lambda g, r: g * (1 + r * r),                    False),
    ("asin",    "AsinBackward0",     xp.arcsin,                     "self",   lambda g, x: g * (1 - x * x).rsqrt(),            False),
    ("acos",    "AcosBackward0",     xp.arccos,                     "self",   lambda g, x: -g * (1 - x * x).rsqrt(),           False),
    ("atan",    "AtanBackward0",     xp.arctan,                     "self",   lambda g, x: g / (x * x + 1),                    False),
    ("sinh",    "SinhBackward0",     xp.sinh,                       "self",   lambda g, x: g * x.cosh(),                       False),
    ("cosh",    "CoshBackward0",     xp.cosh,                       "self",   lambda g, x: g * x.sinh(),                       False),
    ("tanh",    "TanhBackward0",     xp.tanh,                       "result", lambda g, r: g * (1 - r * r),                    False),
    ("asinh",   "AsinhBackward0",    xp.arcsinh,                    "self",   lambda g, x: g * (x * x + 1).rsqrt(),            False),
    ("acosh",   "AcoshBackward0",    xp.arccosh,                    "self",   lambda g, x: g * (x * x - 1).rsqrt(),            False),
    ("atanh",   "AtanhBackward0",    xp.arctanh,                    "self",   lambda g, x: g / (1 - x * x),                    False),
    ("sigmoid", "SigmoidBackward0",  _sigmoid,                      "result", lambda g, r: g * r * (1 - r),                    False),
    ("relu",    "ReluBackward0",     lambda a: xp.where(a < 0, a.dtype.type(0), a), "result", lambda g, r: masked_grad(ThresholdBackwardBackward0, g, r, r._data > 0), True),
    ("erf",     "ErfBackward0",      _erf,                          "self",   lambda g, x: g * (2 / math.sqrt(math.pi)) * (-x * x).exp(), False),
    ("erfinv",  "ErfinvBackward0",   _erfinv,                       "result", lambda g, r: g * (math.sqrt(math.pi) / 2) * (r * r).exp(), False),
    ("lgamma",  "LgammaBackward0",   _lgamma,                       "self",   lambda g, x: g * x.digamma(),                    False),
    ("digamma", "DigammaBackward0",  _digamma,                      None,     None,                                            False),
    ("floor",   "FloorBackward0",    xp.floor,                      None,     _zeros,                                         True),
    ("ceil",    "CeilBackward0",     xp.ceil,                       None,     _zeros,                                         True),
    ("trunc",   "TruncBackward0",    xp.trunc,                      None,     _zeros,                                         True),
    ("frac",    "FracBackward0",     lambda a: a - xp.trunc(a),     None,     lambda g: g,                                     True),
    ("logical_not", None,            xp.logical_not,                None,     None,                                            True),
    ("isnan",   None,                xp.isnan,                      None,     None,                                            True),
    ("isinf",   None,                xp.isinf,                      None,     None,                                            True),
    ("isfinite", None,               xp.isfinite,                   None,     None,                                            True),
    ("signbit", None,                xp.signbit,                    None,     None,                                            True),
    ("bitwise_not", None,            xp.invert,                     None,     None,                                            True),
]


def _not_for(kernel, kinds="b"):
    """torch's refusal of a dtype kind for an op: (kinds, error to raise)."""
    return kinds, lambda dt: NotImplementedError(f'"{kernel}" not implemented for \'{dt._legacy}\'')


# dtypes an op refuses, as torch does (checked once per call, only for these ops)
_REFUSES = {
    "neg": ("b", lambda dt: RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are "
                                         "trying to invert a mask, use the `~` or `logical_not()` operator instead.")),
    "abs": _not_for("abs_cpu"), "floor": _not_for("floor_vml_cpu"), "ceil": _not_for("ceil_vml_cpu"),
    "round": _not_for("round_vml_cpu"), "trunc": _not_for("trunc_vml_cpu"), "frac": _not_for("frac_cpu", "biu"),
    "relu": ("b", lambda dt: RuntimeError("Boolean inputs not supported for relu")),
}


def _make_unary(name, node_name, forward, saves, derivative, int_ok):
    refuse = _REFUSES.get(name)
    if derivative is None:
        node_cls = None
    elif saves is None:
        node_cls = make_node_class(node_name, lambda self, grad: derivative(grad))
    else:
        node_cls = make_node_class(node_name, lambda self, grad: derivative(grad, *self._unpack_saved()), (saves,))
    save_result = saves == "result"

    def op(input):
        d = input._data
        if refuse is not None and d.dtype.kind in refuse[0]:
            raise refuse[1](input.dtype)
        if not int_ok and d.dtype.kind not in "fc" and d.dtype != _dtype.bfloat16.numpy_dtype:
            d = d.astype(_dtype.get_default_dtype().numpy_dtype)
        out = _wrap(forward(d))
        if node_cls is not None and input._requires_grad and _state.enabled:
            node = node_cls.__new__(node_cls)
            if saves is None:
                connect(node, (input,), out)
            elif save_result:
                connect(node, (input,), out, (out,), 0)
            else:
                connect(node, (input,), out, (input,))
        return out

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"torch.{name}: elementwise {name}." + (f" Backward node: {node_name}." if node_name else "")

    def op_(self):
        return inplace(self, name + "_", op)
    op_.__name__ = name + "_"
    return op, op_, node_cls


for _row in _UNARY:
    _fn, _fn_, _node = _make_unary(*_row)
    globals()[_row[0]] = _fn
    globals()[_row[0] + "_"] = _fn_
    setattr(Tensor, _row[0], _fn)
    setattr(Tensor, _row[0] + "_", _fn_)
    if _node is not None:
        globals()[_row[1]] = _node
del _row, _fn, _fn_, _node

negative, arcsin, arccos, arctan, absolute, fix = neg, asin, acos, atan, abs, trunc
special_expit = sigmoid
Tensor.__neg__ = neg
Tensor.__abs__ = abs
Tensor.__invert__ = lambda self: logical_not(self) if self._data.dtype == bool else bitwise_not(self)
Tensor.negative, Tensor.arcsin, Tensor.arccos, Tensor.arctan, Tensor.absolute = neg, asin, acos, atan, abs


@method()
def square(input):
    return pow(input, 2)


@method()
def round(input, *, decimals=0):
    if decimals == 0:
        return _round0(input)
    out = _wrap(xp.round(input._data, decimals))
    if input._requires_grad and _state.enabled:
        record(RoundBackward1, out, (input,))
    return out


_round0, _round0_, RoundBackward0 = _make_unary("round", "RoundBackward0", xp.round, None, _zeros, True)
RoundBackward1 = make_node_class("RoundBackward1", lambda self, grad: _zeros(grad))
Tensor.round_ = lambda self, *, decimals=0: inplace(self, "round_", round, decimals=decimals)


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


def broadcast_error(sa, sb):
    """The RuntimeError torch raises for shapes ``sa`` and ``sb`` that do not broadcast."""
    n = builtins.max(len(sa), len(sb))
    for i in range(n - 1, -1, -1):
        x = sa[i - n + len(sa)] if i - n + len(sa) >= 0 else 1
        y = sb[i - n + len(sb)] if i - n + len(sb) >= 0 else 1
        if x != y and x != 1 and y != 1:
            return RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                                f"non-singleton dimension {i}")
    return RuntimeError(f"shapes {list(sa)} and {list(sb)} cannot be broadcast together")


def _check_alpha(da, alpha):
    if da.dtype.kind in "iub" and isinstance(alpha, float):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


class AddBackward0(make_node_class("AddBackward0", None)):
    """d(a + alpha*b) = da + alpha*db: the gradient passes through (reduced to each input's shape)."""
    alpha = 1

    def backward(self, grad):
        return grad, (grad if self.alpha == 1 else grad * self.alpha)


class SubBackward0(make_node_class("SubBackward0", None)):
    alpha = 1

    def backward(self, grad):
        return grad, (-grad if self.alpha == 1 else grad * -self.alpha)


class RsubBackward1(make_node_class("RsubBackward1", None)):
    alpha = 1

    def backward(self, grad):
        return (-grad if self.alpha == 1 else grad * -self.alpha),


@method("add", "__add__", "__radd__")
def add(input, other, *, alpha=1, out=None):
    if not isinstance(input, Tensor):
        input, other = other, input
    da, db = operands(input, other)
    try:
        if alpha == 1:
            r = da + db
        else:
            _check_alpha(da, alpha)
            r = (da + db * alpha).astype(da.dtype, copy=False)  # bool + bool * 2 stays bool
    except ValueError:
        raise _shape_error(da, db) from None
    res = _wrap(like_operands(r, da, db))
    if _requires(input, other):
        node = record(AddBackward0, res, (input, _other_edge(other)))
        if alpha != 1:
            node.alpha = alpha
    return res


def _sub_bool_check(input, other):
    a = input._data.dtype == bool
    b = isinstance(other, bool) or (isinstance(other, Tensor) and other._data.dtype == bool)
    if a and b and isinstance(other, Tensor):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                           "`logical_xor()` operator instead.")
    if a or b:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")


@method("sub", "__sub__", "subtract")
def sub(input, other, *, alpha=1):
    if input._data.dtype == bool or type(other) is bool or (isinstance(other, Tensor) and other._data.dtype == bool):
        _sub_bool_check(input, other)
    da, db = operands(input, other)
    try:
        if alpha == 1:
            r = da - db
        else:
            _check_alpha(da, alpha)
            r = (da - db * alpha).astype(da.dtype, copy=False)
    except ValueError:
        raise _shape_error(da, db) from None
    res = _wrap(like_operands(r, da, db))
    if _requires(input, other):
        node = record(SubBackward0, res, (input, _other_edge(other)))
        if alpha != 1:
            node.alpha = alpha
    return res


@method("rsub", "__rsub__")
def rsub(input, other, *, alpha=1):
    """other - alpha * input (what ``2 - x`` computes)."""
    if isinstance(other, Tensor):
        return sub(other, input, alpha=alpha)
    if input._data.dtype == bool or type(other) is bool:
        _sub_bool_check(input, other)
    da, db = operands(input, other)
    res = _wrap(db - da if alpha == 1 else (db - da * alpha).astype(da.dtype, copy=False))
    if input._requires_grad and _state.enabled:
        node = record(RsubBackward1, res, (input,))
        if alpha != 1:
            node.alpha = alpha
    return res


class _ScalarOther:
    """For ``x * 2`` / ``x / 2``: torch saves the number as ``_saved_other`` (a float64 0-dim tensor,
    its wrapped-number form) and no ``_saved_self``."""
    scalar = None

    @property
    def _saved_self(self):
        return None if self.scalar is not None else self._unpack_saved()[0]

    @property
    def _saved_other(self):
        if self.scalar is not None:
            return _wrap(xp.asarray(self.scalar, dtype="complex128" if isinstance(self.scalar, complex) else
                                    "int64" if isinstance(self.scalar, int) and not isinstance(self.scalar, bool)
                                    else "float64"))
        return self._unpack_saved()[1]


class MulBackward0(_ScalarOther, make_node_class("MulBackward0", None, ("self", "other"))):
    """d(a*b) = b*da + a*db. Saves ``other`` if ``a`` needs a gradient and ``self`` if ``b`` does."""

    def backward(self, grad):
        if self.scalar is not None:
            return grad * self.scalar, None
        a, b = self._unpack_saved()
        return (grad * b if b is not None else None), (grad * a if a is not None else None)


@method("mul", "__mul__", "__rmul__", "multiply")
def mul(input, other):
    if not isinstance(input, Tensor):
        input, other = other, input
    da, db = operands(input, other)
    try:
        r = da * db
    except ValueError:
        raise _shape_error(da, db) from None
    res = _wrap(like_operands(r, da, db))
    if _requires(input, other):
        if isinstance(other, Tensor):
            record(MulBackward0, res, (input, other),
                   (input if has_edge(other) else None, other if has_edge(input) else None))
        else:
            record(MulBackward0, res, (input, None)).scalar = other
    return res


class DivBackward0(_ScalarOther, make_node_class("DivBackward0", None, ("self", "other"))):
    """d(a/b) = da/b - a*db/b^2 (torch's formula: -grad * ((a / b) / b))."""

    def backward(self, grad):
        if self.scalar is not None:
            return grad / self.scalar, None
        a, b = self._unpack_saved()
        return (grad / b if self.next_functions[0][0] is not None else None), \
            (-grad * ((a / b) / b) if a is not None else None)


class DivBackward2(make_node_class("DivBackward2", None)):
    """Division with a rounding mode: piecewise constant, zero gradient."""

    def backward(self, grad):
        z = _zeros(grad)
        return z, (z if self.next_functions[1][0] is not None else None)


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
    if not isinstance(input, Tensor):
        return mul(reciprocal(other), input)
    da, db = operands(input, other)
    if rounding_mode is None:
        res = _wrap(like_operands(_true_divide_arrays(da, db), da, db))
        if _requires(input, other):
            if isinstance(other, Tensor):
                record(DivBackward0, res, (input, other), (input if has_edge(other) else None, other))
            else:
                record(DivBackward0, res, (input, None)).scalar = other
        return res
    if rounding_mode == "trunc":
        q = xp.trunc(_true_divide_arrays(da, db)) if da.dtype.kind in "fc" or isinstance(db, float) \
            else _int_trunc_div(da, db)
    elif rounding_mode == "floor":
        q = _floor_div(da, db)
    else:
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'")
    res = _wrap(q)
    if _requires(input, other):
        record(DivBackward2, res, (input, _other_edge(other)))
    return res


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
        if da.dtype.kind in "iu" and (db < 0).any():
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        res = _wrap(like_operands(xp.power(da, db), da, db))
        if _requires(input, exponent):
            record(PowBackward1, res, (input, exponent), (input, exponent, res), saved_output=2)
        return res
    da, e = operands(input, exponent)
    if da.dtype == bool and not isinstance(e, bool):
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
    res = _wrap(like_operands(xp.arctan2(da, db), da, db))
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
    res = _wrap(like_operands(xp.maximum(da, db), da, db))
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
    res = _wrap(like_operands(xp.minimum(da, db), da, db))
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
            raise RuntimeError(f'"{name}_cpu" not implemented for \'Float\'')
        return _wrap(ufunc(da, db))
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
    return bool(xp.allclose(input._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))


@method()
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    da, db = operands(input, other)
    return _wrap(xp.isclose(da, db, rtol=rtol, atol=atol, equal_nan=equal_nan))


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
    res = _wrap(like_operands(xp.where(condition._data, da, db), condition._data, da, db))
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


@method("clamp", "clip")
def clamp(input, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        lo = min if min is None or isinstance(min, Tensor) else as_tensor_arg(min, input)
        hi = max if max is None or isinstance(max, Tensor) else as_tensor_arg(max, input)
        d = input._data
        if lo is not None:
            d = xp.maximum(d, lo._data)
        if hi is not None:
            d = xp.minimum(d, hi._data)
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
    elif d.dtype.kind in "iu":  # an int bound converts to the tensor's type, wrapping as torch's does
        info = xp.iinfo(d.dtype)
        if min is not None and not info.min <= min <= info.max:
            min = xp.array(min).astype(d.dtype)[()]
        if max is not None and not info.min <= max <= info.max:
            max = xp.array(max).astype(d.dtype)[()]
    r = xp.clip(d, min, max) if not (min is not None and max is not None and min > max) else xp.full_like(d, max)
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
            raise RuntimeError(f"expected dtype {_scalar_type_name(input.dtype)} for `{name}` but got dtype "
                               f"{_scalar_type_name(t.dtype)}")
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


_SCALAR_C_TYPES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
                   "float16": "at::Half", "float32": "float", "float64": "double"}


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
            raise RuntimeError(f"value cannot be converted to type {_SCALAR_C_TYPES.get(np_dtype.name, np_dtype.name)}"
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


def _inplace_binary(name, op, ufunc):
    op = _keeping_dtype(op)

    def op_(self, other, *, alpha=1):
        if _check_inplace(self, (other,)):
            return inplace(self, name, op, other, alpha=alpha) if alpha != 1 else inplace(self, name, op, other)
        d = self._data
        o = other._data if isinstance(other, Tensor) else other
        if alpha != 1:
            o = o * alpha
        try:
            ufunc(d, o, out=d, casting="same_kind")
        except TypeError:
            rt = result_dtype(self, other)
            raise RuntimeError(f"result type {rt._legacy} can't be cast to the desired output type "
                               f"{self.dtype._legacy}") from None
        except ValueError:
            raise RuntimeError(f"output with shape {list(d.shape)} doesn't match the broadcast shape "
                               f"{list(xp.broadcast_shapes(d.shape, xp.shape(o)))}") from None
        bump_version(self, name)
        return self
    op_.__name__ = name
    return op_


Tensor.add_ = Tensor.__iadd__ = _inplace_binary("add_", add, xp.add)
Tensor.sub_ = Tensor.__isub__ = Tensor.subtract_ = _inplace_binary("sub_", sub, xp.subtract)
Tensor.mul_ = Tensor.__imul__ = Tensor.multiply_ = _inplace_binary("mul_", lambda s, o, alpha=1: mul(s, o), xp.multiply)


def _div_(self, other, *, rounding_mode=None):
    if rounding_mode is not None or self._data.dtype.kind not in "fc" or _check_inplace(self, (other,)):
        return inplace(self, "div_", div, other, rounding_mode=rounding_mode)
    d = self._data
    xp.true_divide(d, other._data if isinstance(other, Tensor) else other, out=d, casting="same_kind")
    bump_version(self, "div_")
    return self


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
    t = ufunc(*operands(tensor1, tensor2))
    if value != 1:
        t = t * value
    da, dt = operands(input, _wrap(t))
    try:
        res = _wrap(da + dt)
    except ValueError:
        raise _shape_error(da, dt) from None
    if _state.enabled and (input._requires_grad or tensor1._requires_grad or tensor2._requires_grad):
        saved = (tensor1 if tensor2._requires_grad or node_cls is AddcdivBackward0 else None,
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
