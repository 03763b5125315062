"""Capture: run the user's function once, eagerly, and write down the ops it ran as a Graph.

torch's Dynamo reads bytecode; glasstorch watches the calls instead, at the two levels of the seam
(``glasstorch/_seam.py``):

* a :class:`~glasstorch.overrides.TorchFunctionMode` sees each *public* call the user's code makes
  (``F.linear``, ``Tensor.item``, ``F.cross_entropy`` ...), one level deep;
* a :class:`~glasstorch.utils._python_dispatch.TorchDispatchMode` sees the primitive ``aten`` ops
  those calls are made of (``aten.t.default``, ``aten.addmm.default`` ...), below autograd.

Each aten op becomes a node of the graph; an in-place op (``add_``) becomes a node of its
out-of-place twin (``add``) whose value later reads read, and the inputs it wrote are written back
after the graph runs (functionalization, :meth:`Capture._in_place`). A public call whose work the
aten level does not fully show (its result, or a tensor one of its ops reads, comes from code not
on the seam yet, such as the random mask inside ``F.dropout``, or it writes a view's memory) is
kept whole instead: one node that calls the public function (an *eager island*; it runs through
autograd at run time).

What the graph cannot hold is a **graph break**, with its reason and the user's ``file:line``:
a Python value read from a tensor's data (``.item()``, ``.tolist()``, ``.numpy()``, ``bool(t)`` in
an ``if``, printing a tensor), ``backward()`` inside the function, an in-place write it cannot hold
(into a view of a tensor the graph reads), a tensor made by an op the capture cannot see. The call that broke has run
eagerly (capture *is* an eager run) and its result is kept; the function is marked to run eagerly
for the inputs that gave the break. ``fullgraph=True`` raises torch's ``Unsupported`` at the break.
"""
import operator
import os
import sys
import threading

from .._tensor import Tensor
from ..autograd import grad_mode
from ..fx.graph import Graph, Node, for_each_node
from ..overrides import TorchFunctionMode
from ..utils._python_dispatch import TorchDispatchMode
from . import exc

_state = grad_mode._state
_GLASSTORCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Public calls that hand a tensor's *data* to Python: the graph cannot hold their result.
_DATA_READS = {
    "Tensor.item": "Tensor.item() reads a tensor's value into Python",
    "Tensor.tolist": "Tensor.tolist() reads a tensor's values into Python",
    "Tensor.numpy": "Tensor.numpy() hands the tensor's data to NumPy",
    "Tensor.__array__": "the tensor's data handed to NumPy (__array__)",
    "Tensor.__bool__": "data-dependent branching: bool() of a tensor (an `if`/`while` on a tensor's value)",
    "Tensor.__float__": "float() of a tensor reads its value into Python",
    "Tensor.__int__": "int() of a tensor reads its value into Python",
    "Tensor.__index__": "a tensor used as a Python index reads its value",
    "Tensor.__complex__": "complex() of a tensor reads its value into Python",
    "Tensor.__repr__": "printing a tensor (its values go to Python)",
    "Tensor.__format__": "formatting a tensor (its values go to Python)",
    "backward": "autograd.backward inside the compiled function (its backward runs eagerly)",
    "Tensor.backward": "Tensor.backward() inside the compiled function (the backward runs eagerly)",
    "grad": "autograd.grad inside the compiled function (runs eagerly)",
}
# Public calls that return Python values about a tensor's metadata, not its data: specialised.
_METADATA = {"Tensor.requires_grad.__get__", "Tensor.is_leaf.__get__", "Tensor.grad_fn.__get__", "Tensor.type",
             "Tensor.dim", "Tensor.size", "Tensor.shape.__get__", "Tensor.ndim.__get__",
             "Tensor.numel", "Tensor.is_floating_point", "numel", "is_floating_point", "is_complex", "is_tensor",
             "_set_grad_enabled", "is_grad_enabled", "Tensor.requires_grad_",
             # the same for every glasstorch tensor (_tensor._constant_flag): MultiheadAttention reads is_nested
             "Tensor.is_nested.__get__", "Tensor.is_sparse.__get__", "Tensor.is_sparse_csr.__get__",
             "Tensor.is_mkldnn.__get__", "Tensor.is_quantized.__get__", "Tensor.layout.__get__",
             # the device and what follows from it or from the dtype, which the guards check for every input (the
             # array's type is the device): torch's dynamo reads them as constants too (``x.is_cuda``, ``x.device``)
             "Tensor.device.__get__", "Tensor.is_meta.__get__", "Tensor.get_device", "Tensor.element_size",
             "Tensor.itemsize.__get__", "Tensor.nbytes.__get__", "Tensor.is_complex", "is_signed"} | {
    f"Tensor.is_{device}.__get__" for device in ("cuda", "cpu", "xpu", "mps", "ipu", "xla", "maia", "mtia", "vulkan")}
# In-place methods that change metadata only (no data): allowed on inputs.
_INPLACE_METADATA = {"Tensor.requires_grad_", "Tensor.retain_grad"}

_active = threading.local()


def tracing():
    """Whether this thread is capturing a function now (compiled functions called inside run as
    plain Python, and ``torch.compiler.disable``\\ d ones break the graph)."""
    return getattr(_active, "capture", None) is not None


def current():
    return getattr(_active, "capture", None)


def step_handler():
    """What runs an optimizer's step now: the capture (:meth:`Capture.optimizer_step`), a replay
    (``replay._Run.optimizer_step``), or None (plain eager)."""
    return getattr(_active, "capture", None) or getattr(_active, "run", None)


def compiling():
    """``torch.compiler.is_compiling()``: capturing a function now, or replaying a captured one
    (``replay.py`` runs the function's Python again, and it must take the paths it took when captured:
    Adam's step keeps its step count a tensor under either)."""
    return getattr(_active, "capture", None) is not None or getattr(_active, "replaying", 0) > 0


def user_frame():
    """The innermost frame outside glasstorch: where the user's code made the call."""
    f = sys._getframe(1)
    while f is not None:
        path = os.path.abspath(f.f_code.co_filename)
        if not path.startswith(_GLASSTORCH_DIR) and not f.f_code.co_filename.startswith("<glasstorch"):
            return f"{f.f_code.co_filename}:{f.f_lineno} in {f.f_code.co_name}"
        f = f.f_back
    return "<unknown>"


# calls that change Python state a graph cannot hold: their `.grad` writes. torch's dynamo replays such
# attribute writes as side effects after its graph; so does glasstorch (Capture._side_effect): the call
# runs again after the graph, at every call (a graph that skipped `p.grad = None` would accumulate the
# next backward into the old gradient)
_PYTHON_SIDE_EFFECTS = frozenset({"Optimizer.zero_grad", "Module.zero_grad", "Tensor.grad.__set__"})
# calls inside an optimizer's step that replay may skip with it: they change nothing (grad mode is set
# back by the step itself)
_SKIPPABLE_IN_STEP = frozenset({"Tensor.grad.__get__", "_set_grad_enabled"}) | (_METADATA - _INPLACE_METADATA)


class Bound:
    """A tensor a side effect is called with that existed before the call (``p`` of ``p.grad = None``),
    found at run time as that object: ``read(args, kwargs)``."""
    __slots__ = ("read", "name")

    def __init__(self, read, name):
        self.read, self.name = read, name

    def __repr__(self):
        return f"Bound({self.name})"


class GraphBreak:
    """One reason the function could not be captured whole: ``reason`` and ``user_stack``
    (``file:line in function``), as torch's ``GraphCompileReason``."""

    def __init__(self, reason, user_stack):
        self.reason, self.user_stack = reason, [user_stack]

    def __repr__(self):
        return f"GraphBreak(reason={self.reason!r}, user_stack={self.user_stack[0]!r})"


class Ref:
    """A tensor in a call's recorded arguments: ``("arg", path)``, ``("free", tensor)`` (a parameter
    or buffer), ``("call", k, j)`` (output ``j`` of the function's ``k``-th public call) or
    ``("obj", tensor)`` (a tensor from outside, by identity)."""
    __slots__ = ("key",)

    def __init__(self, key):
        self.key = key

    def __repr__(self):
        return f"Ref{self.key[:1] + tuple(k for k in self.key[1:] if not isinstance(k, Tensor))}"


class CallRecord:
    """One public call of the capture run: ``func``, its arguments (tensors as :class:`Ref`), the
    graph it was in; ``out_nodes``/``result`` when the graph holds it whole (replay hands back the
    graph's values), ``diverge`` when the graph holds it but replay cannot stand in for it."""
    __slots__ = ("func", "args", "graph", "out_nodes", "result", "diverge", "inplace")

    def __init__(self, func, args, graph):
        self.func, self.args, self.graph = func, args, graph
        self.out_nodes = self.result = None
        self.diverge = self.inplace = False


def _refs(template, found):
    """Add the key of each :class:`Ref` in ``template`` to the set ``found``."""
    if isinstance(template, Ref):
        found.add(template.key)
    elif type(template) in (tuple, list):
        for v in template:
            _refs(v, found)
    elif type(template) is dict:
        for v in template.values():
            _refs(v, found)


def _plain(result):
    """A result replay can rebuild: a tensor, or a plain tuple/list of tensors and Nones (as
    ``multi_head_attention_forward``'s ``(output, None)`` without weights)."""
    return isinstance(result, Tensor) or type(result) in (tuple, list) and any(
        isinstance(r, Tensor) for r in result) and all(isinstance(r, Tensor) or r is None for r in result)


def _positions(result, outs):
    """Where each item of the result is among the call's output tensors (None: a None)."""
    if isinstance(result, Tensor):
        return 0
    return type(result)(None if r is None else next(j for j, o in enumerate(outs) if o is r) for r in result)


class _Call:
    """The public call being run: the aten nodes seen inside it, held until we know whether they
    make up the whole of it."""

    def __init__(self):
        self.nodes = []
        self.values = {}       # id(tensor) -> (node, tensor, version): values made inside the call
        self.unsupported = None  # why the aten level does not show the whole call
        self.grad_enabled = _state.enabled


class Capture:
    """The state of one capture. ``run(fn, args, kwargs)`` calls ``fn`` under both modes."""

    def __init__(self, args, kwargs, modules=(), fullgraph=False):
        self.fullgraph = fullgraph
        self.graph = Graph()
        self.segments = []           # graphs closed by a break that hold ops (what explain shows)
        self.closed = []             # (graph, inputs) of every graph closed so far, by index (replay.py)
        self.records = []            # one CallRecord per public call the function made, in order
        self.refs = {}               # id(tensor) -> (key, tensor): how a later call names a tensor
        self.replayable = True       # False: the call must run eagerly as a whole (see finish)
        self.breaks = []
        self.values = {}             # id(tensor) -> (node, tensor, version)
        self.inputs = []             # (placeholder node, source): ("arg", path, tensor) | ("free", tensor)
        self.arg_paths = {}          # id(tensor) -> its path in the arguments ("args[0]", "kwargs['x']")
        self.free = {}               # id(tensor) -> tensor: parameters and buffers of the modules seen
        self.modules = []            # the modules whose parameters/flags the trace may have read
        self.call = None
        self.paused = 0              # inside a torch.compiler.disable'd function: not captured
        self.hidden = 0              # an optimizer's state being created: not captured, nor recorded for replay
        self.stepping = 0            # inside an optimizer's step
        self.step_ranges = {}        # k0 -> (k1, optimizer): records k0..k1-1 are one step a graph holds whole
        self.grad_enabled = _state.enabled
        self.optimizers = []         # (optimizer, its state when the call began): guarded (guards.py)
        self.grad_of = {}            # id(a .grad the function read) -> the tensor it is the gradient of
        self.grad_reads = []         # (tensor, whether its .grad was None): what `if p.grad is None` decided
        self.written_vcs = set()     # id(version counter) of each tensor an in-place op was captured on
        self.new_values = set()      # the nodes that hold a tensor's value after a captured in-place op
        self.mutations = []          # per closed graph: [(placeholder, node of its new value, bumps, op name)]
        self.side_effects = []       # (func, its arguments, tensors as nodes): run again after the graph
        self.grad_set = set()        # id(tensor) whose .grad a side effect of the current graph set
        self.side_touched = set()    # id(tensor) a side effect of the current graph changed in place
        self._walk(args, "args")
        self._walk(kwargs, "kwargs")
        for m in modules:
            self._walk(m, "owner")

    # -- what exists before the call ---------------------------------------------------------
    def _walk(self, value, path):
        from ..nn.modules.module import Module
        from ..optim.optimizer import Optimizer
        if isinstance(value, Optimizer):
            self.note_optimizer(value)
        elif isinstance(value, Tensor):
            self.arg_paths.setdefault(id(value), path)
            self.refs.setdefault(id(value), (("arg", path), value))
        elif isinstance(value, (list, tuple)):
            for i, v in enumerate(value):
                self._walk(v, f"{path}[{i}]")
        elif isinstance(value, dict):
            for k, v in value.items():
                self._walk(v, f"{path}[{k!r}]")
        elif isinstance(value, Module):
            self.note_module(value)

    def note_module(self, module):
        """A module the function uses: its parameters and buffers may be read (graph inputs), its
        ``training`` flag and parameter identities are guarded."""
        for prefix, m in module.named_modules():
            if not any(m is k for k in self.modules):
                self.modules.append(m)
                owner = (prefix.replace(".", "_") + "_") if prefix else f"{type(m).__name__.lower()}_"
                for kind in (m._parameters, m._buffers):
                    for key, t in kind.items():
                        if t is not None and id(t) not in self.free:
                            self.free[id(t)] = (owner + key, t)
                            self.refs.setdefault(id(t), (("free", t), t))

    def note_optimizer(self, opt):
        """An optimizer the function uses (an argument, or ``opt`` of ``torch.compile(opt.step)``): its
        parameters and state tensors are graph inputs read by identity, and what its step's Python
        decided from -- hyperparameters, which parameters have state and which have a ``.grad`` -- is
        guarded as it was when the call began (the state a first step creates: as it was when the
        step began, see :meth:`optimizer_step_begins`)."""
        if any(o is opt for o, _ in self.optimizers):
            return
        groups = [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups]
        params = [p for g in opt.param_groups for p in g["params"]]
        snapshot = {"groups": groups, "params": [list(g["params"]) for g in opt.param_groups],
                    "has_grad": [p._grad is not None for p in params]}
        self.optimizers.append((opt, snapshot))
        for i, p in enumerate(params):
            if id(p) not in self.free:
                self.free[id(p)] = (f"param{i}", p)
                self.refs.setdefault(id(p), (("free", p), p))
        self._note_optimizer_state(opt, snapshot)

    def _note_optimizer_state(self, opt, snapshot):
        params = [p for g in opt.param_groups for p in g["params"]]
        snapshot["state"] = state = [(p, dict(opt.state[p])) for p in params if p in opt.state]
        for i, (p, entries) in enumerate(state):
            for key, t in entries.items():
                if isinstance(t, Tensor) and id(t) not in self.free:
                    self.free[id(t)] = (f"state{i}_{key}", t)
                    self.refs.setdefault(id(t), (("free", t), t))

    def optimizer_step(self, opt, step, args, kwargs):
        """``opt.step()`` under capture (its wrapper calls this, ``optim/optimizer.py``): the state is
        made first (:meth:`optimizer_step_begins`), then the step runs, its calls captured as any
        others. Where the graph holds the whole step -- no break, nothing returned, each call either
        in the graph or a read that changes nothing (``p.grad``, grad mode) -- its records are marked
        as one range: replay then runs the graph for them and skips the step's Python (hundreds of
        calls for a Transformer's Adam, each a lookup otherwise)."""
        self.optimizer_step_begins(opt)
        if self.paused or self.hidden or len(args) > 1 or kwargs:      # (a closure: its Python must run)
            return step(*args, **kwargs)
        k0, breaks, graph = len(self.records), len(self.breaks), self.graph
        self.stepping += 1
        try:
            result = step(*args, **kwargs)
        finally:
            self.stepping -= 1
        index = self.graph_index
        if result is None and len(self.breaks) == breaks and self.graph is graph and len(self.records) > k0 and all(
                rec.graph == index and not rec.diverge and (
                    rec.out_nodes is not None or _func_name(rec.func) in _SKIPPABLE_IN_STEP)
                for rec in self.records[k0:]):
            self.step_ranges[k0] = (len(self.records), opt)
        return result

    def optimizer_step_begins(self, opt):
        """An optimizer's ``step`` is about to run (its wrapper says so, ``optim/optimizer.py``): create
        the state a first step creates -- Adam's ``step``, ``exp_avg``, ``exp_avg_sq`` of each parameter
        with a gradient, the optimizer's ``_init_state`` -- now, neither captured nor recorded, as
        torch's dynamo runs an optimizer's ``_init_group`` eagerly before it traces the step. The state
        is then an input of the graph and guarded as the step found it, so a first step is captured as
        the steady one: ``torch.compile(opt.step)`` and a whole training step that calls ``opt.step()``
        compile once, from the first call (the step itself would have made exactly this state, for the
        parameters ``_params_with_grad`` gives whose state is empty: eager's results stay)."""
        init = getattr(opt, "_init_state", None)
        if self.paused or init is None:
            return
        takes_group = init.__code__.co_argcount > 2
        created = False
        self.hidden += 1
        self.paused += 1
        try:
            for group in opt.param_groups:
                for p in opt._params_with_grad(group):
                    if not opt.state.get(p):
                        init(p, group) if takes_group else init(p)
                        created = True
        finally:
            self.hidden -= 1
            self.paused -= 1
        if created:
            self.note_optimizer(opt)
            self._note_optimizer_state(opt, next(s for o, s in self.optimizers if o is opt))

    def module_called(self, module):
        """A module's forward is about to run: note it; its hooks (Python the graph would not run
        again) break the graph."""
        self.note_module(module)
        hooks = [kind for kind in ("_forward_pre_hooks", "_forward_hooks", "_backward_pre_hooks", "_backward_hooks")
                 if getattr(module, kind, None)]
        if hooks and not self.paused:
            self.graph_break(f"{type(module).__name__} has hooks ({', '.join(hooks)}): they run as Python")

    # -- breaks ------------------------------------------------------------------------------
    def graph_break(self, reason):
        where = user_frame()
        self.breaks.append(GraphBreak(reason, where))
        if self.fullgraph:
            raise exc.Unsupported(f"{reason}\n  (graph break at {where}; fullgraph=True does not allow breaks)")
        # the rest of the run is captured only to show it (explain): a new graph, which reads what
        # was computed before the break as its inputs, as torch's graph after a break does
        self._close_graph()
        self.graph = Graph()
        self.values = {}
        self.inputs = []
        self.written_vcs = set()     # (the closed graph's writes are back in memory before the next reads)
        self.grad_set, self.side_touched = set(), set()      # (and its side effects have run: replay runs them)

    def _close_graph(self):
        self.closed.append((self.graph, self.inputs))
        self.mutations.append(self._write_backs())
        if any(n.op == "call_function" for n in self.graph.nodes):
            self.segments.append(self.graph)

    @property
    def broken(self):
        return bool(self.breaks)

    @property
    def graph_index(self):
        return len(self.closed)

    # -- values ------------------------------------------------------------------------------
    def resolve(self, t, inside=None, version=None):
        """The node that stands for tensor ``t``; None where the capture cannot know it."""
        key = id(t)
        version = t._vc.version if version is None else version
        for table in ((inside.values,) if inside is not None else ()) + (self.values,):
            entry = table.get(key)
            if entry is not None and entry[1] is t:
                if entry[2] != version:
                    return self._unknown(f"tensor {entry[0].name} was changed in place by an op the capture cannot "
                                         "see", inside)
                return entry[0]
        ref = self.refs.get(key)
        if key in self.side_touched:
            # zero_grad(set_to_none=False) zeroed it: that runs after the graph, which would read the old value
            return self._unknown("a tensor changed in place by zero_grad() earlier in the compiled function (a side "
                                 "effect replayed after the graph), read after the change", inside)
        if id(t._vc) in self.written_vcs:
            # a view of (or alias of) a tensor the graph changed in place: it would read the memory
            # before the write-back (the graph keeps the new value apart until it returns)
            return self._unknown("a view of a tensor changed in place inside the compiled function, read after "
                                 "the change", inside)
        owner = self.grad_of.get(key)
        if owner is None and not (key in self.arg_paths or key in self.free or _is_parameter(t)):
            owner = self._grad_owner(t)
        if key in self.arg_paths:
            source = ("arg", self.arg_paths[key], t)
            name = self.arg_paths[key].replace("args[", "arg").replace("kwargs[", "kw").replace("'", "")
        elif self.broken and ref is not None and ref[1] is t and ref[0][0] == "call" and not (
                self.stepping and owner is not None and owner[0]._grad is t):
            # (inside an optimizer's step a gradient is read from its parameter, not from the call that read
            # it: replay may skip the step's Python, see optimizer_step)
            # after a break: a tensor an earlier public call returned (replay.py finds it at run time)
            source = ("call", ref[0][1], ref[0][2], t)
            name = f"call{ref[0][1]}_{ref[0][2]}"
        elif owner is not None and owner[0]._grad is t:
            # the .grad of a parameter (or of an argument): read from it at each call
            source = ("grad", owner[0], owner[1], t)
            name = (self.free[id(owner[0])][0] if id(owner[0]) in self.free else owner[1] or "p") + "_grad"
        elif key in self.free or _is_parameter(t) or (t._requires_grad and t._grad_fn is None):
            # a parameter, a buffer, or a leaf that requires grad: no op of this run made it
            source = ("free", t)
            name = self.free[key][0] if key in self.free else "p"
        else:
            return self._unknown("a tensor made by an op the capture cannot see (it is not on the dispatch seam "
                                 "yet)", inside)
        node = self.graph.placeholder(name.replace("[", "_").replace("]", ""), meta=_meta(t))
        node.meta["version"] = version
        self.graph.nodes.remove(node)       # placeholders go first
        self.graph.nodes.insert(sum(n.op == "placeholder" for n in self.graph.nodes), node)
        self.inputs.append((node, source))
        self.values[key] = (node, t, version)
        return node

    def _grad_owner(self, t):
        """``(tensor, its path in the arguments or None)`` when ``t`` is the ``.grad`` of a parameter,
        buffer or argument the capture knows (read inside a call the function mode does not see, as
        an optimizer's step reads it)."""
        for _, p in self.free.values():
            if p._grad is t:
                return (p, None)
        for tid, path in self.arg_paths.items():
            p = self.refs[tid][1]
            if p._grad is t:
                return (p, path)
        return None

    def _unknown(self, reason, inside):
        if inside is not None:
            inside.unsupported = inside.unsupported or reason
        else:
            self.graph_break(reason)
        return None

    def template(self, value, inside=None, versions=None):
        """``value`` with each tensor replaced by its node (None if one is unknown: a break)."""
        missing = []

        def load(v):
            if isinstance(v, Tensor):
                node = self.resolve(v, inside, versions.get(id(v)) if versions else None)
                if node is None:
                    missing.append(v)
                return node
            if isinstance(v, tuple):
                return tuple(load(x) for x in v)
            if isinstance(v, list):
                return [load(x) for x in v]
            if isinstance(v, dict):
                return {k: load(x) for k, x in v.items()}
            return v
        out = load(value)
        return None if missing else out

    # -- the function level ------------------------------------------------------------------
    def on_function(self, func, args, kwargs):
        """A public call: capture it (``_on_function``) and write down its record for replay."""
        if self.hidden:
            return func(*args, **kwargs)
        record = CallRecord(func, self.ref_template((args, kwargs)), self.graph_index)
        self.records.append(record)
        k = len(self.records) - 1
        tensors_in = _flat_tensors((args, kwargs))
        before = [t._vc.version for t in tensors_in]
        breaks, graph, paused = len(self.breaks), self.graph, self.paused
        result = self._on_function(func, args, kwargs)
        outs = _flat_tensors(result)
        for j, t in enumerate(outs):
            self.refs.setdefault(id(t), (("call", k, j), t))
        mutated = [t for t, v in zip(tensors_in, before) if t._vc.version != v]
        in_graph = not paused and len(self.breaks) == breaks and self.graph is graph
        # an in-place call the graph holds (captured as its new value, written back when the graph has
        # run): replay hands back the tensor it changed, as the call returns it
        inplace = bool(mutated) and isinstance(result, Tensor) and result is tensors_in[0] and all(
            self._written(m, self.values) for m in mutated)
        if in_graph and outs and (not mutated or inplace) and _plain(result) and all(
                self.values.get(id(t), (None, None))[1] is t for t in outs):
            record.out_nodes = [self.values[id(t)][0] for t in outs]
            record.result = _positions(result, outs)
            record.inplace = inplace
        elif in_graph and (outs or mutated) and not (
                not mutated and len(outs) == 1 and self.grad_of.get(id(outs[0]), (None,))[0] is not None
                and self.grad_of[id(outs[0])][0]._grad is outs[0]):
            # (a call the graph holds but replay cannot hand back; a `.grad` read is not one: replay runs it,
            # the graph reads the same gradient from its owner, and later calls are matched against it)
            record.diverge = True
        return result

    def ref_template(self, value):
        """``value`` with each tensor replaced by a :class:`Ref` to it (replay matches calls so)."""
        if isinstance(value, Tensor):
            entry = self.refs.get(id(value))
            return Ref(entry[0] if entry is not None and entry[1] is value else ("obj", value))
        if type(value) in (tuple, list):
            return type(value)(self.ref_template(v) for v in value)
        if type(value) is dict:
            return {k: self.ref_template(v) for k, v in value.items()}
        return value

    def _on_function(self, func, args, kwargs):
        if self.paused:
            return func(*args, **kwargs)
        name = _func_name(func)
        if name in _PYTHON_SIDE_EFFECTS:
            return self._side_effect(func, name, args, kwargs)
        if name.endswith(".__set__"):
            self.graph_break(f"setting a tensor's attribute inside the compiled function ({name})")
            return self._uncaptured(func, args, kwargs)
        if name in _DATA_READS:
            self.graph_break(f"{_DATA_READS[name]} ({name})")
            return self._uncaptured(func, args, kwargs)
        if name == "Tensor.grad.__get__":
            return self._read_grad(func, args, kwargs)
        tensors_in = _flat_tensors((args, kwargs))
        if name.endswith("_") and not name.endswith("__") and name not in _INPLACE_METADATA and tensors_in:
            target = tensors_in[0]
            entry = self.values.get(id(target))
            is_input = (entry is not None and entry[0].op == "placeholder") or id(target) in self.arg_paths \
                or id(target) in self.free or _is_parameter(target) or (self.broken and entry is None)
            if is_input and target._requires_grad and _state.enabled:
                # (autograd would give the input a new history, which the write-back cannot)
                self.graph_break(f"in-place op {name} on an input of the compiled function that requires grad, "
                                 "with grad mode on")
                return self._uncaptured(func, args, kwargs)
        before = {id(t): t._vc.version for t in tensors_in}
        call = _Call()
        outer, self.call = self.call, call
        try:
            result = func(*args, **kwargs)
        finally:
            self.call = outer
        self._finish_call(func, name, args, kwargs, result, call, tensors_in, before)
        return result

    def _side_effect(self, func, name, args, kwargs):
        """``opt.zero_grad()``, ``model.zero_grad()``, ``p.grad = v``: writes of Python state (``.grad``),
        which torch's dynamo replays after its graph as side effects. Here the call runs, uncaptured,
        and is written down with its arguments (tensors as nodes: ``v`` is handed out of the graph);
        whoever runs the graph calls it again afterwards (``CacheEntry``). That is eager's order as long
        as nothing later in the graph reads what it changed: a later ``p.grad`` read, or a read of a
        gradient it zeroed in place, breaks the graph (resolve, _read_grad). After a break, replay runs
        the function's Python, this call included, as it is."""
        from ..nn.modules.module import Module
        from ..optim.optimizer import Optimizer
        for v in args[:1]:
            if isinstance(v, Optimizer):
                self.note_optimizer(v)
            elif isinstance(v, Module):
                self.note_module(v)
        owners = [t for _, t in self.free.values()] + [self.refs[i][1] for i in self.arg_paths]
        before = [(p, p._grad, None if p._grad is None else p._grad._vc.version) for p in owners]
        values = self.values
        if any(g is not None and id(g) in values and values[id(g)][1] is g and values[id(g)][0] in self.new_values
               for _, g, _ in before):
            # (the graph changed a gradient in place, and zero_grad would change it again before the write-back)
            self.graph_break(f"{name} after an in-place change of a .grad inside the compiled function")
            return self._uncaptured(func, args, kwargs)
        targs = self._side_effect_args((args, kwargs))
        if targs is None:
            self.graph_break(f"{name} with a tensor the compiled graph cannot hand out")
            return self._uncaptured(func, args, kwargs)
        result = self._uncaptured(func, args, kwargs)
        for p, grad, version in before:
            if p._grad is not grad:
                self.grad_set.add(id(p))
            elif grad is not None and grad._vc.version != version:
                self.side_touched.add(id(grad))
        self.side_effects.append((func, targs, self.graph_index))
        return result

    def _side_effect_args(self, value):
        """A side effect's arguments as it will be called after the graph: a tensor that existed before
        the call as that very object (``p`` of ``p.grad = v``: an argument, read from ``args``, or a
        parameter, buffer or outside leaf, by identity: :class:`Bound`), a tensor the graph made as its
        node (the graph hands it out), anything else as it is; None when a tensor is neither."""
        missing = []

        def load(v):
            if isinstance(v, Tensor):
                key = id(v)
                entry = self.values.get(key)
                if key in self.arg_paths:
                    return Bound(eval(f"lambda args, kwargs: {self.arg_paths[key]}"), self.arg_paths[key])
                if key in self.free or _is_parameter(v) or (v._requires_grad and v._grad_fn is None):
                    return Bound(lambda args, kwargs, t=v: t, self.free.get(key, ("a leaf",))[0])
                if entry is not None and entry[1] is v and entry[2] == v._vc.version and entry[0].op != "placeholder":
                    return entry[0]
                missing.append(v)
                return None
            if type(v) in (tuple, list):
                return type(v)(load(x) for x in v)
            if type(v) is dict:
                return {k: load(x) for k, x in v.items()}
            return v
        out = load(value)
        return None if missing else out

    def _read_grad(self, func, args, kwargs):
        """``p.grad``: a Python decision (None or not, guarded) and, where it is a tensor, a graph input
        read from ``p`` at each call (an optimizer's step reads its parameters' gradients so)."""
        owner = args[0]
        if id(owner) in self.grad_set:
            # a side effect set it: the guards check .grad as the call began, and the side effect runs after
            # the graph (torch's dynamo reads the value it set; replay, after this break, runs it in order)
            self.graph_break("reading .grad after zero_grad() or `.grad = ...` set it inside the compiled function "
                             "(Tensor.grad.__get__)")
            return self._uncaptured(func, args, kwargs)
        result = func(*args, **kwargs)
        if id(owner) in self.free or _is_parameter(owner) or (owner._requires_grad and owner._grad_fn is None
                                                              and id(owner) not in self.arg_paths):
            where = (owner, None)      # (a parameter, a buffer, a leaf from outside: bound by identity)
        elif id(owner) in self.arg_paths:
            where = (owner, self.arg_paths[id(owner)])
        else:
            self.graph_break("reading .grad of a tensor the compiled function made (Tensor.grad.__get__)")
            return result
        self.grad_reads.append((owner, where[1], result is None))
        if isinstance(result, Tensor):
            self.grad_of[id(result)] = where
        return result

    def _uncaptured(self, func, args, kwargs):
        """Run a call that broke the graph; the ops it runs (a whole backward pass) are not captured."""
        self.paused += 1
        try:
            return func(*args, **kwargs)
        finally:
            self.paused -= 1

    def _finish_call(self, func, name, args, kwargs, result, call, tensors_in, before):
        for node in call.nodes:             # an in-place op's node: autograd has recorded the write now
            target = node.meta.pop("inplace_of", None)
            if target is not None:          # (a leaf written under no_grad still requires grad: no gradient flows)
                node.meta["requires_grad"] = node.meta.pop("grad_enabled") and target._requires_grad
        outs = _flat_tensors(result)
        mutated = [t for t in tensors_in if t._vc.version != before[id(t)]]
        for m in mutated:         # (some public calls bump the version after their op returns: copy_)
            entry = call.values.get(id(m))
            if entry is not None and entry[1] is m and entry[0] in self.new_values:
                call.values[id(m)] = (entry[0], m, m._vc.version)
        if not outs and not mutated:
            if result is not None and tensors_in and name not in _METADATA and not isinstance(result, (
                    type, _dtype_type())):
                self.graph_break(f"{name} returns a Python value ({type(result).__name__}) computed from tensors")
            return
        if call.unsupported is None and all(self._written(m, call.values) for m in mutated) and all(
                id(t) in call.values or self.resolve(t, call) is not None for t in outs):
            for node in call.nodes:              # the aten ops are the whole of the call: keep them
                node.meta.setdefault("source_fn", name)
                self.graph.nodes.append(node)
            self.values.update(call.values)
            return
        # keep the call whole: one node that runs the public function (an eager island)
        if any(not any(m is o for o in outs) for m in mutated):
            self.graph_break(f"{name} changes a tensor in place that it does not return")
            return
        targs = self.template((args, kwargs), versions=before)
        if targs is None:
            return
        where = user_frame()
        node = self.graph.call_function(func, targs[0], targs[1], name=name.replace("Tensor.", ""), meta={
            "island": True, "stack": where, "grad_enabled": _state.enabled,
            "mutates": tuple(self.values[id(m)][0] for m in mutated),
            "why": call.unsupported or ("changes its input in place" if mutated else "not on the dispatch seam yet")})
        for k, t in enumerate(outs):
            item = self.graph.call_function(operator.getitem, (node, k), name=f"{node.name}_{k}" if len(outs) > 1
                                            else node.name + "_out", meta=_meta(t))
            item.meta["example"] = t
            self.values[id(t)] = (item, t, t._vc.version)
        node.meta["example_outputs"] = outs

    def _written(self, t, values):
        """Whether the in-place change of ``t`` was captured: ``values`` holds the node of its new value."""
        entry = values.get(id(t))
        return entry is not None and entry[1] is t and entry[2] == t._vc.version and entry[0] in self.new_values

    # -- the op level ------------------------------------------------------------------------
    def on_op(self, op, args, kwargs):
        if self.paused:
            return op(*args, **kwargs)
        call = self.call
        tensors_in = _flat_tensors((args, kwargs))
        before = {id(t): t._vc.version for t in tensors_in}
        if op._mutates:
            return self._in_place(op, args, kwargs, call, before)
        result = op(*args, **kwargs)
        why = None
        several = op._returns_tuple and isinstance(result, tuple) and all(isinstance(t, Tensor) for t in result)
        if op._list_positions or op._mutates or op._returns_list or (op._returns_tuple and not several):
            why = f"aten.{op.__name__} (lists, several outputs or in place) is not captured yet"
        if why is not None:
            if call is not None:
                call.unsupported = call.unsupported or why
            else:
                self.graph_break(why)
            return result
        targs = self.template((args, kwargs), inside=call, versions=before)
        if targs is None:
            return result
        if several:      # one node for the op, whose value is the tuple, and one getitem node per output
            meta = {"example_outputs": result, "stack": user_frame()}
        else:
            meta = _meta(result)
            meta["example"] = result
            meta["stack"] = user_frame()
        node = Node(self.graph, self.graph._unique(op._schema.name), "call_function", op, targs[0], targs[1], meta)
        made = [node]
        outputs = [(node, result)]
        if several:
            outputs = []
            for k, t in enumerate(result):
                item_meta = _meta(t)
                item_meta["example"] = t
                item = Node(self.graph, self.graph._unique(f"{node.name}_{k}"), "call_function", operator.getitem,
                            (node, k), {}, item_meta)
                made.append(item)
                outputs.append((item, t))
        nodes, values = (call.nodes, call.values) if call is not None else (self.graph.nodes, self.values)
        nodes.extend(made)
        for n, t in outputs:
            values[id(t)] = (n, t, t._vc.version)
        return result

    def _in_place(self, op, args, kwargs, call, before):
        """An op that writes its first argument (``add_``, ``mul_``, ``addcdiv_``, ``copy_`` ...), captured
        as torch's functionalization does: a node computes the new value with the op's out-of-place
        twin (``add``), every later read of the tensor reads that node, and a tensor the function was
        given (a parameter, a buffer, an argument) is written back when the graph has run
        (``finish``). The capture checks, here, that the twin gives the written tensor's very bits and
        layout, and that no other tensor it knows shares the memory (a view would miss the write)."""
        target = args[0] if args and isinstance(args[0], Tensor) else None
        functional = op._functional
        copy = op._schema.name == "copy_"
        known = (self.values,) + ((call.values,) if call is not None else ())
        why = None
        if target is None or op._list_positions or op._returns_list or (functional is None and not copy):
            why = f"aten.{op.__name__} (in place, no out-of-place twin) is not captured yet"
        elif any(e[1] is not target and e[1]._vc is target._vc for table in known for e in table.values()):
            why = f"aten.{op.__name__} writes a tensor that shares its memory with another the graph reads (a view)"
        new = functional(*args, **kwargs) if why is None and not copy else None
        result = op(*args, **kwargs)
        if why is None:
            if copy:
                new = args[1] if len(args) > 1 else kwargs.get("src")
                if not isinstance(new, Tensor) or new is target:
                    why = "aten.copy_ of a tensor into itself or of a non-tensor"
            if why is None and not (new._data.shape == target._data.shape and new._data.dtype == target._data.dtype
                                    and new._data.strides == target._data.strides
                                    and new._data.tobytes() == target._data.tobytes()):
                why = f"aten.{op.__name__}: its out-of-place twin does not give the written tensor's bits and layout"
        targs = self.template((args, kwargs), inside=call, versions=before) if why is None else None
        if targs is None:
            why = why or f"aten.{op.__name__} reads a tensor the capture does not know"
            if call is not None:
                call.unsupported = call.unsupported or why
            else:
                self.graph_break(why)
            return result
        nodes, values = (call.nodes, call.values) if call is not None else (self.graph.nodes, self.values)
        old = next((table[id(target)] for table in reversed(known) if id(target) in table
                    and table[id(target)][1] is target), None)
        if copy:
            node = targs[0][1] if len(args) > 1 else targs[1]["src"]
            if not isinstance(node, Node):
                node = self.resolve(new, call)
        else:
            meta = _meta(target)
            meta["stack"] = user_frame()
            # autograd records the write after the op returns: _finish_call reads requires_grad then
            # (grad mode as the public call found it: below autograd, the kernels run with it off)
            meta["inplace_of"] = target
            meta["grad_enabled"] = call.grad_enabled if call is not None else _state.enabled
            meta["requires_grad"] = meta["grad_enabled"] and any(t._requires_grad
                                                                 for t in _flat_tensors((args, kwargs)))
            node = Node(self.graph, self.graph._unique(functional._schema.name), "call_function", functional,
                        targs[0], targs[1], meta)
            nodes.append(node)
        if old is not None and old[0] is not node and "overwritten" not in old[0].meta:
            # the tensor's value before the write: a backward formula that saved it (exp's result, mul's
            # input) reads what eager's autograd would find changed -- eager raises there, so does the
            # compiled backward (codegen); its message is eager's, versions as at capture
            creator = target._grad_fn
            old[0].meta["overwritten"] = {
                "by": node, "expected": old[2], "tensor": target, "type": target.type(), "shape": list(target.shape),
                "creator": None if creator is None else _short_name(creator)}
        values[id(target)] = (node, target, target._vc.version)
        self.written_vcs.add(id(target._vc))
        self.new_values.add(node)
        return result

    # -- the end -----------------------------------------------------------------------------
    def finish(self, result):
        """Close the graph on ``result``; returns the output template (None after a break)."""
        if not self.broken:
            for node, source in self.inputs:
                t = source[-1]
                if t._vc.version != node.meta["version"] and not self._written(t, self.values) \
                        and id(t) not in self.side_touched:
                    self.graph_break(f"the function changed its input {node.name} in place (an optimizer step, a "
                                     "buffer update): the graph cannot hold it")
                    self.replayable = False      # (a call the graph holds did it: run the whole call eagerly)
                    break
        out = self.template(result) if not self.broken else None
        if self.broken:
            self._close_graph()
            self._close_segments(result)
            return None
        written = self._write_backs()
        self.mutations.append(written)
        # the graph also returns what the side effects set (`p.grad = v`, v made by the graph)
        handed = []
        for _, targs, _ in self.side_effects:
            for_each_node(targs, handed.append)
        extra = tuple(new for _, new, _, _ in written) + tuple(dict.fromkeys(handed))
        self.graph.output((out, extra) if extra else out)
        self._finish_nodes()
        self._prune(written)
        return out

    def _write_backs(self):
        """The inputs of the current graph that it changed in place: ``(placeholder, node of the new
        value, how many in-place ops wrote it -- the version bumps eager made --, the last op's name)``.
        The graph returns the new values; whoever runs it copies each into its input's memory."""
        written = []
        for node, source in self.inputs:
            t = source[-1]
            entry = self.values.get(id(t))
            if entry is not None and entry[1] is t and entry[0] is not node and self._written(t, self.values):
                written.append((node, entry[0], t._vc.version - node.meta["version"], t._vc.last_op))
                node.meta["written_bumps"] = written[-1][2]      # (the version a saved input then has: codegen)
        return written

    def _close_segments(self, result):
        """After a break: give each graph its outputs -- the values of the calls it holds that anything
        outside it reads: a call the graph does not hold, a later graph, the function's result. (What
        only the graph's own calls read is handed to Python as a stand-in, see replay.py.)"""
        needed = set()
        held = set()
        for rec in self.records:
            _refs(rec.args, needed if rec.out_nodes is None else held)
        _refs(self.ref_template(result), needed)
        for _, inputs in self.closed:
            needed.update(("call", s[1], s[2]) for _, s in inputs if s[0] == "call")
        # a tensor no public call made (an "obj" ref) is a closure's, or was made by code the function
        # mode does not see (a method off the seam, a NumPy round trip), which may read any value: then
        # every value is kept (no stand-ins)
        keep_all = any(key[0] == "obj" for key in needed | held)
        outputs = [[] for _ in self.closed]
        for k, rec in enumerate(self.records):
            if rec.out_nodes is not None:
                for j, node in enumerate(rec.out_nodes):
                    if (keep_all or ("call", k, j) in needed) and node.op != "placeholder" \
                            and node not in outputs[rec.graph]:
                        outputs[rec.graph].append(node)
        for (graph, inputs), outs, written in zip(self.closed, outputs, self.mutations):
            outs += [new for _, new, _, _ in written if new not in outs and new.op != "placeholder"]
            graph.output(tuple(outs))
            self.graph, self.inputs = graph, inputs
            self._finish_nodes()
            self._prune(written)
            inputs[:] = self.inputs

    def _finish_nodes(self):
        for n in self.graph.nodes:     # autograd recorded the nodes after the ops returned: read it now,
            if n.meta.pop("inplace_of", None) is not None:      # then let the capture run's values go
                n.meta.pop("grad_enabled")
            overwritten = n.meta.get("overwritten")
            if overwritten is not None and "tensor" in overwritten:     # (its version, last op and line at the end)
                t = overwritten.pop("tensor")
                overwritten.update(now=t._vc.version, last_op=t._vc.last_op, where=t._vc.where)
            if "example" in n.meta:
                n.meta["requires_grad"] = n.meta.pop("example")._requires_grad
            if "example_outputs" in n.meta:
                outs = n.meta.pop("example_outputs")
                n.meta["num_outputs"] = len(outs)
                if not n.meta.get("island"):       # an aten op with several outputs
                    n.meta["requires_grad"] = any(t._requires_grad for t in outs)

    def _prune(self, written=()):
        """Drop aten nodes and inputs nothing uses (eager islands stay: they may draw random numbers)."""
        used = {ph for ph, _, _, _ in written}       # an input written back into stays one
        for n in reversed(self.graph.nodes):
            if n.op == "output" or n in used or n.meta.get("island"):
                used.update(n.all_input_nodes)
                used.add(n)
        # every output of an op with several that stays (a backward formula may read one nothing else does)
        used.update(n for n in self.graph.nodes if n.target is operator.getitem and n.args[0] in used)
        self.graph.nodes = [n for n in self.graph.nodes if n in used]
        self.inputs = [(n, s) for n, s in self.inputs if n in used]


class _FunctionSide(TorchFunctionMode):
    def __init__(self, capture):
        self.capture = capture

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return self.capture.on_function(func, args, kwargs or {})


class _DispatchSide(TorchDispatchMode):
    def __init__(self, capture):
        self.capture = capture

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return self.capture.on_op(func, args, kwargs or {})


def capture(fn, args, kwargs, modules=(), fullgraph=False):
    """Run ``fn(*args, **kwargs)`` eagerly under capture. Returns (its result, the Capture)."""
    from ..nn.modules.module import register_module_forward_pre_hook
    owner = getattr(fn, "__self__", None)      # torch.compile(opt.step), torch.compile(model.forward)
    cap = Capture(args, kwargs, tuple(modules) + ((owner,) if owner is not None else ()), fullgraph)
    handle = register_module_forward_pre_hook(lambda module, inputs: cap.module_called(module))
    _active.capture = cap
    try:
        with _FunctionSide(cap), _DispatchSide(cap):
            result = fn(*args, **kwargs)
        cap.output = cap.finish(result)
    finally:
        _active.capture = None
        handle.remove()
    return result, cap


def _func_name(func):
    """``Tensor.item``, ``cross_entropy``; a property's getter or setter as ``Tensor.grad.__get__``."""
    owner = getattr(func, "__self__", None)
    if isinstance(owner, property):
        accessor = owner.fget if func.__name__ == "__get__" else owner.fset
        return f"{getattr(accessor, '__qualname__', '?')}.{func.__name__}"
    return getattr(func, "__qualname__", getattr(func, "__name__", repr(func)))


def _flat_tensors(value):
    found = []

    def walk(v):
        if isinstance(v, Tensor):
            if not any(v is f for f in found):
                found.append(v)
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
    walk(value)
    return found


def _short_name(node):
    from ..autograd.graph import _short_name as short
    return short(node)


def _is_parameter(t):
    from ..nn.parameter import Parameter
    return isinstance(t, Parameter)


def _dtype_type():
    from .._dtype import dtype
    return dtype


def _meta(t):
    return {"shape": tuple(t.shape), "dtype": t.dtype, "requires_grad": t._requires_grad,
            "contiguous": bool(getattr(t._data, "flags", None) is not None and t._data.flags.c_contiguous),
            "strides": t.stride(),                # (a formula that lays its result out as its input: mm's)
            "device": t.device.type}      # (jit.py's loops take NumPy's arrays only: 'cpu')


__all__ = ["capture", "Capture", "GraphBreak", "CallRecord", "Ref", "tracing", "compiling"]
