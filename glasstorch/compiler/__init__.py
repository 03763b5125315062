"""torch.compiler: the public face of compile (``glasstorch/_dynamo`` does the work)."""
from .._dynamo.eval_frame import compile, disable, reset, is_compiling
from .._dynamo.explain import explain


def is_dynamo_compiling():
    return is_compiling()


def allow_in_graph(fn):
    """Accepted for torch's scripts: glasstorch captures at the op level, so a function's ops are
    in the graph whenever they are on the seam."""
    return fn


__all__ = ["compile", "disable", "reset", "is_compiling", "is_dynamo_compiling", "allow_in_graph", "explain"]
