"""The random-graph differential fuzzer (tests/fuzz_graphs.py) in CI: a fixed slice of programs.

Each seed is one random program -- common differentiable ops with broadcasting (reductions,
norms, activations, losses, products of two tensors, gathers and scatters), views (slicing,
select, transpose, view, expand, diagonal, unfold, unbind/split), advanced indexing, in-place ops
on intermediates, on views, on leaves under no_grad, chained indexing writes and in-place ops,
in-place view ops, retain_grad, detach/detach_, then backward() or autograd.grad with double
backward -- run in
torch and in glasstorch; values, gradients, node names, is_leaf, requires_grad, _version,
is_contiguous, is-a-view and errors must all agree. The same seeds run every time (main stays
green for a reason, not by luck); ``GLASSTORCH_FUZZ_SEEDS=start:stop`` runs another slice, and
``python tools/fuzz_graphs.py --minutes 10`` explores new programs for as long as asked.
"""
import os
import re

import pytest

torch = pytest.importorskip("torch")
import glasstorch as gt  # noqa: E402
import fuzz_graphs  # noqa: E402

_start, _stop = map(int, os.environ.get("GLASSTORCH_FUZZ_SEEDS", "0:400").split(":"))
SEEDS = range(_start, _stop)
CHUNK = 50


@pytest.mark.parametrize("first", range(SEEDS.start, SEEDS.stop, CHUNK),
                         ids=lambda s: f"seeds{s}-{min(s + CHUNK, SEEDS.stop) - 1}")
def test_random_programs_match_torch(first):
    failures = []
    for seed in range(first, min(first + CHUNK, SEEDS.stop)):
        program, diffs = fuzz_graphs.check(seed, torch, gt)
        if diffs:
            kind, where, what = diffs[0]
            failures.append(f"seed {seed} [{kind}] {where}: {what}\n"
                            f"  (replay: python tools/fuzz_graphs.py --seed {seed} --show)")
    assert not failures, "\n".join(failures)


def test_the_fuzzer_finds_a_planted_bug(monkeypatch):
    """The comparison is not vacuous: a wrong gradient in one op is reported as a grad difference."""
    import glasstorch.ops.pointwise as pointwise
    node = pointwise.TanhBackward0
    monkeypatch.setattr(node, "backward", lambda self, grad: grad)  # d tanh = 1: wrong
    monkeypatch.setattr(node, "_runs_formulas", False)  # (the engine calls backward, not the formula table)
    kinds, tried = set(), 0
    for seed in range(400):   # (the first programs with a tanh on the way to the loss find it)
        if "grad" in kinds or tried == 40:
            break
        if any(st[0] in ("tanh", "tanh_") for st in fuzz_graphs.generate(seed, torch)[0].steps):
            tried += 1
            kinds |= {d[0] for d in fuzz_graphs.check(seed, torch, gt)[1]}
    assert "grad" in kinds


def test_render_gives_a_runnable_torch_script():
    program, _ = fuzz_graphs.generate(7, torch)
    source = fuzz_graphs.render(program)
    assert source.startswith("import numpy as np\nimport torch\n")
    exec(compile(source, "<rendered>", "exec"), {})  # it runs as written


@pytest.mark.slow
def test_the_tool_counts_a_program_that_kills_torch_and_goes_on():
    # torch 2.13 segfaults on program 796163452986 (a double backward through stack, abs and an index):
    # the run counts it as "torch crashed" and runs the next program in a new process
    import subprocess
    import sys
    tool = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools", "fuzz_graphs.py")
    out = subprocess.run([sys.executable, tool, "--seed-start", "796163452985", "--jobs", "1", "--graphs", "3"],
                         capture_output=True, text=True, timeout=600).stdout
    assert out.startswith("3 graphs"), out
    assert re.search(r"torch crashed \(not compared\) +1 graphs", out), out
    assert "seed 796163452986: the process died (a segfault) in torch's run" in out, out


def test_the_generator_keeps_floor_and_frac_away_from_integers():
    # a last-bit difference upstream (torch's CPU sqrt is MKL's, not correctly rounded) would flip
    # frac(1 + 2e-16) = 2e-16 into frac(1 - 2e-16) = 1 (seed 796164192940); exact zeros stay allowed
    near = torch.tensor([0.5, 1.0000000000000002], dtype=torch.float64)
    assert fuzz_graphs._off_integers(None, [near]) is None
    assert fuzz_graphs._off_integers(None, [torch.tensor([0.0, 0.5, -2.5])]) == ()
    assert fuzz_graphs._off_integers(None, [torch.tensor([3.0 - 1e-7])]) is None


def test_the_generator_leaves_out_an_index_write_of_a_tensor_into_itself_torch_cannot_check():
    # x[idx] = x, x a strided (not dense) view: torch's index_put_ reads rows it has already written
    # (seed 796164156376); an element-wise op reading each element where it writes it is well defined
    base = torch.zeros(4, 4, 2, dtype=torch.float64)
    x = base.unbind(2)[0]
    assert fuzz_graphs._undefined_aliasing(x, x, fuzz_graphs.OPS["set_adv"])
    assert not fuzz_graphs._undefined_aliasing(x, x, fuzz_graphs.OPS["mul_t"])
