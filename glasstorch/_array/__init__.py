"""The array seam: the one place glasstorch imports an array library.

This package is the only code that imports NumPy (or CuPy). Everything else asks it for an array
namespace: ``xp`` is NumPy; a CuPy array passed to NumPy's functions dispatches to CuPy through
NumPy's ``__array_function__``/``__array_ufunc__`` protocols, so op code written against ``xp``
runs on either device. Creation functions, which have no array to dispatch on, ask
:func:`namespace` for the device's module instead.
"""
import functools
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

from .layout import view_strides, contiguous_strides as _contiguous_strides  # noqa: E402,F401
from . import meta  # noqa: E402   (the meta device: arrays with a shape and no data)
from .meta import MetaArray, MetaDataError, check_devices  # noqa: E402,F401
from .device_rule import state as devices  # noqa: E402   (devices.many: a second device is in use)
from .._seam import hold_detour  # noqa: E402
from .special import asarray  # noqa: E402,F401   (NumPy's, leaving a device array on its device)

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
    _second_device()
    if device_type == "meta":
        return meta
    if device_type == "cuda":
        if not cuda_available():
            # an AssertionError, as torch's CPU-only build raises (and glasstorch.cuda's functions do)
            raise AssertionError("Torch not compiled with CUDA enabled (glasstorch: CuPy with a GPU is needed for "
                                 "'cuda': pip install 'glasstorch[cuda]' installs cupy-cuda12x)")
        return _import_cupy()
    raise RuntimeError(f"unsupported device type {device_type!r}")


def _second_device():
    """A device other than the CPU is in use: from now on each op checks that its tensors share a device
    (device_rule), and the one-frame entries leave their calls to the ops' own (``ANYWHERE.detour``)."""
    if not devices.many:
        devices.many = True
        hold_detour("devices", True)


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
    _second_device()
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


def storage_offset_of(a):
    """``Tensor.storage_offset()`` of a tensor over array ``a``: where ``a`` starts in the memory it
    views, in elements. A meta array keeps its offset (it has no address); a CuPy array reports 0."""
    if type(a) is MetaArray:
        return a.offset // max(a.itemsize, 1)
    if type(a) is not xp.ndarray:
        return 0
    return (a.__array_interface__["data"][0] - root_array(a).__array_interface__["data"][0]) // max(a.itemsize, 1)


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


def sum_ends(a, lead, trail=0):
    """``a.sum(axis=...)`` over its first ``lead`` and its last ``trail`` dims (a Linear's bias gradient:
    the leading ones; a convolution's: all but the channels): for a row-major float32/float64 NumPy array,
    as products with vectors of ones, (rows, rest) @ ones and ones @ (lead, kept). NumPy adds such rows one
    after the other, or reduces several axes with a buffered iterator, and pays per row: d2l's
    language-model head's bias gradient, (32768, 28) float32, took 0.76 ms that way and 0.11 as the product;
    a Transformer layer's (2048, 512) 0.10 and 0.04; LeNet's first convolution's, (128, 6, 28, 28) over
    (0, 2, 3), 0.111 and 0.017 (stop 35). The products' partial sums run in more lanes than NumPy's row after
    row (closer to torch's cascade sum); they agree to rounding."""
    shape = a.shape
    kept = shape[lead:len(shape) - trail]
    rows = cols = 1
    for n in shape[:lead]:
        rows *= n
    for n in shape[len(shape) - trail:]:
        cols *= n
    if type(a) is xp.ndarray and a.dtype.char in "fd" and a.size and a.flags.c_contiguous and (rows > 1 or cols > 1):
        out = xp.empty(kept, a.dtype)      # (written by the last product: an array of its own, not a view,
        flat = out.reshape(-1)             # which AccumulateGrad can take over as a .grad without a copy)
        m = a.reshape(-1, cols)
        if cols > 1:
            m = m.dot(xp.ones(cols, a.dtype), out=flat if rows == 1 else None)
        if rows > 1:
            xp.dot(xp.ones(rows, a.dtype), m.reshape(rows, -1), out=flat)
        return out
    return a.sum(axis=tuple(range(lead)) + tuple(range(len(shape) - trail, len(shape))))


def row_major(a):
    """``a`` laid out row-major (C order), as torch allocates the result of a reduction, a scan,
    cat or roll; NumPy's follows the input's layout. A dim of size 1 gets torch's stride too (NumPy's
    ``keepdims`` gives it one from the input's layout): TensorIterator orders a later element-wise
    result by it (``where(c, x.t().amin(1, keepdim=True)..., ...)``: fuzz seed 796186496937)."""
    if a.ndim > 1 and not a.flags.c_contiguous:
        return a.copy()
    if a.size == 0 and a.ndim:   # (NumPy's strides of an empty array are its own: torch's count a 0 as 1)
        return _laid_out(a, _contiguous_strides(a.shape))
    if a.ndim > 1 and 1 in a.shape and not _row_major_strides(a):
        return _laid_out(a, _contiguous_strides(a.shape))
    return a


def column_major(a):
    """``a`` as a row-major batch of column-major matrices (torch's ``cloneBatchedColumnMajor`` and
    ``batched_matrix_contiguous_strides(f_contig=True)``): where LAPACK writes torch's results of a
    solve, an inverse, a factorisation or eigenvectors. Fewer than 2 dims: row-major."""
    if a.ndim < 2:
        return row_major(a)
    return row_major(a.swapaxes(-1, -2)).swapaxes(-1, -2)


def like_cat_inputs(r, arrays):
    """cat's result ``r`` laid out as torch lays it out (``cat_compute_output_memory_format``): channels-last
    (4 dims) or channels-last-3d (5 dims) when every input's strides suggest that format
    (``suggest_memory_format``), else row-major."""
    order = None
    for a in arrays:
        suggested = _suggested_channels_last(a)
        if suggested is None or order is not None and suggested != order:
            return row_major(r)
        order = suggested
    return _laid_out(r, _dense_strides(r.shape, order))


def _suggested_channels_last(a):
    """The channels-last order (innermost dim first) ``a``'s strides are like, torch's
    ``is_channels_last_strides_2d/3d``: C innermost, then W, H (D), N, each stride at least the one
    inside it times its size; a C of stride 0, an empty dim, or an N whose stride equals C's (ambiguous:
    N111 or a sliced NCHW) are row-major. None when not a 4-D or 5-D array of that layout."""
    order = _CHANNELS_LAST_ORDERS.get(a.ndim)
    if order is None or not isinstance(a, xp.ndarray) or a.strides[1] == 0:
        return None
    smallest = 0
    for d in order:
        stride = a.strides[d]
        if a.shape[d] == 0 or stride < smallest or d == 0 and smallest == a.strides[1]:
            return None
        smallest = stride * a.shape[d] if a.shape[d] > 1 else stride
    return order


_CHANNELS_LAST_ORDERS = {4: (1, 3, 2, 0), 5: (1, 4, 3, 2, 0)}


def like_operands(r, first, *others):
    """An element-wise result ``r`` laid out as torch's TensorIterator lays it out: when every
    operand has the result's shape and is contiguous, row-major; when they are all dense with the
    same strides, those strides (a dim of size 1 included); otherwise its dims ordered by the
    operands' strides, the first operand deciding where it can (a broadcast dim leaves the choice
    to the next), so ``x.t() + y`` is laid out as ``x.t()``, and the strides dense in that order --
    a dim of size 1 keeps its own stride in the comparison and gets the one its place gives it
    (``1.5 - x.unfold(1, 2, 1)``: strides (2, 1, 1, 1), not row-major's (2, 2, 2, 1); a later
    ``y + that`` is ordered by them). NumPy chooses row-major when the operands disagree, and its
    own strides for dims of size 1. (Layout decides whether a later view() works.) A number operand
    (``x * 2``, ``x > 0.5``, ``where(c, x, 0.)``) is a 0-d operand, as torch wraps it: it is not of
    the result's shape, so it rules out the all-of-one-shape layouts (pass the numbers of an op
    whose torch kernel wraps them, only those: clamp's bounds it does not).

    The decision depends only on the shapes, strides and item sizes of ``r`` and the operands, and
    the same few come back at every step of a training loop: for NumPy arrays it is made once per
    such combination and kept (``_LAYOUT_PLANS``), as what to do with ``r`` (nothing, a view, or a
    copy in a given order)."""
    shape = r.shape
    if not shape or len(shape) == 1 and shape[0]:
        return r
    if type(r) is not _ndarray:   # (a meta or CuPy array: decided each time)
        return _apply_layout_plan(r, _like_operands_plan(r, (first,) + others))
    # (the commonest case first, checked cheaply, where NumPy's row-major result is torch's: with no
    # dim of size 1 in the result an operand's dims of size 1 are broadcast -- stride 0, no say in the
    # order -- and a row-major first operand of the result's shape decides every comparison)
    if type(first) is _ndarray and 1 not in shape and 0 not in shape and first.shape == shape \
            and r.flags.c_contiguous and first.flags.c_contiguous:
        return r
    # (the layouts as a key, written out for the usual two operands: each attribute read costs)
    if len(others) == 1 and isinstance(first, _ndarray):
        second, = others
        if isinstance(second, _ndarray):
            key = (shape, r.strides, r.itemsize, first.shape, first.strides, first.itemsize,
                   second.shape, second.strides, second.itemsize)
        else:
            key = (shape, r.strides, r.itemsize, first.shape, first.strides, first.itemsize, second is None)
    else:
        key = [shape, r.strides, r.itemsize]
        for o in (first,) + others:
            if isinstance(o, _ndarray):
                key += (o.shape, o.strides, o.itemsize)
            else:
                key.append(o is None)   # (None: no operand; False: a number. A key reads unambiguously)
        key = tuple(key)
    plan = _LAYOUT_PLANS.get(key, _NO_PLAN)
    if plan is _NO_PLAN:
        if len(_LAYOUT_PLANS) >= _LAYOUT_PLANS_MAX:   # (a program of ever new shapes: start again)
            _LAYOUT_PLANS.clear()
        plan = _LAYOUT_PLANS[key] = _like_operands_plan(r, (first,) + others)
    return r if plan is None else _apply_layout_plan(r, plan)


_ndarray = xp.ndarray
_LAYOUT_PLANS = {}   # (r's and the operands' shapes, strides, item sizes) -> like_operands' plan for r
_LAYOUT_PLANS_MAX = 4096
_NO_PLAN = object()


def _like_operands_plan(r, operands):
    """What :func:`like_operands` does with ``r`` (see :func:`_layout_plan`), from the layouts of
    ``r`` and ``operands`` alone (their values are never read)."""
    first = operands[0]
    r_row_major = r.flags.c_contiguous and r.size
    if r_row_major and 1 not in r.shape and type(first) is type(r) and first.shape == r.shape and first.flags.c_contiguous:
        return None
    if r_row_major and isinstance(first, type(r)) and first.shape == r.shape and first.strides == r.strides \
            and r.strides == _row_major_bytes(r.shape, r.itemsize):
        for o in operands[1:]:   # (every operand row-major of the result's shape, or a number: row-major)
            if isinstance(o, type(r)) and (o.shape != r.shape or o.strides != r.strides):
                break
        else:
            return None
    arrays = [o if isinstance(o, type(r)) else _WRAPPED_NUMBER for o in operands if o is not None]
    if r_row_major:
        first = arrays[0]
        if 1 not in r.shape:
            if all(o.flags.c_contiguous for o in arrays):
                return None
        elif first.shape == r.shape and first.strides == r.strides and _row_major_strides(r) \
                and all(o is _WRAPPED_NUMBER or o.shape == r.shape and o.strides == r.strides for o in arrays):
            return None   # (row-major operands, dims of size 1 included, and numbers: row-major in torch too)
    return _layout_plan(r, _torch_strides(r.shape, arrays))


@functools.lru_cache(maxsize=512)
def _row_major_bytes(shape, itemsize):
    """torch's row-major strides in bytes for ``shape`` (a dim of size 1 included; not empty), kept per
    shape: element-wise results of one shape come again every step."""
    return tuple(st * itemsize for st in _contiguous_strides(shape))


def _row_major_strides(a):
    """Whether ``a``'s strides are torch's row-major ones, a dim of size 1 included (``a`` not empty)."""
    step = a.itemsize
    for n, st in zip(reversed(a.shape), reversed(a.strides)):
        if st != step:
            return False
        step *= n
    return True


_WRAPPED_NUMBER = xp.zeros(())   # (what a number operand counts as: a 0-d array)


def _torch_strides(shape, arrays):
    """The strides, in elements, of TensorIterator's output of ``shape`` over input ``arrays``
    (compute_fast_setup_type, then reorder_dimensions and compatible_stride)."""
    if all(o.shape == shape for o in arrays):
        if all(o.flags.c_contiguous for o in arrays):
            return _contiguous_strides(shape)
        inner_first = _CHANNELS_LAST.get(len(shape))
        if inner_first and all(_dense_in(o, inner_first) for o in arrays):
            return _dense_strides(shape, inner_first)
        first = tuple(st // arrays[0].itemsize for st in arrays[0].strides)
        # (the strides compared first: operands of one shape and equal strides are all dense or none is)
        if all(tuple(st // o.itemsize for st in o.strides) == first for o in arrays[1:]) and _dense(arrays[0]):
            return first
    n = len(shape)
    strides = []
    for o in arrays:  # each operand's strides over the result's dims (0 where it is broadcast)
        if o.ndim:
            lead = n - o.ndim
            strides.append([0 if i < lead or o.shape[i - lead] != shape[i] else o.strides[i - lead]
                            for i in range(n)])

    def should_swap(d0, d1):  # torch's reorder_dimensions comparison (perm is fastest dim first)
        for st in strides:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:
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
    if perm == list(range(n - 1, -1, -1)):
        return _contiguous_strides(shape)
    return _dense_strides(shape, perm)   # (compatible_stride)


# torch's channels_last order, innermost dim first (TensorIterator's fast setup checks it for 4 dims,
# not channels_last_3d for 5)
_CHANNELS_LAST = {4: (1, 3, 2, 0)}


def _dense_in(a, inner_first):
    """Whether ``a`` is dense in the order ``inner_first`` (its dims of size 1 aside): for the
    channels-last order, torch's ``is_contiguous(memory_format=channels_last)``."""
    expected = a.itemsize
    for d in inner_first:
        if a.shape[d] != 1:
            if a.strides[d] != expected:
                return False
            expected *= a.shape[d]
    return True


def _dense_strides(shape, inner_first):
    """Strides, in elements, that lay ``shape`` out densely in the order ``inner_first`` (no
    max(size, 1), as torch's compatible_stride and channels-last strides: an empty dim gives 0 to
    the dims outside it)."""
    result, step = [0] * len(shape), 1
    for d in inner_first:
        result[d] = step
        step *= shape[d]
    return tuple(result)


def _laid_out(r, strides):
    """``r``'s values with ``strides`` (in elements): ``r`` itself when it has them, a view of it
    when they differ only where a dim of size 1 or an empty ``r`` makes them address nothing else,
    else a copy."""
    return _apply_layout_plan(r, _layout_plan(r, strides))


def _layout_plan(r, strides):
    """How to give ``r`` ``strides`` (in elements), from its shape, strides and item size alone:
    None (it has them), ``(target, None, None)`` (a view of it with the byte strides ``target``) or
    ``(target, order, inverse)`` (a copy made in the dims' order ``order``, outermost first, then
    viewed with ``target`` where the copy's own strides differ)."""
    target = tuple(st * r.itemsize for st in strides)
    if r.strides == target:
        return None
    if r.size == 0 or all(a == b for a, b, n in zip(r.strides, target, r.shape) if n != 1):
        return target, None, None
    order = tuple(sorted(range(r.ndim), key=lambda i: (-strides[i], i)))   # outermost first
    inverse = [0] * r.ndim
    for k, i in enumerate(order):
        inverse[i] = k
    return target, order, tuple(inverse)


def _apply_layout_plan(r, plan):
    """``r`` laid out as :func:`_layout_plan` planned."""
    if plan is None:
        return r
    target, order, inverse = plan
    if order is None:
        return as_strided(r, r.shape, target)
    out = r.transpose(order).copy().transpose(inverse)
    return out if out.strides == target else as_strided(out, r.shape, target)


def like_input(r, a):
    """The element-wise result ``r`` of one array ``a`` laid out as torch lays it out. NumPy's
    order (``K``, by stride) agrees, but where ``a`` repeats elements: two dims of the same stride
    (``x.unfold(0, 3, 1)``: torch puts the dim of smaller size inner, NumPy the later one) or one of
    stride 0 (an expanded ``a``: torch leaves it where its comparisons do) -- and where a dim has
    size 1 or 0, whose stride NumPy chooses its own way: :func:`like_operands`."""
    shape = a.shape
    if not shape or type(r) is not type(a):
        return r
    if 1 not in shape and 0 not in shape and a.flags.c_contiguous:
        return r   # (the usual case, checked first with the fewest attribute reads)
    if a.flags.c_contiguous and r.size and (1 not in shape or _row_major_strides(r)):
        return r   # (a row-major input: torch's result is row-major, a dim of size 1 included)
    if 1 in a.shape or 0 in a.shape:
        return like_operands(r, a)
    if a.ndim == 1 or a.flags.c_contiguous:
        return r
    strides = a.strides
    return like_operands(r, a) if 0 in strides or len(set(strides)) < len(strides) else r


def copy_preserving_layout(a, dtype=None, like=None):
    """A copy of ``a`` (converted to ``dtype``) laid out as torch's preserve_format lays out a
    clone, a dtype conversion or flip's result (empty_like): with ``like``'s strides (default:
    ``a``) where it is dense -- a dim of size 1 included, so ``x.t().clone()`` is not contiguous and
    a (3, 1, 3) tensor of strides (3, 1, 1) clones to those -- else with the dims in the order of
    its strides (infer_dense_strides: the comparison of element-wise results, ``like_operands``,
    which leaves the dims of stride 0 of an expanded array where they are)."""
    like = a if like is None else like
    dtype = a.dtype if dtype is None else dtype
    if like.ndim == 0:
        return a.astype(dtype)
    if _dense(like) or like.size == 0:
        return _laid_out(a.astype(dtype, order="K"), tuple(st // like.itemsize for st in like.strides))
    if 0 in like.strides and any(st == 0 and n > 1 for st, n in zip(like.strides, like.shape)):
        return _laid_out(a.astype(dtype, order="C"), _torch_strides(like.shape, [like]))
    return _laid_out(a.astype(dtype, order="K"), _torch_strides(like.shape, [like]))


def _on_device(a):
    """Whether ``a`` is a device array (meta, CuPy): not NumPy's, and not a host value."""
    return type(a) is MetaArray or (_cupy_if_loaded() is not None and isinstance(a, _cupy_if_loaded().ndarray))


def ascontiguousarray(a):
    """``xp.ascontiguousarray`` for kernels that may see a device array (NumPy's has no dispatch)."""
    if _on_device(a):
        return a if a.flags.c_contiguous else a.copy()
    return xp.ascontiguousarray(a)


def as_strided(a, shape, strides, writeable=True):
    """``xp.lib.stride_tricks.as_strided`` for kernels that may see a meta array (a view on meta too)."""
    if type(a) is MetaArray:
        return MetaArray(shape, a.dtype, strides, a.offset, a._root(), writeable)
    if isinstance(a, xp.generic):       # (a NumPy scalar, as indexing a 0-d element gives: a 0-d array)
        a = xp.asarray(a)
    elif not isinstance(a, xp.ndarray):  # (CuPy's: NumPy's would convert the array; CuPy has no read-only views)
        return _cupy_if_loaded().lib.stride_tricks.as_strided(a, shape, strides)
    return xp.lib.stride_tricks.as_strided(a, shape, strides, writeable=writeable)


def zeros_like(ref, shape=None, dtype=None):
    """Zeros of ``shape`` and ``dtype`` (default: ``ref``'s), row-major, on ``ref``'s device: how a
    kernel allocates a result it then writes into. ``xp.zeros(shape)`` would make a CPU array, into
    which a meta array cannot be written and a CuPy one is a TypeError; NumPy's ``zeros_like``
    dispatches on ``ref`` to the device's own function (``cupy.zeros_like``, the meta rule)."""
    return xp.zeros_like(ref, dtype=dtype, order="C", shape=ref.shape if shape is None else shape)


def empty_like(ref, shape=None, dtype=None):
    """:func:`zeros_like` without the zeros (every element is written before it is read)."""
    return xp.empty_like(ref, dtype=dtype, order="C", shape=ref.shape if shape is None else shape)


def full_like(ref, fill_value, shape=None, dtype=None):
    """:func:`zeros_like` filled with ``fill_value``."""
    return xp.full_like(ref, fill_value, dtype=dtype, order="C", shape=ref.shape if shape is None else shape)


def on_device_of(ref, array):
    """``array`` (made on the host by a kernel: an index range, a table of constants) on ``ref``'s
    device, so the two can meet in one NumPy call (CuPy refuses a NumPy operand)."""
    return to_device(array, device_type_of(ref))


def arange_like(ref, *args, dtype=None):
    """``xp.arange(*args)`` on ``ref``'s device (NumPy's ``like=``, NEP 35: CuPy's arange for a CuPy
    ``ref``, a meta array for a meta one)."""
    if isinstance(ref, (xp.ndarray, xp.generic)):
        return xp.arange(*args, dtype=dtype)
    return xp.arange(*args, dtype=dtype, like=ref)


def asarray_like(ref, value, dtype=None):
    """``value`` (a Python number, a host array, an array on ``ref``'s device) as an array on ``ref``'s
    device (NEP 35's ``like=``)."""
    if isinstance(ref, (xp.ndarray, xp.generic)):   # (a NumPy scalar is no array-like for like=)
        return xp.asarray(value, dtype=dtype)
    return xp.asarray(value, dtype=dtype, like=ref)


def host(array):
    """A device array's values on the host, for a kernel that must loop over them in Python (CTC's
    target lengths, bag offsets); a NumPy array as it is. (Meta has no values: MetaDataError.)"""
    if isinstance(array, (xp.ndarray, xp.generic)):
        return array
    if isinstance(array, MetaArray):
        raise MetaDataError("a kernel reads these values on the host")
    return _cupy_if_loaded().asnumpy(array)


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
            from .._checks import broadcast_error     # (here: _checks imports this package, through _dtype)
            return broadcast_error(shapes[0], shapes[1])
        return RuntimeError(text)
    if isinstance(error, xp.linalg.LinAlgError):
        from ..linalg import LinAlgError
        return LinAlgError(f"linalg.{op._schema.name}: {text}")
    if isinstance(error, MemoryError):
        from .._checks import memory_error
        return memory_error(error)
    return error
