"""Reductions with torch's dim/keepdim conventions, the softmax family, scans and sorting.

Each op is declared once with ``defop`` (torch's schema, a kernel on arrays, the node torch records
and one formula per differentiable input, torch's ``derivatives.yaml`` entry); the formulas' shared
pieces (``sum_backward``, ``var_backward``, ``norm_backward``...) are in ``_derivatives.py`` under
torch's names. The public functions below parse torch's argument forms -- and NumPy's ``axis=`` /
``keepdims=``, which torch's argument parser also takes -- and call the ops.
"""
import builtins
import math
import warnings

from .. import _checks, _dtype, _ops, return_types   # (_ops._ARRAY_TYPES, read at each call: it grows when CuPy is imported)
from .._tensor import Tensor, _wrap_dim
from .._array import (xp, row_major, sum_ends, asarray, has_values, like_operands, array_types as _array_types,
                      asarray_like as _asarray_like, arange_like as _arange_like, zeros_like as _zeros_like,
                      full_like as _full_like)
from .._ops import defop, aten, node_classes_of
from .._seam import overridable
from ._op import method, computed_into_self
from .pointwise import maximum, minimum
from ._derivatives import (not_implemented, sum_backward, mean_backward, nansum_backward, evenly_distribute_backward,
                           scale_grad_by_count, restore_reduced_dims, gather_with_keepdimed_indices, prod_backward,
                           var_backward, std_backward, var_mean_backward, std_mean_backward, norm_backward,
                           logsumexp_backward, softmax_double_backward, cumsum_backward, cumprod_backward)

__getattr__ = node_classes_of(__name__)    # (the node classes declared here, by name: TanhBackward0)

_DTYPE_OF = _dtype._BY_NUMPY

# What glasstorch (torch) has at its top level from this family; the other public functions here are
# Tensor methods only (x.view(...)) or torch.linalg's.
__all__ = ["sum", "nansum", "mean", "nanmean", "prod", "max", "min", "amax", "amin", "aminmax", "argmax",
           "argmin", "var", "std", "var_mean", "std_mean", "norm", "logsumexp", "softmax", "log_softmax",
           "cumsum", "cumprod", "cummax", "cummin", "any", "all", "count_nonzero", "sort", "argsort", "topk",
           "kthvalue", "median", "mode", "unique", "bincount", "histc", "searchsorted", "bucketize", "nanmedian",
           "diff", "quantile", "nanquantile", "isin"]


# ---- argument forms -------------------------------------------------------------------------------
def _numpy_names(fn, names, dim, keepdim):
    """NumPy's ``axis=`` and ``keepdims=``, which torch's argument parser takes for ``dim`` and
    ``keepdim`` (d2l writes ``X.sum(axis=0, keepdims=True)``)."""
    for name, value in names.items():
        if name == "axis":
            dim = value
        elif name == "keepdims":
            keepdim = value
        else:
            raise TypeError(f"{fn}() got an unexpected keyword argument '{name}'")
    return dim, keepdim


def _reduced(a, dtype=None):
    """A reduction's result as an array laid out row-major, as torch allocates it (NumPy keeps the
    input's layout: a sum over a permuted tensor would come back permuted, and a later view() would
    fail where torch's works)."""
    return row_major(asarray(a, dtype=dtype))


def _required_dim(fn, dim):
    """A dim torch requires (``dim`` defaults to None here only so that NumPy's ``axis=`` can give it)."""
    if dim is None:
        raise TypeError(f'{fn}() missing 1 required positional arguments: "dim"')


def _dim_list(dim):
    """An ``int[1]`` argument as torch passes it on: a tuple (``sum(x, 1)`` saves ``(1,)``)."""
    return (dim,) if isinstance(dim, int) else tuple(dim)


def _axes(dim, ndim):
    """The axes a kernel reduces over: None for all. A 0-dim tensor accepts dim 0 and -1 (as torch
    does) and has no axis to reduce: ()."""
    if dim is None:
        return None
    if isinstance(dim, int):
        d = _wrap_dim(dim, ndim)
        return (d,) if ndim else ()
    n = len(dim)
    if n == 1:                      # the common case, kept short: sum(x, 1) passes (1,)
        d = _wrap_dim(dim[0], ndim)
        return (d,) if ndim else ()
    if n == 0:
        return None
    axes = tuple(_wrap_dim(d, ndim) for d in dim)
    if len(set(axes)) != len(axes):
        for i, a in enumerate(axes):
            if a in axes[:i]:
                raise RuntimeError(f"dim {a} appears multiple times in the list of dims")
    return axes if ndim else ()


def _one_dim(fn, dim):
    """A reduction that takes one dim only (prod, max...): torch's parser refuses a tuple."""
    if not isinstance(dim, int):
        raise TypeError(f"{fn}() received an invalid combination of arguments - got (dim={type(dim).__name__}, ), "
                        f"but expected one of: (Tensor input, int dim, bool keepdim)")
    return dim


def _accumulate_dtype(a, dtype):
    """The dtype a sum/prod/cumsum computes in: the one asked for, else int64 for bools and ints."""
    if dtype is not None:
        return dtype.numpy_dtype
    return "int64" if a.dtype.kind in "biu" else None


def _is_float(a):
    return a.dtype.kind in "fc" or _dtype.is_bfloat16_numpy(a.dtype)


# ==========================================================================================================
# sum, nansum, mean, nanmean, prod
# ==========================================================================================================
def _sum_kernel(self, *, dtype=None):
    return _reduced(self.sum(dtype=_accumulate_dtype(self, dtype)))


def _ends(axes, ndim):
    """(lead, trail) where ``axes`` are the first ``lead`` and the last ``trail`` dims and leave some between
    them; else None."""
    ax = sorted(axes)
    lead = 0
    while lead < len(ax) and ax[lead] == lead:
        lead += 1
    trail = len(ax) - lead
    return (lead, trail) if lead + trail < ndim and ax[lead:] == list(range(ndim - trail, ndim)) else None


def _sum_dim_kernel(self, dim, keepdim=False, *, dtype=None):
    axes = _axes(dim, self.ndim)
    ends = _ends(axes, self.ndim) if axes and dtype is None and self.dtype.char in "fd" else None
    if ends is not None:                          # (as products with ones where that pays: see sum_ends)
        r = _reduced(sum_ends(self, *ends))
        return r.reshape(tuple(1 if i in axes else n for i, n in enumerate(self.shape))) if keepdim else r
    return _reduced(self.sum(axis=axes, keepdims=keepdim, dtype=_accumulate_dtype(self, dtype)))


def _nansum_kernel(self, dim=None, keepdim=False, *, dtype=None):
    return _reduced(xp.nansum(self, axis=_axes(dim, self.ndim), keepdims=keepdim,
                                dtype=_accumulate_dtype(self, dtype)))


def _mean_dtype(self, dtype):
    if dtype is not None:
        if not (dtype.is_floating_point or dtype.is_complex):
            raise RuntimeError(f"mean(): could not infer output dtype. Optional dtype must be either a floating point "
                               f"or complex dtype. Got: {dtype._legacy}")
        return dtype.numpy_dtype
    if not _is_float(self):
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {_DTYPE_OF[self.dtype]._legacy}")
    return self.dtype


def _mean_of(self, axes, keepdim, dtype):
    if self.size:
        return _reduced(self.mean(axis=axes, keepdims=keepdim, dtype=dtype))
    with xp.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)    # the mean of nothing is nan, silently, as in torch
        return _reduced(self.mean(axis=axes, keepdims=keepdim, dtype=dtype))


def _mean_kernel(self, *, dtype=None):
    return _mean_of(self, None, False, _mean_dtype(self, dtype))


def _mean_dim_kernel(self, dim, keepdim=False, *, dtype=None):
    return _mean_of(self, _axes(dim, self.ndim), keepdim, _mean_dtype(self, dtype))


def _prod_kernel(self, *, dtype=None):
    return _reduced(self.prod(dtype=_accumulate_dtype(self, dtype)))


def _prod_dim_kernel(self, dim, keepdim=False, *, dtype=None):
    d = _wrap_dim(dim, self.ndim)
    if not self.ndim:
        return self.astype(_accumulate_dtype(self, dtype) or self.dtype)
    return _reduced(self.prod(axis=d, keepdims=keepdim, dtype=_accumulate_dtype(self, dtype)))


sum_op = defop("sum(Tensor self, *, ScalarType? dtype=None) -> Tensor", _sum_kernel, node="SumBackward0",
               self=lambda grad, self_sizes: aten.expand(grad, list(self_sizes)))
sum_dim_op = defop("sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
                   _sum_dim_kernel, node="SumBackward1",
                   self=lambda grad, self_sizes, dim, keepdim: sum_backward(grad, self_sizes, dim, keepdim))
nansum_op = defop("nansum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
                  _nansum_kernel, node="NansumBackward0",
                  self=lambda grad, self, dim, keepdim: nansum_backward(grad, self, dim, keepdim))
mean_op = defop("mean(Tensor self, *, ScalarType? dtype=None) -> Tensor", _mean_kernel, node="MeanBackward0",
                self=lambda grad, self_sizes, self_numel: aten.expand(grad, list(self_sizes)) / self_numel)
mean_dim_op = defop("mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
                    _mean_dim_kernel, node="MeanBackward1",
                    self=lambda grad, self_sizes, dim, self_numel, keepdim: mean_backward(
                        grad, self_sizes, dim, self_numel, keepdim))
prod_op = defop("prod(Tensor self, *, ScalarType? dtype=None) -> Tensor", _prod_kernel, node="ProdBackward0",
                self=lambda grad, self, result: prod_backward(grad, self, result))
prod_dim_op = defop("prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
                    _prod_dim_kernel, node="ProdBackward1",
                    self=lambda grad, self, result, dim, keepdim: prod_backward(grad, self, result, dim, keepdim))


def _whole_or_dims(whole_op, dims_op, input, dim, keepdim, dtype):
    """torch's two overloads of sum and mean: over every element (``aten.sum.default``), or over
    ``dim`` (``aten.sum.dim_IntList``, which also serves keepdim without a dim: every dim kept as 1)."""
    if dim is None and not keepdim:
        return whole_op(input, dtype=dtype)
    return dims_op(input, None if dim is None else _dim_list(dim), keepdim, dtype=dtype)


@method()
@overridable
def sum(input, dim=None, keepdim=False, *, dtype=None, **numpy_names):
    """The sum over ``dim`` (an int, a list of ints, or None for every element)."""
    if not isinstance(input, Tensor):  # torch.sum([1, 2]): torch's TypeError (not builtins.sum)
        raise _checks.not_a_tensor("sum", input)
    if numpy_names:
        dim, keepdim = _numpy_names("sum", numpy_names, dim, keepdim)
    return _whole_or_dims(sum_op, sum_dim_op, input, dim, keepdim, dtype)


@method()
@overridable
def nansum(input, dim=None, keepdim=False, *, dtype=None, **numpy_names):
    """The sum, NaNs counted as zero."""
    if numpy_names:
        dim, keepdim = _numpy_names("nansum", numpy_names, dim, keepdim)
    return nansum_op(input, None if dim is None else _dim_list(dim), keepdim, dtype=dtype)


@method()
@overridable
def mean(input, dim=None, keepdim=False, *, dtype=None, **numpy_names):
    """The mean over ``dim`` (floating point and complex inputs, or ``dtype=`` one)."""
    if numpy_names:
        dim, keepdim = _numpy_names("mean", numpy_names, dim, keepdim)
    return _whole_or_dims(mean_op, mean_dim_op, input, dim, keepdim, dtype)


@method()
@overridable
def nanmean(input, dim=None, keepdim=False, *, dtype=None, **numpy_names):
    """The mean of the non-NaN elements: ``nansum / (number of non-NaN)``, torch's composite."""
    if numpy_names:
        dim, keepdim = _numpy_names("nanmean", numpy_names, dim, keepdim)
    if not _is_float(input._data):
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{input.dtype._legacy}")
    counted = sum(aten.logical_not(aten.isnan(input)), dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / counted


@method()
@overridable
def prod(input, dim=None, keepdim=False, *, dtype=None, **numpy_names):
    """The product over one ``dim``, or over every element."""
    if numpy_names:
        dim, keepdim = _numpy_names("prod", numpy_names, dim, keepdim)
    if dim is None:
        return prod_op(input, dtype=dtype)
    return prod_dim_op(input, _one_dim("prod", dim), keepdim, dtype=dtype)


# ==========================================================================================================
# max, min, amax, amin, aminmax, argmax, argmin, and the value-selecting backward they share
# ==========================================================================================================
def _nan_first(a, is_max):
    """torch propagates NaN in max/min: make NaNs win the argmax/argmin."""
    if a.dtype.kind == "f" and has_values(a) and xp.isnan(a).any():
        return xp.where(xp.isnan(a), xp.inf if is_max else -xp.inf, a)
    return a


def _extreme_kernel(is_max):
    name = "max" if is_max else "min"

    def kernel(self):
        if self.size == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify "
                               f"the reduction dim with the 'dim' argument.")
        return _reduced(self.max() if is_max else self.min())
    kernel.__name__ = f"_{name}_kernel"
    return kernel


def _extreme_dim_kernel(is_max):
    name = "max" if is_max else "min"
    find = xp.argmax if is_max else xp.argmin

    def kernel(self, dim, keepdim=False):
        d = _wrap_dim(dim, self.ndim)
        if not self.ndim:
            return self.copy(), _zeros_like(self, (), "int64")
        if self.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
        idx = find(_nan_first(self, is_max), axis=d, keepdims=True)
        values = xp.take_along_axis(self, idx, axis=d)
        if not keepdim:
            values, idx = values.squeeze(d), idx.squeeze(d)
        return row_major(values), row_major(idx.astype("int64", copy=False))
    kernel.__name__ = f"_{name}_dim_kernel"
    return kernel


def _value_selecting_reduction_backward_kernel(grad, dim, indices, sizes, keepdim):
    """The gradient of a value-selecting reduction: ``grad`` put where the ``indices`` point."""
    out = _zeros_like(grad, tuple(sizes))
    if not sizes:
        out[...] = grad
        return out
    d = _wrap_dim(dim, len(sizes))
    if not keepdim:
        grad, indices = xp.expand_dims(grad, d), xp.expand_dims(indices, d)
    xp.put_along_axis(out, indices, grad, axis=d)
    return out


value_selecting_reduction_backward_op = defop(
    "value_selecting_reduction_backward(Tensor grad, int dim, Tensor indices, SymInt[] sizes, bool keepdim) -> Tensor",
    _value_selecting_reduction_backward_kernel, node="ValueSelectingReductionBackwardBackward0",
    grad=lambda grad, dim, indices, keepdim: gather_with_keepdimed_indices(grad, dim, indices, keepdim),
    indices=None)


def _select_backward(grad, self_sizes, dim, indices, keepdim):
    """max(dim), min(dim), median(dim), kthvalue, mode: the gradient goes where the index points."""
    return aten.value_selecting_reduction_backward(grad, dim, indices, self_sizes, keepdim)


def _amax_kernel(is_max):
    name = "amax" if is_max else "amin"

    def kernel(self, dim=(), keepdim=False):
        axes = _axes(dim, self.ndim)
        if self.size == 0:
            if axes is None:
                raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                                   f"Specify the reduction dim with the 'dim' argument.")
            for d in (dim if isinstance(dim, (list, tuple)) else [dim]):   # (named as given, as torch does)
                if self.shape[d] == 0:
                    raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
        return _reduced((xp.max if is_max else xp.min)(self, axis=axes, keepdims=keepdim))
    kernel.__name__ = f"_{name}_kernel"
    return kernel


def _aminmax_kernel(self, *, dim=None, keepdim=False):
    axes = None if dim is None else _axes(dim, self.ndim)
    if self.size == 0 and (axes is None or builtins.any(self.shape[a] == 0 for a in axes)):
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                           "identity.")
    if dim is None and keepdim:
        shape = (1,) * self.ndim
        return _reduced(self.min()).reshape(shape), asarray(self.max()).reshape(shape)
    return (asarray(xp.min(self, axis=axes, keepdims=keepdim)),
            _reduced(xp.max(self, axis=axes, keepdims=keepdim)))


def _amax_backward(grad, self, result, dim, keepdim):
    g = scale_grad_by_count(restore_reduced_dims(grad, dim, keepdim),
                            restore_reduced_dims(result, dim, keepdim) == self, dim)
    return g if g.ndim == self.ndim else g.reshape(tuple(self.shape))   # (a 0-dim input's dim came back)


def _aminmax_backward(grads, self, dim, keepdim, min, max):
    """torch's aminmax_backward: amin's and amax's gradients, summed."""
    dims = () if dim is None else (dim,)
    if dim is None and keepdim:       # the outputs kept every dim (as size 1): nothing to restore
        dims, keepdim = (), True
    gself = None
    for g, value in zip(grads, (min, max)):
        if g is not None:
            part = _amax_backward(g, self, value, dims, keepdim)
            gself = part if gself is None else gself + part
    return gself


def _arg_extreme_kernel(is_max):
    name = "argmax" if is_max else "argmin"
    find = xp.argmax if is_max else xp.argmin

    def kernel(self, dim=None, keepdim=False):
        a = _nan_first(self, is_max)
        if dim is None:
            if a.size == 0:
                raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
            r = asarray(find(a))
            return r.reshape((1,) * a.ndim) if keepdim else r
        d = _wrap_dim(dim, a.ndim)
        if not a.ndim:
            return _zeros_like(a, (), "int64")
        if a.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
        return _reduced(find(a, axis=d, keepdims=keepdim))
    kernel.__name__ = f"_{name}_kernel"
    return kernel


max_op = defop("max(Tensor self) -> Tensor", _extreme_kernel(True), node="MaxBackward1",
               self=lambda grad, self, result: evenly_distribute_backward(grad, self, result))
min_op = defop("min(Tensor self) -> Tensor", _extreme_kernel(False), node="MinBackward1",
               self=lambda grad, self, result: evenly_distribute_backward(grad, self, result))
max_dim_op = defop("max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
                   _extreme_dim_kernel(True), node="MaxBackward0", self=_select_backward)
min_dim_op = defop("min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
                   _extreme_dim_kernel(False), node="MinBackward0", self=_select_backward)
amax_op = defop("amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", _amax_kernel(True),
                node="AmaxBackward0", self=_amax_backward)
amin_op = defop("amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", _amax_kernel(False),
                node="AminBackward0", self=_amax_backward)
aminmax_op = defop("aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max)",
                   _aminmax_kernel, node="AminmaxBackward0", self=_aminmax_backward)
argmax_op = defop("argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", _arg_extreme_kernel(True))
argmin_op = defop("argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", _arg_extreme_kernel(False))


def _extreme(fn, input, dim, keepdim, op, dim_op):
    """torch.max/min: over everything, along one dim (values and indices), or -- given a tensor --
    the elementwise maximum/minimum."""
    if isinstance(dim, Tensor):
        return (maximum if op is max_op else minimum)(input, dim)
    if dim is None:
        if keepdim:
            raise TypeError(f"{fn}() received an invalid combination of arguments - got (Tensor, keepdim=bool), "
                            f"but expected one of: (Tensor input, int dim, bool keepdim)")
        return op(input)
    values, indices = dim_op(input, _one_dim(fn, dim), keepdim)
    return getattr(return_types, fn)((values, indices))


@method()
@overridable
def max(input, dim=None, keepdim=False, **numpy_names):
    """The largest element; along ``dim``, the largest values and their indices; given a tensor,
    the elementwise maximum."""
    if numpy_names:
        dim, keepdim = _numpy_names("max", numpy_names, dim, keepdim)
    return _extreme("max", input, dim, keepdim, max_op, max_dim_op)


@method()
@overridable
def min(input, dim=None, keepdim=False, **numpy_names):
    """The smallest element; along ``dim``, the smallest values and their indices; given a tensor,
    the elementwise minimum."""
    if numpy_names:
        dim, keepdim = _numpy_names("min", numpy_names, dim, keepdim)
    return _extreme("min", input, dim, keepdim, min_op, min_dim_op)


@method()
@overridable
def amax(input, dim=(), keepdim=False, **numpy_names):
    """The largest values over ``dim`` (all dims by default); ties share the gradient evenly."""
    if numpy_names:
        dim, keepdim = _numpy_names("amax", numpy_names, dim, keepdim)
    return amax_op(input, _dim_list(dim), keepdim)


@method()
@overridable
def amin(input, dim=(), keepdim=False, **numpy_names):
    """The smallest values over ``dim`` (all dims by default); ties share the gradient evenly."""
    if numpy_names:
        dim, keepdim = _numpy_names("amin", numpy_names, dim, keepdim)
    return amin_op(input, _dim_list(dim), keepdim)


@method()
@overridable
def aminmax(input, *, dim=None, keepdim=False):
    """(min, max) in one call: torch.return_types.aminmax."""
    low, high = aminmax_op(input, dim=dim, keepdim=keepdim)
    return return_types.aminmax((low, high))


@method()
@overridable
def argmax(input, dim=None, keepdim=False, **numpy_names):
    """The index of the first largest element (NaN counts as the largest, as in torch)."""
    if numpy_names:
        dim, keepdim = _numpy_names("argmax", numpy_names, dim, keepdim)
    return argmax_op(input, dim, keepdim)


@method()
@overridable
def argmin(input, dim=None, keepdim=False, **numpy_names):
    """The index of the first smallest element (NaN counts as the smallest, as in torch)."""
    if numpy_names:
        dim, keepdim = _numpy_names("argmin", numpy_names, dim, keepdim)
    return argmin_op(input, dim, keepdim)


# ==========================================================================================================
# var, std, var_mean, std_mean
# ==========================================================================================================
def _moments_kernel(name, is_std, family="std and var"):
    """var/std (and the first output of var_mean/std_mean): ``name`` words the warning, ``family``
    the dtype error, as torch's do."""
    def kernel(self, dim=None, *, correction=None, keepdim=False):
        if not _is_float(self):
            raise RuntimeError(f"{family} only support floating point and complex dtypes")
        c = 1 if correction is None else correction
        axes = _axes(dim, self.ndim)
        n = self.size if axes is None else int(xp.prod([self.shape[a] for a in axes]))
        if n - c <= 0:
            warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than "
                          f"the reduction factor (input numel divided by output numel).", UserWarning, stacklevel=5)
            v = _full_like(self, xp.nan, xp.sum(self, axis=axes, keepdims=keepdim).shape)
        else:
            v = xp.var(self, axis=axes, keepdims=keepdim, ddof=c)
        if is_std:
            v = xp.sqrt(v)
        return _reduced(v, dtype=self.dtype)
    return kernel


_var_kernel, _std_kernel = _moments_kernel("var", False), _moments_kernel("std", True)


def _with_mean(name, is_std):
    moment = _moments_kernel(name.split("_")[0], is_std, name)

    def kernel(self, dim=None, *, correction=None, keepdim=False):
        first = moment(self, dim, correction=correction, keepdim=keepdim)
        return first, _mean_of(self, _axes(dim, self.ndim), keepdim, self.dtype)
    return kernel


var_op = defop("var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> "
               "Tensor",
               _var_kernel, node="VarBackward0",
               self=lambda grad, self, dim, correction, keepdim: var_backward(grad, self, dim, correction, keepdim))
std_op = defop("std.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> "
               "Tensor",
               _std_kernel, node="StdBackward0",
               self=lambda grad, self, result, dim, correction, keepdim: std_backward(
                   result, grad, self, dim, correction, keepdim))
var_mean_op = defop("var_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, "
                    "bool keepdim=False) -> (Tensor, Tensor)", _with_mean("var_mean", False), node="VarMeanBackward0",
                    self=lambda grads, self, dim, correction, keepdim: var_mean_backward(
                        grads[0], grads[1], self, dim, correction, keepdim))
std_mean_op = defop("std_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, "
                    "bool keepdim=False) -> (Tensor, Tensor)", _with_mean("std_mean", True), node="StdMeanBackward0",
                    self=lambda grads, self, result0, dim, correction, keepdim: std_mean_backward(
                        grads[0], grads[1], self, result0, dim, correction, keepdim))

_UNSET = object()


def _correction_args(fn, input, dim, unbiased, keepdim, correction):
    """torch's two forms, ``(dim, unbiased, keepdim)`` and ``(dim, *, correction, keepdim)``, as the
    (dim, correction) the op takes. Called with no options at all, torch leaves correction unset."""
    if isinstance(dim, bool):            # var(input, unbiased)
        if unbiased is not None:
            raise TypeError(f"{fn}() received an invalid combination of arguments - got (Tensor, bool, bool)")
        dim, unbiased = _UNSET, dim
    if correction is not _UNSET:
        if unbiased is not None:
            raise TypeError(f"{fn}() received an invalid combination of arguments - got (correction=int, "
                            f"unbiased=bool), but expected one of: (Tensor input, tuple of ints dim, bool unbiased, "
                            f"bool keepdim) or (Tensor input, tuple of ints dim, *, Number correction, bool keepdim)")
    elif unbiased is not None:
        correction = 1 if unbiased else 0
    elif dim is _UNSET and not keepdim:
        correction = None
    else:
        correction = 1
    dim = None if dim is _UNSET or dim is None else _dim_list(dim)
    return dim, correction


def _var_like(fn, op, input, dim, unbiased, keepdim, correction, numpy_names):
    if numpy_names:
        dim, keepdim = _numpy_names(fn, numpy_names, None if dim is _UNSET else dim, keepdim)
    dim, correction = _correction_args(fn, input, dim, unbiased, keepdim, correction)
    return op(input, dim, correction=correction, keepdim=keepdim)


@method()
@overridable
def var(input, dim=_UNSET, unbiased=None, keepdim=False, *, correction=_UNSET, **numpy_names):
    """The variance over ``dim``: ``sum((x - mean)^2) / (n - correction)`` (correction 1 by default)."""
    return _var_like("var", var_op, input, dim, unbiased, keepdim, correction, numpy_names)


@method()
@overridable
def std(input, dim=_UNSET, unbiased=None, keepdim=False, *, correction=_UNSET, **numpy_names):
    """The standard deviation over ``dim``: ``sqrt(var)``."""
    return _var_like("std", std_op, input, dim, unbiased, keepdim, correction, numpy_names)


@overridable
def var_mean(input, dim=_UNSET, unbiased=None, keepdim=False, *, correction=_UNSET, **numpy_names):
    """(var, mean) in one call, one node: VarMeanBackward0."""
    return _var_like("var_mean", var_mean_op, input, dim, unbiased, keepdim, correction, numpy_names)


@overridable
def std_mean(input, dim=_UNSET, unbiased=None, keepdim=False, *, correction=_UNSET, **numpy_names):
    """(std, mean) in one call, one node: StdMeanBackward0."""
    return _var_like("std_mean", std_mean_op, input, dim, unbiased, keepdim, correction, numpy_names)


# ==========================================================================================================
# norms, logsumexp
# ==========================================================================================================
def _vector_norm_kernel(self, ord=2, dim=None, keepdim=False, *, dtype=None):
    if not _is_float(self):
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_DTYPE_OF[self.dtype]._legacy}")
    if dtype is not None:
        self = self.astype(dtype.numpy_dtype)
    axes = _axes(dim, self.ndim)
    # (a real x's 2-norm needs no |x|: x * x is |x|^2 exactly -- a pass and a temporary fewer, which
    # clip_grad_norm_ pays on every gradient)
    a = self if ord == 2 and self.dtype.kind == "f" else xp.abs(self)
    if ord != 0 and (a.size if axes is None else math.prod(a.shape[i] for i in axes)) == 1:
        # one element per result: torch's kernel gives its |x| as it is, with no power and root to round
        # it (by an ulp: max(norm, x) then picked one side of a tie, fuzz seed 796212396043) or overflow
        v = xp.sum(xp.abs(a), axis=axes, keepdims=keepdim)
    elif ord == 2 and axes is None and type(a) is xp.ndarray and a.dtype.char in "fd" and a.flags.c_contiguous:
        # the whole of a row-major float array: its dot product with itself, one BLAS pass and no temporary
        # (clip_grad_norm_ on an LSTM's (1024, 256) gradient: 102 -> ~25 us a call, stop 35)
        flat = a.reshape(-1)
        v = xp.sqrt(xp.dot(flat, flat))
        if keepdim:
            v = xp.reshape(v, (1,) * a.ndim)
    elif ord == 2:
        v = xp.sqrt(xp.sum(a * a, axis=axes, keepdims=keepdim))
    elif ord == 1:
        v = xp.sum(a, axis=axes, keepdims=keepdim)
    elif ord == math.inf:
        v = xp.max(a, axis=axes, keepdims=keepdim)
    elif ord == -math.inf:
        v = xp.min(a, axis=axes, keepdims=keepdim)
    elif ord == 0:
        v = xp.sum(a != 0, axis=axes, keepdims=keepdim)
    else:
        v = xp.sum(a ** ord, axis=axes, keepdims=keepdim) ** (1.0 / ord)
    return _reduced(v, dtype=a.dtype)


def _logsumexp_kernel(self, dim, keepdim=False):
    if not _is_float(self):
        self = self.astype(_dtype.get_default_dtype().numpy_dtype)
    if isinstance(dim, (list, tuple)) and not dim and self.ndim:   # torch 2.13 fails on it, so do we
        raise RuntimeError(f"output with shape [] doesn't match the broadcast shape {[1] * self.ndim}")
    axes = _axes(dim, self.ndim)
    if self.size == 0:
        m = xp.zeros_like(xp.sum(self, axis=axes, keepdims=True))
    else:
        m = xp.max(self, axis=axes, keepdims=True)
        m = xp.where(xp.isfinite(m), m, 0)
    with xp.errstate(divide="ignore"):         # log(0) = -inf, as torch gives for an all -inf row
        v = xp.log(xp.sum(xp.exp(self - m), axis=axes, keepdims=True)) + m
    if not keepdim:
        v = v.reshape(()) if axes is None else v.squeeze(axes)
    return _reduced(v, dtype=self.dtype)


vector_norm_op = defop("linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, "
                       "ScalarType? dtype=None) -> Tensor", _vector_norm_kernel, node="LinalgVectorNormBackward0",
                       self=lambda grad, self, ord, result, dim, keepdim: norm_backward(
                           grad, self, ord, result, dim, keepdim))
logsumexp_op = defop("logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor", _logsumexp_kernel,
                     node="LogsumexpBackward0",
                     self=lambda grad, self, result, dim, keepdim: logsumexp_backward(grad, self, result, dim, keepdim))


@overridable
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """torch.linalg.vector_norm: ``(sum |x|^ord)^(1/ord)`` over ``dim`` (every element by default)."""
    if isinstance(ord, str) or not isinstance(ord, (int, float)):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' (position 2) must be Number, not {type(ord).__name__}")
    return vector_norm_op(x, ord, None if dim is None else _dim_list(dim), keepdim, dtype=dtype)


@method()
@overridable
def norm(input, p="fro", dim=None, keepdim=False, dtype=None, **numpy_names):
    """torch.norm / Tensor.norm: a vector p-norm (``'fro'`` is the 2-norm; ``'nuc'`` the nuclear
    norm of matrices) -- torch routes it to linalg.vector_norm and records that node."""
    if numpy_names:
        dim, keepdim = _numpy_names("norm", numpy_names, dim, keepdim)
    if p is not None and not isinstance(p, (int, float, str)):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' (position 2) must be Number, not {type(p).__name__}")
    if isinstance(p, str) and p not in ("fro", "nuc"):
        raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
    if p == "nuc":
        from ..linalg import matrix_norm     # (glasstorch.linalg imports this module)
        return matrix_norm(input, "nuc", dim if dim is not None else (-2, -1), keepdim)
    if p == "fro" or p is None:
        p = 2
    return vector_norm_op(input, p, None if dim is None else _dim_list(dim), keepdim, dtype=dtype)


@method()
@overridable
def logsumexp(input, dim=None, keepdim=False, **numpy_names):
    """``log(sum(exp(x)))`` over ``dim``, computed without overflow."""
    if numpy_names:
        dim, keepdim = _numpy_names("logsumexp", numpy_names, dim, keepdim)
    _required_dim("logsumexp", dim)
    return logsumexp_op(input, _dim_list(dim), keepdim)


# ==========================================================================================================
# softmax, log_softmax
# ==========================================================================================================
def _softmax_family_kernel(name, log):
    def kernel(self, dim, half_to_float):
        if not _is_float(self):
            if self.size:
                last = self.ndim == 0 or dim in (-1, self.ndim - 1)
                raise NotImplementedError(f'"{name}{"_lastdim" if last else ""}_kernel_impl" not implemented for '
                                          f"'{_DTYPE_OF[self.dtype]._legacy}'")
            return self.copy()             # (torch's refusing kernel never runs on an empty tensor)
        if self.ndim == 0:
            return xp.zeros_like(self) if log else xp.ones_like(self)
        if self.size == 0:
            return self.copy()             # (NumPy's max has no identity for an empty reduction)
        d = _wrap_dim(dim, self.ndim)
        if _short_rows(self, d):
            return _softmax_of_short_rows(self, log)
        shifted = self - self.max(axis=d, keepdims=True)
        if log:
            shifted -= xp.log(_sum_kept(xp.exp(shifted), d))
            return row_major(shifted)      # (torch allocates the result row-major)
        xp.exp(shifted, out=shifted)
        shifted /= _sum_kept(shifted, d)
        return row_major(shifted)
    kernel.__name__ = f"_{name}_kernel"
    return kernel


def _short_rows(a, d):
    """Whether ``a``'s rows along ``d`` are the last dim's short rows (2 to 16 elements) of a row-major
    NumPy array: where NumPy's row reductions and its row-broadcast ``x - m`` pay per row."""
    n = a.shape[d]
    return d == a.ndim - 1 and 1 < n <= 16 and type(a) is xp.ndarray and a.flags.c_contiguous


def _softmax_of_short_rows(a, log):
    """(log_)softmax over short last-dim rows, computed down the columns of the transposed copy: the
    maximum, ``x - m``, the sum and ``- log(sum)`` each become whole-row vector passes over (n, rows),
    where over the rows NumPy reduces row by row and buffers the broadcast (rows, 1) operand (an MLP's
    256x10 logits: 151k -> 118k instructions). The same formula, ``x - m - log(sum(exp(x - m)))``; the
    sum runs in another order (float rounding). A row's maximum is one of its elements in any order (nan
    propagates both ways); only a tie of -0 and +0 may come out with the other sign, which ``x - m`` then
    gives to a zero element, and neither ``exp`` nor ``- log(sum)`` (sum >= 2) tells apart. The result
    is laid out row-major, as torch allocates it."""
    n = a.shape[-1]
    cols = a.reshape(-1, n).T.copy()        # (n, rows), row-major
    cols -= cols.max(axis=0)
    if log:
        cols -= xp.log(xp.exp(cols).sum(axis=0))
    else:
        xp.exp(cols, out=cols)
        cols /= cols.sum(axis=0)
    return cols.T.copy().reshape(a.shape)


def _sum_kept(a, d):
    """``a.sum(axis=d, keepdims=True)``; over the last dim of a row-major float32/float64 array, as
    a matrix-vector product with ones: NumPy's reduction of many short rows pays per row (128x64
    rows of 64 float32, the attention weights of a Transformer layer: 0.36 ms, the gemv 0.09).
    Both are float32 sums, in different orders: they agree to float32 rounding."""
    n = a.shape[d] if a.ndim else 0
    if (d == a.ndim - 1 and n > 1 and type(a) is xp.ndarray and a.dtype.char in "fd" and a.flags.c_contiguous
            and a.size):
        return a.reshape(-1, n).dot(xp.ones(n, a.dtype)).reshape(a.shape[:-1] + (1,))
    return a.sum(axis=d, keepdims=True)


def _softmax_backward_data_kernel(grad_output, output, dim, input_dtype):
    """y (g - sum(g y)): the softmax's vector-Jacobian product."""
    gy = grad_output * output
    if not output.ndim:
        return gy - output * gy
    gy -= output * _sum_kept(gy, _wrap_dim(dim, output.ndim))
    return gy


def _log_softmax_backward_data_kernel(grad_output, output, dim, input_dtype):
    """g - exp(y) sum(g): the log-softmax's vector-Jacobian product."""
    if not output.ndim:
        return grad_output - xp.exp(output) * grad_output
    d = _wrap_dim(dim, output.ndim)
    if type(output) is xp.ndarray and grad_output.dtype == output.dtype and grad_output.shape == output.shape:
        # the same product and difference written into exp(y)'s array (one allocation, not three)
        e = xp.exp(output)
        e *= _sum_kept(grad_output, d)
        return xp.subtract(grad_output, e, out=e)
    return grad_output - xp.exp(output) * grad_output.sum(axis=d, keepdims=True)


softmax_op = defop("_softmax(Tensor self, int dim, bool half_to_float) -> Tensor",
                   _softmax_family_kernel("softmax", False), node="SoftmaxBackward0",
                   self=lambda grad, result, dim: aten._softmax_backward_data(grad, result, dim, result.dtype))
log_softmax_op = defop("_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor",
                       _softmax_family_kernel("log_softmax", True), node="LogSoftmaxBackward0",
                       self=lambda grad, result, dim: aten._log_softmax_backward_data(grad, result, dim, result.dtype))
softmax_backward_data_op = defop(
    "_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor",
    _softmax_backward_data_kernel, node="SoftmaxBackwardDataBackward0",
    grad_output=lambda grad, output, dim, input_dtype: aten._softmax_backward_data(grad, output, dim, input_dtype),
    output=lambda grad, grad_output, dim, output: softmax_double_backward(grad, grad_output, dim, output))
log_softmax_backward_data_op = defop(
    "_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor",
    _log_softmax_backward_data_kernel, node="LogSoftmaxBackwardDataBackward0",
    grad_output=lambda grad, output, dim: grad - aten.sum.dim_IntList(grad * aten.exp(output), [dim], True),
    output=lambda grad, grad_output, dim, output: -aten.sum.dim_IntList(grad_output, [dim], True) *
    aten.exp(output) * grad)


def _softmax_dim(input, dim, fn):
    """The dim to normalise over: torch's deprecated implicit choice when none is given."""
    nd = input._data.ndim
    if dim is None:
        warnings.warn(f"Implicit dimension choice for {fn} has been deprecated. Change the call to include dim=X as "
                      f"an argument.", stacklevel=4)
        return 0 if nd in (0, 1, 3) else 1
    return _wrap_dim(dim, nd)


@method()
@overridable    # (torch.softmax and Tensor.softmax are bindings: a handler is given what the caller gave)
def softmax(input, dim, dtype=None, *, _stacklevel=3):
    """``exp(x) / sum(exp(x))`` along ``dim``; ``dtype=`` casts the input first (ToCopyBackward0)."""
    d = _softmax_dim(input, dim, "softmax")
    if dtype is not None:
        input = input.to(dtype)
    return softmax_op(input, d, False)


@method()
@overridable
def log_softmax(input, dim, dtype=None, *, _stacklevel=3):
    """``x - logsumexp(x)`` along ``dim``; ``dtype=`` casts the input first (ToCopyBackward0)."""
    d = _softmax_dim(input, dim, "log_softmax")
    if dtype is not None:
        input = input.to(dtype)
    return log_softmax_op(input, d, False)


# ==========================================================================================================
# cumsum, cumprod, cummax, cummin
# ==========================================================================================================
def _scan_kernel(scan):
    def kernel(self, dim, *, dtype=None):
        d = _wrap_dim(dim, self.ndim)
        acc = _accumulate_dtype(self, dtype) or self.dtype
        if not self.ndim:
            return self.astype(acc)
        return row_major(scan(self, axis=d, dtype=acc))   # (torch allocates a scan's result row-major)
    kernel.__name__ = f"_{scan.__name__}_kernel"
    return kernel


def _cumulative_extreme_kernel(is_max):
    def kernel(self, dim):
        d = _wrap_dim(dim, self.ndim)
        if not self.ndim:
            return self.copy(), _zeros_like(self, (), "int64")
        values = (xp.maximum if is_max else xp.minimum).accumulate(self, axis=d)
        positions = _arange_like(self, self.shape[d]).reshape([-1 if i == d else 1 for i in range(self.ndim)])
        # the index of the last element equal to the running extreme (torch's rule for ties)
        indices = xp.maximum.accumulate(xp.where(self == values, positions, 0), axis=d)
        return row_major(values), row_major(indices.astype("int64", copy=False))
    return kernel


cumsum_op = defop("cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", _scan_kernel(xp.cumsum),
                  node="CumsumBackward0", self=lambda grad, dim: cumsum_backward(grad, dim))
cumprod_op = defop("cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", _scan_kernel(xp.cumprod),
                   node="CumprodBackward0",
                   self=lambda grad, self, dim, result: cumprod_backward(grad, self, dim, result))
def _cummaxmin_backward(grad, self, dim, indices):
    """torch's cummaxmin_backward: the gradient scattered to where each running extreme came from --
    and for an empty input the input itself (so in a double backward it requires grad as the input
    does)."""
    if 0 in self.shape:
        return self
    return aten.scatter_add(aten.zeros_like(self), dim, indices, grad)


cummax_op = defop("cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)", _cumulative_extreme_kernel(True),
                  node="CummaxBackward0", self=_cummaxmin_backward)
cummin_op = defop("cummin(Tensor self, int dim) -> (Tensor values, Tensor indices)", _cumulative_extreme_kernel(False),
                  node="CumminBackward0", self=_cummaxmin_backward)
cumsum__op = defop("cumsum_(Tensor(a!) self, int dim, *, ScalarType? dtype=None) -> Tensor(a!)",
                   computed_into_self(cumsum_op.kernel), inplace_of=cumsum_op)
cumprod__op = defop("cumprod_(Tensor(a!) self, int dim, *, ScalarType? dtype=None) -> Tensor(a!)",
                    computed_into_self(cumprod_op.kernel), inplace_of=cumprod_op)


@method()
@overridable
def cumsum(input, dim=None, *, dtype=None, **numpy_names):
    """Running sums along ``dim``."""
    if numpy_names:
        dim, _ = _numpy_names("cumsum", numpy_names, dim, False)
    _required_dim("cumsum", dim)
    return cumsum_op(input, dim, dtype=dtype)


@method()
@overridable
def cumprod(input, dim=None, *, dtype=None, **numpy_names):
    """Running products along ``dim`` (its gradient is exact with zeros)."""
    if numpy_names:
        dim, _ = _numpy_names("cumprod", numpy_names, dim, False)
    _required_dim("cumprod", dim)
    return cumprod_op(input, dim, dtype=dtype)


@method()
@overridable
def cumsum_(self, dim, *, dtype=None):
    """In place: running sums along ``dim`` (aten.cumsum_)."""
    return cumsum__op._call(self, dim, dtype=dtype)


@method()
@overridable
def cumprod_(self, dim, *, dtype=None):
    """In place: running products along ``dim`` (aten.cumprod_)."""
    return cumprod__op._call(self, dim, dtype=dtype)


@method()
@overridable
def cummax(input, dim):
    """Running maxima along ``dim`` and where each came from."""
    values, indices = cummax_op(input, dim)
    return return_types.cummax((values, indices))


@method()
@overridable
def cummin(input, dim):
    """Running minima along ``dim`` and where each came from."""
    values, indices = cummin_op(input, dim)
    return return_types.cummin((values, indices))


# ==========================================================================================================
# any, all, count_nonzero
# ==========================================================================================================
def _logical_kernel(reduce, keep_uint8=True):
    def kernel(self, dim=None, keepdim=False):
        # any/all over an empty dim list reduce nothing (elsewhere an empty list means every dim)
        axes = () if isinstance(dim, (list, tuple)) and not dim else _axes(dim, self.ndim)
        r = _reduced(reduce(self, axis=axes, keepdims=keepdim))
        return r.astype("uint8") if self.dtype == xp.uint8 else r
    return kernel


def _count_nonzero_kernel(self, dim=None):
    axes = None if isinstance(dim, (list, tuple)) and not dim else _axes(dim, self.ndim)
    return _reduced(xp.count_nonzero(self, axis=axes)).astype("int64")


any_op = defop("any(Tensor self) -> Tensor", _logical_kernel(xp.any))
any_dim_op = defop("any.dim(Tensor self, int dim, bool keepdim=False) -> Tensor", _logical_kernel(xp.any))
any_dims_op = defop("any.dims(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor", _logical_kernel(xp.any))
all_op = defop("all(Tensor self) -> Tensor", _logical_kernel(xp.all))
all_dim_op = defop("all.dim(Tensor self, int dim, bool keepdim=False) -> Tensor", _logical_kernel(xp.all))
all_dims_op = defop("all.dims(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor", _logical_kernel(xp.all))
count_nonzero_op = defop("count_nonzero(Tensor self, int? dim=None) -> Tensor", _count_nonzero_kernel)
count_nonzero_dims_op = defop("count_nonzero.dim_IntList(Tensor self, int[] dim) -> Tensor", _count_nonzero_kernel)


def _logical(fn, input, dim, keepdim, plain, one, many):
    if dim is None:
        return many(input, None, keepdim) if keepdim else plain(input)
    if isinstance(dim, int):
        return one(input, dim, keepdim)
    return many(input, tuple(dim), keepdim)


@method()
@overridable
def any(input, dim=None, keepdim=False, **numpy_names):
    """Whether any element is nonzero (over ``dim``)."""
    if numpy_names:
        dim, keepdim = _numpy_names("any", numpy_names, dim, keepdim)
    return _logical("any", input, dim, keepdim, any_op, any_dim_op, any_dims_op)


@method()
@overridable
def all(input, dim=None, keepdim=False, **numpy_names):
    """Whether every element is nonzero (over ``dim``)."""
    if numpy_names:
        dim, keepdim = _numpy_names("all", numpy_names, dim, keepdim)
    return _logical("all", input, dim, keepdim, all_op, all_dim_op, all_dims_op)


@method()
@overridable
def count_nonzero(input, dim=None, **numpy_names):
    """How many elements are nonzero (over ``dim``)."""
    if numpy_names:
        dim, _ = _numpy_names("count_nonzero", numpy_names, dim, False)
    if dim is None or isinstance(dim, int):
        return count_nonzero_op(input, dim)
    return count_nonzero_dims_op(input, tuple(dim))


# ==========================================================================================================
# sort, argsort, topk, kthvalue, median, nanmedian, mode
# ==========================================================================================================
def _sorted_indices(a, dim, descending):
    """A stable argsort along ``dim``; NaN sorts as the largest value, as in torch."""
    if descending:
        if a.dtype.kind in "ub":      # no negation: sort the reversed array, map the indices back
            return a.shape[dim] - 1 - xp.flip(xp.argsort(xp.flip(a, dim), axis=dim, kind="stable"), dim)
        key = -a
        if a.dtype.kind == "f":
            key = xp.where(xp.isnan(a), -xp.inf, key)
        return xp.argsort(key, axis=dim, kind="stable")
    return xp.argsort(a, axis=dim, kind="stable")


def _sort_kernel(self, dim=-1, descending=False):
    d = _wrap_dim(dim, self.ndim)
    if not self.ndim:
        return self.copy(), _zeros_like(self, (), "int64")
    idx = _sorted_indices(self, d, descending)
    # (laid out as the input: torch's sort keeps a dense input's strides, infers dense ones otherwise)
    return like_operands(xp.take_along_axis(self, idx, axis=d), self), like_operands(idx.astype("int64", copy=False), self)


def _sort_stable_kernel(self, *, stable, dim=-1, descending=False):
    return _sort_kernel(self, dim, descending)


def _topk_kernel(self, k, dim=-1, largest=True, sorted=True):
    d = _wrap_dim(dim, self.ndim) if self.ndim else 0
    n = self.shape[d] if self.ndim else 1
    if k > n or k < 0:
        raise RuntimeError("selected index k out of range")
    if not self.ndim:
        return self.copy(), _zeros_like(self, (), "int64")
    idx = xp.take(_sorted_indices(self, d, largest), _arange_like(self, k), axis=d)
    return xp.take_along_axis(self, idx, axis=d), idx.astype("int64", copy=False)


def _kth_smallest(self, k, d, keepdim, name):
    """The k-th smallest along ``d`` (1-based) and its index."""
    if not self.ndim:
        return self.copy(), _zeros_like(self, (), "int64")
    n = self.shape[d]
    if n == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    idx = xp.take(_sorted_indices(self, d, False), [k - 1], axis=d)
    values = xp.take_along_axis(self, idx, axis=d)
    if not keepdim:
        values, idx = values.squeeze(d), idx.squeeze(d)
    return values, idx.astype("int64", copy=False)


def _kthvalue_kernel(self, k, dim=-1, keepdim=False):
    d = _wrap_dim(dim, self.ndim)
    n = self.shape[d] if self.ndim else 1
    if n == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    return _kth_smallest(self, k, d, keepdim, "kthvalue")


def _median_kernel(ignore_nan):
    def kernel(self):
        flat = self.reshape(-1)
        if ignore_nan and flat.dtype.kind == "f":
            flat = flat[~xp.isnan(flat)]
        elif flat.dtype.kind == "f" and xp.isnan(flat).any():
            return _reduced(_asarray_like(self, xp.nan, dtype=self.dtype))   # (on self's device)
        if flat.size == 0:
            return _reduced(_asarray_like(self, xp.nan, dtype=self.dtype))
        return _reduced(xp.take(flat, _sorted_indices(flat, 0, False)[(flat.size - 1) // 2]))
    return kernel


def _median_dim_kernel(ignore_nan):
    name = "nanmedian" if ignore_nan else "median"

    def kernel(self, dim, keepdim=False):
        d = _wrap_dim(dim, self.ndim)
        if not self.ndim:
            return self.copy(), _zeros_like(self, (), "int64")
        if self.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
        order = _sorted_indices(self, d, False)        # NaNs last
        if self.dtype.kind == "f":
            nans = xp.isnan(self).sum(axis=d, keepdims=True)
            if ignore_nan:     # the lower median of the non-NaN values (index 0 when all are NaN)
                k = xp.maximum(self.shape[d] - nans - 1, 0) // 2
            else:              # a NaN in the slice makes it the median (the first NaN)
                k = xp.where(nans > 0, self.shape[d] - nans, (self.shape[d] - 1) // 2)
        else:
            k = _full_like(self, (self.shape[d] - 1) // 2, [1 if i == d else s for i, s in enumerate(self.shape)], "int64")
        idx = xp.take_along_axis(order, k, axis=d)
        values = xp.take_along_axis(self, idx, axis=d)
        if not keepdim:
            values, idx = values.squeeze(d), idx.squeeze(d)
        return row_major(values), row_major(idx.astype("int64", copy=False))
    return kernel


def _mode_kernel(self, dim=-1, keepdim=False):
    """The most frequent value along ``dim`` (the smallest among equally frequent ones) and the
    index of its last occurrence, as torch's CPU kernel returns."""
    d = _wrap_dim(dim, self.ndim)
    if not self.ndim:
        return self.copy(), _zeros_like(self, (), "int64")
    if self.shape[d] == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    moved = xp.moveaxis(self, d, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    values, indices = [], []
    for row in rows:
        uniq, counts = xp.unique(row, return_counts=True)
        v = uniq[counts == counts.max()].min()
        values.append(v)
        indices.append(xp.nonzero(row == v)[0].max())
    values = (xp.stack(values) if values else _zeros_like(self, (0,))).astype(self.dtype).reshape(moved.shape[:-1])
    indices = (xp.stack(indices) if indices else _zeros_like(self, (0,))).astype("int64").reshape(moved.shape[:-1])
    if keepdim:
        values, indices = xp.expand_dims(values, d), xp.expand_dims(indices, d)
    return values, indices


def _sort_backward(grad, self_sizes, dim, indices):
    return aten.value_selecting_reduction_backward(grad, dim, indices, self_sizes, True)


sort_op = defop("sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)",
                _sort_kernel, node="SortBackward0", self=_sort_backward)
sort_stable_op = defop("sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> "
                       "(Tensor values, Tensor indices)", _sort_stable_kernel, node="SortBackward1",
                       self=_sort_backward)
topk_op = defop("topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> "
                "(Tensor values, Tensor indices)", _topk_kernel, node="TopkBackward0", self=_sort_backward)
kthvalue_op = defop("kthvalue(Tensor self, SymInt k, int dim=-1, bool keepdim=False) -> "
                    "(Tensor values, Tensor indices)", _kthvalue_kernel, node="KthvalueBackward0", self=_select_backward)
median_op = defop("median(Tensor self) -> Tensor", _median_kernel(False), node="MedianBackward0",
                  self=lambda grad, self, result: evenly_distribute_backward(grad, self, result))
median_dim_op = defop("median.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
                      _median_dim_kernel(False), node="MedianBackward1", self=_select_backward)
nanmedian_op = defop("nanmedian(Tensor self) -> Tensor", _median_kernel(True), node="NanmedianBackward0",
                     self=lambda grad, self, result: evenly_distribute_backward(grad, self, result))
nanmedian_dim_op = defop("nanmedian.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
                         _median_dim_kernel(True), node="NanmedianBackward1", self=_select_backward)
mode_op = defop("mode(Tensor self, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)", _mode_kernel,
                node="ModeBackward0", self=_select_backward)


@method()
@overridable    # (stable is keyword-only, as in torch's sort.stable: a handler is given it as a keyword)
def sort(input, dim=-1, descending=False, *, stable=None, **numpy_names):
    """Sorted values and their indices; ``stable=`` (torch's sort.stable overload) records
    SortBackward1. The sort is always stable here."""
    if numpy_names:
        dim, _ = _numpy_names("sort", numpy_names, dim, False)
    if stable is None:
        values, indices = sort_op(input, dim, descending)
    else:
        values, indices = sort_stable_op(input, stable=stable, dim=dim, descending=descending)
    return return_types.sort((values, indices))


@method()
@overridable
def argsort(input, dim=-1, descending=False, *, stable=False, **numpy_names):
    """The indices that sort ``input`` along ``dim`` (torch's composite: sort's indices)."""
    if numpy_names:
        dim, _ = _numpy_names("argsort", numpy_names, dim, False)
    return sort_stable_op(input, stable=stable, dim=dim, descending=descending)[1]


@method()
@overridable
def topk(input, k, dim=-1, largest=True, sorted=True, **numpy_names):
    """The ``k`` largest (or smallest) values along ``dim`` and their indices."""
    if numpy_names:
        dim, _ = _numpy_names("topk", numpy_names, dim, False)
    values, indices = topk_op(input, k, dim, largest, sorted)
    return return_types.topk((values, indices))


@method()
@overridable
def kthvalue(input, k, dim=-1, keepdim=False, **numpy_names):
    """The ``k``-th smallest value along ``dim`` (1-based) and its index."""
    if numpy_names:
        dim, keepdim = _numpy_names("kthvalue", numpy_names, dim, keepdim)
    values, indices = kthvalue_op(input, k, dim, keepdim)
    return return_types.kthvalue((values, indices))


def _median_like(fn, op, dim_op, input, dim, keepdim):
    if dim is None:
        return op(input)
    values, indices = dim_op(input, _one_dim(fn, dim), keepdim)
    return getattr(return_types, fn)((values, indices))


@method()
@overridable
def median(input, dim=None, keepdim=False, **numpy_names):
    """The lower median: the ((n - 1) // 2)-th smallest (torch does not average the middle two);
    NaN if the values hold a NaN."""
    if numpy_names:
        dim, keepdim = _numpy_names("median", numpy_names, dim, keepdim)
    return _median_like("median", median_op, median_dim_op, input, dim, keepdim)


@method()
@overridable
def nanmedian(input, dim=None, keepdim=False, **numpy_names):
    """The lower median of the values that are not NaN."""
    if numpy_names:
        dim, keepdim = _numpy_names("nanmedian", numpy_names, dim, keepdim)
    return _median_like("nanmedian", nanmedian_op, nanmedian_dim_op, input, dim, keepdim)


@method()
@overridable
def mode(input, dim=-1, keepdim=False, **numpy_names):
    """The most frequent value along ``dim`` and an index where it occurs."""
    if numpy_names:
        dim, keepdim = _numpy_names("mode", numpy_names, dim, keepdim)
    values, indices = mode_op(input, dim, keepdim)
    return return_types.mode((values, indices))


# ==========================================================================================================
# unique, bincount, histc, searchsorted, bucketize
# ==========================================================================================================


def _unique2_kernel(self, sorted=True, return_inverse=False, return_counts=False):
    values, inverse, counts = xp.unique(self, return_inverse=True, return_counts=True)
    return (values, inverse.reshape(self.shape).astype("int64") if return_inverse else _zeros_like(self, (0,), "int64"),
            counts.astype("int64") if return_counts else _zeros_like(self, (0,), "int64"))


def check_unique_dim(shape, d):
    """torch's refusal of an empty input whose empty dims are not ``d`` (unique/unique_consecutive with a
    dim): slices along ``d`` would all be empty, and torch does not call them equal."""
    if 0 in shape and shape[d] != 0:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")


def _unique_dim_kernel(self, dim, sorted=True, return_inverse=False, return_counts=False):
    d = _wrap_dim(dim, self.ndim)
    check_unique_dim(self.shape, d)
    if self.shape[d] == 0:   # (nothing to compare: the input's copy, row-major as torch allocates it)
        nothing = row_major(_zeros_like(self, (0,), "int64"))
        return row_major(self.copy()), nothing, nothing
    values, inverse, counts = xp.unique(self, return_inverse=True, return_counts=True, axis=d)
    return values, inverse.reshape(-1).astype("int64"), counts.astype("int64")


def _bincount_kernel(self, weights=None, minlength=0):
    if self.dtype.kind not in "iu":
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_DTYPE_OF[self.dtype]._legacy}'")
    if self.ndim != 1 or self.dtype.kind not in "iu" or (self.size and self.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is not None and weights.shape != self.shape:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    out = xp.bincount(self, weights, minlength)
    if weights is None:
        return out.astype("int64")
    return out.astype(weights.dtype if weights.dtype.kind == "f" else "float64")


def _histc_kernel(self, bins=100, min=0, max=0):
    if not _is_float(self):
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{_DTYPE_OF[self.dtype]._legacy}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if min > max:
        raise RuntimeError("torch.histc: max must be larger than min")
    low, high = (min, max) if min != max else ((float(self.min()), float(self.max())) if self.size else (0.0, 0.0))
    if low == high:
        low, high = low - 1, high + 1
    counts, _ = xp.histogram(self, bins=bins, range=(low, high))
    return counts.astype(self.dtype)


def _searchsorted_kernel(sorted_sequence, self, *, out_int32=False, right=False, side=None, sorter=None):
    side = side or ("right" if right else "left")
    if sorted_sequence.ndim != 1 and (sorted_sequence.ndim != xp.ndim(self) or
                                      sorted_sequence.shape[:-1] != xp.shape(self)[:-1]):
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions "
                           f"of boundaries tensor and input value tensor must match, but we got boundaries tensor "
                           f"{list(sorted_sequence.shape)} and input value tensor {list(xp.shape(self))}")
    if sorter is not None:
        sorted_sequence = xp.take_along_axis(sorted_sequence, sorter, axis=-1)
    if sorted_sequence.ndim == 1:
        r = xp.searchsorted(sorted_sequence, self, side=side)
    else:
        rows = sorted_sequence.reshape(-1, sorted_sequence.shape[-1])
        values = asarray(self).reshape(rows.shape[0], -1)
        r = xp.stack([xp.searchsorted(s, v, side=side) for s, v in zip(rows, values)]).reshape(xp.shape(self))
    return _reduced(r).astype("int32" if out_int32 else "int64")


def _bucketize_kernel(self, boundaries, *, out_int32=False, right=False):
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return _searchsorted_kernel(boundaries, self, out_int32=out_int32, right=right)


unique2_op = defop("_unique2(Tensor self, bool sorted=True, bool return_inverse=False, bool return_counts=False) -> "
                   "(Tensor, Tensor, Tensor)", _unique2_kernel, node="Unique2Backward0",
                   self=not_implemented("_unique2"))
unique_dim_op = defop("unique_dim(Tensor self, int dim, bool sorted=True, bool return_inverse=False, "
                      "bool return_counts=False) -> (Tensor, Tensor, Tensor)", _unique_dim_kernel,
                      node="UniqueDimBackward0", self=not_implemented("unique_dim"))
bincount_op = defop("bincount(Tensor self, Tensor? weights=None, SymInt minlength=0) -> Tensor", _bincount_kernel)
histc_op = defop("histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor", _histc_kernel)
searchsorted_op = defop("searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, "
                        "bool right=False, str? side=None, Tensor? sorter=None) -> Tensor", _searchsorted_kernel)
bucketize_op = defop("bucketize.Tensor(Tensor self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> "
                     "Tensor", _bucketize_kernel)


@method()
@overridable
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct values (sorted), and on request where each element went and how many there were."""
    if dim is None:
        values, inverse, counts = unique2_op(input, sorted, return_inverse, return_counts)
    else:
        values, inverse, counts = unique_dim_op(input, dim, sorted, return_inverse, return_counts)
    if return_inverse and return_counts:
        return values, inverse, counts
    if return_inverse:
        return values, inverse
    if return_counts:
        return values, counts
    return values


@method()
@overridable
def bincount(input, weights=None, minlength=0):
    """How often each non-negative integer occurs (summing ``weights`` instead of ones)."""
    return bincount_op(input, weights, minlength)


@method()
@overridable
def histc(input, bins=100, min=0, max=0):
    """A histogram with ``bins`` equal bins over [min, max] (the data's range when both are 0)."""
    return histc_op(input, bins, min, max)


@overridable
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """Where each value would go into the innermost dim of ``sorted_sequence`` to keep it sorted."""
    return searchsorted_op(sorted_sequence, input, out_int32=out_int32, right=right, side=side, sorter=sorter)


@overridable
def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each value among the 1-D ``boundaries``."""
    return bucketize_op(input, boundaries, out_int32=out_int32, right=right)


# ---- diff, quantile/nanquantile, isin -----------------------------------------------------------
# torch's composites (ReduceOps.cpp, Sorting.cpp), written with the same steps, so the recorded graph
# is torch's: diff is narrow and sub (logical_xor for bools); quantile is sort, gather and lerp.
def _diff_check_other(input, other, dim):
    if other is None:
        return
    if other.ndim != input.ndim:
        raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    for i in range(other.ndim):
        if i != dim and other.shape[i] != input.shape[i]:
            raise RuntimeError("diff expects the shape of tensor to prepend or append to match that of input except "
                               f"along the differencing dimension; input.size({i}) = {input.shape[i]}, but got "
                               f"tensor.size({i}) = {other.shape[i]}")


@method()
@overridable
def diff(input, n=1, dim=-1, prepend=None, append=None, *, out=None):
    """The n-th forward difference along ``dim``: out[i] = input[i + 1] - input[i], n times (a logical
    xor for bools), after ``prepend`` and ``append`` are joined on along ``dim``."""
    if input.ndim < 1:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _wrap_dim(dim, input.ndim)
    _diff_check_other(input, prepend, d)
    _diff_check_other(input, append, d)
    if n == 0:
        res = aten.zeros_like(input)
        res.copy_(input)
        return res if out is None else out.copy_(res)
    if prepend is not None or append is not None:
        from .joining import cat
        input = cat([t for t in (prepend, input, append) if t is not None], d)
    length = input.shape[d] - 1
    res = input
    for _ in range(builtins.min(n, input.shape[d])):
        if res.dtype is _dtype.bool:
            res = res.narrow(d, 1, length).logical_xor(res.narrow(d, 0, length))
        else:
            res = res.narrow(d, 1, length) - res.narrow(d, 0, length)
        length -= 1
    return res if out is None else out.copy_(res)


_QUANTILE_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan, out):
    """torch's ``quantile_compute``: sort along the reduced dim, turn q into (fractional) ranks, gather
    the values below and above each rank and interpolate between them."""
    if not isinstance(q, Tensor):
        if not 0 <= q <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q}")
        from .creation import tensor
        q = tensor(q, dtype=input.dtype, device=input.device)
    if interpolation not in _QUANTILE_MODES:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if q.ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if input.dtype not in (_dtype.float32, _dtype.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if q.dtype is not input.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    if out is not None and out.dtype is not input.dtype:
        raise RuntimeError("quantile() out tensor must be same dtype as the input tensor")
    wrapped = _wrap_dim(dim, input.ndim) if dim is not None else 0
    if dim is not None and input.ndim > 0:
        out_shape = list(input.shape)
        if keepdim:
            out_shape[wrapped] = 1
        else:
            del out_shape[wrapped]
    else:
        out_shape = [1] * input.ndim if keepdim else []
    if q.ndim > 0:
        out_shape.insert(0, q.numel())
    if q.device.type != "meta" and not bool(((q >= 0) & (q <= 1)).all()):   # (no values on meta: torch skips it too)
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    if dim is None:
        sorted_ = input.flatten().sort()[0]
    elif wrapped == input.ndim - 1:
        sorted_ = input.sort()[0]
    else:
        sorted_ = input.unsqueeze(-1).transpose(wrapped, -1).sort()[0]
    if q.ndim == 0:
        out_shape.insert(0, q.numel())
    sorted_ = sorted_.view(out_shape[1:] + [sorted_.shape[-1]])
    if ignore_nan:   # ranks among the values that are not NaN (all NaN: rank 0, which is NaN)
        ranks = q * (sorted_.isnan().logical_not_().sum(-1, True) - 1)
        ranks.masked_fill_(ranks < 0, 0)
    else:            # a NaN sorts last: its rank makes the quantile NaN
        last_index = sorted_.shape[-1] - 1
        from .shape import broadcast_tensors
        ranks, has_nan = broadcast_tensors(q * last_index, sorted_.isnan().any(-1, True))
        ranks = ranks.masked_fill(has_nan, last_index)
    if interpolation == "lower":
        ranks.floor_()
    elif interpolation == "higher":
        ranks.ceil_()
    elif interpolation == "nearest":
        ranks.round_()
    ranks_below = ranks.long()
    values = sorted_.gather(-1, ranks_below)
    if interpolation in ("linear", "midpoint"):
        weights = ranks.new_full(ranks.shape, 0.5) if interpolation == "midpoint" else ranks - ranks_below
        ranks_above = ranks.ceil_().long()
        values.lerp_(sorted_.gather(-1, ranks_above), weights)
    if q.ndim == 0:
        values.squeeze_(-1)
    else:
        values.unsqueeze_(0).transpose_(0, -1).squeeze_(-1)
    return values if out is None else out.copy_(values)


@method()
@overridable
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """The q-th quantiles of ``input`` (over every element, or along ``dim``); q a number or a 1-D tensor
    in [0, 1], whose quantiles come first in the result. Between two data points the result is
    interpolated as ``interpolation`` says (NumPy's methods of the same names)."""
    return _quantile(input, q, dim, keepdim, interpolation, False, out)


@method()
@overridable
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """quantile, ignoring NaNs (NaN only where a whole slice is NaN)."""
    return _quantile(input, q, dim, keepdim, interpolation, True, out)


def _isin_kernel(elements, test_elements, *, assume_unique=False, invert=False):
    """Membership in the promoted dtype of the two (a number counts as torch's wrapped scalar)."""
    dims, zeros, scalars = [], [], []
    for x in (elements, test_elements):
        if isinstance(x, _ops._ARRAY_TYPES):
            if x.dtype.kind in "bc":
                name = "Bool" if x.dtype.kind == "b" else _DTYPE_OF[x.dtype]._legacy
                raise RuntimeError(f"Unsupported input type encountered for isin(): {name}")
            (dims if x.ndim else zeros).append(_DTYPE_OF[x.dtype])
        else:
            scalars.append(_dtype.scalar_dtype(x))
    common = _dtype.result_type_of(dims, zeros, scalars).numpy_dtype
    device = elements if isinstance(elements, _array_types()) else test_elements   # (one may be a number)
    a, b = _asarray_like(device, elements, common), _asarray_like(device, test_elements, common)
    return xp.isin(a, b, assume_unique=assume_unique, invert=invert)


isin_op = defop("isin.Tensor_Tensor(Tensor elements, Tensor test_elements, *, bool assume_unique=False, "
                "bool invert=False) -> Tensor", _isin_kernel)
isin_scalar_op = defop("isin.Tensor_Scalar(Tensor elements, Scalar test_element, *, bool assume_unique=False, "
                       "bool invert=False) -> Tensor", _isin_kernel)
isin_scalar_elements_op = defop("isin.Scalar_Tensor(Scalar element, Tensor test_elements, *, "
                                "bool assume_unique=False, bool invert=False) -> Tensor", _isin_kernel)


@overridable
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of ``elements`` is in ``test_elements`` (either may be a number): a bool
    tensor of ``elements``' shape (``invert`` negates it)."""
    if isinstance(elements, Tensor):
        op = isin_op if isinstance(test_elements, Tensor) else isin_scalar_op
    elif isinstance(test_elements, Tensor):
        op = isin_scalar_elements_op
    else:
        raise TypeError(f"isin() received an invalid combination of arguments - got ({type(elements).__name__}, "
                        f"{type(test_elements).__name__}), but expected one of:\n * (Tensor elements, Tensor "
                        "test_elements, *, bool assume_unique, bool invert)\n * (Number element, Tensor "
                        "test_elements, *, bool assume_unique, bool invert)\n * (Tensor elements, Number "
                        "test_element, *, bool assume_unique, bool invert)")
    return op(elements, test_elements, assume_unique=assume_unique, invert=invert)
