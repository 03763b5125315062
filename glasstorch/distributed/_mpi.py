"""The MPI engine under ``glasstorch.distributed``: loading it, forming the world, waiting safely.

Three jobs, in this order:

1. **Loading** (:func:`load`): mpi4py is imported here and nowhere else, on the first
   ``init_process_group`` (``import glasstorch`` never loads MPI). Without it the error names the
   ``pip install`` line.
2. **Forming the world** (:func:`start`): a process started by ``mpiexec`` (or ``srun``) already
   belongs to one, ``MPI_COMM_WORLD``. A process started any other way (``torch.multiprocessing.spawn``,
   ``run.py --nnodes``) joins through the rendezvous address: rank 0 serves MPICH's process-manager
   protocol there (``_pmi.py``), and ``MPI_Init`` then builds the same kind of world.
3. **Waiting without hanging** (:func:`wait`): every collective is started non-blocking
   (``Iallreduce``, ...) and then polled, so that a wait can end in an error instead of forever:

   - a *notice* from another rank: it failed (raised, timed out) or its script ended while this rank
     still waits for it. Notices travel on a private duplicate of the world communicator (``_control``),
     sent from that rank's ``atexit`` handler (:func:`_at_exit`);
   - *news from the rendezvous* (spawn path): a rank whose connection dropped was killed;
   - the process group's *timeout*. Before raising, the ranks that are still polling are asked
     where they are (``ping``/``pong``), so the message says which rank is missing and what the
     others are doing.

   Polling spins on ``Test`` (MPI makes progress only inside MPI calls); after a millisecond it
   yields the core between tries, so that ranks sharing cores do not starve the one being waited for.
"""
import atexit
import os
import sys
import time

__all__ = ["load", "start", "wait", "process_raised", "DistError", "DistBackendError", "World"]

_INSTALL = 'pip install "glasstorch[distributed]"   (installs mpi4py and the mpich wheel)'

# tags on the control communicator
_NOTICE, _ACK, _PING, _PONG = 1, 2, 3, 4
_POLL_EVERY = 0.002      # seconds between looks at notices and rendezvous news while waiting
_SPIN = 0.001            # seconds of plain spinning before a wait starts yielding the core to others
_ACK_WAIT = 2.0          # how long a failing rank waits for the others to read its notice
_BURST = range(32)       # tests of a request between two looks at the clock (see wait)


class DistError(RuntimeError):
    """torch.distributed.DistError: the base of the distributed package's errors."""


class DistBackendError(DistError):
    """A collective could not complete: another rank failed, left, or the timeout passed."""


DistError.__module__ = DistBackendError.__module__ = "glasstorch.distributed"


def load():
    """``mpi4py.MPI``, imported (and MPI initialised) on first use."""
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise RuntimeError(f"glasstorch.distributed runs on MPI through mpi4py, which could not be imported "
                           f"({e}). Install it with: {_INSTALL}") from None
    return MPI


def launched_by_mpi():
    """(rank, world_size) when this process was started by mpiexec/mpirun/srun, else None."""
    env = os.environ
    for rank_key, size_key in (("PMI_RANK", "PMI_SIZE"), ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
                               ("PMIX_RANK", "PMIX_SIZE")):
        if rank_key in env and size_key in env and "GLASSTORCH_PMI_SERVED" not in env:
            return int(env[rank_key]), int(env[size_key])
    return None


class World:
    """This process's place in the MPI world, and what it knows about the other ranks."""

    def __init__(self, MPI, comm, timeout, manager=None, member=None):
        self.MPI = MPI
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.timeout = timeout
        self.control = comm.Dup()      # notices, acks, pings: never mixed with data
        self.manager = manager         # the PMI server's process (rank 0 on the spawn path)
        self.member = member           # our connection to it (spawn path)
        self.gone = {}                 # global rank -> why it left (notices, rendezvous news)
        self.secondary = set()         # ranks that failed only because another rank had (see ``missing``)
        self.failed = None             # why this rank's process group broke, once it has
        self.cause = None              # (rank, why) when it broke because that rank had failed or left
        self.activity = "no collective"  # what this rank waits in (answers pings)
        self.destroyed = False

    # -- news from the other ranks ------------------------------------------------------------
    def poll(self):
        """Take in notices and pings on the control communicator, and rendezvous news."""
        MPI = self.MPI
        status = MPI.Status()
        while self.control.iprobe(source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG, status=status):
            source, tag = status.Get_source(), status.Get_tag()
            message = self.control.recv(source=source, tag=tag)
            if tag == _NOTICE:
                message, cause = message
                self.gone.setdefault(source, message)
                if cause is not None:
                    # ``source`` failed because rank cause[0] had: learn of the root cause here too,
                    # in case its own notice has not arrived yet
                    self.secondary.add(source)
                    self.gone.setdefault(*cause)
                if message.startswith("failed"):
                    self.control.isend("ack", dest=source, tag=_ACK).Free()
            elif tag == _PING:
                self.control.isend(str(self.activity), dest=source, tag=_PONG).Free()
            # an _ACK arriving here is late (its sender answered a notice this rank already gave up
            # waiting on): nothing to do
        if self.member is not None:
            if not self.member.poll() and 0 not in self.gone:
                self.gone[0] = "died (its connection to the rendezvous closed: killed, or crashed)"
            for rank, reason in self.member.lost.items():
                self.gone.setdefault(rank, reason)

    def missing(self, ranks):
        """The first of ``ranks`` (global) known to be gone, with why, or None.

        A rank that failed on its own comes before one that failed only because of it, so that
        every rank names the root cause whichever notice reached it first."""
        gone = [r for r in ranks if r != self.rank and r in self.gone]
        if not gone:
            return None
        r = next((r for r in gone if r not in self.secondary), gone[0])
        return r, self.gone[r]

    def where_are(self, ranks, budget=1.0):
        """Ask ``ranks`` what they are waiting in; {rank: answer} for those that answered within ``budget``."""
        for r in ranks:
            self.control.isend(None, dest=r, tag=_PING).Free()
        answers = {}
        status = self.MPI.Status()
        end = time.monotonic() + budget
        while len(answers) < len(ranks) and time.monotonic() < end:
            if self.control.iprobe(source=self.MPI.ANY_SOURCE, tag=_PONG, status=status):
                answers[status.Get_source()] = self.control.recv(source=status.Get_source(), tag=_PONG)
            else:
                self.poll()
                time.sleep(0.001)
        return answers

    def notify(self, message):
        """Tell every other rank ``message`` ('failed: ...' or 'exited ...') and, if this rank failed
        because another one had, that rank and why (``cause``); returns the requests."""
        return [self.control.isend((message, self.cause), dest=r, tag=_NOTICE)
                for r in range(self.size) if r != self.rank]


_world = None


def start(rank, world_size, master, timeout):
    """Join (or find) the MPI world; returns the :class:`World`.

    ``master`` is (host, port) of the rendezvous, needed only when this process was not started by
    an MPI launcher; ``rank``/``world_size`` are what the caller says (None: take MPI's).
    """
    global _world
    if _world is not None:
        return _world
    launched = launched_by_mpi()
    manager = member = None
    mpi_loaded = "mpi4py.MPI" in sys.modules
    if launched is None and not mpi_loaded and (world_size or 1) > 1:
        manager, member = _rendezvous(rank, world_size, master, timeout)
        os.environ["GLASSTORCH_PMI_SERVED"] = "1"   # MPICH reads PMI_* only during MPI_Init
        os.environ["PMI_PORT"] = f"{master[0]}:{master[1]}"
        os.environ["PMI_ID"] = str(rank)
        try:
            MPI = load()
        finally:
            for key in ("PMI_PORT", "PMI_ID", "GLASSTORCH_PMI_SERVED"):
                os.environ.pop(key, None)  # not inherited by this rank's own children
    else:
        MPI = load()
    comm = MPI.COMM_WORLD
    if manager is not None or member is not None:
        if comm.Get_size() != world_size:
            raise RuntimeError(f"MPI did not join the rendezvous (it formed a world of {comm.Get_size()}): forming "
                               f"a process group without mpiexec needs MPICH's process-manager protocol, and this "
                               f"mpi4py runs {MPI.Get_library_version().splitlines()[0]}. Install the mpich wheel "
                               f"(pip install mpich), or launch with python -m glasstorch.distributed.run.")
    if world_size is not None and world_size != comm.Get_size():
        how = "mpiexec" if launched else ("MPI, initialised before init_process_group (mpi4py.MPI was "
                                          "imported first)" if mpi_loaded else "MPI")
        raise ValueError(f"Error initializing torch.distributed: world_size={world_size} was requested, but "
                         f"this process belongs to an MPI world of {comm.Get_size()} processes (started by "
                         f"{how}). Launch {world_size} processes, or leave world_size out.")
    if rank is not None and rank != comm.Get_rank():
        raise ValueError(f"Error initializing torch.distributed: rank={rank} was requested, but MPI gave this "
                         f"process rank {comm.Get_rank()}. Under mpiexec, take the rank from MPI (leave rank "
                         f"out, or use the RANK that glasstorch.distributed.run sets).")
    comm.Set_errhandler(MPI.ERRORS_RETURN)
    _world = World(MPI, comm, timeout, manager, member)
    atexit.register(_at_exit)
    return _world


def _rendezvous(rank, world_size, master, timeout):
    """Rank 0 serves the process manager; every rank says hello to it (and waits for rank 0)."""
    from ._pmi import Member, serve
    if master is None:
        raise ValueError("Error initializing torch.distributed: a rendezvous address is needed (MASTER_ADDR and "
                         "MASTER_PORT, or init_method='tcp://host:port')")
    host, port = master
    manager = serve("" if host in ("0.0.0.0", "") else host, port, world_size, timeout) if rank == 0 else None
    member = Member(host, port, rank, world_size, time.monotonic() + timeout)
    return manager, member


def current():
    return _world


# ----------------------------------------------------------------------------------------------
# Waiting
# ----------------------------------------------------------------------------------------------
def wait(world, done, what, group_ranks, timeout, diagnose=True):
    """Poll ``done()`` (e.g. ``Request.Testall`` of one operation's requests) until it is true, or
    raise :class:`DistBackendError`.

    ``what`` describes the operation for messages ('all_reduce #12 (shape=[4], ...)'); ``group_ranks``
    are the global ranks it waits for; ``timeout`` in seconds. A timeout breaks the process group
    and its message says where the other ranks are; with ``diagnose=False`` (a wait that expects to
    time out: ``monitored_barrier``) it is only a short error, and the group goes on.
    """
    MPI = world.MPI
    try:
        if done():   # the fast path: already complete
            return
        world.activity = what
        now = time.monotonic()
        deadline = now + timeout
        next_poll = now + _POLL_EVERY
        spin_until = now + _SPIN
        while True:
            # a burst of tests between looks at the clock: MPI moves a large message in many small
            # steps, each inside one test, so time between tests is time the transfer stands still;
            # the burst keeps this loop as tight as mpi4py's own `while not req.Test()`
            for _ in _BURST:
                if done():
                    return
            now = time.monotonic()
            if now >= next_poll:
                next_poll = now + _POLL_EVERY
                world.poll()
                gone = world.missing(group_ranks)
                if gone is not None:
                    world.cause = gone
                    _fail(world, f"rank {gone[0]} {gone[1]}, while rank {world.rank} waited for it in {what}")
                if now >= deadline:
                    if not diagnose:
                        raise DistBackendError(f"Timed out waiting {timeout * 1000:.0f}ms for {what} on rank "
                                               f"{world.rank} (from rank{'s' * (len(group_ranks) > 1)} "
                                               f"{', '.join(map(str, group_ranks))})")
                    _fail(world, _timeout_message(world, what, group_ranks, timeout))
            if now >= spin_until:
                _yield_cpu()
    except MPI.Exception as e:
        raise DistBackendError(f"{what} failed in MPI on rank {world.rank}: {e.Get_error_string()}") from None
    finally:
        world.activity = "no collective"


_yield_cpu = os.sched_yield if hasattr(os, "sched_yield") else (lambda: time.sleep(0))


def _fail(world, message):
    world.failed = message
    raise DistBackendError(message)


def _timeout_message(world, what, group_ranks, timeout):
    others = [r for r in group_ranks if r != world.rank]
    answers = world.where_are(others)
    lines = [f"{what} timed out after {timeout:g}s on rank {world.rank} (the process group's timeout)."]
    silent = [r for r in others if r not in answers]
    elsewhere = {r: a for r, a in answers.items() if a != str(what)}
    if silent:
        lines.append(f"Rank{'s' * (len(silent) > 1)} {', '.join(map(str, silent))} did not answer: "
                     f"dead, hung, or busy outside torch.distributed (a longer computation, or a loop "
                     f"that runs fewer collectives there).")
    for r, a in sorted(elsewhere.items()):
        lines.append(f"Rank {r} is waiting in {a}: the ranks called different collectives.")
    return " ".join(lines)


# ----------------------------------------------------------------------------------------------
# Leaving
# ----------------------------------------------------------------------------------------------
_raised = None   # an exception that ended this process's work though no one let it reach the interpreter


def process_raised(exc):
    """Say that this process is leaving because ``exc`` was raised, where the exception is caught
    before the interpreter sees it: ``torch.multiprocessing.spawn``'s children catch their function's
    exception to hand its traceback to the parent, then exit with status 1. Without this the
    other ranks would read "its script ended" (and this rank would wait in MPI_Finalize for them)."""
    global _raised
    _raised = exc


def _exit_reason(world):
    """'failed: ...' when this process leaves because of an error, else 'exited ...'."""
    exc = _raised if _raised is not None else getattr(sys, "last_value", None)
    if world.failed is not None:
        return "failed: " + world.failed
    if exc is not None:
        return f"failed: {type(exc).__name__}: {exc}"
    return "exited (its script ended) without destroy_process_group()"


def _at_exit():
    """Tell the others that this rank is leaving, then leave MPI without waiting on a broken world.

    A clean exit finalises MPI normally (every rank meets in MPI_Finalize). An exit after an error
    sends 'failed: ...' to every rank, gives them a moment to read it, and ends with MPI_Abort: a
    rank that hangs would otherwise keep the finalising ones waiting forever.
    """
    world = _world
    if world is None or world.MPI.Is_finalized():
        return
    MPI = world.MPI
    reason = _exit_reason(world)
    failed = reason.startswith("failed")
    try:
        if failed:
            world.notify(reason)
            _wait_for_acks(world)
        elif not world.destroyed:
            MPI.Request.Waitall(world.notify(reason))
    except Exception:
        pass  # leaving anyway: a notice that can't be sent must not keep this process here
    if world.member is not None:
        world.member.bye()
    if failed:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        _unlink_shared_memory()
        MPI.COMM_WORLD.Abort(1)
    MPI.Finalize()


def _unlink_shared_memory():
    """Remove the names of MPICH's shared-memory segments this process has mapped.

    MPI_Finalize removes them; MPI_Abort does not, and each aborted job would leave a few MB in
    /dev/shm. Every rank of the host attached during MPI_Init, so the mappings stay valid for the
    ranks still running; only the names go (Linux; elsewhere nothing is done)."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "/dev/shm/mpich_shm_" in line}
    except OSError:
        return
    for path in paths:
        try:
            os.unlink(path)
        except OSError:
            pass


def _wait_for_acks(world):
    """Until every live rank has acknowledged this rank's failure notice, or ``_ACK_WAIT`` passes.

    A rank that failed only because another one had (``world.cause``) then also waits, up to
    ``_ACK_WAIT`` more, for the rendezvous' news that that rank's process has ended: a parent that
    watches the processes (``mp.spawn``) reports the first one to end, which should be the root
    cause, not this rank (both wait for the acknowledgements of ranks that are not listening)."""
    MPI = world.MPI
    pending = {r for r in range(world.size) if r != world.rank and r not in world.gone}
    cause = None
    if world.cause is not None and world.member is not None and not world.cause[1].startswith("exited"):
        cause = world.cause[0]   # (a rank that exited normally waits in MPI_Finalize: for this rank too)
    status = MPI.Status()
    start = time.monotonic()
    while True:
        now = time.monotonic()
        acked = not pending or now >= start + _ACK_WAIT
        if acked and (cause is None or cause in world.member.closed or now >= start + 2 * _ACK_WAIT):
            return
        if world.control.iprobe(source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG, status=status):
            source, tag = status.Get_source(), status.Get_tag()
            message = world.control.recv(source=source, tag=tag)
            if tag == _PING:
                world.control.isend("its exit (it has failed)", dest=source, tag=_PONG).Free()
            elif tag in (_ACK, _NOTICE):
                pending.discard(source)
        else:
            if world.member is not None:
                world.member.poll()
                pending -= set(world.member.lost)
            time.sleep(0.001)
