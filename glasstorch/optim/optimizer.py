"""The optimizer base class: parameter groups, per-parameter state, state_dict and step hooks.

An optimizer is two separable things, and this file holds only the first:

* the **bookkeeping** shared by every algorithm (this class): which tensors are optimized, in which
  ``param_groups`` (each a dict of hyperparameters with every default filled in), the per-parameter
  ``state`` (momentum buffers, running averages, step counts), saving and restoring all of it with
  ``state_dict()`` / ``load_state_dict()``, clearing gradients, and the hooks around ``step``;
* the **update rule** of one algorithm (``sgd.py``, ``adam.py``, ...): a plain function over lists of
  parameters, gradients and state tensors, written as torch's ``_single_tensor_*`` reference loops.

Each optimizer's ``step`` walks ``param_groups``, gathers the parameters that have a gradient and
their state, and hands them to its update function::

    for group in self.param_groups:                 # base bookkeeping
        params = self._params_with_grad(group)
        ...lazily create self.state[p] ...
        adam(params, grads, exp_avgs, ..., lr=group["lr"], ...)   # the algorithm

Everything here follows ``torch/optim/optimizer.py`` (PyTorch 2.13): names, error messages, the
layout of the state dict (parameters numbered 0.. in group order), the hook signatures.
"""
import functools
import sys
import warnings
from collections import OrderedDict, defaultdict
from copy import deepcopy
from itertools import chain

import glasstorch
from .._tensor import Tensor
from .._seam import overridable
from .. import _dtype
from ..autograd.grad_mode import enable_grad, no_grad
from ..utils.hooks import RemovableHandle

__all__ = ["Optimizer", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]


class _RequiredParameter:
    """Marks a default that every param group must set itself (``defaults={"lr": required}``)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()

# Hooks that run around every optimizer's step (torch.optim.optimizer's module-level registries).
_global_optimizer_pre_hooks = OrderedDict()
_global_optimizer_post_hooks = OrderedDict()


def register_optimizer_step_pre_hook(hook):
    """Register ``hook(optimizer, args, kwargs) -> None | (new_args, new_kwargs)`` before every step."""
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook):
    """Register ``hook(optimizer, args, kwargs) -> None`` after every optimizer's step."""
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


def _get_scalar_dtype():
    """The dtype of ``state["step"]``: float32, or float64 when that is the default dtype (torch)."""
    return _dtype.float64 if _dtype.get_default_dtype() == _dtype.float64 else _dtype.float32


def _typename(obj):
    """``torch.typename``: 'torch.FloatTensor' for a tensor, the qualified class name otherwise."""
    if isinstance(obj, Tensor):
        return obj.type()
    cls = type(obj)
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


def _use_grad_for_differentiable(step):
    """Run ``step`` with graph recording off: a parameter update is not part of any model's graph.

    torch switches grad mode to ``defaults["differentiable"]``; glasstorch supports only the
    default ``differentiable=False``, so this is ``no_grad`` (the constructors reject ``True``).
    """
    @functools.wraps(step)
    def step_without_grad(self, *args, **kwargs):
        with no_grad():
            return step(self, *args, **kwargs)
    return step_without_grad


def _evaluate_closure(closure):
    """Call the user's closure (which re-runs forward and backward) with grad mode on.

    ``step`` itself runs under ``no_grad``, so the closure must turn recording back on, as torch's
    ``with torch.enable_grad(): loss = closure()`` does.
    """
    if closure is None:
        return None
    with enable_grad():
        return closure()


def _compiling():
    """``torch.compiler.is_compiling()`` (torch's ``_get_value`` asks it), without importing the
    compiler: ``glasstorch/_dynamo`` is loaded only by a program that compiles."""
    capture = sys.modules.get("glasstorch._dynamo.capture")
    return capture is not None and capture.compiling()


def _step_handler():
    """``torch.compile``'s capture or replay running now, which runs the step (see ``_with_step_hooks``),
    or None (see ``_compiling``)."""
    capture = sys.modules.get("glasstorch._dynamo.capture")
    return None if capture is None else capture.step_handler()


def _to_scalar(value):
    """A hyperparameter as a Python number: torch also accepts a 1-element Tensor (``lr=torch.tensor(0.01)``).

    torch keeps such an ``lr`` a tensor through the arithmetic and turns it into a Scalar where an op
    takes ``alpha=`` / ``value=``; glasstorch's ops take numbers there, so it is read once here.
    """
    return value.item() if isinstance(value, Tensor) else value


def _check_lr(lr):
    """torch's check of ``lr``, the first of every optimizer's argument checks."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


# Where torch lets ``capturable=True`` keep the step counts on the device (CUDA graphs).
_CAPTURABLE_SUPPORTED_DEVICES = ["cuda", "xpu", "hpu", "privateuseone", "xla"]


def _check_capturable(capturable, tensors, what="params and state_steps", supported=_CAPTURABLE_SUPPORTED_DEVICES):
    """With ``capturable=True`` every parameter and state scalar must live on a GPU, as torch asserts.

    On the CPU torch raises this AssertionError at the first step; on CUDA glasstorch keeps the
    state there and runs the ordinary update (the numbers are the same).
    """
    if capturable and not all(t.device.type in supported for t in tensors):
        raise AssertionError(f"If capturable=True, {what} must be on supported devices: {supported}.")


def _scalar_state(value, p, capturable):
    """A 0-dim state tensor (``step``, NAdam's ``mu_product``...): on the CPU, or beside ``p`` if capturable."""
    return glasstorch.tensor(float(value), dtype=_get_scalar_dtype(), device=p.device if capturable else None)


def _scalar_states_as_tensors(optimizer, keys):
    """Turn the scalar state entries ``keys`` that older checkpoints saved as Python numbers into tensors.

    torch's optimizers do this in ``__setstate__`` (so in ``load_state_dict`` too): ``step`` was a
    number before torch 1.12, as were NAdam's ``mu_product`` and ASGD's ``eta`` and ``mu``.
    """
    for group in optimizer.param_groups:
        for p in group["params"]:
            p_state = optimizer.state.get(p, {})
            for key in keys:
                if key in p_state and not isinstance(p_state[key], Tensor):
                    p_state[key] = _scalar_state(p_state[key], p, group.get("capturable", False))


def _check_not_differentiable(differentiable, fused, foreach=None):
    """Check the implementation flags as torch's constructors do.

    ``fused=True`` is accepted where torch accepts it (SGD, Adam, AdamW, Adagrad): glasstorch's
    fused kernel is the flat path of ``optim/_flat.py`` (the for-loop where an optimizer has none),
    torch's refusals of ``fused`` with ``differentiable`` or ``foreach`` included.
    ``differentiable=True`` is not implemented: say so instead of ignoring it.
    """
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
    if differentiable:
        raise NotImplementedError("glasstorch optimizers do not support differentiable=True")


def _with_step_hooks(step):
    """Wrap an optimizer's ``step`` so the pre and post hooks run around it (torch's profile_hook_step).

    The hooks see ``args`` including the optimizer itself, exactly as torch passes them. The wrapper
    also records that the optimizer has stepped, so an LR scheduler can warn when it is stepped first.
    """
    @functools.wraps(step)
    def step_with_hooks(*args, **kwargs):
        self = args[0]
        for pre_hook in chain(_global_optimizer_pre_hooks.values(), self._optimizer_step_pre_hooks.values()):
            result = pre_hook(self, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError(
                        f"{step} must return None or a tuple of (new_args, new_kwargs), but got {result}.")
        handler = _step_handler()
        if handler is None:
            out = step(*args, **kwargs)
        else:
            # torch.compile: the capture makes the state a first step creates before the step is traced, as
            # torch's dynamo runs _init_group first (the graph reads it as an input from the first call on);
            # replay runs the graph that holds the whole step instead of its Python
            out = handler.optimizer_step(self, step, args, kwargs)
        self._opt_called = True
        for post_hook in chain(self._optimizer_step_post_hooks.values(), _global_optimizer_post_hooks.values()):
            post_hook(self, args, kwargs)
        return out

    step_with_hooks.hooked = True
    return step_with_hooks


class Optimizer:
    r"""Base class for all optimizers.

    Args:
        params (iterable): the tensors to optimize, or dicts defining parameter groups
            (``{"params": [...], "lr": 0.1}``; keys a group leaves out take the value in ``defaults``),
            or ``(name, tensor)`` pairs as given by ``named_parameters()``.
        defaults (dict): the default value of every hyperparameter of the algorithm.

    Parameters must come in a deterministic order (a list, not a set): the state dict identifies
    them by position.

    Example (a hand-written optimizer uses the same machinery as the built-in ones)::

        >>> import glasstorch as torch
        >>> class PlainSGD(torch.optim.Optimizer):
        ...     def __init__(self, params, lr=0.1):
        ...         super().__init__(params, {"lr": lr})
        ...     @torch.no_grad()
        ...     def step(self, closure=None):
        ...         for group in self.param_groups:
        ...             for p in group["params"]:
        ...                 if p.grad is not None:
        ...                     p.add_(p.grad, alpha=-group["lr"])
        >>> w = torch.tensor([1.0, 2.0], requires_grad=True)
        >>> opt = PlainSGD([w], lr=0.5)
        >>> (w * w).sum().backward()
        >>> opt.step()
        >>> w
        tensor([0., 0.], requires_grad=True)
    """

    # What an optimizer unpickled from an older version lacks, filled in by ``__setstate__``: the group
    # options added since (name -> default), and the per-parameter scalars (``step``...) that older
    # versions kept as Python numbers and that are 0-dim tensors now.
    _group_option_defaults = {}
    _scalar_state_keys = ()

    def _patch_step_function(self):
        # Make this class's step run the step hooks. Like torch, the class is patched on first use,
        # so a subclass that overrides step (and calls super().step()) hooks its own step only.
        if not getattr(self.__class__.step, "hooked", False):
            self.__class__.step = _with_step_hooks(self.__class__.step)

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()
        self._patch_step_function()

        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            "but got " + _typename(params))

        # Keyed by the parameter tensor itself (tensors hash by identity); a parameter's entry is
        # created lazily by the first step that sees a gradient for it.
        self.state = defaultdict(dict)
        self.param_groups = []

        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks", "_optimizer_load_state_dict_post_hooks"):
            self.__dict__.setdefault(name, OrderedDict())
        self._patch_step_function()  # an unpickled optimizer may be the first of its class
        self.defaults.setdefault("differentiable", False)
        for group in self.param_groups:  # groups saved by older versions lack the newer options
            for option, default in self._group_option_defaults.items():
                group.setdefault(option, default)
        if self._scalar_state_keys:
            _scalar_states_as_tensors(self, self._scalar_state_keys)

    def __repr__(self):
        format_string = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            format_string += "\n"
            format_string += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    format_string += f"    {key}: {group[key]}\n"
        format_string += ")"
        return format_string

    # ----------------------------------------------------------------------------- param groups
    def add_param_group(self, param_group):
        """Add a group of parameters with its own hyperparameters (e.g. unfreezing a layer mid-training).

        The dict is completed in place with every default it does not set. Raises torch's errors for
        a parameter that is not a tensor (TypeError), not a leaf, or already in another group
        (ValueError).
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")

        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but "
                            "the ordering of tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)

        # named_parameters() gives (name, tensor) pairs: keep the names beside the tensors.
        names = [p[0] for p in param_group["params"] if isinstance(p, tuple)]
        param_group["params"] = [p[1] if isinstance(p, tuple) else p for p in param_group["params"]]
        if names:
            if len(names) != len(param_group["params"]):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["param_names"] = names

        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(param))
            # An update to a non-leaf would be lost: the next forward recomputes it from its inputs.
            if not self.defaults.get("differentiable", None) and not (
                    param.is_leaf or getattr(param, "retains_grad", False)):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)

        params = param_group["params"]
        if len(params) != len(set(params)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; "
                          "in future, this will cause an error; "
                          "see github.com/pytorch/pytorch/issues/40967 for more information", stacklevel=3)

        param_set = set()
        for group in self.param_groups:
            param_set.update(group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                current_group_txt = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {current_group_txt} to the optimizer")
        if not param_set.isdisjoint(params):
            raise ValueError("some parameters appear in more than one parameter group")

        self.param_groups.append(param_group)

    @staticmethod
    def _params_with_grad(group):
        """The group's parameters that received a gradient; a step leaves the others untouched."""
        return [p for p in group["params"] if p.grad is not None]

    # ----------------------------------------------------------------------------- gradients, step
    @overridable(defaults_by_keyword=True)
    def zero_grad(self, set_to_none=True):
        """Reset the gradients of all optimized tensors.

        Args:
            set_to_none (bool): set ``.grad`` to None (the default: frees memory, and a step then
                skips parameters that received no new gradient) instead of filling it with zeros.

        A function mode sees this call as one (torch's modes see its reads and writes of each
        ``.grad`` instead): see README, "Where glasstorch differs".
        """
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    # A gradient built with create_graph=True is part of a graph: cut it loose first.
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()

    def step(self, closure=None):
        """Perform a single optimization step (update every parameter that has a gradient).

        Args:
            closure (callable, optional): re-evaluates the model and returns the loss.
        """
        raise NotImplementedError

    # ----------------------------------------------------------------------------- hooks
    def register_step_pre_hook(self, hook):
        """Register ``hook(optimizer, args, kwargs) -> None | (new_args, new_kwargs)`` run before ``step``.

        Returns a handle whose ``remove()`` unregisters the hook.
        """
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook):
        """Register ``hook(optimizer, args, kwargs) -> None`` run after ``step``; returns a removable handle."""
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    @staticmethod
    def _register(hooks, hook, prepend):
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """Register ``hook(optimizer) -> None`` run before ``state_dict()`` builds the dict."""
        return self._register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """Register ``hook(optimizer, state_dict) -> state_dict | None`` run on the built dict."""
        return self._register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """Register ``hook(optimizer, state_dict) -> state_dict | None`` run before loading."""
        return self._register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """Register ``hook(optimizer) -> None`` run after loading."""
        return self._register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # ----------------------------------------------------------------------------- state dict
    def state_dict(self):
        """Return the optimizer's state as a dict of plain Python containers and tensors.

        Parameters are replaced by integer ids, numbered 0.. in the order they appear across the
        groups; ``state`` is keyed by those ids and each group lists its ids under ``"params"``::

            {"state": {0: {"step": tensor(3.), "exp_avg": tensor([...]), ...}, 1: {...}},
             "param_groups": [{"lr": 0.001, "betas": (0.9, 0.999), ..., "params": [0, 1]}]}

        The tensors are the live state tensors (not copies), as in torch; ``torch.save`` copies them.
        """
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)

        param_ids = {}  # id(tensor) -> its position across all groups
        start_index = 0

        def pack_group(group):
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            param_ids.update({id(p): i for i, p in enumerate(group["params"], start_index)
                              if id(p) not in param_ids})
            packed["params"] = [param_ids[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(param_ids[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        state_dict = {"state": packed_state, "param_groups": param_groups}

        for post_hook in self._optimizer_state_dict_post_hooks.values():
            hook_result = post_hook(self, state_dict)
            if hook_result is not None:
                state_dict = hook_result
        return state_dict

    @staticmethod
    def _copy_state_value(param, value, key=None):
        """A deep copy of one saved state value, with its tensors made to match ``param``.

        Floating-point state follows the parameter's dtype and device (a float64 checkpoint loaded
        into float32 parameters gives float32 buffers), except ``step``, which keeps its own dtype
        (torch issue 74424). torch 2.13 shares the loaded tensors with the given dict when no cast
        is needed; glasstorch always copies, so continuing to train one optimizer never changes
        another that was loaded from the same dict.
        """
        if isinstance(value, Tensor):
            copy = value.detach().clone()
            if key == "step":
                return copy
            if param.is_floating_point():
                return copy.to(dtype=param.dtype, device=param.device)
            return copy.to(device=param.device)
        if isinstance(value, dict):
            return {k: Optimizer._copy_state_value(param, v, key=k) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(Optimizer._copy_state_value(param, v) for v in value)
        return deepcopy(value)

    def load_state_dict(self, state_dict):
        """Load a state produced by :meth:`state_dict` (of an optimizer over the same parameter layout).

        The saved ids are matched to this optimizer's parameters by position, group by group; the
        number of groups and the size of each must agree. Afterwards ``step`` continues exactly as
        the saved optimizer would have.
        """
        state_dict = state_dict.copy()  # shallow: pre hooks may replace entries without touching the caller's
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            hook_result = pre_hook(self, state_dict)
            if hook_result is not None:
                state_dict = hook_result

        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])  # they become this optimizer's groups
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group "
                             "that doesn't match the size of optimizer's group")

        # saved id -> this optimizer's parameter at the same position
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = self._copy_state_value(param, v)
            else:  # state not tied to a parameter is kept as it is (torch keeps it for old checkpoints)
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})

        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)
