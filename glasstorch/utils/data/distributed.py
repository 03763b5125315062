"""DistributedSampler: each process reads its own share (torch/utils/data/distributed.py)."""

import math

import glasstorch

from .sampler import Sampler

__all__ = ["DistributedSampler"]


def _from_process_group(query):
    """world size or rank of the default process group, for when the caller
    gives none (then glasstorch.distributed must be initialised)."""
    try:
        import glasstorch.distributed as dist
    except ImportError:
        dist = None
    if dist is None or not getattr(dist, "is_available", lambda: False)():
        raise RuntimeError("Requires distributed package to be available")
    return getattr(dist, query)()


class DistributedSampler(Sampler):
    """Restricts loading to the share of the dataset that belongs to ``rank``.

    The (optionally shuffled) index list is padded by repeating its start, or
    with ``drop_last`` cut, to a multiple of ``num_replicas``; replica ``r``
    takes every ``num_replicas``-th index from position ``r``::

        indices  0 1 2 3 4 5 6 7 8 9 | 0 1     (10 samples, 4 replicas: pad to 12)
        rank 0   0       4       8
        rank 1     1       5       9
        rank 2       2       6       0
        rank 3         3       7       1

    Shuffling uses a Generator seeded with ``seed + epoch``: every process must
    use the same ``seed`` and call ``set_epoch(epoch)`` before each epoch, or
    every epoch repeats the same order.  With ``num_replicas`` and ``rank``
    given, no process group is needed.
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None:
            num_replicas = _from_process_group("get_world_size")
        if rank is None:
            rank = _from_process_group("get_rank")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if self.drop_last and len(self.dataset) % self.num_replicas != 0:
            # Drop the tail so that every replica gets the same amount of data.
            self.num_samples = math.ceil((len(self.dataset) - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(len(self.dataset) / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        if self.shuffle:
            g = glasstorch.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = glasstorch.randperm(len(self.dataset), generator=g).tolist()
        else:
            indices = list(range(len(self.dataset)))

        if not self.drop_last:
            padding_size = self.total_size - len(indices)
            if padding_size <= len(indices):
                indices += indices[:padding_size]
            else:  # fewer samples than replicas: repeat the whole list
                indices += (indices * math.ceil(padding_size / len(indices)))[:padding_size]
        else:
            indices = indices[: self.total_size]
        assert len(indices) == self.total_size

        indices = indices[self.rank:self.total_size:self.num_replicas]
        assert len(indices) == self.num_samples
        return iter(indices)

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Set the epoch, which (with ``seed``) determines the shuffled order."""
        self.epoch = epoch
