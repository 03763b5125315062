"""Run the random-graph differential fuzzer (tests/fuzz_graphs.py) for a while and count.

    python tools/fuzz_graphs.py --minutes 10            # new graphs every run, on every core
    python tools/fuzz_graphs.py --seed 123456 --show    # one program as a torch script, and its differences

Each graph is a random program run in torch and in glasstorch side by side; the report counts the
graphs run and, for each kind of difference (value, grad, crash, error, meta), how many graphs had
one, with the first few seeds of each so they can be replayed with ``--seed N --show``.
Needs torch (the oracle): ``pip install -e ".[test]"``.

A program that computes in float32 is compared to float32 precision; where its values or gradients
still differ, it runs again in float64 under torch, and the difference counts only if glasstorch's
float32 result is further from that truth than 1 float32 tolerance and than 4 times torch's float32
result (``fuzz_graphs._rounding``: ill-conditioned float32 programs differ by their rounding alone).
``--show`` prints the float64 truth beside such a difference.

Each job runs its programs in a worker process of its own, which reports every few seconds. A
program that kills its process costs that program, not the run: torch 2.13 itself segfaults on
some (seed 796163452986, a double backward through stack, abs and an index), counted as "torch
crashed (not compared)"; a segfault while glasstorch runs would count as a glasstorch crash. The
job then goes on in a new process (the seeds the dead process had run since it last reported run
again).
"""
import argparse
import faulthandler
import multiprocessing
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
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


CHUNK_SECONDS = 15   # a worker process reports back this often (what a dying process takes with it)
NOT_COMPARED = "torch crashed"   # the tool's own kind: torch's process died on the program


def _worker(args):
    """Run seeds start, start + step, ... until the deadline or ``limit`` graphs; returns (graphs,
    {kind: graphs with such a difference}, {kind: [(seed, first difference)]}, CPU seconds, next
    seed). ``seed_file`` says at every moment which seed runs, and in which library."""
    start, step, deadline, limit, seed_file = args
    cpu0 = time.process_time()
    torch, glasstorch, fuzz = _libs()
    torch.set_num_threads(1)
    graphs, counts, examples = 0, Counter(), {}
    seed = start
    faulthandler.enable()   # (a segfault prints where it happened; the seed file says which program)
    with open(seed_file, "w") as marks:
        def mark(seed, phase):
            marks.seek(0)
            marks.write(f"{seed:<20d} {phase:<10s}")
            marks.flush()
        while time.time() < deadline and graphs < limit:
            mark(seed, "torch")
            try:
                _, diffs = fuzz.check(seed, torch, glasstorch, on_glasstorch=lambda: mark(seed, "glasstorch"))
            except Exception as e:  # the generator itself failed: report it as a crash of the tool
                diffs = [("crash", "generator", f"{type(e).__name__}: {e}")]
            graphs += 1
            for kind in {d[0] for d in diffs}:
                first = next(d for d in diffs if d[0] == kind)
                _count(counts, examples, kind, seed, f"{first[1]}: {first[2]}")
            seed += step
    return graphs, counts, examples, time.process_time() - cpu0, seed


def _count(counts, examples, kind, seed, what):
    counts[kind] += 1
    if len(examples.setdefault(kind, [])) < 5:
        examples[kind].append((seed, what.split("\n")[0][:160]))


def _job(args):
    """One job's seeds in a worker process that reports every CHUNK_SECONDS. When the process dies
    -- torch 2.13 itself segfaults on some programs (a double backward through stack, abs and an
    index: seed 796163452986) -- the program it was running counts as a crash of glasstorch or as
    ``torch crashed`` (not compared), whichever library was running it; the seeds of the lost chunk
    before it run again, and the job goes on in a new process. Returns what ``_worker`` does."""
    start, step, deadline, limit, seed_file = args
    context = multiprocessing.get_context("spawn")
    total, counts, examples, cpu = 0, Counter(), {}, 0.0
    seed = start
    pool = ProcessPoolExecutor(1, mp_context=context)

    def add(result):
        nonlocal total, cpu, seed
        graphs, c, ex, seconds, seed = result
        total, cpu = total + graphs, cpu + seconds
        counts.update(c)
        for kind, items in ex.items():
            for item in items:
                if len(examples.setdefault(kind, [])) < 5:
                    examples[kind].append(item)
    try:
        while time.time() < deadline and total < limit:
            chunk = (seed, step, min(deadline, time.time() + CHUNK_SECONDS), limit - total, seed_file)
            try:
                add(pool.submit(_worker, chunk).result())
            except BrokenProcessPool:
                pool.shutdown(wait=True)
                pool = ProcessPoolExecutor(1, mp_context=context)
                with open(seed_file) as f:
                    crashed, phase = f.read().split()
                crashed = int(crashed)
                before = (crashed - seed) // step
                if before:   # (the same programs again: they ran to the end the first time)
                    add(pool.submit(_worker, (seed, step, float("inf"), before, seed_file)).result())
                total += 1
                _count(counts, examples, "crash" if phase == "glasstorch" else NOT_COMPARED, crashed,
                       f"the process died (a segfault) in {phase}'s run")
                seed = crashed + step
    finally:
        pool.shutdown(wait=True)
    return total, counts, examples, cpu, seed


def run(minutes, jobs, seed_start, limit):
    deadline = time.time() + 60 * minutes
    per_job = max(1, limit // jobs) if limit else 10 ** 12
    seed_dir = tempfile.mkdtemp(prefix="fuzz_graphs_")
    tasks = [(seed_start + j, jobs, deadline, per_job, os.path.join(seed_dir, str(j))) for j in range(jobs)]
    t0, load0 = time.time(), _load()
    try:
        with ThreadPoolExecutor(jobs) as supervisors:   # (each job's process is watched by a thread)
            results = list(supervisors.map(_job, tasks))
    finally:
        shutil.rmtree(seed_dir, ignore_errors=True)
    elapsed = time.time() - t0
    graphs, cpu = sum(r[0] for r in results), sum(r[3] for r in results)
    counts, examples = Counter(), {}
    for _, c, ex, _, _ in results:
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
             "error": "error differences (torch raised)", "meta": "metadata differences",
             "torch_assert": "torch internal assert (not compared)",
             NOT_COMPARED: "torch crashed (not compared)"}
    for kind in KINDS + (NOT_COMPARED,):
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
