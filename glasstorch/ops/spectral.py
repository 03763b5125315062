"""Short-time Fourier transforms and the window functions that go with them: ``torch.stft`` /
``torch.istft`` (and ``Tensor.stft`` / ``Tensor.istft``), ``torch.hann_window``, ``hamming_window``,
``bartlett_window``, ``blackman_window``, ``kaiser_window``.

Neither transform is an op of its own in torch (both are composite: ``SpectralOps.cpp``); they are
built here from the same ops torch builds them from, so values, gradients and (save one node) the
recorded graph are torch's:

stft (``torch/functional.py`` then ``at::stft``)
    1. ``center``: pad ``n_fft // 2`` on both sides with ``pad_mode`` (``F.pad`` of a 3-d view, as
       torch.functional does: ``ViewBackward0 <- ReflectionPad1DBackward0 <- ViewBackward0``).
    2. frames: every ``n_fft`` samples, ``hop_length`` apart, taken with ``as_strided``
       (``AsStridedBackward0``), as torch takes them.
    3. times the window (copied into the middle of ``n_fft`` zeros of the input's dtype when
       ``win_length < n_fft``).
    4. ``_fft_r2c`` over the last dim (one-sided by default) for a real input, ``_fft_c2c`` for a
       complex one; ``normalized`` scales by ``1/sqrt(n_fft)``.
    5. frequencies before frames: an in-place ``transpose_(1, 2)`` (``TransposeBackward1``), and
       ``view_as_real`` if ``return_complex=False``.

istft (``at::istft``): the inverse transform of every frame (``_fft_c2r``, or ``_fft_c2c`` when
``return_complex``) times the window, overlap-added with ``unfold_backward`` (the adjoint of taking
frames: it sums each frame back at its offset), divided by the overlap-added squared window (the
"window envelope", which must not vanish anywhere: torch's NOLA check), the ``center`` padding cut off.

The windows are the cosine-sum windows of signal processing, evaluated on ``arange(L)`` in float64 and
rounded to the requested dtype. ``periodic=True`` (the default, what spectral analysis wants) is the
symmetric window of ``L + 1`` points with its last point dropped.
"""
import math

from .. import _dtype
from .._array import xp
from .._seam import overridable
from .._tensor import Tensor
from .._warnings import warn
from ._op import method
from .._tensor import _wrap
from .._array import meta
from .creation import _leaf, _place, _np_dtype, _is_meta
from .complex import view_as_real, view_as_complex
from .windows import unfold_backward_op

__all__ = ["stft", "istft", "hann_window", "hamming_window", "bartlett_window", "blackman_window", "kaiser_window"]


# ---- window functions ---------------------------------------------------------------------------------------
def _symmetric_hamming(n, alpha, beta):
    return alpha - beta * xp.cos(xp.arange(n) * (2 * math.pi / (n - 1)))


def _symmetric_bartlett(n, _):
    k = xp.arange(n) * (2.0 / (n - 1))
    return xp.where(xp.arange(n) < (n - 1) // 2 + 1, k, 2 - k)


def _symmetric_blackman(n, _):
    k = xp.arange(n) * (2 * math.pi / (n - 1))
    return 0.08 * xp.cos(2 * k) - 0.5 * xp.cos(k) + 0.42


def _symmetric_kaiser(n, beta):
    alpha = (n - 1) / 2.0
    return xp.i0(beta * xp.sqrt(1 - ((xp.arange(n) - alpha) / alpha) ** 2)) / xp.i0(beta)


def _window(name, symmetric, window_length, periodic, params, dtype, device, requires_grad):
    """torch's window factories: their checks, the 0- and 1-point windows, and periodic = symmetric of
    one more point, its last dropped."""
    dtype = dtype or _dtype.get_default_dtype()
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: TensorOptions(dtype={_dtype.cpp_name(dtype)}, "
                           "device=cpu, layout=Strided (default), requires_grad=false (default), "
                           "pinned_memory=false, memory_format=(nullopt))")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    if window_length <= 1:
        values = xp.ones(window_length)
    else:
        n = window_length + 1 if periodic else window_length
        values = symmetric(n, params)[:window_length]
    if _is_meta(device):
        return _leaf(_wrap(meta.zeros((window_length,), _np_dtype(dtype))), requires_grad)
    return _leaf(_wrap(_place(values.astype(_np_dtype(dtype)), device)), requires_grad)


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                requires_grad=False):
    """The Hann window, ``0.5 - 0.5 cos(2 pi k / (N - 1))`` (N = ``window_length + 1`` if ``periodic``)."""
    return _window("hann_window", lambda n, _: _symmetric_hamming(n, 0.5, 0.5), window_length, periodic, None,
                   dtype, device, requires_grad)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   pin_memory=False, requires_grad=False):
    """The generalized Hamming window, ``alpha - beta cos(2 pi k / (N - 1))``."""
    return _window("hamming_window", lambda n, _: _symmetric_hamming(n, alpha, beta), window_length, periodic,
                   None, dtype, device, requires_grad)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    """The Bartlett (triangular) window, rising from 0 to 1 and back."""
    return _window("bartlett_window", _symmetric_bartlett, window_length, periodic, None, dtype, device,
                   requires_grad)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    """The Blackman window, ``0.42 - 0.5 cos(2 pi k / (N - 1)) + 0.08 cos(4 pi k / (N - 1))``."""
    return _window("blackman_window", _symmetric_blackman, window_length, periodic, None, dtype, device,
                   requires_grad)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  pin_memory=False, requires_grad=False):
    """The Kaiser window, ``I0(beta sqrt(1 - ((k - a) / a)^2)) / I0(beta)``, a = (N - 1) / 2."""
    return _window("kaiser_window", _symmetric_kaiser, window_length, periodic, beta, dtype, device, requires_grad)


# ---- stft / istft -------------------------------------------------------------------------------------------
_warned = set()


def _warn_once(key, message):
    """torch's ``TORCH_WARN_ONCE``: the first time in the process only."""
    if key not in _warned:
        _warned.add(key)
        warn(message)


def _window_repr(window):
    return "None" if window is None else f"torch.{window.dtype._legacy}Tensor{{{list(window.shape)}}}"


def _opt(value):
    """How torch's error strings print an optional bool or int: None, or a bool as 0/1."""
    return "None" if value is None else int(value)


def _centered_window(window, win_length, n_fft, dtype, device):
    """at::stft's window of ``n_fft`` points: ``window`` itself when ``win_length == n_fft`` (None: a
    rectangular window, nothing to multiply by), else zeros of the input's dtype with ``window`` (or
    ones) copied into the middle (a ``CopySlices`` node when the window requires grad)."""
    if win_length == n_fft:
        return window
    from .creation import zeros
    full = zeros(n_fft, dtype=dtype, device=device)
    middle = full.narrow(0, (n_fft - win_length) // 2, win_length)
    if window is None:
        middle.fill_(1)
    else:
        middle.copy_(window)
    return full


@method()
@overridable(defaults_by_keyword=True)
def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    """The short-time Fourier transform: the DFT of every frame of ``n_fft`` samples, ``hop_length``
    apart (default ``n_fft // 4``), times ``window``; shape ``(B?, N, T)`` (complex), or ``(B?, N, T, 2)``
    with ``return_complex=False`` (deprecated). N is ``n_fft // 2 + 1`` if ``onesided`` (the default for
    real input and window), else ``n_fft``; T is ``1 + L // hop_length`` with ``center`` (the default),
    ``1 + (L - n_fft) // hop_length`` without."""
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center:                                   # torch.functional.stft's padding, before at::stft
        from .nn_pool import pad
        signal_dim = input.ndim
        half = int(n_fft // 2)
        input = pad(input.view([1] * (3 - signal_dim) + list(input.shape)), [half, half], pad_mode)
        input = input.view(input.shape[-signal_dim:])
    window_is_complex = window is not None and window.is_complex()
    if return_complex is None:
        return_complex = input.is_complex() or window_is_complex
        if not return_complex:
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will "
                               "further require that return_complex=True in a future PyTorch release.")
    if not return_complex:
        _warn_once("stft-real", "stft with return_complex=False is deprecated. In a future pytorch release, stft "
                   "will return complex tensors for all inputs, and return_complex=False will raise an error.\n"
                   "Note: you can still call torch.view_as_real on the complex output to recover the old return "
                   "format.")
    if window is None:
        _warn_once("stft-window", "A window was not provided. A rectangular window will be applied,which is known "
                   "to cause spectral leakage. Other windows such as torch.hann_window or torch.hamming_window are "
                   "recommended to reduce spectral leakage.To suppress this warning and use a rectangular window, "
                   "explicitly set `window=torch.ones(n_fft, device=<device>)`.")
    hop_length = n_fft >> 2 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length

    def error(message):
        return RuntimeError(
            f"stft(torch.{input.dtype._legacy}Tensor{list(input.shape)}, n_fft={n_fft}, hop_length={hop_length}, "
            f"win_length={win_length}, window={_window_repr(window)}, normalized={int(normalized)}, "
            f"onesided={_opt(onesided)}, return_complex={int(return_complex)}, "
            f"align_to_window={_opt(align_to_window)}) : {message}")

    if not (input.dtype.is_floating_point or input.is_complex()):
        raise error("expected a tensor of floating point or complex values")
    if not 1 <= input.ndim <= 2:
        raise error("expected a 1D or 2D tensor")
    length = input.shape[-1]
    if n_fft <= 0 or n_fft > length:
        raise error(f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop_length <= 0:
        raise error(f"expected hop_length > 0, but got hop_length={hop_length}")
    if win_length <= 0 or win_length > n_fft:
        raise error(f"expected 0 < win_length <= n_fft, but got win_length={win_length}")
    if window is not None and (window.ndim != 1 or window.shape[0] != win_length):
        raise error(f"expected a 1D window tensor of size equal to win_length={win_length}, but got window with "
                    f"size {list(window.shape)}")
    if input.dtype in (_dtype.float16, _dtype.bfloat16):
        raise RuntimeError(f"MKL FFT doesn't support tensors of type: {input.dtype._legacy}")
    from . import fft as _fft
    from .nn_pool import constant_pad_nd
    window = _centered_window(window, win_length, n_fft, input.dtype, input.device)
    batched = input.ndim == 2
    frames_of = input if batched else input.unsqueeze(0)
    if align_to_window and win_length < n_fft:
        # frames aligned on the window rather than on the n_fft-point frame that holds it: as if the signal
        # were zero-padded by the window's offset in the frame
        left = (n_fft - win_length) // 2
        frames_of = constant_pad_nd(frames_of, [left, n_fft - win_length - left])
    step = frames_of.stride(1)
    frames = frames_of.as_strided((frames_of.shape[0], 1 + (frames_of.shape[1] - n_fft) // hop_length, n_fft),
                                  (frames_of.stride(0), hop_length * step, step))      # (B, T, n_fft)
    if window is not None:
        frames = frames.mul(window)
    complex_fft = frames.is_complex()
    onesided = (not complex_fft) if onesided is None else onesided
    normalization = _fft.NORM_BY_ROOT_N if normalized else _fft.NORM_NONE
    if complex_fft:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = _fft.fft_c2c(frames, [frames.ndim - 1], normalization, True)
    else:
        out = _fft.fft_r2c(frames, [frames.ndim - 1], normalization, onesided)
    out.transpose_(1, 2)                                              # (B, N, T)
    if not batched:
        out.squeeze_(0)
    return out if return_complex else view_as_real(out)


@method()
@overridable    # (torch's is a binding: a handler is given what the caller gave)
def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """The inverse of :func:`stft` (least-squares overlap-add): ``input`` is stft's complex output
    ``(B?, N, T)``; the signal has ``length`` samples (default: what the frames cover, less the ``center``
    padding). The window's overlap-added square must not vanish anywhere (NOLA)."""
    if window is None:
        _warn_once("istft-window", "A window was not provided. A rectangular window will be applied.Please provide "
                   "the same window used by stft to make the inversion lossless.To suppress this warning and use a "
                   "rectangular window, explicitly set `window=torch.ones(n_fft, device=<device>)`.")
    hop_length = n_fft >> 2 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")
    parts = view_as_real(input.resolve_conj())                         # (B?, N, T, 2)
    ndim = parts.ndim

    onesided_given = onesided

    def error(message, sep=" : "):
        return RuntimeError(
            f"istft(CPU{input.dtype._legacy}Type{list(input.shape)}, n_fft={n_fft}, hop_length={hop_length}, "
            f"win_length={win_length}, window={_window_repr(window)}, center={int(center)}, "
            f"normalized={int(normalized)}, onesided={_opt(onesided_given)}, length={_opt(length)}, "
            f"return_complex={int(return_complex)}){sep}{message}")

    if ndim < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got -3)")
    n_frames, fft_size = parts.shape[-2], parts.shape[-3]
    expected_length = n_fft + hop_length * (n_frames - 1)
    if parts.numel() == 0:
        raise error("input tensor cannot be empty.")
    if ndim not in (3, 4):
        raise error(f"expected a tensor with 3 or 4 dimensions, but got {ndim}")
    onesided_given = onesided
    onesided = fft_size != n_fft if onesided is None else onesided
    if onesided and n_fft // 2 + 1 != fft_size:
        raise error("expected the frequency dimension (3rd to the last) of the input tensor to match n_fft / 2 + 1 "
                    f"when onesided=True, but got {fft_size}")
    if not onesided and n_fft != fft_size:
        raise error("expected the frequency dimension (3rd to the last) of the input tensor to match n_fft when "
                    f"onesided=False, but got {fft_size}")
    if not 0 < hop_length <= win_length:
        raise error("expected 0 < hop_length <= win_length")
    if not 0 < win_length <= n_fft:
        raise error("expected 0 < win_length <= n_fft")
    if window is not None and (window.ndim != 1 or window.shape[0] != win_length):
        raise error("Invalid window shape. window has to be 1D and length of `win_length`")
    from . import fft as _fft
    from .creation import ones
    from .nn_pool import constant_pad_nd
    real_dtype = parts.dtype
    full_window = window if window is not None else ones(win_length, dtype=real_dtype, device=input.device)
    if win_length != n_fft:
        left = (n_fft - win_length) // 2
        full_window = constant_pad_nd(full_window, [left, n_fft - win_length - left])
    if ndim == 3:
        parts = parts.unsqueeze(0)
    frames = view_as_complex(parts.transpose(1, 2))                    # (B, T, N)
    normalization = _fft.NORM_BY_ROOT_N if normalized else _fft.NORM_BY_N
    if return_complex:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        frames = _fft.fft_c2c(frames, [frames.ndim - 1], normalization, False)
    else:
        if window is not None and window.is_complex():
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not onesided:
            frames = frames.narrow(-1, 0, n_fft // 2 + 1)
        frames = _fft.fft_c2r(frames, [frames.ndim - 1], normalization, n_fft)   # (B, T, n_fft)
    y = unfold_backward_op(frames * full_window.view(1, 1, n_fft), [frames.shape[0], expected_length], 1, n_fft,
                           hop_length)                                 # overlap-add: (B, expected_length)
    envelope = unfold_backward_op(full_window.pow(2).expand(1, n_frames, n_fft), [1, expected_length], 1, n_fft,
                                  hop_length)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = -(n_fft // 2) if center else expected_length
    y = y[:, start:end]
    envelope = envelope[:, start:end]
    if bool((envelope.abs().min() < 1e-11).item()):
        raise error("window overlap add min: 1", sep=" ")
    y = y / envelope
    if ndim == 3:
        y = y.squeeze(0)
    if end > expected_length:
        _warn_once("istft-length", "The length of signal is shorter than the length parameter. Result is being "
                   "padded with zeros in the tail. Please check your center and hop_length settings.")
        y = constant_pad_nd(y, [0, end - expected_length])
    return y
