"""torch.amp against torch: GradScaler (CPU and disabled) step for step, autocast's state, warnings and errors."""
import copy
import pickle
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import glasstorch  # noqa: E402

HAS_GPU = glasstorch.cuda.is_available()
cpu_only = pytest.mark.skipif(HAS_GPU or torch.cuda.is_available(), reason="compares with torch's CPU-only answers")


def _outcome(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = fn()
            result = ("ok", value)
        except Exception as e:  # noqa: BLE001 - we compare whatever torch raises
            result = (type(e).__name__, str(e))
    return result, [(w.category.__name__, str(w.message)) for w in caught]


# ----------------------------------------------------------------------------- GradScaler
_rng = np.random.default_rng(11)
W0 = _rng.standard_normal((3, 2)).astype(np.float32)
X = _rng.standard_normal((6, 3)).astype(np.float32)
# per step: a factor on the loss; a huge one overflows the scaled gradients to inf, one is NaN
FACTORS = [1.0, 1.0, 1e38, 1.0, 1.0, 1.0, float("nan"), 1.0, 1.0, 1.0, 1.0, 2.0]


def scaler_run(lib, unscale_and_clip=False, two_optimizers=False, **scaler_kwargs):
    w = lib.tensor(W0.copy(), requires_grad=True)
    b = lib.zeros(2, requires_grad=True)
    x = lib.tensor(X)
    opt = lib.optim.SGD([w] if two_optimizers else [w, b], lr=0.05, momentum=0.9)
    opt2 = lib.optim.Adam([b], lr=0.01) if two_optimizers else None
    scaler = lib.amp.GradScaler("cpu", **scaler_kwargs)
    history = []
    for factor in FACTORS:
        opt.zero_grad()
        if opt2:
            opt2.zero_grad()
        loss = ((x @ w + b) ** 2).mean() * factor
        scaled = scaler.scale(loss)
        scaled.backward()
        if unscale_and_clip:
            scaler.unscale_(opt)
            lib.nn.utils.clip_grad_norm_([w, b] if not two_optimizers else [w], 0.5)
        scaler.step(opt)
        if opt2:
            scaler.step(opt2)
        scaler.update()
        history.append((scaler.get_scale(), scaler._get_growth_tracker(), scaled.item() if factor == 1.0 else None,
                        w.detach().numpy().copy(), b.detach().numpy().copy()))
    return history, scaler


# glasstorch's ops let NumPy warn when the deliberately overflowing steps make inf/NaN; torch is silent
# (an ops-level difference, not the scaler's)
@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning", "ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("options", [
    dict(init_scale=2.0 ** 10, growth_interval=2),
    dict(init_scale=2.0 ** 20, growth_interval=2, growth_factor=3.0, backoff_factor=0.25),
    dict(init_scale=1e3, growth_interval=4, unscale_and_clip=True),
    dict(init_scale=2.0 ** 8, growth_interval=2, two_optimizers=True),
], ids=["growth", "factors", "unscale-and-clip", "two-optimizers"])
def test_grad_scaler_on_cpu_matches_torch(options):
    ours, scaler = scaler_run(glasstorch, **options)
    theirs, tscaler = scaler_run(torch, **options)
    for step, (a, b) in enumerate(zip(ours, theirs)):
        assert a[:2] == b[:2], step                   # scale, growth tracker
        assert a[2] == (b[2] if b[2] is None else pytest.approx(b[2], rel=1e-6))  # the scaled loss
        np.testing.assert_allclose(a[3], b[3], rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(a[4], b[4], rtol=1e-6, atol=1e-7)
    assert scaler.state_dict() == tscaler.state_dict()
    assert len({h[0] for h in ours}) > 2               # the scale both backed off and grew


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning", "ignore:invalid value encountered:RuntimeWarning")
def test_skipped_steps_leave_parameters_alone():
    history, _ = scaler_run(glasstorch, init_scale=2.0 ** 10, growth_interval=100)
    np.testing.assert_array_equal(history[2][3], history[1][3])     # inf step skipped
    np.testing.assert_array_equal(history[6][3], history[5][3])     # NaN step skipped
    assert [h[0] for h in history][:3] == [1024.0, 1024.0, 512.0]


def test_scale_of_nested_outputs_and_errors():
    for lib in (glasstorch, torch):
        scaler = lib.amp.GradScaler("cpu", init_scale=8.0)
        a, b = lib.ones(2), lib.tensor(3.0)
        out = scaler.scale([a, (b, [a])])
        assert isinstance(out, list) and isinstance(out[1], tuple) and isinstance(out[1][1], list)
        assert out[0].tolist() == [8.0, 8.0] and out[1][0].item() == 24.0
        assert [t.item() for t in scaler.scale(iter([b]))] == [24.0]
        with pytest.raises(ValueError, match="outputs must be a Tensor or an iterable of Tensors"):
            scaler.scale([a, 3])
        assert scaler.get_scale() == 8.0 and scaler._scale.dtype == lib.float32
        assert scaler._growth_tracker.dtype == lib.int32


def _error_cases(lib):
    """Each case misuses a fresh CPU scaler; returns the callables, compared with torch's outcome."""
    def fresh():
        w = lib.ones(2, requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1)
        scaler = lib.amp.GradScaler("cpu")
        return w, opt, scaler

    def unscale_twice():
        w, opt, s = fresh()
        s.scale(w.sum()).backward()
        s.unscale_(opt)
        s.unscale_(opt)

    def unscale_after_step():
        w, opt, s = fresh()
        s.scale(w.sum()).backward()
        s.step(opt)
        s.unscale_(opt)

    def step_twice():
        w, opt, s = fresh()
        s.scale(w.sum()).backward()
        s.step(opt)
        s.step(opt)

    def closure():
        w, opt, s = fresh()
        s.scale(w.sum()).backward()
        s.step(opt, closure=lambda: 0)

    def update_before_scale():
        _, _, s = fresh()
        s.update()

    def update_without_step():
        w, _, s = fresh()
        s.scale(w.sum())
        s.update()

    def load_empty():
        fresh()[2].load_state_dict({})

    def growth_factor():
        lib.amp.GradScaler("cpu", growth_factor=1.0)

    def backoff_factor():
        lib.amp.GradScaler("cpu", backoff_factor=1.0)

    def pickle_mid_iteration():
        w, opt, s = fresh()
        s.scale(w.sum()).backward()
        s.unscale_(opt)
        pickle.dumps(s)

    def fp16_gradients():
        w = lib.ones(2, dtype=lib.float16, requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1)
        s = lib.amp.GradScaler("cpu", init_scale=1024.0)
        s.scale(w.float().sum()).backward()
        s.unscale_(opt)

    def update_with_bad_tensor():
        w, opt, s = fresh()
        s.scale(w.sum()).backward()
        s.step(opt)
        s.update(lib.ones(2))

    return dict(unscale_twice=unscale_twice, unscale_after_step=unscale_after_step, step_twice=step_twice,
                closure=closure, update_before_scale=update_before_scale, update_without_step=update_without_step,
                load_empty=load_empty, growth_factor=growth_factor, backoff_factor=backoff_factor,
                pickle_mid_iteration=pickle_mid_iteration, fp16_gradients=fp16_gradients,
                update_with_bad_tensor=update_with_bad_tensor)


@pytest.mark.parametrize("case", list(_error_cases(glasstorch)))
def test_grad_scaler_errors_match_torch(case):
    ours = _outcome(_error_cases(glasstorch)[case])
    theirs = _outcome(_error_cases(torch)[case])
    assert theirs[0][0] != "ok" and ours == theirs


def test_grad_scaler_state_dict_pickle_and_new_scale():
    _, scaler = scaler_run(glasstorch, init_scale=2.0 ** 10, growth_interval=3)
    sd = scaler.state_dict()
    fresh = glasstorch.amp.GradScaler("cpu")
    fresh.load_state_dict(copy.deepcopy(sd))
    assert fresh.state_dict() == sd and fresh._scale is None      # values kept until the first scale()
    fresh.scale(glasstorch.ones(1))
    assert fresh.get_scale() == sd["scale"] and fresh._get_growth_tracker() == sd["_growth_tracker"]
    clone = pickle.loads(pickle.dumps(scaler))
    assert clone.state_dict() == sd and clone._scale is None
    for lib in (glasstorch, torch):
        s = lib.amp.GradScaler("cpu")
        w = lib.ones(1, requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1)
        s.scale(w.sum()).backward()
        s.step(opt)
        s.update(3.0)
        assert s.get_scale() == 3.0
        s.scale(w.sum()).backward()
        s.step(opt)
        s.update(lib.tensor(5.0))
        assert s.get_scale() == 5.0
        s.set_growth_factor(4.0), s.set_backoff_factor(0.1), s.set_growth_interval(7)
        assert (s.get_growth_factor(), s.get_backoff_factor(), s.get_growth_interval()) == (4.0, 0.1, 7)


@pytest.mark.parametrize("make", [
    lambda lib: lib.amp.GradScaler("cpu", enabled=False),
    lambda lib: lib.amp.GradScaler(),                     # device "cuda" without a GPU: warns, disables
    lambda lib: lib.cuda.amp.GradScaler(),                # deprecated spelling: warns twice
    lambda lib: lib.cpu.amp.GradScaler(enabled=False),
], ids=["disabled", "cuda-without-gpu", "torch.cuda.amp", "torch.cpu.amp"])
def test_disabled_scaler_passes_through(make):
    if HAS_GPU:
        pytest.skip("with a GPU the cuda scaler is enabled")
    runs = []
    for lib in (glasstorch, torch):
        (scaler_or_error, caught) = _outcome(lambda: make(lib))
        scaler = scaler_or_error[1]
        w = lib.ones(2, requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.5)
        loss = (w * 3).sum()
        assert scaler.scale(loss) is loss
        loss.backward()
        scaler.unscale_(opt)
        assert scaler.step(opt) is None
        scaler.update()
        runs.append((caught, scaler.is_enabled(), scaler.get_scale(), scaler.state_dict(), w.tolist()))
    assert runs[0] == runs[1]
    assert runs[0][1:] == (False, 1.0, {}, [-0.5, -0.5])


def test_namespaces():
    assert set(glasstorch.amp.__all__) == set(torch.amp.__all__)
    assert set(glasstorch.cuda.amp.__all__) == set(torch.cuda.amp.__all__)
    assert glasstorch.amp.grad_scaler.OptState.READY.value == 0


# ----------------------------------------------------------------------------- autocast
@pytest.mark.parametrize("device_type", ["cpu", "cuda", "mps", "xpu", "hpu", "xla", "meta", "vulkan", "foo"])
def test_autocast_state_functions(device_type):
    for fn in (lambda L: L.amp.is_autocast_available(device_type), lambda L: L.is_autocast_enabled(device_type),
               lambda L: str(L.get_autocast_dtype(device_type))):
        assert _outcome(lambda: fn(glasstorch)) == _outcome(lambda: fn(torch))


def _region_trace(lib, device_type, **kwargs):
    """Enter nested autocast regions and record what the state functions say at each level."""
    trace = []
    with lib.autocast(device_type, **kwargs):
        trace.append((lib.is_autocast_enabled(device_type), str(lib.get_autocast_dtype(device_type)),
                      lib.is_autocast_cache_enabled()))
        with lib.autocast(device_type, enabled=False, cache_enabled=False):
            trace.append((lib.is_autocast_enabled(device_type), str(lib.get_autocast_dtype(device_type)),
                          lib.is_autocast_cache_enabled()))
        trace.append((lib.is_autocast_enabled(device_type), lib.is_autocast_cache_enabled()))
    trace.append((lib.is_autocast_enabled(device_type), str(lib.get_autocast_dtype(device_type))))
    return trace


@cpu_only
@pytest.mark.parametrize("device_type,kwargs", [
    ("cpu", {}), ("cpu", {"dtype": "float16"}), ("cpu", {"dtype": "float32"}), ("cuda", {}),
    ("mps", {"dtype": "float16"}), ("xpu", {}), ("cpu", {"enabled": False}),
], ids=["cpu", "cpu-fp16", "cpu-fp32-warns", "cuda-without-gpu-warns", "mps", "xpu", "cpu-disabled"])
def test_autocast_regions_match_torch(device_type, kwargs):
    runs = []
    for lib in (glasstorch, torch):
        kw = {k: getattr(lib, v) if k == "dtype" else v for k, v in kwargs.items()}
        runs.append(_outcome(lambda: _region_trace(lib, device_type, **kw)))
    assert runs[0] == runs[1]


def test_autocast_errors_and_decorator():
    for bad in (lambda L: L.autocast("foo"), lambda L: L.autocast("meta"), lambda L: L.autocast("cpu")(3)):
        assert _outcome(lambda: bad(glasstorch)) == _outcome(lambda: bad(torch))
    (kind, message), _ = _outcome(lambda: glasstorch.autocast(glasstorch.device("cpu")))
    assert kind == "ValueError" and message.startswith("Expected `device_type` of type `str`, got: `<class '")
    for lib in (glasstorch, torch):
        @lib.autocast("cpu")
        def inside():
            return lib.is_autocast_enabled("cpu")
        assert inside() is True and lib.is_autocast_enabled("cpu") is False
        with lib.amp.autocast(device_type="cpu", dtype=lib.bfloat16):
            assert lib.is_autocast_enabled("cpu")


@pytest.mark.parametrize("spelling", ["torch.cpu.amp.autocast()", "torch.cuda.amp.autocast()",
                                      "torch.cpu.amp.autocast(dtype=torch.float16)"])
def test_deprecated_autocast_spellings_warn_as_torch(spelling):
    if HAS_GPU and "cuda" in spelling:
        pytest.skip("with a GPU CUDA autocast does not disable itself")

    def enter(lib):
        with eval(spelling, {"torch": lib}):
            return lib.is_autocast_enabled("cpu"), lib.is_autocast_enabled("cuda")

    assert _outcome(lambda: enter(glasstorch)) == _outcome(lambda: enter(torch))


@cpu_only
def test_deprecated_state_spellings_warn_as_torch():
    for name in ("is_autocast_cpu_enabled", "get_autocast_cpu_dtype", "get_autocast_gpu_dtype"):
        ours = _outcome(lambda: str(getattr(glasstorch, name)()))
        theirs = _outcome(lambda: str(getattr(torch, name)()))
        assert ours[0] == theirs[0]
        assert [c for c, _ in ours[1]] == [c for c, _ in theirs[1]] == ["DeprecationWarning"]
        assert ours[1][0][1] == theirs[1][0][1].split(" (Triggered internally")[0]


def test_custom_fwd_and_bwd_record_the_autocast_state():
    """A custom Function decorated as torch's docs show: forward's autocast state reaches backward."""
    seen = {}

    def make(lib):
        class Scale(lib.autograd.Function):
            @staticmethod
            @lib.amp.custom_fwd(device_type="cpu")
            def forward(ctx, x):
                seen["fwd"] = lib.is_autocast_enabled("cpu")
                return x * 2

            @staticmethod
            @lib.amp.custom_bwd(device_type="cpu")
            def backward(ctx, grad):
                seen["bwd"] = lib.is_autocast_enabled("cpu")
                return grad * 2
        return Scale

    for lib in (glasstorch, torch):
        Scale = make(lib)
        x = lib.ones(2, requires_grad=True)
        with lib.autocast("cpu"):
            y = Scale.apply(x)
        seen.clear()
        y.sum().backward()
        assert seen == {"bwd": True} and x.grad.tolist() == [2.0, 2.0]
        with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
            lib.amp.custom_fwd(device_type=lib.device("cpu"))


def _autocast_inputs(lib):
    g = np.random.default_rng(7)

    def t(*shape, dtype="float32", grad=True):
        return lib.tensor(g.standard_normal(shape).astype("float32"), requires_grad=grad).to(getattr(lib, dtype)) \
            if dtype != "float32" else lib.tensor(g.standard_normal(shape).astype("float32"), requires_grad=grad)
    return t


# (name, call(lib, F, t)): the ops programs run in an autocast region, each of torch's three lists, float64
# (never cast), bfloat16 inputs to an fp32 op, and ops on no list (their inputs' dtype)
_AUTOCAST_CALLS = [
    ("matmul", lambda lib, F, t: t(3, 4) @ t(4, 2)),
    ("matmul_vector", lambda lib, F, t: t(3, 4) @ t(4)),
    ("bmm", lambda lib, F, t: lib.bmm(t(2, 3, 4), t(2, 4, 2))),
    ("baddbmm", lambda lib, F, t: lib.baddbmm(t(2, 3, 2), t(2, 3, 4), t(2, 4, 2))),
    ("addmm", lambda lib, F, t: lib.addmm(t(2), t(3, 4), t(4, 2))),
    ("linear", lambda lib, F, t: F.linear(t(3, 4), t(5, 4), t(5))),
    ("linear_3d", lambda lib, F, t: F.linear(t(2, 3, 4), t(5, 4), t(5))),
    ("conv1d", lambda lib, F, t: F.conv1d(t(1, 2, 7), t(3, 2, 3), t(3))),
    ("conv2d", lambda lib, F, t: F.conv2d(t(1, 2, 6, 6), t(3, 2, 3, 3), t(3), padding=1)),
    ("conv_transpose2d", lambda lib, F, t: F.conv_transpose2d(t(1, 2, 4, 4), t(2, 3, 3, 3))),
    ("float64_matmul", lambda lib, F, t: t(3, 4, dtype="float64") @ t(4, 2, dtype="float64")),
    ("mixed_matmul", lambda lib, F, t: t(3, 4, dtype="bfloat16") @ t(4, 2)),
    ("mse_loss_bf16", lambda lib, F, t: F.mse_loss(t(3, 4, dtype="bfloat16"), t(3, 4, dtype="bfloat16"))),
    ("cross_entropy_bf16", lambda lib, F, t: F.cross_entropy(t(4, 3, dtype="bfloat16"), lib.tensor([0, 2, 1, 0]))),
    ("nll_loss_bf16", lambda lib, F, t: F.nll_loss(t(4, 3, dtype="bfloat16"), lib.tensor([0, 2, 1, 0]))),
    ("bce_logits_bf16", lambda lib, F, t: F.binary_cross_entropy_with_logits(t(4, dtype="bfloat16"),
                                                                               t(4, grad=False).sigmoid())),
    ("smooth_l1_bf16", lambda lib, F, t: F.smooth_l1_loss(t(5, dtype="bfloat16"), t(5, dtype="bfloat16"))),
    ("prod_bf16", lambda lib, F, t: lib.prod(t(5, dtype="bfloat16"))),
    ("cat_promote", lambda lib, F, t: lib.cat([t(2, 3), t(2, 3, dtype="bfloat16")])),
    ("stack_promote", lambda lib, F, t: lib.stack([t(3, dtype="bfloat16"), t(3, dtype="float64")])),
    ("relu_unlisted", lambda lib, F, t: lib.relu(t(3, 4))),
    ("softmax_unlisted_bf16", lambda lib, F, t: lib.softmax(t(3, 4, dtype="bfloat16"), 1)),
    ("mlp", lambda lib, F, t: F.cross_entropy(F.linear(lib.relu(F.linear(t(4, 3), t(5, 3), t(5))), t(3, 5), t(3)),
                                             lib.tensor([0, 1, 2, 0]))),
]


@pytest.mark.parametrize("name,call", _AUTOCAST_CALLS, ids=[c[0] for c in _AUTOCAST_CALLS])
def test_autocast_cpu_casts_as_torch(name, call):
    """Inside torch.autocast("cpu", dtype=bfloat16): the result's dtype, node, value, and every leaf's
    gradient (dtype and value) as torch's."""
    results = {}
    for lib in (torch, glasstorch):
        t = _autocast_inputs(lib)
        made = []

        def tracked(*shape, **kw):
            x = t(*shape, **kw)
            if x.requires_grad:
                x = x.detach().requires_grad_(True)
            made.append(x)
            return x
        with lib.autocast("cpu", dtype=lib.bfloat16):
            assert lib.is_autocast_enabled("cpu")
            y = call(lib, lib.nn.functional, tracked)
        y.float().sum().backward()
        grads = [(str(x.grad.dtype), x.grad.float().numpy()) for x in made if x.requires_grad]
        results[lib] = (str(y.dtype).split(".")[-1], type(y.grad_fn).__name__, y.detach().float().numpy(), grads)
    t_dtype, t_node, t_value, t_grads = results[torch]
    g_dtype, g_node, g_value, g_grads = results[glasstorch]
    assert (g_dtype, g_node) == (t_dtype, t_node)
    np.testing.assert_allclose(g_value, t_value, rtol=2e-2, atol=2e-2)
    assert [d for d, _ in g_grads] == [d for d, _ in t_grads]
    for (_, ga), (_, ta) in zip(g_grads, t_grads):
        np.testing.assert_allclose(ga, ta, rtol=3e-2, atol=3e-2)


def test_autocast_region_ends_and_nests():
    a, b = glasstorch.ones(2, 2), glasstorch.ones(2, 2)
    with glasstorch.autocast("cpu", dtype=glasstorch.bfloat16):
        assert (a @ b).dtype == glasstorch.bfloat16
        with glasstorch.autocast("cpu", enabled=False):
            assert (a @ b).dtype == glasstorch.float32
        assert (a @ b).dtype == glasstorch.bfloat16
    assert (a @ b).dtype == glasstorch.float32
    with glasstorch.autocast("cpu", dtype=glasstorch.float16):
        assert (a @ b).dtype == glasstorch.float16


def test_autocast_records_the_casts():
    """The casts are recorded above autograd: a float32 weight's gradient comes back through a
    ToCopyBackward0, in float32, as in torch."""
    for lib in (torch, glasstorch):
        w = lib.ones(2, 2, requires_grad=True)
        with lib.autocast("cpu"):
            y = lib.mm(lib.ones(2, 2), w)
        names = {type(fn).__name__ for fn, _ in y.grad_fn.next_functions if fn is not None}
        assert names == {"ToCopyBackward0"}
        y.float().sum().backward()
        assert w.grad.dtype == lib.float32


def test_docstring_examples_run():
    import doctest
    from glasstorch.amp import autocast_mode, grad_scaler
    for module in (autocast_mode, grad_scaler):
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0 and result.attempted > 0
