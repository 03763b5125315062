"""The array seam: the one place glasstorch imports an array library.

This package is the only code that imports NumPy (or CuPy). Everything else asks it for an array
namespace: ``xp`` is NumPy; a CuPy array passed to NumPy's functions dispatches to CuPy through
NumPy's ``__array_function__``/``__array_ufunc__`` protocols, so op code written against ``xp``
runs on either device. Creation functions, which have no array to dispatch on, ask
:func:`namespace` for the device's module instead.
"""
import sys
import warnings

import numpy as xp

ndarray = xp.ndarray


def _silence_floating_point_warnings_from_glasstorch():
    """torch computes log(0) = -inf, exp(1000) = inf, 0/0 = nan silently; NumPy reports each as a
    RuntimeWarning ("divide by zero encountered in log"), attributed to the Python file whose line
    called it: one of glasstorch's. A warnings filter on exactly those messages from glasstorch's
    own modules silences them at no cost per op (filters are read only when a warning is raised),
    without touching NumPy's error state: the user's own NumPy code (np.log(0) in their file) warns
    as before, and np.geterr() is unchanged. (Per-op ``np.errstate`` would cost more than a small
    op itself.) Filters the user adds after importing glasstorch come first, so ``-W error`` or
    ``simplefilter("error")`` set later turn these into errors, as for any other warning.
    """
    warnings.filterwarnings("ignore", message=r"(overflow|underflow|divide by zero|invalid value) encountered in",
                            category=RuntimeWarning, module=r"glasstorch(\.|$)")


_silence_floating_point_warnings_from_glasstorch()


def _keep_freed_arrays_mapped():
    """Make glibc keep large freed blocks instead of unmapping them at once.

    A training step frees and re-allocates the same large activation arrays every step; with
    glibc's defaults each one comes back as fresh pages from the kernel (a LeNet step here took
    ~3,000 page faults, torch's ~500, and ran 1.4x slower). Serving blocks up to 64 MiB from the
    heap and trimming it only past 256 MiB free does what torch's caching allocator does: the
    process keeps (and reuses) its peak working set. GLASSTORCH_MALLOC_TUNING=0 turns it off.
    """
    import os
    import sys
    if not sys.platform.startswith("linux") or os.environ.get("GLASSTORCH_MALLOC_TUNING", "1") == "0":
        return False
    try:
        import ctypes
        libc = ctypes.CDLL("libc.so.6")
        M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
        return bool(libc.mallopt(M_MMAP_THRESHOLD, 64 << 20)) and bool(libc.mallopt(M_TRIM_THRESHOLD, 256 << 20))
    except (OSError, AttributeError):  # not glibc (musl, ...): leave the allocator alone
        return False


malloc_tuned = _keep_freed_arrays_mapped()

from . import threads  # noqa: E402
default_threads = threads.apply_default()   # one BLAS thread unless the environment chose (threads.py)
blas_warmed = threads.map_packing_buffer()   # (OpenBLAS's GEMMs at full speed: see there)

from .layout import view_strides  # noqa: E402,F401
from . import meta  # noqa: E402   (the meta device: arrays with a shape and no data)
from .meta import MetaArray, MetaDataError, check_devices  # noqa: E402,F401

def _cupy_if_loaded():
    """CuPy if something already imported it, else None: no array can be a CuPy array before that, so
    the questions asked per op (which device is this array on?) never import it."""
    return sys.modules.get("cupy")


_cupy_import = []   # the outcome of the one import attempt: [module or None]
_array_type_listeners = []   # called with each array type that becomes possible after import (CuPy's)


def on_new_array_type(callback):
    """Call ``callback(array_type)`` when a new kind of array becomes possible: CuPy's, imported on
    the first GPU question. (The op layer keeps the tuple of array types it tests arguments
    against; it registers here, as this package may not import it.)"""
    _array_type_listeners.append(callback)


def _import_cupy():
    """CuPy, imported on the first question about GPUs (not by ``import glasstorch``: an optional
    package costs every user its import time); None when it is not installed or does not load."""
    if not _cupy_import:
        try:
            import cupy
        except Exception:  # pragma: no cover - depends on the machine
            cupy = None
        _cupy_import.append(cupy)
        if cupy is not None:  # pragma: no cover - depends on the machine
            for callback in _array_type_listeners:
                callback(cupy.ndarray)
    return _cupy_import[0]


def cuda_available():
    cupy = _import_cupy()
    if cupy is None:
        return False
    try:
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # pragma: no cover
        return False


def cuda_device_count():
    return _import_cupy().cuda.runtime.getDeviceCount() if cuda_available() else 0


def namespace(device_type):
    """The array module for a device type ('cpu' -> numpy, 'meta' -> ``meta``, 'cuda' -> cupy)."""
    if device_type == "cpu":
        return xp
    if device_type == "meta":
        return meta
    if device_type == "cuda":
        if not cuda_available():
            # an AssertionError, as torch's CPU-only build raises (and glasstorch.cuda's functions do)
            raise AssertionError("Torch not compiled with CUDA enabled (glasstorch: CuPy with a GPU is needed for "
                                 "'cuda': pip install 'glasstorch[cuda]' installs cupy-cuda12x)")
        return _import_cupy()
    raise RuntimeError(f"unsupported device type {device_type!r}")


def device_type_of(array):
    if isinstance(array, xp.ndarray):
        return "cpu"
    if isinstance(array, MetaArray):
        return "meta"
    cupy = _cupy_if_loaded()
    return "cuda" if cupy is not None and isinstance(array, cupy.ndarray) else "cpu"


def to_device(array, device_type):
    source = device_type_of(array)
    if source == device_type:
        return array
    if device_type == "meta":     # (the shape, dtype and layout go; the values stay behind)
        return meta.empty_like(array)
    if source == "meta":
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    if device_type == "cpu":
        return _cupy_if_loaded().asnumpy(array)
    return namespace("cuda").asarray(array)


def data_ptr(array):
    """The address of an array's first element (NumPy or CuPy)."""
    cupy = _cupy_if_loaded()
    if cupy is not None and isinstance(array, cupy.ndarray):
        return int(array.data.ptr)
    if isinstance(array, MetaArray):
        return 0       # (torch's: a meta tensor has no memory)
    return array.__array_interface__["data"][0]


def root_array(a):
    """The array whose memory ``a`` views (``a`` itself if none): the end of its chain of bases,
    through the holder NumPy's ``as_strided`` puts between a view and its base."""
    root = a
    while True:
        b = root.base
        if b is not None and not isinstance(b, type(a)):
            b = getattr(b, "base", None)     # (as_strided's DummyArray holds the array it views)
        if b is None or not isinstance(b, type(a)):
            return root
        root = b


def positions_in(view, base):
    """For an array ``view`` that shares ``base``'s memory: the flat (C-order) index into ``base``
    of each element of ``view``, an int64 array of ``view``'s shape.

    Works from the memory layout alone (pointers and strides), so it needs no record of which
    slicing made the view; used when an in-place op on a view rewrites its base's history.
    """
    ns = xp if isinstance(base, (xp.ndarray, MetaArray)) else _cupy_if_loaded()
    item = base.itemsize
    # (a meta array has no address: its offset in its base's memory-to-be serves; the positions are
    # computed from the layout as for real memory, in NumPy)
    address = (lambda a: a.offset) if type(base) is MetaArray else data_ptr
    origin = address(base)

    def offsets(a):  # element offset of every element of `a` from base's first element
        off = ns.full(a.shape, (address(a) - origin) // item, dtype=ns.int64)
        for axis, (n, stride) in enumerate(zip(a.shape, a.strides)):
            shape = [1] * a.ndim
            shape[axis] = n
            off = off + (ns.arange(n, dtype=ns.int64) * (stride // item)).reshape(shape)
        return off.reshape(-1)

    in_base = offsets(base)
    order = ns.argsort(in_base, kind="stable")
    sorted_offsets = in_base[order]
    wanted = offsets(view)
    idx = ns.searchsorted(sorted_offsets, wanted)
    if wanted.size and (int(idx.max()) >= in_base.size or bool((sorted_offsets[idx] != wanted).any())):
        raise RuntimeError("glasstorch: this view does not lie within its base's memory (was the base's .data "
                           "replaced?); cannot route its in-place gradient to the base")
    return order[idx].reshape(view.shape)


def expanded(array, shape):
    """``array`` broadcast to ``shape`` as a view that can be written through, as torch's expand
    (NumPy's broadcast_to is read-only; torch lets fill_/zero_ write into an expanded tensor and
    refuses the other in-place ops with its own message)."""
    if not isinstance(array, xp.ndarray) or not array.flags.writeable:
        return xp.broadcast_to(array, shape)
    n, lead = len(shape), len(shape) - array.ndim
    strides = [0] * n
    for i in range(n - 1, -1, -1):  # torch's strides (inferExpandGeometry): a new dim of size 1 gets a dense one
        if i >= lead:
            size, stride = array.shape[i - lead], array.strides[i - lead]
        else:
            size, stride = 1, (shape[i + 1] * strides[i + 1] if i + 1 < n else 0)
        strides[i] = stride if shape[i] == size else 0
    return xp.lib.stride_tricks.as_strided(array, shape, strides)


def unsqueezed(array, dim):
    """``array`` with a new dim of size 1 at ``dim``, strided as torch's unsqueeze: the new dim's
    stride is the size times the stride of the dim it goes before (the item size at the end), and
    the other dims keep theirs. NumPy's expand_dims reshapes, which may restride dims of size 1;
    torch's overlap check compares strides literally, so ``x.diagonal()[None]`` must agree.
    ``dim`` is already wrapped (0 to ndim). (A reshape that only inserts a dim of size 1 is always a
    view; expand_dims is that reshape after ~1 us of argument normalisation.)"""
    shape = array.shape
    r = array.reshape(shape[:dim] + (1,) + shape[dim:])
    if not isinstance(array, xp.ndarray):
        return r
    st = array.strides
    want = st[:dim] + ((array.shape[dim] * st[dim]) if dim < array.ndim else array.itemsize,) + st[dim:]
    return r if r.strides == want else xp.lib.stride_tricks.as_strided(array, r.shape, want)


def overlap(a, b):
    """How the memory of arrays ``a`` and ``b`` overlaps, as torch's get_overlap_status sees it:
    "no", "full" (the same elements in the same layout), "partial", or "too hard" to tell (one of
    them has gaps or repeats: torch then lets the op run)."""
    if a is b:
        return "full"
    if a.size == 0 or b.size == 0 or not _may_share_memory(a, b):
        return "no"
    if isinstance(a, MetaArray):   # (no addresses to compare: the same base is as far as it can tell)
        return "full" if (a.offset, a.shape, a.strides) == (b.offset, b.shape, b.strides) else "too hard"
    if not _dense(a) or not _dense(b):
        return "too hard"
    a_begin, b_begin = data_ptr(a), data_ptr(b)
    a_end, b_end = a_begin + a.nbytes, b_begin + b.nbytes
    if a_begin == b_begin and a_end == b_end:
        return "full" if a.strides == b.strides else "partial"
    return "partial" if a_begin < b_end and b_begin < a_end else "no"


def same_data(a, b):
    """The same elements in the same layout (torch's copy_ is then a no-op)."""
    if type(a) is MetaArray:
        return a is b or (type(b) is MetaArray and a._root() is b._root() and
                          (a.offset, a.shape, a.strides, a.dtype) == (b.offset, b.shape, b.strides, b.dtype))
    return a is b or (a.shape == b.shape and a.strides == b.strides and a.dtype == b.dtype and type(a) is type(b)
                      and data_ptr(a) == data_ptr(b))


def _may_share_memory(a, b):
    if type(a) is not type(b):
        return False
    if type(a) is MetaArray:
        return a._root() is b._root()
    ns = xp if isinstance(a, xp.ndarray) else _cupy_if_loaded()
    return bool(ns.may_share_memory(a, b))


def _dense(a):
    """torch's is_non_overlapping_and_dense: some order of the dims lays the elements out
    contiguously."""
    expected = a.itemsize
    for stride, n in sorted((st, n) for st, n in zip(a.strides, a.shape) if n != 1):
        if stride != expected:
            return False
        expected *= n
    return True


def matmul(a, b):
    """``a @ b`` in the operands' dtype. ml_dtypes' bfloat16 matmul accumulates in float32 and
    returns float32; torch's bfloat16 GEMM accumulates in float32 too and rounds the result to
    bfloat16, which is what this gives."""
    r = a @ b
    if r.dtype != a.dtype and a.dtype == b.dtype and a.dtype.name == "bfloat16":
        return r.astype(a.dtype)
    return r


def row_major(a):
    """``a`` laid out row-major (C order), as torch allocates the result of a reduction, a scan,
    cat or roll; NumPy's follows the input's layout."""
    return a.copy() if a.ndim > 1 and not a.flags.c_contiguous else a


def like_operands(r, *operands):
    """An element-wise result ``r`` laid out as torch's TensorIterator lays it out: its dims
    ordered by the operands' strides, the first operand deciding where it can (a broadcast dim
    leaves the choice to the next), so ``x.t() + y`` is laid out as ``x.t()``. NumPy chooses
    row-major when the operands disagree. (Layout decides whether a later view() works.)"""
    if r.ndim < 2:
        return r
    # (the common cases, checked cheaply: a row-major first operand of the result's shape wins in
    # torch too; so do row-major operands that broadcast only by leading dims. A dim of size 1 keeps
    # its stride in torch's comparison and can reorder the others: x.reshape(1, 1, 2, 1) * y.T)
    r_row_major = r.flags.c_contiguous
    first = operands[0]
    if r_row_major and first.flags.c_contiguous and r.shape == first.shape:
        return r
    arrays = [o for o in operands if isinstance(o, type(r)) and o.ndim]
    if r_row_major and all(o.flags.c_contiguous and 1 not in o.shape for o in arrays):
        return r
    n = r.ndim
    strides = []
    for o in arrays:  # each operand's strides over r's dims (0 where it is broadcast)
        lead = n - o.ndim
        strides.append([0 if i < lead or o.shape[i - lead] != r.shape[i] else o.strides[i - lead]
                        for i in range(n)])

    def should_swap(d0, d1):  # torch's reorder_dimensions comparison (perm is fastest dim first)
        for st in strides:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if r.shape[d0] > r.shape[d1]:
                return 1
        return 0

    perm = list(range(n - 1, -1, -1))
    for i in range(1, n):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    outer_first = perm[::-1]
    current = sorted(range(n), key=lambda i: (-r.strides[i], i))
    if [i for i in outer_first if r.shape[i] != 1] == [i for i in current if r.shape[i] != 1]:
        return r
    inverse = [0] * n
    for k, i in enumerate(outer_first):
        inverse[i] = k
    return r.transpose(outer_first).copy().transpose(inverse)


def like_input(r, a):
    """The element-wise result ``r`` of one array ``a`` laid out as torch lays it out. NumPy's
    order (``K``, by stride) agrees, but where ``a`` repeats elements: two dims of the same stride
    (``x.unfold(0, 3, 1)``: torch puts the dim of smaller size inner, NumPy the later one) or one of
    stride 0 (an expanded ``a``: torch leaves it where its comparisons do) -- :func:`like_operands`."""
    if a.ndim < 2 or a.flags.c_contiguous or type(r) is not type(a):
        return r
    strides = [st for st, n in zip(a.strides, a.shape) if n != 1]
    return like_operands(r, a) if 0 in strides or len(set(strides)) < len(strides) else r


def copy_preserving_layout(a, dtype=None, like=None):
    """A copy of ``a`` (converted to ``dtype``) laid out as torch's preserve_format lays out a
    clone, a dtype conversion or flip's result (empty_like): with the dims in the order of the
    strides of ``like`` (default: ``a``), so ``x.t().clone()`` is not contiguous. For an expanded
    array torch orders the dims that have a stride and leaves those of stride 0 where they are
    (infer_dense_strides, the comparison of element-wise results: ``like_operands``)."""
    like = a if like is None else like
    dtype = a.dtype if dtype is None else dtype
    if 0 in like.strides and any(st == 0 and n > 1 for st, n in zip(like.strides, like.shape)):
        return like_operands(a.astype(dtype, order="C"), like)
    return like_input(a.astype(dtype, order="K"), like)


def asarray(a, dtype=None):
    """``xp.asarray`` for kernels that may see a meta array (NumPy's asarray asks for the values, and
    it has no dispatch to the array's own type)."""
    if type(a) is MetaArray:
        return a if dtype is None or xp.dtype(dtype) == a.dtype else a.astype(dtype)
    return xp.asarray(a, dtype=dtype)


def ascontiguousarray(a):
    """``xp.ascontiguousarray`` for kernels that may see a meta array (NumPy's has no dispatch)."""
    return a.copy() if type(a) is MetaArray and not a.flags.c_contiguous else a if type(a) is MetaArray \
        else xp.ascontiguousarray(a)


def as_strided(a, shape, strides, writeable=True):
    """``xp.lib.stride_tricks.as_strided`` for kernels that may see a meta array (a view on meta too)."""
    if type(a) is MetaArray:
        return MetaArray(shape, a.dtype, strides, a.offset, a._root(), writeable)
    return xp.lib.stride_tricks.as_strided(a, shape, strides, writeable=writeable)


def has_values(a):
    """Whether a kernel may look at ``a``'s values to check them (indices in range, probabilities in
    [0, 1], a NaN to propagate): a meta array has none, and torch's meta kernels skip such checks."""
    return type(a) is not MetaArray


def as_numpy(array):
    """A NumPy view/copy of any backend array (for printing and conversion)."""
    if isinstance(array, xp.ndarray):
        return array
    if isinstance(array, MetaArray):
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    return _cupy_if_loaded().asnumpy(array)


# erf, erfc, erfinv, lgamma, digamma: NumPy has none of them; special.py computes them from array
# operations alone (no SciPy, no compiled kernels).
from .special import erf, erfc, erfinv, lgamma, digamma  # noqa: E402,F401


def array_types():
    """The types an op may receive as an array (not a Tensor): ndarrays and NumPy scalars (NumPy
    returns a scalar for a 0-d result), meta arrays, and CuPy's arrays when CuPy is there (when it
    is imported later, ``on_new_array_type`` says so)."""
    types = (xp.ndarray, xp.generic, MetaArray)
    cupy = _cupy_if_loaded()   # (CuPy is imported at the first GPU question: arrays of it exist only after)
    return types + ((cupy.ndarray,) if cupy is not None else ())


def array_linalg_error():
    return xp.linalg.LinAlgError


def array_errors():
    """The exceptions an op's kernel may raise in the array library's words, which
    ``translate_array_error`` turns into torch's."""
    return (ValueError, ArithmeticError, MemoryError, xp.linalg.LinAlgError, MetaDataError)


def broadcast_error(sa, sb):
    """The RuntimeError torch raises for shapes ``sa`` and ``sb`` that do not broadcast (the one
    builder of it: NumPy's ValueError says it in its own words)."""
    n = max(len(sa), len(sb))
    for i in range(n - 1, -1, -1):
        x = sa[i - n + len(sa)] if i - n + len(sa) >= 0 else 1
        y = sb[i - n + len(sb)] if i - n + len(sb) >= 0 else 1
        if x != y and x != 1 and y != 1:
            return RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                                f"non-singleton dimension {i}")
    return RuntimeError(f"shapes {list(sa)} and {list(sb)} cannot be broadcast together")


def translate_array_error(error, op, args):
    """An error NumPy raised inside ``op``'s kernel, as torch would raise it: the one place where
    NumPy's exception types and words are turned into torch's."""
    text = str(error)
    if isinstance(error, MetaDataError):
        check_devices(op, args)   # (a CPU tensor among meta ones: torch's device error says it first)
        return NotImplementedError(f"aten::{op._schema.name}: attempted to run this operator with Meta tensors, but "
                                   f"there was no fake impl or Meta kernel registered (glasstorch: {text})")
    if isinstance(error, ValueError) and "could not be broadcast" in text:
        shapes = [tuple(a.shape) for a in args if hasattr(a, "shape")]
        if len(shapes) >= 2:
            return broadcast_error(shapes[0], shapes[1])
        return RuntimeError(text)
    if isinstance(error, xp.linalg.LinAlgError):
        from ..linalg import LinAlgError
        return LinAlgError(f"linalg.{op._schema.name}: {text}")
    if isinstance(error, MemoryError):
        from .._checks import memory_error
        return memory_error(error)
    return error
