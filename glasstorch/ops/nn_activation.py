"""Activation functions and dropout: torch.nn.functional's elementwise ops, each a forward on arrays
and a Node named as torch names it, whose derivative is written with Tensor ops (so it can itself
be differentiated with ``create_graph=True``).

``relu``, ``sigmoid`` and ``tanh`` are core ops (``ops/pointwise.py``); everything here builds on the
same ``record`` mechanism. The formulas follow torch's ``derivatives.yaml``, including its choices at
the kinks (leaky_relu takes the negative slope at 0, hardtanh passes no gradient at its edges).

    x --AccumulateGrad--> GeluBackward0 -- y       (saves x: _saved_self)
"""
import math
import numbers

from .._tensor import Tensor, _wrap, _wrap_dim
from .._array import xp, erf as _erf
from ._op import _state, record, make_node_class, float_array, inplace
from .pointwise import where, tanh

SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _unary(node_cls, input, out, save_self=True, **attrs):
    """Wrap ``out`` and record ``node_cls`` (saving the input) when autograd is on."""
    res = _wrap(out)
    if input._requires_grad and _state.enabled:
        node = record(node_cls, res, (input,), (input,) if save_self else ())
        for k, v in attrs.items():
            setattr(node, k, v)
    return res


def _sigmoid_array(a):
    return (0.5 * (1 + xp.tanh(0.5 * a))).astype(a.dtype, copy=False)


def _softplus_array(a):
    """log(1 + exp(a)) without overflow."""
    return xp.maximum(a, 0) + xp.log1p(xp.exp(-xp.abs(a)))


# ---- leaky_relu / prelu ------------------------------------------------------------------------
class LeakyReluBackward0(make_node_class("LeakyReluBackward0", None, ("self",))):
    def backward(self, grad):
        (x,) = self._unpack_saved()
        return where(x > 0, grad, grad * self.negative_slope)


def leaky_relu(input, negative_slope=0.01):
    if not isinstance(negative_slope, numbers.Number):
        raise TypeError(f"leaky_relu(): argument 'negative_slope' (position 2) must be Number, "
                        f"not {type(negative_slope).__name__}")
    d = float_array(input)
    return _unary(LeakyReluBackward0, input, xp.where(d > 0, d, d * d.dtype.type(negative_slope)),
                  negative_slope=negative_slope)


class PreluKernelBackward0(make_node_class("PreluKernelBackward0", None, ("self", "weight"))):
    def backward(self, grad):
        x, w = self._unpack_saved()
        pos = x > 0
        gx = where(pos, grad, grad * w) if self.next_functions[0][0] is not None else None
        gw = where(pos, grad * 0, grad * x) if self.next_functions[1][0] is not None else None
        return gx, gw  # gw has x's shape: the engine sums it down to the weight's


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
    d, w = input._data, weight._data
    res = _wrap(xp.where(d > 0, d, d * w).astype(d.dtype, copy=False))
    if _state.enabled and (input._requires_grad or weight._requires_grad):
        record(PreluKernelBackward0, res, (input, weight), (input, weight))
    return res


# ---- the ELU family ------------------------------------------------------------------------------
class EluBackward0(make_node_class("EluBackward0", None, ("self",))):
    """d/dx: scale for x > 0, else scale * alpha * input_scale * exp(x * input_scale)."""

    def backward(self, grad):
        (x,) = self._unpack_saved()
        neg = grad * ((x * self.input_scale).exp() * (self.scale * self.alpha * self.input_scale))
        return where(x > 0, grad * self.scale, neg)


CeluBackward0 = make_node_class("CeluBackward0", EluBackward0.backward, ("self",))


def _elu(node_cls, input, alpha, scale, input_scale):
    d = float_array(input)
    t = d.dtype.type
    neg = xp.expm1(d * t(input_scale)) * t(alpha * scale)
    return _unary(node_cls, input, xp.where(d > 0, d * t(scale), neg), alpha=alpha, scale=scale,
                  input_scale=input_scale)


def elu(input, alpha=1.0):
    return _elu(EluBackward0, input, alpha, 1.0, 1.0)


def selu(input):
    return _elu(EluBackward0, input, SELU_ALPHA, SELU_SCALE, 1.0)


def celu(input, alpha=1.0):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    res = _elu(CeluBackward0, input, alpha, 1.0, 1.0 / alpha)
    if res._grad_fn is not None:  # torch's derivative uses 1 / float32(alpha) (derivatives.yaml: alpha.toFloat())
        res._grad_fn.input_scale = 1.0 / float(xp.float32(alpha))
    return res


# ---- smooth activations ---------------------------------------------------------------------------
class GeluBackward0(make_node_class("GeluBackward0", None, ("self",))):
    def backward(self, grad):
        (x,) = self._unpack_saved()
        if self.approximate == "tanh":
            inner = (x + x * x * x * 0.044715) * SQRT_2_OVER_PI
            t = inner.tanh()
            d_inner = (x * x * (3 * 0.044715) + 1) * SQRT_2_OVER_PI
            return grad * ((t + 1) * 0.5 + x * 0.5 * (1 - t * t) * d_inner)
        cdf = ((x * (1 / math.sqrt(2))).erf() + 1) * 0.5
        pdf = (x * x * -0.5).exp() * (1 / math.sqrt(2 * math.pi))
        return grad * (cdf + x * pdf)


def gelu(input, approximate="none"):
    """x * Phi(x), Phi the standard normal CDF; 'tanh' uses torch's tanh approximation of Phi."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh.")
    d = float_array(input)
    t = d.dtype.type
    if approximate == "tanh":
        y = t(0.5) * d * (1 + xp.tanh(t(SQRT_2_OVER_PI) * (d + t(0.044715) * d * d * d)))
    else:
        y = t(0.5) * d * (1 + _erf(d * t(1 / math.sqrt(2))))
    return _unary(GeluBackward0, input, y.astype(d.dtype, copy=False), approximate=approximate)


class SiluBackward0(make_node_class("SiluBackward0", None, ("self",))):
    def backward(self, grad):
        (x,) = self._unpack_saved()
        s = x.sigmoid()
        return grad * s * (x * (1 - s) + 1)


def silu(input):
    d = float_array(input)
    return _unary(SiluBackward0, input, d * _sigmoid_array(d))


class MishBackward0(make_node_class("MishBackward0", None, ("self",))):
    def backward(self, grad):
        (x,) = self._unpack_saved()
        t = softplus(x).tanh()
        return grad * (t + x * x.sigmoid() * (1 - t * t))


def mish(input):
    d = float_array(input)
    return _unary(MishBackward0, input, d * xp.tanh(_softplus_array(d)))


class SoftplusBackward0(make_node_class("SoftplusBackward0", None, ("self",))):
    def backward(self, grad):
        (x,) = self._unpack_saved()
        bx = x * self.beta
        return where(bx > self.threshold, grad, grad * bx.sigmoid())


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold (where they agree in float)."""
    d = float_array(input)
    t = d.dtype.type
    bx = d * t(beta)
    y = xp.where(bx > threshold, d, _softplus_array(bx) / t(beta))
    return _unary(SoftplusBackward0, input, y, beta=beta, threshold=threshold)


class LogSigmoidBackward0(make_node_class("LogSigmoidBackward0", None, ("self",))):
    def backward(self, grad):
        (x,) = self._unpack_saved()
        return grad * (-x).sigmoid()


def logsigmoid(input):
    d = float_array(input)
    return _unary(LogSigmoidBackward0, input, -_softplus_array(-d))


# ---- piecewise-linear activations -------------------------------------------------------------------
class HardtanhBackward0(make_node_class("HardtanhBackward0", None, ("self",))):
    """Gradient passes strictly inside (min_val, max_val)."""

    def backward(self, grad):
        (x,) = self._unpack_saved()
        return grad * ((x > self.min_val) & (x < self.max_val))


def hardtanh(input, min_val=-1.0, max_val=1.0):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    d = input._data
    return _unary(HardtanhBackward0, input, xp.clip(d, min_val, max_val).astype(d.dtype, copy=False),
                  min_val=min_val, max_val=max_val)


def relu6(input):
    return hardtanh(input, 0.0, 6.0)


_ONE_SIXTH_F32 = float(xp.float32(1.0) / xp.float32(6.0))  # torch's kernel multiplies by a float 1/6


class HardsigmoidBackward0(make_node_class("HardsigmoidBackward0", None, ("self",))):
    def backward(self, grad):
        (x,) = self._unpack_saved()
        return grad * ((x > -3) & (x < 3)) * _ONE_SIXTH_F32


def hardsigmoid(input):
    d = float_array(input)
    return _unary(HardsigmoidBackward0, input, xp.clip(d + 3, 0, 6) / d.dtype.type(6))


class HardswishBackward0(make_node_class("HardswishBackward0", None, ("self",))):
    def backward(self, grad):
        (x,) = self._unpack_saved()
        mid = grad * (x / 3 + 0.5)
        return where(x <= -3, grad * 0, where(x < 3, mid, grad))


def hardswish(input):
    d = float_array(input)
    return _unary(HardswishBackward0, input, d * xp.clip(d + 3, 0, 6) / d.dtype.type(6))


class SoftshrinkBackward0(make_node_class("SoftshrinkBackward0", None, ("self",))):
    def backward(self, grad):
        (x,) = self._unpack_saved()
        return grad * (x.abs() > self.lambd)


HardshrinkBackward0 = make_node_class("HardshrinkBackward0", SoftshrinkBackward0.backward, ("self",))


def softshrink(input, lambd=0.5):
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    d = float_array(input)
    y = xp.where(d > lambd, d - lambd, xp.where(d < -lambd, d + lambd, 0)).astype(d.dtype, copy=False)
    return _unary(SoftshrinkBackward0, input, y, lambd=lambd)


def hardshrink(input, lambd=0.5):
    d = float_array(input)
    return _unary(HardshrinkBackward0, input, xp.where(xp.abs(d) > lambd, d, 0).astype(d.dtype, copy=False),
                  lambd=lambd)


class ThresholdBackward0(make_node_class("ThresholdBackward0", None, ("self",))):
    def backward(self, grad):
        (x,) = self._unpack_saved()
        return grad * (x > self.threshold)


def threshold(input, threshold, value):
    d = input._data
    return _unary(ThresholdBackward0, input, xp.where(d > threshold, d, d.dtype.type(value)), threshold=threshold)


# ---- compositions (torch records them as several nodes too) ------------------------------------------
def softsign(input):
    return input / (input.abs() + 1)


def tanhshrink(input):
    return input - tanh(input)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """Randomized leaky ReLU: a random slope in [lower, upper) per element while training, the mean
    slope otherwise (torch's RreluWithNoiseBackward0 is recorded as the equivalent product here)."""
    if not training:
        return leaky_relu(input, (lower + upper) / 2)
    from .creation import _rng
    d = float_array(input)
    slopes = _rng(None).uniform(lower, upper, d.shape).astype(d.dtype)
    noise = _wrap(xp.where(d >= 0, d.dtype.type(1), slopes))
    return input * noise


# ---- gated linear unit ----------------------------------------------------------------------------------
class GluBackward0(make_node_class("GluBackward0", None, ("self",))):
    def backward(self, grad):
        (x,) = self._unpack_saved()
        a, b = x.chunk(2, self.dim)
        s = b.sigmoid()
        from .joining import cat
        return cat([grad * s, grad * a * s * (1 - s)], self.dim)


def glu(input, dim=-1):
    """a * sigmoid(b), where a and b are the two halves of the input along ``dim``."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    dd = _wrap_dim(dim, input.dim())
    n = input.shape[dd]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dd} is size {n}")
    d = float_array(input)
    a, b = xp.split(d, 2, axis=dd)
    return _unary(GluBackward0, input, a * _sigmoid_array(b), dim=dd)


# ---- dropout ------------------------------------------------------------------------------------------
def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _keep_mask(shape, p, dtype):
    """Bernoulli(1 - p) draws, already divided by 1 - p (torch scales at training time)."""
    from .creation import _rng
    keep = _rng(None).random(shape, dtype="float32" if dtype != xp.float64 else "float64") >= p
    return (keep * dtype.type(1.0 / (1.0 - p))).astype(dtype, copy=False)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability p and scale the rest by 1/(1-p); the identity (the input
    itself, as torch returns it) when not training or p == 0."""
    _check_p(p)
    if not training or p == 0 or input.numel() == 0:
        return input
    d = float_array(input)
    mask = _wrap(_keep_mask(d.shape, p, d.dtype) if p < 1 else xp.zeros((), d.dtype))
    return input.mul_(mask) if inplace else input * mask


def feature_dropout(input, p, training, inplace, batched_dims):
    """Channel-wise dropout (Dropout1d/2d/3d): one draw per (sample, channel), broadcast over space."""
    _check_p(p)
    if not training or p == 0 or input.numel() == 0:
        return input
    d = float_array(input)
    shape = d.shape[:batched_dims] + (1,) * (d.ndim - batched_dims)
    mask = _wrap(_keep_mask(shape, p, d.dtype) if p < 1 else xp.zeros(shape, d.dtype))
    return input.mul_(mask) if inplace else input * mask


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


def _inplace_variant(fn):
    """torch's ``F.xxx(x, inplace=True)``: compute out of place, write into x, x takes the history."""
    def op(input, *args):
        return inplace(input, fn.__name__ + "_", fn, *args)
    op.__name__ = fn.__name__ + "_"
    return op


leaky_relu_ = _inplace_variant(leaky_relu)
elu_ = _inplace_variant(elu)
selu_ = _inplace_variant(selu)
celu_ = _inplace_variant(celu)
hardtanh_ = _inplace_variant(hardtanh)
silu_ = _inplace_variant(silu)
mish_ = _inplace_variant(mish)
hardsigmoid_ = _inplace_variant(hardsigmoid)
hardswish_ = _inplace_variant(hardswish)
threshold_ = _inplace_variant(threshold)
rrelu_ = _inplace_variant(rrelu)

Tensor.hardshrink = hardshrink  # the two activations torch also offers as Tensor methods
Tensor.prelu = prelu
