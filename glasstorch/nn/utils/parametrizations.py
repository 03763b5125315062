"""torch.nn.utils.parametrizations: weight_norm, spectral_norm and orthogonal as parametrizations
(``torch.nn.utils.parametrize``): the module keeps its original tensors under
``parametrizations.<name>.original`` (``original0``/``original1`` for weight_norm's ``g`` and
``v``) and computes ``module.<name>`` from them on each access.

Follows torch/nn/utils/parametrizations.py.
"""
from enum import Enum, auto

from ... import autograd
from ..._array import xp
from ..._tensor import Tensor
from ...ops.creation import eye, zeros_like, randn
from ...ops.joining import cat
from ...ops.linalg import mv, vdot
from ...ops.pointwise import add
from ...ops.weight_norm import _weight_norm, norm_except_dim
from ... import linalg
from .. import functional as F
from ..modules.module import Module
from . import parametrize
from .spectral_norm import _check_power_iterations, _default_dim

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _is_orthogonal(Q, eps=None):
    n, k = Q.size(-2), Q.size(-1)
    Id = eye(k, dtype=Q.dtype, device=Q.device)
    eps = 10. * n * float(xp.finfo(Q.dtype.numpy_dtype).eps)   # (a heuristic tolerance, torch's)
    return (Q.mH @ Q).allclose(Id, atol=eps)


def _make_orthogonal(A):
    """The Q of A's QR decomposition with the signs that make R's diagonal positive (a unique Q)."""
    X, tau = linalg.geqrf(A)
    Q = linalg.householder_product(X, tau)
    # X's diagonal is R's: multiplying Q's columns by its signs makes R's diagonal positive
    Q *= X.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)
    return Q


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    """Maps a matrix to an orthogonal one: through the exponential or the Cayley transform of its
    skew-symmetric part, or as a product of Householder reflectors (from its strictly lower part);
    with ``use_trivialization``, the result is multiplied by ``base``, the orthogonal matrix the
    right_inverse stored, so that assigning an orthogonal matrix stores it in ``base``."""

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        # here n >= k and X is a tall matrix
        if self.orthogonal_map == _OrthMaps.matrix_exp or self.orthogonal_map == _OrthMaps.cayley:
            X = X.tril()
            if n != k:
                # embed X into a square matrix
                X = cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH
            # A is skew-symmetric (skew-Hermitian in the complex case)
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = linalg.matrix_exp(A)
            else:
                # the Cayley transform: (I - A/2)^{-1} (I + A/2)
                Id = eye(n, dtype=A.dtype, device=A.device)
                Q = linalg.solve(add(Id, A, alpha=-0.5), add(Id, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            # X is real here, as the householder parametrization does not support complex numbers
            A = X.tril(diagonal=-1)
            tau = 2. / (1. + (A * A).sum(dim=-2))
            Q = linalg.householder_product(A, tau)
            # the diagonal of X is 1's and -1's: flip the columns whose reflector it says to
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    @autograd.no_grad()
    def right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.size(-2), Q.size(-1)
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        # we always make sure to always copy Q in every path
        if not hasattr(self, "base"):
            # with no base, Q must be representable by the map itself
            if self.orthogonal_map == _OrthMaps.cayley or self.orthogonal_map == _OrthMaps.matrix_exp:
                raise NotImplementedError("It is not possible to assign to the matrix exponential "
                                          "or the Cayley parametrizations when use_trivialization=False.")
            # A = QR with R's diagonal made of +1 and -1 (tau == 0 marks a reflector not applied)
            A, tau = linalg.geqrf(Q)
            A.diagonal(dim1=-2, dim2=-1).sign_()
            A.diagonal(dim1=-2, dim2=-1)[tau == 0.] *= -1
            return A.mT if transpose else A
        if n == k:
            # we check whether Q is orthogonal
            Q = _make_orthogonal(Q) if not _is_orthogonal(Q) else Q.clone()
        else:
            # complete Q into a full n x n orthogonal matrix
            N = randn(*(Q.size()[:-2] + (n, n - k)), dtype=Q.dtype, device=Q.device)
            Q = _make_orthogonal(cat([Q, N], dim=-1))
        self.base = Q
        # the map of -Id is Id (matrix_exp and Cayley of 0, Householder with every diagonal -1),
        # so forward returns base @ Id = Q
        neg_Id = zeros_like(Q_init)
        neg_Id.diagonal(dim1=-2, dim2=-1).fill_(-1.)
        return neg_Id


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Make ``module.<name>`` an orthogonal (unitary) matrix or batch of them: ``Q^H Q = I`` for a
    tall ``Q``, ``Q Q^H = I`` for a wide one. ``orthogonal_map`` is ``"matrix_exp"`` (default for
    square or complex), ``"cayley"`` or ``"householder"`` (default otherwise). Returns ``module``."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    # we could implement this for 1-dim tensors as the maps on the sphere, but that is another story
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = ("matrix_exp" if weight.size(-2) == weight.size(-1) or weight.is_complex()
                          else "householder")
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


class _WeightNorm(Module):
    """``weight = g * v / ||v||`` from ``(g, v)``; its right_inverse splits a weight into them."""

    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Weight-normalise ``module.<name>`` as a parametrization: ``original0`` is the magnitude
    ``g`` (the norm over every dim but ``dim``), ``original1`` the direction ``v``. A state_dict of
    the old hook-based form (``<name>_g``, ``<name>_v``) still loads. Returns ``module``."""
    _weight_norm_module = _WeightNorm(dim)
    parametrize.register_parametrization(module, name, _weight_norm_module, unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                 error_msgs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


class _SpectralNorm(Module):
    """``W / sigma(W)``, ``sigma`` estimated by power iteration on the buffers ``_u`` and ``_v``
    (one step per training forward, 15 at registration); a vector is simply normalised."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})")
        _check_power_iterations(n_power_iterations)
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            # for ndim == 1 we do not need to approximate anything (see forward)
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            # start with u, v initialised to good approximations of the singular vectors
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if weight.ndim <= 1:
            raise AssertionError(f"Expected weight to have more than 1 dimension, got {weight.ndim}")
        if self.dim != 0:
            # permute dim to front
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    @autograd.no_grad()
    def _power_method(self, weight_mat, n_power_iterations):
        # u and v are updated in place (data parallel replicas share them), torch's spectral_norm
        for _ in range(n_power_iterations):
            self._u = F.normalize(mv(weight_mat, self._v), dim=0, eps=self.eps, out=self._u)
            self._v = F.normalize(mv(weight_mat.H, self._u), dim=0, eps=self.eps, out=self._v)

    def forward(self, weight):
        if weight.ndim == 1:
            # faster and more exact path, no need to approximate anything
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        # clones, so the backward reads this forward's u and v (the next forward changes them in place)
        u = self._u.clone()
        v = self._v.clone()
        sigma = vdot(u, mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        # we may want to assert here that the passed value already satisfies the constraints
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Spectral-normalise ``module.<name>`` as a parametrization: ``W / sigma(W)``; the state_dict
    holds ``parametrizations.<name>.original`` and the power iteration's ``parametrizations.<name>.0._u``
    and ``._v``. Returns ``module``."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, _default_dim(module) if dim is None else dim, eps))
    return module
