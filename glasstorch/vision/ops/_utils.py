"""Helpers shared by torchvision.ops' functions (torchvision/ops/_utils.py): the RoI format of
``roi_pool``/``roi_align`` and the dtype upcast that keeps box arithmetic from overflowing."""
import glasstorch as torch


def _cat(tensors, dim=0):
    """``torch.cat``, without a copy when there is one tensor."""
    if len(tensors) == 1:
        return tensors[0]
    return torch.cat(tensors, dim)


def convert_boxes_to_roi_format(boxes):
    """A list of per-image ``(L_i, 4)`` boxes as one ``(K, 5)`` tensor whose first column is the
    image's index in the batch."""
    concat_boxes = _cat(list(boxes), dim=0)
    ids = _cat([torch.full_like(b[:, :1], i) for i, b in enumerate(boxes)], dim=0)
    return torch.cat([ids, concat_boxes], dim=1)


def check_roi_boxes_shape(boxes):
    """torchvision's shape check of the RoI argument, with its AssertionErrors (``torch._assert``)."""
    if isinstance(boxes, (list, tuple)):
        for tensor in boxes:
            if tensor.size(1) != 4:
                raise AssertionError("The shape of the tensor in the boxes list is not correct as List[Tensor[L, 4]]")
    elif isinstance(boxes, torch.Tensor):
        if boxes.size(1) != 5:
            raise AssertionError("The boxes tensor shape is not correct as Tensor[K, 5]")
    else:
        raise AssertionError("boxes is expected to be a Tensor[L, 5] or a List[Tensor[K, 4]]")


def rois_from(boxes):
    """The ``(K, 5)`` RoI tensor of either form ``roi_pool``/``roi_align`` accept, shape-checked."""
    check_roi_boxes_shape(boxes)
    return boxes if isinstance(boxes, torch.Tensor) else convert_boxes_to_roi_format(boxes)


def _upcast(t):
    """float16/bfloat16 to float32 and small integers to int32, so that products of coordinates
    (areas) do not overflow; float32/float64/int32/int64 are kept."""
    if t.is_floating_point():
        return t if t.dtype in (torch.float32, torch.float64) else t.float()
    return t if t.dtype in (torch.int32, torch.int64) else t.int()


def check_roi_op_inputs(input, rois, kernel_name):
    """The checks torchvision's ``roi_pool``/``roi_align`` kernels make, with their RuntimeErrors:
    4-d input, ``(K, 5)`` rois of the input's dtype."""
    if rois.dim() != 2 or rois.size(1) != 5:
        raise RuntimeError("rois must have shape as Tensor[K, 5]")
    if input.dim() != 4:
        raise RuntimeError(f"{kernel_name}: input must be a 4-d tensor (N, C, H, W), got {input.dim()}D")
    if input.dtype != rois.dtype:
        raise RuntimeError(f"Expected tensor for argument #1 'input' to have the same type as tensor for argument "
                           f"#2 'rois'; but type {input.dtype} does not equal {rois.dtype} "
                           f"(while checking arguments for {kernel_name})")
    if not input.is_floating_point():
        raise RuntimeError(f"\"{kernel_name}\" not implemented for '{str(input.dtype).replace('torch.', '')}'")
