"""The function transforms behind ``torch.func`` (torch keeps them in ``torch._functorch``):
``eager_transforms`` (grad, vjp, jvp, jacrev, jacfwd, hessian), ``vmap`` and ``functional_call``.
glasstorch builds them on its tape-based autograd instead of functorch's levels of wrapped
tensors; docs and README ("Where glasstorch differs") say what that changes."""
