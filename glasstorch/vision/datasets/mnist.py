"""MNIST and FashionMNIST: the IDX files under ``root/<ClassName>/raw`` (``train-images-idx3-ubyte``,
...), fetched from the mirrors with ``download=True`` and checked against their MD5 sums.

A sample is ``(PIL image 'L' 28x28, int label)`` as in torchvision (so it needs Pillow; ``.data`` is the
(N, 28, 28) uint8 tensor and ``.targets`` the int64 labels, which need nothing). ``mirrors`` and
``resources`` are class attributes, so a subclass or an assignment can point them elsewhere.
"""
import os
import warnings
from urllib.error import URLError

import numpy as np

import glasstorch as torch

from .. import _pil
from .utils import check_integrity, download_and_extract_archive
from .vision import VisionDataset

__all__ = ["MNIST", "FashionMNIST", "read_image_file", "read_label_file"]


class MNIST(VisionDataset):
    """The MNIST handwritten digits: 60000 training and 10000 test images of 28x28, labels 0-9."""

    mirrors = ["https://ossci-datasets.s3.amazonaws.com/mnist/", "http://yann.lecun.com/exdb/mnist/"]
    resources = [
        ("train-images-idx3-ubyte.gz", "f68b3c2dcbeaaa9fbdd348bbdeb94873"),
        ("train-labels-idx1-ubyte.gz", "d53e105ee54ea40749a09fcbcd1e9432"),
        ("t10k-images-idx3-ubyte.gz", "9fb629c4189551a2d022fa330f9573f3"),
        ("t10k-labels-idx1-ubyte.gz", "ec29112dd5afa0611ce80d1b7f02629c"),
    ]
    training_file = "training.pt"
    test_file = "test.pt"
    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six", "7 - seven",
               "8 - eight", "9 - nine"]

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        if self._check_legacy_exist():
            self.data, self.targets = self._load_legacy_data()
            return
        if download:
            self.download()
        if not self._check_exists():
            raise RuntimeError("Dataset not found. You can use download=True to download it")
        self.data, self.targets = self._load_data()

    @property
    def train_labels(self):
        warnings.warn("train_labels has been renamed targets")
        return self.targets

    @property
    def test_labels(self):
        warnings.warn("test_labels has been renamed targets")
        return self.targets

    @property
    def train_data(self):
        warnings.warn("train_data has been renamed data")
        return self.data

    @property
    def test_data(self):
        warnings.warn("test_data has been renamed data")
        return self.data

    def _check_legacy_exist(self):
        """torchvision before 0.10 stored processed/training.pt and test.pt; they are still read."""
        if not os.path.exists(self.processed_folder):
            return False
        return all(check_integrity(os.path.join(self.processed_folder, file))
                   for file in (self.training_file, self.test_file))

    def _load_legacy_data(self):
        data_file = self.training_file if self.train else self.test_file
        return torch.load(os.path.join(self.processed_folder, data_file), weights_only=True)

    def _load_data(self):
        split = "train" if self.train else "t10k"
        data = read_image_file(os.path.join(self.raw_folder, f"{split}-images-idx3-ubyte"))
        targets = read_label_file(os.path.join(self.raw_folder, f"{split}-labels-idx1-ubyte"))
        return data, targets

    def __getitem__(self, index):
        img, target = self.data[index], int(self.targets[index])
        img = _pil.fromarray(img.numpy(), mode="L")
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return len(self.data)

    @property
    def raw_folder(self):
        return os.path.join(self.root, self.__class__.__name__, "raw")

    @property
    def processed_folder(self):
        return os.path.join(self.root, self.__class__.__name__, "processed")

    @property
    def class_to_idx(self):
        return {_class: i for i, _class in enumerate(self.classes)}

    def _check_exists(self):
        return all(check_integrity(os.path.join(self.raw_folder, os.path.splitext(os.path.basename(url))[0]))
                   for url, _ in self.resources)

    def download(self):
        """Fetch each resource from the first mirror that serves it with the right MD5, and unpack it."""
        if self._check_exists():
            return
        os.makedirs(self.raw_folder, exist_ok=True)
        for filename, md5 in self.resources:
            errors = []
            for mirror in self.mirrors:
                url = f"{mirror}{filename}"
                try:
                    download_and_extract_archive(url, download_root=self.raw_folder, filename=filename, md5=md5)
                except (RuntimeError, URLError) as e:
                    errors.append(e)
                    continue
                break
            else:
                s = f"Error downloading {filename}:\n"
                for mirror, err in zip(self.mirrors, errors):
                    s += f"Tried {mirror}, got:\n{str(err)}\n"
                raise RuntimeError(s)

    def extra_repr(self):
        return f"Split: {'Train' if self.train is True else 'Test'}"


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST: MNIST's format and sizes, ten kinds of clothing."""

    mirrors = ["http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"]
    resources = [
        ("train-images-idx3-ubyte.gz", "8d4fb7e6c68d591d4c3dfef9ec88bf0d"),
        ("train-labels-idx1-ubyte.gz", "25c81989df183df01b3e8a0aad5dffbe"),
        ("t10k-images-idx3-ubyte.gz", "bef4ecab320f06d8554ea6380940ec79"),
        ("t10k-labels-idx1-ubyte.gz", "bb300cfdad3c16e7a12a480ee83cd310"),
    ]
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]


# IDX ("SN3 pascalvincent") element types: the magic number's third byte
_IDX_TYPES = {8: np.uint8, 9: np.int8, 11: np.int16, 12: np.int32, 13: np.float32, 14: np.float64}


def read_sn3_pascalvincent_tensor(path, strict=True):
    """An IDX file -> tensor. Layout: 2 zero bytes, the element type, the number of dimensions, one
    big-endian int32 per dimension, then the elements, big-endian."""
    with open(path, "rb") as f:
        data = f.read()
    magic = int.from_bytes(data[0:4], "big")
    nd, ty = magic % 256, magic // 256
    if not (1 <= nd <= 3 and ty in _IDX_TYPES):
        raise ValueError(f"{path} is not an IDX file (magic number {magic:#010x})")
    shape = [int.from_bytes(data[4 * (i + 1):4 * (i + 2)], "big") for i in range(nd)]
    parsed = np.frombuffer(data, dtype=np.dtype(_IDX_TYPES[ty]).newbyteorder(">"), offset=4 * (nd + 1))
    if strict and parsed.shape[0] != np.prod(shape):
        raise ValueError(f"{path} holds {parsed.shape[0]} elements, its header says {shape}")
    return torch.from_numpy(parsed.astype(_IDX_TYPES[ty]).reshape(shape))


def read_label_file(path):
    x = read_sn3_pascalvincent_tensor(path, strict=False)
    if x.dtype != torch.uint8:
        raise TypeError(f"x should be of dtype torch.uint8 instead of {x.dtype}")
    if x.ndimension() != 1:
        raise ValueError(f"x should have 1 dimension instead of {x.ndimension()}")
    return x.long()


def read_image_file(path):
    x = read_sn3_pascalvincent_tensor(path, strict=False)
    if x.dtype != torch.uint8:
        raise TypeError(f"x should be of dtype torch.uint8 instead of {x.dtype}")
    if x.ndimension() != 3:
        raise ValueError(f"x should have 3 dimension instead of {x.ndimension()}")
    return x
