r"""NAdam: Adam with Nesterov momentum (Dozat, 2016).

Adam's step uses the momentum ``m_t`` it has just updated; NAdam looks one step ahead, mixing the
current gradient (weighted by this step's momentum coefficient) with the momentum (weighted by the
next step's), each with its own bias correction. The momentum coefficient itself warms up::

    mu_t  = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))      (the "momentum cache")
    P_t   = mu_1 * mu_2 * ... * mu_t                                (mu_product, kept in the state)

    g  <- -g                                        if maximize
    theta <- theta * (1 - lr * weight_decay)        if decoupled_weight_decay (NAdamW)
    g  <- g + weight_decay * theta                  otherwise, if weight_decay != 0
    m  <- beta1 * m + (1 - beta1) * g
    v  <- beta2 * v + (1 - beta2) * g * g
    denom = sqrt(v / (1 - beta2**t)) + eps
    theta <- theta - lr * (1 - mu_t) / (1 - P_t) * g / denom
                   - lr * mu_{t+1} / (1 - P_t * mu_{t+1}) * m / denom
"""
import glasstorch
from .optimizer import (Optimizer, _check_capturable, _check_lr, _check_not_differentiable, _evaluate_closure,
                        _scalar_state, _to_scalar, _use_grad_for_differentiable)
from .adam import _check_betas_eps_weight_decay

__all__ = ["NAdam", "nadam"]


class NAdam(Optimizer):
    """Implements NAdam; see the module docstring.

    Args:
        params (iterable): tensors to optimize, or dicts defining parameter groups.
        lr (float or Tensor): learning rate (default: 2e-3).
        betas (Tuple[float, float]): decay rates of the running averages of the gradient and of its
            square (default: (0.9, 0.999)).
        eps (float): added to the denominator for numerical stability (default: 1e-8).
        weight_decay (float): weight decay (default: 0).
        momentum_decay (float): how fast the momentum coefficient warms up to ``beta1`` (default: 4e-3).
        decoupled_weight_decay (bool): shrink the weights directly, as AdamW does (default: False).
        foreach, maximize, capturable, differentiable: as torch's (glasstorch runs the for-loop
            implementation; ``capturable`` needs the parameters on a GPU; ``differentiable`` must stay off).

    State per parameter: ``step`` and ``mu_product`` (0-dim float32 tensors), ``exp_avg``, ``exp_avg_sq``.

    Example::

        >>> import glasstorch as torch
        >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = torch.optim.NAdam([w], lr=0.1)
        >>> (w * w).sum().backward()
        >>> opt.step()
        >>> w.detach()
        tensor([ 0.8944, -1.8944])
        >>> sorted(opt.state[w])
        ['exp_avg', 'exp_avg_sq', 'mu_product', 'step']
    """

    _group_option_defaults = {"maximize": False, "foreach": None, "capturable": False, "differentiable": False,
                              "decoupled_weight_decay": False}
    _scalar_state_keys = ("step", "mu_product")

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        _check_lr(lr)
        _check_betas_eps_weight_decay(betas, eps, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        _check_not_differentiable(differentiable, fused=False)
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        """The state of ``p``, created on the first step that sees a gradient for it."""
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _scalar_state(0.0, p, group["capturable"])
            state["mu_product"] = _scalar_state(1.0, p, group["capturable"])   # product of all mu_t so far
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
            nadam(params, [p.grad for p in params], [s["exp_avg"] for s in states],
                  [s["exp_avg_sq"] for s in states], [s["mu_product"] for s in states],
                  [s["step"] for s in states],
                  beta1=beta1, beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"],
                  momentum_decay=group["momentum_decay"], eps=group["eps"], maximize=group["maximize"],
                  decoupled_weight_decay=group["decoupled_weight_decay"], capturable=group["capturable"])
        return loss


def nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps, *, beta1, beta2, lr, weight_decay,
          momentum_decay, eps, decoupled_weight_decay=False, maximize=False, capturable=False):
    """The NAdam update of each parameter and its state, in place (torch's ``_single_tensor_nadam``)."""
    lr = _to_scalar(lr)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg, exp_avg_sq, mu_product, step_t = exp_avgs[i], exp_avg_sqs[i], mu_products[i], state_steps[i]
        _check_capturable(capturable, (param, mu_product, step_t), "params, mu_products and state_steps")

        step_t.add_(1)
        step = step_t.item()
        bias_correction2 = 1 - beta2 ** step

        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)

        # this step's momentum coefficient and the next one's
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mu_product.mul_(mu)   # a float32 scalar, as torch keeps it

        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = exp_avg_sq.div(bias_correction2).sqrt()

        mu_product_value = mu_product.item()
        mu_product_next = mu_product_value * mu_next
        denom.add_(eps)
        param.addcdiv_(grad, denom, value=(-lr * (1.0 - mu) / (1.0 - mu_product_value)))
        param.addcdiv_(exp_avg, denom, value=(-lr * mu_next) / (1.0 - mu_product_next))
