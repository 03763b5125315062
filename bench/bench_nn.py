"""One training step of small networks, glasstorch against torch in the same process.

Each row is one step -- forward, cross_entropy, backward, and a plain SGD update written by hand
(p -= lr * p.grad under no_grad) -- timed as the median over interleaved repetitions (glasstorch,
torch, glasstorch, torch, ...), one thread each (torch.set_num_threads(1); NumPy's BLAS limited to
one thread with threadpoolctl). Both frameworks start from the same weights and the same batch.

Rows (others add LSTM/Transformer rows later):

  mlp     784-256-256-10 with ReLU, batch 256                       goal: <= 1.0x torch's time
  lenet   d2l's LeNet (sigmoid, avg pooling), batch 128, 1x28x28     goal: <= 1.3x torch's time

    python bench/bench_nn.py [--reps 21] [--rows mlp,lenet]

The last columns count minor page faults per step: memory that the C allocator gave back to the
operating system and must map (and zero) again. glibc does that to NumPy's large temporaries,
which can cost a third of a LeNet step; torch's allocations stay mapped.

The figures are a benchmark, not a test.
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

GOALS = {"mlp": 1.0, "lenet": 1.3}


def mlp(nn):
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))


def lenet(nn):
    return nn.Sequential(nn.Conv2d(1, 6, kernel_size=5, padding=2), nn.Sigmoid(), nn.AvgPool2d(kernel_size=2, stride=2),
                         nn.Conv2d(6, 16, kernel_size=5), nn.Sigmoid(), nn.AvgPool2d(kernel_size=2, stride=2),
                         nn.Flatten(), nn.Linear(16 * 5 * 5, 120), nn.Sigmoid(), nn.Linear(120, 84), nn.Sigmoid(),
                         nn.Linear(84, 10))


ROWS = {"mlp": (mlp, (256, 784)), "lenet": (lenet, (128, 1, 28, 28))}


def build(T, row, seed=0):
    """The row's model in framework T, its weights copied from one seeded torch-free draw, and a batch."""
    make, shape = ROWS[row]
    model = make(T.nn)
    rng = np.random.default_rng(seed)
    with T.no_grad():
        for p in model.parameters():
            p.copy_(T.tensor((rng.standard_normal(tuple(p.shape)) * 0.1).astype(np.float32)))
    x = T.tensor(rng.standard_normal(shape).astype(np.float32))
    y = T.tensor(rng.integers(0, 10, shape[0]))
    return model, x, y


def step(T, model, x, y, lr=0.1):
    loss = T.nn.functional.cross_entropy(model(x), y)
    for p in model.parameters():
        p.grad = None
    loss.backward()
    with T.no_grad():
        for p in model.parameters():
            p -= lr * p.grad
    return loss


def timed(fn, iters):
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
    return (time.perf_counter() - t0) / iters * 1e3


def page_faults(fn, iters=5):
    """Minor page faults per call (memory the allocator handed back to the OS and touches again)."""
    try:
        import resource
    except ImportError:  # not on this platform
        return float("nan")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(iters):
        fn()
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / iters


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=21)
    ap.add_argument("--iters", type=int, default=3, help="steps per timed repetition")
    ap.add_argument("--rows", default="mlp,lenet")
    args = ap.parse_args()

    import torch
    import glasstorch
    from threadpoolctl import threadpool_limits
    torch.set_num_threads(1)
    with threadpool_limits(limits=1):
        print(f"{'row':8} {'glasstorch ms':>14} {'torch ms':>10} {'ratio':>7} {'goal':>6}      "
              f"{'page faults/step (glasstorch, torch)':>38}")
        for row in args.rows.split(","):
            ours, theirs = build(glasstorch, row), build(torch, row)
            # the same start and the same first loss: both run the same computation
            la, lb = step(glasstorch, *ours).item(), step(torch, *theirs).item()
            assert abs(la - lb) < 1e-3 * max(1.0, abs(lb)), (row, la, lb)
            a, b = [], []
            for _ in range(args.reps):
                a.append(timed(lambda: step(glasstorch, *ours), args.iters))
                b.append(timed(lambda: step(torch, *theirs), args.iters))
            ma, mb = statistics.median(a), statistics.median(b)
            goal = GOALS.get(row)
            mark = "" if goal is None else ("ok" if ma / mb <= goal else "SLOW")
            fa, fb = page_faults(lambda: step(glasstorch, *ours)), page_faults(lambda: step(torch, *theirs))
            print(f"{row:8} {ma:14.2f} {mb:10.2f} {ma / mb:6.2f}x {goal:5.1f}x {mark:4} {fa:20.0f} {fb:10.0f}")


if __name__ == "__main__":
    main()
