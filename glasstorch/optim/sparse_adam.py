r"""SparseAdam: Adam for dense parameters that receive *sparse* gradients (``nn.Embedding(sparse=True)``).

torch's SparseAdam updates only the rows a sparse gradient names, leaving the moments of the other
rows alone ("lazy Adam"), and it refuses dense gradients: ``step`` raises ``RuntimeError:
SparseAdam does not support dense gradients, please consider Adam instead``.

glasstorch has no sparse tensors, so every gradient is dense, and this class does exactly what
torch's does with a dense gradient: it checks its arguments and its parameters as torch does, and
its first ``step`` over a parameter with a gradient raises that RuntimeError. (In torch,
``nn.Embedding(sparse=True)`` makes sparse gradients; glasstorch's makes dense ones — so a torch
program that pairs the two needs ``Adam`` here; see docs/optim.md.)
"""
from .._tensor import Tensor
from .optimizer import Optimizer, _evaluate_closure, _use_grad_for_differentiable

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """torch's SparseAdam, which accepts only sparse gradients — of which glasstorch has none.

    Args:
        params (iterable): dense tensors to optimize, or dicts defining parameter groups.
        lr (float): learning rate, > 0 (default: 1e-3).
        betas (Tuple[float, float]): as Adam's (default: (0.9, 0.999)).
        eps (float): as Adam's, > 0 (default: 1e-8).
        maximize (bool): maximize the objective (default: False).

    Example::

        >>> import glasstorch as torch
        >>> w = torch.zeros(3, requires_grad=True)
        >>> opt = torch.optim.SparseAdam([w])
        >>> w.sum().backward()
        >>> opt.step()
        Traceback (most recent call last):
        ...
        RuntimeError: SparseAdam does not support dense gradients, please consider Adam instead
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))

        complex_params = [[index, d_index] for index, group in enumerate(self.param_groups)
                          for d_index, param in enumerate(group["params"]) if param.is_complex()]
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not support complex "
                             "parameters")

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Raise torch's error for the first parameter that has a (necessarily dense) gradient."""
        loss = _evaluate_closure(closure)
        for group in self.param_groups:
            if self._params_with_grad(group):
                raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
        return loss
