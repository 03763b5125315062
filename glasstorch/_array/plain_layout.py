"""The layout facts the plain cases of the ops ask about an array (``_ops.Plain``), as one interned
object per layout: ``x + y`` asks whether its two arrays are NumPy arrays of one dtype and one shape,
the first row-major with no dim of size 0 or 1 -- five NumPy attribute reads (``dtype``, ``shape``,
``flags.c_contiguous``), ~40% of the instructions of a small ``x + y``. A Tensor keeps the answer
beside its array (``Tensor._layout``, valid while ``Tensor._layout_of is Tensor._data``), and an op's
one-frame entry compares two keys by identity instead: the same key is the same shape and dtype,
and the same answers.

A key is made once per (shape, dtype, dense) and kept in a bounded table; when the table is full it
is emptied, and a layout seen again gets a new key. Two keys for one layout only make a plain case
fall back to the arrays' own test (``_ops_codegen.entry_lines``): identity of keys is what implies
the facts, never the converse.
"""
import numpy as np

from .layout import contiguous_strides

_ndarray = np.ndarray
_FLOAT32, _FLOAT64 = np.dtype("float32"), np.dtype("float64")
_MAX_KEYS = 4096


class Layout:
    """One array layout's answers to the plain cases' questions.

    ``shape``, ``dtype``: the array's (``dtype`` the very object); ``dense``: row-major with no dim of
    size 0 or 1 (the first operand of an element-wise plain case, ``_ops.SAME_LAYOUT``);
    ``dense_inexact``: that, of a floating or complex dtype; ``dense_float``: that, of float32 or
    float64 (a unary op's plain case, ``_ops.ROW_MAJOR_FLOAT``); ``products``: the layout of this
    array times another (by key) under mm's plain case, False where it does not apply (filled as met:
    :func:`matrix_product`); ``strides``: a dense array's, in elements (``Tensor.stride()``), else None."""
    __slots__ = ("shape", "dtype", "dense", "dense_inexact", "dense_float", "products", "strides")

    def __init__(self, shape, dtype, dense):
        self.shape, self.dtype, self.dense = shape, dtype, dense
        self.strides = contiguous_strides(shape) if dense else None
        self.dense_inexact = dense and dtype.kind in "fc"
        self.dense_float = dense and (dtype is _FLOAT32 or dtype is _FLOAT64)
        self.products = {}

    def __repr__(self):
        if self.shape is None:
            return "Layout(not a NumPy array)"
        return f"Layout({self.shape}, {self.dtype}, dense={self.dense})"


class _NoLayout(Layout):
    """The key of an array that is not exactly a NumPy array (a meta or CuPy array, a subclass): no
    plain case applies."""
    __slots__ = ()

    def __init__(self):
        self.shape = self.dtype = self.strides = None
        self.dense = self.dense_inexact = self.dense_float = False
        self.products = {}


NO_LAYOUT = _NoLayout()
_KEYS = {}


def _key(shape, dtype, dense):
    # (by the dtype object, as SAME_LAYOUT's ``dtype is`` test: two equal dtype objects get two keys,
    # and the id is not reused while the key in the table holds the dtype)
    key = _KEYS.get((shape, id(dtype), dense))
    if key is None:
        if not dtype.isnative or dtype.metadata is not None:
            # (a byte-swapped dtype, whose sums NumPy gives in the native order, or one with metadata:
            # keyed, the facts would not pass on to a result of "the same dtype")
            return NO_LAYOUT
        if len(_KEYS) >= _MAX_KEYS:     # (a program of ever new shapes: start over, see the module docstring)
            _KEYS.clear()
        key = _KEYS[(shape, id(dtype), dense)] = Layout(shape, dtype, dense)
    return key


def layout_of(array):
    """The key of ``array``'s layout (:class:`Layout`; ``NO_LAYOUT`` for anything but a NumPy array)."""
    if type(array) is not _ndarray:
        return NO_LAYOUT
    shape = array.shape
    return _key(shape, array.dtype, 1 not in shape and 0 not in shape and array.flags.c_contiguous)


def matrix_product(a, b, small):
    """The key of ``A.dot(B)`` for arrays of keys ``a`` and ``b`` where mm's plain case holds (two
    matrices that multiply, one dtype, float32 or float64, the inner size not 1, and ``small(shape_a,
    shape_b)``: see ``_ops.MATRICES``), else False; remembered in ``a.products``. ``ndarray.dot``
    allocates its result row-major."""
    sa, sb, d = a.shape, b.shape, a.dtype
    out = False
    if (sa is not None and sb is not None and len(sa) == 2 and len(sb) == 2 and sa[1] == sb[0] and sa[1] != 1
            and (d is _FLOAT32 or d is _FLOAT64) and b.dtype is d and small(sa, sb)):
        shape = (sa[0], sb[1])
        out = _key(shape, d, 1 not in shape and 0 not in shape)
    if a is not NO_LAYOUT and len(a.products) < 64:    # (bounded: a matrix met with many others)
        a.products[b] = out
    return out
