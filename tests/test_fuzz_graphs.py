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
