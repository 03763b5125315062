"""One rank fails once the group has formed; the others end normally after it has gone, or one of
them waits for it in a collective. Every rank must end, none hang: the waiting one with an error
naming the failed rank, the others with status 0.

    python fail_and_end.py HOW FAILING OTHERS              (one process per rank: RANK, WORLD_SIZE,
                                                            MASTER_ADDR/PORT)
    python fail_and_end.py HOW FAILING OTHERS spawn N      (mp.spawn of N ranks, tcp:// rendezvous)

HOW: ``raise`` (a ValueError) or ``kill`` (SIGKILL to itself). OTHERS: ``end`` (every other rank
sleeps past the failure, then its script ends) or ``wait`` (the rank after FAILING, cyclically,
waits for it in an all_reduce on a group of the two; the rest end). (Two ranks ending after rank 0,
whose process serves the rendezvous, had failed once hung in MPI_Finalize: the rendezvous counted
the aborting rank's own MPI_Finalize barrier as an arrival.) Each rank prints ``ERROR <rank>:
<message>`` or ``END <rank>``.
"""
import os
import signal
import socket
import sys
import time
from datetime import timedelta

import glasstorch as torch
import glasstorch.distributed as dist
import glasstorch.multiprocessing as mp

TIMEOUT = 60    # the group's timeout: an end within seconds came from the failure notice, not from it


def rank_main(how, failing, others, init_method=None, rank=None, world_size=None):
    dist.init_process_group("gloo", init_method=init_method, rank=rank, world_size=world_size,
                            timeout=timedelta(seconds=TIMEOUT))
    rank, n = dist.get_rank(), dist.get_world_size()
    waiter = (failing + 1) % n if others == "wait" else None
    pair = dist.new_group(sorted({failing, (failing + 1) % n}))   # every rank takes part in making it
    # the failing rank fails once every other rank has told it that it is out of the group's collectives
    # (a rank still finishing a barrier that the failing one had already passed would wait for it there)
    if rank == failing:
        for other in set(range(n)) - {rank}:
            dist.recv(torch.zeros(1), src=other)
    else:
        dist.send(torch.ones(1), dst=failing)
    if rank == failing:
        if how == "raise":
            raise ValueError(f"rank {rank} broke on purpose")
        os.kill(os.getpid(), signal.SIGKILL)
    if rank == waiter:
        try:
            dist.all_reduce(torch.ones(3), group=pair)
        except dist.DistBackendError as e:
            print(f"ERROR {rank}: {e}", flush=True)
            raise
    else:
        time.sleep(3)   # alive, busy elsewhere, while the failing rank goes
    print(f"END {rank}", flush=True)


def _spawned(rank, how, failing, others, world_size, port):
    rank_main(how, failing, others, f"tcp://127.0.0.1:{port}", rank, world_size)


if __name__ == "__main__":
    how, failing, others = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    if len(sys.argv) > 4 and sys.argv[4] == "spawn":
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            free_port = s.getsockname()[1]
        world_size = int(sys.argv[5])
        mp.spawn(_spawned, args=(how, failing, others, world_size, free_port), nprocs=world_size)
    else:
        rank_main(how, failing, others)
