"""Every differentiable op, forward and derivative side by side, grouped by family:

pointwise.py   elementwise math, comparisons, clamp/where/lerp, in-place arithmetic
reduction.py   sum/mean/max/var/norm/logsumexp, softmax, cumsum/cumprod, sort/topk
shape.py       views: view/reshape/permute/transpose/expand/squeeze/slice/select/split, clone
joining.py     cat/stack, repeat/tile, flip/roll, tril/triu, diag/diagonal
indexing.py    tensor[...] and index assignment, gather/scatter, index_select, masked_select
linalg.py      mm/bmm/mv/dot, matmul's decomposition, addmm, einsum, torch.linalg
creation.py    tensor/zeros/arange/rand..., dtype and device conversion, Generator
"""
from . import pointwise, reduction, shape, joining, indexing, linalg, creation  # noqa: F401  (registers methods)


def _accept_numpy_names(fn):
    """torch's argument parser also takes NumPy's names, ``axis`` for ``dim`` and ``keepdims`` for
    ``keepdim`` (d2l writes ``X.sum(axis=0, keepdims=True)``); the remap costs nothing without keywords."""
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
        try:
            return fn(*args, **kwargs)
        except AttributeError:  # torch.sum([1, 2]): torch's TypeError, not "'list' has no attribute '_data'"
            if args and not isinstance(args[0], Tensor) and fn.__name__ not in ("cat", "concat", "concatenate", "stack"):
                raise _checks.not_a_tensor(fn.__name__, args[0]) from None
            raise
    return accepting


def _install_numpy_names():
    from .._tensor import Tensor
    for module, names in [
        (reduction, ("sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "var", "std",
                     "logsumexp", "softmax", "log_softmax", "cumsum", "cumprod", "any", "all", "norm", "median",
                     "nansum", "nanmean", "count_nonzero", "sort", "argsort", "topk", "kthvalue", "mode")),
            (joining, ("cat", "concat", "concatenate", "stack", "flip", "roll")),
            (shape, ("squeeze", "unsqueeze", "split", "chunk", "unbind", "narrow", "select"))]:
        for name in names:
            fn = getattr(module, name, None)
            if fn is None:
                continue
            wrapped = _accept_numpy_names(fn)
            setattr(module, name, wrapped)
            if getattr(Tensor, name, None) is fn:
                setattr(Tensor, name, wrapped)


_install_numpy_names()
