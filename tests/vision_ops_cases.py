"""The torchvision.ops cases recorded from real torchvision (tools/vision_reference.py ops) and
replayed on glasstorch.vision.ops (tests/test_vision_ops.py).

Each case is ``case(torch, ops, dtype) -> {name: tensor}``: its outputs and the gradients of a fixed
weighted sum of them. ``ops`` is torchvision.ops, or glasstorch.vision.ops; for ``roi_align`` on
the torchvision side it is torchvision's pure-PyTorch ``_roi_align`` (its C++ kernels do not load
with this torch build: see test_vision_ops.py), so those cases keep their RoIs inside the image,
where that reference and the kernel agree.
"""
import numpy as np

DTYPES = ("float32", "float64")


def _boxes(n, seed, extent=20.0):
    """``n`` random xyxy boxes with 0 <= x1 < x2 <= extent (overlapping, some nearly equal)."""
    rng = np.random.default_rng(seed)
    corner = rng.uniform(0, extent * 0.7, (n, 2))
    size = rng.uniform(0.5, extent * 0.5, (n, 2))
    return np.concatenate([corner, corner + size], axis=1)


def _weights(shape, seed):
    return np.random.default_rng(seed).uniform(-1, 1, shape)


def _leaf(torch, array, dtype):
    return torch.tensor(array, dtype=getattr(torch, dtype), requires_grad=True)


def _with_grads(torch, outputs, leaves, seed=99):
    """The outputs, and the gradients of sum(output * fixed weights) with respect to the leaves."""
    total = sum((out * torch.tensor(_weights(tuple(out.shape), seed + i), dtype=out.dtype)).sum()
                for i, out in enumerate(outputs.values()))
    total.backward()
    result = {name: out.detach() for name, out in outputs.items()}
    result.update({f"grad_{name}": leaf.grad for name, leaf in leaves.items()})
    return result


def box_iou_case(fmt, batched=False):
    def case(torch, ops, dtype):
        b1, b2 = _boxes(6, 1), _boxes(5, 2)
        if fmt != "xyxy":
            b1 = _xyxy_to(b1, fmt)
            b2 = _xyxy_to(b2, fmt)
        if batched:
            b1, b2 = np.stack([b1, b1[::-1]]), np.stack([b2, b2[::-1]])
        a, b = _leaf(torch, b1, dtype), _leaf(torch, b2, dtype)
        return _with_grads(torch, {"iou": ops.box_iou(a, b, fmt=fmt), "area": ops.box_area(a, fmt=fmt)},
                           {"a": a, "b": b})
    return case


def _xyxy_to(boxes, fmt):
    x1, y1, x2, y2 = boxes.T
    if fmt == "xywh":
        return np.stack([x1, y1, x2 - x1, y2 - y1], 1)
    return np.stack([(x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1], 1)


def generalized_box_iou_case(torch, ops, dtype):
    a, b = _leaf(torch, _boxes(6, 3), dtype), _leaf(torch, _boxes(4, 4), dtype)
    return _with_grads(torch, {"giou": ops.generalized_box_iou(a, b)}, {"a": a, "b": b})


def box_convert_case(in_fmt, out_fmt):
    def case(torch, ops, dtype):
        a = _leaf(torch, _boxes(7, 5).reshape(7, 4), dtype)
        return _with_grads(torch, {"out": ops.box_convert(a, in_fmt, out_fmt)}, {"a": a})
    return case


def clip_boxes_case(torch, ops, dtype):
    a = _leaf(torch, _boxes(8, 6, extent=30.0) - 5.0, dtype)
    return _with_grads(torch, {"out": ops.clip_boxes_to_image(a, (17, 13))}, {"a": a})


def remove_small_boxes_case(torch, ops, dtype):
    boxes = torch.tensor(_boxes(12, 7), dtype=getattr(torch, dtype))
    return {"keep": ops.remove_small_boxes(boxes, 4.0)}


def focal_loss_case(alpha, gamma, reduction):
    def case(torch, ops, dtype):
        rng = np.random.default_rng(8)
        logits = _leaf(torch, rng.normal(0, 2, (4, 5)), dtype)
        targets = torch.tensor((rng.uniform(size=(4, 5)) > 0.6).astype(float), dtype=getattr(torch, dtype))
        loss = ops.sigmoid_focal_loss(logits, targets, alpha=alpha, gamma=gamma, reduction=reduction)
        return _with_grads(torch, {"loss": loss}, {"logits": logits})
    return case


def roi_align_case(output_size, spatial_scale, sampling_ratio, aligned):
    """RoIs inside the (2, 3, 10, 12) input at ``spatial_scale``, from both images, some smaller than
    a pixel (the adaptive grid then samples once)."""
    def case(torch, ops, dtype):
        rng = np.random.default_rng(9)
        x = _leaf(torch, rng.normal(size=(2, 3, 10, 12)), dtype)
        boxes = np.array([[0.0, 0.0, 11.0, 9.0], [1.2, 2.7, 8.9, 6.1], [3.3, 3.1, 3.6, 3.9],
                          [0.5, 0.5, 5.5, 8.5], [6.0, 1.0, 11.0, 4.0]]) / spatial_scale
        rois = torch.tensor(np.concatenate([[[0], [1], [0], [1], [1]], boxes], axis=1), dtype=getattr(torch, dtype))
        out = ops.roi_align(x, rois, output_size, spatial_scale, sampling_ratio, aligned)
        return _with_grads(torch, {"out": out}, {"x": x})
    return case


CASES = [
    ("box_iou_xyxy", box_iou_case("xyxy")),
    ("box_iou_xywh", box_iou_case("xywh")),
    ("box_iou_cxcywh", box_iou_case("cxcywh")),
    ("box_iou_batched", box_iou_case("xyxy", batched=True)),
    ("generalized_box_iou", generalized_box_iou_case),
    ("clip_boxes_to_image", clip_boxes_case),
    ("remove_small_boxes", remove_small_boxes_case),
    ("focal_default", focal_loss_case(0.25, 2.0, "none")),
    ("focal_mean_no_alpha", focal_loss_case(-1, 1.5, "mean")),
    ("focal_sum", focal_loss_case(0.6, 0.0, "sum")),
    ("roi_align_adaptive", roi_align_case((2, 3), 1.0, -1, False)),
    ("roi_align_ratio2_scaled", roi_align_case(3, 0.5, 2, False)),
    ("roi_align_aligned", roi_align_case((4, 2), 1.0, -1, True)),
    ("roi_align_aligned_ratio1", roi_align_case(2, 0.25, 1, True)),
] + [(f"box_convert_{i}_{o}", box_convert_case(i, o))
     for i in ("xyxy", "xywh", "cxcywh") for o in ("xyxy", "xywh", "cxcywh")]
