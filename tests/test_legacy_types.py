"""The legacy tensor types (torch.FloatTensor, ...) against torch: construction, .type(), isinstance."""
import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import glasstorch  # noqa: E402

NAMES = ["DoubleTensor", "FloatTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor",
         "CharTensor", "ByteTensor", "BoolTensor"]
DTYPES = ["float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool"]


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - we compare whatever torch raises
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("name", NAMES)
def test_type_attributes_and_names(name):
    ours, theirs = getattr(glasstorch, name), getattr(torch, name)
    assert repr(ours) == repr(theirs) == f"<class 'torch.{name}'>"
    assert str(ours.dtype) == str(theirs.dtype)
    assert ours.is_cuda is theirs.is_cuda is False and ours.is_sparse is theirs.is_sparse is False
    assert type(ours).__name__ == type(theirs).__name__ == "tensortype"
    assert not issubclass(ours, glasstorch.Tensor) and not issubclass(glasstorch.Tensor, ours)
    assert issubclass(ours, ours)
    cuda_type = getattr(glasstorch.cuda, name)
    assert repr(cuda_type) == repr(getattr(torch.cuda, name)) and cuda_type.is_cuda
    assert pickle.loads(pickle.dumps(ours)) is ours and pickle.loads(pickle.dumps(cuda_type)) is cuda_type


@pytest.mark.parametrize("dtype", DTYPES)
def test_isinstance_exactly_when_torch_says(dtype):
    for lib in (glasstorch, torch):
        x = lib.zeros(2, dtype=getattr(lib, dtype))
        answers = [isinstance(x, getattr(lib, n)) for n in NAMES]
        cuda_answers = [isinstance(x, getattr(lib.cuda, n)) for n in NAMES]
        assert answers == [d == dtype for d in DTYPES]
        assert not any(cuda_answers)
    p = glasstorch.nn.Parameter(glasstorch.zeros(2, dtype=getattr(glasstorch, dtype))) if dtype.startswith(
        ("float", "bfloat")) else None
    if p is not None:
        assert isinstance(p, getattr(glasstorch, NAMES[DTYPES.index(dtype)]))   # a Parameter is one too
    for obj in (3, np.zeros(2, dtype=dtype if dtype != "bfloat16" else "float32"), [1.0]):
        assert not isinstance(obj, glasstorch.FloatTensor)


CONSTRUCTIONS = {
    "sizes": lambda lib, T: T(2, 3),
    "one size": lambda lib, T: T(4),
    "zero sizes": lambda lib, T: T(2, 0),
    "torch.Size": lambda lib, T: T(lib.Size([3, 1])),
    "nothing": lambda lib, T: T(),
    "list": lambda lib, T: T([1, 2, 3]),
    "nested list": lambda lib, T: T([[1.7, 2.2], [3.5, 0.0]]),
    "tuple is data": lambda lib, T: T((2, 3)),
    "empty list": lambda lib, T: T([]),
    "numpy": lambda lib, T: T(np.array([1.5, 2.5])),
    "device": lambda lib, T: T(2, device="cpu"),
    "device object": lambda lib, T: T([1], device=lib.device("cpu")),
}


@pytest.mark.parametrize("case", CONSTRUCTIONS)
@pytest.mark.parametrize("name", ["FloatTensor", "LongTensor", "DoubleTensor", "BoolTensor", "ByteTensor"])
def test_construction_matches_torch(case, name):
    ours = CONSTRUCTIONS[case](glasstorch, getattr(glasstorch, name))
    theirs = CONSTRUCTIONS[case](torch, getattr(torch, name))
    assert type(ours) is glasstorch.Tensor
    assert tuple(ours.shape) == tuple(theirs.shape) and str(ours.dtype) == str(theirs.dtype)
    assert not ours.requires_grad
    if case in ("list", "nested list", "tuple is data", "numpy"):   # sizes give uninitialized memory in torch
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_from_a_tensor_of_the_same_type_shares_its_data():
    for lib in (glasstorch, torch):
        x = lib.arange(3.0)
        y = lib.FloatTensor(x)
        assert y is not x and y.data_ptr() == x.data_ptr()
        y[0] = 7.0
        assert x[0].item() == 7.0
        p = lib.ones(2, requires_grad=True)
        z = lib.FloatTensor(p)
        assert z.requires_grad and type(z.grad_fn).__name__ == "AliasBackward0"
        z.sum().backward()
        assert p.grad.tolist() == [1.0, 1.0]


BAD = {
    "other dtype": lambda lib: lib.FloatTensor(lib.tensor([1, 2])),
    "other dtype double": lambda lib: lib.DoubleTensor(lib.arange(3.0)),
    "list and int": lambda lib: lib.FloatTensor([1, 2], 3),
    "tensor and int": lambda lib: lib.FloatTensor(lib.zeros(1), 3),
    "size then list": lambda lib: lib.FloatTensor(2, [3]),
    "string": lambda lib: lib.FloatTensor("a"),
    "float": lambda lib: lib.FloatTensor(2.5),
    "bool": lambda lib: lib.FloatTensor(True),
    "negative": lambda lib: lib.FloatTensor(-1),
    "negative second": lambda lib: lib.FloatTensor(2, -3),
    "unknown keyword": lambda lib: lib.FloatTensor(foo=1),
    "dtype keyword": lambda lib: lib.FloatTensor(2, dtype=lib.float64),
    "other device": lambda lib: lib.FloatTensor(2, device="meta"),
    "cuda type without a GPU": lambda lib: lib.cuda.FloatTensor(2),
}


@pytest.mark.parametrize("case", BAD)
def test_bad_arguments_raise_torchs_error(case):
    ours, theirs = _error(lambda: BAD[case](glasstorch)), _error(lambda: BAD[case](torch))
    assert theirs is not None and ours is not None and ours[0] == theirs[0]
    # torch adds, under each signature it lists, why it did not match: compare up to that list
    assert ours[1].split("\n")[0] == theirs[1].split("\n")[0]
    if "expected one of" in theirs[1]:
        listed = [line for line in theirs[1].split("\n") if line.startswith(" * ")]
        assert [line for line in ours[1].split("\n") if line.startswith(" * ")] == listed


@pytest.mark.parametrize("target", ["torch.DoubleTensor", "torch.IntTensor", "torch.BoolTensor", "torch.Tensor",
                                    "torch.HalfTensor", "torch.FloatTensor"])
def test_tensor_type_conversion(target):
    for spelling in ("string", "type"):
        results = []
        for lib in (glasstorch, torch):
            x = lib.tensor([1.5, -2.0, 0.0])
            arg = target if spelling == "string" else (lib.Tensor if target == "torch.Tensor" else
                                                       getattr(lib, target.split(".")[1]))
            y = x.type(arg)
            results.append((str(y.dtype), y.type(), y.tolist(), y is x))
        assert results[0] == results[1]


def test_tensor_type_errors_and_no_argument():
    assert glasstorch.zeros(1, dtype=glasstorch.int16).type() == torch.zeros(1, dtype=torch.int16).type()
    for bad in ("torch.float32", "FloatTensor", "torch.FloatTensor ", "torch.Foo"):
        ours = _error(lambda: glasstorch.zeros(2).type(bad))
        assert ours == _error(lambda: torch.zeros(2).type(bad)) == ("ValueError", f"invalid type: '{bad}'")
    # a CUDA type without a GPU: a RuntimeError in both (torch's text names its CUDA library)
    assert _error(lambda: glasstorch.zeros(2).type(glasstorch.cuda.FloatTensor))[0] == "RuntimeError"
    assert glasstorch.zeros(2).type(glasstorch.float64, non_blocking=True).dtype == glasstorch.float64
