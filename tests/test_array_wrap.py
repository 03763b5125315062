"""NumPy on tensors, against torch: ufuncs return what torch's ``__array_wrap__`` makes of them
(a Tensor sharing the result, bool as uint8), ``np.asarray``/``np.array`` give arrays, and a tensor
that requires grad is refused."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import glasstorch  # noqa: E402

_CALLS = {
    "exp": lambda x, xi: np.exp(x), "add_array": lambda x, xi: np.add(x, np.ones(3)),
    "sqrt_int": lambda x, xi: np.sqrt(xi), "asarray": lambda x, xi: np.asarray(x),
    "array_dtype": lambda x, xi: np.array(x, dtype=np.float64), "t_plus_array": lambda x, xi: x + np.ones(3),
    "equal": lambda x, xi: np.equal(x, x), "isnan": lambda x, xi: np.isnan(x),
    "maximum": lambda x, xi: np.maximum(x, 2.0), "clip": lambda x, xi: np.clip(x, 0, 1.5),
    "concatenate": lambda x, xi: np.concatenate([x, x]), "where": lambda x, xi: np.where(x > 1, x, 0),
    "argmax": lambda x, xi: np.argmax(x), "matmul": lambda x, xi: np.matmul(x, x),
    "exp_0d": lambda x, xi: np.exp(x[0]), "scalar_times": lambda x, xi: np.float64(2.0) * x,
    "array_divided_by": lambda x, xi: np.ones(3) / x, "sin_out": lambda x, xi: np.sin(x, out=np.empty(3)),
    "dot": lambda x, xi: np.dot(x, x),
}


def _outcome(lib, call):
    x, xi = lib.tensor([1.0, 2.0, 3.0]), lib.tensor([1, 4, 9])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = call(x, xi)
        except Exception as e:  # noqa: BLE001
            return "raise", type(e).__name__, str(e)
    kind = "Tensor" if isinstance(r, lib.Tensor) else type(r).__name__
    dtype = str(r.dtype).replace("torch.", "")
    return kind, dtype, tuple(r.shape), np.asarray(r).tolist()


@pytest.mark.parametrize("name", sorted(_CALLS))
def test_numpy_on_tensors_as_torch(name):
    assert _outcome(glasstorch, _CALLS[name]) == _outcome(torch, _CALLS[name])


def test_ufunc_result_is_a_tensor_on_the_result_memory():
    out = np.exp(glasstorch.tensor([0.0, 1.0]))
    assert type(out) is glasstorch.Tensor and out.dtype == glasstorch.float32
    out.numpy()[0] = 5.0
    assert out[0].item() == 5.0


def test_requires_grad_is_refused():
    for lib in (torch, glasstorch):
        x = lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
            np.exp(x)


def test_array_on_the_left_differs_from_torch():
    """Deliberate difference (README): ndarray + tensor and ndarray * tensor are Tensors; torch 2.13
    raises TypeError for them (while it accepts ndarray / tensor)."""
    with pytest.raises(TypeError):
        np.ones(3) * torch.ones(3)
    r = np.ones(3) * glasstorch.ones(3)
    assert isinstance(r, glasstorch.Tensor) and r.dtype == glasstorch.float64
