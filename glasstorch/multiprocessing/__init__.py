"""glasstorch.multiprocessing: torch.multiprocessing, i.e. Python's :mod:`multiprocessing` plus ``spawn``.

Everything of :mod:`multiprocessing` is here under the same names (``Process``, ``Queue``,
``get_context``, ``set_start_method``, ...). Tensors cross process boundaries by pickling (their
arrays are copied; torch's shared-memory reducers have no counterpart here). Added, as in torch:

- :func:`spawn` / :func:`start_processes`: run ``fn(i, *args)`` in ``nprocs`` processes; if one
  fails, the others are stopped and the parent raises :class:`ProcessRaisedException` (with the
  child's traceback) or :class:`ProcessExitedException` (exit code or signal);
- :class:`ProcessContext`: the handle that ``join()`` s them;
- the sharing-strategy functions (kept for compatibility).

The usual pairing is ``spawn`` with ``glasstorch.distributed.init_process_group`` (see
docs/distributed.md).
"""
import multiprocessing
import sys
from multiprocessing import *  # noqa: F401,F403

from .spawn import (ENV_VAR_PARALLEL_START, ProcessContext, ProcessException, ProcessExitedException,  # noqa: F401
                    ProcessRaisedException, SpawnContext, spawn, start_processes)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies", "spawn",
           "start_processes", "ProcessContext", "ProcessException", "ProcessRaisedException",
           "ProcessExitedException", "SpawnContext"] + list(multiprocessing.__all__)

if sys.platform in ("darwin", "win32"):
    _all_sharing_strategies = {"file_system"}
    _sharing_strategy = "file_system"
else:
    _all_sharing_strategies = {"file_descriptor", "file_system"}
    _sharing_strategy = "file_descriptor"


def set_sharing_strategy(new_strategy):
    """Choose how tensors would be shared (recorded only: tensors are pickled, not shared, here)."""
    global _sharing_strategy
    if new_strategy not in _all_sharing_strategies:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}, expected one of {_all_sharing_strategies}")
    _sharing_strategy = new_strategy


def get_sharing_strategy():
    return _sharing_strategy


def get_all_sharing_strategies():
    return set(_all_sharing_strategies)
