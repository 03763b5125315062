"""special.gammainc/gammaincc (the array kernels) on 120,000 elements: this tree against another version
of ``glasstorch/_array/special_cephes.py``, interleaved.

    git show <commit>:glasstorch/_array/special_cephes.py > /tmp/before.py
    python bench/bench_igamma.py --before /tmp/before.py          # ~1 minute with the slow version

Each input set runs REPS times per version, alternating (before, after, before, ...), timed in process
time (one thread: the kernels are NumPy element-wise code); the medians and their ratio are printed,
with the largest difference between the two versions' values.
"""
import argparse
import importlib.util
import os
import statistics
import time

import numpy as np

import glasstorch._array.special_cephes as after

N = 120_000
REPS = 3


def _inputs():
    rng = np.random.default_rng(0)
    return {"a ~ U(0, 50), x ~ U(0, 60)": (rng.uniform(0.01, 50, N), rng.uniform(0.0, 60, N)),
            "a, x ~ Gamma(2, 2)": (rng.gamma(2.0, 2.0, N), rng.gamma(2.0, 2.0, N)),
            "a ~ 10^U(-3, 3), x ~ a U(0.5, 1.5)": (a := 10 ** rng.uniform(-3, 3, N), a * rng.uniform(0.5, 1.5, N))}


def _load(path):
    # (a module of the glasstorch._array package, so its relative imports resolve)
    spec = importlib.util.spec_from_file_location("glasstorch._array._special_cephes_before", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", required=True, help="another special_cephes.py")
    args = parser.parse_args()
    before = _load(os.path.abspath(args.before))
    print(f"{N} elements, {REPS} interleaved repetitions, process time; load average "
          f"{' '.join(f'{v:.1f}' for v in os.getloadavg())}")
    for label, (a, x) in _inputs().items():
        for fn in ("igamma", "igammac"):
            times = {"before": [], "after": []}
            values = {}
            for _ in range(REPS):
                for name, module in (("before", before), ("after", after)):
                    start = time.process_time()
                    values[name] = getattr(module, fn)(a, x)
                    times[name].append(time.process_time() - start)
            tb, ta = statistics.median(times["before"]), statistics.median(times["after"])
            diff = np.nanmax(np.abs(values["before"] - values["after"]))
            print(f"{fn:8s} {label:36s} before {tb:7.3f} s  after {ta:6.3f} s  x{tb / ta:6.1f}  max|diff| {diff:.1e}")


if __name__ == "__main__":
    main()
