"""Views and shape ops. A view shares its base's array and version counter, as torch's views do,
so a write through either is seen by both and in-place checks cover both.

Each primitive op is declared with ``defop`` as torch declares it (its schema, the node it records,
one formula per input as in ``derivatives.yaml``); a schema output ``Tensor(a)`` makes the result a
view of input ``a`` (``_tensor.make_view``: the base, the version counter, the creation meta). The
public functions parse torch's argument forms and call the ops torch's own decompositions call, so a
TorchDispatchMode sees what it sees under torch: ``flatten``/``reshape`` are ``aten.view`` (or
``aten.clone`` + ``aten._unsafe_view`` when a copy is needed), ``chunk`` is ``aten.split``,
``narrow``/``tensor_split`` are ``aten.slice``, ``movedim``/``Tensor.T`` are ``aten.permute``.
"""
import collections.abc
import math
from operator import index

from .._tensor import (Tensor, Size, _wrap, _wrap_dim, make_view as _view, check_inference_write,  # (_view: for joining's diagonal)
                       preserve_format, contiguous_format,
                       memory_format as _memory_format, bump_version, _intercepted_property)
from .._array import (view_strides, xp, expanded, copy_preserving_layout, unsqueezed, data_ptr, root_array,
                      as_strided as _strided_view, zeros_like as _zeros_like)
from ..autograd.graph import set_history, check_inplace, edge_of
from ._op import _state, method, accepts_numpy_names
from .. import _dtype, _checks
from .._ops import defop, aten, node_classes_of, Plain
from .._seam import seam, overridable
from ._derivatives import sum_to, as_strided_backward

__getattr__ = node_classes_of(__name__)    # (the node classes declared here, by name: TanhBackward0)

# What glasstorch (torch) has at its top level from this family; the other public functions here are
# Tensor methods only (x.view(...)) or torch.linalg's.
__all__ = ["reshape", "flatten", "unflatten", "permute", "transpose", "swapaxes", "swapdims", "t", "adjoint",
           "movedim", "moveaxis", "broadcast_to", "broadcast_tensors", "broadcast_shapes", "squeeze",
           "unsqueeze", "narrow", "select", "unbind", "split", "chunk", "tensor_split", "clone", "ravel",
           "atleast_1d", "atleast_2d", "atleast_3d", "resize_as_", "as_strided", "as_strided_"]



# ---- slice and _unsafe_view: the views indexing, narrow and the copying reshape make ----------------------
def _slice_kernel(self, dim=0, start=None, end=None, step=1):
    d = _wrap_dim(dim, self.ndim)
    index = [slice(None)] * self.ndim
    index[d] = slice(start, end, step)
    return self[tuple(index)]


def _slice_backward_kernel(grad_output, input_sizes, dim, start, end, step):
    out = _zeros_like(grad_output, tuple(input_sizes))
    d = _wrap_dim(dim, len(input_sizes))
    index = [slice(None)] * len(input_sizes)
    index[d] = slice(start, end, step)
    out[tuple(index)] = grad_output
    return out


slice_op = defop("slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> "
                 "Tensor(a)", _slice_kernel, node="SliceBackward0",
                 self=lambda grad, self_sizes, dim, start, end, step: aten.slice_backward(
                     grad, self_sizes, dim, 0 if start is None else start, _INT64_MAX if end is None else end, step))
slice_backward_op = defop("slice_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt start, SymInt end, "
                          "SymInt step) -> Tensor", _slice_backward_kernel, node="SliceBackwardBackward0",
                          grad_output=lambda grad, dim, start, end, step: aten.slice(grad, dim, start, end, step))
_INT64_MAX = 9223372036854775807


def _unsafe_view_kernel(self, size):
    """A view with another shape, which must need no copy (torch's error otherwise)."""
    out = self.view()
    try:
        out.shape = tuple(size)
    except AttributeError:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one dimension "
                           "spans across two contiguous subspaces). Use .reshape(...) instead.") from None
    return out


unsafe_view_op = defop("_unsafe_view(Tensor self, SymInt[] size) -> Tensor", _unsafe_view_kernel,
                       node="UnsafeViewBackward0", self=lambda grad, self_sizes: grad.reshape(tuple(self_sizes)))


# ---- arguments ---------------------------------------------------------------------------------------
def _shape_arg(shape):
    """``*shape`` as torch's parser reads it: ints, or one tuple/list/Size of them."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    try:
        return tuple(map(index, shape))
    except TypeError:  # 2.0, '3', a tensor of several elements: torch's parser takes ints only
        raise _checks.size_error(shape) from None


def _int_arg(fn, name, position, value):
    """An int argument (a Python int, or anything with __index__), with torch's TypeError otherwise."""
    try:
        return index(value)
    except TypeError:
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be int, not "
                        f"{_checks.type_name(value)}") from None


def _infer_shape(shape, numel):
    """``shape`` with its -1 (at most one) replaced by what makes ``numel`` elements (torch's infer_size)."""
    if -1 not in shape:                              # (the usual case: one product, one comparison)
        if math.prod(shape) == numel and (not shape or min(shape) >= 0):
            return shape
    shape = list(shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for i, s in enumerate(shape):
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {shape}")
            known *= s
    if neg:
        if known == 0 and numel == 0:
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {shape} because the unspecified "
                               f"dimension size -1 can be any value and is ambiguous")
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{shape}' is invalid for input of size {numel}")
        shape[neg[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{shape}' is invalid for input of size {numel}")
    return tuple(shape)


def _dims_of(dim, ndim):
    """An int or a list of dims, wrapped, each once (torch's dim_list_to_bitset)."""
    dims = (dim,) if isinstance(dim, int) else dim
    seen = []
    for d in dims:
        w = _wrap_dim(d, ndim)
        if w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.append(w)
    return seen


def _zeros(like, shape):
    """torch's ``at::zeros(shape, like.options())`` inside a formula: of ``like``'s kind (array or
    Tensor) and dtype. A constant: it needs no history."""
    if isinstance(like, Tensor):   # (made below the ops a dispatch mode sees, as torch's autograd makes them)
        return _wrap(_zeros_like(like._data, shape))
    return _zeros_like(like, shape)


# ---- view, reshape ----------------------------------------------------------------------------------------
_VIEW_STRIDE_ERROR = ("view size is not compatible with input tensor's size and stride (at least one dimension "
                      "spans across two contiguous subspaces). Use .reshape(...) instead.")


def _view_kernel(self, size):
    size = _infer_shape(size, self.size)
    out = self.view()
    if self.size and 1 not in self.shape and (self.flags.c_contiguous or 1 not in size):
        # the common case: NumPy's strides are torch's (they stride only a dim of size 1 otherwise)
        try:
            out.shape = size
        except (AttributeError, MemoryError):   # (NumPy: the shape needs a copy, which it made to refuse it)
            raise RuntimeError(_VIEW_STRIDE_ERROR) from None
        return out
    strides = view_strides(self.shape, self.strides, size)   # (torch's computeStride)
    if strides is None:
        raise RuntimeError(_VIEW_STRIDE_ERROR)
    out.shape = size
    if 1 in size and out.size and self.ndim and strides != out.strides:
        out = _strided_view(self, size, strides)   # (NumPy strides a dim of size 1 its own way; torch's
    return out                                  # overlap checks and matmul's fold test read them)


def _reshape_alias_kernel(self, size, stride):
    out = self.view()           # (the strides are those this shape takes without a copy: NumPy finds them)
    out.shape = tuple(size)
    return out


def _storage_offset(a):
    return (data_ptr(a) - data_ptr(root_array(a))) // a.itemsize


def _view_dtype_kernel(self, dtype):
    """The same bytes read as ``dtype`` (torch's rules when the element size changes: the last dim
    is what grows or shrinks, and must be dense)."""
    new = dtype.numpy_dtype
    old = self.dtype
    if new.itemsize != old.itemsize:
        names = f"{_dtype._BY_NUMPY[old]._legacy} as {dtype._legacy}"
        why = f"to view {names} (different element sizes)"
        if self.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 {why}")
        if self.shape[-1] != 1 and self.strides[-1] != old.itemsize:
            raise RuntimeError(f"self.stride(-1) must be 1 {why}, but got {self.strides[-1] // old.itemsize}")
        if new.itemsize > old.itemsize:
            ratio = new.itemsize // old.itemsize
            if self.shape[-1] % ratio:
                raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {why}, but got {self.shape[-1]}")
            offset = _storage_offset(self)
            if offset % ratio:
                raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} {why}, but got {offset}")
            for d in range(self.ndim - 1):
                if self.strides[d] // old.itemsize % ratio:
                    raise RuntimeError(f"self.stride({d}) must be divisible by {ratio} {why}, but got "
                                       f"{self.strides[d] // old.itemsize}")
    return self.view(new)


view_op = defop("view(Tensor(a) self, SymInt[] size) -> Tensor(a)", _view_kernel,
                node="ViewBackward0", self=lambda grad, self_sizes: grad.reshape(self_sizes))
view_dtype_op = defop("view.dtype(Tensor(a) self, ScalarType dtype) -> Tensor(a)", _view_dtype_kernel)
reshape_alias_op = defop("_reshape_alias(Tensor(a) self, SymInt[] size, SymInt[] stride) -> Tensor(a)",
                         _reshape_alias_kernel, node="ReshapeAliasBackward0",
                         self=lambda grad, self_sizes: grad.reshape(self_sizes))


@method()
@accepts_numpy_names("size")
def view(input, *shape):
    if len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
        # (torch: a view that autograd does not track -- it shares the version counter, not the history)
        return view_dtype_op(input, shape[0]).detach()
    shape = _shape_arg(shape)
    try:
        return view_op(input, shape)
    except RuntimeError:
        if input._requires_grad and _state.enabled:
            edge_of(input)  # (torch's autograd takes the input's history, and may refuse it, before the kernel runs)
        raise


def _reshape(input, shape):
    """torch's reshape: a view when the elements allow one (``view`` of a contiguous tensor,
    ``_reshape_alias`` of a strided one), else a contiguous copy viewed (``clone`` + ``_unsafe_view``)."""
    d = input._data
    if d.flags.c_contiguous:
        return view_op(input, shape)
    size = _infer_shape(shape, d.size)
    strides = view_strides(d.shape, d.strides, size)
    if strides is None:
        return unsafe_view_op(clone_op(input, memory_format=contiguous_format), size)
    if seam.dispatch_modes:         # (torch: a tensor a dispatch mode watches is viewed)
        return view_op(input, size)
    return reshape_alias_op(input, size, tuple(s // d.itemsize for s in strides))


@method()
@accepts_numpy_names("shape")
def reshape(input, *shape):
    return _reshape(input, _shape_arg(shape))


@method()
@overridable
def view_as(input, other):
    return view_op(input, other._data.shape)


@method()
@overridable
def reshape_as(input, other):
    return _reshape(input, other._data.shape)


@method()
@overridable
def flatten(input, start_dim=0, end_dim=-1):
    shp = input._data.shape
    nd = len(shp)
    if nd == 0:
        return _reshape(input, (1,))
    s, e = _wrap_dim(start_dim, nd), _wrap_dim(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    return _reshape(input, shp[:s] + (math.prod(shp[s:e + 1]),) + shp[e + 1:])


@method()
@overridable
def unflatten(input, dim, sizes):
    shp = input._data.shape
    d = _wrap_dim(dim, input._data.ndim)
    sizes = list(sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    if -1 in sizes:
        known = math.prod(s for s in sizes if s != -1)
        sizes[sizes.index(-1)] = shp[d] // known if known else 0
    if math.prod(sizes) != shp[d]:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} "
                           f"({shp[d]}) in the input tensor")
    return view_op(input, shp[:d] + tuple(sizes) + shp[d + 1:])


@method()
@overridable
def ravel(input):
    return view_op(_contiguous(input), (-1,))


# ---- permute, transpose, t, movedim ---------------------------------------------------------------------
def _permute_kernel(self, dims):
    nd = self.ndim
    if len(dims) != nd:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the length "
                           f"of the desired ordering of dimensions i.e. input.dim() = {nd} is not equal to "
                           f"len(dims) = {len(dims)}")
    wrapped = tuple(_wrap_dim(d, nd) for d in dims)
    if len(set(wrapped)) != nd:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return self.transpose(wrapped)


def _permute_backwards(grad, dims):
    """torch's permute_backwards: the inverse permutation."""
    n = len(dims)
    inverse = [0] * n
    for i, d in enumerate(dims):
        inverse[d + n if d < 0 else d] = i
    return aten.permute(grad, inverse)


permute_op = defop("permute(Tensor(a) self, int[] dims) -> Tensor(a)", _permute_kernel, node="PermuteBackward0",
                   self=_permute_backwards)


@method()
@accepts_numpy_names("dims")
def permute(input, *dims):
    if not dims:
        raise TypeError('permute() missing 1 required positional arguments: "dims"')
    return permute_op(input, _shape_arg(dims))


def _transpose_kernel(self, dim0, dim1):
    nd = self.ndim
    d0, d1 = _wrap_dim(dim0, nd), _wrap_dim(dim1, nd)
    return xp.swapaxes(self, d0, d1) if nd else self.view()


def _t_kernel_named(name):
    """t's kernel; ``name`` is the op torch's message names (``t_() expects ...`` for the in-place one)."""
    def kernel(self):
        if self.ndim > 2:
            raise RuntimeError(f"{name}() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
        return self.T
    kernel.__name__ = kernel.__qualname__ = f"_{name}_kernel"
    return kernel


transpose_op = defop("transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)", _transpose_kernel,
                     node="TransposeBackward0",
                     self=lambda grad, dim0, dim1: aten.transpose.int(grad, dim0, dim1))
t_op = defop("t(Tensor(a) self) -> Tensor(a)", _t_kernel_named("t"), node="TBackward0", self=lambda grad: aten.t(grad),
             plain=Plain("{self}.T", "type({0}) is _ndarray and {0}.ndim == 2"))   # (a matrix: every mm's backward)


@method()
@overridable
def transpose(input, dim0, dim1):
    return transpose_op(input, dim0, dim1)


@method()
@overridable
def swapaxes(input, axis0, axis1):
    return transpose_op(input, axis0, axis1)


@method()
@overridable
def swapdims(input, dim0, dim1):
    return transpose_op(input, dim0, dim1)


@method()
@overridable
def t(input):
    return t_op(input)


@method()
@overridable
def adjoint(input):
    return transpose_op(input, -2, -1)


def _reversed_dims(self):
    return permute_op(self, tuple(range(self._data.ndim - 1, -1, -1)))


def _property(getter):
    """A Tensor property a function mode sees as torch's (``Tensor.T.__get__``)."""
    prop = _intercepted_property(getter)
    prop.__set_name__(Tensor, getter.__name__)     # (set on Tensor after its class body: named here)
    return prop


@overridable
def T(self):
    """The dims in reverse order (a view)."""
    return _reversed_dims(self)


@overridable
def H(self):
    """The conjugate transpose of a matrix (a view)."""
    nd = self._data.ndim
    if nd not in (0, 2):
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {nd}-D tensor." +
                           (" For batches of matrices, consider using tensor.mH" if nd > 2 else ""))
    return self if nd == 0 else transpose_op(self, -2, -1)      # (torch: a 0-d tensor is its own conjugate)


def _batch_of_matrices(self, name):
    nd = self._data.ndim
    if nd < 2:
        raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. Got {nd}-D tensor.")
    return transpose_op(self, -2, -1)


@overridable
def mT(self):
    """The last two dims swapped (a view)."""
    return _batch_of_matrices(self, "mT")


@overridable
def mH(self):
    """The conjugate transpose of each matrix of the batch (a view)."""
    return _batch_of_matrices(self, "mH")


Tensor.T, Tensor.H, Tensor.mT, Tensor.mH = _property(T), _property(H), _property(mT), _property(mH)
del T, H, mT, mH


def _movedim_order(nd, source, destination):
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) should contain the "
                           f"same number of dims as destination ({dst} dims)")
    src_w = [_wrap_dim(s, nd) for s in src]
    dst_w = [_wrap_dim(d, nd) for d in dst]
    if len(set(src_w)) != len(src_w):
        raise RuntimeError(f"movedim: repeated dim in `source` ({src})")
    if len(set(dst_w)) != len(dst_w):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({dst})")
    order = [i for i in range(nd) if i not in src_w]
    for d, s in sorted(zip(dst_w, src_w)):
        order.insert(d, s)
    return tuple(order)


@method()
@overridable
def movedim(input, source, destination):
    return permute_op(input, _movedim_order(input._data.ndim, source, destination))


@method()
@overridable
def moveaxis(input, source, destination):
    return permute_op(input, _movedim_order(input._data.ndim, source, destination))


# ---- expand, broadcasting -------------------------------------------------------------------------------
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


@method()
@accepts_numpy_names("size")
def expand(input, *sizes):
    return expand_op(input, _shape_arg(sizes))


@method()
@overridable
def expand_as(input, other):
    return expand_op(input, other._data.shape)


@method()
@overridable
def broadcast_to(input, size):
    return expand_op(input, _shape_arg((size,)))


@overridable
def broadcast_tensors(*tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = _checks.broadcast_shape(*[t._data.shape for t in tensors])
    # (torch expands only the tensors of another shape; the others come back as they are)
    return tuple(t if t._data.shape == shape else expand_op(t, shape) for t in tensors)


def broadcast_shapes(*shapes):
    # (as torch's: None is skipped, an int is a 1-d shape, anything else must be a sequence of ints)
    given = tuple((s,) if isinstance(s, int) else s for s in shapes if s is not None)
    for s in given:
        if not isinstance(s, collections.abc.Sequence):
            raise RuntimeError(f"Input shapes should be of type ints, a tuple of ints, or a list of ints, got {s}")
    return Size(_checks.broadcast_shape(*(_shape_arg((s,)) for s in given), given=given))


@method()
@overridable
def sum_to_size(input, *size):
    size = _shape_arg(size)
    shp = input._data.shape
    lead = len(shp) - len(size)
    if lead < 0 or any(s != 1 and s != shp[lead + i] for i, s in enumerate(size)):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shp)}}}.")
    return sum_to(input, size)


# ---- squeeze, unsqueeze ---------------------------------------------------------------------------------
def _squeeze_kernel(self):
    return self.squeeze() if 1 in self.shape else self.view()


def _squeeze_dim_kernel(self, dim):
    d = _wrap_dim(dim, self.ndim)
    return self.squeeze(d) if self.ndim and self.shape[d] == 1 else self.view()


def _squeeze_dims_kernel(self, dim):
    nd = self.ndim
    axes = tuple(d for d in _dims_of(dim, nd) if nd and self.shape[d] == 1)
    return self.squeeze(axes) if axes else self.view()


def _unsqueeze_kernel(self, dim):
    return unsqueezed(self, _wrap_dim(dim, self.ndim + 1))


def _unsqueeze_to(grad, sizes, dim=None):
    """torch's unsqueeze_to: the dims of size 1 in ``sizes`` (among ``dim``, an int or a list; all of
    them when None) put back, in order."""
    nd = len(sizes)
    dims = range(nd) if dim is None else _dims_of(dim, nd) if nd else ()
    for d in sorted(dims):
        if sizes[d] == 1:
            grad = aten.unsqueeze(grad, d)
    return grad


def _declare_squeezes(suffix, names):
    """squeeze and squeeze_ (in place) have the same three overloads and formulas; torch numbers
    their nodes on (SqueezeBackward0-2 out of place, 3-5 in place)."""
    schemas = ("(Tensor(a{0}) self) -> Tensor(a{0})", ".dim(Tensor(a{0}) self, int dim) -> Tensor(a{0})",
               ".dims(Tensor(a{0}) self, int[] dim) -> Tensor(a{0})")
    kernels = (_squeeze_kernel, _squeeze_dim_kernel, _squeeze_dims_kernel)
    formulas = (lambda grad, self_sizes: _unsqueeze_to(grad, self_sizes),
                lambda grad, self_sizes, dim: _unsqueeze_to(grad, self_sizes, dim),
                lambda grad, self_sizes, dim: _unsqueeze_to(grad, self_sizes, dim))
    return tuple(defop(f"squeeze{suffix}" + schema.format("!" if suffix else ""), kernel, node=name, self=formula)
                 for schema, kernel, name, formula in zip(schemas, kernels, names, formulas))


squeeze_op, squeeze_dim_op, squeeze_dims_op = _declare_squeezes("", ("SqueezeBackward0", "SqueezeBackward1",
                                                                     "SqueezeBackward2"))
unsqueeze_op = defop("unsqueeze(Tensor(a) self, int dim) -> Tensor(a)", _unsqueeze_kernel, node="UnsqueezeBackward0",
                     self=lambda grad, dim: aten.squeeze.dim(grad, dim))


def _squeeze(input, dim):
    if dim is None:
        return squeeze_op(input)
    if isinstance(dim, (tuple, list)):
        return squeeze_dims_op(input, tuple(dim))
    return squeeze_dim_op(input, dim)


@method()
@accepts_numpy_names()
def squeeze(input, dim=None):
    return _squeeze(input, dim)


@method()
@accepts_numpy_names()
def unsqueeze(input, dim):
    return unsqueeze_op(input, dim)


# ---- select, slice, narrow --------------------------------------------------------------------------------
def _select_kernel(self, dim, index):
    nd = self.ndim
    if nd == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, nd)
    n = self.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(self.shape)} at "
                         f"dimension {d}")
    # (the Ellipsis: a 0-d result is a view, not a copy)
    return self[(slice(None),) * d + (index + n if index < 0 else index, Ellipsis)]


def _select_backward_kernel(grad_output, input_sizes, dim, index):
    out = _zeros_like(grad_output, tuple(input_sizes))
    _select_kernel(out, dim, index)[...] = grad_output
    return out


select_op = defop("select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)", _select_kernel,
                  node="SelectBackward0",
                  self=lambda grad, self_sizes, dim, index: aten.select_backward(grad, self_sizes, dim, index))
select_backward_op = defop("select_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt index) -> "
                           "Tensor", _select_backward_kernel, node="SelectBackwardBackward0",
                           grad_output=lambda grad, dim, index: aten.select.int(grad, dim, index))


@method()
@accepts_numpy_names()
def select(input, dim, index):
    return select_op(input, dim, _int_arg("select", "index", 2, index))


def _slice(input, dim, start, end, step=1):
    """``input`` sliced along ``dim`` (aten.slice.Tensor; what tensor[a:b:c] records)."""
    return slice_op(input, dim, start, end, step)


@method()
@accepts_numpy_names()
def narrow(input, dim, start, length):
    nd = input._data.ndim
    if nd == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if isinstance(start, Tensor):
        start = start.item()
    try:
        start, length = index(start), index(length)
    except TypeError:
        raise TypeError(f"narrow() received an invalid combination of arguments - got "
                        f"({', '.join(_checks.type_name(a) for a in (dim, start, length))})") from None
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    n = input._data.shape[_wrap_dim(dim, nd)]
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got {start})")
    if start < 0:
        start += n
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return slice_op(input, dim, start, start + length)


# ---- unbind, split, chunk, tensor_split ---------------------------------------------------------------------
def _unbind_kernel(self, dim=0):
    if self.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = _wrap_dim(dim, self.ndim)
    pre = (slice(None),) * d
    return [self[pre + (i, Ellipsis)] for i in range(self.shape[d])]


def _unbind_backward(grads, dim):
    """torch's unbind_backward: the gradients stacked along ``dim``, zeros for an output none reached."""
    like = next((g for g in grads if g is not None), None)
    if like is None:
        return None
    zeros = None
    parts = []
    for g in grads:
        if g is None:
            zeros = aten.zeros_like(like) if zeros is None else zeros
            g = zeros
        parts.append(aten.unsqueeze(g, dim))
    return aten.cat(parts, dim)


def _split_sizes(n, split_size):
    """The pieces aten.split.Tensor cuts a dim of ``n`` into (torch: one empty piece of an empty dim)."""
    if split_size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={split_size}")
    if split_size == 0 and n != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
    if n == 0:
        return [0]
    return [min(split_size, n - i) for i in range(0, n, split_size)]


def _pieces(self, sizes, dim):
    if self.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = _wrap_dim(dim, self.ndim)
    pre = (slice(None),) * d
    out, start = [], 0
    for s in sizes:
        out.append(self[pre + (slice(start, start + s),)])
        start += s
    return out


def _split_kernel(self, split_size, dim=0):
    if self.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    return _pieces(self, _split_sizes(self.shape[_wrap_dim(dim, self.ndim)], split_size), dim)


def _split_with_sizes_kernel(self, split_sizes, dim=0):
    if self.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = _wrap_dim(dim, self.ndim)
    n = self.shape[d]
    sizes = list(split_sizes)
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, but got "
                           f"split_sizes={sizes}")
    if sum(sizes) != n:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                           f"dimension {d}), but got split_sizes={sizes}")
    return _pieces(self, sizes, d)


def _split_with_sizes_backward(grads, split_sizes, dim, sizes):
    """torch's split_with_sizes_backward: the gradients concatenated along ``dim``, zeros for a piece
    none reached."""
    like = next((g for g in grads if g is not None), None)
    if like is None:
        return None
    d = _wrap_dim(dim, len(sizes))
    parts = []
    for g, size in zip(grads, split_sizes):
        if g is None:
            shape = list(sizes)
            shape[d] = size
            g = _zeros(like, tuple(shape))
        parts.append(g)
    return aten.cat(parts, dim)


split_op = defop("split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]", _split_kernel,
                 node="SplitBackward0",
                 self=lambda grads, split_size, dim, self_sizes: _split_with_sizes_backward(
                     grads, _split_sizes(self_sizes[_wrap_dim(dim, len(self_sizes))], split_size), dim, self_sizes))
split_with_sizes_op = defop("split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]",
                            _split_with_sizes_kernel, node="SplitWithSizesBackward0",
                            self=lambda grads, split_sizes, dim, self_sizes: _split_with_sizes_backward(
                                grads, split_sizes, dim, self_sizes))
unbind_op = defop("unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]", _unbind_kernel, node="UnbindBackward0",
                  self=_unbind_backward)


@method()
@accepts_numpy_names()
def unbind(input, dim=0):
    if input._data.ndim and not input._data.shape[_wrap_dim(dim, input._data.ndim)]:
        return ()               # (no outputs: nothing to record)
    return tuple(unbind_op(input, dim))


@method()
@accepts_numpy_names()
def split(input, split_size_or_sections, dim=0):
    if isinstance(split_size_or_sections, (list, tuple)):
        try:
            sizes = tuple(index(s) for s in split_size_or_sections)
        except TypeError:
            bad = next(s for s in split_size_or_sections if not hasattr(s, "__index__"))
            raise TypeError(f"split_with_sizes(): argument 'split_sizes' (position 2) must be tuple of ints, not "
                            f"{_checks.type_name(bad)}") from None
        return tuple(split_with_sizes_op(input, sizes, dim))
    if not hasattr(split_size_or_sections, "__index__"):
        raise TypeError(f"split_with_sizes(): argument 'split_sizes' (position 2) must be tuple of ints, not "
                        f"{_checks.type_name(split_size_or_sections)}")
    return tuple(split_op(input, index(split_size_or_sections), dim))


@method()
@accepts_numpy_names()
def chunk(input, chunks, dim=0):
    chunks = _int_arg("chunk", "chunks", 1, chunks)
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    nd = input._data.ndim
    if nd == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    n = input._data.shape[_wrap_dim(dim, nd)]
    split_size = (n + chunks - 1) // chunks
    if split_size == 0 and n == 0:      # torch: `chunks` empty pieces
        return tuple(split_with_sizes_op(input, (0,) * chunks, dim))
    return tuple(split_op(input, split_size, dim))


@method()
@overridable
def tensor_split(input, indices_or_sections, dim=0):
    """torch's tensor_split: one aten.slice per piece (each its own view and SliceBackward0)."""
    nd = input._data.ndim
    if nd == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    n = input._data.shape[_wrap_dim(dim, nd)]
    if isinstance(indices_or_sections, Tensor):
        t = indices_or_sections
        if t._data.dtype.kind not in "iu":
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                               f"{t.dtype._legacy}")
        if t._data.ndim > 1:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                               f"one-dimensional tensor, but got a tensor with {t._data.ndim} dims")
        indices_or_sections = int(t._data) if t._data.ndim == 0 else [int(i) for i in t._data]
    if isinstance(indices_or_sections, (list, tuple)):
        try:
            bounds = [index(i) for i in indices_or_sections]
        except TypeError:
            raise TypeError(f"tensor_split() received an invalid combination of arguments - got "
                            f"({_checks.type_name(indices_or_sections)})") from None
    else:
        k = _int_arg("tensor_split", "sections", 1, indices_or_sections)
        if k <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {k}")
        bounds, start = [], 0
        for i in range(k - 1):
            start += n // k + (1 if i < n % k else 0)
            bounds.append(start)
    starts = [0] + bounds
    return tuple(slice_op(input, dim, a, b) for a, b in zip(starts, bounds + [n]))


# ---- clone, contiguous, alias --------------------------------------------------------------------------------
def _clone_kernel(self, *, memory_format=None):
    return copy_preserving_layout(self) if memory_format is None or memory_format is preserve_format else self.copy()


clone_op = defop("clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor", _clone_kernel,
                 node="CloneBackward0", self=lambda grad: grad)
alias_op = defop("alias(Tensor(a) self) -> Tensor(a)", lambda self: self.view(), node="AliasBackward0",
                 self=lambda grad: grad)


@method()
@overridable
def clone(input, *, memory_format=preserve_format):
    """A copy with its own memory. Laid out as the input (torch's preserve_format: ``x.t().clone()``
    is not contiguous either) unless ``memory_format=torch.contiguous_format``."""
    if memory_format is None:  # (torch's default: None is preserve_format)
        memory_format = preserve_format
    elif not isinstance(memory_format, _memory_format):
        raise TypeError(f"clone(): argument 'memory_format' must be torch.memory_format, "
                        f"not {_checks.type_name(memory_format)}")
    return clone_op(input, memory_format=memory_format)


def _contiguous(input):
    return input if input._data.flags.c_contiguous else clone_op(input, memory_format=contiguous_format)


@method()
@overridable    # (torch's method is a binding, memory_format keyword-only: a handler is given what the caller gave)
def contiguous(input, *, memory_format=contiguous_format):
    return _contiguous(input)


def _alias_view(input):
    """A view of all of ``input`` (aten.alias: what ``x[...]`` records)."""
    return alias_op(input)


def _at_least(fn, tensors, ndim):
    """torch's atleast_{1,2,3}d: one tensor, or a tuple for several (or one list of them)."""
    if seam.on:
        return seam.torch_function(fn, tensors, {})
    many = len(tensors) != 1 or isinstance(tensors[0], (list, tuple))
    items = tensors[0] if len(tensors) == 1 and many else tensors
    out = tuple(_raised_to(t, ndim) for t in items)
    return out if many else out[0]


def _raised_to(t, ndim):
    nd = t._data.ndim
    if nd >= ndim:
        return t
    if nd == 0:
        return _reshape(t, (1,) * ndim)
    if nd == 1 and ndim >= 2:
        t = unsqueeze_op(t, 0)
    return unsqueeze_op(t, -1) if ndim == 3 else t


def atleast_1d(*tensors):
    return _at_least(atleast_1d, tensors, 1)


def atleast_2d(*tensors):
    return _at_least(atleast_2d, tensors, 2)


def atleast_3d(*tensors):
    return _at_least(atleast_3d, tensors, 3)


# ---- in-place view ops: the tensor itself takes the new shape ---------------------------------
squeeze__op, squeeze__dim_op, squeeze__dims_op = _declare_squeezes("_", ("SqueezeBackward3", "SqueezeBackward4",
                                                                        "SqueezeBackward5"))
unsqueeze__op = defop("unsqueeze_(Tensor(a!) self, int dim) -> Tensor(a!)", _unsqueeze_kernel,
                      node="UnsqueezeBackward1", self=lambda grad, dim: aten.squeeze.dim(grad, dim))
t__op = defop("t_(Tensor(a!) self) -> Tensor(a!)", _t_kernel_named("t_"), node="TBackward1", self=lambda grad: aten.t(grad))
transpose__op = defop("transpose_(Tensor(a!) self, int dim0, int dim1) -> Tensor(a!)", _transpose_kernel,
                      node="TransposeBackward1",
                      self=lambda grad, dim0, dim1: aten.transpose.int(grad, dim0, dim1))


def _inplace_view(self, name, op, *args):
    """x.unsqueeze_(0) and friends: ``x`` becomes the view the op makes of it (same data, new
    shape), which counts as a write (its version moves on); the op's node (UnsqueezeBackward1 ...:
    torch's in-place node, the out-of-place derivative) becomes its history."""
    check_inplace(self, self._requires_grad and _state.enabled)
    res = op(self, *args)
    self._data = res._data
    self._layout_of = None     # (see Tensor._layout_of)
    bump_version(self, name)
    node = res._grad_fn
    if node is not None:
        if self._base is None:
            set_history(self, node, move_retained_grad=False)  # (.grad keeps the retained shape, as torch)
        else:  # a view stays a view of its base, its history continued by the new node (as torch)
            self._grad_fn, self._output_nr, self._attr_version = node, 0, self._vc.version
    return self


@overridable
def squeeze_(self, dim=None):
    if dim is None:
        return _inplace_view(self, "squeeze_", squeeze__op)
    if isinstance(dim, (tuple, list)):
        return _inplace_view(self, "squeeze_", squeeze__dims_op, tuple(dim))
    return _inplace_view(self, "squeeze_", squeeze__dim_op, dim)


@overridable
def unsqueeze_(self, dim):
    return _inplace_view(self, "unsqueeze_", unsqueeze__op, dim)


@overridable
def t_(self):
    return _inplace_view(self, "t_", t__op)


@overridable
def transpose_(self, dim0, dim1):
    return _inplace_view(self, "transpose_", transpose__op, dim0, dim1)


@overridable
def swapaxes_(self, axis0, axis1):
    return _inplace_view(self, "swapaxes_", transpose__op, axis0, axis1)


@overridable
def swapdims_(self, dim0, dim1):
    return _inplace_view(self, "swapdims_", transpose__op, dim0, dim1)


Tensor.squeeze_, Tensor.unsqueeze_, Tensor.t_, Tensor.transpose_ = squeeze_, unsqueeze_, t_, transpose_
Tensor.swapaxes_, Tensor.swapdims_ = swapaxes_, swapdims_


# ---- resize_ ----------------------------------------------------------------------------------------------------
def _resized(self, size):
    """Keep the first elements in flat order; new elements are zeros (torch leaves them uninitialised)."""
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {list(size)}")
    if tuple(size) == self.shape:   # (nothing to do: its strides are kept, as torch's)
        return self
    n = math.prod(size)
    flat = self.reshape(-1)
    new = _zeros_like(self, n)
    k = min(n, flat.size)
    new[:k] = flat[:k]
    return new.reshape(tuple(size))


resize__op = defop("resize_(Tensor(a!) self, SymInt[] size, *, MemoryFormat? memory_format=None) -> Tensor(a!)",
                   lambda self, size, *, memory_format=None: _resized(self, size))
resize_as__op = defop("resize_as_(Tensor(a!) self, Tensor the_template, *, MemoryFormat? memory_format=None) -> "
                      "Tensor(a!)",
                      lambda self, the_template, *, memory_format=None: _resized(self, the_template.shape))


def _resize(self, op, *args, memory_format=None):
    """The tensor takes the op's new array (torch may keep the storage; a view of the old one does
    not see the new elements either way). Its version moves on when its shape changes, as torch's."""
    if self._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    shape = self._data.shape
    data = op(self, *args, memory_format=memory_format)._data
    if data.shape != shape:
        check_inference_write(self._counter)   # (refused before it changes: ops/_op._refuse_inference_write)
    self._data = data
    self._layout_of = None
    if data.shape != shape:
        bump_version(self, "resize_")
    return self


def resized_for_out(out, size):
    """``out`` resized to ``size`` by ``aten.resize_`` (what a dispatch mode sees), as torch's
    ``empty``, ``randn`` and a ``rand`` given a generator resize the ``out=`` they are given."""
    return _resize(out, resize__op, list(size))


@overridable
def resize_(self, *sizes, memory_format=None):
    return _resize(self, resize__op, _shape_arg(sizes), memory_format=memory_format)


@overridable(defaults_by_keyword=True)
def resize_as_(self, the_template, memory_format=None):
    return _resize(self, resize_as__op, the_template, memory_format=memory_format)


Tensor.resize_, Tensor.resize_as_ = resize_, resize_as_


@overridable
def set_(self, source=None):
    """``self`` takes ``source``'s memory, shape and strides (an empty tensor without one), as
    torch's ``set_``: a later write through either is seen by both, but ``self`` keeps its own
    version counter (torch's too). ``torch.nn.utils.parametrize`` moves a parameter's new value
    in so. The usual in-place checks apply (a leaf that requires grad only under ``no_grad``);
    a ``source`` that requires grad while grad mode is on is refused: torch records a node that
    cannot differentiate (``NotImplemented``), glasstorch does not record it at all."""
    from ._op import _check_inplace
    if source is None:
        source = self.new_empty((0,))
    if not isinstance(source, Tensor):
        raise TypeError(f"set_(): argument 'source' must be Tensor, not {type(source).__name__}")
    if source.dtype != self.dtype:
        raise RuntimeError(f"Could not set tensor of type {_dtype.cpp_name(source.dtype)} to a tensor of type "
                           f"{_dtype.cpp_name(self.dtype)}")
    if _check_inplace(self, (source,), refuse_aliases=None):
        raise NotImplementedError("set_(): glasstorch does not record set_ with a source that requires grad "
                                  "(torch records a node that cannot be differentiated); call it under no_grad()")
    self._data = source._data
    self._layout_of = None
    bump_version(self, "set_")
    return self


Tensor.set_ = set_


# ---- as_strided: a view of any geometry over the input's storage -----------------------------------------------
def _as_strided_kernel(self, size, stride, storage_offset=None):
    """The view of ``size`` and ``stride`` (in elements) from element ``storage_offset`` of the
    storage ``self`` views (its own offset when None), with torch's checks of the geometry."""
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(n < 0 for n in size):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: {list(stride)}")
    offset = _storage_offset(self) if storage_offset is None else storage_offset
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    item, root = self.itemsize, root_array(self)
    needed = 0 if 0 in size else item * (offset + 1 + sum((n - 1) * s for n, s in zip(size, stride)))
    if needed > root.nbytes:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
                           f"itemsize {item} requiring a storage size of {needed} are out of bounds for storage of "
                           f"size {root.nbytes}")
    # the storage's elements from the view's first on, reached from self's first element (or from the
    # root's, for a view that starts before self)
    shift = offset - _storage_offset(self)
    if shift >= 0 and self.size:
        start = _strided_view(self, (shift + 1,), (item,))[shift:]
    else:
        start = _strided_view(root, (offset + 1,), (item,))[offset:]
    return _strided_view(start, size, tuple(s * item for s in stride), writeable=_writeable(self))


def _writeable(a):
    flags = getattr(a, "flags", None)
    return True if flags is None else bool(flags.writeable)


def _as_strided_formula(grad, self_geometry, size, stride, storage_offset):
    return as_strided_backward(grad, self_geometry, size, stride, storage_offset)


as_strided_op = defop("as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) "
                      "-> Tensor(a)", _as_strided_kernel, node="AsStridedBackward0", self=_as_strided_formula)
as_strided__op = defop("as_strided_(Tensor(a!) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) "
                       "-> Tensor(a!)", _as_strided_kernel, node="AsStridedBackward1", self=_as_strided_formula)


@overridable
def as_strided(input, size, stride, storage_offset=None):
    """A view of ``input``'s storage with the given ``size`` and ``stride`` (in elements), starting at
    element ``storage_offset`` of the storage (``input``'s own offset when None). Its elements may
    overlap (a stride of 0, or smaller than a dim's extent): the gradient of an element read several
    times is their sum, and an input whose own elements overlap shares it among them (torch's
    ``as_strided_backward``)."""
    return as_strided_op(input, list(size), list(stride), storage_offset)


@overridable
def as_strided_(self, size, stride, storage_offset=None):
    """``self`` becomes the view ``as_strided`` would make of it (its version moves on)."""
    return _inplace_view(self, "as_strided_", as_strided__op, list(size), list(stride), storage_offset)


Tensor.as_strided, Tensor.as_strided_ = as_strided, as_strided_
