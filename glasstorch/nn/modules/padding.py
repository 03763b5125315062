r"""Padding layers: constant (and zero), reflection, replication and circular padding.
``padding`` is an int (all sides) or a tuple (left, right[, top, bottom[, front, back]])."""
from glasstorch.nn import functional as F

from .module import Module

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d"]


def _sides(padding, n):
    return tuple(padding) if isinstance(padding, (tuple, list)) else (padding,) * (2 * n)


class _PadNd(Module):
    """One class per mode and rank: ``mode``, ``_n`` (spatial dims) set by each subclass."""

    __constants__ = ["padding"]
    mode = "constant"
    _n = 1

    def __init__(self, padding):
        super().__init__()
        self.padding = _sides(padding, self._n)

    def forward(self, input):
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    __constants__ = ["padding", "value"]

    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    _n = 1


class ConstantPad2d(_ConstantPadNd):
    _n = 2


class ConstantPad3d(_ConstantPadNd):
    _n = 3


class _ZeroPad(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad1d(_ZeroPad):
    _n = 1


class ZeroPad2d(_ZeroPad):
    r"""Pad the last two dims with zeros: ZeroPad2d((left, right, top, bottom)) or ZeroPad2d(p)."""

    _n = 2


class ZeroPad3d(_ZeroPad):
    _n = 3


class ReflectionPad1d(_PadNd):
    mode, _n = "reflect", 1


class ReflectionPad2d(_PadNd):
    r"""Pad by mirroring about the border (the border itself is not repeated)."""

    mode, _n = "reflect", 2


class ReflectionPad3d(_PadNd):
    mode, _n = "reflect", 3


class ReplicationPad1d(_PadNd):
    mode, _n = "replicate", 1


class ReplicationPad2d(_PadNd):
    r"""Pad by repeating the border values."""

    mode, _n = "replicate", 2


class ReplicationPad3d(_PadNd):
    mode, _n = "replicate", 3


class CircularPad1d(_PadNd):
    mode, _n = "circular", 1


class CircularPad2d(_PadNd):
    r"""Pad by wrapping around (the input as a torus)."""

    mode, _n = "circular", 2


class CircularPad3d(_PadNd):
    mode, _n = "circular", 3
