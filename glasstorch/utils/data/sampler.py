"""Samplers: which indices, in which order (torch/utils/data/sampler.py).

A sampler is any iterable of dataset keys; a batch sampler is an iterable of
lists of keys.  The DataLoader builds one from its arguments::

    shuffle=False  ->  SequentialSampler      0, 1, 2, ...
    shuffle=True   ->  RandomSampler          a permutation per epoch
    batch_size=B   ->  BatchSampler(sampler, B, drop_last)   [i, j, ...] per batch

Random samplers draw from a ``glasstorch.Generator`` if given one, so a seeded
generator gives the same order every run (not torch's order: the bits come
from numpy's RNG).
"""

import itertools

import glasstorch

from ._utils import draw_seed

__all__ = [
    "BatchSampler",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
]


class Sampler:
    """Base class: subclasses implement ``__iter__`` (indices or lists of
    indices) and, for ``len(loader)``, ``__len__``."""

    def __init__(self, data_source=None):
        # torch accepts (and ignores) data_source here for backwards compatibility.
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """``0, 1, ..., len(data_source) - 1``, always in that order."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """Random indices into ``data_source``.

    Without replacement: a fresh permutation each epoch (several permutations
    back to back if ``num_samples > len(data_source)``).  With replacement:
    ``num_samples`` independent uniform draws.

    Args:
        data_source: the dataset (only its length is used)
        replacement (bool): draw with replacement (default False)
        num_samples (int): how many indices per epoch (default len(data_source))
        generator (Generator): the source of randomness; if None, each epoch
            seeds a new Generator from the global RNG (so ``manual_seed`` controls it)
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator

        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self):
        # Read len(data_source) each time: the dataset may change size between epochs.
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        generator = self.generator
        if generator is None:
            generator = glasstorch.Generator()
            generator.manual_seed(draw_seed())

        if self.replacement:
            # in chunks of 32 as torch draws them: an "infinite" sampler (num_samples=int(1e10), as
            # makemore's) must not draw all its indices up front
            for _ in range(self.num_samples // 32):
                yield from glasstorch.randint(0, n, (32,), generator=generator).tolist()
            yield from glasstorch.randint(0, n, (self.num_samples % 32,), generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from glasstorch.randperm(n, generator=generator).tolist()
            yield from glasstorch.randperm(n, generator=generator).tolist()[: self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices``, in a random order each epoch."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in glasstorch.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices into ``range(len(weights))``, index ``i`` drawn with
    probability ``weights[i] / sum(weights)`` (``multinomial`` sampling).

    >>> s = WeightedRandomSampler([0., 1., 0.], 3, generator=glasstorch.Generator().manual_seed(0))
    >>> list(s)
    [1, 1, 1]
    """

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")

        weights_tensor = glasstorch.as_tensor(weights, dtype=glasstorch.float64)
        if len(weights_tensor.shape) != 1:
            raise ValueError(
                f"weights should be a 1d sequence but given weights have shape {tuple(weights_tensor.shape)}"
            )
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        rand_tensor = glasstorch.multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator)
        yield from iter(rand_tensor.tolist())

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size``.

    >>> list(BatchSampler(SequentialSampler(range(10)), batch_size=3, drop_last=False))
    [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    >>> list(BatchSampler(SequentialSampler(range(10)), batch_size=3, drop_last=True))
    [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    """

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        sampler_iter = iter(self.sampler)
        batch = list(itertools.islice(sampler_iter, self.batch_size))
        while batch:
            if self.drop_last and len(batch) < self.batch_size:
                return
            yield batch
            batch = list(itertools.islice(sampler_iter, self.batch_size))

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
