"""glasstorch.utils: the helpers torch keeps under ``torch.utils``."""

from . import data
from . import _python_dispatch  # noqa: F401  (torch.utils._python_dispatch, reached as an attribute)

from . import checkpoint  # noqa: E402
