"""OpenBLAS's float32 GEMM before and after glasstorch's import-time warm-up (``threads.map_packing_buffer``).

Each repetition starts two fresh interpreters that import glasstorch -- one with the warm-up, one with
``GLASSTORCH_BLAS_WARMUP=0`` -- and time the MLP's first-layer product ``(256x784) @ (784x256)`` in
float32, one BLAS thread, in CPU time (thread time: steady on a shared machine); torch's own product
of the same shape is timed in the same process as a reference.

    python bench/bench_blas_warmup.py [--reps 5]
"""
import argparse
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = r"""
import statistics, sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np
import glasstorch
import torch
torch.set_num_threads(1)
glasstorch.set_num_threads(1)
rng = np.random.default_rng(0)
x = rng.standard_normal((256, 784)).astype(np.float32)
w = rng.standard_normal((256, 784)).astype(np.float32)
xt, wt = torch.tensor(x), torch.tensor(w)

def ms(f, n=5):
    out = []
    for _ in range(5):
        t = time.thread_time()
        for _ in range(n):
            f()
        out.append((time.thread_time() - t) / n * 1e3)
    return statistics.median(out)

print(ms(lambda: x @ w.T), ms(lambda: xt @ wt.T))
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    rows = {"warm-up (default)": [], "GLASSTORCH_BLAS_WARMUP=0": []}
    for _ in range(args.reps):
        for name, value in (("warm-up (default)", "1"), ("GLASSTORCH_BLAS_WARMUP=0", "0")):
            env = dict(os.environ, GLASSTORCH_BLAS_WARMUP=value)
            out = subprocess.run([sys.executable, "-c", CHILD, ROOT], capture_output=True, text=True, env=env,
                                 check=True).stdout.split()
            rows[name].append(tuple(map(float, out)))
    print("(256x784) @ (784x256) float32, one thread, CPU ms per product (median over fresh processes)")
    for name, runs in rows.items():
        ours, theirs = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
        print(f"{name:26s} NumPy {ours:6.2f}   torch {theirs:6.2f}   ratio {ours / theirs:.2f}")


if __name__ == "__main__":
    main()
