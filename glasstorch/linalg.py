"""torch.linalg: determinants, inverses, solves, decompositions and norms.

Each function parses torch.linalg's arguments and calls the primitive ops of
``glasstorch/ops/linalg.py`` (``aten._linalg_det``, ``aten.linalg_inv_ex``, ``aten._linalg_svd``...),
whose nodes are torch's (LinalgDetBackward0, LinalgInvExBackward0, LinalgSvdBackward0...).
Composites (``matrix_norm``, ``matrix_rank``, ``norm``) are written as torch writes them, so their
graphs are torch's too.
"""
import math

from . import return_types
from ._array import xp
from .autograd.grad_mode import no_grad
from ._seam import overridable
from ._tensor import Tensor, _wrap_dim
from ._dtype import float64
from ._prims_common.wrappers import out_wrapper as _out_wrapper, OUT_RULES as _OUT_RULES
from .ops.creation import tensor
from .ops.linalg import (LinAlgError, det, matrix_power, linalg_slogdet_op, linalg_inv_ex_op,  # noqa: F401
                         linalg_solve_ex_op, linalg_solve_triangular_op, linalg_eig_op, linalg_eigh_op, linalg_svd_op,
                         linalg_qr_op, linalg_cholesky_ex_op, linalg_pinv_op, linalg_cross_op, multi_dot,
                         matrix_exp, householder_product, geqrf)
from .ops.reduction import vector_norm, amax, amin, sum as _sum  # noqa: F401

__all__ = ["LinAlgError", "det", "slogdet", "inv", "inv_ex", "solve", "solve_ex", "solve_triangular", "eig",
           "eigvals", "eigh", "eigvalsh", "svd", "svdvals", "qr", "cholesky", "cholesky_ex", "pinv", "matrix_rank",
           "matrix_power", "matrix_norm", "vector_norm", "norm", "cross", "multi_dot", "matrix_exp",
           "householder_product"]


@overridable
def slogdet(A):
    """(sign, log|det|) of a (batch of) square matrices: torch.return_types.linalg_slogdet."""
    sign, logabsdet, _, _ = linalg_slogdet_op(A)
    return return_types.linalg_slogdet((sign, logabsdet))


@overridable
def inv(A):
    """The inverse of a (batch of) square matrices; LinAlgError names the zero pivot of a singular one."""
    return linalg_inv_ex_op(A, check_errors=True)[0]


@overridable
def inv_ex(A, *, check_errors=False):
    """(inverse, info): info > 0 marks a singular matrix (its inverse is then not meaningful)."""
    return return_types.linalg_inv_ex(linalg_inv_ex_op(A, check_errors=check_errors))


@overridable
def solve(A, B, *, left=True):
    """X with A X = B (X A = B when ``left=False``); B may be a (batch of) vector(s)."""
    return linalg_solve_ex_op(A, B, left=left, check_errors=True)[0]


@overridable
def solve_ex(A, B, *, left=True, check_errors=False):
    """(result, info) of solve: info > 0 marks a singular A."""
    result, _, _, info = linalg_solve_ex_op(A, B, left=left, check_errors=check_errors)
    return return_types.linalg_solve_ex((result, info))


@overridable
def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """X with A X = B for a triangular A (only its ``upper`` or lower triangle is read)."""
    return linalg_solve_triangular_op(A, B, upper=upper, left=left, unitriangular=unitriangular)


@overridable
def eig(A):
    """Eigenvalues and eigenvectors of a general square matrix (complex):
    torch.return_types.linalg_eig."""
    return return_types.linalg_eig(linalg_eig_op(A))


@overridable
def eigvals(A):
    """The eigenvalues of a general square matrix (complex)."""
    return linalg_eig_op(A)[0]


@overridable
def eigh(A, UPLO="L"):
    """Eigenvalues (ascending) and orthonormal eigenvectors of a symmetric matrix, from its lower
    (``UPLO='L'``) or upper triangle: torch.return_types.linalg_eigh."""
    return return_types.linalg_eigh(linalg_eigh_op(A, UPLO, True))


@overridable
def eigvalsh(A, UPLO="L"):
    """The eigenvalues of a symmetric matrix (the eigenvectors are computed too when a gradient
    will be needed, as torch does)."""
    return linalg_eigh_op(A, UPLO, A.requires_grad)[0]


@overridable
def svd(A, full_matrices=True, *, driver=None):
    """A = U diag(S) Vh: torch.return_types.linalg_svd."""
    return return_types.linalg_svd(linalg_svd_op(A, full_matrices, True, driver=driver))


@overridable
def svdvals(A, *, driver=None):
    """The singular values, descending."""
    return linalg_svd_op(A, False, A.requires_grad, driver=driver)[1]


@overridable
def qr(A, mode="reduced"):
    """A = Q R ('reduced', 'complete', or 'r' for R alone): torch.return_types.linalg_qr."""
    return return_types.linalg_qr(linalg_qr_op(A, mode))


@overridable
def cholesky(A, *, upper=False):
    """L with A = L L^T for a symmetric positive-definite A (U = L^T when ``upper``)."""
    return linalg_cholesky_ex_op(A, upper=upper, check_errors=True)[0]


@overridable
def cholesky_ex(A, *, upper=False, check_errors=False):
    """(L, info): info > 0 is the order of the first leading minor that is not positive-definite."""
    return return_types.linalg_cholesky_ex(linalg_cholesky_ex_op(A, upper=upper, check_errors=check_errors))


def _tolerance(value, A):
    """A tolerance given as a number: a float64 0-d tensor on ``A``'s device, as torch's ``at::full``."""
    return value if value is None or isinstance(value, Tensor) else tensor(float(value), dtype=float64,
                                                                           device=A.device)


@overridable
def pinv(A, *, atol=None, rtol=None, hermitian=False):
    """The Moore-Penrose pseudo-inverse (singular values below max(atol, rtol * largest) are 0)."""
    return linalg_pinv_op(A, atol=_tolerance(atol, A), rtol=_tolerance(rtol, A), hermitian=hermitian)


@overridable
def matrix_rank(A, *, atol=None, rtol=None, hermitian=False):
    """How many singular values exceed max(atol, rtol * largest) (torch's composite; rtol defaults
    to eps * max(m, n), or to 0 when only a positive atol is given)."""
    if not A.is_floating_point():
        raise RuntimeError("This function doesn't handle types other than float and double")
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else float(xp.finfo(A._data.dtype).eps) * max(A.shape[-2:])
    with no_grad():
        S = eigvalsh(A).abs() if hermitian else svdvals(A)
        tol = rtol * (amax(S, -1, True) if S.shape[-1] else S.sum(-1, keepdim=True))
        if atol is not None:
            tol = tol.clamp(min=atol)
        return _sum(S > tol, -1)


def _matrix_dims(fn, A, dim):
    if A.dim() < 2:
        raise RuntimeError(f"linalg.{fn}: The input tensor A must have at least 2 dimensions.")
    d0, d1 = (_wrap_dim(d, A.dim()) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.{fn}: dims must be different. Got ({dim[0]}, {dim[1]})")
    return d0, d1


@overridable
def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """Matrix norms, as torch composes them: 'fro' a vector 2-norm over both dims; 'nuc' the sum of
    the singular values; 2/-2 the largest/smallest singular value; 1/-1 (inf/-inf) the max/min
    over columns (rows) of the absolute sums."""
    d0, d1 = _matrix_dims("matrix_norm", A, dim)
    if not (A.is_floating_point() or A.dtype.is_complex):
        raise RuntimeError(f"linalg.matrix_norm: Expected a floating point or complex tensor as input. Got "
                           f"{A.dtype._legacy}")
    if dtype is not None:
        A = A.to(dtype)
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        # the two dims moved last (torch's permute), then the singular values
        permutation = [i for i in range(A.dim()) if i not in (d0, d1)] + [d0, d1]
        S = svdvals(A.permute(permutation))
        result = S.sum(-1, keepdim=keepdim) if ord == "nuc" else (amax if ord == 2 else amin)(S, -1, keepdim)
        if keepdim:
            reverse = [permutation.index(i) for i in range(A.dim())]
            result = result.unsqueeze(-1).permute(reverse)
        return result
    if ord in (1, -1, math.inf, -math.inf):
        # the max/min over one dim of the absolute sums over the other (torch's order of the two calls)
        rows, cols = (d0, d1) if ord in (1, -1) else (d1, d0)
        if not keepdim and rows < cols:
            cols -= 1
        return (amax if ord > 0 else amin)(vector_norm(A, 1.0, rows, keepdim), cols, keepdim)
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


@overridable
def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A vector norm or a matrix norm, chosen as torch does: a string ord or a 2-tuple dim (or a
    2-D input with an ord) means a matrix norm; no ord and no dim, the 2-norm of the flattened input."""
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) == 2:
            return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
        return vector_norm(A, 2.0 if ord is None else ord, dims, keepdim, dtype=dtype)
    if ord is None:
        return vector_norm(A, 2.0, None, keepdim, dtype=dtype)
    if isinstance(ord, str) or A.dim() == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    if A.dim() != 1:
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                           f"{A.dim()}D.")
    return vector_norm(A, ord, None, keepdim, dtype=dtype)


@overridable
def cross(input, other, *, dim=-1):
    """The cross product of 3-vectors along ``dim``, broadcasting the other dims."""
    return linalg_cross_op(input, other, dim=dim)


@overridable
def matmul(input, other):
    """torch.linalg.matmul: torch.matmul."""
    from .ops.linalg import matmul as _matmul
    return _matmul(input, other)


@overridable
def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """torch.linalg.diagonal: torch.diagonal with the matrix dims last by default (a view)."""
    return A.diagonal(offset, dim1, dim2)


@overridable
def vecdot(x, y, *, dim=-1):
    """torch.linalg.vecdot: the dot product along ``dim``, conjugating ``x`` (``(x.conj() * y).sum(dim)``)."""
    if not (x.is_floating_point() or x.is_complex()):
        raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as input. Got "
                           f"{x.dtype._legacy}")
    if x.dtype is not y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
                           f"{x.dtype._legacy} and y of type {y.dtype._legacy} instead")
    return ((x.conj() if x.is_complex() else x) * y).sum(dim)


@overridable
def vander(x, *, N=None):
    """torch.linalg.vander: the Vandermonde matrix of the last dim, increasing powers x^0 ... x^(N-1)
    (ones, then the cumulative product of x repeated: torch's composite)."""
    from . import _dtype
    t = x.dtype
    if not (t in (_dtype.float32, _dtype.float64, _dtype.complex64, _dtype.complex128) or
            (not t.is_floating_point and not t.is_complex and t is not _dtype.bool)):
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer tensors, but got {t._legacy}")
    x_ = x.unsqueeze(-1) if x.ndim == 0 else x
    shape = list(x_.shape)
    n = shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    from .ops.joining import cat
    result = x_.unsqueeze(-1).expand(*shape, n - 1).cumprod(-1)
    return cat([result.new_ones(shape + [1]), result], -1)


__all__ += ["matmul", "diagonal", "vecdot", "vander"]

# out=: torch.linalg's functions take it (``torch.linalg.inv(A, out=X)``) by the rules every op's out=
# follows (glasstorch/_prims_common/wrappers.py: autograd's refusal, the dtype rule of OUT_RULES, the
# resize, the write). linalg.matrix_exp takes none, as in torch.
def _with_out(name):
    fn = globals()[name]
    if name == "multi_dot":     # (it could write into out itself: the rules come first)
        products = fn

        def multi_dot(tensors):
            return products(tensors)
        multi_dot.__doc__ = products.__doc__
        fn = multi_dot
    return _out_wrapper(fn, name=f"linalg.{name}")


for _name in __all__:
    if f"linalg.{_name}" in _OUT_RULES:
        globals()[_name] = _with_out(_name)
del _name
