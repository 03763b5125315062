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
        med = {k: statistics.median(v) for k, v in timings.items()}
        rows.append((nbytes, med))
    if rank == 0:
        print("\n1. all_reduce, float32, 2 ranks: median time per call (interleaved), and glasstorch's overhead")
        print(f"{'size':>8} | {'mpi4py':>10} | {'glasstorch':>10} | {'overhead':>8} | {'no check':>10} | "
              f"{'overhead':>8} | {'mpi4py GB/s':>11}")
        for nbytes, med in rows:
            over = lambda k: 100 * (med[k] / med["raw"] - 1)  # noqa: E731
            print(f"{_size(nbytes):>8} | {_us(med['raw']):>10} | {_us(med['checked']):>10} | {over('checked'):>7.1f}% | "
                  f"{_us(med['unchecked']):>10} | {over('unchecked'):>7.1f}% | {nbytes / med['raw'] / 1e9:>11.2f}")


def _size(n):
    return f"{n >> 20} MB" if n >= 1 << 20 else f"{n >> 10} KB"


def _us(s):
    return f"{s * 1e3:.2f} ms" if s >= 1e-3 else f"{s * 1e6:.0f} us"


def ddp_scaling(dist, MPI, torch, np):
    from glasstorch.nn.parallel import DistributedDataParallel as DDP
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
        return statistics.median(times[2:])

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
    # DDP
    m = make()
    ddp = DDP(m)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    times, waits, comms = [], [], []
    for i in range(steps):
        dist.barrier()
        start = time.perf_counter()
        opt.zero_grad()
        torch.nn.functional.cross_entropy(ddp(x), y).backward()
        opt.step()
        times.append(time.perf_counter() - start)
        waits.append(ddp.reducer.stats["wait_s"])
    with_ddp = statistics.median(times[2:])
    wait = statistics.median(waits[2:])
    # the same all_reduces alone, one after another (what backward would wait without overlap)
    buckets = ddp.reducer.buckets
    for _ in range(steps):
        dist.barrier()
        start = time.perf_counter()
        for b in buckets:
            MPI.COMM_WORLD.Allreduce(MPI.IN_PLACE, b.flat)
        comms.append(time.perf_counter() - start)
    comm_alone = statistics.median(comms[2:])
    if rank == 0:
        n_params = sum(p.numel() for p in m.parameters())
        print(f"\n2. DDP, MLP 784-1024-1024-10 ({n_params / 1e6:.2f} M parameters, {n_params * 4 / 2**20:.1f} MiB of "
              f"gradients in {len(buckets)} buckets), batch {batch} per rank, median step of {steps}")
        print(f"   1 process alone              {alone * 1e3:8.1f} ms/step   {batch / alone:8.0f} samples/s")
        print(f"   2 ranks, no DDP (compute)    {shared * 1e3:8.1f} ms/step   (sharing the machine)")
        print(f"   2 ranks with DDP             {with_ddp * 1e3:8.1f} ms/step   {2 * batch / with_ddp:8.0f} samples/s")
        print(f"   scaling (samples/s, 2 ranks / 1): {(2 * batch / with_ddp) / (batch / alone):.2f}x")
        print(f"   all_reduce of the buckets alone: {comm_alone * 1e3:.1f} ms; backward waited for them at its end: "
              f"{wait * 1e3:.1f} ms")
        print(f"   communication hidden behind backward: {100 * max(0.0, 1 - wait / comm_alone):.0f}%")


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
