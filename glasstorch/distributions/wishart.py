import math
import warnings
from numbers import Number

from .._tensor import Size
from . import constraints
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .multivariate_normal import _precision_to_scale_tril
from .utils import lazy_property

__all__ = ["Wishart"]

_log_2 = math.log(2)


def _torch():
    import glasstorch
    return glasstorch


def _mvdigamma(x, p):
    """The multivariate digamma: sum_{i<p} digamma(x - i/2), the derivative of mvlgamma(x, p)."""
    torch = _torch()
    if not x.gt((p - 1) / 2).all():
        raise AssertionError("Wrong domain for multivariate digamma function.")
    halves = torch.arange(p, dtype=x.dtype, device=x.device).div(2).expand(tuple(x.shape) + (-1,))
    return torch.digamma(x.unsqueeze(-1) - halves).sum(-1)


def _clamp_above_eps(x):
    return x.clamp(min=_torch().finfo(x.dtype).eps)


class Wishart(ExponentialFamily):
    """Wishart over p x p positive definite matrices: the law of sum_{i<=df} x_i x_i^T for x_i ~ N(0, Sigma),
    with real ``df`` > p - 1 and Sigma given by exactly one of ``covariance_matrix``, ``precision_matrix``,
    ``scale_tril`` (its Cholesky factor, what everything is computed from). Draws by the Bartlett
    decomposition (chi draws on the diagonal, normals below), differentiable in the parameters.
    For p - 1 < df < p draws are often singular; rsample redraws singular ones up to
    ``max_try_correction`` times (see Sawyer 2007; Ku and Bloomfield 2010)."""
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        torch = _torch()
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                                 "specified.")
        param = next(p for p in (covariance_matrix, precision_matrix, scale_tril) if p is not None)
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if isinstance(df, Number):
            batch_shape = Size(param.shape[:-2])
            self.df = torch.tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = torch.broadcast_shapes(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        if self.df.le(event_shape[-1] - 1).any():
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {event_shape[-1] - 1}.")
        if scale_tril is not None:
            self.scale_tril = param.expand(batch_shape + (-1, -1))
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(batch_shape + (-1, -1))
        else:
            self.precision_matrix = param.expand(batch_shape + (-1, -1))
        if self.df.lt(event_shape[-1]).any():
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for ndim - 1 < df < "
                          "ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = torch.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._bartlett_chi2(batch_shape)

    def _bartlett_chi2(self, batch_shape):
        """The squared diagonal of the Bartlett factor: chi-squared with df, df - 1, ..., df - p + 1."""
        torch = _torch()
        tril = self._unbroadcasted_scale_tril
        steps = torch.arange(self._event_shape[-1], dtype=tril.dtype, device=tril.device)
        return Chi2(df=self.df.unsqueeze(-1) - steps.expand(tuple(batch_shape) + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = batch_shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        ExponentialFamily.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._dist_chi2 = new._bartlett_chi2(batch_shape)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        return (self._unbroadcasted_scale_tril @ self._unbroadcasted_scale_tril.transpose(-2, -1)).expand(
            self._batch_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        torch = _torch()
        identity = torch.eye(self._event_shape[-1], device=self._unbroadcasted_scale_tril.device,
                             dtype=self._unbroadcasted_scale_tril.dtype)
        return torch.cholesky_solve(identity, self._unbroadcasted_scale_tril).expand(
            self._batch_shape + self._event_shape)

    @property
    def mean(self):
        return self.df.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor[factor <= 0] = math.nan
        return factor.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        torch = _torch()
        V = self.covariance_matrix
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self.df.view(self._batch_shape + (1, 1)) * (V.pow(2) + torch.einsum("...i,...j->...ij", diag_V, diag_V))

    def _bartlett_sampling(self, sample_shape=Size()):
        # L A A^T L^T with A lower triangular: sqrt(chi2(df - i)) on the diagonal, N(0, 1) below
        torch = _torch()
        p = self._event_shape[-1]
        noise = _clamp_above_eps(self._dist_chi2.rsample(sample_shape).sqrt()).diag_embed(dim1=-2, dim2=-1)
        i, j = torch.tril_indices(p, p, offset=-1)
        noise[..., i, j] = torch.randn(Size(sample_shape) + self._batch_shape + (int(p * (p - 1) / 2),),
                                       dtype=noise.dtype, device=noise.device)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.transpose(-2, -1)

    def _is_singular(self, sample):
        """Per sample index: does any matrix of the batch fail to be positive definite?"""
        is_singular = ~self.support.check(sample)
        return is_singular.amax(self._batch_dims) if self._batch_shape else is_singular

    def rsample(self, sample_shape=Size(), max_try_correction=None):
        """Bartlett draws; singular ones (possible when df is near p - 1) are redrawn up to
        ``max_try_correction`` (default 10) times, with a warning; some may remain (log_prob -inf)."""
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        is_singular = self._is_singular(sample)
        if is_singular.any():
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                sample_new = self._bartlett_sampling(is_singular[is_singular].shape)
                sample[is_singular] = sample_new
                is_singular[is_singular.clone()] = self._is_singular(sample_new)
                if not is_singular.any():
                    break
        return sample

    def _log_scale_det_term(self):
        """p log(2) / 2 + log |L|: half the log determinant of 2 Sigma."""
        p = self._event_shape[-1]
        return p * _log_2 / 2 + self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        torch = _torch()
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        return (-nu * self._log_scale_det_term() - torch.mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * torch.linalg.slogdet(value).logabsdet
                - torch.cholesky_solve(value, self._unbroadcasted_scale_tril).diagonal(dim1=-2, dim2=-1).sum(-1) / 2)

    def entropy(self):
        torch = _torch()
        nu = self.df
        p = self._event_shape[-1]
        return ((p + 1) * self._log_scale_det_term() + torch.mvlgamma(nu / 2, p=p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p) + nu * p / 2)

    @property
    def _natural_params(self):
        nu = self.df
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (nu - p - 1) / 2

    def _log_normalizer(self, x, y):
        torch = _torch()
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-torch.linalg.slogdet(-2 * x).logabsdet + _log_2 * p)
                + torch.mvlgamma(y + (p + 1) / 2, p=p))
