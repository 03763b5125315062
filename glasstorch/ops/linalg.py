"""Matrix products (mm, bmm, mv, dot and matmul's decomposition into them, as torch records it),
einsum, and torch.linalg's common functions."""
from .. import _dtype
from .._tensor import Tensor, _wrap
from ..backends import xp
from ._op import _state, method, record, make_node_class, result_dtype


def _same_dtype(a, b, fn):
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {a.dtype.name.replace('float32', 'float')} "
                           f"!= {b.dtype.name.replace('float32', 'float')}")


class MmBackward0(make_node_class("MmBackward0", None, ("self", "mat2"))):
    """d(A B) = dA B + A dB:  grad_A = grad B^T,  grad_B = A^T grad."""

    def backward(self, grad):
        a, b = self._unpack_saved()
        return (grad.mm(b.t()) if b is not None else None), (a.t().mm(grad) if a is not None else None)


@method()
def mm(input, mat2):
    if input._data.ndim != 2 or mat2._data.ndim != 2:
        raise RuntimeError(f"{'self' if input._data.ndim != 2 else 'mat2'} must be a matrix")
    if input._data.shape[1] != mat2._data.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({input._data.shape[0]}x{input._data.shape[1]} "
                           f"and {mat2._data.shape[0]}x{mat2._data.shape[1]})")
    _same_dtype(input, mat2, "mm")
    res = _wrap(input._data @ mat2._data)
    if _state.enabled and (input._requires_grad or mat2._requires_grad):
        record(MmBackward0, res, (input, mat2), (input if mat2._requires_grad else None,
                                                 mat2 if input._requires_grad else None), meta_check=False)
    return res


class BmmBackward0(make_node_class("BmmBackward0", None, ("self", "mat2"))):
    def backward(self, grad):
        a, b = self._unpack_saved()
        return (grad.bmm(b.transpose(1, 2)) if b is not None else None), \
            (a.transpose(1, 2).bmm(grad) if a is not None else None)


@method()
def bmm(input, mat2):
    if input._data.ndim != 3 or mat2._data.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor" if input._data.ndim != 3 else "batch2 must be a 3D tensor")
    if input._data.shape[0] != mat2._data.shape[0] or input._data.shape[2] != mat2._data.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{input._data.shape[0]}, {input._data.shape[2]}] but got: "
                           f"[{mat2._data.shape[0]}, {mat2._data.shape[1]}].")
    _same_dtype(input, mat2, "bmm")
    res = _wrap(xp.matmul(input._data, mat2._data))
    if _state.enabled and (input._requires_grad or mat2._requires_grad):
        record(BmmBackward0, res, (input, mat2), (input if mat2._requires_grad else None,
                                                  mat2 if input._requires_grad else None), meta_check=False)
    return res


class MvBackward0(make_node_class("MvBackward0", None, ("self", "vec"))):
    def backward(self, grad):
        a, v = self._unpack_saved()
        return (grad.unsqueeze(1) * v.unsqueeze(0) if v is not None else None), \
            (a.t().mv(grad) if a is not None else None)


@method()
def mv(input, vec):
    if input._data.ndim != 2 or vec._data.ndim != 1:
        raise RuntimeError("vector + matrix @ vector expected, got " + f"{vec._data.ndim}, {input._data.ndim}, "
                           f"{vec._data.ndim}")
    if input._data.shape[1] != vec._data.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input._data.shape[0]}), mat ({input._data.shape[0]}x"
                           f"{input._data.shape[1]}), vec ({vec._data.shape[0]})")
    _same_dtype(input, vec, "mv")
    res = _wrap(input._data @ vec._data)
    if _state.enabled and (input._requires_grad or vec._requires_grad):
        record(MvBackward0, res, (input, vec), (input if vec._requires_grad else None,
                                                vec if input._requires_grad else None), meta_check=False)
    return res


class DotBackward0(make_node_class("DotBackward0", None, ("self", "tensor"))):
    def backward(self, grad):
        a, b = self._unpack_saved()
        return (grad * b if b is not None else None), (grad * a if a is not None else None)


@method()
def dot(input, tensor):
    if input._data.ndim != 1 or tensor._data.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input._data.ndim}D and {tensor._data.ndim}D tensors")
    if input._data.shape[0] != tensor._data.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input._data.shape[0]}] and src "
                           f"[{tensor._data.shape[0]}] to have the same number of elements, but got "
                           f"{input._data.shape[0]} and {tensor._data.shape[0]} elements respectively")
    _same_dtype(input, tensor, "dot")
    res = _wrap(xp.asarray(xp.dot(input._data, tensor._data)))
    if _state.enabled and (input._requires_grad or tensor._requires_grad):
        record(DotBackward0, res, (input, tensor), (input if tensor._requires_grad else None,
                                                    tensor if input._requires_grad else None), meta_check=False)
    return res


inner = dot
vdot = dot
SqueezeBackward4 = make_node_class("SqueezeBackward4", lambda self, grad: grad.unsqueeze(self.dim))


def _unsafe_view(input, shape):
    from .shape import UnsafeViewBackward0
    res = _wrap(input._data.reshape(shape))
    res._vc = input._vc
    if input._requires_grad and _state.enabled:
        record(UnsafeViewBackward0, res, (input,), meta_check=False).self_sizes = input._data.shape
    return res


@method("matmul", "__matmul__")
def matmul(input, other):
    """torch.matmul, decomposed into mm/mv/bmm with views exactly as torch records it."""
    if not isinstance(other, Tensor) or not isinstance(input, Tensor):
        raise TypeError(f"matmul(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    na, nb = input._data.ndim, other._data.ndim
    if na == 0 or nb == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {na}D and {nb}D")
    if na == 2 and nb == 2:
        return mm(input, other)
    if na == 1 and nb == 1:
        return dot(input, other)
    if na == 2 and nb == 1:
        return mv(input, other)
    if na == 1 and nb == 2:
        out = mm(input.unsqueeze(0), other)
        res = _wrap(out._data[0])
        if out._requires_grad and _state.enabled:
            record(SqueezeBackward4, res, (out,), meta_check=False).dim = 0
        return res
    if na >= 3 and nb <= 2:
        # fold the batch into the rows: (b..., n, m) @ (m, k) -> one mm
        if input._data.shape[-1] != other._data.shape[0]:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                               f"({input._data.size // input._data.shape[-1]}x{input._data.shape[-1]} and "
                               f"{other._data.shape[0]}x{other._data.shape[-1] if nb == 2 else 1})")
        folded = input.reshape(-1, input._data.shape[-1])
        out = mm(folded, other) if nb == 2 else mv(folded, other)
        shape = input._data.shape[:-1] + ((other._data.shape[1],) if nb == 2 else ())
        return _unsafe_view(out, shape)
    # general batched case: broadcast the batch dims, expand, fold to 3-D, bmm
    a_shape, b_shape = input._data.shape, other._data.shape
    a2 = input if na > 1 else input.unsqueeze(0)
    b2 = other if nb > 1 else other.unsqueeze(-1)
    if a2._data.shape[-1] != b2._data.shape[-2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{a2._data.shape[0]}, {a2._data.shape[-1]}] but got: [{b2._data.shape[0]}, "
                           f"{b2._data.shape[-2]}].")
    batch = xp.broadcast_shapes(a2._data.shape[:-2], b2._data.shape[:-2])
    n, m, k = a2._data.shape[-2], a2._data.shape[-1], b2._data.shape[-1]
    nb_ = 1
    for s in batch:
        nb_ *= s
    ae = a2.expand(batch + (n, m)).reshape(nb_, n, m)
    be = b2.expand(batch + (m, k)).reshape(nb_, m, k)
    out = bmm(ae, be)
    shape = batch + ((n,) if na > 1 else ()) + ((k,) if nb > 1 else ())
    return _unsafe_view(out, shape)


Tensor.__rmatmul__ = lambda self, other: matmul(other, self)


class AddmmBackward0(make_node_class("AddmmBackward0", None, ("mat1", "mat2"))):
    def backward(self, grad):
        m1, m2 = self._unpack_saved()
        gb = grad * self.beta if self.beta != 1 else grad
        g1 = grad.mm(m2.t()) if m2 is not None else None
        g2 = m1.t().mm(grad) if m1 is not None else None
        if self.alpha != 1:
            g1 = g1 * self.alpha if g1 is not None else None
            g2 = g2 * self.alpha if g2 is not None else None
        return gb, g1, g2


@method()
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2) -- what nn.Linear records (AddmmBackward0)."""
    if mat1._data.ndim != 2 or mat2._data.ndim != 2:
        raise RuntimeError("mat1 must be a matrix, got " + f"{mat1._data.ndim}-D tensor")
    if mat1._data.shape[1] != mat2._data.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1._data.shape[0]}x{mat1._data.shape[1]} "
                           f"and {mat2._data.shape[0]}x{mat2._data.shape[1]})")
    _same_dtype(mat1, mat2, "addmm")
    p = mat1._data @ mat2._data
    if alpha != 1:
        p *= alpha
    p += input._data if beta == 1 else beta * input._data
    res = _wrap(p)
    if _state.enabled and (input._requires_grad or mat1._requires_grad or mat2._requires_grad):
        node = record(AddmmBackward0, res, (input, mat1, mat2),
                      (mat1 if mat2._requires_grad else None, mat2 if mat1._requires_grad else None))
        node.alpha, node.beta = alpha, beta
    return res


@method()
def outer(input, vec2):
    return input.reshape(-1, 1) * vec2


ger = outer


@method()
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    return input * beta + bmm(batch1, batch2) * alpha if (alpha != 1 or beta != 1) else input + bmm(batch1, batch2)


def einsum(equation, *operands):
    """einsum by reduction to elementwise products and sums (differentiable through them) for up
    to two operands, the common case; more operands are contracted pairwise left to right."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    eq = equation.replace(" ", "")
    if "->" in eq:
        lhs, out = eq.split("->")
    else:
        lhs = eq
        letters = lhs.replace(",", "")
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation" if
                           len(operands) > len(terms) else
                           "einsum(): fewer operands were provided than specified in the equation")
    if "." in eq:
        raise NotImplementedError("einsum with '...' is not supported in glasstorch yet")
    # pairwise contraction
    cur, cur_t = operands[0], terms[0]
    for i in range(1, len(operands)):
        later = "".join(terms[i + 1:]) + out
        cur, cur_t = _contract(cur, cur_t, operands[i], terms[i], later)
    return _finish(cur, cur_t, out)


def _diag_letters(t, term):
    """Take diagonals for repeated letters within one term (einsum 'ii->i')."""
    while len(set(term)) != len(term):
        for c in term:
            if term.count(c) > 1:
                i = term.index(c)
                j = term.index(c, i + 1)
                t = t.diagonal(0, i, j)
                term = term[:i] + term[i + 1:j] + term[j + 1:] + c
                break
    return t, term


def _contract(a, ta, b, tb, keep):
    a, ta = _diag_letters(a, ta)
    b, tb = _diag_letters(b, tb)
    letters = []
    for c in ta + tb:
        if c not in letters:
            letters.append(c)
    summed = [c for c in letters if c not in keep and c in ta and c in tb]
    # sum letters only in one operand and not needed later
    for t_name in ("a", "b"):
        t, term, other = (a, ta, tb) if t_name == "a" else (b, tb, ta)
        only = [c for c in term if c not in other and c not in keep]
        if only:
            t = t.sum(tuple(term.index(c) for c in only))
            term = "".join(c for c in term if c not in only)
        if t_name == "a":
            a, ta = t, term
        else:
            b, tb = t, term
    batch = [c for c in ta if c in tb and c not in summed]
    left = [c for c in ta if c not in tb]
    right = [c for c in tb if c not in ta]
    sizes = {}
    for c, s in list(zip(ta, a.shape)) + list(zip(tb, b.shape)):
        sizes[c] = s

    def prod(cs):
        p = 1
        for c in cs:
            p *= sizes[c]
        return p
    A = a.permute([ta.index(c) for c in batch + left + summed]).reshape(prod(batch), prod(left), prod(summed))
    B = b.permute([tb.index(c) for c in batch + summed + right]).reshape(prod(batch), prod(summed), prod(right))
    C = bmm(A, B).reshape([sizes[c] for c in batch + left + right])
    return C, "".join(batch + left + right)


def _finish(t, term, out):
    t, term = _diag_letters(t, term)
    extra = [c for c in term if c not in out]
    if extra:
        t = t.sum(tuple(term.index(c) for c in extra))
        term = "".join(c for c in term if c not in extra)
    if term != out:
        t = t.permute([term.index(c) for c in out])
    return t


def tensordot(a, b, dims=2):
    if isinstance(dims, int):
        da = list(range(a.dim() - dims, a.dim()))
        db = list(range(dims))
    else:
        da, db = [list(d) if isinstance(d, (list, tuple)) else [d] for d in dims]
    letters = "abcdefghijklmnopqrstuvwxyz"
    ta = letters[:a.dim()]
    tb = list(letters[a.dim():a.dim() + b.dim()])
    for i, j in zip(da, db):
        tb[j] = ta[i]
    tb = "".join(tb)
    out = "".join(c for c in ta if c not in tb) + "".join(c for c in tb if c not in ta)
    return einsum(f"{ta},{tb}->{out}", a, b)


def kron(a, b):
    r = (a.reshape(a.shape[0], 1, a.shape[1], 1) * b.reshape(1, b.shape[0], 1, b.shape[1])) if a.dim() == 2 else \
        (a.reshape(-1, 1) * b.reshape(1, -1))
    return r.reshape(a.shape[0] * b.shape[0], -1) if a.dim() == 2 else r.reshape(-1)


# ---- torch.linalg -------------------------------------------------------------------------------
class LinalgDetBackward0(make_node_class("LinalgDetBackward0", None, ("A", "result"))):
    def backward(self, grad):
        a, r = self._unpack_saved()
        return (grad * r).unsqueeze(-1).unsqueeze(-1) * inv(a).mT


def det(A):
    res = _wrap(xp.asarray(xp.linalg.det(A._data)).astype(A._data.dtype))
    if A._requires_grad and _state.enabled:
        record(LinalgDetBackward0, res, (A,), (A, res), saved_output=1, meta_check=False)
    return res


class LinalgInvExBackward0(make_node_class("LinalgInvExBackward0", None, ("inverse",))):
    def backward(self, grad):
        (r,) = self._unpack_saved()
        return -(r.mT @ grad @ r.mT)


def inv(A):
    try:
        r = xp.linalg.inv(A._data)
    except xp.linalg.LinAlgError:
        raise RuntimeError("linalg.inv: The diagonal element 1 is zero, the inversion could not be completed because "
                           "the input matrix is singular.") from None
    res = _wrap(r.astype(A._data.dtype))
    if A._requires_grad and _state.enabled:
        record(LinalgInvExBackward0, res, (A,), (res,), saved_output=0, meta_check=False)
    return res


def solve(A, B, *, left=True):
    return inv(A) @ B


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False):
    if ord == "fro":
        from .reduction import vector_norm
        return vector_norm(A, 2, dim, keepdim)
    if ord == "nuc":
        s = xp.linalg.svd(A._data, compute_uv=False)
        return _wrap(s.sum(-1))
    return _wrap(xp.asarray(xp.linalg.norm(A._data, ord, axis=dim, keepdims=keepdim)))


def eig(A):
    w, v = xp.linalg.eig(A._data)
    c = "complex64" if A._data.dtype == xp.float32 else "complex128"
    return _wrap(w.astype(c)), _wrap(v.astype(c))


def eigh(A, UPLO="L"):
    w, v = xp.linalg.eigh(A._data, UPLO)
    return _wrap(w), _wrap(v)


def eigvals(A):
    return eig(A)[0]


def svd(A, full_matrices=True):
    u, s, vh = xp.linalg.svd(A._data, full_matrices=full_matrices)
    return _wrap(u), _wrap(s), _wrap(vh)


def qr(A, mode="reduced"):
    q, r = xp.linalg.qr(A._data, mode=mode)
    return _wrap(q), _wrap(r)


def cholesky(A, upper=False):
    L = xp.linalg.cholesky(A._data)
    return _wrap(L.swapaxes(-1, -2) if upper else L)


def matrix_rank(A):
    return _wrap(xp.asarray(xp.linalg.matrix_rank(A._data)).astype("int64"))


def pinv(A):
    return _wrap(xp.linalg.pinv(A._data))


def slogdet(A):
    s, l = xp.linalg.slogdet(A._data)
    return _wrap(xp.asarray(s)), _wrap(xp.asarray(l))


def matrix_power(A, n):
    return _wrap(xp.linalg.matrix_power(A._data, n))


def cross(a, b, dim=-1):
    return _wrap(xp.cross(a._data, b._data, axis=dim))


Tensor.det = det
Tensor.inverse = inv
Tensor.matrix_power = matrix_power
