"""The compiled loops of torch.compile's generated code (glasstorch/_dynamo/jit.py, numba) against the NumPy
kernels and formulas they stand in for, and torch's kernels, on the Transformer row's shapes (float32, one
thread; ms per call, each column's fastest of --reps interleaved repetitions, CPU time), then the
compiled Transformer step with ``config.jit`` on and off against torch eager, interleaved in one run.

* softmax forward / backward over 32*4*64 rows of 64 (the attention weights);
* layer norm forward / backward over 2048 rows of 128, with weight and bias;
* ReLU's backward over 2048x512 (the feed-forward's hidden layer), into a new array and in place.

    python bench/bench_jit.py [--reps 7] [--no-step]

Needs numba (``pip install "glasstorch[jit]"``); with numexpr installed, a column for its softmax.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from bench_compile import timed, transformer_case  # noqa: E402

f32 = np.float32


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--no-step", action="store_true", help="the kernels only, not the Transformer step")
    args = ap.parse_args()
    import torch
    from threadpoolctl import threadpool_limits
    import glasstorch as gt
    from glasstorch._dynamo import config, jit, lowering
    from glasstorch.ops import nn_norm, reduction
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    assert jit.enabled(), "numba is not installed: pip install 'glasstorch[jit]'"
    print(f"numba imported in {(time.perf_counter() - t0) * 1e3:.0f} ms")
    try:
        import numexpr
        numexpr.set_num_threads(1)
    except ImportError:
        numexpr = None

    rng = np.random.default_rng(0)
    s = rng.standard_normal((32, 4, 64, 64)).astype(f32) * 3
    gs = rng.standard_normal(s.shape).astype(f32)
    softmax = reduction._softmax_family_kernel("softmax", False)
    ys = softmax(s, -1, False)
    x = rng.standard_normal((32, 64, 128)).astype(f32)
    w, b = (1 + 0.1 * rng.standard_normal(128)).astype(f32), (0.1 * rng.standard_normal(128)).astype(f32)
    gl = rng.standard_normal(x.shape).astype(f32)
    _, mean, rstd = nn_norm._native_layer_norm_kernel(x, [128], w, b, 1e-5)
    h = np.maximum(rng.standard_normal((2048, 512)).astype(f32), 0)
    gh = rng.standard_normal(h.shape).astype(f32)
    gh2 = gh.copy()
    T = {k: torch.from_numpy(v) for k, v in dict(s=s, gs=gs, ys=ys, x=x, w=w, b=b, gl=gl, h=h, gh=gh).items()}
    _, tmean, trstd = torch.ops.aten.native_layer_norm(T["x"], [128], T["w"], T["b"], 1e-5)
    mask = (True, True, True)

    def numexpr_softmax():
        m = s.max(axis=-1, keepdims=True)   # noqa: F841  (read by name inside numexpr.evaluate)
        e = numexpr.evaluate("exp(s - m)")
        e /= e.sum(axis=-1, keepdims=True)

    rows = {
        "softmax forward": (lambda: softmax(s, -1, False), lambda: jit.softmax(s, -1, False),
                            lambda: torch.softmax(T["s"], -1), numexpr_softmax if numexpr else None),
        "softmax backward": (lambda: reduction._softmax_backward_data_kernel(gs, ys, -1, None),
                             lambda: jit.softmax_backward(gs, ys, -1),
                             lambda: torch._softmax_backward_data(T["gs"], T["ys"], -1, torch.float32), None),
        "layer norm forward": (lambda: nn_norm._native_layer_norm_kernel(x, [128], w, b, 1e-5),
                               lambda: jit.layer_norm(x, [128], w, b, 1e-5),
                               lambda: torch.ops.aten.native_layer_norm(T["x"], [128], T["w"], T["b"], 1e-5), None),
        "layer norm backward": (
            lambda: nn_norm._native_layer_norm_backward_kernel(gl, x, [128], mean, rstd, w, b, mask),
            lambda: jit.layer_norm_backward(gl, x, [128], mean, rstd, w, b, mask),
            lambda: torch.ops.aten.native_layer_norm_backward(T["gl"], T["x"], [128], tmean, trstd, T["w"], T["b"],
                                                              list(mask)), None),
        "relu backward": (lambda: lowering.threshold_grad(gh, h), lambda: jit.threshold_grad(gh, h),
                          lambda: torch.ops.aten.threshold_backward(T["gh"], T["h"], 0), None),
        "relu backward, in place": (lambda: lowering.threshold_grad(gh2, h, out=gh2),
                                    lambda: jit.threshold_grad(gh2, h, out=gh2), None, None),
    }
    print(f"{'ms per call':26}{'numpy':>9}{'jit loop':>10}{'torch':>9}{'numexpr':>9}")
    with threadpool_limits(limits=1):
        for name, fns in rows.items():
            best = [float("inf")] * 4
            for f in fns:
                if f is not None:
                    f()
            for _ in range(args.reps):
                for k, f in enumerate(fns):
                    if f is not None:
                        best[k] = min(best[k], timed(f, 20))
            print(f"{name:26}" + "".join(f"{v:{9 if k != 1 else 10}.3f}" if v < float("inf") else
                                         f"{'-':>{9 if k != 1 else 10}}" for k, v in enumerate(best)))
        if not args.no_step:
            steps = []
            for on in (True, False):
                config.jit = on
                steps.append(transformer_case(gt, gt.compile))
                steps[-1]()                     # the capture: config.jit is read when the code is generated
            config.jit = True
            steps.append(transformer_case(torch, lambda f: f))
            for step in steps:
                step()
                step()
            times = [[] for _ in steps]
            for rep in range(args.reps):
                order = range(len(steps)) if rep % 2 == 0 else reversed(range(len(steps)))
                for k in order:                 # (alternating the order: the first of a round runs slower)
                    times[k].append(timed(steps[k], 2))
            jit_on, jit_off, torch_eager = (min(t) for t in times)
            print(f"transformer step, compiled: jit {jit_on:.2f} ms, numpy {jit_off:.2f}, torch eager {torch_eager:.2f}; "
                  f"ratios to torch {jit_on / torch_eager:.3f} / {jit_off / torch_eager:.3f}, "
                  f"jit / numpy {jit_on / jit_off:.3f}")
    print(f"load average {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
