"""torch.backends.cudnn: cuDNN's switches. glasstorch has no cuDNN; the switches are kept so programs
that set them (for reproducibility: ``deterministic = True``, ``benchmark = False``) run unchanged."""

enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True


def is_available():
    """False: glasstorch does not use cuDNN (CuPy's GPU kernels, when present, are not cuDNN's)."""
    return False


def version():
    """None, as torch answers where cuDNN is absent."""
    return None


def is_acceptable(tensor):
    return False
