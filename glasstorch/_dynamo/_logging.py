"""What ``TORCH_LOGS`` does for compile, glasstorch's way: ``GLASSTORCH_LOGS=graph_code,recompiles``
(or ``TORCH_LOGS``) in the environment, or ``glasstorch._dynamo.set_logs(graph_code=True)``, prints
the captured graph and the generated code, guards, graph breaks and recompiles to stderr."""
import os
import sys

ARTIFACTS = ("graph_code", "graph_breaks", "recompiles", "guards")
_enabled = set()


def set_logs(**artifacts):
    """``set_logs(graph_code=True, graph_breaks=True, recompiles=True, guards=True)``; no argument
    switches everything off (torch._logging.set_logs)."""
    unknown = set(artifacts) - set(ARTIFACTS)
    if unknown:
        raise ValueError(f"Unrecognized log artifacts: {sorted(unknown)}; known: {list(ARTIFACTS)}")
    _enabled.clear()
    _enabled.update(k for k, v in artifacts.items() if v)


def _from_environment():
    names = set()
    for var in ("GLASSTORCH_LOGS", "TORCH_LOGS"):
        for part in os.environ.get(var, "").split(","):
            part = part.strip().lstrip("+")
            if part in ("dynamo", "all"):
                names.update(ARTIFACTS)
            elif part in ARTIFACTS:
                names.add(part)
    return names


def log(artifact, text):
    if artifact in _enabled or artifact in _from_environment():
        print(f"[glasstorch {artifact}] {text}", file=sys.stderr)
