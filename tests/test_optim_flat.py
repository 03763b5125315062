"""The optimizers' flat path (foreach=None, the default, or True): one vectorised update per group
(Adam, AdamW, RMSprop), or the update on each parameter's arrays (SGD).

It must be indistinguishable from the for-loop (foreach=False) -- the same bits, the same state
(keys in torch's order, the same version counts) -- and hence from torch; and step aside (to the
for-loop) wherever it cannot be: parameters whose step counts differ, state only some have,
mixed dtypes, something watching single ops.
"""
import copy
import importlib
import io

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import glasstorch  # noqa: E402

CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.01)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, maximize=True)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3)),
    ("Adam", dict(lr=0.1)),
    ("Adam", dict(lr=0.1, weight_decay=0.1, amsgrad=True)),
    ("Adam", dict(lr=0.01, maximize=True, betas=(0.8, 0.9), eps=1e-3)),
    ("AdamW", dict(lr=0.1)),
    ("AdamW", dict(lr=0.1, amsgrad=True, weight_decay=0.5)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, centered=True, maximize=True)),
]
IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for name, kw in CONFIGS]
SHAPES = [(3, 4), (4,), (), (2, 2, 2)]
STEPS = 5


def draws(dtype, seed=0):
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    grads = [[rng.standard_normal(s).astype(dtype) for s in SHAPES] for _ in range(STEPS)]
    return init, grads


def train(lib, name, kwargs, dtype=np.float32, foreach=None, skip=lambda step, i: False):
    """STEPS steps of lib.optim.<name> on fixed gradients; returns (weights, optimizer, params,
    the parameters' version increments at each step)."""
    init, grads = draws(dtype)
    params = [lib.nn.Parameter(lib.tensor(a.copy())) for a in init]
    opt = getattr(lib.optim, name)(params, foreach=foreach, **kwargs)
    versions = []
    for step, gs in enumerate(grads):
        for i, (p, g) in enumerate(zip(params, gs)):
            p.grad = None if skip(step, i) else lib.tensor(g.copy())
        before = [p._version for p in params]
        opt.step()
        versions.append([p._version - v for p, v in zip(params, before)])
    return [p.detach().numpy().copy() for p in params], opt, params, versions


def state_summary(opt, params):
    """Each parameter's state: key order, values, version counters."""
    return [[(k, np.asarray(v.detach().numpy() if hasattr(v, "detach") else v).copy(), getattr(v, "_version", None))
             for k, v in opt.state[p].items()] for p in params]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=IDS)
def test_flat_path_is_the_for_loop_bit_for_bit_and_torch_in_values_and_versions(name, kwargs, dtype, monkeypatch):
    module = importlib.import_module(f"glasstorch.optim.{'adam' if name == 'AdamW' else name.lower()}")
    for_loop = getattr(module, name.lower().replace("adamw", "adam"))
    calls = []
    monkeypatch.setattr(module, for_loop.__name__, lambda *a, **k: calls.append(1) or for_loop(*a, **k))
    flat_w, flat_opt, flat_p, flat_v = train(glasstorch, name, kwargs, dtype)
    assert not calls                          # the default never ran the for-loop ...
    loop_w, loop_opt, loop_p, loop_v = train(glasstorch, name, kwargs, dtype, foreach=False)
    assert len(calls) == STEPS                # ... which foreach=False runs
    torch_w, torch_opt, torch_p, torch_v = train(torch, name, kwargs, dtype, foreach=False)
    for a, b in zip(flat_w, loop_w):
        assert np.array_equal(a, b)
    for a, b in zip(flat_w, torch_w):
        np.testing.assert_allclose(a, b, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-6)
    assert flat_v == loop_v == torch_v            # one bump per step (two for AdamW's decay), as torch
    flat_s, loop_s, torch_s = (state_summary(*x) for x in ((flat_opt, flat_p), (loop_opt, loop_p),
                                                            (torch_opt, torch_p)))
    for f, lo, t in zip(flat_s, loop_s, torch_s):
        assert [k for k, _, _ in f] == [k for k, _, _ in lo] == [k for k, _, _ in t]
        assert [v for _, _, v in f] == [v for _, _, v in lo] == [v for _, _, v in t]
        for (_, a, _), (_, b, _) in zip(f, lo):
            assert np.array_equal(a, b)


@pytest.mark.parametrize("name,kwargs", [CONFIGS[1], CONFIGS[4], CONFIGS[10]], ids=[IDS[1], IDS[4], IDS[10]])
def test_parameters_without_a_gradient_on_some_steps(name, kwargs):
    """Parameter 1 misses steps 1-2 (its step count falls behind); parameter 3 joins at step 3 (no
    state until then): the step then runs the for-loop, and the results stay torch's."""
    skip = lambda step, i: (i == 1 and step in (1, 2)) or (i == 3 and step < 3)  # noqa: E731
    ours, _, _, ours_v = train(glasstorch, name, kwargs, skip=skip)
    loop, _, _, _ = train(glasstorch, name, kwargs, foreach=False, skip=skip)
    theirs, _, _, theirs_v = train(torch, name, kwargs, skip=skip)
    for a, b, c in zip(ours, loop, theirs):
        assert np.array_equal(a, b)
        np.testing.assert_allclose(a, c, rtol=1e-5, atol=1e-6)
    assert ours_v == theirs_v


def test_state_tensors_are_views_of_one_flat_array_and_save_load_continue():
    _, opt, params, _ = train(glasstorch, "Adam", dict(lr=0.1))
    exp_avgs = [opt.state[p]["exp_avg"] for p in params]
    flat = vars(opt)["_flat"][0].state["exp_avg"]
    assert all(t._data.base is flat for t in exp_avgs) and flat.size == sum(p.numel() for p in params)

    buffer = io.BytesIO()
    glasstorch.save(opt.state_dict(), buffer)
    buffer.seek(0)
    restored = glasstorch.optim.Adam(params, lr=0.1)
    restored.load_state_dict(glasstorch.load(buffer))
    twin = copy.deepcopy((params, opt))
    _, grads = draws(np.float32, seed=1)
    for ps, o in ((params, restored), twin):     # one more step each, from the same point
        for p, g in zip(ps, grads[0]):
            p.grad = glasstorch.tensor(g)
        o.step()
    for a, b in zip(params, twin[0]):
        assert np.array_equal(a.detach().numpy(), b.detach().numpy())


def test_mixed_dtypes_and_foreach_false_run_the_for_loop():
    a = glasstorch.nn.Parameter(glasstorch.ones(2))
    b = glasstorch.nn.Parameter(glasstorch.ones(2, dtype=glasstorch.float64))
    opt = glasstorch.optim.Adam([a, b], lr=0.1)
    a.grad, b.grad = glasstorch.ones(2), glasstorch.ones(2, dtype=glasstorch.float64)
    opt.step()
    assert "_flat" not in vars(opt) and a._version == 1 and float(a[0]) == pytest.approx(0.9)


def test_a_modified_parameter_is_still_caught_by_backward():
    """The flat path bumps the version counter as the in-place op does: a step between forward and
    backward is the error torch gives."""
    w = glasstorch.nn.Parameter(glasstorch.ones(3))
    opt = glasstorch.optim.SGD([w], lr=0.1)
    w.grad = glasstorch.ones(3)
    y = (w * w).sum()
    opt.step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_single_ops_stay_visible_to_a_torch_function_mode():
    """Under a TorchFunctionMode the update runs as the for-loop's Tensor ops, which the mode sees
    (torch's CPU default shows it ``add_``): the default path shows it what foreach=False shows."""
    overrides = pytest.importorskip("glasstorch.overrides")

    class Log(overrides.TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.seen = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.seen.append(getattr(func, "__name__", str(func)))
            return func(*args, **(kwargs or {}))

    logs = []
    for foreach in (None, False):
        w = glasstorch.nn.Parameter(glasstorch.ones(3))
        opt = glasstorch.optim.Adam([w], lr=0.1, foreach=foreach)
        w.grad = glasstorch.ones(3)
        with Log() as log:
            opt.step()
        assert "_flat" not in vars(opt) and float(w[0]) == pytest.approx(0.9)
        logs.append(log.seen)
    assert logs[0] == logs[1]


FUSED = [c for c in CONFIGS if c[0] in ("SGD", "Adam", "AdamW")]
FUSED_IDS = [IDS[CONFIGS.index(c)] for c in FUSED]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,kwargs", FUSED, ids=FUSED_IDS)
def test_foreach_true_and_fused_true_give_torchs_foreach_and_fused_values(name, kwargs, dtype):
    """torch runs other kernels for foreach=True and fused=True (fused=True on CPU since 2.4);
    glasstorch runs its flat path for both, to the same values."""
    for flag in (dict(foreach=True), dict(fused=True)):
        init, grads = draws(dtype)
        results = []
        for lib in (glasstorch, torch):
            params = [lib.nn.Parameter(lib.tensor(a.copy())) for a in init]
            opt = getattr(lib.optim, name)(params, **flag, **kwargs)
            for gs in grads:
                for p, g in zip(params, gs):
                    p.grad = lib.tensor(g.copy())
                opt.step()
            results.append([p.detach().numpy().copy() for p in params])
            assert lib is torch or "_flat" in vars(opt) or name == "SGD"   # the flat path ran (SGD: arrays)
        for a, b in zip(*results):
            np.testing.assert_allclose(a, b, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-6)


@pytest.mark.parametrize("name", ["SGD", "Adam", "Adagrad"])
def test_fused_flags_are_refused_as_torch_refuses_them(name):
    for kwargs, message in ((dict(fused=True, foreach=True), "`fused` and `foreach` cannot be `True` together"),
                            (dict(fused=True, differentiable=True), "`fused` does not support `differentiable`")):
        for lib in (glasstorch, torch):
            with pytest.raises(RuntimeError, match=message):
                getattr(lib.optim, name)([lib.nn.Parameter(lib.ones(2))], lr=0.1, **kwargs)
    w = glasstorch.nn.Parameter(glasstorch.ones(2))
    opt = getattr(glasstorch.optim, name)([w], lr=0.1, fused=True)   # accepted alone, and steps
    w.grad = glasstorch.ones(2)
    opt.step()
    assert float(w[0]) == pytest.approx(0.9)


@pytest.mark.parametrize("name,kwargs", [CONFIGS[1], CONFIGS[5], CONFIGS[10]], ids=[IDS[1], IDS[5], IDS[10]])
def test_checkpoints_cross_over_to_torch_and_back(name, kwargs):
    """A state_dict saved after flat steps loads in torch (the flat buffer is not visible: the state
    is torch's per-parameter tensors) and continues as torch's own; and torch's checkpoint loads
    into the flat path, which continues as torch does."""
    init, grads = draws(np.float32)
    more = draws(np.float32, seed=1)[1]

    def run(lib, grad_steps, params=None, state=None):
        params = params or [lib.nn.Parameter(lib.tensor(a.copy())) for a in init]
        opt = getattr(lib.optim, name)(params, **kwargs)
        if state is not None:
            opt.load_state_dict(state)
        for gs in grad_steps:
            for p, g in zip(params, gs):
                p.grad = lib.tensor(g.copy())
            opt.step()
        return params, opt

    def move(src_lib, dst_lib, params, opt):
        buffer = io.BytesIO()
        src_lib.save((opt.state_dict(), [p.detach() for p in params]), buffer)
        buffer.seek(0)
        state, weights = dst_lib.load(buffer)
        return [dst_lib.nn.Parameter(w.clone()) for w in weights], state

    ours, ours_opt = run(glasstorch, grads)
    theirs, theirs_opt = run(torch, grads)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)
    in_torch = run(torch, more, *move(glasstorch, torch, ours, ours_opt))[0]
    in_glasstorch, back = run(glasstorch, more, *move(torch, glasstorch, theirs, theirs_opt))
    reference = run(torch, more, theirs, theirs_opt.state_dict())[0]
    assert name == "SGD" or "_flat" in vars(back)   # (SGD keeps per-parameter arrays)
    for a, b, c in zip(in_torch, in_glasstorch, reference):
        np.testing.assert_allclose(a.detach().numpy(), c.detach().numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(b.detach().numpy(), c.detach().numpy(), rtol=1e-5, atol=1e-6)


_AFTER_A_SUBCLASS = r'''
import glasstorch

class Logged(glasstorch.Tensor):
    seen = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.seen.append(getattr(func, "__name__", str(func)))
        return super().__torch_function__(func, types, args, kwargs)

# plain parameters: no subclass takes part in their update (torch's check is per call)
w = glasstorch.nn.Parameter(glasstorch.ones(3))
opt = glasstorch.optim.Adam([w], lr=0.1)
w.grad = glasstorch.ones(3)
opt.step()
assert "_flat" in vars(opt), "the flat path was not taken"
assert not Logged.seen
# a parameter of the subclass: the update runs as Tensor ops the subclass sees
v = glasstorch.ones(3).as_subclass(Logged).requires_grad_()
opt = glasstorch.optim.Adam([v], lr=0.1)
v.grad = glasstorch.ones(3)
Logged.seen.clear()
opt.step()
assert "_flat" not in vars(opt) and "addcdiv_" in Logged.seen, Logged.seen
assert abs(float(v[0]) - 0.9) < 1e-6
print("ok")
'''


def test_a_subclass_defined_earlier_in_the_process_leaves_the_flat_path_to_plain_parameters():
    """A Tensor subclass with __torch_function__, once defined, turns the seam on for every call of
    the process (tests/test_overrides.py before this file made 37 tests here take the for-loop):
    whether an update is watched is decided per call from its own tensors, as torch's
    has_torch_function decides it. (In a fresh process: the subclass stays defined.)"""
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-c", _AFTER_A_SUBCLASS], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


@pytest.mark.slow
def test_overrides_then_this_file_in_one_process():
    """The order that showed it: tests/test_overrides.py, then this file, in one pytest process."""
    import pathlib
    import subprocess
    import sys
    here = pathlib.Path(__file__).parent
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                           str(here / "test_overrides.py"), str(here / "test_optim_flat.py")],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:]
