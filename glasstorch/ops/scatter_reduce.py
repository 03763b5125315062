"""scatter_reduce: src's values combined into self at the positions index gives along dim, by
"sum", "prod", "mean", "amax" or "amin" (with or without self's own value: ``include_self``).

    out[i][index[i][j]] = reduce(self[i][index[i][j]] (if include_self), src[i][j] for each such j)  (dim=1)

The derivative is torch's ``scatter_reduce_backward`` (FunctionsManual.cpp), one rule per reduction:

* sum:  self: grad;  src: grad gathered at index.
* mean: both divided by the number of values averaged into each position.
* prod: the product of the others -- computed as result / value, except for zeros: a position whose
  product holds exactly one zero from src gives that zero the product of the rest (recomputed with the
  zero replaced by 1); with two zeros every gradient there is 0.
* amax/amin: the gradient is shared evenly among the values equal to the result.

Without ``include_self`` the positions written get no gradient for self.

index_reduce (torch's beta ``Tensor.index_reduce``) is the same reduction with one index per slice of
``source`` along ``dim``: ``source``'s slice ``j`` goes to ``self``'s slice ``index[j]``

    out[index[j], :] = reduce(self[index[j], :] (if include_self), source[j, :] for each such j)  (dim=0)

and its derivative (``IndexReduceBackward0``, torch's ``index_reduce_backward``) is scatter_reduce's for
the index spread over ``source``'s shape ("prod", "mean", "amax", "amin"; no "sum": that is index_add).

Where glasstorch differs: the derivative is computed on arrays only, so double backward through
scatter_reduce and index_reduce (create_graph=True) raises NotImplementedError (torch composes it from
differentiable ops).
"""
from .. import _dtype, _warnings
from .._tensor import Tensor, _wrap_dim
from .._array import xp, has_values, on_device_of as _on_device_of, zeros_like as _zeros_like, full_like as _full_like
from ._op import method
from .._ops import defop, node_classes_of
from .._seam import overridable

__getattr__ = node_classes_of(__name__)    # (the node classes declared here, by name: TanhBackward0)

__all__ = ["scatter_reduce", "index_reduce"]

_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")
_OLD_NAMES = {"max": "amax", "min": "amin"}     # still accepted by torch


def _positions(index, dim):
    """The positions ``index`` names in the output: index along dim, the element's own coordinate elsewhere."""
    grids = [_on_device_of(index, g) for g in xp.indices(index.shape, sparse=True)]
    return tuple(index if d == dim else g for d, g in enumerate(grids))


def _head(a, shape):
    """The leading ``shape`` block of ``a`` (src may be larger than index: only its first part is used)."""
    return a[tuple(slice(0, n) for n in shape)]


def _check(self, dim, index, src, reduce):
    if reduce not in _REDUCTIONS and reduce not in _OLD_NAMES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if index.dtype.kind not in "iu":
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")
    if self.dtype != src.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if index.ndim != self.ndim or src.ndim != self.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    for d in range(index.ndim):
        if index.shape[d] > src.shape[d] or (d != dim and index.shape[d] > self.shape[d]):
            raise RuntimeError(f"Expected index {list(index.shape)} to be smaller than self {list(self.shape)} apart "
                               f"from dimension {dim} and to be smaller size than src {list(src.shape)}")
    if index.size and has_values(index) and (int(index.min()) < 0 or int(index.max()) >= self.shape[dim]):
        bad = int(index.max()) if int(index.max()) >= self.shape[dim] else int(index.min())
        raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size {self.shape[dim]}")


def _identity(reduce, dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    big = xp.inf if dtype.kind == "f" else xp.iinfo(dtype).max
    return -big if reduce == "amax" and dtype.kind == "f" else (xp.iinfo(dtype).min if reduce == "amax" else big)


def _scatter_reduce_kernel(self, dim, index, src, reduce, *, include_self=True):
    _check(self, dim, index, src, reduce)
    reduce = _OLD_NAMES.get(reduce, reduce)
    where = _positions(index, dim)
    values = _head(src, index.shape)
    out = self.copy()
    if not include_self:
        out[where] = _identity(reduce, self.dtype)
    if reduce == "mean":
        count = _full_like(self, 1 if include_self else 0, self.shape)
        xp.add.at(out, where, values)
        xp.add.at(count, where, 1)
        count = xp.maximum(count, 1)
        return out / count if self.dtype.kind in "fc" else xp.floor_divide(out, count)
    ufunc = {"sum": xp.add, "prod": xp.multiply, "amax": xp.maximum, "amin": xp.minimum}[reduce]
    ufunc.at(out, where, values)
    return out


def _scatter_add_into(shape, where, values, dtype):
    out = _zeros_like(values, shape, dtype)
    xp.add.at(out, where, values)
    return out


def _on_arrays_only(grad, name):
    """The derivative runs on arrays: a backward that records (create_graph=True) is refused."""
    if isinstance(grad, Tensor):
        raise NotImplementedError(f"glasstorch: double backward through {name} is not implemented "
                                  "(its derivative runs on arrays only)")


def _scatter_reduce_backward(grad, self, dim, index, src, reduce, include_self, result):
    """torch's scatter_reduce_backward, on arrays: (grad of self, grad of src)."""
    _on_arrays_only(grad, "scatter_reduce")
    where = _positions(index, dim)
    src_used = _head(src, index.shape)
    reduce = _OLD_NAMES.get(reduce, reduce)
    if reduce == "sum":
        grad_self, grad_src = grad, grad[where]
    elif reduce == "mean":
        count = _scatter_add_into(self.shape, where, _full_like(grad, 1, index.shape), grad.dtype) + \
            (1 if include_self else 0)
        count = xp.where(count == 0, 1, count)
        grad_self, grad_src = grad / count, grad[where] / count[where]
    elif reduce == "prod":
        masked_self = xp.where(self == 0, 1, self)
        grad_self = grad * _scatter_reduce_kernel(masked_self, dim, index, src, "prod",
                                                  include_self=include_self) / masked_self
        src_zero = src_used == 0
        zeros_there = _scatter_add_into(self.shape, where, src_zero.astype(grad.dtype), grad.dtype)[where]
        single_zero = src_zero & (zeros_there == 1)
        masked_src = src.copy()
        _head(masked_src, index.shape)[single_zero] = 1
        without_the_zero = _scatter_reduce_kernel(self, dim, index, masked_src, "prod", include_self=include_self)
        grad_src = xp.where(single_zero, (grad * without_the_zero)[where],
                            (grad * result)[where] / xp.where(src_zero, 1, src_used))
    else:   # amax / amin: shared among the values equal to the result
        value = result[where]
        self_is_result = (self == result).astype(grad.dtype)
        src_is_result = (src_used == value).astype(grad.dtype)
        ties = self_is_result.copy()   # (self counts among the ties even where include_self=False: torch's)
        xp.add.at(ties, where, src_is_result)
        shared = grad / xp.where(ties == 0, 1, ties)
        grad_self, grad_src = self_is_result * shared, src_is_result * shared[where]
    if not include_self:
        grad_self = grad_self.copy()
        grad_self[where] = 0
    full_src = _zeros_like(grad, src.shape)
    full_src[tuple(slice(0, n) for n in index.shape)] = grad_src
    return grad_self, full_src


scatter_reduce_op = defop(
    "scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, bool include_self=True) -> Tensor",
    _scatter_reduce_kernel, node="ScatterReduceBackward0",
    joint={("self", "src"): lambda grad, self, dim, index, src, reduce, include_self, result:
           _scatter_reduce_backward(grad, self, dim, index, src, reduce, include_self, result)})
# (torch's scatter kernels refuse an input that shares any of self's memory, even all of it)
scatter_reduce__op = defop("scatter_reduce_.two(Tensor(a!) self, int dim, Tensor index, Tensor src, str reduce, *, "
                           "bool include_self=True) -> Tensor(a!)", inplace_of=scatter_reduce_op, refuse_aliases="any")


@method()
@overridable
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """Reduce ``src`` into a copy of ``input`` at ``index`` along ``dim`` (see the module's docstring)."""
    return scatter_reduce_op(input, _wrap_dim(dim, max(input.ndim, 1)), index, src, reduce, include_self=include_self)


@overridable
def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    return scatter_reduce__op(self, _wrap_dim(dim, max(self.ndim, 1)), index, src, reduce, include_self=include_self)


Tensor.scatter_reduce_ = scatter_reduce_



# ---- index_reduce: one index per slice of source ---------------------------------------------------------------
_INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")
_warned_beta = []


def _check_index_reduce(self, dim, index, source, reduce):
    """torch's checks of index_reduce's arguments, in its order and words."""
    if reduce not in _INDEX_REDUCTIONS:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    if index.ndim > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: {index.ndim} with type: "
                         f"{_dtype._BY_NUMPY[index.dtype]._legacy} and size: {list(index.shape)}")
    if index.dtype not in (xp.int64, xp.int32):
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: "
                           f"{_dtype._BY_NUMPY[index.dtype]._legacy}")
    if self.dtype != source.dtype:
        raise RuntimeError(f"index_reduce_(): self ({_dtype._BY_NUMPY[self.dtype]._legacy}) and source "
                           f"({_dtype._BY_NUMPY[source.dtype]._legacy}) must have the same scalar type")
    slices = source.shape[dim] if source.ndim else 1
    if index.size != slices:
        raise RuntimeError(f"index_reduce_(): Number of indices ({index.size}) should be equal to source.size(dim): "
                           f"({slices}), for dim: {dim}")
    others = [n for d, n in enumerate(self.shape) if d != dim] if self.ndim and source.ndim else list(self.shape)
    if others != ([n for d, n in enumerate(source.shape) if d != dim] if self.ndim and source.ndim
                  else list(source.shape)):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {list(self.shape)} source.shape = {list(source.shape)}")
    size = self.shape[dim] if self.ndim else 1
    if index.size and has_values(index) and (int(index.min()) < 0 or int(index.max()) >= size):
        raise IndexError("index out of range in self")


def _spread(index, dim, source):
    """index_reduce's index as scatter_reduce's: ``index[j]`` at every position of ``source``'s slice ``j``."""
    shape = [1] * source.ndim
    shape[dim] = index.size
    return xp.broadcast_to(index.reshape(shape), source.shape)     # (NumPy's function serves CuPy's and meta arrays)


def _as_1d(*arrays):
    """0-d arrays as 1-d ones (torch treats a 0-d self and source as one slice along dim 0)."""
    return tuple(a.reshape(1) if a.ndim == 0 else a for a in arrays)


def _index_reduce_kernel(self, dim, index, source, reduce, *, include_self=True):
    _check_index_reduce(self, dim, index, source, reduce)
    if not _warned_beta:    # (torch's TORCH_WARN_ONCE)
        _warned_beta.append(True)
        _warnings.warn("index_reduce() is in beta and the API may change at any time.", UserWarning)
    flat_self, flat_source, flat_index = _as_1d(self, source, index)
    out = _scatter_reduce_kernel(flat_self, dim, _spread(flat_index, dim, flat_source), flat_source, reduce,
                                 include_self=include_self)
    return out.reshape(self.shape)


def _index_reduce_backward(grad, self, dim, index, source, reduce, include_self, result):
    """torch's index_reduce_backward: scatter_reduce's, the index spread over source."""
    _on_arrays_only(grad, "index_reduce")
    shapes = self.shape, source.shape
    grad, self, source, result, index = _as_1d(grad, self, source, result, index)
    grad_self, grad_source = _scatter_reduce_backward(grad, self, dim, _spread(index, dim, source), source, reduce,
                                                      include_self, result)
    return grad_self.reshape(shapes[0]), grad_source.reshape(shapes[1])


index_reduce_op = defop(
    "index_reduce(Tensor self, int dim, Tensor index, Tensor source, str reduce, *, bool include_self=True) -> Tensor",
    _index_reduce_kernel, node="IndexReduceBackward0", index=None,
    joint={("self", "source"): _index_reduce_backward})
index_reduce__op = defop("index_reduce_(Tensor(a!) self, int dim, Tensor index, Tensor source, str reduce, *, "
                         "bool include_self=True) -> Tensor(a!)", inplace_of=index_reduce_op, refuse_aliases="any")


@method()
@overridable
def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """Reduce the slices of ``source`` along ``dim`` into a copy of ``input``: slice ``j`` into slice
    ``index[j]``, by "prod", "mean", "amax" or "amin" (see the module's docstring)."""
    return index_reduce_op(input, _wrap_dim(dim, max(input.ndim, 1)), index, source, reduce, include_self=include_self)


@overridable
def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    return index_reduce__op(self, _wrap_dim(dim, max(self.ndim, 1)), index, source, reduce, include_self=include_self)


Tensor.index_reduce_ = index_reduce_
