"""torch.amp: automatic mixed precision — ``autocast`` regions and the ``GradScaler`` for float16 gradients.

``GradScaler`` is complete. ``autocast`` keeps torch's state and API but glasstorch's ops do not
cast yet (see ``autocast_mode``'s docstring).
"""
from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from .grad_scaler import GradScaler

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available", "GradScaler"]
