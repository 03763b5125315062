"""The array seam: the one place glasstorch imports an array library.

This package is the only code that imports NumPy (or CuPy). Everything else asks it for an array
namespace: ``xp`` is NumPy; a CuPy array passed to NumPy's functions dispatches to CuPy through
NumPy's ``__array_function__``/``__array_ufunc__`` protocols, so op code written against ``xp``
runs on either device. Creation functions, which have no array to dispatch on, ask
:func:`namespace` for the device's module instead.
"""
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

try:  # optional: the GPU backend
    import cupy as _cupy  # noqa: F401
except Exception:  # pragma: no cover - depends on the machine
    _cupy = None


def cuda_available():
    if _cupy is None:
        return False
    try:
        return _cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # pragma: no cover
        return False


def cuda_device_count():
    return _cupy.cuda.runtime.getDeviceCount() if cuda_available() else 0


def namespace(device_type):
    """The array module for a device type ('cpu' -> numpy, 'cuda' -> cupy)."""
    if device_type == "cpu":
        return xp
    if device_type == "cuda":
        if not cuda_available():
            # an AssertionError, as torch's CPU-only build raises (and glasstorch.cuda's functions do)
            raise AssertionError("Torch not compiled with CUDA enabled (glasstorch: CuPy with a GPU is needed for 'cuda')")
        return _cupy
    raise RuntimeError(f"unsupported device type {device_type!r}")


def device_type_of(array):
    return "cpu" if isinstance(array, xp.ndarray) or _cupy is None else (
        "cuda" if isinstance(array, _cupy.ndarray) else "cpu")


def to_device(array, device_type):
    if device_type_of(array) == device_type:
        return array
    if device_type == "cpu":
        return _cupy.asnumpy(array)
    return namespace("cuda").asarray(array)


def data_ptr(array):
    """The address of an array's first element (NumPy or CuPy)."""
    return int(array.data.ptr) if _cupy is not None and isinstance(array, _cupy.ndarray) else \
        array.__array_interface__["data"][0]


def positions_in(view, base):
    """For an array ``view`` that shares ``base``'s memory: the flat (C-order) index into ``base``
    of each element of ``view``, an int64 array of ``view``'s shape.

    Works from the memory layout alone (pointers and strides), so it needs no record of which
    slicing made the view; used when an in-place op on a view rewrites its base's history.
    """
    ns = xp if isinstance(base, xp.ndarray) else _cupy
    item = base.itemsize
    origin = data_ptr(base)

    def offsets(a):  # element offset of every element of `a` from base's first element
        off = ns.full(a.shape, (data_ptr(a) - origin) // item, dtype=ns.int64)
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


def as_numpy(array):
    """A NumPy view/copy of any backend array (for printing and conversion)."""
    return array if isinstance(array, xp.ndarray) else _cupy.asnumpy(array)


# erf, erfc, erfinv, lgamma, digamma: NumPy has none of them; special.py computes them from array
# operations alone (no SciPy, no compiled kernels).
from .special import erf, erfc, erfinv, lgamma, digamma  # noqa: E402,F401
