"""torch's interception protocol on glasstorch, against real torch: a logging ``__torch_function__``
Tensor subclass, a ``TorchFunctionMode`` and a FLOP-counting ``TorchDispatchMode``, each written as
torch's documentation writes them, see the same calls in an MLP and a small CNN training step under
both libraries; ``torch.utils.flop_counter.FlopCounterMode`` counts the same flops, module by module.

What is normalised, and why (nothing else is):

* function names are compared (``func.__name__``; an attribute accessor as ``grad.__get__``), not
  function objects, which belong to each library;
* the function mode's sequence leaves out attribute reads and writes (``Tensor.grad.__get__``...): the
  optimizers read the tensors' state in their own ways (torch's SGD reads ``p.grad`` three times and
  ``is_sparse`` once per parameter, and ``device`` once), and that is not an op; torch's profiler
  calls (``profiler._record_function_enter_new``/``_exit``), instrumentation glasstorch does not have;
  and glasstorch's ``zero_grad``, which a mode sees as one call where torch's sees its reads and
  writes of each ``.grad`` (a documented difference, pinned below);
* the dispatch mode's sequence is that of the ops it counts (those with a flop formula): torch's
  dispatcher also shows its autograd internals (``aten.detach`` for each leaf, ``ones_like`` for the
  seed) and each library decomposes the loss's backward its own way.
"""
import collections

import pytest

import glasstorch

torch = pytest.importorskip("torch")

from aten_log import function_mode_names  # noqa: E402

LIBS = (torch, glasstorch)


def _name(func):
    n = getattr(func, "__name__", None) or repr(func)
    if n in ("__get__", "__set__"):           # an attribute accessor: named by its descriptor
        return f"{func.__self__.__name__}.{n}"
    return n


def _mlp(lib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(4, 5), lib.nn.ReLU(), lib.nn.Linear(5, 3))
    return model, lib.optim.SGD(model.parameters(), lr=0.1), lib.randn(6, 4), lib.tensor([0, 1, 2, 0, 1, 2])


def _cnn(lib):
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(2 * 4 * 4, 3))
    return model, lib.optim.SGD(model.parameters(), lr=0.1), lib.randn(2, 1, 8, 8), lib.tensor([0, 2])


def _step(lib, model, optimizer, x, y):
    optimizer.zero_grad()
    loss = lib.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()


def _calls_seen(fn):
    """The names of the calls a function mode sees while ``fn()`` runs, in glasstorch."""
    class Seen(glasstorch.overrides.TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.names = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.names.append(_name(func))
            return func(*args, **(kwargs or {}))
    with Seen() as seen:
        fn()
    return seen.names


BUILDS = [pytest.param(_mlp, id="mlp"), pytest.param(_cnn, id="cnn")]


# ------------------------------------------------------------------------------------------------
# A logging Tensor subclass (torch's docs: "Extending torch with a Tensor-like type")
# ------------------------------------------------------------------------------------------------
def _logging_tensor_run(lib, build):
    logged = []

    class LoggingTensor(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            # NOTE: Logging calls Tensor.__repr__, so we can't log __repr__ without infinite recursion
            if func is not lib.Tensor.__repr__:
                logged.append(_name(func))
            if kwargs is None:
                kwargs = {}
            return super().__torch_function__(func, types, args, kwargs)

    model, optimizer, x, y = build(lib)
    x = x.as_subclass(LoggingTensor)
    optimizer.zero_grad()
    out = model(x)
    loss = lib.nn.functional.cross_entropy(out, y)
    loss.backward()
    optimizer.step()
    loss.item()
    return logged, type(out).__name__, type(loss).__name__


@pytest.mark.parametrize("build", BUILDS)
def test_logging_tensor_subclass_sees_the_same_calls(build):
    ours, theirs = (_logging_tensor_run(lib, build) for lib in (glasstorch, torch))
    assert ours == theirs          # the calls, and the results that stay LoggingTensors
    assert ours[0][:1] in (["linear"], ["conv2d"]) and ours[0][-2:] == ["backward", "item"]


# ------------------------------------------------------------------------------------------------
# A TorchFunctionMode
# ------------------------------------------------------------------------------------------------
_NOT_OPS = {"_record_function_enter_new", "_record_function_exit._RecordFunction", "zero_grad"}


def _function_mode_run(lib, build):
    class Logging(lib.overrides.TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.names = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.names.append(_name(func))
            return func(*args, **(kwargs or {}))
    model, optimizer, x, y = build(lib)
    _step(lib, model, optimizer, x, y)
    with Logging() as mode:
        _step(lib, model, optimizer, x, y)
    return mode.names


def _ops_only(names):
    return [n for n in names if n not in _NOT_OPS and not n.endswith((".__get__", ".__set__"))]


@pytest.mark.parametrize("build", BUILDS)
def test_function_mode_sees_the_same_ops(build):
    ours, theirs = (_function_mode_run(lib, build) for lib in (glasstorch, torch))
    assert _ops_only(ours) == _ops_only(theirs)
    assert "grad.__get__" in ours       # (the accessors are seen too: only the comparison leaves them out)


def test_zero_grad_is_one_call_for_a_mode():
    """The documented difference: glasstorch's Optimizer.zero_grad and Module.zero_grad pass the seam as
    one call each (torch's modes see each .grad read and set to None instead)."""
    model, optimizer, x, y = _mlp(glasstorch)
    _step(glasstorch, model, optimizer, x, y)
    assert _calls_seen(optimizer.zero_grad) == ["zero_grad"]
    _step(glasstorch, model, optimizer, x, y)
    assert _calls_seen(model.zero_grad) == ["zero_grad"]
    assert all(p.grad is None for p in model.parameters())
    model, optimizer, x, y = _mlp(torch)
    _step(torch, model, optimizer, x, y)
    assert _ops_only(_function_mode_run(torch, _mlp)[:10]) == []      # torch: accessors and profiler calls


def test_modes_stack_and_see_nested_calls_once():
    seen = []

    class Outer(glasstorch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(("outer", _name(func)))
            return func(*args, **(kwargs or {}))

    class Inner(glasstorch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(("inner", _name(func)))
            return func(*args, **(kwargs or {}))
    x, target = glasstorch.ones(2, 3, requires_grad=True), glasstorch.tensor([0, 1])
    with Outer(), Inner():
        glasstorch.nn.functional.cross_entropy(x, target)
    # the inner mode first; F.cross_entropy's own log_softmax and nll_loss are seen by neither
    assert seen == [("inner", "cross_entropy"), ("outer", "cross_entropy")]


# ------------------------------------------------------------------------------------------------
# A FLOP-counting TorchDispatchMode (as in torch's "FLOP counter with __torch_dispatch__" write-up)
# ------------------------------------------------------------------------------------------------
def _flop_mode_run(lib, build):
    aten = lib.ops.aten

    def matmul_flop(inputs, outputs):
        a, b = inputs[-2].shape, inputs[-1].shape
        return 2 * a[0] * a[1] * b[1]

    def conv_flop(inputs, outputs):
        x, w, out = inputs[0].shape, inputs[1].shape, outputs[0].shape
        return 2 * x[0] * w[0] * w[1] * _prod(w[2:]) * _prod(out[2:])

    def conv_backward_flop(inputs, outputs):
        grad_out, x, w = inputs[0].shape, inputs[1].shape, inputs[2].shape
        mask = inputs[10]
        flops = 2 * x[0] * w[0] * w[1] * _prod(w[2:]) * _prod(grad_out[2:])
        return flops * (int(mask[0]) + int(mask[1]))

    # (glasstorch declares its primitive ops family by family: an op not declared yet is left out)
    flop_mapping = {getattr(aten, name): f for name, f in (("mm", matmul_flop), ("addmm", matmul_flop),
                                                           ("convolution", conv_flop),
                                                           ("convolution_backward", conv_backward_flop))
                    if hasattr(aten, name)}

    class FlopCounter(lib.utils._python_dispatch.TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.flop_counts = collections.defaultdict(int)
            self.counted = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs if kwargs else {}
            out = func(*args, **kwargs)
            func_packet = func._overloadpacket
            if func_packet in flop_mapping:
                self.flop_counts[str(func_packet)] += flop_mapping[func_packet](args, _as_tuple(out))
                self.counted.append(str(func))
            return out
    model, optimizer, x, y = build(lib)
    with FlopCounter() as counter:
        _step(lib, model, optimizer, x, y)
    return counter.counted, dict(counter.flop_counts)


def _prod(xs):
    p = 1
    for v in xs:
        p *= v
    return p


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


@pytest.mark.parametrize("build", BUILDS)
def test_flop_counting_dispatch_mode_sees_the_same_ops(build):
    ours, theirs = (_flop_mode_run(lib, build) for lib in (glasstorch, torch))
    assert ours == theirs
    assert ours[0][:2] in (["aten.addmm.default"] * 2, ["aten.convolution.default", "aten.addmm.default"])


# ------------------------------------------------------------------------------------------------
# torch.utils.flop_counter.FlopCounterMode
# ------------------------------------------------------------------------------------------------
def _flop_counter_run(lib, build):
    from importlib import import_module
    FlopCounterMode = import_module(lib.__name__ + ".utils.flop_counter").FlopCounterMode
    model, optimizer, x, y = build(lib)
    with FlopCounterMode(display=False) as counter:
        loss = lib.nn.functional.cross_entropy(model(x), y)
        loss.backward()
    counts = {mod: {str(op): n for op, n in ops.items()} for mod, ops in counter.get_flop_counts().items()}
    return counter.get_total_flops(), counts


@pytest.mark.parametrize("build", BUILDS)
def test_flop_counter_mode_counts_as_torch(build):
    ours, theirs = (_flop_counter_run(lib, build) for lib in (glasstorch, torch))
    assert ours == theirs          # the total, and each module's count of each op (forward and backward)
    assert ours[0] > 0 and set(ours[1]) >= {"Global", "Sequential"}


def test_flop_counter_table_and_display(capsys):
    from glasstorch.utils.flop_counter import FlopCounterMode
    model, _, x, y = _mlp(glasstorch)
    with FlopCounterMode(depth=1):
        glasstorch.nn.functional.cross_entropy(model(x), y).backward()
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["Module", "FLOP", "%", "Total"]
    assert table[2].split() == ["Sequential", "1020.000", "100.00%"]
    assert all("Sequential." not in row for row in table)      # depth=1


def test_flop_counter_custom_formula_and_registration_errors():
    from glasstorch.utils.flop_counter import FlopCounterMode, register_flop_formula
    with FlopCounterMode(display=False, custom_mapping={glasstorch.ops.aten.mul: lambda a, b, **kw: 7}) as counter:
        glasstorch.ones(3) * glasstorch.ones(3)
    assert counter.get_total_flops() == 7
    with pytest.raises(ValueError, match="OpOverloadPacket"):
        register_flop_formula(42)(lambda *a, **k: 0)
    with pytest.raises(RuntimeError, match="duplicate registrations"):
        register_flop_formula(glasstorch.ops.aten.mm)(lambda *a, **k: 0)


# ------------------------------------------------------------------------------------------------
# What the module tracker stands on
# ------------------------------------------------------------------------------------------------
def test_multi_grad_hook_as_torch():
    def run(lib):
        out = []
        a = lib.rand(2, 3, requires_grad=True)
        b = lib.rand(2, 3, requires_grad=True)
        c = a * b
        d = a * b
        lib.autograd.graph.register_multi_grad_hook((a, b, c, d), lambda grads: out.append(
            [g is not None for g in grads]))
        c.sum().backward(retain_graph=True)
        c.sum().backward(inputs=(a,), retain_graph=True)
        handle = lib.autograd.graph.register_multi_grad_hook((a, d), lambda g: out.append("any"), mode="any")
        (c + d).sum().backward()
        handle.remove()
        return out
    # (the "any" hook fires at d, the first of its tensors reached; the "all" one after a and b)
    assert run(glasstorch) == run(torch) == [[True, True, True, False], [True, False, True, False], "any",
                                             [True, True, True, True]]
    with pytest.raises(ValueError, match="mode"):
        glasstorch.autograd.graph.register_multi_grad_hook((), print, mode="some")


def test_module_tracker_parents_as_torch():
    def run(lib):
        from importlib import import_module
        ModuleTracker = import_module(lib.__name__ + ".utils.module_tracker").ModuleTracker
        seen = []
        model, _, x, y = _mlp(lib)
        with ModuleTracker() as tracker:
            def watch(grad):
                seen.append(("bw", sorted(tracker.parents), tracker.is_bw))
            h = model[1](model[0](x))
            seen.append(("fw", sorted(tracker.parents), tracker.is_bw))
            h.register_hook(watch)
            model[2](h).sum().backward()
            seen.append(("after", sorted(tracker.parents), tracker.is_bw))
        return seen
    assert run(glasstorch) == run(torch)


# ------------------------------------------------------------------------------------------------
# torch.overrides' helpers and torch._C's switches, as a user library calls them
# ------------------------------------------------------------------------------------------------
def _helpers_run(lib):
    from importlib import import_module
    ov = import_module(lib.__name__ + ".overrides")
    C = lib._C
    out = []

    class Sub(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            out.append(("sub", func.__name__, tuple(t.__name__ for t in types)))
            return super().__torch_function__(func, types, args, kwargs or {})

    class Mode(ov.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            out.append(("mode", func.__name__, tuple(t.__name__ for t in types)))
            return func(*args, **(kwargs or {}))

    def double(x):          # a user function taking part in the protocol, as torch's docs write one
        if ov.has_torch_function_unary(x):
            return ov.handle_torch_function(double, (x,), x)
        return x * 2

    t, s, p = lib.ones(2), lib.ones(2).as_subclass(Sub), lib.nn.Parameter(lib.ones(2))
    out.append((ov.has_torch_function((t,)), ov.has_torch_function((s,)), ov.has_torch_function((p,)),
                ov.has_torch_function_unary(s), ov.has_torch_function_variadic(t, s), ov.is_tensor_like(s),
                ov.is_tensor_like(3)))
    out.append(type(double(s)).__name__)
    out.append(type(double(t)).__name__)
    with Mode():
        out.append(type(double(t)).__name__)
        with C.DisableTorchFunctionSubclass():
            out.append(type(s + 1).__name__)
        with C.DisableTorchFunction():
            out.append(type(s + 1).__name__)
        out.append(C._is_torch_function_mode_enabled())
    out.append(C._is_torch_function_mode_enabled())
    out.append(type(s * 3).__name__)
    over = ov.get_overridable_functions()
    out.append((lib.add in over[lib], lib.Tensor.add in over[lib.Tensor],
                lib.nn.functional.linear in over[lib.nn.functional]))
    out.append((ov.is_tensor_method_or_property(lib.Tensor.add),
                ov.is_tensor_method_or_property(lib.Tensor.grad.__get__)))
    return out


def test_overrides_helpers_as_torch():
    """has_torch_function*, handle_torch_function (plain Tensors count as overloaded there, as in
    torch's Python helper), is_tensor_like, get_overridable_functions, DisableTorchFunction(Subclass),
    _is_torch_function_mode_enabled: what a user's function and mode see is torch's."""
    assert _helpers_run(glasstorch) == _helpers_run(torch)


def test_handle_torch_function_without_a_taker():
    class Refuses(glasstorch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    def f(x):
        return glasstorch.overrides.handle_torch_function(f, (x,), x)
    with pytest.raises(TypeError, match="no implementation found for .* on types that implement __torch_function__"):
        f(glasstorch.ones(1).as_subclass(Refuses))


# ---- what a TorchDispatchMode is given: torch's dispatcher's arguments ------------------------------------
def _dispatch_calls(lib, program):
    """(op, args, kwargs) of every op a dispatch mode sees running ``program(lib, x, w)``, tensors as
    (shape, dtype); torch's autograd internals left out: the ``detach`` of a saved result, the
    ``ones_like`` of backward's seed (glasstorch's is no op)."""
    from aten_log import dispatch_mode_class

    def value(v):
        if isinstance(v, lib.Tensor):
            return ("tensor", tuple(v.shape), str(v.dtype))
        if isinstance(v, (list, tuple)):
            return (type(v).__name__, [value(a) for a in v])
        if isinstance(v, (lib.dtype, lib.device)) or type(v).__name__ == "memory_format":
            return str(v)
        return v
    seen = []

    class Log(dispatch_mode_class(lib)):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if str(func) not in ("aten.detach.default", "aten.ones_like.default"):
                seen.append((str(func), value(list(args)), {k: value(v) for k, v in (kwargs or {}).items()}))
            return func(*args, **(kwargs or {}))
    x = lib.arange(6.).reshape(2, 3).requires_grad_()
    w = lib.ones(4, 3)
    with Log():
        program(lib, x, w)
    return seen


@pytest.mark.parametrize("program", [
    lambda L, x, w: x.sum(0),
    lambda L, x, w: x.sum(0, keepdim=True),
    lambda L, x, w: x.sum((0, 1)),
    lambda L, x, w: L.add(x, x),
    lambda L, x, w: L.add(x, x, alpha=2),
    lambda L, x, w: L.addmm(L.ones(2, 2), x, x.t(), beta=0.5),
    lambda L, x, w: x.mean(),
    lambda L, x, w: x.std(1),
    lambda L, x, w: x.var(1, correction=0, keepdim=True),
    lambda L, x, w: x.clamp(min=0),
    lambda L, x, w: x.clamp(0.0, None),
    lambda L, x, w: x.max(1),
    lambda L, x, w: x.cumsum(1),
    lambda L, x, w: L.nn.functional.linear(x, w).sum().backward(),
    lambda L, x, w: L.nn.functional.leaky_relu(x, 0.01),
    lambda L, x, w: L.nn.functional.leaky_relu(x, 0.2),
    lambda L, x, w: L.nn.functional.cross_entropy(x, L.tensor([0, 1])).backward(),
    lambda L, x, w: L.cat([x, x]),
    lambda L, x, w: L.stack((x, x), 1),
    lambda L, x, w: x.permute(1, 0).reshape(6),
    lambda L, x, w: L.zeros(2, dtype=L.float64),
    lambda L, x, w: L.arange(1, 5, 2),
], ids=["sum(0)", "sum keepdim", "sum((0, 1))", "add", "add alpha", "addmm beta", "mean", "std",
        "var correction keepdim", "clamp(min=0)", "clamp(0., None)", "max(1)", "cumsum", "linear + backward",
        "leaky_relu default slope", "leaky_relu(0.2)", "cross_entropy + backward", "cat", "stack", "permute reshape",
        "zeros dtype", "arange"])
def test_dispatch_mode_is_given_torchs_arguments(program):
    """A dispatch mode is given what torch's dispatcher gives it: positional arguments up to the last
    that differs from its schema default, keyword-only ones only where they differ, lists as lists."""
    assert _dispatch_calls(glasstorch, program) == _dispatch_calls(torch, program)


def test_constructing_a_parameter_is_no_call_a_mode_sees():
    """torch's Parameter is made by ``_make_subclass``, which no mode sees (glasstorch's called
    ``requires_grad_`` through the seam); its errors are ``_make_subclass``'s."""
    for program in (lambda L, x: L.nn.Parameter(x), lambda L, x: L.nn.Parameter(x, requires_grad=False)):
        assert function_mode_names(glasstorch, program) == function_mode_names(torch, program) == []
    for lib_errors in ((lambda L: L.nn.Parameter(L.ones(2, dtype=L.int64))),
                       (lambda L: L.nn.Parameter(L.ones(2), requires_grad=1))):
        with pytest.raises(Exception) as theirs:
            lib_errors(torch)
        with pytest.raises(type(theirs.value)) as ours:
            lib_errors(glasstorch)
        assert str(ours.value) == str(theirs.value)


# ---- get_testing_overrides, resolve_name, the rest of torch.overrides' public names ----------------------------
def test_overrides_has_torchs_public_names():
    """Every public name of torch.overrides (its __all__, and the mode classes) is glasstorch's too."""
    import torch.overrides as theirs
    wanted = set(theirs.__all__) | {"TorchFunctionMode", "BaseTorchFunctionMode"}
    assert wanted - set(dir(glasstorch.overrides)) == set()


def test_testing_overrides_cover_the_overridable_functions():
    overrides = glasstorch.overrides.get_testing_overrides()
    functions = [f for funcs in glasstorch.overrides.get_overridable_functions().values() for f in funcs]
    assert len(functions) > 500 and all(f in overrides for f in functions)
    assert glasstorch.overrides.get_testing_overrides() is overrides        # (cached, as torch's)


def _recorded_calls(build):
    """(func, args, kwargs) of every call a function mode sees in a training step of ``build``'s model
    and a few calls of functions with out=, keywords and defaults."""
    calls = []

    class Record(glasstorch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            calls.append((func, args, kwargs or {}))
            return func(*args, **(kwargs or {}))
    model, optimizer, x, y = build(glasstorch)
    with Record():
        _step(glasstorch, model, optimizer, x, y)
        glasstorch.add(x, x, alpha=2, out=glasstorch.empty(0))
        glasstorch.sum(x, 1, keepdim=True)
        x.sum(dim=0).softmax(0)
        glasstorch.nn.functional.dropout(x, 0.5, training=False)
    return calls


@pytest.mark.parametrize("build", BUILDS)
def test_testing_overrides_accept_the_arguments_of_real_calls(build):
    """Each stand-in takes what its function is called with (and returns -1)."""
    overrides = glasstorch.overrides.get_testing_overrides()
    checked = 0
    for func, args, kwargs in _recorded_calls(build):
        if func in overrides:
            assert overrides[func](*args, **kwargs) == -1, func
            checked += 1
    assert checked > 10


def test_testing_overrides_have_the_signatures_and_refuse_other_arguments():
    import inspect
    overrides = glasstorch.overrides.get_testing_overrides()
    assert str(inspect.signature(overrides[glasstorch.add])) == "(input, other, *, alpha=1, out=None)"
    assert str(inspect.signature(overrides[glasstorch.nn.functional.relu])) == \
        str(inspect.signature(glasstorch.nn.functional.relu))
    with pytest.raises(TypeError):
        overrides[glasstorch.add](glasstorch.ones(1))                         # (other missing)
    with pytest.raises(TypeError):
        overrides[glasstorch.nn.functional.relu](glasstorch.ones(1), bogus=1)


def test_resolve_name_as_torch():
    def names(lib):
        ov = lib.overrides
        return [ov.resolve_name(f) for f in (
            lib.add, lib.Tensor.add, lib.Tensor.sum, lib.nn.functional.relu, lib.nn.functional.cross_entropy,
            lib.linalg.norm, lib.Tensor.grad.__get__, lib.Tensor.grad.__set__, lib.Tensor.requires_grad.__get__,
            lib.ops.aten.add.Tensor, lib.ops.aten.add, lib.ops.aten.zeros.out, len, lib.Tensor.backward)]
    assert names(glasstorch) == names(torch)


def test_resolve_name_of_every_call_a_mode_sees_names_a_torch_function():
    """What a mode sees in a training step resolves to a name that is a torch function too."""
    import functools
    unnamed = set()
    for func, _, _ in _recorded_calls(_cnn):
        name = glasstorch.overrides.resolve_name(func)
        if name is None:
            unnamed.add(func)
        else:
            assert functools.reduce(getattr, name.split(".")[1:], torch) is not None
    # torch names none of these either: the factories and grad-mode switches are not overridable functions
    # there (get_ignored_functions), nor is Optimizer.zero_grad (which a mode sees in glasstorch as one
    # call: test_zero_grad_is_one_call_for_a_mode)
    for func in unnamed:
        theirs = getattr(torch, func.__name__, None) or getattr(torch._C, func.__name__, None) or \
            getattr(torch.optim.Optimizer, func.__name__)
        assert torch.overrides.resolve_name(theirs) is None, func


def test_base_mode_and_nowrap_functions_as_torch():
    for lib in LIBS:
        x = lib.ones(2, requires_grad=True)
        with lib.overrides.BaseTorchFunctionMode():
            y = (x * 2).sum()
        assert y.item() == 4.0
        assert lib.Tensor.grad.__get__ in lib.overrides.get_default_nowrap_functions()


def test_enable_reentrant_dispatch_as_torch():
    """Inside __torch_dispatch__, torch's enable_reentrant_dispatch restores the dispatcher's state; the
    mode handling the op stays off the stack: the ops called there are not seen by it again."""
    from aten_log import dispatch_mode_class

    def seen(lib):
        class Reenter(dispatch_mode_class(lib)):
            def __init__(self):
                super().__init__()
                self.names = []

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                self.names.append(str(func))
                if "mul" in str(func):
                    with lib.overrides.enable_reentrant_dispatch():
                        lib.add(args[0], 1)
                return func(*args, **(kwargs or {}))
        x = lib.ones(2)
        with Reenter() as mode:
            x * 2
        with pytest.raises(RuntimeError, match="outside of '__torch_dispatch__' is not allowed"):
            with lib.overrides.enable_reentrant_dispatch():
                pass
        return mode.names
    assert seen(glasstorch) == seen(torch)
