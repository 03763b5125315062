"""The PIL side of torchvision.transforms.functional: each function is Pillow's own operation, as in
torchvision, so results on PIL images are torchvision's exactly. Pillow is imported on first use."""
import numbers

import numpy as np

from .. import _pil


def _is_pil_image(img):
    return _pil.is_pil_image(img)


def _check(img):
    if not _pil.is_pil_image(img):
        raise TypeError(f"img should be PIL Image. Got {type(img)}")


def get_dimensions(img):
    if _pil.is_pil_image(img):
        width, height = img.size
        return [len(img.getbands()), height, width]
    raise TypeError(f"Unexpected type {type(img)}")


def get_image_size(img):
    if _pil.is_pil_image(img):
        return list(img.size)
    raise TypeError(f"Unexpected type {type(img)}")


def get_image_num_channels(img):
    if _pil.is_pil_image(img):
        return len(img.getbands())
    raise TypeError(f"Unexpected type {type(img)}")


def hflip(img):
    _check(img)
    return img.transpose(_pil.require("hflip").FLIP_LEFT_RIGHT)


def vflip(img):
    _check(img)
    return img.transpose(_pil.require("vflip").FLIP_TOP_BOTTOM)


def _enhance(img, enhancer_name, factor):
    _check(img)
    from PIL import ImageEnhance
    return getattr(ImageEnhance, enhancer_name)(img).enhance(factor)


def adjust_brightness(img, brightness_factor):
    return _enhance(img, "Brightness", brightness_factor)


def adjust_contrast(img, contrast_factor):
    return _enhance(img, "Contrast", contrast_factor)


def adjust_saturation(img, saturation_factor):
    return _enhance(img, "Color", saturation_factor)


def adjust_hue(img, hue_factor):
    """Shift the H channel of Pillow's HSV by hue_factor * 255, wrapping around (uint8 overflow)."""
    if not (-0.5 <= hue_factor <= 0.5):
        raise ValueError(f"hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    _check(img)
    Image = _pil.require("adjust_hue")
    input_mode = img.mode
    if input_mode in {"L", "1", "I", "F"}:
        return img
    h, s, v = img.convert("HSV").split()
    np_h = np.array(h, dtype=np.uint8)
    np_h += np.int32(hue_factor * 255).astype(np.uint8)  # wraps around, as intended
    h = _pil.fromarray(np_h, "L")
    return Image.merge("HSV", (h, s, v)).convert(input_mode)


def _parse_fill(fill, img, name="fillcolor"):
    """A fill value in the form Pillow wants for this image's mode (a tuple per band, ints unless 'F')."""
    num_channels = get_image_num_channels(img)
    if fill is None:
        fill = 0
    if isinstance(fill, (int, float)) and num_channels > 1:
        fill = tuple([fill] * num_channels)
    if isinstance(fill, (list, tuple)):
        if len(fill) == 1:
            fill = fill * num_channels
        elif len(fill) != num_channels:
            raise ValueError("The number of elements in 'fill' does not match the number of channels of the image "
                             f"({len(fill)} != {num_channels})")
        fill = tuple(fill)
    if img.mode != "F":
        fill = tuple(int(x) for x in fill) if isinstance(fill, (list, tuple)) else int(fill)
    return {name: fill}


def pad(img, padding, fill=0, padding_mode="constant"):
    _check(img)
    if not isinstance(padding, (numbers.Number, tuple, list)):
        raise TypeError("Got inappropriate padding arg")
    if fill is not None and not isinstance(fill, (numbers.Number, tuple, list)):
        raise TypeError("Got inappropriate fill arg")
    if not isinstance(padding_mode, str):
        raise TypeError("Got inappropriate padding_mode arg")
    if isinstance(padding, list):
        padding = tuple(padding)
    if isinstance(padding, tuple) and len(padding) not in [1, 2, 4]:
        raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a {len(padding)} element tuple")
    if isinstance(padding, tuple) and len(padding) == 1:
        padding = padding[0]
    if padding_mode not in ["constant", "edge", "reflect", "symmetric"]:
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    Image = _pil.require("pad")
    if padding_mode == "constant":
        from PIL import ImageOps
        opts = _parse_fill(fill, img, name="fill")
        if img.mode == "P":
            palette = img.getpalette()
            image = ImageOps.expand(img, border=padding, **opts)
            image.putpalette(palette)
            return image
        return ImageOps.expand(img, border=padding, **opts)
    if isinstance(padding, int):
        pad_left = pad_right = pad_top = pad_bottom = padding
    elif len(padding) == 2:
        pad_left = pad_right = padding[0]
        pad_top = pad_bottom = padding[1]
    else:
        pad_left, pad_top, pad_right, pad_bottom = padding
    p = [pad_left, pad_top, pad_right, pad_bottom]
    cropping = -np.minimum(p, 0)
    if cropping.any():
        crop_left, crop_top, crop_right, crop_bottom = cropping
        img = img.crop((crop_left, crop_top, img.width - crop_right, img.height - crop_bottom))
    pad_left, pad_top, pad_right, pad_bottom = np.maximum(p, 0)
    palette = img.getpalette() if img.mode == "P" else None
    array = np.asarray(img)
    widths = ((pad_top, pad_bottom), (pad_left, pad_right)) + (((0, 0),) if array.ndim == 3 else ())
    image = Image.fromarray(np.pad(array, widths, mode=padding_mode))
    if palette is not None:
        image.putpalette(palette)
    return image


def crop(img, top, left, height, width):
    _check(img)
    return img.crop((left, top, left + width, top + height))


def resize(img, size, interpolation=2):
    _check(img)
    if not (isinstance(size, list) and len(size) == 2):
        raise TypeError(f"Got inappropriate size arg: {size}")
    return img.resize(tuple(size[::-1]), interpolation)


def to_grayscale(img, num_output_channels):
    _check(img)
    if num_output_channels == 1:
        return img.convert("L")
    if num_output_channels == 3:
        np_img = np.array(img.convert("L"), dtype=np.uint8)
        return _pil.fromarray(np.dstack([np_img, np_img, np_img]), "RGB")
    raise ValueError("num_output_channels should be either 1 or 3")
