"""torch.fx.Graph and Node: a straight-line program of op calls.

A node is one of

* ``placeholder``   -- an input of the graph (a user's tensor, a parameter, a buffer);
* ``call_function`` -- a call of ``target`` (an ``aten`` op, or a public glasstorch function the
  capture kept whole) on ``args``/``kwargs``, in which other nodes stand for their values;
* ``output``        -- what the graph returns (``args[0]``, a tuple of nodes).

Each node's ``meta`` holds what the capture saw: ``shape``, ``dtype``, ``requires_grad`` of its
value, and ``stack``, the user's ``file:line`` that made it.
"""
import operator


class Node:
    def __init__(self, graph, name, op, target, args, kwargs, meta=None):
        self.graph, self.name, self.op, self.target = graph, name, op, target
        self.args, self.kwargs = tuple(args), dict(kwargs)
        self.meta = meta if meta is not None else {}

    @property
    def all_input_nodes(self):
        found = []
        for_each_node((self.args, self.kwargs), found.append)
        return list(dict.fromkeys(found))

    def format_node(self):
        return f"%{self.name} : [num_users={len(self.users)}] = {self.op}[target={_target_name(self.target)}]" \
               f"(args = {_fmt(self.args)}, kwargs = {_fmt(self.kwargs)})"

    @property
    def users(self):
        return [n for n in self.graph.nodes if self in n.all_input_nodes]

    def __repr__(self):
        return self.name


class Graph:
    def __init__(self):
        self.nodes = []
        self._names = {}         # base name -> the next suffix to try
        self._taken = set()      # every name given out

    def _unique(self, base):
        """A variable name from ``base`` no node has yet: ``base``, else ``base_1``, ``base_2`` ...
        (skipping a name given out under another base: ``relu_1`` as the second ``relu`` and as
        output 1 of a node named ``relu``)."""
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in base).strip("_") or "v"
        if base[0].isdigit():
            base = "_" + base
        n = self._names.get(base, 0)
        name = base if n == 0 else f"{base}_{n}"
        while name in self._taken:
            n += 1
            name = f"{base}_{n}"
        self._names[base] = n + 1
        self._taken.add(name)
        return name

    def create_node(self, op, target, args=(), kwargs=None, name=None, meta=None):
        node = Node(self, self._unique(name or _short(target)), op, target, args, kwargs or {}, meta)
        self.nodes.append(node)
        return node

    def placeholder(self, name, meta=None):
        return self.create_node("placeholder", name, name=name, meta=meta)

    def call_function(self, target, args=(), kwargs=None, meta=None, name=None):
        return self.create_node("call_function", target, args, kwargs, name=name, meta=meta)

    def output(self, result):
        return self.create_node("output", "output", (result,), name="output")

    def erase_node(self, node):
        self.nodes.remove(node)

    def python_code(self, fn_name="forward"):
        """The graph as Python over Tensors (torch's ``GraphModule.code``): one line per op."""
        params = [n.name for n in self.nodes if n.op == "placeholder"]
        lines = [f"def {fn_name}(self, {', '.join(params)}):"]
        for n in self.nodes:
            if n.op == "call_function":
                comment = f"  # {n.meta['stack']}" if n.meta.get("stack") else ""
                if n.target is operator.getitem:
                    lines.append(f"    {n.name} = {_fmt(n.args[0])}[{n.args[1]!r}]{comment}")
                else:
                    call = ", ".join([_fmt(a) for a in n.args] + [f"{k} = {_fmt(v)}" for k, v in n.kwargs.items()])
                    lines.append(f"    {n.name} = {_target_name(n.target)}({call}){comment}")
            elif n.op == "output":
                lines.append(f"    return {_fmt(n.args[0])}")
        return "\n".join(lines) + "\n"

    def print_tabular(self):
        """The nodes as a table: opcode, name, target, args, shape/dtype of the value."""
        rows = [("opcode", "name", "target", "args", "value")]
        for n in self.nodes:
            value = ""
            if "shape" in n.meta:
                value = f"{n.meta['dtype']}{list(n.meta['shape'])}" + (" grad" if n.meta.get("requires_grad") else "")
            rows.append((n.op, n.name, _target_name(n.target), _fmt(n.args), value))
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        out = []
        for k, r in enumerate(rows):
            out.append("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
            if k == 0:
                out.append("  ".join("-" * w for w in widths))
        text = "\n".join(out)
        print(text)
        return text

    def __str__(self):
        return "graph():\n" + "\n".join("    " + n.format_node() for n in self.nodes)


def _short(target):
    if isinstance(target, str):
        return target
    name = getattr(target, "__name__", None) or type(target).__name__
    return name.split(".")[0] if hasattr(target, "_schema") else name.replace("Tensor.", "")


def _target_name(target):
    """How a target is written in the code: ``torch.ops.aten.mm.default``, ``torch.nn.functional.relu``."""
    if isinstance(target, str):
        return target
    if hasattr(target, "_schema"):
        return f"torch.ops.aten.{target.__name__}"
    if target is operator.getitem:
        return "operator.getitem"
    owner = getattr(target, "__self__", None)
    if isinstance(owner, property):            # a Tensor property's getter/setter: Tensor.data.__get__
        accessor = owner.fget if target.__name__ == "__get__" else owner.fset
        return f"torch.{accessor.__qualname__}.{target.__name__}"
    name = getattr(target, "__qualname__", repr(target))
    if name.startswith("Tensor."):
        return "torch." + name
    import glasstorch
    from glasstorch.nn import functional
    for namespace, prefix in ((functional, "torch.nn.functional"), (glasstorch, "torch")):
        if getattr(namespace, name, None) is target:
            return f"{prefix}.{name}"
    return f"{getattr(target, '__module__', '')}.{name}".replace("glasstorch", "torch")


def for_each_node(value, fn):
    """Call ``fn`` on every Node in ``value`` (an argument: a Node, or lists, tuples and dicts of them)."""
    if isinstance(value, Node):
        fn(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            for_each_node(v, fn)
    elif isinstance(value, dict):
        for v in value.values():
            for_each_node(v, fn)


def _fmt(value):
    if isinstance(value, Node):
        return value.name
    if isinstance(value, tuple):
        return "(" + ", ".join(_fmt(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, list):
        return "[" + ", ".join(_fmt(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_fmt(v)}" for k, v in value.items()) + "}"
    return repr(value)
