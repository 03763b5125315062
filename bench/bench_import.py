"""`import glasstorch` in fresh interpreters: how long it takes, with `import numpy` (which it
includes) as the floor, and where the time goes.

    python bench/bench_import.py                         # medians of 15 runs, this tree
    python bench/bench_import.py --tree /tmp/old-tree    # this tree against another, interleaved
    python bench/bench_import.py --importtime            # also the modules' self times (-X importtime)

Each repetition runs, back to back in fresh interpreters, `import numpy` and then `import glasstorch`
from each tree, so that a slower moment of a shared machine hits all of them; the figures are the
medians over the repetitions, in wall time (what a user waits) and CPU time (process time: steadier
when other jobs compete for the cores). "own" is glasstorch's median less NumPy's: the part
glasstorch can act on. The load average before and after is printed with them (a figure taken at
load 5 on 2 cores is not comparable with one taken at load 1).

Bytecode is cached, as an installed package's is: the runs use a temporary ``PYTHONPYCACHEPREFIX``
written by one untimed run of each first (with ``PYTHONDONTWRITEBYTECODE`` set, as on the project's
shared machine, every run would otherwise compile glasstorch's sources again, ~30% more).

``--tree`` puts another checkout's directory first on ``PYTHONPATH`` (its ``glasstorch`` package is
imported instead of this one's): the before/after figures of bench/README.md come from main's tree
(``git archive <commit> glasstorch | tar -x -C /tmp/old-tree``) against this one, in the same run.
The script uses nothing of glasstorch itself, so it runs against any tree.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_TIMED = ("import time; t0 = time.perf_counter(); c0 = time.process_time(); import {}; "
          "print(time.perf_counter() - t0, time.process_time() - c0)")


def _env(tree, cache):
    env = dict(os.environ, PYTHONPYCACHEPREFIX=cache)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("GLASSTORCH_SEATBELT", None)    # (it imports glasstorch.inspection at import)
    env["PYTHONPATH"] = tree + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _run(code, env, *flags):
    # (run from the cache directory: ``-c`` puts the working directory first on sys.path, where a
    # checkout's own glasstorch would shadow the tree PYTHONPATH names)
    out = subprocess.run([sys.executable, *flags, "-c", code], capture_output=True, text=True, env=env, check=True,
                         cwd=env["PYTHONPYCACHEPREFIX"])
    return out.stdout, out.stderr


def _load():
    return os.getloadavg()[0]


def time_imports(trees, runs):
    """{label: [(wall ms, cpu ms), ...]} for ``import numpy`` and ``import glasstorch`` from each tree
    (label: the tree's path), interleaved, bytecode cached."""
    with tempfile.TemporaryDirectory() as cache:
        jobs = [("numpy", "numpy", trees[0])] + [(tree, "glasstorch", tree) for tree in trees]
        for _, module, tree in jobs:      # (untimed: writes the bytecode cache)
            _run(_TIMED.format(module), _env(tree, cache))
        times = {label: [] for label, _, _ in jobs}
        for _ in range(runs):
            for label, module, tree in jobs:
                out, _ = _run(_TIMED.format(module), _env(tree, cache))
                times[label].append(tuple(float(v) * 1e3 for v in out.split()))
    return times


def module_self_times(tree, runs):
    """Median self time (ms) of each module ``import glasstorch`` loads, from ``-X importtime``."""
    pattern = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|\s*(\S+)")
    with tempfile.TemporaryDirectory() as cache:
        env = _env(tree, cache)
        _run("import glasstorch", env)
        seen = {}
        for _ in range(runs):
            _, err = _run("import glasstorch", env, "-X", "importtime")
            for m in pattern.finditer(err):
                seen.setdefault(m.group(3), []).append(int(m.group(1)) / 1e3)
    return {name: statistics.median(v) for name, v in seen.items()}


def loaded_modules(tree):
    """The modules ``import glasstorch`` loads beyond what ``import numpy`` does."""
    code = ("import sys; import numpy; before = set(sys.modules); import glasstorch; "
            "print(*sorted(set(sys.modules) - before))")
    with tempfile.TemporaryDirectory() as cache:
        out, _ = _run(code, _env(tree, cache))
    return out.split()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=15, help="repetitions (medians over them)")
    ap.add_argument("--tree", action="append", default=[],
                    help="another checkout to time beside this one (repeatable)")
    ap.add_argument("--importtime", action="store_true", help="also the modules' self times, this tree")
    ap.add_argument("--top", type=int, default=25, help="how many modules --importtime lists")
    args = ap.parse_args()
    trees = [os.path.abspath(t) for t in args.tree] + [ROOT]

    load_before = _load()
    times = time_imports(trees, args.runs)
    load_after = _load()
    numpy_wall = statistics.median(w for w, _ in times["numpy"])
    numpy_cpu = statistics.median(c for _, c in times["numpy"])
    print(f"medians of {args.runs} fresh interpreters each, bytecode cached; load average "
          f"{load_before:.1f} before, {load_after:.1f} after ({os.cpu_count()} cores)")
    print(f"{'':44} {'wall ms':>8} {'(min)':>7} {'CPU ms':>7} {'own wall':>9} {'own CPU':>8}")
    for label, v in times.items():
        wall, cpu = statistics.median(w for w, _ in v), statistics.median(c for _, c in v)
        name = "import numpy" if label == "numpy" else f"import glasstorch ({label})"
        own = "" if label == "numpy" else f"{wall - numpy_wall:9.0f} {cpu - numpy_cpu:8.0f}"
        print(f"{name[-44:]:44} {wall:8.0f} {min(w for w, _ in v):7.0f} {cpu:7.0f} {own}")

    if args.importtime:
        selfs = module_self_times(ROOT, max(5, args.runs // 3))
        ours = sorted(((t, n) for n, t in selfs.items() if n.split(".")[0] == "glasstorch"), reverse=True)
        print(f"\n-X importtime, this tree, median self time of {max(5, args.runs // 3)} runs (ms; "
              f"glasstorch's modules together: {sum(t for t, _ in ours):.1f}):")
        for t, n in ours[:args.top]:
            print(f"  {t:6.1f}  {n}")
        others = [m for m in loaded_modules(ROOT) if m.split(".")[0] != "glasstorch"]
        print("\nmodules imported beyond numpy's, not glasstorch's own:", " ".join(others) or "none")


if __name__ == "__main__":
    main()
