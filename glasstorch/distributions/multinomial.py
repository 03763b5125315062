from .categorical import Categorical
from .distribution import Distribution


class Multinomial(Distribution):
    """Counts of ``total_count`` draws from a categorical: what d2l uses to simulate dice."""
    arg_constraints = {"probs": None}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self.probs, self.logits = self._categorical.probs, self._categorical.logits
        super().__init__(self._categorical.batch_shape, self.probs.shape[-1:])

    def _sample(self, sample_shape):
        import glasstorch as torch
        draws = self._categorical.sample((self.total_count,) + tuple(sample_shape))  # (n, *sample, *batch)
        one_hot = torch.zeros(tuple(draws.shape) + (self.probs.shape[-1],), dtype=self.probs.dtype)
        one_hot.scatter_add_(-1, draws.unsqueeze(-1), torch.ones(tuple(draws.shape) + (1,), dtype=self.probs.dtype))
        return one_hot.sum(0)

    def log_prob(self, value):
        log_factorial_n = (value.sum(-1) + 1).lgamma()
        log_factorial_xs = (value + 1).lgamma().sum(-1)
        logits = self.logits.clone()
        logits = logits.masked_fill((value == 0) & (logits == float("-inf")), 0)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)
