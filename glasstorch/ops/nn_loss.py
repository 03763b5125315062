"""Loss functions, as torch computes them.

Two kinds, as in torch:

* **native losses** -- one aten op each, with its own node: ``nll_loss_forward`` (``NllLossBackward0``)
  and ``nll_loss2d_forward`` (``NllLoss2DBackward0``), ``mse_loss``, ``smooth_l1_loss``,
  ``huber_loss``, ``binary_cross_entropy``, ``binary_cross_entropy_with_logits``,
  ``soft_margin_loss``. Where torch's derivative is itself an aten op (``nll_loss_backward``,
  ``mse_loss_backward``, ...) it is declared here too, with its own formulas, so double backward
  records what torch records (``MseLossBackwardBackward0`` ...).
* **composite losses** -- public functions made of other ops, exactly as torch composes them:
  ``cross_entropy`` is ``log_softmax`` then ``nll_loss``; ``l1_loss`` is ``(input - target).abs()``
  then a mean; ``kl_div``, ``cosine_embedding_loss``, ``poisson_nll_loss``... are arithmetic. Their
  graphs are the nodes of the ops they call, as torch's are.

Every loss takes ``reduction``: ``'none'`` (one loss per element), ``'mean'`` or ``'sum'``; the aten ops
take it as torch's enum, an int (0 none, 1 mean, 2 sum: ``Reduction`` below).

    >>> import glasstorch as torch
    >>> x = torch.randn(4, 3, requires_grad=True)
    >>> loss = torch.nn.functional.cross_entropy(x, torch.tensor([0, 2, 1, 0]))
    >>> loss.grad_fn.name(), loss.grad_fn.next_functions[0][0].name()
    ('NllLossBackward0', 'LogSoftmaxBackward0')
"""
import math
import warnings

from .._tensor import Tensor
from .._array import (xp, asarray, has_values, like_operands, arange_like as _arange_like,
                      asarray_like as _asarray_like, zeros_like as _array_zeros_like)
from .. import _checks, _dtype, _warnings
from .._seam import seam, overridable
from .._ops import defop, aten, node_classes_of
from ._op import _state, promote_arrays
from .reduction import log_softmax

__getattr__ = node_classes_of(__name__)    # (the node classes declared here, by name: TanhBackward0)

__all__ = ["nll_loss", "cross_entropy", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
           "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "soft_margin_loss",
           "cosine_embedding_loss", "margin_ranking_loss", "hinge_embedding_loss", "poisson_nll_loss",
           "gaussian_nll_loss", "multilabel_soft_margin_loss", "triplet_margin_loss"]

_DTYPE_OF = _dtype._BY_NUMPY


class Reduction:
    """torch's ``at::Reduction``: how the aten loss ops are told to reduce."""
    NONE, MEAN, SUM = 0, 1, 2


_ENUM = {"none": Reduction.NONE, "mean": Reduction.MEAN, "sum": Reduction.SUM}


def get_enum(reduction):
    """``torch.nn._reduction.get_enum``: 'none' / 'mean' / 'sum' -> 0 / 1 / 2."""
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
                      stacklevel=3)
        return Reduction.MEAN
    if isinstance(reduction, str) and reduction in _ENUM:
        return _ENUM[reduction]
    raise ValueError(f"{reduction} is not a valid value for reduction")


def legacy_get_string(size_average, reduce, emit_warning=True):
    """The old size_average/reduce flags as a reduction string (with torch's deprecation warning)."""
    if emit_warning:
        _warnings.warn("size_average and reduce args will be deprecated, please use reduction='mean' instead.")
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        return "mean"
    return "sum" if reduce else "none"


def _reduction_string(size_average, reduce, reduction):
    """The reduction a loss was asked for, the legacy flags winning (with their warning); torch's
    ValueError for an unknown one."""
    if size_average is not None or reduce is not None:
        return legacy_get_string(size_average, reduce)
    get_enum(reduction)
    return reduction


def _reduction_enum(size_average, reduce, reduction):
    return get_enum(_reduction_string(size_average, reduce, reduction))


def _check_no_requires_grad(t, arg, fn):
    """torch's refusal of a gradient for an input its derivative table does not list (weights)."""
    if t is not None and t._requires_grad and _state.enabled:
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument '{arg}'. This input "
                           f"cannot have requires_grad True.")


def _warn_size_mismatch(input, target):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      f"This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      f"same size.", UserWarning, stacklevel=3)


def _broadcast_pair(input, target):
    """torch.broadcast_tensors(input, target), expanding only the one whose shape changes."""
    if tuple(input.shape) == tuple(target.shape):
        return input, target
    shape = _broadcast_shapes(input._data.shape, target._data.shape)
    if tuple(input.shape) != shape:
        input = input.expand(shape)
    if tuple(target.shape) != shape:
        target = target.expand(shape)
    return input, target


def _broadcast_shapes(a, b):
    """The broadcast of shapes ``a`` and ``b``, or torch's error naming the mismatched dim."""
    try:
        return tuple(xp.broadcast_shapes(tuple(a), tuple(b)))
    except ValueError:
        raise _checks.broadcast_error(tuple(a), tuple(b)) from None


def _apply_reduction(loss, reduction):
    """torch's apply_loss_reduction on Tensors (for the composite losses): a mean, a sum, or as is."""
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


# ---------------------------------------------------------------------------------------------------------------
# Array helpers of the kernels
# ---------------------------------------------------------------------------------------------------------------
def _reduce(loss, reduction, *layout_of):
    """apply_loss_reduction on an array: a 0-d array of the loss's dtype for 'mean' and 'sum'; with
    'none' the losses laid out as torch's TensorIterator lays them out from the arrays ``layout_of``
    (``mse_loss(x.t(), y, reduction='none')`` is laid out as ``x.t()``)."""
    if reduction == Reduction.MEAN:
        with xp.errstate(invalid="ignore", divide="ignore"):   # the mean of nothing is nan, silently
            return asarray(loss.sum(dtype=loss.dtype) / loss.dtype.type(loss.size))
    if reduction == Reduction.SUM:
        return asarray(loss.sum(dtype=loss.dtype))
    return like_operands(loss, *layout_of) if layout_of else loss


def _norm(reduction, x):
    """What the gradient of each element is scaled by: 1/numel for 'mean', 1 otherwise."""
    return 1.0 / x.size if reduction == Reduction.MEAN and x.size else 1.0


def _float_pair(self, target, kernel):
    """Both operands in their promoted floating dtype, or torch's 'not implemented' for integers."""
    a, b = promote_arrays(self, target)
    if a.dtype.kind not in "fc":
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_DTYPE_OF[a.dtype]._legacy}\'')
    return a, b


# ---------------------------------------------------------------------------------------------------------------
# Formula helpers (operators and aten ops only: they run on arrays and, for double backward, on Tensors)
# ---------------------------------------------------------------------------------------------------------------
def _numel(t):
    return math.prod(t.shape)


def _mean_scaled(g, reduction, like):
    """g divided by the number of elements of ``like`` for 'mean' (the gradient of a mean)."""
    return g / _numel(like) if reduction == Reduction.MEAN else g


def _loss_reduced(loss, reduction, like):
    """apply_loss_reduction inside a formula: a mean (as a sum over numel), a sum, or as is."""
    if reduction == Reduction.NONE:
        return loss
    total = aten.sum.default(loss)
    return total / _numel(like) if reduction == Reduction.MEAN else total


def _log_sigmoid(x):
    """log(sigmoid(x)) = -softplus(-x), written so that it cannot overflow."""
    return -(aten.relu(-x) + aten.log1p(aten.exp(-aten.abs(x))))


def _clamped_min_value(t, low):
    """``t`` with its values raised to at least ``low`` where the gradient still flows as if it were not
    (torch clamps such denominators in place under a NoGradGuard)."""
    if isinstance(t, Tensor):
        d = t.detach()
        return t + (d.clamp_min(low) - d)
    return xp.maximum(t, low)


# ===============================================================================================================
# Negative log likelihood: nll_loss_forward (1-D/2-D input) and nll_loss2d_forward (4-D)
# ===============================================================================================================
def _nll_checks(self, target, weight, classes):
    if target.dtype != xp.int64 and target.dtype != xp.uint8:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_DTYPE_OF[target.dtype]._legacy}")
    if self.dtype.kind not in "fc":
        raise NotImplementedError(f"\"nll_loss_out_frame\" not implemented for '{_DTYPE_OF[self.dtype]._legacy}'")
    if weight is not None:
        if weight.size != classes:
            raise RuntimeError(f"weight tensor should be defined either for all {classes} classes or no classes but "
                               f"got weight tensor of shape: {list(weight.shape)}")
        if weight.dtype != self.dtype:
            raise RuntimeError(f"expected scalar type {_DTYPE_OF[self.dtype]._legacy} but found "
                               f"{_DTYPE_OF[weight.dtype]._legacy}")


def _safe_targets(target, classes, ignore_index):
    """(targets with the ignored ones set to class 0, mask of the kept ones or None when all are kept);
    torch's IndexError for a target outside [0, classes) that is not ignored."""
    t = target.astype(xp.int64, copy=False)
    if t.size and has_values(t):
        if t.view(xp.uint64).max() >= classes:   # one pass: a negative target is a huge unsigned one
            bad = ((t < 0) | (t >= classes)) & (t != ignore_index)
            if bad.any():
                raise IndexError(f"Target {int(t[bad].flat[0])} is out of bounds.")
        elif not 0 <= ignore_index < classes:
            return t, None      # every target is a class and ignore_index none: all kept (the default, -100)
    kept = t != ignore_index
    if not has_values(t) or kept.all():   # (on meta: which targets are ignored is not known; the shapes are the same)
        return t, None
    return xp.where(kept, t, 0), kept


def _flat_positions(self, safe):
    """For a row-major 2-D NumPy ``self`` (rows, classes), the flat positions of each row's class
    ``safe[i]``, ``i * classes + safe[i]``: one index array, which ``take`` and a 1-D fancy write use
    without NumPy's multi-index iterator (256x10: 29k -> 19k instructions for the pick); None otherwise."""
    if self.ndim != 2 or type(self) is not xp.ndarray or not self.flags.c_contiguous:
        return None
    rows, classes = self.shape
    flat = xp.arange(0, rows * classes, classes)
    flat += safe
    return flat


def _nll_forward(self, target, weight, reduction, ignore_index, cdim):
    """-self[..., target, ...] (times weight[target]) along the class dim ``cdim``; returns the loss
    and total_weight (the sum of the weights of the kept targets, what 'mean' divides by)."""
    classes = self.shape[cdim]
    safe, kept = _safe_targets(target, classes, ignore_index)
    flat = _flat_positions(self, safe)
    if flat is not None:
        picked = self.reshape(-1).take(flat)
    elif self.ndim == 2:
        picked = self[_arange_like(self, self.shape[0]), safe]
    elif self.ndim == 1:
        picked = self[safe]
    else:
        picked = xp.take_along_axis(self, xp.expand_dims(safe, cdim), axis=cdim).squeeze(cdim)
    if weight is None:
        w = None if kept is None else kept.astype(self.dtype)
    else:
        w = weight[safe] if kept is None else weight[safe] * kept
    losses = -picked if w is None else -picked * w
    if kept is not None:       # an ignored row adds nothing, as torch skips it (-x * 0 is nan where x is -inf)
        losses = xp.where(kept, losses, self.dtype.type(0))
    total = _asarray_like(self, safe.size if w is None else w.sum(dtype=self.dtype), self.dtype)
    if reduction == Reduction.NONE:
        if self.ndim >= 2:                 # torch leaves total_weight at 0 when it is not needed
            total = _array_zeros_like(self, ())
        return losses.astype(self.dtype, copy=False), total
    loss = losses.sum(dtype=self.dtype)
    if reduction == Reduction.MEAN:
        if w is None and safe.size:   # (a count of at least one: no division can warn)
            loss = loss / total
        else:
            with xp.errstate(invalid="ignore", divide="ignore"):   # everything ignored: nan, as in torch
                loss = loss / total
    return asarray(loss, dtype=self.dtype), total


def _nll_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight, cdim):
    """The gradient of nll_loss: -grad * weight[t] (/ total_weight for 'mean') at each target's class."""
    classes = self.shape[cdim]
    safe, kept = _safe_targets(target, classes, ignore_index)
    g = grad_output
    if reduction == Reduction.MEAN:
        if type(total_weight) is xp.ndarray and total_weight.ndim == 0 and 0 < abs(total_weight) < math.inf:
            g = g / total_weight     # (by a finite number that is not zero: it cannot warn of 0/0 or inf/inf)
        else:
            with xp.errstate(invalid="ignore", divide="ignore"):
                g = g / total_weight
    if weight is None:
        coef = -g
    else:
        with xp.errstate(invalid="ignore"):
            coef = -g * weight[safe]
    flat = _flat_positions(self, safe)
    if flat is None or kept is not None:   # (the flat write broadcasts a 0-d coefficient, and rounds it as astype)
        coef = xp.broadcast_to(coef, safe.shape).astype(self.dtype, copy=False)
        if kept is not None:   # (a select, not a product: all targets ignored makes the scale nan)
            coef = xp.where(kept, coef, self.dtype.type(0))
    if flat is not None:   # (a row-major NumPy array: zeros of its shape are laid out as zeros_like's)
        out = xp.zeros(self.shape, self.dtype)
        out.reshape(-1)[flat] = coef
        return out
    out = xp.zeros_like(self)
    if self.ndim == 2:
        out[xp.arange(self.shape[0]), safe] = coef
    elif self.ndim == 1:
        out[safe] = coef
    else:
        xp.put_along_axis(out, xp.expand_dims(safe, cdim), xp.expand_dims(coef, cdim), axis=cdim)
    return out


def _nll_loss_forward_kernel(self, target, weight, reduction, ignore_index):
    if self.ndim < 1 or self.ndim > 2:
        raise RuntimeError("input tensor should be 1D or 2D")
    if target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if self.ndim == 2 and target.shape[0] != self.shape[0]:
        raise RuntimeError(f"size mismatch (got input: {list(self.shape)}, target: {list(target.shape)})")
    if self.ndim == 1 and target.size != 1:
        raise RuntimeError(f"size mismatch (got input: {list(self.shape)}, target: {list(target.shape)})")
    _nll_checks(self, target, weight, self.shape[-1])
    if self.ndim == 1:
        target = target.reshape(())
    return _nll_forward(self, target, weight, reduction, ignore_index, self.ndim - 1)


def _nll_loss_backward_kernel(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    if self.ndim == 1:
        target = target.reshape(())
    return _nll_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight, self.ndim - 1)


def _nll_loss2d_checks(self, target):
    if target.ndim != 3:
        raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got targets of dimension: "
                           f"{target.ndim}")
    if self.ndim != 4:
        raise RuntimeError(f"only batches of spatial inputs supported (4D tensors), but got input of dimension: "
                           f"{self.ndim}")
    if self.shape[0] != target.shape[0] or self.shape[2:] != target.shape[1:]:
        raise RuntimeError(f"size mismatch (got input: {list(self.shape)} , target: {list(target.shape)}")


def _nll_loss2d_forward_kernel(self, target, weight, reduction, ignore_index):
    _nll_loss2d_checks(self, target)
    _nll_checks(self, target, weight, self.shape[1])
    return _nll_forward(self, target, weight, reduction, ignore_index, 1)


def _nll_loss2d_backward_kernel(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    return _nll_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight, 1)


def _declare_nll(name, node, forward_kernel, backward_kernel):
    """``<name>_forward`` and ``<name>_backward`` (nll_loss, and nll_loss2d for images): the forward's
    derivative is the backward op; the backward is linear in its gradient, so its own derivative is the
    forward applied to the incoming gradient (and zero for the log-probabilities)."""
    forward = defop(
        f"{name}_forward(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index) -> "
        "(Tensor output, Tensor total_weight)", forward_kernel,
        node=f"{node}Backward0", output_differentiability=(True, False),
        self=lambda grad, self, target, weight, reduction, ignore_index, total_weight:
            backward(grad, self, target, weight, reduction, ignore_index, total_weight),
        target=None, weight=None)
    backward = defop(
        f"{name}_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, int reduction, "
        "SymInt ignore_index, Tensor total_weight) -> Tensor", backward_kernel,
        node=f"{node}BackwardBackward0",
        grad_output=lambda grad, target, weight, reduction, ignore_index:
            forward(grad, target, weight, reduction, ignore_index)[0],
        self=lambda grad: aten.zeros_like(grad),
        target=None, weight=None, total_weight=None)
    return forward, backward


nll_loss_forward, nll_loss_backward = _declare_nll("nll_loss", "NllLoss", _nll_loss_forward_kernel,
                                                   _nll_loss_backward_kernel)
nll_loss2d_forward, nll_loss2d_backward = _declare_nll("nll_loss2d", "NllLoss2D", _nll_loss2d_forward_kernel,
                                                       _nll_loss2d_backward_kernel)


def _nll_loss_nd(input, target, weight, reduction, ignore_index):
    """torch's ``nll_loss_nd``: 1-D and 2-D input go to nll_loss_forward, 4-D to nll_loss2d_forward,
    other N-d input is viewed as (N, C, 1, -1) (and a 'none' loss viewed back)."""
    if type(input) is not Tensor or type(target) is not Tensor:    # (torch's argument parser)
        _checks.expect_tensor("nll_loss_nd", input)
        _checks.expect_tensor("nll_loss_nd", target, "target", 2)
    # (the arrays' shapes, not the Tensors' methods: torch's nll_loss_nd reads them in C++, unseen by a mode)
    shape, target_shape = input._data.shape, target._data.shape
    nd = len(shape)
    if weight is not None:
        _check_no_requires_grad(weight, "weight", "nll_loss_forward" if nd < 3 else "nll_loss2d_forward")
    if nd < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {nd})")
    if nd == 1 and len(target_shape) == 1 and target_shape[0] != 1:
        raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {target_shape[0]}")
    if nd != 1 and (not target_shape or shape[0] != target_shape[0]):
        raise ValueError(f"Expected input batch_size ({shape[0]}) to match target batch_size "
                         f"({target_shape[0] if target_shape else 1}).")
    if nd <= 2:
        return nll_loss_forward(input, target, weight, reduction, ignore_index)[0]
    if nd == 4:
        return nll_loss2d_forward(input, target, weight, reduction, ignore_index)[0]
    n, c = input.shape[:2]
    expected = [n] + list(input.shape[2:])
    if list(target.shape) != expected:
        raise RuntimeError(f"Expected target size {expected}, got {list(target.shape)}")
    out = nll_loss2d_forward(input.contiguous().view(n, c, 1, -1), target.contiguous().view(n, 1, -1), weight,
                             reduction, ignore_index)[0]
    return out.view(expected) if reduction == Reduction.NONE else out


@overridable(defaults_by_keyword=True)
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """-input[n, target[n]] weighted by weight[target[n]]; 'mean' divides by the sum of those weights.

    As in torch, (N, C, H, W) input is nll_loss2d, and other N-d input is viewed as (N, C, 1, -1)."""
    return _nll_loss_nd(input, target, weight, _reduction_enum(size_average, reduce, reduction), ignore_index)


@overridable(defaults_by_keyword=True)
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """nll_loss(log_softmax(input)) for class indices; -sum(target * log_softmax(input)) for class
    probabilities (a target of the input's shape). label_smoothing mixes in the uniform distribution."""
    if type(input) is not Tensor or type(target) is not Tensor:    # (torch's argument parser)
        _checks.expect_tensor("cross_entropy_loss", input)
        _checks.expect_tensor("cross_entropy_loss", target, "target", 2)
    if seam.autocast is not None:   # torch's autocast casts cross_entropy_loss whole (fp32 list), before its log_softmax
        from ..amp.autocast_mode import fp32_inputs
        input, target, weight = fp32_inputs(input, target, weight)
    reduction = _reduction_string(size_average, reduce, reduction)
    enum = get_enum(reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    cdim = 1 if input._data.ndim >= 2 else 0
    if target._data.shape == input._data.shape:
        return _cross_entropy_probs(log_softmax(input, cdim), target, weight, reduction, label_smoothing, cdim,
                                    ignore_index)
    logp = log_softmax(input, cdim)
    loss = _nll_loss_nd(logp, target, weight, enum, ignore_index)
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


# ===============================================================================================================
# Elementwise regression losses: mse_loss, smooth_l1_loss, huber_loss (and l1_loss, a composite)
# ===============================================================================================================
def _mse_loss_kernel(self, target, reduction=Reduction.MEAN):
    a, b = _float_pair(self, target, "mse_cpu")
    d = a - b
    return _reduce(d * d, reduction, a, b)


def _mse_loss_backward_kernel(grad_output, self, target, reduction):
    a, b = promote_arrays(self, target)
    return (a - b) * (grad_output * (2.0 * _norm(reduction, self)))


def _mse_double_backward(g, self, reduction):
    """torch's mse_loss_double_backward: the derivative of mse_loss_backward in self (target: minus it)."""
    return _mean_scaled(g * 2, reduction, self)


mse_loss_op = defop(
    "mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor", _mse_loss_kernel, node="MseLossBackward0",
    self=lambda grad, self, target, reduction: aten.mse_loss_backward(grad, self, target, reduction),
    target=lambda grad, self, target, reduction: aten.mse_loss_backward(grad, target, self, reduction))
mse_loss_backward = defop(
    "mse_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction) -> Tensor",
    _mse_loss_backward_kernel, node="MseLossBackwardBackward0",
    grad_output=lambda grad, self, target, reduction: aten.mse_loss_backward(grad, self, target, reduction),
    self=lambda grad, grad_output, self, reduction: _mse_double_backward(grad * grad_output, self, reduction),
    target=lambda grad, grad_output, self, reduction: -_mse_double_backward(grad * grad_output, self, reduction))


def _weighted(loss, weight, reduction, mean_over_weights):
    """A 'none' loss times ``weight``, reduced as torch's F reduces weighted losses."""
    if tuple(weight.shape) != tuple(loss.shape):
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / weight.sum() if mean_over_weights else loss.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


@overridable(defaults_by_keyword=True)
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """mean((input - target)^2) (or their sum, or each); ``weight`` weighs each element ('mean' then
    divides by the sum of the weights)."""
    _warn_size_mismatch(input, target)
    reduction = _reduction_string(size_average, reduce, reduction)
    input, target = _broadcast_pair(input, target)
    if weight is not None:
        return _weighted((input - target).pow(2), weight, reduction, True)
    return mse_loss_op(input, target, get_enum(reduction))


@overridable(defaults_by_keyword=True, omitted=("weight",))   # (torch 2.13's has no weight)
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """mean(|input - target|): torch composes it (SubBackward0, AbsBackward0, MeanBackward0)."""
    _warn_size_mismatch(input, target)
    reduction = _reduction_string(size_average, reduce, reduction)
    input, target = _broadcast_pair(input, target)
    if weight is not None:
        return _weighted((input - target).abs(), weight, reduction, True)
    return _apply_reduction((input - target).abs(), reduction)


def _smooth_l1_loss_kernel(self, target, reduction=Reduction.MEAN, beta=1.0):
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    a, b = _float_pair(self, target, "smooth_l1_cpu")
    z = xp.abs(a - b)
    with xp.errstate(divide="ignore", invalid="ignore"):     # (beta 0: the quadratic part is never taken)
        loss = xp.where(z < beta, (0.5 * z * z) / beta, z - 0.5 * beta).astype(z.dtype, copy=False)
    return _reduce(loss, reduction, a, b)


def _smooth_l1_loss_backward_kernel(grad_output, self, target, reduction, beta):
    a, b = promote_arrays(self, target)
    x = a - b
    with xp.errstate(divide="ignore", invalid="ignore"):
        slope = xp.where(x <= -beta, -1.0, xp.where(x >= beta, 1.0, x / beta)).astype(x.dtype, copy=False)
    return slope * (grad_output * _norm(reduction, self))


def _smooth_l1_double_backward(g, self, target, reduction, beta):
    """torch's smooth_l1_loss_double_backward: 1/beta inside |x - t| < beta, 0 outside."""
    if beta == 0:
        return aten.zeros_like(g)
    return _mean_scaled(g * (aten.abs(self - target) < beta) / beta, reduction, self)


smooth_l1_loss_op = defop(
    "smooth_l1_loss(Tensor self, Tensor target, int reduction=1, float beta=1.) -> Tensor", _smooth_l1_loss_kernel,
    node="SmoothL1LossBackward0",
    self=lambda grad, self, target, reduction, beta: aten.smooth_l1_loss_backward(grad, self, target, reduction, beta),
    target=lambda grad, self, target, reduction, beta:
        aten.smooth_l1_loss_backward(grad, target, self, reduction, beta))
smooth_l1_loss_backward = defop(
    "smooth_l1_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction, float beta) -> Tensor",
    _smooth_l1_loss_backward_kernel, node="SmoothL1LossBackwardBackward0",
    grad_output=lambda grad, self, target, reduction, beta:
        aten.smooth_l1_loss_backward(grad, self, target, reduction, beta),
    self=lambda grad, grad_output, self, target, reduction, beta:
        _smooth_l1_double_backward(grad * grad_output, self, target, reduction, beta),
    target=lambda grad, grad_output, self, target, reduction, beta:
        -_smooth_l1_double_backward(grad * grad_output, self, target, reduction, beta))


@overridable(defaults_by_keyword=True)
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta elsewhere (d = input - target); beta 0 is l1_loss."""
    _warn_size_mismatch(input, target)
    reduction = _reduction_string(size_average, reduce, reduction)
    input, target = _broadcast_pair(input, target)
    if beta == 0.0:
        return _apply_reduction((input - target).abs(), reduction)
    return smooth_l1_loss_op(input, target, get_enum(reduction), beta)


def _huber_loss_kernel(self, target, reduction=Reduction.MEAN, delta=1.0):
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    a, b = _float_pair(self, target, "huber_cpu")
    z = xp.abs(a - b)
    loss = xp.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta)).astype(z.dtype, copy=False)
    return _reduce(loss, reduction, a, b)


def _huber_loss_backward_kernel(grad_output, self, target, reduction, delta):
    a, b = promote_arrays(self, target)
    x = a - b
    slope = xp.where(x <= -delta, -delta, xp.where(x >= delta, delta, x)).astype(x.dtype, copy=False)
    return slope * (grad_output * _norm(reduction, self))


def _huber_double_backward(g, self, target, reduction, delta):
    """torch's huber_loss_double_backward: 1 inside |x - t| < delta, 0 outside."""
    return _mean_scaled(g * (aten.abs(self - target) < delta), reduction, self)


huber_loss_op = defop(
    "huber_loss(Tensor self, Tensor target, int reduction=1, float delta=1.) -> Tensor", _huber_loss_kernel,
    node="HuberLossBackward0",
    self=lambda grad, self, target, reduction, delta: aten.huber_loss_backward(grad, self, target, reduction, delta),
    target=lambda grad, self, target, reduction, delta: aten.huber_loss_backward(grad, target, self, reduction, delta))
huber_loss_backward = defop(
    "huber_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction, float delta) -> Tensor",
    _huber_loss_backward_kernel, node="HuberLossBackwardBackward0",
    grad_output=lambda grad, self, target, reduction, delta:
        aten.huber_loss_backward(grad, self, target, reduction, delta),
    self=lambda grad, grad_output, self, target, reduction, delta:
        _huber_double_backward(grad * grad_output, self, target, reduction, delta),
    target=lambda grad, grad_output, self, target, reduction, delta:
        -_huber_double_backward(grad * grad_output, self, target, reduction, delta))


@overridable(defaults_by_keyword=True)
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 d^2 where |d| < delta, delta (|d| - 0.5 delta) elsewhere: smooth_l1 scaled by delta."""
    _warn_size_mismatch(input, target)
    enum = get_enum(reduction)
    input, target = _broadcast_pair(input, target)
    if weight is None:
        return huber_loss_op(input, target, enum, delta)
    return _weighted(huber_loss_op(input, target, Reduction.NONE, delta), weight, reduction, False)


# ===============================================================================================================
# Binary cross entropy, on probabilities and on logits
# ===============================================================================================================
EPSILON = 1e-12     # torch's guard of the denominators x (1 - x)


def _bce_kernel(self, target, weight=None, reduction=Reduction.MEAN):
    if self.dtype.kind not in "fc":
        raise NotImplementedError(f"\"binary_cross_entropy\" not implemented for '{_DTYPE_OF[self.dtype]._legacy}'")
    if target.dtype != self.dtype:
        raise RuntimeError(f"Found dtype {_DTYPE_OF[target.dtype]._legacy} but expected "
                           f"{_DTYPE_OF[self.dtype]._legacy}")
    if has_values(self) and ((self < 0) | (self > 1)).any():
        raise RuntimeError("all elements of input should be between 0 and 1")
    with xp.errstate(divide="ignore"):      # log 0 is -inf, clamped at -100 (torch's guard)
        loss = (target - 1) * xp.maximum(xp.log1p(-self), -100) - target * xp.maximum(xp.log(self), -100)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss.astype(self.dtype, copy=False), reduction, self, target)


def _bce_backward_kernel(grad_output, self, target, weight=None, reduction=Reduction.MEAN):
    g = grad_output * (self - target) / xp.maximum((1 - self) * self, EPSILON)
    if weight is not None:
        g = g * weight
    return (g * _norm(reduction, self)).astype(self.dtype, copy=False)


def _bce_target_backward(grad, self, weight, reduction):
    """torch's binary_cross_entropy_target_backward: -logit(self) = log(1 - x) - log(x), per element."""
    g = (aten.log1p(-self) - aten.log(self)) * grad
    if weight is not None:
        g = g * weight
    return _mean_scaled(g, reduction, self)


def _bce_double_backward(grad_output, grad, self, target, weight, reduction):
    """torch's binary_cross_entropy_double_backward: the derivative of the backward in self."""
    num = self * self - 2 * self * target + target
    g = num / ((self + EPSILON) ** 2 * (1 - self + EPSILON) ** 2) * (grad * grad_output)
    if weight is not None:
        g = g * weight
    return _mean_scaled(g, reduction, self)


def _bce_double_backward_target(grad, grad_output, self, weight, reduction):
    g = -grad * grad_output
    if weight is not None:
        g = g * weight
    return _mean_scaled(g / _clamped_min_value((1 - self) * self, EPSILON), reduction, self)


def _bce_double_backward_grad_output(grad, self, target, weight, reduction):
    g = (self - target) / ((self + EPSILON) * (1 - self + EPSILON))
    if weight is not None:
        g = g * weight
    return _loss_reduced(g * grad, reduction, self)


binary_cross_entropy_op = defop(
    "binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, int reduction=1) -> Tensor", _bce_kernel,
    node="BinaryCrossEntropyBackward0",
    self=lambda grad, self, target, weight, reduction:
        aten.binary_cross_entropy_backward(grad, self, target, weight, reduction),
    target=lambda grad, self, weight, reduction: _bce_target_backward(grad, self, weight, reduction),
    weight=None)
binary_cross_entropy_backward = defop(
    "binary_cross_entropy_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight=None, "
    "int reduction=1) -> Tensor", _bce_backward_kernel, node="BinaryCrossEntropyBackwardBackward0",
    self=lambda grad, grad_output, self, target, weight, reduction:
        _bce_double_backward(grad_output, grad, self, target, weight, reduction),
    target=lambda grad, grad_output, self, weight, reduction:
        _bce_double_backward_target(grad, grad_output, self, weight, reduction),
    grad_output=lambda grad, self, target, weight, reduction:
        _bce_double_backward_grad_output(grad, self, target, weight, reduction),
    weight=None)


@overridable(defaults_by_keyword=True)
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-w (t log x + (1 - t) log(1 - x)), each log clamped at -100 (torch's guard against log 0)."""
    enum = _reduction_enum(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}) "
                         f"is deprecated. Please ensure they have the same size.")
    if weight is not None:
        weight = weight.expand(_broadcast_shapes(target.shape, weight.shape))
    _check_no_requires_grad(weight, "weight", "binary_cross_entropy")
    return binary_cross_entropy_op(input, target, weight, enum)


def _bce_logits_kernel(self, target, weight=None, pos_weight=None, reduction=Reduction.MEAN):
    x, t = promote_arrays(self, target)
    if x.dtype.kind not in "fc":
        raise RuntimeError(f"result type Float can't be cast to the desired output type {_DTYPE_OF[x.dtype]._legacy}")
    log_sigmoid = -(xp.maximum(-x, 0) + xp.log1p(xp.exp(-xp.abs(x))))
    if pos_weight is not None:
        log_sigmoid = log_sigmoid * ((pos_weight - 1) * t + 1)
    loss = (1 - t) * x - log_sigmoid
    if weight is not None:
        loss = loss * weight
    # torch writes the loss into (1 - target) in place ((1 - target).mul_(input).sub_(...)): the result
    # has the floating target's dtype -- a float64 input with a float32 target gives float32 -- and
    # the target's layout
    return _reduce(loss.astype(target.dtype if target.dtype.kind in "fc" else x.dtype, copy=False), reduction, t)


def _bce_logits_backward(grad, self, target, weight, pos_weight, reduction):
    """torch's binary_cross_entropy_with_logits_backward (in self)."""
    if pos_weight is not None:
        t = pos_weight * target
        g = (t + 1 - target) * aten.sigmoid(self) - t
    else:
        g = aten.sigmoid(self) - target
    g = g * grad
    if weight is not None:
        g = g * weight
    return _mean_scaled(g, reduction, self)


def _bce_logits_target_backward(grad, self, weight, pos_weight, reduction):
    """torch's binary_cross_entropy_with_logits_target_backward."""
    if pos_weight is not None:
        g = (_log_sigmoid(-self) - _log_sigmoid(self) * pos_weight) * grad
    else:
        g = -self * grad
    if weight is not None:
        g = g * weight
    return _mean_scaled(g, reduction, self)


binary_cross_entropy_with_logits_op = defop(
    "binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, Tensor? pos_weight=None, "
    "int reduction=1) -> Tensor", _bce_logits_kernel, node="BinaryCrossEntropyWithLogitsBackward0",
    self=_bce_logits_backward,
    target=lambda grad, self, weight, pos_weight, reduction:
        _bce_logits_target_backward(grad, self, weight, pos_weight, reduction),
    weight=None, pos_weight=None)


@overridable(defaults_by_keyword=True)
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """BCE of sigmoid(input), computed stably from the logits: (1 - t) x - l log(sigmoid(x)) with
    l = 1 + (pos_weight - 1) t (pos_weight > 1 weighs the positive class up)."""
    enum = _reduction_enum(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    if not target.is_floating_point() and input.is_floating_point():  # (torch's result is written in target's type)
        raise RuntimeError(f"result type {input.dtype._legacy} can't be cast to the desired output type "
                           f"{target.dtype._legacy}")
    _check_no_requires_grad(weight, "weight", "binary_cross_entropy_with_logits")
    _check_no_requires_grad(pos_weight, "pos_weight", "binary_cross_entropy_with_logits")
    return binary_cross_entropy_with_logits_op(input, target, weight, pos_weight, enum)


# ===============================================================================================================
# Soft margin: log(1 + exp(-y x))
# ===============================================================================================================
def _soft_margin_kernel(self, target, reduction=Reduction.MEAN):
    x, y = promote_arrays(self, target)
    if x.dtype.kind not in "fc":
        raise RuntimeError(f"result type Float can't be cast to the desired output type {_DTYPE_OF[x.dtype]._legacy}")
    return _reduce(xp.log1p(xp.exp(-y * x)).astype(x.dtype, copy=False), reduction, x, y)


def _soft_margin_backward_kernel(grad_output, self, target, reduction):
    z = xp.exp(-target * self)
    return (-target * z / (1 + z) * (grad_output * _norm(reduction, self))).astype(self.dtype, copy=False)


def _soft_margin_double_backward(g, self, target, reduction):
    """torch's soft_margin_loss_double_backward: y^2 z / (1 + z)^2 with z = exp(-y x)."""
    z = aten.exp(-target * self)
    return _mean_scaled(g * (target * target) * z / ((1 + z) * (1 + z)), reduction, self)


soft_margin_loss_op = defop(
    "soft_margin_loss(Tensor self, Tensor target, int reduction=1) -> Tensor", _soft_margin_kernel,
    node="SoftMarginLossBackward0",
    self=lambda grad, self, target, reduction: aten.soft_margin_loss_backward(grad, self, target, reduction),
    target=None)
soft_margin_loss_backward = defop(
    "soft_margin_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction) -> Tensor",
    _soft_margin_backward_kernel, node="SoftMarginLossBackwardBackward0",
    grad_output=lambda grad, self, target, reduction: aten.soft_margin_loss_backward(grad, self, target, reduction),
    self=lambda grad, grad_output, self, target, reduction:
        _soft_margin_double_backward(grad * grad_output, self, target, reduction),
    target=None)


@overridable(defaults_by_keyword=True)
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target * input)), for targets of +1 and -1."""
    enum = _reduction_enum(size_average, reduce, reduction)
    _check_no_requires_grad(target, "target", "soft_margin_loss")
    return soft_margin_loss_op(input, target, enum)


# ===============================================================================================================
# Composite losses (torch composes them from other ops; so do we, and the graphs agree)
# ===============================================================================================================
@overridable(defaults_by_keyword=True)
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """sum target * (log target - input), input being log-probabilities ('batchmean': / batch size)."""
    if size_average is not None or reduce is not None:
        enum_reduction = legacy_get_string(size_average, reduce)
    else:
        if reduction == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                          "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                          "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                          UserWarning, stacklevel=2)
        enum_reduction = "sum" if reduction == "batchmean" else reduction
        get_enum(enum_reduction)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = _xlogy_self(target) - target * input
    reduced = _apply_reduction(loss, enum_reduction)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.shape[0]
    return reduced


def _xlogy_self(t):
    """t log t, 0 where t == 0 (torch's xlogy(t, t))."""
    if not t._requires_grad:
        from .._tensor import _wrap
        d = t._data
        with xp.errstate(divide="ignore", invalid="ignore"):
            return _wrap(xp.where(d == 0, 0, d * xp.log(d)).astype(d.dtype, copy=False))
    return t * t.masked_fill(t == 0, 1).log()


@overridable(defaults_by_keyword=True)
def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it is -1 (torch's Loss.cpp)."""
    from .pointwise import where
    reduction = _reduction_string(size_average, reduce, reduction)
    targ_dim = target.dim()
    if targ_dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if targ_dim == 1 and (input1.dim() != 2 or input2.dim() != 2):
        raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    if targ_dim == 0 and (input1.dim() != 1 or input2.dim() != 1):
        raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    eps = 1e-12
    prod = (input1 * input2).sum(targ_dim)
    mag1 = (input1 * input1).sum(targ_dim) + eps
    mag2 = (input2 * input2).sum(targ_dim) + eps
    cos = prod / (mag1 * mag2).sqrt()
    _broadcast_shapes(target.shape, cos.shape)      # (torch's where raises this)
    zeros = _zeros_like(cos)
    pos = (zeros + 1) - cos          # torch: a tensor filled with 1, minus cos (SubBackward0)
    neg = (cos - margin).clamp_min(0)
    loss = where(target == 1, pos, zeros) + where(target == -1, neg, zeros)
    return _apply_reduction(loss, reduction)


def _zeros_like(t):
    """zeros_like(t): no history."""
    from .._tensor import _wrap
    return _wrap(xp.zeros_like(t._data))


@overridable(defaults_by_keyword=True)
def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """max(0, -target * (input1 - input2) + margin)."""
    reduction = _reduction_string(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} ")
    return _apply_reduction((-target * (input1 - input2) + margin).clamp_min(0), reduction)


@overridable(defaults_by_keyword=True)
def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """input where target is not -1, plus max(0, margin - input) where it is not 1 (torch's Loss.cpp)."""
    from .pointwise import where
    reduction = _reduction_string(size_average, reduce, reduction)
    zeros = _zeros_like(input)
    margin_clamp = ((zeros + margin) - input).clamp_min(0)   # torch: a tensor filled with margin, minus input
    loss = where(target != 1, margin_clamp, zeros) + where(target != -1, input, zeros)
    return _apply_reduction(loss, reduction)


@overridable(defaults_by_keyword=True)
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """exp(input) - target * input (log_input), or input - target * log(input + eps); ``full`` adds the
    Stirling term of log(target!) where target > 1."""
    reduction = _reduction_string(size_average, reduce, reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        with xp.errstate(divide="ignore", invalid="ignore"):   # (log 0: masked out below, as in torch)
            stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _apply_reduction(loss, reduction)


@overridable(defaults_by_keyword=True)
def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """0.5 (log var + (input - target)^2 / var); var is clamped at eps for its value only (the gradient
    passes as if it were not, as torch's clamp under no_grad)."""
    from ..autograd import grad_mode
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * input.new_ones(input.shape)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif input.dim() == var.dim() and sum(y for x, y in zip(input.shape, var.shape) if x != y) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with grad_mode.no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _apply_reduction(loss, reduction)


@overridable(defaults_by_keyword=True)
def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-(t log sigmoid(x) + (1 - t) log sigmoid(-x)), averaged over the classes."""
    from .nn_activation import logsigmoid
    reduction = _reduction_string(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(input.dim() - 1) / input.shape[-1]
    return _apply_reduction(loss, reduction)


@overridable(defaults_by_keyword=True)
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)), d the p-norm distance (torch's
    pairwise_distance: the norm of x1 - x2 + eps over the last dim)."""
    from .reduction import norm
    reduction = _reduction_string(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not anchor.dim() == positive.dim() == negative.dim():
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.dim()}D, positive {positive.dim()}D, and negative "
                           f"{negative.dim()}D inputs")
    last = max(anchor.dim() - 1, 0)
    d_pos = norm(anchor - positive + eps, p, last)
    d_neg = norm(anchor - negative + eps, p, last)
    if swap:
        from .pointwise import minimum
        d_neg = minimum(d_neg, norm(positive - negative + eps, p, last))
    return _apply_reduction((d_pos + margin - d_neg).clamp_min(0), reduction)
