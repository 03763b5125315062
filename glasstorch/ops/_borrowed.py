"""Primitive ops of families being converted on other branches, declared here so that the formulas
of the converted families can call them; each entry moves to its family's file when that family's
conversion lands (and this file is deleted when it is empty).

torch's derivative formulas are written with its primitive ops -- ``cat``'s backward slices,
``stack``'s selects, ``index``'s makes ``new_zeros`` and puts into them, the linalg backwards take
views -- and so are ours (``ops/_derivatives.py``). A formula must run on arrays and on Tensors,
so each op it calls must be an aten op. The ops below are declared with torch's schemas, node names
and formulas:

* shape (``ops/shape.py``): ``slice``, ``slice_backward``, ``select``, ``select_backward``,
  ``_unsafe_view``, ``squeeze_``;
* creation (``ops/creation.py``): ``new_zeros``.

Only the aten ops live here: ``torch.narrow``, ``Tensor.select`` ... are
the public functions of their own modules.
"""
from .._array import xp
from .._tensor import _wrap_dim
from .._ops import defop, aten


# ---- slice, select (shape): the views indexing makes, which cat's and stack's derivatives take too ---------
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


slice_op = defop("slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> "
                 "Tensor(a)", _slice_kernel, node="SliceBackward0",
                 self=lambda grad, self_sizes, dim, start, end, step: aten.slice_backward(
                     grad, self_sizes, dim, 0 if start is None else start, _INT64_MAX if end is None else end, step))
slice_backward_op = defop("slice_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt start, SymInt end, "
                          "SymInt step) -> Tensor", _slice_backward_kernel, node="SliceBackwardBackward0",
                          grad_output=lambda grad, dim, start, end, step: aten.slice(grad, dim, start, end, step))
_INT64_MAX = 9223372036854775807


def _select_kernel(self, dim, index):
    d = _wrap_dim(dim, self.ndim)
    n = self.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(self.shape)} at "
                         f"dimension {d}")
    return self[(slice(None),) * d + (index, Ellipsis)]   # (the Ellipsis: a 0-d result is a view, not a copy)


def _select_backward_kernel(grad_output, input_sizes, dim, index):
    out = xp.zeros(tuple(input_sizes), grad_output.dtype)
    d = _wrap_dim(dim, len(input_sizes))
    out[(slice(None),) * d + (index, Ellipsis)] = grad_output
    return out


select_op = defop("select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)", _select_kernel,
                  node="SelectBackward0",
                  self=lambda grad, self_sizes, dim, index: aten.select_backward(grad, self_sizes, dim, index))
select_backward_op = defop("select_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt index) -> Tensor",
                           _select_backward_kernel, node="SelectBackwardBackward0",
                           grad_output=lambda grad, dim, index: aten.select(grad, dim, index))


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


# ---- new_zeros (creation) ---------------------------------------------------------------------------------
def _new_zeros_kernel(self, size, *, dtype=None, layout=None, device=None, pin_memory=None):
    return xp.zeros(tuple(size), self.dtype if dtype is None else dtype.numpy_dtype)


new_zeros_op = defop("new_zeros(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
                     "Device? device=None, bool? pin_memory=None) -> Tensor", _new_zeros_kernel)
