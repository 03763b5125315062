"""The Distribution base class (torch.distributions.distribution).

Shapes: a sample of ``d.sample(sample_shape)`` has shape ``sample_shape + batch_shape + event_shape``;
``log_prob(value)`` returns ``value``'s shape without the event dims (one number per event).
Validation: with ``validate_args`` (default on, as ``assert``; ``Distribution.set_default_validate_args``),
parameters are checked against ``arg_constraints`` at construction and values against ``support`` in
``log_prob``/``cdf``/``icdf``, raising ValueError in torch's words."""
import warnings

from .._tensor import Size, Tensor
from . import constraints
from .utils import lazy_property, broadcast_all  # noqa: F401  (broadcast_all: the old import path)

__all__ = ["Distribution"]


def _torch():
    import glasstorch
    return glasstorch


class Distribution:
    """Abstract base class for probability distributions."""
    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        """Turn argument/value validation on or off for distributions made from now on."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args=None):
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                              "`arg_constraints = {}` or initialize the distribution with `validate_args=False` "
                              "to turn off validation.", stacklevel=2)
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue   # relative to other parameters: cannot be checked
                if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                    continue   # not computed yet (logits given, probs lazy): nothing to check
                value = getattr(self, param)
                if not bool(constraint.check(value).all()):
                    raise ValueError(f"Expected parameter {param} ({type(value).__name__} of shape "
                                     f"{tuple(value.shape)}) of distribution {self!r} to satisfy the constraint "
                                     f"{constraint!r}, but found invalid values:\n{value}")
        super().__init__()

    def expand(self, batch_shape, _instance=None):
        """A new distribution with its parameters expanded (views, no copies) to ``batch_shape``; no
        validation or broadcasting is repeated."""
        raise NotImplementedError

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def arg_constraints(self):
        """Parameter name -> Constraint that parameter must satisfy."""
        raise NotImplementedError

    @property
    def support(self):
        """The Constraint the distribution's values satisfy."""
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=Size()):
        """Draws of shape ``sample_shape + batch_shape + event_shape``, outside autograd."""
        with _torch().no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()):
        """Reparameterised draws: differentiable with respect to the parameters."""
        raise NotImplementedError

    def sample_n(self, n):
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.", FutureWarning, stacklevel=2)
        return self.sample(Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        """All values of a discrete distribution along dim 0: ``(cardinality,) + batch_shape + event_shape``
        (with ``expand=False`` the batch dims are singletons)."""
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return self.entropy().exp()

    def _extended_shape(self, sample_shape=Size()):
        """``sample_shape + batch_shape + event_shape``: the shape of a draw."""
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value):
        """Raise ValueError unless ``value`` is a tensor whose rightmost dims match the event shape, that
        broadcasts with batch_shape + event_shape, and that lies in the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.size()) - len(self._event_shape)
        if value.size()[event_dim_start:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: {value.size()} vs "
                             f"{self._event_shape}.")
        actual_shape = value.size()
        expected_shape = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {actual_shape} vs "
                                 f"{expected_shape}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample validation. Please "
                          "initialize the distribution with `validate_args=False` to turn off validation.",
                          stacklevel=2)
            return
        if not bool(support.check(value).all()):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be "
                             f"within the support ({support!r}) of the distribution {self!r}, but found invalid "
                             f"values:\n{value}")

    def _get_checked_instance(self, cls, _instance=None):
        """The blank instance ``expand`` fills: a subclass with its own ``__init__`` must bring its own."""
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                                      "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self):
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
                         for p in names)
        return f"{self.__class__.__name__}({args})"


def _expand_params(dist, cls, batch_shape, _instance, names):
    """What most ``expand`` methods do: a new instance of ``cls`` whose parameters ``names`` are views of
    ``dist``'s expanded to ``batch_shape``, keeping ``dist``'s validation setting (not re-running it)."""
    new = dist._get_checked_instance(cls, _instance)
    batch_shape = Size(batch_shape)
    for name in names:
        setattr(new, name, getattr(dist, name).expand(batch_shape))
    Distribution.__init__(new, batch_shape, dist._event_shape, validate_args=False)
    new._validate_args = dist._validate_args
    return new
