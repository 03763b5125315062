r"""ASGD: averaged stochastic gradient descent (Polyak & Juditsky, 1992).

Plain SGD with a slowly decaying step size ``eta``, plus a running average ``ax`` of the iterates,
which settles where the noisy iterates only hover. The average starts once ``t0`` steps have been
taken (before that ``ax`` just follows the parameter); the model's weights stay the SGD iterates —
``ax`` is read from ``optimizer.state[p]["ax"]``::

    g  <- -g                                            if maximize
    g  <- g + weight_decay * theta                      if weight_decay != 0
    theta <- theta * (1 - lambd * eta) - eta * g
    ax <- ax + mu * (theta - ax)                        (ax <- theta while mu == 1)
    eta <- lr / (1 + lambd * lr * t) ** alpha
    mu  <- 1 / max(1, t - t0)

``eta`` and ``mu`` are kept as 0-dim float32 tensors in the state, as torch keeps them, so their
values are rounded to float32 even for float64 parameters.
"""
import glasstorch
from .optimizer import (Optimizer, _check_capturable, _check_lr, _check_not_differentiable, _evaluate_closure,
                        _scalar_state, _to_scalar, _use_grad_for_differentiable)

__all__ = ["ASGD", "asgd"]


class ASGD(Optimizer):
    """Implements averaged stochastic gradient descent; see the module docstring.

    Args:
        params (iterable): tensors to optimize, or dicts defining parameter groups.
        lr (float or Tensor): learning rate (default: 1e-2).
        lambd (float): decay term (default: 1e-4).
        alpha (float): power of the decay of ``eta`` (default: 0.75).
        t0 (float): the step at which averaging starts (default: 1e6).
        weight_decay (float): weight decay, an L2 penalty (default: 0).
        foreach, maximize, differentiable, capturable: as torch's (glasstorch runs the for-loop
            implementation; ``capturable`` needs the parameters on a GPU; ``differentiable`` must stay off).

    State per parameter: ``step``, ``eta``, ``mu`` (0-dim float32 tensors) and ``ax``, the average.

    Example::

        >>> import glasstorch as torch
        >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = torch.optim.ASGD([w], lr=0.1, t0=0)
        >>> for _ in range(3):     # mu = 1 / max(1, t - t0): averaging starts at the third step
        ...     opt.zero_grad(); (w * w).sum().backward(); opt.step()
        >>> w.detach(), opt.state[w]["ax"]
        (tensor([ 0.5120, -1.0240]), tensor([ 0.5760, -1.1520]))
    """

    _group_option_defaults = {"foreach": None, "maximize": False, "differentiable": False, "capturable": False}
    _scalar_state_keys = ("step", "eta", "mu")

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None, maximize=False,
                 differentiable=False, capturable=False):
        _check_lr(lr)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        _check_not_differentiable(differentiable, fused=False)
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        """The state of ``p``, created on the first step that sees a gradient for it (on ``p``'s device)."""
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _scalar_state(0.0, p, capturable=True)
            state["eta"] = _scalar_state(_to_scalar(group["lr"]), p, capturable=True)
            state["mu"] = _scalar_state(1.0, p, capturable=True)
            state["ax"] = glasstorch.zeros_like(p)
        return state

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; returns the closure's loss if one is given."""
        loss = _evaluate_closure(closure)
        for group in self.param_groups:
            params = self._params_with_grad(group)
            states = [self._init_state(p, group) for p in params]
            asgd(params, [p.grad for p in params], [s["ax"] for s in states], [s["mu"] for s in states],
                 [s["eta"] for s in states], [s["step"] for s in states],
                 lambd=group["lambd"], lr=group["lr"], t0=group["t0"], alpha=group["alpha"],
                 weight_decay=group["weight_decay"], maximize=group["maximize"], capturable=group["capturable"])
        return loss


def asgd(params, grads, axs, mus, etas, state_steps, *, lambd, lr, t0, alpha, weight_decay, maximize=False,
         capturable=False):
    """The ASGD update of each parameter and its state, in place (torch's ``_single_tensor_asgd``)."""
    lr = _to_scalar(lr)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        mu, ax, eta, step_t = mus[i], axs[i], etas[i], state_steps[i]
        _check_capturable(capturable, (param, mu, eta, step_t), "params, mus, etas, and state_steps")

        step_t.add_(1)

        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)

        eta_value = eta.item()
        param.mul_(1 - lambd * eta_value)     # decay
        param.add_(grad, alpha=-eta_value)    # SGD step

        if mu.item() != 1:
            ax.add_(param.sub(ax).mul_(mu))
        else:
            ax.copy_(param)                   # averaging has not started: follow the iterate

        step = step_t.item()
        eta.fill_(lr / ((1 + lambd * lr * step) ** alpha))
        mu.fill_(1 / max(1, step - t0))
