"""torch.autograd.Variable: the legacy wrapper, kept as torch keeps it so that old code and libraries
that still import it (torchviz, pre-0.4 tutorials) run.

Since PyTorch 0.4 a Variable *is* a tensor: ``Variable(t)`` returns a plain tensor (``t`` detached,
sharing its data) with ``requires_grad`` as asked, and ``isinstance(x, Variable)`` is true for every
tensor. Nothing is ever an instance of the class itself.
"""
import warnings

__all__ = ["VariableMeta", "Variable"]


def _tensor_class():
    from .._tensor import Tensor   # glasstorch._tensor imports this package: import on first use
    return Tensor


def _as_flag(value):
    """A flag as torch's legacy constructor parses it (C ``b``): any integer, never a string or None."""
    if isinstance(value, bool):
        return value
    try:
        return bool(value.__index__())
    except AttributeError:
        raise TypeError(f"'{type(value).__name__}' object cannot be interpreted as an integer") from None


class VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, _tensor_class())


class Variable(metaclass=VariableMeta):
    """``Variable(data=None, requires_grad=False, volatile=False, _grad_fn=None, name=None)``: ``data``
    detached, as a tensor; no data gives an empty tensor of the default dtype. ``volatile`` warns and
    does nothing (use ``torch.no_grad()``)."""

    def __new__(cls, data=None, requires_grad=False, volatile=False, _grad_fn=None, name=None):
        requires_grad, volatile = _as_flag(requires_grad), _as_flag(volatile)
        if name is not None and not isinstance(name, str):
            raise TypeError(f"argument 5 must be str or None, not {type(name).__name__}")
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          UserWarning, stacklevel=2)
            if requires_grad:
                raise ValueError("Variable can't be volatile and require_grad at the same time!")
        if _grad_fn is not None:
            from .graph import Node
            if not isinstance(_grad_fn, Node):
                raise TypeError(f"_grad_fn has to be a Function object or None, but got {type(_grad_fn).__name__}")
            raise RuntimeError("_grad_fn argument to legacy Variable constructor is no longer supported.  "
                               "Instead, please invoke your _grad_fn to produce a variable with it as the _grad_fn.")
        if data is None:
            from ..ops.creation import empty
            out = empty(0)
        elif isinstance(data, _tensor_class()):
            out = data.detach()
        else:
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        # the constructor's own message (capital O), as torch.tensor(..., requires_grad=True) words it
        out._set_requires_grad(requires_grad, "Only Tensors of floating point and complex dtype can require gradients")
        if name is not None:
            out.name = name
        return out
