"""torchvision.transforms: the classes a data pipeline composes (``Compose([Resize(32), ToTensor()])``).

Each transform is a callable (most are ``nn.Module`` s, as in torchvision) that takes a PIL image or a
tensor image (..., C, H, W) and returns the same kind. The random ones draw their parameters from
glasstorch's global generator (``torch.manual_seed`` makes a pipeline repeatable; the values drawn are
not torch's for the same seed, see README) and then call ``functional``.
"""
import math
import numbers
import warnings
from collections.abc import Sequence

import glasstorch as torch
from glasstorch import nn

from . import functional as F
from .functional import InterpolationMode, _interpolation_modes_from_int

__all__ = ["Compose", "ToTensor", "PILToTensor", "ConvertImageDtype", "ToPILImage", "Normalize", "Resize",
           "CenterCrop", "Pad", "Lambda", "RandomApply", "RandomCrop", "RandomHorizontalFlip", "RandomVerticalFlip",
           "RandomResizedCrop", "ColorJitter", "Grayscale", "RandomGrayscale", "InterpolationMode"]


def _listing(name, items, first=""):
    """The multi-line repr torchvision gives containers: Name(\\n    item\\n    item\\n)."""
    return name + "(" + first + "".join(f"\n    {t}" for t in items) + "\n)"


class Compose:
    """Apply `transforms` one after the other."""

    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        return _listing(type(self).__name__, self.transforms)


class ToTensor:
    """PIL image or (H, W, C) ndarray -> (C, H, W) float tensor in [0, 1] (uint8 data is divided by 255)."""

    def __call__(self, pic):
        return F.to_tensor(pic)

    def __repr__(self):
        return f"{type(self).__name__}()"


class PILToTensor:
    """PIL image -> (C, H, W) tensor of the same dtype (no scaling)."""

    def __call__(self, pic):
        return F.pil_to_tensor(pic)

    def __repr__(self):
        return f"{type(self).__name__}()"


class ConvertImageDtype(nn.Module):
    """Convert a tensor image to `dtype`, rescaling the values."""

    def __init__(self, dtype):
        super().__init__()
        self.dtype = dtype

    def forward(self, image):
        return F.convert_image_dtype(image, self.dtype)


class ToPILImage:
    """(C, H, W) tensor or (H, W, C) ndarray -> PIL image (`mode` inferred from channels and dtype)."""

    def __init__(self, mode=None):
        self.mode = mode

    def __call__(self, pic):
        return F.to_pil_image(pic, self.mode)

    def __repr__(self):
        return f"{type(self).__name__}(" + (f"mode={self.mode}" if self.mode is not None else "") + ")"


class Normalize(nn.Module):
    """output[c] = (input[c] - mean[c]) / std[c] on a float tensor image."""

    def __init__(self, mean, std, inplace=False):
        super().__init__()
        self.mean = mean
        self.std = std
        self.inplace = inplace

    def forward(self, tensor):
        return F.normalize(tensor, self.mean, self.std, self.inplace)

    def __repr__(self):
        return f"{type(self).__name__}(mean={self.mean}, std={self.std})"


class Resize(nn.Module):
    """Resize to `size`: (h, w), or an int for the shorter side (aspect ratio kept)."""

    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
        super().__init__()
        if not isinstance(size, (int, Sequence)):
            raise TypeError(f"Size should be int or sequence. Got {type(size)}")
        if isinstance(size, Sequence) and len(size) not in (1, 2):
            raise ValueError("If size is a sequence, it should have 1 or 2 values")
        self.size = size
        self.max_size = max_size
        if isinstance(interpolation, int):
            interpolation = _interpolation_modes_from_int(interpolation)
        self.interpolation = interpolation
        self.antialias = antialias

    def forward(self, img):
        return F.resize(img, self.size, self.interpolation, self.max_size, self.antialias)

    def __repr__(self):
        return (f"{type(self).__name__}(size={self.size}, interpolation={self.interpolation.value}, "
                f"max_size={self.max_size}, antialias={self.antialias})")


def _setup_size(size, error_msg):
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if isinstance(size, Sequence) and len(size) == 1:
        return size[0], size[0]
    if len(size) != 2:
        raise ValueError(error_msg)
    return size


_SIZE_ERROR = "Please provide only two dimensions (h, w) for size."


class CenterCrop(nn.Module):
    """Crop the central (h, w) box (an int gives a square)."""

    def __init__(self, size):
        super().__init__()
        self.size = _setup_size(size, error_msg=_SIZE_ERROR)

    def forward(self, img):
        return F.center_crop(img, self.size)

    def __repr__(self):
        return f"{type(self).__name__}(size={self.size})"


def _check_padding(padding, fill, padding_mode):
    if not isinstance(padding, (numbers.Number, tuple, list)):
        raise TypeError("Got inappropriate padding arg")
    if not isinstance(fill, (numbers.Number, tuple, list)):
        raise TypeError("Got inappropriate fill arg")
    if padding_mode not in ["constant", "edge", "reflect", "symmetric"]:
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    if isinstance(padding, Sequence) and len(padding) not in [1, 2, 4]:
        raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a {len(padding)} element tuple")


class Pad(nn.Module):
    """Pad the sides: `padding` one number, (left/right, top/bottom) or (left, top, right, bottom)."""

    def __init__(self, padding, fill=0, padding_mode="constant"):
        super().__init__()
        _check_padding(padding, fill, padding_mode)
        self.padding = padding
        self.fill = fill
        self.padding_mode = padding_mode

    def forward(self, img):
        return F.pad(img, self.padding, self.fill, self.padding_mode)

    def __repr__(self):
        return f"{type(self).__name__}(padding={self.padding}, fill={self.fill}, padding_mode={self.padding_mode})"


class Lambda:
    """Apply a user function as a transform."""

    def __init__(self, lambd):
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {repr(type(lambd).__name__)}")
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)

    def __repr__(self):
        return f"{type(self).__name__}()"


class RandomApply(nn.Module):
    """Apply the list of `transforms` with probability `p`."""

    def __init__(self, transforms, p=0.5):
        super().__init__()
        self.transforms = transforms
        self.p = p

    def forward(self, img):
        if self.p < torch.rand(1):
            return img
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        return _listing(type(self).__name__, self.transforms, first=f"\n    p={self.p}")


class RandomCrop(nn.Module):
    """Crop a (h, w) box at a random place, after optional padding."""

    @staticmethod
    def get_params(img, output_size):
        """(top, left, h, w) of a random crop of `output_size`."""
        _, h, w = F.get_dimensions(img)
        th, tw = output_size
        if h < th or w < tw:
            raise ValueError(f"Required crop size {(th, tw)} is larger than input image size {(h, w)}")
        if w == tw and h == th:
            return 0, 0, h, w
        i = torch.randint(0, h - th + 1, size=(1,)).item()
        j = torch.randint(0, w - tw + 1, size=(1,)).item()
        return i, j, th, tw

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant"):
        super().__init__()
        self.size = tuple(_setup_size(size, error_msg=_SIZE_ERROR))
        self.padding = padding
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        self.padding_mode = padding_mode

    def forward(self, img):
        if self.padding is not None:
            img = F.pad(img, self.padding, self.fill, self.padding_mode)
        _, height, width = F.get_dimensions(img)
        if self.pad_if_needed and width < self.size[1]:
            img = F.pad(img, [self.size[1] - width, 0], self.fill, self.padding_mode)
        if self.pad_if_needed and height < self.size[0]:
            img = F.pad(img, [0, self.size[0] - height], self.fill, self.padding_mode)
        i, j, h, w = self.get_params(img, self.size)
        return F.crop(img, i, j, h, w)

    def __repr__(self):
        return f"{type(self).__name__}(size={self.size}, padding={self.padding})"


class _RandomFlip(nn.Module):
    _flip = None

    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, img):
        if torch.rand(1) < self.p:
            return type(self)._flip(img)
        return img

    def __repr__(self):
        return f"{type(self).__name__}(p={self.p})"


class RandomHorizontalFlip(_RandomFlip):
    """Mirror left-right with probability `p`."""
    _flip = staticmethod(F.hflip)


class RandomVerticalFlip(_RandomFlip):
    """Mirror top-bottom with probability `p`."""
    _flip = staticmethod(F.vflip)


class RandomResizedCrop(nn.Module):
    """Crop a random box (area a `scale` fraction of the image, aspect ratio in `ratio`, log-uniform)
    and resize it to `size` -- the Inception-style augmentation."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0),
                 interpolation=InterpolationMode.BILINEAR, antialias=True):
        super().__init__()
        self.size = _setup_size(size, error_msg=_SIZE_ERROR)
        if not isinstance(scale, Sequence):
            raise TypeError("Scale should be a sequence")
        if not isinstance(ratio, Sequence):
            raise TypeError("Ratio should be a sequence")
        if (scale[0] > scale[1]) or (ratio[0] > ratio[1]):
            warnings.warn("Scale and ratio should be of kind (min, max)")
        if isinstance(interpolation, int):
            interpolation = _interpolation_modes_from_int(interpolation)
        self.interpolation = interpolation
        self.antialias = antialias
        self.scale = scale
        self.ratio = ratio

    @staticmethod
    def get_params(img, scale, ratio):
        """(top, left, h, w): ten tries at a random box that fits, else the central crop closest to `ratio`."""
        _, height, width = F.get_dimensions(img)
        area = height * width
        log_ratio = torch.log(torch.tensor(ratio))
        for _ in range(10):
            target_area = area * torch.empty(1).uniform_(scale[0], scale[1]).item()
            aspect_ratio = torch.exp(torch.empty(1).uniform_(log_ratio[0], log_ratio[1])).item()
            w = int(round(math.sqrt(target_area * aspect_ratio)))
            h = int(round(math.sqrt(target_area / aspect_ratio)))
            if 0 < w <= width and 0 < h <= height:
                i = torch.randint(0, height - h + 1, size=(1,)).item()
                j = torch.randint(0, width - w + 1, size=(1,)).item()
                return i, j, h, w
        in_ratio = float(width) / float(height)
        if in_ratio < min(ratio):
            w = width
            h = int(round(w / min(ratio)))
        elif in_ratio > max(ratio):
            h = height
            w = int(round(h * max(ratio)))
        else:
            w, h = width, height
        return (height - h) // 2, (width - w) // 2, h, w

    def forward(self, img):
        i, j, h, w = self.get_params(img, self.scale, self.ratio)
        return F.resized_crop(img, i, j, h, w, self.size, self.interpolation, antialias=self.antialias)

    def __repr__(self):
        return (f"{type(self).__name__}(size={self.size}, scale={tuple(round(s, 4) for s in self.scale)}, "
                f"ratio={tuple(round(r, 4) for r in self.ratio)}, interpolation={self.interpolation.value}, "
                f"antialias={self.antialias})")


class ColorJitter(nn.Module):
    """Change brightness, contrast, saturation and hue by random factors, in a random order.

    Each argument is a spread around "unchanged" (a number x gives [max(0, 1 - x), 1 + x]; hue x gives
    [-x, x]) or an explicit (min, max)."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        super().__init__()
        self.brightness = self._check_input(brightness, "brightness")
        self.contrast = self._check_input(contrast, "contrast")
        self.saturation = self._check_input(saturation, "saturation")
        self.hue = self._check_input(hue, "hue", center=0, bound=(-0.5, 0.5), clip_first_on_zero=False)

    @staticmethod
    def _check_input(value, name, center=1, bound=(0, float("inf")), clip_first_on_zero=True):
        if isinstance(value, numbers.Number):
            if value < 0:
                raise ValueError(f"If {name} is a single number, it must be non negative.")
            value = [center - float(value), center + float(value)]
            if clip_first_on_zero:
                value[0] = max(value[0], 0.0)
        elif isinstance(value, (tuple, list)) and len(value) == 2:
            value = [float(value[0]), float(value[1])]
        else:
            raise TypeError(f"{name} should be a single number or a list/tuple with length 2.")
        if not bound[0] <= value[0] <= value[1] <= bound[1]:
            raise ValueError(f"{name} values should be between {bound}, but got {value}.")
        if value[0] == value[1] == center:
            return None
        return tuple(value)

    @staticmethod
    def get_params(brightness, contrast, saturation, hue):
        """(order of the four adjustments, and each factor or None)."""
        fn_idx = torch.randperm(4)
        b = None if brightness is None else float(torch.empty(1).uniform_(brightness[0], brightness[1]))
        c = None if contrast is None else float(torch.empty(1).uniform_(contrast[0], contrast[1]))
        s = None if saturation is None else float(torch.empty(1).uniform_(saturation[0], saturation[1]))
        h = None if hue is None else float(torch.empty(1).uniform_(hue[0], hue[1]))
        return fn_idx, b, c, s, h

    def forward(self, img):
        fn_idx, b, c, s, h = self.get_params(self.brightness, self.contrast, self.saturation, self.hue)
        return _jitter(img, fn_idx, b, c, s, h, F)

    def __repr__(self):
        return (f"{type(self).__name__}(brightness={self.brightness}, contrast={self.contrast}, "
                f"saturation={self.saturation}, hue={self.hue})")


def _jitter(img, fn_idx, brightness, contrast, saturation, hue, functional):
    """Apply the color adjustments whose factor is not None, in the order `fn_idx` gives."""
    steps = ((functional.adjust_brightness, brightness), (functional.adjust_contrast, contrast),
             (functional.adjust_saturation, saturation), (functional.adjust_hue, hue))
    for fn_id in fn_idx:
        adjust, factor = steps[int(fn_id)]
        if factor is not None:
            img = adjust(img, factor)
    return img


class Grayscale(nn.Module):
    """Convert to grayscale with 1 or 3 output channels."""

    def __init__(self, num_output_channels=1):
        super().__init__()
        self.num_output_channels = num_output_channels

    def forward(self, img):
        return F.rgb_to_grayscale(img, num_output_channels=self.num_output_channels)

    def __repr__(self):
        return f"{type(self).__name__}(num_output_channels={self.num_output_channels})"


class RandomGrayscale(nn.Module):
    """Convert to grayscale (keeping the channel count) with probability `p`."""

    def __init__(self, p=0.1):
        super().__init__()
        self.p = p

    def forward(self, img):
        num_output_channels, _, _ = F.get_dimensions(img)
        if torch.rand(1) < self.p:
            return F.rgb_to_grayscale(img, num_output_channels=num_output_channels)
        return img

    def __repr__(self):
        return f"{type(self).__name__}(p={self.p})"
