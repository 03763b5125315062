"""torch.utils._python_dispatch: TorchDispatchMode, the op-level interception.

A dispatch mode sees every primitive op (``aten.mm.default``, ``aten.threshold_backward.default``,
...) *below* autograd: the forward's ops and the backward's, with Tensor arguments, and it runs
them (``func(*args, **kwargs)``) or returns something else. glasstorch records the node around
whatever it returns. This is where a FLOP counter stands (``glasstorch/utils/flop_counter.py``)::

    class Count(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            print(func)                       # aten.mm.default, aten.t.default, ...
            return func(*args, **(kwargs or {}))

While a dispatch mode is active the engine runs derivative formulas on Tensors, so their ops are
seen too (otherwise they run on arrays, unseen and faster).
"""
import contextlib

from .._seam import seam

__all__ = ["TorchDispatchMode"]


class TorchDispatchMode:
    """Subclass and define ``__torch_dispatch__(self, func, types, args=(), kwargs=None)``; use as a
    context manager. Modes stack; inside ``__torch_dispatch__`` the mode itself is off."""

    def __init__(self, _dispatch_key=None):
        pass

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        seam.dispatch_modes.append(self)
        seam._refresh()
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if seam.dispatch_modes and seam.dispatch_modes[-1] is self:
            seam.dispatch_modes.pop()
        elif self in seam.dispatch_modes:
            seam.dispatch_modes.remove(self)
        seam._refresh()

    @classmethod
    def push(cls, *args, **kwargs):
        return cls(*args, **kwargs)

    @classmethod
    def is_infra_mode(cls):
        return False


def _get_current_dispatch_mode():
    return seam.dispatch_modes[-1] if seam.dispatch_modes else None


def _get_current_dispatch_mode_stack():
    return list(seam.dispatch_modes)


def _len_torch_dispatch_stack():
    return len(seam.dispatch_modes)


@contextlib.contextmanager
def _pop_mode_temporarily():
    mode = seam.dispatch_modes.pop()
    seam._refresh()
    try:
        yield mode
    finally:
        seam.dispatch_modes.append(mode)
        seam._refresh()


def is_traceable_wrapper_subclass(t):
    """glasstorch has no wrapper subclasses (``__tensor_flatten__``)."""
    return hasattr(t, "__tensor_flatten__") and hasattr(t, "__tensor_unflatten__")
