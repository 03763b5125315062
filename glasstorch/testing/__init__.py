"""torch.testing: ``assert_close``, what tests and tutorials check their numbers with."""
from ._comparison import assert_close

__all__ = ["assert_close"]
