r"""Adam: per-coordinate step sizes from running averages of the gradient and its square.

For each parameter :math:`\theta` with gradient :math:`g`, at step :math:`t = 1, 2, ...`::

    g  <- -g                                        if maximize
    theta <- theta * (1 - lr * weight_decay)        if decoupled_weight_decay (AdamW)
    g  <- g + weight_decay * theta                  otherwise, if weight_decay != 0 (L2 penalty)
    m  <- beta1 * m + (1 - beta1) * g               first moment  (exp_avg)
    v  <- beta2 * v + (1 - beta2) * g * g           second moment (exp_avg_sq)
    v_max <- max(v_max, v)                          if amsgrad    (max_exp_avg_sq)
    theta <- theta - lr / (1 - beta1**t) * m / (sqrt(v or v_max) / sqrt(1 - beta2**t) + eps)

The two ``1 - beta**t`` factors undo the bias of averages that start at zero (Kingma & Ba, 2014).
"""
import glasstorch
from . import _flat
from .._array import xp
from .optimizer import (Optimizer, _check_capturable, _check_lr, _check_not_differentiable, _compiling,
                        _evaluate_closure, _scalar_state, _to_scalar, _use_grad_for_differentiable)

__all__ = ["Adam", "adam"]


def _check_betas_eps_weight_decay(betas, eps, weight_decay):
    """torch's checks of the hyperparameters the Adam family shares, in torch's order."""
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def _check_adam_args(lr, betas, eps, weight_decay):
    """torch's argument checks, shared by Adam and AdamW."""
    _check_lr(lr)
    _check_betas_eps_weight_decay(betas, eps, weight_decay)
    if not (isinstance(betas[0], float) and isinstance(betas[1], float)):
        # torch also takes two Tensors here; glasstorch's update rule works on Python floats.
        raise ValueError("betas must be either both floats or both Tensors")


class Adam(Optimizer):
    """Implements Adam (and, with ``decoupled_weight_decay=True``, AdamW); see the module docstring.

    Args:
        params (iterable): tensors to optimize, or dicts defining parameter groups.
        lr (float): learning rate (default: 1e-3).
        betas (Tuple[float, float]): decay rates of the running averages of the gradient and of
            its square (default: (0.9, 0.999)).
        eps (float): added to the denominator for numerical stability (default: 1e-8).
        weight_decay (float): weight decay (default: 0).
        amsgrad (bool): use the maximum of all second moments so far (AMSGrad, default: False).
        maximize (bool): maximize the objective instead of minimizing it (default: False).
        decoupled_weight_decay (bool): shrink the weights directly instead of adding an L2 term to
            the gradient, which makes this AdamW (default: False).
        foreach (bool, optional): None (default) or True: update all of a group's parameters at once,
            on flat arrays (``optim/_flat.py``) where the group allows; False: the for-loop.
            The two give the same trajectories.
        fused (bool, optional): True runs the flat path too (as torch, not together with ``foreach=True``).
        capturable, differentiable: accepted for compatibility with torch (``capturable`` needs the
            parameters on a GPU, as torch asserts; ``differentiable`` must stay off).

    State per parameter: ``step`` (a 0-dim float32 tensor), ``exp_avg``, ``exp_avg_sq`` and, with
    amsgrad, ``max_exp_avg_sq``.

    Example::

        >>> import glasstorch as torch
        >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = torch.optim.Adam([w], lr=0.1)
        >>> (w * w).sum().backward()
        >>> opt.step()                # the first Adam step moves every coordinate by about lr
        >>> w.detach()
        tensor([ 0.9000, -1.9000])
        >>> sorted(opt.state[w])
        ['exp_avg', 'exp_avg_sq', 'step']
    """

    _group_option_defaults = {"amsgrad": False, "maximize": False, "foreach": None, "capturable": False,
                              "differentiable": False, "decoupled_weight_decay": False, "fused": None}
    _scalar_state_keys = ("step",)

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        _check_adam_args(lr, betas, eps, weight_decay)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        _check_not_differentiable(differentiable, fused, foreach)
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        """The state of ``p``, created on the first step that sees a gradient for it."""
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _scalar_state(0.0, p, group["capturable"])
            state["exp_avg"] = glasstorch.zeros_like(p)      # running average of g
            state["exp_avg_sq"] = glasstorch.zeros_like(p)   # running average of g * g
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = glasstorch.zeros_like(p)
        return state

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; returns the closure's loss if one is given."""
        loss = _evaluate_closure(closure)
        for index, group in enumerate(self.param_groups):
            params = self._params_with_grad(group)
            if not group["capturable"] and _flat.usable(group, params) and _flat_adam(self, index, group, params):
                continue
            states = [self._init_state(p, group) for p in params]
            beta1, beta2 = group["betas"]
            adam(params, [p.grad for p in params],
                 [s["exp_avg"] for s in states], [s["exp_avg_sq"] for s in states],
                 [s["max_exp_avg_sq"] for s in states] if group["amsgrad"] else [],
                 [s["step"] for s in states],
                 amsgrad=group["amsgrad"], beta1=beta1, beta2=beta2, lr=group["lr"],
                 weight_decay=group["weight_decay"], eps=group["eps"], maximize=group["maximize"],
                 decoupled_weight_decay=group["decoupled_weight_decay"], capturable=group["capturable"])
        return loss


def adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, amsgrad, beta1, beta2,
         lr, weight_decay, eps, maximize, decoupled_weight_decay=False, capturable=False):
    """The Adam update of each parameter and its state, in place (torch's ``_single_tensor_adam``)."""
    lr = _to_scalar(lr)   # torch also takes a 1-element Tensor
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg = exp_avgs[i]
        exp_avg_sq = exp_avg_sqs[i]
        step_t = state_steps[i]
        _check_capturable(capturable, (param, step_t))

        step_t.add_(1)

        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)

        # m <- m + (1 - beta1) * (g - m)  is  beta1 * m + (1 - beta1) * g
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)

        if _compiling():
            # torch.compile: the step count stays a tensor (reading it into Python would break the
            # graph, or specialise it and recompile every step): torch's tensor form of the update
            _tensor_step_update(param, exp_avg, exp_avg_sq, max_exp_avg_sqs[i] if amsgrad else None, step_t,
                                beta1=beta1, beta2=beta2, lr=lr, eps=eps)
            continue
        step = step_t.item()
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = bias_correction2 ** 0.5

        if amsgrad:
            max_exp_avg_sqs[i].copy_(glasstorch.maximum(max_exp_avg_sqs[i], exp_avg_sq))
            denom = (max_exp_avg_sqs[i].sqrt() / bias_correction2_sqrt).add_(eps)
        else:
            denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)

        param.addcdiv_(exp_avg, denom, value=-step_size)


def _tensor_step_update(param, exp_avg, exp_avg_sq, max_exp_avg_sq, step, *, beta1, beta2, lr, eps):
    """The end of an Adam step with the step count as a tensor, in torch's words (its
    ``capturable`` branch of ``_single_tensor_adam``, which ``addcdiv_``'s Number ``value`` forces):
    the bias corrections fold into the denominator. It equals the float form to float32 rounding."""
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    step_size_neg = (lr / bias_correction1).neg()
    bias_correction2_sqrt = bias_correction2.sqrt()
    if max_exp_avg_sq is not None:
        max_exp_avg_sq.copy_(glasstorch.maximum(max_exp_avg_sq, exp_avg_sq))
        exp_avg_sq = max_exp_avg_sq
    denom = (exp_avg_sq.sqrt() / (bias_correction2_sqrt * step_size_neg)).add_(eps / step_size_neg)
    param.addcdiv_(exp_avg, denom)


def _flat_adam(optimizer, index, group, params):
    """The Adam/AdamW update of a whole group on flat arrays (torch's ``_multi_tensor_adam``; see
    ``_flat.py``); False, having changed nothing, where the parameters' step counts differ."""
    states = [optimizer.state[p] for p in params]
    fg = _flat.flat_group(optimizer, index, params)
    step = _flat.step_count(states, fg)
    if step is None:
        return False
    dt = fg.dtype
    beta1, beta2 = group["betas"]
    lr, weight_decay, amsgrad = _to_scalar(group["lr"]), group["weight_decay"], group["amsgrad"]
    grad = fg.gather([p.grad._data for p in params], "grad")   # a copy: the steps below write into it
    if group["maximize"]:
        xp.negative(grad, out=grad)
    if weight_decay != 0:
        if group["decoupled_weight_decay"]:
            _flat.scale_params(params, _flat.scalar(1 - lr * weight_decay, dt), "mul_")
        else:
            grad += fg.gather([p._data for p in params], "param") * _flat.scalar(weight_decay, dt)

    exp_avg = fg.state_array(states, "exp_avg")
    exp_avg_sq = fg.state_array(states, "exp_avg_sq")
    # exp_avg.lerp_(grad, 1 - beta1): exp_avg + (1 - beta1) * (grad - exp_avg)
    exp_avg += xp.subtract(grad, exp_avg) * _flat.scalar(1 - beta1, dt)
    # exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    exp_avg_sq *= _flat.scalar(beta2, dt)
    exp_avg_sq += grad * grad * _flat.scalar(1 - beta2, dt)
    _flat.bump(states, "exp_avg", "lerp_")
    _flat.bump(states, "exp_avg_sq", "mul_", "addcmul_")

    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    step_size = lr / bias_correction1
    bias_correction2_sqrt = bias_correction2 ** 0.5
    if amsgrad:
        max_exp_avg_sq = fg.state_array(states, "max_exp_avg_sq")
        xp.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
        _flat.bump(states, "max_exp_avg_sq", "copy_")
        denom = xp.sqrt(max_exp_avg_sq)
    else:
        denom = xp.sqrt(exp_avg_sq)
    denom /= _flat.scalar(bias_correction2_sqrt, dt)
    denom += _flat.scalar(group["eps"], dt)
    # param.addcdiv_(exp_avg, denom, value=-step_size)
    update = xp.divide(exp_avg, denom)
    update *= _flat.scalar(-step_size, dt)
    _flat.add_into(params, fg, update, "addcdiv_")
    return True
