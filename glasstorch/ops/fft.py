"""The discrete Fourier transform's three primitive ops and their derivatives (torch.fft's kernels).

Every transform of ``torch.fft`` is one of three aten ops over a list of dims, as in torch:

=================  ===============================  ============================================
``_fft_c2c``       complex -> complex               fft/ifft of a complex input, fftn, ifftn
``_fft_r2c``       real -> complex (``onesided``:   rfft, rfftn; fft/ifft of a real input
                   only the first n//2+1 bins of
                   the last dim, the rest being
                   their conjugates)
``_fft_c2r``       one-sided complex -> real        irfft, irfftn
=================  ===============================  ============================================

``normalization`` scales the result: 0 not at all, 1 by 1/sqrt(n), 2 by 1/n, where n is the number of
points transformed (the public functions turn ``norm="backward"|"forward"|"ortho"`` into it).

The derivatives (torch's ``derivatives.yaml`` and ``FunctionsManual.cpp``): the DFT is linear, y = F x,
so the gradient is the adjoint F^H applied to the gradient -- the transform in the other direction
with the same normalization.

* c2c: the inverse-direction c2c.
* r2c: the input was real, so the gradient is the real part of the inverse c2c; a one-sided output
  dropped the upper bins, whose gradient is zero: pad them back with zeros first.
* c2r: the output of c2r is the inverse c2c of the full Hermitian spectrum rebuilt from the one-sided
  input, so the gradient is r2c (one-sided) of the gradient, with each bin that stood for itself and its
  mirror image (all but bin 0 and, for even n, bin n/2) counted twice.
"""
from .._array import xp, full_like as _full_like
from .._ops import defop, node_classes_of
from .complex import view_as_real_op, _COMPLEX_OF, _REAL_OF
from .nn_pool import constant_pad_nd_op

__getattr__ = node_classes_of(__name__)    # (the node classes declared here, by name: TanhBackward0)

NORM_NONE, NORM_BY_ROOT_N, NORM_BY_N = 0, 1, 2   # torch's fft_norm_mode


def _numpy_norm(normalization, forward):
    """NumPy's name for the same scaling: its ``norm`` says which direction is scaled by 1/n."""
    if normalization == NORM_BY_ROOT_N:
        return "ortho"
    if normalization == NORM_NONE:
        return "backward" if forward else "forward"
    return "forward" if forward else "backward"


def _fft_r2c_kernel(self, dim, normalization, onesided):
    transform = xp.fft.rfftn if onesided else xp.fft.fftn
    return transform(self, axes=dim, norm=_numpy_norm(normalization, True)).astype(_COMPLEX_OF[self.dtype],
                                                                                      copy=False)


def _fft_c2r_kernel(self, dim, normalization, last_dim_size):
    sizes = [self.shape[d] for d in dim[:-1]] + [last_dim_size]
    return xp.fft.irfftn(self, s=sizes, axes=dim, norm=_numpy_norm(normalization, False)).astype(
        _REAL_OF[self.dtype], copy=False)


def _fft_c2c_kernel(self, dim, normalization, forward):
    transform = xp.fft.fftn if forward else xp.fft.ifftn
    return transform(self, axes=dim, norm=_numpy_norm(normalization, forward)).astype(self.dtype, copy=False)


def _real_part(z):
    """Re z, through the real-pair view (arrays or Tensors)."""
    return view_as_real_op(z)[..., 0]


def fft_r2c_backward(grad, dim, normalization, onesided, self_sizes):
    """torch's ``fft_r2c_backward``."""
    if onesided:
        last = dim[-1]
        missing = self_sizes[last] - grad.shape[last]
        if missing > 0:   # the dropped upper bins: zero gradient
            grad = constant_pad_nd_op(grad, [0, 0] * (grad.ndim - 1 - last) + [0, missing])
    return _real_part(fft_c2c(grad, dim, normalization, False))


def _bin_weights(n_onesided, n_doubled, ndim, last, dtype, like):
    """1 for the bins standing for themselves, 2 for those standing for their mirror image too (on
    the device of ``like``, an array or a Tensor)."""
    w = _full_like(getattr(like, "_data", like), 1, n_onesided, getattr(dtype, "numpy_dtype", dtype))
    w[1:1 + n_doubled] = 2
    shape = [1] * ndim
    shape[last] = n_onesided
    return w.reshape(shape)


def fft_c2r_backward(grad, dim, normalization):
    """torch's ``fft_c2r_backward``."""
    g = fft_r2c(grad, dim, normalization, True)
    last = dim[-1]
    doubled = grad.shape[last] - g.shape[last]
    if doubled > 0:
        g = g * _bin_weights(g.shape[last], doubled, g.ndim, last, grad.dtype, g)
    return g


fft_r2c = defop("_fft_r2c(Tensor self, int[] dim, int normalization, bool onesided) -> Tensor", _fft_r2c_kernel,
                node="FftR2CBackward0", self=fft_r2c_backward)
fft_c2r = defop("_fft_c2r(Tensor self, int[] dim, int normalization, SymInt last_dim_size) -> Tensor",
                _fft_c2r_kernel, node="FftC2RBackward0",
                self=lambda grad, dim, normalization: fft_c2r_backward(grad, dim, normalization))
fft_c2c = defop("_fft_c2c(Tensor self, SymInt[] dim, int normalization, bool forward) -> Tensor", _fft_c2c_kernel,
                node="FftC2CBackward0",
                self=lambda grad, dim, normalization, forward: fft_c2c(grad, dim, normalization, not forward))
