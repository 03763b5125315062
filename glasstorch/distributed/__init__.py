"""glasstorch.distributed: torch.distributed's process groups and collectives, on MPI.

Each process holds its own model replica and graph; the processes meet in collectives
(``all_reduce``, ``broadcast``, ...) that MPI carries out, through mpi4py. Launch them either way
tutorials do:

    python -m glasstorch.distributed.run --nproc-per-node 2 train.py     # torchrun's flags, over mpiexec
    mpiexec -n 2 python train.py                                          # plain MPI

or from Python, with ``torch.multiprocessing.spawn(fn, nprocs=2)`` and
``init_process_group("gloo", init_method="tcp://127.0.0.1:29500", rank=r, world_size=2)`` (rank 0
serves the rendezvous at that address; no mpiexec). ``import glasstorch`` loads none of this, and
MPI itself is loaded on the first ``init_process_group``. See docs/distributed.md.

=========================  ============================================================
``distributed_c10d.py``    process groups, every collective, ``Work`` handles
``rendezvous.py``          ``env://`` and ``tcp://`` (where rank 0 is)
``_mpi.py``                loading MPI, forming the world, waiting with timeouts, failing fast
``_pmi.py``                the spawn path: rank 0 serves MPICH's process-manager protocol
``run.py``                 the launcher (torchrun's flags) over mpiexec
=========================  ============================================================
"""
from .distributed_c10d import *  # noqa: F401,F403
from .distributed_c10d import __all__ as _c10d_all
from .distributed_c10d import is_available  # noqa: F401

__all__ = list(_c10d_all)
