"""glasstorch.vision.models against torchvision's (tests/fixtures/vision_models.json, recorded by
tools/vision_reference.py): the same state_dict keys, shapes and dtypes in the same order, the same
parameter count and printed module, and the same logits under the same weights; and loading weights
from torch's hub cache."""
import json
import os
import warnings

import numpy as np
import pytest

import glasstorch as torch
from glasstorch.vision import models

from vision_models_spec import MODELS, model_input, model_weights

with open(os.path.join(os.path.dirname(__file__), "fixtures", "vision_models.json")) as _f:
    REFERENCE = json.load(_f)

# VGG's 100M-parameter classifier takes glasstorch tens of seconds to initialise, and filling AlexNet's 57M
# weights for the logits check takes ten, Inception v3's 24M truncated-normal draws as long: those are
# opt-in (--runslow)


def params(slow):
    return [pytest.param(name, marks=pytest.mark.slow) if name in slow else name for name in MODELS]


def build(name):
    num_classes, _ = MODELS[name]
    return getattr(models, name)(weights=None, num_classes=num_classes).eval()


def fill(model):
    """The spec's deterministic weights, written into `model`'s state."""
    with torch.no_grad():
        for key, value in model.state_dict().items():
            value.copy_(torch.from_numpy(model_weights(key, tuple(value.shape), str(value.dtype))))
    return model


@pytest.mark.parametrize("name", params(slow={"vgg11", "vgg16", "vgg11_bn", "inception_v3"}))
def test_layout_matches_torchvision(name):
    reference = REFERENCE[name]
    model = build(name)
    keys = [[key, list(value.shape), str(value.dtype).replace("torch.", "")]
            for key, value in model.state_dict().items()]
    assert keys == reference["keys"]
    assert sum(p.numel() for p in model.parameters()) == reference["parameters"]
    assert repr(model) == reference["repr"]


@pytest.mark.parametrize("name", params(slow={"vgg11", "vgg16", "vgg11_bn", "alexnet", "inception_v3"}))
def test_logits_match_torchvision_under_the_same_weights(name):
    reference = REFERENCE[name]
    model = fill(build(name))
    with torch.no_grad():
        logits = model(torch.from_numpy(model_input(MODELS[name][1]))).numpy()
    np.testing.assert_allclose(logits, np.array(reference["logits"]), rtol=2e-4, atol=2e-4)


def test_imagenet_builders_have_torchvisions_sizes():
    """1000 classes by default: the parameter counts torchvision's weights meta states (ResNets here;
    VGG and AlexNet are checked in the slow tests above through num_classes=10)."""
    for builder, weights in ((models.resnet18, models.ResNet18_Weights), (models.resnet34, models.ResNet34_Weights)):
        model = builder()
        assert sum(p.numel() for p in model.parameters()) == weights.DEFAULT.meta["num_params"]
        assert model.fc.out_features == len(weights.DEFAULT.meta["categories"]) == 1000


def test_weights_enums():
    w = models.ResNet18_Weights.DEFAULT
    assert w is models.ResNet18_Weights.IMAGENET1K_V1 and repr(w) == "ResNet18_Weights.IMAGENET1K_V1"
    assert w.url == "https://download.pytorch.org/models/resnet18-f37072fd.pth"
    assert w.meta["categories"][:3] == ["tench", "goldfish", "great white shark"]
    assert models.ResNet18_Weights.verify("IMAGENET1K_V1") is w
    assert models.get_weight("VGG16_Weights.IMAGENET1K_V1").url.endswith("vgg16-397923af.pth")
    assert models.get_model_weights("alexnet") is models.AlexNet_Weights
    assert set(models.list_models()) >= {"alexnet", "vgg11", "vgg16", "resnet18", "resnet34"}
    with pytest.raises(TypeError, match="expected ResNet18_Weights but received AlexNet_Weights"):
        models.resnet18(weights=models.AlexNet_Weights.DEFAULT)
    preprocess = w.transforms()
    assert repr(preprocess) == ("ImageClassification(\n    crop_size=[224]\n    resize_size=[256]\n"
                                "    mean=[0.485, 0.456, 0.406]\n    std=[0.229, 0.224, 0.225]\n"
                                "    interpolation=InterpolationMode.BILINEAR\n)")
    out = preprocess(torch.randint(0, 256, (3, 300, 260), dtype=torch.uint8))
    assert tuple(out.shape) == (3, 224, 224) and out.dtype == torch.float32


def test_requested_weights_load_from_torchs_hub_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    checkpoints = tmp_path / "hub" / "checkpoints"
    with pytest.raises(FileNotFoundError) as info:
        models.resnet18(weights=models.ResNet18_Weights.DEFAULT)
    message = str(info.value)
    assert "resnet18-f37072fd.pth" in message and str(checkpoints) in message
    assert "load_state_dict_from_url('https://download.pytorch.org/models/resnet18-f37072fd.pth')" in message
    saved = fill(models.resnet18())
    checkpoints.mkdir(parents=True)
    torch.save(saved.state_dict(), checkpoints / "resnet18-f37072fd.pth")
    loaded = models.resnet18(weights="IMAGENET1K_V1")
    for (key, a), (_, b) in zip(saved.state_dict().items(), loaded.state_dict().items()):
        assert torch.equal(a, b), key
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        legacy = models.resnet18(pretrained=True)
    assert torch.equal(legacy.fc.weight, saved.fc.weight)
    assert any("'pretrained' is deprecated" in str(w.message) for w in caught)


def test_resnet_trains_a_step():
    model = models.resnet18(num_classes=3)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(4, 3, 32, 32), torch.tensor([0, 1, 2, 0])
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    assert all(p.grad is not None for p in model.parameters())
    optimizer.step()
    assert torch.nn.functional.cross_entropy(model(x), y).item() != loss.item()
