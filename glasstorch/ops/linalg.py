"""Matrix products (mm, bmm, mv, dot and matmul's decomposition into them, as torch records it),
einsum, and torch.linalg's common functions."""
from .. import _checks, _dtype
from .._tensor import Tensor, _wrap
from .._array import xp
from ._op import _state, method, record, make_node_class, result_dtype


def _same_dtype(a, b, fn):
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_dtype.cpp_name(a.dtype)} != "
                           f"{_dtype.cpp_name(b.dtype)}")


class MmBackward0(make_node_class("MmBackward0", None, ("self", "mat2"))):
    """d(A B) = dA B + A dB:  grad_A = grad B^T,  grad_B = A^T grad."""

    def backward(self, grad):
        a, b = self._unpack_saved()
        return (grad.mm(b.t()) if b is not None else None), (a.t().mm(grad) if a is not None else None)


@method()
def mm(input, mat2):
    if not isinstance(mat2, Tensor) or not isinstance(input, Tensor):
        _checks.expect_tensor("mm", input, "input", 1)
        _checks.expect_tensor("mm", mat2, "mat2", 2)
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
def matmul(input, other):
    """torch.matmul, decomposed into dot/mv/mm/bmm with views exactly as torch's _matmul_impl does,
    so the recorded graph is torch's."""
    if not isinstance(other, Tensor) or not isinstance(input, Tensor):
        raise TypeError(f"matmul(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    na, nb = input._data.ndim, other._data.ndim
    if na == 0 or nb == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {na}D and {nb}D")
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
    if na == 2 and nb == 2:
        return mm(input, other)
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
            out = _unsafe_view(folded.mm(t2), out_shape + (t2._data.shape[1],))
            return out.mT.contiguous() if transpose else out
        return _unsafe_view(folded.mv(t2), out_shape)
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
        from .pointwise import broadcast_error
        raise broadcast_error(batch1, batch2) from None
    nbatch = 1
    for s in batch:
        nbatch *= s
    a3 = input.expand(batch + (n, m1)).reshape(nbatch, n, m1)
    if nb == 1:
        b3 = other.expand(batch + (m2,)).reshape(nbatch, m2).unsqueeze(2)
        out = bmm(a3, b3).squeeze(-1)
    else:
        b3 = other.expand(batch + (m2, p)).reshape(nbatch, m2, p)
        out = bmm(a3, b3)
    return _unsafe_view(out, batch + ((n,) if na > 1 else ()) + ((p,) if nb > 1 else ()))


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
    try:
        p += input._data if beta == 1 else beta * input._data
    except ValueError:
        raise RuntimeError(f"The expanded size of the tensor ({p.shape[-1]}) must match the existing size "
                           f"({input._data.shape[-1]}) at non-singleton dimension 1.  Target sizes: {list(p.shape)}."
                           f"  Tensor sizes: {list(input._data.shape)}") from None
    res = _wrap(p)
    if _state.enabled and (input._requires_grad or mat1._requires_grad or mat2._requires_grad):
        node = record(AddmmBackward0, res, (input, mat1, mat2),
                      (mat1 if mat2._requires_grad else None, mat2 if mat1._requires_grad else None))
        node.alpha, node.beta = alpha, beta
    return res


@method()
def outer(input, vec2):
    for name, t in (("self", input), ("vec2", vec2)):
        if t.dim() != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.dim()}-D")
    return input.reshape(-1, 1) * vec2


ger = outer


class BaddbmmBackward0(make_node_class("BaddbmmBackward0", None, ("batch1", "batch2"))):
    """beta * input + alpha * (b1 @ b2), batched (the engine reduces input's broadcast gradient)."""

    def backward(self, grad):
        b1, b2 = self._unpack_saved()
        gi = grad if self.beta == 1 else grad * self.beta
        g1 = grad.bmm(b2.transpose(1, 2)) if b2 is not None else None
        g2 = b1.transpose(1, 2).bmm(grad) if b1 is not None else None
        if self.alpha != 1:
            g1 = g1 * self.alpha if g1 is not None else None
            g2 = g2 * self.alpha if g2 is not None else None
        return gi, g1, g2


@method()
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    p = bmm(batch1.detach(), batch2.detach())._data   # (shape and dtype checks included)
    if alpha != 1:
        p = p * alpha
    res = _wrap(p + (input._data if beta == 1 else beta * input._data))
    if _state.enabled and (input._requires_grad or batch1._requires_grad or batch2._requires_grad):
        node = record(BaddbmmBackward0, res, (input, batch1, batch2),
                      (batch1 if batch2._requires_grad else None, batch2 if batch1._requires_grad else None))
        node.alpha, node.beta = alpha, beta
    return res


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


def tensordot(a, b, dims=2, out=None):
    """torch.tensordot: contracted dims moved last in ``a`` and first in ``b``, both reshaped to
    matrices, one mm, reshaped to the free dims (torch's decomposition, so its graph)."""
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da, db = list(range(a.dim() - dims, a.dim())), list(range(dims))
    else:
        da, db = [list(d) if isinstance(d, (list, tuple)) else [d] for d in dims]
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
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
    t1 = a.permute(free_a + da).reshape(size1, csize)
    t2 = b.permute(db + free_b).reshape(csize, size2)
    res = mm(t1, t2).reshape([a.shape[i] for i in free_a] + [b.shape[j] for j in free_b])
    return res if out is None else _checks.write_out("tensordot", res, out)


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
    _checks.check_square_float("linalg.det", A)
    res = _wrap(xp.asarray(xp.linalg.det(A._data)).astype(A._data.dtype))
    if A._requires_grad and _state.enabled:
        record(LinalgDetBackward0, res, (A,), (A, res), saved_output=1, meta_check=False)
    return res


class LinalgInvExBackward0(make_node_class("LinalgInvExBackward0", None, ("inverse",))):
    def backward(self, grad):
        (r,) = self._unpack_saved()
        return -(r.mT @ grad @ r.mT)


def inv(A):
    _checks.check_square_float("linalg.inv", A)
    try:
        r = xp.linalg.inv(A._data)
    except xp.linalg.LinAlgError:
        raise _checks.LinAlgError("linalg.inv: The diagonal element 1 is zero, the inversion could not be completed because "
                           "the input matrix is singular.") from None
    res = _wrap(r.astype(A._data.dtype))
    if A._requires_grad and _state.enabled:
        record(LinalgInvExBackward0, res, (A,), (res,), saved_output=0, meta_check=False)
    return res


def solve(A, B, *, left=True):
    _checks.check_square_float("linalg.solve", A)
    try:
        return inv(A) @ B
    except _checks.LinAlgError:
        raise _checks.LinAlgError("torch.linalg.solve: The solver failed because the input matrix is singular.") \
            from None


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
    _checks.check_square_float("linalg.cholesky", A)
    try:
        L = xp.linalg.cholesky(A._data)
    except xp.linalg.LinAlgError:
        raise _checks.LinAlgError("linalg.cholesky: The factorization could not be completed because the input is "
                                  "not positive-definite.") from None
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
    if a.shape[dim] != 3 or b.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {a.shape[dim]} and "
                           f"{b.shape[dim]}")
    return _wrap(xp.cross(a._data, b._data, axis=dim))


Tensor.det = det
Tensor.inverse = inv
Tensor.matrix_power = matrix_power
