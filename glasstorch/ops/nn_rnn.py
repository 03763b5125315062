r"""Recurrent layers: the cells as compositions of ops, and whole sequences as one fused op.

**Cells** (``lstm_cell``, ``gru_cell``, ``rnn_tanh_cell``, ``rnn_relu_cell``; what ``nn.LSTMCell``
and friends call) are written with ordinary Tensor ops, exactly as torch's ``RNN.cpp`` composes
them, so their graphs show torch's nodes (``MulBackward0``, ``SigmoidBackward0``...).

**Sequences** (``rnn_layer``; what ``nn.LSTM``/``nn.GRU``/``nn.RNN`` call once per layer and
direction) run as ONE op with a hand-written backpropagation through time, as torch's CPU
kernel does (its graph shows one ``MkldnnRnnLayerBackward0`` per layer and direction). Recording
a dozen small nodes per time step would cost more in Python than the arithmetic itself. The
work is arranged so that most of it is a few large matrix products::

    forward                                          backward (BPTT)
    XW  = X W_ih^T + b           one GEMM, all steps
    for t = 0 .. T-1:                                for t = T-1 .. 0:
        G_t = XW_t + h_{t-1} W_hh^T   one GEMM           dG_t      = cell'(dh_t, dc_t)   (elementwise)
        h_t, c_t = cell(G_t, c_{t-1})   (elementwise)    dh_{t-1}  = dG_t W_hh           one GEMM
                                                     dX    = dG W_ih                  one GEMM, all steps
                                                     dW_ih = dG^T X,  dW_hh = dG^T H_prev,  db = sum dG

(for the LSTM, G holds all four gates side by side: one product per step, not four).

The same loops serve packed sequences (``nn.utils.rnn.PackedSequence``): the input is then the
``(sum(batch_sizes), input_size)`` rows of all time steps, step ``t`` covering ``batch_sizes[t]``
rows, the longest sequences first. Only the first ``batch_sizes[t]`` rows of the state take part
in step ``t``; the others keep their value, so each sequence's final state is the one after its
own last step, in both directions, with no special case.

Higher-order gradients (``create_graph=True``) recompute the layer with the cells above and
differentiate that, so the fused node is an optimisation, never a restriction.

    >>> import glasstorch as torch
    >>> from glasstorch.ops.nn_rnn import rnn_layer
    >>> x = torch.randn(5, 2, 3)                                  # (steps, batch, features)
    >>> w_ih, w_hh = torch.randn(16, 3, requires_grad=True), torch.randn(16, 4, requires_grad=True)
    >>> out, h_n, c_n = rnn_layer("LSTM", x, None, None, (w_ih, w_hh, None, None, None))
    >>> out.shape, out.grad_fn.name(), h_n.grad_fn is out.grad_fn
    (torch.Size([5, 2, 4]), 'MkldnnRnnLayerBackward0', True)
"""
from .._tensor import _wrap
from ..autograd import grad_mode
from .._array import xp
from ._op import _state, record, make_node_class
from . import pointwise, joining, linalg

__all__ = ["rnn_layer", "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell"]  # + the packing ops at the end

GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


# ---- cells: compositions of ops -----------------------------------------------------------
def _linear(x, w, b):
    """x W^T + b, recorded as nn.Linear records it (AddmmBackward0, or MmBackward0 without bias)."""
    return linalg.mm(x, w.t()) if b is None else linalg.addmm(b, x, w.t())


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


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    r""":math:`h' = \tanh(x W_{ih}^T + b_{ih} + h W_{hh}^T + b_{hh})`"""
    return (_linear(hx, w_hh, b_hh) + _linear(input, w_ih, b_ih)).tanh()


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    r""":math:`h' = \max(0, x W_{ih}^T + b_{ih} + h W_{hh}^T + b_{hh})`"""
    return (_linear(hx, w_hh, b_hh) + _linear(input, w_ih, b_ih)).relu()


# ---- the time steps ------------------------------------------------------------------------
def _steps(input_shape, batch_sizes, reverse):
    """(first row, rows) of every time step in the flattened input, in the order they run."""
    if batch_sizes is None:
        T, B = input_shape[0], input_shape[1]
        steps = [(t * B, B) for t in range(T)]
    else:
        steps, row = [], 0
        for bs in batch_sizes:
            steps.append((row, bs))
            row += bs
    return steps[::-1] if reverse else steps


def _empty(like, shape):
    """An uninitialised array of ``like``'s dtype and device (NumPy or CuPy)."""
    return xp.empty_like(like, shape=shape)


def _sigmoid_(a):
    """In place: sigmoid(a) = (1 + tanh(a/2)) / 2, which cannot overflow as exp(-a) can."""
    a *= 0.5
    xp.tanh(a, out=a)
    a *= 0.5
    a += 0.5
    return a


# ---- the fused kernels: forward and BPTT for each cell type ---------------------------------
# Each forward receives XW, the input projections of all steps (N rows, biases added), and
# overwrites it in place with the cell's activations; it fills `out` (the h of every step) and
# advances the state arrays h (and c) in place. The workspace it returns is what the backward
# reads. Each backward walks the steps in reverse and returns the gradients of the gate
# pre-activations with respect to the input side (dG_in: rows like XW) and to the recurrent side
# (dG_h, the same array except for the GRU), plus the gradient of the initial state.

def _lstm_forward(xw, h, c, w_hh, b_hh, w_hr, steps, out):
    H = c.shape[1]
    N = xw.shape[0]
    ws = {"h_prev": _empty(xw, (N, h.shape[1])), "c_prev": _empty(xw, (N, H)), "tanh_c": _empty(xw, (N, H)),
          "h_cell": _empty(xw, (N, H)) if w_hr is not None else None}
    h_prev, c_prev, tanh_c, h_cell = ws["h_prev"], ws["c_prev"], ws["tanh_c"], ws["h_cell"]
    w_hh_t = w_hh.T
    for s, bs in steps:
        rows = slice(s, s + bs)
        hp, cp = h[:bs], c[:bs]
        h_prev[rows], c_prev[rows] = hp, cp
        gates = xw[rows]
        gates += hp @ w_hh_t                                   # all four gates in one GEMM
        _sigmoid_(gates[:, :2 * H])                            # i, f
        xp.tanh(gates[:, 2 * H:3 * H], out=gates[:, 2 * H:3 * H])  # g
        _sigmoid_(gates[:, 3 * H:])                            # o
        i, f, g, o = gates[:, :H], gates[:, H:2 * H], gates[:, 2 * H:3 * H], gates[:, 3 * H:]
        cn = f * cp
        cn += i * g
        c[:bs] = cn
        tc = xp.tanh(cn, out=tanh_c[rows])
        if w_hr is None:
            h[:bs] = xp.multiply(o, tc, out=out[rows])
        else:                                                  # proj_size: h = (o tanh c) W_hr^T
            h[:bs] = xp.matmul(xp.multiply(o, tc, out=h_cell[rows]), w_hr.T, out=out[rows])
    return ws


def _lstm_backward(ws, acts, d_out, dh, dc, w_hh, w_hr, steps):
    H = dc.shape[1]
    c_prev, tanh_c = ws["c_prev"], ws["tanh_c"]
    dG = xp.empty_like(acts)
    d_proj = _empty(acts, (acts.shape[0], dh.shape[1])) if w_hr is not None else None
    for s, bs in reversed(steps):
        rows = slice(s, s + bs)
        dht = dh[:bs] + d_out[rows]
        if w_hr is not None:
            d_proj[rows] = dht
            dht = dht @ w_hr
        a, tc, dg = acts[rows], tanh_c[rows], dG[rows]
        i, f, g, o = a[:, :H], a[:, H:2 * H], a[:, 2 * H:3 * H], a[:, 3 * H:]
        dct = dht * o
        dct *= 1 - tc * tc
        dct += dc[:bs]                                         # dc_t: through h_t and from step t+1
        xp.multiply(dht * tc, o * (1 - o), out=dg[:, 3 * H:])            # do
        xp.multiply(dct * g, i * (1 - i), out=dg[:, :H])                 # di
        xp.multiply(dct * c_prev[rows], f * (1 - f), out=dg[:, H:2 * H])  # df
        xp.multiply(dct * i, 1 - g * g, out=dg[:, 2 * H:3 * H])          # dg
        dc[:bs] = dct * f
        dh[:bs] = dg @ w_hh
    return dG, dG, d_proj


def _gru_forward(xw, h, c, w_hh, b_hh, w_hr, steps, out):
    H = h.shape[1]
    N = xw.shape[0]
    ws = {"h_prev": _empty(xw, (N, H)), "hw_n": _empty(xw, (N, H))}
    h_prev, hw_n = ws["h_prev"], ws["hw_n"]
    w_hh_t = w_hh.T
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
    return ws


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
    def forward(xw, h, c, w_hh, b_hh, w_hr, steps, out):
        N = xw.shape[0]
        ws = {"h_prev": _empty(xw, (N, h.shape[1]))}
        h_prev = ws["h_prev"]
        w_hh_t = w_hh.T
        for s, bs in steps:
            rows = slice(s, s + bs)
            hp = h[:bs]
            h_prev[rows] = hp
            a = xw[rows]
            a += hp @ w_hh_t
            if relu:
                xp.maximum(a, 0, out=a)
            else:
                xp.tanh(a, out=a)
            h[:bs] = a
        return ws
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


_KERNELS = {  # mode: (forward, backward, both biases hoisted into XW)
    "LSTM": (_lstm_forward, _lstm_backward, True),
    "GRU": (_gru_forward, _gru_backward, False),
    "RNN_TANH": (_simple_forward(False), _simple_backward(False), True),
    "RNN_RELU": (_simple_forward(True), _simple_backward(True), True),
}


# ---- the op ---------------------------------------------------------------------------------
class MkldnnRnnLayerBackward0(make_node_class("MkldnnRnnLayerBackward0", None,
                                              ("input", "weight0", "weight1", "weight2", "weight3", "hx_", "cx_",
                                               "weight4", "result0"))):
    """BPTT through one layer and direction (torch's name for its fused CPU LSTM layer; here every
    cell type uses it). Inputs: input, w_ih, w_hh, b_ih, b_hh, hx, cx, w_hr. Outputs: output, h_n, c_n.
    The activations of every step are kept in ``workspace`` (arrays), freed with the saved tensors."""
    num_outputs = 3
    workspace = None

    def _free(self):
        super()._free()
        self.workspace = None

    def backward(self, d_out, d_hy, d_cy):
        if _state.enabled:  # create_graph=True: differentiate a recomputation made of ordinary ops
            return self._backward_by_recompute(d_out, d_hy, d_cy)
        x, w_ih, w_hh, b_ih, b_hh, hx, cx, w_hr, _ = self._unpack_saved()  # result0: saved for its version check
        if self.workspace is None:
            from ..autograd.graph import FREED_MESSAGE
            raise RuntimeError(FREED_MESSAGE)
        ws, acts = self.workspace
        N, P = ws["h_prev"].shape
        zeros = lambda *shape: xp.zeros_like(acts, shape=shape)  # noqa: E731  (an output that got no gradient)
        d_out = d_out._data.reshape(N, P) if d_out is not None else zeros(N, P)
        dh = d_hy._data.copy() if d_hy is not None else zeros(self.batch, P)
        dc = None
        if self.mode == "LSTM":
            dc = d_cy._data.copy() if d_cy is not None else zeros(self.batch, w_ih.shape[0] // 4)
        dG_in, dG_h, d_proj = _KERNELS[self.mode][1](ws, acts, d_out, dh, dc, w_hh._data,
                                                     None if w_hr is None else w_hr._data, self.steps)
        want = [fn is not None for fn, _ in self.next_functions]
        x2d = x._data.reshape(N, -1)
        grads = [
            _wrap((dG_in @ w_ih._data).reshape(x.shape)) if want[0] else None,
            _wrap(dG_in.T @ x2d) if want[1] else None,
            _wrap(dG_h.T @ ws["h_prev"]) if want[2] else None,
            _wrap(dG_in.sum(0)) if want[3] else None,
            _wrap(dG_h.sum(0)) if want[4] else None,
            _wrap(dh) if want[5] else None,
            _wrap(dc) if want[6] else None,
            _wrap(d_proj.T @ ws["h_cell"]) if want[7] else None,
        ]
        return tuple(grads)

    def _backward_by_recompute(self, d_out, d_hy, d_cy):
        from ..autograd import grad as autograd_grad
        saved = self._unpack_saved()
        inputs = list(saved[:8])
        with grad_mode.enable_grad():
            outs = rnn_layer_reference(self.mode, inputs[0], inputs[5], inputs[6], tuple(inputs[1:5]) + (inputs[7],),
                                       self.reverse, self.batch_sizes)
        pairs = [(o, g) for o, g in zip(outs, (d_out, d_hy, d_cy)) if o is not None and g is not None]
        wanted = [i for i, (fn, _) in enumerate(self.next_functions) if fn is not None]
        got = autograd_grad([o for o, _ in pairs], [inputs[i] for i in wanted], [g for _, g in pairs],
                            create_graph=True, allow_unused=True)
        grads = [None] * 8
        for i, g in zip(wanted, got):
            grads[i] = g
        return tuple(grads)


def rnn_layer(mode, input, hx, cx, weights, reverse=False, batch_sizes=None):
    """One layer, one direction of an RNN over a whole sequence, as a single op.

    ``input``: ``(T, B, input_size)``, or packed rows ``(N, input_size)`` with ``batch_sizes`` (a
    list of ints); ``hx``: ``(B, P)`` or None for zeros; ``cx``: ``(B, H)`` or None (LSTM only);
    ``weights``: ``(w_ih, w_hh, b_ih, b_hh, w_hr)`` with None for the absent ones.
    Returns ``(output, h_n, c_n)``: output ``(T, B, P)`` (or ``(N, P)`` packed), ``c_n`` None
    unless ``mode == "LSTM"``; ``P`` is ``proj_size`` when ``w_hr`` is given, else ``hidden_size``.
    """
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    forward, _, hoist_both = _KERNELS[mode]
    x = input._data
    steps = _steps(x.shape, batch_sizes, reverse)
    N = x.shape[0] if batch_sizes is not None else x.shape[0] * x.shape[1]
    B = batch_sizes[0] if batch_sizes is not None else x.shape[1]
    H = w_ih._data.shape[0] // GATES[mode]                     # hidden_size
    P = w_hh._data.shape[1]                                    # the size of h (proj_size if projecting)

    xw = x.reshape(N, -1) @ w_ih._data.T                       # every step's input projection, one GEMM
    if b_ih is not None:
        xw += b_ih._data
        if hoist_both:
            xw += b_hh._data
    h = hx._data.copy() if hx is not None else xp.zeros_like(xw, shape=(B, P))
    c = None
    if mode == "LSTM":
        c = cx._data.copy() if cx is not None else xp.zeros_like(xw, shape=(B, H))
    out = xw if mode.startswith("RNN") else _empty(xw, (N, P))  # a plain RNN's activations are its output
    ws = forward(xw, h, c, w_hh._data, None if b_hh is None or hoist_both else b_hh._data,
                 None if w_hr is None else w_hr._data, steps, out)

    output = _wrap(out if batch_sizes is not None else out.reshape(x.shape[0], x.shape[1], P))
    hy = _wrap(h)
    cy = _wrap(c) if c is not None else None
    inputs = (input, w_ih, w_hh, b_ih, b_hh, hx, cx, w_hr)
    if _state.enabled and any(t is not None and t._requires_grad for t in inputs):
        outputs = (output, hy, cy) if cy is not None else (output, hy)
        node = record(MkldnnRnnLayerBackward0, outputs, inputs, inputs + (output,), saved_output=8,
                      meta_check=False)
        node.workspace = (ws, xw)
        node.mode, node.steps, node.batch = mode, steps, B
        node.reverse, node.batch_sizes = reverse, batch_sizes
    return output, hy, cy


def rnn_layer_reference(mode, input, hx, cx, weights, reverse=False, batch_sizes=None):
    """What ``rnn_layer`` computes, step by step with the cells (slow, differentiable to any order)."""
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    x = input
    steps = _steps(x.shape, batch_sizes, reverse)
    B = batch_sizes[0] if batch_sizes is not None else x.shape[1]
    P = w_hh.shape[1]
    if batch_sizes is None:
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
    if batch_sizes is None:
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


def _gather_padded(data, rows, T, B, padding_value):
    """Packed rows (N, *) -> padded (T, B, *), with ordinary ops (so it differentiates to any order):
    one index_select from the rows plus a padding row."""
    N = data.shape[0]
    src = xp.full(T * B, N, dtype=xp.int64)                    # every slot reads the padding row...
    src[rows] = xp.arange(N)                                   # ...unless a packed row fills it
    pad_row = _wrap(xp.full((1,) + tuple(data.shape[1:]), padding_value, dtype=data._data.dtype))
    from .indexing import index_select
    return index_select(joining.cat([data, pad_row]), 0, _wrap(src)).view((T, B) + tuple(data.shape[1:]))


class PackPaddedSequenceBackward0(make_node_class("PackPaddedSequenceBackward0", None)):
    """The gradient of packing is unpacking with zeros in the padding."""

    def backward(self, grad):
        T, B = self.padded_sizes[:2]
        g = _gather_padded(grad, self.rows, T, B, 0)
        return g.transpose(0, 1) if self.batch_first else g


def _pack_padded_sequence(input, lengths, batch_first):
    """torch._pack_padded_sequence: padded ``(T, B, *)`` (``(B, T, *)`` if batch_first) and sorted
    lengths -> ``(data, batch_sizes)``."""
    from .creation import tensor
    lengths = [int(n) for n in lengths]
    x = input._data.swapaxes(0, 1) if batch_first else input._data
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
    data = _wrap(x[:lengths[0]].reshape((lengths[0] * B,) + x.shape[2:])[rows])
    if _state.enabled and input._requires_grad:
        node = record(PackPaddedSequenceBackward0, data, (input,), meta_check=False)
        node.rows, node.padded_sizes, node.batch_first = rows, (T, B), batch_first
    return data, tensor(batch_sizes.astype(xp.int64))


def _pad_packed_sequence(data, batch_sizes, batch_first, padding_value, total_length):
    """torch._pad_packed_sequence: ``(data, batch_sizes)`` -> ``(padded, lengths)``, padded to
    ``total_length`` steps."""
    from .creation import tensor
    bs = xp.asarray(batch_sizes._data if hasattr(batch_sizes, "_data") else batch_sizes)
    B = int(bs[0])
    lengths = (bs[:, None] > xp.arange(B)[None, :]).sum(0)   # steps in which sequence b still runs
    rows, _ = _packed_rows(lengths, total_length)
    out = _gather_padded(data, rows, total_length, B, padding_value)
    return (out.transpose(0, 1) if batch_first else out), tensor(lengths.astype(xp.int64))
