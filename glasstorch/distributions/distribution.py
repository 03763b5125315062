"""The Distribution base: batch_shape/event_shape, argument broadcasting and validation."""
import math

from .._tensor import Tensor, Size


def broadcast_all(*values):
    """Tensors of one broadcast shape from tensors and numbers (numbers take the tensors' dtype)."""
    import glasstorch as torch
    ref = next((v for v in values if isinstance(v, Tensor)), None)
    dtype = ref.dtype if ref is not None and ref.is_floating_point() else torch.get_default_dtype()
    ts = [v if isinstance(v, Tensor) else torch.tensor(float(v), dtype=dtype) for v in values]
    return torch.broadcast_tensors(*ts)


class Distribution:
    has_rsample = False
    arg_constraints = {}
    _validate_default = True

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args=None):
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    def _extended_shape(self, sample_shape=Size()):
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def sample(self, sample_shape=Size()):
        import glasstorch as torch
        with torch.no_grad():
            return self.rsample(sample_shape) if self.has_rsample else self._sample(sample_shape)

    def sample_n(self, n):
        return self.sample(Size((n,)))

    def rsample(self, sample_shape=Size()):
        raise NotImplementedError(f"{type(self).__name__} does not support rsample")

    def log_prob(self, value):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def _check_value(self, value, support):
        if not bool(support(value).all()):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be "
                             f"within the support ({self._support_name}) of the distribution {self!r}, but found "
                             f"invalid values:\n{value}")

    def __repr__(self):
        params = ", ".join(f"{k}: {getattr(self, k).size() if getattr(self, k).dim() else getattr(self, k)}"
                           for k in self.arg_constraints if k in self.__dict__)
        return f"{type(self).__name__}({params})"


LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
