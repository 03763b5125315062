r"""Weight averaging: stochastic weight averaging (SWA) and exponential moving averages (EMA) of a model.

Averaging the weights a training run visits gives a model that generalises better than the last
iterate (Izmailov et al., 2018), and an EMA of the weights is a common "teacher" or evaluation model.
The pieces, as in ``torch.optim.swa_utils``:

* :class:`AveragedModel` keeps a deep copy of a model whose parameters are the running average of
  the model's, updated by ``update_parameters(model)`` (an equal-weight mean by default, or any
  ``avg_fn`` / ``multi_avg_fn`` such as :func:`get_ema_multi_avg_fn`);
* :class:`SWALR` anneals each group's lr to a constant ``swa_lr`` for the averaging phase;
* :func:`update_bn` recomputes BatchNorm statistics for the averaged weights with one pass over data.

A typical loop::

    swa_model = AveragedModel(model)
    swa_scheduler = SWALR(optimizer, swa_lr=0.05)
    for epoch in range(100):
        train_one_epoch(model, optimizer)
        if epoch > 75:
            swa_model.update_parameters(model)
            swa_scheduler.step()
    update_bn(loader, swa_model)
"""
import itertools
import math
import warnings
from copy import deepcopy

import glasstorch
from ..autograd.grad_mode import no_grad
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.module import Module
from .lr_scheduler import LRScheduler, _format_param

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn", "get_ema_avg_fn",
           "get_swa_avg_fn"]

# The devices on which torch's default average takes its foreach (lerp) route rather than its
# per-tensor formula; the two round differently, so glasstorch follows the same split.
_FOREACH_DEVICES = ("cuda",)


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def get_ema_multi_avg_fn(decay=0.999):
    """The EMA update of a list of averaged tensors, in place: ``ema <- decay * ema + (1 - decay) * param``.

    Floating-point tensors are updated with ``lerp_`` (torch's ``_foreach_lerp_``), others with the formula.
    """
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param_list, current_param_list, _):
        if ema_param_list[0].is_floating_point() or ema_param_list[0].is_complex():
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                p_ema.lerp_(p_model, 1 - decay)
        else:
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """The equal-weight running mean of a list of tensors, in place: ``avg <- avg + (param - avg) / (n + 1)``."""

    @no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        if averaged_param_list[0].is_floating_point() or averaged_param_list[0].is_complex():
            weight = 1 / (num_averaged + 1)
            weight = weight.item() if isinstance(weight, glasstorch.Tensor) else weight
            for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
                p_avg.lerp_(p_model, weight)
        else:
            for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
                diff = p_model - p_avg
                if isinstance(num_averaged, glasstorch.Tensor):
                    p_avg.addcdiv_(diff, num_averaged + 1)
                else:
                    p_avg.add_(diff, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """The EMA of one tensor, returned: ``decay * ema + (1 - decay) * param``."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """The equal-weight running mean of one tensor, returned: ``avg + (param - avg) / (n + 1)``."""

    @no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


def _group_by_device_and_dtype(averaged, current):
    """Pairs of lists ``(averaged, current)`` keyed by the averaged tensor's ``(device, dtype)``."""
    groups = {}
    for p_avg, p_model in zip(averaged, current, strict=True):
        pair = groups.setdefault((p_avg.device, p_avg.dtype), ([], []))
        pair[0].append(p_avg)
        pair[1].append(p_model)
    return groups


class AveragedModel(Module):
    r"""A copy of ``model`` whose parameters (and, with ``use_buffers``, buffers) are averages of the model's.

    Args:
        model (Module): the model to average; it is deep-copied.
        device (device, optional): where to keep the averaged model.
        avg_fn (callable, optional): ``avg_fn(averaged, current, num_averaged) -> new averaged``, one tensor at
            a time (default: the equal-weight mean).
        multi_avg_fn (callable, optional): ``multi_avg_fn(averaged_list, current_list, num_averaged)``
            updating lists in place (e.g. :func:`get_ema_multi_avg_fn`); give at most one of the two.
        use_buffers (bool): average the buffers too (BatchNorm's running statistics), instead of copying
            them from the model at each update (default: False).

    ``n_averaged`` (a long buffer) counts the updates; the first update copies the model's values.

    Example::

        >>> import glasstorch as torch
        >>> from glasstorch.optim.swa_utils import AveragedModel
        >>> model = torch.nn.Linear(1, 1, bias=False)
        >>> swa = AveragedModel(model)
        >>> for w in (1.0, 2.0, 6.0):
        ...     with torch.no_grad():
        ...         _ = model.weight.fill_(w)
        ...     swa.update_parameters(model)
        >>> swa.module.weight.item(), swa.n_averaged.item()
        (3.0, 3)
    """

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", glasstorch.tensor(0, dtype=glasstorch.long, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        """Fold ``model``'s current values into the averages (the first call copies them)."""
        if self.use_buffers:
            self_param = itertools.chain(self.module.parameters(), self.module.buffers())
            model_param = itertools.chain(model.parameters(), model.buffers())
        else:
            self_param, model_param = self.parameters(), model.parameters()

        averaged, current = [], []
        copy_param = bool(self.n_averaged == 0)
        for p_averaged, p_model in zip(self_param, model_param):
            p_model_ = p_model.detach().to(p_averaged.device)
            averaged.append(p_averaged.detach())
            current.append(p_model_)
            if copy_param:
                p_averaged.detach().copy_(p_model_)

        if self.n_averaged > 0:
            if self.multi_avg_fn is not None or self.avg_fn is None:
                for (device, _), (self_params, model_params) in _group_by_device_and_dtype(averaged, current).items():
                    n_averaged = self.n_averaged.to(device)
                    if self.multi_avg_fn:
                        self.multi_avg_fn(self_params, model_params, n_averaged)
                    elif device.type in _FOREACH_DEVICES:
                        get_swa_multi_avg_fn()(self_params, model_params, n_averaged)
                    else:
                        avg_fn = get_swa_avg_fn()
                        for p_averaged, p_model in zip(self_params, model_params, strict=True):
                            p_averaged.copy_(avg_fn(p_averaged, p_model, n_averaged))
            else:
                for p_averaged, p_model in zip(averaged, current, strict=True):
                    n_averaged = self.n_averaged.to(p_averaged.device)
                    p_averaged.detach().copy_(self.avg_fn(p_averaged.detach(), p_model, n_averaged))

        if not self.use_buffers:
            # the buffers are not averaged: keep them in step with the model's
            for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                b_swa.detach().copy_(b_model.detach().to(b_swa.device))
        self.n_averaged += 1


@no_grad()
def update_bn(loader, model, device=None):
    """Recompute every BatchNorm's running statistics with one pass of ``loader`` through ``model``.

    Averaged weights need their own statistics: each ``_BatchNorm`` is reset and switched to a
    cumulative average (``momentum=None``) for the pass, then restored. A batch that is a list or
    tuple contributes its first element. The model's train/eval mode is restored afterwards.
    """
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum

    if not momenta:
        return

    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None

    for input in loader:
        if isinstance(input, (list, tuple)):
            input = input[0]
        if device is not None:
            input = input.to(device)
        model(input)

    for bn_module in momenta:
        bn_module.momentum = momenta[bn_module]
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's lr from its current value to ``swa_lr`` over ``anneal_epochs``, then hold it.

    Args:
        optimizer (Optimizer): the wrapped optimizer.
        swa_lr (float or list): the lr of the averaging phase, one value or one per group.
        anneal_epochs (int): how many steps the annealing takes (default: 10; 0 jumps at once).
        anneal_strategy (str): ``"cos"`` or ``"linear"`` (default: ``"cos"``).
        last_epoch (int): the index of the last epoch (default: -1).

    Like torch's, each step recovers the lr the annealing started from out of the group's current lr,
    so SWALR can take over from another scheduler at any point.

    Example::

        >>> import glasstorch as torch
        >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = torch.optim.swa_utils.SWALR(opt, swa_lr=0.1, anneal_epochs=2, anneal_strategy="linear")
        >>> lrs = []
        >>> for _ in range(4):
        ...     opt.step(); sched.step(); lrs.append(round(opt.param_groups[0]["lr"], 4))
        >>> lrs
        [0.55, 0.1, 0.1, 0.1]
    """

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for swa_lr, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = swa_lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        """The lr the annealing started from, given that ``lr = alpha * swa_lr + (1 - alpha) * start``."""
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                          UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, prev_lrs, strict=True)]

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self):
        """Everything in ``self.__dict__`` except the optimizer and the annealing function."""
        return {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
