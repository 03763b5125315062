"""Element-wise ops beyond ``pointwise.py``'s core: angles and complex numbers built from parts, powers
of two, number theory, step functions, floating-point neighbours, and torch's alias names.

=================  ==========================================  =====================================
op                 value                                       derivative (derivatives.yaml)
=================  ==========================================  =====================================
deg2rad, rad2deg   x * pi / 180, x * 180 / pi                  the same constant
angle              arg(z); for real x: pi where x < 0, else 0  complex: grad * z / |z|^2 * i (0 at 0);
                   (nan stays nan)                             real: 0
polar(abs, angle)  abs * (cos(angle) + i sin(angle))           Re(conj(grad) sgn(result)),
                                                               Re(conj(grad) * i result)
complex(re, im)    re + i im                                   Re(grad), Im(grad)
ldexp(x, e)        x * 2^e                                     grad 2^e;  grad x 2^e ln 2
frexp(x)           (mantissa in [0.5, 1), int32 exponent)      grad / 2^exponent (to x)
heaviside(x, v)    0 for x < 0, v at 0, 1 for x > 0            none: recorded as ``NotImplemented``
nextafter(x, y)    the float after x towards y                 not implemented (torch's words)
gcd, lcm           integers only                               (integers have none)
=================  ==========================================  =====================================

Aliases torch keeps at its top level (and as Tensor methods): ``divide``, ``multiply``, ``subtract``,
``true_divide``, ``arccosh``, ``arcsinh``, ``arctanh`` (and their in-place ``_`` forms), ``positive``.

``out=``: the top level gives it to the functions named in ``_prims_common.wrappers.OUT_RULES`` (torch's
dtype rules); ``polar``, ``complex`` and ``frexp`` take it here.
"""
import math

from .. import _dtype, _checks
from .._tensor import Tensor
from .._array import xp, like_operands, like_input, empty_like as _empty_like
from .._ops import defop, aten
from .._seam import overridable
from ._op import method, promote_arrays
from ._derivatives import not_implemented
from .complex import view_as_real_op
from . import pointwise as _pw

__all__ = ["divide", "multiply", "subtract", "true_divide", "arccosh", "arccosh_", "arcsinh", "arcsinh_", "fix_",
           "arctanh", "arctanh_", "positive", "deg2rad", "deg2rad_", "rad2deg", "rad2deg_", "angle", "polar",
           "complex", "ldexp", "ldexp_", "frexp", "heaviside", "nextafter", "gcd", "gcd_", "lcm", "lcm_",
           "is_nonzero", "is_same_size", "is_signed"]


# ---- aliases -------------------------------------------------------------------------------------------------
def _alias(name, target):
    """torch's alias ``name`` of ``target``: the same function (and node), under the alias's name."""
    @overridable
    def alias(*args, **kwargs):
        return target(*args, **kwargs)
    alias.__name__ = alias.__qualname__ = name
    alias.__doc__ = f"torch.{name}: alias of torch.{target.__name__}."
    return alias


divide = _alias("divide", _pw.div)
multiply = _alias("multiply", _pw.mul)
subtract = _alias("subtract", _pw.sub)
arccosh, arccosh_ = _alias("arccosh", _pw.acosh), _alias("arccosh_", _pw.acosh_)
arcsinh, arcsinh_ = _alias("arcsinh", _pw.asinh), _alias("arcsinh_", _pw.asinh_)
arctanh, arctanh_ = _alias("arctanh", _pw.atanh), _alias("arctanh_", _pw.atanh_)
fix_ = _alias("fix_", _pw.trunc_)
for _fn in (arccosh, arccosh_, arcsinh, arcsinh_, arctanh, arctanh_, fix_):
    setattr(Tensor, _fn.__name__, _fn)
Tensor.fix = _pw.fix
Tensor.float_power = _pw.float_power


@method()
@overridable
def float_power_(self, exponent):
    """``Tensor.float_power_``: in place, for a float64 (or complex128) tensor only, as torch."""
    result = _pw.float_power(self, exponent)
    if self.dtype is not result.dtype:
        raise RuntimeError(f"the base given to float_power_ has dtype {self.dtype._legacy} but the operation's "
                           f"result requires dtype {result.dtype._legacy}")
    return self.copy_(result)


@method()
@overridable
def is_neg(self):
    """``Tensor.is_neg``: whether a lazy negation bit is set -- never, in glasstorch (no lazy negation)."""
    return False


@method()
@overridable
def true_divide(input, other):
    """torch.true_divide: ``div`` without a rounding mode."""
    return _pw.div(input, other)


@method()
@overridable
def positive(input):
    """torch.positive: ``input`` itself (refused for bool, as ``+x`` is)."""
    if input.dtype is _dtype.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


# ---- helpers for the kernels ----------------------------------------------------------------------------------
def _floated(a):
    """Integers and bools in the default float type, as torch's floating ops compute them."""
    return a if a.dtype.kind in "fc" else a.astype(_dtype.get_default_dtype().numpy_dtype)


def _is_complex(x):
    kind = getattr(x.dtype, "kind", None)
    return kind == "c" if kind is not None else x.dtype.is_complex


def _real(z):
    return view_as_real_op(z)[..., 0]


def _imag(z):
    return view_as_real_op(z)[..., 1]


# ---- degrees and radians --------------------------------------------------------------------------------------
def _scale_op(name, node, factor):
    def kernel(self):
        if self.dtype.kind == "c":
            raise RuntimeError(f"{name} is not supported for complex tensors.")
        a = _floated(self)
        return like_input(xp.multiply(a, a.dtype.type(factor)), a)
    kernel.__name__ = f"{name}_kernel"
    op = defop(f"{name}(Tensor self) -> Tensor", kernel, node=node, self=lambda grad: grad * factor)
    op_ = defop(f"{name}_(Tensor(a!) self) -> Tensor(a!)", inplace_of=op)

    @overridable
    def public(input):
        return op(input)

    @overridable
    def public_(input):
        if not input.dtype.is_floating_point:   # (the result must fit the tensor)
            raise RuntimeError(f"result type Float can't be cast to the desired output type "
                               f"{input.dtype._legacy}")
        return op_(input)
    public.__name__ = public.__qualname__ = name
    public_.__name__ = public_.__qualname__ = name + "_"
    setattr(Tensor, name, public)
    setattr(Tensor, name + "_", public_)
    return public, public_, op


deg2rad, deg2rad_, deg2rad_op = _scale_op("deg2rad", "Deg2RadBackward0", math.pi / 180)
rad2deg, rad2deg_, rad2deg_op = _scale_op("rad2deg", "Rad2DegBackward0", 180 / math.pi)


# ---- angle, polar, complex ------------------------------------------------------------------------------------
def _angle_kernel(self):
    if self.dtype.kind == "c":
        return like_input(xp.angle(self), self)
    a = _floated(self)
    return like_input(xp.where(a < 0, a.dtype.type(math.pi), xp.where(xp.isnan(a), a, a.dtype.type(0))), a)


def _angle_backward(grad, self):
    """torch's ``angle_backward``: grad * z / |z|^2 * i for complex z (0 at z = 0); 0 for real input."""
    if not _is_complex(self):
        return grad * 0
    at_zero = self == 0
    return grad * self / (aten.abs(self) ** 2 + at_zero) * 1j * (~at_zero)


angle_op = defop("angle(Tensor self) -> Tensor", _angle_kernel, node="AngleBackward0", self=_angle_backward)


@method()
@overridable
def angle(input):
    """torch.angle: the argument of each complex element (real input: pi where negative, else 0)."""
    return angle_op(input)


def _check_parts(a, b, fn):
    if a.dtype != b.dtype:
        raise RuntimeError(f"Expected object of scalar type {_dtype._BY_NUMPY[a.dtype]._legacy} but got scalar type "
                           f"{_dtype._BY_NUMPY[b.dtype]._legacy} for second argument")
    if a.dtype.kind != "f":
        name = _dtype._BY_NUMPY[a.dtype]._legacy
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got {name} and {name}")
    return xp.result_type(a.dtype, xp.complex64)


def _polar_kernel(abs, angle):
    ct = _check_parts(abs, angle, "polar")
    return like_operands((abs * xp.cos(angle) + 1j * (abs * xp.sin(angle))).astype(ct, copy=False), abs, angle)


def _complex_kernel(real, imag):
    ct = _check_parts(real, imag, "complex")
    out = _empty_like(real, xp.broadcast_shapes(real.shape, imag.shape), ct)   # (on real's device)
    out.real[...], out.imag[...] = real, imag   # (into the views: `1j * imag` would make nan of an infinite part)
    return like_operands(out, real, imag)


polar_op = defop("polar(Tensor abs, Tensor angle) -> Tensor", _polar_kernel, node="PolarBackward0",
                 abs=lambda grad, result: _real(aten.conj(grad) * aten.sgn(result)),
                 angle=lambda grad, result: _real(aten.conj(grad) * (result * 1j)))
complex_op = defop("complex(Tensor real, Tensor imag) -> Tensor", _complex_kernel, node="ComplexBackward0",
                   real=lambda grad: _real(grad), imag=lambda grad: _imag(grad))


@overridable
def polar(abs, angle, *, out=None):
    """torch.polar: the complex numbers of magnitude ``abs`` and argument ``angle``."""
    return _with_out(polar_op(abs, angle), out, "polar")


@overridable
def complex(real, imag, *, out=None):
    """torch.complex: ``real + i imag`` (both float32 or both float64)."""
    return _with_out(complex_op(real, imag), out, "complex")


def _with_out(result, out, name):
    if out is None:
        return result
    from .._prims_common.wrappers import write_out
    return write_out(name, result, out)


# ---- powers of two --------------------------------------------------------------------------------------------
def _ldexp_kernel(self, other):
    a, b = promote_arrays(_floated(self), other)
    return like_operands(xp.multiply(a, xp.exp2(b.astype(a.dtype) if b.dtype.kind != "c" else b)), self, other)


def _pow2(other):
    """torch's ``pow(2, other)`` in the formula: for an integer ``other``, integer powers (0 below 2^0)."""
    kind = getattr(other.dtype, "kind", None)
    integral = kind in "biu" if kind is not None else not (other.dtype.is_floating_point or other.dtype.is_complex)
    return aten.exp2(other) * (other >= 0) if integral else aten.exp2(other)


ldexp_op = defop("ldexp.Tensor(Tensor self, Tensor other) -> Tensor", _ldexp_kernel, node="LdexpBackward0",
                 self=lambda grad, other: grad * _pow2(other),
                 other=lambda grad, self, other: grad * self * aten.exp2(other) * math.log(2))


@method()
@overridable
def ldexp(input, other):
    """torch.ldexp: ``input * 2 ** other`` (in a floating type)."""
    return ldexp_op(input, other)


@method()
@overridable
def ldexp_(input, other):
    return input.mul_(aten.exp2(other) if isinstance(other, Tensor) else 2.0 ** other)


def _frexp_kernel(self):
    if self.dtype.kind != "f":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    mantissa, exponent = xp.frexp(self)
    return like_input(mantissa, self), like_input(exponent.astype(xp.int32), self)


frexp_op = defop("frexp.Tensor(Tensor self) -> (Tensor mantissa, Tensor exponent)", _frexp_kernel,
                 node="FrexpBackward0", output_differentiability=[True, False],
                 self=lambda grad, exponent: grad / aten.exp2(exponent))


@method()
@overridable
def frexp(input, *, out=None):
    """torch.frexp: (mantissa, exponent) with ``input = mantissa * 2 ** exponent``, |mantissa| in [0.5, 1)."""
    from ..return_types import frexp as frexp_result
    result = frexp_op(input)
    if out is not None:
        from .._prims_common.wrappers import write_out
        return write_out("frexp", tuple(result), out)
    return frexp_result(tuple(result))


# ---- heaviside, nextafter -------------------------------------------------------------------------------------
def _heaviside_kernel(self, values):
    if self.dtype != getattr(values, "dtype", self.dtype):
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    if self.dtype.kind == "c":
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    out = xp.where(self == 0, values, (self > 0).astype(self.dtype))
    return like_operands(out.astype(self.dtype, copy=False), self, values)


heaviside_op = _pw._not_implemented_op("heaviside(Tensor self, Tensor values) -> Tensor", _heaviside_kernel,
                                       "heaviside", ("self", "values"))


heaviside__op = defop("heaviside_(Tensor(a!) self, Tensor values) -> Tensor(a!)", inplace_of=heaviside_op)


@method()
@overridable
def heaviside(input, values):
    """torch.heaviside: 0 where ``input < 0``, ``values`` where it is 0, 1 where it is positive."""
    return heaviside_op(input, values)


@method()
@overridable
def heaviside_(self, values):
    """In place: heaviside (aten.heaviside_)."""
    return heaviside__op._call(self, values)


def _nextafter_kernel(self, other):
    a, b = promote_arrays(self, other)
    if a.dtype.kind != "f":
        raise NotImplementedError(f'"nextafter_cpu" not implemented for \'{_dtype._BY_NUMPY[a.dtype]._legacy}\'')
    return like_operands(xp.nextafter(a, b), self, other)


nextafter_op = defop("nextafter(Tensor self, Tensor other) -> Tensor", _nextafter_kernel, node="NextafterBackward0",
                     self=not_implemented("nextafter"), other=not_implemented("nextafter"))


nextafter__op = defop("nextafter_(Tensor(a!) self, Tensor other) -> Tensor(a!)", inplace_of=nextafter_op)


@method()
@overridable
def nextafter(input, other):
    """torch.nextafter: the next floating-point value after ``input`` towards ``other``."""
    return nextafter_op(input, other)


@method()
@overridable
def nextafter_(self, other):
    """In place: nextafter (aten.nextafter_)."""
    return nextafter__op._call(self, other)


# ---- gcd, lcm -------------------------------------------------------------------------------------------------
def _integer_kernel(name, fn):
    def kernel(self, other):
        a, b = promote_arrays(self, other)
        if a.dtype.kind not in "iu":
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'{_dtype._BY_NUMPY[a.dtype]._legacy}\'')
        return like_operands(fn(a, b).astype(a.dtype, copy=False), self, other)
    kernel.__name__ = f"{name}_kernel"
    return kernel


gcd_op = defop("gcd(Tensor self, Tensor other) -> Tensor", _integer_kernel("gcd", xp.gcd))
lcm_op = defop("lcm(Tensor self, Tensor other) -> Tensor", _integer_kernel("lcm", xp.lcm))


def _integer_public(name, op):
    @overridable
    def public(input, other):
        if not isinstance(other, Tensor):
            raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not {_checks.type_name(other)}")
        return op(input, other)

    @overridable
    def public_(input, other):
        return input.copy_(op(input, other))
    public.__name__ = public.__qualname__ = name
    public_.__name__ = public_.__qualname__ = name + "_"
    public.__doc__ = f"torch.{name} of integer tensors, element-wise."
    setattr(Tensor, name, public)
    setattr(Tensor, name + "_", public_)
    return public, public_


gcd, gcd_ = _integer_public("gcd", gcd_op)
lcm, lcm_ = _integer_public("lcm", lcm_op)


# ---- predicates -----------------------------------------------------------------------------------------------
@method()
@overridable
def is_nonzero(input):
    """torch.is_nonzero: the truth of a one-element tensor (torch's errors for others)."""
    if input.numel() == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if input.numel() > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


@method()
@overridable
def is_same_size(input, other):
    """torch.is_same_size: whether the two shapes are equal."""
    return tuple(input.shape) == tuple(other.shape)


@method()
@overridable
def is_signed(input):
    """torch.is_signed: whether the dtype is signed (floats and complex are)."""
    _checks.expect_tensor("is_signed", input)
    return input.dtype.is_signed
