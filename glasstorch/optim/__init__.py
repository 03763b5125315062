"""glasstorch.optim: optimizers and learning-rate schedulers, as ``torch.optim``.

``optimizer.py`` holds what all optimizers share (param groups, state, state dict, hooks); each
algorithm's file holds its class and its update rule, a plain function over lists of tensors
(``sgd``, ``adam``, ...) written like torch's reference for-loop implementation.
"""
from . import lr_scheduler, swa_utils
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .asgd import ASGD
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ["Adadelta", "Adagrad", "Adam", "Adamax", "AdamW", "ASGD", "LBFGS", "lr_scheduler", "NAdam", "Optimizer",
           "RAdam", "RMSprop", "Rprop", "SGD", "SparseAdam", "swa_utils"]

