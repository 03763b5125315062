"""Every layer against torch's: the same weights (torch's initialised state dict loaded into ours),
the same input; outputs, parameter and input gradients, grad_fn names, in train and eval mode;
repr, state_dict keys and shapes; lazy layers; default initialisation; nn.init; nn.utils."""
import math
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import glasstorch as gt  # noqa: E402
import glasstorch.nn as nn  # noqa: E402

RNG = np.random.default_rng(2)


def _np(t):
    return t.detach().numpy(force=True) if isinstance(t, torch.Tensor) else t.detach().numpy()


def twin(name, *args, dtype="double", **kwargs):
    """torch.nn.<name>(*args) and ours, ours holding torch's initial state (as float64 by default)."""
    tm = getattr(torch.nn, name)(*args, **kwargs)
    gm = getattr(nn, name)(*args, **kwargs)
    if dtype == "double":
        tm, gm = tm.double(), gm.double()
    state = {k: gt.tensor(_np(v)) for k, v in tm.state_dict().items()}
    gm.load_state_dict(state)
    return tm, gm


def same_state(tm, gm):
    ts, gs = tm.state_dict(), gm.state_dict()
    assert list(gs) == list(ts)
    for k in ts:
        assert tuple(gs[k].shape) == tuple(ts[k].shape), k
        assert str(gs[k].dtype) == str(ts[k].dtype), k


def run(tm, gm, *inputs, atol=1e-10, rtol=1e-8, grad_input=True, name=True):
    """Forward both with the same inputs, compare outputs, then gradients of <y, r>."""
    ti = [torch.tensor(a, requires_grad=grad_input and a.dtype.kind == "f") for a in inputs]
    gi = [gt.tensor(a, requires_grad=grad_input and a.dtype.kind == "f") for a in inputs]
    ty, gy = tm(*ti), gm(*gi)
    if isinstance(ty, tuple):
        for a, b in zip(ty[1:], gy[1:]):
            np.testing.assert_array_equal(_np(b), _np(a))
        ty, gy = ty[0], gy[0]
    assert tuple(gy.shape) == tuple(ty.shape)
    np.testing.assert_allclose(_np(gy), _np(ty), atol=atol, rtol=rtol)
    if ty.grad_fn is None:
        return ty, gy
    if name:
        assert gy.grad_fn.name() == ty.grad_fn.name()
    r = RNG.standard_normal(tuple(ty.shape)).astype(_np(ty).dtype)
    ty.backward(torch.tensor(r))
    gy.backward(gt.tensor(r))
    tparams, gparams = dict(tm.named_parameters()), dict(gm.named_parameters())
    assert list(gparams) == list(tparams)
    for k in tparams:
        if tparams[k].grad is None:
            assert gparams[k].grad is None, k
            continue
        np.testing.assert_allclose(_np(gparams[k].grad), _np(tparams[k].grad), atol=atol, rtol=rtol, err_msg=k)
    for a, b in zip(ti, gi):
        if a.requires_grad:
            np.testing.assert_allclose(_np(b.grad), _np(a.grad), atol=atol, rtol=rtol)
    return ty, gy


def both_modes(cls, args, kwargs, *shapes, **run_kw):
    tm, gm = twin(cls, *args, **kwargs)
    assert repr(gm) == repr(tm)
    same_state(tm, gm)
    inputs = [RNG.standard_normal(s) for s in shapes]
    run(tm, gm, *inputs, **run_kw)
    tm.eval(), gm.eval()
    run(tm, gm, *inputs, **run_kw)
    return tm, gm


# ---- linear, flatten --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(3,), (4, 3), (2, 4, 3)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear(shape, bias):
    both_modes("Linear", (3, 5), {"bias": bias}, shape)


def test_bilinear_identity_flatten():
    both_modes("Bilinear", (2, 3, 4), {}, (5, 2), (5, 3))
    both_modes("Identity", (), {}, (2, 3))
    both_modes("Flatten", (), {}, (2, 3, 4, 5))
    both_modes("Flatten", (0, 2), {}, (2, 3, 4, 5))
    both_modes("Unflatten", (1, (2, 3)), {}, (4, 6, 5))


def test_linear_errors_name_the_shapes():
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x5 and 3x4\)"):
        nn.Linear(3, 4)(gt.randn(2, 5))
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(1x5 and 3x4\)"):
        nn.Linear(3, 4)(gt.randn(5))
    # torch's message, plus a note (shown in the traceback) naming the layer and the input's shape
    with pytest.raises(RuntimeError) as info:
        nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(3, 4))(gt.randn(2, 3))
    assert str(info.value) == "mat1 and mat2 shapes cannot be multiplied (2x4 and 3x4)"
    assert info.value.__notes__ == ["[glasstorch] raised in Linear(in_features=3, out_features=4, bias=True).forward "
                                    "on input of shape [2, 4]"]
    with pytest.raises(RuntimeError) as info:
        nn.Conv2d(3, 4, 3)(gt.randn(2, 5, 8, 8))
    assert "Conv2d(3, 4, kernel_size=(3, 3), stride=(1, 1))" in info.value.__notes__[0]
    assert "[2, 5, 8, 8]" in info.value.__notes__[0]


# ---- activations --------------------------------------------------------------------------------------------------
ACTIVATIONS = [("ReLU", ()), ("LeakyReLU", (0.2,)), ("PReLU", ()), ("PReLU", (4,)), ("ELU", (0.7,)), ("SELU", ()),
               ("CELU", (1.3,)), ("GELU", ()), ("GELU", ("tanh",)), ("SiLU", ()), ("Mish", ()), ("Sigmoid", ()),
               ("Tanh", ()), ("Softmax", (1,)), ("LogSoftmax", (1,)), ("Softmin", (0,)), ("Softplus", (2.0, 3.0)),
               ("Hardtanh", (-0.5, 0.7)), ("ReLU6", ()), ("Hardswish", ()), ("Hardsigmoid", ()), ("LogSigmoid", ()),
               ("Softsign", ()), ("Tanhshrink", ()), ("Softshrink", (0.3,)), ("Hardshrink", ()), ("GLU", (1,)),
               ("Threshold", (0.1, 20.0)), ("Softmax2d", ())]


@pytest.mark.parametrize("name,args", ACTIVATIONS, ids=[f"{n}{a}" for n, a in ACTIVATIONS])
def test_activation_layers(name, args):
    both_modes(name, args, {}, (3, 4, 2, 2))


def test_inplace_activation_layers():
    for name in ("ReLU", "LeakyReLU", "ELU", "ReLU6", "Hardtanh", "SiLU", "Mish", "SELU"):
        tm, gm = twin(name, inplace=True)
        assert repr(gm) == repr(tm)
        x = RNG.standard_normal((3, 4))
        tx, gx = torch.tensor(x, requires_grad=True), gt.tensor(x, requires_grad=True)
        ty, gy = tm(tx * 1), gm(gx * 1)
        np.testing.assert_allclose(_np(gy), _np(ty))
        ty.sum().backward()
        gy.sum().backward()
        np.testing.assert_allclose(_np(gx.grad), _np(tx.grad))


def test_prelu_parameter_and_rrelu():
    tm, gm = twin("PReLU", 3, init=0.1)
    np.testing.assert_allclose(_np(nn.PReLU(3, init=0.1).weight), 0.1)
    run(tm, gm, RNG.standard_normal((2, 3, 4)))
    tm, gm = twin("RReLU")
    tm.eval(), gm.eval()
    run(tm, gm, RNG.standard_normal((5, 5)), name=False)


# ---- dropout ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,shape", [("Dropout", (4, 5)), ("Dropout1d", (3, 4, 5)), ("Dropout2d", (3, 4, 5, 5)),
                                        ("Dropout3d", (2, 3, 2, 2, 2)), ("AlphaDropout", (4, 5))])
def test_dropout_layers(name, shape):
    tm, gm = twin(name, 0.0)
    assert repr(gm) == repr(tm)
    run(tm, gm, RNG.standard_normal(shape), name=False)  # p = 0: the identity in both modes
    g = getattr(nn, name)(0.4)
    x = gt.ones(*(s * 10 for s in shape))
    assert g(x).numpy().std() > 0  # training: random
    g.eval()
    assert g(x) is x  # eval: the input itself, as torch returns it
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        getattr(nn, name)(1.5)


def test_dropout_train_statistics():
    m = nn.Dropout(0.25)
    y = m(gt.ones(300, 300)).numpy()
    assert abs((y == 0).mean() - 0.25) < 0.01
    np.testing.assert_allclose(y[y != 0], 1 / 0.75, rtol=1e-6)


# ---- normalization --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,shape", [("BatchNorm1d", (6, 3)), ("BatchNorm1d", (4, 3, 5)), ("BatchNorm2d", (4, 3, 5, 2)),
                                        ("BatchNorm3d", (2, 3, 2, 2, 2))])
@pytest.mark.parametrize("kw", [{}, {"affine": False}, {"momentum": None}, {"track_running_stats": False},
                                {"eps": 1e-3, "momentum": 0.3}])
def test_batch_norm_layers(name, shape, kw):
    tm, gm = twin(name, 3, **kw)
    assert repr(gm) == repr(tm)
    same_state(tm, gm)
    for _ in range(3):  # three training steps: the running statistics follow torch's
        run(tm, gm, RNG.standard_normal(shape) * 2 + 1)
    for k, v in tm.state_dict().items():
        np.testing.assert_allclose(_np(gm.state_dict()[k]), _np(v), rtol=1e-10, err_msg=k)
    tm.eval(), gm.eval()
    run(tm, gm, RNG.standard_normal(shape))


def test_batch_norm_errors():
    with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input\)"):
        nn.BatchNorm2d(3)(gt.randn(2, 3, 4))
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        nn.BatchNorm1d(3)(gt.randn(2, 3, 4, 4))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        nn.BatchNorm1d(3)(gt.randn(1, 3))
    with pytest.raises(RuntimeError, match="running_mean should contain 4 elements not 3"):
        nn.BatchNorm2d(3)(gt.randn(2, 4, 4, 4))


@pytest.mark.parametrize("args,kw,shape", [((5,), {}, (3, 5)), (((4, 5),), {}, (2, 3, 4, 5)),
                                           ((5,), {"elementwise_affine": False}, (3, 5)),
                                           ((5,), {"bias": False, "eps": 1e-3}, (3, 5))])
def test_layer_norm_layer(args, kw, shape):
    both_modes("LayerNorm", args, kw, shape)


def test_layer_norm_backward_on_unbatched_1d_input():
    """issue 16 #6: nn.LayerNorm on an unbatched 1-D input backpropagates to the input and both
    parameters, with torch's values."""
    for kw in ({}, {"elementwise_affine": False}, {"bias": False}):
        tm, gm = twin("LayerNorm", 5, **kw)
        run(tm, gm, RNG.standard_normal(5))


def test_batch_norm_run_twice_before_one_backward():
    """issue 16 #11: the running statistics are updated inside the kernel without a version bump (as
    torch's kernel does), so a loss summed over two passes through one BatchNorm -- a siamese or
    contrastive model -- backpropagates instead of raising a false in-place error."""
    for name, shape in (("BatchNorm1d", (6, 4)), ("BatchNorm2d", (3, 4, 2, 2))):
        tm, gm = twin(name, 4)
        versions = gm.running_mean._version, gm.running_var._version     # (load_state_dict wrote them)
        x1, x2 = RNG.standard_normal(shape), RNG.standard_normal(shape)
        t1, t2 = torch.tensor(x1, requires_grad=True), torch.tensor(x2, requires_grad=True)
        g1, g2 = gt.tensor(x1, requires_grad=True), gt.tensor(x2, requires_grad=True)
        (tm(t1).pow(2).sum() + tm(t2).sum()).backward()
        (gm(g1).pow(2).sum() + gm(g2).sum()).backward()
        for a, b in ((t1.grad, g1.grad), (t2.grad, g2.grad), (tm.weight.grad, gm.weight.grad),
                     (tm.bias.grad, gm.bias.grad)):
            np.testing.assert_allclose(_np(b), _np(a), atol=1e-10)
        for k, v in tm.state_dict().items():      # both passes moved the running statistics
            np.testing.assert_allclose(_np(gm.state_dict()[k]), _np(v), rtol=1e-10, err_msg=k)
        assert (gm.running_mean._version, gm.running_var._version) == versions
        assert tm.running_mean._version == tm.running_var._version == 0
    # a real in-place change of a saved running statistic is still caught (eval mode reads them)
    bn = nn.BatchNorm1d(3).eval()
    y = bn(gt.randn(4, 3, requires_grad=True))
    with gt.no_grad():
        bn.running_var.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


@pytest.mark.parametrize("args,kw", [((2, 4), {}), ((1, 4), {"affine": False}), ((4, 4), {"eps": 1e-3})])
def test_group_norm_layer(args, kw):
    both_modes("GroupNorm", args, kw, (3, 4, 5))
    with pytest.raises(ValueError, match=r"num_channels \(3\) must be divisible by num_groups \(2\)"):
        nn.GroupNorm(2, 3)


def test_instance_norm_and_local_response_norm_layers():
    both_modes("InstanceNorm2d", (3,), {}, (2, 3, 4, 5), name=False)
    both_modes("InstanceNorm1d", (3,), {"affine": True}, (2, 3, 6), name=False)
    both_modes("LocalResponseNorm", (3,), {}, (2, 5, 4, 4))


# ---- embedding -----------------------------------------------------------------------------------------------------------
def test_embedding_layer():
    for kw in ({}, {"padding_idx": 2}, {"padding_idx": -1}, {"scale_grad_by_freq": True}):
        tm, gm = twin("Embedding", 6, 3, **kw)
        assert repr(gm) == repr(tm)
        idx = np.array([[1, 2, 5], [2, 0, 2]])
        ty, gy = tm(torch.tensor(idx)), gm(gt.tensor(idx))
        np.testing.assert_allclose(_np(gy), _np(ty))
        assert gy.grad_fn.name() == ty.grad_fn.name() == "EmbeddingBackward0"
        r = RNG.standard_normal(ty.shape)
        ty.backward(torch.tensor(r))
        gy.backward(gt.tensor(r))
        np.testing.assert_allclose(_np(gm.weight.grad), _np(tm.weight.grad))
    m = nn.Embedding(10, 4, padding_idx=3)
    assert not m.weight.detach().numpy()[3].any()  # the padding row starts at zero
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(5, 3, padding_idx=7)


def test_embedding_from_pretrained_and_max_norm():
    w = RNG.standard_normal((5, 3))
    tm = torch.nn.Embedding.from_pretrained(torch.tensor(w), padding_idx=1)
    gm = nn.Embedding.from_pretrained(gt.tensor(w), padding_idx=1)
    assert repr(gm) == repr(tm) and gm.weight.requires_grad is False
    assert nn.Embedding.from_pretrained(gt.tensor(w), freeze=False).weight.requires_grad
    np.testing.assert_allclose(_np(gm(gt.tensor([0, 4]))), _np(tm(torch.tensor([0, 4]))))
    tm, gm = twin("Embedding", 5, 3, max_norm=0.5)
    idx = np.array([0, 3, 3])
    np.testing.assert_allclose(_np(gm(gt.tensor(idx))), _np(tm(torch.tensor(idx))), rtol=1e-6)
    np.testing.assert_allclose(_np(gm.weight), _np(tm.weight), rtol=1e-6)


# ---- convolution -----------------------------------------------------------------------------------------------------------
CONVS = [("Conv1d", (2, 4, 3), {}, (2, 2, 9)), ("Conv1d", (2, 4, 3), {"stride": 2, "padding": 1, "bias": False}, (2, 2, 9)),
         ("Conv1d", (4, 4, 3), {"groups": 2, "padding": "same", "dilation": 2}, (2, 4, 9)),
         ("Conv2d", (1, 6, 5), {"padding": 2}, (2, 1, 8, 8)), ("Conv2d", (6, 16, 5), {}, (2, 6, 9, 9)),
         ("Conv2d", (2, 4, (3, 2)), {"stride": (2, 1), "padding": 1, "dilation": 2, "groups": 2}, (2, 2, 8, 7)),
         ("Conv2d", (2, 4, 3), {"padding": "same"}, (2, 2, 6, 5)),
         ("Conv2d", (2, 4, 4), {"padding": "same"}, (2, 2, 6, 5)),
         ("Conv2d", (2, 4, 3), {"padding": 1, "padding_mode": "reflect"}, (2, 2, 6, 5)),
         ("Conv2d", (2, 4, 3), {"padding": (1, 2), "padding_mode": "replicate"}, (2, 2, 6, 5)),
         ("Conv2d", (2, 4, 3), {"padding": 1, "padding_mode": "circular"}, (2, 2, 6, 5)),
         ("Conv2d", (3, 4, 3), {}, (3, 6, 6)),
         ("Conv3d", (2, 3, 2), {"padding": 1}, (1, 2, 3, 4, 3)),
         ("ConvTranspose1d", (2, 4, 3), {"stride": 2}, (2, 2, 5)),
         ("ConvTranspose2d", (3, 2, 3), {"stride": 2, "output_padding": 1}, (2, 3, 4, 5)),
         ("ConvTranspose2d", (4, 6, 3), {"groups": 2, "padding": 1, "dilation": 2, "bias": False}, (2, 4, 4, 5)),
         ("ConvTranspose3d", (2, 3, 2), {"stride": 2}, (1, 2, 2, 3, 2))]


@pytest.mark.parametrize("name,args,kw,shape", CONVS, ids=[f"{n}{a}{k}" for n, a, k, _ in CONVS])
def test_conv_layers(name, args, kw, shape):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 'same' with an even kernel warns (in both)
        tm, gm = twin(name, *args, **kw)
        assert repr(gm) == repr(tm)
        same_state(tm, gm)
        run(tm, gm, RNG.standard_normal(shape), name=kw.get("padding_mode", "zeros") == "zeros")


def test_conv_transpose_output_size():
    tm, gm = twin("ConvTranspose2d", 3, 2, 3, stride=2)
    x = RNG.standard_normal((1, 3, 4, 4))
    for size in ((9, 9), (10, 10), (1, 2, 10, 9)):
        a = tm(torch.tensor(x), output_size=size)
        b = gm(gt.tensor(x), output_size=size)
        np.testing.assert_allclose(_np(b), _np(a))
    with pytest.raises(ValueError, match="requested an output size of"):
        gm(gt.tensor(x), output_size=(12, 12))


def test_conv_layer_errors():
    with pytest.raises(RuntimeError, match=r"Given groups=1, weight of size \[4, 3, 3, 3\], expected input\[2, 5, 8, 8\] "
                                           r"to have 3 channels, but got 5 channels instead"):
        nn.Conv2d(3, 4, 3)(gt.randn(2, 5, 8, 8))
    with pytest.raises(RuntimeError, match=r"Expected 2D \(unbatched\) or 3D \(batched\) input to conv1d, but got input "
                                           r"of size: \[8, 8, 8, 8\]"):
        nn.Conv1d(3, 4, 3)(gt.randn(8, 8, 8, 8))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="padding='same' is not supported for strided convolutions"):
        nn.Conv2d(4, 4, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="Invalid padding string 'foo'"):
        nn.Conv2d(4, 4, 3, padding="foo")
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        nn.Conv2d(4, 4, 3, padding_mode="foo")


# ---- pooling, padding, resampling, distances ------------------------------------------------------------------------------
POOLS = [("MaxPool1d", (3,), {"stride": 2, "padding": 1}, (2, 3, 9)), ("MaxPool2d", (2,), {}, (2, 3, 6, 6)),
         ("MaxPool2d", (3, 2, 1), {"ceil_mode": True, "return_indices": True}, (2, 3, 7, 6)),
         ("MaxPool2d", (2,), {"dilation": 2}, (3, 7, 7)), ("MaxPool3d", (2,), {}, (1, 2, 4, 4, 4)),
         ("AvgPool1d", (2,), {}, (2, 3, 9)), ("AvgPool2d", (2, 2), {}, (2, 3, 6, 6)),
         ("AvgPool2d", (3,), {"stride": 2, "padding": 1, "count_include_pad": False, "ceil_mode": True}, (2, 3, 7, 6)),
         ("AvgPool2d", (3,), {"divisor_override": 2}, (2, 3, 7, 6)), ("AvgPool3d", (2,), {}, (1, 2, 4, 4, 4)),
         ("AdaptiveAvgPool1d", (4,), {}, (2, 3, 7)), ("AdaptiveAvgPool2d", ((3, 3),), {}, (2, 3, 7, 8)),
         ("AdaptiveAvgPool2d", (1,), {}, (2, 3, 7, 8)), ("AdaptiveAvgPool2d", ((None, 2),), {}, (2, 3, 7, 8)),
         ("AdaptiveMaxPool1d", (4,), {}, (2, 3, 7)),
         ("AdaptiveMaxPool2d", ((3, 2),), {"return_indices": True}, (2, 3, 7, 8)),
         ("ZeroPad2d", (1,), {}, (2, 3, 4, 4)), ("ZeroPad1d", ((1, 2),), {}, (2, 3, 4)),
         ("ConstantPad1d", ((1, 2), 3.5), {}, (2, 3, 4)), ("ConstantPad2d", (1, -1.0), {}, (2, 3, 4, 4)),
         ("ConstantPad3d", (1, 0.5), {}, (1, 2, 3, 3, 3)),
         ("ReflectionPad1d", (2,), {}, (2, 3, 4)), ("ReflectionPad2d", ((1, 2, 0, 1),), {}, (2, 3, 4, 4)),
         ("ReplicationPad1d", (2,), {}, (2, 3, 4)), ("ReplicationPad2d", (2,), {}, (2, 3, 4, 4)),
         ("ReplicationPad3d", (1,), {}, (1, 2, 3, 3, 3)), ("CircularPad1d", (1,), {}, (2, 3, 4)),
         ("CircularPad2d", (1,), {}, (2, 3, 4, 4)), ("PixelShuffle", (2,), {}, (2, 8, 3, 3)),
         ("PixelUnshuffle", (2,), {}, (2, 2, 4, 6)), ("Upsample", (), {"scale_factor": 2}, (2, 3, 4, 4)),
         ("Upsample", (), {"size": (5, 7), "mode": "bilinear", "align_corners": True}, (2, 3, 4, 4)),
         ("Upsample", (), {"scale_factor": 1.5, "mode": "bilinear"}, (2, 3, 4, 4)),
         ("UpsamplingNearest2d", (), {"scale_factor": 2}, (2, 3, 4, 4)),
         ("UpsamplingBilinear2d", (), {"scale_factor": 2}, (2, 3, 4, 4))]


@pytest.mark.parametrize("name,args,kw,shape", POOLS, ids=[f"{n}{a}{k}" for n, a, k, _ in POOLS])
def test_pooling_padding_resampling_layers(name, args, kw, shape):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both_modes(name, args, kw, shape, name=not name.startswith("Circular"))


def test_distance_layers():
    both_modes("PairwiseDistance", (), {}, (4, 3), (4, 3), name=False)
    both_modes("PairwiseDistance", (1.0,), {"keepdim": True}, (4, 3), (4, 3), name=False)
    both_modes("CosineSimilarity", (), {}, (4, 3), (4, 3))
    both_modes("CosineSimilarity", (0,), {}, (4, 3), (4, 3))


# ---- lazy layers --------------------------------------------------------------------------------------------------------------
LAZY = [("LazyLinear", (5,), {}, (4, 3), "Linear"), ("LazyLinear", (5,), {"bias": False}, (2, 4, 3), "Linear"),
        ("LazyConv1d", (4, 3), {"padding": 1}, (2, 3, 9), "Conv1d"), ("LazyConv2d", (4, 3), {}, (2, 3, 6, 6), "Conv2d"),
        ("LazyConv2d", (4, 3), {"groups": 2}, (4, 6, 6), "Conv2d"),
        ("LazyConvTranspose2d", (4, 3), {"stride": 2}, (2, 3, 4, 4), "ConvTranspose2d"),
        ("LazyBatchNorm1d", (), {}, (5, 3), "BatchNorm1d"), ("LazyBatchNorm2d", (), {"affine": False}, (4, 3, 2, 2),
                                                                "BatchNorm2d")]


@pytest.mark.parametrize("name,args,kw,shape,becomes", LAZY, ids=[f"{n}{k}" for n, _, k, _, _ in LAZY])
def test_lazy_layers(name, args, kw, shape, becomes):
    tm = getattr(torch.nn, name)(*args, **kw).double()
    gm = getattr(nn, name)(*args, **kw).double()
    assert repr(gm) == repr(tm)
    assert list(gm.state_dict()) == list(tm.state_dict())
    x = RNG.standard_normal(shape)
    tm(torch.tensor(x))
    gm(gt.tensor(x))
    assert type(gm).__name__ == type(tm).__name__ == becomes
    assert repr(gm) == repr(tm)
    same_state(tm, gm)
    gm.load_state_dict({k: gt.tensor(_np(v)) for k, v in tm.state_dict().items()})
    run(tm, gm, x)


def test_lazy_layer_loads_a_state_dict_before_its_first_call():
    src = nn.Linear(3, 5)
    lazy = nn.LazyLinear(5)
    lazy.load_state_dict(src.state_dict())
    np.testing.assert_array_equal(lazy.weight.detach().numpy(), src.weight.detach().numpy())
    np.testing.assert_allclose(lazy(gt.ones(2, 3)).detach().numpy(), src(gt.ones(2, 3)).detach().numpy())


def test_lazy_batch_norm_buffers_materialize():
    m = nn.LazyBatchNorm2d()
    m(gt.randn(4, 3, 2, 2))
    assert tuple(m.running_mean.shape) == (3,) and int(m.num_batches_tracked) == 1


# ---- default initialisation ----------------------------------------------------------------------------------------------------
def test_default_initialisation_follows_torch():
    lin = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    w, b = lin.weight.detach().numpy(), lin.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound and abs(w.std() - bound / math.sqrt(3)) < 1e-3
    assert np.abs(b).max() <= bound
    conv = nn.Conv2d(6, 16, 5)
    bound = 1 / math.sqrt(6 * 25)
    assert np.abs(conv.weight.detach().numpy()).max() <= bound
    assert np.abs(conv.bias.detach().numpy()).max() <= bound
    convt = nn.ConvTranspose2d(6, 16, 5)  # fan_in from weight.size(1) = 16, as in torch
    assert np.abs(convt.weight.detach().numpy()).max() <= 1 / math.sqrt(16 * 25)
    emb = nn.Embedding(2000, 50).weight.detach().numpy()
    assert abs(emb.mean()) < 0.01 and abs(emb.std() - 1) < 0.01
    bn = nn.BatchNorm1d(4)
    assert (bn.weight.detach().numpy() == 1).all() and not bn.bias.detach().numpy().any()
    assert nn.Linear(3, 4).weight.dtype == gt.float32
    assert nn.Linear(3, 4, dtype=gt.float64).weight.dtype == gt.float64


# ---- nn.init -------------------------------------------------------------------------------------------------------------------
def test_calculate_gain():
    for nl, param in (("linear", None), ("conv2d", None), ("sigmoid", None), ("tanh", None), ("relu", None),
                      ("leaky_relu", None), ("leaky_relu", 0.2), ("selu", None)):
        assert nn.init.calculate_gain(nl, param) == torch.nn.init.calculate_gain(nl, param)
    with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
        nn.init.calculate_gain("foo")


def test_init_functions():
    t = gt.empty(300, 200, requires_grad=True)
    fan_in, fan_out = 200, 300
    nn.init.xavier_uniform_(t, gain=2.0)
    a = 2.0 * math.sqrt(6 / (fan_in + fan_out))
    assert np.abs(t.detach().numpy()).max() <= a and t.requires_grad and t.grad_fn is None
    nn.init.xavier_normal_(t)
    assert abs(t.detach().numpy().std() - math.sqrt(2 / (fan_in + fan_out))) < 2e-3
    nn.init.kaiming_uniform_(t, a=0, nonlinearity="relu")
    assert np.abs(t.detach().numpy()).max() <= math.sqrt(6 / fan_in)
    nn.init.kaiming_normal_(t, mode="fan_out")
    assert abs(t.detach().numpy().std() - math.sqrt(2 / (1 + 0.01 ** 2)) / math.sqrt(fan_out)) < 2e-3
    nn.init.trunc_normal_(t, mean=0.5, std=1.0, a=-1.0, b=1.5)
    v = t.detach().numpy()
    assert v.min() >= -1.0 and v.max() <= 1.5 and v.std() > 0.3
    nn.init.uniform_(t, -0.1, 0.2)
    v = t.detach().numpy()
    assert v.min() >= -0.1 and v.max() <= 0.2
    nn.init.normal_(t, 3.0, 0.5)
    assert abs(t.detach().numpy().mean() - 3.0) < 0.01
    for fn, args in ((nn.init.constant_, (0.3,)), (nn.init.ones_, ()), (nn.init.zeros_, ())):
        tt = torch.empty(3, 4)
        getattr(torch.nn.init, fn.__name__)(tt, *args)
        np.testing.assert_array_equal(fn(gt.empty(3, 4), *args).numpy(), tt.numpy())
    np.testing.assert_array_equal(nn.init.eye_(gt.empty(3, 5)).numpy(), torch.nn.init.eye_(torch.empty(3, 5)).numpy())
    for groups in (1, 2):
        np.testing.assert_array_equal(nn.init.dirac_(gt.empty(4, 2, 3, 3), groups).numpy(),
                                      torch.nn.init.dirac_(torch.empty(4, 2, 3, 3), groups).numpy())
    with pytest.raises(ValueError, match="Fan in and fan out can not be computed for tensor with fewer than 2 "
                                         "dimensions"):
        nn.init.kaiming_uniform_(gt.empty(3))


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 2, 3)])
def test_orthogonal(shape):
    w = nn.init.orthogonal_(gt.empty(*shape), gain=2.0).numpy().reshape(shape[0], -1)
    small = min(w.shape)
    gram = w @ w.T if w.shape[0] == small else w.T @ w
    np.testing.assert_allclose(gram, 4 * np.eye(small), atol=1e-5)
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions are supported"):
        nn.init.orthogonal_(gt.empty(3))


def test_sparse_init():
    w = nn.init.sparse_(gt.empty(10, 6), sparsity=0.3).numpy()
    assert ((w == 0).sum(0) >= 3).all()


# ---- nn.utils ----------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf"), 3.0])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm(norm_type, max_norm):
    grads = [RNG.standard_normal(s) for s in ((3, 4), (5,), (2, 2, 2))]
    tp = [torch.zeros(g.shape, dtype=torch.float64, requires_grad=True) for g in grads]
    gp = [gt.zeros(*g.shape, dtype=gt.float64, requires_grad=True) for g in grads]
    for t, g, a in zip(tp, gp, grads):
        t.grad, g.grad = torch.tensor(a), gt.tensor(a)
    tn = torch.nn.utils.clip_grad_norm_(tp, max_norm, norm_type)
    gn = nn.utils.clip_grad_norm_(gp, max_norm, norm_type)
    np.testing.assert_allclose(gn.item(), tn.item(), rtol=1e-10)
    for t, g in zip(tp, gp):
        np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=1e-10)


def test_clip_grad_norm_nonfinite_and_value():
    p = gt.zeros(2, requires_grad=True)
    p.grad = gt.tensor([float("inf"), 1.0])
    with pytest.raises(RuntimeError, match=r"The total norm of order 2.0 for gradients from `parameters` is non-finite, "
                                           r"so it cannot be clipped. To disable this error and scale the gradients by "
                                           r"the non-finite norm anyway, set `error_if_nonfinite=False`"):
        nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    assert math.isinf(nn.utils.clip_grad_norm_([p], 1.0).item())
    q = gt.zeros(4, requires_grad=True)
    q.grad = gt.tensor([-3.0, -0.2, 0.5, 2.0])
    nn.utils.clip_grad_value_(q, 1.0)
    np.testing.assert_allclose(q.grad.numpy(), [-1.0, -0.2, 0.5, 1.0])
    assert nn.utils.clip_grad_norm_([gt.zeros(2, requires_grad=True)], 1.0).item() == 0.0  # no gradients at all


def test_parameters_to_vector_and_back():
    m = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    v = nn.utils.parameters_to_vector(m.parameters())
    assert tuple(v.shape) == (3 * 4 + 4 + 4 * 2 + 2,) and v.grad_fn.name() == "CatBackward0"
    nn.utils.vector_to_parameters(gt.arange(v.numel(), dtype=gt.float32), m.parameters())
    np.testing.assert_array_equal(m[0].bias.detach().numpy(), [12, 13, 14, 15])
    with pytest.raises(TypeError, match="expected torch.Tensor"):
        nn.utils.vector_to_parameters([1.0], m.parameters())


def test_pad_sequence():
    seqs = [RNG.standard_normal((n, 2)) for n in (3, 1, 2)]
    for kw in ({}, {"batch_first": True}, {"padding_value": -1.0}, {"batch_first": True, "padding_side": "left"}):
        a = torch.nn.utils.rnn.pad_sequence([torch.tensor(s) for s in seqs], **kw)
        b = nn.utils.rnn.pad_sequence([gt.tensor(s) for s in seqs], **kw)
        np.testing.assert_array_equal(b.numpy(), a.numpy())


# ---- whole networks ----------------------------------------------------------------------------------------------------------------
def _lenet(n):
    return n.Sequential(n.Conv2d(1, 6, kernel_size=5, padding=2), n.Sigmoid(), n.AvgPool2d(kernel_size=2, stride=2),
                        n.Conv2d(6, 16, kernel_size=5), n.Sigmoid(), n.AvgPool2d(kernel_size=2, stride=2), n.Flatten(),
                        n.Linear(16 * 5 * 5, 120), n.Sigmoid(), n.Linear(120, 84), n.Sigmoid(), n.Linear(84, 10))


def _cnn(n):
    return n.Sequential(n.Conv2d(1, 4, 3, padding=1), n.BatchNorm2d(4), n.ReLU(), n.MaxPool2d(2), n.Dropout(0.0),
                        n.Conv2d(4, 8, 3), n.GroupNorm(2, 8), n.GELU(), n.AdaptiveAvgPool2d(1), n.Flatten(),
                        n.LayerNorm(8), n.Linear(8, 10))


@pytest.mark.parametrize("make", [_lenet, _cnn])
def test_training_steps_match_torch(make):
    """Three SGD steps of a small CNN in float64: the same losses and the same weights as torch."""
    tm, gm = make(torch.nn).double(), make(nn).double()
    gm.load_state_dict({k: gt.tensor(_np(v)) for k, v in tm.state_dict().items()})
    x, y = RNG.standard_normal((8, 1, 28, 28)), RNG.integers(0, 10, 8)
    for _ in range(3):
        tl = torch.nn.functional.cross_entropy(tm(torch.tensor(x)), torch.tensor(y))
        gl = nn.functional.cross_entropy(gm(gt.tensor(x)), gt.tensor(y))
        np.testing.assert_allclose(gl.item(), tl.item(), rtol=1e-10)
        tm.zero_grad(), gm.zero_grad()
        tl.backward()
        gl.backward()
        with torch.no_grad(), gt.no_grad():
            for tp, gp in zip(tm.parameters(), gm.parameters()):
                tp -= 0.5 * tp.grad
                gp -= 0.5 * gp.grad
    for k, v in tm.state_dict().items():
        np.testing.assert_allclose(_np(gm.state_dict()[k]), _np(v), rtol=1e-9, atol=1e-12, err_msg=k)


def test_float32_network_close_to_torch():
    tm, gm = _lenet(torch.nn), _lenet(nn)
    gm.load_state_dict({k: gt.tensor(_np(v)) for k, v in tm.state_dict().items()})
    x = RNG.standard_normal((4, 1, 28, 28)).astype(np.float32)
    ty, gy = run(tm, gm, x, atol=1e-5, rtol=1e-4)
    assert gy.dtype == gt.float32
    assert all(p.grad.dtype == gt.float32 for p in gm.parameters())


@pytest.mark.parametrize("module", ["glasstorch.nn.functional", "glasstorch.nn.init", "glasstorch.nn.modules.linear",
                                    "glasstorch.nn.modules.activation", "glasstorch.nn.modules.batchnorm",
                                    "glasstorch.nn.modules.sparse", "glasstorch.nn.modules.conv",
                                    "glasstorch.nn.modules.pooling", "glasstorch.nn.modules.loss",
                                    "glasstorch.nn.utils.clip_grad", "glasstorch.nn.utils.rnn"])
def test_docstring_examples(module):
    import doctest
    import importlib
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_batch_norm_run_twice_before_backward_as_in_torch():
    """A siamese network runs its BatchNorm on both inputs, then calls backward once: torch leaves the
    running statistics' version alone (they are saved by the node), so this works, with the same grads."""
    x_data = np.random.default_rng(0).standard_normal((6, 3)).astype(np.float32)
    results = []
    for lib in (gt, torch):
        bn = lib.nn.BatchNorm1d(3)
        x = lib.tensor(x_data, requires_grad=True)
        version = bn.running_mean._version
        (bn(x).pow(2).sum() + bn(x * 2).pow(3).sum()).backward()
        assert bn.running_mean._version == version and bn.running_var._version == bn.running_mean._version
        results.append((x.grad.numpy(), bn.weight.grad.numpy(), bn.running_mean.numpy(), bn.running_var.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)
