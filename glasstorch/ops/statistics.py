"""Statistics and numerical integration torch writes from other ops (``Correlation.cpp``,
``Integration.cpp``, ``linalg``'s ``logdet``), written here from the same ops, so values, gradients and
graph are torch's:

* ``cov(input, correction=1, fweights=None, aweights=None)``: rows are variables, columns observations;
  (weighted) means removed, ``mm`` of the centred data with its conjugate transpose, divided by the
  degrees of freedom (a warning, and a 0 divisor, when they are not positive);
* ``corrcoef``: ``cov`` divided by the outer product of the standard deviations, clipped to [-1, 1];
* ``trapezoid`` / ``trapz`` / ``cumulative_trapezoid``: the trapezoid rule with spacing ``dx`` or
  sample points ``x``;
* ``histogram``: counts (or weights, or a density) in equal bins or given edges (not differentiable);
* ``logdet``: log det A from ``slogdet``, nan where the determinant is negative.
"""
import math

from .. import _dtype
from .._tensor import Tensor
from .._array import xp
from .._seam import overridable
from .._tensor import _wrap
from .._warnings import warn
from ._op import method
from .special import mul_scalar_op, div_scalar_op   # (a tensor and a number inside torch's C++ composites)

__all__ = ["cov", "corrcoef", "trapezoid", "trapz", "cumulative_trapezoid", "histogram", "logdet"]


@method()
@overridable
def cov(input, *, correction=1, fweights=None, aweights=None):
    """torch.cov: the covariance matrix of the variables in the rows of ``input`` (a vector: one
    variable), with frequency weights ``fweights`` and observation weights ``aweights``."""
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    if input.dtype is _dtype.bool:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    data = input.view(1, -1) if input.ndim < 2 else input
    observations = data.shape[1]
    weights = None
    for name, w in (("fweights", fweights), ("aweights", aweights)):
        if w is None:
            continue
        if w.ndim > 1:
            raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
                               f"{w.ndim} dimensions")
        if w.numel() != observations:
            raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the "
                               f"input but got {w.numel()} != {observations}")
        if name == "fweights" and w.is_floating_point():
            raise RuntimeError(f"cov(): expected fweights to have integral dtype but got fweights with "
                               f"{w.dtype._legacy} dtype")
        if name == "aweights" and not w.is_floating_point():
            raise RuntimeError(f"cov(): expected aweights to have floating point dtype but got aweights with "
                               f"{w.dtype._legacy} dtype")
        if bool((w < 0).any()):
            raise RuntimeError(f"cov(): {name} cannot be negative")
        weights = w if weights is None else weights * w
    if weights is None:
        from .creation import scalar_tensor
        weight_sum = scalar_tensor(observations, dtype=_dtype.int64, device=input.device)
    else:
        weight_sum = weights.sum()
        if not bool(weight_sum != 0):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    average = (data * weights if weights is not None else data).sum(1) / weight_sum
    if weights is not None and correction != 0:
        norm_factor = weight_sum - mul_scalar_op((weights * aweights).sum(), correction) / weight_sum \
            if aweights is not None \
            else weight_sum - correction
    else:
        norm_factor = weight_sum - correction
    if bool(norm_factor <= 0):
        warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
             "observations.")
        norm_factor = norm_factor * 0
    centred = data - average.unsqueeze(1)
    c = centred.mm((centred * weights if weights is not None else centred).t().conj())
    return c.true_divide(norm_factor).squeeze()


@method()
@overridable
def corrcoef(input):
    """torch.corrcoef: Pearson's correlation coefficients of the variables in the rows of ``input``."""
    if input.ndim > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    c = cov(input)
    if c.ndim == 0:
        return c / c            # nan for a nan, inf or 0 variance, 1 otherwise
    d = c.diagonal()
    stddev = (d.real if d.is_complex() else d).sqrt()
    c = c / stddev.view(-1, 1)
    c = c / stddev.view(1, -1)
    if c.is_complex():
        from .pointwise_extra import complex as make_complex
        return make_complex(c.real.clip(-1, 1), c.imag.clip(-1, 1))
    return c.clip(-1, 1)


def _integration_dim(y, dim):
    n = max(y.ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


def _zeros_without(y, dim):
    from .creation import zeros
    return zeros([s for i, s in enumerate(y.shape) if i != dim], dtype=y.dtype, device=y.device)


def _slice(t, dim, start, stop):
    """``t[..., start:stop, ...]`` along ``dim`` (torch's ``slice``: SliceBackward0, empty when out of range)."""
    index = [slice(None)] * t.ndim
    index[dim] = slice(start, stop)
    return t[tuple(index)]


def _spacings(y, x, dim):
    """dx between the sample points ``x`` (viewed to line up with ``y`` along ``dim``)."""
    if x.dtype is _dtype.bool:
        raise RuntimeError("trapezoid: received a bool input for `x` or `y`, but bool is not supported")
    if x.ndim == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError("trapezoid: There must be one `x` value for each sample point")
        sizes = [1] * y.ndim
        sizes[dim] = x.shape[0]
        x = x.view(sizes)
    elif x.ndim < y.ndim:
        x = x.view([1] * (y.ndim - x.ndim) + list(x.shape))
    return _slice(x, dim, 1, None) - _slice(x, dim, 0, -1)


def _check_signature(name, y, x, dx):
    """torch's two signatures: (y, x, *, dim) and (y, *, dx, dim)."""
    if (x is not None and not isinstance(x, Tensor)) or (x is not None and dx is not None):
        got = ", ".join(type(v).__name__ for v in (y, x))
        raise TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but expected one "
                        f"of:\n * (Tensor y, Tensor x, *, int dim = -1)\n * (Tensor y, *, Number dx = 1, int dim = -1)")


@overridable
def trapezoid(y, x=None, *, dx=None, dim=-1):
    """torch.trapezoid: the trapezoid rule along ``dim``, spacing ``dx`` (default 1) or points ``x``."""
    _check_signature("trapezoid", y, x, dx)
    dim = _integration_dim(y, dim)
    if y.shape[dim] == 0:
        return _zeros_without(y, dim)
    if y.dtype is _dtype.bool:
        raise RuntimeError("trapezoid: received a bool input for `y`, but bool is not supported" if x is None else
                           "trapezoid: received a bool input for `x` or `y`, but bool is not supported")
    if isinstance(x, Tensor):
        spacing = _spacings(y, x, dim)
        return div_scalar_op((spacing * (_slice(y, dim, 1, None) + _slice(y, dim, 0, -1))).sum(dim), 2.0)
    step = 1 if dx is None else dx
    if isinstance(step, (complex, bool)):
        raise RuntimeError("trapezoid: Currently, we only support dx as a real number.")
    return mul_scalar_op(y.sum(dim) - mul_scalar_op(y.select(dim, 0) + y.select(dim, -1), 0.5), float(step))


@overridable
def trapz(y, x=None, *, dx=None, dim=-1):
    """torch.trapz: alias of :func:`trapezoid`."""
    _check_signature("trapz", y, x, dx)
    return trapezoid(y, x, dx=dx, dim=dim)


@overridable
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """torch.cumulative_trapezoid: the running trapezoid-rule integral along ``dim`` (one value fewer)."""
    _check_signature("cumulative_trapezoid", y, x, dx)
    dim = _integration_dim(y, dim)
    if y.dtype is _dtype.bool:
        raise RuntimeError("cumulative_trapezoid: received a bool input for `y`, but bool is not supported")
    left, right = _slice(y, dim, 0, -1), _slice(y, dim, 1, None)
    if isinstance(x, Tensor):
        return div_scalar_op((_spacings(y, x, dim) * (left + right)).cumsum(dim), 2.0)
    step = 1 if dx is None else dx
    return mul_scalar_op(left + right, float(step) / 2.0).cumsum(dim)


@method()
@overridable
def histogram(input, bins, *, range=None, weight=None, density=False, out=None):
    """torch.histogram: counts of ``input`` in ``bins`` equal bins over ``range`` (the data's range by
    default) or between the given edges; ``weight`` sums weights instead of ones; ``density`` divides
    by the total and the bin widths. Returns (hist, bin_edges)."""
    from ..return_types import histogram as histogram_result
    if not input.is_floating_point():
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{input.dtype._legacy}'")
    a = input._data
    dtype = a.dtype
    if isinstance(bins, Tensor):
        edges = bins._data.astype(dtype)
    else:
        if bins <= 0:
            raise RuntimeError(f"torch.histogramdd(): expected bin_ct[0] to be at least 1 but got {bins}")
        lo, hi = (range if range is not None else
                  ((float(a.min()), float(a.max())) if a.size else (0.0, 0.0)))
        if lo > hi:
            raise RuntimeError(f"torch.histogramdd(): for dim 0, expected upper bound ({hi}) >= lower bound ({lo})")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = xp.linspace(lo, hi, bins + 1).astype(dtype)
    w = None if weight is None else weight._data
    hist, _ = xp.histogram(a.reshape(-1), bins=edges.astype(xp.float64), weights=None if w is None else w.reshape(-1))
    hist = hist.astype(dtype)
    if density:
        total = hist.sum()
        hist = hist / (total * xp.diff(edges)) if total else hist
    result = (_wrap(hist.astype(dtype, copy=False)), _wrap(edges))
    if out is not None:
        from .._prims_common.wrappers import write_out
        return write_out("histogram", result, out)
    return histogram_result(result)


@method()
@overridable
def logdet(input):
    """torch.logdet: log det A (of each matrix of a batch), nan where the determinant is negative."""
    if input.ndim < 2:
        raise RuntimeError("linalg.slogdet: The input tensor A must have at least 2 dimensions.")
    if input.shape[-1] != input.shape[-2]:
        raise RuntimeError(f"logdet: A must be batches of square matrices, but they are {input.shape[-2]} by "
                           f"{input.shape[-1]} matrices")
    from .. import linalg
    from .pointwise import where
    sign, logabsdet = linalg.slogdet(input)
    if input.is_complex():
        return sign.log() + logabsdet
    return where(sign == -1.0, math.nan, logabsdet)
