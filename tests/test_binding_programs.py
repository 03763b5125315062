"""A PyTorch program in the books' style, unchanged, run with `python -m glasstorch run`: torchvision's
FashionMNIST from the standard files and transforms, a DataLoader, a CNN, Step-by-Step's set_seed
(cudnn flags), a training loop, TensorBoard logging, a saved state_dict."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytest.importorskip("PIL")
pytest.importorskip("tensorboard")

PROGRAM = '''
import json, sys
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torch.utils.data import DataLoader
from torch.utils.tensorboard import SummaryWriter
from torchvision import transforms


def set_seed(seed=42):                                   # Step-by-Step's StepByStep.set_seed
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    torch.manual_seed(seed)
    np.random.seed(seed)


def load_data_fashion_mnist(batch_size, resize=None):    # d2l's, from chapter 3.5
    trans = [transforms.ToTensor()]
    if resize:
        trans.insert(0, transforms.Resize(resize))
    trans = transforms.Compose(trans)
    mnist_train = torchvision.datasets.FashionMNIST(root=sys.argv[1], train=True, transform=trans, download=False)
    mnist_test = torchvision.datasets.FashionMNIST(root=sys.argv[1], train=False, transform=trans, download=False)
    return (DataLoader(mnist_train, batch_size, shuffle=True, num_workers=2),
            DataLoader(mnist_test, batch_size, shuffle=False))


set_seed()
train_iter, test_iter = load_data_fashion_mnist(16, resize=14)
device = "cuda" if torch.cuda.is_available() else "cpu"
net = nn.Sequential(nn.Conv2d(1, 4, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                    nn.Flatten(), nn.Linear(4 * 7 * 7, 10)).to(device)
optimizer = torch.optim.SGD(net.parameters(), lr=0.5)
writer = SummaryWriter(sys.argv[2])
X, _ = next(iter(train_iter))
writer.add_graph(net, X)
losses = []
for epoch in range(3):
    for X, y in train_iter:
        loss = F.cross_entropy(net(X), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    writer.add_scalars("loss", {"training": losses[-1]}, epoch)
writer.add_images("batch", X[:4], 0)
writer.close()
with torch.no_grad():
    correct = sum((net(X).argmax(1) == y).sum().item() for X, y in test_iter)
torch.save(net.state_dict(), sys.argv[3])
print(json.dumps({"first": losses[0], "last": losses[-1], "correct": correct, "shape": list(X.shape),
                  "classes": train_iter.dataset.classes[:2], "version": torch.__version__}))
'''


def write_idx(path, array):
    header = bytes([0, 0, 0x08, array.ndim]) + b"".join(int(n).to_bytes(4, "big") for n in array.shape)
    path.write_bytes(header + array.astype(np.uint8).tobytes())


def test_books_style_program_runs_unchanged(tmp_path):
    rng = np.random.default_rng(0)
    raw = tmp_path / "data" / "FashionMNIST" / "raw"
    raw.mkdir(parents=True)
    for split, n in (("train", 96), ("t10k", 32)):
        labels = rng.integers(0, 10, n)
        # learnable images: a bright band whose row is the label
        images = rng.integers(0, 40, (n, 28, 28))
        for i, label in enumerate(labels):
            images[i, 2 * label + 4:2 * label + 7, :] = 255
        write_idx(raw / f"{split}-images-idx3-ubyte", images)
        write_idx(raw / f"{split}-labels-idx1-ubyte", labels)
    (tmp_path / "train.py").write_text(textwrap.dedent(PROGRAM))
    out = subprocess.run([sys.executable, "-m", "glasstorch", "run", "train.py", str(tmp_path / "data"),
                          str(tmp_path / "runs"), str(tmp_path / "net.pt")], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    facts = json.loads(out.stdout.strip().splitlines()[-1])
    assert facts["shape"] == [16, 1, 14, 14] and facts["classes"] == ["T-shirt/top", "Trouser"]
    assert facts["last"] < facts["first"] / 2 and facts["correct"] >= 24       # it learns the bands
    torch = pytest.importorskip("torch")                                        # real torch reads the result
    state = torch.load(tmp_path / "net.pt")
    assert list(state) == ["0.weight", "0.bias", "4.weight", "4.bias"]
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    events = EventAccumulator(str(tmp_path / "runs" / "loss_training"))
    events.Reload()
    assert len(events.Scalars("loss")) == 3


def _first_python_block(markdown):
    text = markdown.split("```python\n", 1)[1]
    return text.split("```", 1)[0]


def test_the_data_guide_example_runs_under_the_binding(tmp_path):
    """docs/data.md's opening example is a `from torch...` program: true under the binding."""
    docs = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs")
    with open(os.path.join(docs, "data.md")) as f:
        example = _first_python_block(f.read())
    assert example.startswith("import torch\nfrom torch.utils.data import")
    (tmp_path / "example.py").write_text(example + "\nprint(tuple(images.shape), tuple(labels.shape))\n")
    out = subprocess.run([sys.executable, "-m", "glasstorch", "run", "example.py"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "(64, 1, 8, 8) (64,)"


def test_the_readme_binding_example_runs(tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "README.md")) as f:
        blocks = [b.split("```", 1)[0] for b in f.read().split("```python\n")[1:]]
    example = next(b for b in blocks if "glasstorch.as_torch()" in b)
    check = "\nassert torch is glasstorch and torchvision is glasstorch.vision and F is glasstorch.nn.functional\n"
    out = subprocess.run([sys.executable, "-c", example + check], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
