"""The autograd semantics, behaviour by behaviour, with real torch as the oracle.

Most tests run the same code on both libraries (``run(T)`` with ``T`` = torch or glasstorch, inputs made
from the same NumPy arrays) and compare what comes out: graph structure node for node, gradients, error
types and the key words of the messages.
"""
import gc
import os
import re
import sys
import threading
import warnings
import weakref

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import glasstorch as gt  # noqa: E402
from glasstorch.autograd.graph import Node  # noqa: E402

BOTH = pytest.mark.parametrize("T", [torch, gt], ids=["torch", "glasstorch"])
RNG = np.random.default_rng(0)


def arr(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def np_of(t):
    return t.detach().numpy()


def close(a, b, tol=1e-5):
    """a (glasstorch) and b (torch): tensors, tuples of tensors or None, equal within tol."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(close(x, y, tol) for x, y in zip(a, b))
    return np.allclose(np_of(a), np_of(b), rtol=tol, atol=tol)


def walk(t):
    """The graph below t as torch shows it: (depth, name, output_nrs of the edges), shared nodes as refs."""
    out, seen = [], {}

    def visit(fn, depth):
        if fn is None:
            out.append((depth, None))
            return
        if id(fn) in seen:
            out.append((depth, "ref", seen[id(fn)]))
            return
        seen[id(fn)] = len(seen)
        out.append((depth, fn.name(), tuple(nr for _, nr in fn.next_functions)))
        for nxt, _ in fn.next_functions:
            visit(nxt, depth + 1)
    visit(t.grad_fn, 0)
    return out


# -- graph structure ------------------------------------------------------------------------------------

def _leaves(T):
    rng = np.random.default_rng(1)

    def p(*shape, rg=True):
        return T.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=rg)
    return p


EXPRESSIONS = {
    "add_const": lambda T, p: p(3, 4) + p(3, 4, rg=False),
    "scalar_mul": lambda T, p: p(3, 4) * 2,
    "poly": lambda T, p: (lambda x: x ** 2 + 3 * x)(p(3)),
    "square_sum": lambda T, p: (lambda x: (x * x).sum())(p(3, 4)),
    "mse": lambda T, p: (p(3, 4) - p(3, 4, rg=False)).pow(2).mean(),
    "linear_relu": lambda T, p: (p(3, 4) @ p(4, 5) + p(5)).relu().sum(),
    "mlp": lambda T, p: ((p(8, 4) @ p(4, 5) + p(5)).tanh() @ p(5, 2) + p(2)).sigmoid().mean(),
    "mlp_reused_x": lambda T, p: (lambda x, w: ((x @ w).relu() @ w.t() * x).sum())(p(3, 4), p(4, 4)),
    "div_exp": lambda T, p: (lambda x: (x / (x.abs() + 1)).exp().sum())(p(3, 4)),
    "views": lambda T, p: p(3, 4).t().reshape(-1)[2:7].sum(),
    "broadcast": lambda T, p: (p(3, 4) + p(4)).sum(0),
    "reuse_cube": lambda T, p: (lambda x: (x * x * x).sum())(p(5)),
    "neg_sub": lambda T, p: (-(p(3) - 1)).sum(),
    "softmax": lambda T, p: p(3, 4).softmax(-1),
    "max_dim": lambda T, p: p(3, 4).max(1)[0],
    "cat": lambda T, p: (lambda x: T.cat([x, x * 2], 0).sum())(p(2, 3)),
    "index": lambda T, p: (lambda x: x[1].sum() + x[:, 2].sum())(p(3, 4)),
    "where_clamp": lambda T, p: (lambda x: T.where(x > 0, x, x * 0.5).clamp(min=-0.1).sum())(p(3, 4)),
    "bmm": lambda T, p: (p(2, 3, 4) @ p(2, 4, 5)).sum(),
    "batched_matmul": lambda T, p: (p(2, 3, 4) @ p(4, 5)).sum(),
    "cross_entropy_like": lambda T, p: -(p(4, 3).log_softmax(1) * p(4, 3, rg=False)).sum(1).mean(),
    "rnn_steps": lambda T, p: (lambda w, h: [h := (h @ w).tanh() for _ in range(3)][-1].sum())(p(4, 4), p(2, 4)),
}


@pytest.mark.parametrize("name", EXPRESSIONS)
def test_graph_matches_torch_node_for_node(name):
    build = EXPRESSIONS[name]
    ours, theirs = build(gt, _leaves(gt)), build(torch, _leaves(torch))
    assert walk(ours) == walk(theirs)
    assert close(ours, theirs)


def test_node_names_edges_and_accumulate_grad():
    x = gt.ones(3, requires_grad=True)
    y = x * 2
    fn = y.grad_fn
    assert fn.name() == "MulBackward0" and type(fn).__name__ == "MulBackward0"
    (acc, nr), (none, nr2) = fn.next_functions
    assert (none, nr, nr2) == (None, 0, 0)
    assert acc.name() == "torch::autograd::AccumulateGrad" and type(acc).__name__ == "AccumulateGrad"
    assert acc.variable is x and acc.next_functions == ()
    assert isinstance(fn, Node) and isinstance(acc, Node)
    assert re.fullmatch(r"<MulBackward0 object at 0x[0-9a-f]+>", repr(fn))
    # the same leaf reaches the same AccumulateGrad while the graph is alive, as in torch
    assert (x + 1).grad_fn.next_functions[0][0] is acc


@BOTH
def test_saved_values_readable_then_freed(T):
    x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = T.tensor([4.0, 5.0, 6.0], requires_grad=True)
    y = x * w
    assert np.array_equal(np_of(y.grad_fn._saved_self), [1, 2, 3])
    assert np.array_equal(np_of(y.grad_fn._saved_other), [4, 5, 6])
    e = x.exp()
    assert np.allclose(np_of(e.grad_fn._saved_result), np.exp([1, 2, 3]))
    m = T.ones(2, 3, requires_grad=True).mm(T.ones(3, 2, requires_grad=True))
    assert tuple(m.grad_fn._saved_mat2.shape) == (3, 2)
    y.sum().backward(retain_graph=True)
    assert np.array_equal(np_of(y.grad_fn._saved_self), [1, 2, 3])  # retained
    y.sum().backward()
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        y.grad_fn._saved_self


# -- leaves, requires_grad, .grad ------------------------------------------------------------------------

@BOTH
def test_is_leaf_and_requires_grad_propagation(T):
    x = T.ones(2, requires_grad=True)
    c = T.ones(2)
    assert x.is_leaf and c.is_leaf and x.grad_fn is None
    y = x + c
    assert y.requires_grad and not y.is_leaf
    z = c * 2
    assert not z.requires_grad and z.is_leaf and z.grad_fn is None
    with T.no_grad():
        w = x * 2
    assert not w.requires_grad and w.is_leaf
    assert c.requires_grad_() is c and c.requires_grad and c.is_leaf


@BOTH
def test_requires_grad_errors(T):
    y = T.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        y.requires_grad_(False)
    y.requires_grad_(True)  # allowed: already True
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
        T.ones(2, dtype=T.int64).requires_grad_()
    with pytest.raises(RuntimeError, match="only Tensors of floating point and complex dtype can require gradients"):
        T.ones(2, dtype=T.int64).requires_grad = True


@BOTH
def test_grad_allocated_on_first_accumulation_and_accumulated(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    assert x.grad is None
    (x * x).sum().backward()
    first = x.grad
    assert np.array_equal(np_of(first), [2, 4])
    (x * 3).sum().backward()
    assert np.array_equal(np_of(x.grad), [5, 7])
    assert x.grad is first  # accumulated in place into the same tensor
    x.grad = None
    x.sum().backward()
    assert np.array_equal(np_of(x.grad), [1, 1])


@BOTH
def test_nonleaf_grad_is_none_with_warning_and_retain_grad(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    z = y * y
    y2 = x + 0
    y2.retain_grad()
    assert y2.retains_grad and not y.retains_grad
    (z.sum() + y2.sum()).backward(retain_graph=True)
    with pytest.warns(UserWarning, match="not a leaf Tensor is being accessed"):
        assert y.grad is None
    assert np.array_equal(np_of(y2.grad), [1, 1])
    (z.sum() + y2.sum()).backward()
    assert np.array_equal(np_of(y2.grad), [2, 2])  # retained gradients accumulate too
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y2.grad  # no warning once retained
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"):
        T.ones(2).retain_grad()


# -- backward() ------------------------------------------------------------------------------------------

@BOTH
def test_backward_non_scalar_needs_gradient(T):
    x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        y.backward()
    y.backward(T.tensor([1.0, 0.1, 0.01]))
    assert np.allclose(np_of(x.grad), [2, 0.4, 0.06])
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (x * x).backward(T.ones(2))


@BOTH
def test_backward_without_grad_raises(T):
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does not have a grad_fn"):
        (T.ones(2) * 2).sum().backward()


@BOTH
def test_second_backward_raises_unless_retained(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert np.array_equal(np_of(x.grad), [4, 8])
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()
    # a graph whose nodes saved nothing can be walked twice (as in torch)
    s = (x + 1).sum()
    s.backward()
    s.backward()


def test_deep_chain_is_iterative():
    x = gt.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(10_000):
        y = y * 1.0001
    y.sum().backward()  # a recursive engine overflows Python's stack here
    assert np.allclose(x.grad.numpy(), [1.0001 ** 10_000], rtol=1e-3)
    del y
    z = x
    for _ in range(10_000):
        z = z + 1
    del z  # freeing a deep graph must not overflow the stack either


def _execution_order(T, build):
    """Names of the nodes in the order backward runs them (a prehook fires each time a node runs)."""
    order, ran = [], []
    out = build(T)
    seen, stack = set(), [out.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        if fn.name() != "torch::autograd::AccumulateGrad":
            fn.register_prehook(lambda g, fn=fn: order.append(fn.name()) or ran.append(fn))
        stack.extend(n for n, _ in fn.next_functions)
    out.backward()
    assert len(ran) == len({id(f) for f in ran}) == len(seen) - sum(
        f.name() == "torch::autograd::AccumulateGrad" for f in seen)  # every node ran, and once
    return order


ORDER_GRAPHS = {
    "diamond": lambda T: (lambda x: (lambda a: (a.exp() * a.sin()).sum())(x * 2))(T.ones(3, requires_grad=True)),
    "mlp": lambda T: ((T.ones(2, 3, requires_grad=True) @ T.ones(3, 4, requires_grad=True)).tanh()
                      @ T.ones(4, 1, requires_grad=True)).sigmoid().sum(),
    "fan": lambda T: (lambda x: (x.exp() + x.cos() + x.sin() * x.tanh()).sum())(T.ones(3, requires_grad=True)),
}


@pytest.mark.parametrize("name", ORDER_GRAPHS)
def test_each_node_runs_once_after_its_consumers_in_torch_order(name):
    assert _execution_order(gt, ORDER_GRAPHS[name]) == _execution_order(torch, ORDER_GRAPHS[name])


@BOTH
def test_a_node_the_engine_need_not_run_keeps_its_saved_values(T):
    """autograd.grad (and backward(inputs=...)) without retain_graph frees what ran, not a node it skipped
    because no requested input lies behind it: a later grad through that node still works (torch's engine
    returns from a node it does not need before releasing anything). backward(inputs=[a non-leaf]) runs
    that tensor's own node, as torch's does (its needed_ is set on every output edge), and frees it."""
    x = T.tensor([1.0, 2.0], requires_grad=True)
    a = (x * 2).exp()                    # ExpBackward0, MulBackward0: behind `a`, not needed for grad(y, a)
    y = (a * 3).sin().sum()
    (ga,) = T.autograd.grad(y, [a])
    assert np.allclose(np_of(ga), 3 * np.cos(3 * np.exp(2 * np.array([1.0, 2.0]))))
    (gx,) = T.autograd.grad(a.sum(), [x])
    assert np.allclose(np_of(gx), 2 * np.exp(2 * np.array([1.0, 2.0])))
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        (y * 1).backward()               # (what did run was freed)
    w = T.tensor([3.0, 4.0], requires_grad=True)
    m = x * w
    b = m.exp()
    ran = []
    b.grad_fn.register_hook(lambda grad_inputs, grad_outputs: ran.append("exp"))
    m.grad_fn.register_hook(lambda grad_inputs, grad_outputs: ran.append("mul"))
    (b * b).sum().backward(inputs=[b])
    assert ran == ["exp"] and x.grad is None and w.grad is None
    m.sum().backward()                   # (m's node did not run: its saved x and w are there)
    assert np.allclose(np_of(x.grad), [3.0, 4.0]) and np.allclose(np_of(w.grad), [1.0, 2.0])
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        b.sum().backward()               # (b's node ran, and was freed)


def test_backward_inputs_accumulates_only_into_those():
    assert close(_backward_inputs(gt), _backward_inputs(torch))


def _backward_inputs(T):
    a = T.tensor([1.0, 2.0], requires_grad=True)
    b = T.tensor([3.0, 4.0], requires_grad=True)
    h = a * b
    h.retain_grad()
    (h * h).sum().backward(inputs=[a], retain_graph=True)
    assert b.grad is None and np.array_equal(np_of(a.grad), [18, 64])
    (h * h).sum().backward(inputs=[h, b], retain_graph=True)
    assert np.array_equal(np_of(b.grad), [6, 32]) and np.array_equal(np_of(a.grad), [18, 64])
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"):
        (a * 2).sum().backward(inputs=[T.ones(2)])
    k = a * 3  # a non-leaf input that does not retain its grad
    (k * k).sum().backward(inputs=[k])
    return a.grad, b.grad, h.grad, k.grad


# -- autograd.grad and higher order ----------------------------------------------------------------------

def _grad_cases(T):
    x = T.tensor([0.5, -1.0, 2.0], requires_grad=True)
    w = T.tensor([1.5, 0.25, -2.0], requires_grad=True)
    y = (x * w).sin().sum() + (x ** 3).sum()
    gx, gw = T.autograd.grad(y, (x, w), create_graph=True)
    assert gx.requires_grad and x.grad is None  # nothing accumulated
    (gxx,) = T.autograd.grad(gx.sum(), x, create_graph=True)
    (gxxx,) = T.autograd.grad(gxx.sum(), x)
    v = T.autograd.grad(x * x, x, grad_outputs=T.tensor([1.0, 2.0, 3.0]))
    return gx, gw, gxx, gxxx, v[0]


def test_autograd_grad_and_higher_order_match_torch():
    assert close(_grad_cases(gt), _grad_cases(torch))


@BOTH
def test_autograd_grad_unused_and_errors(T):
    x = T.ones(2, requires_grad=True)
    u = T.ones(2, requires_grad=True)
    y = (x * 2).sum()
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        T.autograd.grad(y, (x, u), retain_graph=True)
    gx, gu = T.autograd.grad(y, (x, u), allow_unused=True, retain_graph=True)
    assert gu is None and np.array_equal(np_of(gx), [2, 2])
    gx, gu = T.autograd.grad(y, (x, u), materialize_grads=True)
    assert np.array_equal(np_of(gu), [0, 0])
    with pytest.raises(RuntimeError, match="does not require grad"):
        T.autograd.grad((x * 2).sum(), T.ones(2))


def test_functional_jacobian_and_hessian_match_torch():
    a, b = arr(3), arr(3)

    def f(T):
        return lambda x, y: (x * y.exp()).tanh() + x ** 2

    def g(T):
        return lambda x: (x.sin() * x).sum() + (x ** 3).sum()
    for T_fn, ref in ((gt, torch),):
        J = gt.autograd.functional.jacobian(f(gt), (gt.tensor(a), gt.tensor(b)))
        Jt = torch.autograd.functional.jacobian(f(torch), (torch.tensor(a), torch.tensor(b)))
        assert close(J, Jt)
        H = gt.autograd.functional.hessian(g(gt), gt.tensor(a))
        Ht = torch.autograd.functional.hessian(g(torch), torch.tensor(a))
        assert tuple(H.shape) == (3, 3) and close(H, Ht, 1e-4)
        assert not H.requires_grad


def test_create_graph_backward_gives_differentiable_grad():
    def run(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (x ** 3).sum().backward(create_graph=True)
        g = x.grad
        assert g.requires_grad
        (gg,) = T.autograd.grad(g.sum(), x)
        return g, gg
    assert close(run(gt), run(torch))


# -- grad modes ------------------------------------------------------------------------------------------

@BOTH
def test_grad_modes_as_context_managers_and_decorators(T):
    x = T.ones(2, requires_grad=True)
    assert T.is_grad_enabled()
    with T.no_grad():
        assert not T.is_grad_enabled() and not (x * 2).requires_grad
        with T.enable_grad():
            assert (x * 2).requires_grad
        assert not T.is_grad_enabled()
    with T.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert T.is_grad_enabled()
    T.set_grad_enabled(False)  # as a plain function
    assert not T.is_grad_enabled()
    T.set_grad_enabled(True)
    with T.inference_mode():
        assert not (x * 2).requires_grad and T.is_inference_mode_enabled()
    assert not T.is_inference_mode_enabled()

    @T.no_grad()
    def f(t):
        return t * 2

    @T.enable_grad()
    def g(t):
        return t * 2

    @T.inference_mode()
    def h(t):
        return t * 2
    assert not f(x).requires_grad and not h(x).requires_grad
    with T.no_grad():
        assert g(x).requires_grad

    @T.no_grad()
    def gen():
        yield (x * 2).requires_grad
    assert list(gen()) == [False] and T.is_grad_enabled()


@BOTH
def test_grad_mode_is_thread_local(T):
    seen = {}
    inside = threading.Event()
    release = threading.Event()

    def worker():
        seen["worker"] = T.is_grad_enabled()
        seen["worker_result"] = (T.ones(1, requires_grad=True) * 2).requires_grad
        inside.set()
        release.wait(5)
    with T.no_grad():
        th = threading.Thread(target=worker)
        th.start()
        inside.wait(5)
        seen["main"] = T.is_grad_enabled()
        release.set()
        th.join()
    assert seen == {"worker": True, "worker_result": True, "main": False}


@BOTH
def test_grad_mode_off_in_another_thread_leaves_the_main_threads_on(T):
    # (the main thread's mode is also kept process-wide for the ops' hot paths: grad_mode.main_grad)
    x = T.ones(4, 4, requires_grad=True)
    seen = {}
    inside, release = threading.Event(), threading.Event()

    def worker():
        with T.no_grad():
            seen["worker"] = [(x + x).requires_grad, x.tanh().requires_grad, (x @ x).requires_grad]
            inside.set()
            release.wait(5)
        seen["worker_after"] = (x * x).requires_grad
    th = threading.Thread(target=worker)
    th.start()
    inside.wait(5)
    seen["main"] = [(x + x).requires_grad, x.tanh().requires_grad, (x @ x).requires_grad, T.is_grad_enabled()]
    release.set()
    th.join()
    with T.no_grad():
        seen["main_no_grad"] = [(x + x).requires_grad, (x @ x).requires_grad]
    assert seen == {"worker": [False] * 3, "worker_after": True, "main": [True] * 4, "main_no_grad": [False] * 2}



@BOTH
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_grad_mode_in_a_child_forked_from_another_thread(T):
    # (the forking thread is the child's only thread: the process-wide copy of the main thread's mode must
    # stand for it there, or the child's no_grad would not be seen by the ops' hot paths)
    x = T.ones(3, 3, requires_grad=True)
    read_end, write_end = os.pipe()
    forked = {}

    def fork_here():
        pid = os.fork()
        if pid:
            forked["pid"] = pid
            return
        try:
            seen = [(x * x).requires_grad, (x @ x).requires_grad]
            with T.no_grad():
                seen += [(x * x).requires_grad, (x @ x).requires_grad, x.tanh().requires_grad]
            seen.append((x + x).requires_grad)
            if T is gt:             # (and the hot paths' copy now names this thread: it is the child's main)
                seen.append(gt.autograd.grad_mode.main_grad.thread == threading.get_ident()
                            and gt.autograd.grad_mode.main_mark._is_owned())
            os.write(write_end, repr(seen).encode())
        finally:
            os._exit(0)
    with T.no_grad():               # (the parent's main thread is in no_grad while the other thread forks)
        th = threading.Thread(target=fork_here)
        th.start()
        th.join()
    os.close(write_end)
    with os.fdopen(read_end) as f:
        reported = f.read()
    os.waitpid(forked["pid"], 0)
    assert reported == repr([True, True, False, False, False, True] + ([True] if T is gt else []))
    assert (x * x).requires_grad


def test_grad_mode_when_another_thread_imports_glasstorch():
    # (the hot paths' mark of the main thread is taken only by the main thread: imported elsewhere, every
    # thread reads its own mode, and the main thread's no_grad still holds)
    import subprocess
    import sys
    code = (
        "import threading\n"
        "t = threading.Thread(target=lambda: __import__('glasstorch')); t.start(); t.join()\n"
        "import glasstorch as gt\n"
        "x = gt.ones(3, 3, requires_grad=True)\n"
        "seen = [gt.autograd.grad_mode.main_mark._is_owned(), (x + x).requires_grad]\n"
        "with gt.no_grad():\n"
        "    seen += [(x + x).requires_grad, (x @ x).requires_grad, x.tanh().requires_grad]\n"
        "print(seen)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "[False, True, False, False, False]", out.stderr


# -- detach, clone, .data, versions, in-place ------------------------------------------------------------

@BOTH
def test_detach_clone_data(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.is_leaf and d.data_ptr() == y.data_ptr()
    assert d._version == y._version
    c = y.clone()
    assert c.grad_fn.name() == "CloneBackward0" and c.data_ptr() != y.data_ptr()
    c.sum().backward()
    assert np.array_equal(np_of(x.grad), [2, 2])
    data = x.data
    assert not data.requires_grad and data.data_ptr() == x.data_ptr()
    data.mul_(10)  # escapes autograd and version tracking
    assert np.array_equal(np_of(x), [10, 20]) and x._version == 0
    z = x * 1
    z.detach_()
    assert not z.requires_grad and z.grad_fn is None


@BOTH
def test_version_counter_shared_by_views(T):
    x = T.zeros(2, 3)
    v = x[0]
    w = x.view(6)
    t = x.t()
    assert x._version == v._version == 0
    v.add_(1)
    assert x._version == w._version == t._version == v._version == 1
    w.mul_(2)
    assert x._version == 2
    assert np.array_equal(np_of(x), [[2, 2, 2], [0, 0, 0]])  # written through the views
    c = x.clone()
    c.add_(1)
    assert x._version == 2 and c._version == 1


def test_inplace_on_saved_value_names_op_and_line():
    for T in (torch, gt):
        a = T.tensor([1.0, 2.0], requires_grad=True)
        b = a.exp()  # saves its result
        b.mul_(2); line = sys._getframe().f_lineno  # noqa: E702
        with pytest.raises(RuntimeError) as info:
            b.sum().backward()
        msg = str(info.value)
        assert "one of the variables needed for gradient computation has been modified by an inplace operation" \
            in msg
        assert "[torch.FloatTensor [2]], which is output 0 of Exp, is at version 1; expected version 0 instead" in msg
    assert "mul_()" in msg and f"{__file__}:{line}" in msg and "_saved_result" in msg


def test_inplace_on_saved_input_through_a_view_is_caught():
    for T in (torch, gt):
        a = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        x = a * 1
        y = x.sin()  # saves x
        x[1:].zero_() if hasattr(x, "zero_") else x[1:].mul_(0)
        with pytest.raises(RuntimeError, match=r"modified by an inplace operation.*is at version 1; expected version 0"):
            y.sum().backward()


@BOTH
def test_inplace_on_leaf_requiring_grad_raises(T):
    x = T.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        x.add_(1)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in an in-place"):
        x[0:1].mul_(2)
    with T.no_grad():
        x.add_(1)  # allowed: what optimizers do
    assert np.array_equal(np_of(x), [2, 2]) and x.is_leaf and x._version == 1


@BOTH
def test_inplace_on_nonleaf_records_and_bumps(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    y.mul_(3)
    assert y.grad_fn.name() == "MulBackward0" and y._version == 1
    y.exp_()
    assert y.grad_fn.name() == "ExpBackward0"
    y.sum().backward()
    assert np.allclose(np_of(x.grad), 3 * np.exp([3, 6]))


# -- hooks -----------------------------------------------------------------------------------------------

def _hooks(T):
    calls = []
    x = T.tensor([1.0, 2.0], requires_grad=True)
    h_leaf = x.register_hook(lambda g: calls.append(("leaf", g.tolist())) or g * 10)
    y = x * x
    y.register_hook(lambda g: calls.append(("y", g.tolist())))
    y.register_hook(lambda g: g + 1)
    x.register_post_accumulate_grad_hook(lambda t: calls.append(("post", t.grad.tolist())))
    y.sum().backward()
    h_leaf.remove()
    (x * 1).sum().backward()
    return calls, x.grad


def test_tensor_hooks_match_torch():
    ours, theirs = _hooks(gt), _hooks(torch)
    assert ours[0] == theirs[0]
    assert close(ours[1], theirs[1])


@BOTH
def test_hook_errors(T):
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        T.ones(2).register_hook(lambda g: g)
    y = T.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on non-leaf tensors"):
        y.register_post_accumulate_grad_hook(lambda t: None)


@BOTH
def test_node_hooks(T):
    calls = []
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    h = y.grad_fn.register_hook(lambda gi, go: calls.append((len(gi), len(go))))
    y.grad_fn.register_prehook(lambda go: (go[0] * 2,))
    y.sum().backward()
    assert calls == [(2, 1)] and np.array_equal(np_of(x.grad), [6, 6])
    h.remove()


# -- autograd.Function -----------------------------------------------------------------------------------

def _functions(T):
    class Exp(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            r = x.exp()
            ctx.save_for_backward(r)
            return r

        @staticmethod
        def backward(ctx, g):
            (r,) = ctx.saved_tensors
            return g * r

    class ScaleBy(T.autograd.Function):  # setup_context style, a non-tensor argument
        @staticmethod
        def forward(x, k):
            return x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.k = inputs[1]

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None

    class SortLike(T.autograd.Function):  # two outputs, one non-differentiable
        @staticmethod
        def forward(ctx, x):
            idx = T.argsort(x)
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(idx)
            return x[idx], idx

        @staticmethod
        def backward(ctx, g, _):
            (idx,) = ctx.saved_tensors
            out = T.zeros_like(g)
            out[idx] = g
            return out

    class MulAdd(T.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.needs = ctx.needs_input_grad
            ctx.save_for_backward(a, b)
            return a * b + a

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return (g * (b + 1) if ctx.needs_input_grad[0] else None), (g * a if ctx.needs_input_grad[1] else None)

    x = T.tensor([0.5, -1.0, 2.0], requires_grad=True)
    c = T.tensor([1.0, 2.0, 3.0])
    y = Exp.apply(x)
    z = ScaleBy.apply(y, 3.0)
    s, idx = SortLike.apply(z)
    m = MulAdd.apply(s, c)
    m.sum().backward()
    names = [y.grad_fn.name(), z.grad_fn.name(), s.grad_fn.name(), m.grad_fn.name()]
    flags = (idx.requires_grad, m.grad_fn.needs, type(y.grad_fn).__name__, len(m.grad_fn.next_functions))
    return names, flags, x.grad


def test_custom_function_matches_torch():
    (n1, f1, g1), (n2, f2, g2) = _functions(gt), _functions(torch)
    assert n1 == n2 == ["ExpBackward", "ScaleByBackward", "SortLikeBackward", "MulAddBackward"]
    assert f1 == f2
    assert close(g1, g2)


@BOTH
def test_custom_function_mark_dirty_and_once_differentiable(T):
    class AddOne_(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        @T.autograd.function.once_differentiable
        def backward(ctx, g):
            return g

    a = T.ones(2, requires_grad=True)
    b = a * 2
    v = b._version
    out = AddOne_.apply(b)
    assert out is b and b._version > v and b.grad_fn.name() == "AddOne_Backward"
    (out * out).sum().backward()
    assert np.array_equal(np_of(a.grad), [12, 12])
    assert np.array_equal(np_of(b.detach()), [3, 3])


@BOTH
def test_custom_function_saved_tensor_freed_and_version_checked(T):
    class Sq(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * g * x
    a = T.ones(2, requires_grad=True)
    h = a * 1
    y = Sq.apply(h)
    h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    y = Sq.apply(a)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time|after they have already been freed"):
        y.sum().backward()


# -- gradcheck -------------------------------------------------------------------------------------------

def test_gradcheck_and_gradgradcheck():
    x = gt.tensor(arr(3).astype(np.float64), requires_grad=True)
    w = gt.tensor(arr(3).astype(np.float64), requires_grad=True)
    f = lambda a, b: (a * b.exp()).tanh()  # noqa: E731
    assert gt.autograd.gradcheck(f, (x, w))
    assert gt.autograd.gradgradcheck(f, (x, w))

    class Wrong(gt.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return g * a  # should be 2 * g * a
    assert not gt.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False)
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        gt.autograd.gradcheck(Wrong.apply, (x,))


# -- anomaly detection -----------------------------------------------------------------------------------

def test_detect_anomaly_names_the_forward_op_and_its_line():
    x = gt.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with gt.autograd.detect_anomaly():
            y = x.sqrt(); line = sys._getframe().f_lineno  # noqa: E702
            with pytest.raises(RuntimeError, match=r"Function 'SqrtBackward0' returned nan values in its 0th output") \
                    as info:
                (y * 0).sum().backward()
    assert f"line {line}" in str(info.value) and "x.sqrt()" in str(info.value)
    assert not gt.is_anomaly_enabled()
    with gt.autograd.set_detect_anomaly(True):
        assert gt.is_anomaly_enabled()
    assert not gt.is_anomaly_enabled()
    # torch raises the same error for the same graph
    xt = torch.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autograd.detect_anomaly():
            with pytest.raises(RuntimeError, match=r"Function 'SqrtBackward0' returned nan values in its 0th output"):
                (xt.sqrt() * 0).sum().backward()


# -- memory: the graph lives only as long as something refers to it -------------------------------------

def test_graph_is_freed_without_the_cycle_collector():
    w = gt.tensor(arr(4, 4), requires_grad=True)
    x = gt.tensor(arr(8, 4))
    refs = []
    gc.disable()
    try:
        for _ in range(50):
            h = (x @ w).tanh()
            loss = (h * h).mean()
            refs += [weakref.ref(loss.grad_fn), weakref.ref(h.grad_fn)]
            loss.backward()
            del loss, h
        assert all(r() is None for r in refs)  # freed by reference counting alone
        h = (x @ w).exp()
        ref = weakref.ref(h.grad_fn)  # ExpBackward0 saves its own result: no result -> node -> result cycle
        del h
        assert ref() is None
    finally:
        gc.enable()


def test_memory_stays_flat_over_many_training_steps():
    import tracemalloc
    w1 = gt.tensor(arr(4, 16), requires_grad=True)
    w2 = gt.tensor(arr(16, 1), requires_grad=True)
    x, t = gt.tensor(arr(32, 4)), gt.tensor(arr(32, 1))

    def step():
        loss = (((x @ w1).relu() @ w2 - t) ** 2).mean()
        loss.backward()
        with gt.no_grad():
            for p in (w1, w2):
                p -= 0.01 * p.grad
                p.grad = None
    def census():
        objs = gc.get_objects()
        return len(objs), sum(issubclass(type(o), Node) for o in objs), sum(issubclass(type(o), gt.Tensor) for o in objs)
    for _ in range(50):
        step()
    before = census()
    tracemalloc.start()
    try:
        for _ in range(1000):
            step()
        base = tracemalloc.get_traced_memory()[0]
        for _ in range(1000):
            step()
        grown = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    after = census()
    assert after[1] <= before[1] and after[2] <= before[2], (before, after)  # no node or tensor left behind
    assert after[0] <= before[0] + 10, (before, after)
    # a leaked graph would be ~10 KB a step here; CPython's free lists account for the slack
    assert grown < 48 * 1024, grown


# -- AccumulateGrad: steal a fresh gradient, copy a shared one -------------------------------------------

@BOTH
def test_gradient_shared_by_two_leaves_is_copied(T):
    a = T.ones(3, requires_grad=True)
    b = T.ones(3, requires_grad=True)
    (a + b).sum().backward()
    a.grad.add_(1)
    assert np.array_equal(np_of(b.grad), [1, 1, 1])

    class Twice(T.autograd.Function):  # the same array under two tensor objects
        @staticmethod
        def forward(ctx, p, q):
            return p + q

        @staticmethod
        def backward(ctx, g):
            return g.detach(), g.detach()
    c = T.ones(3, requires_grad=True)
    d = T.ones(3, requires_grad=True)
    Twice.apply(c, d).sum().backward()
    c.grad.mul_(5)
    assert np.array_equal(np_of(d.grad), [1, 1, 1])
    # a user's gradient tensor is not adopted as .grad
    e = T.ones(3, requires_grad=True)
    g = T.ones(3)
    e.backward(g)
    g.add_(1)
    assert np.array_equal(np_of(e.grad), [1, 1, 1])
    # a gradient kept by a hook is not adopted either
    kept = []
    f = T.ones(3, requires_grad=True)
    f.register_hook(lambda gr: kept.append(gr))
    (f * 2).sum().backward()
    f.grad.add_(1)
    assert np.array_equal(np_of(kept[0]), [2, 2, 2])


def test_fresh_gradient_is_stolen_not_copied():
    ptrs = []

    class Fresh(gt.autograd.Function):
        @staticmethod
        def forward(ctx, p):
            return p * 1

        @staticmethod
        def backward(ctx, g):
            out = g * 3
            ptrs.append(out.data_ptr())
            return out
    a = gt.ones(1000, requires_grad=True)
    Fresh.apply(a).sum().backward()
    assert a.grad.data_ptr() == ptrs[0]


def test_a_private_view_in_the_leafs_layout_is_taken_over_not_copied():
    # nn.Linear's weight gradient reaches AccumulateGrad as t() of mm_mat2_backward's transposed product: a
    # view of a row-major array of the weight's shape that nothing else refers to. That array becomes .grad.
    from glasstorch.autograd.engine import _private_array
    w = gt.ones(3, 5)
    grads = [np.ones((3, 5), np.float32).T.T]
    assert _private_array(grads, w) is grads[0].base
    p = np.ones((3, 5), np.float32)              # the product also seen elsewhere: not private
    grads = [p.T.T]
    assert _private_array(grads, w) is None
    del p
    bits = np.zeros((3, 5), np.int32)            # a view as another dtype (a bitwise formula's result)
    grads = [bits.view(np.float32)]
    del bits
    assert _private_array(grads, w) is None
    grads = [np.ones((15,), np.float32).reshape(3, 5)]   # another shape: its base is not the leaf's shape
    assert _private_array(grads, w) is None
    grads = [np.ones((3, 5), np.float32)]        # an array of its own: itself
    assert _private_array(grads, w) is grads[0]
    grads = [np.ones((3, 5), np.float64)]        # another dtype than the leaf's
    assert _private_array(grads, w) is None


def test_linear_weight_gradient_is_the_transposed_product_taken_over():
    # end to end: the weight's .grad is an array of its own (the product), row-major, with torch's values
    x = np.random.default_rng(0).standard_normal((6, 5)).astype(np.float32)
    for lib in (gt, torch):
        layer = lib.nn.Linear(5, 3)
        with lib.no_grad():
            layer.weight.copy_(lib.tensor(np.arange(15, dtype=np.float32).reshape(3, 5) / 10))
            layer.bias.zero_()
        layer(lib.tensor(x)).square().sum().backward()
        assert layer.weight.grad.stride() == (5, 1)
        if lib is gt:
            assert layer.weight.grad._data.base is None and layer.weight.grad._data.flags.owndata
            got = layer.weight.grad.numpy()
    np.testing.assert_allclose(got, layer.weight.grad.numpy(), rtol=1e-5)


def test_create_graph_grads_of_two_leaves_are_distinct():
    a = gt.ones(3, requires_grad=True)
    b = gt.ones(3, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (a + b).sum().backward(create_graph=True)
    assert a.grad is not b.grad and a.grad.data_ptr() != b.grad.data_ptr()


# -- in-place ops on views: the base's history is rewritten (CopySlices), as in torch --------------------

def _views_modified(T):
    a = T.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    b = T.tensor([0.5, -1.0], requires_grad=True)
    x = a * 1
    v, w = x[1:3], x[:2]    # w: another view of the same base, made before the write
    v.mul_(2)
    v.add_(b)
    y = (x * x).sum() + (w * 3).sum() + v.exp().sum()
    z = T.zeros(3)          # a base that does not require grad gets history through its view
    z[1:].add_(b)
    c = T.tensor([1.0, 2.0], requires_grad=True)
    u = (c * 1).view(2)
    u.exp_()
    total = y + z.sum() + u.sum() * 0 + (c * 1).unsqueeze(0)[0].tanh_().sum()
    total.backward()
    return total, [walk(t) for t in (x, v, w, z, u)], (a.grad, b.grad, c.grad)


def test_inplace_on_view_rewrites_the_base_history_like_torch():
    ours, theirs = _views_modified(gt), _views_modified(torch)
    assert close(ours[0], theirs[0])
    assert ours[1] == theirs[1]
    assert ours[1][0][0][1] == "torch::autograd::CopySlices" and ours[1][1][0][1] == "AsStridedBackward0"
    assert close(ours[2], theirs[2])


@BOTH
def test_inplace_view_errors(T):
    x = T.ones(3, requires_grad=True) * 1
    with pytest.raises(RuntimeError, match="Output 1 of Unbind is a view and is being modified inplace"):
        x.unbind(0)[1].mul_(2)
    with T.no_grad():
        v = x[1:]
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode and is being modified inplace"):
        v.mul_(2)
    leafview = T.arange(6.0).reshape(2, 3).requires_grad_()
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        leafview[0].mul_(2)


def _hooks_with_autograd_grad(T):
    out = []

    @T.set_grad_enabled(False)
    def f(x):
        return (x * 2).requires_grad
    x = T.ones(2, requires_grad=True)
    out += [f(x), T.is_grad_enabled()]
    calls = []
    x.register_hook(lambda g: calls.append(1) or g * 10)  # a leaf's hook also runs for autograd.grad
    (g,) = T.autograd.grad((x * 3).sum(), x)
    out += [g.tolist(), len(calls)]
    y = x * 2
    y.register_hook(lambda g: g * 100)  # the captured gradient of a non-leaf is the hooked one
    (gy,) = T.autograd.grad((y * 3).sum(), y)
    z = x * 2
    z.retain_grad()
    T.autograd.grad((z * 3).sum(), x)
    x2 = T.tensor([2.0], requires_grad=True)
    (d,) = T.autograd.grad(x2 ** 3, x2, create_graph=True)
    d.backward()  # backward through a gradient
    return out + [gy.tolist(), z.grad.tolist(), x2.grad.tolist()]


def test_hooks_and_retained_grads_under_autograd_grad_match_torch():
    assert _hooks_with_autograd_grad(gt) == _hooks_with_autograd_grad(torch)


@BOTH
def test_assigning_grad(T):
    x = T.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"attempting to assign a gradient of size '\[3\]' to a tensor of size '\[2\]'"):
        x.grad = T.ones(3)
    with pytest.raises(RuntimeError, match="attempting to assign a gradient with dtype 'double' to a tensor with "
                                           "grad_dtype 'Float'"):
        x.grad = T.ones(2, dtype=T.float64)
    with pytest.raises(TypeError, match="assigned grad expected to be a Tensor or None but got grad of type list"):
        x.grad = [1.0, 2.0]
    x.grad = T.full((2,), 3.0)
    x.sum().backward()  # accumulates into the assigned tensor
    assert x.grad.tolist() == [4.0, 4.0]
    del x.grad
    assert x.grad is None


def test_gradcheck_perturbs_non_contiguous_inputs():
    x = gt.randn(3, 4, dtype=gt.float64).t().requires_grad_()
    assert gt.autograd.gradcheck(lambda a: (a * a).sum(1), (x,))
    wrong = lambda a: WrongSquare.apply(a).sum(1)  # noqa: E731
    assert not gt.autograd.gradcheck(wrong, (x,), raise_exception=False)


class WrongSquare(gt.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * a  # missing the factor 2


@pytest.mark.parametrize("lib", [torch, gt], ids=["torch", "glasstorch"])
def test_an_accumulated_gradient_it_cannot_take_over_gets_the_leafs_layout(lib):
    # AccumulateGrad copies a gradient it cannot steal (here the transposed view mm's backward makes, under a
    # dispatch mode, where the engine works on Tensors) with the leaf's strides: torch's clone_obey_contract.
    # (torch.compile's capture run is such a backward: its Adam graph then reads row-major gradients, as later
    # calls give them)
    import importlib
    dispatch = importlib.import_module(lib.__name__ + ".utils._python_dispatch")

    class PassThrough(dispatch.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))
    x = lib.ones(5, 4)
    w = lib.ones(8, 4, requires_grad=True)
    wt = lib.ones(4, 8).t().detach().requires_grad_()      # a leaf laid out column-major
    with PassThrough():
        (x @ w.t()).sum().backward()
        (x @ wt.t()).sum().backward()
    assert w.grad.stride() == (4, 1) and wt.grad.stride() == (1, 8)
    assert w.grad.sum().item() == wt.grad.sum().item() == 160.0
