r"""All parameters as one flat vector and back (for second-order methods, line searches...)."""
from glasstorch._tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters):
    r"""One 1-D tensor: the parameters flattened and concatenated (differentiable: a cat of views)."""
    import glasstorch
    param_device = None
    vec = []
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        vec.append(param.view(-1))
    return glasstorch.cat(vec)


def vector_to_parameters(vec, parameters):
    r"""Give each parameter, in order, the next ``numel()`` elements of ``vec`` as its data."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    param_device = None
    pointer = 0
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        num_param = param.numel()
        param.data = vec[pointer:pointer + num_param].view_as(param).data
        pointer += num_param


def _check_param_device(param, old_param_device):
    """All parameters must live on one device (the vector is a single tensor)."""
    if old_param_device is None:
        return param.get_device() if param.is_cuda else -1
    if param.is_cuda:
        warn = param.get_device() != old_param_device
    else:
        warn = old_param_device != -1
    if warn:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return old_param_device
