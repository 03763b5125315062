"""torchvision.models: AlexNet, VGG (11/13/16/19, +BN), ResNet (18/34) and Inception v3 with torchvision's exact
module layout, so their state_dicts load torchvision checkpoints and torchvision loads theirs.
``weights=None`` builds a randomly initialised model; requested weights come from torch's hub
cache (see ``_api``)."""
from ._api import Weights, WeightsEnum, get_model, get_model_builder, get_model_weights, get_weight, \
    list_models  # noqa: F401
from .alexnet import *  # noqa: F401,F403
from .inception import *  # noqa: F401,F403
from .resnet import *  # noqa: F401,F403
from .vgg import *  # noqa: F401,F403
from . import alexnet as _alexnet_module, inception as _inception_module, resnet as _resnet_module, \
    vgg as _vgg_module  # noqa: F401
