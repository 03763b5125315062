r"""``nn.Module``: the base class of every layer and model.

A module is a tree.  Each node keeps three ordered dicts, filled by
``__setattr__`` when you write ``self.x = ...`` in ``__init__``::

    self.weight = nn.Parameter(...)   ->  self._parameters["weight"]
    self.fc = nn.Linear(...)          ->  self._modules["fc"]
    self.register_buffer("mean", t)   ->  self._buffers["mean"]   (state, not trained)

Everything else is a walk over that tree: ``named_parameters`` prefixes names
with the path (``"fc.weight"``) and uses a memo so a shared parameter appears
once; ``state_dict`` / ``load_state_dict`` walk it with ``_save_to_state_dict`` /
``_load_from_state_dict`` per node; one ``_apply(fn)`` serves ``to``, ``float``,
``double``, ``cuda``...; ``__call__`` runs hooks around ``forward`` (and is just
``forward`` when there are none).
"""

import functools
import itertools
import warnings
import weakref
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Optional, Union

import glasstorch
from glasstorch._tensor import Tensor
from glasstorch._seam import overridable
from glasstorch.autograd.grad_mode import no_grad
from glasstorch.nn.parameter import Buffer, Parameter, is_lazy
from glasstorch.nn.utils.hooks import BackwardHook, RemovableHandle

__all__ = ["Module", "register_module_forward_pre_hook", "register_module_forward_hook",
           "register_module_full_backward_pre_hook", "register_module_backward_hook",
           "register_module_full_backward_hook", "register_module_buffer_registration_hook",
           "register_module_module_registration_hook", "register_module_parameter_registration_hook"]


class _HookRegistry(OrderedDict):
    """A registry of hooks that keeps ``hooks``, a tuple of them in order, up to date as hooks are
    added and removed: ``_call_impl`` runs the global pre-hooks on every module call (while a tool
    watches them all), and a tuple built per call would cost each one. (A tuple rather than the
    dict's values: a hook may remove itself while they run.)"""
    hooks = ()

    def _changed(self):
        self.hooks = tuple(self.values())

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        self._changed()

    def __delitem__(self, key):
        super().__delitem__(key)
        self._changed()

    def pop(self, *args):
        try:
            return super().pop(*args)
        finally:
            self._changed()

    def popitem(self, last=True):
        try:
            return super().popitem(last)
        finally:
            self._changed()

    def setdefault(self, key, default=None):
        try:
            return super().setdefault(key, default)
        finally:
            self._changed()

    def update(self, *args, **kwargs):
        try:
            super().update(*args, **kwargs)
        finally:
            self._changed()

    def clear(self):
        super().clear()
        self._changed()

    def move_to_end(self, key, last=True):
        super().move_to_end(key, last)
        self._changed()


# Global hooks: they run for every module, before each module's own (torch's module-level registries;
# profilers, FLOP counters and the inspection tools stand on them).
_global_backward_pre_hooks: dict = OrderedDict()
_global_backward_hooks: dict = OrderedDict()
_global_is_full_backward_hook: Optional[bool] = None
_global_forward_pre_hooks: dict = _HookRegistry()
_global_forward_hooks: dict = OrderedDict()
_global_forward_hooks_always_called: dict = OrderedDict()
_global_forward_hooks_with_kwargs: dict = OrderedDict()
_global_buffer_registration_hooks: dict = OrderedDict()
_global_module_registration_hooks: dict = OrderedDict()
_global_parameter_registration_hooks: dict = OrderedDict()


def register_module_forward_pre_hook(hook) -> RemovableHandle:
    """``hook(module, args) -> None or new args``, before every module's forward (and before the
    module's own pre-hooks)."""
    handle = RemovableHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[handle.id] = hook
    return handle


def register_module_forward_hook(hook, *, with_kwargs: bool = False, always_call: bool = False) -> RemovableHandle:
    """``hook(module, args, output) -> None or new output`` after every module's forward
    (``with_kwargs``: ``hook(module, args, kwargs, output)``)."""
    handle = RemovableHandle(_global_forward_hooks,
                             extra_dict=[_global_forward_hooks_with_kwargs, _global_forward_hooks_always_called])
    _global_forward_hooks[handle.id] = hook
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def register_module_full_backward_pre_hook(hook) -> RemovableHandle:
    """``hook(module, grad_output) -> None or new grad_output`` before every module's backward."""
    handle = RemovableHandle(_global_backward_pre_hooks)
    _global_backward_pre_hooks[handle.id] = hook
    return handle


def _register_global_backward_hook(hook, full):
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is (not full):
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as a global Module hook. "
                           "Please use only one of them.")
    _global_is_full_backward_hook = full
    handle = RemovableHandle(_global_backward_hooks)
    _global_backward_hooks[handle.id] = hook
    return handle


def register_module_backward_hook(hook) -> RemovableHandle:
    """Deprecated (torch's too): use :func:`register_module_full_backward_hook`."""
    return _register_global_backward_hook(hook, False)


def register_module_full_backward_hook(hook) -> RemovableHandle:
    """``hook(module, grad_input, grad_output) -> None or new grad_input`` after every module's backward."""
    return _register_global_backward_hook(hook, True)


def register_module_buffer_registration_hook(hook) -> RemovableHandle:
    """``hook(module, name, buffer) -> None or new buffer`` when any module registers a buffer."""
    handle = RemovableHandle(_global_buffer_registration_hooks)
    _global_buffer_registration_hooks[handle.id] = hook
    return handle


def register_module_module_registration_hook(hook) -> RemovableHandle:
    """``hook(module, name, submodule) -> None or new submodule`` when any module registers a child."""
    handle = RemovableHandle(_global_module_registration_hooks)
    _global_module_registration_hooks[handle.id] = hook
    return handle


def register_module_parameter_registration_hook(hook) -> RemovableHandle:
    """``hook(module, name, param) -> None or new param`` when any module registers a parameter."""
    handle = RemovableHandle(_global_parameter_registration_hooks)
    _global_parameter_registration_hooks[handle.id] = hook
    return handle


_EXTRA_STATE_KEY_SUFFIX = "_extra_state"

class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys it could not match."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(s_, numSpaces):
    """Indent every line but the first (the first follows ``"(name): "``)."""
    s = s_.split("\n")
    if len(s) == 1:
        return s_
    first = s.pop(0)
    # blank lines stay empty rather than gaining trailing spaces
    s = [(numSpaces * " ") + line if line.strip() else "" for line in s]
    return first + "\n" + "\n".join(s)


def _typename(obj) -> str:
    """``torch.typename``: ``'torch.FloatTensor'`` for a tensor, else the qualified type name."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    if module in {"", "builtins"}:
        return qualname
    return f"{module}.{qualname}"


class _WrappedHook:
    """A hook that is called with its module as first argument, holding the
    module weakly (a module's hook dicts must not keep the module alive)."""

    def __init__(self, hook: Callable, module: Optional["Module"] = None) -> None:
        self.hook: Callable = hook
        functools.update_wrapper(self, hook)
        self.with_module: bool = False
        if module is not None:
            self.module: weakref.ReferenceType = weakref.ref(module)
            self.with_module = True

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.with_module:
            module = self.module()
            if module is None:
                raise RuntimeError("You are trying to call the hook of a dead Module!")
            return self.hook(module, *args, **kwargs)
        return self.hook(*args, **kwargs)

    def __getstate__(self) -> dict:
        result = {"hook": self.hook, "with_module": self.with_module}
        if self.with_module:
            result["module"] = self.module()
        return result

    def __setstate__(self, state: dict):
        self.hook = state["hook"]
        self.with_module = state["with_module"]
        if self.with_module:
            if state["module"] is None:
                raise RuntimeError("You are trying to revive the hook of a dead Module!")
            self.module = weakref.ref(state["module"])


def _forward_unimplemented(self, *input: Any) -> None:
    r"""Define the computation performed at every call.

    Should be overridden by all subclasses.  Call the module instance
    (``module(x)``) rather than ``module.forward(x)``: the call runs the
    registered hooks, ``forward`` alone silently skips them.
    """
    raise NotImplementedError(
        f'Module [{type(self).__name__}] is missing the required "forward" function'
    )


def _parse_to(*args, **kwargs):
    """The argument forms of ``Module.to`` (as ``torch._C._nn._parse_to``):
    ``to(device=None, dtype=None, non_blocking=False)``, ``to(dtype, non_blocking=False)``,
    ``to(tensor, non_blocking=False)``; ``memory_format=`` is accepted and ignored
    (arrays here carry no memory format).  Returns ``(device, dtype, non_blocking)``."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = kwargs.pop("non_blocking", False)
    kwargs.pop("memory_format", None)
    kwargs.pop("copy", None)
    if kwargs:
        raise TypeError(f"to() received an invalid combination of arguments - got unexpected keyword '{next(iter(kwargs))}'")
    args = list(args)
    if args and isinstance(args[0], Tensor):
        other = args.pop(0)
        device, dtype = other.device, other.dtype
    elif args and isinstance(args[0], glasstorch.dtype):
        dtype = args.pop(0)
    elif args and (args[0] is None or isinstance(args[0], (str, int, glasstorch.device))):
        device = args.pop(0)
        if args and isinstance(args[0], glasstorch.dtype):
            dtype = args.pop(0)
    if args and isinstance(args[0], bool):
        non_blocking = args.pop(0)
    if args:
        raise TypeError(
            f"to() received an invalid combination of arguments - got ({', '.join(type(a).__name__ for a in args)})"
        )
    if device is not None:
        device = glasstorch.device(device)
    return device, dtype, non_blocking


class Module:
    r"""Base class for all neural network modules.

    Your models should also subclass this class.  Modules can also contain
    other Modules, allowing them to be nested in a tree structure.  You can
    assign the submodules as regular attributes::

        import glasstorch.nn as nn
        import glasstorch.nn.functional as F

        class Model(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.conv1 = nn.Conv2d(1, 20, 5)
                self.conv2 = nn.Conv2d(20, 20, 5)

            def forward(self, x):
                x = F.relu(self.conv1(x))
                return F.relu(self.conv2(x))

    Submodules assigned in this way will be registered, and will also have
    their parameters converted when you call :meth:`to`, etc.

    .. note::
        An ``__init__()`` call to the parent class must be made before
        assignment on the child: the registries it creates are where
        ``__setattr__`` puts parameters and submodules.

    :ivar training: whether this module is in training or evaluation mode.
    """

    dump_patches: bool = False

    # Saved in ``state_dict()._metadata`` and handed back to ``_load_from_state_dict``
    # so a module whose parameters change between releases can convert old checkpoints.
    _version: int = 1

    training: bool
    _parameters: dict
    _buffers: dict
    _non_persistent_buffers_set: set
    _modules: dict

    call_super_init: bool = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if self.call_super_init is False and bool(kwargs):
            raise TypeError(
                f"{type(self).__name__}.__init__() got an unexpected keyword argument '{next(iter(kwargs))}'"
            )
        if self.call_super_init is False and bool(args):
            raise TypeError(
                f"{type(self).__name__}.__init__() takes 1 positional argument but {len(args) + 1} were given"
            )
        # object.__setattr__ bypasses our own __setattr__, which would otherwise
        # inspect each value; these are plain bookkeeping attributes.
        setattr_ = super().__setattr__
        setattr_("training", True)
        setattr_("_parameters", {})
        setattr_("_buffers", {})
        setattr_("_non_persistent_buffers_set", set())
        setattr_("_backward_pre_hooks", OrderedDict())
        setattr_("_backward_hooks", OrderedDict())
        setattr_("_is_full_backward_hook", None)
        setattr_("_forward_hooks", OrderedDict())
        # dicts used as ordered sets of hook ids: which forward hooks take kwargs,
        # which must run even when forward raises
        setattr_("_forward_hooks_with_kwargs", OrderedDict())
        setattr_("_forward_hooks_always_called", OrderedDict())
        setattr_("_forward_pre_hooks", OrderedDict())
        setattr_("_forward_pre_hooks_with_kwargs", OrderedDict())
        setattr_("_state_dict_hooks", OrderedDict())
        setattr_("_state_dict_pre_hooks", OrderedDict())
        setattr_("_load_state_dict_pre_hooks", OrderedDict())
        setattr_("_load_state_dict_post_hooks", OrderedDict())
        setattr_("_modules", {})
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    forward: Callable[..., Any] = _forward_unimplemented

    # ------------------------------------------------------------------
    # Registration
    # ------------------------------------------------------------------

    def _check_new_name(self, kind, name, registry):
        """torch's checks on a new buffer/parameter name (type, '.', empty, clash with an attribute)."""
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in registry:
            raise KeyError(f"attribute '{name}' already exists")

    def register_buffer(self, name: str, tensor: Optional[Tensor], persistent: bool = True) -> None:
        r"""Add a buffer to the module.

        A buffer is state that is not a parameter: BatchNorm's ``running_mean``
        is saved and moved with the module but not trained.  A non-persistent
        buffer (``persistent=False``) is left out of :meth:`state_dict`.

        Args:
            name (str): name of the buffer; it is then accessible as ``self.<name>``
            tensor (Tensor or None): the buffer; ``None`` registers the name but
                the buffer is skipped by ``to``/``cuda`` and by ``state_dict``.
            persistent (bool): whether the buffer is part of this module's ``state_dict``.

        Example::

            >>> import glasstorch as torch
            >>> m = torch.nn.Module()
            >>> m.register_buffer("running_mean", torch.zeros(3))
            >>> list(m.state_dict())
            ['running_mean']
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_new_name("buffer", name, self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                "(torch Tensor or None required)"
            )
        for hook in _global_buffer_registration_hooks.values():
            output = hook(self, name, tensor)
            if output is not None:
                tensor = output
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Optional[Parameter]) -> None:
        r"""Add a parameter to the module (what ``self.<name> = Parameter(...)`` does).

        Args:
            name (str): name of the parameter
            param (Parameter or None): the parameter; ``None`` registers the name
                but the parameter is skipped by ``to``/``cuda`` and ``state_dict``.
        """
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_new_name("parameter", name, self._parameters)

        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                "(torch.nn.Parameter or None required)"
            )
        elif param.grad_fn:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                f"parameters must be created explicitly. To express '{name}' "
                "as a function of another Tensor, compute the value in "
                "the forward() method."
            )
        else:
            for hook in _global_parameter_registration_hooks.values():
                output = hook(self, name, param)
                if output is not None:
                    param = output
            self._parameters[name] = param

    def add_module(self, name: str, module: Optional["Module"]) -> None:
        r"""Add a child module (what ``self.<name> = module`` does).

        Args:
            name (str): name of the child module
            module (Module): child module to be added to the module.
        """
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        elif not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        elif hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        elif "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        elif name == "":
            raise KeyError('module name can\'t be empty string ""')
        for hook in _global_module_registration_hooks.values():
            output = hook(self, name, module)
            if output is not None:
                module = output
        self._modules[name] = module

    def register_module(self, name: str, module: Optional["Module"]) -> None:
        r"""Alias for :func:`add_module`."""
        self.add_module(name, module)

    # ------------------------------------------------------------------
    # Looking things up by dotted path
    # ------------------------------------------------------------------

    def get_submodule(self, target: str) -> "Module":
        """Return the submodule given by a dotted path such as ``"net_b.linear"``.

        Costs one step per path component (``named_modules`` would walk the whole tree).

        Raises:
            AttributeError: if a component does not exist or is not an ``nn.Module``.
        """
        if target == "":
            return self
        mod: Module = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target: str, module: "Module", strict: bool = False) -> None:
        """Set the submodule at a dotted path.  With ``strict=True`` it must already exist."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError("`" + "module" + f"` is not an nn.Module, found {type(module)}")
        parent = self if len(atoms) == 1 else self.get_submodule(".".join(atoms[:-1]))
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(parent._get_name() + " has no attribute `" + atoms[-1] + "`")
        if hasattr(parent, atoms[-1]):
            mod = getattr(parent, atoms[-1])
            if not isinstance(mod, Module):
                raise AttributeError("`" + atoms[-1] + "` is not an nn.Module")
        setattr(parent, atoms[-1], module)

    def get_parameter(self, target: str) -> Parameter:
        """Return the parameter at a dotted path such as ``"net_b.linear.weight"``."""
        module_path, _, param_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, param_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + param_name + "`")
        param = getattr(mod, param_name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + param_name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """Return the buffer at a dotted path such as ``"bn.running_mean"``."""
        module_path, _, buffer_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, buffer_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + buffer_name + "`")
        buffer = getattr(mod, buffer_name)
        if buffer_name not in mod._buffers:
            raise AttributeError("`" + buffer_name + "` is not a buffer")
        return buffer

    def get_extra_state(self) -> Any:
        """Return extra (picklable) state to include in ``state_dict`` under
        ``"<prefix>_extra_state"``.  Override together with :meth:`set_extra_state`."""
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml "
            "to report this bug."
        )

    def set_extra_state(self, state: Any) -> None:
        """Restore the state returned by :meth:`get_extra_state`."""
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml "
            "to report this bug."
        )

    # ------------------------------------------------------------------
    # Converting every parameter and buffer: one _apply serves them all
    # ------------------------------------------------------------------

    def _apply(self, fn, recurse=True):
        """Apply the tensor function ``fn`` to every parameter, gradient and buffer.

        Parameters keep their identity: the converted array is put into the
        existing ``Parameter`` (``param.data = fn(param)``), so an optimizer
        built before ``model.double()`` still holds the model's parameters.
        Buffers are plain tensors and are simply replaced.
        """
        if recurse:
            for module in self.children():
                module._apply(fn)

        for param in self._parameters.values():
            if param is None:
                continue
            # parameters are graph leaves: the conversion must not be recorded
            with no_grad():
                param_applied = fn(param)
            param.data = param_applied

            grad = param.grad
            if grad is not None:
                with no_grad():
                    grad_applied = fn(grad)
                grad.data = grad_applied

        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def apply(self, fn: Callable[["Module"], None]) -> "Module":
        r"""Apply ``fn`` to every submodule (as returned by ``.children()``), then to self.

        Typical use is initialising the parameters of a model::

            >>> import glasstorch as torch
            >>> from glasstorch import nn
            >>> @torch.no_grad()
            ... def init_weights(m):
            ...     if type(m) is nn.Linear:
            ...         m.weight.fill_(1.0)
            >>> net = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2)).apply(init_weights)
            >>> net[0].weight.tolist()
            [[1.0, 1.0], [1.0, 1.0]]
        """
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def cuda(self, device=None) -> "Module":
        r"""Move all parameters and buffers to the GPU (modifies the module in place)."""
        return self._apply(lambda t: t.cuda(device))

    def cpu(self) -> "Module":
        r"""Move all parameters and buffers to the CPU (modifies the module in place)."""
        return self._apply(lambda t: t.cpu())

    def type(self, dst_type) -> "Module":
        r"""Cast all parameters and buffers to ``dst_type`` (a dtype or a type string)."""
        return self._apply(lambda t: t.type(dst_type))

    def float(self) -> "Module":
        r"""Cast all floating point parameters and buffers to ``float32``."""
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self) -> "Module":
        r"""Cast all floating point parameters and buffers to ``float64``."""
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self) -> "Module":
        r"""Cast all floating point parameters and buffers to ``float16``."""
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self) -> "Module":
        r"""Cast all floating point parameters and buffers to ``bfloat16``."""
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def to_empty(self, *, device, recurse: bool = True) -> "Module":
        r"""Replace parameters and buffers by uninitialised ones on ``device``."""
        return self._apply(lambda t: glasstorch.empty_like(t, device=device), recurse=recurse)

    def to(self, *args, **kwargs) -> "Module":
        r"""Move and/or cast the parameters and buffers (in place).

        Call as ``to(device=None, dtype=None, non_blocking=False)``,
        ``to(dtype, non_blocking=False)`` or ``to(tensor, non_blocking=False)``.
        Only floating point (and complex) parameters and buffers change dtype;
        integer ones (an ``nn.Embedding`` index buffer, BatchNorm's
        ``num_batches_tracked``) only move device.

        Example::

            >>> import glasstorch as torch
            >>> lin = torch.nn.Linear(2, 2)
            >>> w = lin.weight
            >>> lin.to(torch.double).weight is w, w.dtype
            (True, torch.float64)
        """
        device, dtype, non_blocking = _parse_to(*args, **kwargs)

        if dtype is not None:
            if not (dtype.is_floating_point or dtype.is_complex):
                raise TypeError(
                    "nn.Module.to only accepts floating point or complex "
                    f"dtypes, but got desired dtype={dtype}"
                )
            if dtype.is_complex:
                warnings.warn(
                    "Complex modules are a new feature under active development whose design may change, "
                    "and some modules might not work as expected when using complex tensors as parameters or buffers. "
                    "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml "
                    "if a complex module does not work as expected.",
                    stacklevel=2,
                )

        def convert(t):
            target = dtype if t.is_floating_point() or t.is_complex() else None
            return t.to(device=device, dtype=target, non_blocking=non_blocking)

        return self._apply(convert)

    # ------------------------------------------------------------------
    # Hooks
    # ------------------------------------------------------------------

    def register_full_backward_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        r"""Register a hook called when the gradient w.r.t. the module's outputs is known.

        Signature: ``hook(module, grad_output) -> tuple[Tensor] or None``; a
        returned tuple replaces ``grad_output`` for the rest of backward.
        ``grad_output`` has ``None`` for every non-tensor output.

        For technical reasons (see ``BackwardHook``), ``forward`` receives a
        view of each input tensor and the caller a view of each output.
        """
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_backward_hook(self, hook) -> RemovableHandle:
        r"""Deprecated: hooks the last autograd node of ``forward`` only.
        Use :meth:`register_full_backward_hook`."""
        if self._is_full_backward_hook is True:
            raise RuntimeError(
                "Cannot use both regular backward hooks and full backward hooks on a "
                "single Module. Please use only one of them."
            )
        self._is_full_backward_hook = False
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        return handle

    def register_full_backward_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        r"""Register a hook called when the gradients w.r.t. the module's inputs are computed.

        Signature: ``hook(module, grad_input, grad_output) -> tuple[Tensor] or None``;
        a returned tuple replaces ``grad_input``.  It fires

        1. when the gradients w.r.t. the module inputs are computed; or,
        2. if no input requires grad, when the gradients w.r.t. the outputs are computed;
        3. never if no output requires grad.

        Example::

            >>> import glasstorch as torch
            >>> lin = torch.nn.Linear(3, 2)
            >>> seen = []
            >>> h = lin.register_full_backward_hook(lambda m, gi, go: seen.append((gi[0].shape, go[0].shape)))
            >>> lin(torch.ones(4, 3, requires_grad=True)).sum().backward()
            >>> seen
            [(torch.Size([4, 3]), torch.Size([4, 2]))]
        """
        if self._is_full_backward_hook is False:
            raise RuntimeError(
                "Cannot use both regular backward hooks and full backward hooks on a "
                "single Module. Please use only one of them."
            )
        self._is_full_backward_hook = True
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_pre_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False) -> RemovableHandle:
        r"""Register a hook called before :func:`forward`.

        Signature: ``hook(module, args) -> None or new args`` (a non-tuple result
        is wrapped into a 1-tuple), or with ``with_kwargs=True``
        ``hook(module, args, kwargs) -> None or (new_args, new_kwargs)``.
        ``prepend=True`` runs it before the hooks already registered.
        """
        handle = RemovableHandle(self._forward_pre_hooks, extra_dict=self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(
        self, hook, *, prepend: bool = False, with_kwargs: bool = False, always_call: bool = False
    ) -> RemovableHandle:
        r"""Register a hook called after :func:`forward` has computed an output.

        Signature: ``hook(module, args, output) -> None or new output``, or with
        ``with_kwargs=True`` ``hook(module, args, kwargs, output)``.  ``args``
        holds the positional arguments only.  With ``always_call=True`` the
        hook also runs when ``forward`` raises.
        """
        handle = RemovableHandle(
            self._forward_hooks,
            extra_dict=[self._forward_hooks_with_kwargs, self._forward_hooks_always_called],
        )
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def _get_backward_hooks(self):
        """The global and this module's backward hooks, split into (full, non-full) lists."""
        full, non_full = [], []
        if _global_is_full_backward_hook is True:
            full += _global_backward_hooks.values()
        elif _global_is_full_backward_hook is False:
            non_full += _global_backward_hooks.values()
        if self._is_full_backward_hook is True:
            full += self._backward_hooks.values()
        elif self._is_full_backward_hook is False:
            non_full += self._backward_hooks.values()
        return full, non_full

    def _get_backward_pre_hooks(self):
        return list(_global_backward_pre_hooks.values()) + list(self._backward_pre_hooks.values())

    # ------------------------------------------------------------------
    # Calling
    # ------------------------------------------------------------------

    def _call_impl(self, *args, **kwargs):
        # Fast path: a module without hooks is exactly its forward.
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks or self._backward_pre_hooks
                or _global_forward_hooks or _global_backward_hooks or _global_backward_pre_hooks):
            if not _global_forward_pre_hooks:
                return self.forward(*args, **kwargs)
            # only global forward pre-hooks (a tool watching every module call): they, then forward
            for hook in _global_forward_pre_hooks.hooks:   # (a tuple kept up to date: a hook may remove itself)
                args_result = hook(self, args)
                if args_result is not None:
                    args = args_result if isinstance(args_result, tuple) else (args_result,)
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    __call__: Callable[..., Any] = _call_impl

    def _call_with_hooks(self, args, kwargs):
        """``forward`` wrapped in the hooks, in torch's order:

        forward pre-hooks -> backward-hook node on inputs -> forward ->
        forward hooks -> backward-hook node on outputs.
        """
        # (each kind of hook is looked at only when there is one: a global hook -- a tool watching every
        # module -- makes every module call come here)
        result = None
        called_always_called_hooks = set()
        try:
            full_backward_hooks = non_full_backward_hooks = backward_pre_hooks = ()
            if self._backward_pre_hooks or _global_backward_pre_hooks:
                backward_pre_hooks = self._get_backward_pre_hooks()
            if self._backward_hooks or _global_backward_hooks:
                full_backward_hooks, non_full_backward_hooks = self._get_backward_hooks()

            # the hooks as they are at the call, as torch takes them: a hook may remove itself or another
            # (a one-shot hook calling its handle's remove()), and those still run this time
            for hook_id, hook in (*_global_forward_pre_hooks.items(), *self._forward_pre_hooks.items()):
                if hook_id in self._forward_pre_hooks_with_kwargs:
                    args_kwargs_result = hook(self, args, kwargs)
                    if args_kwargs_result is not None:
                        if isinstance(args_kwargs_result, tuple) and len(args_kwargs_result) == 2:
                            args, kwargs = args_kwargs_result
                        else:
                            raise RuntimeError(
                                "forward pre-hook must return None or a tuple "
                                f"of (new_args, new_kwargs), but got {args_kwargs_result}."
                            )
                else:
                    args_result = hook(self, args)
                    if args_result is not None:
                        if not isinstance(args_result, tuple):
                            args_result = (args_result,)
                        args = args_result

            bw_hook = None
            if full_backward_hooks or backward_pre_hooks:
                bw_hook = BackwardHook(self, full_backward_hooks, backward_pre_hooks)
                args = bw_hook.setup_input_hook(args)

            result = self.forward(*args, **kwargs)

            for hook_id, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
                if hook_id in self._forward_hooks_always_called or hook_id in _global_forward_hooks_always_called:
                    called_always_called_hooks.add(hook_id)
                if hook_id in self._forward_hooks_with_kwargs or hook_id in _global_forward_hooks_with_kwargs:
                    hook_result = hook(self, args, kwargs, result)
                else:
                    hook_result = hook(self, args, result)
                if hook_result is not None:
                    result = hook_result

            if bw_hook:
                if not isinstance(result, (Tensor, tuple)):
                    warnings.warn(
                        "For backward hooks to be called,"
                        " module output should be a Tensor or a tuple of Tensors"
                        f" but received {type(result)}",
                        stacklevel=2,
                    )
                result = bw_hook.setup_output_hook(result)

            # Deprecated non-full hooks: attach to the node that produced the
            # (first) output tensor; they see that node's gradients only.
            if non_full_backward_hooks:
                var = result
                while not isinstance(var, Tensor):
                    if isinstance(var, dict):
                        var = next(v for v in var.values() if isinstance(v, Tensor))
                    else:
                        var = var[0]
                grad_fn = var.grad_fn
                if grad_fn is not None:
                    for hook in non_full_backward_hooks:
                        grad_fn.register_hook(_WrappedHook(hook, self))
            return result
        except Exception:
            # run the always_call forward hooks that forward's error skipped, then re-raise
            for hook_id, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
                if (hook_id in self._forward_hooks_always_called or hook_id in _global_forward_hooks_always_called) \
                        and hook_id not in called_always_called_hooks:
                    try:
                        if hook_id in self._forward_hooks_with_kwargs or hook_id in _global_forward_hooks_with_kwargs:
                            hook_result = hook(self, args, kwargs, result)
                        else:
                            hook_result = hook(self, args, result)
                        if hook_result is not None:
                            result = hook_result
                    except Exception as e:
                        warnings.warn(
                            "module forward hook with ``always_call=True`` raised an exception "
                            f"that was silenced as another error was raised in forward: {str(e)}",
                            stacklevel=2,
                        )
                        continue
            raise

    # ------------------------------------------------------------------
    # Attribute access: the registries behave like attributes
    # ------------------------------------------------------------------

    def __getstate__(self):
        return self.__dict__.copy()

    def __setstate__(self, state):
        self.__dict__.update(state)
        # modules pickled by older versions may lack later registries
        for name in (
            "_forward_pre_hooks",
            "_forward_pre_hooks_with_kwargs",
            "_forward_hooks_with_kwargs",
            "_forward_hooks_always_called",
            "_state_dict_hooks",
            "_state_dict_pre_hooks",
            "_load_state_dict_pre_hooks",
            "_load_state_dict_post_hooks",
            "_backward_pre_hooks",
        ):
            if name not in self.__dict__:
                self.__dict__[name] = OrderedDict()
        if "_non_persistent_buffers_set" not in self.__dict__:
            self._non_persistent_buffers_set = set()
        if "_is_full_backward_hook" not in self.__dict__:
            self._is_full_backward_hook = None

    def __getattr__(self, name: str) -> Union[Tensor, "Module"]:
        # Only called when normal lookup fails, i.e. for registered entries
        # (which live in the registries, not in __dict__) and for typos.
        if "_parameters" in self.__dict__:
            _parameters = self.__dict__["_parameters"]
            if name in _parameters:
                return _parameters[name]
        if "_buffers" in self.__dict__:
            _buffers = self.__dict__["_buffers"]
            if name in _buffers:
                return _buffers[name]
        if "_modules" in self.__dict__:
            modules = self.__dict__["_modules"]
            if name in modules:
                return modules[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Union[Tensor, "Module"]) -> None:
        """Route the value by its type: a Parameter goes to ``_parameters``, a
        Module to ``_modules``, a Buffer (or any tensor assigned to an existing
        buffer name) to ``_buffers``; anything else is a plain attribute.
        A name lives in exactly one place, so the others are cleared."""

        def remove_from(*dicts_or_sets) -> None:
            for d in dicts_or_sets:
                if name in d:
                    if isinstance(d, dict):
                        del d[name]
                    else:
                        d.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(self.__dict__, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter '{name}' "
                    "(torch.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
        else:
            modules = self.__dict__.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(self.__dict__, self._parameters, self._buffers, self._non_persistent_buffers_set)
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(
                        f"cannot assign '{_typename(value)}' as child module '{name}' "
                        "(torch.nn.Module or None expected)"
                    )
                modules[name] = value
            else:
                buffers = self.__dict__.get("_buffers")
                if isinstance(value, Buffer) or buffers is not None and name in buffers:
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(
                            f"cannot assign '{_typename(value)}' as buffer '{name}' "
                            "(torch.nn.Buffer, torch.Tensor or None expected)"
                        )
                    if isinstance(value, Buffer):
                        persistent = value.persistent
                    else:
                        persistent = name not in self._non_persistent_buffers_set
                    self.register_buffer(name, value, persistent)
                else:
                    super().__setattr__(name, value)

    def __delattr__(self, name) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            super().__delattr__(name)

    def __dir__(self):
        module_attrs = dir(self.__class__)
        attrs = list(self.__dict__.keys())
        parameters = list(self._parameters.keys())
        modules = list(self._modules.keys())
        buffers = list(self._buffers.keys())
        keys = module_attrs + attrs + parameters + modules + buffers
        # drop names that are not legal Python identifiers (Sequential's "0", "1", ...)
        keys = [key for key in keys if not key[0].isdigit()]
        return sorted(keys)

    # ------------------------------------------------------------------
    # state_dict / load_state_dict
    # ------------------------------------------------------------------

    def _register_state_dict_hook(self, hook):
        r"""Register ``hook(module, state_dict, prefix, local_metadata) -> None or state_dict``,
        run after this module's ``state_dict``.  A returned dict replaces the result
        (only respected at the root module)."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError(
                "Cannot register the same function as the state dict post hook that was "
                "previously registered via register_state_dict_post_hook"
            )
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def register_state_dict_post_hook(self, hook):
        r"""Register ``hook(module, state_dict, prefix, local_metadata) -> None``
        (it may modify ``state_dict`` in place, not return a new one)."""
        hook._from_public_api = True
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def register_state_dict_pre_hook(self, hook):
        r"""Register ``hook(module, prefix, keep_vars) -> None``, run before ``state_dict``."""
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def _save_to_state_dict(self, destination, prefix, keep_vars) -> None:
        r"""Save this module's own parameters and persistent buffers (not its
        children's) into ``destination`` under ``prefix + name``.  Override to
        change what one module saves."""
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if getattr(self.__class__, "get_extra_state", Module.get_extra_state) is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        r"""Return an ``OrderedDict`` of the module's whole state.

        Keys are dotted paths (``"0.weight"``, ``"bn.running_mean"``); values
        are parameters and persistent buffers, detached (sharing storage: an
        in-place change to the model shows in the dict) unless ``keep_vars``.
        Entries set to ``None`` are left out.  ``result._metadata`` maps each
        module path to ``{"version": module._version}``.

        Example::

            >>> import glasstorch as torch
            >>> net = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.BatchNorm1d(3))
            >>> list(net.state_dict())
            ['0.weight', '0.bias', '1.weight', '1.bias', '1.running_mean', '1.running_var', '1.num_batches_tracked']
        """
        if len(args) > 0:
            warnings.warn(
                "Positional args are being deprecated, use kwargs instead. Refer to "
                "https://pytorch.org/docs/main/generated/torch.nn.Module.html#torch.nn.Module.state_dict"
                " for details.",
                FutureWarning,
                stacklevel=2,
            )
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]

        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()

        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata

        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            hook_result = hook(self, destination, prefix, local_metadata)
            if not getattr(hook, "_from_public_api", False):
                if hook_result is not None:
                    destination = hook_result
            elif hook_result is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        r"""Register ``hook(state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` run before this module's ``_load_from_state_dict``
        (with the module as first argument if ``with_module``)."""
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = _WrappedHook(hook, self if with_module else None)
        return handle

    def register_load_state_dict_pre_hook(self, hook):
        r"""Register ``hook(module, state_dict, prefix, local_metadata, strict,
        missing_keys, unexpected_keys, error_msgs) -> None``."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook):
        r"""Register ``hook(module, incompatible_keys) -> None``, run after
        ``load_state_dict``; it may edit ``incompatible_keys`` in place (which
        changes whether a strict load raises)."""
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ) -> None:
        r"""Copy this module's own parameters and persistent buffers from
        ``state_dict`` (not its children's).

        Problems are *collected* (into ``missing_keys``, ``unexpected_keys`` and
        ``error_msgs``) rather than raised, so ``load_state_dict`` can report
        every problem of the whole tree at once.  ``local_metadata`` carries the
        ``version`` saved with the checkpoint, for modules that convert old
        formats, and ``assign_to_params_buffers`` for ``assign=True``.
        """
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)

        persistent_buffers = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local_name_params = itertools.chain(self._parameters.items(), persistent_buffers.items())
        local_state = {k: v for k, v in local_name_params if v is not None}
        assign_to_params_buffers = local_metadata.get("assign_to_params_buffers", False)

        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            input_param = state_dict[key]
            if not isinstance(input_param, Tensor):
                error_msgs.append(
                    f'While copying the parameter named "{key}", '
                    "expected torch.Tensor or Tensor-like object from checkpoint but "
                    f"received {type(input_param)}"
                )
                continue

            # an uninitialized (lazy) parameter has no shape yet; a lazy
            # module's pre-hook materializes it before we get here
            is_param_lazy = is_lazy(param)
            # checkpoints from torch 0.3 stored scalars as 1-element vectors
            if (
                not is_param_lazy
                and len(param.shape) == 0
                and len(input_param.shape) == 1
                and input_param.shape[0] == 1
            ):
                input_param = input_param[0]

            if not is_param_lazy and input_param.shape != param.shape:
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape {input_param.shape} from checkpoint, "
                    f"the shape in current model is {param.shape}."
                )
                continue

            try:
                with no_grad():
                    if assign_to_params_buffers:
                        # take the checkpoint's tensor itself; a parameter keeps
                        # the model's requires_grad
                        if isinstance(param, Parameter):
                            if not isinstance(input_param, Parameter):
                                input_param = Parameter(input_param, requires_grad=param.requires_grad)
                            else:
                                input_param.requires_grad_(param.requires_grad)
                        setattr(self, name, input_param)
                    else:
                        param.copy_(input_param)
            except Exception as ex:
                error_msgs.append(
                    f'While copying the parameter named "{key}", '
                    f"whose dimensions in the model are {param.size()} and "
                    f"whose dimensions in the checkpoint are {input_param.size()}, "
                    f"an exception occurred : {ex.args}."
                )

        extra_state_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if getattr(self.__class__, "set_extra_state", Module.set_extra_state) is not Module.set_extra_state:
            if extra_state_key in state_dict:
                self.set_extra_state(state_dict[extra_state_key])
            elif strict:
                missing_keys.append(extra_state_key)
        elif strict and (extra_state_key in state_dict):
            unexpected_keys.append(extra_state_key)

        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_state_key:
                    input_name = key[len(prefix):].split(".", 1)
                    # a dotted remainder must belong to a child module
                    if len(input_name) > 1:
                        if input_name[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif input_name[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False):
        r"""Copy parameters and buffers from ``state_dict`` into this module and its descendants.

        With ``strict=True`` the keys must match :meth:`state_dict`'s exactly;
        every problem (missing keys, unexpected keys, each shape mismatch) is
        reported in one ``RuntimeError``.  By default values are copied into the
        existing tensors (``param.copy_``), so parameters keep identity, dtype
        and device; ``assign=True`` puts the checkpoint's tensors into the module
        instead (keeping each parameter's ``requires_grad``).

        Returns:
            ``NamedTuple`` ``(missing_keys, unexpected_keys)``.

        Example::

            >>> import glasstorch as torch
            >>> lin = torch.nn.Linear(4, 3)
            >>> lin.load_state_dict({"weight": torch.zeros(3, 4)}, strict=False)
            _IncompatibleKeys(missing_keys=['bias'], unexpected_keys=[])
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")

        missing_keys: list = []
        unexpected_keys: list = []
        error_msgs: list = []

        # copy state_dict so _load_from_state_dict can modify it
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module, local_state_dict, prefix=""):
            local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(
                local_state_dict, prefix, local_metadata, True, missing_keys, unexpected_keys, error_msgs
            )
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_state_dict = {k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)}
                    load(child, child_state_dict, child_prefix)

            # post hooks may edit missing_keys / unexpected_keys in place
            incompatible_keys = _IncompatibleKeys(missing_keys, unexpected_keys)
            for hook in module._load_state_dict_post_hooks.values():
                out = hook(module, incompatible_keys)
                if out is not None:
                    raise AssertionError(
                        "Hooks registered with ``register_load_state_dict_post_hook`` are not "
                        "expected to return new values, if incompatible_keys need to be modified, "
                        "it should be done inplace."
                    )

        load(self, state_dict)
        del load

        if strict:
            if len(unexpected_keys) > 0:
                error_msgs.insert(
                    0,
                    "Unexpected key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in unexpected_keys)),
                )
            if len(missing_keys) > 0:
                error_msgs.insert(
                    0,
                    "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing_keys)),
                )

        if len(error_msgs) > 0:
            raise RuntimeError(
                "Error(s) in loading state_dict for {}:\n\t{}".format(self.__class__.__name__, "\n\t".join(error_msgs))
            )
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # ------------------------------------------------------------------
    # Walking the tree
    # ------------------------------------------------------------------

    def _named_members(self, get_members_fn, prefix="", recurse=True, remove_duplicate: bool = True):
        r"""Yield ``(dotted_name, member)`` for the members ``get_members_fn(module)``
        of every module; a member reached twice (a shared parameter) is yielded once."""
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            members = get_members_fn(module)
            for k, v in members:
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                name = module_prefix + ("." if module_prefix else "") + k
                yield name, v

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        r"""Return an iterator over module parameters (what an optimizer takes).

        Args:
            recurse (bool): if True, include the parameters of all submodules;
                otherwise only this module's own.
        """
        for _name, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        r"""Return an iterator of ``(name, parameter)``, names being dotted paths.

        Args:
            prefix (str): prepended to every name.
            recurse (bool): include submodules' parameters.
            remove_duplicate (bool): yield a parameter shared by several modules once.

        Example::

            >>> import glasstorch as torch
            >>> net = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1))
            >>> [name for name, p in net.named_parameters()]
            ['0.weight', '0.bias', '2.weight', '2.bias']
        """
        yield from self._named_members(
            lambda module: module._parameters.items(),
            prefix=prefix,
            recurse=recurse,
            remove_duplicate=remove_duplicate,
        )

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        r"""Return an iterator over module buffers."""
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        r"""Return an iterator of ``(name, buffer)``; arguments as :meth:`named_parameters`."""
        yield from self._named_members(
            lambda module: module._buffers.items(),
            prefix=prefix,
            recurse=recurse,
            remove_duplicate=remove_duplicate,
        )

    def children(self) -> Iterator["Module"]:
        r"""Return an iterator over immediate children modules."""
        for _name, module in self.named_children():
            yield module

    def named_children(self):
        r"""Return an iterator of ``(name, child)`` over immediate children (each child once)."""
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self, remove_duplicate: bool = True) -> Iterator["Module"]:
        r"""Return an iterator over all modules in the tree, self first (each once by default)."""
        for _, module in self.named_modules(remove_duplicate=remove_duplicate):
            yield module

    def named_modules(self, memo: Optional[set] = None, prefix: str = "", remove_duplicate: bool = True):
        r"""Return an iterator of ``(dotted_name, module)`` over the whole tree, depth first,
        self first with name ``prefix``.  A module reached twice appears once
        (unless ``remove_duplicate=False``).

        Example::

            >>> import glasstorch as torch
            >>> l = torch.nn.Linear(2, 2)
            >>> net = torch.nn.Sequential(l, l)
            >>> [name for name, m in net.named_modules()]
            ['', '0']
        """
        if memo is None:
            memo = set()
        if self not in memo:
            if remove_duplicate:
                memo.add(self)
            yield prefix, self
            for name, module in self._modules.items():
                if module is None:
                    continue
                submodule_prefix = prefix + ("." if prefix else "") + name
                yield from module.named_modules(memo, submodule_prefix, remove_duplicate)

    # ------------------------------------------------------------------
    # Modes and gradients
    # ------------------------------------------------------------------

    def train(self, mode: bool = True) -> "Module":
        r"""Set the module and all its descendants in training mode (``mode=True``)
        or evaluation mode.  Only some modules behave differently (Dropout, BatchNorm)."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> "Module":
        r"""Set evaluation mode: ``self.train(False)``.  (Does not disable autograd;
        that is ``glasstorch.no_grad()``.)"""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        r"""Set ``requires_grad`` of every parameter in place (e.g. to freeze a backbone)."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    @overridable(defaults_by_keyword=True)
    def zero_grad(self, set_to_none: bool = True) -> None:
        r"""Reset gradients of all parameters: to ``None`` (default), or to zeros in place (one call for
        a function mode, as ``Optimizer.zero_grad``)."""
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()

    def share_memory(self) -> "Module":
        r"""No-op kept for compatibility: there is a single process memory here."""
        return self

    # ------------------------------------------------------------------
    # Printing
    # ------------------------------------------------------------------

    def _get_name(self):
        return self.__class__.__name__

    def extra_repr(self) -> str:
        r"""Return the extra representation of the module (shown inside the parentheses).
        Re-implement it in your own modules; single or multi-line strings work."""
        return ""

    def __repr__(self) -> str:
        # The extra repr is treated like the submodules: one item per line.
        extra_lines = []
        extra_repr = self.extra_repr()
        if extra_repr:  # "" would split into ['']
            extra_lines = extra_repr.split("\n")
        child_lines = []
        for key, module in self._modules.items():
            mod_str = _addindent(repr(module), 2)
            child_lines.append("(" + key + "): " + mod_str)
        lines = extra_lines + child_lines

        main_str = self._get_name() + "("
        if lines:
            # simple one-liner info, which most built-in modules use
            if len(extra_lines) == 1 and not child_lines:
                main_str += extra_lines[0]
            else:
                main_str += "\n  " + "\n  ".join(lines) + "\n"
        main_str += ")"
        return main_str
