"""Tensor basics against real torch: dtypes and promotion, NumPy interop, conversions, introspection,
views sharing memory, and the repr."""
import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import glasstorch as gt  # noqa: E402

BOTH = pytest.mark.parametrize("T", [torch, gt], ids=["torch", "glasstorch"])
DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool", "complex64"]


def dt(T, name):
    return getattr(T, name)


# -- dtypes and promotion ------------------------------------------------------------------------------

@BOTH
def test_default_dtype_and_set_default_dtype(T):
    assert T.get_default_dtype() is T.float32
    assert T.tensor([1.0]).dtype is T.float32 and T.tensor([1]).dtype is T.int64 and T.tensor([True]).dtype is T.bool
    assert T.ones(2).dtype is T.float32 and T.arange(3).dtype is T.int64 and T.arange(3.0).dtype is T.float32
    T.set_default_dtype(T.float64)
    try:
        assert T.tensor([1.0]).dtype is T.float64 and T.zeros(1).dtype is T.float64
        assert (T.tensor([1, 2]) * 0.5).dtype is T.float64
    finally:
        T.set_default_dtype(T.float32)
    with pytest.raises(TypeError, match="only floating-point types are supported as the default type"):
        T.set_default_dtype(T.int64)


@pytest.mark.parametrize("a,b", list(itertools.combinations_with_replacement(DTYPES, 2)))
def test_promotion_matches_torch_result_type(a, b):
    for dims in ((2,), ()), ((), (2,)), ((2,), (2,)), ((), ()):
        ta, tb = torch.zeros(dims[0], dtype=dt(torch, a)), torch.zeros(dims[1], dtype=dt(torch, b))
        ga, gb = gt.zeros(dims[0], dtype=dt(gt, a)), gt.zeros(dims[1], dtype=dt(gt, b))
        expected = torch.result_type(ta, tb)
        if expected is torch.complex32:
            continue  # NumPy has no complex32 (ComplexHalf), so neither does glasstorch
        assert repr(gt.result_type(ga, gb)) == repr(expected), dims
        assert repr(gt.promote_types(dt(gt, a), dt(gt, b))) == repr(torch.promote_types(dt(torch, a), dt(torch, b)))


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("scalar", [2, 2.5, True])
def test_promotion_with_python_numbers(name, scalar):
    t = torch.ones(2, dtype=dt(torch, name))
    g = gt.ones(2, dtype=dt(gt, name))
    assert repr(gt.result_type(g, scalar)) == repr(torch.result_type(t, scalar))
    if name != "bool" or isinstance(scalar, bool):
        assert repr((g * scalar).dtype) == repr((t * scalar).dtype)


@BOTH
def test_dtype_properties(T):
    assert T.float32.is_floating_point and not T.int32.is_floating_point and T.complex64.is_complex
    assert T.float32.itemsize == 4 and T.int64.itemsize == 8
    assert repr(T.float32) == "torch.float32" and str(T.int64) == "torch.int64"
    assert T.float is T.float32 and T.double is T.float64 and T.long is T.int64 and T.half is T.float16


# -- NumPy interop and Python values -------------------------------------------------------------------

@BOTH
def test_from_numpy_and_numpy_share_memory(T):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = T.from_numpy(a)
    assert t.dtype is T.float32 and tuple(t.shape) == (2, 3)
    a[0, 0] = 100
    assert t[0, 0].item() == 100
    t[1, 2] = -1
    assert a[1, 2] == -1
    n = t.numpy()
    n[0, 1] = 7
    assert t[0, 1].item() == 7 and np.shares_memory(n, a)
    assert T.tensor(a).data_ptr() != t.data_ptr()  # torch.tensor copies


@BOTH
def test_numpy_of_a_tensor_requiring_grad_raises(T):
    x = T.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad. Use tensor.detach\(\).numpy\(\) instead."):
        x.numpy()
    assert np.array_equal(x.detach().numpy(), [1, 1])


@BOTH
def test_item_and_tolist(T):
    assert T.tensor(2.5).item() == 2.5 and isinstance(T.tensor(3).item(), int)
    assert isinstance(T.tensor([True]).item(), bool)
    assert T.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert T.tensor([1.5, 2.0]).tolist() == [1.5, 2.0] and T.tensor(1.0).tolist() == 1.0
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"):
        T.ones(2).item()
    assert float(T.tensor([3.0])) == 3.0 and int(T.tensor(4)) == 4


# -- conversions -------------------------------------------------------------------------------------

@BOTH
def test_conversions(T):
    x = T.tensor([1.7, -2.2])
    for method, name in (("float", "float32"), ("double", "float64"), ("half", "float16"), ("long", "int64"),
                         ("int", "int32"), ("bool", "bool"), ("short", "int16"), ("byte", "uint8")):
        y = getattr(x, method)()
        assert y.dtype is dt(T, name)
    assert x.long().tolist() == [1, -2]  # truncation toward zero
    assert x.float() is x  # no copy when nothing changes
    assert x.to(T.float64).dtype is T.float64 and x.to(T.float32) is x
    assert x.to("cpu") is x and x.cpu() is x and x.to(device="cpu", dtype=T.float64).dtype is T.float64
    assert x.type() == "torch.FloatTensor" and x.double().type() == "torch.DoubleTensor"
    y = T.ones(2, requires_grad=True)
    z = y.double()
    assert z.grad_fn.name() == "ToCopyBackward0"
    z.sum().backward()
    assert y.grad.dtype is T.float32


def test_to_is_aten_to_copy_as_torchs():
    """x.to(dtype) is aten._to_copy for a dispatch mode, with its ToCopyBackward0: the gradient comes
    back in the input's dtype (the real part from a complex copy); an integral copy needs no gradient."""
    from aten_log import recorder
    results = []
    for lib in (gt, torch):
        x = lib.tensor([1.5, -2.0], requires_grad=True)
        with recorder(lib, keep=lambda name: "_to_copy" in name) as log:
            y = x.to(lib.float64)
            c = x.to(lib.complex64)
            i = x.long()
        ((y * y).sum() + (c * c).real.sum()).backward()
        results.append((log.names, type(y.grad_fn).__name__, x.grad.dtype == lib.float32, x.grad.tolist(),
                        i.requires_grad, x.float() is x))
    assert results[0] == results[1]
    assert results[0][0] == ["aten._to_copy.default"] * 3


# -- introspection -------------------------------------------------------------------------------------

@BOTH
def test_introspection(T):
    x = T.zeros(2, 3, 4)
    assert x.shape == (2, 3, 4) and x.size() == (2, 3, 4) and x.size(1) == 3 and x.size(-1) == 4
    assert repr(x.shape) == "torch.Size([2, 3, 4])" and isinstance(x.shape, T.Size)
    assert x.dim() == x.ndim == 3 and x.numel() == 24 and x.dtype is T.float32
    assert x.device == T.device("cpu") and str(x.device) == "cpu" and x.device.type == "cpu"
    assert x.stride() == (12, 4, 1) and x.stride(0) == 12 and x.is_contiguous()
    t = x.transpose(0, 2)
    assert t.shape == (4, 3, 2) and t.stride() == (1, 4, 12) and not t.is_contiguous()
    assert t.contiguous().is_contiguous() and t.data_ptr() == x.data_ptr()
    m = T.arange(6.0).reshape(2, 3)
    assert m.T.shape == (3, 2) and m.mT.shape == (3, 2) and T.zeros(5, 2, 3).mT.shape == (5, 3, 2)
    assert m[1].data_ptr() == m.data_ptr() + 3 * 4 and m.element_size() == 4
    assert len(m) == 2 and T.zeros(()).dim() == 0 and T.zeros(()).shape == ()
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.size(3)


# An empty tensor's strides: torch's are a contiguous tensor's (a dim of size 0 counts as 1); NumPy's
# are 0. New tensors, ops' results, reshapes and slices of non-empty tensors report torch's.
EMPTY_STRIDES = {
    "empty(0, 3)": lambda T: T.empty(0, 3),
    "empty(3, 0)": lambda T: T.empty(3, 0),
    "zeros(2, 0, 4) float64": lambda T: T.zeros(2, 0, 4, dtype=T.float64),
    "ones(0) int64": lambda T: T.ones(0, dtype=T.int64),
    "arange(0)": lambda T: T.arange(0),
    "tensor([])": lambda T: T.tensor([]),
    "tensor([[]])": lambda T: T.tensor([[]]),
    "randn(0, 5)": lambda T: T.randn(0, 5),
    "ones(0, 3) + 1": lambda T: T.ones(0, 3) + 1,
    "ones(0, 3).sum(1)": lambda T: T.ones(0, 3).sum(1),
    "ones(0, 3) @ ones(3, 4)": lambda T: T.ones(0, 3) @ T.ones(3, 4),
    "cat of empties": lambda T: T.cat([T.ones(0, 3), T.ones(0, 3)]),
    "ones(0, 3).flip(0)": lambda T: T.ones(0, 3).flip(0),
    "ones(0, 3).view(3, 0)": lambda T: T.ones(0, 3).view(3, 0),
    "ones(0, 3).reshape(-1)": lambda T: T.ones(0, 3).reshape(-1),
    "ones(0, 3).unsqueeze(1)": lambda T: T.ones(0, 3).unsqueeze(1),
    "ones(0, 3).squeeze()": lambda T: T.ones(0, 3).squeeze(),
    "ones(0, 3)[:, [0, 2]]": lambda T: T.ones(0, 3)[:, [0, 2]],
    "ones(3, 3)[mask of none]": lambda T: T.ones(3, 3)[T.ones(3, 3) > 5],
    "ones(5, 3)[2:2]": lambda T: T.ones(5, 3)[2:2],
    "ones(5, 3)[:, 1:1]": lambda T: T.ones(5, 3)[:, 1:1],
    "ones(5, 3)[::2][5:]": lambda T: T.ones(5, 3)[::2][5:],
    "ones(5, 3).t()[:, 2:2]": lambda T: T.ones(5, 3).t()[:, 2:2],
    "ones(1, 3).expand(0, 3)": lambda T: T.ones(1, 3).expand(0, 3),
    "empty_strided((0, 3), (1, 1))": lambda T: T.empty_strided((0, 3), (1, 1)),
    "ones(2, 3)[:, 0:0].t()": lambda T: T.ones(2, 3)[:, 0:0].t(),
}


@pytest.mark.parametrize("make", EMPTY_STRIDES)
def test_empty_tensors_report_torchs_strides(make):
    ours, theirs = EMPTY_STRIDES[make](gt), EMPTY_STRIDES[make](torch)
    assert ours.shape == theirs.shape and ours.numel() == 0
    assert ours.stride() == theirs.stride(), (ours.stride(), theirs.stride())
    assert [ours.stride(d) for d in range(-ours.dim(), ours.dim())] == \
        [theirs.stride(d) for d in range(-theirs.dim(), theirs.dim())]
    assert ours.is_contiguous() == theirs.is_contiguous()


def test_a_view_of_an_empty_tensor_reports_contiguous_strides():
    """(Pins a difference, README "Where glasstorch differs": NumPy keeps no strides for an empty array,
    so a view of a new empty tensor reports the contiguous strides of its own shape, where torch's
    follow the view; both are contiguous. An empty slice's storage_offset is 0.)"""
    x = gt.ones(0, 3)
    assert x.t().stride() == (1, 1) and torch.ones(0, 3).t().stride() == (1, 3)
    assert x.t().is_contiguous() and torch.ones(0, 3).t().is_contiguous()
    assert gt.ones(2, 0, 4).permute(2, 0, 1).stride() == (2, 1, 1)
    assert gt.ones(5, 3)[2:2].storage_offset() == 0 and torch.ones(5, 3)[2:2].storage_offset() == 6


@BOTH
def test_views_share_memory_with_their_base(T):
    base = T.zeros(3, 4)
    for view in (base[1], base[:, 2], base.view(12), base.t(), base.reshape(4, 3), base.unsqueeze(0), base[1:, ::2]):
        assert view.data_ptr() >= base.data_ptr()
    base[1].fill_(1.0) if hasattr(base, "fill_") else base[1].add_(1.0)
    base.view(12)[0] = 5
    base.t()[3, 2] = 7
    base[:, 1].mul_(0)
    assert base.tolist() == [[5, 0, 0, 0], [1, 0, 1, 1], [0, 0, 0, 7]]
    c = base.clone()
    c[0, 0] = -1
    assert base[0, 0].item() == 5


# -- repr -------------------------------------------------------------------------------------------------

REPRS = [
    lambda T: T.tensor([1.0, 2.0, 3.0]),
    lambda T: T.tensor([1.0, 2.0], requires_grad=True),
    lambda T: (lambda x: x ** 2 + 3 * x)(T.tensor([1.0, 2.0], requires_grad=True)),
    lambda T: T.tensor([1.0, 2.0], requires_grad=True).sum(),
    lambda T: T.tensor([[1, 2], [3, 4]]),
    lambda T: T.tensor([1.5, 2.25], dtype=T.float64),
    lambda T: T.tensor(3.0),
    lambda T: T.zeros(2, 0),
    lambda T: T.tensor([True, False]),
    lambda T: T.tensor([1e-8, 1.0]),
    lambda T: T.tensor([100000.0, 1.0]),
    lambda T: T.arange(12.0).reshape(3, 4) / 3,
    lambda T: T.tensor([1, 2], dtype=T.int32),
]


@pytest.mark.parametrize("i", range(len(REPRS)))
def test_repr_matches_torch(i):
    assert repr(REPRS[i](gt)) == repr(REPRS[i](torch))
    assert str(REPRS[i](gt)) == str(REPRS[i](torch))


def test_requires_grad_assignment_on_a_non_leaf_is_refused_as_torch_does():
    import torch
    for T in (gt, torch):
        x = T.randn(3, requires_grad=True) * 1
        with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf variables"):
            x.requires_grad = True
        assert x.requires_grad_(True) is x   # the method form is a no-op on a non-leaf


def test_device_and_layout_flags_as_torch_has_them():
    """Every ``is_*`` attribute flag torch's tensors have (pytorch/examples' dcgan tests
    ``input.is_cuda or input.is_xpu``), with torch's values for a CPU tensor."""
    ours, theirs = gt.ones(2), torch.ones(2)
    flags = [n for n in dir(theirs) if n.startswith("is_") and not callable(getattr(theirs, n))]
    assert "is_xpu" in flags and "is_mps" in flags
    assert {n: getattr(ours, n) for n in flags} == {n: getattr(theirs, n) for n in flags}


@pytest.mark.parametrize("name", ["int64", "int32", "int8", "uint8", "bool", "float16", "bfloat16", "float32",
                                  "float64"])
def test_random_without_bounds_spans_what_torch_spans(name):
    """random_() draws [0, max] for integer types and [0, 2**digits] for floating ones, as torch does
    (DataLoader's seeds come from an int64 random_: 2**24 was too few)."""
    ours = gt.empty(4000, dtype=getattr(gt, name)).random_()
    theirs = torch.empty(4000, dtype=getattr(torch, name)).random_()
    top = float(theirs.max().item())
    assert ours.dtype == getattr(gt, name) and float(ours.min().item()) >= 0
    assert 0.5 * top <= float(ours.max().item()) <= {"bool": 1, "int64": 2 ** 63 - 1}.get(name, top * 1.01)
    assert gt.empty(100, dtype=getattr(gt, name)).random_(2).max().item() <= 1


def test_random_with_bounds():
    x = gt.empty(2000, dtype=gt.int64).random_(3, 7)
    assert x.min().item() == 3 and x.max().item() == 6


def test_numpy_of_a_tensor_requiring_grad_is_refused_only_while_grad_mode_is_on():
    """torch checks GradMode::is_enabled() && requires_grad: under no_grad (and inference_mode) numpy() and
    np.asarray() read the values (d2l's gp-inference plots gpytorch's predictive mean that way)."""
    import numpy as np
    import glasstorch as gt
    x = gt.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        x.numpy()
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        np.asarray(x)
    for mode in (gt.no_grad, gt.inference_mode):
        with mode():
            assert x.numpy().tolist() == [2.0, 2.0] and np.asarray(x).tolist() == [2.0, 2.0]
