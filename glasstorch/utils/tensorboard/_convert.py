"""Values to NumPy arrays, and images to the (H, W, 3) layout TensorBoard's image summary wants."""
import numpy as np

import glasstorch as torch


def make_np(x):
    """A tensor, ndarray or Python number -> ndarray (bfloat16 goes through float32)."""
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x):
        return np.array([x])
    if isinstance(x, torch.Tensor):
        x = x.detach()
        if x.dtype == torch.bfloat16:
            x = x.float()
        return x.cpu().numpy()
    raise NotImplementedError(f"Got {type(x)}, but numpy array or torch tensor are expected.")


def make_grid(images, ncols=8):
    """(N, 1 or 3, H, W) -> one (3, rows*H, cols*W) canvas, up to `ncols` images a row, no padding."""
    if images.shape[1] == 1:
        images = np.concatenate([images, images, images], 1)
    if images.ndim != 4 or images.shape[1] != 3:
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    count, _, height, width = images.shape
    ncols = min(count, ncols)
    nrows = int(np.ceil(float(count) / ncols))
    canvas = np.zeros((3, height * nrows, width * ncols), dtype=images.dtype)
    for i in range(count):
        y, x = divmod(i, ncols)
        canvas[:, y * height:(y + 1) * height, x * width:(x + 1) * width] = images[i]
    return canvas


def convert_to_HWC(tensor, input_format):
    """Rearrange by `input_format` (letters N, C, H, W) into (H, W, 3); a batch is tiled by make_grid,
    one channel repeated three times."""
    if len(set(input_format)) != len(input_format):
        raise AssertionError(f"You can not use the same dimension shorthand twice. input_format: {input_format}")
    if len(tensor.shape) != len(input_format):
        raise AssertionError(f"size of input tensor and input format are different. tensor shape: {tensor.shape}, "
                             f"input_format: {input_format}")
    input_format = input_format.upper()
    if len(input_format) == 4:
        return make_grid(tensor.transpose([input_format.find(c) for c in "NCHW"])).transpose(1, 2, 0)
    if len(input_format) == 3:
        hwc = tensor.transpose([input_format.find(c) for c in "HWC"])
        return np.concatenate([hwc, hwc, hwc], 2) if hwc.shape[2] == 1 else hwc
    hw = tensor.transpose([input_format.find(c) for c in "HW"])
    return np.stack([hw, hw, hw], 2)
