"""torch.backends.mkl: Intel MKL is not used (NumPy's own BLAS is)."""
from ._verbose import VerboseLevel

VERBOSE_OFF = 0
VERBOSE_ON = 1


def is_available():
    return False


class verbose(VerboseLevel):
    """``with torch.backends.mkl.verbose(VERBOSE_ON):`` -- MKL's on-demand log; nothing to log here."""
