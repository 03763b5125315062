"""The books' runner's stand-in data (tools/books_data.py): each archive holds the files d2l's readers open,
and glasstorch.vision reads its images as torchvision does (the runs under both frameworks read them)."""
import io
import os
import sys
import tarfile
import zipfile

import pytest

pytest.importorskip("PIL.Image")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
import books_data  # noqa: E402

import glasstorch  # noqa: E402
from glasstorch.vision import datasets, io as vision_io  # noqa: E402


def members(path):
    if path.endswith(".zip"):
        with zipfile.ZipFile(path) as z:
            return set(z.namelist())
    with tarfile.open(path) as t:
        return set(t.getnames())


def test_kaggle_and_classification_archives_hold_what_the_book_reads(tmp_path):
    books_data.make_kaggle_cifar10_tiny(str(tmp_path))
    names = members(str(tmp_path / "kaggle_cifar10_tiny.zip"))
    with zipfile.ZipFile(tmp_path / "kaggle_cifar10_tiny.zip") as z:
        labels = z.read("kaggle_cifar10_tiny/trainLabels.csv").decode().splitlines()
    assert labels[0] == "id,label" and len(labels) == 401     # 40 per class: enough batches (docstring)
    # every labelled id has its image (d2l's reorg_train_valid copies train/<id>.png by the csv's label)
    assert all(f"kaggle_cifar10_tiny/train/{line.split(',')[0]}.png" in names for line in labels[1:])
    books_data.make_kaggle_dog_tiny(str(tmp_path))
    with zipfile.ZipFile(tmp_path / "kaggle_dog_tiny.zip") as z:
        rows = z.read("kaggle_dog_tiny/labels.csv").decode().splitlines()
        assert all(f"kaggle_dog_tiny/train/{row.split(',')[0]}.jpg" in z.namelist() for row in rows[1:])
    # d2l's reorg_train_valid keeps floor(0.1 * the smallest breed's count) per breed for validation;
    # the section's loaders drop the last partial batch of 32: one validation batch, five training ones
    breeds = [row.split(",")[1] for row in rows[1:]]
    n_valid = len(set(breeds)) * max(1, int(0.1 * min(breeds.count(b) for b in set(breeds))))
    assert n_valid >= 32 and (len(breeds) - n_valid) // 32 >= 5


def test_image_folder_and_read_image_read_the_stand_ins(tmp_path):
    books_data.make_hotdog(str(tmp_path))
    with zipfile.ZipFile(tmp_path / "hotdog.zip") as z:
        z.extractall(tmp_path)
    train = datasets.ImageFolder(str(tmp_path / "hotdog" / "train"))
    assert train.classes == ["hotdog", "not-hotdog"] and len(train) == 640   # five batches of 128
    # the default sizes: five training batches of 32 and one test batch (fcn's train_ch13, docstring)
    import inspect
    defaults = inspect.signature(books_data.make_voc2012).parameters
    assert defaults["n_train"].default // 32 >= 5 and defaults["n_val"].default >= 32
    books_data.make_voc2012(str(tmp_path), n_train=2, n_val=1)
    with tarfile.open(tmp_path / "VOCtrainval_11-May-2012.tar") as t:
        t.extractall(tmp_path)
    voc = tmp_path / "VOCdevkit" / "VOC2012"
    name = (voc / "ImageSets" / "Segmentation" / "train.txt").read_text().split()[0]
    image = vision_io.read_image(str(voc / "JPEGImages" / f"{name}.jpg"))
    label = vision_io.read_image(str(voc / "SegmentationClass" / f"{name}.png"), vision_io.ImageReadMode.RGB)
    assert image.shape == label.shape == (3, 330, 490) and label.dtype == glasstorch.uint8
    # the labels are VOC colours (d2l maps them to classes through its colormap)
    colours = {tuple(c) for c in label.permute(1, 2, 0).reshape(-1, 3).tolist()}
    assert (0, 0, 0) in colours and colours <= set(books_data.VOC_COLORS)


def test_text_archives_hold_what_the_book_reads(tmp_path):
    books_data.make_aclimdb(str(tmp_path), n_train=3, n_test=2)
    names = members(str(tmp_path / "aclImdb_v1.tar.gz"))
    assert {n.rsplit("/", 1)[0] for n in names} == {f"aclImdb/{s}/{l}" for s in ("train", "test") for l in ("pos", "neg")}
    books_data.make_snli(str(tmp_path), n_train=60, n_test=10)
    with zipfile.ZipFile(tmp_path / "snli_1.0.zip") as z:
        rows = [row.split("\t") for row in z.read("snli_1.0/snli_1.0_train.txt").decode().splitlines()[1:]]
    assert len(rows) == 60 and {row[0] for row in rows} == set(books_data.SNLI_LABELS) | {"-"}
    # d2l's read_snli strips the parse's parentheses: the words remain, in order
    assert rows[0][1].replace("(", "").replace(")", "").split() == rows[0][3].split()


def test_pretrained_standins_load_as_torchvision_checkpoints(tmp_path, monkeypatch):
    """The ImageNet stand-in loads through the hub cache (``pretrained=True``), strictly, as torchvision's."""
    import glasstorch
    from glasstorch.vision import models
    monkeypatch.setattr(books_data, "PRETRAINED_STANDINS", (("resnet18", "resnet18-f37072fd.pth"),))
    books_data.make_pretrained_standins(str(tmp_path))
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    model = models.resnet18(weights=models.ResNet18_Weights.IMAGENET1K_V1)
    saved = glasstorch.load(str(tmp_path / "hub" / "checkpoints" / "resnet18-f37072fd.pth"))
    assert glasstorch.equal(model.conv1.weight, saved["conv1.weight"])
    assert 0.5 <= float(model.bn1.running_var.min()) and float(model.bn1.running_var.max()) <= 1.5
