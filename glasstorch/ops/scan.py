"""logcumsumexp: the running log-sum-exp along a dim (beside reduction.py's cumsum/cumprod).

    y_i = log(sum_{j <= i} exp(x_j))          (NumPy: logaddexp.accumulate, stable)

Its derivative (torch's ``logcumsumexp_backward``, after TensorFlow's): dL/dx_k = sum_{i >= k} g_i
exp(x_k - y_i). Written in the log domain so nothing overflows, with the positive and the negative
parts of g apart (a log needs positive numbers):

    dx = exp(revlcse(log g+ - y) + x) - exp(revlcse(log g- - y) + x)

where revlcse is logcumsumexp from the end (flip, logcumsumexp, flip), and log g+ is the lowest float
where g is not positive (finite, as torch's, so double backward has no NaN).
"""
from .. import _dtype
from .._tensor import _wrap_dim
from .._array import xp
from ._op import method
from .._ops import defop, aten, node_classes_of
from .._seam import overridable
from .joining import flip_op

__getattr__ = node_classes_of(__name__)    # (the node classes declared here, by name: TanhBackward0)

__all__ = ["logcumsumexp"]


def _logcumsumexp_kernel(self, dim):
    if self.dtype.kind not in "fc":
        raise NotImplementedError(f'"logcumsumexp_out_cpu" not implemented for \'{_dtype._BY_NUMPY[self.dtype]._legacy}\'')
    if self.ndim == 0:
        return self.copy()
    with xp.errstate(invalid="ignore"):   # -inf - -inf inside logaddexp: the result is -inf, as torch's
        return xp.logaddexp.accumulate(self, axis=dim).astype(self.dtype, copy=False)


def _reverse_logcumsumexp(x, dim):
    return flip_op(logcumsumexp_op(flip_op(x, [dim]), dim), [dim])


def _logcumsumexp_backward(grad, self, result, dim):
    if grad.ndim == 0 or 0 in grad.shape:
        return grad
    lowest = float(xp.finfo(getattr(grad.dtype, "numpy_dtype", grad.dtype)).min)
    is_positive, is_negative = grad > 0, grad < 0
    # log|g| where g has that sign, the lowest float elsewhere (finite, so every step has a derivative);
    # the `+ ~mask` keeps the log's argument away from 0 where the mask drops it anyway
    # (a mask added to zeros of grad's dtype: a bool times a float would be the default float type)
    zeros = aten.zeros_like(grad)
    log_positive = aten.log(aten.abs(grad) + ~is_positive) * is_positive + (zeros + ~is_positive) * lowest
    log_negative = aten.log(aten.abs(grad) + ~is_negative) * is_negative + (zeros + ~is_negative) * lowest
    positive = aten.exp(_reverse_logcumsumexp(log_positive - result, dim) + self)
    negative = aten.exp(_reverse_logcumsumexp(log_negative - result, dim) + self)
    return positive - negative


logcumsumexp_op = defop("logcumsumexp(Tensor self, int dim) -> Tensor", _logcumsumexp_kernel,
                        node="LogcumsumexpBackward0", self=_logcumsumexp_backward)


@method()
@overridable
def logcumsumexp(input, dim):
    return logcumsumexp_op(input, _wrap_dim(dim, max(input.ndim, 1)))
