"""Reductions computed as BLAS products: sums over a tensor's first and last dims as products with vectors
of ones (_array.sum_ends), and a whole float tensor's 2-norm as its dot product with itself -- against torch
for every (lead, trail) split, keepdim, float32/float64, non-contiguous inputs, and the dtypes that take
NumPy's own sum."""
import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import glasstorch as gt  # noqa: E402
from glasstorch._array import sum_ends  # noqa: E402
from glasstorch.ops.reduction import _ends  # noqa: E402

SHAPES = [(5,), (4, 7), (3, 4, 5), (2, 3, 4, 5), (1, 6, 1, 3), (0, 3), (3, 0, 2)]


def _dims(ndim):
    for k in range(1, ndim + 1):
        yield from itertools.combinations(range(ndim), k)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_sum_over_any_dims_as_torch(shape, dtype):
    rng = np.random.default_rng(len(shape))
    x = rng.standard_normal(shape).astype(dtype)
    for dims, keepdim in itertools.product(_dims(len(shape)), (False, True)):
        for view in (lambda t: t, lambda t: t.transpose(0, -1)):   # (a non-contiguous one takes NumPy's sum)
            theirs = view(torch.tensor(x)).sum(dims, keepdim=keepdim)
            ours = view(gt.tensor(x)).sum(dims, keepdim=keepdim)
            assert tuple(ours.shape) == tuple(theirs.shape) and ours.stride() == theirs.stride(), (dims, keepdim)
            assert ours.dtype == gt.float32 if dtype == "float32" else gt.float64
            tol = 1e-5 if dtype == "float32" else 1e-12
            np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=tol, atol=tol, err_msg=str((dims, keepdim)))


def test_which_dims_are_ends():
    assert _ends((0,), 3) == (1, 0) and _ends((2,), 3) == (0, 1) and _ends((0, 2, 3), 4) == (1, 2)
    assert _ends((3, 0), 4) == (1, 1)                    # (any order)
    assert _ends((1,), 3) is None and _ends((0, 1, 2), 3) is None and _ends((0, 2), 4) is None


@pytest.mark.parametrize("dtype", [torch.int32, torch.uint8, torch.bool, torch.float16])
def test_other_dtypes_keep_torchs_accumulation(dtype):
    x = torch.arange(24).reshape(2, 3, 4).to(dtype)
    ours = gt.tensor(x.numpy()).sum((0, 2))
    theirs = x.sum((0, 2))
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(ours.numpy().astype(float), theirs.numpy().astype(float))


def test_the_products_sum_like_numpy_and_beat_its_rounding():
    a = np.random.default_rng(0).standard_normal((32768, 28)).astype(np.float32)
    exact = a.astype(np.float64).sum(0)
    ours = sum_ends(a, 1)
    assert ours.dtype == np.float32 and ours.shape == (28,) and ours.base is None    # (an array of its own)
    assert sum_ends(np.ones((4, 2, 3), np.float32), 1).base is None
    assert np.abs(ours - exact).max() <= np.abs(a.sum(0) - exact).max()
    g = np.random.default_rng(1).standard_normal((8, 6, 5, 5)).astype(np.float64)
    np.testing.assert_allclose(sum_ends(g, 1, 2), g.sum(axis=(0, 2, 3)), rtol=1e-12)


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_whole_tensors_2_norm_as_torch(dtype, keepdim):
    # (the whole of a row-major float tensor: its dot product with itself; strided and dim-wise norms keep the
    # squares' sum -- both against torch, and the dot product at least as close to the exact norm as torch)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1024, 256)).astype(dtype)
    for a in (x, x[:, ::3], x[:5, :7], np.array([3.0, 4.0], dtype), np.array(2.5, dtype), np.zeros((0, 3), dtype),
              np.array([np.inf, 1.0], dtype), np.array([np.nan, 1.0], dtype)):
        ours = gt.linalg.vector_norm(gt.tensor(a), keepdim=keepdim)
        theirs = torch.linalg.vector_norm(torch.tensor(a), keepdim=keepdim)
        assert tuple(ours.shape) == tuple(theirs.shape) and ours.stride() == theirs.stride()
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=2e-6 if dtype == "float32" else 1e-12)
    exact = np.sqrt((x.astype(np.float64) ** 2).sum())
    ours = float(gt.linalg.vector_norm(gt.tensor(x)))
    assert abs(ours - exact) <= abs(float(torch.linalg.vector_norm(torch.tensor(x))) - exact) + 1e-12


def test_a_linear_bias_gradient_is_taken_over_not_copied():
    # (the engine's leading-dims sum gives an array of its own, which AccumulateGrad keeps as the .grad)
    lin = gt.nn.Linear(4, 3)
    lin(gt.randn(2, 5, 4)).sum().backward()
    assert lin.bias.grad._data.base is None and lin.bias.grad.shape == (3,)
    np.testing.assert_allclose(lin.bias.grad.numpy(), np.full(3, 10.0))
