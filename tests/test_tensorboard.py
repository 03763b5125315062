"""torch.utils.tensorboard.SummaryWriter: what it writes, read back with TensorBoard's own EventAccumulator."""
import io
import os
import subprocess
import sys

import numpy as np
import pytest

import glasstorch as torch
from glasstorch import nn

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402

from glasstorch.utils.tensorboard import SummaryWriter  # noqa: E402


def read(log_dir):
    accumulator = EventAccumulator(str(log_dir), size_guidance={"histograms": 0, "images": 0, "scalars": 0,
                                                                  "tensors": 0})
    accumulator.Reload()
    return accumulator


def test_scalars_histograms_text(tmp_path):
    with SummaryWriter(tmp_path) as writer:
        for step in range(5):
            writer.add_scalar("loss/train", 1.0 / (step + 1), step)
        writer.add_scalar("lr", torch.tensor(0.25), 7)
        values = torch.randn(1000)
        writer.add_histogram("weights", values, 3)
        writer.add_histogram("auto", np.arange(10.0), 4, bins="auto")
        writer.add_text("notes", "**hello** glasstorch", 2)
    events = read(tmp_path)
    assert [(e.step, round(e.value, 6)) for e in events.Scalars("loss/train")] == \
        [(s, round(1.0 / (s + 1), 6)) for s in range(5)]
    assert events.Scalars("lr")[0].value == 0.25 and events.Scalars("lr")[0].step == 7
    hist = events.Histograms("weights")[0]
    assert hist.step == 3 and hist.histogram_value.num == 1000
    assert hist.histogram_value.sum == pytest.approx(float(values.double().sum()), rel=1e-6, abs=1e-6)
    assert hist.histogram_value.min == pytest.approx(float(values.min()))
    assert sum(hist.histogram_value.bucket) == 1000
    assert events.Histograms("auto")[0].histogram_value.max == 9.0
    text = events.Tensors("notes/text_summary")[0]
    assert text.step == 2 and text.tensor_proto.string_val[0].decode() == "**hello** glasstorch"


def test_add_scalars_writes_one_run_per_key(tmp_path):
    writer = SummaryWriter(str(tmp_path))
    for epoch in range(3):
        writer.add_scalars("loss", {"training": 1.0 - epoch / 10, "validation": 2.0 - epoch / 10}, epoch)
    writer.close()
    assert sorted(os.listdir(tmp_path / "loss_training")) and sorted(os.listdir(tmp_path / "loss_validation"))
    training = read(tmp_path / "loss_training").Scalars("loss")
    validation = read(tmp_path / "loss_validation").Scalars("loss")
    assert [round(e.value, 6) for e in training] == [1.0, 0.9, 0.8]
    assert [round(e.value, 6) for e in validation] == [2.0, 1.9, 1.8]


def test_images(tmp_path):
    Image = pytest.importorskip("PIL.Image")
    chw = torch.rand(3, 8, 10)
    batch = torch.rand(4, 1, 5, 6)
    with SummaryWriter(tmp_path) as writer:
        writer.add_image("chw", chw, 1)
        writer.add_image("hwc_uint8", (chw.permute(1, 2, 0) * 255).to(torch.uint8), 1, dataformats="HWC")
        writer.add_images("batch", batch, 2)
    events = read(tmp_path)
    first = events.Images("chw")[0]
    assert (first.width, first.height) == (10, 8)
    decoded = np.asarray(Image.open(io.BytesIO(first.encoded_image_string)))
    assert np.array_equal(decoded, (chw.permute(1, 2, 0).numpy() * 255).clip(0, 255).astype(np.uint8))
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(events.Images("hwc_uint8")[0].encoded_image_string))),
                          (chw.permute(1, 2, 0) * 255).to(torch.uint8).numpy())
    tiled = events.Images("batch")[0]
    assert (tiled.width, tiled.height) == (6 * 4, 5)         # four images in one row


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.5))
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        return self.head(self.body(x) * 2)


def test_add_graph_from_the_recorded_graph(tmp_path):
    model = Net().train()
    with SummaryWriter(tmp_path) as writer:
        writer.add_graph(model, torch.randn(5, 4))
    assert model.training                                   # the mode is restored
    graph = read(tmp_path).Graph()
    nodes = {node.name: node for node in graph.node}
    assert nodes["input/input.0"].op == "IO Node" and nodes["output/output.0"].op == "IO Node"
    assert nodes["Net/Sequential[body]/Linear[0]/weight"].op == "Parameter"
    assert nodes["Net/Linear[head]/bias"].op == "Parameter"
    shape = nodes["Net/Sequential[body]/Linear[0]/weight"].attr["_output_shapes"].list.shape[0]
    assert [d.size for d in shape.dim] == [8, 4]
    first = nodes["Net/Sequential[body]/Linear[0]/AddmmBackward0"]
    assert set(first.input) == {"Net/Sequential[body]/Linear[0]/bias", "input/input.0",
                                "Net/Sequential[body]/Linear[0]/TBackward0"}
    assert "Net/Sequential[body]/ReLU[1]/ReluBackward0" in nodes
    assert "Net/MulBackward0" in nodes                      # the model's own `* 2`, outside any submodule
    assert nodes["output/output.0"].input == ["Net/Linear[head]/AddmmBackward0"]
    for node in graph.node:                                 # every edge names a node of the graph
        assert all(source in nodes for source in node.input), node.name
    assert read(tmp_path).RunMetadata("step1").step_stats.dev_stats[0].device == "/device:CPU:0"


def test_godoys_stepbystep_logging_pattern(tmp_path):
    """StepByStep.set_tensorboard / add_graph / add_scalars with a Sequential model."""
    model = nn.Sequential(nn.Linear(1, 1))
    writer = SummaryWriter(str(tmp_path / "runs" / "simple_linear_regression"))
    writer.add_graph(model, torch.randn(3, 1))
    for epoch in range(2):
        writer.add_scalars(main_tag="loss", tag_scalar_dict={"training": 0.5, "validation": 0.6},
                           global_step=epoch)
    writer.close()
    log = tmp_path / "runs" / "simple_linear_regression"
    names = [node.name for node in read(log).Graph().node]
    assert "Sequential/Linear[0]/weight" in names and "Sequential/Linear[0]/AddmmBackward0" in names
    assert len(read(log / "loss_training").Scalars("loss")) == 2


def test_without_tensorboard_the_import_says_how_to_get_it(tmp_path):
    script = ("import sys; sys.modules['tensorboard'] = None\n"
              "import glasstorch\n"
              "try:\n"
              "    from glasstorch.utils.tensorboard import SummaryWriter\n"
              "except ModuleNotFoundError as e:\n"
              "    assert e.name == 'tensorboard', e.name\n"
              "    print(e)\n")
    out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "pip install 'glasstorch[tensorboard]'" in out.stdout


@pytest.mark.parametrize("lib", ["glasstorch", "torch"])
def test_flush_writes_what_is_queued_and_close_ends_the_file(tmp_path, lib):
    """With a queue that never fills and no timed flush, flush() alone puts the events on disk (add_scalars'
    run writers too); after close() a later add_* opens a new event file, as torch's writer does."""
    if lib == "torch":
        writer_class = pytest.importorskip("torch.utils.tensorboard").SummaryWriter
    else:
        writer_class = SummaryWriter
    writer = writer_class(str(tmp_path), max_queue=1000, flush_secs=3600)
    writer.add_scalar("loss", 0.5, 0)
    writer.add_scalars("acc", {"train": 0.25, "val": 0.75}, 0)
    writer.flush()
    assert [e.value for e in read(tmp_path).Scalars("loss")] == [0.5]
    assert [e.value for e in read(tmp_path / "acc_val").Scalars("acc")] == [0.75]
    writer.close()
    files = set(os.listdir(tmp_path))
    writer.add_scalar("loss", 0.25, 1)
    writer.close()
    assert len(set(os.listdir(tmp_path)) - files) == 1        # a new event file
    # (sorted: the reader takes the files in name order, and the names end in a process-wide counter,
    # so ...tfevents.<time>.<host>.<pid>.10 can come before .9)
    assert sorted((e.step, e.value) for e in read(tmp_path).Scalars("loss")) == [(0, 0.5), (1, 0.25)]
