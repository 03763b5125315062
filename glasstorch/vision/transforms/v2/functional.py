"""torchvision.transforms.v2.functional: the v2 operations, on PIL images, plain tensors and
``tv_tensors.Image`` (an Image in gives an Image out).

Most kernels are v1's (``..functional``); these differ from v1 as torchvision's do:

* ``resize`` of a uint8 tensor with bilinear antialiasing resamples in integers, as torch does on
  x86-64 (AVX2) and ARM CPUs, instead of going through float32 (other CPUs give torchvision the float
  path: results may differ by one gray level);
* ``adjust_brightness``/``contrast``/``saturation`` and ``rgb_to_grayscale`` blend with one fused
  multiply-add chain, and floor the gray image of integer inputs;
* ``adjust_hue`` converts HSV back to RGB by a gather;
* ``pad`` takes a per-channel ``fill`` for tensors; ``normalize`` refuses PIL images.
"""
import numpy as np

import glasstorch as torch
from glasstorch import Tensor

from ... import _pil
from ...tv_tensors import Image, TVTensor
from .. import _functional_pil as _FP, _functional_tensor as _FT, _resize
from .. import functional as _F
from ..functional import InterpolationMode, _compute_resized_output_size as _v1_output_size, \
    _interpolation_modes_from_int, pil_modes_mapping

__all__ = ["adjust_brightness", "adjust_contrast", "adjust_hue", "adjust_saturation", "center_crop",
           "convert_image_dtype", "crop", "get_dimensions", "get_image_num_channels", "get_image_size",
           "get_num_channels", "get_size", "grayscale_to_rgb", "hflip", "horizontal_flip", "normalize", "pad",
           "pil_to_tensor", "resize", "resized_crop", "rgb_to_grayscale", "to_dtype", "to_grayscale", "to_image",
           "to_pil_image", "to_tensor", "vertical_flip", "vflip"]

to_tensor = _F.to_tensor
pil_to_tensor = _F.pil_to_tensor
to_pil_image = _F.to_pil_image
to_grayscale = _F.to_grayscale


def _functional(name, tensor_kernel, pil_kernel=None):
    """A v2 functional: the tensor kernel for tensors (re-wrapping an Image), the PIL kernel for PIL
    images, TypeError naming the supported types for anything else."""
    def functional(inpt, *args, **kwargs):
        if isinstance(inpt, Tensor):
            output = tensor_kernel(inpt, *args, **kwargs)
            if isinstance(inpt, TVTensor) and isinstance(output, Tensor) and not isinstance(output, TVTensor):
                output = type(inpt)._wrap(output)
            return output
        if pil_kernel is not None and _pil.is_pil_image(inpt):
            return pil_kernel(inpt, *args, **kwargs)
        supported = "torch.Tensor, tv_tensors.Image" + (", PIL.Image.Image" if pil_kernel is not None else "")
        raise TypeError(f"Functional F.{name} supports inputs of type {supported}, but got {type(inpt)} instead.")
    functional.__name__ = functional.__qualname__ = name
    functional.__doc__ = (tensor_kernel.__doc__ or "").strip() or None
    return functional


# -- sizes ------------------------------------------------------------------------------------------------

def _tensor_chw(image):
    return [image.shape[-3], image.shape[-2], image.shape[-1]] if image.ndim >= 3 else [1, *image.shape[-2:]]


get_dimensions = _functional("get_dimensions", _tensor_chw, _FP.get_dimensions)
get_num_channels = _functional("get_num_channels", lambda image: _tensor_chw(image)[0], _FP.get_image_num_channels)
get_image_num_channels = get_num_channels
get_size = _functional("get_size", lambda image: _tensor_chw(image)[1:], lambda image: [image.height, image.width])


def get_image_size(inpt):
    """[width, height] (v1's order; deprecated in torchvision in favour of get_size)."""
    return _F.get_image_size(inpt)


# -- type and dtype conversion ---------------------------------------------------------------------------------

def to_image(inpt):
    """A PIL image, an (H, W[, C]) ndarray or a tensor -> ``tv_tensors.Image`` (C, H, W), dtype kept."""
    if isinstance(inpt, np.ndarray):
        output = torch.from_numpy(np.atleast_3d(inpt)).permute((2, 0, 1)).contiguous()
    elif _pil.is_pil_image(inpt):
        output = pil_to_tensor(inpt)
    elif isinstance(inpt, Tensor):
        output = inpt
    else:
        raise TypeError(f"Input can either be a pure Tensor, a numpy array, or a PIL image, but got {type(inpt)} "
                        f"instead.")
    return Image(output)


def _num_value_bits(dtype):
    bits = {torch.uint8: 8, torch.int8: 7, torch.int16: 15, torch.int32: 31, torch.int64: 63}
    if dtype not in bits:
        raise TypeError(f"Number of value bits is only defined for integer dtypes, but got {dtype}.")
    return bits[dtype]


def to_dtype_image(image, dtype=torch.float, scale=False):
    """Change dtype; with ``scale=True`` also rescale the value range (uint8 255 <-> float 1.0)."""
    if image.dtype == dtype:
        return image
    if not scale:
        return image.to(dtype)
    if image.is_floating_point():
        if dtype.is_floating_point:
            return image.to(dtype)
        if (image.dtype == torch.float32 and dtype in (torch.int32, torch.int64)) or (
                image.dtype == torch.float64 and dtype == torch.int64):
            raise RuntimeError(f"The conversion from {image.dtype} to {dtype} cannot be performed safely.")
        eps = 1e-3
        return image.mul(float(_FT._max_value(dtype)) + 1.0 - eps).to(dtype)
    if dtype.is_floating_point:
        return image.to(dtype).mul_(1.0 / _FT._max_value(image.dtype))
    shift_by = abs(_num_value_bits(image.dtype) - _num_value_bits(dtype))
    if _num_value_bits(image.dtype) > _num_value_bits(dtype):
        return image.bitwise_right_shift(shift_by).to(dtype)
    return image.to(dtype).bitwise_left_shift(shift_by)


to_dtype = _functional("to_dtype", to_dtype_image)


def convert_image_dtype(image, dtype=torch.float32):
    """to_dtype with scale=True."""
    return to_dtype(image, dtype=dtype, scale=True)


def normalize_image(image, mean, std, inplace=False):
    """(image - mean[c]) / std[c] per channel, on a float image (..., C, H, W)."""
    if not image.is_floating_point():
        raise TypeError(f"Input tensor should be a float tensor. Got {image.dtype}.")
    if image.ndim < 3:
        raise ValueError(f"Expected tensor to be a tensor image of size (..., C, H, W). Got {image.shape}.")
    if isinstance(std, (tuple, list)):
        divzero = not all(std)
    else:
        divzero = isinstance(std, (int, float)) and std == 0
    if divzero:
        raise ValueError("std evaluated to zero, leading to division by zero.")
    mean = torch.as_tensor(mean, dtype=image.dtype, device=image.device)
    std = torch.as_tensor(std, dtype=image.dtype, device=image.device)
    if mean.ndim == 1:
        mean = mean.view(-1, 1, 1)
    if std.ndim == 1:
        std = std.view(-1, 1, 1)
    image = image.sub_(mean) if inplace else image.sub(mean)
    return image.div_(std)


normalize = _functional("normalize", normalize_image)

# -- geometry --------------------------------------------------------------------------------------------

_INTERPOLATION_STRING_TO_MODE = {mode.value: mode for mode in InterpolationMode}


def _check_interpolation(interpolation):
    if isinstance(interpolation, str):
        if interpolation not in _INTERPOLATION_STRING_TO_MODE:
            raise ValueError(f"Invalid interpolation mode: '{interpolation}'. Supported string values are: "
                             f"{list(_INTERPOLATION_STRING_TO_MODE.keys())}.")
        return _INTERPOLATION_STRING_TO_MODE[interpolation]
    if isinstance(interpolation, int):
        return _interpolation_modes_from_int(interpolation)
    if not isinstance(interpolation, InterpolationMode):
        raise ValueError(f"Argument interpolation should be an `InterpolationMode` or a corresponding Pillow integer "
                         f"constant, but got {interpolation}.")
    return interpolation


def _compute_resized_output_size(canvas_size, size, max_size=None):
    if isinstance(size, int):
        size = [size]
    elif max_size is not None and size is not None and len(size) != 1:
        raise ValueError("max_size should only be passed if size is None or specifies the length of the smaller edge, "
                         "i.e. size should be an int or a sequence of length 1 in torchscript mode.")
    return _v1_output_size(canvas_size, size=size, max_size=max_size, allow_size_none=True)


def resize_image(image, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
    """Resize (..., C, H, W). uint8 + bilinear + antialias resamples in integers (torch's CPU kernel);
    other integer cases go through float32 and are rounded back."""
    interpolation = _check_interpolation(interpolation)
    antialias = False if antialias is None else antialias
    if interpolation not in (InterpolationMode.BILINEAR, InterpolationMode.BICUBIC, InterpolationMode.LANCZOS):
        antialias = False
    shape = image.shape
    num_channels, old_height, old_width = shape[-3:]
    new_height, new_width = _compute_resized_output_size((old_height, old_width), size=size, max_size=max_size)
    if (new_height, new_width) == (old_height, old_width) or image.numel() == 0:
        return image if (new_height, new_width) == (old_height, old_width) else \
            image.reshape(shape[:-2] + (new_height, new_width))
    image = image.reshape(-1, num_channels, old_height, old_width)
    dtype = image.dtype
    if dtype == torch.uint8 and interpolation == InterpolationMode.BILINEAR and antialias:
        array = _resize.resize_antialiased(image.numpy(force=True), new_height, new_width)
        return torch.from_numpy(array).to(image.device).reshape(shape[:-3] + (num_channels, new_height, new_width))
    nearest = interpolation in (InterpolationMode.NEAREST, InterpolationMode.NEAREST_EXACT)
    need_cast = dtype not in (torch.float32, torch.float64) and not (nearest and dtype == torch.uint8)
    if need_cast:
        image = image.to(dtype=torch.float32)
    image = _FT.interpolate_image(image, [new_height, new_width], interpolation.value, antialias)
    if need_cast:
        if dtype in (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64):
            image = image.round_()
        image = image.to(dtype=dtype)
    return image.reshape(shape[:-3] + (num_channels, new_height, new_width))


def _resize_image_pil(image, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
    new_height, new_width = _compute_resized_output_size((image.height, image.width), size=size, max_size=max_size)
    interpolation = _check_interpolation(interpolation)
    if (new_height, new_width) == (image.height, image.width):
        return image
    return image.resize((new_width, new_height), resample=pil_modes_mapping[interpolation])


resize = _functional("resize", resize_image, _resize_image_pil)


def _parse_pad_padding(padding):
    if isinstance(padding, int):
        return [padding] * 4
    if isinstance(padding, (tuple, list)):
        if len(padding) not in (1, 2, 4):
            raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple or list. Found {len(padding)}")
        return _FT._parse_pad_padding(list(padding))
    raise TypeError(f"`padding` should be an integer or tuple or list of integers, but got {padding}")


def _pad_with_scalar_fill(image, torch_padding, fill, padding_mode):
    shape = image.shape
    num_channels, height, width = shape[-3:]
    image = image.reshape(-1, num_channels, height, width)
    if padding_mode == "symmetric":
        image = _FT._pad_symmetric(image, torch_padding)
    else:
        image = _FT.pad(image, [torch_padding[0], torch_padding[2], torch_padding[1], torch_padding[3]],
                        fill=fill, padding_mode=padding_mode)
    return image.reshape(shape[:-3] + (num_channels,) + tuple(image.shape[-2:]))


def pad_image(image, padding, fill=None, padding_mode="constant"):
    """Pad (..., C, H, W); `fill` may be one value per channel (constant mode only)."""
    torch_padding = _parse_pad_padding(padding)
    if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
        raise ValueError(f"`padding_mode` should be either `'constant'`, `'edge'`, `'reflect'` or `'symmetric'`, but "
                         f"got `'{padding_mode}'`.")
    if fill is None:
        fill = 0
    if isinstance(fill, (int, float)) or len(fill) == 1:
        return _pad_with_scalar_fill(image, torch_padding, fill if isinstance(fill, (int, float)) else fill[0],
                                     padding_mode)
    if padding_mode != "constant":
        raise ValueError(f"Padding mode '{padding_mode}' is not supported if fill is not scalar")
    output = _pad_with_scalar_fill(image, torch_padding, fill=0, padding_mode="constant")
    left, right, top, bottom = torch_padding
    fill = torch.tensor(fill, device=image.device).to(dtype=image.dtype).reshape(-1, 1, 1)
    if top > 0:
        output[..., :top, :] = fill
    if left > 0:
        output[..., :, :left] = fill
    if bottom > 0:
        output[..., -bottom:, :] = fill
    if right > 0:
        output[..., :, -right:] = fill
    return output


pad = _functional("pad", pad_image, _FP.pad)
crop = _functional("crop", _FT.crop, _FP.crop)
center_crop = _functional("center_crop", lambda image, output_size: _F.center_crop(image, output_size),
                          lambda image, output_size: _F.center_crop(image, output_size))


def resized_crop_image(image, top, left, height, width, size, interpolation=InterpolationMode.BILINEAR,
                       antialias=True):
    """crop, then resize."""
    return resize_image(_FT.crop(image, top, left, height, width), size, interpolation=interpolation,
                        antialias=antialias)


def _resized_crop_image_pil(image, top, left, height, width, size, interpolation=InterpolationMode.BILINEAR,
                            antialias=True):
    return _resize_image_pil(_FP.crop(image, top, left, height, width), size, interpolation=interpolation)


resized_crop = _functional("resized_crop", resized_crop_image, _resized_crop_image_pil)
horizontal_flip = _functional("horizontal_flip", _FT.hflip, _FP.hflip)
vertical_flip = _functional("vertical_flip", _FT.vflip, _FP.vflip)
hflip, vflip = horizontal_flip, vertical_flip

# -- color -----------------------------------------------------------------------------------------------


def _rgb_to_grayscale_image(image, num_output_channels=1, preserve_dtype=True):
    if image.shape[-3] == 1 and num_output_channels == 1:
        return image.clone()
    if image.shape[-3] == 1 and num_output_channels == 3:
        s = [1] * len(image.shape)
        s[-3] = 3
        return image.repeat(s)
    r, g, b = image.unbind(dim=-3)
    l_img = r.mul(0.2989).add_(g, alpha=0.587).add_(b, alpha=0.114).unsqueeze(dim=-3)
    if preserve_dtype:
        l_img = l_img.to(image.dtype)
    if num_output_channels == 3:
        l_img = l_img.expand(image.shape)
    return l_img


def rgb_to_grayscale_image(image, num_output_channels=1):
    """Luma 0.2989 R + 0.587 G + 0.114 B, 1 or 3 channels, in the input dtype (truncated)."""
    if num_output_channels not in (1, 3):
        raise ValueError(f"num_output_channels must be 1 or 3, got {num_output_channels}.")
    return _rgb_to_grayscale_image(image, num_output_channels=num_output_channels, preserve_dtype=True)


rgb_to_grayscale = _functional("rgb_to_grayscale", rgb_to_grayscale_image,
                               lambda image, num_output_channels=1: _FP.to_grayscale(image, num_output_channels))
grayscale_to_rgb = _functional(
    "grayscale_to_rgb",
    lambda image: image if image.shape[-3] >= 3 else _rgb_to_grayscale_image(image, num_output_channels=3),
    lambda image: image.convert(mode="RGB"))


def _check_color_channels(image):
    c = image.shape[-3]
    if c not in [1, 3]:
        raise TypeError(f"Input image tensor permitted channel values are 1 or 3, but found {c}")
    return c


def _blend(image1, image2, ratio):
    ratio = float(ratio)
    fp = image1.is_floating_point()
    output = image1.mul(ratio).add_(image2, alpha=(1.0 - ratio)).clamp_(0, _FT._max_value(image1.dtype))
    return output if fp else output.to(image1.dtype)


def adjust_brightness_image(image, brightness_factor):
    """image * factor, clamped to the dtype's range."""
    if brightness_factor < 0:
        raise ValueError(f"brightness_factor ({brightness_factor}) is not non-negative.")
    _check_color_channels(image)
    output = image.mul(brightness_factor).clamp_(0, _FT._max_value(image.dtype))
    return output if image.is_floating_point() else output.to(image.dtype)


def _gray_for_blend(image):
    gray = _rgb_to_grayscale_image(image, num_output_channels=1, preserve_dtype=False)
    return gray if image.is_floating_point() else gray.floor_()


def adjust_saturation_image(image, saturation_factor):
    """Blend with the grayscale image."""
    if saturation_factor < 0:
        raise ValueError(f"saturation_factor ({saturation_factor}) is not non-negative.")
    if _check_color_channels(image) == 1:
        return image
    return _blend(image, _gray_for_blend(image), saturation_factor)


def adjust_contrast_image(image, contrast_factor):
    """Blend with the mean of the grayscale image."""
    if contrast_factor < 0:
        raise ValueError(f"contrast_factor ({contrast_factor}) is not non-negative.")
    c = _check_color_channels(image)
    if c == 3:
        gray = _gray_for_blend(image)
    else:
        gray = image if image.is_floating_point() else image.to(torch.float32)
    mean = torch.mean(gray, dim=(-3, -2, -1), keepdim=True)
    return _blend(image, mean, contrast_factor)


def _rgb_to_hsv(image):
    r, g, _ = image.unbind(dim=-3)
    minc, maxc = torch.aminmax(image, dim=-3)
    eqc = maxc == minc
    channels_range = maxc - minc
    ones = torch.ones_like(maxc)
    s = channels_range / torch.where(eqc, ones, maxc)
    divisor = torch.where(eqc, ones, channels_range).unsqueeze(dim=-3)
    rc, gc, bc = ((maxc.unsqueeze(dim=-3) - image) / divisor).unbind(dim=-3)
    mask_maxc_neq_r = maxc != r
    mask_maxc_eq_g = maxc == g
    hg = rc.add(2.0).sub_(bc).mul_(mask_maxc_eq_g & mask_maxc_neq_r)
    hr = bc.sub(gc).mul_(~mask_maxc_neq_r)
    hb = gc.add(4.0).sub_(rc).mul_(mask_maxc_neq_r & ~mask_maxc_eq_g)
    h = hr.add_(hg).add_(hb)
    h = torch.fmod(h.mul_(1.0 / 6.0).add_(1.0), 1.0)
    return torch.stack((h, s, maxc), dim=-3)


# which of (v, p, q, t) each RGB channel takes, for each sector i = floor(6 h) of the hue circle
_HSV_SELECT = [[0, 2, 1, 1, 3, 0], [3, 0, 0, 2, 1, 1], [1, 1, 3, 0, 0, 2]]


def _hsv_to_rgb(img):
    h, s, v = img.unbind(dim=-3)
    h6 = h.mul(6)
    i = torch.floor(h6)
    f = h6.sub_(i)
    i = i.to(dtype=torch.int32)
    sxf = s * f
    one_minus_s = 1.0 - s
    q = (1.0 - sxf).mul_(v).clamp_(0.0, 1.0)
    t = sxf.add_(one_minus_s).mul_(v).clamp_(0.0, 1.0)
    p = one_minus_s.mul_(v).clamp_(0.0, 1.0)
    i = i.remainder(6)
    vpqt = torch.stack((v, p, q, t), dim=-3)
    select = torch.tensor(_HSV_SELECT, dtype=torch.long, device=img.device)[:, i.long()]
    if select.ndim > 3:
        select = select.moveaxis(0, -3)
    return vpqt.gather(-3, select)


def adjust_hue_image(image, hue_factor):
    """Rotate the hue by `hue_factor` turns ([-0.5, 0.5]) in HSV space."""
    if not (-0.5 <= hue_factor <= 0.5):
        raise ValueError(f"hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    if _check_color_channels(image) == 1 or image.numel() == 0:
        return image
    orig_dtype = image.dtype
    image = _rgb_to_hsv(to_dtype_image(image, torch.float32, scale=True))
    h, s, v = image.unbind(dim=-3)
    h = h.add(hue_factor).remainder(1.0)
    return to_dtype_image(_hsv_to_rgb(torch.stack((h, s, v), dim=-3)), orig_dtype, scale=True)


adjust_brightness = _functional("adjust_brightness", adjust_brightness_image, _FP.adjust_brightness)
adjust_contrast = _functional("adjust_contrast", adjust_contrast_image, _FP.adjust_contrast)
adjust_saturation = _functional("adjust_saturation", adjust_saturation_image, _FP.adjust_saturation)
adjust_hue = _functional("adjust_hue", adjust_hue_image, _FP.adjust_hue)
