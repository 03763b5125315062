from .._tensor import Size
from . import constraints
from .exp_family import ExponentialFamily
from ..autograd import Function, once_differentiable

__all__ = ["Dirichlet"]


def _Dirichlet_backward(x, concentration, grad_output):
    """The vector-Jacobian product of a Dirichlet draw ``x`` in ``concentration``: each component's
    d x_i / d alpha_i from its Beta marginal (torch._dirichlet_grad), projected onto the simplex."""
    import glasstorch as torch
    total = concentration.sum(-1, True).expand_as(concentration)
    grad = torch._dirichlet_grad(x, concentration, total)
    return grad * (grad_output - (x * grad_output).sum(-1, True))


class _Dirichlet(Function):
    """Dirichlet draws with their implicit reparameterisation gradient (torch's node _DirichletBackward)."""

    @staticmethod
    def forward(ctx, concentration):
        import glasstorch as torch
        x = torch._sample_dirichlet(concentration)
        ctx.save_for_backward(x, concentration)
        return x

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        x, concentration = ctx.saved_tensors
        return _Dirichlet_backward(x, concentration, grad_output)


class Dirichlet(ExponentialFamily):
    """Dirichlet over the simplex along the last dim of ``concentration`` (event_shape = its last dim).
    ``rsample`` draws through ``_Dirichlet``, whose gradient is the implicit reparameterisation one, so
    the draw is differentiable in ``concentration``."""
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape + self.event_shape)
        super(Dirichlet, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        return _Dirichlet.apply(self.concentration.expand(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        import glasstorch as torch
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return torch.xlogy(c - 1.0, value).sum(-1) + c.sum(-1).lgamma() - c.lgamma().sum(-1)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        import glasstorch as torch
        concentrationm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, True)
        # where every alpha < 1 the density peaks at the vertex of the largest alpha
        mask = (self.concentration < 1).all(dim=-1)
        if bool(mask.any()):
            mode[mask] = torch.nn.functional.one_hot(mode[mask].argmax(-1), concentrationm1.shape[-1]).to(mode)
        return mode

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (self.concentration.lgamma().sum(-1) - a0.lgamma() - (k - a0) * a0.digamma()
                - ((self.concentration - 1.0) * self.concentration.digamma()).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - x.sum(-1).lgamma()
