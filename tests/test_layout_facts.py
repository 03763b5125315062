"""The layout facts a Tensor keeps beside its array (``Tensor._layout_of`` / ``Tensor._layout``,
``_array/plain_layout``), which the one-frame entries read instead of the array's attributes: the facts
an entry hands its result are the array's own, and an array replaced or reshaped anywhere (``set_``,
``.data =``, ``resize_``, in-place view ops, NumPy's side of ``numpy()`` / ``from_numpy``) never
leaves stale facts in use -- values, strides and gradients against torch."""
import copy
import io
import pickle

import numpy as np
import pytest
import torch

import glasstorch as gt
from glasstorch._array import plain_layout
from glasstorch._array.plain_layout import layout_of, NO_LAYOUT
from glasstorch._tensor import layout_facts
from glasstorch.ops import pointwise


@pytest.fixture(autouse=True)
def _entries_on(monkeypatch):
    # (a test of another device earlier in this process switched the device rule on for good, which
    # turns the one-frame entries off: these tensors are all on the CPU, where it has nothing to check)
    from one_device import device_rule_off
    device_rule_off(monkeypatch)


def _arrays(shape, dtype, n=2, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(dtype) for _ in range(n)]


def _facts_hold(t):
    """Where ``t`` keeps facts, they are its array's."""
    if t._layout_of is t._data:
        assert t._layout is layout_of(t._data), (t._layout, layout_of(t._data))
        return True
    return False


_UNARY_PLAIN = [row[0] for row in pointwise._UNARY if "f" not in pointwise._REFUSES.get(row[0], ("",))[0]]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", _UNARY_PLAIN)
def test_a_unary_entry_hands_on_its_results_own_facts(name, dtype):
    x = gt.tensor(np.abs(_arrays((4, 5), dtype)[0]) * 0.5 + 0.1)
    out = getattr(gt, name)(x)
    assert _facts_hold(x)
    assert _facts_hold(out) == (name not in pointwise._BOOL_RESULT)
    assert out.stride() == getattr(torch, name)(torch.tensor(x.numpy())).stride()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32, np.float16, np.complex64, bool])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_a_binary_entry_hands_on_its_results_own_facts(op, dtype):
    a, b = (gt.tensor(v.astype(dtype)) for v in _arrays((3, 4, 5), np.float64))
    if dtype is bool and op in ("sub", "div"):
        pytest.skip("torch refuses bool - bool; bool / bool is a float")
    out = getattr(gt, op)(a, b)
    _facts_hold(out)
    ta, tb = torch.tensor(a.numpy()), torch.tensor(b.numpy())
    tout = getattr(torch, op)(ta, tb)
    assert str(out.dtype) == str(tout.dtype) and out.stride() == tout.stride()
    np.testing.assert_allclose(out.numpy().astype(np.complex128), tout.numpy().astype(np.complex128), rtol=1e-3)
    # and a chain of them, each result's facts the ones the next call reads
    for _ in range(3):
        out = getattr(gt, op)(out, b)
        _facts_hold(out)


@pytest.mark.parametrize("shapes", [((4, 3), (3, 5)), ((5, 3), (3, 1)), ((1, 3), (3, 4)), ((0, 3), (3, 2)),
                                    ((3, 0), (0, 2)), ((4, 1), (1, 3)), ((300, 4), (4, 200)), ((2, 3, 4), (4, 5))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_matmul_hands_on_its_results_own_facts(shapes, dtype):
    a, b = _arrays(shapes[0], np.float64)[0].astype(dtype), _arrays(shapes[1], np.float64, seed=1)[0].astype(dtype)
    x, y = gt.tensor(a), gt.tensor(b)
    for _ in range(2):     # (the second time: the product's key remembered)
        out = x @ y
        tout = torch.tensor(a) @ torch.tensor(b)
        _facts_hold(out)
        assert out.shape == tout.shape and out.stride() == tout.stride() and str(out.dtype) == str(tout.dtype)
        np.testing.assert_allclose(out.numpy(), tout.numpy(), rtol=1e-5, atol=1e-5)
    if len(shapes[0]) == 2:
        out2 = out + out          # the product's facts read by the next entry
        np.testing.assert_allclose(out2.numpy(), (tout + tout).numpy(), rtol=1e-5, atol=1e-5)
        assert out2.stride() == (tout + tout).stride()


def _chain(lib, x, w, b):
    h = x
    for _ in range(3):
        h = (h + b) * w
        h = h.tanh() @ w
    return h


def _leaves(lib, arrays, requires_grad):
    return [lib.tensor(a, requires_grad=requires_grad) for a in arrays]


def _after(lib, how, t, other):
    """``t`` changed in place as ``how`` says (its array replaced or reshaped), under no_grad where torch
    refuses it on a leaf that requires grad."""
    with lib.no_grad():
        if how == "set_":
            t.set_(other)
        elif how == "data":
            t.data = other
        elif how == "resize_":
            t.resize_(other.shape)
            t.copy_(other)
        elif how == "t_":
            t.t_()
        elif how == "transpose_":
            t.transpose_(0, 1)
        elif how == "unsqueeze_":
            t.unsqueeze_(0)
        elif how == "squeeze_":
            t.unsqueeze_(0)
            t.squeeze_(0)
        elif how == "as_strided_":
            t.as_strided_((t.shape[1], t.shape[0]), (1, t.shape[1]))
        elif how == "swapdims_":
            t.swapdims_(0, 1)


_CHANGES = ["set_", "data", "resize_", "t_", "transpose_", "unsqueeze_", "squeeze_", "as_strided_", "swapdims_"]


@pytest.mark.parametrize("how", _CHANGES)
@pytest.mark.parametrize("other_shape", [(5, 5), (5, 1), (1, 5), (5, 3)])
def test_an_array_replaced_or_reshaped_in_place_leaves_no_stale_facts(how, other_shape):
    if how not in ("set_", "data", "resize_") and other_shape != (5, 5):
        pytest.skip("the change takes no other tensor")
    arrays = _arrays((5, 5), np.float32, 3)
    other = _arrays(other_shape, np.float32, 1, seed=7)[0]
    x, w, b = _leaves(gt, arrays, False)
    tx, tw, tb = _leaves(torch, arrays, False)
    with gt.no_grad():
        _chain(gt, x, w, b)       # every tensor's facts found and kept
    assert _facts_hold(b) and _facts_hold(w)
    _after(gt, how, b, gt.tensor(other))
    _after(torch, how, tb, torch.tensor(other))
    assert b.shape == tb.shape and b.stride() == tb.stride()
    if b._layout_of is b._data:
        _facts_hold(b)
    for f in (lambda h, b: h + b, lambda h, b: b + h, lambda h, b: b * h, lambda h, b: b.tanh(), lambda h, b: b @ h,
              lambda h, b: h @ b, lambda h, b: b - b, lambda h, b: b / (b * b + 1)):
        try:
            texpected = f(tx, tb)
        except RuntimeError as e:
            with pytest.raises(RuntimeError, match=str(e).split("(")[0][:30]):
                f(x, b)
            continue
        got = f(x, b)
        assert got.shape == texpected.shape and got.stride() == texpected.stride()
        np.testing.assert_allclose(got.numpy(), texpected.numpy(), rtol=1e-5, atol=1e-6)
        _facts_hold(got)


@pytest.mark.parametrize("how", ["t_", "transpose_", "unsqueeze_", "squeeze_", "swapdims_"])
def test_gradients_through_tensors_reshaped_in_place_match_torch(how):
    arrays = _arrays((4, 4), np.float64, 3)
    (x, w, b), (tx, tw, tb) = _leaves(gt, arrays, True), _leaves(torch, arrays, True)
    results = []
    for lib, (xx, ww, bb) in ((gt, (x, w, b)), (torch, (tx, tw, tb))):
        h = (xx * 1.0) @ ww        # a non-leaf, changed in place under grad mode
        getattr(h, how)(*((0, 1) if how in ("transpose_", "swapdims_") else (0,) if how == "unsqueeze_" else ()))
        if h.dim() == 3:
            h = h.squeeze(0)
        out = _chain(lib, h, ww, bb)
        out.sum().backward()
        results.append([t.grad.numpy().copy() for t in (xx, ww, bb)])
    for g, tg in zip(*results):
        np.testing.assert_allclose(g, tg, rtol=1e-6, atol=1e-8)


def test_numpy_and_from_numpy_hand_out_arrays_of_their_own():
    a = _arrays((4, 6), np.float32)[0]
    t = gt.from_numpy(a)
    t + t                        # facts kept
    a.shape = (6, 4)             # the caller's array reshaped: the tensor's is not (as with torch)
    assert t.shape == (4, 6) and np.shares_memory(t.numpy(), a)
    n = t.numpy()
    n.shape = (24,)
    assert t.shape == (4, 6)
    np.testing.assert_array_equal((t + t).numpy(), torch.from_numpy(a.reshape(4, 6) * 2).numpy())
    n[0] = 100.0                 # writes through
    assert t[0, 0].item() == 100.0
    u = gt.as_tensor(a)
    a.shape = (24,)
    assert u.shape == (6, 4)


def test_every_way_to_make_a_tensor_leaves_facts_to_find():
    a, b = _arrays((3, 4), np.float32)
    x = gt.tensor(a)
    made = [x.as_subclass(gt.Tensor), copy.deepcopy(x), pickle.loads(pickle.dumps(x)), x.detach(), x.clone(),
            gt.nn.Parameter(x).detach(), x.view(3, 4), x[:, :], gt.Tensor(a), x._alias()]
    for t in made:
        np.testing.assert_array_equal((t + t).numpy(), a * 2)
        assert _facts_hold(t)


def test_arrays_no_plain_case_applies_to_get_no_key():
    a = _arrays((3, 4), np.float32)[0]
    assert layout_of(a.astype(">f4")) is NO_LAYOUT
    assert layout_of(a.astype(np.dtype(np.float32, metadata={"k": 1}))) is NO_LAYOUT
    assert layout_of(a.view(np.ndarray)) is layout_of(a) and layout_of(a.view(type("Sub", (np.ndarray,), {}))) is NO_LAYOUT
    assert not layout_of(a.T).dense and layout_of(a.T) is not layout_of(a)
    assert not layout_of(a[:1]).dense and layout_of(a[:, :1]) is not layout_of(a[:1].T)
    assert layout_of(a[:, ::2]) is not layout_of(np.ascontiguousarray(a[:, ::2]))


def test_a_full_table_of_keys_starts_over_and_results_stay_right():
    x, y = (gt.tensor(v) for v in _arrays((6, 7), np.float32))
    z = x + y
    plain_layout._KEYS.clear()   # (what a full table does)
    z2 = z + x                   # z's and x's keys are older than the table: still one key, one layout
    w = gt.tensor(_arrays((6, 7), np.float32, seed=3)[0])
    z3 = z2 * w                  # w's key is a new one for the same layout: the arrays' guard decides
    assert layout_facts(w) is not z2._layout
    expected = (x.numpy() + y.numpy() + x.numpy()) * w.numpy()
    np.testing.assert_allclose(z3.numpy(), expected, rtol=1e-6)
    assert z3.stride() == (7, 1)


@pytest.mark.parametrize("layout", ["row-major", "transposed", "sliced", "column", "row", "expanded"])
def test_mm_saves_torchs_sizes_and_strides_through_the_keys(layout):
    a, b = _arrays((6, 4), np.float32, 2, seed=5)

    def make(lib):
        x = lib.tensor(a, requires_grad=True)
        w = lib.tensor(b.T.copy(), requires_grad=True)
        if layout == "transposed":
            x = lib.tensor(a.T.copy(), requires_grad=True).t()
        elif layout == "sliced":
            x = lib.tensor(np.concatenate([a, a], 1), requires_grad=True)[:, ::2]
        elif layout == "column":
            x, w = x[:, :1], w[:1]
        elif layout == "row":
            x = x[:1]
        elif layout == "expanded":
            x = lib.tensor(a[:1], requires_grad=True).expand(6, 4)
        return x, w

    (x, w), (tx, tw) = make(gt), make(torch)
    for _ in range(2):      # (the second time: every key known)
        node, tnode = (x @ w).grad_fn, (tx @ tw).grad_fn
        for name in ("_saved_self_sym_sizes", "_saved_self_sym_strides", "_saved_mat2_sym_sizes",
                     "_saved_mat2_sym_strides"):
            assert tuple(getattr(node, name)) == tuple(getattr(tnode, name)), name


def test_an_equal_dtype_of_another_object_takes_no_key_from_the_usual_one():
    # (an unpickled array's dtype is equal to float32 but another object: it gets a key of its own,
    # and arrays of the usual float32 still get theirs)
    a, b = _arrays((5, 6), np.float32, 2, seed=11)
    other = pickle.loads(pickle.dumps(a))
    assert other.dtype == a.dtype and other.dtype is not a.dtype
    assert layout_of(other) is not layout_of(a) and layout_of(other).dense
    x, y = gt.tensor(a), gt.tensor(b)
    z = x + y
    assert z._layout_of is z._data and z._layout is layout_of(a)


@pytest.mark.parametrize("make", ["from_numpy", "as_tensor", "unpickled tensor", "torch.load"])
def test_a_tensor_on_an_unpickled_array_takes_the_usual_key_and_shares_its_memory(make):
    # (a batch from a DataLoader's worker, a tensor from pickle: NumPy's usual dtype object under the
    # tensor, so that its ops take the plain case; from_numpy and as_tensor still share the memory)
    a, b = _arrays((5, 6), np.float32, 2, seed=11)
    other = pickle.loads(pickle.dumps(a))
    if make == "from_numpy":
        t = gt.from_numpy(other)
    elif make == "as_tensor":
        t = gt.as_tensor(other)
    elif make == "unpickled tensor":
        t = pickle.loads(pickle.dumps(gt.tensor(a)))
    else:
        buf = io.BytesIO()
        gt.save(gt.tensor(a), buf)
        buf.seek(0)
        t = gt.load(buf)
    assert t._data.dtype is a.dtype and t.dtype is gt.float32
    s = t + t
    assert s._layout is layout_of(a)
    x = gt.tensor(b)
    np.testing.assert_array_equal((t + x).numpy(), a + b)
    np.testing.assert_array_equal((x * t).numpy(), a * b)
    if make in ("from_numpy", "as_tensor"):
        other[0, 0] = 7.0
        assert t[0, 0].item() == 7.0
        t[1, 1] = 3.0
        assert other[1, 1] == 3.0