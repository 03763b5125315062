"""Fetching one batch from a dataset (torch/utils/data/_utils/fetch.py).

The same fetchers run in the main process (num_workers=0) and in each worker.
``possibly_batched_index`` is a list of indices when auto-collation is on
(``batch_size`` or ``batch_sampler`` given) and a single index otherwise.
"""


class _BaseDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last

    def fetch(self, possibly_batched_index):
        raise NotImplementedError


class _IterableDatasetFetcher(_BaseDatasetFetcher):
    """Pulls the next samples from the dataset's own iterator; the indices only
    say how many.  Raises StopIteration once the stream is exhausted."""

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        super().__init__(dataset, auto_collation, collate_fn, drop_last)
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in possibly_batched_index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if len(data) == 0 or (self.drop_last and len(data) < len(possibly_batched_index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


class _MapDatasetFetcher(_BaseDatasetFetcher):
    """``dataset[i]`` for each index, or one ``dataset.__getitems__(indices)``
    call when the dataset offers that batched fast path."""

    def fetch(self, possibly_batched_index):
        if self.auto_collation:
            if getattr(self.dataset, "__getitems__", None):
                data = self.dataset.__getitems__(possibly_batched_index)
            else:
                data = [self.dataset[idx] for idx in possibly_batched_index]
        else:
            data = self.dataset[possibly_batched_index]
        return self.collate_fn(data)


def create_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last):
    fetcher = _IterableDatasetFetcher if is_iterable else _MapDatasetFetcher
    return fetcher(dataset, auto_collation, collate_fn, drop_last)
