"""Guards: what must still hold for a captured graph to be reused.

The capture ran the user's Python once; every Python decision it made (a shape in a ``view``, an
``if self.training``, a scalar argument) is baked into the graph. The guards check, before each
call, what those decisions could have read:

* grad mode;
* each argument: a tensor's type, device, shape, strides (its layout, which the generated code relies
  on, as torch's guards check strides), dtype and ``requires_grad``; a Python number, string or None
  by value; a list/tuple/dict by length and keys; any other object (a module, an optimizer) by
  identity;
* each module the call ran (or was given): its ``training`` flag and which Parameter/buffer
  objects it holds; each parameter or buffer the graph reads: shape, dtype, ``requires_grad``.

They are generated as one Python function that returns None when all hold, else the first that
failed, in words (what a recompile reports)::

    def guard(args, kwargs):
        if not (_state.enabled is True): return "grad mode changed (was True)"
        if not (type(args[0]) is Tensor and args[0]._data.shape == (8, 4) ...): return "..."
"""
import linecache
import itertools

from .._tensor import Tensor
from ..autograd import grad_mode
from ..nn.modules.module import Module

_counter = itertools.count()


class Guards:
    def __init__(self, capture, args, kwargs):
        self.checks = []           # (source of a condition, what it means)
        self.values = {"Tensor": Tensor, "_state": grad_mode._state}
        self._ids = {}
        self._arg_tensors = []     # (expression, tensor) of each tensor in the arguments
        self.checks.append((f"_state.enabled is {capture.grad_enabled}",
                            f"grad mode changed (it was {capture.grad_enabled})"))
        self._walk(args, "args", tuple)
        self._walk(kwargs, "kwargs", dict)
        for m in capture.modules:
            self._module(m)
        for opt, snapshot in capture.optimizers:
            self._optimizer(opt, snapshot, capture.broken)
        seen = set()
        for node, source in [*capture.inputs, *(pair for _, inputs in capture.closed for pair in inputs)]:
            if source[0] == "free" and id(source[1]) not in seen:   # (every graph's, when breaks split it)
                seen.add(id(source[1]))
                self._tensor(self._bind(source[1]), source[1], node.name)
            elif source[0] == "grad" and id(source[-1]) not in seen and not capture.broken:  # read inside a call
                seen.add(id(source[-1]))
                self._tensor(f"{source[2] if source[2] is not None else self._bind(source[1])}._grad", source[-1],
                             node.name)
        # `if p.grad is None`, and the grad's layout; not after a break: a backward() inside the function
        # makes the .grad it reads (replay runs the Python again, and checks what a graph reads)
        for owner, path, was_none in (capture.grad_reads if not capture.broken else ()):
            expr = f"{path if path is not None else self._bind(owner)}._grad"
            if was_none:
                self.checks.append((f"{expr} is None", f"{expr}: expected None (.grad was None when compiled)"))
            elif id(owner._grad) not in seen and owner._grad is not None:
                seen.add(id(owner._grad))
                self._tensor(expr, owner._grad, expr)
        self._aliasing(capture)
        self.source = self._source()
        filename = f"<glasstorch guards {next(_counter)}>"
        linecache.cache[filename] = (len(self.source), None, self.source.splitlines(True), filename)
        exec(compile(self.source, filename, "exec"), self.values)
        self.check = self.values["guard"]

    def _bind(self, obj):
        if id(obj) not in self._ids:
            self._ids[id(obj)] = f"_o{len(self._ids)}"
            self.values[self._ids[id(obj)]] = obj
        return self._ids[id(obj)]

    def _tensor(self, expr, t, name):
        # the device: the array's type tells cpu (ndarray), meta (MetaArray) and cuda (CuPy's) apart in
        # one test; which GPU is checked only for a CUDA tensor (the generated code would mix devices)
        device = f" and {expr}.device == {self._bind(t.device)}" if t.device.type == "cuda" else ""
        self.checks.append((
            f"type({expr}) is {self._bind(type(t))} and type({expr}._data) is {self._bind(type(t._data))}{device} "
            f"and {expr}._data.shape == {tuple(t.shape)!r} and {expr}._data.strides == {tuple(t._data.strides)!r} and "
            f"{expr}._data.dtype == {self._bind(t._data.dtype)} and {expr}._requires_grad is {t._requires_grad}",
            f"tensor {name!r}: expected {type(t).__name__} of size {list(t.shape)}, stride {list(t.stride())}, "
            f"dtype {t.dtype}, device {t.device}, requires_grad={t._requires_grad}"))

    def _walk(self, value, expr, kind=None):
        if isinstance(value, Tensor):
            self._tensor(expr, value, expr)
            self._arg_tensors.append((expr, value))
        elif isinstance(value, (list, tuple)):
            self.checks.append((f"type({expr}) is {type(value).__name__} and len({expr}) == {len(value)}",
                                f"{expr}: expected a {type(value).__name__} of length {len(value)}"))
            for i, v in enumerate(value):
                self._walk(v, f"{expr}[{i}]")
        elif isinstance(value, dict):
            self.checks.append((f"type({expr}) is dict and list({expr}) == {list(value)!r}",
                                f"{expr}: expected keys {list(value)}"))
            for k, v in value.items():
                self._walk(v, f"{expr}[{k!r}]")
        elif value is None or isinstance(value, bool):
            self.checks.append((f"{expr} is {value!r}", f"{expr}: expected {value!r}"))
        elif type(value) in (int, float, str, complex) and value == value:
            self.checks.append((f"type({expr}) is {type(value).__name__} and {expr} == {value!r}",
                                f"{expr}: expected {value!r} (Python values are specialised)"))
        else:
            self.checks.append((f"{expr} is {self._bind(value)}",
                                f"{expr}: expected the same {type(value).__name__} object"))

    def _module(self, m):
        name = self._bind(m)
        label = type(m).__name__
        self.checks.append((f"{name}.training is {m.training}", f"{label}.training changed (it was {m.training})"))
        for kind in ("_parameters", "_buffers"):
            for key, t in getattr(m, kind).items():
                self.checks.append((f"{name}.{kind}.get({key!r}) is {self._bind(t) if t is not None else None}",
                                    f"{label}.{key} is another object than when compiled"))

    def _optimizer(self, opt, snapshot, broken):
        """What an optimizer's step decided from, as it was when the capture began: its groups'
        hyperparameters (baked into the graph as constants), which parameters it holds, which had a
        ``.grad``, and the keys and tensors of each parameter's state (a first step creates them)."""
        name = self._bind(opt)
        label = type(opt).__name__
        self.checks.append((f"len({name}.param_groups) == {len(snapshot['groups'])}",
                            f"{label}: expected {len(snapshot['groups'])} param groups"))
        for g, (options, params) in enumerate(zip(snapshot["groups"], snapshot["params"])):
            self.checks.append((f"len({name}.param_groups[{g}]['params']) == {len(params)} and all(p is q for p, q in "
                                f"zip({name}.param_groups[{g}]['params'], {self._bind(params)}))",
                                f"{label}.param_groups[{g}]: other parameters than when compiled"))
            self.checks.append((f"sorted({name}.param_groups[{g}]) == {sorted(['params', *options])!r}",
                                f"{label}.param_groups[{g}]: other options than when compiled"))
            for key, value in options.items():
                self._walk(value, f"{name}.param_groups[{g}][{key!r}]")
        params = [p for ps in snapshot["params"] for p in ps]
        has_grad = tuple(snapshot["has_grad"])
        if not broken:          # (after a break, the function's own backward() makes them: replay checks)
            self.checks.append((f"tuple(p._grad is not None for p in {self._bind(params)}) == {has_grad!r}",
                                f"{label}: other parameters have a .grad than when compiled"))
        self.checks.append((f"len({name}.state) == {len(snapshot['state'])}",
                            f"{label}.state: {len(snapshot['state'])} parameters had state when compiled"))
        for p, entries in snapshot["state"]:
            state = f"{name}.state.get({self._bind(p)})"
            self.checks.append((f"type({state}) is dict and list({state}) == {list(entries)!r}",
                                f"{label}.state of a parameter: expected keys {list(entries)}"))
            for key, value in entries.items():
                expr = f"{state}[{key!r}]"
                if isinstance(value, Tensor):
                    self.checks.append((f"{expr} is {self._bind(value)}",
                                        f"{label}.state[...][{key!r}] is another tensor than when compiled"))
                else:
                    self._walk(value, expr)

    def _aliasing(self, capture):
        """Which inputs are one tensor, or share memory, where that changes what the graph computes
        (torch's dynamo guards input aliasing too):

        * a tensor passed at two places of the arguments was one input of the graph (``f(x, x)``): the
          later call must pass one tensor there again;
        * a graph that writes inputs in place (functionalized: it computes the new value apart and
          writes it back after running) read every other input as it was when the call began: a call
          where another input shares memory with a written one (``f(x, x)`` captured as ``f(x, y)``, or
          a view of ``x``) would miss the write; the inputs must share memory as they did then (each
          input's memory is its array's root ``base``: :func:`alias_pattern`).

        A call that fails recompiles, and the capture of aliased inputs is eager's by construction."""
        first = {}
        for expr, t in self._arg_tensors:
            if first.setdefault(id(t), expr) != expr:
                self.checks.append((f"{expr} is {first[id(t)]}",
                                    f"{expr}: expected the same tensor as {first[id(t)]} (as when compiled)"))
        written = capture.mutations[-1] if capture.mutations and not capture.broken else []
        if not written:
            return
        index = {node: k for k, (node, _) in enumerate(capture.inputs)}
        exprs = [self._input_expr(source) for _, source in capture.inputs]
        targets = tuple(index[ph] for ph, _, _, _ in written)
        expected = alias_pattern([source[-1] for _, source in capture.inputs], targets)
        self.values["_alias_pattern"] = alias_pattern
        names = ", ".join(capture.inputs[k][0].name for k in targets)
        self.checks.append((f"_alias_pattern(({''.join(e + ', ' for e in exprs)}), {targets!r}) == {expected!r}",
                            f"inputs share memory otherwise than when compiled (the graph writes {names} in place)"))

    def _input_expr(self, source):
        """The expression that finds a graph input at call time (``writeback.input_reader``'s, in the guard)."""
        if source[0] == "arg":
            return source[1]
        if source[0] == "grad":
            return f"{source[2] if source[2] is not None else self._bind(source[1])}._grad"
        return self._bind(source[1])

    def _source(self):
        lines = ["def guard(args, kwargs):"]
        for cond, meaning in self.checks:
            lines.append(f"    if not ({cond}):")
            lines.append(f"        return {meaning!r}")
        lines.append("    return None")
        return "\n".join(lines) + "\n"

    def __str__(self):
        return self.source


def _root(a):
    """The object whose memory an array views (NumPy's and CuPy's ``.base`` chain to its end)."""
    while getattr(a, "base", None) is not None:
        a = a.base
    return a


def alias_pattern(tensors, written):
    """For each tensor, the position of the first written one whose memory it shares (-1: none): two
    calls alias alike where this is equal. (Sharing is by the arrays' root ``base``: two slices of one
    array that do not overlap count as sharing -- a recompile, never a missed write.)"""
    owner = {}
    for k in written:
        owner.setdefault(id(_root(tensors[k]._data)), k)
    return tuple(owner.get(id(_root(t._data)), -1) for t in tensors)
