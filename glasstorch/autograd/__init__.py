"""torch.autograd: backward, grad, Function, grad modes, anomaly detection, gradcheck, the legacy Variable."""
from . import grad_mode, graph, engine, function, anomaly_mode
from .grad_mode import (no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled,
                        is_inference_mode_enabled)
from .anomaly_mode import detect_anomaly, set_detect_anomaly, is_anomaly_enabled
from .function import Function, FunctionCtx, once_differentiable
from .graph import Node
from .._seam import overridable
from .variable import Variable

__all__ = ["Variable", "backward", "grad", "Function", "no_grad", "enable_grad", "set_grad_enabled",
           "inference_mode", "detect_anomaly", "set_detect_anomaly", "gradcheck", "gradgradcheck", "functional"]


_tensor_module = []  # glasstorch._tensor, imported on first use (it imports this package)


def _tensor():
    if not _tensor_module:
        from .. import _tensor as module
        _tensor_module.append(module)
    return _tensor_module[0]


def _as_tuple(x):
    if x is None:
        return ()
    if isinstance(x, _tensor().Tensor):
        return (x,)
    return tuple(x)


def _make_grads(outputs, grads):
    """The gradients backward starts from: the given ones, or 1 for a scalar output."""
    T = _tensor()
    result = []
    grads = list(grads) + [None] * (len(outputs) - len(grads))
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if g is None:
            d = out._data
            if d.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if d.dtype.kind not in "fc" and out.dtype.name != "bfloat16":
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got "
                                   f"{out.dtype}")
            result.append(T._wrap(T.xp.ones_like(d)))
        else:
            if not isinstance(g, T.Tensor):
                raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
            if g._data.shape != out._data.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] "
                                   f"has a shape of {out.shape}.")
            if type(g._data) is not type(out._data) and g.device != out.device:   # (torch's validate_outputs)
                if g._data.ndim:
                    raise RuntimeError(f"invalid gradient at index {i} - expected device {out.device} but got "
                                       f"{g.device}")
                g = g.to(out.device)      # a 0-d gradient is a number: it goes where the output is
            if g._data.dtype != out._data.dtype:  # an int64 gradient for a float output flows as a float one
                g = g.to(out.dtype)
            result.append(g)
    return result


def _roots(outputs):
    roots = []
    for i, t in enumerate(outputs):
        if not t._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        roots.append(graph.edge_of(t))
    return roots


@overridable(defaults_by_keyword=True)
def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None, inputs=None):
    """Compute the gradient of ``tensors`` w.r.t. the graph leaves and accumulate it into ``.grad``."""
    outputs = _as_tuple(tensors)
    if grad_variables is not None:
        grad_tensors = grad_variables
    grads = _make_grads(outputs, _as_tuple(grad_tensors) if grad_tensors is not None else ())
    if retain_graph is None:
        retain_graph = create_graph
    roots = _roots(outputs)
    accumulate_only = None
    capture = None
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if not inputs:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    if inputs:
        accumulate_only = set()
        capture = {}
        nonleaf = []
        for t in inputs:
            if not t._requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            if t._grad_fn is None:
                accumulate_only.add(t._grad_accumulator())
            else:
                capture[(t._grad_fn, t._output_nr)] = len(nonleaf)
                nonleaf.append(t)
        captured = engine.run_backward(roots, grads, retain_graph, create_graph, capture or None, True,
                                       accumulate_only)
        for t, g in zip(nonleaf, captured or ()):
            if g is not None and not t._retains_grad:  # a retained grad was already accumulated
                t._grad = g if t._grad is None else t._grad + g
        return
    engine.run_backward(roots, grads, retain_graph, create_graph)


@overridable(defaults_by_keyword=True)
def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Return the gradients of ``outputs`` w.r.t. ``inputs`` (nothing is accumulated into .grad)."""
    from .._tensor import Tensor
    outs = _as_tuple(outputs)
    ins = _as_tuple(inputs)
    if not ins:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    single = isinstance(inputs, Tensor)
    if allow_unused is None:
        allow_unused = materialize_grads
    grads = _make_grads(outs, _as_tuple(grad_outputs) if grad_outputs is not None else ())
    if retain_graph is None:
        retain_graph = create_graph
    roots = _roots(outs)  # (the outputs are checked first, as torch does)
    capture = {}  # {edge: slot}, one slot per distinct edge (the same tensor may be asked for twice)
    slots = []
    for t in ins:
        if not isinstance(t, Tensor):
            raise RuntimeError(f"all inputs have to be Tensors or GradientEdges, but got {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        slots.append(capture.setdefault(graph.edge_of(t), len(capture)))
    captured = engine.run_backward(roots, grads, retain_graph, create_graph, capture, accumulate=False)
    result = []
    for index, (t, g) in enumerate(zip(ins, (captured[slot] for slot in slots))):
        if g is None:
            if materialize_grads:
                from ..ops.creation import zeros_like
                g = zeros_like(t)
            elif not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {index} appears to not have been used in the "
                                   "graph. Set allow_unused=True if this is the desired behavior.")
        elif g._grad_fn is None and not create_graph:
            g = g.detach()
        result.append(g)
    return tuple(result)


from .gradcheck import gradcheck, gradgradcheck  # noqa: E402
from . import functional  # noqa: E402


def __getattr__(name):
    # torch.autograd.profiler and its profiler_util, imported on first use (they stand on utils, which
    # imports the tensor this package is part of)
    if name in ("profiler", "profiler_util"):
        import importlib
        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")
