"""Making tensors: from data, filled, ranges, random; the default device; and dtype/device conversion
(ToCopyBackward0).

Every factory takes ``device=``: ``'cpu'`` (NumPy), ``'meta'`` (a shape, dtype and strides, no data:
``_array/meta.py``) or ``'cuda'`` (CuPy). With no ``device=`` a factory makes its tensor on the
default device: cpu, or what ``torch.set_default_device`` or an enclosing ``with torch.device(...):``
chose; the ``*_like`` and ``Tensor.new_*`` functions take their tensor's device instead.
"""
import functools
import math
import numbers
import warnings

from .. import _checks, _dtype
from .._tensor import Tensor, _wrap, device as _device, Size
from .._array import xp, namespace, device_type_of, to_device, as_numpy, copy_preserving_layout, cuda_available, meta, \
    has_values
from ._op import method, kernel_not_implemented
from .shape import resized_for_out
from ._derivatives import to_copy_backward, not_implemented
from .._array import special as _special
from ..autograd import grad_mode
from .._seam import seam, overridable, named
from .._ops import defop, aten, node_classes_of
from .. import _warnings
from .. import _ops   # (_ops._ARRAY_TYPES, read at each call: it grows when CuPy is imported)

__getattr__ = node_classes_of(__name__)    # (the node classes declared here, by name: TanhBackward0)

# What glasstorch (torch) has at its top level from this family; the other public functions here are
# Tensor methods only (x.view(...)) or torch.linalg's.
__all__ = ["tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones", "empty", "full", "zeros_like",
           "ones_like", "empty_like", "full_like", "empty_strided", "eye", "arange", "linspace", "logspace", "scalar_tensor",
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
        raise TypeError("new(): invalid data type 'str'")
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
    except ValueError:
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


@overridable
def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Copy ``data`` (numbers, nested lists, arrays, tensors) into a new leaf tensor."""
    if isinstance(data, Tensor):   # (at the user's line, also when the seam's frames come in between)
        _warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
                       "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor).")
    if dtype is None:
        dtype = _infer_dtype(data)
    try:   # (inline, not @_checks.allocates: the glass's observers know torch.tensor by this function)
        array = _to_array(data, dtype)
    except MemoryError as e:
        raise _checks.memory_error(e) from None
    return _leaf(_fresh(_place(array, device)), requires_grad)


@overridable(defaults_by_keyword=True)
def as_tensor(data, dtype=None, device=None):
    """Share memory with ``data`` when it is already an array/tensor of the right dtype and device."""
    if isinstance(data, Tensor):
        if (dtype is None or data.dtype is dtype) and (device is None or data.device == _device(device)):
            return data
        return data.to(dtype=dtype, device=device)
    if isinstance(data, xp.ndarray) and (dtype is None or data.dtype == _np_dtype(dtype)) and _device_type(device) == "cpu":
        _dtype.from_numpy_dtype(data.dtype)
        return _fresh(_dtype.usual_dtype_view(data))    # (a view: see from_numpy)
    return tensor(data, dtype=dtype, device=device)


asarray = as_tensor


def from_numpy(ndarray):
    """A tensor sharing memory with ``ndarray`` (writes through either are seen by both). (No
    function mode sees it: torch's is not overridable either, it takes no tensor.)"""
    if not isinstance(ndarray, xp.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _dtype.from_numpy_dtype(ndarray.dtype)
    if ndarray.dtype.kind == "u" and ndarray.dtype.itemsize > 1:
        raise TypeError(f"can't convert np.ndarray of type numpy.{ndarray.dtype}. The only supported types are: "
                        "float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool.")
    # (on a view of it: the memory is shared, the array object is the tensor's own -- the caller's
    # ``a.shape = ...`` reshapes only theirs, as with torch, and cannot leave the tensor's layout
    # facts stale, Tensor._layout_of)
    return _fresh(_dtype.usual_dtype_view(ndarray))


def _lift_fresh_kernel(self):
    return self


# torch.tensor's (and as_tensor's, from_numpy's) last step, as in torch: the new tensor "lifted" --
# nothing happens to it, but a TorchDispatchMode sees aten.lift_fresh.default with it. (torch's schema
# is ``lift_fresh(Tensor(a) self) -> Tensor(a)``; written here without the alias, the op's result is a
# new Tensor on the same array rather than a view of a tensor nobody else holds: ``_base`` stays None.)
lift_fresh_op = defop("lift_fresh(Tensor self) -> Tensor", _lift_fresh_kernel)


def _fresh(array):
    """A new tensor on ``array``, lifted (``lift_fresh``) where a dispatch mode is there to see it
    (elsewhere the op would change nothing: the common path doesn't call it)."""
    t = _wrap(array)
    return lift_fresh_op(t) if seam.dispatching else t


def _size(size):
    """A ``*size`` factory's sizes (``zeros(2, 3)``, ``zeros((2, 3))``) as a list of ints, as torch's
    argument parser reads them (its negative-size errors are the op's: ``_shape``)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list, Size)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, (int, xp.integer)) and not (isinstance(s, Tensor) and s.dim() == 0):
            raise TypeError(f"empty(): argument 'size' must be tuple of ints, but found element of type "
                            f"{type(s).__name__}")
    return [int(s) for s in size]


def _size_keyword(fn, method=False):
    """torch.zeros(size=(2, 3)) as well as zeros(2, 3) and zeros((2, 3)): the keyword joins the
    positional form (Python cannot name both ``*size`` and a ``size=`` keyword). ``method``: the
    first positional argument is ``self``, not a size (``x.new_zeros(size=...)``)."""
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
    accepting.accepts_size_keyword = True     # (its signature shows *size: tests/test_typing.py reads this)
    return accepting


def _factory(sized=False, method=False):
    """Decorator for a public factory: the seam's line first (a TorchFunctionMode sees ``torch.zeros``
    as it was called, ``size=`` and ``out=`` included), then torch's ``size=`` keyword (``sized``: a
    ``*size`` factory; ``method``: a Tensor method, ``self`` first). A factory that takes ``out=``
    hands it to its out= overload (``_written_out``)."""
    def decorate(fn):
        name = fn.__name__
        size_keyword = _size_keyword(fn, method)

        @functools.wraps(fn)
        def factory(*args, **kwargs):
            if seam.on:
                return seam.torch_function(factory, args, kwargs)
            if not kwargs:
                return fn(*args)
            if kwargs.get("dtype") is not None:     # (torch's parser: a dtype, or Python's float, int...)
                kwargs["dtype"] = _checks.as_dtype(kwargs["dtype"], name)
            if sized and "size" in kwargs:
                return size_keyword(*args, **kwargs)
            return fn(*args, **kwargs)
        factory.accepts_size_keyword = sized
        return factory
    return decorate


# ---------------------------------------------------------------------------------------------
# The factories are aten ops, as in torch: a TorchDispatchMode (a FLOP counter, a logging mode) sees
# aten.zeros.default, aten.arange.start_step, aten.lift_fresh.default for torch.tensor... Each op has
# torch's schema and a kernel that makes the array; its public function parses torch's argument forms,
# resolves the device as torch's binding does (the default device, passed on; the ``*_like`` and
# ``new_*`` ops leave it to the kernel: the input's) and makes the result require grad when asked
# (``requires_grad`` is no argument of the aten ops: torch's binding sets it on their result too).
# ---------------------------------------------------------------------------------------------
_CPU = _device("cpu")
_LONG = 4    # torch's ScalarType code of int64: randint's and randperm's schemas default dtype to it
_FACTORY_OPTIONS = "ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None"
_LIKE_OPTIONS = _FACTORY_OPTIONS + ", MemoryFormat? memory_format=None"


def _target(device):
    """The device a factory called with ``device=`` makes its tensor on: the one given, else the
    default device (``set_default_device``, ``with torch.device(...):``), else the CPU."""
    if device is None:
        chosen = _default_device()
        return _CPU if chosen is None else chosen
    return device if isinstance(device, _device) else _device(device)


def _kind(device):
    """The device type an op's ``device`` argument names (None: the CPU, as for an aten op called
    directly: the default device is the public function's business)."""
    if device is None or device is _CPU:
        return "cpu"
    return device.type if isinstance(device, _device) else _device(device).type


def _numpy_dtype(dtype, default=None):
    """An op's ``ScalarType? dtype`` argument as a NumPy dtype: None gives ``default`` (the default
    float type unless one is given), torch's code 4 (``dtype=4`` in a schema) int64."""
    if dtype is None:
        dtype = _dtype.get_default_dtype() if default is None else default
    elif type(dtype) is int and dtype == _LONG:
        dtype = _dtype.int64
    return _np_dtype(dtype)


def _shape(size, name=None):
    """A kernel's ``SymInt[] size`` as a shape, refused as torch's kernels refuse a negative size."""
    shape = tuple(size)
    for s in shape:
        if s < 0:
            if name == "zeros":
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(shape)}")
    return shape


def _allocated(make, shape, nd):
    """``make()``'s array; torch's out-of-memory error where it cannot be had."""
    try:
        return make()
    except (MemoryError, ValueError) as e:
        raise _out_of_memory(e, shape, nd) from None


def _out_of_memory(error, shape, nd):
    """torch's error for an allocation that failed with ``error``: NumPy's MemoryError, or its
    ValueError "array is too big" past the address space (any other ValueError is raised as it is)."""
    if isinstance(error, ValueError) and "too big" not in str(error):
        raise error
    return _checks.out_of_memory(shape, nd.itemsize)


def _full_array(shape, fill, nd, device):
    ns = namespace(_kind(device))
    try:
        return ns.zeros(shape, nd) if fill == 0 else ns.full(shape, fill, nd)
    except (MemoryError, ValueError) as e:
        raise _out_of_memory(e, shape, nd) from None


def _on(array, device):
    """``array`` (made on the CPU) moved to ``device``."""
    kind = _kind(device)
    return array if kind == "cpu" else to_device(array, kind)


# ---- out=: a factory's out= overload (aten.zeros.out...) writes into the tensor given -------------------------
def _into_out(kernel):
    """The kernel of a factory's out= overload: ``kernel``'s values in ``out``'s dtype and on its
    device (the op's generated call writes them into ``out``: ``ops/_op.run_out_op``)."""
    def out_kernel(*args, out, **kwargs):
        return kernel(*args, dtype=_dtype._BY_NUMPY[out.dtype], device=device_type_of(out), **kwargs)
    name = getattr(kernel, "__name__", "kernel")
    out_kernel.__name__ = out_kernel.__qualname__ = name[:-7] + "_out_kernel" if name.endswith("_kernel") else name
    return out_kernel


def _check_out(out, dtype, device):
    """torch's binding: a factory given ``out=`` makes its values in out's dtype, on out's device; a
    ``dtype=`` or ``device=`` given too must name them."""
    if not isinstance(out, Tensor):
        return      # (the op's call refuses it)
    if dtype is not None and dtype is not out.dtype:
        raise RuntimeError(f"dtype {dtype._legacy} does not match dtype of out parameter ({out.dtype._legacy})")
    if device is not None and _device_type(device) != out.device.type:
        raise RuntimeError(f"device type {_device_type(device)} does not match device type of out parameter "
                           f"({out.device.type})")


def _written_out(op, out, dtype, device, requires_grad, *args, **kwargs):
    """A factory called with ``out=``: its out= overload ``op`` writes into ``out`` (``aten.zeros.out``,
    what a dispatch mode sees), which is returned -- made to require grad when asked, as torch's
    binding does with its result."""
    _check_out(out, dtype, device)
    return _leaf(op._call(*args, out=out, **kwargs), requires_grad)


def _refilled_out(out, dtype, device, requires_grad, size, fill=None, **fill_args):
    """``out=`` as torch's binding of ``empty``, ``randn`` (and ``rand`` given a generator) fills it:
    ``out`` resized (``aten.resize_``), then filled in place by ``fill`` (``aten.normal_``...)."""
    _check_out(out, dtype, device)
    resized_for_out(out, size)
    if fill is not None:
        fill(out, **fill_args)
    return _leaf(out, requires_grad)


# ---- filled: zeros, ones, empty, full, empty_strided, scalar_tensor ------------------------------------------
def _constant_kernel(name, fill):
    def kernel(size, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
        return _full_array(_shape(size, name), fill, _numpy_dtype(dtype), device)
    kernel.__name__ = kernel.__qualname__ = f"{name}_kernel"
    return kernel


def _full_kernel(size, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None):
    # (no dtype: the fill value's, as torch's full infers it -- full((2,), 3) is int64)
    return _full_array(_shape(size), fill_value, _numpy_dtype(dtype, _dtype.scalar_dtype(fill_value)), device)


def _empty_strided_kernel(size, stride, *, dtype=None, layout=None, device=None, pin_memory=None):
    shape, stride = _shape(size), tuple(stride)
    if len(shape) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(shape)}) must match dimensionality of strides "
                           f"({len(stride)})")
    nd = _numpy_dtype(dtype)
    strides = tuple(s * nd.itemsize for s in stride)
    kind = _kind(device)
    if kind == "meta":
        return meta.MetaArray(shape, nd, strides)
    ns = namespace(kind)
    # the storage the strides reach, zero-filled (glasstorch's empty memory is zeros), viewed with them
    extent = 0 if 0 in shape else 1 + sum((n - 1) * s for n, s in zip(shape, stride))
    storage = _allocated(lambda: ns.zeros(extent, nd), shape, nd)
    return ns.lib.stride_tricks.as_strided(storage, shape, strides)


def _scalar_tensor_kernel(s, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _full_array((), s, _numpy_dtype(dtype), device)


zeros_op = defop(f"zeros(SymInt[] size, *, {_FACTORY_OPTIONS}) -> Tensor", _constant_kernel("zeros", 0))
ones_op = defop(f"ones(SymInt[] size, *, {_FACTORY_OPTIONS}) -> Tensor", _constant_kernel("ones", 1))
empty_op = defop(f"empty.memory_format(SymInt[] size, *, {_LIKE_OPTIONS}) -> Tensor", _constant_kernel("empty", 0))
full_op = defop(f"full(SymInt[] size, Scalar fill_value, *, {_FACTORY_OPTIONS}) -> Tensor", _full_kernel)
empty_strided_op = defop(f"empty_strided(SymInt[] size, SymInt[] stride, *, {_FACTORY_OPTIONS}) -> Tensor",
                         _empty_strided_kernel)
scalar_tensor_op = defop(f"scalar_tensor(Scalar s, *, {_FACTORY_OPTIONS}) -> Tensor", _scalar_tensor_kernel)
zeros_out_op = defop("zeros.out(SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)", _into_out(zeros_op.kernel))
ones_out_op = defop("ones.out(SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)", _into_out(ones_op.kernel))
full_out_op = defop("full.out(SymInt[] size, Scalar fill_value, *, Tensor(a!) out) -> Tensor(a!)",
                    _into_out(_full_kernel))


@_factory(sized=True)
def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    if out is not None:
        return _written_out(zeros_out_op, out, dtype, device, requires_grad, _size(size))
    return _leaf(zeros_op._call(_size(size), dtype=dtype, layout=layout, device=_target(device),
                                pin_memory=pin_memory), requires_grad)


@_factory(sized=True)
def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    if out is not None:
        return _written_out(ones_out_op, out, dtype, device, requires_grad, _size(size))
    return _leaf(ones_op._call(_size(size), dtype=dtype, layout=layout, device=_target(device),
                               pin_memory=pin_memory), requires_grad)


@_factory(sized=True)
def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False, memory_format=None):
    if out is not None:
        return _refilled_out(out, dtype, device, requires_grad, _size(size))
    return _leaf(empty_op._call(_size(size), dtype=dtype, layout=layout, device=_target(device),
                                pin_memory=pin_memory, memory_format=memory_format), requires_grad)


@_factory()
def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    if isinstance(fill_value, Tensor):
        dtype = fill_value.dtype if dtype is None and out is None else dtype
        fill_value = fill_value.item()
    if not isinstance(size, (tuple, list, Size)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not {_checks.type_name(size)}")
    if out is not None:
        return _written_out(full_out_op, out, dtype, device, requires_grad, _size((size,)), fill_value)
    return _leaf(full_op._call(_size((size,)), fill_value, dtype=dtype, layout=layout, device=_target(device),
                               pin_memory=pin_memory), requires_grad)


@_factory()
def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    return _leaf(empty_strided_op._call(_size((size,)), list(stride), dtype=dtype, layout=layout,
                                        device=_target(device), pin_memory=pin_memory), requires_grad)


@_factory()
def scalar_tensor(s, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    s = s.item() if isinstance(s, Tensor) else s
    return _leaf(scalar_tensor_op._call(s, dtype=dtype, layout=layout, device=_target(device),
                                        pin_memory=pin_memory), requires_grad)


# ---- like another tensor: zeros_like, ..., and Tensor.new_zeros, ... -------------------------------------------
def _like_array(self, fill, dtype, device, shape=None):
    """An array of ``shape`` (``self``'s) filled with ``fill``, in ``dtype`` and on ``device`` (None:
    ``self``'s; on its device, laid out as ``self``, as torch's preserve_format)."""
    nd = self.dtype if dtype is None else _numpy_dtype(dtype)
    if shape is not None and type(self) is xp.ndarray and device is None:   # (a new_* of a CPU tensor)
        return _full_array(shape, fill, nd, None)
    shape = self.shape if shape is None else shape
    if device is not None and _kind(device) != device_type_of(self):
        return _full_array(shape, fill, nd, device)
    return _allocated(lambda: xp.zeros_like(self, nd, shape=shape) if fill == 0 else
                      xp.full_like(self, fill, nd, shape=shape), shape, nd)


def _constant_like_kernel(name, fill):
    def kernel(self, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
        return _like_array(self, fill, dtype, device)
    kernel.__name__ = kernel.__qualname__ = f"{name}_kernel"
    return kernel


def _full_like_kernel(self, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None,
                      memory_format=None):
    return _like_array(self, fill_value, dtype, device)


def _new_constant_kernel(name, fill):
    def kernel(self, size, *, dtype=None, layout=None, device=None, pin_memory=None):
        return _like_array(self, fill, dtype, device, _shape(size))
    kernel.__name__ = kernel.__qualname__ = f"{name}_kernel"
    return kernel


def _new_full_kernel(self, size, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _like_array(self, fill_value, dtype, device, _shape(size))


zeros_like_op = defop(f"zeros_like(Tensor self, *, {_LIKE_OPTIONS}) -> Tensor", _constant_like_kernel("zeros_like", 0))
ones_like_op = defop(f"ones_like(Tensor self, *, {_LIKE_OPTIONS}) -> Tensor", _constant_like_kernel("ones_like", 1))
empty_like_op = defop(f"empty_like(Tensor self, *, {_LIKE_OPTIONS}) -> Tensor", _constant_like_kernel("empty_like", 0))
full_like_op = defop(f"full_like(Tensor self, Scalar fill_value, *, {_LIKE_OPTIONS}) -> Tensor", _full_like_kernel)
new_zeros_op = defop(f"new_zeros(Tensor self, SymInt[] size, *, {_FACTORY_OPTIONS}) -> Tensor",
                     _new_constant_kernel("new_zeros", 0))
new_ones_op = defop(f"new_ones(Tensor self, SymInt[] size, *, {_FACTORY_OPTIONS}) -> Tensor",
                    _new_constant_kernel("new_ones", 1))
new_empty_op = defop(f"new_empty(Tensor self, SymInt[] size, *, {_FACTORY_OPTIONS}) -> Tensor",
                     _new_constant_kernel("new_empty", 0))
new_full_op = defop(f"new_full(Tensor self, SymInt[] size, Scalar fill_value, *, {_FACTORY_OPTIONS}) -> Tensor",
                    _new_full_kernel)


def _like_factory(name, op, checked_as=None):
    """``torch.<name>(input, *, dtype, device, ...)``: ``op`` on ``input`` (dtype and device
    ``input``'s unless given); ``checked_as``: the name torch's not-a-tensor error gives."""
    @overridable
    def like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None,
             pin_memory=False):
        _checks.expect_tensor(checked_as or name, input)
        return _leaf(op._call(input, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
                              memory_format=memory_format), requires_grad)
    return named(like, name)


zeros_like = _like_factory("zeros_like", zeros_like_op)
ones_like = _like_factory("ones_like", ones_like_op)
empty_like = _like_factory("empty_like", empty_like_op)


@overridable
def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None,
              pin_memory=False):
    _checks.expect_tensor("empty_like", input)
    fill_value = fill_value.item() if isinstance(fill_value, Tensor) else fill_value
    return _leaf(full_like_op._call(input, fill_value, dtype=dtype, layout=layout, device=device,
                                    pin_memory=pin_memory, memory_format=memory_format), requires_grad)


def _new_factory(name, op):
    """``Tensor.<name>(*size, dtype, device, ...)``: ``op`` (dtype and device ``self``'s unless given)."""
    def new(self, *size, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
        return _leaf(op._call(self, _size(size), dtype=dtype, layout=layout, device=device, pin_memory=pin_memory),
                     requires_grad)
    return _factory(sized=True, method=True)(named(new, name))


Tensor.new_zeros = _new_factory("new_zeros", new_zeros_op)
Tensor.new_ones = _new_factory("new_ones", new_ones_op)
Tensor.new_empty = _new_factory("new_empty", new_empty_op)


@_factory()
def new_full(self, size, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    fill_value = fill_value.item() if isinstance(fill_value, Tensor) else fill_value
    return _leaf(new_full_op._call(self, _size((size,)), fill_value, dtype=dtype, layout=layout, device=device,
                                   pin_memory=pin_memory), requires_grad)


@_factory()
def new_tensor(self, data, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    return tensor(data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


Tensor.new_full = new_full
Tensor.new_tensor = new_tensor
new_full.__qualname__, new_tensor.__qualname__ = "Tensor.new_full", "Tensor.new_tensor"
del new_full, new_tensor      # (Tensor methods only: torch has no torch.new_full)


# ---- ranges: eye, arange, linspace, logspace -------------------------------------------------------------------
def _eye_kernel(n, m=None, *, dtype=None, layout=None, device=None, pin_memory=None):
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m is not None and m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    nd = _numpy_dtype(dtype)
    m = n if m is None else m
    ns = namespace(_kind(device))
    return _allocated(lambda: ns.eye(n, m, dtype=nd), (n, m), nd)


def _arange_kernel(start, end, step=1, *, dtype=None, layout=None, device=None, pin_memory=None, kernel_name="arange_cpu"):
    values = (start, end, step)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not all(math.isfinite(v) for v in values):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (end - start) / step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype is None:   # (torch's arange: integers only, int64; a float among them, the default type)
        dtype = _dtype.int64 if all(isinstance(v, (int, xp.integer)) for v in values) else _dtype.get_default_dtype()
    elif not isinstance(dtype, _dtype.dtype):
        dtype = _checks.as_dtype(dtype, "arange")
    if dtype is _dtype.bool:
        raise kernel_not_implemented(kernel_name, dtype.numpy_dtype)
    n = int(-(-(end - start) // step)) if dtype.category <= _dtype.INT else int(xp.ceil((end - start) / step))
    kind = _kind(device)
    if kind == "meta":
        return meta.zeros((n,), dtype.numpy_dtype)
    # computed as torch does: start + i * step in the output dtype's accumulation type
    array = start + xp.arange(n, dtype="float64" if dtype.category >= _dtype.FLOAT else "int64") * step
    array = array.astype(dtype.numpy_dtype, copy=False)
    return array if kind == "cpu" else to_device(array, kind)


def _arange_end_kernel(end, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _arange_kernel(0, end, 1, dtype=dtype, device=device)


def _refuse_bool(nd, kernel_name):
    """torch's range kernels have no bool version."""
    if nd.kind == "b":
        raise kernel_not_implemented(kernel_name, nd)


def _range_out_kernel(kernel, warn=False):
    """The kernel of the out= overload of a range (arange, with its own warning, ``warn``; range,
    linspace, logspace) from ``kernel``: the values in out's shape when it has as many elements (torch
    resizes it only when not), with arange's warning when it has elements, but not as many."""
    def out_kernel(*args, out):
        values = _into_out(kernel)(*args, out=out)
        if out.size == values.size:
            return values.reshape(out.shape)
        if out.size and warn:
            _warn_arange_resize(out, values)
        return values
    out_kernel.__name__ = out_kernel.__qualname__ = kernel.__name__[:-7] + "_out_kernel"
    return out_kernel


def _warn_arange_resize(out, values):
    _warnings.warn(f"The number of elements in the out tensor of shape {list(out.shape)} is {out.size} which does "
                   f"not match the computed number of elements {values.size}. Note that this may occur as a "
                   f"result of rounding error. The out tensor will be resized to a tensor of shape "
                   f"({values.size},).", UserWarning)


def _linspace_array(start, end, steps):
    """torch's linspace in float64: the first half from ``start``, the second from ``end`` (symmetric rounding)."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if steps <= 1:
        return xp.full(steps, start, "float64")
    step = (end - start) / (steps - 1)
    i = xp.arange(steps, dtype="float64")
    return xp.where(i < steps // 2, start + step * i, end - step * (steps - 1 - i))


def _linspace_kernel(start, end, steps, *, dtype=None, layout=None, device=None, pin_memory=None):
    nd = _numpy_dtype(dtype)
    _refuse_bool(nd, "linspace_cpu")
    if _kind(device) == "meta":
        _linspace_array(0, 0, steps)      # (its checks)
        return meta.zeros((steps,), nd)
    return _on(_linspace_array(start, end, steps).astype(nd), device)


def _logspace_kernel(start, end, steps, base=10.0, *, dtype=None, layout=None, device=None, pin_memory=None):
    nd = _numpy_dtype(dtype)
    _refuse_bool(nd, "logspace_cpu")
    if _kind(device) == "meta":
        _linspace_array(0, 0, steps)
        return meta.zeros((steps,), nd)
    return _on((base ** _linspace_array(start, end, steps)).astype(nd), device)


eye_op = defop(f"eye(SymInt n, *, {_FACTORY_OPTIONS}) -> Tensor", _eye_kernel)
eye_m_op = defop(f"eye.m(SymInt n, SymInt m, *, {_FACTORY_OPTIONS}) -> Tensor", _eye_kernel)
arange_op = defop(f"arange(Scalar end, *, {_FACTORY_OPTIONS}) -> Tensor", _arange_end_kernel)
arange_start_op = defop(f"arange.start(Scalar start, Scalar end, *, {_FACTORY_OPTIONS}) -> Tensor", _arange_kernel)
arange_start_step_op = defop(f"arange.start_step(Scalar start, Scalar end, Scalar step=1, *, {_FACTORY_OPTIONS}) "
                             "-> Tensor", _arange_kernel)
linspace_op = defop(f"linspace(Scalar start, Scalar end, int steps, *, {_FACTORY_OPTIONS}) -> Tensor",
                    _linspace_kernel)
logspace_op = defop(f"logspace(Scalar start, Scalar end, int steps, float base=10., *, {_FACTORY_OPTIONS}) "
                    "-> Tensor", _logspace_kernel)
eye_out_op = defop("eye.out(SymInt n, *, Tensor(a!) out) -> Tensor(a!)", _into_out(_eye_kernel))
eye_m_out_op = defop("eye.m_out(SymInt n, SymInt m, *, Tensor(a!) out) -> Tensor(a!)", _into_out(_eye_kernel))
arange_out_op = defop("arange.out(Scalar end, *, Tensor(a!) out) -> Tensor(a!)",
                      lambda end, *, out: _range_out_kernel(_arange_kernel, warn=True)(0, end, out=out))
arange_start_out_op = defop("arange.start_out(Scalar start, Scalar end, Scalar step=1, *, Tensor(a!) out) -> Tensor(a!)",
                            _range_out_kernel(_arange_kernel, warn=True))
linspace_out_op = defop("linspace.out(Scalar start, Scalar end, int steps, *, Tensor(a!) out) -> Tensor(a!)",
                        _range_out_kernel(_linspace_kernel))
logspace_out_op = defop("logspace.out(Scalar start, Scalar end, int steps, float base=10., *, Tensor(a!) out) "
                        "-> Tensor(a!)", _range_out_kernel(_logspace_kernel))


def _scalar(value):
    """A ``Scalar`` argument given as a 0-d tensor, as its number."""
    return value.item() if isinstance(value, Tensor) else value


@_factory()
@_checks.allocates
def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    if out is not None:
        return _written_out(eye_out_op, out, dtype, device, requires_grad, n) if m is None else \
            _written_out(eye_m_out_op, out, dtype, device, requires_grad, n, m)
    options = dict(dtype=dtype, layout=layout, device=_target(device), pin_memory=pin_memory)
    t = eye_op._call(n, **options) if m is None else eye_m_op._call(n, m, **options)
    return _leaf(t, requires_grad)


@_factory()
def arange(start, end=None, step=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
           pin_memory=False):
    if out is not None:     # (torch's out= overloads: arange.out, and arange.start_out for the rest)
        if end is None and step is None:
            return _written_out(arange_out_op, out, dtype, device, requires_grad, _scalar(start))
        start, end = (0, start) if end is None else (start, end)
        return _written_out(arange_start_out_op, out, dtype, device, requires_grad, _scalar(start), _scalar(end),
                            *(() if step is None else (_scalar(step),)))
    options = dict(dtype=dtype, layout=layout, device=_target(device), pin_memory=pin_memory)
    if end is None:         # arange(end), arange(end, step=...) is no form of torch's: start is then 0
        t = arange_op._call(_scalar(start), **options) if step is None else \
            arange_start_step_op._call(0, _scalar(start), _scalar(step), **options)
    elif step is None:
        t = arange_start_op._call(_scalar(start), _scalar(end), **options)
    else:
        t = arange_start_step_op._call(_scalar(start), _scalar(end), _scalar(step), **options)
    return _leaf(t, requires_grad)


def _range_kernel(start, end, step=1, *, dtype=None, layout=None, device=None, pin_memory=None):
    """torch.range's values: from ``start`` to ``end`` included, ``step`` apart."""
    return _arange_kernel(start, end + step / 2, step, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
                          kernel_name="range_cpu")


range_step_op = defop(f"range.step(Scalar start, Scalar end, Scalar step=1, *, {_FACTORY_OPTIONS}) -> Tensor",
                      _range_kernel)
range_op = defop(f"range(Scalar start, Scalar end, *, {_FACTORY_OPTIONS}) -> Tensor", _range_kernel)
range_out_op = defop("range.out(Scalar start, Scalar end, Scalar step=1, *, Tensor(a!) out) -> Tensor(a!)",
                     _range_out_kernel(_range_kernel))


def _range(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
           pin_memory=False):
    """torch.range (deprecated in torch): includes ``end``. torch's Python binding calls
    ``aten.range.step`` with the dtype, layout and device filled in, and no TorchFunctionMode sees it
    (torch.range is not among torch's overridable functions)."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=2)
    if end is None:
        raise TypeError('range() missing 1 required positional arguments: "end"')
    from .. import strided      # (the package's: imported at the call, the package imports this module)
    if out is not None:
        return _written_out(range_out_op, out, _checks.as_dtype(dtype, "range") if dtype is not None else None, device,
                            requires_grad, _scalar(start), _scalar(end), _scalar(step))
    dtype = _checks.as_dtype(dtype, "range") if dtype is not None else _dtype.get_default_dtype()
    t = range_step_op._call(_scalar(start), _scalar(end), _scalar(step), dtype=dtype, layout=layout or strided,
                            device=_target(device) or _device("cpu"), pin_memory=pin_memory or None)
    return _leaf(t, requires_grad)


range_ = named(_range, "range")     # (``range_`` here: the module uses Python's range)


@_factory()
def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    if out is not None:
        return _written_out(linspace_out_op, out, dtype, device, requires_grad, _scalar(start), _scalar(end), steps)
    return _leaf(linspace_op._call(_scalar(start), _scalar(end), steps, dtype=dtype, layout=layout,
                                   device=_target(device), pin_memory=pin_memory), requires_grad)


@_factory()
def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    if out is not None:
        return _written_out(logspace_out_op, out, dtype, device, requires_grad, _scalar(start), _scalar(end), steps,
                            float(base))
    return _leaf(logspace_op._call(_scalar(start), _scalar(end), steps, float(base), dtype=dtype, layout=layout,
                                   device=_target(device), pin_memory=pin_memory), requires_grad)


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
@overridable
def to(self, *args, **kwargs):
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
    @overridable(defaults_by_keyword=True, omitted=("memory_format",))
    def cast(self, memory_format=None):
        return to(self, dt)
    cast.__name__, cast.__qualname__ = name, "Tensor." + name
    return cast


for _name, _dt in [("float", _dtype.float32), ("double", _dtype.float64), ("half", _dtype.float16),
                   ("bfloat16", _dtype.bfloat16), ("long", _dtype.int64), ("int", _dtype.int32),
                   ("short", _dtype.int16), ("char", _dtype.int8), ("byte", _dtype.uint8), ("bool", _dtype.bool),
                   ("cfloat", _dtype.complex64), ("cdouble", _dtype.complex128)]:
    setattr(Tensor, _name, _caster(_name, _dt))


@overridable(defaults_by_keyword=True, omitted=("memory_format",))
def _cpu(self, memory_format=None):
    """``self`` on the CPU (itself when it is there already): ``to("cpu")``."""
    return to(self, "cpu")


def _cuda(self, device=None, non_blocking=False, memory_format=None):
    """``self`` on a CUDA device (``device``: an index or a device; the current one by default)."""
    if seam.on:
        return seam.torch_function(_cuda, (self,), {"device": device, "non_blocking": non_blocking})
    return to(self, "cuda" if device is None else _device("cuda", device) if isinstance(device, int) else device)


@overridable
def _type_as(self, other):
    """``self`` converted to ``other``'s dtype: ``to(other.dtype)``."""
    return to(self, other.dtype)


@overridable
def _pin_memory(self, device=None):
    """Page-locked memory is a CUDA matter: on the CPU the tensor is returned as it is."""
    return self


@overridable
def _is_pinned(self, device=None):
    return False


@overridable
def _share_memory_(self):
    """Shared memory between processes: NumPy arrays are not moved; the tensor is returned."""
    return self


@overridable
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


def _sampled(sample, shape, nd, generator, device):
    """``sample(rng, shape)`` (numbers drawn on the CPU) as an array of ``nd`` on ``device``; on the
    meta device nothing is drawn (torch's meta factories leave the generator's state alone too)."""
    kind = _kind(device)
    if kind == "meta":
        return meta.zeros(shape, nd)
    try:
        array = sample(_rng(generator), shape).astype(nd, copy=False)
    except (MemoryError, ValueError) as e:
        raise _out_of_memory(e, shape, nd) from None
    return array if kind == "cpu" else to_device(array, kind)


def _uniform(nd):
    """Draws in [0, 1) of ``nd``'s width (NumPy draws float32 or float64)."""
    width = "float64" if nd.itemsize >= 8 else "float32"
    return lambda r, s: r.random(s, dtype=width)


def _standard_normal(nd):
    width = "float64" if nd.itemsize >= 8 else "float32"
    return lambda r, s: r.standard_normal(s, dtype=width)


def _refuse_non_floating(nd, kernel_name):
    """torch's samplers of real numbers have no integer or bool version."""
    if nd.kind not in "fc" and not _dtype.is_bfloat16_numpy(nd):
        raise kernel_not_implemented(kernel_name, nd)


def _rand_kernel(size, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    nd = _numpy_dtype(dtype)
    _refuse_non_floating(nd, "check_uniform_bounds")
    return _sampled(_uniform(nd), _shape(size), nd, generator, device)


def _randn_kernel(size, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    nd = _numpy_dtype(dtype)
    _refuse_non_floating(nd, "normal_kernel_cpu")
    return _sampled(_standard_normal(nd), _shape(size), nd, generator, device)


def _check_range(low, high):
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")


def _check_bounds(low, high, nd):
    """torch's random_(from, to) on ``nd``: both ends must be values of the type (the floating types
    wider than float16 hold every bound a program gives)."""
    if nd.kind == "b":
        lowest, highest = 0, 1
    elif nd.kind in "iu":
        lowest, highest = int(xp.iinfo(nd).min), int(xp.iinfo(nd).max)
    elif nd == xp.float16:
        lowest, highest = -65504, 65504
    else:
        return
    if not lowest <= low <= highest:
        raise RuntimeError(f"from is out of bounds for {_dtype.cpp_name(nd)}")
    if not lowest <= high - 1 <= highest:
        raise RuntimeError(f"to - 1 is out of bounds for {_dtype.cpp_name(nd)}")


def _randint_kernel(low, high, size, *, generator=None, dtype=_LONG, layout=None, device=None, pin_memory=None):
    _check_range(low, high)
    nd = _numpy_dtype(dtype)
    _check_bounds(low, high, nd)
    return _sampled(lambda r, s: r.integers(low, high, s), _shape(size), nd, generator, device)


def _randint_high_kernel(high, size, **options):
    return _randint_kernel(0, high, size, **options)


def _randperm_kernel(n, *, generator=None, dtype=_LONG, layout=None, device=None, pin_memory=None):
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    nd = _numpy_dtype(dtype)
    if nd.kind == "b":
        raise kernel_not_implemented("randperm", nd)
    return _sampled(lambda r, s: r.permutation(n), (n,), nd, generator, device)


def _normal_kernel(mean, std, size, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    _checks.check_std(std)
    nd = _numpy_dtype(dtype)
    _refuse_non_floating(nd, "normal_kernel_cpu")
    return _sampled(lambda r, s: r.normal(mean, std, s), _shape(size), nd, generator, device)


def _like_sampler(name, sampler):
    """The kernel of ``rand_like``/``randn_like`` from ``sampler(nd)``: drawn in ``self``'s shape,
    dtype and device unless given."""
    def kernel(self, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
        nd = self.dtype if dtype is None else _numpy_dtype(dtype)
        return _sampled(sampler(nd), self.shape, nd, None, device_type_of(self) if device is None else device)
    kernel.__name__ = kernel.__qualname__ = f"{name}_kernel"
    return kernel


def _randint_like_kernel(self, low, high, *, dtype=None, layout=None, device=None, pin_memory=None,
                         memory_format=None):
    _check_range(low, high)
    nd = self.dtype if dtype is None else _numpy_dtype(dtype)
    return _sampled(lambda r, s: r.integers(low, high, s), self.shape, nd, None,
                    device_type_of(self) if device is None else device)


def _randint_like_high_kernel(self, high, **options):
    return _randint_like_kernel(self, 0, high, **options)


def _random_ops(schema, kernel):
    """A random factory's four overloads, as torch declares them: ``<schema>`` and, for a call given
    a ``generator=``, ``<name>.generator`` (``<name>.<overload>_generator`` where the first is itself an
    overload), and their out= overloads (``<name>.out``, ``<name>.generator_out``)."""
    name, _, rest = schema.partition("(")
    name, _, overload = name.partition(".")
    prefix = f"{name}.{overload + '_' if overload else ''}"
    plain = defop(schema, kernel)
    with_generator = defop(f"{prefix}generator({rest.replace('*, ', '*, Generator? generator, ', 1)}", kernel)
    arguments = rest.partition("*, ")[0]
    plain_out = defop(f"{prefix}out({arguments}*, Tensor(a!) out) -> Tensor(a!)", _into_out(kernel))
    with_generator_out = defop(f"{prefix}generator_out({arguments}*, Generator? generator, Tensor(a!) out) -> Tensor(a!)",
                               _into_out(kernel))
    return plain, with_generator, plain_out, with_generator_out


rand_op, rand_generator_op, rand_out_op, _ = _random_ops(f"rand(SymInt[] size, *, {_FACTORY_OPTIONS}) -> Tensor", _rand_kernel)
randn_op, randn_generator_op, _, _ = _random_ops(f"randn(SymInt[] size, *, {_FACTORY_OPTIONS}) -> Tensor", _randn_kernel)
_INT_OPTIONS = _FACTORY_OPTIONS.replace("dtype=None", "dtype=4")
randint_op, randint_generator_op, randint_out_op, randint_generator_out_op = _random_ops(f"randint(SymInt high, SymInt[] size, *, {_INT_OPTIONS}) -> Tensor",
                                               _randint_high_kernel)
randint_low_op, randint_low_generator_op, randint_low_out_op, randint_low_generator_out_op = _random_ops(
    f"randint.low(SymInt low, SymInt high, SymInt[] size, *, {_INT_OPTIONS}) -> Tensor", _randint_kernel)
randperm_op, randperm_generator_op, randperm_out_op, randperm_generator_out_op = _random_ops(f"randperm(SymInt n, *, {_INT_OPTIONS}) -> Tensor", _randperm_kernel)
normal_float_float_op = defop("normal.float_float(float mean, float std, SymInt[] size, *, Generator? generator=None, "
                              f"{_FACTORY_OPTIONS}) -> Tensor", _normal_kernel)
normal_float_float_out_op = defop("normal.float_float_out(float mean, float std, SymInt[] size, *, Generator? generator=None, "
                                  "Tensor(a!) out) -> Tensor(a!)", _into_out(_normal_kernel))
rand_like_op = defop(f"rand_like(Tensor self, *, {_LIKE_OPTIONS}) -> Tensor", _like_sampler("rand_like", _uniform))
randn_like_op = defop(f"randn_like(Tensor self, *, {_LIKE_OPTIONS}) -> Tensor", _like_sampler("randn_like", _standard_normal))
randint_like_op = defop(f"randint_like(Tensor self, SymInt high, *, {_LIKE_OPTIONS}) -> Tensor",
                        _randint_like_high_kernel)
randint_like_low_dtype_op = defop(f"randint_like.low_dtype(Tensor self, SymInt low, SymInt high, *, {_LIKE_OPTIONS}) "
                                  "-> Tensor", _randint_like_kernel)


def _drawn(plain, with_generator, generator, args, requires_grad, **options):
    """A random factory's result: ``plain`` without a generator, ``with_generator`` with one (given
    ``out=``, out= overloads of them)."""
    out = options.pop("out", None)
    if out is not None:
        op = plain if generator is None else with_generator
        return _written_out(op, out, options.get("dtype"), options.get("device"), requires_grad, *args,
                            **({} if generator is None else {"generator": generator}))
    if generator is None:
        return _leaf(plain._call(*args, **options), requires_grad)
    return _leaf(with_generator._call(*args, generator=generator, **options), requires_grad)


@_factory(sized=True)
def rand(*size, out=None, generator=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    if out is not None:     # (torch: aten.rand.out; given a generator, out resized and filled by uniform_)
        if generator is None:
            return _written_out(rand_out_op, out, dtype, device, requires_grad, _size(size))
        return _refilled_out(out, dtype, device, requires_grad, _size(size), uniform__op, generator=generator)
    return _drawn(rand_op, rand_generator_op, generator, (_size(size),), requires_grad, dtype=dtype, layout=layout,
                  device=_target(device), pin_memory=pin_memory)


@_factory(sized=True)
def randn(*size, out=None, generator=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    if out is not None:     # (torch: out resized and filled by normal_, a generator or not)
        return _refilled_out(out, dtype, device, requires_grad, _size(size), normal__op,
                             **({} if generator is None else {"generator": generator}))
    return _drawn(randn_op, randn_generator_op, generator, (_size(size),), requires_grad, dtype=dtype, layout=layout,
                  device=_target(device), pin_memory=pin_memory)


@_factory()
def randint(low=0, high=None, size=None, *, out=None, generator=None, dtype=None, layout=None, device=None,
            requires_grad=False, pin_memory=False):
    options = dict(layout=layout, device=_target(device), pin_memory=pin_memory)
    if dtype is not None:
        options["dtype"] = dtype
    if out is not None:
        options = dict(out=out, dtype=dtype, device=device)
        ops = (randint_out_op, randint_generator_out_op, randint_low_out_op, randint_low_generator_out_op)
    else:
        ops = (randint_op, randint_generator_op, randint_low_op, randint_low_generator_op)
    if size is None:        # randint(high, size)
        return _drawn(ops[0], ops[1], generator, (low, _size((high,))), requires_grad, **options)
    return _drawn(ops[2], ops[3], generator, (low, high, _size((size,))), requires_grad, **options)


@_factory()
def randperm(n, *, out=None, generator=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    if out is not None:
        return _drawn(randperm_out_op, randperm_generator_out_op, generator, (n,), requires_grad, out=out, dtype=dtype,
                      device=device)
    options = dict(layout=layout, device=_target(device), pin_memory=pin_memory)
    if dtype is not None:
        options["dtype"] = dtype
    return _drawn(randperm_op, randperm_generator_op, generator, (n,), requires_grad, **options)


rand_like = _like_factory("rand_like", rand_like_op)
randn_like = _like_factory("randn_like", randn_like_op)


@overridable
def randint_like(input, low=0, high=None, *, dtype=None, layout=None, device=None, requires_grad=False,
                 memory_format=None, pin_memory=False):
    _checks.expect_tensor("randint_like", input)
    options = dict(dtype=dtype, layout=layout, device=device, pin_memory=pin_memory, memory_format=memory_format)
    t = randint_like_op._call(input, low, **options) if high is None else \
        randint_like_low_dtype_op._call(input, low, high, **options)
    return _leaf(t, requires_grad)


def _normal_tensor_kernel(mean, std, *, generator=None, drawn_shape=()):
    """Draws from N(mean, std) elementwise, ``mean`` and/or ``std`` arrays (broadcast, with
    ``drawn_shape`` too), in the dtype of the first array among them."""
    _checks.check_std(std)
    ref = mean if isinstance(mean, _ops._ARRAY_TYPES) else std
    shape = _checks.broadcast_shape(xp.shape(mean), xp.shape(std), drawn_shape)
    if not has_values(ref):
        return meta.zeros(shape, ref.dtype)
    return (mean + std * _rng(generator).standard_normal(shape)).astype(ref.dtype)


def _normal_tensor_out_kernel(mean, std, *, generator=None, out):
    """normal's draws around tensors, for ``out``: in its dtype (a floating one). With a float ``std``
    torch draws in ``out``'s own shape and adds ``mean`` to it (``normal_out_impl``), so the result has
    the broadcast shape of ``mean`` and ``out``, and an ``out`` that does not broadcast with ``mean`` (an
    empty one included) is refused rather than resized."""
    drawn_shape = () if isinstance(std, _ops._ARRAY_TYPES) else _checks.broadcast_shape(xp.shape(mean), out.shape)
    if 0 in drawn_shape and out.dtype.kind in "biu":   # (nothing drawn: the add of mean is what refuses)
        raise RuntimeError(f"result type {_dtype._BY_NUMPY[mean.dtype]._legacy} can't be cast to the desired "
                           f"output type {_dtype._BY_NUMPY[out.dtype]._legacy}")
    _refuse_non_floating(out.dtype, "normal_kernel_cpu")
    return _normal_tensor_kernel(mean, std, generator=generator, drawn_shape=drawn_shape).astype(out.dtype, copy=False)


def _bernoulli_kernel(self, p=None, *, generator=None):
    """1 with probability ``p`` (each element of ``self`` when none is given), else 0, in ``self``'s dtype."""
    prob = self if p is None else p
    _checks.check_probability("bernoulli_", prob)
    if not has_values(self):
        return meta.zeros(self.shape, self.dtype)
    return (_rng(generator).random(self.shape) < prob).astype(self.dtype)


def _multinomial_kernel(self, num_samples, replacement=False, *, generator=None):
    if not has_values(self):   # (the shape only: the checks on the probabilities need their values)
        return meta.zeros(tuple(self.shape[:-1]) + (num_samples,), "int64")
    p = as_numpy(self).astype("float64")
    if (p < 0).any() or not xp.isfinite(p).all():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    one = p.ndim == 1
    p2 = p.reshape(1, -1) if one else p
    if not replacement and num_samples > p2.shape[1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    rng = _rng(generator)
    rows = []
    for row in p2:
        total = row.sum()
        if total <= 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        if not replacement and (row > 0).sum() < num_samples:
            raise RuntimeError("invalid multinomial distribution (with replacement=False, not enough non-negative "
                               "category to sample)")
        rows.append(rng.choice(len(row), size=num_samples, replace=replacement, p=row / total))
    out = xp.array(rows, dtype="int64").reshape(len(rows), num_samples)
    return out[0] if one else out


def _poisson_kernel(self, generator=None):
    if not has_values(self):
        return meta.zeros(self.shape, self.dtype)
    return xp.asarray(_rng(generator).poisson(self), dtype=self.dtype)   # (0-d: an int)


# The random ops on tensors; their derivative is zero, as torch's (NormalBackward1..3, BernoulliBackward0,
# PoissonBackward0); bernoulli.p records none here (torch records its NotImplemented node); multinomial
# draws indices.
normal_tensor_tensor_op = defop("normal.Tensor_Tensor(Tensor mean, Tensor std, *, Generator? generator=None) -> Tensor",
                                _normal_tensor_kernel, node="NormalBackward3",
                                mean=lambda grad, mean_sizes: aten.new_zeros(grad, mean_sizes),
                                std=lambda grad, std_sizes: aten.new_zeros(grad, std_sizes))
normal_tensor_float_op = defop("normal.Tensor_float(Tensor mean, float std=1., *, Generator? generator=None) -> Tensor",
                               _normal_tensor_kernel, node="NormalBackward1",
                               mean=lambda grad, mean_sizes: aten.new_zeros(grad, mean_sizes))
normal_float_tensor_op = defop("normal.float_Tensor(float mean, Tensor std, *, Generator? generator=None) -> Tensor",
                               _normal_tensor_kernel, node="NormalBackward2",
                               std=lambda grad, std_sizes: aten.new_zeros(grad, std_sizes))
normal_tensor_tensor_out_op = defop("normal.Tensor_Tensor_out(Tensor mean, Tensor std, *, Generator? generator=None, "
                                    "Tensor(a!) out) -> Tensor(a!)", _normal_tensor_out_kernel)
normal_tensor_float_out_op = defop("normal.Tensor_float_out(Tensor mean, float std=1., *, Generator? generator=None, "
                                   "Tensor(a!) out) -> Tensor(a!)", _normal_tensor_out_kernel)
normal_float_tensor_out_op = defop("normal.float_Tensor_out(float mean, Tensor std, *, Generator? generator=None, "
                                   "Tensor(a!) out) -> Tensor(a!)", _normal_tensor_out_kernel)
bernoulli_op = defop("bernoulli(Tensor self, *, Generator? generator=None) -> Tensor", _bernoulli_kernel,
                     node="BernoulliBackward0", self=lambda grad: aten.zeros_like(grad))
bernoulli_p_op = defop("bernoulli.p(Tensor self, float p, *, Generator? generator=None) -> Tensor", _bernoulli_kernel)
multinomial_op = defop("multinomial(Tensor self, SymInt num_samples, bool replacement=False, *, "
                       "Generator? generator=None) -> Tensor", _multinomial_kernel)
bernoulli_out_op = defop("bernoulli.out(Tensor self, *, Generator? generator=None, Tensor(a!) out) -> Tensor(a!)",
                         lambda self, *, generator=None, out: _bernoulli_kernel(self, generator=generator))
multinomial_out_op = defop("multinomial.out(Tensor self, SymInt num_samples, bool replacement=False, *, "
                           "Generator? generator=None, Tensor(a!) out) -> Tensor(a!)",
                           lambda self, num_samples, replacement=False, *, generator=None, out:
                           _multinomial_kernel(self, num_samples, replacement, generator=generator))
poisson_op = defop("poisson(Tensor self, Generator? generator=None) -> Tensor", _poisson_kernel,
                   node="PoissonBackward0", self=lambda grad: aten.zeros_like(grad))


@_factory()
def normal(mean=0.0, std=1.0, size=None, *, out=None, generator=None, dtype=None, layout=None, device=None,
           requires_grad=False, pin_memory=False):
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        if out is not None:
            op, mean, std = (normal_tensor_tensor_out_op, mean, std) if isinstance(mean, Tensor) and isinstance(std, Tensor) \
                else (normal_tensor_float_out_op, mean, float(std)) if isinstance(mean, Tensor) \
                else (normal_float_tensor_out_op, float(mean), std)
            return _written_out(op, out, None, None, False, mean, std, generator=generator)
        if isinstance(std, Tensor) and not isinstance(mean, Tensor):
            return normal_float_tensor_op._call(float(mean), std, generator=generator)
        if isinstance(std, Tensor):
            return normal_tensor_tensor_op._call(mean, std, generator=generator)
        return normal_tensor_float_op._call(mean, float(std), generator=generator)
    if size is None:
        raise TypeError("normal() missing required argument 'size'")
    if out is not None:
        return _written_out(normal_float_float_out_op, out, dtype, device, requires_grad, float(mean), float(std),
                            _size((size,)), generator=generator)
    return _leaf(normal_float_float_op._call(float(mean), float(std), _size((size,)), generator=generator, dtype=dtype,
                                             layout=layout, device=_target(device), pin_memory=pin_memory),
                 requires_grad)


@method()
@overridable
def bernoulli(input, p=None, *, generator=None):
    if p is None:
        return bernoulli_op._call(input, generator=generator)
    return bernoulli_p_op._call(input, p, generator=generator)


def _bernoulli_out(input, *, generator=None, out):
    """``torch.bernoulli(input, out=o)``: torch's out= overload, ``aten.bernoulli.out`` (what a dispatch
    mode sees), the draws in ``o``'s dtype (out_wrapper calls it, after the seam)."""
    return bernoulli_out_op._call(input, generator=generator, out=out)


bernoulli.writes_out = _bernoulli_out


@method()
@overridable
def multinomial(input, num_samples, replacement=False, *, generator=None):
    return multinomial_op._call(input, num_samples, replacement, generator=generator)


def _multinomial_out(input, num_samples, replacement=False, *, generator=None, out):
    """``torch.multinomial(..., out=o)``: ``aten.multinomial.out`` (``o`` must be a long tensor, as torch's
    kernel checks)."""
    if isinstance(out, Tensor) and out.dtype is not _dtype.long:
        raise RuntimeError(f"multinomial expects Long tensor out, got: {out.dtype._legacy}")
    return multinomial_out_op._call(input, num_samples, replacement, generator=generator, out=out)


multinomial.writes_out = _multinomial_out


@overridable
def poisson(input, generator=None):
    return poisson_op._call(input, generator)


def _standard_gamma_kernel(self, generator=None):
    """Draws from Gamma(self, 1), one per element. Drawn in float64, so small concentrations keep
    their tiny draws, then cast to the input's dtype."""
    if not has_values(self):
        return meta.zeros(self.shape, self.dtype)
    draws = _rng(generator).standard_gamma(xp.asarray(as_numpy(self), dtype="float64"))
    return xp.asarray(draws, dtype=self.dtype)   # (a 0-d input draws a Python float)


def _sample_dirichlet_kernel(self, generator=None):
    """Draws from Dirichlet(self) along the last dim: normalised Gamma draws."""
    if not has_values(self):
        return meta.zeros(self.shape, self.dtype)
    gammas = _rng(generator).standard_gamma(xp.asarray(as_numpy(self), dtype="float64"))
    return (gammas / gammas.sum(-1, keepdims=True)).astype(self.dtype)


def _standard_gamma_grad_kernel(self, output):
    return _special.standard_gamma_grad(self, output)


def _dirichlet_grad_kernel(x, alpha, total):
    return _special.dirichlet_grad(x, alpha, total)


# torch's private draws for torch.distributions. A Gamma draw's gradient is the implicit
# reparameterisation one (d x / d alpha at a fixed CDF value, _standard_gamma_grad); a Dirichlet draw
# has none, as in torch (its node is NotImplemented; distributions.Dirichlet adds the gradient in its own
# Function, with _dirichlet_grad)
standard_gamma_op = defop("_standard_gamma(Tensor self, Generator? generator=None) -> Tensor", _standard_gamma_kernel,
                          node="StandardGammaBackward0",
                          self=lambda grad, self, result: grad * aten._standard_gamma_grad(self, result))
standard_gamma_grad_op = defop("_standard_gamma_grad(Tensor self, Tensor output) -> Tensor",
                               _standard_gamma_grad_kernel, node="StandardGammaGradBackward0",
                               self=not_implemented("_standard_gamma_grad"), output=None)
sample_dirichlet_op = defop("_sample_dirichlet(Tensor self, Generator? generator=None) -> Tensor",
                            _sample_dirichlet_kernel, node="NotImplemented")
dirichlet_grad_op = defop("_dirichlet_grad(Tensor x, Tensor alpha, Tensor total) -> Tensor", _dirichlet_grad_kernel,
                          node="NotImplemented")


@overridable
def _standard_gamma(input, generator=None):
    """Draws from Gamma(input, 1), one per element (torch._standard_gamma), differentiable in ``input``
    (StandardGammaBackward0)."""
    return standard_gamma_op._call(input, generator)


@overridable
def _standard_gamma_grad(input, output):
    """d output / d input for ``output`` ~ Gamma(input, 1) (torch._standard_gamma_grad)."""
    return standard_gamma_grad_op._call(input, output)


@overridable
def _sample_dirichlet(input, generator=None):
    """Draws from Dirichlet(input) along the last dim (torch._sample_dirichlet)."""
    return sample_dirichlet_op._call(input, generator)


@overridable
def _dirichlet_grad(x, alpha, total):
    """The gradient of Dirichlet draws ``x`` in their concentrations ``alpha`` (summing to ``total``),
    by each component's Beta marginal (torch._dirichlet_grad)."""
    return dirichlet_grad_op._call(x, alpha, total)


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
def _fill_kernel(sampler, needs_dtype=False, refuse=None):
    """The kernel of a random fill: ``sampler(rng, shape, *args)`` written into ``self`` (a meta array
    has nothing to fill: torch's meta kernels only check). ``refuse(dtype)`` raises torch's error for
    a dtype the fill has no kernel for."""
    def kernel(self, *args, generator=None):
        if refuse is not None:
            refuse(self.dtype)
        if needs_dtype:
            args = (_dtype._BY_NUMPY[self.dtype],) + args
        if has_values(self):
            self[...] = sampler(_rng(generator), self.shape, *args)
        return self
    kernel.__name__ = kernel.__qualname__ = f"{sampler.__name__.strip('_')}__kernel"
    return kernel


def _zeros(grad):
    return aten.zeros_like(grad)


def _fill_op(schema, sampler, node, needs_dtype=False, refuse=None, **formulas):
    return defop(schema, _fill_kernel(sampler, needs_dtype, refuse), inplace=True, node=node, self=_zeros, **formulas)


def _not_implemented_unless_floating(kernel_name):
    return lambda nd: _refuse_non_floating(nd, kernel_name)


def _continuous(distribution, cpp_names=False):
    """The refusal of a fill of a continuous distribution into a tensor of integers or bools (torch
    names the dtype by its legacy name or, for some, its C++ one)."""
    def refuse(nd):
        if nd.kind not in "fc" and not _dtype.is_bfloat16_numpy(nd):
            name = _dtype.cpp_name(nd) if cpp_names else _dtype._BY_NUMPY[nd]._legacy
            raise RuntimeError(f"{distribution} distribution is a continuous probability distribution. dtype must be "
                               f"a floating point but you specified {name}")
    return refuse


uniform__op = _fill_op("uniform_(Tensor(a!) self, float from=0., float to=1., *, Generator? generator=None) "
                       "-> Tensor(a!)", _uniform_, "UniformBackward0",
                       refuse=_not_implemented_unless_floating("check_uniform_bounds"))
normal__op = _fill_op("normal_(Tensor(a!) self, float mean=0., float std=1., *, Generator? generator=None) "
                      "-> Tensor(a!)", _normal_, "NormalBackward0",
                      refuse=_not_implemented_unless_floating("normal_kernel_cpu"))
bernoulli__tensor_op = _fill_op("bernoulli_.Tensor(Tensor(a!) self, Tensor p, *, Generator? generator=None) "
                                "-> Tensor(a!)", _bernoulli_, "BernoulliBackward1",
                                p=lambda grad, p_sizes: aten.new_zeros(grad, p_sizes))
bernoulli__op = _fill_op("bernoulli_.float(Tensor(a!) self, float p=0.5, *, Generator? generator=None) -> Tensor(a!)",
                         _bernoulli_, "BernoulliBackward2")
exponential__op = _fill_op("exponential_(Tensor(a!) self, float lambd=1., *, Generator? generator=None) -> Tensor(a!)",
                           lambda r, s, lambd=1.0: r.exponential(1.0 / lambd, s), "ExponentialBackward0",
                           refuse=_continuous("Exponential"))
geometric__op = _fill_op("geometric_(Tensor(a!) self, float p, *, Generator? generator=None) -> Tensor(a!)",
                         lambda r, s, p: r.geometric(p, s), "GeometricBackward0")
log_normal__op = _fill_op("log_normal_(Tensor(a!) self, float mean=1., float std=2., *, Generator? generator=None) "
                          "-> Tensor(a!)", lambda r, s, mean=1.0, std=2.0: r.lognormal(mean, std, s),
                          "LogNormalBackward0", refuse=_not_implemented_unless_floating("log_normal_cpu"))
cauchy__op = _fill_op("cauchy_(Tensor(a!) self, float median=0., float sigma=1., *, Generator? generator=None) "
                      "-> Tensor(a!)", lambda r, s, median=0.0, sigma=1.0: median + sigma * r.standard_cauchy(s),
                      "CauchyBackward0", refuse=_continuous("Cauchy", cpp_names=True))
random__from_op = _fill_op("random_.from(Tensor(a!) self, int from, int? to, *, Generator? generator=None) "
                           "-> Tensor(a!)", _random_, "RandomBackward0", needs_dtype=True)
random__to_op = _fill_op("random_.to(Tensor(a!) self, int to, *, Generator? generator=None) -> Tensor(a!)",
                         _random_, "RandomBackward1", needs_dtype=True)
random__op = _fill_op("random_(Tensor(a!) self, *, Generator? generator=None) -> Tensor(a!)", _random_,
                      "RandomBackward2", needs_dtype=True)


def _random_fill(name, pick):
    """``Tensor.<name>``: the op ``pick(*args)`` chooses, on ``self`` (torch's argument forms)."""
    @overridable
    def fill_(self, *args, generator=None, **kwargs):
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


@method()
def new(self, *args, **kwargs):
    """``Tensor.new``: the legacy constructor (``x.new(2, 3)``, ``x.new([1, 2])``, ``x.new()``) of a tensor of
    ``self``'s dtype and device, as ``torch.FloatTensor(...)`` is for float32 (glasstorch/_legacy_types.py)."""
    from .._legacy_types import legacy_type_of
    return legacy_type_of(self.dtype, self.device.type)._construct(args, kwargs)
