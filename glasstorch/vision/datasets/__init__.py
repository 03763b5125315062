"""torchvision.datasets: MNIST, FashionMNIST, CIFAR10/100, ImageFolder/DatasetFolder and FakeData, reading the
standard files under `root` and fetching them with ``download=True`` from torchvision's locations."""
from .cifar import CIFAR10, CIFAR100  # noqa: F401
from .fakedata import FakeData  # noqa: F401
from .folder import DatasetFolder, ImageFolder  # noqa: F401
from .mnist import MNIST, FashionMNIST  # noqa: F401
from .vision import VisionDataset  # noqa: F401

__all__ = ["CIFAR10", "CIFAR100", "DatasetFolder", "FakeData", "FashionMNIST", "ImageFolder", "MNIST", "VisionDataset"]
