"""glasstorch.inspection: seeing what autograd does.

    draw(*tensors, params=None)   a drawing of the backward graph (.dot, .svg(), .save(path))
    graph_signature(*tensors)      the graph's structure, comparable with real torch's
"""
from .draw import draw, Drawing, graph_signature  # noqa: F401

__all__ = ["draw", "Drawing", "graph_signature"]
