"""d2l 1.0.3 and glasstorch in one environment, with the install line docs/binding.md gives.

d2l 1.0.3 pins numpy==1.23.5, matplotlib==3.7.2, matplotlib-inline==0.1.6, pandas==2.0.3, scipy==1.10.1 and
jupyter==1.0.0. glasstorch supports numpy>=1.23.5; the one extra pin is IPython's: matplotlib-inline 0.1.6
imports `backend2gui`, which IPython 9 removed, so every d2l plot fails under IPython 9 ("cannot import
name 'backend2gui' from 'IPython.core.pylabtools'"). The slow test installs the line into a fresh venv
and trains d2l's own model with d2l's own Trainer (plots included) under the binding."""
import os
import re
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INSTALL_LINE = "python3 -m pip install 'glasstorch[vision]' d2l==1.0.3 'ipython<9'"


def test_the_documented_install_line_is_the_tested_one():
    with open(os.path.join(ROOT, "docs", "binding.md")) as f:
        assert INSTALL_LINE in f.read()


def test_numpy_floor_admits_d2l_pin():
    packaging = pytest.importorskip("packaging.specifiers")
    with open(os.path.join(ROOT, "pyproject.toml")) as f:
        numpy_requirement = re.search(r'"numpy([^"]*)"', f.read()).group(1)
    assert "1.23.5" in packaging.SpecifierSet(numpy_requirement)


D2L_PROGRAM = textwrap.dedent('''
    import matplotlib
    matplotlib.use("Agg")
    import glasstorch
    glasstorch.as_torch()
    from d2l import torch as d2l
    import torch
    assert d2l.torch is glasstorch and d2l.nn.Linear is glasstorch.nn.Linear
    data = d2l.SyntheticRegressionData(w=torch.tensor([2, -3.4]), b=4.2)
    model = d2l.LinearRegression(lr=0.03)
    trainer = d2l.Trainer(max_epochs=3)
    trainer.fit(model, data)                     # d2l's loop, its ProgressBoard drawing each epoch
    w, b = model.get_w_b()
    assert (w.reshape(-1) - data.w).abs().max() < 0.1, w
    assert len(model.board.fig.axes[0].lines) >= 2  # train_loss and val_loss were plotted
    animator = d2l.Animator(xlabel="epoch", legend=["a"])
    animator.add(1, [0.5])
    print("d2l ok", float((b - data.b).abs()))
''')


@pytest.mark.slow
def test_d2l_103_installs_and_trains_beside_glasstorch(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python3")
    line = INSTALL_LINE.replace("python3", python).replace("'glasstorch[vision]'", f"'{ROOT}[vision]'")
    subprocess.run(line, shell=True, check=True, timeout=1800)
    out = subprocess.run([python, "-c", D2L_PROGRAM], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "d2l ok" in out.stdout
    check = subprocess.run([python, "-m", "pip", "check"], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout
