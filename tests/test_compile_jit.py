"""The optional compiled loops of the generated code (glasstorch/_dynamo/jit.py, numba): layer norm's
forward and backward and softmax's forward and backward on float32. With numba, they give eager's values and
gradients to float32 rounding (and torch's); without it, or with ``config.jit`` off, the generated code
calls the NumPy kernels and gives eager's bits. numba is imported only when such code is generated."""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import glasstorch as gt
from glasstorch._dynamo import config, jit


def _norm_softmax(lib, x, w, b, v):
    """layer norm over the last dim, softmax over it; v's transposed product makes the softmax's
    incoming gradient non-contiguous."""
    y = lib.nn.functional.layer_norm(x, (x.shape[-1],), w, b).softmax(-1)
    return (y * v.transpose(-1, -2)).sum() + (y * y).sum()


def _arrays(dtype, seed=0, shape=(3, 5, 16)):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype) * 2 + 0.5
    w = (1 + 0.3 * rng.standard_normal(shape[-1])).astype(dtype)
    b = (0.3 * rng.standard_normal(shape[-1])).astype(dtype)
    v = rng.standard_normal(shape[:-2] + (shape[-1], shape[-2])).astype(dtype)
    return [x, w, b, v]


def _run(fn, arrays, lib=gt):
    ts = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = fn(lib, *ts)
    out.backward()
    return out.detach().numpy(), [None if t.grad is None else t.grad.numpy() for t in ts]


def _compiled(arrays, fn=_norm_softmax):
    compiled = gt.compile(lambda *ts: fn(gt, *ts))
    compiled(*[gt.tensor(a, requires_grad=True) for a in arrays])     # the capture
    return compiled


def _jit_lines(code):
    return [line.strip() for line in code.splitlines() if "_jit_" in line]


def _runs_ok(script):
    """``script`` run in a fresh interpreter (what it imports is its own) prints ok."""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stdout + out.stderr


def test_compiled_loops_give_eager_and_torch_values_to_float32_rounding():
    pytest.importorskip("numba")
    arrays = _arrays("float32")
    compiled = _compiled(arrays)
    lines = _jit_lines(compiled.code)
    assert any(line.startswith("native_layer_norm = _jit_native_layer_norm_") for line in lines), compiled.code
    assert any("_jit_native_layer_norm_backward_" in line for line in lines), compiled.code
    assert any(line.startswith("softmax = _jit__softmax_") for line in lines), compiled.code
    assert any("_jit__softmax_backward_" in line for line in lines), compiled.code
    eager_out, eager_grads = _run(lambda lib, *ts: _norm_softmax(lib, *ts), arrays)
    torch_out, torch_grads = _run(_norm_softmax, arrays, torch)
    for _ in range(2):                      # (twice: nothing of one run is kept in the next)
        out, grads = _run(lambda lib, *ts: compiled(*ts), arrays)
        np.testing.assert_allclose(out, eager_out, rtol=1e-6)
        np.testing.assert_allclose(out, torch_out, rtol=1e-6)
        for g, e, t in zip(grads, eager_grads, torch_grads):
            scale = np.abs(t).max()
            np.testing.assert_allclose(g, e, rtol=0, atol=2e-6 * scale)
            np.testing.assert_allclose(g, t, rtol=0, atol=2e-6 * scale)
            # (torch's own float32 against a float64 reference is as far off)


def test_compiled_loops_propagate_nan_and_inf_as_eager():
    pytest.importorskip("numba")
    arrays = _arrays("float32", seed=1)
    arrays[0][1, 2, 3] = np.nan
    arrays[0][2, 0, 0] = np.inf
    compiled = _compiled(arrays)
    assert _jit_lines(compiled.code)
    out, grads = _run(lambda lib, *ts: compiled(*ts), arrays)
    eager_out, eager_grads = _run(_norm_softmax, arrays)
    assert np.isnan(out) and np.isnan(eager_out)
    for g, e in zip(grads, eager_grads):       # (nan where eager's is nan, nowhere else)
        assert np.isnan(e).any()
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5, equal_nan=True)


def test_compiled_softmax_of_masked_rows_as_eager():
    # attention's masks: -inf gives exactly 0, a row of -inf only is nan (as eager's and torch's), and values
    # far below the row's max (exp below float32's normals) give 0 where eager gives a subnormal or 0
    pytest.importorskip("numba")
    rng = np.random.default_rng(6)
    x = rng.standard_normal((4, 3, 32)).astype(np.float32) * 4
    x[0, 0, ::3] = -np.inf
    x[1, 2, :] = -np.inf
    x[2, 1, 5] = -95.0
    x[3, 0, 7] = 80.0
    # (the loop's max skips nan and finds it afterwards: a nan first or later, +inf, a row whose x - max overflows)
    x[2, 0, 0] = x[2, 2, 9] = np.nan
    x[3, 1, 4] = np.inf
    x[3, 2, :16], x[3, 2, 16] = -3e38, 3e38
    v = rng.standard_normal((4, 3, 32)).astype(np.float32)
    fn = lambda lib, x, v: (x.softmax(-1) * v).sum(-1)          # noqa: E731
    compiled = gt.compile(lambda x, v: fn(gt, x, v))
    compiled(gt.tensor(x), gt.tensor(v))
    assert any(line.startswith("softmax = _jit__softmax_") for line in _jit_lines(compiled.code)), compiled.code
    y = gt.compile(lambda x: x.softmax(-1))
    y(gt.tensor(x))
    got, eager = y(gt.tensor(x)).numpy(), gt.tensor(x).softmax(-1).numpy()
    want = torch.tensor(x).softmax(-1).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(eager))
    assert np.isnan(got[1, 2]).all() and (got[0, 0, ::3] == 0).all()
    nan_rows = np.isnan(got).all(-1)
    assert (nan_rows == np.isnan(got).any(-1)).all() and nan_rows.sum() == 4 and not nan_rows[3, 2]
    np.testing.assert_allclose(got, eager, rtol=2e-6, atol=1e-37, equal_nan=True)
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-37, equal_nan=True)
    np.testing.assert_allclose(compiled(gt.tensor(x), gt.tensor(v)).numpy(), fn(torch, torch.tensor(x), torch.tensor(v)),
                               rtol=1e-5, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("case", ["float64", "transposed input", "no affine", "softmax over dim 1",
                                  "softmax over an empty dim"])
def test_cases_the_loops_do_not_cover_call_the_numpy_kernels(case, monkeypatch):
    # (eager's bits: "no affine"'s ``* w`` sums w's gradient over the rows, which config.bias_grad_as_gemv
    # would do as a product with ones)
    monkeypatch.setattr(config, "bias_grad_as_gemv", False)
    def norm_of_transposed(lib, x, w, b, v):
        y = lib.nn.functional.layer_norm(x.transpose(0, 1), (x.shape[-1],), w, b)
        return (y * y).sum()

    def no_affine(lib, x, w, b, v):
        return (lib.nn.functional.layer_norm(x, (x.shape[-1],)) * w).sum()

    def softmax_dim1(lib, x, w, b, v):
        return (x.softmax(1) * x).sum()

    def softmax_empty(lib, x, w, b, v):
        return (x[:, :, :0].softmax(-1) * 2).sum() + x.sum()
    fn = {"float64": _norm_softmax, "transposed input": norm_of_transposed, "no affine": no_affine,
          "softmax over dim 1": softmax_dim1, "softmax over an empty dim": softmax_empty}[case]
    arrays = _arrays("float64" if case == "float64" else "float32", seed=2)
    compiled = _compiled(arrays, fn)
    assert _jit_lines(compiled.code) == [], compiled.code
    out, grads = _run(lambda lib, *ts: compiled(*ts), arrays)
    eager_out, eager_grads = _run(fn, arrays)
    np.testing.assert_array_equal(out, eager_out)
    for g, e in zip(grads, eager_grads):
        assert (g is None and e is None) or np.array_equal(g, e)


def _assert_numpy_kernels_and_eager_bits(arrays):
    compiled = _compiled(arrays)
    assert _jit_lines(compiled.code) == []
    assert "_k_native_layer_norm_" in compiled.code and "_f__softmax_" in compiled.code
    out, grads = _run(lambda lib, *ts: compiled(*ts), arrays)
    eager_out, eager_grads = _run(_norm_softmax, arrays)
    np.testing.assert_array_equal(out, eager_out)
    for g, e in zip(grads, eager_grads):
        np.testing.assert_array_equal(g, e)


def test_config_jit_off_gives_the_numpy_kernels_and_eager_bits(monkeypatch):
    monkeypatch.setattr(config, "jit", False)
    _assert_numpy_kernels_and_eager_bits(_arrays("float32", seed=3))


def test_without_numba_the_generated_code_calls_the_numpy_kernels(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", None)       # (import numba raises ImportError)
    monkeypatch.setattr(jit, "_loaded", None)
    assert not jit.enabled()
    _assert_numpy_kernels_and_eager_bits(_arrays("float32", seed=4))


def test_numba_is_imported_only_when_code_that_uses_it_is_generated():
    # import glasstorch, and compiling a graph with no layer norm or softmax (an MLP step), leave numba
    # unimported: its ~0.15 s import is paid by the first graph that uses it
    script = (
        "import sys, numpy as np, glasstorch as gt\n"
        "assert 'numba' not in sys.modules\n"
        "m = gt.nn.Sequential(gt.nn.Linear(4, 8), gt.nn.ReLU(), gt.nn.Linear(8, 3))\n"
        "f = gt.compile(lambda x, y: gt.nn.functional.cross_entropy(m(x), y))\n"
        "x, y = gt.randn(5, 4), gt.tensor([0, 1, 2, 0, 1])\n"
        "f(x, y).backward(); f(x, y).backward()\n"
        "assert 'numba' not in sys.modules\n"
        "print('ok')\n")
    _runs_ok(script)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", ["row_major", "transposed", "into_its_buffer"])
def test_relu_backward_of_large_arrays_keeps_eager_bits(dtype, case):
    # ReLU's backward on an array of jit.RELU_LOOP_MIN_SIZE elements or more is one compiled pass (with
    # numba): the same bits as eager's kernel -- inf, nan and -0 gradients kept, +0 where masked, the gradient
    # where the input is nan; into a new array (the incoming gradient is the backward's input), or into the
    # dying gradient's own buffer (a matmul's, below); NumPy's two passes on other layouts (a transposed
    # incoming gradient)
    rows = jit.RELU_LOOP_MIN_SIZE // 256
    rng = np.random.default_rng(7)
    x = rng.standard_normal((rows, 256)).astype(dtype)
    x[0, :4] = [np.nan, -0.0, 0.0, 1.0]
    w = rng.standard_normal((256, 256)).astype(dtype)
    w[:, 0] = np.inf
    g = rng.standard_normal((rows, 256)).astype(dtype)
    g[1, :5] = [np.inf, -np.inf, np.nan, -0.0, 0.0]
    g[0, :4] = [5.0, 6.0, 7.0, -0.0]
    g_in = np.ascontiguousarray(g.T).T if case == "transposed" else g

    def f(lib, t, w):
        return lib.mm(t.relu(), w) if case == "into_its_buffer" else t.relu()
    compiled = gt.compile(lambda t, w: f(gt, t, w))
    compiled(gt.tensor(x, requires_grad=True), gt.tensor(w))
    if jit.enabled():
        call = next(line for line in compiled.code.splitlines() if "_jit_threshold_grad(" in line)
        assert ("out=" in call) == (case == "into_its_buffer"), call
    grads = []
    for fn in (compiled, lambda t, w: f(gt, t, w)):
        t = gt.tensor(x, requires_grad=True)
        fn(t, gt.tensor(w)).backward(gt.tensor(g_in))
        grads.append(t.grad.numpy())
    assert np.isnan(grads[0]).any() and np.isinf(grads[0]).any() and (grads[0] == 0).any()
    assert grads[0].tobytes() == grads[1].tobytes()
    if case != "into_its_buffer":        # (torch's matmul sums in another order)
        want = torch.tensor(x, requires_grad=True)
        f(torch, want, torch.tensor(w)).backward(torch.tensor(g_in))
        assert grads[0].tobytes() == want.grad.numpy().tobytes()


@pytest.mark.parametrize("rank", [2, 3])
def test_a_large_linear_then_relu_is_one_loop_with_eager_bits(rank, monkeypatch):
    # relu(addmm(b, x, w.t())) -- a Linear then ReLU, through a view for a 3-D input -- of
    # jit.RELU_LOOP_MIN_SIZE elements or more: the product, then the bias and ReLU in one compiled pass
    # (with numba), eager's bits (nan kept, negatives to +0); its gradients as eager's (Linear's weight and bias
    # gradients as eager computes them: those configs off)
    pytest.importorskip("numba")
    monkeypatch.setattr(gt._dynamo.config, "weight_grad_in_weight_layout", False)
    monkeypatch.setattr(gt._dynamo.config, "bias_grad_as_gemv", False)
    rows = jit.RELU_LOOP_MIN_SIZE // 256
    rng = np.random.default_rng(9)
    x = rng.standard_normal((rows, 32)).astype(np.float32)
    x[0, 0] = np.nan
    x = x.reshape((8, rows // 8, 32) if rank == 3 else (rows, 32))
    w = (rng.standard_normal((256, 32)) / 6).astype(np.float32)
    b = rng.standard_normal(256).astype(np.float32)
    v = rng.standard_normal(x.shape[:-1] + (256,)).astype(np.float32)

    def f(lib, x, w, b, v):
        y = lib.nn.functional.linear(x, w, b).relu()
        return y, (y * v).sum()
    compiled = gt.compile(lambda *ts: f(gt, *ts))
    runs = []
    for fn in (compiled, compiled, lambda *ts: f(gt, *ts)):
        ts = [gt.tensor(a, requires_grad=True) for a in (x, w, b)] + [gt.tensor(v)]
        y, loss = fn(*ts)
        loss.backward()
        runs.append([y.detach().numpy().copy()] + [t.grad.numpy().copy() for t in ts[:3]])
    assert "_jit_addmm_relu(" in compiled.code and "np.maximum" not in compiled.code, compiled.code
    assert np.isnan(runs[0][0]).any() and (runs[0][0] == 0).any() and (runs[0][0] > 0).any()
    for run in runs[1:]:
        for got, want in zip(runs[0], run):
            assert got.tobytes() == want.tobytes()


def test_a_linear_whose_value_is_read_again_keeps_its_relu_apart():
    # the addmm's own value is needed (read besides ReLU): no loop, which would overwrite it
    pytest.importorskip("numba")
    rows = jit.RELU_LOOP_MIN_SIZE // 256
    lin = gt.nn.Linear(32, 256)
    compiled = gt.compile(lambda x: (lambda h: (h.relu() + h).sum())(lin(x)))
    x = gt.randn(rows, 32)
    compiled(x).backward()
    assert "_jit_addmm_relu(" not in compiled.code, compiled.code
    np.testing.assert_allclose(compiled(x).item(), (lambda h: (h.relu() + h).sum())(lin(x)).item(), rtol=1e-5)


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_a_large_mse_loss_is_one_loop_each_way(reduction):
    # mse_loss of two float32 values of jit.THRESHOLD_GRAD_MIN_SIZE elements or more: the forward one pass summed
    # in float64 (eager's and torch's values to float32 rounding), its backward one pass of eager's operations
    # (eager's bits); a nan propagates as eager's
    pytest.importorskip("numba")
    rng = np.random.default_rng(10)
    shape = (8, jit.THRESHOLD_GRAD_MIN_SIZE // 64, 8)
    x, y = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))

    def f(lib, x, y):
        return lib.nn.functional.mse_loss(x * 1, y, reduction=reduction)
    compiled = gt.compile(lambda x, y: f(gt, x, y))
    runs = []
    for lib, fn in ((gt, compiled), (gt, compiled), (gt, lambda x, y: f(gt, x, y)),
                    (torch, lambda x, y: f(torch, x, y))):
        t = lib.tensor(x, requires_grad=True)
        loss = fn(t, lib.tensor(y))
        loss.backward()
        runs.append((loss.item(), t.grad.numpy().copy()))
    assert "_jit_mse_loss_" in compiled.code and "_jit_mse_loss_backward_" in compiled.code, compiled.code
    for loss, grad in runs[1:]:
        assert abs(runs[0][0] - loss) <= 1e-6 * abs(loss)
    assert runs[0][1].tobytes() == runs[1][1].tobytes() == runs[2][1].tobytes()
    np.testing.assert_allclose(runs[0][1], runs[3][1], rtol=1e-6, atol=1e-12)
    x[3, 5, 1] = np.nan
    assert np.isnan(compiled(gt.tensor(x), gt.tensor(y)).item())


def test_relu_backward_of_small_arrays_does_not_load_numba():
    small = gt.compile(lambda t: t.relu())
    small(gt.randn(8, 8, requires_grad=True))
    assert "_jit_" not in small.code and "_threshold_grad(" in small.code


def test_values_on_another_device_call_its_kernels():
    # the loops take NumPy's arrays: a graph on 'cuda' (here CuPy's stand-in, tests/_fake_cupy.py) calls the
    # device's kernels
    pytest.importorskip("numba")
    fake = os.path.join(os.path.dirname(__file__), "_fake_cupy.py")
    script = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('_fake_cupy', {fake!r})\n"
        "fake = importlib.util.module_from_spec(spec); sys.modules['_fake_cupy'] = fake\n"
        "spec.loader.exec_module(fake); fake.install()\n"
        "import glasstorch as gt\n"
        "x = gt.randn(600, 512, device='cuda', requires_grad=True)\n"
        "ln = gt.nn.LayerNorm(512).to('cuda')\n"
        "f = gt.compile(lambda x: (ln(x).relu().softmax(-1) * 2).sum())\n"
        "f(x).backward(); f(x).backward()\n"
        "assert '_jit_' not in f.code and type(x.grad._data).__module__ == '_fake_cupy', f.code\n"
        "print('ok')\n")
    _runs_ok(script)


@pytest.mark.parametrize("layout", ["row-major", "transposed", "sliced", "2-d"])
def test_a_residual_add_and_its_layer_norm_are_one_loop(layout):
    # native_layer_norm(x + r) -- a residual connection, the add read by nothing else -- with numba: the sum
    # written and normalized in one pass (r transposed in its first two dims: read so, as attention's output is);
    # the sum has eager's add's bits, the norm those of the layer norm loop run on that sum; an operand neither
    # row-major nor transposed (sliced) takes NumPy's add, then the loop
    pytest.importorskip("numba")
    rng = np.random.default_rng(11)
    shape = (30, 16) if layout == "2-d" else (6, 5, 16)
    x = rng.standard_normal(shape).astype(np.float32)
    x[1, 2] = np.nan
    r = rng.standard_normal({"transposed": (5, 6, 16), "sliced": (6, 10, 16)}.get(layout, shape)).astype(np.float32)
    w = (1 + 0.3 * rng.standard_normal(16)).astype(np.float32)
    b = (0.3 * rng.standard_normal(16)).astype(np.float32)
    v = rng.standard_normal(shape).astype(np.float32)

    def f(lib, x, r, w, b, v):
        r = r.transpose(0, 1) if layout == "transposed" else r[:, ::2] if layout == "sliced" else r
        y = lib.nn.functional.layer_norm(x + r, (16,), w, b)
        return y, (y * v).sum()
    compiled = gt.compile(lambda *ts: f(gt, *ts))
    runs = []
    for fn, lib in ((compiled, gt), (compiled, gt), (compiled, gt), (lambda *ts: f(gt, *ts), gt),
                    (lambda *ts: f(torch, *ts), torch)):          # (the first call: the capture)
        ts = [lib.tensor(a, requires_grad=True) for a in (x, r, w, b)] + [lib.tensor(v)]
        y, loss = fn(*ts)
        loss.backward()
        runs.append([y.detach().numpy().copy()] + [t.grad.numpy().copy() for t in ts[:4]])
    assert "_jit_add_layer_norm(" in compiled.code and "_k_add_" not in compiled.code, compiled.code
    r_used = r.transpose(1, 0, 2) if layout == "transposed" else r[:, ::2] if layout == "sliced" else r
    want = jit.layer_norm(x + r_used, [16], w, b, 1e-5)[0]
    assert runs[1][0].tobytes() == want.tobytes() and np.isnan(want[1, 2]).all() and not np.isnan(want[0]).any()
    for got, eager, theirs in zip(runs[1], runs[3], runs[4]):
        scale = np.abs(np.nan_to_num(theirs)).max()      # (x's nan row: nan in w's gradient, as torch's)
        np.testing.assert_allclose(got, eager, rtol=0, atol=2e-6 * scale, equal_nan=True)
        np.testing.assert_allclose(got, theirs, rtol=0, atol=2e-6 * scale, equal_nan=True)
    for got, again in zip(runs[1], runs[2]):
        assert got.tobytes() == again.tobytes()


def test_a_residual_read_again_keeps_its_add_apart():
    pytest.importorskip("numba")
    x, r = gt.randn(4, 5, 16), gt.randn(4, 5, 16)
    w, b = gt.ones(16, requires_grad=True), gt.zeros(16, requires_grad=True)
    compiled = gt.compile(lambda x, r: (lambda s: (gt.nn.functional.layer_norm(s, (16,), w, b) + s).sum())(x + r))
    compiled(x, r).backward()
    assert "_jit_add_layer_norm" not in compiled.code and "_jit_native_layer_norm_" in compiled.code, compiled.code
    np.testing.assert_allclose(compiled(x, r).item(), (gt.nn.functional.layer_norm(x + r, (16,), w, b) + x + r).sum().item(),
                               rtol=1e-5)


def test_a_layer_norm_whose_result_is_read_twice_adds_its_gradients_in_its_loop():
    # y = layer_norm(x) read by two ops (a residual's shape: the feed-forward and the add after it): y's two
    # gradients are added in layer norm's backward loop, not by a pass of their own; eager's and torch's values
    # to float32 rounding
    pytest.importorskip("numba")
    x, w, b, v = _arrays("float32", seed=12, shape=(4, 6, 16))
    v = v.transpose(0, 2, 1).copy()

    def f(lib, x, w, b, v):
        y = lib.nn.functional.layer_norm(x, (16,), w, b)
        return (y * v).sum() + y.tanh().sum()
    compiled = _compiled([x, w, b, v], f)
    assert "other_grad=" in compiled.code, compiled.code
    want, theirs = _run(f, [x, w, b, v]), _run(f, [x, w, b, v], torch)
    for _ in range(2):
        out, grads = _run(lambda lib, *ts: compiled(*ts), [x, w, b, v])
        np.testing.assert_allclose(out, want[0], rtol=1e-6)
        for g, e, t in zip(grads, want[1], theirs[1]):
            scale = np.abs(t).max()
            np.testing.assert_allclose(g, e, rtol=0, atol=2e-6 * scale)
            np.testing.assert_allclose(g, t, rtol=0, atol=2e-6 * scale)


def _logits_and_targets(rows, classes, seed, ignore_index, special):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((rows, classes)) * 3).astype(np.float32)
    y = rng.integers(0, classes, rows)
    if ignore_index == "some":
        y[::5] = -100
    elif ignore_index == "all":
        y[:] = -100
    elif ignore_index == "in_range":
        y[::4] = 3
    if special:
        x[1, 2] = np.nan          # a nan row: its loss and gradients nan
        x[2, :3] = -np.inf        # -inf scores: probabilities 0
        x[4, 0] = np.inf          # +inf: a nan row, as eager's and torch's
    return x, y


@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("ignore_index", ["none", "some", "in_range", "all"])
@pytest.mark.parametrize("special", [False, True])
def test_cross_entropy_loops_give_eager_values_to_float32_rounding(reduction, ignore_index, special):
    # F.cross_entropy on a float32 batch of jit.CROSS_ENTROPY_LOOP_MIN_ROWS rows or more: log_softmax's forward,
    # nll's forward and their fused backward are loops (with numba); the loss and the gradient equal eager's to
    # float32 rounding (the loops' exponential), nan and inf as eager's, ignored rows as eager's (their gradient 0)
    pytest.importorskip("numba")
    x, y = _logits_and_targets(jit.CROSS_ENTROPY_LOOP_MIN_ROWS * 2, 10, 11, ignore_index, special)
    kw = dict(reduction=reduction, ignore_index=3 if ignore_index == "in_range" else -100)

    def f(lib, t, target):
        return lib.nn.functional.cross_entropy(t * 1, target, **kw)
    compiled = gt.compile(lambda t, target: f(gt, t, target))
    runs = []
    compiled(gt.tensor(x, requires_grad=True), gt.tensor(y))       # the capture (an eager run)
    for lib, fn in ((gt, compiled), (gt, compiled), (gt, lambda t, target: f(gt, t, target)),
                    (torch, lambda t, target: f(torch, t, target))):
        t = lib.tensor(x, requires_grad=True)
        loss = fn(t, lib.tensor(y))
        loss.backward()
        runs.append((loss.item(), t.grad.numpy().copy()))
    for line in ("_jit__log_softmax_", "_jit_nll_loss_forward_", "_jit_log_softmax_nll_grad("):
        assert line in compiled.code, compiled.code
    assert runs[0][0] == runs[1][0] or np.isnan(runs[0][0]) and np.isnan(runs[1][0])
    assert runs[0][1].tobytes() == runs[1][1].tobytes()
    for loss, grad in runs[2:]:
        np.testing.assert_allclose(runs[0][0], loss, rtol=2e-6)
        np.testing.assert_allclose(runs[0][1], grad, rtol=1e-5, atol=1e-9)
        assert (np.isnan(runs[0][1]) == np.isnan(grad)).all() and ((runs[0][1] == 0) == (grad == 0)).all()


def test_cross_entropy_loops_raise_eagers_error_for_a_target_out_of_range():
    pytest.importorskip("numba")
    x, y = _logits_and_targets(jit.CROSS_ENTROPY_LOOP_MIN_ROWS, 10, 12, "some", False)
    compiled = gt.compile(lambda t, target: gt.nn.functional.cross_entropy(t * 1, target))
    compiled(gt.tensor(x, requires_grad=True), gt.tensor(y)).backward()
    assert "_jit_nll_loss_forward_" in compiled.code
    for bad in (10, -3):
        y2 = y.copy()
        y2[7], y2[9] = bad, 11
        with pytest.raises(IndexError) as want:
            gt.nn.functional.cross_entropy(gt.tensor(x) * 1, gt.tensor(y2))
        with pytest.raises(IndexError) as got:
            compiled(gt.tensor(x, requires_grad=True), gt.tensor(y2))
        assert str(got.value) == str(want.value) == f"Target {bad} is out of bounds."
    # the backward checks the targets it reads too (changed in place after the forward, as eager's formula checks)
    target = gt.tensor(y)
    loss = compiled(gt.tensor(x, requires_grad=True), target)
    target.data[3] = 10
    with pytest.raises(IndexError, match="Target 10 is out of bounds"):
        loss.backward()


@pytest.mark.parametrize("ignore_index", ["none", "some", "in_range", "all"])
def test_nll_loop_gives_eager_bits(ignore_index):
    # nll_loss_forward's loop makes eager's per-row losses (the same operations, -0 and nan included) and sums them
    # as eager does: its loss and total weight are eager's bytes
    pytest.importorskip("numba")
    from glasstorch.ops.nn_loss import _nll_loss_forward_kernel
    x, y = _logits_and_targets(jit.CROSS_ENTROPY_LOOP_MIN_ROWS + 3, 7, 13, ignore_index, True)
    x[::3, 0] = -np.inf             # (an ignored row adds nothing: not -x[i, 0] * 0, which is nan)
    ii = 3 if ignore_index == "in_range" else -100
    jit._kernels()
    for reduction in (1, 2):
        got = jit.nll_loss_forward(x, y, None, reduction, ii)
        want = _nll_loss_forward_kernel(x, y, None, reduction, ii)
        assert [a.tobytes() for a in got] == [np.asarray(w).tobytes() for w in want]
        assert [a.dtype for a in got] == [np.asarray(w).dtype for w in want]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", ["row_major", "transposed_grad", "chain"])
def test_tanh_backward_of_arrays_from_1k_elements_is_one_loop_with_eager_bits(dtype, case):
    # tanh's backward, g * (1 - y * y), on jit.TANH_GRAD_LOOP_MIN_SIZE elements or more is one compiled pass (with
    # numba): each product and difference rounded as NumPy's three ufuncs round them -- eager's bits, nan, inf and
    # -0 included; a transposed incoming gradient takes the ufuncs
    pytest.importorskip("numba")
    n = int(np.sqrt(jit.TANH_GRAD_LOOP_MIN_SIZE))
    rng = np.random.default_rng(14)
    x = rng.standard_normal((n, n)).astype(dtype)
    x[0, :4] = [np.nan, np.inf, -np.inf, -0.0]
    w = (rng.standard_normal((n, n)) / n ** 0.5).astype(dtype)
    g = rng.standard_normal((n, n)).astype(dtype)
    g[1, :4] = [np.inf, np.nan, -0.0, 0.0]
    g_in = np.ascontiguousarray(g.T).T if case == "transposed_grad" else g

    def f(lib, t, w):
        if case == "chain":
            for _ in range(3):
                t = lib.mm((t * w).tanh(), w)
            return t
        return t.tanh()
    compiled = gt.compile(lambda t, w: f(gt, t, w))
    compiled(gt.tensor(x, requires_grad=True), gt.tensor(w, requires_grad=True))
    assert "_jit_tanh_grad(" in compiled.code and "np.subtract(1" not in compiled.code, compiled.code
    grads = []
    for fn in (compiled, lambda t, w: f(gt, t, w)):
        ts = [gt.tensor(x, requires_grad=True), gt.tensor(w, requires_grad=True)]
        fn(*ts).backward(gt.tensor(g_in))
        grads.append([t.grad.numpy() for t in ts if t.grad is not None])
    assert np.isnan(grads[0][0]).any() and len(grads[0]) == (2 if case == "chain" else 1)
    assert case == "chain" or (grads[0][0] == 0).any()         # (the products spread the chain's nan)
    for a, b in zip(*grads):
        assert a.tobytes() == b.tobytes()
    if case == "row_major":
        want = torch.tensor(x, requires_grad=True)
        want.tanh().backward(torch.tensor(g_in))
        np.testing.assert_allclose(grads[0][0], want.grad.numpy(), rtol=1e-5, atol=1e-6)   # (torch: its own tanh; 1 - y * y cancels near 1)


def test_tanh_backward_of_small_arrays_keeps_the_ufuncs():
    small = gt.compile(lambda t: t.tanh())
    small(gt.randn(8, 8, requires_grad=True)).sum().backward()
    assert "_jit_" not in small.code and "np.subtract(1" in small.code


def _sgd_run(kwargs, dtype, layout="plain", foreach=None, steps=4):
    """SGD's trajectory on two parameters of jit.ADD_SCALED_LOOP_MIN_SIZE elements and more (and a small one),
    gradients holding inf, nan and -0: the parameters' bytes after each step, and their version counts."""
    rng = np.random.default_rng(11)
    n = jit.ADD_SCALED_LOOP_MIN_SIZE
    shapes = [(n // 32, 32), (2 * n,), (7,)]
    params = [gt.nn.Parameter(gt.tensor(rng.standard_normal(s).astype(dtype))) for s in shapes]
    if layout == "transposed":          # (a column-major parameter: its array is not C-contiguous)
        params[0] = gt.nn.Parameter(gt.tensor(rng.standard_normal(shapes[0][::-1]).astype(dtype)).t())
    opt = gt.optim.SGD(params, foreach=foreach, **kwargs)
    out = []
    for k in range(steps):
        for p in params:
            g = rng.standard_normal(p.shape).astype(dtype)
            g.reshape(-1)[:3] = [np.inf, np.nan, -0.0] if k == 1 else [-0.0, 0.0, 1e-30]
            p.grad = gt.tensor(g) if layout != "transposed" or p is not params[0] else gt.tensor(g.T.copy()).t()
        if layout == "shared":          # (a gradient that is its parameter's memory: NumPy's ufuncs buffer it)
            params[1].grad = params[1].detach()
        opt.step()
        out.append([p.detach().numpy().tobytes() for p in params])
    return out, [p._version for p in params]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kwargs", [dict(lr=0.1), dict(lr=0.1, momentum=0.9, weight_decay=0.01),
                                    dict(lr=0.1, momentum=0.9, nesterov=True, maximize=True)])
@pytest.mark.parametrize("layout", ["plain", "transposed", "shared"])
def test_sgd_update_as_the_loop_after_a_compiled_graph_keeps_the_for_loops_bits(dtype, kwargs, layout, monkeypatch):
    # once a compiled graph has loaded numba, SGD's array path runs its last line, param += grad * -lr, as one
    # loop (jit.add_scaled) on large C-contiguous parameters: the same bits as NumPy's two passes and as the
    # for-loop of Tensor ops, nan/inf/-0 included, the same version counts; a column-major parameter, a
    # gradient that is its parameter's memory (added as it is: plain SGD) and the small parameter take NumPy's ufuncs
    pytest.importorskip("numba")
    assert jit.enabled()                        # (loads numba's loops, as generating a graph's code does)
    calls = []
    loop = jit._loaded["_add_scaled"]
    monkeypatch.setitem(jit._loaded, "_add_scaled", lambda d, g, s: (calls.append(d.shape), loop(d, g, s)))
    got = _sgd_run(kwargs, dtype, layout)
    want = {"plain": [(jit.ADD_SCALED_LOOP_MIN_SIZE // 32, 32), (2 * jit.ADD_SCALED_LOOP_MIN_SIZE,)],
            "transposed": [(2 * jit.ADD_SCALED_LOOP_MIN_SIZE,)],
            "shared": [(jit.ADD_SCALED_LOOP_MIN_SIZE // 32, 32)]}[layout]
    if layout == "shared" and kwargs != dict(lr=0.1):      # (what is added is then a new array: the loop's)
        want = [(jit.ADD_SCALED_LOOP_MIN_SIZE // 32, 32), (2 * jit.ADD_SCALED_LOOP_MIN_SIZE,)]
    assert calls == want * 4
    assert got == _sgd_run(kwargs, dtype, layout, foreach=False)
    monkeypatch.setattr(config, "jit", False)   # (config.jit off: NumPy's ufuncs)
    calls.clear()
    assert got == _sgd_run(kwargs, dtype, layout) and calls == []


def test_eager_sgd_does_not_import_numba():
    # an eager program's SGD steps on large parameters leave numba unimported: the loop is taken only where a
    # compiled graph loaded it
    script = (
        "import sys, glasstorch as gt\n"
        "m = gt.nn.Linear(256, 256)\n"
        "opt = gt.optim.SGD(m.parameters(), lr=0.1)\n"
        "w = m.weight.detach().clone()\n"
        "m(gt.randn(8, 256)).sum().backward(); opt.step()\n"
        "assert not gt.equal(w, m.weight.detach())\n"
        "assert 'numba' not in sys.modules and 'glasstorch._dynamo.jit' not in sys.modules\n"
        "print('ok')\n")
    _runs_ok(script)
