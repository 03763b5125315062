r"""Normalization: batch norm, layer norm, group norm (and instance norm, a batch norm of the instances).

All three standardise x over some axes and apply a per-channel affine map::

    xhat = (x - mean) * rstd,   rstd = 1 / sqrt(var + eps)       (var: biased, over the axes)
    y    = xhat * weight + bias

and all three share one derivative. With g' = grad * weight (the gradient reaching xhat),
``dx = rstd * (g' - mean(g') - xhat * mean(g' * xhat))`` over the same axes; the weight gets
``sum(grad * xhat)`` and the bias ``sum(grad)`` over the other axes. Batch norm in eval mode uses
the running statistics, which are constants: there ``dx = g' * rstd``. Layer norm's float32 rows shorter
than 8 elements compute their statistics and dx in the arithmetic of torch's CPU kernel instead
(``_layer_norm_input_grad``), whose float32 bits they then are.

As in torch, each is one aten op with one node per call, and its derivative is an aten op too:

==========================  ===========================  ==================================================
op                          node                         its derivative (itself differentiable: double backward)
==========================  ===========================  ==================================================
``native_batch_norm``       ``NativeBatchNormBackward0``  ``native_batch_norm_backward``
``native_layer_norm``       ``NativeLayerNormBackward0``  ``native_layer_norm_backward``
``native_group_norm``       ``NativeGroupNormBackward0``  ``native_group_norm_backward``
==========================  ===========================  ==================================================

The nodes save the input, the weight and the statistics (``result1`` the mean, ``result2`` the
reciprocal standard deviation). Batch norm updates the running statistics inside its kernel, in
place, without bumping their version (as torch's kernel does), so a network run twice before one
backward -- a siamese model, a loss summed over two passes -- is not a false in-place error.

    >>> import glasstorch as torch
    >>> bn = torch.nn.BatchNorm1d(3)
    >>> y = bn(torch.randn(4, 3, requires_grad=True))
    >>> y.grad_fn.name(), bn.running_mean._version
    ('NativeBatchNormBackward0', 0)
"""
import math

from .._tensor import _wrap
from .._seam import overridable
from .._array import xp, row_major, ascontiguousarray, empty_like as _empty_like
from .._ops import defop, aten, node_classes_of
from ..autograd import grad_mode

__getattr__ = node_classes_of(__name__)    # (the node classes declared here, by name: TanhBackward0)

__all__ = ["batch_norm", "layer_norm", "group_norm", "instance_norm"]


# ---------------------------------------------------------------------------------------------------------------
# Shared kernels on arrays: the statistics, the standardisation and its derivative
# ---------------------------------------------------------------------------------------------------------------
_LANES = 8      # the float32 lanes of torch's AVX2 vectors (Vectorized<float>): its row kernels' unit


def _moments(x, axes):
    """mean and biased variance of ``x`` over ``axes`` (kept as size-1 dims), in x's dtype."""
    mean = x.mean(axis=axes, keepdims=True, dtype=x.dtype)
    xc = x - mean
    return mean, xp.mean(xc * xc, axis=axes, keepdims=True, dtype=x.dtype), xc


def _rstd(var, eps):
    return (1 / xp.sqrt(var + var.dtype.type(eps))).astype(var.dtype, copy=False)


def _standardise_backward(g, xc, rstd, axes, count):
    """dx of xhat = (x - mean) rstd, for a gradient ``g`` reaching xhat; ``xc`` = x - mean."""
    sum_g = g.sum(axis=axes, keepdims=True)
    sum_gxc = (g * xc).sum(axis=axes, keepdims=True)
    dx = g - sum_g / count
    dx -= xc * (sum_gxc * (rstd * rstd / count))
    dx *= rstd
    return dx


def _as_rows(x, count):
    """``x`` as (rows, count) -- one row per group normalised over its trailing elements -- when the row
    kernels below serve it (a float32/float64 NumPy array; in another layout, a row-major copy, as torch's
    kernel reads), else None."""
    if type(x) is xp.ndarray and x.dtype.char in "fd" and x.size and count:
        return xp.ascontiguousarray(x).reshape(-1, count)
    return None


def _row_moments(x2):
    """mean and biased variance of each row of the 2-D array ``x2``, and ``x2 - mean``: the sums are
    matrix-vector products (a row of 128 float32 summed by ``x.sum(axis=1)`` costs 3x the gemv) and
    the variance a row-wise dot product, with no ``xc * xc`` array. Each is a float32 sum in its
    own order, as NumPy's pairwise sum and torch's are in theirs: they agree to float32 rounding."""
    count = x2.shape[1]
    if count < _LANES and x2.dtype == xp.float32:
        return _short_row_moments(x2)
    n = x2.dtype.type(count)
    mean = x2.dot(xp.ones(count, x2.dtype))
    mean /= n
    mean = mean.reshape(-1, 1)
    xc = x2 - mean
    var = xp.einsum("ij,ij->i", xc, xc)
    var /= n
    return mean, var.reshape(-1, 1), xc


def _short_row_moments(x2):
    """``_row_moments`` of float32 rows shorter than a vector of torch's (8 lanes): Welford's running mean and sum
    of squared deviations, element after element, as torch's RowwiseMoments computes them there -- the same
    float32 statistics, so that the backward of a layer norm of a few nearly equal values, which magnifies
    their last bit, rounds as torch's does."""
    count = x2.shape[1]
    mean = xp.zeros((x2.shape[0], 1), x2.dtype)
    m2 = xp.zeros_like(mean)
    for j in range(count):
        x = x2[:, j:j + 1]
        delta = x - mean
        mean += delta / x2.dtype.type(j + 1)
        m2 += delta * (x - mean)
    m2 /= x2.dtype.type(count)
    return mean, m2, x2 - mean


def _summed(t, axes, shape):
    """``t`` summed over ``axes`` (none: as is) and viewed as ``shape`` -- a parameter's gradient."""
    return (t.sum(axis=axes) if axes else t).reshape(shape)


# ---------------------------------------------------------------------------------------------------------------
# Double backward: torch's batchnorm_double_backward / layer_norm_double_backward, written once
# ---------------------------------------------------------------------------------------------------------------
def _sum_kept(t, axes):
    """t summed over ``axes`` with the dims kept (no axes: t itself -- an empty dim list would sum all)."""
    return aten.sum.dim_IntList(t, list(axes), True) if axes else t


def _norm_double_backward(x, gamma, ggI, ggW, ggB, gO, mean, rstd, axes, param_axes, count, training):
    """The derivatives of (dx, dweight, dbias) = norm_backward(gO, x, weight) in (x, weight, gO), given
    the gradients ggI, ggW, ggB that reached dx, dweight, dbias (any may be None).

    ``axes``: the normalised axes (``count`` elements per group); ``gamma``/``ggW``/``ggB`` broadcast
    against x; ``mean``/``rstd`` keep the normalised axes as size-1 dims; ``param_axes``: the axes a
    parameter's gradient sums over. In training the statistics depend on x; in batch norm's eval mode
    (``training`` False) they are constants. Returns (gI, gW, ggO), gW still broadcast-shaped.

    torch's batchnorm_double_backward, with the weight kept inside the sums so that the same lines
    serve layer and group norm, whose weight varies along the normalised axes.
    """
    xmu = x - mean
    r2 = rstd * rstd
    r3 = r2 * rstd
    gp = gO if gamma is None else gO * gamma            # the gradient that reached xhat

    def dx_of_standardise(h):
        # the first backward's map from a gradient reaching xhat to dx (it is its own adjoint)
        return (rstd / count) * (count * h - _sum_kept(h, axes) - xmu * r2 * _sum_kept(h * xmu, axes))

    gI = gW = ggO = None
    if ggI is not None:
        if training:            # dx depends on x through xhat and the statistics
            gp_sum, gpxmu_sum = _sum_kept(gp, axes), _sum_kept(gp * xmu, axes)
            ggI_sum, ggIxmu_sum = _sum_kept(ggI, axes), _sum_kept(ggI * xmu, axes)
            all_sub = ggI_sum * gp_sum / count - _sum_kept(gp * ggI, axes) + r2 * gpxmu_sum * ggIxmu_sum * (3 / count)
            gI = (xmu * r3 * all_sub / count
                  + ggIxmu_sum * r3 / count * (gp_sum / count - gp)
                  + gpxmu_sum * r3 / count * (ggI_sum / count - ggI))
            projected = dx_of_standardise(ggI)
        else:
            projected = ggI * rstd
        if gamma is not None:
            gW = _sum_kept(gO * projected, param_axes)
        ggO = projected if gamma is None else projected * gamma
    if ggW is not None:         # dweight = sum(gO * xhat)
        h = gO * ggW
        term = dx_of_standardise(h) if training else h * rstd
        gI = term if gI is None else gI + term
        term = ggW * xmu * rstd
        ggO = term if ggO is None else ggO + term
    if ggB is not None:         # dbias = sum(gO)
        ggO = aten.expand(ggB, list(gO.shape)) if ggO is None else ggO + ggB
    return gI, gW, ggO


def _param_view(t, shape):
    return None if t is None else t.reshape(shape)


# ===============================================================================================================
# Batch norm: per channel (dim 1), over the batch and the spatial dims
# ===============================================================================================================
def _channels(input):
    return input.shape[1] if len(input.shape) > 1 else 1


def _bn_layout(input):
    """(the reduced axes, the shape a per-channel vector broadcasts as, elements per channel)."""
    c = _channels(input)
    nd = len(input.shape)
    axes = (0,) + tuple(range(2, nd))
    return axes, (1, c) + (1,) * (nd - 2), math.prod(input.shape) // c if c else 0


def _check_bn_args(input, weight, bias, running_mean, running_var, training):
    """torch's _batch_norm_impl_index checks: per-channel tensors of C elements, running stats in eval."""
    c = _channels(input)
    for name, t in (("running_mean", running_mean), ("running_var", running_var)):
        if t is None:
            if not training:
                raise RuntimeError(f"{name} must be defined in evaluation mode")
        elif t.size != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.size}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t.size != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.size}")


# Batch norm on rows. A row-major (N, C, *S) float array is N*C rows of prod(S) elements, row r of channel
# r % C: the per-channel sums are row sums (a gemv, or a row-wise dot product) added over the batch, and every
# per-channel map applies to a block of rows with a per-row column of coefficients. The element-wise passes
# go over blocks of rows small enough to stay in the cache, each block's temporary ``x - mean`` made again
# where it is needed rather than kept: an activation of TinySSD's first layers is 134 MB (32x16x256x256
# float32), and each full-size temporary is a fresh mapping that the kernel must fault in and zero (glibc
# maps blocks that large directly), which cost more than the arithmetic (forward 0.55 s, backward 0.73 s,
# against torch's 0.17 and 0.12). The maths is torch's CPU kernel's (batch_norm_cpu_transform_input,
# batch_norm_cpu_backward): y = x * alpha + beta, alpha = rstd * w, beta = b - mean * alpha; and
# dx = (g - mean(g) - (x - mean) * k) * rstd * w, k = sum(g (x - mean)) rstd^2 / count.
_BN_BLOCK_BYTES = 256 << 10     # a block of rows: a few of these fit in a core's L2 cache
_BN_MIN_ROW = 8                 # shorter rows (BatchNorm1d's (N, C)): NumPy's axis reductions serve


def _bn_rows(x):
    """``x`` (N, C, *S) as its (N*C, prod(S)) rows when the row kernels serve it, else None."""
    if (type(x) is not xp.ndarray or x.dtype.char not in "fd" or x.ndim < 3 or not x.flags.c_contiguous
            or x.size == 0):
        return None
    length = math.prod(x.shape[2:])
    return x.reshape(-1, length) if length >= _BN_MIN_ROW else None


def _row_blocks(rows):
    """Slices of ``rows``' first dim: blocks of about ``_BN_BLOCK_BYTES``."""
    step = max(1, _BN_BLOCK_BYTES // (rows.shape[1] * rows.itemsize))
    return [slice(i, i + step) for i in range(0, rows.shape[0], step)]


def _per_row(v, n, dtype):
    """A per-channel vector (C,) as the (N*C, 1) column of its rows' coefficients, in ``dtype``."""
    return xp.tile(xp.asarray(v, dtype=dtype).reshape(-1), n).reshape(-1, 1)


def _channel_sums(per_row, n):
    """Per-row sums (N*C,) added over the batch: (C,), in float64."""
    return per_row.reshape(n, -1).sum(axis=0, dtype=xp.float64)


def _row_sums(rows):
    return rows.dot(xp.ones(rows.shape[1], rows.dtype))


def _centred_row_dots(rows, mean_rows, other=None):
    """Per row, sum((x - mean) * other) (``other`` None: sum((x - mean)^2)), block by block."""
    out = xp.empty(rows.shape[0], rows.dtype)
    for b in _row_blocks(rows):
        xc = rows[b] - mean_rows[b]
        xp.einsum("ij,ij->i", xc, xc if other is None else other[b], out=out[b])
    return out


def _bn_forward_rows(x, rows, weight, bias, running_mean, running_var, training, momentum, eps):
    n, dtype, count = x.shape[0], x.dtype, rows.size // x.shape[1]
    if training:
        mean = (_channel_sums(_row_sums(rows), n) / count).astype(dtype)
        var = (_channel_sums(_centred_row_dots(rows, _per_row(mean, n, dtype)), n) / count).astype(dtype)
        rstd = _rstd(var, eps)
        _update_running_stats(running_mean, running_var, mean, var, count, momentum)
    else:
        mean = running_mean.astype(dtype, copy=False).reshape(-1)
        rstd = _rstd(running_var.astype(dtype, copy=False), eps).reshape(-1)
    alpha = rstd if weight is None else rstd * weight.reshape(-1)
    beta = -mean * alpha if bias is None else bias.reshape(-1) - mean * alpha
    alpha_rows, beta_rows = _per_row(alpha, n, dtype), _per_row(beta, n, dtype)
    out = xp.empty_like(x)
    out_rows = out.reshape(rows.shape)
    for b in _row_blocks(rows):
        xp.multiply(rows[b], alpha_rows[b], out=out_rows[b])
        out_rows[b] += beta_rows[b]
    if training:
        return out, mean, rstd
    return out, _empty_like(x, (0,)), _empty_like(x, (0,))     # torch's CPU kernel returns none in eval


def _update_running_stats(running_mean, running_var, mean, var, count, momentum):
    """r = (1 - momentum) r + momentum * batch_stat, the variance unbiased; in place, their version untouched
    (torch's kernel does the same)."""
    if running_mean is not None:
        running_mean *= 1 - momentum
        running_mean += (momentum * mean.reshape(-1)).astype(running_mean.dtype, copy=False)
    if running_var is not None:
        unbiased = var.reshape(-1) * (count / max(count - 1, 1))
        running_var *= 1 - momentum
        running_var += (momentum * unbiased).astype(running_var.dtype, copy=False)


def _native_batch_norm_kernel(input, weight, bias, running_mean, running_var, training, momentum, eps):
    _check_bn_args(input, weight, bias, running_mean, running_var, training)
    rows = _bn_rows(input)
    if rows is not None:
        return _bn_forward_rows(input, rows, weight, bias, running_mean, running_var, training, momentum, eps)
    axes, bshape, count = _bn_layout(input)
    if training:
        mean, var, xc = _moments(input, axes)
        rstd = _rstd(var, eps)
        _update_running_stats(running_mean, running_var, mean, var, count, momentum)
        save_mean, save_rstd = mean.reshape(-1), rstd.reshape(-1)
    else:
        mean = running_mean.astype(input.dtype, copy=False).reshape(bshape)
        rstd = _rstd(running_var.astype(input.dtype, copy=False), eps).reshape(bshape)
        xc = input - mean
        save_mean = save_rstd = _empty_like(input, (0,))      # torch's CPU kernel returns none in eval
    scale = rstd if weight is None else rstd * weight.reshape(bshape)
    out = xc * scale
    if bias is not None:
        out += bias.reshape(bshape)
    return out, save_mean, save_rstd


def _bn_backward_rows(grad_out, input, rows, weight, mean, rstd, train, output_mask):
    n, dtype, count = input.shape[0], input.dtype, rows.size // input.shape[1]
    g_rows = xp.ascontiguousarray(grad_out, dtype=dtype).reshape(rows.shape)
    mean_rows = _per_row(mean, n, dtype)
    sum_g = _channel_sums(_row_sums(g_rows), n)
    need_dotp = (train and output_mask[0]) or output_mask[1]
    dotp = _channel_sums(_centred_row_dots(rows, mean_rows, g_rows), n) if need_dotp else None
    g_in = g_w = g_b = None
    if output_mask[0]:
        scale = rstd if weight is None else rstd * weight.reshape(-1)
        g_in = xp.empty_like(input)
        in_rows = g_in.reshape(rows.shape)
        if train:
            k_rows = _per_row(dotp * rstd * rstd / count, n, dtype)
            mean_g_rows = _per_row(sum_g / count, n, dtype)
            scale_rows = _per_row(scale, n, dtype)
            for b in _row_blocks(rows):
                xc = rows[b] - mean_rows[b]
                xc *= k_rows[b]
                xp.subtract(g_rows[b], xc, out=in_rows[b])
                in_rows[b] -= mean_g_rows[b]
                in_rows[b] *= scale_rows[b]
        else:
            xp.multiply(g_rows, _per_row(scale, n, dtype), out=in_rows)
    if output_mask[1]:
        g_w = (dotp * rstd).astype(dtype)
    if output_mask[2]:
        g_b = sum_g.astype(dtype)
    return g_in, g_w, g_b


def _native_batch_norm_backward_kernel(grad_out, input, weight, running_mean, running_var, save_mean, save_invstd,
                                       train, eps, output_mask):
    axes, bshape, count = _bn_layout(input)
    if train:
        mean, rstd = save_mean.reshape(bshape), save_invstd.reshape(bshape)
    else:
        mean = running_mean.astype(input.dtype, copy=False).reshape(bshape)
        rstd = _rstd(running_var.astype(input.dtype, copy=False), eps).reshape(bshape)
    rows = _bn_rows(input)
    if rows is not None and type(grad_out) is xp.ndarray:
        return _bn_backward_rows(grad_out, input, rows, weight, mean.reshape(-1), rstd.reshape(-1), train,
                                 output_mask)
    xc = input - mean
    g_in = g_w = g_b = None
    if output_mask[0]:
        g = grad_out if weight is None else grad_out * weight.reshape(bshape)
        g_in = _standardise_backward(g, xc, rstd, axes, count) if train else g * rstd
    if output_mask[1]:
        g_w = ((grad_out * xc).sum(axis=axes, keepdims=True) * rstd).reshape(-1)
    if output_mask[2]:
        g_b = grad_out.sum(axis=axes)
    return g_in, g_w, g_b


def _batch_norm_double_backward(grads, input, weight, grad_out, running_mean, running_var, save_mean, save_invstd,
                                train, eps, output_mask):
    axes, bshape, count = _bn_layout(input)
    if train:
        mean, rstd = save_mean.reshape(bshape), save_invstd.reshape(bshape)
    else:
        mean, rstd = running_mean.reshape(bshape), (running_var.reshape(bshape) + eps) ** -0.5
    gI, gW, ggO = _norm_double_backward(input, _param_view(weight, bshape), grads[0], _param_view(grads[1], bshape),
                                        _param_view(grads[2], bshape), grad_out, mean, rstd, axes, axes, count, train)
    return gI, (None if gW is None else gW.reshape((-1,))), ggO


native_batch_norm = defop(
    "native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, "
    "bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)", _native_batch_norm_kernel,
    node="NativeBatchNormBackward0", output_differentiability=(True, False, False),
    joint={("input", "weight", "bias"):
           lambda grad, input, weight, running_mean, running_var, result1, result2, training, eps, output_mask:
           aten.native_batch_norm_backward(grad, input, weight, running_mean, running_var, result1, result2,
                                           training, eps, output_mask)},
    running_mean=None, running_var=None)
native_batch_norm_backward = defop(
    "native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, Tensor? running_mean, "
    "Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, bool train, float eps, bool[3] output_mask) -> "
    "(Tensor, Tensor, Tensor)", _native_batch_norm_backward_kernel,
    node="NativeBatchNormBackwardBackward0",
    joint={("input", "weight", "grad_out"):
           lambda grads, input, weight, grad_out, running_mean, running_var, save_mean, save_invstd, train, eps,
           output_mask: _batch_norm_double_backward(grads, input, weight, grad_out, running_mean, running_var,
                                                    save_mean, save_invstd, train, eps, output_mask)},
    running_mean=None, running_var=None)


@overridable(defaults_by_keyword=True)
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Normalise each channel (dim 1) over the batch and spatial dims; while training, also update
    the running statistics in place: r = (1 - momentum) r + momentum * batch_stat (variance unbiased)."""
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    if input.numel() == 0:      # torch: a copy (times weight[0], plus bias[0]) keeps the graph connected
        out = input.clone()
        if weight is not None:
            out = out * weight[0]
        if bias is not None:
            out = out + bias[0]
        return out
    return native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)[0]


@overridable(defaults_by_keyword=True)
def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Batch norm of every (sample, channel) on its own: the batch folded into the channels (torch's
    composite: per-channel tensors repeated per sample, the running statistics averaged back)."""
    if use_input_stats and math.prod(input.shape[2:]) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {input.shape}")
    b, c = input.shape[:2]
    repeated = [None if t is None else t.repeat(b) for t in (running_mean, running_var, weight, bias)]
    folded = input.contiguous().view((1, b * c) + tuple(input.shape[2:]))
    out = batch_norm(folded, repeated[0], repeated[1], repeated[2], repeated[3], use_input_stats, momentum, eps)
    with grad_mode.no_grad():
        for stat, moved in ((running_mean, repeated[0]), (running_var, repeated[1])):
            if stat is not None:
                stat.copy_(moved.view(b, c).mean(0))
    return out.view(input.shape)


# ===============================================================================================================
# Layer norm: over the last len(normalized_shape) dims
# ===============================================================================================================
def _ln_axes(input, normalized_shape):
    nd = len(normalized_shape)
    return tuple(range(input.ndim - nd, input.ndim)), tuple(range(input.ndim - nd))


def _native_layer_norm_kernel(input, normalized_shape, weight, bias, eps):
    normalized_shape = tuple(normalized_shape)
    nd = len(normalized_shape)
    if input.ndim < nd or input.shape[input.ndim - nd:] != normalized_shape:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, normalized_shape))}], but got input of size{list(input.shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t.shape != normalized_shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{list(t.shape)} and normalized_shape = {list(normalized_shape)}")
    axes, _ = _ln_axes(input, normalized_shape)
    x2 = _as_rows(input, math.prod(normalized_shape))
    if x2 is not None:      # (the weight and bias multiply rows: flat, as the rows are)
        mean, var, xc = _row_moments(x2)
        weight, bias = (None if t is None else t.reshape(-1) for t in (weight, bias))
        stats_shape = input.shape[:input.ndim - nd] + (1,) * nd
    else:
        mean, var, xc = _moments(input, axes)
    rstd = _rstd(var, eps)
    if x2 is not None:       # (xc is this call's own array: the result is written into it)
        out = xc
        out *= rstd
    else:
        out = xc * rstd
    if weight is not None:
        out *= weight
    if bias is not None:
        out += bias
    if x2 is not None:
        return out.reshape(input.shape), mean.reshape(stats_shape), rstd.reshape(stats_shape)
    return row_major(out), mean, rstd   # (torch computes on a contiguous copy of the input)


def _fma(a, b, c):
    """``a * b + c`` rounded once, as the fused multiply-add the compiler puts in torch's CPU kernels: in float32
    through float64 (which holds the product of two float32 exactly). Other dtypes and arrays round twice."""
    if type(a) is xp.ndarray and a.dtype == xp.float32:
        return (a.astype(xp.float64) * b + c).astype(xp.float32)
    return a * b + c


def _row_dot(a, b=None):
    """Per row of the 2-D ``a``: sum_j a[:, j] * b[..., j] (``b`` None: sum_j a[:, j]), as a column. A float32 row
    shorter than a vector of torch's is summed left to right, as torch's vectorized reductions sum it; longer rows
    as matrix-vector products (in BLAS's order; torch's is its 8 lanes', then their sum)."""
    n = a.shape[1]
    if type(a) is not xp.ndarray:
        return (a if b is None else a * b).sum(axis=1, keepdims=True)
    if n < _LANES and a.dtype == xp.float32:
        p = a if b is None else a * b
        s = p[:, :1].copy()
        for j in range(1, n):
            s += p[:, j:j + 1]
        return s
    if b is None:
        return a.dot(xp.ones(n, a.dtype)).reshape(-1, 1)
    return (a.dot(b) if b.ndim == 1 else xp.einsum("ij,ij->i", a, b)).reshape(-1, 1)


def _layer_norm_input_grad(g, x, xc, gxc, mean, rstd, weight):
    """dx of the layer norm on rows (``g``, ``x``, ``xc`` = x - mean, ``gxc`` = g * xc: (rows, n); ``mean``,
    ``rstd``: columns; ``weight``: a row or None). ``xc`` is this call's to overwrite.

    A float32 layer norm of a few nearly equal values makes dx a difference of nearly equal numbers: each
    order of operations rounds to another float32, and the statistics' last bit is magnified. On float32 rows
    shorter than 8, where the statistics are torch's (``_short_row_moments``) and so are the sums
    (``_row_dot``), dx is computed in the arithmetic of torch's CPU kernel (LayerNormBackwardKernelImplInternal),
    with its fused multiply-adds (``_fma``), and comes out as torch's float32 bits (fuzz seed 796184083448)::

        ds = sum(g * x * w),  db = sum(g * w)                          (raw x, not x - mean)
        b  = (db * mean - ds) * rstd^3 / n,   c = -b * mean - db * rstd / n
        dx = rstd * g * w + b * x + c

    Longer rows, whose statistics are summed by BLAS (not in torch's order), use the centred form
    ``rstd * (g' - mean(g') - xhat * mean(g' * xhat))`` (g' = g * w), which loses less than torch's from
    raw x: measured on ill-conditioned rows, half torch's median float32 error."""
    n = x.shape[1]
    scale = x.dtype.type(1) / x.dtype.type(n)
    if n >= _LANES or type(x) is not xp.ndarray or x.dtype != xp.float32:
        mean_g = _row_dot(g, weight) * scale
        if weight is None:
            dx = g - mean_g
        else:
            dx = g * weight
            dx -= mean_g
        xc *= _row_dot(gxc, weight) * (rstd * rstd * scale)
        dx -= xc
        dx *= rstd
        return dx
    if weight is None:
        ds, db = _row_dot(g, x), _row_dot(g)
    else:
        ds, db = _row_dot(g * x, weight), _row_dot(g, weight)
    b = _fma(db, mean, -ds) * rstd * rstd * rstd * scale
    c = _fma(-b, mean, -(db * rstd * scale))
    ag = g * rstd
    if weight is not None:
        ag *= weight
    dx = _fma(b, x, ag)
    dx += c
    return dx


def _native_layer_norm_backward_kernel(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask):
    count = math.prod(normalized_shape)
    rows = math.prod(input.shape[:input.ndim - len(normalized_shape)])
    x2 = input.reshape(rows, count)      # (torch's kernel reads contiguous copies of both, as rows)
    g2 = ascontiguousarray(grad_out).reshape(rows, count)
    mean2, rstd2 = mean.reshape(rows, 1), rstd.reshape(rows, 1)
    xc = x2 - mean2
    gxc = g2 * xc
    numpy_rows = type(g2) is xp.ndarray and rows > 0    # (then the column sums are matrix-vector products)
    g_in = g_w = g_b = None
    if output_mask[1] and weight is not None:       # sum over rows of g * xhat
        g_w = (rstd2.reshape(-1).dot(gxc) if numpy_rows else (gxc * rstd2).sum(axis=0)).reshape(weight.shape)
    if output_mask[2] and bias is not None:
        g_b = (xp.ones(rows, g2.dtype).dot(g2) if numpy_rows else g2.sum(axis=0)).reshape(bias.shape)
    if output_mask[0]:
        g_in = _layer_norm_input_grad(g2, x2, xc, gxc, mean2, rstd2, None if weight is None else weight.reshape(-1))
        g_in = g_in.reshape(input.shape)
    return g_in, g_w, g_b


def _layer_norm_double_backward(grads, input, weight, grad_out, normalized_shape, mean, rstd):
    axes, lead = _ln_axes(input, normalized_shape)
    gI, gW, ggO = _norm_double_backward(input, weight, grads[0], grads[1], grads[2], grad_out, mean, rstd, axes,
                                        lead, math.prod(normalized_shape), True)
    return gI, (None if gW is None else gW.reshape(tuple(normalized_shape))), ggO


native_layer_norm = defop(
    "native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> "
    "(Tensor, Tensor, Tensor)", _native_layer_norm_kernel,
    node="NativeLayerNormBackward0", output_differentiability=(True, False, False),
    joint={("input", "weight", "bias"):
           lambda grad, input, normalized_shape, result1, result2, weight, bias, output_mask:
           aten.native_layer_norm_backward(grad, input, normalized_shape, result1, result2, weight, bias,
                                           output_mask)})
native_layer_norm_backward = defop(
    "native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, Tensor mean, Tensor rstd, "
    "Tensor? weight, Tensor? bias, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
    _native_layer_norm_backward_kernel, node="NativeLayerNormBackwardBackward0",
    joint={("input", "weight", "grad_out"):
           lambda grads, input, weight, grad_out, normalized_shape, mean, rstd:
           _layer_norm_double_backward(grads, input, weight, grad_out, normalized_shape, mean, rstd)},
    bias=lambda: None)      # (bias only says whether it is there: it has no gradient to give)


@overridable(defaults_by_keyword=True)
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalise over the last len(normalized_shape) dims, then weight * xhat + bias (same shape)."""
    if isinstance(normalized_shape, int):
        raise TypeError("layer_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not int")
    normalized_shape = [int(n) for n in normalized_shape]
    return native_layer_norm(input, normalized_shape, weight, bias, eps)[0]


# ===============================================================================================================
# Group norm: the channels split into groups, each (sample, group) normalised over its channels and positions
# ===============================================================================================================
def _gn_view(N, C, HxW, group):
    """The (N, groups, channels per group, positions) view the group norm computes in."""
    return (N, group, C // group, HxW)


def _native_group_norm_kernel(input, weight, bias, N, C, HxW, group, eps):
    x = input.reshape(_gn_view(N, C, HxW, group))
    mean, var, xc = _moments(x, (2, 3))
    rstd = _rstd(var, eps)
    out = xc * rstd
    pshape = (1, group, C // group, 1)
    if weight is not None:
        out *= weight.reshape(pshape)
    if bias is not None:
        out += bias.reshape(pshape)
    return out.reshape(input.shape), mean.reshape(N, group), rstd.reshape(N, group)


def _native_group_norm_backward_kernel(grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask):
    view = _gn_view(N, C, HxW, group)
    pshape = (1, group, C // group, 1)
    g = grad_out.reshape(view)
    r = rstd.reshape(N, group, 1, 1)
    xc = input.reshape(view) - mean.reshape(N, group, 1, 1)
    g_in = g_w = g_b = None
    if output_mask[0]:
        gx = g if weight is None else g * weight.reshape(pshape)
        g_in = _standardise_backward(gx, xc, r, (2, 3), view[2] * view[3]).reshape(input.shape)
    if output_mask[1]:
        g_w = _summed(g * (xc * r), (0, 3), (C,))
    if output_mask[2]:
        g_b = _summed(g, (0, 3), (C,))
    return g_in, g_w, g_b


def _group_stats_backward(input, mean, rstd, gmean, grstd, N, C, HxW, group):
    """The input's gradient through the mean and rstd outputs themselves (torch's group norm gives them
    gradients: d mean/dx = 1/n, d rstd/dx = -rstd^3 (x - mean)/n per group of n elements)."""
    view = _gn_view(N, C, HxW, group)
    n = view[2] * view[3]
    out = 0
    if gmean is not None:
        out = out + gmean.reshape((N, group, 1, 1)) / n
    if grstd is not None:
        r = rstd.reshape((N, group, 1, 1))
        out = out - grstd.reshape((N, group, 1, 1)) * r * r * r * (input.reshape(view) - mean.reshape((N, group, 1, 1))) / n
    return aten.expand(out, list(view)).reshape(tuple(input.shape))


def _group_norm_backward(grads, input, result1, result2, weight, N, C, HxW, group, output_mask):
    g_in = g_w = g_b = None
    if grads[0] is not None:
        g_in, g_w, g_b = aten.native_group_norm_backward(grads[0], input, result1, result2, weight, N, C, HxW,
                                                         group, output_mask)
    if output_mask[0] and (grads[1] is not None or grads[2] is not None):
        extra = _group_stats_backward(input, result1, result2, grads[1], grads[2], N, C, HxW, group)
        g_in = extra if g_in is None else g_in + extra
    return g_in, g_w, g_b


def _group_norm_double_backward(grads, input, weight, grad_out, mean, rstd, N, C, HxW, group):
    view = _gn_view(N, C, HxW, group)
    pshape = (1, group, C // group, 1)
    gI, gW, ggO = _norm_double_backward(
        input.reshape(view), _param_view(weight, pshape), _param_view(grads[0], view), _param_view(grads[1], pshape),
        _param_view(grads[2], pshape), grad_out.reshape(view), mean.reshape((N, group, 1, 1)),
        rstd.reshape((N, group, 1, 1)), (2, 3), (0, 3), view[2] * view[3], True)
    shape = tuple(input.shape)
    return (None if gI is None else gI.reshape(shape), None if gW is None else gW.reshape((C,)),
            None if ggO is None else ggO.reshape(shape))


native_group_norm = defop(
    "native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, int group, "
    "float eps) -> (Tensor, Tensor, Tensor)", _native_group_norm_kernel, node="NativeGroupNormBackward0",
    joint={("input", "weight", "bias"): _group_norm_backward})
native_group_norm_backward = defop(
    "native_group_norm_backward(Tensor grad_out, Tensor input, Tensor mean, Tensor rstd, Tensor? weight, SymInt N, "
    "SymInt C, SymInt HxW, int group, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
    _native_group_norm_backward_kernel, node="NativeGroupNormBackwardBackward0",
    joint={("input", "weight", "grad_out"): _group_norm_double_backward},
    # the formulas above are total derivatives (the statistics' dependence on the input included),
    # so nothing more flows to the mean and rstd the forward returned
    mean=lambda: None, rstd=lambda: None)


@overridable(defaults_by_keyword=True)
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Split the channels into ``num_groups`` groups and normalise each (sample, group) over its
    channels and positions; the affine map is per channel."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    n, c = input.shape[:2]
    if math.prod([n * c // num_groups, num_groups] + list(input.shape[2:])) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"{[n * c // num_groups, num_groups] + list(input.shape[2:])}")
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {list(t.shape)} and input of shape {list(input.shape)}")
    return native_group_norm(input.contiguous(), weight, bias, n, c, math.prod(input.shape[2:]), num_groups, eps)[0]
