"""torch.finfo / torch.iinfo against torch: every attribute, the repr, and the errors."""
import pytest
import torch

import glasstorch as gt

FLOATS = ["float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]


@pytest.mark.parametrize("name", FLOATS)
def test_finfo_matches_torch(name):
    ours, theirs = gt.finfo(getattr(gt, name)), torch.finfo(getattr(torch, name))
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert repr(ours) == repr(theirs)


def test_finfo_without_argument_is_the_default_dtypes():
    assert repr(gt.finfo()) == repr(torch.finfo())
    gt.set_default_dtype(gt.float64)
    try:
        assert gt.finfo().dtype == "float64"
    finally:
        gt.set_default_dtype(gt.float32)


@pytest.mark.parametrize("name", INTS)
def test_iinfo_matches_torch(name):
    ours, theirs = gt.iinfo(getattr(gt, name)), torch.iinfo(getattr(torch, name))
    for attr in ("bits", "max", "min", "dtype"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("call", [lambda m: m.finfo(m.int32), lambda m: m.finfo(m.bool), lambda m: m.iinfo(m.float32),
                                  lambda m: m.iinfo(m.bool), lambda m: m.finfo("float32"), lambda m: m.iinfo(3)])
def test_bad_types_raise_torchs_errors(call):
    with pytest.raises(TypeError) as theirs:
        call(torch)
    with pytest.raises(TypeError) as ours:
        call(gt)
    assert str(ours.value) == str(theirs.value)


def test_limits_are_usable_as_numbers():
    x = gt.tensor([1.0, 2.0])
    assert (1 + gt.finfo(x.dtype).eps > gt.ones(2)).all() and (1 + gt.finfo(x.dtype).eps / 2 == gt.ones(2)).all()
    assert gt.finfo(gt.float32) == gt.finfo(gt.float32) and gt.finfo(gt.float32) != gt.finfo(gt.float64)
    assert gt.full((2,), gt.iinfo(gt.int64).max).max().item() == 2 ** 63 - 1
