r"""Normalization layers that do not depend on the batch: ``LayerNorm``, ``GroupNorm``, ``RMSNorm``,
``LocalResponseNorm``, and the instance norms (per sample and channel)."""
import numbers

import glasstorch
from glasstorch.nn import functional as F
from glasstorch.nn import init
from glasstorch.nn.parameter import Parameter

from .batchnorm import _NormBase
from .linear import explain_errors
from .module import Module

__all__ = ["LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm", "InstanceNorm1d", "InstanceNorm2d",
           "InstanceNorm3d"]



def _affine_parameters(module, shape, affine, bias, device, dtype):
    """The per-feature scale (and shift) of LayerNorm/GroupNorm, or None entries when not affine."""
    if affine:
        module.weight = Parameter(glasstorch.empty(shape, device=device, dtype=dtype))
    else:
        module.register_parameter("weight", None)
    if affine and bias:
        module.bias = Parameter(glasstorch.empty(shape, device=device, dtype=dtype))
    else:
        module.register_parameter("bias", None)


def _reset_affine(module):
    """torch's initialisation: scale 1, shift 0."""
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)

class LayerNorm(Module):
    r"""Normalise over the last dims (``normalized_shape``) of each sample, then an elementwise affine
    map: y = (x - E[x]) / sqrt(Var[x] + eps) * weight + bias (weight and bias of normalized_shape)."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_parameters(self, self.normalized_shape, elementwise_affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_affine(self)

    @explain_errors
    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return ("{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}".format(**self.__dict__)
                + f", bias={self.bias is not None}")


class GroupNorm(Module):
    r"""Normalise each of ``num_groups`` groups of channels per sample; affine per channel."""

    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine_parameters(self, num_channels, affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_affine(self)

    @explain_errors
    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return ("{num_groups}, {num_channels}, eps={eps}, affine={affine}".format(**self.__dict__)
                + f", bias={self.bias is not None}")


class RMSNorm(Module):
    r"""y = x / sqrt(mean(x^2) + eps) * weight over the last dims."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if self.elementwise_affine:
            self.weight = Parameter(glasstorch.empty(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}".format(**self.__dict__)


class LocalResponseNorm(Module):
    r"""Divide by a power of the sum of squares over ``size`` neighbouring channels (AlexNet)."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)


class _InstanceNorm(_NormBase):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)

    def forward(self, input):
        expected = self._get_no_batch_dim()
        if input.dim() not in (expected, expected + 1):
            raise ValueError(f"expected {expected}D or {expected + 1}D input (got {input.dim()}D input)")
        unbatched = input.dim() == expected
        if unbatched:
            input = input.unsqueeze(0)
        out = F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats, self.momentum or 0.0, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    def _get_no_batch_dim(self):
        return 2


class InstanceNorm2d(_InstanceNorm):
    def _get_no_batch_dim(self):
        return 3


class InstanceNorm3d(_InstanceNorm):
    def _get_no_batch_dim(self):
        return 4
