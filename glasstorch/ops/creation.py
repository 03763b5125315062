"""Making tensors: from data, filled, ranges, random; the default device; and dtype/device conversion
(ToCopyBackward0).

Every factory takes ``device=``: ``'cpu'`` (NumPy), ``'meta'`` (a shape, dtype and strides, no data:
``_array/meta.py``) or ``'cuda'`` (CuPy). With no ``device=`` a factory makes its tensor on the
default device: cpu, or what ``torch.set_default_device`` or an enclosing ``with torch.device(...):``
chose; the ``*_like`` and ``Tensor.new_*`` functions take their tensor's device instead.
"""
import builtins
import math
import numbers
import warnings

from .. import _checks, _dtype
from .._tensor import Tensor, _wrap, _init, device as _device, Size
from .._array import xp, namespace, device_type_of, to_device, as_numpy, copy_preserving_layout, cuda_available, meta, \
    has_values
from ._op import method
from ._derivatives import to_copy_backward
from ..autograd import grad_mode
from .._seam import seam
from .._ops import defop, aten, node_classes_of
from .. import _warnings

__getattr__ = node_classes_of(__name__)    # (the node classes declared here, by name: TanhBackward0)

# What glasstorch (torch) has at its top level from this family; the other public functions here are
# Tensor methods only (x.view(...)) or torch.linalg's.
__all__ = ["tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones", "empty", "full", "zeros_like",
           "ones_like", "empty_like", "full_like", "eye", "arange", "linspace", "logspace", "scalar_tensor",
           "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "rand", "randn", "randint",
           "rand_like", "randn_like", "randint_like", "randperm", "normal", "bernoulli", "multinomial",
           "poisson", "binomial", "Generator", "set_default_device", "get_default_device"]


# ---------------------------------------------------------------------------------------------
# The default device: where a factory called without device= makes its tensor
# ---------------------------------------------------------------------------------------------
_default_devices = []      # the `with torch.device(...):` blocks in force, innermost last
_set_default = [None]      # set_default_device's choice (None: cpu)


def set_default_device(device):
    """Make factories called without ``device=`` (``zeros``, ``randn``, ``tensor``, the layers'
    parameters...) create their tensors on ``device``; ``None`` goes back to the CPU.

    Example::

        >>> import glasstorch as torch
        >>> torch.set_default_device("meta")
        >>> torch.zeros(2).device
        device(type='meta')
        >>> torch.set_default_device(None)
    """
    _set_default[0] = None if device is None else _device(device)


def get_default_device():
    """The device factories use when given none (``torch.get_default_device``)."""
    chosen = _default_device()
    return _device("cpu") if chosen is None else chosen


def _default_device():
    return _default_devices[-1] if _default_devices else _set_default[0]


def _enter_device(device):
    """``with torch.device("meta"):`` -- the factories inside make their tensors there."""
    _default_devices.append(device)


def _exit_device(device):
    _default_devices.pop()


def _device_type(device):
    """The device type a factory's ``device=`` argument (or the default device) names."""
    if device is None:
        device = _default_device()
        if device is None:
            return "cpu"
    return device.type if isinstance(device, _device) else _device(device).type


def _is_meta(device):
    return _device_type(device) == "meta"


def _np_dtype(dtype):
    return _dtype.numpy_dtype(dtype)


def _infer_dtype(data):
    """torch's inference: bools -> bool, ints -> int64, floats -> default, nested lists by their widest."""
    if isinstance(data, Tensor):
        return data.dtype
    if isinstance(data, xp.ndarray) or hasattr(data, "__cuda_array_interface__"):
        return _dtype.from_numpy_dtype(data.dtype)
    if isinstance(data, xp.generic):
        return _dtype.from_numpy_dtype(data.dtype)
    found = _scan(data)
    return _dtype.get_default_dtype() if found is None else found


def _scan(data):
    """The promoted dtype of a (nested) sequence's elements: Python bools, ints and floats count as
    bool, int64 and the default float; NumPy scalars, arrays and tensors as their own dtype
    (torch.tensor([np.int32(1), np.int32(2)]) is int32, [np.int32(1), 5] is int64)."""
    if isinstance(data, bool):
        return _dtype.bool
    if isinstance(data, numbers.Integral) and not isinstance(data, xp.generic):
        return _dtype.int64
    if isinstance(data, (xp.generic, xp.ndarray)):
        return _dtype.from_numpy_dtype(data.dtype)
    if isinstance(data, numbers.Real):
        return _dtype.get_default_dtype()
    if isinstance(data, numbers.Complex):
        return _dtype.complex64 if _dtype.get_default_dtype() is _dtype.float32 else _dtype.complex128
    if isinstance(data, Tensor):
        return data.dtype
    if isinstance(data, (list, tuple)):
        if data and all(isinstance(x, str) for x in data):
            raise ValueError("too many dimensions 'str'")
        best = None
        for x in data:
            d = _scan(x)
            best = d if best is None else (best if d is None or d is best else _dtype.promote_types(best, d))
        return best
    if isinstance(data, str):
        raise TypeError(f"new(): invalid data type 'str'")
    raise RuntimeError(f"Could not infer dtype of {type(data).__name__}")


def _holds_tensor(data):
    """Whether a (nested) list holds a Tensor anywhere."""
    return any(isinstance(x, Tensor) or (isinstance(x, (list, tuple)) and _holds_tensor(x)) for x in data)


def _to_array(data, dtype):
    nd = _np_dtype(dtype)
    if isinstance(data, Tensor):
        return data._data.astype(nd, copy=True)
    if isinstance(data, (list, tuple)) and _holds_tensor(data):
        # a tensor inside a list is one number, as torch reads it (``tensor([t1, t2])`` with ``t1`` of
        # shape (1,) and ``t2`` 0-d is of shape (2,)): any one-element tensor, nothing bigger
        for x in data:
            if isinstance(x, Tensor) and x.numel() != 1:
                raise ValueError("only one element tensors can be converted to Python scalars")
        data = [_to_array(x, dtype).reshape(()) if isinstance(x, Tensor)
                else _to_array(x, dtype) if isinstance(x, (list, tuple)) else x for x in data]
    if isinstance(data, str):
        raise ValueError("too many dimensions 'str'")
    if nd.kind in "iu" and not isinstance(data, (xp.ndarray, xp.generic)):
        # Python numbers into an integer dtype: torch refuses what does not fit (NumPy wraps or raises
        # OverflowError, depending on its version), so look at the values as they are first
        try:
            with warnings.catch_warnings():   # (NumPy 1.x warns, then makes an object array of ragged lists)
                warnings.simplefilter("ignore")
                reference = xp.array(data)
        except (OverflowError, ValueError):
            reference = None
        if reference is not None and reference.dtype.kind == "O":
            ragged = _ragged_error(data)
            if ragged is not None:
                raise ragged
        if reference is not None and reference.dtype.kind in "iufbO":
            _checks.check_fits(reference, _dtype.from_numpy_dtype(nd))
            return reference.astype(nd)  # -1 into uint8 is 255, as in torch (NumPy 2 refuses the cast in array())
    try:
        return xp.array(data, dtype=nd)
    except ValueError as e:
        ragged = _ragged_error(data)
        if ragged is not None:
            raise ragged from None
        raise
    except OverflowError:
        raise _checks.int64_overflow() from None


def _ragged_error(data, dim=0):
    """torch's message for nested lists of unequal lengths: the first mismatch, depth first."""
    if isinstance(data, (list, tuple)) and data:
        n = None
        for x in data:
            if isinstance(x, (list, tuple)):
                if n is None:
                    n = len(x)
                elif len(x) != n:
                    return ValueError(f"expected sequence of length {n} at dim {dim + 1} (got {len(x)})")
        for x in data:
            e = _ragged_error(x, dim + 1)
            if e is not None:
                return e
    return None


def _leaf(t, requires_grad):
    """A factory's result, requiring grad if asked (torch's factory message for other dtypes)."""
    if requires_grad:
        if t._data.dtype.kind not in "fc" and t.dtype is not _dtype.bfloat16:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t._requires_grad = True
    return t


def _place(arr, device):
    if device is None and not _default_devices and _set_default[0] is None:
        return arr
    return to_device(arr, _device_type(device))


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Copy ``data`` (numbers, nested lists, arrays, tensors) into a new leaf tensor."""
    if seam.on:
        return seam.torch_function(tensor, (data,), dict(dtype=dtype, device=device, requires_grad=requires_grad,
                                                         pin_memory=pin_memory))
    if isinstance(data, Tensor):   # (at the user's line, also when the seam's frames come in between)
        _warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
                       "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor).")
    if dtype is None:
        dtype = _infer_dtype(data)
    try:   # (inline, not @_checks.allocates: the glass's observers know torch.tensor by this function)
        array = _to_array(data, dtype)
    except MemoryError as e:
        raise _checks.memory_error(e) from None
    return _leaf(_wrap(_place(array, device)), requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Share memory with ``data`` when it is already an array/tensor of the right dtype and device."""
    if seam.on:
        return seam.torch_function(as_tensor, (data,), dict(dtype=dtype, device=device))
    if isinstance(data, Tensor):
        if (dtype is None or data.dtype is dtype) and (device is None or data.device == _device(device)):
            return data
        return data.to(dtype=dtype, device=device)
    if isinstance(data, xp.ndarray) and (dtype is None or data.dtype == _np_dtype(dtype)) and _device_type(device) == "cpu":
        _dtype.from_numpy_dtype(data.dtype)
        return _wrap(data)
    return tensor(data, dtype=dtype, device=device)


asarray = as_tensor


def from_numpy(ndarray):
    """A tensor sharing memory with ``ndarray`` (writes through either are seen by both)."""
    if seam.on:
        return seam.torch_function(from_numpy, (ndarray,), {})
    if not isinstance(ndarray, xp.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _dtype.from_numpy_dtype(ndarray.dtype)
    if ndarray.dtype.kind == "u" and ndarray.dtype.itemsize > 1:
        raise TypeError(f"can't convert np.ndarray of type numpy.{ndarray.dtype}. The only supported types are: "
                        "float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool.")
    return _wrap(ndarray)


def _size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list, Size)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, (int, xp.integer)) and not (isinstance(s, Tensor) and s.dim() == 0):
            raise TypeError(f"empty(): argument 'size' must be tuple of ints, but found element of type "
                            f"{type(s).__name__}")
        if int(s) < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {int(s)}: {list(size)}")
    return tuple(int(s) for s in size)


def _ns(device):
    return namespace(_device_type(device))


def _filled(fill, size, dtype, device, requires_grad):
    dtype = dtype or _dtype.get_default_dtype()
    ns = _ns(device)
    shape = _size(size)
    nd = _np_dtype(dtype)
    try:
        arr = ns.zeros(shape, nd) if fill == 0 else ns.full(shape, fill, nd)
    except (MemoryError, ValueError) as e:  # ValueError: NumPy's "array is too big" (past the address space)
        if isinstance(e, ValueError) and "too big" not in str(e):
            raise
        raise _checks.out_of_memory(shape, nd.itemsize) from None
    return _leaf(_wrap(arr), requires_grad)


def _size_keyword(fn, method=False):
    """torch.zeros(size=(2, 3)) as well as zeros(2, 3) and zeros((2, 3)): the keyword joins the
    positional form (Python cannot name both ``*size`` and a ``size=`` keyword). ``method``: the
    first positional argument is ``self``, not a size (``x.new_zeros(size=...)``)."""
    import functools

    @functools.wraps(fn)
    def accepting(*args, **kwargs):
        if "size" in kwargs:
            if args[int(method):]:
                raise TypeError(f"{fn.__name__}() got multiple values for argument 'size'")
            size = kwargs.pop("size")
            if not isinstance(size, (tuple, list, Size)):
                raise TypeError(f"{fn.__name__}(): argument 'size' must be tuple of ints, "
                                f"not {_checks.type_name(size)}")
            args = args[:int(method)] + (tuple(size),)
        return fn(*args, **kwargs)
    return accepting



@_size_keyword
@_checks.factory_with_out
def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    sz = size[0] if len(size) == 1 and isinstance(size[0], (tuple, list, Size)) else size
    if any(isinstance(n, int) and n < 0 for n in sz):
        raise RuntimeError("zeros: Dimension size must be non-negative.")
    return _filled(0, size, dtype, device, requires_grad)


@_size_keyword
@_checks.factory_with_out
def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    return _filled(1, size, dtype, device, requires_grad)


@_size_keyword
@_checks.factory_with_out
def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
          memory_format=None):
    return _filled(0, size, dtype, device, requires_grad)


@_checks.factory_with_out
def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    if dtype is None:
        dtype = _dtype.scalar_dtype(fill_value) if not isinstance(fill_value, Tensor) else fill_value.dtype
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if not isinstance(size, (tuple, list, Size)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not {_checks.type_name(size)}")
    return _filled(fill_value, (size,), dtype, device, requires_grad)


def _like(input, dtype, device, fn_name="empty_like"):
    """The dtype and device of a ``*_like`` result: ``input``'s unless given (not the default device's)."""
    _checks.expect_tensor(fn_name, input)
    return (dtype or input.dtype), (device if device is not None else input.device)


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    d, dev = _like(input, dtype, device, "zeros_like")
    return _filled(0, input.shape, d, dev, requires_grad)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    d, dev = _like(input, dtype, device, "ones_like")
    return _filled(1, input.shape, d, dev, requires_grad)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    return zeros_like(input, dtype=dtype, device=device, requires_grad=requires_grad)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    d, dev = _like(input, dtype, device, "empty_like")
    return _filled(fill_value, input.shape, d, dev, requires_grad)


def _new(name, fill):
    """``Tensor.new_zeros/new_ones/new_empty``: sizes as ``zeros`` takes them (``size=`` included),
    dtype and device ``self``'s unless given."""
    def new(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
        return _filled(fill, size, dtype or self.dtype, device or self.device, requires_grad)
    new.__name__ = new.__qualname__ = name
    return _size_keyword(new, method=True)


Tensor.new_zeros = _new("new_zeros", 0)
Tensor.new_ones = _new("new_ones", 1)
Tensor.new_empty = _new("new_empty", 0)


def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    return _filled(fill_value, (tuple(size),), dtype or self.dtype, device or self.device, requires_grad)


def _new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    return tensor(data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


Tensor.new_full = _new_full
Tensor.new_tensor = _new_tensor


@_checks.factory_with_out
@_checks.allocates
def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    if n < 0 or (m is not None and m < 0):
        raise RuntimeError(f"n must be greater or equal to 0, got {n}" if n < 0 else
                           f"m must be greater or equal to 0, got {m}")
    t = _wrap(_ns(device).eye(n, n if m is None else m, dtype=_np_dtype(dtype or _dtype.get_default_dtype())))
    return _leaf(t, requires_grad)


@_checks.factory_with_out
@_checks.allocates
def arange(start, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    start, end, step = vals
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not all(math.isfinite(v) for v in vals):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (end - start) / step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype is None:
        dtype = _dtype.int64 if all(isinstance(v, (int, xp.integer)) for v in vals) else _dtype.get_default_dtype()
    n = int(-(-(end - start) // step)) if dtype.category <= _dtype.INT else int(xp.ceil((end - start) / step))
    if _is_meta(device):
        return _leaf(_wrap(meta.zeros((n,), _np_dtype(dtype))), requires_grad)
    # computed as torch does: start + i * step in the output dtype's accumulation type
    arr = (start + xp.arange(n, dtype="float64" if dtype.category >= _dtype.FLOAT else "int64") * step)
    t = _wrap(_place(arr.astype(_np_dtype(dtype)), device))
    return _leaf(t, requires_grad)


@_checks.factory_with_out
def range_(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """torch.range (deprecated in torch): includes ``end``."""
    return arange(start, end + step / 2 if end is not None else None, step, dtype=dtype or _dtype.get_default_dtype(),
                  device=device, requires_grad=requires_grad)


@_checks.factory_with_out
@_checks.allocates
def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dtype = dtype or _dtype.get_default_dtype()
    if _is_meta(device):
        return _leaf(_wrap(meta.zeros((steps,), _np_dtype(dtype))), requires_grad)
    start = start.item() if isinstance(start, Tensor) else start
    end = end.item() if isinstance(end, Tensor) else end
    # torch fills the first half from start and the second half from end (symmetric rounding)
    step = (end - start) / (steps - 1) if steps > 1 else 0
    i = xp.arange(steps, dtype="float64")
    half = steps // 2
    arr = xp.where(i < half, start + step * i, end - step * (steps - 1 - i)) if steps > 1 else \
        xp.full(steps, start, "float64")
    t = _wrap(_place(arr.astype(_np_dtype(dtype)), device))
    return _leaf(t, requires_grad)


@_checks.factory_with_out
@_checks.allocates
def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    lin = linspace(start, end, steps, dtype=_dtype.float64, device=device)
    t = _wrap((base ** lin._data).astype(_np_dtype(dtype or _dtype.get_default_dtype())))
    return _leaf(t, requires_grad)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    return tensor(s, dtype=dtype or _dtype.get_default_dtype(), device=device, requires_grad=requires_grad)


# ---------------------------------------------------------------------------------------------
# dtype / device conversion
# ---------------------------------------------------------------------------------------------
def _to_copy_kernel(self, *, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False,
                    memory_format=None):
    """A copy of ``self`` on ``device`` in ``dtype`` (either None: kept), laid out as the input
    (torch's preserve_format)."""
    d = self
    if device is not None and device.type != device_type_of(d):
        d = to_device(d, device.type)
    if dtype is not None and _np_dtype(dtype) != d.dtype:
        return copy_preserving_layout(d, _np_dtype(dtype))
    return copy_preserving_layout(d) if d is self else d


_to_copy_op = defop("_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
                    "bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor",
                    _to_copy_kernel, node="ToCopyBackward0",
                    self=lambda grad, self_dtype, self_device: to_copy_backward(grad, self_dtype, self_device))


def _parse_to(args, kwargs):
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    for a in args:
        if isinstance(a, _dtype.dtype):
            dtype = a
        elif isinstance(a, (str, _device, int)) and not isinstance(a, bool):
            if isinstance(a, int) and not cuda_available():  # t.to(5): an accelerator index
                raise RuntimeError("Cannot access accelerator device when none is available.")
            device = a
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, bool):
            pass
        elif a is None:
            pass
        else:
            raise TypeError(f"to() received an invalid combination of arguments - got ({type(a).__name__})")
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if dtype is not None and not isinstance(dtype, _dtype.dtype):
        dtype = _checks.as_dtype(dtype, "to")
    return dtype, (None if device is None else _device(device)), copy


@method()
def to(self, *args, **kwargs):
    if seam.on:
        return seam.torch_function(to, (self,) + args, kwargs)
    dtype, device, copy = _parse_to(args, dict(kwargs))
    same_dtype = dtype is None or dtype.numpy_dtype == self._data.dtype
    same_dev = device is None or device.type == self.device.type
    if same_dtype and same_dev and not copy:
        return self
    dtype, device = None if same_dtype else dtype, None if same_dev else device
    target = self._data.dtype if dtype is None else dtype.numpy_dtype
    if not self._requires_grad or target.kind in "fc" or _dtype.is_bfloat16_numpy(target):
        return _to_copy_op(self, dtype=dtype, device=device)
    with grad_mode.no_grad():   # (an integral copy of a tensor that requires grad does not require it)
        return _to_copy_op(self, dtype=dtype, device=device)


def _caster(name, dt):
    def cast(self, memory_format=None):
        if seam.on:
            return seam.torch_function(cast, (self,), {} if memory_format is None else {"memory_format": memory_format})
        return to(self, dt)
    cast.__name__, cast.__qualname__ = name, "Tensor." + name
    return cast


for _name, _dt in [("float", _dtype.float32), ("double", _dtype.float64), ("half", _dtype.float16),
                   ("bfloat16", _dtype.bfloat16), ("long", _dtype.int64), ("int", _dtype.int32),
                   ("short", _dtype.int16), ("char", _dtype.int8), ("byte", _dtype.uint8), ("bool", _dtype.bool),
                   ("cfloat", _dtype.complex64), ("cdouble", _dtype.complex128)]:
    setattr(Tensor, _name, _caster(_name, _dt))


def _cpu(self, memory_format=None):
    """``self`` on the CPU (itself when it is there already): ``to("cpu")``."""
    if seam.on:
        return seam.torch_function(_cpu, (self,), {} if memory_format is None else {"memory_format": memory_format})
    return to(self, "cpu")


def _cuda(self, device=None, non_blocking=False, memory_format=None):
    """``self`` on a CUDA device (``device``: an index or a device; the current one by default)."""
    if seam.on:
        return seam.torch_function(_cuda, (self,), {"device": device, "non_blocking": non_blocking})
    return to(self, "cuda" if device is None else _device("cuda", device) if isinstance(device, int) else device)


def _type_as(self, other):
    """``self`` converted to ``other``'s dtype: ``to(other.dtype)``."""
    if seam.on:
        return seam.torch_function(_type_as, (self, other), {})
    return to(self, other.dtype)


def _pin_memory(self, device=None):
    """Page-locked memory is a CUDA matter: on the CPU the tensor is returned as it is."""
    return self


def _is_pinned(self, device=None):
    return False


def _share_memory_(self):
    """Shared memory between processes: NumPy arrays are not moved; the tensor is returned."""
    return self


def _is_shared(self):
    return False


for _name, _method in [("cpu", _cpu), ("cuda", _cuda), ("type_as", _type_as), ("pin_memory", _pin_memory),
                       ("is_pinned", _is_pinned), ("share_memory_", _share_memory_), ("is_shared", _is_shared)]:
    _method.__name__, _method.__qualname__ = _name, "Tensor." + _name   # (named as torch's, not <lambda>)
    setattr(Tensor, _name, _method)
del _name, _method


# ---------------------------------------------------------------------------------------------
# Randomness: numpy Generators (values differ from torch's for the same seed; the API is torch's)
# ---------------------------------------------------------------------------------------------
class Generator:
    """torch.Generator: a seedable source of random numbers."""

    def __init__(self, device="cpu"):
        self.device = _device(device)
        self._seed = 67280421310721
        self._numpy_rng = None

    @property
    def _rng(self):
        """The NumPy generator that draws, seeded from ``_seed`` at the first draw after a seeding:
        ``default_generator`` exists from ``import glasstorch`` on, and making it there imported
        ``numpy.random`` (with ``secrets``, ``hashlib``, ``random``) into every process, ~10% of the import."""
        if self._numpy_rng is None:
            self._numpy_rng = xp.random.Generator(xp.random.PCG64(self._seed & 0xFFFFFFFFFFFFFFFF))
        return self._numpy_rng

    def manual_seed(self, seed):
        seed = int(seed)  # as torch: manual_seed(1.5) is seed 1, manual_seed('a') a ValueError
        if not -(1 << 63) <= seed < (1 << 64):  # torch takes int64 and uint64 seeds
            raise _checks.int64_overflow()
        self._seed = seed
        self._numpy_rng = None
        return self

    def seed(self):
        import random
        return self.manual_seed(random.getrandbits(63))._seed

    def initial_seed(self):
        return self._seed

    def get_state(self):
        import pickle
        return tensor(list(pickle.dumps(self._rng.bit_generator.state)), dtype=_dtype.uint8)

    def set_state(self, state):
        import pickle
        self._rng.bit_generator.state = pickle.loads(bytes(as_numpy(state._data).tolist()))
        return self


default_generator = Generator()


def manual_seed(seed):
    default_generator.manual_seed(seed)
    return default_generator


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(state):
    default_generator.set_state(state)


def _rng(generator):
    if generator is None:
        return default_generator._rng
    if not isinstance(generator, Generator):
        raise TypeError(f"argument 'generator' must be torch.Generator, not {_checks.type_name(generator)}")
    return generator._rng


def _random(sample, size, dtype, generator, requires_grad, device=None):
    dtype = dtype or _dtype.get_default_dtype()
    shape = _size(size)
    if _is_meta(device):   # (nothing drawn: torch's meta factories leave the generator's state alone too)
        return _leaf(_wrap(meta.zeros(shape, _np_dtype(dtype))), requires_grad)
    try:
        arr = sample(_rng(generator), shape).astype(_np_dtype(dtype), copy=False)
    except (MemoryError, ValueError) as e:  # ValueError: NumPy's "array is too big" (past the address space)
        if isinstance(e, ValueError) and "too big" not in str(e):
            raise
        raise _checks.out_of_memory(shape, _np_dtype(dtype).itemsize) from None
    t = _wrap(_place(arr, device))
    return _leaf(t, requires_grad)


@_size_keyword
@_checks.factory_with_out
def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    return _random(lambda r, s: r.random(s, dtype="float64" if (dtype or _dtype.get_default_dtype()) is _dtype.float64
                                         else "float32"), size, dtype, generator, requires_grad, device)


@_size_keyword
@_checks.factory_with_out
def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    return _random(lambda r, s: r.standard_normal(s, dtype="float64" if (dtype or _dtype.get_default_dtype())
                                                  is _dtype.float64 else "float32"),
                   size, dtype, generator, requires_grad, device)


@_checks.factory_with_out
def randint(low=0, high=None, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
            requires_grad=False):
    if size is None:
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    return _random(lambda r, s: r.integers(low, high, s), (size,), dtype or _dtype.int64, generator, requires_grad,
                   device)


def rand_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return rand(*input.shape, dtype=dtype or input.dtype, device=device or input.device, requires_grad=requires_grad)


def randn_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return randn(*input.shape, dtype=dtype or input.dtype, device=device or input.device, requires_grad=requires_grad)


def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False):
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(input.shape), dtype=dtype or input.dtype, device=device or input.device)


@_checks.factory_with_out
def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    return _random(lambda r, s: r.permutation(n), (n,), dtype or _dtype.int64, generator, requires_grad, device)


@_checks.factory_with_out
def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None, device=None, requires_grad=False):
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        m = mean._data if isinstance(mean, Tensor) else mean
        s = std._data if isinstance(std, Tensor) else std
        _checks.check_std(s)
        shape = xp.broadcast_shapes(xp.shape(m), xp.shape(s))
        ref = mean if isinstance(mean, Tensor) else std
        if ref.is_meta:
            return _wrap(meta.zeros(shape, ref._data.dtype))
        return _wrap((m + s * _rng(generator).standard_normal(shape)).astype(ref._data.dtype))
    if size is None:
        raise TypeError("normal() missing required argument 'size'")
    _checks.check_std(std)
    return _random(lambda r, sh: r.normal(mean, std, sh), (size,), dtype, generator, requires_grad, device)


@method()
def bernoulli(input, p=None, *, generator=None):
    if input.is_meta:
        return _wrap(meta.zeros(input.shape, input._data.dtype))
    prob = input._data if p is None else p
    _checks.check_probability("bernoulli_", prob)
    return _wrap((_rng(generator).random(input.shape) < prob).astype(input._data.dtype))


@method()
@_checks.allocates
def multinomial(input, num_samples, replacement=False, *, generator=None):
    if input.is_meta:   # (the shape only: the checks on the probabilities need their values)
        return _wrap(meta.zeros(tuple(input.shape[:-1]) + (num_samples,), "int64"))
    p = as_numpy(input._data).astype("float64")
    if (p < 0).any() or not xp.isfinite(p).all():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    one = p.ndim == 1
    p2 = p.reshape(1, -1) if one else p
    if not replacement and num_samples > p2.shape[1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    rng = _rng(generator)
    rows = []
    for row in p2:
        s = row.sum()
        if s <= 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        if not replacement and (row > 0).sum() < num_samples:
            raise RuntimeError("invalid multinomial distribution (with replacement=False, not enough non-negative "
                               "category to sample)")
        rows.append(rng.choice(len(row), size=num_samples, replace=replacement, p=row / s))
    out = xp.array(rows, dtype="int64")
    return _wrap(out[0] if one else out)


def poisson(input, generator=None):
    if input.is_meta:
        return _wrap(meta.zeros(input.shape, input._data.dtype))
    return _wrap(xp.asarray(_rng(generator).poisson(input._data), dtype=input._data.dtype))   # (0-d: an int)


def _standard_gamma(input, generator=None):
    """Draws from Gamma(input, 1), one per element (torch._standard_gamma; not differentiable here:
    distributions.Gamma adds the reparameterised gradient). Drawn in float64, so small concentrations
    keep their tiny draws, then cast to the input's dtype."""
    if input.is_meta:
        return _wrap(meta.zeros(input.shape, input._data.dtype))
    draws = _rng(generator).standard_gamma(xp.asarray(as_numpy(input._data), dtype="float64"))
    return _wrap(xp.asarray(draws, dtype=input._data.dtype))   # (a 0-d input draws a Python float)


def _sample_dirichlet(input, generator=None):
    """Draws from Dirichlet(input) along the last dim (torch._sample_dirichlet): normalised Gamma draws."""
    if input.is_meta:
        return _wrap(meta.zeros(input.shape, input._data.dtype))
    gammas = _rng(generator).standard_gamma(xp.asarray(as_numpy(input._data), dtype="float64"))
    return _wrap((gammas / gammas.sum(-1, keepdims=True)).astype(input._data.dtype))


def binomial(count, prob, generator=None):
    """Draws from Binomial(count, prob) elementwise (torch.binomial)."""
    if count.is_meta:
        return _wrap(meta.zeros(count.shape, count._data.dtype))
    n, p = xp.broadcast_arrays(as_numpy(count._data), as_numpy(prob._data))
    return _wrap(xp.asarray(_rng(generator).binomial(n.astype("int64"), p), dtype=count._data.dtype))


def _uniform_(r, s, a=0.0, b=1.0):
    if a > b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={a:g} > to={b:g}")
    return r.uniform(a, b, s)


def _normal_(r, s, mean=0.0, std=1.0):
    _checks.check_std(std)
    return r.normal(mean, std, s)


def _bernoulli_(r, s, p=0.5):
    _checks.check_probability("bernoulli_", p)
    return r.random(s) < p


# random_() with no bounds draws from [0, 2**digits] for floating types (every integer the type holds
# exactly), [0, max] for integer types, as torch's random_impl does (both ends included)
_RANDOM_FLOAT_DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}


def _random_(r, s, dtype, low=0, high=None):
    if high is None and not low:
        name = str(dtype).replace("torch.", "")
        if name == "bool":
            top = 1
        elif name in _RANDOM_FLOAT_DIGITS:
            top = 2 ** _RANDOM_FLOAT_DIGITS[name]
        else:
            top = int(xp.iinfo(dtype.numpy_dtype).max)
        return r.integers(0, top, s, dtype=xp.int64 if top < 2 ** 63 else xp.uint64, endpoint=True)
    if high is None:
        low, high = 0, low
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    return r.integers(low, high, s)


# ---- the random fills: torch's in-place aten ops, whose derivative is zero (UniformBackward0, ...) -----------
def _fill_kernel(sampler, needs_dtype=False):
    """The kernel of a random fill: ``sampler(rng, shape, *args)`` written into ``self`` (a meta array
    has nothing to fill: torch's meta kernels only check)."""
    def kernel(self, *args, generator=None):
        if needs_dtype:
            args = (_dtype._BY_NUMPY[self.dtype],) + args
        if has_values(self):
            self[...] = sampler(_rng(generator), self.shape, *args)
        return self
    kernel.__name__ = kernel.__qualname__ = f"{sampler.__name__.strip('_')}__kernel"
    return kernel


def _zeros(grad):
    return aten.zeros_like(grad)


def _fill_op(schema, sampler, node, needs_dtype=False, **formulas):
    return defop(schema, _fill_kernel(sampler, needs_dtype), inplace=True, node=node, self=_zeros, **formulas)


uniform__op = _fill_op("uniform_(Tensor(a!) self, float from=0., float to=1., *, Generator? generator=None) "
                       "-> Tensor(a!)", _uniform_, "UniformBackward0")
normal__op = _fill_op("normal_(Tensor(a!) self, float mean=0., float std=1., *, Generator? generator=None) "
                      "-> Tensor(a!)", _normal_, "NormalBackward0")
bernoulli__tensor_op = _fill_op("bernoulli_.Tensor(Tensor(a!) self, Tensor p, *, Generator? generator=None) "
                                "-> Tensor(a!)", _bernoulli_, "BernoulliBackward1",
                                p=lambda grad, p_sizes: aten.new_zeros(grad, p_sizes))
bernoulli__op = _fill_op("bernoulli_.float(Tensor(a!) self, float p=0.5, *, Generator? generator=None) -> Tensor(a!)",
                         _bernoulli_, "BernoulliBackward2")
exponential__op = _fill_op("exponential_(Tensor(a!) self, float lambd=1., *, Generator? generator=None) -> Tensor(a!)",
                           lambda r, s, lambd=1.0: r.exponential(1.0 / lambd, s), "ExponentialBackward0")
geometric__op = _fill_op("geometric_(Tensor(a!) self, float p, *, Generator? generator=None) -> Tensor(a!)",
                         lambda r, s, p: r.geometric(p, s), "GeometricBackward0")
log_normal__op = _fill_op("log_normal_(Tensor(a!) self, float mean=1., float std=2., *, Generator? generator=None) "
                          "-> Tensor(a!)", lambda r, s, mean=1.0, std=2.0: r.lognormal(mean, std, s),
                          "LogNormalBackward0")
cauchy__op = _fill_op("cauchy_(Tensor(a!) self, float median=0., float sigma=1., *, Generator? generator=None) "
                      "-> Tensor(a!)", lambda r, s, median=0.0, sigma=1.0: median + sigma * r.standard_cauchy(s),
                      "CauchyBackward0")
random__from_op = _fill_op("random_.from(Tensor(a!) self, int from, int? to, *, Generator? generator=None) "
                           "-> Tensor(a!)", _random_, "RandomBackward0", needs_dtype=True)
random__to_op = _fill_op("random_.to(Tensor(a!) self, int to, *, Generator? generator=None) -> Tensor(a!)",
                         _random_, "RandomBackward1", needs_dtype=True)
random__op = _fill_op("random_(Tensor(a!) self, *, Generator? generator=None) -> Tensor(a!)", _random_,
                      "RandomBackward2", needs_dtype=True)


def _random_fill(name, pick):
    """``Tensor.<name>``: the op ``pick(*args)`` chooses, on ``self`` (torch's argument forms)."""
    def fill_(self, *args, generator=None, **kwargs):
        if seam.on:
            return seam.torch_function(fill_, (self,) + args, dict(kwargs, generator=generator))
        op = pick(*args, **kwargs)
        if kwargs:      # (torch's `from` is a Python keyword: the generated call names it from_)
            kwargs = {"from_" if k == "from" else k: v for k, v in kwargs.items()}
        return op._call(self, *args, generator=generator, **kwargs)
    fill_.__name__ = fill_.__qualname__ = name
    setattr(Tensor, name, fill_)
    return fill_


def _random_overload(*args, **kwargs):
    n = len(args) + len(kwargs)
    return random__op if n == 0 else random__to_op if n == 1 else random__from_op


_random_fill("uniform_", lambda *a, **k: uniform__op)
_random_fill("normal_", lambda *a, **k: normal__op)
_random_fill("bernoulli_", lambda p=0.5: bernoulli__tensor_op if isinstance(p, Tensor) else bernoulli__op)
_random_fill("exponential_", lambda *a, **k: exponential__op)
_random_fill("geometric_", lambda *a, **k: geometric__op)
_random_fill("log_normal_", lambda *a, **k: log_normal__op)
_random_fill("cauchy_", lambda *a, **k: cauchy__op)
_random_fill("random_", _random_overload)


# ---- new_zeros (creation) ---------------------------------------------------------------------------------
def _new_zeros_kernel(self, size, *, dtype=None, layout=None, device=None, pin_memory=None):
    # (zeros_like: an array of self's kind -- NumPy, meta, CuPy)
    return xp.zeros_like(self, shape=tuple(size), dtype=self.dtype if dtype is None else dtype.numpy_dtype)


new_zeros_op = defop("new_zeros(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
                     "Device? device=None, bool? pin_memory=None) -> Tensor", _new_zeros_kernel)


@method()
def new(self, *args, **kwargs):
    """``Tensor.new``: the legacy constructor (``x.new(2, 3)``, ``x.new([1, 2])``, ``x.new()``) of a tensor of
    ``self``'s dtype and device, as ``torch.FloatTensor(...)`` is for float32 (glasstorch/_legacy_types.py)."""
    from .._legacy_types import legacy_type_of
    return legacy_type_of(self.dtype, self.device.type)._construct(args, kwargs)
