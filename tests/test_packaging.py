"""What the wheel ships: licence and notices, the data files and their provenance, the version story.

The fast tests read pyproject.toml and the source tree; building and unpacking a real wheel
(tools/check_wheel.py) takes half a minute and runs with --runslow.
"""
import fnmatch
import os
import re
import subprocess
import sys
import tomllib

import pytest

import glasstorch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "glasstorch")


def pyproject():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)


def package_files(keep):
    found = []
    for root, dirs, files in os.walk(PACKAGE):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        found += [os.path.relpath(os.path.join(root, f), PACKAGE).replace(os.sep, "/") for f in files if keep(f)]
    return found


def test_package_data_covers_every_data_file_and_every_pattern_matches_one():
    """setuptools puts .py files of packages in the wheel by itself; anything else must match a
    package-data pattern, or a user installing the wheel does not get it (the digits, their licence)."""
    patterns = pyproject()["tool"]["setuptools"]["package-data"]["glasstorch"]
    data = package_files(lambda f: not f.endswith((".py", ".pyc")))
    assert "data/digits.npz" in data and "data/README.md" in data and "py.typed" in data
    uncovered = [f for f in data if not any(fnmatch.fnmatch(f, p) for p in patterns)]
    assert uncovered == [], f"not in the wheel: add to [tool.setuptools.package-data]: {uncovered}"
    assert all(any(fnmatch.fnmatch(f, p) for f in data) for p in patterns), patterns


def test_licence_metadata_and_files():
    project = pyproject()["project"]
    assert project["license"] == "BSD-3-Clause" and project["license-files"] == ["LICENSE", "NOTICE"]
    assert "Typing :: Typed" in project["classifiers"]
    licence = open(os.path.join(ROOT, "LICENSE")).read()
    assert licence.startswith("BSD 3-Clause License") and "Copyright (c) 2026, the glasstorch authors" in licence


def test_notice_keeps_the_upstream_notices_and_names_files_that_exist():
    notice = open(os.path.join(ROOT, "NOTICE")).read()
    assert "Copyright (c) 2016-     Facebook, Inc            (Adam Paszke)" in notice    # PyTorch's
    assert "Copyright (c) Soumith Chintala 2016" in notice                               # torchvision's
    assert notice.count("Redistribution and use in source and binary forms") == 2
    listed = re.findall(r"^\s+(glasstorch/\S+\.py)\s", notice, re.M)
    assert len(listed) > 20 and "glasstorch/hub.py" in listed and "glasstorch/optim/lbfgs.py" in listed
    assert [p for p in listed if not os.path.exists(os.path.join(ROOT, p))] == []


def test_the_digits_readme_states_provenance_and_licence():
    text = open(os.path.join(PACKAGE, "data", "README.md")).read()
    assert "CC BY 4.0" in text and "https://doi.org/10.24432/C50P49" in text and "Alpaydin" in text
    assert "BSD-3-Clause" in text                      # scikit-learn's copy, and what glasstorch's licence covers


def test_one_version_for_pip_and_one_torch_api_level():
    """pyproject reads the version from glasstorch/version.py; torch.__version__-style strings add the
    torch API level, which is the release the test oracle pins."""
    assert "version" in pyproject()["project"]["dynamic"]
    assert pyproject()["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "glasstorch.version.glasstorch"}
    from importlib.metadata import version
    assert version("glasstorch") == glasstorch.version.glasstorch
    assert glasstorch.__version__ == f"{glasstorch.version.torch_api}+glasstorch.{glasstorch.version.glasstorch}"
    test_extra = pyproject()["project"]["optional-dependencies"]["test"]
    assert f"torch=={glasstorch.version.torch_api}" in test_extra
    torch = pytest.importorskip("torch")
    assert torch.__version__.split("+")[0] == glasstorch.version.torch_api


@pytest.mark.slow
def test_the_built_wheel_holds_the_package_its_data_and_licences():
    out = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "check_wheel.py")], capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0 and "wheel OK" in out.stdout, out.stdout + out.stderr
