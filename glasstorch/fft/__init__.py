"""torch.fft: discrete Fourier transforms, with gradients.

Each transform resizes its input to the requested signal sizes (``n`` / ``s``: zero-padding with
``constant_pad_nd``, or cropping with ``narrow``), then runs one of the three primitive ops of
``glasstorch/ops/fft.py`` -- ``_fft_c2c``, ``_fft_r2c``, ``_fft_c2r`` -- with the normalization that
``norm`` names, as torch's ``SpectralOps.cpp`` does, so the recorded graph is torch's:

* ``fft``/``ifft`` of a real input: ``_fft_r2c`` with both halves (``ifft`` then conjugates:
  ``ConjBackward0``); of a complex input: ``_fft_c2c``.
* ``fftn``/``ifftn``/``fft2``/``ifft2``: the input made complex (``ToCopyBackward0``), then ``_fft_c2c``.
* ``rfft``/``rfftn``/``rfft2``: ``_fft_r2c``, one-sided (the last transformed dim keeps n//2+1 bins).
* ``irfft``/``irfftn``/``irfft2``: ``_fft_c2r``; the last dim's output size is ``n`` (default
  ``2 * (m - 1)`` for m input bins).
* ``hfftn``/``hfft2``: ``_fft_c2c`` over all but the last dim, the conjugate, then ``_fft_c2r`` on the
  last; ``ihfftn``/``ihfft2``: ``_fft_r2c`` (one-sided) on the last dim, ``conj_physical``, then the
  inverse ``_fft_c2c`` over the others (one dim: a lazy ``conj``, as ``ihfft``).

``norm``: ``"backward"`` (the default: the forward transform is unscaled, the inverse scaled by 1/n),
``"forward"`` (the other way round) or ``"ortho"`` (both by 1/sqrt(n)).

Example::

    >>> import glasstorch as torch
    >>> x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    >>> X = torch.fft.rfft(x)
    >>> X
    tensor([10.+0.j, -2.+2.j, -2.+0.j], grad_fn=<FftR2CBackward0>)
    >>> torch.fft.irfft(X, n=4)
    tensor([1., 2., 3., 4.], grad_fn=<FftC2RBackward0>)
"""
from .. import _dtype
from .._seam import overridable
from .._tensor import Tensor
from ..ops import fft as _ops
from ..ops.nn_pool import constant_pad_nd
from ..ops.complex import conj, conj_physical
from ..ops.joining import roll, cat
from ..ops.creation import arange

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn",
           "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift",
           "ifftshift", "Tensor"]   # (torch.fft's __all__ names Tensor too: `from torch.fft import *` brings it)

_NONE, _BY_ROOT_N, _BY_N = _ops.NORM_NONE, _ops.NORM_BY_ROOT_N, _ops.NORM_BY_N


def _normalization(norm, forward):
    """torch's ``norm_from_string``."""
    if norm is None or norm == "backward":
        return _NONE if forward else _BY_N
    if norm == "forward":
        return _BY_N if forward else _NONE
    if norm == "ortho":
        return _BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _wrap_dim(dim, ndim):
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    return dim % ndim


def _promote(input, require_complex=False):
    """torch's ``promote_tensor_fft``: integers and bools to the default float type; float16/bfloat16 are
    refused on the CPU; ``require_complex``: then to the matching complex type."""
    dt = input.dtype
    if dt.is_complex:
        return input
    if not dt.is_floating_point:
        dt = _dtype.get_default_dtype()
    if dt not in (_dtype.float32, _dtype.float64):
        raise RuntimeError(f"Unsupported dtype {dt._legacy}")
    if require_complex:
        dt = _dtype.complex64 if dt is _dtype.float32 else _dtype.complex128
    return input if dt is input.dtype else input.to(dt)


def _check_points(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _resize(input, dims, sizes):
    """torch's ``resize_fft_input``: crop (``narrow``) the dims that are too long, then zero-pad the ones
    too short."""
    pad = [0] * (2 * input.ndim)
    padding = False
    for d, n in zip(dims, sizes):
        have = input.shape[d]
        if have > n:
            input = input.narrow(d, 0, n)
        elif have < n:
            pad[2 * (input.ndim - 1 - d) + 1] = n - have
            padding = True
    return constant_pad_nd(input, pad) if padding else input


def _one_dim(name, input, n, dim, norm, kind):
    """fft, ifft, rfft, irfft, hfft, ihfft: one dim."""
    if kind == "r2c" and input.is_complex():
        raise RuntimeError(f"{name} expects a real input tensor, but got {input.dtype._legacy}")
    d = _wrap_dim(dim, input.ndim)
    if kind == "c2r":                       # irfft (forward=False), hfft (forward=True)
        forward = name == "hfft"
        input = _promote(input, require_complex=True)
        last = n if n is not None else 2 * (input.shape[d] - 1)
        _check_points(last)
        if n is not None:
            input = _resize(input, (d,), (last // 2 + 1,))
        if forward:
            input = conj(input)
        return _ops.fft_c2r(input, [d], _normalization(norm, forward), last)
    forward = name in ("fft", "rfft")
    if n is not None:
        _check_points(n)
    elif input.shape[d] < 1:
        _check_points(input.shape[d])
    input = _promote(input)
    if n is not None:
        input = _resize(input, (d,), (n,))
    normalization = _normalization(norm, forward)
    if input.is_complex():
        return _ops.fft_c2c(input, [d], normalization, forward)
    out = _ops.fft_r2c(input, [d], normalization, kind == "r2c")
    return out if forward else conj(out)    # (the inverse r2c is the conjugate of the forward one)


@overridable    # (torch's is a binding: a handler is given what the caller gave)
def fft(input, n=None, dim=-1, norm=None):
    """The 1-D discrete Fourier transform over ``dim``: X[k] = sum_j x[j] exp(-2 pi i jk / n)."""
    return _one_dim("fft", input, n, dim, norm, "c2c")


@overridable
def ifft(input, n=None, dim=-1, norm=None):
    """The inverse of :func:`fft`: x[j] = 1/n sum_k X[k] exp(2 pi i jk / n)."""
    return _one_dim("ifft", input, n, dim, norm, "c2c")


@overridable
def rfft(input, n=None, dim=-1, norm=None):
    """The FFT of a real signal, one-sided: the n//2+1 non-negative frequencies (the others are their
    complex conjugates)."""
    return _one_dim("rfft", input, n, dim, norm, "r2c")


@overridable
def irfft(input, n=None, dim=-1, norm=None):
    """The inverse of :func:`rfft`: a real signal of length ``n`` (default ``2 * (m - 1)``) from m bins."""
    return _one_dim("irfft", input, n, dim, norm, "c2r")


@overridable
def hfft(input, n=None, dim=-1, norm=None):
    """The FFT of a Hermitian-symmetric signal given by its one-sided half: a real spectrum."""
    return _one_dim("hfft", input, n, dim, norm, "c2r")


@overridable
def ihfft(input, n=None, dim=-1, norm=None):
    """The inverse of :func:`hfft`: the one-sided inverse FFT of a real signal."""
    return _one_dim("ihfft", input, n, dim, norm, "r2c")


def _shape_and_dims(input, s, dim):
    """torch's ``canonicalize_fft_shape_and_dim_args``: the transformed dims and their signal sizes."""
    ndim = input.ndim
    if dim is not None:
        dims = [dim] if isinstance(dim, int) else list(dim)
        dims = [_wrap_dim(d, ndim) for d in dims]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = [s] if isinstance(s, int) else list(s)
        if dim is not None and len(dims) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {ndim} dimensions.")
        if dim is None:
            dims = list(range(ndim - len(s), ndim))
        shape = [n if n != -1 else input.shape[d] for n, d in zip(s, dims)]
    elif dim is None:
        dims, shape = list(range(ndim)), list(input.shape)
    else:
        shape = [input.shape[d] for d in dims]
    for n in shape:
        _check_points(n)
    return shape, dims


def _n_dim(name, input, s, dim, norm, kind):
    """fftn, ifftn, rfftn, irfftn (and their 2-D forms)."""
    if dim is None and name.endswith("2"):
        raise TypeError(f"fft_{name}(): argument 'dim' must be tuple of ints, not NoneType")
    forward = not name.startswith("i")
    if kind == "c2c":
        shape, dims = _shape_and_dims(input, s, dim)
        x = _resize(_promote(input, require_complex=True), dims, shape)
        return _ops.fft_c2c(x, dims, _normalization(norm, forward), forward)
    if kind == "r2c":
        if input.is_complex():
            raise RuntimeError(f"{name} expects a real-valued input tensor, but got {input.dtype._legacy}")
        shape, dims = _shape_and_dims(input, s, dim)
        x = _resize(_promote(input), dims, shape)
        return _ops.fft_r2c(x, dims, _normalization(norm, forward), True)
    # c2r: the last dim's output size is s[-1], or 2 * (bins - 1)
    shape, dims = _shape_and_dims(input, s, dim)
    last = shape[-1] if s is not None and s[-1] != -1 else 2 * (input.shape[dims[-1]] - 1)
    _check_points(last)
    shape[-1] = last // 2 + 1
    x = _resize(_promote(input, require_complex=True), dims, shape)
    return _ops.fft_c2r(x, dims, _normalization(norm, forward), last)


@overridable
def fftn(input, s=None, dim=None, norm=None):
    """The N-D FFT over ``dim`` (default: the last ``len(s)`` dims, or all), each resized to ``s``."""
    return _n_dim("fftn", input, s, dim, norm, "c2c")


@overridable
def ifftn(input, s=None, dim=None, norm=None):
    return _n_dim("ifftn", input, s, dim, norm, "c2c")


@overridable
def rfftn(input, s=None, dim=None, norm=None):
    """The N-D FFT of a real input, one-sided in the last transformed dim."""
    return _n_dim("rfftn", input, s, dim, norm, "r2c")


@overridable
def irfftn(input, s=None, dim=None, norm=None):
    """The inverse of :func:`rfftn`."""
    return _n_dim("irfftn", input, s, dim, norm, "c2r")


def _hermitian_n_dim(name, input, s, dim, norm):
    """hfftn/hfft2 (a real spectrum from a Hermitian signal's half) and ihfftn/ihfft2 (its inverse)."""
    if dim is None and name.endswith("2"):
        raise TypeError(f"fft_{name}(): argument 'dim' must be tuple of ints, not NoneType")
    shape, dims = _shape_and_dims(input, s, dim)
    if name.startswith("i"):                   # ihfftn: forward=False normalization throughout
        if input.is_complex():
            raise RuntimeError(f"Only supports floating-point dtypes, but found: {input.dtype._legacy}")
        normalization = _normalization(norm, False)
        x = _resize(_promote(input), dims, shape)
        half = _ops.fft_r2c(x, [dims[-1]], normalization, True)
        if len(dims) == 1:
            return conj(half)
        return _ops.fft_c2c(conj_physical(half), dims[:-1], normalization, False)
    last = shape[-1] if s is not None and s[-1] != -1 else 2 * (input.shape[dims[-1]] - 1)
    _check_points(last)
    shape[-1] = last // 2 + 1
    normalization = _normalization(norm, True)
    x = _resize(_promote(input, require_complex=True), dims, shape)
    if len(dims) > 1:
        x = _ops.fft_c2c(x, dims[:-1], normalization, True)
    return _ops.fft_c2r(conj(x), [dims[-1]], normalization, last)


@overridable
def hfftn(input, s=None, dim=None, norm=None):
    """The N-D FFT of a signal Hermitian-symmetric in the last transformed dim, given by its half: real."""
    return _hermitian_n_dim("hfftn", input, s, dim, norm)


@overridable
def ihfftn(input, s=None, dim=None, norm=None):
    """The inverse of :func:`hfftn`: the N-D inverse FFT of a real signal, one-sided in the last dim."""
    return _hermitian_n_dim("ihfftn", input, s, dim, norm)


@overridable
def hfft2(input, s=None, dim=(-2, -1), norm=None):
    return _hermitian_n_dim("hfft2", input, s, dim, norm)


@overridable
def ihfft2(input, s=None, dim=(-2, -1), norm=None):
    return _hermitian_n_dim("ihfft2", input, s, dim, norm)


@overridable
def fft2(input, s=None, dim=(-2, -1), norm=None):
    return _n_dim("fft2", input, s, dim, norm, "c2c")


@overridable
def ifft2(input, s=None, dim=(-2, -1), norm=None):
    return _n_dim("ifft2", input, s, dim, norm, "c2c")


@overridable
def rfft2(input, s=None, dim=(-2, -1), norm=None):
    return _n_dim("rfft2", input, s, dim, norm, "r2c")


@overridable
def irfft2(input, s=None, dim=(-2, -1), norm=None):
    return _n_dim("irfft2", input, s, dim, norm, "c2r")


@overridable
def fftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """The sample frequencies of an n-point FFT with sample spacing d: [0, 1, ..., n/2-1, -n/2, ..., -1] / (d n)
    (for odd n, up to (n-1)/2 then from -(n-1)/2)."""
    dtype = dtype or _dtype.get_default_dtype()
    k = cat([arange((n - 1) // 2 + 1, dtype=dtype, device=device), arange(-(n // 2), 0, dtype=dtype, device=device)])
    return _frequencies(k, n, d, requires_grad)


@overridable
def rfftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """The sample frequencies of :func:`rfft`: [0, 1, ..., n//2] / (d n)."""
    dtype = dtype or _dtype.get_default_dtype()
    return _frequencies(arange(n // 2 + 1, dtype=dtype, device=device), n, d, requires_grad)


def _frequencies(k, n, d, requires_grad):
    out = k.mul_(1.0 / (n * d))
    return out.requires_grad_() if requires_grad else out


def _shifts(input, dim, sign):
    if dim is None:
        dims = list(range(input.ndim))
    else:
        dims = [dim] if isinstance(dim, int) else list(dim)
    return [sign * (input.shape[d] // 2) for d in dims], dims


@overridable
def fftshift(input, dim=None):
    """Move the zero frequency to the centre: roll each dim by n // 2."""
    shifts, dims = _shifts(input, dim, 1)
    return roll(input, shifts, dims)


@overridable
def ifftshift(input, dim=None):
    """The inverse of :func:`fftshift`: roll each dim by -(n // 2)."""
    shifts, dims = _shifts(input, dim, -1)
    return roll(input, shifts, dims)
