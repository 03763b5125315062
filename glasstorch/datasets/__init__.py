"""Small datasets shipped with glasstorch, so examples and tests run offline.

    digits    8x8 handwritten digits, 1,797 images, 10 classes (load_digits, Digits)
"""

from .digits import Digits, load_digits

__all__ = ["Digits", "load_digits"]
