"""What ``torch.compile`` returns, and what happens on each call.

A call of a compiled function:

1. looks for a cache entry whose guards hold (``guards.py``) and runs it: either the generated
   code (``codegen.py``), wrapped as one ``CompiledFunctionBackward`` node when autograd is needed,
   or plain eager Python when capturing these inputs gave a graph break;
2. otherwise captures (``capture.py``): runs the function once eagerly under the capture modes,
   builds the graph, its guards and its code, and adds the entry -- up to
   ``config.recompile_limit`` entries per function; past that it warns once and runs eagerly.

``OptimizedModule`` is what ``torch.compile(module)`` returns: a Module holding the original as
``_orig_mod`` (so its state_dict keys start with ``_orig_mod.``) whose calls are compiled.
"""
import functools
import time
import warnings


from .._tensor import _wrap
from ..fx.graph import for_each_node
from ..fx.graph_module import GraphModule
from ..nn.modules.module import Module
from . import capture as _capture, codegen, config, exc, replay as _replay
from .writeback import input_reader, write_back
from .guards import Guards
from ._logging import log

_all_compiled = []     # every compiled callable, so that reset() can empty their caches


class CacheEntry:
    """One specialisation: guards, and either the compiled graph or 'run eagerly' (a break)."""

    def __init__(self, cap, args, kwargs, backend, compile_time):
        self.guards = Guards(cap, args, kwargs)
        self.breaks = cap.breaks
        self.compile_time = compile_time
        generated = backend in ("inductor", "glass", "aot_eager", None)
        # what the graph changed in place in its inputs, written back after it runs (generated code only:
        # a GraphModule or a user's backend returns just the function's outputs, so the call runs eagerly)
        self.mutations = cap.mutations[-1] if cap.mutations and not cap.broken else []
        # zero_grad(), `p.grad = v`: Python side effects, called again after the graph (capture._side_effect)
        self.side_effects = [(func, targs) for func, targs, _ in cap.side_effects] if not cap.broken else []
        self.graph = None if cap.broken or ((self.mutations or self.side_effects) and not generated) else cap.graph
        self.code = None
        # a broken capture: its graphs compiled, the rest of the function's Python replayed around them
        self.replay = _replay.Replay(cap) if cap.broken and cap.replayable and backend in (
            "inductor", "glass", "aot_eager", None) else None
        if self.graph is not None:
            self.gm = GraphModule({}, self.graph)
            self.inputs = cap.inputs
            self.output = cap.output
            # (a graph none of whose outputs needs a gradient -- an optimizer step -- runs without autograd)
            self.train = any(n.meta.get("requires_grad") for n, _ in cap.inputs) and cap.grad_enabled and any(
                n.meta.get("requires_grad") for n in _out_nodes(self.graph))
            if backend in ("inductor", "glass", "aot_eager", None):
                self.code = codegen.GeneratedCode(self.graph, self.train)
                self._run = self._run_generated
            elif backend == "eager":
                self._run = self._run_graph_module
            else:                                   # a user's backend: gm, example inputs -> callable
                compiled = backend(self.gm, [s[-1] for _, s in cap.inputs])
                self._run = lambda tensors: _as_tuple(compiled(*tensors))

    def prepare(self):
        """Generate the input reader once: ``lambda args, kwargs: [args[0], _p0, _p1._grad, ...]``."""
        ns, parts = {}, []
        for k, (_, s) in enumerate(self.inputs):
            parts.append(input_reader(s, ns, f"_p{k}"))
        self._reader = eval(f"lambda args, kwargs: [{', '.join(parts)}]", ns)
        index = {n: k for k, (n, _) in enumerate(self.inputs)}
        self._write_backs = [(index[ph], new, bumps, op) for ph, new, bumps, op in self.mutations]

    def __call__(self, args, kwargs):
        tensors = self._reader(args, kwargs)
        outs = self._run(tensors)
        env = {n: t for (n, _), t in zip(self.inputs, tensors)}
        produced = self.code.outputs if self.code is not None else _out_nodes(self.graph)
        env.update(zip(produced, outs))
        for k, new, bumps, op in self._write_backs:
            write_back(tensors[k], env[new], bumps, op)
        for func, targs in self.side_effects:       # (torch's dynamo replays them after its graph too)
            a, kw = _fill_side_effect(targs, env, args, kwargs)
            func(*a, **kw)
        return codegen._fill(self.output, env)

    def _run_generated(self, tensors):
        if self.train:
            return codegen.CompiledFunction.apply(self.code, *tensors)
        return tuple(_wrap(a) for a in self.code.forward(*[t._data for t in tensors]))

    def _run_graph_module(self, tensors):
        return _as_tuple(self.gm(*tensors))


def _fill_side_effect(value, env, args, kwargs):
    """A side effect's arguments at run time: a graph value from ``env``, a tensor that existed before
    the call read from the call's arguments or bound (``capture.Bound``), anything else as it is."""
    if isinstance(value, _capture.Bound):
        return value.read(args, kwargs)
    if type(value) in (tuple, list):
        return type(value)(_fill_side_effect(v, env, args, kwargs) for v in value)
    if type(value) is dict:
        return {k: _fill_side_effect(v, env, args, kwargs) for k, v in value.items()}
    return codegen._fill(value, env)


def _as_tuple(value):
    return value if isinstance(value, tuple) else (value,)


def _out_nodes(graph):
    found = []
    for_each_node(graph.nodes[-1].args[0], found.append)
    return [n for n in dict.fromkeys(found) if n.op != "placeholder"]


class CompiledFunction:
    """``torch.compile(fn)``: call it as ``fn``."""

    def __init__(self, fn, fullgraph=False, dynamic=None, backend="inductor", mode=None, modules=()):
        self._fn = fn
        self.fullgraph, self.dynamic, self.backend, self.mode = fullgraph, dynamic, backend, mode
        self._modules = modules
        self.cache = []
        self._warned_limit = False
        functools.update_wrapper(self, fn)
        _all_compiled.append(self)

    def __get__(self, obj, objtype=None):          # a compiled method binds as a function does
        return self if obj is None else functools.partial(self, obj)

    def __call__(self, *args, **kwargs):
        if _capture.tracing():                      # inside another capture: its ops are captured there
            return self._fn(*args, **kwargs)
        reasons = []
        for entry in self.cache:
            failed = entry.guards.check(args, kwargs)
            if failed is None:
                if entry.graph is not None:
                    return entry(args, kwargs)
                return self._fn(*args, **kwargs) if entry.replay is None else entry.replay(self._fn, args, kwargs)
            reasons.append(failed)
        if len(self.cache) >= config.recompile_limit:
            if not self._warned_limit:
                self._warned_limit = True
                warnings.warn(f"torch._dynamo hit config.recompile_limit ({config.recompile_limit})\n"
                              f"   function: '{getattr(self._fn, '__name__', self._fn)}'\n"
                              f"   last reason: {reasons[-1] if reasons else ''}\n"
                              "To log all recompilation reasons, use TORCH_LOGS=\"recompiles\".")
            return self._fn(*args, **kwargs)
        if reasons:
            log("recompiles", f"Recompiling function {getattr(self._fn, '__name__', self._fn)}\n"
                              f"    triggered by the following guard failure(s):\n"
                              + "".join(f"    - {r}\n" for r in reasons))
        return self._compile_and_run(args, kwargs)

    def _compile_and_run(self, args, kwargs):
        start = time.perf_counter()
        result, cap = _capture.capture(self._fn, args, kwargs, self._modules, self.fullgraph)
        entry = CacheEntry(cap, args, kwargs, self.backend, 0.0)
        if entry.graph is not None:
            entry.prepare()
        entry.compile_time = time.perf_counter() - start
        self.cache.append(entry)
        for b in cap.breaks:
            log("graph_breaks", f"Graph break: {b.reason}\n    at {b.user_stack[0]}")
        if entry.graph is not None:
            log("graph_code", f"TRACED GRAPH\n{entry.gm.print_readable(print_output=False)}")
            if entry.code is not None:
                log("graph_code", f"GENERATED FORWARD\n{entry.code.forward_source}")
                if entry.code.backward_source:
                    log("graph_code", f"GENERATED BACKWARD\n{entry.code.backward_source}")
        elif entry.replay is not None and entry.replay.code:
            log("graph_code", f"GENERATED CODE OF THE GRAPHS BETWEEN BREAKS (replayed)\n{entry.replay.code}")
        log("guards", f"GUARDS\n{entry.guards.source}")
        return result

    # -- what the glass shows ------------------------------------------------------------------
    @property
    def graph(self):
        """The last captured graph (None if the last capture broke)."""
        return self.cache[-1].graph if self.cache else None

    @property
    def code(self):
        """The generated source of the last compiled graph: forward, then backward."""
        for entry in reversed(self.cache):
            if entry.code is not None:
                return entry.code.forward_source + ("\n" + entry.code.backward_source
                                                    if entry.code.backward_source else "")
            if entry.replay is not None and entry.replay.code:
                return entry.replay.code
        return None

    def _reset(self):
        self.cache = []
        self._warned_limit = False


class OptimizedModule(Module):
    """``torch.compile(module)``: the module in ``_orig_mod``, its calls compiled."""

    def __init__(self, mod, compiled_call):
        super().__init__()
        self._orig_mod = mod
        object.__setattr__(self, "_compiled_call", compiled_call)
        self.training = mod.training

    def forward(self, *args, **kwargs):
        return self._compiled_call(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._modules["_orig_mod"], name)

    @property
    def graph(self):
        return self._compiled_call.graph

    @property
    def code(self):
        return self._compiled_call.code


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,
            disable=False):
    """torch.compile: capture ``model`` (a function or Module) into a graph on its first call and
    run the generated code from then on (see ``glasstorch/_dynamo``)."""
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                 options=options, disable=disable)
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if mode not in (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"):
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: default, reduce-overhead, max-autotune, "
                           "max-autotune-no-cudagraphs")
    if isinstance(backend, str) and backend not in ("inductor", "eager", "aot_eager", "glass"):
        raise exc.InvalidBackend(f"Invalid backend: '{backend}', see `torch._dynamo.list_backends()` for available "
                                 "backends.")
    if not callable(model):
        raise RuntimeError("torch.compile: the argument must be a function or an nn.Module")
    if disable:
        return model
    if isinstance(model, Module):
        return OptimizedModule(model, CompiledFunction(model.__call__, fullgraph, dynamic, backend, mode,
                                                       modules=(model,)))
    return CompiledFunction(model, fullgraph, dynamic, backend, mode)


def disable(fn=None, recursive=True, *, reason=None):
    """torch.compiler.disable: ``fn`` always runs eagerly; called inside a compiled function it
    breaks the graph there."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)

    @functools.wraps(fn)
    def run_eagerly(*args, **kwargs):
        cap = _capture.current()
        if cap is not None:
            cap.graph_break(f"call to a function marked torch.compiler.disable: "
                            f"{getattr(fn, '__qualname__', fn)}" + (f" ({reason})" if reason else ""))
            cap.paused += 1                        # its ops are not captured
            try:
                return fn(*args, **kwargs)
            finally:
                cap.paused -= 1
        return fn(*args, **kwargs)
    run_eagerly._torchdynamo_disable = True
    return run_eagerly


def reset():
    """torch._dynamo.reset / torch.compiler.reset: forget every compiled graph (the next call of
    each compiled function captures again)."""
    for c in _all_compiled:
        c._reset()


def is_compiling():
    return _capture.compiling()

