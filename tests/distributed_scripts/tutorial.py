"""What the tutorials do, small: async collectives and DDP (progress thread on) against one process.

``suite.py`` runs :func:`run` last on every rank (its process group stays in use afterwards only
for leaving). Every rank starts several collectives with ``async_op=True`` before waiting for any
(in another order than it started them), checks them against NumPy, trains a DDP model (its MPI
progress thread forced on, GLASSTORCH_DDP_PROGRESS_THREAD=1) and compares it with one process
trained on the ranks' batches together, then breaks a backward between two buckets and still
exits cleanly. Prints ``OK <rank>``; any difference raises.
"""
import os

import numpy as np

import glasstorch as torch
import glasstorch.distributed as dist
from glasstorch.nn.parallel import DistributedDataParallel as DDP


def close(t, expected, what):
    if not np.allclose(t.numpy(), expected, rtol=1e-12, atol=1e-12):
        raise AssertionError(f"rank {dist.get_rank()}: {what}: {t.numpy()} != {expected}")


def async_collectives(r, n):
    base = np.arange(6, dtype=np.float64).reshape(2, 3)
    summed = torch.tensor(base + r)
    broadcast = torch.tensor(base * (r + 1))
    gathered = [torch.zeros(2, 3, dtype=torch.float64) for _ in range(n)]
    scattered = torch.zeros(2, dtype=torch.float64)
    exchanged = torch.zeros(n, dtype=torch.float64)
    works = [dist.all_reduce(summed, async_op=True),
             dist.broadcast(broadcast, src=n - 1, async_op=True),
             dist.all_gather(gathered, torch.tensor(base * r), async_op=True),
             dist.reduce_scatter_tensor(scattered, torch.arange(2 * n, dtype=torch.float64) + r, async_op=True),
             dist.all_to_all_single(exchanged, torch.full((n,), float(r), dtype=torch.float64), async_op=True),
             dist.barrier(async_op=True)]
    for work in reversed(works):
        work.wait()
        if not (work.is_completed() and work.is_success()):
            raise AssertionError(f"{work} not completed after wait()")
    close(summed, sum(base + q for q in range(n)), "async all_reduce")
    close(broadcast, base * n, "async broadcast")
    for q in range(n):
        close(gathered[q], base * q, f"async all_gather[{q}]")
    close(scattered, sum(np.arange(2 * n, dtype=np.float64)[2 * r:2 * r + 2] + q for q in range(n)),
          "async reduce_scatter_tensor")
    close(exchanged, np.arange(n, dtype=np.float64), "async all_to_all_single")


def ddp_against_one_process(r, n, steps=2, per_rank=4):
    g = torch.Generator().manual_seed(7)
    x = torch.randn(steps * per_rank * n, 6, generator=g, dtype=torch.float64)
    y = torch.randn(steps * per_rank * n, 2, generator=g, dtype=torch.float64)

    def make(seed):
        torch.manual_seed(seed)
        return torch.nn.Sequential(torch.nn.Linear(6, 32), torch.nn.Tanh(), torch.nn.Linear(32, 2)).double()

    reference = make(0)
    ref_opt = torch.optim.SGD(reference.parameters(), lr=0.1)
    model = make(r)                               # DDP broadcasts rank 0's parameters
    ddp = DDP(model, bucket_cap_mb=0.0005)   # 4 buckets: the first one is the last bias alone
    if ddp.reducer.progress is None:
        raise AssertionError("GLASSTORCH_DDP_PROGRESS_THREAD=1 did not start the progress thread")
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    for step in range(steps):
        rows = slice(step * per_rank * n, (step + 1) * per_rank * n)
        ref_opt.zero_grad()
        torch.nn.functional.mse_loss(reference(x[rows]), y[rows]).backward()
        ref_opt.step()
        mine = slice(step * per_rank * n + r * per_rank, step * per_rank * n + (r + 1) * per_rank)
        opt.zero_grad()
        torch.nn.functional.mse_loss(ddp(x[mine]), y[mine]).backward()
        opt.step()
    for (name, p), q in zip(model.named_parameters(), reference.parameters()):
        close(p.detach(), q.detach().numpy(), f"DDP parameter {name} after {steps} steps")

    # a backward that raises between two buckets (the progress thread running): the next forward is
    # torch's error, and the process still leaves MPI cleanly at exit (the thread is out of MPI)
    def broken(inp):
        h = model[1](model[0](inp))
        h.register_hook(lambda grad: (_ for _ in ()).throw(ValueError("a hook fails on purpose")))
        return model[2](h)

    ddp.module.forward = broken
    try:
        ddp(x[:per_rank]).sum().backward()
        raise AssertionError("the hook did not raise")
    except ValueError:
        pass
    if ddp.reducer.next_bucket == 0 or not ddp.reducer.progress._active.is_set():
        raise AssertionError("the broken backward stopped before its first bucket: the thread never ran")
    try:
        ddp(x[:per_rank])
        raise AssertionError("DDP did not notice the unfinished reduction")
    except RuntimeError as e:
        if "Expected to have finished reduction in the prior iteration" not in str(e):
            raise


def run(r, n):
    async_collectives(r, n)
    os.environ["GLASSTORCH_DDP_PROGRESS_THREAD"] = "1"
    try:
        ddp_against_one_process(r, n)
    finally:
        del os.environ["GLASSTORCH_DDP_PROGRESS_THREAD"]
    print(f"OK {r}", flush=True)
