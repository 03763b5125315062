"""Helpers that derivative formulas share (torch's ``FunctionsManual.cpp``), under torch's names.

Like the formulas, they are written with operators, ``.shape``/``.ndim``/``.dtype``/``.reshape``
(which arrays and Tensors both have) and aten ops, so they run on arrays in the usual backward and
on Tensors -- recording, for double backward -- when the engine asks for that. A data-dependent
branch (``prod_backward``'s "is there a zero?") reads a 0-d result with ``bool()``, which arrays
and Tensors both answer.

Dims arrive as the op got them (an int, a list, negative or not, None for "all"); ``wrap_dims``
turns them into a sorted tuple of non-negative dims, None meaning every dim.
"""
import math

from .._ops import aten
from .._tensor import Tensor, _wrap_dim, _wrap
from .._array import xp, device_type_of, to_device
from ..autograd.grad_mode import _state as _grad_state


# ---- shapes and dims -------------------------------------------------------------------------------
def wrap_dims(dim, ndim):
    """``dim`` (None, an int or a sequence; empty means all) as a sorted tuple of dims, or None."""
    if dim is None:
        return None
    if isinstance(dim, int):
        return (_wrap_dim(dim, ndim),)
    n = len(dim)
    if n == 1:
        return (_wrap_dim(dim[0], ndim),)
    if n == 0:
        return None
    return tuple(sorted(_wrap_dim(d, ndim) for d in dim))


def numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def reduced_numel(sizes, dim):
    """How many elements each output of a reduction over ``dim`` gathers (torch's ``_safe_size``)."""
    if not sizes:
        return 1
    dims = wrap_dims(dim, len(sizes))
    return numel(sizes) if dims is None else numel(sizes[d] for d in dims)


def unsqueeze_multiple(t, dims, ndim):
    """``t`` with a dim of size 1 put back at each of ``dims`` (None: all ``ndim`` dims)."""
    if dims is None:
        return t.reshape((1,) * ndim)
    for d in sorted(dims):          # (one unsqueeze per dim, as torch's: what a dispatch mode sees)
        t = aten.unsqueeze(t, d)
    return t


_ndarray = xp.ndarray


def conj(x):
    """torch's ``x.conj()`` in a formula: the conjugate of a complex ``x`` (gradients of complex
    functions are conjugate Wirtinger derivatives), ``x`` itself otherwise -- one dtype test, so
    real formulas pay nothing else. ``x`` is an array (numpy dtype: ``kind``), a Tensor or a number."""
    if type(x) is _ndarray:              # (the usual backward: formulas on arrays)
        return aten.conj(x) if x.dtype.kind == "c" else x
    dt = getattr(x, "dtype", None)
    if dt is None:                       # a Python number (x * 2 saved the 2)
        return x.conjugate() if isinstance(x, complex) else x
    kind = getattr(dt, "kind", None)     # (a NumPy dtype's; a glasstorch dtype has is_complex)
    if kind == "c" if kind is not None else dt.is_complex:
        return aten.conj(x)
    return x


# the generated backward (``_ops_codegen.inline_formula``) asks this inline where a formula calls
# conj, and calls conj only where it fails: the usual real array costs no frame
conj._array_identity = "type({0}) is _ndarray and {0}.dtype.kind != 'c'"


def sgn_backward(grad, self, result):
    """torch's ``sgn_backward``: 0 for a real input; for complex z (result = z / |z|), the part of the
    gradient across the unit circle, (grad - sgn Re(conj(sgn) grad)) / |z|, and 0 at z = 0."""
    if not is_complex(self):
        return aten.zeros_like(grad)
    magnitude = aten.abs(self)
    at_zero = magnitude == 0
    along = aten.view_as_real(conj(result) * grad)[..., 0]
    return (grad - result * along) / (magnitude + at_zero) * (~at_zero)


def not_implemented(name):
    """The formula of an input torch declares without a derivative (derivatives.yaml's
    ``not_implemented("name")``): using it raises torch's NotImplementedError."""
    def formula(grad):
        raise NotImplementedError(f"the derivative for '{name}' is not implemented.")
    formula.__name__ = f"{name}_not_implemented"
    return formula


def sum_to(grad, shape):
    """Sum a broadcast gradient back to ``shape`` (torch's ``at::sum_to``): over the leading dims
    the broadcast added and the dims that were 1."""
    shape = tuple(shape)
    if tuple(grad.shape) == shape:
        return grad
    lead = grad.ndim - len(shape)
    dims = list(range(lead)) + [i + lead for i, s in enumerate(shape) if s == 1 and grad.shape[i + lead] != 1]
    if dims:
        grad = aten.sum.dim_IntList(grad, dims, True)
    if lead or tuple(grad.shape) != shape:
        grad = grad.reshape(shape)
    return grad


def restore_reduced_dims(output, dim, keepdim):
    """A reduction's output reshaped so that it broadcasts against its input again."""
    if keepdim:
        return output
    dims = () if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    total = output.ndim + len(dims)
    shape = [0] * total
    for d in dims:
        shape[d + total if d < 0 else d] = 1
    sizes = iter(output.shape)
    return output.reshape(tuple(s if s else next(sizes) for s in shape))


def _divide(a, b):
    """a / b for Python numbers, as C++ divides doubles (a / 0 is inf, not an exception)."""
    if b == 0:
        return math.nan if a == 0 else math.copysign(math.inf, a)
    return a / b


# ---- sums and means --------------------------------------------------------------------------------
def sum_backward(grad, sizes, dim, keepdim):
    """The gradient of a sum over ``dim``: ``grad`` spread back over the input's ``sizes``."""
    if not keepdim and sizes:
        dims = wrap_dims(dim, len(sizes))
        if dims is not None:
            grad = unsqueeze_multiple(grad, dims, len(sizes))
    return aten.expand(grad, list(sizes))


def mean_backward(grad, sizes, dim, numel, keepdim):
    return sum_backward(grad, sizes, dim, keepdim) / (numel if wrap_dims(dim, len(sizes)) is None
                                                      else reduced_numel(sizes, dim))


def nansum_backward(grad, self, dim, keepdim):
    return sum_backward(grad, self.shape, dim, keepdim) * aten.logical_not(aten.isnan(self))


# ---- selecting reductions (max, amax, median...) -------------------------------------------------------
def evenly_distribute_backward(grad, input, value):
    """max()/min()/median() over everything: the gradient shared evenly by the elements equal to
    the result (NaNs, when the result is NaN). Written as torch's CPU kernel writes it -- zeros, with
    the share filled in where the mask holds -- so that a result changed since (``.data.mul_()``),
    which no element equals any more, gets zeros and not ``0 * (grad / 0)`` = NaN."""
    mask = aten.isnan(input) if bool(aten.isnan(value)) else input == value
    return aten.masked_fill.Tensor(aten.zeros_like(input), mask, grad / aten.sum(mask))


def scale_grad_by_count(grad, mask, dim):
    return (grad / aten.sum.dim_IntList(mask, [] if dim is None else dim, True)) * mask


def gather_with_keepdimed_indices(input, dim, indices, keepdim):
    if not keepdim:
        d = _wrap_dim(dim, indices.ndim + 1)
        indices = unsqueeze_multiple(indices, (d,), indices.ndim + 1)
        out = aten.gather(input, dim, indices)
        return out.reshape(tuple(s for i, s in enumerate(out.shape) if i != d))
    return aten.gather(input, dim, indices)


# ---- products ---------------------------------------------------------------------------------------
def _ones_like_slice(inp, dim):
    """Ones shaped as ``inp`` with ``dim`` of size 1."""
    return aten.zeros_like(aten.slice(inp, dim, 0, 1)) + 1


def prod_safe_zeros_backward(grad, inp, dim):
    """The product of all the other elements along ``dim``, exact when some are zero: an exclusive
    cumprod from each end (for [a, b, c]: [1, a, ab] * [bc, c, 1])."""
    if numel(inp.shape) == 0:
        return aten.expand(grad, list(inp.shape))
    n = inp.shape[dim]
    if n == 1:
        return grad
    ones = _ones_like_slice(inp, dim)
    exclusive_normal = aten.cumprod(aten.cat([ones, aten.slice(inp, dim, 0, n - 1)], dim), dim)
    narrow_reverse = aten.flip(aten.slice(inp, dim, 1, n), [dim])
    exclusive_reverse = aten.flip(aten.cumprod(aten.cat([ones, narrow_reverse], dim), dim), [dim])
    return grad * (exclusive_normal * exclusive_reverse)


def prod_backward(grad, input, result, dim=None, keepdim=False):
    """d prod / d x_i = the product of the others: result / x_i when no element is zero."""
    if input.ndim == 0:
        return grad
    if dim is None:
        if not bool(aten.any(input == 0)):
            return grad * (result / input)
        return prod_safe_zeros_backward(grad, input.reshape((-1,)), 0).reshape(tuple(input.shape))
    dim = _wrap_dim(dim, input.ndim)
    if not keepdim:
        grad, result = unsqueeze_multiple(grad, (dim,), input.ndim), unsqueeze_multiple(result, (dim,), input.ndim)
    if not bool(aten.any(input == 0)):
        return grad * (result / input)
    return prod_safe_zeros_backward(grad, input, dim)


# ---- statistics -------------------------------------------------------------------------------------
def var_backward(grad, self, dim, correction, keepdim):
    """d var = 2 (x - mean) / (n - correction). With no degrees of freedom left (n <= correction)
    over the whole tensor, torch gives nan where x equals the mean and inf elsewhere."""
    correction = 1 if correction is None else correction
    if self.ndim == 0 or dim is None:
        dof = numel(self.shape) - correction
        if dof <= 0:
            infinite = aten.zeros_like(self) + math.inf
            return grad * aten.masked_fill(infinite, self == aten.mean(self), math.nan)
        return (2.0 / dof) * grad * (self - aten.mean(self))
    dims = wrap_dims(dim, self.ndim)
    if not keepdim and self.ndim > 1:
        grad = unsqueeze_multiple(grad, dims, self.ndim)
    factor = _divide(2.0, reduced_numel(self.shape, dims) - correction)
    return factor * grad * (self - aten.mean.dim(self, [] if dims is None else list(dims), True))


def std_backward(result, grad, self, dim, correction, keepdim):
    """std = sqrt(var): var's gradient of grad / (2 std), taken as 0 where std is 0."""
    grad_var = aten.masked_fill(grad / (result * 2), result == 0, 0)
    return var_backward(grad_var, self, dim, correction, keepdim)


def var_mean_backward(grad_var, grad_mean, self, dim, correction, keepdim):
    gself = None
    if grad_var is not None:
        gself = var_backward(grad_var, self, dim, correction, keepdim)
    if grad_mean is not None:
        aux = mean_backward(grad_mean, self.shape, dim, numel(self.shape), keepdim)
        gself = aux if gself is None else gself + aux
    return gself


def std_mean_backward(grad_std, grad_mean, self, std, dim, correction, keepdim):
    gself = None
    if grad_std is not None:
        gself = std_backward(std, grad_std, self, dim, correction, keepdim)
    if grad_mean is not None:
        aux = mean_backward(grad_mean, self.shape, dim, numel(self.shape), keepdim)
        gself = aux if gself is None else gself + aux
    return gself


# ---- norms, logsumexp, softmax -----------------------------------------------------------------------
def norm_backward(grad, self, p, norm, dim, keepdim):
    """The gradient of the p-norm over ``dim``, formula for formula torch's (so its double backward
    and its choices at a zero norm are torch's too)."""
    ndim = self.ndim
    if not keepdim and ndim:
        dims = wrap_dims(dim, ndim)
        grad, norm = unsqueeze_multiple(grad, dims, ndim), unsqueeze_multiple(norm, dims, ndim)
    if p == 0:
        return None                 # a count of nonzeros: no gradient flows
    if p == 1:
        return aten.sgn(self) * grad
    if p == 2:
        return grad * aten.masked_fill(self / norm, norm == 0, 0)
    if math.isinf(p):
        self_abs = aten.abs(self)
        mask = (self_abs == norm) | aten.isnan(self_abs)
        return aten.sgn(self) * ((grad / aten.sum.dim_IntList(mask, [] if dim is None else dim, True)) * mask)
    if p < 1:
        self_scaled = aten.sgn(self) * aten.masked_fill(aten.abs(self) ** (p - 1), self == 0, 0)
        return self_scaled * grad * norm ** (1 - p)
    if p < 2:
        self_scaled = aten.sgn(self) * aten.abs(self) ** (p - 1)
    else:
        self_scaled = self * aten.abs(self) ** (p - 2)
    return self_scaled * aten.masked_fill(grad / norm ** (p - 1), norm == 0, 0)


def logsumexp_backward(grad, self, result, dim, keepdim):
    if not keepdim and self.ndim:
        dims = wrap_dims(dim, self.ndim)
        grad, result = unsqueeze_multiple(grad, dims, self.ndim), unsqueeze_multiple(result, dims, self.ndim)
    return grad * aten.exp(self - result)


def softmax_double_backward(grad, grad_output, dim, output):
    return grad_output * grad - aten.sum.dim_IntList(output * grad_output, [dim], True) * grad - \
        grad_output * aten.sum.dim_IntList(output * grad, [dim], True)


# ---- scans -------------------------------------------------------------------------------------------
def reversed_cumsum(w, dim):
    return aten.flip(aten.cumsum(aten.flip(w, [dim]), dim), [dim])


def cumsum_backward(grad, dim):
    if numel(grad.shape) <= 1 or grad.shape[dim] == 1:
        return grad
    return reversed_cumsum(grad, dim)


def cumprod_backward(grad, input, dim, output):
    """d out_j / d x_k = prod_{i <= j, i != k} x_i. Without zeros that is out_j / x_k (one reversed
    cumsum); with zeros, torch's exact O(n^2) form: for each k, the products with x_k left out."""
    if numel(input.shape) <= 1:
        return grad
    dim = _wrap_dim(dim, input.ndim)
    n = input.shape[dim]
    if n == 1:
        return grad
    if not bool(aten.any(input == 0)):
        return reversed_cumsum(output * grad, dim) / input
    ones = _ones_like_slice(input, dim)
    parts = []
    for k in range(n):
        if k == 0:
            omitted = aten.cat([ones, aten.cumprod(aten.slice(input, dim, 1, n), dim)], dim)
        else:
            until_k = aten.prod.dim_int(aten.slice(input, dim, 0, k), dim, True)
            if k == n - 1:
                omitted = until_k
            else:
                omitted = aten.cat([until_k, until_k * aten.cumprod(aten.slice(input, dim, k + 1, n), dim)], dim)
        parts.append(aten.sum.dim_IntList(aten.slice(grad, dim, k, n) * omitted, [dim], True))
    return aten.cat(parts, dim)


# ---- linear algebra -------------------------------------------------------------------------------------
def is_complex(x):
    return bool(getattr(x.dtype, "is_complex", False) or getattr(x.dtype, "kind", "") == "c")


def to_copy_backward(grad, self_dtype, self_device):
    """torch's ``_to_copy_backward``: the gradient of a dtype/device copy brought back to the input's
    device (only the real part flows back to a real input from a complex copy); the engine casts it
    to the input's dtype, as for any op whose input had another."""
    if is_complex(grad) and not self_dtype.is_complex:
        grad = grad.real
    if device_type_of(getattr(grad, "_data", grad)) != self_device.type:
        grad = aten._to_copy(grad, device=self_device)
    return grad


def mH(x):
    """The conjugate transpose of a (batch of) matrices (glasstorch Tensors have no complex autograd
    yet, so a complex ``x`` is an array here)."""
    t = aten.transpose.int(x, -2, -1)
    return t.conj() if is_complex(x) else t


def identity_like(x):
    """The identity matrices of the batch ``x`` (square) -- a constant."""
    return aten.diag_embed(aten.zeros_like(aten.diagonal(x, 0, -2, -1)) + 1)


def _eps(x):
    return float(xp.finfo(getattr(x.dtype, "numpy_dtype", x.dtype)).eps)


def _grad_mode():
    """torch's GradMode inside a formula: on while the backward records (create_graph=True)."""
    return _grad_state.enabled


def linalg_det_backward(grad, det, A, LU, pivots):
    """The gradient of det(A): grad * det * A^{-H}, torch's way. The usual backward solves
    A^H X = grad * det * I (an exactly singular matrix -- a zero pivot -- has det 0 and so gets 0, as
    in torch); the recording one uses the adjugate from an SVD when some |det| is tiny, so that
    double backward is right at singular matrices too."""
    if numel(A.shape) == 0:
        return None
    d_diag = grad * det
    eye = identity_like(A)
    d = d_diag.reshape(tuple(d_diag.shape) + (1, 1)) * eye
    if not _grad_mode():
        singular = (det == 0).reshape(tuple(det.shape) + (1, 1))
        if bool(aten.any(singular)):
            A = A * aten.logical_not(singular) + eye * singular     # solvable; d is 0 there
        return aten._linalg_solve_ex(mH(A), d)[0]
    if bool(aten.any(aten.abs(det) < 100 * _eps(det))):
        U, S, Vh = aten._linalg_svd(A, False, True)
        alpha = (aten._linalg_det(U)[0] * aten._linalg_det(Vh)[0]) * grad
        D = prod_safe_zeros_backward(alpha.reshape(tuple(alpha.shape) + (1,)), S, S.ndim - 1)
        return (U * D.reshape(tuple(D.shape[:-1]) + (1, D.shape[-1]))) @ Vh
    return aten._linalg_solve_ex(mH(A), d)[0]


def slogdet_backward(grad_sign, grad_logabsdet, A, sign, LU, pivots):
    """For real A only logabsdet carries a gradient: grad * A^{-H}."""
    if grad_logabsdet is None:
        return None
    g = grad_logabsdet
    d = g.reshape(tuple(g.shape) + (1, 1)) * identity_like(A)
    return aten._linalg_solve_ex(mH(A), d)[0]


def is_vector_rhs(A, B):
    """torch's linalg_solve_is_vector_rhs: B is a (batch of) vector(s), not matrices."""
    return B.ndim == 1 or (A.ndim - 1 == B.ndim and tuple(B.shape) == tuple(A.shape[:-1]))


def linalg_solve_backward(gX, X, A, LU, pivots, left, output_mask):
    """X = A^{-1} B:  gB = A^{-H} gX,  gA = -gB X^H (X A = B: gA = -X^H gB)."""
    vector = is_vector_rhs(LU, X)
    gX_ = gX.reshape(tuple(gX.shape) + (1,)) if vector else gX
    gB_ = aten._linalg_solve_ex(mH(A), gX_, left=left)[0]
    gA = None
    if output_mask[0]:
        X_ = X.reshape(tuple(X.shape) + (1,)) if vector else X
        gA = -(gB_ @ mH(X_)) if left else -(mH(X_) @ gB_)
    gB = None
    if output_mask[1]:
        gB = gB_.reshape(tuple(gB_.shape[:-1])) if vector else gB_
    return gA, gB


def linalg_solve_triangular_backward(grad, A, X, upper, left, unitriangular, output_mask):
    """X = A^{-1} B with A triangular: gB = A^{-H} gX, gA the triangle of -gB X^H."""
    G_B = aten.linalg_solve_triangular(mH(A), grad, upper=not upper, left=left, unitriangular=unitriangular)
    G_A = None
    if output_mask[0]:
        G_A = -(G_B @ mH(X)) if left else -(mH(X) @ G_B)
        G_A = aten.triu(G_A, int(unitriangular)) if upper else aten.tril(G_A, -int(unitriangular))
    return G_A, (G_B if output_mask[1] else None)


def cholesky_solve_backward(grad, input2, result, upper, output_mask):
    """X = A^{-1} B with A = L L^T from its factor: gB = A^{-1} gX; gL = -(gB X^H + X gB^H) L
    (upper: -U (gB X^H + X gB^H)), not restricted to the triangle (torch's cholesky_solve_backward)."""
    G_B = aten.cholesky_solve(grad, input2, upper)
    G_L = None
    if output_mask[1]:
        common = G_B @ mH(result)
        common = common + mH(common)
        G_L = -(input2 @ common) if upper else -(common @ input2)
    return (G_B if output_mask[0] else None), G_L


def _off_diagonal_one(E):
    """E (whose diagonal is 0) with ones on the diagonal: a divisor that leaves off-diagonal terms."""
    return E + identity_like(E)


def linalg_eig_backward(gL, gV, L, V, is_hermitian):
    """torch's linalg_eig_backward (arXiv:1701.00392, eq. 4.77), for real symmetric matrices
    (is_hermitian) and real matrices with real eigenvalues."""
    if gL is None and gV is None:
        return None
    if gV is None:
        if is_hermitian:
            return (V * gL.reshape(tuple(gL.shape[:-1]) + (1, gL.shape[-1]))) @ mH(V)
        return aten._linalg_solve_ex(mH(V), gL.reshape(tuple(gL.shape) + (1,)) * mH(V))[0]
    VhgV = mH(V) @ gV
    if is_hermitian:
        VhgV = 0.5 * (VhgV - mH(VhgV))
    else:
        VhgV = VhgV - mH(V) @ (V * aten.diagonal(VhgV, 0, -2, -1).reshape(
            tuple(VhgV.shape[:-2]) + (1, VhgV.shape[-1])))
    n = L.shape[-1]
    E = L.reshape(tuple(L.shape[:-1]) + (1, n)) - L.reshape(tuple(L.shape) + (1,))
    gA = VhgV / _off_diagonal_one(E)
    if gL is not None:      # the diagonal is gL
        gA = gA - aten.diag_embed(aten.diagonal(gA, 0, -2, -1)) + aten.diag_embed(gL)
    if is_hermitian:
        return V @ (gA @ mH(V))
    return aten._linalg_solve_ex(mH(V), gA @ mH(V))[0]


def svd_backward(gU, gS, gVh, U, S, Vh):
    """torch's svd_backward (real case; assumes distinct singular values)."""
    if gS is None and gU is None and gVh is None:
        return None
    m, n = U.shape[-2], Vh.shape[-1]
    k = S.shape[-1]
    S_row = S.reshape(tuple(S.shape[:-1]) + (1, k))
    S_col = S.reshape(tuple(S.shape) + (1,))
    if gU is None and gVh is None:      # svdvals: U diag(gS) Vh
        gS_ = gS
        return U @ (gS_.reshape(tuple(gS_.shape) + (1,)) * Vh) if m >= n else \
            (U * gS_.reshape(tuple(gS_.shape[:-1]) + (1, k))) @ Vh
    UhgU = (lambda A: A - mH(A))(mH(U) @ gU) if gU is not None else None
    VhgV = (lambda A: A - mH(A))(Vh @ mH(gVh)) if gVh is not None else None
    S2 = S * S
    E = _off_diagonal_one(S2.reshape(tuple(S2.shape[:-1]) + (1, k)) - S2.reshape(tuple(S2.shape) + (1,)))
    if gU is not None and gVh is not None:
        gA = (UhgU * S_row + S_col * VhgV) / E
    elif gU is not None:
        gA = (UhgU / E) * S_row
    else:
        gA = S_col * (VhgV / E)
    if gS is not None:
        gA = gA + aten.diag_embed(gS)
    if m > n and gU is not None:
        gA = U @ gA
        gUSinv = gU / S_row
        gA = gA + gUSinv - U @ (mH(U) @ gUSinv)
        return gA @ Vh
    if m < n and gVh is not None:
        gA = gA @ Vh
        SinvgVh = gVh / S_col
        gA = gA + SinvgVh - (SinvgVh @ mH(Vh)) @ Vh
        return U @ gA
    return U @ (gA @ Vh) if m >= n else (U @ gA) @ Vh


def linalg_qr_backward(gQ, gR, Q, R, mode):
    """torch's linalg_qr_backward (real case)."""
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please "
                           "use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
    m, n = Q.shape[-2], R.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    if gQ is None and gR is None:
        return None
    if gQ is not None:
        gA = gR @ mH(R) - mH(Q) @ gQ if gR is not None else -(mH(Q) @ gQ)
    else:
        gA = gR @ mH(R)
    if m >= n:
        triu = aten.triu(gA, 0)
        sym = triu + mH(triu)
        sym = sym - 0.5 * aten.diag_embed(aten.diagonal(sym, 0, -2, -1))
        gA = Q @ sym
        if gQ is not None:
            gA = gA + gQ
        return aten.linalg_solve_triangular(mH(R), gA, upper=False, left=False)
    skew = aten.tril(-gA - mH(-gA), 0)
    gA = Q @ skew
    gA = aten.linalg_solve_triangular(mH(aten.slice(R, -1, 0, m)), gA, upper=False, left=False)
    zeros = aten.zeros_like(aten.slice(R, -1, m, n))
    gA = aten.cat([gA, zeros], -1)
    if gR is not None:
        gA = gA + Q @ gR
    return gA


def cholesky_backward(gL, upper, L):
    """torch's cholesky_backward: gA = L^{-H} phi(L^H gL) L^{-1}, symmetrised."""
    L_ = mH(L) if upper else L
    gL_ = mH(gL) if upper else gL
    gA = aten.tril(mH(L_) @ gL_, 0)
    gA = 0.5 * (gA + mH(aten.tril(gA, -1)))
    gA = aten.linalg_solve_triangular(mH(L_), gA, upper=True, left=True)
    return aten.linalg_solve_triangular(L_, gA, upper=False, left=False)


def pinv_backward(grad, pinvA, A):
    m, n = A.shape[-2], A.shape[-1]
    pinvAh, gradh = mH(pinvA), mH(grad)
    if m <= n:
        K = gradh @ pinvA
        KpinvAh = K @ pinvAh
        return -mH(pinvA @ K) + KpinvAh - (A @ pinvA) @ KpinvAh + (pinvAh @ pinvA) @ (gradh - K @ A)
    K = pinvA @ gradh
    pinvAhK = pinvAh @ K
    return -mH(K @ pinvA) + ((gradh - A @ K) @ pinvA) @ pinvAh + pinvAhK - (pinvAhK @ pinvA) @ A


# ---- joining and indexing ---------------------------------------------------------------------------
def maybe_multiply(t, s):
    """``t * s`` unless ``s`` is 1 (torch's maybe_multiply: a Scalar factor, aten.mul.Scalar)."""
    return t if s == 1 else aten.mul.Scalar(t, s)

def cat_tensors_backward(grad, sizes, dim):
    """Each input's part of cat's gradient, a slice of it; an input of shape (0,) -- the legacy empty
    input cat skips, or any empty 1-d one -- gets new zeros of shape (0,), without history, as torch's
    cat_tensors_backward gives them (a double backward's gradient then needs no grad: seed 796179583387)."""
    ref = next((s for s in sizes if not (len(s) == 1 and s[0] == 0)), sizes[0])
    d = _wrap_dim(dim, len(ref))
    out, start = [], 0
    for s in sizes:
        if len(s) == 1 and s[0] == 0:
            out.append(aten.new_zeros(grad, (0,)))
            continue
        out.append(aten.slice(grad, d, start, start + s[d]))
        start += s[d]
    return out


def stack_tensors_backward(grad, count, dim):
    """stack's gradient for each of its ``count`` inputs: the gradient selected along the new dim."""
    d = _wrap_dim(dim, grad.ndim)
    return [aten.select(grad, d, i) for i in range(count)]


def repeat_backward(grad, repeats, input_shape):
    """Sum the gradient over the copies: the leading new dims first, then each repeated dim viewed as
    (repeat, size) and summed over the repeats (torch's repeat_backward)."""
    if 0 in repeats:
        return aten.new_zeros(grad, tuple(input_shape))
    lead = grad.ndim - len(input_shape)
    for _ in range(lead):
        grad = aten.sum.dim_IntList(grad, [0], False)
    grad_size, sum_dims = [], []
    for d, size in enumerate(input_shape):
        if repeats[d + lead] > 1:
            grad_size.append(repeats[d + lead])
            sum_dims.append(len(grad_size) - 1)
        grad_size.append(size)
    grad = grad.reshape(tuple(grad_size))
    return aten.sum.dim_IntList(grad, sum_dims, False) if sum_dims else grad


def index_backward(grad, self_sizes, indices):
    """The gradient of ``self[indices]``: zeros of ``self``'s shape with the gradient added at the
    indexed places (an element indexed twice gets both)."""
    return aten.index_put(aten.new_zeros(grad, tuple(self_sizes)), indices, grad, True)


def gather_backward(grad, self, dim, index):
    return aten.scatter_add(aten.new_zeros(grad, self.shape), dim, index, grad)


def index_select_backward(grad, self_sizes, dim, index):
    return aten.index_add(aten.new_zeros(grad, tuple(self_sizes)), dim, index, grad)


def masked_select_backward(grad, self, mask):
    """Zeros of the broadcast shape with the gradient scattered to the selected places."""
    shape = tuple(xp.broadcast_shapes(tuple(self.shape), tuple(mask.shape)))
    return aten.masked_scatter(aten.zeros_like(aten.expand(self, shape)), mask, grad)


def take_backward(grad, self, index):
    return aten.put(aten.zeros_like(self), index, grad, True)


# ---- as_strided --------------------------------------------------------------------------------------
def _maybe_overlapping_memory(sizes, strides):
    """Whether a geometry may reach one element twice (torch's test: dims by increasing stride, each
    stride past everything the smaller ones reach)."""
    reach = 0
    for stride, size in sorted(zip(strides, sizes)):
        if stride <= reach:
            return True
        reach += stride * (size - 1)
    return False


def _min_storage_size(sizes, strides, offset):
    return offset + 1 + sum((n - 1) * s for n, s in zip(sizes, strides))


def _positions(sizes, strides, offset):
    """The storage index of each element of a geometry, flat (int64, on the CPU)."""
    index = xp.full((), offset, "int64")
    for n, s in zip(sizes, strides):
        index = index[..., None] + xp.arange(n, dtype="int64") * s
    return index.reshape(-1)


def as_strided_backward(grad, input_geometry, size, stride, storage_offset):
    """torch's ``as_strided_backward`` (FunctionsManual.cpp): the output's gradient scattered into a
    storage -- summed where the output reached an element twice --, divided where the input's own
    geometry reaches an element more than once, and read back with the input's geometry.
    ``input_geometry``: the input's (sizes, strides, storage offset)."""
    inp_sizes, inp_strides, inp_offset = input_geometry
    storage_offset = inp_offset if storage_offset is None else storage_offset
    out_sizes, out_strides = [], []
    for i in range(len(size) - 1, -1, -1):     # (a dim of size 1 goes, an expanded one is summed over)
        if size[i] == 0:
            return aten.new_zeros(grad, list(inp_sizes))
        if size[i] == 1:
            grad = aten.squeeze.dim(grad, i)
        elif stride[i] == 0:
            grad = aten.sum.dim_IntList(grad, [i])
        else:
            out_sizes.insert(0, size[i])
            out_strides.insert(0, stride[i])
    if 0 in inp_sizes:
        return aten.new_zeros(grad, list(inp_sizes))
    kept = [(n, s) for n, s in zip(inp_sizes, inp_strides) if n != 1]     # (an expanded dim stays: it overlaps)
    kept_sizes, kept_strides = [n for n, _ in kept], [s for _, s in kept]
    shared_offset = min(inp_offset, storage_offset)
    inp_effective, out_effective = inp_offset - shared_offset, storage_offset - shared_offset
    base_size = max(_min_storage_size(kept_sizes, kept_strides, inp_effective),
                    _min_storage_size(out_sizes, out_strides, out_effective))
    storage = aten.index_add(aten.new_zeros(grad, [base_size]), 0,
                             _constant_like(grad, _positions(out_sizes, out_strides, out_effective)), grad.reshape(-1))
    if _maybe_overlapping_memory(kept_sizes, kept_strides):
        # (each element read by several of the input's: its gradient shared among them; nan where none reads)
        count = xp.bincount(_positions(kept_sizes, kept_strides, inp_effective), minlength=base_size)
        storage = storage / _constant_like(grad, count.astype(_array_of(grad).dtype))
    return aten.as_strided(storage, list(inp_sizes), list(inp_strides), inp_effective)


def _array_of(x):
    return x._data if isinstance(x, Tensor) else x


def _constant_like(like, array):
    """``array`` (made on the CPU) on ``like``'s device, as a Tensor without history when ``like`` is one."""
    kind = device_type_of(_array_of(like))
    array = array if kind == "cpu" else to_device(array, kind)
    return _wrap(array) if isinstance(like, Tensor) else array
