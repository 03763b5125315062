"""torch.distributed on MPI: what glasstorch adds to a collective, and what DDP gains from 2 ranks.

    python bench/bench_distributed.py            # starts itself on 2 ranks (mpiexec), ~1-2 minutes
    python bench/bench_distributed.py --quick    # fewer sizes and repetitions

1. ``all_reduce`` of float32 buffers from 1 KB to 64 MB: ``dist.all_reduce(t)`` against raw mpi4py
   (``comm.Allreduce(IN_PLACE, a)``) on the same memory. Median time per call of interleaved
   repetitions (raw, glasstorch, raw, ...), and the overhead. glasstorch is measured twice: as it
   runs by default (each collective first checks, with one small Iallgather, that every rank runs
   the same collective on the same shapes) and with that check off (``TORCH_DISTRIBUTED_DEBUG=OFF``).
2. DistributedDataParallel on an MLP (784-1024-1024-10, batch 64 per rank, SGD): the step time of one
   process alone, of each of 2 ranks without DDP (what sharing the machine costs), and with DDP;
   the scaling (samples per second, 2 ranks / 1); and how much of the gradient communication is hidden
   behind backward: 1 - (time backward waits for the buckets at its end) / (time the same all_reduces
   take alone, one after another).

NumPy's BLAS runs one thread per rank (threadpoolctl), so 2 ranks use the 2 cores.
"""
import os
import statistics
import subprocess
import sys
import time

QUICK = "--quick" in sys.argv


def relaunch():
    """Not in an MPI world yet: start this file on 2 ranks through the launcher."""
    cmd = [sys.executable, "-m", "glasstorch.distributed.run", "--nproc-per-node", "2", os.path.abspath(__file__)]
    sys.exit(subprocess.call(cmd + sys.argv[1:]))


def bandwidth(dist, MPI, torch, np):
    comm = MPI.COMM_WORLD
    rank = dist.get_rank()
    pg = dist.distributed_c10d._get_default_group()
    sizes = [1 << 10, 1 << 14, 1 << 20, 1 << 24] if QUICK else [1 << k for k in range(10, 27, 2)]
    rows = []
    for nbytes in sizes:
        buf = np.ones(nbytes // 4, dtype=np.float32)
        t = torch.from_numpy(buf)
        reps = max(5, min(200, (64 << 20) // nbytes // 4)) // (3 if QUICK else 1)
        timings = {"raw": [], "checked": [], "unchecked": []}

        def raw():
            comm.Allreduce(MPI.IN_PLACE, buf)

        def ours_checked():
            pg._checked = True
            dist.all_reduce(t)

        def ours_unchecked():
            pg._checked = False
            dist.all_reduce(t)

        for _ in range(2):  # warm-up
            raw(); ours_checked(); ours_unchecked()
        for _ in range(reps):
            for name, fn in (("raw", raw), ("checked", ours_checked), ("unchecked", ours_unchecked)):
                comm.Barrier()
                start = time.perf_counter()
                fn()
                timings[name].append(time.perf_counter() - start)
            buf[...] = 1.0  # keep the values finite
        pg._checked = True
        rows.append((nbytes, {k: (statistics.median(v), min(v)) for k, v in timings.items()}))
    if rank == 0:
        print("\n1. all_reduce, float32, 2 ranks: time per call (interleaved repetitions: median, and the "
              "fastest), and glasstorch's overhead over mpi4py")
        print(f"{'size':>8} | {'mpi4py':>19} | {'glasstorch':>19} | {'overhead':>13} | {'no check':>19} | "
              f"{'overhead':>13} | {'GB/s':>5}")
        for nbytes, t in rows:
            over = lambda k, i: 100 * (t[k][i] / t["raw"][i] - 1)  # noqa: E731
            both = lambda k: f"{_us(t[k][0])} / {_us(t[k][1])}"  # noqa: E731
            print(f"{_size(nbytes):>8} | {both('raw'):>19} | {both('checked'):>19} | "
                  f"{over('checked', 0):>5.1f}% / {over('checked', 1):>4.1f}% | {both('unchecked'):>19} | "
                  f"{over('unchecked', 0):>5.1f}% / {over('unchecked', 1):>4.1f}% | {nbytes / t['raw'][0] / 1e9:>5.2f}")


def _size(n):
    return f"{n >> 20} MB" if n >= 1 << 20 else f"{n >> 10} KB"


def _us(s):
    return f"{s * 1e3:.2f} ms" if s >= 1e-3 else f"{s * 1e6:.0f} us"


def ddp_scaling(dist, MPI, torch, np):
    rank = dist.get_rank()
    batch, steps = 64, (5 if QUICK else 15)

    def make():
        torch.manual_seed(0)
        return torch.nn.Sequential(torch.nn.Linear(784, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 1024),
                                   torch.nn.ReLU(), torch.nn.Linear(1024, 10))

    g = torch.Generator().manual_seed(rank)
    x, y = torch.randn(batch, 784, generator=g), torch.randint(0, 10, (batch,), generator=g)

    def step_times(model, opt, n):
        times = []
        for _ in range(n):
            start = time.perf_counter()
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
            times.append(time.perf_counter() - start)
        return statistics.median(times[2:])  # the first steps allocate

    # one process alone (rank 1 waits in a barrier meanwhile)
    alone = None
    if rank == 0:
        m = make()
        alone = step_times(m, torch.optim.SGD(m.parameters(), lr=0.01), steps)
    dist.barrier()
    # both ranks computing, no communication: what sharing the machine costs
    m = make()
    shared = step_times(m, torch.optim.SGD(m.parameters(), lr=0.01), steps)
    dist.barrier()
    ddp_rows = [measure_ddp(dist, MPI, torch, make, x, y, steps, cap) for cap in (None, 1)]
    if rank == 0:
        m = make()
        n_params = sum(p.numel() for p in m.parameters())
        print(f"\n2. DDP, MLP 784-1024-1024-10 ({n_params / 1e6:.2f} M parameters, {n_params * 4 / 2**20:.1f} MiB of "
              f"gradients), batch {batch} per rank, median step of {steps}")
        print(f"   1 process alone              {alone * 1e3:8.1f} ms/step   {batch / alone:8.0f} samples/s")
        print(f"   2 ranks, no DDP (compute)    {shared * 1e3:8.1f} ms/step   (sharing the machine)")
        for cap, n_buckets, with_ddp, wait, comm_alone in ddp_rows:
            label = f"bucket_cap_mb={cap if cap else '25 (default)'}, {n_buckets} buckets"
            print(f"   2 ranks with DDP, {label}")
            print(f"      {with_ddp * 1e3:8.1f} ms/step   {2 * batch / with_ddp:8.0f} samples/s   scaling (samples/s, "
                  f"2 ranks / 1): {(2 * batch / with_ddp) / (batch / alone):.2f}x")
            print(f"      all_reduce of the buckets alone {comm_alone * 1e3:.1f} ms; backward waited for them at its "
                  f"end {wait * 1e3:.1f} ms: {100 * max(0.0, 1 - wait / comm_alone):.0f}% of the communication hidden "
                  f"behind backward")


def measure_ddp(dist, MPI, torch, make, x, y, steps, bucket_cap_mb):
    """Median DDP step, the median wait at the end of backward, and the buckets' all_reduces alone."""
    from glasstorch.nn.parallel import DistributedDataParallel as DDP
    m = make()
    ddp = DDP(m, bucket_cap_mb=bucket_cap_mb)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    times, waits, comms = [], [], []
    for _ in range(steps):
        dist.barrier()
        start = time.perf_counter()
        opt.zero_grad()
        torch.nn.functional.cross_entropy(ddp(x), y).backward()
        opt.step()
        times.append(time.perf_counter() - start)
        waits.append(ddp.reducer.stats["wait_s"])
    buckets = ddp.reducer.buckets
    for _ in range(steps):  # the same all_reduces alone, one after another: the wait without any overlap
        dist.barrier()
        start = time.perf_counter()
        for b in buckets:
            MPI.COMM_WORLD.Allreduce(MPI.IN_PLACE, b.flat)
        comms.append(time.perf_counter() - start)
    return (bucket_cap_mb, len(buckets), statistics.median(times[2:]), statistics.median(waits[2:]),
            statistics.median(comms[2:]))


def main():
    import numpy as np
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1)
    except ImportError:
        pass
    import glasstorch as torch
    import glasstorch.distributed as dist
    dist.init_process_group("gloo")
    from mpi4py import MPI
    if dist.get_rank() == 0:
        print(f"{MPI.Get_library_version().splitlines()[0]}, mpi4py {__import__('mpi4py').__version__}, "
              f"NumPy {np.__version__}, 2 ranks on {os.cpu_count()} cores")
    bandwidth(dist, MPI, torch, np)
    ddp_scaling(dist, MPI, torch, np)
    dist.destroy_process_group()


if __name__ == "__main__":
    if "RANK" not in os.environ and "PMI_RANK" not in os.environ:
        relaunch()
    main()
