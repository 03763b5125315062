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
    new_strides = [0] * len(new_shape)
    if math.prod(shape) == 0:    # (no elements: any contiguous strides will do)
        stride = 1
        for d in range(len(new_shape) - 1, -1, -1):
            new_strides[d] = stride
            stride *= max(new_shape[d], 1)
        return tuple(new_strides)
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
