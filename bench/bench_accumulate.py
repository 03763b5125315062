"""What the lock in gradient accumulation costs a single thread.

    python bench/bench_accumulate.py

``autograd.engine._accumulate`` holds a lock while it reads and writes ``.grad`` (so concurrent
backward passes into the same leaves lose nothing). Uncontended, a lock costs an acquire and a
release per leaf. Measured two ways, interleaved so a busy moment of the machine hits both:

* the lock alone: ``with lock: pass``, against an empty ``with`` (nullcontext);
* a backward pass over many leaves (``sum_i (w_i * x).sum()``, 200 leaves of 16 floats, the
  gradients accumulating into existing ``.grad``), with the engine's lock and with a nullcontext
  swapped in for the comparison (only here, for the measurement).
"""
import contextlib
import statistics
import threading
import timeit

import glasstorch as gt
from glasstorch.autograd import engine


def _median_us(stmt, number, repeat=15):
    return statistics.median(timeit.repeat(stmt, number=number, repeat=repeat)) / number * 1e6


def main():
    lock, null = threading.Lock(), contextlib.nullcontext()

    def with_lock():
        with lock:
            pass

    def with_null():
        with null:
            pass

    lock_us = [], []
    for _ in range(5):
        lock_us[0].append(_median_us(with_lock, 20000, 5))
        lock_us[1].append(_median_us(with_null, 20000, 5))
    print(f"with lock: pass      {statistics.median(lock_us[0]) * 1e3:6.0f} ns   "
          f"(empty with: {statistics.median(lock_us[1]) * 1e3:.0f} ns)")

    ws = [gt.randn(16, requires_grad=True) for _ in range(200)]
    x = gt.randn(16)

    def step():
        loss = ws[0].mul(x).sum()
        for w in ws[1:]:
            loss = loss + w.mul(x).sum()
        loss.backward()

    step()  # .grad allocated: later passes accumulate into it
    real = engine._accumulate_lock
    times = {"lock": [], "none": []}
    try:
        for _ in range(7):
            engine._accumulate_lock = real
            times["lock"].append(_median_us(step, 5, 3))
            engine._accumulate_lock = null
            times["none"].append(_median_us(step, 5, 3))
    finally:
        engine._accumulate_lock = real
    a, b = statistics.median(times["lock"]), statistics.median(times["none"])
    print(f"forward+backward, 200 leaves: {a:8.0f} us with the lock, {b:8.0f} us without "
          f"({(a - b) / b * 100:+.1f}%, {(a - b) / 200 * 1e3:+.0f} ns per leaf)")


if __name__ == "__main__":
    main()
