"""SummaryWriter and FileWriter (torch.utils.tensorboard.writer), on tensorboard's own event-file writer.

    writer = SummaryWriter("runs/exp1")            # default: runs/<date>_<host><comment>
    writer.add_scalar("loss/train", loss, epoch)
    writer.add_scalars("loss", {"train": 0.3, "val": 0.4}, epoch)   # one sub-run per key, as torch
    writer.add_histogram("fc.weight", model.fc.weight, epoch)
    writer.add_image("sample", image_chw, epoch)
    writer.add_graph(model, example_input)
    writer.close()

Records are queued and written by a background thread (tensorboard's EventFileWriter), flushed every
`flush_secs`, on ``flush()``, and on ``close()``.
"""
import os
import time

from tensorboard.compat.proto import event_pb2
from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from .summary import histogram, histogram_raw, image, scalar, text

__all__ = ["FileWriter", "SummaryWriter"]


class FileWriter:
    """Writes Event protocol buffers to one event file in `log_dir`."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self):
        return self.event_writer.get_logdir()

    def add_event(self, event, step=None, walltime=None):
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime=None):
        self.add_event(event_pb2.Event(summary=summary), global_step, walltime)

    def add_graph(self, graph_profile, walltime=None):
        graph, stepstats = graph_profile
        self.add_event(event_pb2.Event(graph_def=graph.SerializeToString()), None, walltime)
        run_metadata = event_pb2.TaggedRunMetadata(tag="step1", run_metadata=stepstats.SerializeToString())
        self.add_event(event_pb2.Event(tagged_run_metadata=run_metadata), None, walltime)

    def flush(self):
        self.event_writer.flush()

    def close(self):
        self.event_writer.close()

    def reopen(self):
        self.event_writer.reopen()


def _default_bins():
    """TensorFlow's histogram buckets: +-1e-12 growing by 10% up to 1e20, and 0."""
    v, buckets = 1e-12, []
    while v < 1e20:
        buckets.append(v)
        v *= 1.1
    return [-b for b in reversed(buckets)] + [0] + buckets


class SummaryWriter:
    """Log scalars, histograms, images, text and the model's graph for TensorBoard."""

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120, filename_suffix=""):
        if not log_dir:
            import socket
            from datetime import datetime
            log_dir = os.path.join("runs", datetime.now().strftime("%b%d_%H-%M-%S") + "_" + socket.gethostname()
                                   + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = self.all_writers = None
        self._get_file_writer()
        self.default_bins = _default_bins()

    def _get_file_writer(self):
        """The main FileWriter, (re)created after close(); a purge_step marks older steps as discarded."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                self.file_writer.add_event(Event(step=self.purge_step, file_version="brain.Event:2"))
                self.file_writer.add_event(Event(step=self.purge_step,
                                                 session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        return self.log_dir

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        """One value of the curve `tag` at `global_step` (a number or a one-element tensor)."""
        summary = scalar(tag, scalar_value, new_style=new_style, double_precision=double_precision)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Several curves on one chart: each key is written to its own run directory
        ``<log_dir>/<main_tag>_<key>`` under the tag `main_tag`, as torch does."""
        walltime = time.time() if walltime is None else walltime
        fw_logdir = self._get_file_writer().get_logdir()
        for tag, scalar_value in tag_scalar_dict.items():
            fw_tag = fw_logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            if fw_tag not in self.all_writers:
                self.all_writers[fw_tag] = FileWriter(fw_tag, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers[fw_tag].add_summary(scalar(main_tag, scalar_value), global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None, max_bins=None):
        """The distribution of `values` (bins: "tensorflow", a NumPy bin rule such as "auto", or edges)."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._get_file_writer().add_summary(histogram(tag, values, bins, max_bins=max_bins), global_step, walltime)

    def add_histogram_raw(self, tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts,
                          global_step=None, walltime=None):
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        self._get_file_writer().add_summary(
            histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts), global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """An image: (3, H, W) by default (`dataformats` says otherwise: "HWC", "HW"); floats in [0, 1]."""
        self._get_file_writer().add_summary(image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """A batch of images, tiled into one."""
        self._get_file_writer().add_summary(image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """A matplotlib figure (or a list of them), rendered to an image."""
        if isinstance(figure, list):
            self.add_image(tag, _figures_to_images(figure, close), global_step, walltime, dataformats="NCHW")
        else:
            self.add_image(tag, _figures_to_images([figure], close)[0], global_step, walltime, dataformats="CHW")

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """A string (markdown) for the Text tab."""
        self._get_file_writer().add_summary(text(tag, text_string), global_step, walltime)

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """The graph of `model` run on `input_to_model` (see ``_graph``: glasstorch records it with
        autograd, where torch traces it with TorchScript)."""
        from ._graph import graph
        self._get_file_writer().add_graph(graph(model, input_to_model, verbose, use_strict_trace))

    def flush(self):
        """Write everything queued to disk."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()

    def close(self):
        """Flush and close every event file (a later add_* opens new ones)."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()


def _figures_to_images(figures, close):
    """Render matplotlib figures to (3, H, W) uint8 arrays through the Agg canvas."""
    import numpy as np
    import matplotlib.backends.backend_agg as plt_backend_agg
    import matplotlib.pyplot as plt
    images = []
    for figure in figures:
        canvas = plt_backend_agg.FigureCanvasAgg(figure)
        canvas.draw()
        data = np.asarray(canvas.buffer_rgba())[:, :, :3]
        images.append(data.transpose(2, 0, 1))
        if close:
            plt.close(figure)
    return np.stack(images)
