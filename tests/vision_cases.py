"""Transform calls run under real torchvision (tools/vision_reference.py, which records the results in
tests/fixtures/vision_transforms.npz) and under glasstorch.vision (tests/test_vision_transforms.py,
which compares). Each case is a function of a `lib` namespace: torch, transforms (T), T.functional (F),
transforms.v2 (v2), v2.functional (F2), PIL's Image module and the inputs built from the same arrays.
"""
import numpy as np

# The images every case starts from: odd sizes, so that centers and scales are not round.
_rng = np.random.default_rng(20240601)
RGB = (_rng.random((11, 14, 3)) * 256).astype(np.uint8)           # HWC, as PIL holds it
GRAY = (_rng.random((11, 14)) * 256).astype(np.uint8)
BATCH = _rng.random((2, 3, 8, 10)).astype(np.float32)               # for make_grid
TALL = (_rng.random((17, 8, 3)) * 256).astype(np.uint8)


class Inputs:
    """The inputs of the cases, as `lib`'s PIL images and tensors."""

    def __init__(self, torch, Image):
        self.pil = Image.fromarray(RGB)
        self.pil_gray = Image.fromarray(GRAY)
        self.pil_tall = Image.fromarray(TALL)
        self.u8 = torch.from_numpy(RGB.transpose(2, 0, 1).copy())
        self.u8_gray = torch.from_numpy(GRAY[None].copy())
        self.u8_tall = torch.from_numpy(TALL.transpose(2, 0, 1).copy())
        self.f32 = self.u8.float() / 255
        self.f64 = self.u8.double() / 255
        self.batch = torch.from_numpy(BATCH.copy())


def _each(name, fn, kinds=("pil", "u8", "f32")):
    """One case per input kind: fn(lib, image)."""
    return [(f"{name}/{kind}", lambda lib, kind=kind: fn(lib, getattr(lib.x, kind))) for kind in kinds]


def _v1_and_v2(name, fn, kinds=("pil", "u8", "f32")):
    """The same call through v1's functional (F) and v2's (F2)."""
    return (_each(f"v1/{name}", lambda lib, img: fn(lib.F, img, lib), kinds)
            + _each(f"v2/{name}", lambda lib, img: fn(lib.F2, img, lib), kinds))


CASES = []
add = CASES.extend

# conversions
add(_each("to_tensor", lambda lib, img: lib.F.to_tensor(img), ("pil", "pil_gray")))
add([("to_tensor/ndarray", lambda lib: lib.F.to_tensor(RGB)),
     ("to_tensor/ndarray_f32", lambda lib: lib.F.to_tensor(RGB.astype(np.float32) / 7))])
add(_each("pil_to_tensor", lambda lib, img: lib.F.pil_to_tensor(img), ("pil", "pil_gray")))
add(_each("to_pil_image", lambda lib, img: lib.F.to_pil_image(img), ("u8", "f32", "u8_gray")))
add([("to_pil_image/ndarray", lambda lib: lib.F.to_pil_image(RGB)),
     ("v2/to_image/pil", lambda lib: lib.F2.to_image(lib.x.pil)),
     ("v2/to_image/ndarray", lambda lib: lib.F2.to_image(RGB)),
     ("v2/to_dtype/u8_f32_scale", lambda lib: lib.F2.to_dtype(lib.x.u8, lib.torch.float32, scale=True)),
     ("v2/to_dtype/f32_u8_scale", lambda lib: lib.F2.to_dtype(lib.x.f32, lib.torch.uint8, scale=True)),
     ("v2/to_dtype/u8_f32", lambda lib: lib.F2.to_dtype(lib.x.u8, lib.torch.float32)),
     ("v1/convert_image_dtype/f32_u8", lambda lib: lib.F.convert_image_dtype(lib.x.f32, lib.torch.uint8)),
     ("v1/convert_image_dtype/u8_f64", lambda lib: lib.F.convert_image_dtype(lib.x.u8, lib.torch.float64)),
     ("v1/normalize/f32", lambda lib: lib.F.normalize(lib.x.f32, [0.485, 0.456, 0.406], [0.229, 0.224, 0.225])),
     ("v1/normalize/f64", lambda lib: lib.F.normalize(lib.x.f64, [0.5, 0.4, 0.3], [0.2, 0.25, 0.3])),
     ("v2/normalize/f32", lambda lib: lib.F2.normalize(lib.x.f32, [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]))])

# geometry
for size in (7, [9, 5], [15, 19], [11, 6]):
    add(_v1_and_v2(f"resize_{size}", lambda F, img, lib, size=size: F.resize(img, size)))
add(_v1_and_v2("resize_tall_6", lambda F, img, lib: F.resize(img, 6), ("pil_tall", "u8_tall")))
add(_v1_and_v2("resize_noaa", lambda F, img, lib: F.resize(img, [7, 9], antialias=False), ("f32",)))
add(_v1_and_v2("resize_nearest",
               lambda F, img, lib: F.resize(img, [7, 9], interpolation=lib.T.InterpolationMode.NEAREST)))
add(_v1_and_v2("resize_max_size", lambda F, img, lib: F.resize(img, 8, max_size=10), ("pil", "f32")))
add(_v1_and_v2("resize_f64", lambda F, img, lib: F.resize(img, [6, 8]), ("f64",)))
add(_v1_and_v2("center_crop_9", lambda F, img, lib: F.center_crop(img, 9)))
add(_v1_and_v2("center_crop_pad", lambda F, img, lib: F.center_crop(img, [14, 18])))
add(_v1_and_v2("crop", lambda F, img, lib: F.crop(img, 2, 3, 8, 9)))
add(_v1_and_v2("crop_outside", lambda F, img, lib: F.crop(img, -2, -1, 10, 20)))
add(_v1_and_v2("resized_crop", lambda F, img, lib: F.resized_crop(img, 1, 2, 9, 11, [6, 7])))
add(_v1_and_v2("pad_2", lambda F, img, lib: F.pad(img, 2)))
add(_v1_and_v2("pad_fill", lambda F, img, lib: F.pad(img, [1, 2], fill=5)))
add(_v1_and_v2("pad_edge", lambda F, img, lib: F.pad(img, [1, 2], padding_mode="edge")))
add(_v1_and_v2("pad_reflect", lambda F, img, lib: F.pad(img, [1, 2, 3, 4], padding_mode="reflect")))
add(_v1_and_v2("pad_symmetric", lambda F, img, lib: F.pad(img, 3, padding_mode="symmetric")))
add(_each("v2/pad_vector_fill", lambda lib, img: lib.F2.pad(img, [1, 2], fill=[10, 20, 30]), ("u8", "pil")))
add(_v1_and_v2("hflip", lambda F, img, lib: F.hflip(img)))
add(_v1_and_v2("vflip", lambda F, img, lib: F.vflip(img)))

# color
for name, factor in (("brightness", 1.3), ("brightness", 0.6), ("contrast", 1.4), ("contrast", 0.5),
                     ("saturation", 1.5), ("saturation", 0.3), ("hue", 0.2), ("hue", -0.3)):
    add(_v1_and_v2(f"adjust_{name}_{factor}",
                   lambda F, img, lib, name=name, factor=factor: getattr(F, f"adjust_{name}")(img, factor)))
add(_v1_and_v2("adjust_contrast_gray", lambda F, img, lib: F.adjust_contrast(img, 1.7), ("pil_gray", "u8_gray")))
add(_v1_and_v2("rgb_to_grayscale_1", lambda F, img, lib: F.rgb_to_grayscale(img)))
add(_v1_and_v2("rgb_to_grayscale_3", lambda F, img, lib: F.rgb_to_grayscale(img, num_output_channels=3)))

# transform classes with their randomness switched off, and pipelines
add(_each("v1/Compose", lambda lib, img: lib.T.Compose([lib.T.Resize(10), lib.T.CenterCrop(8), lib.T.ToTensor(),
                                                        lib.T.Normalize([0.5] * 3, [0.2] * 3)])(img), ("pil",)))
add(_each("v2/Compose", lambda lib, img: lib.v2.Compose([lib.v2.ToImage(), lib.v2.Resize(10), lib.v2.CenterCrop(8),
                                                         lib.v2.ToDtype(lib.torch.float32, scale=True),
                                                         lib.v2.Normalize([0.5] * 3, [0.2] * 3)])(img), ("pil", "u8")))
add(_each("v1/RandomHorizontalFlip_1", lambda lib, img: lib.T.RandomHorizontalFlip(1.0)(img)))
add(_each("v2/RandomHorizontalFlip_1", lambda lib, img: lib.v2.RandomHorizontalFlip(1.0)(img)))
add(_each("v1/Grayscale_3", lambda lib, img: lib.T.Grayscale(3)(img)))
add(_each("v2/Grayscale_3", lambda lib, img: lib.v2.Grayscale(3)(img)))
add(_each("v1/RandomCrop_full", lambda lib, img: lib.T.RandomCrop((11, 14))(img)))
add(_each("v1/Pad", lambda lib, img: lib.T.Pad([2, 1], padding_mode="reflect")(img)))
add(_each("v2/Pad", lambda lib, img: lib.v2.Pad([2, 1], fill=7)(img)))
add(_each("v1/ToPILImage", lambda lib, img: lib.T.ToPILImage()(img), ("f32", "u8")))
add(_each("v2/ToImage", lambda lib, img: lib.v2.ToImage()(img), ("pil", "u8")))

# utils
add([("make_grid/default", lambda lib: lib.utils.make_grid(lib.x.batch)),
     ("make_grid/nrow1_pad3", lambda lib: lib.utils.make_grid(lib.x.batch, nrow=1, padding=3, pad_value=0.5)),
     ("make_grid/normalize", lambda lib: lib.utils.make_grid(lib.x.batch * 4 - 1, normalize=True)),
     ("make_grid/range_each", lambda lib: lib.utils.make_grid(lib.x.batch * 4 - 1, normalize=True,
                                                              value_range=(-1, 2), scale_each=True)),
     ("make_grid/list_gray", lambda lib: lib.utils.make_grid([lib.x.batch[0, :1], lib.x.batch[1, 1:2]], nrow=4)),
     ("make_grid/single", lambda lib: lib.utils.make_grid(lib.x.batch[0]))])

REPRS = {
    "v1/Compose": lambda lib: lib.T.Compose([lib.T.Resize(10), lib.T.CenterCrop(8), lib.T.ToTensor(),
                                            lib.T.Normalize([0.5], [0.2])]),
    "v1/RandomResizedCrop": lambda lib: lib.T.RandomResizedCrop(32),
    "v1/ColorJitter": lambda lib: lib.T.ColorJitter(0.4, 0.4, 0.4, 0.1),
    "v1/RandomCrop": lambda lib: lib.T.RandomCrop(28, padding=4),
    "v1/Pad": lambda lib: lib.T.Pad(2, fill=1, padding_mode="edge"),
    "v1/RandomHorizontalFlip": lambda lib: lib.T.RandomHorizontalFlip(),
    "v1/Grayscale": lambda lib: lib.T.Grayscale(3),
    "v1/ToPILImage": lambda lib: lib.T.ToPILImage(),
    "v1/Lambda": lambda lib: lib.T.Lambda(abs),
    "v2/Compose": lambda lib: lib.v2.Compose([lib.v2.ToImage(), lib.v2.ToDtype(lib.torch.float32, scale=True),
                                             lib.v2.Normalize([0.5], [0.2])]),
    "v2/RandomResizedCrop": lambda lib: lib.v2.RandomResizedCrop(32),
    "v2/ColorJitter": lambda lib: lib.v2.ColorJitter(0.4, 0.4, 0.4, 0.1),
    "v2/RandomCrop": lambda lib: lib.v2.RandomCrop(28, padding=4),
    "v2/Resize": lambda lib: lib.v2.Resize((32, 30)),
    "v2/Pad": lambda lib: lib.v2.Pad([1, 2]),
    "v2/RandomHorizontalFlip": lambda lib: lib.v2.RandomHorizontalFlip(),
    "v2/Lambda": lambda lib: lib.v2.Lambda(abs),
}


def as_record(result, Image, Tensor):
    """A result as (array, description): a PIL image by its pixels and mode, a tensor by its values,
    dtype and type name."""
    if isinstance(result, Image.Image):
        return np.asarray(result).copy(), f"PIL {result.mode} {result.size}"
    if isinstance(result, Tensor):
        return result.detach().numpy().copy(), f"{type(result).__name__} {str(result.dtype).replace('torch.', '')}"
    raise TypeError(f"unexpected result {type(result)}")
