"""The NumPy floor of issue 13's workloads: each step's matrix products and main kernels by hand, on arrays.

For each workload of ``bench_workloads.py`` (mlp, lenet, lstm, transformer) this times, in one process
and interleaved (one thread each; thread CPU time, so another process's turn on the core does not count):

* the whole training step in glasstorch and in torch (``bench_workloads.make_step``);
* the step's parts written by hand in NumPy -- every GEMM in the best operand layout measured (the
  layout glasstorch hands OpenBLAS, and both operands C-contiguous: the faster of the two), im2col
  copies, the element-wise passes, the optimizer update -- with no Tensor, no autograd, no checks;
* each GEMM and pooling kernel again in torch, same shapes (what oneDNN/ATen take for the same work).

The sum of the NumPy parts is the *floor*: what a glasstorch step costs if everything but NumPy's own
work were free. floor / torch step is the best ratio this design (NumPy + OpenBLAS) can reach; glasstorch
/ floor is what per-op Python, autograd and kernel layout cost on top of it. The torch column beside a
GEMM says how far OpenBLAS is from oneDNN on that shape (packing the larger operand at every call:
~50 us for a 1024x256 float32 weight, which a (32 x 256) @ (256 x 1024) step product pays 35 times
forward and 35 times backward).

    python bench/bench_floor.py                       # all four workloads (~2 min)
    python bench/bench_floor.py --rows lstm --reps 9

The element-wise parts are sized as the step's (same shapes, same number of passes as the fused
kernels' NumPy code); a part marked ``x35`` is one LSTM time step's work repeated for the 35 steps.
The figures are a benchmark, not a test.
"""
import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "bench"))

import numpy as np  # noqa: E402
from numpy.lib.stride_tricks import as_strided  # noqa: E402

F32 = np.float32
_rng = np.random.default_rng(0)


def _arr(*shape, order="C", scale=0.1):
    a = (_rng.standard_normal(shape) * scale).astype(F32)
    return np.asfortranarray(a) if order == "F" else a


def _cpu_ms(fn, iters):
    c0 = time.thread_time()
    for _ in range(iters):
        fn()
    return (time.thread_time() - c0) / iters * 1e3


def _iters(fn, target_ms=20.0):
    fn()
    return max(1, min(200, int(target_ms / max(_cpu_ms(fn, 1), 1e-3))))


# ---- parts ---------------------------------------------------------------------------------------
class Parts:
    """A workload's hand-written parts: (name, repeat, numpy candidates, torch callable or None)."""

    def __init__(self, torch):
        self.torch = torch
        self.rows = []

    def gemm(self, name, a, b, repeat=1):
        """a @ b as glasstorch lays the operands out, and with both C-contiguous; torch on the same."""
        ac, bc = np.ascontiguousarray(a), np.ascontiguousarray(b)
        out = np.empty((a.shape[0], b.shape[1]), F32)
        ta, tb = self.torch.from_numpy(ac), self.torch.from_numpy(bc)
        layout = "".join("C" if x.flags.c_contiguous else "F" for x in (a, b))
        self.rows.append((f"{name} {a.shape[0]}x{a.shape[1]}x{b.shape[1]} ({layout})", repeat,
                          [lambda: np.dot(a, b, out=out), lambda: np.dot(ac, bc, out=out)], lambda: ta @ tb))

    def bmm(self, name, a, b, repeat=1):
        ta, tb = self.torch.from_numpy(a), self.torch.from_numpy(b)
        self.rows.append((f"{name} {a.shape[0]}x({a.shape[1]}x{a.shape[2]}x{b.shape[2]})", repeat,
                          [lambda: np.matmul(a, b)], lambda: self.torch.bmm(ta, tb)))

    def kernel(self, name, fn, torch_fn=None, repeat=1):
        """``fn`` None: a torch-only row (torch's whole kernel for work the NumPy rows split in parts)."""
        self.rows.append((name, repeat, [fn] if fn is not None else [], torch_fn))


def _sgd(params, grads):
    def update():
        for p, g in zip(params, grads):
            p -= 0.1 * g
    return update


# ---- the workloads -------------------------------------------------------------------------------
def mlp_parts(P):
    x = _arr(256, 784, scale=1.0)
    W = [_arr(256, 784), _arr(256, 256), _arr(10, 256)]
    h = [_arr(256, 256, scale=1.0), _arr(256, 256, scale=1.0)]
    g = [_arr(256, 256), _arr(256, 256), _arr(256, 10)]
    for i, (inp, w) in enumerate(zip([x] + h, W)):           # forward: x @ W^T (W^T: a column-major view)
        P.gemm(f"fwd linear{i + 1}", inp, w.T)
    for i, (inp, w, gi) in enumerate(zip([x] + h, W, g)):    # backward: dW = g^T x, dx = g W
        P.gemm(f"dW linear{i + 1}", gi.T, inp)
        if i:
            P.gemm(f"dx linear{i + 1}", gi, w)
    a = h[0]
    out = np.empty_like(a)
    mask = np.empty(a.shape, bool)
    P.kernel("relu fwd+bwd x2 (256x256)", lambda: (np.maximum(a, 0, out=out), np.greater(a, 0, out=mask),
                                                   np.multiply(g[0], mask, out=out),
                                                   np.maximum(a, 0, out=out), np.greater(a, 0, out=mask),
                                                   np.multiply(g[0], mask, out=out)))
    logits = _arr(256, 10, scale=1.0)
    P.kernel("log_softmax + nll fwd/bwd (256x10)", lambda: _log_softmax_nll(logits))
    params = W + [_arr(256), _arr(256), _arr(10)]
    P.kernel("bias grads (column sums)", lambda: [gi.sum(0) for gi in g])
    P.kernel("SGD update", _sgd(params, [p.copy() for p in params]))


def _log_softmax_nll(z):
    m = z.max(1, keepdims=True)
    s = z - m
    lse = np.log(np.exp(s).sum(1, keepdims=True))
    logp = s - lse
    grad = np.exp(logp)
    grad /= z.shape[0]
    return logp, grad


def _cols_batch_first(x, k, p):
    """(N, C, H, W) -> per-image columns (N, C*k*k, L) (what glasstorch's batch-first layout copies)."""
    n, c, s = x.shape[0], x.shape[1], x.shape[2]
    xp_ = np.zeros((n, c, s + 2 * p, s + 2 * p), F32)
    xp_[:, :, p:p + s, p:p + s] = x
    o = s + 2 * p - k + 1
    st = xp_.strides
    win = as_strided(xp_, (n, c, k, k, o, o), (st[0], st[1], st[2], st[3], st[2], st[3]))
    return win.reshape(n, c * k * k, o * o)


def _cols_batch_last(x, k):
    """(N, C, H, W) -> (C*k*k, L*N) columns with runs of N (glasstorch's batch-last layout)."""
    n, c, s = x.shape[0], x.shape[1], x.shape[2]
    xt = np.ascontiguousarray(x.transpose(1, 2, 3, 0))
    o = s - k + 1
    st = xt.strides
    win = as_strided(xt, (c, k, k, o, o, n), (st[0], st[1], st[2], st[1], st[2], st[3]))
    return win.reshape(c * k * k, o * o * n)


def _pool2(x, g):
    """2x2 max pooling, stride 2: the maximum of the four strided views; its backward gives each
    window's gradient to the view holding the maximum (ties aside)."""
    views = [x[:, :, i::2, j::2] for i in (0, 1) for j in (0, 1)]
    y = np.maximum(np.maximum(views[0], views[1]), np.maximum(views[2], views[3]))
    gx = np.zeros_like(x)
    for i, v in enumerate(views):
        np.multiply(g, v == y, out=gx[:, :, i // 2::2, i % 2::2])
    return y, gx


def lenet_parts(P):
    T = P.torch
    x = _arr(128, 1, 28, 28, scale=1.0)
    w1, w2 = _arr(6, 25), _arr(16, 150)
    a1 = _arr(128, 6, 28, 28, scale=1.0)                       # conv1's output (before pooling)
    x2 = _arr(128, 6, 14, 14, scale=1.0)                       # conv2's input
    g2 = _arr(128, 16, 10, 10)
    g1 = _arr(128, 6, 28, 28)
    cols1 = _cols_batch_first(x, 5, 2)
    y1 = np.empty((128, 6, 784), F32)
    P.kernel("conv1 im2col (batch first, 128x25x784)", lambda: _cols_batch_first(x, 5, 2),
             None)
    P.kernel("conv1 fwd GEMMs, per image (6x25 @ 25x784)", lambda: np.matmul(w1, cols1, out=y1))
    tx, tw1 = T.from_numpy(x), T.from_numpy(w1.reshape(6, 1, 5, 5))
    P.kernel("conv1 fwd (torch: the whole convolution)", None,
             lambda: T.nn.functional.conv2d(tx, tw1, padding=2))
    g1r = g1.reshape(128, 6, 784)
    P.kernel("conv1 dW, per image, summed", lambda: np.matmul(g1r, cols1.transpose(0, 2, 1)).sum(0))
    cols2 = _cols_batch_last(x2, 5)
    P.kernel("conv2 im2col (batch last, 150x12800)", lambda: _cols_batch_last(x2, 5))
    P.gemm("conv2 fwd", w2, cols2)
    tx2, tw2 = T.from_numpy(x2), T.from_numpy(w2.reshape(16, 6, 5, 5))
    P.kernel("conv2 fwd (torch: the whole convolution)", None, lambda: T.nn.functional.conv2d(tx2, tw2))
    y2 = np.empty((16, 12800), F32)
    P.kernel("conv2 output to (N, O, H, W)", lambda: np.ascontiguousarray(
        y2.reshape(16, 10, 10, 128).transpose(3, 0, 1, 2)))
    rows2 = np.ascontiguousarray(g2.transpose(1, 2, 3, 0)).reshape(16, 12800)
    P.kernel("conv2 grad_output to rows (16x12800)", lambda: np.ascontiguousarray(g2.transpose(1, 2, 3, 0)))
    P.gemm("conv2 dW", cols2, rows2.T)
    P.gemm("conv2 dcols (W^T g)", np.ascontiguousarray(w2.T), rows2)
    dcols = np.empty((6, 5, 5, 10, 10, 128), F32)

    def col2im():
        img = np.zeros((6, 14, 14, 128), F32)
        for i in range(5):
            for j in range(5):
                img[:, i:i + 10, j:j + 10] += dcols[:, i, j]
        return np.ascontiguousarray(img.transpose(3, 0, 1, 2))
    P.kernel("conv2 col2im (25 strided adds)", col2im)
    for name, a in (("pool1 (128x6x28x28)", a1), ("pool2 (128x16x10x10)", _arr(128, 16, 10, 10, scale=1.0))):
        ta = T.tensor(a, requires_grad=True)
        ga = _arr(a.shape[0], a.shape[1], a.shape[2] // 2, a.shape[3] // 2)
        tga = T.from_numpy(ga)
        P.kernel(f"{name} fwd+bwd", lambda a=a, ga=ga: _pool2(a, ga),
                 lambda ta=ta, tga=tga: T.nn.functional.max_pool2d(ta, 2, 2).backward(tga))
    out1 = np.empty_like(a1)
    mask1 = np.empty(a1.shape, bool)
    P.kernel("relu fwd+bwd (128x6x28x28)", lambda: (np.maximum(a1, 0, out=out1), np.greater(a1, 0, out=mask1),
                                                    np.multiply(g1, mask1, out=out1)))
    for i, (k, n) in enumerate(((400, 120), (120, 84), (84, 10))):
        inp = _arr(128, k, scale=1.0)
        w = _arr(n, k)
        g = _arr(128, n)
        P.gemm(f"fwd linear{i + 1}", inp, w.T)
        P.gemm(f"dW linear{i + 1}", g.T, inp)
        P.gemm(f"dx linear{i + 1}", g, w)
    P.kernel("log_softmax + nll fwd/bwd (128x10)", lambda: _log_softmax_nll(_arr(128, 10)))
    params = [_arr(6, 1, 5, 5), _arr(6), _arr(16, 6, 5, 5), _arr(16), _arr(120, 400), _arr(120), _arr(84, 120),
              _arr(84), _arr(10, 84), _arr(10)]
    P.kernel("SGD update", _sgd(params, [p.copy() for p in params]))


def lstm_parts(P):
    steps, B, H, V = 35, 32, 256, 28
    N = steps * B
    onehot = np.zeros((N, V), F32)
    onehot[np.arange(N), _rng.integers(0, V, N)] = 1
    w_ih, w_hh, b = _arr(4 * H, V), _arr(4 * H, H), _arr(4 * H)
    w_hh_t = np.ascontiguousarray(w_hh.T)
    P.gemm("input projection X W_ih^T", onehot, w_ih.T)
    xw = np.empty((N, 4 * H), F32)
    P.kernel("both biases, one pass (1120x1024)", lambda: np.add(xw, b, out=xw))
    h, c = _arr(B, H, scale=1.0), _arr(B, H, scale=1.0)
    P.gemm("step: h W_hh^T", h, w_hh_t, repeat=steps)
    gates = _arr(B, 4 * H, scale=1.0)
    g = gates.copy()
    tc, cn, tmp = np.empty((B, H), F32), np.empty((B, H), F32), np.empty((B, H), F32)

    def cell_forward():   # what the fused forward does per step: the gate sums, sigmoid/tanh, the state
        np.add(g, gates, out=g)
        np.negative(g, out=g)
        np.exp(g, out=g)
        np.add(g, 1, out=g)
        np.reciprocal(g, out=g)
        gg = g[:, 2 * H:3 * H]
        gg *= 2
        gg -= 1
        np.multiply(g[:, H:2 * H], c, out=cn)
        np.multiply(g[:, :H], gg, out=tmp)
        np.add(cn, tmp, out=cn)
        np.tanh(cn, out=tc)
        np.multiply(g[:, 3 * H:], tc, out=tmp)
        g[:] = gates
    with np.errstate(over="ignore"):
        cell_forward()
    P.kernel("step: gates and state, element-wise", cell_forward, repeat=steps)
    out = _arr(N, H, scale=1.0)
    w_d = _arr(V, H)
    P.gemm("head fwd", out, w_d.T)
    P.kernel("log_softmax + nll fwd/bwd (1120x28)", lambda: _log_softmax_nll(_arr(N, V)))
    dlog = _arr(N, V)
    P.gemm("head dW", dlog.T, out)
    P.gemm("head dx", dlog, w_d)
    dg = _arr(B, 4 * H)
    P.gemm("step: dG W_hh", dg, w_hh, repeat=steps)
    acts = np.abs(_arr(B, 4 * H, scale=0.3))
    dh, dc, dct = _arr(B, H), _arr(B, H), np.empty((B, H), F32)
    dgo = np.empty((B, 4 * H), F32)

    def cell_backward():   # the local derivatives of the four gates and the state, per step
        i, f, gg, o = acts[:, :H], acts[:, H:2 * H], acts[:, 2 * H:3 * H], acts[:, 3 * H:]
        dht = dh + dc
        np.multiply(tc, tc, out=dct)
        np.subtract(1, dct, out=dct)
        np.multiply(dct, o, out=dct)
        np.multiply(dct, dht, out=dct)
        np.add(dct, dc, out=dct)
        np.multiply(dht * tc, o * (1 - o), out=dgo[:, 3 * H:])
        np.multiply(dct * gg, i * (1 - i), out=dgo[:, :H])
        np.multiply(dct * c, f * (1 - f), out=dgo[:, H:2 * H])
        np.multiply(dct * i, 1 - gg * gg, out=dgo[:, 2 * H:3 * H])
        np.multiply(dct, f, out=tmp)
    P.kernel("step: gate gradients, element-wise", cell_backward, repeat=steps)
    dG = _arr(N, 4 * H)
    h_prev = _arr(N, H, scale=1.0)
    P.gemm("dW_hh = dG^T H_prev", dG.T, h_prev)
    P.gemm("dW_ih = dG^T X", dG.T, onehot)
    P.kernel("bias grad (column sums of dG)", lambda: dG.sum(0))
    params = [w_ih, w_hh, b, b.copy(), w_d, _arr(V)]
    grads = [p.copy() for p in params]

    def clip():
        norms = [np.sqrt(np.dot(gr.ravel(), gr.ravel())) for gr in grads]
        total = np.sqrt(sum(n * n for n in norms))
        scale = F32(min(1.0, 1.0 / (total + 1e-6)))
        for gr in grads:
            gr *= scale
    P.kernel("clip_grad_norm_ (6 norms, 6 scalings)", clip)
    P.kernel("SGD update", _sgd([p.copy() for p in params], grads))


def transformer_parts(P):
    T = P.torch
    Bt, S, D, Hh, Fd = 32, 64, 128, 4, 512
    M = Bt * S
    x = _arr(M, D, scale=1.0)
    w_in, w_out, w1, w2 = _arr(3 * D, D), _arr(D, D), _arr(Fd, D), _arr(D, Fd)
    hid = _arr(M, Fd, scale=1.0)
    for name, inp, w in (("in_proj", x, w_in), ("out_proj", x, w_out), ("ffn1", x, w1), ("ffn2", hid, w2)):
        g = _arr(M, w.shape[0])
        P.gemm(f"fwd {name}", inp, w.T)
        P.gemm(f"dW {name}", g.T, inp)
        P.gemm(f"dx {name}", g, w)
    q, k, v = (_arr(Bt * Hh, S, D // Hh, scale=1.0) for _ in range(3))
    att = np.abs(_arr(Bt * Hh, S, S))
    P.bmm("scores q k^T", q, np.ascontiguousarray(k.transpose(0, 2, 1)))
    P.bmm("attn v", att, v)
    P.bmm("d(attn) = g v^T", _arr(Bt * Hh, S, D // Hh), np.ascontiguousarray(v.transpose(0, 2, 1)))
    P.bmm("dv = attn^T g", np.ascontiguousarray(att.transpose(0, 2, 1)), _arr(Bt * Hh, S, D // Hh))
    P.bmm("dq = ds k", att, k)
    P.bmm("dk = ds^T q", np.ascontiguousarray(att.transpose(0, 2, 1)), q)
    scores = _arr(Bt * Hh, S, S, scale=1.0)
    ts = T.from_numpy(scores)

    def softmax():
        e = np.exp(scores - scores.max(-1, keepdims=True))
        e /= e.sum(-1, keepdims=True)
        return e
    P.kernel("softmax fwd (128x64x64)", softmax, lambda: T.softmax(ts, -1))
    gs = _arr(Bt * Hh, S, S)
    P.kernel("softmax bwd", lambda: att * (gs - (gs * att).sum(-1, keepdims=True)))

    def layer_norm():
        mu = x.mean(-1, keepdims=True)
        xc = x - mu
        var = np.einsum("ij,ij->i", xc, xc)[:, None] / D
        return xc / np.sqrt(var + 1e-5)
    tx = T.from_numpy(x)
    P.kernel("layer norm fwd x2 (2048x128)", lambda: (layer_norm(), layer_norm()),
             lambda: (T.nn.functional.layer_norm(tx, (D,)), T.nn.functional.layer_norm(tx, (D,))))
    gx = _arr(M, D)

    def layer_norm_bwd():
        xh = layer_norm()
        a = (gx * xh).mean(-1, keepdims=True)
        return gx - gx.mean(-1, keepdims=True) - xh * a
    P.kernel("layer norm bwd x2", lambda: (layer_norm_bwd(), layer_norm_bwd()))
    mask = np.empty(hid.shape, bool)
    outh = np.empty_like(hid)
    P.kernel("relu fwd+bwd (2048x512)", lambda: (np.maximum(hid, 0, out=outh), np.greater(hid, 0, out=mask),
                                                 np.multiply(hid, mask, out=outh)))
    P.kernel("residual adds x2, (layer(x)**2).mean and its grad", lambda: (x + gx, x + gx, (x * x).mean(), x * 2))
    params = [w_in, _arr(3 * D), w_out, _arr(D), w1, _arr(Fd), w2, _arr(D)] + [_arr(D) for _ in range(4)]
    grads = [p.copy() for p in params]
    m = [np.zeros_like(p) for p in params]
    v2 = [np.zeros_like(p) for p in params]

    def adam():
        for p, g, mm, vv in zip(params, grads, m, v2):
            mm *= 0.9
            mm += 0.1 * g
            vv *= 0.999
            vv += 0.001 * g * g
            p -= 1e-3 * mm / (np.sqrt(vv) + 1e-8)
    P.kernel("Adam update (12 params)", adam)


BUILDERS = {"mlp": mlp_parts, "lenet": lenet_parts, "lstm": lstm_parts, "transformer": transformer_parts}


def measure(row, gt, torch, reps):
    import bench_workloads as bw
    P = Parts(torch)
    BUILDERS[row](P)
    steps = {"glasstorch": bw.make_step(gt, row), "torch": bw.make_step(torch, row)}
    for fn in steps.values():
        fn(), fn()
    step_iters = {k: _iters(fn, 60.0) for k, fn in steps.items()}
    part_iters = [([_iters(c) for c in cands], _iters(tfn) if tfn else 0) for _, _, cands, tfn in P.rows]
    step_t = {k: [] for k in steps}
    part_t = [([[] for _ in cands], []) for _, _, cands, _ in P.rows]
    for _ in range(reps):
        for k, fn in steps.items():
            step_t[k].append(_cpu_ms(fn, step_iters[k]))
        for (name, rep, cands, tfn), (ci, ti), (ct, tt) in zip(P.rows, part_iters, part_t):
            for c, n, acc in zip(cands, ci, ct):
                acc.append(_cpu_ms(c, n))
            if tfn:
                tt.append(_cpu_ms(tfn, ti))
    med = statistics.median
    print(f"\n### {row}\n")
    print("| part | x | NumPy ms (floor layout) | as glasstorch lays it out | torch ms | NumPy / torch |")
    print("|---|---|---|---|---|---|")
    floor = 0.0
    for (name, rep, cands, tfn), (ct, tt) in zip(P.rows, part_t):
        meds = [med(a) for a in ct]
        best = min(meds) * rep if meds else None
        floor += best or 0.0
        tm = med(tt) * rep if tfn else None
        given = f"{meds[0] * rep:.3f}" if len(meds) > 1 else ""
        print(f"| {name} | {rep} | {'' if best is None else f'{best:.3f}'} | {given} | "
              f"{'' if tm is None else f'{tm:.3f}'} | {'' if tm is None or best is None else f'{best / tm:.2f}x'} |")
    g, t = med(step_t["glasstorch"]), med(step_t["torch"])
    print(f"\nstep (CPU ms, median of {reps}): glasstorch {g:.2f}, torch {t:.2f} ({g / t:.2f}x); NumPy floor "
          f"{floor:.2f} ({floor / t:.2f}x torch); glasstorch / floor {g / floor:.2f}x")
    return g, t, floor


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="mlp,lenet,lstm,transformer")
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args()
    import torch
    import glasstorch as gt
    from threadpoolctl import threadpool_limits
    threadpool_limits(limits=1)
    torch.set_num_threads(1)
    print(f"glasstorch {gt.__version__}, torch {torch.__version__}, numpy {np.__version__}; one thread; "
          f"load average before: {os.getloadavg()[0]:.1f}; {args.reps} interleaved repetitions, thread CPU time")
    summary = []
    with np.errstate(over="ignore"):
        for row in args.rows.split(","):
            summary.append((row,) + measure(row, gt, torch, args.reps))
    print("\n| workload | glasstorch ms | torch ms | NumPy floor ms | glasstorch / torch | floor / torch | "
          "glasstorch / floor |")
    print("|---|---|---|---|---|---|---|")
    for row, g, t, f in summary:
        print(f"| {row} | {g:.2f} | {t:.2f} | {f:.2f} | {g / t:.2f}x | {f / t:.2f}x | {g / f:.2f}x |")
    print(f"\nload average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
