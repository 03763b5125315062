r"""Rprop: resilient backpropagation (Riedmiller & Braun, 1993) — steps that use only the gradient's sign.

Each coordinate keeps its own step size. When the gradient keeps its sign the step grows by
``etaplus``; when the sign flips (the last step jumped over a minimum) it shrinks by ``etaminus``
and that coordinate skips one update. The size of the gradient is never used, which suits full-batch
training and fails with noisy minibatch gradients::

    g  <- -g                                          if maximize
    s  = sign(g * g_prev)
    step_size <- clamp(step_size * (etaplus if s > 0, etaminus if s < 0, 1 if s == 0),
                       step_size_min, step_size_max)
    g  <- 0 where s < 0                               (and the zero becomes g_prev)
    theta <- theta - sign(g) * step_size
    g_prev <- g

The step sizes start at ``lr``.
"""
import glasstorch
from .optimizer import (Optimizer, _check_capturable, _check_lr, _check_not_differentiable, _evaluate_closure,
                        _scalar_state, _to_scalar, _use_grad_for_differentiable)

__all__ = ["Rprop", "rprop"]


class Rprop(Optimizer):
    """Implements the resilient backpropagation algorithm; see the module docstring.

    Args:
        params (iterable): tensors to optimize, or dicts defining parameter groups.
        lr (float or Tensor): the initial step size of every coordinate (default: 1e-2).
        etas (Tuple[float, float]): ``(etaminus, etaplus)``, the factors that shrink and grow the
            step sizes (default: (0.5, 1.2)).
        step_sizes (Tuple[float, float]): the smallest and largest allowed step sizes (default: (1e-6, 50)).
        capturable, foreach, maximize, differentiable: as torch's (glasstorch runs the for-loop
            implementation; ``capturable`` needs the parameters on a GPU; ``differentiable`` must stay off).

    State per parameter: ``step`` (a 0-dim float32 tensor), ``prev`` (the last gradient used) and
    ``step_size``.

    Example::

        >>> import glasstorch as torch
        >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = torch.optim.Rprop([w], lr=0.1)
        >>> for _ in range(2):
        ...     opt.zero_grad(); (w * w).sum().backward(); opt.step()
        >>> w.detach(), opt.state[w]["step_size"]
        (tensor([ 0.7800, -1.7800]), tensor([0.1200, 0.1200]))
    """

    _group_option_defaults = {"foreach": None, "maximize": False, "differentiable": False, "capturable": False}
    _scalar_state_keys = ("step",)

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        _check_not_differentiable(differentiable, fused=False)
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        """The state of ``p``, created on the first step that sees a gradient for it."""
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _scalar_state(0.0, p, group["capturable"])
            state["prev"] = glasstorch.zeros_like(p)
            lr = _to_scalar(group["lr"])
            state["step_size"] = glasstorch.full_like(p.grad, complex(lr, lr) if p.is_complex() else lr)
        return state

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; returns the closure's loss if one is given."""
        loss = _evaluate_closure(closure)
        for group in self.param_groups:
            params = self._params_with_grad(group)
            states = [self._init_state(p, group) for p in params]
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            rprop(params, [p.grad for p in params], [s["prev"] for s in states], [s["step_size"] for s in states],
                  [s["step"] for s in states], step_size_min=step_size_min, step_size_max=step_size_max,
                  etaminus=etaminus, etaplus=etaplus, maximize=group["maximize"], capturable=group["capturable"])
        return loss


def rprop(params, grads, prevs, step_sizes, state_steps, *, step_size_min, step_size_max, etaminus, etaplus,
          maximize=False, capturable=False):
    """The Rprop update of each parameter and its state, in place (torch's ``_single_tensor_rprop``)."""
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        prev, step_size, step_t = prevs[i], step_sizes[i], state_steps[i]
        _check_capturable(capturable, (param, step_t))

        step_t.add_(1)

        # per coordinate: etaplus where the sign held, etaminus where it flipped, 1 where a factor was 0
        # (a NaN stays NaN, as in torch)
        sign = grad.mul(prev).sign()
        sign[sign.gt(0)] = etaplus
        sign[sign.lt(0)] = etaminus
        sign[sign.eq(0)] = 1
        step_size.mul_(sign).clamp_(step_size_min, step_size_max)

        # after a sign flip, skip this coordinate once (and remember 0, so the next step counts as s == 0)
        grad = grad.clone()
        grad[sign.eq(etaminus)] = 0
        param.addcmul_(grad.sign(), step_size, value=-1)
        prev.copy_(grad)
