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
import sys

from . import _flat   # (its usable(): when the array path may run)
from .._array import xp
from .._tensor import bump_versions
from ..ops.creation import from_numpy
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
        foreach (bool, optional): None (default) or True: the update runs on the parameters' arrays
            (``_arrays_sgd``) where the group allows; False: the for-loop of Tensor ops.
            The two give the same trajectories.
        fused (bool, optional): True runs the array path too (as torch, not together with ``foreach=True``).
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

    _group_option_defaults = {"nesterov": False, "maximize": False, "foreach": None, "differentiable": False,
                              "fused": False}

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

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; returns the closure's loss if one is given."""
        loss = _evaluate_closure(closure)
        for group in self.param_groups:
            params = self._params_with_grad(group)
            if _flat.usable(group, params) and _arrays_sgd(self, params, group):
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


def _arrays_sgd(optimizer, params, group):
    """The SGD update of a group on the parameters' arrays, one parameter at a time: the for-loop's
    arithmetic (the same NumPy operations in the same order, so the same bits) without its Tensor
    ops; False, having changed nothing, where a momentum buffer is not an array of its parameter's
    dtype and shape (then the for-loop runs).

    Not a flat buffer as Adam's (``_flat.py``): SGD's update is one or two passes over each
    parameter, and gathering the gradients into one array would only add a copy of each (measured
    slower on the MLP's large weights); what the for-loop costs beyond NumPy is its Tensor ops.
    """
    momentum, dampening, weight_decay = group["momentum"], group["dampening"], group["weight_decay"]
    nesterov, maximize, lr = group["nesterov"], group["maximize"], _to_scalar(group["lr"])
    # numba's loop for the last line where a compiled graph has loaded it (_dynamo/jit.py, ``add_scaled``: the same
    # bits in one pass); the compiler is not imported for it
    jit = sys.modules.get("glasstorch._dynamo.jit")
    number = params[0]._data.dtype.type    # the for-loop's Python numbers meet float arrays as their dtype (one
    step = number(-lr)                     # dtype: _flat.usable)
    if momentum == 0 and weight_decay == 0 and not maximize and jit is None:
        # plain SGD (no state to check or keep): the last line of the loop below, alone
        for p in params:
            d = p._data
            xp.add(d, p._grad._data * step, out=d)            # param.add_(grad, alpha=-lr)
        bump_versions(params, "add_")
        return True
    states = [optimizer.state[p] for p in params] if momentum != 0 else [{}] * len(params)
    for p, state in zip(params, states):
        buf = state.get("momentum_buffer")
        if buf is not None and (type(buf._data) is not xp.ndarray or buf._data.dtype != p._data.dtype
                                or buf._data.shape != p._data.shape):
            return False
    bufs = []                                                  # the buffers updated in place
    for p, state in zip(params, states):
        d, grad = p._data, p._grad._data     # (the step's _params_with_grad read .grad, as torch's _init_group)
        if maximize:
            grad = xp.negative(grad)
        if weight_decay != 0:
            grad = grad + d * number(weight_decay)             # grad.add(param, alpha=weight_decay)
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:                                    # the first step: the buffer starts as the gradient
                state["momentum_buffer"] = from_numpy(xp.array(grad))   # (a copy; 0-dim stays an array)
                b = state["momentum_buffer"]._data
            else:                                              # buf.mul_(momentum).add_(grad, alpha=1 - dampening)
                b = buf._data
                xp.multiply(b, number(momentum), out=b)
                xp.add(b, grad if dampening == 0 else grad * number(1 - dampening), out=b)
                bufs.append(buf)
            grad = grad + b * number(momentum) if nesterov else b
        if jit is None or not jit.add_scaled(d, grad, step):
            xp.add(d, grad * step, out=d)                      # param.add_(grad, alpha=-lr)
    if bufs:
        bump_versions(bufs, "mul_", "add_")
    bump_versions(params, "add_")
    return True
