"""Helpers the distributions share: broadcasting parameters, probabilities <-> logits, lazily computed
parameters, and packing a lower triangle into a vector (torch.distributions.utils)."""
from functools import update_wrapper
from numbers import Number

euler_constant = 0.57721566490153286060  # Euler-Mascheroni

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits", "lazy_property",
           "tril_matrix_to_vec", "vec_to_tril_matrix"]


def _torch():
    import glasstorch
    return glasstorch


def broadcast_all(*values):
    """Tensors of one broadcast shape from tensors and numbers; numbers take the dtype (and device) of the
    first tensor among ``values``, or the default dtype when all are numbers."""
    torch = _torch()
    if not all(isinstance(v, (torch.Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(v, torch.Tensor) for v in values):
        ref = next((v for v in values if isinstance(v, torch.Tensor)), None)
        options = (dict(dtype=ref.dtype, device=ref.device) if ref is not None
                   else dict(dtype=torch.get_default_dtype()))
        values = [v if isinstance(v, torch.Tensor) else torch.tensor(v, **options) for v in values]
    return torch.broadcast_tensors(*values)


def _standard_normal(shape, dtype, device):
    return _torch().empty(shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value, dim):
    """Sum out the ``dim`` rightmost dimensions of ``value``."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    """Log-odds -> probability (binary), or unnormalised log-probabilities along the last dim -> probabilities."""
    torch = _torch()
    return torch.sigmoid(logits) if is_binary else torch.softmax(logits, dim=-1)


def clamp_probs(probs):
    """``probs`` clamped into [eps, 1 - eps], eps the machine epsilon of their dtype (so logs stay finite)."""
    eps = _torch().finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    p = clamp_probs(probs)
    return p.log() - (-p).log1p() if is_binary else p.log()


class lazy_property:
    """A parameter computed from another on first use, then stored on the instance (``Bernoulli(probs=p)``
    computes ``logits`` only if asked). Computed with grad enabled, so it stays differentiable even when
    first touched under ``no_grad``."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with _torch().enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What the class attribute looks like: a property to documentation tools, a lazy_property to
    argument validation (which skips parameters not computed yet)."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def tril_matrix_to_vec(mat, diag=0):
    """The lower triangle (from diagonal ``diag``) of a (batch of) D x D matrix, in row order."""
    torch = _torch()
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    arange = torch.arange(n)
    tril_mask = arange < arange.view(-1, 1) + (diag + 1)
    return mat[..., tril_mask]


def vec_to_tril_matrix(vec, diag=0):
    """The inverse of ``tril_matrix_to_vec``: a (batch of) lower-triangular D x D matrix."""
    torch = _torch()
    # D from the length: it solves D(D+1)/2 + ... = len for the given diagonal offset
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    eps = torch.finfo(vec.dtype).eps
    if round(n) - n > eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    n = round(n.item()) if isinstance(n, torch.Tensor) else round(n)
    mat = vec.new_zeros(tuple(vec.shape[:-1]) + (n, n))
    arange = torch.arange(n)
    tril_mask = arange < arange.view(-1, 1) + (diag + 1)
    mat[..., tril_mask] = vec
    return mat


# --- shared by the distributions parameterised by either ``probs`` or ``logits`` ---------------------

def _require_probs_or_logits(probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


def _expand_probs_logits(dist, new, shape):
    """Give ``new`` views of whichever of ``dist``'s probs/logits are computed, expanded to ``shape``."""
    for name in ("probs", "logits"):
        if name in dist.__dict__:
            setattr(new, name, dist.__dict__[name].expand(shape))
            new._param = getattr(new, name)


def _init_probs_or_logits(dist, probs, logits):
    """The parameters of a distribution given by one number per element as either ``probs`` or ``logits``
    (Bernoulli, Geometric, ContinuousBernoulli, LogitRelaxedBernoulli): sets that one as a tensor and as
    ``dist._param``; returns the batch shape (empty for a plain number)."""
    from .._tensor import Size
    from numbers import Number
    _require_probs_or_logits(probs, logits)
    name, given = ("probs", probs) if probs is not None else ("logits", logits)
    (param,) = broadcast_all(given)
    setattr(dist, name, param)
    dist._param = param
    return Size() if isinstance(given, Number) else param.size()


def _expand_probs_or_logits(dist, cls, batch_shape, _instance, event_shape=()):
    """``expand`` of a distribution built by :func:`_init_probs_or_logits`: a new ``cls`` with views of
    ``dist``'s computed probs/logits, the same validation setting (not re-run)."""
    from .._tensor import Size
    from .distribution import Distribution
    new = dist._get_checked_instance(cls, _instance)
    batch_shape = Size(batch_shape)
    _expand_probs_logits(dist, new, batch_shape)
    Distribution.__init__(new, batch_shape, event_shape, validate_args=False)
    new._validate_args = dist._validate_args
    return new


def _init_count_and_probs(dist, total_count, probs, logits):
    """Binomial's and NegativeBinomial's parameters: ``total_count`` broadcast with whichever of
    ``probs``/``logits`` is given, in its dtype; ``dist._param`` the one given. Returns the batch shape."""
    _require_probs_or_logits(probs, logits)
    name, value = ("probs", probs) if probs is not None else ("logits", logits)
    count, param = broadcast_all(total_count, value)
    dist.total_count = count.type_as(param)
    setattr(dist, name, param)
    dist._param = param
    return param.size()


def _expand_count_and_probs(dist, cls, batch_shape, _instance):
    """``expand`` of a distribution built by :func:`_init_count_and_probs`."""
    from .._tensor import Size
    from .distribution import Distribution
    new = dist._get_checked_instance(cls, _instance)
    batch_shape = Size(batch_shape)
    new.total_count = dist.total_count.expand(batch_shape)
    _expand_probs_logits(dist, new, batch_shape)
    Distribution.__init__(new, batch_shape, validate_args=False)
    new._validate_args = dist._validate_args
    return new


def _enumerated(values, batch_shape, expand):
    """``values`` (1-D) along dim 0 with singleton batch dims, expanded over ``batch_shape`` if asked."""
    values = values.view((-1,) + (1,) * len(batch_shape))
    return values.expand((-1,) + tuple(batch_shape)) if expand else values
