"""Weight normalisation's ops: ``w = g * v / ||v||``, the norm taken over every dim but ``dim``.

===========================  ===============================  ============================================
aten op                      node                             what it is
===========================  ===============================  ============================================
``norm.Scalar``              ``NormBackward0``                ``||v||`` over everything (C++'s ``at::norm``)
``norm.ScalarOpt_dim``       ``NormBackward1``                ``||v||`` over ``dim`` (C++'s ``at::norm``)
``_weight_norm_interface``   ``WeightNormInterfaceBackward0`` ``(w, norms)`` for ``dim`` first or last
===========================  ===============================  ============================================

``torch._weight_norm(v, g, dim)`` (what ``nn.utils.weight_norm`` and
``nn.utils.parametrizations.weight_norm`` call) uses the fused op when ``dim`` is the first or the
last dim and composes ``v * (g / norm_except_dim(v, 2, dim))`` otherwise, as torch's
``native/WeightNorm.cpp`` does; ``norm_except_dim`` is torch's composite too (a norm over a
``view`` of ``v``), so the nodes are torch's.

The fused op's derivative is torch's ``_weight_norm_differentiable_backward``: it reads the saved
``norms`` (the op's second output) as a constant, so its second derivative is the one torch
computes (which is not the exact one: torch's ``gradgradcheck`` fails on it too, and
``tests/test_parametrize.py`` pins that glasstorch gives torch's numbers).
"""
from .._ops import defop, aten, node_classes_of
from .._seam import overridable
from .._array import xp
from ._derivatives import norm_backward
from .reduction import _vector_norm_kernel

__getattr__ = node_classes_of(__name__)    # (the node classes declared here, by name: TanhBackward0)

__all__ = ["norm_except_dim"]   # (and torch._weight_norm, put on the top level by name)


def _other_dims(ndim, dim):
    return [d for d in range(ndim) if d != dim]


def _weight_norm_interface_kernel(v, g, dim=0):
    dim = dim % v.ndim if v.ndim else 0
    norms = xp.sqrt(xp.sum(v * v, axis=tuple(_other_dims(v.ndim, dim)), keepdims=True))
    return v * (g / norms), norms.astype(v.dtype, copy=False)


def _weight_norm_backward(grad, v, g, result1, dim):
    """torch's ``_weight_norm_differentiable_backward`` (``FunctionsManual.cpp``): with ``s`` the sum
    of ``grad * v`` over the normalised dims, ``grad_v = g / n * (grad - v * s / n^2)``,
    ``grad_g = s / n``."""
    dim = dim % v.ndim if v.ndim else 0
    per_dim_sums = aten.sum.dim_IntList(grad * v, _other_dims(v.ndim, dim), True)
    grad_v = (g / result1) * (grad - v * (per_dim_sums / (result1 * result1)))
    return grad_v, per_dim_sums / result1


weight_norm_interface_op = defop(
    "_weight_norm_interface(Tensor v, Tensor g, int dim=0) -> (Tensor, Tensor)", _weight_norm_interface_kernel,
    node="WeightNormInterfaceBackward0", output_differentiability=(True, False),
    joint={("v", "g"): lambda grad, v, g, result1, dim: _weight_norm_backward(grad, v, g, result1, dim)})
norm_scalar_op = defop("norm.Scalar(Tensor self, Scalar p=2) -> Tensor",
                       lambda self, p=2: _vector_norm_kernel(self, p),
                       node="NormBackward0",
                       self=lambda grad, self, p, result: norm_backward(grad, self, p, result, None, False))
norm_dim_op = defop("norm.ScalarOpt_dim(Tensor self, Scalar? p, int[1] dim, bool keepdim=False) -> Tensor",
                    lambda self, p, dim, keepdim=False: _vector_norm_kernel(self, 2 if p is None else p, dim, keepdim),
                    node="NormBackward1",
                    self=lambda grad, self, p, result, dim, keepdim: norm_backward(
                        grad, self, 2 if p is None else p, result, dim, keepdim))


@overridable
def norm_except_dim(v, pow=2, dim=0):
    """The ``pow``-norm of ``v`` over every dim but ``dim``, shaped to broadcast against ``v``
    (size 1 everywhere but ``dim``); over everything when ``dim == -1``. torch's composite."""
    if dim == -1:
        return norm_scalar_op(v, pow)
    if dim == 0:
        output_size = [v.shape[0]] + [1] * (v.ndim - 1)
        return norm_dim_op(v.contiguous().view(v.shape[0], -1), pow, [1]).view(output_size)
    if dim == v.ndim - 1:
        output_size = [1] * (v.ndim - 1) + [v.shape[-1]]
        return norm_dim_op(v.contiguous().view(-1, v.shape[-1]), pow, [0]).view(output_size)
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


@overridable
def _weight_norm(v, g, dim=0):
    """``v * (g / ||v||)``, the norm over every dim but ``dim`` (every dim when ``dim == -1``): the
    fused op for the first or last dim, torch's composite otherwise."""
    if v.device != g.device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                           f"{v.device} and {g.device}!")
    v, g = v.contiguous(), g.contiguous()   # (torch's first step: a CloneBackward0 for a strided input)
    if dim == 0 or dim == v.ndim - 1:
        return weight_norm_interface_op(v, g, dim)[0]
    return v * (g / norm_except_dim(v, 2, dim))
