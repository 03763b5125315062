"""torch._dynamo.explain(fn)(*args): capture ``fn`` once and say what came of it -- how many
graphs, how many breaks, and for each break the reason and the user's ``file:line``."""
from ..fx.graph_module import GraphModule
from . import capture as _capture


class ExplainOutput:
    def __init__(self, graphs, break_reasons, compile_time, guards=None):
        self.graphs = [GraphModule({}, g) for g in graphs]
        self.graph_count = len(graphs)
        self.graph_break_count = len(break_reasons)
        self.break_reasons = break_reasons
        self.ops_per_graph = [[n.target for n in g.nodes if n.op == "call_function"] for g in graphs]
        self.op_count = sum(len(ops) for ops in self.ops_per_graph)
        self.out_guards = guards
        self.compile_times = f"capture: {compile_time:.4f} s"

    def __str__(self):
        lines = [f"Graph Count: {self.graph_count}", f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}", "Break Reasons:"]
        for i, b in enumerate(self.break_reasons, 1):
            lines += [f"  Break Reason {i}:", f"    Reason: {b.reason}", "    User Stack:",
                      f"      {b.user_stack[0]}"]
        lines.append("Ops per Graph:")
        for i, ops in enumerate(self.ops_per_graph, 1):
            lines.append(f"  Ops {i}:")
            lines += [f"    {_name(op)}" for op in ops]
        if self.out_guards is not None:
            lines.append("Out Guards:")
            lines += ["  " + line for line in self.out_guards.source.splitlines()]
        lines.append(f"Compile Times: {self.compile_times}")
        return "\n".join(lines) + "\n"

    __repr__ = __str__


def _name(op):
    from ..fx.graph import _target_name
    return _target_name(op)


def explain(f, *extra_args, **extra_kwargs):
    """``explain(fn)(*args, **kwargs)`` -> :class:`ExplainOutput` (the call runs ``fn`` once, eagerly)."""
    import time
    from ..nn.modules.module import Module
    from .guards import Guards

    def inner(*args, **kwargs):
        start = time.perf_counter()
        fn, modules = (f.__call__, (f,)) if isinstance(f, Module) else (getattr(f, "_fn", f), ())
        _, cap = _capture.capture(fn, args, kwargs, modules)
        graphs = list(cap.segments) + ([cap.graph] if not cap.broken else [])
        guards = Guards(cap, args, kwargs) if not cap.broken else None
        return ExplainOutput(graphs, cap.breaks, time.perf_counter() - start, guards)
    if extra_args or extra_kwargs:
        return inner(*extra_args, **extra_kwargs)
    return inner
