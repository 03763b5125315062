"""GLASSTORCH_SEATBELT=1 at `import glasstorch`, also for code with no source file (python -c)."""
import os
import subprocess
import sys

SCRIPT = """
import glasstorch as torch
w = torch.randn(3, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
for i in range(3):
    loss = (w * w).sum(); loss.backward(); opt.step()
"""


def test_environment_seatbelt_warns_for_python_dash_c():
    env = dict(os.environ, GLASSTORCH_SEATBELT="1")
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "<string>:6: MissingZeroGradWarning" in out.stderr


def test_without_the_variable_nothing_is_said():
    env = {k: v for k, v in os.environ.items() if k != "GLASSTORCH_SEATBELT"}
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "Warning" not in out.stderr
