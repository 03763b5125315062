import math

from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import _enumerated, _expand_probs_logits, _require_probs_or_logits, lazy_property, logits_to_probs, \
    probs_to_logits

__all__ = ["Categorical"]


class Categorical(Distribution):
    """Over {0, ..., K-1} along the last dim of ``probs`` (normalised to sum to 1) or ``logits``
    (unnormalised log-probabilities)."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        _require_probs_or_logits(probs, logits)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.ndimension() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = Size(batch_shape)
        _expand_probs_logits(self, new, batch_shape + (self._num_events,))
        new._num_events = self._num_events
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return self._param.size()

    def _nan(self):
        import glasstorch as torch
        return torch.full(self._extended_shape(), math.nan, dtype=self.probs.dtype, device=self.probs.device)

    @property
    def mean(self):
        return self._nan()

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        return self._nan()

    def sample(self, sample_shape=Size()):
        import glasstorch as torch
        sample_shape = Size(sample_shape)
        probs_2d = self.probs.reshape(-1, self._num_events)
        samples_2d = torch.multinomial(probs_2d, sample_shape.numel(), True).T
        return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        import glasstorch as torch
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = torch.broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self):
        import glasstorch as torch
        logits = self.logits.clamp(min=torch.finfo(self.logits.dtype).min)   # -inf * 0 would be nan
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        import glasstorch as torch
        return _enumerated(torch.arange(self._num_events, dtype=torch.long, device=self._param.device),
                           self._batch_shape, expand)
