import math

from .distribution import Distribution, broadcast_all, LOG_SQRT_2PI


class Normal(Distribution):
    """N(loc, scale^2); rsample = loc + scale * eps (reparameterised, differentiable)."""
    has_rsample = True
    arg_constraints = {"loc": None, "scale": None}

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        if validate_args is not False and bool((self.scale <= 0).any()):
            raise ValueError(f"Expected parameter scale ({type(self.scale).__name__} of shape "
                             f"{tuple(self.scale.shape)}) of distribution Normal(loc: {self.loc}, scale: "
                             f"{self.scale}) to satisfy the constraint GreaterThan(lower_bound=0.0), but found "
                             f"invalid values:\n{self.scale}")
        super().__init__(self.loc.shape)

    def rsample(self, sample_shape=()):
        import glasstorch as torch
        eps = torch.randn(*self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        var = self.scale ** 2
        return -((value - self.loc) ** 2) / (2 * var) - self.scale.log() - LOG_SQRT_2PI

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

    def cdf(self, value):
        return 0.5 * (1 + ((value - self.loc) / (self.scale * math.sqrt(2))).erf())

    @property
    def mean(self):
        return self.loc

    @property
    def variance(self):
        return self.scale ** 2

    @property
    def stddev(self):
        return self.scale
