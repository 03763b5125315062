"""glasstorch.hub against torch.hub: hubconf entry points, the cache directory, downloads from a local server."""
import functools
import hashlib
import http.server
import os
import textwrap
import threading
from urllib.error import URLError

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import glasstorch  # noqa: E402
from glasstorch import hub  # noqa: E402

HUBCONF = '''
"""A hubconf without any import of torch: its entry points return plain objects."""
dependencies = ["json"]


def tiny(width=2, *, scale=1.0):
    """A tiny 'model': a list of weights."""
    return [scale * i for i in range(width)]


def _private():
    return None


not_callable = 3
'''


@pytest.fixture
def hub_env(tmp_path, monkeypatch):
    """A fresh TORCH_HOME for both libraries, and no set_dir override."""
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch_home"))
    monkeypatch.setattr(hub, "_hub_dir", None)
    monkeypatch.setattr(torch.hub, "_hub_dir", None)
    return tmp_path


@pytest.fixture
def server(tmp_path):
    """An HTTP server on 127.0.0.1 serving ``tmp_path/served``; yields (base url, directory)."""
    served = tmp_path / "served"
    served.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *args: None
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", served, httpd
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def _checkpoint(path):
    """A state dict saved by real torch; returns its SHA-256."""
    sd = {"weight": torch.arange(6.0).reshape(2, 3), "bias": torch.tensor([0.5, -1.0])}
    torch.save(sd, path)
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ----------------------------------------------------------------------------- the hub directory
def test_hub_dir_is_torchs(tmp_path, monkeypatch):
    monkeypatch.setattr(hub, "_hub_dir", None)
    monkeypatch.setattr(torch.hub, "_hub_dir", None)
    for env in ({"TORCH_HOME": str(tmp_path / "th")}, {"XDG_CACHE_HOME": str(tmp_path / "xdg")}, {}):
        for name in ("TORCH_HOME", "XDG_CACHE_HOME"):
            monkeypatch.delenv(name, raising=False)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        assert hub.get_dir() == torch.hub.get_dir()
    assert hub.get_dir() == os.path.expanduser("~/.cache/torch/hub")
    hub.set_dir("~/elsewhere")
    assert hub.get_dir() == os.path.expanduser("~/elsewhere")
    assert hub.__all__ == torch.hub.__all__ and glasstorch.hub is hub


# ----------------------------------------------------------------------------- downloads
def test_load_state_dict_from_url_downloads_once_into_torchs_cache(hub_env, server, capsys):
    base, served, httpd = server
    sha = _checkpoint(served / "net-weights.pth")
    url = f"{base}/net-weights.pth"
    sd = hub.load_state_dict_from_url(url, progress=False)
    cached = hub_env / "torch_home" / "hub" / "checkpoints" / "net-weights.pth"
    assert cached.exists() and hashlib.sha256(cached.read_bytes()).hexdigest() == sha
    assert f'Downloading: "{url}" to {cached}' in capsys.readouterr().out
    assert sd["weight"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and isinstance(sd["bias"], glasstorch.Tensor)
    # torch finds glasstorch's download in the same place (and vice versa): no second download
    np.testing.assert_array_equal(torch.hub.load_state_dict_from_url(url, progress=False)["bias"].numpy(),
                                  sd["bias"].numpy())
    # with the server gone, the cached file is loaded without a network
    httpd.shutdown()
    again = hub.load_state_dict_from_url(url, progress=False)
    assert again["bias"].tolist() == [0.5, -1.0]
    assert "Downloading" not in capsys.readouterr().out


def test_check_hash(hub_env, server):
    base, served, _ = server
    sha = _checkpoint(served / "plain.pth")
    good = f"resnet-{sha[:8]}.pth"
    bad = f"resnet-{'0' * 8}.pth"
    for name in (good, bad):
        (served / name).write_bytes((served / "plain.pth").read_bytes())
    model_dir = hub_env / "models"
    assert hub.load_state_dict_from_url(f"{base}/{good}", model_dir=str(model_dir), check_hash=True,
                                        progress=False)["weight"].shape == (2, 3)
    for lib in (hub, torch.hub):
        with pytest.raises(RuntimeError, match=f'invalid hash value \\(expected "00000000", got "{sha}"\\)'):
            lib.load_state_dict_from_url(f"{base}/{bad}", model_dir=str(model_dir), check_hash=True, progress=False)
    assert sorted(os.listdir(model_dir)) == [good]          # no partial or bad file left behind
    # without check_hash the name's hex part is not checked
    assert hub.load_state_dict_from_url(f"{base}/{bad}", model_dir=str(model_dir), progress=False)["bias"].shape == (2,)
    # file_name renames the cached copy
    hub.load_state_dict_from_url(f"{base}/plain.pth", model_dir=str(model_dir), file_name="renamed.pt", progress=False)
    assert (model_dir / "renamed.pt").exists()


def test_download_url_to_file(hub_env, server):
    base, served, _ = server
    (served / "blob.bin").write_bytes(b"x" * 300_000)    # more than one read chunk
    dst = hub_env / "blob.bin"
    hub.download_url_to_file(f"{base}/blob.bin", str(dst), hash_prefix=hashlib.sha256(b"x" * 300_000).hexdigest()[:6],
                             progress=False)
    assert dst.read_bytes() == b"x" * 300_000
    with pytest.raises(Exception) as ours:
        hub.download_url_to_file(f"{base}/missing.bin", str(hub_env / "m.bin"), progress=False)
    with pytest.raises(Exception) as theirs:
        torch.hub.download_url_to_file(f"{base}/missing.bin", str(hub_env / "m.bin"), progress=False)
    assert type(ours.value) is type(theirs.value) and ours.value.code == theirs.value.code == 404
    assert not any(p.name.endswith(".partial") for p in hub_env.iterdir())


def test_offline_error_says_where_to_put_the_file(hub_env, server):
    base, served, httpd = server
    httpd.shutdown()
    httpd.server_close()                      # nothing listens on the port any more
    url = f"{base}/gone-1234abcd.pth"
    with pytest.raises(URLError) as theirs:
        torch.hub.load_state_dict_from_url(url, progress=False)
    with pytest.raises(URLError) as ours:
        hub.load_state_dict_from_url(url, progress=False)
    message = str(ours.value)
    cached = os.path.join(hub.get_dir(), "checkpoints", "gone-1234abcd.pth")
    assert f"could not download {url}" in message and cached in message and "no network" in message
    assert str(theirs.value.reason) in message
    assert not os.listdir(os.path.join(hub.get_dir(), "checkpoints"))


# ----------------------------------------------------------------------------- hubconf entry points
@pytest.fixture
def repo(tmp_path):
    d = tmp_path / "repo"
    d.mkdir()
    (d / "hubconf.py").write_text(textwrap.dedent(HUBCONF))
    return d


LOCAL_CALLS = {
    "entry point": lambda H, d: H.load(str(d), "tiny", source="local"),
    "args and kwargs": lambda H, d: H.load(str(d), "tiny", 3, source="LOCAL", scale=0.5),
    "missing entry": lambda H, d: H.load(str(d), "nothing", source="local"),
    "not callable": lambda H, d: H.load(str(d), "not_callable", source="local"),
    "model not a string": lambda H, d: H.load(str(d), 3, source="local"),
    "unknown source": lambda H, d: H.load(str(d), "tiny", source="gitlab"),
    "no hubconf": lambda H, d: H.load(str(d.parent), "tiny", source="local"),
}


def _outcome(fn):
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 - we compare whatever torch raises
        return type(e).__name__, str(e)


@pytest.mark.parametrize("case", LOCAL_CALLS)
def test_local_load_matches_torch(case, repo):
    ours = _outcome(lambda: LOCAL_CALLS[case](hub, repo))
    theirs = _outcome(lambda: LOCAL_CALLS[case](torch.hub, repo))
    assert ours[0] == theirs[0] and (ours == theirs or case == "no hubconf")


def test_missing_dependencies(repo):
    (repo / "hubconf.py").write_text('dependencies = ["json", "no_such_package_xyz"]\n\ndef tiny():\n    return 1\n')
    for lib in (hub, torch.hub):
        with pytest.raises(RuntimeError, match="Missing dependencies: no_such_package_xyz"):
            lib.load(str(repo), "tiny", source="local")


def test_github_source_from_the_cache(hub_env, repo, capsys):
    """A repository already in the hub directory (as torch leaves it) is used without a network."""
    repo_dir = os.path.join(hub.get_dir(), "someone_models_main")
    os.makedirs(hub.get_dir())
    os.rename(repo, repo_dir)
    for lib in (hub, torch.hub):
        assert lib.list("someone/models:main", trust_repo=True) == ["tiny"]
        assert lib.help("someone/models:main", "tiny", trust_repo=True) == "A tiny 'model': a list of weights."
        assert lib.load("someone/models:main", "tiny", 2, scale=3.0, trust_repo=True) == [0.0, 3.0]
        assert f"Using cache found in {repo_dir}" in capsys.readouterr().err
    # a repository already in the cache counts as trusted (torch's legacy rule): nothing was asked or added
    with open(os.path.join(hub.get_dir(), "trusted_list")) as f:
        assert f.read() == ""


def test_untrusted_repository_is_refused(hub_env, monkeypatch):
    os.makedirs(hub.get_dir(), exist_ok=True)
    for lib in (hub, torch.hub):
        monkeypatch.setattr("builtins.input", lambda prompt: "n")
        with pytest.raises(Exception, match="Untrusted repository."):
            lib.load("stranger/models:main", "tiny", trust_repo=False)
        monkeypatch.setattr("builtins.input", lambda prompt: "maybe")
        with pytest.raises(ValueError, match="Unrecognized response maybe."):
            lib.load("stranger/models:main", "tiny", trust_repo="check")
