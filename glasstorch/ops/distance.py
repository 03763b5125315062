"""Distances and norms between tensors: cdist, dist, renorm (torch's ``Distance.cpp`` and ``Normalization``).

==================  ====================================================  ==================================
op                  value                                                 derivative (derivatives.yaml)
==================  ====================================================  ==================================
_cdist_forward      D[..., i, j] = ||x1[..., i, :] - x2[..., j, :]||_p     ``_cdist_backward`` (below)
_cdist_backward     sum_j grad_ij * d||d||_p/dd at d = x1_i - x2_j        not implemented (as torch's)
_euclidean_dist     sqrt(max(0, |x1|^2 - 2 x1 x2^T + |x2|^2)) by one       x1 ratio.sum - ratio x2 (and the
                    matrix product (cdist's fast path for p = 2)          same for x2), ratio = grad / D
_pdist_forward      the distances between the rows i < j of one matrix,   ``_pdist_backward``: the cdist rule,
                    as a flat vector (F.pdist)                            each pair's term to both rows
dist                ||self - other||_p over every element (broadcast)     norm_backward of the difference
renorm              each slice along ``dim`` rescaled to p-norm <=        renorm_backward (below)
                    maxnorm: factor maxnorm / (norm + 1e-7)
==================  ====================================================  ==================================

``torch.cdist`` picks its path as torch does: for p = 2 with ``compute_mode`` asking for the matrix
product (or, by default, when either side has more than 25 rows) it is ``_euclidean_dist`` on the
flattened batch, viewed back (``ViewBackward0``); otherwise ``_cdist_forward`` (``CdistBackward0``),
which computes every difference exactly. The two differ in the last bits, as torch's do.

p = 0 counts the coordinates that differ (no gradient flows), p = inf takes the largest (every tied
coordinate gets the whole gradient, as in torch's kernel).
"""
import math

from .. import _dtype
from .._tensor import Tensor, _wrap_dim
from .._array import xp, zeros_like as _zeros_like
from ._op import method
from .._ops import defop, aten, node_classes_of
from .._seam import overridable
from ._derivatives import norm_backward, not_implemented, sum_to
from .reduction import _vector_norm_kernel

__getattr__ = node_classes_of(__name__)    # (the node classes declared here, by name: TanhBackward0)

__all__ = ["cdist", "dist", "renorm", "pdist"]

_COMPUTE_MODES = {None: 0, "use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
                  "donot_use_mm_for_euclid_dist": 2}


# ---- cdist ----------------------------------------------------------------------------------------------
def _pairwise_differences(x1, x2):
    """d[..., i, j, :] = x1[..., i, :] - x2[..., j, :], the batch dims broadcast."""
    return x1[..., :, None, :] - x2[..., None, :, :]


def _p_norm_last(d, p):
    """The p-norm over the last axis of an array of differences (0, 1, 2, inf or any p > 0)."""
    a = xp.abs(d)
    if p == 0:
        return xp.sum(a != 0, axis=-1).astype(d.dtype)
    if p == 1:
        return xp.sum(a, axis=-1)
    if p == 2:
        return xp.sqrt(xp.sum(a * a, axis=-1))
    if math.isinf(p):
        return xp.max(a, axis=-1) if d.shape[-1] else _zeros_like(d, d.shape[:-1])
    return xp.sum(a ** p, axis=-1) ** (1.0 / p)


def _cdist_checks(x1, x2, p):
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    for name, x in (("X1", x1), ("X2", x2)):
        if x.dtype.kind != "f":
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{_dtype._BY_NUMPY[x.dtype]._legacy}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if x1.dtype != x2.dtype:
        raise RuntimeError(f"expected scalar type {_dtype._BY_NUMPY[x1.dtype]._legacy} but found "
                           f"{_dtype._BY_NUMPY[x2.dtype]._legacy}")


def _cdist_forward_kernel(x1, x2, p, compute_mode=None):
    _cdist_checks(x1, x2, p)
    return _p_norm_last(_pairwise_differences(x1, x2), p).astype(x1.dtype, copy=False)


def _cdist_backward_kernel(grad, x1, x2, p, cdist):
    """d/dx1[..., i, :] = sum_j grad_ij * (the p-norm's derivative at x1_i - x2_j), torch's kernels
    (0 where the distance is 0; for p < 1 also where a coordinate's difference is 0)."""
    d = _pairwise_differences(x1, x2)
    dist = cdist[..., None]
    g = grad[..., None]
    with xp.errstate(divide="ignore", invalid="ignore"):
        if p == 0:
            terms = xp.zeros_like(d)
        elif p == 1:
            terms = g * xp.sign(d)
        elif math.isinf(p):
            terms = g * xp.sign(d) * (xp.abs(d) == dist)
        elif p == 2:
            terms = xp.where(dist == 0, 0, g * d / dist)
        elif p < 2:
            terms = xp.where((dist == 0) | ((d == 0) & (p < 1)), 0,
                             xp.sign(d) * xp.abs(d) ** (p - 1) * g / dist ** (p - 1))
        else:
            terms = xp.where(dist == 0, 0, d * xp.abs(d) ** (p - 2) * g / dist ** (p - 1))
    out = xp.sum(terms, axis=-2)
    # x1 was broadcast against x2's batch: its gradient is summed back to its own shape
    extra = out.ndim - x1.ndim
    out = out.sum(axis=tuple(range(extra))) if extra else out
    keep = tuple(i for i, n in enumerate(x1.shape[:-2]) if n == 1 and out.shape[i] != 1)
    return (out.sum(axis=keep, keepdims=True) if keep else out).astype(x1.dtype, copy=False)




cdist_backward_op = defop("_cdist_backward(Tensor grad, Tensor x1, Tensor x2, float p, Tensor cdist) -> Tensor",
                          _cdist_backward_kernel, node="CdistBackwardBackward0",
                          grad=not_implemented("_cdist_backward"), x1=not_implemented("_cdist_backward"),
                          x2=not_implemented("_cdist_backward"), cdist=not_implemented("_cdist_backward"))
cdist_forward_op = defop(
    "_cdist_forward(Tensor x1, Tensor x2, float p, int? compute_mode) -> Tensor", _cdist_forward_kernel,
    node="CdistBackward0",
    x1=lambda grad, x1, x2, p, result: cdist_backward_op(grad, x1, x2, p, result),
    x2=lambda grad, x1, x2, p, result: cdist_backward_op(aten.transpose(grad, -1, -2), x2, x1, p,
                                                         aten.transpose(result, -1, -2)))


def _euclidean_dist_kernel(x1, x2):
    """torch's: one matrix product of [-2 x1, |x1|^2, 1] and [x2, 1, |x2|^2], clamped at 0, square root."""
    n1 = xp.sum(x1 * x1, axis=-1, keepdims=True)
    n2 = xp.sum(x2 * x2, axis=-1, keepdims=True)
    a = xp.concatenate([x1 * -2, n1, xp.ones_like(n1)], axis=-1)
    b = xp.concatenate([x2, xp.ones_like(n2), n2], axis=-1)
    return xp.sqrt(xp.maximum(a @ xp.swapaxes(b, -1, -2), 0)).astype(x1.dtype, copy=False)


def _euclidean_dist_backward(grad, x1, x2, result):
    """torch's ``_euclidean_dist_backward``: ratio = grad / D (0 where D = 0), then the derivative of the
    distances through the matrix product, for both inputs at once."""
    zero = result == 0
    ratio = aten.masked_fill(grad / aten.masked_fill(result, zero, 1), zero, 0)
    ratio_t = aten.transpose(ratio, -1, -2)
    product = aten.mm if ratio.ndim == 2 else aten.bmm
    return (x1 * aten.sum.dim_IntList(ratio, [-1], True) - product(ratio, x2),
            x2 * aten.sum.dim_IntList(ratio_t, [-1], True) - product(ratio_t, x1))


euclidean_dist_op = defop("_euclidean_dist(Tensor x1, Tensor x2) -> Tensor", _euclidean_dist_kernel,
                          node="EuclideanDistBackward0", joint={("x1", "x2"): _euclidean_dist_backward})


def _flat_batch(x, batch):
    """x expanded to the common batch dims, which are flattened into one (torch's expand + reshape: a
    copy where x was broadcast, a view where not)."""
    expanded = x.expand(batch + tuple(x.shape[-2:]))
    shape = (math.prod(batch),) + tuple(x.shape[-2:])
    if tuple(x.shape[:-2]) != batch:
        return expanded.contiguous().view(shape)
    return expanded.reshape(shape)


@overridable(defaults_by_keyword=True)
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The p-norm distance between each row of ``x1`` (B x P x M) and each row of ``x2`` (B x R x M):
    a B x P x R tensor; the batch dims broadcast."""
    if compute_mode not in _COMPUTE_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    mode = _COMPUTE_MODES[compute_mode]
    _cdist_checks(x1._data, x2._data, p)
    r1, r2 = x1.shape[-2], x2.shape[-2]
    if x1.numel() and x2.numel() and p == 2 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25))):
        from .shape import broadcast_shapes
        batch = tuple(broadcast_shapes(x1.shape[:-2], x2.shape[:-2]))
        if x1.ndim == x2.ndim == 2:
            return euclidean_dist_op(x1, x2).view(batch + (r1, r2))
        # (torch passes a batch of one unflattened; here every batch is flattened to 3-D, one more
        # view node, so that the backward's products are bmm)
        a, b = _flat_batch(x1, batch), _flat_batch(x2, batch)
        return euclidean_dist_op(a, b).view(batch + (r1, r2))
    return cdist_forward_op(x1, x2, float(p), None if compute_mode is None else mode)


# ---- pdist ----------------------------------------------------------------------------------------------
def _pdist_forward_kernel(self, p=2.0):
    rows, cols = _upper_pairs(self.shape[0])
    return _p_norm_last(self[rows] - self[cols], p).astype(self.dtype, copy=False)


def _upper_pairs(n):
    """The pairs i < j in pdist's order (row by row)."""
    return xp.triu_indices(n, 1)


def _pdist_backward_kernel(grad, self, p, pdist):
    """Each pair's gradient reaches both of its rows, with opposite signs: the cdist rule of the matrix
    against itself, with the pair values spread into symmetric n x n matrices (0 on the diagonal)."""
    n = self.shape[0]
    rows, cols = _upper_pairs(n)
    full_grad = _zeros_like(grad, (n, n))
    full_dist = _zeros_like(pdist, (n, n))
    full_grad[rows, cols] = full_grad[cols, rows] = grad
    full_dist[rows, cols] = full_dist[cols, rows] = pdist
    return _cdist_backward_kernel(full_grad, self, self, p, full_dist)


pdist_backward_op = defop("_pdist_backward(Tensor grad, Tensor self, float p, Tensor pdist) -> Tensor",
                          _pdist_backward_kernel, node="PdistBackwardBackward0",
                          grad=not_implemented("_pdist_backward"), self=not_implemented("_pdist_backward"),
                          pdist=not_implemented("_pdist_backward"))
pdist_forward_op = defop("_pdist_forward(Tensor self, float p=2) -> Tensor", _pdist_forward_kernel,
                         node="PdistBackward0",
                         self=lambda grad, self, p, result: pdist_backward_op(grad, self, p, result))


@overridable    # (torch's is a binding: a handler is given what the caller gave)
def pdist(input, p=2):
    """The p-norm distances between the rows of an N x M matrix, pair by pair (i < j): N (N - 1) / 2 values."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.is_floating_point():
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    return pdist_forward_op(input.contiguous(), float(p))


# ---- dist -----------------------------------------------------------------------------------------------
def _dist_kernel(self, other, p=2):
    if self.dtype.kind not in "fc" or other.dtype.kind not in "fc":
        bad = self if self.dtype.kind not in "fc" else other
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. "
                           f"Got {_dtype._BY_NUMPY[bad.dtype]._legacy} instead.")
    from ._op import promote_arrays
    a, b = promote_arrays(self, other)
    return _vector_norm_kernel(a - b, p)


def _dist_grad(grad, self, other, p, result):
    """The norm's gradient at self - other, summed back to self's shape (self and other broadcast: a
    0-dim self gives a 0-dim result the engine would not reduce to)."""
    g = norm_backward(grad, self - other, p, result, None, False)
    return None if g is None else sum_to(g, self.shape)


def _dist_other_grad(grad, self, other, p, result):
    """-(self's gradient). For p = 0 that is undefined (no gradient), and torch's negation of it fails."""
    g = norm_backward(grad, self - other, p, result, None, False)
    if g is None:
        raise RuntimeError("Expected a proper Tensor but got None (or an undefined Tensor in C++) for argument #0 "
                           "'self'")
    return sum_to(-g, other.shape)


dist_op = defop("dist(Tensor self, Tensor other, Scalar p=2) -> Tensor", _dist_kernel, node="DistBackward0",
                self=_dist_grad, other=_dist_other_grad)


@method()
@overridable
def dist(input, other, p=2):
    """||input - other||_p over every element (the two broadcast)."""
    return dist_op(input, other, p)


# ---- renorm ---------------------------------------------------------------------------------------------
def _renorm_norms(self, p, dim):
    axes = tuple(d for d in range(self.ndim) if d != dim)
    return _vector_norm_kernel(self, p, list(axes), True)


def _renorm_kernel(self, p, dim, maxnorm):
    if self.ndim < 2:   # (torch 2.13 says "at least 2 dimensions"; a vector has one slice per element)
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {self.ndim} dimensions")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if self.dtype.kind not in "fc":
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. "
                           f"Got {_dtype._BY_NUMPY[self.dtype]._legacy} instead.")
    dim = _wrap_dim(dim, self.ndim)
    norm = _renorm_norms(self, p, dim)
    factor = xp.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1).astype(self.dtype, copy=False)
    return self * factor


def renorm_backward(grad, self, p, dim, maxnorm):
    """torch's ``renorm_backward``: where a slice's norm exceeded maxnorm the result was
    self * maxnorm / (norm + 1e-7), whose derivative also runs through the norm."""
    ndim = self.ndim
    dim = dim + ndim if dim < 0 else dim
    reduce_dims = [d for d in range(ndim) if d != dim]
    norm = aten.linalg_vector_norm(self, p, reduce_dims, True)
    grad_output = aten.sum.dim_IntList(self * grad, reduce_dims, True)
    nb = norm_backward(grad_output, self, p, norm, reduce_dims, True)
    invnorm = 1 / (norm + 1e-7)
    factor = invnorm * maxnorm
    over = norm > maxnorm
    return (factor * grad - factor * invnorm * nb) * over + grad * ~over


renorm_op = defop("renorm(Tensor self, Scalar p, int dim, Scalar maxnorm) -> Tensor", _renorm_kernel,
                  node="RenormBackward0",
                  self=lambda grad, self, p, dim, maxnorm: renorm_backward(grad, self, p, dim, maxnorm))
renorm__op = defop("renorm_(Tensor(a!) self, Scalar p, int dim, Scalar maxnorm) -> Tensor(a!)", inplace_of=renorm_op)


@method()
@overridable
def renorm(input, p, dim, maxnorm, *, out=None):
    """Each slice ``input.select(dim, i)`` whose p-norm exceeds ``maxnorm`` scaled down to norm maxnorm."""
    if input.ndim >= 2:
        dim = _wrap_dim(dim, input.ndim)
    res = renorm_op(input, p, dim, maxnorm)
    return res if out is None else out.copy_(res)


@overridable
def renorm_(self, p, dim, maxnorm):
    if self.ndim >= 2:
        dim = _wrap_dim(dim, self.ndim)
    return renorm__op(self, p, dim, maxnorm)


Tensor.renorm_ = renorm_
