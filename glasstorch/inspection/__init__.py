"""glasstorch.inspection: seeing what autograd does.

    draw(*tensors, params=None)   a drawing of the backward graph (.dot, .svg(), .save(path))
    draw_model(model, *inputs)     the same for model(*inputs), without running it (on the meta device)
    graph_signature(*tensors)      the graph's structure, comparable with real torch's
    record()                       a timeline of node creation, backward visits, accumulation, freeing
    summary(tensor)                node count, depth, leaves, bytes held by saved values
    explain(tensor)                why .grad is None, in one sentence (.cause, .filename, .lineno)
    seatbelt()                     warnings for the silent training traps (TrapWarning subclasses)

Nothing here costs anything until a ``record()`` or ``seatbelt()`` block opens (or the environment
sets ``GLASSTORCH_SEATBELT=1``, which puts a seatbelt around the whole script from the moment this
package is imported).
"""
from .draw import draw, draw_model, Drawing, graph_signature  # noqa: F401
from .record import record, Recording, summary, GraphSummary, Event  # noqa: F401
from .explain import explain, Explanation  # noqa: F401
from .seatbelt import (seatbelt, Seatbelt, expect_accumulation, TrapWarning, MissingZeroGradWarning,  # noqa: F401
                       ProbabilitiesToCrossEntropyWarning, TrainModeInferenceWarning, GraphKeptAliveWarning,
                       GraphCutWarning, ForcedRequiresGradWarning, NonLeafParameterWarning, NonFiniteWarning,
                       UnevenBatchWarning, _from_environment)

__all__ = ["draw", "draw_model", "Drawing", "graph_signature", "record", "Recording", "summary", "GraphSummary", "Event",
           "explain", "Explanation", "seatbelt", "Seatbelt", "expect_accumulation", "TrapWarning",
           "MissingZeroGradWarning", "ProbabilitiesToCrossEntropyWarning", "TrainModeInferenceWarning",
           "GraphKeptAliveWarning", "GraphCutWarning", "ForcedRequiresGradWarning", "NonLeafParameterWarning",
           "NonFiniteWarning", "UnevenBatchWarning"]

_environment_seatbelt = _from_environment()
