"""Box utilities of torchvision.ops (torchvision/ops/boxes.py): areas, IoU and generalized IoU,
format conversion, clipping, filtering, and non-maximum suppression.

Everything but ``nms`` is written in tensor ops as torchvision writes it, so it is differentiable
and keeps torchvision's dtype rules (``_upcast``). ``nms`` is torchvision's C++ CPU kernel
(``torchvision/csrc/ops/cpu/nms_kernel.cpp``) in NumPy: boxes sorted by score (ties in index
order), each kept box suppressing the lower-scored boxes whose IoU with it exceeds the threshold,
the IoU computed in the boxes' dtype and compared with the threshold in double precision.

Formats: the axis-aligned ``xyxy``, ``xywh``, ``cxcywh``. torchvision 0.28's rotated formats
(``xywhr``, ``cxcywhr``, ``xyxyxyxy``) are recognised and refused with NotImplementedError.
"""
import numpy as np

import glasstorch as torch

from ._box_convert import _box_cxcywh_to_xyxy, _box_xywh_to_xyxy, _box_xyxy_to_cxcywh, _box_xyxy_to_xywh
from ._utils import _upcast

__all__ = ["box_area", "box_convert", "box_iou", "generalized_box_iou", "clip_boxes_to_image",
           "remove_small_boxes", "nms", "batched_nms"]

AXIS_ALIGNED_FORMATS = ("xyxy", "xywh", "cxcywh")
ROTATED_FORMATS = ("xywhr", "cxcywhr", "xyxyxyxy")


def _refuse_rotated(fmts, what):
    rotated = [f for f in fmts if f in ROTATED_FORMATS]
    if rotated:
        raise NotImplementedError(f"{what}: glasstorch.vision.ops supports the axis-aligned box formats "
                                  f"{AXIS_ALIGNED_FORMATS}; the rotated format '{rotated[0]}' is not implemented")


# -- non-maximum suppression ----------------------------------------------------------------------------

def _check_nms_arguments(boxes, scores):
    """The checks of torchvision's ``nms`` kernel, with its RuntimeError messages."""
    if boxes.dim() != 2:
        raise RuntimeError(f"boxes should be a 2d tensor, got {boxes.dim()}D")
    if boxes.size(1) != 4:
        raise RuntimeError(f"boxes should have 4 elements in dimension 1, got {boxes.size(1)}")
    if scores.dim() != 1:
        raise RuntimeError(f"scores should be a 1d tensor, got {scores.dim()}D")
    if boxes.size(0) != scores.size(0):
        raise RuntimeError("boxes and scores should have same number of elements in dimension 0, "
                           f"got {boxes.size(0)} and {scores.size(0)}")
    if boxes.dtype != scores.dtype:
        raise RuntimeError("dets should have the same type as scores")


def _nms_kernel(boxes, scores, iou_threshold):
    """Indices (int64 array) of the boxes NMS keeps, highest score first; arrays in, arrays out."""
    if boxes.shape[0] == 0:
        return np.empty(0, dtype=np.int64)
    x1, y1, x2, y2 = boxes[:, 0], boxes[:, 1], boxes[:, 2], boxes[:, 3]
    areas = (x2 - x1) * (y2 - y1)
    order = np.argsort(-scores, kind="stable")      # torch's descending sort keeps ties in index order
    zero = boxes.dtype.type(0)
    suppressed = np.zeros(boxes.shape[0], dtype=bool)
    keep = []
    for position, i in enumerate(order):
        if suppressed[i]:
            continue
        keep.append(i)
        rest = order[position + 1:]
        width = np.maximum(zero, np.minimum(x2[i], x2[rest]) - np.maximum(x1[i], x1[rest]))
        height = np.maximum(zero, np.minimum(y2[i], y2[rest]) - np.maximum(y1[i], y1[rest]))
        inter = width * height
        iou = inter / (areas[i] + areas[rest] - inter)
        # the kernel compares the box dtype's IoU with the double threshold in double
        suppressed[rest[iou.astype(np.float64) > float(iou_threshold)]] = True
    return np.asarray(keep, dtype=np.int64)


def nms(boxes, scores, iou_threshold):
    """Non-maximum suppression: the int64 indices of the kept boxes, in decreasing order of score.
    A box is dropped when its IoU with a higher-scored kept box is greater than ``iou_threshold``.
    ``boxes``: ``(N, 4)`` in ``(x1, y1, x2, y2)`` format; ``scores``: ``(N,)`` of the same dtype."""
    _check_nms_arguments(boxes, scores)
    keep = _nms_kernel(boxes.detach().cpu().numpy(), scores.detach().cpu().numpy(), iou_threshold)
    return torch.from_numpy(keep)


def batched_nms(boxes, scores, idxs, iou_threshold):
    """NMS within each category: boxes of different ``idxs`` never suppress one another. The int64
    indices of the kept boxes, in decreasing order of score.

    As torchvision: up to 4,000 coordinates (CPU) one ``nms`` over boxes shifted apart by category
    (every category's boxes moved past the others'), above that one ``nms`` per category."""
    if boxes.numel() > 4000:
        return _batched_nms_vanilla(boxes, scores, idxs, iou_threshold)
    return _batched_nms_coordinate_trick(boxes, scores, idxs, iou_threshold)


def _batched_nms_coordinate_trick(boxes, scores, idxs, iou_threshold):
    if boxes.numel() == 0:
        return torch.empty((0,), dtype=torch.int64, device=boxes.device)
    max_coordinate = boxes.max()
    offsets = idxs.to(boxes) * (max_coordinate + torch.tensor(1).to(boxes))
    return nms(boxes + offsets[:, None], scores, iou_threshold)


def _batched_nms_vanilla(boxes, scores, idxs, iou_threshold):
    keep_mask = torch.zeros_like(scores, dtype=torch.bool)
    for class_id in torch.unique(idxs):
        curr_indices = torch.where(idxs == class_id)[0]
        curr_keep_indices = nms(boxes[curr_indices], scores[curr_indices], iou_threshold)
        keep_mask[curr_indices[curr_keep_indices]] = True
    keep_indices = torch.where(keep_mask)[0]
    return keep_indices[scores[keep_indices].sort(descending=True)[1]]


# -- filtering and clipping -----------------------------------------------------------------------------

def remove_small_boxes(boxes, min_size):
    """The indices of the ``xyxy`` boxes whose width and height are both at least ``min_size``."""
    ws, hs = boxes[..., 2] - boxes[..., 0], boxes[..., 3] - boxes[..., 1]
    keep = (ws >= min_size) & (hs >= min_size)
    return torch.where(keep)[0]


def clip_boxes_to_image(boxes, size):
    """``xyxy`` boxes clipped to an image of ``size`` = ``(height, width)``: x into [0, width], y
    into [0, height]."""
    dim = boxes.dim()
    height, width = size
    boxes_x = boxes[..., 0::2].clamp(min=0, max=width)
    boxes_y = boxes[..., 1::2].clamp(min=0, max=height)
    return torch.stack((boxes_x, boxes_y), dim=dim).reshape(boxes.shape)


# -- formats, areas, IoU --------------------------------------------------------------------------------

_CONVERSIONS = {
    ("xywh", "xyxy"): (_box_xywh_to_xyxy,),
    ("cxcywh", "xyxy"): (_box_cxcywh_to_xyxy,),
    ("xyxy", "xywh"): (_box_xyxy_to_xywh,),
    ("xyxy", "cxcywh"): (_box_xyxy_to_cxcywh,),
    ("xywh", "cxcywh"): (_box_xywh_to_xyxy, _box_xyxy_to_cxcywh),
    ("cxcywh", "xywh"): (_box_cxcywh_to_xyxy, _box_xyxy_to_xywh),
}


def box_convert(boxes, in_fmt, out_fmt):
    """Boxes (``(..., 4)``) converted from ``in_fmt`` to ``out_fmt``, each one of ``'xyxy'``
    (corners), ``'xywh'`` (top-left corner, width, height), ``'cxcywh'`` (centre, width, height).
    The same format gives a clone."""
    if in_fmt not in AXIS_ALIGNED_FORMATS + ROTATED_FORMATS or out_fmt not in AXIS_ALIGNED_FORMATS + ROTATED_FORMATS:
        raise ValueError(f"Unsupported Bounding Box Conversions for given in_fmt {in_fmt} and out_fmt {out_fmt}")
    if in_fmt == out_fmt:
        return boxes.clone()
    _refuse_rotated((in_fmt, out_fmt), "box_convert")
    for step in _CONVERSIONS[(in_fmt, out_fmt)]:
        boxes = step(boxes)
    return boxes


def box_area(boxes, fmt="xyxy"):
    """The areas of boxes ``(..., 4)`` in format ``fmt`` (``'xyxy'``, ``'xywh'`` or ``'cxcywh'``)."""
    if fmt not in AXIS_ALIGNED_FORMATS:
        raise ValueError(f"Unsupported Bounding Box area for given format {fmt}")
    boxes = _upcast(boxes)
    if fmt == "xyxy":
        return (boxes[..., 2] - boxes[..., 0]) * (boxes[..., 3] - boxes[..., 1])
    return boxes[..., 2] * boxes[..., 3]


def _box_inter_union(boxes1, boxes2, fmt="xyxy"):
    """Pairwise intersection and union areas, ``(..., N, M)`` each."""
    area1 = box_area(boxes1, fmt=fmt)
    area2 = box_area(boxes2, fmt=fmt)
    if fmt == "xyxy":
        lt = torch.max(boxes1[..., None, :2], boxes2[..., None, :, :2])
        rb = torch.min(boxes1[..., None, 2:], boxes2[..., None, :, 2:])
    elif fmt == "xywh":
        lt = torch.max(boxes1[..., None, :2], boxes2[..., None, :, :2])
        rb = torch.min(boxes1[..., None, :2] + boxes1[..., None, 2:],
                       boxes2[..., None, :, :2] + boxes2[..., None, :, 2:])
    else:  # cxcywh
        lt = torch.max(boxes1[..., None, :2] - boxes1[..., None, 2:] / 2,
                       boxes2[..., None, :, :2] - boxes2[..., None, :, 2:] / 2)
        rb = torch.min(boxes1[..., None, :2] + boxes1[..., None, 2:] / 2,
                       boxes2[..., None, :, :2] + boxes2[..., None, :, 2:] / 2)
    wh = _upcast(rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    union = area1[..., None] + area2[..., None, :] - inter
    return inter, union


def box_iou(boxes1, boxes2, fmt="xyxy"):
    """Pairwise intersection over union (Jaccard index) of ``(..., N, 4)`` and ``(..., M, 4)`` boxes
    in format ``fmt``: an ``(..., N, M)`` tensor."""
    if fmt in AXIS_ALIGNED_FORMATS:
        inter, union = _box_inter_union(boxes1, boxes2, fmt=fmt)
        return inter / union
    if fmt in ROTATED_FORMATS:
        _refuse_rotated((fmt,), "box_iou")
    raise ValueError(f"Unsupported format '{fmt}'. Supported axis-aligned formats: {AXIS_ALIGNED_FORMATS}. "
                     f"Supported rotated formats: {('cxcywhr', 'xywhr', 'xyxyxyxy')}.")


def generalized_box_iou(boxes1, boxes2):
    """Pairwise generalized IoU of ``xyxy`` boxes: IoU minus the part of the smallest enclosing box
    that the union does not cover, ``(..., N, M)`` in [-1, 1]."""
    inter, union = _box_inter_union(boxes1, boxes2)
    iou = inter / union
    lti = torch.min(boxes1[..., None, :2], boxes2[..., None, :, :2])
    rbi = torch.max(boxes1[..., None, 2:], boxes2[..., None, :, 2:])
    whi = _upcast(rbi - lti).clamp(min=0)
    areai = whi[..., 0] * whi[..., 1]
    return iou - (areai - union) / areai
