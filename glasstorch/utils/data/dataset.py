"""Datasets: where samples come from (torch/utils/data/dataset.py).

Two kinds, as in torch:

* map-style, ``Dataset``: ``dataset[i]`` returns sample ``i`` and ``len(dataset)``
  the count.  A sampler chooses the indices, so shuffling is the loader's job.
* iterable-style, ``IterableDataset``: ``iter(dataset)`` yields the samples; the
  dataset decides the order (and, with workers, each worker's share).

The rest combine datasets: ``TensorDataset`` (rows of tensors), ``ConcatDataset``
(one after another), ``ChainDataset`` (streams one after another),
``StackDataset`` (side by side), ``Subset`` and ``random_split`` (pieces).
"""

import bisect
import itertools
import math
import warnings

import glasstorch

__all__ = [
    "Dataset",
    "IterableDataset",
    "TensorDataset",
    "StackDataset",
    "ConcatDataset",
    "ChainDataset",
    "Subset",
    "random_split",
]


class Dataset:
    """A map from keys (usually ``0 .. len-1``) to samples.

    Subclasses implement ``__getitem__`` and, for the default samplers,
    ``__len__``.  They may also implement ``__getitems__(indices) -> list of
    samples`` to fetch a whole batch at once; the DataLoader then calls that.

    >>> class Squares(Dataset):
    ...     def __len__(self): return 4
    ...     def __getitem__(self, i): return i * i
    >>> [Squares()[i] for i in range(4)]
    [0, 1, 4, 9]
    """

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])

    # No default __len__: an object that raises in __len__ would look sized to
    # isinstance(x, Sized) checks, which torch avoids on purpose.


class IterableDataset(Dataset):
    """A stream of samples: subclasses implement ``__iter__``.

    With ``num_workers > 0`` every worker holds its own copy and iterates all of
    it, so samples repeat unless ``__iter__`` (or ``worker_init_fn``) splits the
    work using ``get_worker_info()``:

    >>> class Range(IterableDataset):
    ...     def __init__(self, start, end):
    ...         self.start, self.end = start, end
    ...     def __iter__(self):
    ...         info = glasstorch.utils.data.get_worker_info()
    ...         if info is None:               # main process: everything
    ...             return iter(range(self.start, self.end))
    ...         per_worker = math.ceil((self.end - self.start) / info.num_workers)
    ...         lo = self.start + info.id * per_worker
    ...         return iter(range(lo, min(lo + per_worker, self.end)))
    >>> list(Range(3, 7))
    [3, 4, 5, 6]
    """

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Rows of tensors: sample ``i`` is ``tuple(t[i] for t in tensors)``.

    >>> X, y = glasstorch.arange(6.).reshape(3, 2), glasstorch.tensor([0, 1, 0])
    >>> TensorDataset(X, y)[1]
    (tensor([2., 3.]), tensor(1))
    """

    def __init__(self, *tensors):
        if any(tensors[0].size(0) != tensor.size(0) for tensor in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(tensor[index] for tensor in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    """Datasets side by side: ``StackDataset(a, b)[i] == (a[i], b[i])`` and
    ``StackDataset(x=a, y=b)[i] == {'x': a[i], 'y': b[i]}``."""

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError(
                "Supported either ``tuple``- (via ``args``) or"
                "``dict``- (via ``kwargs``) like input/output, but both types are given."
            )
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        self.datasets = args if args else kwargs
        parts = list(args) if args else list(kwargs.values())
        self._length = len(parts[0])
        if any(self._length != len(dataset) for dataset in parts):
            raise ValueError("Size mismatch between datasets")

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {key: dataset[index] for key, dataset in self.datasets.items()}
        return tuple(dataset[index] for dataset in self.datasets)

    def __getitems__(self, indices):
        # Column by column, so each part can use its own batched __getitems__.
        if isinstance(self.datasets, dict):
            columns = {key: _fetch_many(dataset, indices) for key, dataset in self.datasets.items()}
            return [{key: column[i] for key, column in columns.items()} for i in range(len(indices))]
        columns = [_fetch_many(dataset, indices) for dataset in self.datasets]
        return [tuple(column[i] for column in columns) for i in range(len(indices))]

    def __len__(self):
        return self._length


def _fetch_many(dataset, indices):
    """``[dataset[i] for i in indices]``, through ``__getitems__`` if it has one."""
    if callable(getattr(dataset, "__getitems__", None)):
        items = dataset.__getitems__(indices)
        if len(items) != len(indices):
            raise ValueError(f"Nested dataset's output size mismatch. Expected {len(indices)}, got {len(items)}")
        return items
    return [dataset[i] for i in indices]


class ConcatDataset(Dataset):
    """Datasets one after another: index ``i`` is found by bisecting the running
    totals in ``cumulative_sizes``."""

    @staticmethod
    def cumsum(sequence):
        return list(itertools.accumulate(len(e) for e in sequence))

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        sample_idx = idx if dataset_idx == 0 else idx - self.cumulative_sizes[dataset_idx - 1]
        return self.datasets[dataset_idx][sample_idx]


class ChainDataset(IterableDataset):
    """IterableDatasets one after another, chained lazily."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``: ``Subset(d, idx)[i] == d[idx[i]]``."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices
        if type(self).__getitem__ is not Subset.__getitem__ and type(self).__getitems__ is Subset.__getitems__:
            # The DataLoader would call our __getitems__ and silently skip the override.
            raise NotImplementedError(
                f"{type(self).__name__} overrides __getitem__ but not __getitems__. "
                "When subclassing Subset and overriding __getitem__, you must also override "
                "__getitems__ to ensure DataLoader works correctly with your custom logic. "
                "A simple implementation:\n\n"
                "def __getitems__(self, indices):\n"
                "    return [self.__getitem__(idx) for idx in indices]"
            )

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        return _fetch_many(self.dataset, [self.indices[idx] for idx in indices])

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Split ``dataset`` into non-overlapping random ``Subset``s.

    ``lengths`` are either the sizes (summing to ``len(dataset)``) or fractions
    summing to 1; fractions become ``floor(frac * len)`` and the remainder is
    handed out one by one, round-robin, from the first split.  Pass a seeded
    ``generator`` for a reproducible split (the global RNG is used otherwise).

    >>> train, val = random_split(range(10), [0.7, 0.3], generator=glasstorch.Generator().manual_seed(0))
    >>> len(train), len(val), sorted(list(train) + list(val)) == list(range(10))
    (7, 3, True)
    """
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        subset_lengths = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            subset_lengths.append(math.floor(len(dataset) * frac))
        remainder = len(dataset) - sum(subset_lengths)
        for i in range(remainder):
            subset_lengths[i % len(subset_lengths)] += 1
        lengths = subset_lengths
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(
                    f"Length of split at index {i} is 0. This might result in an empty dataset.",
                    stacklevel=2,
                )

    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")

    indices = glasstorch.randperm(sum(lengths), generator=generator).tolist()
    return [
        Subset(dataset, indices[offset - length:offset])
        for offset, length in zip(itertools.accumulate(lengths), lengths)
    ]
