"""``save`` and ``load``: checkpoints that real PyTorch reads and writes, loaded without running code.

``glasstorch.save(obj, f)`` writes the zip format of ``torch.save`` byte for byte in layout (see
``_serialization/archive.py``), pickling tensors as torch does, so ``torch.load(f)`` reads it with
its default ``weights_only=True``. ``glasstorch.load(f)`` reads what ``torch.save`` writes (and the
pre-1.6 legacy format) into glasstorch tensors, without torch.

Safety: by default a load admits only the globals needed to rebuild tensors and plain containers
(torch's ``weights_only`` allowlist); anything else is refused with ``pickle.UnpicklingError``
naming the global, before it can run. Saving to a path is atomic: a crash mid-save leaves the
previous file whole. A damaged file gives a ``RuntimeError`` or ``UnpicklingError`` saying what is
wrong, never a partial result.

Example::

    >>> import io, glasstorch
    >>> buffer = io.BytesIO()
    >>> glasstorch.save({"w": glasstorch.ones(2, 3), "step": 7}, buffer)
    >>> _ = buffer.seek(0)
    >>> loaded = glasstorch.load(buffer)
    >>> loaded["w"].shape, loaded["step"]
    (torch.Size([2, 3]), 7)
"""
import io
import os
import pickle
import sys
import warnings

from ._serialization import archive, rebuild, unpickler
from ._serialization.pickler import TorchPickler
from ._serialization.unpickler import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals

__all__ = ["save", "load", "save_safetensors", "load_safetensors", "add_safe_globals", "safe_globals",
           "get_safe_globals", "clear_safe_globals", "DEFAULT_PROTOCOL"]

DEFAULT_PROTOCOL = 2  # torch.serialization.DEFAULT_PROTOCOL

UNSAFE_MESSAGE = ("Re-running `torch.load` with `weights_only` set to `False` will likely succeed, but it can "
                  "result in arbitrary code execution. Do it only if you got the file from a trusted source.")


def _is_path(f):
    return isinstance(f, (str, os.PathLike))


# --- save --------------------------------------------------------------------------------------

def save(obj, f, pickle_module=None, pickle_protocol=DEFAULT_PROTOCOL, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Save ``obj`` to ``f`` (a path or a writable binary file) in torch's checkpoint format.

    Tensors are stored as ``torch.save`` stores them (Parameters as Parameters; views of one NumPy
    array share one storage, which is saved whole, as torch saves a view's whole storage).
    Other objects are pickled as usual; ``torch.load``'s default ``weights_only=True`` reads
    tensors, containers, numbers, strings, ``torch.Size``, dtypes and devices.
    Saving to a path is atomic: the file is written beside it and moved into place.
    """
    if pickle_module not in (None, pickle):
        raise NotImplementedError("glasstorch.save: only the standard pickle module is supported")
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("glasstorch.save writes only the zip format (the legacy format can be loaded)")
    buffer = io.BytesIO()
    pickler = TorchPickler(buffer, pickle_protocol)
    pickler.dump(obj)
    storages = {key: storage.array for key, storage in pickler.storages.items()}

    def write(file):
        folder = archive.archive_name(f) if _is_path(f) else "archive"
        archive.write_checkpoint(file, folder, buffer.getvalue(), storages, sys.byteorder)

    if _is_path(f):
        archive.atomic_write(f, write)
    else:
        write(f)


# --- load --------------------------------------------------------------------------------------

class EmptyCheckpointError(RuntimeError, EOFError):
    """Loading an empty file: torch raises pickle's EOFError ("Ran out of input"); this one is also a
    RuntimeError, as glasstorch's other refusals of a file are, and says what is wrong."""


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Load an object saved by ``torch.save`` or ``glasstorch.save`` from ``f`` (a path or binary file).

    Args:
        map_location: where storages go, as in torch: ``'cpu'``, a device, a dict mapping saved
            locations to new ones, or ``callable(storage, location)`` returning a storage or None.
        weights_only: True (the default, None meaning True as in torch) admits only tensors,
            containers and plain values; False runs the file's pickle as is (only for trusted
            files), with torch's names mapped onto glasstorch.
        mmap: map tensor data from the file instead of reading it (``f`` must be a path).

    A path ending in ``.safetensors`` is read with :func:`load_safetensors`, as torch does.
    """
    if weights_only is None:
        weights_only = True
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    if pickle_module not in (None, pickle):
        raise NotImplementedError("glasstorch.load: only the standard pickle module is supported")
    if pickle_load_args and weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
    pickle_load_args.setdefault("encoding", "utf-8")
    if mmap and not _is_path(f):
        raise ValueError("f must be a file path in order to use the mmap argument")
    if not (map_location is None or isinstance(map_location, (str, bytes, dict)) or callable(map_location)
            or hasattr(map_location, "type")):  # torch calls whatever else it is given: 3.5 "is not callable"
        raise TypeError(f"'{type(map_location).__name__}' object is not callable")

    if _is_path(f) and os.fspath(f).endswith(".safetensors"):
        if isinstance(map_location, dict) or (callable(map_location) and not isinstance(map_location, str)
                                              and not hasattr(map_location, "type")):
            raise RuntimeError("Loading safetensors file with dict or callable map_location is not supported. "
                               "Use a device string or torch.device instead.")
        try:
            result = load_safetensors(f)
        except ImportError:
            raise RuntimeError("Attempting to load a safetensors file but safetensors is not installed. Please "
                               "install safetensors with: pip install safetensors") from None
        if map_location is not None and str(map_location) != "cpu":
            result = {name: tensor.to(str(map_location)) for name, tensor in result.items()}
        return result

    try:
        if _is_path(f):
            with open(f, "rb") as file:
                return _load_file(file, map_location, weights_only, os.fspath(f) if mmap else None,
                                  pickle_load_args)
        if not getattr(f, "seekable", lambda: False)():  # zip needs to seek: read a pipe or socket first
            f = io.BytesIO(f.read())
        return _load_file(f, map_location, weights_only, None, pickle_load_args)
    except unpickler.Refused as error:  # (a damaged file's error needs no advice about weights_only)
        raise pickle.UnpicklingError(_weights_only_message(str(error))) from None


def _weights_only_message(message):
    """torch's explanation around a refusal of the weights-only unpickler."""
    if "was not an allowed global by default" in message:
        return ("Weights only load failed. This file can still be loaded, to do so you have two options, do those "
                f"steps only if you trust the source of the checkpoint. \n\t(1) {UNSAFE_MESSAGE}\n\t(2) "
                "Alternatively, to load with `weights_only=True` please check the recommended steps in the "
                "following error message.\n\tWeightsUnpickler error: " + message)
    return f"Weights only load failed. {UNSAFE_MESSAGE}\n\n{message}"


def _load_file(file, map_location, weights_only, mmap_path, pickle_load_args):
    start = file.tell()
    magic = file.read(4)
    file.seek(start)
    if not magic:
        raise EmptyCheckpointError("glasstorch.load: the file is empty (was the checkpoint saved completely?)")

    def unpickle(data, persistent_load):
        return unpickler.unpickle(data, persistent_load, weights_only, **pickle_load_args)

    def new_storage(storage_type, location, numel, read_bytes):
        """The storage a reference ``('storage', storage_type, key, location, numel)`` stands for;
        ``read_bytes(nbytes)`` supplies its bytes as a uint8 array."""
        rebuild.storage_type_check(storage_type)
        if not isinstance(numel, int) or numel < 0 or not isinstance(location, str):
            raise pickle.UnpicklingError(f"corrupted checkpoint: storage of {numel!r} elements at {location!r}")
        dtype = storage_type.numpy_dtype
        array = read_bytes(numel * dtype.itemsize).view(dtype)
        return rebuild.restore_location(rebuild.LoadedStorage(array), location, map_location)

    if magic == b"PK\x03\x04":
        return _load_zip(archive.ZipReader(file), unpickle, new_storage, mmap_path)
    if mmap_path is not None:
        raise RuntimeError("mmap can only be used with files saved with "
                           "`torch.save(_use_new_zipfile_serialization=True), please torch.save your checkpoint "
                           "with this option in order to use mmap.")
    head = file.read(4)
    file.seek(start)
    if head[:1] != b"\x80" or head[2:4] != b"\x8a\x0a":
        # the legacy format starts with its magic number pickled: PROTO n, LONG1 of 10 bytes
        raise RuntimeError("glasstorch.load: not a torch checkpoint (neither the zip format nor the legacy "
                           "format), or a corrupted one; the tar format of torch < 0.4 is not supported either")

    size = file.seek(0, os.SEEK_END) - start
    file.seek(start)

    def allocate(nbytes):  # filled by read_legacy once the pickle is read: the data comes after it
        if nbytes > size:
            raise RuntimeError(f"corrupted checkpoint: a storage of {nbytes} bytes in a file of {size}")
        return archive.xp.empty(nbytes, dtype="uint8")

    def legacy_storage(storage_type, key, location, numel):
        storage = new_storage(storage_type, location, numel, allocate)
        if storage.device != "cpu":  # its tensors are made before its data is read: no copy to a GPU then
            raise RuntimeError("glasstorch.load: checkpoints in the legacy (torch < 1.6) format load to the CPU "
                               "only; pass map_location='cpu'")
        return storage

    return archive.read_legacy(file, unpickle, legacy_storage)


def _load_zip(reader, unpickle, new_storage, mmap_path):
    if reader.has_record("constants.pkl") or reader.has_record("code/"):
        raise RuntimeError("glasstorch.load: this is a TorchScript archive (torch.jit.save), which glasstorch "
                           "cannot load")
    byteorder = reader.read_record("byteorder") if reader.has_record("byteorder") else b"little"
    if byteorder not in (b"little", b"big"):
        raise ValueError("Unknown endianness type: " + byteorder.decode("utf-8", "replace"))
    swap = byteorder.decode() != sys.byteorder
    loaded = {}

    def persistent_load(pid):
        if len(pid) != 5:
            raise pickle.UnpicklingError(f"corrupted checkpoint: storage reference {pid!r}")
        _, storage_type, key, location, numel = pid
        if not isinstance(key, str):
            raise pickle.UnpicklingError(f"corrupted checkpoint: storage key {key!r}")
        if key not in loaded:
            def read_bytes(nbytes):
                return reader.read_array(f"data/{key}", nbytes, mmap_path)
            storage = new_storage(storage_type, location, numel, read_bytes)
            if swap and storage.array.itemsize > 1:
                storage.array.byteswap(inplace=True)
            loaded[key] = (storage_type, storage)
        saved_type, storage = loaded[key]
        if saved_type is not storage_type:
            raise pickle.UnpicklingError(f"corrupted checkpoint: storage {key} is used as both {saved_type} "
                                         f"and {storage_type}")
        return storage

    return unpickle(reader.read_record("data.pkl"), persistent_load)


# --- safetensors ---------------------------------------------------------------------------------

# safetensors dtype codes -> torch (= NumPy / ml_dtypes) dtype names
_SAFETENSORS_DTYPES = {"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16",
                       "I64": "int64", "I32": "int32", "I16": "int16", "I8": "int8", "U8": "uint8",
                       "BOOL": "bool", "U16": "uint16", "U32": "uint32", "U64": "uint64",
                       "C64": "complex64", "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2",
                       "F8_E4M3FNUZ": "float8_e4m3fnuz", "F8_E5M2FNUZ": "float8_e5m2fnuz"}


def _safetensors():
    try:
        import safetensors
        import safetensors.numpy
    except ImportError:
        raise ImportError("glasstorch's .safetensors support needs the optional package 'safetensors' "
                          "(pip install safetensors)") from None
    return safetensors


def save_safetensors(tensors, path, metadata=None):
    """Write ``{name: tensor}`` to ``path`` in the safetensors format (atomically), as
    ``safetensors.torch.save_file`` does. ``metadata`` is an optional ``{str: str}`` header."""
    from ._serialization.tensors import tensor_parts
    safetensors = _safetensors()
    if not isinstance(tensors, dict):
        raise TypeError(f"save_safetensors expects a dict of tensors, got {type(tensors).__name__}")
    arrays = {}
    for name, tensor in tensors.items():
        parts = tensor_parts(tensor)
        if not isinstance(name, str) or parts is None:
            raise TypeError(f"save_safetensors expects str keys and tensor values, got {name!r}: "
                            f"{type(tensor).__name__}")
        # the format stores each tensor whole and dense (ascontiguousarray would turn 0-dim into 1-dim)
        arrays[name] = archive.xp.asarray(parts[0], order="C")  # copies only if not C-contiguous
    data = safetensors.numpy.save(arrays, metadata=metadata)
    archive.atomic_write(path, lambda file: file.write(data))


def load_safetensors(path):
    """Read a ``.safetensors`` file into ``{name: tensor}`` (what ``safetensors.torch.load_file`` gives)."""
    from ._serialization.names import numpy_dtype
    from ._serialization.tensors import make_tensor
    safetensors = _safetensors()
    with open(path, "rb") as file:
        data = file.read()
    try:
        records = safetensors.deserialize(data)
    except Exception as error:  # SafetensorError: a bad header or offsets
        raise RuntimeError(f"glasstorch.load_safetensors: {path} is not a valid safetensors file: {error}") from None
    result = {}
    for name, record in records:
        if record["dtype"] not in _SAFETENSORS_DTYPES:
            raise RuntimeError(f"glasstorch.load_safetensors: unsupported dtype {record['dtype']} of {name}")
        dtype = numpy_dtype(_SAFETENSORS_DTYPES[record["dtype"]])
        array = archive.xp.frombuffer(record["data"], dtype=dtype).reshape(record["shape"])
        if sys.byteorder == "big":  # the format is little-endian
            array = array.byteswap()
        result[name] = make_tensor(array, False, False)
    return result

