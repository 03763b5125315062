"""Shared test fixtures (kept small: ask the ops-tests owner before adding here)."""
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


def pytest_collection_modifyitems(config, items):
    """Tests marked ``@pytest.mark.slow`` are skipped unless --runslow is given (pyproject's marker)."""
    if config.getoption("--runslow"):
        return
    skip_slow = pytest.mark.skip(reason="slow: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)
