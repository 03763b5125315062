"""The plain case of an op (``defop(plain=Plain(...))``) and the one-frame entries of the public
functions declared ``overridable(direct=op)`` (``_ops_codegen.entry_lines``): the same values,
graphs, errors and calls as the op's general path, in one Python frame when nothing is installed."""
import sys
import threading

import numpy as np
import pytest
import torch

import glasstorch as gt
from glasstorch import _seam
from glasstorch._tensor import _wrap, layout_facts
from one_device import device_rule_off


def _pair(lib, dtype, shape=(4, 5), requires_grad=False, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(shape).astype(dtype) for _ in range(2)]
    return [lib.tensor(a, requires_grad=requires_grad) for a in arrays]


_BINARY = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
           "add alpha": lambda a, b: a.add(b, alpha=2), "torch.sub": lambda a, b: a.sub(b),
           "matmul": lambda a, b: a @ b.t().contiguous(), "mm": lambda a, b: a.mm(b.t().contiguous()),
           "tanh": lambda a, b: a.tanh() * b, "relu": lambda a, b: a.relu() + b, "exp": lambda a, b: (a * 0.1).exp() - b,
           "sigmoid": lambda a, b: a.sigmoid() * b, "neg": lambda a, b: -a + b, "div": lambda a, b: a / (b * b + 1)}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", list(_BINARY))
def test_plain_calls_match_torch_forward_backward_and_nodes(name, dtype):
    f = _BINARY[name]
    (x, y), (tx, ty) = _pair(gt, dtype, requires_grad=True), _pair(torch, dtype, requires_grad=True)
    out, tout = f(x, y), f(tx, ty)
    assert type(out.grad_fn).__name__ == type(tout.grad_fn).__name__
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert out.dtype == gt.float32 if dtype == np.float32 else out.dtype == gt.float64
    assert out.stride() == tout.stride() and out.is_contiguous()
    out.sum().backward()
    tout.sum().backward()
    for a, b in ((x, tx), (y, ty)):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-6)
    with gt.no_grad():
        assert f(x, y).grad_fn is None and not f(x, y).requires_grad


@pytest.mark.parametrize("name", ["add", "sub", "mul", "tanh", "matmul"])
@pytest.mark.parametrize("case", ["0-d", "broadcast", "transposed", "int64", "size-1 dim", "bool", "number"])
def test_the_cases_outside_the_plain_one_match_torch(name, case):
    f = _BINARY[name]
    if name in ("matmul",) and case in ("0-d", "broadcast", "number", "bool"):
        pytest.skip("not a matrix product")

    def make(lib):
        rng = np.random.default_rng(3)
        if case == "0-d":
            return lib.tensor(np.float32(1.5)), lib.tensor(np.float32(-0.5))
        if case == "broadcast":
            return lib.tensor(rng.standard_normal((3, 4)).astype(np.float32)), lib.tensor(rng.standard_normal(4).astype(np.float32))
        if case == "transposed":
            return lib.tensor(rng.standard_normal((4, 4)).astype(np.float32)).t(), lib.tensor(rng.standard_normal((4, 4)).astype(np.float32))
        if case == "int64":
            return lib.tensor(rng.integers(-5, 5, (3, 3))), lib.tensor(rng.integers(-5, 5, (3, 3)))
        if case == "size-1 dim":
            return lib.tensor(rng.standard_normal((3, 1)).astype(np.float32)), lib.tensor(rng.standard_normal((3, 1)).astype(np.float32))
        if case == "bool":
            return lib.tensor([[True, False], [True, True]]), lib.tensor([[False, False], [True, False]])
        return lib.tensor(rng.standard_normal((3, 3)).astype(np.float32)), 2.5

    if name == "matmul" and case == "size-1 dim":
        f = lambda a, b: a @ b.t()   # noqa: E731  (an outer product: K == 1)
    try:
        expected = f(*make(torch))
    except Exception as e:     # torch's refusal: the same type from glasstorch
        with pytest.raises(type(e)):
            f(*make(gt))
        return
    got = f(*make(gt))
    assert str(got.dtype).replace("glasstorch", "torch") == str(expected.dtype)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-5, atol=1e-6)
    assert got.stride() == expected.stride()


def test_a_plain_call_with_nothing_installed_is_one_python_frame(monkeypatch):
    # (a test of another device earlier in this process switched the device rule on for good: these
    # tensors are all on the CPU, where the rule has nothing to check)
    device_rule_off(monkeypatch)
    assert not _seam.ANYWHERE.on and not _seam.ANYWHERE.dispatching
    x, y = _pair(gt, np.float32)
    w, = _pair(gt, np.float32, shape=(5, 5))[:1]
    for grad in (False, True):
        x.requires_grad_(grad)
        for f in (lambda: x + y, lambda: x * y, lambda: x - y, lambda: x.tanh(), lambda: x @ w, lambda: x.mm(w)):
            f()     # (the entries are written at the first call)
            frames = []

            def profile(frame, event, arg):
                if event == "call":
                    frames.append(frame.f_code.co_name)
            sys.setprofile(profile)
            try:
                f()
            finally:
                sys.setprofile(None)
            # the lambda, the entry; with grad on, a leaf's AccumulateGrad is looked up, a sequence
            # number drawn (calls of autograd.graph), and nothing of the op's call, kernel or wrap
            assert frames[0] == "<lambda>" and frames[1] in ("add", "mul", "sub", "tanh", "matmul", "mm"), frames
            assert not any(name in ("__call__", "_wrap") or name.endswith("kernel") for name in frames), frames


def test_the_entry_makes_the_tensor_wrap_makes(monkeypatch):
    device_rule_off(monkeypatch)     # (see the test above)
    x, y = _pair(gt, np.float32)
    with gt.no_grad():
        z = x + y
    ref = _wrap(z._data)
    for slot in gt.Tensor.__slots__:
        if slot in ("_data", "__weakref__", "__dict__", "_layout_of", "_layout"):
            continue
        assert getattr(z, slot, "unset") == getattr(ref, slot, "unset"), slot
    # (the layout facts: the entry's, where _wrap leaves them to be found when asked -- the same key)
    assert z._layout_of is z._data and ref._layout_of is None
    assert z._layout is layout_facts(ref)


def test_the_entry_under_inference_mode_makes_inference_tensors():
    x, y = _pair(gt, np.float32)
    with gt.inference_mode():
        z = x * y
    assert z.is_inference() and not x.is_inference()
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        x.requires_grad_(True)
        x * z


def test_a_saved_operand_modified_in_place_is_refused_at_backward():
    (x, y), (tx, ty) = _pair(gt, np.float32, requires_grad=True), _pair(torch, np.float32, requires_grad=True)
    a, ta = y * 1, ty * 1
    out, tout = x * a, tx * ta
    assert out.grad_fn._saved_other is not None and out.grad_fn._saved_self is not None
    a.add_(1)
    ta.add_(1)
    with pytest.raises(RuntimeError) as theirs:
        tout.sum().backward()
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as ours:
        out.sum().backward()
    assert "is at version 1; expected version 0 instead" in str(ours.value)
    assert "is at version 1; expected version 0 instead" in str(theirs.value)


def test_anomaly_mode_keeps_the_forward_trace_of_a_plain_call():
    x, y = _pair(gt, np.float32, requires_grad=True)
    with gt.autograd.detect_anomaly(check_nan=False):
        z = x + y
    assert getattr(z.grad_fn, "_anomaly_trace", None)
    assert getattr((x + y).grad_fn, "_anomaly_trace", None) is None


def test_a_dispatch_mode_in_another_thread_sends_every_thread_the_long_way():
    from glasstorch.utils._python_dispatch import TorchDispatchMode
    seen, entered, leave = [], threading.Event(), threading.Event()

    class Log(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    def other():
        with Log():
            entered.set()
            leave.wait(10)
            a, b = _pair(gt, np.float32)
            a + b

    t = threading.Thread(target=other)
    t.start()
    entered.wait(10)
    try:
        assert _seam.ANYWHERE.dispatching
        x, y = _pair(gt, np.float32)
        np.testing.assert_allclose((x + y).numpy(), x.numpy() + y.numpy())
        assert seen == []       # (this thread has no mode: its calls are not seen)
    finally:
        leave.set()
        t.join()
    assert seen[-1] == "aten.add.Tensor"     # (after the tensors' creation)
    assert not _seam.ANYWHERE.dispatching


def test_a_dispatch_mode_and_autocast_see_plain_calls():
    from glasstorch.utils._python_dispatch import TorchDispatchMode
    seen = []

    class Log(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    x, y = _pair(gt, np.float32, shape=(4, 4))
    with Log():
        x + y
        x @ y
        x.tanh()
    assert seen == ["aten.add.Tensor", "aten.mm.default", "aten.tanh.default"]
    with gt.autocast("cpu", dtype=gt.bfloat16):
        assert (x @ y).dtype == gt.bfloat16
    assert (x @ y).dtype == gt.float32 and not _seam.ANYWHERE.dispatching


def test_a_function_mode_and_a_subclass_are_handed_the_public_function():
    from glasstorch.overrides import TorchFunctionMode
    seen = []

    class Log(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append((func, len(args), dict(kwargs or {})))
            return func(*args, **(kwargs or {}))

    x, y = _pair(gt, np.float32, shape=(4, 4))
    with Log():
        x + y
        x.add(y)
        x @ y
        x.tanh()
    assert [(f.__name__, n, k) for f, n, k in seen] == [("add", 2, {}), ("add", 2, {}), ("matmul", 2, {}), ("tanh", 1, {})]
    assert seen[1][0] is gt.Tensor.add and seen[3][0] is gt.Tensor.tanh

    class Sub(gt.Tensor):
        calls = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            cls.calls.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs)

    s = x.as_subclass(Sub)
    assert type(s + y) is Sub and Sub.calls[0] == "add"


def test_the_entry_source_is_shown_for_its_lines():
    x, y = _pair(gt, np.float32)
    x + y
    code = gt.Tensor.add.__code__
    import linecache
    assert code.co_filename.startswith("<glasstorch") and "def add(" in "".join(linecache.getlines(code.co_filename))
    assert gt.Tensor.__add__.__code__ is code
    with pytest.raises(TypeError):
        x + "a"
