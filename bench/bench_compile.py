"""torch.compile against eager: glasstorch eager, glasstorch compiled, torch eager (and torch's own
compile with --torch-compile), one thread each, medians over interleaved repetitions, in ms per
training step (forward + backward; the optimizer step where there is one), in CPU time of the process.

* chain  -- 200 small float32 ops on 32x32 tensors (add, mul, tanh, mm, repeated), then sum and backward;
* mlp    -- 784-256-256-10 MLP, batch 256, cross_entropy, SGD step;
* lenet  -- LeNet-5 on 1x28x28, batch 128, cross_entropy, SGD step;
* transformer -- one nn.TransformerEncoderLayer (d_model 128, 4 heads, feed-forward 512, no dropout),
  batch 32 x seq 64, mse_loss to a fixed target, Adam step.

The compiled function is the forward and the loss (``loss = compiled(model, x, y)``); backward and
the optimizer step run outside it. With --step, a column for the whole training step compiled as one
function (``zero_grad(); loss(model(x), y).backward(); step()``: its breaks are replayed, see
docs/compile.md); the chain has no optimizer, its "step" is forward + backward.

    python bench/bench_compile.py [--reps 7] [--quick] [--torch-compile] [--step] [--only chain mlp ...] [--stat min]

--stat min reports each column's fastest repetition instead of the median: on a machine shared with
other jobs a repetition is only ever slowed down by them (caches, memory bandwidth, a hyperthread
sibling), so the minimum is the steadier estimate of what the step itself costs.
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402


def chain_case(T, compile_fn, whole_step=False):
    rng = np.random.default_rng(0)
    x = T.tensor(rng.standard_normal((32, 32)).astype(np.float32), requires_grad=True)
    w = T.tensor((rng.standard_normal((32, 32)) / 32 ** 0.5).astype(np.float32), requires_grad=True)
    b = T.tensor(rng.standard_normal((32, 32)).astype(np.float32) * 0.1, requires_grad=True)

    def forward(x, w, b):
        h = x
        for _ in range(50):
            h = T.mm(((h + b) * w).tanh(), w)
        return h.sum()
    if whole_step:
        def train(x, w, b):
            forward(x, w, b).backward()
        compiled = compile_fn(train)

        def step():
            compiled(x, w, b)
            x.grad = w.grad = b.grad = None
        return step
    fwd = compile_fn(forward)

    def step():
        fwd(x, w, b).backward()
        x.grad = w.grad = b.grad = None
    return step


def _loss(T):
    def loss(model, x, y):
        return T.nn.functional.cross_entropy(model(x), y)
    return loss


def _training_step(T, model, x, y, compile_fn, whole_step=False, loss=None, optimizer=None):
    opt = (optimizer or T.optim.SGD)(model.parameters(), lr=0.01)
    loss = loss or _loss(T)
    if whole_step:
        def train(model, opt, x, y):
            opt.zero_grad()
            value = loss(model, x, y)
            value.backward()
            opt.step()
            return value
        compiled = compile_fn(train)
        return lambda: compiled(model, opt, x, y)
    loss_fn = compile_fn(loss)

    def step():
        opt.zero_grad()
        loss_fn(model, x, y).backward()
        opt.step()
    return step


def mlp_case(T, compile_fn, whole_step=False):
    T.manual_seed(0)
    nn = T.nn
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
    rng = np.random.default_rng(1)
    x = T.tensor(rng.standard_normal((256, 784)).astype(np.float32))
    y = T.tensor(rng.integers(0, 10, 256))
    return _training_step(T, model, x, y, compile_fn, whole_step)


def lenet_case(T, compile_fn, whole_step=False):
    T.manual_seed(0)
    nn = T.nn
    model = nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Flatten(), nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                          nn.Linear(84, 10))
    rng = np.random.default_rng(1)
    x = T.tensor(rng.standard_normal((128, 1, 28, 28)).astype(np.float32))
    y = T.tensor(rng.integers(0, 10, 128))
    return _training_step(T, model, x, y, compile_fn, whole_step)


def transformer_case(T, compile_fn, whole_step=False):
    T.manual_seed(0)
    model = T.nn.TransformerEncoderLayer(128, 4, dim_feedforward=512, dropout=0.0, batch_first=True)
    rng = np.random.default_rng(1)
    x = T.tensor(rng.standard_normal((32, 64, 128)).astype(np.float32))
    y = T.tensor(rng.standard_normal((32, 64, 128)).astype(np.float32))

    def loss(model, x, y):
        return T.nn.functional.mse_loss(model(x), y)
    return _training_step(T, model, x, y, compile_fn, whole_step, loss, T.optim.Adam)


def timed(step, iters):
    """ms of this process's CPU time per step: on a shared machine wall-clock time mostly measures
    the other processes (one thread each, so CPU time is the time the step takes when it runs)."""
    t0 = time.process_time()
    for _ in range(iters):
        step()
    return (time.process_time() - t0) / iters * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--torch-compile", action="store_true", help="also time torch.compile (slow to compile)")
    ap.add_argument("--step", action="store_true", help="also time the whole training step compiled (replay)")
    ap.add_argument("--only", nargs="*", help="the workloads to run (default: all)")
    ap.add_argument("--stat", choices=("median", "min"), default="median",
                    help="each column's median over the repetitions (default) or its fastest")
    args = ap.parse_args()
    reps = 3 if args.quick else args.reps

    import torch
    import glasstorch as gt
    from threadpoolctl import threadpool_limits
    torch.set_num_threads(1)
    print(f"glasstorch {gt.__version__}, torch {torch.__version__}, numpy {np.__version__}, one thread each; "
          f"ms per step, {args.stat}; ratios to torch eager")
    cols = ["glasstorch eager", "glasstorch compiled", "torch eager"] + (["torch compiled"] if args.torch_compile
                                                                          else []) \
        + (["gt compiled step"] if args.step else [])
    print(f"{'':12}" + "".join(f"{c:>21}" for c in cols) + f"{'compiled/torch':>16}")
    with threadpool_limits(limits=1):
        cases = (("chain", chain_case, 20), ("mlp", mlp_case, 10), ("lenet", lenet_case, 3),
                 ("transformer", transformer_case, 2))
        for name, case, iters in cases:
            if args.only and name not in args.only:
                continue
            steps = [case(gt, lambda f: f), case(gt, gt.compile), case(torch, lambda f: f)]
            if args.torch_compile:
                steps.append(case(torch, torch.compile))
            if args.step:
                steps.append(case(gt, gt.compile, whole_step=True))
                steps[-1]()                               # its capture
            compile_t0 = time.perf_counter()
            steps[1]()                                    # the capture
            compile_time = time.perf_counter() - compile_t0
            for s in steps:                               # warm up
                s()
                s()
            times = [[] for _ in steps]
            for _ in range(reps):
                for k, s in enumerate(steps):
                    times[k].append(timed(s, iters if not args.quick else 2))
            med = [(statistics.median if args.stat == "median" else min)(t) for t in times]
            print(f"{name:12}" + "".join(f"{m:21.2f}" for m in med) + f"{med[1] / med[2]:16.2f}"
                  + f"   (fastest/fastest {min(times[1]) / min(times[2]):.2f}, capture {compile_time * 1e3:.0f} ms)")
        print(f"load average {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
