"""torchvision.io, the image reading d2l uses (``io.image`` holds it, as in torchvision)."""
from .image import ImageReadMode, decode_image, read_file, read_image  # noqa: F401

__all__ = ["ImageReadMode", "decode_image", "read_file", "read_image"]
