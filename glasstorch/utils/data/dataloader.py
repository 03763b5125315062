"""DataLoader: batches from a dataset, in this process or in workers
(torch/utils/data/dataloader.py).

How a DataLoader turns its arguments into batches::

    sampler          which keys, in which order   (SequentialSampler / RandomSampler)
      -> batch_sampler   groups of keys              (BatchSampler(sampler, batch_size, drop_last))
      -> fetcher         dataset[key] for each key   (_utils/fetch.py)
      -> collate_fn      list of samples -> batch    (default_collate)

``iter(loader)`` returns a fresh iterator each epoch: ``_SingleProcessDataLoaderIter``
runs the pipeline above in this process; with ``num_workers > 0``,
``_MultiProcessingDataLoaderIter`` sends each batch's keys to a worker process
(round robin) and hands the batches back in order.  Everything the workers see
travels through pickling, so datasets, ``collate_fn`` and ``worker_init_fn`` must
be picklable when the 'spawn' start method is used (with 'fork', the default on
Linux, the workers inherit them).
"""

import itertools
import math
import multiprocessing
import os
import queue
import signal
import sys
import time
import warnings

from . import _utils
from ._utils.collate import default_collate, default_convert
from ._utils.fetch import create_fetcher
from ._utils.worker import (
    ExceptionWrapper,
    _IterableDatasetStopIteration,
    _ResumeIteration,
    _worker_loop,
    deserialize,
    get_worker_info,
)
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info", "default_collate", "default_convert"]


class _DatasetKind:
    Map = 0
    Iterable = 1

    @staticmethod
    def create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last):
        return create_fetcher(kind == _DatasetKind.Iterable, dataset, auto_collation, collate_fn, drop_last)


class _InfiniteConstantSampler(Sampler):
    """The 'sampler' of an IterableDataset: the dataset picks its own samples, so
    the keys carry no information; there are simply always more of them."""

    def __iter__(self):
        while True:
            yield None


def _default_multiprocessing_context():
    # fork starts a worker in milliseconds and lets it inherit the dataset; spawn
    # (the only choice on Windows, the safe one on macOS) re-imports everything.
    if sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def _cpu_count():
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count()


class DataLoader:
    """Iterate over a dataset in batches.

    Args:
        dataset: a map-style ``Dataset`` (``__getitem__``, ``__len__``) or an
            ``IterableDataset``.
        batch_size (int or None): samples per batch (default 1).  ``None``
            turns batching off: each sample is yielded alone, through
            ``default_convert``.
        shuffle (bool): a new random order every epoch (``RandomSampler``).
        sampler: the order of keys, instead of ``shuffle``.
        batch_sampler: yields whole lists of keys; excludes ``batch_size``,
            ``shuffle``, ``sampler`` and ``drop_last``.
        num_workers (int): worker processes loading batches (0: this process).
        collate_fn: list of samples -> batch (default ``default_collate``).
        pin_memory (bool): accepted for compatibility; there is no pinned memory
            on the CPU, so it only warns, as torch does without an accelerator.
        drop_last (bool): drop the last batch if it is incomplete.
        timeout (float): seconds to wait for a batch from the workers before
            raising (0: wait for ever; dead workers are still detected).
        worker_init_fn: called as ``worker_init_fn(worker_id)`` in each worker
            after seeding, before loading.
        multiprocessing_context: a start method name ('fork', 'spawn',
            'forkserver') or context; default 'fork' on Linux, else 'spawn'.
        generator: the Generator for ``RandomSampler`` and for the workers' base seed.
        prefetch_factor (int): batches loaded in advance per worker (default 2
            with workers; must be None without).
        persistent_workers (bool): keep the workers (and their dataset copies)
            alive between epochs.
        in_order (bool): with workers, yield batches in sampler order (default)
            or as soon as each is ready.

    >>> import glasstorch
    >>> from glasstorch.utils.data import TensorDataset
    >>> ds = TensorDataset(glasstorch.arange(10.), glasstorch.arange(10))
    >>> loader = DataLoader(ds, batch_size=4)
    >>> len(loader), [y.tolist() for x, y in loader]
    (3, [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]])
    """

    _initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing."
                "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None."
            )
        elif num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        # Dataset kind first: an IterableDataset chooses its own samples, so any
        # sampler option is an error, and we say so before judging the sampler.
        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            # shuffle=False was the default once, so only a true value is refused.
            if shuffle not in {False, None}:
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified shuffle option, but got shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified sampler option, but got sampler={sampler}"
                )
            elif batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified "
                    f"batch_sampler option, but got batch_sampler={batch_sampler}"
                )
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = _DatasetKind.Map

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")

        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last"
                )
            batch_size = None
            drop_last = False
        elif batch_size is None:
            if drop_last:
                raise ValueError(
                    "batch_size=None option disables auto-batching and is mutually exclusive with drop_last"
                )

        if sampler is None:
            if self._dataset_kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)

        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator

        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers

        self._initialized = True
        self._IterableDataset_len_called = None  # see __len__
        self._iterator = None

        self.check_worker_number_rationality()

    # -- configuration -------------------------------------------------------

    @property
    def multiprocessing_context(self):
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, multiprocessing_context):
        if multiprocessing_context is not None:
            if self.num_workers <= 0:
                raise ValueError(
                    "multiprocessing_context can only be used with multi-process loading "
                    f"(num_workers > 0), but got num_workers={self.num_workers}"
                )
            if isinstance(multiprocessing_context, str):
                valid_start_methods = multiprocessing.get_all_start_methods()
                if multiprocessing_context not in valid_start_methods:
                    raise ValueError(
                        "multiprocessing_context option "
                        f"should specify a valid start method in {valid_start_methods!r}, but got "
                        f"multiprocessing_context={multiprocessing_context!r}"
                    )
                multiprocessing_context = multiprocessing.get_context(multiprocessing_context)
            if not isinstance(multiprocessing_context, multiprocessing.context.BaseContext):
                raise TypeError(
                    "multiprocessing_context option should be a valid context "
                    "object or a string specifying the start method, but got "
                    f"multiprocessing_context={multiprocessing_context}"
                )
        self._multiprocessing_context = multiprocessing_context

    def __setattr__(self, attr, val):
        # These fixed the sampler pipeline in __init__; changing one afterwards
        # would silently leave the others inconsistent.
        if self._initialized and attr in (
            "batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers"
        ):
            raise ValueError(f"{attr} attribute should not be set after {self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        # What the fetcher is fed: lists of keys when batching, single keys otherwise.
        return self.batch_sampler if self._auto_collation else self.sampler

    # -- iteration -------------------------------------------------------------

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self):
        # Persistent workers: one iterator for the loader's lifetime, reset each
        # epoch, so the worker processes are reused.
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self):
        if self._dataset_kind == _DatasetKind.Iterable:
            # The dataset's own length, in batches.  It can be wrong with workers
            # (each worker may yield everything); remember it so the iterator can
            # warn when more samples come than were announced.
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self):
        """Warn when asking for more workers than this process has CPUs."""
        if not self.num_workers:
            return
        max_num_worker_suggest = _cpu_count()
        if max_num_worker_suggest is None or self.num_workers > max_num_worker_suggest:
            cpuset_checked = hasattr(os, "sched_getaffinity")
            if max_num_worker_suggest is not None:
                suggestion = (
                    f"Our suggested max number of worker in current system is {max_num_worker_suggest}"
                    f"{'' if cpuset_checked else ' (`cpuset` is not taken into account)'}, "
                    "which is smaller than what this DataLoader is going to create."
                )
            else:
                suggestion = "DataLoader is not able to compute a suggested max number of worker in current system."
            warnings.warn(
                f"This DataLoader will create {self.num_workers} worker processes in total. {suggestion} "
                "Please be aware that excessive worker creation might get DataLoader running slow or even freeze, "
                "lower the worker number to avoid potential slowness/freeze if necessary.",
                stacklevel=2,
            )


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        if loader.pin_memory:
            warnings.warn(
                "'pin_memory' argument is set as true but no accelerator is found, "
                "then device pinned memory won't be used.",
                stacklevel=3,
            )
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        # Drawn even without workers, as torch does, so that the global RNG
        # advances the same way whatever num_workers is.
        self._base_seed = _utils.draw_seed(loader.generator)
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)  # may raise StopIteration

    def _next_data(self):
        raise NotImplementedError

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        if (
            self._dataset_kind == _DatasetKind.Iterable
            and self._IterableDataset_len_called is not None
            and self._num_yielded > self._IterableDataset_len_called
        ):
            warn_msg = (
                f"Length of IterableDataset {self._dataset} was reported to be {self._IterableDataset_len_called}"
                f"(when accessing len(dataloader)), but {self._num_yielded} samples have been fetched. "
            )
            if self._num_workers > 0:
                warn_msg += (
                    "For multiprocessing data-loading, this could be caused by not properly configuring the "
                    "IterableDataset replica at each worker. Please see "
                    "https://pytorch.org/docs/stable/data.html#torch.utils.data.IterableDataset for examples."
                )
            warnings.warn(warn_msg, stacklevel=2)
        return data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{self.__class__.__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    """Sampler, fetch and collate, all in this process."""

    def __init__(self, loader):
        super().__init__(loader)
        if self._timeout != 0:
            # A timeout bounds the wait for a worker; there is none to wait for.
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0 (timeout needs num_workers > 0)")
        self._dataset_fetcher = _DatasetKind.create_fetcher(
            self._dataset_kind, self._dataset, self._auto_collation, self._collate_fn, self._drop_last
        )

    def _next_data(self):
        index = self._next_index()  # may raise StopIteration
        return self._dataset_fetcher.fetch(index)  # may raise StopIteration


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Batches loaded by ``num_workers`` worker processes, returned in order.

    The bookkeeping, as in torch::

        main process                                 worker w (w = 0 .. num_workers-1)
        ------------                                 ---------------------------------
        index_queues[w].put((send_idx, keys))  --->  fetch + collate
                                                     data_queue.put((send_idx, batch))
        data_queue.get()  <--------------------------'

    * ``_send_idx``: number of the next batch to hand out; ``_rcvd_idx``: number of
      the next batch to return.  Batches that arrive early wait in ``_task_info``.
    * At most ``prefetch_factor * num_workers`` tasks are outstanding; each
      returned batch sends out one new task.
    * Workers are assigned round robin.  An IterableDataset worker that runs dry
      answers ``_IterableDatasetStopIteration`` and gets no more tasks.
    * While waiting, the main process wakes every
      ``_utils.WORKER_STATUS_CHECK_INTERVAL`` s to check that the workers are
      alive, so a crashed worker is an error, not a hang.
    """

    def __init__(self, loader):
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        context = loader.multiprocessing_context or _default_multiprocessing_context()

        self._worker_init_fn = loader.worker_init_fn
        self._data_queue = context.Queue()
        self._workers_done_event = context.Event()

        self._index_queues = []
        self._workers = []
        self._shutdown = True  # until the workers exist: nothing to shut down yet
        # A forked child inherits this object; only the process that started the
        # workers may stop them (see _shutdown_workers).
        self._owner_pid = os.getpid()
        for worker_id in range(self._num_workers):
            index_queue = context.Queue()
            # Index messages are tiny; never let exit wait on flushing them to a
            # worker that is gone.
            index_queue.cancel_join_thread()
            worker = context.Process(
                target=_worker_loop,
                args=(
                    self._dataset_kind == _DatasetKind.Iterable, self._dataset, index_queue,
                    self._data_queue, self._workers_done_event, self._auto_collation,
                    self._collate_fn, self._drop_last, self._base_seed, self._worker_init_fn,
                    worker_id, self._num_workers,
                ),
                # daemon: the interpreter terminates workers it finds at exit.
                daemon=True,
            )
            worker.start()
            self._index_queues.append(index_queue)
            self._workers.append(worker)
            self._shutdown = False
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0
        self._rcvd_idx = 0
        # batch number -> (worker_id,) while outstanding, (worker_id, data) once
        # it has arrived ahead of its turn.
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers  # False: exhausted (IterableDataset) or stopped
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            # Persistent workers: start a new epoch in each worker and wait until
            # all have acknowledged; anything else still in the queue belongs to
            # the previous (possibly unfinished) epoch and is dropped.
            for index_queue in self._index_queues:
                index_queue.put(_ResumeIteration())
            pending_acks = self._num_workers
            while pending_acks > 0:
                idx, _ = self._get_data()
                if isinstance(idx, _ResumeIteration):
                    pending_acks -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    # -- receiving ---------------------------------------------------------------

    def _try_get_data(self, timeout):
        """One wait of at most ``timeout`` s on the data queue: (True, message) or
        (False, None).  Raises RuntimeError if a worker has died."""
        try:
            payload = self._data_queue.get(timeout=timeout)
        except queue.Empty:
            failed = [
                w for worker_id, w in enumerate(self._workers)
                if self._workers_status[worker_id] and not w.is_alive()
            ]
            if failed:
                self._shutdown_workers()
                raise RuntimeError(_worker_death_message(failed)) from None
            return False, None
        return True, deserialize(payload)

    def _get_data(self):
        """The next message from any worker, honouring ``timeout``."""
        interval = _utils.WORKER_STATUS_CHECK_INTERVAL
        if self._timeout > 0:
            deadline = time.monotonic() + self._timeout
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
                success, data = self._try_get_data(min(remaining, interval))
                if success:
                    return data
        while True:
            success, data = self._try_get_data(interval)
            if success:
                return data

    def _next_data(self):
        while True:
            # Skip batch numbers whose worker ran dry before producing them (an
            # IterableDataset worker that is done); stop when none are left.
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info:
                    worker_id = info[0]
                    if len(info) == 2 or self._workers_status[worker_id]:
                        break  # has arrived, or its worker is still working
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration

            # The batch we want next may already be waiting.
            if len(self._task_info[self._rcvd_idx]) == 2:
                _, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data)

            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _IterableDatasetStopIteration):
                self._workers_status[data.worker_id] = False
                if not self._persistent_workers:
                    self._index_queues[data.worker_id].put(None)  # this worker may exit now
                self._try_put_index()
                continue

            if idx == self._rcvd_idx or not self._in_order:
                del self._task_info[idx]
                if idx == self._rcvd_idx:
                    self._rcvd_idx += 1
                return self._process_data(data)
            self._task_info[idx] += (data,)  # early: keep it until its turn

    def _process_data(self, data):
        """One task is done: send out the next, then return the batch (or raise
        the worker's exception)."""
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    # -- sending -----------------------------------------------------------------

    def _try_put_index(self):
        """Give the next batch's keys to the next active worker, if any."""
        assert self._tasks_outstanding < self._prefetch_factor * self._num_workers
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_id]:
                break
        else:
            return  # every worker is done (IterableDataset exhausted everywhere)

        self._index_queues[worker_id].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    # -- shutdown --------------------------------------------------------------

    def _shutdown_workers(self):
        """Stop and join every worker; terminate those that do not stop.

        Called when the epoch ends (unless workers persist), when a worker dies,
        and from ``__del__``.  Safe to call more than once.
        """
        if _utils is None or _utils.python_exit_status is not False:
            return  # interpreter exit: multiprocessing terminates daemonic workers itself
        if self._shutdown or os.getpid() != self._owner_pid:
            return
        self._shutdown = True
        try:
            # done_event makes workers skip pending tasks; None tells them to exit.
            self._workers_done_event.set()
            for index_queue in self._index_queues:
                index_queue.put(None)
            for worker in self._workers:
                worker.join(timeout=_utils.WORKER_JOIN_TIMEOUT)
            for index_queue in self._index_queues:
                index_queue.close()
            self._data_queue.cancel_join_thread()
            self._data_queue.close()
        finally:
            for worker in self._workers:
                if worker.is_alive():
                    worker.terminate()
                    worker.join()

    def __del__(self):
        if hasattr(self, "_shutdown"):  # __init__ may have failed before starting workers
            self._shutdown_workers()


def _worker_death_message(workers):
    pids = ", ".join(str(w.pid) for w in workers)
    causes = []
    for w in workers:
        if w.exitcode is not None and w.exitcode < 0:
            causes.append(f"pid {w.pid} was killed by signal {_signal_name(-w.exitcode)}")
        else:
            causes.append(f"pid {w.pid} exited with code {w.exitcode}")
    return (
        f"DataLoader worker (pid(s) {pids}) exited unexpectedly ({'; '.join(causes)}). "
        "Details are lost due to multiprocessing. Rerunning with num_workers=0 may give better error trace."
    )


def _signal_name(signum):
    try:
        return signal.Signals(signum).name
    except ValueError:
        return str(signum)
