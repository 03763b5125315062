"""The layers' weighted maps: convolution (1-, 2-, 3-d, plain and transposed), bilinear, embedding.

Convolution is one matrix product. The input windows are laid out as columns (``im2col``: a
strided view of the padded input whose axes walk kernel offsets and output positions, copied once
into a (channels x kernel, positions x batch) matrix) and multiplied by the weight as a
(out_channels, channels x kernel) matrix -- one BLAS call per group::

    x (N, C, H, W) -> (C, H+2p, W+2p, N)                  padded, batch last: one copy
    windows (C, KH, KW, OH, OW, N)                         a strided view: no copy
    cols = windows as (C*KH*KW, OH*OW*N)                   one copy
    y = W (O, C*KH*KW) @ cols -> (O, OH, OW, N) -> (N, O, OH, OW)

The batch goes last inside the op because every copy and every strided add then moves runs of N
contiguous numbers (NumPy's per-row overhead is paid once per N elements, not once per row of a
small image). The derivatives reuse the pieces: the weight's gradient is ``grad @ cols^T`` (the
columns are kept from the forward), the input's gradient is ``W^T @ grad`` folded back onto the
image (``col2im``: one strided add per kernel offset, never a loop over positions). A transposed
convolution is exactly that fold as its forward, so both directions share these functions.

torch records one ``ConvolutionBackward0`` for all of them (``transposed`` tells which).
"""
import itertools

from .. import _checks
from .._tensor import _wrap
from .._array import xp
from ._op import _state, record, make_node_class
from .pointwise import add

_as_strided = xp.lib.stride_tricks.as_strided


def _prod(xs):
    n = 1
    for s in xs:
        n *= s
    return n


def _size_str(sizes):
    return " x ".join(str(s) for s in sizes)


# ---- the array machinery: im2col, col2im, their matrix products ----------------------------------------
# Columns are ordered (positions, batch) -- "batch last" -- or (batch, positions). Batch last gives
# every copy and strided add runs of N contiguous numbers, whatever the image size; batch first
# gives runs of the output's width and cheaper reorderings at both ends, which wins when that width
# is large. ``_batch_last_layout`` chooses; each function takes the choice as ``bl``.
_LONG_RUN = 24


def _batch_last_layout(grid, stride):
    """Batch last unless the output rows are long contiguous runs already."""
    return stride[-1] != 1 or grid[-1] < _LONG_RUN


def _batch_last(x, padding=None):
    """(N, C, *S) -> (C, *S, N), zero-padded by ``padding`` on both sides of each spatial dim."""
    nd = x.ndim - 2
    order = (1,) + tuple(range(2, 2 + nd)) + (0,)
    if not padding or not any(padding):
        return xp.ascontiguousarray(x.transpose(order))
    out = xp.zeros((x.shape[1],) + tuple(s + 2 * p for s, p in zip(x.shape[2:], padding)) + (x.shape[0],), x.dtype)
    out[(slice(None),) + tuple(slice(p, p + s) for p, s in zip(padding, x.shape[2:]))] = x.transpose(order)
    return out


def _batch_first(a):
    """(C, *S, N) -> (N, C, *S), contiguous."""
    nd = a.ndim - 2
    return xp.ascontiguousarray(a.transpose((nd + 1, 0) + tuple(range(1, nd + 1))))


def _padded(x, padding):
    """(N, C, *S) zero-padded on both sides of each spatial dim (x itself without padding)."""
    if not any(padding):
        return x
    out = xp.zeros(x.shape[:2] + tuple(s + 2 * p for s, p in zip(x.shape[2:], padding)), x.dtype)
    out[(slice(None), slice(None)) + tuple(slice(p, p + s) for p, s in zip(padding, x.shape[2:]))] = x
    return out


def _swap01(a):
    return xp.ascontiguousarray(a.swapaxes(0, 1))


def _out_size(size, kernel, stride, padding, dilation):
    return [(s + 2 * p - d * (k - 1) - 1) // st + 1 for s, k, st, p, d in zip(size, kernel, stride, padding, dilation)]


def im2col(x, kernel, stride, padding, dilation, groups, bl):
    """Columns of x (N, C, *S): (groups, C/groups * prod(kernel), N * prod(out)), ordered as ``bl``."""
    nd = len(kernel)
    n, c = x.shape[:2]
    out = _out_size(x.shape[2:], kernel, stride, padding, dilation)
    if bl:
        xpad = _batch_last(x, padding)                                # (C, *Sp, N)
        st = xpad.strides
        shape = (c,) + tuple(kernel) + tuple(out) + (n,)
        strides = ((st[0],) + tuple(st[1 + i] * dilation[i] for i in range(nd))
                   + tuple(st[1 + i] * stride[i] for i in range(nd)) + (st[-1],))
    else:
        xpad = _padded(x, padding)                                    # (N, C, *Sp)
        st = xpad.strides
        shape = (c,) + tuple(kernel) + (n,) + tuple(out)
        strides = ((st[1],) + tuple(st[2 + i] * dilation[i] for i in range(nd)) + (st[0],)
                   + tuple(st[2 + i] * stride[i] for i in range(nd)))
    windows = _as_strided(xpad, shape, strides, writeable=False)      # a view: no copy
    return windows.reshape(groups, (c // groups) * _prod(kernel), n * _prod(out)), out


def col2im(cols, channels, n, size, kernel, stride, padding, dilation, out_grid, bl):
    """The adjoint of im2col: add every column back onto the image it was read from.

    ``cols`` holds (C * prod(kernel), N * prod(out_grid)) ordered as ``bl``; returns the image
    (N, C, *size) (the padding is cropped off; rows past the last window, as with output_padding,
    stay zero).
    """
    padded = [s + 2 * p for s, p in zip(size, padding)]
    full = [max(ps, d * (k - 1) + st * (o - 1) + 1)
            for ps, k, st, d, o in zip(padded, kernel, stride, dilation, out_grid)]
    if bl:
        img = xp.zeros((channels,) + tuple(full) + (n,), cols.dtype)
        blocks = cols.reshape((channels,) + tuple(kernel) + tuple(out_grid) + (n,))
        lead = (slice(None),)
    else:
        img = xp.zeros((channels, n) + tuple(full), cols.dtype)
        blocks = cols.reshape((channels,) + tuple(kernel) + (n,) + tuple(out_grid))
        lead = (slice(None), slice(None))
    for offset in itertools.product(*[range(k) for k in kernel]):  # one strided add per kernel offset
        target = tuple(slice(o * d, o * d + st * (g - 1) + 1, st)
                       for o, d, st, g in zip(offset, dilation, stride, out_grid))
        img[lead + target] += blocks[(slice(None),) + offset]
    if tuple(full) != tuple(size):
        img = img[lead + tuple(slice(p, p + s) for p, s in zip(padding, size))]
    return _batch_first(img) if bl else _swap01(img)


def _rows(t, groups, bl):
    """(N, C, *S) -> (g, C/g, N * prod(S)): each group's channel rows, ordered as ``bl``."""
    c = t.shape[1]
    return (_batch_last(t) if bl else _swap01(t)).reshape(groups, c // groups, -1)


def _cols_product(w, cols, n, out_grid, bl):
    """W (O, C/g, *K) applied to columns (g, C/g * K, N*L): (N, O, *out_grid), contiguous."""
    groups = cols.shape[0]
    o = w.shape[0]
    y = xp.matmul(w.reshape(groups, o // groups, -1), cols)         # (g, O/g, N*L)
    if bl:
        return _batch_first(y.reshape((o,) + tuple(out_grid) + (n,)))
    return _swap01(y.reshape((o, n) + tuple(out_grid)))


def _fold_product(w, rows, channels, n, size, grid, kernel, stride, padding, dilation, bl):
    """col2im(W^T @ rows): with rows (g, O/g, N*L) and W (O, C/g, *K) -> image (N, C, *size)."""
    groups = rows.shape[0]
    wt = w.reshape(groups, w.shape[0] // groups, -1).transpose(0, 2, 1)  # (g, C/g*K, O/g)
    cols = xp.matmul(wt, rows).reshape(channels * _prod(kernel), -1)
    return col2im(cols, channels, n, size, kernel, stride, padding, dilation, grid, bl)


def _weight_product(rows, cols, wshape):
    """sum over positions of rows (g, A/g, N*L) times cols (g, B, N*L): the weight gradient."""
    return xp.matmul(rows, cols.transpose(0, 2, 1)).reshape(wshape)


# ---- the differentiable op -----------------------------------------------------------------------------
class ConvolutionBackward0(make_node_class("ConvolutionBackward0", None, ("input", "weight"))):
    """Gradients of a (transposed) convolution; the forward's columns ride along as a third saved
    value so the weight gradient costs one matrix product."""

    def backward(self, grad):
        x, w, cols = self._unpack_saved()
        need_x, need_w, need_b = (e[0] is not None for e in self.next_functions)
        if _state.enabled:  # create_graph: build the gradients from differentiable convolutions
            gb = grad.sum((0,) + tuple(range(2, grad.dim()))) if need_b else None
            return self._differentiable(grad, x, w, need_x, need_w) + (gb,)
        g = grad._data
        if g.dtype != w._data.dtype:
            g = g.astype(w._data.dtype)
        k, st, p, d, groups, bl = self.kernel, self.stride, self.padding, self.dilation, self.groups, self.bl
        gx = gw = gb = None
        if not self.transposed:
            rows = _rows(g, groups, bl)                                  # (g, O/g, N*L)
            if need_b:  # the bias gradient sums each (contiguous) row
                gb = _wrap(rows.sum(axis=-1).reshape(-1))
            if need_w:
                gw = _wrap(_weight_product(rows, cols._data, w._data.shape))
            if need_x:
                gx = _wrap(_fold_product(w._data, rows, x._data.shape[1], x._data.shape[0], x._data.shape[2:],
                                         g.shape[2:], k, st, p, d, bl))
        else:
            if need_b:
                gb = _wrap(g.sum(axis=(0,) + tuple(range(2, g.ndim))))
            gcols, grid = im2col(g, k, st, p, d, groups, bl)             # the output's windows
            if need_x:
                gx = _wrap(_cols_product(w._data, gcols, g.shape[0], grid, bl))
            if need_w:
                gw = _wrap(_weight_product(cols._data, gcols, w._data.shape))
        return gx, gw, gb

    def _differentiable(self, grad, x, w, need_x, need_w):
        st, p, d, groups = self.stride, self.padding, self.dilation, self.groups
        gx = gw = None
        if need_x:
            if self.transposed:
                gx = convolution(grad, w, None, st, p, d, False, [0] * len(st), groups)
            else:
                op = _output_padding(x.shape[2:], grad.shape[2:], self.kernel, st, p, d)
                gx = convolution(grad, w, None, st, p, d, True, op, groups)
        if need_w:
            gw = _weight_grad_graph(grad, x, w, self) if not self.transposed else _weight_grad_graph(x, grad, w, self)
        return gx, gw


def _output_padding(size, out_grid, kernel, stride, padding, dilation):
    """The rows a transposed convolution must add so that it returns ``size`` again."""
    return [s - ((o - 1) * st - 2 * p + dd * (k - 1) + 1)
            for s, o, k, st, p, dd in zip(size, out_grid, kernel, stride, padding, dilation)]


def _weight_grad_graph(rows, image, w, node):
    """The weight gradient sum_{n,l} rows[n,o,l] * windows(image)[n,c,k,l], as a differentiable
    convolution of the image (batch and channels swapped) with ``rows`` as the kernel: stride and
    dilation trade places. One convolution per group."""
    groups = node.groups
    nd = len(node.kernel)
    parts = []
    for g_rows, g_img in zip(rows.chunk(groups, 1), image.chunk(groups, 1)):
        r = convolution(g_img.transpose(0, 1), g_rows.transpose(0, 1), None, node.dilation, node.padding, node.stride,
                        False, [0] * nd, 1).transpose(0, 1)
        for i, k in enumerate(node.kernel):
            r = r.narrow(2 + i, 0, k)
        parts.append(r)
    from .joining import cat
    gw = parts[0] if groups == 1 else cat(parts, 0)
    return gw if gw.shape == w.shape else gw.reshape(w.shape)


def _check_conv(input, weight, bias, stride, padding, dilation, transposed, groups):
    x, w = input._data, weight._data
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    _checks.check_positive("convolution", "dilation", dilation)
    n = w.shape[1] * groups if transposed else w.shape[0]
    if bias is not None and tuple(bias.shape) != (n,):
        raise RuntimeError(f"Given weight of size {list(w.shape)}, expected bias to be 1-dimensional with {n} "
                           f"elements, but got bias of size {list(bias.shape)} instead")
    if x.ndim != w.ndim:
        raise RuntimeError(f"Expected {w.ndim}-dimensional input for {w.ndim}-dimensional weight {list(w.shape)}, "
                           f"but got {x.ndim}-dimensional input of size {list(x.shape)} instead")
    channels = w.shape[0] if transposed else w.shape[1] * groups
    if x.shape[1] != channels:
        kind = f"transposed=1" if transposed else f"groups={groups}"
        raise RuntimeError(f"Given {kind}, weight of size {list(w.shape)}, expected input{list(x.shape)} to have "
                           f"{channels} channels, but got {x.shape[1]} channels instead")
    if not transposed and w.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
                           f"but got "
                           f"weight of size {list(w.shape)} instead")
    if x.dtype != w.dtype:
        raise RuntimeError(f"Input type ({input.dtype._legacy.lower()}) and weight type "
                           f"({weight.dtype._legacy.lower()}) "
                           f"should be the same")
    if bias is not None and bias._data.dtype != x.dtype:
        raise RuntimeError(f"Input type ({input.dtype._legacy.lower()}) and bias type ({bias.dtype._legacy.lower()}) "
                           f"should be the same")
    if not transposed:
        padded = [s + 2 * p for s, p in zip(x.shape[2:], padding)]
        eff = [d * (k - 1) + 1 for k, d in zip(w.shape[2:], dilation)]
        if any(e > s for e, s in zip(eff, padded)):
            raise RuntimeError(f"Calculated padded input size per channel: ({_size_str(padded)}). Kernel size: "
                               f"({_size_str(eff)}). Kernel size can't be greater than actual input size")


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """torch.convolution on batched input (N, C, *spatial): every conv layer ends up here."""
    _check_conv(input, weight, bias, stride, padding, dilation, transposed, groups)
    x, w = input._data, weight._data
    kernel = w.shape[2:]
    n = x.shape[0]
    if not transposed:
        bl = _batch_last_layout(_out_size(x.shape[2:], kernel, stride, padding, dilation), stride)
        cols, grid = im2col(x, kernel, stride, padding, dilation, groups, bl)
        y = _cols_product(w, cols, n, grid, bl)
    else:
        bl = _batch_last_layout(x.shape[2:], stride)
        rows = _rows(x, groups, bl)                                      # (g, Cin/g, N*L)
        size = [(s - 1) * st - 2 * p + d * (k - 1) + op + 1
                for s, st, p, d, k, op in zip(x.shape[2:], stride, padding, dilation, kernel, output_padding)]
        cout = w.shape[1] * groups
        y = _fold_product(w, rows, cout, n, size, x.shape[2:], kernel, stride, padding, dilation, bl)
        cols = rows
    if bias is not None:
        y += bias._data.reshape((-1,) + (1,) * len(kernel))
    res = _wrap(y)
    if _state.enabled and (input._requires_grad or weight._requires_grad or (bias is not None and bias._requires_grad)):
        keep = _wrap(cols) if weight._requires_grad else None  # the weight gradient's columns
        node = record(ConvolutionBackward0, res, (input, weight, bias), (input, weight, keep), meta_check=False)
        node.kernel, node.stride = tuple(kernel), tuple(stride)
        node.padding, node.dilation = tuple(padding), tuple(dilation)
        node.transposed, node.output_padding, node.groups, node.bl = transposed, tuple(output_padding), groups, bl
    return res


# ---- functional entry points: argument handling, unbatched input, padding='same' ------------------------
def _ntuple(v, n):
    if isinstance(v, (tuple, list)):
        if len(v) == 1 and n > 1:
            return tuple(v) * n
        return tuple(int(i) for i in v)
    return (int(v),) * n


def _conv_nd(input, weight, bias, stride, padding, dilation, groups, nd, name):
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got input of "
                           f"size: {list(input.shape)}")
    unbatched = input.dim() == nd + 1
    if unbatched:
        input = input.unsqueeze(0)
    stride, dilation = _ntuple(stride, nd), _ntuple(dilation, nd)
    if isinstance(padding, str):
        input, padding = _string_padding(input, weight, padding, stride, dilation, nd)
    out = convolution(input, weight, bias, stride, _ntuple(padding, nd), dilation, False, (0,) * nd, groups)
    return out.squeeze(0) if unbatched else out


def _string_padding(input, weight, padding, stride, dilation, nd):
    """padding='valid' (none) or 'same' (output size = input size; an odd total pads one more at the
    end, by padding the input first as torch does)."""
    if padding == "valid":
        return input, (0,) * nd
    if padding != "same":
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    total = [d * (k - 1) for d, k in zip(dilation, weight.shape[2:])]
    left = [t // 2 for t in total]
    extra = [t - 2 * lo for t, lo in zip(total, left)]
    if any(extra):
        import warnings
        warnings.warn("Using padding='same' with even kernel lengths and odd dilation may require a zero-padded copy "
                      "of the input be created", UserWarning, stacklevel=4)
        pad = []
        for e in reversed(extra):
            pad += [0, e]
        from .nn_pool import pad as _pad
        input = _pad(input, pad)
    return input, tuple(left)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv_nd(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv_nd(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv_nd(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def _conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups, dilation, nd, name):
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got input of "
                           f"size: {list(input.shape)}")
    unbatched = input.dim() == nd + 1
    if unbatched:
        input = input.unsqueeze(0)
    stride, padding, dilation = _ntuple(stride, nd), _ntuple(padding, nd), _ntuple(dilation, nd)
    output_padding = _ntuple(output_padding, nd)
    for op, s, d in zip(output_padding, stride, dilation):
        if op >= s and op >= d:
            raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got "
                               f"output_padding_height: {output_padding[0]} output_padding_width: {output_padding[-1]} "
                               f"stride_height: {stride[0]} stride_width: {stride[-1]} dilation_height: {dilation[0]} "
                               f"dilation_width: {dilation[-1]}")
    out = convolution(input, weight, bias, stride, padding, dilation, True, output_padding, groups)
    return out.squeeze(0) if unbatched else out


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups, dilation, 1,
                              "conv_transpose1d")


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups, dilation, 2,
                              "conv_transpose2d")


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups, dilation, 3,
                              "conv_transpose3d")


# ---- unfold / fold: im2col and col2im as ops of their own (F.unfold, F.fold) ------------------------------
class Im2ColBackward0(make_node_class("Im2ColBackward0", None)):
    def backward(self, grad):
        return fold(grad, self.self_sizes[-2:], self.kernel, self.dilation, self.padding, self.stride)


class Col2ImBackward0(make_node_class("Col2ImBackward0", None)):
    def backward(self, grad):
        return unfold(grad, self.kernel, self.dilation, self.padding, self.stride)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding blocks of a (N, C, H, W) image as columns: (N, C * kh * kw, L)."""
    if input.dim() not in (3, 4):
        raise RuntimeError(f"Input Error: Only 3D or 4D input Tensors are supported (got {input.dim()}D)")
    unbatched = input.dim() == 3
    x = input._data[None] if unbatched else input._data
    k, d, p, s = _ntuple(kernel_size, 2), _ntuple(dilation, 2), _ntuple(padding, 2), _ntuple(stride, 2)
    blocks = [(n + 2 * pi - di * (ki - 1) - 1) // si + 1 for n, ki, di, pi, si in zip(x.shape[2:], k, d, p, s)]
    if any(b < 1 for b in blocks):
        raise RuntimeError(f"Given input with spatial size {tuple(x.shape[2:])}, kernel_size={k}, dilation={d}, "
                           f"padding={p}, calculated shape of the array of sliding blocks as {tuple(blocks)}, but its "
                           f"components must be at least one.")
    cols, grid = im2col(x, k, s, p, d, 1, False)
    n, c = x.shape[:2]
    y = _swap01(cols.reshape(c * k[0] * k[1], n, -1))
    res = _wrap(y[0] if unbatched else y)
    if input._requires_grad and _state.enabled:
        node = record(Im2ColBackward0, res, (input,), meta_check=False)
        node.self_sizes, node.kernel, node.dilation, node.padding, node.stride = input.shape, k, d, p, s
    return res


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """The adjoint of unfold: sum the columns (N, C * kh * kw, L) back into a (N, C, H, W) image."""
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported "
                           f"(got {input.dim()}D)")
    unbatched = input.dim() == 2
    cols = input._data[None] if unbatched else input._data
    size, k = _ntuple(output_size, 2), _ntuple(kernel_size, 2)
    d, p, s = _ntuple(dilation, 2), _ntuple(padding, 2), _ntuple(stride, 2)
    n, ck, length = cols.shape
    if ck % (k[0] * k[1]):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={ck} and kernel_size={k}")
    grid = _out_size(size, k, s, p, d)
    if grid[0] * grid[1] != length:
        raise RuntimeError(f"Given output_size={size}, kernel_size={k}, dilation={d}, padding={p}, stride={s}, "
                           f"expected size of input's dimension 2 to match the calculated number of sliding blocks "
                           f"{grid[0]} * {grid[1]} = {grid[0] * grid[1]}, but got input.size(2)={length}.")
    c = ck // (k[0] * k[1])
    y = col2im(_swap01(cols).reshape(ck, -1), c, n, size, k, s, p, d, grid, False)
    res = _wrap(y[0] if unbatched else y)
    if input._requires_grad and _state.enabled:
        node = record(Col2ImBackward0, res, (input,), meta_check=False)
        node.kernel, node.dilation, node.padding, node.stride = k, d, p, s
    return res


# ---- bilinear: y = x1^T W x2 + b (torch's _trilinear) ---------------------------------------------------
class TrilinearBackward0(make_node_class("TrilinearBackward0", None, ("i1", "i2", "i3"))):
    def backward(self, grad):
        a, w, b = self._unpack_saved()
        from .linalg import einsum
        ga = einsum("bo,oij,bj->bi", grad, w, b) if self.next_functions[0][0] is not None else None
        gw = einsum("bo,bi,bj->oij", grad, a, b) if self.next_functions[1][0] is not None else None
        gb = einsum("bo,bi,oij->bj", grad, a, w) if self.next_functions[2][0] is not None else None
        return ga, gw, gb


def _trilinear(a, w, b):
    t = xp.matmul(a._data, w._data.transpose(1, 0, 2).reshape(w._data.shape[1], -1))  # (B, O*J)
    y = xp.einsum("boj,bj->bo", t.reshape(a._data.shape[0], w._data.shape[0], -1), b._data)
    res = _wrap(xp.ascontiguousarray(y))
    if _state.enabled and (a._requires_grad or w._requires_grad or b._requires_grad):
        record(TrilinearBackward0, res, (a, w, b), (a, w, b), meta_check=False)
    return res


def bilinear(input1, input2, weight, bias=None):
    """y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o]."""
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}")
    for i in range(input1.dim() - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match: got {input1.shape[i]} and "
                               f"{input2.shape[i]}")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but expected "
                           f"{weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but expected "
                           f"{weight.shape[2]}")
    lead = tuple(input1.shape[:-1])
    y = _trilinear(input1.reshape(-1, input1.shape[-1]), weight, input2.reshape(-1, input2.shape[-1]))
    y = y.view(lead + (weight.shape[0],))
    return y if bias is None else add(y, bias)


# ---- embedding: rows of a table --------------------------------------------------------------------------
class EmbeddingBackward0(make_node_class("EmbeddingBackward0", None, ("indices",))):
    """The rows' gradients summed into a zero table (index_add), none for padding_idx's row."""

    def backward(self, grad):
        (idx,) = self._unpack_saved()
        dim = grad.shape[-1]
        g = grad.reshape(-1, dim)
        flat = idx.reshape(-1)
        if self.padding_idx is not None:
            g = g.masked_fill((flat == self.padding_idx).unsqueeze(1), 0)
        if self.scale_grad_by_freq:
            counts = _wrap(xp.bincount(flat._data, minlength=self.num_weights)[flat._data].astype(g._data.dtype))
            g = g / counts.unsqueeze(1)
        from .creation import zeros
        return zeros((self.num_weights, dim), dtype=grad.dtype).index_add(0, flat, g)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    """weight[input]: a lookup of rows; the gradient of padding_idx's row stays zero."""
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    idx = input._data
    if idx.dtype.kind not in "iu":
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, "
                           f"Int; but got {input.type()} instead (while checking arguments for embedding)")
    num = weight.shape[0]
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < num, "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -num, "Padding_idx must be within num_embeddings"
            padding_idx = num + padding_idx
    if idx.size and (idx.max() >= num or idx.min() < 0):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        _renorm_rows(weight, idx, max_norm, norm_type)
    res = _wrap(xp.take(weight._data, idx, axis=0))
    if weight._requires_grad and _state.enabled:
        node = record(EmbeddingBackward0, res, (weight,), (input,), meta_check=False)
        node.num_weights, node.padding_idx, node.scale_grad_by_freq = num, padding_idx, scale_grad_by_freq
    return res


def _renorm_rows(weight, idx, max_norm, norm_type):
    """max_norm: rescale (in place, outside autograd) the looked-up rows whose norm exceeds it."""
    w = weight._data
    rows = xp.unique(idx.reshape(-1))
    norms = xp.linalg.norm(w[rows].astype("float64"), ord=norm_type, axis=1)
    scale = xp.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
    w[rows] = (w[rows] * scale[:, None]).astype(w.dtype)
    from .._tensor import bump_version
    bump_version(weight, "embedding_renorm_")


def one_hot(tensor, num_classes=-1):
    """(..., ) class indices -> (..., num_classes) int64 rows with a single 1."""
    d = tensor._data
    if d.dtype != xp.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if d.size and d.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = int(d.max()) + 1 if d.size else 0
    elif d.size and d.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return _wrap((d[..., None] == xp.arange(num_classes)).astype(xp.int64))

