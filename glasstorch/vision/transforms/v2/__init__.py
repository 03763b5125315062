"""torchvision.transforms.v2: transforms that take a whole sample (image, label, dicts...), keep
``tv_tensors.Image`` typed, and add ``ToImage``/``ToDtype`` as the replacement for ``ToTensor``::

    transform = v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True), v2.Normalize(mean, std)])
"""
from ..functional import InterpolationMode  # noqa: F401
from . import functional  # noqa: F401
from ._transform import Transform  # noqa: F401
from ._transforms import (CenterCrop, ColorJitter, Compose, ConvertImageDtype, Grayscale, Lambda, Normalize,  # noqa
                          Pad, PILToTensor, RandomApply, RandomCrop, RandomGrayscale, RandomHorizontalFlip,
                          RandomResizedCrop, RandomVerticalFlip, Resize, ToDtype, ToImage, ToPILImage, ToPureTensor,
                          ToTensor)
