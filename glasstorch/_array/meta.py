"""The meta device: arrays with a shape, a dtype and strides, and no data.

A :class:`MetaArray` stands where an ndarray would. It takes part in NumPy's own dispatch
protocols (``__array_ufunc__`` for ufuncs and the operators, ``__array_function__`` for
``np.sum``, ``np.matmul``, ``np.concatenate``, ...), so the *same* op kernels that compute on
NumPy arrays compute on meta arrays -- and get only the result's shape, dtype and strides:

    >>> a = MetaArray((100_000, 100_000), np.float32)     # 40 GB described, nothing allocated
    >>> (a @ a.T).shape, (a + 1).dtype, a.sum(axis=1).shape
    ((100000, 100000), dtype('float32'), (100000,))

How each result is worked out:

* **dtype**: by NumPy itself, on a one-element stand-in of each operand's dtype and number of
  dims (so NumPy's promotion rules, value-based ones included, decide exactly as they would);
* **shape**: by the broadcasting, reduction, matmul and indexing rules below;
* **strides**: views (slicing, transpose, swapaxes, broadcast_to, diagonal, ...) are taken by
  NumPy on a *probe*: an ndarray with the meta array's shape and strides over a one-element
  buffer, which a view never reads; a new result is laid out row-major.

Functions with no rule here run, for tensors of at most ``SMALL`` elements, on zero-filled
stand-ins of the operands' shapes that take no memory (NumPy's ``broadcast_to`` of one zero),
and only the result's shape and dtype are kept; past that size they raise. Whatever needs the
values (``bool(a)``, ``a.item()``, ``np.asarray(a)``, a mask's ``nonzero``) raises
:class:`MetaDataError`, which the op layer reports in torch's words.
"""
import math
import operator

import numpy as np

from .layout import view_strides

SMALL = 1 << 16   # the largest operand (elements) the fallback's stand-ins may be computed on


class _Touched:
    """Set whenever a meta array's shape is read or NumPy hands it a computation: the hint the op
    layer reads after each kernel (one attribute test: a CPU op pays nothing more) before it settles
    a result that may involve meta arrays (``settle``)."""
    __slots__ = ("flag",)

    def __init__(self):
        self.flag = False


touched = _Touched()


class MetaDataError(NotImplementedError):
    """A kernel asked for the values of a meta array (or for a NumPy function with no meta rule).
    Its text completes "glasstorch's meta device has no data: ..." ."""

    def __init__(self, what):
        super().__init__(f"a meta tensor has no data, and {what}")


def _c_strides(shape, itemsize):
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


class _Flags:
    """The part of ``ndarray.flags`` kernels read."""
    __slots__ = ("c_contiguous", "f_contiguous", "writeable", "owndata")

    def __init__(self, array):
        self.c_contiguous = _contiguous(array.shape, array.strides, array.itemsize, reversed_order=False)
        self.f_contiguous = _contiguous(array.shape, array.strides, array.itemsize, reversed_order=True)
        self.writeable = array._writeable
        self.owndata = array.base is None

    def __getitem__(self, name):
        return getattr(self, {"C_CONTIGUOUS": "c_contiguous", "F_CONTIGUOUS": "f_contiguous",
                              "WRITEABLE": "writeable", "OWNDATA": "owndata"}.get(name, name.lower()))

    @property
    def contiguous(self):
        return self.c_contiguous


def _contiguous(shape, strides, itemsize, reversed_order):
    """NumPy's definition: dims of size 1 do not count, an empty array is contiguous."""
    if 0 in shape:
        return True
    pairs = list(zip(shape, strides))
    expected = itemsize
    for n, st in (pairs if reversed_order else reversed(pairs)):
        if n == 1:
            continue
        if st != expected:
            return False
        expected *= n
    return True


class MetaArray(np.lib.mixins.NDArrayOperatorsMixin):
    """An array that has ``shape``, ``dtype`` and ``strides`` (in bytes, as NumPy's) and no data.

    ``offset`` (bytes from the start of its base's memory) and ``base`` (the array whose memory
    a view shares) make views' storage offsets and memory sharing answerable.
    """
    # (NumPy < 2's mixin has no __slots__, so its instances already carry a __dict__ and __weakref__)
    __slots__ = ("_shape", "dtype", "strides", "offset", "base", "_writeable") + \
        (("__weakref__",) if "__slots__" in vars(np.lib.mixins.NDArrayOperatorsMixin) else ())
    __array_priority__ = 100

    def __init__(self, shape, dtype, strides=None, offset=0, base=None, writeable=True):
        self._shape = tuple(int(n) for n in shape)
        self.dtype = np.dtype(dtype)
        self.strides = _c_strides(self._shape, self.dtype.itemsize) if strides is None else tuple(strides)
        self.offset = offset
        self.base = base
        self._writeable = writeable

    @property
    def shape(self):
        touched.flag = True
        return self._shape

    @shape.setter
    def shape(self, value):   # ``a.shape = ...``: a reshape in place, as NumPy's (kernels use it)
        r = _reshape(self, value)
        if r._root() is not self._root():   # (NumPy refuses a shape that needs a copy; so does a meta array)
            raise AttributeError("Incompatible shape for in-place modification. Use `.reshape()` to make a "
                                 "copy with the desired shape.")
        self._shape, self.strides = r.shape, r.strides

    # ---- what an ndarray answers without its data ---------------------------------------
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))
    itemsize = property(lambda self: self.dtype.itemsize)
    nbytes = property(lambda self: self.size * self.dtype.itemsize)
    flags = property(_Flags)
    T = property(lambda self: self.transpose())
    mT = property(lambda self: self.swapaxes(-1, -2))

    @property
    def real(self):
        return self if self.dtype.kind != "c" else _view(self, np.real)

    @property
    def imag(self):
        if self.dtype.kind != "c":
            return _new((self.shape, self.dtype))
        return _view(self, np.imag)

    def __repr__(self):
        return f"MetaArray(shape={self.shape}, dtype={self.dtype})"

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    # ---- what needs the data -------------------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        raise MetaDataError("the computation reads its values (NumPy asked for them)")

    def item(self, *args):
        raise MetaDataError("the computation reads a value (item)")

    def tolist(self):
        raise MetaDataError("the computation reads its values (tolist)")

    def __bool__(self):
        raise MetaDataError("the computation decides on a value (bool)")

    __float__ = __int__ = __index__ = __complex__ = lambda self: _raise_data("the computation reads a value")

    def nonzero(self):
        raise MetaDataError("the result's shape depends on the values (nonzero)")

    def fill(self, value):
        return None

    # ---- ndarray methods whose form differs from NumPy's functions -------------------------
    def reshape(self, *shape, order="C"):
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        return _reshape(self, shape)

    def transpose(self, *axes):
        axes = axes[0] if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else axes
        return _view(self, np.transpose, axes or None)

    def view(self, dtype=None, type=None):
        if dtype is None or np.dtype(dtype) == self.dtype:
            return MetaArray(self.shape, self.dtype, self.strides, self.offset, self._root(), self._writeable)
        dtype = np.dtype(dtype)
        if dtype.itemsize == self.itemsize:
            return MetaArray(self.shape, dtype, self.strides, self.offset, self._root(), self._writeable)
        # NumPy's rule: the last dim, which must be contiguous, is rescaled
        if not self.shape or self.strides[-1] != self.itemsize or (self.shape[-1] * self.itemsize) % dtype.itemsize:
            raise ValueError("To change to a dtype of a different size, the last axis must be contiguous")
        shape = self.shape[:-1] + (self.shape[-1] * self.itemsize // dtype.itemsize,)
        return MetaArray(shape, dtype, self.strides[:-1] + (dtype.itemsize,), self.offset, self._root(),
                         self._writeable)

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        dtype = np.dtype(dtype)
        if not copy and dtype == self.dtype:
            return self
        return _new((self.shape, dtype), like=self if order in ("K", "A") else None)

    def copy(self, order="C"):
        return _new((self.shape, self.dtype), like=self if order == "K" else None)

    def ravel(self, order="C"):
        return _reshape(self, (-1,))

    def flatten(self, order="C"):
        return _new(((self.size,), self.dtype))

    def _root(self):
        return self if self.base is None else self.base

    def __getattr__(self, name):
        # the other ndarray methods (sum, max, argsort, clip, swapaxes, ...) are NumPy's functions
        # applied to the array: they come back through __array_function__
        fn = getattr(np, name, None)
        if fn is None or name.startswith("_") or not callable(fn):
            raise AttributeError(f"'MetaArray' object has no attribute '{name}'")
        return lambda *args, **kwargs: fn(self, *args, **kwargs)

    # ---- indexing -------------------------------------------------------------------------
    def __getitem__(self, index):
        touched.flag = True
        return _index(self, index)

    def __setitem__(self, index, value):
        touched.flag = True
        target = _index(self, index)
        shape = value.shape if hasattr(value, "shape") else np.shape(value)
        _broadcast(tuple(shape), target.shape)   # (a write with no data: only its shapes are checked)

    # ---- NumPy's protocols ----------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        touched.flag = True
        out = kwargs.pop("out", None)
        kwargs.pop("where", None)
        if method == "__call__":
            result = _ufunc_call(ufunc, inputs, kwargs)
        elif method == "reduce":
            result = _ufunc_reduce(ufunc, inputs[0], **kwargs)
        elif method == "accumulate":
            result = _new((inputs[0].shape, _dummy_dtype(getattr(ufunc, method), (inputs[0],), kwargs)))
        elif method == "at":
            return None    # in place at indices: nothing to compute without data
        elif method == "outer":
            a, b = inputs
            result = _new((np.shape(a) + np.shape(b), _dummy_dtype(ufunc, (a, b), kwargs)))
        elif method == "reduceat":
            a, indices = inputs[0], inputs[1]
            axis = kwargs.get("axis", 0) % max(np.ndim(a), 1)
            shape = list(a.shape)
            shape[axis] = len(indices)
            result = _new((tuple(shape), a.dtype))
        else:
            return NotImplemented
        if out is not None:
            return out[0] if isinstance(out, tuple) and len(out) == 1 else out
        return result

    def __array_function__(self, func, types, args, kwargs):
        touched.flag = True
        if not all(issubclass(t, (MetaArray, np.ndarray)) for t in types):
            return NotImplemented
        rule = _FUNCTIONS.get(func)
        if rule is not None:
            return rule(*args, **kwargs)
        return _fallback(func, args, kwargs)


def _raise_data(what):
    raise MetaDataError(what)


def _new(spec, like=None):
    """A new meta array of (shape, dtype), row-major, or laid out as ``like`` (preserve_format)."""
    shape, dtype = spec
    dtype = np.dtype(dtype)
    if like is not None and like.ndim == len(shape) and not like.flags.c_contiguous and like.ndim > 1:
        order = sorted(range(len(shape)), key=lambda i: (-abs(like.strides[i]), i))
        strides = [0] * len(shape)
        step = dtype.itemsize
        for i in reversed(order):
            strides[i] = step
            step *= max(shape[i], 1)
        return MetaArray(shape, dtype, tuple(strides))
    return MetaArray(shape, dtype)


def _probe(a):
    """An ndarray with ``a``'s shape, dtype and strides over a one-element buffer: NumPy takes views
    of it (which never read elements) to tell a view's shape, strides and offset."""
    buffer = np.zeros(1, dtype=a.dtype)
    return buffer, np.lib.stride_tricks.as_strided(buffer, a.shape, a.strides, writeable=False)


def _from_probe(a, buffer, view):
    shift = view.__array_interface__["data"][0] - buffer.__array_interface__["data"][0]
    return MetaArray(view.shape, view.dtype, view.strides, a.offset + shift, a._root(), a._writeable)


def _view(a, fn, *args, **kwargs):
    """``fn(a, ...)`` for a NumPy function that returns a view (transpose, diagonal, broadcast_to...)."""
    buffer, probe = _probe(a)
    return _from_probe(a, buffer, fn(probe, *args, **kwargs))


def _reshape(a, shape):
    shape = tuple(int(n) for n in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    if shape.count(-1) > 1:
        raise ValueError("can only specify one unknown dimension")
    if -1 in shape:
        known = math.prod(n for n in shape if n != -1)
        if known == 0 or a.size % known:
            raise ValueError(f"cannot reshape array of size {a.size} into shape {shape}")
        shape = tuple(a.size // known if n == -1 else n for n in shape)
    if math.prod(shape) != a.size:
        raise ValueError(f"cannot reshape array of size {a.size} into shape {shape}")
    strides = view_strides(a.shape, a.strides, shape)
    if strides is not None:             # the elements allow a view: torch's strides for it (size-1 dims too)
        return MetaArray(shape, a.dtype, strides, a.offset, a._root(), a._writeable)
    return MetaArray(shape, a.dtype)     # NumPy copies


def _shape_of(x):
    return tuple(x.shape) if hasattr(x, "shape") else np.shape(x)


def _broadcast(*shapes):
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(f"operands could not be broadcast together with shapes "
                         f"{' '.join(str(s) for s in shapes)}") from None


def _stand_in(x):
    """A one-element ndarray with ``x``'s dtype and number of dims (what NumPy's promotion sees)."""
    if isinstance(x, MetaArray):
        return np.zeros((1,) * x.ndim, dtype=x.dtype)
    if isinstance(x, np.ndarray) and x.size > 1:
        return np.zeros((1,) * x.ndim, dtype=x.dtype)
    return x


def _dummy_dtype(fn, inputs, kwargs):
    with np.errstate(all="ignore"):
        r = fn(*[_stand_in(x) for x in inputs], **kwargs)
    return r[0].dtype if isinstance(r, tuple) else np.asarray(r).dtype


def settle(op, args, result):
    """An op's result after its kernel touched a meta array: torch's device rule on the op's tensor
    arguments (``check_devices``), and, when one of them is meta, the result as meta arrays (a
    kernel may have made part of it with NumPy's own functions, ``np.zeros(a.shape)``)."""
    touched.flag = False
    if check_devices(op, args) == "meta" and not _device_given(op, args):
        return as_meta(result)
    return result


def _device_given(op, args):
    """Whether ``op`` was told where to make its result (``empty_like(meta_tensor, device="cpu")``,
    ``new_zeros(..., device=...)``): its kernel made it there, meta or not."""
    position = op._arg_index.get("device")
    return position is not None and args[position] is not None


def check_devices(op, args):
    """torch's device rule for an op whose result came out meta (``device_rule.check``: every tensor
    argument on one device, but numbers and index tensors). ``args``: the op's arguments in schema
    order. The kernels' own NumPy arrays (index ranges, constants) are no arguments and never
    count. Returns the device ("cpu", "meta", ...) of the tensors, or None when there are none."""
    from .device_rule import check
    return check(op, args)


def _same_device(arrays):
    expected = None
    for data in arrays:
        if isinstance(data, MetaArray):
            here = "meta"
        elif isinstance(data, np.ndarray) and data.ndim > 0:
            here = "cpu"
        else:
            continue
        if expected is None:
            expected = here
        elif here != expected:
            raise RuntimeError(f"Tensor on device {here} is not on the expected device {expected}!")
    return expected


def _arrays_in(args, kwargs):
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, (list, tuple)):
            yield from a
        else:
            yield a


def _ufunc_call(ufunc, inputs, kwargs):
    if ufunc.signature is not None:       # matmul: (n?,k),(k,m?)->(n?,m?)
        if ufunc is not np.matmul:
            raise MetaDataError(f"numpy.{ufunc.__name__} has no meta rule here")
        return _new((_matmul_shape(*[_shape_of(x) for x in inputs]), _dummy_dtype(ufunc, inputs, kwargs)))
    shape = _broadcast(*[_shape_of(x) for x in inputs])
    like = _elementwise_layout(inputs, shape)
    if ufunc.nout > 1:
        return tuple(_new((shape, np.dtype(d)), like) for d in _dummy_dtypes(ufunc, inputs, kwargs))
    return _new((shape, _dummy_dtype(ufunc, inputs, kwargs)), like)


def _elementwise_layout(inputs, shape):
    """The operand whose layout an element-wise result of ``shape`` takes, as NumPy (order="K") and
    torch's TensorIterator lay it out: the first operand of the result's shape (None: row-major)."""
    return next((x for x in inputs if isinstance(x, (MetaArray, np.ndarray)) and x.shape == shape), None)


def _dummy_dtypes(ufunc, inputs, kwargs):
    with np.errstate(all="ignore"):
        return [np.asarray(r).dtype for r in ufunc(*[_stand_in(x) for x in inputs], **kwargs)]


def _matmul_shape(a, b):
    if not a or not b:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
                         f"(n?,k),(k,m?)->(n?,m?) (size {b2[-2]} is different from {a2[-1]})")
    batch = _broadcast(a2[:-2], b2[:-2])
    return batch + (a2[-2],) * (len(a) > 1) + (b2[-1],) * (len(b) > 1)


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for ax in axes:
        ax = operator.index(ax)
        if not -max(ndim, 1) <= ax < max(ndim, 1):
            raise np.exceptions.AxisError(ax, ndim) if hasattr(np, "exceptions") else IndexError(ax)
        out.append(ax % max(ndim, 1))
    return tuple(out)


def _reduced_shape(shape, axis, keepdims):
    axes = _axes(axis, len(shape))
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def _ufunc_reduce(ufunc, a, axis=0, dtype=None, keepdims=False, initial=np._NoValue, **_):
    shape = _reduced_shape(a.shape, axis, keepdims)
    kwargs = {"axis": axis, "keepdims": keepdims}
    if dtype is not None:
        kwargs["dtype"] = dtype
    with np.errstate(all="ignore"):
        r = ufunc.reduce(np.zeros((1,) * a.ndim, a.dtype), **kwargs)
    return _new((shape, np.asarray(r).dtype))


def _reduction(fn):
    """np.sum, np.max, np.argmax, ...: the reduced shape; the dtype as NumPy gives it."""
    def rule(a, axis=None, *args, keepdims=False, out=None, **kwargs):
        if args:   # (np.sum(a, axis, dtype, out, keepdims) spelled positionally)
            kwargs.update(zip(("dtype", "out", "keepdims"), args))
            keepdims = kwargs.pop("keepdims", keepdims)
            kwargs.pop("out", None)
        kwargs.pop("where", None)
        kwargs.pop("initial", None)
        shape = _reduced_shape(a.shape, axis, keepdims)
        with np.errstate(all="ignore"):
            r = fn(np.zeros((1,) * a.ndim, a.dtype), axis=axis, keepdims=keepdims, **kwargs)
        result = _new((shape, np.asarray(r).dtype))
        return result if out is None else out
    return rule


def _zeros_like_rule(a, dtype=None, order="K", subok=True, shape=None, **_):
    shape = a.shape if shape is None else (tuple(shape) if isinstance(shape, (tuple, list)) else (shape,))
    return _new((shape, a.dtype if dtype is None else dtype), like=a if order == "K" else None)


def _full_like_rule(a, fill_value, dtype=None, order="K", subok=True, shape=None, **_):
    return _zeros_like_rule(a, dtype, order, subok, shape)


def _concatenate_rule(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    arrays = list(arrays)
    _same_device(arrays)   # (its operands are the tensors themselves: the kernels add none of their own)
    if axis is None:
        return _new(((sum(math.prod(_shape_of(a)) for a in arrays),), _result_dtype(arrays, dtype)))
    first = _shape_of(arrays[0])
    ax = _axes(axis, len(first))[0]
    for a in arrays[1:]:
        s = _shape_of(a)
        if len(s) != len(first) or any(x != y for i, (x, y) in enumerate(zip(s, first)) if i != ax):
            raise ValueError("all the input array dimensions except for the concatenation axis must match exactly")
    shape = first[:ax] + (sum(_shape_of(a)[ax] for a in arrays),) + first[ax + 1:]
    return _new((shape, _result_dtype(arrays, dtype)))


def _stack_rule(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    arrays = list(arrays)
    _same_device(arrays)   # (its operands are the tensors themselves: the kernels add none of their own)
    shapes = {_shape_of(a) for a in arrays}
    if len(shapes) != 1:
        raise ValueError("all input arrays must have the same shape")
    first = shapes.pop()
    ax = _axes(axis, len(first) + 1)[0]
    return _new((first[:ax] + (len(arrays),) + first[ax:], _result_dtype(arrays, dtype)))


def _result_dtype(arrays, dtype):
    return np.dtype(dtype) if dtype is not None else np.result_type(*[_stand_in(a) for a in arrays])


def _where_rule(condition, x=None, y=None):
    if x is None:
        raise MetaDataError("the result's shape depends on the values (where with one argument)")
    shape = _broadcast(_shape_of(condition), _shape_of(x), _shape_of(y))
    return _new((shape, _dummy_dtype(np.where, (condition, x, y), {})), _elementwise_layout((condition, x, y), shape))


def _take_along_axis_rule(arr, indices, axis=None):
    if axis is None:
        return _new((_shape_of(indices), arr.dtype))
    ax = _axes(axis, arr.ndim)[0]
    shape = _broadcast(tuple(1 if i == ax else n for i, n in enumerate(arr.shape)),
                       tuple(1 if i == ax else n for i, n in enumerate(_shape_of(indices))))
    shape = shape[:ax] + (_shape_of(indices)[ax],) + shape[ax + 1:]
    return _new((shape, arr.dtype))


def _copyto_rule(dst, src, casting="same_kind", where=True):
    _broadcast(_shape_of(src), dst.shape)


def _write_rule(arr, *args, **kwargs):
    """``np.put_along_axis(a, ...)``, ``np.putmask(a, ...)``: a write into a meta array, which has no
    values to change (an op's kernel allocates its result on the input's device, then scatters)."""
    return None


def _clip_rule(a, a_min=None, a_max=None, out=None, **kwargs):
    kwargs.pop("min", None)
    kwargs.pop("max", None)
    dtype = _dummy_dtype(np.clip, (a, a_min, a_max), kwargs)
    shape = _broadcast(a.shape, _shape_of(a_min) if a_min is not None else (), _shape_of(a_max) if a_max is not None else ())
    return out if out is not None else _new((shape, dtype), _elementwise_layout((a, a_min, a_max), shape))


def _elementwise_rule(fn):
    """np.round, np.sinc: element-wise functions that are no ufuncs, laid out as a ufunc's result."""
    def rule(a, *args, out=None, **kwargs):
        if out is not None:
            return out
        return _new((a.shape, _dummy_dtype(fn, (a,) + args, kwargs)), _elementwise_layout((a,), a.shape))
    return rule


def _tri_rule(m, k=0):
    return _new((m.shape, m.dtype))


def _result_type_rule(*arrays_and_dtypes):
    return np.result_type(*[_stand_in(x) for x in arrays_and_dtypes])


def _may_share_memory_rule(a, b, max_work=None):
    return isinstance(a, MetaArray) and isinstance(b, MetaArray) and a._root() is b._root()


def _ascontiguous_rule(a, dtype=None, **_):
    if a.flags.c_contiguous and (dtype is None or np.dtype(dtype) == a.dtype):
        return a
    return _new((a.shape, a.dtype if dtype is None else dtype))


def _view_rule(fn):
    return lambda a, *args, **kwargs: _view(a, fn, *args, **kwargs)


_FUNCTIONS = {
    np.shape: lambda a: a.shape,
    np.ndim: lambda a: a.ndim,
    np.size: lambda a, axis=None: a.size if axis is None else a.shape[axis],
    np.result_type: _result_type_rule,
    np.may_share_memory: _may_share_memory_rule,
    np.shares_memory: _may_share_memory_rule,
    np.reshape: lambda a, shape=None, order="C", **kw: _reshape(a, kw.get("newshape", shape)),
    np.ravel: lambda a, order="C": _reshape(a, (-1,)),
    np.ascontiguousarray: _ascontiguous_rule,
    # (``np.asarray(x, like=meta)``: a meta ``x`` keeps its layout, as NumPy's asarray keeps an ndarray's)
    np.asarray: lambda a, dtype=None, order=None, **_: asarray(a, dtype),
    np.zeros_like: _zeros_like_rule,
    np.ones_like: _zeros_like_rule,
    np.empty_like: _zeros_like_rule,
    np.full_like: _full_like_rule,
    np.concatenate: _concatenate_rule,
    np.stack: _stack_rule,
    np.where: _where_rule,
    np.take_along_axis: _take_along_axis_rule,
    np.copyto: _copyto_rule,
    np.put_along_axis: _write_rule,
    np.putmask: _write_rule,
    np.clip: _clip_rule,
    np.tril: _tri_rule,
    np.triu: _tri_rule,
    np.nonzero: lambda a: a.nonzero(),
    np.flatnonzero: lambda a: a.nonzero(),
    np.unique: lambda a, *args, **kwargs: _raise_data("the result's shape depends on the values (unique)"),
    np.matmul: lambda a, b, **kw: _ufunc_call(np.matmul, (a, b), kw),
    np.dot: lambda a, b, out=None: _new((_dot_shape(_shape_of(a), _shape_of(b)), _dummy_dtype(np.dot, (a, b), {}))),
}
for _fn in (np.round, np.around, np.sinc):
    _FUNCTIONS[_fn] = _elementwise_rule(_fn)
for _fn in (np.sum, np.prod, np.mean, np.max, np.min, np.amax, np.amin, np.any, np.all, np.argmax, np.argmin,
            np.std, np.var, np.nansum, np.count_nonzero, np.nanmax, np.nanmin, np.nanmean):
    _FUNCTIONS[_fn] = _reduction(_fn)
for _fn in (np.transpose, np.swapaxes, np.moveaxis, np.expand_dims, np.squeeze, np.broadcast_to, np.diagonal,
            np.flip, np.real, np.imag, np.atleast_1d, np.atleast_2d, np.lib.stride_tricks.as_strided):
    _FUNCTIONS[_fn] = _view_rule(_fn)


def _dot_shape(a, b):
    if not a or not b:
        return _broadcast(a, b)
    if len(b) == 1:
        return _matmul_shape(a, b)
    return a[:-1] + b[:-2] + b[-1:]


def _fallback(func, args, kwargs):
    """A NumPy function with no rule: computed on zero-filled stand-ins of the meta operands (they
    take no memory: ``broadcast_to`` of one zero) when they are small, the result's shape and dtype
    kept and its values dropped."""
    name = getattr(func, "__name__", repr(func))
    metas = [a for a in _arrays_in(args, kwargs) if isinstance(a, MetaArray)]
    if any(m.size > SMALL for m in metas):
        raise MetaDataError(f"numpy.{name} has no meta rule here for tensors of more than {SMALL} elements")

    def stand_in(x):
        if isinstance(x, MetaArray):
            return np.broadcast_to(np.zeros((), x.dtype), x.shape)
        if isinstance(x, (list, tuple)):
            return type(x)(stand_in(y) for y in x)
        return x
    try:
        with np.errstate(all="ignore"):
            r = func(*[stand_in(a) for a in args], **{k: stand_in(v) for k, v in kwargs.items()})
    except Exception:   # (zeros are no valid input for it -- a factorisation, a solve: its values matter)
        raise MetaDataError(f"numpy.{name} has no meta rule here, and it needs values") from None
    return _as_meta(r)


def as_meta(result):
    """An op's result as meta arrays: a kernel that built part of its result with NumPy's own
    functions (``np.zeros(shape)``, a constant) from meta inputs made it on the CPU, but an op with
    a meta input gives meta outputs."""
    return _as_meta(result)


def _as_meta(r):
    if isinstance(r, tuple):
        return tuple(_as_meta(x) for x in r)
    if isinstance(r, list):
        return [_as_meta(x) for x in r]
    if isinstance(r, np.ndarray):
        return _new((r.shape, r.dtype), like=r)
    if isinstance(r, np.generic):
        return _new(((), r.dtype))
    return r


# ---- indexing -------------------------------------------------------------------------------
def _index(a, index):
    """``a[index]``: basic indexing is a view (taken on the probe); advanced indexing follows
    NumPy's rule for the result's shape (the index arrays' broadcast shape, in place of the
    indexed dims when they are adjacent, else first)."""
    index = index if isinstance(index, tuple) else (index,)
    if all(_is_basic(i) for i in index):
        buffer, probe = _probe(a)
        return _from_probe(a, buffer, probe[index])
    entries = []
    for i in index:
        if isinstance(i, list):
            i = np.asarray(i)
        if isinstance(i, MetaArray) and i.dtype == np.bool_:
            raise MetaDataError("the result's shape depends on the values (a boolean mask)")
        if isinstance(i, np.ndarray) and i.dtype == np.bool_:   # (a CPU mask: its values are there, as torch's)
            entries.extend(np.nonzero(i) if i.ndim else (np.zeros(int(i), np.intp),))
            continue
        entries.append(i)
    consumed = sum(1 for i in entries if i is not None and i is not Ellipsis)
    if consumed > a.ndim:
        raise IndexError(f"too many indices for array: array is {a.ndim}-dimensional, but {consumed} were indexed")
    expanded = []
    for i in entries:
        if i is Ellipsis:
            expanded.extend([slice(None)] * (a.ndim - consumed))
        else:
            expanded.append(i)
    expanded.extend([slice(None)] * (a.ndim - sum(1 for i in expanded if i is not None)))
    out, adv_shapes, adv_positions, dim = [], [], [], 0
    for i in expanded:
        if i is None:
            out.append(1)
            continue
        n = a.shape[dim]
        dim += 1
        if isinstance(i, slice):
            out.append(len(range(*i.indices(n))))
        else:                      # an index array, or an int among them (an index of shape ())
            adv_positions.append(len(out))
            adv_shapes.append(_shape_of(i))
    adv = _broadcast(*adv_shapes)
    adjacent = len(adv_positions) == 1 or all(
        _is_advanced(x) for x in expanded[_first_advanced(expanded):_last_advanced(expanded) + 1])
    at = adv_positions[0] if adjacent else 0
    return _new((tuple(out[:at]) + adv + tuple(out[at:]), a.dtype))


def _is_basic(i):
    return i is None or i is Ellipsis or isinstance(i, (slice, int, np.integer)) and not isinstance(i, bool)


def _is_advanced(i):
    return i is not None and not isinstance(i, slice)


def _first_advanced(entries):
    return next(k for k, i in enumerate(entries) if _is_advanced(i))


def _last_advanced(entries):
    return max(k for k, i in enumerate(entries) if _is_advanced(i))


# ---- the namespace factories ask for ('meta' -> this module, as 'cpu' -> numpy) ---------------
def zeros(shape, dtype=float, order="C"):
    return MetaArray(_shape(shape), dtype)


empty = ones = zeros


def full(shape, fill_value, dtype=None, order="C"):
    return MetaArray(_shape(shape), np.result_type(fill_value) if dtype is None else dtype)


def eye(n, m=None, k=0, dtype=float, order="C"):
    return MetaArray((n, n if m is None else m), dtype)


def empty_like(a):
    """A meta array with the shape, dtype and layout of ``a`` (an ndarray or a meta array)."""
    return _new((a.shape, a.dtype), like=a)


def asarray(a, dtype=None):
    """A meta array with ``a``'s shape and dtype (its values are dropped)."""
    if isinstance(a, MetaArray):
        return a if dtype is None or np.dtype(dtype) == a.dtype else a.astype(dtype)
    shape, dt = (a.shape, a.dtype) if isinstance(a, (np.ndarray, np.generic)) else (np.shape(a), np.result_type(a))
    return MetaArray(shape, dt if dtype is None else dtype)


def _shape(shape):
    return tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
