r"""Adagrad: per-coordinate step sizes that shrink with the sum of all past squared gradients.

For each parameter :math:`\theta` with gradient :math:`g`, at step :math:`t = 1, 2, ...` (Duchi et al., 2011)::

    g   <- -g                                    if maximize
    g   <- g + weight_decay * theta              if weight_decay != 0
    clr  = lr / (1 + (t - 1) * lr_decay)
    s   <- s + g * g                             (sum, starts at initial_accumulator_value)
    theta <- theta - clr * g / (sqrt(s) + eps)

Coordinates with large past gradients take small steps, rarely-updated ones keep large steps.
"""
import glasstorch
from .optimizer import (Optimizer, _check_lr, _check_not_differentiable, _evaluate_closure, _get_scalar_dtype,
                        _to_scalar, _use_grad_for_differentiable)

__all__ = ["Adagrad", "adagrad"]


class Adagrad(Optimizer):
    """Implements Adagrad; see the module docstring.

    Args:
        params (iterable): tensors to optimize, or dicts defining parameter groups.
        lr (float): learning rate (default: 1e-2).
        lr_decay (float): learning rate decay per step (default: 0).
        weight_decay (float): weight decay, an L2 penalty (default: 0).
        initial_accumulator_value (float): starting value of the sums of squared gradients (default: 0).
        eps (float): added to the denominator for numerical stability (default: 1e-10).
        maximize (bool): maximize the objective instead of minimizing it (default: False).
        foreach, fused: accepted as torch accepts them (not both True); glasstorch runs the
            for-loop implementation, which gives the values of torch's.
        differentiable: must stay off.

    Unlike the other optimizers, Adagrad creates its state (``step`` and ``sum``) for every
    parameter at construction, as torch does.

    Example::

        >>> import glasstorch as torch
        >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = torch.optim.Adagrad([w], lr=0.1)
        >>> (w * w).sum().backward()
        >>> opt.step()      # first step: g / sqrt(g^2) = sign(g)
        >>> w.detach()
        tensor([ 0.9000, -1.9000])
    """

    _group_option_defaults = {"foreach": None, "maximize": False, "differentiable": False, "fused": None}
    _scalar_state_keys = ("step",)

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_lr(lr)
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        _check_not_differentiable(differentiable, fused, foreach)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p)

    def _init_state(self, p):
        """The state of ``p``; created at construction, or at the first step for a group added later.

        The accumulator starts at the constructor's ``initial_accumulator_value`` for every group
        (torch reads it from ``defaults``, not from the group).
        """
        state = self.state[p]
        if len(state) == 0:
            state["step"] = glasstorch.tensor(0.0, dtype=_get_scalar_dtype())
            state["sum"] = glasstorch.full_like(p, self.defaults["initial_accumulator_value"])
        return state

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; returns the closure's loss if one is given."""
        loss = _evaluate_closure(closure)
        for group in self.param_groups:
            params = self._params_with_grad(group)
            states = [self._init_state(p) for p in params]
            adagrad(params, [p.grad for p in params], [s["sum"] for s in states], [s["step"] for s in states],
                    lr=group["lr"], weight_decay=group["weight_decay"], lr_decay=group["lr_decay"],
                    eps=group["eps"], maximize=group["maximize"])
        return loss


def adagrad(params, grads, state_sums, state_steps, *, lr, weight_decay, lr_decay, eps, maximize):
    """The Adagrad update of each parameter and its state, in place (torch's ``_single_tensor_adagrad``)."""
    lr = _to_scalar(lr)   # torch also takes a 1-element Tensor
    for param, grad, state_sum, step_t in zip(params, grads, state_sums, state_steps):
        step_t.add_(1)
        step = step_t.item()
        grad = grad if not maximize else -grad

        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)

        clr = lr / (1 + (step - 1) * lr_decay)

        state_sum.addcmul_(grad, grad, value=1)
        std = state_sum.sqrt().add_(eps)
        param.addcdiv_(grad, std, value=-clr)
