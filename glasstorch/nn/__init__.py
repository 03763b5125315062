"""torch.nn: layers (``modules``), their functional forms (``functional``), initialisation
(``init``), parameters and the Module system, ``utils`` (gradient clipping, sequences) and ``parallel`` (DataParallel, DistributedDataParallel)."""
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import Module, LazyModuleMixin  # noqa: F401
from . import functional, init, utils, parallel  # noqa: F401
from .parallel import DataParallel  # noqa: F401
