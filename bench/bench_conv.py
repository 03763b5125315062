"""Convolution and pooling, glasstorch against torch in the same process (issue 13's LeNet row).

Rows (each the median of interleaved repetitions: glasstorch, torch, glasstorch, ...; one thread
each: torch.set_num_threads(1), NumPy's BLAS limited with threadpoolctl):

  lenet      LeNet with ReLU and max pooling (Conv2d(1,6,5,p=2) ReLU MaxPool2d(2) Conv2d(6,16,5) ReLU
             MaxPool2d(2) Linear 400-120-84-10), 1x28x28, batch 128: forward, cross_entropy,
             backward, SGD
  conv       one Conv2d(6, 16, 5) layer on (128, 6, 14, 14): forward + backward (input and weight
             gradients), LeNet's second convolution
  conv3x3    Conv2d(32, 64, 3, padding=1) on (32, 32, 16, 16): forward + backward
  maxpool    MaxPool2d(2) on (128, 6, 28, 28): forward + backward

    python bench/bench_conv.py [--reps 31] [--rows lenet,conv] [--tree PATH]

``--tree`` imports glasstorch from another checkout (to measure a before/after pair: run both, the
ratios to torch are comparable across runs; the absolute times move with the machine's load).
Each row shows the wall-clock medians and their ratio, then the same for the thread's CPU time (robust
when other processes share the cores: the wall time then also counts their turns); IQR is the
interquartile range of the per-repetition ratios. The figures are a benchmark, not a test.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np


def lenet(nn):
    return nn.Sequential(nn.Conv2d(1, 6, kernel_size=5, padding=2), nn.ReLU(), nn.MaxPool2d(kernel_size=2, stride=2),
                         nn.Conv2d(6, 16, kernel_size=5), nn.ReLU(), nn.MaxPool2d(kernel_size=2, stride=2),
                         nn.Flatten(), nn.Linear(16 * 5 * 5, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                         nn.Linear(84, 10))


def _weights(T, model, rng):
    with T.no_grad():
        for p in model.parameters():
            p.copy_(T.tensor((rng.standard_normal(tuple(p.shape)) * 0.1).astype(np.float32)))


def make_lenet(T):
    rng = np.random.default_rng(0)
    model = lenet(T.nn)
    _weights(T, model, rng)
    x = T.tensor(rng.standard_normal((128, 1, 28, 28)).astype(np.float32))
    y = T.tensor(rng.integers(0, 10, 128))

    def step():
        loss = T.nn.functional.cross_entropy(model(x), y)
        for p in model.parameters():
            p.grad = None
        loss.backward()
        with T.no_grad():
            for p in model.parameters():
                p -= 0.1 * p.grad
        return loss.item()
    return step


def _layer_row(layer, shape):
    def make(T):
        rng = np.random.default_rng(1)
        model = layer(T.nn)
        _weights(T, model, rng)
        x = T.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True)

        def step():
            out = model(x)
            x.grad = None
            for p in model.parameters():
                p.grad = None
            out.backward(T.ones_like(out))
            return float(x.grad[0].sum())
        return step
    return make


ROWS = {
    "lenet": make_lenet,
    "conv": _layer_row(lambda nn: nn.Conv2d(6, 16, 5), (128, 6, 14, 14)),
    "conv3x3": _layer_row(lambda nn: nn.Conv2d(32, 64, 3, padding=1), (32, 32, 16, 16)),
    "maxpool": _layer_row(lambda nn: nn.MaxPool2d(2), (128, 6, 28, 28)),
}


def timed(fn, iters):
    """(wall ms, CPU ms of this thread) per call. One thread each, so the thread's CPU time is all the
    work; unlike the wall time, it does not count the moments another process had the core."""
    t0, c0 = time.perf_counter(), time.thread_time()
    for _ in range(iters):
        fn()
    return (time.perf_counter() - t0) / iters * 1e3, (time.thread_time() - c0) / iters * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=31)
    ap.add_argument("--iters", type=int, default=3, help="steps per timed repetition")
    ap.add_argument("--rows", default=",".join(ROWS))
    ap.add_argument("--tree", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                    help="the checkout to import glasstorch from")
    args = ap.parse_args()
    sys.path.insert(0, os.path.abspath(args.tree))

    import torch
    import glasstorch
    from threadpoolctl import threadpool_limits
    torch.set_num_threads(1)
    print(f"glasstorch from {os.path.dirname(glasstorch.__file__)}")
    with threadpool_limits(limits=1):
        print(f"{'':8} {'wall ms: ours':>17} {'':>18} {'CPU ms: ours':>19}")
        print(f"{'row':8} {'ours':>8} {'torch':>9} {'ratio':>6} {'IQR':>10}   {'ours':>8} {'torch':>9} {'ratio':>6} "
              f"{'IQR':>10}")
        for row in args.rows.split(","):
            ours, theirs = ROWS[row](glasstorch), ROWS[row](torch)
            la, lb = ours(), theirs()
            assert abs(la - lb) < 1e-3 * max(1.0, abs(lb)), (row, la, lb)   # the same computation
            a, b = [], []
            for _ in range(args.reps):
                a.append(timed(ours, args.iters))
                b.append(timed(theirs, args.iters))
            cols = []
            for k in (0, 1):   # wall, CPU: medians and the interquartile range of the per-rep ratios
                r = [x[k] / y[k] for x, y in zip(a, b)]
                q = statistics.quantiles(r, n=4)
                cols.append(f"{statistics.median(x[k] for x in a):8.2f} {statistics.median(y[k] for y in b):9.2f} "
                            f"{statistics.median(r):5.2f}x {q[0]:5.2f}-{q[2]:4.2f}")
            print(f"{row:8} {cols[0]}   {cols[1]}", flush=True)


if __name__ == "__main__":
    main()
