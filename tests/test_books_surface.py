"""Calls the books make outside autograd proper, checked against torch: a book cell that runs under
torch and fails under glasstorch is a bug."""
import numpy as np
import pytest

import glasstorch as gt

torch = pytest.importorskip("torch")


def same(a, b):
    if isinstance(a, (tuple, list)):
        for x, y in zip(a, b):
            same(x, y)
        return
    np.testing.assert_allclose(np.asarray(a.numpy() if hasattr(a, "numpy") else a),
                               np.asarray(b.numpy() if hasattr(b, "numpy") else b), rtol=1e-6)


CALLS = {
    "sum(axis, keepdims)": lambda T, X: X.sum(axis=1, keepdims=True),
    "torch.sum(axis)": lambda T, X: T.sum(X, axis=0),
    "mean(axis)": lambda T, X: X.mean(axis=0),
    "cumsum(axis)": lambda T, X: X.cumsum(axis=0),
    "argmax(axis)": lambda T, X: X.argmax(axis=1),
    "max(axis).values": lambda T, X: X.max(axis=1).values,
    "cat(axis)": lambda T, X: T.cat((X, X), axis=1),
    "prod(axis)": lambda T, X: X.prod(axis=0),
    "A / A.sum(axis=1, keepdims=True)": lambda T, X: X / X.sum(axis=1, keepdims=True),
    "repeat_interleave": lambda T, X: T.repeat_interleave(T.arange(3), 2),
    "nonzero": lambda T, X: T.nonzero(X > 5),
    "norm": lambda T, X: T.norm(X),
    "linalg.norm": lambda T, X: T.linalg.norm(X),
    "linalg.det": lambda T, X: T.linalg.det(X[:, :3] + T.eye(3)),
    "abs().sum()": lambda T, X: T.abs(X).sum(),
    "mv": lambda T, X: T.mv(X, T.ones(4)),
    "one_hot": lambda T, X: T.nn.functional.one_hot(T.tensor([0, 2]), 3),
    "normal(size=)": lambda T, X: T.normal(0, 1, size=(3, 4)).shape,
    "arange(0, 1, 0.1)": lambda T, X: T.arange(0, 1, 0.1),
    "tensor of tensors": lambda T, X: T.tensor([T.tensor(1.0), T.tensor(2.0)]),
    # the list of an op that also takes it spread out, by its schema name (Step-by-Step ch. 8)
    "torch.flip(dims=)": lambda T, X: T.flip(X, dims=[1]),
    "flip(dims=)": lambda T, X: X.flip(dims=[0, 1]),
    "torch.permute(dims=)": lambda T, X: T.permute(X, dims=(1, 0)),
    "permute(dims=)": lambda T, X: X.permute(dims=[1, 0]),
    "torch.tile(dims=)": lambda T, X: T.tile(X, dims=(2,)),
    "tile(dims=)": lambda T, X: X.tile(dims=(2, 1)),
    "repeat(repeats=)": lambda T, X: X.repeat(repeats=(1, 2)),
    "view(size=)": lambda T, X: X.view(size=(4, 3)),
    "reshape(shape=)": lambda T, X: X.reshape(shape=(2, 6)),
    "torch.reshape(shape=)": lambda T, X: T.reshape(X, shape=(-1,)),
    "expand(size=)": lambda T, X: X[:1].expand(size=(2, 4)),
    # Tensor.new_* with the size by keyword (Step-by-Step's ch. 10 ViT)
    "new_zeros(size=)": lambda T, X: X.new_zeros(size=(2, 3)),
    "new_ones(size=[])": lambda T, X: X.new_ones(size=[2]),
    "new_empty(size=).shape": lambda T, X: X.new_empty(size=(1, 2)).shape,
    "new_zeros(size=, dtype=)": lambda T, X: X.new_zeros(size=(2,), dtype=T.int64),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_book_call_runs_and_matches_torch(name):
    fn = CALLS[name]
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    ours = fn(gt, gt.tensor(data))
    theirs = fn(torch, torch.tensor(data))
    if isinstance(theirs, torch.Size):
        assert tuple(ours) == tuple(theirs)
    else:
        same(ours, theirs)


def test_device_and_cuda_queries():
    assert gt.cuda.is_available() == (gt.cuda.device_count() > 0)
    assert str(gt.device("cpu")) == "cpu" and gt.device("cpu") == gt.device("cpu")
    assert gt.jit.script(gt.nn.Linear(2, 2)) is not None


def test_linalg_eig_matches_torch():
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    w = gt.linalg.eig(gt.tensor(a))[0]
    tw = torch.linalg.eig(torch.tensor(a))[0]
    np.testing.assert_allclose(np.sort(w.numpy().real), np.sort(tw.numpy().real))


@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid_matches_torch(indexing):
    ours = gt.meshgrid(gt.arange(3), gt.arange(2), gt.arange(4), indexing=indexing)
    theirs = torch.meshgrid(torch.arange(3), torch.arange(2), torch.arange(4), indexing=indexing)
    for a, b in zip(ours, theirs):
        assert tuple(a.shape) == tuple(b.shape)
        same(a, b)


def test_range_index_as_d2l_cross_entropy_uses_it():
    yh = np.array([[0.1, 0.3, 0.6], [0.3, 0.2, 0.5]])
    ours = gt.tensor(yh, requires_grad=True)
    theirs = torch.tensor(yh, requires_grad=True)
    for T, t in ((gt, ours), (torch, theirs)):
        (-T.log(t[range(2), T.tensor([0, 2])])).sum().backward()
    same(ours.grad, theirs.grad)


def test_inplace_view_ops_match_torch():
    for name, args in [("unsqueeze_", (0,)), ("squeeze_", ()), ("t_", ()), ("transpose_", (0, 1))]:
        a, b = gt.zeros(3, 1) + gt.arange(3.0).reshape(3, 1), torch.zeros(3, 1) + torch.arange(3.0).reshape(3, 1)
        ra, rb = getattr(a, name)(*args), getattr(b, name)(*args)
        assert ra is a and tuple(a.shape) == tuple(b.shape)
        same(a, b)
    x, y = gt.arange(6.0), torch.arange(6.0)
    x.resize_(2, 2)
    y.resize_(2, 2)
    same(x, y)


def test_scalar_mul_saves_the_number_as_torch_shows_it():
    for T in (gt, torch):
        x = T.randn(3, requires_grad=True)
        z = x * 2.0
        assert z.grad_fn._saved_self is None and float(z.grad_fn._saved_other) == 2.0


def test_meshgrid_refuses_mixed_dtypes_as_torch():
    with pytest.raises(RuntimeError, match="meshgrid expects all tensors to have the same dtype"):
        gt.meshgrid(gt.arange(3), gt.arange(2.0), indexing="ij")


@pytest.mark.parametrize("values", [
    [np.int32(1), np.int32(2)], [np.bool_(True)], [np.float32(1), 2.0], [np.float64(1.5)], [np.uint8(3)],
    [[np.int16(1)]], [np.int32(1), 5], [1, 2.5], [[True, False]], [], [1, 2]])
def test_tensor_infers_torch_dtype_from_numpy_scalars_and_numbers(values):
    assert str(gt.tensor(values).dtype) == str(torch.tensor(values).dtype)


@pytest.mark.parametrize("call", [lambda x: x.flip(1, dims=[0]), lambda x: x.permute(1, 0, dims=(1, 0))])
def test_a_list_given_spread_out_and_by_name_raises_like_torch(call):
    with pytest.raises(TypeError, match="multiple values for argument 'dims'"):
        call(torch.ones(2, 3))
    with pytest.raises(TypeError, match="multiple values for argument 'dims'"):
        call(gt.ones(2, 3))


@pytest.mark.parametrize("call", [lambda x: x.new_zeros((2,), size=(2,)), lambda x: x.new_ones(size=2)])
def test_new_zeros_size_keyword_errors_like_torch(call):
    with pytest.raises(TypeError) as theirs:
        call(torch.ones(2))
    with pytest.raises(TypeError) as ours:
        call(gt.ones(2))
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("values", [
    lambda T: [T.tensor([1.0]), T.tensor(2.0)], lambda T: [T.tensor(2.0), T.tensor([1.0])],
    lambda T: [T.tensor([1.0]), T.tensor([2.0])], lambda T: [[T.tensor([1.0])], [T.tensor(2.0)]],
    lambda T: [T.tensor([[1.0]]), 2.0], lambda T: [[1, 2], [T.tensor(3), 4]]])
def test_a_tensor_inside_a_list_is_one_number_as_torch_reads_it(values):
    # d2l's multivariable-calculus: torch.tensor([exp(x) / s, exp(y) / s]) with x of shape (1,), y 0-d
    ours, theirs = gt.tensor(values(gt)), torch.tensor(values(torch))
    assert tuple(ours.shape) == tuple(theirs.shape) and str(ours.dtype) == str(theirs.dtype)
    same(ours, theirs)


def test_a_bigger_tensor_inside_a_list_raises_like_torch():
    with pytest.raises(ValueError, match="only one element tensors"):
        torch.tensor([torch.tensor([1.0, 3.0]), torch.tensor(2.0)])
    with pytest.raises(ValueError, match="only one element tensors"):
        gt.tensor([gt.tensor([1.0, 3.0]), gt.tensor(2.0)])


# -- d2l's Gaussian-process chapter: gpytorch's linear_operator registers torch.logdet at import -------

LOGDET_BATCH = np.array([[[1.0, 2.0], [3.0, 4.0]], [[2.0, 1.0], [1.0, 3.0]], [[1.0, 2.0], [2.0, 4.0]]])


@pytest.mark.parametrize("entry", [0, 1, 2])
def test_logdet_values_gradients_and_node_as_torch(entry):
    """Negative determinant: NaN and no gradient; singular: -inf and a non-finite gradient in its own
    entry only (a singular matrix in the batch used to make every entry's gradient NaN)."""
    results = []
    for lib in (gt, torch):
        x = lib.tensor(LOGDET_BATCH, requires_grad=True)
        y = lib.logdet(x) if entry != 1 else x.logdet()
        y[entry].backward()
        results.append((y.detach().numpy(), x.grad.numpy(), type(y.grad_fn).__name__))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    finite = np.isfinite(results[1][1])
    np.testing.assert_allclose(results[0][1][finite], results[1][1][finite], rtol=1e-12)
    # the singular matrix's gradient: torch's LU solve gives +-inf, glasstorch NaN (README)
    assert np.array_equal(np.isfinite(results[0][1]), finite)
    assert results[0][2] == results[1][2] == "WhereBackward0"


def test_logdet_complex_and_errors_as_torch():
    z = LOGDET_BATCH[1].astype(np.complex128)
    same(gt.logdet(gt.tensor(z)), torch.logdet(torch.tensor(z)))
    for make in (lambda T: T.zeros(2, 3), lambda T: T.zeros(3), lambda T: T.zeros(2, 2, dtype=T.int64)):
        with pytest.raises(RuntimeError) as expected:
            torch.logdet(make(torch))
        with pytest.raises(RuntimeError) as got:
            gt.logdet(make(gt))
        assert str(got.value) == str(expected.value)


def test_batched_solve_with_a_singular_matrix_spoils_only_its_own_solution():
    A = gt.tensor(LOGDET_BATCH)
    X = gt.linalg.solve_ex(A, gt.ones(3, 2, 1, dtype=gt.float64))[0].numpy()
    np.testing.assert_allclose(X[:2], torch.linalg.solve_ex(torch.tensor(LOGDET_BATCH[:2]),
                                                            torch.ones(2, 2, 1, dtype=torch.float64))[0].numpy())
    assert np.isnan(X[2]).all()     # torch: +-inf from its LU solve; NaN here (README)
