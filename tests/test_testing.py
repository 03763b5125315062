"""torch.testing.assert_close against torch: the same pairs pass or fail, with the same error type
and message (torch's words, numbers and indices)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import glasstorch  # noqa: E402


def _cases(lib):
    t = lib.tensor
    nan, inf = float("nan"), float("inf")
    return {
        "close": lambda: (t([1.0, 2.0, 3.0]), t([1.0, 2.0, 3.0]) + 1e-7),
        "far": lambda: (t([1.0, 2.0, 3.0]), t([1.0, 2.0, 3.1])),
        "far_2d": lambda: (lib.ones(2, 2), t([[1.0, 1.0], [1.0, 2.0]])),
        "several": lambda: (lib.zeros(5), t([0.0, 1.0, 0.0, 3.0, 0.0])),
        "float64": lambda: (t([1.0, 2.0], dtype=lib.float64), t([1.0, 2.000001], dtype=lib.float64)),
        "half": lambda: (t([1.0]).half(), t([1.01]).half()),
        "dtype": lambda: (t([1.0]), t([1.0], dtype=lib.float64)),
        "shape": lambda: (t([1.0, 2.0, 3.0]), t([1.0, 2.0])),
        "ints": lambda: (t([1, 2]), t([1, 3])),
        "bools": lambda: (t([True]), t([False])),
        "nan": lambda: (t([nan]), t([nan])),
        "inf": lambda: (t([inf, -inf]), t([inf, -inf])),
        "inf_sign": lambda: (t([inf]), t([-inf])),
        "zero_dim": lambda: (t(1.0), t(2.0)),
        "one_element": lambda: (t([1.0]), t([2.0])),
        "complex": lambda: (t([1 + 1j]), t([1 + 2j])),
        "float_scalars": lambda: (1.0, 1.1),
        "int_scalars": lambda: (1, 2),
        "int_float": lambda: (1, 1.0),
        "bool_scalars": lambda: (True, False),
        "none": lambda: (None, None),
        "none_one": lambda: (None, 1),
        "list": lambda: ([t([1.0]), t([2.0])], [t([1.0]), t([3.0])]),
        "tuple_list": lambda: ((1, 2), [1, 2]),
        "lengths": lambda: ([t([1.0])], [t([1.0]), t([1.0])]),
        "dict": lambda: ({"x": t([1.0])}, {"x": t([2.0])}),
        "nested": lambda: ({"a": [lib.ones(1), 2.0]}, {"a": [lib.ones(1), 2.5]}),
        "keys": lambda: ({"a": 1}, {"b": 1}),
        "arrays": lambda: (np.ones(2), np.zeros(2)),
        "requires_grad": lambda: (lib.ones(2, requires_grad=True), lib.ones(2)),
        "large_ints": lambda: (t([10, 20, 30]), t([10, 25, 31])),
    }


_OPTIONS = {
    "default": {}, "tolerances": {"rtol": 0.0, "atol": 1.0}, "equal_nan": {"equal_nan": True},
    "no_dtype_check": {"check_dtype": False}, "message": {"msg": "custom"},
}


def _outcome(lib, name, options):
    actual, expected = _cases(lib)[name]()
    try:
        lib.testing.assert_close(actual, expected, **options)
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return "ok", None


@pytest.mark.parametrize("options", sorted(_OPTIONS))
@pytest.mark.parametrize("name", sorted(_cases(glasstorch)))
def test_assert_close_as_torch(name, options):
    import torch.testing  # noqa: F401
    assert _outcome(glasstorch, name, _OPTIONS[options]) == _outcome(torch, name, _OPTIONS[options])


def test_argument_errors_and_callable_message():
    for lib in (torch, glasstorch):
        with pytest.raises(ValueError, match="Both 'rtol' and 'atol' must be either specified or omitted, but got "
                                             "no atol"):
            lib.testing.assert_close(lib.ones(1), lib.ones(1), rtol=1e-3)
        with pytest.raises(TypeError, match="No comparison pair was able to handle inputs"):
            lib.testing.assert_close(lib.ones(1), "x")
        with pytest.raises(AssertionError, match="^XTensor-lik$"):
            lib.testing.assert_close(lib.ones(1), lib.zeros(1), msg=lambda m: "X" + m[:10])
        with pytest.raises(AssertionError, match=r"attribute 'stride\(\)' do not match: \(1, 2\) != \(2, 1\)"):
            lib.testing.assert_close(lib.ones(2, 2).t(), lib.ones(2, 2), check_stride=True)
