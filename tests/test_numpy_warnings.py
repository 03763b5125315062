"""torch computes inf and nan silently; so does glasstorch, without touching the user's NumPy state.

Each check runs in a fresh interpreter started with ``-W error``: any RuntimeWarning that NumPy raises
inside glasstorch would then be an exception. The user's own NumPy code must still warn (here: raise),
and np.geterr() must be what it was before glasstorch was imported.

Not covered, and not silenced: a reduction that overflows (the sum of [3e38, 3e38] in float32). NumPy
computes those in its own Python wrappers, so the warning names NumPy's file, not glasstorch's, and
silencing it would silence the user's own ``arr.sum()`` too.
"""
import subprocess
import sys

import pytest

CALLS = """
import numpy as np
before = np.geterr()
import glasstorch as torch
import glasstorch.nn.functional as F
assert np.geterr() == before, (np.geterr(), before)

x = torch.tensor([0.0, -1.0, 1000.0, float("inf"), float("nan")], requires_grad=True)
for y in (x.log(), x.log2(), x.log10(), x.log1p(), x.sqrt(), x.rsqrt(), x.reciprocal(), x.exp(), x.exp2(),
          x.expm1(), x.sinh(), x.cosh(), x.tan(), x.asin(), x.acos(), x.atanh(), x.acosh(), x / 0, x * float("inf"),
          x ** 1000, 2 ** (x * 100), x.lgamma(), x.erfinv(), F.softplus(x), x.sigmoid(),
          torch.log_softmax(x, 0), x.float() * 3e38, x - float("inf")):
    y.nan_to_num(0.0, 0.0, 0.0).sum().backward(retain_graph=True)
x.detach().digamma()
f = torch.tensor([1e6, -1e6]).half() + torch.tensor(0.0, dtype=torch.float16)  # overflow in the cast
torch.tensor(1e30).float() * torch.tensor(1e30)
F.binary_cross_entropy(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 0.0]))
F.cross_entropy(torch.tensor([[float("inf"), 0.0]]), torch.tensor([1]))
F.kl_div(torch.tensor([0.0]), torch.tensor([0.0]), reduction="sum")
torch.tensor([]).mean(), torch.tensor([0, 1]) / torch.tensor([0, 0])
assert np.geterr() == before

try:  # the user's own NumPy code is untouched: it warns (under -W error: raises) as before
    np.log(np.zeros(1))
except RuntimeWarning as e:
    assert "divide by zero" in str(e)
else:
    raise AssertionError("np.log(0) in the user's file no longer warns")
print("silent")
"""


def test_glasstorch_is_silent_where_torch_is_and_leaves_numpy_state_alone():
    done = subprocess.run([sys.executable, "-W", "error", "-c", CALLS], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "silent" and done.stderr == ""


def test_the_same_calls_are_silent_in_torch():
    """The premise: torch itself is silent for every call above."""
    torch = pytest.importorskip("torch")  # noqa: F841
    code = CALLS.replace("import glasstorch as torch", "import torch").replace(
        "import glasstorch.nn.functional as F", "import torch.nn.functional as F")
    done = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]


def test_the_documented_limits_of_the_filter():
    """README: a later 'error' filter comes first; an overflowing reduction warns from NumPy's file."""
    import warnings

    import glasstorch as gt
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning, match="divide by zero"):
            gt.tensor([0.0]).log()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert float(gt.tensor([3e38, 3e38]).sum()) == float("inf")
    assert any("overflow" in str(w.message) for w in caught)
