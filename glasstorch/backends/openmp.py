"""torch.backends.openmp: glasstorch runs no OpenMP kernels of its own (NumPy's BLAS has its own threads)."""


def is_available():
    return False
