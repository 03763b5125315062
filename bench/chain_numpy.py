"""The NumPy floor of the 200-op chain (bench_workloads.py's `chain` rows, bench_chain.py): the same
arithmetic written by hand on float32 arrays -- `h + b`, `h * w`, `np.tanh(h)`, `h.dot(w)` (what
glasstorch's `mm` kernel calls for float32 2-D operands), repeated 50 times, then `.sum()` -- and, for
the backward, each op's derivative written by hand on the arrays the forward kept, in the order torch's
engine runs them, the gradients of `x`, `w` and `b` summed over their uses (as the engine and
AccumulateGrad do). No Python besides the loop and the arithmetic: the time no framework layered on
NumPy can beat, and what it leaves of torch's time for that framework's own Python per op."""
import numpy as np


def chain_step(x, w, b, mode, ops=200):
    """One step on NumPy arrays x, w, b (32x32 float32); mode "fwdbwd" (forward keeping what the
    backward needs, then the backward), "fwd" (the same forward, nothing run backward) or "nograd"
    (forward keeping nothing). Returns the loss (and the gradients for "fwdbwd")."""
    blocks = ops // 4
    if mode == "nograd":
        def step():
            h = x
            for _ in range(blocks):
                h = h + b
                h = h * w
                h = np.tanh(h)
                h = h.dot(w)
            return h.sum()
        return step

    def forward():
        kept = []    # per block: the input of `* w`, tanh's result, the input of `@ w`
        h = x
        for _ in range(blocks):
            a = h + b
            t = np.tanh(a * w)
            kept.append((a, t))
            h = t.dot(w)
        return h.sum(), kept

    if mode == "fwd":
        return lambda: forward()[0]
    wt = w.T

    def step():
        loss, kept = forward()
        g = np.ones((x.shape[0], w.shape[1]), dtype=x.dtype)      # d loss / d h (sum's backward)
        gw = np.zeros_like(w)
        gb = np.zeros_like(b)
        for a, t in reversed(kept):
            gw += t.T.dot(g)          # MmBackward0: grad of the right operand
            g = g.dot(wt)             #              and of the left one
            g = g * (1 - t * t)       # TanhBackward0
            gw += g * a               # MulBackward0: grad of w
            g = g * w                 #               and of the input
            gb += g                   # AddBackward0: b's share; the input's is g itself
        return loss, g, gw, gb
    return step
