from .distribution import Distribution, broadcast_all


class Uniform(Distribution):
    has_rsample = True
    arg_constraints = {"low": None, "high": None}

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        super().__init__(self.low.shape)

    def rsample(self, sample_shape=()):
        import glasstorch as torch
        u = torch.rand(*self._extended_shape(sample_shape), dtype=self.low.dtype)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        inside = (value >= self.low) & (value < self.high)
        return inside.to(self.low.dtype).log() - (self.high - self.low).log()

    def entropy(self):
        return (self.high - self.low).log()

    @property
    def mean(self):
        return (self.low + self.high) / 2

    @property
    def variance(self):
        return (self.high - self.low) ** 2 / 12
