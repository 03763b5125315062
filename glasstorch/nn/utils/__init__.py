"""torch.nn.utils: gradient clipping, parameters <-> vector, sequence padding and packing,
parametrizations (``parametrize``, ``parametrizations``), the hook-based weight and spectral norms,
and ``stateless.functional_call``."""
import importlib

from . import rnn  # noqa: F401
from .clip_grad import (clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_,  # noqa: F401
                        get_total_norm)
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
from .spectral_norm import remove_spectral_norm, spectral_norm  # noqa: F401
from .weight_norm import remove_weight_norm, weight_norm  # noqa: F401

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm",
           "parameters_to_vector", "vector_to_parameters", "rnn", "parametrize", "parametrizations", "stateless",
           "spectral_norm", "remove_spectral_norm", "weight_norm", "remove_weight_norm"]

# These need nn's modules, and nn.modules.module imports this package (for hooks): they are
# imported on first use (PEP 562), which is when nn is complete.
_LAZY_MODULES = ("parametrize", "parametrizations", "stateless")


def __getattr__(name):
    if name in _LAZY_MODULES:
        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")


def __dir__():
    return sorted(set(globals()) | set(_LAZY_MODULES))
