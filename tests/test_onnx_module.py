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
    model = gnn.Sequential(gnn.Conv2d(1, 2, 3), gnn.MaxPool2d(2, return_indices=True))
    with pytest.raises(glasstorch.onnx.UnsupportedOperatorError, match="max_pool2d"):
        glasstorch.onnx.export(model, (glasstorch.ones(1, 1, 5, 5),), str(tmp_path / "pool.onnx"))
    assert not (tmp_path / "pool.onnx").exists()
    model = gnn.Sequential(gnn.Conv2d(1, 2, 3), gnn.AdaptiveAvgPool2d(2))      # 3 -> 2: no ONNX pool computes it
    with pytest.raises(glasstorch.onnx.UnsupportedOperatorError, match="_adaptive_avg_pool2d"):
        glasstorch.onnx.export(model, (glasstorch.ones(1, 1, 5, 5),), str(tmp_path / "pool.onnx"))


def _cnns():
    glasstorch.manual_seed(0)
    return {
        "lenet": (gnn.Sequential(gnn.Conv2d(2, 3, 3, padding=1), gnn.ReLU(), gnn.MaxPool2d(2), gnn.AvgPool2d(2),
                                 gnn.AdaptiveAvgPool2d(1), gnn.Flatten(), gnn.Linear(3, 4), gnn.BatchNorm1d(4)),
                  (2, 2, 8, 8)),
        "strided_grouped": (gnn.Sequential(gnn.Conv2d(2, 4, 3, stride=2, padding=2, dilation=2, groups=2, bias=False),
                                           gnn.BatchNorm2d(4), gnn.ReLU(),
                                           gnn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True)), (1, 2, 11, 11)),
        "conv1d": (gnn.Sequential(gnn.Conv1d(2, 3, 3), gnn.MaxPool1d(2), gnn.AvgPool1d(2, ceil_mode=True)),
                   (2, 2, 13)),
        "transposed": (gnn.Sequential(gnn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, output_padding=1),
                                      gnn.AdaptiveAvgPool2d(2), gnn.AvgPool2d(2, padding=1, count_include_pad=False)),
                       (1, 2, 4, 4)),
        "conv3d": (gnn.Sequential(gnn.Conv3d(1, 2, 3, padding=1), gnn.MaxPool3d(2), gnn.AvgPool3d(2)), (1, 1, 4, 4, 4)),
    }


@pytest.mark.parametrize("name", sorted(_cnns()))
def test_export_of_convolutions_and_pooling_runs_in_onnxruntime(tmp_path, name):
    """Convolutions and pooling of every kind the exporter writes, checked by onnxruntime against
    glasstorch's outputs (the running statistics of batch norm moved off their defaults first)."""
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    model, shape = _cnns()[name]
    rng = np.random.default_rng(1)
    with glasstorch.no_grad():
        for m in model.modules():
            if isinstance(m, (gnn.BatchNorm1d, gnn.BatchNorm2d)):
                m.running_mean.copy_(glasstorch.tensor(rng.standard_normal(m.num_features).astype("float32")))
                m.running_var.copy_(glasstorch.tensor(rng.uniform(0.5, 2, m.num_features).astype("float32")))
    model.eval()
    x = glasstorch.tensor(rng.standard_normal(shape).astype("float32"))
    path = str(tmp_path / f"{name}.onnx")
    glasstorch.onnx.export(model, (x,), path, input_names=["x"])
    got = ort.InferenceSession(path).run(None, {"x": x.numpy()})[0]
    np.testing.assert_allclose(got, model(x).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_import_torch_onnx_under_the_binding():
    code = "import glasstorch; glasstorch.as_torch(); import torch.onnx; print(torch.onnx is glasstorch.onnx)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "True", out.stderr
