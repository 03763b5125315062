"""Argument checks shared by the public functions: torch's exception types and words, in one place.

PyTorch checks its arguments in C++ (the argument parser and ``TORCH_CHECK``) and raises
``TypeError`` for a wrong kind of argument, ``RuntimeError`` for a wrong shape, size or value,
``IndexError`` for a dimension or index out of range. glasstorch's kernels run on NumPy, whose
errors for the same mistakes are different (``ValueError: operands could not be broadcast``,
``numpy.linalg.LinAlgError``, ``MemoryError``, an ``AttributeError`` when a list arrives where a
tensor was expected). Public functions call these helpers (checks up front where they are cheap;
translations in an ``except`` clause, which costs nothing until something fails), so each message
is written once and reads as torch's, so that code catching ``RuntimeError`` and searches for
torch's message both work.

Nothing here imports NumPy directly: arrays are reached through the array seam.
"""
import math

from . import _dtype


def type_name(value):
    """The type name torch's argument parser prints: ``list``, ``int``, ``numpy.ndarray``."""
    cls = type(value)
    module = cls.__module__
    return cls.__name__ if module in ("builtins", None) else f"{module.split('.')[0]}.{cls.__name__}"


def not_a_tensor(fn_name, value, arg_name="input", position=1):
    """torch's TypeError for a non-tensor where a Tensor argument is required."""
    return TypeError(f"{fn_name}(): argument '{arg_name}' (position {position}) must be Tensor, "
                     f"not {type_name(value)}")


def expect_tensor(fn_name, value, arg_name="input", position=1):
    from ._tensor import Tensor
    if not isinstance(value, Tensor):
        raise not_a_tensor(fn_name, value, arg_name, position)
    return value


def expect_tensors(fn_name, seq):
    """cat/stack/...: a sequence of tensors (torch names the first element that is not one)."""
    from ._tensor import Tensor
    if isinstance(seq, Tensor) or not isinstance(seq, (list, tuple)):
        if isinstance(seq, Tensor):
            return list(seq.unbind(0))
        raise TypeError(f"{fn_name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {type_name(seq)}")
    for i, t in enumerate(seq):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type_name(t)}")
    return seq


def expect_bool(fn_name, value, arg_name, position=1):
    """torch's parser takes only a real bool where a bool is declared (not 'yes', not 1)."""
    if not isinstance(value, bool):
        raise TypeError(f"{fn_name}(): argument '{arg_name}' (position {position}) must be bool, "
                        f"not {type_name(value)}")
    return value


def expect_int_sizes(fn_name, sizes, arg_name="size", position=1):
    """Sizes given as ints (Python or NumPy integers, 0-d integer tensors): torch refuses floats."""
    import numbers
    from ._tensor import Tensor
    for s in sizes:
        if isinstance(s, bool) or not (isinstance(s, numbers.Integral) or
                                       (isinstance(s, Tensor) and s.dim() == 0 and not s.is_floating_point())):
            raise TypeError(f"{fn_name}(): argument '{arg_name}' (position {position}) must be tuple of ints, "
                            f"but found element of type {type_name(s)} at pos {list(sizes).index(s)}")
    return sizes


_PYTHON_TYPE_DTYPES = {float: "float64", int: "int64", bool: "bool", complex: "complex128"}


def as_dtype(value, fn_name=None):
    """A glasstorch dtype from what torch accepts as one: a dtype, or Python's float/int/bool/complex."""
    if isinstance(value, _dtype.dtype):
        return value
    name = _PYTHON_TYPE_DTYPES.get(value) if isinstance(value, type) else None
    if name is not None:
        return getattr(_dtype, name)
    prefix = f"{fn_name}(): " if fn_name else ""
    raise TypeError(f"{prefix}argument 'dtype' must be torch.dtype, not {type_name(value)}")


# --- Shapes ----------------------------------------------------------------------------------------
def broadcast_shape(*shapes, given=None):
    """The broadcast of ``shapes``, as torch computes it (``infer_size``, folded over the shapes from
    the first): each pair matched from the last dimension back, the first mismatch met raised as
    torch's RuntimeError, ``a`` being the shapes before, ``b`` the next one.

    ``given``: the shapes as the caller wrote them, for ``torch.broadcast_shapes``, which torch writes
    in Python (``torch._refs._broadcast_shapes``: the same walk, its own words): a mismatch says
    "Attempting to broadcast a dimension of length ...", naming the argument and the common shape
    so far; a negative length is its ValueError."""
    out = tuple(shapes[0]) if shapes and given is None else ()
    for arg, shape in enumerate(shapes if given is not None else shapes[1:]):
        ndim = max(len(out), len(shape))
        a, b = (1,) * (ndim - len(out)) + tuple(out), (1,) * (ndim - len(shape)) + tuple(shape)
        for i in range(ndim - 1, -1, -1):
            if a[i] != b[i] and a[i] != 1 and b[i] != 1:
                if given is not None:
                    raise _refs_broadcast_error(shapes, given, arg, a, b, i)
                raise RuntimeError(f"The size of tensor a ({a[i]}) must match the size of tensor b ({b[i]}) at "
                                   f"non-singleton dimension {i}")
            if given is not None and a[i] == 1 and b[i] < 0:
                raise ValueError("Attempting to broadcast a dimension with negative length!")
        out = tuple(y if x == 1 else x for x, y in zip(a, b))
    return out


def _refs_broadcast_error(shapes, given, arg, a, b, i):
    """torch._refs' mismatch error: argument ``arg`` (``b``, padded) fails at dim ``i`` against the common
    shape ``a``; torch's common shape has every argument's length from the start, and this argument's
    dims after ``i`` already merged in."""
    common = [1] * (max(map(len, shapes)) - len(a)) + [y if x == 1 and j > i else x for j, (x, y) in enumerate(zip(a, b))]
    return RuntimeError(f"Attempting to broadcast a dimension of length {b[i]} at {i - len(a)}! Mismatching argument "
                        f"at index {arg} had {given[arg]}; but expected shape should be broadcastable to {common}")


def broadcast_error(*shapes):
    """torch's RuntimeError for ``shapes`` that do not broadcast: the one builder of it, for the
    ``except ValueError`` clauses around NumPy's broadcasting (whose words are NumPy's), the array
    seam's translation of a kernel's error among them (``_array.translate_array_error``)."""
    try:
        broadcast_shape(*shapes)
    except RuntimeError as e:
        return e
    return RuntimeError(f"shapes {' and '.join(str(list(s)) for s in shapes)} cannot be broadcast together")


def check_same_shape(fn_name, a, b, a_name="self", b_name="other"):
    if tuple(a) != tuple(b):
        raise RuntimeError(f"{fn_name}: expected {a_name} and {b_name} to have the same shape, "
                           f"but got {a_name} of shape {list(a)} and {b_name} of shape {list(b)}")


def check_positive(fn_name, what, values):
    """Strides, kernel sizes, dilations: torch refuses zero and negative values before computing."""
    vals = tuple(values) if isinstance(values, (tuple, list)) else (values,)
    if any(v <= 0 for v in vals):
        raise RuntimeError(f"{fn_name}: {what} should be greater than zero, but got {list(vals)}")


def check_non_negative(fn_name, what, values):
    vals = tuple(values) if isinstance(values, (tuple, list)) else (values,)
    if any(v < 0 for v in vals):
        raise RuntimeError(f"{fn_name}: negative {what} is not supported, but got {list(vals)}")


# --- Values ----------------------------------------------------------------------------------------
_INT64 = (-(1 << 63), (1 << 63) - 1)


def int64_overflow():
    """torch's error for a Python int beyond int64 (its argument parser unpacks a C long long)."""
    return ValueError("Overflow when unpacking long long")


def check_python_int(value):
    """A Python int that must fit int64 (seeds, fill values): torch's ValueError otherwise."""
    if isinstance(value, int) and not _INT64[0] <= value <= _INT64[1]:
        raise int64_overflow()
    return value


def value_overflow(dtype):
    return RuntimeError(f"value cannot be converted to type {dtype.name if hasattr(dtype, 'name') else dtype} "
                        "without overflow")


def check_fits(reference, dtype):
    """Python data converted to an integer dtype: every value must fit it (torch refuses overflow;
    NumPy would wrap, or raise OverflowError, depending on its version). ``reference`` is the data
    as an array of its own inferred type."""
    if reference.size == 0:
        return
    kind = reference.dtype.kind
    if kind == "O" or kind == "u" and reference.max() > _INT64[1]:  # Python ints beyond int64
        raise int64_overflow()
    if kind not in "iufb":
        return
    from ._array import xp
    info = xp.iinfo(_dtype.numpy_dtype(dtype)) if dtype is not _dtype.bool else None
    if info is None:
        return
    if kind == "f" and not xp.isfinite(reference).all():
        raise value_overflow(dtype)
    lo, hi = reference.min(), reference.max()
    if kind == "f":
        lo, hi = math.trunc(float(lo)), math.trunc(float(hi))
    # c10's overflow check lets a negative value into an unsigned type if its magnitude fits
    # (torch.tensor(-1, dtype=torch.uint8) is 255), but not 300 or -300
    lowest = -int(info.max) if info.min == 0 else int(info.min)
    if lo < lowest or hi > info.max:
        raise value_overflow(dtype)


def check_probability(fn_name, p):
    """bernoulli's p (a number or an array) must lie in [0, 1]."""
    from ._array import xp
    if isinstance(p, (int, float)):
        if not 0 <= p <= 1:
            raise RuntimeError(f"{fn_name} expects p to be in [0, 1], but got p={p:g}")
    elif p.size and not ((p >= 0) & (p <= 1)).all():
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")


def check_std(std):
    """normal's std must be >= 0 (a number, or every element of an array)."""
    if isinstance(std, (int, float)):
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    elif std.size and (std < 0).any():
        raise RuntimeError("normal expects all elements of std >= 0.0")


_ALLOCATOR = "[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: "


def out_of_memory(shape, itemsize):
    """torch's error when an allocation cannot be made: a RuntimeError naming the bytes (the one
    builder of it; NumPy raises ``MemoryError`` at once, in its own words)."""
    n = math.prod(shape) * itemsize
    return RuntimeError(f"{_ALLOCATOR}you tried to allocate {n} bytes. Error code 12 (Cannot allocate memory)")


def memory_error(error):
    """NumPy's ``MemoryError`` as torch's RuntimeError: NumPy's carries the shape and dtype it could
    not allocate (``_ArrayMemoryError``), from which the bytes follow; any other says its own words."""
    shape, dtype = getattr(error, "shape", None), getattr(error, "dtype", None)
    if shape is None or dtype is None:
        return RuntimeError(f"{_ALLOCATOR}{error}")
    return out_of_memory(shape, dtype.itemsize)


def allocates(fn):
    """Decorator for a public function that makes arrays outside a ``defop`` kernel (factories,
    conversions, the legacy constructor): a ``MemoryError`` leaves it as torch's RuntimeError.
    (A defop's kernel errors are translated by the op mechanism, through ``memory_error`` too.)"""
    import functools

    @functools.wraps(fn)
    def allocating(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except MemoryError as e:
            raise memory_error(e) from None
    return allocating


# --- Linear algebra -------------------------------------------------------------------------------
class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: a matrix the operation cannot handle (singular, not positive-definite).
    A RuntimeError, as torch's is, so ``except RuntimeError`` catches it too."""


LinAlgError.__module__ = "glasstorch.linalg"


def check_square_float(fn_name, A):
    """linalg's inputs: at least 2-D, square in the last two dims, floating point."""
    if A.ndim < 2:
        raise RuntimeError(f"{fn_name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{fn_name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if not (A.is_floating_point() or A.is_complex()):
        raise RuntimeError(f"{fn_name}: Expected a floating point or complex tensor as input. Got {A.dtype._legacy}")


def size_error(sizes):
    """torch's TypeError for a size given as something other than ints (2.0, '3', a list of strings)."""
    bad = next((s for s in sizes if isinstance(s, bool) or not hasattr(s, "__index__")), sizes)
    return TypeError(f"argument 'size' must be tuple of ints, but found element of type {type_name(bad)}")


# --- Indices ---------------------------------------------------------------------------------------
def check_index_bounds(indices, size, dim, allow_negative=True, error=IndexError, prefix=""):
    """Every index (an integer array) within a dim of ``size``: torch's IndexError otherwise (its
    message after ``prefix``, the op's name where torch's kernel gives it)."""
    from ._array import has_values
    if indices.size and has_values(indices):   # (a meta tensor's indices have no values to check)
        lo, hi = int(indices.min()), int(indices.max())
        if hi >= size or lo < (-size if allow_negative else 0):
            bad = hi if hi >= size else lo
            raise error(f"{prefix}index {bad} is out of bounds for dimension {dim} with size {size}")


def index_error(error):
    """NumPy's IndexError for an index out of range, in torch's words ("dimension", not "axis")."""
    return IndexError(str(error).replace(" for axis ", " for dimension "))


def index_type_error(index):
    if isinstance(index, str):
        return TypeError("new(): invalid data type 'str'")
    return IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
                      f"indices (got {type(index).__name__})")


def assign_type_error(value, tensor):
    """x[i] = 'a': torch's TypeError naming what cannot be assigned."""
    return TypeError(f"can't assign a {type(value).__name__} to a {tensor.type()}")


# --- out= ------------------------------------------------------------------------------------------
def write_out(fn_name, result, out):
    """``torch.add(a, b, out=c)``: the result written into ``out`` by torch's rules for ``fn_name``
    (``glasstorch/_prims_common/wrappers.py``); ``out`` is returned."""
    from ._prims_common import wrappers
    return wrappers.write_out(fn_name, result, out, wrappers.OUT_RULES.get(fn_name, wrappers.cast_rule))
