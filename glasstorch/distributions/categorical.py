from .distribution import Distribution
from .._tensor import Size


class Categorical(Distribution):
    """Over {0, ..., K-1}; ``probs`` are normalised along the last dim, ``logits`` are unnormalised."""
    arg_constraints = {"probs": None}

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
            self.logits = self.probs.clamp(min=1.1920928955078125e-07 if probs.dtype.itemsize == 4 else
                                           2.220446049250313e-16).log()
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(-1, keepdim=True)
            self.probs = self.logits.exp()
        self._num_events = self.probs.shape[-1]
        super().__init__(self.probs.shape[:-1])

    def _sample(self, sample_shape):
        import glasstorch as torch
        n = Size(sample_shape).numel()
        flat = self.probs.reshape(-1, self._num_events)
        draws = torch.multinomial(flat, n, replacement=True)  # (batch, n)
        return draws.t().reshape(tuple(sample_shape) + tuple(self._batch_shape))

    def log_prob(self, value):
        value = value.long()
        logits = self.logits.expand(tuple(value.shape) + (self._num_events,)) if value.dim() > self.logits.dim() - 1 \
            else self.logits
        return logits.gather(-1, value.unsqueeze(-1)).squeeze(-1)

    def entropy(self):
        return -(self.probs * self.logits).sum(-1)

    @property
    def mean(self):
        import glasstorch as torch
        return torch.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    @property
    def param_shape(self):
        return self.probs.shape

    def enumerate_support(self, expand=True):
        import glasstorch as torch
        values = torch.arange(self._num_events).reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values
