"""The layout of linear-algebra results, against torch: LAPACK works on column-major matrices, so torch
returns a solve's solution, an inverse, a Cholesky factor, eigenvectors, Q and R, U and Vh as a
row-major batch of column-major matrices (``cloneBatchedColumnMajor``), and a program sees it:
``x.is_contiguous()``, ``x.view(-1)`` (which torch refuses there), ``x.stride()``, the layout of what
is computed from it. Each case: the strides on the CPU and on meta (glasstorch's meta against torch's
CPU, the oracle), the values, and the gradients, for float32 and float64, batched or not, with
contiguous and transposed (non-contiguous) inputs."""
import numpy as np
import pytest
import torch

import glasstorch as gt

pytestmark = pytest.mark.filterwarnings("ignore:torch.cholesky is deprecated")


def _matrix(lib, shape, dtype, kind, transposed, seed):
    """A random ``shape`` matrix (batch) of ``kind``: "gen" (well conditioned), "spd" or "upper"
    (triangular), made as the transpose of a contiguous one when ``transposed``."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    n = shape[-1]
    if kind == "spd":
        a = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    elif kind == "upper":
        a = np.triu(a) + 3 * np.eye(n)
    elif kind == "gen" and len(shape) > 1 and shape[-1] == shape[-2]:
        a = a + 3 * np.eye(n)
    t = lib.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2)) if transposed else a, dtype=getattr(lib, dtype))
    return t.mT if transposed else t


def _ops(batch):
    """name -> (function of the library and its inputs, [(input shape, kind)])."""
    b = batch
    return {
        "linalg.solve": (lambda m, A, B: m.linalg.solve(A, B), [(b + (3, 3), "gen"), (b + (3, 2), "gen")]),
        "linalg.solve.vector": (lambda m, A, B: m.linalg.solve(A, B), [(b + (3, 3), "gen"), (b + (3,), "gen")]),
        "linalg.solve.right": (lambda m, A, B: m.linalg.solve(A, B, left=False),
                               [(b + (3, 3), "gen"), (b + (2, 3), "gen")]),
        "linalg.solve_ex": (lambda m, A, B: m.linalg.solve_ex(A, B)[0], [(b + (3, 3), "gen"), (b + (3, 2), "gen")]),
        "linalg.solve_triangular": (lambda m, A, B: m.linalg.solve_triangular(A, B, upper=True),
                                    [(b + (3, 3), "upper"), (b + (3, 2), "gen")]),
        "linalg.solve_triangular.right": (lambda m, A, B: m.linalg.solve_triangular(A, B, upper=True, left=False),
                                          [(b + (3, 3), "upper"), (b + (2, 3), "gen")]),
        "cholesky_solve": (lambda m, B, L: m.cholesky_solve(B, L), [(b + (3, 2), "gen"), (b + (3, 3), "upper")]),
        "linalg.inv": (lambda m, A: m.linalg.inv(A), [(b + (3, 3), "gen")]),
        "linalg.inv_ex": (lambda m, A: m.linalg.inv_ex(A)[0], [(b + (3, 3), "gen")]),
        "inverse": (lambda m, A: m.inverse(A), [(b + (3, 3), "gen")]),
        "linalg.cholesky": (lambda m, A: m.linalg.cholesky(A), [(b + (3, 3), "spd")]),
        "linalg.cholesky.upper": (lambda m, A: m.linalg.cholesky(A, upper=True), [(b + (3, 3), "spd")]),
        "cholesky": (lambda m, A: m.cholesky(A), [(b + (3, 3), "spd")]),
        "linalg.eigh": (lambda m, A: m.linalg.eigh(A).eigenvectors, [(b + (3, 3), "spd")]),
        "linalg.eig": (lambda m, A: m.linalg.eig(A).eigenvectors, [(b + (3, 3), "spd")]),
        "linalg.qr.Q": (lambda m, A: m.linalg.qr(A).Q, [(b + (4, 3), "gen")]),
        "linalg.qr.R": (lambda m, A: m.linalg.qr(A).R, [(b + (4, 3), "gen")]),
        "linalg.qr.complete": (lambda m, A: m.linalg.qr(A, mode="complete").Q, [(b + (4, 3), "gen")]),
        "linalg.qr.r": (lambda m, A: m.linalg.qr(A, mode="r").R, [(b + (4, 3), "gen")]),
        "linalg.svd.U": (lambda m, A: m.linalg.svd(A, full_matrices=False).U, [(b + (4, 3), "gen")]),
        "linalg.svd.Vh": (lambda m, A: m.linalg.svd(A, full_matrices=False).Vh, [(b + (4, 3), "gen")]),
        "linalg.svd.full": (lambda m, A: m.linalg.svd(A).U, [(b + (4, 3), "gen")]),
        "svd.V": (lambda m, A: m.svd(A).V, [(b + (4, 3), "gen")]),
        "geqrf": (lambda m, A: m.geqrf(A)[0], [(b + (4, 3), "gen")]),
        "linalg.householder_product": (lambda m, A: m.linalg.householder_product(*m.geqrf(A)), [(b + (4, 3), "gen")]),
        "linalg.pinv": (lambda m, A: m.linalg.pinv(A), [(b + (4, 3), "gen")]),
    }


# the results a sign or phase leaves free (eigenvectors, singular vectors, Householder signs): their
# values and gradients are the registry's business (tests/opinfo.py compares what is unique)
_LAYOUT_ONLY = {"linalg.eig", "linalg.eigh", "linalg.svd.U", "linalg.svd.Vh", "linalg.svd.full", "svd.V",
                "linalg.qr.complete"}
# results torch does not differentiate (geqrf has no derivative; qr's R alone needs Q): values only
_NO_GRAD = {"geqrf", "linalg.householder_product", "linalg.qr.r"}
_CASES = [(name, batch) for batch in ((), (2,)) for name in _ops(batch)]


def _inputs(lib, specs, dtype, transposed, grad=False, device=None):
    out = []
    for k, (shape, kind) in enumerate(specs):
        t = _matrix(lib, shape, dtype, kind, transposed and len(shape) > 1, seed=k)
        if device is not None:
            t = t.to(device)
        out.append(t.detach().requires_grad_() if grad else t)
    return out


def _layout(t):
    """Strides that mean something: those of dims longer than 1 (torch's own comparison)."""
    return tuple(s if n > 1 else None for s, n in zip(t.stride(), t.shape))


@pytest.mark.parametrize("transposed", [False, True], ids=["contiguous", "transposed"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,batch", _CASES, ids=[f"{n}-{'batched' if b else 'matrix'}" for n, b in _CASES])
def test_layout_values_and_grads(name, batch, dtype, transposed):
    fn, specs = _ops(batch)[name]
    t_in = _inputs(torch, specs, dtype, transposed, grad=True)
    g_in = _inputs(gt, specs, dtype, transposed, grad=True)
    t_out, g_out = fn(torch, *t_in), fn(gt, *g_in)
    assert tuple(g_out.shape) == tuple(t_out.shape)
    assert _layout(g_out) == _layout(t_out), f"stride {g_out.stride()} != torch {t_out.stride()}"
    assert g_out.is_contiguous() == t_out.is_contiguous()
    if name in _LAYOUT_ONLY:
        return
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == "float32" else dict(rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(g_out.detach().numpy(), t_out.detach().numpy(), **tol)
    if name in _NO_GRAD:
        return
    w = np.random.default_rng(7).standard_normal(tuple(t_out.shape))
    (t_out * torch.tensor(w, dtype=t_out.dtype)).sum().backward()
    (g_out * gt.tensor(w, dtype=g_out.dtype)).sum().backward()
    for k, (tx, gx) in enumerate(zip(t_in, g_in)):
        assert (gx.grad is None) == (tx.grad is None), f"input {k}"
        if tx.grad is not None:
            np.testing.assert_allclose(gx.grad.numpy(), tx.grad.numpy(), **tol, err_msg=f"input {k}")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,batch", _CASES, ids=[f"{n}-{'batched' if b else 'matrix'}" for n, b in _CASES])
def test_layout_on_meta(name, batch, dtype):
    """On meta the same layout as torch's CPU result (torch's own meta kernels differ from its CPU
    ones for eig's eigenvectors and svd's Vh: the CPU is the oracle), where glasstorch's meta kernel
    answers at all (a solve, an inverse or a Cholesky factor reads its values: docs/devices.md)."""
    fn, specs = _ops(batch)[name]
    t_out = fn(torch, *_inputs(torch, specs, dtype, False))
    try:
        g_out = fn(gt, *_inputs(gt, specs, dtype, False, device="meta"))
    except NotImplementedError:
        pytest.xfail("glasstorch's meta kernel needs values here")
    assert g_out.device.type == "meta" and tuple(g_out.shape) == tuple(t_out.shape)
    assert _layout(g_out) == _layout(t_out), f"stride {g_out.stride()} != torch {t_out.stride()}"


def test_view_of_a_column_major_solution_is_refused_as_in_torch():
    """What the layout changes in a program: ``view`` of a solution flattens in torch only after
    ``contiguous()`` (it raises on the column-major result), ``reshape`` copies."""
    for lib in (torch, gt):
        A = lib.eye(3, dtype=lib.float64) * 2
        X = lib.linalg.solve(A, lib.ones(3, 2, dtype=lib.float64))
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            X.view(-1)
        assert X.reshape(-1).shape == (6,) and X.contiguous().view(-1).shape == (6,)


# ---- the gradients of mm and addmm: laid out as a column-major operand is (torch's mm_mat1_backward and
# mm_mat2_backward), so nn.Linear's weight gradient reaches AccumulateGrad in the weight's own layout
def _mm_case(lib, op, layouts, needs, dtype, seed):
    """(mat1, mat2, their gradients' strides as the ops hand them on, result, the gradients' values)."""
    rng = np.random.default_rng(seed)
    made, seen = [], {}
    for k, (shape, col) in enumerate(zip(((4, 5), (5, 3)), layouts)):
        a = rng.standard_normal(shape)
        leaf = lib.tensor(np.ascontiguousarray(a.T) if col else a, dtype=getattr(lib, dtype), requires_grad=needs[k])
        t = leaf.t() if col else leaf * 1     # (a non-leaf either way, so that a hook sees the formula's result)
        if needs[k]:
            t.register_hook(lambda g, k=k: seen.__setitem__(k, g.stride()))
        made.append((leaf, t))
    (m1, a), (m2, b) = made
    y = lib.mm(a, b) if op == "mm" else lib.addmm(lib.ones(3, dtype=getattr(lib, dtype)), a, b, alpha=0.5)
    (y * lib.tensor(rng.standard_normal((4, 3)), dtype=getattr(lib, dtype))).sum().backward()
    return seen, y, [m.grad for m in (m1, m2)]


@pytest.mark.parametrize("needs", [(True, True), (True, False), (False, True)], ids=["both", "mat1", "mat2"])
@pytest.mark.parametrize("layouts", [(False, False), (False, True), (True, False), (True, True)],
                         ids=["CC", "CF", "FC", "FF"])
@pytest.mark.parametrize("op", ["mm", "addmm"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mm_gradients_are_laid_out_as_a_column_major_operand_as_in_torch(op, layouts, needs, dtype):
    seen, y, grads = _mm_case(gt, op, layouts, needs, dtype, 7)
    t_seen, t_y, t_grads = _mm_case(torch, op, layouts, needs, dtype, 7)
    assert seen == t_seen
    np.testing.assert_allclose(y.detach().numpy(), t_y.detach().numpy(), rtol=1e-5)
    for g, tg in zip(grads, t_grads):
        assert (g is None) == (tg is None)
        if g is not None:
            np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-5, atol=1e-6)


def test_linear_saves_its_operands_sizes_and_strides_as_torch_names_them():
    for lib in (gt, torch):
        layer = lib.nn.Linear(5, 3)
        y = layer(lib.ones(4, 5, requires_grad=True))
        assert y.grad_fn._saved_mat2_sym_strides == (1, 5) and y.grad_fn._saved_mat2_sym_sizes == (5, 3)
        assert y.grad_fn._saved_mat1_sym_strides == (5, 1) and y.grad_fn._saved_mat1_sym_sizes == (4, 5)
        z = lib.mm(lib.ones(4, 5), layer.weight.t())
        assert z.grad_fn._saved_mat2_sym_strides == (1, 5) and z.grad_fn._saved_mat2_sym_sizes == (5, 3)


def _leaf_grads(lib, op, layouts, seed):
    """mm/addmm of two leaves, each laid out column-major where ``layouts`` says: their .grad strides, values."""
    rng = np.random.default_rng(seed)
    leaves = []
    for shape, col in zip(((4, 5), (5, 3)), layouts):
        a = rng.standard_normal(shape).astype(np.float32)
        t = lib.tensor(np.ascontiguousarray(a.T)).t() if col else lib.tensor(a)
        leaves.append(t.detach().requires_grad_())
    a, b = leaves
    y = lib.mm(a, b) if op == "mm" else lib.addmm(lib.ones(3), a, b)
    (y * lib.tensor(rng.standard_normal((4, 3)).astype(np.float32))).sum().backward()
    return [(t.stride(), t.grad.stride(), t.grad.numpy()) for t in leaves]


@pytest.mark.parametrize("layouts", [(False, False), (False, True), (True, False), (True, True)],
                         ids=["CC", "CF", "FC", "FF"])
@pytest.mark.parametrize("op", ["mm", "addmm"])
def test_a_leafs_gradient_keeps_the_leafs_layout_as_in_torch(op, layouts):
    # torch's AccumulateGrad: a gradient in the leaf's layout becomes .grad as it is, another is copied
    # into the leaf's layout where the leaf is dense (clone_obey_contract), row-major where it is not
    for (s, gs, g), (ts, tgs, tg) in zip(_leaf_grads(gt, op, layouts, 3), _leaf_grads(torch, op, layouts, 3)):
        assert s == ts and gs == tgs == s
        np.testing.assert_allclose(g, tg, rtol=1e-5, atol=1e-6)
    for lib in (gt, torch):
        e = lib.ones(3, 1).expand(3, 4).detach().requires_grad_()      # not dense: row-major
        sliced = lib.ones(4, 10)[:, ::2].detach().requires_grad_()      # not dense: row-major
        perm = lib.ones(2, 3, 4).permute(2, 0, 1).detach().requires_grad_()   # dense, permuted: its own
        ((e * 2).sum() + (sliced * 2).sum() + (perm.exp()).sum()).backward()
        assert e.grad.stride() == (4, 1) and sliced.grad.stride() == (5, 1) and perm.grad.stride() == (1, 12, 4)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layout", ["CC", "CF", "FC", "FF", "strided"])
def test_a_large_product_gives_ndarray_dots_bits_in_every_operand_layout(dtype, layout):
    """Products with a large output (>= 256 x 128) go through the matmul ufunc, which skips dot's second
    zero-fill of the output: the same gemm, so the same bits as ``ndarray.dot``, in each operand layout; a
    strided operand (matmul would loop without BLAS) takes dot. Values against torch; addmm's too."""
    rng = np.random.default_rng(7)
    dt = np.dtype(dtype)
    a = rng.standard_normal((300, 70)).astype(dt)
    b = rng.standard_normal((70, 260)).astype(dt)
    if layout == "strided":
        a = np.ascontiguousarray(np.repeat(a, 2, axis=1))[:, ::2]
        assert not (a.flags.c_contiguous or a.flags.f_contiguous)
    else:
        a = np.asfortranarray(a) if layout[0] == "F" else a
        b = np.asfortranarray(b) if layout[1] == "F" else b
    bias = rng.standard_normal(260).astype(dt)
    got = gt.mm(gt.from_numpy(a), gt.from_numpy(b))._data
    assert np.array_equal(got.view(f"u{dt.itemsize}"), a.dot(b).view(f"u{dt.itemsize}"))
    torch.testing.assert_close(torch.from_numpy(got), torch.mm(torch.from_numpy(a), torch.from_numpy(b)))
    got = gt.addmm(gt.from_numpy(bias), gt.from_numpy(a), gt.from_numpy(b))._data
    assert np.array_equal(got, a.dot(b) + bias)
    torch.testing.assert_close(torch.from_numpy(got),
                               torch.addmm(torch.from_numpy(bias), torch.from_numpy(a), torch.from_numpy(b)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("column_major", [False, True], ids=["row-major", "column-major"])
@pytest.mark.parametrize("alpha", [1, 0.5])
def test_a_products_gradient_on_arrays_is_the_ops_gradient_bit_for_bit(dtype, column_major, alpha):
    """mm_mat1_backward / mm_mat2_backward compute a real product's gradient on NumPy arrays (the usual
    backward) without calling t, mm and conj: the same bits and the same layout as through the ops,
    which Tensors (double backward) still take."""
    from glasstorch.ops import linalg
    rng = np.random.default_rng(11)
    dt = np.dtype(dtype)
    grad = rng.standard_normal((300, 260)).astype(dt)          # (a large product: _gemm's matmul path)
    mat1 = rng.standard_normal((300, 70)).astype(dt)
    mat2 = rng.standard_normal((70, 260)).astype(dt)
    operand_sizes = {1: (300, 70), 2: (70, 260)}
    for which, fn, other in ((1, linalg.mm_mat1_backward, mat2), (2, linalg.mm_mat2_backward, mat1)):
        sizes = operand_sizes[which]
        strides = (1, sizes[0]) if column_major else (sizes[1], 1)
        on_arrays = fn(grad, other, sizes, strides, alpha)
        on_tensors = fn(gt.from_numpy(grad), gt.from_numpy(other), sizes, strides, alpha)._data
        assert type(on_arrays) is np.ndarray and on_arrays.shape == sizes
        assert on_arrays.strides == on_tensors.strides
        assert np.array_equal(on_arrays.view(f"u{dt.itemsize}"), on_tensors.view(f"u{dt.itemsize}"))
