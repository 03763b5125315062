"""torch._C: the names of torch's compiled core that Python programs reach for. glasstorch has no
compiled core; these are the Python objects behind the same names."""
from ._seam import DisableTorchFunction, DisableTorchFunctionSubclass, _disabled_impl as _disabled_torch_function_impl  # noqa: F401
from .overrides import _is_torch_function_mode_enabled  # noqa: F401
from .autograd.grad_mode import is_grad_enabled as _is_grad_enabled  # noqa: F401


def _get_tracing_state():
    """glasstorch has no TorchScript tracer: never tracing."""
    return None


def _log_api_usage_once(*args, **kwargs):
    pass
