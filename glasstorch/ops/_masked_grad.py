"""Derivatives that are the incoming gradient with a mask applied: relu, leaky_relu, hardtanh,
threshold, softshrink, hardshrink (and max pooling, which routes it).

torch computes these with ATen ops (``threshold_backward``, ``leaky_relu_backward``, ...) that are
differentiable themselves, with inputs (grad, self): their own derivative masks the gradient
again, and is zero for ``self``. So under ``create_graph=True`` the first derivative requires
grad and a second derivative is *zeros*, not None (``autograd.grad(g.sum(), x)`` works), and the
graph shows torch's double-backward node (``ThresholdBackwardBackward0`` ...). One mechanism here
for all of them::

    grad ----------.
                    ThresholdBackwardBackward0 -- grad * (self > 0)
    self (result) -'   (d grad: the same mask;  d self: zeros)
"""
from .._tensor import _wrap
from .._array import xp
from ..autograd.graph import Node
from ._op import _state, record


class MaskedGradBackward(Node):
    """Base of the double-backward nodes of :func:`masked_grad` (one subclass per torch name)."""
    saved_names = ("self",)

    def backward(self, gg):
        (src,) = self._unpack_saved()
        edges = self.next_functions
        g = masked_grad(type(self), gg, src, self.keep, self.other_scale) if edges[0][0] is not None else None
        z = src.new_zeros(src.shape) if edges[1][0] is not None else None
        return g, z


def masked_grad_node(name):
    """A MaskedGradBackward subclass named as torch names the double-backward node."""
    return type(name, (MaskedGradBackward,), {"__module__": "torch.autograd", "saved_names": ("self",)})


def masked_grad(node_cls, grad, src, keep, other_scale=0.0):
    """``where(keep, grad, grad * other_scale)``: the gradient kept where ``keep`` (a bool array
    computed from ``src`` without autograd) and scaled elsewhere (0: dropped; a NaN gradient there
    is dropped too, as torch's ``where`` does). Recorded as ``node_cls`` with inputs (grad, src)
    when either requires grad."""
    g = grad._data
    other = g * g.dtype.type(other_scale) if other_scale else g.dtype.type(0)
    res = _wrap(xp.where(keep, g, other))
    if _state.enabled and (grad._requires_grad or src._requires_grad):
        node = record(node_cls, res, (grad, src), (src,), meta_check=False)
        node.keep, node.other_scale = keep, other_scale
    return res
