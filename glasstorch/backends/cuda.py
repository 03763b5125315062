"""torch.backends.cuda: switches for CUDA matmuls and attention kernels.

``matmul.allow_tf32`` is False by default, as in torch; on a GPU, float32 matmuls follow it.
"""
import contextlib
import warnings


class _MatmulFlags:
    """``torch.backends.cuda.matmul``: attribute-style flags, as torch's cuBLASModule."""

    def __init__(self):
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True

    def __repr__(self):
        return f"<torch.backends.cuda.matmul allow_tf32={self.allow_tf32}>"


matmul = _MatmulFlags()
_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def is_built():
    """Whether glasstorch can use CUDA at all: True when CuPy is installed."""
    from .. import _array
    return _array._import_cupy() is not None


def flash_sdp_enabled():
    return _sdp["flash"]


def enable_flash_sdp(enabled):
    _sdp["flash"] = bool(enabled)


def mem_efficient_sdp_enabled():
    return _sdp["mem_efficient"]


def enable_mem_efficient_sdp(enabled):
    _sdp["mem_efficient"] = bool(enabled)


def math_sdp_enabled():
    return _sdp["math"]


def enable_math_sdp(enabled):
    _sdp["math"] = bool(enabled)


def cudnn_sdp_enabled():
    return _sdp["cudnn"]


def enable_cudnn_sdp(enabled):
    _sdp["cudnn"] = bool(enabled)


def preferred_linalg_library(backend=None):
    return "default"


def is_flash_attention_available():
    """False: glasstorch's attention is the plain (math) formula; there is no fused flash kernel."""
    return False


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    """Enable only the named attention kernels inside the block (deprecated in torch, as here)."""
    warnings.warn("`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager "
                  "will be removed. Please see `torch.nn.attention.sdpa_kernel()` for the new context manager, "
                  "with updated signature.", FutureWarning, stacklevel=3)
    previous = dict(_sdp)
    _sdp.update(flash=bool(enable_flash), math=bool(enable_math), mem_efficient=bool(enable_mem_efficient),
                cudnn=bool(enable_cudnn))
    try:
        yield
    finally:
        _sdp.update(previous)
