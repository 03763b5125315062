"""torch.nn.utils.parametrize, nn.utils.parametrizations (weight_norm, spectral_norm, orthogonal) and
the older hook-based nn.utils.weight_norm / spectral_norm, against torch: values, gradients, node
names, state_dict keys, the module's class and repr, and the errors. The ops underneath
(_weight_norm, norm_except_dim, linalg.matrix_exp, householder_product) are in the op registry."""
import copy
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import glasstorch as gt  # noqa: E402

W = np.arange(12.).reshape(4, 3) / 7 - 0.5
B = np.array([.1, .2, -.3, .4])
X = np.linspace(-1, 1, 6).reshape(2, 3)


def _linear(lib, weight=W, bias=B):
    m = lib.nn.Linear(weight.shape[1], weight.shape[0]).double()
    with lib.no_grad():
        m.weight.copy_(lib.tensor(weight))
        m.bias.copy_(lib.tensor(bias))
    return m


def _run(m, lib, x=X):
    y = m(lib.tensor(x))
    y.pow(2).sum().backward()
    return y


def _same_module(tm, gm, ty, gy, rtol=1e-10):
    """Outputs, the gradients of every parameter, the state_dict, the class and the node names agree."""
    np.testing.assert_allclose(gy.detach().numpy(), ty.detach().numpy(), rtol=rtol)
    tp, gp = dict(tm.named_parameters()), dict(gm.named_parameters())
    assert list(gp) == list(tp)
    for name in tp:
        np.testing.assert_allclose(gp[name].grad.numpy(), tp[name].grad.numpy(), rtol=rtol, atol=1e-12)
    tsd, gsd = tm.state_dict(), gm.state_dict()
    assert list(gsd) == list(tsd)
    for k in tsd:
        np.testing.assert_allclose(gsd[k].numpy(), tsd[k].numpy(), rtol=rtol, atol=1e-12)
    assert type(gm).__name__ == type(tm).__name__ and repr(gm) == repr(tm)
    assert gy.grad_fn.name() == ty.grad_fn.name()
    assert gm.weight.grad_fn.name() == tm.weight.grad_fn.name()


class _Symmetric:
    """A user parametrization (the tutorial's): X -> triu(X) + triu(X, 1)^T, with a right_inverse."""

    @staticmethod
    def make(lib):
        class Symmetric(lib.nn.Module):
            def forward(self, X):
                return X.triu() + X.triu(1).transpose(-1, -2)

            def right_inverse(self, A):
                return A.triu()
        return Symmetric()


def test_register_parametrization_user_module():
    S = np.arange(9.).reshape(3, 3) / 5
    out = []
    for lib in (torch, gt):
        m = _linear(lib, S, B[:3])
        P = lib.nn.utils.parametrize
        P.register_parametrization(m, "weight", _Symmetric.make(lib))
        assert P.is_parametrized(m) and P.is_parametrized(m, "weight") and not P.is_parametrized(m, "bias")
        assert P.type_before_parametrizations(m) is lib.nn.Linear
        assert isinstance(m, lib.nn.Linear)
        y = _run(m, lib)
        original = m.parametrizations.weight.original
        out.append((m, y, original))
    (tm, ty, to), (gm, gy, go) = out
    _same_module(tm, gm, ty, gy)
    np.testing.assert_allclose(go.grad.numpy(), to.grad.numpy(), rtol=1e-12)
    # another Linear is untouched: the property lives on the module's own class
    assert not hasattr(type(gt.nn.Linear(2, 2)), "parametrizations") and "weight" not in vars(gt.nn.Linear)


def test_assigning_runs_right_inverse_and_remove_keeps_the_value():
    A = np.arange(9.).reshape(3, 3)
    results = []
    for lib in (torch, gt):
        m = _linear(lib, np.eye(3), B[:3])
        P = lib.nn.utils.parametrize
        P.register_parametrization(m, "weight", _Symmetric.make(lib))
        original = m.parametrizations.weight.original
        m.weight = lib.tensor(A)         # right_inverse: the original takes triu(A), in place
        assert m.parametrizations.weight.original is original
        w = m.weight.detach().clone()
        version = original._version
        P.remove_parametrizations(m, "weight")
        results.append((w.numpy(), m.weight.detach().numpy(), type(m).__name__, isinstance(m.weight, lib.nn.Parameter),
                        m.weight is original, list(m.state_dict()), version))
    assert results[0][2:] == results[1][2:]
    for i in (0, 1):
        np.testing.assert_array_equal(results[1][i], results[0][i])


def test_remove_leave_parametrized_false_and_the_errors():
    for lib in (torch, gt):
        P = lib.nn.utils.parametrize
        m = _linear(lib, np.eye(3), B[:3])
        P.register_parametrization(m, "weight", _Symmetric.make(lib))
        with lib.no_grad():
            m.parametrizations.weight.original.copy_(lib.tensor(np.arange(9.).reshape(3, 3)))
        P.remove_parametrizations(m, "weight", leave_parametrized=False)
        np.testing.assert_array_equal(m.weight.detach().numpy(), np.arange(9.).reshape(3, 3))
        with pytest.raises(ValueError, match="does not have a parametrization on weight"):
            P.remove_parametrizations(m, "weight")
        with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized element with "
                                             "name 'nope'"):
            P.register_parametrization(m, "nope", _Symmetric.make(lib))


@pytest.mark.parametrize("case", ["shape", "dtype", "not a tensor", "empty list"])
def test_parametrization_errors_match_torch(case):
    def build(lib):
        class Bad(lib.nn.Module):
            def forward(self, X):
                if case == "shape":
                    return X[:2]
                if case == "dtype":
                    return X.float()
                return 3

        m = _linear(lib)
        if case == "empty list":
            return lib.nn.utils.parametrize.ParametrizationList([], m.weight)
        return lib.nn.utils.parametrize.register_parametrization(m, "weight", Bad())

    with pytest.raises(Exception) as t:
        build(torch)
    with pytest.raises(Exception) as g:
        build(gt)
    assert type(g.value) is type(t.value) and str(g.value) == str(t.value).replace("torch.", "torch.")


def test_cached_computes_once():
    calls = []

    class Counted(gt.nn.Module):
        def forward(self, X):
            calls.append(1)
            return X * 2

    m = _linear(gt)
    gt.nn.utils.parametrize.register_parametrization(m, "weight", Counted())
    calls.clear()
    with gt.nn.utils.parametrize.cached():
        a, b = m.weight, m.weight
        assert a is b
    assert len(calls) == 1
    m.weight, m.weight
    assert len(calls) == 3


def test_two_parametrizations_chain_and_deepcopy_and_pickle_refused():
    results = []
    for lib in (torch, gt):
        class Double(lib.nn.Module):
            def forward(self, X):
                return X * 2

        m = _linear(lib, np.eye(3), B[:3])
        P = lib.nn.utils.parametrize
        P.register_parametrization(m, "weight", _Symmetric.make(lib))
        P.register_parametrization(m, "weight", Double())
        y = _run(m, lib)
        clone = copy.deepcopy(m)
        assert clone.weight is not m.weight and type(clone) is type(m)
        with pytest.raises(RuntimeError, match="Serialization of parametrized modules is only supported through "
                                               "state_dict"):
            m.__getstate__()
        results.append((m, y))
    _same_module(results[0][0], results[1][0], results[0][1], results[1][1])


def test_parametrizations_weight_norm_matches_torch():
    out = [(m, _run(m, lib)) for lib in (torch, gt)
           for m in [lib.nn.utils.parametrizations.weight_norm(_linear(lib))]]
    _same_module(out[0][0], out[1][0], out[0][1], out[1][1])
    assert out[1][0].weight.grad_fn.name() == "WeightNormInterfaceBackward0"


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_on_a_convolution_and_its_dims(dim):
    rng = np.random.default_rng(3)
    w, x = rng.standard_normal((4, 2, 3)), rng.standard_normal((2, 2, 7))
    out = []
    for lib in (torch, gt):
        m = lib.nn.Conv1d(2, 4, 3, bias=False).double()
        with lib.no_grad():
            m.weight.copy_(lib.tensor(w))
        lib.nn.utils.parametrizations.weight_norm(m, dim=dim)
        out.append((m, _run(m, lib, x)))
    _same_module(out[0][0], out[1][0], out[0][1], out[1][1])


def test_old_weight_norm_hook_matches_torch_and_removes():
    out = []
    for lib in (torch, gt):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m = lib.nn.utils.weight_norm(_linear(lib))
            assert any(issubclass(w.category, FutureWarning) and "deprecated" in str(w.message) for w in caught)
            with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks on the same parameter "
                                                   "weight"):
                lib.nn.utils.weight_norm(m)
        out.append((m, _run(m, lib)))
    _same_module(out[0][0], out[1][0], out[0][1], out[1][1])
    for lib, (m, _) in zip((torch, gt), out):
        lib.nn.utils.remove_weight_norm(m)
        assert list(m.state_dict()) == ["bias", "weight"]
        with pytest.raises(ValueError, match="weight_norm of 'weight' not found in"):
            lib.nn.utils.remove_weight_norm(m)
    np.testing.assert_allclose(out[1][0].weight.detach().numpy(), out[0][0].weight.detach().numpy(), rtol=1e-12)


def test_old_weight_norm_state_dict_loads_into_the_parametrization():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        old = gt.nn.utils.weight_norm(_linear(gt))
    sd = old.state_dict()
    new = gt.nn.utils.parametrizations.weight_norm(_linear(gt, W * 3))
    new.load_state_dict(sd)
    np.testing.assert_allclose(new.weight.detach().numpy(), old.weight.detach().numpy(), rtol=1e-12)


def _copy_buffers(tm, gm):
    """The power iteration starts from random vectors: give glasstorch torch's."""
    with gt.no_grad():
        for name, b in tm.named_buffers():
            dict(gm.named_buffers())[name].copy_(gt.tensor(b.numpy()))


def test_parametrizations_spectral_norm_matches_torch():
    tm = torch.nn.utils.parametrizations.spectral_norm(_linear(torch))
    gm = gt.nn.utils.parametrizations.spectral_norm(_linear(gt))
    # registration ran 15 power iterations, which converge: sigma is the largest singular value
    sigma = np.linalg.svd(W, compute_uv=False)[0]
    u, v = gm.parametrizations.weight[0]._u.numpy(), gm.parametrizations.weight[0]._v.numpy()
    assert abs(u @ W @ v - sigma) < 1e-6
    tm.parametrizations.weight[0]._u.mul_(-1)    # (a different start, still reached the same way)
    _copy_buffers(tm, gm)
    _same_module(tm, gm, _run(tm, torch), _run(gm, gt))
    tm.eval(), gm.eval()
    np.testing.assert_allclose(gm.weight.detach().numpy(), tm.weight.detach().numpy(), rtol=1e-12)


def test_old_spectral_norm_matches_torch_and_removes():
    tm, gm = torch.nn.utils.spectral_norm(_linear(torch)), gt.nn.utils.spectral_norm(_linear(gt))
    _copy_buffers(tm, gm)
    _same_module(tm, gm, _run(tm, torch), _run(gm, gt))
    assert list(gm.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    assert gm.state_dict()._metadata[""]["spectral_norm"] == {"weight.version": 1}
    for lib, m in ((torch, tm), (gt, gm)):
        with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks on the same parameter"):
            lib.nn.utils.spectral_norm(m)
        lib.nn.utils.remove_spectral_norm(m)
        assert sorted(m.state_dict()) == ["bias", "weight"]
    np.testing.assert_allclose(gm.weight.detach().numpy(), tm.weight.detach().numpy(), rtol=1e-12)


def test_spectral_norm_errors_and_transposed_convolution_dim():
    for lib in (torch, gt):
        with pytest.raises(ValueError, match="Expected n_power_iterations to be positive, but got "
                                             "n_power_iterations=0"):
            lib.nn.utils.parametrizations.spectral_norm(_linear(lib), n_power_iterations=0)
        with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\] but "
                                             r"got 2\)"):
            lib.nn.utils.parametrizations.spectral_norm(_linear(lib), dim=2)
        with pytest.raises(ValueError, match="has no parameter or buffer with name 'nope'"):
            lib.nn.utils.parametrizations.spectral_norm(_linear(lib), name="nope")
        m = lib.nn.utils.parametrizations.spectral_norm(lib.nn.ConvTranspose2d(3, 5, 2))
        assert m.parametrizations.weight[0].dim == 1 and m.parametrizations.weight[0]._u.shape == (5,)


@pytest.mark.parametrize("shape,orthogonal_map,trivial", [
    ((4, 4), None, True), ((4, 4), "cayley", True), ((4, 4), "householder", True), ((5, 3), None, True),
    ((3, 5), "matrix_exp", True), ((5, 3), "householder", False), ((4, 4), "householder", False)])
def test_orthogonal_matches_torch(shape, orthogonal_map, trivial):
    rng = np.random.default_rng(2)
    w, x = rng.standard_normal(shape), rng.standard_normal((2, shape[1]))
    out = []
    for lib in (torch, gt):
        m = _linear(lib, w, np.zeros(shape[0]))
        lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map=orthogonal_map, use_trivialization=trivial)
        if trivial and lib is gt:     # a wide or tall base is completed with random columns: torch's
            with gt.no_grad():
                m.parametrizations.weight[0].base.copy_(gt.tensor(out[0][0].parametrizations.weight[0].base.numpy()))
        y = m(lib.tensor(x))
        y.pow(3).sum().backward()
        out.append((m, y))
    (tm, ty), (gm, gy) = out
    _same_module(tm, gm, ty, gy, rtol=1e-8)
    q = gm.weight.detach().numpy()
    gram = q.T @ q if shape[0] >= shape[1] else q @ q.T
    np.testing.assert_allclose(gram, np.eye(min(shape)), atol=1e-10)


def test_orthogonal_errors():
    for lib in (torch, gt):
        P = lib.nn.utils.parametrizations
        with pytest.raises(ValueError, match="Expected a matrix or batch of matrices. Got a tensor of 1 dimensions."):
            P.orthogonal(lib.nn.Linear(3, 3), "bias")
        with pytest.raises(ValueError, match='orthogonal_map has to be one of "matrix_exp", "cayley", '
                                             '"householder". Got: nope'):
            P.orthogonal(lib.nn.Linear(3, 3), orthogonal_map="nope")
        m = P.orthogonal(lib.nn.Linear(3, 3), orthogonal_map="cayley", use_trivialization=False)
        with pytest.raises(NotImplementedError, match="It is not possible to assign to the matrix exponential or "
                                                      "the Cayley parametrizations when use_trivialization=False."):
            m.weight = lib.eye(3)


def test_set_shares_memory_keeps_its_version_counter_and_refuses_as_torch():
    for lib in (torch, gt):
        a, b = lib.zeros(3), lib.ones(2)
        assert a.set_(b) is a and a.shape == (2,) and a._version == 1
        b[0] = 5
        assert a.tolist() == [5.0, 1.0] and a._version == 1
        leaf = lib.zeros(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
            leaf.set_(lib.ones(2))
        with lib.no_grad():
            leaf.set_(lib.ones(2))
        assert leaf.is_leaf and leaf.requires_grad and leaf.shape == (2,)
        with pytest.raises(RuntimeError, match="Could not set tensor of type long int to a tensor of type float"):
            lib.zeros(2).set_(lib.zeros(2, dtype=lib.int64))
        assert lib.zeros(2).set_().shape == (0,)
