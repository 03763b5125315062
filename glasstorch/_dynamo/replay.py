"""Running a function whose capture broke: its graphs compiled, the Python between them as it is.

torch's Dynamo, at a graph break, compiles the graph before the break, runs the Python that broke
it, and resumes in a new frame compiled from the bytecode after it. glasstorch does not read
bytecode, so it cannot jump into the middle of a function. It *replays* the function instead:

* the user's Python runs again, all of it, under a function mode that sees each public call
  (``F.linear``, ``Tensor.tanh``, ``Tensor.backward`` ...) -- the calls the capture run wrote down,
  one :class:`~glasstorch._dynamo.capture.CallRecord` each, in order;
* a call that one of the captured graphs holds is not run: at the first such call of a graph, the
  graph's generated code runs (forward, and one ``CompiledFunctionBackward`` node for autograd),
  and each call of the graph then gets its result from there at the cost of a lookup;
* every other call (the one that broke the graph: ``loss.backward()``, ``.item()``, ``print``, an
  optimizer's in-place step; and metadata reads like ``.shape``) runs as it is.

So a training step ``zero_grad(); loss = loss_fn(model(x), y); loss.backward(); opt.step()``
compiled as one function runs its forward and loss as generated code, and its ``backward()`` goes
through the compiled backward, while ``zero_grad``/``step`` run as Python.

Replay hands back a graph's value only when the call is the *same* call as at capture: the same
function, the same Python arguments, and the very tensors the capture saw there (a graph input, or
what an earlier call returned), unchanged since the graph read them (version counters). Anything
else -- Python took another path (a branch on ``.item()``'s value), a tensor changed in place in
between, an earlier call returned a tensor of another shape -- *diverges*: that call and every
later one run eagerly, from the values handed back so far, which are eager's own. The results are
eager's either way.

Values that no code outside their graph reads (``h`` in ``h = x @ w; y = h.tanh()`` when only ``y``
leaves the graph) are handed to Python as *stand-ins*: tensors of the right shape, dtype and
``requires_grad`` whose data is never computed (a :class:`StandInArray`, which refuses any
computation). Should anything compute with one (which the capture said nothing does), replay raises
instead. Where the function handles a tensor no public call made (code the mode cannot see made it,
and may read anything), every value is kept and there are no stand-ins.

An optimizer's ``step()`` that a graph holds whole is skipped whole: its wrapper hands it to
:meth:`_Run.optimizer_step`, which runs the graph instead of the step's Python (capture.py,
``Capture.optimizer_step``, marks such steps).

After the last call a graph holds, the mode retires (``TorchFunctionMode._retired``): the rest of
the function -- typically ``backward()`` and the optimizer step -- runs unwatched, as eagerly.
"""
import numpy as np

from .._tensor import _wrap
from ..fx.graph import for_each_node
from ..overrides import TorchFunctionMode
from . import codegen
from .capture import Ref, _active, _flat_tensors, _refs
from .guards import alias_pattern
from .writeback import input_reader, write_back


class Segment:
    """One graph of a broken capture, compiled: its inputs (where to find each at run time), its
    generated code, and what its calls hand back."""

    def __init__(self, graph, inputs, written=()):
        self.graph = graph
        self.inputs = inputs          # (placeholder, source): ("arg", path, t) | ("free", t) | ("call", k, j, t)
        self.written = written        # (placeholder, node of its new value, bumps, op): written back (capture.py)
        found = []
        for_each_node(graph.nodes[-1].args[0], found.append)
        # (a graph none of whose outputs needs a gradient -- an optimizer step -- runs without autograd)
        self.train = any(n.meta.get("requires_grad") for n, _ in inputs) and any(
            n.meta.get("requires_grad") for n in found)
        self.code = codegen.GeneratedCode(graph, self.train) if any(
            n.op == "call_function" for n in graph.nodes) else None
        self.outputs = self.code.outputs if self.code is not None else []
        # a call's result found at run time from one of these: an output, an input, or a stand-in
        self._standin = {}
        self._readers = {}
        for node, source in inputs:
            if source[0] in ("arg", "grad"):
                namespace = {}
                self._readers[node] = eval(f"lambda args, kwargs: {input_reader(source, namespace, '_owner')}",
                                           namespace)
        # ("call") inputs: checked at run time to be what the code was generated for
        self.checked = [(node, (tuple(node.meta["shape"]), node.meta["dtype"].numpy_dtype,
                                bool(node.meta.get("contiguous")), bool(node.meta.get("requires_grad"))))
                        for node, source in inputs if source[0] in ("call", "grad")]
        # a graph that writes inputs: the other inputs must share memory with them as at capture (guards.py)
        index = {node: k for k, (node, _) in enumerate(inputs)}
        self.alias_targets = tuple(index[ph] for ph, _, _, _ in written)
        self.alias_expected = alias_pattern([source[-1] for _, source in inputs], self.alias_targets) \
            if written else None

    def standin(self, node):
        """A tensor with ``node``'s shape, dtype and requires_grad whose data is never computed: a
        :class:`StandInArray` (one zero, broadcast) that refuses any computation."""
        base = self._standin.get(node)
        if base is None:
            base = self._standin[node] = np.broadcast_to(np.zeros((), node.meta["dtype"].numpy_dtype),
                                                         tuple(node.meta["shape"])).view(StandInArray)
        t = _wrap(base)
        t._requires_grad = bool(node.meta.get("requires_grad"))
        return t


_STANDIN_ERROR = ("torch.compile (glasstorch replay): a value the compiled graph did not keep was read ({}); the "
                  "function did not read it outside its graph when it was captured, so it took another path now "
                  "(a Python value the guards do not watch?); call torch.compiler.reset() or "
                  "torch.compiler.disable the function")


class StandInArray(np.ndarray):
    """The data of a stand-in: shape, dtype and strides are there; any computation with it raises
    (NumPy's ufuncs and functions ask ``__array_ufunc__``/``__array_function__`` first)."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        raise RuntimeError(_STANDIN_ERROR.format(f"numpy.{ufunc.__name__}"))

    def __array_function__(self, func, types, args, kwargs):
        raise RuntimeError(_STANDIN_ERROR.format(f"numpy.{func.__name__}"))

    def copy(self, order="C"):
        raise RuntimeError(_STANDIN_ERROR.format("a copy"))

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError(_STANDIN_ERROR.format("its data"))

    def tolist(self):
        raise RuntimeError(_STANDIN_ERROR.format("tolist"))

    def item(self, *args):
        raise RuntimeError(_STANDIN_ERROR.format("item"))


class Replay:
    """The compiled graphs of a broken capture and the records of its calls."""

    def __init__(self, cap):
        self.records = cap.records
        self.segments = [Segment(graph, inputs, written) for (graph, inputs), written in zip(cap.closed, cap.mutations)]
        self.breaks = cap.breaks
        # the calls whose results a later call (its matcher, if a graph holds it), a graph or the result reads by ("call", k, j)
        self.kept_calls = set()
        for segment in self.segments:
            self.kept_calls.update(s[1] for _, s in segment.inputs if s[0] == "call")
        read = set()
        for rec in self.records:
            _refs(rec.args, read)
        self.kept_calls.update(key[1] for key in read if key[0] == "call")
        self.kept_calls.update(k for k, rec in enumerate(self.records) if rec.out_nodes is not None)
        # optimizer steps a graph holds whole (capture.optimizer_step): k0 -> (k1, optimizer), kept where nothing
        # outside the step reads what its calls returned (replay skips them)
        outside = set()
        for k, rec in enumerate(self.records):
            keys = set()
            _refs(rec.args, keys)
            outside.update((key[1], k) for key in keys if key[0] == "call")
        for segment in self.segments:
            outside.update((s[1], None) for _, s in segment.inputs if s[0] == "call")
        self.step_ranges = {k0: (k1, opt) for k0, (k1, opt) in cap.step_ranges.items()
                            if not any(k0 <= made < k1 and not (reader is not None and k0 <= reader < k1)
                                       for made, reader in outside)}
        # the last call a graph holds: after it, replay retires its mode (the rest runs unwatched)
        self.last_held = max((k for k, rec in enumerate(self.records) if rec.out_nodes is not None), default=-1)
        self._matchers = {}

    def matcher(self, k):
        """The check that call ``k`` is the captured one, as generated code (see :func:`_matcher_source`)."""
        m = self._matchers.get(k)
        if m is None:
            namespace = {}
            source = _matcher_source(self.records[k].args, namespace)
            m = self._matchers[k] = eval(source, namespace)
        return m

    def arg_reader(self, path):
        reader = self._arg_readers.get(path)
        if reader is None:
            reader = self._arg_readers[path] = eval(f"lambda args, kwargs: {path}")
        return reader

    def __call__(self, fn, args, kwargs):
        state = _Run(self, args, kwargs)
        # (the Python runs again as when it was captured: torch.compiler.is_compiling() answers True)
        _active.replaying = getattr(_active, "replaying", 0) + 1
        outer, _active.run = getattr(_active, "run", None), state
        try:
            with _ReplayMode(state):
                return fn(*args, **kwargs)
        finally:
            _active.replaying -= 1
            _active.run = outer

    @property
    def code(self):
        compiled = [seg.code for seg in self.segments if seg.code is not None]
        return "\n".join(f"# graph {i + 1} of {len(compiled)}\n" + code.forward_source
                         + ("\n" + code.backward_source if code.backward_source else "")
                         for i, code in enumerate(compiled))


def _matcher_source(template, namespace):
    """``lambda a, kw, args, kwargs, R, V: <condition>``: the call's arguments ``(a, kw)`` are the
    captured ones -- the same structure, equal Python values, and the very tensors (found in the
    function's ``args``/``kwargs``, bound objects, or ``R``, what earlier calls returned) unchanged
    since their graph read them (``V``, their versions then)."""
    conditions = []

    def bind(obj):
        name = f"_o{len(namespace)}"
        namespace[name] = obj
        return name

    def visit(expected, expr):
        if isinstance(expected, Ref):
            kind = expected.key[0]
            if kind == "arg":
                want = expected.key[1]
            elif kind == "call":
                want = f"R[{expected.key[1]}][{expected.key[2]}]"
            else:
                want = bind(expected.key[1])
            conditions.append(f"{expr} is {want} and V.get(id({expr})) == {expr}._vc.version")
        elif type(expected) in (tuple, list):
            conditions.append(f"type({expr}) is {type(expected).__name__} and len({expr}) == {len(expected)}")
            for i, v in enumerate(expected):
                visit(v, f"{expr}[{i}]")
        elif type(expected) is dict:
            conditions.append(f"type({expr}) is dict and list({expr}) == {list(expected)!r}")
            for key, v in expected.items():
                visit(v, f"{expr}[{key!r}]")
        elif expected is None or type(expected) is bool:
            conditions.append(f"{expr} is {expected!r}")
        elif type(expected) in (int, str) or type(expected) is float and expected == expected:
            conditions.append(f"type({expr}) is {type(expected).__name__} and {expr} == {expected!r}")
        else:
            o = bind(expected)
            conditions.append(f"({expr} is {o} or type({expr}) is type({o}) and bool({expr} == {o}))")
    visit(template[0], "a")
    visit(template[1], "kw")
    return "lambda a, kw, args, kwargs, R, V: " + " and ".join(conditions or ["True"])


class _Run:
    """One call of a replayed function: which record comes next, what each call returned, the
    values each graph computed."""

    def __init__(self, replay, args, kwargs):
        self.replay, self.args, self.kwargs = replay, args, kwargs
        self.k = 0
        self.diverged = False
        self.results = {}            # k -> the tensors call k returned (or was handed back)
        self.values = {}             # segment index -> {node: tensor}
        self.versions = {}           # id(tensor) -> its version when a graph read or made it

    # -- one public call ---------------------------------------------------------------------------
    def call(self, mode, func, args, kwargs):
        k = self.k
        self.k += 1
        records = self.replay.records
        if not self.diverged:
            rec = records[k] if k < len(records) else None
            if rec is None or rec.diverge or not (rec.func is func or rec.func == func):
                self.diverged = True
            elif rec.out_nodes is not None:
                handed = self._hand_back(k, rec, args, kwargs)
                if handed is not None:
                    if k == self.replay.last_held:     # nothing left to hand back: stop watching
                        mode._retired = True
                    return handed
                self.diverged = True
        if self.diverged or k >= self.replay.last_held:
            mode._retired = True                     # (every later call runs as it is)
        return self._run(k, func, args, kwargs)

    def optimizer_step(self, opt, step, args, kwargs):
        """``opt.step()`` (its wrapper calls this, ``optim/optimizer.py``): where the capture found a graph
        that holds the whole step (its calls ``k .. end-1``), run that graph -- its writes go back into
        the parameters and the state -- and skip the step's Python; else run the step, call by call."""
        entry = self.replay.step_ranges.get(self.k)
        if self.diverged or entry is None or entry[1] is not opt or len(args) > 1 or kwargs:
            return step(*args, **kwargs)
        index = self.replay.records[self.k].graph
        if index not in self.values and self._run_segment(index) is None:
            return step(*args, **kwargs)        # (its inputs are not as captured: the calls replay one by one)
        self.k = entry[0]
        return None

    def _run(self, k, func, args, kwargs):
        result = func(*args, **kwargs)
        if k in self.replay.kept_calls:
            self.results[k] = _flat_tensors(result)
        return result

    # -- a call a graph holds --------------------------------------------------------------------
    def _hand_back(self, k, rec, args, kwargs):
        values = self.values.get(rec.graph)
        if values is None:
            values = self._run_segment(rec.graph)
            if values is None:
                return None
        try:
            if not self.replay.matcher(k)(args, kwargs, self.args, self.kwargs, self.results, self.versions):
                return None
        except (LookupError, TypeError, ValueError):     # (an argument not there, a value that does not compare)
            return None
        if rec.inplace:         # an in-place call: the graph wrote its new value back; the call returns its target
            self.results[k] = [args[0]]
            return args[0]
        outs = [values[n] for n in rec.out_nodes]
        self.results[k] = outs
        if isinstance(rec.result, int):
            return outs[0]
        return type(rec.result)(None if j is None else outs[j] for j in rec.result)

    def _run_segment(self, index):
        seg = self.replay.segments[index]
        tensors = []
        for node, source in seg.inputs:
            kind = source[0]
            if kind in ("arg", "grad"):
                t = seg._readers[node](self.args, self.kwargs)
            elif kind == "free":
                t = source[1]
            else:
                got = self.results.get(source[1])
                if got is None or len(got) <= source[2]:
                    return None
                t = got[source[2]]
            tensors.append(t)
        for node, (shape, dtype, contiguous, requires_grad) in seg.checked:
            t = tensors[next(i for i, (n, _) in enumerate(seg.inputs) if n is node)]
            if t is None:               # (a .grad that is None now)
                return None
            a = t._data
            if a.shape != shape or a.dtype != dtype or bool(a.flags.c_contiguous) != contiguous \
                    or t._requires_grad != requires_grad or type(a) is StandInArray:
                return None
        if seg.alias_expected is not None and alias_pattern(tensors, seg.alias_targets) != seg.alias_expected:
            return None                 # (inputs alias otherwise than at capture: the rest runs eagerly)
        values = {node: t for (node, _), t in zip(seg.inputs, tensors)}
        if seg.code is not None:
            if seg.train:
                outs = codegen.CompiledFunction.apply(seg.code, *tensors)
            else:
                outs = tuple(_wrap(a) for a in seg.code.forward(*[t._data for t in tensors]))
            values.update(zip(seg.outputs, outs))
        for placeholder, new, bumps, op in seg.written:     # what the graph changed in place in its inputs
            write_back(values[placeholder], values[new], bumps, op)
        for t in values.values():
            self.versions[id(t)] = t._vc.version
        self.values[index] = _Values(values, seg, self)
        return self.values[index]


class _Values(dict):
    """A graph's values by node: its inputs and outputs, and stand-ins made on first request."""

    def __init__(self, values, segment, run):
        super().__init__(values)
        self.segment, self.run = segment, run

    def __missing__(self, node):
        t = self[node] = self.segment.standin(node)
        self.run.versions[id(t)] = t._vc.version
        return t


class _ReplayMode(TorchFunctionMode):
    def __init__(self, state):
        self.state = state

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return self.state.call(self, func, args, kwargs or {})
