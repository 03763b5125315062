"""`import glasstorch` imports NumPy and nothing optional: ml_dtypes (bfloat16), CuPy (GPUs) and
threadpoolctl (BLAS threads) load when first used, and behave the same as when loaded eagerly."""
import os
import subprocess
import sys
import textwrap

import pytest

OPTIONAL = ("ml_dtypes", "cupy", "threadpoolctl", "scipy", "mpi4py")


def run(code, **env):
    environ = {k: v for k, v in os.environ.items() if k != "GLASSTORCH_SEATBELT"}
    environ.update(env)
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                         env=environ, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_import_glasstorch_does_not_import_ml_dtypes():
    assert run("import sys, glasstorch; print('ml_dtypes' in sys.modules)") == ["False"]


def test_import_glasstorch_imports_no_other_optional_package():
    code = f"import sys, glasstorch; print(*[m in sys.modules for m in {OPTIONAL[1:]!r}])"
    assert run(code) == ["False"] * (len(OPTIONAL) - 1)


def test_cupy_is_imported_by_the_first_question_about_gpus(tmp_path):
    """A stand-in cupy (no runtime inside) shows when glasstorch imports it: not at import, not for
    CPU work, but at torch.cuda.is_available(), which then answers False as without a GPU."""
    (tmp_path / "cupy").mkdir()
    (tmp_path / "cupy" / "__init__.py").write_text("class ndarray: pass\n")
    code = """
        import sys, glasstorch as g
        x = g.ones(2, requires_grad=True); (x * 2).sum().backward()
        print('cupy' in sys.modules, x.device, g.backends.cuda.is_built())
        print(g.cuda.is_available(), g.cuda.device_count(), 'cupy' in sys.modules)
    """
    assert run(code, PYTHONPATH=str(tmp_path)) == ["False", "cpu", "True", "False", "0", "True"]


BF16_FIRST_USES = {   # (factories and casts ask for bfloat16 by name: the rest of the suite covers them)
    "an ml_dtypes array": "import ml_dtypes, numpy as np; t = g.tensor(np.ones(2, dtype=ml_dtypes.bfloat16))",
    "from_numpy": "import ml_dtypes, numpy as np; t = g.from_numpy(np.ones(2, dtype=ml_dtypes.bfloat16))",
    "torch.load": "import io; b = io.BytesIO(); g.save(g.ones(2).bfloat16(), b); b.seek(0); t = g.load(b)",
}


@pytest.mark.parametrize("first_use", BF16_FIRST_USES.values(), ids=BF16_FIRST_USES.keys())
def test_bfloat16_works_whatever_its_first_use(first_use):
    pytest.importorskip("ml_dtypes")
    code = f"""
        import glasstorch as g
        {first_use}
        u = (t * 3).float()
        print(t.dtype, t.dtype.itemsize, t.is_floating_point(), u.tolist(), t.requires_grad_().requires_grad)
    """
    out = run(code)
    assert out[0] == "torch.bfloat16" and out[1] == "2" and out[2] == "True" and out[-1] == "True"


def test_op_code_is_generated_at_first_use_not_at_import():
    """Each op's generated call and each node's code are compiled when first used: at import, none
    but the few ops import itself runs; after one mul, mul's call and MulBackward0's code exist."""
    code = """
        import glasstorch as g
        from glasstorch.ops import aten
        ops = [op for p in vars(aten).values() if hasattr(p, '_overloads') for op in p._overloads.values()]
        compiled = lambda: sum('_namespace' in type(op).__dict__ for op in ops)
        before = compiled()
        x = g.ones(2, requires_grad=True); (x * x).sum().backward()
        print(len(ops), before, '_namespace' in type(aten.mul.Tensor).__dict__, x.grad.sum().item())
    """
    n_ops, compiled_at_import, mul_compiled, grad = run(code)
    assert int(n_ops) > 300 and int(compiled_at_import) < int(n_ops) // 10
    assert mul_compiled == "True" and grad == "4.0"
