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
weight_norm.py norm_except_dim, _weight_norm (nn.utils' weight normalisation)
"""
from .._ops import aten  # noqa: F401  (torch.ops.aten: every primitive op, aten.mul.Tensor ...)
from . import pointwise, reduction, shape, joining, indexing, linalg, creation, complex, special, elementwise, scan, windows, distance, transformations, weight_norm  # noqa: F401  (registers methods)

__all__ = ["aten"]   # (torch.ops: the op namespaces; the families' functions are on glasstorch's top level)

