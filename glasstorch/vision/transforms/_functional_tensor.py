"""The tensor side of torchvision.transforms.functional: images as tensors of shape (..., C, H, W).

Each function is torchvision's, written with the same tensor operations in the same order, so float
results agree to the last bit or two (where torch fuses a multiply-add, NumPy rounds twice).
"""
import glasstorch as torch
from glasstorch.nn.functional import pad as torch_pad, interpolate

from . import _resize


def _is_tensor_a_torch_image(x):
    return x.ndim >= 2


def _assert_image_tensor(img):
    if not _is_tensor_a_torch_image(img):
        raise TypeError("Tensor is not a torch image.")


def get_dimensions(img):
    _assert_image_tensor(img)
    channels = 1 if img.ndim == 2 else img.shape[-3]
    height, width = img.shape[-2:]
    return [channels, height, width]


def get_image_size(img):
    _assert_image_tensor(img)
    return [img.shape[-1], img.shape[-2]]


def get_image_num_channels(img):
    _assert_image_tensor(img)
    if img.ndim == 2:
        return 1
    return img.shape[-3]


_MAX_VALUES = {torch.uint8: 255, torch.int8: 127, torch.int16: 32767, torch.int32: 2147483647,
               torch.int64: 9223372036854775807}


def _max_value(dtype):
    """The value that means "full intensity" in an image of this dtype (1 for floating point)."""
    return _MAX_VALUES.get(dtype, 1)


def _assert_channels(img, permitted):
    c = get_dimensions(img)[0]
    if c not in permitted:
        raise TypeError(f"Input image tensor permitted channel values are {permitted}, but found {c}")


def convert_image_dtype(image, dtype=torch.float):
    """Change dtype and rescale: uint8 0..255 <-> float 0..1, and between integer ranges."""
    if image.dtype == dtype:
        return image
    if image.is_floating_point():
        if dtype.is_floating_point:
            return image.to(dtype)
        if (image.dtype == torch.float32 and dtype in (torch.int32, torch.int64)) or (
                image.dtype == torch.float64 and dtype == torch.int64):
            raise RuntimeError(f"The cast from {image.dtype} to {dtype} cannot be performed safely.")
        # (float * 255).to(uint8) would give 255 only for exactly 1.0; max + 1 - eps spreads the bins evenly
        eps = 1e-3
        max_val = float(_max_value(dtype))
        return image.mul(max_val + 1.0 - eps).to(dtype)
    input_max = float(_max_value(image.dtype))
    if dtype.is_floating_point:
        return image.to(dtype) / input_max
    output_max = float(_max_value(dtype))
    if input_max > output_max:
        factor = int((input_max + 1) // (output_max + 1))
        return torch.div(image, factor, rounding_mode="floor").to(dtype)
    factor = int((output_max + 1) // (input_max + 1))
    return image.to(dtype) * factor


def vflip(img):
    _assert_image_tensor(img)
    return img.flip(-2)


def hflip(img):
    _assert_image_tensor(img)
    return img.flip(-1)


def crop(img, top, left, height, width):
    """img[..., top:top+height, left:left+width], zero-padded where the box leaves the image."""
    _assert_image_tensor(img)
    _, h, w = get_dimensions(img)
    right = left + width
    bottom = top + height
    if left < 0 or top < 0 or right > w or bottom > h:
        padding_ltrb = [max(-left + min(0, right), 0), max(-top + min(0, bottom), 0),
                        max(right - max(w, left), 0), max(bottom - max(h, top), 0)]
        return pad(img[..., max(top, 0):bottom, max(left, 0):right], padding_ltrb, fill=0)
    return img[..., top:bottom, left:right]


def rgb_to_grayscale(img, num_output_channels=1):
    """ITU-R 601-2 luma, L = 0.2989 R + 0.587 G + 0.114 B, truncated back to the input dtype."""
    if img.ndim < 3:
        raise TypeError(f"Input image tensor should have at least 3 dimensions, but found {img.ndim}")
    _assert_channels(img, [1, 3])
    if num_output_channels not in (1, 3):
        raise ValueError("num_output_channels should be either 1 or 3")
    if img.shape[-3] == 3:
        r, g, b = img.unbind(dim=-3)
        l_img = (0.2989 * r + 0.587 * g + 0.114 * b).to(img.dtype)
        l_img = l_img.unsqueeze(dim=-3)
    else:
        l_img = img.clone()
    if num_output_channels == 3:
        return l_img.expand(img.shape)
    return l_img


def _blend(img1, img2, ratio):
    ratio = float(ratio)
    bound = _max_value(img1.dtype)
    return (ratio * img1 + (1.0 - ratio) * img2).clamp(0, bound).to(img1.dtype)


def adjust_brightness(img, brightness_factor):
    if brightness_factor < 0:
        raise ValueError(f"brightness_factor ({brightness_factor}) is not non-negative.")
    _assert_image_tensor(img)
    _assert_channels(img, [1, 3])
    return _blend(img, torch.zeros_like(img), brightness_factor)


def adjust_contrast(img, contrast_factor):
    if contrast_factor < 0:
        raise ValueError(f"contrast_factor ({contrast_factor}) is not non-negative.")
    _assert_image_tensor(img)
    _assert_channels(img, [3, 1])
    c = get_dimensions(img)[0]
    dtype = img.dtype if torch.is_floating_point(img) else torch.float32
    if c == 3:
        mean = torch.mean(rgb_to_grayscale(img).to(dtype), dim=(-3, -2, -1), keepdim=True)
    else:
        mean = torch.mean(img.to(dtype), dim=(-3, -2, -1), keepdim=True)
    return _blend(img, mean, contrast_factor)


def adjust_saturation(img, saturation_factor):
    if saturation_factor < 0:
        raise ValueError(f"saturation_factor ({saturation_factor}) is not non-negative.")
    _assert_image_tensor(img)
    _assert_channels(img, [1, 3])
    if get_dimensions(img)[0] == 1:  # as PIL: a grayscale image has no saturation to change
        return img
    return _blend(img, rgb_to_grayscale(img), saturation_factor)


def adjust_hue(img, hue_factor):
    """Rotate the hue: to HSV, add `hue_factor` (a fraction of the circle, in [-0.5, 0.5]) to H, back."""
    if not (-0.5 <= hue_factor <= 0.5):
        raise ValueError(f"hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    if not isinstance(img, torch.Tensor):
        raise TypeError("Input img should be Tensor image")
    _assert_image_tensor(img)
    _assert_channels(img, [1, 3])
    if get_dimensions(img)[0] == 1:
        return img
    orig_dtype = img.dtype
    img = convert_image_dtype(img, torch.float32)
    img = _rgb2hsv(img)
    h, s, v = img.unbind(dim=-3)
    h = (h + hue_factor) % 1.0
    img = torch.stack((h, s, v), dim=-3)
    img_hue_adj = _hsv2rgb(img)
    return convert_image_dtype(img_hue_adj, orig_dtype)


def _rgb2hsv(img):
    """RGB -> HSV as Pillow converts it; where max == min the hue and saturation are 0 (no NaN)."""
    r, g, b = img.unbind(dim=-3)
    maxc = torch.max(img, dim=-3).values
    minc = torch.min(img, dim=-3).values
    eqc = maxc == minc
    cr = maxc - minc
    ones = torch.ones_like(maxc)
    s = cr / torch.where(eqc, ones, maxc)
    cr_divisor = torch.where(eqc, ones, cr)
    rc = (maxc - r) / cr_divisor
    gc = (maxc - g) / cr_divisor
    bc = (maxc - b) / cr_divisor
    hr = (maxc == r) * (bc - gc)
    hg = ((maxc == g) & (maxc != r)) * (2.0 + rc - bc)
    hb = ((maxc != g) & (maxc != r)) * (4.0 + gc - rc)
    h = hr + hg + hb
    h = torch.fmod((h / 6.0 + 1.0), 1.0)
    return torch.stack((h, s, maxc), dim=-3)


def _hsv2rgb(img):
    h, s, v = img.unbind(dim=-3)
    i = torch.floor(h * 6.0)
    f = (h * 6.0) - i
    i = i.to(dtype=torch.int32)
    p = torch.clamp((v * (1.0 - s)), 0.0, 1.0)
    q = torch.clamp((v * (1.0 - s * f)), 0.0, 1.0)
    t = torch.clamp((v * (1.0 - s * (1.0 - f))), 0.0, 1.0)
    i = i % 6
    mask = i.unsqueeze(dim=-3) == torch.arange(6, device=i.device).view(-1, 1, 1)
    a1 = torch.stack((v, q, p, p, t, v), dim=-3)
    a2 = torch.stack((t, v, v, q, p, p), dim=-3)
    a3 = torch.stack((p, p, t, v, v, q), dim=-3)
    a4 = torch.stack((a1, a2, a3), dim=-4)
    return torch.einsum("...ijk, ...xijk -> ...xjk", mask.to(dtype=img.dtype), a4)


def _pad_symmetric(img, padding):
    """Mirror padding that repeats the edge pixel ([1, 2, 3] by 2 -> [2, 1, 1, 2, 3, 3, 2]); padding is
    (left, right, top, bottom), negative values crop."""
    if padding[0] < 0 or padding[1] < 0 or padding[2] < 0 or padding[3] < 0:
        crop_left, crop_right, crop_top, crop_bottom = [-min(x, 0) for x in padding]
        img = img[..., crop_top:img.shape[-2] - crop_bottom, crop_left:img.shape[-1] - crop_right]
        padding = [max(x, 0) for x in padding]
    in_sizes = img.size()
    x_indices = list(range(padding[0] - 1, -1, -1)) + list(range(in_sizes[-1])) + [-(i + 1) for i in range(padding[1])]
    y_indices = list(range(padding[2] - 1, -1, -1)) + list(range(in_sizes[-2])) + [-(i + 1) for i in range(padding[3])]
    x_indices = torch.tensor(x_indices, device=img.device)
    y_indices = torch.tensor(y_indices, device=img.device)
    if img.ndim == 3:
        return img[:, y_indices[:, None], x_indices[None, :]]
    if img.ndim == 4:
        return img[:, :, y_indices[:, None], x_indices[None, :]]
    raise RuntimeError("Symmetric padding of N-D tensors are not supported yet")


def _parse_pad_padding(padding):
    """int, [all], [left/right, top/bottom] or [left, top, right, bottom] -> [left, right, top, bottom]."""
    if isinstance(padding, int):
        return [padding] * 4
    if len(padding) == 1:
        return [padding[0]] * 4
    if len(padding) == 2:
        return [padding[0], padding[0], padding[1], padding[1]]
    return [padding[0], padding[2], padding[1], padding[3]]


def pad(img, padding, fill=0, padding_mode="constant"):
    _assert_image_tensor(img)
    if fill is None:
        fill = 0
    if not isinstance(padding, (int, tuple, list)):
        raise TypeError("Got inappropriate padding arg")
    if not isinstance(fill, (int, float)):
        raise TypeError("Got inappropriate fill arg")
    if not isinstance(padding_mode, str):
        raise TypeError("Got inappropriate padding_mode arg")
    if isinstance(padding, (tuple, list)) and len(padding) not in [1, 2, 4]:
        raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a {len(padding)} element tuple")
    if padding_mode not in ["constant", "edge", "reflect", "symmetric"]:
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    p = _parse_pad_padding(list(padding) if isinstance(padding, tuple) else padding)
    if padding_mode == "edge":
        padding_mode = "replicate"
    elif padding_mode == "symmetric":
        return _pad_symmetric(img, p)
    need_squeeze = img.ndim < 4
    if need_squeeze:
        img = img.unsqueeze(dim=0)
    out_dtype = img.dtype
    need_cast = padding_mode != "constant" and img.dtype not in (torch.float32, torch.float64)
    if need_cast:  # torch pads integer tensors only with a constant
        img = img.to(torch.float32)
    if padding_mode in ("reflect", "replicate"):
        img = torch_pad(img, p, mode=padding_mode)
    else:
        img = torch_pad(img, p, mode=padding_mode, value=float(fill))
    if need_squeeze:
        img = img.squeeze(dim=0)
    if need_cast:
        img = img.to(out_dtype)
    return img


def interpolate_image(img, size, interpolation, antialias):
    """``F.interpolate`` on an NCHW float image, with torch's antialiased bilinear resampling (which
    glasstorch's ``interpolate`` does not offer) done by ``_resize`` for bilinear + antialias."""
    if antialias and interpolation == "bilinear":
        if img.dtype not in (torch.float32, torch.float64, torch.uint8):
            raise TypeError(f"antialiased resize supports float32, float64 and uint8 images, not {img.dtype}")
        array = _resize.resize_antialiased(img.numpy(force=True), size[0], size[1])
        return torch.from_numpy(array).to(img.device)
    if interpolation == "bicubic" or (antialias and interpolation != "bilinear"):
        raise NotImplementedError(f"glasstorch.vision: resizing tensors with {interpolation!r} interpolation"
                                  f"{' and antialias' if antialias else ''} is not implemented (bilinear, nearest "
                                  f"and nearest-exact are; PIL images take every mode)")
    align_corners = False if interpolation == "bilinear" else None
    return interpolate(img, size=size, mode=interpolation, align_corners=align_corners)


def resize(img, size, interpolation="bilinear", antialias=True):
    _assert_image_tensor(img)
    size = list(size)
    if antialias is None:
        antialias = False
    if antialias and interpolation not in ["bilinear", "bicubic"]:
        antialias = False  # antialiasing only means something for these two filters
    img, need_cast, need_squeeze, out_dtype = _cast_squeeze_in(img, [torch.float32, torch.float64])
    img = interpolate_image(img, size, interpolation, antialias)
    if interpolation == "bicubic" and out_dtype == torch.uint8:
        img = img.clamp(min=0, max=255)
    return _cast_squeeze_out(img, need_cast=need_cast, need_squeeze=need_squeeze, out_dtype=out_dtype)


def _cast_squeeze_in(img, req_dtypes):
    need_squeeze = img.ndim < 4
    if need_squeeze:
        img = img.unsqueeze(dim=0)
    out_dtype = img.dtype
    need_cast = out_dtype not in req_dtypes
    if need_cast:
        img = img.to(req_dtypes[0])
    return img, need_cast, need_squeeze, out_dtype


def _cast_squeeze_out(img, need_cast, need_squeeze, out_dtype):
    if need_squeeze:
        img = img.squeeze(dim=0)
    if need_cast:
        if out_dtype in (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64):
            img = torch.round(img)  # round before the cast, which would truncate
        img = img.to(out_dtype)
    return img


def normalize(tensor, mean, std, inplace=False):
    """(tensor - mean) / std per channel, on a float image (..., C, H, W)."""
    _assert_image_tensor(tensor)
    if not tensor.is_floating_point():
        raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
    if tensor.ndim < 3:
        raise ValueError(f"Expected tensor to be a tensor image of size (..., C, H, W). Got tensor.size() = "
                         f"{tensor.size()}")
    if not inplace:
        tensor = tensor.clone()
    dtype = tensor.dtype
    mean = torch.as_tensor(mean, dtype=dtype, device=tensor.device)
    std = torch.as_tensor(std, dtype=dtype, device=tensor.device)
    if (std == 0).any():
        raise ValueError(f"std evaluated to zero after conversion to {dtype}, leading to division by zero.")
    if mean.ndim == 1:
        mean = mean.view(-1, 1, 1)
    if std.ndim == 1:
        std = std.view(-1, 1, 1)
    return tensor.sub_(mean).div_(std)
