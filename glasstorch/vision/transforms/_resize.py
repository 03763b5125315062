"""Antialiased bilinear resampling: what ``F.interpolate(..., mode="bilinear", antialias=True)`` computes
on the CPU, for torchvision's ``Resize`` on tensors.

Shrinking an image by plain bilinear interpolation reads only the 2x2 source pixels nearest to each
output pixel and skips the rest, so fine detail turns into aliasing. The antialiased version (Pillow's
and torch's) widens the triangle filter by the scale factor: an output pixel averages every source
pixel under a triangle ``scale`` pixels wide on each side, weighted by distance and normalised to sum
to one. The filter is separable: the width is resampled first, then the height, each pass only when
that size changes.

Two arithmetics, as in torch:

* float tensors: weights and sums in the tensor's own precision (float32 stays float32);
* uint8 tensors (torchvision v2 passes them straight in): weights computed in float64, turned into
  int16 fixed-point numbers with as many fraction bits as the largest weight allows, sums in integers,
  rounded and clamped to 0..255 after each pass (the Pillow-SIMD algorithm torch adopted).

This works on NumPy arrays (image data on the CPU, as torchvision's data pipeline is); the callers
convert from and to tensors.
"""
import numpy as np


def _triangle(x):
    """The bilinear filter: 1 - |x| inside [-1, 1], 0 outside."""
    x = np.abs(x)
    return np.where(x < 1.0, 1.0 - x, 0.0)


def _source_windows(in_size, out_size, ftype):
    """For each output index: the first source index, how many source pixels it reads, and their
    normalised weights (a row of a (out_size, window) matrix, zero-padded), computed in `ftype`
    with torch's expressions and roundings (``_compute_indices_min_size_weights_aa``)."""
    scale = ftype(in_size) / ftype(out_size)
    support = ftype(scale) if scale >= 1.0 else ftype(1.0)            # interp_size 2 * 0.5, widened by scale
    invscale = ftype(1.0 / float(scale)) if scale >= 1.0 else ftype(1.0)
    window = int(np.ceil(support)) * 2 + 1
    i = np.arange(out_size)
    center = (scale * (i + 0.5)).astype(ftype)
    xmin = np.maximum((center - support + 0.5).astype(np.int64), 0)   # C++ truncation toward zero
    xsize = np.minimum((center + support + 0.5).astype(np.int64), in_size) - xmin
    xsize = np.clip(xsize, 0, window)
    j = np.arange(window)
    offsets = (j[None, :] + xmin[:, None]).astype(ftype) - center[:, None]
    weights = _triangle(((offsets + 0.5) * invscale).astype(ftype)).astype(ftype)
    weights = np.where(j[None, :] < xsize[:, None], weights, ftype(0))
    total = weights.sum(axis=1, dtype=ftype) if ftype is not np.float32 else _sequential_sum(weights)
    weights = np.where(total[:, None] != 0, weights / np.where(total == 0, 1, total)[:, None], weights)
    index = np.minimum(xmin[:, None] + j[None, :], in_size - 1)       # padded slots read a valid pixel, weight 0
    return index, weights.astype(ftype)


def _sequential_sum(weights):
    """Row sums added left to right in float32, as the C++ loop does (NumPy's pairwise sum differs)."""
    total = np.zeros(weights.shape[0], dtype=np.float32)
    for column in weights.T:
        total += column
    return total


def _resample_float(array, axis, out_size):
    index, weights = _source_windows(array.shape[axis], out_size, array.dtype.type)
    moved = np.moveaxis(array, axis, -1)
    out = moved[..., index[:, 0]] * weights[:, 0]
    for k in range(1, index.shape[1]):
        out += moved[..., index[:, k]] * weights[:, k]
    return np.moveaxis(out, -1, axis)


def _resample_uint8(array, axis, out_size):
    index, weights = _source_windows(array.shape[axis], out_size, np.float64)
    largest = weights.max() if weights.size else 0.0
    precision = 0
    while precision < 22 and int(0.5 + largest * (1 << (precision + 1))) < (1 << 15):
        precision += 1
    scaled = weights * (1 << precision)
    fixed = np.where(scaled < 0, (-0.5 + scaled).astype(np.int64), (0.5 + scaled).astype(np.int64))
    moved = np.moveaxis(array, axis, -1).astype(np.int64)
    out = np.full(moved.shape[:-1] + (out_size,), 1 << (precision - 1) if precision else 0, dtype=np.int64)
    for k in range(index.shape[1]):
        out += moved[..., index[:, k]] * fixed[:, k]
    out = np.clip(out >> precision, 0, 255).astype(np.uint8)
    return np.moveaxis(out, -1, axis)


def resize_antialiased(array, height, width):
    """Resize the last two axes of `array` (float32/float64 or uint8) to (height, width), width first."""
    resample = _resample_uint8 if array.dtype == np.uint8 else _resample_float
    if array.shape[-1] != width:
        array = resample(array, array.ndim - 1, width)
    if array.shape[-2] != height:
        array = resample(array, array.ndim - 2, height)
    return array
