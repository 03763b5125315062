"""Shared test fixtures (kept small: ask the ops-tests owner before adding here)."""
import sys

import pytest

import glasstorch
from glasstorch._tensor_str import get_printoptions


@pytest.fixture(autouse=True)
def _restore_global_state():
    """Put back the process-wide settings a test may change (default dtype, print options, grad
    mode), so one failing test cannot make the next ones fail for the wrong reason."""
    dtype = glasstorch.get_default_dtype()
    printopts = get_printoptions()
    grad_enabled = glasstorch.is_grad_enabled()
    yield
    glasstorch.set_default_dtype(dtype)
    glasstorch.set_printoptions(**printopts)
    glasstorch.set_grad_enabled(grad_enabled)


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False,
                     help="also run the tests marked slow (long model builds, long runs)")
    parser.addoption("--device", default="cpu", choices=("cpu", "meta", "cuda", "fakecuda"),
                     help="the device the op registry's tests (tests/test_ops.py) make glasstorch's inputs on; "
                          "torch on the CPU stays the oracle (meta: shapes, dtypes and strides only; fakecuda: "
                          "'cuda' through tests/_fake_cupy.py, NumPy behind CuPy's boundary -- no GPU)")


def pytest_configure(config):
    """``--device cuda`` on a machine where glasstorch finds no GPU stops the run at once: a run that
    says it tested CUDA must have (it would otherwise fail every op with the same AssertionError).
    ``--device fakecuda`` installs the CuPy stand-in (tests/_fake_cupy.py) as ``cupy`` before anything
    asks glasstorch about GPUs; the tests then run on ``cuda`` as on a GPU machine."""
    if config.getoption("--device") == "fakecuda":
        import importlib.util
        import os
        spec = importlib.util.spec_from_file_location("_fake_cupy", os.path.join(os.path.dirname(__file__),
                                                                                 "_fake_cupy.py"))
        fake = importlib.util.module_from_spec(spec)
        sys.modules["_fake_cupy"] = fake
        spec.loader.exec_module(fake)
        fake.install()
    if config.getoption("--device") == "cuda" and not glasstorch.cuda.is_available():
        raise pytest.UsageError("--device cuda: glasstorch.cuda.is_available() is False (CuPy with a GPU is "
                                "needed: pip install cupy-cuda12x)")


@pytest.fixture
def test_device(request):
    """The device of ``--device`` (default ``cpu``; ``fakecuda`` is ``cuda``, through the stand-in)."""
    device = request.config.getoption("--device")
    return "cuda" if device == "fakecuda" else device


def pytest_collection_modifyitems(config, items):
    """Tests marked ``@pytest.mark.slow`` are skipped unless --runslow is given (pyproject's marker)."""
    if config.getoption("--runslow"):
        return
    skip_slow = pytest.mark.skip(reason="slow: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)
