"""Reductions with torch's dim/keepdim conventions, and the softmax family, scans and sorting."""
import builtins
import math

from .. import _dtype
from .._tensor import Tensor, _wrap, _wrap_dim
from .._array import xp, row_major, like_operands
from ..autograd.graph import connect
from ._op import _state, method, record, make_node_class, float_array

from collections import namedtuple


def _dims(dim, ndim):
    """Normalise dim (None, int or sequence) to a sorted tuple of axes, or None for all.

    A 0-dim tensor accepts dim 0 and -1 (as torch does) and has no axis to reduce: ().
    """
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return None
        dims = tuple(sorted(_wrap_dim(d, ndim) for d in dim))
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"dim {dims[0]} appears multiple times in the list of dims")
        return dims if ndim else ()
    d = _wrap_dim(dim, ndim)
    return (d,) if ndim else ()


def _expand_back(grad, sizes, dims, keepdim):
    """Broadcast a reduced gradient back over the reduced dims."""
    if not keepdim and dims is not None and grad.dim() != len(sizes):
        for d in dims:
            grad = grad.unsqueeze(d)
    elif dims is None and grad.dim() != len(sizes):
        grad = grad.reshape((1,) * len(sizes))
    return grad.expand(sizes)


class SumBackward0(make_node_class("SumBackward0", None)):
    def backward(self, grad):
        return grad.expand(self.self_sizes)


class SumBackward1(make_node_class("SumBackward1", None)):
    def backward(self, grad):
        return _expand_back(grad, self.self_sizes, self.dims, self.keepdim)


def _sum_dtype(d, dtype):
    if dtype is not None:
        return dtype.numpy_dtype
    return "int64" if d.dtype.kind in "biu" else None


@method()
def sum(input, dim=None, keepdim=False, *, dtype=None):
    d = input._data
    dims = _dims(dim, d.ndim)
    res = _wrap(row_major(xp.asarray(d.sum(axis=dims, keepdims=keepdim, dtype=_sum_dtype(d, dtype)))))
    if input._requires_grad and _state.enabled:
        if dim is None:
            record(SumBackward0, res, (input,)).self_sizes = d.shape
        else:
            node = record(SumBackward1, res, (input,))
            node.self_sizes, node.dims, node.keepdim = d.shape, dims, keepdim
    return res


@method()
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    return sum(input.masked_fill(input.isnan(), 0), dim, keepdim, dtype=dtype)


class MeanBackward0(make_node_class("MeanBackward0", None)):
    def backward(self, grad):
        return grad.expand(self.self_sizes) / self.count


class MeanBackward1(make_node_class("MeanBackward1", None)):
    def backward(self, grad):
        return _expand_back(grad, self.self_sizes, self.dims, self.keepdim) / self.count


@method()
def mean(input, dim=None, keepdim=False, *, dtype=None):
    d = input._data
    if dtype is not None:
        d = d.astype(dtype.numpy_dtype)
    elif d.dtype.kind not in "fc" and d.dtype != _dtype.bfloat16.numpy_dtype:
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {input.dtype._legacy}")
    dims = _dims(dim, d.ndim)
    if d.size:
        res = _wrap(row_major(xp.asarray(d.mean(axis=dims, keepdims=keepdim))))
    else:
        with xp.errstate(invalid="ignore", divide="ignore"):  # nan, silently, as torch
            import warnings
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                res = _wrap(row_major(xp.asarray(d.mean(axis=dims, keepdims=keepdim))))
    if input._requires_grad and _state.enabled:
        count = d.size // builtins.max(res._data.size, 1) if d.size else 0
        if dim is None:
            node = record(MeanBackward0, res, (input,))
            node.self_sizes, node.count = d.shape, d.size
        else:
            node = record(MeanBackward1, res, (input,))
            node.self_sizes, node.dims, node.keepdim, node.count = d.shape, dims, keepdim, count
    return res


@method()
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    notnan = ~input.isnan()
    return nansum(input, dim, keepdim) / notnan.sum(dim, keepdim)


class ProdBackward0(make_node_class("ProdBackward0", None, ("self", "result"))):
    def backward(self, grad):
        x, r = self._unpack_saved()
        if bool((x == 0).any()):
            return _prod_safe_zeros_backward(grad, x.reshape(-1), 0).reshape(x.shape)
        return grad * r / x


class ProdBackward1(make_node_class("ProdBackward1", None, ("self", "result"))):
    def backward(self, grad):
        x, r = self._unpack_saved()
        g = _expand_back(grad, x.shape, (self.dim,), self.keepdim)
        if bool((x == 0).any()):
            return _prod_safe_zeros_backward(g, x, self.dim)
        return g * _expand_back(r, x.shape, (self.dim,), self.keepdim) / x


def _prod_safe_zeros_backward(grad, x, dim):
    """torch's gradient of a product holding zeros: ``grad`` times the product of all other
    elements along ``dim``, exact with zeros (exclusive cumprods from both ends). Along a dim of
    one element that product is empty: the gradient is ``grad`` itself (no function of ``x``, so a
    double backward sees no dependence on it, as in torch)."""
    n = x.shape[dim]
    if n == 1:
        return grad
    from .creation import ones
    from .joining import cat
    one = ones(tuple(1 if d == dim else k for d, k in enumerate(x.shape)), dtype=x.dtype)  # (not x*0+1: inf*0)
    left = cat([one, x.narrow(dim, 0, n - 1)], dim).cumprod(dim)
    right = cat([one, x.narrow(dim, 1, n - 1).flip(dim)], dim).cumprod(dim).flip(dim)
    return grad * (left * right)


@method()
def prod(input, dim=None, keepdim=False, *, dtype=None):
    d = input._data
    if dtype is not None:
        d = d.astype(dtype.numpy_dtype)
    if dim is None:
        res = _wrap(xp.asarray(d.prod(dtype="int64" if d.dtype.kind in "biu" else None)))
        if input._requires_grad and _state.enabled:
            record(ProdBackward0, res, (input,), (input, res), saved_output=1)
        return res
    dd = _wrap_dim(dim, d.ndim)
    res = _wrap(row_major(xp.asarray(d.prod(axis=dd, keepdims=keepdim, dtype="int64" if d.dtype.kind in "biu" else None))))
    if input._requires_grad and _state.enabled:
        node = record(ProdBackward1, res, (input,), (input, res), saved_output=1)
        node.dim, node.keepdim = dd, keepdim
    return res


# ---- max / min ------------------------------------------------------------------------------
class _ReturnType(tuple):
    """A torch.return_types.<name> value: a pair that is also reachable by field names."""
    _fields = ("values", "indices")

    def __repr__(self):
        a, b = self._fields
        return f"torch.return_types.{type(self).__name__}(\n{a}={self[0]!r},\n{b}={self[1]!r})"


_RETURN_TYPES = {}


def _ValuesIndices(first, second, name="max"):
    """torch.return_types.max(values, indices) and friends (aminmax's fields are min and max)."""
    cls = _RETURN_TYPES.get(name)
    if cls is None:
        fields = ("min", "max") if name == "aminmax" else ("values", "indices")
        cls = _RETURN_TYPES[name] = type(name, (_ReturnType,), {
            "_fields": fields, "__module__": "torch.return_types", "__slots__": (),
            fields[0]: property(lambda self: self[0]), fields[1]: property(lambda self: self[1])})
    return tuple.__new__(cls, (first, second))


class MaxBackward1(make_node_class("MaxBackward1", None, ("self", "result"))):
    """Full max/min: the gradient is shared evenly among the elements equal to the result."""

    def backward(self, grad):
        x, r = self._unpack_saved()
        mask = (x == r)
        return mask * (grad / mask.sum())


MinBackward1 = make_node_class("MinBackward1", MaxBackward1.backward, ("self", "result"))


class MaxBackward0(make_node_class("MaxBackward0", None, ("indices",))):
    """max(dim): the gradient goes to the position the index names."""

    def backward(self, grad, _unused=None):
        (idx,) = self._unpack_saved()
        from .creation import zeros
        if not self.self_sizes:  # a 0-dim input is its own max
            return grad
        if not self.keepdim:
            grad, idx = grad.unsqueeze(self.dim), idx.unsqueeze(self.dim)
        return zeros(self.self_sizes, dtype=grad.dtype).scatter(self.dim, idx, grad)


MinBackward0 = make_node_class("MinBackward0", MaxBackward0.backward, ("indices",))
MinBackward0.num_outputs = MaxBackward0.num_outputs = 2


def _minmax(input, dim, keepdim, is_max, other=None):
    if isinstance(dim, Tensor):  # torch.max(a, b) is maximum
        from .pointwise import maximum, minimum
        return (maximum if is_max else minimum)(input, dim)
    d = input._data
    name = "max" if is_max else "min"
    if dim is None:
        if d.size == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify "
                               f"the reduction dim with the 'dim' argument.")
        res = _wrap(xp.asarray(d.max() if is_max else d.min()))
        if input._requires_grad and _state.enabled:
            record(MaxBackward1 if is_max else MinBackward1, res, (input,), (input, res), saved_output=1)
        return res
    dd = _wrap_dim(dim, d.ndim)
    if d.ndim == 0:
        vals, idx = d.copy(), xp.zeros((), "int64")
    else:
        if d.shape[dd] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {dd} to have non-zero size.")
        idx = (xp.argmax if is_max else xp.argmin)(_nan_first(d, is_max), axis=dd, keepdims=True)
        vals = xp.take_along_axis(d, idx, axis=dd)
        if not keepdim:
            vals, idx = vals.squeeze(dd), idx.squeeze(dd)
    values, indices = _wrap(row_major(vals)), _wrap(row_major(idx.astype("int64")))
    if input._requires_grad and _state.enabled:
        cls = MaxBackward0 if is_max else MinBackward0
        node = cls.__new__(cls)
        node.self_sizes, node.dim, node.keepdim = d.shape, dd, keepdim
        connect(node, (input,), (values, None), (indices,))
    return _ValuesIndices(values, indices, name)


def _nan_first(d, is_max):
    """torch propagates NaN in max/min: make NaNs win the argmax/argmin."""
    if d.dtype.kind == "f" and xp.isnan(d).any():
        return xp.where(xp.isnan(d), xp.inf if is_max else -xp.inf, d)
    return d


@method()
def max(input, dim=None, keepdim=False):
    return _minmax(input, dim, keepdim, True)


@method()
def min(input, dim=None, keepdim=False):
    return _minmax(input, dim, keepdim, False)


class AmaxBackward0(make_node_class("AmaxBackward0", None, ("self", "result"))):
    def backward(self, grad):
        x, r = self._unpack_saved()
        r = _expand_back(r, x.shape, self.dims, self.keepdim)
        g = _expand_back(grad, x.shape, self.dims, self.keepdim)
        mask = x == r
        return g * mask / _expand_back(mask.sum(self.dims if self.dims is not None else None, keepdim=True),
                                       x.shape, None, True)


AminBackward0 = make_node_class("AminBackward0", AmaxBackward0.backward, ("self", "result"))


def _amaxmin(input, dim, keepdim, is_max):
    d = input._data
    dims = _dims(dim, d.ndim) if dim != () else None
    if d.size == 0:
        name = "amax" if is_max else "amin"
        if dims is None:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify "
                               f"the reduction dim with the 'dim' argument.")
        for k in (dims if isinstance(dims, tuple) else (dims,)):
            if d.shape[k] == 0:
                raise IndexError(f"{name}(): Expected reduction dim {k} to have non-zero size.")
    res = _wrap(row_major(xp.asarray((xp.max if is_max else xp.min)(d, axis=dims, keepdims=keepdim))))
    if input._requires_grad and _state.enabled:
        node = record(AmaxBackward0 if is_max else AminBackward0, res, (input,), (input, res), saved_output=1)
        node.dims, node.keepdim = dims, keepdim
    return res


@method()
def amax(input, dim=(), keepdim=False):
    return _amaxmin(input, dim, keepdim, True)


@method()
def amin(input, dim=(), keepdim=False):
    return _amaxmin(input, dim, keepdim, False)


def aminmax(input, *, dim=None, keepdim=False):
    return _ValuesIndices(amin(input, dim if dim is not None else (), keepdim),
                          amax(input, dim if dim is not None else (), keepdim), "aminmax")


def _arg_extreme(input, dim, keepdim, is_max):
    """argmax/argmin: the index of the first extreme value (NaN counts as the extreme, as in torch)."""
    d = _nan_first(input._data, is_max)
    find = xp.argmax if is_max else xp.argmin
    if dim is None:
        if d.size == 0:
            raise IndexError(f"{'argmax' if is_max else 'argmin'}(): Expected reduction dim to be specified for "
                             f"input.numel() == 0.")
        r = xp.asarray(find(d))
        return _wrap(r.reshape((1,) * d.ndim) if keepdim else r)
    return _wrap(find(d, axis=_wrap_dim(dim, d.ndim), keepdims=keepdim))


@method()
def argmax(input, dim=None, keepdim=False):
    return _arg_extreme(input, dim, keepdim, True)


@method()
def argmin(input, dim=None, keepdim=False):
    return _arg_extreme(input, dim, keepdim, False)


# ---- statistics -----------------------------------------------------------------------------
def _correction(unbiased, correction):
    if correction is not None:
        return correction
    if unbiased is None:
        return 1
    return 1 if unbiased else 0


class VarBackward0(make_node_class("VarBackward0", None, ("self",))):
    """d var = 2 (x - mean) / (n - correction); with no degrees of freedom left torch gives nan
    where x equals the mean and inf elsewhere."""

    def backward(self, grad):
        (x,) = self._unpack_saved()
        return self.formula(grad, x)

    def formula(self, grad, x):
        g = _expand_back(grad, x.shape, self.dims, self.keepdim)
        if self.denom <= 0 and (self.dims is None or x.dim() == 0):
            from .pointwise import where
            return g * where(x == x.mean(self.dims, keepdim=True), math.nan, math.inf)
        return (2.0 / self.denom if self.denom > 0 else math.inf) * g * (x - x.mean(self.dims, keepdim=True))


class StdBackward0(make_node_class("StdBackward0", None, ("self", "result"))):
    """torch's std_backward: var's derivative of grad / (2 std), taken as 0 where std = 0."""

    def backward(self, grad):
        x, r = self._unpack_saved()
        return VarBackward0.formula(self, (grad / (r * 2)).masked_fill(r == 0, 0), x)


def _var(input, dim, unbiased, keepdim, correction, is_std):
    if isinstance(dim, bool):  # var(input, unbiased)
        unbiased, dim = dim, None
    if input._data.dtype.kind not in "fc" and input.dtype is not _dtype.bfloat16:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    c = _correction(unbiased, correction)
    d = float_array(input)
    dims = _dims(dim, d.ndim)
    n = d.size if dims is None else int(xp.prod([d.shape[i] for i in dims]))
    denom = builtins.max(n - c, 0)
    if n - c <= 0:
        import warnings
        warnings.warn(f"{'std' if is_std else 'var'}(): degrees of freedom is <= 0. Correction should be strictly "
                      f"less than the reduction factor (input numel divided by output numel).", UserWarning,
                      stacklevel=3)
    v = xp.var(d, axis=dims, keepdims=keepdim, ddof=c) if denom > 0 else \
        xp.full(xp.sum(d, axis=dims, keepdims=keepdim).shape, xp.nan, d.dtype)
    if is_std:
        v = xp.sqrt(v)
    res = _wrap(row_major(xp.asarray(v, dtype=d.dtype)))
    if input._requires_grad and _state.enabled:
        if is_std:
            node = record(StdBackward0, res, (input,), (input, res), saved_output=1)
        else:
            node = record(VarBackward0, res, (input,), (input,))
        node.dims, node.keepdim, node.denom = dims, keepdim, denom
    return res


@method()
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _var(input, dim, unbiased, keepdim, correction, False)


@method()
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _var(input, dim, unbiased, keepdim, correction, True)


class VarMeanBackward0(make_node_class("VarMeanBackward0", None)):
    """var_mean/std_mean: one node, two outputs; each output's formula is var's (std's) and mean's."""
    num_outputs = 2

    def backward(self, g_var, g_mean):
        parts = []
        if g_var is not None:
            parts.append(self.first_node.backward(g_var))
        if g_mean is not None:
            parts.append(self.mean_node.backward(g_mean))
        return parts[0] if len(parts) == 1 else parts[0] + parts[1]


StdMeanBackward0 = make_node_class("StdMeanBackward0", VarMeanBackward0.backward)
StdMeanBackward0.num_outputs = 2


def _moments(input, dim, unbiased, keepdim, correction, is_std):
    from ..autograd import grad_mode
    if isinstance(dim, bool):
        unbiased, dim = dim, None
    first = _var(input, dim, unbiased, keepdim, correction, is_std)
    second = mean(input, dim, keepdim)
    if not (input._requires_grad and _state.enabled):
        return first, second
    # the two single-output nodes compute the formulas; one node with two outputs is recorded
    cls = StdMeanBackward0 if is_std else VarMeanBackward0
    node = cls.__new__(cls)
    node.first_node, node.mean_node = first._grad_fn, second._grad_fn
    a, b = _wrap(first._data), _wrap(second._data)
    connect(node, (input,), (a, b))
    return a, b


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _moments(input, dim, unbiased, keepdim, correction, False)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _moments(input, dim, unbiased, keepdim, correction, True)


class LinalgVectorNormBackward0(make_node_class("LinalgVectorNormBackward0", None, ("self", "result"))):
    """torch's norm_backward, formula for formula (so the double backward, and its nan at a zero
    norm, are torch's too); grad and the norm broadcast over the reduced dims."""

    def backward(self, grad):
        x, r = self._unpack_saved()
        p = self.ord
        if p == 0:
            return None  # no gradient flows through a count of nonzeros
        g, n = grad, r
        if not self.keepdim and x.dim() and self.dims is not None:
            for d in self.dims:
                g, n = g.unsqueeze(d), n.unsqueeze(d)
        if p == 2:
            return g * (x / n).masked_fill(n == 0, 0)
        if p == 1:
            return x.sgn() * g
        if p == math.inf or p == -math.inf:
            a = x.abs()
            mask = (a == n) | a.isnan()
            return x.sgn() * ((g / mask.sum(self.dims, True)) * mask)
        if p < 1:
            return x.sgn() * x.abs().pow(p - 1).masked_fill(x == 0, 0) * g * n.pow(1 - p)
        if p < 2:
            return x.sgn() * x.abs().pow(p - 1) * (g / n.pow(p - 1)).masked_fill(n == 0, 0)
        return x * x.abs().pow(p - 2) * (g / n.pow(p - 1)).masked_fill(n == 0, 0)


def vector_norm(input, ord=2, dim=None, keepdim=False, *, dtype=None):
    d = input._data
    if d.dtype.kind not in "fc" and input.dtype is not _dtype.bfloat16:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{input.dtype._legacy}")
    dims = _dims(dim, d.ndim)
    a = xp.abs(d)
    if ord == 2:
        v = xp.sqrt(xp.sum(a * a, axis=dims, keepdims=keepdim))
    elif ord == 1:
        v = xp.sum(a, axis=dims, keepdims=keepdim)
    elif ord == math.inf:
        v = xp.max(a, axis=dims, keepdims=keepdim)
    elif ord == -math.inf:
        v = xp.min(a, axis=dims, keepdims=keepdim)
    elif ord == 0:
        v = xp.sum(a != 0, axis=dims, keepdims=keepdim).astype(d.dtype)
    else:
        v = xp.sum(a ** ord, axis=dims, keepdims=keepdim) ** (1.0 / ord)
    res = _wrap(row_major(xp.asarray(v, dtype=d.dtype)))
    if input._requires_grad and _state.enabled:
        node = record(LinalgVectorNormBackward0, res, (input,), (input, res), saved_output=1)
        node.ord, node.dims, node.keepdim = ord, dims, keepdim
    return res


@method()
def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    if not isinstance(p, (int, float, str)) and p is not None:
        raise TypeError(f"linalg_vector_norm(): argument 'ord' (position 2) must be Number, not {type(p).__name__}")
    if p == "fro" or p is None:
        p = 2
    if p == "nuc":
        from .linalg import matrix_norm
        return matrix_norm(input, "nuc", dim or (-2, -1), keepdim)
    return vector_norm(input, p, dim, keepdim)


class LogsumexpBackward0(make_node_class("LogsumexpBackward0", None, ("self", "result"))):
    def backward(self, grad):
        x, r = self._unpack_saved()
        return _expand_back(grad, x.shape, self.dims, self.keepdim) * \
            (x - _expand_back(r, x.shape, self.dims, self.keepdim)).exp()


@method()
def logsumexp(input, dim, keepdim=False):
    d = float_array(input)
    if isinstance(dim, (list, tuple)) and not dim and d.ndim:  # torch 2.13 fails on it, so do we
        raise RuntimeError(f"output with shape [] doesn't match the broadcast shape {[1] * d.ndim}")
    dims = _dims(dim, d.ndim)
    if d.size == 0:
        m = xp.zeros_like(xp.sum(d, axis=dims, keepdims=True))
    else:
        m = xp.max(d, axis=dims, keepdims=True)
        m = xp.where(xp.isfinite(m), m, 0)
    v = xp.log(xp.sum(xp.exp(d - m), axis=dims, keepdims=True)) + m
    if not keepdim:
        v = v.squeeze(dims) if dims is not None else v.reshape(())
    res = _wrap(row_major(xp.asarray(v, dtype=d.dtype)))
    if input._requires_grad and _state.enabled:
        node = record(LogsumexpBackward0, res, (input,), (input, res), saved_output=1)
        node.dims, node.keepdim = dims, keepdim
    return res


# ---- softmax --------------------------------------------------------------------------------
class SoftmaxBackward0(make_node_class("SoftmaxBackward0", None, ("result",))):
    def backward(self, grad):
        (y,) = self._unpack_saved()
        gy = grad * y
        return gy - y * gy.sum(self.dim, keepdim=True)


class LogSoftmaxBackward0(make_node_class("LogSoftmaxBackward0", None, ("result",))):
    def backward(self, grad):
        (y,) = self._unpack_saved()
        return grad - y.exp() * grad.sum(self.dim, keepdim=True)


def _softmax_dim(input, dim, fn, dtype=None):
    if dtype is None and input._data.dtype.kind not in "fc" and input.dtype is not _dtype.bfloat16 \
            and input._data.size:  # (torch's kernel, the one that refuses ints, never runs on an empty tensor)
        nd = input._data.ndim
        last = dim is None or nd == 0 or _wrap_dim(dim, nd) == nd - 1
        raise NotImplementedError(f'"{fn}{"_lastdim" if last else ""}_kernel_impl" not implemented for '
                                  f"'{input.dtype._legacy}'")
    if dim is None:
        import warnings
        warnings.warn(f"Implicit dimension choice for {fn} has been deprecated. Change the call to include dim=X as "
                      f"an argument.", stacklevel=3)
        nd = input._data.ndim
        dim = 0 if nd in (0, 1, 3) else 1
    return _wrap_dim(dim, input._data.ndim)


@method()
def softmax(input, dim=None, dtype=None, *, _stacklevel=3):
    dd = _softmax_dim(input, dim, "softmax", dtype)
    d = input._data if dtype is None else input._data.astype(dtype.numpy_dtype)
    if d.dtype.kind not in "fc" and input.dtype is not _dtype.bfloat16:  # only an empty int tensor gets here
        return _wrap(d.copy())
    if d.ndim == 0:
        y = xp.ones_like(d)
    elif d.size == 0:
        y = d.copy()
    else:
        e = xp.exp(d - xp.max(d, axis=dd, keepdims=True))
        y = e / xp.sum(e, axis=dd, keepdims=True)
    res = _wrap(row_major(y))
    if input._requires_grad and _state.enabled:
        record(SoftmaxBackward0, res, (input,), (res,), saved_output=0).dim = dd
    return res


@method()
def log_softmax(input, dim=None, dtype=None, *, _stacklevel=3):
    dd = _softmax_dim(input, dim, "log_softmax", dtype)
    d = input._data if dtype is None else input._data.astype(dtype.numpy_dtype)
    if d.dtype.kind not in "fc" and input.dtype is not _dtype.bfloat16:  # only an empty int tensor gets here
        return _wrap(d.copy())
    if d.ndim == 0:
        y = xp.zeros_like(d)
    elif d.size == 0:
        y = d.copy()
    else:
        s = d - xp.max(d, axis=dd, keepdims=True)
        y = s - xp.log(xp.sum(xp.exp(s), axis=dd, keepdims=True))
    res = _wrap(row_major(y))
    if input._requires_grad and _state.enabled:
        record(LogSoftmaxBackward0, res, (input,), (res,), saved_output=0).dim = dd
    return res


# ---- scans ----------------------------------------------------------------------------------
class CumsumBackward0(make_node_class("CumsumBackward0", None)):
    def backward(self, grad):
        return grad.flip(self.dim).cumsum(self.dim).flip(self.dim)


@method()
def cumsum(input, dim, *, dtype=None):
    d = input._data
    dd = _wrap_dim(dim, d.ndim)
    acc = dtype.numpy_dtype if dtype else ("int64" if d.dtype.kind in "biu" else d.dtype)
    r = xp.cumsum(d, axis=dd, dtype=acc) if d.ndim else d.astype(acc)
    res = _wrap(row_major(r))
    if input._requires_grad and _state.enabled:
        record(CumsumBackward0, res, (input,)).dim = dd
    return res


class CumprodBackward0(make_node_class("CumprodBackward0", None, ("self", "result"))):
    def backward(self, grad):
        x, r = self._unpack_saved()
        d = self.dim
        if x.numel() <= 1 or x.shape[d] == 1:  # torch's shortcut: the gradient itself (no graph through x)
            return grad
        if not bool((x == 0).any()):
            return (grad * r).flip(d).cumsum(d).flip(d) / x
        # exact with zeros: d out_j / d x_i = prod_{k<=j, k!=i} x_k
        n = x.shape[d]
        parts = []
        for i in range(n):
            others = x.masked_fill(_onehot_mask(x, d, i), 1)
            cp = others.cumprod(d)
            g = (grad * cp).narrow(d, i, n - i).sum(d, keepdim=True)
            parts.append(g)
        from .joining import cat
        return cat(parts, d)


def _onehot_mask(x, d, i):
    m = xp.zeros(x.shape, dtype=bool)
    idx = [builtins.slice(None)] * x.dim()
    idx[d] = i
    m[tuple(idx)] = True
    return _wrap(m)


@method()
def cumprod(input, dim, *, dtype=None):
    d = input._data
    dd = _wrap_dim(dim, d.ndim)
    acc = dtype.numpy_dtype if dtype else ("int64" if d.dtype.kind in "biu" else d.dtype)
    res = _wrap(row_major(xp.cumprod(d, axis=dd, dtype=acc) if d.ndim else d.astype(acc)))
    if input._requires_grad and _state.enabled:
        record(CumprodBackward0, res, (input,), (input, res), saved_output=1).dim = dd
    return res


class CummaxBackward0(make_node_class("CummaxBackward0", None, ("indices", "self"))):
    """Each running max's gradient goes to the element it came from. (``self`` is saved as torch
    saves it, so modifying it in place before backward is an error here too.)"""

    def backward(self, grad, _unused=None):
        idx, _ = self._unpack_saved()
        if not idx.dim():
            return grad
        from .creation import zeros
        return zeros(idx.shape, dtype=grad.dtype).scatter_add(self.dim, idx, grad)


CumminBackward0 = make_node_class("CumminBackward0", CummaxBackward0.backward, ("indices", "self"))
CummaxBackward0.num_outputs = CumminBackward0.num_outputs = 2


def _cumext(input, dim, is_max):
    d = input._data
    dd = _wrap_dim(dim, d.ndim)
    if d.ndim == 0:
        vals, idx = d.copy(), xp.zeros((), "int64")
    else:
        ufunc = xp.maximum if is_max else xp.minimum
        vals = ufunc.accumulate(d, axis=dd)
        ar = xp.arange(d.shape[dd]).reshape([-1 if i == dd else 1 for i in range(d.ndim)])
        # the index of the last element equal to the running extreme (torch's tie rule)
        idx = xp.maximum.accumulate(xp.where(d == vals, ar, 0), axis=dd)
    values, indices = _wrap(row_major(vals)), _wrap(row_major(idx.astype("int64")))
    if input._requires_grad and _state.enabled:
        cls = CummaxBackward0 if is_max else CumminBackward0
        node = cls.__new__(cls)
        node.dim = dd
        connect(node, (input,), (values, None), (indices, input))
    return _ValuesIndices(values, indices, "cummax" if is_max else "cummin")


@method()
def cummax(input, dim):
    return _cumext(input, dim, True)


@method()
def cummin(input, dim):
    return _cumext(input, dim, False)


# ---- logical reductions -----------------------------------------------------------------------
def _logical_dims(dim, ndim):
    # any/all with an empty dim list reduce nothing (elsewhere torch reduces everything)
    return () if isinstance(dim, (list, tuple)) and not dim else _dims(dim, ndim)


@method()
def any(input, dim=None, keepdim=False):
    return _wrap(xp.asarray(xp.any(input._data, axis=_logical_dims(dim, input._data.ndim), keepdims=keepdim)))


@method()
def all(input, dim=None, keepdim=False):
    return _wrap(xp.asarray(xp.all(input._data, axis=_logical_dims(dim, input._data.ndim), keepdims=keepdim)))


@method()
def count_nonzero(input, dim=None):
    return _wrap(xp.asarray(xp.count_nonzero(input._data, axis=_dims(dim, input._data.ndim))).astype("int64"))


# ---- sorting ----------------------------------------------------------------------------------
class SortBackward0(make_node_class("SortBackward0", None, ("indices",))):
    """The values' gradient goes back to where each value came from."""

    def backward(self, grad, _unused=None):
        (idx,) = self._unpack_saved()
        if not self.self_sizes:
            return grad
        from .creation import zeros
        return zeros(self.self_sizes, dtype=grad.dtype).scatter(self.dim, idx, grad)


SortBackward1 = make_node_class("SortBackward1", SortBackward0.backward, ("indices",))  # sort(stable=...)
TopkBackward0 = make_node_class("TopkBackward0", SortBackward0.backward, ("indices",))
SortBackward0.num_outputs = SortBackward1.num_outputs = TopkBackward0.num_outputs = 2


def _sorted_indices(d, dim, descending, stable=True):
    key = -d if descending and d.dtype.kind in "fiu" and d.dtype.kind != "u" else d
    if descending and d.dtype.kind in "ub":
        idx = xp.flip(xp.argsort(xp.flip(d, dim), axis=dim, kind="stable"), dim)
        return d.shape[dim] - 1 - idx
    if d.dtype.kind == "f":  # NaN sorts as the largest value, as torch does
        key = xp.where(xp.isnan(d), -xp.inf if descending else xp.inf, key) if descending else key
    return xp.argsort(key, axis=dim, kind="stable")


@method()
def sort(input, dim=-1, descending=False, stable=None):
    """Sorted values and their indices; ``stable=`` (torch's sort.stable overload) records SortBackward1."""
    d = input._data
    dd = _wrap_dim(dim, d.ndim)
    if d.ndim == 0:
        values, indices = _wrap(d.copy()), _wrap(xp.zeros((), "int64"))
    else:
        idx = _sorted_indices(d, dd, descending)
        # (torch's sort keeps the input's layout)
        values = _wrap(like_operands(xp.take_along_axis(d, idx, axis=dd), d))
        indices = _wrap(like_operands(idx.astype("int64"), d))
    if input._requires_grad and _state.enabled:
        cls = SortBackward0 if stable is None else SortBackward1
        node = cls.__new__(cls)
        node.self_sizes, node.dim = d.shape, dd
        connect(node, (input,), (values, None), (indices,))
    return _ValuesIndices(values, indices, "sort")


@method()
def argsort(input, dim=-1, descending=False, stable=False):
    return sort(input, dim, descending)[1]


@method()
def topk(input, k, dim=-1, largest=True, sorted=True):
    d = input._data
    dd = _wrap_dim(dim, d.ndim) if d.ndim else 0
    n = d.shape[dd] if d.ndim else 1
    if k > n or k < 0:
        raise RuntimeError("selected index k out of range")
    idx = _sorted_indices(d, dd, largest)
    idx = xp.take(idx, xp.arange(k), axis=dd) if d.ndim else idx
    vals = xp.take_along_axis(d, idx, axis=dd) if d.ndim else d.copy()
    values, indices = _wrap(vals), _wrap(idx.astype("int64"))
    if input._requires_grad and _state.enabled:
        node = TopkBackward0.__new__(TopkBackward0)
        node.self_sizes, node.dim = d.shape, dd
        connect(node, (input,), (values, None), (indices,))
    return _ValuesIndices(values, indices, "topk")


KthvalueBackward0 = make_node_class("KthvalueBackward0", MaxBackward0.backward, ("indices",))
MedianBackward1 = make_node_class("MedianBackward1", MaxBackward0.backward, ("indices",))
MedianBackward0 = make_node_class("MedianBackward0", MaxBackward1.backward, ("self", "result"))
KthvalueBackward0.num_outputs = MedianBackward1.num_outputs = 2


def _select_kth(input, k, dim, keepdim, node_cls, name):
    """The k-th smallest along dim (1-based) and its index: one node, as torch records it."""
    d = input._data
    dd = _wrap_dim(dim, d.ndim)
    if d.ndim == 0:
        vals, idx = d.copy(), xp.zeros((), "int64")
    else:
        n = d.shape[dd]
        if not 1 <= k <= n:
            raise IndexError(f"{name}(): selected number k out of range for dimension {dd}")
        idx = xp.take(_sorted_indices(d, dd, False), [k - 1], axis=dd)
        vals = xp.take_along_axis(d, idx, axis=dd)
        if not keepdim:
            vals, idx = vals.squeeze(dd), idx.squeeze(dd)
    values, indices = _wrap(vals), _wrap(idx.astype("int64"))
    if input._requires_grad and _state.enabled:
        node = node_cls.__new__(node_cls)
        node.self_sizes, node.dim, node.keepdim = d.shape, dd, keepdim
        connect(node, (input,), (values, None), (indices,))
    return _ValuesIndices(values, indices, name)


@method()
def kthvalue(input, k, dim=-1, keepdim=False):
    return _select_kth(input, k, dim, keepdim, KthvalueBackward0, "kthvalue")


@method()
def median(input, dim=None, keepdim=False):
    """The lower median: the ((n - 1) // 2)-th smallest (torch does not average the middle two)."""
    if dim is None:
        d = input._data.reshape(-1)
        if d.size == 0:
            return _wrap(xp.asarray(xp.nan, dtype=d.dtype))
        k = (d.size - 1) // 2
        res = _wrap(xp.asarray(xp.take(d, _sorted_indices(d, 0, False)[k])))
        if input._requires_grad and _state.enabled:
            record(MedianBackward0, res, (input,), (input, res), saved_output=1)
        return res
    dd = _wrap_dim(dim, input._data.ndim)
    n = input._data.shape[dd] if input._data.ndim else 1
    return _select_kth(input, (n - 1) // 2 + 1, dd, keepdim, MedianBackward1, "median")


@method()
def mode(input, dim=-1, keepdim=False):
    d = input._data
    dd = _wrap_dim(dim, d.ndim)
    moved = xp.moveaxis(d, dd, -1)
    flat = moved.reshape(-1, moved.shape[-1])
    vals, idxs = [], []
    for row in flat:
        u, c = xp.unique(row, return_counts=True)
        v = u[c == c.max()].min()
        vals.append(v)
        idxs.append(xp.nonzero(row == v)[0].max())
    vals = xp.array(vals, dtype=d.dtype).reshape(moved.shape[:-1])
    idxs = xp.array(idxs, dtype="int64").reshape(moved.shape[:-1])
    if keepdim:
        vals, idxs = xp.expand_dims(vals, dd), xp.expand_dims(idxs, dd)
    return _ValuesIndices(_wrap(vals), _wrap(idxs), "mode")


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    r = xp.unique(input._data, return_inverse=return_inverse, return_counts=return_counts, axis=dim)
    if not (return_inverse or return_counts):
        return _wrap(r)
    out = [_wrap(r[0])]
    if return_inverse:
        out.append(_wrap(r[1].reshape(input._data.shape).astype("int64")))
    if return_counts:
        out.append(_wrap(r[-1].astype("int64")))
    return tuple(out)


Tensor.unique = unique


def bincount(input, weights=None, minlength=0):
    return _wrap(xp.bincount(input._data, None if weights is None else weights._data, minlength))


Tensor.bincount = bincount


def histc(input, bins=100, min=0, max=0):
    d = input._data
    lo, hi = (min, max) if min != max else (float(d.min()), float(d.max()))
    h, _ = xp.histogram(d, bins=bins, range=(lo, hi))
    return _wrap(h.astype(d.dtype))


Tensor.histc = histc


def searchsorted(sorted_sequence, values, *, out_int32=False, right=False, side=None):
    side = side or ("right" if right else "left")
    v = values._data if isinstance(values, Tensor) else values
    r = xp.searchsorted(sorted_sequence._data, v, side=side) if sorted_sequence.dim() == 1 else \
        xp.stack([xp.searchsorted(s, vv, side=side) for s, vv in zip(sorted_sequence._data, v)])
    return _wrap(xp.asarray(r).astype("int32" if out_int32 else "int64"))


def bucketize(input, boundaries, *, out_int32=False, right=False):
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)
