"""VGG 11/13/16/19, with and without batch norm, laid out exactly as torchvision's (``features`` as
one Sequential of conv/[bn]/relu/pool, ``avgpool``, ``classifier``), so state_dict keys match."""
from functools import partial

import glasstorch as torch
from glasstorch import nn

from ..transforms._presets import ImageClassification
from ._api import Weights, WeightsEnum, _ovewrite_named_param, load_weights, model_builder
from ._meta import _IMAGENET_CATEGORIES

__all__ = ["VGG", "VGG11_Weights", "VGG11_BN_Weights", "VGG13_Weights", "VGG13_BN_Weights", "VGG16_Weights",
           "VGG16_BN_Weights", "VGG19_Weights", "VGG19_BN_Weights", "vgg11", "vgg11_bn", "vgg13", "vgg13_bn",
           "vgg16", "vgg16_bn", "vgg19", "vgg19_bn"]


class VGG(nn.Module):
    """`features` -> adaptive average pool to 7x7 -> classifier (3 linear layers with dropout).
    Initialised as torchvision does: Kaiming-normal convolutions (fan_out), N(0, 0.01) linear weights."""

    def __init__(self, features, num_classes=1000, init_weights=True, dropout=0.5):
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
            nn.Linear(4096, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
            nn.Linear(4096, num_classes),
        )
        if init_weights:
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                    if m.bias is not None:
                        nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.Linear):
                    nn.init.normal_(m.weight, 0, 0.01)
                    nn.init.constant_(m.bias, 0)

    def forward(self, x):
        x = self.features(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        return self.classifier(x)


def make_layers(cfg, batch_norm=False):
    """A config (channel counts, "M" for a 2x2 max-pool) -> the ``features`` Sequential."""
    layers = []
    in_channels = 3
    for v in cfg:
        if v == "M":
            layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
            continue
        conv2d = nn.Conv2d(in_channels, v, kernel_size=3, padding=1)
        layers += [conv2d, nn.BatchNorm2d(v), nn.ReLU(inplace=True)] if batch_norm else [conv2d, nn.ReLU(inplace=True)]
        in_channels = v
    return nn.Sequential(*layers)


cfgs = {
    "A": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "B": [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "D": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"],
    "E": [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M", 512, 512, 512, 512, "M"],
}

_COMMON_META = {"min_size": (32, 32), "categories": _IMAGENET_CATEGORIES,
                "recipe": "https://github.com/pytorch/vision/tree/main/references/classification#alexnet-and-vgg"}


def _weights(file, num_params, acc1, acc5, ops, file_size):
    return Weights(url=f"https://download.pytorch.org/models/{file}",
                   transforms=partial(ImageClassification, crop_size=224),
                   meta={**_COMMON_META, "num_params": num_params,
                         "_metrics": {"ImageNet-1K": {"acc@1": acc1, "acc@5": acc5}}, "_ops": ops,
                         "_file_size": file_size})


class VGG11_Weights(WeightsEnum):
    IMAGENET1K_V1 = _weights("vgg11-8a719046.pth", 132863336, 69.02, 88.628, 7.609, 506.84)
    DEFAULT = IMAGENET1K_V1


class VGG11_BN_Weights(WeightsEnum):
    IMAGENET1K_V1 = _weights("vgg11_bn-6002323d.pth", 132868840, 70.37, 89.81, 7.609, 506.881)
    DEFAULT = IMAGENET1K_V1


class VGG13_Weights(WeightsEnum):
    IMAGENET1K_V1 = _weights("vgg13-19584684.pth", 133047848, 69.928, 89.246, 11.308, 507.545)
    DEFAULT = IMAGENET1K_V1


class VGG13_BN_Weights(WeightsEnum):
    IMAGENET1K_V1 = _weights("vgg13_bn-abd245e5.pth", 133053736, 71.586, 90.374, 11.308, 507.59)
    DEFAULT = IMAGENET1K_V1


class VGG16_Weights(WeightsEnum):
    IMAGENET1K_V1 = _weights("vgg16-397923af.pth", 138357544, 71.592, 90.382, 15.47, 527.796)
    DEFAULT = IMAGENET1K_V1


class VGG16_BN_Weights(WeightsEnum):
    IMAGENET1K_V1 = _weights("vgg16_bn-6c64b313.pth", 138365992, 73.36, 91.516, 15.47, 527.866)
    DEFAULT = IMAGENET1K_V1


class VGG19_Weights(WeightsEnum):
    IMAGENET1K_V1 = _weights("vgg19-dcbb9e9d.pth", 143667240, 72.376, 90.876, 19.632, 548.051)
    DEFAULT = IMAGENET1K_V1


class VGG19_BN_Weights(WeightsEnum):
    IMAGENET1K_V1 = _weights("vgg19_bn-c79401a0.pth", 143678248, 74.218, 91.842, 19.632, 548.143)
    DEFAULT = IMAGENET1K_V1


def _vgg(cfg, batch_norm, weights, progress, **kwargs):
    if weights is not None:
        kwargs["init_weights"] = False
        _ovewrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
    return load_weights(VGG(make_layers(cfgs[cfg], batch_norm=batch_norm), **kwargs), weights, progress)


def _builder(name, cfg, batch_norm, weights_enum):
    """The builder function `name` (vgg16, ...): config `cfg`, with or without batch norm."""
    def build(*, weights=None, progress=True, **kwargs):
        return _vgg(cfg, batch_norm, weights, progress, **kwargs)
    build.__name__ = build.__qualname__ = name
    build.__doc__ = (f"VGG-{name[3:].replace('_bn', '-BN')} (config {cfg}); ``weights={weights_enum.__name__}."
                     f"DEFAULT`` loads the ImageNet weights from torch's cache.")
    return model_builder(weights_enum, weights_enum.IMAGENET1K_V1)(build)


vgg11 = _builder("vgg11", "A", False, VGG11_Weights)
vgg11_bn = _builder("vgg11_bn", "A", True, VGG11_BN_Weights)
vgg13 = _builder("vgg13", "B", False, VGG13_Weights)
vgg13_bn = _builder("vgg13_bn", "B", True, VGG13_BN_Weights)
vgg16 = _builder("vgg16", "D", False, VGG16_Weights)
vgg16_bn = _builder("vgg16_bn", "D", True, VGG16_BN_Weights)
vgg19 = _builder("vgg19", "E", False, VGG19_Weights)
vgg19_bn = _builder("vgg19_bn", "E", True, VGG19_BN_Weights)
