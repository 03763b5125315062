"""torch.onnx is importable (programs import it at the top), says False to is_in_onnx_export as torch
does outside an export, and export() writes the graph torch.compile captures as ONNX -- checked by
running the file with onnxruntime against glasstorch's outputs -- or, without the onnx package or for
an op it cannot write, raises a RuntimeError that says why and writes nothing."""
import subprocess
import sys

import numpy as np
import pytest

import glasstorch
import glasstorch.nn as gnn
import glasstorch.onnx


def test_is_in_onnx_export_is_false_like_torch():
    torch = pytest.importorskip("torch")
    import torch.onnx
    assert glasstorch.onnx.is_in_onnx_export() is torch.onnx.is_in_onnx_export() is False


def test_export_without_the_onnx_package_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)          # (import onnx now raises ImportError)
    with pytest.raises(RuntimeError, match="pip install onnx"):
        glasstorch.onnx.export(gnn.Linear(2, 2), (glasstorch.ones(1, 2),), str(tmp_path / "model.onnx"))
    assert not (tmp_path / "model.onnx").exists()


def _mlp():
    glasstorch.manual_seed(0)
    return gnn.Sequential(gnn.Linear(6, 16), gnn.ReLU(), gnn.Dropout(0.5), gnn.Linear(16, 8), gnn.Tanh(),
                          gnn.Linear(8, 3), gnn.Sigmoid())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_export_runs_in_onnxruntime_with_glasstorchs_outputs(tmp_path, dtype):
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    model = _mlp().to(getattr(glasstorch, dtype))
    model.train()
    x = glasstorch.tensor(np.random.default_rng(0).standard_normal((4, 6)).astype(dtype))
    path = str(tmp_path / "mlp.onnx")
    glasstorch.onnx.export(model, (x,), path, input_names=["x"], output_names=["y"])
    assert model.training                                 # exported in eval mode (no dropout), mode restored
    model.eval()
    got = ort.InferenceSession(path).run(None, {"x": x.numpy()})[0]
    np.testing.assert_allclose(got, model(x).detach().numpy(), rtol=1e-6, atol=1e-7)

    def fn(a, b):
        return ((a * 2 - b) / 3).exp().sum(1), glasstorch.mm(a, b.t()).sum()
    a, b = (glasstorch.tensor(np.random.default_rng(k).standard_normal((3, 5)).astype(dtype)) for k in (1, 2))
    glasstorch.onnx.export(fn, (a, b), path)
    got = ort.InferenceSession(path).run(None, {"arg0": a.numpy(), "arg1": b.numpy()})
    for g, w in zip(got, fn(a, b)):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-6)


def test_export_of_an_op_it_cannot_write_names_it(tmp_path):
    pytest.importorskip("onnx")
    model = gnn.Sequential(gnn.Conv2d(1, 2, 3), gnn.ReLU())
    with pytest.raises(glasstorch.onnx.UnsupportedOperatorError, match="conv"):
        glasstorch.onnx.export(model, (glasstorch.ones(1, 1, 5, 5),), str(tmp_path / "conv.onnx"))
    assert not (tmp_path / "conv.onnx").exists()


def test_import_torch_onnx_under_the_binding():
    code = "import glasstorch; glasstorch.as_torch(); import torch.onnx; print(torch.onnx is glasstorch.onnx)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "True", out.stderr
