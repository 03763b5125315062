"""torch.utils.checkpoint: trade compute for memory by recomputing activations in backward.

``checkpoint(fn, *args)`` runs ``fn`` without recording a graph, keeping only its inputs. Its node's
backward re-runs ``fn`` with grad enabled (restoring the random state, so dropout draws the same
masks) and backpropagates through that fresh graph. Activations inside ``fn`` therefore live only
during that segment's backward, not from forward to backward.

The node is an ``autograd.Function`` (``CheckpointFunctionBackward``); parameters used inside ``fn``
receive their gradients from the inner backward, so ``loss.backward()`` gives exactly the plain
run's gradients. (``autograd.grad(loss, params)`` through a checkpoint is not supported: the inner
pass accumulates into ``.grad``, as torch's reentrant variant does.)
"""
import warnings

from ..autograd import Function, grad_mode
from ..autograd import backward as _backward


class CheckpointFunction(Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, _anchor, *args):
        from .. import get_rng_state
        ctx.run_function = run_function
        ctx.rng_state = get_rng_state() if preserve_rng_state else None
        ctx.inputs = args
        ctx.save_for_backward(*[a for a in args if _is_tensor(a)])
        with grad_mode.no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        from .. import get_rng_state, set_rng_state
        tensors = iter(ctx.saved_tensors)
        inputs = []
        for a in ctx.inputs:
            if _is_tensor(a):
                t = next(tensors)
                inputs.append(t.detach().requires_grad_(t.requires_grad))
            else:
                inputs.append(a)
        state = None
        if ctx.rng_state is not None:
            state = get_rng_state()
            set_rng_state(ctx.rng_state)
        try:
            with grad_mode.enable_grad():
                outputs = ctx.run_function(*inputs)
        finally:
            if state is not None:
                set_rng_state(state)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads) if _is_tensor(o) and o.requires_grad and g is not None]
        if pairs:
            _backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None, None) + tuple(x.grad if _is_tensor(x) and x.requires_grad else None for x in inputs)


def _is_tensor(x):
    from .._tensor import Tensor
    return isinstance(x, Tensor)


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check="default", debug=False,
               preserve_rng_state=True, **kwargs):
    """Run ``function(*args)`` now without keeping its activations; recompute them in backward."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in "
                      "PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. use_reentrant="
                      "False is recommended, but if you need to preserve the current default behavior, you can pass "
                      "use_reentrant=True. Refer to docs for more details on the differences between the two "
                      "variants.", stacklevel=2)
        use_reentrant = True
    if kwargs:
        fn = function
        function = lambda *a: fn(*a, **kwargs)  # noqa: E731
    if not grad_mode.is_grad_enabled():
        return function(*args)
    if use_reentrant and not any(_is_tensor(a) and a.requires_grad for a in args):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)
        with grad_mode.no_grad():
            return function(*args)
    # The anchor makes the node record even when no input requires grad, so parameters used inside
    # `function` still get gradients (what torch's non-reentrant variant guarantees).
    from ..ops.creation import zeros
    anchor = zeros((), requires_grad=True)
    return CheckpointFunction.apply(function, preserve_rng_state, anchor, *args)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Split a Sequential (or list of modules) into ``segments`` checkpointed chunks; the last runs normally."""
    if use_reentrant is None:
        use_reentrant = True
    functions = list(functions.children()) if hasattr(functions, "children") else list(functions)
    size = len(functions) // segments

    def run(start, end):
        def forward(x):
            for f in functions[start:end + 1]:
                x = f(x)
            return x
        return forward
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, **kwargs)
    return run(end + 1, len(functions) - 1)(input)
