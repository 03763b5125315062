"""torch.functional: the tensor functions torch keeps in ``torch/functional.py`` (``einsum``, ``split``,
``meshgrid``, ...). Each is the top-level function of the same name; this module exists because
programs import it by that name (Step-by-Step's chapters 2.1 and 3 say ``import torch.functional as F``).

torch's list also has ``atleast_3d``, ``block_diag``, ``cartesian_prod``, ``cdist``, ``chain_matmul``,
``lu``, ``stft``/``istft``, ``pca_lowrank``, ``svd_lowrank``, ``unique_consecutive`` and ``unravel_index``;
those glasstorch does not have yet are simply absent here, as they are from the top level.
"""
import glasstorch as _torch

_TORCH_FUNCTIONAL = ["atleast_1d", "atleast_2d", "atleast_3d", "align_tensors", "broadcast_shapes",
                     "broadcast_tensors", "cartesian_prod", "block_diag", "cdist", "chain_matmul", "einsum",
                     "istft", "lu", "norm", "meshgrid", "pca_lowrank", "split", "stft", "svd_lowrank", "tensordot",
                     "unique", "unique_consecutive", "unravel_index"]

__all__ = [name for name in _TORCH_FUNCTIONAL if hasattr(_torch, name)]
globals().update({name: getattr(_torch, name) for name in __all__})
