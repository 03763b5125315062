"""torch.onnx is importable (programs import it at the top), says False to is_in_onnx_export as torch
does outside an export, and export() refuses with a RuntimeError instead of pretending."""
import subprocess
import sys

import pytest

import glasstorch
import glasstorch.onnx


def test_is_in_onnx_export_is_false_like_torch():
    torch = pytest.importorskip("torch")
    import torch.onnx
    assert glasstorch.onnx.is_in_onnx_export() is torch.onnx.is_in_onnx_export() is False


def test_export_raises_and_names_the_file(tmp_path):
    with pytest.raises(RuntimeError, match="no ONNX exporter.*model.onnx"):
        glasstorch.onnx.export(glasstorch.nn.Linear(2, 2), (glasstorch.ones(1, 2),), str(tmp_path / "model.onnx"))
    assert not (tmp_path / "model.onnx").exists()


def test_import_torch_onnx_under_the_binding():
    code = "import glasstorch; glasstorch.as_torch(); import torch.onnx; print(torch.onnx is glasstorch.onnx)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "True", out.stderr
