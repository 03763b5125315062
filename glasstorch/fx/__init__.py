"""torch.fx, the part glasstorch needs: a graph of op calls (:class:`Graph`, :class:`Node`) and a
module that runs it (:class:`GraphModule`). ``torch.compile`` captures a function into one of these
(``glasstorch/_dynamo``); ``print(gm.code)`` shows it as Python, ``gm.graph.print_tabular()`` as a
table; an :class:`Interpreter` runs it node by node (``passes.shape_prop.ShapeProp`` records every
value's shape, on meta tensors without computing)."""
from .graph import Graph, Node
from .graph_module import GraphModule
from .interpreter import Interpreter

__all__ = ["Graph", "Node", "GraphModule", "Interpreter"]
