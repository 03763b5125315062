from numbers import Number

from .._tensor import Size
from ..autograd import Function
from . import constraints
from .distribution import _expand_params
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Gamma"]


def _standard_gamma_grad(concentration, sample):
    """d sample / d concentration for x ~ Gamma(a, 1), by implicit differentiation of the CDF:
    F(x; a) = u stays fixed as a moves, so dx/da = -(dF/da) / (dF/dx), where dF/dx is the density and
    dF/da is taken as a central difference of the regularised incomplete gamma in float64 (relative step
    1e-5: its error, ~1e-9 relative, is far below float32's and below the rounding of torch's own
    approximation)."""
    import glasstorch as torch
    a = concentration.detach().double()
    x = sample.detach().double().clamp(min=torch.finfo(torch.float64).tiny)
    h = 1e-5 * a.clamp(min=1.0)
    dcdf_da = (torch.special.gammainc(a + h, x) - torch.special.gammainc((a - h).clamp(min=1e-300), x)) / (
        a + h - (a - h).clamp(min=1e-300))
    log_density = (a - 1) * x.log() - x - a.lgamma()
    return (-dcdf_da / log_density.exp()).nan_to_num(0.0, 0.0, 0.0).to(sample.dtype)


class _StandardGamma(Function):
    """Gamma(a, 1) draws with the implicit reparameterisation gradient (torch's _standard_gamma)."""

    @staticmethod
    def forward(ctx, concentration):
        import glasstorch as torch
        sample = torch._standard_gamma(concentration)
        ctx.save_for_backward(concentration, sample)
        return sample

    @staticmethod
    def backward(ctx, grad):
        concentration, sample = ctx.saved_tensors
        return grad * _standard_gamma_grad(concentration, sample)


def _standard_gamma(concentration):
    return _StandardGamma.apply(concentration)


class Gamma(ExponentialFamily):
    """Gamma with shape ``concentration`` (alpha) and ``rate`` (beta = 1 / scale); mean alpha / beta."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        batch_shape = (Size() if isinstance(concentration, Number) and isinstance(rate, Number)
                       else self.concentration.size())
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, Gamma, batch_shape, _instance, ("concentration", "rate"))

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=Size()):
        import glasstorch as torch
        shape = self._extended_shape(sample_shape)
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        # keep draws off 0 (where log_prob is -inf) without recording the clamp in the graph
        value.detach().clamp_(min=torch.finfo(value.dtype).tiny)
        return value

    def log_prob(self, value):
        import glasstorch as torch
        value = torch.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (torch.xlogy(self.concentration, self.rate) + torch.xlogy(self.concentration - 1, value)
                - self.rate * value - self.concentration.lgamma())

    def entropy(self):
        c = self.concentration
        return c - self.rate.log() + c.lgamma() + (1.0 - c) * c.digamma()

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return (x + 1).lgamma() + (x + 1) * (-y.reciprocal()).log()

    def cdf(self, value):
        import glasstorch as torch
        if self._validate_args:
            self._validate_sample(value)
        return torch.special.gammainc(self.concentration, self.rate * value)
