r"""Convolution layers: ``Conv1d/2d/3d``, ``ConvTranspose1d/2d/3d`` and their lazy versions.

A ``Conv2d(C_in, C_out, k)`` holds ``weight`` (C_out, C_in / groups, kh, kw) and ``bias`` (C_out),
both initialised U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with fan_in = C_in / groups * kh * kw.
Output size per spatial dim: floor((n + 2 padding - dilation (k - 1) - 1) / stride) + 1.

A ``ConvTranspose2d`` is the gradient of a ``Conv2d`` with respect to its input (it maps the
conv's output shape back to its input shape); its weight is (C_in, C_out / groups, kh, kw).
"""
import math

import glasstorch
from glasstorch.nn import functional as F
from glasstorch.nn import init
from glasstorch.nn.parameter import Parameter, UninitializedParameter

from .lazy import LazyModuleMixin
from .linear import explain_errors
from .module import Module

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "LazyConv1d",
           "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d"]


from .utils import _ntuple, _single, _pair, _triple, _reverse_repeat_tuple  # noqa: E402,F401  (torch's home for them)


class _ConvNd(Module):
    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding", "in_channels",
                     "out_channels", "kernel_size"]

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed, output_padding,
                 groups, bias, padding_mode, device=None, dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(f"padding_mode must be one of {valid_padding_modes}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        # the padding F.pad applies for a non-zeros padding_mode (and for 'same' with an even kernel)
        if isinstance(self.padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1)):
                    total_padding = d * (k - 1)
                    left_pad = total_padding // 2
                    self._reversed_padding_repeated_twice[2 * i] = left_pad
                    self._reversed_padding_repeated_twice[2 * i + 1] = total_padding - left_pad
        else:
            self._reversed_padding_repeated_twice = _reverse_repeat_tuple(self.padding, 2)
        shape = (in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups)
        self.weight = Parameter(glasstorch.empty(shape + tuple(kernel_size), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(glasstorch.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        # kaiming_uniform_ with a = sqrt(5): U(-1/sqrt(fan_in), 1/sqrt(fan_in)), as for Linear. (Under
        # no_grad, the weight's layout asked first: torch's calls, which a TorchFunctionMode sees.)
        with glasstorch.no_grad():
            if not self.weight.is_contiguous():
                contiguous = glasstorch.empty_like(self.weight, memory_format=glasstorch.contiguous_format)
                init.kaiming_uniform_(contiguous, a=math.sqrt(5))
                self.weight.copy_(contiguous)
            else:
                init.kaiming_uniform_(self.weight, a=math.sqrt(5))
            if self.bias is not None:
                fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
                if fan_in != 0:
                    bound = 1 / math.sqrt(fan_in)
                    init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


class _Conv(_ConvNd):
    """Conv1d/2d/3d: one class per spatial rank, differing in their tuple parser and functional."""

    _parse = None
    _conv = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        p = type(self)._parse
        super().__init__(in_channels, out_channels, p(kernel_size), p(stride),
                         padding if isinstance(padding, str) else p(padding), p(dilation), False, p(0), groups, bias,
                         padding_mode, device, dtype)

    def _conv_forward(self, input, weight, bias):
        conv = type(self)._conv
        if self.padding_mode != "zeros":
            return conv(F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode), weight, bias,
                        self.stride, type(self)._parse(0), self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    @explain_errors
    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    r"""1-d convolution over (N, C_in, L) or (C_in, L) input."""

    _parse, _conv = staticmethod(_single), staticmethod(F.conv1d)


class Conv2d(_Conv):
    r"""2-d convolution over (N, C_in, H, W) or (C_in, H, W) input.

        >>> import glasstorch as torch
        >>> conv = torch.nn.Conv2d(1, 6, kernel_size=5, padding=2)
        >>> conv
        Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1), padding=(2, 2))
        >>> conv(torch.zeros(8, 1, 28, 28)).shape
        torch.Size([8, 6, 28, 28])
    """

    _parse, _conv = staticmethod(_pair), staticmethod(F.conv2d)


class Conv3d(_Conv):
    r"""3-d convolution over (N, C_in, D, H, W) or (C_in, D, H, W) input."""

    _parse, _conv = staticmethod(_triple), staticmethod(F.conv3d)


class _ConvTransposeNd(_ConvNd):
    _parse = None
    _conv = None
    _name = ""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        p = type(self)._parse
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {self.__class__.__name__}')
        super().__init__(in_channels, out_channels, p(kernel_size), p(stride), p(padding), p(dilation), True,
                         p(output_padding), groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input, output_size, stride, padding, kernel_size, num_spatial_dims, dilation=None):
        """The output_padding that makes the output ``output_size`` (one of the ``stride`` sizes a
        strided conv maps to the same input size)."""
        if output_size is None:
            return _single(self.output_padding)
        has_batch_dim = input.dim() == num_spatial_dims + 2
        num_non_spatial_dims = 2 if has_batch_dim else 1
        output_size = list(output_size)
        if len(output_size) == num_non_spatial_dims + num_spatial_dims:
            output_size = output_size[num_non_spatial_dims:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, output_size must have "
                             f"{num_spatial_dims} or {num_non_spatial_dims + num_spatial_dims} elements (got "
                             f"{len(output_size)})")
        min_sizes, max_sizes = [], []
        for d in range(num_spatial_dims):
            dim_size = ((input.size(d + num_non_spatial_dims) - 1) * stride[d] - 2 * padding[d]
                        + (dilation[d] if dilation is not None else 1) * (kernel_size[d] - 1) + 1)
            min_sizes.append(dim_size)
            max_sizes.append(min_sizes[d] + stride[d] - 1)
        for size, lo, hi in zip(output_size, min_sizes, max_sizes):
            if size < lo or size > hi:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from {min_sizes} "
                                 f"to {max_sizes} (for an input of {input.size()[num_non_spatial_dims:]})")
        return [output_size[d] - min_sizes[d] for d in range(num_spatial_dims)]

    @explain_errors
    def forward(self, input, output_size=None):
        nd = len(self.kernel_size)
        output_padding = self._output_padding(input, output_size, self.stride, self.padding, self.kernel_size, nd,
                                              self.dilation)
        return type(self)._conv(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                                self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    r"""The transpose (gradient) of Conv1d: (N, C_in, L) -> (N, C_out, L_out)."""

    _parse, _conv = staticmethod(_single), staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    r"""The transpose (gradient) of Conv2d: (N, C_in, H, W) -> (N, C_out, H_out, W_out) with
    H_out = (H - 1) stride - 2 padding + dilation (k - 1) + output_padding + 1."""

    _parse, _conv = staticmethod(_pair), staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    r"""The transpose (gradient) of Conv3d."""

    _parse, _conv = staticmethod(_triple), staticmethod(F.conv_transpose3d)


class _LazyConvXdMixin(LazyModuleMixin):
    """in_channels is read from the first input (dim 1, or dim 0 when unbatched)."""

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                self.weight.materialize((self.in_channels, self.out_channels // self.groups, *self.kernel_size))
            else:
                self.weight.materialize((self.out_channels, self.in_channels // self.groups, *self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input):
        num_dims_no_batch = len(self.kernel_size) + 1
        num_dims_batch = num_dims_no_batch + 1
        if input.dim() not in (num_dims_no_batch, num_dims_batch):
            raise RuntimeError(f"Expected {num_dims_no_batch}D (unbatched) or {num_dims_batch}D (batched) input to "
                               f"{self.__class__.__name__}, but got input of size: {input.shape}")
        return input.shape[1] if input.dim() == num_dims_batch else input.shape[0]


def _make_lazy(self, out_channels, bias, device, dtype):
    """After building with 0 channels: uninitialized parameters, the real out_channels."""
    self.weight = UninitializedParameter(device=device, dtype=dtype)
    self.out_channels = out_channels
    if bias:
        self.bias = UninitializedParameter(device=device, dtype=dtype)


class LazyConv1d(_LazyConvXdMixin, Conv1d):
    cls_to_become = Conv1d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, bias=False, device=device, dtype=dtype, kernel_size=kernel_size, stride=stride,
                         padding=padding, dilation=dilation, groups=groups, padding_mode=padding_mode)
        _make_lazy(self, out_channels, bias, device, dtype)


class LazyConv2d(_LazyConvXdMixin, Conv2d):
    cls_to_become = Conv2d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, bias=False, device=device, dtype=dtype, kernel_size=kernel_size, stride=stride,
                         padding=padding, dilation=dilation, groups=groups, padding_mode=padding_mode)
        _make_lazy(self, out_channels, bias, device, dtype)


class LazyConv3d(_LazyConvXdMixin, Conv3d):
    cls_to_become = Conv3d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, bias=False, device=device, dtype=dtype, kernel_size=kernel_size, stride=stride,
                         padding=padding, dilation=dilation, groups=groups, padding_mode=padding_mode)
        _make_lazy(self, out_channels, bias, device, dtype)


class LazyConvTranspose1d(_LazyConvXdMixin, ConvTranspose1d):
    cls_to_become = ConvTranspose1d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, bias=False, device=device, dtype=dtype, kernel_size=kernel_size, stride=stride,
                         padding=padding, output_padding=output_padding, groups=groups, dilation=dilation,
                         padding_mode=padding_mode)
        _make_lazy(self, out_channels, bias, device, dtype)


class LazyConvTranspose2d(_LazyConvXdMixin, ConvTranspose2d):
    cls_to_become = ConvTranspose2d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, bias=False, device=device, dtype=dtype, kernel_size=kernel_size, stride=stride,
                         padding=padding, output_padding=output_padding, groups=groups, dilation=dilation,
                         padding_mode=padding_mode)
        _make_lazy(self, out_channels, bias, device, dtype)


class LazyConvTranspose3d(_LazyConvXdMixin, ConvTranspose3d):
    cls_to_become = ConvTranspose3d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, bias=False, device=device, dtype=dtype, kernel_size=kernel_size, stride=stride,
                         padding=padding, output_padding=output_padding, groups=groups, dilation=dilation,
                         padding_mode=padding_mode)
        _make_lazy(self, out_channels, bias, device, dtype)
