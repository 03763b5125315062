"""torch.backends.mkl: Intel MKL is not used (NumPy's own BLAS is)."""


def is_available():
    return False
