"""torchvision.tv_tensors: tensors that say what they hold, so that v2 transforms know what to do.

Only ``Image`` is here: a Tensor of shape (..., C, H, W) that v2 transforms treat as an image (a plain
tensor is treated as one too, when it is the only candidate in the sample). As in torchvision, the
result of an ordinary tensor operation on an ``Image`` is a plain Tensor; the v2 transforms and their
functionals return an ``Image`` for an ``Image``.
"""
from .. import _tensor
from .._tensor import Tensor
from .._seam import DisableTorchFunctionSubclass

# the Tensor methods whose result keeps the TVTensor type (torchvision's _FORCE_TORCHFUNCTION_SUBCLASS)
_KEEP_TYPE = frozenset((Tensor.clone, Tensor.to, Tensor.detach, Tensor.requires_grad_, Tensor.pin_memory))

def as_subclass(tensor, cls):
    """A `cls` (Tensor or a subclass) sharing `tensor`'s data and version counter: torch's
    ``tensor.as_subclass(cls)`` (how torchvision wraps and unwraps tv_tensors)."""
    new = _tensor.new_object(cls)
    _tensor._init(new, tensor._data, tensor.requires_grad)
    new._vc = tensor._vc
    return new


class TVTensor(Tensor):
    """The base of the tensor types v2 transforms dispatch on."""

    @classmethod
    def _wrap(cls, tensor):
        return as_subclass(tensor, cls)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """torchvision's rule: an op on a TVTensor gives a plain Tensor (v2 transforms wrap their own
        results again), except clone/to/detach/requires_grad_/pin_memory called on one, which keep
        its type; an in-place op's result (the TVTensor itself) is handed back as a plain Tensor too."""
        if not all(issubclass(cls, t) for t in types):
            return NotImplemented
        with DisableTorchFunctionSubclass():
            output = func(*args, **(kwargs or {}))
        if func in _KEEP_TYPE and args and isinstance(args[0], cls):
            # (args[0], not any argument: ``plain.to(image)`` gives a plain tensor)
            return output if type(output) is type(args[0]) else output.as_subclass(type(args[0]))
        if isinstance(output, cls):
            return output.as_subclass(Tensor)
        return output

    def __deepcopy__(self, memo):
        # (torchvision's: Tensor's deepcopy refuses a subclass whose new_empty gives a plain tensor;
        # detach() first keeps the copy out of the graph, and hits __torch_function__, which keeps the type)
        return self.detach().clone().requires_grad_(self.requires_grad)

    def __repr__(self, *args, **kwargs):
        return Tensor.__repr__(self).replace("tensor", type(self).__name__, 1)


class Image(TVTensor):
    """An image tensor: (C, H, W) or (..., C, H, W); a 2-D input gets a channel dimension (1, H, W).

    ``Image(data, dtype=None, device=None, requires_grad=None)``: `data` is anything ``torch.tensor``
    takes, or a PIL image (converted to a uint8 (C, H, W) tensor)."""

    def __new__(cls, data, *, dtype=None, device=None, requires_grad=None):
        import glasstorch
        from . import _pil
        if _pil.is_pil_image(data):
            from .transforms.functional import pil_to_tensor
            data = pil_to_tensor(data)
        tensor = data if isinstance(data, Tensor) and dtype is None and device is None else \
            glasstorch.as_tensor(data, dtype=dtype, device=device)
        if tensor.ndim < 2:
            raise ValueError(f"Image expects a tensor with at least 2 dimensions, got {tensor.ndim}")
        if tensor.ndim == 2:
            tensor = tensor.unsqueeze(0)
        image = cls._wrap(tensor)
        if requires_grad is not None:
            image.requires_grad_(requires_grad)
        return image

    def __init__(self, *args, **kwargs):
        pass
