"""torch.stft / torch.istft and the window functions against torch: values, gradients (to the signal and
to the window), float32/float64, the recorded graph, every argument, and torch's errors and warnings."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import glasstorch as gt  # noqa: E402

WINDOWS = ["hann_window", "hamming_window", "bartlett_window", "blackman_window", "kaiser_window"]


def _pair(shape, dtype, seed=0, complex_=False):
    a = np.random.default_rng(seed).standard_normal(shape)
    if complex_:
        a = a + 1j * np.random.default_rng(seed + 1).standard_normal(shape)
    a = a.astype(dtype)
    return torch.tensor(a, requires_grad=True), gt.tensor(a, requires_grad=True)


def _close(g, t, dtype):
    tol = dict(rtol=1e-4, atol=1e-5) if dtype in ("float32", "complex64") else dict(rtol=1e-10, atol=1e-12)
    assert str(g.dtype) == str(t.dtype) and tuple(g.shape) == tuple(t.shape)
    np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), **tol)


def _chain(fn):
    names, f = [], fn
    while f is not None:
        names.append(type(f).__name__)
        f = f.next_functions[0][0] if f.next_functions else None
    return names


@pytest.mark.parametrize("name", WINDOWS)
@pytest.mark.parametrize("n", [0, 1, 2, 7, 16])
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_windows(name, n, periodic, dtype):
    t = getattr(torch, name)(n, periodic, dtype=getattr(torch, dtype))
    g = getattr(gt, name)(n, periodic, dtype=getattr(gt, dtype))
    _close(g, t, dtype)


def test_window_parameters_and_errors():
    _close(gt.hamming_window(9, False, 0.3, 0.2), torch.hamming_window(9, False, 0.3, 0.2), "float32")
    _close(gt.kaiser_window(9, True, 3.0), torch.kaiser_window(9, True, 3.0), "float32")
    assert gt.hann_window(4, requires_grad=True).requires_grad and gt.hann_window(4).dtype is gt.float32
    for name in WINDOWS:
        with pytest.raises(RuntimeError, match=f"{name} requires non-negative window_length, got window_length=-1"):
            getattr(gt, name)(-1)
        with pytest.raises(RuntimeError, match=f"{name} expects floating point dtypes, got: .*long int"):
            getattr(gt, name)(4, dtype=gt.long)


STFT_CASES = [
    dict(n_fft=16, hop_length=4),
    dict(n_fft=16),
    dict(n_fft=16, center=False),
    dict(n_fft=15, hop_length=3, win_length=11),
    dict(n_fft=16, win_length=10, center=False, align_to_window=True),
    dict(n_fft=16, normalized=True, onesided=False),
    dict(n_fft=16, pad_mode="constant"),
    dict(n_fft=16, pad_mode="replicate"),
    dict(n_fft=16, pad_mode="circular"),
]


@pytest.mark.parametrize("kw", STFT_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(2, 64), (50,)])
@pytest.mark.parametrize("windowed", [True, False])
def test_stft_values_and_grads(kw, dtype, shape, windowed):
    tx, gx = _pair(shape, dtype)
    win_length = kw.get("win_length", kw["n_fft"])
    tw, gw = _pair((win_length,), dtype, seed=3) if windowed else (None, None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = torch.stft(tx, window=tw, return_complex=True, **kw)
        g = gt.stft(gx, window=gw, return_complex=True, **kw)
    _close(g, t, "float32" if dtype == "float32" else "float64")
    weights = np.random.default_rng(5).standard_normal(tuple(t.shape))
    (t.abs() * torch.tensor(weights)).sum().backward()
    (g.abs() * gt.tensor(weights)).sum().backward()
    _close(gx.grad, tx.grad, dtype)
    if windowed:
        _close(gw.grad, tw.grad, dtype)


def test_stft_graph_and_method_forms():
    tx, gx = _pair((2, 64), "float32")
    t = torch.stft(tx, 16, 4, window=torch.hann_window(16), return_complex=True)
    g = gx.stft(16, 4, window=gt.hann_window(16), return_complex=True)
    _close(g, t, "float32")
    assert _chain(g.grad_fn) == _chain(t.grad_fn)
    assert gt.functional.stft is gt.stft and gt.functional.istft is gt.istft


def test_stft_complex_input_and_real_output():
    tx, gx = _pair((2, 40), "complex128", complex_=True)
    tw, gw = _pair((8,), "float64", seed=2)
    t = torch.stft(tx, 8, window=tw)                 # complex input: return_complex defaults to True
    g = gt.stft(gx, 8, window=gw)
    _close(g, t, "float64")
    (t.real.sum() + t.imag.pow(2).sum()).backward()
    (g.real.sum() + g.imag.pow(2).sum()).backward()
    _close(gx.grad, tx.grad, "complex128")
    tx, gx = _pair((40,), "float64")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = torch.stft(tx, 8, return_complex=False)
        g = gt.stft(gx, 8, return_complex=False)
    _close(g, t, "float64")
    assert g.shape[-1] == 2


def _error_of(lib, fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(lib)
    except Exception as e:  # noqa: BLE001
        return type(e), str(e)
    return None, None


STFT_ERRORS = [
    lambda m: m.stft(m.ones(2, 100), 16),
    lambda m: m.stft(m.ones(2, 100), 200, return_complex=True, center=False),
    lambda m: m.stft(m.ones(2, 100), 0, return_complex=True),
    lambda m: m.stft(m.ones(2, 100), 16, hop_length=0, return_complex=True),
    lambda m: m.stft(m.ones(2, 100), 16, win_length=20, return_complex=True),
    lambda m: m.stft(m.ones(2, 100), 16, window=m.ones(10), return_complex=True),
    lambda m: m.stft(m.ones(2, 100), 16, window=m.ones(16, 1), return_complex=True),
    lambda m: m.stft(m.ones(2, 3, 100), 16, return_complex=True),
    lambda m: m.stft(m.ones(2, 100, dtype=m.long), 16, return_complex=True),
    lambda m: m.stft(m.ones(2, 100), 16, return_complex=True, align_to_window=True),
    lambda m: m.stft(m.ones(2, 100), 16, window=m.ones(16, dtype=m.complex64), return_complex=True,
                     onesided=True),
]

ISTFT_ERRORS = [
    lambda m, y: m.istft(m.view_as_real(y), 16),
    lambda m, y: m.istft(y, 16, window=m.hann_window(16), center=False),
    lambda m, y: m.istft(y, 20),
    lambda m, y: m.istft(y, 16, onesided=False),
    lambda m, y: m.istft(y, 16, return_complex=True),
    lambda m, y: m.istft(y, 16, hop_length=20),
    lambda m, y: m.istft(y, 16, hop_length=0),
    lambda m, y: m.istft(y, 16, win_length=20),
    lambda m, y: m.istft(y, 16, window=m.ones(10)),
    lambda m, y: m.istft(y[..., :0], 16),
    lambda m, y: m.istft(y[0, 0], 16),
    lambda m, y: m.istft(y.unsqueeze(0), 16),
    lambda m, y: m.istft(y, 16, window=m.zeros(16)),
    lambda m, y: m.istft(y, 16, window=m.ones(16, dtype=m.complex64)),
]


@pytest.mark.parametrize("case", range(len(STFT_ERRORS)))
def test_stft_errors(case):
    want = _error_of(torch, STFT_ERRORS[case])
    got = _error_of(gt, STFT_ERRORS[case])
    assert want[0] is not None and got[0] is want[0]
    assert got[1] == want[1]


@pytest.mark.parametrize("case", range(len(ISTFT_ERRORS)))
def test_istft_errors(case):
    want = _error_of(torch, lambda m: ISTFT_ERRORS[case](m, m.stft(m.ones(2, 100), 16, window=m.hann_window(16),
                                                                       return_complex=True)))
    got = _error_of(gt, lambda m: ISTFT_ERRORS[case](m, m.stft(m.ones(2, 100), 16, window=m.hann_window(16),
                                                                    return_complex=True)))
    assert want[0] is not None and got[0] is want[0]
    # torch prints its NOLA check's boolean tensor after the words; glasstorch keeps the words
    assert got[1] == want[1].split("\n")[0]


ISTFT_CASES = [
    dict(n_fft=16, hop_length=4),
    dict(n_fft=16, hop_length=4, length=90),
    dict(n_fft=16, hop_length=4, length=120),
    dict(n_fft=16, hop_length=4, normalized=True),
    dict(n_fft=15, hop_length=3, win_length=11),
    dict(n_fft=16, hop_length=4, onesided=False),
    dict(n_fft=16, hop_length=4, onesided=False, return_complex=True),
    dict(n_fft=16, hop_length=4, center=False, window="hann_nonzero"),
]


@pytest.mark.filterwarnings("error::numpy.exceptions.ComplexWarning")   # (a real window's complex gradient)
@pytest.mark.parametrize("kw", ISTFT_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("batched", [True, False])
def test_istft_values_and_grads(kw, dtype, batched):
    kw = dict(kw)
    window_kind = kw.pop("window", "hann")
    onesided = kw.get("onesided", True)
    win_length = kw.get("win_length", kw["n_fft"])
    tw = torch.hann_window(win_length, dtype=getattr(torch, dtype))
    if window_kind == "hann_nonzero":        # without center, the frames' ends need a window that is not 0 there
        tw = tw + 0.1
    tw.requires_grad_()
    gw = gt.tensor(tw.detach().numpy(), requires_grad=True)
    x = np.random.default_rng(1).standard_normal((2, 100) if batched else (100,)).astype(dtype)
    spec = torch.stft(torch.tensor(x), kw["n_fft"], kw["hop_length"], win_length, tw.detach(),
                      center=kw.get("center", True), onesided=onesided, return_complex=True)
    ty = spec.clone().requires_grad_()
    gy = gt.tensor(spec.numpy(), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = torch.istft(ty, window=tw, **kw)
        g = gt.istft(gy, window=gw, **kw)
    _close(g, t, dtype)
    if not kw.get("return_complex") and not kw.get("normalized") and "length" not in kw and kw.get("center", True):
        np.testing.assert_allclose(g.detach().numpy(), x, atol=1e-4)     # it inverts stft
    weights = np.random.default_rng(7).standard_normal(tuple(t.shape))
    (t.abs() * torch.tensor(weights)).sum().backward()
    (g.abs() * gt.tensor(weights)).sum().backward()
    complex_dtype = "complex64" if dtype == "float32" else "complex128"
    _close(gy.grad, ty.grad, complex_dtype)
    _close(gw.grad, tw.grad, dtype)


def test_istft_graph_and_warnings():
    spec = torch.stft(torch.randn(2, 100), 16, 4, window=torch.hann_window(16), return_complex=True)
    ty = spec.clone().requires_grad_()
    gy = gt.tensor(spec.numpy(), requires_grad=True)
    t = torch.istft(ty, 16, 4, window=torch.hann_window(16))
    g = gy.istft(16, 4, window=gt.hann_window(16))
    assert _chain(g.grad_fn) == _chain(t.grad_fn)
    from glasstorch.ops import spectral
    spectral._warned.clear()
    with pytest.warns(UserWarning, match="padded with zeros in the tail"):
        gt.istft(gy, 16, 4, window=gt.hann_window(16), length=120)
    with pytest.warns(UserWarning, match="A window was not provided"):
        gt.stft(gt.ones(100), 16, return_complex=True)
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        gt.stft(gt.ones(100), 16, window=gt.ones(16), return_complex=False)
