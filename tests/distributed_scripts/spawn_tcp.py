"""The tutorials' other form: ``mp.spawn(worker, nprocs=2)``, each worker joining with
``init_process_group("gloo", init_method="tcp://127.0.0.1:PORT", rank=rank, world_size=n)``.

    python spawn_tcp.py     (prints 'TCP OK <rank>' from every rank)
"""
import socket
import sys
from datetime import timedelta

import glasstorch as torch
import glasstorch.distributed as dist
import glasstorch.multiprocessing as mp


def worker(rank, world_size, port):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world_size,
                            timeout=timedelta(seconds=60))
    assert (dist.get_rank(), dist.get_world_size()) == (rank, world_size)
    t = torch.full((3,), float(rank + 1))
    dist.all_reduce(t, async_op=True).wait()
    assert t.tolist() == [world_size * (world_size + 1) / 2] * 3, t
    ranks = [None] * world_size
    dist.all_gather_object(ranks, {"rank": rank})
    assert ranks == [{"rank": r} for r in range(world_size)], ranks
    dist.destroy_process_group()
    print(f"TCP OK {rank}", flush=True)


if __name__ == "__main__":
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free_port = s.getsockname()[1]
    mp.spawn(worker, args=(int(sys.argv[1]) if len(sys.argv) > 1 else 2, free_port), nprocs=2)
