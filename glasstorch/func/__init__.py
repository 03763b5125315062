"""torch.func: composable function transforms -- grad, grad_and_value, vjp, jvp, jacrev, jacfwd,
hessian, vmap -- and functional_call (a module as a function of its parameters).

    >>> import glasstorch as torch
    >>> from glasstorch.func import grad
    >>> grad(lambda x: (x ** 3).sum())(torch.tensor([1., 2.]))
    tensor([ 3., 12.])
    >>> grad(grad(lambda x: x ** 3))(torch.tensor(2.))
    tensor(12.)

Built on glasstorch's autograd rather than functorch's levels (``glasstorch/_functorch``): jvp and
jacfwd use reverse mode twice, vmap is a loop over the batch (README "Where glasstorch differs").
"""
from .._functorch.eager_transforms import grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian
from .._functorch.functional_call import functional_call
from .._functorch.vmap import vmap

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap", "functional_call"]
