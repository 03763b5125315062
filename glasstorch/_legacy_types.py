"""The legacy tensor types: ``torch.FloatTensor``, ``torch.LongTensor``, ... and ``torch.cuda.FloatTensor``, ...

Before dtypes existed, torch had one tensor class per element type and device. They survive as
*constructors* and as *type tests*:

    torch.FloatTensor(2, 3)             # a 2x3 float32 tensor (sizes)
    torch.LongTensor([1, 2])            # from data
    x.type(torch.DoubleTensor)          # a conversion, like x.to(torch.float64)
    isinstance(x, torch.FloatTensor)    # True exactly for a float32 CPU tensor

They are not subclasses of Tensor (``issubclass(torch.FloatTensor, torch.Tensor)`` is False, and no
tensor's class is one of them); the ``isinstance`` test is answered by their metaclass,
:class:`tensortype`, from the tensor's dtype and device, as torch's ``__instancecheck__`` does.
"""
from numbers import Integral

from . import _dtype
from ._array import cuda_available
from ._tensor import Size, Tensor, device as _device

__all__ = ["tensortype"]

# The element types that have a legacy type, by the name torch gives them (FloatTensor ...).
_LEGACY_DTYPES = (_dtype.float64, _dtype.float32, _dtype.float16, _dtype.bfloat16, _dtype.int64, _dtype.int32,
                  _dtype.int16, _dtype.int8, _dtype.uint8, _dtype.bool)

_SIGNATURES = (" * (*, torch.device device = None)\n"
               " * (torch.Storage storage)\n"
               " * (Tensor other)\n"
               " * (tuple of ints size, *, torch.device device = None)\n"
               " * (object data, *, torch.device device = None)\n")


def _is_size(value):
    return isinstance(value, Integral) and not isinstance(value, bool)


def _type_name(value):
    """How torch's argument parser names a value's type in its messages."""
    if isinstance(value, Tensor):
        return "Tensor"
    if isinstance(value, _dtype.dtype):
        return "torch.dtype"
    if isinstance(value, _device):
        return "torch.device"
    return type(value).__name__


def _invalid_combination(args, kwargs):
    """torch's TypeError for arguments that match none of the constructor's signatures.

    (torch also says, under each signature, why it did not match; that detail is left out.)
    """
    positional = ", ".join(_type_name(a) for a in args)
    if positional:
        described = positional + "".join(f", {k}={_type_name(v)}" for k, v in kwargs.items())
    else:
        described = "".join(f"{k}={_type_name(v)}, " for k, v in kwargs.items())
    return TypeError(f"new() received an invalid combination of arguments - got ({described}), "
                     f"but expected one of:\n{_SIGNATURES}")


def _options(dtype, device_type):
    """torch's printout of a tensor's options, used in the message for a tensor of the wrong type."""
    return (f"TensorOptions(dtype={_dtype.cpp_name(dtype)}, device={device_type}, layout=Strided, "
            "requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))")


class tensortype(type):
    """The metaclass of the legacy tensor types; ``isinstance(x, torch.FloatTensor)`` asks it.

    A legacy type carries ``dtype``, ``is_cuda``, ``is_sparse`` (always False) and ``layout``.
    """

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.device.type == cls._device_type

    def __subclasscheck__(cls, subclass):
        return subclass is cls

    def __call__(cls, *args, **kwargs):
        return cls._construct(args, kwargs)

    def _construct(cls, args, kwargs):
        """torch's legacy constructor: ``()``, ``(tensor)``, ``(*sizes)``, ``(torch.Size)`` or ``(sequence)``."""
        import glasstorch
        if cls.is_cuda and not cuda_available():
            raise TypeError(f"type torch.cuda.{cls.__name__} not available. Torch not compiled with CUDA enabled.")
        if set(kwargs) - {"device"}:
            raise _invalid_combination(args, kwargs)
        device = kwargs.get("device")
        if device is not None:
            device = _device(device)
            if device.type != cls._device_type:
                raise RuntimeError(f"legacy constructor expects device type: {cls._device_type} "
                                   f"but device type: {device.type} was passed")
        else:
            device = cls._device_type

        if not args:
            return glasstorch.empty(0, dtype=cls.dtype, device=device)

        first = args[0]
        if isinstance(first, Tensor):
            if len(args) > 1 or kwargs:
                raise _invalid_combination(args, kwargs)
            if first.dtype is not cls.dtype or first.device.type != cls._device_type:
                raise TypeError(f"expected {_options(cls.dtype, cls._device_type)} "
                                f"(got {_options(first.dtype, first.device.type)})")
            from .ops.shape import _alias_view
            return _alias_view(first)     # shares the data, as torch's alias does

        if len(args) == 1 and not (_is_size(first) or isinstance(first, Size)) or isinstance(first, bool):
            # one argument that is not a size: the data (a tuple too, unless it is a torch.Size)
            if isinstance(first, str):
                raise TypeError("new(): invalid data type 'str'")
            if not hasattr(first, "__len__") and not hasattr(first, "__array__"):
                raise TypeError(f"new(): data must be a sequence (got {type(first).__name__})")
            return glasstorch.tensor(first, dtype=cls.dtype, device=device)

        sizes = tuple(first) if isinstance(first, Size) and len(args) == 1 else args
        for pos, size in enumerate(sizes, 1):
            if not _is_size(size):
                if pos == 1:
                    raise _invalid_combination(args, kwargs)
                raise TypeError(f"new(): argument 'size' failed to unpack the object at pos {pos} with error "
                                f"\"type must be tuple of ints,but got {type(size).__name__}\"")
        for size in sizes:
            if size < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {size}: {list(sizes)}")
        return glasstorch.empty(tuple(int(s) for s in sizes), dtype=cls.dtype, device=device)

    def __repr__(cls):
        return f"<class 'torch.{'cuda.' if cls.is_cuda else ''}{cls.__name__}'>"


def _make_types(device_type):
    types = {}
    for dtype in _LEGACY_DTYPES:
        name = dtype._legacy + "Tensor"
        types[name] = tensortype(name, (), {
            "dtype": dtype, "is_cuda": device_type == "cuda", "is_sparse": False, "layout": "torch.strided",   # glasstorch.strided
            "_device_type": device_type,
            # where pickle finds the type again (the repr says torch.FloatTensor, as torch's)
            "__module__": "glasstorch.cuda" if device_type == "cuda" else "glasstorch",
            "__doc__": f"The legacy type of {dtype} tensors on the {device_type.upper()}: a constructor and an "
                       "isinstance test (see glasstorch/_legacy_types.py)."})
    return types


_CPU_TYPES = _make_types("cpu")
_CUDA_TYPES = _make_types("cuda")

globals().update(_CPU_TYPES)
__all__ += list(_CPU_TYPES)


def legacy_type_of(dtype, device_type):
    """The legacy type of ``dtype`` tensors on ``device_type`` (``Tensor.new`` constructs with it); a dtype
    without one in torch's list (complex) gets one made for it, unlisted."""
    types = _CUDA_TYPES if device_type == "cuda" else _CPU_TYPES
    name = dtype._legacy + "Tensor"
    if name not in types:
        types[name] = tensortype(name, (), {"dtype": dtype, "is_cuda": device_type == "cuda", "is_sparse": False,
                                            "layout": "torch.strided", "_device_type": device_type})
    return types[name]


def legacy_type_from_string(name):
    """The ``(dtype, device type)`` a legacy type string names: ``'torch.cuda.FloatTensor'`` -> (float32, 'cuda').

    ``'torch.Tensor'`` names the default dtype. Anything else is torch's ``ValueError: invalid type``.
    """
    if name == "torch.Tensor":
        return _dtype.get_default_dtype(), "cpu"
    if name.startswith("torch.cuda."):
        table = _CUDA_TYPES
    elif name.startswith("torch."):
        table = _CPU_TYPES
    else:
        table = {}
    legacy = table.get(name.rsplit(".", 1)[-1])
    if legacy is None:
        raise ValueError(f"invalid type: '{name}'")
    return legacy.dtype, legacy._device_type
