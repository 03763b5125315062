"""Process groups and collectives (torch/distributed/distributed_c10d.py), on MPI.

Every collective has the same three steps:

1. check the arguments here, in this process (torch's errors: a tensor where a list belongs, a
   wrong list length, an op complex numbers don't support);
2. check that every rank of the group runs *the same* collective: each rank contributes a short
   signature (which collective, dtype, shape, root, op, sequence number) to one small ``Iallgather``,
   and a difference is an error that names both sides ("Rank 0 is running collective:
   all_reduce(shape=[3], ...), but Rank 1 is running collective: all_reduce(shape=[4], ...)"),
   where MPI itself would hang, crash or silently mix buffers. ``TORCH_DISTRIBUTED_DEBUG=OFF``
   skips this step (one message fewer per collective);
3. start the MPI operation non-blocking on the tensor's own memory (``Iallreduce``, ``Ibcast``,
   ...): after the check's answers, or, for ``all_reduce``, ``broadcast`` and ``reduce``, before
   the check's own message, so that the check's round trip runs alongside the data (a
   mismatch then leaves the tensor's values undefined, never a rank that waits forever or returns
   normally: ``ProcessGroup._mismatch``); and either wait for it (``_mpi.wait``: never longer than the group's timeout, and ending at
   once if a rank of the group failed) or return a :class:`Work` whose ``wait()`` does.

``backend="gloo"`` and ``backend="mpi"`` are served by the same MPI engine: tutorials written for
gloo run unchanged. A tensor is reduced in place (its ``_version`` is bumped, as an in-place op's).
"""
import enum
import io
import os
import pickle
import struct
import time
import warnings
from datetime import timedelta

from .. import _dtype
from .._array import xp
from .._tensor import Tensor
from . import _mpi
from .rendezvous import rendezvous
from ._mpi import DistBackendError, DistError

__all__ = [
    "Backend", "ReduceOp", "RedOpType", "reduce_op", "ProcessGroup", "Work", "GroupMember", "group", "P2POp",
    "DistError", "DistBackendError", "init_process_group", "destroy_process_group", "is_initialized",
    "is_available", "is_mpi_available", "is_gloo_available", "is_nccl_available", "is_ucc_available",
    "is_backend_available", "is_torchelastic_launched", "get_rank", "get_world_size", "get_backend",
    "get_group_rank", "get_global_rank", "get_process_group_ranks", "get_node_local_rank", "new_group",
    "barrier", "monitored_barrier", "broadcast", "all_reduce", "reduce", "all_gather", "all_gather_into_tensor",
    "gather", "scatter", "reduce_scatter", "reduce_scatter_tensor", "all_to_all", "all_to_all_single", "send",
    "recv", "isend", "irecv", "batch_isend_irecv", "all_gather_object", "gather_object", "broadcast_object_list",
    "scatter_object_list", "default_pg_timeout",
]

default_pg_timeout = timedelta(minutes=30)   # torch's default for gloo and mpi


# DistError and DistBackendError (a collective could not complete) are defined with the engine, which
# raises them.


class Backend(str):
    """A backend name: ``Backend("GLOO") == "gloo"``. ``gloo`` and ``mpi`` both run on MPI here."""
    UNDEFINED = "undefined"
    GLOO = "gloo"
    MPI = "mpi"
    NCCL = "nccl"
    UCC = "ucc"
    XCCL = "xccl"
    backend_list = [UNDEFINED, GLOO, NCCL, UCC, MPI, XCCL]
    default_device_backend_map = {"cpu": GLOO}

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: {type(name)}")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        if value == Backend.UNDEFINED:
            value = name.lower()
        return super().__new__(cls, value)


_SERVED = (Backend.GLOO, Backend.MPI)


class RedOpType(enum.IntEnum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8
    UNUSED = 9

    def __str__(self):  # torch prints RedOpType.SUM
        return f"RedOpType.{self.name}"


class ReduceOp:
    """The reductions of ``all_reduce``/``reduce``/``reduce_scatter``: ``ReduceOp.SUM``, ``AVG``,
    ``PRODUCT``, ``MIN``, ``MAX``, ``BAND``, ``BOR``, ``BXOR``."""
    RedOpType = RedOpType
    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM
    UNUSED = RedOpType.UNUSED


reduce_op = ReduceOp  # the deprecated name


def _supports_complex(op):
    return op not in (ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PRODUCT, ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR)


# ----------------------------------------------------------------------------------------------
# Process groups and their work
# ----------------------------------------------------------------------------------------------
class ProcessGroup:
    """A set of ranks that run collectives together: an MPI communicator, its ranks in the world,
    a timeout, and a count of the collectives run so far (the sequence number in the signatures)."""

    def __init__(self, world, comm, ranks, timeout, backend, name):
        self._world = world
        self._comm = comm
        self._ranks = list(ranks)            # global rank of each group rank
        self._rank = comm.Get_rank()         # a communicator's rank and size never change: asked once
        self._size = comm.Get_size()
        self._timeout = timeout
        self._timeout_s = timeout.total_seconds()
        self._IN_PLACE = world.MPI.IN_PLACE
        self._backend = Backend(backend)
        self._name = name
        self._where = "" if name == "WORLD" else f" on group {name}"   # for messages
        self._seq = 0
        self._checked = os.environ.get("TORCH_DISTRIBUTED_DEBUG", "").upper() != "OFF"
        # True: all_reduce/broadcast/reduce start their data before the check's round trip (may pay where a
        # round trip is long, across machines; on one machine it measured no gain, bench/README.md stop 23).
        # False (default): the check first, as torch's, so a mismatched collective leaves the tensor untouched
        self._check_alongside = False
        self._signature = xp.empty(_SIGNATURE_LEN, dtype=xp.int64)              # this rank's
        self._signatures = xp.empty((self.size(), _SIGNATURE_LEN), dtype=xp.int64)  # everyone's
        self._signature_bytes = memoryview(self._signature).cast("B")
        self._signatures_bytes = memoryview(self._signatures).cast("B")
        self._check_comm = comm.Dup()   # the checks' own: never waits behind, or mixes with, data
        self._exchange = _persistent_allgather(self._check_comm, self._signature, self._signatures)
        self._body = None           # the signature bytes the row holds after its sequence number
        self._key = None            # the key those bytes were last written for (see _start_check)
        self._abandoned = []        # (communicator, requests, buffers) left running after a mismatch

    def rank(self):
        return self._rank

    def size(self):
        return self._size

    def name(self):
        return self._name

    @property
    def group_name(self):
        return self._name

    def __repr__(self):
        return f"<ProcessGroup {self._name} ranks={self._ranks} backend={self._backend}>"

    def _free(self):
        """Release the communicator and the checks' persistent request (left alone if a failed
        check left it active: freeing an active request is an MPI error, and the group is broken)."""
        if self._exchange is not None:
            try:
                self._exchange.Free()
            except self._world.MPI.Exception:
                pass
            self._exchange = None
        self._comm.Free()
        self._check_comm.Free()

    # -- running one operation -----------------------------------------------------------------
    def _describe(self, kind, detail, seq=None):
        """'all_reduce #12 (shape=[4], dtype=torch.float32)', written only when a message needs it."""
        return _What(kind, self._seq if seq is None else seq, detail, self._where)

    def _run(self, kind, signature, detail, start, finish=None, async_op=False, check=True, overlap_on=None):
        """Check the signature across ranks, start the MPI operation and wait or hand back a Work.

        ``signature``: ints every rank must agree on (or a function giving them, called only when the
        check runs); ``detail``: text (or a function giving it) for messages; ``start()`` returns the
        MPI requests; ``finish()`` (optional) runs once they completed (copies results into tensors).
        ``overlap_on``: the arrays the operation reads and writes, given by the collectives whose
        operation is one request of the same size on every rank (all_reduce, broadcast, reduce): their
        operation starts first and the check right after it, so that the check's round trip runs
        alongside the data (see :meth:`_mismatch` for what a mismatch then does).
        """
        self._seq += 1
        what = self._describe(kind, detail)
        checking = check and self._checked and self._size > 1
        if not self._check_alongside:
            overlap_on = None
        if checking and overlap_on is None:
            self._end_check(self._start_check(kind, signature), what)
        try:
            requests = start()
        except self._world.MPI.Exception as e:
            raise DistBackendError(f"{what} failed in MPI on rank {self._world.rank}: {e.Get_error_string()}") from None
        if checking and overlap_on is not None:   # the data first, then the check (their communicators differ)
            self._end_check(self._start_check(kind, signature), what, requests, overlap_on)
        if async_op:
            return Work(self, requests, what, finish)
        if len(requests) == 1:   # most collectives: straight to the wait, fewest calls on the way
            _mpi.wait(self._world, requests[0].Test, what, self._ranks, self._timeout_s)
        else:
            self._wait(requests, what)
        if finish is not None:
            finish()
        return None

    def _in_place(self, kind, key, signature, detail, data, start, *args):
        """The usual call of ``all_reduce`` (blocking, one MPI operation on the contiguous ``data``):
        what :meth:`_run` does, on its shortest path, since after a large transfer every line of
        Python runs on cold caches (bench/README.md, stop 24). The signature row is rewritten only
        when ``key`` (the collective, the array's shape and dtype, its op) differs from the last
        check's, and nothing is made per call but the description and the request.
        ``start(*args)`` starts the operation."""
        self._seq += 1
        what = _What(kind, self._seq, detail, self._where)
        if self._checked and self._size > 1:
            if self._check_alongside:   # the variant: the general path does it
                self._seq -= 1
                return self._run(kind, signature, detail, lambda: [start(*args)], overlap_on=data)
            self._end_check(self._start_check(kind, signature, key), what)
        try:
            request = start(*args)
        except self._world.MPI.Exception as e:
            raise DistBackendError(f"{what} failed in MPI on rank {self._world.rank}: {e.Get_error_string()}") from None
        _mpi.wait(self._world, request.Test, what, self._ranks, self._timeout_s)

    def _wait(self, requests, what, timeout=None, statuses=None):
        """Complete MPI ``requests`` (see ``_mpi.wait``: a failed or departed rank, or the timeout, ends it)."""
        if len(requests) == 1 and statuses is None:
            done = requests[0].Test      # one request (most collectives): no Testall, no lambda
        else:
            Testall = self._world.MPI.Request.Testall
            done = lambda: Testall(requests, statuses)  # noqa: E731
        self._wait_until(done, what, timeout)

    def _wait_until(self, done, what, timeout=None):
        seconds = self._timeout_s if timeout is None else _seconds(timeout)
        _mpi.wait(self._world, done, what, self._ranks, seconds)

    # -- the check that every rank runs the same collective ---------------------------------------
    def _start_check(self, kind, signature, key=None):
        """Start the all-gather of every rank's signature (on the checks' own communicator); returns its request.

        This runs before every collective, right after the previous one moved its data: from a
        megabyte on, that data has pushed the interpreter's code and objects out of the CPU's
        caches, and each line of Python here costs several times what it costs in a loop (measured
        on 2 ranks at 1 MB: 11-13 us to fill the row from a tuple, 19-29 us for mpi4py to read the
        two arrays of an ``Iallgather``; bench/README.md). So the path is kept short: the row's
        bytes after the sequence number are made once per (collective, signature) and rewritten
        only when they change, and the all-gather is a persistent request made once per group
        (MPI-4's ``Allgather_init``) that each check only restarts. ``key`` (optional, from
        :meth:`_in_place`): a cheap tuple that determines the signature; while it stays what it was
        at the last check, ``signature`` (then a function) is not even called."""
        if key is None or key != self._key:
            if callable(signature):
                signature = signature()
            body = _SIGNATURE_ROWS.get((kind, *signature))
            if body is None:
                body = _signature_row(kind, signature)
            if body is not self._body:
                self._signature_bytes[_SEQ.size:] = self._body = body
            self._key = key
        _SEQ.pack_into(self._signature_bytes, 0, self._seq)
        exchange = self._exchange
        if exchange is None:
            return self._check_comm.Iallgather(self._signature, self._signatures)
        exchange.Start()
        return exchange

    def _end_check(self, exchange, what, started=None, buffers=None):
        """Wait for the check's all-gather (a few tests first: it is short); a rank that runs
        something else is an error naming both sides. ``started``/``buffers``: the operation
        already started alongside, and its arrays."""
        for _ in _FIRST_TESTS:
            if exchange.Test():
                break
        else:
            self._wait([exchange], what)
        if self._signatures_bytes.tobytes() != self._signature_bytes.tobytes() * self._size:  # one comparison
            self._mismatch(what, started, buffers)

    def _mismatch(self, what, started, buffers):
        """Raise the error naming this rank's collective and the first rank's that differs.

        Every rank of the group sees the same rows and decides alike here. If a rank started its
        operation alongside the check (``overlap_on``), the ranks' operations now run mismatched:
        - the same MPI operation on as many bytes everywhere (shapes that differ but hold as many
          elements): MPI completes it as usual; it is waited for, then the error;
        - anything else (other counts, roots, operations, or other collectives: MPI defines nothing
          for it; measured with MPICH, counts that differ complete silently with a wrong sum, and a
          root that differs leaves the operations waiting forever): no rank waits for it. It is left
          running on the group's data communicator, which is never used again (its messages can't
          meet another communicator's) and every rank moves to a new one, duplicated from the checks'
          communicator, which every rank has just used in step. Its arrays are kept alive, so MPI
          never writes into freed memory. The tensor's values are then undefined, as in torch after
          a failed collective; the group goes on working.
        """
        row, rows = self._signature, self._signatures
        r = next(r for r in range(self._size) if not (rows[r] == row).all())
        message = ("Detected mismatch between collectives on ranks. "
                   f"Rank {self._ranks[self._rank]} is running collective: {_explain(row)}, but "
                   f"Rank {self._ranks[r]} is running collective: {_explain(rows[r])}.")
        # (decided from the rows and the group's setting only, which every rank shares: a rank whose own
        # collective ran its check first, started None, still moves to the new communicator with the rest)
        if self._check_alongside and any(_KINDS[int(k)] in _OVERLAPPED for k in rows[:, 1] if 0 <= k < len(_KINDS)):
            if _same_transfer(rows):
                if started is not None:
                    self._wait(started, what)
            else:
                self._abandoned.append((self._comm, started, buffers))
                comm, request = self._check_comm.Idup()
                self._wait([request], what)
                self._comm = comm
        raise RuntimeError(message)


class Work:
    """A started operation (``async_op=True``): ``wait()`` completes it (or raises), then the
    results are in the tensors."""

    def __init__(self, group, requests, what, finish=None, statuses=None):
        self._group = group
        self._requests = requests
        self._statuses = statuses
        self._what = what
        self._finish = finish
        self._done = False
        self._exception = None
        self._source = None

    def wait(self, timeout=None):
        if self._done:
            if self._exception is not None:
                raise self._exception
            return True
        try:
            self._group._wait(self._requests, self._what, timeout, self._statuses)
            if self._finish is not None:
                self._source = self._finish()
        except Exception as e:
            self._done, self._exception = True, e
            raise
        self._done = True
        return True

    def is_completed(self):
        if not self._done and self._group._world.MPI.Request.Testall(self._requests, self._statuses):
            self.wait()
        return self._done

    def is_success(self):
        return self.is_completed() and self._exception is None

    def exception(self):
        return self._exception

    def source_rank(self):
        """The sender of a completed ``irecv`` (any source)."""
        self.wait()
        return self._source

    def result(self):
        self.wait()
        return []

    def __repr__(self):
        return f"<Work {self._what}{' done' if self._done else ''}>"


# the collectives' codes in signatures, and how a signature is printed back
_KINDS = ["barrier", "broadcast", "all_reduce", "reduce", "all_gather", "all_gather_into_tensor", "gather",
          "scatter", "reduce_scatter", "reduce_scatter_tensor", "all_to_all", "all_to_all_single",
          "all_gather_object", "broadcast_object_list", "gather_object", "scatter_object_list", "new_group",
          "DistributedDataParallel"]
_DTYPES = [_dtype.float32, _dtype.float64, _dtype.float16, _dtype.bfloat16, _dtype.int64, _dtype.int32,
           _dtype.int16, _dtype.int8, _dtype.uint8, _dtype.bool, _dtype.complex64, _dtype.complex128]
_KIND_CODE = {k: i for i, k in enumerate(_KINDS)}
_DTYPE_CODE = {d: i for i, d in enumerate(_DTYPES)}
_NUMPY_DTYPE_CODE = {d.numpy_dtype: i for i, d in enumerate(_DTYPES) if d.numpy_dtype is not None}
_SIGNATURE_LEN = 16   # seq, kind, dtype, root, op, ndim, shape (up to 10 dims)
_UNSET = (-1,) * _SIGNATURE_LEN


_SEQ = struct.Struct("q")   # a signature row starts with the sequence number
_SIGNATURE_ROWS = {}        # (kind, *signature) -> the row's bytes after the sequence number
_FIRST_TESTS = range(64)    # tests of a check's all-gather before the general wait (~15 us)
_OVERLAPPED = ("all_reduce", "broadcast", "reduce")   # the collectives whose check runs alongside their data


def _signature_row(kind, signature):
    """The bytes of a signature row after its sequence number, remembered (a program runs few
    distinct collectives; the table is emptied if it ever grows large)."""
    if len(_SIGNATURE_ROWS) > 4096:
        _SIGNATURE_ROWS.clear()
    body = xp.array((_KIND_CODE[kind], *signature, *_UNSET)[:_SIGNATURE_LEN - 1], dtype=xp.int64).tobytes()
    _SIGNATURE_ROWS[(kind, *signature)] = body
    return body


def _same_transfer(rows):
    """Whether every signature row describes the same MPI operation (collective, dtype, root, op) on
    as many elements: rows that differ only in how those elements are shaped."""
    first = rows[0]

    def numel(row):
        ndim = int(row[5])
        return int(xp.prod(row[6:6 + ndim])) if 0 <= ndim <= _SIGNATURE_LEN - 6 else None

    n = numel(first)
    return n is not None and all((row[1:5] == first[1:5]).all() and numel(row) == n for row in rows)


def _persistent_allgather(comm, row, rows):
    """A persistent all-gather of ``row`` into ``rows`` (MPI-4), or None where MPI has none: the
    checks then start an ``Iallgather`` each."""
    if comm.Get_size() < 2:
        return None
    try:
        return comm.Allgather_init(row, rows)
    except (AttributeError, NotImplementedError, RuntimeError):  # RuntimeError: mpi4py's MPI.Exception
        return None


def _tensor_signature(t, root=-1, op=-1):
    data = t._data
    shape = data.shape
    return (_NUMPY_DTYPE_CODE.get(data.dtype, 99), root, op, len(shape), *shape[:10])


def _seconds(timeout):
    """A Work.wait / monitored_barrier timeout (a timedelta, or seconds) in seconds."""
    return timeout.total_seconds() if isinstance(timeout, timedelta) else float(timeout)


class _What:
    """What a collective is, for messages: 'all_reduce #12 (shape=[4], dtype=torch.float32)'.

    Written only when a message shows it (most collectives never need it): ``detail`` is text or a
    function giving it."""
    __slots__ = ("_kind", "_seq", "_detail", "_group", "_text")

    def __init__(self, kind, seq, detail, group):
        self._kind, self._seq, self._detail, self._group, self._text = kind, seq, detail, group, None

    def __str__(self):
        if self._text is None:
            d = self._detail() if callable(self._detail) else self._detail
            self._text = f"{self._kind} #{self._seq}" + (f" ({d})" if d else "") + self._group
        return self._text

    def __eq__(self, other):
        return str(self) == str(other)

    __hash__ = None


def _explain(row):
    """A signature row back in words: ``all_reduce(shape=[3], dtype=torch.float32, op=SUM)``."""
    seq, kind = int(row[0]), _KINDS[int(row[1])] if 0 <= row[1] < len(_KINDS) else "?"
    parts = []
    if row[2] >= 0 and kind not in ("barrier", "new_group"):
        dtype = _DTYPES[int(row[2])] if row[2] < len(_DTYPES) else "?"
        ndim = int(row[5])
        parts.append(f"shape={[int(d) for d in row[6:6 + ndim]]}")
        parts.append(f"dtype={dtype}")
        if row[3] >= 0:
            parts.append(f"root={int(row[3])}")
        if row[4] >= 0 and kind in ("all_reduce", "reduce", "reduce_scatter", "reduce_scatter_tensor"):
            parts.append(f"op={RedOpType(int(row[4])).name}")
    elif kind == "new_group":
        parts.append(f"ranks hash={int(row[2])}")
    return f"{kind}({', '.join(parts)}) #{seq}"


# ----------------------------------------------------------------------------------------------
# The default group
# ----------------------------------------------------------------------------------------------
class _WorldMeta(type):
    @property
    def WORLD(cls):
        return _default_pg

    @WORLD.setter
    def WORLD(cls, pg):
        global _default_pg
        _default_pg = pg


class group(metaclass=_WorldMeta):
    """``group.WORLD``: the default process group (None before ``init_process_group``)."""


class GroupMember(metaclass=_WorldMeta):
    """``GroupMember.WORLD`` and ``GroupMember.NON_GROUP_MEMBER`` (what ``new_group`` returns on a rank
    that is not in the group)."""
    NON_GROUP_MEMBER = -100


_default_pg = None
_groups = []


def is_available():
    """Whether the distributed package can run here: mpi4py is installed (nothing is imported)."""
    import importlib.util
    return importlib.util.find_spec("mpi4py") is not None


is_mpi_available = is_gloo_available = is_available


def is_nccl_available():
    return False


def is_ucc_available():
    return False


def is_backend_available(backend):
    return Backend(backend) in _SERVED and is_available()


def is_initialized():
    return _default_pg is not None


def is_torchelastic_launched():
    """Whether this process was started by ``glasstorch.distributed.run`` (torchrun's test)."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def _get_default_group():
    if _default_pg is None:
        raise ValueError("Default process group has not been initialized, please make sure to call "
                         "init_process_group.")
    return _default_pg


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """Join the default process group.

    ``backend``: ``"gloo"`` or ``"mpi"`` (the same MPI engine), or None (gloo, torch's CPU default).
    ``init_method``: ``"env://"`` (default: ``MASTER_ADDR``, ``MASTER_PORT``, ``RANK``, ``WORLD_SIZE``)
    or ``"tcp://host:port"`` with ``rank`` and ``world_size``. Under ``mpiexec`` (or
    ``python -m glasstorch.distributed.run``) the MPI world is already there and ranks come from it.
    ``timeout``: how long a collective may wait for the other ranks (a ``timedelta``; torch's default
    is 30 minutes); a rank that fails or leaves ends the others' waits at once.
    """
    global _default_pg
    if _default_pg is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if store is not None and init_method is not None:
        raise AssertionError("Cannot specify both init_method and store.")
    if store is not None:
        raise RuntimeError("glasstorch.distributed forms its process group through MPI: pass init_method "
                           "(env:// or tcp://) or launch with mpiexec, not a store")
    if timeout is None:
        timeout = default_pg_timeout
    elif not isinstance(timeout, timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got {timeout}")
    backend = Backend(backend if backend is not None else Backend.GLOO)
    if ":" in backend:  # "cpu:gloo,cuda:nccl"
        backend = Backend(dict(p.split(":") for p in backend.split(",")).get("cpu", Backend.GLOO))
    if backend == Backend.NCCL:
        raise RuntimeError("Distributed package doesn't have NCCL built in")
    if backend not in _SERVED:
        raise RuntimeError(f"Invalid backend: '{backend}'. glasstorch.distributed serves 'gloo' and 'mpi' "
                           f"(both on MPI)")
    rank = None if rank is None or rank < 0 else rank
    world_size = None if world_size is None or world_size < 0 else world_size

    launched = _mpi.launched_by_mpi()
    master = None
    if launched is None and (world_size or 0) != 1 and not (backend == Backend.MPI and init_method is None):
        rank, world_size, master = rendezvous(init_method or "env://", rank, world_size)
    world = _mpi.start(rank, world_size, master, timeout.total_seconds())
    world.destroyed = False
    _default_pg = ProcessGroup(world, world.comm.Dup(), range(world.size), timeout, backend, "WORLD")
    _groups.append(_default_pg)


def destroy_process_group(group=None):
    """Leave ``group`` (default: every group, after which ``init_process_group`` may be called again)."""
    global _default_pg
    if group is None or group is _default_pg:
        if _default_pg is None:
            raise ValueError("Default process group has not been initialized, please make sure to call "
                             "init_process_group.")
        _default_pg._world.destroyed = True
        for pg in _groups:
            pg._free()
        _groups.clear()
        _default_pg = None
        return
    if group in _groups:
        _groups.remove(group)
        group._free()


def _resolve(group):
    """The ProcessGroup for ``group`` (None: the default), or None on a rank outside it."""
    if group is None or group is GroupMember.WORLD:
        return _get_default_group()
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup, got {type(group).__name__}")
    return group


def _not_member(op_name):
    warnings.warn(f"Running {op_name} on global rank {get_rank()} which does not belong to the given group.",
                  stacklevel=3)


def get_rank(group=None):
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    pg = _resolve(group)
    return pg.rank()


def get_world_size(group=None):
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return _resolve(group).size()


def get_backend(group=None):
    return _resolve(group)._backend


def get_process_group_ranks(group):
    return list(_resolve(group)._ranks)


def get_group_rank(group, global_rank):
    pg = _resolve(group)
    if global_rank not in pg._ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {pg}")
    return pg._ranks.index(global_rank)


def get_global_rank(group, group_rank):
    pg = _resolve(group)
    if not 0 <= group_rank < pg.size():
        raise ValueError(f"Group rank {group_rank} is not part of group {pg}")
    return pg._ranks[group_rank]


def get_node_local_rank(fallback_rank=None):
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing fallback_rank to allow "
                       "`get_node_local_rank` to work, assuming you are not running in a multi-device context "
                       "and want the code to run locally instead.")


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None, device_id=None):
    """A group of some of the ranks (every rank of the default group must call this, as in torch).

    Returns ``GroupMember.NON_GROUP_MEMBER`` on a rank that is not in ``ranks``.
    """
    default = _get_default_group()
    ranks = sorted(range(default.size()) if ranks is None else (int(r) for r in ranks))
    for r in ranks:
        if not 0 <= r < default.size():
            raise ValueError(f"The new group's rank should be within the world_size set by init_process_group, "
                             f"but got rank {r} (world_size {default.size()})")
    timeout = timeout or default._timeout
    # everyone first meets (with the timeout), then MPI splits: Split itself can't be interrupted
    signature = [hash(tuple(ranks)) & 0x7FFFFFFF]
    default._run("new_group", signature, f"ranks={ranks}", lambda: [default._comm.Ibarrier()])
    me = default.rank()
    MPI = default._world.MPI
    comm = default._comm.Split(0 if me in ranks else MPI.UNDEFINED, me)
    if me not in ranks:
        return GroupMember.NON_GROUP_MEMBER
    pg = ProcessGroup(default._world, comm, ranks, timeout, backend or default._backend,
                      f"group{len(_groups)}")
    _groups.append(pg)
    return pg


# ----------------------------------------------------------------------------------------------
# Buffers: a tensor's memory as MPI sees it
# ----------------------------------------------------------------------------------------------
def _check_single_tensor(param, name):
    if not isinstance(param, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type torch.Tensor\n"
                        f"             but got {type(param)} instead.")


def _check_tensor_list(param, name):
    if not isinstance(param, list) or not all(isinstance(p, Tensor) for p in param):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type List[torch.Tensor]\n"
                        f"             but got {type(param)} with elements of type "
                        f"{[type(p) for p in param] if isinstance(param, (list, tuple)) else '?'}.")


# MPI has no 16-bit floats: those travel as float32
_STAGED = {_dtype.float16, _dtype.bfloat16}


def _buffer(t):
    """A contiguous array MPI can read and write for tensor ``t``, and whether it is a copy."""
    data = t._data
    if t.dtype in _STAGED:
        return data.astype(xp.float32), True
    if not data.flags.c_contiguous:
        return xp.ascontiguousarray(data), True
    return data, False


def _write_back(t, array):
    """Put ``array`` (the result) into ``t`` and count it as an in-place change."""
    if array is not t._data:
        t._data[...] = array.reshape(t._data.shape).astype(t._data.dtype, copy=False)
    t._vc.version += 1


def _mpi_op(MPI, op, t):
    """MPI's operation for ``op`` on ``t``'s dtype (bools reduce with the logical operations)."""
    table = _MPI_OPS.get(MPI)
    if table is None:
        table = _MPI_OPS[MPI] = {
            False: {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD, ReduceOp.MIN: MPI.MIN,
                    ReduceOp.MAX: MPI.MAX, ReduceOp.BAND: MPI.BAND, ReduceOp.BOR: MPI.BOR, ReduceOp.BXOR: MPI.BXOR},
            True: {ReduceOp.SUM: MPI.LOR, ReduceOp.MAX: MPI.LOR, ReduceOp.BOR: MPI.LOR, ReduceOp.PRODUCT: MPI.LAND,
                   ReduceOp.MIN: MPI.LAND, ReduceOp.BAND: MPI.LAND, ReduceOp.BXOR: MPI.LXOR}}
    return table[t._data.dtype == xp.bool_][op]


_MPI_OPS = {}      # mpi4py.MPI -> {is_bool: {RedOpType: MPI.Op}}, made on first use
_OPS_ACCEPTED = {}  # (op, dtype) pairs _check_op accepted: the next call with them skips the checks


def _reduce_ops(op, t, name):
    """(``op`` as a RedOpType, MPI's operation for it on ``t``, whether MPI reduces ``t``'s array as it
    is: no AVG's division after, no 16-bit float staged through float32), after torch's checks;
    remembered per (op, dtype), so that a collective run again looks all up at once. (MPI's
    operation is None before MPI is loaded: the caller's next step then raises, the group not being
    initialised.)"""
    try:
        return _REDUCE_OPS[op, t._data.dtype]
    except (KeyError, TypeError):
        pass
    checked = _check_op(op, t, name)
    world = _mpi.current()
    if world is None:
        return checked, None, False
    ops = checked, _mpi_op(world.MPI, checked, t), checked != ReduceOp.AVG and t.dtype not in _STAGED
    try:
        _REDUCE_OPS[op, t._data.dtype] = ops
    except TypeError:
        pass
    return ops


_REDUCE_OPS = {}   # (op, NumPy dtype) -> (RedOpType, MPI.Op, direct), for the checks passed


def _check_op(op, t, name):
    """``op`` as a RedOpType, after torch's checks against ``t``'s dtype (remembered once passed)."""
    try:
        return _OPS_ACCEPTED[op, t._data.dtype]
    except (KeyError, TypeError):
        pass
    try:
        checked = RedOpType(op)
    except (ValueError, TypeError):
        raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``torch.distributed.ReduceOp``.") from None
    _check_op_for(checked, t, name)
    try:
        _OPS_ACCEPTED[op, t._data.dtype] = checked
    except TypeError:
        pass
    return checked


def _check_op_for(op, t, name):
    if op in (ReduceOp.PREMUL_SUM, ReduceOp.UNUSED):
        raise ValueError(f"{name}: ReduceOp.{op.name} is not supported by glasstorch.distributed")
    if t.is_complex() and not _supports_complex(op):
        raise ValueError(f"{name} does not support {op} on complex tensors")
    if op == ReduceOp.AVG and not (t.is_floating_point() or t.is_complex()):
        raise ValueError(f"{name}: ReduceOp.AVG needs a floating point tensor, got {t.dtype}")
    if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and t.is_floating_point():
        _get_default_group()   # torch's backend raises this, so a missing process group is named first
        raise RuntimeError(f"Cannot use ReduceOp.{op.name} with non-integral dtype")


def _group_root(pg, global_rank, name):
    if global_rank not in pg._ranks:
        raise ValueError(f"{name} rank {global_rank} is not part of group {pg.name()}")
    return pg._ranks.index(global_rank)


def _shape_text(t):
    return f"shape={list(t.shape)}, dtype={t.dtype}"


# ----------------------------------------------------------------------------------------------
# Collectives
# ----------------------------------------------------------------------------------------------
def barrier(group=None, async_op=False, device_ids=None):
    """Wait until every rank of the group has reached this call."""
    pg = _resolve(group)
    if pg is None:
        return _not_member("barrier")
    return pg._run("barrier", [], "", lambda: [pg._comm.Ibarrier()], async_op=async_op)


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier whose error, on rank 0, names the ranks that did not reach it within ``timeout``.

    As torch's (gloo's ``monitoredBarrier``): every other rank sends rank 0 a message and waits for
    its answer; rank 0 waits for each rank's message in turn, all within ``timeout`` (a
    ``timedelta``; torch's default, 30 minutes, when None) and raises at the first rank missing
    ("[Rank 0]: Rank 2 failed to pass monitoredBarrier in 2000 ms") or, with ``wait_all_ranks``,
    after waiting for every rank, naming all the missing ones ("[Rank 0]: Ranks 1, 2 failed ...").
    Only when every rank arrived does rank 0 answer them, so that all pass or none does: the others
    end with "Rank 1 successfully reached monitoredBarrier, but received errors while waiting for
    send/recv from rank 0" once rank 0 has failed. ``gloo`` groups only, as torch.
    """
    pg = _resolve(group)
    if pg is None:
        return _not_member("monitored_barrier")
    if pg._backend != Backend.GLOO:
        raise ValueError("monitored_barrier is only implemented for GLOO backend.")
    if timeout is None:
        timeout = default_pg_timeout
    elif isinstance(timeout, float):
        warnings.warn("Please specify timeout arg as a timedelta. "
                      f"Converting current value of {timeout} assuming it represents seconds", stacklevel=2)
        timeout = timedelta(seconds=timeout)
    if not isinstance(timeout, timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got {timeout}")
    pg._seq += 1
    what = pg._describe("monitored_barrier", "")
    token = xp.array([pg._rank], dtype=xp.int64)
    comm = pg._check_comm   # the checks' communicator: only collectives run there, these messages meet no others'
    if pg._rank != 0:
        requests = [comm.Isend(token, dest=0, tag=_ARRIVED), comm.Irecv(xp.empty_like(token), source=0, tag=_RELEASED)]
        try:
            pg._wait(requests, what)   # the group's timeout: rank 0 keeps the barrier's own
        except DistBackendError as e:
            raise RuntimeError(f"Rank {pg._rank} successfully reached monitoredBarrier, but received errors while "
                               "waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.\n "
                               f"Original exception: \n{e}") from None
        return None
    ms = int(timeout / timedelta(milliseconds=1))
    deadline = time.monotonic() + timeout.total_seconds()
    received = {r: comm.Irecv(xp.empty_like(token), source=r, tag=_ARRIVED) for r in range(1, pg._size)}
    passed = _monitored_wait(pg, received, what, deadline, ms, wait_all_ranks)
    if len(passed) == pg._size - 1:
        sent = {r: comm.Isend(token, dest=r, tag=_RELEASED) for r in range(1, pg._size)}
        passed = _monitored_wait(pg, sent, what, deadline, ms, wait_all_ranks)
        if len(passed) == pg._size - 1:
            return None
    missing = [r for r in range(1, pg._size) if r not in passed]
    raise RuntimeError(f"[Rank 0]: Ranks {', '.join(map(str, missing))} failed to pass monitoredBarrier in {ms} ms")


_ARRIVED, _RELEASED = 1, 2   # monitored_barrier's message tags


def _monitored_wait(pg, requests, what, deadline, ms, wait_all_ranks):
    """Rank 0 of a monitored_barrier: complete each rank's request (``{group rank: request}``) by
    ``deadline``; returns the ranks whose request completed. The first rank missing is an error
    at once, unless ``wait_all_ranks`` (the caller then names them all). A request not completed is
    cancelled, so that a late rank's message can't complete a freed request."""
    passed = []
    for r, request in requests.items():
        remaining = deadline - time.monotonic()
        if remaining <= 0 and not wait_all_ranks:
            done = f"Successfully processed ranks: {', '.join(map(str, passed))}" if passed else \
                "No ranks successfully processed in monitoredBarrier."
            _cancel(requests, passed)
            raise RuntimeError(f"Rank 0 timed out in monitoredBarrier after {ms} ms.\n{done}")
        try:
            _mpi.wait(pg._world, request.Test, what, [pg._ranks[r]], max(remaining, 0), diagnose=False)
        except DistBackendError as e:
            if not wait_all_ranks:
                _cancel(requests, passed)
                raise RuntimeError(f"[Rank 0]: Rank {r} failed to pass monitoredBarrier in {ms} ms\n "
                                   f"Original exception: \n{e}") from None
            continue
        passed.append(r)
    _cancel(requests, passed)
    return passed


def _cancel(requests, passed):
    """Cancel monitored_barrier's requests that did not complete (the ranks not in ``passed``)."""
    for r, request in requests.items():
        if r not in passed and not request.Test():
            request.Cancel()
            request.Wait()


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy rank ``src``'s ``tensor`` into ``tensor`` on every rank."""
    _check_single_tensor(tensor, "tensor")
    pg = _resolve(group)
    if pg is None:
        return _not_member("broadcast")
    root = _root_arg(pg, src, group_src, "src")
    buf, copied = _buffer(tensor)
    finish = (lambda: _write_back(tensor, buf)) if copied else (lambda: _bump(tensor))
    return pg._run("broadcast", _tensor_signature(tensor, root), lambda: _shape_text(tensor),
                   lambda: [pg._comm.Ibcast(buf, root=root)], finish, async_op, overlap_on=buf)


def _root_arg(pg, global_rank, group_rank, name):
    if group_rank is not None:
        if global_rank is not None:
            raise ValueError(f"Can not specify both group_{name} and {name}")
        if not 0 <= group_rank < pg.size():
            raise ValueError(f"Group rank {group_rank} is not part of group {pg.name()}")
        return group_rank
    return _group_root(pg, 0 if global_rank is None else global_rank, name)


def _bump(t):
    t._vc.version += 1


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``tensor`` over all ranks with ``op``; every rank gets the result, in place.

    ``ReduceOp.AVG`` sums, then divides by the group's size.
    """
    if not isinstance(tensor, Tensor):
        _check_single_tensor(tensor, "tensor")
    op, mpi_op, direct = _reduce_ops(op, tensor, "all_reduce")
    pg = _default_pg if group is None and _default_pg is not None else _resolve(group)
    if pg is None:
        return _not_member("all_reduce")
    data = tensor._data
    if direct and not async_op and data.flags.c_contiguous:   # the usual call: reduced in place, no finish step
        pg._in_place("all_reduce", ("all_reduce", data.shape, data.dtype, op), lambda: _tensor_signature(tensor, op=op),
                     lambda: _shape_text(tensor), data, pg._comm.Iallreduce, pg._IN_PLACE, data, mpi_op)
        tensor._vc.version += 1
        return None
    MPI = pg._world.MPI
    buf, copied = _buffer(tensor)

    def finish():
        if op == ReduceOp.AVG:
            buf[...] /= pg._size
        _write_back(tensor, buf) if copied else _bump(tensor)
    return pg._run("all_reduce", lambda: _tensor_signature(tensor, op=op), lambda: _shape_text(tensor),
                   lambda: [pg._comm.Iallreduce(MPI.IN_PLACE, buf, mpi_op)], finish, async_op, overlap_on=buf)


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduce ``tensor`` over all ranks into rank ``dst``'s ``tensor`` (the others' stay unchanged)."""
    _check_single_tensor(tensor, "tensor")
    op = _check_op(op, tensor, "reduce")
    pg = _resolve(group)
    if pg is None:
        return _not_member("reduce")
    root = _root_arg(pg, dst, group_dst, "dst")
    MPI = pg._world.MPI
    buf, copied = _buffer(tensor)
    at_root = pg.rank() == root

    def start():
        mpi_op = _mpi_op(MPI, op, tensor)
        if at_root:
            return [pg._comm.Ireduce(MPI.IN_PLACE, buf, mpi_op, root=root)]
        return [pg._comm.Ireduce(buf, None, mpi_op, root=root)]

    def finish():
        if at_root:
            if op == ReduceOp.AVG:
                buf[...] /= pg.size()
            _write_back(tensor, buf) if copied else _bump(tensor)

    return pg._run("reduce", _tensor_signature(tensor, root, op), lambda: _shape_text(tensor), start, finish, async_op,
                   overlap_on=buf)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """``tensor_list[r]`` = rank r's ``tensor``, on every rank."""
    _check_tensor_list(tensor_list, "tensor_list")
    _check_single_tensor(tensor, "tensor")
    pg = _resolve(group)
    if pg is None:
        return _not_member("all_gather")
    _check_list(tensor_list, pg.size(), tensor, "tensor_list", "all_gather")
    buf, _ = _buffer(tensor)
    out = xp.empty((pg.size(),) + buf.shape, dtype=buf.dtype)
    return pg._run("all_gather", _tensor_signature(tensor), lambda: _shape_text(tensor),
                   lambda: [pg._comm.Iallgather(buf, out)], lambda: _scatter_rows(out, tensor_list), async_op)


def _check_list(tensors, size, like, name, op_name):
    if len(tensors) != size:
        raise ValueError(f"{op_name}: {name} must have one tensor per rank of the group ({size}), got {len(tensors)}")
    for i, t in enumerate(tensors):
        if t.shape != like.shape or t.dtype != like.dtype:
            raise ValueError(f"{op_name}: {name}[{i}] has shape {list(t.shape)} and dtype {t.dtype}, but the "
                             f"tensor is of shape {list(like.shape)} and dtype {like.dtype}")


def _scatter_rows(rows, tensors):
    for row, t in zip(rows, tensors):
        _write_back(t, row)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Every rank's ``input_tensor``, concatenated (or stacked) into ``output_tensor``, on every rank."""
    _check_single_tensor(output_tensor, "output_tensor")
    _check_single_tensor(input_tensor, "input_tensor")
    pg = _resolve(group)
    if pg is None:
        return _not_member("all_gather_into_tensor")
    if output_tensor.numel() != input_tensor.numel() * pg.size() or output_tensor.dtype != input_tensor.dtype:
        raise ValueError(f"all_gather_into_tensor: output_tensor must hold world_size ({pg.size()}) times the "
                         f"input ({list(input_tensor.shape)}, {input_tensor.dtype}), got {list(output_tensor.shape)}, "
                         f"{output_tensor.dtype}")
    buf, _ = _buffer(input_tensor)
    out, copied = _buffer(output_tensor)
    finish = (lambda: _write_back(output_tensor, out)) if copied else (lambda: _bump(output_tensor))
    return pg._run("all_gather_into_tensor", _tensor_signature(input_tensor), lambda: _shape_text(input_tensor),
                   lambda: [pg._comm.Iallgather(buf, out)], finish, async_op)


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """Rank ``dst`` gets every rank's ``tensor`` in ``gather_list`` (the others pass no list)."""
    _check_single_tensor(tensor, "tensor")
    pg = _resolve(group)
    if pg is None:
        return _not_member("gather")
    root = _root_arg(pg, dst, group_dst, "dst")
    at_root = pg.rank() == root
    if at_root:
        if gather_list is None:
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
        _check_tensor_list(gather_list, "gather_list")
        _check_list(gather_list, pg.size(), tensor, "gather_list", "gather")
    elif gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
    buf, _ = _buffer(tensor)
    out = xp.empty((pg.size(),) + buf.shape, dtype=buf.dtype) if at_root else None
    return pg._run("gather", _tensor_signature(tensor, root), lambda: _shape_text(tensor),
                   lambda: [pg._comm.Igather(buf, out, root=root)],
                   (lambda: _scatter_rows(out, gather_list)) if at_root else None, async_op)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Rank r's ``tensor`` = rank ``src``'s ``scatter_list[r]``."""
    _check_single_tensor(tensor, "tensor")
    pg = _resolve(group)
    if pg is None:
        return _not_member("scatter")
    root = _root_arg(pg, src, group_src, "src")
    at_root = pg.rank() == root
    if at_root:
        if scatter_list is None:
            raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
        _check_tensor_list(scatter_list, "scatter_list")
        _check_list(scatter_list, pg.size(), tensor, "scatter_list", "scatter")
        send = xp.stack([_buffer(t)[0] for t in scatter_list])
    else:
        if scatter_list:
            raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
        send = None
    buf, copied = _buffer(tensor)
    finish = (lambda: _write_back(tensor, buf)) if copied else (lambda: _bump(tensor))
    return pg._run("scatter", _tensor_signature(tensor, root), lambda: _shape_text(tensor),
                   lambda: [pg._comm.Iscatter(send, buf, root=root)], finish, async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input_list[r]`` over all ranks with ``op`` into rank r's ``output``."""
    _check_single_tensor(output, "output")
    _check_tensor_list(input_list, "input_list")
    op = _check_op(op, output, "reduce_scatter")
    pg = _resolve(group)
    if pg is None:
        return _not_member("reduce_scatter")
    _check_list(input_list, pg.size(), output, "input_list", "reduce_scatter")
    send = xp.stack([_buffer(t)[0] for t in input_list])
    return _reduce_scatter(pg, "reduce_scatter", output, send, op, async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """``input`` holds world_size blocks of ``output``'s size: rank r gets block r, reduced over ranks."""
    _check_single_tensor(output, "output")
    _check_single_tensor(input, "input")
    op = _check_op(op, output, "reduce_scatter_tensor")
    pg = _resolve(group)
    if pg is None:
        return _not_member("reduce_scatter_tensor")
    if input.numel() != output.numel() * pg.size() or input.dtype != output.dtype:
        raise ValueError(f"reduce_scatter_tensor: input must hold world_size ({pg.size()}) times the output "
                         f"({list(output.shape)}, {output.dtype}), got {list(input.shape)}, {input.dtype}")
    return _reduce_scatter(pg, "reduce_scatter_tensor", output, _buffer(input)[0], op, async_op)


def _reduce_scatter(pg, kind, output, send, op, async_op):
    MPI = pg._world.MPI
    buf, copied = _buffer(output)
    send = xp.ascontiguousarray(send, dtype=buf.dtype)

    def finish():
        if op == ReduceOp.AVG:
            buf[...] /= pg.size()
        _write_back(output, buf) if copied else _bump(output)

    return pg._run(kind, _tensor_signature(output, op=op), lambda: _shape_text(output),
                   lambda: [pg._comm.Ireduce_scatter_block(send, buf, _mpi_op(MPI, op, output))], finish, async_op)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """Rank r sends ``input_tensor_list[s]`` to rank s, which receives it in ``output_tensor_list[r]``."""
    _check_tensor_list(output_tensor_list, "output_tensor_list")
    _check_tensor_list(input_tensor_list, "input_tensor_list")
    pg = _resolve(group)
    if pg is None:
        return _not_member("all_to_all")
    n = pg.size()
    if len(input_tensor_list) != n or len(output_tensor_list) != n:
        raise ValueError(f"all_to_all: both lists must have one tensor per rank ({n}), got "
                         f"{len(input_tensor_list)} inputs and {len(output_tensor_list)} outputs")
    dtype = input_tensor_list[0].dtype
    send = xp.concatenate([_buffer(t)[0].ravel() for t in input_tensor_list]) if n else None
    recv = xp.empty(sum(t.numel() for t in output_tensor_list), dtype=send.dtype)
    send_counts = [t.numel() for t in input_tensor_list]
    recv_counts = [t.numel() for t in output_tensor_list]

    def finish():
        offset = 0
        for t, c in zip(output_tensor_list, recv_counts):
            _write_back(t, recv[offset:offset + c])
            offset += c

    return _all_to_all(pg, "all_to_all", dtype, send, send_counts, recv, recv_counts, finish, async_op)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None, async_op=False):
    """``input`` split along dim 0 (evenly, or by ``input_split_sizes``): piece s goes to rank s; the
    pieces received are concatenated into ``output`` (split by ``output_split_sizes``)."""
    _check_single_tensor(output, "output")
    _check_single_tensor(input, "input")
    pg = _resolve(group)
    if pg is None:
        return _not_member("all_to_all_single")
    n = pg.size()
    row_in = input.numel() // max(1, input.shape[0]) if input.dim() else 1
    row_out = output.numel() // max(1, output.shape[0]) if output.dim() else 1

    def counts(split, t, row, name):
        if split is None or len(split) == 0:
            if t.shape[0] % n:
                raise ValueError(f"all_to_all_single: {name}.shape[0] ({t.shape[0]}) is not divisible by the "
                                 f"group's size ({n}); pass {name}_split_sizes")
            return [t.numel() // n] * n
        if len(split) != n or sum(split) != t.shape[0]:
            raise ValueError(f"all_to_all_single: {name}_split_sizes {list(split)} must have {n} entries adding up "
                             f"to {name}.shape[0] = {t.shape[0]}")
        return [int(s) * row for s in split]

    send_counts = counts(input_split_sizes, input, row_in, "input")
    recv_counts = counts(output_split_sizes, output, row_out, "output")
    send = _buffer(input)[0]
    recv, copied = _buffer(output)
    finish = (lambda: _write_back(output, recv)) if copied else (lambda: _bump(output))
    return _all_to_all(pg, "all_to_all_single", input.dtype, send, send_counts, recv, recv_counts, finish, async_op)


def _all_to_all(pg, kind, dtype, send, send_counts, recv, recv_counts, finish, async_op):
    """Alltoallv, after checking that what each rank sends to r is what r expects from it."""
    n = pg.size()
    if pg._checked and n > 1:
        sent = xp.array(send_counts, dtype=xp.int64)
        table = xp.empty((n, n), dtype=xp.int64)
        pg._wait([pg._comm.Iallgather(sent, table)], pg._describe(kind, "send counts"))
        expected = table[:, pg.rank()]
        if list(expected) != list(recv_counts):
            r = next(i for i in range(n) if expected[i] != recv_counts[i])
            raise RuntimeError(f"{kind}: rank {pg._ranks[r]} sends {int(expected[r])} elements to rank "
                               f"{pg._ranks[pg.rank()]}, which expects {recv_counts[r]} from it (the output "
                               f"tensors' sizes must match what the other ranks send)")
    send_displ = [sum(send_counts[:i]) for i in range(n)]
    recv_displ = [sum(recv_counts[:i]) for i in range(n)]
    return pg._run(kind, [_DTYPE_CODE.get(dtype, 99)], f"dtype={dtype}",
                   lambda: [pg._comm.Ialltoallv([send, (send_counts, send_displ)],
                                                [recv, (recv_counts, recv_displ)])], finish, async_op)


# ----------------------------------------------------------------------------------------------
# Point to point
# ----------------------------------------------------------------------------------------------
def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Start sending ``tensor`` to rank ``dst``; returns a :class:`Work`."""
    _check_single_tensor(tensor, "tensor")
    pg = _resolve(group)
    if pg is None:
        return _not_member("isend")
    peer = _root_arg(pg, dst, group_dst, "dst")
    if peer == pg.rank():
        raise ValueError("Invalid destination rank: destination rank should not be the same as the rank of the "
                         "current process.")
    buf = _buffer(tensor)[0]  # as in torch, the tensor must not change before the send completes
    what = f"send to rank {pg._ranks[peer]} ({_shape_text(tensor)}, tag {tag})"
    return Work(pg, [pg._comm.Isend(buf, dest=peer, tag=tag)], what)


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Start receiving into ``tensor`` from rank ``src`` (None: any rank); returns a :class:`Work`."""
    _check_single_tensor(tensor, "tensor")
    pg = _resolve(group)
    if pg is None:
        return _not_member("irecv")
    MPI = pg._world.MPI
    peer = MPI.ANY_SOURCE if src is None and group_src is None else _root_arg(pg, src, group_src, "src")
    buf, copied = _buffer(tensor)
    status = MPI.Status()
    origin = "any rank" if peer == MPI.ANY_SOURCE else f"rank {pg._ranks[peer]}"

    def finish():
        _write_back(tensor, buf) if copied else _bump(tensor)
        return pg._ranks[status.Get_source()]

    return Work(pg, [pg._comm.Irecv(buf, source=peer, tag=tag)], f"recv from {origin} ({_shape_text(tensor)}, "
                f"tag {tag})", finish, [status])


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send ``tensor`` to rank ``dst`` and wait until it has left."""
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into ``tensor`` from rank ``src`` (None: any); returns the sender's rank."""
    _check_single_tensor(tensor, "tensor")
    pg = _resolve(group)
    if pg is None:
        _not_member("recv")
        return -1
    MPI = pg._world.MPI
    peer = MPI.ANY_SOURCE if src is None and group_src is None else _root_arg(pg, src, group_src, "src")
    buf, copied = _buffer(tensor)
    status = MPI.Status()
    # probe first: the sender's size is known before anything is written, so a mismatch is an error
    # that names both shapes' sizes instead of MPI's truncation
    what = f"recv from {'any rank' if peer == MPI.ANY_SOURCE else 'rank ' + str(pg._ranks[peer])} " \
           f"({_shape_text(tensor)}, tag {tag})"
    message = _probe(pg, peer, tag, status, what)
    count = status.Get_count(MPI.BYTE)
    if count != buf.nbytes:
        message.Irecv(bytearray(count)).Wait()
        raise RuntimeError(f"recv: rank {pg._ranks[status.Get_source()]} sent {count} bytes, but the receiving "
                           f"tensor ({_shape_text(tensor)}) holds {buf.nbytes}")
    pg._wait([message.Irecv(buf)], what)
    _write_back(tensor, buf) if copied else _bump(tensor)
    return pg._ranks[status.Get_source()]


def _probe(pg, peer, tag, status, what):
    """A matched probe (the message is then held for this call alone), waiting with the group's timeout."""
    held = []

    def arrived():
        if not held:
            message = pg._comm.improbe(source=peer, tag=tag, status=status)
            if message is not None:
                held.append(message)
        return bool(held)

    pg._wait_until(arrived, what)
    return held[0]


class P2POp:
    """One send or receive for :func:`batch_isend_irecv`: ``P2POp(dist.isend, tensor, peer)``."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``torch.distributed.isend`` or "
                             "``torch.distributed.irecv``.")
        self.op, self.tensor, self.peer, self.group, self.tag, self.group_peer = op, tensor, peer, group, tag, group_peer

    def __repr__(self):
        return f"P2POp(op={self.op.__name__}, tensor={list(self.tensor.shape)}, peer={self.peer}, tag={self.tag})"


def batch_isend_irecv(p2p_op_list):
    """Start every send and receive of the list; returns their :class:`Work` handles."""
    if not isinstance(p2p_op_list, list) or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``torch.distributed.P2POp``.")
    return [p.op(p.tensor, p.peer, p.group, p.tag) for p in p2p_op_list]


# ----------------------------------------------------------------------------------------------
# Python objects (pickled, as torch does)
# ----------------------------------------------------------------------------------------------
def _to_bytes(obj):
    f = io.BytesIO()
    pickle.Pickler(f).dump(obj)
    return xp.frombuffer(f.getvalue(), dtype=xp.uint8)


def _from_bytes(array):
    return pickle.loads(array.tobytes())


def _object_collective(pg, kind, root, sizes_start, data_start, detail=""):
    """Two steps with the group's timeout: exchange the pickles' sizes, then the bytes."""
    pg._run(kind, [root], detail, sizes_start)
    pg._run(kind, [root], detail, data_start, check=False)


def all_gather_object(object_list, obj, group=None):
    """``object_list[r]`` = rank r's ``obj`` (any picklable object), on every rank."""
    pg = _resolve(group)
    if pg is None:
        return _not_member("all_gather_object")
    if len(object_list) != pg.size():
        raise ValueError(f"all_gather_object: object_list must have one slot per rank ({pg.size()}), "
                         f"got {len(object_list)}")
    data = _to_bytes(obj)
    sizes = xp.empty(pg.size(), dtype=xp.int64)
    box = {}

    def data_start():
        counts = [int(s) for s in sizes]
        box["out"] = out = xp.empty(sum(counts), dtype=xp.uint8)
        box["counts"] = counts
        return [pg._comm.Iallgatherv(data, [out, (counts, [sum(counts[:i]) for i in range(len(counts))])])]

    _object_collective(pg, "all_gather_object", -1,
                       lambda: [pg._comm.Iallgather(xp.array([data.size], dtype=xp.int64), sizes)], data_start)
    offset = 0
    for i, c in enumerate(box["counts"]):
        object_list[i] = _from_bytes(box["out"][offset:offset + c])
        offset += c


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """Rank ``dst`` gets every rank's ``obj`` in ``object_gather_list``."""
    pg = _resolve(group)
    if pg is None:
        return _not_member("gather_object")
    root = _root_arg(pg, dst, group_dst, "dst")
    at_root = pg.rank() == root
    if at_root and (object_gather_list is None or len(object_gather_list) != pg.size()):
        raise ValueError(f"gather_object: object_gather_list must have one slot per rank ({pg.size()}) on the "
                         f"destination rank")
    data = _to_bytes(obj)
    sizes = xp.empty(pg.size(), dtype=xp.int64)
    box = {}

    def data_start():
        if not at_root:
            return [pg._comm.Igatherv(data, None, root=root)]
        counts = [int(s) for s in sizes]
        box["out"] = out = xp.empty(sum(counts), dtype=xp.uint8)
        box["counts"] = counts
        return [pg._comm.Igatherv(data, [out, (counts, [sum(counts[:i]) for i in range(len(counts))])], root=root)]

    _object_collective(pg, "gather_object", root,
                       lambda: [pg._comm.Iallgather(xp.array([data.size], dtype=xp.int64), sizes)], data_start)
    if at_root:
        offset = 0
        for i, c in enumerate(box["counts"]):
            object_gather_list[i] = _from_bytes(box["out"][offset:offset + c])
            offset += c


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Replace ``object_list``'s items on every rank with rank ``src``'s (picklable objects)."""
    pg = _resolve(group)
    if pg is None:
        return _not_member("broadcast_object_list")
    root = _root_arg(pg, src, group_src, "src")
    at_root = pg.rank() == root
    data = _to_bytes(list(object_list)) if at_root else None
    size = xp.array([data.size if at_root else 0], dtype=xp.int64)
    box = {}

    def data_start():
        box["buf"] = buf = data if at_root else xp.empty(int(size[0]), dtype=xp.uint8)
        return [pg._comm.Ibcast(buf, root=root)]

    _object_collective(pg, "broadcast_object_list", root, lambda: [pg._comm.Ibcast(size, root=root)], data_start)
    if not at_root:
        received = _from_bytes(box["buf"])
        if len(received) != len(object_list):
            raise ValueError(f"broadcast_object_list: rank {pg._ranks[root]} sent {len(received)} objects, but "
                             f"this rank's object_list has {len(object_list)} slots")
        object_list[:] = received


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None, group=None,
                        group_src=None):
    """``scatter_object_output_list[0]`` = rank ``src``'s ``scatter_object_input_list[rank]``."""
    pg = _resolve(group)
    if pg is None:
        return _not_member("scatter_object_list")
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at least 1.")
    root = _root_arg(pg, src, group_src, "src")
    at_root = pg.rank() == root
    if at_root:
        if scatter_object_input_list is None or len(scatter_object_input_list) != pg.size():
            raise ValueError(f"scatter_object_list: scatter_object_input_list must have one object per rank "
                             f"({pg.size()}) on the source rank")
        pieces = [_to_bytes(o) for o in scatter_object_input_list]
        counts = [p.size for p in pieces]
        send = xp.concatenate(pieces)
    else:
        counts, send = None, None
    count = xp.empty(1, dtype=xp.int64)
    sent_counts = xp.array(counts if at_root else [0] * pg.size(), dtype=xp.int64)
    box = {}

    def data_start():
        box["buf"] = buf = xp.empty(int(count[0]), dtype=xp.uint8)
        sendspec = [send, (counts, [sum(counts[:i]) for i in range(len(counts))])] if at_root else None
        return [pg._comm.Iscatterv(sendspec, buf, root=root)]

    _object_collective(pg, "scatter_object_list", root, lambda: [pg._comm.Iscatter(sent_counts, count, root=root)],
                       data_start)
    scatter_object_output_list[0] = _from_bytes(box["buf"])

