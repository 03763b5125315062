"""torchvision.io.image: ``read_image``, ``decode_image`` and ``ImageReadMode``
(through Pillow, where torchvision uses its own libjpeg/libpng decoders: JPEG pixels may differ by a
gray level or so between decoders)."""
from enum import Enum

import numpy as np

import glasstorch as torch

from .. import _pil

__all__ = ["ImageReadMode", "decode_image", "read_file", "read_image"]


class ImageReadMode(Enum):
    """What to convert a decoded image to: keep it (UNCHANGED), GRAY, GRAY_ALPHA, RGB, RGB_ALPHA."""
    UNCHANGED = 0
    GRAY = 1
    GRAY_ALPHA = 2
    RGB = 3
    RGB_ALPHA = 4
    RGBA = RGB_ALPHA


_PIL_MODES = {ImageReadMode.GRAY: "L", ImageReadMode.GRAY_ALPHA: "LA", ImageReadMode.RGB: "RGB",
              ImageReadMode.RGB_ALPHA: "RGBA"}


def read_file(path):
    """The file's bytes as a 1-D uint8 tensor."""
    with open(path, "rb") as f:
        return torch.from_numpy(np.frombuffer(f.read(), dtype=np.uint8).copy())


def decode_image(input, mode=ImageReadMode.UNCHANGED, apply_exif_orientation=False):
    """Decode an image (a path, or a uint8 tensor of encoded bytes) to a uint8 (C, H, W) tensor."""
    import io as _io
    Image = _pil.require("torchvision.io.decode_image")
    if isinstance(mode, str):
        mode = ImageReadMode[mode.upper()]
    source = _io.BytesIO(input.numpy().tobytes()) if isinstance(input, torch.Tensor) else input
    with Image.open(source) as image:
        if apply_exif_orientation:
            from PIL import ImageOps
            image = ImageOps.exif_transpose(image)
        if mode != ImageReadMode.UNCHANGED:
            image = image.convert(_PIL_MODES[mode])
        elif image.mode not in ("L", "LA", "RGB", "RGBA"):
            image = image.convert("RGBA" if "A" in image.getbands() else "RGB")
        array = np.asarray(image)
    if array.ndim == 2:
        array = array[:, :, None]
    return torch.from_numpy(np.ascontiguousarray(array.transpose(2, 0, 1)))


def read_image(path, mode=ImageReadMode.UNCHANGED, apply_exif_orientation=False):
    """Read an image file into a uint8 (C, H, W) tensor."""
    return decode_image(path, mode, apply_exif_orientation)
