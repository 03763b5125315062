"""torch.utils.hooks: ``RemovableHandle`` (defined in the core, ``glasstorch/_hooks.py``: tensors and graph
nodes hand it out too), and ``BackwardHook``, which turns a module's full backward hooks into graph hooks
(defined with the module system, ``glasstorch/nn/utils/hooks.py``, and loaded with it on first use)."""
from .._hooks import RemovableHandle, unserializable_hook

__all__ = ["RemovableHandle", "unserializable_hook", "BackwardHook"]


def __getattr__(name):
    if name in ("BackwardHook", "BackwardHookFunction"):
        from ..nn.utils import hooks
        return getattr(hooks, name)
    raise AttributeError(f"module 'glasstorch.utils.hooks' has no attribute '{name}'")
