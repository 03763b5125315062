"""The README's main job: python -m glasstorch train / linreg."""
import re
import subprocess
import sys

import pytest


def run(*args, cwd):
    out = subprocess.run([sys.executable, "-m", "glasstorch", *args], cwd=cwd, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.replace("\r", "\n")


def test_train_reports_accuracy_saves_a_model_torch_can_load_and_draws_the_graph(tmp_path):
    out = run("train", "--epochs", "3", "--out", str(tmp_path), cwd=tmp_path)
    accs = [float(a) for a in re.findall(r"held-out accuracy ([0-9.]+)", out)]
    assert len(accs) == 3 and accs[-1] > 0.6          # it learns (chance is 0.1)
    assert "seatbelt: no traps found in" in out        # the ordinary loop trips no trap
    assert "NllLossBackward0" in out and "ConvolutionBackward0" in out
    assert (tmp_path / "digits_lenet_graph.svg").read_text().lstrip().startswith(("<?xml", "<svg", "<!--"))
    torch = pytest.importorskip("torch")
    state = torch.load(tmp_path / "digits_lenet.pt")   # weights_only=True: real PyTorch reads our file
    assert list(state)[:2] == ["0.weight", "0.bias"] and tuple(state["0.weight"].shape) == (6, 1, 3, 3)


def test_linreg_learns_the_true_parameters(tmp_path):
    out = run("linreg", cwd=tmp_path)
    w = [float(x) for x in re.search(r"learned w = \[([^\]]+)\]", out).group(1).split(",")]
    b = float(re.search(r"learned b = ([-0-9.]+)", out).group(1))
    assert abs(w[0] - 2.0) < 0.01 and abs(w[1] + 3.4) < 0.01 and abs(b - 4.2) < 0.01
    assert "AccumulateGrad  <- w (2,)" in out
