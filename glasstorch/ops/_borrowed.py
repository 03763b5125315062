"""Primitive ops of other families that the reduction and linalg formulas call, declared here until
those families are converted.

torch's derivative formulas are written with its primitive ops -- ``cumsum_backward`` flips,
``value_selecting_reduction_backward`` scatters, ``prod_backward`` concatenates, the linalg
backwards take diagonals and triangles -- and so are ours (``ops/_derivatives.py``). A formula
must run on arrays and on Tensors, so each op it calls must be an aten op. The ops below belong to
the shape, joining, indexing and pointwise families (their public functions stay in those files);
they are declared here with torch's schemas, node names and formulas so that the formulas can
call them. When a family's own conversion lands, its ``defop`` replaces the one here and the entry
is deleted (see the report of branch ``conv-red``).

Only the aten ops live here: ``torch.flip``, ``Tensor.gather`` ... are still the public functions
of their own modules.
"""
from .._array import xp, as_strided
from .._tensor import _wrap_dim
from .._ops import defop, aten


# ---- gather / scatter_add (indexing) --------------------------------------------------------------------
def _index_grid(index, dim):
    """The full index tuple that addresses, for each element of ``index``, the position ``index``
    names along ``dim`` (and its own position in the other dims)."""
    grid = list(xp.indices(index.shape, sparse=True))
    grid[dim] = index
    return tuple(grid)


def _gather_kernel(self, dim, index, *, sparse_grad=False):
    if not self.ndim:
        return self[()].reshape(index.shape) if index.ndim else self.copy()
    d = _wrap_dim(dim, self.ndim)
    return self[_index_grid(index, d)]


def _scatter_add_kernel(self, dim, index, src):
    out = self.copy()
    if not self.ndim:
        out[...] = out + src.sum()
        return out
    d = _wrap_dim(dim, self.ndim)
    region = tuple(slice(0, s) for s in index.shape)
    xp.add.at(out, _index_grid(index, d), src[region] if src.shape != index.shape else src)
    return out


gather_op = defop("gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor", _gather_kernel,
                  node="GatherBackward0",
                  self=lambda grad, self, dim, index: aten.scatter_add(aten.zeros_like(self), dim, index, grad),
                  index=None)
scatter_add_op = defop("scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor", _scatter_add_kernel,
                       node="ScatterAddBackward0",
                       self=lambda grad: grad,
                       src=lambda grad, dim, index: aten.gather(grad, dim, index),
                       index=None)


# ---- cat / slice (joining, shape) -----------------------------------------------------------------------
def _cat_kernel(tensors, dim=0):
    parts = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)]   # torch's legacy empty tensors
    if not parts:
        return tensors[0].copy()
    d = _wrap_dim(dim, parts[0].ndim)
    dt = xp.result_type(*parts)
    return xp.concatenate([p.astype(dt, copy=False) for p in parts], axis=d)


def _cat_backward(grad, tensors_sizes, dim):
    """torch's cat_tensors_backward: each input's part of the gradient, as a slice."""
    d = _wrap_dim(dim, grad.ndim)
    out, start = [], 0
    for s in tensors_sizes:
        if len(s) == 1 and s[0] == 0:       # a legacy empty input: an empty gradient
            out.append(aten.slice(grad.reshape((-1,)), 0, 0, 0))
            continue
        out.append(aten.slice(grad, d, start, start + s[d]))
        start += s[d]
    return out


def _slice_kernel(self, dim=0, start=None, end=None, step=1):
    d = _wrap_dim(dim, self.ndim)
    index = [slice(None)] * self.ndim
    index[d] = slice(start, end, step)
    return self[tuple(index)]


def _slice_backward_kernel(grad_output, input_sizes, dim, start, end, step):
    out = xp.zeros(tuple(input_sizes), grad_output.dtype)
    d = _wrap_dim(dim, len(input_sizes))
    index = [slice(None)] * len(input_sizes)
    index[d] = slice(start, end, step)
    out[tuple(index)] = grad_output
    return out


cat_op = defop("cat(Tensor[] tensors, int dim=0) -> Tensor", _cat_kernel, node="CatBackward0",
               tensors=_cat_backward)
slice_op = defop("slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> "
                 "Tensor(a)", _slice_kernel, node="SliceBackward0",
                 self=lambda grad, self_sizes, dim, start, end, step: aten.slice_backward(
                     grad, self_sizes, dim, 0 if start is None else start, _INT64_MAX if end is None else end, step))
slice_backward_op = defop("slice_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt start, SymInt end, "
                          "SymInt step) -> Tensor", _slice_backward_kernel, node="SliceBackwardBackward0",
                          grad_output=lambda grad, dim, start, end, step: aten.slice(grad, dim, start, end, step))
_INT64_MAX = 9223372036854775807


# ---- masked_fill (pointwise) ----------------------------------------------------------------------------
def _masked_fill_kernel(self, mask, value):
    return xp.where(mask, xp.asarray(value, dtype=self.dtype), self)


masked_fill_op = defop("masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor", _masked_fill_kernel,
                       node="MaskedFillBackward0",
                       self=lambda grad, mask: aten.masked_fill(grad, mask, 0),
                       mask=None)


# ---- diagonal, diag_embed, tril, triu (joining) ---------------------------------------------------------
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
    out = xp.zeros(tuple(input_sizes), grad_output.dtype)
    _diagonal_kernel(out, offset, dim1, dim2)[...] = grad_output
    return out


def _diag_embed_kernel(self, offset=0, dim1=-2, dim2=-1):
    n = self.ndim + 1
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    size = self.shape[-1] + abs(offset) if self.ndim else 1 + abs(offset)
    shape = list(self.shape[:-1])
    for d in sorted((d1, d2)):
        shape.insert(d, size)
    out = xp.zeros(tuple(shape), self.dtype)
    _diagonal_kernel(out, offset, d1, d2)[...] = self
    return out


def _triangle(keep_lower):
    def kernel(self, diagonal=0):
        if self.ndim < 2:
            raise RuntimeError(f"{'tril' if keep_lower else 'triu'}: input tensor must have at least 2 dimensions")
        return xp.tril(self, diagonal) if keep_lower else xp.triu(self, diagonal)
    return kernel


diagonal_op = defop("diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)", _diagonal_kernel,
                    node="DiagonalBackward0",
                    self=lambda grad, self_sizes, offset, dim1, dim2: aten.diagonal_backward(
                        grad, self_sizes, offset, dim1, dim2))
diagonal_backward_op = defop("diagonal_backward(Tensor grad_output, SymInt[] input_sizes, int offset, int dim1, "
                             "int dim2) -> Tensor", _diagonal_backward_kernel, node="DiagonalBackwardBackward0",
                             grad_output=lambda grad, offset, dim1, dim2: aten.diagonal(grad, offset, dim1, dim2))
diag_embed_op = defop("diag_embed(Tensor self, int offset=0, int dim1=-2, int dim2=-1) -> Tensor", _diag_embed_kernel,
                      node="DiagEmbedBackward0",
                      self=lambda grad, offset, dim1, dim2: aten.diagonal(grad, offset, dim1, dim2))
tril_op = defop("tril(Tensor self, int diagonal=0) -> Tensor", _triangle(True), node="TrilBackward0",
                self=lambda grad, diagonal: aten.tril(grad, diagonal))
triu_op = defop("triu(Tensor self, int diagonal=0) -> Tensor", _triangle(False), node="TriuBackward0",
                self=lambda grad, diagonal: aten.triu(grad, diagonal))


# ---- _unsafe_view, squeeze_ (shape): the views matmul's decomposition records ----------------------------
def _unsafe_view_kernel(self, size):
    """A view with another shape, which must need no copy (torch's error otherwise)."""
    out = self.view()
    try:
        out.shape = tuple(size)
    except AttributeError:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one dimension "
                           "spans across two contiguous subspaces). Use .reshape(...) instead.") from None
    return out


def _squeeze_dim_kernel(self, dim):
    d = _wrap_dim(dim, self.ndim)
    return self.squeeze(d) if self.ndim and self.shape[d] == 1 else self.view()


unsafe_view_op = defop("_unsafe_view(Tensor self, SymInt[] size) -> Tensor", _unsafe_view_kernel,
                       node="UnsafeViewBackward0", self=lambda grad, self_sizes: grad.reshape(tuple(self_sizes)))
# torch's matmul squeezes its fresh mm result in place (``squeeze_(0)``, SqueezeBackward4). As declared
# here the result is a new view of that result, which is the same thing for a tensor nobody else holds:
# only matmul calls it; the shape family's conversion gives the real in-place op.
squeeze__dim_op = defop("squeeze_.dim(Tensor(a!) self, int dim) -> Tensor(a!)", _squeeze_dim_kernel,
                        node="SqueezeBackward4",
                        self=lambda grad, self_sizes, dim: _unsqueeze_to(grad, dim, self_sizes))


def _unsqueeze_to(grad, dim, sizes):
    """torch's unsqueeze_to: put back the squeezed dim (if it was squeezed: its size was 1)."""
    if not sizes:
        return grad
    d = _wrap_dim(dim, len(sizes))
    if sizes[d] != 1:
        return grad
    return grad.reshape(tuple(sizes))
