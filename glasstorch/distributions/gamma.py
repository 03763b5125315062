from numbers import Number

from .._tensor import Size
from ..autograd import Function
from . import constraints
from .distribution import _expand_params
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Gamma"]


# bivariate rational approximation of log(dx/dalpha) in u = log(x / alpha), v = log(alpha) (torch's
# standard_gamma_grad, after Jankowiak & Obermeyer, "Pathwise derivatives beyond the reparameterization
# trick", 2018): rows are the u^0, u^1, u^2 coefficients; columns 0-3 the numerator's powers of v, 4-7 the
# denominator's
_GAMMA_GRAD_COEF_UV = (
    (0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089, 0.0014179084),
    (0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915, -0.00058392623),
    (0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326, 0.00085092367,
     -1.5247877e-07),
)


def _standard_gamma_grad(concentration, sample):
    """d sample / d concentration for x ~ Gamma(a, 1) at fixed CDF value (implicit reparameterisation,
    -(dF/da) / (dF/dx)), by torch's three approximations, computed in float64 and chosen per element:

    - x < 0.8: the Taylor series of the incomplete gamma function in x (6 terms);
    - a > 8: Rice's saddle-point expansion (with a polynomial near the singular point x = a);
    - otherwise: exp of a rational function of log(x / a) and log(a)."""
    import glasstorch as torch
    with torch.no_grad():
        a, x = concentration.double(), sample.double()
        # small x: F(x; a) = x^a sum_k (-x)^k / (k! (a + k)), differentiated in a term by term
        numer, denom = torch.ones_like(x), a.clone()
        series1, series2 = numer / denom, numer / (denom * denom)
        for i in range(1, 6):
            numer = numer * (-x / i)
            denom = denom + 1
            series1 = series1 + numer / denom
            series2 = series2 + numer / (denom * denom)
        pow_x_alpha = x.pow(a)
        gamma_pdf = x.pow(a - 1) * (-x).exp()
        gamma_cdf_alpha = (x.log() - a.digamma()) * (pow_x_alpha * series1) - pow_x_alpha * series2
        small_x = (-gamma_cdf_alpha / gamma_pdf).nan_to_num(0.0, 0.0, 0.0)   # (nan -> 0, as torch)
        # large alpha
        near_mean = ((1 + 24 * a * (1 + 12 * a)) * (1440 * a * a + 6 * x * (53 - 120 * x) - 65 * x * x / a
                                                    + a * (107 + 3600 * x)) / (1244160 * a * a * a * a))
        sqrt_8a = (8 * a).sqrt()
        term2 = sqrt_8a / (a - x)
        term3 = (x - a - a * (x / a).log()).pow(-1.5)
        term23 = torch.where(x < a, term2 - term3, term2 + term3)
        term1 = (x / a).log() * term23 - (2 / a).sqrt() * (a + x) / ((a - x) * (a - x))
        stirling = 1 + 1 / (12 * a) * (1 + 1 / (24 * a))
        large_alpha = torch.where((0.9 * a <= x) & (x <= 1.1 * a), near_mean, -stirling * x * term1 / sqrt_8a)
        # the rest
        u, v = (x / a).log(), a.log()
        c0, c1, c2 = _GAMMA_GRAD_COEF_UV
        coef = [c0[i] + u * (c1[i] + u * c2[i]) for i in range(8)]
        p = coef[0] + v * (coef[1] + v * (coef[2] + v * coef[3]))
        q = coef[4] + v * (coef[5] + v * (coef[6] + v * coef[7]))
        rational = (p / q).exp()
        result = torch.where(x < 0.8, small_x, torch.where(a > 8.0, large_alpha, rational))
        return result.to(sample.dtype)


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
