"""AlexNet ("One weird trick" variant), laid out exactly as torchvision's: the same attribute names
and Sequential indices, so state_dict keys match torchvision's and its checkpoints load."""
from functools import partial

import glasstorch as torch
from glasstorch import nn

from ..transforms._presets import ImageClassification
from ._api import Weights, WeightsEnum, _ovewrite_named_param, load_weights, model_builder
from ._meta import _IMAGENET_CATEGORIES

__all__ = ["AlexNet", "AlexNet_Weights", "alexnet"]


class AlexNet(nn.Module):
    """features (5 convolutions, 3 max-pools) -> adaptive average pool to 6x6 -> classifier (3 linear
    layers with dropout). Inputs at least 63x63."""

    def __init__(self, num_classes=1000, dropout=0.5):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, kernel_size=11, stride=4, padding=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(64, 192, kernel_size=5, padding=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(192, 384, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(384, 256, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(256, 256, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
        )
        self.avgpool = nn.AdaptiveAvgPool2d((6, 6))
        self.classifier = nn.Sequential(
            nn.Dropout(p=dropout), nn.Linear(256 * 6 * 6, 4096), nn.ReLU(inplace=True),
            nn.Dropout(p=dropout), nn.Linear(4096, 4096), nn.ReLU(inplace=True),
            nn.Linear(4096, num_classes),
        )

    def forward(self, x):
        x = self.features(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        return self.classifier(x)


class AlexNet_Weights(WeightsEnum):
    IMAGENET1K_V1 = Weights(
        url="https://download.pytorch.org/models/alexnet-owt-7be5be79.pth",
        transforms=partial(ImageClassification, crop_size=224),
        meta={"num_params": 61100840, "min_size": (63, 63), "categories": _IMAGENET_CATEGORIES,
              "recipe": "https://github.com/pytorch/vision/tree/main/references/classification#alexnet-and-vgg",
              "_metrics": {"ImageNet-1K": {"acc@1": 56.522, "acc@5": 79.066}}, "_ops": 0.714, "_file_size": 233.087},
    )
    DEFAULT = IMAGENET1K_V1


@model_builder(AlexNet_Weights, AlexNet_Weights.IMAGENET1K_V1)
def alexnet(*, weights=None, progress=True, **kwargs):
    """AlexNet; ``weights=AlexNet_Weights.DEFAULT`` loads the ImageNet weights from torch's cache."""
    if weights is not None:
        _ovewrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
    return load_weights(AlexNet(**kwargs), weights, progress)
