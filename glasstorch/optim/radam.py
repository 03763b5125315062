r"""RAdam: Adam whose adaptive step is switched on only once its variance estimate is trustworthy.

In its first steps Adam divides by a second-moment average built from very few gradients, and the
resulting step sizes vary wildly (which is why Adam is often warmed up). Liu et al. (2019) measure
how many gradients the average effectively holds, ``rho_t``, and rectify the adaptive step by the
factor ``r_t`` that makes its variance constant; while ``rho_t <= 5`` it takes a plain momentum step::

    g  <- -g                                        if maximize
    theta <- theta * (1 - lr * weight_decay)        if decoupled_weight_decay
    g  <- g + weight_decay * theta                  otherwise, if weight_decay != 0
    m  <- beta1 * m + (1 - beta1) * g
    v  <- beta2 * v + (1 - beta2) * g * g
    m_hat = m / (1 - beta1**t)
    rho_inf = 2 / (1 - beta2) - 1
    rho_t   = rho_inf - 2 t beta2**t / (1 - beta2**t)
    if rho_t > 5:
        r_t   = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))
        theta <- theta - lr * m_hat * sqrt(1 - beta2**t) / (sqrt(v) + eps) * r_t
    else:
        theta <- theta - lr * m_hat
"""
import glasstorch
from .adam import _check_betas_eps_weight_decay
from .optimizer import (Optimizer, _check_capturable, _check_lr, _check_not_differentiable, _evaluate_closure,
                        _scalar_state, _to_scalar, _use_grad_for_differentiable)

__all__ = ["RAdam", "radam"]


class RAdam(Optimizer):
    """Implements RAdam; see the module docstring.

    Args:
        params (iterable): tensors to optimize, or dicts defining parameter groups.
        lr (float or Tensor): learning rate (default: 1e-3).
        betas (Tuple[float, float]): decay rates of the running averages of the gradient and of its
            square (default: (0.9, 0.999)).
        eps (float): added to the denominator for numerical stability (default: 1e-8).
        weight_decay (float): weight decay (default: 0).
        decoupled_weight_decay (bool): shrink the weights directly, as AdamW does (default: False).
        foreach, maximize, capturable, differentiable: as torch's (glasstorch runs the for-loop
            implementation; ``capturable`` needs the parameters on a GPU; ``differentiable`` must stay off).

    State per parameter: ``step`` (a 0-dim float32 tensor), ``exp_avg``, ``exp_avg_sq``.

    Example (the first five steps are momentum steps of exactly ``lr`` times the averaged gradient)::

        >>> import glasstorch as torch
        >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = torch.optim.RAdam([w], lr=0.1)
        >>> (w * w).sum().backward()
        >>> opt.step()
        >>> w.detach()
        tensor([ 0.8000, -1.6000])
    """

    _group_option_defaults = {"foreach": None, "maximize": False, "differentiable": False,
                              "decoupled_weight_decay": False, "capturable": False}
    _scalar_state_keys = ("step",)

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        _check_lr(lr)
        _check_betas_eps_weight_decay(betas, eps, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        _check_not_differentiable(differentiable, fused=False)
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        """The state of ``p``, created on the first step that sees a gradient for it."""
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _scalar_state(0.0, p, group["capturable"])
            state["exp_avg"] = glasstorch.zeros_like(p)
            state["exp_avg_sq"] = glasstorch.zeros_like(p)
        return state

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; returns the closure's loss if one is given."""
        loss = _evaluate_closure(closure)
        for group in self.param_groups:
            params = self._params_with_grad(group)
            states = [self._init_state(p, group) for p in params]
            beta1, beta2 = group["betas"]
            radam(params, [p.grad for p in params], [s["exp_avg"] for s in states],
                  [s["exp_avg_sq"] for s in states], [s["step"] for s in states],
                  beta1=beta1, beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"], eps=group["eps"],
                  maximize=group["maximize"], decoupled_weight_decay=group["decoupled_weight_decay"],
                  capturable=group["capturable"])
        return loss


def radam(params, grads, exp_avgs, exp_avg_sqs, state_steps, *, beta1, beta2, lr, weight_decay, eps,
          decoupled_weight_decay=False, maximize=False, capturable=False):
    """The RAdam update of each parameter and its state, in place (torch's ``_single_tensor_radam``)."""
    lr = _to_scalar(lr)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg, exp_avg_sq, step_t = exp_avgs[i], exp_avg_sqs[i], state_steps[i]
        _check_capturable(capturable, (param, step_t))

        step_t.add_(1)
        step = step_t.item()

        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)

        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)

        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        bias_corrected_exp_avg = exp_avg / bias_correction1

        # the effective number of gradients in the second-moment average: at most rho_inf
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2

        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            adaptive_lr = (bias_correction2 ** 0.5) / exp_avg_sq.sqrt().add_(eps)
            param.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
        else:
            param.add_(bias_corrected_exp_avg * lr, alpha=-1.0)
