"""Where the ranks meet (torch/distributed/rendezvous.py): ``env://`` and ``tcp://host:port``.

A rendezvous here only finds rank 0's address and this process's rank and world size; the meeting
itself (rank 0 serving MPICH's process-manager protocol at that address) is ``_mpi.start``'s.
Errors are torch's ("Error initializing torch.distributed using env:// rendezvous: environment
variable MASTER_ADDR expected, but not set").
"""
import os
from urllib.parse import urlparse, parse_qs

__all__ = ["rendezvous"]


def _error(scheme, msg):
    return ValueError(f"Error initializing torch.distributed using {scheme}:// rendezvous: {msg}")


def rendezvous(url, rank=None, world_size=None):
    """``(rank, world_size, (master_addr, master_port))`` for ``url``; ``rank``/``world_size`` given by
    the caller win over the URL's query and the environment."""
    if not isinstance(url, str):
        raise RuntimeError(f"`url` must be a string. {type(url)}: {url}")
    result = urlparse(url)
    query = {k: v[-1] for k, v in parse_qs(result.query).items()}
    if rank is None and "rank" in query:
        rank = int(query["rank"])
    if world_size is None and "world_size" in query:
        world_size = int(query["world_size"])
    if result.scheme == "env":
        def env(var):
            value = os.environ.get(var)
            if not value:
                raise _error("env", f"environment variable {var} expected, but not set")
            return value
        if rank is None:
            rank = int(env("RANK"))
        if world_size is None:
            world_size = int(env("WORLD_SIZE"))
        master = (env("MASTER_ADDR"), int(env("MASTER_PORT")))
    elif result.scheme == "tcp":
        if result.port is None:
            raise _error("tcp", "port number missing")
        if rank is None:
            raise _error("tcp", "rank parameter missing")
        if world_size is None:
            raise _error("tcp", "world size parameter missing")
        master = (result.hostname, result.port)
    elif result.scheme == "file":
        raise RuntimeError("glasstorch.distributed has no file:// rendezvous: use env:// or tcp://host:port "
                           "(rank 0's address), or launch with mpiexec")
    else:
        raise RuntimeError(f"No rendezvous handler for {result.scheme}://")
    if not 0 <= master[1] <= 65535:
        raise ValueError(f"port must have value from 0 to 65535 but was {master[1]}.")
    if not 0 <= rank < world_size:
        raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {world_size - 1}]")
    return rank, world_size, master
