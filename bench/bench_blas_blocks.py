"""NumPy's BLAS on a recurrent step's products: one product or column blocks under OpenBLAS's small-matrix
bound, the result row- or column-major (stop 35; what ``ops/nn_rnn.py``'s ``_column_blocks`` and
``_product_scratch`` decide from).

OpenBLAS's SkylakeX kernels (AVX-512 CPUs) multiply products of M N K <= 10^6 without packing their
operands into blocks first (``kernel/x86_64/sgemm_small_kernel_permit_skylakex.c``). A recurrent layer's
step multiplies a thin batch of states (M rows) by its whole weight (K x N), once per time step, so the
usual path packs the whole weight every step. This prints GF/s for each layout, one BLAS thread:

    python bench/bench_blas_blocks.py [--reps 16] [--dtype float32]

The block width is the widest multiple of 64 bytes with M K width <= 10^6; "-" where that leaves no block
narrower than N. ``glasstorch._array.threads.small_product_bound()`` says whether this machine's BLAS has
the kernels (its core: ``threads._controller().core``).
"""
import argparse
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402

SHAPES = [(8, 256, 1024), (32, 256, 1024), (32, 1024, 256), (32, 288, 1024), (48, 288, 1024), (64, 256, 1024),
          (128, 288, 1024), (1024, 32, 128), (1024, 128, 32), (32, 256, 768), (32, 768, 256)]
BOUND = 100 * 100 * 100


def _median_ms(fn, runs=15):
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2] * 1e3


def row(m, k, n, dtype, reps):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    row_major, col_major = np.empty((m, n), dtype), np.empty((n, m), dtype).T
    align = 64 // a.itemsize
    width = BOUND // (m * k) // align * align

    def one(out):
        def run():
            for _ in range(reps):
                np.matmul(a, b, out=out)
        return run

    def blocks(out):
        def run():
            for _ in range(reps):
                for j in range(0, n, width):
                    np.matmul(a, b[:, j:j + width], out=out[:, j:j + width])
        return run
    flops = 2 * m * k * n * reps / 1e6
    cells = [flops / _median_ms(one(row_major)), flops / _median_ms(one(col_major))]
    if 0 < width < n:
        cells += [flops / _median_ms(blocks(row_major)), flops / _median_ms(blocks(col_major))]
    return width if 0 < width < n else None, cells


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=16)
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    args = ap.parse_args()
    from glasstorch._array import threads
    blas = threads._controller()
    print(f"numpy {np.__version__}; BLAS core {getattr(blas, 'core', None)}; "
          f"small_product_bound() = {threads.small_product_bound()}; {args.dtype}, GF/s")
    print("| M x K x N | block | one, row-major | one, column-major | blocks, row-major | blocks, column-major |")
    print("|---|---|---|---|---|---|")
    for m, k, n in SHAPES:
        width, cells = row(m, k, n, np.dtype(args.dtype), args.reps)
        cells = [f"{c:.0f}" for c in cells] + ["-"] * (4 - len(cells))
        print(f"| {m} x {k} x {n} | {width or '-'} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
