"""torch.version: which release this is, and which accelerator libraries it was built with.

glasstorch answers as the torch release whose behaviour it reproduces, so that a library comparing
``torch.__version__`` against torch releases ("needs torch >= 2.0") takes the path it would take on
that release; glasstorch's own release rides in the local label::

    __version__ = "2.13.0+glasstorch.0.1.0"     # torch API level 2.13.0, glasstorch 0.1.0
    glasstorch  = "0.1.0"                        # the package's version, as pip shows it
    torch_api   = "2.13.0"                       # the torch release it follows

A local label is what torch's own builds carry (``2.13.0+cpu``), so version parsers and comparisons
that accept torch's strings accept this one. glasstorch is built with no CUDA, HIP or XPU library
(its GPU path, CuPy, is found at run time), so those are None, as in torch's CPU build.
"""

__all__ = ["__version__", "debug", "cuda", "git_version", "hip", "rocm", "xpu"]

glasstorch = "0.1.0"
torch_api = "2.13.0"
__version__ = f"{torch_api}+glasstorch.{glasstorch}"
debug = False
cuda = None
git_version = "Unknown"
hip = None
rocm = None
xpu = None
