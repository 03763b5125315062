"""Memory planning of the generated code (glasstorch/_dynamo/memory.py): element-wise chains run in
one buffer (NumPy out=), dead buffers are reused, gradient sums go in place -- and none of it changes
a value: compiled values and gradients equal eager's bit for bit (and torch's within rounding), in
float32 and float64, with broadcasting, and a value that is returned, saved for the backward or
still read later is never written into."""
import re

import numpy as np
import pytest
import torch

import glasstorch as gt
from glasstorch._dynamo import memory
from glasstorch._dynamo.memory import Stmt, U
from test_compile import eager_weight_grads, numpy_kernels  # noqa: F401  (fixtures: eager's bits)
from test_compile import pow2_step, steps_side_by_side, tiny_transformer


def _chain(lib, x, w, b, c):        # add, mul, tanh, sub, exp one after the other: one buffer
    return (((x + b) * w).tanh() * 2.0 - c).exp().sum()


def _broadcast(lib, x, w, b, c):    # (4, 5) with (5,) and (4, 1) operands, forward and sum_to in backward
    return ((x * b + c).tanh() * (x - b) + w).sum()


def _returned(lib, x, w, b, c):     # h is returned and read again: nothing may overwrite it
    h = x * w + b
    y = (h + 1.0).tanh() * 3.0
    return y.sum() + (h * c).exp().sum(), h, y


def _shared(lib, x, w, b, c):       # w read by four matmuls and a mul: its gradient sums in place
    h = x
    for _ in range(4):
        h = lib.mm((h + b).tanh(), w)
    return (h * w + c).sum()


_CASES = {"chain": (_chain, [(4, 5), (4, 5), (5,), (4, 1)]),
          "broadcast": (_broadcast, [(4, 5), (4, 5), (5,), (4, 1)]),
          "returned": (_returned, [(4, 5), (4, 5), (4, 5), (4, 5)]),
          "shared": (_shared, [(5, 5), (5, 5), (5, 5), (5, 5)])}


def _run(lib, fn, arrays, dtype):
    ts = [lib.tensor(a.astype(dtype), requires_grad=True) for a in arrays]
    out = fn(lib, *ts)
    outs = out if isinstance(out, tuple) else (out,)
    outs[0].backward()
    return [o.detach().numpy().copy() for o in outs], [t.grad.numpy().copy() for t in ts]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", list(_CASES))
def test_planned_code_equals_eager_bit_for_bit_and_torch(case, dtype, eager_weight_grads):
    fn, shapes = _CASES[case]
    rng = np.random.default_rng(11)
    arrays = [rng.standard_normal(s) * 0.5 for s in shapes]
    compiled = gt.compile(fn)
    _run(gt, compiled, arrays, dtype)                       # the capture
    eager_vals, eager_grads = _run(gt, fn, arrays, dtype)
    kept = None
    for _ in range(3):                                      # the generated code, again and again
        vals, grads = _run(gt, compiled, arrays, dtype)
        kept = kept or vals
        for got, want in zip(vals + grads, eager_vals + eager_grads):
            assert got.dtype == want.dtype and np.array_equal(got, want)
    torch_vals, torch_grads = _run(torch, fn, arrays, dtype)
    tol = 2e-5 if dtype == "float32" else 1e-12
    for got, want in zip(vals + grads, torch_vals + torch_grads):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    code = compiled.cache[0].code
    assert "out=" in code.forward_source or case == "returned"
    assert "out=" in code.backward_source


def test_a_returned_intermediate_is_never_overwritten_by_a_later_call():
    compiled = gt.compile(_returned)
    rng = np.random.default_rng(2)
    ts = [gt.tensor(rng.standard_normal((4, 5)), requires_grad=True) for _ in range(4)]
    compiled(gt, *ts)
    first = compiled(gt, *ts)
    snapshot = [t.detach().numpy().copy() for t in first]
    first[0].backward()
    compiled(gt, *ts)[0].backward()                        # another call and backward reuse no memory of it
    for t, s in zip(first, snapshot):
        assert np.array_equal(t.detach().numpy(), s)
    forward = compiled.cache[0].code.forward_source
    assert "add = np.add(mul, arg3, out=mul)" in forward     # h may take x * w's dying array ...
    assert not re.search(r"out=add\)", forward)              # ... but is returned: kept


def test_backward_twice_with_retain_graph_reads_unchanged_saved_values(eager_weight_grads):
    compiled = gt.compile(_shared)
    rng = np.random.default_rng(4)
    ts = [gt.tensor(rng.standard_normal((5, 5)) * 0.5, requires_grad=True) for _ in range(4)]
    compiled(gt, *ts)
    loss = compiled(gt, *ts)
    loss.backward(retain_graph=True)
    once = [t.grad.numpy().copy() for t in ts]
    loss.backward()
    for t, g in zip(ts, once):
        np.testing.assert_array_equal(t.grad.numpy(), 2 * g)


def test_tanh_derivative_runs_in_one_buffer_and_weight_gradient_sums_in_place(eager_weight_grads):
    compiled = gt.compile(_shared)
    ts = [gt.randn(5, 5, requires_grad=True) for _ in range(4)]
    compiled(gt, *ts)
    backward = compiled.cache[0].code.backward_source
    assert re.search(r"np\.subtract\(1, (_t\d+), out=\1\)", backward)     # 1 - r * r into r * r's temporary
    assert backward.count("g_arg2 += ") >= 3                    # w's gradient: a sum, in place


# -- the planner alone -------------------------------------------------------------------------
def _ufunc(target, ufunc, *operands):
    return Stmt(target, "ufunc", ufunc=ufunc, operands=operands, shape=(3,), dtype="f", row_major=True)


def test_planner_writes_into_a_dying_operand_only():
    lines = memory.plan([_ufunc("a", "np.exp", "x"), _ufunc("b", "np.tanh", "a"), _ufunc("c", "np.negative", "b"),
                         Stmt([], text="return (c, )")], ["x"], {"x"}, {"x": (3,)})
    assert lines[0] == "    a = np.exp(x)"                     # x is an input: never written into
    assert "out=a" in lines[1] and "out=b" in lines[2]


def test_planner_keeps_a_buffer_while_a_view_of_it_lives():
    stmts = [_ufunc("a", "np.exp", "x"), Stmt("v", text="a.T"), _ufunc("b", "np.tanh", "a"),
             _ufunc("c", "np.negative", "v"), Stmt([], text="return (b, c, )")]
    lines = memory.plan(stmts, ["x"], {"x"}, {"x": (3,)})
    assert "out=" not in lines[2]                               # v (a view of a) is read later
    stmts[3] = _ufunc("c", "np.negative", "b")
    stmts[4] = Stmt([], text="return (c, )")
    lines = memory.plan(stmts, ["x"], {"x"}, {"x": (3,)})
    assert "out=a" in lines[2] and "out=b" in lines[3]         # nothing reads v: a may be reused


def test_planner_reuses_a_dead_buffer_of_the_same_shape_and_dtype():
    stmts = [_ufunc("a", "np.exp", "x"), _ufunc("b", "np.add", "a", "x"), Stmt("s", text="b.sum()", owned=True),
             _ufunc("c", "np.tanh", "x"), Stmt([], text="return (s, c, )")]
    lines = memory.plan(stmts, ["x"], {"x"}, {"x": (3,)})
    assert "out=a" in lines[1] and "out=a" in lines[3]        # b's (= a's) buffer is dead once summed
    other = Stmt("c", "ufunc", ufunc="np.tanh", operands=("x",), shape=(3,), dtype="d", row_major=True)
    lines = memory.plan(stmts[:3] + [other, stmts[4]], ["x"], {"x"}, {"x": (3,)})
    assert "out=" not in lines[3]                               # another dtype: a new array


def test_planner_leaves_layout_to_numpy_for_operands_of_unknown_layout():
    lines = memory.plan([Stmt("g", text="_f(x)"), _ufunc("a", "np.exp", "g"), _ufunc("b", "np.tanh", "a"),
                         Stmt([], text="return (b, )")], ["x"], {"x"}, {"x": (3,)})
    assert "out=" not in lines[1] and "out=" not in lines[2]   # _f's result may be laid out otherwise


def test_flatten_names_temporaries_and_accumulates_in_place():
    temps = iter(f"_t{k}" for k in range(10))
    stmts = memory.flatten(U("np.add", "g", U("np.multiply", "a", "b")), "g", (3,), "f", lambda: next(temps))
    stmts = [_ufunc("g", "np.exp", "x")] + stmts + [Stmt([], text="return (g, )")]
    lines = memory.plan(stmts, ["x", "a", "b"], {"x", "a", "b"}, {"x": (3,), "a": (3,), "b": (3,)})
    assert lines[1] == "    _t0 = np.multiply(a, b)" and lines[2] == "    g += _t0"


def test_planner_takes_a_reshape_of_its_own_array_for_the_array():
    # a reshape (a view, view.default/_unsafe_view lowered) of an array the code made is that array: an
    # element-wise op may run in it once nothing else reads it -- not while the original is still read,
    # and never in an input's memory
    stmts = [_ufunc("a", "np.exp", "x"), Stmt("v", text=memory.Reshape("a.reshape((3, 1))"), shape=(3, 1), dtype="f"),
             Stmt("r", "ufunc", ufunc="np.tanh", operands=("v",), shape=(3, 1), dtype="f", row_major=True),
             Stmt([], text="return (r, )")]
    lines = memory.plan(stmts, ["x"], {"x"}, {"x": (3,)})
    assert lines[2] == "    r = np.tanh(v, out=v)   # into v's memory"
    read_again = stmts[:3] + [_ufunc("s", "np.negative", "a"), Stmt([], text="return (r, s, )")]
    assert "out=" not in memory.plan(read_again, ["x"], {"x"}, {"x": (3,)})[2]
    of_input = [Stmt("v", text=memory.Reshape("x.reshape((3, 1))"), shape=(3, 1), dtype="f")] + stmts[2:]
    assert "out=" not in memory.plan(of_input, ["x"], {"x"}, {"x": (3,)})[1]


def _token_mlp(lib, seed=0):
    # Linear on a 3-d input (mm on the flattened tokens, then views): the shape of a Transformer's feed-forward
    lib.manual_seed(seed)
    return lib.nn.Sequential(lib.nn.Linear(6, 12), lib.nn.ReLU(), lib.nn.Linear(12, 6))


def _token_step(model, opt, x, y):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    return loss


@pytest.mark.parametrize("optimizer", ["sgd_momentum", "adam"])
def test_views_of_linear_on_3d_inputs_plan_in_place_and_steps_equal_eager(optimizer, eager_weight_grads):
    # view/_unsafe_view lowered to reshape: ReLU runs in the dying GEMM result's array through its view, and
    # ReLU's backward in the dying gradient's; the whole step (loss, grads, params, optimizer state) equals
    # eager's over several steps -- bit for bit with SGD, to float32 rounding with Adam (docs/compile.md)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 4, 6)).astype(np.float32)
    y = rng.standard_normal((3, 4, 6)).astype(np.float32)
    models = [_token_mlp(gt), _token_mlp(gt)]
    make = (lambda ps: gt.optim.SGD(ps, lr=0.05, momentum=0.9)) if optimizer == "sgd_momentum" else \
        (lambda ps: gt.optim.Adam(ps, lr=0.01))
    opts = [make(m.parameters()) for m in models]
    step = gt.compile(_token_step)
    exact = optimizer == "sgd_momentum"
    for _ in range(4):
        want = _token_step(models[0], opts[0], gt.tensor(x), gt.tensor(y))
        got = step(models[1], opts[1], gt.tensor(x), gt.tensor(y))
        pairs = [(got.item(), want.item())]
        for p, q in zip(models[0].parameters(), models[1].parameters()):
            pairs += [(q.grad.numpy(), p.grad.numpy()), (q.detach().numpy(), p.detach().numpy())]
            for key, value in opts[0].state[p].items():
                pairs.append((opts[1].state[q][key].numpy(), value.numpy()))
        for a, b in pairs:
            if exact:
                np.testing.assert_array_equal(a, b)
            else:
                np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    code = step.code                        # (the loss's graph, then the optimizer's, after the break)
    assert re.search(r"(view\w*) = addmm\w*\.reshape\(\(3, 4, 12\)\)", code)
    assert re.search(r"relu = np\.maximum\(_c\d+, (view\w*), out=\1\)", code)
    assert re.search(r"= _threshold_grad\((g_relu\w*), relu, out=\1\)", code)


def test_attention_q_k_v_gradients_are_written_into_the_in_projections_layout(eager_weight_grads, numpy_kernels):
    # attention's packed q, k, v (the in-projection's output viewed, transposed, cloned, then selected): their
    # gradients go into slices of one array laid out as the clone's source, so the in-projection's gradient is
    # a view of it (no np.stack, no copying reshape); a whole training step (SGD with momentum) equals eager's
    # bit for bit step after step: loss, gradients, parameters, momentum buffers
    step_fn = pow2_step
    rng = np.random.default_rng(8)
    x = rng.standard_normal((3, 5, 8)).astype(np.float32)
    models = [tiny_transformer(gt, seed=4), tiny_transformer(gt, seed=4)]
    opts = [gt.optim.SGD(m.parameters(), lr=0.01, momentum=0.9) for m in models]
    step = gt.compile(step_fn)
    for _ in steps_side_by_side(step, step_fn, models, opts, x):
        for p, q in zip(models[0].parameters(), models[1].parameters()):
            np.testing.assert_array_equal(q.grad.numpy(), p.grad.numpy())
            np.testing.assert_array_equal(q.detach().numpy(), p.detach().numpy())
            np.testing.assert_array_equal(opts[1].state[q]["momentum_buffer"].numpy(),
                                          opts[0].state[p]["momentum_buffer"].numpy())
    backward = step.code.split("# graph 2 of 2")[0].split("def backward")[1]
    assert "np.stack" not in backward
    assert re.search(r"np\.add\(g_select\w*, 0, out=(_t\d+)\[0\]\)", backward)
    assert re.search(r"g_add\w* = g_view\w*\.reshape\(\(5, 3, 24\)\)", backward)
