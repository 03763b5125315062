"""RoI Align (Mask R-CNN), torchvision.ops.roi_align and the RoIAlign module.

The kernel is torchvision's CPU kernel (``torchvision/csrc/ops/cpu/roi_align_kernel.cpp`` and
``roi_align_common.h``) in NumPy. Each RoI, scaled by ``spatial_scale`` (and shifted by -0.5 pixel
when ``aligned``; without it, at least 1x1 pixel), is cut into ``pooled_height x pooled_width``
bins; each bin averages ``grid_h x grid_w`` bilinearly interpolated samples at the centres of a
regular grid (``sampling_ratio`` per side, or ``ceil(roi size / pooled size)`` when it is <= 0).
A sample more than one pixel outside the image counts as 0; one within a pixel of the border
reads the border. The backward pass spreads each output's gradient over the four pixels of each
sample with the same weights. The RoIs get no gradient (as in torchvision). Arithmetic is in the
input's dtype, as the kernel's.

torchvision also has a pure-PyTorch ``_roi_align`` (for ``torch.compile``); it skips the kernel's
"more than one pixel outside is 0" rule, so it differs from the kernel for RoIs leaving the image.
"""
import numpy as np

import glasstorch as torch
from glasstorch import nn
from glasstorch.autograd import Function, once_differentiable
from glasstorch.nn.modules.utils import _pair

from ._utils import check_roi_op_inputs, rois_from

__all__ = ["roi_align", "RoIAlign"]


def _axis_samples(start, bin_size, grid, pooled, size, dtype):
    """The samples along one axis, ``(pooled, grid)`` each: the low and high pixel of each sample
    and their interpolation weights (0 for a sample outside the image by more than a pixel)."""
    bins = np.arange(pooled).astype(dtype)[:, None]
    steps = (np.arange(max(grid, 0)) + 0.5).astype(dtype)[None, :]
    coord = start + bins * bin_size + steps * bin_size / dtype(grid)
    inside = ~((coord < -1.0) | (coord > size))
    coord = np.maximum(coord, dtype(0))
    low = coord.astype(np.int64)
    at_edge = low >= size - 1
    low = np.where(at_edge, size - 1, low)
    high = np.where(at_edge, size - 1, low + 1)
    coord = np.where(at_edge, low.astype(dtype), coord)
    to_high = (coord - low.astype(dtype)).astype(dtype)
    to_low = (dtype(1) - to_high).astype(dtype)
    return low, high, to_low * inside, to_high * inside


def _roi_samples(roi, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned, height, width, dtype):
    """One RoI's samples: ``(ys, xs, count)`` where ``ys`` (``xs``) lists the (pixel, weight) pairs of
    the two rows (columns) each sample reads, each ``(pooled, grid)``, and ``count`` the samples per
    bin the sums are divided by."""
    offset = dtype(0.5) if aligned else dtype(0)
    scale = dtype(spatial_scale)
    start_w, start_h, end_w, end_h = (roi[1:] * scale - offset).astype(dtype)
    roi_width, roi_height = dtype(end_w - start_w), dtype(end_h - start_h)
    if not aligned:
        roi_width, roi_height = max(roi_width, dtype(1)), max(roi_height, dtype(1))
    bin_h, bin_w = roi_height / dtype(pooled_height), roi_width / dtype(pooled_width)
    grid_h = sampling_ratio if sampling_ratio > 0 else int(np.ceil(roi_height / dtype(pooled_height)))
    grid_w = sampling_ratio if sampling_ratio > 0 else int(np.ceil(roi_width / dtype(pooled_width)))
    count = max(grid_h * grid_w, 1)
    y_low, y_high, wy_low, wy_high = _axis_samples(start_h, bin_h, grid_h, pooled_height, height, dtype)
    x_low, x_high, wx_low, wx_high = _axis_samples(start_w, bin_w, grid_w, pooled_width, width, dtype)
    return ((y_low, wy_low), (y_high, wy_high)), ((x_low, wx_low), (x_high, wx_high)), count


def _corners(ys, xs):
    """The four (row index, column index, row weight, column weight) of the bilinear interpolation,
    indices shaped to broadcast to ``(PH, IY, PW, IX)``."""
    for y, wy in ys:
        for x, wx in xs:
            yield y[:, :, None, None], x[None, None, :, :], wy, wx


def _roi_align_forward(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned):
    _, channels, height, width = input.shape
    dtype = input.dtype.type
    output = np.zeros((rois.shape[0], channels, pooled_height, pooled_width), dtype=input.dtype)
    for k, roi in enumerate(rois):
        image = input[int(roi[0])]
        ys, xs, count = _roi_samples(roi, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned,
                                     height, width, dtype)
        for y, x, wy, wx in _corners(ys, xs):
            output[k] += np.einsum("cpiqj,pi,qj->cpq", image[:, y, x], wy, wx)
        output[k] /= dtype(count)
    return output


def _roi_align_backward(grad, rois, input_shape, spatial_scale, pooled_height, pooled_width, sampling_ratio,
                        aligned):
    _, channels, height, width = input_shape
    dtype = grad.dtype.type
    grad_input = np.zeros(input_shape, dtype=grad.dtype)
    for k, roi in enumerate(rois):
        image = grad_input[int(roi[0])]
        ys, xs, count = _roi_samples(roi, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned,
                                     height, width, dtype)
        share = grad[k] / dtype(count)
        for y, x, wy, wx in _corners(ys, xs):
            np.add.at(image, (slice(None), y, x), np.einsum("cpq,pi,qj->cpiqj", share, wy, wx))
    return grad_input


class ROIAlignFunction(Function):
    """roi_align's autograd op (torchvision's C++ ``ROIAlignFunction``): differentiable in ``input``."""

    @staticmethod
    def forward(ctx, input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned):
        rois_array = rois.detach().numpy()
        ctx.rois, ctx.input_shape = rois_array, tuple(input.shape)
        ctx.arguments = (spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned)
        return torch.from_numpy(_roi_align_forward(input.detach().numpy(), rois_array, *ctx.arguments))

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        grad = _roi_align_backward(grad_output.numpy(), ctx.rois, ctx.input_shape, *ctx.arguments)
        return torch.from_numpy(grad), None, None, None, None, None, None


def roi_align(input, boxes, output_size, spatial_scale=1.0, sampling_ratio=-1, aligned=False):
    """RoI Align as in Mask R-CNN: each region of ``input`` (``(N, C, H, W)``) cut into
    ``output_size`` (an int or ``(height, width)``) bins, each the average of bilinearly
    interpolated samples, ``(K, C, *output_size)``.

    ``boxes``: a ``(K, 5)`` tensor of ``(batch index, x1, y1, x2, y2)`` rows, or a list of ``(L_i, 4)``
    tensors of ``xyxy`` boxes, one per image; ``spatial_scale`` maps box coordinates to the input's;
    ``sampling_ratio``: samples per bin side (<= 0: ``ceil(roi size / output size)``); ``aligned``:
    shift the boxes by -0.5 pixel (Detectron2's alignment; False is the legacy behaviour)."""
    rois = rois_from(boxes)
    output_size = _pair(output_size)
    check_roi_op_inputs(input, rois, "roi_align_forward_kernel")
    return ROIAlignFunction.apply(input, rois, float(spatial_scale), int(output_size[0]), int(output_size[1]),
                                  int(sampling_ratio), bool(aligned))


class RoIAlign(nn.Module):
    """See :func:`roi_align`."""

    def __init__(self, output_size, spatial_scale, sampling_ratio, aligned=False):
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale
        self.sampling_ratio = sampling_ratio
        self.aligned = aligned

    def forward(self, input, rois):
        return roi_align(input, rois, self.output_size, self.spatial_scale, self.sampling_ratio, self.aligned)

    def __repr__(self):
        return (f"{self.__class__.__name__}(output_size={self.output_size}, spatial_scale={self.spatial_scale}, "
                f"sampling_ratio={self.sampling_ratio}, aligned={self.aligned})")
