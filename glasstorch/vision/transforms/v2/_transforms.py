"""The v2 transform classes (torchvision keeps them in _container, _geometry, _color, _misc and
_type_conversion; they are one file here). Each draws its parameters in ``make_params`` and applies
a v2 functional in ``transform``; see ``_transform.Transform`` for how a sample is walked."""
import collections.abc
import numbers
import warnings
from collections.abc import Sequence

import numpy as np

import glasstorch as torch
from glasstorch import Tensor

from ...tv_tensors import Image, TVTensor, as_subclass
from .. import functional as _F_v1
from ..transforms import _jitter, _setup_size, _SIZE_ERROR
from . import functional as F
from ._transform import Transform, _RandomApplyTransform, has_any, is_pure_tensor, query_chw, query_size, _is_pil


class Compose(Transform):
    """Apply the transforms in order; a multi-argument call passes the whole sample along."""

    def __init__(self, transforms):
        super().__init__()
        if not isinstance(transforms, Sequence):
            raise TypeError("Argument transforms should be a sequence of callables")
        if not transforms:
            raise ValueError("Pass at least one transform")
        self.transforms = transforms

    def forward(self, *inputs):
        needs_unpacking = len(inputs) > 1
        for transform in self.transforms:
            outputs = transform(*inputs)
            inputs = outputs if needs_unpacking else (outputs,)
        return outputs

    def extra_repr(self):
        return "\n".join(f"    {t}" for t in self.transforms)


class RandomApply(Transform):
    """Apply the list of transforms with probability `p`."""

    def __init__(self, transforms, p=0.5):
        super().__init__()
        if not isinstance(transforms, Sequence):
            raise TypeError("Argument transforms should be a sequence of callables or a `nn.ModuleList`")
        if not transforms:
            raise ValueError("Pass at least one transform")
        if not (0.0 <= p <= 1.0):
            raise ValueError("`p` should be a floating point value in the interval [0.0, 1.0].")
        self.transforms = transforms
        self.p = p

    def forward(self, *inputs):
        needs_unpacking = len(inputs) > 1
        if torch.rand(1) >= self.p:
            return inputs if needs_unpacking else inputs[0]
        for transform in self.transforms:
            outputs = transform(*inputs)
            inputs = outputs if needs_unpacking else (outputs,)
        return outputs

    def extra_repr(self):
        return "\n".join(f"    {t}" for t in self.transforms)


# -- type conversion -------------------------------------------------------------------------------------

class PILToTensor(Transform):
    """PIL image -> plain (C, H, W) tensor, dtype kept."""
    _transformed_types = (_is_pil,)

    def transform(self, inpt, params):
        return F.pil_to_tensor(inpt)


class ToImage(Transform):
    """PIL image, ndarray or plain tensor -> ``tv_tensors.Image``, dtype kept (uint8 stays uint8)."""
    _transformed_types = (is_pure_tensor, _is_pil, np.ndarray)

    def transform(self, inpt, params):
        return F.to_image(inpt)


class ToPILImage(Transform):
    """Tensor, Image or ndarray -> PIL image."""
    _transformed_types = (is_pure_tensor, Image, np.ndarray)

    def __init__(self, mode=None):
        super().__init__()
        self.mode = mode

    def transform(self, inpt, params):
        return F.to_pil_image(inpt, mode=self.mode)


class ToPureTensor(Transform):
    """tv_tensors -> plain tensors (same data)."""
    _transformed_types = (TVTensor,)

    def transform(self, inpt, params):
        return as_subclass(inpt, Tensor)


class ToTensor(Transform):
    """Deprecated in v2 (as in torchvision): v1's ToTensor, with a warning."""
    _transformed_types = (_is_pil, np.ndarray)

    def __init__(self):
        warnings.warn("The transform `ToTensor()` is deprecated and will be removed in a future release. Instead, "
                      "please use `v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])`.Output is "
                      "equivalent up to float precision.")
        super().__init__()

    def transform(self, inpt, params):
        return _F_v1.to_tensor(inpt)


class ToDtype(Transform):
    """Convert images (and plain tensors) to `dtype`; ``scale=True`` also rescales the value range.
    `dtype` may be a dict {type: dtype} (key "others" for the rest)."""
    _transformed_types = (Tensor,)

    def __init__(self, dtype, scale=False):
        super().__init__()
        if not isinstance(dtype, (dict, torch.dtype)):
            raise ValueError(f"dtype must be a dict or a torch.dtype, got {type(dtype)} instead")
        if isinstance(dtype, dict) and Tensor in dtype and Image in dtype:
            warnings.warn("Got `dtype` values for `torch.Tensor` and either `tv_tensors.Image` or `tv_tensors.Video`. "
                          "Note that a plain `torch.Tensor` will *not* be transformed by this (or any other "
                          "transformation) in case a `tv_tensors.Image` or `tv_tensors.Video` is present in the "
                          "input.")
        self.dtype = dtype
        self.scale = scale

    def transform(self, inpt, params):
        if isinstance(self.dtype, torch.dtype):
            if not is_pure_tensor(inpt) and not isinstance(inpt, Image):
                return inpt
            dtype = self.dtype
        elif type(inpt) in self.dtype:
            dtype = self.dtype[type(inpt)]
        elif "others" in self.dtype:
            dtype = self.dtype["others"]
        else:
            raise ValueError(f"No dtype was specified for type {type(inpt)}. If you only need to convert the dtype of "
                             f"images or videos, you can just pass e.g. dtype=torch.float32. If you're passing a dict "
                             f"as dtype, you can use \"others\" as a catch-all key e.g. dtype={{tv_tensors.Mask: "
                             f"torch.int64, \"others\": None}} to pass-through the rest of the inputs.")
        if dtype is None:
            if self.scale and (is_pure_tensor(inpt) or isinstance(inpt, Image)):
                warnings.warn("scale was set to True but no dtype was specified for images or videos: no scaling "
                              "will be done.")
            return inpt
        return self._call_kernel(F.to_dtype, inpt, dtype=dtype, scale=self.scale)


class ConvertImageDtype(Transform):
    """to_dtype(scale=True)."""

    def __init__(self, dtype=torch.float32):
        super().__init__()
        self.dtype = dtype

    def transform(self, inpt, params):
        return self._call_kernel(F.to_dtype, inpt, dtype=self.dtype, scale=True)


# -- misc ------------------------------------------------------------------------------------------------

class Normalize(Transform):
    """(image - mean[c]) / std[c] on float images; PIL images are refused."""

    def __init__(self, mean, std, inplace=False):
        super().__init__()
        self.mean = list(mean)
        self.std = list(std)
        self.inplace = inplace

    def check_inputs(self, sample):
        if has_any(sample, _is_pil):
            raise TypeError(f"{type(self).__name__}() does not support PIL images.")

    def transform(self, inpt, params):
        return self._call_kernel(F.normalize, inpt, mean=self.mean, std=self.std, inplace=self.inplace)


class Lambda(Transform):
    """Apply `lambd` to every leaf of the given `types` (default: every leaf)."""
    _transformed_types = (object,)

    def __init__(self, lambd, *types):
        super().__init__()
        self.lambd = lambd
        self.types = types or self._transformed_types

    def transform(self, inpt, params):
        return self.lambd(inpt) if isinstance(inpt, self.types) else inpt

    def extra_repr(self):
        extras = []
        name = getattr(self.lambd, "__name__", None)
        if name:
            extras.append(name)
        extras.append(f"types={[t.__name__ for t in self.types]}")
        return ", ".join(extras)


# -- geometry --------------------------------------------------------------------------------------------

class RandomHorizontalFlip(_RandomApplyTransform):
    """Mirror left-right with probability `p` (every image of the sample together)."""

    def transform(self, inpt, params):
        return self._call_kernel(F.horizontal_flip, inpt)


class RandomVerticalFlip(_RandomApplyTransform):
    """Mirror top-bottom with probability `p`."""

    def transform(self, inpt, params):
        return self._call_kernel(F.vertical_flip, inpt)


class Resize(Transform):
    """Resize to `size` ((h, w), or the shorter side), optionally capping the longer side at `max_size`."""

    def __init__(self, size, interpolation="bilinear", max_size=None, antialias=True):
        super().__init__()
        if isinstance(size, int):
            size = [size]
        elif isinstance(size, Sequence) and len(size) in {1, 2}:
            size = list(size)
        elif size is None:
            if not isinstance(max_size, int):
                raise ValueError(f"max_size must be an integer when size is None, but got {max_size} instead.")
        else:
            raise ValueError(f"size can be an integer, a sequence of one or two integers, or None, but got {size} "
                             f"instead.")
        self.size = size
        self.interpolation = interpolation
        self.max_size = max_size
        self.antialias = antialias

    def transform(self, inpt, params):
        return self._call_kernel(F.resize, inpt, self.size, interpolation=self.interpolation,
                                 max_size=self.max_size, antialias=self.antialias)


class CenterCrop(Transform):
    """Crop the central (h, w) box."""

    def __init__(self, size):
        super().__init__()
        self.size = _setup_size(size, error_msg=_SIZE_ERROR)

    def transform(self, inpt, params):
        return self._call_kernel(F.center_crop, inpt, output_size=self.size)


class RandomResizedCrop(Transform):
    """Crop a random box (area fraction in `scale`, log-uniform aspect ratio in `ratio`), resize to `size`."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation="bilinear",
                 antialias=True):
        super().__init__()
        self.size = _setup_size(size, error_msg=_SIZE_ERROR)
        if not isinstance(scale, Sequence) or len(scale) != 2:
            raise TypeError("Scale should be a sequence of two floats.")
        if not isinstance(ratio, Sequence) or len(ratio) != 2:
            raise TypeError("Ratio should be a sequence of two floats.")
        if (scale[0] > scale[1]) or (ratio[0] > ratio[1]):
            warnings.warn("Scale and ratio should be of kind (min, max)")
        self.scale = scale
        self.ratio = ratio
        self.interpolation = interpolation
        self.antialias = antialias

    def make_params(self, flat_inputs):
        height, width = query_size(flat_inputs)
        top, left, h, w = _resized_crop_box(height, width, self.scale, self.ratio)
        return dict(top=top, left=left, height=h, width=w)

    def transform(self, inpt, params):
        return self._call_kernel(F.resized_crop, inpt, **params, size=self.size, interpolation=self.interpolation,
                                 antialias=self.antialias)


def _resized_crop_box(height, width, scale, ratio):
    """v1's RandomResizedCrop.get_params on a (height, width) canvas."""
    from ..transforms import RandomResizedCrop as _V1
    return _V1.get_params(torch.empty(0, height, width), scale, ratio)


def _check_padding_arg(padding):
    if not isinstance(padding, (numbers.Number, tuple, list)):
        raise TypeError("Got inappropriate padding arg")
    if isinstance(padding, (tuple, list)) and len(padding) not in [1, 2, 4]:
        raise ValueError(f"Padding must be an int or a 1, 2, or 4 element sequence, not a {len(padding)} element "
                         f"sequence")


def _check_padding_mode_arg(padding_mode):
    if padding_mode not in ["constant", "edge", "reflect", "symmetric"]:
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")


def _fill_for(fill, inpt):
    """`fill` may be a dict {type: value}; pick the value for this leaf's type."""
    if isinstance(fill, dict):
        for cls in type(inpt).__mro__:
            if cls in fill:
                return fill[cls]
        return fill.get("others", 0)
    return fill


class Pad(Transform):
    """Pad the sides: `padding` one number, (left/right, top/bottom) or (left, top, right, bottom)."""

    def __init__(self, padding, fill=0, padding_mode="constant"):
        super().__init__()
        _check_padding_arg(padding)
        _check_padding_mode_arg(padding_mode)
        self.padding = padding if isinstance(padding, int) else list(padding)
        self.fill = fill
        self.padding_mode = padding_mode

    def transform(self, inpt, params):
        return self._call_kernel(F.pad, inpt, padding=self.padding, fill=_fill_for(self.fill, inpt),
                                 padding_mode=self.padding_mode)


class RandomCrop(Transform):
    """Crop a (h, w) box at a random place, after optional padding (``pad_if_needed`` pads a too-small
    image on both sides)."""

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant"):
        super().__init__()
        self.size = _setup_size(size, error_msg=_SIZE_ERROR)
        if pad_if_needed or padding is not None:
            if padding is not None:
                _check_padding_arg(padding)
            _check_padding_mode_arg(padding_mode)
        self.padding = F._parse_pad_padding(padding) if padding else None
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        self.padding_mode = padding_mode

    def make_params(self, flat_inputs):
        padded_height, padded_width = query_size(flat_inputs)
        if self.padding is not None:
            pad_left, pad_right, pad_top, pad_bottom = self.padding
            padded_height += pad_top + pad_bottom
            padded_width += pad_left + pad_right
        else:
            pad_left = pad_right = pad_top = pad_bottom = 0
        cropped_height, cropped_width = self.size
        if self.pad_if_needed:
            if padded_height < cropped_height:
                diff = cropped_height - padded_height
                pad_top += diff
                pad_bottom += diff
                padded_height += 2 * diff
            if padded_width < cropped_width:
                diff = cropped_width - padded_width
                pad_left += diff
                pad_right += diff
                padded_width += 2 * diff
        if padded_height < cropped_height or padded_width < cropped_width:
            raise ValueError(f"Required crop size {(cropped_height, cropped_width)} is larger than "
                             f"{'padded ' if self.padding is not None else ''}input image size "
                             f"{(padded_height, padded_width)}.")
        padding = [pad_left, pad_top, pad_right, pad_bottom]
        top = int(torch.randint(0, padded_height - cropped_height + 1, size=())) \
            if padded_height > cropped_height else 0
        left = int(torch.randint(0, padded_width - cropped_width + 1, size=())) if padded_width > cropped_width else 0
        return dict(needs_crop=padded_height > cropped_height or padded_width > cropped_width, top=top, left=left,
                    height=cropped_height, width=cropped_width, needs_pad=any(padding), padding=padding)

    def transform(self, inpt, params):
        if params["needs_pad"]:
            inpt = self._call_kernel(F.pad, inpt, padding=params["padding"], fill=_fill_for(self.fill, inpt),
                                     padding_mode=self.padding_mode)
        if params["needs_crop"]:
            inpt = self._call_kernel(F.crop, inpt, top=params["top"], left=params["left"], height=params["height"],
                                     width=params["width"])
        return inpt


# -- color -----------------------------------------------------------------------------------------------

class Grayscale(Transform):
    """Convert to grayscale with 1 or 3 output channels."""

    def __init__(self, num_output_channels=1):
        super().__init__()
        self.num_output_channels = num_output_channels

    def transform(self, inpt, params):
        return self._call_kernel(F.rgb_to_grayscale, inpt, num_output_channels=self.num_output_channels)


class RandomGrayscale(_RandomApplyTransform):
    """Convert to grayscale, keeping the channel count, with probability `p`."""

    def __init__(self, p=0.1):
        super().__init__(p=p)

    def make_params(self, flat_inputs):
        num_input_channels, *_ = query_chw(flat_inputs)
        return dict(num_input_channels=num_input_channels)

    def transform(self, inpt, params):
        return self._call_kernel(F.rgb_to_grayscale, inpt, num_output_channels=params["num_input_channels"])


class ColorJitter(Transform):
    """Random brightness, contrast, saturation and hue changes, in a random order (v1's, with None
    for "leave alone")."""

    def __init__(self, brightness=None, contrast=None, saturation=None, hue=None):
        super().__init__()
        self.brightness = self._check_input(brightness, "brightness")
        self.contrast = self._check_input(contrast, "contrast")
        self.saturation = self._check_input(saturation, "saturation")
        self.hue = self._check_input(hue, "hue", center=0, bound=(-0.5, 0.5), clip_first_on_zero=False)

    @staticmethod
    def _check_input(value, name, center=1.0, bound=(0, float("inf")), clip_first_on_zero=True):
        if value is None:
            return None
        if isinstance(value, (int, float)):
            if value < 0:
                raise ValueError(f"If {name} is a single number, it must be non negative.")
            value = [center - value, center + value]
            if clip_first_on_zero:
                value[0] = max(value[0], 0.0)
        elif isinstance(value, collections.abc.Sequence) and len(value) == 2:
            value = [float(v) for v in value]
        else:
            raise TypeError(f"{name}={value} should be a single number or a sequence with length 2.")
        if not bound[0] <= value[0] <= value[1] <= bound[1]:
            raise ValueError(f"{name} values should be between {bound} and increasing, but got {value}.")
        return None if value[0] == value[1] == center else (float(value[0]), float(value[1]))

    def make_params(self, flat_inputs):
        from ..transforms import ColorJitter as _V1
        fn_idx, b, c, s, h = _V1.get_params(self.brightness, self.contrast, self.saturation, self.hue)
        return dict(fn_idx=fn_idx, brightness_factor=b, contrast_factor=c, saturation_factor=s, hue_factor=h)

    def transform(self, inpt, params):
        if not (isinstance(inpt, Tensor) or _is_pil(inpt)):
            return inpt
        return _jitter(inpt, params["fn_idx"], params["brightness_factor"], params["contrast_factor"],
                       params["saturation_factor"], params["hue_factor"], F)
