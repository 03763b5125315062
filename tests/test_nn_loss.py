"""Losses against torch: functional and module forms, every reduction, weights, ignore_index,
label smoothing, class-probability targets, N-d inputs; values, gradients (input and target),
second derivatives, grad_fn names, and torch's errors for bad input."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
TF = torch.nn.functional

import glasstorch as gt  # noqa: E402
import glasstorch.nn.functional as F  # noqa: E402

RNG = np.random.default_rng(1)
REDUCTIONS = ["mean", "sum", "none"]


def _np(t):
    return t.detach().numpy(force=True) if isinstance(t, torch.Tensor) else t.detach().numpy()


def check(tfn, gfn, *arrays, grad=(0,), atol=1e-10, double=True, name=True):
    """Compare loss values and the gradients w.r.t. the arrays at the positions in ``grad``."""
    ti = [torch.tensor(a, requires_grad=i in grad) if isinstance(a, np.ndarray) else a for i, a in enumerate(arrays)]
    gi = [gt.tensor(a, requires_grad=i in grad) if isinstance(a, np.ndarray) else a for i, a in enumerate(arrays)]
    ty, gy = tfn(*ti), gfn(*gi)
    assert tuple(ty.shape) == tuple(gy.shape)
    np.testing.assert_allclose(_np(gy), _np(ty), atol=atol, rtol=1e-8)
    if name:
        assert gy.grad_fn.name() == ty.grad_fn.name()
    tin, gin = [ti[i] for i in grad], [gi[i] for i in grad]
    r = RNG.standard_normal(ty.shape)
    tg = torch.autograd.grad(ty, tin, torch.tensor(r), create_graph=double)
    gg = gt.autograd.grad(gy, gin, gt.tensor(r), create_graph=double)
    for a, b in zip(tg, gg):
        np.testing.assert_allclose(_np(b), _np(a), atol=atol, rtol=1e-8)
    if double:
        ts = sum((a * a).sum() for a in tg if a.requires_grad)
        gs = sum((b * b).sum() for b in gg if b.requires_grad)
        if not isinstance(ts, torch.Tensor):
            return
        t2 = torch.autograd.grad(ts, tin, allow_unused=True)
        if not isinstance(gs, gt.Tensor):  # torch's second derivatives are all zero too
            assert all(a is None or not _np(a).any() for a in t2)
            return
        g2 = gt.autograd.grad(gs, gin, allow_unused=True)
        for a, b in zip(t2, g2):
            if a is None or b is None:
                assert (a is None or not _np(a).any()) and (b is None or not _np(b).any())
                continue
            np.testing.assert_allclose(_np(b), _np(a), atol=1e-7, rtol=1e-7)


def rand(*shape):
    return RNG.standard_normal(shape)


def labels(n, c, *extra):
    return RNG.integers(0, c, (n,) + extra)


# ---- cross entropy and nll -------------------------------------------------------------------------------------
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore", [-100, 1])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy_class_indices(reduction, weighted, ignore, smoothing):
    w = RNG.random(4) + 0.5 if weighted else None
    kw = dict(reduction=reduction, ignore_index=ignore, label_smoothing=smoothing)
    check(lambda x, t, w: TF.cross_entropy(x, t, weight=w, **kw), lambda x, t, w: F.cross_entropy(x, t, weight=w, **kw),
          rand(6, 4), labels(6, 4), w, name=smoothing == 0)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_nd_and_unbatched(reduction):
    check(lambda x, t: TF.cross_entropy(x, t, reduction=reduction), lambda x, t: F.cross_entropy(x, t, reduction=reduction),
          rand(3, 4, 2, 5), labels(3, 4, 2, 5))
    check(lambda x, t: TF.cross_entropy(x, t, reduction=reduction), lambda x, t: F.cross_entropy(x, t, reduction=reduction),
          rand(5), np.array(2))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_cross_entropy_probabilities(reduction, weighted, smoothing):
    probs = RNG.random((6, 4))
    probs /= probs.sum(1, keepdims=True)
    w = RNG.random(4) + 0.5 if weighted else None
    kw = dict(reduction=reduction, label_smoothing=smoothing)
    check(lambda x, p, w: TF.cross_entropy(x, p, weight=w, **kw), lambda x, p, w: F.cross_entropy(x, p, weight=w, **kw),
          rand(6, 4), probs, w, grad=(0, 1), name=False)
    check(lambda x, p: TF.cross_entropy(x, p, **kw), lambda x, p: F.cross_entropy(x, p, **kw),
          rand(2, 4, 3), RNG.random((2, 4, 3)), name=False)


def test_cross_entropy_graph_is_log_softmax_then_nll():
    x = gt.randn(4, 3, requires_grad=True)
    loss = F.cross_entropy(x, gt.tensor([0, 1, 2, 1]))
    assert loss.grad_fn.name() == "NllLossBackward0"
    assert loss.grad_fn.next_functions[0][0].name() == "LogSoftmaxBackward0"
    assert loss.grad_fn.next_functions[0][0].next_functions[0][0].name() == "torch::autograd::AccumulateGrad"


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss(reduction):
    check(lambda x, t, w: TF.nll_loss(x, t, w, reduction=reduction, ignore_index=0),
          lambda x, t, w: F.nll_loss(x, t, w, reduction=reduction, ignore_index=0),
          rand(7, 3), labels(7, 3), RNG.random(3))
    check(lambda x, t: TF.nll_loss(x, t, reduction=reduction), lambda x, t: F.nll_loss(x, t, reduction=reduction),
          rand(2, 3, 4), labels(2, 3, 4))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("ignore", [-100, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_row_major_and_strided_inputs_agree_with_torch(dtype, reduction, ignore, weighted):
    # a row-major (N, C) input is picked from and scattered into through flat positions
    # (ops/nn_loss.py _flat_positions), a strided one through the (row, class) index: the same bits, and
    # torch's values and gradients; -0, inf and nan among the picked values, Byte targets
    x = rand(9, 5).astype(dtype)
    t = labels(9, 5)
    t[1], t[2], t[3] = 2, 3, 4
    x[1, 2], x[2, 3], x[3, 4] = -0.0, np.inf, np.nan
    w = (RNG.random(5) + 0.5).astype(dtype) if weighted else None
    kw = dict(reduction=reduction, ignore_index=ignore)
    for target in (t, t.astype(np.uint8)):
        grads = []
        r = RNG.standard_normal((9,) if reduction == "none" else ()).astype(dtype)
        for strided in (False, True):
            a = gt.tensor(np.ascontiguousarray(x.T) if strided else x, requires_grad=True)
            xs = a.t() if strided else a
            assert xs.is_contiguous() != strided
            out = F.nll_loss(xs, gt.tensor(target), None if w is None else gt.tensor(w), **kw)
            (g,) = gt.autograd.grad(out, a, gt.tensor(r))
            grads.append((out.detach().numpy().tobytes(), (g.t() if strided else g).numpy()))
            ti = torch.tensor(x, requires_grad=True)
            want = TF.nll_loss(ti, torch.tensor(target), None if w is None else torch.tensor(w), **kw)
            np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-6, equal_nan=True)
            (tg,) = torch.autograd.grad(want, ti, torch.tensor(r))
            np.testing.assert_allclose(grads[-1][1], tg.numpy(), rtol=1e-6, equal_nan=True)
        assert grads[0][0] == grads[1][0] and grads[0][1].tobytes() == np.ascontiguousarray(grads[1][1]).tobytes()


def test_nll_loss_backward_by_a_zero_or_infinite_total_weight_warns_of_nothing():
    x = gt.zeros(2, 3)
    t = gt.tensor([0, 1])
    for total in (0.0, np.inf):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = gt.ops.aten.nll_loss_backward(gt.tensor(np.inf), x, t, None, 1, -100, gt.tensor(total))
        want = torch.ops.aten.nll_loss_backward(torch.tensor(np.inf), torch.zeros(2, 3), torch.tensor([0, 1]), None,
                                                1, -100, torch.tensor(total))
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_nll_loss_out_of_range_target_beside_an_ignored_one():
    x = gt.randn(4, 3)
    for bad in (3, -1, -7, 2 ** 40):
        with pytest.raises(IndexError, match=f"Target {bad} is out of bounds."):
            F.nll_loss(x, gt.tensor([-100, 1, bad, 0]))
    assert np.isfinite(F.nll_loss(x, gt.tensor([-100, 1, 2, 0])).item())


def test_nll_loss_all_ignored_is_nan_for_mean():
    x, t = np.zeros((2, 3)), np.array([-100, -100])
    a = TF.nll_loss(torch.tensor(x), torch.tensor(t))
    b = F.nll_loss(gt.tensor(x), gt.tensor(t))
    assert np.isnan(a.item()) and np.isnan(b.item())
    assert F.nll_loss(gt.tensor(x), gt.tensor(t), reduction="sum").item() == 0


def test_cross_entropy_float32():
    x, t = rand(64, 10).astype(np.float32), labels(64, 10)
    a = TF.cross_entropy(torch.tensor(x), torch.tensor(t))
    b = F.cross_entropy(gt.tensor(x), gt.tensor(t))
    assert b.dtype == gt.float32
    np.testing.assert_allclose(b.item(), a.item(), rtol=1e-6)


def test_cross_entropy_and_nll_errors():
    x = gt.randn(4, 3)
    with pytest.raises(IndexError, match="Target 3 is out of bounds."):
        F.cross_entropy(x, gt.tensor([0, 1, 2, 3]))
    with pytest.raises(IndexError, match="Target -1 is out of bounds."):
        F.nll_loss(x, gt.tensor([0, 1, 2, -1]))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(4\) to match target batch_size \(3\)."):
        F.cross_entropy(x, gt.tensor([0, 1, 2]))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Float"):
        F.cross_entropy(x, gt.tensor([0.0, 1, 2, 1]))
    with pytest.raises(RuntimeError, match=r"Expected target size \[4, 5\], got \[4\]"):
        F.cross_entropy(gt.randn(4, 3, 5), gt.tensor([0, 1, 2, 1]))
    with pytest.raises(RuntimeError, match="weight tensor should be defined either for all 3 classes or no classes but "
                                           r"got weight tensor of shape: \[4\]"):
        F.nll_loss(x, gt.tensor([0, 1, 2, 2]), weight=gt.ones(4))
    with pytest.raises(RuntimeError, match="label_smoothing must be between 0.0 and 1.0. Got: 1.5"):
        F.cross_entropy(x, gt.tensor([0, 1, 2, 1]), label_smoothing=1.5)
    with pytest.raises(RuntimeError, match="ignore_index is not supported for floating point target"):
        F.cross_entropy(x, gt.rand(4, 3), ignore_index=1)
    with pytest.raises(RuntimeError, match="Expected floating point type for target with class probabilities, got Long"):
        F.cross_entropy(x, gt.zeros(4, 3, dtype=gt.long))
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        F.cross_entropy(x, gt.tensor([0, 1, 2, 1]), reduction="foo")


# ---- regression losses ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("fn,kw,name", [("mse_loss", {}, True), ("l1_loss", {}, True),
                                        ("smooth_l1_loss", {}, True), ("smooth_l1_loss", {"beta": 0.5}, True),
                                        ("smooth_l1_loss", {"beta": 0.0}, True), ("huber_loss", {}, True),
                                        ("huber_loss", {"delta": 0.3}, True)])
def test_regression_losses(reduction, fn, kw, name):
    x, y = rand(5, 4), rand(5, 4)
    x[0, :2] = y[0, :2] + np.array([kw.get("beta", kw.get("delta", 1.0)), 0.0])  # on the switch, and d = 0
    check(lambda x, y: getattr(TF, fn)(x, y, reduction=reduction, **kw),
          lambda x, y: getattr(F, fn)(x, y, reduction=reduction, **kw), x, y, grad=(0, 1), name=name,
          double=fn != "l1_loss")


def test_regression_loss_broadcast_warns_like_torch():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        check(lambda x, y: TF.mse_loss(x, y), lambda x, y: F.mse_loss(x, y), rand(4, 3), rand(1, 3), grad=(0, 1),
              name=False)
    assert any("Using a target size" in str(m.message) for m in w)
    with pytest.raises(RuntimeError):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            F.mse_loss(gt.randn(4, 3), gt.randn(4, 2))


def test_mse_loss_mixed_dtypes_promote():
    a = TF.mse_loss(torch.tensor(rand(3).astype(np.float32)), torch.tensor(rand(3)))
    b = F.mse_loss(gt.tensor(rand(3).astype(np.float32)), gt.tensor(rand(3)))
    assert str(a.dtype).split(".")[1] == str(b.dtype).split(".")[1]


# ---- binary cross entropy --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy(reduction, weighted):
    p, t = RNG.random((5, 3)) * 0.98 + 0.01, RNG.random((5, 3))
    w = RNG.random(3) + 0.5 if weighted else None
    check(lambda p, t, w: TF.binary_cross_entropy(p, t, w, reduction=reduction),
          lambda p, t, w: F.binary_cross_entropy(p, t, w, reduction=reduction), p, t, w, grad=(0, 1), double=False)
    check(lambda p, t, w: TF.binary_cross_entropy(p, t, w, reduction=reduction),
          lambda p, t, w: F.binary_cross_entropy(p, t, w, reduction=reduction), p, t, w, grad=(0,))


def test_binary_cross_entropy_clamps_log_at_minus_100():
    p, t = np.array([0.0, 1.0, 0.5]), np.array([1.0, 0.0, 1.0])
    a = TF.binary_cross_entropy(torch.tensor(p), torch.tensor(t), reduction="none")
    b = F.binary_cross_entropy(gt.tensor(p), gt.tensor(t), reduction="none")
    np.testing.assert_allclose(b.numpy(), a.numpy())


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("pos_weight", [False, True])
def test_binary_cross_entropy_with_logits(reduction, weighted, pos_weight):
    x, t = rand(5, 3) * 3, RNG.random((5, 3))
    w = RNG.random(3) + 0.5 if weighted else None
    pw = RNG.random(3) * 3 if pos_weight else None

    def call(F_, T):
        return lambda x, t, w, pw: F_.binary_cross_entropy_with_logits(x, t, w, reduction=reduction, pos_weight=pw)
    check(call(TF, torch), call(F, gt), x, t, w, pw, grad=(0, 1), double=False)
    check(call(TF, torch), call(F, gt), x, t, w, pw, grad=(0,))


def test_bce_errors():
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(gt.rand(4, 3) + 1, gt.rand(4, 3))
    with pytest.raises(ValueError, match=r"Using a target size \(torch.Size\(\[4, 2\]\)\) that is different to the "
                                         r"input size \(torch.Size\(\[4, 3\]\)\) is deprecated"):
        F.binary_cross_entropy(gt.rand(4, 3), gt.rand(4, 2))
    with pytest.raises(ValueError, match=r"Target size \(torch.Size\(\[4, 2\]\)\) must be the same as input size "
                                         r"\(torch.Size\(\[4, 3\]\)\)"):
        F.binary_cross_entropy_with_logits(gt.rand(4, 3), gt.rand(4, 2))
    with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
        F.binary_cross_entropy(gt.rand(4, 3), gt.rand(4, 3).double())


# ---- kl_div, cosine embedding and the other compositions -------------------------------------------------------------
@pytest.mark.parametrize("reduction", ["batchmean", "sum", "none", "mean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(reduction, log_target):
    p = RNG.random((4, 5))
    p /= p.sum(1, keepdims=True)
    p[0, 0] = 0.0  # 0 log 0 = 0
    target = np.log(p + 1e-3) if log_target else p
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda x, t: TF.kl_div(x, t, reduction=reduction, log_target=log_target),
              lambda x, t: F.kl_div(x, t, reduction=reduction, log_target=log_target),
              np.log(RNG.random((4, 5))), target, name=True)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [0.0, 0.3])
def test_cosine_embedding_loss(reduction, margin):
    y = np.array([1, -1, 1, -1, -1])
    check(lambda a, b, y: TF.cosine_embedding_loss(a, b, y, margin, reduction=reduction),
          lambda a, b, y: F.cosine_embedding_loss(a, b, y, margin, reduction=reduction),
          rand(5, 3), rand(5, 3), y, grad=(0, 1), name=reduction != "none")
    with pytest.raises(RuntimeError):
        F.cosine_embedding_loss(gt.rand(4, 3), gt.rand(4, 3), gt.ones(3))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_other_losses(reduction):
    y = np.array([1.0, -1.0, 1.0, -1.0])
    check(lambda a, b, y: TF.margin_ranking_loss(a, b, y, 0.2, reduction=reduction),
          lambda a, b, y: F.margin_ranking_loss(a, b, y, 0.2, reduction=reduction), rand(4), rand(4), y,
          grad=(0, 1), name=False)
    check(lambda a, y: TF.hinge_embedding_loss(a, y, reduction=reduction),
          lambda a, y: F.hinge_embedding_loss(a, y, reduction=reduction), rand(4), y, name=False)
    check(lambda a, y: TF.soft_margin_loss(a, y, reduction=reduction),
          lambda a, y: F.soft_margin_loss(a, y, reduction=reduction), rand(4), y, name=False)
    check(lambda a, t: TF.poisson_nll_loss(a, t, reduction=reduction),
          lambda a, t: F.poisson_nll_loss(a, t, reduction=reduction), rand(4), RNG.random(4) * 3, name=False)
    check(lambda a, t: TF.poisson_nll_loss(a, t, log_input=False, full=True, reduction=reduction),
          lambda a, t: F.poisson_nll_loss(a, t, log_input=False, full=True, reduction=reduction),
          RNG.random(4) + 0.1, RNG.random(4) * 3, name=False)
    check(lambda a, t, v: TF.gaussian_nll_loss(a, t, v, reduction=reduction),
          lambda a, t, v: F.gaussian_nll_loss(a, t, v, reduction=reduction), rand(4, 2), rand(4, 2),
          RNG.random((4, 2)) + 0.1, grad=(0, 2), name=False)
    check(lambda a, t: TF.multilabel_soft_margin_loss(a, t, reduction=reduction),
          lambda a, t: F.multilabel_soft_margin_loss(a, t, reduction=reduction), rand(4, 3),
          (RNG.random((4, 3)) > 0.5).astype(float), name=False)
    check(lambda a, p, n: TF.triplet_margin_loss(a, p, n, reduction=reduction),
          lambda a, p, n: F.triplet_margin_loss(a, p, n, reduction=reduction), rand(4, 3), rand(4, 3), rand(4, 3),
          grad=(0, 1, 2), name=False)


# ---- the loss modules ----------------------------------------------------------------------------------------------
def test_loss_modules_match_functional_and_state_dict():
    x, t = rand(6, 4), labels(6, 4)
    w = RNG.random(4) + 0.5
    cases = [("CrossEntropyLoss", dict(weight=w, ignore_index=1, label_smoothing=0.1, reduction="sum"), (x, t)),
             ("NLLLoss", dict(weight=w), (x, t)), ("MSELoss", {}, (x, rand(6, 4))), ("L1Loss", {}, (x, rand(6, 4))),
             ("SmoothL1Loss", dict(beta=0.5), (x, rand(6, 4))), ("HuberLoss", dict(delta=2.0), (x, rand(6, 4))),
             ("BCEWithLogitsLoss", dict(pos_weight=RNG.random(4)), (x, RNG.random((6, 4)))),
             ("BCELoss", dict(weight=w), (RNG.random((6, 4)), RNG.random((6, 4)))),
             ("KLDivLoss", dict(reduction="batchmean"), (x, RNG.random((6, 4)))),
             ("CosineEmbeddingLoss", dict(margin=0.5), (x, rand(6, 4), np.array([1, -1, 1, 1, -1, 1])))]
    for cls, kw, args in cases:
        tm = getattr(torch.nn, cls)(**{k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()})
        gm = getattr(gt.nn, cls)(**{k: gt.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()})
        assert repr(gm) == repr(tm)
        assert list(gm.state_dict()) == list(tm.state_dict())
        a = tm(*[torch.tensor(v) for v in args])
        b = gm(*[gt.tensor(v) for v in args])
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-10, err_msg=cls)


def test_legacy_size_average_and_reduce():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for size_average, reduce in ((False, None), (None, False), (True, True)):
            tm = torch.nn.MSELoss(size_average=size_average, reduce=reduce)
            gm = gt.nn.MSELoss(size_average=size_average, reduce=reduce)
            assert gm.reduction == tm.reduction


# ---- what dispatch-level tools see: torch's aten ops, forward, backward and double backward ---------------------
# (ops of other families -- log_softmax, sum, expand -- and torch's internal detach/ones_like are left out:
# the ops of ops/nn_loss.py, nn_norm.py and nn_rnn.py must appear in torch's order)
OWN_OPS = {"nll_loss_forward", "nll_loss_backward", "nll_loss2d_forward", "nll_loss2d_backward", "mse_loss",
           "mse_loss_backward", "smooth_l1_loss", "smooth_l1_loss_backward", "huber_loss", "huber_loss_backward",
           "binary_cross_entropy", "binary_cross_entropy_backward", "binary_cross_entropy_with_logits",
           "soft_margin_loss", "soft_margin_loss_backward", "native_batch_norm", "native_batch_norm_backward",
           "native_layer_norm", "native_layer_norm_backward", "native_group_norm", "native_group_norm_backward",
           "mkldnn_rnn_layer", "mkldnn_rnn_layer_backward"}


def dispatched_ops(lib, fn, arrays, double=False):
    """The aten ops of OWN_OPS a TorchDispatchMode sees while ``fn`` runs forward, backward (and, with
    ``double``, a backward of the gradients)."""
    from aten_log import recorder, packet
    log = recorder(lib, keep=lambda name: packet(name) in OWN_OPS)
    leaves = [lib.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    diff = [t for t in leaves if t.requires_grad]
    with log:
        y = fn(lib, *leaves)
        grads = [g for g in lib.autograd.grad(y.sum(), diff, create_graph=double, allow_unused=True) if g is not None]
        if double:
            lib.autograd.grad(sum((g * g).sum() for g in grads), diff, allow_unused=True)
    return [packet(name) for name in log.names]


_x, _t = RNG.standard_normal((4, 5)), np.array([1, 0, 4, 2])
_p = RNG.uniform(0.1, 0.9, (4, 5))


@pytest.mark.parametrize("name,fn,arrays,double", [
    ("cross_entropy", lambda L, x, t: L.nn.functional.cross_entropy(x, t), (_x, _t), True),
    ("nll_loss 4-D", lambda L, x, t: L.nn.functional.nll_loss(x, t), (RNG.standard_normal((2, 3, 2, 2)),
                                                                         RNG.integers(0, 3, (2, 2, 2))), True),
    ("mse_loss", lambda L, x, y: L.nn.functional.mse_loss(x, y), (_x, RNG.standard_normal((4, 5))), True),
    ("smooth_l1_loss", lambda L, x, y: L.nn.functional.smooth_l1_loss(x, y, beta=0.5), (_x, _p), True),
    ("huber_loss", lambda L, x, y: L.nn.functional.huber_loss(x, y, reduction="sum"), (_x, _p), True),
    ("binary_cross_entropy", lambda L, p, y: L.nn.functional.binary_cross_entropy(p, y), (_p, _p[::-1].copy()), True),
    ("bce_with_logits", lambda L, x, y: L.nn.functional.binary_cross_entropy_with_logits(x, y), (_x, _p), False),
    ("soft_margin_loss", lambda L, x, y: L.nn.functional.soft_margin_loss(x, y.detach().sign()), (_x, _x[::-1].copy()),
     True),
    ("batch_norm", lambda L, x: L.nn.functional.batch_norm(x, None, None, training=True), (_x,), True),
    ("layer_norm", lambda L, x: L.nn.functional.layer_norm(x, (5,)), (_x,), True),
    ("group_norm", lambda L, x: L.nn.functional.group_norm(x.reshape(2, 2, 5), 2), (_x,), False),
    ("lstm", lambda L, x: L.nn.LSTM(5, 3)(x)[0], (RNG.standard_normal((3, 2, 5)).astype("float32"),), False),
])
def test_dispatch_level_ops_are_torchs(name, fn, arrays, double):
    """A TorchDispatchMode sees the same aten ops of these families, in the same order, as under torch."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = dispatched_ops(torch, fn, arrays, double)
        got = dispatched_ops(gt, fn, arrays, double)
    assert want and got == want, name


_LAYOUT_LOSSES = {
    "mse": lambda F, x, y, w: F.mse_loss(x, y, reduction="none"),
    "l1": lambda F, x, y, w: F.l1_loss(x, y, reduction="none"),
    "smooth_l1": lambda F, x, y, w: F.smooth_l1_loss(x, y, reduction="none", beta=0.5),
    "huber": lambda F, x, y, w: F.huber_loss(x, y, reduction="none"),
    "soft_margin": lambda F, x, y, w: F.soft_margin_loss(x, y.sign(), reduction="none"),
    "bce": lambda F, x, y, w: F.binary_cross_entropy(x.sigmoid(), y.sigmoid(), reduction="none"),
    "bce weighted": lambda F, x, y, w: F.binary_cross_entropy(x.sigmoid(), y.sigmoid(), w, reduction="none"),
    "bce_logits": lambda F, x, y, w: F.binary_cross_entropy_with_logits(x, y.sigmoid(), reduction="none"),
    "bce_logits pos_weight": lambda F, x, y, w: F.binary_cross_entropy_with_logits(
        x, y.sigmoid(), w, pos_weight=w[0], reduction="none"),
}


@pytest.mark.parametrize("layout", ["input transposed", "target transposed", "both"])
@pytest.mark.parametrize("loss", list(_LAYOUT_LOSSES))
def test_unreduced_losses_are_laid_out_as_torch(loss, layout):
    # the fuzzer's seed 796173065131: mse_loss(x.t(), y, reduction='none') is laid out as x.t() in torch
    # (its TensorIterator), so a later .contiguous() copies (CloneBackward0) where ours returned itself
    rng = np.random.default_rng(3)
    data = [rng.standard_normal((4, 3)) for _ in range(3)]

    def run(lib, F):
        x, y, w = (lib.tensor(d, requires_grad=(i == 0)) for i, d in enumerate(data))
        if layout != "target transposed":
            x = x.t()
        else:
            x = x.reshape(3, 4)
        y = y.t() if layout != "input transposed" else y.reshape(3, 4)
        out = _LAYOUT_LOSSES[loss](F, x, y, w.t())
        c = out.contiguous()
        return out.stride(), out.is_contiguous(), type(c.grad_fn).__name__, out.detach().numpy()

    ours, theirs = run(gt, F), run(torch, torch.nn.functional)
    assert ours[:3] == theirs[:3]
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("dim", [2, 4])
def test_an_ignored_row_adds_nothing_even_where_its_class_0_score_is_infinite(reduction, weighted, dim):
    # torch skips an ignored row: its loss is 0 and the sum leaves it out, whatever its scores (-inf included);
    # multiplying its (class 0) pick by a zero weight gives nan there
    x = RNG.standard_normal((4, 3) + ((2, 2) if dim == 4 else ())).astype(np.float32)
    x[1, 0] = -np.inf
    x[2, 0] = np.inf
    y = RNG.integers(0, 3, (4,) + ((2, 2) if dim == 4 else ()))
    y[1] = y[2] = -100
    w = np.array([0.5, 1.0, 2.0], np.float32) if weighted else None
    got = F.nll_loss(gt.tensor(x), gt.tensor(y), None if w is None else gt.tensor(w), reduction=reduction)
    want = TF.nll_loss(torch.tensor(x), torch.tensor(y), None if w is None else torch.tensor(w), reduction=reduction)
    assert not np.isnan(want.numpy()).any()
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
