"""ResNet-18 and ResNet-34 (and the Bottleneck block of the deeper ResNets), laid out exactly as
torchvision's: conv1/bn1/relu/maxpool, layer1..layer4 of blocks, avgpool, fc -- state_dict keys match."""
from functools import partial

import glasstorch as torch
from glasstorch import nn

from ..transforms._presets import ImageClassification
from ._api import Weights, WeightsEnum, _ovewrite_named_param, load_weights, model_builder
from ._meta import _IMAGENET_CATEGORIES

__all__ = ["ResNet", "BasicBlock", "Bottleneck", "ResNet18_Weights", "ResNet34_Weights", "resnet18", "resnet34"]


def conv3x3(in_planes, out_planes, stride=1, groups=1, dilation=1):
    """3x3 convolution with padding (no bias: a batch norm follows)."""
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=dilation, groups=groups, bias=False,
                     dilation=dilation)


def conv1x1(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    """x -> conv3x3 -> bn -> relu -> conv3x3 -> bn, plus x (through `downsample` when the shape changes) -> relu."""
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64, dilation=1,
                 norm_layer=None):
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        if groups != 1 or base_width != 64:
            raise ValueError("BasicBlock only supports groups=1 and base_width=64")
        if dilation > 1:
            raise NotImplementedError("Dilation > 1 not supported in BasicBlock")
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class Bottleneck(nn.Module):
    """1x1 reduce -> 3x3 (stride here, as torchvision's "ResNet V1.5") -> 1x1 expand by 4, plus x."""
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64, dilation=1,
                 norm_layer=None):
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = conv1x1(inplanes, width)
        self.bn1 = norm_layer(width)
        self.conv2 = conv3x3(width, width, stride, groups, dilation)
        self.bn2 = norm_layer(width)
        self.conv3 = conv1x1(width, planes * self.expansion)
        self.bn3 = norm_layer(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class ResNet(nn.Module):
    """A 7x7 stride-2 stem and a max-pool, four stages of `block`s (64, 128, 256, 512 channels; the
    last three halve the resolution), global average pooling, and a linear classifier."""

    def __init__(self, block, layers, num_classes=1000, zero_init_residual=False, groups=1, width_per_group=64,
                 replace_stride_with_dilation=None, norm_layer=None):
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        self._norm_layer = norm_layer
        self.inplanes = 64
        self.dilation = 1
        if replace_stride_with_dilation is None:
            replace_stride_with_dilation = [False, False, False]
        if len(replace_stride_with_dilation) != 3:
            raise ValueError("replace_stride_with_dilation should be None "
                             f"or a 3-element tuple, got {replace_stride_with_dilation}")
        self.groups = groups
        self.base_width = width_per_group
        self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = norm_layer(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], stride=2, dilate=replace_stride_with_dilation[0])
        self.layer3 = self._make_layer(block, 256, layers[2], stride=2, dilate=replace_stride_with_dilation[1])
        self.layer4 = self._make_layer(block, 512, layers[3], stride=2, dilate=replace_stride_with_dilation[2])
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
        if zero_init_residual:  # each block starts as the identity
            for m in self.modules():
                if isinstance(m, Bottleneck) and m.bn3.weight is not None:
                    nn.init.constant_(m.bn3.weight, 0)
                elif isinstance(m, BasicBlock) and m.bn2.weight is not None:
                    nn.init.constant_(m.bn2.weight, 0)

    def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
        norm_layer = self._norm_layer
        downsample = None
        previous_dilation = self.dilation
        if dilate:
            self.dilation *= stride
            stride = 1
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(conv1x1(self.inplanes, planes * block.expansion, stride),
                                       norm_layer(planes * block.expansion))
        layers = [block(self.inplanes, planes, stride, downsample, self.groups, self.base_width, previous_dilation,
                        norm_layer)]
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes, groups=self.groups, base_width=self.base_width,
                                dilation=self.dilation, norm_layer=norm_layer))
        return nn.Sequential(*layers)

    def _forward_impl(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(x)

    def forward(self, x):
        return self._forward_impl(x)


def _resnet(block, layers, weights, progress, **kwargs):
    if weights is not None:
        _ovewrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
    return load_weights(ResNet(block, layers, **kwargs), weights, progress)


_COMMON_META = {"min_size": (1, 1), "categories": _IMAGENET_CATEGORIES,
                "recipe": "https://github.com/pytorch/vision/tree/main/references/classification#resnet"}


def _weights(file, num_params, acc1, acc5, ops, file_size):
    return Weights(url=f"https://download.pytorch.org/models/{file}",
                   transforms=partial(ImageClassification, crop_size=224),
                   meta={**_COMMON_META, "num_params": num_params,
                         "_metrics": {"ImageNet-1K": {"acc@1": acc1, "acc@5": acc5}}, "_ops": ops,
                         "_file_size": file_size})


class ResNet18_Weights(WeightsEnum):
    IMAGENET1K_V1 = _weights("resnet18-f37072fd.pth", 11689512, 69.758, 89.078, 1.814, 44.661)
    DEFAULT = IMAGENET1K_V1


class ResNet34_Weights(WeightsEnum):
    IMAGENET1K_V1 = _weights("resnet34-b627a593.pth", 21797672, 73.314, 91.42, 3.664, 83.275)
    DEFAULT = IMAGENET1K_V1


@model_builder(ResNet18_Weights, ResNet18_Weights.IMAGENET1K_V1)
def resnet18(*, weights=None, progress=True, **kwargs):
    """ResNet-18 (BasicBlock, [2, 2, 2, 2]); ``weights=ResNet18_Weights.DEFAULT`` loads the ImageNet weights."""
    return _resnet(BasicBlock, [2, 2, 2, 2], weights, progress, **kwargs)


@model_builder(ResNet34_Weights, ResNet34_Weights.IMAGENET1K_V1)
def resnet34(*, weights=None, progress=True, **kwargs):
    """ResNet-34 (BasicBlock, [3, 4, 6, 3]); ``weights=ResNet34_Weights.DEFAULT`` loads the ImageNet weights."""
    return _resnet(BasicBlock, [3, 4, 6, 3], weights, progress, **kwargs)
