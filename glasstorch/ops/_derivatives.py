"""Helpers that derivative formulas share (torch's ``FunctionsManual.cpp``).

Like the formulas, they are written with operators, ``.shape``/``.ndim``/``.dtype``/``.reshape``
(which arrays and Tensors both have) and aten ops, so they run on arrays in the usual backward and
on Tensors -- recording, for double backward -- when the engine asks for that.
"""
from .._ops import aten


def sum_to(grad, shape):
    """Sum a broadcast gradient back to ``shape`` (torch's ``at::sum_to``): over the leading dims
    the broadcast added and the dims that were 1."""
    shape = tuple(shape)
    if tuple(grad.shape) == shape:
        return grad
    lead = grad.ndim - len(shape)
    dims = list(range(lead)) + [i + lead for i, s in enumerate(shape) if s == 1 and grad.shape[i + lead] != 1]
    if dims:
        grad = aten.sum.dim_IntList(grad, dims, True)
    if lead or tuple(grad.shape) != shape:
        grad = grad.reshape(shape)
    return grad


def expand_reduced(grad, sizes, dims, keepdim):
    """The gradient of a reduction over ``dims`` (a tuple of non-negative dims, or None for all),
    spread back over the input's ``sizes``."""
    if not keepdim:
        if dims is None:
            grad = grad.reshape((1,) * len(sizes))
        elif grad.ndim != len(sizes):
            shape = list(grad.shape)
            for d in sorted(dims):
                shape.insert(d, 1)
            grad = grad.reshape(tuple(shape))
    return aten.expand(grad, list(sizes))
