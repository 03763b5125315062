"""glasstorch.optim.swa_utils against torch.optim.swa_utils: averaged weights, BatchNorm refresh, SWALR."""
import copy
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import glasstorch  # noqa: E402
from glasstorch.optim import swa_utils  # noqa: E402

_rng = np.random.default_rng(5)
X = _rng.standard_normal((32, 3)).astype(np.float32)
Y = _rng.standard_normal((32, 1)).astype(np.float32)


def make_model(lib):
    """The same small net with a BatchNorm in both libraries (torch's initial weights copied over)."""
    torch.manual_seed(0)
    reference = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.ReLU(),
                                    torch.nn.Linear(4, 1))
    if lib is torch:
        return reference
    model = glasstorch.nn.Sequential(glasstorch.nn.Linear(3, 4), glasstorch.nn.BatchNorm1d(4), glasstorch.nn.ReLU(),
                                     glasstorch.nn.Linear(4, 1))
    model.load_state_dict({k: glasstorch.tensor(v.numpy()) for k, v in reference.state_dict().items()})
    return model


def state(module):
    return {k: v.detach().numpy().copy() for k, v in module.state_dict().items()}


def train_and_average(lib, steps=6, **averaged_kwargs):
    """Train with SGD for ``steps`` batches, folding the model into an AveragedModel after each."""
    S = lib.optim.swa_utils
    model = make_model(lib)
    kwargs = {k: (v(S) if callable(v) else v) for k, v in averaged_kwargs.items()}
    averaged = S.AveragedModel(model, **kwargs)
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = lib.tensor(X), lib.tensor(Y)
    for i in range(steps):
        opt.zero_grad()
        loss = ((model(x[i * 5:i * 5 + 8]) - y[i * 5:i * 5 + 8]) ** 2).mean()
        loss.backward()
        opt.step()
        averaged.update_parameters(model)
    return averaged, model


AVERAGES = {
    "mean": {},
    "ema-multi": {"multi_avg_fn": lambda S: S.get_ema_multi_avg_fn(0.7)},
    "ema-single": {"avg_fn": lambda S: S.get_ema_avg_fn(0.7)},
    "swa-multi": {"multi_avg_fn": lambda S: S.get_swa_multi_avg_fn()},
    "custom-avg_fn": {"avg_fn": lambda S: (lambda avg, cur, n: 0.5 * avg + 0.5 * cur)},
    "mean-use_buffers": {"use_buffers": True},
    "ema-use_buffers": {"multi_avg_fn": lambda S: S.get_ema_multi_avg_fn(0.5), "use_buffers": True},
}


@pytest.mark.parametrize("case", AVERAGES)
def test_averaged_model_matches_torch(case):
    ours, model = train_and_average(glasstorch, **AVERAGES[case])
    theirs, tmodel = train_and_average(torch, **AVERAGES[case])
    a, b = state(ours), state(theirs)
    assert list(a) == list(b)     # n_averaged, module.0.weight, ..., module.1.num_batches_tracked
    for k in b:
        assert a[k].dtype == b[k].dtype, k
        np.testing.assert_allclose(a[k], b[k], rtol=1e-5, atol=1e-6, err_msg=k)
    assert int(a["n_averaged"]) == 6
    # the average differs from the last iterate, and its forward runs the averaged copy
    assert not np.allclose(a["module.0.weight"], state(model)["0.weight"])
    ours.eval()
    out = ours(glasstorch.tensor(X[:4]))
    ours.module.eval()
    np.testing.assert_array_equal(out.detach().numpy(), ours.module(glasstorch.tensor(X[:4])).detach().numpy())


def test_averaged_model_rejects_two_functions():
    for lib in (glasstorch, torch):
        S = lib.optim.swa_utils
        with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn should be provided"):
            S.AveragedModel(make_model(lib), avg_fn=S.get_swa_avg_fn(), multi_avg_fn=S.get_swa_multi_avg_fn())
        with pytest.raises(ValueError, match=r"Invalid decay value 1.5 provided. Please provide a value in \[0,1\]"):
            S.get_ema_multi_avg_fn(1.5)
        with pytest.raises(ValueError, match="Invalid decay value -0.1 provided"):
            S.get_ema_avg_fn(-0.1)


def test_averaged_model_is_a_deep_copy():
    model = make_model(glasstorch)
    averaged = swa_utils.AveragedModel(model)
    assert averaged.module is not model and averaged.module[0].weight is not model[0].weight
    assert averaged.n_averaged.dtype == glasstorch.long and averaged.n_averaged.item() == 0
    assert "n_averaged" in dict(averaged.named_buffers())


def test_update_bn_matches_torch():
    results = []
    for lib in (glasstorch, torch):
        averaged, _ = train_and_average(lib)
        averaged.eval()
        loader = [(lib.tensor(X[i:i + 8]), lib.tensor(Y[i:i + 8])) for i in range(0, 32, 8)]  # (input, target)
        lib.optim.swa_utils.update_bn(loader, averaged)
        bn = averaged.module[1]
        assert bn.momentum == 0.1 and not averaged.training   # restored
        results.append((bn.running_mean.numpy().copy(), bn.running_var.numpy().copy(), bn.num_batches_tracked.item()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-5, atol=1e-6)
    assert results[0][2] == results[1][2] == 4


def test_update_bn_without_batchnorm_does_nothing():
    model = glasstorch.nn.Linear(3, 1)
    calls = []
    swa_utils.update_bn(iter(calls.append for _ in range(0)), model)   # the loader is never read
    assert model.training


SWALRS = {
    "cos": lambda S, o: S.SWALR(o, swa_lr=0.01, anneal_epochs=5),
    "linear": lambda S, o: S.SWALR(o, swa_lr=[0.01, 0.2], anneal_epochs=3, anneal_strategy="linear"),
    "no-anneal": lambda S, o: S.SWALR(o, swa_lr=0.02, anneal_epochs=0),
}


@pytest.mark.parametrize("case", SWALRS)
def test_swalr_matches_torch(case):
    runs = []
    for lib in (glasstorch, torch):
        params = [lib.zeros(2, requires_grad=True), lib.zeros(1, requires_grad=True)]
        opt = lib.optim.SGD([{"params": params[:1]}, {"params": params[1:], "lr": 0.3}], lr=0.1)
        sched = SWALRS[case](lib.optim.swa_utils, opt)
        lrs = [sched.get_last_lr()]
        for _ in range(8):
            opt.step()
            sched.step()
            lrs.append(sched.get_last_lr())
        runs.append((lrs, sched.state_dict()))
    assert runs[0] == runs[1]
    assert "anneal_func" not in runs[0][1] and runs[0][1]["_anneal_strategy"] in ("cos", "linear")


def test_swalr_state_dict_round_trip_and_errors():
    opt = glasstorch.optim.SGD([glasstorch.zeros(1, requires_grad=True)], lr=0.1)
    sched = swa_utils.SWALR(opt, swa_lr=0.01, anneal_strategy="linear", anneal_epochs=4)
    opt.step()
    sched.step()
    sd = copy.deepcopy(sched.state_dict())
    opt2 = glasstorch.optim.SGD([glasstorch.zeros(1, requires_grad=True)], lr=0.1)
    sched2 = swa_utils.SWALR(opt2, swa_lr=0.5)
    opt2.load_state_dict(opt.state_dict())
    sched2.load_state_dict(sd)
    assert sched2.anneal_func is swa_utils.SWALR._linear_anneal
    for o, s in ((opt, sched), (opt2, sched2)):
        o.step()
        s.step()
    assert sched.get_last_lr() == sched2.get_last_lr()

    for lib in (glasstorch, torch):
        o = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.1)
        with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear', instead got exp"):
            lib.optim.swa_utils.SWALR(o, 0.1, anneal_strategy="exp")
        with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0, got -1"):
            lib.optim.swa_utils.SWALR(o, 0.1, anneal_epochs=-1)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.optim.swa_utils.SWALR(o, 0.1).get_lr()
        assert any("get_last_lr()" in str(w.message) for w in caught)


def test_namespace_matches_torch():
    assert swa_utils.__all__ == torch.optim.swa_utils.__all__
    assert glasstorch.optim.swa_utils is swa_utils


def test_docstring_examples_run():
    import doctest
    result = doctest.testmod(swa_utils, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
