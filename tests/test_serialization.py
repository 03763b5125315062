"""save / load: interchangeable with torch.save / torch.load, safe by default.

Round trips in both directions against real torch (every dtype, 0-dim, empty, views, shared
storage, a module's state_dict, Adam's state_dict, nested containers), the layout torch writes,
the refusal of code in a checkpoint, damaged files, a save killed half-way, legacy files and
safetensors.
"""
import io
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import warnings
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import glasstorch
from glasstorch import serialization
from glasstorch.serialization import load, save
from glasstorch._serialization import archive
from glasstorch.nn.parameter import Parameter

try:
    import torch
except ImportError:  # the torch round trips are skipped; the rest still runs
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="needs real torch as the oracle")

DTYPES = ["float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]


def _numpy_values(dtype_name, shape, seed=0):
    rng = np.random.default_rng(seed)
    if dtype_name == "bool":
        return rng.random(shape) > 0.5
    if dtype_name.startswith(("int", "uint")):
        info = np.iinfo(dtype_name)
        return rng.integers(max(info.min, -1000), min(info.max, 1000), size=shape).astype(dtype_name)
    values = rng.standard_normal(shape).astype(np.float32)
    if dtype_name == "bfloat16":
        ml_dtypes = pytest.importorskip("ml_dtypes")
        return values.astype(ml_dtypes.bfloat16)
    return values.astype(dtype_name)


def _ours(array, requires_grad=False):
    t = glasstorch.from_numpy(np.array(array, order="C"))  # (ascontiguousarray would make 0-dim 1-dim)
    return t.requires_grad_(True) if requires_grad else t


def _theirs(array):
    """The same values as a torch tensor (bfloat16 through its bits)."""
    array = np.array(array, order="C")
    if array.dtype.name == "bfloat16":
        return torch.from_numpy(array.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(array.copy())


def _bits(t):
    """A tensor's shape and raw bytes (exact for NaN and bfloat16)."""
    if torch is not None and isinstance(t, torch.Tensor):
        t = t.detach().contiguous()
        if t.dtype == torch.bfloat16:
            t = t.view(torch.int16)
        return tuple(t.shape), t.numpy().tobytes()
    array = t.detach()._data
    return tuple(array.shape), array.tobytes()  # tobytes gives C order for any strides


def _same(ours, theirs):
    assert str(ours.dtype) == str(theirs.dtype)
    assert _bits(ours) == _bits(theirs)


def _buffer(save, obj):
    buffer = io.BytesIO()
    save(obj, buffer)
    buffer.seek(0)
    return buffer


# --- glasstorch -> torch and back, every dtype --------------------------------------------------

@needs_torch
@pytest.mark.parametrize("dtype_name", DTYPES)
@pytest.mark.parametrize("shape", [(2, 3), (), (0,), (4, 0, 2)])
def test_save_then_torch_load(dtype_name, shape):
    array = _numpy_values(dtype_name, shape)
    loaded = torch.load(_buffer(save, _ours(array)), weights_only=True)
    _same(_ours(array), loaded)


@needs_torch
@pytest.mark.parametrize("dtype_name", DTYPES)
@pytest.mark.parametrize("shape", [(2, 3), (), (0,), (4, 0, 2)])
def test_torch_save_then_load(dtype_name, shape):
    array = _numpy_values(dtype_name, shape)
    loaded = load(_buffer(torch.save, _theirs(array)))
    assert isinstance(loaded, glasstorch.Tensor)
    _same(loaded, _theirs(array))


@needs_torch
def test_requires_grad_and_parameters_both_ways():
    ours = {"t": _ours(np.ones(3, np.float32), requires_grad=True),
            "p": Parameter(glasstorch.ones(2, 2)),
            "frozen": Parameter(glasstorch.ones(1), requires_grad=False)}
    theirs = torch.load(_buffer(save, ours), weights_only=True)
    assert type(theirs["p"]) is torch.nn.Parameter and theirs["p"].requires_grad
    assert type(theirs["frozen"]) is torch.nn.Parameter and not theirs["frozen"].requires_grad
    assert type(theirs["t"]) is torch.Tensor and theirs["t"].requires_grad

    back = load(_buffer(torch.save, theirs))
    assert isinstance(back["p"], Parameter) and back["p"].requires_grad
    assert isinstance(back["frozen"], Parameter) and not back["frozen"].requires_grad
    assert not isinstance(back["t"], Parameter) and back["t"].requires_grad and back["t"].is_leaf


# --- views and shared storage ------------------------------------------------------------------

@needs_torch
def test_views_keep_offset_stride_and_shared_storage_in_torch():
    base = glasstorch.from_numpy(np.arange(24, dtype=np.float32).reshape(4, 6))
    views = {"base": base, "t": base.t(), "col": base[:, 2], "step": base[1:, ::2], "row": base[3]}
    loaded = torch.load(_buffer(save, views), weights_only=True)
    for name, view in views.items():
        _same(view, loaded[name])
        assert loaded[name].stride() == tuple(s // 4 for s in view._data.strides)
    pointers = {loaded[name].untyped_storage().data_ptr() for name in views}
    assert len(pointers) == 1, "views of one array must share one storage"
    loaded["base"][0, 2] = -1.0
    assert loaded["col"][0].item() == -1.0


@needs_torch
def test_unshareable_views_are_saved_as_copies():
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    reversed_rows = glasstorch.from_numpy(base[::-1])  # torch has no negative strides
    as_ints = glasstorch.from_numpy(base.view(np.int32))  # same memory, another dtype
    loaded = torch.load(_buffer(save, {"rev": reversed_rows, "ints": as_ints}), weights_only=True)
    assert loaded["rev"].tolist() == base[::-1].tolist()
    assert loaded["ints"].tolist() == base.view(np.int32).tolist()


@needs_torch
def test_torch_views_share_memory_after_load():
    base = torch.arange(24.0).reshape(4, 6)
    saved = {"base": base, "t": base.t(), "col": base[:, 2], "expanded": torch.ones(3, 1).expand(3, 4)}
    loaded = load(_buffer(torch.save, saved))
    for name, tensor in saved.items():
        _same(loaded[name], tensor)
    assert np.shares_memory(loaded["base"]._data, loaded["col"]._data)
    loaded["base"]._data[0, 2] = -1.0
    assert loaded["col"][0].item() == -1.0 and loaded["t"][2, 0].item() == -1.0


# --- state dicts, optimizers, containers ------------------------------------------------------

def _torch_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.BatchNorm2d(2), torch.nn.Flatten(),
                               torch.nn.Linear(8, 3))


@needs_torch
def test_module_state_dict_both_ways():
    model = _torch_model()
    model(torch.randn(2, 1, 4, 4))  # running statistics and num_batches_tracked move
    state = model.state_dict()
    ours = load(_buffer(torch.save, state))
    assert type(ours) is OrderedDict and list(ours) == list(state)
    assert ours._metadata == state._metadata
    for name in state:
        _same(ours[name], state[name])

    back = torch.load(_buffer(save, ours), weights_only=True)
    fresh = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.BatchNorm2d(2), torch.nn.Flatten(),
                                torch.nn.Linear(8, 3))
    fresh.load_state_dict(back, strict=True)
    for name, value in fresh.state_dict().items():
        assert torch.equal(value, state[name])


@needs_torch
def test_adam_state_dict_both_ways():
    model = _torch_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    model(torch.randn(2, 1, 4, 4)).sum().backward()
    optimizer.step()
    state = optimizer.state_dict()
    ours = load(_buffer(torch.save, state))
    assert ours["param_groups"] == state["param_groups"]
    assert sorted(ours["state"]) == sorted(state["state"])
    for index, slots in state["state"].items():
        for name, value in slots.items():
            _same(ours["state"][index][name], value)

    back = torch.load(_buffer(save, ours), weights_only=True)
    restored = torch.optim.Adam(model.parameters(), lr=0.5)
    restored.load_state_dict(back)
    assert restored.state_dict()["param_groups"] == state["param_groups"]
    for index, slots in state["state"].items():
        for name, value in slots.items():
            assert torch.equal(restored.state_dict()["state"][index][name], value)


def _plain_values(size, float32, device):
    return {"ints": [0, -1, 2 ** 40, 2 ** 70], "floats": (0.5, float("inf"), -0.0), "text": "déjà",
            "none": None, "flags": [True, False], "nested": OrderedDict(a={"b": [(1,), []]}), "bytes": b"\x00ab",
            "set": {1, 2}, "complex": 1 + 2j, "size": size([2, 3]), "dtype": float32, "device": device("cpu")}


@needs_torch
def test_nested_containers_both_ways():
    theirs = _plain_values(torch.Size, torch.float32, torch.device)
    ours = load(_buffer(torch.save, theirs))
    expected = _plain_values(glasstorch.Size, glasstorch.float32, glasstorch.device)
    assert ours == expected
    assert type(ours["nested"]) is OrderedDict and type(ours["size"]) is glasstorch.Size
    assert ours["dtype"] is glasstorch.float32

    back = torch.load(_buffer(save, ours), weights_only=True)
    assert back == theirs
    assert type(back["size"]) is torch.Size and back["dtype"] is torch.float32
    assert back["device"] == torch.device("cpu")


@needs_torch
def test_python_attributes_on_torch_tensors_load():
    """torch pickles a tensor with attributes through _rebuild_from_type_v2 / _rebuild_parameter_with_state."""
    tensor, parameter = torch.ones(2), torch.nn.Parameter(torch.ones(3))
    tensor.tag, parameter.note = "hello", 5
    loaded = load(_buffer(torch.save, {"t": tensor, "p": parameter}))
    assert loaded["t"].tag == "hello" and loaded["t"].tolist() == [1.0, 1.0]
    assert loaded["p"].note == 5 and isinstance(loaded["p"], Parameter)


def test_round_trip_without_torch():
    shared = glasstorch.arange(6.0)
    obj = {"shared": shared, "view": shared[2:], "param": Parameter(glasstorch.zeros(2)),
           "same": [shared, shared], "values": _plain_values(glasstorch.Size, glasstorch.float32, glasstorch.device)}
    loaded = load(_buffer(save, obj))
    assert loaded["values"] == obj["values"]
    assert loaded["view"].tolist() == [2.0, 3.0, 4.0, 5.0]
    assert loaded["same"][0] is loaded["same"][1] is loaded["shared"]
    assert np.shares_memory(loaded["shared"]._data, loaded["view"]._data)
    assert isinstance(loaded["param"], Parameter)


# --- the file: torch's layout, paths, map_location, mmap ----------------------------------------

@needs_torch
def test_layout_is_byte_for_byte_torchs(tmp_path):
    (tmp_path / "ours").mkdir()
    (tmp_path / "theirs").mkdir()
    array = np.arange(5, dtype=np.float32)
    save({"a": _ours(array), "empty": glasstorch.zeros(0), "p": Parameter(glasstorch.ones(2))},
                    tmp_path / "ours" / "model.pt")
    torch.save({"a": torch.from_numpy(array), "empty": torch.zeros(0), "p": torch.nn.Parameter(torch.ones(2))},
               tmp_path / "theirs" / "model.pt")
    ours, theirs = (zipfile.ZipFile(tmp_path / side / "model.pt") for side in ("ours", "theirs"))
    assert [(i.filename, i.file_size, i.header_offset) for i in ours.infolist()] == \
           [(i.filename, i.file_size, i.header_offset) for i in theirs.infolist()]
    ours_bytes = (tmp_path / "ours" / "model.pt").read_bytes()
    theirs_bytes = (tmp_path / "theirs" / "model.pt").read_bytes()
    differing = [i for i, (a, b) in enumerate(zip(ours_bytes, theirs_bytes)) if a != b]
    serialization_id = ours.getinfo("model/.data/serialization_id")
    allowed = range(serialization_id.header_offset, serialization_id.header_offset + 200)
    assert len(ours_bytes) == len(theirs_bytes)
    assert all(i in allowed or i >= len(ours_bytes) - 200 for i in differing)  # the random id and its CRC


@needs_torch
def test_torch_can_compute_our_storage_offsets(tmp_path, monkeypatch):
    """torch.load(mmap=True) with calculate_storage_offsets trusts miniz's layout; check it holds."""
    from torch.utils.serialization import config
    monkeypatch.setenv("TORCH_SERIALIZATION_DEBUG", "1")  # torch then asserts each computed offset
    # set and restored through torch's own config API: monkeypatch's undo deletes the attribute from
    # torch's config module, and every later torch.load then fails
    previous = config.load.calculate_storage_offsets
    config.load.calculate_storage_offsets = True
    try:
        tensors = {"a": glasstorch.ones(5), "empty": glasstorch.zeros(0), "b": glasstorch.arange(7.0).double(),
                   "c": glasstorch.arange(3).to(glasstorch.int16)}
        save(tensors, tmp_path / "x.pt")
        loaded = torch.load(tmp_path / "x.pt", mmap=True)
    finally:
        config.load.calculate_storage_offsets = previous
    for name, tensor in tensors.items():
        _same(tensor, loaded[name])


def test_zip64_records_are_readable(monkeypatch):
    monkeypatch.setattr(archive, "ZIP64_LIMIT", 16)  # every size and offset from 16 bytes on is "large"
    buffer = _buffer(save, {"w": glasstorch.arange(10.0)})
    assert zipfile.ZipFile(buffer).testzip() is None
    buffer.seek(0)
    assert load(buffer)["w"].tolist() == list(range(10))
    if torch is not None:
        buffer.seek(0)
        assert torch.load(buffer, weights_only=True)["w"].tolist() == list(range(10))


@needs_torch
def test_paths_pathlike_and_archive_name(tmp_path):
    save(glasstorch.ones(2), str(tmp_path / "my.model.pt"))
    assert zipfile.ZipFile(tmp_path / "my.model.pt").namelist()[0] == "my.model/data.pkl"
    assert torch.load(tmp_path / "my.model.pt").tolist() == [1.0, 1.0]
    assert load(str(tmp_path / "my.model.pt")).tolist() == [1.0, 1.0]
    with open(tmp_path / "f.pt", "wb") as f:
        save(glasstorch.ones(1), f)
    assert zipfile.ZipFile(tmp_path / "f.pt").namelist()[0] == "archive/data.pkl"
    with open(tmp_path / "f.pt", "rb") as f:
        assert load(f).tolist() == [1.0]
    with pytest.raises(RuntimeError, match="Parent directory .* does not exist"):
        save(1, tmp_path / "missing" / "x.pt")


def _with_location(buffer, location):
    """The checkpoint in ``buffer`` with every storage tagged as saved on ``location``."""
    source = archive.ZipReader(buffer)
    tag = b"X" + len(location).to_bytes(4, "little") + location.encode()
    return _rezipped(source.read_record("data.pkl").replace(b"X\x03\x00\x00\x00cpu", tag), source)


def test_map_location():
    saved_on_gpu = _with_location(_buffer(save, {"w": glasstorch.arange(3.0)}), "cuda:0")
    for map_location in ("cpu", glasstorch.device("cpu"), {"cuda:0": "cpu"}, lambda storage, location: storage.cpu()):
        saved_on_gpu.seek(0)
        assert load(saved_on_gpu, map_location=map_location)["w"].tolist() == [0.0, 1.0, 2.0]
    if not glasstorch.cuda.is_available():
        saved_on_gpu.seek(0)
        with pytest.raises(RuntimeError, match="CUDA device but torch.cuda.is_available\\(\\) is False"):
            load(saved_on_gpu)
        saved_on_gpu.seek(0)
        with pytest.raises(RuntimeError, match="CUDA"):
            load(saved_on_gpu, map_location=lambda storage, location: None)
    with pytest.raises(RuntimeError, match="don't know how to restore data location"):
        load(_buffer(save, glasstorch.ones(1)), map_location="xla:0")


def test_mmap(tmp_path):
    save({"w": glasstorch.arange(1000.0), "v": glasstorch.ones(2, 2)}, tmp_path / "m.pt")
    loaded = load(tmp_path / "m.pt", mmap=True)
    assert loaded["w"].tolist() == list(range(1000)) and loaded["v"].tolist() == [[1.0, 1.0], [1.0, 1.0]]
    loaded["w"]._data[0] = 5.0  # copy-on-write: the file keeps its values
    assert load(tmp_path / "m.pt")["w"][0].item() == 0.0
    with pytest.raises(ValueError, match="file path"):
        load(io.BytesIO((tmp_path / "m.pt").read_bytes()), mmap=True)


@needs_torch
def test_deflated_archive_loads():
    """torch reads zip files that other tools recompressed; so do we."""
    source = zipfile.ZipFile(_buffer(torch.save, {"w": torch.arange(100.0)}))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as target:
        for name in source.namelist():
            target.writestr(name, source.read(name))
    out.seek(0)
    assert load(out)["w"].tolist() == list(range(100))


# --- code in a checkpoint is refused ------------------------------------------------------------

class _CreatesFile:
    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return open, (self.path, "w")


class _RunsShell:
    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return os.system, (f"touch {self.path}",)


class _Point:  # a user class, allowlisted in a test below
    def __init__(self, x):
        self.x = x

    def __eq__(self, other):
        return type(other) is _Point and other.x == self.x


def _malicious_checkpoint(payload):
    """A torch-format checkpoint (written by save, which pickles any object) holding ``payload``."""
    return _buffer(save, {"weights": glasstorch.ones(2), "payload": payload})


def test_global_outside_the_allowlist_is_refused(tmp_path):
    target = tmp_path / "pwned"
    buffer = _malicious_checkpoint(_CreatesFile(target))
    refused = r"(?s)Weights only load failed.*Unsupported global: GLOBAL io.open"
    with pytest.raises(pickle.UnpicklingError, match=refused):
        load(buffer)
    assert not target.exists()
    buffer.seek(0)
    load(buffer, weights_only=False)  # the payload is real: without the allowlist it runs
    assert target.exists()


def test_blocked_module_is_refused(tmp_path):
    target = tmp_path / "pwned"
    with pytest.raises(pickle.UnpicklingError, match=r"GLOBAL (posix|nt|os)\.system whose module \w+ is blocked"):
        load(_malicious_checkpoint(_RunsShell(target)))
    assert not target.exists()


def test_refused_in_legacy_stream_and_raw_pickle_too(tmp_path):
    target = tmp_path / "pwned"
    raw = io.BytesIO()
    pickle.dump(archive.LEGACY_MAGIC_NUMBER, raw, protocol=2)
    pickle.dump(archive.LEGACY_PROTOCOL_VERSION, raw, protocol=2)
    pickle.dump({"little_endian": True}, raw, protocol=2)
    pickle.dump(_CreatesFile(target), raw, protocol=2)
    raw.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL io.open"):
        load(raw)
    with pytest.raises((RuntimeError, pickle.UnpicklingError)):
        load(io.BytesIO(pickle.dumps(_CreatesFile(target))))
    assert not target.exists()


@needs_torch
def test_torch_refuses_the_same_payload(tmp_path):
    """The oracle: torch's weights-only loader gives the same kind of error for our malicious file."""
    target = tmp_path / "pwned"
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global: GLOBAL io.open"):
        torch.load(_malicious_checkpoint(_CreatesFile(target)), weights_only=True)
    assert not target.exists()


def test_safe_globals_allowlist_user_classes():
    buffer = _buffer(save, {"point": _Point(3)})
    with pytest.raises(pickle.UnpicklingError, match="_Point"):
        load(buffer)
    with serialization.safe_globals([_Point]):
        buffer.seek(0)
        assert load(buffer) == {"point": _Point(3)}
    assert _Point not in serialization.get_safe_globals()
    serialization.add_safe_globals([_Point])
    try:
        buffer.seek(0)
        assert load(buffer)["point"] == _Point(3)
    finally:
        serialization.clear_safe_globals()
    with serialization.safe_globals([os.system]):  # a blocked module stays blocked
        with pytest.raises(pickle.UnpicklingError, match="blocked"):
            load(_malicious_checkpoint(_RunsShell("/nonexistent/x")))


def test_weights_only_false_maps_torch_names_and_does_not_warn():
    buffer = _buffer(save, {"w": glasstorch.ones(2), "point": _Point(1), "size": glasstorch.Size([1])})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch 2.13 does not warn for an explicit weights_only=False
        loaded = load(buffer, weights_only=False)
    assert loaded["point"] == _Point(1) and type(loaded["size"]) is glasstorch.Size
    assert isinstance(loaded["w"], glasstorch.Tensor)
    with pytest.raises(RuntimeError, match="explicit pickle_module"):
        load(buffer, pickle_module=pickle)


# --- damaged files -------------------------------------------------------------------------------

def _checkpoint_bytes():
    return _buffer(save, {"w": glasstorch.arange(6.0).reshape(2, 3),
                                     "b": Parameter(glasstorch.ones(2)), "step": 3}).getvalue()


def _load_or_error(data):
    try:
        return load(io.BytesIO(data))
    except (RuntimeError, pickle.UnpicklingError) as error:
        assert str(error), "an error must say what is wrong"
        return error


def _equal(a, b):
    return a.keys() == b.keys() and a["step"] == b["step"] and all(
        a[k].tolist() == b[k].tolist() and type(a[k]) is type(b[k]) for k in ("w", "b"))


def test_truncated_files_give_clear_errors():
    data = _checkpoint_bytes()
    for end in range(len(data)):
        result = _load_or_error(data[:end])
        assert isinstance(result, Exception), f"a file cut at {end} of {len(data)} bytes loaded"
    assert "empty" in str(_load_or_error(b""))
    assert "central directory" in str(_load_or_error(data[:-30]))


def test_flipped_bytes_give_errors_or_the_original():
    data = _checkpoint_bytes()
    original = load(io.BytesIO(data))
    for position in range(len(data)):
        damaged = bytearray(data)
        damaged[position] ^= 0xFF
        result = _load_or_error(bytes(damaged))
        # bytes nobody reads (padding, the serialization id, version fields) may change harmlessly;
        # everything that is read is checked (CRC of every record, bounds of every tensor)
        assert isinstance(result, Exception) or _equal(result, original), position


def _rezipped(pickle_bytes, source):
    """A checkpoint with ``pickle_bytes`` as data.pkl (valid CRC) and ``source``'s storages."""
    storages, key = {}, 0
    while source.has_record(f"data/{key}"):
        storages[str(key)] = np.frombuffer(source.read_record(f"data/{key}"), np.uint8)
        key += 1
    out = io.BytesIO()
    archive.write_checkpoint(out, "archive", pickle_bytes, storages, "little")
    out.seek(0)
    return out


def test_damaged_pickle_behind_a_valid_crc_gives_clean_errors():
    """The CRC stops random damage; a pickle damaged before the CRC was computed reaches the interpreter."""
    obj = {"w": glasstorch.arange(6.0).reshape(2, 3), "v": glasstorch.arange(6.0)[1::2],
           "b": Parameter(glasstorch.ones(2)), "step": 3, "l": [1.5, "x", (None, True)], "od": OrderedDict(a=1)}
    source = archive.ZipReader(_buffer(save, obj))
    data = source.read_record("data.pkl")
    outcomes = set()
    for position in range(len(data)):
        for mask in (0xFF, 0x01):
            damaged = bytearray(data)
            damaged[position] ^= mask
            try:
                load(_rezipped(bytes(damaged), source))
                outcomes.add("loaded")
            except (RuntimeError, pickle.UnpicklingError) as error:  # nothing else: no IndexError, no crash
                outcomes.add(type(error).__name__)
    assert outcomes == {"loaded", "RuntimeError", "UnpicklingError"}


def test_bad_tensor_bounds_in_pickle_are_refused():
    source = archive.ZipReader(_buffer(save, glasstorch.ones(4)))
    data = source.read_record("data.pkl")
    assert load(_rezipped(data, source)).tolist() == [1.0] * 4
    assert b"K\x04\x85" in data  # size (4,) as BININT1 4, TUPLE1
    with pytest.raises(RuntimeError, match="out of bounds for storage"):
        load(_rezipped(data.replace(b"K\x04\x85", b"K\x09\x85", 1), source))


def test_garbage_is_not_a_checkpoint():
    with pytest.raises(RuntimeError, match="not a torch checkpoint"):
        load(io.BytesIO(b"hello, this is not a checkpoint"))


# --- atomic saves ---------------------------------------------------------------------------------

def test_failed_save_leaves_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.pt"
    save({"old": glasstorch.ones(2)}, path)
    with pytest.raises(Exception):
        save({"new": lambda: None}, path)  # unpicklable
    real = archive.ZipWriter.write_record

    def fail_on_data(self, name, data):
        if name.startswith("data/"):
            raise OSError("disk full")
        return real(self, name, data)

    monkeypatch.setattr(archive.ZipWriter, "write_record", fail_on_data)
    with pytest.raises(OSError, match="disk full"):
        save({"new": glasstorch.zeros(3)}, path)
    assert list(load(path)) == ["old"]
    assert sorted(os.listdir(tmp_path)) == ["ckpt.pt"]


@pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL")
def test_save_killed_midway_leaves_previous_file(tmp_path):
    path = tmp_path / "ckpt.pt"
    save({"old": glasstorch.arange(3.0)}, path)
    script = textwrap.dedent(f"""
        import sys, time
        import glasstorch
        from glasstorch._serialization import archive
        from glasstorch.serialization import save
        archive.CHUNK_BYTES = 1 << 16
        real_write = archive.ZipWriter._write
        def slow_write(self, data):
            real_write(self, data)
            if self._offset > 1 << 20:  # well into the tensor's bytes
                print("writing", flush=True)
                time.sleep(60)
        archive.ZipWriter._write = slow_write
        save({{"new": glasstorch.zeros(1 << 20)}}, {str(path)!r})
    """)
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        line = process.stdout.readline()
        assert line == b"writing\n", process.stderr.read().decode()
        temporaries = [name for name in os.listdir(tmp_path) if name.endswith(".tmp")]
        assert temporaries and os.path.getsize(tmp_path / temporaries[0]) > 1 << 20
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    assert load(path)["old"].tolist() == [0.0, 1.0, 2.0]
    if torch is not None:
        assert torch.load(path)["old"].tolist() == [0.0, 1.0, 2.0]


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks need privileges on Windows")
def test_save_writes_through_a_symlink(tmp_path):
    (tmp_path / "real.pt").write_bytes(b"old")
    os.symlink(tmp_path / "real.pt", tmp_path / "link.pt")
    save(glasstorch.ones(1), tmp_path / "link.pt")
    assert os.path.islink(tmp_path / "link.pt") and load(tmp_path / "real.pt").tolist() == [1.0]


def test_save_keeps_file_mode(tmp_path):
    path = tmp_path / "ckpt.pt"
    save(1, path)
    os.chmod(path, 0o640)
    save(2, path)
    assert os.stat(path).st_mode & 0o777 == 0o640 and load(path) == 2


# --- the legacy format, TorchScript ----------------------------------------------------------------

@needs_torch
def test_legacy_format_loads():
    base = torch.arange(6.0)
    saved = {"base": base, "view": base[2:4], "p": torch.nn.Parameter(torch.ones(2)), "n": 7}
    buffer = _buffer(lambda obj, f: torch.save(obj, f, _use_new_zipfile_serialization=False), saved)
    data = buffer.getvalue()
    loaded = load(io.BytesIO(data))
    assert loaded["base"].tolist() == base.tolist() and loaded["view"].tolist() == [2.0, 3.0]
    assert np.shares_memory(loaded["base"]._data, loaded["view"]._data)
    assert isinstance(loaded["p"], Parameter) and loaded["n"] == 7
    for end in range(0, len(data), 7):
        assert isinstance(_load_or_error(data[:end]), Exception), end
    with pytest.raises(NotImplementedError):
        save(1, io.BytesIO(), _use_new_zipfile_serialization=False)


@needs_torch
def test_torchscript_archive_is_refused_clearly():
    scripted = torch.jit.script(torch.nn.Linear(2, 2))
    buffer = io.BytesIO()
    torch.jit.save(scripted, buffer)
    buffer.seek(0)
    with pytest.raises(RuntimeError, match="TorchScript"):
        load(buffer)


# --- safetensors -----------------------------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("dtype_name", DTYPES)
def test_safetensors_both_ways(tmp_path, dtype_name):
    st_torch = pytest.importorskip("safetensors.torch")
    array = _numpy_values(dtype_name, (3, 2))
    serialization.save_safetensors({"x": _ours(array), "col": glasstorch.from_numpy(array)[:, 1]},
                                   tmp_path / "ours.safetensors", metadata={"format": "pt"})
    theirs = st_torch.load_file(tmp_path / "ours.safetensors")
    _same(_ours(array), theirs["x"])
    _same(_ours(array[:, 1]), theirs["col"])

    st_torch.save_file({"x": _theirs(array)}, tmp_path / "theirs.safetensors")
    ours = serialization.load_safetensors(tmp_path / "theirs.safetensors")
    _same(ours["x"], _theirs(array))
    _same(load(tmp_path / "theirs.safetensors")["x"], _theirs(array))  # torch.load does this too


def test_safetensors_missing_gives_import_error(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "safetensors", None)
    with pytest.raises(ImportError, match="pip install safetensors"):
        serialization.save_safetensors({"x": glasstorch.ones(1)}, tmp_path / "x.safetensors")
    with pytest.raises(ImportError, match="pip install safetensors"):
        serialization.load_safetensors(tmp_path / "x.safetensors")
    with pytest.raises(RuntimeError, match="safetensors is not installed"):  # torch.load's words
        load(tmp_path / "x.safetensors")


def test_docstring_examples_run():
    import doctest
    result = doctest.testmod(serialization)
    assert result.attempted > 0 and result.failed == 0


def lazy_state_round_trip(lib):
    """A lazy model's state_dict saved before its first forward (d2l's read-write section does),
    loaded back, into a lazy model and into a regular one; copy_ into an uninitialized parameter."""
    seen = []
    buffer = io.BytesIO()
    lib.save(lib.nn.LazyLinear(3).state_dict(), buffer)
    buffer.seek(0)
    state = lib.load(buffer, weights_only=False)
    seen.append(sorted((k, type(v).__name__) for k, v in state.items()))
    lazy = lib.nn.LazyLinear(3)
    seen.append(str(lazy.load_state_dict(state)))
    seen.append(type(lazy.weight).__name__)
    seen.append(tuple(lazy(lib.ones(1, 2)).shape))   # it still infers its shapes at the first forward
    for attempt in (lambda: lib.nn.Linear(2, 3).load_state_dict(state),
                    lambda: lib.nn.LazyLinear(3).weight.copy_(lib.ones(2))):
        with pytest.raises(RuntimeError) as info:
            attempt()
        seen.append(str(info.value)[:60])
    return seen, buffer.getvalue()


@needs_torch
def test_uninitialized_parameters_save_and_load_like_torch():
    ours, our_file = lazy_state_round_trip(glasstorch)
    theirs, _ = lazy_state_round_trip(torch)
    assert ours == theirs
    assert ours[0] == [("bias", "UninitializedParameter"), ("weight", "UninitializedParameter")]
    # torch reads our file: the same classes, pickled as torch pickles them
    state = torch.load(io.BytesIO(our_file), weights_only=False)
    assert all(type(v) is torch.nn.parameter.UninitializedParameter for v in state.values())
