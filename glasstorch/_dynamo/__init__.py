"""torch._dynamo, glasstorch's way: capture a function's ops into a graph by watching them run
(``capture.py``), guard what the capture assumed (``guards.py``), run the graph as generated array
code with one ``CompiledFunctionBackward`` node (``codegen.py``), and cache per guard set
(``eval_frame.py``). ``docs/compile.md`` walks one example through each stage."""
from . import config, exc
from .eval_frame import OptimizedModule, compile, disable, reset, is_compiling
from .explain import explain, ExplainOutput
from .capture import GraphBreak
from ._logging import set_logs


def list_backends(exclude_tags=()):
    return ["aot_eager", "eager", "glass", "inductor"]


__all__ = ["OptimizedModule", "config", "exc", "disable", "reset", "explain", "ExplainOutput", "is_compiling",
           "list_backends", "set_logs", "GraphBreak"]
