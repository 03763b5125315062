"""The indexing and joining families as primitive ops, against torch 2.13: what a TorchDispatchMode
records for small programs that index, gather, cat and stack (forward and backward), the nodes and
their saved values, gradients and double backward through ``tensor[...]`` and index assignment, and
torch's rule for a list used as an index (``treatSequenceAsTuple``).

The recorded sequences leave out what glasstorch does not declare as an aten op yet (the shape
family's views, the comparisons: other branches convert them) and torch's autograd internals
(``detach`` of each leaf, ``ones_like`` for the seed, ``lift_fresh`` for a tensor made from a list).
"""
import warnings

import numpy as np
import pytest

import glasstorch

torch = pytest.importorskip("torch")

# (copy_: torch's AccumulateGrad copies a gradient it cannot take over -- a view, an expanded one -- into
# the leaf's .grad through the dispatcher; glasstorch's accumulation is not a dispatched op)
_INTERNALS = {"detach", "ones_like", "lift_fresh", "copy_"}


def _RNG_ARRAYS(*shapes):
    """The same random inputs for both libraries (their generators differ)."""
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s) for s in shapes]


def _declared(name):
    return name in vars(glasstorch.ops.aten)


def _recorded(lib, program):
    from aten_log import recorder, packet
    x, y = (lib.tensor(a, requires_grad=True) for a in _RNG_ARRAYS((4, 5), (4, 5)))
    with recorder(lib, keep=lambda op: packet(op) not in _INTERNALS and _declared(packet(op))) as log:
        program(lib, x, y).sum().backward()
    return log.names, x.grad, y.grad


PROGRAMS = {
    "index": lambda lib, x, y: x[lib.tensor([0, 2, 2])] * y.sum(0),
    "index_dim1": lambda lib, x, y: x[:, lib.tensor([4, 0])],
    "index_list": lambda lib, x, y: x[[0, 3]],
    "index_two": lambda lib, x, y: x[lib.tensor([0, 1]), lib.tensor([2, 3])],
    "mask": lambda lib, x, y: x[y > 0],
    "gather": lambda lib, x, y: x.gather(1, lib.tensor([[0, 1]] * 4)),
    "cat": lambda lib, x, y: lib.cat([x, y], 1),
    "cat_promotes": lambda lib, x, y: lib.cat([x, y.float()]),
    "stack": lambda lib, x, y: lib.stack([x, y], -1),
    "index_select": lambda lib, x, y: x.index_select(1, lib.tensor([4, 4, 0])),
    "take": lambda lib, x, y: x.take(lib.tensor([0, 19, 7])),
    "masked_select": lambda lib, x, y: x.masked_select(y > 0),
    "index_put": lambda lib, x, y: x.index_put((lib.tensor([0, 0, 3]),), y.sum(0), accumulate=True),
    "index_add": lambda lib, x, y: x.index_add(0, lib.tensor([1, 3, 1, 0]), y, alpha=2),
    "scatter_add": lambda lib, x, y: x.scatter_add(0, lib.tensor([[0, 1, 2, 3, 0]] * 4), y),
    "roll": lambda lib, x, y: x.roll((1, -2), (0, 1)),
    "tril": lambda lib, x, y: x.tril(-1) + y.triu(1),
    "diagonal": lambda lib, x, y: x.diagonal(1),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_dispatch_mode_records_torchs_ops(name):
    ours, theirs = (_recorded(lib, PROGRAMS[name]) for lib in (glasstorch, torch))
    assert ours[0] == theirs[0]
    for g, t in zip(ours[1:], theirs[1:]):
        assert (g is None) == (t is None)
        if g is not None:
            np.testing.assert_allclose(g.numpy(), t.numpy())


def test_the_recorded_sequence_names_the_indexing_ops():
    ops, _, _ = _recorded(glasstorch, PROGRAMS["index"])
    assert ops[:3] == ["aten.index.Tensor", "aten.sum.dim_IntList", "aten.mul.Tensor"]
    assert ["aten.new_zeros.default", "aten.index_put.default"] == ops[-2:]
    ops, _, _ = _recorded(glasstorch, PROGRAMS["cat"])
    assert ops[0] == "aten.cat.default" and ops[-2:] == ["aten.slice.Tensor"] * 2


# ---- nodes -------------------------------------------------------------------------------------
NODES = {
    "x[idx]": (lambda lib, x, y: x[lib.tensor([0, 2])], "IndexBackward0"),
    "x[:, idx]": (lambda lib, x, y: x[:, lib.tensor([0, 2])], "IndexBackward0"),
    "gather": (lambda lib, x, y: x.gather(0, lib.tensor([[0, 1]])), "GatherBackward0"),
    "cat": (lambda lib, x, y: lib.cat([x, y]), "CatBackward0"),
    "stack": (lambda lib, x, y: lib.stack([x, y]), "StackBackward0"),
    "repeat": (lambda lib, x, y: x.repeat(2, 1), "RepeatBackward0"),
    "tile": (lambda lib, x, y: x.tile(2), "RepeatBackward0"),
    "roll": (lambda lib, x, y: x.roll(1, 0), "RollBackward0"),
    "tril": (lambda lib, x, y: x.tril(), "TrilBackward0"),
    "diagonal": (lambda lib, x, y: x.diagonal(), "DiagonalBackward0"),
    "diag 2-D": (lambda lib, x, y: lib.diag(x), "DiagonalBackward0_copy"),
    "diag 1-D": (lambda lib, x, y: lib.diag(x[0]), "DiagEmbedBackward0"),
    "trace": (lambda lib, x, y: lib.trace(x), "TraceBackward0"),
    "index_select": (lambda lib, x, y: x.index_select(0, lib.tensor([0, 2])), "IndexSelectBackward0"),
    "index_put": (lambda lib, x, y: x.index_put((lib.tensor([0]),), y[0]), "IndexPutBackward0"),
    "index_add": (lambda lib, x, y: x.index_add(0, lib.tensor([0]), y[:1]), "IndexAddBackward0"),
    "index_copy": (lambda lib, x, y: x.index_copy(0, lib.tensor([0]), y[:1]), "IndexCopyBackward0"),
    "index_fill": (lambda lib, x, y: x.index_fill(0, lib.tensor([0]), 2.0), "IndexFillBackward0"),
    "index_fill tensor": (lambda lib, x, y: x.index_fill(0, lib.tensor([0]), y[0, 0]), "IndexFillBackward1"),
    "scatter src": (lambda lib, x, y: x.scatter(0, lib.tensor([[0, 1]]), y), "ScatterBackward0"),
    "scatter value": (lambda lib, x, y: x.scatter(0, lib.tensor([[0, 1]]), 2.0), "ScatterBackward1"),
    "scatter_add": (lambda lib, x, y: x.scatter_add(0, lib.tensor([[0, 1]]), y), "ScatterAddBackward0"),
    "masked_select": (lambda lib, x, y: x.masked_select(y > 0), "MaskedSelectBackward0"),
    "masked_scatter": (lambda lib, x, y: x.masked_scatter(y > 0, y), "MaskedScatterBackward0"),
    "take": (lambda lib, x, y: x.take(lib.tensor([0, 3])), "TakeBackward0"),
    "put": (lambda lib, x, y: x.put(lib.tensor([0, 3]), y[0, :2]), "PutBackward0"),
}


@pytest.mark.parametrize("name", NODES)
def test_node_name_and_saved_values_as_torch(name):
    program, node_name = NODES[name]
    found = []
    for lib in (glasstorch, torch):
        lib.manual_seed(0)
        x = lib.randn(3, 4, requires_grad=True)
        y = lib.randn(3, 4, requires_grad=True)
        fn = program(lib, x, y).grad_fn
        found.append((type(fn).__name__, sorted(a for a in dir(fn) if a.startswith("_saved_"))))
    assert found[0][0] == found[1][0] == node_name
    assert set(found[1][1]) <= set(found[0][1]) | {"_saved_source_dim", "_saved_values"}


def test_saved_indices_hold_none_for_whole_dims():
    x = glasstorch.randn(3, 4, requires_grad=True)
    idx = glasstorch.tensor([0, 2])
    saved = x[:, idx].grad_fn._saved_indices
    assert saved[0] is None and saved[1] is idx
    assert x[:, idx].grad_fn._saved_self_sym_sizes == (3, 4)


def test_an_index_modified_in_place_before_backward_is_refused():
    for lib in (glasstorch, torch):
        x = lib.randn(3, 4, requires_grad=True)
        idx = lib.tensor([0, 2])
        y = x[idx]
        idx.add_(0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


# ---- tensor[...] and tensor[...] = v: values, grads, double backward, node names -------------------
def _run_index(lib, index_fn, setting=False):
    xa, va, wa = _RNG_ARRAYS((4, 5, 3), (1,), (64,))
    x, v = lib.tensor(xa, requires_grad=True), lib.tensor(va, requires_grad=True)
    if setting:
        z = x * 1
        z[index_fn(lib)] = v
        out = z
    else:
        out = x[index_fn(lib)]
    name = type(out.grad_fn).__name__
    w = lib.tensor(np.resize(wa, tuple(out.shape)))
    (gx, gv) = lib.autograd.grad((out * out * w).sum(), (x, v), create_graph=True, allow_unused=True)
    second = lib.autograd.grad((gx * gx).sum() + (0 if gv is None else (gv * gv).sum()), x, allow_unused=True)[0]
    return out.detach().numpy(), name, gx.detach().numpy(), None if gv is None else gv.detach().numpy(), second


INDICES = {
    "int": lambda lib: 1,
    "slice": lambda lib: slice(1, 3),
    "tensor": lambda lib: lib.tensor([0, 2, 2]),
    "mask": lambda lib: lib.arange(4) % 2 == 0,
    "tuple mixed": lambda lib: (lib.tensor([0, 3]), slice(None), 1),
    "separated advanced": lambda lib: (lib.tensor([0, 3]), 1, lib.tensor([2, 0])),
    "None and Ellipsis": lambda lib: (None, ..., lib.tensor([1])),
    "list": lambda lib: [0, 3, 1],
    "2-d mask": lambda lib: lib.ones(4, 5, dtype=lib.bool).tril(),
    "bool scalar": lambda lib: True,
}


@pytest.mark.parametrize("setting", [False, True], ids=["getitem", "setitem"])
@pytest.mark.parametrize("name", INDICES)
def test_indexing_values_grads_and_double_backward_as_torch(name, setting):
    index_fn = INDICES[name]
    if setting and name in ("int", "slice"):
        index_fn = {"int": lambda lib: (1, 2), "slice": lambda lib: (slice(1, 3), 0)}[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = _run_index(glasstorch, index_fn, setting)
        theirs = _run_index(torch, index_fn, setting)
    np.testing.assert_allclose(ours[0], theirs[0])
    assert ours[1] == theirs[1]
    np.testing.assert_allclose(ours[2], theirs[2])
    assert (ours[3] is None) == (theirs[3] is None)
    if ours[3] is not None:
        np.testing.assert_allclose(ours[3], theirs[3])
    assert (ours[4] is None) == (theirs[4] is None)
    if ours[4] is not None:
        np.testing.assert_allclose(ours[4].numpy(), theirs[4].numpy())


def test_advanced_index_copies_basic_index_views():
    x = glasstorch.zeros(3, 4)
    x[1][2] = 5.0                     # a view: the write reaches x
    x[glasstorch.tensor([0])][0, 0] = 7.0     # a copy: it does not
    assert x[1, 2].item() == 5.0 and x[0, 0].item() == 0.0


def test_setitem_on_a_view_gives_copyslices_as_torch():
    names = []
    for lib in (glasstorch, torch):
        x = lib.randn(4, 5, requires_grad=True)
        z = x * 1
        view = z[1:3]
        view[lib.tensor([0]), 2] = 1.0
        names.append(type(z.grad_fn).__name__)
        z.sum().backward()
        names.append(x.grad.numpy().tolist())
    assert names[0] == names[2] == "CopySlices"
    assert names[1] == names[3]


def test_index_errors_as_torch():
    for lib in (glasstorch, torch):
        x = lib.zeros(3, 4)
        with pytest.raises(IndexError, match="out of bounds"):
            x[lib.tensor([3])]
        with pytest.raises(IndexError, match="tensors used as indices must be long"):
            x[lib.tensor([0.5])]
        with pytest.raises(IndexError, match="The shape of the mask"):
            x[lib.ones(2, dtype=lib.bool)]
        with pytest.raises(RuntimeError, match="shape mismatch"):
            x[lib.tensor([0, 1])] = lib.ones(3, 4)
        with pytest.raises(RuntimeError, match="Index put requires the source and destination dtypes match"):
            x[lib.tensor([0])] = lib.ones(4, dtype=lib.float64)


def test_aten_index_called_directly_checks_its_indices():
    aten = glasstorch.ops.aten
    x = glasstorch.arange(12.).reshape(3, 4)
    assert aten.index.Tensor(x, [None, glasstorch.tensor([3, 0])]).tolist() == [[3., 0.], [7., 4.], [11., 8.]]
    with pytest.raises(IndexError, match="index 4 is out of bounds for dimension 1 with size 4"):
        aten.index.Tensor(x, [None, glasstorch.tensor([4])])


# ---- a list as an index (issue 8): torch's treatSequenceAsTuple ------------------------------------
def _list_cases(lib):
    t0, t1 = lib.tensor(0), lib.tensor([1, 2])
    return {
        "[t0, t1]": [t0, t1], "[t1, t1]": [t1, t1], "[0, slice]": [0, slice(None)], "[[0, 1], [1, 2]]": [[0, 1], [1, 2]],
        "[None]": [None], "[0, None]": [0, None], "[True, False, True]": [True, False, True],
        "[Ellipsis, 0]": [..., 0], "[0, 1]": [0, 1], "[t0]": [t0], "[t0, 1]": [t0, 1],
        "[(0, 1), (1, 2)]": [(0, 1), (1, 2)], "[0, [1, 2]]": [0, [1, 2]], "32 tensors": [t0] * 32,
        "3 tensors": [lib.tensor(0)] * 3, "[0.0]": [0.0], "[t1]": [t1], "[slice]": [slice(0, 2)],
        "[range]": [range(2)], "[0, t1]": [0, t1], "[np.int64, 1]": [np.int64(0), 1],
        "[np array]": [np.array([0, 1])], "31 ints": list(range(3)) * 10 + [1],
    }


@pytest.mark.parametrize("name", list(_list_cases(glasstorch)))
def test_a_list_index_follows_torchs_rule(name):
    results = []
    for lib in (glasstorch, torch):
        x = lib.arange(60.).reshape(3, 4, 5)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = x[_list_cases(lib)[name]]
        deprecated = [w for w in caught if "non-tuple sequence for multidimensional indexing" in str(w.message)]
        results.append((value.numpy().tolist(), len(deprecated)))
        if lib is glasstorch and deprecated:
            assert deprecated[0].filename == __file__       # (the warning points at the indexing line)
    assert results[0] == results[1]


def test_a_list_index_in_assignment_follows_torchs_rule():
    for index in ([0, slice(None)], [[0, 1], [1, 2]], [0, 2]):
        ours, theirs = glasstorch.zeros(3, 4), torch.zeros(3, 4)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours[index] = 1.0
            theirs[index] = 1.0
        assert ours.numpy().tolist() == theirs.numpy().tolist()


def test_getitem_and_setitem_pass_the_seam_under_torchs_names():
    seen = []

    class Seen(glasstorch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return func(*args, **(kwargs or {}))
    x, idx = glasstorch.zeros(3, 4), glasstorch.tensor([0])
    with Seen():
        x[idx] = 1.0
        x[1:, 2]
        glasstorch.cat([x, x])
    assert seen == ["__setitem__", "__getitem__", "cat"]


# The in-place indexing ops are aten ops of their own (aten.index_put_, aten.scatter_.src, ...), seen as
# torch's are, with and without autograd; index assignment is aten.index_put_ (advanced index) or a view
# and fill_/copy_ (basic index). Each step runs on a fresh x (an intermediate when autograd is on).
_IN_PLACE_INTERNALS = {"clone", "detach", "ones_like", "lift_fresh", "_to_copy", "copy_", "expand", "zeros_like"}
IN_PLACE_INDEXING = [
    lambda L, x, y: x.scatter_(0, L.tensor([[0, 1, 2, 3, 0]]), y[:1]),
    lambda L, x, y: x.scatter_(1, L.tensor([[4], [0], [2], [1]]), 2.0),
    lambda L, x, y: x.scatter_add_(0, L.tensor([[0, 1, 2, 3, 0]] * 2), y[:2]),
    lambda L, x, y: x.index_add_(0, L.tensor([1, 3, 1]), y[:3], alpha=2),
    lambda L, x, y: x.index_put_((L.tensor([0, 2]),), y[1]),
    lambda L, x, y: x.index_put_((L.tensor([0, 0, 3]), L.tensor([1, 1, 4])), y[0, :3], accumulate=True),
    lambda L, x, y: x.__setitem__(L.tensor([3, 1]), y[:2]),
    lambda L, x, y: x.__setitem__(y > 0, 0.5),
    lambda L, x, y: x.__setitem__((slice(None), L.tensor([0, 4])), y[:, :1]),
    lambda L, x, y: x.__setitem__((1, slice(None)), 1.5),
    lambda L, x, y: x[1:].index_add_(1, L.tensor([0, 4]), y[1:, :2]),
]


def _in_place_indexing_run(lib, dtype, requires_grad):
    from aten_log import recorder, packet
    x0, y = (lib.tensor(a.astype(dtype), requires_grad=requires_grad) for a in _RNG_ARRAYS((4, 5), (4, 5)))
    log = recorder(lib, keep=lambda name: packet(name) not in _IN_PLACE_INTERNALS and _declared(packet(name))
                   and packet(name) != "gt")
    xs = []
    for step in IN_PLACE_INDEXING:
        x = x0 * 1 if requires_grad else x0.clone()
        with log:
            step(lib, x, y)
        xs.append(x)
    nodes = [type(x.grad_fn).__name__ for x in xs] if requires_grad else None
    if requires_grad:
        sum((x * lib.arange(20.0, dtype=x.dtype).reshape(4, 5)).sum() for x in xs).backward()
    grads = None if not requires_grad else [x0.grad.numpy(), y.grad.numpy()]
    return log.names, np.stack([x.detach().numpy() for x in xs]), grads, nodes


@pytest.mark.parametrize("requires_grad", [False, True], ids=["no_autograd", "autograd"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dispatch_mode_sees_in_place_indexing_as_torch(dtype, requires_grad):
    ours, theirs = (_in_place_indexing_run(lib, dtype, requires_grad) for lib in (glasstorch, torch))
    assert ours[0] == theirs[0]
    assert "aten.index_put_.default" in ours[0] and "aten.scatter_.src" in ours[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)
    assert ours[3] == theirs[3]
    if requires_grad:
        for g, t in zip(ours[2], theirs[2]):
            assert g.dtype == t.dtype
            np.testing.assert_allclose(g, t, rtol=1e-6)


def test_index_put_casts_one_value_at_a_mask_as_torch():
    """torch's index_put_ hands one value put at a boolean mask to masked_fill_ (any dtype casts);
    elsewhere the value's dtype must be self's."""
    def run(lib):
        x = lib.zeros(3)
        out = [x.clone().index_put_((x == 0,), lib.tensor(2)).tolist(), x.index_put((x == 0,), lib.tensor([3])).tolist()]
        for f in (lambda: x.clone().index_put_((lib.tensor([0]),), lib.tensor(1)),
                  lambda: x.clone().index_put_((x == 0,), lib.tensor(1), accumulate=True)):
            with pytest.raises(RuntimeError, match="Index put requires the source and destination dtypes match"):
                f()
        y = lib.zeros(3)
        y[y == 0] = lib.tensor(4)
        return out + [y.tolist()]
    assert run(glasstorch) == run(torch)




# ---- layouts of results that are copies of their input (torch's clone keeps the layout) -----------------
def _strides_that_matter(t):
    return [s for s, n in zip(t.stride(), t.shape) if n > 1]


@pytest.mark.parametrize("k", [-1, 0, 1, 2, 3])
@pytest.mark.parametrize("dims", [(0, 1), (1, 0), (-1, 0)])
def test_rot90_lays_out_its_result_as_torch(k, dims):
    """k = 0 is a contiguous clone; the other turns are flip's result (laid out like the input), turned."""
    x = np.arange(24.0).reshape(2, 3, 4)
    t, g = (lib.tensor(x).transpose(0, 2).rot90(k, dims) for lib in (torch, glasstorch))
    assert g.tolist() == t.tolist() and _strides_that_matter(g) == _strides_that_matter(t)


@pytest.mark.parametrize("accumulate", [False, True])
def test_put_keeps_its_inputs_layout_as_torch(accumulate):
    outs = [lib.tensor(np.arange(12.0).reshape(3, 4)).t().put(lib.tensor([0, 5]), lib.tensor([7.0, 9.0]).double(),
                                                              accumulate=accumulate) for lib in (torch, glasstorch)]
    assert outs[1].tolist() == outs[0].tolist() and outs[1].stride() == outs[0].stride()


@pytest.mark.parametrize("values", [[1, 1, 2, 3, 3, 1], [], [5]])
def test_unique_consecutive_counts_and_empty_layouts_as_torch(values):
    outs = [lib.unique_consecutive(lib.tensor(values, dtype=lib.int64), return_inverse=True, return_counts=True)
            for lib in (torch, glasstorch)]
    for t, g in zip(*outs):
        assert g.tolist() == t.tolist() and g.stride() == t.stride()


@pytest.mark.parametrize("shape", [(3, 5), (2, 3, 4), (2, 1, 6), (3, 2, 1, 2), (5,), (0, 3), (3, 0), (2, 0, 3)])
@pytest.mark.parametrize("name", ["unique_consecutive", "unique"])
def test_unique_along_a_dim_lays_out_and_refuses_as_torch(name, shape):
    """The result is laid out with ``dim`` outermost in memory (torch moves it first, makes that contiguous,
    moves it back: (2, 3, 4) at dim=-1 has strides (3, 1, 6)); an empty input whose empty dims are not
    ``dim`` is refused with torch's words, one empty along ``dim`` copied row-major."""
    base = np.random.default_rng(len(shape)).integers(0, 2, shape)
    for dim in range(-len(shape), len(shape)):
        for transposed in (False, True):   # (the input's own layout does not matter)
            outs = []
            for lib in (torch, glasstorch):
                t = lib.tensor(base)
                if transposed:
                    t = t.transpose(0, -1).contiguous().transpose(0, -1)
                try:
                    res = getattr(lib, name)(t, dim=dim, return_inverse=True, return_counts=True)
                    outs.append([(r.tolist(), tuple(r.shape), r.stride()) for r in res])
                except RuntimeError as e:
                    outs.append(str(e))
            assert outs[1] == outs[0], (dim, transposed)
