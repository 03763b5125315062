"""torch.fft and complex tensors beyond the op registry (tests/opinfo.py holds the transforms): the
frequency helpers, the views' memory sharing, the docstring's example, a spectral loss trained as in torch."""
import doctest
import importlib

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import glasstorch as gt  # noqa: E402


@pytest.mark.parametrize("n", [1, 4, 7])
@pytest.mark.parametrize("d", [1.0, 0.25])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fftfreq_rfftfreq(n, d, dtype):
    for name in ("fftfreq", "rfftfreq"):
        t = getattr(torch.fft, name)(n, d, dtype=getattr(torch, dtype))
        g = getattr(gt.fft, name)(n, d, dtype=getattr(gt, dtype))
        assert str(g.dtype) == str(t.dtype) and tuple(g.shape) == tuple(t.shape)
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-6)
    assert gt.fft.fftfreq(4).dtype is gt.float32
    assert gt.fft.rfftfreq(4, requires_grad=True).requires_grad


def test_views_share_memory():
    z = gt.tensor([1 + 2j, 3 - 1j])
    pairs = gt.view_as_real(z)
    pairs[0, 1] = 5.0
    assert z[0].item() == 1 + 5j
    z.real = gt.tensor([7.0, 8.0])            # the setter writes through the view
    z.imag[1] = -4.0
    assert z.tolist() == [7 + 5j, 8 - 4j]
    back = gt.view_as_complex(pairs)
    back[1] = 0j
    assert z[1].item() == 0j and z.real._base is not None
    with pytest.raises(RuntimeError, match="stride"):
        gt.view_as_complex(gt.zeros(2, 4)[:, ::2])
    with pytest.raises(RuntimeError, match="complex"):
        gt.view_as_real(gt.zeros(2))
    with pytest.raises(RuntimeError, match="non-complex"):
        gt.zeros(2).imag


def test_complex_gradient_convention():
    """A real loss of a complex leaf: z.grad = dL/dre + 1j dL/dim, as torch."""
    for lib in (torch, gt):
        z = lib.tensor([1 + 2j, -0.5 + 1j], requires_grad=True)
        (z.real ** 2 * 3 + z.imag * 2).sum().backward()
        assert np.allclose(z.grad.numpy(), [6 + 2j, -3 + 2j])


def test_spectral_loss_trains_as_torch():
    """A filter fitted to a target spectrum: rfft, abs, irfft in one graph, 20 SGD steps."""
    rng = np.random.default_rng(0)
    signal, target = rng.standard_normal((4, 32)), rng.standard_normal((4, 17))
    losses = {}
    for lib in (torch, gt):
        w = lib.tensor(np.ones(32), requires_grad=True)
        x, tgt = lib.tensor(signal), lib.tensor(target)
        opt = lib.optim.SGD([w], lr=0.01)
        run = []
        for _ in range(20):
            opt.zero_grad()
            spec = lib.fft.rfft(x * w, norm="ortho")
            back = lib.fft.irfft(spec * lib.fft.rfftfreq(32), n=32)
            loss = ((spec.abs() - tgt) ** 2).mean() + back.pow(2).mean()
            loss.backward()
            opt.step()
            run.append(loss.item())
        losses[lib.__name__] = run
    np.testing.assert_allclose(losses["glasstorch"], losses["torch"], rtol=1e-10)


def test_fft_docstring_example():
    result = doctest.testmod(importlib.import_module("glasstorch.fft"), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted and not result.failed


def test_conj_is_not_lazy_difference():
    """README "Where glasstorch differs": conj makes new memory (torch: a view with the conjugate bit)."""
    z = gt.tensor([1 + 2j])
    c = gt.conj(z)
    assert not c.is_conj() and torch.conj(torch.tensor([1 + 2j])).is_conj()
    assert gt.view_as_real(c).tolist() == [[1.0, -2.0]]      # torch: RuntimeError until resolve_conj()
    c[0] = 0j
    assert z.item() == 1 + 2j                                # torch: z would be 0j
    x = gt.tensor([1.0])
    assert gt.conj(x) is x and x.conj() is x                 # a real tensor is its own conjugate, as in torch
