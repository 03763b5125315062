r"""AdamW: Adam with decoupled weight decay (Loshchilov & Hutter, 2019).

Adam's L2 penalty adds ``weight_decay * theta`` to the gradient, where the adaptive denominator then
rescales it: heavily-updated weights are barely decayed. AdamW shrinks the weights directly,
``theta <- theta * (1 - lr * weight_decay)``, before the Adam step, and leaves the moments alone.
It is ``Adam(..., decoupled_weight_decay=True)`` with a default ``weight_decay`` of 1e-2; the update
rule is :func:`glasstorch.optim.adam.adam`.
"""
import functools

from .adam import Adam, adam

__all__ = ["AdamW", "adamw"]


class AdamW(Adam):
    """Implements AdamW: Adam whose weight decay shrinks the weights instead of adding to the gradient.

    Args are those of :class:`Adam` (without ``decoupled_weight_decay``, which is always True);
    ``weight_decay`` defaults to 1e-2.

    Example::

        >>> import glasstorch as torch
        >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = torch.optim.AdamW([w], lr=0.1, weight_decay=0.5)
        >>> w.grad = torch.zeros(2)          # no gradient signal: only the decay acts
        >>> opt.step()
        >>> w.detach()
        tensor([ 0.9500, -1.9000])
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:  # an AdamW always decouples, whatever the loaded groups say
            group["decoupled_weight_decay"] = True


# The same update rule as Adam, with the weight decay decoupled.
adamw = functools.partial(adam, decoupled_weight_decay=True)
