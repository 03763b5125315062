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
import contextlib
import functools
import inspect

from ._seam import seam, DisableTorchFunction, DisableTorchFunctionSubclass, _overloaded_args, _disabled_impl, body_of
from ._tensor import Tensor, _NO_WRAP, _intercepted_property
from ._ops import OpOverload, OpOverloadPacket

__all__ = ["TorchFunctionMode", "BaseTorchFunctionMode", "has_torch_function", "has_torch_function_unary",
           "has_torch_function_variadic", "handle_torch_function", "get_overridable_functions",
           "get_ignored_functions", "get_testing_overrides", "get_default_nowrap_functions", "resolve_name",
           "is_tensor_like", "is_tensor_method_or_property", "wrap_torch_function", "enable_torch_function_mode",
           "enable_reentrant_dispatch", "redispatch_function"]


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

    # False for a mode that has nothing to do with metadata queries (``x.shape``, ``x.dim()``...: the
    # functions declared ``overridable(metadata=True)``): while only such modes are installed, those
    # queries skip the seam (see ``glasstorch/_seam.py``'s ``ANYWHERE``). It filters, it does not
    # promise: the mode may still be handed one (another mode wants them) and must run it then.
    # (glasstorch only, for its own observers such as inspection's glass; every user mode sees them.)
    _wants_metadata = True

    # An observer: ``_observe(func, args, kwargs, result)``, a method, for a mode that runs every call
    # as it is and only looks at what it returned, but for the functions in ``_handled``, a dict of
    # ``function -> handler(mode, func, args, kwargs)``. While such a mode is the one mode on its
    # thread's stack and nothing else anywhere takes part (no other thread's mode, no Tensor subclass
    # instance), the seam does not call its ``__torch_function__``: it runs the call's body (with the
    # mode off the stack and the function level off, as a handler's ``func(*args, **kwargs)`` would) and
    # hands the result to ``_observe``, or calls the function's handler. Otherwise the mode is served
    # as any other, and its ``__torch_function__`` must do the same. (glasstorch only, for its own
    # observers such as inspection's glass: a hop two Python calls cheaper. ``_retired`` is honoured
    # for the handled calls.)
    _observe = None
    _handled = ()

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


class BaseTorchFunctionMode(TorchFunctionMode):
    """A mode that runs every call as it is (torch's): a base for modes that look at some calls only."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


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
    if seam.skip_one_hop:       # (redispatch_function: the function asking goes on to its body, once)
        seam.skip_one_hop = False
        return False
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


def redispatch_function(func, types, args, kwargs):
    """Call ``func`` with one level of ``__torch_function__`` dispatch skipped (torch's): inside a
    ``__torch_function__``, run the function's own body, whose calls are still intercepted -- by a
    subclass whose tensors they are given, or by a mode entered again (``with self:``)::

        class LoggingMode(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                print(func.__name__)
                with self:
                    return torch.overrides.redispatch_function(func, types, args, kwargs)

    A glasstorch function is run as its body (:func:`~glasstorch._seam.body_of`; a property
    accessor, ``Tensor.grad.__get__``, as its getter's); any other (a user's function asking
    :func:`has_torch_function`) is called with its next check answered "no". (A function still in
    the seam's older form, ``tools/seam_prelude.py`` lists them, runs with the function level off:
    its inner calls are not seen.)"""
    kwargs = kwargs or {}
    body = _body_of_handed(func)
    if body is not None:
        return body(*args, **kwargs)
    seam.skip_one_hop = True
    seam._set_lone()        # (the lone observer's path does not look at the skip: it steps aside meanwhile)
    try:
        return func(*args, **kwargs)
    finally:
        seam.skip_one_hop = False
        seam._set_lone()


def _body_of_handed(func):
    """The body of ``func`` as the seam hands it (an overridable function, or a property accessor
    ``Tensor.<name>.__get__``/``__set__``); None for a function of another form."""
    prop = getattr(func, "__self__", None)
    if isinstance(prop, property) and getattr(func, "__name__", None) in ("__get__", "__set__"):
        func = prop.fget if func.__name__ == "__get__" else prop.fset
    body = body_of(func)
    return body if body is not func else None


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


def _overridable(with_ignored=False):
    """(namespace, its public name, attribute name, function) for every overridable function (and the
    ignored ones too, ``with_ignored``)."""
    ignored = set() if with_ignored else get_ignored_functions()
    for namespace, public in _public_namespaces().items():
        for name in dir(namespace):
            if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
                continue
            obj = getattr(namespace, name, None)
            if callable(obj) and not isinstance(obj, type) and obj not in ignored and \
                    getattr(obj, "__module__", "") and str(getattr(obj, "__module__", "")).startswith("glasstorch"):
                yield namespace, public, name, obj


def get_overridable_functions():
    """{namespace: [functions]}: the public functions and Tensor methods that go through
    ``__torch_function__`` (every public callable that takes tensors)."""
    result = {namespace: [] for namespace in _public_namespaces()}
    for namespace, _, _, obj in _overridable():
        result[namespace].append(obj)
    return result


@functools.cache
def _public_names():
    """{function: the name torch's users call it by} for every public function, ignored ones included
    as in torch (``torch.add``; a function that is also a Tensor method keeps its first name:
    glasstorch's ``torch.add`` and ``Tensor.add`` are one function), and the accessors of the Tensor
    properties a mode sees (``torch.Tensor.grad.__get__``)."""
    names = {}
    # (a function that is both torch.X and Tensor.X here is named by the first: the name first, dunders last)
    # (one object under two operator names is named by the last, as torch's table keeps the last:
    # ``Tensor.__rdiv__`` is ``Tensor.__rtruediv__``)
    for _, public, name, obj in sorted(_overridable(with_ignored=True), key=lambda entry: entry[2].startswith("__")):
        if name.startswith("__") and names.get(obj, "").rpartition(".")[2].startswith("__"):
            names[obj] = f"{public}.{name}"
        else:
            names.setdefault(obj, f"{public}.{name}")
    for name, attr in vars(Tensor).items():
        if isinstance(attr, _intercepted_property):
            names[attr.__get__] = f"torch.Tensor.{name}.__get__"
            names[attr.__set__] = f"torch.Tensor.{name}.__set__"
    return names


def resolve_name(f):
    """The name of a function a ``__torch_function__`` (or ``__torch_dispatch__``) is given, as a
    user would write it (``"torch.add"``, ``"torch.Tensor.grad.__get__"``, ``"aten.add.Tensor"``);
    None for a function that is not glasstorch's."""
    if isinstance(f, (OpOverload, OpOverloadPacket)):
        return str(f)
    return _public_names().get(f)


def _accepting(signature):
    """A stand-in with ``signature``: it takes exactly the arguments the function takes (Python's
    TypeError for others, as the function's own) and returns -1."""
    def dummy(*args, **kwargs):
        signature.bind(*args, **kwargs)
        return -1
    dummy.__signature__ = signature
    return dummy


@functools.cache
def get_testing_overrides():
    """{function: a stand-in with its signature that returns -1} for every overridable function
    (torch's, for testing that a type defining ``__torch_function__`` covers the API)::

        >>> import inspect, glasstorch as torch
        >>> inspect.signature(torch.overrides.get_testing_overrides()[torch.add])
        <Signature (input, other, *, alpha=1, out=None)>

    (torch writes its table by hand; glasstorch's functions are Python, so it reads their signatures.)"""
    overrides = {}
    for _, _, _, obj in _overridable():
        if obj not in overrides:
            try:
                overrides[obj] = _accepting(_signature(obj))
            except (TypeError, ValueError):   # (no signature to read: any arguments)
                overrides[obj] = lambda *args, **kwargs: -1
    return overrides


def _signature(fn):
    """``fn``'s signature, with the ``out=`` that ``out_wrapper`` gave it (it shows the wrapped one's)."""
    signature = inspect.signature(fn)
    if not getattr(fn, "adds_out", False) or "out" in signature.parameters:
        return signature
    params = list(signature.parameters.values())
    at = len(params) - (params and params[-1].kind is inspect.Parameter.VAR_KEYWORD)
    params.insert(at, inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None))
    return signature.replace(parameters=params)


@functools.cache
def get_default_nowrap_functions():
    """The functions whose results the default ``Tensor.__torch_function__`` returns as they are,
    not converted to the subclass (field reads: ``a.grad is a.grad`` must hold)."""
    return set(_NO_WRAP)


@contextlib.contextmanager
def enable_reentrant_dispatch():
    """torch's context for code inside ``__torch_dispatch__`` that calls ops again: it restores the
    dispatcher's thread-local state as it was when the op was dispatched. glasstorch's dispatch has
    no such state besides the mode stack, which stays as torch leaves it (the handling mode off it,
    so its own calls are not seen by it again): nothing to restore. Outside ``__torch_dispatch__``
    it is refused, as torch's."""
    if not seam.dispatch_handling:
        raise RuntimeError("Accessing torch dispatch state outside of '__torch_dispatch__' is not allowed.")
    yield


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
