r"""Stochastic gradient descent, optionally with momentum, Nesterov momentum and weight decay.

For each parameter :math:`\theta` with gradient :math:`g` (torch's formulation)::

    g  <- -g                        if maximize
    g  <- g + weight_decay * theta  if weight_decay != 0         (L2 penalty)
    b  <- g                         on the first step            (no dampening yet)
    b  <- momentum * b + (1 - dampening) * g                     afterwards
    g  <- g + momentum * b          if nesterov, else g <- b      (when momentum != 0)
    theta <- theta - lr * g

Note the momentum buffer accumulates gradients, not ``lr * gradients`` (as Sutskever et al. and
some frameworks do): changing ``lr`` mid-training takes effect at once.
"""
from . import _flat
from .._array import xp
from .._tensor import bump_version
from .optimizer import (Optimizer, _check_lr, _check_not_differentiable, _evaluate_closure, _to_scalar,
                        _use_grad_for_differentiable)

__all__ = ["SGD", "sgd"]


class SGD(Optimizer):
    """Implements stochastic gradient descent (optionally with momentum); see the module docstring.

    Args:
        params (iterable): tensors to optimize, or dicts defining parameter groups.
        lr (float): learning rate (default: 1e-3).
        momentum (float): momentum factor (default: 0).
        dampening (float): dampening for momentum (default: 0).
        weight_decay (float): weight decay, an L2 penalty (default: 0).
        nesterov (bool): use Nesterov momentum; needs ``momentum > 0`` and ``dampening == 0``.
        maximize (bool): maximize the objective instead of minimizing it (default: False).
        foreach (bool, optional): None (default) or True: update all of a group's parameters at once,
            on one flat array (``optim/_flat.py``) where the group allows; False: the for-loop.
            The two give the same trajectories.
        fused (bool, optional): True runs the flat path too (as torch, not together with ``foreach=True``).
        differentiable: must stay off.

    Example::

        >>> import glasstorch as torch
        >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
        >>> for _ in range(2):
        ...     opt.zero_grad()
        ...     (w * w).sum().backward()    # gradient 2w
        ...     opt.step()
        >>> w.detach()
        tensor([ 0.4600, -0.9200])
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        _check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach,
                        differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        _check_not_differentiable(differentiable, fused, foreach)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:  # groups saved by older versions lack the newer options
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; returns the closure's loss if one is given."""
        loss = _evaluate_closure(closure)
        for index, group in enumerate(self.param_groups):
            params = self._params_with_grad(group)
            if _flat.usable(group, params) and _flat_sgd(self, index, group, params):
                continue
            # Without momentum SGD keeps no state at all (its state dict stays empty, as torch's).
            momentum_buffer_list = ([self.state[p].get("momentum_buffer") for p in params]
                                    if group["momentum"] != 0 else [])
            sgd(params, [p.grad for p in params], momentum_buffer_list,
                weight_decay=group["weight_decay"], momentum=group["momentum"], lr=group["lr"],
                dampening=group["dampening"], nesterov=group["nesterov"], maximize=group["maximize"])
            if group["momentum"] != 0:
                # The first step creates the buffers: store them in the state.
                for p, momentum_buffer in zip(params, momentum_buffer_list):
                    self.state[p]["momentum_buffer"] = momentum_buffer
        return loss


def sgd(params, grads, momentum_buffer_list, *, weight_decay, momentum, lr, dampening, nesterov, maximize):
    """The SGD update of each parameter, in place (torch's ``_single_tensor_sgd``).

    ``momentum_buffer_list`` holds one buffer per parameter, or None where none exists yet; the
    buffers created here are written back into the list for the caller to keep.
    """
    lr = _to_scalar(lr)   # torch also takes a 1-element Tensor
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)

        if momentum != 0:
            buf = momentum_buffer_list[i]
            if buf is None:
                buf = grad.detach().clone()
                momentum_buffer_list[i] = buf
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - dampening)
            if nesterov:
                grad = grad.add(buf, alpha=momentum)
            else:
                grad = buf

        param.add_(grad, alpha=-lr)


def _flat_sgd(optimizer, index, group, params):
    """The SGD update of a whole group on flat arrays (torch's ``_multi_tensor_sgd``; see
    ``_flat.py``); False, having changed nothing, where only some parameters have a momentum buffer.

    Without momentum there is no state to keep flat, and gathering the gradients would only add a
    copy of each (measured slower on the MLP's large weights): the update then runs parameter by
    parameter, on arrays, with the same arithmetic."""
    momentum, dampening, weight_decay = group["momentum"], group["dampening"], group["weight_decay"]
    if momentum == 0:
        _arrays_sgd(params, group)
        return True
    states = [optimizer.state[p] for p in params] if momentum != 0 else []
    if momentum != 0 and not _flat.same_state(states, "momentum_buffer"):
        return False
    fg = _flat.flat_group(optimizer, index, params)
    dt = fg.dtype
    grad = fg.gather([p.grad._data for p in params], "grad")   # a copy: the steps below write into it
    if group["maximize"]:
        xp.negative(grad, out=grad)
    if weight_decay != 0:
        grad += fg.gather([p._data for p in params], "param") * _flat.scalar(weight_decay, dt)
    if momentum != 0:
        if states[0].get("momentum_buffer") is None:    # the first step: the buffer starts as the gradient
            fg.state_array(states, "momentum_buffer", init=grad)
        else:
            buf = fg.state_array(states, "momentum_buffer")
            buf *= _flat.scalar(momentum, dt)
            buf += grad if dampening == 0 else grad * _flat.scalar(1 - dampening, dt)
            _flat.bump(states, "momentum_buffer", "mul_", "add_")
        buf = fg.state["momentum_buffer"]
        if group["nesterov"]:
            grad += buf * _flat.scalar(momentum, dt)
        else:
            grad = buf
    lr = _to_scalar(group["lr"])
    _flat.add_into(params, fg, grad * _flat.scalar(-lr, dt), "add_")
    return True


def _arrays_sgd(params, group):
    """Momentum-free SGD, one parameter at a time on its arrays: ``param.add_(grad, alpha=-lr)``."""
    weight_decay, maximize = group["weight_decay"], group["maximize"]
    for p in params:
        d, grad = p._data, p.grad._data
        if maximize:
            grad = xp.negative(grad)
        if weight_decay != 0:
            grad = grad + d * _flat.scalar(weight_decay, d.dtype)
        xp.add(d, grad * _flat.scalar(-_to_scalar(group["lr"]), d.dtype), out=d)
        bump_version(p, "add_")
