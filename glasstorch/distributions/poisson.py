from .distribution import Distribution, broadcast_all


class Poisson(Distribution):
    arg_constraints = {"rate": None}

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape)

    def _sample(self, sample_shape):
        import glasstorch as torch
        return torch.poisson(self.rate.detach().expand(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        return value * self.rate.log() - self.rate - (value + 1).lgamma()

    @property
    def mean(self):
        return self.rate

    @property
    def variance(self):
        return self.rate
