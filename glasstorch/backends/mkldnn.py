"""torch.backends.mkldnn (oneDNN): not used by glasstorch; its switches are kept for programs that set them."""
import contextlib

from ._verbose import VerboseLevel

enabled = True
deterministic = False

VERBOSE_OFF = 0
VERBOSE_ON = 1
VERBOSE_ON_CREATION = 2


def is_available():
    return False


class verbose(VerboseLevel):
    """``with torch.backends.mkldnn.verbose(VERBOSE_ON):`` -- oneDNN's on-demand log; nothing to log here."""


@contextlib.contextmanager
def flags(enabled=False, deterministic=False, allow_tf32=True, fp32_precision="none"):
    """Set ``enabled``/``deterministic`` inside the block and restore them after it, as torch's ``mkldnn.flags``."""
    module = globals()
    previous = {"enabled": module["enabled"], "deterministic": module["deterministic"]}
    module.update(enabled=enabled, deterministic=deterministic)
    try:
        yield
    finally:
        module.update(previous)
