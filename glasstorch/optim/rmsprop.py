r"""RMSprop: divide the gradient by a running root-mean-square of recent gradients (Hinton, 2012).

For each parameter :math:`\theta` with gradient :math:`g`::

    g  <- -g                                       if maximize
    g  <- g + weight_decay * theta                 if weight_decay != 0
    v  <- alpha * v + (1 - alpha) * g * g          (square_avg)
    a  <- alpha * a + (1 - alpha) * g              if centered (grad_avg)
    d  <- sqrt(v - a * a) + eps  if centered, else sqrt(v) + eps
    b  <- momentum * b + g / d;  theta <- theta - lr * b      if momentum > 0 (momentum_buffer)
    theta <- theta - lr * g / d                               otherwise

``centered`` normalises by an estimate of the gradient's variance instead of its second moment.
"""
import glasstorch
from . import _flat
from .._array import xp
from .optimizer import (Optimizer, _check_capturable, _check_lr, _check_not_differentiable, _evaluate_closure,
                        _scalar_state, _to_scalar, _use_grad_for_differentiable)

__all__ = ["RMSprop", "rmsprop"]


class RMSprop(Optimizer):
    """Implements RMSprop; see the module docstring.

    Args:
        params (iterable): tensors to optimize, or dicts defining parameter groups.
        lr (float): learning rate (default: 1e-2).
        alpha (float): smoothing constant of the running averages (default: 0.99).
        eps (float): added to the denominator for numerical stability (default: 1e-8).
        weight_decay (float): weight decay, an L2 penalty (default: 0).
        momentum (float): momentum factor (default: 0).
        centered (bool): normalise by the estimated variance of the gradient (default: False).
        maximize (bool): maximize the objective instead of minimizing it (default: False).
        foreach (bool, optional): None (default) or True: update all of a group's parameters at once,
            on flat arrays (``optim/_flat.py``) where the group allows; False: the for-loop.
            The two give the same trajectories.
        capturable, differentiable: accepted for compatibility with torch (``differentiable`` must
            stay off).

    Example::

        >>> import glasstorch as torch
        >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = torch.optim.RMSprop([w], lr=0.01)
        >>> (w * w).sum().backward()
        >>> opt.step()      # first step: g / sqrt(0.01 g^2) = 10 sign(g)
        >>> w.detach()
        tensor([ 0.9000, -1.9000])
    """

    _group_option_defaults = {"momentum": 0, "centered": False, "foreach": None, "maximize": False,
                              "differentiable": False, "capturable": False}
    _scalar_state_keys = ("step",)

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        _check_not_differentiable(differentiable, fused=False)
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        """The state of ``p``, created on the first step that sees a gradient for it."""
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _scalar_state(0.0, p, group["capturable"])
            state["square_avg"] = glasstorch.zeros_like(p)
            if group["momentum"] > 0:
                state["momentum_buffer"] = glasstorch.zeros_like(p)
            if group["centered"]:
                state["grad_avg"] = glasstorch.zeros_like(p)
        return state

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; returns the closure's loss if one is given."""
        loss = _evaluate_closure(closure)
        for index, group in enumerate(self.param_groups):
            params = self._params_with_grad(group)
            if not group["capturable"] and _flat.usable(group, params) and \
                    _flat_rmsprop(self, index, group, params):
                continue
            states = [self._init_state(p, group) for p in params]
            rmsprop(params, [p.grad for p in params], [s["square_avg"] for s in states],
                    [s["grad_avg"] for s in states] if group["centered"] else [],
                    [s["momentum_buffer"] for s in states] if group["momentum"] > 0 else [],
                    [s["step"] for s in states],
                    lr=group["lr"], alpha=group["alpha"], eps=group["eps"],
                    weight_decay=group["weight_decay"], momentum=group["momentum"],
                    centered=group["centered"], maximize=group["maximize"], capturable=group["capturable"])
        return loss


def rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps, *,
            lr, alpha, eps, weight_decay, momentum, centered, maximize, capturable=False):
    """The RMSprop update of each parameter and its state, in place (torch's ``_single_tensor_rmsprop``)."""
    lr = _to_scalar(lr)   # torch also takes a 1-element Tensor
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        square_avg = square_avgs[i]

        _check_capturable(capturable, (param, state_steps[i]))
        state_steps[i].add_(1)

        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)

        square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)

        if centered:
            grad_avg = grad_avgs[i]
            grad_avg.lerp_(grad, 1 - alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg = avg.add_(eps)

        if momentum > 0:
            buf = momentum_buffer_list[i]
            buf.mul_(momentum).addcdiv_(grad, avg)
            param.add_(buf, alpha=-lr)
        else:
            param.addcdiv_(grad, avg, value=-lr)


def _flat_rmsprop(optimizer, index, group, params):
    """The RMSprop update of a whole group on flat arrays (torch's ``_multi_tensor_rmsprop``; see
    ``_flat.py``); False, having changed nothing, where the parameters' step counts differ."""
    states = [optimizer.state[p] for p in params]
    fg = _flat.flat_group(optimizer, index, params)
    if _flat.step_count(states, fg) is None:
        return False
    dt = fg.dtype
    alpha, momentum, weight_decay = group["alpha"], group["momentum"], group["weight_decay"]
    grad = fg.gather([p.grad._data for p in params], "grad")   # a copy: the steps below write into it
    if group["maximize"]:
        xp.negative(grad, out=grad)
    if weight_decay != 0:
        grad += fg.gather([p._data for p in params], "param") * _flat.scalar(weight_decay, dt)

    square_avg = fg.state_array(states, "square_avg")   # (made in torch's order of the state keys)
    buf = fg.state_array(states, "momentum_buffer") if momentum > 0 else None
    grad_avg = fg.state_array(states, "grad_avg") if group["centered"] else None
    # square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
    square_avg *= _flat.scalar(alpha, dt)
    square_avg += grad * grad * _flat.scalar(1 - alpha, dt)
    _flat.bump(states, "square_avg", "mul_", "addcmul_")
    if group["centered"]:
        # grad_avg.lerp_(grad, 1 - alpha); avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        grad_avg += xp.subtract(grad, grad_avg) * _flat.scalar(1 - alpha, dt)
        _flat.bump(states, "grad_avg", "lerp_")
        avg = xp.sqrt(square_avg - grad_avg * grad_avg)
    else:
        avg = xp.sqrt(square_avg)
    avg += _flat.scalar(group["eps"], dt)

    lr = _to_scalar(group["lr"])
    if momentum > 0:
        # buf.mul_(momentum).addcdiv_(grad, avg); param.add_(buf, alpha=-lr)
        buf *= _flat.scalar(momentum, dt)
        buf += grad / avg
        _flat.bump(states, "momentum_buffer", "mul_", "addcdiv_")
        _flat.add_into(params, fg, buf * _flat.scalar(-lr, dt), "add_")
    else:
        # param.addcdiv_(grad, avg, value=-lr)
        update = xp.divide(grad, avg)
        update *= _flat.scalar(-lr, dt)
        _flat.add_into(params, fg, update, "addcdiv_")
    return True
