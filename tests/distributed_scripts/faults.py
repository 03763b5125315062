"""A rank that fails in one way; the others must end with an error naming it, never hang.

    python faults.py MODE                      (under the launcher, or one process per rank with env://)

MODE: ``ok`` (no fault), ``raise`` (rank 1 raises before the second all_reduce), ``kill`` (rank 1 kills itself),
``hang`` (rank 1 sleeps far past the timeout), ``exit`` (rank 1's script ends early, without the
collectives the others still run). The timeout is 60 s (``hang``: GLASSTORCH_TEST_TIMEOUT) so a
failure found in a few seconds came from the failure notice or the rendezvous, not the timeout.
Every rank prints ``ERROR <rank>: <message>`` for the error it got.

GLASSTORCH_TEST_BACKEND picks the backend ("gloo" by default; plain ``mpiexec`` runs use "mpi");
GLASSTORCH_TEST_TCP=1 forms the group through ``init_method="tcp://MASTER_ADDR:MASTER_PORT"`` with
``rank`` and ``world_size`` passed (from RANK and WORLD_SIZE) instead of ``env://``.
"""
import os
import signal
import sys
import time
from datetime import timedelta

import glasstorch as torch
import glasstorch.distributed as dist

mode = sys.argv[1]
timeout = float(os.environ.get("GLASSTORCH_TEST_TIMEOUT", "60"))
backend = os.environ.get("GLASSTORCH_TEST_BACKEND", "gloo")
if os.environ.get("GLASSTORCH_TEST_TCP"):
    dist.init_process_group(backend, init_method=f"tcp://{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}",
                            rank=int(os.environ["RANK"]), world_size=int(os.environ["WORLD_SIZE"]),
                            timeout=timedelta(seconds=timeout))
else:
    dist.init_process_group(backend, timeout=timedelta(seconds=timeout))
rank = dist.get_rank()
x = torch.ones(3)
dist.all_reduce(x)
print(f"READY {rank} {time.time():.3f}", flush=True)
if rank == 1:
    if mode == "raise":
        raise ValueError("rank 1 broke on purpose")
    if mode == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "hang":
        time.sleep(120)
    if mode == "exit":
        sys.exit(0)
try:
    for _ in range(3):
        dist.all_reduce(x)
except dist.DistBackendError as e:
    print(f"ERROR {rank}: {e}", flush=True)
    raise
print(f"DONE {rank}", flush=True)
