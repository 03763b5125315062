"""glasstorch.optim against real torch: trajectories, state dicts, hooks, errors.

Every comparison runs the *same* code on both libraries (``lib`` is ``torch`` or ``glasstorch``):
the same initial weights, and at each step gradients computed by one NumPy function from each
library's current weights, so the optimizers' update rules are compared in isolation. One test
trains a small MLP end to end with each library's own autograd.
"""
import copy
import doctest
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import glasstorch  # noqa: E402
import glasstorch.optim  # noqa: E402

# ----------------------------------------------------------------------------- the test problem
_rng = np.random.default_rng(0)
X = _rng.standard_normal((8, 4))
Y = _rng.standard_normal((8, 3))
INIT = [(_rng.standard_normal((4, 3)) * 0.5).astype(np.float32),   # W: a matrix
        (_rng.standard_normal(3) * 0.5).astype(np.float32),        # b: a vector
        np.array(0.5, dtype=np.float32)]                           # c: a 0-dim parameter


def loss_grads(W, b, c):
    """Gradients of mean((X W + b - Y)^2) + 0.05 sum(W^4) + c^4/4 - 2c, in float64, returned as float32."""
    W, b, c = (np.asarray(a, dtype=np.float64) for a in (W, b, c))
    R = X @ W + b - Y
    gW = 2 / R.size * X.T @ R + 0.2 * W ** 3
    gb = 2 / R.size * R.sum(0)
    gc = c ** 3 - 2
    return [g.astype(np.float32) for g in (gW, gb, np.asarray(gc))]


def make_params(lib, init=INIT):
    return [lib.tensor(a.copy(), requires_grad=True) for a in init]


def feed_grads(lib, params, skip=()):
    """Set p.grad from the NumPy gradient at the current weights; parameters in ``skip`` get None."""
    weights = [p.detach().numpy() for p in params]
    grads = loss_grads(*weights)
    for i, (p, w, g) in enumerate(zip(params, weights, grads)):
        p.grad = None if i in skip else lib.tensor(g.astype(w.dtype))


def run(lib, name, kwargs, steps, groups=None, skip=()):
    """Train with ``lib.optim.<name>(**kwargs)`` for ``steps`` steps; return the weights and optimizer."""
    params = make_params(lib)
    spec = params if groups is None else groups(params)
    opt = getattr(lib.optim, name)(spec, **kwargs)
    for _ in range(steps):
        feed_grads(lib, params, skip)
        opt.step()
    return [p.detach().numpy().copy() for p in params], opt


def assert_params_close(ours, theirs, rtol=1e-5, atol=1e-6):
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


GRID = {
    "SGD": [dict(lr=0.05), dict(lr=0.05, momentum=0.9), dict(lr=0.05, momentum=0.9, dampening=0.3),
            dict(lr=0.05, momentum=0.9, nesterov=True), dict(lr=0.05, momentum=0.5, weight_decay=0.1),
            dict(lr=0.01, momentum=0.9, maximize=True), dict(lr=0.05, weight_decay=0.1, nesterov=True, momentum=0.8)],
    "Adam": [dict(lr=0.05), dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6), dict(lr=0.05, weight_decay=0.1),
             dict(lr=0.05, amsgrad=True), dict(lr=0.05, maximize=True),
             dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, amsgrad=True)],
    "AdamW": [dict(lr=0.05), dict(lr=0.05, weight_decay=0.3, amsgrad=True), dict(lr=0.05, maximize=True)],
    "RMSprop": [dict(lr=0.01), dict(lr=0.01, alpha=0.9, eps=1e-6), dict(lr=0.01, weight_decay=0.1),
                dict(lr=0.01, momentum=0.9), dict(lr=0.01, centered=True),
                dict(lr=0.01, centered=True, momentum=0.5, weight_decay=0.05), dict(lr=0.01, maximize=True)],
    "Adagrad": [dict(lr=0.1), dict(lr=0.1, lr_decay=0.05), dict(lr=0.1, weight_decay=0.1),
                dict(lr=0.1, initial_accumulator_value=0.5, eps=1e-6), dict(lr=0.1, maximize=True)],
    "Adadelta": [dict(), dict(lr=0.5, rho=0.8), dict(eps=1e-4, weight_decay=0.1), dict(maximize=True)],
    "NAdam": [dict(lr=0.05), dict(lr=0.02, betas=(0.8, 0.99), momentum_decay=0.01), dict(lr=0.05, weight_decay=0.1),
              dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True), dict(lr=0.05, maximize=True)],
    "RAdam": [dict(lr=0.05), dict(lr=0.05, betas=(0.8, 0.9)), dict(lr=0.05, weight_decay=0.1),
              dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True), dict(lr=0.05, maximize=True)],
    "Adamax": [dict(lr=0.05), dict(lr=0.05, betas=(0.8, 0.99), eps=1e-3), dict(lr=0.05, weight_decay=0.1),
               dict(lr=0.05, maximize=True)],
    "ASGD": [dict(lr=0.05), dict(lr=0.05, t0=5, lambd=1e-2, alpha=0.5), dict(lr=0.05, weight_decay=0.1, t0=0),
             dict(lr=0.01, maximize=True, t0=3)],
    "Rprop": [dict(lr=0.05), dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2)), dict(lr=0.01, maximize=True)],
}
CASES = [(name, kw) for name, kws in GRID.items() for kw in kws]
CASE_IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in kw.items()) or 'defaults'}" for name, kw in CASES]
# One configuration per optimizer that creates every kind of state it has.
FULL_STATE = {"SGD": dict(lr=0.05, momentum=0.9), "Adam": dict(lr=0.05, amsgrad=True, weight_decay=0.1),
              "AdamW": dict(lr=0.05, amsgrad=True), "RMSprop": dict(lr=0.01, momentum=0.5, centered=True),
              "Adagrad": dict(lr=0.1, lr_decay=0.01), "Adadelta": dict(lr=0.5), "NAdam": dict(lr=0.05),
              "RAdam": dict(lr=0.05), "Adamax": dict(lr=0.05), "ASGD": dict(lr=0.05, t0=4), "Rprop": dict(lr=0.05)}


# ----------------------------------------------------------------------------- trajectories
@pytest.mark.parametrize("name,kwargs", CASES, ids=CASE_IDS)
def test_trajectory_matches_torch(name, kwargs):
    ours, _ = run(glasstorch, name, kwargs, steps=20)
    theirs, _ = run(torch, name, kwargs, steps=20)
    assert_params_close(ours, theirs)
    assert not np.allclose(ours[0], INIT[0])  # the test would be void if nothing moved


@pytest.mark.parametrize("name", GRID)
def test_param_groups_with_own_hyperparameters(name):
    """Two groups: the second overrides lr; the group dicts are completed with every default."""
    kwargs = FULL_STATE[name]

    def groups(params):
        return [{"params": params[:2]}, {"params": params[2:], "lr": kwargs.get("lr", 1.0) * 0.3}]

    ours, opt = run(glasstorch, name, kwargs, steps=15, groups=groups)
    theirs, topt = run(torch, name, kwargs, steps=15, groups=groups)
    assert_params_close(ours, theirs)
    assert [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups] == \
           [{k: v for k, v in g.items() if k != "params"} for g in topt.param_groups]


@pytest.mark.parametrize("name", GRID)
def test_params_without_grad_are_skipped(name):
    """A parameter whose .grad is None is left untouched and gets no state (Adagrad's is made at init)."""
    ours, opt = run(glasstorch, name, FULL_STATE[name], steps=5, skip=(1,))
    theirs, topt = run(torch, name, FULL_STATE[name], steps=5, skip=(1,))
    assert_params_close(ours, theirs)
    np.testing.assert_array_equal(ours[1], INIT[1])
    assert sorted(opt.state_dict()["state"]) == sorted(topt.state_dict()["state"])


def test_float64_parameters():
    init64 = [a.astype(np.float64) for a in INIT]
    results = []
    for lib in (glasstorch, torch):
        params = make_params(lib, init64)
        opt = lib.optim.Adam(params, lr=0.05)
        for _ in range(10):
            feed_grads(lib, params)
            opt.step()
        results.append([p.detach().numpy() for p in params])
        assert opt.state[params[0]]["exp_avg"].dtype == lib.float64
        assert opt.state[params[0]]["step"].dtype == lib.float32
    assert_params_close(*results, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name,kwargs", CASES, ids=CASE_IDS)
def test_float64_trajectory_matches_torch_tightly(name, kwargs):
    """In float64 the update rules agree with torch's to rounding: any formula slip would show."""
    init64 = [a.astype(np.float64) for a in INIT]
    results = []
    for lib in (glasstorch, torch):
        params = make_params(lib, init64)
        opt = getattr(lib.optim, name)(params, **kwargs)
        for _ in range(20):
            feed_grads(lib, params)
            opt.step()
        results.append([p.detach().numpy() for p in params])
    assert_params_close(*results, rtol=1e-12, atol=1e-13)


def test_mlp_with_glasstorch_autograd():
    """End to end: each library computes its own gradients (with a closure for one optimizer)."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((16, 4)).astype(np.float32)
    y = rng.standard_normal((16, 1)).astype(np.float32)
    init = [rng.standard_normal((4, 8)).astype(np.float32) * 0.5, np.zeros(8, np.float32),
            rng.standard_normal((8, 1)).astype(np.float32) * 0.5]
    results, losses = [], []
    for lib in (glasstorch, torch):
        w1, b1, w2 = make_params(lib, init)
        xt, yt = lib.tensor(x), lib.tensor(y)
        opt = lib.optim.SGD([w1, b1], lr=0.05, momentum=0.9)
        opt2 = lib.optim.Adam([w2], lr=0.01)

        def closure():
            opt.zero_grad()
            opt2.zero_grad()
            loss = ((lib.relu(xt @ w1 + b1) @ w2 - yt) ** 2).mean()
            loss.backward()
            return loss

        run_losses = []
        for _ in range(20):
            loss = opt.step(closure)
            opt2.step()
            run_losses.append(loss.item())
        results.append([p.detach().numpy() for p in (w1, b1, w2)])
        losses.append(run_losses)
    assert_params_close(*results, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(losses[0], losses[1], rtol=1e-4)
    assert losses[0][-1] < losses[0][0]


# ----------------------------------------------------------------------------- state dict
def _plain(value):
    """A state dict with tensors replaced by (dtype name, shape, values), to compare across libraries."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    if hasattr(value, "detach"):
        return ("tensor", str(value.dtype), tuple(value.shape), value.detach().numpy().copy())
    return value


def _assert_same_structure(ours, theirs):
    if isinstance(theirs, np.ndarray):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    elif isinstance(theirs, dict):
        assert isinstance(ours, dict) and list(ours) == list(theirs)
        for k in theirs:
            _assert_same_structure(ours[k], theirs[k])
    elif isinstance(theirs, (list, tuple)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _assert_same_structure(a, b)
    else:
        assert ours == theirs


@pytest.mark.parametrize("name", GRID)
def test_state_dict_structure_matches_torch(name):
    def groups(params):
        return [{"params": [params[2], params[0]]}, {"params": [params[1]], "weight_decay": 0.01}]

    _, opt = run(glasstorch, name, FULL_STATE[name], steps=3, groups=groups)
    _, topt = run(torch, name, FULL_STATE[name], steps=3, groups=groups)
    ours, theirs = _plain(opt.state_dict()), _plain(topt.state_dict())
    # keys, parameter ids, group entries, state names, dtypes, shapes and values
    _assert_same_structure(ours, theirs)
    assert ours["param_groups"][0]["params"] == [0, 1] and ours["param_groups"][1]["params"] == [2]


@pytest.mark.parametrize("name", GRID)
def test_state_dict_round_trip_resumes_exactly(name):
    kwargs = FULL_STATE[name]
    params = make_params(glasstorch)
    opt = getattr(glasstorch.optim, name)(params, **kwargs)
    for _ in range(10):
        feed_grads(glasstorch, params)
        opt.step()

    saved = copy.deepcopy(opt.state_dict())  # what torch.save / load would hand back
    params2 = [glasstorch.tensor(p.detach().numpy().copy(), requires_grad=True) for p in params]
    opt2 = getattr(glasstorch.optim, name)(params2, lr=123.0)  # other hyperparameters: the load restores them
    opt2.load_state_dict(saved)
    assert opt2.param_groups[0]["lr"] == opt.param_groups[0]["lr"]

    for _ in range(10):
        for ps, o in ((params, opt), (params2, opt2)):
            feed_grads(glasstorch, ps)
            o.step()
    for a, b in zip(params, params2):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())

    # and 10 + 10 steps equal torch's 20
    theirs, _ = run(torch, name, kwargs, steps=20)
    assert_params_close([p.detach().numpy() for p in params2], theirs)


def test_load_state_dict_copies_and_casts():
    params = make_params(glasstorch)
    opt = glasstorch.optim.Adam(params, lr=0.05)
    feed_grads(glasstorch, params)
    opt.step()
    sd = opt.state_dict()

    params64 = [glasstorch.tensor(a.astype(np.float64), requires_grad=True) for a in INIT]
    opt64 = glasstorch.optim.Adam(params64)
    opt64.load_state_dict(sd)
    state = opt64.state[params64[0]]
    assert state["exp_avg"].dtype == glasstorch.float64      # follows the parameter
    assert state["step"].dtype == glasstorch.float32         # 'step' keeps its dtype
    assert state["step"].item() == 1.0

    # Loaded state is a copy: stepping the first optimizer does not change the second.
    before = state["exp_avg_sq"].numpy().copy()
    feed_grads(glasstorch, params)
    opt.step()
    np.testing.assert_array_equal(state["exp_avg_sq"].numpy(), before)
    assert all(a is b for a, b in zip(opt64.param_groups[0]["params"], params64))
    assert sd["param_groups"][0]["params"] == [0, 1, 2]  # the given dict is not modified


@pytest.mark.parametrize("change,message", [
    (lambda sd: sd["param_groups"].append(copy.deepcopy(sd["param_groups"][0])),
     "loaded state dict has a different number of parameter groups"),
    (lambda sd: sd["param_groups"][0]["params"].pop(),
     "loaded state dict contains a parameter group that doesn't match the size of optimizer's group"),
])
def test_load_state_dict_errors(change, message):
    for lib in (glasstorch, torch):
        params = make_params(lib)
        opt = lib.optim.SGD(params, lr=0.1, momentum=0.9)
        sd = copy.deepcopy(opt.state_dict())
        change(sd)
        with pytest.raises(ValueError, match=re.escape(message)):
            opt.load_state_dict(sd)


# ----------------------------------------------------------------------------- base class behaviour
@pytest.mark.parametrize("name", GRID)
def test_repr_matches_torch(name):
    kwargs = FULL_STATE[name]
    reprs = []
    for lib in (glasstorch, torch):
        params = make_params(lib)
        reprs.append(repr(getattr(lib.optim, name)([{"params": params[:1]}, {"params": params[1:], "lr": 0.5}],
                                                   **kwargs)))
    assert reprs[0] == reprs[1]


def test_zero_grad():
    params = make_params(glasstorch)
    opt = glasstorch.optim.SGD(params, lr=0.1)
    feed_grads(glasstorch, params)
    grad = params[0].grad
    opt.zero_grad(set_to_none=False)
    assert params[0].grad is grad and not grad.numpy().any()
    opt.zero_grad()
    assert all(p.grad is None for p in params)


def test_step_runs_without_grad_and_closure_with_grad():
    w = glasstorch.tensor([1.0, 2.0], requires_grad=True)
    opt = glasstorch.optim.SGD([w], lr=0.1)
    seen = {}

    def closure():
        seen["closure"] = glasstorch.is_grad_enabled()
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with glasstorch.no_grad():  # the closure turns grad mode back on for itself
        loss = opt.step(closure)
    assert seen == {"closure": True}
    assert glasstorch.is_grad_enabled()
    assert loss.item() == 5.0
    np.testing.assert_allclose(w.detach().numpy(), [0.8, 1.6], rtol=1e-6)
    assert w.grad_fn is None and w.is_leaf


def test_step_hooks():
    w = glasstorch.tensor([1.0], requires_grad=True)
    w.grad = glasstorch.tensor([1.0])
    opt = glasstorch.optim.SGD([w], lr=0.1)
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append(("pre", o is opt, args, kwargs)))
    h2 = opt.register_step_post_hook(lambda o, args, kwargs: calls.append(("post", o is opt, args, kwargs)))
    glob = glasstorch.optim.optimizer.register_optimizer_step_pre_hook(lambda o, a, k: calls.append(("global",)))
    opt.step()
    assert calls == [("global",), ("pre", True, (opt,), {}), ("post", True, (opt,), {})]  # args include self, as torch
    for h in (h1, h2, glob):
        h.remove()
    calls.clear()
    opt.step()
    assert calls == []

    # A pre hook may replace the arguments: here it supplies a closure.
    h = opt.register_step_pre_hook(lambda o, args, kwargs: (args, {"closure": lambda: 42}))
    assert opt.step() == 42
    h.remove()
    opt.register_step_pre_hook(lambda o, args, kwargs: "bad")
    with pytest.raises(RuntimeError, match="must return None or a tuple of"):
        opt.step()


def test_state_dict_hooks():
    w = glasstorch.tensor([1.0], requires_grad=True)
    opt = glasstorch.optim.SGD([w], lr=0.1)
    opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
    assert opt.state_dict()["extra"] == 1
    seen = []
    opt.register_load_state_dict_pre_hook(lambda o, sd: seen.append("pre"))
    opt.register_load_state_dict_post_hook(lambda o: seen.append("post"))
    opt.load_state_dict(opt.state_dict())
    assert seen == ["pre", "post"]


def test_state_is_keyed_by_parameter_and_step_is_float32_scalar():
    params = make_params(glasstorch)
    opt = glasstorch.optim.Adam(params)
    feed_grads(glasstorch, params)
    opt.step()
    opt.step()
    step = opt.state[params[0]]["step"]
    assert isinstance(step, glasstorch.Tensor) and step.shape == () and step.dtype == glasstorch.float32
    assert step.item() == 2.0
    assert set(opt.state) == set(params)


def test_add_param_group_and_named_parameters():
    params = make_params(glasstorch)
    opt = glasstorch.optim.SGD(params[:2], lr=0.1, momentum=0.9)
    opt.add_param_group({"params": params[2], "lr": 0.01})
    assert len(opt.param_groups[1]["params"]) == 1 and opt.param_groups[1]["params"][0] is params[2]
    assert opt.param_groups[1]["momentum"] == 0.9 and opt.param_groups[1]["lr"] == 0.01

    named = glasstorch.optim.SGD([("w", params[0]), ("b", params[1])], lr=0.1)
    assert named.param_groups[0]["param_names"] == ["w", "b"]
    assert named.state_dict()["param_groups"][0]["param_names"] == ["w", "b"]


# ----------------------------------------------------------------------------- errors
def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - we compare whatever torch raises
        return type(e).__name__, str(e)
    return None


BAD_HYPERPARAMETERS = [
    ("SGD", dict(lr=-1)), ("SGD", dict(momentum=-0.5)), ("SGD", dict(weight_decay=-1e-3)),
    ("SGD", dict(nesterov=True)), ("SGD", dict(nesterov=True, momentum=0.9, dampening=0.1)),
    ("Adam", dict(lr=-1)), ("Adam", dict(eps=-1.0)), ("Adam", dict(betas=(1.0, 0.999))),
    ("Adam", dict(betas=(0.9, -0.1))), ("Adam", dict(weight_decay=-1)), ("Adam", dict(betas=(0, 0.999))),
    ("AdamW", dict(lr=-0.1)), ("AdamW", dict(betas=(0.9, 1.5))),
    ("RMSprop", dict(lr=-1)), ("RMSprop", dict(alpha=-0.1)), ("RMSprop", dict(eps=-1e-8)),
    ("RMSprop", dict(momentum=-1)), ("RMSprop", dict(weight_decay=-1)),
    ("Adagrad", dict(lr=-1)), ("Adagrad", dict(lr_decay=-1)), ("Adagrad", dict(initial_accumulator_value=-1)),
    ("Adagrad", dict(eps=-1)), ("Adagrad", dict(weight_decay=-1)),
    ("Adadelta", dict(lr=-1)), ("Adadelta", dict(rho=1.5)), ("Adadelta", dict(eps=-1)),
    ("Adadelta", dict(weight_decay=-1)),
    ("NAdam", dict(lr=-1)), ("NAdam", dict(eps=-1)), ("NAdam", dict(betas=(1.0, 0.9))), ("NAdam", dict(betas=(0.9, 1.0))),
    ("NAdam", dict(weight_decay=-1)), ("NAdam", dict(momentum_decay=-1)),
    ("RAdam", dict(lr=-1)), ("RAdam", dict(eps=-1)), ("RAdam", dict(betas=(-0.1, 0.9))), ("RAdam", dict(weight_decay=-1)),
    ("Adamax", dict(lr=-1)), ("Adamax", dict(eps=-1)), ("Adamax", dict(betas=(0.9, 1.5))),
    ("Adamax", dict(weight_decay=-1)),
    ("ASGD", dict(lr=-1)), ("ASGD", dict(weight_decay=-1)),
    ("Rprop", dict(lr=-1)), ("Rprop", dict(etas=(1.5, 1.2))), ("Rprop", dict(etas=(0.5, 0.9))),
    ("SparseAdam", dict(lr=0)), ("SparseAdam", dict(eps=0)), ("SparseAdam", dict(betas=(1.0, 0.9))),
    ("SparseAdam", dict(betas=(0.9, -1))),
    ("LBFGS", dict(lr=-1)),
]


@pytest.mark.parametrize("name,kwargs", BAD_HYPERPARAMETERS)
def test_invalid_hyperparameters_raise_torchs_error(name, kwargs):
    ours = _error(lambda: getattr(glasstorch.optim, name)(make_params(glasstorch), **kwargs))
    theirs = _error(lambda: getattr(torch.optim, name)(make_params(torch), **kwargs))
    assert theirs is not None and ours == theirs


def test_invalid_lr_message():
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        glasstorch.optim.SGD(make_params(glasstorch), lr=-1)


BAD_PARAMS = {
    "empty": lambda lib: [],
    "tensor, not an iterable": lambda lib: lib.tensor([1.0], requires_grad=True),
    "not a tensor": lambda lib: [lib.tensor([1.0], requires_grad=True), 3],
    "non-leaf": lambda lib: [lib.tensor([1.0], requires_grad=True) * 2],
    "in two groups": lambda lib: (lambda p: [{"params": [p]}, {"params": [p]}])(lib.tensor([1.0], requires_grad=True)),
    "a set": lambda lib: [{"params": {lib.tensor([1.0], requires_grad=True)}}],
    "some names missing": lambda lib: [("w", lib.tensor([1.0], requires_grad=True)), lib.tensor([1.0], requires_grad=True)],
}


@pytest.mark.parametrize("case", BAD_PARAMS)
def test_invalid_params_raise_torchs_error(case):
    ours = _error(lambda: glasstorch.optim.SGD(BAD_PARAMS[case](glasstorch), lr=0.1))
    theirs = _error(lambda: torch.optim.SGD(BAD_PARAMS[case](torch), lr=0.1))
    assert theirs is not None and ours == theirs


def test_unsupported_options_say_so():
    # (fused=True is supported: tests/test_optim_flat.py)
    with pytest.raises(NotImplementedError, match="differentiable"):
        glasstorch.optim.SGD(make_params(glasstorch), differentiable=True)


# ----------------------------------------------------------------------------- docs
@pytest.mark.parametrize("module", ["optimizer", "sgd", "adam", "adamw", "rmsprop", "adagrad", "adadelta", "nadam",
                                    "radam", "adamax", "asgd", "rprop", "sparse_adam", "lbfgs"])
def test_docstring_examples_run(module):
    import importlib
    mod = importlib.import_module(f"glasstorch.optim.{module}")
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
