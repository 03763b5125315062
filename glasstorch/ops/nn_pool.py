"""Pooling and resampling as torch's aten ops: max/avg pooling, adaptive pooling, padding,
interpolation (upsampling), pixel shuffle -- each with its ``*_backward`` op, whose own derivative
gives the double backward.

Pooling walks the kernel, not the image: for each kernel offset, one strided view of the (padded)
input covers that offset in every window at once, so a 2x2/stride-2 max pool is the maximum of four
strided views and its loops run over 4 offsets, never over positions. The backward ops walk the
same views: avg pooling adds each window's share back through them; max pooling puts each window's
gradient at its chosen element (one vectorised ``put`` when windows are disjoint, one masked add per
offset when they overlap) -- no scatter loop either way.

Most of these ops are *linear maps*: y = A x. Their backward op applies the transposed map A^T to
the gradient, and the derivative of that is A again -- so ``upsample_bilinear2d_backward``'s
derivative is ``upsample_bilinear2d``, as in torch's derivatives.yaml. Interpolation, adaptive
average pooling and reflection/replication padding act on each spatial axis separately
(A = A_h (x) A_w): per axis either a small matrix (bilinear weights, averaging windows) or an index
map (nearest neighbour, reflected or replicated borders).
"""
import itertools
import math

from .._tensor import Tensor
from .._array import (xp, has_values, ascontiguousarray, copy_preserving_layout, arange_like as _arange_like,
                      on_device_of as _on_device_of, empty_like as _empty_like, zeros_like as _zeros_like)
from .._ops import defop, aten, node_classes_of
from .._seam import overridable
from .. import _checks
from .nn_conv import _ntuple
from ._op import check_floating, kernel_not_implemented
from .pointwise import kept

__getattr__ = node_classes_of(__name__)    # (the node classes declared here, by name: TanhBackward0)


def _zeros_like_self(self):
    """derivatives.yaml's ``self: zeros_like(self)`` (a backward op does not depend on its input's values)."""
    return aten.zeros_like(self)


# ---- pooling geometry -----------------------------------------------------------------------------------
def _pool_out(size, k, s, p, d, ceil_mode):
    span = size + 2 * p - d * (k - 1) - 1
    out = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + p:  # the last window must start inside the input or left padding
        out -= 1
    return out


def _pool_geometry(x, kernel_size, stride, padding, dilation, ceil_mode, nd, check_dilation=True, name="max_pool"):
    """(kernel, stride, padding, dilation, output grid) of a pooling, with torch's checks."""
    if x.ndim not in (nd + 1, nd + 2) or x.size == 0:
        raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input")
    k = _ntuple(kernel_size, nd)
    if stride is None or (isinstance(stride, (list, tuple)) and not len(stride)):
        stride = kernel_size                    # torch's stride=[]: the kernel size
    s = _ntuple(stride, nd)
    p, d = _ntuple(padding, nd), _ntuple(dilation, nd)
    if any(si == 0 for si in s):
        raise RuntimeError("stride should not be zero")
    name = f"{name}{nd}d"
    _checks.check_positive(name, "stride", s)
    _checks.check_positive(name, "kernel size", k)
    _checks.check_positive(name, "dilation", d)
    for pi, ki, di in zip(p, k, d):
        if pi > ((ki - 1) * di + 1) // 2 if check_dilation else pi > ki // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={pi}, "
                               f"kernel_size={ki} and dilation={di}")
    size = x.shape[-nd:]
    out = [_pool_out(sz, ki, si, pi, di, ceil_mode) for sz, ki, si, pi, di in zip(size, k, s, p, d)]
    if any(o < 1 for o in out):
        planes = x.shape[-nd - 1]
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
    xpad = xp.full_like(x, fill, order="C", shape=full)   # (on x's device)
    xpad[(Ellipsis,) + tuple(slice(pi, pi + sz) for pi, sz in zip(p, size))] = x
    return xpad


def _offset_views(xpad, k, s, d, out):
    """(offset, strided view of every window's element at that kernel offset)."""
    for offset in itertools.product(*[range(ki) for ki in k]):
        yield offset, xpad[(Ellipsis,) + tuple(slice(o * di, o * di + si * (n - 1) + 1, si)
                                               for o, di, si, n in zip(offset, d, s, out))]


def _flat(position, size):
    """The flat index (h * W + w in 2-d) of a position (numbers or broadcastable arrays) in ``size``."""
    flat = 0
    for p, sz in zip(position, size):
        flat = flat * sz + p
    return flat


def _window_origins(size, s, p, out):
    """Flat input index of each window's first element (o * stride - pad per dim; may lie in the
    padding), shaped to broadcast against the output grid."""
    nd = len(size)
    return _flat([(xp.arange(out[i]) * s[i] - p[i]).reshape((-1,) + (1,) * (nd - 1 - i)) for i in range(nd)], size)


# ---- max pooling ----------------------------------------------------------------------------------------
def _max_pool_kernel(self, kernel_size, stride, padding, dilation, ceil_mode, nd):
    """Values: the running maximum over one strided view per kernel offset; indices: the flat input
    position of each window's first maximum (the last NaN, if any, as torch's kernel keeps)."""
    k, s, p, d, out = _pool_geometry(self, kernel_size, stride, padding, dilation, ceil_mode, nd)
    if self.dtype == bool:
        raise kernel_not_implemented(f"max_pool{nd}d", self.dtype)
    size = self.shape[-nd:]
    fill = -xp.inf if self.dtype.kind == "f" else xp.iinfo(self.dtype).min
    views = list(_offset_views(_padded(self, k, s, p, d, out, fill), k, s, d, out))
    # each kernel offset's flat displacement from its window's origin
    shifts = xp.array([_flat([o * di for o, di in zip(offset, d)], size) for offset, _ in views], xp.int64)
    best = views[0][1].copy()
    small = xp.uint8 if len(views) < 256 else xp.int32
    chosen = _zeros_like(best, best.shape, small)        # which offset holds each window's maximum
    update = _empty_like(best, best.shape, bool)
    for n, (_, view) in enumerate(views[1:], 1):
        xp.greater(view, best, out=update)      # strictly greater: the first maximum stays
        xp.maximum(best, view, out=best)        # NaN propagates, as in torch
        chosen += update * (small(n) - chosen)  # chosen = n where updated (branch-free; wraps back in uint8)
    if best.dtype.kind == "f" and has_values(best) and xp.isnan(best).any():
        for n, (_, view) in enumerate(views):   # torch keeps the last NaN of a window
            xp.putmask(chosen, xp.isnan(view), n)
    return best, xp.take(_on_device_of(best, shifts), chosen) + _on_device_of(best, _window_origins(size, s, p, out))


def _overlapping(k, s, d):
    return any(si < di * (ki - 1) + 1 for si, di, ki in zip(s, d, k))


def _put_at_indices(grad, indices, input_shape, nd, overlapping):
    """A zero image of ``input_shape`` with ``grad`` added at the flat spatial ``indices``."""
    lead = math.prod(input_shape[:-nd])
    out = _zeros_like(grad, (lead, math.prod(input_shape[-nd:])))
    flat_idx, flat_g = indices.reshape(lead, -1), grad.reshape(lead, -1)
    if overlapping:   # several windows may pick one element: accumulate
        xp.add.at(out, (_arange_like(out, lead)[:, None], flat_idx), flat_g)
        return out.reshape(input_shape)
    # every element is picked once at most: one assignment through indices into the whole flat image
    # (each plane's indices moved to its place), which NumPy does in one pass -- put_along_axis builds
    # a broadcast index per element and took 1.3-1.9x as long on LeNet's pools. (torch's kernel adds
    # each gradient into zeros: a -0 gradient arrives as +0.)
    planes = _arange_like(indices, lead, dtype=indices.dtype).reshape(lead, 1) * out.shape[1]
    out.reshape(-1)[(flat_idx + planes).reshape(-1)] = flat_g.reshape(-1) + 0
    return out.reshape(input_shape)


def _max_pool_backward_kernel(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices, nd):
    k, s, p, d, out = _pool_geometry(self, kernel_size, stride, padding, dilation, ceil_mode, nd)
    if not _overlapping(k, s, d):    # each element is in one window at most: one vectorised put
        return _put_at_indices(grad_output, indices, self.shape, nd, False)
    # overlapping windows: per kernel offset, add the gradient of the windows that chose that offset
    size = self.shape[-nd:]
    relative = indices - _on_device_of(indices, _window_origins(size, s, p, out))
    gpad = _padded(_zeros_like(grad_output, self.shape), k, s, p, d, out, 0)
    for offset, view in _offset_views(gpad, k, s, d, out):   # (kept: an inf gradient puts no nan elsewhere)
        view += kept(grad_output, relative == _flat([o * di for o, di in zip(offset, d)], size))
    if gpad.shape != self.shape:
        gpad = ascontiguousarray(gpad[(Ellipsis,) + tuple(slice(pi, pi + sz) for pi, sz in zip(p, size))])
    return gpad


def _max_pool_double_backward(grad, indices, nd):
    """torch's max_pool_double_backward: the incoming gradient read at each window's chosen element
    (a gather; the public ``gather`` on Tensors, as indexing ops are not yet aten ops)."""
    lead = tuple(indices.shape[:-nd])
    flat_g, flat_i = grad.reshape(lead + (-1,)), indices.reshape(lead + (-1,))
    picked = flat_g.gather(-1, flat_i) if isinstance(grad, Tensor) else xp.take_along_axis(flat_g, flat_i, axis=-1)
    return picked.reshape(tuple(indices.shape))


def _declare_max_pool(nd):
    ints = f"int[{nd}]"
    forward = defop(
        f"max_pool{nd}d_with_indices(Tensor self, {ints} kernel_size, {ints} stride=[], {ints} padding=0, "
        f"{ints} dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
        lambda self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False:
        _max_pool_kernel(self, kernel_size, stride, padding, dilation, ceil_mode, nd),
        node=f"MaxPool{nd}DWithIndicesBackward0",
        self=lambda grad, self, kernel_size, stride, padding, dilation, ceil_mode, result1:
        getattr(aten, f"max_pool{nd}d_with_indices_backward")(grad, self, kernel_size, stride, padding, dilation,
                                                              ceil_mode, result1))
    backward = defop(
        f"max_pool{nd}d_with_indices_backward(Tensor grad_output, Tensor self, {ints} kernel_size, {ints} stride, "
        f"{ints} padding, {ints} dilation, bool ceil_mode, Tensor indices) -> Tensor",
        lambda grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices:
        _max_pool_backward_kernel(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices, nd),
        node=f"MaxPool{nd}DWithIndicesBackwardBackward0", indices=None,
        grad_output=lambda grad, indices: _max_pool_double_backward(grad, indices, nd),
        self=_zeros_like_self)
    return forward, backward


max_pool2d_op, max_pool2d_backward_op = _declare_max_pool(2)
max_pool3d_op, max_pool3d_backward_op = _declare_max_pool(3)


def _stride_arg(stride, nd):
    """torch passes an omitted stride as [] (the kernel then uses the kernel size)."""
    return [] if stride is None or (isinstance(stride, (list, tuple)) and not len(stride)) else list(_ntuple(stride, nd))


def _max_pool(op, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, nd):
    values, indices = op(input, list(_ntuple(kernel_size, nd)), _stride_arg(stride, nd), list(_ntuple(padding, nd)),
                         list(_ntuple(dilation, nd)), bool(ceil_mode))
    return (values, indices) if return_indices else values


@overridable
def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _max_pool(max_pool2d_op, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 2)


@overridable
def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _max_pool(max_pool3d_op, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 3)


def _one(v):
    return v[0] if isinstance(v, (tuple, list)) else v


def _check_max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode):
    """torch's ``check_max_pool1d``: F.max_pool1d without indices checks its arguments itself, in its own
    words, before it takes the 2-d path (with indices, the 2-d pool's checks speak)."""
    k, p, d = _one(kernel_size), _one(padding), _one(dilation)
    s = k if stride is None or stride == [] or stride == () else _one(stride)
    if k <= 0:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {k}")
    if s <= 0:
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {s}")
    if p < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
    if p > k // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got padding={p} and "
                           f"kernel_size={k}")
    if d <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    out = _pool_out(input.shape[-1], k, s, p, d, ceil_mode)
    if out <= 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")


@overridable
def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """A 2-d max pool over a height-1 image (what torch records: unsqueeze, max_pool2d, squeeze)."""
    if input.dim() not in (2, 3):
        raise RuntimeError(f"max_pool1d() Expected 2D or 3D input tensor, but got {list(input.shape)}")
    if not return_indices:
        _check_max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode)
    if not return_indices and input._data.dtype.kind not in "fc" and not input.requires_grad:
        # torch's own 1-d kernel, which it uses when neither indices nor a gradient are needed
        raise kernel_not_implemented("max_pool1d_impl", input._data.dtype)
    stride = kernel_size if stride is None or stride == [] or stride == () else stride
    values, indices = max_pool2d_op(input.unsqueeze(-2), [1, _one(kernel_size)], [1, _one(stride)],
                                    [0, _one(padding)], [1, _one(dilation)], bool(ceil_mode))
    values = values.squeeze(-2)
    return (values, indices.squeeze(-2)) if return_indices else values


# ---- average pooling -----------------------------------------------------------------------------------
def _avg_divisor(size, k, s, p, out, count_include_pad):
    """Per-dim window sizes torch divides by (windows are clipped at size + pad; without
    count_include_pad, at the input itself)."""
    start = xp.arange(out) * s - p
    end = xp.minimum(start + k, size + p)
    if count_include_pad:
        return end - start
    return xp.minimum(end, size) - xp.maximum(start, 0)


def _avg_geometry(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, nd):
    """(kernel, stride, padding, output grid, divisor): the divisor a number, or an array over the grid."""
    k, s, p, _, out = _pool_geometry(x, kernel_size, stride, padding, 1, ceil_mode, nd, check_dilation=False,
                                     name="avg_pool")
    if divisor_override is not None:
        if divisor_override == 0:
            raise RuntimeError("divisor must be not zero")
        return k, s, p, out, divisor_override
    size = x.shape[-nd:]
    divisor = 1
    for i in range(nd):
        per_dim = _avg_divisor(size[i], k[i], s[i], p[i], out[i], count_include_pad)
        divisor = divisor * per_dim.reshape((-1,) + (1,) * (nd - 1 - i))
    if (divisor == divisor.flat[0]).all():
        divisor = int(divisor.flat[0])
    return k, s, p, out, divisor


def _divide(acc, divisor):
    """acc / divisor in acc's precision (integers: truncated, as torch's integer kernels). A divisor
    that varies over the grid is worked out on the host (:func:`_avg_geometry`): it goes to acc's device."""
    if not isinstance(divisor, int):
        divisor = _on_device_of(acc, divisor)
    if acc.dtype.kind in "iu":
        return xp.trunc(acc / divisor).astype(acc.dtype)
    acc /= divisor if isinstance(divisor, int) else divisor.astype(acc.dtype)
    return acc


def _avg_pool_kernel(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, nd):
    k, s, p, out, divisor = _avg_geometry(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                          divisor_override, nd)
    ones = (1,) * nd
    acc = None
    for _, view in _offset_views(_padded(self, k, s, p, ones, out, 0), k, s, ones, out):
        acc = view.copy() if acc is None else xp.add(acc, view, out=acc)
    return _divide(acc, divisor)


def _avg_pool_backward_kernel(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                              divisor_override, nd):
    """Each window's share of the gradient, added back onto every element of the window."""
    k, s, p, out, divisor = _avg_geometry(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                          divisor_override, nd)
    size = self.shape[-nd:]
    share = _divide(grad_output.copy(), divisor)
    shape = grad_output.shape[:-nd] + tuple(max(sz + 2 * pi, (o - 1) * si + ki)
                                            for sz, pi, o, si, ki in zip(size, p, out, s, k))
    acc = _zeros_like(grad_output, shape)
    for _, view in _offset_views(acc, k, s, (1,) * nd, out):
        view += share
    if shape[-nd:] == tuple(size):
        return acc
    return ascontiguousarray(acc[(Ellipsis,) + tuple(slice(pi, pi + sz) for pi, sz in zip(p, size))])


def _declare_avg_pool(nd):
    ints = f"int[{nd}]"
    forward = defop(
        f"avg_pool{nd}d(Tensor self, {ints} kernel_size, {ints} stride=[], {ints} padding=0, bool ceil_mode=False, "
        f"bool count_include_pad=True, int? divisor_override=None) -> Tensor",
        lambda self, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None:
        _avg_pool_kernel(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, nd),
        node=f"AvgPool{nd}DBackward0",
        self=lambda grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override:
        getattr(aten, f"avg_pool{nd}d_backward")(grad, self, kernel_size, stride, padding, ceil_mode,
                                                 count_include_pad, divisor_override))
    backward = defop(
        f"avg_pool{nd}d_backward(Tensor grad_output, Tensor self, {ints} kernel_size, {ints} stride, {ints} padding, "
        f"bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor",
        lambda grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override:
        _avg_pool_backward_kernel(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                  divisor_override, nd),
        node=f"AvgPool{nd}DBackwardBackward0",
        grad_output=lambda grad, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override:
        getattr(aten, f"avg_pool{nd}d")(grad, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                        divisor_override),
        self=_zeros_like_self)
    return forward, backward


avg_pool2d_op, avg_pool2d_backward_op = _declare_avg_pool(2)
avg_pool3d_op, avg_pool3d_backward_op = _declare_avg_pool(3)


def _avg_pool(op, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, nd):
    return op(input, list(_ntuple(kernel_size, nd)), _stride_arg(stride, nd), list(_ntuple(padding, nd)),
              bool(ceil_mode), bool(count_include_pad), divisor_override)


@overridable
def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _avg_pool(avg_pool2d_op, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, 2)


@overridable
def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _avg_pool(avg_pool3d_op, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, 3)


@overridable
def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """A 2-d average pool over a height-1 image (torch records unsqueeze, avg_pool2d, squeeze)."""
    if input.dim() not in (2, 3):
        raise RuntimeError(f"avg_pool1d() Expected 2D or 3D input tensor, but got {list(input.shape)}")
    stride = kernel_size if stride is None or stride == [] or stride == () else stride
    y = avg_pool2d_op(input.unsqueeze(-2), [1, _one(kernel_size)], [1, _one(stride)], [0, _one(padding)],
                      bool(ceil_mode), bool(count_include_pad), None)
    return y.squeeze(-2)


@overridable
def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over each window of x^p)^(1/p), composed as torch composes it."""
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
    gs = g[..., order] if not (order == _arange_like(order, len(order))).all() else g
    src, starts = xp.unique(sidx, return_index=True)
    out = _zeros_like(g, g.shape[:-1] + (size,))
    out[..., src] = xp.add.reduceat(gs, starts, axis=-1)
    return out


def _separable_forward(x, maps):
    """``maps``: per spatial axis (from the first), ("take", indices, input size) or ("matrix", M, size)."""
    nd = len(maps)
    for i, (kind, data, _) in enumerate(maps):
        ax = x.ndim - nd + i
        data = _on_device_of(x, data)
        if kind == "take":
            x = xp.take(x, data, axis=ax)
        else:
            m = data.astype(x.dtype, copy=False)
            x = _along(x, ax, lambda a: a @ m.T)
    return ascontiguousarray(x)


def _separable_adjoint(g, maps):
    nd = len(maps)
    for i, (kind, data, size) in enumerate(maps):
        ax = g.ndim - nd + i
        data = _on_device_of(g, data)
        if kind == "take":
            g = _along(g, ax, lambda a: _take_adjoint(a, data, size))
        else:
            m = data.astype(g.dtype, copy=False)
            g = _along(g, ax, lambda a: a @ m)
    return ascontiguousarray(g)


# ---- adaptive pooling ----------------------------------------------------------------------------------
def _adaptive_bounds(size, out):
    i = xp.arange(out)
    return (i * size) // out, -((-(i + 1) * size) // out)  # floor(i*S/O), ceil((i+1)*S/O)


def _averaging_matrix(size, out):
    start, end = _adaptive_bounds(size, out)
    cols = xp.arange(size)
    inside = (cols >= start[:, None]) & (cols < end[:, None])
    return inside / (end - start)[:, None]


def _adaptive_checks(x, output_size, nd, name):
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got {list(x.shape)}")
    if any(s == 0 for s in x.shape[-nd:]):
        raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch dimensions, but input has "
                           f"sizes {list(x.shape)} with dimension {x.ndim - nd + list(x.shape[-nd:]).index(0)} being "
                           f"empty")
    if len(output_size) != nd:
        raise RuntimeError(f"{name}: output_size must be {nd}")
    if any(o < 0 for o in output_size):
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 but received "
                           f"{{{', '.join(map(str, output_size))}}}")


def _averaging_maps(size, output_size):
    return [("matrix", _averaging_matrix(s, o), s) for s, o in zip(size, output_size)]


def _adaptive_avg_kernel(self, output_size, nd):
    _adaptive_checks(self, output_size, nd, f"adaptive_avg_pool{nd}d")
    check_floating(self, f"adaptive_avg_pool{nd}d")
    return _separable_forward(self, _averaging_maps(self.shape[-nd:], output_size))


def _declare_adaptive_avg(nd):
    forward = defop(f"_adaptive_avg_pool{nd}d(Tensor self, SymInt[{nd}] output_size) -> Tensor",
                    lambda self, output_size: _adaptive_avg_kernel(self, output_size, nd),
                    node=f"AdaptiveAvgPool{nd}DBackward0",
                    self=lambda grad, self: getattr(aten, f"_adaptive_avg_pool{nd}d_backward")(grad, self))
    backward = defop(f"_adaptive_avg_pool{nd}d_backward(Tensor grad_output, Tensor self) -> Tensor",
                     lambda grad_output, self:
                     _separable_adjoint(grad_output, _averaging_maps(self.shape[-nd:], grad_output.shape[-nd:])),
                     node=f"AdaptiveAvgPool{nd}DBackwardBackward0",
                     grad_output=lambda grad, grad_output_sizes:
                     getattr(aten, f"_adaptive_avg_pool{nd}d")(grad, list(grad_output_sizes[-nd:])),
                     self=_zeros_like_self)
    return forward, backward


adaptive_avg_pool2d_op, adaptive_avg_pool2d_backward_op = _declare_adaptive_avg(2)
adaptive_avg_pool3d_op, adaptive_avg_pool3d_backward_op = _declare_adaptive_avg(3)


def _adaptive_output_size(input, output_size, nd, name):
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got {list(input.shape)}")
    out = list(output_size) if isinstance(output_size, (tuple, list)) else [output_size] * nd
    size = input.shape[-nd:]
    return [size[i] if o is None else int(o) for i, o in enumerate(out)]


@overridable
def adaptive_avg_pool2d(input, output_size):
    out = _adaptive_output_size(input, output_size, 2, "adaptive_avg_pool2d")
    if out == [1, 1]:  # a global average: torch records a mean
        return input.mean((-1, -2), keepdim=True)
    return adaptive_avg_pool2d_op(input, out)


@overridable
def adaptive_avg_pool1d(input, output_size):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"adaptive_avg_pool1d() argument 'input' must be 2D or 3D, but got {list(input.shape)}")
    return adaptive_avg_pool2d_op(input.unsqueeze(-2), [1, int(_one(output_size))]).squeeze(-2)


def _adaptive_max_kernel(self, output_size, nd=2):
    """Max over variable windows: for each offset inside the longest window, gather that element of
    every window (clamped to the window's last element, which cannot change a maximum)."""
    _adaptive_checks(self, output_size, nd, f"adaptive_max_pool{nd}d")
    size = self.shape[-nd:]
    bounds = [_adaptive_bounds(sz, o) for sz, o in zip(size, output_size)]
    longest = [int((e - b).max()) for b, e in bounds]
    best = arg = None
    for offset in itertools.product(*[range(m) for m in longest]):
        pos = [xp.minimum(b + o, e - 1) for (b, e), o in zip(bounds, offset)]
        view = self[(Ellipsis,) + tuple(xp.ix_(*pos))]
        flat = _on_device_of(self, _flat([pos[i].reshape((-1,) + (1,) * (nd - 1 - i)) for i in range(nd)], size))
        if best is None:
            best, arg = view.copy(), xp.broadcast_to(flat, view.shape).copy()
            continue
        upd = (view > best) | xp.isnan(view) if view.dtype.kind == "f" else view > best
        xp.copyto(best, view, where=upd)
        xp.copyto(arg, xp.broadcast_to(flat, view.shape), where=upd)
    return best, arg


def _adaptive_max_backward_kernel(grad_output, self, indices):
    size, out = self.shape[-2:], grad_output.shape[-2:]
    overlapping = any(sz % o for sz, o in zip(size, out))
    return _put_at_indices(grad_output, indices, self.shape, 2, overlapping)


adaptive_max_pool2d_op = defop("adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)",
                               _adaptive_max_kernel, node="AdaptiveMaxPool2DBackward0",
                               self=lambda grad, self, result1: aten.adaptive_max_pool2d_backward(grad, self, result1))
adaptive_max_pool2d_backward_op = defop(
    "adaptive_max_pool2d_backward(Tensor grad_output, Tensor self, Tensor indices) -> Tensor",
    _adaptive_max_backward_kernel, node="AdaptiveMaxPool2DBackwardBackward0", indices=None,
    grad_output=lambda grad, indices: _max_pool_double_backward(grad, indices, 2),
    self=_zeros_like_self)


@overridable
def adaptive_max_pool2d(input, output_size, return_indices=False):
    values, indices = adaptive_max_pool2d_op(input, _adaptive_output_size(input, output_size, 2,
                                                                          "adaptive_max_pool2d"))
    return (values, indices) if return_indices else values


@overridable
def adaptive_max_pool1d(input, output_size, return_indices=False):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"adaptive_max_pool1d() argument 'input' must be 2D or 3D, but got {list(input.shape)}")
    values, indices = adaptive_max_pool2d_op(input.unsqueeze(-2), [1, int(_one(output_size))])
    values = values.squeeze(-2)
    return (values, indices.squeeze(-2)) if return_indices else values


# ---- padding --------------------------------------------------------------------------------------------
def _constant_pad_kernel(self, pad, value=0):
    nd = len(pad) // 2
    if len(pad) % 2:
        raise RuntimeError("Length of pad must be even but instead it equals " + str(len(pad)))
    if nd > self.ndim:
        raise RuntimeError(f"Length of pad should be no more than twice the number of dimensions of the input. "
                           f"Pad length is {len(pad)} while the input has {self.ndim} dimensions.")
    shape = list(self.shape)
    src, dst = [slice(None)] * self.ndim, [slice(None)] * self.ndim
    for i in range(nd):
        axis = self.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        n = shape[axis]
        new = n + lo + hi
        if new < 0:
            raise RuntimeError(f"The input size {n}, plus negative padding {lo} and {hi} resulted in a negative output "
                               f"size, which is invalid. Check dimension {axis} of your input.")
        src[axis] = slice(max(-lo, 0), n - max(-hi, 0))
        dst[axis] = slice(max(lo, 0), new - max(hi, 0))
        shape[axis] = new
    if all(p <= 0 for p in pad):   # only cropping: torch clones the narrowed input, keeping its layout
        return copy_preserving_layout(self[tuple(src)])
    # (made like ``self``, so a meta input gives a meta result; row-major, as torch's)
    out = xp.full_like(self, value, order="C", shape=shape) if value else xp.zeros_like(self, order="C", shape=shape)
    out[tuple(dst)] = self[tuple(src)]
    return out


constant_pad_nd_op = defop("constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor",
                           _constant_pad_kernel, node="ConstantPadNdBackward0",
                           # torch's constant_pad_nd_backward: the adjoint of padding by p is padding by -p
                           self=lambda grad, pad: aten.constant_pad_nd(grad, [-v for v in pad], 0))


@overridable
def constant_pad_nd(input, pad, value=0):
    return constant_pad_nd_op(input, list(pad), value)


def _pad_index(n, lo, hi, mode):
    j = xp.arange(-lo, n + hi)
    if mode == "replicate":
        return xp.clip(j, 0, n - 1)
    j = xp.abs(j)  # reflect about the first and the last element
    return xp.where(j > n - 1, 2 * (n - 1) - j, j)


def _border_maps(x, padding, mode, nd):
    """Per spatial axis (from the first) the index map of reflect/replicate padding. ``padding`` lists
    (before, after) pairs from the last dim backwards, as F.pad's ``pad``."""
    if x.ndim not in (nd + 1, nd + 2) or x.size == 0:
        raise RuntimeError(f"Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with possibly 0 batch size and other "
                           f"non-zero dimensions for input, but got: {list(x.shape)}")
    maps = []
    for i in range(nd):
        axis = x.ndim - 1 - i
        lo, hi = padding[2 * i], padding[2 * i + 1]
        n = x.shape[axis]
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, but "
                               f"got: padding ({lo}, {hi}) at dimension {axis} of input {list(x.shape)}")
        maps.insert(0, ("take", _pad_index(n, lo, hi, mode), n))
    return maps


def _declare_border_pad(kind, mode, nd):
    name = f"{kind}_pad{nd}d"
    node = f"{'Reflection' if kind == 'reflection' else 'Replication'}Pad{nd}D"
    forward = defop(f"{name}(Tensor self, SymInt[{2 * nd}] padding) -> Tensor",
                    lambda self, padding: _separable_forward(self, _border_maps(self, padding, mode, nd)),
                    node=node + "Backward0",
                    self=lambda grad, self, padding: getattr(aten, name + "_backward")(grad, self, padding))
    backward = defop(f"{name}_backward(Tensor grad_output, Tensor self, SymInt[{2 * nd}] padding) -> Tensor",
                     lambda grad_output, self, padding:
                     _separable_adjoint(grad_output, _border_maps(self, padding, mode, nd)),
                     node=node + "BackwardBackward0",
                     grad_output=lambda grad, padding: getattr(aten, name)(grad, padding),
                     self=_zeros_like_self)
    return forward, backward


_BORDER_PADS = {(mode, nd): _declare_border_pad(kind, mode, nd)[0]
                for kind, mode in (("reflection", "reflect"), ("replication", "replicate")) for nd in (1, 2, 3)}


def _pad_circular(input, pad):
    """Circular padding composed as torch composes it (an empty tensor, the input copied into its
    middle, then each border copied from the opposite end): the history is torch's CopySlices chain.
    (Written with slice assignment: ``Tensor.copy_`` on a view of a tensor that does not require grad
    does not yet move the history onto its base.)"""
    nd = len(pad) // 2
    shape = list(input.shape)
    for i in range(nd):
        n = shape[-1 - i]
        if pad[2 * i] > n or pad[2 * i + 1] > n:
            raise RuntimeError("Padding value causes wrapping around more than once.")
    out_shape = shape[:-nd] + [shape[-1 - i] + pad[2 * i] + pad[2 * i + 1] for i in reversed(range(nd))]
    out = input.new_empty(out_shape)

    def region(t, dim, start, stop):
        return t[(slice(None),) * dim + (slice(start, stop),)]

    inner, source = [slice(None)] * input.dim(), [slice(None)] * input.dim()
    for i in range(nd):
        dim = input.dim() - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        inner[dim] = slice(max(lo, 0), out_shape[dim] - max(hi, 0))
        source[dim] = slice(max(-lo, 0), shape[dim] - max(-hi, 0))
    middle = input
    for i in range(nd):   # (torch narrows each padded dim: one SliceBackward0 each, even for a whole dim)
        dim = input.dim() - 1 - i
        middle = middle.narrow(dim, source[dim].start, source[dim].stop - source[dim].start)
    out[tuple(inner)] = middle
    for i in range(nd):   # wrap around: the left border from the right end, then the right from the left
        dim = input.dim() - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if lo > 0:
            out[(slice(None),) * dim + (slice(0, lo),)] = region(out, dim, out_shape[dim] - lo - max(hi, 0),
                                                                 out_shape[dim] - max(hi, 0))
        if hi > 0:
            out[(slice(None),) * dim + (slice(out_shape[dim] - hi, out_shape[dim]),)] = \
                region(out, dim, max(lo, 0), max(lo, 0) + hi)
    return out


@overridable
def pad(input, pad, mode="constant", value=None):
    """torch.nn.functional.pad: ``pad`` lists (before, after) pairs from the last dim backwards."""
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {input.dim()}")
    if mode == "constant":
        return constant_pad_nd_op(input, list(pad), 0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    nd = len(pad) // 2
    if input.dim() not in (nd + 1, nd + 2) or nd > 3:
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.dim()}D input tensor.\nSupported combinations for "
            "non-constant padding:\n  - 2D or 3D input: padding size = 2 (pads last dimension)\n  - 3D or 4D input: "
            "padding size = 4 (pads last 2 dimensions)\n  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if mode == "circular":
        return _pad_circular(input, [int(p) for p in pad])
    return _BORDER_PADS[mode, nd](input, [int(p) for p in pad])


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
    if not exact and out_size == 2 * in_size and scale in (None, 2.0):
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


def _upsample_maps(mode, in_sizes, output_size, align_corners, scales, dtype):
    """Per spatial axis the map of one interpolation mode (nearest, nearest-exact, linear)."""
    if mode == "linear":
        dtype = xp.float64 if dtype == xp.float64 else xp.float32
        return [("matrix", _linear_matrix(i, o, s, align_corners, dtype), i)
                for i, o, s in zip(in_sizes, output_size, scales)]
    return [("take", _nearest_index(i, o, s, mode == "nearest-exact"), i)
            for i, o, s in zip(in_sizes, output_size, scales)]


_UINT8 = xp.dtype("uint8")


def _uint8_linear_weights(in_size, out_size, scale, align_corners):
    """torch's integer weights for bytes (``_compute_index_ranges_int16_weights``): per output position the
    first input it reads, up to 3 triangle-filter weights normalized to sum 1, then scaled by 2**precision
    (the largest precision that keeps them in int16) and rounded."""
    s = float(_source_scale(in_size, out_size, scale, align_corners, float))
    delta = 0.5 if align_corners else 0.0
    starts, weights = [], []
    for i in range(out_size):
        center = s * (i + 0.5 - delta)
        start = max(int(center - 1.0 + 0.5 + delta), 0)
        size = min(max(min(int(center + 1.0 + 0.5 + delta), in_size) - start, 0), 3)
        w = [max(0.0, 1.0 - abs(j + start - center + 0.5 - delta)) for j in range(size)]
        total = sum(w)
        w = [v / total for v in w] if total != 0 else w
        starts.append(start)
        weights.append(w + [0.0] * (3 - size))
    largest = max((v for row in weights for v in row), default=0.0)
    precision = 0
    while precision < 22 and int(0.5 + largest * (1 << (precision + 1))) < (1 << 15):
        precision += 1
    scaled = [[int(-0.5 + v * (1 << precision)) if v < 0 else int(0.5 + v * (1 << precision)) for v in row]
              for row in weights]
    return xp.asarray(starts), xp.asarray(scaled, dtype=xp.int64), precision


def _uint8_bilinear(x, output_size, align_corners, scales):
    """Bilinear resizing of bytes as torch's CPU kernel does it: in fixed point, one axis at a time (the
    last first), each pass rounded back to bytes -- so results may differ by 1 from rounding the float
    interpolation."""
    nd = len(output_size)
    for i in reversed(range(nd)):
        axis = x.ndim - nd + i
        in_size, out_size = x.shape[axis], output_size[i]
        if in_size == out_size:
            continue
        starts, w, precision = _uint8_linear_weights(in_size, out_size, scales[i], align_corners)
        w = _on_device_of(x, w)   # (the weights are worked out on the host; the indices starts may stay there)
        src = xp.moveaxis(x, axis, -1).astype(xp.int64)
        padded = xp.concatenate([src, xp.zeros_like(src, shape=src.shape[:-1] + (3,))], axis=-1)   # (weights 0 there)
        acc = xp.full_like(src, 1 << (precision - 1) if precision else 0, shape=src.shape[:-1] + (out_size,))
        for j in range(3):
            acc += padded[..., starts + j] * w[:, j]
        x = xp.moveaxis(xp.clip(acc >> precision, 0, 255).astype(xp.uint8), -1, axis)
    return ascontiguousarray(x)


_SCALE_NAMES = {1: ("scales",), 2: ("scales_h", "scales_w"), 3: ("scales_d", "scales_h", "scales_w")}


def _upsample_kernel(mode, nd, linear):
    def forward(self, output_size, *rest):
        align_corners, scales = (rest[0], rest[1:]) if linear else (False, rest)
        if self.ndim != nd + 2:
            raise RuntimeError(f"It is expected input_size equals to {nd + 2}, but got size {self.ndim}")
        if any(o <= 0 for o in output_size):
            raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({_x(self.shape[2:])}) "
                               f"and output ({_x(output_size)})")
        if self.dtype == _UINT8 and mode == "linear" and nd == 2:   # torch's byte kernel (bilinear only)
            return _uint8_bilinear(self, output_size, align_corners, scales + (None,) * (nd - len(scales)))
        if self.dtype == _UINT8 and mode == "linear":
            raise NotImplementedError("\"compute_indices_weights_linear\" not implemented for 'Byte'")
        if not (self.dtype == _UINT8 and mode.startswith("nearest")):   # (torch's nearest kernels take bytes too)
            check_floating(self, f"upsample_{mode}{nd}d_out_frame")
        return _separable_forward(self, _upsample_maps(mode, self.shape[2:], output_size, align_corners,
                                                       scales + (None,) * (nd - len(scales)), self.dtype))

    def backward(grad_output, output_size, input_size, *rest):
        align_corners, scales = (rest[0], rest[1:]) if linear else (False, rest)
        return _separable_adjoint(grad_output, _upsample_maps(mode, input_size[2:], output_size, align_corners,
                                                              scales + (None,) * (nd - len(scales)),
                                                              grad_output.dtype))
    return forward, backward


def _x(sizes):
    return ", ".join(str(s) for s in sizes)


def _upsample_formulas(name, linear, nd):
    """The two formulas of an upsample op pair, written with its argument names (they differ per op:
    scales, or scales_h and scales_w, ...)."""
    params = (["align_corners"] if linear else []) + list(_SCALE_NAMES[nd])
    rest = ", ".join(params)
    source = (f"def forward_formula(grad, self_sizes, output_size, {rest}):\n"
              f"    return aten.{name}_backward(grad, output_size, list(self_sizes), {rest})\n"
              f"def backward_formula(grad, output_size, {rest}):\n"
              f"    return aten.{name}(grad, output_size, {rest})\n")
    namespace = {"aten": aten}
    exec(compile(source, f"<glasstorch: {name} formulas>", "exec"), namespace)
    return namespace["forward_formula"], namespace["backward_formula"]


def _declare_upsample(name, node, mode, nd):
    linear = mode == "linear"
    params = ("bool align_corners, " if linear else "") + ", ".join(f"float? {s}=None" for s in _SCALE_NAMES[nd])
    kernel, adjoint = _upsample_kernel(mode, nd, linear)
    forward_formula, backward_formula = _upsample_formulas(name, linear, nd)
    forward = defop(f"{name}(Tensor self, SymInt[{nd}] output_size, {params}) -> Tensor", kernel,
                    node=node + "Backward0", self=forward_formula)
    defop(f"{name}_backward(Tensor grad_output, SymInt[{nd}] output_size, SymInt[{nd + 2}] input_size, {params}) "
          f"-> Tensor", adjoint, node=node + "BackwardBackward0", grad_output=backward_formula)
    return forward


_UPSAMPLE = {
    ("nearest", 1): _declare_upsample("upsample_nearest1d", "UpsampleNearest1D", "nearest", 1),
    ("nearest", 2): _declare_upsample("upsample_nearest2d", "UpsampleNearest2D", "nearest", 2),
    ("nearest", 3): _declare_upsample("upsample_nearest3d", "UpsampleNearest3D", "nearest", 3),
    ("nearest-exact", 1): _declare_upsample("_upsample_nearest_exact1d", "UpsampleNearestExact1D", "nearest-exact", 1),
    ("nearest-exact", 2): _declare_upsample("_upsample_nearest_exact2d", "UpsampleNearestExact2D", "nearest-exact", 2),
    ("nearest-exact", 3): _declare_upsample("_upsample_nearest_exact3d", "UpsampleNearestExact3D", "nearest-exact", 3),
    ("linear", 1): _declare_upsample("upsample_linear1d", "UpsampleLinear1D", "linear", 1),
    ("bilinear", 2): _declare_upsample("upsample_bilinear2d", "UpsampleBilinear2D", "linear", 2),
    ("trilinear", 3): _declare_upsample("upsample_trilinear3d", "UpsampleTrilinear3D", "linear", 3),
}


def _interp_modes_error(input, mode):
    return (f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for the modes: nearest | "
            f"linear | bilinear | bicubic | trilinear | area | nearest-exact (got {mode})")


_MODES = {"nearest": 0, "nearest-exact": 0, "linear": 1, "bilinear": 2, "trilinear": 3, "area": 0, "bicubic": 2}


@overridable
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
        scales = [None] * nd if recompute_scale_factor else [float(s) for s in scales]
    else:
        raise ValueError("either size or scale_factor should be defined")
    out_sizes = [int(o) for o in out_sizes]
    if mode == "area":
        if nd == 1:
            return adaptive_avg_pool1d(input, out_sizes[0])
        return (adaptive_avg_pool2d if nd == 2 else _adaptive_avg_pool3d)(input, out_sizes)
    op = _UPSAMPLE[mode, nd]
    if mode in ("nearest", "nearest-exact"):
        return op(input, out_sizes, *scales)
    return op(input, out_sizes, bool(align_corners), *scales)


def _adaptive_avg_pool3d(input, output_size):
    out = _adaptive_output_size(input, output_size, 3, "adaptive_avg_pool3d")
    if out == [1, 1, 1]:
        return input.mean((-1, -2, -3), keepdim=True)
    return adaptive_avg_pool3d_op(input, out)


# ---- pixel shuffle: a permutation of elements, its adjoint is its inverse ---------------------------------
def _pixel_shuffle_kernel(self, upscale_factor):
    r = upscale_factor
    if self.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{self.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    *lead, c, h, w = self.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    y = self.reshape(tuple(lead) + (c // (r * r), r, r, h, w))
    nl = len(lead)
    y = y.transpose(tuple(range(nl)) + (nl, nl + 3, nl + 1, nl + 4, nl + 2))
    return ascontiguousarray(y).reshape(tuple(lead) + (c // (r * r), h * r, w * r))


def _pixel_unshuffle_kernel(self, downscale_factor):
    r = downscale_factor
    if self.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{self.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    *lead, c, h, w = self.shape
    if h % r:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)={h}"
                           f" is not divisible by {r}")
    if w % r:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)={w}"
                           f" is not divisible by {r}")
    y = self.reshape(tuple(lead) + (c, h // r, r, w // r, r))
    nl = len(lead)
    y = y.transpose(tuple(range(nl)) + (nl, nl + 2, nl + 4, nl + 1, nl + 3))
    return ascontiguousarray(y).reshape(tuple(lead) + (c * r * r, h // r, w // r))


pixel_shuffle_op = defop("pixel_shuffle(Tensor self, int upscale_factor) -> Tensor", _pixel_shuffle_kernel,
                         node="PixelShuffleBackward0",
                         self=lambda grad, upscale_factor: aten.pixel_unshuffle(grad, upscale_factor))
pixel_unshuffle_op = defop("pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor", _pixel_unshuffle_kernel,
                           node="PixelUnshuffleBackward0",
                           self=lambda grad, downscale_factor: aten.pixel_shuffle(grad, downscale_factor))


@overridable
def pixel_shuffle(input, upscale_factor):
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""
    return pixel_shuffle_op(input, int(upscale_factor))


@overridable
def pixel_unshuffle(input, downscale_factor):
    """(*, C, H r, W r) -> (*, C r^2, H, W)."""
    return pixel_unshuffle_op(input, int(downscale_factor))
