r"""Recurrent layers: the cells as compositions of ops, and whole sequences as one fused op.

**Cells** (``lstm_cell``, ``gru_cell``, ``rnn_tanh_cell``, ``rnn_relu_cell``; what ``nn.LSTMCell``
and friends call) are written with ordinary Tensor ops, exactly as torch's ``RNN.cpp`` composes
them, so their graphs show torch's nodes (``MulBackward0``, ``SigmoidBackward0``...).

**Networks** (``lstm``, ``gru``, ``rnn_tanh``, ``rnn_relu``: torch's ``_VF`` functions, public as
``torch.lstm``... and what ``nn.LSTM``/``nn.GRU``/``nn.RNN`` call, so a TorchFunctionMode sees what
it sees in torch) run their layers and directions through ``rnn_layer``.

**Sequences** (``rnn_layer``, once per layer and direction) run as ONE aten op, ``mkldnn_rnn_layer`` -- torch's fused CPU LSTM layer, whose node is
``MkldnnRnnLayerBackward0`` -- with a hand-written backpropagation through time,
``mkldnn_rnn_layer_backward``. Recording a dozen small nodes per time step would cost more in
Python than the arithmetic itself. The work is arranged so that most of it is a few large matrix
products, and no Tensor is made per step::

    forward                                          backward (BPTT)
    XW  = X W_ih^T + b           one GEMM, all steps
    for t = 0 .. T-1:                                for t = T-1 .. 0:
        G_t = XW_t + h_{t-1} W_hh^T   one GEMM           dG_t      = cell'(dh_t, dc_t)   (elementwise)
        h_t, c_t = cell(G_t, c_{t-1})   (elementwise)    dh_{t-1}  = dG_t W_hh           one GEMM
                                                     dX    = dG W_ih                  one GEMM, all steps
                                                     [dW_hh | dW_ih | db] = dG^T Z    one GEMM, all steps

(for the LSTM, G holds all four gates side by side: one product per step, not four; Z's rows are
[h_{t-1} | x_t | 1], so that the three weight gradients are one product, and where the BLAS makes thin
products faster in small blocks, a narrow input's step product is Z_t [W_hh | W_ih | b]^T with no
XW at all: see _step_preactivations). What the backward reads -- every step's gate activations,
Z, previous states, tanh(c) -- is the op's fourth output, ``workspace``, one flat array, as torch's is.

glasstorch uses the same op for the GRU, the plain RNN (``mode``: 0 RNN_RELU, 1 RNN_TANH, 2 LSTM,
3 GRU, cuDNN's numbering, as torch's argument) and the LSTM with ``proj_size`` (its ``w_hr``, a
keyword argument torch's op does not have); torch composes those from cells (README: "Where
glasstorch differs").

The same loops serve packed sequences (``nn.utils.rnn.PackedSequence``): the input is then the
``(sum(batch_sizes), input_size)`` rows of all time steps, step ``t`` covering ``batch_sizes[t]``
rows, the longest sequences first. Only the first ``batch_sizes[t]`` rows of the state take part
in step ``t``; the others keep their value, so each sequence's final state is the one after its
own last step, in both directions, with no special case.

Higher-order gradients (``create_graph=True``) recompute the layer with the cells above and
differentiate that (torch's ``mkldnn_rnn_layer_differentiable_backward`` does the same), so the
fused node is an optimisation, never a restriction.

    >>> import glasstorch as torch
    >>> from glasstorch.ops.nn_rnn import rnn_layer
    >>> x = torch.randn(5, 2, 3)                                  # (steps, batch, features)
    >>> w_ih, w_hh = torch.randn(16, 3, requires_grad=True), torch.randn(16, 4, requires_grad=True)
    >>> out, h_n, c_n = rnn_layer("LSTM", x, None, None, (w_ih, w_hh, None, None, None))
    >>> out.shape, out.grad_fn.name(), h_n.grad_fn is out.grad_fn
    (torch.Size([5, 2, 4]), 'MkldnnRnnLayerBackward0', True)
"""
import math

from .._tensor import Tensor, _wrap
from ..autograd import grad_mode
from .._array import xp, on_device_of as _on_device_of, full_like, empty_like, sum_ends, threads as _blas
from .._seam import overridable
from .._ops import defop, aten, node_classes_of
from . import joining, linalg

__getattr__ = node_classes_of(__name__)    # (the node classes declared here, by name: TanhBackward0)

__all__ = ["lstm", "gru", "rnn_tanh", "rnn_relu", "rnn_layer", "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell"]  # + the packing ops at the end

GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
MODES = {"RNN_RELU": 0, "RNN_TANH": 1, "LSTM": 2, "GRU": 3}     # mkldnn_rnn_layer's `mode` (cuDNN's numbers)
_MODE_NAMES = {v: k for k, v in MODES.items()}


# ---- cells: compositions of ops -----------------------------------------------------------
def _linear(x, w, b):
    """x W^T + b, recorded as nn.Linear records it (AddmmBackward0, or MmBackward0 without bias)."""
    return linalg.mm(x, w.t()) if b is None else linalg.addmm(b, x, w.t())


@overridable
def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    r"""One LSTM step; ``hx = (h, c)``; returns ``(h', c')``. Gate order i, f, g, o (torch's).

    .. math::
        i, f, g, o = \sigma, \sigma, \tanh, \sigma\,(x W_{ih}^T + b_{ih} + h W_{hh}^T + b_{hh})
        \qquad c' = f c + i g \qquad h' = o \tanh(c')
    """
    h, c = hx
    gates = _linear(h, w_hh, b_hh) + _linear(input, w_ih, b_ih)  # hh first, as ATen adds them
    i, f, g, o = gates.chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    c = f * c + i * g
    return o * c.tanh(), c


@overridable
def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    r"""One GRU step; gate order r, z, n (torch's); the reset gate scales ``h W_hn^T + b_hn``.

    .. math::
        r = \sigma(x W_{ir}^T + b_{ir} + h W_{hr}^T + b_{hr}) \quad
        z = \sigma(\dots) \quad n = \tanh(x W_{in}^T + b_{in} + r (h W_{hn}^T + b_{hn})) \quad
        h' = (h - n) z + n
    """
    xr, xz, xn = _linear(input, w_ih, b_ih).chunk(3, 1)
    hr, hz, hn = _linear(hx, w_hh, b_hh).chunk(3, 1)
    r = (hr + xr).sigmoid()
    z = (hz + xz).sigmoid()
    n = (xn + hn * r).tanh()
    return (hx - n) * z + n


@overridable
def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    r""":math:`h' = \tanh(x W_{ih}^T + b_{ih} + h W_{hh}^T + b_{hh})`"""
    return (_linear(hx, w_hh, b_hh) + _linear(input, w_ih, b_ih)).tanh()


@overridable
def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    r""":math:`h' = \max(0, x W_{ih}^T + b_{ih} + h W_{hh}^T + b_{hh})`"""
    return (_linear(hx, w_hh, b_hh) + _linear(input, w_ih, b_ih)).relu()


# ---- the time steps ------------------------------------------------------------------------
def _steps(input_shape, batch_sizes, reverse):
    """(first row, rows) of every time step in the flattened input, in the order they run;
    ``batch_sizes`` empty for a padded (T, B, *) input."""
    if not len(batch_sizes):
        T, B = input_shape[0], input_shape[1]
        steps = [(t * B, B) for t in range(T)]
    else:
        steps, row = [], 0
        for bs in batch_sizes:
            steps.append((row, int(bs)))
            row += int(bs)
    return steps[::-1] if reverse else steps


def _empty(like, shape):
    """An uninitialised array of ``like``'s dtype and device (NumPy or CuPy)."""
    return xp.empty_like(like, shape=shape)


def _aligned_copy(a):
    """A copy of ``a`` (row-major) starting on a 64-byte boundary (see :func:`_aligned_empty`)."""
    out = _aligned_empty(a, a.shape)
    out[...] = a
    return out


def _aligned_empty(like, shape):
    """:func:`_empty` starting on a 64-byte boundary (NumPy's own arrays start on 16): the step products'
    column blocks are multiples of 64 bytes from their arrays' starts (_product_blocks), and AVX-512 loads
    that cross a cache line cost more. LSTM(28, 256)'s forward and backward at batch 32, the workspace, the
    folded weight, dG and the backward's copy of W_hh aligned against NumPy's placement, alternated in one
    process: 3-5% less time (stop 35)."""
    if type(like) is not xp.ndarray:
        return _empty(like, shape)
    n = math.prod(shape)
    extra = 64 // like.itemsize
    flat = xp.empty(n + extra, like.dtype)
    start = (-flat.ctypes.data % 64) // like.itemsize
    return flat[start:start + n].reshape(shape)


def _sigmoid_(a):
    """In place: sigmoid(a) = (1 + tanh(a / 2)) / 2. NumPy's float32 tanh is faster than its exp (and
    no reciprocal is needed), and nothing overflows."""
    a *= 0.5
    xp.tanh(a, out=a)
    a *= 0.5
    a += 0.5
    return a


def _lstm_gate_scale(like, H):
    """The factor on each column of the LSTM's (rows, 4H) pre-activations that lets one tanh serve all
    four gates: 1/2 for i, f, o (sigmoid(z) = (1 + tanh(z / 2)) / 2), 1 for g. The forward multiplies
    it into the weights and biases, not into every step's gates (a power of two: the products are
    exactly the halves of the unscaled ones)."""
    scale = full_like(like, 0.5, shape=(4 * H,))
    scale[2 * H:3 * H] = 1
    return scale


def _lstm_gates_(gates, scale, offset):
    """In place: the i, f, g, o activations from the LSTM's (rows, 4H) pre-activations, already scaled
    by ``scale`` (:func:`_lstm_gate_scale`) -- one tanh over all four gates, then ``scale t + offset``
    (``offset = 1 - scale``): (1 + t) / 2 for i, f and o, t for g. (Two passes over whole rows with
    column vectors: NumPy is slower on the 2-D blocks i|f and o alone.)"""
    xp.tanh(gates, out=gates)
    gates *= scale
    gates += offset
    return gates


def _weight_grad(dG, X):
    """dG^T X (a weight's gradient over all steps, one GEMM), computed as (X^T dG)^T into a C-ordered
    array: OpenBLAS is faster this way round for these shapes (tall dG, few columns in X)."""
    out = _empty(dG, (dG.shape[1], X.shape[1]))
    xp.matmul(X.T, dG, out=out.T)
    return out


def _product_blocks(a, rows, inner, cols):
    """Column ranges ((j, k), ...) covering ``cols`` for an (rows x inner) @ (inner x cols) product made of
    ``a``'s kind of array. Where NumPy's BLAS multiplies small products without packing their operands
    (_array/threads.py) and the product is thin (rows <= 48: a recurrent step's batch), blocks each under
    that bound, their widths a multiple of 64 bytes (unaligned blocks ran 7% slower); else one range, one
    product. On the AMD Zen 4 of bench/README.md (stop 35, one thread, float32; bench/bench_blas_blocks.py):
    at 8-48 rows times a (256 x 1024), (288 x 1024) or (1024 x 256) weight, blocks ran at 86-99 GF/s and one
    product at 31-84; at 64-128 rows the blocks gained nothing, and row-major ones lost up to a third."""
    bound = _blas.small_product_bound() if type(a) is xp.ndarray and rows <= 48 else 0
    align = max(64 // a.itemsize, 1)
    width = bound // max(rows * inner, 1) // align * align
    if width <= 0 or width >= cols:
        return ((0, cols),)
    return tuple((j, min(j + width, cols)) for j in range(0, cols, width))


def _product_scratch(like, rows, cols, blocks):
    """A (rows, cols) array for a step's product: column-major when it is made in blocks (the faster way
    for them, above), row-major for one product (at 1024 rows, d2l's batch, a column-major result ran at
    46-55 GF/s against 79-80, stop 35)."""
    return _aligned_empty(like, (cols, rows)).T if len(blocks) > 1 else empty_like(like, shape=(rows, cols))


def _matmul_blocks(a, b, out, blocks):
    """out = a @ b, as one product per column block of ``b`` and ``out`` (see _product_blocks)."""
    for j, k in blocks:
        xp.matmul(a, b[:, j:k], out=out[:, j:k])
    return out


def _transposed(w, scale=None, out=None):
    """w^T as a C-ordered array (``out``, else a new one), its columns multiplied by ``scale`` when given: the
    step products' right-hand operand (see _step_preactivations). Copied 64 rows of ``w`` at a time, so that
    each block's reads and writes stay in cache: twice as fast as one strided copy of a 1 MB weight."""
    if out is None:
        out = empty_like(w, shape=(w.shape[1], w.shape[0]))
    for j in range(0, w.shape[0], 64):
        if scale is None:
            out[:, j:j + 64] = w[j:j + 64].T
        else:
            xp.multiply(w[j:j + 64].T, scale[j:j + 64], out=out[:, j:j + 64])
    return out


# ---- the workspace: what the BPTT reads, one flat array ------------------------------------
def _z_columns(P, I):
    """The columns of Z, [h_prev | x | 1 | 0...]: P + I + 1 rounded up to a multiple of 16 (64-byte rows in
    float32; OpenBLAS runs the LSTM's step product at K = 288 ~10% faster than at K = 285)."""
    return -(-(P + I + 1) // 16) * 16


def _workspace_layout(mode, H, P, I, projecting):
    """(name, columns) of the (N, columns) arrays carved from the workspace, per mode. The LSTM and the plain
    RNN keep Z (see _step_preactivations) where the GRU keeps h_prev alone."""
    if mode == "GRU":
        return ("acts", 3 * H), ("h_prev", H), ("hw_n", H)
    z = (("z", _z_columns(P, I)),)
    if mode == "LSTM":
        return (("acts", 4 * H),) + z + (("c_prev", H), ("tanh_c", H)) + ((("h_cell", H),) if projecting else ())
    return z                                     # a plain RNN's activations are its output


def _carve(workspace, N, layout):
    """The named (N, columns) views of the flat workspace (each contiguous)."""
    views, start = {}, 0
    for name, cols in layout:
        views[name] = workspace[start:start + N * cols].reshape(N, cols)
        start += N * cols
    return views


def _step_preactivations(x, w_ih, w_hh, b_ih, b_hh, scale, z, gates, B):
    """For the LSTM and the plain RNN: fills Z's input columns and returns ``preactivate(rows)``, which writes
    a step's pre-activations (times ``scale``, when given) into ``gates[rows]`` and returns them; the step's
    h_prev must already be in ``z[rows, :P]``.

    Z's rows are [h_prev | x | 1 | 0...], one per input row, so that one GEMM dG^T Z gives W_hh's, W_ih's
    and the bias's gradients at once (_z_weight_grads). The step's product is where the time goes; how it
    is made depends on the BLAS (_product_blocks):

    - where the product is made in blocks (the BLAS multiplies small products unpacked and the batch is
      thin) and the input is narrow (I <= P/2: a one-hot vocabulary, an embedding smaller than the state):
      Z's rows times [W_hh | W_ih | b_ih + b_hh | 0]^T, block by block, straight into the gates -- no
      input projection, no bias pass over all the gates, no add per step;
    - otherwise one GEMM over all steps makes X W_ih^T + b, and each step adds h_prev W_hh^T to it, made
      in blocks or as one product (_product_scratch has its order).

    LSTM(28, 256), 35 steps at batch 32, on the AMD Zen 4 of bench/README.md: 9.2-10.4 ms with one product
    per step, 7.1 ms folded in blocks. Folding a wide input, or folding without blocks, was 10-20% slower
    (stop 35)."""
    N, I = x.shape
    G, P = w_hh.shape
    z[:, P:P + I] = x
    z[:, P + I] = 1                                            # (the biases' column)
    z[:, P + I + 1:] = 0
    bias = None if b_ih is None else b_ih + b_hh
    if bias is not None and scale is not None:
        bias *= scale
    blocks = _product_blocks(z, B, z.shape[1], G)
    if len(blocks) > 1 and I <= P // 2:
        w = _aligned_empty(w_hh, (z.shape[1], G))
        w[P + I:] = 0
        _transposed(w_hh, scale, out=w[:P])
        _transposed(w_ih, scale, out=w[P:P + I])
        if bias is not None:
            w[P + I] = bias
        return lambda rows: _matmul_blocks(z[rows], w, gates[rows], blocks)
    xp.matmul(x, _transposed(w_ih, scale), out=gates)
    if bias is not None:
        gates += bias
    blocks = _product_blocks(z, B, P, G)
    w, hw = _transposed(w_hh, scale, out=_aligned_empty(w_hh, (P, G))), _product_scratch(gates, B, G, blocks)

    def preactivate(rows):
        g = gates[rows]
        g += _matmul_blocks(z[rows, :P], w, hw[:g.shape[0]], blocks)
        return g
    return preactivate


def _z_weight_grads(dG, z, P, I, want_hh, want_ih, want_bias):
    """(dW_hh, dW_ih, db), each C-ordered or None where not wanted, from one GEMM dG^T Z over the columns of
    Z the wanted ones span (see _step_preactivations)."""
    lo = 0 if want_hh else P if want_ih else P + I
    hi = P + I + 1 if want_bias else P + I if want_ih else P
    if lo >= hi:
        return None, None, None
    d = _weight_grad(dG, z[:, lo:hi])

    def columns(start, stop):                  # (C-ordered, as torch's gradients are)
        return d if (start, stop) == (lo, hi) else d[:, start - lo:stop - lo].copy()
    return (columns(0, P) if want_hh else None, columns(P, P + I) if want_ih else None,
            columns(P + I, P + I + 1)[:, 0] if want_bias else None)


# ---- the fused kernels: forward and BPTT for each cell type ---------------------------------
# Each forward receives the (N, I) input rows and the layer's weights; it writes every step's gate
# activations into the workspace (a plain RNN's into `out`), fills `out` (the h of every step) and
# the other workspace views, and advances the state arrays h (and c) in place. Each backward walks
# the steps in reverse and returns the gradients of the gate pre-activations with respect to the
# input side (dG_in: rows like the gates) and to the recurrent side (dG_h, the same array except
# for the GRU), plus the gradient reaching the LSTM's projection.

def _lstm_forward(x, w_ih, w_hh, b_ih, b_hh, h, c, w_hr, steps, out, ws):
    B, H, P = c.shape[0], c.shape[1], h.shape[1]
    z, c_prev, tanh_c, h_cell = ws["z"], ws["c_prev"], ws["tanh_c"], ws.get("h_cell")
    scale = _lstm_gate_scale(w_hh, H)
    offset = 1 - scale
    preactivate = _step_preactivations(x, w_ih, w_hh, b_ih, b_hh, scale, z, ws["acts"], B)
    w_hr_t = None if w_hr is None else _transposed(w_hr)
    ig = empty_like(c)                                         # (scratch, reused by every step)
    for s, bs in steps:
        rows = slice(s, s + bs)
        cp = c[:bs]
        z[rows, :P], c_prev[rows] = h[:bs], cp
        gates = preactivate(rows)                              # all four gates in one GEMM
        _lstm_gates_(gates, scale, offset)                     # i, f, g, o
        i, f, g, o = gates[:, :H], gates[:, H:2 * H], gates[:, 2 * H:3 * H], gates[:, 3 * H:]
        cp *= f                                                # c = f c + i g, in the state (c_prev keeps the old)
        cp += xp.multiply(i, g, out=ig[:bs])
        tc = xp.tanh(cp, out=tanh_c[rows])
        if w_hr is None:
            h[:bs] = xp.multiply(o, tc, out=out[rows])
        else:                                                  # proj_size: h = (o tanh c) W_hr^T
            h[:bs] = xp.matmul(xp.multiply(o, tc, out=h_cell[rows]), w_hr_t, out=out[rows])


def _lstm_backward(ws, acts, d_out, dh, dc, w_hh, w_hr, steps):
    B, H, P = dc.shape[0], dc.shape[1], dh.shape[1]
    c_prev, tanh_c = ws["c_prev"], ws["tanh_c"]
    dG = _aligned_empty(acts, acts.shape)
    d_proj = _empty(acts, (acts.shape[0], P)) if w_hr is not None else None
    d_out_h, d_cell, dct_buf, slope = (empty_like(dh), empty_like(dc), empty_like(dc),   # scratch, reused
                                       empty_like(acts, shape=(B, 4 * H)))                # by every step
    blocks = _product_blocks(dh, B, 4 * H, P)                   # (dG_t W_hh: see _product_blocks)
    dh_f = _product_scratch(dh, B, P, blocks)                  # (the carried dh, in the product's order)
    if len(blocks) > 1:                                        # (its blocks from a 64-byte boundary too)
        w_hh = _aligned_copy(w_hh)
    dh_f[...] = dh
    is_g = 2 * _lstm_gate_scale(acts, H) - 1                   # (1 in the g block, 0 in the others)
    for s, bs in reversed(steps):
        rows = slice(s, s + bs)
        dht = xp.add(dh_f[:bs], d_out[rows], out=d_out_h[:bs])
        if w_hr is not None:
            d_proj[rows] = dht
            dht = xp.matmul(dht, w_hr, out=d_cell[:bs])
        a, tc, dg, sl = acts[rows], tanh_c[rows], dG[rows], slope[:bs]
        i, f, g, o = a[:, :H], a[:, H:2 * H], a[:, 2 * H:3 * H], a[:, 3 * H:]
        dct = xp.multiply(tc, tc, out=dct_buf[:bs])
        xp.subtract(1, dct, out=dct)
        dct *= o
        dct *= dht
        dct += dc[:bs]                                         # dc_t: through h_t and from step t+1
        xp.multiply(dct, g, out=dg[:, :H])                     # d i, d f, d g, d o (the activations')...
        xp.multiply(dct, c_prev[rows], out=dg[:, H:2 * H])
        xp.multiply(dct, i, out=dg[:, 2 * H:3 * H])
        xp.multiply(dht, tc, out=dg[:, 3 * H:])
        dg *= xp.subtract(1, a, out=sl)                        # ...times the slopes, (1 - a) (a + is_g):
        dg *= xp.add(a, is_g, out=sl)                          # a (1 - a) of a sigmoid, 1 - g^2 of the tanh
        xp.multiply(dct, f, out=dc[:bs])
        _matmul_blocks(dg, w_hh, dh_f[:bs], blocks)
    dh[...] = dh_f
    return dG, dG, d_proj


def _gru_forward(x, w_ih, w_hh, b_ih, b_hh, h, c, w_hr, steps, out, ws):
    H = h.shape[1]
    xw, h_prev, hw_n = ws["acts"], ws["h_prev"], ws["hw_n"]
    xp.matmul(x, w_ih.T, out=xw)                               # (every step's input projection: one GEMM;
    if b_ih is not None:                                       # b_hh stays inside: n needs r (h W_hn^T + b_hn))
        xw += b_ih
    w_hh_t = _transposed(w_hh)
    for s, bs in steps:
        rows = slice(s, s + bs)
        hp = h[:bs]
        h_prev[rows] = hp
        hw = hp @ w_hh_t                                       # r, z, n of the state: one GEMM
        if b_hh is not None:
            hw += b_hh
        a = xw[rows]
        a[:, :2 * H] += hw[:, :2 * H]
        _sigmoid_(a[:, :2 * H])                                # r, z
        hw_n[rows] = hw[:, 2 * H:]
        n = a[:, 2 * H:]
        n += a[:, :H] * hw[:, 2 * H:]
        xp.tanh(n, out=n)                                      # n = tanh(xn + r * hn)
        hn = xp.subtract(hp, n, out=out[rows])
        hn *= a[:, H:2 * H]
        hn += n                                                # h' = (h - n) z + n
        h[:bs] = hn


def _gru_backward(ws, acts, d_out, dh, dc, w_hh, w_hr, steps):
    H = dh.shape[1]
    h_prev, hw_n = ws["h_prev"], ws["hw_n"]
    dG_in = xp.empty_like(acts)                                # d(XW): the input side
    dG_h = xp.empty_like(acts)                                 # d(h W_hh^T + b_hh): the state side
    for s, bs in reversed(steps):
        rows = slice(s, s + bs)
        dht = dh[:bs] + d_out[rows]
        a, dx, dhw = acts[rows], dG_in[rows], dG_h[rows]
        r, z, n = a[:, :H], a[:, H:2 * H], a[:, 2 * H:]
        dn = xp.multiply(dht * (1 - z), 1 - n * n, out=dx[:, 2 * H:])         # d n_pre
        xp.multiply(dn, r, out=dhw[:, 2 * H:])                                # d hn
        xp.multiply(dn * hw_n[rows], r * (1 - r), out=dx[:, :H])             # d r_pre
        xp.multiply(dht * (h_prev[rows] - n), z * (1 - z), out=dx[:, H:2 * H])  # d z_pre
        dhw[:, :2 * H] = dx[:, :2 * H]
        dht *= z
        dht += dhw @ w_hh
        dh[:bs] = dht
    return dG_in, dG_h, None


def _simple_forward(relu):
    def forward(x, w_ih, w_hh, b_ih, b_hh, h, c, w_hr, steps, out, ws):
        z, P = ws["z"], h.shape[1]
        preactivate = _step_preactivations(x, w_ih, w_hh, b_ih, b_hh, None, z, out, h.shape[0])
        for s, bs in steps:
            rows = slice(s, s + bs)
            z[rows, :P] = h[:bs]
            a = preactivate(rows)
            if relu:
                xp.maximum(a, 0, out=a)
            else:
                xp.tanh(a, out=a)
            h[:bs] = a
    return forward


def _simple_backward(relu):
    def backward(ws, acts, d_out, dh, dc, w_hh, w_hr, steps):
        dG = xp.empty_like(acts)
        for s, bs in reversed(steps):
            rows = slice(s, s + bs)
            y = acts[rows]
            dht = dh[:bs] + d_out[rows]
            dg = xp.multiply(dht, y > 0, out=dG[rows]) if relu else xp.multiply(dht, 1 - y * y, out=dG[rows])
            dh[:bs] = dg @ w_hh
        return dG, dG, None
    return backward


_KERNELS = {  # mode: (forward, backward)
    "LSTM": (_lstm_forward, _lstm_backward),
    "GRU": (_gru_forward, _gru_backward),
    "RNN_TANH": (_simple_forward(False), _simple_backward(False)),
    "RNN_RELU": (_simple_forward(True), _simple_backward(True)),
}


# ---- the ops -------------------------------------------------------------------------------
def _layer_sizes(input, w_ih, w_hh, batch_sizes, mode):
    """(rows N, batch B, hidden H, state size P) of one layer's call."""
    packed = len(batch_sizes) > 0
    N = input.shape[0] if packed else input.shape[0] * input.shape[1]
    B = int(batch_sizes[0]) if packed else input.shape[1]
    return N, B, w_ih.shape[0] // GATES[mode], w_hh.shape[1]


def _mkldnn_rnn_layer_kernel(input, weight0, weight1, weight2, weight3, hx_, cx_, reverse, batch_sizes, mode,
                             hidden_size, num_layers, has_biases, bidirectional, batch_first, train, *, w_hr=None):
    """One layer and direction over the whole sequence: (output, h_n, c_n, workspace).

    weight0..3: w_ih, w_hh, b_ih, b_hh (None for absent biases); hx_/cx_ None for zeros; input (T, B, I),
    or packed rows (N, I) with ``batch_sizes``."""
    name = _MODE_NAMES[mode]
    N, B, H, P = _layer_sizes(input, weight0, weight1, batch_sizes, name)
    x = input.reshape(N, -1)
    layout = _workspace_layout(name, H, P, x.shape[1], w_hr is not None)
    workspace = _aligned_empty(input, (N * sum(cols for _, cols in layout),))   # (its views: 64-byte rows)
    h = hx_.copy() if hx_ is not None else xp.zeros_like(x, shape=(B, P))
    c = None
    if name == "LSTM":
        c = cx_.copy() if cx_ is not None else xp.zeros_like(x, shape=(B, H))
    out = _empty(x, (N, P))                                        # (a plain RNN's activations are its output)
    _KERNELS[name][0](x, weight0, weight1, weight2, weight3, h, c, w_hr, _steps(input.shape, batch_sizes, reverse),
                      out, _carve(workspace, N, layout))
    output = out if len(batch_sizes) else out.reshape(input.shape[0], input.shape[1], P)
    return output, h, c, workspace


def _mkldnn_rnn_layer_backward_kernel(input, weight1, weight2, weight3, weight4, hx_, cx_tmp, output, hy_, cy_,
                                      grad_output, grad_hy, grad_cy, reverse, mode, hidden_size, num_layers,
                                      has_biases, train, bidirectional, batch_sizes, batch_first, workspace, *,
                                      w_hr=None, output_mask=None):
    """BPTT through one layer and direction: the gradients of (input, w_ih, w_hh, b_ih, b_hh, hx, cx, w_hr).

    (torch's argument names: weight1..4 are w_ih, w_hh, b_ih, b_hh here.) ``output_mask`` says which
    gradients are wanted (all when None); the others are not computed and come back as None."""
    name = _MODE_NAMES[mode]
    N, B, H, P = _layer_sizes(input, weight1, weight2, batch_sizes, name)
    x = input.reshape(N, -1)
    ws = _carve(workspace, N, _workspace_layout(name, H, P, x.shape[1], w_hr is not None))
    acts = ws["acts"] if "acts" in ws else output.reshape(N, P)
    want = [True] * 8 if output_mask is None else list(output_mask)
    d_out = grad_output.reshape(N, P) if grad_output is not None else xp.zeros_like(acts, shape=(N, P))
    dh = grad_hy.copy() if grad_hy is not None else xp.zeros_like(acts, shape=(B, P))
    dc = None
    if name == "LSTM":
        dc = grad_cy.copy() if grad_cy is not None else xp.zeros_like(acts, shape=(B, H))
    steps = _steps(input.shape, batch_sizes, reverse)
    dG_in, dG_h, d_proj = _KERNELS[name][1](ws, acts, d_out, dh, dc, weight2, w_hr, steps)
    biased = weight3 is not None
    if name == "GRU":                      # (the input side's and the state side's gradients differ)
        dW_ih = _weight_grad(dG_in, x) if want[1] else None
        dW_hh = _weight_grad(dG_h, ws["h_prev"]) if want[2] else None
        db_in = sum_ends(dG_in, 1) if want[3] and biased else None
        db_h = sum_ends(dG_h, 1) if want[4] and biased else None
    else:                                  # weight gradients: one GEMM over all steps at once (see _z_weight_grads)
        dW_hh, dW_ih, db = _z_weight_grads(dG_in, ws["z"], P, x.shape[1], want[2], want[1],
                                           biased and (want[3] or want[4]))
        db_in = db if want[3] and biased else None         # (both biases share one gradient)
        db_h = (db.copy() if db_in is not None else db) if want[4] and biased else None
    return ((dG_in @ weight1).reshape(input.shape) if want[0] else None,
            dW_ih, dW_hh, db_in, db_h,
            dh if want[5] else None,
            dc if want[6] else None,
            _weight_grad(d_proj, ws["h_cell"]) if want[7] and w_hr is not None else None)


def _rnn_layer_backward(grads, input, weight0, weight1, weight2, weight3, hx_, cx_, w_hr, result0, result1, result2,
                        result3, reverse, batch_sizes, mode, hidden_size, num_layers, has_biases, bidirectional,
                        batch_first, train, output_mask):
    """MkldnnRnnLayerBackward0's formula (all eight inputs at once)."""
    if grad_mode.is_grad_enabled():
        # create_graph: differentiate a recomputation made of ordinary ops, which records (torch's
        # mkldnn_rnn_layer_differentiable_backward); the BPTT kernel runs on arrays, with no history
        return _rnn_layer_backward_by_recompute(grads, (input, weight0, weight1, weight2, weight3, hx_, cx_, w_hr),
                                                _MODE_NAMES[mode], reverse, batch_sizes, output_mask)
    return aten.mkldnn_rnn_layer_backward(input, weight0, weight1, weight2, weight3, hx_, cx_, result0, result1, result2,
                                          grads[0], grads[1], grads[2], reverse, mode, hidden_size, num_layers,
                                          has_biases, train, bidirectional, batch_sizes, batch_first, result3,
                                          w_hr=w_hr, output_mask=list(output_mask))


def _rnn_layer_backward_by_recompute(grads, inputs, mode, reverse, batch_sizes, output_mask):
    from ..autograd import grad as autograd_grad
    input, w_ih, w_hh, b_ih, b_hh, hx, cx, w_hr = inputs
    outs = rnn_layer_reference(mode, input, hx, cx, (w_ih, w_hh, b_ih, b_hh, w_hr), reverse, batch_sizes or None)
    pairs = [(o, g) for o, g in zip(outs, grads) if o is not None and g is not None]
    wanted = [i for i, needed in enumerate(output_mask) if needed]
    got = autograd_grad([o for o, _ in pairs], [inputs[i] for i in wanted], [g for _, g in pairs],
                        create_graph=True, allow_unused=True)
    result = [None] * 8
    for i, g in zip(wanted, got):
        result[i] = g
    return tuple(result)


mkldnn_rnn_layer = defop(
    "mkldnn_rnn_layer(Tensor input, Tensor weight0, Tensor weight1, Tensor weight2, Tensor weight3, Tensor hx_, "
    "Tensor cx_, bool reverse, int[] batch_sizes, int mode, int hidden_size, int num_layers, bool has_biases, "
    "bool bidirectional, bool batch_first, bool train, *, Tensor? w_hr=None) -> (Tensor, Tensor, Tensor, Tensor)",
    _mkldnn_rnn_layer_kernel, node="MkldnnRnnLayerBackward0", output_differentiability=(True, True, True, False),
    joint={("input", "weight0", "weight1", "weight2", "weight3", "hx_", "cx_", "w_hr"): _rnn_layer_backward})
mkldnn_rnn_layer_backward = defop(
    "mkldnn_rnn_layer_backward(Tensor input, Tensor weight1, Tensor weight2, Tensor weight3, Tensor weight4, "
    "Tensor hx_, Tensor cx_tmp, Tensor output, Tensor hy_, Tensor cy_, Tensor? grad_output, Tensor? grad_hy, "
    "Tensor? grad_cy, bool reverse, int mode, int hidden_size, int num_layers, bool has_biases, bool train, "
    "bool bidirectional, int[] batch_sizes, bool batch_first, Tensor workspace, *, Tensor? w_hr=None, "
    "bool[]? output_mask=None) -> (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)",
    _mkldnn_rnn_layer_backward_kernel)


def rnn_layer(mode, input, hx, cx, weights, reverse=False, batch_sizes=None, *, num_layers=1, bidirectional=False,
              batch_first=False, train=True):
    """One layer, one direction of an RNN over a whole sequence, as a single op.

    ``mode``: 'LSTM', 'GRU', 'RNN_TANH' or 'RNN_RELU'; ``input``: ``(T, B, input_size)``, or packed rows
    ``(N, input_size)`` with ``batch_sizes`` (a list of ints); ``hx``: ``(B, P)`` or None for zeros;
    ``cx``: ``(B, H)`` or None (LSTM only); ``weights``: ``(w_ih, w_hh, b_ih, b_hh, w_hr)`` with None for
    the absent ones. Returns ``(output, h_n, c_n)``: output ``(T, B, P)`` (or ``(N, P)`` packed), ``c_n``
    None unless ``mode == "LSTM"``; ``P`` is ``proj_size`` when ``w_hr`` is given, else ``hidden_size``.
    The keyword arguments describe the whole module, as torch passes them to its op.
    """
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    hidden = w_ih.shape[0] // GATES[mode]
    output, hy, cy, _ = mkldnn_rnn_layer(input, w_ih, w_hh, b_ih, b_hh, hx, cx, reverse,
                                         list(batch_sizes) if batch_sizes is not None else [], MODES[mode], hidden,
                                         num_layers, b_ih is not None, bidirectional, batch_first, train, w_hr=w_hr)
    return output, hy, cy


# ---- whole recurrent networks: torch.lstm, torch.gru, torch.rnn_tanh, torch.rnn_relu -----------
# What nn.LSTM / nn.GRU / nn.RNN call (torch's _VF functions), public as in torch and seen by modes
# under their names: every layer and direction is one rnn_layer call, under the mode's view.
def _rnn(mode, input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first,
         batch_sizes=None):
    """Every layer and direction of a ``mode`` network: (output, h_n, c_n or None). ``hx``: h_0, or
    (h_0, c_0) for the LSTM; ``params``: torch's flat list, per layer and direction w_ih, w_hh, then
    b_ih, b_hh if ``has_biases``, then w_hr if the LSTM projects (its h_0 narrower than its c_0)."""
    h0, c0 = (hx[0], hx[1]) if mode == "LSTM" else (hx, None)
    projecting = c0 is not None and h0.shape[-1] != c0.shape[-1]
    num_directions = 2 if bidirectional else 1
    per_layer = 2 + 2 * bool(has_biases) + projecting
    params = list(params)
    if len(params) != per_layer * num_layers * num_directions:
        raise RuntimeError(f"{mode.lower()}: expected {per_layer * num_layers * num_directions} parameters "
                           f"(weights and biases), got {len(params)}")
    steps = None if batch_sizes is None else [int(n) for n in batch_sizes.tolist()]
    if batch_first and steps is None:
        input = input.transpose(0, 1).contiguous()   # (one copy, as torch's; the kernel's reshape is then free)
    h_n, c_n = [], []
    layer_input = input
    for layer in range(num_layers):
        outputs = []
        for direction in range(num_directions):
            k = layer * num_directions + direction
            w = params[k * per_layer:(k + 1) * per_layer]
            weights = (w[0], w[1], w[2] if has_biases else None, w[3] if has_biases else None,
                       w[-1] if projecting else None)
            out, h, c = rnn_layer(mode, layer_input, h0[k], c0[k] if c0 is not None else None, weights,
                                  reverse=direction == 1, batch_sizes=steps, num_layers=num_layers,
                                  bidirectional=bidirectional, batch_first=batch_first, train=train)
            outputs.append(out)
            h_n.append(h)
            c_n.append(c)
        layer_input = outputs[0] if num_directions == 1 else joining.cat(outputs, -1)
        if dropout and train and layer < num_layers - 1:
            from ..nn.functional import dropout as _dropout
            layer_input = _dropout(layer_input, dropout, True)
    h_n, c_n = joining.stack(h_n), joining.stack(c_n) if mode == "LSTM" else None
    return (layer_input.transpose(0, 1) if batch_first and steps is None else layer_input), h_n, c_n


def _overloads(mode, args, kwargs):
    """torch's two overloads of each network function: (input, hx, params, has_biases, num_layers,
    dropout, train, bidirectional, batch_first) and, for packed sequences, (data, batch_sizes, hx,
    params, has_biases, num_layers, dropout, train, bidirectional) -- told apart by the argument
    after ``params``/``hx``: a flag in the first, the parameter list in the second."""
    packed = "batch_sizes" in kwargs or (len(args) > 3 and isinstance(args[3], (list, tuple)))
    return _packed(mode, *args, **kwargs) if packed else _padded(mode, *args, **kwargs)


def _padded(mode, input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    return _rnn(mode, input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)


def _packed(mode, data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional):
    return _rnn(mode, data, hx, params, has_biases, num_layers, dropout, train, bidirectional, False, batch_sizes)


@overridable
def lstm(*args, **kwargs):
    """torch.lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)
    or, packed, torch.lstm(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train,
    bidirectional): a whole LSTM (what nn.LSTM calls). ``hx``: (h_0, c_0); ``params``: the flat weights
    (nn.LSTM's ``_flat_weights``). Returns ``(output, h_n, c_n)``."""
    return _overloads("LSTM", args, kwargs)


@overridable
def gru(*args, **kwargs):
    """torch.gru: as :func:`lstm`, with ``hx`` the one state h_0; returns ``(output, h_n)``."""
    return _overloads("GRU", args, kwargs)[:2]


@overridable
def rnn_tanh(*args, **kwargs):
    """torch.rnn_tanh: as :func:`gru`, for an Elman RNN with tanh."""
    return _overloads("RNN_TANH", args, kwargs)[:2]


@overridable
def rnn_relu(*args, **kwargs):
    """torch.rnn_relu: as :func:`gru`, for an Elman RNN with ReLU."""
    return _overloads("RNN_RELU", args, kwargs)[:2]


def rnn_layer_reference(mode, input, hx, cx, weights, reverse=False, batch_sizes=None):
    """What ``rnn_layer`` computes, step by step with the cells (slow, differentiable to any order)."""
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    x = input
    steps = _steps(x.shape, batch_sizes or [], reverse)
    B = batch_sizes[0] if batch_sizes else x.shape[1]
    P = w_hh.shape[1]
    if not batch_sizes:
        x = x.reshape(-1, x.shape[-1])
    h = hx if hx is not None else _wrap(xp.zeros_like(x._data, shape=(B, P)))
    c = None
    if mode == "LSTM":
        c = cx if cx is not None else _wrap(xp.zeros_like(x._data, shape=(B, w_ih.shape[0] // 4)))
    outs = {}
    for s, bs in steps:
        xt, hp = x[s:s + bs], h[:bs]
        if mode == "LSTM":
            hn, cn = lstm_cell(xt, (hp, c[:bs]), w_ih, w_hh, b_ih, b_hh)
            if w_hr is not None:
                hn = linalg.mm(hn, w_hr.t())
            c = joining.cat([cn, c[bs:]]) if bs < B else cn
        else:
            cell = {"GRU": gru_cell, "RNN_TANH": rnn_tanh_cell, "RNN_RELU": rnn_relu_cell}[mode]
            hn = cell(xt, hp, w_ih, w_hh, b_ih, b_hh)
        h = joining.cat([hn, h[bs:]]) if bs < B else hn
        outs[s] = hn
    output = joining.cat([outs[s] for s in sorted(outs)])
    if not batch_sizes:
        output = output.reshape(input.shape[0], input.shape[1], -1)
    return output, h, c


# ---- packing: padded (T, B, *) <-> packed rows (N, *) ------------------------------------------
# A packed batch keeps, time step after time step, the rows of the sequences still running
# (lengths sorted longest first), so step t is rows [sum(batch_sizes[:t]), +batch_sizes[t]).
def _packed_rows(lengths, T):
    """Which rows of the time-major (T*B) padded layout a packed batch keeps, in packed order,
    and the batch size of every step."""
    lengths = xp.asarray(lengths)
    mask = xp.arange(T)[:, None] < lengths[None, :]            # (T, B): step t of sequence b exists
    return xp.flatnonzero(mask), mask.sum(1)


def _lengths_of(batch_sizes):
    """Each sequence's length, from the batch size of every step (an array)."""
    bs = xp.asarray(batch_sizes)
    return (bs[:, None] > xp.arange(int(bs[0]))[None, :]).sum(0)


def _gather_padded(data, rows, T, B, padding_value):
    """Packed rows (N, *) -> padded (T, B, *), with ordinary ops (so it differentiates to any order):
    one index_select from the rows plus a padding row."""
    N = data.shape[0]
    src = full_like(data._data, N, T * B, xp.int64)     # every slot reads the padding row...
    src[rows] = _on_device_of(src, xp.arange(N))      # ...unless a packed row fills it
    pad_row = _wrap(full_like(data._data, padding_value, (1,) + tuple(data.shape[1:])))
    from .indexing import index_select
    return index_select(joining.cat([data, pad_row]), 0, _wrap(src)).view((T, B) + tuple(data.shape[1:]))


def _pack_padded_sequence_kernel(input, lengths, batch_first):
    lengths = [int(n) for n in lengths]
    x = input.swapaxes(0, 1) if batch_first else input
    T, B = x.shape[:2]
    if len(lengths) != B:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lengths)} "
                           f"(batch_size={B})")
    if min(lengths) <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if any(a < b for a, b in zip(lengths, lengths[1:])):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You "
                           "can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep "
                           "this requirement if you do not need ONNX exportability.")
    if lengths[0] > T:
        raise RuntimeError(f"pack_padded_sequence: the longest length ({lengths[0]}) is more than the "
                           f"{'second' if batch_first else 'first'} dimension of the input ({T})")
    rows, batch_sizes = _packed_rows(lengths, lengths[0])
    data = x[:lengths[0]].reshape((lengths[0] * B,) + x.shape[2:])[rows]
    return data, batch_sizes.astype(xp.int64)


def _pack_padded_sequence_backward_kernel(grad, input_size, batch_sizes, batch_first):
    """Unpacking with zeros in the padding: the packed rows scattered back to their (T, B) places."""
    T, B = (input_size[1], input_size[0]) if batch_first else (input_size[0], input_size[1])
    rows, _ = _packed_rows(_lengths_of(batch_sizes), int(len(batch_sizes)))
    padded = xp.zeros_like(grad, shape=(T * B,) + tuple(grad.shape[1:]))
    padded[rows] = grad
    padded = padded.reshape((T, B) + tuple(grad.shape[1:]))
    return padded.swapaxes(0, 1) if batch_first else padded


def _pack_backward(grad, input_sizes, result1, batch_first):
    if grad_mode.is_grad_enabled():   # create_graph: torch's composite of ops, differentiable to any order
        T, B = (input_sizes[1], input_sizes[0]) if batch_first else (input_sizes[0], input_sizes[1])
        bs = result1._data if isinstance(result1, Tensor) else result1
        rows, _ = _packed_rows(_lengths_of(bs), len(bs))
        padded = _gather_padded(grad, rows, T, B, 0)
        return padded.transpose(0, 1) if batch_first else padded
    return aten._pack_padded_sequence_backward(grad, list(input_sizes), result1, batch_first)


pack_padded_sequence_op = defop(
    "_pack_padded_sequence(Tensor input, Tensor lengths, bool batch_first) -> (Tensor, Tensor)",
    _pack_padded_sequence_kernel, node="PackPaddedSequenceBackward0", output_differentiability=(True, False),
    input=_pack_backward, lengths=None)
pack_padded_sequence_backward = defop(
    "_pack_padded_sequence_backward(Tensor grad, SymInt[] input_size, Tensor batch_sizes, bool batch_first) -> Tensor",
    _pack_padded_sequence_backward_kernel)


@overridable
def _pack_padded_sequence(input, lengths, batch_first):
    """torch._pack_padded_sequence: padded ``(T, B, *)`` (``(B, T, *)`` if batch_first) and sorted
    lengths (an int64 tensor, or a list) -> ``(data, batch_sizes)``."""
    if not isinstance(lengths, Tensor):
        lengths = _wrap(xp.asarray([int(n) for n in lengths], dtype=xp.int64))
    return pack_padded_sequence_op(input, lengths, batch_first)


@overridable
def _pad_packed_sequence(data, batch_sizes, batch_first, padding_value, total_length):
    """torch._pad_packed_sequence: ``(data, batch_sizes)`` -> ``(padded, lengths)``, padded to
    ``total_length`` steps (a composite of ops in torch too)."""
    from .creation import tensor
    lengths = _lengths_of(batch_sizes._data if isinstance(batch_sizes, Tensor) else batch_sizes)
    rows, _ = _packed_rows(lengths, total_length)
    out = _gather_padded(data, rows, total_length, int(lengths.shape[0]), padding_value)
    return (out.transpose(0, 1) if batch_first else out), tensor(lengths.astype(xp.int64))
