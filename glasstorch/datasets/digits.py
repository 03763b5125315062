"""The 8x8 handwritten digits (UCI ML hand-written digits, as shipped by scikit-learn).

1,797 grey-scale images of the digits 0-9, 8x8 pixels, each pixel a count 0..16
(how many of the 16 pixels of a 4x4 block of the original 32x32 bitmap were
ink).  Small enough to train an MLP or a small CNN in seconds on a CPU, real
enough to overfit.  Provenance and licence: glasstorch/data/README.md.

    load_digits()    -> (images uint8 (1797, 8, 8), values 0..16; labels int64 (1797,))
    Digits(train=True)   a Dataset of (tensor 1x8x8 float32 in [0, 1], int label):
                         the first 1,500 images for training, the last 297 for testing

>>> images, labels = load_digits()
>>> images.shape, images.dtype, labels.shape, labels.dtype
((1797, 8, 8), dtype('uint8'), (1797,), dtype('int64'))
>>> train, test = Digits(train=True), Digits(train=False)
>>> len(train), len(test)
(1500, 297)
>>> x, y = train[0]
>>> tuple(x.shape), x.dtype, y
((1, 8, 8), torch.float32, 0)
"""

import os

import numpy as np

import glasstorch
from glasstorch.utils.data import Dataset

__all__ = ["Digits", "load_digits"]

_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "digits.npz")

NUM_TEST = 297
"""The last 297 images are the test split (a fixed, deterministic split; the
classes are interleaved 0, 1, ..., 9, 0, 1, ..., so both splits are balanced)."""

PIXEL_MAX = 16


def load_digits():
    """The raw arrays: images uint8 (1797, 8, 8) with values 0..16, labels int64 (1797,).

    numpy arrays rather than tensors: this is the file's content, as
    ``sklearn.datasets.load_digits().images`` / ``.target`` give it (there as float64).
    """
    with np.load(_PATH) as f:
        return f["images"], f["labels"]


class Digits(Dataset):
    """The digits as a map-style dataset, in the shape torchvision's MNIST has.

    Args:
        train (bool): the first 1,500 images (True) or the last 297 (False).
        transform: applied to each image tensor (1x8x8 float32 in [0, 1]).
        target_transform: applied to each label (an int).

    Attributes:
        data: uint8 tensor (N, 8, 8) of raw pixel counts 0..16
        targets: int64 tensor (N,)
        classes: the class names '0' .. '9'
    """

    classes = [str(d) for d in range(10)]

    def __init__(self, train=True, transform=None, target_transform=None):
        images, labels = load_digits()
        split = slice(None, -NUM_TEST) if train else slice(-NUM_TEST, None)
        images, labels = images[split], labels[split]
        self.train = train
        self.transform = transform
        self.target_transform = target_transform
        self.data = glasstorch.from_numpy(np.ascontiguousarray(images))
        self.targets = glasstorch.from_numpy(np.ascontiguousarray(labels))
        # Scaled once here, so __getitem__ only copies one image out.
        self._pixels = (images.astype(np.float32) / PIXEL_MAX)[:, None, :, :]
        self._labels = labels.tolist()

    def __len__(self):
        return len(self._labels)

    def __getitem__(self, index):
        # A copy: a tensor the caller may modify in place must not alias the dataset.
        image = glasstorch.from_numpy(self._pixels[index].copy())
        target = self._labels[index]
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return image, target

    def __repr__(self):
        split = "Train" if self.train else "Test"
        return f"Dataset Digits\n    Number of datapoints: {len(self)}\n    Split: {split}"
