r"""Linear layers: ``Identity``, ``Linear``, ``Bilinear``, ``LazyLinear``."""
import functools
import math

import glasstorch
from glasstorch.nn import functional as F
from glasstorch.nn import init
from glasstorch.nn.parameter import Parameter, UninitializedParameter

from .lazy import LazyModuleMixin
from .module import Module

__all__ = ["Identity", "Linear", "Bilinear", "LazyLinear"]


def explain_errors(forward):
    """Decorate a layer's ``forward``: an error keeps torch's message and type, and gains a note
    naming the layer and the shapes it was given (shown in the traceback)."""
    @functools.wraps(forward)
    def wrapper(self, *inputs, **kwargs):
        try:
            return forward(self, *inputs, **kwargs)
        except (RuntimeError, ValueError, IndexError) as e:
            shapes = ", ".join(str(list(x.shape)) for x in inputs if hasattr(x, "shape"))
            e.add_note(f"[glasstorch] raised in {self!r}.forward on input of shape {shapes}")
            raise
    return wrapper


class Identity(Module):
    r"""Returns its input; any constructor arguments are ignored.

        >>> import glasstorch as torch
        >>> x = torch.ones(2)
        >>> torch.nn.Identity(54, unused="argument")(x) is x
        True
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    r"""y = x W^T + b.

    Shapes: input (\*, in_features) -> output (\*, out_features).
    ``weight`` (out_features, in_features) and ``bias`` (out_features) start as
    U(-1/sqrt(in_features), 1/sqrt(in_features)) (kaiming_uniform_ with a = sqrt(5)).

    On a 2-D input the graph is torch's single ``AddmmBackward0``::

        >>> import glasstorch as torch
        >>> m = torch.nn.Linear(3, 4)
        >>> m(torch.ones(2, 3)).grad_fn.name()
        'AddmmBackward0'
    """

    __constants__ = ["in_features", "out_features"]

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(glasstorch.empty((out_features, in_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(glasstorch.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        # kaiming_uniform_ with a = sqrt(5) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in)), torch's old default
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    @explain_errors
    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear under another name: torch's MultiheadAttention uses it for ``out_proj``, and pickled
    Transformer models and ``serialization.safe_globals`` lists name it here, in nn.modules.linear."""


class Bilinear(Module):
    r"""y = x1^T A x2 + b: input1 (\*, in1_features), input2 (\*, in2_features) -> (\*, out_features).

    ``weight`` (out_features, in1_features, in2_features) and ``bias`` start as U(-1/sqrt(in1), 1/sqrt(in1)).
    """

    __constants__ = ["in1_features", "in2_features", "out_features"]

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        shape = (out_features, in1_features, in2_features)
        self.weight = Parameter(glasstorch.empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(glasstorch.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    @explain_errors
    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class LazyLinear(LazyModuleMixin, Linear):
    r"""A ``Linear`` whose in_features is read from the first input's last dim; it then becomes a
    ``Linear``."""

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            from glasstorch.autograd.grad_mode import no_grad
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
