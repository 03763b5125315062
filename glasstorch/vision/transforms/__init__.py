"""torchvision.transforms: image transforms for data pipelines (classes in ``transforms.py``, the
operations in ``functional``; ``v2`` is torchvision's second API, which also carries labels along)."""
from .transforms import *  # noqa: F401,F403
from .transforms import __all__  # noqa: F401
from . import functional  # noqa: F401


def __getattr__(name):
    if name == "v2":
        import importlib
        return importlib.import_module(".v2", __name__)
    raise AttributeError(f"module 'glasstorch.vision.transforms' has no attribute '{name}'")
