"""Helpers shared by the single- and multi-process loaders (torch/utils/data/_utils).

The functions a worker process runs live in modules at global scope, because the
'spawn' start method pickles them by name.
"""

import atexit

import glasstorch

WORKER_STATUS_CHECK_INTERVAL = 0.1
"""Seconds the main process waits on the data queue before it checks that every
worker is still alive.  torch waits 5 s and relies on a SIGCHLD handler written in
C to notice a dead worker sooner; we have no such handler, so we poll more often.
The cost is one ``is_alive()`` call per worker per interval while waiting."""

WORKER_JOIN_TIMEOUT = 5.0
"""Seconds shutdown waits for each worker to finish before terminating it.  A
worker exits as soon as it reads its final None, unless it is still busy
loading a batch that nobody will use."""

python_exit_status = False
"""True once the interpreter is shutting down.  An iterator's ``__del__`` that
runs then must not touch queues or processes (multiprocessing may already be
half torn down), so shutdown becomes a no-op."""


def _set_python_exit_flag():
    global python_exit_status
    python_exit_status = True


atexit.register(_set_python_exit_flag)


def draw_seed(generator=None):
    """A fresh 63-bit seed drawn from ``generator`` (the global RNG if None).

    Drawn as torch draws them, ``torch.empty((), dtype=torch.int64).random_(generator=generator)``
    (not through ``torch.randint``, which programs may replace or count on): seeding from the RNG
    keeps ``manual_seed`` in control of every downstream stream (samplers, worker processes).
    """
    return int(glasstorch.empty((), dtype=glasstorch.int64).random_(generator=generator).item())


from . import collate, fetch, worker  # noqa: E402
