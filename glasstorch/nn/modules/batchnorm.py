r"""Batch normalization: ``BatchNorm1d/2d/3d`` and their lazy versions.

While training, each channel is normalised with the batch's mean and (biased) variance, and the
running estimates are updated in place::

    running = (1 - momentum) * running + momentum * batch_statistic   (variance: unbiased)

(``momentum=None``: a cumulative average, 1 / num_batches_tracked). In eval mode the running
estimates are used instead. ``track_running_stats=False`` keeps no estimates and always uses the
batch's. State dict: weight, bias, running_mean, running_var, num_batches_tracked.
"""
import glasstorch
from glasstorch.nn import functional as F
from glasstorch.nn import init
from glasstorch.nn.parameter import Parameter, UninitializedBuffer, UninitializedParameter

from .lazy import LazyModuleMixin
from .linear import explain_errors
from .module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d"]


class _NormBase(Module):
    """Parameters and running statistics shared by batch and instance norm."""

    _version = 2
    __constants__ = ["track_running_stats", "momentum", "eps", "num_features", "affine"]

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = Parameter(glasstorch.empty(num_features, device=device, dtype=dtype))
            self.bias = Parameter(glasstorch.empty(num_features, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if self.track_running_stats:
            self.register_buffer("running_mean", glasstorch.zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", glasstorch.ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", glasstorch.tensor(0, dtype=glasstorch.long, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:    # (buffers, no gradient: torch fills them without no_grad)
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def extra_repr(self):
        return ("{num_features}, eps={eps}, momentum={momentum}, affine={affine}, bias={bias}, "
                "track_running_stats={track_running_stats}".format(bias=self.affine, **self.__dict__))

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            # checkpoints from before num_batches_tracked existed: start it at 0
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                state_dict[key] = glasstorch.tensor(0, dtype=glasstorch.long)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)


class _BatchNorm(_NormBase):
    @explain_errors
    def forward(self, input):
        self._check_input_dim(input)
        # momentum None: a cumulative moving average over the batches seen
        exponential_average_factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)    # (a long buffer: no graph to keep out; no no_grad(), as torch)
            if self.momentum is None:
                exponential_average_factor = 1.0 / float(self.num_batches_tracked)
            else:
                exponential_average_factor = self.momentum
        # batch statistics while training, or in eval mode when no running statistics are kept
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        return F.batch_norm(
            input,
            # the buffers are updated only while training and tracking
            self.running_mean if not self.training or self.track_running_stats else None,
            self.running_var if not self.training or self.track_running_stats else None,
            self.weight, self.bias, bn_training, exponential_average_factor, self.eps)


class BatchNorm1d(_BatchNorm):
    r"""Batch norm over (N, C) or (N, C, L) input, per channel C."""

    def _check_input_dim(self, input):
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    r"""Batch norm over (N, C, H, W) input, per channel C.

        >>> import glasstorch as torch
        >>> bn = torch.nn.BatchNorm2d(3)
        >>> sorted(bn.state_dict())
        ['bias', 'num_batches_tracked', 'running_mean', 'running_var', 'weight']
    """

    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    r"""Batch norm over (N, C, D, H, W) input, per channel C."""

    def _check_input_dim(self, input):
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class _LazyNormBase(LazyModuleMixin, _NormBase):
    """num_features is read from the first input's dim 1."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
        super().__init__(0, eps, momentum, False, False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        if self.track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = glasstorch.tensor(0, dtype=glasstorch.long, device=device)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            if self.affine:
                self.weight.materialize((self.num_features,))
                self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    cls_to_become = BatchNorm1d
    _check_input_dim = BatchNorm1d._check_input_dim


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    cls_to_become = BatchNorm2d
    _check_input_dim = BatchNorm2d._check_input_dim


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    cls_to_become = BatchNorm3d
    _check_input_dim = BatchNorm3d._check_input_dim
