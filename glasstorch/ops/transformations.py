"""rot90: a quarter turn in the plane of two dims (torch's ``TensorTransformations.cpp``; its neighbours
there, flip and roll, are in joining.py).

    k = 1:  flip along dims[1], then swap the two dims      (k is taken mod 4; negative turns back)
    k = 2:  flip along both
    k = 3:  flip along dims[0], then swap the two dims
    k = 0:  a contiguous copy

Derivative (derivatives.yaml): the gradient turned back, ``grad.rot90(-k, dims)``. As torch's, an odd
turn returns the transposed layout of the flipped copy (not contiguous).
"""
from .._tensor import _wrap_dim
from .._array import xp, copy_preserving_layout
from ._op import method
from .._ops import defop, node_classes_of
from .._seam import overridable

__getattr__ = node_classes_of(__name__)    # (the node classes declared here, by name: TanhBackward0)

__all__ = ["rot90"]


def _rot90_kernel(self, k=1, dims=(0, 1)):
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if self.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {self.ndim}")
    d0, d1 = dims
    if d0 == d1 or abs(d0 - d1) == self.ndim:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    d0, d1 = _wrap_dim(d0, self.ndim), _wrap_dim(d1, self.ndim)
    k %= 4
    if k == 0:   # (torch clones to a contiguous tensor; the other turns are flip's result, laid out like self)
        return self.copy(order="C")

    def flipped(*axes):
        return copy_preserving_layout(xp.flip(self, axes), like=self)
    if k == 1:
        return xp.swapaxes(flipped(d1), d0, d1)
    if k == 2:
        return flipped(d0, d1)
    return xp.swapaxes(flipped(d0), d0, d1)


rot90_op = defop("rot90(Tensor self, int k=1, int[] dims=[0, 1]) -> Tensor", _rot90_kernel, node="Rot90Backward0",
                 self=lambda grad, k, dims: rot90_op(grad, -k, dims))


@method()
@overridable
def rot90(input, k=1, dims=(0, 1)):
    """``input`` turned k quarter turns in the plane of ``dims``, from the first dim towards the second."""
    return rot90_op(input, k, list(dims))
