from .distribution import Distribution, broadcast_all


def _probs_logits(probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    if probs is not None:
        (probs,) = broadcast_all(probs)
        eps = 1.1920928955078125e-07 if probs.dtype.itemsize == 4 else 2.220446049250313e-16
        p = probs.clamp(eps, 1 - eps)
        return probs, p.log() - (1 - p).log()
    (logits,) = broadcast_all(logits)
    return logits.sigmoid(), logits


class Bernoulli(Distribution):
    arg_constraints = {"probs": None}

    def __init__(self, probs=None, logits=None, validate_args=None):
        self.probs, self.logits = _probs_logits(probs, logits)
        super().__init__(self.probs.shape)

    def _sample(self, sample_shape):
        import glasstorch as torch
        shape = self._extended_shape(sample_shape)
        return (torch.rand(*shape, dtype=self.probs.dtype) < self.probs.expand(shape)).to(self.probs.dtype)

    def log_prob(self, value):
        # value * logits - log(1 + exp(logits)), written stably
        return value * self.logits - _softplus(self.logits)

    def entropy(self):
        return _softplus(self.logits) - self.probs * self.logits

    @property
    def mean(self):
        return self.probs

    @property
    def variance(self):
        return self.probs * (1 - self.probs)


def _softplus(x):
    return x.clamp(min=0) + (-x.abs()).exp().log1p()
