"""Forward + backward of reductions, softmax and a matmul-heavy chain: one glasstorch tree against
another (before/after a change), interleaved.

    python bench/bench_reductions.py --before /path/to/other/worktree      # ~3 minutes
    python bench/bench_reductions.py --before ... --quick                  # a smoke run

Each workload builds its graph and runs ``backward()`` ``ITERS`` times; a worker process (one BLAS
thread) times every workload ``REPS`` times in process time (CPU time of the worker: on a shared machine
the time spent waiting for a core is not counted) and reports the medians (microseconds per
iteration). The driver starts workers for the two trees alternately (before, after, before, ...), so
that a slower moment of the machine hits both, and prints the median over workers.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

WORKLOADS = {
    # name: (setup, step) -- both run with `torch` bound to the glasstorch under test
    "sum(dim) 256x64": ("x = torch.randn(256, 64, requires_grad=True)",
                        "x.sum(1).sum().backward()"),
    "mean(dim) 256x64": ("x = torch.randn(256, 64, requires_grad=True)",
                         "x.mean(1, keepdim=True).mean().backward()"),
    "softmax 128x10": ("x = torch.randn(128, 10, requires_grad=True)",
                       "x.softmax(1).sum().backward()"),
    "log_softmax 128x10": ("x = torch.randn(128, 10, requires_grad=True)",
                           "x.log_softmax(1).mean().backward()"),
    "var(dim) 128x64": ("x = torch.randn(128, 64, requires_grad=True)",
                        "x.var(1).sum().backward()"),
    "max(dim)+amax 128x64": ("x = torch.randn(128, 64, requires_grad=True)",
                             "(x.max(1).values + x.amax(1)).sum().backward()"),
    "MLP 784-256-10 b64 (matmul, log_softmax, mean)": (
        "x = torch.randn(64, 784); w1 = torch.randn(784, 256, requires_grad=True); "
        "w2 = torch.randn(256, 10, requires_grad=True)",
        "(x @ w1).relu().matmul(w2).log_softmax(1).mean().backward()"),
    "chain of 30 reductions 32x32": (
        "x = torch.randn(32, 32, requires_grad=True)",
        "h = x\n"
        "for _ in range(10):\n"
        "    h = h.softmax(1) + h.mean(1, keepdim=True) - h.sum(0, keepdim=True) * 0.01\n"
        "h.sum().backward()"),
}


def worker(reps, iters):
    """Runs in a subprocess with the tree under test first on sys.path."""
    import time
    import glasstorch as torch
    torch.manual_seed(0)
    out = {}
    for name, (setup, step) in WORKLOADS.items():
        env = {"torch": torch}
        exec(setup, env)
        code = compile(step, name, "exec")
        for _ in range(3):
            exec(code, env)     # warm up (caches, lazy imports)
        times = []
        for _ in range(reps):
            t0 = time.process_time()
            for _ in range(iters):
                exec(code, env)
            times.append((time.process_time() - t0) / iters * 1e6)
        out[name] = statistics.median(times)
    out["_file"] = torch.__file__
    print(json.dumps(out))


def run_worker(tree, reps, iters):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               PYTHONPATH=tree)
    code = f"import sys; sys.path.insert(0, {tree!r}); import bench_reductions as b; b.worker({reps}, {iters})"
    res = subprocess.run([sys.executable, "-c", code], env=dict(env, PYTHONPATH=os.pathsep.join(
        [tree, os.path.dirname(os.path.abspath(__file__))])), capture_output=True, text=True, check=True)
    data = json.loads(res.stdout.strip().splitlines()[-1])
    assert data.pop("_file").startswith(os.path.abspath(tree)), "the worker imported another glasstorch"
    return data


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", required=True, help="the other glasstorch worktree (its root)")
    parser.add_argument("--after", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser.add_argument("--rounds", type=int, default=8, help="worker pairs (before, after)")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rounds, reps, iters = (1, 3, 5) if args.quick else (args.rounds, 7, 30)
    results = {"before": [], "after": []}
    for _ in range(rounds):
        for label in ("before", "after"):
            results[label].append(run_worker(getattr(args, label), reps, iters))
    print(f"{'workload':<50} {'before us':>10} {'after us':>10} {'after/before':>13}")
    for name in WORKLOADS:
        b = statistics.median(r[name] for r in results["before"])
        a = statistics.median(r[name] for r in results["after"])
        print(f"{name:<50} {b:>10.1f} {a:>10.1f} {a / b:>13.2f}")


if __name__ == "__main__":
    main()
