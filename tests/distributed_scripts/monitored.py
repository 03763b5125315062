"""monitored_barrier as torch documents it: rank 0 names the rank(s) that did not reach it in time.

    python monitored.py SKIP WAIT_ALL        (one process per rank, env://)

SKIP: the ranks that do not call the second monitored_barrier (comma-separated, may be empty);
WAIT_ALL: 1 for ``wait_all_ranks=True``. First every rank passes one monitored_barrier (and rank 0
checks the argument errors); then the ranks not in SKIP call one with a 1 s timeout, while the
skipping ones sleep past it. Every rank prints ``PASSED <rank>`` after the first, and ``OK <rank>``
or ``ERROR <rank> <seconds>: <message as repr>`` for the second.
"""
import os
import sys
import time
import warnings
from datetime import timedelta

import glasstorch.distributed as dist

skip = {int(r) for r in sys.argv[1].split(",") if r}
wait_all = sys.argv[2] == "1"
dist.init_process_group("gloo", timeout=timedelta(seconds=60))
rank = dist.get_rank()

mpi_group = dist.new_group(backend="mpi")
if rank == 0:
    for bad, kind in ((5, TypeError), ("x", TypeError)):
        try:
            dist.monitored_barrier(timeout=bad)
        except kind as e:
            assert str(e) == f"Expected timeout argument to be of type datetime.timedelta, got {bad}", e
        else:
            raise AssertionError(f"monitored_barrier(timeout={bad!r}) did not raise")
    try:
        dist.monitored_barrier(mpi_group)
    except ValueError as e:
        assert str(e) == "monitored_barrier is only implemented for GLOO backend.", e
    else:
        raise AssertionError("monitored_barrier on an mpi group did not raise")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    assert dist.monitored_barrier(timeout=20.0) is None   # a float: seconds, with torch's warning
assert any("Please specify timeout arg as a timedelta" in str(w.message) for w in caught), caught
assert dist.monitored_barrier(timeout=timedelta(seconds=20), wait_all_ranks=True) is None
print(f"PASSED {rank}", flush=True)

if rank in skip:
    time.sleep(4)      # alive, busy elsewhere, past rank 0's timeout
    sys.exit(0)
start = time.monotonic()
try:
    dist.monitored_barrier(timeout=timedelta(seconds=1), wait_all_ranks=wait_all)
except RuntimeError as e:
    print(f"ERROR {rank} {time.monotonic() - start:.1f}: {e!r}", flush=True)
    raise
print(f"OK {rank}", flush=True)
dist.destroy_process_group()
