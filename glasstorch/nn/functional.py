r"""torch.nn.functional: the layers as functions of their inputs and weights.

Ops with a node of their own (convolution, pooling, normalization, the losses torch computes in
one kernel, activations) live in ``glasstorch/ops/nn_*.py`` with their derivatives; this module
gives them torch's signatures and composes the rest from Tensor ops exactly as torch does, so the
recorded graph is torch's graph. Example::

    >>> import glasstorch as torch
    >>> import glasstorch.nn.functional as F
    >>> x = torch.ones(2, 3, requires_grad=True)
    >>> w, b = torch.ones(4, 3), torch.zeros(4)
    >>> y = F.linear(x, w, b)          # addmm(b, x, w.t())
    >>> y.grad_fn.name()
    'AddmmBackward0'
    >>> F.cross_entropy(y, torch.tensor([0, 1])).grad_fn.name()
    'NllLossBackward0'
"""
import math

from .. import _dtype
from .._tensor import Tensor, _wrap
from .._seam import overridable
from .. import _warnings
from ..autograd.grad_mode import no_grad
from .._array import xp as _xp
from ..ops import reduction as _red, pointwise as _pw, linalg as _la, joining as _join, creation as _cr, \
    shape as _shape
from ..ops import nn_activation as _act, nn_conv as _conv, nn_pool as _pool, nn_norm as _norm, nn_loss as _loss

# ---- linear layers ---------------------------------------------------------------------------------------
@overridable
def linear(input, weight, bias=None):
    r"""y = x W^T + b, for x of shape (\*, in_features) and W of shape (out_features, in_features).

    Recorded as torch records it: ``addmm(b, x, W.t())`` for 2-D x; for other contiguous x the
    leading dims are folded into one (a view), then addmm, then a view back; without a bias,
    ``matmul(x, W.t())``; otherwise ``matmul(x, W.t()).add_(b)``.
    """
    nd = input._data.ndim
    if nd == 2 and bias is not None:  # the common case first: one addmm
        return _la.addmm(bias, input, weight.t())
    if nd == 0 or weight._data.ndim == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {nd}D and "
                           f"{weight._data.ndim}D")
    if bias is None:
        return _la.matmul(input, weight.t())
    if input.is_contiguous() and bias.dim() == 1:
        lead = tuple(input.shape[:-1])
        rows = 1
        for s in lead:
            rows *= s
        # (the input's view before weight.t(), in torch's order: where both are views whose base was
        # modified in place, the input's is the error torch reports -- fuzz seed 796212421036)
        folded = input.view(rows, input.shape[-1])
        out = _la.addmm(bias, folded, weight.t())
        return out.view(lead + (out.shape[1],))
    # (torch adds the bias in place: the result keeps matmul's dtype, and its _version counts the write)
    return _la.matmul(input, weight.t()).add_(bias)


bilinear = _conv.bilinear


# ---- convolution -------------------------------------------------------------------------------------------
conv1d, conv2d, conv3d = _conv.conv1d, _conv.conv2d, _conv.conv3d
conv_transpose1d, conv_transpose2d, conv_transpose3d = \
    _conv.conv_transpose1d, _conv.conv_transpose2d, _conv.conv_transpose3d
unfold, fold = _conv.unfold, _conv.fold


# ---- pooling -----------------------------------------------------------------------------------------------
@overridable(defaults_by_keyword=True)
def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _pool.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


@overridable(defaults_by_keyword=True)
def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _pool.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


@overridable(defaults_by_keyword=True)
def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _pool.max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


@overridable(defaults_by_keyword=True)
def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return _pool.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


@overridable(defaults_by_keyword=True)
def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return _pool.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


avg_pool1d, avg_pool2d, avg_pool3d = _pool.avg_pool1d, _pool.avg_pool2d, _pool.avg_pool3d
lp_pool2d = _pool.lp_pool2d
adaptive_avg_pool1d, adaptive_avg_pool2d = _pool.adaptive_avg_pool1d, _pool.adaptive_avg_pool2d


@overridable(defaults_by_keyword=True)
def adaptive_max_pool1d(input, output_size, return_indices=False):
    return _pool.adaptive_max_pool1d(input, output_size, return_indices)


@overridable(defaults_by_keyword=True)
def adaptive_max_pool2d(input, output_size, return_indices=False):
    return _pool.adaptive_max_pool2d(input, output_size, return_indices)


@overridable(defaults_by_keyword=True)
def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return _pool.adaptive_max_pool2d(input, output_size, True)


# ---- padding, resampling -----------------------------------------------------------------------------------
pad = _pool.pad
interpolate = _pool.interpolate
pixel_shuffle, pixel_unshuffle = _pool.pixel_shuffle, _pool.pixel_unshuffle
from ..ops.windows import unfold, fold  # noqa: E402  (im2col / col2im)
from ..ops.nn_unpool import max_unpool1d, max_unpool2d, max_unpool3d  # noqa: E402
from ..ops.nn_sampling import grid_sample, affine_grid  # noqa: E402
from ..ops.nn_ctc import ctc_loss  # noqa: E402


@overridable(defaults_by_keyword=True)
def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    _warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.")
    return interpolate(input, size, scale_factor, mode, align_corners)


@overridable(defaults_by_keyword=True)
def upsample_nearest(input, size=None, scale_factor=None):
    _warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.")
    return interpolate(input, size, scale_factor, mode="nearest")


@overridable(defaults_by_keyword=True)
def upsample_bilinear(input, size=None, scale_factor=None):
    _warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---- activations ----------------------------------------------------------------------------------------------
@overridable(defaults_by_keyword=True)
def relu(input, inplace=False):
    return _pw.relu_(input) if inplace else _pw.relu(input)


relu_ = _pw.relu_
sigmoid, tanh = _pw.sigmoid, _pw.tanh


@overridable(defaults_by_keyword=True)
def relu6(input, inplace=False):
    return _act.hardtanh_(input, 0.0, 6.0) if inplace else _act.relu6(input)


@overridable(defaults_by_keyword=True)
def leaky_relu(input, negative_slope=0.01, inplace=False):
    return (_act.leaky_relu_ if inplace else _act.leaky_relu)(input, negative_slope)


@overridable(defaults_by_keyword=True)
def elu(input, alpha=1.0, inplace=False):
    return (_act.elu_ if inplace else _act.elu)(input, alpha)


@overridable(defaults_by_keyword=True)
def selu(input, inplace=False):
    return (_act.selu_ if inplace else _act.selu)(input)


@overridable(defaults_by_keyword=True)
def celu(input, alpha=1.0, inplace=False):
    return (_act.celu_ if inplace else _act.celu)(input, alpha)


@overridable(defaults_by_keyword=True)
def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if inplace and min_val > max_val:   # (torch's F.hardtanh checks; F.hardtanh_ does not)
        raise ValueError("min_val cannot be greater than max_val")
    return (_act.hardtanh_ if inplace else _act.hardtanh)(input, min_val, max_val)


@overridable(defaults_by_keyword=True)
def silu(input, inplace=False):
    return (_act.silu_ if inplace else _act.silu)(input)


@overridable(defaults_by_keyword=True)
def mish(input, inplace=False):
    return (_act.mish_ if inplace else _act.mish)(input)


@overridable(defaults_by_keyword=True)
def hardsigmoid(input, inplace=False):
    return (_act.hardsigmoid_ if inplace else _act.hardsigmoid)(input)


@overridable(defaults_by_keyword=True)
def hardswish(input, inplace=False):
    return (_act.hardswish_ if inplace else _act.hardswish)(input)


@overridable(defaults_by_keyword=True)
def threshold(input, threshold, value, inplace=False):
    return (_act.threshold_ if inplace else _act.threshold)(input, threshold, value)


@overridable(defaults_by_keyword=True)
def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    return (_act.rrelu_ if inplace else _act.rrelu)(input, lower, upper, training)


leaky_relu_, elu_, selu_, celu_, hardtanh_, rrelu_, threshold_ = \
    _act.leaky_relu_, _act.elu_, _act.selu_, _act.celu_, _act.hardtanh_, _act.rrelu_, _act.threshold_
gelu, softplus, logsigmoid, softsign, tanhshrink = _act.gelu, _act.softplus, _act.logsigmoid, _act.softsign, \
    _act.tanhshrink
softshrink, hardshrink, glu, prelu = _act.softshrink, _act.hardshrink, _act.glu, _act.prelu


@overridable(defaults_by_keyword=True)
def softmax(input, dim=None, _stacklevel=3, dtype=None):
    return _red.softmax(input, dim, dtype)


@overridable(defaults_by_keyword=True)
def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    return _red.log_softmax(input, dim, dtype)


@overridable(defaults_by_keyword=True)
def softmin(input, dim=None, _stacklevel=3, dtype=None):
    return _red.softmax(-input, dim, dtype)


@overridable(defaults_by_keyword=True)
def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """Samples of a relaxed categorical distribution; ``hard`` returns one-hot rows whose gradient
    is the soft sample's (the straight-through estimator)."""
    gumbels = -(-(_cr.rand_like(logits).clamp_min(eps)).log()).log()
    y = _red.softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y
    index = y.max(dim, keepdim=True)[1]
    y_hard = (y.detach() * 0).scatter(dim, index, 1.0)
    return y_hard - y.detach() + y


# ---- dropout ----------------------------------------------------------------------------------------------------
@overridable(defaults_by_keyword=True)
def dropout(input, p=0.5, training=True, inplace=False):
    return _act.dropout(input, p, training, inplace)


@overridable(defaults_by_keyword=True)
def alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _act.alpha_dropout(input, p, training, inplace)


def _channel_dropout(input, p, training, inplace, spatial, name):
    """Dropout of whole channels of (N, C, *spatial) or unbatched (C, *spatial) input."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    nd = input.dim()
    if nd not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"{name}: Expected {spatial + 1}D or {spatial + 2}D input, but received a {nd}D input. "
                           f"Note that {name} exists to provide channel-wise dropout on inputs with {spatial} spatial "
                           f"dimension{'s' if spatial > 1 else ''}, a channel dimension, and an optional batch "
                           f"dimension (i.e. {spatial + 1}D or {spatial + 2}D inputs).")
    if nd == spatial + 1:
        return _act.feature_dropout(input.unsqueeze(0), p, training, False, 2).squeeze(0)
    return _act.feature_dropout(input, p, training, inplace, 2)


@overridable(defaults_by_keyword=True)
def dropout1d(input, p=0.5, training=True, inplace=False):
    return _channel_dropout(input, p, training, inplace, 1, "dropout1d")


@overridable(defaults_by_keyword=True)
def dropout2d(input, p=0.5, training=True, inplace=False):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    nd = input.dim()
    if nd not in (3, 4):
        _warnings.warn(f"dropout2d: Received a {nd}-D input to dropout2d, which is deprecated and will result in an "
                       "error in a future release. To retain the behavior and silence this warning, please use dropout "
                       "instead. Note that dropout2d exists to provide channel-wise dropout on inputs with 2 spatial "
                       "dimensions, a channel dimension, and an optional batch dimension (i.e. 3D or 4D inputs).")
    if nd == 3:
        _warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior "
                       "is desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior "
                       "will change in a future release to interpret the input as one without a batch dimension, i.e. "
                       "shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using "
                       "dropout1d instead.")
    return _act.feature_dropout(input, p, training, inplace, 2)


@overridable(defaults_by_keyword=True)
def dropout3d(input, p=0.5, training=True, inplace=False):
    return _channel_dropout(input, p, training, inplace, 3, "dropout3d")


@overridable(defaults_by_keyword=True)
def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _act.alpha_dropout(input, p, training, inplace)


# ---- normalization ----------------------------------------------------------------------------------------------
@overridable(defaults_by_keyword=True)
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    if training:
        size = input.shape
        per_channel = size[0]
        for s in size[2:]:
            per_channel *= s
        if per_channel == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")
    return _norm.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


layer_norm, group_norm, instance_norm = _norm.layer_norm, _norm.group_norm, _norm.instance_norm


@overridable(defaults_by_keyword=True)
def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x^2) + eps) over the last dims, times weight (eps defaults to the dtype's eps)."""
    normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    dims = tuple(range(-len(normalized_shape), 0))
    if eps is None:  # torch.finfo(input.dtype).eps
        eps = float(_xp.finfo(input._data.dtype).eps)
    y = input * (input.pow(2).mean(dims, keepdim=True) + eps).rsqrt()
    return y * weight if weight is not None else y


@overridable(defaults_by_keyword=True)
def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Each element divided by (k + alpha/size * sum of squares over ``size`` neighbouring channels)^beta."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = input.mul(input)
    if dim == 3:
        div = pad(div.unsqueeze(1), (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.shape
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1).view(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div


@overridable(defaults_by_keyword=True)
def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p, eps) along ``dim`` (written into ``out`` when given, by torch.div's
    out= rules: spectral_norm's power iteration updates its buffers so)."""
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    from .. import div   # (the top-level div: the one with out=)
    return div(input, denom, out=out)


# ---- embeddings -------------------------------------------------------------------------------------------------
embedding, embedding_bag, one_hot = _conv.embedding, _conv.embedding_bag, _conv.one_hot


# ---- distances -----------------------------------------------------------------------------------------------------
@overridable(defaults_by_keyword=True)
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """<x1, x2> / (max(||x1||, eps) max(||x2||, eps)) along ``dim`` (each normalised first, as torch does,
    which keeps the result within [-1, 1])."""
    if tuple(x1.shape) != tuple(x2.shape):
        x1, x2 = _shape.broadcast_tensors(x1, x2)
    n1 = _red.vector_norm(x1, 2, dim, True).clone()
    n2 = _red.vector_norm(x2, 2, dim, True).clone()
    with no_grad():  # torch clamps the norms in place, outside the graph
        n1._data[...] = n1._data.clip(min=eps)
        n2._data[...] = n2._data.clip(min=eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


@overridable(defaults_by_keyword=True)
def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p along the last dim."""
    dim = max(x1.dim(), x2.dim()) - 1
    return (x1 - x2 + eps).norm(p, dim if dim >= 0 else None, keepdim)


from ..ops.distance import pdist  # noqa: E402  (the _pdist_forward op, PdistBackward0)


# ---- attention ------------------------------------------------------------------------------------------------------
@overridable(defaults_by_keyword=True)
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    r"""softmax(Q K^T * scale + mask) V, scale = 1/sqrt(E) by default.

    ``attn_mask`` is boolean (True = may attend) or added to the scores; ``is_causal`` masks the
    future. Rows with nothing to attend to give zeros (torch's safe softmax), not NaN.
    """
    if attn_mask is not None and is_causal:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    L, S = query.shape[-2], key.shape[-2]
    scale_factor = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    if enable_gqa and key.dim() >= 3 and key.shape[-3] != query.shape[-3]:
        rep = query.shape[-3] // key.shape[-3]
        key, value = key.repeat_interleave(rep, -3), value.repeat_interleave(rep, -3)
    # torch's math path scales q and k by sqrt(scale) each before the product
    root = math.sqrt(scale_factor)
    scores = _la.matmul(query * root, key.transpose(-2, -1) * root)
    mask = None
    if is_causal:
        mask = _cr.ones(L, S, dtype=_dtype.bool).tril()
    elif attn_mask is not None and attn_mask.dtype is _dtype.bool:
        mask = attn_mask
    elif attn_mask is not None:
        scores = scores + attn_mask
    if mask is not None:
        scores = scores.masked_fill(~mask, -math.inf)
    data = scores._data
    # rows with nothing to attend to (every score -inf) give zeros (torch's safe softmax), not NaN;
    # where the smallest score is finite there are none (one SIMD reduction, 0.09 ms on 128x64x64
    # float32, where the row-wise test is 0.5: only a -inf or a nan somewhere calls for it)
    if type(data) is _xp.ndarray and data.dtype.kind == "f" and data.size and data.min() > -math.inf:
        fully_masked = None
    else:
        fully_masked = (data == -math.inf).all(axis=-1, keepdims=True)
    if fully_masked is not None and fully_masked.any():
        fully_masked = _wrap(fully_masked)
        weights = _red.softmax(scores.masked_fill(fully_masked, 0.0), -1).masked_fill(fully_masked, 0.0)
    else:
        weights = _red.softmax(scores, -1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, True)
    return _la.matmul(weights, value)


# ---- masks ------------------------------------------------------------------------------------
def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A boolean mask (True = masked) becomes a float mask of 0 and -inf; a float mask stays."""
    if mask is None:
        return None
    if mask.dtype != _dtype.bool and not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        _warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both "
                       "instead.")
    if not mask.is_floating_point():
        mask = _cr.zeros_like(mask, dtype=target_type).masked_fill_(mask, float("-inf"))
    return mask


def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Whether the input is batched (3-D) or not (2-D), with torch's checks of the other shapes."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                                 f"found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                                     f"but found {attn_mask.dim()}-D tensor instead")
            if attn_mask.dim() == 3 and attn_mask.shape != (num_heads, query.shape[0], key.shape[0]):
                raise AssertionError(f"Expected `attn_mask` shape to be {(num_heads, query.shape[0], key.shape[0])} "
                                     f"but got {attn_mask.shape}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query "
                         "tensor")


# ---- projections --------------------------------------------------------------------------------
def _in_projection_packed(q, k, v, w, b=None):
    """q, k, v projected by the packed ``(3E, E)`` weight: one product for self-attention, two for
    encoder-decoder attention (k is v), three otherwise."""
    E = q.size(-1)
    if k is v:
        if q is k:  # self-attention
            proj = linear(q, w, b)
            proj = proj.unflatten(-1, (3, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([E, E * 2])
        b_q, b_kv = (None, None) if b is None else b.split([E, E * 2])
        q_proj = linear(q, w_q, b_q)
        kv_proj = linear(k, w_kv, b_kv).unflatten(-1, (2, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
        return q_proj, kv_proj[0], kv_proj[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q=None, b_k=None, b_v=None):
    """q, k, v projected by separate weights (when kdim/vdim differ from embed_dim)."""
    Eq, Ek, Ev = q.size(-1), k.size(-1), v.size(-1)
    for name, w, shape in (("query", w_q, (Eq, Eq)), ("key", w_k, (Eq, Ek)), ("value", w_v, (Eq, Ev))):
        if w.shape != shape:
            raise AssertionError(f"expecting {name} weights shape of {shape}, but got {w.shape}")
    for name, b in (("query", b_q), ("key", b_k), ("value", b_v)):
        if b is not None and b.shape != (Eq,):
            raise AssertionError(f"expecting {name} bias shape of {(Eq,)}, but got {b.shape}")
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


# ---- attention ------------------------------------------------------------------------------------

def _heads_first(x, static, name, batch_heads, head_dim):
    """(S, N, E) -> (N*num_heads, S, head_dim), or the caller's precomputed ``static`` (checked)."""
    if static is None:
        return x.view(x.shape[0], batch_heads, head_dim).transpose(0, 1)
    if static.size(0) != batch_heads:
        raise AssertionError(f"expecting {name}.size(0) of {batch_heads}, but got {static.size(0)}")
    if static.size(2) != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {static.size(2)}")
    return static

@overridable(defaults_by_keyword=True)
def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    r"""torch.nn.functional.multi_head_attention_forward: sequence-first ``(L, N, E)`` inputs
    (``(L, E)`` unbatched). Returns ``(attn_output, attn_weights)``; the weights (averaged over
    heads unless ``average_attn_weights=False``) only when ``need_weights``, which computes the
    attention explicitly; otherwise it goes through ``scaled_dot_product_attention``."""
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:  # compute as a batch of one, squeeze at the end
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)

    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask), "attn_mask",
                                       query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # SDPA applies the causal mask itself
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False  # the merged mask is no longer causal
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                                 f"{value.shape[:2]}")
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")

    # -- in-projection
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight is None")
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, b_q, b_k, b_v)

    # -- the attention mask as (1 or N*num_heads, L, S)
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if attn_mask.shape != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if attn_mask.shape != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    # -- learned extra key/value (add_bias_kv): one more position every query may attend to
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = _join.cat([k, bias_k.repeat(1, bsz, 1)])
        v = _join.cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")

    # -- heads into the batch: (N*num_heads, L or S, head_dim)
    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _heads_first(k, static_k, "static_k", bsz * num_heads, head_dim)
    v = _heads_first(v, static_v, "static_v", bsz * num_heads, head_dim)

    if add_zero_attn:  # one more all-zero key/value position
        zeros = _cr.zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype, device=k.device)
        k = _join.cat([k, zeros], dim=1)
        v = _join.cat([v, zeros], dim=1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    src_len = k.size(1)

    # -- merge the key padding mask into the attention mask
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got {key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        key_padding_mask = key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1) \
            .reshape(bsz * num_heads, 1, src_len)
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask

    if not training:
        dropout_p = 0.0

    if need_weights:  # explicit attention, to return the weights
        _, _, E = q.shape
        q_scaled = q * math.sqrt(1.0 / float(E))
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        if attn_mask is not None:
            attn_output_weights = _la.baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            attn_output_weights = _la.bmm(q_scaled, k.transpose(-2, -1))
        attn_output_weights = softmax(attn_output_weights, dim=-1)
        if dropout_p > 0.0:
            attn_output_weights = dropout(attn_output_weights, p=dropout_p)
        attn_output = _la.bmm(attn_output_weights, v)
        attn_output = attn_output.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        attn_output = linear(attn_output, out_proj_weight, out_proj_bias)
        attn_output = attn_output.view(tgt_len, bsz, attn_output.size(1))
        attn_output_weights = attn_output_weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            attn_output_weights = attn_output_weights.mean(dim=1)
        if not is_batched:
            attn_output, attn_output_weights = attn_output.squeeze(1), attn_output_weights.squeeze(0)
        return attn_output, attn_output_weights

    # attn_mask (1, L, S) -> (1, 1, L, S), or (N*num_heads, L, S) -> (N, num_heads, L, S), as SDPA wants
    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    attn_output = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    attn_output = attn_output.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    attn_output = linear(attn_output, out_proj_weight, out_proj_bias)
    attn_output = attn_output.view(tgt_len, bsz, attn_output.size(1))
    if not is_batched:
        attn_output = attn_output.squeeze(1)
    return attn_output, None


# ---- losses ---------------------------------------------------------------------------------------------------
nll_loss, cross_entropy = _loss.nll_loss, _loss.cross_entropy
mse_loss, l1_loss, smooth_l1_loss, huber_loss = _loss.mse_loss, _loss.l1_loss, _loss.smooth_l1_loss, _loss.huber_loss
binary_cross_entropy, binary_cross_entropy_with_logits = \
    _loss.binary_cross_entropy, _loss.binary_cross_entropy_with_logits
kl_div, cosine_embedding_loss = _loss.kl_div, _loss.cosine_embedding_loss
margin_ranking_loss, hinge_embedding_loss, soft_margin_loss = \
    _loss.margin_ranking_loss, _loss.hinge_embedding_loss, _loss.soft_margin_loss
poisson_nll_loss, gaussian_nll_loss = _loss.poisson_nll_loss, _loss.gaussian_nll_loss
multilabel_soft_margin_loss, triplet_margin_loss = _loss.multilabel_soft_margin_loss, _loss.triplet_margin_loss
