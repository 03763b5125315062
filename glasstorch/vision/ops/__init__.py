"""torchvision.ops, the detection operators: box utilities (areas, IoU, generalized IoU, format
conversion, clipping, small-box removal), non-maximum suppression (``nms``, ``batched_nms``), RoI
pooling (``roi_pool``/``RoIPool``, ``roi_align``/``RoIAlign``) and ``sigmoid_focal_loss``.

torchvision runs ``nms``, ``roi_pool`` and ``roi_align`` as C++ kernels; here they are those CPU
kernels written in NumPy (each module's docstring gives the rules it follows), with backward passes
for the two RoI ops. The rest is torchvision's Python, in glasstorch's tensor ops.
"""
from .boxes import (batched_nms, box_area, box_convert, box_iou, clip_boxes_to_image, generalized_box_iou, nms,
                    remove_small_boxes)
from .focal_loss import sigmoid_focal_loss
from .roi_align import RoIAlign, roi_align
from .roi_pool import RoIPool, roi_pool

__all__ = ["batched_nms", "box_area", "box_convert", "box_iou", "clip_boxes_to_image", "generalized_box_iou",
           "nms", "remove_small_boxes", "sigmoid_focal_loss", "roi_align", "RoIAlign", "roi_pool", "RoIPool"]
