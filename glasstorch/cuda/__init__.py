"""torch.cuda: GPUs through CuPy when it is installed and a device is present.

Without a GPU the queries answer as torch's CPU-only build does (``is_available()`` False,
``device_count()`` 0) and the functions that need a device raise torch's errors. ``torch.cuda.amp``
(autocast and GradScaler, deprecated spellings of ``torch.amp``'s) and the legacy types
``torch.cuda.FloatTensor``, ... are loaded on first use.
"""
from .._array import cuda_available, cuda_device_count

_NOT_COMPILED = "Torch not compiled with CUDA enabled"


def _require_cuda():
    """torch's CPU-only build raises this AssertionError from every function that needs a GPU."""
    if not cuda_available():
        raise AssertionError(_NOT_COMPILED)


def _cupy():
    from .._array import namespace
    return namespace("cuda")


def is_available():
    return cuda_available()


def device_count():
    return cuda_device_count()


def is_initialized():
    return cuda_available()


def current_device():
    """The index of the current GPU (CuPy's current device)."""
    _require_cuda()
    return _cupy().cuda.Device().id


def _device_index(device):
    """An index from an int, ``'cuda:1'`` or a device; None or an index-less device means the current one."""
    if device is None:
        return current_device()
    if isinstance(device, int):
        return device
    from .._tensor import device as _device
    device = _device(device)
    if device.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {device}")
    return current_device() if device.index is None else device.index


def set_device(device):
    """Make ``device`` the current GPU (a negative index is a no-op, as in torch)."""
    index = device if isinstance(device, int) else _device_index(device)
    if index < 0:
        return
    _require_cuda()
    if index >= device_count():
        raise RuntimeError("CUDA error: invalid device ordinal")
    _cupy().cuda.Device(index).use()


def synchronize(device=None):
    """Wait for all work queued on ``device`` (default: the current GPU) to finish."""
    _require_cuda()
    _cupy().cuda.Device(_device_index(device)).synchronize()


def manual_seed(seed):
    pass


def manual_seed_all(seed):
    pass


def empty_cache():
    if cuda_available():
        _cupy().get_default_memory_pool().free_all_blocks()


def is_bf16_supported():
    return cuda_available()


def get_device_name(device=None):
    if not cuda_available():
        raise RuntimeError("No CUDA GPUs are available")
    return _cupy().cuda.runtime.getDeviceProperties(_device_index(device))["name"].decode()


def memory_allocated(device=None):
    """Bytes held by tensors (CuPy's memory pool in use); 0 without a GPU, as torch."""
    return _cupy().get_default_memory_pool().used_bytes() if cuda_available() else 0


def memory_reserved(device=None):
    """Bytes the caching allocator holds (CuPy's memory pool in total); 0 without a GPU."""
    return _cupy().get_default_memory_pool().total_bytes() if cuda_available() else 0


def mem_get_info(device=None):
    """``(free, total)`` bytes of the GPU."""
    _require_cuda()
    with _cupy().cuda.Device(_device_index(device)):
        return _cupy().cuda.runtime.memGetInfo()


# The legacy types torch.cuda.FloatTensor, ... (see glasstorch/_legacy_types.py).
_LEGACY_TYPE_NAMES = ("DoubleTensor", "FloatTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor",
                      "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor")


def __getattr__(name):
    if name == "amp":
        import importlib
        return importlib.import_module(".amp", __name__)
    if name in _LEGACY_TYPE_NAMES:
        from .._legacy_types import _CUDA_TYPES
        return _CUDA_TYPES[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
