r"""torch.hub: models and weights from a repository's ``hubconf.py`` and from URLs, cached on disk.

* ``torch.hub.load(repo_or_dir, model, *args, source=..., **kwargs)`` imports ``hubconf.py`` from a
  local directory (``source="local"``) or from a GitHub repository (``"owner/name[:ref]"``,
  downloaded once into the hub directory) and calls its entry point ``model(*args, **kwargs)``.
  ``list`` names the entry points, ``help`` returns one's docstring.
* ``load_state_dict_from_url(url)`` downloads a checkpoint once into ``<hub dir>/checkpoints`` and
  loads it with ``torch.load`` (glasstorch reads torch's checkpoint format). With ``check_hash``
  the file name's ``-<hex>.`` part must prefix the file's SHA-256, as torch checks.
* The hub directory is the one torch uses, so files torch downloaded are found:
  ``$TORCH_HOME/hub``, by default ``$XDG_CACHE_HOME/torch/hub`` or ``~/.cache/torch/hub``
  (``get_dir``/``set_dir``).

This is torch 2.13's ``torch/hub.py``. One addition: when a download fails for want of a network,
the ``URLError`` (of the same class, so ``except URLError`` still catches it) says which file was
wanted and where to put it by hand to load it without a network.
"""
import contextlib
import errno
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import uuid
import warnings
import zipfile
from pathlib import Path
from urllib.error import HTTPError, URLError
from urllib.parse import urlparse
from urllib.request import Request, urlopen

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load", "load_state_dict_from_url", "set_dir"]

# matches bfd8deac from resnet18-bfd8deac.pth
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
_PATH_SEP_PATTERN = re.compile(r"[/\\]")

_TRUSTED_REPO_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")
ENV_GITHUB_TOKEN = "GITHUB_TOKEN"
ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"
VAR_DEPENDENCY = "dependencies"
MODULE_HUBCONF = "hubconf.py"
READ_DATA_CHUNK = 128 * 1024
_hub_dir = None


class _Faketqdm:
    """A progress bar on stderr, for when tqdm is not installed (torch's fallback)."""

    def __init__(self, total=None, disable=False, unit=None, *args, **kwargs):
        self.total = total
        self.disable = disable
        self.n = 0

    def update(self, n):
        if self.disable:
            return
        self.n += n
        if self.total is None:
            sys.stderr.write(f"\r{self.n:.1f} bytes")
        else:
            sys.stderr.write(f"\r{100 * self.n / float(self.total):.1f}%")
        sys.stderr.flush()

    def set_description(self, *args, **kwargs):
        pass

    def write(self, s):
        sys.stderr.write(f"{s}\n")

    def close(self):
        self.disable = True

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if self.disable:
            return
        sys.stderr.write("\n")


def _progress_bar(**kwargs):
    try:
        from tqdm import tqdm
    except ImportError:
        return _Faketqdm(**kwargs)
    return tqdm(**kwargs)


@contextlib.contextmanager
def _add_to_sys_path(path):
    sys.path.insert(0, path)
    try:
        yield
    finally:
        sys.path.remove(path)


def _import_module(name, path):
    import importlib.util
    from importlib.abc import Loader

    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None:
        raise AssertionError(f"failed to load spec from {path}")
    module = importlib.util.module_from_spec(spec)
    if not isinstance(spec.loader, Loader):
        raise AssertionError(f"expected Loader, got {type(spec.loader)}")
    spec.loader.exec_module(module)
    return module


def _remove_if_exists(path):
    if os.path.exists(path):
        if os.path.isfile(path):
            os.remove(path)
        else:
            shutil.rmtree(path)


def _safe_extract_zip(zip_file, extract_to):
    """Extract every member, refusing absolute paths and ``..`` that would escape ``extract_to``."""
    extract_to = Path(extract_to).resolve(strict=False)
    for member in zip_file.infolist():
        filename = os.path.normpath(member.filename)
        if filename.startswith(("/", "\\")):
            raise ValueError(f"Archive entry has absolute path: {member.filename}")
        if len(filename) >= 2 and filename[1] == ":" and filename[0].isalpha():
            raise ValueError(f"Archive entry has absolute path: {member.filename}")
        if ".." in re.split(_PATH_SEP_PATTERN, filename):
            raise ValueError(f"Archive entry contains directory traversal: {member.filename}")
        out = (extract_to / filename).resolve(strict=False)
        if not out.is_relative_to(extract_to):
            raise ValueError(f"Archive entry escapes target directory: {member.filename}")
        zip_file.extract(member, extract_to)


def _git_archive_link(repo_owner, repo_name, ref):
    return f"https://github.com/{repo_owner}/{repo_name}/zipball/{ref}"


def _load_attr_from_module(module, func_name):
    if func_name not in dir(module):
        return None
    return getattr(module, func_name)


def _get_torch_home():
    return os.path.expanduser(os.getenv(ENV_TORCH_HOME,
                                        os.path.join(os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR), "torch")))


def _parse_repo_info(github):
    """``"owner/name[:ref]"`` -> (owner, name, ref); without a ref, "main" if the repository has it, else "master"."""
    if ":" in github:
        repo_info, ref = github.split(":")
    else:
        repo_info, ref = github, None
    repo_owner, repo_name = repo_info.split("/")

    if ref is None:
        # The default branch is main or master: ask GitHub, or, offline, look for either in the cache.
        try:
            with urlopen(f"https://github.com/{repo_owner}/{repo_name}/tree/main/"):
                ref = "main"
        except HTTPError as e:
            if e.code == 404:
                ref = "master"
            else:
                raise
        except URLError as e:
            for possible_ref in ("main", "master"):
                if os.path.exists(f"{get_dir()}/{repo_owner}_{repo_name}_{possible_ref}"):
                    ref = possible_ref
                    break
            if ref is None:
                raise RuntimeError("It looks like there is no internet connection and the "
                                   f"repo could not be found in the cache ({get_dir()})") from e
    return repo_owner, repo_name, ref


def _read_url(url):
    with urlopen(url) as r:
        return r.read().decode(r.headers.get_content_charset("utf-8"))


def _validate_not_a_forked_repo(repo_owner, repo_name, ref):
    """Check ``ref`` is a branch, tag or commit of the repository itself (not of a fork of it)."""
    headers = {"Accept": "application/vnd.github.v3+json"}
    token = os.environ.get(ENV_GITHUB_TOKEN)
    if token is not None:
        headers["Authorization"] = f"token {token}"
    for url_prefix in (f"https://api.github.com/repos/{repo_owner}/{repo_name}/branches",
                       f"https://api.github.com/repos/{repo_owner}/{repo_name}/tags"):
        page = 0
        while True:
            page += 1
            url = f"{url_prefix}?per_page=100&page={page}"
            try:
                response = json.loads(_read_url(Request(url, headers=headers)))
            except HTTPError:
                headers.pop("Authorization", None)   # a bad token: retry without it
                response = json.loads(_read_url(Request(url, headers=headers)))
            if not response:
                break
            for br in response:
                if br["name"] == ref or br["commit"]["sha"].startswith(ref):
                    return
    raise ValueError(f"Cannot find {ref} in https://github.com/{repo_owner}/{repo_name}. "
                     "If it's a commit from a forked repo, please call hub.load() with forked repo directly.")


def _get_cache_or_reload(github, force_reload, trust_repo, verbose=True, skip_validation=False):
    """The local directory of a GitHub repository: ``<hub dir>/<owner>_<name>_<ref>``, downloaded if absent."""
    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    repo_owner, repo_name, ref = _parse_repo_info(github)
    # A ref like "fix/bug" must not become a subdirectory.
    normalized_br = ref.replace("/", "_")
    owner_name_branch = "_".join([repo_owner, repo_name, normalized_br])
    repo_dir = os.path.join(hub_dir, owner_name_branch)
    _check_repo_is_trusted(repo_owner, repo_name, owner_name_branch, trust_repo=trust_repo)

    use_cache = (not force_reload) and os.path.exists(repo_dir)
    if use_cache:
        if verbose:
            sys.stderr.write(f"Using cache found in {repo_dir}\n")
    else:
        if not skip_validation:
            _validate_not_a_forked_repo(repo_owner, repo_name, ref)
        cached_file = os.path.join(hub_dir, normalized_br + ".zip")
        _remove_if_exists(cached_file)
        try:
            url = _git_archive_link(repo_owner, repo_name, ref)
            sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
            download_url_to_file(url, cached_file, progress=False)
        except HTTPError as err:
            if err.code == 300:
                warnings.warn(
                    f"The ref {ref} is ambiguous. Perhaps it is both a tag and a branch in the repo? "
                    "Torchhub will now assume that it's a branch. "
                    "You can disambiguate tags and branches by explicitly passing refs/heads/branch_name or "
                    "refs/tags/tag_name as the ref. That might require using skip_validation=True.", stacklevel=2)
                url = _git_archive_link(repo_owner, repo_name, ref=f"refs/heads/{ref}")
                download_url_to_file(url, cached_file, progress=False)
            else:
                raise

        with zipfile.ZipFile(cached_file) as cached_zipfile:
            extraced_repo_name = cached_zipfile.infolist()[0].filename
            extracted_repo = os.path.join(hub_dir, extraced_repo_name)
            _remove_if_exists(extracted_repo)
            _safe_extract_zip(cached_zipfile, hub_dir)
        _remove_if_exists(cached_file)
        _remove_if_exists(repo_dir)
        shutil.move(extracted_repo, repo_dir)   # rename the repo
    return repo_dir


def _check_repo_is_trusted(repo_owner, repo_name, owner_name_branch, trust_repo):
    """Ask before running a repository's code for the first time, as torch does (``trust_repo``)."""
    hub_dir = get_dir()
    filepath = os.path.join(hub_dir, "trusted_list")
    if not os.path.exists(filepath):
        Path(filepath).touch()
    with open(filepath) as file:
        trusted_repos = tuple(line.strip() for line in file)

    # repos downloaded before trust_repo existed count as trusted
    trusted_repos_legacy = next(os.walk(hub_dir))[1]

    owner_name = "_".join([repo_owner, repo_name])
    is_trusted = (owner_name in trusted_repos or owner_name_branch in trusted_repos_legacy
                  or repo_owner in _TRUSTED_REPO_OWNERS)

    if (trust_repo is False) or (trust_repo == "check" and not is_trusted):
        response = input(
            f"The repository {owner_name} does not belong to the list of trusted repositories and as such cannot "
            "be downloaded. Do you trust this repository and wish to add it to the trusted list of repositories "
            "(y/N)?")
        if response.lower() in ("y", "yes"):
            if is_trusted:
                print("The repository is already trusted.")
        elif response.lower() in ("n", "no", ""):
            raise Exception("Untrusted repository.")  # noqa: TRY002 - torch's exception
        else:
            raise ValueError(f"Unrecognized response {response}.")

    if not is_trusted:
        with open(filepath, "a") as file:
            file.write(owner_name + "\n")


def _check_module_exists(name):
    import importlib.util
    return importlib.util.find_spec(name) is not None


def _check_dependencies(m):
    dependencies = _load_attr_from_module(m, VAR_DEPENDENCY)
    if dependencies is not None:
        missing_deps = [pkg for pkg in dependencies if not _check_module_exists(pkg)]
        if missing_deps:
            raise RuntimeError(f"Missing dependencies: {', '.join(missing_deps)}")


def _load_entry_from_hubconf(m, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    # hubconf's ``dependencies = [...]`` names the packages its entry points need
    _check_dependencies(m)
    func = _load_attr_from_module(m, model)
    if func is None or not callable(func):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return func


def _import_hubconf(repo_dir):
    with _add_to_sys_path(repo_dir):
        return _import_module(MODULE_HUBCONF, os.path.join(repo_dir, MODULE_HUBCONF))


# ----------------------------------------------------------------------------- the hub directory
def get_dir():
    """The hub directory: ``set_dir``'s, else ``$TORCH_HOME/hub`` (default ``~/.cache/torch/hub``)."""
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_get_torch_home(), "hub")


def set_dir(d):
    """Use ``d`` as the hub directory (models and checkpoints) from now on."""
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


# ----------------------------------------------------------------------------- hubconf entry points
def list(github, force_reload=False, skip_validation=False, trust_repo="check", verbose=True):  # noqa: A001
    """The entry points of a GitHub repository's ``hubconf.py``: its public callables."""
    repo_dir = _get_cache_or_reload(github, force_reload, trust_repo, verbose=verbose, skip_validation=skip_validation)
    hub_module = _import_hubconf(repo_dir)
    return [f for f in dir(hub_module) if callable(getattr(hub_module, f)) and not f.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False, trust_repo="check"):  # noqa: A001
    """The docstring of entry point ``model`` of a GitHub repository's ``hubconf.py``."""
    repo_dir = _get_cache_or_reload(github, force_reload, trust_repo, verbose=True, skip_validation=skip_validation)
    hub_module = _import_hubconf(repo_dir)
    entry = _load_entry_from_hubconf(hub_module, model)
    return entry.__doc__


def load(repo_or_dir, model, *args, source="github", trust_repo="check", force_reload=False, verbose=True,
         skip_validation=False, **kwargs):
    """Call entry point ``model(*args, **kwargs)`` of a GitHub repository's or a local directory's ``hubconf.py``.

    Args:
        repo_or_dir (str): ``"owner/name[:ref]"`` for ``source="github"``, a directory for ``"local"``.
        model (str): the entry point's name.
        source (str): ``"github"`` (default) or ``"local"``.
        trust_repo (bool, str or None): ``"check"`` asks before running a repository not trusted yet,
            True trusts it, False always asks (GitHub only).
        force_reload (bool): download the repository again even if it is cached.

    Example::

        model = torch.hub.load("path/to/repo", "resnet_tiny", source="local", num_classes=10)
    """
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        repo_or_dir = _get_cache_or_reload(repo_or_dir, force_reload, trust_repo, verbose=verbose,
                                           skip_validation=skip_validation)
    return _load_local(repo_or_dir, model, *args, **kwargs)


def _load_local(hubconf_dir, model, *args, **kwargs):
    with _add_to_sys_path(hubconf_dir):
        hub_module = _import_module(MODULE_HUBCONF, os.path.join(hubconf_dir, MODULE_HUBCONF))
        entry = _load_entry_from_hubconf(hub_module, model)
        model = entry(*args, **kwargs)
    return model


# ----------------------------------------------------------------------------- downloads
def _offline_error(error, url, dst):
    """The URLError of a failed connection, with what was wanted and how to do without a network."""
    reason = error.reason if isinstance(error, URLError) else error
    return URLError(f"{reason} — could not download {url} (no network?). To use it offline, put the file at "
                    f"{dst} (the cache torch.hub reads).")


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Download ``url`` to the file ``dst`` (through a temporary file, so a failed download leaves nothing).

    Args:
        hash_prefix (str, optional): if given, the file's SHA-256 must start with it (RuntimeError otherwise).
        progress (bool): show a progress bar on stderr.
    """
    dst = os.path.expanduser(dst)
    for _ in range(tempfile.TMP_MAX):
        tmp_dst = dst + "." + uuid.uuid4().hex + ".partial"
        try:
            f = open(tmp_dst, "w+b")  # noqa: SIM115
        except FileExistsError:
            continue
        break
    else:
        raise FileExistsError(errno.EEXIST, "No usable temporary file name found")

    req = Request(url, headers={"User-Agent": "torch.hub"})
    try:
        try:
            u = urlopen(req)
        except HTTPError:
            raise
        except (URLError, ConnectionError) as e:
            raise _offline_error(e, url, dst) from e
        with u:
            meta = u.info()
            content_length = meta.get_all("Content-Length")
            file_size = int(content_length[0]) if content_length else None
            sha256 = hashlib.sha256() if hash_prefix is not None else None
            with _progress_bar(total=file_size, disable=not progress, unit="B", unit_scale=True,
                               unit_divisor=1024) as pbar:
                while True:
                    buffer = u.read(READ_DATA_CHUNK)
                    if len(buffer) == 0:
                        break
                    f.write(buffer)
                    if sha256 is not None:
                        sha256.update(buffer)
                    pbar.update(len(buffer))
            f.close()
            if sha256 is not None and hash_prefix is not None:
                digest = sha256.hexdigest()
                if digest[:len(hash_prefix)] != hash_prefix:
                    raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{digest}")')
        shutil.move(f.name, dst)
    finally:
        f.close()
        if os.path.exists(f.name):
            os.remove(f.name)


def _is_legacy_zip_format(filename):
    """Checkpoints of torch < 1.6 were sometimes zipped alone: a zip with a single file that is not torch's own."""
    if zipfile.is_zipfile(filename):
        with zipfile.ZipFile(filename) as zf:
            infolist = zf.infolist()
        return len(infolist) == 1 and not infolist[0].is_dir()
    return False


def _legacy_zip_load(filename, model_dir, map_location, weights_only):
    from .serialization import load as torch_load
    warnings.warn("Falling back to the old format < 1.6. This support will be deprecated in favor of default "
                  "zipfile format introduced in 1.6. Please redo torch.save() to save it in the new zipfile format.",
                  FutureWarning, stacklevel=3)
    with zipfile.ZipFile(filename) as f:
        members = f.infolist()
        if len(members) != 1:
            raise RuntimeError("Only one file(not dir) is allowed in the zipfile")
        _safe_extract_zip(f, model_dir)
        extracted_file = os.path.join(model_dir, members[0].filename)
    return torch_load(extracted_file, map_location=map_location, weights_only=weights_only)


def cached_file_for(url, model_dir=None, file_name=None):
    """The path a download of ``url`` is cached at: ``model_dir`` (default ``<hub dir>/checkpoints``) /
    ``file_name`` (default the URL's last path part). torchvision's weights look there first."""
    model_dir = os.path.join(get_dir(), "checkpoints") if model_dir is None else model_dir
    return os.path.join(model_dir, file_name if file_name is not None else os.path.basename(urlparse(url).path))


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True, check_hash=False, file_name=None,
                             weights_only=False):
    """Load the checkpoint at ``url``, downloading it into ``model_dir`` (``<hub dir>/checkpoints``) the first time.

    Args:
        url (str): the checkpoint's URL; its last path part names the cached file (or ``file_name``).
        model_dir (str, optional): where to cache it.
        map_location: as :func:`torch.load`'s.
        progress (bool): show a progress bar while downloading.
        check_hash (bool): the file name's ``-<hex>.`` part (``resnet18-5c106cde.pth``) must prefix
            the SHA-256 of the downloaded file.
        file_name (str, optional): the cached file's name.
        weights_only (bool): as :func:`torch.load`'s (default False, as torch's hub).

    A file already in the cache is loaded without any network access.
    """
    from .serialization import load as torch_load
    if os.getenv("TORCH_MODEL_ZOO"):
        warnings.warn("TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead", stacklevel=2)

    cached_file = cached_file_for(url, model_dir, file_name)
    model_dir, filename = os.path.split(cached_file)
    os.makedirs(model_dir, exist_ok=True)
    if not os.path.exists(cached_file):
        sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
        hash_prefix = None
        if check_hash:
            r = HASH_REGEX.search(filename)
            hash_prefix = r.group(1) if r else None
        download_url_to_file(url, cached_file, hash_prefix, progress=progress)

    if _is_legacy_zip_format(cached_file):
        return _legacy_zip_load(cached_file, model_dir, map_location, weights_only)
    return torch_load(cached_file, map_location=map_location, weights_only=weights_only)
