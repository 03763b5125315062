"""RoI max pooling (Fast R-CNN), torchvision.ops.roi_pool and the RoIPool module.

The kernel is torchvision's CPU kernel (``torchvision/csrc/ops/cpu/roi_pool_kernel.cpp``) in NumPy:
each RoI's corners are scaled by ``spatial_scale`` and rounded to pixels (half away from zero), the
RoI (at least one pixel, its end pixel included) is cut into ``pooled_height x pooled_width`` bins
whose edges are ``floor``/``ceil`` of the fractional bin edges, clipped to the image, and each bin
gives its maximum (the first one in row-major order; an empty bin gives 0). The backward pass sends
each output's gradient to the pixel that gave its maximum. The RoIs get no gradient (as in
torchvision). Arithmetic is in the input's dtype, as the kernel's.
"""
import numpy as np

import glasstorch as torch
from glasstorch import nn
from glasstorch.autograd import Function, once_differentiable
from glasstorch.nn.modules.utils import _pair

from ._utils import check_roi_op_inputs, rois_from

__all__ = ["roi_pool", "RoIPool"]


def _round_half_away(values):
    """C's ``round``: halves go away from zero (NumPy's ``round`` goes to even)."""
    return np.sign(values) * np.floor(np.abs(values) + values.dtype.type(0.5))


def _roi_pool_forward(input, rois, spatial_scale, pooled_height, pooled_width):
    """``(output, argmax)``: the pooled ``(K, C, PH, PW)`` values and, per value, the index
    ``h * W + w`` of its pixel in its image plane (-1 where the bin is empty)."""
    _, channels, height, width = input.shape
    dtype = input.dtype.type
    num_rois = rois.shape[0]
    output = np.zeros((num_rois, channels, pooled_height, pooled_width), dtype=input.dtype)
    argmax = np.full(output.shape, -1, dtype=np.int64)
    if num_rois == 0:
        return output, argmax
    scaled = _round_half_away(rois[:, 1:] * dtype(spatial_scale)).astype(np.int64)
    lowest = dtype(-np.finfo(np.float32).max)            # the kernel starts its maximum at -FLT_MAX
    for k in range(num_rois):
        plane = input[int(rois[k, 0])].reshape(channels, height * width)
        start_w, start_h, end_w, end_h = scaled[k]
        bin_h = dtype(max(end_h - start_h + 1, 1)) / dtype(pooled_height)
        bin_w = dtype(max(end_w - start_w + 1, 1)) / dtype(pooled_width)
        for ph in range(pooled_height):
            h0 = min(max(int(np.floor(dtype(ph) * bin_h)) + start_h, 0), height)
            h1 = min(max(int(np.ceil(dtype(ph + 1) * bin_h)) + start_h, 0), height)
            for pw in range(pooled_width):
                w0 = min(max(int(np.floor(dtype(pw) * bin_w)) + start_w, 0), width)
                w1 = min(max(int(np.ceil(dtype(pw + 1) * bin_w)) + start_w, 0), width)
                if h1 <= h0 or w1 <= w0:
                    continue                                   # empty bin: 0, argmax -1
                pixels = (np.arange(h0, h1)[:, None] * width + np.arange(w0, w1)[None, :]).ravel()
                window = plane[:, pixels]
                best = window.argmax(axis=1)
                values = window[np.arange(channels), best]
                found = values > lowest
                output[k, :, ph, pw] = np.where(found, values, lowest)
                argmax[k, :, ph, pw] = np.where(found, pixels[best], -1)
    return output, argmax


def _roi_pool_backward(grad, rois, argmax, input_shape):
    """The input's gradient: each output gradient added to the pixel that gave its maximum."""
    batch, channels, height, width = input_shape
    grad_input = np.zeros(batch * channels * height * width, dtype=grad.dtype)
    image = rois[:, 0].astype(np.int64)[:, None, None, None]
    flat = (image * channels + np.arange(channels)[None, :, None, None]) * (height * width) + argmax
    found = argmax >= 0
    np.add.at(grad_input, flat[found], grad[found])
    return grad_input.reshape(input_shape)


class ROIPoolFunction(Function):
    """roi_pool's autograd op (torchvision's C++ ``ROIPoolFunction``): differentiable in ``input``."""

    @staticmethod
    def forward(ctx, input, rois, spatial_scale, pooled_height, pooled_width):
        rois_array = rois.detach().numpy()
        output, argmax = _roi_pool_forward(input.detach().numpy(), rois_array, spatial_scale,
                                           pooled_height, pooled_width)
        ctx.rois, ctx.argmax, ctx.input_shape = rois_array, argmax, tuple(input.shape)
        return torch.from_numpy(output)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        grad = _roi_pool_backward(np.ascontiguousarray(grad_output.numpy()), ctx.rois, ctx.argmax, ctx.input_shape)
        return torch.from_numpy(grad), None, None, None, None


def roi_pool(input, boxes, output_size, spatial_scale=1.0):
    """RoI max pooling as in Fast R-CNN: each region of ``input`` (``(N, C, H, W)``) cut into
    ``output_size`` (an int or ``(height, width)``) bins and max-pooled, ``(K, C, *output_size)``.

    ``boxes``: a ``(K, 5)`` tensor of ``(batch index, x1, y1, x2, y2)`` rows, or a list of ``(L_i, 4)``
    tensors of ``xyxy`` boxes, one per image of the batch; ``spatial_scale`` maps the box
    coordinates to the input's (0.5 for a feature map at half the image's resolution)."""
    rois = rois_from(boxes)
    output_size = _pair(output_size)
    check_roi_op_inputs(input, rois, "roi_pool_forward_kernel")
    return ROIPoolFunction.apply(input, rois, float(spatial_scale), int(output_size[0]), int(output_size[1]))


class RoIPool(nn.Module):
    """See :func:`roi_pool`."""

    def __init__(self, output_size, spatial_scale):
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale

    def forward(self, input, rois):
        return roi_pool(input, rois, self.output_size, self.spatial_scale)

    def __repr__(self):
        return f"{self.__class__.__name__}(output_size={self.output_size}, spatial_scale={self.spatial_scale})"
