"""torch's names for what a checkpoint holds, shared by save and load.

A checkpoint's pickle names torch objects as globals: ``torch.FloatStorage`` says "the bytes of
``data/0`` are float32", ``torch._utils._rebuild_tensor_v2`` says "make a tensor out of them".
Writing such a name needs no torch: :class:`TorchGlobal` is a stand-in that the pickler writes as
``GLOBAL 'torch FloatStorage'``. Reading it needs no torch either: the unpickler looks the name up
in an allowlist (``unpickler.py``) whose storage entries are :class:`StorageType` objects.
"""
from .._array import xp
from .. import _dtype

# torch dtype name -> the typed-storage class torch pickles a tensor of that dtype with (named from the
# dtype's legacy name, _dtype.storage_name). The torch dtype names are also NumPy's (ml_dtypes supplies
# bfloat16 and the float8s). Dtypes added to torch after typed storages were frozen (None here) are
# written as a byte storage (``UntypedStorage``) plus the dtype, through ``_rebuild_tensor_v3``.
STORAGE_OF_DTYPE = {
    **{d.name: _dtype.storage_name(d) for d in _dtype.ALL},
    "uint16": None,
    "uint32": None,
    "uint64": None,
    "float8_e4m3fn": None,
    "float8_e5m2": None,
    "float8_e4m3fnuz": None,
    "float8_e5m2fnuz": None,
}
DTYPE_OF_STORAGE = {storage: dtype for dtype, storage in STORAGE_OF_DTYPE.items() if storage}

# Storages torch can write but NumPy has no dtype for: recognised, so the error can say what they are.
UNSUPPORTED_STORAGES = ("ComplexHalfStorage", "QInt8Storage", "QUInt8Storage", "QInt32Storage",
                        "QUInt4x2Storage", "QUInt2x4Storage", "BitsStorage", "Bits8Storage")


def numpy_dtype(name):
    """The NumPy dtype for torch dtype ``name``; bfloat16 and float8 come from the optional ml_dtypes."""
    if name in ("bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64",
                "float16", "float32", "float64", "complex64", "complex128"):
        return xp.dtype(name)
    if name == "bfloat16":   # through glasstorch's bfloat16, which loads ml_dtypes and registers the dtype
        from .._dtype import bfloat16
        if bfloat16.numpy_dtype is not None:
            return bfloat16.numpy_dtype
    try:
        import ml_dtypes
    except ImportError:
        raise RuntimeError(f"loading or saving torch.{name} tensors needs the optional package "
                           f"'ml_dtypes' (pip install ml_dtypes)") from None
    return xp.dtype(getattr(ml_dtypes, name))


class TorchGlobal:
    """Stand-in for the torch object ``module.name``; the pickler writes it as ``GLOBAL module name``.

    Instances are interned, so the pickler's memo writes each global once and refers back to it
    (as torch's own pickles do).
    """
    __slots__ = ("module", "name")
    _interned = {}

    def __new__(cls, module, name):
        key = (module, name)
        if key not in cls._interned:
            self = super().__new__(cls)
            self.module, self.name = module, name
            cls._interned[key] = self
        return cls._interned[key]

    def __call__(self, *args, **kwargs):
        # pickle's save_reduce insists that a reduce function be callable; this one only gets written.
        raise TypeError(f"{self!r} is a placeholder for pickling torch's global, not the real thing")

    def __repr__(self):
        return f"{self.module}.{self.name}"


class StorageType:
    """What ``torch.FloatStorage`` (& co.) means when loading: the element type of a ``data/<key>`` record.

    ``torch.storage.UntypedStorage`` is a storage of bytes (``dtype_name`` None): its tensor's dtype
    comes separately, as the ``dtype`` argument of ``_rebuild_tensor_v3``.
    """
    __slots__ = ("torch_name", "dtype_name")

    def __init__(self, torch_name, dtype_name):
        self.torch_name, self.dtype_name = torch_name, dtype_name

    @property
    def numpy_dtype(self):
        return numpy_dtype(self.dtype_name) if self.dtype_name else xp.dtype("uint8")

    def __repr__(self):
        return self.torch_name


class TorchDtypeName(str):
    """A torch dtype that glasstorch lacks (``torch.uint16``, ``torch.float8_e5m2``): its name.

    Enough to rebuild a tensor through ``_rebuild_tensor_v3``; anywhere else it reads as a string.
    """

    def __repr__(self):
        return "torch." + self
