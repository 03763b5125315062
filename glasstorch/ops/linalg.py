"""Matrix products (mm, bmm, mv, dot and matmul's decomposition into them, as torch records it),
einsum and tensordot, and the primitive ops of torch.linalg (determinants, inverses, solves,
decompositions) with their derivatives.

The public functions of ``torch.linalg`` are in ``glasstorch/linalg.py``; this module keeps the ops
and torch's top-level linear algebra (``torch.det``, ``torch.inverse``, ``torch.svd``...).
"""
import itertools
import math
import warnings

from .. import _checks, _dtype, return_types, _warnings
from .._tensor import Tensor, _wrap_dim
from .._array import (xp, asarray, has_values, matmul as _matmul, arange_like as _arange_like,
                      zeros_like as _zeros_like, empty_like as _empty_like, full_like as _full_like, row_major,
                      column_major)
from .._ops import defop, aten, node_classes_of, Plain, MATRICES, MATRICES_KEYS
from .._array.plain_layout import matrix_product
from .._seam import overridable
from ._op import method, computed_into_self, written_into_self
from .creation import eye, zeros, tensor
from .shape import _expand_kernel
from ._derivatives import (conj, mH, linalg_det_backward, slogdet_backward, linalg_solve_backward,
                           linalg_solve_triangular_backward, cholesky_solve_backward, linalg_eig_backward, svd_backward, linalg_qr_backward,
                           cholesky_backward, pinv_backward, is_vector_rhs, is_complex, not_implemented)

__getattr__ = node_classes_of(__name__)    # (the node classes declared here, by name: TanhBackward0)

# What glasstorch (torch) has at its top level from this family; the other public functions here are
# Tensor methods only (x.view(...)) or torch.linalg's.
__all__ = ["mm", "bmm", "mv", "dot", "inner", "vdot", "matmul", "addmm", "addmv", "addmv_", "addbmm", "addr", "outer", "ger", "baddbmm",
           "einsum", "tensordot", "kron", "det", "solve", "eig", "svd", "qr", "cholesky", "cholesky_solve", "cholesky_inverse", "matrix_rank", "slogdet", "logdet",
           "matrix_power", "cross", "inverse", "pinverse", "chain_matmul", "matrix_exp", "geqrf", "orgqr"]

_DTYPE_OF = _dtype._BY_NUMPY


# ==========================================================================================================
# Products
# ==========================================================================================================
# Each product checks its operands' dtypes in its own words, as torch's kernels do (matmul's message
# then tells which of them it decomposed into): C++ type names ("float") or ScalarType names ("Float").
def _same_dtype(a, b):
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_cpp(a)} != {_cpp(b)}")


def _cpp(a):
    return _dtype.cpp_name(_DTYPE_OF[a.dtype])


def _legacy(a):
    return _DTYPE_OF[a.dtype]._legacy


_FLOAT32, _FLOAT64 = xp.dtype(xp.float32), xp.dtype(xp.float64)
_NDARRAY = xp.ndarray
_all = xp.logical_and.reduce   # (``a.all()`` without ndarray.all's Python wrapper: a bias row's test)


def _gemm(a, b):
    """a @ b for 2-D arrays, with the sign of zero that torch's BLAS (MKL) gives: a sum of products
    starts from +0 (``0 * -1`` summed is +0), except in a product over one inner index (an outer
    product, K == 1) of at least 2 x 2, which gemm writes as the bare products (-0 stays -0).
    The sign matters to what follows: atan2(-0, -1) is -pi, atan2(+0, -1) is pi; 1 / -0 is -inf."""
    sa, dt = a.shape, a.dtype
    if dt.char in "fd" and (b.dtype is dt or b.dtype == dt):
        return _real_gemm(a, b, sa[0], sa[1], b.shape[1])
    if sa[1] == 1 and sa[0] > 1 and b.shape[1] > 1 and dt.kind == "f":
        return a * b  # (M, 1) * (1, N): the products themselves
    return _matmul(a, b)


def _real_gemm(a, b, m, k, n):
    """``_gemm(a, b)`` of an (m, k) and a (k, n) matrix of one dtype, float32 or float64, whose caller knows
    that and the sizes (nn.Linear's forward, every product's backward): no array attribute read again."""
    if k == 1 and m > 1 and n > 1:
        return a * b  # (M, 1) * (1, N): the products themselves
    # the same BLAS gemm as ``a @ b`` (syrk for a @ a.T in both), through a shorter path: for a 32x32
    # float32 product ``ndarray.dot`` is ~1 us faster than the matmul ufunc, a third of the product
    if m < _LARGE_ROWS or n < _LARGE_COLUMNS:
        return a.dot(b)
    return _large_product(a, b)


# ``ndarray.dot`` fills its output with zeros before it calls gemm, which (beta = 0) zero-fills it
# again; the matmul ufunc hands gemm the new array as it is. That memset is lost time on a large
# output (interleaved, one thread, float32: 7-10 us on a 256x256 output, 17-24 us on 256x784; a
# 512x512 output with K = 16: 24 us), while on a small one dot's shorter call wins (~0.3-0.7 us up
# to 128x256): outputs of at least 256 rows and 128 columns go through matmul. (Two comparisons, the
# first false for a chain's 32x32 product: the product of the sizes cost ~400 instructions a call.)
_LARGE_ROWS, _LARGE_COLUMNS = 256, 128


def _large_product(a, b):
    """``a @ b`` of float arrays of one dtype with a large output, through the matmul ufunc where it
    calls the same gemm as ``ndarray.dot`` (same bits): both operands C- or F-contiguous. A strided
    operand goes to dot, which copies it for BLAS, where matmul would loop without BLAS."""
    if type(a) is _NDARRAY and type(b) is _NDARRAY and a.flags.forc and b.flags.forc:   # (forc: C- or F-contiguous)
        return xp.matmul(a, b)
    return a.dot(b)


def _mm_kernel(self, mat2):
    sa, sb = self.shape, mat2.shape   # (each attribute read of an array costs: read once)
    if len(sa) != 2 or len(sb) != 2:
        raise RuntimeError(f"{'self' if len(sa) != 2 else 'mat2'} must be a matrix")
    if sa[1] != sb[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({sa[0]}x{sa[1]} and {sb[0]}x{sb[1]})")
    if self.dtype is not mat2.dtype:
        _same_dtype(self, mat2)
    return _gemm(self, mat2)    # (its usual case, ``self.dot(mat2)``, is the op's plain case: mm_op below)


def _bmm_kernel(self, mat2):
    if self.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if self.ndim != 3 else "batch2 must be a 3D tensor")
    if self.shape[0] != mat2.shape[0] or self.shape[2] != mat2.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{self.shape[0]}, {self.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}].")
    if self.dtype != mat2.dtype:
        raise RuntimeError(f"expected scalar type {_legacy(self)} but found {_legacy(mat2)}")
    return _matmul(self, mat2)


def _mv_kernel(self, vec):
    if self.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {vec.ndim}, {self.ndim}, {vec.ndim}")
    if self.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({self.shape[0]}), mat ({self.shape[0]}x{self.shape[1]}), "
                           f"vec ({vec.shape[0]})")
    if self.dtype != vec.dtype:   # (torch's mv is an addmv into a tensor of vec's dtype)
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {_legacy(vec)}, {_legacy(self)}, "
                           f"and {_legacy(vec)}")
    return _matmul(self, vec)


def _dot_kernel(self, tensor):
    if self.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {self.ndim}D and {tensor.ndim}D tensors")
    if self.dtype != tensor.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {_legacy(self)} and "
                           f"{_legacy(tensor)}")
    if self.shape[0] != tensor.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{self.shape[0]}] and src [{tensor.shape[0]}] "
                           f"to have the same number of elements, but got {self.shape[0]} and {tensor.shape[0]} "
                           "elements respectively")
    out = asarray(xp.dot(self, tensor))
    if out.dtype.kind == "f":
        out += 0  # (torch's dot sums from +0: dot([0.], [-1.]) is +0, where NumPy gives the product, -0)
    return out


def _vdot_kernel(self, other):
    _dot_kernel(self, other)
    return asarray(xp.vdot(self, other))


def _scaled(x, factor):
    return x if factor == 1 else x * factor


def _addmm_kernel(self, mat1, mat2, *, beta=1, alpha=1):
    sa, sb = mat1.shape, mat2.shape
    if (beta == 1 and alpha == 1 and type(self) is _NDARRAY and len(sa) == 2 and len(sb) == 2 and sa[1] == sb[0]
            and self.shape == sb[1:] and ((dt := mat2.dtype) is _FLOAT32 or dt is _FLOAT64) and mat1.dtype is dt
            and self.dtype is dt):
        # nn.Linear's case, a bias row of the product's dtype: the general path's steps below, without
        # the tests that cannot fail here (every step per op costs, and the MLP makes three a step)
        p = _real_gemm(mat1, mat2, sa[0], sa[1], sb[1])
        p += self
        if not _all(self) and (xp.signbit(self) & (self == 0)).any():
            _keep_negative_zeros(p, xp.broadcast_to(self, p.shape), mat1, mat2)
        return p
    for name, a in (("self", self), ("mat1", mat1)):   # (before the shapes, as torch's meta function)
        if a.dtype != mat2.dtype:
            raise RuntimeError(f"{name} and mat2 must have the same dtype, but got {_legacy(a)} and {_legacy(mat2)}")
    if mat1.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {mat1.ndim}-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} "
                           f"and {mat2.shape[0]}x{mat2.shape[1]})")
    shape = (mat1.shape[0], mat2.shape[1])
    sc = self.shape
    if sc != shape and sc != shape[1:]:  # (torch's error for an input of a wrong shape; a bias row is fine)
        _expand_kernel(self, shape)
    p = _gemm(mat1, mat2)
    if alpha != 1:
        p *= alpha
    if beta == 0:
        return p  # (input ignored: its nan and inf do not propagate, as torch documents)
    c = self if beta == 1 else beta * self      # (the bias as given: a row, broadcast by the addition)
    if c.dtype == p.dtype and c.ndim <= 2:
        p += c                                   # (p is this call's own array: no second one)
        out = p
    else:
        out = c + p
    # (c.all(): no zero in c, so no -0 -- one pass over the bias, where the test for -0 makes three)
    if p.dtype.kind == "f" and has_values(c) and not c.all() and (xp.signbit(c) & (c == 0)).any():
        _keep_negative_zeros(out, xp.broadcast_to(c, shape), mat1, mat2)
    return out


def _keep_negative_zeros(out, c, mat1, mat2):
    """gemm with beta != 0 accumulates the products onto C: where C is -0 and every product is -0,
    the result stays -0 (NumPy's product summed from +0, added to -0, gives +0). Called only when
    ``c`` holds a -0 (tested on the bias before it is broadcast: the common case costs that test)."""
    suspects = (out == 0) & xp.signbit(c) & (c == 0)
    for i, j in zip(*xp.nonzero(suspects)):
        products = mat1[i, :] * mat2[:, j]
        if xp.all((products == 0) & xp.signbit(products)):
            out[i, j] = -0.0


def _baddbmm_kernel(self, batch1, batch2, *, beta=1, alpha=1):
    if self.dtype != batch1.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {_cpp(self)}, batch1: {_cpp(batch1)}, "
                           f"batch2: {_cpp(batch2)}")
    p = _bmm_kernel(batch1, batch2)
    if alpha != 1:
        p = p * alpha
    if beta == 0:
        _expand_kernel(self, p.shape)  # (torch checks the input's shape...)
        return p                       # (...and ignores its values, as addmm)
    return p + (self if beta == 1 else beta * self)


def _column_major(sizes, strides):
    return strides[0] == 1 and strides[1] == sizes[0]


def _real_matrices(grad, other):
    """``grad``'s shape when a product's backward is given NumPy matrices of one real float dtype (the usual
    backward, formulas on arrays), else None: then ``conj`` is the identity, ``t`` is ``.T`` and ``mm`` is
    ``_real_gemm`` after checks that a backward's own shapes pass, and the helpers below call those
    directly -- per gradient two or three op calls fewer (an MLP step's five gradients: 652 bytecodes of
    its 17k), and the sizes come from the shape read here and the saved ones. Tensors (double backward,
    a dispatch mode) and other dtypes go through the ops."""
    if type(grad) is _NDARRAY and type(other) is _NDARRAY and ((dt := grad.dtype) is _FLOAT32 or dt is _FLOAT64) \
            and other.dtype is dt and other.ndim == 2 and len(shape := grad.shape) == 2:
        return shape
    return None


# (the two helpers below are every matrix product's backward: _column_major's test and the factor are
# written out in them rather than called -- three frames fewer per gradient)
def mm_mat1_backward(grad, mat2, mat1_sizes, mat1_strides, alpha=1):
    """The gradient of ``mat1`` in ``mat1 @ mat2``: ``grad @ mat2^H``, laid out as ``mat1`` is when that is
    column-major -- computed as ``(conj(mat2) @ grad^T)^T``, a transposed view of a row-major product, as
    torch's mm_mat1_backward does."""
    column_major = mat1_strides[0] == 1 and mat1_strides[1] == mat1_sizes[0]
    if (shape := _real_matrices(grad, mat2)) is not None:     # grad: (m, n), mat2: (k, n)
        m, k = mat1_sizes
        n = shape[1]
        g = _real_gemm(mat2, grad.T, k, n, m).T if column_major else _real_gemm(grad, mat2.T, m, n, k)
    elif column_major:
        g = aten.t(aten.mm(conj(mat2), aten.t(grad)))
    else:
        g = aten.mm(grad, conj(aten.t(mat2)))
    return g if alpha == 1 else g * alpha


def mm_mat2_backward(grad, mat1, mat2_sizes, mat2_strides, alpha=1):
    """The gradient of ``mat2`` in ``mat1 @ mat2``: ``mat1^H @ grad``, laid out as ``mat2`` is when that is
    column-major, as torch's mm_mat2_backward does. ``nn.Linear``'s ``x @ W.t()`` is that case: the
    product ``grad^T @ conj(mat1)`` has ``W``'s row-major layout, so the gradient ``t()`` hands back to
    ``W`` is taken over by AccumulateGrad as it is, where ``(x^T @ grad)^T`` had to be copied into ``W``'s
    layout (a transposed read of the whole gradient)."""
    column_major = mat2_strides[0] == 1 and mat2_strides[1] == mat2_sizes[0]
    if (shape := _real_matrices(grad, mat1)) is not None:     # grad: (m, n), mat1: (m, k)
        k, n = mat2_sizes
        m = shape[0]
        g = _real_gemm(grad.T, mat1, n, m, k).T if column_major else _real_gemm(mat1.T, grad, k, m, n)
    elif column_major:
        g = aten.t(aten.mm(aten.t(grad), conj(mat1)))
    else:
        g = aten.mm(conj(aten.t(mat1)), grad)
    return g if alpha == 1 else g * alpha


def _small_product(shape_a, shape_b):
    """mm's plain case's size rule, by shapes (MATRICES_KEYS): a product of at least _LARGE_ROWS rows and
    _LARGE_COLUMNS columns goes to _gemm (matmul's ufunc)."""
    return shape_a[0] < _LARGE_ROWS or shape_b[1] < _LARGE_COLUMNS


mm_op = defop("mm(Tensor self, Tensor mat2) -> Tensor", _mm_kernel, node="MmBackward0",
              plain=Plain("{self}.dot({mat2})", MATRICES + " and (_sa[0] < _LARGE_ROWS or _sb[1] < _LARGE_COLUMNS)",
                          MATRICES_KEYS, _LARGE_ROWS=_LARGE_ROWS, _LARGE_COLUMNS=_LARGE_COLUMNS,   # (a large output: _gemm)
                          _matrix_product=matrix_product, _small=_small_product),
              self=lambda grad, mat2, self_sizes, self_strides: mm_mat1_backward(grad, mat2, self_sizes, self_strides),
              mat2=lambda grad, self, mat2_sizes, mat2_strides: mm_mat2_backward(grad, self, mat2_sizes, mat2_strides))
bmm_op = defop("bmm(Tensor self, Tensor mat2) -> Tensor", _bmm_kernel, node="BmmBackward0",
               self=lambda grad, mat2: aten.bmm(grad, conj(aten.transpose.int(mat2, 1, 2))),
               mat2=lambda grad, self: aten.bmm(conj(aten.transpose.int(self, 1, 2)), grad))
mv_op = defop("mv(Tensor self, Tensor vec) -> Tensor", _mv_kernel, node="MvBackward0",
              self=lambda grad, vec: grad.reshape((-1, 1)) * conj(vec).reshape((1, -1)),
              vec=lambda grad, self: aten.mv(conj(aten.t(self)), grad))
dot_op = defop("dot(Tensor self, Tensor tensor) -> Tensor", _dot_kernel, node="DotBackward0",
               self=lambda grad, tensor: grad * conj(tensor),
               tensor=lambda grad, self: grad * conj(self))
vdot_op = defop("vdot(Tensor self, Tensor other) -> Tensor", _vdot_kernel, node="VdotBackward0",
                self=lambda grad, other: conj(grad) * other,     # (vdot conjugates its first argument)
                other=lambda grad, self: grad * self)
addmm_op = defop("addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
                 _addmm_kernel, node="AddmmBackward0",
                 self=lambda grad, beta: _scaled(grad, beta),
                 mat1=lambda grad, mat2, mat1_sizes, mat1_strides, alpha:
                     mm_mat1_backward(grad, mat2, mat1_sizes, mat1_strides, alpha),
                 mat2=lambda grad, mat1, mat2_sizes, mat2_strides, alpha:
                     mm_mat2_backward(grad, mat1, mat2_sizes, mat2_strides, alpha))
baddbmm_op = defop("baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
                   _baddbmm_kernel, node="BaddbmmBackward0",
                   self=lambda grad, beta: _scaled(grad, beta),
                   batch1=lambda grad, batch2, alpha: _scaled(aten.bmm(grad, conj(aten.transpose.int(batch2, 1, 2))), alpha),
                   batch2=lambda grad, batch1, alpha: _scaled(aten.bmm(conj(aten.transpose.int(batch1, 1, 2)), grad), alpha))


def _addmv_kernel(self, mat, vec, *, beta=1, alpha=1):
    if mat.ndim != 2 or vec.ndim != 1 or self.ndim > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {self.ndim}, {mat.ndim}, {vec.ndim}")
    if mat.shape[1] != vec.shape[0] or self.shape not in ((mat.shape[0],), (1,), ()):
        raise RuntimeError(f"size mismatch, got input ({self.shape[0] if self.ndim else 1}), mat "
                           f"({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})")
    if not (self.dtype == mat.dtype == vec.dtype):
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {_DTYPE_OF[self.dtype]._legacy}, "
                           f"{_DTYPE_OF[mat.dtype]._legacy}, and {_DTYPE_OF[vec.dtype]._legacy}")
    p = _scaled(_mv_kernel(mat, vec), alpha)
    if beta == 0:
        return p.copy()   # (the input ignored: its nan and inf do not propagate, as torch documents)
    return p + _scaled(self, beta)


addmv_op = defop("addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
                 _addmv_kernel, node="AddmvBackward0",
                 self=lambda grad, beta: _scaled(grad, beta),
                 mat=lambda grad, vec, alpha: _scaled(grad.reshape((-1, 1)) * conj(vec).reshape((1, -1)), alpha),
                 vec=lambda grad, mat, alpha: _scaled(aten.mv(conj(aten.t(mat)), grad), alpha))


def _addmv__kernel(self, mat, vec, *, beta=1, alpha=1):
    result = _addmv_kernel(self, mat, vec, beta=beta, alpha=alpha)
    if result.shape != self.shape:
        raise RuntimeError(f"Bad in-place call: input tensor size {list(self.shape)} and output tensor size "
                           f"{list(result.shape)} should match")
    self[...] = result
    return self



def _addbmm_kernel(self, batch1, batch2, *, beta=1, alpha=1):
    """beta * self + alpha * sum over the batch of batch1[b] @ batch2[b]: torch computes it as one
    addmm of the batches laid side by side, (n, b*m) @ (b*m, p), and checks in that order: ``self``
    against the product's shape first, then the batches'."""
    _expand_kernel(self, (batch1.shape[_wrap_dim(1, batch1.ndim)], batch2.shape[_wrap_dim(2, batch2.ndim)]))
    for name, b in (("batch1", batch1), ("batch2", batch2)):
        if b.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {batch1.shape[0]} and "
                           f"{batch2.shape[0]}")
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x{batch1.shape[2]} and "
                           f"{batch2.shape[1]}x{batch2.shape[2]})")
    b, n, m = batch1.shape
    mat1 = batch1.transpose(1, 0, 2).reshape(n, b * m)
    mat2 = batch2.reshape(b * m, batch2.shape[2])
    return _addmm_kernel(self, mat1, mat2, beta=beta, alpha=alpha)


def _addr__kernel(self, vec1, vec2, *, beta=1, alpha=1):
    """addr_: a matrix ``self`` only (nothing is broadcast into it); the result is cast to its dtype
    as an element-wise op's (torch computes it with a TensorIterator)."""
    if self.ndim != 2:
        raise RuntimeError(f"2D tensor expected, got {self.ndim}D tensor for input")
    return _addr_written_into_self(self, vec1, vec2, beta=beta, alpha=alpha)


def _addr_kernel(self, vec1, vec2, *, beta=1, alpha=1):
    """beta * self + alpha * outer(vec1, vec2), in the three tensors' promoted dtype (bool: or/and)."""
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v.ndim}-D")
    shape = (vec1.shape[0], vec2.shape[0])
    _expand_kernel(self, shape)
    dims = [_DTYPE_OF[a.dtype] for a in (self, vec1, vec2) if a.ndim]
    zeros = [_DTYPE_OF[a.dtype] for a in (self, vec1, vec2) if not a.ndim]
    nd = _dtype.result_type_of(dims, zeros, ()).numpy_dtype
    self, vec1, vec2 = (a.astype(nd, copy=False) for a in (self, vec1, vec2))
    if nd.kind == "b":
        product = xp.logical_and.outer(vec1, vec2) if alpha else xp.zeros(shape, bool)
        return product | xp.broadcast_to(self, shape) if beta else product
    if nd.kind in "iu":
        for name, factor in (("beta", beta), ("alpha", alpha)):
            if isinstance(factor, float):
                raise RuntimeError(f"For integral input tensors, argument {name} must not be a floating point number.")
    product = _scaled(xp.multiply.outer(vec1, vec2), alpha)
    if beta == 0:
        return asarray(product).astype(nd, copy=False)   # (self ignored: its nan and inf do not propagate)
    return asarray(product + _scaled(self, beta)).astype(nd, copy=False)


_addr_written_into_self = written_into_self(_addr_kernel)
addbmm_op = defop("addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
                  _addbmm_kernel, node="AddbmmBackward0",
                  self=lambda grad, beta: _scaled(grad, beta),
                  batch1=lambda grad, batch1, batch2, alpha: _scaled(aten.bmm(
                      aten.expand(aten.unsqueeze(grad, 0), [batch1.shape[0], batch1.shape[1], batch2.shape[2]]),
                      conj(aten.transpose.int(batch2, 1, 2))), alpha),
                  batch2=lambda grad, batch1, batch2, alpha: _scaled(aten.bmm(
                      conj(aten.transpose.int(batch1, 1, 2)),
                      aten.expand(aten.unsqueeze(grad, 0), [batch1.shape[0], batch1.shape[1], batch2.shape[2]])), alpha))
addr_op = defop("addr(Tensor self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
                _addr_kernel, node="AddrBackward0",
                self=lambda grad, beta: _scaled(grad, beta),
                vec1=lambda grad, vec2, alpha: _scaled(aten.mv(grad, conj(vec2)), alpha),
                vec2=lambda grad, vec1, alpha: _scaled(aten.mv(aten.t(grad), conj(vec1)), alpha))
addbmm__op = defop("addbmm_(Tensor(a!) self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) "
                   "-> Tensor(a!)", computed_into_self(_addbmm_kernel), inplace_of=addbmm_op)
addr__op = defop("addr_(Tensor(a!) self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1) -> Tensor(a!)",
                 _addr__kernel, inplace_of=addr_op)

addmv__op = defop("addmv_(Tensor(a!) self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor(a!)",
                  _addmv__kernel, inplace_of=addmv_op)
addmm__op = defop("addmm_(Tensor(a!) self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor(a!)",
                  computed_into_self(addmm_op.kernel), inplace_of=addmm_op)
baddbmm__op = defop("baddbmm_(Tensor(a!) self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) "
                    "-> Tensor(a!)", computed_into_self(baddbmm_op.kernel), inplace_of=baddbmm_op)


@method()
@overridable(direct=mm_op)
def mm(input, mat2):
    """The matrix product of two matrices (no broadcasting: see matmul)."""
    if not isinstance(mat2, Tensor) or not isinstance(input, Tensor):
        _checks.expect_tensor("mm", input, "input", 1)
        _checks.expect_tensor("mm", mat2, "mat2", 2)
    return mm_op(input, mat2)


@method()
@overridable
def bmm(input, mat2):
    """Matrix products of two batches of matrices, (b, n, m) @ (b, m, p)."""
    return bmm_op(input, mat2)


@method()
@overridable
def mv(input, vec):
    """The product of a matrix and a vector."""
    return mv_op(input, vec)


@method()
@overridable
def dot(input, tensor):
    """The dot product of two 1-D tensors."""
    return dot_op(input, tensor)


@method()
@overridable
def vdot(input, other):
    """The dot product of two 1-D tensors, the first one conjugated."""
    return vdot_op(input, other)


@method()
@overridable
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2) -- what nn.Linear records (AddmmBackward0)."""
    return addmm_op(input, mat1, mat2, beta=beta, alpha=alpha)


@method()
@overridable
def addmv(input, mat, vec, *, beta=1, alpha=1):
    """beta * input + alpha * (mat @ vec): a matrix-vector product added to a vector (``input``
    may be a 1-element vector or a 0-d tensor, broadcast); with ``beta=0`` ``input`` is ignored."""
    return addmv_op(input, mat, vec, beta=beta, alpha=alpha)


@method()
@overridable
def addmv_(self, mat, vec, *, beta=1, alpha=1):
    """In place: self = beta * self + alpha * (mat @ vec) (aten.addmv_)."""
    return addmv__op(self, mat, vec, beta=beta, alpha=alpha)


@method()
@overridable
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * (the sum over the batch of batch1[b] @ batch2[b]): (n, m) from
    (b, n, k) and (b, k, m); ``input`` broadcasts to (n, m)."""
    return addbmm_op(input, batch1, batch2, beta=beta, alpha=alpha)


@method()
@overridable
def addbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    """In place: self = beta * self + alpha * (sum over b of batch1[b] @ batch2[b]) (aten.addbmm_)."""
    return addbmm__op._call(self, batch1, batch2, beta=beta, alpha=alpha)


@method()
@overridable
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """beta * input + alpha * outer(vec1, vec2) (``input`` broadcasts to the outer product's shape)."""
    return addr_op(input, vec1, vec2, beta=beta, alpha=alpha)


@method()
@overridable
def addr_(self, vec1, vec2, *, beta=1, alpha=1):
    """In place: self = beta * self + alpha * outer(vec1, vec2) (aten.addr_)."""
    return addr__op._call(self, vec1, vec2, beta=beta, alpha=alpha)


@method()
@overridable
def addmm_(self, mat1, mat2, *, beta=1, alpha=1):
    """In place: self = beta * self + alpha * (mat1 @ mat2) (aten.addmm_)."""
    return addmm__op._call(self, mat1, mat2, beta=beta, alpha=alpha)


@method()
@overridable
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * (batch1 @ batch2), batched."""
    return baddbmm_op(input, batch1, batch2, beta=beta, alpha=alpha)


@method()
@overridable
def baddbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    """In place: self = beta * self + alpha * (batch1 @ batch2), batched (aten.baddbmm_)."""
    return baddbmm__op._call(self, batch1, batch2, beta=beta, alpha=alpha)


@method("outer", "ger")
@overridable
def outer(input, vec2):
    """The outer product of two vectors: torch's composite, input.reshape(n, 1) * vec2."""
    for name, t in (("self", input), ("vec2", vec2)):
        if t.dim() != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.dim()}-D")
    return input.reshape(-1, 1) * vec2


ger = outer


@method()
@overridable
def inner(input, other):
    """The sum of products over the last dims (torch's composite: a tensordot, or a mul for a 0-dim
    operand)."""
    if input.dim() == 0 or other.dim() == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input.shape)} and {list(other.shape)}")
    return tensordot(input, other, ([-1], [-1]))


# ---- matmul: torch's decomposition, so that its graph is torch's ---------------------------------------------
def _should_fold(a, b):
    """torch's should_fold: can the larger operand's batch be folded into matrix rows, so one
    mm/mv replaces a bmm? Yes when the other operand requires grad (a smaller gradient in the
    backward), else only when the fold needs no copy (torch's LinearAlgebra.cpp, same test)."""
    a_larger = a._data.ndim >= b._data.ndim
    t1 = a._data if a_larger else xp.swapaxes(b._data, -1, -2)
    dim_t2 = b._data.ndim if a_larger else a._data.ndim
    if not (t1.ndim >= 3 and dim_t2 <= 2):
        return False
    if (b if a_larger else a)._requires_grad:
        return True
    if a._data.ndim == 2:
        return False
    if t1.size == 0:
        return True
    st, sh = t1.strides, t1.shape
    return all(st[i] == st[i + 1] * sh[i + 1] for i in range(t1.ndim - 2))


@method("matmul", "__matmul__")
@overridable(direct=mm_op)     # (two matrices: mm)
def matmul(input, other):
    """torch.matmul, decomposed into dot/mv/mm/bmm with views exactly as torch's _matmul_impl does,
    so the recorded graph is torch's."""
    if not isinstance(other, Tensor) or not isinstance(input, Tensor):
        raise TypeError(f"matmul(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    na, nb = input._data.ndim, other._data.ndim
    if na == 0 or nb == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {na}D and {nb}D")
    if na == 1 and nb == 1:
        return dot_op(input, other)
    if na == 2 and nb == 1:
        return mv_op(input, other)
    if na == 1 and nb == 2:
        return mm_op(input.unsqueeze(0), other).squeeze_(0)  # (torch's; an in-place view op: version 1)
    if na == 2 and nb == 2:
        return mm_op._call(input, other)   # (the bound generated call: see _ops_codegen.install_call)
    if _should_fold(input, other):
        # fold the larger operand's batch into the rows of one matrix: (b..., n, m) @ (m, k) -> mm
        transpose = nb > na
        t1 = other.mT if transpose else input
        t2 = (input.t() if na == 2 else input) if transpose else other
        out_shape = t1._data.shape[:-1]
        rows = 1
        for s in out_shape:
            rows *= s
        folded = t1.reshape(rows, t1._data.shape[-1])
        if t2._data.ndim == 2:
            out = aten._unsafe_view(mm_op(folded, t2), list(out_shape + (t2._data.shape[1],)))
            return out.mT.contiguous() if transpose else out
        return aten._unsafe_view(mv_op(folded, t2), list(out_shape))
    # batched: broadcast the batch dims, expand, fold to 3-D, bmm
    sa, sb = input._data.shape, other._data.shape
    n = sa[-2] if na > 1 else 1
    m1, m2 = sa[-1], (sb[-2] if nb > 1 else sb[0])
    p = sb[-1] if nb > 1 else 1
    batch1, batch2 = sa[:max(na - 2, 0)], sb[:max(nb - 2, 0)]
    if na == 3 and nb == 3 and batch1[0] != batch2[0]:
        if batch1[0] == 1 and input._requires_grad:
            return matmul(input.squeeze(0), other)
        if batch2[0] == 1 and other._requires_grad:
            return matmul(input, other.squeeze(0))
    try:
        batch = xp.broadcast_shapes(batch1, batch2)
    except ValueError:
        raise _checks.broadcast_error(batch1, batch2) from None
    nbatch = 1
    for s in batch:
        nbatch *= s
    a3 = input.expand(batch + (n, m1)).reshape(nbatch, n, m1)
    if nb == 1:
        b3 = other.expand(batch + (m2,)).reshape(nbatch, m2).unsqueeze(2)
        out = bmm_op(a3, b3).squeeze(-1)
    else:
        b3 = other.expand(batch + (m2, p)).reshape(nbatch, m2, p)
        out = bmm_op(a3, b3)
    return aten._unsafe_view(out, list(batch + ((n,) if na > 1 else ()) + ((p,) if nb > 1 else ())))


@overridable
def __rmatmul__(self, other):
    """other @ self, for an ``other`` that is not a Tensor (matmul then refuses it, as torch does)."""
    return matmul(other, self)


Tensor.__rmatmul__ = __rmatmul__


# ---- einsum: torch's algorithm, so that its graph is torch's ------------------------------------------------
_ELLIPSIS = 52  # labels are 0..51 (A-Z, a-z); the ellipsis gets its own code


def _label(c):
    return ord(c) - 65 if c.isupper() else ord(c) - 97 + 26


def _label_char(s):
    return chr(s + 65) if s < 26 else chr(s - 26 + 97)


def _parse_operand_labels(lhs, num_ops):
    op_labels = [[] for _ in range(num_ops)]
    cur, i, ell = 0, 0, False
    while i < len(lhs):
        c = lhs[i]
        if c == " ":
            pass
        elif c == ".":
            if ell:
                raise RuntimeError(f"einsum(): found '.' for operand {cur} for which an ellipsis was already found")
            if not (i + 2 < len(lhs) and lhs[i + 1] == "." and lhs[i + 2] == "."):
                raise RuntimeError(f"einsum(): found '.' for operand {cur} that is not part of any ellipsis")
            i += 2
            op_labels[cur].append(_ELLIPSIS)
            ell = True
        elif c == ",":
            cur += 1
            if cur >= num_ops:
                raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
            ell = False
        else:
            if not (c.isascii() and c.isalpha()):
                raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the equation string, "
                                   f"subscripts must be in [a-zA-Z]")
            op_labels[cur].append(_label(c))
        i += 1
    if cur != num_ops - 1:
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    return op_labels


@overridable
def einsum(*args):
    """torch.einsum, ported from torch's algorithm (aten/native/Linear.cpp) so the recorded graph
    is torch's: each operand is diagonalised for repeated labels, unsqueezed for the labels it
    lacks and permuted to one common order (output labels, then contracted ones); operands are
    then multiplied pairwise, left to right, each pair reduced to one bmm (``_sumproduct_pair``);
    the contracted dims, size 1 by then, are dropped with a view."""
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, or at least one "
                         "operand and its subscripts list")
    equation, operands = args[0], args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    num_ops = len(operands)
    lhs, arrow, rhs = equation.partition("->")
    op_labels = _parse_operand_labels(lhs, num_ops)

    label_count = [0] * _ELLIPSIS
    ell_num_dim = 0
    for i, op in enumerate(operands):
        labels, ndims = op_labels[i], op.dim()
        nlabels, has_ell = len(labels), False
        for lab in labels:
            if lab == _ELLIPSIS:
                nlabels -= 1
                has_ell = True
                ell_num_dim = max(ell_num_dim, ndims - nlabels)
            else:
                label_count[lab] += 1
        if not (nlabels <= ndims if has_ell else nlabels == ndims):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({nlabels}) " +
                               ("is more than the number of dimensions (" if has_ell else
                                "does not match the number of dimensions (") +
                               f"{ndims}) for operand {i}" + ("" if has_ell else " and no ellipsis was given"))

    # the position of every label in the common order: output labels first, then contracted ones
    perm_of = [-1] * _ELLIPSIS
    perm_index = ell_index = 0
    ell_in_output = False
    if not arrow:  # implicit output: the ellipsis, then the labels seen once, alphabetically (A-Z, a-z)
        perm_index, ell_in_output = ell_num_dim, True
        for lab in range(_ELLIPSIS):
            if label_count[lab] == 1:
                perm_of[lab] = perm_index
                perm_index += 1
    else:
        j = 0
        while j < len(rhs):
            c = rhs[j]
            if c == ".":
                if ell_in_output:
                    raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) was already found")
                if not (j + 2 < len(rhs) and rhs[j + 1] == "." and rhs[j + 2] == "."):
                    raise RuntimeError("einsum(): found '.' for output that is not part of any ellipsis (...)")
                j += 2
                ell_index, ell_in_output = perm_index, True
                perm_index += ell_num_dim
            elif c != " ":
                if not (c.isascii() and c.isalpha()):
                    raise RuntimeError(f"einsum(): invalid subscript given at index {len(lhs) + 2 + j} in the "
                                       f"equation string, subscripts must be in [a-zA-Z]")
                lab = _label(c)
                if not (label_count[lab] > 0 and perm_of[lab] == -1):
                    raise RuntimeError(f"einsum(): output subscript {c}" + (
                        " appears more than once in the output" if perm_of[lab] > -1 else
                        " does not appear in the equation for any input operand"))
                perm_of[lab] = perm_index
                perm_index += 1
            j += 1
    out_num_dim = perm_index
    if not ell_in_output:
        ell_index = perm_index
        perm_index += ell_num_dim
    for lab in range(_ELLIPSIS):
        if label_count[lab] > 0 and perm_of[lab] == -1:
            perm_of[lab] = perm_index
            perm_index += 1

    # align every operand to the common order; count the operands with a size != 1 per dim
    label_size, ell_sizes, dim_counts, ops = [1] * _ELLIPSIS, [1] * ell_num_dim, [0] * perm_index, []
    for i, op in enumerate(operands):
        permutation = [-1] * perm_index
        dim = 0
        for s in op_labels[i]:
            if s == _ELLIPSIS:
                ndim = operands[i].dim() - (len(op_labels[i]) - 1)
                for j in range(ell_num_dim - ndim, ell_num_dim):
                    size = op.shape[dim]
                    if size != 1:
                        if not (ell_sizes[j] == 1 or ell_sizes[j] == size):
                            raise RuntimeError(f"einsum(): dimension {dim} covered by ellipsis in operand {i}has size "
                                               f"{size} which does not broadcast with previously seen ellipsis with "
                                               f"size {ell_sizes[j]} for the respective dimension")
                        ell_sizes[j] = size
                        dim_counts[ell_index + j] += 1
                    permutation[ell_index + j] = dim
                    dim += 1
            elif permutation[perm_of[s]] == -1:
                size = op.shape[dim]
                if size != 1:
                    if not (label_size[s] == 1 or label_size[s] == size):
                        raise RuntimeError(f"einsum(): subscript {_label_char(s)} has size {size} for operand {i} "
                                           f"which does not broadcast with previously seen size {label_size[s]}")
                    label_size[s] = size
                    dim_counts[perm_of[s]] += 1
                permutation[perm_of[s]] = dim
                dim += 1
            else:  # a repeated label: take the diagonal
                prev = permutation[perm_of[s]]
                if op.shape[dim] != op.shape[prev]:
                    raise RuntimeError(f"einsum(): subscript {_label_char(s)} is repeated for operand {i} but the "
                                       f"sizes don't match, {op.shape[dim]} != {op.shape[prev]}")
                op = op.diagonal(0, prev, dim).movedim(-1, prev)
        for k, val in enumerate(permutation):
            if val == -1:
                op = op.unsqueeze(dim)
                permutation[k] = dim
                dim += 1
        ops.append(op.permute(permutation))

    # contract left to right; a dim is summed as soon as no later operand has it
    while len(ops) > 1:
        a, b = ops[0], ops[1]
        del ops[:2]
        sum_dims, a_sum, b_sum = [], [], []
        for dim in range(out_num_dim, perm_index):
            sa, sb = a.shape[dim] != 1, b.shape[dim] != 1
            if sa and sb:
                if a.shape[dim] != b.shape[dim]:
                    raise RuntimeError("non-broadcast dimensions must match")
                dim_counts[dim] -= 1
                if dim_counts[dim] == 1:
                    sum_dims.append(dim)
                    dim_counts[dim] = 0
            elif dim_counts[dim] == 1:
                if sa:
                    a_sum.append(dim)
                    dim_counts[dim] = 0
                elif sb:
                    b_sum.append(dim)
                    dim_counts[dim] = 0
        if a_sum:
            a = a.sum(a_sum, True)
        if b_sum:
            b = b.sum(b_sum, True)
        ops.insert(0, _sumproduct_pair(a, b, sum_dims))

    if perm_index - out_num_dim > 0:
        if num_ops > 1:  # contracted dims have size 1 now
            return ops[0].view(list(ops[0].shape[:out_num_dim]))
        return ops[0].sum(list(range(out_num_dim, perm_index)))
    return ops[0]


def _sumproduct_pair(left, right, sum_dims):
    """(left * right).sum(sum_dims, keepdim=True) by permute -> reshape -> bmm -> view -> permute
    (torch's sumproduct_pair; operands already have the same number of dims)."""
    if not sum_dims:
        return left * right
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(left.dim()):
        sl, sr = left.shape[i] != 1, right.shape[i] != 1
        if i in sum_dims:
            if sl and sr:
                if left.shape[i] != right.shape[i]:
                    raise RuntimeError("non-broadcast dimensions must match")
                sum_size *= left.shape[i]
            elif sl:
                left = left.sum(i, True)
            elif sr:
                right = right.sum(i, True)
        elif sl and sr:
            if left.shape[i] != right.shape[i]:
                raise RuntimeError("non-broadcast dimensions must match")
            lro.append(i)
            lro_size *= left.shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left.shape[i]
        else:
            ro.append(i)
            ro_size *= right.shape[i]
    if lo and ro and ro[-1] < lo[0]:  # bmm then yields the output's memory order directly
        left, right, lo, ro, lo_size, ro_size = right, left, ro, lo, ro_size, lo_size
    out_size = [left.shape[d] for d in lro] + [left.shape[d] for d in lo] + [1] * len(sum_dims) + \
        [right.shape[d] for d in ro]
    operm = [-1] * len(out_size)
    for i, d in enumerate(lro + lo + sum_dims + ro):
        operm[d] = i
    left = left.permute(lro + lo + sum_dims + ro).reshape(lro_size, lo_size, sum_size)
    right = right.permute(lro + sum_dims + ro + lo).reshape(lro_size, sum_size, ro_size)
    return bmm(left, right).view(out_size).permute(operm)


@overridable(defaults_by_keyword=True)
def tensordot(a, b, dims=2, out=None):
    """torch.tensordot: contracted dims moved last in ``a`` and first in ``b``, both reshaped to
    matrices, one mm, reshaped to the free dims -- or, when every dim is contracted, one dot
    (torch's decomposition, so its graph)."""
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da, db = list(range(a.dim() - dims, a.dim())), list(range(dims))
    else:
        da, db = [list(d) if isinstance(d, (list, tuple)) else [d] for d in dims]
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    if a.dtype != b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    da = [d % a.dim() for d in da] if a.dim() else da
    db = [d % b.dim() for d in db] if b.dim() else db
    csize = 1
    for i, j in zip(da, db):
        if a.shape[i] != b.shape[j]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[i]} in dim {i} "
                               f"and second has size {b.shape[j]} in dim {j}")
        csize *= a.shape[i]
    free_a = [i for i in range(a.dim()) if i not in da]
    free_b = [j for j in range(b.dim()) if j not in db]
    size1, size2 = 1, 1
    for i in free_a:
        size1 *= a.shape[i]
    for j in free_b:
        size2 *= b.shape[j]
    rsizes = [a.shape[i] for i in free_a] + [b.shape[j] for j in free_b]
    if size1 == 1 and size2 == 1:       # every dim contracted: a dot of the flattened operands
        t1, t2 = _flat(a.permute(free_a + da)), _flat(b.permute(db + free_b))
        return dot_op(t1, t2).view(rsizes)
    t1 = a.permute(free_a + da).reshape(size1, csize)
    t2 = b.permute(db + free_b).reshape(csize, size2)
    return mm_op(t1, t2).reshape(rsizes)


def _flat(t):
    """t.flatten(): a 1-D tensor is returned as it is (no node), as torch's flatten does."""
    return t if t.dim() == 1 else t.reshape(-1)


@method()
@overridable
def kron(input, other):
    """The Kronecker product: each input viewed with a size-1 dim beside each of its dims, one
    broadcast multiply, viewed back (torch's KronImpl, so its graph: views of contiguous inputs)."""
    maxdim = max(input.dim(), other.dim())
    pad_a, pad_b = maxdim - input.dim(), maxdim - other.dim()
    a_shape, b_shape, result_shape = [], [], []
    for i in range(maxdim):
        sa = input.shape[i - pad_a] if i >= pad_a else 1
        sb = other.shape[i - pad_b] if i >= pad_b else 1
        a_shape += [sa, 1]
        b_shape += [1, sb]
        result_shape.append(sa * sb)
    return aten._unsafe_view(aten._unsafe_view(input, a_shape) * aten._unsafe_view(other, b_shape), result_shape)


# ==========================================================================================================
# torch.linalg's primitive ops
# ==========================================================================================================
class _LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError (torch's class is ``torch._C._LinAlgError``): a matrix that can't be
    factorised or inverted. A RuntimeError, as torch's."""
    __module__ = "torch._C"


LinAlgError = _LinAlgError


def _check_float(fn, A, name="A"):
    if A.dtype.kind not in "fc":
        raise RuntimeError(f"linalg.{fn}: Expected a floating point or complex tensor as input. Got "
                           f"{_DTYPE_OF[A.dtype]._legacy}")


def _check_matrices(fn, A, name="A", square=True):
    if A.ndim < 2:
        raise RuntimeError(f"linalg.{fn}: The input tensor {name} must have at least 2 dimensions.")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.{fn}: {name} must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")
    _check_float(fn, A, name)


def _lu_factor(a):
    """Gaussian elimination with partial pivoting (LAPACK's getrf) on a batch of matrices, one
    column at a time: the packed factors (L below the diagonal, its unit diagonal implied; U on
    and above), the 1-based row swaps (int32, as torch's pivots) and info (the 1-based index of the
    first zero pivot, or 0)."""
    *batch, m, n = a.shape
    lu = a.reshape(-1, m, n).copy()
    k = min(m, n)
    pivots = _empty_like(lu, (lu.shape[0], k), "int32")
    info = _zeros_like(lu, lu.shape[0], "int32")
    rows = _arange_like(lu, lu.shape[0])
    for j in range(k):
        p = j + xp.argmax(xp.abs(lu[:, j:, j]), axis=1)
        pivots[:, j] = p + 1
        swap = p != j
        if swap.any():
            r, pr = rows[swap], p[swap]
            top = lu[r, j].copy()
            lu[r, j] = lu[r, pr]
            lu[r, pr] = top
        pivot = lu[:, j, j]
        zero = pivot == 0
        if zero.any():
            info[zero & (info == 0)] = j + 1
            pivot = xp.where(zero, 1, pivot)
        if j + 1 < m:
            lu[:, j + 1:, j] /= pivot[:, None]
            if j + 1 < n:
                lu[:, j + 1:, j + 1:] -= lu[:, j + 1:, j, None] * lu[:, j, None, j + 1:]
    return lu.reshape(a.shape), pivots.reshape(tuple(batch) + (k,)), info.reshape(tuple(batch))


def _det_from_lu(lu, pivots):
    diag = xp.diagonal(lu, axis1=-2, axis2=-1)
    swaps = (pivots != _arange_like(pivots, 1, pivots.shape[-1] + 1, dtype="int32")).sum(-1)
    return xp.where(swaps % 2 == 1, -1, 1).astype(lu.dtype) * xp.prod(diag, axis=-1)


def _linalg_det_kernel(A):
    _check_matrices("det", A)
    lu, pivots, _ = _lu_factor(A)
    return asarray(_det_from_lu(lu, pivots)), lu, pivots


def _linalg_slogdet_kernel(A):
    _check_matrices("slogdet", A)
    lu, pivots, _ = _lu_factor(A)
    det = _det_from_lu(lu, pivots)
    with xp.errstate(divide="ignore"):
        logabsdet = xp.sum(xp.log(xp.abs(xp.diagonal(lu, axis1=-2, axis2=-1))), axis=-1)
    return asarray(xp.sign(det)), asarray(logabsdet.astype(A.dtype)), lu, pivots


def _singular_inverse_error(A, fn="linalg.inv"):
    _, _, info = _lu_factor(A.reshape(-1, *A.shape[-2:]))
    first = int(info[info > 0][0]) if (info > 0).any() else 1
    batch = "" if A.ndim == 2 else f"(Batch element {int(xp.nonzero(info > 0)[0][0])}): "
    return LinAlgError(f"{fn}: {batch}The diagonal element {first} is zero, the inversion could not be completed "
                       f"because the input matrix is singular.")


def _linalg_inv_ex_kernel(A, *, check_errors=False):
    _check_matrices("inv", A)
    try:
        return column_major(xp.linalg.inv(A)), _zeros_like(A, A.shape[:-2], "int32")
    except xp.linalg.LinAlgError:
        if check_errors:
            raise _singular_inverse_error(A) from None
    _, _, info = _lu_factor(A)
    inverse = _full_like(A, xp.nan, A.shape)
    good = info == 0
    if good.any():
        inverse[good] = xp.linalg.inv(A[good])
    return column_major(inverse), info


def _as_matrix_rhs(A, B, left):
    """B as a batch of matrices (a vector right-hand side gets a last dim of 1) and whether it was a
    vector (torch's linalg_solve_is_vector_rhs)."""
    vector = is_vector_rhs(A, B)
    Bm = B[..., None] if vector else B
    if vector and not left:
        raise RuntimeError("linalg.solve: Vector broadcasting of the left hand side is not supported for left=False. "
                           "In this case linalg.solve is equivalent to B / A.squeeze(-1)")
    return Bm, vector


def _linalg_solve_ex_kernel(A, B, *, left=True, check_errors=False):
    _check_matrices("solve", A)
    _check_float("solve", B, "B")
    if A.dtype != B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{_DTYPE_OF[A.dtype]._legacy} and B of type {_DTYPE_OF[B.dtype]._legacy} instead")
    Bm, vector = _as_matrix_rhs(A, B, left)
    n = A.shape[-1]
    if (Bm.shape[-2] if left else Bm.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        rows, cols = (Bm.shape[-2], Bm.shape[-1]) if left else (Bm.shape[-2], Bm.shape[-1])
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and "
                           f"{rows}x{cols})")
    lu, pivots, info = _lu_factor(A)
    if check_errors and (info > 0).any():
        raise LinAlgError("torch.linalg.solve: The solver failed because the input matrix is singular.")
    batch = xp.broadcast_shapes(A.shape[:-2], Bm.shape[:-2])
    A_ = xp.broadcast_to(A, batch + A.shape[-2:])
    B_ = xp.broadcast_to(Bm, batch + Bm.shape[-2:])
    if not left:
        A_, B_ = xp.swapaxes(A_, -1, -2), xp.swapaxes(B_, -1, -2)
    X = _solve_each(A_, B_)
    if not left:
        X = xp.swapaxes(X, -1, -2)
    X = X[..., 0] if vector else X
    # (torch's _linalg_solve_ex meta function: batched_matrix_contiguous_strides(result, f_contig=left), a
    # batched vector's solutions laid out as one column-major matrix too; the LU as linalg_lu_factor_ex's)
    return (column_major(X) if left else row_major(X)), column_major(lu), pivots, info


def _solve_each(A, B):
    """``solve(A, B)`` over a batch; a singular matrix gives NaN in its own solution only (NumPy
    refuses the whole batch; torch's LU solve leaves the other matrices' solutions as they are)."""
    try:
        return xp.linalg.solve(A, B)
    except xp.linalg.LinAlgError:
        X = xp.full(B.shape, xp.nan, xp.result_type(A, B))
        for index in xp.ndindex(*A.shape[:-2]):
            try:
                X[index] = xp.linalg.solve(A[index], B[index])
            except xp.linalg.LinAlgError:
                pass
        return X


def _triangular(A, upper, unitriangular):
    T = xp.triu(A) if upper else xp.tril(A)
    if unitriangular:
        T = T.copy()
        xp.einsum("...ii->...i", T)[...] = 1
    return T


def _linalg_solve_triangular_kernel(self, B, *, upper, left=True, unitriangular=False):
    _check_matrices("solve_triangular", self)
    if B.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 dimensions.")
    T = _triangular(self, upper, unitriangular)
    batch = xp.broadcast_shapes(T.shape[:-2], B.shape[:-2])
    T = xp.broadcast_to(T, batch + T.shape[-2:])
    B = xp.broadcast_to(B, batch + B.shape[-2:])
    with xp.errstate(divide="ignore", invalid="ignore"):
        try:
            if left:
                X = xp.linalg.solve(T, B)
            else:
                X = xp.swapaxes(xp.linalg.solve(xp.swapaxes(T, -1, -2), xp.swapaxes(B, -1, -2)), -1, -2)
        except xp.linalg.LinAlgError:     # a zero on the diagonal: LAPACK's trtrs gives inf/nan, as torch
            X = _full_like(T, xp.nan, B.shape)
    return column_major(X)   # (trsm solves in place in a column-major copy of B, for left and right alike)


def _linalg_eig_kernel(self):
    _check_matrices("eig", self)
    w, v = xp.linalg.eig(self)
    complex_type = "complex64" if self.dtype in (xp.float32, xp.complex64) else "complex128"
    return w.astype(complex_type), column_major(v.astype(complex_type))


def _linalg_eigh_kernel(A, UPLO="L", compute_v=True):
    if A.dtype.kind not in "fc":
        raise NotImplementedError(f"\"linalg_eigh_cpu\" not implemented for '{_DTYPE_OF[A.dtype]._legacy}'")
    _check_matrices("eigh", A)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    if not compute_v:
        return xp.linalg.eigvalsh(A, UPLO), _zeros_like(A, (0,))
    w, v = xp.linalg.eigh(A, UPLO)
    return w, column_major(v)   # (syevd overwrites a column-major copy of A with the eigenvectors)


def _linalg_svd_kernel(A, full_matrices=False, compute_uv=True, *, driver=None):
    _check_matrices("svd", A, square=False)
    if not compute_uv:
        return _zeros_like(A, (0,)), xp.linalg.svd(A, compute_uv=False), _zeros_like(A, (0,))
    U, S, Vh = xp.linalg.svd(A, full_matrices=full_matrices)
    return column_major(U), S, column_major(Vh)   # (as gesdd writes them)


def _linalg_qr_kernel(A, mode="reduced"):
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                           f"or 'complete'")
    _check_matrices("qr", A, square=False)
    if mode == "r":
        return _zeros_like(A, (0,)), column_major(xp.linalg.qr(A, mode="r"))
    Q, R = xp.linalg.qr(A, mode=mode)
    return column_major(Q), column_major(R)   # (geqrf and orgqr work in column-major copies)


def _not_positive_definite(A):
    """The order of the first leading minor of ``A`` that is not positive definite (1-based), for
    each matrix of the batch (0 where there is none)."""
    flat = A.reshape(-1, *A.shape[-2:])
    info = _zeros_like(flat, flat.shape[0], "int32")
    for b, M in enumerate(flat):
        for k in range(1, M.shape[-1] + 1):
            try:
                xp.linalg.cholesky(M[:k, :k])
            except xp.linalg.LinAlgError:
                info[b] = k
                break
    return info.reshape(A.shape[:-2])


def _cholesky_lower(A, check_errors, fn="linalg.cholesky"):
    try:
        return xp.linalg.cholesky(A), _zeros_like(A, A.shape[:-2], "int32")
    except xp.linalg.LinAlgError:
        info = _not_positive_definite(A)
        if check_errors:
            first = int(info[info > 0][0]) if info.ndim else int(info)
            batch = "" if A.ndim == 2 else f"(Batch element {int(xp.nonzero(info.reshape(-1) > 0)[0][0])}): "
            raise LinAlgError(f"{fn}: {batch}The factorization could not be completed because the input is not "
                              f"positive-definite (the leading minor of order {first} is not positive-definite).")
            raise
        L = _full_like(A, xp.nan, A.shape)
        good = info == 0
        if good.any():
            L[good] = xp.linalg.cholesky(A[good])
        return xp.tril(L), info


def _linalg_cholesky_ex_kernel(self, *, upper=False, check_errors=False):
    _check_matrices("cholesky", self)
    L, info = _cholesky_lower(self, check_errors)
    return column_major(xp.swapaxes(L, -1, -2) if upper else L), info   # (potrf works in a column-major copy)


def _cholesky_solve_kernel(self, input2, upper=False):
    for name, t in (("b", self), ("u", input2)):
        if t.ndim < 2:
            raise RuntimeError(f"{name} should have at least 2 dimensions, but has {t.ndim} dimensions instead")
    # (torch's linearSolveCheckInputs, then the batch dims broadcast by infer_size, then the kernel's dtypes)
    if self.dtype != input2.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_DTYPE_OF[self.dtype]._legacy} and A of type {_DTYPE_OF[input2.dtype]._legacy} instead.")
    n = input2.shape[-1]
    if input2.shape[-2] != n:
        raise RuntimeError(f"A must be batches of square matrices, but they are {input2.shape[-2]} by {n} matrices")
    if self.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is {n} by {n} but each b "
                           f"matrix is {self.shape[-2]} by {self.shape[-1]}")
    batch = _checks.broadcast_shape(self.shape[:-2], input2.shape[:-2])
    if self.dtype.kind not in "fc":
        raise NotImplementedError(f"\"cholesky_solve_cpu\" not implemented for '{_DTYPE_OF[self.dtype]._legacy}'")
    if not (has_values(self) and has_values(input2)):   # (meta: the shape is all there is to compute)
        X = _empty_like(self, batch + self.shape[-2:])
    else:
        L = xp.tril(xp.swapaxes(input2, -1, -2) if upper else input2)
        L = xp.broadcast_to(L, batch + L.shape[-2:])
        B = xp.broadcast_to(self, batch + self.shape[-2:])
        with xp.errstate(divide="ignore", invalid="ignore"):
            X = xp.linalg.solve(xp.swapaxes(L, -1, -2), xp.linalg.solve(L, B))   # L^T X = L^-1 B
    # (column-major matrices, as LAPACK's potrs writes them into torch's cloneBatchedColumnMajor)
    return column_major(X)


def _cholesky_kernel(self, upper=False):
    _check_matrices("cholesky", self)
    L, _ = _cholesky_lower(self, True)
    return column_major(xp.swapaxes(L, -1, -2) if upper else L)


def _linalg_pinv_kernel(self, *, atol=None, rtol=None, hermitian=False):
    if self.ndim < 2 or self.dtype.kind not in "fc":
        raise RuntimeError(f"linalg.pinv({_DTYPE_OF[self.dtype]._legacy}{{{list(self.shape)}}}): expected a tensor "
                           f"with 2 or more dimensions of float, double, cfloat or cdouble types")
    if atol is None and rtol is None:
        rtol = xp.finfo(self.dtype).eps * max(self.shape[-2:])
    S = xp.linalg.svd(self, compute_uv=False) if not hermitian else xp.abs(xp.linalg.eigvalsh(self))
    top = S.max(axis=-1, initial=0)
    tol = xp.maximum(0 if atol is None else atol, (0 if rtol is None else rtol) * top)
    rcond = xp.where(top > 0, tol / xp.where(top > 0, top, 1), 0)
    return xp.linalg.pinv(self, rcond=rcond, hermitian=hermitian).astype(self.dtype, copy=False)


def _linalg_cross_kernel(self, other, *, dim=-1):
    if self.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = _wrap_dim(dim, self.ndim)
    if self.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {self.shape[d]} and "
                           f"{other.shape[d]}")
    if self.dtype != other.dtype:
        raise RuntimeError(f"expected scalar type {_DTYPE_OF[self.dtype]._legacy} but found "
                           f"{_DTYPE_OF[other.dtype]._legacy}")
    try:
        shape = xp.broadcast_shapes(self.shape, other.shape)
    except ValueError:
        raise _checks.broadcast_error(self.shape, other.shape) from None
    return xp.cross(xp.broadcast_to(self, shape), xp.broadcast_to(other, shape), axis=d)


def _eig_backward(grads, self_dtype, eigenvalues, eigenvectors):
    """linalg_eig's gradient: the complex one, made real for a real input (torch's handle_r_to_c)."""
    g = linalg_eig_backward(grads[0], grads[1], eigenvalues, eigenvectors, False)
    return g if g is None or self_dtype.is_complex else g.real


def _svd_backward(grads, full_matrices, U, S, Vh):
    gU, gS, gVh = grads
    if full_matrices:
        k = S.shape[-1]
        gU = None if gU is None else aten.slice(gU, -1, 0, k)
        gVh = None if gVh is None else aten.slice(gVh, -2, 0, k)
        U, Vh = aten.slice(U, -1, 0, k), aten.slice(Vh, -2, 0, k)
    return svd_backward(gU, gS, gVh, U, S, Vh)


linalg_det_op = defop("_linalg_det(Tensor A) -> (Tensor result, Tensor LU, Tensor pivots)", _linalg_det_kernel,
                      node="LinalgDetBackward0",
                      A=lambda grad, result, A, LU, pivots: linalg_det_backward(grad, result, A, LU, pivots))
linalg_slogdet_op = defop("_linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet, Tensor LU, Tensor pivots)",
                          _linalg_slogdet_kernel, node="LinalgSlogdetBackward0",
                          A=lambda grads, A, sign, LU, pivots: slogdet_backward(
                              grads[0], grads[1], A, sign, LU, pivots))
linalg_inv_ex_op = defop("linalg_inv_ex(Tensor A, *, bool check_errors=False) -> (Tensor inverse, Tensor info)",
                         _linalg_inv_ex_kernel, node="LinalgInvExBackward0",
                         A=lambda grad, inverse: -(mH(inverse) @ (grad @ mH(inverse))))
linalg_solve_ex_op = defop("_linalg_solve_ex(Tensor A, Tensor B, *, bool left=True, bool check_errors=False) -> "
                           "(Tensor result, Tensor LU, Tensor pivots, Tensor info)", _linalg_solve_ex_kernel,
                           node="LinalgSolveExBackward0",
                           joint={("A", "B"): lambda grad, result, A, LU, pivots, left, output_mask:
                                  linalg_solve_backward(grad, result, A, LU, pivots, left, output_mask)})
linalg_solve_triangular_op = defop(
    "linalg_solve_triangular(Tensor self, Tensor B, *, bool upper, bool left=True, bool unitriangular=False) -> Tensor",
    _linalg_solve_triangular_kernel, node="LinalgSolveTriangularBackward0",
    joint={("self", "B"): lambda grad, self, result, upper, left, unitriangular, output_mask:
           linalg_solve_triangular_backward(grad, self, result, upper, left, unitriangular, output_mask)})
linalg_eig_op = defop("linalg_eig(Tensor self) -> (Tensor eigenvalues, Tensor eigenvectors)", _linalg_eig_kernel,
                      node="LinalgEigBackward0", self=_eig_backward)
linalg_eigh_op = defop("_linalg_eigh(Tensor A, str UPLO=\"L\", bool compute_v=True) -> "
                       "(Tensor eigenvalues, Tensor eigenvectors)", _linalg_eigh_kernel, node="LinalgEighBackward0",
                       A=lambda grads, eigenvalues, eigenvectors: linalg_eig_backward(
                           grads[0], grads[1], eigenvalues, eigenvectors, True))
linalg_svd_op = defop("_linalg_svd(Tensor A, bool full_matrices=False, bool compute_uv=True, *, str? driver=None) -> "
                      "(Tensor U, Tensor S, Tensor Vh)", _linalg_svd_kernel, node="LinalgSvdBackward0", A=_svd_backward)
linalg_qr_op = defop("linalg_qr(Tensor A, str mode='reduced') -> (Tensor Q, Tensor R)", _linalg_qr_kernel,
                     node="LinalgQrBackward0",
                     A=lambda grads, Q, R, mode: linalg_qr_backward(grads[0], grads[1], Q, R, mode))
linalg_cholesky_ex_op = defop("linalg_cholesky_ex(Tensor self, *, bool upper=False, bool check_errors=False) -> "
                              "(Tensor L, Tensor info)", _linalg_cholesky_ex_kernel, node="LinalgCholeskyExBackward0",
                              self=lambda grad, upper, L: cholesky_backward(grad, upper, L))
cholesky_solve_op = defop("cholesky_solve(Tensor self, Tensor input2, bool upper=False) -> Tensor",
                         _cholesky_solve_kernel, node="CholeskySolveBackward0",
                         joint={("self", "input2"): lambda grad, self, input2, result, upper, output_mask:
                                cholesky_solve_backward(grad, input2, result, upper, output_mask)})
cholesky_op = defop("cholesky(Tensor self, bool upper=False) -> Tensor", _cholesky_kernel, node="CholeskyBackward0",
                    self=lambda grad, upper, result: cholesky_backward(grad, upper, result))
linalg_pinv_op = defop("linalg_pinv.atol_rtol_tensor(Tensor self, *, Tensor? atol=None, Tensor? rtol=None, "
                       "bool hermitian=False) -> Tensor", _linalg_pinv_kernel, node="LinalgPinvBackward0",
                       self=lambda grad, result, self: pinv_backward(grad, result, self))
linalg_cross_op = defop("linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor", _linalg_cross_kernel,
                        node="LinalgCrossBackward0",
                        self=lambda grad, other, dim: aten.linalg_cross(other, grad, dim=dim),
                        other=lambda grad, self, dim: aten.linalg_cross(grad, self, dim=dim))


# ==========================================================================================================
# torch's top-level linear algebra (torch.linalg's functions are in glasstorch/linalg.py)
# ==========================================================================================================
@method()
@overridable
def det(input):
    """The determinant of a (batch of) square matrices."""
    return linalg_det_op(input)[0]


@method()
@overridable
def inverse(input):
    """The inverse of a (batch of) square matrices (torch.linalg.inv)."""
    return linalg_inv_ex_op(input, check_errors=True)[0]


@method()
@overridable
def slogdet(input):
    """(sign, log|det|) of a (batch of) square matrices: torch.return_types.slogdet."""
    sign, logabsdet, _, _ = linalg_slogdet_op(input)
    return return_types.slogdet((sign, logabsdet))


@method()
@overridable
def logdet(input):
    """log(det(input)) of a (batch of) square matrices: NaN where the determinant is negative, -inf
    where it is 0. As torch composes it: ``linalg_slogdet``, then ``where(sign == -1, nan, logabsdet)``
    (complex: ``sign.log() + logabsdet``); its gradient flows through those ops."""
    # torch's squareCheckInputs/checkFloatingOrComplex, named "logdet" (not "linalg.")
    if input.dim() < 2:
        raise RuntimeError("logdet: The input tensor A must have at least 2 dimensions.")
    if input.shape[-1] != input.shape[-2]:
        raise RuntimeError(f"logdet: A must be batches of square matrices, but they are {input.shape[-2]} by "
                           f"{input.shape[-1]} matrices")
    if not (input.is_floating_point() or input.is_complex()):
        raise RuntimeError(f"logdet: Expected a floating point or complex tensor as input. Got {input.dtype._legacy}")
    sign, logabsdet, _, _ = linalg_slogdet_op(input)
    if input.is_complex():
        return sign.log() + logabsdet
    from .pointwise import where     # pointwise imports this module
    return where(sign == -1., math.nan, logabsdet)


@method()
@overridable
def matrix_power(input, n):
    """``input`` multiplied by itself ``n`` times (n < 0: its inverse's power; n = 0: the identity),
    by torch's binary decomposition of ``n``, so its graph is torch's."""
    if input.dim() < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 dimensions.")
    if input.shape[-1] != input.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{input.shape[-2]} by {input.shape[-1]} matrices")
    if n == 0:
        return input.clone().copy_(eye(input.shape[-1], dtype=input.dtype, device=input.device).expand(input.shape))
    a = input
    if n < 0:
        a = inverse(input)
        n = -n
    if n == 1:
        return a.clone() if a is input else a
    if n == 2:
        return matmul(a, a)
    if n == 3:
        return matmul(matmul(a, a), a)
    z = result = None
    while n > 0:
        bit, n = n % 2, n // 2
        z = a if z is None else matmul(z, z)
        if bit:
            result = z if result is None else matmul(result, z)
    return result


def _default_cross_dim(input, other):
    shape = xp.broadcast_shapes(tuple(input.shape), tuple(other.shape))
    for i, s in enumerate(shape):
        if s == 3:
            return i
    raise RuntimeError("no dimension of size 3 in input")


@method()
@overridable
def cross(input, other, dim=None):
    """The cross product of 3-vectors along ``dim`` (without it, deprecated: the first dim of size 3)."""
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                      "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree "
                      "with that of linalg.cross in a future release.", UserWarning, stacklevel=2)
        dim = _default_cross_dim(input, other)
    return linalg_cross_op(input, other, dim=dim)


@method()
@overridable
def pinverse(input, rcond=1e-15):
    """The pseudo-inverse, singular values below ``rcond`` times the largest taken as 0."""
    # (rcond as a float64 0-d tensor on the input's device, as torch's at::full(input.options()))
    return linalg_pinv_op(input, atol=None, rtol=tensor(rcond, dtype=_dtype.float64, device=input.device))


@method()
@overridable
def svd(input, some=True, compute_uv=True):
    """torch.svd (the old form): U, S, V with A = U diag(S) V^T (reduced when ``some``)."""
    U, S, Vh = linalg_svd_op(input, not some, compute_uv or input.requires_grad)
    if not compute_uv:
        m, n = input.shape[-2], input.shape[-1]
        U = zeros(tuple(input.shape[:-2]) + (m, m if not some else min(m, n)), dtype=input.dtype)
        V = zeros(tuple(input.shape[:-2]) + (n, n if not some else min(m, n)), dtype=input.dtype)
        return return_types.svd((U, S, V))
    return return_types.svd((U, S, Vh.mT))


@method()
@overridable
def qr(input, some=True):
    """torch.qr (the old form, deprecated): torch.linalg.qr(A, 'reduced' if some else 'complete')."""
    _warnings.warn("torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch "
                   "release.\nThe boolean parameter 'some' has been replaced with a string parameter 'mode'.\n"
                   "Q, R = torch.qr(A, some)\nshould be replaced with\n"
                   "Q, R = torch.linalg.qr(A, 'reduced' if some else 'complete')", UserWarning)
    Q, R = linalg_qr_op(input, "reduced" if some else "complete")
    return return_types.qr((Q, R))


@method()
@overridable
def cholesky(input, upper=False):
    """torch.cholesky (the old form, deprecated): its own op, CholeskyBackward0."""
    _warnings.warn("torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future "
                   "PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\nL = torch.linalg.cholesky(A)\n"
                   "and\nU = torch.cholesky(A, upper=True)\nshould be replaced with\nU = torch.linalg.cholesky(A).mH\n"
                   "This transform will produce equivalent results for all valid (symmetric positive definite) inputs.",
                   UserWarning)
    return cholesky_op(input, upper)


@method()
@overridable
def cholesky_solve(input, input2, upper=False):
    """X with A X = B, B = ``input``, given A's Cholesky factor ``input2`` (lower L with A = L L^T, or
    upper U with A = U^T U; only that triangle is read); batch dims broadcast. CholeskySolveBackward0."""
    return cholesky_solve_op(input, input2, upper)


@method()
@overridable
def cholesky_inverse(input, upper=False):
    """A^-1 from A's Cholesky factor (``upper`` as in cholesky_solve): cholesky_solve of the identity."""
    identity = eye(input.shape[-1], dtype=input.dtype, device=input.device)
    return cholesky_solve_op(identity.expand(tuple(input.shape)), input, upper)


# ---- removed in torch 1.9: the names remain and say what replaced them, as torch's do ------------------------
_REMOVED = {
    "eig": "This function was deprecated since version 1.9 and is now removed. `torch.linalg.eig` returns complex "
           "tensors of dtype `cfloat` or `cdouble` rather than real tensors mimicking complex tensors.\n\nL, _ = "
           "torch.eig(A) should be replaced with:\nL_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, "
           "eigenvectors=True) should be replaced with:\nL_complex, V_complex = torch.linalg.eig(A)",
    "matrix_rank": "This function was deprecated since version 1.9 and is now removed.\nPlease use the "
                   "`torch.linalg.matrix_rank` function instead. The parameter 'symmetric' was renamed in "
                   "`torch.linalg.matrix_rank()` to 'hermitian'.",
    "solve": "This function was deprecated since version 1.9 and is now removed. `torch.solve` is deprecated in favor "
             "of `torch.linalg.solve`. `torch.linalg.solve` has its arguments reversed and does not return the LU "
             "factorization.\n\nTo get the LU factorization see `torch.lu`, which can be used with `torch.lu_solve` "
             "or `torch.lu_unpack`.\nX = torch.solve(B, A).solution should be replaced with:\nX = "
             "torch.linalg.solve(A, B)",
}


@overridable
def eig(input, eigenvectors=False):
    """Removed in torch 1.9: raises torch's error, which names torch.linalg.eig."""
    raise RuntimeError(_REMOVED["eig"])


@overridable
def matrix_rank(input, tol=None, symmetric=False):
    """Removed in torch 1.9: raises torch's error, which names torch.linalg.matrix_rank."""
    raise RuntimeError(_REMOVED["matrix_rank"])


@overridable
def solve(input, A):
    """Removed in torch 1.9: raises torch's error, which names torch.linalg.solve."""
    raise RuntimeError(_REMOVED["solve"])


# ==========================================================================================================
# A chain of matrix products: linalg.multi_dot, chain_matmul (torch's composites: mm in the cheapest order)
# ==========================================================================================================
def _matrix_chain_order(shapes):
    """split[i][j]: where the cheapest product of matrices i..j splits (the textbook dynamic program
    over the number of scalar multiplications, as torch's ``matrix_chain_order``)."""
    n = len(shapes)
    p = [s[0] for s in shapes] + [shapes[-1][1]]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if cost[i][j] is None or q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k
    return split


def _chain_product(matrices, split, i, j):
    if i == j:
        return matrices[i]
    return mm(_chain_product(matrices, split, i, split[i][j]), _chain_product(matrices, split, split[i][j] + 1, j))


@overridable
def multi_dot(tensors, *, out=None):
    """The product of two or more matrices, multiplied in the order that costs the fewest scalar
    products; the first may be a row vector and the last a column vector (1-D)."""
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first, last = tensors[0], tensors[-1]
    out_shape = []
    for which, t, pos in (("first", first, 0), ("last", last, 1)):
        if t.ndim not in (1, 2):
            raise RuntimeError(f"multi_dot(): the {which} tensor must be 1D or 2D but got {t.ndim}D")
    matrices = list(tensors)
    if first.ndim == 1:
        matrices[0] = first.unsqueeze(0)
    else:
        out_shape.append(first.shape[0])
    if last.ndim == 1:
        matrices[-1] = last.unsqueeze(-1)
    else:
        out_shape.append(last.shape[1])
    for i in range(1, n - 1):
        if tensors[i].ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {tensors[i].ndim}D")
    for i in range(1, n):
        if matrices[i].dtype != matrices[0].dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                               f"{_dtype.cpp_name(matrices[0].dtype)} and tensor {i} {_dtype.cpp_name(matrices[i].dtype)}")
        if matrices[i - 1].shape[-1] != matrices[i].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i - 1} and {i} with shapes {list(tensors[i - 1].shape)} and "
                               f"{list(tensors[i].shape)} cannot be multiplied")
    if n == 2:
        res = mm(matrices[0], matrices[1])
    elif n == 3:
        a, b = matrices[0].shape[0], matrices[1].shape[0]
        c, d = matrices[2].shape
        if a * c * (b + d) > b * d * (a + c):
            res = mm(matrices[0], mm(matrices[1], matrices[2]))
        else:
            res = mm(mm(matrices[0], matrices[1]), matrices[2])
    else:
        split = _matrix_chain_order([tuple(m.shape) for m in matrices])
        res = _chain_product(matrices, split, 0, n - 1)
    res = res.view(out_shape)
    return res if out is None else out.copy_(res)


@overridable
def chain_matmul(*matrices, out=None):
    """Deprecated in torch for ``linalg.multi_dot`` (which takes a list): the product of the matrices."""
    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                  "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
                  "multiple parameters.", UserWarning, stacklevel=2)
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    if len(matrices) == 1:
        res = matrices[0].clone()
    else:
        res = multi_dot(list(matrices))
    return res if out is None else out.copy_(res)


# ==========================================================================================================
# The matrix exponential, QR in Householder form (geqrf) and the product of Householder reflectors
# (what nn.utils.parametrizations.orthogonal is built on)
# ==========================================================================================================
def _matrix_exp_kernel(self):
    if self.ndim < 2 or self.shape[-1] != self.shape[-2]:
        raise RuntimeError(f"linalg.matrix_exp: A must be batches of square matrices, but they are "
                           f"{self.shape[-2] if self.ndim > 1 else 1} by {self.shape[-1] if self.ndim else 1} matrices")
    _check_float_array("linalg.matrix_exp", self)
    if self.size == 0:
        return self.copy()
    # scaling and squaring: exp(A) = exp(A / 2^s)^(2^s), with A / 2^s small enough (1-norm <= 1/2)
    # that an 18-term Taylor series is exact to the dtype's precision
    norm = float(xp.abs(self).sum(axis=-2).max())
    s = max(0, int(math.ceil(math.log2(norm))) + 1) if norm > 0 else 0
    scaled = self / (2.0 ** s)
    eye_n = xp.broadcast_to(xp.eye(self.shape[-1], dtype=self.dtype, like=self), self.shape)
    result = eye_n.copy()
    for j in range(18, 0, -1):   # Horner: I + A/1 (I + A/2 (I + ... (I + A/18)))
        result = eye_n + _matmul(scaled, result) / j
    for _ in range(s):
        result = _matmul(result, result)
    return result.astype(self.dtype, copy=False)


def _check_float_array(fn, a):
    if a.dtype.kind not in "fc":
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got "
                           f"{_DTYPE_OF[a.dtype]._legacy}")


def linalg_matrix_exp_differential(self, grad, adjoint):
    """torch's ``linalg_matrix_exp_differential``: the derivative of exp at A in the direction E is the
    upper-right block of exp([[A, E], [0, A]]) (with A^H for the adjoint, the backward)."""
    n = self.shape[-1]
    A = mH(self) if adjoint else self
    meta = aten.cat([aten.cat([A, grad], -1), aten.cat([aten.zeros_like(A), A], -1)], -2)
    return aten.slice.Tensor(aten.slice.Tensor(aten.linalg_matrix_exp(meta), -2, 0, n), -1, n, 2 * n)


def _geqrf_kernel(self):
    if self.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    _check_float_array("geqrf", self)
    m, n = self.shape[-2:]
    a = _empty_like(self, self.shape)
    tau = _empty_like(self, self.shape[:-2] + (min(m, n),))
    # (LAPACK's raw output: R on and above the diagonal, the reflectors below)
    for idx in itertools.product(*map(range, self.shape[:-2])):
        h, t = xp.linalg.qr(self[idx], mode="raw")
        a[idx], tau[idx] = h.T, t
    return column_major(a), tau


def _check_householder(input, tau):
    fn = "torch.linalg.householder_product"
    if input.ndim < 2:
        raise RuntimeError(f"{fn}: input must have at least 2 dimensions.")
    if input.shape[-2] < input.shape[-1]:
        raise RuntimeError(f"{fn}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if input.shape[-1] < tau.shape[-1]:
        raise RuntimeError(f"{fn}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if input.ndim - tau.ndim != 1:
        raise RuntimeError(f"{fn}: Expected tau to have one dimension less than input, but got tau.ndim equal to "
                           f"{tau.ndim} and input.ndim is equal to {input.ndim}")
    if input.dtype != tau.dtype:
        raise RuntimeError(f"{fn}: tau dtype {_DTYPE_OF[tau.dtype]} does not match input dtype "
                           f"{_DTYPE_OF[input.dtype]}")


def _householder_product_kernel(input, tau):
    _check_householder(input, tau)
    _check_float_array("torch.linalg.householder_product", input)
    m, n = input.shape[-2:]
    q = xp.broadcast_to(xp.eye(m, n, dtype=input.dtype, like=input), input.shape).copy()
    for i in range(tau.shape[-1] - 1, -1, -1):   # Q = H_0 H_1 ... H_{k-1} I[:, :n], applied from the right end
        v = input[..., :, i].copy()
        v[..., :i] = 0
        v[..., i] = 1
        # H q = q - tau v (v^H q)
        q -= tau[..., i, None, None] * v[..., :, None] * (v.conj()[..., None, :] @ q)
    return column_major(q)   # (orgqr forms Q in a column-major copy of input)


def _reflector(input, i):
    """v_i: column i of ``input`` below the diagonal, 1 on it, 0 above (a Tensor or an array)."""
    col = aten.select.int(input, -1, i)
    below = aten.slice.Tensor(col, -1, i + 1, input.shape[-2])
    head = aten.zeros_like(aten.slice.Tensor(col, -1, 0, i + 1))
    one = aten.zeros_like(aten.slice.Tensor(col, -1, 0, 1)) + 1
    return aten.cat([aten.slice.Tensor(head, -1, 0, i), one, below], -1)


def householder_product_backward(grad, input, tau):
    """The gradient of Q = (H_0 ... H_{k-1})[:, :n], H_i = I - tau_i v_i v_i^T (real inputs): with
    M_i = (H_0..H_{i-1})^T [grad, 0] (H_{i+1}..H_{k-1})^T, the gradient of v_i is
    -tau_i (M_i + M_i^T) v_i (its entries below the diagonal are input's) and that of tau_i is
    -v_i^T M_i v_i. Written with aten ops, so it differentiates again (create_graph=True)."""
    if is_complex(input):
        raise NotImplementedError("glasstorch: the derivative of linalg.householder_product is implemented for "
                                  "real inputs only")
    m, n, k = input.shape[-2], input.shape[-1], tau.shape[-1]
    eye_m = aten.diag_embed(aten.zeros_like(aten.select.int(input, -1, 0)) + 1)
    reflectors, H = [], []
    for i in range(k):
        v = _reflector(input, i)
        t = aten.unsqueeze(aten.unsqueeze(aten.select.int(tau, -1, i), -1), -1)
        reflectors.append((v, t))
        H.append(eye_m - t * (aten.unsqueeze(v, -1) @ aten.unsqueeze(v, -2)))
    suffix = [eye_m] * (k + 1)       # suffix[i] = H_i ... H_{k-1}
    for i in range(k - 1, -1, -1):
        suffix[i] = H[i] @ suffix[i + 1]
    g_full = grad if m == n else aten.cat([grad, aten.zeros_like(aten.slice.Tensor(eye_m, -1, 0, m - n))], -1)
    prefix, g_cols, g_tau = eye_m, [], []
    for i in range(k):
        v, t = reflectors[i]
        M = aten.transpose.int(prefix, -1, -2) @ g_full @ aten.transpose.int(suffix[i + 1], -1, -2)
        Mv = aten.squeeze.dim((M + aten.transpose.int(M, -1, -2)) @ aten.unsqueeze(v, -1), -1)
        gv = -aten.squeeze.dim(t, -1) * Mv
        # only the entries below the diagonal are the input's
        g_cols.append(aten.cat([aten.zeros_like(aten.slice.Tensor(gv, -1, 0, i + 1)),
                                aten.slice.Tensor(gv, -1, i + 1, m)], -1))
        vMv = aten.squeeze.dim(aten.squeeze.dim(aten.unsqueeze(v, -2) @ M @ aten.unsqueeze(v, -1), -1), -1)
        g_tau.append(-vMv)
        prefix = prefix @ H[i]
    zero_col = aten.zeros_like(aten.select.int(input, -1, 0))
    g_input = aten.stack(g_cols + [zero_col] * (n - k), -1)
    return g_input, aten.stack(g_tau, -1)


linalg_matrix_exp_op = defop("linalg_matrix_exp(Tensor self) -> Tensor", _matrix_exp_kernel,
                             node="LinalgMatrixExpBackward0",
                             self=lambda grad, self: linalg_matrix_exp_differential(self, grad, True))
geqrf_op = defop("geqrf(Tensor self) -> (Tensor a, Tensor tau)", _geqrf_kernel, node="GeqrfBackward0",
                 self=not_implemented("geqrf"))
householder_product_op = defop("linalg_householder_product(Tensor input, Tensor tau) -> Tensor",
                               _householder_product_kernel, node="LinalgHouseholderProductBackward0",
                               joint={("input", "tau"): lambda grad, input, tau:
                                      householder_product_backward(grad, input, tau)})


@method()
@overridable
def matrix_exp(input):
    """exp(A) = sum_k A^k / k! of a (batch of) square matrices (scaling and squaring of a Taylor series)."""
    return linalg_matrix_exp_op(input)


@method()
@overridable
def geqrf(input):
    """QR in LAPACK's compact form: (a, tau), R on and above a's diagonal, the Householder vectors
    below it; ``linalg.householder_product(a, tau)`` gives Q. Not differentiable (as in torch)."""
    return return_types.geqrf(geqrf_op(input))


@method("orgqr")
@overridable
def householder_product(input, tau):
    """The first n columns of H_0 H_1 ... H_{k-1}, H_i = I - tau_i v_i v_i^H, v_i column i of
    ``input`` below the diagonal with 1 on it (torch.linalg.householder_product, torch.orgqr)."""
    return householder_product_op(input, tau)


orgqr = householder_product
