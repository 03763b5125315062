"""utils.checkpoint: gradients equal the plain run's; activations are recomputed, not kept."""
import numpy as np
import pytest

import glasstorch as gt
from glasstorch.utils.checkpoint import checkpoint, checkpoint_sequential

torch = pytest.importorskip("torch")


def _block(w1, w2):
    def f(x):
        return (x @ w1).tanh() @ w2
    return f


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_gradients_equal_plain_run_and_torch(use_reentrant):
    rng = np.random.default_rng(0)
    a, b, xin = rng.standard_normal((5, 5)), rng.standard_normal((5, 3)), rng.standard_normal((4, 5))
    w1, w2 = gt.tensor(a, requires_grad=True), gt.tensor(b, requires_grad=True)
    x = gt.tensor(xin, requires_grad=True)
    out = checkpoint(_block(w1, w2), x, use_reentrant=use_reentrant)
    (out ** 2).sum().backward()
    t1, t2 = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    tx = torch.tensor(xin, requires_grad=True)
    ((torch.tanh(tx @ t1) @ t2) ** 2).sum().backward()
    for ours, theirs in [(w1, t1), (w2, t2), (x, tx)]:
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-10)


def test_checkpoint_params_get_grads_when_input_does_not_require_grad():
    w1, w2 = gt.randn(3, 3, dtype=gt.float64, requires_grad=True), gt.randn(3, 2, dtype=gt.float64, requires_grad=True)
    x = gt.randn(2, 3, dtype=gt.float64)
    checkpoint(_block(w1, w2), x, use_reentrant=False).sum().backward()
    g = w1.grad.clone()
    w1.grad = None
    _block(w1, w2)(x).sum().backward()
    np.testing.assert_allclose(g.numpy(), w1.grad.numpy())


def test_checkpoint_recomputes_in_backward():
    calls = []
    w = gt.randn(3, 3, requires_grad=True)

    def f(x):
        calls.append(1)
        return (x @ w).relu()
    y = checkpoint(f, gt.randn(2, 3), use_reentrant=False)
    assert len(calls) == 1 and y.requires_grad
    y.sum().backward()
    assert len(calls) == 2          # run again during backward
    assert w.grad is not None


def test_checkpoint_preserves_rng_for_dropout_like_randomness():
    w = gt.randn(4, 4, dtype=gt.float64, requires_grad=True)

    def f(x):
        mask = (gt.rand(*x.shape) > 0.5).double()
        return (x @ w) * mask
    x = gt.randn(3, 4, dtype=gt.float64)
    gt.manual_seed(1)
    checkpoint(f, x, use_reentrant=False).sum().backward()
    g = w.grad.clone()
    w.grad = None
    gt.manual_seed(1)
    f(x).sum().backward()
    np.testing.assert_allclose(g.numpy(), w.grad.numpy())


def test_checkpoint_under_no_grad_just_runs():
    w = gt.randn(2, 2, requires_grad=True)
    with gt.no_grad():
        y = checkpoint(lambda x: x @ w, gt.randn(2, 2), use_reentrant=False)
    assert not y.requires_grad


def test_checkpoint_sequential_matches_plain():
    fns = []
    ws = [gt.randn(4, 4, dtype=gt.float64, requires_grad=True) for _ in range(6)]
    for w in ws:
        fns.append(lambda x, w=w: (x @ w).tanh())
    x = gt.randn(2, 4, dtype=gt.float64)
    checkpoint_sequential(fns, 3, x, use_reentrant=False).sum().backward()
    grads = [w.grad.clone() for w in ws]
    for w in ws:
        w.grad = None
    y = x
    for f in fns:
        y = f(y)
    y.sum().backward()
    for g, w in zip(grads, ws):
        np.testing.assert_allclose(g.numpy(), w.grad.numpy(), rtol=1e-12)
