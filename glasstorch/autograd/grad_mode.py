"""Whether operations record the graph: no_grad, enable_grad, set_grad_enabled, inference_mode.

The switch is thread-local, as torch's is: a ``no_grad`` block in one thread does not stop another
thread from recording. Every op reads ``_state.enabled`` once, so the check stays cheap.
"""
import functools
import inspect
import os
import threading
import _thread
from _thread import get_ident

from .._seam import overridable


class _MainGradMode:
    """The main thread's grad mode, kept process-wide beside its thread-local copy: an op's hot path
    reads ``enabled`` here when it runs in that thread (``thread``: its ident), which costs a call of
    ``get_ident`` and two slot reads, where the thread-local read costs ~600 instructions (the thread's
    dict found, then the name in it). Any other thread reads its own ``_state``. Kept in step by
    ``_GradState.__setattr__``, so every write of ``_state.enabled`` anywhere updates it. (The main
    thread outlives the others, so its ident is not reused while this copy stands for it.)"""
    __slots__ = ("enabled", "thread")

    def __init__(self):
        self.enabled = True
        self.thread = threading.main_thread().ident


main_grad = _MainGradMode()
# "This is ``main_grad.thread``", asked for less than ``get_ident() == main_grad.thread``: an RLock that
# thread holds for good, asked ``_is_owned()`` -- a specialised call of a C method that compares the
# thread's ident with the owner's and makes no object (~250 machine instructions fewer than calling
# ``get_ident``, which CPython 3.11 leaves unspecialised, allocating an int to compare). Held only when
# the main thread imports glasstorch (no other thread may take it: one that ended could leave its ident to
# a new one); else every thread reads its own ``_state``. (A forked child's one thread takes it anew.)
main_mark = _thread.RLock()
if threading.current_thread() is threading.main_thread():
    main_mark.acquire()
# (the expression the generated hot paths use for "grad mode is on", in their namespace as ``_main_grad``
# and ``_main_mark``: see _ops_codegen)
GRAD_ON = "(_main_grad.enabled if _main_mark._is_owned() else _state.enabled)"


class _GradState(threading.local):
    enabled = True
    inference = False

    def __setattr__(self, name, value):
        threading.local.__setattr__(self, name, value)
        if name == "enabled" and get_ident() == main_grad.thread:
            main_grad.enabled = value


_state = _GradState()


def _after_fork():
    # (the child's one thread is the one that forked: the copy now stands for it)
    main_grad.thread = get_ident()
    main_grad.enabled = _state.enabled
    main_mark._at_fork_reinit()
    main_mark.acquire()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def is_grad_enabled():
    return _state.enabled


@overridable
def _set_grad_enabled(mode):
    """torch._C._set_grad_enabled: switch grad mode (what no_grad, enable_grad and set_grad_enabled
    do on entering and leaving; a function mode sees it, as torch's do)."""
    _state.enabled = bool(mode)


def is_inference_mode_enabled():
    return _state.inference


class _DecoratorContextManager:
    """A context manager that also decorates functions (and generator functions) like torch's."""

    def __call__(self, func):
        if inspect.isclass(func):
            raise RuntimeError("Cannot decorate classes; it is ambiguous")
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def generator(*args, **kwargs):
                gen = func(*args, **kwargs)
                try:
                    with self.clone():
                        response = gen.send(None)
                    while True:
                        request = yield response
                        with self.clone():
                            response = gen.send(request)
                except StopIteration as e:
                    return e.value
            return generator

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper

    def clone(self):
        return self.__class__()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """One that takes no argument, so it decorates without parentheses too (``@torch.no_grad``), as
    torch's does: called with a function, it returns the decorated function."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecoratorContextManager):
    """Disable graph recording: results of ops have ``requires_grad=False``."""

    def __init__(self):
        self.prev = False

    def __enter__(self):
        self.prev = _state.enabled
        _set_grad_enabled(False)

    def __exit__(self, *exc):
        _set_grad_enabled(self.prev)


class enable_grad(_NoParamDecoratorContextManager):
    def __init__(self):
        self.prev = False

    def __enter__(self):
        self.prev = _state.enabled
        _set_grad_enabled(True)

    def __exit__(self, *exc):
        _set_grad_enabled(self.prev)


class set_grad_enabled(_DecoratorContextManager):
    """Sets grad mode at construction (so it works as a plain function too) and restores it on exit."""

    def __init__(self, mode):
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, "
                            f"not {type(mode).__name__}")
        self.prev = _state.enabled
        self.mode = bool(mode)
        _set_grad_enabled(self.mode)

    def __call__(self, func):
        _set_grad_enabled(self.prev)
        return super().__call__(func)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _set_grad_enabled(self.prev)

    def clone(self):
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    """Like no_grad, and tensors made inside are inference tensors (``is_inference()``, as in torch):
    they keep no version counter, may not be saved for backward, and outside inference mode refuse
    in-place writes and ``requires_grad_()``.
    """

    def __init__(self, mode=True):
        self.mode = mode

    def __enter__(self):
        self.prev = (_state.enabled, _state.inference)
        if self.mode:
            from .._tensor import inference_block_entered
            inference_block_entered(True)       # (new tensors' counters now look at the mode)
            _state.enabled, _state.inference = False, True

    def __exit__(self, *exc):
        _state.enabled, _state.inference = self.prev
        if self.mode:
            from .._tensor import inference_block_entered
            inference_block_entered(False)

    def clone(self):
        return self.__class__(self.mode)
