"""``torch.onnx``, importable: programs import it at the top even when they export only on request
(pytorch/examples' word_language_model: ``import torch.onnx``, then ``torch.onnx.export`` only with
``--onnx-export``), and library code asks ``torch.onnx.is_in_onnx_export()`` inside ``forward``.

:func:`export` writes ONNX from the graph glasstorch's ``torch.compile`` captures (``_export.py``)
when the ``onnx`` package is installed (``pip install onnx``); without it, it raises a RuntimeError
naming that line, and writes nothing. It covers the ops whose ONNX form it knows (Linear, the common
activations and element-wise arithmetic, mm, sum); another op raises
:class:`UnsupportedOperatorError` naming it.
"""
from ._export import UnsupportedOperatorError

__all__ = ["export", "is_in_onnx_export", "is_onnxrt_backend_supported", "UnsupportedOperatorError"]


def is_in_onnx_export() -> bool:
    """Whether an ONNX export is running: never, in glasstorch (torch answers False outside export)."""
    return False


def is_onnxrt_backend_supported() -> bool:
    """Whether ``torch.compile(backend="onnxrt")`` can run: not in glasstorch."""
    return False


def export(model, args=(), f=None, *, input_names=None, output_names=None, opset_version=None, **kwargs):
    """``torch.onnx.export``: capture ``model(*args)`` and write it to ``f`` as ONNX (opset 18 unless
    ``opset_version``); returns the ``onnx.ModelProto``. torch 2.x returns an ``ONNXProgram`` (its
    dynamo exporter); glasstorch returns the proto that program would hold. ``dynamic_axes`` and
    the other options are accepted and ignored: shapes are those of ``args``."""
    from ._export import export as write
    return write(model, args, f, input_names=input_names, output_names=output_names, opset_version=opset_version,
                 **kwargs)
