"""Every differentiable op, forward and derivative side by side, grouped by family:

pointwise.py   elementwise math, comparisons, clamp/where/lerp, in-place arithmetic
reduction.py   sum/mean/max/var/norm/logsumexp, softmax, cumsum/cumprod, sort/topk
shape.py       views: view/reshape/permute/transpose/expand/squeeze/slice/select/split, clone
joining.py     cat/stack, repeat/tile, flip/roll, tril/triu, diag/diagonal
indexing.py    tensor[...] and index assignment, gather/scatter, index_select, masked_select
linalg.py      mm/bmm/mv/dot, matmul's decomposition, addmm, einsum, torch.linalg
creation.py    tensor/zeros/arange/rand..., dtype and device conversion, Generator

_derivatives.py  the helpers derivative formulas share, under torch's names (sum_backward, var_backward...)
complex.py     view_as_real/view_as_complex, real/imag, conj
special.py     erfc, i0, sinc, xlogy, logit, polygamma, mvlgamma and torch.special's own ops
elementwise.py copysign, logaddexp/logaddexp2, hypot, bit shifts
distance.py    cdist, pdist, dist, renorm
transformations.py  rot90
nn_sampling.py grid_sample, affine_grid
nn_ctc.py      ctc_loss
scan.py        logcumsumexp
windows.py     Tensor.unfold, im2col/col2im (F.unfold/F.fold)
fft.py         the DFT's primitive ops (torch.fft's kernels)
"""
from .._ops import aten  # noqa: F401  (torch.ops.aten: every primitive op, aten.mul.Tensor ...)
from . import pointwise, reduction, shape, joining, indexing, linalg, creation, complex, special, elementwise, scan, windows, distance, transformations  # noqa: F401  (registers methods)

__all__ = ["aten"]   # (torch.ops: the op namespaces; the families' functions are on glasstorch's top level)


def _accept_numpy_names(fn, sequence_name=None):
    """torch's argument parser also takes NumPy's names, ``axis`` for ``dim`` and ``keepdims`` for
    ``keepdim`` (d2l writes ``X.sum(axis=0, keepdims=True)``), and the list of an op that also takes
    it spread out (``x.flip(1)``, ``x.permute(1, 0)``) by its schema name, ``sequence_name``
    (Step-by-Step writes ``torch.flip(x, dims=[1])``); the remap costs nothing without keywords."""
    import functools
    from .. import _checks
    from .._tensor import Tensor

    @functools.wraps(fn)
    def accepting(*args, **kwargs):
        if kwargs:
            if "axis" in kwargs:
                kwargs["dim"] = kwargs.pop("axis")
            if "keepdims" in kwargs:
                kwargs["keepdim"] = kwargs.pop("keepdims")
            if sequence_name is not None and sequence_name in kwargs:
                if len(args) > 1:   # given twice: Python's own message, as torch's parser says it
                    raise TypeError(f"{fn.__name__}() got multiple values for argument '{sequence_name}'")
                args = args + (kwargs.pop(sequence_name),)
        try:
            return fn(*args, **kwargs)
        except AttributeError:  # torch.sum([1, 2]): torch's TypeError, not "'list' has no attribute '_data'"
            if args and not isinstance(args[0], Tensor) and fn.__name__ not in ("cat", "concat", "concatenate", "stack"):
                raise _checks.not_a_tensor(fn.__name__, args[0]) from None
            raise
    return accepting


# the ops taking a list either whole or spread out, and the list's name in torch's schema
_SEQUENCE_NAMES = {"flip": "dims", "tile": "dims", "repeat": "repeats", "permute": "dims", "view": "size",
                   "reshape": "shape", "expand": "size"}


def _install_numpy_names():
    from .._tensor import Tensor
    # (reduction.py's functions take axis=/keepdims= themselves)
    for module, names in [
            (joining, ("cat", "concat", "concatenate", "stack", "flip", "roll", "tile", "repeat")),
            (shape, ("squeeze", "unsqueeze", "split", "chunk", "unbind", "narrow", "select", "permute", "view",
                     "reshape", "expand"))]:
        for name in names:
            fn = getattr(module, name, None)
            if fn is None:
                continue
            wrapped = _accept_numpy_names(fn, _SEQUENCE_NAMES.get(name))
            setattr(module, name, wrapped)
            if getattr(Tensor, name, None) is fn:
                setattr(Tensor, name, wrapped)


_install_numpy_names()
