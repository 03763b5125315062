"""torch.backends: the flags that tell what the backend libraries may do, and whether they exist.

Programs write these (Godoy's ``set_seed`` sets ``torch.backends.cudnn.deterministic = True``; d2l
asks ``torch.backends.mps.is_available()``), so each flag is a real, readable attribute. glasstorch
computes with NumPy on the CPU (CuPy on a GPU): cuDNN, MKL, MKL-DNN, OpenMP and MPS are not there,
and the flags that tune them are kept but change nothing, as torch's do when a library is absent.

The array library itself is behind ``glasstorch._array``, not here.
"""
from . import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp, opt_einsum  # noqa: F401

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp", "opt_einsum"]
