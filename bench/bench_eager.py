"""Eager overhead: what glasstorch's Python adds per op, against torch in the same process.

Three figures, each a median over interleaved repetitions (glasstorch, torch, glasstorch, torch, ...),
one thread each (torch.set_num_threads(1); NumPy's BLAS limited to one thread with threadpoolctl):

1. per op     -- a chain of 200 small float32 ops on 32x32 tensors that require grad (add, mul, tanh,
                 matmul, repeated), forward + backward, in microseconds per op;
2. backward() -- the fixed cost of one backward() call, on a tiny graph (x * 2).sum() built beforehand;
3. import     -- `import glasstorch` (and `import torch`) in a fresh interpreter, median of several.

    python bench/bench_eager.py [--reps 15] [--quick]

The figures are what the README's table records; they are a benchmark, not a test.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

N_OPS = 200          # ops per chain (multiple of 4: add, mul, tanh, matmul)
SIZE = 32


def make_inputs(T, seed=0):
    rng = np.random.default_rng(seed)
    x = T.tensor(rng.standard_normal((SIZE, SIZE)).astype(np.float32), requires_grad=True)
    w = T.tensor((rng.standard_normal((SIZE, SIZE)) / SIZE ** 0.5).astype(np.float32), requires_grad=True)
    b = T.tensor(rng.standard_normal((SIZE, SIZE)).astype(np.float32) * 0.1, requires_grad=True)
    return x, w, b


def chain(x, w, b):
    """N_OPS ops, then the loss (one more op) and backward."""
    h = x
    for _ in range(N_OPS // 4):
        h = h + b
        h = h * w
        h = h.tanh()
        h = h @ w
    h.sum().backward()


def time_chain(T, inputs, iters):
    x, w, b = inputs
    t0 = time.perf_counter()
    for _ in range(iters):
        chain(x, w, b)
        x.grad = w.grad = b.grad = None
    return (time.perf_counter() - t0) / iters / (N_OPS + 1) * 1e6  # us per op (the sum counts as one)


def time_backward(T, iters):
    """The fixed cost of backward() itself: graphs are built first, only the backward calls are timed."""
    x = T.ones(1, requires_grad=True)
    losses = [(x * 2).sum() for _ in range(iters)]
    t0 = time.perf_counter()
    for loss in losses:
        loss.backward()
    return (time.perf_counter() - t0) / iters * 1e6


def time_import(module, runs):
    code = ("import time, sys; t0 = time.perf_counter(); import {m}; "
            "print(time.perf_counter() - t0)").format(m=module)
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    times = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
        times.append(float(out.stdout.strip()) * 1e3)
    return statistics.median(times)


def interleaved(fn_a, fn_b, reps):
    a, b = [], []
    for _ in range(reps):
        a.append(fn_a())
        b.append(fn_b())
    return statistics.median(a), statistics.median(b)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--quick", action="store_true", help="fewer repetitions (a smoke run)")
    ap.add_argument("--no-import", action="store_true", help="skip the import-time measurement")
    args = ap.parse_args()
    reps = 3 if args.quick else args.reps
    chain_iters, bw_iters = (2, 200) if args.quick else (10, 2000)

    import torch
    import glasstorch as gt
    from threadpoolctl import threadpool_limits
    torch.set_num_threads(1)
    with threadpool_limits(limits=1):
        gi, ti = make_inputs(gt), make_inputs(torch)
        for T, inp in ((gt, gi), (torch, ti)):  # warm up both
            time_chain(T, inp, 2)
            time_backward(T, 100)
        g_op, t_op = interleaved(lambda: time_chain(gt, gi, chain_iters), lambda: time_chain(torch, ti, chain_iters),
                                 reps)
        g_bw, t_bw = interleaved(lambda: time_backward(gt, bw_iters), lambda: time_backward(torch, bw_iters), reps)

    print(f"glasstorch {gt.__version__}, torch {torch.__version__}, numpy {np.__version__}, "
          f"Python {sys.version.split()[0]}, one thread each")
    print(f"{'':28}{'glasstorch':>12}{'torch':>12}{'ratio':>9}")
    print(f"{'per op (fwd+bwd), us':28}{g_op:12.2f}{t_op:12.2f}{g_op / t_op:9.2f}")
    print(f"{'backward() fixed cost, us':28}{g_bw:12.2f}{t_bw:12.2f}{g_bw / t_bw:9.2f}")
    if not args.no_import:
        runs = 3 if args.quick else 7
        g_imp, t_imp = time_import("glasstorch", runs), time_import("torch", runs)
        print(f"{'import, ms':28}{g_imp:12.1f}{t_imp:12.1f}{g_imp / t_imp:9.2f}")


if __name__ == "__main__":
    main()
