"""What a TorchFunctionMode is handed for calls whose convention differs between torch's bindings
(a handler is given what the caller gave) and torch's functions written in Python (they hand their
parameters by keyword): glasstorch's against torch's, call by call. tools/audit_modes.py walks the
whole op registry the same way (a report); these are the calls it found differing, fixed at stop 29.
(A positional parameter given by keyword is handed in ``args`` here, a documented difference: these
calls give them positionally, or they are keyword-only in both.)"""
import pytest
import torch

import glasstorch as gt

# torch's bindings in submodules carry their C++ names (torch.fft.fft.__name__ == 'fft_fft')
_PREFIXES = ("fft_", "special_")


def _plain(v):
    if isinstance(v, (torch.Tensor, gt.Tensor)):
        return "T"
    if isinstance(v, (list, tuple)):
        return tuple(_plain(x) for x in v)
    return str(v).replace("torch.", "")


def _name(func):
    name = func.__name__
    for p in _PREFIXES:
        name = name[len(p):] if name.startswith(p) else name
    return name


CALLS = {
    "fft.fft": lambda L, x, v: L.fft.fft(v),
    "fft.rfft n": lambda L, x, v: L.fft.rfft(v, 8),
    "fft.ifft positional": lambda L, x, v: L.fft.ifft(v, 6, 0, "ortho"),
    "fft.fftn dim": lambda L, x, v: L.fft.fftn(x, None, (0,)),
    "fft.irfft2": lambda L, x, v: L.fft.irfft2(x),
    "fft.hfftn": lambda L, x, v: L.fft.hfftn(x, None, None, "forward"),
    "fft.fftshift": lambda L, x, v: L.fft.fftshift(x),
    "fft.fftfreq": lambda L, x, v: L.fft.fftfreq(8, device="cpu"),
    "softmax": lambda L, x, v: L.softmax(x, 1),
    "Tensor.softmax": lambda L, x, v: x.softmax(1),
    "Tensor.log_softmax dtype": lambda L, x, v: x.log_softmax(1, L.float64),
    "special.softmax": lambda L, x, v: L.special.softmax(x, 1),
    "special.round": lambda L, x, v: L.special.round(x),
    "special.round decimals": lambda L, x, v: L.special.round(x, decimals=1),
    "special.logsumexp": lambda L, x, v: L.special.logsumexp(x, 1),
    "sort": lambda L, x, v: L.sort(x),
    "sort stable": lambda L, x, v: L.sort(x, stable=True),
    "Tensor.argsort": lambda L, x, v: x.argsort(),
    "argsort descending": lambda L, x, v: L.argsort(x, 1, True),
    "Tensor.contiguous": lambda L, x, v: x.contiguous(),
    "Tensor.contiguous format": lambda L, x, v: x.contiguous(memory_format=L.preserve_format),
    "gelu": lambda L, x, v: L.nn.functional.gelu(x),
    "gelu tanh": lambda L, x, v: L.nn.functional.gelu(x, approximate="tanh"),
    "gelu tanh positional (keyword-only)": lambda L, x, v: _raises(lambda: L.nn.functional.gelu(x, "tanh")),
    "contiguous positional (keyword-only)": lambda L, x, v: _raises(lambda: x.contiguous(L.preserve_format)),
    "sort stable positional (keyword-only)": lambda L, x, v: _raises(lambda: L.sort(x, 0, False, True)),
    "dist": lambda L, x, v: L.dist(x, x),
    "dist p": lambda L, x, v: L.dist(x, x, 3),
    "pdist": lambda L, x, v: L.pdist(x),
    "F.pdist p": lambda L, x, v: L.nn.functional.pdist(x, 1),
    "vander": lambda L, x, v: L.vander(v),
    "combinations": lambda L, x, v: L.combinations(v, 3),
    "tensordot": lambda L, x, v: L.tensordot(x, x.t(), 1),
    "Tensor.polygamma": lambda L, x, v: x.polygamma(1),
    "polygamma": lambda L, x, v: L.polygamma(1, x),
    "l1_loss": lambda L, x, v: L.nn.functional.l1_loss(x, x),
    "margin_ranking_loss": lambda L, x, v: L.nn.functional.margin_ranking_loss(v, v, v.sign()),
    "cosine_embedding_loss": lambda L, x, v: L.nn.functional.cosine_embedding_loss(x, x, L.ones(3)),
}


def _raises(call):
    with pytest.raises(TypeError):
        call()


def _handed(L, name):
    log = []

    class Recording(L.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            log.append((_name(func), [_plain(a) for a in args], {k: _plain(v) for k, v in (kwargs or {}).items()}))
            return func(*args, **(kwargs or {}))
    x = L.arange(12.).reshape(3, 4) / 7
    v = L.arange(1., 6.)
    with Recording():
        CALLS[name](L, x, v)
    return log


@pytest.mark.parametrize("name", CALLS)
def test_a_mode_is_handed_what_torchs_is(name):
    assert _handed(gt, name) == _handed(torch, name)
