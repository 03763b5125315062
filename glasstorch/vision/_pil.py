"""Pillow, imported only when an image operation needs it, with a message that says how to get it."""
import sys


def require(what):
    """The ``PIL.Image`` module, or ModuleNotFoundError naming `what` needed it and the install line."""
    try:
        from PIL import Image
    except ImportError:
        raise ModuleNotFoundError(
            f"{what} needs Pillow (PIL images), which is not installed: pip install 'glasstorch[vision]' "
            f"(or pip install pillow)", name="PIL") from None
    return Image


def is_pil_image(obj):
    """Whether `obj` is a PIL image, without importing Pillow (if it is not imported, nothing is one)."""
    image_module = sys.modules.get("PIL.Image")
    return image_module is not None and isinstance(obj, image_module.Image)


def fromarray(array, mode):
    """A PIL image of `mode` that reads `array`'s bytes as that mode's pixels (what torchvision's
    ``_Image_fromarray`` does; Pillow 11.3 deprecated ``Image.fromarray(array, mode)`` for it)."""
    Image = require("converting an array to a PIL image")
    height, width = array.shape[:2]
    return Image.frombuffer(mode, (width, height), array.tobytes(), "raw", mode, 0, 1)
