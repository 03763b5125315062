"""glasstorch.utils.data: datasets, samplers and the DataLoader (torch.utils.data).

    dataset.py       Dataset, IterableDataset, TensorDataset, ConcatDataset, Subset, random_split, ...
    sampler.py       Sampler, SequentialSampler, RandomSampler, BatchSampler, ...
    distributed.py   DistributedSampler
    dataloader.py    DataLoader and its single- and multi-process iterators
    _utils/          collate (default_collate), fetch, worker (the worker process loop)

torch's DataPipes (IterDataPipe, MapDataPipe, ...) are deprecated there and are
not reproduced here.
"""

from .dataloader import DataLoader, _DatasetKind, default_collate, default_convert, get_worker_info
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .distributed import DistributedSampler
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "DistributedSampler",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "StackDataset",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "default_collate",
    "default_convert",
    "get_worker_info",
    "random_split",
]
