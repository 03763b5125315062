"""torchvision, the part the books use: ``transforms`` (and ``transforms.v2``), ``datasets`` (MNIST,
FashionMNIST, CIFAR10, ImageFolder), ``models`` (AlexNet, VGG, ResNet), ``utils`` (make_grid,
save_image), ``io.read_image``, ``tv_tensors.Image``, ``ops`` (box utilities, nms, roi_pool,
roi_align, sigmoid_focal_loss).

Under the binding (``python -m glasstorch run``, ``glasstorch.as_torch()``) this package *is*
``torchvision``: ``from torchvision import transforms`` gives ``glasstorch.vision.transforms``.
Pillow is optional (``pip install 'glasstorch[vision]'``): transforms on tensors work without it;
PIL images, the datasets that return them, and ``save_image`` need it, and say so when it is missing.
"""
from ..version import glasstorch as _glasstorch_release

# torchvision 0.28 pairs with torch 2.13, the API level glasstorch follows (docs/binding.md)
__version__ = f"0.28.0+glasstorch.{_glasstorch_release}"

_SUBMODULES = ("datasets", "io", "models", "ops", "transforms", "tv_tensors", "utils")
_image_backend = "PIL"


def get_image_backend():
    """The name of the package used to load images: always ``'PIL'`` here (no accimage)."""
    return _image_backend


def set_image_backend(backend):
    """Only ``'PIL'`` is available (torchvision's other choice, accimage, is not supported)."""
    if backend != "PIL":
        raise ValueError(f"Invalid backend '{backend}'. Options are 'PIL' and 'accimage'; glasstorch has only 'PIL'")


def __getattr__(name):
    if name in _SUBMODULES:
        import importlib
        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module 'glasstorch.vision' has no attribute '{name}'")


def __dir__():
    return sorted(set(globals()) | set(_SUBMODULES))
