"""torchvision.transforms.functional: the operations behind the transforms, on PIL images and tensors.

Each function sends a PIL image to Pillow (``_functional_pil``) and a tensor of shape (..., C, H, W) to
tensor code (``_functional_tensor``), as torchvision does; the transforms in ``transforms.py`` only
draw their random parameters and call these.
"""
import numbers
import sys
import warnings
from enum import Enum

import numpy as np

import glasstorch as torch
from glasstorch import Tensor

from .. import _pil
from . import _functional_pil as F_pil, _functional_tensor as F_t


class InterpolationMode(Enum):
    """How resizing computes a pixel between source pixels: ``nearest``, ``nearest-exact``,
    ``bilinear``, ``bicubic``, and Pillow's ``box``, ``hamming``, ``lanczos``."""
    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


def _interpolation_modes_from_int(i):
    """Pillow's integer constants (``PIL.Image.BILINEAR`` is 2) -> InterpolationMode."""
    return {0: InterpolationMode.NEAREST, 2: InterpolationMode.BILINEAR, 3: InterpolationMode.BICUBIC,
            4: InterpolationMode.BOX, 5: InterpolationMode.HAMMING, 1: InterpolationMode.LANCZOS}[i]


pil_modes_mapping = {InterpolationMode.NEAREST: 0, InterpolationMode.BILINEAR: 2, InterpolationMode.BICUBIC: 3,
                     InterpolationMode.NEAREST_EXACT: 0, InterpolationMode.BOX: 4, InterpolationMode.HAMMING: 5,
                     InterpolationMode.LANCZOS: 1}

_is_pil_image = F_pil._is_pil_image


def _check_interpolation(interpolation):
    if isinstance(interpolation, int):
        return _interpolation_modes_from_int(interpolation)
    if not isinstance(interpolation, InterpolationMode):
        raise TypeError("Argument interpolation should be a InterpolationMode or a corresponding Pillow integer "
                        "constant")
    return interpolation


def get_dimensions(img):
    """[channels, height, width] of a PIL image or an image tensor."""
    if isinstance(img, Tensor):
        return F_t.get_dimensions(img)
    return F_pil.get_dimensions(img)


def get_image_size(img):
    """[width, height] (PIL's order)."""
    if isinstance(img, Tensor):
        return F_t.get_image_size(img)
    return F_pil.get_image_size(img)


def get_image_num_channels(img):
    if isinstance(img, Tensor):
        return F_t.get_image_num_channels(img)
    return F_pil.get_image_num_channels(img)


def _is_numpy(img):
    return isinstance(img, np.ndarray)


def _is_numpy_image(img):
    return img.ndim in {2, 3}


def to_tensor(pic):
    """A PIL image or a (H, W[, C]) ndarray -> a (C, H, W) tensor; uint8 data becomes float in [0, 1]."""
    if not (F_pil._is_pil_image(pic) or _is_numpy(pic)):
        raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")
    if _is_numpy(pic) and not _is_numpy_image(pic):
        raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
    default_float_dtype = torch.get_default_dtype()
    if isinstance(pic, np.ndarray):
        if pic.ndim == 2:
            pic = pic[:, :, None]
        img = torch.from_numpy(pic.transpose((2, 0, 1))).contiguous()
        if img.dtype == torch.uint8:
            return img.to(dtype=default_float_dtype).div(255)
        return img
    mode_to_nptype = {"I": np.int32, "I;16" if sys.byteorder == "little" else "I;16B": np.int16, "F": np.float32}
    img = torch.from_numpy(np.array(pic, mode_to_nptype.get(pic.mode, np.uint8), copy=True))
    if pic.mode == "1":
        img = 255 * img
    img = img.view(pic.size[1], pic.size[0], F_pil.get_image_num_channels(pic))
    img = img.permute((2, 0, 1)).contiguous()
    if img.dtype == torch.uint8:
        return img.to(dtype=default_float_dtype).div(255)
    return img


def pil_to_tensor(pic):
    """A PIL image -> a (C, H, W) tensor of the same type (uint8 stays uint8)."""
    if not F_pil._is_pil_image(pic):
        raise TypeError(f"pic should be PIL Image. Got {type(pic)}")
    img = torch.as_tensor(np.array(pic, copy=True))
    img = img.view(pic.size[1], pic.size[0], F_pil.get_image_num_channels(pic))
    return img.permute((2, 0, 1))


def convert_image_dtype(image, dtype=torch.float):
    """Convert a tensor image to `dtype`, rescaling the values (uint8 255 <-> float 1.0)."""
    if not isinstance(image, Tensor):
        raise TypeError("Input img should be Tensor Image")
    return F_t.convert_image_dtype(image, dtype)


def to_pil_image(pic, mode=None):
    """A (C, H, W) tensor or (H, W, C) ndarray -> a PIL image; floats are scaled by 255 first."""
    if isinstance(pic, Tensor):
        if pic.ndim == 3:
            pic = pic.permute((1, 2, 0))
        pic = pic.numpy(force=True)
    elif not isinstance(pic, np.ndarray):
        raise TypeError(f"pic should be Tensor or ndarray. Got {type(pic)}.")
    if pic.ndim == 2:
        pic = np.expand_dims(pic, 2)
    if pic.ndim != 3:
        raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
    if pic.shape[-1] > 4:
        raise ValueError(f"pic should not have > 4 channels. Got {pic.shape[-1]} channels.")
    npimg = pic
    if np.issubdtype(npimg.dtype, np.floating) and mode != "F":
        npimg = (npimg * 255).astype(np.uint8)
    if npimg.shape[2] == 1:
        expected_mode = None
        npimg = npimg[:, :, 0]
        if npimg.dtype == np.uint8:
            expected_mode = "L"
        elif npimg.dtype == np.int16:
            expected_mode = "I;16" if sys.byteorder == "little" else "I;16B"
        elif npimg.dtype == np.int32:
            expected_mode = "I"
        elif npimg.dtype == np.float32:
            expected_mode = "F"
        if mode is not None and mode != expected_mode:
            raise ValueError(f"Incorrect mode ({mode}) supplied for input type {np.dtype}. Should be {expected_mode}")
        mode = expected_mode
    elif npimg.shape[2] == 2:
        if mode is not None and mode not in ["LA"]:
            raise ValueError("Only modes ['LA'] are supported for 2D inputs")
        if mode is None and npimg.dtype == np.uint8:
            mode = "LA"
    elif npimg.shape[2] == 4:
        if mode is not None and mode not in ["RGBA", "CMYK", "RGBX"]:
            raise ValueError("Only modes ['RGBA', 'CMYK', 'RGBX'] are supported for 4D inputs")
        if mode is None and npimg.dtype == np.uint8:
            mode = "RGBA"
    else:
        if mode is not None and mode not in ["RGB", "YCbCr", "HSV"]:
            raise ValueError("Only modes ['RGB', 'YCbCr', 'HSV'] are supported for 3D inputs")
        if mode is None and npimg.dtype == np.uint8:
            mode = "RGB"
    if mode is None:
        raise TypeError(f"Input type {npimg.dtype} is not supported")
    return _pil.fromarray(np.ascontiguousarray(npimg), mode)


def normalize(tensor, mean, std, inplace=False):
    """(tensor - mean[c]) / std[c] for each channel c of a float tensor image (..., C, H, W)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(tensor)}")
    return F_t.normalize(tensor, mean=mean, std=std, inplace=inplace)


def _compute_resized_output_size(image_size, size, max_size=None, allow_size_none=False):
    """[new_h, new_w]: `size` as (h, w), or one number for the shorter side (keeping the aspect
    ratio, the longer side capped at `max_size`)."""
    h, w = image_size
    short, long = (w, h) if w <= h else (h, w)
    if size is None:
        if not allow_size_none:
            raise ValueError("This should never happen!!")
        if not isinstance(max_size, int):
            raise ValueError(f"max_size must be an integer when size is None, but got {max_size} instead.")
        new_short, new_long = int(max_size * short / long), max_size
        new_w, new_h = (new_short, new_long) if w <= h else (new_long, new_short)
    elif len(size) == 1:
        requested_new_short = size if isinstance(size, int) else size[0]
        new_short, new_long = requested_new_short, int(requested_new_short * long / short)
        if max_size is not None:
            if max_size <= requested_new_short:
                raise ValueError(f"max_size = {max_size} must be strictly greater than the requested size for the "
                                 f"smaller edge size = {size}")
            if new_long > max_size:
                new_short, new_long = int(max_size * new_short / new_long), max_size
        new_w, new_h = (new_short, new_long) if w <= h else (new_long, new_short)
    else:
        new_w, new_h = size[1], size[0]
    return [new_h, new_w]


def _check_resize_size(size, max_size):
    if isinstance(size, (list, tuple)):
        if len(size) not in [1, 2]:
            raise ValueError(f"Size must be an int or a 1 or 2 element tuple/list, not a {len(size)} element "
                             f"tuple/list")
        if max_size is not None and len(size) != 1:
            raise ValueError("max_size should only be passed if size specifies the length of the smaller edge, i.e. "
                             "size should be an int or a sequence of length 1 in torchscript mode.")
    return [size] if isinstance(size, int) else size


def resize(img, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
    """Resize to `size` ((h, w), or the shorter side's length). Tensors: bilinear with antialiasing by
    default, as PIL always does; uint8 tensors are resized in float32 and rounded back."""
    interpolation = _check_interpolation(interpolation)
    size = _check_resize_size(size, max_size)
    _, image_height, image_width = get_dimensions(img)
    output_size = _compute_resized_output_size((image_height, image_width), size, max_size)
    if [image_height, image_width] == output_size:
        return img
    if not isinstance(img, Tensor):
        if antialias is False:
            warnings.warn("Anti-alias option is always applied for PIL Image input. Argument antialias is ignored.")
        return F_pil.resize(img, size=output_size, interpolation=pil_modes_mapping[interpolation])
    return F_t.resize(img, size=output_size, interpolation=interpolation.value, antialias=antialias)


def pad(img, padding, fill=0, padding_mode="constant"):
    """Pad every side: `padding` is one number, (left/right, top/bottom) or (left, top, right, bottom);
    `padding_mode` constant (with `fill`), edge, reflect or symmetric."""
    if not isinstance(img, Tensor):
        return F_pil.pad(img, padding=padding, fill=fill, padding_mode=padding_mode)
    return F_t.pad(img, padding=padding, fill=fill, padding_mode=padding_mode)


def crop(img, top, left, height, width):
    """The box with top-left corner (top, left) and this size; zero-padded where it leaves the image."""
    if not isinstance(img, Tensor):
        return F_pil.crop(img, top, left, height, width)
    return F_t.crop(img, top, left, height, width)


def _crop_size(output_size):
    if isinstance(output_size, numbers.Number):
        return int(output_size), int(output_size)
    if isinstance(output_size, (tuple, list)) and len(output_size) == 1:
        return output_size[0], output_size[0]
    return output_size


def center_crop(img, output_size):
    """The central (h, w) box; an image smaller than the box is zero-padded around first."""
    output_size = _crop_size(output_size)
    _, image_height, image_width = get_dimensions(img)
    crop_height, crop_width = output_size
    if crop_width > image_width or crop_height > image_height:
        padding_ltrb = [(crop_width - image_width) // 2 if crop_width > image_width else 0,
                        (crop_height - image_height) // 2 if crop_height > image_height else 0,
                        (crop_width - image_width + 1) // 2 if crop_width > image_width else 0,
                        (crop_height - image_height + 1) // 2 if crop_height > image_height else 0]
        img = pad(img, padding_ltrb, fill=0)
        _, image_height, image_width = get_dimensions(img)
        if crop_width == image_width and crop_height == image_height:
            return img
    crop_top = int(round((image_height - crop_height) / 2.0))
    crop_left = int(round((image_width - crop_width) / 2.0))
    return crop(img, crop_top, crop_left, crop_height, crop_width)


def resized_crop(img, top, left, height, width, size, interpolation=InterpolationMode.BILINEAR, antialias=True):
    """crop, then resize to `size` (what RandomResizedCrop applies)."""
    img = crop(img, top, left, height, width)
    return resize(img, size, interpolation, antialias=antialias)


def hflip(img):
    """Mirror left-right."""
    if not isinstance(img, Tensor):
        return F_pil.hflip(img)
    return F_t.hflip(img)


def vflip(img):
    """Mirror top-bottom."""
    if not isinstance(img, Tensor):
        return F_pil.vflip(img)
    return F_t.vflip(img)


def _color(name):
    """adjust_brightness/contrast/saturation/hue: Pillow's ImageEnhance on PIL images, blends on tensors."""
    pil_fn, tensor_fn = getattr(F_pil, name), getattr(F_t, name)

    def adjust(img, factor):
        if not isinstance(img, Tensor):
            return pil_fn(img, factor)
        return tensor_fn(img, factor)
    adjust.__name__ = adjust.__qualname__ = name
    return adjust


adjust_brightness = _color("adjust_brightness")
adjust_brightness.__doc__ = """Multiply by `brightness_factor` (0 black, 1 unchanged), clamped to the range."""
adjust_contrast = _color("adjust_contrast")
adjust_contrast.__doc__ = """Blend with the image's mean gray: 0 solid gray, 1 unchanged, 2 twice the contrast."""
adjust_saturation = _color("adjust_saturation")
adjust_saturation.__doc__ = """Blend with the grayscale image: 0 gray, 1 unchanged, 2 twice as saturated."""
adjust_hue = _color("adjust_hue")
adjust_hue.__doc__ = """Rotate the hue by `hue_factor` turns, in [-0.5, 0.5]."""


def to_grayscale(img, num_output_channels=1):
    """PIL images only: convert to 'L' (one channel) or to three equal channels."""
    if not F_pil._is_pil_image(img):
        raise TypeError("Input should be PIL Image")
    return F_pil.to_grayscale(img, num_output_channels)


def rgb_to_grayscale(img, num_output_channels=1):
    """RGB -> luma (0.2989 R + 0.587 G + 0.114 B), with 1 or 3 output channels."""
    if not isinstance(img, Tensor):
        return F_pil.to_grayscale(img, num_output_channels)
    return F_t.rgb_to_grayscale(img, num_output_channels)
