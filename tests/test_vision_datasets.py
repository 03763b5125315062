"""glasstorch.vision.datasets: the standard files under root, and download=True against a local HTTP
server that serves files these tests write (MNIST's gzipped IDX files, CIFAR-10's tar.gz of pickles),
with torchvision's mirror/resource class attributes pointed at it."""
import gzip
import hashlib
import http.server
import io
import os
import pickle
import subprocess
import sys
import tarfile
import threading

import numpy as np
import pytest

import glasstorch as torch
from glasstorch.utils.data import DataLoader
from glasstorch.vision import datasets, transforms

Image = pytest.importorskip("PIL.Image")


@pytest.fixture
def server(tmp_path):
    """An HTTP server on localhost serving tmp_path/www; yields (directory, base URL)."""
    www = tmp_path / "www"
    www.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(www), **kwargs)

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield www, f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()
    thread.join()


def md5(data):
    return hashlib.md5(data).hexdigest()


def idx_bytes(array):
    """An IDX file: two zero bytes, type 0x08 (uint8), the number of dimensions, big-endian sizes, data."""
    header = bytes([0, 0, 0x08, array.ndim]) + b"".join(int(n).to_bytes(4, "big") for n in array.shape)
    return header + array.astype(np.uint8).tobytes()


def write_mnist(www, subdir, rng):
    """Gzipped IDX files for a 6-image train and 4-image test split; returns (resources, arrays)."""
    (www / subdir).mkdir(parents=True)
    arrays = {"train-images-idx3-ubyte": rng.integers(0, 256, (6, 28, 28)),
              "train-labels-idx1-ubyte": rng.integers(0, 10, (6,)),
              "t10k-images-idx3-ubyte": rng.integers(0, 256, (4, 28, 28)),
              "t10k-labels-idx1-ubyte": rng.integers(0, 10, (4,))}
    resources = []
    for name, array in arrays.items():
        payload = gzip.compress(idx_bytes(array))
        (www / subdir / f"{name}.gz").write_bytes(payload)
        resources.append((f"{name}.gz", md5(payload)))
    return resources, arrays


@pytest.mark.parametrize("cls", [datasets.MNIST, datasets.FashionMNIST])
def test_mnist_downloads_from_the_first_mirror_that_works_and_reads_the_idx_files(cls, server, tmp_path,
                                                                                  monkeypatch):
    www, url = server
    resources, arrays = write_mnist(www, "mnist", np.random.default_rng(0))
    monkeypatch.setattr(cls, "mirrors", [url + "nowhere/", url + "mnist/"])    # the first one 404s
    monkeypatch.setattr(cls, "resources", resources)
    root = tmp_path / "data"
    train = cls(root=str(root), train=True, download=True, transform=transforms.ToTensor())
    test = cls(root=str(root), train=False)                                     # already there: no download
    raw = root / cls.__name__ / "raw"
    assert sorted(os.listdir(raw)) == sorted([r[0] for r in resources] + [r[0][:-3] for r in resources])
    assert len(train) == 6 and len(test) == 4
    assert train.data.dtype == torch.uint8 and tuple(train.data.shape) == (6, 28, 28)
    assert np.array_equal(train.data.numpy(), arrays["train-images-idx3-ubyte"])
    assert train.targets.dtype == torch.int64
    assert train.targets.tolist() == arrays["train-labels-idx1-ubyte"].tolist()
    image, label = test[2]
    assert image.mode == "L" and image.size == (28, 28) and isinstance(label, int)
    assert np.array_equal(np.asarray(image), arrays["t10k-images-idx3-ubyte"][2])
    x, y = train[1]
    assert x.shape == (1, 28, 28) and x.dtype == torch.float32
    assert torch.allclose(x[0] * 255, torch.from_numpy(arrays["train-images-idx3-ubyte"][1].astype(np.float32)))
    xb, yb = next(iter(DataLoader(train, batch_size=4)))
    assert tuple(xb.shape) == (4, 1, 28, 28) and yb.tolist() == arrays["train-labels-idx1-ubyte"][:4].tolist()
    assert repr(test) == (f"Dataset {cls.__name__}\n    Number of datapoints: 4\n    Root location: {root}\n"
                          f"    Split: Test")
    assert train.class_to_idx[train.classes[3]] == 3


def test_mnist_checksum_mismatch_and_missing_data(server, tmp_path, monkeypatch):
    www, url = server
    resources, _ = write_mnist(www, "mnist", np.random.default_rng(1))
    resources[0] = (resources[0][0], "0" * 32)                                  # a wrong MD5
    monkeypatch.setattr(datasets.MNIST, "mirrors", [url + "mnist/"])
    monkeypatch.setattr(datasets.MNIST, "resources", resources)
    with pytest.raises(RuntimeError) as info:
        datasets.MNIST(root=str(tmp_path), download=True)
    assert str(info.value).startswith(f"Error downloading train-images-idx3-ubyte.gz:\nTried {url}mnist/, got:\n"
                                      f"File not found or corrupted.")
    with pytest.raises(RuntimeError, match="Dataset not found. You can use download=True to download it"):
        datasets.MNIST(root=str(tmp_path / "empty"))


def write_cifar(www, rng):
    """A cifar-10-python.tar.gz holding 5 training batches of 2 images, a test batch of 3, the meta."""
    batches, digests = {}, {}
    for name, n in [(f"data_batch_{i}", 2) for i in range(1, 6)] + [("test_batch", 3)]:
        batches[name] = {"data": rng.integers(0, 256, (n, 3072)).astype(np.uint8),
                         "labels": rng.integers(0, 10, n).tolist(), "batch_label": name}
    classes = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]
    files = {name: pickle.dumps(batch, protocol=2) for name, batch in batches.items()}
    files["batches.meta"] = pickle.dumps({"label_names": classes, "num_vis": 3072}, protocol=2)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, payload in files.items():
            info = tarfile.TarInfo(f"cifar-10-batches-py/{name}")
            info.size = len(payload)
            tar.addfile(info, io.BytesIO(payload))
            digests[name] = md5(payload)
    (www / "cifar-10-python.tar.gz").write_bytes(buffer.getvalue())
    return batches, classes, digests, md5(buffer.getvalue())


def test_cifar10_downloads_the_archive_and_reads_the_batches(server, tmp_path, monkeypatch):
    www, url = server
    batches, classes, digests, archive_md5 = write_cifar(www, np.random.default_rng(2))
    monkeypatch.setattr(datasets.CIFAR10, "url", url + "cifar-10-python.tar.gz")
    monkeypatch.setattr(datasets.CIFAR10, "tgz_md5", archive_md5)
    monkeypatch.setattr(datasets.CIFAR10, "train_list", [[f"data_batch_{i}", digests[f"data_batch_{i}"]]
                                                         for i in range(1, 6)])
    monkeypatch.setattr(datasets.CIFAR10, "test_list", [["test_batch", digests["test_batch"]]])
    monkeypatch.setattr(datasets.CIFAR10, "meta", {"filename": "batches.meta", "key": "label_names",
                                                   "md5": digests["batches.meta"]})
    with pytest.raises(RuntimeError, match="Dataset not found or corrupted. You can use download=True"):
        datasets.CIFAR10(root=str(tmp_path))
    train = datasets.CIFAR10(root=str(tmp_path), train=True, download=True)
    test = datasets.CIFAR10(root=str(tmp_path), train=False)
    assert len(train) == 10 and len(test) == 3 and train.classes == classes and train.class_to_idx["cat"] == 3
    assert isinstance(train.data, np.ndarray) and train.data.shape == (10, 32, 32, 3)
    assert train.targets == sum((batches[f"data_batch_{i}"]["labels"] for i in range(1, 6)), [])
    image, label = test[1]
    expected = batches["test_batch"]["data"][1].reshape(3, 32, 32).transpose(1, 2, 0)
    assert image.mode == "RGB" and np.array_equal(np.asarray(image), expected)
    assert label == batches["test_batch"]["labels"][1]
    (tmp_path / "cifar-10-batches-py" / "data_batch_3").write_bytes(b"corrupted")
    with pytest.raises(RuntimeError, match="Dataset not found or corrupted"):
        datasets.CIFAR10(root=str(tmp_path))


def test_image_folder(tmp_path):
    rng = np.random.default_rng(3)
    pixels = {}
    for cls, names in {"dog": ["b.png", "a.png"], "cat": ["z.jpg", "sub/y.png"], "bird": ["c.bmp"]}.items():
        for name in names:
            path = tmp_path / cls / name
            path.parent.mkdir(parents=True, exist_ok=True)
            array = rng.integers(0, 256, (5, 7, 3)).astype(np.uint8)
            Image.fromarray(array).save(path)
            pixels[str(path)] = array
    (tmp_path / "dog" / "notes.txt").write_text("not an image")
    folder = datasets.ImageFolder(str(tmp_path), transform=transforms.ToTensor())
    assert folder.classes == ["bird", "cat", "dog"] and folder.class_to_idx == {"bird": 0, "cat": 1, "dog": 2}
    assert [os.path.relpath(p, tmp_path) for p, _ in folder.samples] == [
        "bird/c.bmp", "cat/z.jpg", "cat/sub/y.png", "dog/a.png", "dog/b.png"]
    assert folder.targets == [0, 1, 1, 2, 2] and folder.imgs is folder.samples
    x, y = folder[3]
    assert y == 2 and tuple(x.shape) == (3, 5, 7)
    assert np.array_equal((x.numpy() * 255).round().astype(np.uint8).transpose(1, 2, 0), pixels[folder.samples[3][0]])
    raw = datasets.DatasetFolder(str(tmp_path), loader=lambda p: open(p, "rb").read(), extensions=(".txt",),
                                 allow_empty=True)
    assert len(raw) == 1 and raw[0] == (b"not an image", 2)
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="Found no valid file for the classes empty. Supported extensions "
                                                "are: .jpg, .jpeg"):
        datasets.ImageFolder(str(tmp_path))
    with pytest.raises(FileNotFoundError, match="Couldn't find any class folder in"):
        datasets.ImageFolder(str(tmp_path / "dog"))


def test_without_pillow_the_tensor_paths_work_and_the_pil_paths_say_how_to_get_it(tmp_path):
    script = """
import sys
sys.modules["PIL"] = None                       # as if Pillow were not installed
import numpy as np
import glasstorch
from glasstorch.vision import transforms, datasets, models, utils
from glasstorch.vision.transforms import v2
x = transforms.ToTensor()(np.zeros((4, 5, 3), np.uint8))
y = v2.Compose([v2.ToImage(), v2.ToDtype(glasstorch.float32, scale=True), v2.Resize(2)])(x)
assert tuple(y.shape) == (3, 2, 2)
for attempt in (lambda: transforms.ToPILImage()(x), lambda: utils.save_image(x, "a.png")):
    try:
        attempt()
    except ModuleNotFoundError as e:
        assert e.name == "PIL" and "pip install 'glasstorch[vision]'" in str(e), e
        print("refused:", e)
    else:
        raise AssertionError("no error without Pillow")
"""
    out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("refused:") == 2 and "needs Pillow" in out.stdout


def test_fake_data_as_torchvision_lays_it_out():
    """torchvision's FakeData (pytorch/examples' dcgan ``--dataset fake``): PIL images of image_size, an int
    label below num_classes, the same sample for the same index, the global generator left as it was."""
    pytest.importorskip("PIL")
    import glasstorch
    from glasstorch.vision import datasets, transforms
    raw = datasets.FakeData(size=3, image_size=(3, 6, 5), num_classes=4)
    image, label = raw[2]
    assert type(image).__name__.endswith("Image") and image.size == (5, 6) and image.mode == "RGB"
    assert isinstance(label, int) and 0 <= label < 4
    glasstorch.manual_seed(7)
    expected = glasstorch.rand(2)
    glasstorch.manual_seed(7)
    ds = datasets.FakeData(size=3, image_size=(1, 4, 4), transform=transforms.ToTensor(), random_offset=5)
    first, again = ds[0], ds[0]
    assert glasstorch.equal(first[0], again[0]) and first[1] == again[1] and first[0].shape == (1, 4, 4)
    assert glasstorch.equal(glasstorch.rand(2), expected)   # the generator's state was put back
    assert len(ds) == 3
    with pytest.raises(IndexError, match="FakeData index out of range"):
        ds[3]
