"""Special functions on arrays, in NumPy alone (SciPy, when installed, is used instead where it has them).

Each works elementwise on float32/float64 arrays and returns the input's dtype, computing in float64.
The methods are the textbook ones, chosen to be short and accurate to about float64 rounding:

* erf, erfc, lgamma: the C library's (Python's ``math``), elementwise.
* erfinv: Giles' approximation (float32-accurate) polished by two Newton steps on ``erf``.
* digamma: the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10, then the asymptotic series;
  the reflection psi(1 - x) - pi / tan(pi x) for x < 0.
* zeta (Hurwitz): the Euler-Maclaurin sum (Cephes' ``zeta``); polygamma(n, x) = (-1)^(n+1) n! zeta(n+1, x).
* i0, i1 (modified Bessel functions of the first kind) and their exponentially scaled forms: the power
  series for |x| <= 30, the asymptotic expansion beyond.
* erfcx = exp(x^2) erfc(x) and log_ndtr: direct where that is exact, asymptotic series where the direct
  form would overflow or underflow.
"""
import math

import numpy as np

from . import _special

_F64 = np.float64


def _elementwise(fn, a):
    """A scalar ``math`` function applied to every element, in float64 (frompyfunc keeps 0-d arrays)."""
    out = np.frompyfunc(fn, 1, 1)(np.asarray(a, dtype=_F64))
    return np.asarray(out, dtype=_F64)


def _scipy(name):
    special = _special()
    return None if special is None else getattr(special, name, None)


def _same_dtype(result, a):
    with np.errstate(over="ignore"):    # beyond float32's range: inf, as torch gives
        return np.asarray(result).astype(a.dtype, copy=False)


def _math_erf(x):
    return math.erf(x) if not math.isnan(x) else math.nan


def erf(a):
    if not isinstance(a, (np.ndarray, np.generic)):     # a CuPy array: CuPy's own
        import cupyx.scipy.special as cupy_special
        return cupy_special.erf(a)
    fn = _scipy("erf")
    return fn(a) if fn is not None else _same_dtype(_elementwise(_math_erf, a), a)


def erfc(a):
    fn = _scipy("erfc")
    if fn is not None:
        return fn(a)
    return _same_dtype(_elementwise(lambda x: math.erfc(x) if not math.isnan(x) else math.nan, a), a)


def _lgamma_scalar(x):
    if math.isnan(x):
        return math.nan
    if x == math.floor(x) and x <= 0:
        return math.inf               # the poles (torch: inf)
    if math.isinf(x):
        return math.inf
    return math.lgamma(x)


def lgamma(a):
    fn = _scipy("gammaln")
    return fn(a) if fn is not None else _same_dtype(_elementwise(_lgamma_scalar, a), a)


def erfinv(a):
    fn = _scipy("erfinv")
    if fn is not None:
        return fn(a)
    y = np.asarray(a, dtype=_F64)
    with np.errstate(divide="ignore", invalid="ignore"):
        # Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011)
        w = -np.log((1.0 - y) * (1.0 + y))
        small = w < 5.0
        ws = np.where(small, w - 2.5, np.sqrt(np.where(small, 5.0, w)) - 3.0)
        p_small = np.polyval([2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                              -0.00125372503, -0.00417768164, 0.246640727, 1.50140941], ws)
        p_large = np.polyval([-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                              -0.0076224613, 0.00943887047, 1.00167406, 2.83297682], ws)
        x = np.where(small, p_small, p_large) * y
        finite = np.abs(y) < 1
        xf = np.where(finite, x, 0.0)
        for _ in range(2):            # Newton on erf(x) = y: erf'(x) = 2/sqrt(pi) exp(-x^2)
            err = _elementwise(_math_erf, xf) - y
            xf = xf - err / (2.0 / math.sqrt(math.pi) * np.exp(-xf * xf))
        x = np.where(finite, xf, np.where(np.abs(y) == 1, np.copysign(np.inf, y), np.nan))
    return _same_dtype(x, np.asarray(a))


def digamma(a):
    fn = _scipy("digamma")
    if fn is not None:
        return fn(a)
    x = np.asarray(a, dtype=_F64)
    with np.errstate(divide="ignore", invalid="ignore"):
        reflect = x < 0
        pole = (x == np.floor(x)) & (x <= 0)
        z = np.where(reflect, 1.0 - x, x)
        acc = np.zeros_like(z)
        while True:                   # psi(z) = psi(z + 1) - 1/z until z >= 10
            low = z < 10
            if not low.any():
                break
            acc = acc - np.where(low, 1.0 / np.where(low, z, 1.0), 0.0)
            z = np.where(low, z + 1, z)
        inv2 = 1.0 / (z * z)
        series = np.log(z) - 0.5 / z - inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (
            1 / 240 - inv2 * (1 / 132 - inv2 * (691 / 32760 - inv2 / 12))))))
        result = acc + series
        result = np.where(reflect, result - np.pi / np.tan(np.pi * x), result)
        result = np.where(pole, np.nan, result)     # the poles at negative integers: NaN, as torch
        result = np.where(x == 0, np.where(np.signbit(x), np.inf, -np.inf), result)   # psi(+-0) = -+inf
    return _same_dtype(result, np.asarray(a))


# the Euler-Maclaurin coefficients (2k)! / B_2k (Cephes' zeta.c)
_ZETA_A = [12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
           -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
           1.8152105401943546773e17, -7.1661652561756670113e18]


def zeta(x, q):
    """The Hurwitz zeta function sum_k (k + q)^-x, for x > 1 (Cephes' algorithm, vectorised)."""
    x, q = np.broadcast_arrays(np.asarray(x, dtype=_F64), np.asarray(q, dtype=_F64))
    with np.errstate(all="ignore"):
        n = int(max(10, math.ceil(10 - float(np.nanmin(q))) if q.size else 10))
        n = min(n, 10 ** 6)
        s = np.zeros(x.shape)
        for k in range(n + 1):        # the first terms, up to q + n > 9
            b = np.power(q + k, -x)
            s = s + b
        w = q + n
        s = s + b * w / (x - 1) - 0.5 * b
        a, k = np.ones(x.shape), 0.0
        for coef in _ZETA_A:          # the Euler-Maclaurin tail
            a = a * (x + k)
            b = b / w
            s = s + a * b / coef
            k += 1
            a = a * (x + k)
            b = b / w
            k += 1
        s = np.where(x == 1, np.inf, s)
        s = np.where(x < 1, np.nan, s)
        nonpositive_int = (q <= 0) & (q == np.floor(q))
        s = np.where(nonpositive_int, np.inf, s)
        s = np.where((q <= 0) & ~nonpositive_int & (x != np.floor(x)), np.nan, s)
    return s


def polygamma(n, a):
    """The n-th derivative of digamma."""
    if n == 0:
        return digamma(a)
    fn = _scipy("polygamma")
    if fn is not None:
        return _same_dtype(fn(n, a), np.asarray(a))
    x = np.asarray(a, dtype=_F64)
    result = (-1.0) ** (n + 1) * math.factorial(n) * zeta(n + 1.0, x)
    return _same_dtype(result, np.asarray(a))


def _bessel_series(nu, x):
    """I_nu(x) for |x| <= 30 by its power series sum_k (x/2)^(2k+nu) / (k! (k+nu)!)."""
    half = x / 2
    term = half ** nu / math.factorial(nu)
    total = term
    sq = half * half
    for k in range(1, 80):
        term = term * sq / (k * (k + nu))
        total = total + term
    return total


def _bessel_asymptotic_scaled(nu, ax):
    """I_nu(ax) exp(-ax) for large ax: (2 pi ax)^-1/2 sum_k (-1)^k prod_j (4nu^2 - (2j-1)^2) / (k! (8ax)^k)."""
    mu = 4.0 * nu * nu
    term = np.ones_like(ax)
    total = term
    for k in range(1, 30):
        term = -term * (mu - (2 * k - 1) ** 2) / (k * 8.0 * ax)
        total = total + term
    return total / np.sqrt(2 * np.pi * ax)


def _bessel_i(nu, a, scaled):
    x = np.asarray(a, dtype=_F64)
    ax = np.abs(x)
    big = ax > 30
    with np.errstate(all="ignore"):
        small = _bessel_series(nu, np.where(big, 0.0, x))
        if scaled:
            small = small * np.exp(-ax)
        large = _bessel_asymptotic_scaled(nu, np.where(big, ax, 31.0))
        if not scaled:
            large = large * np.exp(ax)
        if nu % 2:                    # I_1 is odd
            large = np.copysign(large, x)
        out = np.where(big, large, small)
        out = np.where(np.isnan(x), np.nan, out)
    return _same_dtype(out, np.asarray(a))


def i0(a):
    return _bessel_i(0, a, False)


def i0e(a):
    return _bessel_i(0, a, True)


def i1(a):
    return _bessel_i(1, a, False)


def i1e(a):
    return _bessel_i(1, a, True)


def erfcx(a):
    """exp(x^2) erfc(x): direct below x = 25, the asymptotic series 1/(x sqrt(pi)) sum (-1)^k (2k-1)!!/(2x^2)^k above."""
    x = np.asarray(a, dtype=_F64)
    with np.errstate(all="ignore"):
        direct = np.exp(x * x) * _elementwise(lambda v: math.erfc(v) if not math.isnan(v) else math.nan,
                                              np.where(x < 25, x, 0.0))
        xb = np.where(x >= 25, x, 25.0)
        term = np.ones_like(xb)
        total = term
        for k in range(1, 12):
            term = -term * (2 * k - 1) / (2 * xb * xb)
            total = total + term
        out = np.where(x >= 25, total / (xb * math.sqrt(math.pi)), direct)
    return _same_dtype(out, np.asarray(a))


def log_ndtr(a):
    """log of the standard normal CDF: log(erfc(-x/sqrt 2)/2), as log(erfcx(-x/sqrt 2)/2) - x^2/2 where x < -1."""
    x = np.asarray(a, dtype=_F64)
    with np.errstate(all="ignore"):
        t = -x / math.sqrt(2)
        direct = np.log1p(-0.5 * _elementwise(lambda v: math.erfc(v) if not math.isnan(v) else math.nan,
                                               np.where(x >= -1, -t, 0.0)))
        scaled = np.log(erfcx(np.where(x < -1, t, 1.0)) / 2) - x * x / 2
        out = np.where(x < -1, scaled, direct)
    return _same_dtype(out, np.asarray(a))


def ndtri(a):
    """The inverse of the standard normal CDF: sqrt 2 erfinv(2p - 1)."""
    p = np.asarray(a, dtype=_F64)
    with np.errstate(all="ignore"):
        x = math.sqrt(2) * erfinv(2 * p - 1)
        # below the median 2p - 1 loses p's digits: Newton on log ndtr(x) = log p instead, which is exact
        # in the tail (start: the erfinv guess, or -sqrt(-2 log p) where that rounded to -inf)
        lower = (p > 0) & (p < 0.5)
        xi = np.where(lower, np.where(np.isfinite(x), x, -np.sqrt(-2 * np.log(np.where(lower, p, 0.5)))), -1.0)
        target = np.log(np.where(lower, p, 0.5))
        for _ in range(6):
            lcdf = log_ndtr(xi)
            xi = xi - (lcdf - target) * math.sqrt(2 * math.pi) * np.exp(xi * xi / 2 + lcdf)
        x = np.where(lower, xi, x)
    return _same_dtype(x, np.asarray(a))
