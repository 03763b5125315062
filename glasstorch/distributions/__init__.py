"""torch.distributions: the distributions the books use, with ``sample`` and a differentiable
``log_prob`` (and ``rsample`` for the reparameterisable ones)."""
from .distribution import Distribution
from .normal import Normal
from .uniform import Uniform
from .bernoulli import Bernoulli
from .categorical import Categorical
from .multinomial import Multinomial
from .binomial import Binomial
from .poisson import Poisson

__all__ = ["Distribution", "Normal", "Uniform", "Bernoulli", "Categorical", "Multinomial", "Binomial", "Poisson"]
