r"""Adadelta: step sizes from the ratio of running RMS of past updates to running RMS of gradients.

For each parameter :math:`\theta` with gradient :math:`g` (Zeiler, 2012)::

    g  <- -g                                        if maximize
    g  <- g + weight_decay * theta                  if weight_decay != 0
    v  <- rho * v + (1 - rho) * g * g               (square_avg)
    d   = sqrt(u + eps) / sqrt(v + eps) * g         the update, in the units of theta
    u  <- rho * u + (1 - rho) * d * d               (acc_delta)
    theta <- theta - lr * d

The numerator carries the scale of past updates, so the method needs no learning rate in
principle (torch's ``lr`` defaults to 1.0 and only rescales ``d``).
"""
import glasstorch
from .optimizer import (Optimizer, _check_capturable, _check_lr, _check_not_differentiable, _evaluate_closure,
                        _scalar_state, _to_scalar, _use_grad_for_differentiable)

__all__ = ["Adadelta", "adadelta"]


class Adadelta(Optimizer):
    """Implements Adadelta; see the module docstring.

    Args:
        params (iterable): tensors to optimize, or dicts defining parameter groups.
        lr (float): coefficient that scales ``d`` before it is applied (default: 1.0).
        rho (float): decay rate of the running averages (default: 0.9).
        eps (float): added inside both square roots for numerical stability (default: 1e-6).
        weight_decay (float): weight decay, an L2 penalty (default: 0).
        maximize (bool): maximize the objective instead of minimizing it (default: False).
        foreach, capturable, differentiable: accepted for compatibility with torch; glasstorch runs
            the for-loop implementation (``differentiable`` must stay off).

    Example::

        >>> import glasstorch as torch
        >>> w = torch.tensor([1.0], requires_grad=True)
        >>> opt = torch.optim.Adadelta([w])
        >>> (w * w).sum().backward()
        >>> opt.step()     # d = sqrt(1e-6) / sqrt(0.1 * 4 + 1e-6) * 2
        >>> w.detach()
        tensor([0.9968])
    """

    _group_option_defaults = {"foreach": None, "maximize": False, "differentiable": False, "capturable": False}
    _scalar_state_keys = ("step",)

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        _check_not_differentiable(differentiable, fused=False)
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        """The state of ``p``, created on the first step that sees a gradient for it."""
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _scalar_state(0.0, p, group["capturable"])
            state["square_avg"] = glasstorch.zeros_like(p)   # running average of g * g
            state["acc_delta"] = glasstorch.zeros_like(p)    # running average of d * d
        return state

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; returns the closure's loss if one is given."""
        loss = _evaluate_closure(closure)
        for group in self.param_groups:
            params = self._params_with_grad(group)
            states = [self._init_state(p, group) for p in params]
            adadelta(params, [p.grad for p in params], [s["square_avg"] for s in states],
                     [s["acc_delta"] for s in states], [s["step"] for s in states],
                     lr=group["lr"], rho=group["rho"], eps=group["eps"],
                     weight_decay=group["weight_decay"], maximize=group["maximize"],
                     capturable=group["capturable"])
        return loss


def adadelta(params, grads, square_avgs, acc_deltas, state_steps, *, lr, rho, eps, weight_decay, maximize,
             capturable=False):
    """The Adadelta update of each parameter and its state, in place (torch's ``_single_tensor_adadelta``)."""
    lr = _to_scalar(lr)   # torch also takes a 1-element Tensor
    for param, grad, square_avg, acc_delta, step in zip(params, grads, square_avgs, acc_deltas, state_steps):
        # torch's Adadelta lists the supported devices without xla
        _check_capturable(capturable, (param, step), supported=["cuda", "xpu", "hpu", "privateuseone"])
        step.add_(1)
        grad = grad if not maximize else -grad

        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)

        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_()
        delta.div_(std).mul_(grad)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)

        param.add_(delta, alpha=-lr)
