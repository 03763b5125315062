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
