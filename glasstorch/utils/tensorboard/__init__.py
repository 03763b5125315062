"""torch.utils.tensorboard: ``SummaryWriter`` writes event files that TensorBoard reads.

As in torch, this needs the ``tensorboard`` package (its protocol buffers and event-file writer);
importing this module without it raises ModuleNotFoundError naming the install line. ``import
glasstorch`` never imports it.
"""
try:
    import tensorboard
except ImportError:
    raise ModuleNotFoundError(
        "torch.utils.tensorboard needs the tensorboard package, which is not installed: "
        "pip install 'glasstorch[tensorboard]' (or pip install tensorboard)", name="tensorboard") from None

from ...torch_version import TorchVersion

if not hasattr(tensorboard, "__version__") or TorchVersion(tensorboard.__version__) < "1.15":
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above")
del TorchVersion, tensorboard

from .writer import FileWriter, SummaryWriter  # noqa: E402
from tensorboard.summary.writer.record_writer import RecordWriter  # noqa: E402

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]
