"""What runs inside a DataLoader worker process (torch/utils/data/_utils/worker.py).

A worker is a loop::

    seed the RNGs, set get_worker_info(), call worker_init_fn
    repeat:
        take (batch_number, indices) from its index queue     (None: exit)
        fetch the samples and collate them into a batch
        put (batch_number, pickled batch) on the shared result queue

Errors never cross the process boundary as live exceptions: the worker formats
the traceback into an ``ExceptionWrapper`` and the main process re-raises it.
Batches are pickled *here*, in the worker's own thread, so a batch that cannot be
pickled becomes an error in the main process instead of a silent hang (a
``multiprocessing.Queue`` would pickle it in a background thread and only print
the error).

numpy is imported here for one reason: seeding numpy's legacy global RNG in
each worker, as torch does, so ``np.random`` calls in a dataset differ between
workers instead of repeating the parent's stream.
"""

import os
import pickle
import queue
import random
import sys
import traceback
from dataclasses import dataclass
from multiprocessing.reduction import ForkingPickler

import numpy as np

import glasstorch
from glasstorch._tensor import Tensor

from .fetch import create_fetcher

WATCHDOG_INTERVAL = 0.5
"""Seconds a worker waits for work before checking that its parent still lives
(and that shutdown has not begun)."""


# --- what a worker knows about itself ----------------------------------------

@dataclass(frozen=True)
class WorkerInfo:
    """Information about the current DataLoader worker process.

    Attributes:
        id: this worker's id, 0 .. num_workers - 1
        num_workers: the total number of workers
        seed: the seed this worker's RNGs were set from (``base_seed + id``)
        dataset: this process's copy of the dataset
    """

    id: int
    num_workers: int
    seed: int
    dataset: object


_worker_info = None


def get_worker_info():
    """The ``WorkerInfo`` of the current DataLoader worker; None in the main process.

    Use it in a dataset's ``__iter__`` or in ``worker_init_fn`` to give each worker
    its own share of an ``IterableDataset``.
    """
    return _worker_info


# --- messages between main process and workers ----------------------------

@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    """Sent by a worker whose copy of an IterableDataset is exhausted."""

    worker_id: int


@dataclass(frozen=True)
class _ResumeIteration:
    """Sent to persistent workers at the start of a new epoch; echoed back."""


class ExceptionWrapper:
    """An exception plus its formatted traceback, to re-raise in another process.

    ``reraise()`` raises the same exception type with torch's message::

        Caught ValueError in DataLoader worker process 0.
        Original Traceback (most recent call last):
          ...
        ValueError: bad index 5
    """

    def __init__(self, exc_info=None, where="in background"):
        # Keep only the type and the text: a traceback object holds frames (and
        # through them the dataset), which neither pickle nor should be kept alive.
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            # KeyError repr()s its argument, which would print the traceback as one
            # long quoted line; this str subclass prints it as text.
            msg = _KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            # An exception type whose constructor wants other arguments.
            raise RuntimeError(msg) from None
        try:
            raise exception
        finally:
            # Break the cycle exception -> traceback -> this frame -> exception, so
            # the DataLoader iterator in the traceback is freed (and its workers
            # stopped) as soon as the caller drops the exception, not at some
            # later garbage collection.
            del exception


class _KeyErrorMessage(str):
    """A str whose repr is itself, so KeyError(msg) prints msg readably."""

    def __repr__(self):
        return self


# --- tensors across processes --------------------------------------------
#
# multiprocessing pickles with ForkingPickler; registering a reducer for Tensor
# there (as torch.multiprocessing does) sends a tensor as its numpy array and
# rebuilds it with from_numpy on the other side, so dtype objects come back as
# the canonical glasstorch dtypes and no autograd graph is dragged along.

def _rebuild_tensor(array, requires_grad):
    tensor = glasstorch.from_numpy(array)
    return tensor.requires_grad_() if requires_grad else tensor


def _reduce_tensor(tensor):
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, "
            "since autograd does not support crossing process boundaries.  "
            "If you just want to transfer the data, call detach() on the tensor "
            "before serializing (e.g., putting it on the queue)."
        )
    return (_rebuild_tensor, (tensor.detach().numpy(), tensor.requires_grad))


ForkingPickler.register(Tensor, _reduce_tensor)


def _serialize(message, worker_id):
    """Pickle a message for the result queue; an unpicklable batch becomes an error."""
    try:
        return bytes(ForkingPickler.dumps(message))
    except Exception:
        idx = message[0]
        wrapped = ExceptionWrapper(where=f"in DataLoader worker process {worker_id} (pickling a batch)")
        return bytes(ForkingPickler.dumps((idx, wrapped)))


def deserialize(payload):
    return pickle.loads(payload)


class ManagerWatchdog:
    """Tells a worker whether the process that started it is still alive: when
    the parent dies the worker is re-parented, so its parent pid changes."""

    def __init__(self):
        self.manager_pid = os.getppid()
        self.manager_dead = False

    def is_alive(self):
        if not self.manager_dead:
            self.manager_dead = os.getppid() != self.manager_pid
        return not self.manager_dead


def _seed_worker(base_seed, worker_id):
    """Seed every RNG a dataset may use; return the glasstorch/``random`` seed."""
    seed = base_seed + worker_id
    random.seed(seed)
    glasstorch.manual_seed(seed)
    # numpy's legacy RNG takes at most 32-bit words; SeedSequence mixes worker id
    # and base seed into them (torch computes the very same four words).
    np.random.seed(np.random.SeedSequence([worker_id, base_seed]).generate_state(4))
    return seed


def _worker_loop(is_iterable, dataset, index_queue, data_queue, done_event, auto_collation,
                 collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers):
    """The body of worker process ``worker_id`` (see the module docstring)."""
    global _worker_info
    watchdog = ManagerWatchdog()
    try:
        seed = _seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)

        # An error in worker_init_fn is reported as the answer to the first task.
        init_exception = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = create_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")

        # Once the stream of an IterableDataset ends, or shutdown has begun, the
        # worker skips any further tasks and only waits for its final None.
        iteration_end = False
        while watchdog.is_alive():
            try:
                task = index_queue.get(timeout=WATCHDOG_INTERVAL)
            except queue.Empty:
                if done_event.is_set():
                    # Shutdown without our final None: it can be lost when the
                    # iterator is freed by the garbage collector, which may close
                    # the index queue before the None is written.
                    break
                continue
            if isinstance(task, _ResumeIteration):
                # A new epoch with persistent workers: a fresh fetcher (a fresh
                # iter(dataset) for iterable datasets), then acknowledge.
                iteration_end = False
                fetcher = create_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last)
                data_queue.put(_serialize((task, None), worker_id))
                continue
            if task is None:
                break
            if done_event.is_set() or iteration_end:
                continue

            idx, index = task
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except StopIteration:
                    if not is_iterable:
                        data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
                    else:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                except Exception:
                    data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            data_queue.put(_serialize((idx, data), worker_id))
            del data, idx, index, task  # do not hold the last batch while waiting
    except KeyboardInterrupt:
        pass  # the main process gets the KeyboardInterrupt too and handles it
    if done_event.is_set() or not watchdog.is_alive():
        # The main process has stopped reading (shut down, or died: killed, out of
        # memory): do not block exit on flushing results into a pipe nobody empties.
        # Our batches travel through the pipe itself (torch's go through shared
        # memory, its messages are small), so one unread batch fills it, and a worker
        # whose main process died would otherwise wait for ever.
        data_queue.cancel_join_thread()
        data_queue.close()
