"""Activation functions and dropout: torch.nn.functional's elementwise ops as torch's aten ops.

Each activation is a forward op and, as in torch, a ``*_backward`` op that its derivative calls
(``gelu`` -> ``gelu_backward``, ``leaky_relu`` -> ``leaky_relu_backward``, ...), so dispatch-level
tools see the same op names as under torch; the backward ops' own formulas (torch's
derivatives.yaml and FunctionsManual) give the second derivatives. ``relu``, ``sigmoid`` and
``tanh`` are core ops (``ops/pointwise.py``); ``threshold`` uses pointwise's ``threshold_backward``.

The kinks follow torch: leaky_relu takes the negative slope at 0, hardtanh passes no gradient at its
edges, hardswish's gradient is 0 at -3 and 1 at 3.

    x --AccumulateGrad--> GeluBackward0 -- y       (saves x: _saved_self, and _saved_approximate)

Compositions (softsign, tanhshrink, dropout, alpha_dropout) are public functions on other ops, as
torch records them. In-place forms (``F.elu(x, inplace=True)``) are torch's in-place aten ops
(``aten.elu_``, recording ``EluBackward1``, which reads the result; ``aten.silu_``, recording its twin's
``SiluBackward0``).
"""
import math
import numbers

from .._tensor import Tensor, _wrap, _wrap_dim
from .._array import xp, erf as _erf, has_values, row_major, like_input, zeros_like as _zeros_like
from .._ops import defop, aten, node_classes_of
from .._seam import overridable
from ..autograd import grad_mode
from ._op import float_array, check_floating, written_into_self
from .pointwise import _sigmoid as _sigmoid_array, _REDUCED_FLOATS

__getattr__ = node_classes_of(__name__)    # (the node classes declared here, by name: TanhBackward0)

SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
SQRT1_2 = math.sqrt(0.5)
GELU_PDF = 0.5 * math.sqrt(2.0) / math.sqrt(math.pi)      # 1/sqrt(2 pi): the normal density at 0
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946
_state = grad_mode._state


def _zeros(grad):
    """derivatives.yaml's ``zeros_like(grad)``: a backward op is linear in grad_output alone."""
    return aten.zeros_like(grad)




def _softplus_array(a):
    """log(1 + exp(a)) without overflow."""
    return xp.maximum(a, 0) + xp.log1p(xp.exp(-xp.abs(a)))


def _laid_out_as_input(kernel):
    """An activation's kernel whose result is laid out as torch lays out an element-wise result of
    its input (``like_input``: NumPy's layout differs where the input repeats elements)."""
    def laid_out(self, *args, **kwargs):
        return like_input(kernel(self, *args, **kwargs), self)
    laid_out.__name__ = laid_out.__qualname__ = kernel.__name__
    laid_out.__doc__ = kernel.__doc__
    return laid_out


def _scalar(x, value):
    """A Python number in x's precision (NumPy would otherwise compute some 0-d cases in float64)."""
    return x.dtype.type(value)


# ---- leaky_relu / prelu ------------------------------------------------------------------------
_NEGATIVE_SLOPE_IN_PLACE = ("In-place {} backward calculation is triggered with a negative slope which is not "
                            "supported. This is caused by calling in-place forward function with a negative slope, "
                            "please call out-of-place version instead.")


def _leaky_relu_backward_kernel(grad_output, self, negative_slope, self_is_result):
    """(``self`` is leaky_relu_'s result where ``self_is_result``: the sign tells the branch only for a
    slope that keeps it, as torch checks.)"""
    if self_is_result and negative_slope < 0:
        raise RuntimeError(_NEGATIVE_SLOPE_IN_PLACE.format("leakyReLu") + " File an issue at "
                           "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu "
                           "backward calculation with negative slope")
    return xp.where(self > 0, grad_output, grad_output * _scalar(grad_output, negative_slope))


@_laid_out_as_input
def _leaky_relu_kernel(self, negative_slope=0.01):
    check_floating(self, "leaky_relu_cpu")
    return xp.where(self > 0, self, self * _scalar(self, negative_slope))


leaky_relu_op = defop("leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor", _leaky_relu_kernel,
                      node="LeakyReluBackward0",
                      self=lambda grad, self, negative_slope: aten.leaky_relu_backward(grad, self, negative_slope, False))
leaky_relu_backward_op = defop(
    "leaky_relu_backward(Tensor grad_output, Tensor self, Scalar negative_slope, bool self_is_result) -> Tensor",
    lambda grad_output, self, negative_slope, self_is_result:
    _leaky_relu_backward_kernel(grad_output, self, negative_slope, self_is_result),
    node="LeakyReluBackwardBackward0",
    grad_output=lambda grad, self, negative_slope: aten.leaky_relu_backward(grad, self, negative_slope, False),
    self=_zeros)


@overridable
def leaky_relu(input, negative_slope=0.01):
    if not isinstance(negative_slope, numbers.Number):  # (NumPy would try float('a'): a ValueError)
        raise TypeError(f"leaky_relu(): argument 'negative_slope' (position 2) must be Number, "
                        f"not {type(negative_slope).__name__}")
    return leaky_relu_op(input, negative_slope)


def _prelu_double_backward(grads, grad_output, self, weight, output_mask):
    """torch's formulas for _prelu_kernel_backward (derivatives.yaml), with where(self >= 0, a, b)
    written as masked sums."""
    gg_input, gg_weight = grads
    positive, negative = self >= 0, self < 0
    g_grad_output = g_self = g_weight = None
    if output_mask[0]:
        if gg_input is not None:
            rest = gg_input * weight if gg_weight is None else gg_input * weight + gg_weight * self
            g_grad_output = gg_input * positive + rest * negative
        elif gg_weight is not None:
            g_grad_output = gg_weight * self * negative
    if output_mask[1]:
        g_self = grad_output * gg_weight * negative if gg_weight is not None else aten.zeros_like(self)
    if output_mask[2]:
        g_weight = grad_output * gg_input * negative if gg_input is not None else aten.zeros_like(self)
    return g_grad_output, g_self, g_weight


def _prelu_backward_kernel(grad_output, self, weight):
    """(input gradient, weight gradient at the input's shape: autograd sums it to the weight's)."""
    positive = self > 0
    return (xp.where(positive, grad_output, grad_output * weight).astype(grad_output.dtype, copy=False),
            xp.where(positive, 0, self * grad_output).astype(grad_output.dtype, copy=False))


prelu_op = defop("_prelu_kernel(Tensor self, Tensor weight) -> Tensor",
                 lambda self, weight: xp.where(self > 0, self, self * weight).astype(self.dtype, copy=False),
                 node="PreluKernelBackward0",
                 joint={("self", "weight"): lambda grad, self, weight: aten._prelu_kernel_backward(grad, self, weight)})
prelu_backward_op = defop("_prelu_kernel_backward(Tensor grad_output, Tensor self, Tensor weight) -> (Tensor, Tensor)",
                          _prelu_backward_kernel, node="PreluKernelBackwardBackward0",
                          joint={("grad_output", "self", "weight"): _prelu_double_backward})


@overridable
def prelu(input, weight):
    """x if x > 0 else w * x, one w per channel (dim 1) or a single shared w."""
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
    n = weight.numel()
    nd = input.dim()
    if n != 1:
        channels = input.shape[1] if nd >= 2 else (input.shape[0] if nd == 1 else 1)
        if nd == 0 or n != channels:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = {n} "
                               f"and channel size = {channels}.")
    if nd >= 2:  # torch views the weight so that it broadcasts along the channel dim
        shape = [1] * nd
        shape[1] = n
        weight = weight.reshape(shape)
    return prelu_op(input, weight)


# ---- the ELU family ------------------------------------------------------------------------------
def _elu_array(x, alpha, scale, input_scale):
    neg = xp.expm1(x * _scalar(x, input_scale)) * _scalar(x, alpha * scale)
    return xp.where(x > 0, x * _scalar(x, scale), neg)


@_laid_out_as_input
def _elu_kernel(self, alpha=1, scale=1, input_scale=1):
    check_floating(self, "elu_cpu")
    return _elu_array(self, alpha, scale, input_scale)


@_laid_out_as_input
def _celu_kernel(self, alpha=1.0):
    check_floating(self, "elu_cpu")
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _elu_array(self, alpha, 1.0, 1.0 / alpha)


def _elu_backward_kernel(grad_output, alpha, scale, input_scale, is_result, self_or_result):
    """d/dx: scale for x > 0; alpha * scale * input_scale * exp(x * input_scale) below (from the
    result: input_scale * (result + alpha * scale))."""
    x, g = self_or_result, grad_output
    if is_result and alpha < 0:
        raise RuntimeError(_NEGATIVE_SLOPE_IN_PLACE.format("elu"))
    if is_result:
        neg = g * _scalar(g, input_scale) * (x + _scalar(x, alpha * scale))
    else:
        neg = g * _scalar(g, input_scale * alpha * scale) * xp.exp(x * _scalar(x, input_scale))
    return xp.where(x <= 0, neg, g * _scalar(g, scale))


def _elu_double_backward(grad, grad_output, alpha, scale, input_scale, is_result, self_or_result):
    """torch's elu_double_backward: zero where x > 0; below, the derivative of the negative branch."""
    negative = self_or_result < 0
    if is_result:
        return grad * grad_output * input_scale * negative
    return aten.elu_backward(grad * grad_output * input_scale, alpha, scale, input_scale, False,
                             self_or_result) * negative


elu_op = defop("elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor", _elu_kernel,
               node="EluBackward0",
               self=lambda grad, self, alpha, scale, input_scale:
               aten.elu_backward(grad, alpha, scale, input_scale, False, self))
# torch's CeluBackward0 reads 1 / alpha with alpha rounded to float32 (derivatives.yaml: alpha.toFloat())
celu_op = defop("celu(Tensor self, Scalar alpha=1.) -> Tensor", _celu_kernel, node="CeluBackward0",
                self=lambda grad, self, alpha:
                aten.elu_backward(grad, alpha, 1, 1.0 / float(xp.float32(alpha)), False, self))
elu_backward_op = defop(
    "elu_backward(Tensor grad_output, Scalar alpha, Scalar scale, Scalar input_scale, bool is_result, "
    "Tensor self_or_result) -> Tensor", _elu_backward_kernel, node="EluBackwardBackward0",
    grad_output=lambda grad, alpha, scale, input_scale, is_result, self_or_result:
    aten.elu_backward(grad, alpha, scale, input_scale, is_result, self_or_result),
    self_or_result=_elu_double_backward)


@overridable
def elu(input, alpha=1.0):
    return elu_op(input, alpha)


@overridable
def selu(input):
    """scale * elu(x, alpha) with the self-normalising constants (torch records aten.elu)."""
    return elu_op(input, SELU_ALPHA, SELU_SCALE, 1)


@overridable
def celu(input, alpha=1.0):
    return celu_op(input, alpha)


# ---- gelu ---------------------------------------------------------------------------------------------------
def _check_approximate(approximate):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")


@_laid_out_as_input
def _gelu_kernel(self, *, approximate="none"):
    """x * Phi(x), Phi the standard normal CDF; 'tanh' uses torch's tanh approximation of Phi."""
    check_floating(self, "GeluKernelImpl")
    _check_approximate(approximate)
    x, t = self, self.dtype.type
    if approximate == "tanh":
        y = t(0.5) * x * (1 + xp.tanh(t(SQRT_2_OVER_PI) * (x + t(0.044715) * x * x * x)))
    else:
        y = t(0.5) * x * (1 + _erf(x * t(SQRT1_2)))
    return y.astype(x.dtype, copy=False)


def _gelu_backward_kernel(grad_output, self, *, approximate="none"):
    x, t = self, self.dtype.type
    if approximate == "tanh":
        inner = t(SQRT_2_OVER_PI) * (x + t(0.044715) * x * x * x)
        th = xp.tanh(inner)
        d_inner = t(SQRT_2_OVER_PI) * (1 + t(3 * 0.044715) * x * x)
        d = t(0.5) * (1 + th) + t(0.5) * x * (1 - th * th) * d_inner
    else:
        cdf = t(0.5) * (1 + _erf(x * t(SQRT1_2)))
        pdf = t(GELU_PDF) * xp.exp(x * x * t(-0.5))
        d = cdf + x * pdf
    return (grad_output * d).astype(grad_output.dtype, copy=False)


def _gelu_double_backward(grad, grad_output, self, approximate):
    """torch's gelu_double_backward: the second derivative of gelu, times both incoming gradients."""
    x = self
    if approximate == "tanh":
        beta, kappa = SQRT_2_OVER_PI, 0.044715
        inner = (x + x * x * x * kappa) * beta
        th = aten.tanh(inner)
        sech = 1 / aten.cosh(inner)
        g = 1 - th * th
        h = (x * x * (3 * kappa) + 1) * beta
        second = g * h + x * h * h * (sech * -sech * th) + x * g * (x * (3 * kappa * beta))
    else:
        pdf = aten.exp(x * x * -0.5) * GELU_PDF
        second = pdf * 2 - x * x * pdf
    return grad * grad_output * second


gelu_op = defop("gelu(Tensor self, *, str approximate=\"none\") -> Tensor", _gelu_kernel, node="GeluBackward0",
                self=lambda grad, self, approximate: aten.gelu_backward(grad, self, approximate=approximate))
gelu_backward_op = defop("gelu_backward(Tensor grad_output, Tensor self, *, str approximate=\"none\") -> Tensor",
                         _gelu_backward_kernel, node="GeluBackwardBackward0",
                         grad_output=lambda grad, self, approximate:
                         aten.gelu_backward(grad, self, approximate=approximate),
                         self=_gelu_double_backward)


@overridable    # (torch's is a binding, torch._C._nn.gelu: a handler is given what the caller gave)
def gelu(input, *, approximate="none"):
    return gelu_op(input, approximate=approximate)


# ---- silu, mish: torch differentiates their composite form when the backward must record ------------------
def _in_float32(kernel):
    """A kernel that computes float16 and bfloat16 in float32 and rounds its result once, as torch's
    activation kernels do (opmath); other dtypes as they are."""
    def computed(*arrays):
        dtype = arrays[-1].dtype
        if dtype.name in _REDUCED_FLOATS:
            return kernel(*(a.astype(xp.float32) for a in arrays)).astype(dtype)
        return kernel(*arrays)
    computed.__name__ = computed.__qualname__ = kernel.__name__
    computed.__doc__ = kernel.__doc__
    return computed


@_in_float32
def _silu_backward_kernel(grad_output, self):
    s = _sigmoid_array(self)
    return grad_output * s * (1 + self * (1 - s))


def _silu_derivative(grad, self):
    """derivatives.yaml: GradMode on (create_graph) -- the formula as ops that record
    (infinitely_differentiable_silu_backward); off -- the silu_backward kernel."""
    if _state.enabled:
        s = aten.sigmoid(self)
        return grad * s * (1 + self * (1 - s))
    return aten.silu_backward(grad, self)


@_in_float32
def _mish_backward_kernel(grad_output, self):
    t = xp.tanh(_softplus_array(self))
    return grad_output * (t + self * _sigmoid_array(self) * (1 - t * t))


def _mish_derivative(grad, self):
    """As silu's: infinitely_differentiable_mish_backward when recording, mish_backward otherwise."""
    if _state.enabled:
        t = aten.tanh(aten.softplus(self))
        return grad * (t + self * aten.sigmoid(self) * (1 - t * t))
    return aten.mish_backward(grad, self)


@_laid_out_as_input
def _silu_kernel(self):
    check_floating(self, "silu_cpu")
    return _silu_array(self)


@_in_float32
def _silu_array(self):
    one = self.dtype.type(1)
    return self / (one + xp.exp(-self))    # (torch's kernel: one rounding fewer than self * sigmoid(self))


@_laid_out_as_input
def _mish_kernel(self):
    check_floating(self, "mish_cpu")
    return _mish_array(self)


@_in_float32
def _mish_array(self):
    return self * xp.tanh(_softplus_array(self))


silu_op = defop("silu(Tensor self) -> Tensor", _silu_kernel, node="SiluBackward0", self=_silu_derivative)
silu_backward_op = defop("silu_backward(Tensor grad_output, Tensor self) -> Tensor", _silu_backward_kernel)
mish_op = defop("mish(Tensor self) -> Tensor", _mish_kernel, node="MishBackward0", self=_mish_derivative)
mish_backward_op = defop("mish_backward(Tensor grad_output, Tensor self) -> Tensor", _mish_backward_kernel)


@overridable
def silu(input):
    return silu_op(input)


@overridable
def mish(input):
    return mish_op(input)


# ---- softplus, logsigmoid -------------------------------------------------------------------------------------
@_laid_out_as_input
def _softplus_kernel(self, beta=1, threshold=20):
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold (where they agree in float)."""
    check_floating(self, "softplus_cpu")
    bx = self * _scalar(self, beta)
    return xp.where(bx > threshold, self, _softplus_array(bx) / _scalar(self, beta))


def _softplus_backward_kernel(grad_output, self, beta, threshold):
    bx = self * _scalar(self, beta)
    return xp.where(bx > threshold, grad_output, grad_output * _sigmoid_array(bx))


def _softplus_double_backward(grad, grad_output, self, beta, threshold):
    """torch's softplus_double_backward(grad * grad_output, ...): sigmoid's derivative at beta x, times
    beta, below the threshold."""
    bx = self * beta
    s = aten.sigmoid(bx)
    return grad * grad_output * s * (1 - s) * (bx < threshold) * beta


softplus_op = defop("softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor", _softplus_kernel,
                    node="SoftplusBackward0",
                    self=lambda grad, self, beta, threshold: aten.softplus_backward(grad, self, beta, threshold))
softplus_backward_op = defop(
    "softplus_backward(Tensor grad_output, Tensor self, Scalar beta, Scalar threshold) -> Tensor",
    _softplus_backward_kernel, node="SoftplusBackwardBackward0",
    grad_output=lambda grad, self, beta, threshold: aten.softplus_backward(grad, self, beta, threshold),
    self=_softplus_double_backward)


@overridable
def softplus(input, beta=1.0, threshold=20.0):
    return softplus_op(input, beta, threshold)


def _log_sigmoid_forward_kernel(self):
    """(log sigmoid(x), buffer): torch's CPU kernel keeps exp(-|x|) as the buffer its backward reads."""
    check_floating(self, "log_sigmoid_cpu")
    z = row_major(xp.exp(-xp.abs(self)))   # (torch allocates both results row-major)
    return row_major(xp.minimum(self, self.dtype.type(0)) - xp.log1p(z)), z   # (a typed 0: NumPy 1.x would widen a 0-d x)


def _log_sigmoid_backward_kernel(grad_output, self, buffer):
    """d/dx log sigmoid(x) = sigmoid(-x): 1 - z/(1+z) below 0, z/(1+z) above (z = exp(-|x|))."""
    share = buffer / (1 + buffer)
    return grad_output * xp.where(self < 0, 1 - share, share)


log_sigmoid_forward_op = defop("log_sigmoid_forward(Tensor self) -> (Tensor output, Tensor buffer)",
                               _log_sigmoid_forward_kernel, node="LogSigmoidBackward0",
                               self=lambda grad, self, buffer: aten.log_sigmoid_backward(grad, self, buffer))
log_sigmoid_backward_op = defop(
    "log_sigmoid_backward(Tensor grad_output, Tensor self, Tensor buffer) -> Tensor", _log_sigmoid_backward_kernel,
    node="LogSigmoidBackwardBackward0", buffer=None,
    grad_output=lambda grad, self, buffer: aten.log_sigmoid_backward(grad, self, buffer),
    # torch's log_sigmoid_double_backward(grad * grad_output, self): the derivative of sigmoid(-x)
    self=lambda grad, grad_output, self: grad * grad_output * (aten.sigmoid(self) - 1) * aten.sigmoid(self))


@overridable
def logsigmoid(input):
    return log_sigmoid_forward_op(input)[0]


# ---- piecewise-linear activations -------------------------------------------------------------------
@_laid_out_as_input
def _hardtanh_kernel(self, min_val=-1, max_val=1):
    if self.dtype == bool:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    return xp.clip(self, min_val, max_val).astype(self.dtype, copy=False)


hardtanh_op = defop("hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor", _hardtanh_kernel,
                    node="HardtanhBackward0",
                    self=lambda grad, self, min_val, max_val: aten.hardtanh_backward(grad, self, min_val, max_val))
hardtanh_backward_op = defop(
    "hardtanh_backward(Tensor grad_output, Tensor self, Scalar min_val, Scalar max_val) -> Tensor",
    # the gradient passes strictly inside (min_val, max_val)
    lambda grad_output, self, min_val, max_val: xp.where((self > min_val) & (self < max_val), grad_output, 0)
    .astype(grad_output.dtype, copy=False),
    node="HardtanhBackwardBackward0",
    grad_output=lambda grad, self, min_val, max_val: aten.hardtanh_backward(grad, self, min_val, max_val),
    self=_zeros)


@overridable
def hardtanh(input, min_val=-1.0, max_val=1.0):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return hardtanh_op(input, min_val, max_val)


@overridable
def relu6(input):
    """hardtanh(x, 0, 6), as torch records it."""
    return hardtanh_op(input, 0.0, 6.0)


_ONE_SIXTH_F32 = float(xp.float32(1.0) / xp.float32(6.0))  # torch's kernels multiply by a float 1/6


@_laid_out_as_input
def _hardsigmoid_kernel(self):
    check_floating(self, "hardsigmoid_cpu")
    return xp.clip(self + 3, 0, 6) / self.dtype.type(6)


# torch gives hardsigmoid_backward no derivative: its node raises when a second derivative is asked for
hardsigmoid_op = defop("hardsigmoid(Tensor self) -> Tensor", _hardsigmoid_kernel, node="HardsigmoidBackward0",
                       self=lambda grad, self: aten.hardsigmoid_backward(grad, self))
hardsigmoid_backward_op = defop(
    "hardsigmoid_backward(Tensor grad_output, Tensor self) -> Tensor",
    lambda grad_output, self: grad_output * ((self > -3) & (self < 3)) * _scalar(grad_output, _ONE_SIXTH_F32),
    node="NotImplemented")


@_laid_out_as_input
def _hardswish_kernel(self):
    check_floating(self, "hardswish_cpu")
    return self * xp.clip(self + 3, 0, 6) / self.dtype.type(6)


def _hardswish_backward_kernel(grad_output, self):
    middle = grad_output * (self / 3 + _scalar(self, 0.5))
    return xp.where(self <= -3, 0, xp.where(self < 3, middle, grad_output)).astype(grad_output.dtype, copy=False)


hardswish_op = defop("hardswish(Tensor self) -> Tensor", _hardswish_kernel, node="HardswishBackward0",
                     self=lambda grad, self: aten.hardswish_backward(grad, self))
hardswish_backward_op = defop(
    "hardswish_backward(Tensor grad_output, Tensor self) -> Tensor", _hardswish_backward_kernel,
    node="HardswishBackwardBackward0",
    grad_output=lambda grad, self: aten.hardswish_backward(grad, self),
    self=lambda grad, grad_output, self: grad * grad_output / 3 * ((self > -3) & (self < 3)))


@overridable
def hardsigmoid(input):
    return hardsigmoid_op(input)


@overridable
def hardswish(input):
    return hardswish_op(input)


@_laid_out_as_input
def _softshrink_kernel(self, lambd=0.5):
    check_floating(self, "softshrink_check")
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    t = self.dtype.type
    return xp.where(self > lambd, self - t(lambd), xp.where(self < -lambd, self + t(lambd), 0)).astype(self.dtype,
                                                                                                     copy=False)


@_laid_out_as_input
def _hardshrink_kernel(self, lambd=0.5):
    check_floating(self, "hardshrink_cpu")
    return xp.where((self >= -lambd) & (self <= lambd), 0, self).astype(self.dtype, copy=False)


def _shrink_backward(grad_output, self, lambd):
    """Both shrinks pass the gradient outside [-lambd, lambd]."""
    return xp.where((self >= -lambd) & (self <= lambd), 0, grad_output).astype(grad_output.dtype, copy=False)


softshrink_op = defop("softshrink(Tensor self, Scalar lambd=0.5) -> Tensor", _softshrink_kernel,
                      node="SoftshrinkBackward0",
                      self=lambda grad, self, lambd: aten.softshrink_backward(grad, self, lambd))
softshrink_backward_op = defop("softshrink_backward(Tensor grad_output, Tensor self, Scalar lambd) -> Tensor",
                               _shrink_backward, node="SoftshrinkBackwardBackward0",
                               grad_output=lambda grad, self, lambd: aten.softshrink_backward(grad, self, lambd),
                               self=_zeros)
hardshrink_op = defop("hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor", _hardshrink_kernel,
                      node="HardshrinkBackward0",
                      self=lambda grad, self, lambd: aten.hardshrink_backward(grad, self, lambd))
hardshrink_backward_op = defop("hardshrink_backward(Tensor grad_out, Tensor self, Scalar lambd) -> Tensor",
                               lambda grad_out, self, lambd: _shrink_backward(grad_out, self, lambd),
                               node="HardshrinkBackwardBackward0",
                               grad_out=lambda grad, self, lambd: aten.hardshrink_backward(grad, self, lambd),
                               self=_zeros)


@overridable
def softshrink(input, lambd=0.5):
    return softshrink_op(input, lambd)


@overridable
def hardshrink(input, lambd=0.5):
    return hardshrink_op(input, lambd)


threshold_op = defop("threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor",
                     _laid_out_as_input(lambda self, threshold, value: xp.where(self > threshold, self,
                                                                                _scalar(self, value))),
                     node="ThresholdBackward0",
                     self=lambda grad, self, threshold: aten.threshold_backward(grad, self, threshold))


@overridable
def threshold(input, threshold, value):
    return threshold_op(input, threshold, value)


# ---- rrelu: leaky relu with a random slope per element while training ------------------------------------
def _rrelu_kernel(self, noise, lower=0.125, upper=1.0 / 3, training=False, generator=None):
    """Training: each element below 0 takes a slope drawn from U(lower, upper), written into ``noise``
    (1 elsewhere), which the backward reads; otherwise the mean slope, as leaky_relu. The result is
    row-major whatever the input's layout, as torch's (rrelu_with_noise allocates it contiguous)."""
    check_floating(self, "rrelu_with_noise_out_cpu")
    if not training:
        return row_major(xp.where(self > 0, self, self * _scalar(self, (lower + upper) / 2)))
    from .creation import _rng
    slopes = _rng(generator).uniform(lower, upper, self.shape).astype(self.dtype)
    noise[...] = xp.where(self > 0, _scalar(self, 1), slopes)
    return row_major(self * noise)


def _rrelu_backward_kernel(grad_output, self, noise, lower, upper, training, self_is_result):
    if training and upper - lower > 1e-6:
        return grad_output * noise
    return xp.where(self > 0, grad_output, grad_output * _scalar(grad_output, (lower + upper) / 2))


rrelu_op = defop("rrelu_with_noise(Tensor self, Tensor(b!) noise, Scalar lower=0.125, Scalar upper=0.33333333333333331,"
                 " bool training=False, Generator? generator=None) -> Tensor",
                 _rrelu_kernel, node="RreluWithNoiseBackward0", noise=None,
                 self=lambda grad, self, noise, lower, upper, training:
                 aten.rrelu_with_noise_backward(grad, self, noise, lower, upper, training, False))
rrelu_backward_op = defop(
    "rrelu_with_noise_backward(Tensor grad_output, Tensor self, Tensor noise, Scalar lower, Scalar upper, "
    "bool training, bool self_is_result) -> Tensor", _rrelu_backward_kernel,
    node="RreluWithNoiseBackwardBackward0", noise=None,
    grad_output=lambda grad, self, noise, lower, upper, training:
    aten.rrelu_with_noise_backward(grad, self, noise, lower, upper, training, False),
    self=_zeros)


@overridable
def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """Randomized leaky ReLU: a random slope in [lower, upper) per negative element while training,
    the mean slope otherwise."""
    noise = _wrap(xp.empty_like(input._data))
    return rrelu_op(input, noise, lower, upper, bool(training))


# ---- compositions (torch records them as several nodes too) ------------------------------------------
@overridable
def softsign(input):
    return input / (input.abs() + 1)


@overridable
def tanhshrink(input):
    from .pointwise import tanh
    return input - tanh(input)


# ---- gated linear unit ----------------------------------------------------------------------------------
def _halves(t, dim):
    """The two halves of t along ``dim`` (basic indexing: views of arrays, view ops of Tensors)."""
    h = t.shape[dim] // 2
    lead = (slice(None),) * dim
    return t[lead + (slice(0, h),)], t[lead + (slice(h, None),)]


def _join_halves(a, b, dim):
    """cat([a, b], dim), written with constant_pad_nd (an aten op on arrays and Tensors alike)."""
    h = a.shape[dim]
    after = [0, 0] * (a.ndim - 1 - dim)
    return aten.constant_pad_nd(a, after + [0, h], 0) + aten.constant_pad_nd(b, after + [h, 0], 0)


def _glu_kernel(self, dim=-1):
    check_floating(self, "glu_cpu")
    if self.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = _wrap_dim(dim, self.ndim)
    n = self.shape[d]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {n}")
    a, b = _halves(self, d)
    return a * _sigmoid_array(b)


def _glu_backward_kernel(grad_output, self, dim):
    d = _wrap_dim(dim, self.ndim)
    a, b = _halves(self, d)
    s = _sigmoid_array(b)
    return xp.concatenate([grad_output * s, grad_output * a * s * (1 - s)], axis=d)


def _glu_double_backward_grad_output(grad, self, dim):
    """glu_backward is linear in grad_output: its adjoint reads the two halves of ``grad`` back."""
    d = dim % self.ndim
    (a, b), (g1, g2) = _halves(self, d), _halves(grad, d)
    s = aten.sigmoid(b)
    return g1 * s + g2 * a * s * (1 - s)


def _glu_double_backward(grad, grad_output, self, dim):
    """torch's glu_double_backward: the derivative of glu_backward's value in ``self``."""
    d = dim % self.ndim
    (a, b), (g1, g2) = _halves(self, d), _halves(grad, d)
    s = aten.sigmoid(b)
    ds = s * (1 - s)                                   # sigmoid'
    dds = ds * (1 - s) - s * ds                        # sigmoid''
    g_first = g2 * grad_output * ds
    g_second = g2 * a * grad_output * dds + g1 * grad_output * ds
    return _join_halves(g_first, g_second, d)


glu_op = defop("glu(Tensor self, int dim=-1) -> Tensor", _glu_kernel, node="GluBackward0",
               self=lambda grad, self, dim: aten.glu_backward(grad, self, dim))
glu_backward_op = defop("glu_backward(Tensor grad_output, Tensor self, int dim) -> Tensor", _glu_backward_kernel,
                        node="GluBackwardBackward0", grad_output=_glu_double_backward_grad_output,
                        self=_glu_double_backward)


@overridable
def glu(input, dim=-1):
    """a * sigmoid(b), where a and b are the two halves of the input along ``dim``."""
    return glu_op(input, dim)


# ---- dropout ------------------------------------------------------------------------------------------
def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _keep_mask(shape, p, dtype, like):
    """Bernoulli(1 - p) draws, already divided by 1 - p (torch scales at training time); on the
    device of the array ``like`` (a meta input: a meta mask, nothing drawn)."""
    if not has_values(like):
        return xp.zeros_like(like, dtype=dtype, shape=shape)
    from .creation import _rng
    keep = _rng(None).random(shape, dtype="float32" if dtype != xp.float64 else "float64") >= p
    return (keep * dtype.type(1.0 / (1.0 - p))).astype(dtype, copy=False)


@overridable
def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability p and scale the rest by 1/(1-p); the identity (the input
    itself, as torch returns it) when not training or p == 0. Recorded as torch records it on the
    CPU: a product with the scaled mask (MulBackward0)."""
    _check_p(p)
    if not training or p == 0 or input.numel() == 0:
        return input
    d = float_array(input)
    mask = _wrap(_keep_mask(d.shape, p, d.dtype, d) if p < 1 else _zeros_like(d, ()))
    return input.mul_(mask) if inplace else input * mask


@overridable
def feature_dropout(input, p, training, inplace, batched_dims):
    """Channel-wise dropout (Dropout1d/2d/3d): one draw per (sample, channel), broadcast over space."""
    _check_p(p)
    if not training or p == 0 or input.numel() == 0:
        return input
    d = float_array(input)
    shape = d.shape[:batched_dims] + (1,) * (d.ndim - batched_dims)
    mask = _wrap(_keep_mask(shape, p, d.dtype, d) if p < 1 else xp.zeros_like(d, shape=shape))
    return input.mul_(mask) if inplace else input * mask


@overridable
def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps SELU's self-normalising mean and variance: dropped units take SELU's negative
    saturation value -alpha, then an affine map a * x + b restores zero mean and unit variance."""
    _check_p(p)
    if not training or p == 0 or input.numel() == 0:
        return input
    if p == 1:
        return input * 0
    alpha = SELU_ALPHA * SELU_SCALE
    a = 1.0 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
    from .creation import _rng
    d = float_array(input)
    keep = (_rng(None).random(d.shape) >= p).astype(d.dtype)
    b = _wrap(((keep - 1) * (alpha * a) + alpha * a * p).astype(d.dtype, copy=False))
    return input * _wrap(keep * d.dtype.type(a)) + b


# ---- in-place forms -----------------------------------------------------------------------------------
# torch's in-place ops: those with a derivative of their own read the result (leaky_relu_, elu_, celu_,
# rrelu_with_noise_) or the old self (threshold_); the others record their twins' nodes
leaky_relu__op = defop("leaky_relu_(Tensor(a!) self, Scalar negative_slope=0.01) -> Tensor(a!)",
                       written_into_self(_leaky_relu_kernel), inplace=True, node="LeakyReluBackward1",
                       self=lambda grad, result, negative_slope: aten.leaky_relu_backward(grad, result, negative_slope,
                                                                                          True))
elu__op = defop("elu_(Tensor(a!) self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor(a!)",
                written_into_self(_elu_kernel), inplace=True, node="EluBackward1",
                self=lambda grad, result, alpha, scale, input_scale:
                aten.elu_backward(grad, alpha, scale, input_scale, True, result))
celu__op = defop("celu_(Tensor(a!) self, Scalar alpha=1.) -> Tensor(a!)", written_into_self(_celu_kernel),
                 inplace=True, node="CeluBackward1",
                 self=lambda grad, result, alpha: aten.elu_backward(grad, alpha, 1, 1.0 / float(xp.float32(alpha)),
                                                                    True, result))
threshold__op = defop("threshold_(Tensor(a!) self, Scalar threshold, Scalar value) -> Tensor(a!)",
                      written_into_self(threshold_op.kernel), inplace=True, node="ThresholdBackward1",
                      self=lambda grad, self, threshold: aten.threshold_backward(grad, self, threshold))
rrelu__op = defop("rrelu_with_noise_(Tensor(a!) self, Tensor(b!) noise, Scalar lower=0.125, "
                  "Scalar upper=0.33333333333333331, bool training=False, Generator? generator=None) -> Tensor(a!)",
                  written_into_self(_rrelu_kernel), inplace=True, node="RreluWithNoiseBackward1", noise=None,
                  self=lambda grad, result, noise, lower, upper, training:
                  aten.rrelu_with_noise_backward(grad, result, noise, lower, upper, training, True))
hardtanh__op = defop("hardtanh_(Tensor(a!) self, Scalar min_val=-1, Scalar max_val=1) -> Tensor(a!)",
                     inplace_of=hardtanh_op)
silu__op = defop("silu_(Tensor(a!) self) -> Tensor(a!)", inplace_of=silu_op)
mish__op = defop("mish_(Tensor(a!) self) -> Tensor(a!)", inplace_of=mish_op)
hardsigmoid__op = defop("hardsigmoid_(Tensor(a!) self) -> Tensor(a!)", inplace_of=hardsigmoid_op)
hardswish__op = defop("hardswish_(Tensor(a!) self) -> Tensor(a!)", inplace_of=hardswish_op)


def _in_place_form(name, call):
    """``F.<name>``, the in-place form: ``call(input, *args)`` runs its aten op (the arguments as
    the out-of-place function takes them)."""
    @overridable
    def fn_(input, *args, **kwargs):
        return call(input, *args, **kwargs)
    fn_.__name__ = fn_.__qualname__ = name
    fn_.__doc__ = f"In-place {name[:-1]}: the result written into the input (aten.{name})."
    return fn_


def _leaky_relu_(input, negative_slope=0.01):
    if not isinstance(negative_slope, numbers.Number):
        raise TypeError(f"leaky_relu_(): argument 'negative_slope' (position 2) must be Number, "
                        f"not {type(negative_slope).__name__}")
    return leaky_relu__op(input, negative_slope)


def _rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu__op(input, _wrap(xp.empty_like(input._data)), lower, upper, bool(training))


leaky_relu_ = _in_place_form("leaky_relu_", _leaky_relu_)
elu_ = _in_place_form("elu_", lambda input, alpha=1.0: elu__op(input, alpha))
selu_ = _in_place_form("selu_", lambda input: elu__op(input, SELU_ALPHA, SELU_SCALE, 1))  # (torch's: aten.elu_)
celu_ = _in_place_form("celu_", lambda input, alpha=1.0: celu__op(input, alpha))
hardtanh_ = _in_place_form("hardtanh_", hardtanh__op)   # (torch checks min_val <= max_val in F.hardtanh only)
silu_ = _in_place_form("silu_", silu__op)
mish_ = _in_place_form("mish_", mish__op)
hardsigmoid_ = _in_place_form("hardsigmoid_", hardsigmoid__op)
hardswish_ = _in_place_form("hardswish_", hardswish__op)
threshold_ = _in_place_form("threshold_", threshold__op)
rrelu_ = _in_place_form("rrelu_", _rrelu_)

Tensor.hardshrink = hardshrink  # the two activations torch also offers as Tensor methods
Tensor.prelu = prelu
