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
        compiled = lambda: sum('_namespace' in op.__dict__ for op in ops)
        before = compiled()
        x = g.ones(2, requires_grad=True); (x * x).sum().backward()
        print(len(ops), before, '_namespace' in aten.mul.Tensor.__dict__, x.grad.sum().item())
    """
    n_ops, compiled_at_import, mul_compiled, grad = run(code)
    assert int(n_ops) > 300 and int(compiled_at_import) < int(n_ops) // 10
    assert mul_compiled == "True" and grad == "4.0"


def test_ops_are_declared_at_first_use_not_at_import():
    """``defop`` keeps each declaration as given; ``import glasstorch`` parses no schema and makes no
    node class (that was a third of the import). The first call declares the op, and reading what
    only the declaration gives (``_schema``, ``node``) does too, as do the module-level node names."""
    code = """
        import glasstorch as g
        from glasstorch import _ops
        from glasstorch.ops import aten, pointwise
        ops = [op for p in vars(aten).values() if hasattr(p, '_overloads') for op in p._overloads.values()]
        undeclared = lambda: sum(not op._declared for op in ops)
        print(len(ops), undeclared())
        x = g.ones(2, requires_grad=True); (x * x).sum().backward()
        print(type(aten.mul.Tensor).__name__, aten.mul.Tensor.node.__name__)
        print(not aten.tanh.default._declared, aten.tanh.default._schema,
              aten.tanh.default._declared, pointwise.TanhBackward0 is aten.tanh.default.node)
        print(not aten.sigmoid.default._declared, pointwise.SigmoidBackward0.__name__,
              aten.sigmoid.default._declared, undeclared() < len(ops) - 3)
        print(len({type(op) for op in ops}))   # (one class, whatever each op has been through)
    """
    out = run(code)
    assert int(out[0]) > 300 and out[1] == out[0]          # none declared by the import
    assert out[2] == "OpOverload" and out[3] == "MulBackward0"
    assert out[4:] == ["True", "tanh(Tensor", "self)", "->", "Tensor", "True", "True",
                       "True", "SigmoidBackward0", "True", "True", "1"]


def test_every_op_declaration_is_valid():
    """Declarations are read at first use, so a mistake in one (a formula for an argument the schema
    lacks, a malformed schema) would surface only when a program calls that op: declare them all
    here (the torch.nn families too), and check what each declares."""
    from glasstorch import _ops
    from glasstorch.ops import aten, pointwise
    from glasstorch.autograd.graph import FormulaNode
    getattr(aten, "native_batch_norm")    # (loads the torch.nn op families)
    ops = _ops.declare_all()
    assert len(ops) > 400
    for op in ops:
        assert op._declared and type(op) is _ops.OpOverload, op
        assert f"{op._schema.name}.{op._schema.overload}" == op.__name__ and op.name() == f"aten::{op.__name__}"
        assert op.overloadpacket is getattr(aten, op._schema.name)
        assert op.node is None or issubclass(op.node, FormulaNode) and op.node._schema is not None
        if op.node is not None and not op._inplace:
            assert op.node._op is op
    assert pointwise.AddBackward0 is aten.add.Tensor.node
    with pytest.raises(AttributeError, match="has no attribute 'NoSuchBackward0'"):
        pointwise.NoSuchBackward0
    with pytest.raises(AttributeError, match="has no attribute 'SumBackward0'"):   # (reduction's, not pointwise's)
        pointwise.SumBackward0


def test_a_bad_declaration_is_reported_at_first_use():
    from glasstorch import _ops
    op = _ops.defop("_glasstorch_test_bad(Tensor self) -> Tensor", kernel=lambda self: self, node="BadBackward0",
                    other=lambda grad: grad)
    try:
        for _ in range(2):          # (the declaration is kept: each use reports it again)
            with pytest.raises(ValueError, match="formula for 'other', which is not a tensor input"):
                op._schema
    finally:
        del _ops.aten._glasstorch_test_bad


def test_threads_racing_for_an_undeclared_op_get_one_declaration():
    code = """
        import threading
        import glasstorch as g
        from glasstorch.ops import aten
        op = aten.special_i1e.default
        barrier, seen = threading.Barrier(4), []
        def use():
            barrier.wait()
            seen.append((op.node, g.special.i1e(g.ones(2, requires_grad=True)).grad_fn.__class__))
        threads = [threading.Thread(target=use) for _ in range(4)]
        for t in threads: t.start()
        for t in threads: t.join()
        print(len(seen), len({id(n) for pair in seen for n in pair}), seen[0][0].__name__)
    """
    assert run(code) == ["4", "1", "SpecialI1EBackward0"]


def test_hand_written_nodes_have_their_namespace_in_name():
    """torch writes NotImplemented and CopyBackwards by hand: name() says torch::autograd::<name>."""
    import glasstorch as g
    import torch
    for L in (g, torch):
        s = L.ones(3, requires_grad=True).scatter(0, L.tensor([0, 1, 2]), 2.0, reduce="add")
        x = L.randn(3, requires_grad=True)
        gx, = L.autograd.grad(L.nn.functional.hardsigmoid(x).sum(), x, create_graph=True)
        c = L.zeros(3).copy_(L.ones(3, requires_grad=True))
        assert [s.grad_fn.name(), gx.grad_fn.name(), c.grad_fn.name()] == [
            "torch::autograd::NotImplemented", "torch::autograd::NotImplemented", "torch::autograd::CopyBackwards"], L


# the subpackages `import glasstorch` leaves for first use (glasstorch/__init__.py's _LAZY_MODULES)
LAZY_SUBPACKAGES = ("nn", "optim", "utils", "distributions", "datasets", "inspection", "vision", "_dynamo",
                    "distributed", "onnx", "hub", "fft", "special", "linalg", "cuda", "jit", "fx", "testing",
                    "profiler", "amp", "backends", "serialization", "func", "compiler", "multiprocessing")


def test_import_glasstorch_leaves_the_subpackages_for_first_use():
    code = f"""
        import sys, glasstorch
        print(*[m for m in {LAZY_SUBPACKAGES!r} if 'glasstorch.' + m in sys.modules] or ['none'])
        print(*[m for m in ('glasstorch.ops.nn_conv', 'glasstorch.ops.nn_pool', 'glasstorch.ops.nn_rnn')
                if m in sys.modules] or ['none'])
        print(all(m in dir(glasstorch) for m in ('nn', 'linalg', 'cuda', 'jit', 'fft')))
    """
    assert run(code) == ["none", "none", "True"]


def test_lazy_subpackages_work_however_they_are_reached():
    """Attribute, `import glasstorch.X`, `from glasstorch import X`, and the torch binding all give the
    one module object, whichever comes first."""
    code = """
        import glasstorch
        t = glasstorch.tensor([3.0, 4.0])
        print(glasstorch.linalg.vector_norm(t).item(), glasstorch.fft.fft(t).shape[0], glasstorch.cuda.is_available())
        import glasstorch.linalg, glasstorch.fft
        from glasstorch import nn, jit
        torch = glasstorch.as_torch()
        import torch.nn.functional as F
        import torch.linalg as L
        import torch.cuda, torch.special
        print(F is glasstorch.nn.functional is nn.functional, L is glasstorch.linalg, torch.cuda is glasstorch.cuda,
              jit is glasstorch.jit, torch.special is glasstorch.special, torch.special.expit(t).shape[0])
    """
    assert run(code) == ["5.0", "2", "False", "True", "True", "True", "True", "True", "2"]


def test_import_through_the_binding_first():
    """`import torch.linalg` before anything touched glasstorch.linalg (python -m glasstorch run)."""
    code = """
        import glasstorch; glasstorch.as_torch()
        import torch.linalg, torch.return_types
        import glasstorch.linalg
        r = torch.linalg.svd(torch.eye(2))
        print(torch.linalg is glasstorch.linalg, type(r).__name__, isinstance(r, torch.return_types.linalg_svd))
    """
    assert run(code) == ["True", "linalg_svd", "True"]
