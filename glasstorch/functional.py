"""torch.functional: the tensor functions torch writes in Python (``torch/functional.py``).

Everything here is also on the top level (``torch.einsum`` is ``torch.functional.einsum``); some
programs import them from this module. glasstorch re-exports the ones it has. The rest of torch's
list (``__all__`` below names all of torch 2.13's) are not in glasstorch yet: asking for one raises
an AttributeError that says so.
"""
from .ops.linalg import einsum, tensordot, chain_matmul
from .ops.joining import meshgrid, block_diag, cartesian_prod
from .ops.distance import cdist
from .ops.reduction import unique
from .ops.spectral import stft, istft
from .ops.shape_extra import unique_consecutive, unravel_index
from . import norm   # (the top level's: it takes out=, as torch.functional.norm does)
from .ops.shape import atleast_1d, atleast_2d, atleast_3d, broadcast_shapes, broadcast_tensors, split

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors", "cartesian_prod",
           "block_diag", "cdist", "chain_matmul", "einsum", "istft", "lu", "norm", "meshgrid", "pca_lowrank", "split",
           "stft", "svd_lowrank", "tensordot", "unique", "unique_consecutive", "unravel_index"]

# torch.functional's functions that glasstorch does not have yet (each needs a new op in glasstorch/ops).
_MISSING = ("lu", "pca_lowrank", "svd_lowrank")


def __getattr__(name):
    if name in _MISSING:
        raise AttributeError(f"module 'glasstorch.functional' has no attribute '{name}': torch.functional.{name} "
                             "is not in glasstorch yet")
    raise AttributeError(f"module 'glasstorch.functional' has no attribute '{name}'")


def __dir__():
    return sorted(set(globals()) - set(_MISSING))
