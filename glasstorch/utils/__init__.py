"""glasstorch.utils: the helpers torch keeps under ``torch.utils``."""

from . import data

# checkpoint (torch.utils.checkpoint) is added here by the core.
