"""torch.cuda.amp: the deprecated CUDA spellings of torch.amp's autocast, custom_fwd/bwd and GradScaler."""
import functools
import importlib.util
import warnings

from ... import _dtype
from ...amp import autocast_mode as _autocast_mode, grad_scaler as _grad_scaler

__all__ = ["amp_definitely_not_available", "autocast", "custom_bwd", "custom_fwd", "GradScaler"]


def amp_definitely_not_available():
    """True when CUDA autocast cannot run: no GPU (and no torch_xla)."""
    from ... import cuda
    return not (cuda.is_available() or importlib.util.find_spec("torch_xla"))


def _warn_deprecated(old, new):
    warnings.warn(f"`torch.cuda.amp.{old}(args...)` is deprecated. Please use `{new}` instead.",
                  FutureWarning, stacklevel=3)


class autocast(_autocast_mode.autocast):
    """``torch.cuda.amp.autocast(...)``: ``torch.amp.autocast("cuda", ...)``, with a FutureWarning."""

    def __init__(self, enabled=True, dtype=_dtype.float16, cache_enabled=True):
        _warn_deprecated("autocast", "torch.amp.autocast('cuda', args...)")
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    _warn_deprecated("custom_fwd", "torch.amp.custom_fwd(args..., device_type='cuda')")
    return functools.partial(_autocast_mode.custom_fwd, device_type="cuda")(fwd=fwd, cast_inputs=cast_inputs)


def custom_bwd(bwd):
    _warn_deprecated("custom_bwd", "torch.amp.custom_bwd(args..., device_type='cuda')")
    return functools.partial(_autocast_mode.custom_bwd, device_type="cuda")(bwd)


class GradScaler(_grad_scaler.GradScaler):
    """``torch.cuda.amp.GradScaler(...)``: ``torch.amp.GradScaler("cuda", ...)``, with a FutureWarning."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        _warn_deprecated("GradScaler", "torch.amp.GradScaler('cuda', args...)")
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor, backoff_factor=backoff_factor,
                         growth_interval=growth_interval, enabled=enabled)
