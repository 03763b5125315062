"""torch.special: special functions, with gradients.

Most names here are torch's other names for ops glasstorch has elsewhere (``expit`` is ``sigmoid``,
``gammaln`` is ``lgamma``, ``psi`` is ``digamma``, ``multigammaln`` is ``mvlgamma``): they are the
same functions, so they record the same nodes. The rest are torch.special's own ops
(``glasstorch/ops/special.py``), computed in NumPy (``glasstorch/_array/special.py``).

Example::

    >>> import glasstorch as torch
    >>> x = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
    >>> torch.special.ndtr(x)
    tensor([0.5000, 0.8413, 0.9772], grad_fn=<MulBackward1>)
    >>> torch.special.xlogy(x, x)
    tensor([0.0000, 0.0000, 1.3863], grad_fn=<XlogyBackward0>)

The Bessel functions (``bessel_j0``, ``bessel_y1``, ``modified_bessel_k0``, ...), ``airy_ai``,
``spherical_bessel_j0`` and the orthogonal polynomials (``chebyshev_polynomial_t``, ``hermite_polynomial_h``,
``legendre_polynomial_p``, ...) are torch's algorithms in NumPy (``glasstorch/_array/special_cephes.py``),
without gradients, as in torch; ``gammainc``/``gammaincc`` are ``torch.igamma``/``igammac`` (a gradient
for the second argument only, as in torch).
"""
from .._seam import overridable
from ..ops import pointwise as _pw, reduction as _red, special as _sp

__all__ = ["digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammaln", "i0", "i0e",
           "i1", "i1e", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr", "ndtri",
           "polygamma", "psi", "round", "sinc", "softmax", "xlog1py", "xlogy", "zeta", "gammainc", "gammaincc",
           *_sp.SPECIAL_FUNCTIONS]

# the same functions as torch's top level (the same nodes; the top level's objects, which take out=)
from .. import erf, erfinv, exp2, expm1, log1p, digamma, sigmoid as expit, lgamma as gammaln  # noqa: E402
psi = digamma
erfc, i0, sinc, logit, xlogy, polygamma = _sp.erfc, _sp.i0, _sp.sinc, _sp.logit, _sp.xlogy, _sp.polygamma
multigammaln = _sp.mvlgamma
# torch.special's own
erfcx, ndtri, log_ndtr, ndtr = _sp.special_erfcx, _sp.special_ndtri, _sp.special_log_ndtr, _sp.special_ndtr
i0e, i1, i1e, entr = _sp.special_i0e, _sp.special_i1, _sp.special_i1e, _sp.special_entr
xlog1py, zeta = _sp.special_xlog1py, _sp.special_zeta
gammainc, gammaincc = _sp.igamma, _sp.igammac
globals().update(_sp.SPECIAL_FUNCTIONS)   # bessel_j0, ..., airy_ai, chebyshev_polynomial_t, ... (by name)


@overridable    # (torch.special's functions are bindings: a handler is given what the caller gave)
def round(input, *, decimals=0, out=None):
    """torch.special.round: round with ``decimals`` (torch records the decimals overload: RoundBackward1)."""
    if input.dtype.is_floating_point or input.dtype.is_complex:
        return _sp._into(out, _pw._round_decimals(input, decimals=decimals), "round")
    raise NotImplementedError(f'"round_vml_cpu" not implemented for \'{input.dtype._legacy}\'')


@overridable
def softmax(input, dim, *, dtype=None):
    return _red.softmax(input, dim, dtype=dtype)


@overridable
def log_softmax(input, dim, *, dtype=None):
    return _red.log_softmax(input, dim, dtype=dtype)


@overridable
def logsumexp(input, dim, keepdim=False, *, out=None):
    return _sp._into(out, _red.logsumexp(input, dim, keepdim), "logsumexp")

