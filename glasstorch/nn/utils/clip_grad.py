r"""Gradient clipping, applied between ``backward()`` and ``optimizer.step()``.

``clip_grad_norm_`` rescales all gradients together so that their total norm (the norm of the
vector of every gradient element) is at most ``max_norm``, and returns that total norm, measured
before clipping. ``clip_grad_value_`` clamps each element to [-clip_value, clip_value].

    >>> import glasstorch as torch
    >>> w = torch.nn.Parameter(torch.zeros(2))
    >>> w.grad = torch.tensor([3.0, 4.0])
    >>> torch.nn.utils.clip_grad_norm_([w], max_norm=1.0)
    tensor(5.)
    >>> w.grad
    tensor([0.6000, 0.8000])
"""
import functools
import types
import warnings

import glasstorch
from glasstorch._tensor import Tensor
from glasstorch.autograd.grad_mode import no_grad

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]


def _no_grad(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with no_grad():
            return func(*args, **kwargs)
    return wrapper


@_no_grad
def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    r"""The norm of the norms of ``tensors`` (= the norm of all their elements together)."""
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return glasstorch.tensor(0.0)
    norms = [glasstorch.linalg.vector_norm(g, norm_type) for g in tensors]
    total_norm = glasstorch.linalg.vector_norm(glasstorch.stack(norms), norm_type)
    if error_if_nonfinite and bool(total_norm.isnan() | total_norm.isinf()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it "
                           f"cannot be clipped. To disable this error and scale the gradients by the non-finite norm "
                           f"anyway, set `error_if_nonfinite=False`")
    return total_norm


@_no_grad
def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    r"""Scale the gradients by max_norm / (total_norm + 1e-6) when that is below 1."""
    parameters = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    if len(grads) == 0:
        return
    clip_coef = float(max_norm) / (total_norm + 1e-6)
    clip_coef_clamped = glasstorch.clamp(clip_coef, max=1.0)
    for g in grads:
        g.mul_(clip_coef_clamped.to(g.dtype))


@_no_grad
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    r"""Clip the gradients of ``parameters`` (an iterable, or one tensor) to total norm ``max_norm``
    (``norm_type``-norm, 'inf' for the max); return the total norm before clipping. With
    ``error_if_nonfinite`` a NaN/inf total norm raises instead of scaling every gradient to NaN."""
    max_norm, norm_type = float(max_norm), float(norm_type)  # as torch: 'inf' and 2 are fine, 'a' a ValueError
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and len(parameters) == 0:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=3)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@_no_grad
def clip_grad_value_(parameters, clip_value, foreach=None):
    r"""Clamp every gradient element of ``parameters`` to [-clip_value, clip_value], in place."""
    parameters = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    clip_value = float(clip_value)
    for p in parameters:
        if p.grad is not None:
            p.grad.clamp_(min=-clip_value, max=clip_value)
