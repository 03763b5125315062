"""From a captured Graph to straight-line array code: the forward, and the backward derived from
the same derivative formulas the eager ops use.

The forward calls each op's kernel on arrays, one line per op, with no Tensor, Node or dispatch
in between::

    def forward(arg0, p, p_1):
        t = _k_t(p)                                  # aten.t.default
        addmm = _k_addmm(p_1, arg0, t, beta=1, alpha=1)
        ...
        return (relu,), (arg0, t, relu)              # outputs, what backward reads

The backward walks the graph in reverse; for each op whose output needs a gradient it calls the
op's formula for each input that needs one (``op.node._formula_table``, the table ``defop``
built), reduces a broadcast gradient to the input's shape (``sum_to``) exactly where the shapes
differ (known now, so the check is made once, here), and adds up the gradients of a value used
twice. Only what some formula reads is saved; everything else is freed when forward returns.

A node kept whole (an *eager island*, see capture.py) runs its public function on Tensors under
autograd and keeps that small graph; the backward calls ``autograd.grad`` on it.

Both functions are registered with ``linecache``: tracebacks show the generated lines.
"""
import linecache
import operator
import itertools

import numpy as np

from .._tensor import _wrap
from ..autograd import grad_mode
from ..autograd.engine import _sum_to
from ..autograd.function import Function
from ..fx.graph import Node, for_each_node
from . import config, jit, lowering, memory
from .memory import Stmt

_counter = itertools.count()


class _Namespace:
    """The names the generated code uses: literals where ``repr`` gives them back, else a bound
    constant ``_c<k>``."""

    def __init__(self):
        # __name__: NumPy's floating-point warnings from generated lines are silenced as from any
        # glasstorch module (glasstorch/_array); np, _addmm, _threshold_grad, _bias_grad, _bmm_grad (and jit.py's):
        # what lowered lines call
        self.values = {"_sum_to": _sum_to, "np": np, "_addmm": lowering.addmm,
                       "_threshold_grad": lowering.threshold_grad, "_jit_threshold_grad": jit.threshold_grad,
                       "_bias_grad": lowering.bias_grad, "_log_softmax_nll_grad": lowering.log_softmax_nll_grad,
                       "_jit_log_softmax_nll_grad": jit.log_softmax_nll_grad, "_jit_tanh_grad": jit.tanh_grad,
                       "_bmm_grad": lowering.bmm_grad, "_jit_addmm_relu": jit.addmm_relu,
                       "_jit_add_layer_norm": jit.add_layer_norm,
                       "__name__": "glasstorch._dynamo.generated"}
        self._ids = {}

    def bind(self, prefix, value):
        key = (prefix, id(value))
        if key not in self._ids:
            name = f"{prefix}{len(self._ids)}"
            self._ids[key] = name
            self.values[name] = value
        return self._ids[key]

    def const(self, v):
        if v is None or isinstance(v, (bool, str)) or (type(v) is int) or \
                (type(v) is float and v == v and v not in (float("inf"), float("-inf"))):
            return repr(v)
        if isinstance(v, tuple):
            return "(" + "".join(self.const(x) + ", " for x in v) + ")"
        if isinstance(v, list):
            return "[" + ", ".join(self.const(x) for x in v) + "]"
        return self.bind("_c", v)


def _arg(v, ns):
    """The source for an argument: a node's variable, or a constant."""
    if isinstance(v, Node):
        return v.name
    if isinstance(v, tuple):
        return "(" + "".join(_arg(x, ns) + ", " for x in v) + ")"
    if isinstance(v, list):
        return "[" + ", ".join(_arg(x, ns) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k!r}: {_arg(x, ns)}" for k, x in v.items()) + "}"
    return ns.const(v)


def _schema_args(node):
    """The node's arguments by schema name, those at their default included (the capture is a
    dispatch mode: it is given the others only, as torch's dispatcher gives them)."""
    op = node.target
    full = {a.name: a.default for a in op._schema.arguments if a.has_default}
    positional = [a.name for a in op._schema.arguments if not a.kwarg_only]
    full.update(zip(positional, node.args))
    full.update(node.kwargs)
    return full


def _requires_grad(v):
    return isinstance(v, Node) and bool(v.meta.get("requires_grad"))


class Island:
    """A public call kept whole: runs ``func`` on Tensors made from the arrays. With autograd, its
    inputs that need a gradient become leaves, and ``backward`` asks autograd for their grads."""

    def __init__(self, node):
        self.func = node.target
        self.name = node.name
        self.inputs = node.all_input_nodes
        self.template = (node.args, node.kwargs)
        self.grad_enabled = node.meta.get("grad_enabled", True)
        self.mutated = [any(m is i for m in node.meta.get("mutates", ())) for i in self.inputs]
        self.wants_grad = [bool(i.meta.get("requires_grad")) for i in self.inputs]
        self.n_outputs = node.meta["num_outputs"]

    def _run(self, arrays, record):
        tensors, leaves = {}, []
        for node, a, mutated, wants in zip(self.inputs, arrays, self.mutated, self.wants_grad):
            t = _wrap(a.copy() if mutated else a)
            leaf = None
            if record and wants:
                leaf = t.requires_grad_(True)
                if mutated:
                    t = t.clone()
            leaves.append(leaf)
            tensors[node] = t
        args = _fill(self.template, tensors)
        with grad_mode.set_grad_enabled(record and self.grad_enabled):
            out = self.func(*args[0], **args[1])
        outs = _flat_tensors(out)
        if len(outs) != self.n_outputs:      # the guards should make this impossible: say so if not
            raise RuntimeError(f"compiled graph: {self.name} returned {len(outs)} tensors, {self.n_outputs} when "
                               "captured; call torch.compiler.reset() and report this")
        return tuple(o._data for o in outs), (leaves, outs)

    def __call__(self, *arrays):
        return self._run(arrays, False)[0]

    def with_grad(self, *arrays):
        return self._run(arrays, True)

    @staticmethod
    def backward(ctx, grads):
        from ..autograd import grad as autograd_grad
        leaves, outs = ctx
        pairs = [(o, g) for o, g in zip(outs, grads) if g is not None and o.requires_grad]
        wanted = [leaf for leaf in leaves if leaf is not None]
        result = [None] * len(leaves)
        if not pairs or not wanted:
            return [leaf._data * 0 if leaf is not None else None for leaf in leaves]
        got = autograd_grad([o for o, _ in pairs], wanted, [_wrap(g) for _, g in pairs], allow_unused=True)
        got = iter(got)
        for i, leaf in enumerate(leaves):
            if leaf is not None:        # an input the outputs do not depend on gets zeros, so that the
                g = next(got)           # generated backward never tests for None
                result[i] = g._data if g is not None else leaf._data * 0
        return result


def _fill(value, tensors):
    if isinstance(value, Node):
        return tensors[value]
    if isinstance(value, tuple):
        return tuple(_fill(v, tensors) for v in value)
    if isinstance(value, list):
        return [_fill(v, tensors) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, tensors) for k, v in value.items()}
    return value


def _flat_tensors(value):
    from .capture import _flat_tensors as flat
    return flat(value)


class GeneratedCode:
    """The forward and backward of one captured graph, as source and as functions.

    ``forward_source``: ``forward(*inputs) -> outputs`` (no autograd) or, when ``train``,
    ``-> (outputs, saved)``; ``backward_source``: ``backward(saved, *output_grads) -> input grads``.
    ``outputs``: the nodes whose arrays forward returns, in order."""

    def __init__(self, graph, train):
        self.graph = graph
        self.train = train
        ns = self.ns = _Namespace()
        self.placeholders = [n for n in graph.nodes if n.op == "placeholder"]
        out_node = graph.nodes[-1]
        found = []
        for_each_node(out_node.args[0], found.append)
        self.outputs = [n for n in dict.fromkeys(found) if n.op != "placeholder"]
        self.out_requires_grad = [bool(n.meta.get("requires_grad")) for n in self.outputs]
        self.saved = []
        self.islands = {}
        backward_lines = self._backward_lines() if train else []
        self.saved_inputs, self.saved_outputs = self._saved_tensors() if train else ([], [])
        self.forward_source = self._forward_source()
        self.backward_source = self._backward_source(backward_lines) if train else None
        tag = next(_counter)
        self.forward = _compile(self.forward_source, f"<glasstorch compiled forward {tag}>", ns.values, "forward")
        self.backward = _compile(self.backward_source, f"<glasstorch compiled backward {tag}>", ns.values,
                                 "backward") if train else None

    # -- forward ---------------------------------------------------------------------------
    def _forward_source(self):
        ns = self.ns
        stmts = []
        bias_relus = self._bias_relus()
        add_norms = self._add_layer_norms()
        for n in self.graph.nodes:
            if n.op != "call_function":
                continue
            if n in add_norms:
                add = add_norms[n]
                if add is None:     # (the add: run by the layer norm's loop, its next line)
                    continue
                args = _schema_args(n)
                call = ", ".join([v.name for v in add.args] + [_arg(args[k], ns) for k in (
                    "normalized_shape", "weight", "bias", "eps")])
                stmts.append(Stmt([add.name, n.name], text=f"_jit_add_layer_norm({call})",
                                  comment="aten.add.Tensor and the aten.native_layer_norm.default of it, one loop"))
                continue
            meta = dict(shape=n.meta.get("shape"), dtype=n.meta.get("dtype"), row_major=bool(n.meta.get("contiguous")))
            if n in bias_relus:
                fused = bias_relus[n]
                if fused is None:    # (relu: its input is the addmm's array, ReLU already run in it)
                    stmts.append(Stmt(n.name, text=n.args[0].name, comment="aten.relu.default, run by addmm's loop"))
                    continue
                args = _schema_args(n)
                call = ", ".join(_arg(args[k], ns) for k in ("self", "mat1", "mat2"))
                stmts.append(Stmt(n.name, text=f"_jit_addmm_relu({call})", owned=True,
                                  comment=f"aten.addmm.default and {fused.name}'s aten.relu.default", **meta))
                continue
            if n.target is operator.getitem:
                stmts.append(Stmt(n.name, text=f"{n.args[0].name}[{n.args[1]}]"))
                continue
            if n.meta.get("island"):
                island = self.islands.setdefault(n, Island(n))
                fn = ns.bind("_island_", island)
                ins = ", ".join(i.name for i in island.inputs)
                why = f"{island.func.__qualname__} kept whole: {n.meta.get('why')}"
                if self.train:      # (its context keeps its inputs: the planner sees it as their view)
                    stmts.append(Stmt([n.name, f"_ctx_{n.name}"], text=f"{fn}.with_grad({ins})", comment=why))
                else:
                    stmts.append(Stmt(n.name, text=f"{fn}({ins})", comment=why))
                continue
            low = lowering.lower_forward(n, _schema_args(n), lambda v: _arg(v, ns))
            comment = f"aten.{n.target.__name__}"
            if low is not None and low.ufunc is not None:
                kind = "matmul" if low.ufunc == "np.matmul" else "ufunc"
                stmts.append(Stmt(n.name, kind, ufunc=low.ufunc, operands=[_arg(v, ns) for v in low.operands],
                                  comment=comment, expr=low.expr, **meta))
            elif low is not None:
                stmts.append(Stmt(n.name, text=low.expr, owned=low.fresh, reshape=low.reshape, comment=comment, **meta))
            else:
                op = n.target
                compiled_loop = jit.kernel(n, _schema_args(n))      # (numba's, when installed: jit.py)
                kernel = ns.bind(f"_jit_{op._schema.name}_", compiled_loop) if compiled_loop is not None else \
                    ns.bind(f"_k_{op._schema.name}_", op.kernel)
                call = [_arg(a, ns) for a in n.args] + [f"{k}={_arg(v, ns)}" for k, v in n.kwargs.items()]
                stmts.append(Stmt(n.name, text=f"{kernel}({', '.join(call)})", comment=comment, **meta))
        outs = "(" + "".join(n.name + ", " for n in self.outputs) + ")"
        if self.train:
            saved = "(" + "".join(s + ", " for s in self.saved) + ")"
            stmts.append(Stmt([], text=f"return {outs}, {saved}"))
        else:
            stmts.append(Stmt([], text=f"return {outs}"))
        inputs = [n.name for n in self.placeholders]
        lines = [f"def forward({', '.join(inputs)}):"]
        lines += memory.plan(stmts, inputs, {n.name for n in self.placeholders if n.meta.get("contiguous")},
                             {n.name: tuple(n.meta["shape"]) for n in self.placeholders if "shape" in n.meta})
        return "\n".join(lines) + "\n"

    def _bias_relus(self):
        """``{addmm node: its relu node, relu node: None}`` for each ``relu(addmm(b, x, w))`` -- through views,
        each value read once and neither saved for the backward nor returned -- that ``jit.addmm_relu`` runs
        (a Linear then ReLU, large, float32, numba installed): the bias add and ReLU in one pass."""
        found = {}
        readers = {}
        for u in self.graph.nodes:
            for v in u.all_input_nodes:
                readers.setdefault(v, []).append(u)
        kept = set(self.saved) | {n.name for n in self.outputs}
        for n in self.graph.nodes:
            if getattr(n.target, "__name__", None) != "relu.default" or not isinstance(n.args[0], Node):
                continue
            v = n.args[0]
            while getattr(v.target, "__name__", None) in ("view.default", "_unsafe_view.default") \
                    and len(readers.get(v, ())) == 1 and v.name not in kept and isinstance(v.args[0], Node):
                v = v.args[0]
            if getattr(v.target, "__name__", None) != "addmm.default" or len(readers.get(v, ())) != 1 \
                    or v.name in kept or v.meta.get("island"):
                continue
            args = _schema_args(v)
            if args.get("beta", 1) != 1 or args.get("alpha", 1) != 1 or not all(
                    isinstance(args[k], Node) for k in ("self", "mat1", "mat2")) \
                    or not jit.addmm_relu_for(v, args["self"], args["mat1"], args["mat2"], n):
                continue
            found[v], found[n] = n, None
        return found

    def _add_layer_norms(self):
        """``{native_layer_norm node: its add node, add node: None}`` for each ``native_layer_norm(a + b)`` -- the
        add (a residual connection) read by nothing else, the norm its next node -- that ``jit.add_layer_norm``
        runs (float32, one shape, numba installed): the sum written and normalized in one pass."""
        found = {}
        nodes = [n for n in self.graph.nodes if n.op == "call_function"]
        for add, norm in zip(nodes, nodes[1:]):
            if getattr(add.target, "__name__", None) != "add.Tensor" or getattr(
                    norm.target, "__name__", None) != "native_layer_norm.default" or norm.args[0] is not add:
                continue
            if len(add.args) != 2 or not all(isinstance(v, Node) for v in add.args) or add.kwargs.get(
                    "alpha", 1) != 1 or add.meta.get("island") or norm.meta.get("island") or \
                    sum(1 for u in self.graph.nodes if add in u.all_input_nodes) != 1 or \
                    any(add is n for n in self.outputs):
                continue
            if jit.add_layer_norm_for(add, add.args, norm, _schema_args(norm)):
                found[norm], found[add] = add, None
        return found

    # -- backward --------------------------------------------------------------------------
    def _backward_lines(self):
        """The backward as statements (planned in _backward_source, once the saved values are known)."""
        ns = self.ns
        grad = {}            # node -> name of its gradient variable, once one flows to it
        saved = []
        stmts = []
        temps = itertools.count()

        def temp():
            return f"_t{next(temps)}"

        reads = []           # what the formulas of the node being derived save

        def save(name):
            if name not in saved:
                saved.append(name)
            reads.append(name)
            return name

        # With several outputs, autograd passes None for an output no gradient reached (the function
        # does not materialize zeros: replay keeps many values as outputs, most of them unused later)
        maybe_none = set()

        def materialize(expr, node):
            """A source string for ``expr``: a U tree is computed into a temporary first."""
            if not isinstance(expr, memory.U):
                return expr
            name = temp()
            stmts.extend(memory.flatten(expr, name, node.meta["shape"], node.meta["dtype"], temp))
            return name

        def add_grad(node, expr):
            """``expr`` (a source string or a U tree of ``node``'s shape and dtype) is a gradient of ``node``."""
            name = grad.get(node)
            if name is None:
                grad[node] = f"g_{node.name}"
                stmts.extend(memory.flatten(expr, grad[node], node.meta["shape"], node.meta["dtype"], temp))
            elif name in maybe_none:
                term = materialize(expr, node)
                stmts.append(Stmt(name, text=f"{term} if {name} is None else {name} + {term}"))
                maybe_none.discard(name)
            else:                        # a value used twice: its gradients add up (in place, where the
                stmts.extend(memory.flatten(memory.U("np.add", name, expr), name,     # planner may)
                                            node.meta["shape"], node.meta["dtype"], temp))

        def comment(text):
            stmts.append(Stmt([], "comment", text=f"# {text}"))

        self.grad_inputs = []
        for k, n in enumerate(self.outputs):
            if self.out_requires_grad[k]:
                add_grad(n, f"_g{k}")
                if len(self.outputs) > 1:
                    maybe_none.add(grad[n])
        def zeros_if_none(g, node):
            """An output's gradient that autograd may pass as None, as zeros where a formula needs an array."""
            zeros = f"np.zeros({tuple(node.meta['shape'])!r}, {ns.const(node.meta['dtype'].numpy_dtype)})"
            stmts.append(Stmt(g, text=f"{zeros} if {g} is None else {g}"))
            maybe_none.discard(g)

        items_of = {}        # a node with several outputs (an island, an aten op) -> its getitem nodes by index
        for u in self.graph.nodes:
            if u.target is operator.getitem:
                items_of.setdefault(u.args[0], {})[u.args[1]] = u
        uses = {}            # node -> how many nodes read it (the output counts as one)
        for u in self.graph.nodes:
            for v in u.all_input_nodes:
                uses[v] = uses.get(v, 0) + 1
        stacked = self._unpacked_values()
        deferred = {u for _, _, selects in stacked.values() for u in selects} - set(stacked)
        for n in reversed(self.graph.nodes):
            if n in deferred:
                continue
            if n in stacked:         # the first of the selects that unpack a value: the gradients, stacked
                value, dim, selects = stacked[n]
                gs = [grad.get(u) for u in selects]
                if not any(gs):
                    continue
                comment(f"{', '.join(u.name for u in selects)} = aten.select.int of {value.name}: "
                        "SelectBackward0 each, their sum stacked")
                for g, u in zip(gs, selects):
                    if g in maybe_none:
                        zeros_if_none(g, u)
                laid_out = self._laid_out_as_source(value)
                if laid_out is not None:     # each gradient written into its slice of an array laid out as
                    name = temp()            # the clone's source: the views' formulas then give that source's
                    stmts.append(Stmt(name, text=laid_out, owned=True, shape=value.meta["shape"],   # gradient
                                      dtype=value.meta["dtype"]))                                # with no copy
                    for i, g in enumerate(gs):
                        part = f"{name}[{':, ' * dim}{i}]"
                        # (+ 0: each slice of eager's sum is one gradient plus zeros, which turns -0 into +0)
                        stmts.append(Stmt([], text=f"np.add({g}, 0, out={part})" if g else f"{part} = 0"))
                    add_grad(value, name)
                    continue
                zeros = f"np.zeros({tuple(selects[0].meta['shape'])!r}, {ns.const(value.meta['dtype'].numpy_dtype)})"
                name = temp()
                stmts.append(Stmt(name, text=f"np.stack([{', '.join(g or zeros for g in gs)}], axis={dim})",
                                  owned=True, shape=value.meta["shape"], dtype=value.meta["dtype"], row_major=True))
                # (+ 0: each slice of eager's sum is one gradient plus zeros, which turns -0 into +0)
                add_grad(value, memory.U("np.add", name, "0"))
                continue
            several = n in items_of and not n.meta.get("island")
            if n.op != "call_function" or n not in grad and not n.meta.get("island") and not several:
                continue
            if n.target is operator.getitem:
                continue                                     # its op reads its gradient (None or not)
            if grad.get(n) in maybe_none:                    # only an output's gradient, which may be None
                zeros_if_none(grad[n], n)
            if n.meta.get("island"):
                island = self.islands.setdefault(n, Island(n))
                items = [u for u in self.graph.nodes if u.target is operator.getitem and u.args[0] is n]
                gs = [grad.get(u) for u in sorted(items, key=lambda u: u.args[1])]
                if not any(gs) or not any(island.wants_grad):
                    continue
                fn = ns.bind("_island_", island)
                comment(f"{n.name}: {island.func.__qualname__} (kept whole): autograd.grad on its graph")
                grads_in = ", ".join(g or "None" for g in gs)
                stmts.append(Stmt("_r", text=f"{fn}.backward({save('_ctx_' + n.name)}, [{grads_in}])"))
                for i, (inp, wants) in enumerate(zip(island.inputs, island.wants_grad)):
                    if wants:
                        add_grad(inp, f"_r[{i}]")
                continue
            op = n.target
            args = _schema_args(n)
            if several:      # the gradients of its outputs, by index (None: none flows to that output)
                outs = items_of[n]
                gs = [grad.get(outs[k]) if k in outs else None for k in range(n.meta["num_outputs"])]
                if not any(gs):
                    continue
            fused = lowering.log_softmax_nll(n, args, uses, outs) if several and gs[0] is not None else None
            if fused is not None:               # (cross-entropy's two backward formulas as one function)
                x, ls, target, total = fused
                if gs[0] in maybe_none:
                    zeros_if_none(gs[0], outs[0])
                comment(f"{n.name} = aten.{op.__name__}, {ls.name} = aten._log_softmax.default: NllLossBackward0 "
                        "and LogSoftmaxBackward0 in one")
                start, reads[:] = len(stmts), []
                fn = "_jit_log_softmax_nll_grad" if jit.log_softmax_nll_grad_for(ls) else "_log_softmax_nll_grad"
                stmts.append(Stmt("_r", text=f"{fn}({gs[0]}, {save(ls.name)}, {save(target.name)}, "
                                             f"{save(total.name) if total is not None else None}, "
                                             f"{_arg(args['ignore_index'], ns)}, {args['reduction'] == 1})"))
                add_grad(x, "_r")
                self._refuse_overwritten(n, reads, start, stmts)
                continue
            comment(f"{n.name} = aten.{op.__name__}: {op.node.__name__ if op.node else 'no derivative'}")
            start, reads[:] = len(stmts), []
            for names, fn, joint, specs in op.node._formula_table if op.node is not None else ():
                needed = [name for name in names if _requires_grad(args.get(name))]
                if not needed:
                    continue
                if several:
                    if any(kind == "grad" for kind, _ in specs):
                        if gs[0] is None:        # as eager: a formula of the first output's gradient is skipped
                            continue
                        if gs[0] in maybe_none:
                            zeros_if_none(gs[0], outs[0])
                    self._several_formula(n, op, args, names, needed, fn, joint, specs, gs, outs, save, stmts,
                                          add_grad)
                    continue
                fused = None if joint or not config.weight_grad_in_weight_layout else lowering.weight_grad(
                    n, names[0], args, grad[n], lambda v: save(v.name), uses)
                if fused is not None:               # (the gradient of W in x @ W.t(), laid out as W)
                    add_grad(*fused)
                    continue
                lowered = None if joint else lowering.lower_backward(n, names[0], args, grad[n],
                                                                     lambda v: save(v.name), lambda v: _arg(v, ns))
                if lowered is not None:
                    expr, shaped = lowered
                    inp = args[names[0]]
                    if not shaped and not self._same_meta(inp, n):
                        expr = self._to_input(materialize(expr, n), inp, n)
                    add_grad(inp, expr)
                    continue
                formula = self._formula(n, op, names, args, fn)
                call = []
                for kind, key in specs:
                    if kind == "grad":
                        call.append(grad[n])
                    elif kind == "grads":
                        call.append(f"[{grad[n]}]")
                    elif kind == "output_mask":
                        call.append(repr(tuple(_requires_grad(args.get(name)) for name in names)))
                    elif kind == "tensor":
                        value = n if key in op.node._out_names else args[key]
                        call.append(save(value.name) if isinstance(value, Node) else _arg(value, ns))
                    else:
                        call.append(self._spec_arg(kind, key, args))
                stmts.append(Stmt("_r", text=f"{formula}({', '.join(call)})"))
                for j, name in enumerate(names):
                    inp = args[name]
                    if name not in needed:
                        continue
                    add_grad(inp, self._to_input("_r" if not joint else f"_r[{j}]", inp, n))
            self._refuse_overwritten(n, reads, start, stmts)
        self.grad_inputs = [grad.get(p) if p.meta.get("requires_grad") else None for p in self.placeholders]
        self.saved = saved
        stmts.append(Stmt([], text=f"return ({''.join((g or 'None') + ', ' for g in self.grad_inputs)})"))
        return stmts

    def _saved_tensors(self):
        """The inputs and outputs whose memory the backward reads (saved as they are, or through views:
        ``t_1 = _2_weight.T``): ``[(input position, version bumps its write-back adds)]``, ``[output
        position]``. ``CompiledFunction`` checks their version counters when the backward runs, as eager's
        saved tensors are checked: an ``opt.step()`` between the forward and ``backward()``, or an in-place
        change of a returned value, raises eager's error instead of giving gradients of the new values."""
        by_name = {v.name: v for v in self.graph.nodes}
        out_ids = {id(o) for o in self.outputs}
        inputs, outputs = set(), set()
        for name in self.saved:
            v = by_name.get(name)
            while v is not None:
                if id(v) in out_ids:
                    outputs.add(id(v))
                if v.op == "placeholder":
                    inputs.add(id(v))
                if v.op != "call_function" or not getattr(v.target, "_makes_views", False) or not v.args \
                        or not isinstance(v.args[0], Node):
                    break
                v = v.args[0]
        return ([(k, p.meta.get("written_bumps", 0)) for k, p in enumerate(self.placeholders) if id(p) in inputs],
                [k for k, o in enumerate(self.outputs) if id(o) in outputs])

    def _refuse_overwritten(self, n, reads, start, stmts):
        """Node ``n``'s formulas read a value that a later in-place op of the graph overwrote (its
        ``overwritten`` meta, capture.py): the functionalized graph still holds the old value, but eager's
        autograd finds the saved tensor's version changed and raises when this node's backward runs. So
        does the compiled backward, there, with eager's message."""
        by_name = {v.name: v for v in self.graph.nodes}
        for name in reads:
            info = by_name[name].meta.get("overwritten") if name in by_name else None
            if info is not None and info["by"] is not n:
                msg = (f"one of the variables needed for gradient computation has been modified by an inplace "
                       f"operation: [{info['type']} {info['shape']}]"
                       f"{'' if info['creator'] is None else ', which is output 0 of ' + info['creator'] + ','} "
                       f"is at version {info['now']}; expected version {info['expected']} instead. Hint: enable "
                       f"anomaly detection to find the operation that failed to compute its gradient, with "
                       f"torch.autograd.set_detect_anomaly(True, check_nan=False).")
                if info.get("last_op") is not None:
                    where = f" at {info['where'][0]}:{info['where'][1]}" if info.get("where") else ""
                    msg += (f"\n[glasstorch] {name}, which {n.target.node.__name__} of the compiled graph saved, was "
                            f"last modified in place by {info['last_op']}(){where}; use the out-of-place form "
                            "(x = x.mul(2) rather than x.mul_(2)) or .clone() the tensor before modifying it.")
                stmts.insert(start, Stmt([], text=f"raise RuntimeError({self.ns.bind('_msg', msg)})"))
                return

    def _unpacked_values(self):
        """``{first select: (value, dim, selects by index)}`` for each value that only ``select.int``
        nodes read, each index of one dimension once (the packed q, k, v of attention's
        in-projection). Eager's backward makes a zero array of the value's shape per select, writes
        its gradient into one slice and adds them up; stacking the gradients gives the same values
        with one pass instead of ~3 per select."""
        readers = {}
        for u in self.graph.nodes:
            for v in dict.fromkeys(u.all_input_nodes):
                readers.setdefault(v, []).append(u)
        found = {}
        for v, us in readers.items():
            shape = v.meta.get("shape")
            if len(us) < 2 or not shape or not lowering.real_float(v) or not v.meta.get("requires_grad") or any(
                    getattr(u.target, "__name__", None) != "select.int" or u.args[0] is not v or u.kwargs
                    for u in us):
                continue
            dims = {u.args[1] % len(shape) for u in us}
            index = sorted((u.args[2] % shape[u.args[1]], k) for k, u in enumerate(us))
            if len(dims) != 1 or [i for i, _ in index] != list(range(shape[dims.pop()])):
                continue
            dim = us[0].args[1] % len(shape)
            found[us[0]] = (v, dim, [us[k] for _, k in index])     # (the backward reaches it last)
        return found

    def _laid_out_as_source(self, value):
        """Source for an empty array of ``value``'s shape and dtype laid out as the input of the ``clone``
        that made ``value``, when that input is views (``_makes_views`` ops) of a row-major array -- attention's
        packed q, k, v: the in-projection's output viewed and transposed, then cloned; else None. The array
        is the row-major root, empty, put through the same views' kernels. A gradient of ``value`` written
        there flows back through the views' formulas (clone's is the gradient itself) into a row-major
        gradient of the root with no copy: eager's contiguous gradient of ``value`` is viewed back as a
        non-contiguous one, which the root's reshape then copies (~0.5 ms per Transformer step, and
        ~0.7 ms for ``np.stack``)."""
        if getattr(value.target, "__name__", None) != "clone.default":
            return None
        chain, v = [], value.args[0]
        while isinstance(v, Node) and v.op == "call_function" and getattr(v.target, "_makes_views", False) \
                and not v.meta.get("island") and v.args and isinstance(v.args[0], Node):
            chain.append(v)
            v = v.args[0]
        if not chain or not isinstance(v, Node) or not v.meta.get("contiguous") or v.meta.get("shape") is None \
                or v.meta.get("dtype") != value.meta["dtype"] \
                or tuple(chain[0].meta.get("shape") or ()) != tuple(value.meta["shape"]):
            return None
        ns = self.ns
        expr = f"np.empty({tuple(v.meta['shape'])!r}, {ns.const(v.meta['dtype'].numpy_dtype)})"
        for u in reversed(chain):
            kernel = ns.bind(f"_k_{u.target._schema.name}_", u.target.kernel)
            rest = [_arg(a, ns) for a in u.args[1:]] + [f"{k}={_arg(x, ns)}" for k, x in u.kwargs.items()]
            expr = f"{kernel}({', '.join([expr] + rest)})"
        return expr

    def _several_formula(self, n, op, args, names, needed, fn, joint, specs, gs, outs, save, stmts, add_grad):
        """The call of one formula of an aten op with several outputs (native_layer_norm,
        max_pool2d_with_indices, nll_loss_forward): ``grad`` is its first output's gradient, ``grads``
        all of them (None where none flows, as eager passes them), an output it reads is its getitem
        node's value. Its results have the inputs' shapes already."""
        ns = self.ns
        formula = self._formula(n, op, names, args, fn)
        # (layer norm's loop: its results are new arrays, never views of what it reads -- the planner may reuse
        # the gradient's buffer once it is dead)
        fresh = jit.formula(n, names, args) is jit.layer_norm_backward
        terms = self._two_terms(gs[0], stmts) if fresh else None
        call = []
        for kind, key in specs:
            if kind == "grad":
                call.append(gs[0] if terms is None else terms[0])
            elif kind == "grads":
                call.append("[" + ", ".join(g or "None" for g in gs) + "]")
            elif kind == "output_mask":
                call.append(repr(tuple(_requires_grad(args.get(name)) for name in names)))
            elif kind == "tensor":
                value = outs[op.node._out_names.index(key)] if key in op.node._out_names else args[key]
                call.append(save(value.name) if isinstance(value, Node) else _arg(value, ns))
            else:
                call.append(self._spec_arg(kind, key, args))
        if terms is not None:
            call.append(f"other_grad={terms[1]}")
        stmts.append(Stmt("_r", text=f"{formula}({', '.join(call)})", owned=fresh))
        for j, name in enumerate(names):
            if name in needed:
                add_grad(args[name], "_r" if not joint else f"_r[{j}]")

    @staticmethod
    def _two_terms(g, stmts):
        """``g``'s two terms, where its last line adds them up (``g = np.add(g, term)``: a value read twice, as
        a residual is): that line made a comment, and the two returned, for a formula that adds them in its
        own loop (``jit.layer_norm_backward``: one pass fewer over the gradient); else None."""
        for k in range(len(stmts) - 1, -1, -1):
            s = stmts[k]
            if s.kind == "comment" or (g not in s.targets and g not in memory._names(s)):
                continue            # (a line of another gradient: the other input's of the op after it)
            if g not in s.targets:
                return None         # (the sum is read: it stays)
            if s.kind != "ufunc" or s.ufunc != "np.add" or s.targets != [g] or len(s.operands) != 2 \
                    or s.operands[0] != g or s.operands[1] == g:
                return None
            stmts[k] = Stmt([], "comment", text=f"# ({g} = {g} + {s.operands[1]}: added in the layer norm's loop)")
            return s.operands
        return None

    def _formula(self, n, op, names, args, fn):
        """The name the backward calls for ``op``'s formula ``fn`` (for its inputs ``names``): a compiled
        loop of the same arguments and results where jit.py has one for this case, else ``fn``."""
        compiled_loop = jit.formula(n, names, args)
        if compiled_loop is not None:
            return self.ns.bind(f"_jit_{op._schema.name}_backward_", compiled_loop)
        return self.ns.bind(f"_f_{op._schema.name}_", fn)

    def _spec_arg(self, kind, key, args):
        """A formula's argument that is no tensor: a Python value of the call, or what the capture
        knew of an input (its sizes, numel, dtype)."""
        if kind == "value":
            return _arg(args[key], self.ns)
        if kind == "sizes":
            return repr(tuple(args[key].meta["shape"]))
        if kind == "strides":
            return repr(tuple(args[key].meta["strides"]))
        if kind == "numel":
            return repr(int(np.prod(args[key].meta["shape"], dtype=np.int64)))
        return self.ns.const(args[key].meta["dtype"])

    @staticmethod
    def _same_meta(inp, n):
        return tuple(inp.meta["shape"]) == tuple(n.meta["shape"]) and inp.meta["dtype"] == n.meta["dtype"]

    def _to_input(self, expr, inp, n):
        """A gradient computed at ``n``'s shape and dtype, brought to input ``inp``'s: a broadcast
        summed away where the shapes differ (known now, so decided here, once)."""
        if tuple(inp.meta["shape"]) != tuple(n.meta["shape"]):
            ones = lowering.bias_grad_ones(inp, n) if config.bias_grad_as_gemv else None
            expr = f"_bias_grad({expr}, {self.ns.const(ones)})" if ones is not None else \
                f"_sum_to({expr}, {tuple(inp.meta['shape'])!r})"
        if inp.meta["dtype"] != n.meta["dtype"]:
            expr = f"{expr}.astype({self.ns.const(inp.meta['dtype'].numpy_dtype)})"
        return expr

    def _backward_source(self, stmts):
        grads = [f"_g{k}" for k in range(len(self.outputs))]
        lines = [f"def backward(_saved{''.join(', ' + g for g in grads)}):"]
        if self.saved:
            lines.append(f"    {''.join(s + ', ' for s in self.saved)}= _saved")
        nodes = {n.name: n for n in self.graph.nodes}
        values = [nodes[s] for s in self.saved if s in nodes and "shape" in nodes[s].meta]
        lines += memory.plan(stmts, ["_saved"] + grads + self.saved, {n.name for n in values if n.meta.get("contiguous")},
                             {n.name: tuple(n.meta["shape"]) for n in values})
        return "\n".join(lines) + "\n"


def _compile(source, filename, namespace, name):
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name]


class CompiledFunction(Function):
    """The autograd node a compiled graph records: ``CompiledFunctionBackward``, as torch's."""

    @staticmethod
    def forward(ctx, code, *inputs):
        # Function.apply runs forward with grad mode off; the kernels see the mode the eager forward
        # ran in (grad on: this graph was captured for training), which some use to keep work for
        # their backward (a convolution leaves its input's columns for the weight gradient)
        with grad_mode.enable_grad():
            outs, saved = code.forward(*[t._data for t in inputs])
        ctx.code, ctx.saved_arrays, ctx.inputs = code, saved, inputs
        tensors = tuple(_wrap(o) for o in outs)
        # what the backward reads of the inputs and outputs, and the versions eager's saved tensors would expect
        # (and what made each, as eager's message names it: an input's grad_fn; none for an output, as torch's)
        ctx.versions = [(inputs[k], inputs[k]._vc.version + bumps, inputs[k]._grad_fn, inputs[k]._output_nr)
                        for k, bumps in code.saved_inputs] + [
            (tensors[k], tensors[k]._vc.version, None, k) for k in code.saved_outputs]
        ctx.mark_non_differentiable(*[t for t, rg in zip(tensors, code.out_requires_grad) if not rg])
        if len(tensors) > 1:
            ctx.set_materialize_grads(False)     # (the generated backward takes None for an unused output)
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        for t, expected, creator, output_nr in ctx.versions:
            if t._vc.version != expected:
                raise RuntimeError(_changed_after_save(t, expected, creator, output_nr))
        if grad_mode.is_grad_enabled():        # create_graph=True: gradients whose own backward refuses
            return (None,) + _RefuseDoubleBackward.apply(ctx.code, ctx.saved_arrays, len(ctx.inputs),
                                                         *ctx.inputs, *grads)
        return (None,) + _input_grads(ctx.code, ctx.saved_arrays, grads)


def _changed_after_save(t, expected, creator, output_nr):
    """Eager's message for a saved tensor changed in place (autograd/graph.py's ``_version_error``),
    for an input or output of a compiled graph (``creator``: the node that made it, when it was saved)."""
    from ..autograd.graph import _short_name
    if creator is not None:
        name = creator if isinstance(creator, str) else _short_name(creator)
        creator = f", which is output {max(output_nr, 0)} of {name},"
    msg = (f"one of the variables needed for gradient computation has been modified by an inplace operation: "
           f"[{t.type()} {list(t.shape)}]{creator or ''} is at version {t._vc.version}; expected version {expected} "
           f"instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
           f"with torch.autograd.set_detect_anomaly(True, check_nan=False).")
    if t._vc.last_op is not None:
        where = f" at {t._vc.where[0]}:{t._vc.where[1]}" if t._vc.where is not None else ""
        msg += (f"\n[glasstorch] a tensor CompiledFunctionBackward saved was last modified in place by "
                f"{t._vc.last_op}(){where}; use the out-of-place form (x = x.mul(2) rather than x.mul_(2)) or "
                ".clone() the tensor before modifying it.")
    return msg


def _input_grads(code, saved, grads):
    got = code.backward(saved, *[g._data if g is not None else None for g in grads])
    return tuple(_wrap(g) if g is not None else None for g in got)


def _refuse(ctx, *grads):
    raise RuntimeError("torch.compile with aot_autograd does not currently support double backward")


def _backward_as_function(ctx, code, saved, n_inputs, *inputs_and_grads):
    return _input_grads(code, saved, inputs_and_grads[n_inputs:])


# torch names the node of a compiled backward run with create_graph=True CompiledFunctionBackwardBackward
_RefuseDoubleBackward = type("CompiledFunctionBackward", (Function,), {
    "forward": staticmethod(_backward_as_function), "backward": staticmethod(_refuse),
    "__doc__": "The compiled backward as a Function, for create_graph=True: its own backward refuses, as torch's."})
