"""torch.hub, the part that fetches and caches weight files: ``get_dir``, ``set_dir``,
``download_url_to_file``, ``load_state_dict_from_url``.

Files live where torch keeps them, so torch and glasstorch share one cache::

    $TORCH_HOME/hub/checkpoints/<file name from the URL>      ($TORCH_HOME defaults to
                                                              $XDG_CACHE_HOME/torch, i.e. ~/.cache/torch)

``torch.hub.load`` (running a repository's hubconf.py from GitHub) is not here.
"""
import hashlib
import os
import re
import shutil
import sys
import uuid
import warnings
from urllib.parse import urlparse
from urllib.request import Request, urlopen

__all__ = ["download_url_to_file", "get_dir", "load_state_dict_from_url", "set_dir"]

HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")   # resnet18-f37072fd.pth: the name carries its SHA-256's start
ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"
READ_DATA_CHUNK = 128 * 1024

_hub_dir = None


def _get_torch_home():
    return os.path.expanduser(os.getenv(ENV_TORCH_HOME, os.path.join(os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR),
                                                                      "torch")))


def get_dir():
    """The hub cache directory: ``set_dir``'s, else ``$TORCH_HOME/hub``."""
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_get_torch_home(), "hub")


def set_dir(d):
    """Use `d` as the hub cache directory from now on."""
    global _hub_dir
    _hub_dir = os.path.expanduser(os.fspath(d))


def checkpoints_dir():
    """Where weight files are cached: ``get_dir()/checkpoints``."""
    return os.path.join(get_dir(), "checkpoints")


def _progress_bar(total, enabled):
    """tqdm when installed and wanted, else a bar that draws nothing."""
    if enabled:
        try:
            from tqdm import tqdm
            return tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024)
        except ImportError:
            pass
    return _NoBar()


class _NoBar:
    def update(self, n):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Download `url` to the path `dst`, through a temporary file that is renamed only when the
    download is complete (a broken download never leaves a file that looks whole). With `hash_prefix`,
    the file's SHA-256 must start with it, else RuntimeError."""
    dst = os.path.expanduser(dst)
    tmp_dst = f"{dst}.{uuid.uuid4().hex}.partial"
    request = Request(url, headers={"User-Agent": "torch.hub"})
    try:
        with open(tmp_dst, "w+b") as f, urlopen(request) as response:
            length = response.info().get_all("Content-Length")
            sha256 = hashlib.sha256() if hash_prefix is not None else None
            with _progress_bar(int(length[0]) if length else None, progress) as bar:
                while True:
                    buffer = response.read(READ_DATA_CHUNK)
                    if not buffer:
                        break
                    f.write(buffer)
                    if sha256 is not None:
                        sha256.update(buffer)
                    bar.update(len(buffer))
        if sha256 is not None:
            digest = sha256.hexdigest()
            if digest[:len(hash_prefix)] != hash_prefix:
                raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{digest}")')
        shutil.move(tmp_dst, dst)
    finally:
        if os.path.exists(tmp_dst):
            os.remove(tmp_dst)


def cached_file_for(url, model_dir=None, file_name=None):
    """The path a download of `url` is cached at: `model_dir` (default the hub's checkpoints
    directory) / `file_name` (default the URL's last path component)."""
    model_dir = checkpoints_dir() if model_dir is None else model_dir
    return os.path.join(model_dir, file_name if file_name is not None else os.path.basename(urlparse(url).path))


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True, check_hash=False,
                             file_name=None, weights_only=False):
    """Load the torch.save file at `url`, downloading it into the cache first if it is not there.
    With `check_hash`, the hex digits after the last '-' of the file name must begin its SHA-256."""
    import glasstorch
    if os.getenv("TORCH_MODEL_ZOO"):
        warnings.warn("TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    cached_file = cached_file_for(url, model_dir, file_name)
    os.makedirs(os.path.dirname(cached_file), exist_ok=True)
    if not os.path.exists(cached_file):
        sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
        match = HASH_REGEX.search(os.path.basename(cached_file)) if check_hash else None
        download_url_to_file(url, cached_file, match.group(1) if match else None, progress=progress)
    return glasstorch.load(cached_file, map_location=map_location, weights_only=weights_only)
