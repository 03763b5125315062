"""Elementwise ops and their derivatives.

Unary ops are declared as a table, one row per op, in the spirit of torch's derivatives.yaml:
the forward on arrays, what the derivative needs saved (the input ``self`` or the ``result``),
and the derivative formula written with Tensor ops (so it can itself be differentiated).
Binary ops broadcast: their formulas return full-size gradients and the engine reduces them to
each input's shape.
"""
import cmath
import math
import numbers
import operator

from .. import _dtype, _checks
from .._tensor import Tensor, _wrap
from .._array import (xp, to_device, same_data, row_major, like_operands, like_input,
                      copy_preserving_layout, erf as _erf, erfinv as _erfinv, lgamma as _lgamma, digamma as _digamma,
                      asarray_like as _asarray_like, asarray, has_values, zeros_like as _zeros_like)
from ._op import (method, operands, inplace, inplace_recorded, result_dtype, as_tensor_arg, promote_arrays,
                  _check_inplace, _check_no_overlap, bump_version, write_into, written_into_self, can_cast, _DTYPE_OF)
from .._ops import (defop, aten, node_classes_of, Plain, Keys, SAME_LAYOUT, SAME_LAYOUT_FLOATING, ROW_MAJOR_FLOAT,
                    SAME_LAYOUT_KEYS, SAME_LAYOUT_FLOATING_KEYS, ROW_MAJOR_FLOAT_KEYS)
from .. import _ops   # (_ops._ARRAY_TYPES, read at each call: it grows when CuPy is imported)
from .._seam import seam, overridable, named, alias
from ._derivatives import conj, is_complex, sgn_backward

__getattr__ = node_classes_of(__name__)    # (the node classes declared here, by name: TanhBackward0)

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
           "addcdiv", "clamp_", "nan_to_num_", "square_"]



# ---------------------------------------------------------------------------------------------
# Unary ops: one row each -- the forward on arrays and the derivative formula (torch's
# derivatives.yaml entry), which reads the gradient and, by name, the input (`self`) or the output
# (`result`). Formulas use operators and aten ops only, so the same formula runs on arrays (the
# usual backward) and on Tensors (double backward).
# ---------------------------------------------------------------------------------------------
# Array-level code never mixes an array with a bare Python number: NumPy 1.x's value-based casting
# would make a 0-d float32 result float64. The constants take the array's own type instead.
def _sigmoid(a):
    """torch's CPU kernel, 1 / (1 + exp(-a)): accurate to its last bits far out on the negative side,
    where 0.5 + 0.5 tanh(a / 2) cancels (float32 sigmoid(-20) is 2.06e-9 there, 0 here, and silu's
    gradient at -15 was 8% off). For a below -88 (float32) exp(-a) overflows to inf and 1 / inf is
    the 0 torch gives (NumPy's overflow warning from glasstorch is silenced: ``_array``). float16 and
    bfloat16 compute in float32, as torch's kernels do (opmath), and round once."""
    if a.dtype.name in _REDUCED_FLOATS:
        return _sigmoid(a.astype(xp.float32)).astype(a.dtype)
    one = a.dtype.type(1)
    return one / (one + xp.exp(-a))


_REDUCED_FLOATS = ("float16", "bfloat16")


def _clamp_side(extremum, a, bound):
    """``extremum(a, bound)`` (NumPy's maximum or minimum) as torch's clamp computes it, ``a < bound ?
    bound : a``: an element equal to the bound is ``a``'s own, so ``clamp(-0., min=0.)`` and
    ``relu(-0.)`` are -0. (NumPy's loops may give the bound's +0., and atan2 and 1/x tell them apart)."""
    if bound == 0 and a.dtype.kind == "f" and a.ndim and type(a) is xp.ndarray:
        if a.flags.c_contiguous and _ties_give_second(extremum, a.dtype, full=True):
            # the bound as a whole array, the result written over it: NumPy's SIMD loop runs only when
            # every operand is contiguous (a scalar bound takes its element-by-element loop, 3-4x slower:
            # 33 -> 12 us on 256x256 float32, the zeros' allocation included)
            bounds = xp.full(a.shape, bound, a.dtype) if xp.signbit(bound) else xp.zeros(a.shape, a.dtype)
            return extremum(bounds, a, out=bounds)
        if _ties_give_second(extremum, a.dtype):
            return extremum(bound, a)     # one pass: a tie (+0 against -0) gives a's own zero
        r = extremum(a, bound)
        xp.copyto(r, a, where=a == 0)     # two more passes, where NumPy's loops give the bound's zero
        return r
    r = extremum(a, bound)
    if bound == 0 and a.dtype.kind == "f":
        if r.ndim:   # (into r: it keeps the layout extremum gave it, as on meta)
            xp.copyto(r, a, where=a == 0)
        else:
            r = xp.where(a == 0, a, r)
    return r


_TIES = {}   # (extremum, dtype) -> whether NumPy's loops give the second operand on a tie of zeros


def _ties_give_second(extremum, dtype, full=False):
    """Whether ``extremum(bound, a)`` returns ``a``'s element where the two are equal zeros of
    opposite signs, on this NumPy and CPU: its SIMD loops (x86 ``maxps``/``minps``, which return
    their second operand on a tie) do, which spares ReLU's forward two passes over its input (1.5 of
    2.9 ms on a Transformer FFN's 2048x512 float32). Asked once per ufunc, dtype and form, of the loops a
    clamp runs: contiguous and strided, of short (scalar tail) and long (vector body) lengths; with
    ``full``, of the bound as a contiguous array of ``a``'s length (``extremum(zeros, a, out=zeros)``, what
    ``_clamp_side`` and the compiled ReLU (``_dynamo/lowering.py``) run on a contiguous ``a``)."""
    key = (extremum, dtype, full)
    known = _TIES.get(key)
    if known is None:
        known = True
        for n in (1, 3, 8, 17, 100, 1031):
            for first, second in ((0.0, -0.0), (-0.0, 0.0)):
                a = xp.full(2 * n, second, dtype)
                if full:
                    bound = xp.full(n, first, dtype)
                    got = [extremum(bound, a[:n]), extremum(bound, a[:n], out=bound)]
                else:
                    bound = dtype.type(first)
                    got = [extremum(bound, operand) for operand in (a[:n], a[::2])]
                known = known and all(bool((xp.signbit(r) == xp.signbit(second)).all()) for r in got)
        _TIES[key] = known
    return known


def _relu(a):
    return _clamp_side(xp.maximum, a, a.dtype.type(0))


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
    ("sgn",     "SgnBackward0",      _sign,                  sgn_backward,                                      True),
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
        kind = self.dtype.kind
        if refuse is not None and kind in refuse[0]:
            raise refuse[1](self.dtype)
        if not int_ok and kind not in "fc" and not _dtype.is_bfloat16_numpy(self.dtype):
            self = self.astype(default_float().numpy_dtype)
        return like_input(forward(self), self)
    kernel.__name__ = kernel.__qualname__ = f"{name}_kernel"
    return kernel


# the unary ops of a bool result
_BOOL_RESULT = ("logical_not", "isnan", "isinf", "isfinite", "signbit", "bitwise_not")

# the unary ops torch has no in-place variant of (x.isnan_() is glasstorch's only)
_NO_INPLACE_VARIANT = ("isnan", "isinf", "isfinite", "signbit")


def _make_unary(name, node_name, forward, derivative, int_ok):
    """The aten op of a unary row, its public function and Tensor method, and the in-place form
    (``aten.exp_``, recording the same node)."""
    formulas = {} if derivative is None else {"self": derivative}
    # (the plain case: a float32/float64 input, which no row computes in another dtype; bitwise_not
    # refuses it)
    # (the rows of a bool result give it no layout key: it is not the input's, and found when asked)
    keys = Keys(ROW_MAJOR_FLOAT_KEYS.test, exact=True) if name in _BOOL_RESULT else ROW_MAJOR_FLOAT_KEYS
    plain = None if "f" in _REFUSES.get(name, ("",))[0] else Plain("_forward({self})", ROW_MAJOR_FLOAT, keys,
                                                                    _forward=forward)
    op = defop(f"{name}(Tensor self) -> Tensor", _unary_kernel(name, forward, int_ok), node=node_name,
               plain=plain, **formulas)
    op_ = None if name in _NO_INPLACE_VARIANT else defop(f"{name}_(Tensor(a!) self) -> Tensor(a!)", inplace_of=op)

    @overridable(direct=op if plain is not None else None)
    def public(input):
        if not isinstance(input, Tensor):    # a list, a number, an array: torch's TypeError
            raise _checks.not_a_tensor(name, input)
        return op._call(input)   # (the op's generated call, bound: no trip through its type's __call__ slot)

    if op_ is None:
        @overridable
        def public_(self):
            return inplace(self, name + "_", public)
    else:
        @overridable
        def public_(self):
            return op_._call(self)   # (the op's generated call, bound: see _ops_codegen.install_call)
    # (closures named after the op, for tracebacks and profiles; writing each row's source and
    # compiling it, as before, was ~5% of ``import glasstorch``)
    for fn, fn_name in ((public, name), (public_, name + "_")):
        named(fn, fn_name)
    public.__doc__ = f"torch.{name}: elementwise {name}." + (f" Backward node: {node_name}." if node_name else "")
    return public, public_, op


for _row in _UNARY:
    _fn, _fn_, _op_ = _make_unary(*_row)
    globals()[_row[0]] = _fn
    globals()[_row[0] + "_"] = _fn_
    setattr(Tensor, _row[0], _fn)
    setattr(Tensor, _row[0] + "_", _fn_)
del _row, _fn, _fn_, _op_

_BITS_OF_SIZE = {2: xp.int16, 4: xp.int32, 8: xp.int64}   # an integer type to view a float's bits as


def kept(values, keep):
    """``values`` where the boolean ``keep`` is true and +0 elsewhere, bit for bit: a kept -0, inf or
    nan stays as it is (``values * keep`` would turn a dropped inf or nan into nan, a dropped
    negative into -0). For a float NumPy array, its bits multiplied, as integers, by 0 or 1 -- the
    bool operand widened in the ufunc's buffer, a cache-sized piece at a time (``np.where`` branches
    per element and mispredicts on random masks: 4.2 ms on LeNet's first ReLU, 128x6x28x28)."""
    bits = _BITS_OF_SIZE.get(values.dtype.itemsize) if values.dtype.kind == "f" else None
    if bits is None or type(values) is not xp.ndarray or not values.ndim:   # (other dtypes, CuPy, meta)
        return xp.where(keep, values, _zeros_like(values, ()))
    return xp.multiply(values.view(bits), keep.view(xp.uint8), dtype=bits).view(values.dtype)


def _threshold_backward_kernel(grad_output, self, threshold):
    """``self <= threshold ? 0 : grad_output`` (ReLU's backward), bit for bit: ``kept`` (1.3 ms on a
    2048x512 float32, where ANDing the bits with a full-size array of 0/-1 masks took 1.9)."""
    masked = self <= threshold         # (not ``self > threshold``: a nan in self keeps the gradient)
    keep = xp.logical_not(masked, out=masked) if type(masked) is xp.ndarray else xp.logical_not(masked)
    return kept(grad_output, keep)


threshold_backward = defop(
    "threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor",
    kernel=_threshold_backward_kernel,
    node="ThresholdBackwardBackward0",
    grad_output=lambda grad, self, threshold: aten.threshold_backward(grad, self, threshold),
    self=_zeros)

negative, arcsin, arccos, arctan, absolute, fix = neg, asin, acos, atan, abs, trunc
special_expit = sigmoid
Tensor.__neg__ = neg
Tensor.__abs__ = abs
Tensor.negative, Tensor.arcsin, Tensor.arccos, Tensor.arctan, Tensor.absolute = neg, asin, acos, atan, abs
# (their in-place forms are the same methods, as in torch: x.arccos_() is seen as aten.acos_.default)
Tensor.negative_, Tensor.arcsin_, Tensor.arccos_, Tensor.arctan_, Tensor.absolute_ = neg_, asin_, acos_, atan_, abs_


@overridable
def __invert__(self):
    """~x: logical not of a bool tensor, bitwise not of an integer one."""
    if self._data.dtype.kind in "fc":
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return logical_not(self) if self._data.dtype == bool else bitwise_not(self)


Tensor.__invert__ = __invert__


@method()
@overridable
def square(input):
    return pow(input, 2)


_round_decimals = defop("round.decimals(Tensor self, *, int decimals) -> Tensor",
                        kernel=lambda self, *, decimals: xp.round(self, decimals),
                        node="RoundBackward1", self=_zeros)


@method()
@overridable
def round(input, *, decimals=0):
    if decimals == 0:
        return _round0(input)
    if input._data.dtype.kind not in "fc":
        raise NotImplementedError(f'"round_cpu" not implemented for \'{input.dtype._legacy}\'')
    return _round_decimals(input, decimals=decimals)


_round0, _round0_, _round_op = _make_unary("round", "RoundBackward0", xp.round, _zeros, True)


_round_decimals_ = defop("round_.decimals(Tensor(a!) self, *, int decimals) -> Tensor(a!)", inplace_of=_round_decimals)


@overridable
def round_(self, *, decimals=0):
    if decimals == 0:
        return _round0_(self)
    if self._data.dtype.kind not in "fc":
        raise NotImplementedError(f'"round_cpu" not implemented for \'{self.dtype._legacy}\'')
    return _round_decimals_(self, decimals=decimals)


Tensor.round_ = round_


# ---------------------------------------------------------------------------------------------
# Arithmetic
# ---------------------------------------------------------------------------------------------
def _shape_error(a, b):
    """torch's error for arrays whose shapes do not broadcast (NumPy raises a ValueError of its own)."""
    return _checks.broadcast_error(xp.shape(a), xp.shape(b))


def _check_alpha(a, alpha):
    if a.dtype.kind in "iub" and isinstance(alpha, float):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


def _mul_kernel(self, other):
    """``self * other`` on the promoted operands, its result laid out as torch's TensorIterator lays
    it out (``like_operands``: ``x.t() * y`` is laid out as ``x.t()``; a later view() depends on it).
    (The plain case, ``plain=`` below, is the op's kernel's first test.)"""
    a, b = promote_arrays(self, other, True)
    return like_operands(a * b, a, b)


def _add_kernel(self, other, *, alpha=1):
    a, b = promote_arrays(self, other, alpha == 1)
    if alpha == 1:
        return like_operands(a + b, a, b)
    _check_alpha(a, alpha)
    return like_operands((a + b * alpha).astype(a.dtype, copy=False), a, b)  # bool + bool * 2 stays bool


def _sub_kernel(self, other, *, alpha=1):
    if self.dtype == bool or type(other) is bool or getattr(other, "dtype", None) == bool:
        _sub_bool_check(self.dtype == bool, other)
    a, b = promote_arrays(self, other, alpha == 1)
    if alpha == 1:
        return like_operands(a - b, a, b)
    _check_alpha(a, alpha)
    return like_operands((a - b * alpha).astype(a.dtype, copy=False), a, b)


def _rsub_kernel(self, other, alpha=1):
    """other - alpha * self (what ``2 - x`` computes)."""
    if self.dtype == bool or type(other) is bool:
        _sub_bool_check(self.dtype == bool, other)
    a, b = promote_arrays(self, other, True)
    return like_operands(b - a if alpha == 1 else (b - a * alpha).astype(a.dtype, copy=False), a, b)


add_op = defop("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", _add_kernel,
               node="AddBackward0", plain=Plain("{self} + {other}", SAME_LAYOUT, SAME_LAYOUT_KEYS),
               self=lambda grad: grad,
               other=lambda grad, alpha: grad if alpha == 1 else grad * alpha)
sub_op = defop("sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", _sub_kernel,
               node="SubBackward0", plain=Plain("{self} - {other}", SAME_LAYOUT_FLOATING, SAME_LAYOUT_FLOATING_KEYS),   # (bool - bool: an error)
               self=lambda grad: grad,
               other=lambda grad, alpha: -grad if alpha == 1 else grad * -alpha)
rsub_op = defop("rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", _rsub_kernel,
                node="RsubBackward1",
                self=lambda grad, alpha: -grad if alpha == 1 else grad * -alpha)
mul_op = defop("mul.Tensor(Tensor self, Tensor other) -> Tensor",
               _mul_kernel,
               node="MulBackward0", plain=Plain("{self} * {other}", SAME_LAYOUT, SAME_LAYOUT_KEYS),
               self=lambda grad, other: grad * conj(other),
               other=lambda grad, self: grad * conj(self))


@method("add", "__add__", "__radd__")
@overridable(direct=add_op)
def add(input, other, *, alpha=1):
    if not isinstance(input, Tensor):
        input, other = other, input
    return add_op._call(input, other) if alpha == 1 else add_op._call(input, other, alpha=alpha)


def _sub_bool_check(self_is_bool, other):
    b = isinstance(other, bool) or getattr(other, "dtype", None) == bool
    if self_is_bool and b and not isinstance(other, bool):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                           "`logical_xor()` operator instead.")
    raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
                       "invert a mask, use the `~` or `logical_not()` operator instead.")


def _check_bool_alpha(input, other, alpha):
    if type(alpha) is bool and not (input._data.dtype == bool and (type(other) is bool or
                                                                    isinstance(other, Tensor) and other.dtype == _dtype.bool)):
        raise RuntimeError("Boolean alpha only supported for Boolean results.")


@method("sub", "__sub__", "subtract")
@overridable(direct=sub_op)
def sub(input, other, *, alpha=1):
    _check_bool_alpha(input, other, alpha)
    return sub_op._call(input, other) if alpha == 1 else sub_op._call(input, other, alpha=alpha)


@method("rsub")
@overridable
def rsub(input, other, *, alpha=1):
    """other - alpha * input (what ``2 - x`` computes)."""
    if isinstance(other, Tensor):
        return sub(other, input, alpha=alpha)
    return rsub_op(input, other, alpha)


@overridable
def __rsub__(self, other):
    """``2 - x``: a function of its own in torch (Python, in its _tensor.py), which a mode sees as
    ``Tensor.__rsub__``, not ``rsub``."""
    return rsub(self, other)


Tensor.__rsub__ = __rsub__


@method("mul", "__mul__", "__rmul__", "multiply")
@overridable(direct=mul_op)
def mul(input, other):
    if not isinstance(input, Tensor):
        input, other = other, input
    return mul_op._call(input, other)


def _true_divide_kernel(self, other):
    a, b = promote_arrays(self, other, True)
    return like_operands(_true_divide_arrays(a, b), a, b)


div_op = defop("div.Tensor(Tensor self, Tensor other) -> Tensor", _true_divide_kernel,
               node="DivBackward0", plain=Plain("{self} / {other}", SAME_LAYOUT_FLOATING, SAME_LAYOUT_FLOATING_KEYS),   # (int / int: a float)
               self=lambda grad, other: grad / conj(other),
               other=lambda grad, self, other: -grad * conj((self / other) / other))
div_mode_op = defop("div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",
                    lambda self, other, *, rounding_mode: _rounding_divide(*promote_arrays(self, other), rounding_mode),
                    node="DivBackward2", self=_zeros, other=_zeros)


def _derivative_not_implemented(op_name):
    """The formula of an input torch records but has no derivative for (its node is ``NotImplemented``:
    the result requires grad, and backward through it raises torch's error)."""
    def not_implemented(grad):
        raise RuntimeError(f"derivative for aten::{op_name} is not implemented")
    not_implemented.__name__ = f"{op_name}_not_implemented"
    return not_implemented


def _not_implemented_op(schema, kernel, op_name, inputs):
    op = defop(schema, kernel, node="NotImplemented",
               **{name: _derivative_not_implemented(op_name) for name in inputs})
    return op


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
@overridable
def div(input, other, *, rounding_mode=None):
    if not isinstance(input, Tensor):
        return mul(reciprocal(other), input)
    if rounding_mode is None:
        return div_op._call(input, other)
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
    return q + ((r != 0) & ((a < 0) != (asarray(b) < 0)))  # floor rounds down; trunc rounds to 0


def _check_int_zero(da, db):
    if da.dtype.kind in "iub" and not isinstance(db, float) and has_values(db) and (asarray(db) == 0).any():
        raise RuntimeError("ZeroDivisionError")


def _floor_div(da, db):
    _check_int_zero(da, db)
    try:
        return xp.floor_divide(da, db)
    except ValueError:
        raise _shape_error(da, db) from None


@overridable
def __rdiv__(self, other):
    """number / tensor. torch's ``Tensor.__rtruediv__`` is this same function, so a mode sees
    ``2 / x`` as ``__rdiv__``."""
    return mul(reciprocal(self), other)


Tensor.__rdiv__ = Tensor.__rtruediv__ = __rdiv__


# ---- floor_divide, remainder, fmod ------------------------------------------------------------------
def _binary_kernel(compute, reversed_operands=False):
    """The kernel of a binary op computed on torch's promoted operands, laid out as torch lays it out;
    ``reversed_operands``: ``self`` is the Python number of a ``.Scalar_Tensor`` overload (``2 % x``)."""
    if reversed_operands:
        def kernel(self, other):
            b, a = promote_arrays(other, self)
            return compute(_asarray_like(b, a, b.dtype), b)
    else:
        def kernel(self, other):
            a, b = promote_arrays(self, other)
            return like_operands(compute(a, b), a, b)   # (a number b counts, as torch wraps it)
    return kernel


def _remainder_arrays(a, b):
    _check_int_zero(a, b)
    try:
        return xp.remainder(a, b)
    except ValueError:
        raise _shape_error(a, b) from None


def _fmod_arrays(a, b):
    _check_int_zero(a, b)
    try:
        return xp.fmod(a, b)
    except ValueError:
        raise _shape_error(a, b) from None


# (torch records floor_divide, and a number % a tensor, with no derivative: the NotImplemented node)
floor_divide_op = _not_implemented_op("floor_divide(Tensor self, Tensor other) -> Tensor", _binary_kernel(_floor_div),
                                      "floor_divide", ("self", "other"))
remainder_op = defop("remainder.Tensor(Tensor self, Tensor other) -> Tensor", _binary_kernel(_remainder_arrays),
                     node="RemainderBackward1",
                     self=lambda grad: grad,
                     other=lambda grad, self, other: -grad * aten.div.Tensor_mode(self, other, rounding_mode="floor"))
remainder_scalar_op = defop("remainder.Scalar(Tensor self, Scalar other) -> Tensor", _binary_kernel(_remainder_arrays),
                            node="RemainderBackward0", self=lambda grad: grad)
rremainder_op = _not_implemented_op("remainder.Scalar_Tensor(Scalar self, Tensor other) -> Tensor",
                                    _binary_kernel(_remainder_arrays, reversed_operands=True), "remainder", ("other",))
fmod_op = defop("fmod.Tensor(Tensor self, Tensor other) -> Tensor", _binary_kernel(_fmod_arrays),
                node="FmodBackward1",
                self=lambda grad: grad,
                other=lambda grad, self, other: -grad * aten.div.Tensor_mode(self, other, rounding_mode="trunc"))
fmod_scalar_op = defop("fmod.Scalar(Tensor self, Scalar other) -> Tensor", _binary_kernel(_fmod_arrays),
                       node="FmodBackward0", self=lambda grad: grad)


@method()
@overridable
def floor_divide(input, other):
    return floor_divide_op(input, other)


@method()
@overridable
def __floordiv__(self, other):
    """tensor // other (a function mode sees it under this name, as torch's)."""
    return floor_divide_op(self, other)


@overridable
def __rfloordiv__(self, other):
    """number // tensor."""
    return floor_divide_op(as_tensor_arg(other, self), self)


Tensor.__rfloordiv__ = __rfloordiv__


@method("remainder", "__mod__")
@overridable
def remainder(input, other):
    if not isinstance(input, Tensor):
        return rremainder_op(input, other)
    return remainder_op(input, other) if isinstance(other, Tensor) else remainder_scalar_op(input, other)


@overridable
def __rmod__(self, other):
    """number % tensor (torch's remainder.Scalar_Tensor, which has no derivative)."""
    return rremainder_op(other, self)


Tensor.__rmod__ = __rmod__


@method()
@overridable
def fmod(input, other):
    return fmod_op(input, other) if isinstance(other, Tensor) else fmod_scalar_op(input, other)


# ---- pow ---------------------------------------------------------------------------------------------
def pow_backward(grad, self, exponent):
    """torch's pow_backward: d(x^e)/dx = e x^(e-1) (conjugated for complex), zeros for e = 0."""
    if exponent == 0:
        return aten.zeros_like(self)
    return grad * conj(exponent * aten.pow.Tensor_Scalar(self, exponent - 1))


def pow_backward_self(grad, self, exponent):
    """torch's pow_backward_self: y x^(y-1), taken as 0 where y = 0."""
    return aten.where(exponent == 0, 0, grad * conj(exponent * aten.pow.Tensor_Tensor(self, exponent - 1)))


def _exponent_keeps_zero(exponent):
    """Where 0^y has a zero derivative in y: y real and >= 0."""
    if is_complex(exponent):
        return exponent == aten.abs(exponent)     # (imag(y) == 0 and real(y) >= 0, in one comparison)
    return exponent >= 0


def pow_backward_exponent(grad, self, exponent, result):
    """torch's pow_backward_exponent: x^y log x, taken as 0 where x = 0 and y >= 0."""
    return grad * aten.where((self == 0) & _exponent_keeps_zero(exponent), 0, conj(result * aten.log(self)))


def pow_backward_exponent_scalar(grad, self, exponent, result):
    """pow_backward_exponent for a number base c: c^y log c (0 where c = 0 and y >= 0)."""
    if isinstance(self, complex) or is_complex(exponent):
        log_base = cmath.log(self) if self != 0 else complex(-math.inf)
    else:
        log_base = math.log(self) if self > 0 else (-math.inf if self == 0 else math.nan)
    if self == 0:
        return grad * aten.where(_exponent_keeps_zero(exponent), 0, conj(result * log_base))
    return grad * conj(result * log_base)


def _pow_tensor_kernel(self, exponent):
    a, b = promote_arrays(self, exponent)
    if a.dtype == bool:
        raise NotImplementedError('"pow" not implemented for \'Bool\'')
    try:
        if a.dtype.kind in "iu" and has_values(b) and (b < 0).any():   # (meta: no values, the shapes are the same)
            # torch's integer pow: x ** -n is 1 for x == 1, +-1 for x == -1, else 0 (truncated 1 / x ** n)
            p = xp.power(a, xp.abs(b))
            r = xp.where(b >= 0, p, xp.where(xp.abs(a) == 1, p, 0)).astype(p.dtype)
        else:
            r = xp.power(a, b)
    except ValueError:
        raise _checks.broadcast_error(a.shape, b.shape) from None
    return like_operands(r, a, b)


def _pow_scalar_kernel(self, exponent):
    a, e = promote_arrays(self, exponent)   # (a bool tensor takes an int or float exponent's type)
    if a.dtype.kind in "iu" and type(exponent) is int and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    r = a * a if e == 2 else xp.sqrt(a) if e == 0.5 else a.copy(order="K") if e == 1 else xp.power(a, e)
    return like_input(r, a)


def _rpow_kernel(self, exponent):
    """number ** tensor: row-major whatever the exponent's layout (torch's pow.Scalar allocates its
    result without the exponent's strides)."""
    b, a = promote_arrays(exponent, self)
    return row_major(xp.power(_asarray_like(b, a, b.dtype), b))


pow_op = defop("pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor", _pow_tensor_kernel,
               node="PowBackward1", self=pow_backward_self, exponent=pow_backward_exponent)
pow_scalar_op = defop("pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor", _pow_scalar_kernel,
                      node="PowBackward0", self=pow_backward)
rpow_op = defop("pow.Scalar(Scalar self, Tensor exponent) -> Tensor", _rpow_kernel,
                node="PowBackward2", exponent=pow_backward_exponent_scalar)


@method("pow", "__pow__")
@overridable
def pow(input, exponent):
    if not isinstance(input, Tensor):
        return __rpow__(exponent, input)
    if isinstance(exponent, Tensor):
        return pow_op(input, exponent)
    return pow_scalar_op(input, exponent)


@overridable
def __rpow__(self, other):
    """number ** tensor."""
    if not isinstance(other, (int, float, bool, complex)):
        raise TypeError(f"unsupported operand type(s) for ** or pow(): '{type(other).__name__}' and 'Tensor'")
    return rpow_op(other, self)


Tensor.__rpow__ = __rpow__


@overridable
def float_power(input, exponent):
    """torch.float_power: pow computed in double precision."""
    return pow(input.double() if isinstance(input, Tensor) else input,
               exponent.double() if isinstance(exponent, Tensor) else exponent)


# ---- atan2, maximum, minimum -------------------------------------------------------------------------
def atan2_backward(grad, self, other, output_mask):
    """torch's atan2_backward: d/da = b / (a^2 + b^2), d/db = -a / (a^2 + b^2), with 1 / (a^2 + b^2)
    taken as 0 where a^2 + b^2 is 0 -- as torch writes it (a reciprocal, then masked_fill), so that
    its double backward there is torch's too (NaN: the reciprocal's derivative at inf)."""
    denom = self * self + other * other
    recip = aten.masked_fill(aten.reciprocal(denom), denom == 0, 0)
    return (grad * other * recip if output_mask[0] else None,
            grad * -self * recip if output_mask[1] else None)


def _atan2_kernel(self, other):
    a, b = promote_arrays(self, other)
    if a.dtype.kind not in "fc":
        ft = _dtype.get_default_dtype().numpy_dtype
        a, b = a.astype(ft), _asarray_like(a, b).astype(ft)
    try:
        return like_operands(xp.arctan2(a, b), a, b)
    except ValueError:
        raise _checks.broadcast_error(a.shape, b.shape) from None


atan2_op = defop("atan2(Tensor self, Tensor other) -> Tensor", _atan2_kernel, node="Atan2Backward0",
                 joint={("self", "other"): atan2_backward})


@method("atan2", "arctan2")
@overridable
def atan2(input, other):
    return atan2_op(input, as_tensor_arg(other, input))


arctan2 = atan2


def _extremum_kernel(name, ufunc):
    def kernel(self, other):
        a, b = promote_arrays(self, other)
        if a.dtype.kind == "c":
            raise RuntimeError(f"{name} not implemented for complex tensors.")
        try:
            return like_operands(ufunc(a, b), a, b)
        except ValueError:
            raise _checks.broadcast_error(a.shape, b.shape) from None
    kernel.__name__ = f"{name}_kernel"
    return kernel


def _extremum_grad(grad, self, other, loses):
    """torch's maximum/minimum derivative: the gradient goes to the input that was picked, split in
    half where they tie; ``loses``: where this input was not picked."""
    return aten.masked_fill(aten.where(self == other, grad / 2, grad), loses, 0)


maximum_op = defop("maximum(Tensor self, Tensor other) -> Tensor", _extremum_kernel("maximum", xp.maximum),
                   node="MaximumBackward0",
                   self=lambda grad, self, other: _extremum_grad(grad, self, other, self < other),
                   other=lambda grad, self, other: _extremum_grad(grad, self, other, self > other))
minimum_op = defop("minimum(Tensor self, Tensor other) -> Tensor", _extremum_kernel("minimum", xp.minimum),
                   node="MinimumBackward0",
                   self=lambda grad, self, other: _extremum_grad(grad, self, other, self > other),
                   other=lambda grad, self, other: _extremum_grad(grad, self, other, self < other))


def _tensor_other(name, other):
    if not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")


@method()
@overridable
def maximum(input, other):
    _tensor_other("maximum", other)
    return maximum_op(input, other)


@method()
@overridable
def minimum(input, other):
    _tensor_other("minimum", other)
    return minimum_op(input, other)


def _fmax_self_grad(grad, self, other):
    """fmax's: the gradient where self was picked (self >= other, or other is NaN)."""
    return aten.masked_fill(grad, ~((self >= other) | aten.isnan(other)), 0)


def _fmax_other_grad(grad, self, other):
    return aten.masked_fill(grad, (self >= other) | aten.isnan(other), 0)


def _fmin_self_grad(grad, self, other):
    return aten.masked_fill(grad, ~((self <= other) | aten.isnan(other)), 0)


def _fmin_other_grad(grad, self, other):
    return aten.masked_fill(grad, (self <= other) | aten.isnan(other), 0)


# (fmax/fmin ignore a NaN operand where maximum/minimum propagate it; ties go to self)
fmax_op = defop("fmax(Tensor self, Tensor other) -> Tensor", _extremum_kernel("fmax", xp.fmax),
                node="FmaxBackward0", self=_fmax_self_grad, other=_fmax_other_grad)
fmin_op = defop("fmin(Tensor self, Tensor other) -> Tensor", _extremum_kernel("fmin", xp.fmin),
                node="FminBackward0", self=_fmin_self_grad, other=_fmin_other_grad)


@method()
@overridable
def fmax(input, other):
    _tensor_other("fmax", other)
    return fmax_op(input, other)


@method()
@overridable
def fmin(input, other):
    _tensor_other("fmin", other)
    return fmin_op(input, other)



# ---------------------------------------------------------------------------------------------
# Comparisons and logic: results are bool and never require grad
# ---------------------------------------------------------------------------------------------
def _on_the_seam(name, compute):
    """``compute(input, other)`` as the public function ``name`` (``x > y`` is ``Tensor.__gt__``, ``x.gt(y)``
    ``Tensor.gt``: a function mode sees each under its own name, as torch's does)."""
    @overridable
    def public(input, other):
        return compute(input, other)
    public.__name__ = public.__qualname__ = name
    return public


def _type_name(value):
    return "Tensor" if isinstance(value, Tensor) else type(value).__name__


def _comparison_kernel(name, ufunc):
    """The kernel of comparison or logical op ``name``: a bool array, laid out as the operands (a mask
    of ``x.t()`` is laid out as ``x.t()``); complex numbers have no order."""
    ordering = name in ("lt", "le", "gt", "ge")

    def kernel(self, other):
        da, db = promote_arrays(self, other)
        if ordering and da.dtype.kind == "c":
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'{_dtype._BY_NUMPY[da.dtype]._legacy}\'')
        try:
            return like_operands(ufunc(da, db), da, db)
        except ValueError:
            raise _shape_error(da, db) from None
    kernel.__name__ = kernel.__qualname__ = f"{name}_kernel"
    return kernel


def _operator(name, public, compute):
    """The operator ``x > y`` (``Tensor.__gt__``): ``public`` (``gt``: the name a function mode sees,
    as in torch), or NotImplemented for an operand torch does not compare with, so that Python
    decides (``x == None`` is False, ``x > "a"`` a TypeError), as torch's operators do."""
    def operator_(self, other):
        if type(other) is not Tensor and not isinstance(other, (Tensor, numbers.Number, *_ops._ARRAY_TYPES)):
            return NotImplemented
        if seam.on:     # (torch's x == y hands Tensor.__eq__ itself: public None)
            return seam.torch_function(public or operator_, (self, other), {})
        return compute(self, other)
    operator_.__name__ = operator_.__qualname__ = name
    return operator_


def _compare(name, ufunc, *aliases, dunder=None):
    """A comparison, as torch declares it: ``aten.<name>.Tensor`` and ``.Scalar`` (not differentiable:
    bool results), and their in-place forms ``aten.<name>_.Tensor``/``.Scalar``, which write 0/1 into
    ``self`` and have derivatives of their own (zero: ``GtBackward1``, ``GtBackward0``). Public:
    ``Tensor.<name>`` and ``<name>_`` and the aliases (``greater``, ``greater_``; ``__eq__``, which torch
    keeps apart), each a function of its own; the operator ``dunder`` calls ``Tensor.<name>``."""
    kernel = _comparison_kernel(name, ufunc)
    tensor_op = defop(f"{name}.Tensor(Tensor self, Tensor other) -> Tensor", kernel)
    scalar_op = defop(f"{name}.Scalar(Tensor self, Scalar other) -> Tensor", kernel)
    node = name.capitalize() + "Backward"
    tensor_op_ = defop(f"{name}_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", written_into_self(kernel),
                       inplace=True, node=node + "1", self=_zeros,
                       other=lambda grad, other_sizes: aten.new_zeros(grad, other_sizes))
    scalar_op_ = defop(f"{name}_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)", written_into_self(kernel),
                       inplace=True, node=node + "0", self=_zeros)
    compute = _public_pair(name, aliases, tensor_op, scalar_op, tensor_op_, scalar_op_)
    if dunder:
        setattr(Tensor, dunder, _operator(dunder, getattr(Tensor, name), compute))
    return getattr(Tensor, name)


def _public_pair(name, aliases, tensor_op, scalar_op, tensor_op_, scalar_op_):
    """``Tensor.<name>``/``<name>_`` and each alias's pair: the overload for ``other`` a Tensor or a
    number. Returns the out-of-place body, for the operator."""
    def compute(input, other):
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}() received an invalid combination of arguments - got ({_type_name(input)}, "
                            f"{_type_name(other)}), but expected one of:\n * (Tensor input, Tensor other, *, Tensor "
                            f"out = None)\n * (Tensor input, Number other, *, Tensor out = None)\n")
        return (tensor_op if isinstance(other, Tensor) else scalar_op)._call(input, other)

    def compute_(self, other):
        return (tensor_op_ if isinstance(other, Tensor) else scalar_op_)._call(self, other)
    for n in (name,) + aliases:
        public = _on_the_seam(n, compute)
        setattr(Tensor, n, public if n != "__eq__" else _operator(n, None, compute))
        if not n.startswith("__"):
            setattr(Tensor, n + "_", _on_the_seam(n + "_", compute_))
    return compute


eq = _compare("eq", xp.equal, "__eq__")
ne = _compare("ne", xp.not_equal, "not_equal", dunder="__ne__")
lt = _compare("lt", xp.less, "less", dunder="__lt__")
le = _compare("le", xp.less_equal, "less_equal", dunder="__le__")
gt = _compare("gt", xp.greater, "greater", dunder="__gt__")
ge = _compare("ge", xp.greater_equal, "greater_equal", dunder="__ge__")
greater, greater_equal, less, less_equal, not_equal = \
    Tensor.greater, Tensor.greater_equal, Tensor.less, Tensor.less_equal, Tensor.not_equal


def _logical(name, ufunc):
    """``aten.logical_<op>`` and ``aten.logical_<op>_`` (not differentiable: an in-place one leaves
    ``self``'s history as it was, as in torch); ``other`` must be a Tensor."""
    op = defop(f"{name}(Tensor self, Tensor other) -> Tensor", _comparison_kernel(name, ufunc))
    op_ = defop(f"{name}_(Tensor(a!) self, Tensor other) -> Tensor(a!)", inplace_of=op)

    def check(input, other, fn_name):
        if not isinstance(input, Tensor):
            raise _checks.not_a_tensor(fn_name, input)
        if not isinstance(other, Tensor):
            raise _checks.not_a_tensor(fn_name, other, "other", 2)

    @overridable
    def public(input, other):
        check(input, other, name)
        return op._call(input, other)

    @overridable
    def public_(self, other):
        check(self, other, name + "_")
        return op_._call(self, other)
    for fn, fn_name in ((public, name), (public_, name + "_")):
        named(fn, fn_name)
        setattr(Tensor, fn_name, fn)
    return public


logical_and = _logical("logical_and", xp.logical_and)
logical_or = _logical("logical_or", xp.logical_or)
logical_xor = _logical("logical_xor", xp.logical_xor)


def _bitwise(name, ufunc, dunder, rdunder, idunder):
    """``aten.<name>.Tensor``/``.Scalar`` (no derivative: torch's are integral) and their in-place
    variants ``aten.<name>_.Tensor``/``.Scalar``; the public functions, the operators (``x & y``,
    ``2 & x``, ``x &= y``) and the in-place method, each a function of its own as in torch."""
    def kernel(self, other):
        a, b = promote_arrays(self, other)
        if a.dtype.kind == "f" or isinstance(b, float) or getattr(b, "dtype", None) is not None and b.dtype.kind == "f":
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'Float\'')
        try:
            return ufunc(a, b)
        except ValueError:
            raise _checks.broadcast_error(a.shape, xp.shape(b)) from None
    kernel.__name__ = kernel.__qualname__ = f"{name}_kernel"
    tensor_op = defop(f"{name}.Tensor(Tensor self, Tensor other) -> Tensor", kernel)
    scalar_op = defop(f"{name}.Scalar(Tensor self, Scalar other) -> Tensor", kernel)
    tensor_op_ = defop(f"{name}_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", inplace_of=tensor_op)
    scalar_op_ = defop(f"{name}_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)", inplace_of=scalar_op)

    def compute(input, other):
        return (tensor_op if isinstance(other, Tensor) else scalar_op)(input, other)

    def compute_(self, other):
        return (tensor_op_ if isinstance(other, Tensor) else scalar_op_)(self, other)
    for n in (name, dunder):
        setattr(Tensor, n, _on_the_seam(n, compute))
    # (``2 & x`` is seen as ``x.bitwise_and(2)``, as torch's binding hands its reflected operators)
    setattr(Tensor, rdunder, alias(getattr(Tensor, name), rdunder, Tensor))
    for n in (name + "_", idunder):
        setattr(Tensor, n, _on_the_seam(n, compute_))
    return getattr(Tensor, name)


bitwise_and = _bitwise("bitwise_and", xp.bitwise_and, "__and__", "__rand__", "__iand__")
bitwise_or = _bitwise("bitwise_or", xp.bitwise_or, "__or__", "__ror__", "__ior__")
bitwise_xor = _bitwise("bitwise_xor", xp.bitwise_xor, "__xor__", "__rxor__", "__ixor__")


@method()
@overridable
def equal(input, other):
    """True if both tensors have the same size and elements."""
    return input.shape == other.shape and bool((input._data == other._data).all())


@method()
@overridable
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{input.dtype._legacy} did not match {other.dtype._legacy}")
    return bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


@method()
@overridable
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    da, db = operands(input, other)
    try:
        return _wrap(xp.isclose(da, db, rtol=rtol, atol=atol, equal_nan=equal_nan))
    except ValueError:
        raise _checks.broadcast_error(da.shape, db.shape) from None


@method()
@overridable
def isreal(input):
    return _wrap(xp.isreal(input._data))


@method()
@overridable
def isposinf(input):
    return _wrap(xp.isposinf(input._data))


@method()
@overridable
def isneginf(input):
    return _wrap(xp.isneginf(input._data))


# ---------------------------------------------------------------------------------------------
# Selection and clamping
# ---------------------------------------------------------------------------------------------
def _where_kernel(condition, self, other):
    if condition.dtype != bool:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{_dtype._BY_NUMPY[condition.dtype]._legacy}")
    if isinstance(self, _ops._ARRAY_TYPES):
        a, b = promote_arrays(self, other)
    else:   # a formula's where(c, 0, x): the number takes x's type
        b, a = promote_arrays(other, self)
    try:
        return like_operands(xp.where(condition, a, b), condition, a, b)
    except ValueError:
        raise _checks.broadcast_error(condition.shape, xp.shape(a), xp.shape(b)) from None


where_op = defop("where.self(Tensor condition, Tensor self, Tensor other) -> Tensor", _where_kernel,
                 node="WhereBackward0",
                 condition=None,
                 self=lambda grad, condition: aten.where(condition, grad, 0),
                 other=lambda grad, condition: aten.where(condition, 0, grad))


@overridable
def where(condition, input=None, other=None):
    if (input is None) != (other is None):
        raise TypeError("where() received an invalid combination of arguments - expected (condition) or "
                        "(condition, input, other)")
    if input is None and other is None:
        from .indexing import nonzero
        return nonzero(condition, as_tuple=True)
    if not isinstance(input, Tensor):
        if not isinstance(other, Tensor):
            dt = result_dtype(input, other)
            input, other = as_tensor_arg(input), as_tensor_arg(other)
            input, other = input.to(dt), other.to(dt)
        else:
            input = as_tensor_arg(input, other)
    elif not isinstance(other, Tensor):
        other = as_tensor_arg(other, input)
    return where_op(condition, input, other)


@overridable
def _where_method(self, condition, other):
    """x.where(c, y): x where c, else y."""
    return where(condition, self, other)


_where_method.__name__, _where_method.__qualname__ = "where", "Tensor.where"
Tensor.where = _where_method


def clamp_backward(grad, self, min, max):
    """torch's clamp_backward: the gradient where min <= x <= max, else 0 (a select, so a NaN or inf
    gradient outside the range does not leak through)."""
    if min is not None and max is not None:
        return aten.where((self >= min) & (self <= max), grad, 0)
    if min is not None:
        return aten.where(self >= min, grad, 0)
    if max is not None:
        return aten.where(self <= max, grad, 0)
    return grad


def clamp_backward_min_max(grad, self, min, max, output_mask):
    """torch's clamp_backward_min_max: x's gradient inside [min, max]; min's where x < min (and
    min < max); max's where x > max, or everywhere max < min (the result is then max)."""
    gself = gmin = gmax = None
    if max is not None and min is not None:
        if output_mask[0]:
            gself = aten.where((self >= min) & (self <= max), grad, 0)
        if output_mask[1]:
            gmin = aten.where((self < min) & (min < max), grad, 0)
        if output_mask[2]:
            gmax = aten.where((self > max) | (max < min), grad, 0)
    elif min is not None:
        if output_mask[0]:
            gself = aten.where(self >= min, grad, 0)
        if output_mask[1]:
            gmin = aten.where(self < min, grad, 0)
    elif max is not None:
        if output_mask[0]:
            gself = aten.where(self <= max, grad, 0)
        if output_mask[2]:
            gmax = aten.where(self > max, grad, 0)
    return gself, gmin, gmax


def _clamp_refuses(d, min, max):
    if d.dtype.kind == "c" or ((type(min) is complex or type(max) is complex) and d.dtype.kind != "f"):
        raise NotImplementedError("clamp is not supported for complex types")
    if type(min) is complex or type(max) is complex:
        raise RuntimeError("value cannot be converted to type double without overflow")
    if all(v is None or isinstance(v, bool) for v in (min, max)):  # the result would be bool
        kernel = "clamp_scalar_cpu" if min is not None and max is not None else \
            ("clamp_min_scalar_cpu" if max is None else "clamp_max_scalar_cpu")
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


def _clamp_kernel(self, min=None, max=None):
    """clamp by numbers."""
    d = self
    if d.dtype.kind in "bc" or type(min) is complex or type(max) is complex:
        _clamp_refuses(d, min, max)
    if isinstance(min, float) or isinstance(max, float):
        if d.dtype.kind not in "fc" and not _dtype.is_bfloat16_numpy(d.dtype):
            d = d.astype(_dtype.get_default_dtype().numpy_dtype)
    elif d.dtype == bool and (type(min) is int or type(max) is int):
        d = d.astype(xp.int64)  # bool clamped by an int: int64, by torch's promotion
    elif d.dtype.kind in "iu":  # an int bound converts to the tensor's type, wrapping as torch's does
        info = xp.iinfo(d.dtype)
        if min is not None and not info.min <= min <= info.max:
            min = xp.array(min).astype(d.dtype)[()]
        if max is not None and not info.min <= max <= info.max:
            max = xp.array(max).astype(d.dtype)[()]
    if min is not None and max is not None and min > max:
        return xp.full_like(d, max)
    # (NumPy's clip is this, at several times the cost; NaN propagates, as in torch)
    r = d if min is None else _clamp_side(xp.maximum, d, min)
    r = r if max is None else _clamp_side(xp.minimum, r, max)
    return like_input(r.astype(d.dtype, copy=False), d)   # (NumPy 1.x: a 0-d float32 clipped by floats is float64)


def _clamp_tensor_kernel(self, min=None, max=None):
    """clamp by tensors (either may be None)."""
    d = self
    try:
        if min is not None:
            d = xp.maximum(d, min)
        if max is not None:
            d = xp.minimum(d, max)
    except ValueError:
        raise _checks.broadcast_error(*(xp.shape(t) for t in (self, min, max) if t is not None)) from None
    dims, zeros = [], []
    for t in (self, min, max):
        if t is not None:
            (dims if t.ndim else zeros).append(_DTYPE_OF[t.dtype])
    d = d.astype(_dtype.result_type_of(dims, zeros, ()).numpy_dtype, copy=False)
    return like_operands(d, self, *(t for t in (min, max) if t is not None))   # (x.t().clamp(lo, hi): as x.t())


def _clamp_one_side_kernel(ufunc):
    def kernel(self, bound):
        a, b = promote_arrays(self, bound)
        try:
            return like_operands(ufunc(a, b), a, b)
        except ValueError:
            raise _shape_error(a, b) from None
    return kernel


clamp_op = defop("clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", _clamp_kernel,
                 node="ClampBackward1", self=clamp_backward)
clamp_tensor_op = defop("clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",
                        _clamp_tensor_kernel, node="ClampBackward0",
                        joint={("self", "min", "max"): clamp_backward_min_max})
clamp_min_op = defop("clamp_min(Tensor self, Scalar min) -> Tensor",
                     lambda self, min: _clamp_kernel(self, min, None),
                     node="ClampMinBackward0", self=lambda grad, self, min: aten.where(self >= min, grad, 0))
clamp_max_op = defop("clamp_max(Tensor self, Scalar max) -> Tensor",
                     lambda self, max: _clamp_kernel(self, None, max),
                     node="ClampMaxBackward0", self=lambda grad, self, max: aten.where(self <= max, grad, 0))
clamp_min_tensor_op = defop("clamp_min.Tensor(Tensor self, Tensor min) -> Tensor", _clamp_one_side_kernel(xp.maximum),
                            node="ClampMinBackward1",
                            self=lambda grad, self, min: aten.where(self >= min, grad, 0),
                            min=lambda grad, self, min: aten.where(self < min, grad, 0))
clamp_max_tensor_op = defop("clamp_max.Tensor(Tensor self, Tensor max) -> Tensor", _clamp_one_side_kernel(xp.minimum),
                            node="ClampMaxBackward1",
                            self=lambda grad, self, max: aten.where(self <= max, grad, 0),
                            max=lambda grad, self, max: aten.where(self > max, grad, 0))


def _bound_kind(bound):
    if bound is None:
        return None
    if isinstance(bound, Tensor):
        return Tensor
    if type(bound) in (int, float) or isinstance(bound, numbers.Number):
        return numbers.Number
    return str   # (anything else: refused)


def _clamp_overload(min, max):
    """Which of torch's clamp overloads the bounds select: Tensor, Number, or None (neither: refused)."""
    kmin, kmax = _bound_kind(min), _bound_kind(max)
    kind = kmin or kmax
    if kind is str or (kmin is not None and kmax is not None and kmin is not kmax):
        return None
    return kind


@method("clamp")
@overridable
def clamp(input, min=None, max=None):
    if _clamp_overload_checked(min, max) is Tensor:
        return clamp_tensor_op(input, min, max)
    return clamp_op(input, min, max)


def _clamp_overload_checked(min, max):
    """clamp's overload for these bounds (``Tensor``, or a number's), refusing what torch refuses."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    overload = _clamp_overload(min, max)
    if overload is None:
        # torch's overloads: (Tensor min, Tensor max) or (Number min, Number max), not a mix, not a str
        raise TypeError(f"clamp() received an invalid combination of arguments - got (min={type(min).__name__}, "
                        f"max={type(max).__name__}), but expected (Tensor min, Tensor max) or (Number min, Number max)")
    return overload


@method("clip")
@overridable
def clip(input, min=None, max=None):
    return clamp(input, min, max)


@method()
@overridable
def clamp_min(input, min):
    return clamp_min_tensor_op(input, min) if isinstance(min, Tensor) else clamp_min_op(input, min)


@method()
@overridable
def clamp_max(input, max):
    return clamp_max_tensor_op(input, max) if isinstance(max, Tensor) else clamp_max_op(input, max)


# ---- lerp, masked_fill, nan_to_num ---------------------------------------------------------------
def _check_lerp_dtypes(self, end, weight):
    for name, t in (("end", end), ("weight", weight)):
        if isinstance(t, _ops._ARRAY_TYPES) and t.dtype != self.dtype:  # torch does not promote here
            raise RuntimeError(f"expected dtype {_dtype.cpp_name(_DTYPE_OF[self.dtype])} for `{name}` but got dtype "
                               f"{_dtype.cpp_name(_DTYPE_OF[t.dtype])}")


def _lerp_kernel(self, end, weight):
    _check_lerp_dtypes(self, end, weight)
    try:
        return like_operands(self + weight * (end - self), self, end)
    except ValueError:
        raise _checks.broadcast_error(*(xp.shape(t) for t in (self, end, weight))) from None


lerp_op = defop("lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor", _lerp_kernel,
                node="LerpBackward0",
                self=lambda grad, weight: grad * conj(1 - weight),
                end=lambda grad, weight: grad * conj(weight))
lerp_tensor_op = defop("lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor", _lerp_kernel,
                       node="LerpBackward1",
                       self=lambda grad, weight: grad * conj(1 - weight),
                       end=lambda grad, weight: grad * conj(weight),
                       weight=lambda grad, self, end: grad * conj(end - self))


@method()
@overridable
def lerp(input, end, weight):
    return lerp_tensor_op(input, end, weight) if isinstance(weight, Tensor) else lerp_op(input, end, weight)


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


def _masked_fill_kernel(self, mask, value):
    if mask.dtype != bool:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_dtype.cpp_name(_DTYPE_OF[mask.dtype])}")
    if isinstance(value, _ops._ARRAY_TYPES):
        if value.ndim != 0:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value.ndim} dimension(s).")
        value = value.astype(self.dtype)
    elif self.dtype.kind in "iuf":
        value = _fit(value, self.dtype)
    d = self
    if mask.shape != self.shape:
        try:
            out_shape = xp.broadcast_shapes(self.shape, mask.shape)
        except ValueError:
            raise _checks.broadcast_error(mask.shape, self.shape) from None
        if out_shape != self.shape:
            d = xp.broadcast_to(self, out_shape)
    return row_major(xp.where(mask, _asarray_like(d, value, d.dtype), d))   # (torch: clone, then fill)


masked_fill_op = defop("masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor", _masked_fill_kernel,
                       node="MaskedFillBackward0",
                       mask=None,
                       self=lambda grad, mask: aten.masked_fill(grad, mask, 0))
masked_fill_tensor_op = defop("masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor",
                              _masked_fill_kernel, node="MaskedFillBackward1",
                              mask=None,
                              self=lambda grad, mask: aten.masked_fill(grad, mask, 0),
                              value=lambda grad, mask: aten.sum(aten.where(mask, grad, 0)))  # torch's masked_fill_backward


@method()
@overridable
def masked_fill(input, mask, value):
    return masked_fill_tensor_op(input, mask, value) if isinstance(value, Tensor) else masked_fill_op(input, mask, value)


def _nan_to_num_kernel(self, nan=None, posinf=None, neginf=None):
    # (in a copy laid out as torch lays out the result: NumPy's own copy of an expanded array is not)
    return xp.nan_to_num(copy_preserving_layout(self), copy=False, nan=0.0 if nan is None else nan, posinf=posinf,
                         neginf=neginf)


nan_to_num_op = defop("nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor",
                      _nan_to_num_kernel, node="NanToNumBackward0",
                      self=lambda grad, self: grad * aten.isfinite(self))


@method()
@overridable
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    return nan_to_num_op(input, nan, posinf, neginf)



# ---------------------------------------------------------------------------------------------
# In-place arithmetic: NumPy's out= when autograd is not involved (the optimizer's hot path)
# ---------------------------------------------------------------------------------------------
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


def _into_kernel(update, functional_kernel, alpha=False):
    """The kernel of add_/sub_ (with ``alpha``), mul_/div_ -- the optimizers' hot path: NumPy's
    in-place operator (``operator.iadd``...: the result written into self's array, no new array,
    cast as torch casts, "same_kind"). Whatever it refuses (a result type that does not cast to
    self's, a shape that does not broadcast to it, bool's own rules) is computed again by the
    out-of-place kernel, whose result ``write_into`` refuses in torch's words; NumPy raises before
    it writes."""
    if alpha:
        def kernel(self, other, *, alpha=1):
            o = other if isinstance(other, _ops._ARRAY_TYPES) else _scalar_in(self.dtype, other)
            try:
                if alpha != 1:
                    o = o * _scalar_in(xp.result_type(o), alpha)
                return update(self, o)
            except (TypeError, ValueError):
                write_into(self, functional_kernel(self, other, alpha=alpha))
                return self
    else:
        def kernel(self, other):
            try:
                return update(self, other if isinstance(other, _ops._ARRAY_TYPES) else _scalar_in(self.dtype, other))
            except (TypeError, ValueError):
                write_into(self, functional_kernel(self, other))
                return self
    kernel.__name__ = kernel.__qualname__ = f"{update.__name__}_kernel"
    return kernel


add__op = defop("add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
                _into_kernel(operator.iadd, _add_kernel, alpha=True), inplace_of=add_op)
sub__op = defop("sub_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
                _into_kernel(operator.isub, _sub_kernel, alpha=True), inplace_of=sub_op)
mul__op = defop("mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
                _into_kernel(operator.imul, _mul_kernel), inplace_of=mul_op)
div__op = defop("div_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
                _into_kernel(operator.itruediv, _true_divide_kernel), inplace_of=div_op)
div__mode_op = defop("div_.Tensor_mode(Tensor(a!) self, Tensor other, *, str? rounding_mode) -> Tensor(a!)",
                     inplace_of=div_mode_op)


def _inplace_add(name, op_):
    def method_(self, other, *, alpha=1):
        if seam.on:
            given = type(alpha) is bool or alpha != 1   # (alpha=True equals 1 and is refused below)
            return seam.torch_function(method_, (self, other), {"alpha": alpha} if given else {})
        if type(alpha) is bool:     # (True == 1: checked first)
            _check_bool_alpha(self, other, alpha)
        # (op_._call: the op's generated call, bound -- see _ops_codegen.install_call)
        return op_._call(self, other) if alpha == 1 else op_._call(self, other, alpha=alpha)
    method_.__name__, method_.__qualname__ = name, "Tensor." + name
    method_.__doc__ = f"In place: self {'+' if name == 'add_' else '-'}= alpha * other (aten.{name}.Tensor)."
    return method_


@overridable
def mul_(self, other):
    """In place: self *= other (aten.mul_.Tensor)."""
    return mul__op._call(self, other)


method("add_", "__iadd__")(_inplace_add("add_", add__op))
method("sub_", "__isub__", "subtract_")(_inplace_add("sub_", sub__op))
method("mul_", "__imul__", "multiply_")(mul_)


@overridable
def div_(self, other, *, rounding_mode=None):
    """In place: self /= other (aten.div_.Tensor; with a rounding mode aten.div_.Tensor_mode)."""
    if rounding_mode is not None:
        return div__mode_op(self, other, rounding_mode=rounding_mode)
    return div__op._call(self, other)


method("div_", "__itruediv__", "divide_", "true_divide_")(div_)


def _in_place(schema, functional, **rules):
    """The in-place variant of ``functional`` under torch's schema ``schema`` (``aten.pow_.Scalar``):
    it records the same node, its kernel writes the out-of-place result into ``self``."""
    return defop(schema, inplace_of=functional, **rules)


pow__op = _in_place("pow_.Tensor(Tensor(a!) self, Tensor exponent) -> Tensor(a!)", pow_op)
pow__scalar_op = _in_place("pow_.Scalar(Tensor(a!) self, Scalar exponent) -> Tensor(a!)", pow_scalar_op)
floor_divide__op = _in_place("floor_divide_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", floor_divide_op)
remainder__op = _in_place("remainder_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", remainder_op)
remainder__scalar_op = _in_place("remainder_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)", remainder_scalar_op)
fmod__op = _in_place("fmod_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", fmod_op)
fmod__scalar_op = _in_place("fmod_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)", fmod_scalar_op)
atan2__op = _in_place("atan2_(Tensor(a!) self, Tensor other) -> Tensor(a!)", atan2_op)
def _clamp_by_numbers_in_place(functional):
    """The kernel of clamp_/clamp_min_/clamp_max_ by numbers: clamp's meta function checks the cast
    itself and names the target's C++ type ("... desired output type long int"), where the other
    in-place ops (write_into's check) say "Long"."""
    def kernel(self, *bounds):
        r = functional.kernel(self, *bounds)
        if r.dtype != self.dtype and not can_cast(r.dtype, self.dtype):
            raise RuntimeError(f"result type {_DTYPE_OF[r.dtype]._legacy} can't be cast to the desired output "
                               f"type {_dtype.cpp_name(_DTYPE_OF[self.dtype])}")
        write_into(self, r)
        return self
    kernel.__name__ = kernel.__qualname__ = f"{functional.__name__}__kernel"
    return kernel


clamp__op = _in_place("clamp_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> Tensor(a!)", clamp_op,
                      kernel=_clamp_by_numbers_in_place(clamp_op))
clamp__tensor_op = _in_place("clamp_.Tensor(Tensor(a!) self, Tensor? min=None, Tensor? max=None) -> Tensor(a!)",
                             clamp_tensor_op)
clamp_min__op = _in_place("clamp_min_(Tensor(a!) self, Scalar min) -> Tensor(a!)", clamp_min_op,
                          kernel=_clamp_by_numbers_in_place(clamp_min_op))
clamp_min__tensor_op = _in_place("clamp_min_.Tensor(Tensor(a!) self, Tensor min) -> Tensor(a!)", clamp_min_tensor_op)
clamp_max__op = _in_place("clamp_max_(Tensor(a!) self, Scalar max) -> Tensor(a!)", clamp_max_op,
                          kernel=_clamp_by_numbers_in_place(clamp_max_op))
clamp_max__tensor_op = _in_place("clamp_max_.Tensor(Tensor(a!) self, Tensor max) -> Tensor(a!)", clamp_max_tensor_op)


def _lerp_in_place(functional):
    """The kernel of lerp_: torch's lerp meta function checks the dtypes before the TensorIterator it
    builds refuses an expanded self (fuzz seed 796201843299: a float64 ``end`` into an expanded float32
    self is a dtype error, not an overlap one), so the overlap check comes here, after them."""
    def kernel(self, end, weight):
        _check_lerp_dtypes(self, end, weight)
        _check_no_overlap(self)
        write_into(self, functional.kernel(self, end, weight))
        return self
    kernel.__name__ = kernel.__qualname__ = f"{functional.__name__}__kernel"
    return kernel


lerp__op = _in_place("lerp_.Scalar(Tensor(a!) self, Tensor end, Scalar weight) -> Tensor(a!)", lerp_op,
                     kernel=_lerp_in_place(lerp_op), may_overlap=True)
lerp__tensor_op = _in_place("lerp_.Tensor(Tensor(a!) self, Tensor end, Tensor weight) -> Tensor(a!)", lerp_tensor_op,
                            kernel=_lerp_in_place(lerp_tensor_op), may_overlap=True)
nan_to_num__op = _in_place("nan_to_num_(Tensor(a!) self, float? nan=None, float? posinf=None, float? neginf=None) "
                           "-> Tensor(a!)", nan_to_num_op)
# masked_fill_ writes one value wherever the mask is set: into an expanded tensor too, and its value
# is read before the write (it may be part of self), as torch's kernel does
masked_fill__op = _in_place("masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)",
                            masked_fill_op, may_overlap=True, refuse_aliases=None)
masked_fill__tensor_op = _in_place("masked_fill_.Tensor(Tensor(a!) self, Tensor mask, Tensor value) -> Tensor(a!)",
                                   masked_fill_tensor_op, may_overlap=True, refuse_aliases=None)


def _by_operand(name, tensor_op, scalar_op, doc):
    """``Tensor.<name>(x)``: the in-place overload for a Tensor operand or for a number."""
    @overridable
    def method_(self, other):
        return tensor_op(self, other) if isinstance(other, Tensor) else scalar_op(self, other)
    method_.__name__, method_.__qualname__, method_.__doc__ = name, "Tensor." + name, doc
    return method_


method("pow_", "__ipow__")(_by_operand("pow_", pow__op, pow__scalar_op, "In place: self **= exponent."))
method("remainder_", "__imod__")(_by_operand("remainder_", remainder__op, remainder__scalar_op,
                                             "In place: self %= other (Python's sign rule)."))
Tensor.fmod_ = _by_operand("fmod_", fmod__op, fmod__scalar_op, "In place: C's fmod (the dividend's sign).")
Tensor.clamp_min_ = _by_operand("clamp_min_", clamp_min__tensor_op, clamp_min__op, "In place: max(self, min).")
Tensor.clamp_max_ = _by_operand("clamp_max_", clamp_max__tensor_op, clamp_max__op, "In place: min(self, max).")


@overridable
def floor_divide_(self, other):
    """In place: self //= other (aten.floor_divide_.Tensor)."""
    return floor_divide__op(self, other)


@overridable
def atan2_(self, other):
    """In place: self = atan2(self, other) (aten.atan2_)."""
    return atan2__op(self, as_tensor_arg(other, self))


@overridable
def clamp_(self, min=None, max=None):
    """In place: self = min(max(self, min), max) (aten.clamp_; with tensor bounds aten.clamp_.Tensor)."""
    op = clamp__tensor_op if _clamp_overload_checked(min, max) is Tensor else clamp__op
    return op(self, min, max)


@overridable
def lerp_(self, end, weight):
    """In place: self += weight * (end - self) (aten.lerp_.Scalar / aten.lerp_.Tensor)."""
    return lerp__tensor_op(self, end, weight) if isinstance(weight, Tensor) else lerp__op(self, end, weight)


@overridable
def nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
    """In place: NaN and infinities replaced by numbers (aten.nan_to_num_)."""
    return nan_to_num__op(self, nan, posinf, neginf)


@overridable
def square_(self):
    """In place: self = self ** 2 (aten.pow_.Scalar, as torch computes it)."""
    return pow__scalar_op(self, 2)


method("floor_divide_", "__ifloordiv__")(floor_divide_)
Tensor.atan2_, Tensor.clamp_, Tensor.clip_, Tensor.lerp_ = atan2_, clamp_, clamp_, lerp_
Tensor.arctan2_ = atan2_      # (as in torch, the same op: aten.atan2_)
Tensor.nan_to_num_, Tensor.square_ = nan_to_num_, square_


def _broadcast_shape(a, b):
    try:
        return xp.broadcast_shapes(a, b)
    except ValueError:
        return None


@overridable
def masked_fill_(self, mask, value):
    if mask._data.shape != self._data.shape and _broadcast_shape(mask._data.shape, self._data.shape) != self._data.shape:
        raise _checks.broadcast_error(self._data.shape, mask._data.shape)
    if isinstance(value, Tensor):
        return masked_fill__tensor_op(self, mask, value)
    return masked_fill__op(self, mask, value)


Tensor.masked_fill_ = masked_fill_


# ---------------------------------------------------------------------------------------------
# Filling and copying in place: zero_, fill_, copy_ (the derivative w.r.t. the old values is zero)
# ---------------------------------------------------------------------------------------------
# These are torch's in-place ops themselves, with derivatives of their own (``defop(..., inplace=True)``):
# the kernels write into the array they are given, and the ops are called, checked and recorded as any
# in-place variant (the optimizers' zero_grad and copies take the generated call's common path).
def _zero_kernel(self):
    self[...] = 0
    return self


def _fill_kernel(self, value):
    self[...] = value
    return self


def _copy_kernel(self, src, non_blocking=False):
    if type(src) is not type(self):
        from .._array import to_device, device_type_of
        src = to_device(src, device_type_of(self))
    if src.shape != self.shape and _broadcast_shape(src.shape, self.shape) != self.shape:
        shape = _broadcast_shape(src.shape, self.shape)
        if shape is None:
            raise _shape_error(self, src)
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape {list(shape)}")
    if src.dtype.kind == "c" and self.dtype.kind != "c":
        src = src.real  # torch drops the imaginary part (with a warning)
    self[...] = src     # any dtype converts, as in torch (float -> int truncates)
    return self


# (torch's memory rules: one value written everywhere may go into elements that share memory; fill_'s
# value tensor is read before the write, so it may be part of self)
zero__op = defop("zero_(Tensor(a!) self) -> Tensor(a!)", _zero_kernel, inplace=True, may_overlap=True,
                 node="ZeroBackward0", self=_zeros)
fill__op = defop("fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)", _fill_kernel, inplace=True,
                 may_overlap=True, node="FillBackward2", self=_zeros)
fill__tensor_op = defop("fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)", _fill_kernel, inplace=True,
                        refuse_aliases=None, node="FillBackward3", self=_zeros, value=lambda grad: aten.sum(grad))
copy__op = defop("copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)", _copy_kernel,
                 inplace=True, node="CopyBackwards", self=_zeros, src=lambda grad: grad)


@method()
@overridable
def zero_(self):
    return zero__op._call(self)


@method()
@overridable
def fill_(self, value):
    is_t = isinstance(value, Tensor)
    if is_t and value._data.ndim != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value._data.ndim} dimensions.")
    if not is_t and (self._data.dtype.kind in "iu" or type(value) is complex):
        value = _fit(value, self._data.dtype)
    return (fill__tensor_op if is_t else fill__op)._call(self, value)



@method()
@overridable(defaults_by_keyword=True)
def fill_diagonal_(self, fill_value, wrap=False):
    """Fill the main diagonal of ``self`` (2-D, or n-D with all dims equal) with ``fill_value``; with
    ``wrap``, a tall matrix's diagonal restarts every ``width + 1`` rows. As torch composes it: an
    ``as_strided`` view of the diagonal (its stride the sum of self's), filled (``fill_``: a non-leaf
    records CopySlices on its base); with ``wrap``, a second one from row ``width + 1`` on."""
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    height, width = self.shape[0], self.shape[1]
    if self.ndim > 2 and any(size != height for size in self.shape[1:]):
        raise RuntimeError("all dimensions of input must be of equal length")
    stride, offset = sum(self.stride()), self.storage_offset()
    size = min(height, width)
    self.as_strided((size,), (stride,), offset).fill_(fill_value)
    if wrap and self.ndim == 2 and height > width + 1:
        step = width + 1
        wrapped = (self.numel() + step - 1) // step - size
        self.as_strided((wrapped,), (stride,), offset + self.stride(0) * step).fill_(fill_value)
    return self


# ---- Python callables applied element by element (CPU only, no autograd, as torch's) -------------------------
def _python_to_element(dtype):
    """The conversion torch makes of what a callable returned into an element of ``dtype``."""
    kind = dtype.kind
    if kind == "b":
        return bool
    if kind == "c":
        return complex
    if kind in "iu":
        def to_integer(value):
            n = int(value) if isinstance(value, (int, float)) else operator.index(value)
            if not -2 ** 63 <= n < 2 ** 63:
                raise ValueError("Overflow when unpacking long long")
            return xp.array(n).astype(dtype)[()]      # (wraps into a narrower type, as a C cast)
        return to_integer

    def to_float(value):
        if not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
            raise TypeError(f"must be real number, not {type(value).__name__}")
        return float(value)
    return to_float


def _map_elements(name, self, fn, others, other_names):
    """``self[i] = fn(self[i], *(o[i] for o in others))`` for every index, in order (an element
    shared by several indices, in an expanded tensor, is read and written once per index); the
    others are broadcast to ``self``'s shape and must be of its dtype."""
    for t in (self,) + others:
        if t.requires_grad:
            raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() instead.")
    for arg_name, other in zip(other_names, others):
        if other.dtype is not self.dtype:
            raise TypeError(f"{name}: expected {self.type()} for {arg_name} (got {other.type()})")
    from .shape import _expand_kernel
    if self.is_meta:
        return self     # (no values to map: torch calls nothing)
    d = self._data
    arrays = [_expand_kernel(o._data, d.shape) for o in others]
    convert = _python_to_element(d.dtype)
    for index in xp.ndindex(d.shape):
        d[index] = convert(fn(d[index].item(), *(a[index].item() for a in arrays)))
    return self


@method()
@overridable
def apply_(self, callable):
    """Replace each element ``x`` of ``self`` by ``callable(x)`` (slow; CPU only; not differentiable)."""
    return _map_elements("apply_", self, callable, (), ())


@method()
@overridable
def map_(self, tensor, callable):
    """``self[i] = callable(self[i], tensor[i])``, ``tensor`` broadcast to ``self`` (CPU only)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"map_(): argument 'other' (position 1) must be Tensor, not {type(tensor).__name__}")
    return _map_elements("map_", self, callable, (tensor,), ("'other'",))


@method()
@overridable
def map2_(self, x, y, callable):
    """``self[i] = callable(self[i], x[i], y[i])``, ``x`` and ``y`` broadcast to ``self`` (CPU only)."""
    for position, (arg_name, t) in enumerate((("x", x), ("y", y)), 1):
        if not isinstance(t, Tensor):
            raise TypeError(f"map2_(): argument '{arg_name}' (position {position}) must be Tensor, not {type(t).__name__}")
    return _map_elements("map2_", self, callable, (x, y), ("argument 'x'", "argument 'y'"))

def _on_device_of(dst, src):
    """copy_'s source on its destination's device: copy_ is torch's one op between devices (a CPU
    tensor into a CUDA or meta one). Without a gradient to route back the array is moved; with one,
    ``.to`` records the transfer, whose backward returns the gradient to the source's device."""
    device = dst.device
    if src._requires_grad:
        return src.to(device)
    return _wrap(to_device(src._data, device.type))


@method()
@overridable
def copy_(self, src, non_blocking=False):
    if not isinstance(src, Tensor):
        if not isinstance(src, numbers.Number):
            raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not {type(src).__name__}")
        src = _wrap(xp.asarray(src))    # (torch copies a number as a 0-d tensor: x.copy_(2))
    if type(src._data) is not type(self._data) and src._data.ndim:
        src = _on_device_of(self, src)
    if 0 in self._data.strides and same_data(self._data, src._data):
        return _copy_onto_itself(self, src)
    return copy__op._call(self, src, non_blocking)


def _copy_onto_itself(self, src):
    """torch's copy_ onto the very same elements writes nothing, so it makes no memory checks (an
    expanded tensor copied onto itself is no error); the version still moves on, and autograd
    records CopyBackwards."""
    if _check_inplace(self, (src,), may_overlap=True, refuse_aliases=None):
        return inplace_recorded(self, "copy_", copy__op, src)
    bump_version(self, "copy_")
    return self


# ---------------------------------------------------------------------------------------------
# addcmul, addcdiv: input + value * t1 * t2 (or / t2) -- the optimizers' update steps
# ---------------------------------------------------------------------------------------------
def _addc_kernel(combine):
    def kernel(self, tensor1, tensor2, *, value=1):
        try:
            t = combine(*promote_arrays(tensor1, tensor2))
        except ValueError:
            raise _checks.broadcast_error(self.shape, tensor1.shape, tensor2.shape) from None
        if value != 1:
            t = t * value
        a, t = promote_arrays(self, t)
        try:
            return a + t
        except ValueError:
            raise _shape_error(a, t) from None
    return kernel


addcmul_op = defop("addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",
                   _addc_kernel(xp.multiply), node="AddcmulBackward0",
                   self=lambda grad: grad,
                   tensor1=lambda grad, tensor2, value: grad * conj(tensor2 * value),
                   tensor2=lambda grad, tensor1, value: grad * conj(tensor1 * value))
addcdiv_op = defop("addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",
                   _addc_kernel(_true_divide_arrays), node="AddcdivBackward0",
                   self=lambda grad: grad,
                   tensor1=lambda grad, tensor2, value: grad * conj(value / tensor2),
                   tensor2=lambda grad, tensor1, tensor2, value: -grad * conj(value * tensor1 / (tensor2 * tensor2)))


@method()
@overridable
def addcmul(input, tensor1, tensor2, *, value=1):
    return addcmul_op(input, tensor1, tensor2, value=value)


@method()
@overridable
def addcdiv(input, tensor1, tensor2, *, value=1):
    return addcdiv_op(input, tensor1, tensor2, value=value)


def _addc_into_kernel(ufunc):
    """The kernel of addcmul_/addcdiv_ (the optimizers' update steps): into self's array."""
    def kernel(self, tensor1, tensor2, *, value=1):
        try:
            t = ufunc(tensor1, tensor2)
        except ValueError:
            raise _checks.broadcast_error(tensor1.shape, tensor2.shape) from None
        try:
            if value != 1:
                t *= value
            self += t
        except (TypeError, ValueError):
            write_into(self, xp.add(*promote_arrays(self, t)))   # (torch's refusal of the cast or the shape)
        return self
    kernel.__name__ = kernel.__qualname__ = f"addc{ufunc.__name__[:3]}_into_kernel"
    return kernel


addcmul__op = defop("addcmul_(Tensor(a!) self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor(a!)",
                    _addc_into_kernel(xp.multiply), inplace_of=addcmul_op)
addcdiv__op = defop("addcdiv_(Tensor(a!) self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor(a!)",
                    _addc_into_kernel(_true_divide_arrays), inplace_of=addcdiv_op)


def _addc_(name, op_):
    @overridable
    def method_(self, tensor1, tensor2, *, value=1):
        # (op_._call: the op's generated call, bound -- see _ops_codegen.install_call)
        return op_._call(self, tensor1, tensor2) if value == 1 else op_._call(self, tensor1, tensor2, value=value)
    method_.__name__, method_.__qualname__ = name, "Tensor." + name
    method_.__doc__ = f"In place: self += value * tensor1 {'*' if name == 'addcmul_' else '/'} tensor2 (aten.{name})."
    return method_


Tensor.addcmul_ = _addc_("addcmul_", addcmul__op)
Tensor.addcdiv_ = _addc_("addcdiv_", addcdiv__op)
