"""The optimizer step alone: the for-loop (foreach=False) against the flat path (foreach=None, the
default), and torch's for-loop and foreach, on the parameters of the issue-13 models.

Gradients are set once; each timed call is ``opt.step()`` (or ``opt.zero_grad()`` followed by
putting the same gradients back, for the zero_grad row). Medians of interleaved repetitions, one
thread each, microseconds per call.

    python bench/bench_optim.py [--reps 21]

(On a tree without the flat path, foreach=None runs the for-loop too: the two columns agree.)
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

MODELS = {
    "mlp (6 params)": lambda nn: nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                                               nn.Linear(256, 10)),
    "lenet (10 params)": lambda nn: nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10)),
    "transformer (16 params)": lambda nn: nn.TransformerEncoderLayer(128, 4, 512, dropout=0.0, batch_first=True),
}
OPTIMIZERS = {
    "SGD": lambda optim, ps, fe: optim.SGD(ps, lr=0.01, foreach=fe),
    "SGD momentum+wd": lambda optim, ps, fe: optim.SGD(ps, lr=0.01, momentum=0.9, weight_decay=1e-4, foreach=fe),
    "Adam": lambda optim, ps, fe: optim.Adam(ps, lr=1e-3, foreach=fe),
    "AdamW": lambda optim, ps, fe: optim.AdamW(ps, lr=1e-3, foreach=fe),
    "RMSprop": lambda optim, ps, fe: optim.RMSprop(ps, lr=1e-3, foreach=fe),
}


def setup(T, model, make_opt, foreach):
    params = list(MODELS[model](T.nn).parameters())
    rng = np.random.default_rng(0)
    grads = [T.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 1e-3) for p in params]
    for p, g in zip(params, grads):
        p.grad = g
    opt = make_opt(T.optim, params, foreach)
    opt.step()   # state exists from here on
    return opt, params, grads


def timed(fn, iters):
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
    return (time.perf_counter() - t0) / iters * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=21)
    ap.add_argument("--iters", type=int, default=20)
    args = ap.parse_args()
    import torch
    import glasstorch as gt
    from threadpoolctl import threadpool_limits
    torch.set_num_threads(1)
    threadpool_limits(limits=1)
    print(f"load average {os.getloadavg()[0]:.1f}; median us per opt.step() of {args.reps} interleaved repetitions")
    print("| model | optimizer | glasstorch for-loop | glasstorch flat (default) | torch for-loop (CPU default) "
          "| torch foreach | flat / for-loop | flat / torch default |")
    print("|---|---|---|---|---|---|---|---|")
    for model in MODELS:
        for name, make in OPTIMIZERS.items():
            runs = [setup(gt, model, make, False), setup(gt, model, make, None),
                    setup(torch, model, make, False), setup(torch, model, make, True)]
            times = [[] for _ in runs]
            with gt.no_grad(), torch.no_grad():
                for _ in range(args.reps):
                    for i, (opt, _, _) in enumerate(runs):
                        times[i].append(timed(opt.step, args.iters))
            m = [statistics.median(t) for t in times]
            print(f"| {model} | {name} | {m[0]:.0f} | {m[1]:.0f} | {m[2]:.0f} | {m[3]:.0f} | {m[1] / m[0]:.2f} "
                  f"| {m[1] / m[2]:.2f} |", flush=True)
    # zero_grad(set_to_none=True), then the gradients put back (the same for both)
    for model in MODELS:
        z = []
        for T in (gt, torch):
            opt, params, grads = setup(T, model, OPTIMIZERS["SGD"], None)

            def cycle():
                opt.zero_grad()
                for p, g in zip(params, grads):
                    p.grad = g
            z.append(cycle)
        zt = [[], []]
        for _ in range(args.reps):
            for i, f in enumerate(z):
                zt[i].append(timed(f, args.iters))
        print(f"zero_grad + gradients put back, {model}: glasstorch {statistics.median(zt[0]):.1f} us, "
              f"torch {statistics.median(zt[1]):.1f} us")


if __name__ == "__main__":
    main()
