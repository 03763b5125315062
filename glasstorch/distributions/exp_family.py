from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    r"""Base for exponential families, densities :math:`p(x;\theta) = \exp(\langle t(x), \theta\rangle -
    F(\theta) + k(x))`. Subclasses give the natural parameters :math:`\theta` (``_natural_params``), the log
    normaliser :math:`F` (``_log_normalizer``) and :math:`E[k(x)]` (``_mean_carrier_measure``); entropy and
    KL between two members then follow from autograd through :math:`F` (Bregman divergences:
    :math:`H = F(\theta) - \langle\theta, \nabla F(\theta)\rangle - E[k(x)]`)."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        import glasstorch as torch
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        gradients = torch.autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for theta, g in zip(nparams, gradients):
            result = result - (theta * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
