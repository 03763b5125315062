"""What the seatbelt costs: a small MLP training step with the seatbelt off, on, and off again.

    python bench/bench_seatbelt.py [--rounds 15] [--steps 50]

"off" is glasstorch before any inspection was opened; "off again" after a seatbelt was opened and
closed (its wrappers removed): the two must be the same code, so any difference is noise. "on" runs
under ``seatbelt()``; "record" under ``record()`` (the timeline, for comparison: it logs every event).
Each round times off, on, off again back to back, in the thread's CPU time; the overhead is the median
over rounds of on / mean(the two offs beside it), so drift on a shared machine cancels out.
"""
import argparse
import os
import statistics
import sys
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")   # one BLAS thread: small matmuls, and a shared machine

import glasstorch as torch  # noqa: E402
from glasstorch import nn, inspection  # noqa: E402


def make_step(batch=64, n_in=64, hidden=128, n_out=10):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, n_out))
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    X, y = torch.randn(batch, n_in), torch.randint(0, n_out, (batch,))
    total = [0.0]

    def step():
        optimizer.zero_grad()
        loss = criterion(model(X), y)
        loss.backward()
        optimizer.step()
        total[0] += loss.item()
    return step


def timed(step, n, warmup=5):
    """Seconds per step, in this thread's CPU time (a shared machine's other processes don't count),
    after a few warm-up steps (patching a class makes Python re-specialise the code that uses it)."""
    for _ in range(warmup):
        step()
    t = time.thread_time()
    for _ in range(n):
        step()
    return (time.thread_time() - t) / n


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=25)
    p.add_argument("--steps", type=int, default=60)
    args = p.parse_args(argv)
    step = make_step()
    for _ in range(20):
        step()

    results = {"off": [], "on": [], "off again": [], "record": []}
    ratios = {"on": [], "off again": [], "record": []}
    for r in range(args.rounds):
        off = timed(step, args.steps)                    # before this round's seatbelt
        with inspection.seatbelt():
            on = timed(step, args.steps)
        again = timed(step, args.steps)                  # its wrappers removed
        results["off"].append(off)
        results["on"].append(on)
        results["off again"].append(again)
        ratios["on"].append(on / ((off + again) / 2))
        ratios["off again"].append(again / off)
        if r % 3 == 0:
            with inspection.record():
                rec = timed(step, max(args.steps // 5, 2))
            results["record"].append(rec)
            ratios["record"].append(rec / ((off + again) / 2))

    print(f"small MLP step (64x64 -> 128 -> 10, batch 64, SGD momentum), {args.rounds} rounds x {args.steps} steps")
    print(f"{'':>10}  {'min':>9}  {'median':>9}  {'vs off (median of paired ratios)':>34}")
    for name, times in results.items():
        rel = f"{(statistics.median(ratios[name]) - 1) * 100:+6.1f}%" if name in ratios else ""
        print(f"{name:>10}  {min(times) * 1e6:7.0f}us  {statistics.median(times) * 1e6:7.0f}us  {rel:>34}")
    on = statistics.median(ratios["on"]) - 1
    off = statistics.median(ratios["off again"]) - 1
    print(f"seatbelt on: {on * 100:+.1f}% per step; off after use: {off * 100:+.1f}% (noise level)")
    return on, off


if __name__ == "__main__":
    sys.exit(main() and 0)
