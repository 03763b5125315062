"""Sliding windows: ``Tensor.unfold`` (a view of every window along one dim) and ``F.unfold`` /
``F.fold`` (torch's im2col / col2im: the patches of an image as columns, and their sum back).

``x.unfold(dim, size, step)`` is a view: dim d becomes the window index and a new last dim of ``size``
walks inside each window (NumPy's strides, no copy). Windows overlap when ``step < size``, so the
gradient adds each window's gradient back in place (``unfold_backward``, itself linear: its derivative
is unfold again).

im2col and col2im are each other's adjoint: im2col of an (N, C, H, W) image is (N, C*kh*kw, L), one
column per window position (L of them); col2im sums such columns back into an image. Each is the other's
derivative. Both walk the kernel's kh*kw offsets, each a strided slice of the padded image.
"""
from .._tensor import Tensor
from .._array import xp, as_strided, zeros_like as _zeros_like, empty_like as _empty_like
from ._op import method
from .._ops import defop, node_classes_of
from .._seam import overridable

__getattr__ = node_classes_of(__name__)    # (the node classes declared here, by name: TanhBackward0)



def _unfold_kernel(self, dimension, size, step):
    if self.ndim == 0:
        return self.reshape(1)
    n = self.shape[dimension]
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {dimension} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    shape = list(self.shape)
    strides = list(self.strides)
    shape[dimension] = (n - size) // step + 1
    strides[dimension] = self.strides[dimension] * step
    return as_strided(self, tuple(shape) + (size,), tuple(strides) + (self.strides[dimension],))


def _unfold_backward_kernel(grad_in, input_sizes, dim, size, step):
    if not input_sizes:                                 # a 0-d input was seen as one window of one element
        return grad_in.reshape(()).copy()
    out = _zeros_like(grad_in, tuple(input_sizes))
    windows = grad_in.shape[dim]
    idx = [slice(None)] * out.ndim
    for k in range(size):     # element k of every window: distinct positions k, k + step, ..., so += is safe
        idx[dim] = slice(k, k + step * (windows - 1) + 1, step)
        out[tuple(idx)] += grad_in[..., k]
    return out


unfold_backward_op = defop(
    "unfold_backward(Tensor grad_in, SymInt[] input_sizes, int dim, int size, int step) -> Tensor",
    _unfold_backward_kernel, node="UnfoldBackwardBackward0",
    grad_in=lambda grad, dim, size, step: unfold_op(grad, dim, size, step))
unfold_op = defop("unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)", _unfold_kernel,
                  node="UnfoldBackward0",
                  self=lambda grad, self_sizes, dimension, size, step: unfold_backward_op(grad, list(self_sizes),
                                                                                         dimension, size, step))


def _wrap(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


@overridable
def tensor_unfold(self, dimension, size, step):
    """Tensor.unfold: every window of ``size`` elements, ``step`` apart, along ``dimension`` (a view)."""
    return unfold_op(self, _wrap(dimension, self.ndim), size, step)


tensor_unfold.__name__ = tensor_unfold.__qualname__ = "unfold"
Tensor.unfold = tensor_unfold


# ---- im2col / col2im --------------------------------------------------------------------------------------
def _blocks(size, k, d, p, s):
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _unbatched(kernel, ndim, batched_ndim):
    """Run a batched kernel on an unbatched input too (torch's im2col/col2im take both)."""
    def run(self, *args):
        if self.ndim < ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-self.ndim}, {self.ndim - 1}], "
                             f"but got {self.ndim})")
        if self.ndim == batched_ndim:
            return kernel(self, *args)
        if self.ndim == batched_ndim - 1:
            return kernel(self[None], *args)[0]
        raise RuntimeError(f"Expected {batched_ndim - 1}D or {batched_ndim}D (batch mode) tensor for input with "
                           f"possibly 0 batch size and non-zero dimensions for input, but got: {list(self.shape)}")
    run.__name__ = kernel.__name__
    return run


def _im2col_kernel(self, kernel_size, dilation, padding, stride):
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel_size, dilation, padding, stride
    n, c, h, w = self.shape
    bh, bw = _blocks(h, kh, dh, ph, sh), _blocks(w, kw, dw, pw, sw)
    if bh < 1 or bw < 1:
        raise RuntimeError(f"Given input with spatial size ({h}, {w}), kernel_size=({kh}, {kw}), dilation=({dh}, "
                           f"{dw}), padding=({ph}, {pw}), calculated shape of the array of sliding blocks as ({bh}, "
                           f"{bw}), but its components must be at least one.")
    padded = xp.pad(self, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    cols = _empty_like(self, (n, c, kh, kw, bh, bw))
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = padded[:, :, i * dh:i * dh + sh * (bh - 1) + 1:sh, j * dw:j * dw + sw * (bw - 1) + 1:sw]
    return cols.reshape(n, c * kh * kw, bh * bw)


def _col2im_kernel(self, output_size, kernel_size, dilation, padding, stride):
    (h, w), (kh, kw), (dh, dw), (ph, pw), (sh, sw) = output_size, kernel_size, dilation, padding, stride
    n, ckk, length = self.shape
    bh, bw = _blocks(h, kh, dh, ph, sh), _blocks(w, kw, dw, pw, sw)
    if ckk % (kh * kw):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
                           f"but got input.size(1)={ckk} and kernel_size=({kh}, {kw})")
    if bh * bw != length:
        raise RuntimeError(f"Given output_size=({h}, {w}), kernel_size=({kh}, {kw}), dilation=({dh}, {dw}), "
                           f"padding=({ph}, {pw}), stride=({sh}, {sw}), expected size of input's dimension 2 to match "
                           f"the calculated number of sliding blocks {bh} * {bw} = {bh * bw}, but got "
                           f"input.size(2)={length}.")
    c = ckk // (kh * kw)
    cols = self.reshape(n, c, kh, kw, bh, bw)
    padded = _zeros_like(self, (n, c, h + 2 * ph, w + 2 * pw))
    for i in range(kh):
        for j in range(kw):
            padded[:, :, i * dh:i * dh + sh * (bh - 1) + 1:sh, j * dw:j * dw + sw * (bw - 1) + 1:sw] += cols[:, :, i, j]
    return padded[:, :, ph:ph + h, pw:pw + w].copy()


col2im_op = defop("col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, int[2] padding, "
                  "int[2] stride) -> Tensor", _unbatched(_col2im_kernel, 2, 3), node="Col2ImBackward0",
                  self=lambda grad, kernel_size, dilation, padding, stride: im2col_op(grad, kernel_size, dilation,
                                                                                     padding, stride))
im2col_op = defop("im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor",
                  _unbatched(_im2col_kernel, 3, 4), node="Im2ColBackward0",
                  self=lambda grad, self_sizes, kernel_size, dilation, padding, stride: col2im_op(
                      grad, list(self_sizes[-2:]), kernel_size, dilation, padding, stride))


def _pairs(*values):
    from .nn_conv import _ntuple   # (torch.nn's op families load on first use: see _ops._LAZY_OP_MODULES)
    return [list(_ntuple(v, 2)) for v in values]


@overridable(defaults_by_keyword=True)
def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """torch.nn.functional.unfold: the sliding blocks of a batched (N, C, H, W) or unbatched (C, H, W) image,
    as columns: (N, C * kh * kw, L)."""
    return im2col_op(input, *_pairs(kernel_size, dilation, padding, stride))

@overridable(defaults_by_keyword=True)
def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """torch.nn.functional.fold: the inverse layout of :func:`unfold`, overlapping values summed:
    (N, C * kh * kw, L) -> (N, C, H, W)."""
    return col2im_op(input, *_pairs(output_size, kernel_size, dilation, padding, stride))
