"""Each op on the dispatch seam, alone, compiled: the generated forward and backward give eager
glasstorch's values and gradients exactly, and torch's to rounding (float64)."""
import numpy as np
import pytest
import torch

import glasstorch as gt
from glasstorch.ops import pointwise
from test_compile import eager_weight_grads  # noqa: F401  (a fixture: eager's bits)

# sgn: torch's gradient is a ZeroTensor it cannot hand to NumPy; bitwise_not: integers only
_UNARY = [row[0] for row in pointwise._UNARY if hasattr(torch, row[0]) and row[0] not in ("sgn", "bitwise_not")]


def _run_compiled(fn, arrays):
    """fn compiled: the first call captures, the second runs the generated code."""
    compiled = gt.compile(fn)
    compiled(*[gt.tensor(a, requires_grad=True) for a in arrays])
    inputs = [gt.tensor(a, requires_grad=True) for a in arrays]
    out = compiled(*inputs)
    assert compiled.cache[0].graph is not None, compiled.cache[0].breaks
    return out, inputs


def _check(fn, arrays, torch_fn=None):
    out, inputs = _run_compiled(fn, arrays)
    differentiable = out.requires_grad
    if differentiable:
        assert type(out.grad_fn).__name__ == "CompiledFunctionBackward"
        out.backward(gt.ones_like(out))
    eager_inputs = [gt.tensor(a, requires_grad=True) for a in arrays]
    eager = fn(*eager_inputs)
    np.testing.assert_array_equal(out.detach().numpy(), eager.detach().numpy())
    assert out.dtype == eager.dtype and tuple(out.shape) == tuple(eager.shape)
    if differentiable:
        eager.backward(gt.ones_like(eager))
        for a, b in zip(inputs, eager_inputs):
            np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())
    t_inputs = [torch.tensor(a, requires_grad=True) for a in arrays]
    t_out = (torch_fn or fn)(*t_inputs)
    np.testing.assert_allclose(out.detach().numpy(), t_out.detach().numpy(), rtol=1e-10, atol=1e-12)
    if differentiable:
        t_out.backward(torch.ones_like(t_out))
        for a, b in zip(inputs, t_inputs):
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-12)


def _data(*shapes, low=0.1, high=0.9, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(low, high, s) for s in shapes]


@pytest.mark.parametrize("name", _UNARY)
def test_unary_op_compiled(name):
    try:
        out = getattr(gt.full((1,), 0.5, requires_grad=True), name)()
        if out.requires_grad:
            out.sum().backward()
    except RuntimeError as e:          # the ops that need an optional package absent here
        if "pip install" in str(e):
            pytest.skip(str(e))
        raise
    _check(lambda t: getattr(t, name)() * 1.5 if name != "round" else getattr(t, name)() + t,
           _data((3, 4)), None)


_BINARY = {
    "add": lambda a, b: a + b * 2, "sub": lambda a, b: a - b, "rsub": lambda a, b: 1.5 - a * b,
    "mul": lambda a, b: a * b, "div": lambda a, b: a / b, "add_alpha": lambda a, b: a.add(b, alpha=3),
}


@pytest.mark.parametrize("name", sorted(_BINARY))
def test_binary_op_compiled_with_broadcasting(name):
    _check(_BINARY[name], _data((2, 3, 4), (3, 1)))


_SHAPED = {
    "mm": (lambda a, b: a.mm(b), ((3, 4), (4, 5))),
    "bmm": (lambda a, b: a.bmm(b), ((2, 3, 4), (2, 4, 5))),
    "mv": (lambda a, b: a.mv(b), ((3, 4), (4,))),
    "dot": (lambda a, b: a.dot(b), ((4,), (4,))),
    "addmm": (lambda a, b, c: gt.addmm(a, b, c, beta=0.5, alpha=2.0) if isinstance(a, gt.Tensor)
              else torch.addmm(a, b, c, beta=0.5, alpha=2.0), ((5,), (3, 4), (4, 5))),
    "baddbmm": (lambda a, b, c: (gt if isinstance(a, gt.Tensor) else torch).baddbmm(a, b, c), ((2, 3, 5), (2, 3, 4),
                                                                                                 (2, 4, 5))),
    "sum": (lambda a: a.sum(), ((3, 4),)),
    "sum_dim": (lambda a: a.sum(1, keepdim=True) * a, ((3, 4),)),
    "t": (lambda a: a.t() * 2, ((3, 4),)),
    "transpose": (lambda a: a.transpose(0, 2) * 2, ((2, 3, 4),)),
    "expand": (lambda a: a.expand(3, 4, 5) * 2, ((4, 1),)),
}


@pytest.mark.parametrize("name", sorted(_SHAPED))
def test_linalg_reduction_and_shape_ops_compiled(name, eager_weight_grads):
    fn, shapes = _SHAPED[name]
    _check(fn, _data(*shapes))


# Ops with several outputs are captured as one node and a getitem per output (not kept whole as an eager
# island): their backward gets each output's gradient, None where none flows, as eager gives it.
_SEVERAL = {
    "max.dim, values": (lambda L, x, w, b: x.max(dim=1)[0] * 2, ["max.dim"]),
    "max.dim, both": (lambda L, x, w, b: x.max(dim=1)[0] + x.max(dim=1)[1].to(x.dtype), ["max.dim"]),
    "var_mean, mean only": (lambda L, x, w, b: L.var_mean(x, dim=1)[1] * 3, ["var_mean.correction"]),
    "var_mean, both": (lambda L, x, w, b: L.var_mean(x, dim=1)[0] * L.var_mean(x, dim=1)[1], ["var_mean.correction"]),
    "sort": (lambda L, x, w, b: x.sort(dim=1)[0] * w, ["sort"]),
    "topk": (lambda L, x, w, b: x.topk(2, dim=1)[0].exp(), ["topk.default"]),
    "cummax": (lambda L, x, w, b: x.cummax(dim=1)[0] * w, ["cummax.default"]),
    "layer_norm": (lambda L, x, w, b: L.nn.functional.layer_norm(x, (5,), w[0], b), ["native_layer_norm"]),
    "max_pool2d": (lambda L, x, w, b: L.nn.functional.max_pool2d(x.reshape(1, 1, 4, 5), 2), ["max_pool2d_with_indices"]),
    "cross_entropy": (lambda L, x, w, b: L.nn.functional.cross_entropy(x, (b[:4].abs() * 10).long() % 5),
                      ["_log_softmax", "nll_loss_forward"]),
}


@pytest.mark.parametrize("name", list(_SEVERAL))
def test_op_with_several_outputs_compiled(name):
    fn, ops = _SEVERAL[name]
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal((4, 5)), rng.standard_normal((4, 5)), rng.standard_normal(5)]
    compiled = gt.compile(lambda x, w, b: fn(gt, x, w, b))
    compiled(*[gt.tensor(a, requires_grad=True) for a in arrays])              # the capture
    runs = []
    for f in (compiled, lambda x, w, b: fn(gt, x, w, b)):
        inputs = [gt.tensor(a, requires_grad=True) for a in arrays]
        out = f(*inputs)
        out.backward(gt.ones_like(out))
        runs.append((out, [None if t.grad is None else t.grad.numpy() for t in inputs]))
    (out, grads), (eager, eager_grads) = runs
    assert out.grad_fn.name() == "CompiledFunctionBackward"
    code = compiled.code
    assert "_island_" not in code and all(f"aten.{op}" in code for op in ops), code
    np.testing.assert_array_equal(out.detach().numpy(), eager.detach().numpy())
    for g, e in zip(grads, eager_grads):
        assert (g is None and e is None) or np.array_equal(g, e)
    t_inputs = [torch.tensor(a, requires_grad=True) for a in arrays]
    t_out = fn(torch, *t_inputs)
    t_out.backward(torch.ones_like(t_out))
    np.testing.assert_allclose(out.detach().numpy(), t_out.detach().numpy(), rtol=1e-10, atol=1e-12)
    for g, t in zip(grads, t_inputs):
        assert (g is None) == (t.grad is None)
        if g is not None:
            np.testing.assert_allclose(g, t.grad.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("which", [0, 1])
def test_op_with_several_outputs_returned_one_gradient_flows(which):
    # both outputs leave the graph; backward reaches one: autograd hands the compiled backward None for
    # the other, which the formula receives as eager's does
    x_data = np.random.default_rng(2).standard_normal((3, 4))
    compiled = gt.compile(lambda x: gt.var_mean(x, dim=1))
    compiled(gt.tensor(x_data, requires_grad=True))
    grads = []
    for f in (compiled, lambda x: gt.var_mean(x, dim=1)):
        x = gt.tensor(x_data, requires_grad=True)
        outs = f(x)
        (outs[which] * 2).sum().backward()
        grads.append(x.grad.numpy())
    assert compiled(gt.tensor(x_data, requires_grad=True))[0].grad_fn.name() == "CompiledFunctionBackward"
    np.testing.assert_array_equal(grads[0], grads[1])
