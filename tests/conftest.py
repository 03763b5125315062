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
