"""torch.utils.hooks: RemovableHandle and BackwardHook (defined with the module system)."""
from ..nn.utils.hooks import RemovableHandle, BackwardHook  # noqa: F401

try:
    from ..nn.utils.hooks import unserializable_hook  # noqa: F401
except ImportError:  # pragma: no cover
    def unserializable_hook(f):
        f.__torch_unserializable__ = True
        return f
