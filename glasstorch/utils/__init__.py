"""glasstorch.utils: the helpers torch keeps under ``torch.utils``."""

from . import data
from . import _python_dispatch, hooks  # noqa: F401  (torch.utils._python_dispatch, .hooks: reached as attributes)

from . import checkpoint  # noqa: E402

__all__ = ["data", "checkpoint", "hooks"]
