"""torch.backends.cudnn: cuDNN's switches. glasstorch has no cuDNN; the switches are kept so programs
that set them (for reproducibility: ``deterministic = True``, ``benchmark = False``) run unchanged."""
import contextlib

enabled = True
benchmark = False
benchmark_limit = None  # torch leaves it unset where cuDNN is absent
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


def _set_flags(**flags):
    """Set module flags by name; return their previous values (for ``flags`` to restore)."""
    module = globals()
    previous = {name: module[name] for name in flags}
    module.update(flags)
    return previous


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True,
          fp32_precision="none", depthwise_kernel="auto"):
    """Set cuDNN's switches inside the block and restore them after it, as torch's ``cudnn.flags``
    (its defaults turn cuDNN off: ``with torch.backends.cudnn.flags():`` runs a block without it)."""
    previous = _set_flags(enabled=enabled, benchmark=benchmark, benchmark_limit=benchmark_limit,
                          deterministic=deterministic, allow_tf32=allow_tf32)
    try:
        yield
    finally:
        _set_flags(**previous)
