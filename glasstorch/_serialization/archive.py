"""The file around the pickle: torch's zip layout, the legacy stream, and atomic writes of paths.

``torch.save`` writes an uncompressed zip archive whose records sit in one folder named after the
file (``archive`` for file objects)::

    model/data.pkl                  the pickled object; tensors refer to storages by key
    model/.format_version           b"1"
    model/.storage_alignment        b"64": every record's data starts at a multiple of 64 bytes
    model/byteorder                 b"little"
    model/data/0, model/data/1 ...  the raw bytes of each storage, in key order
    model/version                   b"3\\n"
    model/.data/serialization_id    a random id of this save

torch writes it with miniz, which pads each local header with an extra field (``FB``, a length,
then ``Z`` bytes) so the data starts on the alignment, and follows each non-empty record with a
data descriptor. :class:`ZipWriter` writes the same bytes, because torch can locate storages by
computing those offsets instead of reading the directory (``torch.load(mmap=True)`` with
``calculate_storage_offsets``). Reading uses the standard ``zipfile`` module, which also takes
the compressed archives other tools produce.
"""
import contextlib
import os
import secrets
import stat
import struct
import zipfile
import zlib

from .._array import xp

ALIGNMENT = 64
CHUNK_BYTES = 1 << 24  # records are written and read in pieces of this size
ZIP64_LIMIT = 0xFFFFFFFF  # sizes and offsets from here on need zip64 fields (miniz's MZ_UINT32_MAX)
_IN_ZIP64 = 0xFFFFFFFF    # what a 4-byte field holds when its value is in the zip64 extra field instead


def _field(value):
    return _IN_ZIP64 if value >= ZIP64_LIMIT else value

_LOCAL_HEADER = struct.Struct("<IHHHHHIIIHH")  # signature ... file name length, extra field length
_CENTRAL_HEADER = struct.Struct("<IHHHHHHIIIHHHHHII")
_END_OF_DIRECTORY = struct.Struct("<IHHHHIIH")
_ZIP64_END_OF_DIRECTORY = struct.Struct("<IQHHIIQQQQ")
_ZIP64_LOCATOR = struct.Struct("<IIQI")
_UTF8_NAME, _DATA_DESCRIPTOR = 0x0800, 0x0008


def archive_name(path):
    """The folder name torch uses inside the archive: the file's name without its extension."""
    stem = os.path.splitext(os.path.basename(os.fspath(path)))[0]
    return stem if stem and stem.isascii() else "archive"  # torch falls back to "archive" too


class ZipWriter:
    """Writes records, one after another, as miniz does for ``torch.save``; :meth:`close` adds the directory."""

    def __init__(self, file, folder):
        self._file, self._folder = file, folder
        self._offset = 0
        self._entries = []  # (name bytes, crc, size, header offset, flags)

    def _write(self, data):
        self._file.write(data)
        self._offset += len(data)

    def write_record(self, name, data):
        """Write record ``<folder>/name`` holding ``data`` (bytes, or a contiguous array)."""
        data = memoryview(data.reshape(-1).view(xp.uint8) if isinstance(data, xp.ndarray) else data).cast("B")
        name = f"{self._folder}/{name}".encode("utf-8")
        size, header_offset = len(data), self._offset
        flags = _UTF8_NAME | (_DATA_DESCRIPTOR if size else 0)  # miniz gives empty records no descriptor
        big_size, big_offset = size >= ZIP64_LIMIT, header_offset >= ZIP64_LIMIT
        zip64 = b""
        if big_size or big_offset:
            zip64 = struct.pack("<QQ", size, size) * big_size + struct.pack("<Q", header_offset) * big_offset
            zip64 = struct.pack("<HH", 1, len(zip64)) + zip64
        header_end = header_offset + _LOCAL_HEADER.size + len(name) + len(zip64) + 4
        padding = -header_end % ALIGNMENT
        extra = zip64 + b"FB" + struct.pack("<H", padding) + b"Z" * padding
        sizes = _IN_ZIP64 if big_size else 0  # the real sizes follow in the data descriptor
        # version fields as miniz writes them: 0, and 45 (zip64) where needed
        self._write(_LOCAL_HEADER.pack(0x04034B50, 45 if zip64 else 0, flags, 0, 0, 0, 0, sizes, sizes,
                                       len(name), len(extra)) + name + extra)
        crc = 0
        for start in range(0, size, CHUNK_BYTES):
            chunk = data[start:start + CHUNK_BYTES]
            crc = zlib.crc32(chunk, crc)
            self._write(chunk)
        if size:
            wide = big_size or big_offset  # torch expects a 24-byte descriptor in either case
            self._write(struct.pack("<IIQQ" if wide else "<IIII", 0x08074B50, crc, size, size))
        self._entries.append((name, crc, size, header_offset, flags))

    def close(self):
        directory_offset = self._offset
        for name, crc, size, header_offset, flags in self._entries:
            big = [size] * 2 * (size >= ZIP64_LIMIT) + [header_offset] * (header_offset >= ZIP64_LIMIT)
            extra = struct.pack(f"<HH{len(big)}Q", 1, 8 * len(big), *big) if big else b""
            self._write(_CENTRAL_HEADER.pack(
                0x02014B50, 45 if big else 0, 45 if big else 0, flags, 0, 0, 0, crc,
                _field(size), _field(size), len(name), len(extra), 0, 0, 0, 0, _field(header_offset)) + name + extra)
        count, directory_size = len(self._entries), self._offset - directory_offset
        # miniz always ends with the zip64 end record and its locator (made by 0x31e: Unix, zip 3.0)
        end64 = self._offset
        self._write(_ZIP64_END_OF_DIRECTORY.pack(0x06064B50, _ZIP64_END_OF_DIRECTORY.size - 12, 0x31E, 45, 0, 0,
                                                 count, count, directory_size, directory_offset))
        self._write(_ZIP64_LOCATOR.pack(0x07064B50, 0, end64, 1))
        self._write(_END_OF_DIRECTORY.pack(0x06054B50, 0, 0, min(count, 0xFFFF), min(count, 0xFFFF),
                                           _field(directory_size), _field(directory_offset), 0))
        self._file.flush()


def write_checkpoint(file, folder, pickle_bytes, storages, byteorder):
    """Write a whole torch checkpoint: ``storages`` maps key -> 1-D contiguous array."""
    writer = ZipWriter(file, folder)
    writer.write_record("data.pkl", pickle_bytes)
    writer.write_record(".format_version", b"1")
    writer.write_record(".storage_alignment", str(ALIGNMENT).encode())
    writer.write_record("byteorder", byteorder.encode())
    for key, array in storages.items():
        writer.write_record(f"data/{key}", array)
    writer.write_record("version", b"3\n")
    # torch: two random 64-bit numbers in decimal
    writer.write_record(".data/serialization_id", f"{secrets.randbits(64):020d}{secrets.randbits(64):020d}".encode())
    writer.close()


def atomic_write(path, write):
    """Call ``write(file)`` on a temporary file beside ``path``, then put it in ``path``'s place at once.

    Until ``os.replace`` the old file is untouched, so a crash, a kill or an exception during the
    write leaves it whole (the crash may leave the temporary ``.<name>.<random>.tmp`` behind).
    """
    given = os.fspath(path)
    folder = os.path.dirname(given) or "."
    if not os.path.isdir(folder):
        raise RuntimeError(f"Parent directory {folder} does not exist.")  # torch's words
    if os.path.isdir(given):
        raise RuntimeError(f"open file failed because {given} is a directory")  # torch: a RuntimeError too
    target = os.path.realpath(given)  # through a symlink to its target, as writing with open() would
    folder = os.path.dirname(target)
    temporary = os.path.join(folder, f".{os.path.basename(target)}.{secrets.token_hex(6)}.tmp")
    # 0o666 less the umask, as open() would create it
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as file:
            write(file)
            file.flush()
            os.fsync(file.fileno())
        if os.path.exists(target):  # keep the permissions of the file being replaced
            os.chmod(temporary, stat.S_IMODE(os.stat(target).st_mode))
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    if hasattr(os, "O_DIRECTORY"):  # make the rename itself durable
        with contextlib.suppress(OSError):
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


# --- reading -----------------------------------------------------------------------------------

# What zipfile raises on a damaged archive (a bad header, a short read, a failed CRC...).
_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError, struct.error,
               zlib.error, NotImplementedError, UnicodeDecodeError, OverflowError, KeyError)


def corrupted(what, error=None):
    detail = f" ({type(error).__name__}: {error})" if error is not None else ""
    return RuntimeError(f"PytorchStreamReader failed reading zip archive: {what}{detail}. The checkpoint file "
                        "is corrupted or truncated (was it saved completely and transferred intact?).")


class ZipReader:
    """The records of a torch zip checkpoint in ``file`` (a seekable binary file)."""

    def __init__(self, file):
        self._file = file
        try:
            self._zip = zipfile.ZipFile(file)
            names = self._zip.namelist()
        except _ZIP_ERRORS as error:
            raise corrupted("failed finding central directory", error) from None
        if not names:
            raise corrupted("the archive is empty")
        # torch finds the folder from the first record's name
        if "/" not in names[0]:
            raise RuntimeError(f"PytorchStreamReader failed locating file data.pkl: file in archive is not in a "
                               f"subdirectory: {names[0]}")
        self.folder = names[0].split("/", 1)[0]
        self._names = set(names)
        file.seek(0, os.SEEK_END)
        self._file_size = file.tell()

    def has_record(self, name):
        return f"{self.folder}/{name}" in self._names

    def _info(self, name):
        if not self.has_record(name):
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found")
        info = self._zip.getinfo(f"{self.folder}/{name}")
        # Declared sizes are checked before anything is allocated from them: stored data cannot be
        # longer than the file, and deflate packs at most ~1032 bytes into one.
        limit = self._file_size if info.compress_type == zipfile.ZIP_STORED else 1100 * info.compress_size
        if info.compress_size > self._file_size or info.file_size > limit:
            raise corrupted(f"record {name} claims {info.file_size} bytes in a file of {self._file_size}")
        return info

    def read_record(self, name):
        info = self._info(name)
        try:
            return self._zip.read(info)  # checks the CRC
        except _ZIP_ERRORS as error:
            raise corrupted(f"failed reading record {name}", error) from None

    def read_array(self, name, nbytes, mmap_path=None):
        """Record ``name`` as a writable uint8 array of exactly ``nbytes`` (CRC checked unless mapped)."""
        info = self._info(name)
        if info.file_size != nbytes:
            raise corrupted(f"record {name} holds {info.file_size} bytes where the pickle expects {nbytes}")
        if mmap_path is not None and info.compress_type == zipfile.ZIP_STORED and nbytes:
            # copy-on-write: pages are read when touched, writes stay in memory (torch maps MAP_PRIVATE)
            return xp.memmap(mmap_path, dtype=xp.uint8, mode="c", offset=self._data_offset(info), shape=(nbytes,))
        out = xp.empty(nbytes, dtype=xp.uint8)
        view = memoryview(out)
        try:
            with self._zip.open(info) as source:
                position = 0
                while position < nbytes:
                    chunk = source.read(min(CHUNK_BYTES, nbytes - position))
                    if not chunk:
                        raise EOFError(f"{name} ends after {position} of {nbytes} bytes")
                    view[position:position + len(chunk)] = chunk
                    position += len(chunk)
                source.read(1)  # reaching the end is what makes zipfile compare the CRC
        except _ZIP_ERRORS as error:
            raise corrupted(f"failed reading record {name}", error) from None
        return out

    def _data_offset(self, info):
        self._file.seek(info.header_offset)
        header = self._file.read(_LOCAL_HEADER.size)
        if len(header) != _LOCAL_HEADER.size or header[:4] != b"PK\x03\x04":
            raise corrupted(f"bad local header for {info.filename}")
        name_length, extra_length = _LOCAL_HEADER.unpack(header)[-2:]
        return info.header_offset + _LOCAL_HEADER.size + name_length + extra_length


# --- the legacy (torch < 1.6) stream -----------------------------------------------------------

LEGACY_MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
LEGACY_PROTOCOL_VERSION = 1001


def read_legacy(file, unpickle, new_storage):
    """Load torch's pre-1.6 format: four pickles (magic number, protocol, system info, the object,
    storage keys), then each storage as an 8-byte element count and its bytes.

    ``unpickle(file, persistent_load)`` runs one pickle; ``new_storage(storage_type, key, location,
    numel)`` returns the (empty) LoadedStorage a storage reference stands for. The storages are
    filled after the object's pickle, as the data follows it in the file.
    """
    def no_storages(pid):
        raise RuntimeError("Invalid magic number; corrupt file?")

    if unpickle(file, no_storages) != LEGACY_MAGIC_NUMBER:
        raise RuntimeError("Invalid magic number; corrupt file?")
    protocol = unpickle(file, no_storages)
    if protocol != LEGACY_PROTOCOL_VERSION:
        raise RuntimeError(f"Invalid protocol version: {protocol}")
    sys_info = unpickle(file, no_storages)
    little_endian = sys_info.get("little_endian", True) if isinstance(sys_info, dict) else True

    storages = {}

    def persistent_load(pid):
        if len(pid) != 6:
            raise RuntimeError(f"corrupted checkpoint: legacy storage reference {pid!r}")
        _, storage_type, key, location, numel, view_metadata = pid
        if key not in storages:
            storages[key] = new_storage(storage_type, key, location, numel)
        storage = storages[key]
        if view_metadata is not None:  # very old files: a slice of another storage
            _, offset, size = view_metadata
            if not (isinstance(offset, int) and isinstance(size, int) and 0 <= offset <= offset + size <= numel):
                raise RuntimeError(f"corrupted checkpoint: storage view {view_metadata!r}")
            storage = type(storage)(storage.array[offset:offset + size], storage.device)
        return storage

    result = unpickle(file, persistent_load)
    keys = unpickle(file, no_storages)
    if not isinstance(keys, list) or set(keys) != set(storages):
        raise RuntimeError("corrupted checkpoint: the legacy storage list does not match the pickle")
    order = "<q" if little_endian else ">q"
    for key in keys:
        array = storages[key].array
        header = file.read(8)
        if len(header) != 8 or struct.unpack(order, header)[0] != array.size:
            raise RuntimeError(f"corrupted checkpoint: storage {key} is truncated or has the wrong size")
        raw = array.view(xp.uint8)
        if file.readinto(memoryview(raw)) != raw.size:
            raise RuntimeError(f"corrupted checkpoint: storage {key} is truncated")
        if little_endian != (xp.little_endian) and array.itemsize > 1:
            array.byteswap(inplace=True)
    return result
