"""The only module here that touches glasstorch objects: it turns them into arrays and names and back.

Everything else in ``_serialization`` works on NumPy arrays and plain values, so the format code
does not depend on the internals of ``Tensor``. glasstorch is imported lazily (this package is
imported while ``glasstorch/__init__.py`` is still running).
"""
import functools

from .. import _array
from .names import TorchDtypeName


@functools.cache
def _core():
    import glasstorch
    return glasstorch


@functools.cache
def _parameter_class():
    """``glasstorch.nn.Parameter`` when the nn package provides it, else None."""
    try:
        from glasstorch.nn.parameter import Parameter
    except ImportError:
        return None
    return Parameter


def is_tensor(obj):
    return isinstance(obj, _core().Tensor)


def meta_parts(obj):
    """``(dtype name, size, stride, requires_grad, is_parameter)`` for a meta tensor (torch saves it
    with no storage); None for anything else."""
    if not isinstance(obj, _core().Tensor) or not obj.is_meta:
        return None
    parameter = _parameter_class()
    return (obj.dtype.name, tuple(obj.shape), obj.stride(), bool(obj.requires_grad),
            parameter is not None and isinstance(obj, parameter))


def make_meta_tensor(dtype_name, size, stride, requires_grad):
    """A meta tensor of that dtype, size and stride (in elements)."""
    from .names import numpy_dtype
    dtype = numpy_dtype(dtype_name)
    array = _array.MetaArray(tuple(size), dtype, tuple(s * dtype.itemsize for s in stride))
    tensor = _core()._tensor._wrap(array)
    return tensor.requires_grad_(True) if requires_grad else tensor
def uninitialized_reduction(obj):
    """``(class name, args)`` for a lazy module's uninitialized parameter or buffer, pickled as torch's
    ``UninitializedTensorMixin.__reduce_ex__`` pickles it: its class and ``(requires_grad,)`` (there is no
    data to save); None for anything else."""
    try:
        from glasstorch.nn.parameter import UninitializedTensorMixin
    except ImportError:
        return None
    if not isinstance(obj, UninitializedTensorMixin):
        return None
    return type(obj).__name__, (bool(obj.requires_grad),)


def tensor_parts(obj):
    """``(host array, requires_grad, is_parameter)`` for a glasstorch tensor; None for anything else."""
    if not isinstance(obj, _core().Tensor):
        return None
    parameter = _parameter_class()
    array = _array.as_numpy(obj._data)  # a GPU tensor is saved from a host copy, as torch does
    return array, bool(obj.requires_grad), parameter is not None and isinstance(obj, parameter)


def location(obj):
    """torch's location tag for a tensor's storage: 'cpu' or 'cuda:0'."""
    device = obj.device
    return "cpu" if device.type == "cpu" else f"{device.type}:{device.index or 0}"


def make_tensor(array, requires_grad, is_parameter, device="cpu"):
    """A glasstorch tensor over ``array`` (sharing its memory on the CPU)."""
    gt = _core()
    try:
        tensor = gt.from_numpy(array)
    except TypeError:
        raise RuntimeError(f"glasstorch.load: the checkpoint holds a torch.{array.dtype} tensor, and glasstorch "
                           "has no such dtype") from None
    if device != "cpu":
        tensor = tensor.to(device)
    gt._tensor.count_the_set(tensor)   # (torch rebuilds a tensor with a set_: it starts at version 1)
    if is_parameter:
        return as_parameter(tensor, requires_grad)
    return tensor.requires_grad_(True) if requires_grad else tensor


def as_parameter(tensor, requires_grad):
    """``nn.Parameter(tensor, requires_grad)``; a tensor with that ``requires_grad`` if nn has no Parameter."""
    parameter = _parameter_class()
    if parameter is not None:
        return parameter(tensor, requires_grad=requires_grad)
    return tensor.requires_grad_(requires_grad)


def torch_reduce(obj):
    """How torch pickles a glasstorch dtype, device or Size: ``(kind, payload)``, or None for others.

    kind is "global" (payload: the torch name, e.g. "float32") or "call" (payload: torch name and
    arguments, e.g. ``("device", ("cuda", 1))``).
    """
    gt = _core()
    if isinstance(obj, gt.dtype):
        return "global", obj.name
    if isinstance(obj, gt.Size):
        return "call", ("Size", (tuple(int(d) for d in obj),))
    if isinstance(obj, gt.device):
        args = (obj.type,) if obj.index is None else (obj.type, obj.index)
        return "call", ("device", args)
    return None


def cuda_available():
    return _array.cuda_available()


# --- what torch's plain-value globals become on load -------------------------------------------

def dtype(name):
    """glasstorch's dtype called ``name``; a :class:`TorchDtypeName` when glasstorch has none."""
    found = getattr(_core(), name, None)
    return found if isinstance(found, _core().dtype) else TorchDtypeName(name)


def size(dims=()):
    return _core().Size(dims)


def device(*args):
    return _core().device(*args)


def layout(name):
    """glasstorch's ``name`` layout (``strided``) if it has one, else the name."""
    return getattr(_core(), name, name)


def tensor_type(kind):
    """The class torch names ``torch.Tensor`` / ``torch.nn.parameter.Parameter`` stands for here."""
    if kind == "Parameter":
        return _parameter_class() or _core().Tensor
    return _core().Tensor
