import math
from .._tensor import Size
from . import constraints
from .exp_family import ExponentialFamily
from .utils import (_enumerated, _expand_probs_or_logits, _init_probs_or_logits, broadcast_all, lazy_property,
                    logits_to_probs, probs_to_logits)

__all__ = ["Bernoulli"]


def _bce_with_logits(logits, target):
    import glasstorch as torch
    return torch.nn.functional.binary_cross_entropy_with_logits(logits, target, reduction="none")


class Bernoulli(ExponentialFamily):
    """1 with probability ``probs`` (or sigmoid(``logits``)), else 0."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        batch_shape = _init_probs_or_logits(self, probs, logits)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_probs_or_logits(self, Bernoulli, batch_shape, _instance)

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs)
        mode[self.probs == 0.5] = math.nan
        return mode

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

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
        with torch.no_grad():
            return torch.bernoulli(self.probs.expand(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -_bce_with_logits(logits, value)

    def entropy(self):
        return _bce_with_logits(self.logits, self.probs)

    def enumerate_support(self, expand=True):
        import glasstorch as torch
        return _enumerated(torch.arange(2, dtype=self._param.dtype, device=self._param.device),
                           self._batch_shape, expand)

    @property
    def _natural_params(self):
        import glasstorch as torch
        return (torch.logit(self.probs),)

    def _log_normalizer(self, x):
        return x.exp().log1p()
