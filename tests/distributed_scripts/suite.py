"""The collectives, then DistributedDataParallel, on every rank; tests/test_distributed.py checks.

    python -m glasstorch.distributed.run --nproc-per-node 3 suite.py OUT_DIR   # the launcher (mpiexec),
                                                                                # init_process_group("mpi")
    python suite.py OUT_DIR spawn 2      # mp.spawn, MASTER_ADDR/MASTER_PORT in the environment (env://),
                                         # init_process_group("gloo", rank=rank, world_size=n) as the tutorials
    python suite.py OUT_DIR spawn 3 --tcp --training-only
                                         # mp.spawn, init_method="tcp://127.0.0.1:PORT"; DDP training only
    python -m glasstorch.distributed.run --nnodes 2 ... suite.py OUT_DIR --backend gloo --training-only

One process group per run serves every check (starting ranks is what costs time on a small
machine). First every collective against NumPy (collectives.py; each rank prints
'CHECKED <rank> <count>'). Then each rank writes OUT_DIR/rank<r>.json: the parameters after plain DDP steps and after no_sync
accumulation (all that ``--training-only`` runs), find_unused_parameters results, the errors DDP raised, the seatbelt's warnings and
the labels ``inspection.draw`` put on the hooked leaves. The data and model come from
:func:`make_data`/:func:`make_model`, which the test also calls to train the reference. Last, the
tutorials' async collectives and DDP with its progress thread (tutorial.py; prints 'OK <rank>').
"""
import json
import os
import socket
import sys
import warnings
from datetime import timedelta

import glasstorch as torch
import glasstorch.distributed as dist
from glasstorch.nn.parallel import DistributedDataParallel as DDP

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collectives  # noqa: E402
import tutorial  # noqa: E402

STEPS = 2     # the second step is the first that uses momentum
TORCHRUN_VARIABLES = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR",
                      "MASTER_PORT", "TORCHELASTIC_RUN_ID")
PER_RANK = 4


def make_data(world_size):
    g = torch.Generator().manual_seed(1234)
    x = torch.randn(STEPS * PER_RANK * world_size, 5, generator=g, dtype=torch.float64)
    y = torch.randn(STEPS * PER_RANK * world_size, 3, generator=g, dtype=torch.float64)
    return x, y


def make_model(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(5, 16), torch.nn.Tanh(), torch.nn.Linear(16, 16), torch.nn.Tanh(),
                               torch.nn.Linear(16, 3)).double()


def batch(x, y, step, rank, world_size):
    """Step ``step``'s global batch is rows [step*B*n, (step+1)*B*n); rank r takes every n-th row."""
    lo, hi = step * PER_RANK * world_size, (step + 1) * PER_RANK * world_size
    return x[lo:hi][rank::world_size], y[lo:hi][rank::world_size]


def params(model):
    return {n: p.detach().numpy().tolist() for n, p in model.named_parameters()}


def run(out_dir, training_only=False):
    if not training_only:
        collectives.run_checks()
        print(f"CHECKED {dist.get_rank()} {collectives.CHECKS[0]}", flush=True)
    r, n = dist.get_rank(), dist.get_world_size()
    report = {"host": socket.gethostname(), "bitwise_float_errors": collectives.BITWISE_FLOAT_ERRORS,
              "available_and_initialized": [dist.is_available(), dist.is_initialized()],
              "environment": {k: os.environ.get(k) for k in TORCHRUN_VARIABLES}}
    x, y = make_data(n)

    # 1. plain steps; every rank starts from a different init: DDP broadcasts rank 0's (seed 0)
    model = make_model(seed=r)
    ddp = DDP(model, bucket_cap_mb=0.001)           # small buckets: several all_reduces per step
    report["buckets"] = len(ddp.reducer.buckets)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    for step in range(STEPS):
        xs, ys = batch(x, y, step, r, n)
        opt.zero_grad()
        torch.nn.functional.mse_loss(ddp(xs), ys).backward()
        opt.step()
    report["trained"] = params(model)
    # the last backward's timeline (bench_distributed reports the communication hidden from it):
    # every bucket started before the last gradient was ready, and completed after it started
    stats = ddp.reducer.stats
    report["timeline"] = {"buckets": [i for i, _, _, _ in stats["buckets"]],
                          "ordered": all(launched <= stats["backward_end_at"] and launched <= done
                                         for _, _, launched, done in stats["buckets"])}
    report["state_dict_keys"] = list(ddp.state_dict())

    # 2. gradient accumulation: two micro-batches under no_sync, the second synchronised
    model = make_model(seed=10 + r)
    ddp = DDP(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    opt.zero_grad()
    with ddp.no_sync():
        xs, ys = batch(x, y, 0, r, n)
        torch.nn.functional.mse_loss(ddp(xs), ys).backward()
    report["local_grad_after_no_sync"] = model[0].bias.grad.tolist()
    xs, ys = batch(x, y, 1, r, n)
    torch.nn.functional.mse_loss(ddp(xs), ys).backward()
    opt.step()
    report["accumulated"] = params(model)
    if training_only:
        _write(out_dir, r, report)
        dist.destroy_process_group()
        return

    # 3. find_unused_parameters: the second head is used by rank 0 only
    class TwoHeads(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = torch.nn.Linear(5, 4).double()
            self.head_a = torch.nn.Linear(4, 1).double()
            self.head_b = torch.nn.Linear(4, 1).double()
            self.never = torch.nn.Linear(4, 1).double()

        def forward(self, inp, use_b):
            h = self.body(inp)
            return self.head_a(h) + (self.head_b(h) if use_b else 0)

    torch.manual_seed(0)
    heads = TwoHeads()
    ddp = DDP(heads, find_unused_parameters=True)
    xs, _ = batch(x, y, 0, r, n)
    ddp(xs, use_b=(r == 0)).sum().backward()
    report["unused"] = {"head_b.weight": heads.head_b.weight.grad.tolist(),
                        "never.weight": None if heads.never.weight.grad is None else heads.never.weight.grad.tolist(),
                        "body.weight": heads.body.weight.grad.tolist()}

    # 4. unused parameters without find_unused_parameters: torch's error at the next forward
    torch.manual_seed(0)
    heads = TwoHeads()
    ddp = DDP(heads)
    ddp(xs, use_b=False).sum().backward()
    try:
        ddp(xs, use_b=False)
        report["unused_error"] = None
    except RuntimeError as e:
        report["unused_error"] = str(e)
    dist.barrier()

    # 5. replicas that differ: an error at construction naming the parameter
    width = 4 if r == 0 else 6
    try:
        DDP(torch.nn.Sequential(torch.nn.Linear(5, width), torch.nn.Linear(width, 1)))
        report["mismatch_error"] = None
    except RuntimeError as e:
        report["mismatch_error"] = str(e)
    # ... or a parameter more on the last rank
    layers = [torch.nn.Linear(5, 4), torch.nn.Linear(4, 1)] + ([torch.nn.Linear(1, 1)] if r == n - 1 else [])
    try:
        DDP(torch.nn.Sequential(*layers))
        report["count_error"] = None
    except RuntimeError as e:
        report["count_error"] = str(e)

    # 6. buffers follow rank 0 at each forward
    bn = torch.nn.BatchNorm1d(5).double()
    bn.running_mean.fill_(float(r))
    ddp = DDP(bn, broadcast_buffers=True)
    bn.running_mean.fill_(float(r))                 # after construction, each rank changes its own
    ddp.eval()
    ddp(xs)
    report["buffer_after_forward"] = bn.running_mean.tolist()

    # 7. the seatbelt: rank 1's last batch is one sample short
    from glasstorch.inspection import seatbelt, draw
    model = make_model(seed=0)
    ddp = DDP(model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with seatbelt() as belt:
            xs, ys = batch(x, y, 0, r, n)
            if r == 1:
                xs, ys = xs[:-1], ys[:-1]
            torch.nn.functional.mse_loss(ddp(xs), ys).backward()
    report["seatbelt"] = [(c.__name__, m) for c, _, _, m in belt.found]

    # 8. the drawing of a DDP step: which leaves' hooks start an all_reduce
    loss = torch.nn.functional.mse_loss(ddp(xs), ys)
    drawing = draw(loss, params=dict(ddp.named_parameters()))
    report["draw_hooks"] = {n.label.split("\n")[0]: list(n.hooks) for n in drawing.nodes if n.kind == "leaf"}
    report["draw_dot_marked"] = 'penwidth=2' in drawing.dot
    loss.backward()

    _write(out_dir, r, report)
    tutorial.run(r, n)
    dist.destroy_process_group()


def _write(out_dir, rank, report):
    with open(os.path.join(out_dir, f"rank{rank}.json"), "w") as f:
        json.dump(report, f)


def spawned(rank, world_size, out_dir, tcp_port, training_only):
    init_method = f"tcp://127.0.0.1:{tcp_port}" if tcp_port else None    # None: env://
    dist.init_process_group("gloo", init_method=init_method, rank=rank, world_size=world_size,
                            timeout=timedelta(seconds=60))
    run(out_dir, training_only)


if __name__ == "__main__":
    import argparse
    parser = argparse.ArgumentParser()
    parser.add_argument("out_dir")
    parser.add_argument("spawn", nargs="?", choices=["spawn"], help="start the ranks with mp.spawn")
    parser.add_argument("nprocs", nargs="?", type=int, default=2)
    parser.add_argument("--tcp", action="store_true", help="spawn: init_method='tcp://...' instead of env://")
    parser.add_argument("--backend", default="mpi", help="without spawn: init_process_group's backend")
    parser.add_argument("--training-only", action="store_true", help="only the DDP training steps")
    args = parser.parse_args()
    if args.spawn:
        import glasstorch.multiprocessing as mp
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if not args.tcp:
            os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
        mp.spawn(spawned, args=(args.nprocs, args.out_dir, port if args.tcp else None, args.training_only),
                 nprocs=args.nprocs)
    else:
        dist.init_process_group(args.backend, timeout=timedelta(seconds=60))
        run(args.out_dir, args.training_only)
