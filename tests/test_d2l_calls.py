"""82 calls from d2l's chapters (tests/books/d2l_calls.py) run under torch and under glasstorch:
every one that runs under torch must run under glasstorch."""
import os
import subprocess
import sys

import pytest

SCRIPT = os.path.join(os.path.dirname(__file__), "books", "d2l_calls.py")


def failures(lib):
    out = subprocess.run([sys.executable, SCRIPT, lib], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert lines[-1].endswith("checked")
    return lines[:-1]


def test_every_call_torch_runs_glasstorch_runs():
    pytest.importorskip("torch")
    assert failures("torch") == []
    assert failures("glasstorch") == []
