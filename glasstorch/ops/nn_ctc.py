"""The connectionist temporal classification loss, F.ctc_loss (torch's ``LossCTC.cpp``; Graves et al.,
"Connectionist Temporal Classification", ICML 2006 -- the equation numbers below are the paper's).

The loss of one sequence is -log p(target | log_probs): the sum over every alignment of the T input
steps to the target with blanks between (and repeats merged). Over the *extended target* l' (a blank,
then each label followed by a blank: 2 L + 1 states) the forward variables are

    alpha_0(0) = y_0(blank),  alpha_0(1) = y_0(l_1)
    alpha_t(s) = (alpha_{t-1}(s) + alpha_{t-1}(s-1) [+ alpha_{t-1}(s-2) if l'_s != l'_{s-2}]) y_t(l'_s)   (6, 7)
    p = alpha_{T-1}(2L) + alpha_{T-1}(2L - 1)                                                            (8)

all in log space, and the backward variables beta_t(s) run the same recursion from the end (10, 11).
The gradient with respect to the log-probabilities is torch's (eq. 16, written for logits):

    dL/d log y_t(k) = y_t(k) - exp(log sum_{s: l'_s = k} alpha_t(s) beta_t(s) + nll - log y_t(k))

so, as in torch, it is the gradient of a loss of *log_softmax outputs*: feed ``log_softmax``'d values
(the y_t(k) term vanishes through log_softmax's backward). An impossible alignment (an input shorter
than its target needs) has loss inf and NaN gradients; ``zero_infinity`` makes both 0.

``_ctc_loss`` returns (neg_log_likelihood, log_alpha); ``_ctc_loss_backward`` is the formula above.
The public function reduces as torch's ``ctc_loss`` does: 'mean' divides each loss by its target
length (at least 1) and averages, 'sum' adds.
"""
from .. import _dtype
from .._tensor import Tensor
from .._array import (xp, arange_like as _arange_like, zeros_like as _zeros_like, empty_like as _empty_like,
                      full_like as _full_like)
from .._ops import defop, node_classes_of
from .._seam import overridable

__getattr__ = node_classes_of(__name__)    # (the node classes declared here, by name: TanhBackward0)

_WHERE = "(while checking arguments for ctc_loss_allocate_outputs)"


def _lengths(lengths):
    """A list of ints from a list/tuple or an integer tensor (torch's IntArrayRef or Tensor overload)."""
    if isinstance(lengths, Tensor):
        if lengths.dtype.is_floating_point or lengths.dtype.is_complex or lengths.dtype is _dtype.bool:
            return None
        return [int(v) for v in lengths.reshape(-1).tolist()]
    return [int(v) for v in lengths]


def _extended_targets(targets, offsets, b, target_length, blank):
    """l': blank, l_1, blank, l_2, ..., l_L, blank."""
    ext = _full_like(targets, blank, 2 * target_length + 1, xp.int64)
    if targets.ndim == 1:
        ext[1::2] = targets[offsets[b]:offsets[b] + target_length]
    else:
        ext[1::2] = targets[b, :target_length]
    return ext


def _check(log_probs, targets, input_lengths, target_lengths, blank):
    """torch's ``ctc_loss_allocate_outputs`` checks; the start of each sequence's target in ``targets``."""
    if log_probs.ndim != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {log_probs.ndim}-dimensional tensor for argument "
                           f"#1 'log_probs' {_WHERE}")
    batch, labels = log_probs.shape[1], log_probs.shape[2]
    if not 0 <= blank < labels:
        raise RuntimeError("blank must be in label range")
    if len(input_lengths) != batch:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(target_lengths) != batch:
        raise RuntimeError("target_lengths must be of size batch_size")
    for tl in target_lengths:
        if tl < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got value {tl} {_WHERE}")
    if targets.ndim == 1:
        offsets = [0] * batch
        for b in range(1, batch):
            offsets[b] = offsets[b - 1] + target_lengths[b - 1]
        total = sum(target_lengths)
        if targets.shape[0] != total:
            raise RuntimeError(f"Expected tensor to have size {total} at dimension 0, but got size {targets.shape[0]} "
                               f"for argument #2 'targets' {_WHERE}")
    else:
        offsets = None
        longest = max(target_lengths, default=0)
        if targets.shape[0] != batch:
            raise RuntimeError(f"Expected tensor to have size {batch} at dimension 0, but got size {targets.shape[0]} "
                               f"for argument #2 'targets' {_WHERE}")
        if targets.shape[1] < longest:
            raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension 1, but got size "
                               f"{targets.shape[1]} for argument #2 'targets' {_WHERE}")
    for il in input_lengths:
        if il < 0:
            raise RuntimeError(f"Expected input_lengths to have value at least 0, but got value {il} {_WHERE}")
        if il > log_probs.shape[0]:
            raise RuntimeError(f"Expected input_lengths to have value at most {log_probs.shape[0]}, but got value "
                               f"{il} {_WHERE}")
    return offsets


def _log_sum3(a, b, c):
    """log(e^a + e^b + e^c) elementwise, safe where all three are -inf (the recursions' step)."""
    m = xp.maximum(xp.maximum(a, b), c)
    m = xp.where(m == -xp.inf, 0, m)
    return xp.log(xp.exp(a - m) + xp.exp(b - m) + xp.exp(c - m)) + m


def _shifted(row, by):
    """row moved ``by`` states to the right (positive) or left (negative), -inf filled in."""
    out = xp.full_like(row, -xp.inf)
    if by > 0:
        out[by:] = row[:-by]
    else:
        out[:by] = row[-by:]
    return out


def _ctc_loss_kernel(log_probs, targets, input_lengths, target_lengths, blank=0, zero_infinity=False):
    if log_probs.dtype.kind != "f":
        raise NotImplementedError(f'"ctc_loss_cpu" not implemented for \'{_dtype._BY_NUMPY[log_probs.dtype]._legacy}\'')
    offsets = _check(log_probs, targets, input_lengths, target_lengths, blank)
    targets = targets.astype(xp.int64, copy=False)
    steps, batch = log_probs.shape[:2]
    longest = max(target_lengths, default=0)
    log_alpha = _full_like(log_probs, -xp.inf, (batch, steps, 2 * longest + 1))
    nll = _empty_like(log_probs, batch)
    with xp.errstate(invalid="ignore", divide="ignore", over="ignore"):
        for b in range(batch):
            il, tl = input_lengths[b], target_lengths[b]
            ext = _extended_targets(targets, offsets, b, tl, blank)
            skip = _zeros_like(ext, ext.shape, bool)
            skip[2:] = ext[2:] != ext[:-2]
            lp = log_probs[:, b, :]
            if il == 0:
                nll[b] = 0 if tl == 0 else xp.inf
                continue
            la = log_alpha[b]
            la[0, 0] = lp[0, blank]
            if tl > 0:
                la[0, 1] = lp[0, ext[1]]
            for t in range(1, il):
                prev = la[t - 1, :2 * tl + 1]
                la[t, :2 * tl + 1] = _log_sum3(prev, _shifted(prev, 1), xp.where(skip, _shifted(prev, 2), -xp.inf)) \
                    + lp[t, ext]
            if tl == 0:
                nll[b] = -la[il - 1, 0]
            else:
                l1, l2 = la[il - 1, 2 * tl], la[il - 1, 2 * tl - 1]
                m = max(l1, l2)
                m = 0 if m == -xp.inf else m
                nll[b] = -(xp.log(xp.exp(l1 - m) + xp.exp(l2 - m)) + m)
    return nll, log_alpha


def _ctc_loss_backward_kernel(grad, log_probs, targets, input_lengths, target_lengths, neg_log_likelihood, log_alpha,
                              blank, zero_infinity=False):
    offsets = _check(log_probs, targets, input_lengths, target_lengths, blank)
    targets = targets.astype(xp.int64, copy=False)
    steps, batch, labels = log_probs.shape
    out = _zeros_like(log_probs, log_probs.shape)
    with xp.errstate(invalid="ignore", divide="ignore", over="ignore"):
        for b in range(batch):
            nll = neg_log_likelihood[b]
            il, tl = input_lengths[b], target_lengths[b]
            if (zero_infinity and nll == xp.inf) or il == 0:
                continue
            ext = _extended_targets(targets, offsets, b, tl, blank)
            skip_ahead = _zeros_like(ext, ext.shape, bool)        # may beta step from s + 2 to s?
            skip_ahead[:-2] = ext[:-2] != ext[2:]
            lp = log_probs[:, b, :]
            la = log_alpha[b, :, :2 * tl + 1]
            lb = _full_like(log_probs, -xp.inf, (il, 2 * tl + 1))
            lb[il - 1, 2 * tl] = lp[il - 1, blank]
            if tl > 0:
                lb[il - 1, 2 * tl - 1] = lp[il - 1, ext[2 * tl - 1]]
            for t in range(il - 2, -1, -1):
                nxt = lb[t + 1]
                lb[t] = _log_sum3(nxt, _shifted(nxt, -1), xp.where(skip_ahead, _shifted(nxt, -2), -xp.inf)) + lp[t, ext]
            # log sum over the states of each label of alpha * beta (eq. 16's sum)
            collected = _full_like(log_probs, -xp.inf, (il, labels))
            xp.logaddexp.at(collected, (_arange_like(collected, il - 1)[:, None], ext[None, :]), la[:il - 1] + lb[:-1])
            # the last step has only the two final states, written one after the other as torch writes
            # them (so a last label equal to the blank keeps the second, as in torch)
            collected[il - 1, blank] = la[il - 1, 2 * tl] + lb[il - 1, 2 * tl]
            if tl > 0:
                collected[il - 1, ext[2 * tl - 1]] = la[il - 1, 2 * tl - 1] + lb[il - 1, 2 * tl - 1]
            lpb = lp[:il]
            out[:il, b, :] = (xp.exp(lpb) - xp.exp(collected + nll - lpb)) * grad[b]
    return out


def _ctc_backward_not_implemented(grad):
    raise RuntimeError("derivative for aten::_ctc_loss_backward is not implemented")


ctc_loss_backward_op = defop(
    "_ctc_loss_backward(Tensor grad, Tensor log_probs, Tensor targets, int[] input_lengths, int[] target_lengths, "
    "Tensor neg_log_likelihood, Tensor log_alpha, int blank, bool zero_infinity=False) -> Tensor",
    _ctc_loss_backward_kernel, node="CtcLossBackwardBackward0", grad=_ctc_backward_not_implemented,
    log_probs=_ctc_backward_not_implemented, targets=None, neg_log_likelihood=None, log_alpha=None)
ctc_loss_op = defop(
    "_ctc_loss(Tensor log_probs, Tensor targets, int[] input_lengths, int[] target_lengths, int blank=0, "
    "bool zero_infinity=False) -> (Tensor, Tensor)", _ctc_loss_kernel, node="CtcLossBackward0",
    output_differentiability=[True, False],
    log_probs=lambda grad, log_probs, targets, input_lengths, target_lengths, result0, result1, blank, zero_infinity:
    ctc_loss_backward_op(grad, log_probs, targets, input_lengths, target_lengths, result0, result1, blank,
                         zero_infinity),
    targets=None)


@overridable(defaults_by_keyword=True)
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """The CTC loss of log-probabilities (T, N, C) -- or (T, C) unbatched -- against targets (N, S) padded or
    the N targets concatenated (sum of target_lengths), with the lengths as lists or integer tensors."""
    from .nn_loss import get_enum, Reduction
    mode = get_enum(reduction)
    if isinstance(input_lengths, int) or isinstance(target_lengths, int):
        raise TypeError("ctc_loss() received an invalid combination of arguments - got (Tensor, Tensor, "
                        f"{type(input_lengths).__name__}, {type(target_lengths).__name__}, int, int, bool), but "
                        "expected one of:\n * (Tensor log_probs, Tensor targets, tuple of ints input_lengths, tuple "
                        "of ints target_lengths, int blank = 0, int reduction = at::Reduction::Mean, bool "
                        "zero_infinity = False)\n * (Tensor log_probs, Tensor targets, Tensor input_lengths, Tensor "
                        "target_lengths, int blank = 0, int reduction = at::Reduction::Mean, bool zero_infinity = "
                        "False)")
    ils, tls = _lengths(input_lengths), _lengths(target_lengths)
    if ils is None:
        raise RuntimeError("input_lengths must be integral")
    if tls is None:
        raise RuntimeError("target_lengths must be integral")
    batched = log_probs.ndim == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    loss = ctc_loss_op(lp, targets.long() if targets.dtype is not _dtype.int64 else targets, ils, tls, blank,
                       zero_infinity)[0]
    if zero_infinity:
        from .pointwise import where
        loss = where(loss == float("inf"), loss.new_zeros(()), loss)
    if mode == Reduction.MEAN:
        from .creation import tensor
        # (the lengths on the loss's device, as torch's at::tensor(target_lengths, res.options()))
        return (loss / tensor(tls, dtype=loss.dtype, device=loss.device).clamp_min(1)).mean()
    if mode == Reduction.SUM:
        return loss.sum()
    return loss if batched else loss.squeeze(0)
