"""torch.linalg."""
from .ops.linalg import det, inv, solve, matrix_norm, eig, eigh, eigvals, svd, qr, cholesky, matrix_rank, pinv, \
    slogdet, matrix_power, cross  # noqa: F401
from .ops.reduction import vector_norm
from ._checks import LinAlgError  # noqa: F401
from .ops.reduction import norm as _tensor_norm


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """Vector 2-norm of the flattened input by default; matrix norms when ord is a string and dim has 2 dims."""
    if isinstance(ord, str):
        if A.dim() < 2:
            raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
        return matrix_norm(A, ord, dim if dim is not None else (-2, -1), keepdim)
    if ord is None:
        return vector_norm(A, 2, dim, keepdim)
    if dim is not None and isinstance(dim, (tuple, list)) and len(dim) == 2 or (dim is None and A.dim() == 2):
        return matrix_norm(A, ord, dim if dim is not None else (-2, -1), keepdim)
    return vector_norm(A, ord, dim, keepdim)


def inv_ex(A):
    from . import zeros
    return inv(A), zeros((), dtype=__import__("glasstorch").int32)
