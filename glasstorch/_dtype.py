"""torch's dtypes and its type-promotion rules.

A dtype is a small immutable object (``glasstorch.float32``) that carries the NumPy dtype it is
stored as. Promotion follows torch, which differs from NumPy in two places: an integer tensor
combined with a float always gives the float type (NumPy widens ``int64 + float16`` to float64),
and Python numbers and 0-dim tensors only change the result when they are of a higher category
(bool < integer < floating < complex) than the dimensioned tensors (``torch.result_type``).
"""
import builtins as _b

from ._array import xp

_pybool, _pyint, _pyfloat, _pycomplex = _b.bool, _b.int, _b.float, _b.complex

BOOL, INT, FLOAT, COMPLEX = range(4)


class dtype:
    __slots__ = ("name", "numpy_dtype", "category", "itemsize", "is_signed", "_legacy")

    def __init__(self, name, numpy_dtype, category, legacy):
        self.name = name
        self.numpy_dtype = numpy_dtype
        self.category = category
        self.itemsize = numpy_dtype.itemsize if numpy_dtype is not None else 2
        self.is_signed = name not in ("uint8", "bool")
        self._legacy = legacy  # the name in torch's legacy type strings: torch.FloatTensor

    is_floating_point = property(lambda self: self.category == FLOAT)
    is_complex = property(lambda self: self.category == COMPLEX)

    def to_real(self):
        return {"complex64": float32, "complex128": float64}.get(self.name, self)

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))


def _dtype_by_name(name):
    return _BY_NAME[name]


class _BFloat16(dtype):
    """bfloat16, whose NumPy dtype comes from the optional ml_dtypes package, imported when first
    asked for (``numpy_dtype``) rather than by ``import glasstorch``: ml_dtypes registers dozens of
    types and casts with NumPy, which takes 1-4 s on a loaded 2-core machine, for a dtype most
    programs never use. Before that first use no array can be bfloat16 (only ml_dtypes makes one),
    so nothing that looks at arrays needs it loaded earlier. ``numpy_dtype`` is None when ml_dtypes
    is not installed (``numpy_dtype(bfloat16)`` then raises naming the pip line).
    """
    __slots__ = ("_loaded",)

    @property
    def numpy_dtype(self):
        try:
            return self._loaded
        except AttributeError:
            pass
        try:
            import ml_dtypes
            loaded = xp.dtype(ml_dtypes.bfloat16)
        except Exception:  # ml_dtypes is optional
            loaded = None
        else:
            _BY_NUMPY[loaded] = self
        self._loaded = loaded
        return loaded

    @numpy_dtype.setter
    def numpy_dtype(self, value):   # dtype.__init__ sets None; the property loads on first read
        if value is not None:
            self._loaded = value


def is_bfloat16_numpy(np_dtype):
    """Whether a NumPy dtype is ml_dtypes' bfloat16, without importing ml_dtypes to find out."""
    return np_dtype.name == "bfloat16"


float16 = half = dtype("float16", xp.dtype("float16"), FLOAT, "Half")
bfloat16 = _BFloat16("bfloat16", None, FLOAT, "BFloat16")
float32 = float = dtype("float32", xp.dtype("float32"), FLOAT, "Float")
float64 = double = dtype("float64", xp.dtype("float64"), FLOAT, "Double")
complex64 = cfloat = dtype("complex64", xp.dtype("complex64"), COMPLEX, "ComplexFloat")
complex128 = cdouble = dtype("complex128", xp.dtype("complex128"), COMPLEX, "ComplexDouble")
uint8 = dtype("uint8", xp.dtype("uint8"), INT, "Byte")
int8 = dtype("int8", xp.dtype("int8"), INT, "Char")
int16 = short = dtype("int16", xp.dtype("int16"), INT, "Short")
int32 = int = dtype("int32", xp.dtype("int32"), INT, "Int")
int64 = long = dtype("int64", xp.dtype("int64"), INT, "Long")
bool = dtype("bool", xp.dtype("bool"), BOOL, "Bool")

# the C++ type names some of torch's messages use ("expected m1 and m2 to have the same dtype, but got:
# float != double", "... desired output type long int")
_CPP_NAMES = {"float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double",
              "complex64": "c10::complex<float>", "complex128": "c10::complex<double>", "uint8": "unsigned char",
              "int8": "signed char", "int16": "short int", "int32": "int", "int64": "long int", "bool": "bool"}


def cpp_name(d):
    """The C++ name torch's messages give dtype ``d`` (``float``, ``double``, ``long int``...)."""
    return _CPP_NAMES[d.name]


# the C scalar types of c10's overflow check ("value cannot be converted to type int64_t without overflow")
_C_SCALAR_TYPES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
                   "float16": "at::Half", "float32": "float", "float64": "double"}


def c_scalar_type_name(name):
    """The C scalar type c10's messages give the dtype named ``name`` (``int64_t``, ``at::Half``...)."""
    return _C_SCALAR_TYPES.get(name, name)


def storage_name(d):
    """The typed-storage class torch pickles a tensor of dtype ``d`` with (``FloatStorage``)."""
    return d._legacy + "Storage"


ALL = (float16, bfloat16, float32, float64, complex64, complex128, uint8, int8, int16, int32, int64, bool)
_BY_NAME = {d.name: d for d in ALL}
_BY_NUMPY = {d.numpy_dtype: d for d in ALL if d is not bfloat16}   # bfloat16's is added when loaded
# NumPy's wider unsigned types have no torch dtype; tensor(np_array) widens them to a signed type that holds them.
_BY_NUMPY.update({xp.dtype("uint16"): int32, xp.dtype("uint32"): int64, xp.dtype("uint64"): int64})

# NumPy's own object for each dtype above, found by an equal one (an unpickled array's float32 is equal to
# np.dtype(np.float32) but another object): see usual_dtype_view.
_USUAL_NUMPY = {d: d for d in _BY_NUMPY}


def usual_dtype_view(array):
    """A new view of NumPy array ``array`` whose dtype is NumPy's usual object for it. An unpickled array's
    dtype (a batch from a DataLoader's worker, a tensor from ``pickle``) is equal to float32's but another
    object, and the plain case of the ops keys its layout facts on the object (``_array.plain_layout``):
    a tensor on such an array would take every op's general path. (A dtype no tensor has, or one with
    another byte order, is kept: the caller's checks name it.)"""
    return array.view(_USUAL_NUMPY.get(array.dtype, array.dtype))


def from_numpy_dtype(np_dtype):
    try:
        return _BY_NUMPY[np_dtype]
    except KeyError:
        if is_bfloat16_numpy(np_dtype) and bfloat16.numpy_dtype == np_dtype:   # the first bfloat16 array seen
            return bfloat16
        raise TypeError(f"can't convert np.ndarray of type numpy.{np_dtype}. The only supported types are: "
                        "float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool.")


def numpy_dtype(d):
    """The NumPy dtype that stores glasstorch dtype ``d`` (a clear error for bfloat16 without ml_dtypes)."""
    try:
        nd = d.numpy_dtype
    except AttributeError:  # not a dtype: Python's float/int/bool/complex stand for one, anything else is refused
        from ._checks import as_dtype
        return numpy_dtype(as_dtype(d))
    if nd is None:
        raise TypeError("bfloat16 needs the optional 'ml_dtypes' package (pip install ml_dtypes)")
    return nd


_default = [float32]


def get_default_dtype():
    return _default[0]


def set_default_dtype(d):
    if not isinstance(d, dtype) or d.category != FLOAT:
        raise TypeError(f"only floating-point types are supported as the default type (got {d})")
    _default[0] = d


def _np_promote(a, b):
    if a is b:
        return a
    if a is bfloat16 or b is bfloat16:
        other = b if a is bfloat16 else a
        if other.category < FLOAT:
            return bfloat16
        return float32 if other is float16 else other
    return _BY_NUMPY[xp.promote_types(a.numpy_dtype, b.numpy_dtype)]


def can_cast(from_: "dtype", to: "dtype") -> "_b.bool":  # (`bool` in this module is the dtype)
    """torch's ``canCast``: whether a value of dtype ``from_`` may be written into ``to`` -- no lower
    category (bool < integer < floating point < complex); within one, any size and sign."""
    return from_.category <= to.category


def promote_types(a, b):
    """torch.promote_types: the higher category wins outright; within one category, widen."""
    if a is b:
        return a
    if a.category != b.category:
        hi, lo = (a, b) if a.category > b.category else (b, a)
        if hi.category == COMPLEX and lo.category == FLOAT and lo is float64:
            return complex128
        return hi
    return _np_promote(a, b)


def scalar_dtype(value):
    """The dtype a Python number takes part in promotion with (torch's 'wrapped number')."""
    t = type(value)
    if t is _pybool:
        return bool
    if isinstance(value, _pyint):
        return int64
    if isinstance(value, _pyfloat):
        return _default[0]
    if isinstance(value, _pycomplex):
        return complex64 if _default[0] is float32 else complex128
    raise TypeError(f"unsupported scalar type {t.__name__}")



def _combine(higher, lower):
    """torch's combine_categories: `lower` matters only if it is of a higher category."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.category == COMPLEX:
        return higher
    if lower.category == COMPLEX:
        if higher.category == FLOAT:
            return complex128 if higher is float64 else complex64
        return lower
    if higher.category == FLOAT:
        return higher
    if higher is bool or lower.category == FLOAT:
        return promote_types(higher, lower)
    return higher


def result_type_of(dim_dtypes, zero_dim_dtypes, scalar_dtypes):
    def fold(ds):
        r = None
        for d in ds:
            r = d if r is None else promote_types(r, d)
        return r
    return _combine(fold(dim_dtypes), _combine(fold(zero_dim_dtypes), fold(scalar_dtypes)))


def _g(value):
    """A number as C++'s default stream output writes it (six significant digits), as torch's reprs do."""
    return f"{value:g}"


# float limits that NumPy cannot give for bfloat16 without ml_dtypes:
# (bits, eps, max, smallest normal, digits10) of an 8-bit-exponent, 8-bit-significand float
_BFLOAT16_LIMITS = (16, 2.0 ** -7, (2 - 2.0 ** -7) * 2.0 ** 127, 2.0 ** -126, 2)


class finfo:
    """The numerical limits of a floating point dtype (``torch.finfo(torch.float32).eps``).

    As torch: with no argument the default dtype's; a complex dtype gives its real part's limits;
    ``resolution`` is ``10 ** -digits10`` (the decimal digits the type always keeps).
    """
    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __init__(self, type=None):
        d = get_default_dtype() if type is None else type
        if not isinstance(d, dtype):
            raise TypeError(f"finfo(): argument 'type' (position 1) must be torch.dtype, not {_b.type(d).__name__}")
        if d.category not in (FLOAT, COMPLEX):
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            "'torch.finfo'")
        d = d.to_real()
        if d is bfloat16:
            bits, eps, largest, normal, digits = _BFLOAT16_LIMITS
        else:
            info = xp.finfo(d.numpy_dtype)
            bits, eps, largest, normal, digits = (info.bits, _pyfloat(info.eps), _pyfloat(info.max),
                                                  _pyfloat(info.smallest_normal if hasattr(info, "smallest_normal")
                                                               else info.tiny), info.precision)
        self.bits, self.eps, self.max, self.min = bits, eps, largest, -largest
        self.tiny = self.smallest_normal = normal
        self.resolution = 10.0 ** -digits
        self.dtype = d.name

    def __eq__(self, other):
        return isinstance(other, finfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("finfo", self.dtype))

    def __repr__(self):
        return (f"finfo(resolution={_g(self.resolution)}, min={_g(self.min)}, max={_g(self.max)}, "
                f"eps={_g(self.eps)}, smallest_normal={_g(self.smallest_normal)}, tiny={_g(self.tiny)}, "
                f"dtype={self.dtype})")


class iinfo:
    """The numerical limits of an integer dtype (``torch.iinfo(torch.int64).max``)."""
    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, type):
        if not isinstance(type, dtype):
            raise TypeError(f"iinfo(): argument 'type' (position 1) must be torch.dtype, not {_b.type(type).__name__}")
        if type is bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if type.category != INT:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
        info = xp.iinfo(type.numpy_dtype)
        self.bits, self.min, self.max, self.dtype = info.bits, _pyint(info.min), _pyint(info.max), type.name

    def __eq__(self, other):
        return isinstance(other, iinfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("iinfo", self.dtype))

    def __repr__(self):
        return f"iinfo(min={_g(self.min)}, max={_g(self.max)}, dtype={self.dtype})"
