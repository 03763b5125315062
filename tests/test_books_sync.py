"""The books' runner (tools/run_books.py, tools/run_programs.py) compares glasstorch's losses with torch's
only if both runs draw the same numbers: its synchronisation, run under each framework in a child
process, must give equal parameters and draws (each case a desynchronisation a book run showed)."""
import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("torch")

TOOLS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools")

PROGRAM = r'''
import gc, json, sys
sys.path.insert(0, sys.argv[2])
if sys.argv[1] == "glasstorch":
    import glasstorch
    glasstorch.as_torch()
import torch
from run_programs import synchronise_randomness
synchronise_randomness(torch)
nn, seen = torch.nn, []
# modules freed and built again (Step-by-Step ch. 8): a freed parameter's id, reused by a new one,
# must not count as already set
for width in (2, 2, 2, 3):
    module = nn.Linear(width, 2)
    module(torch.zeros(1, width))
    seen += module.weight.flatten().tolist()
    del module
    gc.collect()
# the program's own nn.init calls after the lazy shapes are known (d2l's init_cnn)
lazy = nn.LazyConv2d(2, 3)
lazy(torch.zeros(1, 2, 5, 5))
nn.init.xavier_uniform_(lazy.weight)
seen += lazy.weight.flatten().tolist()
nn.init.kaiming_normal_(lazy.weight, nonlinearity="relu")
nn.init.normal_(lazy.bias, std=0.01)
seen += lazy.weight.flatten().tolist() + lazy.bias.tolist()
# WeightedRandomSampler's multinomial draws (Step-by-Step ch. 10)
sampler = torch.utils.data.WeightedRandomSampler(torch.tensor([0.1, 0.5, 0.4]), 6)
seen += list(sampler) + torch.multinomial(torch.tensor([[1.0, 0, 2], [3, 1, 0]]), 2).flatten().tolist()
# random_split (Step-by-Step's index_splitter): torch's module calls the randperm it imported by name
seen += [list(part) for part in torch.utils.data.random_split(range(6), [4, 2])][0]
print(json.dumps(seen))
'''


def draws(framework):
    out = subprocess.run([sys.executable, "-c", PROGRAM, framework, TOOLS], capture_output=True, text=True,
                         timeout=300, env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.splitlines()[-1])


def test_synchronised_runs_draw_the_same_numbers():
    ours, theirs = draws("glasstorch"), draws("torch")
    assert len(ours) == len(theirs) == 4 * 2 * 2 + 2 + 36 * 2 + 2 + 6 + 4 + 4
    for a, b in zip(ours, theirs):
        assert a == pytest.approx(b, rel=1e-6, abs=1e-7)


def test_processes_a_glasstorch_run_starts_are_bound_too():
    """syne-tune's trial workers are Python processes of their own (``sys.executable`` on a script): in a
    glasstorch run of the books they must import glasstorch as ``torch``, not the real torch installed
    beside it (tools/books_site/sitecustomize.py, on the runs' PYTHONPATH); without the runner's variable
    a process is left alone."""
    probe = "import torch, sys; print(torch.__name__, torch.nn.Linear.__module__)"
    site = os.path.join(TOOLS, "books_site")
    base = {k: v for k, v in os.environ.items() if k != "GLASSTORCH_BOOKS_BIND"}
    base["PYTHONPATH"] = os.pathsep.join(filter(None, [site, base.get("PYTHONPATH")]))
    bound = subprocess.run([sys.executable, "-c", probe], env=dict(base, GLASSTORCH_BOOKS_BIND="1"),
                           capture_output=True, text=True, check=True).stdout.split()
    assert bound == ["glasstorch", "glasstorch.nn.modules.linear"]
    alone = subprocess.run([sys.executable, "-c", probe], env=base, capture_output=True, text=True,
                           check=True).stdout.split()
    assert alone[0] == "torch" and alone[1].startswith("torch.nn")
