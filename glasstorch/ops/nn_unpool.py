"""max_unpool1d/2d/3d: the partial inverse of a max pool -- each pooled value put back where its index
(from ``return_indices=True``) says it came from, zeros elsewhere.

The op is a scatter into a zero image of the output size (flat per (batch, channel) plane), so its
derivative is the gather of the gradient at the same indices (torch's ``max_pool_double_backward``), and
that gather's derivative is the scatter again. 1-d unpooling is 2-d unpooling of a height-1 image, as in
torch (the graph: unsqueeze, MaxUnpool2DBackward0, squeeze).
"""
from .._array import xp, has_values, zeros_like as _zeros_like, arange_like as _arange_like
from .._ops import defop, node_classes_of
from .._seam import overridable
from .nn_conv import _ntuple

__getattr__ = node_classes_of(__name__)    # (the node classes declared here, by name: TanhBackward0)


def _unpool_kernel(self, indices, output_size, nd):
    lead = self.shape[:-nd]
    out_plane = 1
    for s in output_size:
        out_plane *= s
    flat_in = self.reshape(lead + (-1,))
    flat_idx = indices.reshape(lead + (-1,))
    if flat_idx.size and has_values(flat_idx) and (int(flat_idx.min()) < 0 or int(flat_idx.max()) >= out_plane):
        bad = int(flat_idx.max()) if int(flat_idx.max()) >= out_plane else int(flat_idx.min())
        raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                           f"{'x'.join(str(s) for s in output_size)}")
    out = _zeros_like(self, lead + (out_plane,))
    xp.put_along_axis(out, flat_idx, flat_in, axis=-1)
    return out.reshape(lead + tuple(output_size))


def _max_pool_double_backward_kernel(grad, indices, dim):
    lead = grad.shape[:-dim]
    flat = grad.reshape(lead + (-1,))
    return xp.take_along_axis(flat, indices.reshape(lead + (-1,)), axis=-1).reshape(indices.shape)


def _max_pool_double_backward_transpose_kernel(grad, indices, self_sizes, dim):
    """The adjoint of the gather: each value added (not put: indices may repeat) at its index in zeros."""
    planes, plane = 1, 1
    for s in self_sizes[:-dim]:
        planes *= s
    for s in self_sizes[-dim:]:
        plane *= s
    out = _zeros_like(grad, (planes, plane))
    if out.size and grad.size:
        rows = _arange_like(out, planes)[:, None]
        xp.add.at(out, (rows, indices.reshape(planes, -1)), grad.reshape(planes, -1))
    return out.reshape(tuple(self_sizes))


def _check(self, indices, output_size, nd, name):
    """torch's checks of the indices."""
    if tuple(indices.shape) != tuple(self.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({list(self.shape)}) "
                           f"but got indices tensor with shape: {list(indices.shape)}")
    if indices.dtype.kind != "i":
        raise RuntimeError(f"elements in indices should be type int64 but got: {indices.dtype}")


def _unpool2d_kernel(self, indices, output_size):
    _check(self, indices, output_size, 2, "max_unpool2d")
    return _unpool_kernel(self, indices, tuple(output_size), 2)


def _unpool3d_kernel(self, indices, output_size, stride, padding):
    _check(self, indices, output_size, 3, "max_unpool3d")
    return _unpool_kernel(self, indices, tuple(output_size), 3)


# torch's max_pool_double_backward is a C++ helper (a gather, recorded as GatherBackward0 in double
# backward); here it is an op, whose derivative is the gather's adjoint: a scatter-add (a glasstorch op:
# torch records ScatterAddBackward0 there)
max_pool_double_backward_op = defop(
    "max_pool_double_backward(Tensor grad, Tensor indices, int dim) -> Tensor", _max_pool_double_backward_kernel,
    node="MaxPoolDoubleBackwardBackward0",
    grad=lambda grad, indices, dim, grad_sizes: max_pool_double_backward_transpose_op(grad, indices, list(grad_sizes),
                                                                                      dim))
max_pool_double_backward_transpose_op = defop(
    "max_pool_double_backward_transpose(Tensor grad, Tensor indices, SymInt[] self_sizes, int dim) -> Tensor",
    _max_pool_double_backward_transpose_kernel, node="MaxPoolDoubleBackwardTransposeBackward0",
    grad=lambda grad, indices, dim: max_pool_double_backward_op(grad, indices, dim))
max_unpool2d_op = defop("max_unpool2d(Tensor self, Tensor indices, SymInt[2] output_size) -> Tensor", _unpool2d_kernel,
                        node="MaxUnpool2DBackward0",
                        self=lambda grad, indices: max_pool_double_backward_op(grad, indices, 2))
max_unpool3d_op = defop("max_unpool3d(Tensor self, Tensor indices, SymInt[3] output_size, int[3] stride, "
                        "int[3] padding) -> Tensor", _unpool3d_kernel, node="MaxUnpool3DBackward0",
                        self=lambda grad, indices: max_pool_double_backward_op(grad, indices, 3))


def _output_size(input, kernel_size, stride, padding, output_size, nd):
    """torch's ``_unpool_output_size``: (in - 1) * stride - 2 * padding + kernel, or ``output_size``
    (which may also carry the batch and channel dims), checked against the range it can take."""
    k = _ntuple(kernel_size, nd)
    s = _ntuple(stride if stride is not None else kernel_size, nd)
    p = _ntuple(padding, nd)
    spatial = input.shape[-nd:]
    default = [(spatial[d] - 1) * s[d] + k[d] - 2 * p[d] for d in range(nd)]
    if output_size is None:
        return default
    output_size = list(output_size)
    if len(output_size) == nd + 2:
        output_size = output_size[2:]
    if len(output_size) != nd:
        raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it has a "
                         f"length of '{len(output_size)}'")
    for d in range(nd):
        lo, hi = default[d] - s[d], default[d] + s[d]
        if not lo < output_size[d] < hi:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {lo} and {hi})')
    return output_size


def _check_input(input, nd, name):
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D input, but got input of size: "
                           f"{list(input.shape)}")


@overridable(defaults_by_keyword=True)
def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The 1-d unpool: a 2-d unpool of a height-1 image, as torch records it."""
    _check_input(input, 1, "max_unpool1d")
    size = _output_size(input, kernel_size, stride, padding, output_size, 1)
    return max_unpool2d_op(input.unsqueeze(-2), indices.unsqueeze(-2), [1] + size).squeeze(-2)


@overridable(defaults_by_keyword=True)
def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Put each pooled value back at its index in a zero image of the unpooled size."""
    _check_input(input, 2, "max_unpool2d")
    return max_unpool2d_op(input, indices, _output_size(input, kernel_size, stride, padding, output_size, 2))


@overridable(defaults_by_keyword=True)
def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    _check_input(input, 3, "max_unpool3d")
    return max_unpool3d_op(input, indices, _output_size(input, kernel_size, stride, padding, output_size, 3),
                           list(_ntuple(stride if stride is not None else kernel_size, 3)), list(_ntuple(padding, 3)))
