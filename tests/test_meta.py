"""The meta device against torch's: tensors with a shape, dtype and strides and no data, made by the
same factories and computed by the same op kernels (glasstorch/_array/meta.py), and meta as the
second device every device rule is tested with (mixing devices, .to and its node, model.to,
optimizers, state_dict and map_location).
"""
import io
import resource
import sys
import time

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import glasstorch  # noqa: E402

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from opinfo import op_db  # noqa: E402


def _outcome(fn):
    try:
        return ("ok", repr(fn()))
    except Exception as e:  # noqa: BLE001 - we compare whatever torch raises
        return (type(e).__name__, str(e))


def _same(call):
    """``call(lib)`` gives the same repr, or the same exception type, in torch and glasstorch."""
    ours, theirs = _outcome(lambda: call(glasstorch)), _outcome(lambda: call(torch))
    assert ours == theirs, f"glasstorch {ours} vs torch {theirs}"


FACTORIES = {
    "zeros": lambda L: L.zeros(2, 3, device="meta"),
    "ones int": lambda L: L.ones((2,), dtype=L.int64, device="meta"),
    "empty 0-d": lambda L: L.empty((), device="meta"),
    "full": lambda L: L.full((2, 2), 7, device="meta"),
    "rand": lambda L: L.rand(3, device="meta"),
    "randn f64": lambda L: L.randn(2, 3, dtype=L.float64, device="meta"),
    "randint": lambda L: L.randint(0, 5, (3,), device="meta"),
    "randperm": lambda L: L.randperm(4, device="meta"),
    "arange": lambda L: L.arange(5, device="meta"),
    "arange float": lambda L: L.arange(0, 1, 0.25, device="meta"),
    "linspace": lambda L: L.linspace(0, 1, 5, device="meta"),
    "eye": lambda L: L.eye(3, 2, device=L.device("meta")),
    "tensor": lambda L: L.tensor([1.0, 2.0], device="meta"),
    "tensor requires_grad": lambda L: L.tensor([1.0, 2.0], device="meta", requires_grad=True),
    "zeros_like": lambda L: L.zeros_like(L.ones(2, 3), device="meta"),
    "rand_like of meta": lambda L: L.rand_like(L.ones(2, 3, device="meta")),
    "new_zeros of meta": lambda L: L.ones(2, device="meta").new_zeros(3),
    "new_tensor of meta": lambda L: L.ones(2, device="meta").new_tensor([1.0]),
    "to meta": lambda L: L.ones(2, 3).to("meta"),
    "to meta float64": lambda L: L.ones(2, 3).to(device="meta", dtype=L.float64),
    "meta to meta is itself": lambda L: (lambda t: t.to("meta") is t)(L.ones(2, device="meta")),
}


@pytest.mark.parametrize("name", FACTORIES)
def test_factories_and_printing_match_torch(name):
    _same(FACTORIES[name])


DATA_ERRORS = {
    "item": lambda L: L.ones((), device="meta").item(),
    "item of many": lambda L: L.ones(2, device="meta").item(),
    "tolist": lambda L: L.ones(2, device="meta").tolist(),
    "numpy": lambda L: L.ones(2, device="meta").numpy(),
    "bool": lambda L: bool(L.ones((), device="meta")),
    "float": lambda L: float(L.ones(1, device="meta")),
    "cpu": lambda L: L.ones(2, device="meta").cpu(),
    "to cpu": lambda L: L.ones(2, device="meta").to("cpu"),
    "nonzero": lambda L: L.nonzero(L.ones(2, device="meta")),
    "boolean mask": lambda L: (lambda t: t[t > 0])(L.ones(2, device="meta")),
    "unique": lambda L: L.unique(L.ones(2, device="meta")),
}


@pytest.mark.parametrize("name", DATA_ERRORS)
def test_asking_a_meta_tensor_for_data_raises_torchs_error_type(name):
    ours, theirs = _outcome(lambda: DATA_ERRORS[name](glasstorch)), _outcome(lambda: DATA_ERRORS[name](torch))
    assert theirs[0] != "ok"
    if name in ("nonzero", "boolean mask", "unique"):
        # (torch's text names its internals -- nonzero's "register_meta function", masked_select's
        # "fake impl" -- so the type is what is compared)
        assert isinstance(_raised(lambda: DATA_ERRORS[name](glasstorch)), NotImplementedError), ours
    else:
        assert ours == theirs


def _raised(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return e
    return None


MIXED = {
    "cpu + meta": lambda L: L.ones(2, 3) + L.ones(2, 3, device="meta"),
    "meta + cpu": lambda L: L.ones(2, 3, device="meta") + L.ones(2, 3),
    "meta * cpu 0-d (a number)": lambda L: L.ones(2, 3, device="meta") * L.tensor(2.0),
    "mul_ in place": lambda L: L.ones(2, 3, device="meta").mul_(L.ones(2, 3)),
    "div": lambda L: L.div(L.ones(2, device="meta"), L.ones(2)),
    "cat": lambda L: L.cat([L.ones(2), L.ones(2, device="meta")]),
    "stack": lambda L: L.stack([L.ones(2, device="meta"), L.ones(2)]),
    "where": lambda L: L.where(L.ones(2, dtype=L.bool), L.ones(2, device="meta"), L.ones(2)),
    "mse_loss": lambda L: L.nn.functional.mse_loss(L.ones(2, device="meta"), L.ones(2)),
    "backward with a gradient on another device":
        lambda L: (lambda x: (x * 2).backward(L.ones(2)))(L.ones(2, device="meta", requires_grad=True)),
    "backward with a 0-d gradient (a number)":
        lambda L: (lambda x: ((x * 2).backward(L.tensor(1.0)), x.grad)[1])(L.ones((), device="meta", requires_grad=True)),
    "copy_ is the op between devices": lambda L: L.ones(2, device="meta").copy_(L.ones(2)),
    "copy_ out of meta has no data": lambda L: L.ones(2).copy_(L.ones(2, device="meta")),
    "to(dtype) on meta records the copy": lambda L: (lambda x: (lambda y: (
        type(y.grad_fn).__name__, y.sum().backward(), x.grad))(x.to(L.float64)))(L.ones(2, device="meta", requires_grad=True)),
}


@pytest.mark.parametrize("name", MIXED)
def test_mixing_devices_raises_torchs_error_naming_both(name):
    _same(MIXED[name])


def test_mixing_devices_in_a_matmul_is_refused():
    # (torch 2.13 lets mm(cpu, meta) through and returns an uninitialised CPU tensor; glasstorch
    # applies its device rule: see README "Where glasstorch differs")
    with pytest.raises(RuntimeError, match="Tensor on device meta is not on the expected device cpu!"):
        glasstorch.mm(glasstorch.ones(2, 3), glasstorch.ones(3, 2, device="meta"))


def test_meta_tensor_metadata_matches_torch():
    for L in (torch, glasstorch):
        a = L.ones(2, 3, device="meta")
        got = (a.is_meta, str(a.device), a.get_device(), a.t().stride(), a.t().is_contiguous(), a.nbytes,
               a[0, 1:].storage_offset(), a.t().clone().stride(), a.sum(0).stride(), a.data_ptr(), len(a),
               str(L.ones(2).device), L.ones(2).is_meta)
        if L is torch:
            expected = got
        else:
            assert got == expected


def test_default_device_context_and_set_default_device():
    for L in (torch, glasstorch):
        with L.device("meta"):
            inside = [str(f().device) for f in (lambda: L.ones(2), lambda: L.tensor([1.0]), lambda: L.arange(3),
                                               lambda: L.randn(2), lambda: L.zeros_like(L.ones(2, device="cpu")))]
            with L.device("cpu"):
                nested = str(L.zeros(1).device)
            after_nested = str(L.zeros(1).device)
        outside = str(L.zeros(1).device)
        L.set_default_device("meta")
        try:
            by_setting = (str(L.zeros(1).device), str(L.get_default_device()))
        finally:
            L.set_default_device(None)
        got = (inside, nested, after_nested, outside, by_setting, str(L.zeros(1).device), str(L.get_default_device()))
        if L is torch:
            expected = got
        else:
            assert got == expected


def test_a_huge_linear_is_built_on_meta_instantly_without_memory():
    glasstorch.nn.Linear(2, 2)      # (torch.nn's first use imports it: not what is timed)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    with glasstorch.device("meta"):
        layer = glasstorch.nn.Linear(100_000, 100_000)
    elapsed = time.perf_counter() - start
    assert layer.weight.is_meta and layer.weight.shape == (100_000, 100_000) and layer.bias.shape == (100_000,)
    assert layer.weight.nbytes == 4 * 10 ** 10      # described: 40 GB...
    assert elapsed < 0.5            # (about a millisecond)
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 100_000                      # ...not allocated
    y = layer(glasstorch.ones(8, 100_000, device="meta"))   # ops on it: shapes only
    assert y.shape == (8, 100_000) and type(y.grad_fn).__name__ == "AddmmBackward0"


def _graph(t):
    """A graph's node names and, per node, the shapes of its inputs' gradients, in a fixed order."""
    seen, out, stack = set(), [], [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        out.append(type(node).__name__)
        stack.extend(n for n, _ in node.next_functions)
    return out


def test_autograd_graph_of_a_meta_model_matches_torch():
    results = {}
    for L in (torch, glasstorch):
        L.manual_seed(0)
        model = L.nn.Sequential(L.nn.Linear(4, 8), L.nn.ReLU(), L.nn.Linear(8, 3)).to("meta")
        x = L.randn(5, 4, device="meta")
        target = L.randn(5, 3, device="meta")
        loss = L.nn.functional.mse_loss(L.log_softmax(model(x), 1), target)
        loss.backward()
        grads = [(tuple(p.grad.shape), str(p.grad.device), str(p.grad.dtype)) for p in model.parameters()]
        results[L.__name__] = (_graph(loss), repr(loss), grads)
    assert results["glasstorch"] == results["torch"]


def test_to_records_the_copy_and_backward_follows_torch():
    for L in (torch, glasstorch):
        x = L.randn(2, 3, requires_grad=True)
        y = x.to("meta")
        z = (y * y).sum()
        got = [type(y.grad_fn).__name__, repr(L.autograd.grad(z, y, retain_graph=True)[0])]
        # the gradient goes back to the source device: from meta, torch has no data to copy
        got.append(_outcome(lambda: z.backward()))
        w = L.randn(2, 3, device="meta", requires_grad=True)
        (w * 2).sum().backward()
        got.append(repr(w.grad))
        if L is torch:
            expected = got
        else:
            assert got == expected


def test_model_to_moves_parameters_and_optimizers_keep_working():
    for L in (torch, glasstorch):
        model = L.nn.Linear(3, 2)
        params = list(model.parameters())
        opt = L.optim.Adam(model.parameters(), lr=0.1)
        model.to("meta")
        # torch keeps the Parameter objects only between devices whose tensors can swap their
        # storage in place (CPU and CUDA); CPU -> meta is not such a pair there, and it makes new
        # Parameters. glasstorch keeps them on every move (README: "Where glasstorch differs").
        kept = [p is q for p, q in zip(model.parameters(), params)]
        assert kept == ([False, False] if L is torch else [True, True])
        kept, moved = None, list(model.parameters())
        model.to(L.float64)
        kept_on_dtype = [p is q for p, q in zip(model.parameters(), moved)]
        metas = [p.is_meta for p in model.parameters()]
        model = L.nn.Linear(3, 2, device="meta")
        opt = L.optim.Adam(model.parameters(), lr=0.1)
        model(L.ones(4, 3, device="meta")).sum().backward()
        opt.step()
        got = (kept, kept_on_dtype, metas, [repr(p) for p in model.parameters()], [p.grad.is_meta for p in model.parameters()],
               sorted(k for s in opt.state.values() for k in s))
        if L is torch:
            expected = got
        else:
            assert got == expected


def test_copy_between_devices_with_a_gradient_records_the_transfer():
    """copy_ from a tensor that requires grad on another device: glasstorch records the transfer
    (ToCopyBackward0) under CopyBackwards, torch routes the gradient inside CopyBackwards; the
    gradients agree (README: "Where glasstorch differs")."""
    x = glasstorch.ones(2, requires_grad=True)
    y = glasstorch.zeros(2, device="meta").copy_(x)
    assert type(y.grad_fn).__name__ == "CopyBackwards" and y.is_meta
    assert type(y.grad_fn.next_functions[1][0]).__name__ == "ToCopyBackward0"
    z = glasstorch.zeros(2, device="meta").requires_grad_()
    w = z.clone().copy_(glasstorch.ones(2, device="meta", requires_grad=True))
    w.sum().backward()
    assert z.grad.is_meta and z.grad.shape == (2,)


def test_optimizer_made_before_model_to_keeps_working():
    """The books make the optimizer, then move the model (``model.to(device)``): the optimizer holds
    the same Parameter objects, which now live on the device, and its state is made there.
    (glasstorch keeps the Parameters on every move; torch between CPU and CUDA.)"""
    for make in (lambda ps: glasstorch.optim.SGD(ps, lr=0.1, momentum=0.9), lambda ps: glasstorch.optim.Adam(ps)):
        model = glasstorch.nn.Sequential(glasstorch.nn.Linear(3, 4), glasstorch.nn.BatchNorm1d(4))
        opt = make(model.parameters())
        model.to("meta")
        assert all(p is q for p, q in zip(model.parameters(), opt.param_groups[0]["params"]))
        assert all(b.is_meta for b in model.buffers())
        for _ in range(2):
            opt.zero_grad()
            model(glasstorch.ones(5, 3, device="meta")).sum().backward()
            opt.step()
        state = [v for s in opt.state.values() for k, v in s.items() if k != "step"]
        assert state and all(v.is_meta for v in state)
        assert all(p.is_meta and p.grad.is_meta for p in model.parameters())


def test_optimizer_state_loads_onto_the_parameters_device_and_map_location_forms():
    """An optimizer's state saved on the CPU, loaded into an optimizer of a meta model, moves to the
    parameters' device ('step' stays a CPU scalar, as torch keeps it); buffers move with the model;
    ``map_location`` as a dict and as a device."""
    def run(L):
        L.manual_seed(0)
        model = L.nn.Sequential(L.nn.Linear(3, 2), L.nn.BatchNorm1d(2))
        opt = L.optim.Adam(model.parameters(), lr=0.1)
        model(L.randn(4, 3)).sum().backward()
        opt.step()
        saved = io.BytesIO()
        L.save(opt.state_dict(), saved)
        saved.seek(0)
        meta_model = L.nn.Sequential(L.nn.Linear(3, 2), L.nn.BatchNorm1d(2)).to("meta")
        meta_opt = L.optim.Adam(meta_model.parameters(), lr=0.1)
        meta_opt.load_state_dict(L.load(saved))
        state = sorted((k, str(v.device), str(v.dtype)) for s in meta_opt.state.values() for k, v in s.items())
        weights = io.BytesIO()
        L.save(model.state_dict(), weights)
        located = []
        for where in ({"cpu": "meta"}, L.device("meta"), "meta"):
            weights.seek(0)
            located.append({k: (str(v.device), tuple(v.shape)) for k, v in L.load(weights, map_location=where).items()})
        return state, [(n, b.is_meta) for n, b in meta_model.named_buffers()], located
    assert run(glasstorch) == run(torch)


def test_state_dict_between_devices_and_map_location():
    for L in (torch, glasstorch):
        L.manual_seed(0)
        source = L.nn.Linear(3, 2)
        buffer = io.BytesIO()
        L.save(source.state_dict(), buffer)
        buffer.seek(0)
        on_meta = L.load(buffer, map_location="meta")
        assert all(t.is_meta and t.shape == source.state_dict()[k].shape for k, t in on_meta.items())
        # a model built on meta takes the CPU weights by assignment
        with L.device("meta"):
            skeleton = L.nn.Linear(3, 2)
        skeleton.load_state_dict(source.state_dict(), assign=True)
        assert not skeleton.weight.is_meta and isinstance(skeleton.weight, L.nn.Parameter)
        assert L.equal(skeleton.weight, source.weight)
        # or is given uninitialised CPU storage, then loaded
        other = L.nn.Linear(3, 2, device="meta").to_empty(device="cpu")
        assert other.weight.device.type == "cpu" and other.weight.shape == (2, 3)
        other.load_state_dict(source.state_dict())
        assert L.equal(other.bias, source.bias)


def test_meta_tensors_save_and_load_without_storage_across_libraries():
    """torch saves a meta tensor as ``_rebuild_meta_tensor_no_storage(dtype, size, stride,
    requires_grad)``; each library reads the other's file."""
    def save(L):
        buffer = io.BytesIO()
        state = L.nn.Linear(3, 2, device="meta").state_dict()
        state["t"] = L.ones(2, 3, device="meta", dtype=L.float64).t()
        L.save(state, buffer)
        buffer.seek(0)
        return buffer

    def describe(state):
        return {k: (repr(v), v.stride()) for k, v in state.items()}
    expected = describe(torch.load(save(torch)))
    assert describe(glasstorch.load(save(torch))) == expected
    assert describe(torch.load(save(glasstorch))) == expected
    assert describe(glasstorch.load(save(glasstorch))) == expected
    buffer = io.BytesIO()
    glasstorch.save(glasstorch.nn.Linear(3, 2, device="meta"), buffer)
    buffer.seek(0)
    model = glasstorch.load(buffer, weights_only=False)
    assert isinstance(model.weight, glasstorch.nn.Parameter) and model.weight.is_meta and model.weight.requires_grad


# ---- every op in the registry, on meta ------------------------------------------------------
def _to_meta(lib, sample):
    args, kwargs, _ = sample.build(lib, device="meta")
    return args, kwargs


def _flat(r):
    if isinstance(r, (list, tuple)):
        return [y for x in r for y in _flat(x)]
    return [r]


def _describe(lib, r):
    return [(tuple(x.shape), str(x.dtype), x.device.type, type(x.grad_fn).__name__ if x.grad_fn is not None else None)
            if isinstance(x, lib.Tensor) else type(x).__name__ for x in _flat(r)]


# ops whose meta results differ from torch's meta kernels' (torch's own quirks, not shape rules)
_META_DIFFERENCES = {"nansum", "nanmean", "aten.native_group_norm_backward", "aten.native_batch_norm"}


def _every_op_on_meta(samples_per_op):
    """For the first samples of every op in the registry: where torch's meta kernels answer, glasstorch
    answers the same shapes, dtypes, device and node names -- or raises NotImplementedError (its
    kernel needs values), or the error torch's CPU kernel raises (a check torch's meta kernel skips).
    Never a CPU tensor, never another shape. Returns how many samples were answered and refused."""
    answered = refused = 0
    wrong = []
    for op in op_db:
        if op.name in _META_DIFFERENCES:
            continue
        dtype = op.dtypes[0]
        for sample in op.samples(dtype)[:samples_per_op]:
            try:
                theirs = _describe(torch, op.torch_fn(*_to_meta(torch, sample)[0], **_to_meta(torch, sample)[1]))
            except Exception:  # noqa: BLE001 - torch has no meta kernel for it either
                continue
            args, kwargs = _to_meta(glasstorch, sample)
            try:
                ours = _describe(glasstorch, op.glasstorch_fn(*args, **kwargs))
            except NotImplementedError:
                refused += 1
                continue
            except Exception as e:  # noqa: BLE001
                cpu = _raised(lambda: op.torch_fn(*sample.build(torch)[0], **sample.build(torch)[1]))
                if type(cpu) is not type(e):
                    wrong.append(f"{op.name} {sample}: raised {type(e).__name__}: {e}")
                continue
            answered += 1
            if ours != theirs:
                wrong.append(f"{op.name} {sample}: {ours} != torch's {theirs}")
    assert not wrong, "\n".join(wrong[:40]) + f"\n({len(wrong)} in all)"
    return answered, refused


def test_every_op_on_meta_gives_torchs_shapes_dtypes_and_nodes_or_refuses():
    answered, refused = _every_op_on_meta(1)
    assert answered >= 450, (answered, refused)     # (measured: 486 answered, 32 refused)


@pytest.mark.slow
def test_every_sample_of_every_op_on_meta():
    answered, refused = _every_op_on_meta(None)
    assert answered >= 1800, (answered, refused)


def test_cpu_ops_after_meta_ones_stay_on_the_cpu():
    """The op layer settles a result only after a kernel touched a meta array (a hint, set by the
    meta array itself); a CPU op that runs while the hint is up keeps its CPU result."""
    m = glasstorch.ones(2, 3, device="meta")
    _ = m.shape, m.sum()            # (reads that raise the hint)
    x = glasstorch.ones(2, 3)
    y = x * 2 + x
    assert y.device.type == "cpu" and y.tolist() == [[3.0] * 3] * 2
    glasstorch._array.meta.touched.flag = True   # as another thread's meta op would leave it
    z = glasstorch.mm(x, x.t())
    assert z.device.type == "cpu" and z.tolist() == [[3.0, 3.0], [3.0, 3.0]]


def _layouts(lib, device, count=400, seed=0):
    """(tensor, new shape) pairs over random layouts (permuted, sliced), the same for both libraries."""
    import random
    rng = random.Random(seed)
    for _ in range(count):
        shape = [rng.choice([1, 2, 3, 4]) for _ in range(rng.randint(1, 4))]
        t = lib.empty(shape + [2], device=device)[..., 0]
        perm = list(range(t.dim()))
        rng.shuffle(perm)
        t = t.permute(perm)
        if rng.random() < 0.3 and t.shape[0] > 1:
            t = t[::2]
        m, new = t.numel(), []
        for f in (2, 3, 2, 4):
            if m % f == 0 and rng.random() < 0.6:
                new.append(f)
                m //= f
        new.append(m)
        rng.shuffle(new)
        if rng.random() < 0.3:
            new.insert(rng.randint(0, len(new)), 1)
        yield t, tuple(new)


def test_view_and_reshape_on_meta_lay_out_as_torchs():
    """view either succeeds with torch's strides or raises torch's error; reshape is a view (torch's
    strides) exactly when torch's is. A meta array's ``a.shape = ...`` refuses a shape that needs a
    copy as NumPy's does (it used to lay the array out afresh, so a view that torch refuses passed)."""
    def layouts(lib):
        out = []
        for t, new in _layouts(lib, "meta"):
            try:
                viewed = t.view(new).stride()
            except RuntimeError as e:
                viewed = "view size is not compatible" in str(e)
            out.append((tuple(t.shape), t.stride(), new, viewed, t.reshape(new).stride()))
        return out
    assert layouts(glasstorch) == layouts(torch)


@pytest.mark.parametrize("name", ["special.gammaln", "digamma", "erf", "erfc", "erfinv", "special.i0e", "special.i1",
                                  "special.erfcx", "special.log_ndtr", "special.ndtri", "special.bessel_j0", "sinc",
                                  "round", "xlogy", "special.entr", "nn.functional.hardtanh", "nn.functional.elu"])
def test_element_wise_results_on_meta_keep_the_inputs_layout_as_torchs(name):
    """An element-wise op of a transposed (or permuted) meta tensor is laid out as its input, as torch's
    TensorIterator lays it out: the special functions' shape-only answer on meta was a row-major copy,
    and np.where, np.clip, np.round, np.sinc and np.asarray(like=) on meta arrays were row-major."""
    def strides(lib):
        fn = lib
        for part in name.split("."):
            fn = getattr(fn, part)
        out = []
        for x in (lib.ones(3, 4, device="meta").t(), lib.ones(2, 3, 4, device="meta").permute(2, 0, 1)):
            out.append((fn(x, x) if name == "xlogy" else fn(x)).stride())
        return out
    assert strides(glasstorch) == strides(torch)


def test_meta_array_shape_setter_refuses_a_copy_as_numpy():
    from glasstorch._array import meta
    a = meta.zeros((4, 6), "float32")[:, :4]
    with pytest.raises(AttributeError, match="Incompatible shape"):
        a.shape = (16,)
    a.shape = (2, 2, 4)
    assert a.strides == (48, 24, 4)


# ---- compile's shape propagation on meta ----------------------------------------------------
def _mlp_loss(L):
    F = L.nn.functional

    def loss_fn(model, x, y):
        return F.cross_entropy(model(x), y)
    return loss_fn


def _table(graph):
    """A captured graph's nodes: (op, name, target, shape, dtype, requires_grad) each."""
    return [(n.op, n.name, str(n.target), n.meta.get("shape"), str(n.meta.get("dtype")), n.meta.get("requires_grad"))
            for n in graph.nodes]


def test_compile_captures_on_meta_the_graph_it_captures_on_cpu():
    """The capture runs the function once, eagerly: on meta tensors that run computes nothing, and
    the graph -- its nodes, their shapes and dtypes -- is the one a CPU capture makes. The generated
    code then runs on meta too (shapes through the compiled forward and backward)."""
    graphs = {}
    for device in ("cpu", "meta"):
        glasstorch.manual_seed(0)
        model = glasstorch.nn.Sequential(glasstorch.nn.Linear(4, 8), glasstorch.nn.ReLU(),
                                         glasstorch.nn.Linear(8, 3)).to(device)
        fn = glasstorch.compile(_mlp_loss(glasstorch))
        x, y = glasstorch.randn(5, 4, device=device), glasstorch.tensor([0, 1, 2, 0, 1], device=device)
        first = fn(model, x, y)                     # the capture
        loss = fn(model, x, y)                      # the generated code
        assert type(first.grad_fn).__name__ == "NllLossBackward0"
        assert type(loss.grad_fn).__name__ == "CompiledFunctionBackward" and loss.device.type == device
        loss.backward()
        assert [(p.grad.shape, p.grad.device.type) for p in model.parameters()] == \
            [(p.shape, device) for p in model.parameters()]
        graphs[device] = _table(fn.graph)
    assert graphs["meta"] == graphs["cpu"]


def test_compiled_code_is_guarded_by_device():
    """A graph captured on the CPU does not run on meta inputs (nor the other way): the guards check
    each tensor's device, as torch's do, and a call on another device captures again -- where eager
    raises the device error, so does the compiled function."""
    model = glasstorch.nn.Linear(4, 3)
    fn = glasstorch.compile(lambda m, x: m(x).relu().sum())
    x = glasstorch.randn(5, 4)
    fn(model, x), fn(model, x)
    assert "device cpu" in fn.cache[0].guards.check((model, x.to("meta")), {})
    with pytest.raises(RuntimeError, match="Tensor on device cpu is not on the expected device meta!"):
        fn(model, x.to("meta"))    # (torch's words for F.linear(meta input, CPU weight and bias): mat1's device expected)
    model.to("meta")
    out = fn(model, x.to("meta"))
    assert out.is_meta and len(fn.cache) == 2


def test_shape_prop_on_meta_gives_a_captured_graph_shapes_for_new_inputs_as_torch():
    """fx.passes.shape_prop.ShapeProp runs a graph on meta tensors: every node's TensorMetadata
    (shape, dtype, requires_grad, stride, memory_format) with nothing computed -- here a graph
    torch.compile captured at batch 5, asked about batch 7; the metadata equals torch's ShapeProp's
    for the same values (torch's graph made by fx.symbolic_trace)."""
    from glasstorch.fx.passes.shape_prop import ShapeProp
    from torch.fx.passes.shape_prop import ShapeProp as TorchShapeProp
    model = glasstorch.nn.Sequential(glasstorch.nn.Linear(4, 8), glasstorch.nn.ReLU(), glasstorch.nn.Linear(8, 3))
    fn = glasstorch.compile(lambda m, x: m(x).t())
    fn(model, glasstorch.randn(5, 4))
    gm = glasstorch.fx.GraphModule({}, fn.graph)
    inputs = [n for n in gm.graph.nodes if n.op == "placeholder"]
    args = [glasstorch.empty((7, 4) if n.name == "arg1" else n.meta["shape"], dtype=n.meta["dtype"], device="meta")
            .requires_grad_(n.meta["requires_grad"]) for n in inputs]
    out = ShapeProp(gm).propagate(*args)
    assert out.is_meta and out.shape == (3, 7)
    ours = {n.name: n.meta["tensor_meta"] for n in gm.graph.nodes if "tensor_meta" in n.meta}
    assert ours["addmm"].shape == (7, 8) and ours["t"].stride == (1, 4) and ours["t"].memory_format is None

    class Transposed(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))

        def forward(self, x):
            return self.layers(x).t()
    traced = torch.fx.symbolic_trace(Transposed())
    TorchShapeProp(traced).propagate(torch.randn(7, 4))
    theirs = [n.meta["tensor_meta"] for n in traced.graph.nodes if n.op == "output"][0]

    def plain(m):
        return (tuple(m.shape), str(m.dtype), m.requires_grad, tuple(m.stride), str(m.memory_format),
                m.is_quantized, m.qparams)
    assert plain(ours["output"]) == plain(theirs)
    assert type(ours["output"]).__name__ == "TensorMetadata" and ours["output"]._fields == theirs._fields


def test_eager_backend_runs_a_graph_with_a_call_kept_whole():
    """backend="eager" runs the captured graph with fx.GraphModule (an fx.Interpreter); a call the
    capture kept whole (cross_entropy, an eager island) hands its one tensor to the graph (it used
    to be indexed: IndexError on the 0-d loss)."""
    model = glasstorch.nn.Linear(4, 3)
    fn = glasstorch.compile(_mlp_loss(glasstorch), backend="eager")
    x, y = glasstorch.randn(5, 4), glasstorch.tensor([0, 1, 2, 0, 1])
    expected = glasstorch.nn.functional.cross_entropy(model(x), y)
    fn(model, x, y)
    assert glasstorch.equal(fn(model, x, y), expected)


def test_gradients_built_with_numpy_in_a_formula_stay_on_meta():
    """Formulas that build a gradient with NumPy's own functions (zeros, then the values scattered:
    max, sort, topk, pooling, embedding) made CPU gradients for meta inputs; the engine hands them on
    as meta, as torch's meta kernels give."""
    calls = {"max": lambda L, x: x.max(1).values, "sort": lambda L, x: x.sort(1).values,
             "topk": lambda L, x: x.topk(2).values, "max_pool2d": lambda L, x: L.nn.functional.max_pool2d(x[None], 2),
             "avg_pool1d": lambda L, x: L.nn.functional.avg_pool1d(x[None], 2),
             "embedding": lambda L, x: L.nn.functional.embedding(L.tensor([[0, 2]], device="meta"), x)}
    for name, call in calls.items():
        got = []
        for L in (torch, glasstorch):
            x = L.randn(3, 4, device="meta", requires_grad=True)
            call(L, x).sum().backward()
            got.append((repr(x.grad), x.grad.stride()))
        assert got[0] == got[1], name


# ---- the device rules on each second device: meta always, CUDA where glasstorch finds a GPU ----
SECOND_DEVICES = [pytest.param("meta"), pytest.param("cuda", marks=pytest.mark.skipif(
    not glasstorch.cuda.is_available(), reason="needs a GPU (CuPy): tools/gpu_check.py runs these there"))]


@pytest.mark.parametrize("device", SECOND_DEVICES)
def test_device_rules_on(device):
    """Every rule of issue 15 on one second device, in glasstorch alone (torch's CPU-only wheel cannot
    be the oracle for CUDA): mixing is an error naming both devices; ``.to`` records ToCopyBackward0
    and its backward returns the gradient to the source device; ``model.to`` keeps the Parameters and
    an optimizer made before keeps working; a state_dict saved there loads with ``map_location``."""
    on = glasstorch.device(device)
    with pytest.raises(RuntimeError) as mixed:
        glasstorch.ones(2, 3) + glasstorch.ones(2, 3, device=device)
    assert "cpu" in str(mixed.value) and device in str(mixed.value)

    x = glasstorch.tensor([1.0, 2.0], requires_grad=True)
    y = x.to(device)
    assert y.device.type == device and type(y.grad_fn).__name__ == "ToCopyBackward0"
    if device == "meta":      # the gradient goes back to the CPU: meta has no data to send
        with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor"):
            (y * y).sum().backward()
    else:
        (y * y).sum().backward()
        assert x.grad.device.type == "cpu" and x.grad.tolist() == [2.0, 4.0]

    model = glasstorch.nn.Sequential(glasstorch.nn.Linear(3, 4), glasstorch.nn.BatchNorm1d(4))
    params = list(model.parameters())
    opt = glasstorch.optim.Adam(model.parameters(), lr=0.1)
    assert model.to(on) is model
    assert all(p is q and p.device.type == device for p, q in zip(model.parameters(), params))
    assert all(b.device.type == device for b in model.buffers())
    model(glasstorch.ones(5, 3, device=device)).sum().backward()
    opt.step()
    assert all(v.device.type == device for s in opt.state.values() for k, v in s.items() if k != "step")

    saved = io.BytesIO()
    glasstorch.save(model.state_dict(), saved)
    saved.seek(0)
    back = glasstorch.load(saved, map_location="meta" if device == "meta" else "cpu")
    assert {k: (tuple(v.shape), v.device.type) for k, v in back.items()} == \
        {k: (tuple(v.shape), "meta" if device == "meta" else "cpu") for k, v in model.state_dict().items()}
