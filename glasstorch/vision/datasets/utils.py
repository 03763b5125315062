"""Fetching and unpacking dataset files (torchvision.datasets.utils): MD5 checks, download with a
fallback from https to http, extraction of .tar/.zip archives and .gz/.bz2/.xz files."""
import bz2
import gzip
import hashlib
import lzma
import os
import pathlib
import shutil
import tarfile
import urllib.error
import zipfile

from ... import hub

__all__ = ["calculate_md5", "check_md5", "check_integrity", "download_url", "extract_archive",
           "download_and_extract_archive"]


def calculate_md5(fpath, chunk_size=1024 * 1024):
    md5 = hashlib.md5(usedforsecurity=False)
    with open(fpath, "rb") as f:
        while chunk := f.read(chunk_size):
            md5.update(chunk)
    return md5.hexdigest()


def check_md5(fpath, md5, **kwargs):
    return md5 == calculate_md5(fpath, **kwargs)


def check_integrity(fpath, md5=None):
    """The file exists and, when `md5` is given, has that MD5 digest."""
    if not os.path.isfile(fpath):
        return False
    return md5 is None or check_md5(fpath, md5)


def download_url(url, root, filename=None, md5=None, max_redirect_hops=3):
    """Download `url` into `root`/`filename` unless a file with the right MD5 is already there; an
    https URL that fails is retried over http (as torchvision does); a wrong MD5 afterwards is
    RuntimeError."""
    root = os.path.expanduser(root)
    fpath = os.fspath(os.path.join(root, filename or os.path.basename(url)))
    os.makedirs(root, exist_ok=True)
    if check_integrity(fpath, md5):
        return
    try:
        hub.download_url_to_file(url, fpath)
    except (urllib.error.URLError, OSError):
        if not url.startswith("https"):
            raise
        hub.download_url_to_file(url.replace("https:", "http:", 1), fpath)
    if not check_integrity(fpath, md5):
        raise RuntimeError("File not found or corrupted.")


def _extract_tar(from_path, to_path, compression):
    with tarfile.open(from_path, f"r:{compression[1:]}" if compression else "r") as tar:
        # the "data" filter refuses members that would land outside to_path (Python >= 3.11.4)
        tar.extractall(to_path, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))


def _extract_zip(from_path, to_path, compression):
    with zipfile.ZipFile(from_path, "r") as archive:
        archive.extractall(to_path)


_ARCHIVE_EXTRACTORS = {".tar": _extract_tar, ".zip": _extract_zip}
_COMPRESSED_FILE_OPENERS = {".bz2": bz2.open, ".gz": gzip.open, ".xz": lzma.open}
_FILE_TYPE_ALIASES = {".tbz": (".tar", ".bz2"), ".tbz2": (".tar", ".bz2"), ".tgz": (".tar", ".gz")}


def _detect_file_type(file):
    """(suffix, archive type or None, compression or None) from the file name."""
    suffixes = pathlib.Path(file).suffixes
    if not suffixes:
        raise RuntimeError(f"File '{file}' has no suffixes that could be used to detect the archive type and "
                           f"compression.")
    suffix = suffixes[-1]
    if suffix in _FILE_TYPE_ALIASES:
        return (suffix, *_FILE_TYPE_ALIASES[suffix])
    if suffix in _ARCHIVE_EXTRACTORS:
        return suffix, suffix, None
    if suffix in _COMPRESSED_FILE_OPENERS:
        if len(suffixes) > 1 and suffixes[-2] in _ARCHIVE_EXTRACTORS:
            return suffixes[-2] + suffix, suffixes[-2], suffix
        return suffix, None, suffix
    valid = sorted(set(_FILE_TYPE_ALIASES) | set(_ARCHIVE_EXTRACTORS) | set(_COMPRESSED_FILE_OPENERS))
    raise RuntimeError(f"Unknown compression or archive type: '{suffix}'.\nKnown suffixes are: '{valid}'.")


def extract_archive(from_path, to_path=None, remove_finished=False):
    """Unpack an archive into `to_path` (default: its directory), or decompress a single compressed
    file next to it (train-images-idx3-ubyte.gz -> train-images-idx3-ubyte). Returns where it went."""
    if to_path is None:
        to_path = os.path.dirname(from_path)
    suffix, archive_type, compression = _detect_file_type(from_path)
    if not archive_type:
        target = os.path.join(to_path, os.path.basename(from_path).replace(suffix, ""))
        with _COMPRESSED_FILE_OPENERS[compression](from_path, "rb") as rfh, open(target, "wb") as wfh:
            shutil.copyfileobj(rfh, wfh)
        if remove_finished:
            os.remove(from_path)
        return target
    _ARCHIVE_EXTRACTORS[archive_type](from_path, to_path, compression)
    if remove_finished:
        os.remove(from_path)
    return to_path


def download_and_extract_archive(url, download_root, extract_root=None, filename=None, md5=None,
                                 remove_finished=False):
    download_root = os.path.expanduser(download_root)
    extract_root = extract_root or download_root
    filename = filename or os.path.basename(url)
    download_url(url, download_root, filename, md5)
    archive = os.path.join(download_root, filename)
    extract_archive(archive, extract_root, remove_finished)
