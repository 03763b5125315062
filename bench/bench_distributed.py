"""torch.distributed on MPI: what glasstorch adds to a collective, and what DDP gains from several ranks.

    python bench/bench_distributed.py            # starts itself on 2 ranks (mpiexec), ~2 minutes
    python bench/bench_distributed.py --quick    # fewer sizes and repetitions
    python bench/bench_distributed.py --part all_reduce --sizes 256K,1M,4M --rounds 3
    python bench/bench_distributed.py --part ddp --nproc 4 --threads 2   # a machine with 8+ cores

1. ``all_reduce`` of float32 buffers from 1 KB to 64 MB: ``dist.all_reduce(t)`` against raw mpi4py
   (``comm.Allreduce(IN_PLACE, a)``, and ``comm.Iallreduce`` + a ``Test`` loop, which is what
   glasstorch runs underneath so that a wait can end in an error) on the same memory. Median and
   fastest time per call of interleaved repetitions (raw, glasstorch, raw, ...), and the overhead.
   glasstorch is measured twice: as it runs by default (each collective first checks, with one small
   all-gather, that every rank runs the same collective on the same shapes) and with that check off
   (``TORCH_DISTRIBUTED_DEBUG=OFF``). ``--rounds R`` repeats the whole table R times (a shared
   machine's load comes and goes: compare rounds, not single figures).
2. DistributedDataParallel on an MLP (784-1024-1024-10, or ``--hidden`` widths; batch 64 per rank,
   SGD; ``--caps``: the bucket sizes measured): the step time of one process alone, of each rank
   without DDP (what sharing the machine costs), and with DDP, its MPI progress thread off and on;
   the scaling (samples per second, N ranks / 1); and how much of the gradient communication is
   hidden behind backward: 1 - (time backward waits for the buckets at its end) / (time the same
   all_reduces take alone, one after another); and, from each rank's timeline
   of every bucket (launched at which gradient hook, seen complete when, against the moment the last
   gradient was ready), the share of the gradients' bytes whose all_reduce was complete before
   backward ended, and how long the last bucket ran past it.

NumPy's BLAS runs ``--threads`` threads per rank (threadpoolctl; default 1), so ``--nproc`` ranks use
``nproc * threads`` cores; with one thread each, every rank is pinned to a core of its own. The overlap can only show where the progress thread has a core of its own:
give the machine more cores than ``nproc * threads`` (on 2 cores with 2 ranks it competes with the
products, see bench/README.md).
"""
import argparse
import os
import statistics
import subprocess
import sys
import time


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="fewer sizes, repetitions and steps")
    p.add_argument("--part", choices=("all_reduce", "ddp", "both"), default="both")
    p.add_argument("--nproc", type=int, default=2, help="ranks (default 2)")
    p.add_argument("--threads", type=int, default=1, help="BLAS threads per rank (default 1)")
    p.add_argument("--sizes", default=None, help="all_reduce sizes, e.g. 1K,256K,1M,64M (default 1K..64M, x4)")
    p.add_argument("--rounds", type=int, default=1, help="times the all_reduce table is measured")
    p.add_argument("--steps", type=int, default=None, help="DDP steps per variant (default 30, --quick 8)")
    p.add_argument("--hidden", default="1024,1024",
                   help="DDP: the MLP's hidden widths (default 1024,1024; e.g. 512,512,512,512,512,512 for more, "
                        "smaller layers)")
    p.add_argument("--caps", default="25,1", help="DDP: the bucket_cap_mb values measured (default 25,1)")
    p.add_argument("--no-bind", action="store_true", help="do not pin each rank to a core (see relaunch)")
    p.add_argument("--alongside", action="store_true",
                   help="all_reduce also with its check alongside the data (ProcessGroup._check_alongside), and "
                        "percentiles")
    return p.parse_args(argv)


ARGS = parse_args(sys.argv[1:])
QUICK = ARGS.quick


def relaunch():
    """Not in an MPI world yet: start this file on ``--nproc`` ranks.

    With one BLAS thread per rank and a core for each, through ``mpiexec -bind-to core``: each rank
    pinned to its own core. Unpinned, on a machine shared with other jobs, the kernel now and then
    puts both ranks on one core, and a rank spinning in ``Test`` then holds the core its partner needs
    for a whole time slice (calls of milliseconds instead of microseconds, in whole runs). Otherwise
    (``--no-bind``, several BLAS threads, or fewer cores than ranks) through the launcher."""
    here = os.path.abspath(__file__)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if not ARGS.no_bind and ARGS.threads == 1 and ARGS.nproc <= cores:
        from glasstorch.distributed.run import _find_mpiexec
        cmd = [_find_mpiexec(None), "-bind-to", "core", "-n", str(ARGS.nproc), sys.executable, here]
    else:
        cmd = [sys.executable, "-m", "glasstorch.distributed.run", "--nproc-per-node", str(ARGS.nproc), here]
    sys.exit(subprocess.call(cmd + sys.argv[1:]))


def _parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper().rstrip("B")
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


def bandwidth(dist, MPI, torch, np):
    comm = MPI.COMM_WORLD
    rank = dist.get_rank()
    pg = dist.distributed_c10d._get_default_group()
    if ARGS.sizes:
        sizes = [_parse_size(x) for x in ARGS.sizes.split(",")]
    else:
        sizes = [1 << 10, 1 << 20, 1 << 22, 1 << 24] if QUICK else [1 << k for k in range(10, 27, 2)]
    for round_ in range(ARGS.rounds):
        _all_reduce_table(dist, MPI, torch, np, comm, rank, pg, sizes, round_)


def _all_reduce_table(dist, MPI, torch, np, comm, rank, pg, sizes, round_):
    rows, spread = [], []
    for nbytes in sizes:
        buf = np.ones(nbytes // 4, dtype=np.float32)
        t = torch.from_numpy(buf)
        reps = max(15, min(300, (256 << 20) // nbytes)) // (4 if QUICK else 1)

        def raw():
            comm.Allreduce(MPI.IN_PLACE, buf)

        def raw_nonblocking():   # what glasstorch runs underneath: Iallreduce, then Test until done
            request = comm.Iallreduce(MPI.IN_PLACE, buf)
            while not request.Test():
                pass

        def ours_checked():
            pg._checked = True
            dist.all_reduce(t)

        def ours_unchecked():
            pg._checked = False
            dist.all_reduce(t)

        def ours_alongside():   # the data started first, the check's answers read while it moves
            pg._checked, pg._check_alongside = True, True
            dist.all_reduce(t)
            pg._check_alongside = False

        fns = {"raw": raw, "raw_nb": raw_nonblocking, "checked": ours_checked, "unchecked": ours_unchecked}
        if ARGS.alongside:
            fns["alongside"] = ours_alongside
        timings = {name: [] for name in fns}
        variants = list(fns.items())
        for i in range(reps + 2):   # the first two rounds warm up
            # each repetition starts with another variant, so that none always runs first after the
            # buffer's refill (which leaves the caches cold for it)
            k = i % len(variants)
            for name, fn in variants[k:] + variants[:k]:
                comm.Barrier()
                start = time.perf_counter()
                fn()
                if i >= 2:
                    timings[name].append(time.perf_counter() - start)
            buf[...] = 1.0  # keep the values finite
        pg._checked = True
        rows.append((nbytes, {k: (statistics.median(v), min(v)) for k, v in timings.items()}))
        spread.append((nbytes, timings))
    if rank == 0:
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
        print(f"\n1. all_reduce, float32, {comm.Get_size()} ranks (round {round_ + 1} of {ARGS.rounds}, load average "
              f"{load}): time per call, median / fastest of interleaved repetitions; overhead over mpi4py's "
              f"Allreduce (and over its Iallreduce + Test loop)")
        print(f"{'size':>6} | {'Allreduce':>17} | {'Iallreduce+Test':>17} | {'glasstorch':>17} | {'overhead':>22} | "
              f"{'no check':>17} | {'overhead':>22}")
        for nbytes, t in rows:
            def over(k):
                return (f"{100 * (t[k][0] / t['raw'][0] - 1):+.0f}/{100 * (t[k][1] / t['raw'][1] - 1):+.0f}% "
                        f"({100 * (t[k][0] / t['raw_nb'][0] - 1):+.0f}/{100 * (t[k][1] / t['raw_nb'][1] - 1):+.0f}%)")

            def both(k):
                return f"{_us(t[k][0])} / {_us(t[k][1])}"
            print(f"{_size(nbytes):>6} | {both('raw'):>17} | {both('raw_nb'):>17} | {both('checked'):>17} | "
                  f"{over('checked'):>22} | {both('unchecked'):>17} | {over('unchecked'):>22}")
        if ARGS.alongside:
            print("   overhead over Iallreduce+Test at the 10th / 25th percentile / median of each variant's times:")
            for nbytes, timings in spread:
                def pct(v, q):
                    return sorted(v)[int(q * (len(v) - 1))]

                def over_at(k):
                    return "/".join(f"{100 * (pct(timings[k], q) / pct(timings['raw_nb'], q) - 1):+.0f}"
                                    for q in (0.1, 0.25, 0.5)) + "%"
                print(f"   {_size(nbytes):>6}: no check {over_at('unchecked')}, check before the data "
                      f"(default) {over_at('checked')}, check alongside {over_at('alongside')}")


def _size(n):
    return f"{n >> 20} MB" if n >= 1 << 20 else f"{n >> 10} KB"


def _us(s):
    return f"{s * 1e3:.2f} ms" if s >= 1e-3 else f"{s * 1e6:.0f} us"


def ddp_scaling(dist, MPI, torch, np):
    """Step times, the variants interleaved step by step so that a shared machine's load falls on all
    of them alike: one process alone (the other ranks idle meanwhile, asleep rather than polling),
    then every rank without DDP, with DDP and its progress thread off, on; and the buckets'
    all_reduces alone, one after another.

    Two measures of the communication hidden behind backward, both 1 - exposed / alone:
    ``exposed`` is (a) the DDP step minus the step without DDP (what DDP adds to a step) and (b) the
    time the last gradient hook waits for the buckets. (a) includes DDP's own bookkeeping and the
    ranks' drift apart, (b) includes waiting for a slower rank: on an oversubscribed machine both can
    exceed the communication itself (negative shares)."""
    from glasstorch.nn.parallel import DistributedDataParallel as DDP
    rank = dist.get_rank()
    comm = MPI.COMM_WORLD
    batch, steps = 64, ARGS.steps or (8 if QUICK else 30)
    n = dist.get_world_size()

    widths = [784] + [int(w) for w in ARGS.hidden.split(",")] + [10]

    def make():
        torch.manual_seed(0)
        layers = []
        for a, b in zip(widths, widths[1:]):
            layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
        return torch.nn.Sequential(*layers[:-1])

    g = torch.Generator().manual_seed(rank)
    x, y = torch.randn(batch, 784, generator=g), torch.randint(0, 10, (batch,), generator=g)

    backward_started = [None]

    def one_step(model, opt):
        start = time.perf_counter()
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        backward_started[0] = time.perf_counter()
        loss.backward()
        opt.step()
        return time.perf_counter() - start

    def idle_until_all_arrive():
        """A barrier that sleeps between its tests: an idle rank leaves its core to the one working."""
        request = comm.Ibarrier()
        while not request.Test():
            time.sleep(0.0005)

    def median(v):
        return statistics.median(v[2:])   # the first steps allocate

    results = []
    for cap in [None if float(c) == 25 else float(c) for c in ARGS.caps.split(",")]:
        variants = {}
        m = make()
        variants["no DDP"] = (m, torch.optim.SGD(m.parameters(), lr=0.01), None)
        for thread in ("0", "1"):
            os.environ["GLASSTORCH_DDP_PROGRESS_THREAD"] = thread
            m = make()
            d = DDP(m, bucket_cap_mb=cap)
            variants[f"DDP, progress thread {'on' if thread == '1' else 'off'}"] = \
                (d, torch.optim.SGD(d.parameters(), lr=0.01), d)
        os.environ.pop("GLASSTORCH_DDP_PROGRESS_THREAD")
        alone_model = make()
        alone_opt = torch.optim.SGD(alone_model.parameters(), lr=0.01)
        alone = []
        times = {k: [] for k in variants}
        waits = {k: [] for k in variants}
        timelines = {k: [] for k, v in variants.items() if v[2] is not None}
        comm_alone = []
        buckets = variants["DDP, progress thread off"][2].reducer.buckets
        for _ in range(steps):
            dist.barrier()
            if rank == 0:
                alone.append(one_step(alone_model, alone_opt))
            idle_until_all_arrive()
            for name, (model, opt, d) in variants.items():
                dist.barrier()
                times[name].append(one_step(model, opt))
                if d is not None:
                    waits[name].append(d.reducer.stats["wait_s"])
                    timelines[name].append(_timeline(d.reducer.stats, backward_started[0]))
            dist.barrier()   # the same all_reduces alone, one after another: the wait without any overlap
            start = time.perf_counter()
            for b in buckets:
                comm.Allreduce(MPI.IN_PLACE, b.flat)
            comm_alone.append(time.perf_counter() - start)
        results.append((cap, len(buckets), median(alone) if rank == 0 else None,
                        {k: median(v) for k, v in times.items()}, {k: median(v) for k, v in waits.items() if v},
                        median(comm_alone), comm.gather({k: v[2:] for k, v in timelines.items()}, root=0)))
        del variants, buckets   # the DDPs go, and their progress threads with them
    if rank == 0:
        m = make()
        n_params = sum(p.numel() for p in m.parameters())
        load = ", ".join(f"{v:.1f}" for v in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
        print(f"\n2. DDP, MLP {'-'.join(map(str, widths))} ({n_params / 1e6:.2f} M parameters, "
              f"{n_params * 4 / 2**20:.1f} MiB of "
              f"gradients), batch {batch} per rank, SGD; median step of {steps} (variants interleaved step by step; "
              f"load average {load})")
        for cap, n_buckets, alone, times, waits, comm_s, timelines in results:
            print(f"   bucket_cap_mb={cap if cap else '25 (default)'} ({n_buckets} buckets): 1 process alone "
                  f"{alone * 1e3:.1f} ms/step ({batch / alone:.0f} samples/s); on {n} ranks the buckets' "
                  f"all_reduces alone take {comm_s * 1e3:.1f} ms")
            base = times["no DDP"]
            for name, step in times.items():
                line = f"      {name:<28} {step * 1e3:7.1f} ms/step  {n * batch / step:6.0f} samples/s  " \
                       f"scaling {(n * batch / step) / (batch / alone):.2f}x"
                if name in waits:
                    added, waited = step - base, waits[name]
                    line += (f"  adds {added * 1e3:5.1f} ms to a step ({100 * (1 - added / comm_s):+.0f}% hidden); "
                             f"waited at the end of backward {waited * 1e3:5.1f} ms ({100 * (1 - waited / comm_s):+.0f}%"
                             f" hidden)")
                print(line)
            _print_timelines(timelines, n_buckets)
        print(f"   timelines: per rank, medians over the steps, ms from the start of backward (loss.backward()); "
              f"a bucket is 'done' when this rank first saw it complete (the hooks test the started buckets; "
              f"the last hook waits for them all); 'backward ends' when the last gradient is ready; bytes done "
              f"before backward ended: the share of the gradients' bytes whose all_reduce this rank saw "
              f"complete by then; exposed: the last bucket's done - backward's end")


def _timeline(stats, backward_started):
    """One step's buckets relative to the start of backward (ms): (end of backward, [(bytes, launch, done)])."""
    end = (stats["backward_end_at"] - backward_started) * 1e3
    return end, [(nbytes, (launched - backward_started) * 1e3, (done - backward_started) * 1e3)
                 for _, nbytes, launched, done in stats["buckets"]]


def _print_timelines(per_rank, n_buckets):
    for name in per_rank[0]:
        for rank, timelines in enumerate(per_rank):
            steps = timelines[name]
            end = statistics.median(t[0] for t in steps)
            buckets = []
            for b in range(n_buckets):
                launch = statistics.median(t[1][b][1] for t in steps)
                done = statistics.median(t[1][b][2] for t in steps)
                buckets.append(f"{steps[0][1][b][0] / 2**20:.2f} MiB {launch:.1f}->{done:.1f}")
            hidden = [sum(nbytes for nbytes, _, d in bs if d <= e) / sum(nbytes for nbytes, _, _ in bs)
                      for e, bs in steps]
            exposed = [max(d for _, _, d in bs) - e for e, bs in steps]
            print(f"         {name}, rank {rank}: backward ends {end:.1f}; buckets (launch->done) {'; '.join(buckets)};"
                  f" bytes done before backward ended {100 * statistics.median(hidden):.0f}% (steps: "
                  f"{100 * min(hidden):.0f}-{100 * max(hidden):.0f}%); exposed {statistics.median(exposed):.1f} ms")


def main():
    import numpy as np
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(ARGS.threads)
    except ImportError:
        pass
    import glasstorch as torch
    import glasstorch.distributed as dist
    dist.init_process_group("gloo")
    from mpi4py import MPI
    if dist.get_rank() == 0:
        print(f"{MPI.Get_library_version().splitlines()[0]}, mpi4py {__import__('mpi4py').__version__}, "
              f"NumPy {np.__version__}, {dist.get_world_size()} ranks x {ARGS.threads} BLAS thread(s) on "
              f"{os.cpu_count()} cores")
    if ARGS.part in ("all_reduce", "both"):
        bandwidth(dist, MPI, torch, np)
    if ARGS.part in ("ddp", "both"):
        ddp_scaling(dist, MPI, torch, np)
    dist.destroy_process_group()


if __name__ == "__main__":
    if "RANK" not in os.environ and "PMI_RANK" not in os.environ:
        relaunch()
    main()
