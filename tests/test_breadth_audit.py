"""Issue 9's audit as a test: every item of tools/audit_breadth.py agrees with torch (or differs where the
README says glasstorch differs), and the functions without a derivative that the audit's gaps brought in
(unique_consecutive, unravel_index, histogram) against torch."""
import importlib.util
import os
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import glasstorch as gt  # noqa: E402

_TOOL = os.path.join(os.path.dirname(__file__), "..", "tools", "audit_breadth.py")

# items still open, each with the reason (the report lists them); the test fails when one starts to pass
KNOWN_OPEN = {
    "Adafactor": "torch.optim.Adafactor is not in glasstorch",
    "torch.optim.__all__ names": "Adafactor, Muon, swap_in_optimizer_params_and_state",
    "x.exp(out=) (Tensor method)": "TypeError either way; torch's words are 'takes no keyword arguments'",
    "uint8 bilinear interpolate antialias downscale": "interpolate has no antialias",
    "torch.functional.__all__ names": "lu, pca_lowrank, svd_lowrank",
}


def _load_tool():
    spec = importlib.util.spec_from_file_location("audit_breadth", _TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.filterwarnings("ignore")
def test_every_audit_item_agrees_with_torch():
    rows = _load_tool().audit_items()
    assert len(rows) > 250
    bad = {name: (status, detail) for _, name, status, detail in rows
           if status not in ("ok", "documented") and name not in KNOWN_OPEN}
    assert not bad
    fixed = [name for _, name, status, _ in rows if name in KNOWN_OPEN and status == "ok"]
    assert not fixed, f"now passing: remove from KNOWN_OPEN: {fixed}"


def _same(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want, got = fn(torch), fn(gt)
    if not isinstance(want, tuple):
        want, got = (want,), (got,)
    assert type(got) is tuple or len(got) == len(want)
    assert len(got) == len(want)
    for w, g in zip(want, got):
        assert str(g.dtype) == str(w.dtype) and tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)


@pytest.mark.parametrize("kw", [{}, {"return_inverse": True}, {"return_counts": True},
                                {"return_inverse": True, "return_counts": True}])
@pytest.mark.parametrize("case", [
    lambda m: m.tensor([1, 1, 2, 2, 3, 1, 1, 2]),
    lambda m: m.tensor([[1, 1], [2, 2], [2, 1]]),
    lambda m: m.tensor([1.5, 1.5, float("nan"), float("nan")]),
    lambda m: m.tensor([], dtype=m.long),
])
def test_unique_consecutive(case, kw):
    _same(lambda m: m.unique_consecutive(case(m), **kw))
    _same(lambda m: case(m).unique_consecutive(**kw))


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_unique_consecutive_dim(dim):
    _same(lambda m: m.unique_consecutive(m.tensor([[1, 1, 2], [1, 1, 2], [3, 3, 2]]), dim=dim,
                                         return_inverse=True, return_counts=True))
    assert gt.functional.unique_consecutive is gt.unique_consecutive


@pytest.mark.parametrize("indices,shape", [([4, 7, 0], (2, 4)), ([[5, 1]], (2, 4)), (5, (2, 4)), ([5], 8),
                                           ([-1, 9], (2, 4)), ([3, 2], (2, 1, 2))])
def test_unravel_index(indices, shape):
    _same(lambda m: m.unravel_index(m.tensor(indices), shape))


@pytest.mark.parametrize("call", [
    lambda m: m.unravel_index(m.tensor([1.0]), (2, 4)),
    lambda m: m.unravel_index(m.tensor([True]), (2, 4)),
    lambda m: m.unravel_index(m.tensor([1]), (2, -4)),
    lambda m: m.unravel_index(m.tensor([1]), (2, 4.0)),
])
def test_unravel_index_errors(call):
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(want.type, match=str(want.value).split(" but")[0].replace("(", r"\(").replace(")", r"\)")):
        call(gt)


@pytest.mark.parametrize("call", [
    lambda m: m.histogram(m.tensor([1., 2, 1, 4, 2.5]), 3),
    lambda m: m.histogram(m.tensor([1., 2, 1, 4, 2.5], dtype=m.float64), 4, range=(0., 4.)),
    lambda m: m.histogram(m.tensor([1., 2, 5]), m.tensor([0., 1.5, 6]), density=True),
    lambda m: m.histogram(m.tensor([1., 2, 5]), 4, range=(0., 4.), weight=m.tensor([1., 2., 3.])),
    lambda m: m.histogram(m.tensor([2., 2.]), 2),
    lambda m: m.tensor([0.5, 0.25]).histogram(2, density=True),
])
def test_histogram(call):
    want, got = call(torch), call(gt)
    assert type(got).__name__ == "histogram" and got._fields == ("hist", "bin_edges")
    _same(lambda m: tuple(call(m)))


def test_histogram_errors():
    for call in (lambda m: m.histogram(m.tensor([1, 2]), 3), lambda m: m.histogram(m.tensor([1., 2]), 2, range=(3., 1.))):
        with pytest.raises(Exception) as want:
            call(torch)
        with pytest.raises(want.type):
            call(gt)


@pytest.mark.parametrize("call", [
    lambda m: m.ones(2, dtype=m.float64).new([1, 2]),
    lambda m: m.ones(2, dtype=m.int32).new(2, 3).fill_(1),
    lambda m: m.ones(2).new(),
    lambda m: m.ones(2).new(m.Size([2])).zero_(),
    lambda m: m.ones(1, dtype=m.complex64).new([1j]),
    lambda m: m.ones(2, dtype=m.float64).new(m.tensor([1], dtype=m.long)),     # an error: another dtype
    lambda m: m.tensor([1.5, -1.5]).fix(),
    lambda m: m.tensor([1.5, -1.5]).fix_(),
    lambda m: m.fix_(m.tensor([2.5])),
    lambda m: m.tensor([2.0], dtype=m.float64).float_power_(2),
    lambda m: m.tensor([2.0]).float_power_(2),                                   # an error: float32 base
    lambda m: m.tensor([2.0]).float_power(m.tensor([3])),
    lambda m: m.constant_pad_nd(m.arange(3.0), [1, 2], 7.0),
    lambda m: m.pixel_unshuffle(m.arange(16.0).view(1, 1, 4, 4), 2),
    lambda m: m.bilinear(m.ones(1, 2), m.ones(1, 3), m.arange(24.0).view(4, 2, 3), None),
    lambda m: m.max_pool3d(m.arange(8.0).view(1, 1, 2, 2, 2), 2),
    lambda m: m.conv_transpose3d(m.ones(1, 1, 2, 2, 2), m.ones(1, 1, 2, 2, 2)),
    lambda m: m.threshold(m.tensor([1., 2.]), 1.5, 0., out=m.empty(0)),
])
def test_legacy_new_and_top_level_names(call):
    def outcome(lib):
        try:
            r = call(lib)
        except Exception as e:  # noqa: BLE001
            return type(e).__name__, str(e).split(" (")[0]
        return str(r.dtype), tuple(r.shape), r.numpy().tolist(), r.is_neg()
    assert outcome(gt) == outcome(torch)
