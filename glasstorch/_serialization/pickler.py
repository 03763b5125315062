"""Writing ``data.pkl``: glasstorch objects pickled the way torch pickles its own.

torch's ``Tensor.__reduce_ex__`` turns a tensor into a call
``torch._utils._rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, OrderedDict())``
whose ``storage`` argument is not pickled inline but as a *persistent id*
``('storage', torch.FloatStorage, '0', 'cpu', numel)``: the storage's bytes go to the zip record
``data/0``. :class:`TorchPickler` produces exactly that from a glasstorch tensor, so the result is
what ``torch.load(weights_only=True)`` expects.

It builds on the standard library's pure-Python pickler (``pickle._Pickler``) because the C pickler
writes a global only after importing its module to check it, and torch must not be imported here:
the stand-ins of :mod:`.names` are written as ``GLOBAL`` opcodes directly.
"""
import pickle
from collections import OrderedDict

from .._array import xp
from . import tensors
from .names import STORAGE_OF_DTYPE, TorchGlobal

# Objects pickled as usual without asking whether torch has a name for them (exact types: a
# glasstorch Size is a tuple subclass that must become torch.Size).
_PLAIN = {int, float, bool, str, bytes, type(None), tuple, list, dict, OrderedDict}

REBUILD_TENSOR_V2 = TorchGlobal("torch._utils", "_rebuild_tensor_v2")
REBUILD_TENSOR_V3 = TorchGlobal("torch._utils", "_rebuild_tensor_v3")  # dtypes without a typed storage
REBUILD_PARAMETER = TorchGlobal("torch._utils", "_rebuild_parameter")
REBUILD_META = TorchGlobal("torch._utils", "_rebuild_meta_tensor_no_storage")  # a meta tensor: no storage
UNTYPED_STORAGE = TorchGlobal("torch.storage", "UntypedStorage")


class _Storage:
    """One ``data/<key>`` record: a 1-D array whose bytes are written there, and the device it was on."""
    __slots__ = ("key", "array", "location", "storage_type")

    def __init__(self, key, array, location):
        self.key, self.array, self.location = key, array, location
        storage_name = STORAGE_OF_DTYPE[array.dtype.name]
        self.storage_type = TorchGlobal("torch", storage_name) if storage_name else UNTYPED_STORAGE

    def persistent_id(self):
        # A byte storage (UntypedStorage) counts its size in bytes, a typed one in elements.
        numel = self.array.size if self.storage_type is not UNTYPED_STORAGE else self.array.nbytes
        return ("storage", self.storage_type, self.key, self.location, numel)


class _MetaData:
    """A meta Parameter's data: ``_rebuild_meta_tensor_no_storage``'s arguments."""
    __slots__ = ("args",)

    def __init__(self, args):
        self.args = args


class _ParameterData:
    """A Parameter's data, pickled as a plain tensor (torch pickles ``Parameter.data`` inside it)."""
    __slots__ = ("array", "location")

    def __init__(self, array, location):
        self.array, self.location = array, location


def contiguous_strides(shape):
    """torch's strides for a contiguous tensor, in elements (a dimension of size 0 counts as 1)."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _address(array):
    return array.__array_interface__["data"][0]


class TorchPickler(pickle._Pickler):
    """A pickler that writes glasstorch tensors, dtypes, devices and sizes under torch's names.

    After :meth:`dump`, ``storages`` maps each storage key to the array to write as ``data/<key>``.
    Tensors that view the same NumPy memory (same owning array, same dtype) share one storage, with
    their own offset and strides, as torch saves views of one storage.
    """

    def __init__(self, file, protocol=2):
        super().__init__(file, protocol)
        self.storages = {}       # key -> _Storage, in the order torch would number them
        self._storage_of = {}    # id(owning array) -> _Storage (the owner is kept alive by it)

    # --- torch's globals -----------------------------------------------------------------------

    def save(self, obj, save_persistent_id=True):
        # Stand-ins and dtypes are written as GLOBAL opcodes; pickle's own save_global would import
        # the module ("torch") to check the name.
        if type(obj) is TorchGlobal:
            return self._save_torch_global(obj, obj)
        reduced = tensors.torch_reduce(obj) if type(obj) not in _PLAIN else None
        if reduced is not None and reduced[0] == "global":
            return self._save_torch_global(obj, TorchGlobal("torch", reduced[1]))
        return super().save(obj, save_persistent_id)

    def _save_torch_global(self, obj, name):
        memo = self.memo.get(id(obj))
        if memo is not None:
            self.write(self.get(memo[0]))
            return
        self.write(pickle.GLOBAL + f"{name.module}\n{name.name}\n".encode("utf-8"))
        self.memoize(obj)

    # --- tensors ---------------------------------------------------------------------------------

    def persistent_id(self, obj):
        return obj.persistent_id() if type(obj) is _Storage else None

    def reducer_override(self, obj):
        if type(obj) is _ParameterData:
            return self._reduce_array(obj.array, False, obj.location)
        uninitialized = tensors.uninitialized_reduction(obj)
        if uninitialized is not None:   # a lazy module's state_dict before its first forward (d2l saves one)
            name, args = uninitialized
            return TorchGlobal("torch.nn.parameter", name), args
        if type(obj) is _MetaData:
            return REBUILD_META, obj.args
        meta = tensors.meta_parts(obj)
        if meta is not None:   # torch: (dtype, size, stride, requires_grad), no storage
            dtype_name, size, stride, requires_grad, is_parameter = meta
            args = (TorchGlobal("torch", dtype_name), size, stride, requires_grad)
            if is_parameter:
                return REBUILD_PARAMETER, (_MetaData(args[:3] + (False,)), requires_grad, OrderedDict())
            return REBUILD_META, args
        parts = tensors.tensor_parts(obj)
        if parts is not None:
            array, requires_grad, is_parameter = parts
            location = tensors.location(obj)
            if is_parameter:
                # torch: Parameter.__reduce_ex__ -> _rebuild_parameter(self.data, self.requires_grad, OrderedDict())
                return REBUILD_PARAMETER, (_ParameterData(array, location), requires_grad, OrderedDict())
            return self._reduce_array(array, requires_grad, location)
        reduced = tensors.torch_reduce(obj) if type(obj) not in _PLAIN else None
        if reduced is not None:  # torch.Size((2, 3)), torch.device('cuda', 1)
            name, args = reduced[1]
            return TorchGlobal("torch", name), args
        return NotImplemented

    def _reduce_array(self, array, requires_grad, location):
        if array.dtype.name not in STORAGE_OF_DTYPE:
            raise TypeError(f"glasstorch.save: cannot save an array of dtype {array.dtype}; torch has no such dtype")
        storage, offset, stride = self._place(array, location)
        args = (storage, offset, tuple(int(n) for n in array.shape), stride, requires_grad, OrderedDict())
        if storage.storage_type is UNTYPED_STORAGE:
            # a byte storage: offset and strides stay in elements, the dtype says what an element is
            return REBUILD_TENSOR_V3, args + (TorchGlobal("torch", array.dtype.name),)
        return REBUILD_TENSOR_V2, args

    def _place(self, array, location):
        """The storage ``array`` is saved in, and its offset and strides there (in elements)."""
        owner = array
        while isinstance(owner.base, xp.ndarray):
            owner = owner.base
        if self._can_share(array, owner):
            storage = self._storage_of.get(id(owner))
            if storage is None:
                # the owner's whole memory, in memory order: torch also saves a view's whole storage
                storage = self._new_storage(owner.ravel(order="K"), location)
                self._storage_of[id(owner)] = storage
            itemsize = array.itemsize
            offset = (_address(array) - _address(owner)) // itemsize
            return storage, offset, tuple(s // itemsize for s in array.strides)
        own = xp.ascontiguousarray(array)
        if not own.dtype.isnative:
            own = own.astype(own.dtype.newbyteorder("="))
        return self._new_storage(own.reshape(-1), location), 0, contiguous_strides(array.shape)

    @staticmethod
    def _can_share(array, owner):
        """Whether ``array`` can be described as (offset, strides) into its owner's memory, as torch can."""
        itemsize = array.itemsize
        return (array.size > 0 and owner.dtype == array.dtype and array.dtype.isnative
                and (owner.flags.c_contiguous or owner.flags.f_contiguous)
                and all(s >= 0 and s % itemsize == 0 for s in array.strides)  # torch has no negative strides
                and (_address(array) - _address(owner)) % itemsize == 0)

    def _new_storage(self, flat, location):
        storage = _Storage(str(len(self.storages)), flat, location)
        self.storages[storage.key] = storage
        return storage
