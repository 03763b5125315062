"""Build glasstorch's wheel and check what a user installing it gets.

    python tools/check_wheel.py                 # builds with `pip wheel` into a temporary folder
    python tools/check_wheel.py dist/glasstorch-0.1.0-py3-none-any.whl

Checks, and exits 1 naming each failure:
- the wheel holds every module of the source tree and every data file (the digits and their README
  with the licence, ``py.typed``, the ``.pyi`` stubs), and nothing else (no tests, no caches);
- LICENSE and NOTICE are in the wheel's ``.dist-info/licenses``; METADATA names the licence
  (``License-Expression: BSD-3-Clause``), the version of ``glasstorch/version.py``, NumPy as the only
  requirement outside the extras, and the ``Typing :: Typed`` classifier;
- unpacked alone on ``sys.path``, the package imports from there, loads the shipped digits and finds its
  data README.
"""
import email
import fnmatch
import os
import subprocess
import sys
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def source_files():
    """Every file of the package in the source tree that belongs in a wheel (no caches)."""
    found = set()
    for root, dirs, files in os.walk(os.path.join(ROOT, "glasstorch")):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            if not name.endswith((".pyc", ".pyo")):
                found.add(os.path.relpath(os.path.join(root, name), ROOT).replace(os.sep, "/"))
    return found


def build(outdir):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", outdir, ROOT], check=True)
    (wheel,) = [f for f in os.listdir(outdir) if f.endswith(".whl")]
    return os.path.join(outdir, wheel)


def check(wheel):
    problems = []
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        (info,) = {n.split("/")[0] for n in names if n.split("/")[0].endswith(".dist-info")}
        package = {n for n in names if not n.startswith(info)}
        meta = email.message_from_bytes(z.read(f"{info}/METADATA"))
    expected = source_files()
    problems += [f"missing from the wheel: {f}" for f in sorted(expected - package)]
    problems += [f"in the wheel but not in the source tree: {f}" for f in sorted(package - expected)]
    for required in ("glasstorch/py.typed", "glasstorch/data/digits.npz", "glasstorch/data/README.md"):
        if required not in package:
            problems.append(f"the wheel lacks {required}")
    for legal in ("LICENSE", "NOTICE"):
        if f"{info}/licenses/{legal}" not in names:
            problems.append(f"the wheel lacks {info}/licenses/{legal}")
    sys.path.insert(0, ROOT)
    from glasstorch import version
    sys.path.pop(0)
    if meta["Version"] != version.glasstorch:
        problems.append(f"METADATA Version {meta['Version']} != glasstorch/version.py's {version.glasstorch}")
    if meta["License-Expression"] != "BSD-3-Clause":
        problems.append(f"METADATA License-Expression is {meta['License-Expression']!r}")
    plain = [r for r in meta.get_all("Requires-Dist", []) if "extra ==" not in r]
    if [r.split(">")[0].split("=")[0].strip() for r in plain] != ["numpy"]:
        problems.append(f"requirements outside the extras: {plain} (only numpy belongs there)")
    if "Typing :: Typed" not in meta.get_all("Classifier", []):
        problems.append("no 'Typing :: Typed' classifier")
    with tempfile.TemporaryDirectory() as unpacked:
        with zipfile.ZipFile(wheel) as z:
            z.extractall(unpacked)
        probe = ("import os, glasstorch as g; from glasstorch.datasets import load_digits;"
                 "X, y = load_digits(); d = os.path.dirname(g.__file__);"
                 "print(d, tuple(X.shape), os.path.exists(os.path.join(d, 'data', 'README.md')))")
        run = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {unpacked!r}); {probe}"],
                             capture_output=True, text=True, cwd=unpacked)
        where = os.path.join(unpacked, "glasstorch")
        if run.returncode != 0 or run.stdout.split() != [where, "(1797,", "8,", "8)", "True"]:
            problems.append(f"the unpacked wheel does not import and load its data: {run.stdout}{run.stderr}")
    return problems, sorted(package)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    with tempfile.TemporaryDirectory() as outdir:
        wheel = argv[0] if argv else build(outdir)
        problems, files = check(wheel)
        data = [f for f in files if not fnmatch.fnmatch(f, "*.py")]
        print(f"{os.path.basename(wheel)}: {len(files)} files, of which not .py: {', '.join(data)}")
    for p in problems:
        print("FAIL:", p)
    print("wheel OK" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
