"""DistributedDataParallel (torch/nn/parallel/distributed.py): one replica per process, gradients averaged.

Every process holds the whole model and runs its own forward and backward on its own share of
the batch, so every process has its own autograd graph. What keeps the replicas equal::

    construction   every rank's parameters: same names, shapes, dtypes?  (else an error naming one)
                   rank 0's parameters and buffers -> every rank            (broadcast)
    forward        rank 0's buffers -> every rank (broadcast_buffers=True); the module runs
    backward       each parameter's AccumulateGrad writes its local .grad, then its
                   post-accumulate hook copies .grad / world_size into its bucket;
                   a bucket whose parameters are all in starts an all_reduce (SUM) right away,
                   while backward goes on through the earlier layers (the overlap; where the
                   machine has a core to spare, a progress thread moves it along meanwhile)
    end of backward  the last hook waits for every bucket and writes the averages back into .grad

so ``optimizer.step()`` applies the same averaged gradient on every rank. Buckets hold the
parameters in reverse order (backward reaches the last layer first), 25 MiB each (``bucket_cap_mb``),
the first one 1 MiB so that communication starts early; they are started in the same order on every
rank, as MPI requires.

The hooks are ``Tensor.register_post_accumulate_grad_hook``: nothing in the autograd engine knows
about DDP. ``inspection.draw`` marks the parameters whose hooks these are (``draw_label``).
"""
import atexit
import os
import sys
import threading
import time
import weakref
from contextlib import contextmanager

from ..modules.module import Module
from ...autograd.graph import AccumulateGrad
from ..._array import xp

__all__ = ["DistributedDataParallel"]

_MB = 1024 * 1024
_DEFAULT_BUCKET_CAP_MB = 25
_DEFAULT_FIRST_BUCKET_BYTES = 1 * _MB

_UNUSED_MESSAGE = (
    "Expected to have finished reduction in the prior iteration before starting a new one. This error indicates "
    "that your module has parameters that were not used in producing loss. You can enable unused parameter "
    "detection by passing the keyword argument `find_unused_parameters=True` to "
    "`torch.nn.parallel.DistributedDataParallel`, and by \nmaking sure all `forward` function outputs participate "
    "in calculating loss. \nIf you already have done the above, then the distributed data parallel module wasn't "
    "able to locate the output tensors in the return value of your module's `forward` function. Please include "
    "the loss function and the structure of the return value of `forward` of your module when reporting this "
    "issue (e.g. list, dict, iterable).\n")


def _dist():
    from ... import distributed
    return distributed


class DistributedDataParallel(Module):
    """Data parallelism across processes: wrap the model once per process, after ``init_process_group``.

    Args:
        module: the model (the same architecture on every rank).
        device_ids, output_device: for GPU modules; must be None for a CPU module (torch's rule).
        broadcast_buffers: copy rank 0's buffers (BatchNorm statistics) to every rank before each forward.
        process_group: the group to average over (default: the default group).
        bucket_cap_mb: bucket size in MiB (default 25).
        find_unused_parameters: look through the forward's output graph for parameters that will get no
            gradient this iteration (they count as ready at once); without it such a parameter is an error
            at the next forward, as in torch.
        gradient_as_bucket_view, static_graph, check_reduction: accepted; the gradients are always copied
            back into ``.grad`` (the values are the same).

    ``no_sync()`` skips the averaging (gradient accumulation); ``module`` is the wrapped model, and the
    state_dict's keys start with ``module.``.
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True, init_sync=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, delay_all_reduce_named_params=None,
                 param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None):
        super().__init__()
        dist = _dist()
        if process_group is not None and device_mesh is not None:
            raise RuntimeError("Cannot specify both process_group and device_mesh arguments.")
        if device_mesh is not None or mixed_precision is not None or delay_all_reduce_named_params is not None:
            raise NotImplementedError("DistributedDataParallel: device_mesh, mixed_precision and delayed all-reduce "
                                      "are not supported by glasstorch")
        self.process_group = process_group if process_group is not None else \
            dist.distributed_c10d._get_default_group()
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter that "
                               "requires a gradient.")
        if device_ids or output_device is not None:
            devices = {p.device for _, p in named}
            raise ValueError("DistributedDataParallel device_ids and output_device arguments only work with "
                             "single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                             f"{device_ids}, output_device {output_device}, and module parameters {devices}.")
        self.module = module
        self.device_ids = None
        self.output_device = None
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        cap = (_DEFAULT_BUCKET_CAP_MB if bucket_cap_mb is None else bucket_cap_mb) * _MB
        first = _DEFAULT_FIRST_BUCKET_BYTES if bucket_cap_mb is None else cap
        _verify_same_model(self.process_group, named)
        if init_sync:
            self._sync_params_and_buffers()
        self.reducer = _Reducer(named, self.process_group, int(cap), int(first), find_unused_parameters)

    # -- keeping replicas equal ----------------------------------------------------------------
    def _sync_params_and_buffers(self):
        """Rank 0's parameters and buffers, everywhere (torch's _sync_module_states)."""
        tensors = [p for p in self.module.parameters()] + [b for b in self.module.buffers()]
        _broadcast_coalesced(self.process_group, tensors)

    def _sync_buffers(self):
        buffers = list(self.module.buffers())
        if buffers:
            _broadcast_coalesced(self.process_group, buffers)

    @contextmanager
    def no_sync(self):
        """Within this block, backward only accumulates local gradients (no all_reduce); the first
        backward after it averages everything accumulated."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def forward(self, *inputs, **kwargs):
        from ...autograd import grad_mode
        syncing = grad_mode.is_grad_enabled() and self.require_backward_grad_sync
        if syncing:
            self.reducer.prepare(_batch_size(inputs, kwargs, self.dim))
        if self.broadcast_buffers and self.require_forward_param_sync and self.process_group.size() > 1:
            self._sync_buffers()
        output = self.module(*inputs, **kwargs)
        if syncing and self.find_unused_parameters:
            self.reducer.mark_unused(_output_tensors(output))
        return output

    def extra_repr(self):
        return ""

    def __getstate__(self):
        raise RuntimeError("DistributedDataParallel can't be pickled: save its .module (or its state_dict) instead")


def _batch_size(inputs, kwargs, dim):
    """The size along ``dim`` of the first tensor among the forward's arguments (None if there is none)."""
    stack = list(inputs) + list(kwargs.values())
    while stack:
        x = stack.pop(0)
        if hasattr(x, "_data") and hasattr(x, "shape"):
            return int(x.shape[dim]) if x.dim() > dim else None
        if isinstance(x, (list, tuple)):
            stack[:0] = list(x)
        elif isinstance(x, dict):
            stack[:0] = list(x.values())
    return None


def _output_tensors(output):
    found, stack = [], [output]
    while stack:
        x = stack.pop()
        if hasattr(x, "_grad_fn"):
            found.append(x)
        elif isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, dict):
            stack.extend(x.values())
    return found


def _verify_same_model(group, named):
    """Every rank's parameters (count, names, shapes, dtypes) must be rank 0's: else an error naming one."""
    dist = _dist()
    mine = [(n, tuple(p.shape), str(p.dtype)) for n, p in named]
    everyone = [None] * group.size()
    dist.all_gather_object(everyone, mine, group=group)
    reference = everyone[0]
    ranks = dist.get_process_group_ranks(group)
    for r, theirs in enumerate(everyone):
        if len(theirs) != len(reference):
            names = {n for n, _, _ in theirs} ^ {n for n, _, _ in reference}
            raise RuntimeError(f"DDP expects same model across all ranks, but Rank {ranks[r]} has {len(theirs)} "
                               f"params, while rank {ranks[0]} has inconsistent {len(reference)} params "
                               f"(parameters on only one of them: {', '.join(sorted(names))}).")
        for i, ((name, shape, dtype), (name0, shape0, dtype0)) in enumerate(zip(theirs, reference)):
            if shape != shape0 or dtype != dtype0 or name != name0:
                raise RuntimeError(f"DDP expects same model across all ranks: params[{i}] ('{name}') in process "
                                   f"{ranks[r]} with sizes {list(shape)} and dtype {dtype} appears not to match "
                                   f"sizes of the same param in process {ranks[0]} ('{name0}', sizes "
                                   f"{list(shape0)}, dtype {dtype0}).")


def _broadcast_coalesced(group, tensors, src_rank=0):
    """Broadcast ``tensors`` from the group's rank ``src_rank``, one flat message per dtype."""
    dist = _dist()
    import glasstorch
    src = dist.get_global_rank(group, src_rank)
    by_dtype = {}
    for t in tensors:
        by_dtype.setdefault(t.dtype, []).append(t)
    for dtype, ts in by_dtype.items():
        flat = glasstorch.cat([t.detach().reshape(-1) for t in ts]) if len(ts) > 1 else ts[0].detach().reshape(-1).clone()
        dist.broadcast(flat, src=src, group=group)
        offset = 0
        for t in ts:
            n = t.numel()
            t._data[...] = flat._data[offset:offset + n].reshape(t._data.shape)
            offset += n


class _Bucket:
    """Parameters whose gradients travel in one all_reduce: one flat buffer, their slices in it."""

    def __init__(self, index, params, dtype, extra):
        self.index = index
        self.params = params                 # parameter indices, in the order their slices sit
        self.offsets = {}
        offset = 0
        for i, numel in params:
            self.offsets[i] = (offset, numel)
            offset += numel
        self.size = offset
        self.extra = extra                   # trailing elements after the gradients (see _Reducer)
        self.flat = xp.zeros(offset + extra, dtype=dtype)
        self.pending = 0
        self.request = None
        self.launched_at = None              # perf_counter() when its all_reduce started
        self.done_at = None                  # ... when this rank first saw it complete
        self.launched_by = None              # the parameter whose hook completed it (last backward)


class _GradReadyHook:
    """The post-accumulate-grad hook DDP puts on a parameter (weakly tied to its reducer)."""

    def __init__(self, reducer, index):
        self._reducer = weakref.ref(reducer)
        self.index = index

    def __call__(self, param):
        reducer = self._reducer()
        if reducer is not None:
            reducer.grad_ready(self.index, param)

    @property
    def draw_label(self):
        """How ``inspection.draw`` marks this parameter: its bucket, and whether its hook started it."""
        reducer = self._reducer()
        if reducer is None:
            return None
        bucket = reducer.bucket_of[self.index][0]
        started = " (starts it)" if bucket.launched_by == self.index else ""
        return f"DDP all_reduce: bucket {bucket.index}{started}"


class _Reducer:
    """The gradient side of DDP: buckets, the hooks, and the end of a synchronised backward.

    Bucket 0 carries two extra elements after its gradients: ``batch / world_size`` and
    ``1 / world_size`` (or 0 when this rank's batch size is unknown). Summed, they give the ranks'
    mean batch size and whether all ranks know theirs: a rank whose batch differs from the mean has
    a differently shaped graph than the others (the uneven last batch, a seatbelt trap). With
    ``find_unused_parameters`` every bucket also carries one element per parameter (1 if it was used
    here), so the ranks learn which parameters no rank used, without a message of their own.
    """

    def __init__(self, named, group, cap_bytes, first_bytes, find_unused):
        self.group = group
        self.names = [n for n, _ in named]
        self.params = [p for _, p in named]
        self.find_unused = find_unused
        self.world = group.size()
        self.buckets = self._build_buckets(cap_bytes, first_bytes)
        self.bucket_of = {}
        for b in self.buckets:
            for i, _ in b.params:
                self.bucket_of[i] = (b, b.offsets[i][0], b.offsets[i][1])
        self.ready = [False] * len(self.params)
        self.used = [True] * len(self.params)
        self.expecting = False       # a synchronised backward is expected (prepared by forward)
        self.any_ready = False
        self.next_bucket = 0
        self.local_batch = None
        self.forward_site = None
        # the last backward's timeline, for bench_distributed (what was hidden behind backward):
        # backward_end_at: the last gradient ready (perf_counter()); wait_s: waited from then on for the
        # buckets; comm_s: each bucket's launch to completion; buckets: (index, bytes, launched_at, done_at)
        self.stats = {"wait_s": 0.0, "comm_s": [], "backward_end_at": None, "buckets": []}
        self.progress = _ProgressThread.start_for(group)
        self._handles = [p.register_post_accumulate_grad_hook(_GradReadyHook(self, i))
                         for i, p in enumerate(self.params)]

    def __del__(self):
        progress = getattr(self, "progress", None)
        if progress is not None:
            progress.close()
        for h in getattr(self, "_handles", ()):
            try:
                h.remove()
            except Exception:
                pass

    def _build_buckets(self, cap_bytes, first_bytes):
        """Reverse parameter order, split by dtype and size (the first bucket small)."""
        buckets, current, size, dtype = [], [], 0, None
        limit = first_bytes
        for i in reversed(range(len(self.params))):
            p = self.params[i]
            nbytes = p._data.nbytes
            if current and (p._data.dtype != dtype or size + nbytes > limit):
                buckets.append((current, dtype))
                current, size, limit = [], 0, cap_bytes
            current.append((i, p.numel()))
            size += nbytes
            dtype = p._data.dtype
        buckets.append((current, dtype))
        result = []
        for k, (params, dt) in enumerate(buckets):
            extra = (2 if k == 0 else 0) + (len(params) if self.find_unused else 0)
            result.append(_Bucket(k, params, dt, extra))
        return result

    # -- one iteration ---------------------------------------------------------------------------
    def prepare(self, batch):
        """Called by forward: the next backward is to be synchronised."""
        if self.expecting and self.any_ready:
            self._raise_unfinished()
        if self.progress is not None:
            self.progress.pause()     # a backward that raised between two buckets left it running
        self.expecting = True
        self.any_ready = False
        self.ready = [False] * len(self.params)
        self.used = [True] * len(self.params)
        self.next_bucket = 0
        self.local_batch = batch
        self.forward_site = _user_site() if _seatbelt_on() else None
        for b in self.buckets:
            b.pending = len(b.params)
            b.request = None     # launched_by stays: the last backward's, which draw shows
        for b in self.buckets:
            b.launched_at = b.done_at = None
        self.stats.update(wait_s=0.0, comm_s=[], backward_end_at=None, buckets=[])

    def mark_unused(self, outputs):
        """find_unused_parameters: parameters the outputs' graph does not reach are ready now (zeros)."""
        reached = set()
        stack = [t._grad_fn for t in outputs if t._grad_fn is not None]
        seen = set()
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if type(node) is AccumulateGrad:
                reached.add(id(node.variable))
            stack.extend(n for n, _ in node.next_functions if n is not None)
        for i, p in enumerate(self.params):
            if id(p) not in reached:
                self.used[i] = False
                self._mark_ready(i, None)

    def grad_ready(self, i, param):
        if not self.expecting:
            return  # no_sync, or a backward that no synchronised forward prepared: local only
        if self.ready[i]:
            raise RuntimeError(f"Expected to mark a variable ready only once. This error is caused by one of the "
                               f"following reasons: 1) Use of a module parameter outside the `forward` function. "
                               f"2) Reused parameters in multiple reentrant backward passes. Parameter "
                               f"{self.names[i]} (index {i}) has been marked as ready twice.")
        self._mark_ready(i, param._grad)
        self._progress()

    def _mark_ready(self, i, grad):
        bucket, offset, numel = self.bucket_of[i]
        view = bucket.flat[offset:offset + numel]
        if grad is None:
            view[...] = 0
        else:
            xp.divide(grad._data.reshape(-1), self.world, out=view, casting="unsafe")
        self.ready[i] = True
        self.any_ready = True
        bucket.pending -= 1
        if bucket.pending == 0:
            bucket.launched_by = i
            self._launch_ready_buckets()

    def _launch_ready_buckets(self):
        """Start every complete bucket from ``next_bucket`` on, in index order (the same on all ranks)."""
        MPI = self.group._world.MPI
        while self.next_bucket < len(self.buckets) and self.buckets[self.next_bucket].pending == 0:
            b = self.buckets[self.next_bucket]
            self._fill_extra(b)
            b.launched_at = time.perf_counter()
            b.request = self.group._comm.Iallreduce(MPI.IN_PLACE, b.flat, MPI.SUM)
            self.group._seq += 1
            self.next_bucket += 1
            if self.progress is not None and self.next_bucket == 1:
                self.progress.resume()     # moves the buckets along while backward computes
        if self.next_bucket == len(self.buckets):
            self._finalize()

    def _fill_extra(self, b):
        k = b.size
        if b.index == 0:
            b.flat[k] = (self.local_batch or 0) / self.world
            b.flat[k + 1] = (1.0 / self.world) if self.local_batch is not None else 0.0
            k += 2
        if self.find_unused:
            for j, (i, _) in enumerate(b.params):
                b.flat[k + j] = 1.0 if self.used[i] else 0.0

    def _progress(self):
        """Let MPI move the started buckets along while backward computes (MPI progresses only inside
        calls); a bucket seen complete gets its time."""
        for b in self.buckets[:self.next_bucket]:
            if b.done_at is None and b.request.Test():
                b.done_at = time.perf_counter()

    def _finalize(self):
        """The last bucket has started: wait for all, write the averages into .grad."""
        start = time.perf_counter()
        if self.progress is not None:
            self.progress.pause()          # from here this thread drives MPI itself
        for b in self.buckets:
            if b.done_at is None:
                self.group._wait([b.request], f"DistributedDataParallel gradient all_reduce (bucket {b.index}, "
                                              f"{b.size} elements)")
                b.done_at = time.perf_counter()
            self.stats["comm_s"].append(b.done_at - b.launched_at)
        self.stats["wait_s"] = time.perf_counter() - start
        self.stats["backward_end_at"] = start
        self.stats["buckets"] = [(b.index, b.flat.nbytes, b.launched_at, b.done_at) for b in self.buckets]
        for b in self.buckets:
            globally_used = None
            if self.find_unused:
                base = b.size + (2 if b.index == 0 else 0)
                globally_used = {i: b.flat[base + j] > 0 for j, (i, _) in enumerate(b.params)}
            for i, (offset, numel) in b.offsets.items():
                p = self.params[i]
                if globally_used is not None and not globally_used[i]:
                    continue  # no rank used it: its .grad stays as it was, as in torch
                averaged = b.flat[offset:offset + numel].reshape(p._data.shape)
                if p._grad is None:
                    p.grad = _tensor_like(p, averaged)
                else:
                    p._grad._data[...] = averaged
                    p._grad._vc.version += 1
        self.expecting = False
        self._check_batches()

    def _check_batches(self):
        b = self.buckets[0]
        mean, known = float(b.flat[b.size]), float(b.flat[b.size + 1])
        if self.local_batch is None or abs(known - 1.0) > 1e-6 or abs(mean - self.local_batch) <= 1e-3 * max(1, mean):
            return
        if _seatbelt_on():
            _warn_uneven_batch(self.local_batch, mean, self.group.rank(), self.forward_site)

    def _raise_unfinished(self):
        missing = [i for i, r in enumerate(self.ready) if not r]
        rank = self.group.rank()
        raise RuntimeError(_UNUSED_MESSAGE + f"Parameters which did not receive grad for rank {rank}: "
                           f"{', '.join(self.names[i] for i in missing)}\nParameter indices which did not receive "
                           f"grad for rank {rank}: {' '.join(map(str, missing))}")


class _ProgressThread:
    """Drives MPI while backward computes, so that the buckets' all_reduces overlap with it.

    MPI moves a message only while some thread of the process is inside an MPI call, and during
    backward the main thread is mostly inside NumPy's matrix products, which release the GIL. From the
    first bucket's launch to the end of backward this thread calls ``Iprobe`` on a communicator of its
    own (nothing is ever sent there: the call only runs MPI's progress engine, which advances every
    pending operation of the process), a short burst at a time with a nap between bursts. It never
    touches the buckets' requests: MPI forbids two threads testing one request. (torch's gloo backend
    likewise runs its collectives on threads of its own.)

    The thread pays only where it has a core to run on: on a machine whose ranks already use every core
    it takes CPU time and the GIL from the computation, and the step gets slower even though backward
    waits less at its end (bench/README.md: 2 ranks on 2 cores). So it runs when the machine has more
    cores than ranks on it, or when ``GLASSTORCH_DDP_PROGRESS_THREAD=1`` asks for it (``=0``: never);
    it needs ``MPI_THREAD_MULTIPLE`` (mpi4py's default). Without it the buckets progress only when a
    gradient hook runs.
    """

    BURST = 16           # Iprobe calls per burst
    NAP = 1e-3           # seconds between bursts (50-200 us cost ~10% of a step on 2 busy cores)

    @classmethod
    def start_for(cls, group):
        """The thread for ``group``'s DDP, or None (collective: every rank builds its DDP at this point)."""
        MPI = group._world.MPI
        wanted = os.environ.get("GLASSTORCH_DDP_PROGRESS_THREAD", "auto")
        if group.size() < 2 or wanted == "0" or MPI.Query_thread() < MPI.THREAD_MULTIPLE:
            return None
        # the collectives (Split_type, Dup) run on every rank alike; only then does each rank decide
        # for itself (machines of a job may differ in cores)
        spare_core = True
        if wanted != "1":
            same_machine = group._comm.Split_type(MPI.COMM_TYPE_SHARED)
            ranks_here = same_machine.Get_size()
            same_machine.Free()
            cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
            spare_core = cores > ranks_here
        comm = group._comm.Dup()
        if not spare_core:
            comm.Free()
            return None
        return cls(MPI, comm)

    def __init__(self, MPI, comm):
        self._MPI = MPI
        self._comm = comm
        self._active = threading.Event()
        self._in_mpi = threading.Lock()     # held by the thread during a burst
        self._closing = False
        self._thread = threading.Thread(target=self._run, name="DDP MPI progress", daemon=True)
        self._thread.start()
        # out of MPI before MPI_Finalize (which no thread may be inside of), should a backward have
        # stopped between two buckets; registered after glasstorch.distributed's own exit handler,
        # so it runs before it
        atexit.register(self.pause)

    def _run(self):
        probe, any_source = self._comm.Iprobe, self._MPI.ANY_SOURCE
        burst, nap = range(self.BURST), self.NAP
        while True:
            self._active.wait()
            if self._closing:
                return
            with self._in_mpi:
                if self._active.is_set():
                    for _ in burst:
                        probe(source=any_source, tag=0)
            time.sleep(nap)

    def resume(self):
        self._active.set()

    def pause(self):
        """Stop polling; returns once the thread is out of MPI (at most one burst later, not a nap)."""
        self._active.clear()
        with self._in_mpi:
            pass

    def close(self):
        atexit.unregister(self.pause)
        self._closing = True
        self._active.set()
        self._thread.join(timeout=1.0)
        if not self._MPI.Is_finalized():
            self._comm.Free()


def _tensor_like(p, array):
    from ..._tensor import _wrap
    return _wrap(xp.array(array, dtype=p._data.dtype, copy=True))


# -- the seatbelt's uneven-batch trap (only when a seatbelt is on) -----------------------------------
def _seatbelt_on():
    """A seatbelt is open (inspection's seatbelt module keeps the open ones; if it was never
    imported, none can be)."""
    seatbelt = sys.modules.get("glasstorch.inspection.seatbelt")
    return seatbelt is not None and bool(seatbelt._belts)


def _user_site():
    from ...inspection._observer import user_site, where_of
    frame, _ = user_site(2)
    return where_of(frame)


def _warn_uneven_batch(local, mean, rank, site):
    from ...inspection.seatbelt import _warn, UnevenBatchWarning
    message = (f"DistributedDataParallel: this rank (rank {rank}) ran its forward on a batch of {local} samples, "
               f"but the ranks' batches average {mean:g}: the replicas' graphs differ, and the averaged gradient "
               f"weighs this rank's samples {'more' if local < mean else 'less'} than the others' (usually the last, "
               f"smaller batch of an uneven split; a rank with one batch more than the others would wait "
               f"forever). Fix: give every rank the same number of samples with "
               f"DistributedSampler(dataset, drop_last=True), and DataLoader(..., drop_last=True) so that no last "
               f"batch is smaller.")
    _warn(UnevenBatchWarning, message, site)
