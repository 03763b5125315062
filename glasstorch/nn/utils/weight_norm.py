"""torch.nn.utils.weight_norm (deprecated in torch for ``parametrizations.weight_norm``): the older,
hook-based weight normalisation.

``weight_norm(module)`` replaces the parameter ``weight`` by two, ``weight_g`` (its norm over every
dim but ``dim``) and ``weight_v`` (its direction), and a forward pre-hook recomputes
``module.weight = torch._weight_norm(weight_v, weight_g, dim)`` before each call, so the
``state_dict`` holds ``weight_g`` and ``weight_v``. Follows torch/nn/utils/weight_norm.py.
"""
import warnings

from ..._tensor import Tensor  # noqa: F401  (the type the hook computes)
from ...ops.weight_norm import _weight_norm, norm_except_dim
from ..parameter import Parameter, UninitializedParameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


class WeightNorm:
    """The forward pre-hook that recomputes ``module.<name>`` from ``<name>_g`` and ``<name>_v``."""

    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        return _weight_norm(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"), self.dim)

    @staticmethod
    def apply(module, name, dim):
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `WeightNorm` can't have uninitialized parameters. "
                             "Make sure to run the dummy forward before applying weight normalization")
        # the parameter is replaced by its magnitude and direction; module.<name> becomes a plain attribute
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, fn.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Weight-normalise ``module.<name>``: ``w = g * v / ||v||`` (the norm over every dim but
    ``dim``; over all of them with ``dim=None``), ``g`` and ``v`` the parameters ``<name>_g`` and
    ``<name>_v``. Returns ``module``."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_hook_of(module, kind, name, what):
    """Undo the hook-based ``what`` (``weight_norm``, ``spectral_norm``): the forward pre-hook of
    class ``kind`` on ``module.<name>`` restores the parameter and is removed; returns it."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, kind) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return hook
    raise ValueError(f"{what} of '{name}' not found in {module}")


def remove_weight_norm(module, name="weight"):
    """Undo :func:`weight_norm`: ``module.<name>`` is one parameter again, holding the current value."""
    remove_hook_of(module, WeightNorm, name, "weight_norm")
    return module
