"""Summary protocol buffers, one function per kind of record (torch.utils.tensorboard.summary)."""
import io

import numpy as np
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

from ._convert import convert_to_HWC, make_np


def scalar(name, tensor, collections=None, new_style=False, double_precision=False):
    """One number: a ``simple_value`` (or, ``new_style``, a tensor for the scalars plugin)."""
    tensor = make_np(tensor).squeeze()
    if tensor.ndim != 0:
        raise AssertionError(f"Tensor should contain one element (0 dimensions). Was given size: {tensor.size} and "
                             f"{tensor.ndim} dimensions.")
    value = float(tensor)
    if new_style:
        proto = TensorProto(double_val=[value], dtype="DT_DOUBLE") if double_precision else \
            TensorProto(float_val=[value], dtype="DT_FLOAT")
        metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
        return Summary(value=[Summary.Value(tag=name, tensor=proto, metadata=metadata)])
    return Summary(value=[Summary.Value(tag=name, simple_value=value)])


def histogram_raw(name, min, max, num, sum, sum_squares, bucket_limits, bucket_counts):
    hist = HistogramProto(min=min, max=max, num=num, sum=sum, sum_squares=sum_squares, bucket_limit=bucket_limits,
                          bucket=bucket_counts)
    return Summary(value=[Summary.Value(tag=name, histo=hist)])


def histogram(name, values, bins, max_bins=None):
    return Summary(value=[Summary.Value(tag=name, histo=make_histogram(make_np(values).astype(float), bins,
                                                                          max_bins))])


def make_histogram(values, bins, max_bins=None):
    """np.histogram of the values, merged down to `max_bins`, trimmed to the non-empty range (one
    empty bucket kept on the left, as TensorBoard's own writer does)."""
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, limits = np.histogram(values, bins=bins)
    num_bins = len(counts)
    if max_bins is not None and num_bins > max_bins:
        subsampling = num_bins // max_bins
        remainder = num_bins % subsampling
        if remainder != 0:
            counts = np.pad(counts, pad_width=[[0, subsampling - remainder]], mode="constant", constant_values=0)
        counts = counts.reshape(-1, subsampling).sum(axis=-1)
        new_limits = np.empty((counts.size + 1,), limits.dtype)
        new_limits[:-1] = limits[:-1:subsampling]
        new_limits[-1] = limits[-1]
        limits = new_limits
    cum_counts = np.cumsum(np.greater(counts, 0))
    start, end = np.searchsorted(cum_counts, [0, cum_counts[-1] - 1], side="right")
    start, end = int(start), int(end) + 1
    counts = counts[start - 1:end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start:end + 1]
    if counts.size == 0 or limits.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    return HistogramProto(min=values.min(), max=values.max(), num=len(values), sum=values.sum(),
                          sum_squares=values.dot(values), bucket_limit=limits.tolist(), bucket=counts.tolist())


def image(tag, tensor, rescale=1, dataformats="NCHW"):
    """An image (or a tiled batch) as PNG; float values are taken in [0, 1], uint8 in [0, 255]."""
    tensor = convert_to_HWC(make_np(tensor), dataformats)
    scale_factor = 1 if tensor.dtype == np.uint8 else 255
    tensor = (tensor.astype(np.float32) * scale_factor).clip(0, 255).astype(np.uint8)
    return Summary(value=[Summary.Value(tag=tag, image=make_image(tensor, rescale=rescale))])


def make_image(tensor, rescale=1):
    """(H, W, C) uint8 -> Summary.Image holding the PNG bytes (needs Pillow, as torch's does)."""
    from ...vision import _pil
    Image = _pil.require("SummaryWriter.add_image")
    height, width, channel = tensor.shape
    picture = Image.fromarray(tensor)
    picture = picture.resize((int(width * rescale), int(height * rescale)), Image.Resampling.LANCZOS)
    output = io.BytesIO()
    picture.save(output, format="PNG")
    return Summary.Image(height=height, width=width, colorspace=channel, encoded_image_string=output.getvalue())


def text(tag, text):
    """A string for the text plugin, under ``<tag>/text_summary``."""
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
        plugin_name="text", content=TextPluginData(version=0).SerializeToString()))
    tensor = TensorProto(dtype="DT_STRING", string_val=[text.encode(encoding="utf_8")],
                         tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=metadata, tensor=tensor)])
