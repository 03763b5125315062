"""The layers' weighted maps: convolution (1-, 2-, 3-d, plain and transposed), unfold/fold, bilinear,
embedding -- as torch's aten ops (``aten.convolution`` and ``aten.convolution_backward``,
``aten.im2col``/``aten.col2im``, ``aten._trilinear``, ``aten.embedding`` and
``aten.embedding_dense_backward``) and the public functions on them.

Convolution is one matrix product per layer. The input windows are laid out as columns (``im2col``:
a strided view of the padded input whose axes walk kernel offsets and output positions, copied once
into a (channels x kernel, positions x batch) matrix) and multiplied with the weight as a
(out_channels, channels x kernel) matrix -- one BLAS call per group::

    x (N, C, H, W) -> (C, H+2p, W+2p, N)                  padded, batch last: one copy
    windows (C, KH, KW, OH, OW, N)                         a strided view: no copy
    cols = windows as (C*KH*KW, OH*OW*N)                   one copy
    y = W (O, C*KH*KW) @ cols -> (O, OH, OW, N) -> (N, O, OH, OW)

The batch goes last inside the op because every copy and every strided add then moves runs of N
contiguous numbers (NumPy's per-row overhead is paid once per N elements, not once per row of a
small image). (Where the first spatial axis has stride 1, the batch-last columns unfold only the other
axes, and each kernel row's columns are a block of them: one product per kernel row, a KH times
smaller copy -- ``_row_shifted``.) The three products a layer needs share these pieces:

* forward          ``y    = W @ cols(x)``
* weight gradient  ``g_W  = rows(g) @ cols(x)^T``   (computed as ``(cols(x) @ rows(g)^T)^T``: the long
  inner dimension on the right is 2-7x faster in OpenBLAS for the few output channels of small nets)
* input gradient   ``g_x  = col2im(W^T @ rows(g))``  (the adjoint of im2col: one strided add per kernel
  offset, never a loop over positions)

A transposed convolution is the input gradient's map as its forward, so both directions use the
same three functions with the roles swapped, and torch records one ``ConvolutionBackward0`` for all
of them (``transposed`` tells which). Its backward, ``aten.convolution_backward``, is an op of its
own (what a FLOP counter sees), computing only the gradients its ``output_mask`` asks for; the
weight gradient recomputes the input's columns, as torch does, instead of keeping a
channels x kernel times larger copy of every layer's input alive between forward and backward.
"""
import itertools
import math
import weakref

from .. import _checks, _dtype
from .._array import (xp, sum_ends, has_values, ascontiguousarray, as_strided, matmul as _matmul,
                      arange_like as _arange_like, full_like as _full_like, zeros_like as _zeros_like,
                      empty_like as _empty_like)
from .._ops import defop, aten, node_classes_of
from .. import _ops   # (_ops._ARRAY_TYPES, read at each call: it grows when CuPy is imported)
from .._seam import seam, overridable
from ._op import kernel_not_implemented
from ._derivatives import not_implemented
from ..autograd import grad_mode

__getattr__ = node_classes_of(__name__)    # (the node classes declared here, by name: TanhBackward0)

_as_strided = as_strided   # (NumPy's, or a meta view)


def _size_str(sizes):
    return " x ".join(str(s) for s in sizes)


def _type_name(dtype):
    """torch's scalar type name of an array dtype ('Float', 'Double', 'Long')."""
    return _dtype._BY_NUMPY[dtype]._legacy


# ---- the array machinery: im2col, col2im, their matrix products ----------------------------------------
# Columns are ordered (positions, batch) -- "batch last": one (C*K, L*N) matrix per group -- or image by
# image -- "batch first": (N, groups, C/g*K, L), one matrix per image. Batch last gives every copy and
# strided add runs of N contiguous numbers, whatever the image size; batch first gives runs of the
# output's width, and its products come out in the (N, O, *grid) layout of the result and take
# grad_output as it is (one product per image, batched), which wins when that width is large.
# ``_batch_last_layout`` chooses from the (underlying) convolution's output grid, so the forward and
# the backward of one layer choose alike; each function takes the choice as ``bl``.
_LONG_RUN = 24


def _batch_last_layout(grid, stride):
    """Batch last unless the output rows are long contiguous runs already."""
    return stride[-1] != 1 or grid[-1] < _LONG_RUN


def _batch_last(x, padding=None):
    """(N, C, *S) -> (C, *S, N), zero-padded by ``padding`` on both sides of each spatial dim."""
    nd = x.ndim - 2
    order = (1,) + tuple(range(2, 2 + nd)) + (0,)
    if not padding or not any(padding):
        return ascontiguousarray(x.transpose(order))
    out = xp.zeros_like(x, order="C", shape=(x.shape[1],) + tuple(s + 2 * p for s, p in zip(x.shape[2:], padding))
                        + (x.shape[0],))   # (on x's device)
    out[(slice(None),) + tuple(slice(p, p + s) for p, s in zip(padding, x.shape[2:]))] = x.transpose(order)
    return out


def _batch_first(a):
    """(C, *S, N) -> (N, C, *S), contiguous."""
    nd = a.ndim - 2
    return ascontiguousarray(a.transpose((nd + 1, 0) + tuple(range(1, nd + 1))))


def _padded(x, padding):
    """(N, C, *S) zero-padded on both sides of each spatial dim (x itself without padding)."""
    if not any(padding):
        return x
    out = _zeros_like(x, x.shape[:2] + tuple(s + 2 * p for s, p in zip(x.shape[2:], padding)))
    out[(slice(None), slice(None)) + tuple(slice(p, p + s) for p, s in zip(padding, x.shape[2:]))] = x
    return out


def _out_size(size, kernel, stride, padding, dilation):
    return [(s + 2 * p - d * (k - 1) - 1) // st + 1 for s, k, st, p, d in zip(size, kernel, stride, padding, dilation)]


def _im2col(x, kernel, stride, padding, dilation, groups, bl):
    """Columns of x (N, C, *S): batch last (groups, C/groups * prod(kernel), prod(out) * N), batch first
    (N, groups, C/groups * prod(kernel), prod(out))."""
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
        shape = (n, c) + tuple(kernel) + tuple(out)
        strides = ((st[0], st[1]) + tuple(st[2 + i] * dilation[i] for i in range(nd))
                   + tuple(st[2 + i] * stride[i] for i in range(nd)))
    windows = _as_strided(xpad, shape, strides, writeable=False)      # a view: no copy
    k = (c // groups) * math.prod(kernel)
    if bl:
        return windows.reshape(groups, k, math.prod(out) * n), out
    return windows.reshape(n, groups, k, math.prod(out)), out


# Batch-last columns "shifted by rows": the windows are unfolded along every spatial axis but the first
# (kernel offsets kw.. only) and over *all* the padded input's first-axis rows h. Column (h, ow.., n) of
# row (c, kw..) then serves every kernel row kh: the columns of offset kh are the contiguous block of
# rows h = kh*d .. kh*d + OH - 1, a matrix with a longer leading dimension that BLAS takes as it is.
# The forward is one product per kernel row, summed; the copy is KH times smaller than im2col's (LeNet's
# 6 -> 16 layer: 2.2 MB against 7.7 MB), and so is what _ColumnsMemo keeps for the weight gradient.
# Measured on an AMD EPYC (Zen 3) against im2col's one product: LeNet's second layer forward 3.3 -> 2.2 ms
# (see bench/README.md, stop 27). Needs stride 1 along the first axis (rows h of a kernel row are then
# consecutive) and at least two spatial axes (a 1-d one has nothing left to unfold).
def _row_shifted(nd, stride, bl):
    """Whether a batch-last convolution lays its columns out shifted by rows (see above)."""
    return bl and nd >= 2 and stride[0] == 1


def _unfold_rows(x, kernel, stride, padding, dilation, groups):
    """x (N, C, *S) -> (groups, C/g * prod(kernel[1:]), Hp * prod(out[1:]) * N): the row-shifted columns,
    Hp the padded first axis; and the output grid."""
    nd = len(kernel)
    n, c = x.shape[:2]
    out = _out_size(x.shape[2:], kernel, stride, padding, dilation)
    xpad = _batch_last(x, padding)                                    # (C, Hp, *Sp[1:], N)
    st = xpad.strides
    shape = (c,) + tuple(kernel[1:]) + (xpad.shape[1],) + tuple(out[1:]) + (n,)
    strides = ((st[0],) + tuple(st[2 + i] * dilation[1 + i] for i in range(nd - 1)) + (st[1],)
               + tuple(st[2 + i] * stride[1 + i] for i in range(nd - 1)) + (st[-1],))
    u = ascontiguousarray(_as_strided(xpad, shape, strides, writeable=False))
    return u.reshape(groups, (c // groups) * math.prod(kernel[1:]), xpad.shape[1] * math.prod(out[1:]) * n), out


def _row_block(u, k, dilation, grid, n):
    """The columns of kernel row k in row-shifted columns ``u``: (g, C/g * prod(kernel[1:]), L * N), a view."""
    block = math.prod(grid[1:]) * n
    start = k * dilation[0] * block
    return u[:, :, start:start + grid[0] * block]


def _col2im(cols, channels, n, size, kernel, stride, padding, dilation, out_grid, bl):
    """The adjoint of im2col: add every column back onto the image it was read from.

    ``cols`` holds (C * prod(kernel), prod(out_grid) * N) batch last, or (N, C * prod(kernel),
    prod(out_grid)) batch first (any shape that reshapes to it); returns the image (N, C, *size),
    contiguous (the padding is cropped off; rows past the last window, as with output_padding, stay zero).
    """
    padded = [s + 2 * p for s, p in zip(size, padding)]
    full = [max(ps, d * (k - 1) + st * (o - 1) + 1)
            for ps, k, st, d, o in zip(padded, kernel, stride, dilation, out_grid)]
    if bl:
        img = _zeros_like(cols, (channels,) + tuple(full) + (n,))
        blocks = cols.reshape((channels,) + tuple(kernel) + tuple(out_grid) + (n,))
        lead = (slice(None),)
    else:
        img = _zeros_like(cols, (n, channels) + tuple(full))
        blocks = cols.reshape((n, channels) + tuple(kernel) + tuple(out_grid))
        lead = (slice(None), slice(None))
    for offset in itertools.product(*[range(k) for k in kernel]):  # one strided add per kernel offset
        target = tuple(slice(o * d, o * d + st * (g - 1) + 1, st)
                       for o, d, st, g in zip(offset, dilation, stride, out_grid))
        img[lead + target] += blocks[lead + offset]
    if tuple(full) != tuple(size):
        img = img[lead + tuple(slice(p, p + s) for p, s in zip(padding, size))]
    return _batch_first(img) if bl else ascontiguousarray(img)


def _rows(t, groups, bl):
    """(N, C, *S) -> each group's channel rows, ordered as ``bl``: batch last (g, C/g, prod(S) * N), batch
    first (N, g, C/g, prod(S)) (t itself, reshaped)."""
    n, c = t.shape[:2]
    if bl:
        return _batch_last(t).reshape(groups, c // groups, -1)
    return t.reshape(n, groups, c // groups, -1)


class _ColumnsMemo:
    """The columns of a convolution's input, kept from the forward for its weight gradient.

    ``convolution_backward`` receives the input itself (its schema is torch's), and computing the
    weight gradient from it means laying its windows out as columns again -- a copy as large as the
    input times the kernel size, which in a small network costs as much as the matrix product. So
    the forward, when it runs with grad mode on, leaves its columns here, keyed by the input array's
    identity and the geometry; the backward takes them (once) if they are for the same array and
    geometry, and recomputes them otherwise. An entry lives no longer than its input array (a weak
    reference drops it) and is replaced by the next forward on that array: at most one set of
    columns per live convolution input, what a node keeping them would hold.
    """

    def __init__(self):
        self._entries = {}

    def put(self, x, key, cols):
        ident = id(x)
        entries = self._entries
        entries[ident] = (weakref.ref(x, lambda _ref: entries.pop(ident, None)), key, cols)

    def take(self, x, key):
        entry = self._entries.get(id(x))
        if entry is None or entry[0]() is not x or entry[1] != key:
            return None
        del self._entries[id(x)]
        return entry[2]


_columns = _ColumnsMemo()
_grad_state = grad_mode._state


# Columns larger than this (bytes) are laid out and multiplied one image at a time: a whole batch's
# columns of a layer on large images do not fit in any cache, and cost more to write and read again
# than the product itself (d2l's TinySSD: 16 -> 16 channels on 32 images of 256x256 is a 1.2 GB
# column matrix, whose forward took 2.2 s against 0.53 s in torch; image by image, each image's
# 37 MB of columns go straight into its GEMM). Only for the batch-first layout (large output rows),
# where an image's rows of the result are contiguous.
_IMAGE_BY_IMAGE_BYTES = 64 << 20


def _by_images(x, wshape, grid, groups, bl):
    """Whether the products of a convolution of ``x`` (N, C, *S) by a weight of shape ``wshape``
    over the output ``grid`` run image by image (the forward and both gradients decide alike)."""
    return (not bl and x.shape[0] > 1 and type(x) is xp.ndarray
            and x.itemsize * groups * math.prod(wshape[1:]) * x.shape[0] * math.prod(grid) > _IMAGE_BY_IMAGE_BYTES)


def _conv_forward_by_images(x, w, stride, padding, dilation, groups, grid):
    """:func:`_conv_forward` (batch-first) one image at a time, each image's product written into its
    part of the result."""
    n, o = x.shape[0], w.shape[0]
    y = xp.empty((n, o) + tuple(grid), dtype=w.dtype)
    wg = w.reshape(groups, o // groups, -1)
    direct = y.dtype.char in "fd"
    for i in range(n):
        cols = _im2col(x[i:i + 1], w.shape[2:], stride, padding, dilation, groups, False)[0][0]  # (g, C/g*K, L)
        if direct:
            xp.matmul(wg, cols, out=y[i].reshape(cols.shape[0], o // groups, -1))
        else:
            y[i] = _matmul(wg, cols).reshape((o,) + tuple(grid))
    return y


# Batch-first convolutions (long output rows) whose per-image products are small -- LeNet's first layer,
# (6 x 25) @ (25 x 784) per image -- lay out their columns by blocks of this many images, each block
# multiplied (one batched product, image by image) while its columns are still in cache. The columns are
# in the batch-first layout, (N, g, C/g*K, L), so that each image's product is written straight into
# its part of the (N, O, L) result, and the weight gradient is the sum of the images' products on the
# columns the forward kept (_sum_of_image_products), each image's rows of grad_output a matrix as they
# are. Measured in LeNet's step on AMD Zen 4 (stop 34, bench/README.md): conv1's forward 2.4 -> 1.5 ms and
# its weight gradient 2.4 -> 1.1 ms against stop 27's (C/g*K, N*L) blocks, whose weight gradient was one
# (O, B*L) @ (B*L, C*K) product per block -- a shape OpenBLAS's kernels run at a fraction of their
# speed -- after copying grad_output's rows into that layout. Only where one image's columns are small
# (_BLOCK_COLUMN_BYTES): for large images the per-image product is large already.
_BLOCK_IMAGES = 16
_BLOCK_COLUMN_BYTES = 256 << 10


def _by_blocks(x, wshape, grid, groups, bl):
    """Whether a batch-first convolution runs by blocks of images (see above)."""
    return (not bl and x.shape[0] > 1 and type(x) is xp.ndarray
            and x.itemsize * groups * math.prod(wshape[1:]) * math.prod(grid) <= _BLOCK_COLUMN_BYTES)


def _column_blocks(x, kernel, stride, padding, dilation, groups, grid):
    """The batch-first columns of x (N, C, *S), (N, g, C/g*K, L) as _im2col lays them out, filled a block
    of images at a time: yields (the array, first image, the block's columns (B, g, C/g*K, L), a view)
    after filling each block, so that the caller uses it while it is in cache."""
    nd = len(kernel)
    n, c = x.shape[:2]
    xpad = _padded(x, padding)                                        # (N, C, *Sp)
    st = xpad.strides
    windows = _as_strided(xpad, (n, c) + tuple(kernel) + tuple(grid),   # a view, (N, C, *kernel, *grid)
                          (st[0], st[1]) + tuple(st[2 + i] * dilation[i] for i in range(nd))
                          + tuple(st[2 + i] * stride[i] for i in range(nd)), writeable=False)
    cols = xp.empty((n, groups, (c // groups) * math.prod(kernel), math.prod(grid)), dtype=x.dtype)
    cols_w = cols.reshape(windows.shape)                              # (cols is contiguous: a view)
    for i in range(0, n, _BLOCK_IMAGES):
        cols_w[i:i + _BLOCK_IMAGES] = windows[i:i + _BLOCK_IMAGES]
        yield cols, i, cols[i:i + _BLOCK_IMAGES]


def _conv_forward_by_blocks(x, w, stride, padding, dilation, groups, grid, keep):
    """:func:`_conv_forward` (batch first) by blocks of images (see above)."""
    n, o = x.shape[0], w.shape[0]
    wg = w.reshape(groups, o // groups, -1)
    y = xp.empty((n, o) + tuple(grid), dtype=w.dtype)
    yv = y.reshape(n, groups, o // groups, -1)                        # (N, g, O/g, L)
    direct = y.dtype.char in "fd"     # (NumPy's matmul writes float32/64 products in place; others via _matmul)
    for cols, i, block in _column_blocks(x, w.shape[2:], stride, padding, dilation, groups, grid):
        if direct:
            xp.matmul(wg, block, out=yv[i:i + block.shape[0]])
        else:
            yv[i:i + block.shape[0]] = _matmul(wg, block)
    if keep:
        _columns.put(x, _block_key(w.shape, stride, padding, dilation, groups), cols)
    return y


def _block_key(wshape, stride, padding, dilation, groups):
    return (tuple(wshape), tuple(stride), tuple(padding), tuple(dilation), groups, "blocks")


def _conv_weight_grad_by_blocks(g, x, wshape, stride, padding, dilation, groups):
    """:func:`_conv_weight_grad` (batch first) by blocks of images, on the forward's kept columns."""
    n, o = g.shape[:2]
    rows = g.reshape(n, groups, o // groups, -1)                      # (N, g, O/g, L)
    cols = _columns.take(x, _block_key(wshape, stride, padding, dilation, groups))
    if cols is not None:
        return _sum_of_image_products(rows, cols).reshape(wshape)
    total = None      # (laid out again, block by block)
    for _, i, block in _column_blocks(x, wshape[2:], stride, padding, dilation, groups, g.shape[2:]):
        part = _sum_of_image_products(rows[i:i + block.shape[0]], block)
        total = part if total is None else total + part
    return total.reshape(wshape)


# The batch-last forward's product is computed transposed when its inner dimension (C/g * kernel size)
# is below this (measured on Intel Sapphire Rapids at stop 26: see _conv_forward; on AMD Zen 3 the plain
# product was faster for LeNet's 150 x 16. Since stop 27 only batch-last convolutions that are not
# row-shifted come here: 1-d ones and those with a stride along the first spatial axis).
_SHORT_INNER = 256


def _conv_forward(x, w, stride, padding, dilation, groups, bl, keep=False, bias=None):
    """y = W applied to the columns of x (plus ``bias`` per out-channel): (N, O, *grid), contiguous.
    ``keep``: leave the columns for the weight gradient (``_ColumnsMemo``; not when the columns are
    made image by image)."""
    n, o = x.shape[0], w.shape[0]
    nd = w.ndim - 2
    grid = _out_size(x.shape[2:], w.shape[2:], stride, padding, dilation)
    if _by_images(x, w.shape, grid, groups, bl):
        y = _conv_forward_by_images(x, w, stride, padding, dilation, groups, grid)
    elif _by_blocks(x, w.shape, grid, groups, bl):
        y = _conv_forward_by_blocks(x, w, stride, padding, dilation, groups, grid, keep)
    elif _row_shifted(nd, stride, bl):
        u, grid = _unfold_rows(x, w.shape[2:], stride, padding, dilation, groups)
        if keep:
            _columns.put(x, (tuple(w.shape), tuple(stride), tuple(padding), tuple(dilation), groups, bl), u)
        kh = w.shape[2]
        rest = math.prod(w.shape[3:])
        wk = w.reshape((groups, o // groups, w.shape[1], kh, rest)).transpose(3, 0, 1, 2, 4)
        wk = ascontiguousarray(wk).reshape(kh, groups, o // groups, w.shape[1] * rest)   # (KH, g, O/g, C/g * KW..)
        y = None
        for k in range(kh):   # one product per kernel row, summed
            part = _matmul(wk[k], _row_block(u, k, dilation, grid, n))     # (g, O/g, L*N)
            if y is None:
                y = part
            else:
                y += part
        if bias is not None:   # (on the product's contiguous rows: in the layout copy below it costs 3x)
            y += bias.reshape(groups, o // groups, 1)
        return _batch_first(y.reshape((o,) + tuple(grid) + (n,)))
    else:
        cols, grid = _im2col(x, w.shape[2:], stride, padding, dilation, groups, bl)   # (g, C/g*K, L*N) or (N, g, C/g*K, L)
        if keep:
            _columns.put(x, (tuple(w.shape), tuple(stride), tuple(padding), tuple(dilation), groups, bl), cols)
        wg = w.reshape(groups, o // groups, -1)
        if bl and wg.shape[2] < _SHORT_INNER:
            # computed transposed, (L*N, C/g*K) @ (C/g*K, O/g), and the (grid, N, O/g) result goes to
            # (N, O, *grid) in the one copy that also adds the bias (LeNet's second layer, 150 x 16:
            # 1.35 -> 1.15 ms against the (O/g, L*N) product, its copy and a bias pass; 144 x 128:
            # 7.2 -> 4.6; but 288 x 32 and 288 x 64 on 16 x 16 images: 8% slower, hence the bound)
            yt = _matmul(cols.transpose(0, 2, 1), wg.transpose(0, 2, 1))        # (g, L*N, O/g)
            yt = yt.reshape((groups,) + tuple(grid) + (n, o // groups)).transpose(
                (nd + 1, 0, nd + 2) + tuple(range(1, nd + 1)))                      # (N, g, O/g, *grid), a view
            if bias is None:
                return ascontiguousarray(yt).reshape((n, o) + tuple(grid))
            out = xp.add(yt, bias.reshape((groups, o // groups) + (1,) * nd), out=_empty_like(yt, yt.shape))
            return out.reshape((n, o) + tuple(grid))
        y = _matmul(wg, cols)                                             # (g, O/g, L*N) or (N, g, O/g, L)
        y = _batch_first(y.reshape((o,) + tuple(grid) + (n,))) if bl else y.reshape((n, o) + tuple(grid))
    if bias is not None:
        y += bias.reshape((-1,) + (1,) * nd)
    return y


def _as_flipped_convolution(g, w, channels, size, stride, padding, dilation, groups):
    """:func:`_conv_input_grad` as a convolution, where it is one: with stride 1, the map from a
    convolution's output back onto its input is the convolution of ``g`` by the weight flipped in space,
    its in- and out-channels swapped (in each group), padded by ``d (k - 1) - p``. Its columns are g's
    windows, one copy, and its product has the in-channels times the kernel as inner dimension; col2im's
    product has only the out-channels there (16 in TinySSD's first layers: a product bound by writing its
    (C*9) x (N*H*W) result) and then adds nine strided blocks back. TinySSD's 16 -> 16 layer on 32
    images of 256x256: ~1.0 s -> ~0.6 s. None where it does not apply (strides, padding past the kernel,
    a size other than the convolution's, as a transposed convolution's output_padding makes), and where
    the out-channels outnumber the in-channels: then g's columns are the larger copy, and col2im was
    measured faster (LeNet's 6 -> 16 layer: 5.4 ms against 14.6; 16 -> 32 on 128x128: 279 against 309)."""
    kernel = w.shape[2:]
    if w.shape[0] > channels or any(st != 1 for st in stride):
        return None
    flipped_padding = [d * (k - 1) - p for k, d, p in zip(kernel, dilation, padding)]
    if any(fp < 0 for fp in flipped_padding) or any(
            s != o + fp - p for s, o, fp, p in zip(size, g.shape[2:], flipped_padding, padding)):
        return None
    o = w.shape[0]
    wf = w.reshape((groups, o // groups, channels // groups) + tuple(kernel)).swapaxes(1, 2)
    wf = ascontiguousarray(wf[(Ellipsis,) + (slice(None, None, -1),) * len(kernel)]).reshape(
        (channels, o // groups) + tuple(kernel))
    return _conv_forward(g, wf, stride, flipped_padding, dilation, groups, _batch_last_layout(size, stride))


def _conv_input_grad(g, w, channels, size, stride, padding, dilation, groups, bl, rows=None):
    """col2im(W^T @ rows(g)): the map from a convolution's output (N, O, *grid) back onto its input
    (N, C, *size) -- the input gradient, and a transposed convolution's forward. ``rows``: g's rows
    when the caller has them already."""
    kernel = w.shape[2:]
    flipped = _as_flipped_convolution(g, w, channels, size, stride, padding, dilation, groups)
    if flipped is not None:
        return flipped
    if _by_images(g, (w.shape[0], channels // groups) + tuple(kernel), g.shape[2:], groups, bl):
        n = g.shape[0]
        gi = xp.empty((n, channels) + tuple(size), dtype=w.dtype)
        for i in range(n):   # (the columns of one image at a time: see _IMAGE_BY_IMAGE_BYTES)
            gi[i] = _conv_input_grad(g[i:i + 1], w, channels, size, stride, padding, dilation, groups, bl)[0]
        return gi
    if rows is None:
        rows = _rows(g, groups, bl)                                   # (g, O/g, L*N) or (N, g, O/g, L)
    if _row_shifted(len(kernel), stride, bl):
        return _fold_rows(rows, w, channels, size, padding, stride, dilation, groups, g.shape[2:], g.shape[0])
    wt = w.reshape(groups, w.shape[0] // groups, -1).transpose(0, 2, 1)           # (g, C/g*K, O/g)
    cols = _matmul(wt, rows)                                          # (g, C/g*K, L*N) or (N, g, C/g*K, L)
    return _col2im(cols, channels, g.shape[0], size, kernel, stride, padding, dilation, g.shape[2:], bl)


def _fold_rows(rows, w, channels, size, padding, stride, dilation, groups, grid, n):
    """:func:`_conv_input_grad` through row-shifted columns, the adjoint of the forward's: each kernel
    row's product W_k^T @ rows(g) is added onto its block of rows of the unfolded image, which then
    goes back onto the image with one strided add per offset of the other kernel axes (5 for a 5x5
    kernel, where col2im makes 25). LeNet's 6 -> 16 layer: 5.0 -> 3.7 ms (Zen 3, stop 27)."""
    kernel = w.shape[2:]
    o, kh = w.shape[0], kernel[0]
    full = [max(s + 2 * p, d * (k - 1) + st * (q - 1) + 1)
            for s, p, k, st, d, q in zip(size, padding, kernel, stride, dilation, grid)]
    rest = math.prod(kernel[1:])
    wk = w.reshape((groups, o // groups, channels // groups, kh, rest)).transpose(3, 0, 2, 4, 1)
    wk = ascontiguousarray(wk).reshape(kh, groups, channels // groups * rest, o // groups)   # (KH, g, C/g * KW.., O/g)
    block = math.prod(grid[1:]) * n
    du = _zeros_like(rows, (groups, wk.shape[2], full[0] * block))
    for k in range(kh):
        du[:, :, k * dilation[0] * block:(k * dilation[0] + grid[0]) * block] += _matmul(wk[k], rows)
    du = du.reshape((channels,) + tuple(kernel[1:]) + (full[0],) + tuple(grid[1:]) + (n,))
    img = _zeros_like(rows, (channels,) + tuple(full) + (n,))
    for offset in itertools.product(*[range(k) for k in kernel[1:]]):   # one strided add per offset
        target = tuple(slice(q * d, q * d + st * (m - 1) + 1, st)
                       for q, d, st, m in zip(offset, dilation[1:], stride[1:], grid[1:]))
        img[(slice(None), slice(None)) + target] += du[(slice(None),) + offset]
    if tuple(full) != tuple(size):
        img = img[(slice(None),) + tuple(slice(p, p + s) for p, s in zip(padding, size))]
    return _batch_first(img)


def _conv_weight_grad(g, x, wshape, stride, padding, dilation, groups, bl, rows=None):
    """The weight gradient sum over positions of rows(g) x cols(x)^T, shaped as the weight."""
    if _by_images(x, wshape, g.shape[2:], groups, bl):   # (summed image by image: see _IMAGE_BY_IMAGE_BYTES)
        gw_t = None
        for i in range(x.shape[0]):
            cols = _im2col(x[i:i + 1], wshape[2:], stride, padding, dilation, groups, bl)[0][0]  # (g, C/g*K, L)
            part = _matmul(cols, g[i].reshape(groups, wshape[0] // groups, -1).transpose(0, 2, 1))
            if gw_t is None:
                gw_t = part
            else:
                gw_t += part
        return ascontiguousarray(gw_t.transpose(0, 2, 1)).reshape(wshape)
    if _by_blocks(x, wshape, g.shape[2:], groups, bl):
        return _conv_weight_grad_by_blocks(g, x, wshape, stride, padding, dilation, groups)
    cols = _columns.take(x, (tuple(wshape), tuple(stride), tuple(padding), tuple(dilation), groups, bl))
    if _row_shifted(len(wshape) - 2, stride, bl):
        if cols is None:
            cols, _ = _unfold_rows(x, wshape[2:], stride, padding, dilation, groups)
        if rows is None:
            rows = _rows(g, groups, bl)                                          # (g, O/g, L*N)
        rows_t = rows.transpose(0, 2, 1)
        # per kernel row, (C/g * KW.., L*N) @ (L*N, O/g) -> (KH, g, C/g * KW.., O/g), then the weight's layout
        parts = None
        for k in range(wshape[2]):
            part = _matmul(_row_block(cols, k, dilation, g.shape[2:], g.shape[0]), rows_t)
            if parts is None:
                parts = _empty_like(part, (wshape[2],) + part.shape)
            parts[k] = part
        parts = parts.reshape((wshape[2], groups, wshape[1], math.prod(wshape[3:]), wshape[0] // groups))
        return ascontiguousarray(parts.transpose(1, 4, 2, 0, 3)).reshape(wshape)
    if cols is None:
        cols, _ = _im2col(x, wshape[2:], stride, padding, dilation, groups, bl)
    if rows is None:
        rows = _rows(g, groups, bl)
    if bl:                                                        # (g, C/g*K, L*N) and (g, O/g, L*N)
        gw_t = _matmul(cols, rows.transpose(0, 2, 1))                           # (g, C/g*K, O/g)
        return ascontiguousarray(gw_t.transpose(0, 2, 1)).reshape(wshape)
    return _sum_of_image_products(rows, cols).reshape(wshape)    # (N, g, O/g, L) and (N, g, C/g*K, L)


# The batch-first weight gradient's per-image products are summed in blocks of images whose products
# take at most this many bytes (so that a large batch of large weights does not hold them all at once).
_IMAGE_PRODUCTS_BYTES = 8 << 20


def _sum_of_image_products(rows, cols):
    """sum over images n of rows[n] @ cols[n]^T: (N, g, O/g, L) and (N, g, C/g*K, L) -> (g, O/g, C/g*K).

    One product per image (batched), then their sum: the single-product form would need both operands
    reordered to (g, rows, N*L) -- copies of grad_output and of the whole columns -- where each image's
    rows and columns are matrices already (LeNet's first layer: 1.4 ms -> 0.5 for its weight gradient)."""
    n = rows.shape[0]
    per_image = rows.itemsize * math.prod(rows.shape[1:3]) * cols.shape[2]
    block = max(1, _IMAGE_PRODUCTS_BYTES // per_image)
    total = None
    for i in range(0, n, block):
        part = sum_ends(_matmul(rows[i:i + block], cols[i:i + block].swapaxes(-1, -2)), 1)
        total = part if total is None else total + part
    return total


# ---- aten.convolution and aten.convolution_backward -------------------------------------------------------
def _check_conv(x, w, bias, stride, padding, dilation, transposed, output_padding, groups):
    """torch's argument checks, in its order and words."""
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if x.ndim != w.ndim:
        raise RuntimeError(f"Expected {w.ndim}-dimensional input for {w.ndim}-dimensional weight {list(w.shape)}, "
                           f"but got {x.ndim}-dimensional input of size {list(x.shape)} instead")
    if len(stride) != w.ndim - 2:
        raise RuntimeError(f"expected stride to be a single integer value or a list of {x.ndim - 2} values to match "
                           f"the convolution dimensions, but got stride={list(stride)}")
    if w.shape[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got "
                           f"weight of size {list(w.shape)} instead")
    if w.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size [{list(w.shape)}] instead")
    channels = w.shape[0] if transposed else w.shape[1] * groups
    if x.shape[1] != channels:
        kind = "transposed=1" if transposed else f"groups={groups}"
        raise RuntimeError(f"Given {kind}, weight of size {list(w.shape)}, expected input{list(x.shape)} to have "
                           f"{channels} channels, but got {x.shape[1]} channels instead")
    out_channels = w.shape[1] * groups if transposed else w.shape[0]
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != out_channels):
        raise RuntimeError(f"Given {'transposed=1, ' if transposed else ''}weight of size {list(w.shape)}, expected bias "
                           f"to be 1-dimensional with {out_channels} elements, but got bias of size {list(bias.shape)} "
                           f"instead")
    if x.dtype != w.dtype:
        raise RuntimeError(f"expected scalar type {_type_name(x.dtype)} but found {_type_name(w.dtype)}")
    if bias is not None and bias.dtype != x.dtype:
        raise RuntimeError(f"Input type ({_type_name(x.dtype).lower()}) and bias type ({_type_name(bias.dtype).lower()}) "
                           f"should be the same")
    if x.dtype == bool:
        raise kernel_not_implemented(f"slow_conv{w.ndim - 2}d_cpu", x.dtype)
    if transposed:
        _check_transposed(w, output_padding, stride, dilation, groups)
    else:
        padded = [s + 2 * p for s, p in zip(x.shape[2:], padding)]
        eff = [d * (k - 1) + 1 for k, d in zip(w.shape[2:], dilation)]
        if any(e > s for e, s in zip(eff, padded)):
            raise RuntimeError(f"Calculated padded input size per channel: ({_size_str(padded)}). Kernel size: "
                               f"({_size_str(eff)}). Kernel size can't be greater than actual input size")


def _check_transposed(w, output_padding, stride, dilation, groups):
    """torch's checks of a transposed convolution's output padding and weight, in its words: those of its
    slow 2-d and 3-d kernels (a 1-d one runs as 2-d, its height dim of size 1; with groups, each group's
    weight is checked: the messages show them so).
    A weight with no elements (no out-channels, or an empty kernel) is refused: torch's oneDNN path
    fails there too, with a message of its own ("could not create a primitive descriptor")."""
    dims = ("depth", "height", "width") if w.ndim == 5 else ("height", "width")
    lead = 1 if w.ndim == 3 else 0      # (1-d: the height dim torch adds)
    output_padding, stride, dilation = (0,) * lead + tuple(output_padding), (1,) * lead + tuple(stride), \
        (1,) * lead + tuple(dilation)
    if any(o >= s and o >= d for o, s, d in zip(output_padding, stride, dilation)):
        values = " ".join(f"{what}_{dim}: {v}" for what, vs in (("output_padding", output_padding),
                                                                  ("stride", stride), ("dilation", dilation))
                          for dim, v in zip(dims, vs))
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got {values}")
    shape = [w.shape[0] // groups, w.shape[1]] + [1] * lead + list(w.shape[2:])
    if w.ndim == 5:
        if w.size == 0:
            raise RuntimeError("non-empty 5D (n_output_plane x n_input_plane x kernel_depth x kernel_height x "
                               f"kernel_width) tensor expected for weight, but got: {shape}")
        return
    if 0 in shape[2:]:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: {shape[2]} "
                           f"kernel_width: {shape[3]}")
    if w.size == 0:
        raise RuntimeError(f"non-empty 2D or 4D weight tensor expected, but got: {shape}")


def _transposed_size(size, kernel, stride, padding, dilation, output_padding):
    return [(s - 1) * st - 2 * p + d * (k - 1) + op + 1
            for s, st, p, d, k, op in zip(size, stride, padding, dilation, kernel, output_padding)]


def _convolution_kernel(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    _check_conv(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
    kernel = weight.shape[2:]
    if not transposed and input.shape[1] == 0:
        # torch's "Empty" backend: no in-channels give an empty result with the *input's* channel count,
        # (N, 0, *grid), not (N, O, *grid) of bias values (torch 2.13, checked against it)
        return _zeros_like(input, (input.shape[0], 0) + tuple(_out_size(input.shape[2:], kernel, stride, padding,
                                                                          dilation)))
    if not transposed:
        bl = _batch_last_layout(_out_size(input.shape[2:], kernel, stride, padding, dilation), stride)
        return _conv_forward(input, weight, stride, padding, dilation, groups, bl, keep=_grad_state.enabled,
                             bias=bias)
    else:
        size = _transposed_size(input.shape[2:], kernel, stride, padding, dilation, output_padding)
        y = _conv_input_grad(input, weight, weight.shape[1] * groups, size, stride, padding, dilation, groups,
                             _batch_last_layout(input.shape[2:], stride))
    if bias is not None:
        y += bias.reshape((-1,) + (1,) * len(kernel))
    return y


def _convolution_backward_kernel(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                                 output_padding, groups, output_mask):
    """(input gradient, weight gradient, bias gradient), each only if ``output_mask`` asks (else None)."""
    g = grad_output if grad_output.dtype == weight.dtype else grad_output.astype(weight.dtype)
    need_input, need_weight, need_bias = output_mask
    gi = gw = gb = None
    if not transposed and input.shape[1] == 0:   # (the forward's empty result: see _convolution_kernel)
        return (_zeros_like(input, input.shape) if need_input else None,
                _zeros_like(weight, weight.shape) if need_weight else None,
                _zeros_like(weight, tuple(bias_sizes)) if need_bias else None)
    if need_bias:
        gb = sum_ends(g, 1, g.ndim - 2)                 # (all but the channels: see there)
    if not transposed:   # y = conv(x, W): the gradients are its two adjoints
        bl = _batch_last_layout(g.shape[2:], stride)
        shared = (need_weight or need_input) and not _by_images(input, weight.shape, g.shape[2:], groups, bl)
        rows = _rows(g, groups, bl) if shared else None      # shared by both products (not made image by image)
        if need_weight:
            gw = _conv_weight_grad(g, input, weight.shape, stride, padding, dilation, groups, bl, rows)
        if need_input:
            gi = _conv_input_grad(g, weight, input.shape[1], input.shape[2:], stride, padding, dilation, groups, bl,
                                  rows)
    else:                # y = conv_input_grad(x, W): its adjoints are the convolution and the weight gradient
        bl = _batch_last_layout(input.shape[2:], stride)
        if any(output_padding):
            # rows that output_padding added and no window reaches depend on nothing; with stride 1 they
            # would make one window too many
            reach = [n * st - 2 * p + d * (k - 1)
                     for n, st, p, d, k in zip(input.shape[2:], stride, padding, dilation, weight.shape[2:])]
            g = g[(slice(None), slice(None)) + tuple(slice(0, r) for r in reach)]
        if need_weight:
            gw = _conv_weight_grad(input, g, weight.shape, stride, padding, dilation, groups, bl)
        if need_input:
            gi = _conv_forward(g, weight, stride, padding, dilation, groups, bl)
    return gi, gw, gb


def _convolution_derivative(grad, input, weight, stride, padding, dilation, transposed, output_padding, groups,
                            output_mask):
    """derivatives.yaml: input, weight, bias: convolution_backward(grad, input, weight, bias->sizes(), ...,
    grad_input_mask). The bias's size is the out-channel count (not the gradient's channel count, which
    is 0 for a convolution with no in-channels)."""
    out_channels = weight.shape[1] * groups if transposed else weight.shape[0]
    return aten.convolution_backward(grad, input, weight, [out_channels] if output_mask[2] else None, stride,
                                     padding, dilation, transposed, output_padding, groups, list(output_mask))


def _cat(parts, dim):
    """cat on arrays or Tensors (``cat`` is not an aten op of glasstorch yet: its public function)."""
    if isinstance(parts[0], _ops._ARRAY_TYPES):
        return xp.concatenate(parts, axis=dim)
    from .joining import cat
    return cat(parts, dim)


def _convolution_double_backward(grads, grad_output, input, weight, stride, padding, dilation, transposed,
                                 output_padding, groups, output_mask):
    """torch's _convolution_double_backward, call for call (so dispatch-level tools see the same
    convolutions). With ggI, ggW, ggb the gradients flowing into convolution_backward's outputs:

    * grad_output: ggO = conv(ggI, W) + conv(x, ggW) + ggb -- the forward, applied to each;
    * weight: gW = conv(ggI^T, gO^T)^T -- batch and channels swapped, stride and dilation trading
      places (one convolution per group), cut to the kernel's size;
    * input: gI = conv_transpose(gO, ggW) (conv(gO, ggW) for a transposed convolution), with the
      output padding that gives back the input's size.
    """
    gg_input, gg_weight, gg_bias = grads
    nd = weight.ndim - 2
    empty = math.prod(input.shape) == 0
    g_grad_output = g_input = g_weight = None
    if not empty:
        if gg_input is not None:
            g_grad_output = aten.convolution(gg_input, weight, None, stride, padding, dilation, transposed,
                                             output_padding, groups)
        if gg_weight is not None:
            term = aten.convolution(input, gg_weight, None, stride, padding, dilation, transposed, output_padding,
                                    groups)
            g_grad_output = term if g_grad_output is None else g_grad_output + term
    if gg_bias is not None:
        b = aten.expand(gg_bias.reshape((1, -1) + (1,) * nd), list(grad_output.shape))
        g_grad_output = b if g_grad_output is None else g_grad_output + b
    if gg_input is not None and not empty:
        # the weight gradient as a convolution over the batch: stride and dilation swap roles
        go_t, gi_t = aten.transpose.int(grad_output, 0, 1), aten.transpose.int(gg_input, 0, 1)
        zeros = [0] * nd
        parts = []
        for g in range(groups):
            a, b = (_group_slice(go_t, g, groups), _group_slice(gi_t, g, groups)) if transposed else \
                (_group_slice(gi_t, g, groups), _group_slice(go_t, g, groups))
            parts.append(aten.convolution(a, b, None, dilation, padding, stride, False, zeros, 1))
        g_weight = aten.transpose.int(parts[0] if groups == 1 else _cat(parts, 1), 0, 1)
        if tuple(g_weight.shape[2:]) != tuple(weight.shape[2:]):
            g_weight = g_weight[(slice(None), slice(None)) + tuple(slice(0, k) for k in weight.shape[2:])]
    if gg_weight is not None and not empty:
        if transposed:
            g_input = aten.convolution(grad_output, gg_weight, None, stride, padding, dilation, False, output_padding,
                                       groups)
            if tuple(g_input.shape[2:]) != tuple(input.shape[2:]):
                g_input = g_input[(slice(None), slice(None)) + tuple(slice(0, s) for s in input.shape[2:])]
        else:
            expected = [(k - 1) * d - 2 * p + st * (o - 1) + 1 for k, d, p, st, o in
                        zip(weight.shape[2:], dilation, padding, stride, grad_output.shape[2:])]
            out_pad = [s - e for s, e in zip(input.shape[2:], expected)]
            g_input = aten.convolution(grad_output, gg_weight, None, stride, padding, dilation, True, out_pad, groups)
    return g_grad_output, g_input, g_weight


def _group_slice(t, g, groups):
    """The g-th of ``groups`` equal slices of t along dim 0 (torch's subvariable)."""
    n = t.shape[0] // groups
    return t[n * g:n * (g + 1)]


convolution_op = defop(
    "convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, "
    "bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor",
    _convolution_kernel, node="ConvolutionBackward0",
    joint={("input", "weight", "bias"): _convolution_derivative})
convolution_backward_op = defop(
    "convolution_backward(Tensor grad_output, Tensor input, Tensor weight, SymInt[]? bias_sizes, SymInt[] stride, "
    "SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups, "
    "bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
    _convolution_backward_kernel, node="ConvolutionBackwardBackward0",
    joint={("grad_output", "input", "weight"): _convolution_double_backward})


@overridable
def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """torch.convolution on batched input (N, C, *spatial): every conv layer ends up here."""
    return convolution_op(input, weight, bias, list(stride), list(padding), list(dilation), bool(transposed),
                          list(output_padding), int(groups))


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
    out = convolution_op(input, weight, bias, list(stride), list(_ntuple(padding, nd)), list(dilation), False,
                         [0] * nd, int(groups))
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


@overridable
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv_nd(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


@overridable
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv_nd(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


@overridable
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv_nd(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def _conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups, dilation, nd, name):
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got input of "
                           f"size: {list(input.shape)}")
    unbatched = input.dim() == nd + 1
    if unbatched:
        input = input.unsqueeze(0)
    out = convolution_op(input, weight, bias, list(_ntuple(stride, nd)), list(_ntuple(padding, nd)),
                         list(_ntuple(dilation, nd)), True, list(_ntuple(output_padding, nd)), int(groups))
    return out.squeeze(0) if unbatched else out


@overridable
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups, dilation, 1,
                              "conv_transpose1d")


@overridable
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups, dilation, 2,
                              "conv_transpose2d")


@overridable
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups, dilation, 3,
                              "conv_transpose3d")


# ---- unfold / fold: im2col and col2im as ops of their own (F.unfold, F.fold) ------------------------------
def _im2col_kernel(self, kernel_size, dilation, padding, stride):
    if self.ndim not in (3, 4) or 0 in self.shape[-3:]:
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {list(self.shape)}")
    x = self if self.ndim == 4 else self[None]
    cols, _ = _im2col(x, kernel_size, stride, padding, dilation, 1, False)      # (N, 1, C*K, L), batch first
    y = cols[:, 0]                                                                  # (N, C*K, L)
    if xp.may_share_memory(y, x):   # (a 1x1 kernel's columns are the input itself, viewed)
        y = y.copy()
    return y if self.ndim == 4 else y[0]


def _col2im_kernel(self, output_size, kernel_size, dilation, padding, stride):
    if self.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {list(self.shape)}")
    cols = self if self.ndim == 3 else self[None]
    n, ck, length = cols.shape
    k = math.prod(kernel_size)
    if ck % k:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={ck} and kernel_size=({kernel_size[0]}, {kernel_size[1]})")
    grid = _out_size(output_size, kernel_size, stride, padding, dilation)
    if grid[0] * grid[1] != length:
        raise RuntimeError(
            f"Given output_size=({output_size[0]}, {output_size[1]}), kernel_size=({kernel_size[0]}, "
            f"{kernel_size[1]}), dilation=({dilation[0]}, {dilation[1]}), padding=({padding[0]}, {padding[1]}), "
            f"stride=({stride[0]}, {stride[1]}), expected size of input's dimension 2 to match the calculated number "
            f"of sliding blocks {grid[0]} * {grid[1]} = {grid[0] * grid[1]}, but got input.size(2)={length}.")
    y = _col2im(cols, ck // k, n, output_size, kernel_size, stride, padding, dilation, grid, False)
    return y if self.ndim == 3 else y[0]


im2col_op = defop("im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor",
                  _im2col_kernel, node="Im2ColBackward0",
                  self=lambda grad, self_sizes, kernel_size, dilation, padding, stride:
                  aten.col2im(grad, list(self_sizes[-2:]), kernel_size, dilation, padding, stride))
col2im_op = defop("col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, int[2] padding, "
                  "int[2] stride) -> Tensor",
                  _col2im_kernel, node="Col2ImBackward0",
                  self=lambda grad, kernel_size, dilation, padding, stride:
                  aten.im2col(grad, kernel_size, dilation, padding, stride))


@overridable
def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding blocks of a (N, C, H, W) image as columns: (N, C * kh * kw, L)."""
    if input.dim() not in (3, 4):
        raise NotImplementedError(f"Input Error: Only 3D or 4D input Tensors are supported (got {input.dim()}D)")
    return im2col_op(input, list(_ntuple(kernel_size, 2)), list(_ntuple(dilation, 2)), list(_ntuple(padding, 2)),
                     list(_ntuple(stride, 2)))


@overridable
def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """The adjoint of unfold: sum the columns (N, C * kh * kw, L) back into a (N, C, H, W) image."""
    if input.dim() not in (2, 3):
        raise NotImplementedError(f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported "
                                  f"(got {input.dim()}D)")
    return col2im_op(input, list(_ntuple(output_size, 2)), list(_ntuple(kernel_size, 2)), list(_ntuple(dilation, 2)),
                     list(_ntuple(padding, 2)), list(_ntuple(stride, 2)))


# ---- bilinear: y = x1^T W x2 + b (torch's _trilinear) ---------------------------------------------------
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _trilinear_kernel(i1, i2, i3, expand1, expand2, expand3, sumdim, unroll_dim=1):
    """Each input, unsqueezed at its ``expand`` dims to a common rank, multiplied together and summed
    over ``sumdim``: one einsum (which NumPy turns into matrix products)."""
    rank = i1.ndim + len(expand1)
    spec = [[_LETTERS[d] for d in range(rank) if d not in expand] for expand in (expand1, expand2, expand3)]
    out = "".join(_LETTERS[d] for d in range(rank) if d not in sumdim)
    y = xp.einsum(f"{''.join(spec[0])},{''.join(spec[1])},{''.join(spec[2])}->{out}", i1, i2, i3, optimize=True)
    return ascontiguousarray(y)


def _trilinear_derivative(grad, i1, i2, i3, expand1, expand2, expand3, sumdim, output_mask):
    """torch's _trilinear_backward: each input's gradient is the same product with the gradient in its
    place (the gradient lives on the dims not summed; the input's own expanded dims are summed)."""
    g1 = aten._trilinear(grad, i2, i3, sumdim, expand2, expand3, expand1) if output_mask[0] else None
    g2 = aten._trilinear(i1, grad, i3, expand1, sumdim, expand3, expand2) if output_mask[1] else None
    g3 = aten._trilinear(i1, i2, grad, expand1, expand2, sumdim, expand3) if output_mask[2] else None
    return g1, g2, g3


trilinear_op = defop("_trilinear(Tensor i1, Tensor i2, Tensor i3, int[] expand1, int[] expand2, int[] expand3, "
                     "int[] sumdim, int unroll_dim=1) -> Tensor",
                     _trilinear_kernel, node="TrilinearBackward0",
                     joint={("i1", "i2", "i3"): _trilinear_derivative})


@overridable
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
    y = trilinear_op(input1.reshape(-1, input1.shape[-1]), weight, input2.reshape(-1, input2.shape[-1]),
                     [1, 3], [0], [1, 2], [2, 3])
    y = y.view(lead + (weight.shape[0],))
    return y if bias is None else y + bias


# ---- embedding: rows of a table --------------------------------------------------------------------------
def _embedding_kernel(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    if indices.dtype.kind not in "iu":
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got torch.{_type_name(indices.dtype)}Tensor instead (while checking "
                           f"arguments for embedding)")
    if indices.size and has_values(indices) and (indices.max() >= weight.shape[0] or indices.min() < 0):
        raise IndexError("index out of range in self")
    return xp.take(weight, indices, axis=0)


def _embedding_dense_backward_kernel(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    """The rows' gradients summed into a zero table; padding_idx's row gets none."""
    dim = grad_output.shape[-1]
    g = grad_output.reshape(-1, dim)
    flat = indices.reshape(-1)
    if scale_grad_by_freq:
        counts = xp.bincount(flat, minlength=num_weights)
        g = g / counts[flat].astype(g.dtype)[:, None]
    out = _zeros_like(grad_output, (num_weights, dim))
    xp.add.at(out, flat, g)
    if padding_idx >= 0:
        out[padding_idx] = 0
    return out


def _embedding_dense_double_backward(grad, indices, padding_idx):
    """The rows of ``grad`` looked up again, padding_idx's positions zeroed."""
    rows = aten.embedding(grad, indices)
    if padding_idx >= 0:
        rows = rows * (indices != padding_idx).reshape(tuple(indices.shape) + (1,))
    return rows


embedding_op = defop("embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, "
                     "bool sparse=False) -> Tensor",
                     _embedding_kernel, node="EmbeddingBackward0", indices=None,
                     weight=lambda grad, weight_sizes, indices, padding_idx, scale_grad_by_freq:
                     aten.embedding_dense_backward(grad, indices, weight_sizes[0], padding_idx, scale_grad_by_freq))
embedding_dense_backward_op = defop(
    "embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, SymInt padding_idx, "
    "bool scale_grad_by_freq) -> Tensor",
    _embedding_dense_backward_kernel, node="EmbeddingDenseBackwardBackward0", indices=None,
    grad_output=lambda grad, indices, padding_idx: _embedding_dense_double_backward(grad, indices, padding_idx))


@overridable
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    """weight[input]: a lookup of rows; the gradient of padding_idx's row stays zero."""
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    num = weight.shape[0]
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < num, "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -num, "Padding_idx must be within num_embeddings"
            padding_idx = num + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        _renorm_rows(weight, input._data, max_norm, norm_type)
    return embedding_op(weight, input, padding_idx, scale_grad_by_freq, sparse)


def _renorm_rows(weight, idx, max_norm, norm_type):
    """max_norm: rescale (in place, outside autograd) the looked-up rows whose norm exceeds it."""
    w = weight._data
    rows = xp.unique(idx.reshape(-1))
    norms = xp.linalg.norm(w[rows].astype("float64"), ord=norm_type, axis=1)
    scale = xp.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
    w[rows] = (w[rows] * scale[:, None]).astype(w.dtype)
    from .._tensor import bump_version
    bump_version(weight, "embedding_renorm_")


# ---- embedding_bag: sums, means or maxima of bags of rows -----------------------------------------------------
_BAG_MODES = {"sum": 0, "mean": 1, "max": 2}


def _bag_layout(indices, offsets, include_last_offset):
    """(number of bags, offset2bag: each index's bag), with torch's checks of the offsets."""
    n = indices.shape[0]
    if offsets.shape[0] and int(offsets[0]) != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {int(offsets[0])}")
    if offsets.shape[0] and int(offsets[-1]) > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got offsets[-1] of "
                           f"{int(offsets[-1])}")
    starts = offsets[:-1] if include_last_offset else offsets
    if starts.shape[0] > 1 and (xp.diff(starts) < 0).any():
        raise RuntimeError("offsets must be non-decreasing (glasstorch: torch's kernel then reads out of bounds)")
    offset2bag = (xp.searchsorted(starts, _arange_like(starts, n), side="right") - 1).astype("int64")
    return starts.shape[0], offset2bag


def _embedding_bag_kernel(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                          per_sample_weights=None, include_last_offset=False, padding_idx=-1):
    if indices.dtype.kind not in "iu":
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got torch.{_type_name(indices.dtype)}Tensor instead (while checking "
                           f"arguments for embedding_bag)")
    num_weights, dim = weight.shape
    bad = xp.nonzero((indices < 0) | (indices >= num_weights))[0]
    if bad.size:
        raise RuntimeError(f"Index {int(bad[0])} of input takes value {int(indices[bad[0]])} which is not in the valid "
                           f"range [0, {num_weights})")
    bags, offset2bag = _bag_layout(indices, offsets, include_last_offset)
    keep = indices != padding_idx
    rows = xp.take(weight, indices, axis=0)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights[:, None]
    counts = xp.bincount(offset2bag[keep], minlength=bags).astype("int64")
    out = _zeros_like(weight, (bags, dim))
    if mode == 2:
        max_indices = _zeros_like(indices, (bags, dim), "int64")
        for b in range(bags):
            members = xp.nonzero((offset2bag == b) & keep)[0]
            if members.size:
                best = members[xp.argmax(rows[members], axis=0)]      # (the first maximum, as torch's loop)
                out[b] = rows[best, _arange_like(rows, dim)]
                max_indices[b] = indices[best]
        return out, offset2bag, counts, max_indices
    xp.add.at(out, offset2bag[keep], rows[keep])
    if mode == 1:
        out /= xp.maximum(counts, 1)[:, None].astype(out.dtype)
        return out, offset2bag, counts, counts.copy()
    zeros = _zeros_like(indices, bags, "int64")
    return out, offset2bag, zeros, zeros.copy()


def _embedding_bag_backward_kernel(grad, indices, offsets, offset2bag, bag_size, maximum_indices, num_weights,
                                   scale_grad_by_freq, mode, sparse, per_sample_weights, padding_idx=-1):
    """The gradient of the table: each looked-up row gets its bag's gradient (divided by the bag's size
    for mean, times its weight with per_sample_weights); for max, only the rows that were the maximum."""
    dim = grad.shape[1]
    out = _zeros_like(grad, (num_weights, dim))
    if mode == 2:
        nonempty = bag_size > 0
        cols = xp.broadcast_to(_arange_like(maximum_indices, dim), maximum_indices.shape)
        xp.add.at(out, (maximum_indices[nonempty], cols[nonempty]), grad[nonempty])
    else:
        keep = indices != padding_idx
        g = grad[offset2bag]
        if mode == 1:
            g = g / xp.maximum(bag_size, 1)[offset2bag][:, None].astype(g.dtype)
        if per_sample_weights is not None:
            g = g * per_sample_weights[:, None]
        if scale_grad_by_freq:
            g = g * _bag_frequency_scale(indices, num_weights)[indices][:, None].astype(g.dtype)
        xp.add.at(out, indices[keep], g[keep])
    return out


def _bag_frequency_scale(indices, num_weights):
    """The factor scale_grad_by_freq gives each row, as torch's CPU kernel computes it: the k-th
    distinct index (in sorted order) is divided by the count of the k-th entry of the *sorted
    indices* -- not by its own count (``counts[indices_data[i]]`` in
    ``_embedding_bag_dense_backward_cpu_sum_mean``, i the distinct index's number). For indices
    [5, 4, 3, 3, 3] every row is divided by 3. torch is the specification: glasstorch follows it."""
    counts = xp.bincount(indices, minlength=num_weights)
    ordered = xp.sort(indices)
    distinct = xp.unique(ordered)
    scale = _full_like(counts, 1.0, num_weights, "float64")
    scale[distinct] = 1.0 / counts[ordered[:distinct.shape[0]]]
    return scale


def _embedding_bag_per_sample_weights_backward_kernel(grad, weight, indices, offsets, offset2bag, mode,
                                                      padding_idx=-1):
    if mode != 0:
        raise NotImplementedError("embedding_bag_backward: per_sample_weights only supported for mode='sum'")
    result = (grad[offset2bag] * xp.take(weight, indices, axis=0)).sum(axis=1)
    result[indices == padding_idx] = 0
    return result


embedding_bag_op = defop(
    "_embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0, "
    "bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False, int padding_idx=-1) -> "
    "(Tensor, Tensor, Tensor, Tensor)", _embedding_bag_kernel, node="EmbeddingBagBackward0",
    output_differentiability=(True, False, False, False), indices=None, offsets=None,
    weight=lambda grad, indices, offsets, result1, result2, result3, weight_sizes, scale_grad_by_freq, mode, sparse,
    per_sample_weights, padding_idx: aten._embedding_bag_backward(
        grad, indices, offsets, result1, result2, result3, weight_sizes[0], scale_grad_by_freq, mode, sparse,
        per_sample_weights, padding_idx),
    per_sample_weights=lambda grad, weight, indices, offsets, result1, mode, padding_idx:
    aten._embedding_bag_per_sample_weights_backward(grad, weight, indices, offsets, result1, mode, padding_idx))
embedding_bag_backward_op = defop(
    "_embedding_bag_backward(Tensor grad, Tensor indices, Tensor offsets, Tensor offset2bag, Tensor bag_size, "
    "Tensor maximum_indices, SymInt num_weights, bool scale_grad_by_freq, int mode, bool sparse, "
    "Tensor? per_sample_weights, int padding_idx=-1) -> Tensor", _embedding_bag_backward_kernel,
    node="EmbeddingBagBackwardBackward0", indices=None, offsets=None, offset2bag=None, bag_size=None,
    maximum_indices=None, grad=not_implemented("_embedding_bag_backward"),
    per_sample_weights=not_implemented("_embedding_bag_backward"))
embedding_bag_per_sample_weights_backward_op = defop(
    "_embedding_bag_per_sample_weights_backward(Tensor grad, Tensor weight, Tensor indices, Tensor offsets, "
    "Tensor offset2bag, int mode, int padding_idx=-1) -> Tensor", _embedding_bag_per_sample_weights_backward_kernel,
    node="EmbeddingBagPerSampleWeightsBackwardBackward0", indices=None, offsets=None, offset2bag=None,
    grad=not_implemented("_embedding_bag_per_sample_weights_backward"),
    weight=not_implemented("_embedding_bag_per_sample_weights_backward"))


@overridable
def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """The sums, means or maxima of bags of rows of ``weight``: a 2-D ``input`` (B, N) is B bags of N
    indices; a 1-D one is cut into bags at ``offsets`` (the start of each; with
    ``include_last_offset`` the last entry is the end of the last bag). ``per_sample_weights``
    (mode "sum") weights each looked-up row. An empty bag gives zeros; ``padding_idx``'s rows are
    left out (not counted in a mean)."""
    if weight.dtype is _dtype.int64 and input.is_floating_point():   # (torch accepts the arguments swapped, and warns)
        import warnings
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, "
                      "input, ...)` is deprecated, and should now be `embedding_bag(input, weight, ...)`.",
                      stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it must "
                         f"have the same shape as the input ({input.shape})")
    if not weight.dim() == 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            type_str = str(type(offsets)).replace("glasstorch._tensor.Tensor", "torch.Tensor")
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type_str}")
        from .creation import arange
        offsets = arange(0, input.numel(), input.size(1), dtype=input.dtype, device=input.device)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode not in _BAG_MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if max_norm is not None:
        _renorm_rows(weight, input._data, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  f"GitHub.")
    num = weight.shape[0]
    if padding_idx is None:
        padding_idx = -1
    elif not -num <= padding_idx < num:
        raise RuntimeError(f"padding_idx must be within the number of embeddings, -{num} through {num - 1}, but got "
                           f"{padding_idx}")
    elif padding_idx < 0:
        padding_idx += num
    return embedding_bag_op(weight, input, offsets, scale_grad_by_freq, _BAG_MODES[mode], sparse, per_sample_weights,
                            include_last_offset, padding_idx)[0]


@_checks.allocates
def one_hot(tensor, num_classes=-1):
    """(..., ) class indices -> (..., num_classes) int64 rows with a single 1 (no derivative)."""
    if seam.on:
        return seam.torch_function(one_hot, (tensor, num_classes), {})
    d = tensor._data
    if d.dtype != xp.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if d.size and d.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = int(d.max()) + 1 if d.size else 0
    elif d.size and d.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    from .._tensor import _wrap
    from .._array import namespace, device_type_of
    # the int64 result first, then one 1 a row: no (..., num_classes) comparison array in between
    # (it cost a bool array as large, and NumPy 1.23 answers a comparison it cannot allocate with False)
    out = namespace(device_type_of(d)).zeros(d.shape + (num_classes,), xp.int64)
    xp.put_along_axis(out, d[..., None], 1, axis=-1)
    return _wrap(out)
