"""torch.fx.GraphModule: a captured graph you can print and call.

Calling it runs the graph's nodes one by one on Tensors (each op through autograd, as in eager);
it is what ``torch.compile(backend="eager")`` runs and what a user's backend receives. The fast
path is not here: ``glasstorch/_dynamo/codegen.py`` turns the same graph into array code."""
from .interpreter import Interpreter


class GraphModule:
    def __init__(self, root, graph, class_name="GraphModule"):
        self.graph = graph
        self._class_name = class_name
        # the tensors the graph reads that are not passed in (parameters, buffers): by placeholder name
        self._constants = dict(root) if isinstance(root, dict) else {}

    @property
    def code(self):
        return self.graph.python_code()

    def print_readable(self, print_output=True):
        text = f"class {self._class_name}(torch.nn.Module):\n" + \
            "".join("    " + line + "\n" for line in self.code.splitlines())
        if print_output:
            print(text)
        return text

    def __call__(self, *args):
        return self.forward(*args)

    def forward(self, *args):
        return Interpreter(self).run(*args)   # (the one walk over the nodes: interpreter.py)

    def __repr__(self):
        return self.print_readable(print_output=False)
