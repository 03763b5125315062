"""Views and in-place writes exactly as torch: one regression test per defect of issue 16.

Each case is a small program written once for both libraries (``lib`` is torch or glasstorch); it
returns what it observed -- values, gradients, node names, ``_version``, ``is_contiguous`` -- or
the error it raised, and the two must agree (:func:`same`).
"""
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import glasstorch as gt  # noqa: E402


def _obs(x):
    """A comparable form of what a case returned."""
    if isinstance(x, (torch.Tensor, gt.Tensor)):
        return ("tensor", str(x.dtype), tuple(x.shape), np.array(x.detach().numpy(), copy=True))
    if isinstance(x, (tuple, list)):
        return tuple(_obs(v) for v in x)
    if isinstance(x, dict):
        return {k: _obs(v) for k, v in x.items()}
    if isinstance(x, (torch.dtype, gt.dtype)):
        return str(x)
    return x


def _run(case, lib):
    try:
        return _obs(case(lib))
    except Exception as e:
        return ("raised", type(e).__name__, str(e).split("\n")[0])


def _equal(a, b):
    if isinstance(a, tuple) and a and a[0] == "tensor" and isinstance(b, tuple) and b and b[0] == "tensor":
        return a[:3] == b[:3] and np.allclose(a[3], b[3], rtol=1e-6, atol=1e-9, equal_nan=True)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return a == b


def same(case):
    """Run ``case`` with torch and glasstorch; they must observe the same things (an error: the
    same type and the same first line, glasstorch's additions on later lines aside)."""
    expected, actual = _run(case, torch), _run(case, gt)
    assert _equal(actual, expected), f"\nglasstorch: {actual}\ntorch:      {expected}"
    return expected


def names(fn, depth=4):
    """The graph below ``fn`` as nested (name, [children]) -- torch's node names."""
    if fn is None or depth == 0:
        return None
    return (fn.name(), [names(n, depth - 1) for n, _ in fn.next_functions])


def _leaf(lib, values, **kw):
    return lib.tensor(values, dtype=lib.float64, **kw)


# ---- 1. a write through a view of a tensor that does not require grad is recorded --------------------
WRITES_THROUGH_VIEWS = {
    "chained index": lambda out, w: out[0].__setitem__(1, w.sum()),
    "rnn idiom hs[t][:] = h": lambda out, w: out[1].__setitem__(slice(None), w * 2),
    "copy_ into a row": lambda out, w: out[1].copy_(w),
    "view(-1)[k] = v": lambda out, w: out.view(-1).__setitem__(3, w.sum()),
    "t()[0] = v": lambda out, w: out.t().__setitem__(0, w),
    "out[0, 1] = v": lambda out, w: out.__setitem__((0, 1), w.sum()),
}


@pytest.mark.parametrize("write", list(WRITES_THROUGH_VIEWS), ids=list(WRITES_THROUGH_VIEWS))
def test_write_through_a_view_of_a_buffer_reaches_the_gradient(write):
    def case(lib):
        w = _leaf(lib, [2.0, 3.0], requires_grad=True)
        out = lib.zeros(2, 2, dtype=lib.float64)
        WRITES_THROUGH_VIEWS[write](out, w)
        ((out * 3).sum() + w.sum()).backward()
        return {"grad": w.grad, "out": out, "graph": names(out.grad_fn), "version": out._version,
                "requires_grad": out.requires_grad}
    same(case)


def test_the_issue_example_gives_torch_gradient_4():
    def case(lib):
        w = _leaf(lib, [1.0, 2.0], requires_grad=True)
        out = lib.zeros(2, 2, dtype=lib.float64)
        out[0][1] = w.sum()
        ((out * 3).sum() + w.sum()).backward()
        return w.grad
    assert same(case)[3].tolist() == [4.0, 4.0]


def test_a_no_grad_view_of_a_tensor_requiring_grad():
    # it requires grad (through its base) but has no history: no gradient flows back through it,
    # so an op that uses it keeps nothing for it (modifying the partner later is no error)
    def case(lib):
        x = _leaf(lib, [1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        with lib.no_grad():
            v = y[1:]
        z = lib.ones(2, dtype=lib.float64)
        w = _leaf(lib, [4.0, 5.0], requires_grad=True)
        out = v * z + (v @ w) * w
        z.add_(1)
        out.sum().backward()
        return v.requires_grad, v.grad_fn, out.requires_grad, x.grad, w.grad
    same(case)


def test_a_view_taken_before_the_write_follows_its_base():
    def case(lib):
        w = _leaf(lib, [2.0, 3.0], requires_grad=True)
        out = lib.zeros(3, 2, dtype=lib.float64)
        row = out[1]                      # made while out needs no gradient
        out[1] = w * 5
        (row * 2).sum().backward()        # row now reads w's values: the gradient reaches w
        return {"grad": w.grad, "row_requires_grad": row.requires_grad, "row_fn": row.grad_fn.name()}
    same(case)


# ---- 2. in-place ops on the 0-d result of integer indexing write the base ---------------------------
ZERO_D_WRITES = {
    "x[2].mul_(10)": lambda x: x[2].mul_(10),
    "x.select(0, 1).mul_(10)": lambda x: x.select(0, 1).mul_(10),
    "x[1].fill_(42)": lambda x: x[1].fill_(42.0),
    "x[0].add_(x[3])": lambda x: x[0].add_(x[3]),
}


@pytest.mark.parametrize("write", list(ZERO_D_WRITES), ids=list(ZERO_D_WRITES))
def test_in_place_on_a_0d_view_writes_the_base(write):
    def case(lib):
        x = lib.arange(4.0)
        ZERO_D_WRITES[write](x)
        return x, x._version
    same(case)


def test_bias_fill_under_no_grad_and_a_stale_0d_view():
    def case(lib):
        m = lib.nn.Linear(2, 3)
        with lib.no_grad():
            m.bias[0].fill_(42.0)
        y = lib.arange(4.0)
        v = y[1]
        y.add_(100)
        return m.bias[0].item(), v, m.bias._version
    same(case)


def test_0d_view_in_place_when_the_base_requires_grad():
    def case(lib):
        x = _leaf(lib, [1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        y[1].mul_(3)
        y.sum().backward()
        return {"grad": x.grad, "graph": names(y.grad_fn), "y": y, "version": y._version}
    same(case)


# ---- 3. a view taken before fill_/zero_/copy_/setitem on its base gets the new history -------------
BASE_WRITES = {
    "zero_": lambda y, s: y.zero_(),
    "fill_": lambda y, s: y.fill_(2.0),
    "fill_ tensor": lambda y, s: y.fill_(s.sum()),
    "copy_": lambda y, s: y.copy_(s),
    "setitem": lambda y, s: y.__setitem__(slice(0, 2), s[:2]),
    "mul_": lambda y, s: y.mul_(s),
    "view copy_": lambda y, s: y[1:].copy_(s[1:]),
    "index_put": lambda y, s: y.__setitem__(_idx(y), s[:2]),
}
VIEWS = {"y[1:]": lambda y: y[1:], "y[1]": lambda y: y[1], "y.view(3)": lambda y: y.view(3),
         "y[None]": lambda y: y[None], "y.expand(2, 3)": lambda y: y.expand(2, 3)}


def _idx(y):
    return (torch if isinstance(y, torch.Tensor) else gt).tensor([0, 2])


@pytest.mark.parametrize("view", list(VIEWS), ids=list(VIEWS))
@pytest.mark.parametrize("write", list(BASE_WRITES), ids=list(BASE_WRITES))
def test_a_view_made_before_a_write_to_its_base(write, view):
    def case(lib):
        x = _leaf(lib, [1.0, 2.0, 3.0], requires_grad=True)
        s = _leaf(lib, [5.0, 6.0, 7.0], requires_grad=True)
        y = x * 2
        v = VIEWS[view](y)
        BASE_WRITES[write](y, s)
        (v * _leaf(lib, 1.5)).sum().backward()
        return {"x": x.grad, "s": s.grad, "v": v, "fn": v.grad_fn.name(), "version": v._version}
    same(case)


def test_the_issue_example_zero_():
    def case(lib):
        x = _leaf(lib, [1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        v = y[1:]
        y.zero_()
        v.sum().backward()
        return x.grad
    assert same(case)[3].tolist() == [0.0, 0.0, 0.0]


# ---- 4. diagonal() is a writable view ---------------------------------------------------------------
def test_diagonal_jitter_and_fill():
    def case(lib):
        K = lib.eye(3, dtype=lib.float64) * 2
        K.diagonal().add_(1e-3)
        A = lib.zeros(3, 3, dtype=lib.float64, requires_grad=True) * 1
        v = _leaf(lib, 4.0, requires_grad=True)
        A.diagonal().fill_(v)
        A.diagonal(1).mul_(5)
        (A * lib.arange(9.0, dtype=lib.float64).view(3, 3)).sum().backward()
        return {"K": K, "A": A, "v": v.grad, "graph": names(A.grad_fn, 3)}
    same(case)


@pytest.mark.parametrize("offset,dim1,dim2", [(-1, 1, 0), (1, 1, 0), (1, 0, 1), (-1, 0, 2), (0, 2, 1)])
def test_diagonal_gradient_with_any_dims(offset, dim1, dim2):
    # (found by the fuzzer: with dim1 > dim2 the gradient went to the mirrored diagonal)
    def case(lib):
        x = lib.arange(24.0, dtype=lib.float64).reshape(2, 3, 4)[..., :3].contiguous()
        x = (x if dim2 == 2 or dim1 == 2 else x[0]).requires_grad_()
        d = x.diagonal(offset, dim1, dim2)
        (d * lib.arange(1.0, 1.0 + d.numel(), dtype=lib.float64).reshape(d.shape)).sum().backward()
        return x.grad
    same(case)


# ---- 6. valid code that raised ---------------------------------------------------------------------
VALID = {
    "cat with a legacy empty": lambda lib: _cat_empty(lib),
    "softmax of an empty tensor": lambda lib: (lib.softmax(lib.ones(0, 3), 1), lib.log_softmax(lib.ones(2, 0), 1)),
    "LayerNorm backward, unbatched 1-D": lambda lib: _layernorm_1d(lib),
    "max(1).values.norm(0).backward()": lambda lib: _norm0(lib),
}


def _cat_empty(lib):
    x = lib.ones(2, 3, requires_grad=True)
    y = lib.cat([lib.tensor([]), x * 2, lib.tensor([])])
    y.sum().backward()
    return y, x.grad, lib.cat([lib.tensor([]), x], 1).shape, lib.cat([lib.tensor([]), lib.ones(2, dtype=lib.int64)]).dtype


def _layernorm_1d(lib):
    lib.manual_seed(0)
    ln = lib.nn.LayerNorm(4).double()
    v = lib.arange(4.0, dtype=lib.float64, requires_grad=True)
    (ln(v) * lib.tensor([1.0, -2.0, 3.0, 0.5], dtype=lib.float64)).sum().backward()
    return v.grad, ln.weight.grad, ln.bias.grad


def _norm0(lib):
    x = lib.arange(12.0, requires_grad=True)
    x.reshape(3, 4).max(1).values.norm(0).backward()
    return x.grad  # (None: no gradient flows through a count of nonzeros)


@pytest.mark.parametrize("case", list(VALID), ids=list(VALID))
def test_valid_code_runs(case):
    result = same(VALID[case])
    assert not (isinstance(result, tuple) and result and result[0] == "raised")


# ---- 7. contracts of custom Functions and hooks ----------------------------------------------------------
def _functions(lib):
    class Few(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g

    class Shape(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g.sum(0)

    class Broadcast(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g[:1]  # expands back to a's shape: summed, as torch does

    class Dtype(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g.double()

    return Few, Shape, Broadcast, Dtype


CONTRACTS = {
    "too few gradients": lambda lib, F: F[0].apply(lib.ones(2, requires_grad=True), lib.ones(2)).sum().backward(),
    "wrong shape": lambda lib, F: F[1].apply(lib.ones(2, 3, requires_grad=True)).sum().backward(),
    "broadcastable": lambda lib, F: _grad_of(lib, lambda a: F[2].apply(a), (2, 3)),
    "dtype cast": lambda lib, F: _grad_of(lib, lambda a: F[3].apply(a), (2,)),
    "hook changes size": lambda lib, F: _hooked(lib, lambda g: g.sum()),
    "hook changes type": lambda lib, F: _hooked(lib, lambda g: g.double()),
    "leaf hook changes size": lambda lib, F: _leaf_hooked(lib, lambda g: g[:2]),
}


def _grad_of(lib, f, shape):
    a = lib.ones(*shape, requires_grad=True)
    f(a).sum().backward()
    return a.grad


def _hooked(lib, hook):
    x = lib.ones(3, requires_grad=True)
    y = x * 2
    y.register_hook(hook)
    y.sum().backward()
    return x.grad


def _leaf_hooked(lib, hook):
    x = lib.ones(3, requires_grad=True)
    x.register_hook(hook)
    (x * 2).sum().backward()
    return x.grad


@pytest.mark.parametrize("case", list(CONTRACTS), ids=list(CONTRACTS))
def test_function_and_hook_contracts(case):
    same(lambda lib: CONTRACTS[case](lib, _functions(lib)))


# ---- 8. the output of an in-place activation modified again -----------------------------------------------
@pytest.mark.parametrize("op", ["tanh_", "relu_", "exp_", "sigmoid_"])
def test_modifying_an_in_place_activation_output_again_is_caught(op):
    def case(lib):
        x = lib.ones(3, requires_grad=True)
        y = x * 0.5
        getattr(y, op)()
        y.mul_(2)
        y.sum().backward()
        return x.grad
    assert same(case)[0] == "raised"


def test_relu_inplace_functional_then_modified():
    def case(lib):
        x = _leaf(lib, [-1.0, 2.0], requires_grad=True)
        y = lib.nn.functional.relu(x * 1, inplace=True)
        y.add_(1)
        y.sum().backward()
        return x.grad
    same(case)


# ---- 9. retain_grad then in-place; second-order zeros; atan2(0, 0) --------------------------------------
def test_retained_grad_follows_the_in_place_op():
    def case(lib):
        x = _leaf(lib, [1.0, 2.0], requires_grad=True)
        y = x * 2
        y.retain_grad()
        y.mul_(3)
        y.sum().backward()
        v = (x * 1)
        row = v[1:]
        row.retain_grad()
        v.mul_(2)
        (row * 4).sum().backward()
        return y.grad, x.grad, row.grad
    same(case)


@pytest.mark.parametrize("op", ["relu", "leaky_relu", "hardtanh", "clamp", "max_pool", "threshold", "relu6",
                                "softshrink", "hardshrink"])
def test_second_order_through_piecewise_linear_ops_is_zero(op):
    def case(lib):
        F = lib.nn.functional
        f = {"relu": lib.relu, "leaky_relu": lambda t: F.leaky_relu(t, 0.1), "hardtanh": F.hardtanh,
             "clamp": lambda t: t.clamp(-0.5, 0.5), "max_pool": lambda t: F.max_pool2d(t[None], 2),
             "threshold": lambda t: F.threshold(t, 0.1, 0.0), "relu6": F.relu6, "softshrink": F.softshrink,
             "hardshrink": F.hardshrink}[op]
        x = lib.from_numpy(np.random.default_rng(0).uniform(-2, 2, (1, 4, 4))).requires_grad_()
        g, = lib.autograd.grad((f(x) ** 1).sum(), x, create_graph=True)
        gg = lib.autograd.grad(g.sum(), x, allow_unused=True)[0] if g.requires_grad else "no graph"
        return g, g.requires_grad, gg, None if g.grad_fn is None else g.grad_fn.name()
    same(case)


def test_atan2_gradient_at_the_origin_is_zero():
    def case(lib):
        a = lib.zeros(2, requires_grad=True)
        b = lib.tensor([0.0, 1.0], requires_grad=True)
        lib.atan2(a, b).sum().backward()
        return a.grad, b.grad
    same(case)


# ---- 10. metadata: is_contiguous, node names, no-op slices, _version ---------------------------------------
METADATA = {
    "clone keeps the layout": lambda lib: _base(lib).t().clone().is_contiguous(),
    "contiguous() is row-major": lambda lib: _base(lib).t().contiguous().is_contiguous(),
    "exp of a transpose": lambda lib: _base(lib).t().exp().is_contiguous(),
    "sum(keepdim) of a permute": lambda lib: lib.ones(4, 3, 2).permute(2, 1, 0).sum(1, keepdim=True).is_contiguous(),
    "cat of transposes": lambda lib: lib.cat([_base(lib).t(), _base(lib).t()]).is_contiguous(),
    "dtype conversion keeps the layout": lambda lib: _base(lib).t().to(lib.float32).stride(),
    "dtype conversion of an expand is row-major": lambda lib: _base(lib)[:1].expand(3, 3).double().stride(),
    "where follows its operands' layout": lambda lib: lib.where(_base(lib).t() > 1, _base(lib).t().contiguous(), _base(lib).t()).stride(),
    "stack of transposes is row-major": lambda lib: lib.stack([_base(lib).t(), _base(lib).t()]).stride(),
    "view after clone of a transpose raises": lambda lib: _base(lib).t().clone().view(-1),
    "x[:] = 0-d: FillBackward3": lambda lib: _set(lib, slice(None), lambda w: w.sum()),
    "x[...] = same shape: CopyBackwards": lambda lib: _set(lib, Ellipsis, lambda w: w * 1),
    "x[0] = value: CopySlices": lambda lib: _set(lib, 0, lambda w: w.sum()),
    "x[idx] = value: IndexPutBackward0": lambda lib: _set(lib, [0, 2], lambda w: w.sum()),
    "x[0:3, :] is an alias": lambda lib: _rg(lib)[0:3, :].grad_fn.name(),
    "x[:] is a slice": lambda lib: _rg(lib)[:].grad_fn.name(),
    "x[..., 1] is a select": lambda lib: _rg(lib)[..., 1].grad_fn.name(),
    "regenerated view: AsStridedBackward0": lambda lib: _regenerated(lib),
    "versions": lambda lib: _versions(lib),
    "in-place view ops": lambda lib: _inplace_views(lib),
    "1-D @ 2-D squeezes in place": lambda lib: _mv(lib),
}


def _base(lib):
    return lib.arange(6.0).reshape(2, 3)


def _rg(lib):
    return lib.ones(3, 2, requires_grad=True) * 1


def _set(lib, index, value):
    w = lib.ones(3, requires_grad=True)
    y = lib.zeros(3, 3) if index in (0,) else lib.zeros(3)
    y[index] = value(w)
    return names(y.grad_fn, 3), y._version


def _regenerated(lib):
    y = _rg(lib)
    v = y[1]
    with lib.no_grad():
        y.mul_(2)
    return v.grad_fn.name(), names(v.grad_fn, 3), v._version


def _versions(lib):
    x = lib.zeros(2, 3)
    out = [x._version]
    x[0] = 1.0
    out.append(x._version)
    x[0][1] = 2.0
    out.append(x._version)
    x[lib.tensor([0, 1])] = 3.0
    out.append(x._version)
    x.view(-1).add_(1)
    out.append(x._version)
    x[x > 3] = 0.0
    out.append(x._version)
    return out


def _inplace_views(lib):
    y = lib.ones(2, 1, requires_grad=True) * 1
    out = []
    for op in (lambda t: t.unsqueeze_(0), lambda t: t.squeeze_(), lambda t: t.t_(), lambda t: t.transpose_(0, 1)):
        op(y)
        out.append((y.grad_fn.name(), y._version, tuple(y.shape)))
    return out


def _mv(lib):
    v = lib.ones(3, requires_grad=True)
    r = v @ lib.ones(3, 2)
    return r.grad_fn.name(), r._version


@pytest.mark.parametrize("case", list(METADATA), ids=list(METADATA))
def test_metadata_as_torch(case):
    same(METADATA[case])


# ---- 11. a BatchNorm run twice before one backward ----------------------------------------------------------
def test_batchnorm_twice_before_one_backward():
    def case(lib):
        lib.manual_seed(0)
        bn = lib.nn.BatchNorm1d(4).double()
        x1 = lib.arange(12.0, dtype=lib.float64).reshape(3, 4)
        x2 = x1.flip(0) ** 2
        (bn(x1).sum() + (bn(x2) ** 2).sum()).backward()
        return bn.weight.grad, bn.bias.grad, bn.running_mean, bn.running_var, bn.running_mean._version
    same(case)


# ---- 12. smaller fidelity gaps -----------------------------------------------------------------------------
def test_str_of_a_parameter_has_torch_header():
    def case(lib):
        p = lib.nn.Parameter(lib.ones(2))
        return str(p), repr(p)
    same(case)


def test_non_dynamically_quantizable_linear_lives_in_nn_modules_linear():
    from glasstorch.nn.modules.linear import NonDynamicallyQuantizableLinear
    assert NonDynamicallyQuantizableLinear.__module__ == "glasstorch.nn.modules.linear"
    assert type(gt.nn.MultiheadAttention(4, 2).out_proj) is NonDynamicallyQuantizableLinear
    assert issubclass(NonDynamicallyQuantizableLinear, gt.nn.Linear)


def test_torch_pickled_multihead_attention_loads(tmp_path):
    m = torch.nn.MultiheadAttention(4, 2)
    torch.save(m, tmp_path / "mha.pt")
    g = gt.load(tmp_path / "mha.pt", weights_only=False)
    assert type(g.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
    assert np.allclose(g.out_proj.weight.detach().numpy(), m.out_proj.weight.detach().numpy())


# ---- view and in-place errors, as torch words them ----------------------------------------------------------
ERRORS = {
    "view of a leaf": lambda lib: lib.ones(3, requires_grad=True)[1:].mul_(2),
    "leaf": lambda lib: lib.ones(3, requires_grad=True).mul_(2),
    "no_grad view modified with grad": lambda lib: _no_grad_view(lib).mul_(2),
    "no_grad view, base modified": lambda lib: _no_grad_view_indirect(lib),
    "multi-output view": lambda lib: (lib.ones(4, 2, requires_grad=True) * 1).unbind(0)[1].mul_(2),
    "split view, base modified": lambda lib: _split_indirect(lib),
    "custom Function view": lambda lib: _custom_view(lib),
    "expanded target": lambda lib: lib.ones(1, 3).expand(2, 3).mul_(2),
    "partial overlap": lambda lib: _shifted(lib),
    "index_put of itself": lambda lib: _index_self(lib),
    "detach_ of a view": lambda lib: (lib.ones(3, requires_grad=True) * 1)[1:].detach_(),
    "saved tensor detached in place": lambda lib: _detached_saved(lib),
    "expanded view in backward": lambda lib: _expanded_backward(lib),
}


def _no_grad_view(lib):
    y = lib.ones(3, requires_grad=True) * 1
    with lib.no_grad():
        return y[1:]


def _no_grad_view_indirect(lib):
    out = lib.zeros(3)
    with lib.no_grad():
        v = out[:2]
    out[2:] = lib.ones(1, requires_grad=True)
    return (v * 2).sum()


def _split_indirect(lib):
    y = lib.ones(2, 1, requires_grad=True) * 1
    a, b = y.split(1)
    y.mul_(2)
    return a.grad_fn


def _custom_view(lib):
    class View(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a[0]

        @staticmethod
        def backward(ctx, g):
            return lib.ones(2, 3) * g

    return View.apply(lib.ones(2, 3, requires_grad=True) * 1).mul_(2)


def _shifted(lib):
    x = lib.arange(9.0)
    return x[1:].add_(x[:-1])


def _index_self(lib):
    x = lib.arange(3.0)
    x[lib.tensor([0, 1, 2])] = x
    return x


def _detached_saved(lib):
    x = lib.ones(2, requires_grad=True)
    y = x * 2
    z = y * y
    y.detach_()
    z.sum().backward()


def _expanded_backward(lib):
    v = lib.ones((), requires_grad=True).mean()
    e = v.expand(3)
    e.fill_(1.25)
    e.sum().backward()


@pytest.mark.parametrize("case", list(ERRORS), ids=list(ERRORS))
def test_errors_as_torch(case):
    assert same(ERRORS[case])[0] == "raised"


def test_glasstorch_error_adds_which_op_and_line():
    x = gt.ones(3, requires_grad=True)
    y = x.exp()
    y.add_(1)
    with pytest.raises(RuntimeError, match=re.escape("modified by an inplace operation")) as info:
        y.sum().backward()
    assert "add_()" in str(info.value) and "test_views_inplace.py" in str(info.value)


# ---- found by the long fuzzer (tools/fuzz_graphs.py) ----------------------------------------------------------
def test_a_leaf_detached_in_place_after_use_gets_no_gradient():
    # torch's AccumulateGrad drops the gradient of a leaf that no longer requires grad, before any
    # shape check: the leaf may have been reshaped in place since (seed 796135238985)
    def case(lib):
        w = lib.ones(2, 1, requires_grad=True)
        y = w.mean(0)
        w.detach_()
        w.unsqueeze_(2)
        y.sum().backward()
        return w.grad, tuple(w.shape), w.requires_grad
    assert same(case)[0] is None


def test_a_leaf_detached_then_written_with_a_history_refuses_its_old_gradient():
    # torch's AccumulateGrad: "leaf variable has been moved into the graph interior" (seed 796136976298)
    def case(lib):
        w = lib.ones(1, requires_grad=True)
        y = w.mean(0, keepdim=True)
        w.detach_()
        w += lib.ones(1, requires_grad=True)
        y.sum().backward()
    assert same(case)[0] == "raised"


UNSQUEEZE_STRIDES = {
    "x.diagonal()[None] of a 1x1": lambda lib: lib.zeros(1, 1).diagonal()[None].stride(),
    "unsqueeze at the end": lambda lib: lib.zeros(3, 3).diagonal().unsqueeze(1).stride(),
    "None in the middle": lambda lib: lib.zeros(2, 1, 3)[:, :, None].stride(),
    "unsqueeze of a transpose": lambda lib: lib.zeros(2, 3).t().unsqueeze(0).stride(),
}


@pytest.mark.parametrize("case", list(UNSQUEEZE_STRIDES), ids=list(UNSQUEEZE_STRIDES))
def test_unsqueeze_strides_as_torch(case):
    same(UNSQUEEZE_STRIDES[case])


def test_overlap_of_a_restrided_alias_is_refused_as_torch():
    # the same elements, but torch's strides differ ((1, 1) against (2, 2)): torch calls it a partial
    # overlap and refuses the copy (seed 796135272389)
    def case(lib):
        x = lib.zeros(1, 1)
        x[...] = x.diagonal()[None]
        return x
    assert same(case)[0] == "raised"


def _expanded_permuted(lib):
    return lib.zeros(4, 4, 4).expand(2, 4, 4, 4).permute(3, 2, 1, 0)


LAYOUTS = {  # element-wise results, copies and flips laid out as torch (is_contiguous decides view())
    "a comparison follows its operands": lambda lib: (lib.zeros(1, 2, 2).transpose(2, 1) > lib.zeros(1, 2, 2)).stride(),
    "where of a transposed mask": lambda lib: lib.where(lib.zeros(2, 3).t() > 0, lib.zeros(2, 3).t(), 2.0).stride(),
    "dims of size 1 reorder the others": lambda lib: (lib.zeros(1, 1, 2, 1) * lib.zeros(1, 1, 2).permute(2, 1, 0)).stride(),
    "flip of an expanded permute": lambda lib: _expanded_permuted(lib).flip((3,)).stride(),
    "clone of an expanded permute": lambda lib: _expanded_permuted(lib).clone().stride(),
    "dtype conversion of an expanded permute": lambda lib: _expanded_permuted(lib).double().stride(),
    "flip of a permute": lambda lib: lib.zeros(2, 3, 4).permute(2, 0, 1).flip(1).stride(),
}


@pytest.mark.parametrize("case", list(LAYOUTS), ids=list(LAYOUTS))
def test_layouts_as_torch(case):
    same(LAYOUTS[case])


@pytest.mark.parametrize("shape,dim", [((2, 1), 1), ((1,), None), ((), None), ((3,), None), ((2, 3), 1)])
def test_prod_gradient_with_zeros_as_torch(shape, dim):
    # along one element the gradient is the incoming one itself: it does not require grad in a double
    # backward (seed 796135242625); with more elements, the product of the others (exact with zeros)
    def case(lib):
        x = lib.zeros(shape, dtype=lib.float64)
        if x.numel() > 1:
            x = lib.arange(x.numel(), dtype=lib.float64).reshape(shape)
        x.requires_grad_()
        y = x.prod() if dim is None else x.prod(dim)
        g, = lib.autograd.grad(y.sum(), x, create_graph=True)
        g2 = lib.autograd.grad(g.sum(), x, allow_unused=True)[0] if g.requires_grad else None
        return g, g.requires_grad, g2
    same(case)


@pytest.mark.parametrize("shape", [(-1, 2), (-1, 3)])
def test_view_refuses_a_stale_no_grad_view_before_its_shape(shape):
    # torch's autograd takes the input's history before view's kernel runs (seed 796135263099)
    def case(lib):
        base = lib.zeros(2, 4)
        with lib.no_grad():
            v = base.expand((2, 2, 4))
        base.t()[2] = lib.ones((), requires_grad=True)
        return v.view(shape)
    assert same(case)[0] == "raised"


@pytest.mark.parametrize("op", ["unsqueeze_", "squeeze_"])
def test_retain_grad_stays_with_the_history_before_an_in_place_view_op(op):
    # torch records in-place view ops with set_history, which leaves the retain_grad hook on the old
    # node: .grad has the shape from before (seed 796139170509)
    def case(lib):
        x = lib.arange(1.0, 4.0, dtype=lib.float64, requires_grad=True)
        y = x[1].abs() if op == "unsqueeze_" else (x * 2)[:1]
        y.retain_grad()
        getattr(y, op)(*((0,) if op == "unsqueeze_" else ()))
        (y * 3).sum().backward()
        return y.grad, x.grad
    same(case)


# ---- products: the sign of a zero as torch's BLAS gives it (seed 796139145130) -----------------------
# a zero's sign decides what follows: atan2(-0, -1) is -pi, atan2(+0, -1) is pi, 1 / -0 is -inf
ZERO_PRODUCTS = {
    "mm outer (K=1)": lambda L: L.zeros(2, 1) @ -L.ones(1, 3),
    "mm one row (K=1)": lambda L: L.zeros(1, 1) @ -L.ones(1, 3),
    "mm K=2": lambda L: L.zeros(2, 2) @ -L.ones(2, 2),
    "matmul folded 3-D @ 2-D": lambda L: L.zeros(3, 4, 1, dtype=L.float64) @ -L.ones(1, 2, dtype=L.float64),
    "bmm (K=1)": lambda L: L.bmm(L.zeros(2, 2, 1), -L.ones(2, 1, 2)),
    "addmm, input +0": lambda L: L.addmm(L.zeros(2, 2), L.zeros(2, 1), -L.ones(1, 2)),
    "addmm, input -0, K=2": lambda L: L.addmm(-L.zeros(2), L.zeros(2, 2), -L.ones(2, 2)),
    "addmm, input -0, one row": lambda L: L.addmm(-L.zeros(1, 2), L.zeros(1, 1), -L.ones(1, 2), beta=0.5),
    "addmm, beta=0": lambda L: L.addmm(L.ones(2, 2), L.zeros(2, 1), -L.ones(1, 2), beta=0),
    "linear without bias": lambda L: L.nn.functional.linear(L.zeros(3, 1), -L.ones(2, 1)),
    "dot of one element": lambda L: L.dot(L.zeros(1), -L.ones(1)),
    "tensordot": lambda L: L.tensordot(L.zeros(2, 1), -L.ones(1, 2), dims=1),
    "the fuzzer's atan2": lambda L: L.atan2(L.zeros(3, 4, 1).log_softmax(2) @ L.tensor([[-0.44, -0.58]]),
                                            L.full((3, 4, 2), -1.0)),
}


# Where torch's sign of a zero depends on its BLAS kernel, not on its own code: addmm with K > 1 and a -0
# input gives -0 (IEEE's sum of -0 terms) through MKL on an AMD CPU and +0 through MKL's AVX-512 kernel on an
# Intel Sapphire Rapids (its accumulator starts at +0). glasstorch gives IEEE's -0 on every CPU (README).
BLAS_DEPENDENT_ZERO_SIGNS = {"addmm, input -0, K=2": True}


@pytest.mark.parametrize("case", list(ZERO_PRODUCTS), ids=list(ZERO_PRODUCTS))
def test_products_give_zeros_the_sign_torch_gives(case):
    def signs(lib):
        out = ZERO_PRODUCTS[case](lib)
        return out, np.signbit(out.numpy()).tolist()
    if case not in BLAS_DEPENDENT_ZERO_SIGNS:
        same(signs)
        return
    ours, torchs = ZERO_PRODUCTS[case](gt).numpy(), ZERO_PRODUCTS[case](torch).numpy()
    assert (ours == 0).all() and (torchs == 0).all()
    assert np.signbit(ours).tolist() == np.full(ours.shape, BLAS_DEPENDENT_ZERO_SIGNS[case]).tolist()


@pytest.mark.parametrize("beta", [0, 1])
def test_addmm_checks_the_input_shape_and_ignores_its_nans_when_beta_is_0(beta):
    same(lambda lib: lib.addmm(lib.ones(3, 3), lib.ones(2, 1), lib.ones(1, 2), beta=beta))
    same(lambda lib: lib.addmm(lib.tensor([float("nan")]), lib.ones(2, 1), lib.ones(1, 1), beta=beta))
    same(lambda lib: lib.baddbmm(lib.tensor([[[float("nan")]]]), lib.ones(2, 1, 1), lib.ones(2, 1, 1), beta=beta))


@pytest.mark.parametrize("wrt_the_view_results", [False, True])
def test_an_empty_view_regenerated_after_a_write_gives_a_gradient_without_history(wrt_the_view_results):
    # torch's as_strided_backward returns plain zeros for a view with a dim of size 0: in a double
    # backward that gradient does not require grad (seed 796139166947)
    def case(lib):
        x = _leaf(lib, [[0.5 * i - j for i in range(4)] for j in range(4)], requires_grad=True)
        empty = x.narrow(1, 4, 0)
        emptier = empty[:, 1:0]
        with lib.no_grad():
            x.add_(-0.5)            # the views' histories are re-derived from x's (AsStridedBackward0)
        z = empty.prod(1, keepdim=True)
        y = lib.atan2(emptier.sigmoid(), z)
        inputs = [x, z, y] if wrt_the_view_results else [x]
        grads = lib.autograd.grad(emptier.sum() + y.sum(), inputs, create_graph=True, allow_unused=True)
        return [None if g is None else (g, g.requires_grad) for g in grads], y.grad_fn.name()
    same(case)


def test_an_unused_input_is_named_by_its_index():
    def case(lib):
        a, b = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
        return lib.autograd.grad((a * 2).sum(), [a, b])
    assert same(case)[0] == "raised"


@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("in_place", [False, True])
@pytest.mark.parametrize("needs_grad", ["x", "values", "both"])
def test_index_put_records_one_node_and_the_values_get_their_gradient(accumulate, in_place, needs_grad):
    # index_put_(..., accumulate=True) recorded nothing: the values' gradient was silently lost (the
    # fuzzer's seeds 0 and 363 of the widened catalogue); out of place it recorded a CloneBackward0
    def case(lib):
        x = _leaf(lib, [1.0, 2.0, 3.0], requires_grad=needs_grad != "values")
        v = _leaf(lib, 0.5, requires_grad=needs_grad != "x")
        base = x * 1
        put = base.index_put_ if in_place else base.index_put
        out = put((lib.tensor([0, 0, 2]),), v * 2, accumulate=accumulate)
        inputs = [t for t in (x, v) if t.requires_grad]
        grads = lib.autograd.grad((out * _leaf(lib, [1.0, 10.0, 100.0])).sum(), inputs)
        return out, names(out.grad_fn), base._version, grads
    same(case)


SELF_AS_INPUT = {
    "scatter_": lambda lib, x: x.scatter_(0, lib.tensor([1, 0, 2]), x),
    "scatter_add_": lambda lib, x: x.scatter_add_(0, lib.tensor([1, 0, 2]), x),
    "scatter_reduce_": lambda lib, x: x.scatter_reduce_(0, lib.tensor([1, 0, 2]), x, "sum"),
    "index_add_": lambda lib, x: x.index_add_(0, lib.tensor([1, 0, 2]), x),
    "index_put_": lambda lib, x: x.index_put_((lib.tensor([1, 0, 2]),), x),
    "index_put_ accumulating": lambda lib, x: x.index_put_((lib.tensor([1, 0, 2]),), x, accumulate=True),
    "index_fill_ with a value in self": lambda lib, x: x.index_fill_(0, lib.tensor([1]), x[0]),
    "masked_fill_ with a value in self": lambda lib, x: x.masked_fill_(x > 0, x[0]),
    "scatter_ from another tensor": lambda lib, x: x.scatter_(0, lib.tensor([1, 0, 2]), x.clone()),
}


@pytest.mark.parametrize("case", list(SELF_AS_INPUT), ids=list(SELF_AS_INPUT))
def test_scatter_and_index_ops_refuse_self_as_their_source(case):
    # torch's scatter/index kernels refuse an input that is (all of) self -- assert_no_overlap, where
    # element-wise ops allow x.add_(x); a fill's one value is read first (the widened fuzzer, seed 501)
    def run(lib):
        x = _leaf(lib, [1.0, -2.0, 3.0])
        SELF_AS_INPUT[case](lib, x)
        return x
    same(run)


@pytest.mark.parametrize("args", [(), (1,), (0, 0, 2), (-1, 1, 0)], ids=repr)
def test_diag_embed_of_a_batch_places_and_differentiates_as_torch(args):
    # diag_embed ignored dim1/dim2 and its backward took the diagonal of dims 0, 1: a gradient of the
    # wrong shape, which broke the engine's sum (the widened fuzzer, seed 152)
    def case(lib):
        x = lib.arange(16.0, dtype=lib.float64).reshape(2, 4, 2).requires_grad_()
        y = lib.diag_embed(x, *args)
        w = lib.arange(float(y.numel()), dtype=lib.float64).reshape(y.shape)
        return y, y.grad_fn.name(), lib.autograd.grad((y * w).sum(), x)
    same(case)


RESULT_LAYOUTS = {
    "gelu": lambda lib, x: lib.nn.functional.gelu(x), "erf": lambda lib, x: lib.erf(x),
    "erfc": lambda lib, x: lib.erfc(x), "logsigmoid": lambda lib, x: lib.nn.functional.logsigmoid(x),
    "layer_norm": lambda lib, x: lib.nn.functional.layer_norm(x, x.shape[-1:]),
    "sort values": lambda lib, x: x.sort(0).values, "sort indices": lambda lib, x: x.sort(-1).indices,
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", list(RESULT_LAYOUTS), ids=list(RESULT_LAYOUTS))
def test_results_are_laid_out_as_torch_lays_them_out(case, dtype):
    # is_contiguous decides whether a later view() raises (the fuzzer's seeds 796146702116, 796146709060)
    def run(lib):
        x = lib.from_numpy(np.linspace(-2, 2, 24).reshape(2, 3, 4).astype(dtype)).permute(2, 0, 1)
        out = RESULT_LAYOUTS[case](lib, x)
        return out.stride(), out.is_contiguous()   # (the values: the opinfo tests)
    same(run)


@pytest.mark.parametrize("op", ["cummax", "cummin"])
def test_cummax_of_an_empty_tensor_gives_the_input_as_its_gradient(op):
    # torch's cummaxmin_backward returns the (empty) input itself: in a double backward it requires
    # grad (seed 796146705050)
    def case(lib):
        x = lib.zeros(0, dtype=lib.float64, requires_grad=True)
        g, = lib.autograd.grad(getattr(x, op)(0).values.sum(), x, create_graph=True)
        return g.requires_grad, g.grad_fn, g is x
    same(case)


SAVED_WITHOUT_AN_EDGE = {
    "exp's result modified": lambda lib, v: (v.exp(), lambda y: y.mul_(2)),
    "max's input (a no_grad view) modified": lambda lib, v: (v.max(), lambda y: v.mul_(2)),
    "mul's partner modified (not saved)": lambda lib, v: (v * lib.ones(2), lambda y: v.mul_(2)),
}


@pytest.mark.parametrize("case", list(SAVED_WITHOUT_AN_EDGE), ids=list(SAVED_WITHOUT_AN_EDGE))
def test_a_node_without_edges_checks_what_torch_saves(case):
    # torch's codegen saves a one-input op's input and any result unconditionally, a partner operand
    # only for an input with an edge (gen_variable_type.py's guard_for): modifying a saved one is an
    # error at backward even when no gradient flows back (the fuzzer's seed 796146698348)
    def run(lib):
        base = lib.tensor([0.5, -1.0]).requires_grad_()
        with lib.no_grad():
            v = base[:]          # requires grad through its base, but has no edge of its own
        y, modify = SAVED_WITHOUT_AN_EDGE[case](lib, v)
        with lib.no_grad():
            modify(y)
        y.sum().backward()
        return base.grad
    same(run)


@pytest.mark.parametrize("op", ["max", "min", "median", "nanmedian"])
def test_a_full_reduction_result_changed_through_data_gives_zeros_not_nans(op):
    # torch's evenly_distribute_backward fills zeros where the input equals the (saved) result: after
    # ``.data.mul_()`` no element does, and the gradient is 0 -- not 0 * (grad / 0) = NaN (the fuzzer's
    # seeds 796149712811, 796152402166)
    def case(lib):
        x = lib.tensor([[0.5, -1.5, 2.0, 1.0]], dtype=lib.float64, requires_grad=True)
        y = getattr(x, op)()
        y.data.mul_(2.0)
        g, = lib.autograd.grad(y, x, create_graph=True)
        gg, = lib.autograd.grad(g.sum(), x, allow_unused=True, materialize_grads=True)
        return g, gg
    same(case)


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("op", ["tril_", "triu_"])
def test_triangle_in_place_on_an_expanded_tensor_as_torch(op, requires_grad):
    # torch's tril_/triu_ skip the overlap check of element-wise in-place ops: an aliased element is
    # zeroed if any of its places is (a NaN elsewhere stays); through autograd it raises (seed 796149713136)
    def case(lib):
        b = lib.tensor([[0.3, float("nan"), 2.0]], requires_grad=requires_grad)
        x = (b * 1).expand(3, 3)
        getattr(x, op)(0)
        return x, b._version
    same(case)


@pytest.mark.parametrize("look", [None, "grad_fn", "is_leaf"])
@pytest.mark.parametrize("op", ["t_", "unsqueeze_", "mul_"])
def test_in_place_on_a_view_whose_base_got_a_history_sees_it_once_looked_at(op, look):
    # torch's check_inplace reads a view's history as last derived: a view taken before its base was
    # written with a gradient is still a "leaf" until its grad_fn is read (VariableHooks::grad_fn
    # re-derives it). The fuzzer's generator read is_leaf on torch's tensor only, so torch stopped
    # raising where glasstorch -- rightly -- raised (seeds 796152536277, 796152537409)
    def case(lib):
        w = lib.tensor(0.7, dtype=lib.float64, requires_grad=True)
        base = lib.zeros(4, dtype=lib.float64)
        v = base.reshape(-1, 1)
        base[2] = w
        if look:
            getattr(v, look)
        {"t_": lambda: v.t_(), "unsqueeze_": lambda: v.unsqueeze_(0), "mul_": lambda: v.mul_(2)}[op]()
        return v, v.grad_fn.name(), lib.autograd.grad((v * lib.arange(4.0).reshape(v.shape)).sum(), w)
    same(case)


@pytest.mark.parametrize("pos_weight", [False, True])
@pytest.mark.parametrize("dtypes", [("float64", "float32"), ("float32", "float64")], ids=["f64-f32", "f32-f64"])
def test_bce_with_logits_has_the_targets_dtype(dtypes, pos_weight):
    # torch writes the loss into (1 - target) in place: its dtype is the target's, the gradients
    # keep their inputs' (seed 796149713327)
    def case(lib):
        x = lib.tensor([0.3, -1.2], dtype=getattr(lib, dtypes[0]), requires_grad=True)
        t = lib.tensor([0.2, 0.9], dtype=getattr(lib, dtypes[1]), requires_grad=True)
        pw = lib.tensor([1.5, 0.5], dtype=lib.float64) if pos_weight else None
        out = lib.nn.functional.binary_cross_entropy_with_logits(x, t, reduction="none", pos_weight=pw)
        return out.dtype, lib.autograd.grad(out.sum(), (x, t))
    same(case)


@pytest.mark.parametrize("value_shape", [(3,), (2,), (1, 2)])
@pytest.mark.parametrize("requires_grad", [False, True])
def test_setitem_of_the_wrong_shape_and_dtype_names_the_shape_first(value_shape, requires_grad):
    # torch's setitem checks that the value broadcasts before its dtype (seed 796155941779)
    def case(lib):
        x = lib.zeros(3, 2, dtype=lib.float64)
        x[lib.tensor([1])] = lib.ones(*value_shape, dtype=lib.float32, requires_grad=requires_grad)
    same(case)


TRANSPOSED_LAYOUTS = {
    "number ** x": lambda lib, x: 2 ** x, "torch.pow(number, x)": lambda lib, x: lib.pow(2.5, x),
    "x ** 2": lambda lib, x: x ** 2,
    "pad by 0": lambda lib, x: lib.nn.functional.pad(x, (0, 0), value=1.5),
    "pad cropping": lambda lib, x: lib.nn.functional.pad(x, (-1, 0, 0, -1)),
    "pad growing": lambda lib, x: lib.nn.functional.pad(x, (1, 0)),
    "clamp by tensors": lambda lib, x: lib.clamp(x, min=x.detach().contiguous(), max=x.detach().contiguous() + 0.5),
    "clamp_min by a tensor": lambda lib, x: x.clamp_min(lib.zeros(3, 4, dtype=lib.float64)),
    "nan_to_num of an expanded tensor": lambda lib, x: lib.nan_to_num(x[:1].expand(3, 4)),
    "triu": lambda lib, x: x.triu(1), "tril of a permuted batch": lambda lib, x: x.reshape(3, 2, 2).permute(2, 0, 1).tril(),
}


@pytest.mark.parametrize("case", list(TRANSPOSED_LAYOUTS), ids=list(TRANSPOSED_LAYOUTS))
def test_layout_of_results_of_a_transposed_input_as_torch(case):
    # torch's pow(Scalar, Tensor) allocates a row-major result; constant_pad_nd without a positive pad
    # clones the narrowed input, keeping its layout; clamp by tensors is laid out as its input; tril/triu
    # are row-major (seeds 796155937967, 796155946556, 796157882843, 796158864534)
    def run(lib):
        x = lib.from_numpy(np.linspace(0.5, 2, 12).reshape(4, 3)).T.requires_grad_()
        out = TRANSPOSED_LAYOUTS[case](lib, x)
        return out, out.stride(), out.is_contiguous(), lib.autograd.grad((out * out).sum(), x)
    same(run)


def test_atan2_double_backward_where_the_denominator_vanishes_as_torch():
    # torch masks the reciprocal of a^2 + b^2 where it is 0 (a masked_fill after a reciprocal): the
    # first derivative is 0 there, the second NaN (the reciprocal's derivative at inf) -- an
    # underflowing a^2 counts as 0, a subnormal one does not (seed 796156594643)
    def case(lib):
        a = lib.tensor([0.0, 1.0, 1e-200, 1e-160], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([0.0, 2.0, 0.0, 0.0], dtype=lib.float64, requires_grad=True)
        ga, gb = lib.autograd.grad(lib.atan2(a, b).sum(), (a, b), create_graph=True)
        return ga, gb, lib.autograd.grad((ga + gb).sum(), (a, b))
    same(case)


PRODUCT_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3,)),
                  ((3,), (5, 3, 4)), ((2, 3), (5, 3, 4)), ((5, 2, 3), (5, 3, 4)), ((2, 5, 2, 3), (5, 3, 4))]


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("shapes", PRODUCT_SHAPES, ids=[f"{a}@{b}" for a, b in PRODUCT_SHAPES])
def test_matmul_of_two_dtypes_raises_the_error_of_the_product_it_becomes(shapes, requires_grad):
    # matmul decomposes into dot/mv/mm/bmm, and each names a dtype mismatch in its own words
    # (seeds 796156589523, 796156594311)
    def case(lib):
        a = lib.ones(*shapes[0], dtype=lib.float32, requires_grad=requires_grad)
        return a @ lib.ones(*shapes[1], dtype=lib.float64)
    same(case)


PRODUCTS_OF_TWO_DTYPES = {
    "vdot": lambda L, f, d: L.vdot(L.ones(3, dtype=d), L.ones(3, dtype=f)),
    "dot before its size": lambda L, f, d: L.dot(L.ones(2, dtype=d), L.ones(3, dtype=f)),
    "addmm input": lambda L, f, d: L.addmm(L.ones(2, 4, dtype=f), L.ones(2, 3, dtype=d), L.ones(3, 4, dtype=d)),
    "addmm mats": lambda L, f, d: L.addmm(L.ones(2, 4, dtype=f), L.ones(2, 3, dtype=d), L.ones(3, 4, dtype=f)),
    "addmm before its shapes": lambda L, f, d: L.addmm(L.ones(2, 4, dtype=f), L.ones(2, 3, dtype=d),
                                                       L.ones(2, 4, dtype=d)),
    "baddbmm input": lambda L, f, d: L.baddbmm(L.ones(5, 2, 4, dtype=f), L.ones(5, 2, 3, dtype=d),
                                               L.ones(5, 3, 4, dtype=d)),
    "baddbmm batch2": lambda L, f, d: L.baddbmm(L.ones(5, 2, 4, dtype=d), L.ones(5, 2, 3, dtype=d),
                                                L.ones(5, 3, 4, dtype=f)),
    "tensordot": lambda L, f, d: L.tensordot(L.ones(2, 3, dtype=d), L.ones(3, 4, dtype=f), 1),
    "inner": lambda L, f, d: L.inner(L.ones(2, 3, dtype=d), L.ones(4, 3, dtype=f)),
    "einsum": lambda L, f, d: L.einsum("ij,jk->ik", L.ones(2, 3, dtype=d), L.ones(3, 4, dtype=f)),
    "linear with a bias of the input's dtype": lambda L, f, d: L.nn.functional.linear(
        L.ones(2, 3, dtype=d), L.ones(4, 3, dtype=f), L.ones(4, dtype=d)),
    "linear with a bias of the weight's dtype": lambda L, f, d: L.nn.functional.linear(
        L.ones(2, 2, 3, dtype=d), L.ones(4, 3, dtype=f), L.ones(4, dtype=f)),
}


@pytest.mark.parametrize("case", list(PRODUCTS_OF_TWO_DTYPES), ids=list(PRODUCTS_OF_TWO_DTYPES))
def test_products_of_two_dtypes_raise_as_torch(case):
    same(lambda lib: PRODUCTS_OF_TWO_DTYPES[case](lib, lib.float32, lib.float64))


LINEAR_INPUTS = {"1-D": lambda L: L.ones(3), "1-D strided": lambda L: L.ones(3, 2).t()[0],
                 "3-D contiguous": lambda L: L.ones(2, 2, 3), "3-D transposed": lambda L: L.ones(2, 3, 2).transpose(1, 2)}


@pytest.mark.parametrize("bias", ["float32", "float64", "2-D"])
@pytest.mark.parametrize("inp", list(LINEAR_INPUTS), ids=list(LINEAR_INPUTS))
def test_linear_adds_its_bias_in_place_where_torch_does(inp, bias):
    # torch's linear falls back to matmul(x, W.t()).add_(b) for an input it cannot fold: the result
    # keeps matmul's dtype and its _version counts the write (seeds 796156589041, 796156594088)
    def case(lib):
        w = lib.arange(12.0).reshape(4, 3).requires_grad_()
        b = lib.ones(2, 1, 4) if bias == "2-D" else lib.ones(4, dtype=getattr(lib, bias)).requires_grad_()
        y = lib.nn.functional.linear(LINEAR_INPUTS[inp](lib), w, b)
        return y, y.dtype, y._version, y.grad_fn.name(), lib.autograd.grad(y.sum(), w)
    same(case)


def test_an_index_result_folds_into_one_mm_as_torch():
    # NumPy gave x[:, idx] of shape (1, 3, 1) the strides (1, 1, 1) where torch's are row-major (3, 1, 1):
    # matmul's fold test then chose bmm where torch folds into one mm (seed 796157874441)
    def case(lib):
        x = lib.ones(1, 1, 1, dtype=lib.float64, requires_grad=True)
        v = x[:, lib.tensor([0, 0, 0])]
        y = v @ lib.ones(1, 4, dtype=lib.float64)
        return v.stride(), names(y.grad_fn), lib.autograd.grad(y.sum(), x)
    same(case)


VIEWS_WITH_DIMS_OF_SIZE_1 = {
    "a strided element as (1, 1)": lambda L: L.arange(4.0)[0:3:2][:1].view(1, 1),
    "a permuted column as its own shape": lambda L: L.zeros(4, 1).permute(1, 0).view(1, 4),
    "a permuted slice with a new dim": lambda L: L.arange(24.0).reshape(2, 3, 4).permute(1, 0, 2)[:, :1].view(3, 1, 4),
    "a column of a slice": lambda L: L.arange(24.0).reshape(2, 3, 4)[:, :, 1].view(2, 3, 1),
    "a transposed matrix with a trailing 1": lambda L: L.arange(6.0).reshape(2, 3).t().view(3, 2, 1),
    "a stepped slice with 1s between": lambda L: L.arange(12.0).reshape(3, 4)[:, ::2].view(3, 1, 2, 1),
    "an expanded column": lambda L: L.zeros(3, 1).expand(3, 4)[:, :1].view(1, 3),
    "a 0-d tensor": lambda L: L.tensor(3.0).view(1, 1),
}


@pytest.mark.parametrize("case", list(VIEWS_WITH_DIMS_OF_SIZE_1), ids=list(VIEWS_WITH_DIMS_OF_SIZE_1))
def test_view_strides_dims_of_size_1_as_torch(case):
    # torch's view gives a dim of size 1 the stride of what follows it (computeStride); its overlap
    # checks compare strides literally, so v2[0] = v1 with v2 = v1.view(1, 1) is a no-op in torch and was
    # a "some elements ... refer to a single memory location" error here (seeds 796158862654, 796158863941)
    def run(lib):
        v = VIEWS_WITH_DIMS_OF_SIZE_1[case](lib)
        return v.stride(), v.storage_offset()
    same(run)


def test_a_copy_into_a_view_of_the_same_element_is_a_no_op_as_torch():
    def case(lib):
        v1 = lib.tensor([0.5], dtype=lib.float64)[0:3:2]
        v2 = v1.view(1, 1)
        v2[0] = v1
        z = lib.zeros(4, 1, dtype=lib.float64).permute(1, 0)
        z.view_as(z).copy_(z)
        return v1._version, z._version
    same(case)


def test_storage_offset_of_an_expanded_or_restrided_view():
    def case(lib):
        t = lib.arange(10.0)[2:]
        return t.expand(2, 8).storage_offset(), t.reshape(2, 4).t().unsqueeze(1).storage_offset()
    same(case)


def test_view_of_strided_tensors_as_torch():
    """view of non-contiguous tensors (transposed, sliced, permuted): the same strides as torch's
    computeStride, or torch's error, for every shape that splits or merges their dims -- NumPy's own
    reshape answers where no dim has size 1."""
    rng = np.random.default_rng(7)

    def factorings(n, parts):
        if parts == 1:
            return [(n,)]
        return [(d,) + rest for d in range(2, n + 1) if n % d == 0 for rest in factorings(n // d, parts - 1)]

    sources = {
        "t": lambda L: L.arange(96.0).reshape(8, 12).t(),
        "slice": lambda L: L.arange(192.0).reshape(8, 24)[:, ::2],
        "permute": lambda L: L.arange(96.0).reshape(2, 4, 12).permute(0, 2, 1),
        "inner_slice": lambda L: L.arange(192.0).reshape(2, 4, 24)[:, :, :12],
    }
    for name, make in sources.items():
        shapes = [s for parts in (1, 2, 3, 4) for s in factorings(96, parts)]
        for shape in [shapes[i] for i in rng.choice(len(shapes), 25, replace=False)] + [(96,), (1, 96), (8, 1, 12)]:
            def run(lib):
                x = make(lib)
                try:
                    v = x.view(*shape)
                except RuntimeError as e:
                    return "error", "view size is not compatible" in str(e)
                return v.stride(), v.storage_offset(), v.reshape(-1).tolist()
            ours, theirs = run(gt), run(torch)
            assert ours == theirs, (name, shape)


ZERO_SIGN_CASES = {
    "relu": lambda lib, x: x.relu(), "relu_": lambda lib, x: x.clone().relu_(),
    "functional relu inplace": lambda lib, x: lib.nn.functional.relu(x.clone(), inplace=True),
    "clamp min 0": lambda lib, x: x.clamp(0.0, 1.0), "clamp max 0": lambda lib, x: x.clamp(-1.0, 0.0),
    "clamp_min": lambda lib, x: x.clamp_min(0.0), "clamp_max": lambda lib, x: x.clamp_max(0.0),
    "clamp_ min": lambda lib, x: x.clone().clamp_(min=0.0),
    "clamp of +0 by -0": lambda lib, x: (-x).clamp(min=-0.0, max=-0.0),
}


@pytest.mark.parametrize("shape", [(), (3,), (40,)], ids=["0d", "3", "40"])
@pytest.mark.parametrize("case", list(ZERO_SIGN_CASES), ids=list(ZERO_SIGN_CASES))
def test_clamping_keeps_the_sign_of_a_zero_equal_to_the_bound(case, shape):
    # torch's clamp/relu compute ``a < bound ? bound : a``: relu(-0.) is -0., and atan2 then gives -pi
    # where NumPy's maximum (+0.) gave 0 (seed 796164178901)
    def run(lib):
        x = -lib.zeros(shape, dtype=lib.float64)
        out = ZERO_SIGN_CASES[case](lib, x)
        return out, lib.atan2(out, out), (1 / out)
    same(run)


@pytest.mark.parametrize("one_pass", [True, False], ids=["ties-from-numpy", "fixed-up"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", list(ZERO_SIGN_CASES), ids=list(ZERO_SIGN_CASES))
def test_clamping_keeps_signs_of_zeros_and_nans_on_long_arrays(case, dtype, layout, one_pass, monkeypatch):
    # long enough for NumPy's vector loops; both of _clamp_side's ways: extremum(bound, a) where
    # NumPy's loops give the second operand on a tie (one pass), or the fix-up of a == 0 after it
    from glasstorch.ops import pointwise
    if not one_pass:
        monkeypatch.setattr(pointwise, "_ties_give_second", lambda extremum, dtype, full=False: False)
    values = np.array([-0.0, 0.0, -1.5, 2.0, np.nan, -np.nan, -np.inf, np.inf, 0.5, -0.25] * 111, dtype=dtype)

    def run(lib):
        x = lib.tensor(values.reshape(37, 30))
        x = {"contiguous": x, "transposed": x.t(), "strided": x[:, ::3]}[layout]
        out = ZERO_SIGN_CASES[case](lib, x)
        return lib.signbit(out), out.isnan(), out.nan_to_num(0.0)
    same(run)


def _expanded_batch(lib, shape, expanded_shape, permute=None):
    x = lib.arange(float(np.prod(shape)), dtype=lib.float64).reshape(shape).expand(expanded_shape)
    return x if permute is None else x.permute(permute)


TRIANGLE_LAYOUTS = {   # 4-D and more: torch writes in place only when the batches follow one another
    "expanded first dim": ((1, 2, 3, 3), (2, 2, 3, 3)), "expanded second dim": ((2, 1, 3, 3), (2, 2, 3, 3)),
    "expanded columns": ((2, 2, 3, 1), (2, 2, 3, 3)), "expanded first dim and columns": ((1, 2, 3, 1), (2, 2, 3, 3)),
    "expanded 5-d, first dim": ((1, 2, 2, 3, 3), (2, 2, 2, 3, 3)),
    "expanded 5-d, two dims": ((1, 1, 2, 3, 3), (2, 2, 2, 3, 3)),
    "size-1 first dim": ((1, 1, 3, 3), (1, 2, 3, 3)), "seed 796164193162": ((4, 2, 1), (3, 4, 2, 2)),
    "3-d, expanded rows": ((2, 1, 3), (2, 3, 3)), "2-d, expanded columns": ((3, 1), (3, 3)),
    "permuted, expanded": ((1, 2, 3, 3), (2, 2, 3, 3), (1, 0, 2, 3)),
}


@pytest.mark.parametrize("diagonal", [-1, 0, 1])
@pytest.mark.parametrize("op", ["tril_", "triu_"])
@pytest.mark.parametrize("case", list(TRIANGLE_LAYOUTS), ids=list(TRIANGLE_LAYOUTS))
def test_triangle_in_place_on_an_expanded_batch_raises_where_torch_copies_back(case, op, diagonal):
    # torch's tril_/triu_ zero in place when the matrices of the batch follow one another in memory
    # (always up to 3 dims); otherwise they compute into a new tensor and copy_ it back, and the copy
    # refuses an expanded tensor (seeds 796164181794, 796164193162)
    def run(lib):
        x = _expanded_batch(lib, *TRIANGLE_LAYOUTS[case])
        getattr(x, op)(diagonal)
        return x.clone(), x._version
    same(run)


OVERLAPPING_INPUTS = {   # tensors whose elements repeat: two dims of one stride, or a stride 0
    "unfold, windows of 3": lambda lib, x: x.reshape(2, 6, 1)[:, :4].unfold(1, 3, 1),
    "unfold, transposed": lambda lib, x: x.reshape(2, 6, 1)[:, :4].unfold(1, 3, 1).transpose(0, 1),
    "unfold of rows": lambda lib, x: x.reshape(6, 2)[:5].unfold(0, 3, 1),
    "expanded, permuted": lambda lib, x: x[:6].reshape(2, 1, 3).expand(2, 4, 3).transpose(0, 2),
}
ELEMENTWISE_OF_ONE = {
    "exp": lambda lib, x: x.exp(), "sigmoid": lambda lib, x: lib.sigmoid(x), "abs": lambda lib, x: x.abs(),
    "relu": lambda lib, x: x.relu(), "clamp": lambda lib, x: x.clamp(-0.1, 0.1), "rsub": lambda lib, x: 1.5 - x,
    "pow 2": lambda lib, x: x ** 2, "pow 3": lambda lib, x: x ** 3, "clone": lambda lib, x: x.clone(),
    "float": lambda lib, x: x.float(), "gelu": lambda lib, x: lib.nn.functional.gelu(x),
    "leaky_relu": lambda lib, x: lib.nn.functional.leaky_relu(x, 0.1),
    "relu6": lambda lib, x: lib.nn.functional.relu6(x), "softplus": lambda lib, x: lib.nn.functional.softplus(x),
    "threshold": lambda lib, x: lib.nn.functional.threshold(x, 0.1, 2.0),
}


@pytest.mark.parametrize("op", list(ELEMENTWISE_OF_ONE), ids=list(ELEMENTWISE_OF_ONE))
@pytest.mark.parametrize("case", list(OVERLAPPING_INPUTS), ids=list(OVERLAPPING_INPUTS))
def test_elementwise_result_of_an_input_that_repeats_elements_laid_out_as_torch(case, op):
    # torch's TensorIterator orders dims of equal stride by size (the smaller inner) and leaves a stride-0
    # dim where its comparisons do; NumPy's order K puts the later dim inner: x.unfold(...).exp() was
    # contiguous where torch's is not (seed 796166618624, ~1 graph in 25,000)
    def run(lib):
        x = OVERLAPPING_INPUTS[case](lib, lib.linspace(-1, 1, 12, dtype=lib.float64))
        out = ELEMENTWISE_OF_ONE[op](lib, x)
        return out, out.is_contiguous(), [st for st, n in zip(out.stride(), out.shape) if n != 1]
    same(run)


@pytest.mark.parametrize("repeats", [(1, 1), (1, 1, 1), (2, 1)], ids=str)
@pytest.mark.parametrize("layout", ["transposed", "expanded", "sliced"])
def test_repeat_is_contiguous_as_torch(layout, repeats):
    # torch's repeat copies into a new contiguous tensor; NumPy's tile by ones kept the input's layout
    # (a metadata difference of the long fuzzer)
    def run(lib):
        x = lib.linspace(-1, 1, 12, dtype=lib.float64, requires_grad=True)
        v = {"transposed": x.reshape(4, 3).t(), "expanded": x[:3].expand(4, 3), "sliced": x.reshape(2, 6)[:, ::2]}[layout]
        out = v.repeat(repeats)
        return out, out.is_contiguous(), out.stride(), lib.autograd.grad((out * out).sum(), x)
    same(run)


@pytest.mark.parametrize("code", ["x[0]", "x[0] = 2.0", "x[np.int64(0)]", "x[0, 0]", "x[True]", "x[lib.tensor(0)]"])
def test_an_int_index_of_a_0_dim_tensor_raises_as_torch(code):
    # torch's Python indexing refuses a lone integer on a 0-d tensor with its own message ("use
    # tensor.item()"); more indices than dims get "too many indices" (a fuzzer error difference)
    def run(lib):
        x = lib.tensor(1.5, dtype=lib.float64)
        exec(code, {"x": x, "lib": lib, "np": np})
        return x
    same(run)


KERNELS_THAT_REFUSE_AN_EMPTY_INPUT = {
    "max": lambda v: v.max(), "min": lambda v: v.min(), "argmax along a dim": lambda v: v.max(0),
    "kthvalue": lambda v: v.kthvalue(1), "median": lambda v: v.median(),
}


@pytest.mark.parametrize("op", list(KERNELS_THAT_REFUSE_AN_EMPTY_INPUT), ids=list(KERNELS_THAT_REFUSE_AN_EMPTY_INPUT))
@pytest.mark.parametrize("empty", [True, False], ids=["empty view", "view"])
def test_a_stale_no_grad_view_raises_the_view_error_before_the_kernels_own(op, empty):
    # torch's autograd layer reads an input's grad_fn (linking the new node) before the op's kernel runs:
    # an in-place op on an empty no_grad view of a grad-requiring base, then max(), raises the no_grad
    # view error, not max's "Expected reduction dim" (4 error differences of the 10-minute fuzzer run)
    def run(lib):
        x = lib.linspace(-1, 1, 3, dtype=lib.float64, requires_grad=True)
        y = x * 2
        with lib.no_grad():
            v = y[3:] if empty else y[1:]
            v.mul_(2)
        return KERNELS_THAT_REFUSE_AN_EMPTY_INPUT[op](v)
    assert same(run)[0] == "raised"


LAYOUT_INPUTS = {   # tensors whose dims of size 1 (or 0) have strides row-major order would not give them
    "unfold with a 1": lambda L: L.arange(2.0, dtype=L.float64).reshape(1, 2, 1).unfold(1, 2, 1),
    "a column, permuted": lambda L: L.arange(3.0, dtype=L.float64).reshape(3, 1, 1).permute(1, 0, 2),
    "a slice of a transpose": lambda L: L.arange(12.0, dtype=L.float64).reshape(3, 4).t()[:1],
    "channels-last-like": lambda L: L.arange(4.0, dtype=L.float64).reshape(2, 2).t().reshape(1, 2, 2, 1),
    "a narrowed unsqueeze": lambda L: L.arange(6.0, dtype=L.float64).reshape(2, 3).unsqueeze(1)[:, :, ::2],
    "empty row of a 1-d slice": lambda L: L.arange(3.0, dtype=L.float64)[3:],
    "empty, from a reduction": lambda L: L.zeros(2, 3, dtype=L.float64)[:, :0].sum(0, keepdim=True).expand(2, 0),
}
# (not here: an empty tensor made by a creation op has NumPy's strides -- all 0 under NumPy 2,
# zeros(0, 3).stride() is (0, 0) here, (3, 1) in torch -- and its views follow from them: README)
LAYOUT_OPS = {
    "exp": lambda L, x: x.exp(), "x * 2": lambda L, x: x * 2, "1.5 - x": lambda L, x: 1.5 - x,
    "x > 0.5": lambda L, x: x > 0.5, "where(x > 0, x, 0.)": lambda L, x: L.where(x > 0, x, 0.0),
    "minimum(x, x + 1)": lambda L, x: L.minimum(x, x + 1), "clone": lambda L, x: x.clone(),
    "float": lambda L, x: x.float(), "x % 0.7": lambda L, x: x % 0.7, "clamp": lambda L, x: x.clamp(-0.5, 0.5),
    "masked_fill": lambda L, x: x.masked_fill(x > 1, 0.5), "sum(0, keepdim)": lambda L, x: x.sum(0, keepdim=True),
    "amin(-1, keepdim)": lambda L, x: x.amin(-1, keepdim=True), "mean(-1, keepdim)": lambda L, x: x.mean(-1, keepdim=True),
    "x + that": lambda L, x: L.ones(x.shape[-1:], dtype=L.float64) + (1.5 - x),
}


@pytest.mark.parametrize("op", list(LAYOUT_OPS), ids=list(LAYOUT_OPS))
@pytest.mark.parametrize("case", list(LAYOUT_INPUTS), ids=list(LAYOUT_INPUTS))
def test_strides_of_dims_of_size_1_and_of_empty_results_as_torch(case, op):
    # TensorIterator's layout: row-major when every operand is contiguous and of the result's shape,
    # channels-last when all are, the operands' own strides when all are dense alike, else the dims
    # ordered by the operands' strides (a dim of size 1 keeps its stride in the comparison, a number
    # operand counts as a 0-d tensor) and strides dense in that order -- for dims of size 1 too. NumPy
    # chose its own for those, and a later op ordered by them differed in is_contiguous (fuzzer seed
    # 796178020758: `v7 = v6 + (1.5 - v0.unfold(1, 2, 1))` contiguous here, not in torch)
    def run(lib):
        out = LAYOUT_OPS[op](lib, LAYOUT_INPUTS[case](lib))
        return out, out.stride(), out.is_contiguous()
    same(run)


def test_keepdim_reduction_gives_its_dims_of_size_1_row_major_strides():
    # torch allocates a reduction's result contiguous, a kept dim of size 1 included; NumPy's keepdims
    # strided it from the input's layout ((1, 2) for x.t().amin(1, keepdim=True)), and a later
    # element-wise op, which TensorIterator orders by those strides, came out not contiguous where
    # torch's is (fuzz seed 796186496937)
    def run(lib):
        v4 = lib.zeros(3, 2).t()
        v6 = v4.amin(1, keepdim=True).unsqueeze(-2)
        out = lib.where(v4[:1] > 0, v6, v6 * v6)
        return v6.stride(), out.stride(), out.is_contiguous()
    same(run)


CAT_INPUTS = {   # each input's layout: torch's cat keeps a channels-last one (suggest_memory_format)
    "row-major 2-d": lambda L: L.arange(6.0).reshape(2, 3),
    "transposed 3-d": lambda L: L.arange(24.0).reshape(2, 3, 4).transpose(1, 2),
    "channels-last": lambda L: L.arange(12.0).reshape(2, 1, 3, 2).permute(0, 3, 1, 2),
    "channels-last, N of 1": lambda L: L.arange(4.0).reshape(1, 2, 2).mT.unsqueeze(-2),
    "channels-last, C of 1": lambda L: L.arange(6.0).reshape(2, 1, 3, 1).permute(0, 3, 1, 2),
    "ambiguous N111": lambda L: L.arange(2.0).reshape(2, 1, 1, 1),
    "channels-last-3d": lambda L: L.arange(24.0).reshape(2, 3, 1, 2, 2).permute(0, 4, 1, 2, 3),
}


@pytest.mark.parametrize("case", list(CAT_INPUTS), ids=list(CAT_INPUTS))
def test_cat_and_stack_are_laid_out_as_torch(case):
    # cat: channels-last (4-d) or channels-last-3d (5-d) when every input suggests it, else row-major;
    # stack along an existing dim: that cat, viewed with the new dim split off; at the end: the cat of
    # the inputs unsqueezed there (fuzz seed 796184151948: a stack of unsqueezed views of a transposed
    # result is not contiguous in torch)
    def run(lib):
        x = CAT_INPUTS[case](lib)
        other = lib.zeros(x.shape)
        return ([lib.cat([x, x], d).stride() for d in range(x.dim())],
                [lib.stack([x, x], d).stride() for d in range(x.dim() + 1)],
                [lib.stack([x, x], d).is_contiguous() for d in range(x.dim() + 1)],
                lib.cat([x, other], 0).stride(), lib.stack([x, other], 1).stride(), lib.cat([x]).stride())
    same(run)


@pytest.mark.parametrize("others", [0, 2], ids=["all empty", "with a non-empty input"])
def test_cat_gives_an_empty_1d_input_new_zeros_without_history(others):
    # torch's cat_tensors_backward gives every input of shape (0,) at::zeros({0}), not a slice of the
    # gradient: with create_graph the gradient that reaches it has no history (fuzzer seed 796179583387)
    def run(lib):
        v0 = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        c = lib.cat([v0[0:0], v0[0:others], v0[0:0]]) * 1
        g, = lib.autograd.grad((c * c).sum(), [v0], create_graph=True)
        return g, g.requires_grad, None if g.grad_fn is None else g.grad_fn.name()
    same(run)


@pytest.mark.parametrize("expanded_first", [False, True], ids=["plain * expanded", "expanded * plain"])
@pytest.mark.parametrize("op", ["mul", "add", "maximum"])
def test_an_expanded_operand_of_another_dtype_keeps_its_broadcast_dim_in_the_layout(op, expanded_first):
    # torch casts while it reads, so the expanded operand's stride 0 takes part in the layout decision
    # (row-major here); NumPy's astype of the expanded array put that dim innermost and the float64
    # result came out column-major (fuzzer seed 796183947388: is_contiguous False, torch True)
    def run(lib):
        plain = lib.tensor([0.5, -1.0], dtype=lib.float64)
        expanded = lib.tensor([2.0, 3.0]).expand(3, 2)
        a, b = (expanded, plain) if expanded_first else (plain, expanded)
        out = getattr(lib, op)(a, b)
        return out, out.stride(), out.is_contiguous()
    same(run)



def _random_view(lib, rng, shape):
    """A float32 view of ``shape`` laid out by a recipe drawn from ``rng`` (so both libraries get the
    same): its dims permuted in memory, some read with step 2, a dim of size 1 sometimes added by
    unsqueeze (its stride then is unsqueeze's, not row-major's)."""
    ones = [d for d, n in enumerate(shape) if n == 1]
    if ones and rng.integers(3) == 0:
        d = ones[int(rng.integers(len(ones)))]
        return _random_view(lib, rng, shape[:d] + shape[d + 1:]).unsqueeze(d)
    perm = [int(i) for i in rng.permutation(len(shape))]
    steps = [int(s) for s in rng.integers(1, 3, size=len(shape))]
    x = lib.arange(float(np.prod([shape[d] * steps[d] for d in perm])), dtype=lib.float32)
    x = x.reshape([shape[d] * steps[d] for d in perm])[tuple(slice(None, None, steps[d]) for d in perm)]
    return x.permute([perm.index(d) for d in range(len(shape))])


def test_element_wise_layouts_kept_per_layout_match_torch_on_random_views():
    # like_operands keeps its layout decision per (shapes, strides, item sizes) of the result and its
    # operands: on random pairs of views (permuted, stepped, unsqueezed, broadcast, expanded), each
    # op's result has torch's strides the first time, the second time (from the decision kept) and on
    # a clone of the operands (the same layouts, other arrays)
    rng = np.random.default_rng(1234)
    ops = {"a + b": lambda L, a, b: a + b, "a * 2": lambda L, a, b: a * 2, "b - a": lambda L, a, b: b - a,
           "a > b": lambda L, a, b: a > b, "where": lambda L, a, b: L.where(a > 1, a, b),
           "a.double() * b": lambda L, a, b: a.double() * b, "maximum": lambda L, a, b: L.maximum(b, a),
           "exp": lambda L, a, b: a.exp()}
    for case in range(120):
        shape = tuple(int(n) for n in rng.integers(1, 4, size=int(rng.integers(2, 5))))
        b_shape = tuple(n if rng.integers(3) else 1 for n in shape[int(rng.integers(len(shape))):])
        expand_b, seed = bool(rng.integers(2)), int(rng.integers(2 ** 31))
        strides = {}
        for lib in (torch, gt):
            r = np.random.default_rng(seed)
            a, b = _random_view(lib, r, shape), _random_view(lib, r, b_shape)
            if expand_b:
                b = b.expand(shape[len(shape) - len(b_shape):])
            clones = a.clone(), b.clone()   # (preserve_format: the same strides)
            strides[lib] = {name: (op(lib, a, b).stride(), op(lib, a, b).stride(), op(lib, *clones).stride())
                            for name, op in ops.items()}
        assert strides[gt] == strides[torch], (case, shape, b_shape, expand_b)


@pytest.mark.parametrize("retain", [False, True])
def test_view_regenerated_after_unsqueeze__and_a_no_grad_write_to_its_base(retain):
    # fuzz seed 796195176861: a view made in place (unsqueeze_) whose base is then written under no_grad
    # gets its graph regenerated, AsStridedBackward0 as torch's. With retain_grad() first, torch 2.13 fails
    # its own INTERNAL ASSERT (variable.cpp:207, a torch bug) reading grad_fn; glasstorch answers as torch
    # does without retain_grad, and the gradient flows back to the leaf
    results = {}
    for lib in (torch, gt):
        v0 = lib.tensor([0.5], dtype=lib.float64).requires_grad_()
        v2 = (v0 * 1).asinh()
        v3 = v2[...]
        if retain and lib is gt:
            v3.retain_grad()
        v3.unsqueeze_(-1)
        with lib.no_grad():
            v2.add_(1)
        results[lib] = type(v3.grad_fn).__name__
        if lib is gt:
            v3.sum().backward()
            assert v0.grad is not None
            np.testing.assert_allclose(v0.grad.numpy(), 1 / np.sqrt(1 + 0.25))
    assert results[gt] == results[torch] == "AsStridedBackward0"


@pytest.mark.parametrize("base_has_history", [False, True])
def test_a_write_through_a_view_of_an_expanded_base_refuses_backward_as_torch(base_has_history):
    # torch's CopySlices copies the gradient into an array of the base's geometry; a base that repeats
    # elements (a detached expand) makes that copy refuse, whether or not the base had a history
    # (fuzz seed 796330736927; an expanded *view* of a plain base refuses only when the base's history
    # needs its part: test_differences / the CopySlices docstring)
    def case(lib):
        x = _leaf(lib, 0.5, requires_grad=True)
        w = _leaf(lib, [1.0, 2.0, 3.0], requires_grad=True)
        base = x.expand(3).detach()
        if base_has_history:
            base = base * 1      # (not a detach any more: an ordinary result, no repeated element)
        base.view(-1)[2] = w.sum()
        return lib.autograd.grad(base, [w], lib.ones(3, dtype=lib.float64))[0].tolist()
    same(case)
