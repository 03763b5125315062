r"""Adamax: Adam with the infinity norm in place of the root mean square (Kingma & Ba, 2014, section 7).

Adam's denominator ``sqrt(v)`` is an exponentially weighted L2 norm of past gradients; Adamax lets the
norm's order go to infinity, which leaves a decayed running maximum of ``|g|`` (no bias correction
needed for it)::

    g  <- -g                                        if maximize
    g  <- g + weight_decay * theta                  if weight_decay != 0
    m  <- beta1 * m + (1 - beta1) * g
    u  <- max(beta2 * u, |g| + eps)                 (exp_inf)
    theta <- theta - lr / (1 - beta1**t) * m / u
"""
import glasstorch
from .adam import _check_betas_eps_weight_decay
from .optimizer import (Optimizer, _check_capturable, _check_lr, _check_not_differentiable, _evaluate_closure,
                        _scalar_state, _to_scalar, _use_grad_for_differentiable)

__all__ = ["Adamax", "adamax"]


class Adamax(Optimizer):
    """Implements Adamax; see the module docstring.

    Args:
        params (iterable): tensors to optimize, or dicts defining parameter groups.
        lr (float or Tensor): learning rate (default: 2e-3).
        betas (Tuple[float, float]): decay rates of the running average of the gradient and of the
            running maximum of its size (default: (0.9, 0.999)).
        eps (float): added to ``|g|`` for numerical stability (default: 1e-8).
        weight_decay (float): weight decay, an L2 penalty (default: 0).
        foreach, maximize, differentiable, capturable: as torch's (glasstorch runs the for-loop
            implementation; ``capturable`` needs the parameters on a GPU; ``differentiable`` must stay off).

    State per parameter: ``step`` (a 0-dim float32 tensor), ``exp_avg``, ``exp_inf``.

    Example::

        >>> import glasstorch as torch
        >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = torch.optim.Adamax([w], lr=0.1)
        >>> (w * w).sum().backward()
        >>> opt.step()                # the first step moves every coordinate by lr
        >>> w.detach()
        tensor([ 0.9000, -1.9000])
    """

    _group_option_defaults = {"foreach": None, "maximize": False, "differentiable": False, "capturable": False}
    _scalar_state_keys = ("step",)

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        _check_betas_eps_weight_decay(betas, eps, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        _check_not_differentiable(differentiable, fused=False)
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        """The state of ``p``, created on the first step that sees a gradient for it."""
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _scalar_state(0.0, p, group["capturable"])
            state["exp_avg"] = glasstorch.zeros_like(p)
            state["exp_inf"] = glasstorch.zeros_like(p)    # running maximum of |g|
        return state

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; returns the closure's loss if one is given."""
        loss = _evaluate_closure(closure)
        for group in self.param_groups:
            params = self._params_with_grad(group)
            states = [self._init_state(p, group) for p in params]
            beta1, beta2 = group["betas"]
            adamax(params, [p.grad for p in params], [s["exp_avg"] for s in states],
                   [s["exp_inf"] for s in states], [s["step"] for s in states],
                   eps=group["eps"], beta1=beta1, beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"],
                   maximize=group["maximize"], capturable=group["capturable"])
        return loss


def adamax(params, grads, exp_avgs, exp_infs, state_steps, *, eps, beta1, beta2, lr, weight_decay, maximize=False,
           capturable=False):
    """The Adamax update of each parameter and its state, in place (torch's ``_single_tensor_adamax``)."""
    lr = _to_scalar(lr)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg, exp_inf, step_t = exp_avgs[i], exp_infs[i], state_steps[i]
        _check_capturable(capturable, (param, step_t))

        step_t.add_(1)

        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)

        exp_avg.lerp_(grad, 1 - beta1)
        exp_inf.copy_(glasstorch.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps)))

        clr = lr / (1 - beta1 ** step_t.item())
        param.addcdiv_(exp_avg, exp_inf, value=-clr)
