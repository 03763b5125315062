"""The floor under bench_compile.py's MLP and Transformer rows: the same training step written by hand
in NumPy at its best, timed against torch eager (and glasstorch compiled) in the same run.

What a generated step can at best be on NumPy: every GEMM in the layout OpenBLAS runs fastest, its
result written into a buffer allocated once (``out=``), element-wise work in place, the gradients
written straight into one flat buffer and the optimizer's update made over all parameters at once
(SGD: one pass; Adam: ~10 passes over the flat state), no Python objects but arrays. If this floor
is above a goal ratio, no code generator on NumPy reaches the goal on this machine.

* chain       -- 50 rounds of ``h = mm(tanh((h + b) * w), w)`` on 32x32 float32, sum, backward (x, w, b),
  as bench_compile.py's (``--only chain``; not in the default list);
* mlp         -- 784-256-256-10, batch 256, cross_entropy, SGD (lr 0.01), as bench_compile.py's;
* transformer -- nn.TransformerEncoderLayer(128, 4, dim_feedforward=512, dropout=0, batch_first),
  batch 32 x seq 64, mse_loss, Adam (torch's defaults), as bench_compile.py's.

Columns (ms of the process's CPU time per step, one thread each, repetitions interleaved):
numpy floor, torch eager, glasstorch compiled (the loss compiled; backward and step outside), with
--step glasstorch's whole step compiled. Before timing, the floor's loss and gradients are checked
against torch's autograd on the same weights (--check-only stops there).

    python bench/bench_compile_floor.py [--reps 5] [--only mlp transformer] [--stat min] [--step] [--parts]

--parts times the floor's pieces (GEMMs, the rest) for the Transformer, as a breakdown.
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import bench_compile  # noqa: E402

f32 = np.float32


class Flat:
    """Parameters (or gradients, or optimizer state) as views of one flat float32 array, in order."""

    def __init__(self, shapes):
        self.shapes = shapes
        self.flat = np.zeros(sum(int(np.prod(s)) for s in shapes.values()), f32)
        self.views, k = {}, 0
        for name, s in shapes.items():
            n = int(np.prod(s))
            self.views[name] = self.flat[k:k + n].reshape(s)
            k += n

    def __getitem__(self, name):
        return self.views[name]


# -- the chain ---------------------------------------------------------------------------------
class ChainFloor:
    """bench_compile.py's chain (50 rounds of ``h = mm(tanh((h + b) * w), w)``, sum, backward to x, w, b),
    every array allocated once: ~4 NumPy calls per round forward, ~11 backward."""

    def __init__(self, x, w, b, rounds=50):
        self.x, self.w, self.b = x, w, b
        self.a = [np.empty_like(x) for _ in range(rounds)]       # h + b, saved
        self.t = [np.empty_like(x) for _ in range(rounds)]       # tanh((h + b) * w), saved
        self.h = [np.empty_like(x) for _ in range(rounds)]
        self.gx, self.gw, self.gb = np.empty_like(x), np.empty_like(w), np.empty_like(b)
        self.g, self.tmp, self.tmp2 = np.empty_like(x), np.empty_like(x), np.empty_like(x)

    def step(self):
        w, b = self.w, self.b
        h = self.x
        for a, t, out in zip(self.a, self.t, self.h):
            np.add(h, b, out=a)
            np.multiply(a, w, out=t)
            np.tanh(t, out=t)
            h = np.matmul(t, w, out=out)
        loss = h.sum()
        g, tmp, tmp2, gw, gb = self.g, self.tmp, self.tmp2, self.gw, self.gb
        g.fill(1)
        gw.fill(0)
        gb.fill(0)
        for a, t in zip(reversed(self.a), reversed(self.t)):
            np.matmul(t.T, g, out=tmp)                 # mm's gradient for w
            gw += tmp
            np.matmul(g, w.T, out=tmp)                 # ... for t
            np.multiply(t, t, out=tmp2)                # tanh's: g * (1 - t * t)
            np.subtract(1, tmp2, out=tmp2)
            tmp *= tmp2
            np.multiply(tmp, a, out=tmp2)              # mul's, for w
            gw += tmp2
            np.multiply(tmp, w, out=g)                 # ... for h + b
            gb += g
        np.copyto(self.gx, g)
        return loss


# -- MLP ---------------------------------------------------------------------------------------
class MLPFloor:
    """x @ W1.T + b1, ReLU, ... , cross_entropy, backward, SGD; every array allocated once."""

    def __init__(self, weights, x, y, lr=0.01):
        self.p = Flat({k: v.shape for k, v in weights.items()})
        for k, v in weights.items():
            self.p[k][...] = v
        self.g = Flat(self.p.shapes)
        self.tmp = np.empty_like(self.p.flat)
        self.x, self.y, self.lr = x, y, f32(lr)
        n = x.shape[0]
        self.h1 = np.empty((n, 256), f32)
        self.h2 = np.empty((n, 256), f32)
        self.z = np.empty((n, 10), f32)
        self.d2 = np.empty((n, 256), f32)
        self.d1 = np.empty((n, 256), f32)
        self.rows = np.arange(n)

    def step(self):
        p, g, x = self.p, self.g, self.x
        h1, h2, z = self.h1, self.h2, self.z
        np.matmul(x, p["0.weight"].T, out=h1)
        h1 += p["0.bias"]
        np.maximum(h1, 0, out=h1)
        np.matmul(h1, p["2.weight"].T, out=h2)
        h2 += p["2.bias"]
        np.maximum(h2, 0, out=h2)
        np.matmul(h2, p["4.weight"].T, out=z)
        z += p["4.bias"]
        # cross_entropy: log_softmax, nll (mean); its gradient softmax - onehot, / n
        z -= z.max(1, keepdims=True)
        e = np.exp(z)
        s = e.sum(1, keepdims=True)
        n = z.shape[0]
        loss = (np.log(s[:, 0]) - z[self.rows, self.y]).mean()
        dz = np.divide(e, s, out=e)
        dz[self.rows, self.y] -= 1
        dz *= f32(1 / n)
        np.matmul(dz.T, h2, out=g["4.weight"])
        np.add.reduce(dz, 0, out=g["4.bias"])
        d2 = np.matmul(dz, p["4.weight"], out=self.d2)
        d2 *= h2 > 0
        np.matmul(d2.T, h1, out=g["2.weight"])
        np.add.reduce(d2, 0, out=g["2.bias"])
        d1 = np.matmul(d2, p["2.weight"], out=self.d1)
        d1 *= h1 > 0
        np.matmul(d1.T, x, out=g["0.weight"])
        np.add.reduce(d1, 0, out=g["0.bias"])
        # SGD over the flat buffer: p -= lr * g
        np.multiply(g.flat, self.lr, out=self.tmp)
        p.flat -= self.tmp
        return loss


# -- Transformer encoder layer -------------------------------------------------------------------
def _layer_norm(x, w, b, eps, out):
    mu = x.mean(1, keepdims=True)
    xc = np.subtract(x, mu, out=out)
    var = np.einsum("ij,ij->i", xc, xc)[:, None] / f32(x.shape[1])
    rstd = 1 / np.sqrt(var + f32(eps))
    xc *= rstd                               # xhat, kept for the backward
    y = xc * w
    y += b
    return y, xc, rstd


def _layer_norm_backward(dy, xhat, rstd, w, gw, gb):
    np.einsum("ij,ij->j", dy, xhat, out=gw)
    np.add.reduce(dy, 0, out=gb)
    dxhat = dy * w
    d = dxhat.shape[1]
    a = dxhat.sum(1, keepdims=True) / f32(d)
    c = np.einsum("ij,ij->i", dxhat, xhat)[:, None] / f32(d)
    dxhat -= a
    dxhat -= xhat * c
    dxhat *= rstd
    return dxhat


class TransformerFloor:
    """torch's TransformerEncoderLayer (post-norm, ReLU, no dropout, batch_first) as NumPy, with Adam."""

    def __init__(self, weights, x, y, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, heads=4):
        self.p = Flat({k: v.shape for k, v in weights.items()})
        for k, v in weights.items():
            self.p[k][...] = v
        self.g = Flat(self.p.shapes)
        self.m = np.zeros_like(self.p.flat)
        self.v = np.zeros_like(self.p.flat)
        self.tmp = np.empty_like(self.p.flat)
        self.tmp2 = np.empty_like(self.p.flat)
        self.lr, self.b1, self.b2, self.eps, self.t = lr, betas[0], betas[1], eps, 0
        self.B, self.S, self.D = x.shape
        self.H = heads
        self.x = x.reshape(-1, self.D)
        self.y = y.reshape(-1, self.D)
        self.timer = None

    def _mark(self, name):
        if self.timer is not None:
            self.timer(name)

    def step(self):
        p, g = self.p, self.g
        B, S, D, H = self.B, self.S, self.D, self.H
        hd = D // H
        x = self.x
        N = x.shape[0]
        scale = f32(1 / np.sqrt(hd))
        mark = self._mark
        mark(None)
        # self-attention
        qkv = x @ p["self_attn.in_proj_weight"].T
        mark("gemm")
        qkv += p["self_attn.in_proj_bias"]
        mark("other")
        heads = qkv.reshape(B, S, 3, H, hd).transpose(2, 0, 3, 1, 4)     # (3, B, H, S, hd), views
        q, k, v = heads[0], heads[1], heads[2]
        sc = q @ k.transpose(0, 1, 3, 2)
        mark("bmm")
        sc *= scale
        sc -= sc.max(-1, keepdims=True)
        np.exp(sc, out=sc)
        sc /= sc.sum(-1, keepdims=True)
        P = sc
        mark("other")
        ctx = np.empty((B, S, H, hd), f32)
        np.matmul(P, v, out=ctx.transpose(0, 2, 1, 3))
        mark("bmm")
        ctx = ctx.reshape(N, D)
        ao = ctx @ p["self_attn.out_proj.weight"].T
        mark("gemm")
        ao += p["self_attn.out_proj.bias"]
        ao += x
        x1, xh1, rs1 = _layer_norm(ao, p["norm1.weight"], p["norm1.bias"], 1e-5, ao)
        mark("other")
        f = x1 @ p["linear1.weight"].T
        mark("gemm")
        f += p["linear1.bias"]
        np.maximum(f, 0, out=f)
        mark("other")
        f2 = f @ p["linear2.weight"].T
        mark("gemm")
        f2 += p["linear2.bias"]
        f2 += x1
        out, xh2, rs2 = _layer_norm(f2, p["norm2.weight"], p["norm2.bias"], 1e-5, f2)
        # mse_loss and its gradient
        diff = np.subtract(out, self.y, out=out)
        loss = np.einsum("ij,ij->", diff, diff) / diff.size
        diff *= f32(2 / diff.size)
        dr2 = _layer_norm_backward(diff, xh2, rs2, p["norm2.weight"], g["norm2.weight"], g["norm2.bias"])
        df = self._linear_backward("linear2", dr2, f)
        df *= f > 0
        dx1 = self._linear_backward("linear1", df, x1)
        dx1 += dr2
        dr1 = _layer_norm_backward(dx1, xh1, rs1, p["norm1.weight"], g["norm1.weight"], g["norm1.bias"])
        dctx = self._linear_backward("self_attn.out_proj", dr1, ctx)
        dctx = dctx.reshape(B, S, H, hd).transpose(0, 2, 1, 3)
        dqkv = np.empty((B, S, 3, H, hd), f32)
        dheads = dqkv.transpose(2, 0, 3, 1, 4)
        np.matmul(P.transpose(0, 1, 3, 2), dctx, out=dheads[2])       # dv
        dP = dctx @ v.transpose(0, 1, 3, 2)
        mark("bmm")
        dP -= np.einsum("bhij,bhij->bhi", dP, P)[..., None]
        dP *= P
        dP *= scale
        mark("other")
        np.matmul(dP, k, out=dheads[0])                                  # dq
        np.matmul(dP.transpose(0, 1, 3, 2), q, out=dheads[1])            # dk
        mark("bmm")
        dqkv = dqkv.reshape(N, 3 * D)
        np.add.reduce(dqkv, 0, out=g["self_attn.in_proj_bias"])
        mark("other")
        np.matmul(dqkv.T, x, out=g["self_attn.in_proj_weight"])
        mark("gemm")
        self._adam()
        mark("adam")
        return loss

    def _linear_backward(self, name, dy, x):
        """The gradients of Linear ``name`` (``y = x @ W.T + b``) into the flat buffer; returns ``dy @ W``."""
        np.add.reduce(dy, 0, out=self.g[name + ".bias"])
        self._mark("other")
        np.matmul(dy.T, x, out=self.g[name + ".weight"])
        dx = dy @ self.p[name + ".weight"]
        self._mark("gemm")
        return dx

    def _adam(self):
        """torch's Adam (foreach form) over the flat buffers."""
        self.t += 1
        b1, b2, t = self.b1, self.b2, self.t
        g, m, v, tmp, tmp2 = self.g.flat, self.m, self.v, self.tmp, self.tmp2
        m *= b1                                       # m.lerp_(g, 1 - b1)
        np.multiply(g, f32(1 - b1), out=tmp)
        m += tmp
        v *= b2                                       # v.mul_(b2).addcmul_(g, g, 1 - b2)
        np.multiply(g, g, out=tmp)
        tmp *= f32(1 - b2)
        v += tmp
        step_size = self.lr / (1 - b1 ** t)
        denom = np.sqrt(v, out=tmp)
        denom *= f32(1 / np.sqrt(1 - b2 ** t))
        denom += f32(self.eps)
        np.divide(m, denom, out=tmp2)
        tmp2 *= f32(step_size)
        self.p.flat -= tmp2


# -- cases -------------------------------------------------------------------------------------
def _mlp_data():
    import torch
    torch.manual_seed(0)
    nn = torch.nn
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
    rng = np.random.default_rng(1)
    x = rng.standard_normal((256, 784)).astype(f32)
    y = rng.integers(0, 10, 256)
    return model, x, y


def _transformer_data():
    import torch
    torch.manual_seed(0)
    model = torch.nn.TransformerEncoderLayer(128, 4, dim_feedforward=512, dropout=0.0, batch_first=True)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((32, 64, 128)).astype(f32)
    y = rng.standard_normal((32, 64, 128)).astype(f32)
    return model, x, y


def _chain_data():
    rng = np.random.default_rng(0)      # bench_compile.py's chain_case
    x = rng.standard_normal((32, 32)).astype(f32)
    w = (rng.standard_normal((32, 32)) / 32 ** 0.5).astype(f32)
    b = rng.standard_normal((32, 32)).astype(f32) * f32(0.1)
    return x, w, b


def floor_case(name):
    if name == "chain":
        return ChainFloor(*_chain_data())
    model, x, y = (_mlp_data if name == "mlp" else _transformer_data)()
    weights = {k: v.detach().numpy().copy() for k, v in model.named_parameters()}
    return (MLPFloor if name == "mlp" else TransformerFloor)(weights, x, y)


def check(name):
    """The floor's first step against torch's: loss and every gradient."""
    import torch
    if name == "chain":
        floor = floor_case(name)
        got = floor.step()
        ts = [torch.tensor(a, requires_grad=True) for a in _chain_data()]
        h = ts[0]
        for _ in range(50):
            h = torch.mm(((h + ts[2]) * ts[1]).tanh(), ts[1])
        loss = h.sum()
        loss.backward()
        worst = abs(float(got) - loss.item()) / abs(loss.item())
        for mine, t in zip((floor.gx, floor.gw, floor.gb), ts):
            ref = t.grad.numpy()
            worst = max(worst, float(np.abs(mine - ref).max() / np.abs(ref).max()))
        if worst > 1e-4:
            raise SystemExit(f"chain: the floor disagrees with torch (worst relative difference {worst:.2e})")
        return worst
    model, x, y = (_mlp_data if name == "mlp" else _transformer_data)()
    floor = floor_case(name)
    xt, yt = torch.tensor(x), torch.tensor(y)
    out = model(xt)
    loss = torch.nn.functional.cross_entropy(out, yt) if name == "mlp" else torch.nn.functional.mse_loss(out, yt)
    loss.backward()
    got = floor.step()
    worst = abs(float(got) - loss.item()) / abs(loss.item())
    for k, prm in model.named_parameters():
        ref = prm.grad.numpy()
        worst = max(worst, float(np.abs(floor.g[k] - ref).max() / (np.abs(ref).max() + 1e-30)))
    if worst > 1e-4:
        raise SystemExit(f"{name}: the floor disagrees with torch (worst relative difference {worst:.2e})")
    return worst


def parts(reps):
    """ms per Transformer floor step by kind: GEMMs, batched products, the rest, Adam."""
    floor = floor_case("transformer")
    acc = {}
    last = [None]

    def timer(name):
        now = time.process_time()
        if name is not None:
            acc[name] = acc.get(name, 0.0) + now - last[0]
        last[0] = time.process_time()
    floor.timer = timer
    floor.step()
    acc.clear()
    for _ in range(reps):
        floor.step()
    return {k: v / reps * 1e3 for k, v in acc.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--only", nargs="*", default=["mlp", "transformer"])
    ap.add_argument("--stat", choices=("median", "min"), default="min")
    ap.add_argument("--step", action="store_true", help="also time glasstorch's whole step compiled")
    ap.add_argument("--parts", action="store_true", help="the Transformer floor's time by kind")
    ap.add_argument("--check-only", action="store_true")
    args = ap.parse_args()

    import torch
    import glasstorch as gt
    from threadpoolctl import threadpool_limits
    torch.set_num_threads(1)
    with threadpool_limits(limits=1):
        for name in args.only:
            print(f"{name}: floor matches torch (worst relative difference {check(name):.1e})")
        if args.check_only:
            return
        cols = ["numpy floor", "torch eager", "gt compiled"] + (["gt compiled step"] if args.step else [])
        print(f"one thread each; ms per step, {args.stat} of {args.reps} interleaved repetitions")
        print(f"{'':12}" + "".join(f"{c:>18}" for c in cols) + f"{'floor/torch':>13}{'compiled/torch':>16}")
        for name in args.only:
            case = getattr(bench_compile, f"{name}_case")
            iters = {"chain": 20, "mlp": 10}.get(name, 2)
            steps = [floor_case(name).step, case(torch, lambda f: f), case(gt, gt.compile)]
            if args.step:
                steps.append(case(gt, gt.compile, whole_step=True))
            for s in steps:               # capture, warm up
                s()
                s()
                s()
            times = [[] for _ in steps]
            for _ in range(args.reps):
                for k, s in enumerate(steps):
                    times[k].append(bench_compile.timed(s, iters))
            stat = statistics.median if args.stat == "median" else min
            med = [stat(t) for t in times]
            print(f"{name:12}" + "".join(f"{m:18.2f}" for m in med) + f"{med[0] / med[1]:13.2f}"
                  f"{med[2] / med[1]:16.2f}")
        if args.parts and "transformer" in args.only:
            got = parts(10)
            print("transformer floor by kind, ms: " + ", ".join(f"{k} {v:.2f}" for k, v in got.items())
                  + f" (total {sum(got.values()):.2f})")
        print(f"load average {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
