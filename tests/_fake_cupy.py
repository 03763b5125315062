"""A stand-in for CuPy, for tests only: NumPy underneath, CuPy's boundary on top. NOT a GPU check.

glasstorch's CUDA path runs its kernels on CuPy arrays through NumPy's dispatch protocols
(``glasstorch/_array``). Without a GPU none of that could be exercised, and the commonest CUDA
bugs -- a kernel that makes a NumPy array (``np.zeros(shape)``, ``np.arange(n)``) and combines it
with a device array, or hands a device array to a NumPy function that converts it
(``np.asarray``) -- would first show on a GPU machine. This module is installed as ``cupy``
(``sys.modules``) by ``pytest --device fakecuda`` (tests/conftest.py); glasstorch then believes one
GPU is there, and the op registry and the device tests run on it as on ``cuda``.

What it models, as CuPy does:

* its own array type, :class:`ndarray`, which is no NumPy array (``isinstance(a, numpy.ndarray)``
  is False) and refuses to become one implicitly: ``numpy.asarray(a)`` (``__array__``) raises
  CuPy's TypeError ("Implicit conversion to a NumPy array is not allowed..."); ``a.get()``,
  ``cupy.asnumpy(a)`` copy to the host, ``cupy.asarray(host)`` copies to the "device";
* NumPy's functions and ufuncs given one of its arrays dispatch to it (``__array_function__``,
  ``__array_ufunc__``), and refuse a NumPy array among their operands (TypeError "Unsupported type
  <class 'numpy.ndarray'>"), as CuPy refuses host memory in a kernel; Python and NumPy scalars
  are accepted;
* reductions and element access give 0-d arrays, not NumPy scalars (``cupy.sum(a)`` is a 0-d
  array); ``int()``/``float()``/``bool()``/``.item()``/``.tolist()`` copy to the host;
* indexing with NumPy index arrays and assigning NumPy values into it (``a[i] = host``) are
  accepted (CuPy copies them to the device);
* bfloat16 is refused (CuPy has no bfloat16 dtype);
* ``cupy.cuda``: one device (``runtime.getDeviceCount() == 1``, ``Device``, ``synchronize``,
  ``getDeviceProperties``, ``memGetInfo``) and ``get_default_memory_pool()``.

What it does NOT model: any GPU (values are computed by NumPy on the CPU, in NumPy's precision and
order, so no TF32, no atomics' order, no kernel differences); streams, events and asynchrony
(everything is synchronous); device memory and its pool (``used_bytes()`` counts nothing, no
out-of-memory); pinned memory; more than one device; which NumPy functions CuPy lacks (every NumPy
function works here, where CuPy may have no counterpart or different keyword arguments); CuPy's
own type promotion and casting rules where they differ from NumPy's.
"""
import sys
import types

import numpy

_IMPLICIT = ("Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct a NumPy "
             "array explicitly.")


def _check_dtype(dtype):
    name = getattr(dtype, "name", None) or getattr(dtype, "__name__", None) or str(dtype)
    if name == "bfloat16":
        raise TypeError("Unsupported dtype bfloat16 (glasstorch's CuPy stand-in: CuPy has no bfloat16)")


class ndarray:
    """A "device" array: a NumPy array held inside, reachable only through CuPy's API."""
    __array_priority__ = 100
    __hash__ = None

    def __init__(self, shape, dtype=float, _host=None):
        if _host is None:
            _host = numpy.empty(shape, dtype)
        _check_dtype(_host.dtype)
        self._a = _host

    # ---- CuPy's boundary -------------------------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        raise TypeError(_IMPLICIT)

    def get(self, stream=None, order="C", out=None):
        """A copy on the host (CuPy's device-to-host transfer)."""
        return self._a.copy()

    def set(self, arr, stream=None):
        self._a[...] = arr

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.get("out")
        if out is not None:
            kwargs["out"] = tuple(_device_only(o) for o in out)
        with numpy.errstate(all="ignore"):   # (CuPy's kernels compute inf/NaN silently: no RuntimeWarning)
            result = getattr(ufunc, method)(*[_device_only(x) for x in inputs],
                                            **{k: v if k == "out" else _device_only(v) for k, v in kwargs.items()})
        if out is not None:
            return out[0] if len(out) == 1 else out
        return _wrap(result)

    def __array_function__(self, func, types, args, kwargs):
        if func in _TO_DEVICE:        # (numpy.asarray(host, like=a): cupy.asarray, which copies host memory over)
            return _TO_DEVICE[func](*args, **kwargs)
        with numpy.errstate(all="ignore"):
            return _wrap(func(*_device_only(args), **_device_only(kwargs)))

    # ---- attributes ------------------------------------------------------------------------
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    strides = property(lambda self: self._a.strides)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    flags = property(lambda self: self._a.flags)
    T = property(lambda self: _wrap(self._a.T))
    mT = property(lambda self: _wrap(numpy.swapaxes(self._a, -1, -2)))
    real = property(lambda self: _wrap(self._a.real))
    imag = property(lambda self: _wrap(self._a.imag))
    device = property(lambda self: cuda.Device(0))

    @property
    def base(self):
        b = self._a.base
        while b is not None and not isinstance(b, numpy.ndarray):    # (as_strided's holder)
            b = getattr(b, "base", None)
        return None if b is None else _wrap(b)

    @property
    def data(self):
        return types.SimpleNamespace(ptr=self._a.__array_interface__["data"][0])

    @shape.setter
    def shape(self, value):
        self._a.shape = value

    def __getattr__(self, name):   # the array's methods (reshape, astype, sum, ...): NumPy's, on the device
        if name.startswith("__"):
            raise AttributeError(name)
        attr = getattr(self._a, name)
        if not callable(attr):
            return _wrap(attr)
        return lambda *args, **kwargs: _wrap(attr(*_device_only(args), **_device_only(kwargs)))

    def astype(self, dtype, *args, **kwargs):
        _check_dtype(dtype)
        return _wrap(self._a.astype(dtype, *args, **kwargs))

    def view(self, *args, **kwargs):
        if args and not isinstance(args[0], type):
            _check_dtype(args[0])
        return _wrap(self._a.view(*args, **kwargs))

    # ---- to the host: explicit, as CuPy's (each one a synchronising copy) -------------------
    def item(self, *args):
        return self._a.item(*args)

    def tolist(self):
        return self._a.tolist()

    def __bool__(self):
        return bool(self._a)

    def __int__(self):
        return int(self._a)

    def __float__(self):
        return float(self._a)

    def __complex__(self):
        return complex(self._a)

    def __index__(self):
        return self._a.__index__()

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        return (_wrap(x) for x in self._a)

    def __repr__(self):
        return repr(self._a).replace("array(", "fake_cupy.array(", 1)

    def __copy__(self):
        return _wrap(self._a.copy())

    def __deepcopy__(self, memo):
        return _wrap(self._a.copy())

    def __reduce__(self):
        return (_wrap, (self._a.copy(),))

    # ---- indexing: host index arrays and host values are copied over, as CuPy does ----------
    def __getitem__(self, index):
        return _wrap(self._a[_index(index)])

    def __setitem__(self, index, value):
        self._a[_index(index)] = value._a if isinstance(value, ndarray) else value


def _operator(ufunc, reflected=False):
    if reflected:
        return lambda self, other: ufunc(other, self)
    return lambda self, other: ufunc(self, other)


def _inplace(ufunc):
    def apply(self, other):
        ufunc(self, other, out=(self,))
        return self
    return apply


for _name, _ufunc in [("add", numpy.add), ("sub", numpy.subtract), ("mul", numpy.multiply),
                      ("truediv", numpy.true_divide), ("floordiv", numpy.floor_divide), ("mod", numpy.remainder),
                      ("pow", numpy.power), ("matmul", numpy.matmul), ("and", numpy.bitwise_and),
                      ("or", numpy.bitwise_or), ("xor", numpy.bitwise_xor), ("lshift", numpy.left_shift),
                      ("rshift", numpy.right_shift), ("divmod", numpy.divmod)]:
    setattr(ndarray, f"__{_name}__", _operator(_ufunc))
    setattr(ndarray, f"__r{_name}__", _operator(_ufunc, reflected=True))
    if _name != "divmod":
        setattr(ndarray, f"__i{_name}__", _inplace(_ufunc))
for _name, _ufunc in [("eq", numpy.equal), ("ne", numpy.not_equal), ("lt", numpy.less), ("le", numpy.less_equal),
                      ("gt", numpy.greater), ("ge", numpy.greater_equal)]:
    setattr(ndarray, f"__{_name}__", _operator(_ufunc))
ndarray.__neg__ = lambda self: numpy.negative(self)
ndarray.__pos__ = lambda self: numpy.positive(self)
ndarray.__abs__ = lambda self: numpy.absolute(self)
ndarray.__invert__ = lambda self: numpy.invert(self)


def _wrap(x):
    """A NumPy result as what CuPy gives: arrays (and scalars: 0-d arrays) on the device."""
    if isinstance(x, numpy.ndarray):
        return ndarray(None, _host=x)
    if isinstance(x, numpy.generic):
        return ndarray(None, _host=numpy.asarray(x))
    if isinstance(x, tuple):
        return type(x)(*map(_wrap, x)) if hasattr(x, "_fields") else tuple(_wrap(y) for y in x)
    if isinstance(x, list):
        return [_wrap(y) for y in x]
    return x


def _device_only(x):
    """An operand of a device computation: a device array's memory; a NumPy array is refused (CuPy's
    kernels take device memory only); scalars, dtypes, shapes pass."""
    if isinstance(x, ndarray):
        return x._a
    if isinstance(x, numpy.ndarray):
        raise TypeError(f"Unsupported type {type(x)}")
    if isinstance(x, (list, tuple)):
        return type(x)(_device_only(y) for y in x) if not hasattr(x, "_fields") else x
    if isinstance(x, dict):
        return {k: _device_only(v) for k, v in x.items()}
    return x


def _index(index):
    if isinstance(index, tuple):
        return tuple(i._a if isinstance(i, ndarray) else i for i in index)
    return index._a if isinstance(index, ndarray) else index


# ---- the module's functions ------------------------------------------------------------------
def asarray(a, dtype=None, order=None, *, blocking=False):
    """``a`` on the device: a host array or Python values are copied there."""
    _check_dtype(dtype)
    if isinstance(a, ndarray):
        return a if dtype is None or numpy.dtype(dtype) == a.dtype else a.astype(dtype)
    return ndarray(None, _host=numpy.array(a, dtype=dtype, order=order or "K", copy=True))


def array(obj, dtype=None, copy=True, order="K", subok=False, ndmin=0, *, blocking=False):
    if isinstance(obj, ndarray):
        return ndarray(None, _host=numpy.array(obj._a, dtype=dtype, copy=copy, order=order, ndmin=ndmin))
    _check_dtype(dtype)
    return ndarray(None, _host=numpy.array(obj, dtype=dtype, copy=True, order=order, ndmin=ndmin))


_TO_DEVICE = {numpy.asarray: asarray, numpy.array: array, numpy.asanyarray: asarray}


def asnumpy(a, stream=None, order="C", out=None, *, blocking=True):
    """A host copy of a device array (a host array as it is)."""
    return a.get() if isinstance(a, ndarray) else numpy.asarray(a)


def get_array_module(*args):
    return sys.modules[__name__] if any(isinstance(a, ndarray) for a in args) else numpy


def ascontiguousarray(a, dtype=None):
    return _wrap(numpy.ascontiguousarray(_device_only(a), dtype=dtype))


def _device_function(fn):
    def call(*args, **kwargs):
        if "dtype" in kwargs:
            _check_dtype(kwargs["dtype"])
        return _wrap(fn(*_device_only(args), **_device_only(kwargs)))
    call.__name__ = getattr(fn, "__name__", "function")
    return call


class _Namespace(types.ModuleType):
    """numpy (or numpy.linalg, numpy.fft, numpy.random) as CuPy's namespace: functions compute on the
    device; types, dtypes and constants are NumPy's own (CuPy uses NumPy's dtypes)."""

    def __init__(self, name, source):
        super().__init__(name)
        self._source = source

    def __getattr__(self, name):
        value = getattr(self._source, name)
        if isinstance(value, (type, numpy.dtype)) or not callable(value):
            return value
        if isinstance(value, numpy.ufunc):
            return value           # (a ufunc dispatches to the device array by itself: __array_ufunc__)
        return _device_function(value)


def _as_strided(x, shape=None, strides=None):
    return _wrap(numpy.lib.stride_tricks.as_strided(_device_only(x), shape, strides))


lib = types.SimpleNamespace(stride_tricks=types.SimpleNamespace(as_strided=_as_strided))
linalg = _Namespace("cupy.linalg", numpy.linalg)
fft = _Namespace("cupy.fft", numpy.fft)
random = _Namespace("cupy.random", numpy.random)


class _Device:
    def __init__(self, device=None):
        self.id = 0 if device is None else int(device)
        if self.id != 0:
            raise RuntimeError("CUDA error: invalid device ordinal (glasstorch's CuPy stand-in has one device)")

    def use(self):
        pass

    def synchronize(self):
        pass          # (nothing is asynchronous here)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _MemoryPool:
    """No device memory is modelled: nothing is counted."""

    def used_bytes(self):
        return 0

    def total_bytes(self):
        return 0

    def free_all_blocks(self):
        pass


_POOL = _MemoryPool()


def get_default_memory_pool():
    return _POOL


cuda = types.SimpleNamespace(
    Device=_Device,
    runtime=types.SimpleNamespace(
        getDeviceCount=lambda: 1,
        getDeviceProperties=lambda i: {"name": b"glasstorch CuPy stand-in (NumPy on the CPU, no GPU)",
                                       "totalGlobalMem": 1 << 30, "major": 0, "minor": 0},
        memGetInfo=lambda: (1 << 30, 1 << 30)),
)

__version__ = "0.0-glasstorch-stand-in"
IS_FAKE = True      # (tests ask this to tell the stand-in from CuPy)


def __getattr__(name):
    """Every other name: NumPy's, as a device function (``cupy.zeros``, ``cupy.concatenate``, ...)."""
    return _Namespace.__getattr__(_SELF, name)


_SELF = _Namespace("cupy", numpy)


def install():
    """Make ``import cupy`` give this module (for a whole test run: glasstorch imports CuPy once)."""
    sys.modules["cupy"] = sys.modules[__name__]
