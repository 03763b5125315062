"""torch.func (grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian, vmap, functional_call) and
nn.utils.stateless.functional_call against torch: each case runs in both, and the results (every
tensor's values, shape and requires_grad) or the errors (type and message) must agree."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import glasstorch as gt  # noqa: E402
from glasstorch.utils import _pytree  # noqa: E402

rng = np.random.default_rng(0)
X = rng.standard_normal(3)
Y = rng.standard_normal((2, 3))


def T(lib, a):
    return lib.tensor(a)


def _functional_call_case(l):
    m = l.nn.Linear(3, 2).double()
    p = {"weight": l.tensor(Y), "bias": l.tensor([1., 2.], dtype=l.float64)}
    x = T(l, Y[0])
    out = l.func.functional_call(m, p, (x,))
    g = l.func.grad(lambda p, x: l.func.functional_call(m, p, x).pow(2).sum())(p, x)
    return out, g, tuple(m.weight.shape)


def _ones(l, *shape):
    return l.ones(*shape, dtype=l.float64)


def _vjp(l, f, cotangents, *primals, has_aux=False):
    """vjp's output, the vjp of the cotangents (and aux)."""
    out = l.func.vjp(f, *primals, has_aux=has_aux)
    return (out[0], out[1](cotangents)) + tuple(out[2:])


def _closure_over_a_leaf(l):
    """A gradient that depends on a tensor requiring grad outside the transform keeps its history."""
    w = T(l, X).requires_grad_()
    g = l.func.grad(lambda x: (x * w).pow(2).sum())(T(l, X))
    return g, g.requires_grad


CASES = {
    'grad': lambda l: l.func.grad(lambda x: (x.sin() * x).sum())(T(l, X)),
    'grad of grad': lambda l: l.func.grad(lambda x: l.func.grad(lambda y: (y ** 3).sum())(x).sum())(T(l, X)),
    'grad scalar2': lambda l: l.func.grad(l.func.grad(lambda x: x.sin()))(l.tensor(0.7, dtype=l.float64)),
    'argnums tuple': lambda l: l.func.grad(lambda x, y: (x * y).sum(), argnums=(0, 1))(T(l, X), T(l, Y)),
    'argnums 1': lambda l: l.func.grad(lambda x, y: (x * y).sum(), argnums=1)(T(l, X), T(l, Y)),
    'has_aux': lambda l: l.func.grad(lambda x: ((x ** 2).sum(), x.cos()), has_aux=True)(T(l, X)),
    'grad_and_value': lambda l: l.func.grad_and_value(lambda x: (x ** 2).sum())(T(l, X)),
    'grad_and_value aux':
        lambda l: l.func.grad_and_value(lambda x: ((x ** 2).sum(), {"a": x * 2}), has_aux=True)(T(l, X)),
    'dict input': lambda l: l.func.grad(lambda d: (d["a"] * d["b"]).sum())({"a": T(l, X), "b": T(l, X) * 2}),
    'unused': lambda l: l.func.grad(lambda x, y: (x * 2).sum(), argnums=1)(T(l, X), T(l, X)),
    'not scalar': lambda l: l.func.grad(lambda x: x * 2)(T(l, X)),
    'bad argnum': lambda l: l.func.grad(lambda x: x.sum(), argnums=1)(T(l, X)),
    'aux not tuple': lambda l: l.func.grad(lambda x: x.sum(), has_aux=True)(T(l, X)),
    'aux int': lambda l: l.func.grad(lambda x: (x.sum(), 1), has_aux=True)(T(l, X)),
    'float out': lambda l: l.func.grad(lambda x: 3.0)(T(l, X)),
    'float arg': lambda l: l.func.grad(lambda x, y: (x * y).sum(), argnums=(0, 1))(T(l, X), 2.0),
    'vjp': lambda l: (lambda o, f: (o, f(l.ones(3, dtype=l.float64))))(*l.func.vjp(lambda x: x.exp() * 2, T(l, X))),
    'vjp two':
        lambda l: _vjp(l, lambda x, y: (x.exp(), y * x), (_ones(l, 3), _ones(l, 2, 3)), T(l, X), T(l, Y)),
    'vjp aux':
        lambda l: _vjp(l, lambda x: (x.exp(), x.sum()), _ones(l, 3), T(l, X), has_aux=True),
    'vjp shape': lambda l: l.func.vjp(lambda x: x * 2, T(l, X))[1](l.ones(2, dtype=l.float64)),
    'vjp struct': lambda l: l.func.vjp(lambda x: x * 2, T(l, X))[1]((l.ones(3, dtype=l.float64),)),
    'jvp': lambda l: l.func.jvp(lambda x: x.sin() * x, (T(l, X),), (T(l, X) * 0 + 1,)),
    'jvp two': lambda l: l.func.jvp(lambda x, y: (x * y).sum(0), (T(l, Y), T(l, Y) + 1), (T(l, Y), T(l, Y))),
    'jvp aux': lambda l: l.func.jvp(lambda x: (x.sin(), x.cos()), (T(l, X),), (T(l, X),), has_aux=True),
    'jvp primals': lambda l: l.func.jvp(lambda x: x * 2, T(l, X), T(l, X)),
    'jvp struct': lambda l: l.func.jvp(lambda x: x * 2, (T(l, X),), (T(l, X), T(l, X))),
    'jvp size': lambda l: l.func.jvp(lambda x: x * 2, (T(l, X),), (l.ones(2, dtype=l.float64),)),
    'jacrev': lambda l: l.func.jacrev(lambda x: x.sin().outer(x))(T(l, X)),
    'jacrev argnums': lambda l: l.func.jacrev(lambda x, y: x * y.sum(0), argnums=(0, 1))(T(l, X), T(l, Y)),
    'jacrev dict out': lambda l: l.func.jacrev(lambda x: {"a": x.sin(), "b": x.sum()})(T(l, X)),
    'jacrev aux': lambda l: l.func.jacrev(lambda x: (x.sin(), x.cos()), has_aux=True)(T(l, X)),
    'jacfwd': lambda l: l.func.jacfwd(lambda x: x.sin().outer(x))(T(l, X)),
    'jacfwd argnums': lambda l: l.func.jacfwd(lambda x, y: x * y.sum(0), argnums=(0, 1))(T(l, X), T(l, Y)),
    'hessian': lambda l: l.func.hessian(lambda x: (x.sin() * x.prod()).sum())(T(l, X)),
    'hessian argnums':
        lambda l: l.func.hessian(lambda x, y: (x.sin() * y.sum(0)).sum(), argnums=(0, 1))(T(l, X), T(l, Y)),
    'jacrev chunk': lambda l: l.func.jacrev(lambda x: x, chunk_size=0)(T(l, X)),
    'vmap': lambda l: l.func.vmap(lambda x: x.sum())(T(l, Y)),
    'vmap in_dims': lambda l: l.func.vmap(lambda x, y: x * y, in_dims=(1, None))(T(l, Y), T(l, X[:2])),
    'vmap out_dims': lambda l: l.func.vmap(lambda x: x.outer(x), out_dims=1)(T(l, Y)),
    'vmap tuple out': lambda l: l.func.vmap(lambda x: (x.sum(), x * 2), out_dims=(0, 1))(T(l, Y)),
    'vmap dict in':
        lambda l: l.func.vmap(lambda d: d["a"] + d["b"], in_dims=({"a": 0, "b": None},))({"a": T(l, Y), "b": T(l, X)}),
    'vmap nested': lambda l: l.func.vmap(l.func.vmap(lambda x: x * 2))(T(l, Y)),
    'vmap grad': lambda l: l.func.vmap(l.func.grad(lambda x: (x ** 3).sum()))(T(l, Y)),
    'vmap sizes': lambda l: l.func.vmap(lambda x, y: x + y)(l.randn(2, 3), l.randn(3, 3)),
    'vmap float': lambda l: l.func.vmap(lambda x: x)(3.0),
    'vmap structure': lambda l: l.func.vmap(lambda x: x, in_dims=(0, 0))(l.randn(2)),
    'vmap in_dim': lambda l: l.func.vmap(lambda x: x, in_dims=2)(l.randn(2)),
    'vmap out_dim': lambda l: l.func.vmap(lambda x: x, out_dims=2)(T(l, X)),
    'vmap int out': lambda l: l.func.vmap(lambda x: 3)(T(l, X)),
    'vmap chunk': lambda l: l.func.vmap(lambda x: x, chunk_size=0)(T(l, X)),
    'vmap chunk ok': lambda l: l.func.vmap(lambda x: x * 2, chunk_size=1)(T(l, Y)),
    'vmap kwargs': lambda l: l.func.vmap(lambda x, scale=1: x * scale)(T(l, Y), scale=3),
    'vmap None out': lambda l: l.func.vmap(lambda x: (x * 2, 5), out_dims=(0, None))(T(l, Y)),
    'torch.vmap': lambda l: l.vmap(lambda x: x.sum())(T(l, Y)),
    'grad leaf requires':
        lambda l: _closure_over_a_leaf(l),
    'functional_call': _functional_call_case,
    'fc strict':
        lambda l: l.func.functional_call(l.nn.Linear(3, 2), {"weight": l.zeros(2, 3), "nope": l.zeros(1)},
                                         (l.zeros(3),), strict=True),
    'fc repeated':
        lambda l: l.func.functional_call(l.nn.Linear(3, 2), ({"weight": l.zeros(2, 3)}, {"weight": l.zeros(2, 3)}),
                                         (l.zeros(3),)),
    'fc bad': lambda l: l.func.functional_call(l.nn.Linear(3, 2), 3, (l.zeros(3),)),}


def _outcome(fn, lib):
    try:
        return fn(lib)
    except Exception as e:
        return (type(e).__name__, str(e))


@pytest.mark.parametrize("name", list(CASES))
def test_func_matches_torch(name):
    t, g = _outcome(CASES[name], torch), _outcome(CASES[name], gt)
    t_leaves, t_spec = torch.utils._pytree.tree_flatten(t)
    g_leaves, g_spec = _pytree.tree_flatten(g)
    assert repr(g_spec) == repr(t_spec), (g, t)
    for a, b in zip(t_leaves, g_leaves):
        if isinstance(a, torch.Tensor):
            assert isinstance(b, gt.Tensor) and tuple(b.shape) == tuple(a.shape), (b, a)
            assert b.requires_grad == a.requires_grad, name
            np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-10, atol=1e-12)
        else:
            assert b == a


def test_stateless_functional_call_warns_and_restores_the_module():
    m = gt.nn.Linear(3, 2)
    weight = m.weight
    with pytest.warns(FutureWarning, match="Please use `torch.func.functional_call` instead"):
        out = gt.nn.utils.stateless.functional_call(m, {"weight": gt.zeros(2, 3), "bias": gt.ones(2)}, gt.ones(3))
    assert out.tolist() == [1.0, 1.0] and m.weight is weight


def test_functional_call_ties_weights_and_restores_on_error():
    class Tied(gt.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = gt.nn.Linear(2, 2, bias=False)
            self.b = gt.nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    m = Tied()
    out = gt.func.functional_call(m, {"a.weight": gt.eye(2) * 2}, (gt.ones(2),))
    assert out.tolist() == [4.0, 4.0]                       # b.weight, tied, took the value too
    with pytest.raises(ValueError, match=r"functional_call got multiple values for keys \['a.weight', 'b.weight'\]"):
        gt.func.functional_call(m, {"a.weight": gt.eye(2), "b.weight": gt.eye(2) * 3}, (gt.ones(2),))
    out = gt.func.functional_call(m, {"a.weight": gt.eye(2) * 2}, (gt.ones(2),), tie_weights=False)
    np.testing.assert_allclose(out.detach().numpy(), (m.b.weight @ gt.full((2,), 2.0)).detach().numpy())
    weight = m.a.weight
    with pytest.raises(RuntimeError):
        gt.func.functional_call(m, {"a.weight": gt.eye(3)}, (gt.ones(2),))
    assert m.a.weight is weight and m.b.weight is weight


def test_per_sample_gradients_with_vmap_grad_and_functional_call():
    """The torch.func tutorial's per-sample gradients: vmap over grad of a functional_call."""
    results = []
    for lib in (torch, gt):
        model = lib.nn.Linear(3, 1).double()
        with lib.no_grad():
            model.weight.copy_(lib.tensor([[0.5, -1.0, 2.0]]))
            model.bias.fill_(0.1)
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, x, y):
            return (lib.func.functional_call(model, p, (x.unsqueeze(0),)) - y).pow(2).sum()

        xs, ys = lib.tensor(Y), lib.tensor([1.0, -1.0], dtype=lib.float64)
        grads = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, xs, ys)
        results.append({k: v.numpy() for k, v in grads.items()})
    for k in results[0]:
        np.testing.assert_allclose(results[1][k], results[0][k], rtol=1e-12)
