"""Peak memory of a deep MLP's training step with and without utils.checkpoint (tracemalloc
counts NumPy's allocations). Usage: python bench/bench_checkpoint.py [depth] [width] [batch]"""
import sys
import tracemalloc

import glasstorch as torch
from glasstorch.utils.checkpoint import checkpoint_sequential


def peak(fn):
    tracemalloc.start()
    tracemalloc.reset_peak()
    fn()
    _, p = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return p


def main(depth=32, width=512, batch=256, segments=4):
    ws = [torch.randn(width, width, requires_grad=True) * 0.05 for _ in range(depth)]
    ws = [w.detach().requires_grad_() for w in ws]
    layers = [lambda x, w=w: (x @ w).tanh() for w in ws]
    x = torch.randn(batch, width)

    def plain():
        y = x
        for f in layers:
            y = f(y)
        y.sum().backward()

    def ckpt():
        checkpoint_sequential(layers, segments, x, use_reentrant=False).sum().backward()
    plain()  # warm-up (allocates .grad)
    a, b = peak(plain), peak(ckpt)
    print(f"deep MLP {depth}x{width}, batch {batch}: peak memory plain {a / 2**20:.1f} MiB, "
          f"checkpoint_sequential({segments} segments) {b / 2**20:.1f} MiB ({b / a:.2f}x)")


if __name__ == "__main__":
    main(*map(int, sys.argv[1:]))
