"""torch.nn.parallel: DistributedDataParallel (one replica per process, gradients averaged over MPI)
and DataParallel (a pass-through on one device, as torch's without GPUs)."""
from .data_parallel import DataParallel, data_parallel  # noqa: F401
from .distributed import DistributedDataParallel  # noqa: F401

__all__ = ["DataParallel", "data_parallel", "DistributedDataParallel"]
