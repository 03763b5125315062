"""``torch.onnx``, importable: programs import it at the top even when they export only on request
(pytorch/examples' word_language_model: ``import torch.onnx``, then ``torch.onnx.export`` only with
``--onnx-export``), and library code asks ``torch.onnx.is_in_onnx_export()`` inside ``forward``.

glasstorch has no ONNX exporter yet: :func:`export` raises a RuntimeError that says so, instead of
writing a file that is not there. (Writing ONNX from the graph glasstorch's compile captures is
planned; until then, export with real torch.)
"""

__all__ = ["export", "is_in_onnx_export", "is_onnxrt_backend_supported"]


def is_in_onnx_export() -> bool:
    """Whether an ONNX export is running: never, in glasstorch (torch answers False outside export)."""
    return False


def is_onnxrt_backend_supported() -> bool:
    """Whether ``torch.compile(backend="onnxrt")`` can run: not in glasstorch."""
    return False


def export(model, args=(), f=None, *positional, **kwargs):
    """``torch.onnx.export``: not implemented in glasstorch; raises RuntimeError."""
    raise RuntimeError(
        "torch.onnx.export: glasstorch has no ONNX exporter yet, so no file was written"
        + (f" to {f!r}" if isinstance(f, str) else "")
        + ". Export the model with real torch (the state_dict glasstorch saves loads there unchanged)."
    )
