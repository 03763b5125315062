"""The preprocessing that goes with pretrained weights (``weights.transforms()``)."""
import glasstorch as torch
from glasstorch import nn, Tensor

from . import functional as F
from .functional import InterpolationMode


class ImageClassification(nn.Module):
    """resize the shorter side to `resize_size`, center-crop `crop_size`, scale to [0, 1], normalize."""

    def __init__(self, *, crop_size, resize_size=256, mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225),
                 interpolation=InterpolationMode.BILINEAR, antialias=True):
        super().__init__()
        self.crop_size = [crop_size]
        self.resize_size = [resize_size]
        self.mean = list(mean)
        self.std = list(std)
        self.interpolation = interpolation
        self.antialias = antialias

    def forward(self, img):
        img = F.resize(img, self.resize_size, interpolation=self.interpolation, antialias=self.antialias)
        img = F.center_crop(img, self.crop_size)
        if not isinstance(img, Tensor):
            img = F.pil_to_tensor(img)
        img = F.convert_image_dtype(img, torch.float)
        return F.normalize(img, mean=self.mean, std=self.std)

    def __repr__(self):
        return (f"{type(self).__name__}(\n    crop_size={self.crop_size}\n    resize_size={self.resize_size}\n"
                f"    mean={self.mean}\n    std={self.std}\n    interpolation={self.interpolation}\n)")
