"""Run the random-graph differential fuzzer (tests/fuzz_graphs.py) for a while and count.

    python tools/fuzz_graphs.py --minutes 10            # new graphs every run, on every core
    python tools/fuzz_graphs.py --seed 123456 --show    # one program as a torch script, and its differences

Each graph is a random program run in torch and in glasstorch side by side; the report counts the
graphs run and, for each kind of difference (value, grad, crash, error, meta), how many graphs had
one, with the first few seeds of each so they can be replayed with ``--seed N --show``.
Needs torch (the oracle): ``pip install -e ".[test]"``.
"""
import argparse
import faulthandler
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
import os
import shutil
import sys
import tempfile
import time
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, ROOT)


def _libs():
    import torch
    import glasstorch
    import fuzz_graphs
    return torch, glasstorch, fuzz_graphs


def _worker(args):
    """Run seeds start, start + step, ... until the deadline (or ``limit`` graphs); returns
    (graphs, {kind: graphs with such a difference}, {kind: [(seed, first difference)]}, CPU seconds)."""
    start, step, deadline, limit, seed_file = args
    cpu0 = time.process_time()
    torch, glasstorch, fuzz = _libs()
    torch.set_num_threads(1)
    graphs, counts, examples = 0, Counter(), {}
    seed = start
    faulthandler.enable()   # (a segfault prints where it happened; the seed file says which program)
    last_seed = open(seed_file, "w") if seed_file else None
    while time.time() < deadline and graphs < limit:
        if last_seed:
            last_seed.seek(0)
            last_seed.write(f"{seed:<20d}")
            last_seed.flush()
        try:
            _, diffs = fuzz.check(seed, torch, glasstorch)
        except Exception as e:  # the generator itself failed: report it as a crash of the tool
            diffs = [("crash", "generator", f"{type(e).__name__}: {e}")]
        graphs += 1
        for kind in {d[0] for d in diffs}:
            counts[kind] += 1
            first = next(d for d in diffs if d[0] == kind)
            examples.setdefault(kind, [])
            if len(examples[kind]) < 5:
                examples[kind].append((seed, f"{first[1]}: {first[2]}".split("\n")[0][:160]))
        seed += step
    return graphs, counts, examples, time.process_time() - cpu0


def run(minutes, jobs, seed_start, limit):
    deadline = time.time() + 60 * minutes
    per_job = max(1, limit // jobs) if limit else 10 ** 12
    seed_dir = tempfile.mkdtemp(prefix="fuzz_graphs_") if jobs > 1 else None
    tasks = [(seed_start + j, jobs, deadline, per_job, seed_dir and os.path.join(seed_dir, str(j))) for j in range(jobs)]
    t0, load0 = time.time(), _load()
    if jobs == 1:
        results = [_worker(tasks[0])]
    else:
        # (a process pool that raises when a worker dies -- torch itself segfaults on some programs:
        # multiprocessing.Pool waits forever for the lost task instead)
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            try:
                results = list(pool.map(_worker, tasks))
                shutil.rmtree(seed_dir, ignore_errors=True)
            except BrokenProcessPool:
                seeds = [open(os.path.join(seed_dir, f)).read().strip() for f in sorted(os.listdir(seed_dir))]
                raise SystemExit(f"a worker process died (a segfault in torch or glasstorch) in one of the programs "
                                 f"{', '.join(seeds)} (the last each worker started): replay each with --seed N "
                                 "--show") from None
    elapsed = time.time() - t0
    graphs, cpu = sum(r[0] for r in results), sum(r[3] for r in results)
    counts, examples = Counter(), {}
    for _, c, ex, _ in results:
        counts.update(c)
        for kind, items in ex.items():
            examples.setdefault(kind, []).extend(items)
    print(f"{graphs} graphs in {elapsed:.0f} s ({graphs / max(elapsed, 1e-9):.0f}/s, {jobs} processes), "
          f"seeds from {seed_start}")
    # (on a shared machine the wall-clock rate says more about the neighbours than about the fuzzer:
    # the CPU time the workers got, and the load, say which)
    print(f"  {cpu:.0f} CPU seconds in the workers ({graphs / max(cpu, 1e-9):.0f} graphs per CPU second, imports "
          f"included); load average {load0} at the start, {_load()} at the end, {os.cpu_count()} cores")
    from fuzz_graphs import KINDS
    names = {"value": "wrong values", "grad": "wrong gradients", "crash": "crashes (glasstorch raised, torch not)",
             "error": "error differences (torch raised)", "meta": "metadata differences"}
    for kind in KINDS:
        n = counts.get(kind, 0)
        print(f"  {names[kind]:42s} {n:7d} graphs ({100 * n / max(graphs, 1):.3f}%)")
        for seed, what in examples.get(kind, [])[:5]:
            print(f"      seed {seed}: {what}")
    return graphs, counts


def _load():
    try:
        return "/".join(f"{v:.1f}" for v in os.getloadavg())
    except OSError:  # (not every platform has one)
        return "?"


def show(seed):
    torch, glasstorch, fuzz = _libs()
    program, diffs = fuzz.check(seed, torch, glasstorch)
    print(fuzz.render(program))
    print(f"# {len(diffs)} differences")
    for kind, where, what in diffs:
        print(f"# [{kind}] {where}: " + what.replace("\n", "\n#     "))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--minutes", type=float, default=10.0, help="how long to run (default 10)")
    p.add_argument("--graphs", type=int, default=0, help="stop after this many graphs (default: run the time out)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes (default: one per core)")
    p.add_argument("--seed-start", type=int, default=None, help="first seed (default: from the clock)")
    p.add_argument("--seed", type=int, help="with --show: the program to print")
    p.add_argument("--show", action="store_true", help="print program --seed as a torch script, with its differences")
    a = p.parse_args(argv)
    if a.show:
        show(a.seed if a.seed is not None else 0)
        return 0
    start = a.seed_start if a.seed_start is not None else int(time.time()) % 10 ** 9 * 1000
    graphs, counts = run(a.minutes, max(1, a.jobs), start, a.graphs)
    return 1 if counts.get("value") or counts.get("grad") or counts.get("crash") else 0


if __name__ == "__main__":
    sys.exit(main())
