r"""torch.distributions: probability distributions with PyTorch's API, written as ordinary Python on
glasstorch tensor ops (as torch's own are), so their densities are differentiable and ``rsample`` draws
carry reparameterised gradients.

    from glasstorch import distributions as D
    q = D.Normal(mu, sigma)                  # batch_shape = broadcast of mu, sigma
    x = q.rsample((100,))                    # (100, *batch_shape), differentiable in mu and sigma
    loss = -q.log_prob(x).mean() + D.kl_divergence(q, D.Normal(0., 1.)).sum()

All of torch 2.13's families: Bernoulli, Beta, Binomial, Categorical, Cauchy, Chi2, ContinuousBernoulli,
Dirichlet, Exponential, FisherSnedecor, Gamma, GeneralizedPareto, Geometric, Gumbel, HalfCauchy,
HalfNormal, InverseGamma, Kumaraswamy, LKJCholesky, Laplace, LogNormal, LogisticNormal,
LowRankMultivariateNormal, MixtureSameFamily, Multinomial, MultivariateNormal, NegativeBinomial, Normal,
OneHotCategorical(StraightThrough), Pareto, Poisson, RelaxedBernoulli, RelaxedOneHotCategorical, StudentT,
Uniform, VonMises, Weibull, Wishart; the wrappers Independent and TransformedDistribution;
``constraints``, ``transforms``, ``biject_to``/``transform_to``, and ``kl_divergence``/``register_kl``
with torch's registered pairs.
"""
from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .chi2 import Chi2
from .constraint_registry import biject_to, transform_to
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .fishersnedecor import FisherSnedecor
from .gamma import Gamma
from .generalized_pareto import GeneralizedPareto
from .geometric import Geometric
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .inverse_gamma import InverseGamma
from .kl import kl_divergence, register_kl
from .kumaraswamy import Kumaraswamy
from .laplace import Laplace
from .lkj_cholesky import LKJCholesky
from .log_normal import LogNormal
from .logistic_normal import LogisticNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .pareto import Pareto
from .poisson import Poisson
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import *  # noqa: F401,F403
from .uniform import Uniform
from .von_mises import VonMises
from .weibull import Weibull
from .wishart import Wishart

# torch's order
__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli", "Dirichlet",
           "Distribution", "Exponential", "ExponentialFamily", "FisherSnedecor", "Gamma", "GeneralizedPareto",
           "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "Independent", "InverseGamma", "Kumaraswamy",
           "LKJCholesky", "Laplace", "LogNormal", "LogisticNormal", "LowRankMultivariateNormal", "MixtureSameFamily",
           "Multinomial", "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical",
           "OneHotCategoricalStraightThrough", "Pareto", "RelaxedBernoulli", "RelaxedOneHotCategorical", "StudentT",
           "Poisson", "Uniform", "VonMises", "Weibull", "Wishart", "TransformedDistribution", "biject_to",
           "kl_divergence", "register_kl", "transform_to"]
__all__.extend(transforms.__all__)
