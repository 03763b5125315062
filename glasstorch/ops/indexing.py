"""Indexing: tensor[...] (views for basic indices, IndexBackward0 for advanced ones), index
assignment, gather/scatter, index_select, masked_select, nonzero, take_along_dim."""
import builtins
import numbers
import warnings

from .. import _checks, _dtype
from .._tensor import Tensor, _wrap, _wrap_dim, bump_version
from .._array import xp, like_operands, copy_preserving_layout
from ..autograd.graph import connect, edge_of
from ._op import _state, method, record, make_node_class, _check_inplace, record_inplace, rebase_history
from ..autograd.grad_mode import no_grad

# What glasstorch (torch) has at its top level from this family; the other public functions here are
# Tensor methods only (x.view(...)) or torch.linalg's.
__all__ = ["gather", "scatter_add", "scatter", "scatter_reduce", "index_select", "index_add", "index_fill",
           "index_copy", "index_put", "masked_select", "nonzero", "argwhere", "take_along_dim", "take",
           "masked_scatter"]


def _np_index(i):
    if isinstance(i, Tensor):
        d = i._data
        if d.dtype.kind not in "iub":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return d
    if isinstance(i, list):
        a = xp.asarray([_np_index(x) if isinstance(x, Tensor) else x for x in i])
        # torch makes an index list a Long tensor (floats truncate, [] selects nothing) unless it is all bools
        return a if a.dtype == bool or a.dtype.kind in "iu" else a.astype("int64")
    if not isinstance(i, xp.ndarray):  # x[1.5], x['a']
        raise _checks.index_type_error(i)
    return i


def _is_other_sequence(index):
    """A sequence that is not one of the index types handled by name (a random_split Subset, a user
    class with __len__ and __getitem__): torch's PySequence_Check."""
    return (not isinstance(index, (tuple, list, range, str, bytes, dict, Tensor, xp.ndarray, xp.generic))
            and hasattr(type(index), "__getitem__") and hasattr(type(index), "__len__"))


def _sequence_as_index(index):
    """torch's treatSequenceAsTuple for a non-tuple sequence: 32 or more elements, or only plain
    numbers, make one index (a tensor of them); a shorter one holding tensors, sequences, slices,
    None or Ellipsis is a tuple of indices, with torch's deprecation warning."""
    items = list(index)
    if len(items) >= 32 or not builtins.any(
            isinstance(i, (Tensor, builtins.slice, list, tuple)) or i is None or i is Ellipsis for i in items):
        return ([int(i) if isinstance(i, Tensor) else i for i in items],)
    warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed "
                  "in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted "
                  "as tensor index, x[torch.tensor(seq)], which will result either in an error or a different "
                  "result", UserWarning, stacklevel=4)
    return tuple(items)


def _normalise(index):
    if _is_other_sequence(index):
        index = _sequence_as_index(index)
    elif not isinstance(index, tuple):
        index = (index,)
    if any(type(i) is range for i in index):  # d2l's y_hat[range(len(y_hat)), y]: a range is a list of ints
        index = tuple(list(i) if type(i) is range else i for i in index)
    return index


def _consumed(i):
    """How many input dims an index element uses (a bool mask uses as many as it has)."""
    if i is None or i is Ellipsis or isinstance(i, bool):
        return 0
    if isinstance(i, Tensor) and i._data.dtype == bool:  # (a 0-dim mask uses none)
        return i._data.ndim
    if isinstance(i, xp.ndarray) and i.dtype == bool:
        return i.ndim
    return 1


def _is_int_scalar(i):
    """A Python/NumPy int or a 0-dim integer tensor: torch applies it as select(), a view."""
    if isinstance(i, (int, xp.integer)) and not isinstance(i, bool):
        return True
    return isinstance(i, Tensor) and i._data.ndim == 0 and i._data.dtype.kind in "iu"


class IndexBackward0(make_node_class("IndexBackward0", None)):
    """Advanced indexing: scatter-add the gradient back into zeros of the input's shape."""

    def backward(self, grad):
        return _index_put_into_zeros(grad, self.self_sizes, self.indices, accumulate=True)


class IndexPutBackward0(make_node_class("IndexPutBackward0", None)):
    """index_put(self, indices, values): ``self`` keeps the gradient where it was not overwritten
    (all of it when accumulating); ``values`` get the gradient at the places they were put."""
    accumulate = False

    def backward(self, grad):
        return _put_backward(self, grad)


def _put_backward(node, grad):
    g_base = None
    if node.next_functions[0][0] is not None:
        if node.accumulate:
            g_base = grad
        else:
            filled = xp.zeros(grad._data.shape, dtype=bool)
            filled[node.indices] = True
            g_base = grad.masked_fill(_wrap(filled), 0)
    g_val = None
    if len(node.next_functions) > 1 and node.next_functions[1][0] is not None:
        g_val = _getitem_np(grad, node.indices)
    return g_base, g_val


def _index_put_into_zeros(grad, sizes, idx, accumulate=False):
    """zeros(sizes) with ``grad`` added at ``idx`` -- differentiable (its derivative is indexing)."""
    z = xp.zeros(sizes, dtype=grad._data.dtype)
    if accumulate and any(isinstance(i, xp.ndarray) and i.dtype != bool for i in idx):
        xp.add.at(z, idx, grad._data)
    else:
        z[idx] = grad._data
    res = _wrap(z)
    if grad._requires_grad and _state.enabled:
        node = record(IndexPutBackward0, res, (None, grad), meta_check=False)
        node.indices, node.accumulate = idx, accumulate
    return res


def _getitem_np(input, idx):
    src = input._data
    d = src[idx]
    if isinstance(d, xp.ndarray) and d.ndim > 1 and not (d.flags.c_contiguous and src.flags.c_contiguous):
        d = _index_result_layout(d, src, idx)
    res = _wrap(d)
    if input._requires_grad and _state.enabled:
        node = record(IndexBackward0, res, (input,), meta_check=False)
        node.self_sizes, node.indices = input._data.shape, idx
    return res


def _index_result_layout(d, src, idx):
    """The layout torch gives an advanced-indexing result: its TensorIterator runs over the input
    with the indexed dim's stride set to 0 and over the index tensor, so the other dims keep the
    input's order. Worked out for one 1-D index among full slices; otherwise row-major (NumPy may
    lay a result out transposed where torch's is contiguous)."""
    items = [i for i in idx]
    arrays = [k for k, i in enumerate(items) if isinstance(i, xp.ndarray)]
    if len(arrays) == 1 and items[arrays[0]].ndim == 1 and items[arrays[0]].dtype != bool and d.ndim == src.ndim \
            and all(isinstance(i, builtins.slice) and i == builtins.slice(None) for k, i in enumerate(items)
                    if k != arrays[0]):
        k = arrays[0]
        restrided = xp.lib.stride_tricks.as_strided(src, d.shape, tuple(0 if j == k else st
                                                                       for j, st in enumerate(src.strides)))
        index = items[k].reshape(tuple(-1 if j == k else 1 for j in range(d.ndim)))
        return like_operands(d, restrided, index)
    return d if d.flags.c_contiguous else d.copy()


def _full_slice(i, n):
    """A slice torch's indexing leaves out (start 0, step 1, through the end): ``x[:, 0]`` selects
    from ``x`` itself, not from a slice of it."""
    return (i.start is None or i.start == 0) and (i.step is None or i.step == 1) and \
        (i.stop is None or i.stop >= n)


def _apply_slicing(input, index, elide_full_slices=True):
    """torch's applySlicing: the basic indices (ints, slices, None, Ellipsis, bools) applied one
    by one as views (select/slice/unsqueeze), and the NumPy index of the advanced step (integer
    and boolean tensors, lists) on the result, with one entry per dim of that result. Returns
    ``(view, numpy_index, advanced)``; ``view`` is ``input`` itself when no index made a view."""
    from .shape import select, _slice, unsqueeze
    if type(index) is builtins.slice and input._data.ndim == 0:  # (a lone slice goes straight to slice())
        if input._requires_grad and _state.enabled:
            edge_of(input)  # (torch's autograd takes the input's history, and may refuse it, before slice() runs)
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    index = _normalise(index)
    nd = input._data.ndim
    used = builtins.sum(_consumed(i) for i in index)
    if used > nd:
        raise IndexError(f"too many indices for tensor of dimension {nd}")
    out = input
    dim = 0          # the dim of `out` the next index applies to
    in_dim = 0       # ... and of `input`, for messages
    np_idx = []      # the NumPy index for the advanced step, one entry per dim of `out` so far
    advanced = False
    for i in index:
        if i is None:
            out = unsqueeze(out, dim)
            np_idx.append(builtins.slice(None))
            dim += 1
        elif i is Ellipsis:
            k = nd - used
            np_idx += [builtins.slice(None)] * k
            dim += k
            in_dim += k
        elif _is_int_scalar(i):
            n = out._data.shape[dim]
            if not -n <= int(i) < n:  # (indexing words it differently from select())
                raise IndexError(f"index {int(i)} is out of bounds for dimension {in_dim} with size {n}")
            out = select(out, dim, int(i))
            in_dim += 1
        elif isinstance(i, builtins.slice):
            in_dim += 1
            n = out._data.shape[dim]
            if not (elide_full_slices and _full_slice(i, n)):
                start, stop, step = i.indices(n)
                if step <= 0:
                    raise ValueError("step must be greater than zero")
                out = _slice(out, dim, start, stop, step)
            np_idx.append(builtins.slice(None))
            dim += 1
        elif isinstance(i, bool) or (isinstance(i, Tensor) and i._data.ndim == 0 and i._data.dtype == bool):
            # torch: x[True] is x.unsqueeze(d)[[True]] (a dim of size 1), x[False] gives size 0
            out = unsqueeze(out, dim)
            np_idx.append(xp.asarray([bool(i)]))
            advanced = True
            dim += 1
        else:
            a = _np_index(i)
            advanced = True
            if a.dtype == bool:
                shp = out._data.shape[dim:dim + a.ndim]
                if a.shape != shp:
                    raise IndexError(f"The shape of the mask {list(a.shape)} at index {dim} does not match the "
                                     f"shape of the indexed tensor {list(out._data.shape)} at index {dim}")
                dim += a.ndim
            else:
                n = out._data.shape[dim]
                if a.size and (a.max() >= n or a.min() < -n):
                    bad = int(a.max()) if a.max() >= n else int(a.min())
                    raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {n}")
                dim += 1
            np_idx.append(a)
    return out, tuple(np_idx), advanced


def getitem(input, index):
    """tensor[index], as torch's python indexing does it: the basic indices as views, then the
    advanced ones in one IndexBackward0. A lone slice is always applied (``x[:]`` is a
    SliceBackward0); inside a tuple a full slice is left out, and an index that changes nothing
    gives an alias (``x[...]``, ``x[:, :]``: AliasBackward0)."""
    from .shape import _alias_view
    out, np_idx, advanced = _apply_slicing(input, index, elide_full_slices=type(index) is not builtins.slice)
    if advanced:
        return _getitem_np(out, np_idx)
    if out is input:
        return _alias_view(input)
    return out


Tensor.__getitem__ = getitem


def _prefix_1s_stripped(value):
    """torch's slicePrefix1sSize: the value without its leading size-1 dims (a view)."""
    vs = value._data.shape
    k = 0
    while k < len(vs) and vs[k] == 1:
        k += 1
    return value.view(vs[k:])


def _copy_to(dst, src):
    """torch's copy_to for ``x[basic index] = src``: copy_ when the shapes agree, fill_ for a 0-d
    value, else copy_ of the value viewed without its leading 1s and expanded to the target (so
    the graph shows ViewBackward0 and ExpandBackward0, and expand raises for a value that does not
    fit)."""
    from .pointwise import copy_, fill_
    if src._data.shape == dst._data.shape:
        copy_(dst, src)
    elif src._data.ndim == 0:
        fill_(dst, src)
    else:
        copy_(dst, _prefix_1s_stripped(src).expand(dst._data.shape))


def _index_put_(dst, idx, value, cast_value=False, accumulate=False):
    """``dst[idx] = value`` for an advanced index (``accumulate``: ``+=``, repeated places summing):
    one IndexPutBackward0 (the value viewed without its leading 1s, as torch's setitem does). The
    value must have ``dst``'s dtype, unless ``cast_value`` (torch's path for a boolean mask and a
    one-element value)."""
    vs = value._data.shape
    if vs and vs[0] == 1:
        value = _prefix_1s_stripped(value)
    involved = _check_inplace(dst, (value,), may_overlap=True, refuse_aliases="any")
    d = dst._data
    try:
        target = d[idx]  # (the shape the value must broadcast to; NumPy's message for a bad index)
    except IndexError as e:
        raise IndexError(str(e)) from None
    try:
        xp.broadcast_to(value._data, target.shape)
    except ValueError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(value._data.shape)} cannot be broadcast to "
                           f"indexing result of shape {list(target.shape)}") from None
    if value._data.dtype != d.dtype and not cast_value:  # (cast_value: the write casts, no node for it)
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{dst.dtype._legacy} for the destination and {value.dtype._legacy} for the source.")
    node = None
    if involved:
        node = record_inplace(IndexPutBackward0, dst, (dst, value))
        node.indices, node.accumulate = idx, accumulate
    if accumulate:
        xp.add.at(d, idx, value._data)
    else:
        d[idx] = value._data
    bump_version(dst, "index_put_")
    if node is not None:
        rebase_history(dst, node)


_NUMBERS = (int, float, bool)


def setitem(input, index, value):
    """``input[index] = value`` as torch's python indexing does it: the basic part of the index
    makes a view of ``input``, the value is written into it with copy_/fill_ (advanced indices:
    index_put_), and that in-place op on a view rewrites ``input``'s history (CopySlices).
    Without autograd, a basic index is written directly (the same write, one version bump)."""
    if not isinstance(value, (Tensor, numbers.Number, xp.generic, xp.ndarray)):
        raise _checks.assign_type_error(value, input)  # x[0] = [1.0, 2.0]: torch's TypeError
    if index is False:
        return
    if not input._requires_grad and _write_directly(input, index, value):
        return
    if not isinstance(value, Tensor):
        from ._op import as_tensor_arg
        value = as_tensor_arg(value, input)
    out, np_idx, advanced = _apply_slicing(input, index)
    if advanced:
        mask_and_one_value = isinstance(index, Tensor) and index._data.dtype == bool and index._data.ndim \
            and value._data.size == 1
        _index_put_(out, np_idx, value, cast_value=mask_and_one_value)
    else:
        _copy_to(out, value)


def _write_directly(input, index, value):
    """The fast path of setitem when autograd has nothing to record (``input`` needs no gradient,
    nor does the value, which does not share ``input``'s memory) and the index is basic: NumPy
    writes the elements, with the checks torch would make before (indices in range, positive
    steps, no write into an expanded tensor). Returns False to take the general path instead
    (which also gives torch's errors)."""
    if type(value) in _NUMBERS:
        v = value
    elif isinstance(value, Tensor) and not (value._requires_grad and _state.enabled) and value._vc is not input._vc \
            and type(value._data) is type(input._data):
        v = value._data
    else:
        return False
    d = input._data
    items = index if type(index) is tuple else (index,)
    shape, dim, ints = d.shape, 0, False
    for i in items:
        t = type(i)
        if t is int:
            if dim >= len(shape) or not -shape[dim] <= i < shape[dim]:
                return False
            dim, ints = dim + 1, True
        elif t is builtins.slice:
            if dim >= len(shape) or not (i.step is None or type(i.step) is int and i.step > 0):
                return False
            dim += 1
        elif i is Ellipsis:
            if ints or Ellipsis in items[items.index(i) + 1:]:
                return False  # (ints before an Ellipsis count from the front, after it from the back)
            dim = len(shape)
        elif i is not None:
            return False
    if dim > len(shape) or 0 in d.strides:
        return False
    try:
        d[items] = v
    except (ValueError, TypeError):
        return False  # (a value that does not fit: the general path raises torch's error)
    bump_version(input, "__setitem__")
    return True


Tensor.__setitem__ = setitem


# ---------------------------------------------------------------------------------------------
# gather / scatter / index_select
# ---------------------------------------------------------------------------------------------
def _check_index(index, fn, input, d, src=None):
    """torch's checks for gather/scatter indices: integer dtype, same number of dims, no larger
    than ``input`` (except on ``d``) and than ``src``, every index in [0, size)."""
    ia = index._data
    if ia.dtype.kind not in "iu":
        raise RuntimeError(f"{fn}(): Expected dtype int32/int64 for index")
    shape = input._data.shape
    if ia.ndim != len(shape) and ia.size:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    if ia.size:
        too_big = any(ia.shape[k] > shape[k] for k in range(len(shape)) if k != d)
        if src is not None and (too_big or any(ia.shape[k] > src._data.shape[k] for k in range(len(shape)))):
            raise RuntimeError(f"Expected index {list(ia.shape)} to be no larger than self {list(shape)} apart from "
                               f"dimension {d} and to be no larger size than src {list(src._data.shape)}")
        if src is None and too_big:
            raise RuntimeError(f"Size does not match at dimension {next(k for k in range(len(shape)) if k != d and ia.shape[k] > shape[k])} "
                               f"expected index {list(ia.shape)} to be no larger than self {list(shape)} apart "
                               f"from dimension {d}")
        n = shape[d] if shape else 1
        mx, mn = ia.max(), ia.min()
        if mx >= n or mn < 0:
            raise RuntimeError(f"index {int(mx) if mx >= n else int(mn)} is out of bounds for dimension {d} with "
                               f"size {n}")
    return ia


def _along(shape, dim, index_arr):
    """Full advanced index that puts ``index_arr`` on ``dim`` and aranges elsewhere (gather/scatter)."""
    grids = xp.indices(index_arr.shape, sparse=True)
    grids = list(grids)
    grids[dim] = index_arr
    return tuple(grids)


class GatherBackward0(make_node_class("GatherBackward0", None, ("index", "self"))):
    """Saves ``self`` as torch does (only its size is used, but modifying it in place before
    backward is an error in torch, so it is here too)."""

    def backward(self, grad):
        index, _ = self._unpack_saved()
        from .creation import zeros
        return zeros(self.self_sizes, dtype=grad.dtype).scatter_add(self.dim, index, grad)


@method()
def gather(input, dim, index, *, sparse_grad=False):
    d = _wrap_dim(dim, input._data.ndim)
    ia = _check_index(index, "gather", input, d)
    res = _wrap(input._data[_along(input._data.shape, d, ia)])
    if input._requires_grad and _state.enabled:
        node = record(GatherBackward0, res, (input,), (index, input), meta_check=False)
        node.self_sizes, node.dim = input._data.shape, d
    return res


class ScatterAddBackward0(make_node_class("ScatterAddBackward0", None, ("index",))):
    def backward(self, grad):
        (index,) = self._unpack_saved()
        return grad, (grad.gather(self.dim, index) if self.next_functions[1][0] is not None else None)


class ScatterBackward0(make_node_class("ScatterBackward0", None, ("index",))):
    def backward(self, grad):
        (index,) = self._unpack_saved()
        return grad.scatter(self.dim, index, 0), \
            (grad.gather(self.dim, index) if len(self.next_functions) > 1 and self.next_functions[1][0] is not None
             else None)


ScatterBackward1 = make_node_class("ScatterBackward1", lambda self, grad: grad.scatter(
    self.dim, self._unpack_saved()[0], 0), ("index",))


@method()
def scatter_add(input, dim, index, src):
    d = _wrap_dim(dim, input._data.ndim)
    ia = _check_index(index, "scatter", input, d, src)
    if src._data.dtype != input._data.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    out = input._data.copy()
    sa = src._data[tuple(builtins.slice(0, s) for s in ia.shape)]
    xp.add.at(out, _along(out.shape, d, ia), sa.astype(out.dtype, copy=False))
    res = _wrap(out)
    if _state.enabled and (input._requires_grad or src._requires_grad):
        record(ScatterAddBackward0, res, (input, src), (index,)).dim = d
    return res


@method()
def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    if src is None:
        src = value
    d = _wrap_dim(dim, input._data.ndim)
    ia = _check_index(index, "scatter", input, d, src if isinstance(src, Tensor) else None)
    if isinstance(src, Tensor) and src._data.dtype != input._data.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    out = input._data.copy()
    where = _along(out.shape, d, ia)
    if isinstance(src, Tensor):
        sa = src._data[tuple(builtins.slice(0, s) for s in ia.shape)].astype(out.dtype, copy=False)
    else:
        sa = src
    if reduce is None:
        out[where] = sa
    elif reduce == "add":
        xp.add.at(out, where, sa)
    elif reduce == "multiply":
        xp.multiply.at(out, where, sa)
    else:
        raise RuntimeError(f"reduce argument must be either add or multiply.")
    res = _wrap(out)
    if _state.enabled and (input._requires_grad or isinstance(src, Tensor) and src._requires_grad):
        if isinstance(src, Tensor):
            record(ScatterBackward0, res, (input, src), (index,)).dim = d
        else:
            record(ScatterBackward1, res, (input,), (index,)).dim = d
    return res


Tensor.scatter_ = lambda self, dim, index, src=None, *, value=None, reduce=None: _inplace(
    self, "scatter_", scatter, dim, index, src, value=value, reduce=reduce)
Tensor.scatter_add_ = lambda self, dim, index, src: _inplace(self, "scatter_add_", scatter_add, dim, index, src)


def _inplace(self, name, fn, *args, **kwargs):
    from ._op import inplace
    return inplace(self, name, fn, *args, **kwargs)


from .scatter_reduce import scatter_reduce  # noqa: E402,F401  (its own file: the op and its derivative)


class IndexSelectBackward0(make_node_class("IndexSelectBackward0", None, ("index",))):
    def backward(self, grad):
        (index,) = self._unpack_saved()
        from .creation import zeros
        return zeros(self.self_sizes, dtype=grad.dtype).index_add(self.dim, index, grad)


@method()
def index_select(input, dim, index):
    if index._data.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    d = _wrap_dim(dim, input._data.ndim) if input._data.ndim else 0
    if index._data.dtype.kind not in "iu":
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    ia = index._data.reshape(-1)
    n = input._data.shape[d] if input._data.ndim else 1
    if ia.size and (ia.max() >= n or ia.min() < 0):
        if d == 0:  # torch's two kernels word it differently (and raise different types)
            raise IndexError("index out of range in self")
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={int(ia.max() if ia.max() >= n else ia.min())} "
                           f"axis_dim={n}")
    res = _wrap(xp.take(input._data, ia, axis=d) if input._data.ndim else input._data.copy())
    if input._requires_grad and _state.enabled:
        node = record(IndexSelectBackward0, res, (input,), (index,), meta_check=False)
        node.self_sizes, node.dim = input._data.shape, d
    return res


class IndexAddBackward0(make_node_class("IndexAddBackward0", None, ("index",))):
    def backward(self, grad):
        (index,) = self._unpack_saved()
        gs = None
        if len(self.next_functions) > 1 and self.next_functions[1][0] is not None:
            gs = grad.index_select(self.dim, index) * self.alpha
        return grad, gs


@method()
def index_add(input, dim, index, source, *, alpha=1):
    d = _wrap_dim(dim, input._data.ndim)
    out = input._data.copy()
    idx = [builtins.slice(None)] * out.ndim
    idx[d] = index._data.reshape(-1)
    if source._data.ndim and idx[d].size != source._data.shape[d]:
        raise RuntimeError(f"index_add_(): Number of indices ({idx[d].size}) should be equal to source.size(dim): "
                           f"({source._data.shape[d]}), for dim: {d}")
    _checks.check_index_bounds(idx[d], out.shape[d], d, error=RuntimeError)  # (index_add's is a RuntimeError)
    xp.add.at(out, tuple(idx), (source._data * alpha if alpha != 1 else source._data).astype(out.dtype, copy=False))
    res = _wrap(out)
    if _state.enabled and (input._requires_grad or source._requires_grad):
        node = record(IndexAddBackward0, res, (input, source), (index,))
        node.dim, node.alpha = d, alpha
    return res


Tensor.index_add_ = lambda self, dim, index, source, *, alpha=1: _inplace(
    self, "index_add_", index_add, dim, index, source, alpha=alpha)


class IndexFillBackward0(make_node_class("IndexFillBackward0", None)):
    """index_fill(self, dim, index, number): the filled places get no gradient."""

    def backward(self, grad):
        return grad.index_fill(self.dim, self.index, 0)


@method()
def index_fill(input, dim, index, value):
    d = _wrap_dim(dim, input._data.ndim)
    idx = [builtins.slice(None)] * input._data.ndim
    idx[d] = index._data
    _checks.check_index_bounds(index._data, input._data.shape[d], d)
    mask = xp.zeros(input._data.shape, dtype=bool)
    mask[tuple(idx)] = True
    if isinstance(value, Tensor):
        return input.masked_fill(_wrap(mask), value)
    with no_grad():
        res = input.masked_fill(_wrap(mask), value)
    if input._requires_grad and _state.enabled:
        node = record(IndexFillBackward0, res, (input,), meta_check=False)
        node.dim, node.index = d, index
    return res


Tensor.index_fill_ = lambda self, dim, index, value: _inplace(self, "index_fill_", index_fill, dim, index, value)


@method()
def index_copy(input, dim, index, source):
    d = _wrap_dim(dim, input._data.ndim)
    out = input.clone()
    idx = [builtins.slice(None)] * input._data.ndim
    idx[d] = index
    out[tuple(idx)] = source
    return out


@method()
def index_put(input, indices, values, accumulate=False):
    """A copy of ``input`` with ``values`` put (or added) at ``indices``: one IndexPutBackward0 over
    input's history, as torch records it (its copy of the input is no node of its own)."""
    out = _wrap(copy_preserving_layout(input._data))
    if input._requires_grad and _state.enabled:
        out._requires_grad = True
        out._grad_fn, out._output_nr = edge_of(input)
    if accumulate:
        _index_put_(out, tuple(_np_index(i) for i in indices), values, accumulate=True)
    else:
        out[tuple(indices)] = values
    return out


Tensor.index_put_ = lambda self, indices, values, accumulate=False: _inplace(
    self, "index_put_", index_put, indices, values, accumulate)


class MaskedSelectBackward0(make_node_class("MaskedSelectBackward0", None, ("mask",))):
    def backward(self, grad):
        (mask,) = self._unpack_saved()
        full = xp.broadcast_to(mask._data, self.self_sizes)
        return _index_put_into_zeros(grad, self.self_sizes, (full,))


@method()
def masked_select(input, mask):
    m = xp.broadcast_to(mask._data, _checks.broadcast_shape(input._data.shape, mask._data.shape))
    d = xp.broadcast_to(input._data, m.shape)
    res = _wrap(d[m])
    if input._requires_grad and _state.enabled:
        # (meta_check: a gradient for a broadcast input is summed back to its shape by the engine)
        record(MaskedSelectBackward0, res, (input,), (mask,)).self_sizes = m.shape
    return res


@method()
def nonzero(input, *, as_tuple=False):
    if not input._data.ndim and not as_tuple:     # a 0-d tensor: one empty coordinate if it is nonzero
        return _wrap(xp.zeros((int(bool(input._data)), 0), "int64"))
    nz = xp.nonzero(input._data) if input._data.ndim else xp.nonzero(input._data.reshape(1))
    if as_tuple:
        return tuple(_wrap(a.astype("int64")) for a in nz)
    return _wrap(xp.stack(nz, axis=1).astype("int64") if nz else xp.zeros((0, 0), "int64"))


def argwhere(input):
    return nonzero(input)


Tensor.argwhere = argwhere


class TakeAlongDimBackward0(make_node_class("TakeAlongDimBackward0", None, ("indices",))):
    def backward(self, grad):
        (index,) = self._unpack_saved()
        from .creation import zeros
        z = zeros(self.self_sizes, dtype=grad.dtype)
        return z.scatter_add(self.dim, index.expand(grad.shape) if index.shape != grad.shape else index, grad)


@method()
def take_along_dim(input, indices, dim=None):
    """gather along ``dim`` after broadcasting input and indices against each other (except on
    ``dim``), as torch does: both go through expand, so the graph shows ExpandBackward0."""
    if dim is None:
        return input.view(-1).gather(0, indices.view(-1))
    d = _wrap_dim(dim, input._data.ndim)
    shape = list(xp.broadcast_shapes(
        tuple(1 if i == d else s for i, s in enumerate(input._data.shape)),
        tuple(1 if i == d else s for i, s in enumerate(indices._data.shape))))
    ishape = shape.copy()
    ishape[d] = indices._data.shape[d]
    xshape = shape.copy()
    xshape[d] = input._data.shape[d]
    return gather(input.expand(xshape), d, indices.expand(ishape))


@method()
def take(input, index):
    return input.reshape(-1)[index]


@method()
def masked_scatter(input, mask, source):
    out = input.clone()
    m = xp.broadcast_to(mask._data, input._data.shape)
    if source._data.size < int(m.sum()):
        raise RuntimeError("Number of elements of source < number of ones in mask")
    out._data[m] = source._data.reshape(-1)[:int(m.sum())]
    return out
