"""Joining and repeating: cat, stack, repeat, tile, flip, roll, tril/triu, diag."""
import builtins

from .. import _checks, _dtype
from .._tensor import Tensor, _wrap, _wrap_dim
from .._array import xp, row_major, copy_preserving_layout
from ..autograd.graph import connect
from ._op import _state, method, make_node_class, record
from .._ops import defop, aten
from .._seam import seam

# What glasstorch (torch) has at its top level from this family; the other public functions here are
# Tensor methods only (x.view(...)) or torch.linalg's.
__all__ = ["cat", "concat", "concatenate", "stack", "hstack", "vstack", "row_stack", "dstack", "column_stack",
           "tile", "repeat_interleave", "flip", "fliplr", "flipud", "roll", "tril", "triu", "tril_indices",
           "triu_indices", "diagonal", "diag", "diagonal_copy", "diag_embed", "trace", "meshgrid"]


class CatBackward0(make_node_class("CatBackward0", None)):
    """Each input gets its slice of the gradient back."""

    def backward(self, grad):
        out, start = [], 0
        for size, needed in zip(self.sizes, self.next_functions):
            if needed[0] is None:
                out.append(None)
            elif size is None:  # a legacy empty 1-D input that cat skipped
                out.append(grad.new_zeros(0))
            else:
                out.append(grad.narrow(self.dim, start, size))
            start += size or 0
        return tuple(out)


def _tensor_list(tensors, fn):
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{fn}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    if not tensors:
        if fn == "cat":
            raise ValueError("torch.cat(): expected a non-empty list of Tensors")
        raise RuntimeError("stack expects a non-empty TensorList")
    return _checks.expect_tensors(fn, tensors)


def cat(tensors, dim=0, *, out=None):
    tensors = _tensor_list(tensors, "cat")
    for i, t in enumerate(tensors):
        if t._data.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    # torch skips legacy empty 1-D tensors of shape (0,) in cat: the first other tensor sets the shape
    ref = next((t for t in tensors if not _legacy_empty(t)), tensors[0])
    d = _wrap_dim(dim, ref._data.ndim)
    parts = [t for t in tensors if not _legacy_empty(t) or t is ref]
    for i, t in enumerate(parts):
        if t._data.ndim != ref._data.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref._data.ndim} and {t._data.ndim}")
        for k in range(ref._data.ndim):
            if k != d and t._data.shape[k] != ref._data.shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                   f"{ref._data.shape[k]} but got size {t._data.shape[k]} for tensor number {i} in "
                                   f"the list.")
    from ._op import result_dtype
    dt = result_dtype(*tensors).numpy_dtype
    res = _wrap(row_major(xp.concatenate([t._data for t in parts], axis=d, dtype=dt)) if len(parts) > 1
                else parts[0]._data.astype(dt, order="C", copy=True))
    if _state.enabled and any(t._requires_grad for t in tensors):
        node = record(CatBackward0, res, tuple(tensors))
        node.dim = d
        node.sizes = [t._data.shape[d] if t._data.ndim == ref._data.ndim else None for t in tensors]
    return res if out is None else _checks.write_out("cat", res, out)


concat = concatenate = cat


def _legacy_empty(t):
    return t._data.ndim == 1 and t._data.shape[0] == 0


class StackBackward0(make_node_class("StackBackward0", None)):
    def backward(self, grad):
        return tuple(g if n[0] is not None else None for g, n in zip(grad.unbind(self.dim), self.next_functions))


def stack(tensors, dim=0, *, out=None):
    tensors = _tensor_list(tensors, "stack")
    shp = tensors[0]._data.shape
    for i, t in enumerate(tensors):
        if t._data.shape != shp:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(shp)} at entry 0 and "
                               f"{list(t._data.shape)} at entry {i}")
    d = _wrap_dim(dim, len(shp) + 1)
    from ._op import result_dtype
    dt = result_dtype(*tensors).numpy_dtype
    res = _wrap(row_major(xp.stack([t._data for t in tensors], axis=d).astype(dt, copy=False)))
    if _state.enabled and any(t._requires_grad for t in tensors):
        record(StackBackward0, res, tuple(tensors)).dim = d
    return res if out is None else _checks.write_out("stack", res, out)


def hstack(tensors):
    return cat(tensors, 0 if tensors[0].dim() == 1 else 1)


def vstack(tensors):
    from .shape import atleast_2d
    return cat([atleast_2d(t) for t in tensors], 0)


row_stack = vstack


def dstack(tensors):
    return stack(tensors, 2) if tensors[0].dim() <= 1 else cat(tensors, 2)


def column_stack(tensors):
    return cat([t.reshape(-1, 1) if t.dim() <= 1 else t for t in tensors], 1)


class RepeatBackward0(make_node_class("RepeatBackward0", None)):
    """Sum the gradient over the copies: view (r0, s0, r1, s1, ...) and sum the r dims."""

    def backward(self, grad):
        reps, sizes = self.repeats, self.self_sizes
        lead = len(reps) - len(sizes)
        sizes = (1,) * lead + tuple(sizes)
        split = []
        for r, s in zip(reps, sizes):
            split += [r, s]
        g = grad.reshape(split).sum(tuple(range(0, 2 * len(reps), 2)))
        return g.reshape(self.self_sizes)


@method()
def repeat(input, *repeats):
    from .shape import _shape_arg
    repeats = _shape_arg(repeats)
    if len(repeats) < input._data.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    if any(r < 0 for r in repeats):
        sizes = [r * s for r, s in zip(repeats, (1,) * (len(repeats) - input._data.ndim) + input._data.shape)]
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(sizes)}: {sizes}")
    try:
        res = _wrap(xp.tile(input._data, repeats))
    except MemoryError:
        shape = tuple(r * s for r, s in zip(repeats, (1,) * (len(repeats) - input._data.ndim) + input._data.shape))
        raise _checks.out_of_memory(shape, input._data.itemsize) from None
    if input._requires_grad and _state.enabled:
        node = record(RepeatBackward0, res, (input,), meta_check=False)
        node.repeats, node.self_sizes = repeats, input._data.shape
    return res


@method()
def tile(input, *dims):
    from .shape import _shape_arg
    dims = _shape_arg(dims)
    if len(dims) < input._data.ndim:
        dims = (1,) * (input._data.ndim - len(dims)) + dims
    return repeat(input, dims)


@method()
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    if repeats is None:  # torch.repeat_interleave(repeats): indices repeated
        r = input._data
        return _wrap(xp.repeat(xp.arange(len(r)), r))
    if dim is None:
        input, dim = input.flatten(), 0
    d = _wrap_dim(dim, input._data.ndim)
    if isinstance(repeats, int):  # torch: unsqueeze, expand, clone, view
        shp = input._data.shape
        out = input.unsqueeze(d + 1).expand(shp[:d + 1] + (repeats,) + shp[d + 1:]).clone()
        return out.view(shp[:d] + (shp[d] * repeats,) + shp[d + 1:])
    reps = repeats._data if isinstance(repeats, Tensor) else repeats
    idx = xp.repeat(xp.arange(input._data.shape[d]), reps)
    from .indexing import index_select
    return index_select(input, d, _wrap(idx))


flip_op = defop("flip(Tensor self, int[] dims) -> Tensor",
                lambda self, dims: copy_preserving_layout(xp.flip(self, tuple(dims)) if dims and self.ndim else self,
                                                          like=self),   # (torch keeps the layout)
                node="FlipBackward0", self=lambda grad, dims: flip_op(grad, dims))
FlipBackward0 = flip_op.node


@method()
def flip(input, *dims):
    if seam.on:
        return seam.torch_function(flip, (input,) + dims, {})
    from .shape import _shape_arg
    nd = input._data.ndim
    dims = [_wrap_dim(d, nd) for d in _shape_arg(dims)] if nd else []
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"dim {next(d for d in dims if dims.count(d) > 1)} appears multiple times in the list of dims")
    return flip_op(input, dims)


def fliplr(input):
    return flip(input, 1)


def flipud(input):
    return flip(input, 0)


Tensor.fliplr, Tensor.flipud = fliplr, flipud


class RollBackward0(make_node_class("RollBackward0", None)):
    def backward(self, grad):
        shifts = tuple(-s for s in self.shifts) if isinstance(self.shifts, tuple) else -self.shifts
        return grad.roll(shifts, self.dims)


@method()
def roll(input, shifts, dims=None):
    ns = len(shifts) if isinstance(shifts, (list, tuple)) else 1
    nd = (len(dims) if isinstance(dims, (list, tuple)) else 1) if dims is not None else 0
    if dims is not None and ns != nd or dims is None and ns != 1:
        raise RuntimeError(f"shifts and dimensions must align. shifts: {ns}, dims:{nd}")
    if dims is not None:
        nd_in = input._data.ndim
        dims = tuple(_wrap_dim(d, nd_in) for d in dims) if isinstance(dims, (list, tuple)) else _wrap_dim(dims, nd_in)
    res = _wrap(row_major(xp.roll(input._data, shifts, dims)))
    if input._requires_grad and _state.enabled:
        node = record(RollBackward0, res, (input,), meta_check=False)
        node.shifts = tuple(shifts) if isinstance(shifts, (list, tuple)) else shifts
        node.dims = tuple(dims) if isinstance(dims, (list, tuple)) else dims
    return res


TrilBackward0 = make_node_class("TrilBackward0", lambda self, grad: grad.tril(self.diagonal))
TriuBackward0 = make_node_class("TriuBackward0", lambda self, grad: grad.triu(self.diagonal))


@method()
def tril(input, diagonal=0):
    if input._data.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    res = _wrap(xp.tril(input._data, diagonal))
    if input._requires_grad and _state.enabled:
        record(TrilBackward0, res, (input,), meta_check=False).diagonal = diagonal
    return res


@method()
def triu(input, diagonal=0):
    if input._data.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    res = _wrap(xp.triu(input._data, diagonal))
    if input._requires_grad and _state.enabled:
        record(TriuBackward0, res, (input,), meta_check=False).diagonal = diagonal
    return res


Tensor.tril_ = lambda self, diagonal=0: _inplace(self, "tril_", tril, diagonal)
Tensor.triu_ = lambda self, diagonal=0: _inplace(self, "triu_", triu, diagonal)


def _inplace(self, name, fn, *args):
    from ._op import inplace
    return inplace(self, name, fn, *args)


def tril_indices(row, col, offset=0, *, dtype=None, device=None):
    r, c = xp.tril_indices(row, offset, col)
    return _wrap(xp.stack([r, c]).astype("int64"))


def triu_indices(row, col, offset=0, *, dtype=None, device=None):
    if row < 0 or col < 0:
        raise RuntimeError(f"{'row' if row < 0 else 'col'} must be non-negative, got{row if row < 0 else col}")
    r, c = xp.triu_indices(row, offset, col)
    return _wrap(xp.stack([r, c]).astype("int64"))


class DiagonalBackward0(make_node_class("DiagonalBackward0", None)):
    """Zeros of the input's shape with the gradient placed on the diagonal (differentiable, so
    double backward works: its own derivative takes the diagonal again)."""

    def backward(self, grad):
        from .indexing import _index_put_into_zeros
        return _index_put_into_zeros(grad, self.self_sizes, _diag_index(self.self_sizes, self.offset, self.dim1,
                                                                         self.dim2))


DiagonalBackward0_copy = make_node_class("DiagonalBackward0_copy", DiagonalBackward0.backward)  # torch.diag(2-D)


def _diag_index(shape, offset, d1, d2):
    n1, n2 = shape[d1], shape[d2]
    if offset >= 0:
        k = max(min(n1, n2 - offset), 0)
        i, j = xp.arange(k), xp.arange(k) + offset
    else:
        k = max(min(n1 + offset, n2), 0)
        i, j = xp.arange(k) - offset, xp.arange(k)
    idx = [builtins.slice(None)] * len(shape)
    # advanced indices on d1/d2 move the diagonal to the end, matching xp.diagonal's layout
    grids = xp.ix_(*[xp.arange(s) for k2, s in enumerate(shape) if k2 not in (d1, d2)], xp.arange(k)) \
        if len(shape) > 2 else None
    if grids is None:  # (i runs along dim1, j along dim2, whichever order they come in)
        return (i, j) if d1 < d2 else (j, i)
    others = [k2 for k2 in range(len(shape)) if k2 not in (d1, d2)]
    full = [None] * len(shape)
    for pos, k2 in enumerate(others):
        full[k2] = grids[pos]
    full[d1] = i.reshape((1,) * len(others) + (-1,))
    full[d2] = j.reshape((1,) * len(others) + (-1,))
    return tuple(full)


@method()
def diagonal(input, offset=0, dim1=0, dim2=1):
    nd = input._data.ndim
    d1, d2 = _wrap_dim(dim1, nd), _wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    from .shape import _view
    arr = xp.diagonal(input._data, offset, d1, d2)
    if type(arr) is xp.ndarray and input._data.flags.writeable:
        arr.setflags(write=True)  # NumPy's diagonal is read-only for backward compatibility only; torch's is writable
    res = _view(input, arr)
    if input._requires_grad and _state.enabled:
        node = record(DiagonalBackward0, res, (input,), meta_check=False)
        node.self_sizes, node.offset, node.dim1, node.dim2 = input._data.shape, offset, d1, d2
    return res


class DiagEmbedBackward0(make_node_class("DiagEmbedBackward0", None)):
    def backward(self, grad):
        return grad.diagonal(self.offset)


@method()
def diag(input, diagonal=0):
    if input._data.ndim == 1:
        res = _wrap(xp.diag(input._data, diagonal))
        if input._requires_grad and _state.enabled:
            record(DiagEmbedBackward0, res, (input,), meta_check=False).offset = diagonal
        return res
    if input._data.ndim == 2:
        return diagonal_copy(input, diagonal)
    raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " + str(input._data.ndim) + "D")


def diagonal_copy(input, offset=0, dim1=0, dim2=1):
    nd = input._data.ndim
    d1, d2 = _wrap_dim(dim1, nd), _wrap_dim(dim2, nd)
    res = _wrap(xp.diagonal(input._data, offset, d1, d2).copy())
    if input._requires_grad and _state.enabled:
        node = record(DiagonalBackward0_copy, res, (input,), meta_check=False)
        node.self_sizes, node.offset, node.dim1, node.dim2 = input._data.shape, offset, d1, d2
    return res


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Matrices with ``input``'s last dim on their diagonal, placed at dims ``dim1``/``dim2`` of the
    result (the aten op: its backward takes that diagonal of the gradient, batched)."""
    if seam.on:
        return seam.torch_function(diag_embed, (input, offset, dim1, dim2), {})
    return aten.diag_embed(input, offset, dim1, dim2)


Tensor.diag_embed = diag_embed


class TraceBackward0(make_node_class("TraceBackward0", None)):
    def backward(self, grad):
        from .indexing import _index_put_into_zeros
        n = min(self.self_sizes)
        return _index_put_into_zeros(grad.expand(n), self.self_sizes, (xp.arange(n), xp.arange(n)))


@method()
def trace(input):
    if input._data.ndim != 2:
        raise RuntimeError("trace: expected a matrix, but got tensor with dim " + str(input._data.ndim))
    d = input._data
    res = _wrap(xp.asarray(xp.trace(d), dtype="int64" if d.dtype.kind in "biu" else d.dtype))
    if input._requires_grad and _state.enabled:
        record(TraceBackward0, res, (input,), meta_check=False).self_sizes = d.shape
    return res


def meshgrid(*tensors, indexing=None):
    """Coordinate grids: output i varies along dim i ('ij'), or with the first two dims swapped ('xy').
    Each output is a view (reshape + expand) of its input, as torch's are."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        import warnings
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    swap = indexing == "xy" and len(tensors) >= 2
    ts = [t.reshape(-1) for t in tensors]
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t.shape[0] for t in ts)
    n = len(ts)
    grids = [t.view(*[-1 if k == i else 1 for k in range(n)]).expand(shape) for i, t in enumerate(ts)]
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)
