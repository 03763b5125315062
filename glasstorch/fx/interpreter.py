"""torch.fx.Interpreter: runs a graph node by node, one overridable method per node.

``Interpreter(gm).run(*args)`` binds the placeholders to ``args`` in order, calls each node's
target on the values its arguments name, and returns what the output node names. A subclass
changes one step -- ``run_node`` to look at every value as it is made (``passes.shape_prop`` records
each one's shape), ``call_function`` to replace an op -- and keeps the walk. ``GraphModule.forward``
is this walk, so what an Interpreter sees is what a GraphModule runs."""
import operator

from .graph import Node


class Interpreter:
    def __init__(self, module, garbage_collect_values=True, graph=None):
        self.module = module
        self.graph = graph if graph is not None else module.graph
        self.garbage_collect_values = garbage_collect_values   # (accepted; values live until run returns)
        self.env = {}

    def run(self, *args):
        """The graph's result on ``args`` (one per placeholder, in order)."""
        self.env = {}
        self._args = iter(args)
        try:
            for n in self.graph.nodes:
                value = self.run_node(n)
                if n.op == "output":
                    return value
                self.env[n] = value
        finally:
            self.env, self._args = {}, None

    def run_node(self, n):
        """Run one node: its op's method (``placeholder``, ``call_function``, ``output``) with its
        arguments' values."""
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        result = getattr(self, n.op)(n.target, args, kwargs)
        if n.meta.get("island"):
            # a call torch.compile kept whole (an eager island): its getitem nodes number the tensors
            # it returned, flattened (one tensor, or the three of LSTM's (out, (h, c)))
            from .._dynamo.capture import _flat_tensors
            return _flat_tensors(result)
        return result

    def fetch_args_kwargs_from_env(self, n):
        return self.map_nodes_to_values(n.args, n), self.map_nodes_to_values(n.kwargs, n)

    def map_nodes_to_values(self, value, n):
        """``value`` with each Node replaced by the value it computed (``n``: the node asking)."""
        if isinstance(value, Node):
            return self.env[value]
        if isinstance(value, tuple):
            return tuple(self.map_nodes_to_values(v, n) for v in value)
        if isinstance(value, list):
            return [self.map_nodes_to_values(v, n) for v in value]
        if isinstance(value, dict):
            return {k: self.map_nodes_to_values(v, n) for k, v in value.items()}
        return value

    def placeholder(self, target, args, kwargs):
        try:
            return next(self._args)
        except StopIteration:
            raise RuntimeError(f"Expected positional argument for parameter {target}, but one was not passed "
                               "in!") from None

    def call_function(self, target, args, kwargs):
        # (a multi-output call is read by operator.getitem nodes, on the value it returned)
        return args[0][args[1]] if target is operator.getitem else target(*args, **kwargs)

    def output(self, target, args, kwargs):
        return args[0]
