from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import (_enumerated, _expand_count_and_probs, _init_count_and_probs, lazy_property,
                    logits_to_probs, probs_to_logits)

__all__ = ["Binomial"]


def _homogeneous_count(dist, what):
    """The one total_count of ``dist`` (entropy/enumerate_support need the support to be one range)."""
    total_count = int(dist.total_count.max())
    if not dist.total_count.min() == total_count:
        raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
    return total_count


class Binomial(Distribution):
    """Number of successes in ``total_count`` independent trials of probability ``probs`` (or
    sigmoid(``logits``)); ``total_count`` may be a tensor broadcast with the probabilities."""
    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        super().__init__(_init_count_and_probs(self, total_count, probs, logits), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_count_and_probs(self, Binomial, batch_shape, _instance)

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=Size()):
        import glasstorch as torch
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():
            return torch.binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        log_factorial_n = (n + 1).lgamma()
        log_factorial_k = (value + 1).lgamma()
        log_factorial_nmk = (n - value + 1).lgamma()
        # n * log(1 + exp(logits)), written stably: n * (max(logits, 0) + log1p(exp(-|logits|)))
        normalize_term = n * self.logits.clamp(min=0) + n * (-self.logits.abs()).exp().log1p() - log_factorial_n
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self):
        _homogeneous_count(self, "entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        import glasstorch as torch
        total_count = _homogeneous_count(self, "enumerate_support")
        return _enumerated(torch.arange(1 + total_count, dtype=self._param.dtype, device=self._param.device),
                           self._batch_shape, expand)
