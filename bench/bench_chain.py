"""The chain of bench_workloads.py (200 small float32 ops on 32x32 tensors: h + b, h * w, h.tanh(),
h @ w, repeated) split by phase, and single op calls, in process CPU time: the figures of
bench/README.md's stop 22 section. One framework per process (pick with FW=torch), so that runs of
two trees (PYTHONPATH=<other tree>) and torch can be interleaved by the caller on a shared machine.

    python bench/bench_chain.py chain fwdbwd      # forward + .sum().backward(), us per op
    python bench/bench_chain.py chain fwd         # forward alone, grad on
    python bench/bench_chain.py chain nograd      # forward under no_grad
    python bench/bench_chain.py calls             # one call each (min of 7 x 20,000), us; among them
                                                  # stop 23's layout cases (s.t() + p, col * 2)
    FW=torch python bench/bench_chain.py chain fwd
    FW=numpy python bench/bench_chain.py chain fwdbwd  # the same arithmetic by hand on arrays, the
                                                  # backward's formulas too (chain_numpy.py): the floor

Instruction counts (deterministic on a shared machine): run the same command under
``valgrind --tool=cachegrind --cache-sim=no`` with ``--steps`` 1 and 4 and take the difference, with
``PYTHONHASHSEED=0`` and bytecode already cached (a first run that writes .pyc files counts their
compilation).
"""
import argparse
import os
import statistics
import time
import timeit

import numpy as np

if os.environ.get("FW") == "torch":
    import torch as T
    T.set_num_threads(1)
elif os.environ.get("FW") == "numpy":      # the chain by hand on arrays (chain_numpy.py): the floor
    from chain_numpy import chain_step as numpy_chain_step
    T = None
else:
    import glasstorch as T

try:
    from threadpoolctl import threadpool_limits
    _BLAS_LIMIT = threadpool_limits(1)     # (kept: the limit holds while this object lives)
except ImportError:     # (set OPENBLAS_NUM_THREADS=1 instead)
    pass

N = 32


def _tensors():
    rng = np.random.default_rng(1)
    if T is None:
        return [a.astype(np.float32) for a in (
            rng.standard_normal((N, N)), rng.standard_normal((N, N)) / N ** 0.5, rng.standard_normal((N, N)) * 0.1)]
    return [T.tensor(a.astype(np.float32), requires_grad=True) for a in (
        rng.standard_normal((N, N)), rng.standard_normal((N, N)) / N ** 0.5, rng.standard_normal((N, N)) * 0.1)]


def chain_step(mode):
    # (bench_workloads.make_step's chain, written out here rather than imported: importing that script
    # puts its own tree first on sys.path, and this one must time whichever tree PYTHONPATH names)
    x, w, b = _tensors()
    if T is None:
        return numpy_chain_step(x, w, b, mode)

    def forward():
        h = x
        for _ in range(50):
            h = h + b
            h = h * w
            h = h.tanh()
            h = h @ w
        return h.sum()

    if mode == "nograd":
        def step():
            with T.no_grad():
                return forward()
    elif mode == "fwd":
        step = forward
    else:
        def step():
            x.grad = w.grad = b.grad = None
            loss = forward()
            loss.backward()
            return loss
    return step


def calls():
    h, w, _ = _tensors()
    rng = np.random.default_rng(2)
    s = T.tensor(rng.standard_normal((N, N)).astype(np.float32))
    p = T.tensor(rng.standard_normal((N, N)).astype(np.float32))
    nc = T.tensor(rng.standard_normal((N, 2 * N)).astype(np.float32))[:, ::2]
    st = s.t()
    col = T.tensor(rng.standard_normal((2 * N, 1)).astype(np.float32))
    return {"s.t() + p (no grad)": (lambda: st + p, False), "col * 2, col (64, 1) (no grad)": (lambda: col * 2, False),
            "h + w": (lambda: h + w, False), "h * w": (lambda: h * w, False), "h.tanh()": (lambda: h.tanh(), False),
            "h @ w": (lambda: h @ w, False), "s + s (no grad)": (lambda: s + s, False),
            "p.add_(s)": (lambda: p.add_(s), False), "p.mul_(0.999)": (lambda: p.mul_(0.999), False),
            "nc.t().unsqueeze(0).squeeze(0), no_grad": (lambda: nc.t().unsqueeze(0).squeeze(0), True)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=("chain", "calls"))
    parser.add_argument("mode", nargs="?", default="fwdbwd", choices=("fwdbwd", "fwd", "nograd"))
    parser.add_argument("--steps", type=int, default=5, help="chain steps per repetition")
    parser.add_argument("--reps", type=int, default=9)
    args = parser.parse_args()
    fw = os.environ.get("FW", "glasstorch")
    if args.what == "chain":
        step = chain_step(args.mode)
        step()
        times = []
        for _ in range(args.reps):
            t = time.process_time()
            for _ in range(args.steps):
                step()
            times.append((time.process_time() - t) / args.steps / 200 * 1e6)
        print(f"{fw} chain {args.mode}: median {statistics.median(times):.2f} us/op (CPU), min {min(times):.2f}")
        return
    for name, (fn, no_grad) in calls().items():
        fn()
        ctx = T.no_grad() if no_grad else None
        if ctx is not None:
            ctx.__enter__()
        t = min(timeit.repeat(fn, number=20000, repeat=7, timer=time.process_time)) / 20000 * 1e6
        if ctx is not None:
            ctx.__exit__(None, None, None)
        print(f"{fw:10s} {name:42s} {t:6.2f} us")


if __name__ == "__main__":
    main()
