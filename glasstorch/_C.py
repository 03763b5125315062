"""torch._C: the names of torch's compiled core that Python programs reach for. glasstorch has no
compiled core; these are the Python objects behind the same names."""
from ._seam import DisableTorchFunction, DisableTorchFunctionSubclass, _disabled_impl as _disabled_torch_function_impl  # noqa: F401
from .overrides import _is_torch_function_mode_enabled  # noqa: F401
from .autograd.grad_mode import is_grad_enabled as _is_grad_enabled, _set_grad_enabled  # noqa: F401
from .autograd.engine import current_graph_task as _current_graph_task


def _get_tracing_state():
    """glasstorch has no TorchScript tracer: never tracing."""
    return None


def _log_api_usage_once(*args, **kwargs):
    pass


def _current_graph_task_id():
    """The id of the backward pass running in this thread, -1 outside one."""
    task = _current_graph_task()
    return -1 if task is None else task.id


def _will_engine_execute_node(node):
    """Whether the running backward pass will run ``node`` (a grad_fn or a leaf's AccumulateGrad)."""
    task = _current_graph_task()
    if task is None:
        raise RuntimeError("_will_engine_execute_node should only be called during the backward pass")
    return task.will_execute(node)
