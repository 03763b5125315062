"""The threads behind NumPy's matrix products: ``torch.set_num_threads`` / ``get_num_threads``.

glasstorch's only parallel code is the BLAS library NumPy calls for ``@``, ``einsum`` and the
convolutions' GEMMs (OpenBLAS in NumPy's wheels), so torch's intra-op thread count is that
library's thread count here. Two ways to reach it, tried in order:

1. **NumPy's OpenBLAS, directly** (no extra package): the library NumPy's wheels ship beside it
   (or, on Linux, an OpenBLAS among the process's loaded libraries) and its own
   ``openblas_set_num_threads`` called through ctypes -- what threadpoolctl does for OpenBLAS, for
   the one library we need.
2. **threadpoolctl**, if installed (``pip install threadpoolctl``): any other BLAS (MKL in conda's
   NumPy, BLIS, ...).

Without either (an MKL NumPy and no threadpoolctl), ``set_num_threads`` warns once that the BLAS
cannot be controlled and ``get_num_threads`` reports the number last asked for.

**The default: one thread**, set when glasstorch is imported (unless ``OMP_NUM_THREADS``,
``OPENBLAS_NUM_THREADS`` or ``MKL_NUM_THREADS`` is set: then the user has chosen, and OpenBLAS
already obeys them). torch defaults to one thread per physical core, and so does OpenBLAS; but
OpenBLAS's threads spin while they wait for work, and the books' models make many small GEMMs,
so on a laptop where another program holds a core two spinning threads fight for it: an epoch
that takes 1.4-2 s with one thread took 10 s with the default (issue 13; bench/README.md has the
figures). One thread loses little on these sizes when the machine is idle, and never collapses;
``torch.set_num_threads(n)`` asks for more.
"""
import ctypes
import operator
import os
import sys
import warnings

# OpenBLAS builds name their symbols differently: NumPy's wheels (scipy-openblas) add a prefix and,
# for the 64-bit-integer interface, a suffix.
_OPENBLAS_FILES = ("libscipy_openblas", "libopenblas")
_OPENBLAS_SYMBOLS = ("scipy_openblas_{}64_", "scipy_openblas_{}", "openblas_{}64_", "openblas_{}")
_USER_CHOSE = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
DEFAULT_THREADS = 1


def _openblas_candidates():
    """Paths of the OpenBLAS library NumPy uses: the one its wheels ship beside it (numpy.libs,
    numpy/.dylibs), else (Linux: conda's or the distribution's NumPy) those loaded in this process."""
    import numpy
    here = os.path.dirname(numpy.__file__)
    folders = (here + ".libs", os.path.join(here, ".dylibs"))
    bundled = [os.path.join(f, name) for f in folders if os.path.isdir(f) for name in sorted(os.listdir(f))
               if name.startswith(_OPENBLAS_FILES)]
    if bundled or not sys.platform.startswith("linux"):
        return bundled
    try:
        with open("/proc/self/maps") as maps:
            paths = [line.split(None, 5)[5].strip() for line in maps if "openblas" in line]
    except (OSError, IndexError):
        return []
    return [p for p in dict.fromkeys(paths) if os.path.basename(p).startswith(_OPENBLAS_FILES)]


class _OpenBLAS:
    """NumPy's OpenBLAS, through its own thread functions; ``core`` names the kernels it chose for this CPU
    (``openblas_get_corename``: "Haswell", "SkylakeX", "Zen", ...; None if the build has no such function)."""

    def __init__(self, path, setter, getter, core=None):
        self.path, self._set, self._get, self.core = path, setter, getter, core

    @classmethod
    def find(cls):
        for path in _openblas_candidates():
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                continue
            for pattern in _OPENBLAS_SYMBOLS:
                setter = getattr(lib, pattern.format("set_num_threads"), None)
                getter = getattr(lib, pattern.format("get_num_threads"), None)
                if setter is not None and getter is not None:
                    setter.argtypes, setter.restype, getter.restype = [ctypes.c_int], None, ctypes.c_int
                    corename = getattr(lib, pattern.format("get_corename"), None)
                    if corename is not None:
                        corename.restype = ctypes.c_char_p
                        corename = corename().decode("ascii", "replace")
                    return cls(path, setter, getter, corename)
        return None

    def set(self, n):
        self._set(n)

    def get(self):
        return self._get()


class _Threadpoolctl:
    """Any BLAS threadpoolctl knows (MKL, BLIS, OpenBLAS of other builds)."""

    def __init__(self, threadpoolctl):
        self._tpc = threadpoolctl

    @classmethod
    def find(cls):
        try:
            import threadpoolctl
        except ImportError:
            return None
        return cls(threadpoolctl) if threadpoolctl.threadpool_info() else None

    def set(self, n):
        self._tpc.threadpool_limits(limits=n, user_api="blas")

    def get(self):
        counts = [pool["num_threads"] for pool in self._tpc.threadpool_info() if pool["user_api"] == "blas"]
        return max(counts) if counts else None


_blas = []          # [controller or None], found on first need
_asked = [None]     # the number last passed to set_num_threads
_interop = [None]   # set_num_interop_threads's value, once


def _controller(import_optional=True):
    if not _blas:
        found = _OpenBLAS.find()
        if found is None and not import_optional:
            return None          # at import: leave threadpoolctl (an optional package) unimported
        _blas.append(found or _Threadpoolctl.find())
    return _blas[0]


def _check_count(n, name):
    """torch's checks, in its words: an int (not a bool), and positive."""
    try:
        if isinstance(n, bool):
            raise TypeError
        n = operator.index(n)
    except TypeError:
        raise RuntimeError(f"{name} expects an int, but got {type(n).__name__}") from None
    if n <= 0:
        raise RuntimeError(f"{name} expects a positive integer")
    return n


def set_num_threads(n):
    """Set the number of threads NumPy's BLAS uses for matrix products (torch's intra-op threads)."""
    n = _check_count(n, "set_num_threads")
    _asked[0] = n
    blas = _controller()
    if blas is None:
        warnings.warn("glasstorch.set_num_threads: NumPy's BLAS library could not be reached, so the number of "
                      "threads is unchanged; install threadpoolctl (pip install threadpoolctl) to control it",
                      RuntimeWarning, stacklevel=2)
        return
    blas.set(n)


def get_num_threads():
    """The number of threads NumPy's BLAS uses for matrix products."""
    blas = _controller()
    count = blas.get() if blas is not None else None
    if count is None:
        return _asked[0] if _asked[0] is not None else (os.cpu_count() or 1)
    return count


def set_num_interop_threads(n):
    """Accepted for torch's API: glasstorch runs no inter-op thread pool. Like torch, only once."""
    n = _check_count(n, "set_num_interop_threads")
    if _interop[0] is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has started or "
                           "set_num_interop_threads called")
    _interop[0] = n


def get_num_interop_threads():
    """What ``set_num_interop_threads`` was given, else torch's default (one per core)."""
    return _interop[0] if _interop[0] is not None else (os.cpu_count() or 1)


# OpenBLAS's cores with small-matrix kernels (KERNEL.SKYLAKEX's SGEMM_SMALL_*/DGEMM_SMALL_*, which Cooperlake
# and SapphireRapids include): a product of M N K <= 10^6 then runs on the operands in place, where the usual
# path first copies both into packed blocks (sgemm_small_kernel_permit_skylakex.c; no transposed-transposed
# pairs, and a transposed-A one only when M N <= 1200 and K >= 32).
_SMALL_KERNEL_CORES = ("SkylakeX", "Cooperlake", "SapphireRapids")
SMALL_PRODUCT_BOUND = 100 * 100 * 100


def small_product_bound():
    """M N K of the largest product NumPy's BLAS multiplies without packing its operands, or 0.

    Only NumPy's own OpenBLAS on an AVX-512 core, running one thread (the small kernels do not
    thread), has such kernels. Packing matters where a product is repeated with one large operand
    and a thin one: each of an LSTM's steps multiplies (32 x 256) states by a (256 x 1024) weight,
    and packing copies the whole weight per step. Cut into column blocks under the bound, the 35
    steps of LSTM(28, 256) at batch 32 take 7.1 ms against 9.2-10.4 (stop 35, bench/README.md)."""
    blas = _controller()
    if not isinstance(blas, _OpenBLAS) or blas.core not in _SMALL_KERNEL_CORES or blas.get() != 1:
        return 0
    return SMALL_PRODUCT_BOUND


def map_packing_buffer():
    """Run one small float64 product through OpenBLAS, so that its float32 GEMM kernel runs at full
    speed from the first product on. Returns whether it ran (only for NumPy's own OpenBLAS).

    Measured: on the 2-core AMD EPYC VM of bench/README.md (NumPy 2.4, OpenBLAS 0.3.31, Haswell
    kernels), ``(256x784) @ (784x256)`` in float32 took 9.0 ms of CPU time per call in a fresh
    process, for ever, and 3.0 ms (torch: 3.1) once any larger product had run -- a float64
    ``(4x256) @ (256x512)`` is enough. The MLP 784-256-256-10 step of issue 13, whose largest
    products are just that size, went from 2.5x torch's time to 1.0-1.1x.

    The explanation the evidence points to: OpenBLAS packs both operands into a 32 MB buffer it
    maps (no MAP_POPULATE) on its first GEMM, and the kernel software-prefetches past the panel this
    product packed, into pages nothing has written yet; a prefetch cannot fault a page in, so each
    one costs a page walk and is dropped (``perf annotate``: 69% of ``sgemm_kernel_HASWELL``'s
    samples on the instruction after a ``prefetcht1``; no page faults in the slow state). A product
    that packs a larger panel writes those pages. Cost: ~1 ms of CPU time and ~2 MB of resident
    memory, once, at import. GLASSTORCH_BLAS_WARMUP=0 turns it off.
    """
    if os.environ.get("GLASSTORCH_BLAS_WARMUP", "1") == "0" or not isinstance(_controller(import_optional=False),
                                                                               _OpenBLAS):
        return False
    import numpy
    numpy.ones((4, 256)) @ numpy.ones((256, 512))   # float64: packs a 1 MB panel (256 x 512 x 8 bytes)
    return True


def apply_default():
    """At import: one BLAS thread, unless the environment already chose (see the module docstring).
    Only NumPy's own OpenBLAS is reached here (no optional package is imported); returns what was set."""
    if any(os.environ.get(var) for var in _USER_CHOSE):
        return None
    blas = _controller(import_optional=False)
    if blas is None:
        return None
    blas.set(DEFAULT_THREADS)
    return DEFAULT_THREADS
