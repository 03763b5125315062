"""Special functions (torch.special's ops, several also at torch's top level) and their derivatives.

The kernels are in ``glasstorch/_array/special.py`` (NumPy only; SciPy's where it is installed). Each
op here is a ``defop`` with torch's schema, node name and ``derivatives.yaml`` formula:

==================  ==============================================  =================================
op                  value                                           derivative
==================  ==============================================  =================================
erfc                1 - erf(x)                                      -2/sqrt(pi) exp(-x^2)
special_erfcx       exp(x^2) erfc(x)                                2 x erfcx(x) - 2/sqrt(pi)
special_ndtri       the inverse normal CDF                          sqrt(2 pi) exp(ndtri(p)^2 / 2)
special_log_ndtr    log of the normal CDF                           pdf(x) / ndtr(x)
i0, special_i1      modified Bessel I_0, I_1                        I_1;  I_0 - I_1 / x (1/2 at 0)
special_i0e/i1e     I_0, I_1 times exp(-|x|)                        i1e - sgn(x) i0e; i0e - i1e (sgn + 1/x)
sinc                sin(pi x) / (pi x)                              (pi x cos(pi x) - sin(pi x)) / (pi x^2)
special_entr        -x log x                                        -(1 + log x)
polygamma(n, x)     the n-th derivative of digamma                  polygamma(n + 1, x)
mvlgamma(x, p)      log of the multivariate gamma function          sum_j digamma(x - j/2)
logit(x, eps)       log(x / (1 - x)), x clamped to [eps, 1 - eps]   1 / (x (1 - x)), 0 outside the clamp
xlogy(x, y)         x log y, 0 where x = 0                          log y (0 where x = 0);  x / y
special_xlog1py     x log1p(y), 0 where x = 0                       log1p y (0 where x = 0);  x / (1 + y)
special_zeta(x, q)  Hurwitz zeta sum_k (k + q)^-x                   (torch has none)
==================  ==============================================  =================================

``special_ndtr`` is composite in torch -- (1 + erf(x / sqrt 2)) / 2 -- and records its steps, so here
too: ``mul.Scalar`` and ``add.Scalar`` (``MulBackward1``, ``AddBackward1``, the nodes torch records for a
tensor and a number inside its C++ composites) are declared here for it.
"""
import math

from .. import _dtype, _checks
from .._tensor import Tensor
from .._array import xp, special as _sp, asarray, asarray_like as _asarray_like, zeros_like as _zeros_like
from ._op import method, promote_arrays, write_into
from .._ops import defop, aten
from .. import _ops   # (_ops._ARRAY_TYPES, read at each call: it grows when CuPy is imported)
from .._seam import overridable

__all__ = ["erfc", "erfc_", "i0", "i0_", "sinc", "sinc_", "xlogy", "xlogy_", "logit", "logit_", "polygamma",
           "mvlgamma"]

SQRT_PI = math.sqrt(math.pi)
SQRT_2PI = math.sqrt(2 * math.pi)
_EPS = {xp.dtype("float32"): float(xp.finfo(xp.float32).eps), xp.dtype("float64"): float(xp.finfo(xp.float64).eps)}


def _as_float(a):
    """Integers and bools are computed in the default float type, as torch's float ops do."""
    if a.dtype.kind in "fc":
        return a
    return a.astype(_dtype.get_default_dtype().numpy_dtype)


def _unary(fn):
    def kernel(self):
        a = _as_float(self)
        return asarray(fn(a)).astype(a.dtype, copy=False)
    kernel.__name__ = getattr(fn, "__name__", "kernel")
    return kernel


def _eps_of(x):
    dt = x.dtype
    return _EPS.get(getattr(dt, "numpy_dtype", dt), _EPS[xp.dtype("float32")])


def _i1_grad(grad, self, result):
    """torch's ``i1_backward``: I_0(x) - I_1(x) / x, and 1/2 at x = 0 (the limit)."""
    eps = _eps_of(self)
    big = aten.abs(self) > eps
    safe = self + (~big) * eps
    return grad * ((aten.i0(safe) - result / safe) * big + (~big) * 0.5)


def _i1e_grad(grad, self, result):
    """torch's ``i1e_backward``: i0e(x) - i1e(x) (sgn(x) + 1/x), and 1/2 at x = 0."""
    eps = _eps_of(self)
    big = aten.abs(self) > eps
    safe = self + (~big) * eps
    return grad * ((aten.special_i0e(safe) - result * (aten.sgn(safe) + 1 / safe)) * big + (~big) * 0.5)


def _sinc_grad(grad, self):
    """(pi x cos(pi x) - sin(pi x)) / (pi x^2), 0 at x = 0 (torch's ``sinc_backward``)."""
    nonzero = self != 0
    safe = self + (~nonzero) * 1.0
    pix = safe * math.pi
    return grad * ((pix * aten.cos(pix) - aten.sin(pix)) / (pix * safe)) * nonzero


def _mvlgamma_grad(grad, self, p):
    total = aten.digamma(self)
    for j in range(1, p):
        total = total + aten.digamma(self - j / 2)
    return grad * total


def _mvlgamma_kernel(self, p):
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    a = _as_float(self)
    total = p * (p - 1) / 4 * math.log(math.pi)
    for j in range(p):
        total = total + _sp.lgamma(a - j / 2)
    return asarray(total).astype(a.dtype, copy=False)


def _polygamma_kernel(n, self):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return _unary(lambda a: _sp.polygamma(n, a))(self)


def _logit_kernel(self, eps=None):
    a = _as_float(self)
    if eps is not None:
        a = xp.clip(a, eps, 1 - eps)
    with xp.errstate(divide="ignore", invalid="ignore"):
        return xp.log(a / (1 - a))


def _logit_backward_kernel(grad_output, self, eps=None):
    x = _as_float(self)
    with xp.errstate(divide="ignore", invalid="ignore"):
        g = grad_output / (x * (1 - x))
        if eps is None:
            return xp.where((x < 0) | (x > 1), xp.nan, g).astype(g.dtype, copy=False)
        return xp.where((x < eps) | (x > 1 - eps), 0, g).astype(g.dtype, copy=False)


def _in_clamp(self, eps):
    """1 where logit's input lies inside [eps, 1 - eps] (its gradient flows), else 0."""
    return 1 if eps is None else (self >= eps) * (self <= 1 - eps)


def _xlog_kernel(log):
    def kernel(self, other):
        a, b = _binary_floats(self, other)
        with xp.errstate(divide="ignore", invalid="ignore"):
            out = a * log(b)
        return xp.where((a == 0) & ~xp.isnan(b), _zeros_like(out, ()), out)
    return kernel


def _binary_floats(self, other):
    """Both operands as arrays of the (floating) result type; either may be a Python number."""
    if isinstance(self, _ops._ARRAY_TYPES):
        a, b = promote_arrays(self, other)
        dt = a.dtype
    else:
        b, a = promote_arrays(other, self)
        dt = b.dtype
    if dt.kind not in "fc":
        dt = _dtype.get_default_dtype().numpy_dtype
    ref = self if isinstance(self, _ops._ARRAY_TYPES) else other   # (a number goes to the array's device)
    return _asarray_like(ref, a, dtype=dt), _asarray_like(ref, b, dtype=dt)


def _zeta_kernel(self, other):
    a, b = _binary_floats(self, other)
    return _sp.zeta(a, b).astype(a.dtype, copy=False)


# ---- unary ----------------------------------------------------------------------------------------------
erfc_op = defop("erfc(Tensor self) -> Tensor", _unary(_sp.erfc), node="ErfcBackward0",
                self=lambda grad, self: grad * (-2 / SQRT_PI) * aten.exp(-self * self))
erfcx_op = defop("special_erfcx(Tensor self) -> Tensor", _unary(_sp.erfcx), node="SpecialErfcxBackward0",
                 self=lambda grad, self, result: (2 * self * result - 2 / SQRT_PI) * grad)
ndtri_op = defop("special_ndtri(Tensor self) -> Tensor", _unary(_sp.ndtri), node="SpecialNdtriBackward0",
                 self=lambda grad, result: grad * SQRT_2PI * aten.exp(result * result / 2))
log_ndtr_op = defop("special_log_ndtr(Tensor self) -> Tensor", _unary(_sp.log_ndtr), node="SpecialLogNdtrBackward0",
                    self=lambda grad, self, result: grad / SQRT_2PI * aten.exp(-(result + self * self / 2)))
i1_op = defop("special_i1(Tensor self) -> Tensor", _unary(_sp.i1), node="SpecialI1Backward0", self=_i1_grad)
i0_op = defop("i0(Tensor self) -> Tensor", _unary(_sp.i0), node="I0Backward0",
              self=lambda grad, self: grad * i1_op(self))
i1e_op = defop("special_i1e(Tensor self) -> Tensor", _unary(_sp.i1e), node="SpecialI1EBackward0", self=_i1e_grad)
i0e_op = defop("special_i0e(Tensor self) -> Tensor", _unary(_sp.i0e), node="SpecialI0EBackward0",
               self=lambda grad, self, result: grad * (i1e_op(self) - aten.sgn(self) * result))
sinc_op = defop("sinc(Tensor self) -> Tensor", _unary(lambda a: xp.sinc(a)), node="SincBackward0", self=_sinc_grad)
entr_op = defop("special_entr(Tensor self) -> Tensor",
                _unary(lambda a: xp.where(a > 0, -a * xp.log(xp.where(a > 0, a, 1)),
                                          xp.where(a == 0, 0, -xp.inf)).astype(a.dtype)),
                node="SpecialEntrBackward0", self=lambda grad, self: grad * -(1 + aten.log(self)))
polygamma_op = defop("polygamma(int n, Tensor self) -> Tensor", _polygamma_kernel, node="PolygammaBackward0",
                     self=lambda grad, n, self: grad * polygamma_op(n + 1, self))
mvlgamma_op = defop("mvlgamma(Tensor self, int p) -> Tensor", _mvlgamma_kernel, node="MvlgammaBackward0",
                    self=_mvlgamma_grad)
logit_backward_op = defop(
    "logit_backward(Tensor grad_output, Tensor self, float? eps=None) -> Tensor", _logit_backward_kernel,
    node="LogitBackwardBackward0",
    grad_output=lambda grad, self, eps: logit_backward_op(grad, self, eps),
    self=lambda grad, grad_output, self, eps: grad * grad_output * (2 * self - 1) / (self * (1 - self)) ** 2
    * _in_clamp(self, eps))
logit_op = defop("logit(Tensor self, float? eps=None) -> Tensor", _logit_kernel, node="LogitBackward0",
                 self=lambda grad, self, eps: logit_backward_op(grad, self, eps))


def _polygamma_into_kernel(self, n):
    write_into(self, _polygamma_kernel(n, self))
    return self


# the in-place forms: variants recording their twins' nodes, but polygamma_, whose arguments come in
# another order and which torch gives a derivative of its own (PolygammaBackward1)
erfc__op = defop("erfc_(Tensor(a!) self) -> Tensor(a!)", inplace_of=erfc_op)
i0__op = defop("i0_(Tensor(a!) self) -> Tensor(a!)", inplace_of=i0_op)
sinc__op = defop("sinc_(Tensor(a!) self) -> Tensor(a!)", inplace_of=sinc_op)
logit__op = defop("logit_(Tensor(a!) self, float? eps=None) -> Tensor(a!)", inplace_of=logit_op)
mvlgamma__op = defop("mvlgamma_(Tensor(a!) self, int p) -> Tensor(a!)", inplace_of=mvlgamma_op)
polygamma__op = defop("polygamma_(Tensor(a!) self, int n) -> Tensor(a!)", _polygamma_into_kernel, inplace=True,
                      node="PolygammaBackward1", self=lambda grad, self, n: grad * polygamma_op(n + 1, self))

# ---- binary ---------------------------------------------------------------------------------------------
_xlogy_kernel, _xlog1py_kernel = _xlog_kernel(xp.log), _xlog_kernel(xp.log1p)
# d/dx x log y = log y: xlogy(grad, y), taken as 0 where x = 0 and y <= 0 (torch's masked_fill: xlogy of a
# zeroed gradient gives exactly 0 there, and formulas need no `where`)
xlogy_op = defop("xlogy.Tensor(Tensor self, Tensor other) -> Tensor", _xlogy_kernel, node="XlogyBackward0",
                 self=lambda grad, self, other: xlogy_op(grad * ~((self == 0) & (other <= 0)), other),
                 other=lambda grad, self, other: grad * self / other)
xlogy_self_scalar_op = defop("xlogy.Scalar_Self(Scalar self, Tensor other) -> Tensor", _xlogy_kernel,
                             node="XlogyBackward1", other=lambda grad, self, other: grad * self / other)
xlogy_other_scalar_op = defop("xlogy.Scalar_Other(Tensor self, Scalar other) -> Tensor", _xlogy_kernel,
                              node="XlogyBackward2",
                              self=lambda grad, self, other: xlogy_other_scalar_op(
                                  grad if other > 0 else grad * (self != 0), other))
xlog1py_op = defop("special_xlog1py(Tensor self, Tensor other) -> Tensor", _xlog1py_kernel,
                   node="SpecialXlog1PyBackward0",
                   self=lambda grad, self, other: xlog1py_op(grad * ~((self == 0) & (other <= -1)), other),
                   other=lambda grad, self, other: grad * self / (other + 1))
xlog1py_self_scalar_op = defop("special_xlog1py.self_scalar(Scalar self, Tensor other) -> Tensor", _xlog1py_kernel,
                               node="SpecialXlog1PyBackward1", other=lambda grad, self, other: grad * self / (other + 1))
xlog1py_other_scalar_op = defop("special_xlog1py.other_scalar(Tensor self, Scalar other) -> Tensor", _xlog1py_kernel,
                                node="SpecialXlog1PyBackward2",
                                self=lambda grad, self, other: xlog1py_other_scalar_op(
                                    grad if other > -1 else grad * (self != 0), other))
# torch gives zeta no derivative (derivatives.yaml: not_implemented("zeta")): its nodes are recorded, and
# backward through them raises
def _zeta_not_implemented(grad):
    raise NotImplementedError("the derivative for 'zeta' is not implemented.")


zeta_op = defop("special_zeta(Tensor self, Tensor other) -> Tensor", _zeta_kernel, node="SpecialZetaBackward0",
                self=_zeta_not_implemented, other=_zeta_not_implemented)
zeta_self_scalar_op = defop("special_zeta.self_scalar(Scalar self, Tensor other) -> Tensor", _zeta_kernel,
                            node="SpecialZetaBackward1", other=_zeta_not_implemented)
zeta_other_scalar_op = defop("special_zeta.other_scalar(Tensor self, Scalar other) -> Tensor", _zeta_kernel,
                             node="SpecialZetaBackward2", self=_zeta_not_implemented)

# a tensor and a number inside torch's C++ composites (ndtr): their own overloads and nodes
mul_scalar_op = defop("mul.Scalar(Tensor self, Scalar other) -> Tensor",
                      lambda self, other: xp.multiply(*promote_arrays(self, other)),
                      node="MulBackward1", self=lambda grad, other: grad * other)
add_scalar_op = defop("add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
                      lambda self, other, alpha=1: xp.add(*promote_arrays(self, other * alpha)),
                      node="AddBackward1", self=lambda grad: grad)


def _div_scalar_kernel(self, other):
    from .pointwise import _true_divide_arrays
    return _true_divide_arrays(*promote_arrays(self, other))


div_scalar_op = defop("div.Scalar(Tensor self, Scalar other) -> Tensor", _div_scalar_kernel, node="DivBackward1",
                      self=lambda grad, other: grad / other)


# ---- the public functions -------------------------------------------------------------------------------
def _public_unary(name, op):
    @overridable
    def fn(input, *, out=None):
        return _into(out, op(input), name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.{name}: elementwise (aten.{op.overloadpacket.__name__})."
    return fn


def _into(out, result, name):
    """``result``, or written into ``out`` by torch's out= rules."""
    return result if out is None else _checks.write_out(name, result, out)


def _in_place(name, op):
    """``Tensor.<name>_``: ``op`` (the in-place op, or a function picking the overload)."""
    @overridable
    def fn_(self, *args, **kwargs):
        return op(self, *args, **kwargs)
    fn_.__name__ = fn_.__qualname__ = name + "_"
    return fn_


erfc, i0, sinc = _public_unary("erfc", erfc_op), _public_unary("i0", i0_op), _public_unary("sinc", sinc_op)
special_erfcx = _public_unary("erfcx", erfcx_op)
special_ndtri = _public_unary("ndtri", ndtri_op)
special_log_ndtr = _public_unary("log_ndtr", log_ndtr_op)
special_i0e = _public_unary("i0e", i0e_op)
special_i1 = _public_unary("i1", i1_op)
special_i1e = _public_unary("i1e", i1e_op)
special_entr = _public_unary("entr", entr_op)
erfc_, i0_, sinc_ = _in_place("erfc", erfc__op), _in_place("i0", i0__op), _in_place("sinc", sinc__op)
for _f in (erfc, i0, sinc, erfc_, i0_, sinc_):
    setattr(Tensor, _f.__name__, _f)
del _f


@overridable
def special_ndtr(input, *, out=None):
    """The standard normal CDF, as torch composes it: (1 + erf(x / sqrt 2)) / 2."""
    x = input if input.is_floating_point() else input.to(_dtype.get_default_dtype())
    return _into(out, mul_scalar_op(add_scalar_op(aten.erf(mul_scalar_op(x, math.sqrt(0.5))), 1), 0.5), "special_ndtr")


@overridable
def polygamma(n, input, *, out=None):
    """The n-th derivative of digamma."""
    return _into(out, polygamma_op(n, input), "polygamma")


@overridable
def _polygamma_method(self, n):
    """``Tensor.polygamma(n)``: its own function, ``self`` first, as torch's method (a handler is given
    ``Tensor.polygamma, (x, n)``; torch.polygamma takes ``n`` first)."""
    return polygamma_op(n, self)


_polygamma_method.__name__, _polygamma_method.__qualname__ = "polygamma", "Tensor.polygamma"
Tensor.polygamma = _polygamma_method


@overridable
def polygamma_(self, n):
    return polygamma__op(self, n)


Tensor.polygamma_ = polygamma_


@method("mvlgamma")
@overridable
def mvlgamma(input, p, *, out=None):
    """The log of the multivariate gamma function of dimension p (torch.special.multigammaln)."""
    return _into(out, mvlgamma_op(input, p), "mvlgamma")


mvlgamma_ = _in_place("mvlgamma", mvlgamma__op)
Tensor.mvlgamma_ = mvlgamma_


@method("logit")
@overridable
def logit(input, eps=None, *, out=None):
    """log(x / (1 - x)), with x clamped to [eps, 1 - eps] when eps is given."""
    return _into(out, logit_op(input, eps), "logit")


logit_ = _in_place("logit", lambda self, eps=None: logit__op(self, eps))
Tensor.logit_ = logit_


def _pick(tensor_op, self_scalar_op, other_scalar_op, input, other):
    """The overload for a (tensor, tensor), (number, tensor) or (tensor, number) call."""
    if isinstance(input, Tensor):
        return tensor_op(input, other) if isinstance(other, Tensor) else other_scalar_op(input, other)
    if isinstance(other, Tensor):
        return self_scalar_op(input, other)
    raise TypeError(f"{tensor_op._schema.name}() received an invalid combination of arguments - got "
                    f"({type(input).__name__}, {type(other).__name__})")


@method("xlogy")
@overridable
def xlogy(input, other, *, out=None):
    """x log y, with 0 where x = 0 (even where y = 0), NaN where y is NaN."""
    return _into(out, _pick(xlogy_op, xlogy_self_scalar_op, xlogy_other_scalar_op, input, other), "xlogy")


xlogy__op = defop("xlogy_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", inplace_of=xlogy_op)
xlogy__other_scalar_op = defop("xlogy_.Scalar_Other(Tensor(a!) self, Scalar other) -> Tensor(a!)",
                               inplace_of=xlogy_other_scalar_op)
xlogy_ = _in_place("xlogy", lambda self, other: (xlogy__op if isinstance(other, Tensor) else
                                                 xlogy__other_scalar_op)(self, other))
Tensor.xlogy_ = xlogy_


@overridable
def special_xlog1py(input, other, *, out=None):
    """x log(1 + y), with 0 where x = 0."""
    return _into(out, _pick(xlog1py_op, xlog1py_self_scalar_op, xlog1py_other_scalar_op, input, other), "special_xlog1py")


@overridable
def special_zeta(input, other, *, out=None):
    """The Hurwitz zeta function sum_k (k + other)^-input."""
    return _into(out, _pick(zeta_op, zeta_self_scalar_op, zeta_other_scalar_op, input, other), "special_zeta")


# ---- Bessel and Airy functions, incomplete gamma, orthogonal polynomials ----------------------------------
# (kernels: glasstorch/_array/special_cephes.py, torch's own algorithms). torch gives the Bessel/Airy
# functions and the polynomials no derivative at all: their outputs never require grad. igamma/igammac
# have a derivative for ``other`` only (torch: not_implemented("igamma: input") for ``self``).
from .._array import special_cephes as _sc  # noqa: E402


def _refuse(name, dtype):
    if dtype.kind in "cb":
        legacy = "Bool" if dtype.kind == "b" else _dtype._BY_NUMPY[dtype]._legacy
        raise NotImplementedError(f'"{name}_cpu" not implemented for \'{legacy}\'')


def _unary_special(name, fn):
    def kernel(self):
        _refuse(name, self.dtype)
        return asarray(fn(_as_float(self)))
    kernel.__name__ = name
    return kernel


_UNARY_SPECIAL = {   # torch.special name: the schema's argument name
    "bessel_j0": "self", "bessel_j1": "self", "bessel_y0": "self", "bessel_y1": "self",
    "modified_bessel_i0": "self", "modified_bessel_i1": "self", "modified_bessel_k0": "self",
    "modified_bessel_k1": "self", "scaled_modified_bessel_k0": "x", "scaled_modified_bessel_k1": "x",
    "airy_ai": "x", "spherical_bessel_j0": "x",
}
_UNARY_SPECIAL_OPS = {
    name: defop(f"special_{name}(Tensor {arg}) -> Tensor", _unary_special(name, getattr(_sc, name)))
    for name, arg in _UNARY_SPECIAL.items()}


def _polynomial_kernel(name, fn):
    def kernel(x, n):
        for v in (x, n):
            if isinstance(v, _ops._ARRAY_TYPES) and v.dtype.kind == "c":
                _refuse(name, v.dtype)
        a, b = _binary_floats(x, n)
        return asarray(fn(a, b)).astype(a.dtype, copy=False)
    kernel.__name__ = name
    return kernel


_POLYNOMIALS = ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
                "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
                "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
                "legendre_polynomial_p")
_POLYNOMIAL_OPS = {
    name: tuple(defop(f"special_{name}{overload}", _polynomial_kernel(name, getattr(_sc, name)))
                for overload in ("(Tensor x, Tensor n) -> Tensor", ".x_scalar(Scalar x, Tensor n) -> Tensor",
                                 ".n_scalar(Tensor x, Scalar n) -> Tensor"))
    for name in _POLYNOMIALS}


def _igamma_kernel(name, fn):
    def kernel(self, other):
        a, b = promote_arrays(self, other)
        if a.dtype.kind != "f":
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'{_dtype._BY_NUMPY[a.dtype]._legacy}\'')
        return asarray(fn(a, b.astype(a.dtype, copy=False)))
    return kernel


def _igamma_other_grad(grad, self, other):
    """d/dx P(a, x) = x^(a-1) e^-x / Gamma(a)."""
    return grad * aten.exp((self - 1) * aten.log(other) - other - aten.lgamma(self))


def _igamma_self_not_implemented(name):
    def formula(grad):
        raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")
    return formula


igamma_op = defop("igamma(Tensor self, Tensor other) -> Tensor", _igamma_kernel("igamma", _sc.igamma),
                  node="IgammaBackward0", self=_igamma_self_not_implemented("igamma"), other=_igamma_other_grad)
igammac_op = defop("igammac(Tensor self, Tensor other) -> Tensor", _igamma_kernel("igammac", _sc.igammac),
                   node="IgammacBackward0", self=_igamma_self_not_implemented("igammac"),
                   other=lambda grad, self, other: -_igamma_other_grad(grad, self, other))


def _special_unary_function(name):
    op = _UNARY_SPECIAL_OPS[name]
    arg = _UNARY_SPECIAL[name]

    @overridable
    def fn(input, *, out=None):
        return _into(out, op(input), name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"torch.special.{name}: elementwise ({arg}), in the input's floating dtype (integers: the "
                  f"default float). No gradient: torch defines none.")
    return fn


def _polynomial_function(name):
    tensor_op, x_scalar_op, n_scalar_op = _POLYNOMIAL_OPS[name]

    @overridable
    def fn(input, n, *, out=None):
        if isinstance(input, Tensor):
            res = tensor_op(input, n) if isinstance(n, Tensor) else n_scalar_op(input, n)
        elif isinstance(n, Tensor):
            res = x_scalar_op(input, n)
        else:
            raise TypeError(f"special_{name}() received an invalid combination of arguments - got "
                            f"({type(input).__name__}, {type(n).__name__}), but expected one of:\n * (Tensor x, "
                            f"Tensor n, *, Tensor out = None)\n * (Number x, Tensor n, *, Tensor out = None)\n"
                            f" * (Tensor x, Number n, *, Tensor out = None)")
        return _into(out, res, name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"torch.special.{name}(input, n): the polynomial of degree n (truncated to an integer; 0 for "
                  f"n < 0) at input. No gradient: torch defines none.")
    return fn


SPECIAL_FUNCTIONS = {name: _special_unary_function(name) for name in _UNARY_SPECIAL}
SPECIAL_FUNCTIONS.update({name: _polynomial_function(name) for name in _POLYNOMIALS})


def _igamma_public(name, op):
    @overridable
    def fn(input, other, *, out=None):
        if not isinstance(other, Tensor):
            raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
        return _into(out, op(input, other), name)
    fn.__name__ = fn.__qualname__ = name
    return fn


igamma = _igamma_public("igamma", igamma_op)
igammac = _igamma_public("igammac", igammac_op)
igamma.__doc__ = "The regularized lower incomplete gamma function P(input, other) (torch.special.gammainc)."
igammac.__doc__ = "The regularized upper incomplete gamma function Q(input, other) = 1 - P (torch.special.gammaincc)."
igamma__op = defop("igamma_(Tensor(a!) self, Tensor other) -> Tensor(a!)", inplace_of=igamma_op)
igammac__op = defop("igammac_(Tensor(a!) self, Tensor other) -> Tensor(a!)", inplace_of=igammac_op)


def _tensor_other(name, op):
    """An in-place op whose ``other`` must be a Tensor (torch's TypeError for a number)."""
    def checked(self, other):
        if not isinstance(other, Tensor):
            raise TypeError(f"{name}(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")
        return op(self, other)
    return checked


igamma_ = _in_place("igamma", _tensor_other("igamma_", igamma__op))
igammac_ = _in_place("igammac", _tensor_other("igammac_", igammac__op))
for _f in (igamma, igammac, igamma_, igammac_):
    setattr(Tensor, _f.__name__, _f)
del _f
__all__ += ["igamma", "igammac"]
