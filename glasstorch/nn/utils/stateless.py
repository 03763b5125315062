"""torch.nn.utils.stateless: call a module with other tensors in place of its parameters and buffers.

``functional_call(module, {"weight": w}, x)`` runs ``module(x)`` with ``module.weight`` being ``w``
for the duration of the call (the module's own tensors are put back afterwards, even on an error):
what ``torch.func.functional_call`` (the current spelling; this one warns) and the function
transforms (``torch.func.grad`` of a loss as a function of the parameters) are built on.
Follows torch/nn/utils/stateless.py and _named_member_accessor.py.
"""
import contextlib
import warnings

from ..._tensor import Tensor

__all__ = ["functional_call"]

_MISSING = object()


def _untie_named_tensors_map(module, parameters_and_buffers):
    """Tied tensors (one tensor under several names, as a shared embedding and output layer):
    a value given for one name is used for all of them."""
    all_named_tensors = dict(module.named_parameters(remove_duplicate=False))
    all_named_tensors.update(module.named_buffers(remove_duplicate=False))
    tensor_to_tied_names = {}
    for name, tensor in all_named_tensors.items():
        tensor_to_tied_names.setdefault(id(tensor), set()).add(name)
    tied_names_map = {name: names for names in tensor_to_tied_names.values() if len(names) > 1 for name in names}
    given_tied = {name for name in parameters_and_buffers if name in tied_names_map}
    for given_name in given_tied:
        tied_names = tied_names_map[given_name]
        if (len(tied_names & given_tied) > 1
                and len({id(parameters_and_buffers[n]) for n in tied_names if n in parameters_and_buffers}) != 1):
            raise ValueError(f"functional_call got multiple values for keys {sorted(tied_names)}, which are tied. "
                             f"Consider using tie_weights=False")
    untied = dict(parameters_and_buffers)
    for given_name in given_tied:
        for tied_name in tied_names_map[given_name]:
            untied[tied_name] = parameters_and_buffers[given_name]
    return untied


def _swap_tensor(module, name, tensor):
    """Put ``tensor`` (or remove it, for _MISSING) under ``name`` in ``module``; returns what was there."""
    if tensor is not _MISSING and not isinstance(tensor, Tensor):
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")
    for store in (module._parameters, module._buffers):
        if name in store:
            orig = store[name]
            if tensor is _MISSING:
                del store[name]
            else:
                store[name] = tensor
            return orig
    orig = getattr(module, name) if hasattr(module, name) else _MISSING
    if orig is not _MISSING and not isinstance(orig, Tensor):
        raise TypeError(f"attribute `{name}`: {orig} is not an instance of torch.Tensor")
    if tensor is not _MISSING:
        setattr(module, name, tensor)
    elif hasattr(module, name):
        delattr(module, name)
    return orig


def _swap_tensors_dict(module, named_tensors):
    originals = {}
    for full_name, tensor in named_tensors.items():
        prefix, _, name = full_name.rpartition(".")
        originals[full_name] = _swap_tensor(module.get_submodule(prefix), name, tensor)
    return originals


@contextlib.contextmanager
def _reparametrize_module(module, parameters_and_buffers, tie_weights=False, strict=False):
    untied = _untie_named_tensors_map(module, parameters_and_buffers) if tie_weights else parameters_and_buffers
    if strict:
        valid = {n for n, _ in module.named_parameters(remove_duplicate=False)}
        valid |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
        missing, unexpected = sorted(valid - set(untied)), sorted(set(untied) - valid)
        error_msgs = []
        if unexpected:
            error_msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            error_msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if error_msgs:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(module._get_name(),
                                                                                 "\n\t".join(error_msgs)))
    originals = {}
    try:
        originals = _swap_tensors_dict(module, untied)
        yield
    finally:
        new = _swap_tensors_dict(module, originals)
        # a module that wrote a new tensor into its _parameters / _buffers: the caller's dict sees it
        parameters_and_buffers.update({k: new[k] for k in parameters_and_buffers if k in new})


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with the tensors of ``parameters_and_buffers`` (names as in
    ``state_dict``) in place of the module's own. Deprecated in torch 2.0 for
    ``torch.func.functional_call``."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed in "
                  "a future version of PyTorch. Please use `torch.func.functional_call` instead which is a drop-in "
                  "replacement.", FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)


def _functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    from ..parallel import DataParallel
    if isinstance(module, DataParallel):
        raise RuntimeError("The stateless API can't be used with nn.DataParallel module")
    kwargs = {} if kwargs is None else kwargs
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)
