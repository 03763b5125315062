"""Splitting, arranging and indexing helpers torch writes from other ops (its C++ composites and
``torch/functional.py``), written here from the same ops so the graph is torch's:

* ``hsplit`` / ``vsplit`` / ``dsplit``: ``tensor_split`` along dim 1 (0 for a 1-d input), 0, 2, with
  their divisibility checks (``SliceBackward0`` per piece);
* ``split_with_sizes``: ``split`` with a list of sizes that must add up (``SplitWithSizesBackward0``);
* ``msort``: the values of ``sort`` along dim 0; ``diagflat``: ``diag_embed`` of the flattened input;
* ``vander``: ones, then the cumulative product of x copied in (``flip`` unless ``increasing``);
* ``combinations``: every r-subset of a vector (``meshgrid``, a triangular mask, ``masked_select``,
  ``stack``);
* ``unique_consecutive``: runs of equal values collapsed (with where each went, and run lengths);
* ``unravel_index``: flat indices as coordinates in ``shape`` (``torch.functional``'s own code).
"""
import itertools
import operator

from .. import _dtype
from .._tensor import Tensor, Size
from .._array import xp, row_major, full_like as _full_like
from .._seam import seam, overridable
from .._tensor import _wrap
from ._op import method
from .reduction import check_unique_dim

__all__ = ["hsplit", "vsplit", "dsplit", "split_with_sizes", "msort", "diagflat", "vander", "combinations",
           "unique_consecutive", "unravel_index"]


def _directional_split(name, min_dims, dim_of):
    @overridable
    def split(input, indices_or_sections):
        if input.ndim < min_dims:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} dimension, but got a tensor "
                               f"with {input.ndim} dimensions!")
        dim = dim_of(input.ndim)
        if isinstance(indices_or_sections, int):
            size = input.shape[dim]
            if indices_or_sections == 0 or size % indices_or_sections:
                raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                                   f"dimension {size} is not divisible by the split_size {indices_or_sections}!")
        return input.tensor_split(indices_or_sections, dim)
    split.__name__ = split.__qualname__ = name
    split.__doc__ = f"torch.{name}: ``tensor_split`` along dim {dim_of(3)} into equal pieces or at indices."
    setattr(Tensor, name, split)
    return split


hsplit = _directional_split("hsplit", 1, lambda ndim: 0 if ndim == 1 else 1)
vsplit = _directional_split("vsplit", 2, lambda ndim: 0)
dsplit = _directional_split("dsplit", 3, lambda ndim: 2)


@method()
@overridable
def split_with_sizes(input, split_sizes, dim=0):
    """torch.split_with_sizes: pieces of the given sizes along ``dim`` (they must add up to its size)."""
    size = input.shape[dim]
    if sum(split_sizes) != size:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size at "
                           f"dimension {dim}), but got split_sizes={list(split_sizes)}")
    return input.split(list(split_sizes), dim)


@method()
@overridable
def msort(input):
    """torch.msort: sorted along dim 0 (``sort``'s values)."""
    return input.sort(0)[0]


@method()
@overridable
def diagflat(input, offset=0):
    """torch.diagflat: a matrix with the flattened input on its ``offset``-th diagonal."""
    return input.contiguous().view(-1).diag_embed(offset)


@overridable    # (torch.vander and torch.combinations are bindings)
def vander(x, N=None, increasing=False):
    """torch.vander: the Vandermonde matrix, columns x^(N-1) ... x^0 (x^0 ... x^(N-1) if ``increasing``);
    integer inputs give int64, as torch's cumprod does."""
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    from .creation import empty
    result = empty(x.shape[0], n, dtype=_dtype.promote_types(x.dtype, _dtype.int64), device=x.device)
    if n > 0:
        result.fill_(1)
        if n > 1:
            result[:, 1:].copy_(x.unsqueeze(1))
            result[:, 1:].copy_(result[:, 1:].cumprod(1))
    return result if increasing else result.flip(1)


@overridable
def combinations(input, r=2, with_replacement=False):
    """torch.combinations: every length-``r`` combination of the elements of a vector, in order, as rows
    (with ``with_replacement``, elements may repeat)."""
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    from .creation import empty
    from .joining import meshgrid, stack
    if r == 0:
        return empty(0, dtype=input.dtype, device=input.device)
    n = input.shape[0]
    grids = meshgrid(*([input] * r), indexing="ij")
    index = xp.indices((n,) * r) if n else xp.zeros((r,) + (0,) * r, dtype=xp.int64)
    mask = xp.ones((n,) * r, dtype=bool)
    for lower, upper in zip(index[:-1], index[1:]):   # torch's _triu_mask: each index after the one before
        mask &= (lower <= upper) if with_replacement else (lower < upper)
    mask = _wrap(mask).to(input.device)   # (made on the host: index masks go where the input is)
    return stack([g.masked_select(mask) for g in grids], 1)


def _runs(flat_keys, n):
    """Where each run of equal consecutive keys starts (a boolean per position), on the keys' device."""
    starts = _full_like(flat_keys, True, (n,), bool)
    if n > 1:
        starts[1:] = flat_keys
    return starts


@method()
@overridable(defaults_by_keyword=True)
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """torch.unique_consecutive: consecutive repeats collapsed to one (the whole tensor flattened, or
    slices along ``dim``); with ``return_inverse`` where each element went, ``return_counts`` how many
    each run had. Not differentiable (as in torch)."""
    a = input._data
    if dim is None:
        flat = a.reshape(-1)
        starts = _runs(flat[1:] != flat[:-1], flat.size)
        values = flat[starts]
        inverse_shape = a.shape
    else:
        d = dim % max(a.ndim, 1)
        check_unique_dim(a.shape, d)
        moved = xp.moveaxis(a, d, 0)
        rows = moved.reshape(moved.shape[0], int(xp.prod(moved.shape[1:], dtype=xp.int64)))
        starts = _runs((rows[1:] != rows[:-1]).any(axis=1), rows.shape[0])
        # (torch's unique_dim_consecutive computes on the input with ``dim`` moved first, made contiguous,
        # and moves it back: ``dim`` is the outermost in memory, the other dims row-major after it)
        values = xp.moveaxis(row_major(moved[starts]), 0, d) if a.size else row_major(a.copy())
        inverse_shape = (a.shape[d],)
    inverse = (xp.cumsum(starts) - 1).reshape(inverse_shape).astype(xp.int64)
    ends = xp.concatenate([starts[1:], _full_like(starts, True, (1,))])   # (where each run ends: the last one at n)
    counts = (xp.flatnonzero(ends) - xp.flatnonzero(starts) + 1).astype(xp.int64)
    out = [_wrap(row_major(values) if dim is None else values)]   # (an empty result too, as torch allocates it)
    if return_inverse:
        out.append(_wrap(row_major(inverse)))
    if return_counts:
        out.append(_wrap(row_major(counts)))
    return out[0] if len(out) == 1 else tuple(out)


def _check_type(ok, message):
    if not ok:
        raise TypeError(message)


def unravel_index(indices, shape):
    """torch.unravel_index: flat indices as a tuple of coordinate tensors in ``shape`` (C order;
    negative indices count from the end, as torch's floor division and remainder make them)."""
    if seam.on:
        return seam.torch_function(unravel_index, (indices,), {"shape": shape})
    from .creation import tensor
    _check_type(not indices.is_complex() and not indices.is_floating_point() and indices.dtype is not _dtype.bool,
                f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    _check_type(isinstance(shape, (int, list, tuple)),
                f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    if isinstance(shape, int):
        shape = Size([shape])
    else:
        for d in shape:
            _check_type(isinstance(d, int), f"expected 'shape' sequence to only contain ints, but got {type(d)}")
        shape = Size(shape)
    if not all(d >= 0 for d in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {tuple(shape)}")
    coefs = list(reversed(list(itertools.accumulate(reversed(tuple(shape[1:]) + (1,)), func=operator.mul))))
    coords = indices.unsqueeze(-1).floor_divide(tensor(coefs, dtype=_dtype.int64, device=indices.device)) % \
        tensor(list(shape), dtype=_dtype.int64, device=indices.device)
    return coords.unbind(-1)
