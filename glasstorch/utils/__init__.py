"""glasstorch.utils: the helpers torch keeps under ``torch.utils``."""

from . import data

from . import checkpoint  # noqa: E402
