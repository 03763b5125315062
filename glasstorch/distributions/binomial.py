from .distribution import Distribution, broadcast_all


class Binomial(Distribution):
    arg_constraints = {"probs": None}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is None:
            (logits,) = broadcast_all(logits)
            probs = logits.sigmoid()
        self.total_count, self.probs = broadcast_all(total_count, probs)
        self.total_count = self.total_count.to(self.probs.dtype)
        p = self.probs.clamp(1e-7, 1 - 1e-7)
        self.logits = p.log() - (1 - p).log()
        super().__init__(self.probs.shape)

    def _sample(self, sample_shape):
        import glasstorch as torch
        from ..ops.creation import _rng
        shape = self._extended_shape(sample_shape)
        n = self.total_count.expand(shape).numpy()
        p = self.probs.detach().expand(shape).numpy()
        return torch.tensor(_rng(None).binomial(n.astype("int64"), p), dtype=self.probs.dtype)

    def log_prob(self, value):
        n, p = self.total_count, self.probs
        log_comb = (n + 1).lgamma() - (value + 1).lgamma() - (n - value + 1).lgamma()
        return log_comb + value * p.clamp(min=1e-38).log() + (n - value) * (1 - p).clamp(min=1e-38).log()

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)
