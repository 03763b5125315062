"""Helpers that derivative formulas share (torch's ``FunctionsManual.cpp``), under torch's names.

Like the formulas, they are written with operators, ``.shape``/``.ndim``/``.dtype``/``.reshape``
(which arrays and Tensors both have) and aten ops, so they run on arrays in the usual backward and
on Tensors -- recording, for double backward -- when the engine asks for that. A data-dependent
branch (``prod_backward``'s "is there a zero?") reads a 0-d result with ``bool()``, which arrays
and Tensors both answer.

Dims arrive as the op got them (an int, a list, negative or not, None for "all"); ``wrap_dims``
turns them into a sorted tuple of non-negative dims, None meaning every dim.
"""
import math

from .._ops import aten
from .._tensor import _wrap_dim


# ---- shapes and dims -------------------------------------------------------------------------------
def wrap_dims(dim, ndim):
    """``dim`` (None, an int or a sequence; empty means all) as a sorted tuple of dims, or None."""
    if dim is None:
        return None
    if isinstance(dim, int):
        return (_wrap_dim(dim, ndim),)
    if len(dim) == 0:
        return None
    return tuple(sorted(_wrap_dim(d, ndim) for d in dim))


def numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def reduced_numel(sizes, dim):
    """How many elements each output of a reduction over ``dim`` gathers (torch's ``_safe_size``)."""
    if not sizes:
        return 1
    dims = wrap_dims(dim, len(sizes))
    return numel(sizes) if dims is None else numel(sizes[d] for d in dims)


def unsqueeze_multiple(t, dims, ndim):
    """``t`` with a dim of size 1 put back at each of ``dims`` (None: all ``ndim`` dims)."""
    if dims is None:
        return t.reshape((1,) * ndim)
    shape = list(t.shape)
    for d in dims:
        shape.insert(d, 1)
    return t.reshape(tuple(shape))


def sum_to(grad, shape):
    """Sum a broadcast gradient back to ``shape`` (torch's ``at::sum_to``): over the leading dims
    the broadcast added and the dims that were 1."""
    shape = tuple(shape)
    if tuple(grad.shape) == shape:
        return grad
    lead = grad.ndim - len(shape)
    dims = list(range(lead)) + [i + lead for i, s in enumerate(shape) if s == 1 and grad.shape[i + lead] != 1]
    if dims:
        grad = aten.sum.dim_IntList(grad, dims, True)
    if lead or tuple(grad.shape) != shape:
        grad = grad.reshape(shape)
    return grad


def restore_reduced_dims(output, dim, keepdim):
    """A reduction's output reshaped so that it broadcasts against its input again."""
    if keepdim:
        return output
    dims = () if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    total = output.ndim + len(dims)
    shape = [0] * total
    for d in dims:
        shape[d + total if d < 0 else d] = 1
    sizes = iter(output.shape)
    return output.reshape(tuple(s if s else next(sizes) for s in shape))


def _divide(a, b):
    """a / b for Python numbers, as C++ divides doubles (a / 0 is inf, not an exception)."""
    if b == 0:
        return math.nan if a == 0 else math.copysign(math.inf, a)
    return a / b


# ---- sums and means --------------------------------------------------------------------------------
def sum_backward(grad, sizes, dim, keepdim):
    """The gradient of a sum over ``dim``: ``grad`` spread back over the input's ``sizes``."""
    if not keepdim and sizes:
        dims = wrap_dims(dim, len(sizes))
        if dims is not None:
            grad = unsqueeze_multiple(grad, dims, len(sizes))
    return aten.expand(grad, list(sizes))


def mean_backward(grad, sizes, dim, numel, keepdim):
    return sum_backward(grad, sizes, dim, keepdim) / (numel if wrap_dims(dim, len(sizes)) is None
                                                      else reduced_numel(sizes, dim))


def nansum_backward(grad, self, dim, keepdim):
    return sum_backward(grad, self.shape, dim, keepdim) * aten.logical_not(aten.isnan(self))


# ---- selecting reductions (max, amax, median...) -------------------------------------------------------
def evenly_distribute_backward(grad, input, value):
    """max()/min()/median() over everything: the gradient shared evenly by the elements equal to
    the result (NaNs, when the result is NaN)."""
    mask = aten.isnan(input) if bool(aten.isnan(value)) else input == value
    return mask * (grad / aten.sum(mask))


def scale_grad_by_count(grad, mask, dim):
    return (grad / aten.sum.dim_IntList(mask, [] if dim is None else dim, True)) * mask


def gather_with_keepdimed_indices(input, dim, indices, keepdim):
    if not keepdim:
        d = _wrap_dim(dim, indices.ndim + 1)
        indices = unsqueeze_multiple(indices, (d,), indices.ndim + 1)
        out = aten.gather(input, dim, indices)
        return out.reshape(tuple(s for i, s in enumerate(out.shape) if i != d))
    return aten.gather(input, dim, indices)


# ---- products ---------------------------------------------------------------------------------------
def _ones_like_slice(inp, dim):
    """Ones shaped as ``inp`` with ``dim`` of size 1."""
    return aten.zeros_like(aten.slice(inp, dim, 0, 1)) + 1


def prod_safe_zeros_backward(grad, inp, dim):
    """The product of all the other elements along ``dim``, exact when some are zero: an exclusive
    cumprod from each end (for [a, b, c]: [1, a, ab] * [bc, c, 1])."""
    if numel(inp.shape) == 0:
        return aten.expand(grad, list(inp.shape))
    n = inp.shape[dim]
    if n == 1:
        return grad
    ones = _ones_like_slice(inp, dim)
    exclusive_normal = aten.cumprod(aten.cat([ones, aten.slice(inp, dim, 0, n - 1)], dim), dim)
    narrow_reverse = aten.flip(aten.slice(inp, dim, 1, n), [dim])
    exclusive_reverse = aten.flip(aten.cumprod(aten.cat([ones, narrow_reverse], dim), dim), [dim])
    return grad * (exclusive_normal * exclusive_reverse)


def prod_backward(grad, input, result, dim=None, keepdim=False):
    """d prod / d x_i = the product of the others: result / x_i when no element is zero."""
    if input.ndim == 0:
        return grad
    if dim is None:
        if not bool(aten.any(input == 0)):
            return grad * (result / input)
        return prod_safe_zeros_backward(grad, input.reshape((-1,)), 0).reshape(tuple(input.shape))
    dim = _wrap_dim(dim, input.ndim)
    if not keepdim:
        grad, result = unsqueeze_multiple(grad, (dim,), input.ndim), unsqueeze_multiple(result, (dim,), input.ndim)
    if not bool(aten.any(input == 0)):
        return grad * (result / input)
    return prod_safe_zeros_backward(grad, input, dim)


# ---- statistics -------------------------------------------------------------------------------------
def var_backward(grad, self, dim, correction, keepdim):
    """d var = 2 (x - mean) / (n - correction). With no degrees of freedom left (n <= correction)
    over the whole tensor, torch gives nan where x equals the mean and inf elsewhere."""
    correction = 1 if correction is None else correction
    if self.ndim == 0 or dim is None:
        dof = numel(self.shape) - correction
        if dof <= 0:
            infinite = aten.zeros_like(self) + math.inf
            return grad * aten.masked_fill(infinite, self == aten.mean(self), math.nan)
        return (2.0 / dof) * grad * (self - aten.mean(self))
    dims = wrap_dims(dim, self.ndim)
    if not keepdim and self.ndim > 1:
        grad = unsqueeze_multiple(grad, dims, self.ndim)
    factor = _divide(2.0, reduced_numel(self.shape, dims) - correction)
    return factor * grad * (self - aten.mean.dim(self, [] if dims is None else list(dims), True))


def std_backward(result, grad, self, dim, correction, keepdim):
    """std = sqrt(var): var's gradient of grad / (2 std), taken as 0 where std is 0."""
    grad_var = aten.masked_fill(grad / (result * 2), result == 0, 0)
    return var_backward(grad_var, self, dim, correction, keepdim)


def var_mean_backward(grad_var, grad_mean, self, dim, correction, keepdim):
    gself = None
    if grad_var is not None:
        gself = var_backward(grad_var, self, dim, correction, keepdim)
    if grad_mean is not None:
        aux = mean_backward(grad_mean, self.shape, dim, numel(self.shape), keepdim)
        gself = aux if gself is None else gself + aux
    return gself


def std_mean_backward(grad_std, grad_mean, self, std, dim, correction, keepdim):
    gself = None
    if grad_std is not None:
        gself = std_backward(std, grad_std, self, dim, correction, keepdim)
    if grad_mean is not None:
        aux = mean_backward(grad_mean, self.shape, dim, numel(self.shape), keepdim)
        gself = aux if gself is None else gself + aux
    return gself


# ---- norms, logsumexp, softmax -----------------------------------------------------------------------
def norm_backward(grad, self, p, norm, dim, keepdim):
    """The gradient of the p-norm over ``dim``, formula for formula torch's (so its double backward
    and its choices at a zero norm are torch's too)."""
    ndim = self.ndim
    if not keepdim and ndim:
        dims = wrap_dims(dim, ndim)
        grad, norm = unsqueeze_multiple(grad, dims, ndim), unsqueeze_multiple(norm, dims, ndim)
    if p == 0:
        return None                 # a count of nonzeros: no gradient flows
    if p == 1:
        return aten.sgn(self) * grad
    if p == 2:
        return grad * aten.masked_fill(self / norm, norm == 0, 0)
    if math.isinf(p):
        self_abs = aten.abs(self)
        mask = (self_abs == norm) | aten.isnan(self_abs)
        return aten.sgn(self) * ((grad / aten.sum.dim_IntList(mask, [] if dim is None else dim, True)) * mask)
    if p < 1:
        self_scaled = aten.sgn(self) * aten.masked_fill(aten.abs(self) ** (p - 1), self == 0, 0)
        return self_scaled * grad * norm ** (1 - p)
    if p < 2:
        self_scaled = aten.sgn(self) * aten.abs(self) ** (p - 1)
    else:
        self_scaled = self * aten.abs(self) ** (p - 2)
    return self_scaled * aten.masked_fill(grad / norm ** (p - 1), norm == 0, 0)


def logsumexp_backward(grad, self, result, dim, keepdim):
    if not keepdim and self.ndim:
        dims = wrap_dims(dim, self.ndim)
        grad, result = unsqueeze_multiple(grad, dims, self.ndim), unsqueeze_multiple(result, dims, self.ndim)
    return grad * aten.exp(self - result)


def softmax_double_backward(grad, grad_output, dim, output):
    return grad_output * grad - aten.sum.dim_IntList(output * grad_output, [dim], True) * grad - \
        grad_output * aten.sum.dim_IntList(output * grad, [dim], True)


# ---- scans -------------------------------------------------------------------------------------------
def reversed_cumsum(w, dim):
    return aten.flip(aten.cumsum(aten.flip(w, [dim]), dim), [dim])


def cumsum_backward(grad, dim):
    if numel(grad.shape) <= 1 or grad.shape[dim] == 1:
        return grad
    return reversed_cumsum(grad, dim)


def cumprod_backward(grad, input, dim, output):
    """d out_j / d x_k = prod_{i <= j, i != k} x_i. Without zeros that is out_j / x_k (one reversed
    cumsum); with zeros, torch's exact O(n^2) form: for each k, the products with x_k left out."""
    if numel(input.shape) <= 1:
        return grad
    dim = _wrap_dim(dim, input.ndim)
    n = input.shape[dim]
    if n == 1:
        return grad
    if not bool(aten.any(input == 0)):
        return reversed_cumsum(output * grad, dim) / input
    ones = _ones_like_slice(input, dim)
    parts = []
    for k in range(n):
        if k == 0:
            omitted = aten.cat([ones, aten.cumprod(aten.slice(input, dim, 1, n), dim)], dim)
        else:
            until_k = aten.prod.dim_int(aten.slice(input, dim, 0, k), dim, True)
            if k == n - 1:
                omitted = until_k
            else:
                omitted = aten.cat([until_k, until_k * aten.cumprod(aten.slice(input, dim, k + 1, n), dim)], dim)
        parts.append(aten.sum.dim_IntList(aten.slice(grad, dim, k, n) * omitted, [dim], True))
    return aten.cat(parts, dim)
