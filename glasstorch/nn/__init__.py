"""torch.nn: layers (``modules``), their functional forms (``functional``), initialisation
(``init``), parameters and the Module system, and ``utils`` (gradient clipping, sequences)."""
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import Module, LazyModuleMixin  # noqa: F401
from . import functional, init, utils  # noqa: F401
from . import modules as _modules

__all__ = ["Buffer", "Parameter", "UninitializedBuffer", "UninitializedParameter", *_modules.__all__]
