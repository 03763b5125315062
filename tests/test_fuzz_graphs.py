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

import numpy as np
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


def _kinds_found(wanted, tries=40, seeds=3000):
    """The kinds of difference found in the first ``tries`` programs that ``wanted(program)`` picks
    (stopping at the first grad or value difference)."""
    kinds, tried = set(), 0
    for seed in range(seeds):
        if kinds & {"grad", "value"} or tried == tries:
            break
        if wanted(fuzz_graphs.generate(seed, torch)[0]):
            tried += 1
            kinds |= {d[0] for d in fuzz_graphs.check(seed, torch, gt)[1]}
    return kinds


def _uses(program, *ops):
    return any(st[0] in ops for st in program.steps)


@pytest.mark.parametrize("single", [False, True], ids=["float64", "float32"])
def test_the_fuzzer_finds_a_planted_wrong_formula(monkeypatch, single):
    """The comparison is not vacuous: a wrong gradient in one op is reported as a grad difference --
    in float32 programs too, where a difference must also be further from the float64 truth than
    torch's float32 result is (``fuzz_graphs._rounding``)."""
    import glasstorch.ops.pointwise as pointwise
    node = pointwise.TanhBackward0
    monkeypatch.setattr(node, "backward", lambda self, grad: grad)  # d tanh = 1: wrong
    monkeypatch.setattr(node, "_runs_formulas", False)  # (the engine calls backward, not the formula table)
    monkeypatch.setattr(node, "_hooked", False)  # (None, a formula node's, would say so too: see engine._run)
    kinds = _kinds_found(lambda program: _uses(program, "tanh", "tanh_")
                         and fuzz_graphs.computes_in_float32(program) == single)
    assert "grad" in kinds


@pytest.mark.parametrize("single", [False, True], ids=["float64", "float32"])
def test_the_fuzzer_finds_a_planted_kernel_a_tenth_of_a_percent_off(monkeypatch, single):
    # 1e-3 relative: five times the float32 tolerance, far more than float32 rounding of a sin
    sin = gt.Tensor.sin
    monkeypatch.setattr(gt.Tensor, "sin", lambda self: sin(self) * 1.001)
    kinds = _kinds_found(lambda program: _uses(program, "sin") and fuzz_graphs.computes_in_float32(program) == single)
    assert "value" in kinds


@pytest.mark.parametrize("seed", [796173557841, 796174779438])
def test_float32_rounding_of_an_ill_conditioned_program_is_not_a_finding(seed):
    # 796173557841: a float32 layer_norm of a row that erf saturated to nearly constant values (the
    # two libraries differ by 1e-4, relative); 796174779438: the double backward of normalize of a
    # 1-element float32 vector (0 in truth, 6e-5 here, 1.2e-4 in torch). In float64 both agree.
    program, diffs = fuzz_graphs.check(seed, torch, gt)
    assert fuzz_graphs.computes_in_float32(program)
    assert diffs == []


@pytest.mark.parametrize("seed", [796184083448, 796184151948, 796186496937, 796201843299, 796212396043,
                                  796212421036])
def test_programs_that_differed_once_agree(seed):
    # 796184083448: a float32 layer_norm over rows of 2 with create_graph, 5 times torch's error from the
    # truth (now torch's arithmetic, and its bits); 796184151948: a stack of unsqueezed no_grad views of
    # a transposed result (torch's cat keeps a channels-last layout); 796186496937: where() over a
    # keepdim amin of a transpose (torch's reduction result is row-major in its dims of size 1 too);
    # 796201843299: lerp_ of a float64 end into an expanded float32 self (torch's dtype error comes first);
    # 796212396043: maximum(vector_norm(x, 3, dim of size 1), x) (torch's norm of one element is |x|
    # exactly, a tie that splits the gradient; its power and root were an ulp off here);
    # 796212421036: linear(v2, v4, b) of two no_grad views whose base was written (torch reports the
    # input's view, which it folds before it takes weight.t())
    assert fuzz_graphs.check(seed, torch, gt)[1] == []


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_vector_norm_of_one_element_is_its_abs_exactly(dtype):
    """(fuzz seed 796212396043) A norm that reduces one element per result -- a dim of size 1, every
    dim of a one-element tensor -- is that element's |x|, bit for bit, as torch's kernel gives it (no
    x ** p ** (1 / p) to round or overflow); ord 0 counts it. Batched, on transposed inputs, keepdim."""
    rng = np.random.default_rng(11)
    x = rng.uniform(-20, 20, (5, 1, 4)).astype(dtype)
    x[0, 0, 0], x[1, 0, 1] = 1e30 if dtype == "float32" else 1e200, 0.0
    for ord_ in (3, 2.5, 0.5, -1, 2, 1, float("inf"), 0):
        for dims, keepdim in (((1,), False), ((1,), True), (None, False)):
            for layout in ("contiguous", "transposed"):
                def norm(lib):
                    t = lib.tensor(x)
                    if layout == "transposed":
                        t = lib.tensor(np.ascontiguousarray(np.swapaxes(x, 0, 2))).transpose(0, 2)
                    if dims is None:
                        t = t[:1, :, :1]
                    return lib.linalg.vector_norm(t, ord_, dims, keepdim)
                ours, theirs = norm(gt), norm(torch)
                assert ours.shape == tuple(theirs.shape) and str(ours.dtype) == str(theirs.dtype)
                np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=f"ord {ord_}, dims {dims}")
    # the tie it makes with its input splits maximum's gradient in half, as in torch
    grads = []
    for lib in (torch, gt):
        v = lib.tensor(x[:2], requires_grad=True)
        lib.maximum(lib.linalg.vector_norm(v.detach(), 3, 1, keepdim=True), v).sum().backward()
        grads.append(v.grad.numpy())
    np.testing.assert_array_equal(grads[1], grads[0])


def test_linear_reports_the_input_views_rebase_first():
    """(fuzz seed 796212421036) F.linear of a 1-D input with a bias folds the input (a view) before it
    takes weight.t(), as torch: where both are views made under no_grad whose base was then written,
    torch's error names the input's view, which has no grad_fn ("A view was created in no_grad mode")."""
    messages = []
    for lib in (torch, gt):
        base = lib.tensor([[0.5, -1.0], [2.0, 3.0]], dtype=lib.float64, requires_grad=True)
        with lib.no_grad():
            row = base[0]
        weight = row[None]
        with lib.no_grad():
            row.view(-1)[0] = 4.0
        with pytest.raises(RuntimeError) as info:
            lib.nn.functional.linear(row, weight, lib.tensor([0.25], dtype=lib.float64))
        messages.append(str(info.value))
    assert messages[1] == messages[0] and messages[0].startswith("A view was created in no_grad mode")


def test_torch_failing_its_own_internal_assert_is_not_a_difference_of_glasstorch():
    # 796195176861: a view made by unsqueeze_ after retain_grad(), its base then written under no_grad:
    # torch 2.13 raises "INTERNAL ASSERT FAILED" reading its grad_fn (a torch bug); glasstorch answers
    # AsStridedBackward0, torch's answer without retain_grad (tests/test_views_inplace.py). Counted apart
    # (torch_assert, not compared), never as a metadata or error difference
    diffs = fuzz_graphs.check(796195176861, torch, gt)[1]
    assert [kind for kind, _, _ in diffs] == ["torch_assert"]
    assert "AsStridedBackward0" in diffs[0][2]


def test_the_rounding_rule():
    truth = np.array([1.0, -2e-5, 0.0])
    torchs = np.array([1.0, -1e-5, 1e-4], dtype=np.float32)
    # within the float32 tolerance of the truth: glasstorch is right (torch is the one off)
    assert fuzz_graphs._rounding(np.array([1.0001, -2.5e-5, 0.0], dtype=np.float32), torchs, truth)
    # off, but no further than 4 times torch's error (here torch's worst: 1e-4 at the last element)
    assert fuzz_graphs._rounding(np.array([1.0, -2e-5, -3e-4], dtype=np.float32), torchs, truth)
    # clearly worse than torch's
    assert not fuzz_graphs._rounding(np.array([1.0, -2e-5, 6e-4], dtype=np.float32), torchs, truth)
    # a NaN (or an infinity) the truth does not have, a wrong shape, no truth: never rounding
    assert not fuzz_graphs._rounding(np.array([1.0, np.nan, 0.0], dtype=np.float32), torchs, truth)
    assert not fuzz_graphs._rounding(np.array([1.0, -2e-5], dtype=np.float32), torchs, truth)
    assert not fuzz_graphs._rounding(np.array([1.0, -2e-5, 0.0], dtype=np.float32), torchs, None)


def test_the_float64_replay_keeps_the_programs_aliasing():
    # x.float() returns x itself when x is float32 already, and x.double() copies it: the float64
    # replay must alias (and copy) as the program does, or an in-place op reaches other tensors
    program = fuzz_graphs.Program(5, [((3,), "float32", True, "rand")],
                                  [("float32", (0,), (), True), ("float64", (0,), (), True),
                                   ("mul_s", (2,), 2.0, True)], ((2,), "backward", False, ()))
    float32 = fuzz_graphs.run(torch, program)
    truth = fuzz_graphs.run(torch, program, promote=True)
    assert program.casts == {0: True, 1: False}
    assert [label for label, *_ in truth] == [label for label, *_ in float32]
    values = {label: t[1][0] for label, kind, t in truth if kind == "obs"}
    np.testing.assert_allclose(values["final value 1"] * 2, values["final value 2"])   # v2 a copy, doubled
    assert values["final value 1"].dtype == np.float64


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


def test_the_generator_keeps_atan2_and_sign_away_from_zero():
    # a value 0 in truth and rounding noise in fact (the sum of a layer_norm's outputs: 2e-16 in one
    # library, -2e-16 in the other) makes atan2(0, it) pi in one and 0 in the other (seed 796179586231)
    noise = torch.tensor([0.5, -2.2e-16], dtype=torch.float64)
    assert fuzz_graphs._off_zero(None, [torch.ones(2), noise]) is None
    assert fuzz_graphs._off_zero(None, [torch.tensor([0.0, 0.5]), torch.tensor([-0.5, 2.0])]) == ()
    assert fuzz_graphs.OPS["atan2"].choose is fuzz_graphs._atan2_inputs and fuzz_graphs.OPS["sign"].choose is fuzz_graphs._off_zero
    assert fuzz_graphs._atan2_inputs(None, [torch.ones(2), noise]) is None
    # an exact 0 where atan2's second input is <= 0: the result is the sign of that zero, which torch's
    # minimum and GEMMs do not define (seeds 796184069864, 796184098978); where it is > 0, kept
    assert fuzz_graphs._atan2_inputs(None, [torch.tensor([0.0, 0.5]), torch.tensor([-0.5, 2.0])]) is None
    assert fuzz_graphs._atan2_inputs(None, [torch.tensor(0.0), torch.tensor(0.0)]) is None
    assert fuzz_graphs._atan2_inputs(None, [torch.tensor([0.0, 0.5]), torch.tensor([0.5, -2.0])]) == ()


@pytest.mark.parametrize("requires_grad", [False, True])
def test_lerp_in_place_checks_dtypes_before_an_expanded_self_as_torch(requires_grad):
    """torch's lerp meta function checks end's and weight's dtypes before its TensorIterator refuses an
    expanded self (seed 796201843299), with or without autograd recording the write."""
    for end_dtype, weight_dtype, expect in (("float64", None, "for `end`"), ("float32", "float64", "for `weight`"),
                                            ("float32", None, "more than one element")):
        for lib in (torch, gt):
            self = lib.ones(1, 1, requires_grad=requires_grad).clone().expand(3, 3)
            weight = 0.5 if weight_dtype is None else lib.ones(1, dtype=getattr(lib, weight_dtype))
            with pytest.raises(RuntimeError, match=re.escape(expect)):
                self.lerp_(lib.ones(1, dtype=getattr(lib, end_dtype)), weight)
