"""Normalization layers' ops: batch norm, layer norm, group norm.

All three standardise x over some axes and apply a per-channel affine map::

    xhat = (x - mean) * rstd,   rstd = 1 / sqrt(var + eps)       (var: biased, over the axes)
    y    = xhat * weight + bias

and all three share one derivative. With g' = grad * weight (the gradient reaching xhat),
``dx = rstd * (g' - mean(g') - xhat * mean(g' * xhat))`` over the same axes; the weight gets
``sum(grad * xhat)`` and the bias ``sum(grad)`` over the other axes. Batch norm in eval mode uses
the running statistics, which are constants: there ``dx = g' * rstd``.

torch records one node per call (``NativeBatchNormBackward0``, ``NativeLayerNormBackward0``,
``NativeGroupNormBackward0``) saving the input, the weight and the statistics (``result1`` the
mean, ``result2`` the reciprocal standard deviation).
"""
from .._tensor import _wrap
from .._array import xp
from ._op import _state, make_node_class, float_array


def _standardise_grad(gxhat, xhat, rstd, axes):
    """The input gradient of xhat = (x - mean(x)) * rstd(x) for a gradient g' reaching xhat."""
    return rstd * (gxhat - gxhat.mean(axes, keepdim=True) - xhat * (gxhat * xhat).mean(axes, keepdim=True))


def _stats_graph(x, axes, eps):
    """mean and rstd as differentiable functions of x (create_graph needs their dependence on x)."""
    mean = x.mean(axes, keepdim=True)
    xc = x - mean
    return mean, ((xc * xc).mean(axes, keepdim=True) + eps).rsqrt()


def _affine_grads(node, grad, xhat, sum_axes, shape):
    gw = (grad * xhat).sum(sum_axes).reshape(shape) if node.next_functions[1][0] is not None else None
    gb = grad.sum(sum_axes).reshape(shape) if node.next_functions[2][0] is not None else None
    return gw, gb


# ---- batch norm ---------------------------------------------------------------------------------------------
class NativeBatchNormBackward0(make_node_class("NativeBatchNormBackward0", None,
                                               ("input", "weight", "running_mean", "running_var", "result1",
                                                "result2"))):
    def backward(self, grad, _g1=None, _g2=None):
        x, w, _rm, _rv, mean, rstd = self._unpack_saved()
        axes = (0,) + tuple(range(2, x.dim()))
        bshape = (1, -1) + (1,) * (x.dim() - 2)
        if self.training and _state.enabled:  # create_graph: the statistics depend on x
            mean, rstd = _stats_graph(x, axes, self.eps)
        else:
            mean, rstd = mean.view(bshape), rstd.view(bshape)
        xhat = (x - mean) * rstd
        gx = None
        if self.next_functions[0][0] is not None:
            gxhat = grad if w is None else grad * w.view(bshape)
            gx = _standardise_grad(gxhat, xhat, rstd, axes) if self.training else gxhat * rstd
        return (gx,) + _affine_grads(self, grad, xhat, axes, (-1,))


NativeBatchNormBackward0.num_outputs = 3


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Normalise each channel (dim 1) over the batch and spatial dims; while training, also update
    the running statistics in place: r = (1 - momentum) r + momentum * batch_stat (variance unbiased)."""
    x = float_array(input)
    c = x.shape[1] if x.ndim > 1 else 1
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    axes = (0,) + tuple(range(2, x.ndim))
    bshape = (1, c) + (1,) * (x.ndim - 2)
    if training:
        count = x.size // c
        mean = x.mean(axis=axes, dtype=x.dtype)
        xc = x - mean.reshape(bshape)
        var = xp.mean(xc * xc, axis=axes, dtype=x.dtype)
        rstd = (1 / xp.sqrt(var + x.dtype.type(eps))).astype(x.dtype, copy=False)
        if running_mean is not None:
            _update_running(running_mean, mean, momentum)
        if running_var is not None:
            _update_running(running_var, var * (count / max(count - 1, 1)), momentum)
    else:
        mean, var = running_mean._data.astype(x.dtype, copy=False), running_var._data.astype(x.dtype, copy=False)
        rstd = (1 / xp.sqrt(var + x.dtype.type(eps))).astype(x.dtype, copy=False)
        xc = x - mean.reshape(bshape)
    scale = rstd if weight is None else rstd * weight._data
    y = xc * scale.reshape(bshape)
    if bias is not None:
        y += bias._data.reshape(bshape)
    res = _wrap(y)
    if _state.enabled and any(t is not None and t._requires_grad for t in (input, weight, bias)):
        saved = (input, weight, running_mean, running_var, _wrap(mean), _wrap(rstd))
        node = NativeBatchNormBackward0.__new__(NativeBatchNormBackward0)
        from ..autograd.graph import connect
        connect(node, (input, weight, bias), (res, None, None), saved)
        node.training, node.eps = training, eps
    return res


def _update_running(stat, batch_value, momentum):
    """stat = (1 - momentum) * stat + momentum * batch_value, in place and outside autograd.

    The version counter is left alone, as torch leaves it (native_batch_norm's schema does not mark
    the running statistics as mutated): the node saves them, and a module run twice before backward
    (a siamese network's two branches) must not make the first node's backward fail."""
    d = stat._data
    d *= 1 - momentum
    d += (momentum * batch_value).astype(d.dtype, copy=False)


# ---- layer norm -----------------------------------------------------------------------------------------------
class NativeLayerNormBackward0(make_node_class("NativeLayerNormBackward0", None,
                                               ("input", "weight", "bias", "result1", "result2"))):
    def backward(self, grad, _g1=None, _g2=None):
        x, w, _b, mean, rstd = self._unpack_saved()
        nd = len(self.normalized_shape)
        axes = tuple(range(x.dim() - nd, x.dim()))
        if _state.enabled:
            mean, rstd = _stats_graph(x, axes, self.eps)
        xhat = (x - mean) * rstd
        gx = None
        if self.next_functions[0][0] is not None:
            gx = _standardise_grad(grad if w is None else grad * w, xhat, rstd, axes)
        lead = tuple(range(x.dim() - nd))
        return (gx,) + _affine_grads(self, grad, xhat, lead, self.normalized_shape)


NativeLayerNormBackward0.num_outputs = 3


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalise over the last len(normalized_shape) dims, then weight * xhat + bias (same shape)."""
    normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    nd = len(normalized_shape)
    x = float_array(input)
    if x.shape[x.ndim - nd:] != normalized_shape or x.ndim < nd:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, normalized_shape))}], but got input of size{list(x.shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != normalized_shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{list(t.shape)} and normalized_shape = {list(normalized_shape)}")
    axes = tuple(range(x.ndim - nd, x.ndim))
    mean = x.mean(axis=axes, keepdims=True, dtype=x.dtype)
    xc = x - mean
    rstd = (1 / xp.sqrt(xp.mean(xc * xc, axis=axes, keepdims=True, dtype=x.dtype) + x.dtype.type(eps))).astype(
        x.dtype, copy=False)
    y = xc * rstd
    if weight is not None:
        y *= weight._data
    if bias is not None:
        y += bias._data
    res = _wrap(y)
    if _state.enabled and any(t is not None and t._requires_grad for t in (input, weight, bias)):
        node = NativeLayerNormBackward0.__new__(NativeLayerNormBackward0)
        from ..autograd.graph import connect
        connect(node, (input, weight, bias), (res, None, None), (input, weight, bias, _wrap(mean), _wrap(rstd)))
        node.normalized_shape, node.eps = normalized_shape, eps
    return res


# ---- group norm -----------------------------------------------------------------------------------------------
class NativeGroupNormBackward0(make_node_class("NativeGroupNormBackward0", None,
                                               ("input", "weight", "result1", "result2"))):
    def backward(self, grad, _g1=None, _g2=None):
        x, w, mean, rstd = self._unpack_saved()
        n, c, g = x.shape[0], x.shape[1], self.group
        bshape = (1, c) + (1,) * (x.dim() - 2)
        xg = x.reshape(n, g, -1)
        if _state.enabled:
            mean, rstd = _stats_graph(xg, (2,), self.eps)
        else:
            mean, rstd = mean.view(n, g, 1), rstd.view(n, g, 1)
        xhat = ((xg - mean) * rstd).view(x.shape)
        gx = None
        if self.next_functions[0][0] is not None:
            gxhat = (grad if w is None else grad * w.view(bshape)).reshape(n, g, -1)
            gx = _standardise_grad(gxhat, xhat.reshape(n, g, -1), rstd, (2,)).view(x.shape)
        axes = (0,) + tuple(range(2, x.dim()))
        return (gx,) + _affine_grads(self, grad, xhat, axes, (-1,))


NativeGroupNormBackward0.num_outputs = 3


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Split the channels into ``num_groups`` groups and normalise each (sample, group) over its
    channels and positions; the affine map is per channel."""
    x = float_array(input)
    if x.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {x.ndim}")
    n, c = x.shape[:2]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(x.shape)} and num_groups={num_groups}")
    xg = x.reshape(n, num_groups, -1)
    mean = xg.mean(axis=2, keepdims=True, dtype=x.dtype)
    xc = xg - mean
    rstd = (1 / xp.sqrt(xp.mean(xc * xc, axis=2, keepdims=True, dtype=x.dtype) + x.dtype.type(eps))).astype(
        x.dtype, copy=False)
    y = (xc * rstd).reshape(x.shape)
    bshape = (1, c) + (1,) * (x.ndim - 2)
    if weight is not None:
        y *= weight._data.reshape(bshape)
    if bias is not None:
        y += bias._data.reshape(bshape)
    res = _wrap(y)
    if _state.enabled and any(t is not None and t._requires_grad for t in (input, weight, bias)):
        node = NativeGroupNormBackward0.__new__(NativeGroupNormBackward0)
        from ..autograd.graph import connect
        connect(node, (input, weight, bias), (res, None, None),
                (input, weight, _wrap(mean.reshape(n, num_groups)), _wrap(rstd.reshape(n, num_groups))))
        node.group, node.eps = num_groups, eps
    return res


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Batch norm of every (sample, channel) on its own: the batch folded into the channels."""
    n, c = input.shape[:2]
    folded = input.reshape((1, n * c) + tuple(input.shape[2:]))
    w = weight.repeat(n) if weight is not None else None
    b = bias.repeat(n) if bias is not None else None
    if not use_input_stats:
        return batch_norm(folded, running_mean.repeat(n), running_var.repeat(n), w, b, False, momentum,
                          eps).view(input.shape)
    if running_mean is not None or running_var is not None:  # the running stats average the instances'
        x = float_array(input).reshape(n, c, -1)
        count = x.shape[2]
        if running_mean is not None:
            _update_running(running_mean, x.mean(axis=2).mean(axis=0), momentum)
        if running_var is not None:
            _update_running(running_var, x.var(axis=2).mean(axis=0) * (count / max(count - 1, 1)), momentum)
    return batch_norm(folded, None, None, w, b, True, momentum, eps).view(input.shape)
