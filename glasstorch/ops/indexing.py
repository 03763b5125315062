"""Indexing, as torch's TensorAdvancedIndexing family: ``tensor[...]`` and index assignment (views for
basic indices, ``aten.index``/``aten.index_put_`` for advanced ones), gather/scatter, index_select,
index_add/index_copy/index_fill, masked_select/masked_scatter, take/put, nonzero, take_along_dim."""
import builtins
import numbers
import warnings

from .. import _checks, _dtype, _warnings
from .._tensor import Tensor, _wrap, _wrap_dim, bump_version
from .._array import (xp, like_operands, to_device, device_type_of, has_values, copy_preserving_layout,
                      zeros_like as _zeros_like,
                      on_device_of as _array_on_device_of)
from .._ops import defop, aten
from .._seam import seam, overridable
from ..autograd.graph import edge_of
from ._op import _state, method, inplace, _check_inplace, rebase_history
from ._derivatives import (maybe_multiply, index_backward, gather_backward, index_select_backward,
                           masked_select_backward,
                           take_backward)

# What glasstorch (torch) has at its top level from this family; the other public functions here are
# Tensor methods only (x.view(...)) or torch.linalg's.
__all__ = ["gather", "scatter_add", "scatter", "scatter_reduce", "index_reduce", "index_select", "index_add", "index_fill",
           "index_copy", "index_put", "masked_select", "nonzero", "argwhere", "take_along_dim", "take",
           "masked_scatter", "put", "index_put_"]

_DTYPE_OF = _dtype._BY_NUMPY


# =============================================================================================
# The primitive ops
# =============================================================================================
# ---- index / index_put: the advanced step of tensor[...] -------------------------------------
def _numpy_index(self, indices):
    """aten.index's ``Tensor?[]`` (one entry per leading dim of ``self``: None takes the dim whole, a
    boolean mask covers as many dims as it has) as a NumPy index, checked as torch checks it."""
    idx = []
    dim = 0
    for i in indices:
        if i is None:
            idx.append(builtins.slice(None))
            dim += 1
            continue
        kind = i.dtype.kind
        if kind not in "iub":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        if kind == "b":
            shape = self.shape[dim:dim + i.ndim]
            if i.shape != shape:
                raise IndexError(f"The shape of the mask {list(i.shape)} at index {dim} does not match the shape "
                                 f"of the indexed tensor {list(self.shape)} at index {dim}")
            dim += i.ndim
        else:
            if dim >= self.ndim:
                raise IndexError(f"too many indices for tensor of dimension {self.ndim}")
            _checks.check_index_bounds(i, self.shape[dim], dim)
            dim += 1
        idx.append(i)
    if dim > self.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self.ndim}")
    return tuple(idx)


def _index_kernel(self, indices):
    idx = _numpy_index(self, indices)
    d = self[idx]
    if d.base is not None and xp.may_share_memory(d, self):
        return d.copy()     # (no index tensor at all: NumPy's result is a view)
    if d.ndim > 1 and not (d.flags.c_contiguous and self.flags.c_contiguous):
        d = _index_result_layout(d, self, idx)
    elif d.ndim > 1 and 1 in d.shape:
        # (NumPy may give a dim of size 1 of a row-major result any stride; torch's are the row-major ones,
        # and they decide what follows: x[:, idx] @ w folds into one mm only with them)
        d = d.reshape(-1).reshape(d.shape)
    return d


def _index_result_layout(d, src, idx):
    """The layout torch gives an advanced-indexing result: its TensorIterator runs over the input
    with the indexed dim's stride set to 0 and over the index tensor, so the other dims keep the
    input's order. Worked out for one 1-D index among full slices; otherwise row-major (NumPy may
    lay a result out transposed where torch's is contiguous)."""
    arrays = [k for k, i in enumerate(idx) if isinstance(i, xp.ndarray)]
    if len(arrays) == 1 and idx[arrays[0]].ndim == 1 and idx[arrays[0]].dtype != bool and d.ndim == src.ndim:
        k = arrays[0]
        restrided = xp.lib.stride_tricks.as_strided(src, d.shape, tuple(0 if j == k else st
                                                                       for j, st in enumerate(src.strides)))
        index = idx[k].reshape(tuple(-1 if j == k else 1 for j in range(d.ndim)))
        return like_operands(d, restrided, index)
    return d if d.flags.c_contiguous else d.copy()


def _checked_put(out, indices, values, cast=False, check_shape=True):
    """The NumPy index for writing ``values`` into ``out`` at ``indices``, after torch's checks: the
    value broadcasts to the indexed places (``check_shape``; setitem leaves it to the write, see
    ``_put_shape_error``), and has ``out``'s dtype (unless ``cast``: setitem's path for a boolean
    mask and a one-element value)."""
    idx = _numpy_index(out, indices)
    wrong_dtype = values.dtype != out.dtype and not cast
    if check_shape or wrong_dtype:   # (torch names a value of the wrong shape before its dtype)
        try:
            xp.broadcast_to(values, out[idx].shape)
        except ValueError:
            raise _put_shape_error(out, idx, values) from None
    if wrong_dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{_DTYPE_OF[out.dtype]._legacy} for the destination and {_DTYPE_OF[values.dtype]._legacy} "
                           f"for the source.")
    return idx


def _put_shape_error(out, idx, values):
    return RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot be broadcast to "
                        f"indexing result of shape {list(out[idx].shape)}")


def _put_into(out, idx, values, accumulate):
    """Write (or add, where an index repeats: each of its values) ``values`` into ``out`` at ``idx``."""
    if accumulate:
        xp.add.at(out, idx, values.astype(out.dtype, copy=False))
    else:
        out[idx] = values


def _index_put_kernel(self, indices, values, accumulate=False):
    return _index_put_into_kernel(self.copy(), indices, values, accumulate)


def _index_put_into_kernel(self, indices, values, accumulate=False):
    """index_put_: written into ``self`` itself. NumPy's write checks the value's shape before it
    writes, with torch's broadcasting rule but for a value with leading 1s (more dims than the
    indexed places), which only NumPy accepts: that one is checked first. One value put at a boolean
    mask is cast to ``self``'s dtype (torch's kernel hands that case to masked_fill_)."""
    cast = not accumulate and values.size == 1 and len(indices) == 1 and indices[0] is not None \
        and indices[0].dtype == bool
    idx = _checked_put(self, indices, values, cast, check_shape=values.ndim > 0 and values.shape[0] == 1)
    try:
        _put_into(self, idx, values, accumulate)
    except ValueError:
        raise _put_shape_error(self, idx, values) from None
    return self


index_op = defop("index.Tensor(Tensor self, Tensor?[] indices) -> Tensor", _index_kernel, node="IndexBackward0",
                 self=lambda grad, self_sizes, indices: index_backward(grad, self_sizes, indices),
                 indices=None)
index_put_op = defop("index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor",
                     _index_put_kernel, node="IndexPutBackward0",
                     self=lambda grad, indices, accumulate: grad if accumulate else
                     aten.index_put(grad, indices, aten.new_zeros(grad, ()), False),
                     values=lambda grad, indices: aten.index(grad, indices),
                     indices=None)
# (torch's index_put_ may write one value into elements that share memory, and refuses a value that is self)
index_put__op = defop("index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False) "
                      "-> Tensor(a!)", _index_put_into_kernel, inplace_of=index_put_op,
                      may_overlap=True, refuse_aliases="any")


# ---- gather / scatter ------------------------------------------------------------------------
def _index_grid(index, dim):
    """The full index tuple that addresses, for each element of ``index``, the position ``index``
    names along ``dim`` (and its own position in the other dims)."""
    grid = [_array_on_device_of(index, g) for g in xp.indices(index.shape, sparse=True)]
    grid[dim] = index
    return tuple(grid)


def _check_index(index, fn, shape, d, src_shape=None):
    """torch's checks for gather/scatter indices: integer dtype, same number of dims, no larger
    than ``self`` (except on ``d``) and than ``src``, every index in [0, size)."""
    if index.dtype.kind not in "iu":
        raise RuntimeError(f"{fn}(): Expected dtype int32/int64 for index")
    # (a 0-d tensor counts as one of shape (1,) here, as torch's ensure_nonempty_dim makes it)
    shape = tuple(shape) or (1,)
    src_shape = None if src_shape is None else tuple(src_shape) or (1,)
    if not index.ndim:
        index = index.reshape(1)
    if index.ndim != len(shape) and index.size:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    if not index.size:
        return
    too_big = [k for k in range(len(shape)) if k != d and index.shape[k] > shape[k]]
    if src_shape is not None:
        if too_big or any(index.shape[k] > src_shape[k] for k in range(len(src_shape))):
            raise RuntimeError(f"Expected index {list(index.shape)} to be no larger than self {list(shape)} apart "
                               f"from dimension {d} and to be no larger size than src {list(src_shape)}")
    elif too_big:
        raise RuntimeError(f"Size does not match at dimension {too_big[0]} expected index {list(index.shape)} to be "
                           f"no larger than self {list(shape)} apart from dimension {d}")
    if not has_values(index):   # (meta: torch's meta kernels check shapes only)
        return
    n = shape[d]
    hi, lo = index.max(), index.min()
    if hi >= n or lo < 0:
        raise RuntimeError(f"index {int(hi) if hi >= n else int(lo)} is out of bounds for dimension {d} with size {n}")


def _gather_kernel(self, dim, index, *, sparse_grad=False):
    d = _wrap_dim(dim, self.ndim) if self.ndim else 0
    _check_index(index, "gather", self.shape, d)
    if not self.ndim:
        return self[()].reshape(index.shape) if index.ndim else self.copy()
    return self[_index_grid(index, d)]


def _scatter_into(self, dim, index, src, reduce=None, fn="scatter"):
    """``self`` with ``src`` (an array or a number) written, added or multiplied in at the positions
    ``index`` names along ``dim`` (a copy: the out-of-place op)."""
    d = _wrap_dim(dim, self.ndim) if self.ndim else 0
    is_array = not isinstance(src, numbers.Number)   # (an array on any device, or the value overload's number)
    _check_index(index, fn, self.shape, d, src.shape if is_array else None)
    if is_array:
        if src.dtype != self.dtype:
            raise RuntimeError(f"{fn}(): Expected self.dtype to be equal to src.dtype")
        src = src[tuple(builtins.slice(0, s) for s in index.shape)] if src.shape != index.shape else src
    out = self.copy()
    target = out if out.ndim else out.reshape(1)    # (a 0-d tensor scatters as a one-element one)
    if not self.ndim:
        index = index.reshape(-1)
        src = src.reshape(-1)[:index.size] if is_array else src
    where = _index_grid(index, d)
    if reduce is None:
        target[where] = src
    elif reduce == "add":
        xp.add.at(target, where, src)
    elif reduce == "multiply":
        xp.multiply.at(target, where, src)
    else:
        raise RuntimeError("reduce argument must be either add or multiply.")
    return out


def _scatter_reduce_kernel(self, dim, index, src, *, reduce):
    return _scatter_into(self, dim, index, src, reduce)


gather_op = defop("gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor", _gather_kernel,
                  node="GatherBackward0",
                  self=lambda grad, self, dim, index, sparse_grad: gather_backward(grad, self, dim, index),
                  index=None)
scatter_add_op = defop("scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor",
                       lambda self, dim, index, src: _scatter_into(self, dim, index, src, "add"),
                       node="ScatterAddBackward0", self=lambda grad: grad,
                       src=lambda grad, dim, index: aten.gather(grad, dim, index), index=None)
scatter_src_op = defop("scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor", _scatter_into,
                       node="ScatterBackward0", self=lambda grad, dim, index: aten.scatter.value(grad, dim, index, 0),
                       src=lambda grad, dim, index: aten.gather(grad, dim, index), index=None)
scatter_value_op = defop("scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor", _scatter_into,
                         node="ScatterBackward1",
                         self=lambda grad, dim, index: aten.scatter.value(grad, dim, index, 0), index=None)
# torch has no derivative for the reduce= forms (its node is NotImplemented): asking for one raises
scatter_reduce_src_op = defop("scatter.reduce(Tensor self, int dim, Tensor index, Tensor src, *, str reduce) -> Tensor",
                              _scatter_reduce_kernel, node="NotImplemented", index=None)
scatter_reduce_value_op = defop("scatter.value_reduce(Tensor self, int dim, Tensor index, Scalar value, *, str reduce) "
                                "-> Tensor", _scatter_reduce_kernel, node="NotImplemented", index=None)
# the in-place variants: the out-of-place result written into self (torch's kernels refuse an input
# that shares any of self's memory)
scatter_add__op = defop("scatter_add_(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)",
                        inplace_of=scatter_add_op, refuse_aliases="any")
scatter__src_op = defop("scatter_.src(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)",
                        inplace_of=scatter_src_op, refuse_aliases="any")
scatter__value_op = defop("scatter_.value(Tensor(a!) self, int dim, Tensor index, Scalar value) -> Tensor(a!)",
                          inplace_of=scatter_value_op, refuse_aliases="any")
scatter__reduce_src_op = defop("scatter_.reduce(Tensor(a!) self, int dim, Tensor index, Tensor src, *, str reduce) "
                               "-> Tensor(a!)", inplace_of=scatter_reduce_src_op, refuse_aliases="any")
scatter__reduce_value_op = defop("scatter_.value_reduce(Tensor(a!) self, int dim, Tensor index, Scalar value, *, "
                                 "str reduce) -> Tensor(a!)", inplace_of=scatter_reduce_value_op, refuse_aliases="any")


# ---- index_select / index_add / index_copy / index_fill ---------------------------------------
def _index_select_kernel(self, dim, index):
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index.dtype.kind not in "iu":
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    d = _wrap_dim(dim, self.ndim) if self.ndim else 0
    flat = index.reshape(-1)
    n = self.shape[d] if self.ndim else 1
    if flat.size and has_values(flat) and (flat.max() >= n or flat.min() < 0):
        if d == 0:  # torch's two kernels word it differently (and raise different types)
            raise IndexError("index out of range in self")
        bad = int(flat.max() if flat.max() >= n else flat.min())
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} "
                           f"axis_dim={n}")
    return xp.take(self, flat, axis=d) if self.ndim else self.copy()


def _along_dim(ndim, d, index):
    """The NumPy index that puts ``index`` on dim ``d`` and takes the other dims whole."""
    return (builtins.slice(None),) * d + (index.reshape(-1),)


def _index_add_kernel(self, dim, index, source, *, alpha=1):
    d = _wrap_dim(dim, self.ndim)
    n = index.size
    if source.ndim and n != source.shape[d]:
        raise RuntimeError(f"index_add_(): Number of indices ({n}) should be equal to source.size(dim): "
                           f"({source.shape[d]}), for dim: {d}")
    _checks.check_index_bounds(index, self.shape[d], d, error=RuntimeError)  # (index_add's is a RuntimeError)
    out = self.copy()
    added = source * alpha if alpha != 1 else source
    xp.add.at(out, _along_dim(self.ndim, d, index), added.astype(out.dtype, copy=False))
    return out


def _index_copy_kernel(self, dim, index, source):
    d = _wrap_dim(dim, self.ndim)
    _checks.check_index_bounds(index, self.shape[d], d, prefix="index_copy_(): ")
    out = self.copy()
    out[_along_dim(self.ndim, d, index)] = source
    return out


def _index_fill_kernel(self, dim, index, value):
    d = _wrap_dim(dim, self.ndim)
    _checks.check_index_bounds(index, self.shape[d], d)
    if isinstance(value, xp.ndarray) and value.ndim:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.ndim} dimension(s).")
    out = self.copy()
    out[_along_dim(self.ndim, d, index)] = value
    return out


def _index_source_backward(grad, dim, index, source):
    """index_add's and index_copy's gradient for ``source``: the gradient's rows at ``index``."""
    g = aten.index_select(grad, dim, index)
    return aten.expand(g, source.shape) if source.ndim else g.reshape(())


index_select_op = defop("index_select(Tensor self, int dim, Tensor index) -> Tensor", _index_select_kernel,
                        node="IndexSelectBackward0",
                        self=lambda grad, self_sizes, dim, index: index_select_backward(grad, self_sizes, dim, index),
                        index=None)
index_add_op = defop("index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor",
                     _index_add_kernel, node="IndexAddBackward0", self=lambda grad: grad,
                     source=lambda grad, dim, index, source, alpha: maybe_multiply(
                         _index_source_backward(grad, dim, index, source), alpha),
                     index=None)
index_copy_op = defop("index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor", _index_copy_kernel,
                      node="IndexCopyBackward0",
                      self=lambda grad, dim, index: aten.index_fill.int_Scalar(grad, dim, index, 0),
                      source=lambda grad, dim, index, source: _index_source_backward(grad, dim, index, source),
                      index=None)
index_add__op = defop("index_add_(Tensor(a!) self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) "
                      "-> Tensor(a!)", inplace_of=index_add_op, refuse_aliases="any")
index_fill_op = defop("index_fill.int_Scalar(Tensor self, int dim, Tensor index, Scalar value) -> Tensor",
                      _index_fill_kernel, node="IndexFillBackward0",
                      self=lambda grad, dim, index: aten.index_fill.int_Scalar(grad, dim, index, 0), index=None)
# (the value's gradient: the sum of the gradient over the filled places, each counted once)
index_fill_tensor_op = defop("index_fill.int_Tensor(Tensor self, int dim, Tensor index, Tensor value) -> Tensor",
                             _index_fill_kernel, node="IndexFillBackward1",
                             self=lambda grad, dim, index: aten.index_fill.int_Scalar(grad, dim, index, 0),
                             value=lambda grad, dim, index: aten.sum(
                                 grad - aten.index_fill.int_Scalar(grad, dim, index, 0)),
                             index=None)
index_copy__op = defop("index_copy_(Tensor(a!) self, int dim, Tensor index, Tensor source) -> Tensor(a!)",
                       inplace_of=index_copy_op)
# (torch's index_fill_ may write its one value into elements that share memory; the value, read before
# the write, may be part of self)
index_fill__op = defop("index_fill_.int_Scalar(Tensor(a!) self, int dim, Tensor index, Scalar value) -> Tensor(a!)",
                       inplace_of=index_fill_op, may_overlap=True, refuse_aliases=None)
index_fill__tensor_op = defop("index_fill_.int_Tensor(Tensor(a!) self, int dim, Tensor index, Tensor value) "
                              "-> Tensor(a!)", inplace_of=index_fill_tensor_op, may_overlap=True, refuse_aliases=None)


# ---- masked_select / masked_scatter, take / put, nonzero --------------------------------------
def _masked_select_kernel(self, mask):
    if mask.dtype != bool:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = _checks.broadcast_shape(mask.shape, self.shape)   # (in torch's order: its error names mask as tensor a)
    return xp.broadcast_to(self, shape)[xp.broadcast_to(mask, shape)]


def _masked_scatter_kernel(self, mask, source):
    if mask.dtype != bool:
        raise RuntimeError("masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{_dtype.cpp_name(_DTYPE_OF[mask.dtype])}")
    shape = _checks.broadcast_shape(self.shape, mask.shape)
    m = xp.broadcast_to(mask, shape)
    count = int(m.sum())
    if source.size < count:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    out = xp.broadcast_to(self, shape).copy()
    out[m] = source.reshape(-1)[:count]
    return out


def _masked_scatter_backward_kernel(grad_output, mask, sizes):
    """masked_scatter's gradient for ``source``: the gradient at the masked places, in order, then
    zeros for the source elements that were not used."""
    picked = grad_output[xp.broadcast_to(mask, grad_output.shape)]
    out = _zeros_like(grad_output, int(xp.prod(sizes)) if len(sizes) else 1)
    out[:picked.size] = picked
    return out.reshape(tuple(sizes))


def _flat_positions(self, index, what):
    if index.dtype != xp.int64:
        raise RuntimeError(f"{what}(): Expected a long tensor for index, but got "
                           f"{_dtype._BY_NUMPY[index.dtype]._legacy}")
    n = self.size
    flat = index.reshape(-1)
    bad = (flat >= n) | (flat < -n)
    if has_values(flat) and bad.any():
        raise IndexError(f"out of range: tried to access index {int(flat[bad][0])} on a tensor of {n} elements.")
    return xp.where(flat < 0, flat + n, flat)


def _put_kernel(self, index, source, accumulate=False):
    if source.dtype != self.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{_dtype._BY_NUMPY[self.dtype]._legacy} and source.dtype = "
                           f"{_dtype._BY_NUMPY[source.dtype]._legacy}")
    positions = _flat_positions(self, index, "put_")
    if source.size != index.size:
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.size}, index.numel() = {index.size}")
    out = self.copy(order="C")
    flat = out.reshape(-1)
    if accumulate:
        xp.add.at(flat, positions, source.reshape(-1))
    else:
        flat[positions] = source.reshape(-1)
    # (torch's put clones self keeping its layout, then writes in row-major positions)
    return out if self.flags.c_contiguous else copy_preserving_layout(out, like=self)


def _take_kernel(self, index):
    return self.reshape(-1)[_flat_positions(self, index, "take")].reshape(index.shape)


def _nonzero_kernel(self):
    if not self.ndim:           # a 0-d tensor: one empty coordinate if it is nonzero
        return _zeros_like(self, (int(bool(self)), 0), "int64")
    return xp.stack(xp.nonzero(self), axis=1).astype("int64")


masked_select_op = defop("masked_select(Tensor self, Tensor mask) -> Tensor", _masked_select_kernel,
                         node="MaskedSelectBackward0",
                         self=lambda grad, self, mask: masked_select_backward(grad, self, mask), mask=None)
masked_scatter_op = defop("masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor", _masked_scatter_kernel,
                          node="MaskedScatterBackward0", self=lambda grad, mask: aten.masked_fill(grad, mask, 0),
                          source=lambda grad, mask, source_sizes: aten.masked_scatter_backward(
                              grad, mask, source_sizes),
                          mask=None)
masked_scatter_backward_op = defop("masked_scatter_backward(Tensor grad_output, Tensor mask, SymInt[] sizes) -> Tensor",
                                   _masked_scatter_backward_kernel, node="MaskedScatterBackwardBackward0",
                                   grad_output=lambda grad, grad_output_sizes, mask: aten.masked_scatter(
                                       aten.new_zeros(grad, grad_output_sizes), mask, grad),
                                   mask=None)
masked_scatter__op = defop("masked_scatter_(Tensor(a!) self, Tensor mask, Tensor source) -> Tensor(a!)",
                           inplace_of=masked_scatter_op)
take_op = defop("take(Tensor self, Tensor index) -> Tensor", _take_kernel, node="TakeBackward0",
                self=lambda grad, self, index: take_backward(grad, self, index), index=None)
put_op = defop("put(Tensor self, Tensor index, Tensor source, bool accumulate=False) -> Tensor", _put_kernel,
               node="PutBackward0",
               self=lambda grad, index, source, accumulate: grad if accumulate else
               aten.put(grad, index, aten.zeros_like(source), False),
               source=lambda grad, index, source: aten.take(grad, index).reshape(source.shape),
               index=None)
put__op = defop("put_(Tensor(a!) self, Tensor index, Tensor source, bool accumulate=False) -> Tensor(a!)",
                inplace_of=put_op)
nonzero_op = defop("nonzero(Tensor self) -> Tensor", _nonzero_kernel)


# =============================================================================================
# tensor[index] and tensor[index] = value
# =============================================================================================
def _on_device_of(input, array):
    """An index tensor made from Python values (a list, ``True``), on ``input``'s device, as torch
    makes it (a CPU tensor would break the device rule of a meta or CUDA ``input``)."""
    return _wrap(to_device(array, device_type_of(input._data)))


def _index_tensor(i, input):
    """An element of an index that goes to the advanced step, as the index tensor torch makes of it:
    a Tensor as it is (refused unless integer or boolean), a list or NumPy array as a new tensor on
    ``input``'s device (Long, unless all bools: a list of floats truncates, [] selects nothing)."""
    if isinstance(i, Tensor):
        if i._data.dtype.kind not in "iub":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return i
    if isinstance(i, (list, tuple)):
        a = xp.asarray([x._data if isinstance(x, Tensor) else x for x in i])
        return _on_device_of(input, a if a.dtype == bool or a.dtype.kind in "iu" else a.astype("int64"))
    if isinstance(i, xp.ndarray):
        return _wrap(i)
    raise _checks.index_type_error(i)   # x[1.5], x['a']


def _is_sequence(obj):
    """Python's PySequence_Check, as torch's indexing asks it (a dict is not one, a NumPy scalar is not)."""
    return isinstance(obj, (list, tuple, range, str, bytes, xp.ndarray)) or _is_other_sequence(obj)


def _is_other_sequence(index):
    """A sequence that is not one of the index types handled by name (a random_split Subset, a user
    class with __len__ and __getitem__)."""
    return (not isinstance(index, (tuple, list, range, str, bytes, dict, Tensor, xp.ndarray, xp.generic))
            and hasattr(type(index), "__getitem__") and hasattr(type(index), "__len__"))


_SEQUENCE_WARNING = ("Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in "
                     "pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as "
                     "tensor index, x[torch.tensor(seq)], which will result either in an error or a different result")


def _sequence_as_index(index):
    """torch's treatSequenceAsTuple (python_variable_indexing.cpp) for a sequence that is not a
    tuple: one of fewer than 32 elements holding a Tensor, a sequence (a list, a tuple, a NumPy
    array...), a slice, None or Ellipsis is a tuple of indices, with torch's deprecation warning;
    any other (only numbers, or 32 elements or more) is one index, a tensor of its elements."""
    items = list(index)
    if len(items) < 32 and not builtins.all(type(i) is int for i in items) and builtins.any(
            isinstance(i, (Tensor, builtins.slice)) or i is None or i is Ellipsis or _is_sequence(i) for i in items):
        _warnings.warn(_SEQUENCE_WARNING)   # (at the user's indexing line, however deep the seam went)
        return tuple(items)
    return ([int(i) if isinstance(i, Tensor) else i for i in items],)


def _normalise(index):
    """The index as a tuple of index elements."""
    if type(index) is list or _is_other_sequence(index):
        index = _sequence_as_index(index)
    elif not isinstance(index, tuple):
        index = (index,)
    if builtins.any(type(i) is range for i in index):  # d2l's y_hat[range(len(y_hat)), y]: a range is a list of ints
        index = tuple(list(i) if type(i) is range else i for i in index)
    return index


def _consumed(i):
    """How many input dims an index element uses (a bool mask uses as many as it has)."""
    if i is None or i is Ellipsis or isinstance(i, bool):
        return 0
    if isinstance(i, Tensor) and i._data.dtype == bool:  # (a 0-dim mask uses none)
        return i._data.ndim
    if isinstance(i, xp.ndarray) and i.dtype == bool:
        return i.ndim
    return 1


def _is_int_scalar(i):
    """A Python/NumPy int or a 0-dim integer tensor: torch applies it as select(), a view."""
    if isinstance(i, (int, xp.integer)) and not isinstance(i, bool):
        return True
    return isinstance(i, Tensor) and i._data.ndim == 0 and i._data.dtype.kind in "iu"


def _full_slice(i, n):
    """A slice torch's indexing leaves out (start 0, step 1, through the end): ``x[:, 0]`` selects
    from ``x`` itself, not from a slice of it."""
    return (i.start is None or i.start == 0) and (i.step is None or i.step == 1) and \
        (i.stop is None or i.stop >= n)


def _apply_slicing(input, index, elide_full_slices=True):
    """torch's applySlicing: the basic indices (ints, slices, None, Ellipsis, bools) applied one
    by one as views (select/slice/unsqueeze), and the index tensors of the advanced step (integer
    and boolean tensors, lists) collected for ``aten.index``/``index_put_``: one entry per dim of
    the view, None where a dim is taken whole. Returns ``(view, indices, advanced)``; ``view`` is
    ``input`` itself when no index made a view."""
    from .shape import select, _slice, unsqueeze
    if type(index) is builtins.slice and input._data.ndim == 0:  # (a lone slice goes straight to slice())
        if input._requires_grad and _state.enabled:
            edge_of(input)  # (torch's autograd takes the input's history, and may refuse it, before slice() runs)
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    if isinstance(index, numbers.Integral) and not isinstance(index, bool) and input._data.ndim == 0:
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in "
                         "C++ to convert a 0-dim tensor to a number")
    index = _normalise(index)
    nd = input._data.ndim
    used = builtins.sum(_consumed(i) for i in index)
    if used > nd:
        raise IndexError(f"too many indices for tensor of dimension {nd}")
    out = input
    dim = 0          # the dim of `out` the next index applies to
    in_dim = 0       # ... and of `input`, for messages
    indices = []     # aten.index's indices, one entry per dim of `out` so far
    advanced = False
    for i in index:
        if i is None:
            out = unsqueeze(out, dim)
            indices.append(None)
            dim += 1
        elif i is Ellipsis:
            k = nd - used
            indices += [None] * k
            dim += k
            in_dim += k
        elif _is_int_scalar(i):
            n = out._data.shape[dim]
            if not -n <= int(i) < n:  # (indexing words it differently from select())
                raise IndexError(f"index {int(i)} is out of bounds for dimension {in_dim} with size {n}")
            out = select(out, dim, int(i))
            in_dim += 1
        elif isinstance(i, builtins.slice):
            in_dim += 1
            n = out._data.shape[dim]
            if not (elide_full_slices and _full_slice(i, n)):
                start, stop, step = i.indices(n)
                if step <= 0:
                    raise ValueError("step must be greater than zero")
                out = _slice(out, dim, start, stop, step)
            indices.append(None)
            dim += 1
        elif isinstance(i, bool) or (isinstance(i, Tensor) and i._data.ndim == 0 and i._data.dtype == bool):
            # torch: x[True] is x.unsqueeze(d)[[0]] (a dim of size 1), x[False] is x.unsqueeze(d)[[]]:
            # positions, not a mask (whose count a meta tensor could not know)
            out = unsqueeze(out, dim)
            indices.append(_on_device_of(out, xp.arange(int(bool(i)), dtype="int64")))
            advanced = True
            dim += 1
        else:
            t = _index_tensor(i, out)
            advanced = True
            dim += t._data.ndim if t._data.dtype == bool else 1
            indices.append(t)
    if advanced:
        while indices[-1] is None:      # (torch leaves out the trailing dims taken whole)
            indices.pop()
    return out, indices, advanced


@overridable
def getitem(input, index):
    """tensor[index], as torch's python indexing does it: the basic indices as views (select,
    slice, unsqueeze), then the advanced ones in one ``aten.index`` (IndexBackward0). A lone slice
    is always applied (``x[:]`` is a SliceBackward0); inside a tuple a full slice is left out, and
    an index that changes nothing gives an alias (``x[...]``, ``x[:, :]``: AliasBackward0)."""
    if type(index) is Tensor and index._data.ndim:   # the usual advanced index: one index tensor or mask
        return index_op(input, [_index_tensor(index, input)])
    if type(index) is list and index and builtins.all(type(i) is int for i in index):   # x[[0, 2]]: one index
        return index_op(input, [_on_device_of(input, xp.asarray(index, dtype="int64"))])
    out, indices, advanced = _apply_slicing(input, index, elide_full_slices=type(index) is not builtins.slice)
    if advanced:
        return index_op(out, indices)
    if out is input:
        from .shape import _alias_view
        return _alias_view(input)
    return out


getitem.__name__, getitem.__qualname__ = "__getitem__", "Tensor.__getitem__"   # (the name torch's modes see)
Tensor.__getitem__ = getitem


def _prefix_1s_stripped(value):
    """torch's slicePrefix1sSize: the value without its leading size-1 dims (a view)."""
    vs = value._data.shape
    k = 0
    while k < len(vs) and vs[k] == 1:
        k += 1
    return value.view(vs[k:])


def _copy_to(dst, src):
    """torch's copy_to for ``x[basic index] = src``: copy_ when the shapes agree, fill_ for a 0-d
    value, else copy_ of the value viewed without its leading 1s and expanded to the target (so
    the graph shows ViewBackward0 and ExpandBackward0, and expand raises for a value that does not
    fit)."""
    from .pointwise import copy_, fill_
    if src._data.shape == dst._data.shape:
        copy_(dst, src)
    elif src._data.ndim == 0:
        fill_(dst, src)
    else:
        copy_(dst, _prefix_1s_stripped(src).expand(dst._data.shape))


def _index_put_(dst, indices, value):
    """``dst[indices] = value`` for an advanced index: torch's ``aten.index_put_``, the value viewed
    without its leading 1s, as torch's setitem does."""
    vs = value._data.shape
    if vs and vs[0] == 1:
        value = _prefix_1s_stripped(value)
    index_put__op(dst, indices, value)


_NUMBERS = (int, float, bool)


@overridable
def setitem(input, index, value):
    """``input[index] = value`` as torch's python indexing does it: the basic part of the index
    makes a view of ``input``, the value is written into it with copy_/fill_ (advanced indices:
    index_put_), and that in-place op on a view rewrites ``input``'s history (CopySlices).
    Without autograd, a basic index is written directly (the same write, one version bump)."""
    if not isinstance(value, (Tensor, numbers.Number, xp.generic, xp.ndarray)):
        raise _checks.assign_type_error(value, input)  # x[0] = [1.0, 2.0]: torch's TypeError
    if index is False:
        return
    if not input._requires_grad and not seam.dispatching and _write_directly(input, index, value):
        return
    if not isinstance(value, Tensor):
        from ._op import as_tensor_arg
        value = as_tensor_arg(value, input)
    out, indices, advanced = _apply_slicing(input, index)
    if advanced:
        _index_put_(out, indices, value)
    else:
        _copy_to(out, value)


setitem.__name__, setitem.__qualname__ = "__setitem__", "Tensor.__setitem__"


def _write_directly(input, index, value):
    """The fast path of setitem when autograd has nothing to record (``input`` needs no gradient,
    nor does the value, which does not share ``input``'s memory) and the index is basic: NumPy
    writes the elements, with the checks torch would make before (indices in range, positive
    steps, no write into an expanded tensor). Returns False to take the general path instead
    (which also gives torch's errors)."""
    vc = input._vc      # (made now if input has none: the write bumps it)
    if vc.inference and not _state.inference:   # (refused on the general path, after its checks of the index
        return False                           # and the value, as torch: ops/_op._refuse_inference_write)
    if type(value) in _NUMBERS:
        v = value
    elif isinstance(value, Tensor) and not (value._requires_grad and _state.enabled) and value._counter is not vc \
            and type(value._data) is type(input._data):
        v = value._data
    else:
        return False
    d = input._data
    items = index if type(index) is tuple else (index,)
    shape, dim, ints = d.shape, 0, False
    for i in items:
        t = type(i)
        if t is int:
            if dim >= len(shape) or not -shape[dim] <= i < shape[dim]:
                return False
            dim, ints = dim + 1, True
        elif t is builtins.slice:
            if dim >= len(shape) or not (i.step is None or type(i.step) is int and i.step > 0):
                return False
            dim += 1
        elif i is Ellipsis:
            if ints or Ellipsis in items[items.index(i) + 1:]:
                return False  # (ints before an Ellipsis count from the front, after it from the back)
            dim = len(shape)
        elif i is not None:
            return False
    if dim > len(shape) or 0 in d.strides:
        return False
    try:
        d[items] = v
    except (ValueError, TypeError):
        return False  # (a value that does not fit: the general path raises torch's error)
    bump_version(input, "__setitem__")
    return True


Tensor.__setitem__ = setitem


# =============================================================================================
# The public functions
# =============================================================================================
def _index_put_into_zeros(grad, sizes, idx):
    """Zeros of ``sizes`` with ``grad`` at a basic index ``idx`` (full slices but at one dim, which
    holds an int or a slice): ``select_backward``/``slice_backward``. Kept for the hand-written
    SliceBackward0/SelectBackward0 of ``ops/shape.py`` until the shape family's conversion
    replaces them (then delete it)."""
    dim = next((k for k, i in enumerate(idx) if i != builtins.slice(None)), 0)
    i = idx[dim] if idx else builtins.slice(None)
    if isinstance(i, builtins.slice):
        start, stop, step = i.indices(sizes[dim]) if sizes else (0, 0, 1)
        return aten.slice_backward(grad, tuple(sizes), dim, start, stop, step)
    return aten.select_backward(grad, tuple(sizes), dim, i)


@method()
@overridable
def gather(input, dim, index, *, sparse_grad=False):
    return gather_op(input, dim, index, sparse_grad=sparse_grad)


# (torch's overloads: src a tensor or a number, with reduce= or without) -> (out-of-place, in-place)
_SCATTER_OPS = {(True, False): (scatter_src_op, scatter__src_op), (False, False): (scatter_value_op, scatter__value_op),
                (True, True): (scatter_reduce_src_op, scatter__reduce_src_op),
                (False, True): (scatter_reduce_value_op, scatter__reduce_value_op)}


def _scatter(in_place, input, dim, index, src, value, reduce):
    """scatter and scatter_: the overload for ``src`` (a tensor, or ``value``, a number) and ``reduce``."""
    if src is None:
        src = value
    is_tensor = isinstance(src, Tensor)
    op = _SCATTER_OPS[is_tensor, reduce is not None][in_place]
    if reduce is None:
        return op(input, dim, index, src)
    if is_tensor:
        _warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in "
                       "a future PyTorch release. Use torch.scatter_reduce instead for more reduction options.")
    return op(input, dim, index, src, reduce=reduce)


@method()
@overridable
def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    return _scatter(False, input, dim, index, src, value, reduce)


@method()
@overridable
def scatter_(input, dim, index, src=None, *, value=None, reduce=None):
    return _scatter(True, input, dim, index, src, value, reduce)


@method()
@overridable
def scatter_add(input, dim, index, src):
    return scatter_add_op(input, dim, index, src)


@method()
@overridable
def scatter_add_(input, dim, index, src):
    return scatter_add__op(input, dim, index, src)


from .scatter_reduce import scatter_reduce, index_reduce  # noqa: E402,F401  (its own file: the op and its derivative)


@method()
@overridable
def index_select(input, dim, index):
    return index_select_op(input, dim, index)


@method()
@overridable
def index_add(input, dim, index, source, *, alpha=1):
    return index_add_op(input, dim, index, source, alpha=alpha)


@method()
@overridable
def index_add_(input, dim, index, source, *, alpha=1):
    return index_add__op(input, dim, index, source, alpha=alpha)


@method()
@overridable
def index_fill(input, dim, index, value):
    if isinstance(value, Tensor):
        return index_fill_tensor_op(input, dim, index, value)
    return index_fill_op(input, dim, index, value)


@method()
@overridable
def index_fill_(input, dim, index, value):
    if isinstance(value, Tensor):
        return index_fill__tensor_op(input, dim, index, value)
    return index_fill__op(input, dim, index, value)


@method()
@overridable
def index_copy(input, dim, index, source):
    return index_copy_op(input, dim, index, source)


@method()
@overridable
def index_copy_(input, dim, index, source):
    return index_copy__op(input, dim, index, source)


def _index_list(indices):
    """torch.index_put's indices, a tuple or list of tensors (the public function takes no None,
    which only the aten op and indexing use for a dim taken whole)."""
    for k, i in enumerate(indices):
        if not isinstance(i, Tensor):
            raise TypeError(f"expected Tensor as element {k} in argument 1, but got {type(i).__name__}")
    return [_index_tensor(i, None) for i in indices]   # (all tensors: no input device needed)


@method()
@overridable
def index_put(input, indices, values, accumulate=False):
    return index_put_op(input, _index_list(indices), values, accumulate)


@method()
@overridable
def index_put_(input, indices, values, accumulate=False):
    return index_put__op(input, _index_list(indices), values, accumulate)


@method()
@overridable
def masked_select(input, mask):
    return masked_select_op(input, mask)


@method()
@overridable
def masked_scatter(input, mask, source):
    return masked_scatter_op(input, mask, source)


@method()
@overridable
def masked_scatter_(input, mask, source):
    return masked_scatter__op(input, mask, source)


@method()
@overridable
def take(input, index):
    return take_op(input, index)


@method()
@overridable
def put(input, index, source, accumulate=False):
    return put_op(input, index, source, accumulate)


@method()
@overridable
def put_(input, index, source, accumulate=False):
    return put__op(input, index, source, accumulate)


@method()
@overridable
def nonzero(input, *, as_tuple=False):
    if not as_tuple:
        return nonzero_op(input)
    d = input._data
    return tuple(_wrap(a.astype("int64")) for a in xp.nonzero(d if d.ndim else d.reshape(1)))


@method()
@overridable
def argwhere(input):
    return nonzero_op(input)


@method()
@overridable
def take_along_dim(input, indices, dim=None):
    """gather along ``dim`` after broadcasting input and indices against each other (except on
    ``dim``), as torch does: both go through expand, so the graph shows ExpandBackward0."""
    if dim is None:
        return gather_op(input.view(-1), 0, indices.view(-1))
    d = _wrap_dim(dim, input._data.ndim)
    shape = list(xp.broadcast_shapes(
        tuple(1 if i == d else s for i, s in enumerate(input._data.shape)),
        tuple(1 if i == d else s for i, s in enumerate(indices._data.shape))))
    ishape = shape.copy()
    ishape[d] = indices._data.shape[d]
    xshape = shape.copy()
    xshape[d] = input._data.shape[d]
    return gather_op(input.expand(xshape), d, indices.expand(ishape))
