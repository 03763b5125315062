"""Views and shape ops. A view shares its base's array and version counter, as torch's views do,
so a write through either is seen by both and in-place checks cover both."""
import builtins
from operator import index

from .._tensor import (Tensor, _wrap, Size, _wrap_dim, make_view as _view, preserve_format, contiguous_format,
                       memory_format as _memory_format,
                       bump_version)
from .._array import xp, expanded, copy_preserving_layout, unsqueezed
from ..autograd.graph import MULTI_OUTPUT_NODE, set_history, check_inplace, edge_of
from ._op import _state, method, record, make_node_class, operands, result_dtype
from .. import _dtype, _checks
from .._ops import defop, aten
from .._seam import seam
from ._derivatives import sum_to

# What glasstorch (torch) has at its top level from this family; the other public functions here are
# Tensor methods only (x.view(...)) or torch.linalg's.
__all__ = ["reshape", "flatten", "unflatten", "permute", "transpose", "swapaxes", "swapdims", "t", "adjoint",
           "movedim", "moveaxis", "broadcast_to", "broadcast_tensors", "broadcast_shapes", "squeeze",
           "unsqueeze", "narrow", "select", "unbind", "split", "chunk", "tensor_split", "clone", "ravel",
           "atleast_1d", "atleast_2d"]


def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, Size)):
        shape = tuple(shape[0])
    try:
        return tuple(index(s) for s in shape)
    except TypeError:  # 2.0, '3', a tensor of several elements: torch's parser takes ints only
        raise _checks.size_error(shape) from None


def _infer_shape(shape, numel, fn="view"):
    shape = list(shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if neg:
        if known == 0 and numel == 0:
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} because the unspecified "
                               f"dimension size -1 can be any value and is ambiguous")
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[neg[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


class ViewBackward0(make_node_class("ViewBackward0", None)):
    def backward(self, grad):
        return grad.reshape(self.self_sizes)


UnsafeViewBackward0 = make_node_class("UnsafeViewBackward0", ViewBackward0.backward)
ReshapeAliasBackward0 = make_node_class("ReshapeAliasBackward0", ViewBackward0.backward)


@method()
def view(input, *shape):
    if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list, Size)):
        if not isinstance(shape[0], _dtype.dtype):
            raise _checks.size_error(shape)
        return input.to(shape[0]) if shape[0].itemsize == input.itemsize else _bad_view_dtype(input, shape[0])
    try:
        shape = _infer_shape(_shape_arg(shape), input._data.size)
        arr = input._data.view()
        arr.shape = shape
    except (AttributeError, RuntimeError) as e:
        if input._requires_grad and _state.enabled:
            edge_of(input)  # (torch's autograd takes the input's history, and may refuse it, before the kernel runs)
        if isinstance(e, RuntimeError):
            raise
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one dimension "
                           "spans across two contiguous subspaces). Use .reshape(...) instead.") from None
    out = _view(input, arr)
    if input._requires_grad and _state.enabled:
        record(ViewBackward0, out, (input,), meta_check=False).self_sizes = input._data.shape
    return out


def _bad_view_dtype(input, dtype):
    raise RuntimeError("glasstorch: view(dtype) with a different element size is not supported")


@method()
def reshape(input, *shape):
    shape = _infer_shape(_shape_arg(shape), input._data.size)
    arr = input._data.view()
    try:
        arr.shape = shape
    except AttributeError:  # needs a copy: torch clones then views (CloneBackward0 -> UnsafeViewBackward0)
        c = clone(input, memory_format=contiguous_format)
        out = _wrap(c._data.reshape(shape))
        if c._requires_grad and _state.enabled:
            record(UnsafeViewBackward0, out, (c,), meta_check=False).self_sizes = c._data.shape
        return out
    out = _view(input, arr)
    if input._requires_grad and _state.enabled:
        # torch: a contiguous input is viewed; a strided one that needs no copy goes through _reshape_alias
        node_cls = ViewBackward0 if input._data.flags.c_contiguous else ReshapeAliasBackward0
        record(node_cls, out, (input,), meta_check=False).self_sizes = input._data.shape
    return out


@method()
def view_as(input, other):
    return view(input, other.shape)


@method()
def reshape_as(input, other):
    return reshape(input, other.shape)


@method()
def flatten(input, start_dim=0, end_dim=-1):
    nd = input._data.ndim
    if nd == 0:
        return reshape(input, 1)
    s, e = _wrap_dim(start_dim, nd), _wrap_dim(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shp = input._data.shape
    n = 1
    for d in shp[s:e + 1]:
        n *= d
    return reshape(input, shp[:s] + (n,) + shp[e + 1:])


@method()
def unflatten(input, dim, sizes):
    shp = input._data.shape
    d = _wrap_dim(dim, input._data.ndim)
    sizes = list(sizes)
    if -1 in sizes:
        known = 1
        for s in sizes:
            if s != -1:
                known *= s
        sizes[sizes.index(-1)] = shp[d] // known
    n = 1
    for s in sizes:
        n *= s
    if n != shp[d]:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} "
                           f"({shp[d]}) in the input tensor")
    return view(input, shp[:d] + tuple(sizes) + shp[d + 1:])


class PermuteBackward0(make_node_class("PermuteBackward0", None)):
    def backward(self, grad):
        inv = [0] * len(self.dims)
        for i, d in enumerate(self.dims):
            inv[d] = i
        return grad.permute(inv)


@method()
def permute(input, *dims):
    nd = input._data.ndim
    if not dims:
        raise TypeError('permute() missing 1 required positional arguments: "dims"')
    dims = _shape_arg(dims)
    if len(dims) != nd:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the length "
                           f"of the desired ordering of dimensions i.e. input.dim() = {nd} is not equal to "
                           f"len(dims) = {len(dims)}")
    dims = tuple(_wrap_dim(d, nd) for d in dims)
    if len(set(dims)) != nd:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the length "
                           f"of the desired ordering of dimensions i.e. input.dim() = {nd} is not equal to "
                           f"len(dims) = {len(dims)}" if len(dims) != nd else "permute(): duplicate dims are not allowed.")
    out = _view(input, input._data.transpose(dims))
    if input._requires_grad and _state.enabled:
        record(PermuteBackward0, out, (input,), meta_check=False).dims = dims
    return out


def _transpose_kernel(self, dim0, dim1):
    nd = self.ndim
    d0, d1 = _wrap_dim(dim0, nd), _wrap_dim(dim1, nd)
    return xp.swapaxes(self, d0, d1) if nd else self.view()


def _t_kernel(self):
    if self.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    return self.T


transpose_op = defop("transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)", _transpose_kernel,
                     node="TransposeBackward0",
                     self=lambda grad, dim0, dim1: aten.transpose.int(grad, dim0, dim1))
t_op = defop("t(Tensor(a) self) -> Tensor(a)", _t_kernel, node="TBackward0", self=lambda grad: aten.t(grad))
TransposeBackward0, TBackward0 = transpose_op.node, t_op.node


@method("transpose", "swapaxes", "swapdims")
def transpose(input, dim0, dim1):
    if seam.on:
        return seam.torch_function(transpose, (input, dim0, dim1), {})
    return transpose_op(input, dim0, dim1)


swapaxes = swapdims = transpose


@method()
def t(input):
    if seam.on:
        return seam.torch_function(t, (input,), {})
    return t_op(input)


Tensor.T = property(lambda self: permute(self, tuple(range(self._data.ndim - 1, -1, -1))))
def _mT(self):
    if self._data.ndim < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got {self._data.ndim}-D "
                           f"tensor.")
    return transpose(self, -2, -1)


Tensor.mT = property(_mT)
Tensor.H = property(lambda self: permute(self, tuple(range(self._data.ndim - 1, -1, -1))))
Tensor.mH = Tensor.mT


@method()
def adjoint(input):
    return transpose(input, -2, -1)


@method()
def movedim(input, source, destination):
    nd = input._data.ndim
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    src = [_wrap_dim(s, nd) for s in src]
    dst = [_wrap_dim(d, nd) for d in dst]
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(input, order)


moveaxis = movedim
Tensor.moveaxis = movedim


def _expand_kernel(self, size, *, implicit=False):
    sizes = tuple(size)
    shp = self.shape
    if len(sizes) < len(shp):
        raise RuntimeError(f"expand(torch.{_dtype._BY_NUMPY[self.dtype]._legacy}Tensor{{{list(shp)}}}, "
                           f"size=[{', '.join(map(str, sizes))}]): the number of sizes provided ({len(sizes)}) must "
                           f"be greater or equal to the number of dimensions in the tensor ({len(shp)})")
    lead = len(sizes) - len(shp)
    target = [0] * len(sizes)
    for i in range(len(sizes) - 1, -1, -1):  # (from the last dim, as torch checks them)
        s = sizes[i]
        if i < lead:
            if s == -1:
                raise RuntimeError("expand: -1 is not allowed in a leading, non-existing dimension")
        else:
            cur = shp[i - lead]
            if s == -1:
                s = cur
            elif cur != 1 and s != cur:
                raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                                   f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                                   f"{list(shp)}")
        target[i] = s
    return expanded(self, tuple(target))


expand_op = defop("expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)", _expand_kernel,
                  node="ExpandBackward0", self=lambda grad, self_sizes: sum_to(grad, self_sizes))
ExpandBackward0 = expand_op.node


@method()
def expand(input, *sizes):
    if seam.on:
        return seam.torch_function(expand, (input, *sizes), {})
    return expand_op(input, _shape_arg(sizes))


@method()
def expand_as(input, other):
    return expand(input, other.shape)


def broadcast_to(input, shape):
    return expand(input, shape)


Tensor.broadcast_to = broadcast_to


def broadcast_tensors(*tensors):
    shape = _checks.broadcast_shape(*[t._data.shape for t in tensors])
    return tuple(expand(t, shape) for t in tensors)


def broadcast_shapes(*shapes):
    return Size(_checks.broadcast_shape(*(_shape_arg((s,)) if not isinstance(s, int) else (s,) for s in shapes)))


@method()
def sum_to_size(input, *size):
    size = _shape_arg(size)
    if input._data.shape == size:
        return input
    from ..autograd.engine import _sum_to
    return _sum_to(input, size)


SqueezeBackward0 = make_node_class("SqueezeBackward0", lambda self, grad: grad.reshape(self.self_sizes))
SqueezeBackward1 = make_node_class("SqueezeBackward1", lambda self, grad: grad.reshape(self.self_sizes))
SqueezeBackward2 = make_node_class("SqueezeBackward2", lambda self, grad: grad.reshape(self.self_sizes))
UnsqueezeBackward0 = make_node_class("UnsqueezeBackward0", lambda self, grad: grad.squeeze(self.dim))


@method()
def squeeze(input, dim=None):
    shp = input._data.shape
    nd = len(shp)
    if dim is None:
        node_cls, axes = SqueezeBackward0, tuple(i for i, s in enumerate(shp) if s == 1)
    elif isinstance(dim, (tuple, list)):
        node_cls = SqueezeBackward2
        axes = tuple(d for d in (_wrap_dim(x, nd) for x in dim) if nd and shp[d] == 1)
    else:
        d = _wrap_dim(dim, nd)
        node_cls, axes = SqueezeBackward1, ((d,) if nd and shp[d] == 1 else ())
    out = _view(input, input._data.squeeze(axes) if axes else input._data.view())
    if input._requires_grad and _state.enabled:
        record(node_cls, out, (input,), meta_check=False).self_sizes = shp
    return out


@method()
def unsqueeze(input, dim):
    nd = input._data.ndim
    d = _wrap_dim(dim, nd + 1)
    out = _view(input, unsqueezed(input._data, d))
    if input._requires_grad and _state.enabled:
        record(UnsqueezeBackward0, out, (input,), meta_check=False).dim = d
    return out


class SliceBackward0(make_node_class("SliceBackward0", None)):
    def backward(self, grad):
        idx = [builtins.slice(None)] * len(self.self_sizes)
        idx[self.dim] = builtins.slice(self.start, self.end, self.step)
        return _scatter_slice(grad, self.self_sizes, tuple(idx))


class SelectBackward0(make_node_class("SelectBackward0", None)):
    def backward(self, grad):
        idx = [builtins.slice(None)] * len(self.self_sizes)
        idx[self.dim] = self.index
        return _scatter_slice(grad, self.self_sizes, tuple(idx))


def _scatter_slice(grad, sizes, idx):
    """Differentiable 'zeros with grad placed at idx' (for double backward through slicing)."""
    from .indexing import _index_put_into_zeros
    return _index_put_into_zeros(grad, sizes, idx)


def _slice(input, dim, start, end, step):
    d = _wrap_dim(dim, input._data.ndim)
    idx = [builtins.slice(None)] * input._data.ndim
    sl = builtins.slice(start, end, step)
    idx[d] = sl
    out = _view(input, input._data[tuple(idx)])
    if input._requires_grad and _state.enabled:
        node = record(SliceBackward0, out, (input,), meta_check=False)
        node.self_sizes, node.dim = input._data.shape, d
        node.start, node.end, node.step = sl.indices(input._data.shape[d])
    return out


@method()
def narrow(input, dim, start, length):
    d = _wrap_dim(dim, input._data.ndim)
    n = input._data.shape[d]
    if isinstance(start, Tensor):
        start = start.item()
    if start < 0:
        start += n
    if start < 0 or start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return _slice(input, d, start, start + length, 1)


@method()
def select(input, dim, index):
    nd = input._data.ndim
    if nd == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, nd)
    n = input._data.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input._data.shape)} at "
                         f"dimension {d}")
    index = index + n if index < 0 else index
    idx = (builtins.slice(None),) * d + (index, Ellipsis)  # (the Ellipsis: a 0-d result is a view, not a copy)
    out = _view(input, input._data[idx])
    if input._requires_grad and _state.enabled:
        node = record(SelectBackward0, out, (input,), meta_check=False)
        node.self_sizes, node.dim, node.index = input._data.shape, d, index
    return out


class UnbindBackward0(make_node_class("UnbindBackward0", None)):
    def backward(self, *grads):
        from .joining import stack
        full = [g if g is not None else _zeros(self.part_shape, self.dtype) for g in grads]
        return stack(full, self.dim)


def _zeros(shape, dtype):
    from .creation import zeros
    return zeros(shape, dtype=dtype)


@method()
def unbind(input, dim=0):
    d = _wrap_dim(dim, input._data.ndim)
    n = input._data.shape[d]
    pre = (builtins.slice(None),) * d
    outs = tuple(_view(input, input._data[pre + (i, Ellipsis)], MULTI_OUTPUT_NODE) for i in range(n))
    if input._requires_grad and _state.enabled:
        node = UnbindBackward0.__new__(UnbindBackward0)
        node.num_outputs = n
        node.dim, node.dtype = d, input.dtype
        node.part_shape = input._data.shape[:d] + input._data.shape[d + 1:]
        from ..autograd.graph import connect
        connect(node, (input,), outs)
    return outs


class SplitBackward0(make_node_class("SplitBackward0", None)):
    def backward(self, *grads):
        from .joining import cat
        parts = []
        for g, size in zip(grads, self.sizes):
            if g is None:
                shape = list(self.self_sizes)
                shape[self.dim] = size
                g = _zeros(tuple(shape), self.dtype)
            parts.append(g)
        return cat(parts, self.dim)


SplitWithSizesBackward0 = make_node_class("SplitWithSizesBackward0", SplitBackward0.backward)


@method()
def split(input, split_size_or_sections, dim=0):
    d = _wrap_dim(dim, input._data.ndim)
    n = input._data.shape[d]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step <= 0 and n:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={step}")
        sizes = [min(step, n - i) for i in range(0, n, step)] if n else [0]
        node_cls = SplitBackward0
    else:
        sizes = list(split_size_or_sections)
        if sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                               f"dimension {d}), but got split_sizes={sizes}")
        node_cls = SplitWithSizesBackward0
    return _split(input, d, sizes, node_cls)


def _split(input, d, sizes, node_cls):
    pre = (builtins.slice(None),) * d
    outs, start = [], 0
    for s in sizes:
        outs.append(_view(input, input._data[pre + (builtins.slice(start, start + s),)], MULTI_OUTPUT_NODE))
        start += s
    outs = tuple(outs)
    if input._requires_grad and _state.enabled:
        node = node_cls.__new__(node_cls)
        node.num_outputs = len(outs)
        node.dim, node.sizes, node.self_sizes, node.dtype = d, sizes, input._data.shape, input.dtype
        from ..autograd.graph import connect
        connect(node, (input,), outs)
    return outs


@method()
def chunk(input, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    d = _wrap_dim(dim, input._data.ndim)
    n = input._data.shape[d]
    if n == 0:  # torch: `chunks` empty pieces
        return _split(input, d, [0] * chunks, SplitWithSizesBackward0)
    return split(input, -(-n // chunks), d)


@method()
def tensor_split(input, indices_or_sections, dim=0):
    """Pieces of ``input`` along ``dim``: each one ``slice`` of it, as torch's composite makes them
    (SliceBackward0 views, each one writable in place -- not the outputs of one split node)."""
    d = _wrap_dim(dim, input._data.ndim)
    n = input._data.shape[d]
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        if k <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {k}")
        bounds = [0]
        for i in range(k):
            bounds.append(bounds[-1] + n // k + (1 if i < n % k else 0))
    else:
        bounds = [0] + [int(i) for i in indices_or_sections] + [n]
    return tuple(aten.slice(input, d, a, b) for a, b in zip(bounds, bounds[1:]))


CloneBackward0 = make_node_class("CloneBackward0", lambda self, grad: grad)
AliasBackward0 = make_node_class("AliasBackward0", lambda self, grad: grad)


@method()
def clone(input, *, memory_format=preserve_format):
    """A copy with its own memory. Laid out as the input (torch's preserve_format: ``x.t().clone()``
    is not contiguous either) unless ``memory_format=torch.contiguous_format``."""
    if memory_format is None:  # (torch's default: None is preserve_format)
        memory_format = preserve_format
    elif not isinstance(memory_format, _memory_format):
        raise TypeError(f"clone(): argument 'memory_format' must be torch.memory_format, "
                        f"not {_checks.type_name(memory_format)}")
    d = input._data
    out = _wrap(copy_preserving_layout(d) if memory_format is preserve_format else d.copy())
    if input._requires_grad and _state.enabled:
        record(CloneBackward0, out, (input,), meta_check=False)
    return out


@method()
def contiguous(input, memory_format=None):
    if input._data.flags.c_contiguous:
        return input
    return clone(input, memory_format=contiguous_format)


def _alias_view(input):
    out = _view(input, input._data.view())
    if input._requires_grad and _state.enabled:
        record(AliasBackward0, out, (input,), meta_check=False)
    return out


@method()
def ravel(input):
    return reshape(contiguous(input), -1)


def atleast_1d(*tensors):
    r = [t if t.dim() >= 1 else t.reshape(1) for t in (tensors[0] if len(tensors) == 1 and
                                                        isinstance(tensors[0], (list, tuple)) else tensors)]
    return r[0] if len(r) == 1 else tuple(r)


def atleast_2d(*tensors):
    r = [t if t.dim() >= 2 else t.reshape(1, -1) for t in (tensors[0] if len(tensors) == 1 and
                                                           isinstance(tensors[0], (list, tuple)) else tensors)]
    return r[0] if len(r) == 1 else tuple(r)


# ---- in-place view ops: the tensor itself takes the new shape ---------------------------------
def _inplace_view(self, name, fn, *args):
    """x.unsqueeze_(0) and friends: ``x`` becomes the view ``fn(x, *args)`` (same data, new shape),
    which counts as a write (its version moves on), with torch's node for the in-place form
    (UnsqueezeBackward1 ...: the same derivative as the out-of-place node's)."""
    check_inplace(self, self._requires_grad and _state.enabled)
    res = fn(self, *args)
    self._data = res._data
    bump_version(self, name)
    node = res._grad_fn
    if node is not None:
        node.__class__ = _INPLACE_VIEW_NODES[type(node)]
        if self._base is None:
            set_history(self, node, move_retained_grad=False)  # (.grad keeps the retained shape, as torch)
        else:  # a view stays a view of its base, its history continued by the new node (as torch)
            self._grad_fn, self._output_nr, self._attr_version = node, 0, self._vc.version
    return self


# the in-place view ops' nodes: the out-of-place node's class under torch's other name (a subclass, so a
# defop node keeps its generated formula code)
_INPLACE_VIEW_NODES = {cls: type(cls)(name, (cls,), {"__qualname__": name, "__module__": cls.__module__})
                       for cls, name in (
    (UnsqueezeBackward0, "UnsqueezeBackward1"), (SqueezeBackward0, "SqueezeBackward3"),
    (SqueezeBackward1, "SqueezeBackward4"), (SqueezeBackward2, "SqueezeBackward5"), (TBackward0, "TBackward1"),
    (TransposeBackward0, "TransposeBackward1"))}
Tensor.squeeze_ = lambda self, dim=None: _inplace_view(self, "squeeze_", squeeze, dim)
Tensor.unsqueeze_ = lambda self, dim: _inplace_view(self, "unsqueeze_", unsqueeze, dim)
Tensor.t_ = lambda self: _inplace_view(self, "t_", t)
Tensor.transpose_ = lambda self, dim0, dim1: _inplace_view(self, "transpose_", transpose, dim0, dim1)
Tensor.swapaxes_ = Tensor.swapdims_ = Tensor.transpose_


def _resize_(self, *sizes):
    """Keep the first elements in flat order; new elements are zeros (torch leaves them uninitialised)."""
    if self._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    sizes = _shape_arg(sizes)
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(sizes)}: {list(sizes)}")
    n = 1
    for s in sizes:
        n *= s
    flat = self._data.reshape(-1)
    new = xp.zeros(n, dtype=self._data.dtype)
    k = min(n, flat.size)
    new[:k] = flat[:k]
    self._data = new.reshape(sizes)
    return self


Tensor.resize_ = _resize_
Tensor.resize_as_ = lambda self, other: _resize_(self, other.shape)
