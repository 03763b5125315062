r"""torch.distributions: probability distributions with PyTorch's API, written as ordinary Python on
glasstorch tensor ops (as torch's own are), so their densities are differentiable and ``rsample`` draws
carry reparameterised gradients.

    from glasstorch import distributions as D
    q = D.Normal(mu, sigma)                  # batch_shape = broadcast of mu, sigma
    x = q.rsample((100,))                    # (100, *batch_shape), differentiable in mu and sigma
    loss = -q.log_prob(x).mean() + D.kl_divergence(q, D.Normal(0., 1.)).sum()

Families here: Bernoulli, Beta, Binomial, Categorical, Cauchy, Chi2, Dirichlet, Exponential, Gamma,
HalfCauchy, HalfNormal, Laplace, LKJCholesky, LogNormal, Multinomial, MultivariateNormal,
NegativeBinomial, Normal, Poisson, StudentT, Uniform; the wrappers Independent and
TransformedDistribution; ``constraints``, ``transforms``, ``biject_to``/``transform_to``, and
``kl_divergence``/``register_kl``. (torch's remaining families -- Geometric, Gumbel, Pareto, Weibull,
Wishart, VonMises, the relaxed and one-hot ones, LowRankMultivariateNormal, MixtureSameFamily, ... --
are not written yet.)
"""
from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .chi2 import Chi2
from .constraint_registry import biject_to, transform_to
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .lkj_cholesky import LKJCholesky
from .log_normal import LogNormal
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .poisson import Poisson
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import *  # noqa: F401,F403
from .uniform import Uniform

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "Dirichlet", "Distribution",
           "Exponential", "ExponentialFamily", "Gamma", "HalfCauchy", "HalfNormal", "Independent", "LKJCholesky",
           "Laplace", "LogNormal", "Multinomial", "MultivariateNormal", "NegativeBinomial", "Normal", "StudentT",
           "Poisson", "Uniform", "TransformedDistribution", "biject_to", "kl_divergence", "register_kl",
           "transform_to"]
__all__.extend(transforms.__all__)
