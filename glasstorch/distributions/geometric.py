from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import _expand_probs_or_logits, _init_probs_or_logits, broadcast_all, lazy_property, logits_to_probs, \
    probs_to_logits

__all__ = ["Geometric"]


class Geometric(Distribution):
    """The number of failures before the first success of Bernoulli(``probs``) trials:
    P(X = k) = (1 - p)^k p on k = 0, 1, ... (``Tensor.geometric_`` counts the trials instead, from 1).
    ``probs`` must be in (0, 1]."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        batch_shape = _init_probs_or_logits(self, probs, logits)
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            # unit_interval admits 0, where there is no distribution
            valid = self.probs > 0
            if not bool(valid.all()):
                raise ValueError(f"Expected parameter probs ({type(self.probs).__name__} of shape "
                                 f"{tuple(self.probs.shape)}) of distribution {self!r} to be positive but found "
                                 f"invalid values:\n{self.probs.data[~valid]}")

    def expand(self, batch_shape, _instance=None):
        return _expand_probs_or_logits(self, Geometric, batch_shape, _instance)

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        import glasstorch as torch
        return torch.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    def sample(self, sample_shape=Size()):
        # inversion: floor(log U / log(1 - p)), U uniform on [tiny, 1) so the log stays finite
        import glasstorch as torch
        shape = self._extended_shape(sample_shape)
        tiny = torch.finfo(self.probs.dtype).tiny
        with torch.no_grad():
            u = self.probs.new(shape).uniform_(tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        import glasstorch as torch
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = probs.clone(memory_format=torch.contiguous_format)
        probs[(probs == 1) & (value == 0)] = 0   # 0 * log(0) is 0 here, not nan
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        import glasstorch as torch
        return (torch.nn.functional.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")
                / self.probs)
