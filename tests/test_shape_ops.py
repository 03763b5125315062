"""The shape family (glasstorch/ops/shape.py) against torch, as the interception tools see it: the
calls a TorchFunctionMode sees, the aten ops a TorchDispatchMode sees forward and backward (torch's
decompositions: reshape/flatten are aten.view or clone + _unsafe_view, chunk is aten.split,
narrow/tensor_split are aten.slice...), the nodes and their saved values, and the view model of each
result (base, version counter, strides, creation meta).

Values and gradients of these ops are the opinfo harness's (tests/opinfo.py); the in-place/view
rules are tests/test_views_inplace.py's.
"""

import numpy as np
import pytest

import glasstorch
from aten_log import recorder, dispatch_mode_class

torch = pytest.importorskip("torch")
LIBS = (torch, glasstorch)


def _modes(lib):
    function_mode = lib.overrides.TorchFunctionMode

    class Functions(function_mode):
        def __init__(self):
            super().__init__()
            self.names = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            name = func.__name__
            self.names.append(f"{func.__self__.__name__}.{name}" if name == "__get__" else name)
            return func(*args, **(kwargs or {}))

    return Functions, lambda: recorder(lib)


# each case: x (2, 3, 4, requiring grad, a non-leaf) -> a tensor
CASES = {
    "view": lambda lib, x: x.view(-1, 4),
    "view(size tuple)": lambda lib, x: x.view((4, 6)),
    "view_as": lambda lib, x: x.view_as(x.select(0, 0).reshape(-1).expand(2, 12)),
    "reshape": lambda lib, x: x.reshape(6, 4),
    "reshape(needs a copy)": lambda lib, x: x.transpose(0, 1).reshape(-1),
    "reshape(strided, no copy)": lambda lib, x: x.narrow(1, 0, 2).reshape(2, 2, 2, 2),
    "torch.reshape": lambda lib, x: lib.reshape(x, (4, -1)),
    "reshape_as": lambda lib, x: x.reshape_as(x.transpose(0, 1)),
    "flatten": lambda lib, x: x.flatten(1),
    "flatten(needs a copy)": lambda lib, x: x.transpose(0, 2).flatten(),
    "flatten(one dim)": lambda lib, x: x.flatten(1, 1) * 1,
    "flatten(0-d)": lambda lib, x: x.sum().flatten(),
    "unflatten": lambda lib, x: x.unflatten(-1, (2, -1)),
    "ravel": lambda lib, x: x.ravel(),
    "ravel(strided)": lambda lib, x: x.mT.ravel(),
    "permute": lambda lib, x: x.permute(2, -3, 1),
    "torch.permute": lambda lib, x: lib.permute(x, (1, 0, 2)),
    "movedim": lambda lib, x: x.movedim((0, 1), (2, 0)),
    "moveaxis": lambda lib, x: lib.moveaxis(x, 0, -1),
    "T": lambda lib, x: x.select(0, 0).T,
    "mT": lambda lib, x: x.mT,
    "H": lambda lib, x: x.select(0, 1).H,
    "mH": lambda lib, x: x.mH,
    "adjoint": lambda lib, x: x.adjoint(),
    "swapaxes": lambda lib, x: x.swapaxes(0, 2),
    "swapdims": lambda lib, x: lib.swapdims(x, 1, 2),
    "squeeze": lambda lib, x: x.narrow(0, 0, 1).narrow(1, 1, 1).squeeze(),
    "squeeze(dim)": lambda lib, x: x.narrow(0, 1, 1).squeeze(0),
    "squeeze(dims)": lambda lib, x: x.narrow(0, 0, 1).narrow(1, 2, 1).squeeze((0, -2)),
    "unsqueeze": lambda lib, x: x.unsqueeze(-1),
    "select": lambda lib, x: x.select(1, -1),
    "narrow": lambda lib, x: x.narrow(-1, 1, 2),
    "narrow(negative start)": lambda lib, x: lib.narrow(x, 1, -2, 2),
    "unbind": lambda lib, x: x.unbind(1)[1],
    "split": lambda lib, x: x.split(3, -1)[1],
    "split(sizes)": lambda lib, x: lib.split(x, [1, 2], 1)[0],
    "chunk": lambda lib, x: x.chunk(3, 2)[1],
    "tensor_split(sections)": lambda lib, x: x.tensor_split(2, 1)[1],
    "tensor_split(indices)": lambda lib, x: lib.tensor_split(x, [1, 5], 2)[1],
    "clone": lambda lib, x: x.clone(),
    "clone(contiguous_format)": lambda lib, x: x.mT.clone(memory_format=lib.contiguous_format),
    "contiguous": lambda lib, x: x.transpose(0, 2).contiguous(),
    "expand_as": lambda lib, x: x.narrow(0, 0, 1).expand_as(x),
    "broadcast_to": lambda lib, x: x.narrow(1, 0, 1).broadcast_to((2, 3, 4)),
    "broadcast_tensors": lambda lib, x: lib.broadcast_tensors(x, x.narrow(0, 1, 1))[1],
    "sum_to_size": lambda lib, x: x.sum_to_size(1, 3, 1),
    "atleast_1d": lambda lib, x: lib.atleast_1d(x.sum()),
    "atleast_2d": lambda lib, x: lib.atleast_2d(x.select(0, 0).select(0, 1)),
    "atleast_3d": lambda lib, x: lib.atleast_3d(x.select(0, 1)),
    "atleast_3d(several)": lambda lib, x: lib.atleast_3d(x.sum(), x.select(0, 0).select(0, 1))[1],
}

# what each library's autograd does around the formulas (the seed, accumulating into .grad) and the
# zeros for the outputs of split/unbind no gradient reached (glasstorch's zeros are not on the op seam yet)
_AUTOGRAD_INTERNALS = {"aten.ones_like.default", "aten.detach.default", "aten.clone.default", "aten.copy_.default",
                       "aten.new_empty_strided.default", "aten.zeros.default"}
# torch stacks the gradients of unbind's outputs (aten.stack); glasstorch concatenates them unsqueezed
# until the joining family declares aten.stack
_BACKWARD_DIFFERS = {"unbind"}


def _run(lib, case):
    Functions, Ops = _modes(lib)
    x = lib.from_numpy(np.arange(24.0).reshape(2, 3, 4)).requires_grad_() * 1
    with Functions() as functions:
        CASES[case](lib, x)
    with Ops() as ops:
        y = CASES[case](lib, x)
        forward = list(ops.names)
        ops.names.clear()
        (y * y).sum().backward()
    backward = [n for n in ops.names if n not in _AUTOGRAD_INTERNALS]
    return functions.names, forward, backward, type(y.grad_fn).__name__


@pytest.mark.parametrize("case", list(CASES))
def test_modes_see_the_ops_torch_sees(case):
    (f_ours, fw_ours, bw_ours, node_ours), (f_theirs, fw_theirs, bw_theirs, node_theirs) = \
        (_run(lib, case) for lib in (glasstorch, torch))
    assert f_ours == f_theirs                   # the public calls (TorchFunctionMode)
    assert fw_ours == fw_theirs                 # the aten ops, forward (TorchDispatchMode)
    if case not in _BACKWARD_DIFFERS:
        assert bw_ours == bw_theirs             # ... and backward: the formulas' ops
    assert node_ours == node_theirs


def test_unbind_backward_ops():
    """The documented difference of the test above: unbind's gradient is concatenated, not stacked."""
    _, _, backward, _ = _run(glasstorch, "unbind")
    assert backward[-2:] == ["aten.cat.default", "aten.mul.Tensor"] and "aten.unsqueeze.default" in backward


def _view_model(lib, case):
    x = lib.from_numpy(np.arange(24.0).reshape(2, 3, 4)).requires_grad_() * 1
    y = CASES[case](lib, x)
    base = y._base
    return (tuple(y.shape), y.stride(), y.is_contiguous(), y._is_view(),
            None if base is None else (base is x, tuple(base.shape)), y.requires_grad)


@pytest.mark.parametrize("case", list(CASES))
def test_results_are_views_as_in_torch(case):
    """Which results are views, of what, with which strides (so in-place checks and overlaps agree)."""
    assert _view_model(glasstorch, case) == _view_model(torch, case)


def _saved(v):
    if isinstance(v, int) and not isinstance(v, bool) and v >= 2 ** 63:      # torch shows -1 as uint64
        return v - 2 ** 64
    return tuple(_saved(e) for e in v) if isinstance(v, tuple) else v


@pytest.mark.parametrize("case", [c for c in CASES
                                  if not c.startswith(("atleast", "broadcast", "sum_to", "flatten(one"))])
def test_saved_values_as_torch(case):
    nodes = []
    for lib in LIBS:
        x = lib.from_numpy(np.arange(24.0).reshape(2, 3, 4)).requires_grad_() * 1
        fn = CASES[case](lib, x).grad_fn
        nodes.append({k: _saved(getattr(fn, k)) for k in dir(fn) if k.startswith("_saved_")})
    assert nodes[1] == nodes[0]


# ---- the in-place view ops and resize_ --------------------------------------------------------------
INPLACE = {
    "squeeze_": lambda x: x.squeeze_(),
    "squeeze_(dim)": lambda x: x.squeeze_(1),
    "squeeze_(dims)": lambda x: x.squeeze_((1, 0)),
    "unsqueeze_": lambda x: x.unsqueeze_(-1),
    "t_": lambda x: x.select(0, 0).t_(),
    "transpose_": lambda x: x.transpose_(0, 2),
    "swapdims_": lambda x: x.swapdims_(0, 1),
    "swapaxes_": lambda x: x.swapaxes_(2, 0),
}


def _run_inplace(lib, case):
    Functions, Ops = _modes(lib)
    leaf = lib.from_numpy(np.arange(6.0).reshape(2, 1, 3)).requires_grad_()
    with Functions() as functions, Ops() as ops:
        x = leaf * 1
        y = INPLACE[case](x)
    (y * y).sum().backward()
    return (functions.names, ops.names, type(y.grad_fn).__name__, tuple(y.shape), y.stride(), y._version,
            leaf.grad.tolist())


@pytest.mark.parametrize("case", list(INPLACE))
def test_inplace_view_ops_as_torch(case):
    assert _run_inplace(glasstorch, case) == _run_inplace(torch, case)


def test_resize_is_seen_as_torch():
    def run(lib):
        Functions, Ops = _modes(lib)
        x, template = lib.arange(6.0), lib.zeros(2, 2)
        with Functions() as functions, Ops() as ops:
            x.resize_(2, 3)
            x.resize_as_(template)
        return functions.names, ops.names, tuple(x.shape)
    assert run(glasstorch) == run(torch)


# ---- views made while a dispatch mode watches ----------------------------------------------------------
@pytest.mark.parametrize("make", [lambda y: y.transpose(0, 1), lambda y: y.view(6), lambda y: y.narrow(0, 1, 1),
                                  lambda y: y.split(1)[0]], ids=["transpose", "view", "slice", "split"])
def test_inplace_on_a_view_made_under_a_dispatch_mode(make):
    """The view is made below autograd (grad mode off) but autograd records it: an in-place op on it
    is allowed or refused as without the mode (split's outputs are refused, the others allowed)."""
    def run(lib):
        _, Ops = _modes(lib)
        x = lib.arange(6.0).reshape(2, 3).requires_grad_()
        with Ops():
            y = x * 1
            v = make(y)
            try:
                v.mul_(2)
            except RuntimeError as e:
                return "refused: " + str(e).split(".")[0]
            (y * y).sum().backward()
        return type(y.grad_fn).__name__, x.grad.tolist()
    assert run(glasstorch) == run(torch)


# ---- view(dtype) -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("src, dst", [("float32", "int32"), ("float32", "float64"), ("float64", "int16"),
                                      ("int64", "float64"), ("float32", "uint8")])
def test_view_dtype_reinterprets_the_bytes(src, dst):
    def run(lib):
        x = lib.from_numpy(np.linspace(-2, 3, 24).astype(src).reshape(2, 3, 4)) * 1
        if x.dtype.is_floating_point:
            x.requires_grad_()
        v = x.view(getattr(lib, dst))
        before = v._version
        with lib.no_grad():
            x.add_(1)
        return (v.numpy().tobytes() if hasattr(v, "numpy") else None, tuple(v.shape), v._version - before,
                v.requires_grad, v._is_view(), v.grad_fn)
    assert run(glasstorch) == run(torch)


@pytest.mark.parametrize("make", [lambda lib: lib.zeros(3).view(lib.float64),
                                  lambda lib: lib.zeros(4, 2).t().view(lib.float64),
                                  lambda lib: lib.zeros(()).view(lib.int16),
                                  lambda lib: lib.zeros(5).narrow(0, 1, 4).view(lib.float64)])
def test_view_dtype_errors_as_torch(make):
    messages = []
    for lib in LIBS:
        with pytest.raises(RuntimeError) as info:
            make(lib)
        messages.append(str(info.value))
    assert messages[1] == messages[0]


def test_broadcast_tensors_leaves_a_tensor_of_the_shape_as_it_is():
    for lib in LIBS:
        x, y = lib.ones(2, 3), lib.ones(3)
        a, b = lib.broadcast_tensors(x, y)
        assert a is x and b.shape == (2, 3) and b._base is y


def test_unbind_of_an_empty_dim():
    for lib in LIBS:
        assert lib.zeros(0, 3, requires_grad=True).unbind(0) == ()


# ---- double backward through the formulas (on Tensors), where some outputs get no gradient -----------------
SECOND_ORDER = {
    "split, one piece used": lambda x: x.split(2, 2)[1],
    "split(sizes), one piece used": lambda x: x.split([1, 2], 1)[1],
    "unbind, one output used": lambda x: x.unbind(1)[2],
    "chunk": lambda x: x.chunk(2, 0)[0],
    "squeeze": lambda x: x.narrow(0, 0, 1).squeeze(),
    "squeeze(dims)": lambda x: x.narrow(1, 0, 1).squeeze((1, 0)),
    "unsqueeze": lambda x: x.unsqueeze(-2),
    "select": lambda x: x.select(-1, -2),
    "permute": lambda x: x.permute(-1, 0, 1),
    "view": lambda x: x.view(-1, 2),
    "reshape(copy)": lambda x: x.transpose(0, 2).reshape(-1),
    "reshape(alias)": lambda x: x.transpose(0, 1).reshape(3, 2, 4),
    "tensor_split": lambda x: x.tensor_split([1], 2)[1],
    "squeeze_": lambda x: x.narrow(1, 0, 1).clone().squeeze_(1),
    "unsqueeze_": lambda x: (x * 1).unsqueeze_(0),
    "t_": lambda x: x.select(0, 0).clone().t_(),
    "movedim": lambda x: x.movedim(0, -1),
}


@pytest.mark.parametrize("case", list(SECOND_ORDER))
def test_double_backward_as_torch(case):
    def run(lib):
        x = lib.from_numpy(np.linspace(-1, 2, 24).reshape(2, 3, 4)).requires_grad_()
        y = SECOND_ORDER[case](x)
        node = type(y.grad_fn).__name__
        y = y * y
        g = lib.from_numpy(np.linspace(0.5, 1.5, y.numel()).reshape(tuple(y.shape)))
        gx, = lib.autograd.grad(y, x, g, create_graph=True)
        ggx, = lib.autograd.grad((gx * gx).sum(), x)
        return node, gx.detach().numpy(), ggx.numpy()
    (node, gx, ggx), (t_node, t_gx, t_ggx) = run(glasstorch), run(torch)
    assert node == t_node
    np.testing.assert_allclose(gx, t_gx, rtol=1e-12)
    np.testing.assert_allclose(ggx, t_ggx, rtol=1e-12)


def test_an_inplace_view_op_hands_a_dispatch_mode_a_new_tensor():
    """The documented difference (README): the op's result is a new tensor, which the method moves into
    ``self``; what the user gets back is ``self``, as in torch."""
    seen = []

    class Keep(dispatch_mode_class(glasstorch)):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            seen.append((str(func), out is args[0]))
            return out
    x = glasstorch.zeros(2, 1, 3)
    with Keep():
        y = x.squeeze_(1)
    assert y is x and x.shape == (2, 3) and seen == [("aten.squeeze_.dim", False)]


@pytest.mark.parametrize("name", ["t", "t_"])
def test_t_of_more_than_two_dims_names_the_op_called(name):
    with pytest.raises(RuntimeError) as theirs:
        getattr(torch.zeros(2, 2, 2), name)()
    with pytest.raises(RuntimeError) as ours:
        getattr(glasstorch.zeros(2, 2, 2), name)()
    assert str(ours.value) == str(theirs.value)


# ---- as_strided / as_strided_ (values, gradients and double backward: the op registry, tests/opinfo.py) ---------
def _as_strided_state(L, program):
    """What ``program(L)`` leaves: per tensor it returns, its values, shape, strides, storage offset,
    node name, version, and whether it is a view of the first (or an error: type and message)."""
    try:
        tensors = program(L)
    except Exception as e:
        return ("error", type(e).__name__, str(e))
    first = tensors[0]
    return [(t.detach().tolist(), tuple(t.shape), t.stride(), t.storage_offset(),
             None if t.grad_fn is None else t.grad_fn.name(), t._version, t._base is first or t._base is first._base)
            for t in tensors]


AS_STRIDED_PROGRAMS = {
    "view of a leaf": lambda L: (lambda x: (x, x.as_strided((2, 2), (1, 2), 1)))(L.arange(6.).requires_grad_()),
    "of a view: the view's storage": lambda L: (lambda x: (x, x[2:].as_strided((2,), (1,)),
                                                          x[2:].as_strided((2,), (1,), 0)))(L.arange(6.)),
    "torch.as_strided": lambda L: (lambda x: (x, L.as_strided(x, (3, 3), (1, 1))))(L.arange(6.)),
    "shares the version counter": lambda L: (lambda x: (lambda y: (x.add_(1), y))(x.as_strided((2,), (2,))))(
        L.zeros(4)),
    "written through": lambda L: (lambda x: (x.as_strided((2,), (2,), 1).fill_(7), x))(L.zeros(4)),
    "in place on a view of a graph": lambda L: (lambda x: (lambda y: (y, y.as_strided((2,), (2,)).mul_(3), y))(
        x * 1))(L.arange(4.).requires_grad_()),
    "as_strided_": lambda L: (lambda x: (x, x.as_strided_((2, 2), (1, 2), 1)))(L.arange(6.).requires_grad_() * 1),
    "too large": lambda L: (L.arange(6.).as_strided((2,), (1,), 5),),
    "negative stride": lambda L: (L.arange(6.).as_strided((2,), (-1,)),),
    "negative offset": lambda L: (L.arange(6.).as_strided((2,), (1,), -1),),
    "strides and sizes of other lengths": lambda L: (L.arange(6.).as_strided((2,), (1, 1)),),
    "negative size": lambda L: (L.arange(6.).as_strided((-1,), (1,)),),
    "as_strided_ of a leaf that requires grad": lambda L: (L.arange(6.).requires_grad_().as_strided_((2,), (1,)),),
}


@pytest.mark.parametrize("name", list(AS_STRIDED_PROGRAMS))
def test_as_strided_as_torch(name):
    assert _as_strided_state(glasstorch, AS_STRIDED_PROGRAMS[name]) == _as_strided_state(torch, AS_STRIDED_PROGRAMS[name])


def test_as_strided_gradients_through_in_place_writes_as_torch():
    """A view made by as_strided written in place: the base's history becomes CopySlices, the view's
    AsStridedBackward0 over it (also the history torch re-derives for every other view of the base)."""
    def run(L):
        x = L.arange(8., dtype=L.float64).requires_grad_()
        base = x * 1
        v = base.as_strided((2, 2), (1, 3), 1)
        other = base[::2]
        v.mul_(base.as_strided((2, 2), (2, 1), 2).detach().clone())
        (other.sum() * 2 + v.pow(2).sum() + base.sum()).backward()
        return x.grad.tolist(), base.grad_fn.name(), v.grad_fn.name(), other.grad_fn.name()
    assert run(glasstorch) == run(torch)


def test_dispatch_mode_sees_as_strided():
    from aten_log import recording
    names = {}
    for L in (torch, glasstorch):
        x = L.arange(6.)
        with recording(L) as seen:
            x.as_strided((2,), (2,), 1)
            x.clone().as_strided_((2,), (1,))
            L.zeros(7, 3).fill_diagonal_(5, wrap=True)      # (torch's composition: as_strided views, filled)
        names[L.__name__] = seen.names
    assert names["glasstorch"] == names["torch"]


# ---- torch.broadcast_shapes: torch._refs' walk and words --------------------------------------------------
BROADCAST_SHAPES = [
    ((2, 3), (4, 3)), ((2, 1), (3, 4), (5, 4)), (3, 4), (3, (2, 1)), ((2, 3), [4, 3]), ((1, 3), (2, 4)),
    ((2,), (3,), (4, 5, 6)), ((5, 1, 3), (4, 3), (2,)), ((0,), (2,)), ((0,), (1,)), ((3, 1), (1, 4)),
    ((2, 3), (-1, 3)), ((1,), (-1,)), ((-2,),), ((-2,), (3,)), ((2, 3), (3,)), (), ((),), ((2,), None),
    ((2,), {3}), ((2,), 5.0), (None, None), ((1, 1, 1), (2,), (3, 1)),
]


def _size_args(T, shapes):
    return tuple(T.Size(s[1]) if isinstance(s, tuple) and s and s[0] == "Size" else s for s in shapes)


@pytest.mark.parametrize("shapes", BROADCAST_SHAPES + [(("Size", (2, 3)), ("Size", (2, 4)))], ids=str)
def test_broadcast_shapes_matches_torch(shapes):
    def run(T):
        try:
            return tuple(T.broadcast_shapes(*_size_args(T, shapes)))
        except Exception as e:
            return type(e).__name__, str(e)
    assert run(glasstorch) == run(torch)


def test_broadcast_shapes_refuses_what_is_not_a_shape_of_ints():
    """(Pinned, README "Where glasstorch differs": torch broadcasts a string's characters and float
    lengths -- ``broadcast_shapes((2,), 'ab')`` complains of "a dimension of length b" --; glasstorch
    says the shape is not one of ints.)"""
    for bad in ("ab", (2.0,)):
        with pytest.raises(TypeError, match="must be tuple of ints"):
            glasstorch.broadcast_shapes((2,), bad)
