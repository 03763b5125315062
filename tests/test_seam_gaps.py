"""The seam's last gaps, against torch: the metadata methods and properties a TorchFunctionMode sees
(``x.dim()``, ``x.size(1)``, ``x.shape``...) with torch's arguments, in layers' forward and backward;
``resolve_name`` of Tensor's operators; ``torch.bernoulli(..., out=)`` and ``torch.multinomial(...,
out=)`` as their ``.out`` overloads under a dispatch mode; ``torch.overrides.redispatch_function``;
and the glass (inspection), which sees the metadata queries too and looks no further.

Calls are compared by name (``func.__name__``; a property accessor as ``dtype.__get__``) and
arguments with tensors written ``T`` (function objects and tensors belong to each library)."""
import importlib

import numpy as np
import pytest

import glasstorch

torch = pytest.importorskip("torch")

LIBS = (torch, glasstorch)


def _name(func):
    n = getattr(func, "__name__", None) or repr(func)
    if n in ("__get__", "__set__"):
        return f"{func.__self__.__name__}.{n}"
    return n


def _shown(value, lib):
    if isinstance(value, lib.Tensor):
        return "T"
    if isinstance(value, (list, tuple)):
        return type(value)(_shown(v, lib) for v in value)
    if isinstance(value, dict):
        return {k: _shown(v, lib) for k, v in value.items()}
    return str(value) if isinstance(value, (lib.dtype, lib.device, type(lib.contiguous_format))) else value


def _mode_log(lib, program, with_args=False):
    """What a TorchFunctionMode of ``lib`` sees while ``program(lib)`` runs."""
    seen = []

    class Log(lib.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if with_args:
                seen.append((_name(func), _shown(tuple(args), lib), _shown(dict(kwargs or {}), lib)))
            else:
                seen.append(_name(func))
            return func(*args, **(kwargs or {}))
    inputs = program(lib, None)
    with Log():
        program(lib, inputs)
    return seen


# ------------------------------------------------------------------------------------------------
# 1. the metadata methods and properties
# ------------------------------------------------------------------------------------------------
def _metadata_calls(lib, x):
    if x is None:
        return lib.ones(2, 3).t()
    x.dim(), x.ndimension(), x.size(), x.size(1), x.size(-1), x.shape, x.dtype, x.device, x.ndim
    x.is_contiguous(), x.is_contiguous(memory_format=lib.contiguous_format), x.numel(), x.nelement()
    x.stride(), x.stride(0), x.storage_offset(), x.element_size(), x.is_floating_point(), x.is_complex()
    x.get_device(), len(x), 1.0 in x, x.is_inference()


def _predicate_calls(lib, x):
    if x is None:
        return lib.ones(2, 3).t()
    x.is_signed(), x.is_same_size(x), x.is_conj(), x.is_neg(), x.resolve_conj(), x.resolve_neg(), x._is_view()
    x.equal(x), x.allclose(x), x.isclose(x), x.isreal(), x.isposinf(), x.isneginf(), x.is_pinned(), x.is_shared()
    lib.allclose(x, x), lib.equal(x, x), lib.is_nonzero(x[0, 0]), lib.is_same_size(x, x)


def test_metadata_queries_are_seen_as_torch_sees_them():
    ours, theirs = (_mode_log(lib, _metadata_calls, with_args=True) for lib in (glasstorch, torch))
    assert ours == theirs
    assert ("size", ("T",), {}) in ours and ("size", ("T", 1), {}) in ours



_PROPERTIES = ("is_nested", "is_cuda", "is_cpu", "is_meta", "is_sparse", "is_sparse_csr", "is_quantized", "is_mkldnn",
               "is_xpu", "is_mps", "is_ipu", "is_xla", "is_vulkan", "is_maia", "is_mtia", "itemsize", "nbytes",
               "layout", "requires_grad", "is_leaf", "grad_fn", "output_nr", "retains_grad", "_version", "grad", "data")


def _property_reads(lib, x):
    if x is None:
        return lib.ones(2, 3, requires_grad=True), lib.ones(2, dtype=lib.complex64)
    x, c = x
    y = x * 2
    y.retain_grad()
    for t in (x, y, y.t()):
        for name in _PROPERTIES:
            getattr(t, name)
    c.real, c.imag
    c.real = lib.zeros(2)


def test_property_reads_are_seen_as_torch_sees_them():
    """``is_nested``, ``is_cuda``..., ``itemsize``, ``nbytes``, ``layout``, ``requires_grad``,
    ``grad_fn``, ``output_nr``, ``retains_grad``, ``_version``, ``real``/``imag`` as torch's accessors
    (``Tensor.is_nested.__get__``; assigning ``c.real`` shows no call, as in torch); not the slots
    ``_base``, ``_grad_fn``, ``_grad`` (README)."""
    ours, theirs = (_mode_log(lib, _property_reads) for lib in (glasstorch, torch))
    assert ours == theirs
    assert "is_nested.__get__" in ours and "real.__get__" in ours


def test_predicates_are_seen_as_torch_sees_them():
    """(By name: a glasstorch function hands its positional parameters with their defaults, as its
    prelude is written for its signature; torch's C++ bindings hand what the caller gave.)"""
    ours, theirs = (_mode_log(lib, _predicate_calls) for lib in (glasstorch, torch))
    assert ours == theirs


def _step(build, run):
    """A program for _mode_log: its set-up ``build(lib)`` (seeded), then ``run(lib, *what build made)``."""
    def program(lib, inputs):
        if inputs is None:
            lib.manual_seed(0)
            return build(lib)
        run(lib, *inputs)
    return program


def _layer_forward_backward(lib, module, x, target):
    out = module(x)
    loss = lib.nn.functional.cross_entropy(out, target) if target is not None else out.sum()
    loss.backward()


LAYERS = {
    "linear_cross_entropy": lambda lib: (lib.nn.Linear(4, 3), lib.randn(2, 4), lib.tensor([0, 2])),
    "conv2d": lambda lib: (lib.nn.Conv2d(1, 2, 3), lib.randn(2, 1, 5, 5), None),
    "maxpool2d": lambda lib: (lib.nn.MaxPool2d(2), lib.randn(2, 1, 4, 4, requires_grad=True), None),
    "batchnorm2d": lambda lib: (lib.nn.BatchNorm2d(2), lib.randn(2, 2, 3, 3), None),
    "layernorm": lambda lib: (lib.nn.LayerNorm(4), lib.randn(2, 4), None),
    "dropout": lambda lib: (lib.nn.Dropout(0.5), lib.randn(2, 4, requires_grad=True), None),
    "embedding": lambda lib: (lib.nn.Embedding(5, 3), lib.tensor([1, 2]), None),
    "flatten": lambda lib: (lib.nn.Flatten(), lib.randn(2, 2, 2, requires_grad=True), None),
    "cnn": lambda lib: (lib.nn.Sequential(lib.nn.Conv2d(1, 2, 3, padding=1), lib.nn.ReLU(), lib.nn.MaxPool2d(2),
                                          lib.nn.Flatten(), lib.nn.Linear(2 * 2 * 2, 3)),
                        lib.randn(2, 1, 4, 4), lib.tensor([0, 2])),
}


@pytest.mark.parametrize("layer", LAYERS)
def test_a_layers_forward_and_backward_are_seen_as_torch_sees_them(layer):
    """Every call, the metadata queries and property reads included (BatchNorm's forward checks
    ``input.dim()`` and counts its batches with ``add_``, as torch's)."""
    ours, theirs = (_mode_log(lib, _step(LAYERS[layer], _layer_forward_backward)) for lib in (glasstorch, torch))
    assert ours == theirs


def _packed(lib, x, lengths):
    return lib.nn.utils.rnn.pack_padded_sequence(x, lib.tensor(lengths), batch_first=True)


RECURRENT = {   # (module, input, initial state or None)
    "lstm_batch_first": lambda lib: (lib.nn.LSTM(3, 4, batch_first=True), lib.randn(2, 5, 3), None),
    "lstm_state": lambda lib: (lib.nn.LSTM(3, 4, num_layers=2, bidirectional=True), lib.randn(5, 2, 3),
                               (lib.randn(4, 2, 4), lib.randn(4, 2, 4))),
    "lstm_unbatched_state": lambda lib: (lib.nn.LSTM(3, 4), lib.randn(5, 3), (lib.randn(1, 4), lib.randn(1, 4))),
    "lstm_proj": lambda lib: (lib.nn.LSTM(3, 4, proj_size=2), lib.randn(5, 2, 3), None),
    "lstm_packed": lambda lib: (lib.nn.LSTM(3, 4, bidirectional=True), _packed(lib, lib.randn(3, 5, 3), [5, 3, 2]),
                                None),
    "lstm_packed_state": lambda lib: (lib.nn.LSTM(3, 4), _packed(lib, lib.randn(2, 4, 3), [4, 2]),
                                      (lib.randn(1, 2, 4), lib.randn(1, 2, 4))),
    "gru": lambda lib: (lib.nn.GRU(3, 4, num_layers=2, dropout=0.5), lib.randn(5, 2, 3), None),
    "gru_unbatched_state": lambda lib: (lib.nn.GRU(3, 4, batch_first=True), lib.randn(5, 3), lib.randn(1, 4)),
    "gru_packed": lambda lib: (lib.nn.GRU(3, 4), _packed(lib, lib.randn(2, 4, 3), [4, 2]), lib.randn(1, 2, 4)),
    "rnn_tanh": lambda lib: (lib.nn.RNN(3, 4, bidirectional=True), lib.randn(5, 2, 3), lib.randn(2, 2, 4)),
    "rnn_relu_packed": lambda lib: (lib.nn.RNN(3, 4, nonlinearity="relu"), _packed(lib, lib.randn(2, 4, 3), [4, 3]),
                                    None),
}


def _recurrent_forward_backward(lib, module, x, hx):
    out = module(x, hx)[0]
    (out.data if isinstance(out, lib.nn.utils.rnn.PackedSequence) else out).sum().backward()


@pytest.mark.parametrize("case", RECURRENT)
def test_a_recurrent_network_is_seen_as_torch_sees_it(case):
    """nn.LSTM / nn.GRU / nn.RNN read the input's dtype and device, make the zero state and call
    torch.lstm / torch.gru / torch.rnn_tanh / torch.rnn_relu (torch's _VF functions, either overload),
    with torch's arguments (the flat weights, the flags)."""
    ours, theirs = (_mode_log(lib, _step(RECURRENT[case], _recurrent_forward_backward), with_args=True) for lib in (glasstorch, torch))
    assert [call[0] for call in ours] == [call[0] for call in theirs]
    # (arguments compared where both hand what the caller gave: not for sum(), see above)
    networks = [[call for call in log if call[0] in ("lstm", "gru", "rnn_tanh", "rnn_relu", "zeros", "size", "dim",
                                                     "__getitem__", "index_select")] for log in (ours, theirs)]
    assert networks[0] == networks[1]
    assert any(call[0] in ("lstm", "gru", "rnn_tanh", "rnn_relu") for call in ours)


@pytest.mark.parametrize("name", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_network_functions_compute_as_torchs(name, dtype):
    """torch.lstm & co. called directly, both overloads, against torch's (values and gradients)."""
    gates = {"lstm": 4, "gru": 3}.get(name, 1)
    rng = np.random.default_rng(1)
    shapes = [shape for layer in range(2) for _ in range(2)     # two layers, bidirectional
              for shape in ((gates * 4, 3 if layer == 0 else 8), (gates * 4, 4), (gates * 4,), (gates * 4,))]
    arrays = {"x": rng.standard_normal((5, 3, 3)), "h0": rng.standard_normal((4, 3, 4)),
              "c0": rng.standard_normal((4, 3, 4)), "params": [rng.standard_normal(s) for s in shapes]}

    def run(lib, packed):
        dt = getattr(lib, dtype)
        params = [lib.tensor(a, dtype=dt, requires_grad=True) for a in arrays["params"]]
        x = lib.tensor(arrays["x"], dtype=dt, requires_grad=True)
        h0 = lib.tensor(arrays["h0"], dtype=dt)
        hx = [h0, lib.tensor(arrays["c0"], dtype=dt)] if name == "lstm" else h0
        function = getattr(lib, name)
        if packed:
            data, batch_sizes = lib.nn.utils.rnn.pack_padded_sequence(x, lib.tensor([5, 4, 2]))[:2]
            result = function(data, batch_sizes, hx, params, True, 2, 0.0, True, True)
        else:
            result = function(x, hx, params, True, 2, 0.0, True, True, False)
        sum(r.sum() for r in result).backward()
        return [r.detach() for r in result] + [x.grad] + [p.grad for p in params]

    for packed in (False, True):
        for ours, theirs in zip(run(glasstorch, packed), run(torch, packed)):
            assert ours.shape == theirs.shape
            assert torch.allclose(torch.from_numpy(ours.numpy()), theirs, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("attention", ["self", "cross", "kdim", "unbatched", "one_head"])
def test_multihead_attention_is_seen_as_torch_sees_it(batch_first, training, attention):
    """nn.MultiheadAttention's forward reads what torch's Python forward reads (the query's dtype
    against the projections', ``is_nested`` of all three: torch's reasons for not taking its fused
    fast path, checked in its order) and calls F.multi_head_attention_forward."""
    def program(lib, inputs):
        if inputs is None:
            lib.manual_seed(0)
            kdim = 3 if attention == "kdim" else None
            module = lib.nn.MultiheadAttention(4, 1 if attention == "one_head" else 2, batch_first=batch_first,
                                               kdim=kdim, vdim=kdim)
            module.train(training)
            x, k = lib.randn(3, 5, 4), lib.randn(3, 5, kdim or 4)
            if attention == "unbatched":
                x = k = x[0]
            return module, x, x if attention in ("self", "unbatched", "one_head") else k
        module, q, kv = inputs
        module(q, kv, kv)[0].sum()
    ours, theirs = (_mode_log(lib, program) for lib in (glasstorch, torch))
    assert ours == theirs
    assert ours.count("is_nested.__get__") >= 3


@pytest.mark.parametrize("num_layers", [1, 2])
def test_an_lstm_is_dispatched_as_torchs(num_layers):
    """A TorchDispatchMode sees an nn.LSTM's forward and backward as torch's: the zero states, the
    batch-first input made contiguous (aten.clone), one aten.mkldnn_rnn_layer per layer, the stacked
    states, one aten.mkldnn_rnn_layer_backward per layer -- less torch's autograd-internal aten.detach
    of saved results and backward()'s aten.ones_like (README, "Where glasstorch differs")."""
    def log(lib):
        seen = []

        class Log(lib.utils._python_dispatch.TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                seen.append(str(func))
                return func(*args, **(kwargs or {}))
        lib.manual_seed(0)
        module, x = lib.nn.LSTM(3, 4, num_layers=num_layers, batch_first=True), lib.randn(2, 5, 3)
        with Log():
            module(x)[0].sum().backward()
        return seen
    theirs = [name for name in log(torch) if name not in ("aten.detach.default", "aten.ones_like.default")]
    assert log(glasstorch) == theirs
    assert theirs.count("aten.mkldnn_rnn_layer.default") == num_layers


def test_the_glass_sees_metadata_queries_and_records_nothing_for_them():
    """The inspection's own mode sees ``x.dim()``, ``x.shape``... (they are on the seam, for users'
    modes) and only runs them: what record() logs is the same with them as without."""
    from glasstorch.inspection import record

    def recorded(with_queries):
        w = glasstorch.ones(3, requires_grad=True)
        with record() as rec:
            h = w * 2
            if with_queries:
                h.dim(), h.size(0), h.shape, h.dtype, len(h), h.is_contiguous()
            h.sum().backward()
        return [str(e) for e in rec.events]

    assert recorded(True) == recorded(False)
    seen = []

    class Inner(glasstorch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(_name(func))
            return func(*args, **(kwargs or {}))
    x = glasstorch.ones(2, requires_grad=True)
    with record(), Inner():
        x.dim(), x.shape
    assert seen == ["dim", "shape.__get__"]


# ------------------------------------------------------------------------------------------------
# 2. resolve_name of Tensor's operators
# ------------------------------------------------------------------------------------------------
_OPERATORS = ("__add__", "__radd__", "__iadd__", "__sub__", "__rsub__", "__isub__", "__mul__", "__rmul__", "__imul__",
              "__truediv__", "__rtruediv__", "__itruediv__", "__floordiv__", "__ifloordiv__", "__mod__", "__imod__",
              "__pow__", "__ipow__", "__rpow__", "__matmul__", "__abs__", "__neg__", "__invert__", "__eq__", "__lt__",
              "__and__", "__getitem__", "__len__", "__rdiv__", "__rand__", "__ror__", "__rxor__", "__rfloordiv__",
              "__rmod__", "__rmatmul__", "__rlshift__")


def _reflected_operators(lib, x):
    if x is None:
        return lib.ones(2, 2) + 1
    xi, y = x.int(), x.t()
    1 - x, x ** 2, 2 / x, 2 ** x, 2 // x, 2 % x, x.__rpow__(2), x.__rmatmul__(y), x.__rfloordiv__(2), x.__rmod__(2)
    x.__rsub__(1), x.__rdiv__(2), x.__rtruediv__(2), 2 + x, 2 * x, 2 & xi, 2 | xi, 2 ^ xi, 2 << xi, 2 >> xi


def test_reflected_operators_are_seen_as_torch_sees_them():
    """``1 - x`` is ``Tensor.__rsub__``, ``2 / x`` ``Tensor.__rdiv__`` (torch's ``__rtruediv__`` is that
    function), ``x ** 2`` ``pow``, ``2 & x`` ``bitwise_and``..., each with torch's arguments."""
    ours, theirs = (_mode_log(lib, _reflected_operators, with_args=True) for lib in (glasstorch, torch))
    assert ours == theirs
    assert ("__rsub__", ("T", 1), {}) in ours and ("__rdiv__", ("T", 2), {}) in ours


def test_resolve_name_of_tensors_operators_as_torch():
    def names(lib):
        return [lib.overrides.resolve_name(getattr(lib.Tensor, n)) for n in _OPERATORS] + \
               [lib.overrides.resolve_name(getattr(lib.Tensor, n)) for n in ("add", "add_", "mul", "matmul", "dim")]
    assert names(glasstorch) == names(torch)
    # (an operator and its method are two objects, the same code: calling one costs what the other does)
    assert glasstorch.Tensor.__add__ is not glasstorch.Tensor.add
    x = glasstorch.ones(2)
    assert (x + x).tolist() == [2.0, 2.0] and glasstorch.Tensor.__add__.__code__ is glasstorch.Tensor.add.__code__
    import pickle
    assert pickle.loads(pickle.dumps(glasstorch.Tensor.__add__)) is glasstorch.Tensor.__add__   # (as before)


def test_an_operator_is_declared_with_its_method():
    """``@method("add", "__add__", "__radd__")`` in the family that defines ``add`` makes the
    operators, each a function object of its own running ``add``'s code (nothing rebinds Tensor's
    attributes afterwards)."""
    from glasstorch.ops._op import method

    def demo(self, other):
        return self
    method("seam_demo", "__seam_demo__")(demo)
    try:
        op = glasstorch.Tensor.__seam_demo__
        assert glasstorch.Tensor.seam_demo is demo and op is not demo and op.__code__ is demo.__code__
        assert op.__name__ == "__seam_demo__" and op.__qualname__ == "Tensor.__seam_demo__"
    finally:
        del glasstorch.Tensor.seam_demo, glasstorch.Tensor.__seam_demo__
    assert not hasattr(importlib.import_module("glasstorch.ops"), "_operators_of_their_own")
    for n in ("__add__", "__iadd__", "__imul__", "__ifloordiv__", "__matmul__"):
        assert getattr(glasstorch.Tensor, n).__name__ == n


def _operators(lib, x):
    if x is None:
        return lib.ones(2), lib.ones(2), lib.ones(2)
    x, y, z = x
    x + y, 1 + x, x * 2, x - 1, x / 2, x @ y, -x, abs(x), x // 2, x % 2, x < y, x == y, x[0], len(x)
    z += 1
    z *= 2


def test_operators_are_seen_as_torch_sees_them():
    """``x + y`` is seen as ``Tensor.add`` in both (what a mode is given, resolved by name)."""
    def log(lib):
        seen = []

        class Log(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                seen.append((func.__name__, lib.overrides.resolve_name(func)))
                return func(*args, **(kwargs or {}))
        xs = _operators(lib, None)
        with Log():
            _operators(lib, xs)
        return seen
    assert log(glasstorch) == log(torch)


# ------------------------------------------------------------------------------------------------
# 3. bernoulli and multinomial with out=, under a dispatch mode
# ------------------------------------------------------------------------------------------------
def _dispatch_log(lib, program):
    from aten_log import dispatch_mode_class
    seen = []

    class Log(dispatch_mode_class(lib)):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append((str(func), _shown(tuple(args), lib), _shown(dict(kwargs or {}), lib)))
            return func(*args, **(kwargs or {}))
    with Log():
        result = program(lib)
    return seen, result


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bernoulli_and_multinomial_with_out_are_their_out_overloads(dtype):
    def program(lib):
        p = lib.full((3,), 0.5, dtype=getattr(lib, dtype))
        o, oi = lib.empty(3, dtype=lib.float64), lib.empty(5, dtype=lib.long)   # (oi resized to 2)
        r = lib.bernoulli(p, out=o)
        ri = lib.multinomial(p, 2, out=oi)
        lib.bernoulli(p), lib.multinomial(p, 2, True)
        return (r is o, o.dtype is lib.float64, set(o.tolist()) <= {0.0, 1.0}, ri is oi, tuple(oi.shape),
                oi.dtype is lib.long, oi.tolist()[0] != oi.tolist()[1])
    ours, theirs = (_dispatch_log(lib, program) for lib in (glasstorch, torch))
    assert ours == theirs
    assert [call[0] for call in ours[0] if "aten.full" not in call[0] and "empty" not in call[0]] == [
        "aten.bernoulli.out", "aten.multinomial.out", "aten.bernoulli.default",
                                            "aten.multinomial.default"]


@pytest.mark.parametrize("case", ["multinomial_float_out", "bernoulli_requires_grad"])
def test_bernoulli_and_multinomial_out_errors_as_torch(case):
    def run(lib):
        p = lib.full((3,), 0.5, requires_grad=case == "bernoulli_requires_grad")
        if case == "multinomial_float_out":
            return lib.multinomial(p, 2, out=lib.empty(2))
        return lib.bernoulli(p, out=lib.empty(3))
    with pytest.raises(RuntimeError) as theirs:
        run(torch)
    with pytest.raises(RuntimeError) as ours:
        run(glasstorch)
    assert str(ours.value) == str(theirs.value)


# ------------------------------------------------------------------------------------------------
# 5. redispatch_function
# ------------------------------------------------------------------------------------------------
def _redispatching(lib):
    """torch's docstring examples of redispatch_function: a logging subclass and a logging mode."""
    overrides = importlib.import_module(lib.__name__ + ".overrides")
    out = []

    class LoggingTensor(lib.Tensor):
        depth = 0

        @classmethod
        def __torch_function__(cls, func, types, args, kwargs=None):
            out.append(f"{'  ' * cls.depth}Calling {func.__name__}")
            cls.depth += 1
            r = overrides.redispatch_function(func, types, args, kwargs)
            cls.depth -= 1
            return r

    def scaled_mul(a, b):
        if overrides.has_torch_function((a, b)):
            return overrides.handle_torch_function(scaled_mul, (a, b), a, b)
        return a * b + 1

    x = lib.tensor([3.0]).as_subclass(LoggingTensor)
    y = lib.tensor([4.0]).as_subclass(LoggingTensor)
    result = scaled_mul(x, y)
    out.append((type(result).__name__, result.tolist()))

    class LoggingMode(overrides.TorchFunctionMode):
        def __init__(self):
            self.depth = 0

        def __torch_function__(self, func, types, args, kwargs=None):
            out.append(f"{'  ' * self.depth}Calling {func.__name__}")
            self.depth += 1
            with self:
                r = overrides.redispatch_function(func, types, args, kwargs)
            self.depth -= 1
            return r
    a, b = lib.tensor([3.0], requires_grad=True), lib.tensor([4.0])
    with LoggingMode():
        result = scaled_mul(a, b)
        a.grad     # (a property accessor, run as its getter)
        a.requires_grad = True
    out.append((type(result).__name__, result.tolist()))
    return out


def test_redispatch_function_as_torch():
    assert _redispatching(glasstorch) == _redispatching(torch)


def test_redispatch_function_of_an_old_form_function_runs_it_once():
    """A function still in the seam's older form (tools/seam_prelude.py lists it) is run once, with
    nothing seen inside it (README)."""
    seen = []

    class Mode(glasstorch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            with self:
                return glasstorch.overrides.redispatch_function(func, types, args, kwargs)
    x = glasstorch.ones(2, 3)
    with Mode():
        a = x.__array__()
    assert seen == ["__array__"] and a.shape == (2, 3)
    assert not glasstorch._seam.seam.skip_one_hop


# ------------------------------------------------------------------------------------------------
# what a handler is given: the arguments the caller gave, as torch's bindings hand them on
# ------------------------------------------------------------------------------------------------
def _given_calls(lib, x):
    """Calls whose every argument goes where torch's binding hands it (positional ones given
    positionally): a handler is given exactly what torch's is."""
    if x is None:
        return lib.ones(2, 3), lib.ones(2, 3), lib.ones(4, 3)
    x, y, w = x
    F = lib.nn.functional
    x.sum(), x.sum(0), lib.sum(x, 1, True), lib.sum(x, dtype=lib.float64), x.mean(), x.mean(1)
    F.linear(x, w), F.linear(x, w, lib.ones(4)), lib.add(x, y), lib.add(x, y, alpha=2), x.add(y), x + y
    x.sub(y, alpha=3), x.to(lib.float64), x.to(lib.float64, copy=True), x.float(), x.copy_(y)
    lib.zeros(2, 3), lib.zeros(2, 3, dtype=lib.float64), lib.ones_like(x), lib.ones_like(x, dtype=lib.float64)
    lib.tensor([1.0]), lib.tensor([1.0], requires_grad=True), lib.randn(2, 3), lib.cat([x, y]), lib.cat([x, y], 1)
    x.max(), x.max(1), x.clamp(0.0), x.clamp(None, 1.0), x.view(3, 2), x.reshape(-1)
    x.transpose(0, 1), x.matmul(w.t()), lib.logit(x), lib.logit(x, 0.1), x.size(), x.size(1)
    lib.where(x > 0, x, y), x.cumsum(1), lib.full((2,), 1.5), lib.arange(3), x.argmax(), x.argmax(1, True)


def _keyword_calls(lib, x):
    """Calls that give a positional parameter by keyword: torch hands it in ``kwargs``, glasstorch in
    ``args`` (a function cannot see how its parameter was given; see _seam._as_given)."""
    if x is None:
        return lib.ones(2, 3)
    lib.sum(x, dim=0), x.mean(dim=1), x.max(dim=1), x.clamp(min=0.0), x.argmax(dim=1)


def test_a_handler_is_given_the_arguments_the_caller_gave():
    ours, theirs = (_mode_log(lib, _given_calls, with_args=True) for lib in (glasstorch, torch))
    assert ours == theirs
    assert ("sum", ("T",), {}) in ours and ("add", ("T", "T"), {"alpha": 2}) in ours
    assert ("linear", ("T", "T"), {}) in ours and ("ones_like", ("T",), {}) in ours


def test_a_positional_parameter_given_by_keyword_is_handed_in_args():
    ours, theirs = (_mode_log(lib, _keyword_calls, with_args=True) for lib in (glasstorch, torch))
    assert [(name, args + tuple(kwargs.values()), {}) for name, args, kwargs in theirs] == ours
    assert all(kwargs for _, _, kwargs in theirs)


def test_overridable_hands_on_only_the_arguments_given():
    from glasstorch._seam import overridable

    @overridable
    def reduce(input, dim=None, keepdim=False, *, out=None, scale=1.0):
        return input

    @overridable(defaults_by_keyword=True, omitted=("out",))
    def python_reduce(input, dim=None, *, keepdim=False, out=None):
        return input

    seen = []

    class Log(glasstorch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if func in (reduce, python_reduce):
                seen.append((len(args), kwargs))
            return func(*args, **(kwargs or {}))
    x, o = glasstorch.ones(2), glasstorch.ones(2)
    with Log():
        reduce(x), reduce(x, 0), reduce(x, None, True), reduce(x, out=o), reduce(x, 0, scale=2.0, out=o)
    assert seen == [(1, {}), (2, {}), (3, {}), (1, {"out": o}), (2, {"scale": 2.0, "out": o})]
    seen.clear()
    with Log():
        python_reduce(x), python_reduce(x, 0, out=o)
    assert seen == [(1, {"dim": None, "keepdim": False}), (1, {"dim": 0, "keepdim": False, "out": o})]

    # the usual signature (no *args, **kwargs, keyword-only default) has the trailing defaults dropped
    # in its prelude's line itself; two functions of the same signature share the line, not the defaults
    @overridable
    def plain(input, a, b=1, c=None, d=False):
        return input

    @overridable
    def same(input, a, b=2, c=None, d=True):
        return input

    @overridable
    def keyword_only(input, *, k):
        return input
    seen.clear()

    class Everything(glasstorch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append((func.__name__, len(args), kwargs))
            return func(*args, **(kwargs or {}))
    with Everything():
        plain(x, 0), plain(x, 0, 1), plain(x, 0, 2), plain(x, 0, 1, None, False), plain(x, 0, 1, o), plain(x, 0, d=True)
        same(x, 0, 1), same(x, 0, 2, None, True), same(x, 0, 2, None, False), keyword_only(x, k=3)
    assert seen == [("plain", 2, {}), ("plain", 2, {}), ("plain", 3, {}), ("plain", 2, {}), ("plain", 4, {}),
                    ("plain", 5, {}), ("same", 3, {}), ("same", 2, {}), ("same", 5, {}),
                    ("keyword_only", 1, {"k": 3})]
    assert plain.__code__.co_code == same.__code__.co_code and "_seam_given" not in plain.__globals__

    with pytest.raises(TypeError, match="omitted= goes with defaults_by_keyword"):
        overridable(omitted=("out",))

    @overridable(defaults_by_keyword=True, omitted=("scale",))
    def wrong(input, scale=1.0):
        return input
    with pytest.raises(TypeError, match="omitted parameter 'scale' must have the default None"):
        wrong(x)


# ------------------------------------------------------------------------------------------------
# copy.deepcopy and pickle on the seam
# ------------------------------------------------------------------------------------------------
def _deepcopies(lib, x):
    if x is None:
        return lib.ones(2, 3, requires_grad=True)
    import copy
    copy.deepcopy(x)
    try:
        copy.deepcopy(x * 2)
    except RuntimeError:
        pass


def test_deepcopy_is_seen_as_torch_sees_it():
    """``copy.deepcopy(t)`` is handed to a mode as ``Tensor.__deepcopy__(t, memo)``, and nothing
    under it is seen (torch's ``handle_torch_function(Tensor.__deepcopy__, (self,), self, memo)``),
    also when it refuses a non-leaf."""
    ours, theirs = ([(n, len(a), k) for n, a, k in _mode_log(lib, _deepcopies, with_args=True)]
                    for lib in (glasstorch, torch))
    assert ours == theirs == [("__deepcopy__", 2, {}), ("mul", 2, {}), ("__deepcopy__", 2, {})]


def _pickled_subclass(lib):
    """A Tensor subclass of ``lib`` that pickle finds by name (a module global, made at the test's
    first use: defining one at import would be seen by every test of the run)."""
    name = f"_Pickled{lib.__name__.capitalize()}Tensor"
    if name not in globals():
        globals()[name] = type(name, (lib.Tensor,), {"__module__": __name__})
    return globals()[name]


@pytest.mark.parametrize("lib", LIBS, ids=lambda lib: lib.__name__)
def test_pickling_a_subclass_is_handed_to_the_mode(lib):
    """A subclass's ``__reduce_ex__`` goes through ``__torch_function__`` (a plain Tensor's fast path
    is not one call there, in torch either: see README, 'Where glasstorch differs')."""
    import pickle
    Sub = _pickled_subclass(lib)
    seen = []

    class Log(lib.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append((_name(func), len(args)))
            return func(*args, **(kwargs or {}))
    s = lib.ones(2).as_subclass(Sub)
    with Log():
        data = pickle.dumps(s)
    assert seen[0] == ("__reduce_ex__", 2)
    back = pickle.loads(data)
    assert type(back) is Sub and back.tolist() == [1.0, 1.0]


def _direct_aten_calls(lib, inputs):
    if inputs is None:
        g = lib.Generator().manual_seed(0)
        x = lib.randn(4, 3, generator=g, requires_grad=True)
        return x, lib.randn(3, generator=g, requires_grad=True), lib.randn(3, generator=g, requires_grad=True)
    x, w, b = inputs
    aten = lib.ops.aten
    out = aten.native_layer_norm(x, [3], w, b, 1e-5)     # (records geometry, sizes and input meta)
    y = aten.add(x, b)                                    # (a broadcast input: its meta is recorded)
    z = aten.mul.Tensor(x, aten.expand(b, [4, 3]))
    s = aten.as_strided(x, [2, 2], [1, 2], 1)             # (its node saves the input's geometry)
    c = aten.cat([x, x.double()])
    (out[0].sum() + y.sum() + z.sum() + s.sum() + c.sum()).backward()


def test_recording_a_direct_aten_call_shows_a_mode_no_metadata_reads():
    """Recording a node reads the arrays' shapes, dtypes and strides, not the Tensor's public
    ``shape``/``dtype``/``stride()`` (which a user's mode would see as calls torch never makes). What
    is left of the difference is a known gap (README, 'Where glasstorch differs'): torch's mode also
    sees each ``torch.ops.aten`` call itself, glasstorch's does not."""
    theirs = _mode_log(torch, _direct_aten_calls)
    ours = _mode_log(glasstorch, _direct_aten_calls)
    direct = ["native_layer_norm", "add", "expand", "mul.Tensor", "as_strided"]
    assert theirs[:5] == direct and theirs[6] == "cat"
    assert theirs[5:6] + theirs[7:] == ours
    assert not any(n.endswith("__get__") or n in ("stride", "storage_offset") for n in ours)


def test_the_one_frame_entries_step_aside_for_a_dispatch_mode():
    """``ANYWHERE.detour`` (the entries' first test, ``_ops_codegen.entry_lines``) holds while a
    TorchDispatchMode is active, so ``x + y`` is the op's call, which the mode sees."""
    from glasstorch._seam import ANYWHERE
    from glasstorch._array import devices
    from glasstorch.utils._python_dispatch import TorchDispatchMode
    seen = []

    class Log(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    x, y = glasstorch.ones(3), glasstorch.ones(3)
    with Log():
        assert ANYWHERE.detour
        x + y
    assert seen == ["aten.add.Tensor"]
    assert ANYWHERE.detour is devices.many


def test_the_one_frame_entries_step_aside_for_a_function_mode_and_a_subclass():
    """``ANYWHERE.detour`` holds while a TorchFunctionMode is on any thread's stack or an instance of a
    Tensor subclass taking part is alive (``on``'s holders), so ``x + y`` reaches them."""
    import gc
    from glasstorch._seam import ANYWHERE
    from glasstorch._array import devices
    from glasstorch.overrides import TorchFunctionMode
    seen = []

    class Log(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return func(*args, **(kwargs or {}))

    class Sub(glasstorch.Tensor):
        pass

    x, y = glasstorch.ones(3), glasstorch.ones(3)
    with Log():
        assert ANYWHERE.detour
        x + y
    assert seen == ["add"] and ANYWHERE.detour is devices.many
    s = x.as_subclass(Sub)
    assert ANYWHERE.detour and type(x + s) is Sub and type(s + y) is Sub
    del s
    gc.collect()
    assert ANYWHERE.detour is devices.many
