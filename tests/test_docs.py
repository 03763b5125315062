"""Every ```python block in README.md and docs/*.md runs as written.

The convention, for whoever writes documentation:

- A block fenced as ```python is a program a reader may paste and run: it is run here.
- A block that shows part of glasstorch's source, or a fragment that needs context it does not give
  (a model defined elsewhere, a launcher, several processes), is fenced as ```python excerpt: GitHub
  still highlights it as Python (it reads the first word), and it is not run.
- A transcript of an interactive session (`>>>` prompts followed by output) is fenced as ```pycon;
  output, diagrams and messages as ``` with no language (or ```text). Neither is run. A block with no
  language whose text parses as Python statements that call or import something is reported: label
  it, so that a reader knows whether it runs.

How blocks run: all of one file's blocks in order, in one namespace (a later block may use what an
earlier one defined, as a reader following the page does), with ``__name__ == "__main__"``, in a fresh
process started as ``python -m glasstorch run`` (so ``import torch`` is glasstorch, as the docs say a
torch program is run), in a temporary working directory. One process runs every file (each file with
a new namespace), because each start pays for ``import glasstorch``.
"""
import ast
import json
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = ["README.md"] + sorted(os.path.join("docs", f) for f in os.listdir(os.path.join(ROOT, "docs"))
                              if f.endswith(".md"))
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*(.*)$")

def blocks(relative_path):
    """[(info string, first line number of the code, code)] of the fenced blocks of a Markdown file."""
    with open(os.path.join(ROOT, relative_path), encoding="utf-8") as f:
        lines = f.read().splitlines()
    found, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = m.groups()
        j = i + 1
        while j < len(lines) and not (lines[j].strip().startswith(fence) and not lines[j].strip().strip(fence[0])):
            j += 1
        code = "\n".join(line[len(indent):] if line.startswith(indent) else line for line in lines[i + 1:j])
        found.append((info.strip(), i + 2, code))
        i = j + 1
    return found


def runnable(relative_path):
    """[(line, kind, code)]: `python` blocks run as scripts, `pycon` blocks as doctests (their printed
    output is compared, `...` elides and whitespace is normalised), in order, in one namespace per file."""
    return [(line, info, code) for info, line, code in blocks(relative_path) if info in ("python", "pycon")]


RUNNER = r'''
import doctest, json, sys, traceback
blocks, results = json.load(open(sys.argv[1])), {}
for path, file_blocks in blocks.items():
    namespace = {"__name__": "__main__"}
    for line, kind, code in file_blocks:
        try:
            if kind == "pycon":
                test = doctest.DocTestParser().get_doctest(code, namespace, f"{path}:{line}", path, line)
                report = []
                runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
                failed = runner.run(test, out=report.append, clear_globs=False).failed
                namespace.update(test.globs)        # a DocTest runs in a copy: later blocks see its names
                if failed:
                    results.setdefault(path, []).append([line, "".join(report)])
            else:
                exec(compile(code, f"{path}:{line}", "exec"), namespace)
        except BaseException:      # SystemExit and KeyboardInterrupt from a block are its failure too
            results.setdefault(path, []).append([line, traceback.format_exc(limit=-3)])
json.dump(results, open(sys.argv[2], "w"))
'''


@pytest.fixture(scope="module")
def failures(tmp_path_factory):
    """{file: [(line, traceback)]} for the blocks that raised, from one run of every file's blocks."""
    work = tmp_path_factory.mktemp("docs")
    (work / "runner.py").write_text(RUNNER)
    (work / "blocks.json").write_text(json.dumps({path: runnable(path) for path in DOCS}))
    env = dict(os.environ, MPLBACKEND="Agg")
    out = subprocess.run([sys.executable, "-m", "glasstorch", "run", "runner.py", "blocks.json", "results.json"],
                         cwd=work, capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode == 0 and (work / "results.json").exists(), out.stdout[-3000:] + out.stderr[-3000:]
    return {path: [tuple(f) for f in found] for path, found in json.loads((work / "results.json").read_text()).items()}


@pytest.mark.parametrize("path", [p for p in DOCS if runnable(p)])
def test_every_python_block_runs(path, failures):
    assert failures.get(path, []) == [], "\n\n".join(f"{path}:{line}\n{tb}" for line, tb in failures[path])


def looks_like_python(code):
    """Statements (not a lone expression such as an error message) that call or import something."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return False
    return any(isinstance(n, (ast.Call, ast.Import, ast.ImportFrom)) for n in ast.walk(tree)) and \
        not (len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr) and not isinstance(tree.body[0].value, ast.Call))


@pytest.mark.parametrize("path", DOCS)
def test_unlabelled_blocks_are_not_python(path):
    unlabelled = [line for info, line, code in blocks(path) if info in ("", "text") and looks_like_python(code)]
    assert unlabelled == [], f"{path}: label the blocks at lines {unlabelled} (python, python excerpt or pycon)"


def test_the_convention_is_known_to_the_test():
    """Every fence info string in the docs is one this test knows what to do with."""
    known = {"", "python", "python excerpt", "pycon", "text", "bash", "console", "toml", "ini", "json", "dot"}
    unknown = {(path, info) for path in DOCS for info, _, _ in blocks(path) if info not in known}
    assert unknown == set(), unknown


def test_a_transcript_that_prints_something_else_fails(tmp_path):
    """`pycon` blocks are checked, not just run: a transcript whose printed output differs is a failure."""
    (tmp_path / "runner.py").write_text(RUNNER)
    transcript = ">>> x = 2\n>>> print(x + 1)\n4\n"
    (tmp_path / "blocks.json").write_text(json.dumps({"doc.md": [(1, "python", "y = 1"), (5, "pycon", transcript),
                                                                 (9, "pycon", ">>> print(y, x)\n1 2\n")]}))
    subprocess.run([sys.executable, "runner.py", "blocks.json", "results.json"], cwd=tmp_path, check=True,
                   timeout=60)
    results = json.loads((tmp_path / "results.json").read_text())
    assert [line for line, _ in results["doc.md"]] == [5]          # the wrong one; later blocks see `x`
    assert "Expected:\n    4\nGot:\n    3" in results["doc.md"][0][1]
