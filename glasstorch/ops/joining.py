"""Joining and repeating: cat, stack, repeat, tile, flip, roll; the triangles and diagonals (tril/triu,
diagonal -- a view --, diag, diag_embed, trace), as torch's TensorShape/TriangularOps families."""
import builtins

from .. import _checks, _dtype
from .._tensor import Tensor, _wrap, _wrap_dim
from .._array.layout import view_strides
from .._array import (xp, row_major, like_cat_inputs, unsqueezed, copy_preserving_layout, as_strided,
                      arange_like as _arange_like, asarray,
                      zeros_like as _zeros_like)
from ._op import method, accepts_numpy_names, write_into, _check_no_overlap, _triangle_zeroed_in_place
from ._derivatives import cat_tensors_backward, stack_tensors_backward, repeat_backward
from .._ops import defop, aten, node_classes_of
from .._seam import overridable

__getattr__ = node_classes_of(__name__)    # (the node classes declared here, by name: TanhBackward0)

_DTYPE_OF = _dtype._BY_NUMPY

# What glasstorch (torch) has at its top level from this family; the other public functions here are
# Tensor methods only (x.view(...)) or torch.linalg's.
__all__ = ["cat", "concat", "concatenate", "stack", "hstack", "vstack", "row_stack", "dstack", "column_stack",
           "tile", "repeat_interleave", "flip", "fliplr", "flipud", "roll", "tril", "triu", "tril_indices",
           "triu_indices", "diagonal", "diag", "diagonal_copy", "diag_embed", "trace", "meshgrid", "block_diag",
           "cartesian_prod"]


def _tensor_list(tensors, fn):
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{fn}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    if not tensors:
        if fn == "cat":
            raise ValueError("torch.cat(): expected a non-empty list of Tensors")
        raise RuntimeError("stack expects a non-empty TensorList")
    return _checks.expect_tensors(fn, tensors)


def _promoted(arrays):
    """The arrays in torch's result dtype of the list (cat and stack promote as an op with several
    tensor operands does: ``cat([int64, float32])`` is float32, where NumPy's would be float64)."""
    dt = arrays[0].dtype
    if all(a.dtype == dt for a in arrays):
        return arrays
    rt = _dtype.result_type_of([_DTYPE_OF[a.dtype] for a in arrays], (), ()).numpy_dtype
    return [a.astype(rt, copy=False) for a in arrays]


def _cat_kernel(tensors, dim=0):
    for i, t in enumerate(tensors):
        if t.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    # torch skips legacy empty 1-D tensors of shape (0,) in cat: the first other tensor sets the shape
    ref = next((t for t in tensors if not _legacy_empty(t)), tensors[0])
    d = _wrap_dim(dim, ref.ndim)
    for i, t in enumerate(t for t in tensors if not _legacy_empty(t) or t is ref):
        if t.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and {t.ndim}")
        for k in range(ref.ndim):
            if k != d and t.shape[k] != ref.shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                   f"{ref.shape[k]} but got size {t.shape[k]} for tensor number {i} in the list.")
    arrays = _promoted(list(tensors))
    parts = [a for a, t in zip(arrays, tensors) if not _legacy_empty(t) or t is ref]
    if len(parts) == 1:
        return like_cat_inputs(parts[0].copy(order="C"), tensors)
    return like_cat_inputs(xp.concatenate(parts, axis=d), tensors)


def _legacy_empty(a):
    return a.ndim == 1 and a.shape[0] == 0


cat_op = defop("cat(Tensor[] tensors, int dim=0) -> Tensor", _cat_kernel, node="CatBackward0",
               tensors=lambda grad, tensors_sizes, dim: cat_tensors_backward(grad, tensors_sizes, dim))


@accepts_numpy_names()
def cat(tensors, dim=0, *, out=None):
    res = cat_op(_tensor_list(tensors, "cat"), dim)
    return res if out is None else _checks.write_out("cat", res, out)


concat = concatenate = cat


def _stack_kernel(tensors, dim=0):
    shp = tensors[0].shape
    for i, t in enumerate(tensors):
        if t.shape != shp:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(shp)} at entry 0 and "
                               f"{list(t.shape)} at entry {i}")
    d = _wrap_dim(dim, len(shp) + 1)
    arrays = _promoted(list(tensors))
    if d == len(shp) or type(arrays[0]) is not xp.ndarray:
        # torch: cat of the inputs unsqueezed at the end; its layout is theirs (channels-last or row-major)
        return like_cat_inputs(xp.stack(arrays, axis=d), [unsqueezed(a, d) for a in arrays])
    # torch: cat of the inputs along dim, in the layout cat gives them, then viewed with the new dim split off
    joined = like_cat_inputs(xp.concatenate(arrays, axis=d), arrays)
    shape = shp[:d] + (len(arrays),) + shp[d:]
    strides = view_strides(joined.shape, joined.strides, shape)
    return as_strided(joined, shape, strides)


stack_op = defop("stack(Tensor[] tensors, int dim=0) -> Tensor", _stack_kernel, node="StackBackward0",
                 tensors=lambda grad, tensors_sizes, dim: stack_tensors_backward(grad, len(tensors_sizes), dim))


@accepts_numpy_names()
def stack(tensors, dim=0, *, out=None):
    res = stack_op(_tensor_list(tensors, "stack"), dim)
    return res if out is None else _checks.write_out("stack", res, out)


@overridable
def hstack(tensors):
    return cat(tensors, 0 if tensors[0].dim() == 1 else 1)


@overridable
def vstack(tensors):
    from .shape import atleast_2d
    return cat([atleast_2d(t) for t in tensors], 0)


row_stack = vstack


@overridable
def dstack(tensors):
    return stack(tensors, 2) if tensors[0].dim() <= 1 else cat(tensors, 2)


@overridable
def column_stack(tensors):
    return cat([t.reshape(-1, 1) if t.dim() <= 1 else t for t in tensors], 1)


def _repeat_kernel(self, repeats):
    if len(repeats) < self.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    sizes = [r * s for r, s in zip(repeats, (1,) * (len(repeats) - self.ndim) + self.shape)]
    if any(r < 0 for r in repeats):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(sizes)}: {sizes}")
    try:
        # (row-major: torch's repeat copies into a new contiguous tensor; NumPy's tile by ones copies
        # the input's layout, so x.t().repeat(1, 1) was not contiguous)
        return row_major(xp.tile(self, tuple(repeats)))
    except MemoryError:
        raise _checks.out_of_memory(tuple(sizes), self.itemsize) from None


repeat_op = defop("repeat(Tensor self, SymInt[] repeats) -> Tensor", _repeat_kernel, node="RepeatBackward0",
                  self=lambda grad, repeats, self_sizes: repeat_backward(grad, repeats, self_sizes))


@method()
@accepts_numpy_names("repeats")
def repeat(input, *repeats):
    from .shape import _shape_arg
    return repeat_op(input, _shape_arg(repeats))


@method()
@accepts_numpy_names("dims")
def tile(input, *dims):
    from .shape import _shape_arg
    dims = _shape_arg(dims)
    if len(dims) < input._data.ndim:
        dims = (1,) * (input._data.ndim - len(dims)) + dims
    return repeat_op(input, dims)


@method()
@overridable
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    if repeats is None:  # torch.repeat_interleave(repeats): indices repeated
        r = input._data
        return _wrap(xp.repeat(_arange_like(r, len(r)), r))
    if dim is None:
        input, dim = input.flatten(), 0
    d = _wrap_dim(dim, input._data.ndim)
    if isinstance(repeats, int):  # torch: unsqueeze, expand, clone, view
        shp = input._data.shape
        out = input.unsqueeze(d + 1).expand(shp[:d + 1] + (repeats,) + shp[d + 1:]).clone()
        return out.view(shp[:d] + (shp[d] * repeats,) + shp[d + 1:])
    reps = repeats._data if isinstance(repeats, Tensor) else repeats
    idx = xp.repeat(_arange_like(input._data, input._data.shape[d]), reps)
    from .indexing import index_select
    return index_select(input, d, _wrap(idx))


flip_op = defop("flip(Tensor self, int[] dims) -> Tensor",
                lambda self, dims: copy_preserving_layout(xp.flip(self, tuple(dims)) if dims and self.ndim else self,
                                                          like=self),   # (torch keeps the layout)
                node="FlipBackward0", self=lambda grad, dims: flip_op(grad, dims))


@method()
@accepts_numpy_names("dims")
def flip(input, *dims):
    from .shape import _shape_arg
    nd = input._data.ndim
    dims = [_wrap_dim(d, nd) for d in _shape_arg(dims)] if nd else []
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"dim {next(d for d in dims if dims.count(d) > 1)} appears multiple times in the list of dims")
    return flip_op(input, dims)


@overridable
def fliplr(input):
    return flip(input, 1)


@overridable
def flipud(input):
    return flip(input, 0)


Tensor.fliplr, Tensor.flipud = fliplr, flipud


def _roll_kernel(self, shifts, dims=()):
    if not dims:      # no dims: the flattened tensor is rolled
        return xp.roll(self, shifts[0]) if self.ndim else self.copy()
    return row_major(xp.roll(self, tuple(shifts), tuple(dims)))


roll_op = defop("roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor", _roll_kernel, node="RollBackward0",
                self=lambda grad, shifts, dims: aten.roll(grad, [-s for s in shifts], dims))


@method()
@accepts_numpy_names()
def roll(input, shifts, dims=None):
    shifts = list(shifts) if isinstance(shifts, (list, tuple)) else [shifts]
    dims = [] if dims is None else list(dims) if isinstance(dims, (list, tuple)) else [dims]
    if len(shifts) != len(dims) and (dims or len(shifts) != 1):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    nd = input._data.ndim
    return roll_op(input, shifts, [_wrap_dim(d, nd) for d in dims])


def _triangle(keep_lower):
    name = "tril" if keep_lower else "triu"

    def kernel(self, diagonal=0):
        if self.ndim < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        # (row-major whatever the input's layout: torch's tril/triu allocate their result without its strides)
        return row_major(xp.tril(self, diagonal) if keep_lower else xp.triu(self, diagonal))
    kernel.__name__ = f"_{name}_kernel"
    return kernel


tril_op = defop("tril(Tensor self, int diagonal=0) -> Tensor", _triangle(True), node="TrilBackward0",
                self=lambda grad, diagonal: aten.tril(grad, diagonal))
triu_op = defop("triu(Tensor self, int diagonal=0) -> Tensor", _triangle(False), node="TriuBackward0",
                self=lambda grad, diagonal: aten.triu(grad, diagonal))


def _triangle_in_place(out_of_place):
    """tril_'s and triu_'s kernel, with torch's rule for a tensor whose elements share memory (an
    expanded one): refused unless its matrices follow one another in memory, where torch zeroes the
    elements in place (``ops/_op._triangle_zeroed_in_place``; an aliased element gets zero if any of
    its places is zeroed)."""
    def kernel(self, diagonal=0):
        result = out_of_place(self, diagonal)
        if 0 in self.strides and not _triangle_zeroed_in_place(self):
            _check_no_overlap(self)
        write_into(self, result)
        return self
    kernel.__name__ = kernel.__qualname__ = out_of_place.__name__.replace("_kernel", "__kernel")
    return kernel


# (their memory rule is the kernel's: the generated call's is switched off with may_overlap=True)
tril__op = defop("tril_(Tensor(a!) self, int diagonal=0) -> Tensor(a!)", _triangle_in_place(tril_op.kernel),
                 inplace_of=tril_op, may_overlap=True)
triu__op = defop("triu_(Tensor(a!) self, int diagonal=0) -> Tensor(a!)", _triangle_in_place(triu_op.kernel),
                 inplace_of=triu_op, may_overlap=True)


@method()
@overridable
def tril(input, diagonal=0):
    return tril_op(input, diagonal)


@method()
@overridable
def triu(input, diagonal=0):
    return triu_op(input, diagonal)


@method()
@overridable
def tril_(input, diagonal=0):
    return tril__op(input, diagonal)


@method()
@overridable
def triu_(input, diagonal=0):
    return triu__op(input, diagonal)


@overridable
def tril_indices(row, col, offset=0, *, dtype=None, device=None):
    r, c = xp.tril_indices(row, offset, col)
    return _wrap(xp.stack([r, c]).astype("int64"))


@overridable
def triu_indices(row, col, offset=0, *, dtype=None, device=None):
    if row < 0 or col < 0:
        raise RuntimeError(f"{'row' if row < 0 else 'col'} must be non-negative, got{row if row < 0 else col}")
    r, c = xp.triu_indices(row, offset, col)
    return _wrap(xp.stack([r, c]).astype("int64"))


# ---- diagonals and the trace -----------------------------------------------------------------------------
def _diagonal_kernel(self, offset=0, dim1=0, dim2=1):
    """A writable view of the diagonal, as the last dim (NumPy's own ``diagonal`` is read-only)."""
    n = self.ndim
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    a = xp.moveaxis(self, (d1, d2), (-2, -1))
    a = a[..., :, offset:] if offset >= 0 else a[..., -offset:, :]
    shape = a.shape[:-2] + (min(a.shape[-2:]),)
    strides = a.strides[:-2] + (a.strides[-2] + a.strides[-1],)
    return as_strided(a, shape, strides, writeable=self.flags.writeable)


def _diagonal_backward_kernel(grad_output, input_sizes, offset, dim1, dim2):
    out = _zeros_like(grad_output, tuple(input_sizes))
    _diagonal_kernel(out, offset, dim1, dim2)[...] = grad_output
    return out


def _diag_embed_kernel(self, offset=0, dim1=-2, dim2=-1):
    n = self.ndim + 1
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    size = (self.shape[-1] if self.ndim else 1) + builtins.abs(offset)
    shape = list(self.shape[:-1])
    for d in sorted((d1, d2)):
        shape.insert(d, size)
    out = _zeros_like(self, tuple(shape))
    _diagonal_kernel(out, offset, d1, d2)[...] = self
    return out


def _diagonal_formula(grad, self_sizes, offset, dim1, dim2):
    return aten.diagonal_backward(grad, self_sizes, offset, dim1, dim2)


diagonal_op = defop("diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)", _diagonal_kernel,
                    node="DiagonalBackward0", self=_diagonal_formula)
diagonal_backward_op = defop("diagonal_backward(Tensor grad_output, SymInt[] input_sizes, int offset, int dim1, "
                             "int dim2) -> Tensor", _diagonal_backward_kernel, node="DiagonalBackwardBackward0",
                             grad_output=lambda grad, offset, dim1, dim2: aten.diagonal(grad, offset, dim1, dim2))
diagonal_copy_op = defop("diagonal_copy(Tensor self, int offset=0, int dim1=0, int dim2=1) -> Tensor",
                         lambda self, offset=0, dim1=0, dim2=1: _diagonal_kernel(self, offset, dim1, dim2).copy(),
                         node="DiagonalBackward0_copy", self=_diagonal_formula)
diag_embed_op = defop("diag_embed(Tensor self, int offset=0, int dim1=-2, int dim2=-1) -> Tensor", _diag_embed_kernel,
                      node="DiagEmbedBackward0",
                      self=lambda grad, offset, dim1, dim2: aten.diagonal(grad, offset, dim1, dim2))


@method()
@overridable
def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal as a view (writes through it reach ``input``), along the last dim."""
    return diagonal_op(input, offset, dim1, dim2)


@overridable
def diagonal_copy(input, offset=0, dim1=0, dim2=1):
    return diagonal_copy_op(input, offset, dim1, dim2)


@method()
@overridable
def diag(input, diagonal=0):
    """A 1-D input: the matrix with it on a diagonal (diag_embed); a 2-D one: a copy of a diagonal."""
    if input._data.ndim == 1:
        return diag_embed_op(input, diagonal, 0, 1)
    if input._data.ndim == 2:
        return diagonal_copy_op(input, diagonal)
    raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " + str(input._data.ndim) + "D")


@method()
@overridable
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    return diag_embed_op(input, offset, dim1, dim2)


def _trace_kernel(self):
    if self.ndim != 2:
        raise RuntimeError("trace: expected a matrix, but got tensor with dim " + str(self.ndim))
    return asarray(xp.trace(self), dtype="int64" if self.dtype.kind in "biu" else self.dtype)


def _trace_backward_kernel(grad, sizes):
    out = _zeros_like(grad, tuple(sizes))
    n = min(sizes)
    out[xp.arange(n), xp.arange(n)] = grad
    return out


trace_op = defop("trace(Tensor self) -> Tensor", _trace_kernel, node="TraceBackward0",
                 self=lambda grad, self_sizes: aten.trace_backward(grad, self_sizes))
# (torch's trace_backward is a composite of zeros and index_fill; as one op its double backward is the trace)
trace_backward_op = defop("trace_backward(Tensor grad, SymInt[] sizes) -> Tensor", _trace_backward_kernel,
                          node="TraceBackwardBackward0", grad=lambda grad: aten.trace(grad))


@method()
@overridable
def trace(input):
    return trace_op(input)


@overridable
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
    ts = list(tensors)    # (0-d ones too: torch views each as is, one ViewBackward0 then one ExpandBackward0)
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t.numel() for t in ts)
    n = len(ts)
    grids = [t.view(*[-1 if k == i else 1 for k in range(n)]).expand(shape) for i, t in enumerate(ts)]
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


# ==========================================================================================================
# block_diag (a primitive op, BlockDiagBackward0) and cartesian_prod (torch's composite)
# ==========================================================================================================
def _as_block(a):
    """A block of block_diag: a 0-d tensor is 1x1, a 1-D one a row (an empty (0,) one too: 1x0)."""
    return a.reshape(1, 1) if a.ndim == 0 else a.reshape(1, -1) if a.ndim == 1 else a


def _block_diag_kernel(tensors):
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t.ndim} dimensions")
    if not tensors:
        return xp.zeros((1, 0), dtype=_dtype.get_default_dtype().numpy_dtype)
    blocks = [_as_block(a) for a in _promoted(list(tensors))]
    out = _zeros_like(blocks[0], (builtins.sum(b.shape[0] for b in blocks),
                                  builtins.sum(b.shape[1] for b in blocks)))
    row = col = 0
    for b in blocks:
        out[row:row + b.shape[0], col:col + b.shape[1]] = b
        row, col = row + b.shape[0], col + b.shape[1]
    return out


def block_diag_backward(grad, sizes):
    """torch's ``block_diag_backward``: each input's gradient is its block of ``grad``, in its shape."""
    grads, row, col = [], 0, 0
    for shape in sizes:
        rows, cols = (1, 1) if len(shape) == 0 else (1, shape[0]) if len(shape) == 1 else tuple(shape)
        block = aten.slice(aten.slice(grad, 0, row, row + rows), 1, col, col + cols)
        grads.append(block.reshape(tuple(shape)))
        row, col = row + rows, col + cols
    return grads


block_diag_op = defop("block_diag(Tensor[] tensors) -> Tensor", _block_diag_kernel, node="BlockDiagBackward0",
                      tensors=lambda grad, tensors_sizes: block_diag_backward(grad, tensors_sizes))


@overridable
def block_diag(*tensors):
    """The block diagonal matrix of the tensors (a 0-d tensor is a 1x1 block, a 1-D one a row), zero
    elsewhere, in their promoted dtype: ``block_diag(A, B)`` is ``[[A, 0], [0, B]]``."""
    return block_diag_op(list(_checks.expect_tensors("block_diag", tensors)))


@overridable
def cartesian_prod(*tensors):
    """Every combination of one element of each 1-D tensor, a row each (``itertools.product``'s order);
    torch's composite: the ``meshgrid`` of the tensors, flattened and stacked as columns."""
    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    return stack([g.flatten() for g in meshgrid(*tensors, indexing="ij")], 1)
