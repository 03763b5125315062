"""torch.special beyond the op registry (tests/opinfo.py holds the ops against torch): the names, the
doc example, zeta's missing derivative, and the NumPy kernels against torch on wide grids."""
import doctest
import importlib

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import glasstorch as gt  # noqa: E402
from glasstorch._array import special as kernels  # noqa: E402


def test_names_are_torchs():
    for name in gt.special.__all__:
        assert hasattr(torch.special, name), name
    assert gt.special.psi is gt.special.digamma and gt.special.expit is gt.sigmoid


def test_doc_example():
    result = doctest.testmod(importlib.import_module("glasstorch.special"), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted and not result.failed


def test_zeta_has_no_derivative_as_in_torch():
    for lib in (torch, gt):
        out = lib.special.zeta(lib.tensor([2.0, 3.0], requires_grad=True), 2.0)
        assert type(out.grad_fn).__name__ == "SpecialZetaBackward2"
        with pytest.raises(NotImplementedError, match="the derivative for 'zeta' is not implemented"):
            out.sum().backward()


_GRIDS = {
    "erfinv": np.linspace(-0.9999, 0.9999, 401), "digamma": np.linspace(-9.7, 60, 401),
    "lgamma": np.linspace(-9.7, 60, 401), "i0": np.linspace(-80, 80, 401), "i0e": np.linspace(-800, 800, 401),
    "i1": np.linspace(-80, 80, 401), "i1e": np.linspace(-800, 800, 401), "erfcx": np.linspace(-25, 1e4, 401),
    "log_ndtr": np.linspace(-1e3, 40, 401), "ndtri": np.linspace(1e-6, 1 - 1e-6, 401),
    "erf": np.linspace(-6, 6, 401),
}


@pytest.mark.parametrize("name", sorted(_GRIDS))
def test_numpy_kernels_match_torch(name):
    """The NumPy-only kernels (used when SciPy is absent) to ~float64 rounding on wide grids."""
    x = _GRIDS[name]
    fn = getattr(torch.special, name, None) or getattr(torch, name)
    ours = getattr(kernels, name)(x)
    assert ours.dtype == np.float64
    np.testing.assert_allclose(ours, fn(torch.tensor(x)).numpy(), rtol=1e-10, atol=1e-300)
    f32 = getattr(kernels, name)(x.astype(np.float32))
    assert f32.dtype == np.float32


@pytest.mark.parametrize("n", [1, 2, 4])
def test_polygamma_kernel(n):
    x = np.linspace(-4.7, 40, 301)
    np.testing.assert_allclose(kernels.polygamma(n, x), torch.polygamma(n, torch.tensor(x)).numpy(), rtol=1e-8)


def test_zero_dim_inputs():
    """0-d arrays stay arrays (NumPy's frompyfunc would give a Python float)."""
    for name in ("erf", "erfc", "lgamma", "erfinv", "digamma"):
        out = getattr(kernels, name)(np.array(0.5, dtype=np.float32))
        assert isinstance(out, np.ndarray) and out.dtype == np.float32 and out.shape == ()
