"""Loss functions: the ones torch computes as a single op (one node: ``NllLossBackward0``,
``MseLossBackward0``, ``BinaryCrossEntropyBackward0``...) written here as forward + node, and the ones
torch composes from other ops (cross entropy is log_softmax then nll_loss, l1_loss is abs then a
mean, kl_div and cosine_embedding_loss are arithmetic) composed the same way, so the recorded graph
is torch's.

Every loss takes ``reduction``: 'none' (one loss per element), 'mean' or 'sum'.
"""
import math
import warnings

from .. import _checks
from .._tensor import _wrap
from .._array import xp
from ._op import _state, record, make_node_class, result_dtype
from .pointwise import where
from .reduction import log_softmax

_REDUCTIONS = ("none", "mean", "sum")


def get_enum(reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def legacy_get_string(size_average, reduce, emit_warning=True):
    """The old size_average/reduce flags as a reduction string (with torch's deprecation warning)."""
    if emit_warning:
        warnings.warn("size_average and reduce args will be deprecated, please use reduction='mean' instead.",
                      UserWarning, stacklevel=3)
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        return "mean"
    return "sum" if reduce else "none"


def reduction_of(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        return legacy_get_string(size_average, reduce)
    return get_enum(reduction)


def apply_reduction(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _reduce_array(loss, reduction):
    if reduction == "mean":
        return xp.asarray(loss.mean(dtype=loss.dtype))
    if reduction == "sum":
        return xp.asarray(loss.sum(dtype=loss.dtype))
    return loss


def _scale(grad, n, reduction):
    """The upstream gradient as it reaches each element: divided by n for 'mean'."""
    return grad / n if reduction == "mean" else grad


def _broadcast_shape(a, b):
    """The broadcast of shapes a and b, or torch's RuntimeError naming the mismatched dim."""
    try:
        return tuple(xp.broadcast_shapes(tuple(a), tuple(b)))
    except ValueError:
        n = max(len(a), len(b))
        for i in range(1, n + 1):
            sa, sb = (a[-i] if i <= len(a) else 1), (b[-i] if i <= len(b) else 1)
            if sa != sb and sa != 1 and sb != 1:
                raise RuntimeError(f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at "
                                   f"non-singleton dimension {n - i}") from None
        raise


def _requires(*tensors):
    return _state.enabled and any(t is not None and t._requires_grad for t in tensors)


# ---- negative log likelihood --------------------------------------------------------------------------------
class NllLossBackward0(make_node_class("NllLossBackward0", None, ("self", "target", "weight", "total_weight"))):
    """-weight[t] (/ total_weight for 'mean') at each target's class, zero elsewhere."""

    def backward(self, grad):
        x, _t, _w, _tw = self._unpack_saved()
        g = self.coef * grad  # grad is a scalar, or one per target ('none')
        cdim = self.class_dim
        if _state.enabled:  # create_graph: a differentiable scatter
            from .creation import zeros
            return zeros(x.shape, dtype=x.dtype).scatter(cdim, self.safe_target.unsqueeze(cdim), g.unsqueeze(cdim))
        out = xp.zeros(x._data.shape, x._data.dtype)
        safe, gd = self.safe_target._data, g._data.astype(out.dtype, copy=False)
        if out.ndim == 2:
            out[xp.arange(out.shape[0]), safe] = gd
        else:
            xp.put_along_axis(out, xp.expand_dims(safe, cdim), xp.expand_dims(gd, cdim), axis=cdim)
        return _wrap(out)


def _check_nll(x, t, weight, input, target):
    """torch's checks of nll_loss's arguments (x, t: the arrays of input and target)."""
    if t.dtype != xp.int64 and t.dtype != xp.uint8:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {target.dtype._legacy}")
    nd = x.ndim
    if nd < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {nd})")
    if nd == 1:
        if t.ndim > 1 or t.size != 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    elif t.shape != (x.shape[0],) + x.shape[2:]:
        if t.ndim == 0 or x.shape[0] != t.shape[0]:
            raise ValueError(f"Expected input batch_size ({x.shape[0]}) to match target batch_size "
                             f"({t.shape[0] if t.ndim else 1}).")
        raise RuntimeError(f"Expected target size {[x.shape[0]] + list(x.shape[2:])}, got {list(t.shape)}")
    classes = x.shape[1] if nd >= 2 else x.shape[0]
    if weight is not None:
        if weight._data.size != classes:
            raise RuntimeError(f"weight tensor should be defined either for all {classes} classes or no classes but "
                               f"got weight tensor of shape: {list(weight.shape)}")
        if weight._data.dtype != x.dtype:
            raise RuntimeError(f"expected scalar type {input.dtype._legacy} but found {weight.dtype._legacy}")
    return classes


def _check_targets(t, classes, ignore_index):
    """Every target not ignored must name a class (torch's IndexError otherwise)."""
    if t.size == 0:
        return
    if t.min() < 0 or t.max() >= classes:  # the slow path only when something is outside [0, C)
        bad = ((t < 0) | (t >= classes)) & (t != ignore_index)
        if bad.any():
            raise IndexError(f"Target {int(t[bad].flat[0])} is out of bounds.")


NllLoss2DBackward0 = make_node_class("NllLoss2DBackward0", NllLossBackward0.backward, NllLossBackward0.saved_names)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """-input[n, target[n]] weighted by weight[target[n]]; 'mean' divides by the sum of those weights.

    As in torch, (N, C, H, W) input is nll_loss2d, and other N-d input is viewed as (N, C, 1, -1)."""
    reduction = reduction_of(size_average, reduce, reduction)
    x, t = input._data, target._data
    classes = _check_nll(x, t, weight, input, target)
    nd = x.ndim
    if nd == 3 or nd > 4:
        n, c = x.shape[:2]
        out = nll_loss(input.contiguous().view(n, c, 1, -1), target.contiguous().view(n, 1, -1), weight, None,
                       ignore_index, None, reduction)
        return out.view((n,) + tuple(input.shape[2:])) if reduction == "none" else out
    t = t.astype(xp.int64, copy=False)
    cdim = 1 if nd >= 2 else 0
    if nd == 1:
        t = t.reshape(())
    _check_targets(t, classes, ignore_index)
    valid = t != ignore_index
    everything = bool(valid.all())
    safe = t if everything else xp.where(valid, t, 0)
    if nd == 2:
        picked = x[xp.arange(x.shape[0]), safe]
    else:
        picked = xp.take_along_axis(x, xp.expand_dims(safe, cdim), axis=cdim).squeeze(cdim)
    if weight is None:
        w = None if everything else valid.astype(x.dtype)
    else:
        w = weight._data[safe] if everything else weight._data[safe] * valid
    losses = -picked if w is None else -picked * w
    total = x.dtype.type(safe.size) if w is None else w.sum(dtype=x.dtype)
    if reduction == "none":
        out = losses
    elif reduction == "sum":
        out = xp.asarray(losses.sum(dtype=x.dtype))
    else:
        with xp.errstate(invalid="ignore", divide="ignore"):
            out = xp.asarray(losses.sum(dtype=x.dtype) / total)
    res = _wrap(out.astype(x.dtype, copy=False))
    if _requires(input):
        node = record(NllLoss2DBackward0 if nd == 4 else NllLossBackward0, res, (input,),
                      (input, target, weight, _wrap(xp.asarray(total))), meta_check=False)
        with xp.errstate(invalid="ignore", divide="ignore"):
            if w is None:
                coef = xp.full(safe.shape, -1 / total if reduction == "mean" else -1, x.dtype)
            else:
                coef = -w / total if reduction == "mean" else -w
        node.coef, node.safe_target = _wrap(coef.astype(x.dtype, copy=False)), _wrap(safe)
        node.reduction, node.class_dim, node.ignore_index = reduction, cdim, ignore_index
    return res


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """nll_loss(log_softmax(input)) for class indices; -sum(target * log_softmax(input)) for class
    probabilities (a target of the input's shape). label_smoothing mixes in the uniform distribution."""
    reduction = reduction_of(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    cdim = 1 if input.dim() >= 2 else 0
    logp = log_softmax(input, cdim)
    if tuple(target.shape) == tuple(input.shape):
        return _cross_entropy_probs(logp, target, weight, reduction, label_smoothing, cdim, ignore_index)
    loss = nll_loss(logp, target, weight, None, ignore_index, None, reduction)
    if label_smoothing <= 0:
        return loss
    # torch: (1 - eps) * nll + eps / C * (the loss against the uniform distribution)
    classes = input.shape[cdim]
    ignored = target == ignore_index
    if weight is not None:
        smooth = -(logp * weight.view(_class_shape(input.dim(), cdim, classes))).sum(cdim)
    else:
        smooth = -logp.sum(cdim)
    smooth = smooth.masked_fill(ignored, 0.0)
    if reduction == "mean":
        if weight is not None:
            kept = target.masked_select(~ignored).flatten()
            smooth = smooth.sum() / weight.gather(0, kept).sum()
        else:
            smooth = smooth.sum() / (~ignored).sum()
    elif reduction == "sum":
        smooth = smooth.sum()
    return loss * (1 - label_smoothing) + smooth * (label_smoothing / classes)


def _class_shape(ndim, cdim, classes):
    shape = [1] * ndim
    shape[cdim] = classes
    return shape


def _cross_entropy_probs(logp, target, weight, reduction, label_smoothing, cdim, ignore_index):
    if not target.is_floating_point():
        raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                           f"{target.dtype._legacy}")
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    classes = logp.shape[cdim]
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / classes
    terms = logp * target
    if weight is not None:
        terms = terms * weight.view(_class_shape(logp.dim(), cdim, classes))
    if reduction == "none":
        return -terms.sum(cdim)
    if reduction == "sum":
        return -terms.sum()
    n = logp.numel() // classes if classes else 0
    return -terms.sum() / n if n else -terms.sum() * math.nan


# ---- elementwise regression losses --------------------------------------------------------------------------
def _pair(input, target, fn, warn=True):
    """Broadcast input and target as torch's F does (warning when the shapes differ)."""
    if tuple(input.shape) != tuple(target.shape):
        if warn:
            warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                          f"This will likely lead to incorrect results due to broadcasting. Please ensure they have "
                          f"the same size.", UserWarning, stacklevel=4)
        shape = _broadcast_shape(input._data.shape, target._data.shape)
        if input._requires_grad and tuple(input.shape) != shape:
            input = input.expand(shape)
        if target._requires_grad and tuple(target.shape) != shape:
            target = target.expand(shape)
    dt = result_dtype(input, target).numpy_dtype
    return input, target, input._data.astype(dt, copy=False), target._data.astype(dt, copy=False)


def _pointwise_loss(node_cls, input, target, loss, reduction, **attrs):
    res = _wrap(_reduce_array(loss, reduction))
    if _requires(input, target):
        node = record(node_cls, res, (input, target), (input, target))
        node.reduction, node.numel = reduction, loss.size
        for k, v in attrs.items():
            setattr(node, k, v)
    return res


def _input_and_target(node, g):
    """(g, -g) for the edges that need them (the loss depends on input - target)."""
    return (g if node.next_functions[0][0] is not None else None), \
        (-g if node.next_functions[1][0] is not None else None)


class MseLossBackward0(make_node_class("MseLossBackward0", None, ("self", "target"))):
    def backward(self, grad):
        x, t = self._unpack_saved()
        return _input_and_target(self, (x - t) * (_scale(grad, self.numel, self.reduction) * 2))


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    reduction = reduction_of(size_average, reduce, reduction)
    input, target, x, t = _pair(input, target, "mse_loss")
    if x.dtype.kind not in "fc":
        raise NotImplementedError(f'"mse_cpu" not implemented for \'{input.dtype._legacy}\'')
    if weight is not None:
        return apply_reduction(weight * (input - target) ** 2, reduction)
    d = x - t
    return _pointwise_loss(MseLossBackward0, input, target, d * d, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    reduction = reduction_of(size_average, reduce, reduction)
    input, target, _, _ = _pair(input, target, "l1_loss")
    loss = (input - target).abs()
    return apply_reduction(loss if weight is None else loss * weight, reduction)


class SmoothL1LossBackward0(make_node_class("SmoothL1LossBackward0", None, ("self", "target"))):
    """d/dx: (x - t) / beta inside |x - t| < beta, its sign outside."""

    def backward(self, grad):
        x, t = self._unpack_saved()
        d = x - t
        inner = d / self.beta
        return _input_and_target(self, where(d.abs() < self.beta, inner, d.sign()) * _scale(grad, self.numel,
                                                                                            self.reduction))


class HuberLossBackward0(make_node_class("HuberLossBackward0", None, ("self", "target"))):
    """d/dx: x - t inside |x - t| <= delta, delta times its sign outside."""

    def backward(self, grad):
        x, t = self._unpack_saved()
        d = x - t
        inner = where(d.abs() < self.delta, d, d.sign() * self.delta)
        return _input_and_target(self, inner * _scale(grad, self.numel, self.reduction))


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta elsewhere (d = input - target)."""
    reduction = reduction_of(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0.0:
        return l1_loss(input, target, reduction=reduction)
    input, target, x, t = _pair(input, target, "smooth_l1_loss")
    ad = xp.abs(x - t)
    loss = xp.where(ad < beta, 0.5 * ad * ad / beta, ad - 0.5 * beta).astype(x.dtype, copy=False)
    return _pointwise_loss(SmoothL1LossBackward0, input, target, loss, reduction, beta=beta)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 d^2 where |d| <= delta, delta (|d| - 0.5 delta) elsewhere: smooth_l1 scaled by delta."""
    reduction = get_enum(reduction)
    if delta <= 0:
        raise RuntimeError(f"huber_loss does not support non-positive values for delta.")
    input, target, x, t = _pair(input, target, "huber_loss")
    if weight is not None:
        d = (input - target).abs()
        loss = where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
        return apply_reduction(loss * weight, reduction)
    ad = xp.abs(x - t)
    loss = xp.where(ad <= delta, 0.5 * ad * ad, delta * (ad - 0.5 * delta)).astype(x.dtype, copy=False)
    return _pointwise_loss(HuberLossBackward0, input, target, loss, reduction, delta=delta)


# ---- binary cross entropy ---------------------------------------------------------------------------------------
EPSILON = 1e-12


class BinaryCrossEntropyBackward0(make_node_class("BinaryCrossEntropyBackward0", None,
                                                  ("self", "target", "weight"))):
    def backward(self, grad):
        x, t, w = self._unpack_saved()
        g = _scale(grad, self.numel, self.reduction)
        if w is not None:
            g = g * w
        gx = gt = None
        if self.next_functions[0][0] is not None:
            gx = g * (x - t) / ((1 - x) * x).clamp_min(EPSILON)
        if self.next_functions[1][0] is not None:
            gt = g * ((1 - x).log().clamp_min(-100) - x.log().clamp_min(-100))
        return gx, gt


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-w (t log x + (1 - t) log(1 - x)), each log clamped at -100 (torch's guard against log 0)."""
    reduction = reduction_of(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}) "
                         f"is deprecated. Please ensure they have the same size.")
    if target._data.dtype != input._data.dtype:
        raise RuntimeError(f"Found dtype {target.dtype._legacy} but expected {input.dtype._legacy}")
    x, t = input._data, target._data
    if ((x < 0) | (x > 1)).any():
        raise RuntimeError("all elements of input should be between 0 and 1")
    if weight is not None:
        weight = weight.expand(xp.broadcast_shapes(tuple(target.shape), tuple(weight.shape)))
    with xp.errstate(divide="ignore"):
        loss = -(t * xp.maximum(xp.log(x), -100) + (1 - t) * xp.maximum(xp.log1p(-x), -100))
    if weight is not None:
        loss = loss * weight._data
    res = _wrap(_reduce_array(loss.astype(x.dtype, copy=False), reduction))
    if _requires(input, target):
        node = record(BinaryCrossEntropyBackward0, res, (input, target), (input, target, weight))
        node.reduction, node.numel = reduction, loss.size
    return res


class BinaryCrossEntropyWithLogitsBackward0(make_node_class("BinaryCrossEntropyWithLogitsBackward0", None,
                                                            ("self", "target", "weight", "pos_weight"))):
    def backward(self, grad):
        x, t, w, pw = self._unpack_saved()
        g = _scale(grad, self.numel, self.reduction)
        if w is not None:
            g = g * w
        gx = gt = None
        if self.next_functions[0][0] is not None:
            if pw is None:
                gx = g * (x.sigmoid() - t)
            else:
                pt = pw * t
                gx = g * ((pt + 1 - t) * x.sigmoid() - pt)
        if self.next_functions[1][0] is not None:
            # d/dt of (1 - t) x + (1 + (pw - 1) t) softplus(-x)
            sp = -(x.sigmoid().log())
            gt = g * (-x if pw is None else -x + (pw - 1) * sp)
        return gx, gt


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """BCE of sigmoid(input), computed stably from the logits: (1 - t) x + l * softplus(-x) with
    l = 1 + (pos_weight - 1) t (pos_weight > 1 weighs the positive class up)."""
    reduction = reduction_of(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    if not target.is_floating_point() and input.is_floating_point():
        raise RuntimeError(f"result type {input.dtype._legacy} can't be cast to the desired output type "
                           f"{target.dtype._legacy}")
    if pos_weight is not None:
        _checks.broadcast_shape(tuple(pos_weight.shape), tuple(input.shape))
    dt = result_dtype(input, target).numpy_dtype
    x, t = input._data.astype(dt, copy=False), target._data.astype(dt, copy=False)
    sp = xp.maximum(-x, 0) + xp.log1p(xp.exp(-xp.abs(x)))  # softplus(-x)
    if pos_weight is not None:
        loss = (1 - t) * x + (1 + (pos_weight._data - 1) * t) * sp
    else:
        loss = (1 - t) * x + sp
    if weight is not None:
        loss = loss * weight._data
    res = _wrap(_reduce_array(loss.astype(dt, copy=False), reduction))
    if _requires(input, target):
        node = record(BinaryCrossEntropyWithLogitsBackward0, res, (input, target), (input, target, weight, pos_weight))
        node.reduction, node.numel = reduction, loss.size
    return res


# ---- compositions -----------------------------------------------------------------------------------------------
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """sum target * (log target - input), input being log-probabilities ('batchmean': / batch size)."""
    if size_average is not None or reduce is not None:
        reduction = legacy_get_string(size_average, reduce)
    elif reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      UserWarning, stacklevel=2)
    elif reduction != "batchmean":
        get_enum(reduction)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = _xlogy_self(target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.dim() else loss.sum()
    return apply_reduction(loss, reduction)


def _xlogy_self(t):
    """t log t, 0 where t == 0 (torch's xlogy(t, t))."""
    if not t._requires_grad:
        d = t._data
        with xp.errstate(divide="ignore", invalid="ignore"):
            return _wrap(xp.where(d == 0, 0, d * xp.log(d)).astype(d.dtype, copy=False))
    return t * t.masked_fill(t == 0, 1).log()


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it is -1."""
    reduction = reduction_of(size_average, reduce, reduction)
    if input1.dim() == 0:
        raise RuntimeError("cosine_embedding_loss does not support scalar inputs")
    dim = input1.dim() - 1
    eps = 1e-12
    prod = (input1 * input2).sum(dim)
    mag1 = (input1 * input1).sum(dim) + eps
    mag2 = (input2 * input2).sum(dim) + eps
    cos = prod / (mag1 * mag2).sqrt()
    _broadcast_shape(target.shape, cos.shape)
    zeros = cos.detach() * 0
    pos = (zeros + 1) - cos  # torch: a tensor of ones minus cos (SubBackward0)
    neg = (cos - margin).clamp_min(0)
    loss = where(target == 1, pos, zeros) + where(target == -1, neg, zeros)
    return apply_reduction(loss, reduction)


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    reduction = reduction_of(size_average, reduce, reduction)
    return apply_reduction((-target * (input1 - input2) + margin).clamp_min(0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    reduction = reduction_of(size_average, reduce, reduction)
    zeros = input.detach() * 0
    margin_clamp = (margin - input).clamp_min(0)
    loss = where(target == 1, input, zeros) + where(target == -1, margin_clamp, zeros)
    return apply_reduction(loss, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = reduction_of(size_average, reduce, reduction)
    return apply_reduction((-target * input).exp().log1p(), reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    reduction = reduction_of(size_average, reduce, reduction)
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        t = target.detach()
        stirling = t * t.masked_fill(t <= 1, 1).log() - t + 0.5 * (2 * math.pi * t.masked_fill(t <= 1, 1)).log()
        loss = loss + stirling.masked_fill(t <= 1, 0)
    return apply_reduction(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    get_enum(reduction)
    if isinstance(var, (int, float)):
        var = input.detach() * 0 + var
    if var.dim() == input.dim() - 1 or (var.dim() == input.dim() and var.shape[-1] == 1 and input.shape[-1] != 1):
        var = var.unsqueeze(-1) if var.dim() == input.dim() - 1 else var
    if (var < 0).any():
        raise ValueError("var has negative entry/entries")
    var = var.clamp_min(eps) if not var._requires_grad else var.clamp(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return apply_reduction(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    reduction = reduction_of(size_average, reduce, reduction)
    from .nn_activation import logsigmoid
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(input.dim() - 1) / input.shape[-1]
    return apply_reduction(loss, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    reduction = reduction_of(size_average, reduce, reduction)
    from .reduction import norm
    d_pos = norm(anchor - positive + eps, p, anchor.dim() - 1)
    d_neg = norm(anchor - negative + eps, p, anchor.dim() - 1)
    if swap:
        from .pointwise import minimum
        d_neg = minimum(d_neg, norm(positive - negative + eps, p, anchor.dim() - 1))
    return apply_reduction((d_pos - d_neg + margin).clamp_min(0), reduction)

