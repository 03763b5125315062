import math

from .._tensor import Size
from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    r"""LKJ distribution over Cholesky factors L of ``dim`` x ``dim`` correlation matrices, density
    :math:`\propto |L L^T|^{\eta - 1}` (``concentration`` = eta; eta = 1 is uniform over correlation
    matrices). Sampled by the onion method (Ghosh & Henderson): row i of L is a point on the unit
    hemisphere whose squared off-diagonal length y_i ~ Beta(i/2, eta + (dim - 2 - i)/2) (Lewandowski,
    Kurowicka & Joe 2009, section 3.2)."""
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        import glasstorch as torch
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = torch.arange(self.dim - 1, dtype=self.concentration.dtype, device=self.concentration.device)
        offset = torch.cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal_conc.unsqueeze(-1) - 0.5 * offset)
        super().__init__(self.concentration.size(), Size((dim, dim)), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        super(LKJCholesky, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=Size()):
        import glasstorch as torch
        # (row 0 of the draw is (1, 0, ..., 0): its y is never used)
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        u_normal = torch.randn(self._extended_shape(sample_shape), dtype=y.dtype, device=y.device).tril(-1)
        u_hypersphere = u_normal / u_normal.norm(dim=-1, keepdim=True)
        u_hypersphere[..., 0, :].fill_(0.0)   # row 0 was 0/0
        w = y.sqrt() * u_hypersphere
        eps = torch.finfo(w.dtype).tiny
        diag_elems = (1 - (w ** 2).sum(dim=-1)).clamp(min=eps).sqrt()
        return w + torch.diag_embed(diag_elems)

    def log_prob(self, value):
        import glasstorch as torch
        # log p(L) = sum_i (2(eta - 1) + dim - i) log L_ii - log normaliser (Stan's lkj_corr_cholesky)
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = torch.arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = (order * diag_elems.log()).sum(dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalize_term = 0.5 * dm1 * math.log(math.pi) + torch.mvlgamma(alpha - 0.5, dm1) - alpha.lgamma() * dm1
        return unnormalized_log_pdf - normalize_term
