"""torch.overrides: the ``__torch_function__`` protocol and function modes.

Every public glasstorch function and Tensor method is declared ``@overridable`` (see
``glasstorch/_seam.py``); when a :class:`TorchFunctionMode` is active, or an argument is a Tensor
subclass with its own ``__torch_function__``, the call goes to them instead::

    class Logging(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            print(func.__name__)
            return func(*args, **(kwargs or {}))

    with Logging():
        model(x).sum().backward()       # prints linear, relu, ..., sum, backward

Inside ``__torch_function__`` the mode is off (a call it makes is not seen by it again), as in torch.
"""
import functools

from ._seam import seam, DisableTorchFunction, DisableTorchFunctionSubclass, _overloaded_args, _disabled_impl
from ._tensor import Tensor

__all__ = ["TorchFunctionMode", "has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
           "handle_torch_function", "get_overridable_functions", "get_ignored_functions", "is_tensor_like",
           "is_tensor_method_or_property", "wrap_torch_function", "enable_torch_function_mode"]


class TorchFunctionMode:
    """A context manager that sees every call of a public glasstorch function (torch's
    ``TorchFunctionMode``). Subclass it and define ``__torch_function__(self, func, types, args,
    kwargs)``; return ``func(*args, **kwargs)`` to run the call, or anything else instead. Modes
    stack: the innermost one is asked first."""

    # Set True inside its own __torch_function__ to leave the mode stack for good when that call
    # returns (the seam then does not push it back; __exit__ finds it gone): a mode with nothing more
    # to see -- torch.compile's replay after its last compiled graph -- stops costing every call.
    # (glasstorch only; torch has no such switch.)
    _retired = False

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        seam.function_modes.append(self)
        seam._refresh()
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if seam.function_modes and seam.function_modes[-1] is self:
            seam.function_modes.pop()
        elif self in seam.function_modes:
            seam.function_modes.remove(self)
        seam._refresh()

    @classmethod
    def push(cls, *args, **kwargs):
        """torch's ``TorchFunctionMode.push`` (deprecated there): instantiate and enter."""
        return cls(*args, **kwargs)


def _get_current_function_mode():
    return seam.function_modes[-1] if seam.function_modes else None


def _get_current_function_mode_stack():
    return list(seam.function_modes)


def _is_torch_function_mode_enabled():
    return bool(seam.function_modes) and not seam.function_disabled


def enable_torch_function_mode(mode):
    """A context manager entering ``mode`` (kept for old code; use ``with mode:``)."""
    return mode


def is_tensor_like(inp):
    """True for Tensors and for objects whose type defines ``__torch_function__``."""
    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


def has_torch_function(relevant_args):
    """Whether a call with ``relevant_args`` must go through ``__torch_function__`` (a mode is
    active, or one of them is a Tensor subclass taking part)."""
    if seam.function_disabled:
        return False
    if seam.function_modes:
        return True
    return not seam.subclass_disabled and bool(_overloaded_args(tuple(relevant_args), None))


def has_torch_function_unary(arg):
    return has_torch_function((arg,))


def has_torch_function_variadic(*args):
    return has_torch_function(args)


def _get_overloaded_args(relevant_args):
    """The arguments among ``relevant_args`` whose type defines ``__torch_function__``, one per type,
    subclasses before their bases -- as torch's Python helper counts them, plain Tensors too (after
    the subclasses: Tensor is the base of them all); Parameter's disabled implementation takes no part."""
    found = _overloaded_args(tuple(relevant_args), None)
    if not any(type(a) is Tensor for a in found):
        plain = next((a for a in relevant_args if type(a) is Tensor), None)
        if plain is not None:
            found.append(plain)
    return found


class _pop_mode_temporarily:
    """The innermost function mode, off the stack while it handles a call (torch's context of the
    same name): the calls it makes are not seen by it again."""

    def __enter__(self):
        self.mode = seam.function_modes.pop()
        seam._refresh()
        return self.mode

    def __exit__(self, *exc):
        if not self.mode._retired:
            seam.function_modes.append(self.mode)
        seam._refresh()


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Run ``public_api(*args, **kwargs)`` through the innermost active mode and the
    ``__torch_function__`` of the types among ``relevant_args`` (torch's helper for user functions:
    call it when :func:`has_torch_function` says so)."""
    overloaded = _get_overloaded_args(relevant_args) if not seam.subclass_disabled else []
    types = tuple(type(a) for a in overloaded)
    if seam.function_modes and not seam.function_disabled:
        with _pop_mode_temporarily() as mode:
            result = mode.__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    for arg in overloaded:
        result = type(arg).__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    name = f"{getattr(public_api, '__module__', '')}.{getattr(public_api, '__qualname__', public_api)}"
    raise TypeError(f"no implementation found for '{name}' on types that implement __torch_function__: "
                    f"{[type(a) for a in overloaded]}")


def wrap_torch_function(dispatcher):
    """Decorator for a user function that should take part in ``__torch_function__``:
    ``dispatcher(*args, **kwargs)`` returns the arguments to look at."""
    def inner(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)
        return wrapped
    return inner


def _public_namespaces():
    import glasstorch
    from glasstorch.nn import functional    # (here: nn is loaded on first use, not by import glasstorch)
    return {glasstorch: "torch", functional: "torch.nn.functional", glasstorch.Tensor: "torch.Tensor",
            glasstorch.linalg: "torch.linalg"}


def get_overridable_functions():
    """{namespace: [functions]}: the public functions and Tensor methods that go through
    ``__torch_function__`` (every public callable that takes tensors)."""
    result = {}
    ignored = get_ignored_functions()
    for namespace in _public_namespaces():
        funcs = []
        for name in dir(namespace):
            if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
                continue
            obj = getattr(namespace, name, None)
            if callable(obj) and not isinstance(obj, type) and obj not in ignored and \
                    getattr(obj, "__module__", "") and str(getattr(obj, "__module__", "")).startswith("glasstorch"):
                funcs.append(obj)
        result[namespace] = funcs
    return result


def get_ignored_functions():
    """The public functions that do not go through ``__torch_function__`` (they take no tensor)."""
    import glasstorch
    names = ("is_grad_enabled", "set_grad_enabled", "get_default_dtype", "set_default_dtype", "manual_seed",
             "seed", "initial_seed", "get_num_threads", "set_num_threads", "compile", "typename", "is_tensor",
             "promote_types", "set_printoptions", "get_printoptions", "use_deterministic_algorithms",
             # the factories that take no tensor (a function mode sees them all the same, as in torch)
             "tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones", "empty", "full", "empty_strided",
             "scalar_tensor", "arange", "range", "linspace", "logspace", "eye", "rand", "randn", "randint",
             "randperm", "normal", "rand_like", "randn_like", "randint_like", "get_rng_state", "set_rng_state",
             "get_default_device", "set_default_device")
    return {getattr(glasstorch, n) for n in names if hasattr(glasstorch, n)}


def is_tensor_method_or_property(func):
    """Whether ``func`` is a method or property of Tensor (torch: they get ``self`` first)."""
    name = getattr(func, "__name__", None)
    # a property's accessor (Tensor.grad.__get__) counts, as in torch
    return name is not None and (name == "__get__" or getattr(Tensor, name, None) is func)


# torch._C._disabled_torch_function_impl: a subclass that sets ``__torch_function__`` to it takes no
# part in the protocol (nn.Parameter does)
_disabled_torch_function_impl = _disabled_impl
