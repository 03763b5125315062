"""What each rank runs under ``glasstorch.distributed.run``: torchrun's environment, then the script.

Under mpiexec the rank is MPI's (``PMI_RANK``/``MPI_LOCALRANKID`` from MPICH's hydra,
``OMPI_COMM_WORLD_*`` from Open MPI); it becomes ``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``,
``LOCAL_WORLD_SIZE``, ``GROUP_RANK`` before the script starts, as torchrun sets them. (Started by
the launcher itself, the variables are already there.) The script then runs as ``__main__``. If it
raises, the rank leaves a record (rank, error, traceback) for the launcher's summary and the
exception goes on as usual.
"""
import json
import os
import runpy
import socket
import sys
import time
import traceback


def _from_mpi():
    env = os.environ
    pairs = [("PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"),
             ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
              "OMPI_COMM_WORLD_LOCAL_SIZE")]
    for rank, size, local, local_size in pairs:
        if rank in env and size in env:
            r, n = int(env[rank]), int(env[size])
            lr, ln = int(env.get(local, r)), int(env.get(local_size, n))
            return {"RANK": r, "WORLD_SIZE": n, "LOCAL_RANK": lr, "LOCAL_WORLD_SIZE": ln, "GROUP_RANK": r // ln,
                    "GROUP_WORLD_SIZE": max(1, n // ln), "ROLE_RANK": r, "ROLE_WORLD_SIZE": n, "ROLE_NAME": "default"}
    return {}


def _record_failure(exc):
    directory = os.environ.get("GLASSTORCH_ERROR_DIR")
    if not directory:
        return
    record = {"time": time.time(), "host": socket.gethostname(), "pid": os.getpid(),
              "rank": os.environ.get("RANK", "?"), "local_rank": os.environ.get("LOCAL_RANK", "?"),
              "error": f"{type(exc).__name__}: {exc}".splitlines()[0][:300], "traceback": traceback.format_exc()}
    try:
        with open(os.path.join(directory, f"rank{record['rank']}.json"), "w") as f:
            json.dump(record, f)
    except OSError:
        pass


def main(argv):
    if "RANK" not in os.environ:
        os.environ.update({k: str(v) for k, v in _from_mpi().items()})
    if os.environ.get("GLASSTORCH_NO_PYTHON"):
        os.execvp(argv[0], argv)
    module = argv[0] == "-m"
    target = argv[1] if module else argv[0]
    sys.argv = argv[1:] if module else list(argv)
    if not module:
        sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
    try:
        if module:
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(target, run_name="__main__")
    except SystemExit:
        raise
    except BaseException as exc:
        _record_failure(exc)
        raise


if __name__ == "__main__":
    main(sys.argv[1:])
