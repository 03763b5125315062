"""Pooling and resampling: max/avg pooling, adaptive pooling, padding, interpolation, pixel shuffle.

Pooling walks the kernel, not the image: for each kernel offset, one strided view of the (padded)
input covers that offset in every window at once, so a 2x2/stride-2 max pool is the maximum of four
strided views and the loop runs over 4 offsets, never over positions.

Most of these ops are *linear maps*: y = A x. Their derivative is the transposed map A^T applied to
the gradient, and the derivative of that is A again. ``linear_map`` records such a pair once, so
avg pooling, adaptive avg pooling, padding, interpolation and pixel shuffle get gradients of every
order from a forward and an adjoint written on arrays. Interpolation and adaptive pooling act on
each spatial axis separately (A = A_h (x) A_w): per axis either a small matrix (bilinear weights,
averaging windows) or an index map (nearest neighbour, replicate/reflect/circular padding).
"""
import itertools
import math

from .. import _checks
from .._tensor import _wrap
from .._array import xp
from ._op import _state, record, make_node_class
from ..autograd.graph import connect
from .nn_conv import _ntuple


# ---- a linear map and its adjoint as a pair of ops ------------------------------------------------------
_NODE_CLASSES = {}


def _linear_backward(self, grad):
    forward, adjoint = self.maps
    return linear_map(grad, adjoint, forward, self.ctx, self.names[1], self.names[0])


def _node_class(name):
    cls = _NODE_CLASSES.get(name)
    if cls is None:
        cls = _NODE_CLASSES[name] = make_node_class(name, _linear_backward)
    return cls


def linear_map(input, forward, adjoint, ctx, name, adjoint_name):
    """y = forward(x) for a linear ``forward`` on arrays, recorded as node ``name``; its backward is
    ``adjoint`` recorded as node ``adjoint_name`` (whose backward is ``forward`` again)."""
    res = _wrap(forward(input._data, ctx))
    if input._requires_grad and _state.enabled:
        node = record(_node_class(name), res, (input,), meta_check=False)
        node.maps, node.ctx, node.names = (forward, adjoint), ctx, (name, adjoint_name)
    return res


# ---- pooling geometry -----------------------------------------------------------------------------------
def _pool_out(size, k, s, p, d, ceil_mode):
    span = size + 2 * p - d * (k - 1) - 1
    out = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + p:  # the last window must start inside the input or left padding
        out -= 1
    return out


def _pool_args(input, kernel_size, stride, padding, dilation, ceil_mode, nd, name, check_dilation=True):
    if input.dim() not in (nd + 1, nd + 2) or input.numel() == 0:
        raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input")
    k = _ntuple(kernel_size, nd)
    s = _ntuple(stride if stride is not None and stride != [] and stride != () else kernel_size, nd)
    p, d = _ntuple(padding, nd), _ntuple(dilation, nd)
    if any(si == 0 for si in s):
        raise RuntimeError("stride should not be zero")
    _checks.check_positive(name, "stride", s)
    _checks.check_positive(name, "kernel size", k)
    _checks.check_positive(name, "dilation", d)
    for pi, ki, di in zip(p, k, d):
        if pi > ((ki - 1) * di + 1) // 2 if check_dilation else pi > ki // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={pi}, "
                               f"kernel_size={ki} and dilation={di}")
    size = input.shape[-nd:]
    out = [_pool_out(sz, ki, si, pi, di, ceil_mode) for sz, ki, si, pi, di in zip(size, k, s, p, d)]
    if any(o < 1 for o in out):
        planes = input.shape[-nd - 1]
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, (planes,) + tuple(size)))}). Calculated output "
                           f"size: ({'x'.join(map(str, (planes,) + tuple(out)))}). Output size is too small")
    return k, s, p, d, out


def _padded(x, k, s, p, d, out, fill):
    """x padded by p in front and by enough at the end for every window (ceil_mode), with ``fill``."""
    nd = len(k)
    size = x.shape[-nd:]
    ends = [max((o - 1) * si + di * (ki - 1) + 1 - sz - pi, pi)
            for o, si, di, ki, sz, pi in zip(out, s, d, k, size, p)]
    if not any(p) and not any(ends):
        return x
    full = x.shape[:-nd] + tuple(sz + pi + e for sz, pi, e in zip(size, p, ends))
    xpad = xp.full(full, fill, x.dtype)
    xpad[(Ellipsis,) + tuple(slice(pi, pi + sz) for pi, sz in zip(p, size))] = x
    return xpad


def _offset_views(xpad, k, s, d, out):
    """(offset, strided view of every window's element at that kernel offset)."""
    for offset in itertools.product(*[range(ki) for ki in k]):
        yield offset, xpad[(Ellipsis,) + tuple(slice(o * di, o * di + si * (n - 1) + 1, si)
                                               for o, di, si, n in zip(offset, d, s, out))]


# ---- max pooling ----------------------------------------------------------------------------------------
class _MaxPoolBackward(make_node_class("MaxPoolWithIndicesBackward", None, ("self", "result1"))):
    """The gradient goes to the input element each window chose (the saved indices)."""

    def backward(self, grad, _indices_grad=None):
        x, idx = self._unpack_saved()
        return max_pool_backward(grad, idx, x.shape, self.spatial, self.overlapping)


def _max_pool_node(name):
    cls = type(name, (_MaxPoolBackward,), {"num_outputs": 2})
    cls.__module__ = "torch.autograd"
    return cls


MaxPool2DWithIndicesBackward0 = _max_pool_node("MaxPool2DWithIndicesBackward0")
MaxPool3DWithIndicesBackward0 = _max_pool_node("MaxPool3DWithIndicesBackward0")
AdaptiveMaxPool2DBackward0 = _max_pool_node("AdaptiveMaxPool2DBackward0")


class MaxPool2DWithIndicesBackwardBackward0(make_node_class("MaxPool2DWithIndicesBackwardBackward0", None,
                                                            ("indices",))):
    """max_pool_backward is linear in the gradient: its own gradient reads the chosen elements back."""

    def backward(self, grad):
        (idx,) = self._unpack_saved()
        lead = idx.dim() - self.spatial
        return grad.flatten(lead).gather(lead, idx.flatten(lead)).view(idx.shape)


def max_pool_backward(grad, indices, input_shape, spatial, overlapping):
    """Scatter ``grad`` to the flat spatial ``indices`` (last ``spatial`` dims) of a zero tensor."""
    lead = len(input_shape) - spatial
    g = grad._data
    planes = math.prod(input_shape[:lead])
    out = xp.zeros((planes, math.prod(input_shape[lead:])), g.dtype)
    flat_idx = indices._data.reshape(planes, -1)
    flat_g = g.reshape(planes, -1)
    if overlapping:  # several windows may pick the same element: accumulate
        xp.add.at(out, (xp.arange(planes)[:, None], flat_idx), flat_g)
    else:
        xp.put_along_axis(out, flat_idx, flat_g, axis=1)
    res = _wrap(out.reshape(input_shape))
    if grad._requires_grad and _state.enabled:
        record(MaxPool2DWithIndicesBackwardBackward0, res, (grad,), (indices,), meta_check=False).spatial = spatial
    return res


def _record_max(node_cls, input, values, indices, spatial, overlapping):
    node = node_cls.__new__(node_cls)
    connect(node, (input,), (values, None), (input, indices))
    node.spatial, node.overlapping = spatial, overlapping


def _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, nd, node_cls, name, want_indices):
    """Values: the running maximum over one strided view per kernel offset. Indices (only when needed:
    for the gradient or return_indices): the flat input position of each window's first maximum."""
    k, s, p, d, out = _pool_args(input, kernel_size, stride, padding, dilation, ceil_mode, nd, name)
    x = input._data
    fill = -xp.inf if x.dtype.kind == "f" else xp.iinfo(x.dtype).min
    views = list(_offset_views(_padded(x, k, s, p, d, out, fill), k, s, d, out))
    best = views[0][1].copy()
    for _, view in views[1:]:
        xp.maximum(best, view, out=best)  # NaN propagates, as in torch
    values = _wrap(best)
    record_grad = input._requires_grad and _state.enabled
    if not (want_indices or record_grad):
        return values, None
    indices = _wrap(_argmax_positions(views, best, x.shape[-nd:], s, p, d, out))
    if record_grad:
        _record_max(node_cls, input, values, indices, nd, any(si < di * (ki - 1) + 1 for si, di, ki in zip(s, d, k)))
    return values, indices


def _argmax_positions(views, best, size, s, p, d, out):
    """The flat input index (h * W + w in 2-d) of the element each window took: window origin
    (o * stride - pad per dim) plus the displacement of the chosen kernel offset (offset * dilation)."""
    nd = len(size)
    origin = 0
    for i in range(nd):
        origin = origin * size[i] + (xp.arange(out[i]) * s[i] - p[i]).reshape((-1,) + (1,) * (nd - 1 - i))
    shifts = xp.zeros(len(views), xp.int64)
    for n, (offset, _) in enumerate(views):
        for i in range(nd):
            shifts[n] = shifts[n] * size[i] + offset[i] * d[i]
    chosen = xp.zeros(best.shape, xp.uint8 if len(views) < 256 else xp.int64)  # which offset, per window
    hit = xp.empty(best.shape, bool)
    for n in range(len(views) - 1, -1, -1):  # the first offset holding the maximum is written last
        xp.equal(views[n][1], best, out=hit)
        xp.putmask(chosen, hit, n)
    if best.dtype.kind == "f":
        nan = xp.isnan(best)
        if nan.any():  # torch keeps the last NaN of a window
            for n, (_, view) in enumerate(views):
                xp.putmask(chosen, nan & xp.isnan(view), n)
    return xp.take(shifts, chosen) + origin


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    values, indices = _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 2,
                                MaxPool2DWithIndicesBackward0, "max_pool2d", return_indices)
    return (values, indices) if return_indices else values


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    values, indices = _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 3,
                                MaxPool3DWithIndicesBackward0, "max_pool3d", return_indices)
    return (values, indices) if return_indices else values


def _one(v):
    return v[0] if isinstance(v, (tuple, list)) else v


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """A 2-d max pool over a height-1 image (what torch records: unsqueeze, max_pool2d, squeeze)."""
    if input.dim() not in (2, 3):
        raise RuntimeError(f"max_pool1d() Expected 2D or 3D input tensor, but got {list(input.shape)}")
    stride = kernel_size if stride is None or stride == [] or stride == () else stride
    values, indices = _max_pool(input.unsqueeze(-2), (1, _one(kernel_size)), (1, _one(stride)), (0, _one(padding)),
                                (1, _one(dilation)), ceil_mode, 2, MaxPool2DWithIndicesBackward0, "max_pool1d",
                                return_indices)
    values = values.squeeze(-2)
    if not return_indices:
        return values
    return values, indices.squeeze(-2).detach()


# ---- average pooling -----------------------------------------------------------------------------------
def _avg_divisor(size, k, s, p, out, count_include_pad):
    """Per-dim window sizes torch divides by (windows are clipped at size + pad; without
    count_include_pad, at the input itself)."""
    start = xp.arange(out) * s - p
    end = xp.minimum(start + k, size + p)
    if count_include_pad:
        return end - start
    return xp.minimum(end, size) - xp.maximum(start, 0)


def _avg_forward(x, ctx):
    k, s, p, out, divisor, size = ctx
    d = (1,) * len(k)
    xpad = _padded(x, k, s, p, d, out, 0)
    acc = None
    for _, view in _offset_views(xpad, k, s, d, out):
        acc = view.copy() if acc is None else xp.add(acc, view, out=acc)
    acc /= _as_dtype(divisor, acc.dtype)
    return acc


def _as_dtype(divisor, dtype):
    """The divisor in the op's precision (an int stays a Python number: no float64 detour)."""
    return divisor if isinstance(divisor, int) else divisor.astype(dtype)


def _avg_adjoint(g, ctx):
    """Each window's share of the gradient, added back onto every element of the window."""
    k, s, p, out, divisor, size = ctx
    nd = len(k)
    d = (1,) * nd
    share = g / _as_dtype(divisor, g.dtype)
    shape = g.shape[:-nd] + tuple(max(sz + 2 * pi, (o - 1) * si + ki)
                                  for sz, pi, o, si, ki in zip(size, p, out, s, k))
    acc = xp.zeros(shape, g.dtype)
    for _, view in _offset_views(acc, k, s, d, out):
        view += share
    if shape[-nd:] == tuple(size):
        return acc
    return xp.ascontiguousarray(acc[(Ellipsis,) + tuple(slice(pi, pi + sz) for pi, sz in zip(p, size))])


def _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, nd, name):
    k, s, p, d, out = _pool_args(input, kernel_size, stride, padding, 1, ceil_mode, nd, name, check_dilation=False)
    size = input.shape[-nd:]
    if divisor_override:
        divisor = divisor_override
    else:
        divisor = 1
        for i in range(nd):
            per_dim = _avg_divisor(size[i], k[i], s[i], p[i], out[i], count_include_pad)
            divisor = divisor * per_dim.reshape((-1,) + (1,) * (nd - 1 - i))
        if not isinstance(divisor, int) and (divisor == divisor.flat[0]).all():
            divisor = int(divisor.flat[0])
    ctx = (k, s, p, out, divisor, tuple(size))
    return linear_map(input, _avg_forward, _avg_adjoint, ctx, f"AvgPool{nd}DBackward0",
                      f"AvgPool{nd}DBackwardBackward0")


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 2,
                     "avg_pool2d")


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 3,
                     "avg_pool3d")


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"avg_pool1d() Expected 2D or 3D input tensor, but got {list(input.shape)}")
    stride = kernel_size if stride is None or stride == [] or stride == () else stride
    y = _avg_pool(input.unsqueeze(-2), (1, _one(kernel_size)), (1, _one(stride)), (0, _one(padding)), ceil_mode,
                  count_include_pad, None, 2, "avg_pool1d")
    return y.squeeze(-2)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    k = _ntuple(kernel_size, 2)
    out = avg_pool2d(input.pow(norm_type), k, stride, 0, ceil_mode)
    from .pointwise import relu
    return (out.sign() * relu(out.abs())).mul(k[0] * k[1]).pow(1.0 / norm_type)


# ---- separable maps: per spatial axis a matrix or an index map ----------------------------------------
def _along(x, axis, op):
    """Apply ``op`` (acting on the last axis) to ``axis`` of x."""
    if axis == x.ndim - 1:
        return op(x)
    return xp.moveaxis(op(xp.moveaxis(x, axis, -1)), -1, axis)


def _take_adjoint(g, idx, size):
    """Adjoint of ``take(x, idx)`` on the last axis: sums of g over equal indices (sorted runs)."""
    order = xp.argsort(idx, kind="stable")
    sidx = idx[order]
    gs = g[..., order] if not (order == xp.arange(len(order))).all() else g
    src, starts = xp.unique(sidx, return_index=True)
    out = xp.zeros(g.shape[:-1] + (size,), g.dtype)
    out[..., src] = xp.add.reduceat(gs, starts, axis=-1)
    return out


def _separable_forward(x, ctx):
    for axis, kind, data, size in ctx:
        ax = x.ndim + axis
        if kind == "take":
            x = xp.take(x, data, axis=ax)
        else:
            m = data.astype(x.dtype, copy=False)
            x = _along(x, ax, lambda a: a @ m.T)
    return xp.ascontiguousarray(x)


def _separable_adjoint(g, ctx):
    for axis, kind, data, size in ctx:
        ax = g.ndim + axis
        if kind == "take":
            g = _along(g, ax, lambda a: _take_adjoint(a, data, size))
        else:
            m = data.astype(g.dtype, copy=False)
            g = _along(g, ax, lambda a: a @ m)
    return xp.ascontiguousarray(g)


def separable(input, ctx, name, adjoint_name):
    return linear_map(input, _separable_forward, _separable_adjoint, tuple(ctx), name, adjoint_name)


# ---- adaptive pooling ----------------------------------------------------------------------------------
def _adaptive_bounds(size, out):
    i = xp.arange(out)
    return (i * size) // out, -((-(i + 1) * size) // out)  # floor(i*S/O), ceil((i+1)*S/O)


def _averaging_matrix(size, out):
    start, end = _adaptive_bounds(size, out)
    cols = xp.arange(size)
    inside = (cols >= start[:, None]) & (cols < end[:, None])
    return inside / (end - start)[:, None]


def _adaptive_sizes(input, output_size, nd, name):
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got {list(input.shape)}")
    out = list(output_size) if isinstance(output_size, (tuple, list)) else [output_size] * nd
    size = input.shape[-nd:]
    out = [size[i] if o is None else int(o) for i, o in enumerate(out)]
    if any(o < 0 for o in out):
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 but received "
                           f"{{{', '.join(map(str, out))}}}")
    return out, size


def adaptive_avg_pool2d(input, output_size):
    out, size = _adaptive_sizes(input, output_size, 2, "adaptive_avg_pool2d")
    if out == [1, 1]:  # a global average: torch records a mean
        return input.mean((-2, -1), keepdim=True)
    ctx = [(-2, "matrix", _averaging_matrix(size[0], out[0]), size[0]),
           (-1, "matrix", _averaging_matrix(size[1], out[1]), size[1])]
    return separable(input, ctx, "AdaptiveAvgPool2DBackward0", "AdaptiveAvgPool2DBackwardBackward0")


def adaptive_avg_pool1d(input, output_size):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"adaptive_avg_pool1d() argument 'input' must be 2D or 3D, but got {list(input.shape)}")
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, _one(output_size))).squeeze(-2)


def _adaptive_max(input, out, size, nd):
    """Max over variable windows: for each offset inside the longest window, gather that element of
    every window (clamped to the window's last element, which cannot change a maximum)."""
    x = input._data
    bounds = [_adaptive_bounds(sz, o) for sz, o in zip(size, out)]
    longest = [int((e - b).max()) for b, e in bounds]
    best = arg = None
    for offset in itertools.product(*[range(m) for m in longest]):
        pos = [xp.minimum(b + o, e - 1) for (b, e), o in zip(bounds, offset)]
        view = x[(Ellipsis,) + tuple(xp.ix_(*pos))]
        flat = 0
        for i in range(nd):
            flat = flat * size[i] + pos[i].reshape((-1,) + (1,) * (nd - 1 - i))
        if best is None:
            best, arg = view.copy(), xp.broadcast_to(flat, view.shape).copy()
            continue
        upd = (view > best) | xp.isnan(view)
        xp.copyto(best, view, where=upd)
        xp.copyto(arg, xp.broadcast_to(flat, view.shape), where=upd)
    return best, arg


def adaptive_max_pool2d(input, output_size, return_indices=False):
    out, size = _adaptive_sizes(input, output_size, 2, "adaptive_max_pool2d")
    best, arg = _adaptive_max(input, out, size, 2)
    values, indices = _wrap(best), _wrap(arg)
    if input._requires_grad and _state.enabled:
        _record_max(AdaptiveMaxPool2DBackward0, input, values, indices, 2, any(sz % o for sz, o in zip(size, out)))
    return (values, indices) if return_indices else values


def adaptive_max_pool1d(input, output_size, return_indices=False):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"adaptive_max_pool1d() argument 'input' must be 2D or 3D, but got {list(input.shape)}")
    values, indices = adaptive_max_pool2d(input.unsqueeze(-2), (1, _one(output_size)), True)
    values = values.squeeze(-2)
    return (values, indices.squeeze(-2).detach()) if return_indices else values


# ---- padding --------------------------------------------------------------------------------------------
class ConstantPadNdBackward0(make_node_class("ConstantPadNdBackward0", None)):
    """The adjoint of padding by p is padding by -p (cropping) with zeros."""

    def backward(self, grad):
        return constant_pad_nd(grad, [-v for v in self.pad], 0)


def constant_pad_nd(input, pad, value=0):
    x = input._data
    nd = len(pad) // 2
    shape = list(x.shape)
    src, dst = [slice(None)] * x.ndim, [slice(None)] * x.ndim
    for i in range(nd):
        axis = x.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        n = shape[axis]
        new = n + lo + hi
        if new < 0:
            raise RuntimeError(f"The input size {n}, plus negative padding {lo} and {hi} resulted in a negative output "
                               f"size, which is invalid. Check dimension {axis} of your input.")
        src[axis] = slice(max(-lo, 0), n - max(-hi, 0))
        dst[axis] = slice(max(lo, 0), new - max(hi, 0))
        shape[axis] = new
    out = xp.full(shape, value, x.dtype) if value else xp.zeros(shape, x.dtype)
    out[tuple(dst)] = x[tuple(src)]
    res = _wrap(out)
    if input._requires_grad and _state.enabled:
        record(ConstantPadNdBackward0, res, (input,), meta_check=False).pad = tuple(pad)
    return res


def _pad_index(n, lo, hi, mode):
    j = xp.arange(-lo, n + hi)
    if mode == "replicate":
        return xp.clip(j, 0, n - 1)
    if mode == "circular":
        return j % n
    j = xp.abs(j)  # reflect about the first and the last element
    return xp.where(j > n - 1, 2 * (n - 1) - j, j)


def pad(input, pad, mode="constant", value=None):
    """torch.nn.functional.pad: ``pad`` lists (before, after) pairs from the last dim backwards."""
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {input.dim()}")
    if mode == "constant":
        return constant_pad_nd(input, list(pad), 0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    nd = len(pad) // 2
    if input.dim() not in (nd + 1, nd + 2) or nd > 3:
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.dim()}D input tensor.\nSupported combinations for "
            "non-constant padding:\n  - 2D or 3D input: padding size = 2 (pads last dimension)\n  - 3D or 4D input: "
            "padding size = 4 (pads last 2 dimensions)\n  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    ctx = []
    for i in range(nd):
        lo, hi = pad[2 * i], pad[2 * i + 1]
        n = input.shape[-1 - i]
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, but "
                               f"got: padding ({lo}, {hi}) at dimension {input.dim() - 1 - i} of input "
                               f"{list(input.shape)}")
        if mode == "circular" and (lo > n or hi > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        ctx.append((-1 - i, "take", _pad_index(n, lo, hi, mode), n))
    if mode == "circular":
        return separable(input, ctx, "torch::autograd::CopySlices", "CopySlicesBackward0")
    kind = "ReflectionPad" if mode == "reflect" else "ReplicationPad"
    return separable(input, ctx, f"{kind}{nd}DBackward0", f"{kind}{nd}DBackwardBackward0")


# ---- interpolation -------------------------------------------------------------------------------------
def _source_scale(in_size, out_size, scale, align_corners, dtype):
    """torch's area_pixel_compute_scale / compute_scales_value, in the op's precision."""
    if align_corners:
        return dtype((in_size - 1) / (out_size - 1)) if out_size > 1 else dtype(0)
    if scale is not None and scale > 0:
        return dtype(1.0 / scale)
    return dtype(in_size / out_size)


def _nearest_index(in_size, out_size, scale, exact):
    if not exact and out_size == in_size:
        return xp.arange(out_size)
    if not exact and out_size == 2 * in_size:
        return xp.arange(out_size) >> 1
    s = _source_scale(in_size, out_size, scale, False, xp.float32)
    dst = xp.arange(out_size, dtype=xp.float32)
    src = xp.floor((dst + xp.float32(0.5)) * s if exact else dst * s).astype(xp.int64)
    return xp.minimum(src, in_size - 1)


def _linear_matrix(in_size, out_size, scale, align_corners, dtype):
    """Rows of linear interpolation weights: out[i] = l0 * in[i0] + l1 * in[i1]."""
    s = _source_scale(in_size, out_size, scale, align_corners, dtype)
    dst = xp.arange(out_size, dtype=dtype)
    src = dst * s if align_corners else xp.maximum((dst + dtype(0.5)) * s - dtype(0.5), dtype(0))
    i0 = xp.floor(src).astype(xp.int64)
    i0 = xp.minimum(i0, in_size - 1)
    i1 = i0 + (i0 < in_size - 1)
    l1 = (src - i0).astype(dtype)
    m = xp.zeros((out_size, in_size), dtype)
    rows = xp.arange(out_size)
    xp.add.at(m, (rows, i0), 1 - l1)
    xp.add.at(m, (rows, i1), l1)
    return m


def _interp_modes_error(input, mode):
    return (f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for the modes: nearest | "
            f"linear | bilinear | bicubic | trilinear | area | nearest-exact (got {mode})")


_MODES = {"nearest": 0, "nearest-exact": 0, "linear": 1, "bilinear": 2, "trilinear": 3, "area": 0, "bicubic": 2}


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None,
                antialias=False):
    nd = input.dim() - 2
    if mode not in _MODES:
        raise NotImplementedError(_interp_modes_error(input, mode))
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                             "bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    if _MODES[mode] and _MODES[mode] != nd:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {_MODES[mode] + 2}D input")
    if nd < 1 or nd > 3:
        raise NotImplementedError(_interp_modes_error(input, mode))
    if mode == "bicubic" or antialias:
        raise NotImplementedError("glasstorch: interpolate supports nearest, nearest-exact, linear, bilinear, "
                                  "trilinear and area (no bicubic, no antialias)")
    in_sizes = input.shape[2:]
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        out_sizes = list(size) if isinstance(size, (tuple, list)) else [size] * nd
        if len(out_sizes) != nd:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input with "
                             f"spatial dimensions of {list(in_sizes)} and output size of {out_sizes}. Please provide "
                             f"input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) "
                             f"format.")
        scales = [None] * nd
    elif scale_factor is not None:
        scales = list(scale_factor) if isinstance(scale_factor, (tuple, list)) else [scale_factor] * nd
        if len(scales) != nd:
            raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got input "
                             f"with spatial dimensions of {list(in_sizes)} and scale_factor of shape {scales}. Please "
                             f"provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, "
                             f"...,sK) format.")
        out_sizes = [int(math.floor(float(n * s))) for n, s in zip(in_sizes, scales)]
        if recompute_scale_factor:
            scales = [None] * nd
    else:
        raise ValueError("either size or scale_factor should be defined")
    out_sizes = [int(o) for o in out_sizes]
    if mode == "area":
        if nd == 2:
            return adaptive_avg_pool2d(input, out_sizes)
        if nd == 1:
            return adaptive_avg_pool1d(input, out_sizes[0])
    dtype = xp.float64 if input._data.dtype == xp.float64 else xp.float32
    ctx = []
    for i in range(nd):
        axis = -nd + i
        if mode in ("nearest", "nearest-exact", "area"):
            ctx.append((axis, "take", _nearest_index(in_sizes[i], out_sizes[i], scales[i], mode == "nearest-exact"),
                        in_sizes[i]))
        else:
            ctx.append((axis, "matrix", _linear_matrix(in_sizes[i], out_sizes[i], scales[i], align_corners, dtype),
                        in_sizes[i]))
    name = {"nearest": f"UpsampleNearest{nd}D", "nearest-exact": f"UpsampleNearestExact{nd}D",
            "area": f"AdaptiveAvgPool{nd}D", "linear": "UpsampleLinear1D", "bilinear": "UpsampleBilinear2D",
            "trilinear": "UpsampleTrilinear3D"}[mode]
    return separable(input, ctx, name + "Backward0", name + "BackwardBackward0")


# ---- pixel shuffle: a permutation of elements, its adjoint is its inverse ---------------------------------
def _shuffle(x, r):
    *lead, c, h, w = x.shape
    y = x.reshape(tuple(lead) + (c // (r * r), r, r, h, w))
    nl = len(lead)
    y = y.transpose(tuple(range(nl)) + (nl, nl + 3, nl + 1, nl + 4, nl + 2))
    return xp.ascontiguousarray(y).reshape(tuple(lead) + (c // (r * r), h * r, w * r))


def _unshuffle(x, r):
    *lead, c, h, w = x.shape
    y = x.reshape(tuple(lead) + (c, h // r, r, w // r, r))
    nl = len(lead)
    y = y.transpose(tuple(range(nl)) + (nl, nl + 2, nl + 4, nl + 1, nl + 3))
    return xp.ascontiguousarray(y).reshape(tuple(lead) + (c * r * r, h // r, w // r))


def pixel_shuffle(input, upscale_factor):
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""
    r = int(upscale_factor)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    c = input.shape[-3]
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    return linear_map(input, _shuffle, _unshuffle, r, "PixelShuffleBackward0", "PixelUnshuffleBackward0")


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H r, W r) -> (*, C r^2, H, W)."""
    r = int(downscale_factor)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    h, w = input.shape[-2:]
    if h % r or w % r:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)={h}"
                           f" is not divisible by {r}" if h % r else
                           f"pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)={w}"
                           f" is not divisible by {r}")
    return linear_map(input, _unshuffle, _shuffle, r, "PixelUnshuffleBackward0", "PixelShuffleBackward0")

