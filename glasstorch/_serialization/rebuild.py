"""What torch's rebuild functions do here: turn a checkpoint's storages back into glasstorch tensors.

A tensor in a checkpoint is the call ``torch._utils._rebuild_tensor_v2(storage, storage_offset,
size, stride, requires_grad, backward_hooks)``; the functions below are the ones the unpickler
calls for those names. Every argument comes from the file, so each is checked before use: a size
or stride that reaches past the storage is an error, never a read of foreign memory.

Tensors that share a storage in the file share memory after loading (NumPy views of one array),
as they do in torch.
"""
import math
import pickle

from .._array import xp
from . import tensors
from .names import StorageType, numpy_dtype


class LoadedStorage:
    """A storage read from a checkpoint: a 1-D host array, and the device its tensors go to.

    This is what a callable ``map_location(storage, location)`` receives; it offers the part of
    torch's storage API such callables use (``cpu()``, ``cuda()``, ``to()``, ``device``).
    """
    __slots__ = ("array", "device")

    def __init__(self, array, device="cpu"):
        self.array, self.device = array, device

    def cpu(self):
        return LoadedStorage(self.array, "cpu")

    def cuda(self, device=None, non_blocking=False):
        if device is None:
            return LoadedStorage(self.array, "cuda")
        return LoadedStorage(self.array, device if isinstance(device, str) else f"cuda:{int(device)}")

    def to(self, device, non_blocking=False):
        return LoadedStorage(self.array, str(device))

    def nbytes(self):
        return self.array.nbytes

    def size(self):
        return self.array.size

    def __len__(self):
        return self.array.size

    def __repr__(self):
        return f"LoadedStorage(dtype={self.array.dtype}, size={self.array.size}, device='{self.device}')"


def _check_ints(name, values, allow_negative=False):
    if not all(isinstance(v, int) and (allow_negative or v >= 0) for v in values):
        raise pickle.UnpicklingError(f"corrupted checkpoint: tensor {name} {values!r} must be non-negative integers")


def _view(storage, storage_offset, size, stride):
    """The array a tensor of ``size``/``stride`` at ``storage_offset`` sees in ``storage``'s array."""
    if not isinstance(storage, LoadedStorage):
        raise pickle.UnpicklingError(f"corrupted checkpoint: expected a storage, got {type(storage).__name__}")
    size, stride = tuple(size), tuple(stride)
    _check_ints("size", size)
    _check_ints("stride", stride)
    _check_ints("storage_offset", (storage_offset,))
    if len(size) != len(stride):
        raise pickle.UnpicklingError(f"corrupted checkpoint: size {list(size)} and stride {list(stride)} "
                                     "have different lengths")
    array = storage.array
    if math.prod(size) == 0:
        return xp.empty(size, dtype=array.dtype)
    needed = storage_offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1
    if needed > array.size:
        itemsize = array.itemsize
        # torch's words (at::setStorage), in bytes
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
                           f"{storage_offset}, and itemsize {itemsize} requiring a storage size of "
                           f"{needed * itemsize} are out of bounds for storage of size {array.nbytes}")
    window = array[storage_offset:needed]
    if stride == _contiguous(size):
        return window.reshape(size)
    return xp.lib.stride_tricks.as_strided(window, shape=size, strides=[s * array.itemsize for s in stride])


def _contiguous(size):
    strides, step = [], 1
    for n in reversed(size):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _check_metadata(metadata):
    # torch records conj/neg bits here; glasstorch tensors have no such lazy bits.
    if metadata:
        raise pickle.UnpicklingError(f"glasstorch.load: unsupported tensor metadata {metadata!r}")


def rebuild_tensor(storage, storage_offset, size, stride):
    """``torch._utils._rebuild_tensor``."""
    return tensors.make_tensor(_view(storage, storage_offset, size, stride), False, False, storage.device)


def rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    """``torch._utils._rebuild_tensor_v2``: the call torch writes for every tensor.

    ``backward_hooks`` are dropped (torch saves them only as an empty OrderedDict; hooks are code).
    """
    _check_metadata(metadata)
    array = _view(storage, storage_offset, size, stride)
    return tensors.make_tensor(array, bool(requires_grad), False, storage.device)


def rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype,
                      metadata=None):
    """``torch._utils._rebuild_tensor_v3``: a byte storage (UntypedStorage) read as ``dtype``.

    torch uses it for dtypes that have no typed storage class (uint16/32/64, float8).
    """
    _check_metadata(metadata)
    np_dtype = numpy_dtype(getattr(dtype, "name", dtype))
    data = storage.array
    if data.nbytes % np_dtype.itemsize:
        raise pickle.UnpicklingError(f"corrupted checkpoint: a storage of {data.nbytes} bytes does not hold "
                                     f"whole {dtype!r} elements")
    typed = LoadedStorage(data.view(np_dtype), storage.device)
    return tensors.make_tensor(_view(typed, storage_offset, size, stride), bool(requires_grad), False,
                               storage.device)


def rebuild_meta_tensor_no_storage(dtype, size, stride, requires_grad):
    """``torch._utils._rebuild_meta_tensor_no_storage``: a meta tensor (a shape, no data)."""
    return tensors.make_meta_tensor(getattr(dtype, "name", dtype), size, stride, bool(requires_grad))


def rebuild_parameter(data, requires_grad, backward_hooks):
    """``torch._utils._rebuild_parameter``: ``data`` is the tensor rebuilt just before."""
    if not tensors.is_tensor(data):
        raise pickle.UnpicklingError(f"corrupted checkpoint: a Parameter's data must be a tensor, "
                                     f"got {type(data).__name__}")
    return tensors.as_parameter(data, bool(requires_grad))


def rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    """``torch._utils._rebuild_parameter_with_state``: a Parameter with Python attributes."""
    return _set_state(rebuild_parameter(data, requires_grad, backward_hooks), state)


def rebuild_from_type_v2(func, new_type, args, state):
    """``torch._tensor._rebuild_from_type_v2``: a tensor (or Parameter) with Python attributes.

    Only the rebuild functions above may be ``func``; only Tensor and Parameter may be ``new_type``.
    """
    if func not in REBUILD_FUNCTIONS:
        raise pickle.UnpicklingError(f"glasstorch.load: _rebuild_from_type_v2 of {func!r} is not supported")
    result = func(*args)
    if new_type is tensors.tensor_type("Parameter") and new_type is not tensors.tensor_type("Tensor"):
        if not isinstance(result, new_type):
            result = tensors.as_parameter(result, result.requires_grad)
    elif new_type is not tensors.tensor_type("Tensor"):
        raise pickle.UnpicklingError(f"glasstorch.load: tensor subclass {new_type!r} is not supported")
    return _set_state(result, state)


def _set_state(obj, state):
    """Restore the Python attributes torch saved with a tensor, never replacing one it already has."""
    if isinstance(state, tuple) and len(state) == 2:  # (dict state, slot state), as pickle's BUILD
        state = {**(state[0] or {}), **(state[1] or {})}
    if not state:
        return obj
    if not isinstance(state, dict) or not all(isinstance(k, str) for k in state):
        raise pickle.UnpicklingError(f"corrupted checkpoint: tensor state must be a dict, got {type(state).__name__}")
    for name, value in state.items():
        if hasattr(obj, name):  # internal state (``_data``, ``grad``...) is not the file's to set
            raise pickle.UnpicklingError(f"glasstorch.load: refusing to overwrite the tensor attribute {name!r}")
        setattr(obj, name, value)
    return obj


REBUILD_FUNCTIONS = (rebuild_tensor, rebuild_tensor_v2, rebuild_tensor_v3, rebuild_parameter,
                     rebuild_parameter_with_state, rebuild_meta_tensor_no_storage)


def unsupported(torch_name, what):
    """A rebuild function torch has and glasstorch cannot honour: calling it says so."""
    def refuse(*args, **kwargs):
        raise pickle.UnpicklingError(f"glasstorch.load: the checkpoint holds {what} ({torch_name}), "
                                     "which glasstorch does not support")
    refuse.__qualname__ = refuse.__name__ = torch_name.rsplit(".", 1)[-1]
    return refuse


UNSUPPORTED_REBUILDS = {
    "torch._utils._rebuild_qtensor": "quantized tensors",
    "torch._utils._rebuild_sparse_tensor": "sparse tensors",
    "torch._utils._rebuild_nested_tensor": "nested tensors",
    "torch._utils._rebuild_wrapper_subclass": "tensor subclasses",
    "torch._utils._rebuild_device_tensor_from_numpy": "device tensors saved through NumPy",
    "torch._utils._rebuild_device_tensor_from_cpu_tensor": "device tensors saved from CPU copies",
}


def get_layout(name):
    """``torch.serialization._get_layout``: torch pickles ``torch.strided`` & co. by name."""
    if not isinstance(name, str) or not name.startswith("torch."):
        raise pickle.UnpicklingError(f"corrupted checkpoint: bad layout name {name!r}")
    return tensors.layout(name[len("torch."):])


def restore_location(storage, location, map_location):
    """Where a storage saved on ``location`` goes, following torch's rules for ``map_location``.

    None: where it was saved; a str or device: there; a dict: ``map_location.get(location, location)``;
    a callable: ``map_location(storage, location)``, or where it was saved when that returns None.
    """
    if map_location is None:
        return _default_restore(storage, location)
    if isinstance(map_location, dict):
        return _default_restore(storage, str(map_location.get(location, location)))
    if isinstance(map_location, (str, bytes)):
        return _default_restore(storage, map_location.decode() if isinstance(map_location, bytes) else map_location)
    if callable(map_location):
        result = map_location(storage, location)
        if result is None:
            return _default_restore(storage, location)
        if not isinstance(result, LoadedStorage):
            raise TypeError(f"map_location should return a storage it was given (or None), got "
                            f"{type(result).__name__}")
        return _default_restore(result, result.device)
    return _default_restore(storage, str(map_location))  # a device object


def _default_restore(storage, location):
    """``torch.serialization.default_restore_location`` for the devices glasstorch has."""
    if location == "cpu":
        return storage.cpu()
    if location == "meta":    # (the shapes and dtypes only: torch.load(..., map_location="meta"))
        return storage.to("meta")
    if location == "cuda" or location.startswith("cuda:"):
        if not tensors.cuda_available():
            raise RuntimeError("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() "
                               "is False. If you are running on a CPU-only machine, please use torch.load with "
                               "map_location=torch.device('cpu') to map your storages to the CPU.")
        return storage.to(location)
    raise RuntimeError(f"don't know how to restore data location of {type(storage).__name__} "
                       f"(tagged with {location})")


def storage_type_check(storage_type):
    """``storage_type`` if it is one (torch.FloatStorage & co.); a clear error otherwise."""
    if not isinstance(storage_type, StorageType):
        if getattr(storage_type, "__name__", "").endswith("Storage"):
            storage_type()  # one of the storages NumPy lacks: its refusal names it
        raise pickle.UnpicklingError(f"corrupted checkpoint: expected a storage type, got {storage_type!r}")
    return storage_type
