"""Each op on the dispatch seam, alone, compiled: the generated forward and backward give eager
glasstorch's values and gradients exactly, and torch's to rounding (float64)."""
import numpy as np
import pytest
import torch

import glasstorch as gt
from glasstorch.ops import pointwise

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
def test_linalg_reduction_and_shape_ops_compiled(name):
    fn, shapes = _SHAPED[name]
    _check(fn, _data(*shapes))
