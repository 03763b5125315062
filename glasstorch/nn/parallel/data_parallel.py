"""DataParallel (torch/nn/parallel/data_parallel.py): here, a pass-through on one device.

torch's DataParallel splits each batch across the GPUs of one process and gathers the outputs;
with no GPU it keeps ``module`` and calls it as it is, and that is what this one always does (one
device: the batch stays whole, the result is the module's). The wrapper is still there for the
code around it: ``model.module`` is the wrapped model and the state_dict's keys start with
``module.``, so checkpoints move between the two as in torch. For several processes (or
machines), see DistributedDataParallel.
"""
from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    """Keeps ``module`` and runs it unchanged on the batch (see the module doc)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = []
        self.dim = dim
        self.output_device = None

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """The functional form: ``module(*inputs, **module_kwargs)`` (one device, nothing to split)."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    return module(*inputs, **(module_kwargs or {}))
