"""The type stubs (glasstorch/__init__.pyi, glasstorch/_tensor.pyi) against the running package, and mypy on
a user program.

The stubs are written by hand from torch's own signatures, so they could drift from the code: the first
tests read them with `ast` and check that every name they declare exists at run time, and that every
function or method accepts the parameters its stub promises (by name where the stub lets a caller pass
them by name, by position otherwise). The mypy tests need mypy (in the test extra) and check that a
correct program gets no error and that the typical mistakes torch's stubs catch are caught here too.
"""
import ast
import inspect
import os
import subprocess
import sys
import textwrap

import pytest

import glasstorch
from glasstorch._tensor import Size, Tensor, device

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.dirname(os.path.abspath(__file__))


def stub(name):
    with open(os.path.join(ROOT, "glasstorch", name)) as f:
        return ast.parse(f.read())


def functions(body):
    """{name: [ast.FunctionDef, ...]} (overloads and property setters give several)."""
    found = {}
    for node in body:
        if isinstance(node, ast.FunctionDef):
            found.setdefault(node.name, []).append(node)
    return found


def is_property(fn):
    return any(isinstance(d, (ast.Name, ast.Attribute)) and getattr(d, "id", getattr(d, "attr", "")) in
               ("property", "setter") for d in fn.decorator_list)


def accepts_size_keyword(runtime):
    """creation functions (``_factory(sized=True)``, ``_size_keyword``) take ``size=`` although their
    signature shows ``*size``."""
    return getattr(runtime, "accepts_size_keyword", False)


def check_signature(where, fn, runtime, method):
    """What fn's stub lets a caller pass, runtime must take: each parameter that can be named, by that name
    (or through **kwargs); no more positional arguments than runtime has places for."""
    problems = []
    try:
        sig = inspect.signature(runtime)
    except (TypeError, ValueError):
        return [f"{where}: no signature to check at run time"]
    params = list(sig.parameters.values())
    if method:
        params = params[1:]
    by_name = {p.name: p for p in params}
    var_positional = any(p.kind is p.VAR_POSITIONAL for p in params)
    var_keyword = any(p.kind is p.VAR_KEYWORD for p in params)
    positional_slots = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    a = fn.args
    stub_positional = (a.posonlyargs + a.args)[1 if method else 0:]
    if not var_positional and len(stub_positional) > len(positional_slots):
        problems.append(f"{where}: the stub takes {len(stub_positional)} positional arguments, the code "
                        f"{len(positional_slots)}")
    nameable = [x.arg for x in a.args[0 if a.posonlyargs or not method else 1:]] + [x.arg for x in a.kwonlyargs]
    if fn.name.startswith("__") and fn.name.endswith("__"):
        nameable = []   # operators and protocols are called by Python's syntax, never with keywords
    for name in nameable:
        p = by_name.get(name)
        if p is not None and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            continue
        if var_keyword or (name == "size" and accepts_size_keyword(runtime)):
            continue
        problems.append(f"{where}: the stub lets callers pass {name}=, the code {sig} does not take it")
    return problems


def test_top_level_stub_names_exist_and_functions_accept_what_the_stub_promises():
    tree = stub("__init__.pyi")
    problems = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            for alias in node.names:
                if alias.asname == alias.name and not hasattr(glasstorch, alias.name):
                    problems.append(f"re-exported {alias.name} is not on glasstorch")
        elif isinstance(node, ast.AnnAssign) and not node.target.id.startswith("_"):
            if not hasattr(glasstorch, node.target.id):
                problems.append(f"{node.target.id} is not on glasstorch")
    for name, overloads in functions(tree.body).items():
        if name == "__getattr__":
            continue
        runtime = getattr(glasstorch, name, None)
        if runtime is None:
            problems.append(f"glasstorch.{name} does not exist")
            continue
        for fn in overloads:
            problems += check_signature(f"glasstorch.{name}", fn, runtime, method=False)
    assert problems == []


@pytest.mark.parametrize("cls", [Tensor, Size, device], ids=lambda c: c.__name__)
def test_class_stubs_match_the_classes(cls):
    tree = stub("_tensor.pyi")
    (node,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls.__name__]
    problems = []
    for name, overloads in functions(node.body).items():
        if name in ("__getattr__", "__init__"):
            continue
        if not hasattr(cls, name):
            problems.append(f"{cls.__name__}.{name} does not exist")
            continue
        if any(is_property(fn) for fn in overloads):
            if not isinstance(inspect.getattr_static(cls, name), property) and name not in ("T", "mT"):
                problems.append(f"{cls.__name__}.{name} is a property in the stub only")
            continue
        for fn in overloads:
            problems += check_signature(f"{cls.__name__}.{name}", fn, getattr(cls, name), method=True)
    for ann in (n for n in node.body if isinstance(n, ast.AnnAssign)):   # device.type, device.index
        if not hasattr(cls("cpu") if cls is device else cls, ann.target.id):
            problems.append(f"{cls.__name__}.{ann.target.id} does not exist")
    assert problems == []


def test_the_stubs_type_what_they_claim_to():
    """A sample of the promises, run: the stub's return types are what the calls return."""
    x = glasstorch.randn(2, 3, requires_grad=True)
    assert isinstance(x.shape, Size) and isinstance(x.shape[0], int) and isinstance(x.size(), Size)
    assert isinstance(x.size(1), int) and isinstance(x.device, device) and isinstance(x.dtype, glasstorch.dtype)
    assert isinstance(x.sum().item(), float) and isinstance(glasstorch.tensor([1]).sum().item(), int)
    assert isinstance(x.chunk(3), tuple) and isinstance(x.split(1), tuple) and isinstance(x.unbind(), tuple)
    assert isinstance(glasstorch.manual_seed(0), glasstorch.Generator) and isinstance(glasstorch.numel(x), int)
    assert isinstance(x == x, Tensor) and isinstance(x.numpy(force=True) if False else x.detach().numpy(),
                                                     __import__("numpy").ndarray)


# -- mypy ------------------------------------------------------------------------------------------

def mypy(source_files, cwd):
    """mypy on `source_files`, with glasstorch found as an installed, typed package would be: from this tree
    (an editable install's import hook is invisible to mypy), errors inside glasstorch not reported.
    Returns {file name: set of line numbers with an error}, and the report."""
    pytest.importorskip("mypy")
    config = os.path.join(cwd, "mypy.ini")
    with open(config, "w") as f:
        f.write("[mypy]\n[mypy-glasstorch.*]\nignore_errors = True\n")
    out = subprocess.run([sys.executable, "-m", "mypy", "--config-file", config, "--no-error-summary",
                          "--cache-dir", os.path.join(cwd, ".mypy_cache"), *source_files],
                         capture_output=True, text=True, cwd=cwd, env=dict(os.environ, MYPYPATH=ROOT), timeout=600)
    report = out.stdout + out.stderr
    errors = {}
    for line in report.splitlines():
        if ": error:" in line:
            path, number = line.split(":")[:2]
            errors.setdefault(os.path.basename(path), set()).add(int(number))
    return errors, report


# Mistakes torch's stubs catch: each line is an error under torch 2.13's stubs, except the last two, which
# are caught here and not by torch (its backward() and manual_seed() are unannotated).
MISTAKES = """\
    n: int = x.sum().item()
    y = torch.zeros(3, dtype="float32")
    s: str = x.shape
    z = torch.cat(x, x)
    v = x.view("a")
    k: int = x.shape
    t = torch.tensor([1.0]) + "a"
    d: torch.dtype = x.device
    g: torch.Tensor = x.grad
    u = torch.randn(3, requires_grad="yes")
    w = torch.arange("5")
    q = x.unsqueeze("0")
    r = torch.stack(x)
    m = x.sum(dim="0")
    f = torch.ones(2, 3, device=1.5)
    a = x.numpy().foo
    b: list[int] = x.size()
    h = x.to("cpu", dtype="float64")
    i = x.reshape(2.0, 3)
    e = x.transpose(0)
    cc: str = torch.can_cast(x.dtype, torch.int32)
    x.backward(retain_graph="yes")
    c = torch.manual_seed("0")
"""
MISTAKE_LINES = textwrap.dedent(MISTAKES).splitlines()
FIRST_MISTAKE = 3   # the line number of the first mistake, after the two lines of set-up


def write_programs(folder, module):
    """The user program and the mistakes, importing `module` ("glasstorch" or "torch") as torch."""
    with open(os.path.join(HERE, "typing", "user_program.py")) as f:
        source = f.read()
    if module == "torch":
        source = (source.replace("import glasstorch as torch", "import torch")
                  .replace("import glasstorch.nn.functional", "import torch.nn.functional")
                  .replace("from glasstorch", "from torch"))
        assert "import glasstorch" not in source and "from glasstorch" not in source
    names = (f"program_{module}.py", f"mistakes_{module}.py")
    (folder / names[0]).write_text(source)
    (folder / names[1]).write_text(f"import {module} as torch\nx = torch.randn(3, 4, requires_grad=True)\n" +
                                   "\n".join(MISTAKE_LINES) + "\n")
    return [str(folder / n) for n in names]


def test_mypy_passes_a_correct_program_and_catches_the_mistakes_torchs_stubs_catch(tmp_path):
    errors, report = mypy(write_programs(tmp_path, "glasstorch"), tmp_path)
    assert "program_glasstorch.py" not in errors, report
    flagged = errors.get("mistakes_glasstorch.py", set())
    missed = [line for i, line in enumerate(MISTAKE_LINES, FIRST_MISTAKE) if i not in flagged]
    assert missed == [], report


@pytest.mark.slow
def test_mypy_says_the_same_of_the_programs_on_torch(tmp_path):
    """The comparison itself, with the same programs on torch's stubs (slow: mypy reads all of torch)."""
    pytest.importorskip("torch")
    errors, report = mypy(write_programs(tmp_path, "torch"), tmp_path)
    assert "program_torch.py" not in errors, report
    assert errors["mistakes_torch.py"] == set(range(FIRST_MISTAKE, FIRST_MISTAKE + len(MISTAKE_LINES) - 2)), report
