"""spawn / start_processes / ProcessContext (torch/multiprocessing/spawn.py).

The parent starts ``nprocs`` processes running ``fn(i, *args)`` and watches them all at once
(``multiprocessing.connection.wait`` on their sentinels). The first one that ends badly decides:
the others are terminated (SIGTERM, then SIGKILL after a grace period), and the parent raises

- :class:`ProcessRaisedException` with the child's traceback, when ``fn`` raised (the child pickles
  its formatted traceback into an error file before exiting with code 1);
- :class:`ProcessExitedException` with the exit code or the signal, when it died otherwise.

On Linux each child asks the kernel for SIGINT when its parent dies, so no orphan is left waiting.
"""
import logging
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import tempfile
import time
import warnings

__all__ = ["ProcessContext", "ProcessException", "ProcessExitedException", "ProcessRaisedException", "spawn",
           "SpawnContext", "start_processes"]

ENV_VAR_PARALLEL_START = "TORCH_MP_PARALLEL_START"
log = logging.getLogger(__name__)


class ProcessException(Exception):
    __slots__ = ["error_index", "error_pid"]

    def __init__(self, msg, error_index, error_pid):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.error_pid = error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """A child's ``fn`` raised; the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A child ended with a non-zero exit code or was killed by a signal."""
    __slots__ = ["exit_code"]

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid, self.exit_code, self.signal_name)


def _die_with_parent():
    """PR_SET_PDEATHSIG: the kernel sends this process SIGINT when its parent exits (Linux only)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, int(signal.SIGINT))  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _wrap(fn, i, args, error_file):
    """The child's entry point: run ``fn(i, *args)``; on an exception, leave the traceback for the parent."""
    _die_with_parent()
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent stopped us
    except Exception as exc:
        import traceback
        with open(error_file, "wb") as fh:
            pickle.dump(traceback.format_exc(), fh)
        _tell_the_process_group(exc)
        sys.exit(1)


def _tell_the_process_group(exc):
    """A child in a torch.distributed process group leaves as a rank that failed with ``exc`` (its
    exit handler tells the other ranks so and leaves MPI at once), not as one whose script ended.
    Only when distributed was started here: this module never loads it."""
    engine = sys.modules.get("glasstorch.distributed._mpi")
    if engine is not None:
        engine.process_raised(exc)


class ProcessContext:
    """The processes of one ``start_processes`` call; ``join()`` watches them."""

    def __init__(self, processes, error_files):
        self.error_files = error_files
        self.processes = processes
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self):
        return [int(p.pid) for p in self.processes]

    def _join_all(self, timeout):
        end = time.monotonic() + timeout
        for p in self.processes:
            p.join(max(0.0, end - time.monotonic()))

    def join(self, timeout=None, grace_period=None):
        """Wait for a process to end. Returns True once all ended well, False while some still run.

        If one ended badly, the others are terminated and the cause is raised (see the module doc).
        """
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(self.sentinels.keys(), timeout=timeout)
        failed = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            self.processes[index].join()
            if self.processes[index].exitcode != 0:
                failed = index
                break
        if failed is None:
            return not self.sentinels
        self._stop_others(grace_period)
        raise self._cause(failed)

    def _stop_others(self, grace_period):
        if grace_period is not None:
            self._join_all(grace_period)
        for p in self.processes:
            if p.is_alive():
                log.warning("Terminating process %s via signal SIGTERM", p.pid)
                p.terminate()
        self._join_all(30 if grace_period is None else grace_period)
        for p in self.processes:
            if p.is_alive():
                log.warning("Unable to shutdown process %s via SIGTERM , forcefully exiting via SIGKILL", p.pid)
                p.kill()
            p.join()

    def _cause(self, index):
        process = self.processes[index]
        if not os.access(self.error_files[index], os.R_OK):
            code = process.exitcode
            if code < 0:
                try:
                    name = signal.Signals(-code).name
                except ValueError:
                    name = f"<Unknown signal {-code}>"
                return ProcessExitedException(f"process {index:d} terminated with signal {name}", error_index=index,
                                              error_pid=process.pid, exit_code=code, signal_name=name)
            return ProcessExitedException(f"process {index:d} terminated with exit code {code:d}", error_index=index,
                                          error_pid=process.pid, exit_code=code)
        with open(self.error_files[index], "rb") as fh:
            trace = pickle.load(fh)
        os.unlink(self.error_files[index])
        message = f"\n\n-- Process {index:d} terminated with the following error:\n" + trace
        return ProcessRaisedException(message, index, process.pid)


class SpawnContext(ProcessContext):
    def __init__(self, processes, error_files):
        warnings.warn("SpawnContext is renamed to ProcessContext since 1.4 release.", stacklevel=2)
        super().__init__(processes, error_files)


def _error_file():
    """A fresh path for a child's traceback (the file itself is created only if the child fails)."""
    f = tempfile.NamedTemporaryFile(prefix="glasstorch-errorfile-", suffix=".pickle", delete=False)
    f.close()
    os.unlink(f.name)
    return f.name


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Start ``nprocs`` processes of ``fn(i, *args)`` with ``start_method`` ('spawn', 'fork', 'forkserver').

    Returns None after joining them all when ``join``, else the :class:`ProcessContext`.
    """
    mp = multiprocessing.get_context(start_method)
    processes, error_files = [], []
    for i in range(nprocs):
        path = _error_file()
        process = mp.Process(target=_wrap, args=(fn, i, args, path), daemon=daemon)
        process.start()
        processes.append(process)
        error_files.append(path)
    context = ProcessContext(processes, error_files)
    if not join:
        return context
    while not context.join():
        pass


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Run ``fn(i, *args)`` for ``i`` in ``range(nprocs)``, each in a new process (started with 'spawn').

    ``fn`` must be importable (defined at the top level of a module). If a process fails, the
    others are stopped and the failure is raised here (with the child's traceback).
    """
    if start_method != "spawn":
        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\nTo use a different "
                      f"start_method use:\n\t\t torch.multiprocessing.start_processes(...)", FutureWarning,
                      stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
