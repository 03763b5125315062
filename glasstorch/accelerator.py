r"""torch.accelerator: the device-agnostic way to ask for "the GPU, if there is one" (torch 2.6+).

The official examples now begin with::

    device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"

glasstorch's only accelerator is CUDA through CuPy. Without it, every answer is that of torch's
CPU-only build: ``is_available()`` is False, ``current_accelerator()`` None, ``device_count()`` 0,
and every function that needs a device raises ``RuntimeError: Cannot access accelerator device
when none is available.`` (``set_device_index`` with a negative index is a no-op, and a
``torch.device``/string argument raises ``RuntimeError: Accelerator expected`` first, as in torch).
With a GPU, each function is the corresponding ``torch.cuda`` one.
"""
import functools
import warnings
from collections import OrderedDict

from . import cuda as _cuda
from ._tensor import device as _device

__all__ = ["Graph", "current_accelerator", "current_device_idx", "current_device_index", "get_device_capability",
           "current_stream", "device_count", "device_index", "empty_cache", "empty_host_cache", "get_memory_info",
           "is_available", "max_memory_allocated", "max_memory_reserved", "memory_allocated", "memory_reserved",
           "memory_stats", "reset_accumulated_memory_stats", "reset_peak_memory_stats", "set_device_idx",
           "set_device_index", "set_stream", "synchronize"]

_NONE_AVAILABLE = "Cannot access accelerator device when none is available."


def _accelerator_device_type():
    """'cuda' when a GPU is present, else None (torch's build-time accelerator, here found at run time)."""
    return "cuda" if _cuda.is_available() else None


def _require_accelerator():
    if _accelerator_device_type() is None:
        raise RuntimeError(_NONE_AVAILABLE)


def _get_device_index(device, optional=False):
    """An index from an int, a ``torch.device`` or a string, checked against the current accelerator."""
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = _device(device)
    device_index = None
    if isinstance(device, _device):
        acc = current_accelerator()
        if acc is None:
            raise RuntimeError("Accelerator expected")
        if acc.type != device.type:
            raise ValueError(f"{device.type} doesn't match the current accelerator {acc}.")
        device_index = device.index
    if device_index is None:
        if not optional:
            raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{device}")
        return current_device_index()
    return device_index


def _deprecated(new_name):
    def wrap(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            warnings.warn(f"Use `{new_name}` instead.", FutureWarning, stacklevel=2)
            return fn(*args, **kwargs)
        return wrapper
    return wrap


# ----------------------------------------------------------------------------- which accelerator
def current_accelerator(check_available=False):
    """The accelerator's device (``device(type='cuda')``), or None when there is none."""
    device_type = _accelerator_device_type()
    if device_type is not None and (not check_available or is_available()):
        return _device(device_type)
    return None


def is_available():
    """Whether an accelerator is present and usable."""
    return current_accelerator() is not None and _cuda.is_available()


def device_count():
    """The number of accelerator devices (0 without one)."""
    return 0 if current_accelerator() is None else _cuda.device_count()


def get_device_capability(device=None, /):
    """``{"supported_dtypes": {...}}``: the dtypes tensors on the device may have."""
    _require_accelerator()
    _get_device_index(device, optional=True)
    from . import _dtype
    return {"supported_dtypes": {d for d in _dtype.ALL if d.numpy_dtype is not None}}


# ----------------------------------------------------------------------------- the current device
def current_device_index():
    """The index of the current accelerator device."""
    _require_accelerator()
    return _cuda.current_device()


current_device_idx = _deprecated("current_device_index")(current_device_index)
current_device_idx.__name__ = "current_device_idx"


def set_device_index(device, /):
    """Make ``device`` (an index, or a device of the accelerator's type with an index) the current one."""
    device_index = _get_device_index(device, optional=False)
    if device_index < 0:
        return
    _require_accelerator()
    _cuda.set_device(device_index)


set_device_idx = _deprecated("set_device_index")(set_device_index)
set_device_idx.__name__ = "set_device_idx"


class device_index:
    """``with torch.accelerator.device_index(i):`` makes device ``i`` current inside the block (None: no change)."""

    def __init__(self, device, /):
        self.idx = device
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None:
            self.prev_idx = current_device_index()
            set_device_index(self.idx)

    def __exit__(self, *exc_info):
        if self.idx is not None:
            set_device_index(self.prev_idx)


def synchronize(device=None, /):
    """Wait for all work queued on the device (default: the current one) to finish."""
    _require_accelerator()
    device_index_ = _get_device_index(device, optional=True)
    _cuda.synchronize(device_index_)


# ----------------------------------------------------------------------------- streams and graphs
def current_stream(device=None, /):
    _require_accelerator()
    raise NotImplementedError("glasstorch has no stream objects: CuPy's default stream is used throughout")


def set_stream(stream):
    _require_accelerator()
    raise NotImplementedError("glasstorch has no stream objects: CuPy's default stream is used throughout")


class Graph:
    """torch.accelerator.Graph (graph capture); glasstorch cannot capture device graphs."""

    def __init__(self, *args, **kwargs):
        _require_accelerator()
        raise NotImplementedError("glasstorch cannot capture accelerator graphs")


# ----------------------------------------------------------------------------- memory
def empty_cache():
    """Release the cached memory blocks the allocator holds (CuPy's memory pool)."""
    _require_accelerator()
    _cuda.empty_cache()


def empty_host_cache():
    _require_accelerator()


def memory_stats(device_index=None, /):
    """The allocator's counters, flattened as torch's (``"allocated_bytes.all.current"``, ...).

    CuPy's pool reports current usage only; the peak and cumulative counters torch also keeps are
    absent, so :func:`max_memory_allocated` and :func:`max_memory_reserved` raise.
    """
    _require_accelerator()
    _get_device_index(device_index, optional=True)
    return OrderedDict([("allocated_bytes.all.current", _cuda.memory_allocated()),
                        ("reserved_bytes.all.current", _cuda.memory_reserved())])


def memory_allocated(device_index=None, /):
    return memory_stats(device_index).get("allocated_bytes.all.current", 0)


def memory_reserved(device_index=None, /):
    return memory_stats(device_index).get("reserved_bytes.all.current", 0)


def _peaks_not_tracked(device_index=None, /):
    _require_accelerator()
    raise NotImplementedError("glasstorch does not track peak or cumulative memory (CuPy's pool reports current "
                              "usage only); use memory_allocated() / memory_reserved()")


max_memory_allocated = max_memory_reserved = reset_accumulated_memory_stats = reset_peak_memory_stats = \
    _peaks_not_tracked


def get_memory_info(device_index=None, /):
    """``(free, total)`` bytes of the device."""
    _require_accelerator()
    return _cuda.mem_get_info(_get_device_index(device_index, optional=True))
