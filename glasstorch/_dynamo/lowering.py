"""Lowering: the commonest ops of a captured graph, and their derivatives, written as NumPy
expressions in the generated code instead of calls of the op's kernel and formula.

An op's kernel serves every call eager makes: it checks its arguments, promotes dtypes, lays the
result out as torch would, and raises torch's errors. In a captured graph all of that was settled
when the capture ran and the guards keep it settled (shapes, dtypes and strides of the inputs are
guarded; every value's shape, dtype and layout is in its node's ``meta``). What is left of, say,
``aten.add.Tensor`` on two row-major float32 arrays of one shape is ``a + b`` -- the very NumPy
call the kernel ends in. Likewise the backward formula of ``aten.mm`` on real arrays is
``grad @ mat2.T``: ``aten.mm(grad, conj(aten.t(mat2)))`` with the dispatch and the checks
settled.

So each entry here writes exactly the NumPy operations the kernel (or formula) performs for the
case it accepts, and declines (returns None) every other case, which then calls the kernel or
formula as before. It accepts only real floating dtypes (float32/float64), all operands of the
node's dtype, and, for element-wise ops, row-major operands whose first one has the result's
shape (then NumPy's result is laid out as torch's TensorIterator lays it out, which the kernel's
``like_operands`` would otherwise arrange). ``tests/test_compile.py`` checks each entry against
the kernel and formula it stands for, bit for bit.

Each entry also says whether its result is a *fresh* array (owned by the generated code, so a
later element-wise op may write into it when nothing else reads it: ``out=``) or may share memory
with an input (a view, a pass-through gradient). Element-wise ops name their ufunc and operands,
and the lowered derivatives are trees of ufuncs (:class:`~glasstorch._dynamo.memory.U`), so that
the memory planner (memory.py) can run a chain of them in one buffer.
"""
import numpy as np

from . import config, jit
from ..ops.linalg import _column_major
from ..ops.nn_loss import _safe_targets
from ..ops.pointwise import _ties_give_second
from .memory import Reshape, U

_REAL_FLOATS = (np.dtype("float32"), np.dtype("float64"))


def real_float(node):
    dt = node.meta.get("dtype")
    return dt is not None and dt.numpy_dtype in _REAL_FLOATS


def _is_node(v):
    from ..fx.graph import Node
    return isinstance(v, Node)


def _same_dtype(node, *values):
    """``node``'s dtype is float32/float64 and every tensor among ``values`` has it; the others are
    Python numbers (not bools: those promote differently)."""
    if not real_float(node):
        return False
    for v in values:
        if _is_node(v):
            if v.meta.get("dtype") != node.meta["dtype"]:
                return False
        elif type(v) not in (int, float):
            return False
    return True


def _row_major_elementwise(node, first, *others):
    """NumPy lays the result out as torch does: every tensor operand row-major, the first of the
    result's shape."""
    if not _is_node(first) or tuple(first.meta["shape"]) != tuple(node.meta["shape"]):
        return False
    return all(v.meta.get("contiguous") for v in (first,) + others if _is_node(v))


# -- the forward -------------------------------------------------------------------------------
class Lowered:
    """A node written as NumPy: ``expr`` computes it; ``fresh``: the result is a new array (not a
    view of an operand); ``ufunc``/``operands``: for an element-wise op, the NumPy ufunc and its
    operands, so that the code generator may write ``ufunc(*operands, out=<a dying operand>)``."""

    def __init__(self, expr, fresh, ufunc=None, operands=(), reshape=False):
        self.expr, self.fresh, self.ufunc, self.operands = expr, fresh, ufunc, tuple(operands)
        self.reshape = reshape       # ``expr`` reshapes its one operand, row-major: the same memory


# name -> function(node, args by schema name, src) -> Lowered or None.
# ``src(value)`` gives the source of an argument (a node's variable, or a constant).
FORWARD = {}


def _forward(*names):
    def register(fn):
        for name in names:
            FORWARD[name] = fn
        return fn
    return register


_BINARY = {"add.Tensor": ("+", "np.add"), "sub.Tensor": ("-", "np.subtract"), "mul.Tensor": ("*", "np.multiply"),
           "div.Tensor": ("/", "np.divide")}


@_forward(*_BINARY)
def _binary(node, args, src):
    a, b = args["self"], args["other"]
    if args.get("alpha", 1) != 1 or not _same_dtype(node, a, b) or not _row_major_elementwise(node, a, b):
        return None
    if not _is_node(b):       # the kernel's promote_arrays makes a Python number the array's scalar type
        b = node.meta["dtype"].numpy_dtype.type(b)
    symbol, ufunc = _BINARY[_key(node)]
    return Lowered(f"{src(a)} {symbol} {src(b)}", True, ufunc, (a, b))


_UNARY = {"tanh.default": "np.tanh", "exp.default": "np.exp", "neg.default": "np.negative",
          "log.default": "np.log", "sqrt.default": "np.sqrt", "sin.default": "np.sin", "cos.default": "np.cos"}


@_forward(*_UNARY)
def _unary(node, args, src):
    a = args["self"]
    if not _same_dtype(node, a):
        return None
    return Lowered(f"{_UNARY[_key(node)]}({src(a)})", True, _UNARY[_key(node)], (a,))


@_forward("relu.default")
def _relu(node, args, src):
    """Eager's kernel (``ops/pointwise.py`` ``_clamp_side``): on a row-major input, ``np.maximum(zeros, a)``
    with the zeros a constant array of the result's shape (read-only, made once when the code is
    generated) -- NumPy's SIMD loop runs only when every operand is contiguous, 3-4x faster than
    with a scalar 0 --, else ``np.maximum(0, a)``; either way a tie (-0 against +0) gives ``a``'s own
    zero, as torch's and eager's."""
    a = args["self"]
    if not _same_dtype(node, a):
        return None
    dtype = node.meta["dtype"].numpy_dtype
    if _row_major_elementwise(node, a) and node.meta.get("device") == "cpu" and node.meta["shape"] \
            and _ties_give_second(np.maximum, dtype, full=True):
        zeros = np.zeros(tuple(node.meta["shape"]), dtype)
        zeros.flags.writeable = False
        return Lowered(f"np.maximum({src(zeros)}, {src(a)})", True, "np.maximum", (zeros, a))
    if not _ties_give_second(np.maximum, dtype):
        return None                 # (the kernel fixes the ties up)
    zero = dtype.type(0)
    return Lowered(f"np.maximum({src(zero)}, {src(a)})", True, "np.maximum", (zero, a))


@_forward("mm.default")
def _mm(node, args, src):
    a, b = args["self"], args["mat2"]
    if not _same_dtype(node, a, b) or len(a.meta["shape"]) != 2 or len(b.meta["shape"]) != 2:
        return None
    return Lowered(f"{src(a)} @ {src(b)}", True, "np.matmul", (a, b))


@_forward("addmm.default")
def _addmm(node, args, src):
    bias, a, b = args["self"], args["mat1"], args["mat2"]
    if args.get("beta", 1) != 1 or args.get("alpha", 1) != 1 or not _same_dtype(node, bias, a, b) \
            or len(a.meta["shape"]) != 2 or len(b.meta["shape"]) != 2:
        return None
    return Lowered(f"_addmm({src(bias)}, {src(a)}, {src(b)})", True)


def addmm(bias, mat1, mat2):
    """What the addmm kernel computes for beta = alpha = 1: the product, then the bias added into it."""
    p = mat1 @ mat2
    p += bias
    return p


@_forward("t.default")
def _t(node, args, src):
    a = args["self"]
    if not _same_dtype(node, a) or len(a.meta["shape"]) > 2:
        return None
    return Lowered(f"{src(a)}.T", False)


@_forward("view.default", "_unsafe_view.default")
def _view(node, args, src):
    """``a.reshape(shape)`` of a row-major ``a``: what both kernels return for it (a view of the same
    memory), without the call; the planner then knows it for ``a``'s array itself (Reshape), so that
    an element-wise op after it -- the in-projection's bias add, ReLU after the FFN's GEMM -- may run
    in that array when ``a`` dies. Other layouts call the kernel (which may refuse, as torch's)."""
    a = args["self"]
    if not _is_node(a) or not a.meta.get("contiguous") or a.meta.get("shape") is None:
        return None
    return Lowered(f"{src(a)}.reshape({tuple(node.meta['shape'])!r})", False, reshape=True)


@_forward("expand.default")
def _expand(node, args, src):
    """``expand`` to the input's own shape -- attention's four, before the batched products' views -- is the
    input itself (the kernel's view has its shape, strides and memory), without the call (~12 us each)."""
    a = args["self"]
    if not _is_node(a) or tuple(a.meta.get("shape") or ()) != tuple(node.meta["shape"]):
        return None
    return Lowered(src(a), False)


def _key(node):
    return node.target.__name__         # add.Tensor, tanh.default


def lower_forward(node, args, src):
    """A :class:`Lowered` for ``node``, or None: call the kernel."""
    rule = FORWARD.get(_key(node))
    if rule is None or not node.meta.get("shape"):   # (NumPy's ufuncs give a 0-d result as a scalar, not
        return None                                   # an array: the kernels wrap it)
    return rule(node, args, src)


# -- the backward ------------------------------------------------------------------------------
# (name, input) -> function(node, args, grad source, save, src) -> (expression, shaped) or None.
# The expression is a source string (a pass-through gradient or a view of it) or a :class:`U` tree
# (new arrays, each of the shape and dtype of the tree's result); ``shaped``: the expression has the
# input's shape already (else the node's: a broadcast input gets ``sum_to``).
# ``save(node)`` marks a forward value as read by the backward and gives its variable.
BACKWARD = {}


def _backward(name, *inputs):
    def register(fn):
        for inp in inputs:
            BACKWARD[(name, inp)] = fn
        return fn
    return register


@_backward("add.Tensor", "self", "other")
def _add_grad(node, inp, args, g, save, src):
    return (g, False) if inp == "self" or args.get("alpha", 1) == 1 else None


@_backward("sub.Tensor", "self", "other")
def _sub_grad(node, inp, args, g, save, src):
    if inp == "self":
        return g, False
    return (U("np.negative", g), False) if args.get("alpha", 1) == 1 else None


@_backward("mul.Tensor", "self", "other")
def _mul_grad(node, inp, args, g, save, src):
    factor = args["other" if inp == "self" else "self"]
    return U("np.multiply", g, save(factor) if _is_node(factor) else src(factor)), False


@_backward("tanh.default", "self")
def _tanh_grad(node, inp, args, g, save, src):
    r = save(node)                       # g * (1 - r * r): three ufuncs, one buffer once planned
    if jit.tanh_grad_for(node):          # (or one compiled pass, the same bits, when numba is installed)
        return U("_jit_tanh_grad", g, r), False
    return U("np.multiply", g, U("np.subtract", "1", U("np.multiply", r, r))), False


@_backward("mm.default", "self", "mat2")
def _mm_grad(node, inp, args, g, save, src):
    if len(args["self"].meta["shape"]) != 2 or len(args["mat2"].meta["shape"]) != 2:
        return None
    a = args[inp]
    if not _is_node(a) or _column_major(a.meta["shape"], a.meta["strides"]):
        return None   # (the formula's other branch: the gradient laid out as a column-major input is)
    if inp == "self":
        return U("np.matmul", g, f"{save(args['mat2'])}.T"), True
    return U("np.matmul", f"{save(args['self'])}.T", g), True


@_backward("bmm.default", "self", "mat2")
def _bmm_grad(node, inp, args, g, save, src):
    """``bmm``'s two formulas, ``grad @ mat2^T`` and ``self^T @ grad``, with each gradient computed in its
    operand's layout (``bmm_grad``) -- where both operands take gradients, so both are saved anyway (the
    layout is read from the arrays when the backward runs: the generated code's values need not be laid out
    as the capture's)."""
    a, b = args["self"], args["mat2"]
    if not config.weight_grad_in_weight_layout or not (a.meta.get("requires_grad") and b.meta.get("requires_grad")):
        return None
    other, operand = (b, a) if inp == "self" else (a, b)
    return f"_bmm_grad({g}, {save(other)}, {save(operand)}, {inp == 'self'})", True


def bmm_grad(grad, other, operand, of_self):
    """The gradient of ``bmm(self, mat2)`` with respect to ``operand`` (``self`` when ``of_self``, else
    ``mat2``; ``other`` is the other one), laid out as ``operand`` (torch's ``mm_mat2_backward`` chooses so
    for ``mm``): eager's formula, ``grad @ mat2^T`` or ``self^T @ grad``, makes a row-major batch whatever
    the operand's layout, and attention's q, k and v are views of the packed in-projection, transposed: their
    gradients in eager's layout are copied twice on the way into the packed q, k, v gradient (a copying
    reshape, then the copy into its slice: ~0.3 ms each per Transformer step), in the operands' layouts once.

    A batch of row-major matrices laid out otherwise (q, v: ``(N*H, L, D)`` views of ``(L, N*H, D)`` memory)
    gets the product written into an array of its layout -- the same products, the same bits as eager's. A
    batch of column-major matrices (k, which enters ``q @ k^T`` transposed) gets the transposed product,
    ``mat2 @ grad^T`` or ``grad^T @ self``, transposed back: OpenBLAS blocks it differently, so the values may
    differ from eager's in the last bit (``config.weight_grad_in_weight_layout``)."""
    size = operand.itemsize
    s = operand.strides
    column_major = operand.ndim == 3 and s[1] == size and s[2] >= size * operand.shape[1]
    if column_major:
        target = operand.swapaxes(1, 2)
        a, b = (other, grad.swapaxes(1, 2)) if of_self else (grad.swapaxes(1, 2), other)
    else:
        target = operand
        a, b = (grad, other.swapaxes(1, 2)) if of_self else (other.swapaxes(1, 2), grad)
    if not target.flags.c_contiguous and target.ndim == 3 and target.strides[2] == size:
        out = np.empty_like(target)          # (its layout: the strides' order of ``target``)
        if out.strides[2] == size and out.strides[1] >= size * out.shape[2]:      # (matrices BLAS writes)
            np.matmul(a, b, out=out)
            return out.swapaxes(1, 2) if column_major else out
    r = a @ b
    return r.swapaxes(1, 2) if column_major else r


@_backward("addmm.default", "self", "mat1", "mat2")
def _addmm_grad(node, inp, args, g, save, src):
    if args.get("beta", 1) != 1 or args.get("alpha", 1) != 1:
        return None
    if inp == "self":
        return g, False
    return _mm_grad(node, "self" if inp == "mat1" else "mat2",
                    {"self": args["mat1"], "mat2": args["mat2"]}, g, save, src)


@_backward("view.default", "self")
@_backward("_unsafe_view.default", "self")
def _view_grad(node, inp, args, g, save, src):
    """Both formulas are ``grad.reshape(self_sizes)``: a view of a row-major gradient, else a row-major
    copy, as NumPy's ``reshape`` makes them."""
    return Reshape(f"{g}.reshape({tuple(args['self'].meta['shape'])!r})"), True


@_backward("expand.default", "self")
def _expand_grad(node, inp, args, g, save, src):
    """``sum_to(grad, self_sizes)`` of an expand to the input's own shape: the gradient itself."""
    return (g, True) if tuple(args["self"].meta.get("shape") or ()) == tuple(node.meta["shape"]) else None


@_backward("relu.default", "self")
def _relu_grad(node, inp, args, g, save, src):
    # (large arrays: one compiled pass, the same bits, when numba is installed)
    return U("_jit_threshold_grad" if jit.threshold_grad_for(node) else "_threshold_grad", g, save(node)), False


_BITS = {np.dtype("float32"): np.int32, np.dtype("float64"): np.int64}


def threshold_grad(grad, result, out=None):
    """ReLU's backward, ``threshold_backward(grad, result, 0)``, as its kernel computes it -- the
    gradient's bits ANDed with all ones where ``result > 0`` (or is nan) and with 0 where masked,
    which keeps the gradient's -0, inf and nan and gives torch's +0 -- written as a ufunc that takes
    ``out=``: the memory planner may then run it in the dying gradient's buffer (one array fewer
    to allocate and fault in per ReLU)."""
    bits = _BITS[grad.dtype]
    keep = np.subtract(result <= 0, 1, dtype=bits)          # 0 where masked, -1 (every bit set) elsewhere
    if out is None:
        return np.bitwise_and(grad.view(bits), keep, out=keep).view(grad.dtype)
    np.bitwise_and(grad.view(bits), keep, out=out.view(bits))
    return out


@_backward("t.default", "self")
def _t_grad(node, inp, args, g, save, src):
    return f"{g}.T", True


def weight_grad(node, inp, args, g, save, uses):
    """``(W, g.T @ x)``: the gradient of ``W`` where ``mm(x, t(W))`` / ``addmm(b, x, t(W))`` -- a
    ``Linear`` -- is all that reads ``t(W)``; else None.

    Eager computes it as its two formulas say: mm_mat2_backward's ``(g.T @ x).T`` (``t(W)`` is
    column-major, and its gradient is laid out so, as torch's is), then ``t()``'s transpose -- the
    same product, row-major as ``W`` is; here it is one statement, without the formulas' calls."""
    if _key(node) not in ("mm.default", "addmm.default") or inp != "mat2" or args.get("beta", 1) != 1 \
            or args.get("alpha", 1) != 1:
        return None
    t, x = args["mat2"], args["self" if _key(node) == "mm.default" else "mat1"]
    if not (_is_node(t) and getattr(t.target, "__name__", None) == "t.default" and uses.get(t) == 1
            and _is_node(x)):
        return None
    w = t.args[0]
    if not (_is_node(w) and len(w.meta["shape"]) == 2 and len(x.meta["shape"]) == 2
            and _same_dtype(node, w, x)):
        return None
    return w, U("np.matmul", f"{g}.T", save(x))


def bias_grad_ones(inp, node):
    """``ones(m)`` for ``bias_grad`` when ``inp``'s gradient is ``node``'s summed over every dim but the last
    (a bias of ``n`` elements under an ``m x n`` gradient, or ``... x n``): both real floating, of one dtype,
    on the cpu device; else None (``_sum_to``)."""
    shape, full = tuple(inp.meta["shape"]), tuple(node.meta["shape"])
    if len(shape) != 1 or len(full) < 2 or full[-1] != shape[0] or not shape[0] or node.meta.get("device") != "cpu" \
            or not real_float(node) or inp.meta.get("dtype") != node.meta["dtype"]:
        return None
    rows = int(np.prod(full[:-1]))
    return np.ones(rows, node.meta["dtype"].numpy_dtype) if rows else None


def bias_grad(grad, ones):
    """A bias's gradient: ``grad`` (``m`` rows of ``n`` in row-major memory) summed over its rows, as one
    matrix-vector product ``ones @ rows`` -- BLAS's gemv reads the gradient once with vector loads, where
    NumPy's ``grad.sum(0)`` makes a pass per row (2048x512 float32: 0.19 ms, the gemv 0.11; 2048x128: 0.08,
    0.03). The sum runs in another order than eager's, so the two agree to float32 rounding
    (``config.bias_grad_as_gemv``). A gradient in another layout (a formula's transposed view) is summed by
    NumPy, as ``_sum_to`` sums it."""
    if grad.flags.c_contiguous:
        return ones @ grad.reshape(ones.shape[0], -1)
    return grad.sum(tuple(range(grad.ndim - 1)))


def log_softmax_nll(node, args, uses, outs):
    """``(x, log_softmax node, target, total_weight's node or None)`` when ``node`` is ``nll_loss_forward``
    of ``log_softmax(x, dim=1)`` -- ``F.cross_entropy`` on a batch of class scores -- whose two backward
    formulas may run as one (``log_softmax_nll_grad``): no weight, 'mean' or 'sum', a row-major real
    floating ``N x C`` input on the cpu (``N >= 1``, ``C >= 2``) that only this ``nll_loss_forward`` reads;
    else None (the formulas)."""
    if _key(node) != "nll_loss_forward.default" or args.get("weight") is not None \
            or args.get("reduction") not in (1, 2):
        return None
    ls, target = args["self"], args["target"]
    if not (_is_node(ls) and _is_node(target) and getattr(ls.target, "__name__", None) == "_log_softmax.default"
            and uses.get(ls) == 1 and _is_node(ls.args[0]) and not ls.meta.get("island")):
        return None
    shape, x = tuple(ls.meta.get("shape") or ()), ls.args[0]
    given = dict(zip(("dim", "half_to_float"), ls.args[1:]), **ls.kwargs)
    dim, half_to_float = given.get("dim"), given.get("half_to_float")
    if len(shape) != 2 or shape[0] < 1 or shape[1] < 2 or type(dim) is not int or dim % 2 != 1 or half_to_float \
            or not _same_dtype(ls, x) or not ls.meta.get("contiguous") or ls.meta.get("device") != "cpu" \
            or tuple(x.meta.get("shape") or ()) != shape:
        return None
    total = outs.get(1)
    if args["reduction"] == 1 and total is None:
        return None
    return x, ls, target, total


def log_softmax_nll_grad(grad, log_probs, target, total_weight, ignore_index, mean):
    """The gradient of ``nll_loss(log_softmax(x, 1), target)`` with respect to ``x`` in one function:
    eager's two formulas, ``nll_loss_backward`` (a zero array with ``-grad / total_weight`` at each
    kept row's target) and ``_log_softmax_backward_data`` (``g - exp(y) * g.sum(1)``), make ~20 NumPy
    calls on arrays of a few thousand elements -- Python's time, not arithmetic's (256x10: ~90 us of
    ~0.2 ms for the whole cross-entropy). Each row of nll's gradient is one value ``c`` (0 for an
    ignored row) and zeros, so its sum is ``c + 0`` and the result is ``0 - exp(y) * (c + 0)`` off the
    target, ``c - exp(y) * (c + 0)`` at it: the same operations on the same values, eager's bits.
    The targets are checked as eager checks them (``IndexError``, ``ignore_index``)."""
    safe, kept = _safe_targets(target, log_probs.shape[1], ignore_index)
    coef = -(grad / total_weight) if mean else -grad
    zero = log_probs.dtype.type(0)
    r = np.exp(log_probs)
    if kept is None:
        r *= coef + zero                     # (+ zero: a row's sum of -0 and zeros is +0)
    else:
        coef = np.where(kept, coef, zero)
        r *= (coef + zero)[:, None]
    rows = np.arange(safe.shape[0])
    at = r[rows, safe]
    np.subtract(zero, r, out=r)
    r[rows, safe] = coef - at
    return r


def lower_backward(node, inp, args, g, save, src):
    """(expression, shaped) for the gradient of ``node``'s input ``inp``, or None: call the formula.
    Only for real floating nodes whose tensor inputs share their dtype."""
    rule = BACKWARD.get((_key(node), inp))
    if rule is None or not node.meta.get("shape") or not _same_dtype(node, *(v for v in args.values() if _is_node(v))):
        return None
    return rule(node, inp, args, g, save, src)


__all__ = ["lower_forward", "lower_backward", "addmm", "bmm_grad", "threshold_grad", "real_float", "bias_grad",
           "bias_grad_ones", "log_softmax_nll", "log_softmax_nll_grad"]
