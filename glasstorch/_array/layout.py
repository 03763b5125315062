"""Layouts: which strides a new shape can take as a view of an array, without touching its data.

Pure arithmetic on shapes and strides, shared by the op layer (``view``, ``reshape``) and the meta
device's array, so that both answer exactly as torch does.
"""
import math


def view_strides(shape, strides, new_shape):
    """The strides ``new_shape`` takes as a view of an array of ``shape`` and ``strides`` (in any one
    unit), or None when it cannot be a view (torch's ``computeStride``). Asked before reshaping,
    because NumPy's ``a.shape = ...`` copies the whole array first and only then refuses (a wasted
    copy for every reshape that needs one, and a MemoryError for a large one)."""
    if not shape:
        return (1,) * len(new_shape) if new_shape else ()
    if math.prod(shape) == 0:    # (no elements: any contiguous strides will do)
        return contiguous_strides(new_shape)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = strides[-1]
    tensor_numel = view_numel = 1
    for tensor_d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[tensor_d]
        # a chunk of dims laid out contiguously ends here: the new dims must split it exactly
        if tensor_d == 0 or (shape[tensor_d - 1] != 1 and strides[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride, tensor_numel, view_numel = strides[tensor_d - 1], 1, 1
    return tuple(new_strides) if view_d == -1 else None


def contiguous_strides(shape):
    """torch's row-major strides, in elements (a dim of size 0 counts as 1)."""
    strides, step = [0] * len(shape), 1
    for i in range(len(shape) - 1, -1, -1):
        strides[i] = step
        step *= max(shape[i], 1)
    return tuple(strides)


def element_strides(shape, strides, itemsize):
    """The strides torch reports (``Tensor.stride()``) for an array of ``shape`` and byte ``strides``.

    NumPy gives an empty array it allocates strides of 0, and its views keep them; torch gives an
    empty tensor a contiguous one's (``torch.empty(0, 3).stride() == (3, 1)``), and its views their
    own. An empty array whose strides are all 0 reports the contiguous strides of its shape: torch's
    for a new tensor and an op's result; for a view of one, where torch's follow the view
    (``t()``: ``(1, 3)``), the contiguous ones of the view's shape (README, "Where glasstorch
    differs"). An empty slice of a non-empty array keeps its strides, as torch's does."""
    if not itemsize:
        return (0,) * len(shape)
    if 0 in shape and not any(strides):
        return contiguous_strides(shape)
    return tuple(s // itemsize for s in strides)
