"""put / put_: writes at indices into the flattened tensor, and ``take``, the matching read (torch's
``TensorAdvancedIndexing.cpp``).

    put(self, index, source)[index[i]] = source[i]        (accumulate=True: += instead of =)
    take(self, index)[i] = self.flatten()[index[i]]

Indices count in row-major order whatever the strides; negative ones count from the end.

Derivatives (derivatives.yaml): put -- self: the gradient with the written positions zeroed (all of it
with accumulate); source: the gradient taken at the indices. take -- self: the gradient put back at
the indices, accumulated (``take_backward``).

``torch.take`` itself is still indexing.py's composite (x.reshape(-1)[index]); the ``take`` op here
is what put's formula calls, under torch's name.
"""
from .. import _dtype
from .._tensor import Tensor
from .._array import xp
from ._op import method
from .._ops import defop, aten
from .._seam import seam

__all__ = ["put"]


def _flat_positions(self, index, what):
    if index.dtype != xp.int64:
        raise RuntimeError(f"{what}(): Expected a long tensor for index, but got "
                           f"{_dtype._BY_NUMPY[index.dtype]._legacy}")
    n = self.size
    flat = index.reshape(-1)
    bad = (flat >= n) | (flat < -n)
    if bad.any():
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
    out = xp.array(self, order="C", copy=True)
    flat = out.reshape(-1)
    if accumulate:
        xp.add.at(flat, positions, source.reshape(-1))
    else:
        flat[positions] = source.reshape(-1)
    return out


def _take_kernel(self, index):
    return self.reshape(-1)[_flat_positions(self, index, "take")].reshape(index.shape)


put_op = defop("put(Tensor self, Tensor index, Tensor source, bool accumulate=False) -> Tensor", _put_kernel,
               node="PutBackward0",
               self=lambda grad, index, source, accumulate: grad if accumulate else
               put_op(grad, index, aten.zeros_like(source), False),
               source=lambda grad, index, source: aten.take(grad, index).reshape(tuple(source.shape)),
               index=None)
take_op = defop("take(Tensor self, Tensor index) -> Tensor", _take_kernel, node="TakeBackward0",
                self=lambda grad, self, index: put_op(aten.zeros_like(self), index, grad, True), index=None)
PutBackward0, TakeBackward0 = put_op.node, take_op.node


@method()
def put(input, index, source, accumulate=False):
    """A copy of ``input`` with ``source``'s values written (or added) at the flat ``index``."""
    if seam.on:
        return seam.torch_function(put, (input, index, source, accumulate), {})
    return put_op(input, index, source, accumulate)


def put_(self, index, source, accumulate=False):
    if seam.on:
        return seam.torch_function(put_, (self, index, source, accumulate), {})
    from ._op import inplace
    return inplace(self, "put_", put, index, source, accumulate)


Tensor.put_ = put_
