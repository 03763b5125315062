r"""GradScaler: loss scaling, which keeps small float16 gradients from flushing to zero.

The loss is multiplied by a large factor ``S`` before ``backward``, so every gradient is ``S``
times too large (and out of float16's underflow range); before the optimizer steps, the gradients
are divided by ``S`` again. If any of them is inf or NaN the scale was too large: that step is
skipped and ``S`` shrinks by ``backoff_factor``; after ``growth_interval`` clean steps in a row it
grows by ``growth_factor``::

    scaler = torch.amp.GradScaler("cuda")
    for x, y in data:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)                 # optional: to clip the true gradients
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)                     # skipped if a gradient is inf/NaN
        scaler.update()

This is torch 2.13's ``torch/amp/grad_scaler.py``: the scale is a float32 0-dim tensor and the
growth tracker an int32 one, created on the device of the first scaled output; ``device="cuda"``
without a GPU warns and disables the scaler (every method then passes through), ``device="cpu"``
scales on the CPU.
"""
import warnings
from collections import abc, defaultdict
from enum import Enum

import glasstorch
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad

__all__ = ["OptState", "GradScaler"]


class _MultiDeviceReplicator:
    """Lazily serves copies of a master tensor to the devices that ask for it."""

    def __init__(self, master_tensor):
        self.master = master_tensor
        self._per_device_tensors = {}

    def get(self, device):
        retval = self._per_device_tensors.get(device, None)
        if retval is None:
            retval = self.master.to(device=device, non_blocking=True, copy=True)
            self._per_device_tensors[device] = retval
        return retval


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


def _non_finite_check_and_unscale_(grads, found_inf, inv_scale):
    """torch's ``_amp_foreach_non_finite_check_and_unscale_``: set ``found_inf`` to 1 if any gradient has
    an inf or NaN, and multiply every gradient by ``inv_scale``, in place."""
    for grad in grads:
        if not bool(grad.isfinite().all()):
            found_inf.fill_(1.0)
        grad.mul_(inv_scale)


def _update_scale_(scale, growth_tracker, found_inf, growth_factor, backoff_factor, growth_interval):
    """torch's ``_amp_update_scale_``: back off after an overflow, grow after ``growth_interval`` clean steps.

    As ATen's kernel, the float32 scale is multiplied by the (double) factor in double precision and
    rounded back to float32; a grown scale that would be inf is not taken (the tracker still restarts).
    """
    if found_inf.item():
        scale.copy_(scale.double() * backoff_factor)
        growth_tracker.fill_(0)
        return
    successful = growth_tracker.item() + 1
    if successful == growth_interval:
        new_scale = (scale.double() * growth_factor).float()
        if bool(new_scale.isfinite()):
            scale.copy_(new_scale)
        growth_tracker.fill_(0)
    else:
        growth_tracker.fill_(successful)


class GradScaler:
    r"""Scale the loss, unscale the gradients, skip steps with inf/NaN gradients and adapt the scale.

    Args:
        device (str): the device type of the scaled tensors (default: ``"cuda"``).
        init_scale (float): the initial scale factor (default: 2.0**16).
        growth_factor (float): > 1; multiplies the scale after ``growth_interval`` clean steps (default: 2.0).
        backoff_factor (float): < 1; multiplies the scale after a step with inf/NaN gradients (default: 0.5).
        growth_interval (int): the number of clean steps in a row before the scale grows (default: 2000).
        enabled (bool): False makes every method a pass-through (``scale`` returns its input,
            ``step`` just steps) (default: True).

    Example (on the CPU, with a deliberately huge gradient that overflows)::

        >>> import glasstorch as torch
        >>> w = torch.tensor([1.0], requires_grad=True)
        >>> opt = torch.optim.SGD([w], lr=0.1)
        >>> scaler = torch.amp.GradScaler("cpu", init_scale=4.0)
        >>> scaler.scale((w * 3).sum()).backward()
        >>> w.grad                           # 3 * 4
        tensor([12.])
        >>> scaler.step(opt); scaler.update()
        >>> w.detach(), scaler.get_scale()   # stepped with the true gradient 3
        (tensor([0.7000]), 4.0)
        >>> opt.zero_grad()
        >>> scaler.scale((w * 1e38).sum()).backward()   # 4e38 overflows float32
        >>> scaler.step(opt); scaler.update()
        >>> w.detach(), scaler.get_scale()   # skipped, and the scale halves
        (tensor([0.7000]), 2.0)
    """

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if self._device == "cuda":
            from ..cuda.amp import amp_definitely_not_available
            if enabled and amp_definitely_not_available():
                warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                              stacklevel=2)
                self._enabled = False

        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")

            self._init_scale = init_scale
            self._scale = None              # a float32 0-dim tensor, made by the first scale()
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None     # an int32 0-dim tensor: clean steps in a row
            self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname):
        fix = "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, dev):
        if self._growth_tracker is not None:
            raise AssertionError("_growth_tracker initialized before _scale")
        self._scale = glasstorch.full((), self._init_scale, dtype=glasstorch.float32, device=dev)
        self._growth_tracker = glasstorch.full((), self._init_growth_tracker, dtype=glasstorch.int32, device=dev)

    # ----------------------------------------------------------------------------- scale
    def scale(self, outputs):
        """Multiply a tensor (or the tensors of a nested list/tuple/iterable) by the scale factor."""
        if not self._enabled:
            return outputs

        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(device=outputs.device, non_blocking=True)

        stash = []   # one replicator, made for the first tensor met

        def apply_scale(val):
            if isinstance(val, Tensor):
                if len(stash) == 0:
                    if self._scale is None:
                        self._lazy_init_scale_growth_tracker(val.device)
                    stash.append(_MultiDeviceReplicator(self._scale))
                return val * stash[0].get(val.device)
            if isinstance(val, abc.Iterable):
                iterable = map(apply_scale, val)
                if isinstance(val, (list, tuple)):
                    return type(val)(iterable)
                return iterable
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply_scale(outputs)

    # ----------------------------------------------------------------------------- unscale
    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16):
        per_device_inv_scale = _MultiDeviceReplicator(inv_scale)
        per_device_found_inf = _MultiDeviceReplicator(found_inf)
        per_device_and_dtype_grads = defaultdict(lambda: defaultdict(list))
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if not isinstance(param, Tensor):
                        raise AssertionError(f"expected param to be torch.Tensor, got {type(param).__name__}")
                    if param.grad is None:
                        continue
                    if (not allow_fp16) and param.grad.dtype == glasstorch.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    to_unscale = param.grad
                    per_device_and_dtype_grads[to_unscale.device][to_unscale.dtype].append(to_unscale)

            for device, per_dtype_grads in per_device_and_dtype_grads.items():
                for grads in per_dtype_grads.values():
                    _non_finite_check_and_unscale_(grads, per_device_found_inf.get(device),
                                                   per_device_inv_scale.get(device))
        return per_device_found_inf._per_device_tensors

    def unscale_(self, optimizer):
        """Divide ``optimizer``'s gradients by the scale, in place, and note whether any is inf/NaN.

        Call it at most once per optimizer between ``update()`` calls, before ``step()`` (which then
        does not unscale again) — typically to clip the true gradients.
        """
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        elif optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")

        # FP32 division can be imprecise for certain compile options, so the reciprocal is taken in FP64.
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = glasstorch.full((), 0.0, dtype=glasstorch.float32, device=self._scale.device)
        optimizer_state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf, False)
        optimizer_state["stage"] = OptState.UNSCALED

    # ----------------------------------------------------------------------------- step, update
    def _maybe_opt_step(self, optimizer, optimizer_state, *args, **kwargs):
        retval = None
        if not sum(v.item() for v in optimizer_state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        return retval

    def step(self, optimizer, *args, **kwargs):
        """Unscale (unless ``unscale_`` was called) and call ``optimizer.step(*args, **kwargs)`` —
        unless a gradient is inf/NaN, in which case the step is skipped. Returns what ``step`` returned."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")

        if optimizer_state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(optimizer_state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = self._maybe_opt_step(optimizer, optimizer_state, *args, **kwargs)
        optimizer_state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """Adapt the scale after the iteration's steps (or set it to ``new_scale``), and start a new iteration."""
        if not self._enabled:
            return
        _scale, _growth_tracker = self._check_scale_growth_tracker("update")

        if new_scale is not None:
            if isinstance(new_scale, float):
                self._scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                          "torch.FloatTensor with requires_grad=False.")
                if new_scale.device.type != self._device:
                    raise AssertionError(reason)
                if new_scale.numel() != 1:
                    raise AssertionError(reason)
                if new_scale.requires_grad is True:
                    raise AssertionError(reason)
                self._scale.copy_(new_scale)
        else:
            found_infs = [found_inf.to(device=_scale.device, non_blocking=True)
                          for state in self._per_optimizer_states.values()
                          for found_inf in state["found_inf_per_device"].values()]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            found_inf_combined = found_infs[0]
            for found_inf in found_infs[1:]:
                found_inf_combined += found_inf
            _update_scale_(_scale, _growth_tracker, found_inf_combined, self._growth_factor, self._backoff_factor,
                           self._growth_interval)

        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    # ----------------------------------------------------------------------------- accessors
    def _get_scale_async(self):
        return self._scale

    def get_scale(self):
        """The current scale as a Python float (1.0 when disabled)."""
        if self._enabled:
            scale = self._get_scale_async()
            return self._init_scale if scale is None else scale.item()
        return 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if self._enabled:
            return self._init_growth_tracker if self._growth_tracker is None else self._growth_tracker.item()
        return 0

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        """``{"scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"}`` ({} when disabled)."""
        if self._enabled:
            return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                    "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                    "_growth_tracker": self._get_growth_tracker()}
        return {}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the beginning "
                                     "of an iteration, or at the end after scaler.update().")
            # Pickling the tensors themselves would tie the pickle to a device: save their values.
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)

    def _check_inf_per_device(self, optimizer):
        _scale, _ = self._check_scale_growth_tracker("_check_inf_per_device")
        dummy_inv_scale = glasstorch.full((), 1.0, dtype=glasstorch.float32, device=_scale.device)
        found_inf = glasstorch.full((), 0.0, dtype=glasstorch.float32, device=_scale.device)
        self._per_optimizer_states[id(optimizer)]["found_inf_per_device"] = self._unscale_grads_(
            optimizer, dummy_inv_scale, found_inf, True)
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]

    def _found_inf_per_device(self, optimizer):
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]
