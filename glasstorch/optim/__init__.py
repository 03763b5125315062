"""glasstorch.optim: optimizers and learning-rate schedulers, as ``torch.optim``.

``optimizer.py`` holds what all optimizers share (param groups, state, state dict, hooks); each
algorithm's file holds its class and its update rule, a plain function over lists of tensors
(``sgd``, ``adam``, ...) written like torch's reference for-loop implementation.
"""
from . import lr_scheduler
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam
from .adamw import AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Adadelta", "Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "SGD", "lr_scheduler"]
