"""glasstorch.vision.transforms (v1 and v2) and utils.make_grid against real torchvision's results,
recorded by tools/vision_reference.py into tests/fixtures/vision_transforms.* (torchvision 0.29.1 on
torch 2.14.1, x86-64 with AVX2); plus the behaviour that needs no fixture (v2's sample handling,
random transforms, errors)."""
import json
import os
import types

import numpy as np
import pytest

import glasstorch as torch
from glasstorch.vision import transforms as T, utils
from glasstorch.vision.transforms import functional as F, v2
from glasstorch.vision.transforms.v2 import functional as F2
from glasstorch.vision import tv_tensors

import vision_cases

Image = pytest.importorskip("PIL.Image")

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
with open(os.path.join(FIXTURES, "vision_transforms.json")) as _f:
    REFERENCE = json.load(_f)
ARRAYS = np.load(os.path.join(FIXTURES, "vision_transforms.npz"))


@pytest.fixture(scope="module")
def lib():
    namespace = types.SimpleNamespace(torch=torch, T=T, F=F, v2=v2, F2=F2, Image=Image, utils=utils)
    namespace.x = vision_cases.Inputs(torch, Image)
    return namespace


# Where torch fuses a multiply-add (add with alpha, blends) or sums in another order, float32 results
# differ in the last bit; a uint8 result truncated from such a float can then differ by one level.
FLOAT_TOLERANCE = dict(rtol=2e-6, atol=2e-6)
UINT8_OFF_BY_ONE = ("adjust_", "rgb_to_grayscale", "Grayscale", "v1/resize")


@pytest.mark.parametrize("name", [name for name, _ in vision_cases.CASES])
def test_matches_torchvision(lib, name):
    case = dict(vision_cases.CASES)[name]
    array, description = vision_cases.as_record(case(lib), Image, torch.Tensor)
    expected, expected_description = ARRAYS[name], REFERENCE["results"][name]
    assert description == expected_description
    assert array.shape == expected.shape and array.dtype == expected.dtype
    if array.dtype.kind == "f":
        np.testing.assert_allclose(array, expected, **FLOAT_TOLERANCE)
    elif any(key in name for key in UINT8_OFF_BY_ONE) and not description.startswith("PIL"):
        difference = np.abs(array.astype(int) - expected.astype(int))
        assert difference.max() <= 1 and (difference > 0).mean() < 0.02, (difference.max(), (difference > 0).mean())
    else:
        np.testing.assert_array_equal(array, expected)


@pytest.mark.parametrize("name", sorted(vision_cases.REPRS))
def test_repr_matches_torchvision(lib, name):
    assert repr(vision_cases.REPRS[name](lib)) == REFERENCE["reprs"][name]


def test_uint8_antialiased_resize_is_torchs_integer_kernel():
    """v2 resizes uint8 images in integers as torch's CPU kernel does: checked against real torch's
    interpolate over many sizes, where the fixture has a few."""
    real = pytest.importorskip("torch")
    from glasstorch.vision.transforms import _resize
    rng = np.random.default_rng(3)
    for (h, w), (oh, ow) in [((17, 23), (5, 9)), ((40, 31), (13, 29)), ((9, 9), (20, 15)), ((64, 48), (7, 5)),
                             ((10, 10), (10, 3)), ((224, 224), (37, 113))]:
        x = (rng.random((2, 3, h, w)) * 256).astype(np.uint8)
        expected = real.nn.functional.interpolate(real.from_numpy(x), size=(oh, ow), mode="bilinear",
                                                  antialias=True).numpy()
        np.testing.assert_array_equal(_resize.resize_antialiased(x, oh, ow), expected)
        for dtype in (np.float32, np.float64):
            xf = rng.random((1, 2, h, w)).astype(dtype)
            expected = real.nn.functional.interpolate(real.from_numpy(xf), size=(oh, ow), mode="bilinear",
                                                      antialias=True).numpy()
            np.testing.assert_allclose(_resize.resize_antialiased(xf, oh, ow), expected, rtol=1e-6, atol=1e-6)


# -- v2: a sample is more than an image ---------------------------------------------------------------------

def test_v2_transforms_images_and_passes_labels_through(lib):
    image = v2.ToImage()(lib.x.pil)
    assert isinstance(image, tv_tensors.Image) and image.dtype == torch.uint8 and tuple(image.shape) == (3, 11, 14)
    flipped, label = v2.RandomHorizontalFlip(p=1.0)(image, 3)
    assert label == 3 and isinstance(flipped, tv_tensors.Image)
    assert torch.equal(flipped, image.flip(-1))
    sample = {"image": image, "label": torch.tensor(7), "boxes": [1, 2]}
    out = v2.Resize(8)(sample)
    assert tuple(out["image"].shape) == (3, 8, 10) and out["label"].item() == 7 and out["boxes"] == [1, 2]
    # a plain tensor beside an Image is not an image: only the Image is transformed
    out_image, out_tensor = v2.CenterCrop(4)(image, torch.zeros(3, 11, 14))
    assert tuple(out_image.shape) == (3, 4, 4) and tuple(out_tensor.shape) == (3, 11, 14)
    # with no Image or PIL image, the first plain tensor is the image
    first, second = v2.CenterCrop(4)(torch.zeros(3, 11, 14), torch.zeros(3, 11, 14))
    assert tuple(first.shape) == (3, 4, 4) and tuple(second.shape) == (3, 11, 14)


def test_v2_same_random_parameters_for_every_image_in_a_sample(lib):
    for seed in range(5):
        torch.manual_seed(seed)
        a, b = v2.RandomCrop(6)(tv_tensors.Image(lib.x.u8), lib.x.pil)
        assert np.array_equal(a.numpy(), np.asarray(b).transpose(2, 0, 1))   # the same box from both
    image, plain = v2.RandomCrop(6)(lib.x.pil, lib.x.u8)
    assert image.size == (6, 6) and plain is lib.x.u8      # beside a PIL image, a plain tensor is not an image


def test_image_type_survives_v2_but_not_plain_ops(lib):
    image = tv_tensors.Image(lib.x.u8)
    assert isinstance(F2.resize(image, [5, 6]), tv_tensors.Image)
    assert isinstance(F2.adjust_brightness(image, 1.2), tv_tensors.Image)
    assert type(image + 1) is torch.Tensor and type(v2.ToPureTensor()(image)) is torch.Tensor
    assert tuple(tv_tensors.Image(torch.zeros(4, 5)).shape) == (1, 4, 5)
    assert repr(tv_tensors.Image(torch.zeros(1, 1, 2))).startswith("Image([[[0., 0.]]]")
    assert isinstance(tv_tensors.Image(lib.x.pil), tv_tensors.Image)


def test_v2_normalize_refuses_pil_and_totensor_warns(lib):
    with pytest.raises(TypeError, match="does not support PIL images"):
        v2.Normalize([0.5], [0.5])(lib.x.pil)
    with pytest.warns(UserWarning, match="The transform `ToTensor\\(\\)` is deprecated"):
        v2.ToTensor()


# -- randomness --------------------------------------------------------------------------------------------

def test_random_transforms_are_seeded_by_manual_seed_and_vary(lib):
    pipeline = T.Compose([T.RandomResizedCrop(8), T.RandomHorizontalFlip(), T.ColorJitter(0.4, 0.4, 0.4, 0.1)])
    torch.manual_seed(1)
    first = [pipeline(lib.x.f32) for _ in range(4)]
    torch.manual_seed(1)
    again = [pipeline(lib.x.f32) for _ in range(4)]
    assert all(torch.equal(a, b) for a, b in zip(first, again))
    assert not all(torch.equal(first[0], other) for other in first[1:])
    boxes = set()
    for _ in range(50):
        top, left, h, w = T.RandomResizedCrop.get_params(lib.x.f32, (0.08, 1.0), (3 / 4, 4 / 3))
        assert 0 <= top and 0 <= left and top + h <= 11 and left + w <= 14
        boxes.add((top, left, h, w))
    assert len(boxes) > 10
    flips = sum(torch.equal(T.RandomHorizontalFlip(0.5)(lib.x.u8), lib.x.u8.flip(-1)) for _ in range(200))
    assert 70 < flips < 130


def test_random_crop_pads_and_crops(lib):
    out = T.RandomCrop(16, pad_if_needed=True)(lib.x.u8)
    assert tuple(out.shape) == (3, 16, 16)
    with pytest.raises(ValueError, match="Required crop size \\(20, 20\\) is larger than input image size"):
        T.RandomCrop(20)(lib.x.u8)
    assert tuple(v2.RandomCrop(16, pad_if_needed=True)(lib.x.u8).shape) == (3, 16, 16)


# -- errors, in torchvision's words ------------------------------------------------------------------------

def test_errors(lib):
    with pytest.raises(TypeError, match="pic should be PIL Image or ndarray. Got"):
        F.to_tensor([1, 2])
    with pytest.raises(TypeError, match="Input tensor should be a float tensor. Got torch.uint8"):
        F.normalize(lib.x.u8, [0.5], [0.5])
    with pytest.raises(ValueError, match="std evaluated to zero"):
        F.normalize(lib.x.f32, [0.5], [0.0])
    with pytest.raises(ValueError, match="hue_factor \\(0.7\\) is not in \\[-0.5, 0.5\\]"):
        F.adjust_hue(lib.x.f32, 0.7)
    with pytest.raises(ValueError, match="brightness_factor \\(-1\\) is not non-negative"):
        F.adjust_brightness(lib.x.f32, -1)
    with pytest.raises(ValueError, match="Padding mode should be either constant, edge, reflect or symmetric"):
        T.Pad(1, padding_mode="wrap")
    with pytest.raises(TypeError, match="Argument lambd should be callable, got 'int'"):
        T.Lambda(3)
    with pytest.raises(ValueError, match="If size is a sequence, it should have 1 or 2 values"):
        T.Resize([1, 2, 3])
    with pytest.raises(TypeError, match="Input image tensor permitted channel values are \\[1, 3\\], but found 4"):
        F.adjust_saturation(torch.zeros(4, 5, 5), 0.5)
    with pytest.raises(TypeError, match="Functional F.normalize supports inputs of type"):
        F2.normalize(lib.x.pil, [0.5], [0.5])


def test_to_pil_image_round_trip(lib):
    assert np.array_equal(np.asarray(F.to_pil_image(lib.x.u8)), vision_cases.RGB)
    assert np.array_equal(F.pil_to_tensor(lib.x.pil).numpy(), lib.x.u8.numpy())
    assert F.to_pil_image(lib.x.u8_gray).mode == "L"


def test_v2_to_pil_image_is_v1s_on_a_sample(lib):
    """v2.ToPILImage converts the images of a sample as v1's ToPILImage does, labels passed through, and
    a v2 pipeline can go PIL -> tensor again (torchvision's v2.ToPILImage is v1's to_pil_image)."""
    image, label = v2.ToPILImage()(tv_tensors.Image(lib.x.u8), 3)
    assert isinstance(image, Image.Image) and label == 3 and repr(v2.ToPILImage()) == "ToPILImage()"
    assert np.array_equal(np.asarray(image), np.asarray(T.ToPILImage()(lib.x.u8)))
    assert np.array_equal(np.asarray(image), vision_cases.RGB)
    assert v2.ToPILImage()(lib.x.u8_gray).mode == T.ToPILImage()(lib.x.u8_gray).mode == "L"
    back = v2.Compose([v2.ToPILImage(), v2.ToImage(), v2.ToDtype(torch.uint8)])(lib.x.u8)
    assert isinstance(back, tv_tensors.Image) and torch.equal(back.as_subclass(torch.Tensor), lib.x.u8)


def test_save_image_writes_what_make_grid_shows(lib, tmp_path):
    path = tmp_path / "grid.png"
    utils.save_image(lib.x.batch, path, nrow=1)
    saved = np.asarray(Image.open(path))
    grid = utils.make_grid(lib.x.batch, nrow=1)
    assert saved.shape == (grid.shape[1], grid.shape[2], 3)
    expected = (grid.numpy() * 255 + 0.5).clip(0, 255).astype(np.uint8).transpose(1, 2, 0)
    assert np.array_equal(saved, expected)


def test_read_image(tmp_path):
    from glasstorch.vision import io
    rgba = np.random.default_rng(5).integers(0, 256, (6, 7, 4)).astype(np.uint8)
    Image.fromarray(rgba, "RGBA").save(tmp_path / "a.png")
    unchanged = io.read_image(str(tmp_path / "a.png"))
    assert unchanged.dtype == torch.uint8 and np.array_equal(unchanged.numpy(), rgba.transpose(2, 0, 1))
    rgb = io.read_image(str(tmp_path / "a.png"), mode=io.image.ImageReadMode.RGB)
    assert np.array_equal(rgb.numpy(), rgba[:, :, :3].transpose(2, 0, 1))
    assert tuple(io.decode_image(io.read_file(str(tmp_path / "a.png")), io.ImageReadMode.GRAY).shape) == (1, 6, 7)


def test_tensor_resize_offers_bilinear_and_nearest_only(lib):
    """A documented difference (README): bicubic and Pillow's filters need a PIL image."""
    with pytest.raises(NotImplementedError, match="'bicubic' interpolation"):
        F.resize(lib.x.f32, [5, 6], interpolation=T.InterpolationMode.BICUBIC)
    assert F.resize(lib.x.pil, [5, 6], interpolation=T.InterpolationMode.BICUBIC).size == (6, 5)


def test_antialiased_tensor_resize_is_outside_autograd(lib):
    """A documented difference (docs/binding.md): torch differentiates through it, glasstorch does not."""
    x = lib.x.f32.clone().requires_grad_()
    assert not F.resize(x, [5, 6]).requires_grad
    assert F.resize(x, [5, 6], antialias=False).requires_grad      # plain bilinear is glasstorch's interpolate


def test_tv_tensor_takes_part_in_torch_function_as_torchvisions():
    """torchvision's TVTensor.__torch_function__ (torchvision/tv_tensors/_tv_tensor.py; torchvision is
    not a test dependency, its documented rule is written down here): an op on a TVTensor gives a
    plain Tensor; clone, to, detach, requires_grad_ and pin_memory called on one keep its type (and
    its history); an in-place op hands back a plain Tensor; ``plain.to(image)`` is plain."""
    import glasstorch
    from glasstorch.vision import tv_tensors
    img = tv_tensors.Image(glasstorch.ones(3, 2, 2)).requires_grad_()
    assert type(img) is tv_tensors.Image
    for result in (img + 1, glasstorch.add(img, 1), img.sum(), img.flip(-1), glasstorch.ones(2).to(img)):
        assert type(result) is glasstorch.Tensor
    for result in (img.clone(), img.to(glasstorch.float64), img.detach(), img.requires_grad_()):
        assert type(result) is tv_tensors.Image
    kept = img.clone()
    assert type(kept.grad_fn).__name__ == "CloneBackward0"
    (kept * 2).sum().backward()
    assert img.grad.tolist() == [[[2.0, 2.0]] * 2] * 3
    mutated = img.detach().add_(1)
    assert type(mutated) is glasstorch.Tensor and mutated.sum().item() == 24.0
