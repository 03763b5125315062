"""glasstorch's own gradcheck (central finite differences) on every op of the registry.

No torch here: this checks each derivative formula against the forward itself, in float64 on the
registry's small samples (tests/opinfo.py). Samples at non-differentiable points (ties of a max,
a zero vector's norm) are left to test_ops.py, which compares torch's rule for them; so are
samples with NaN/inf inputs, where differences are undefined. gradgradcheck (the derivative of the
derivative, through the same formulas run with create_graph=True) runs on the first small sample
of each op.
"""
import warnings

import numpy as np
import pytest

import glasstorch as gt
from glasstorch.autograd import gradcheck, gradgradcheck
from opinfo import op_db

MAX_NUMEL = 30       # finite differences cost two forwards per input element
GRADGRAD_NUMEL = 12


def _checkable(sample):
    """Small, differentiable, finite and all float64 (float32 leaves are too coarse for differences)."""
    floats = [l.array for l in sample.leaves if l.array.dtype.kind == "f"]
    return not sample.nondiff and sample.numel() <= MAX_NUMEL and \
        all(a.dtype == np.float64 and np.isfinite(a).all() for a in floats)


def _function(op, sample):
    """f(*leaf tensors) -> the op's floating-point outputs (what gradcheck differentiates)."""
    def f(*leaves):
        args, kwargs, _ = sample.build(gt, leaves)
        out = op.fn(gt, *args, **kwargs)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        return tuple(o for o in outs if isinstance(o, gt.Tensor) and o.is_floating_point())
    return f


def _contiguous_leaves(sample):
    # finite differences perturb the leaf's array in place: give gradcheck contiguous leaves
    # (the layouts themselves are covered by test_ops.py)
    leaves = []
    for leaf in sample.leaves:
        t = gt.from_numpy(np.array(leaf.array, order="C"))  # a contiguous copy (ascontiguousarray makes 0-d 1-d)
        leaves.append(t.requires_grad_() if leaf.requires_grad else t)
    return leaves


def _cases():
    for op in op_db:
        if op.grad and op.gradcheck and "float64" in op.dtypes:
            yield pytest.param(op, id=op.name)


@pytest.mark.parametrize("op", list(_cases()))
def test_gradcheck(op):
    checked = 0
    failures = []
    gradgrad_done = not op.gradgrad
    for sample in op.samples("float64"):
        if not _checkable(sample):
            continue
        leaves = _contiguous_leaves(sample)
        if not any(l.requires_grad for l in leaves):
            continue
        f = _function(op, sample)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                outs = f(*leaves)
            except Exception:
                continue  # a sample torch rejects too (test_ops.py checks the error)
            if not outs or not all(np.isfinite(o.detach().numpy()).all() for o in outs):
                continue  # nothing to differentiate, or NaN/inf outputs (var of one element, ...)
            try:
                gradcheck(f, leaves, eps=1e-6, atol=1e-5, rtol=1e-3)
                checked += 1
                if not gradgrad_done and sample.numel() <= GRADGRAD_NUMEL:
                    gradgradcheck(f, leaves, eps=1e-6, atol=1e-4, rtol=1e-3)
                    gradgrad_done = True
            except Exception as e:
                failures.append(f"{sample!r}: {type(e).__name__}: {str(e)[:400]}")
    assert not failures, f"{op.name}: " + "\n".join(failures[:5])
    if not checked:
        pytest.skip("no sample small and differentiable enough for finite differences")
