"""torch.cpu.amp: the deprecated CPU spellings of torch.amp's autocast and GradScaler."""
import warnings

from ... import _dtype
from ...amp import autocast_mode as _autocast_mode, grad_scaler as _grad_scaler

__all__ = ["autocast", "GradScaler"]


def _warn_deprecated(old, new):
    warnings.warn(f"`torch.cpu.amp.{old}(args...)` is deprecated. Please use `{new}` instead.",
                  FutureWarning, stacklevel=3)


class autocast(_autocast_mode.autocast):
    """``torch.cpu.amp.autocast(...)``: ``torch.amp.autocast("cpu", ...)``, with a FutureWarning."""

    def __init__(self, enabled=True, dtype=_dtype.bfloat16, cache_enabled=True):
        _warn_deprecated("autocast", "torch.amp.autocast('cpu', args...)")
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(_grad_scaler.GradScaler):
    """``torch.cpu.amp.GradScaler(...)``: ``torch.amp.GradScaler("cpu", ...)``, with a FutureWarning."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        _warn_deprecated("GradScaler", "torch.amp.GradScaler('cpu', args...)")
        super().__init__("cpu", init_scale=init_scale, growth_factor=growth_factor, backoff_factor=backoff_factor,
                         growth_interval=growth_interval, enabled=enabled)
