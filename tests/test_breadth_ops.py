"""The layers around the newer ops (nn.Unfold/Fold, nn.MaxUnpool1d/2d/3d) against torch; the ops
themselves are in the registry (tests/opinfo.py)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import glasstorch as gt  # noqa: E402


def _pair(x):
    return torch.from_numpy(x.copy()).requires_grad_(), gt.from_numpy(x.copy()).requires_grad_()


def test_unfold_fold_modules_round_trip():
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 5))
    tx, gx = _pair(x)
    outs = []
    for lib, inp in ((torch, tx), (gt, gx)):
        unfold = lib.nn.Unfold(kernel_size=(2, 3), padding=1, stride=(2, 1))
        fold = lib.nn.Fold(output_size=(6, 5), kernel_size=(2, 3), padding=1, stride=(2, 1))
        y = fold(unfold(inp) * 2)
        y.pow(2).sum().backward()
        outs.append((y.detach().numpy(), inp.grad.numpy(), repr(unfold), repr(fold), y.grad_fn.name()))
    (ty, tg, tu, tf, tn), (gy, gg, gu, gf, gn) = outs
    np.testing.assert_allclose(gy, ty, rtol=1e-12)
    np.testing.assert_allclose(gg, tg, rtol=1e-12)
    assert (gu, gf, gn) == (tu, tf, tn)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_unpool_module_inverts_max_pool(nd):
    shape = (2, 3) + (4,) * nd
    x = np.random.default_rng(nd).standard_normal(shape)
    results = []
    for lib in (torch, gt):
        inp = lib.from_numpy(x.copy()).requires_grad_()
        pool = getattr(lib.nn, f"MaxPool{nd}d")(2, return_indices=True)
        unpool = getattr(lib.nn, f"MaxUnpool{nd}d")(2)
        values, indices = pool(inp)
        out = unpool(values, indices, output_size=inp.shape)
        (out * lib.from_numpy(x.copy())).sum().backward()
        results.append((out.detach().numpy(), inp.grad.numpy(), repr(unpool)))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])
    assert results[0][2] == results[1][2]


def test_unpool_output_size_errors():
    v = gt.zeros(1, 1, 2, 2)
    i = gt.zeros(1, 1, 2, 2, dtype=gt.int64)
    with pytest.raises(ValueError, match="invalid output_size"):
        gt.nn.functional.max_unpool2d(v, i, 2, output_size=(9, 9))
    with pytest.raises(RuntimeError, match="Expected 3D or 4D input"):
        gt.nn.functional.max_unpool2d(gt.zeros(2, 2), i, 2)


@pytest.mark.filterwarnings("ignore:index_reduce")
@pytest.mark.parametrize("name", ["scatter_reduce", "index_reduce"])
def test_double_backward_difference_of_the_reductions_into_an_index(name):
    """README "Where glasstorch differs": torch differentiates scatter_reduce and index_reduce twice;
    glasstorch says it can't."""
    for lib in (torch, gt):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        src = lib.tensor([4.0, 5.0], dtype=lib.float64, requires_grad=True)
        y = getattr(x, name)(0, lib.tensor([0, 0]), src, "prod")
        (g,) = lib.autograd.grad(y.sum(), src, create_graph=lib is torch)
        assert g.tolist() == [5.0, 4.0]
    y = getattr(gt.tensor([1.0, 2.0], requires_grad=True), name)(0, gt.tensor([0]), gt.tensor([3.0]), "amax")
    with pytest.raises(NotImplementedError, match=f"double backward through {name}"):
        gt.autograd.grad(y.sum(), y.grad_fn.next_functions[0][0].variable, create_graph=True)


def test_index_reduce_warns_once_that_it_is_beta():
    import warnings
    for lib in (torch, gt):
        x = lib.ones(3)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.index_reduce(x, 0, lib.tensor([0]), lib.ones(1), "mean")
        # (torch's TORCH_WARN_ONCE: once per process, so the first call in the run warned or this one does)
        assert all("index_reduce() is in beta" in str(w.message) for w in caught) and len(caught) <= 1


def test_embedding_bag_module_against_torch():
    """nn.EmbeddingBag: the layer's repr, its init (padding row zero), from_pretrained, and a
    training step's gradient (the op itself is in the registry: nn.functional.embedding_bag)."""
    w = np.random.default_rng(4).standard_normal((6, 3))
    results = []
    for lib in (torch, gt):
        bag = lib.nn.EmbeddingBag(6, 3, mode="max", padding_idx=-2)
        assert bag.weight[4].abs().sum().item() == 0
        bag = lib.nn.EmbeddingBag.from_pretrained(lib.tensor(w), freeze=False, mode="sum", padding_idx=1)
        out = bag(lib.tensor([0, 1, 2, 5, 5]), lib.tensor([0, 3]),
                  per_sample_weights=lib.tensor([1.0, 2.0, 0.5, 1.0, -1.0], dtype=lib.float64))
        out.pow(2).sum().backward()
        frozen = lib.nn.EmbeddingBag.from_pretrained(lib.tensor(w))
        results.append((repr(bag), repr(frozen), frozen.weight.requires_grad, out.detach().numpy(),
                        bag.weight.grad.numpy(), out.grad_fn.name()))
    (tr, tf, tg, to, tw, tn), (gr, gf, gg, go, gw, gn) = results
    assert (gr, gf, gg, gn) == (tr, tf, tg, tn)
    np.testing.assert_allclose(go, to, rtol=1e-12)
    np.testing.assert_allclose(gw, tw, rtol=1e-12)
    with pytest.raises(AssertionError, match="padding_idx must be within num_embeddings"):
        gt.nn.EmbeddingBag(3, 2, padding_idx=3)
