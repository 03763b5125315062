"""The binding: `python -m glasstorch run`, `glasstorch.as_torch()`, `%load_ext glasstorch`.

This test process has the real torch imported (it is the oracle), so every check of a bound process
runs in a subprocess; the refusal to bind next to real torch is checked right here."""
import json
import subprocess
import sys
import textwrap

import pytest

import glasstorch
from glasstorch import _binding
from glasstorch.torch_version import TorchVersion


def python(*args, cwd, check=True):
    out = subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    if check:
        assert out.returncode == 0, out.stderr
    return out


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


# What a bound process reports about itself: identities, versions, where a library's `import torch` went.
IDENTITIES = """
    import json, sys
    import glasstorch
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.utils.data import DataLoader
    from torch import optim
    import torch.optim.lr_scheduler
    import torch.backends.cudnn
    import torchvision
    from torchvision import transforms, datasets
    from torchvision.transforms import v2
    from torchvision.models import resnet18
    from torch.utils.tensorboard import SummaryWriter
    from torch.hub import load_state_dict_from_url
    import mylib                      # a library that imports torch itself, after the binding
    facts = {
        "torch is glasstorch": torch is glasstorch,
        "F": F is glasstorch.nn.functional,
        "Linear": nn.Linear is glasstorch.nn.Linear and nn.Linear.__module__ == "glasstorch.nn.modules.linear",
        "DataLoader": DataLoader is glasstorch.utils.data.DataLoader,
        "optim": optim is glasstorch.optim and torch.optim.lr_scheduler is glasstorch.optim.lr_scheduler,
        "sys.modules alias": sys.modules["torch.nn.functional"] is sys.modules["glasstorch.nn.functional"],
        "own spec kept": glasstorch.nn.functional.__spec__.name == "glasstorch.nn.functional",
        "library got glasstorch": mylib.torch is glasstorch and mylib.F is glasstorch.nn.functional,
        "torchvision": torchvision is glasstorch.vision and transforms is glasstorch.vision.transforms
                       and v2 is glasstorch.vision.transforms.v2 and datasets.MNIST is glasstorch.vision.datasets.MNIST
                       and resnet18 is glasstorch.vision.models.resnet18 and torchvision.__version__ > "0.20",
        "tensorboard and hub": SummaryWriter is glasstorch.utils.tensorboard.SummaryWriter
                               and load_state_dict_from_url is glasstorch.hub.load_state_dict_from_url,
        "cudnn flag": (setattr(torch.backends.cudnn, "deterministic", True),
                       glasstorch.backends.cudnn.deterministic)[1],
        "version": torch.__version__,
        "torch.version": torch.version.__version__,
        "version compares": [torch.__version__ >= "1.13", torch.__version__ >= (2, 0),
                             torch.__version__ < "2.14", torch.__version__ > "2.2"],
        "argv": sys.argv, "path0": sys.path[0], "name": __name__,
    }
    print(json.dumps(facts))
"""
MYLIB = """
    import torch
    import torch.nn.functional as F
"""


def bound_facts(out):
    return json.loads(out.stdout.strip().splitlines()[-1])


def check_identities(facts):
    for key in ("torch is glasstorch", "F", "Linear", "DataLoader", "optim", "sys.modules alias", "own spec kept",
                "library got glasstorch", "cudnn flag", "torchvision", "tensorboard and hub"):
        assert facts[key] is True, key
    assert facts["version"] == facts["torch.version"] == glasstorch.version.__version__
    assert facts["version compares"] == [True, True, True, True]


def test_run_script_binds_torch_and_gives_the_script_its_argv_and_path(tmp_path):
    script = write(tmp_path / "prog" / "train.py", IDENTITIES)
    write(tmp_path / "prog" / "mylib.py", MYLIB)      # found because the script's directory is sys.path[0]
    out = python("-m", "glasstorch", "run", str(script), "--epochs", "3", "-v", cwd=tmp_path)
    facts = bound_facts(out)
    check_identities(facts)
    assert facts["argv"] == [str(script), "--epochs", "3", "-v"]
    assert facts["path0"] == str(script.parent) and facts["name"] == "__main__"


def test_run_module_form_and_exit_status(tmp_path):
    write(tmp_path / "pkg" / "__init__.py", "")
    write(tmp_path / "pkg" / "__main__.py", IDENTITIES + "    sys.exit(int(sys.argv[-1]))\n")
    write(tmp_path / "mylib.py", MYLIB)               # python -m puts the working directory first
    out = python("-m", "glasstorch", "run", "-m", "pkg", "--flag", "3", cwd=tmp_path, check=False)
    assert out.returncode == 3, out.stderr
    facts = bound_facts(out)
    check_identities(facts)
    assert facts["argv"] == [str(tmp_path / "pkg" / "__main__.py"), "--flag", "3"]
    assert facts["name"] == "__main__"


def test_an_exception_in_the_program_shows_the_users_traceback_and_exits_1(tmp_path):
    write(tmp_path / "crash.py", """\
        import torch

        def forward(x):
            return x.view(7)

        forward(torch.zeros(2, 3))
    """)
    out = python("-m", "glasstorch", "run", "crash.py", cwd=tmp_path, check=False)
    assert out.returncode == 1
    lines = out.stderr.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert lines[1].startswith('  File "') and 'crash.py", line 6, in <module>' in lines[1]  # the user's first
    assert 'crash.py", line 4, in forward' in out.stderr
    assert lines[-1].startswith("RuntimeError: shape '[7]' is invalid for input of size 6")
    assert "runpy" not in out.stderr and "_binding.py" not in out.stderr


def test_run_usage_errors(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for argv, status, words in (([], 2, "usage: python -m glasstorch run SCRIPT"), (["-m"], 2, "-m needs a module"),
                                (["missing.py"], 2, "can't open file")):
        with pytest.raises(SystemExit) as info:
            _binding.run_main(argv)             # refused before binding: safe in this process
        assert info.value.code == status and words in capsys.readouterr().err
    out = python("-m", "glasstorch", "run", "-m", "no_such_module_here", cwd=tmp_path, check=False)
    assert out.returncode == 1 and "No module named no_such_module_here" in out.stderr


def test_as_torch_in_a_program_and_what_glasstorch_lacks(tmp_path):
    write(tmp_path / "mylib.py", MYLIB)
    write(tmp_path / "prog.py", """
    import glasstorch
    assert glasstorch.as_torch() is glasstorch and glasstorch.as_torch() is glasstorch  # twice is fine
    """ + IDENTITIES + """
    try:
        import torch.export
    except ModuleNotFoundError as e:
        print(json.dumps({"name": e.name, "message": str(e)}))
    """)
    out = python("prog.py", cwd=tmp_path)
    check_identities(json.loads(out.stdout.splitlines()[0]))
    missing = json.loads(out.stdout.splitlines()[1])
    assert missing["name"] == "torch.export"
    assert missing["message"].startswith("No module named 'torch.export': glasstorch") and "has no torch.export" in \
        missing["message"]


def test_load_ext_in_ipython(tmp_path):
    pytest.importorskip("IPython")
    write(tmp_path / "mylib.py", MYLIB)
    cells = json.dumps(textwrap.dedent(IDENTITIES))
    write(tmp_path / "kernel.py", f"""\
        from IPython.core.interactiveshell import InteractiveShell
        shell = InteractiveShell.instance()
        shell.run_line_magic("load_ext", "glasstorch")
        result = shell.run_cell({cells})
        result.raise_error()
    """)
    out = python("kernel.py", cwd=tmp_path)
    check_identities(bound_facts(out))


def test_as_torch_refuses_when_real_torch_is_imported():
    pytest.importorskip("torch")                       # the oracle is imported in this process
    before = list(sys.meta_path)
    with pytest.raises(RuntimeError) as info:
        glasstorch.as_torch()
    message = str(info.value)
    assert "the real torch is already imported" in message and "python -m glasstorch run" in message
    assert "restart the" in message and "first cell" in message
    assert sys.meta_path == before and not _binding.is_bound()


def test_as_torch_refuses_a_real_torchvision_and_load_ext_says_the_same(tmp_path):
    """A torchvision that is not glasstorch's, imported before binding (here a stand-in module, in a process
    without real torch): as_torch() and %load_ext name it and leave the process unbound."""
    pytest.importorskip("IPython")
    write(tmp_path / "prog.py", """\
        import sys, types
        fake = types.ModuleType("torchvision")
        fake.__file__, fake.__version__ = "/site-packages/torchvision/__init__.py", "0.29.1"
        sys.modules["torchvision"] = fake
        import glasstorch
        from IPython.core.interactiveshell import InteractiveShell
        for bind in (glasstorch.as_torch, lambda: InteractiveShell.instance().run_line_magic("load_ext", "glasstorch")):
            try:
                bind()
                print("bound without an error")
            except RuntimeError as e:
                print(str(e).replace(chr(10), " "))
        print("bound:", glasstorch._binding.is_bound(), "torch" in sys.modules)
    """)
    lines = python("prog.py", cwd=tmp_path).stdout.strip().splitlines()
    assert lines[-1] == "bound: False False"
    for message in lines[:2]:
        assert message.startswith("glasstorch.as_torch(): the real torchvision is already imported"), message
        assert "torchvision 0.29.1 from /site-packages/torchvision/__init__.py" in message
        assert "%load_ext glasstorch" in message and "first cell" in message


def test_the_finder_maps_names_and_refuses_what_glasstorch_lacks():
    finder = _binding.TorchAliasFinder()
    assert finder.find_spec("numpy") is None           # not torch's: other finders answer
    spec = finder.find_spec("torch.nn.functional")
    assert spec.name == "torch.nn.functional" and spec.loader_state["target"] == "glasstorch.nn.functional"
    assert spec.submodule_search_locations is None
    assert finder.find_spec("torch.utils").submodule_search_locations is not None
    for name in ("torch.export", "torch.nn.no_such_thing", "torchvision.no_such_thing"):
        with pytest.raises(ModuleNotFoundError) as info:
            finder.find_spec(name)
        assert info.value.name == name and f"has no {name}" in str(info.value)


# -- torch.__version__ ---------------------------------------------------------------------------

def test_version_design():
    v = glasstorch.__version__
    assert isinstance(v, TorchVersion) and isinstance(v, str)
    assert v == "2.13.0+glasstorch.0.1.0" and v.split("+")[0] == glasstorch.version.torch_api
    assert glasstorch.version.__version__ == v and glasstorch.torch_version.__version__ is v
    assert glasstorch.version.cuda is None and glasstorch.version.hip is None
    from importlib.metadata import version
    assert version("glasstorch") == glasstorch.version.glasstorch   # pyproject's version, stated once more


def test_version_compares_as_libraries_compare_torch_releases():
    packaging = pytest.importorskip("packaging.version")
    v = glasstorch.__version__
    parsed = packaging.parse(v)
    assert parsed.public == "2.13.0" and parsed.local == "glasstorch.0.1.0"
    assert parsed >= packaging.Version("2.0") and parsed >= packaging.Version("1.13") and parsed < \
        packaging.Version("2.14")
    assert v >= packaging.Version("2.13") and packaging.Version("2.14") > v and v < packaging.Version("2.13.1")
    assert v > "2.2" and v > "1.13.1" and v >= "2.13" and v < "2.14.0.dev0" and v > (2, 12) and v >= (2, 13, 0)
    assert not v > "10" and not v < "2"
    assert tuple(int(x) for x in v.split("+")[0].split(".")[:2]) >= (1, 13)     # a common hand-rolled check
    real = pytest.importorskip("torch")
    for other in ("1.13", "2.0", "2.2.1", "2.13", "2.13.0", "2.13.0+cpu", "2.14.0a0", (2, 13), (2, 14)):
        mine = TorchVersion("2.13.0+glasstorch.0.1.0")
        theirs = real.torch_version.TorchVersion("2.13.0+glasstorch.0.1.0")
        assert [mine < other, mine <= other, mine == other, mine > other, mine >= other] == \
            [theirs < other, theirs <= other, theirs == other, theirs > other, theirs >= other], other


def test_version_ordering_matches_packaging():
    packaging = pytest.importorskip("packaging.version")
    texts = ["1.0.dev0", "1.0a1", "1.0a2.dev1", "1.0b1", "1.0rc1", "1.0", "1.0.0", "1.0+abc", "1.0+abc.5", "1.0+5",
             "1.0.post1.dev0", "1.0.post1", "1.0-2", "1.1", "1!0.5", "2.13.0+cpu", "2.13.0+glasstorch.0.1.0", "v2.13",
             "2.13.0rc3", "2.13", "10.0"]
    for a in texts:
        for b in texts:
            ours = [TorchVersion(a) < b, TorchVersion(a) == b, TorchVersion(a) > b]
            theirs = [packaging.Version(a) < packaging.Version(b), packaging.Version(a) == packaging.Version(b),
                      packaging.Version(a) > packaging.Version(b)]
            assert ours == theirs, (a, b)
    assert TorchVersion("parrot") < "zebra" and TorchVersion("parrot") != "2.0"   # not versions: as strings
    assert hash(TorchVersion("2.0")) == hash("2.0") and {TorchVersion("2.0"): 1}["2.0"] == 1


def test_torch_functional_is_the_top_level_functions():
    import glasstorch.functional as gF
    real = pytest.importorskip("torch.functional")
    assert gF.einsum is glasstorch.einsum and gF.split is glasstorch.split and gF.meshgrid is glasstorch.meshgrid
    assert set(gF.__all__) <= set(real.__all__) and {"einsum", "split", "meshgrid", "norm"} <= set(gF.__all__)
