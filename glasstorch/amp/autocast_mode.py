r"""Autocast: run chosen ops in a lower precision inside a region (``torch.autocast``).

    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        loss = model(x)               # torch runs matmuls/convolutions in bfloat16 here

This module holds autocast's *state* — per device type: whether autocast is on and its dtype; the
cache flag; the nesting depth — and the context manager, decorators and functions that read and
set it, with torch 2.13's names, arguments, defaults, warnings and errors.

.. note:: **glasstorch does not cast yet.** The ops do not consult this state, so inside an
   autocast region every op runs in its inputs' dtype (as with ``enabled=False``). Programs run
   unchanged and compute in full precision; the casting itself will stand on the op interception
   seam (see docs/optim.md, "Mixed precision").
"""
import collections
import functools
import warnings

from .. import _dtype

__all__ = ["autocast_decorator", "autocast", "is_autocast_available", "custom_fwd", "custom_bwd"]

# torch's device types (its error for any other string lists them) and those autocast knows.
_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
                 "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
_AUTOCAST_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "maia", "xla", "mps", "hpu", "mtia", "privateuseone")
_DEFAULT_DTYPES = {"cpu": _dtype.bfloat16, "hpu": _dtype.bfloat16, "xla": _dtype.bfloat16}   # others: float16


def _check_device_type(device_type):
    if device_type not in _DEVICE_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of device string: "
                           f"{device_type}")


class _AutocastState:
    """What torch keeps in C++: autocast's flag and dtype per device type, the cache flag, the nesting depth."""

    def __init__(self):
        self.enabled = dict.fromkeys(_AUTOCAST_DEVICE_TYPES, False)
        self.dtype = {d: _DEFAULT_DTYPES.get(d, _dtype.float16) for d in _AUTOCAST_DEVICE_TYPES}
        self.cache_enabled = True
        self.nesting = 0

    def key(self, device_type, what):
        _check_device_type(device_type)
        if device_type not in self.enabled:
            raise RuntimeError("unknown device type for autocast in get_autocast_dispatch_key_from_device_type"
                               if what == "enabled" else "unsupported scalarType")
        return device_type


_state = _AutocastState()


# ----------------------------------------------------------------------------- torch's top-level functions
def is_autocast_available(device_type):
    """Whether autocast can be used on ``device_type`` (a string such as ``"cpu"``)."""
    _check_device_type(device_type)
    return device_type in _AUTOCAST_DEVICE_TYPES


def is_autocast_enabled(device_type="cuda"):
    """Whether autocast is on for ``device_type`` (without an argument: CUDA's, as torch)."""
    return _state.enabled[_state.key(device_type, "enabled")]


def set_autocast_enabled(device_type, enabled=None):
    """``set_autocast_enabled(device_type, enabled)``; the old one-argument form sets CUDA's."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    _state.enabled[_state.key(device_type, "enabled")] = bool(enabled)


def get_autocast_dtype(device_type):
    """The dtype autocast uses on ``device_type`` (default bfloat16 on the CPU, float16 on CUDA)."""
    return _state.dtype[_state.key(device_type, "dtype")]


def set_autocast_dtype(device_type, dtype):
    _state.dtype[_state.key(device_type, "dtype")] = dtype


def is_autocast_cache_enabled():
    return _state.cache_enabled


def set_autocast_cache_enabled(enabled):
    _state.cache_enabled = bool(enabled)


def autocast_increment_nesting():
    _state.nesting += 1
    return _state.nesting


def autocast_decrement_nesting():
    _state.nesting -= 1
    return _state.nesting


def clear_autocast_cache():
    """Drop the casted copies of weights kept while autocast regions are open (glasstorch keeps none)."""


def _deprecated(old, new, fn):
    @functools.wraps(fn)
    def wrapper(*args):
        warnings.warn(f"torch.{old}() is deprecated. Please use torch.{new} instead.", DeprecationWarning,
                      stacklevel=2)
        return fn(*args)
    wrapper.__name__ = old
    return wrapper


# The per-device spellings of torch 1.x, deprecated in torch 2.x.
is_autocast_cpu_enabled = _deprecated("is_autocast_cpu_enabled", "is_autocast_enabled('cpu')",
                                      lambda: is_autocast_enabled("cpu"))
set_autocast_cpu_enabled = _deprecated("set_autocast_cpu_enabled", "set_autocast_enabled('cpu', enabled)",
                                       lambda enabled: set_autocast_enabled("cpu", enabled))
get_autocast_cpu_dtype = _deprecated("get_autocast_cpu_dtype", "get_autocast_dtype('cpu')",
                                     lambda: get_autocast_dtype("cpu"))
set_autocast_cpu_dtype = _deprecated("set_autocast_cpu_dtype", "set_autocast_dtype('cpu', dtype)",
                                     lambda dtype: set_autocast_dtype("cpu", dtype))
get_autocast_gpu_dtype = _deprecated("get_autocast_gpu_dtype", "get_autocast_dtype('cuda')",
                                     lambda: get_autocast_dtype("cuda"))
set_autocast_gpu_dtype = _deprecated("set_autocast_gpu_dtype", "set_autocast_dtype('cuda', dtype)",
                                     lambda dtype: set_autocast_dtype("cuda", dtype))


# ----------------------------------------------------------------------------- the context manager
def autocast_decorator(autocast_instance, func):
    @functools.wraps(func)
    def decorate_autocast(*args, **kwargs):
        with autocast_instance:
            return func(*args, **kwargs)
    return decorate_autocast


class autocast:
    r"""A region (or a decorated function) in which ops may run in ``dtype`` on ``device_type``.

    Args:
        device_type (str): ``"cpu"``, ``"cuda"``, ... (a string, not a ``torch.device``).
        dtype (torch.dtype, optional): the low-precision dtype (default: ``get_autocast_dtype(device_type)``,
            bfloat16 on the CPU, float16 on CUDA). On the CPU only bfloat16 and float16 are supported;
            another dtype warns and disables autocast, as in torch.
        enabled (bool): whether autocast is on in the region (default: True). CUDA autocast without
            a GPU warns and disables itself, as in torch.
        cache_enabled (bool, optional): whether to cache casted weights (default: the global flag).

    Regions nest, and leaving one restores the previous state.

    **glasstorch records the state but does not cast yet** (see the module docstring).

    Example::

        >>> import glasstorch as torch
        >>> with torch.autocast("cpu", dtype=torch.bfloat16):
        ...     torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu")
        (True, torch.bfloat16)
        >>> torch.is_autocast_enabled("cpu")
        False
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        if not is_autocast_available(self.device):
            raise RuntimeError(f"User specified an unsupported autocast device_type '{self.device}'")
        device_supported_dtypes = [_dtype.bfloat16, _dtype.float16]
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None else cache_enabled

        device_name = self.device.upper()
        if enabled:
            if self.device == "cuda":
                from ..cuda.amp import amp_definitely_not_available
                if amp_definitely_not_available():
                    warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.",
                                  stacklevel=2)
                    enabled = False
                elif self.fast_dtype == _dtype.bfloat16:
                    from .. import cuda
                    if not cuda.is_bf16_supported():
                        raise RuntimeError(
                            "Current CUDA Device does not support bfloat16. Please switch dtype to float16.")
            elif self.fast_dtype not in device_supported_dtypes:
                warnings.warn(f"In {device_name} autocast, but the target dtype is not supported. Disabling autocast.\n"
                              f"{device_name} Autocast only supports dtypes of "
                              + ", ".join(map(str, device_supported_dtypes)) + " currently.", stacklevel=2)
                enabled = False
        self._enabled = enabled

    def __enter__(self):
        self.prev_cache_enabled = is_autocast_cache_enabled()
        self.prev = is_autocast_enabled(self.device)
        self.prev_fastdtype = get_autocast_dtype(self.device)
        set_autocast_enabled(self.device, self._enabled)
        set_autocast_dtype(self.device, self.fast_dtype)
        autocast_increment_nesting()
        set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        set_autocast_enabled(self.device, self.prev)
        set_autocast_dtype(self.device, self.prev_fastdtype)
        set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                f"Did you mean to use autocast as a context manager? For example:\n"
                f"    with torch.autocast(device_type=...):\n"
                f"        output = model(input)")
        return autocast_decorator(self, func)


# ----------------------------------------------------------------------------- custom autograd Functions
def _cast(value, device_type, dtype):
    """``value`` with its floating-point tensors on ``device_type`` (except float64) cast to ``dtype``."""
    from .._tensor import Tensor
    if isinstance(value, Tensor):
        is_eligible = value.is_floating_point() and value.device.type == device_type and value.dtype is not _dtype.float64
        return value.to(dtype) if is_eligible else value
    if isinstance(value, (str, bytes)) or hasattr(value, "__array_interface__"):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable):
        iterable = (_cast(v, device_type, dtype) for v in value)
        return type(value)(iterable) if isinstance(value, (list, tuple)) else iterable
    return value


def _check_device_type_arg(device_type):
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorate a custom Function's ``forward``: remember the autocast state, or run it with inputs cast.

    With ``cast_inputs`` and autocast on, ``forward`` runs with autocast off and its floating-point
    tensor arguments cast to ``cast_inputs``; otherwise it runs as is and records whether autocast
    was on, for :func:`custom_bwd`.
    """
    _check_device_type_arg(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        autocast_context = is_autocast_enabled(device_type)
        args[0]._fwd_used_autocast = False
        if autocast_context:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)

    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorate a custom Function's ``backward``: run it in the autocast state its forward saw."""
    _check_device_type_arg(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast, dtype=args[0]._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd
