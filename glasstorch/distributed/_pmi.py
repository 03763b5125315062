"""Forming an MPI world without ``mpiexec``: the process-manager side of MPICH's PMI-1 protocol.

``mpiexec`` does two jobs for an MPI program: it starts the processes, and it serves them a small
key-value store through which they swap addresses when ``MPI_Init`` runs (MPICH calls that interface
PMI, "process management interface"; its wire protocol is lines of ``cmd=... key=value``). Under
``torch.multiprocessing.spawn`` (or several ``run.py --nnodes`` launchers) someone else started the
processes; all that is missing is the store. Rank 0 starts it (:func:`serve`: this file run as a
small process of its own, since ``MPI_Init`` holds the interpreter while it waits for the answers)
at the rendezvous address (``MASTER_ADDR:MASTER_PORT``, or ``tcp://host:port``); every rank points
MPICH at it through the environment (``PMI_PORT``, ``PMI_ID``) and then initialises MPI: the result
is an ordinary ``MPI_COMM_WORLD`` of ``world_size`` processes, and every collective after that runs
in MPICH. The server ends when the last rank has left.

Besides the PMI requests that MPICH sends (on a connection it opens itself), each rank keeps a
second connection of its own (:class:`Member`), opened before ``MPI_Init``:

- ``hello``: it says which rank it is, of how many, on which host. The server checks that the
  ranks agree (one world size, no rank twice) and builds MPICH's ``PMI_process_mapping`` (which
  ranks share a host, and so shared memory) from the host names.
- liveness: a rank whose connection closes without a ``bye`` has died (killed, crashed). The
  server tells every other rank at once, so a collective that waits for it fails naming it instead
  of hanging until the timeout (the server runs apart from rank 0, so this holds for rank 0 too;
  if the server itself goes, the others see their connection close). When any rank's process has
  ended (its connection closes), the others are told too (``closed``): a rank that failed because
  another one had leaves only after it.

The PMI-1 requests served here are exactly those MPICH's client sends (see MPICH's
``src/pmi/maint/pmi-1.1.txt``): ``initack``, ``init``, ``get_maxes``, ``get_appnum``,
``get_my_kvsname``, ``get_universe_size``, ``put``, ``get``, ``barrier_in``, ``finalize``, ``abort``.
Open MPI speaks PMIx instead, so this path needs MPICH (the ``mpich`` wheel).
"""
import json
import os
import select
import socket
import subprocess
import sys
import threading
import time

__all__ = ["ProcessManager", "Member", "serve"]

_KEY_NOT_FOUND = "cmd=get_result rc=-1 msg=key_not_found"


def _parse(line):
    """``'cmd=put key=a value=b'`` -> ``{'cmd': 'put', 'key': 'a', 'value': 'b'}``."""
    fields = {}
    for token in line.split():
        key, _, value = token.partition("=")
        fields[key] = value
    return fields


def process_mapping(hosts):
    """MPICH's ``PMI_process_mapping`` for ``hosts[rank]``: ``(vector,(node,1,count),...)``, one block
    per run of consecutive ranks on one host (nodes numbered in order of first appearance)."""
    node_of = {}
    blocks = []
    for host in hosts:
        node = node_of.setdefault(host, len(node_of))
        if blocks and blocks[-1][0] == node:
            blocks[-1][1] += 1
        else:
            blocks.append([node, 1])
    return "(vector," + ",".join(f"({node},1,{count})" for node, count in blocks) + ")"


class ProcessManager:
    """The key-value store and barrier that ``mpiexec`` would serve, in threads of rank 0.

    ``lost`` maps a rank to why it left without saying goodbye (``'died'``, or the message it gave
    ``MPI_Abort``); rank 0 reads it while it waits in a collective.
    """

    def __init__(self, host, port, world_size, timeout):
        self.world_size = world_size
        self.timeout = timeout
        self.kvsname = f"glasstorch_{os.getpid()}_{port}_{os.urandom(4).hex()}"
        self.kvs = {}
        self.hosts = {}          # rank -> host name, from the hellos
        self.members = {}        # rank -> its Member connection (server side)
        self.lost = {}           # rank -> reason
        self.done = set()        # ranks that said goodbye
        self._in_barrier = set() # ranks in the current PMI barrier
        self._left = 0           # member connections closed
        self._open = 0           # connections open (members' and MPICH's own)
        self._generation = 0
        self._cond = threading.Condition()
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self._listener.bind((host, port))
        except OSError as e:
            self._listener.close()
            raise RuntimeError(f"The server socket has failed to bind to {host}:{port} (errno: {e.errno} - "
                               f"{e.strerror}): is another job using MASTER_PORT {port}?") from None
        self._listener.listen(128)
        threading.Thread(target=self._accept, name="glasstorch-pmi", daemon=True).start()

    # -- connections -------------------------------------------------------------------------
    def _accept(self):
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        """One connection: MPICH's PMI requests, or a Member's JSON lines."""
        reader = conn.makefile("rb")
        rank = None
        member = False
        with self._cond:
            self._open += 1
        try:
            for raw in reader:
                line = raw.decode("utf-8", "replace").strip()
                if not line:
                    continue
                if line.startswith("{"):
                    member = True
                    rank = self._member_message(conn, json.loads(line), rank)
                    continue
                fields = _parse(line)
                if fields.get("cmd") == "initack":
                    rank = int(fields.get("pmiid", -1))
                reply = self._pmi(fields, rank)
                if reply is not None:
                    conn.sendall((reply + "\n").encode())
        except (OSError, ValueError):
            pass
        finally:
            if member and rank is not None:
                self._disconnected(rank)
            conn.close()
            with self._cond:
                self._open -= 1
                self._cond.notify_all()

    def _member_message(self, conn, message, rank):
        kind = message.get("kind")
        if kind == "hello":
            rank, size = int(message["rank"]), int(message["world_size"])
            error = None
            with self._cond:
                if size != self.world_size:
                    error = (f"rank {rank} was started with world_size={size}, but rank 0 with "
                             f"world_size={self.world_size}: every rank must be given the same world size")
                elif not 0 <= rank < size:
                    error = f"Invalid rank {rank}, rank should be in the interval [0, {size - 1}]"
                elif rank in self.hosts:
                    error = f"rank {rank} joined twice: two processes were given the same rank"
                else:
                    self.hosts[rank] = message["host"]
                    self.members[rank] = conn
                    self._cond.notify_all()
            conn.sendall((json.dumps({"kind": "welcome", "error": error}) + "\n").encode())
            return rank if error is None else None
        if kind == "bye" and rank is not None:
            with self._cond:
                self.done.add(rank)
                self._cond.notify_all()
        return rank

    def _disconnected(self, rank):
        with self._cond:
            self.members.pop(rank, None)
            self._left += 1
            self._cond.notify_all()
            if rank not in self.done and rank not in self.lost:
                self._mark_lost(rank, "died (its process ended without leaving the process group: killed, "
                                      "or crashed)")
            # its process has ended (the connection closes only then): a rank that failed because of this
            # one waits for this news before it leaves, so that a parent watching the processes (spawn)
            # sees the root cause end first
            self._tell({"kind": "closed", "rank": rank}, but=rank)

    def _mark_lost(self, rank, reason):
        """Record a rank as gone and tell every other rank (called with the lock held)."""
        self.lost[rank] = reason
        self._cond.notify_all()
        self._tell({"kind": "lost", "rank": rank, "reason": reason}, but=rank)

    def _tell(self, message, but):
        """Send ``message`` to every member but rank ``but`` (called with the lock held)."""
        note = (json.dumps(message) + "\n").encode()
        for other, conn in list(self.members.items()):
            if other != but:
                try:
                    conn.sendall(note)
                except OSError:
                    pass

    # -- PMI-1 -------------------------------------------------------------------------------
    def _pmi(self, fields, rank):
        cmd = fields.get("cmd")
        if cmd == "initack":
            return f"cmd=initack rc=0\ncmd=set size={self.world_size}\ncmd=set rank={rank}\ncmd=set debug=0"
        if cmd == "init":
            return "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0"
        if cmd == "get_maxes":
            return "cmd=maxes kvsname_max=256 keylen_max=256 vallen_max=4096 rc=0"
        if cmd == "get_appnum":
            return "cmd=appnum appnum=0 rc=0"
        if cmd == "get_my_kvsname":
            return f"cmd=my_kvsname kvsname={self.kvsname} rc=0"
        if cmd == "get_universe_size":
            return f"cmd=universe_size size={self.world_size} rc=0"
        if cmd == "put":
            with self._cond:
                self.kvs[fields["key"]] = fields.get("value", "")
            return "cmd=put_result rc=0"
        if cmd == "get":
            return self._get(fields["key"])
        if cmd == "barrier_in":
            return self._barrier(rank)
        if cmd == "finalize":
            return "cmd=finalize_ack rc=0"
        if cmd == "abort":
            with self._cond:
                if rank is not None and rank not in self.lost:
                    message = fields.get("message", "").strip() or "no message"
                    self._mark_lost(rank, f"called MPI_Abort ({message})")
            return None
        return f"cmd={cmd} rc=-1 msg=unknown_command"

    def _get(self, key):
        if key == "PMI_process_mapping":
            with self._cond:  # it needs every rank's host: wait for all hellos
                if not self._cond.wait_for(lambda: len(self.hosts) == self.world_size, self.timeout):
                    return _KEY_NOT_FOUND
                return "cmd=get_result rc=0 value=" + process_mapping([self.hosts[r] for r in range(self.world_size)])
        with self._cond:
            value = self.kvs.get(key)
        return _KEY_NOT_FOUND if value is None else f"cmd=get_result rc=0 value={value}"

    def _barrier(self, rank):
        """``barrier_in`` from every rank still alive, then ``barrier_out`` to all (MPI_Init and
        MPI_Finalize use it). The barrier counts ranks, not requests: a rank lost meanwhile no
        longer counts, and a lost rank that asks is answered at once. (MPICH's ``MPI_Abort`` sends
        ``abort`` and then goes through MPI_Finalize's barrier; counted as one more arrival, it
        completed the barrier of the live ranks early, and the last of them then waited alone in a
        barrier of its own until the timeout; held until the live ranks came, it kept the aborting
        rank in ``MPI_Abort`` as long.) A barrier that the timeout ends answers with an error, so no
        process waits here forever."""
        with self._cond:
            if rank in self.lost:
                return "cmd=barrier_out rc=0"
            generation = self._generation
            self._in_barrier.add(rank)
            complete = lambda: self._generation != generation or \
                self._in_barrier >= set(range(self.world_size)) - self.lost.keys()  # noqa: E731
            if not self._cond.wait_for(complete, self.timeout):
                return "cmd=barrier_out rc=1 msg=timed_out"
            if self._generation == generation:
                self._generation += 1
                self._in_barrier = set()
                self._cond.notify_all()
        return "cmd=barrier_out rc=0"

    def run_until_all_left(self):
        """Serve until every rank that joined has closed its connections (MPICH keeps its own open until
        the process ends: MPI_Finalize still needs a barrier here), or until none came in time."""
        with self._cond:
            if self._cond.wait_for(lambda: self.hosts, self.timeout):
                self._cond.wait_for(lambda: self._left >= len(self.hosts) and not self.members and not self._open)
        self._listener.close()


def serve(host, port, world_size, timeout):
    """Start the process manager as a process of its own; returns it once it listens (or raises)."""
    process = subprocess.Popen([sys.executable, os.path.abspath(__file__), host, str(port), str(world_size),
                                str(timeout)], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)  # it may outlive rank 0: keep rank 0's streams free
    line = process.stdout.readline().decode().strip()
    if line != "listening":
        process.wait()
        raise RuntimeError(line or f"the rendezvous server for {host}:{port} failed to start")
    return process


def _main(host, port, world_size, timeout):
    try:
        manager = ProcessManager(host, int(port), int(world_size), float(timeout))
    except RuntimeError as e:
        print(e, flush=True)
        return 1
    print("listening", flush=True)
    manager.run_until_all_left()
    return 0


class Member:
    """A rank's own connection to the process manager: hello, then liveness news until bye."""

    def __init__(self, host, port, rank, world_size, deadline):
        self.lost = {}          # rank -> why it left without a goodbye
        self.closed = set()     # ranks whose processes have ended
        self._buffer = b""
        delay = 0.01
        while True:  # rank 0 may not be listening yet: retry until the deadline, as torch's store does
            try:
                self.sock = socket.create_connection((host, port), timeout=max(0.1, deadline - time.monotonic()))
                break
            except OSError as e:
                if time.monotonic() + delay > deadline:
                    raise RuntimeError(f"rank {rank} could not reach rank 0 at {host}:{port} ({e.strerror or e}) "
                                       f"before the timeout: is rank 0 running, and MASTER_ADDR/MASTER_PORT "
                                       f"the same on every rank?") from None
                time.sleep(delay)
                delay = min(delay * 2, 0.5)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._send({"kind": "hello", "rank": rank, "world_size": world_size, "host": socket.gethostname()})
        self.sock.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            reply = self._read_line()
        except OSError:
            reply = None
        if reply is None:
            raise RuntimeError(f"rank {rank} got no answer from rank 0 at {host}:{port}: is something else "
                               f"listening on that port?")
        error = json.loads(reply).get("error")
        if error:
            raise ValueError("Error initializing torch.distributed: " + error)
        self.sock.settimeout(None)
        self.sock.setblocking(False)

    def _send(self, message):
        self.sock.sendall((json.dumps(message) + "\n").encode())

    def _read_line(self):
        while b"\n" not in self._buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode()

    def poll(self):
        """Read any news without waiting. Returns False once the connection to rank 0 is gone."""
        try:
            readable, _, _ = select.select([self.sock], [], [], 0)
            if not readable:
                return True
            chunk = self.sock.recv(65536)
        except (OSError, ValueError):
            return False
        if not chunk:
            return False
        self._buffer += chunk
        while b"\n" in self._buffer:
            line, _, self._buffer = self._buffer.partition(b"\n")
            message = json.loads(line)
            if message.get("kind") == "lost":
                self.lost[int(message["rank"])] = message["reason"]
            elif message.get("kind") == "closed":
                self.closed.add(int(message["rank"]))
        return True

    def bye(self):
        try:
            self.sock.setblocking(True)
            self._send({"kind": "bye"})
        except OSError:
            pass

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


if __name__ == "__main__":
    sys.exit(_main(*sys.argv[1:5]))
