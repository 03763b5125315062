r"""Autocast: run chosen ops in a lower precision inside a region (``torch.autocast``).

    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        loss = model(x)               # torch runs matmuls/convolutions in bfloat16 here

This module holds autocast's *state* — per device type: whether autocast is on and its dtype; the
cache flag; the nesting depth — and the context manager, decorators and functions that read and
set it, with torch 2.13's names, arguments, defaults, warnings and errors.

On the CPU, inside a region the primitive ops that torch lists cast their floating-point inputs
first, as torch's ``AutocastCPU`` kernels do (``aten/src/ATen/autocast_mode.cpp``), above autograd
-- each cast is a recorded ``.to(dtype)``, so a float32 parameter's gradient comes back through a
``ToCopyBackward0`` in float32 while the matmul's runs in bfloat16:

* ``lower_precision_fp`` (matmuls, convolutions, ``prelu``): inputs to the region's dtype;
* ``fp32`` (losses, 3-D pooling, padding, linalg, FFTs, ``prod``, ``cdist``...): inputs to float32;
* ``promote`` (``cat``, ``stack``, ``index_copy``): inputs to the widest floating dtype among them.

float64 tensors are never cast, nor tensors on another device. The op runs with autocast off (torch's
``ExcludeDispatchKeyGuard``), and the cast is hooked where torch hooks it, at the op level: the seam's
``autocast`` flag routes every primitive op through :func:`autocast_call`.

Where glasstorch decomposes differently from torch, the list names glasstorch's ops: torch casts
``linear`` and ``matmul`` whole, glasstorch their ``addmm``/``mm``/``bmm``/``mv``/``dot`` (the same
dtypes; the graph shows ``t`` before the cast); ``cross_entropy`` is cast whole, as in torch (before its
``log_softmax``: :func:`fp32_inputs`). torch caches the casts of leaf weights within a region (one
``ToCopyBackward0`` per weight); glasstorch casts at each use.
"""
import collections
import functools
import warnings

from .. import _dtype
from .._seam import seam

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
    _tell_seam()


def get_autocast_dtype(device_type):
    """The dtype autocast uses on ``device_type`` (default bfloat16 on the CPU, float16 on CUDA)."""
    return _state.dtype[_state.key(device_type, "dtype")]


def set_autocast_dtype(device_type, dtype):
    _state.dtype[_state.key(device_type, "dtype")] = dtype
    _tell_seam()


def _tell_seam():
    """The seam routes ops through :func:`autocast_call` while CPU autocast is on (its flag is
    the dtype to cast to)."""
    seam.autocast = _state.dtype["cpu"] if _state.enabled["cpu"] else None
    seam._refresh()


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

    On the CPU the ops torch lists cast their inputs inside the region (see the module docstring).

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


# ----------------------------------------------------------------------------- the casts (CPU)
# torch's AutocastCPU lists, by op name, with glasstorch's own primitive ops where it decomposes
# differently (nll_loss_forward for nll_loss, _fft_r2c for fft_rfft, convolution for conv2d...).
LOWER_PRECISION_FP = frozenset((
    "conv1d", "conv2d", "conv3d", "convolution", "_convolution", "conv_tbc", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "bmm", "mm", "mv", "dot", "linalg_vecdot", "baddbmm", "addmm", "addbmm", "linear",
    "matmul", "prelu", "_prelu_kernel", "scaled_dot_product_attention", "_native_multi_head_attention",
    "mkldnn_rnn_layer"))
FP32 = frozenset((
    "avg_pool3d", "binary_cross_entropy", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d", "polar", "prod",
    "quantile", "nanquantile", "stft", "cdist", "_cdist_forward", "trace", "view_as_complex", "cholesky",
    "cholesky_inverse", "cholesky_solve", "inverse", "lu_solve", "orgqr", "ormqr", "pinverse", "linalg_pinv",
    "max_pool3d", "max_pool3d_with_indices", "max_unpool2d", "max_unpool3d", "adaptive_avg_pool3d",
    "_adaptive_avg_pool3d", "reflection_pad1d", "reflection_pad2d", "replication_pad1d", "replication_pad2d",
    "replication_pad3d", "mse_loss", "cosine_embedding_loss", "nll_loss", "nll_loss_forward", "nll_loss2d",
    "nll_loss2d_forward", "hinge_embedding_loss", "poisson_nll_loss", "smooth_l1_loss", "cross_entropy_loss",
    "l1_loss", "huber_loss", "margin_ranking_loss", "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss",
    "ctc_loss", "_ctc_loss", "kl_div", "multilabel_margin_loss", "multilabel_margin_loss_forward",
    "binary_cross_entropy_with_logits", "fft_fft", "fft_ifft", "fft_fft2", "fft_ifft2", "fft_fftn", "fft_ifftn",
    "fft_rfft", "fft_irfft", "fft_rfft2", "fft_irfft2", "fft_rfftn", "fft_irfftn", "fft_hfft", "fft_ihfft",
    "_fft_r2c", "_fft_c2c", "_fft_c2r", "linalg_cond", "linalg_matrix_rank", "linalg_solve", "_linalg_solve_ex",
    "linalg_cholesky", "linalg_svdvals", "linalg_eigvals", "linalg_eigvalsh", "linalg_inv",
    "linalg_householder_product", "linalg_tensorinv", "linalg_tensorsolve", "fake_quantize_per_tensor_affine",
    "geqrf", "_lu_with_info", "qr", "svd", "_linalg_svd", "triangular_solve", "linalg_solve_triangular",
    "fractional_max_pool2d", "fractional_max_pool3d", "adaptive_max_pool3d", "linalg_qr", "linalg_cholesky_ex",
    "linalg_svd", "linalg_eig", "linalg_eigh", "_linalg_eigh", "linalg_lstsq", "linalg_inv_ex"))
PROMOTE = frozenset(("cat", "stack", "index_copy"))


def _eligible(value):
    """torch's ``is_eligible``: a floating-point CPU tensor that is not float64."""
    from .._tensor import Tensor
    return isinstance(value, Tensor) and value.device.type == "cpu" and value.dtype.is_floating_point and \
        value.dtype is not _dtype.float64


def _cast_to(dtype):
    def cast(value):
        if isinstance(value, (list, tuple)):
            return type(value)(cast(v) for v in value)
        return value.to(dtype) if _eligible(value) and value.dtype is not dtype else value
    return cast


def _widest(args):
    """``promote``: the widest floating dtype among the eligible inputs (torch's promote_type)."""
    widest = None
    for a in args:
        for t in (a if isinstance(a, (list, tuple)) else (a,)):
            if _eligible(t):
                widest = t.dtype if widest is None else _dtype.promote_types(widest, t.dtype)
    return widest


def fp32_inputs(*tensors):
    """The ``fp32`` cast for a composite torch lists whole where glasstorch decomposes it
    (``cross_entropy``: torch casts before the log-softmax)."""
    cast = _cast_to(_dtype.float32)
    return tuple(cast(t) for t in tensors)


def autocast_call(op, args):
    """Run primitive ``op`` (``args`` in schema order) as torch's AutocastCPU kernel does: its
    inputs cast by its list's rule (recorded casts, above autograd), then the op itself with
    autocast off."""
    name = op._schema.name
    dtype = seam.autocast
    seam.autocast = None           # (the casts and the op run with autocast excluded)
    seam._refresh()
    try:
        if name in LOWER_PRECISION_FP:
            cast = _cast_to(dtype)
        elif name in FP32:
            cast = _cast_to(_dtype.float32)
        elif name in PROMOTE:
            widest = _widest(args)
            cast = _cast_to(widest) if widest is not None else None
        else:
            cast = None
        if cast is not None:
            args = tuple(cast(a) for a in args)
        kwargs = {a.name: v for a, v in zip(op._schema.arguments, args) if a.kwarg_only}
        return op(*(v for a, v in zip(op._schema.arguments, args) if not a.kwarg_only), **kwargs)
    finally:
        seam.autocast = dtype
        seam._refresh()


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
