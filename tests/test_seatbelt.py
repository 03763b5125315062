"""The seatbelt: every trap script in tests/traps/ reports exactly its marked (warning, line) pairs, the
clean training loops report nothing, and with the seatbelt off glasstorch is its plain self."""
import os
import re
import runpy
import subprocess
import sys
import warnings

import pytest

import glasstorch
import glasstorch.nn
from glasstorch import inspection
from glasstorch.inspection import seatbelt, TrapWarning

HERE = os.path.dirname(os.path.abspath(__file__))
TRAPS = os.path.join(HERE, "traps")
SCRIPTS = sorted(f for f in os.listdir(TRAPS) if f.endswith(".py"))
HAVE_NN = hasattr(glasstorch.nn, "Linear") and hasattr(glasstorch.nn, "Module")
_observer = sys.modules["glasstorch.inspection._observer"]


def _expectations(path):
    """{(class name, line)} from '# expect: A, B' comments; the script's flags ('needs: nn', 'raises: X')."""
    expected, flags = set(), {}
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            m = re.search(r"#\s*expect:\s*([\w, ]+)$", line.rstrip())
            if m:
                for name in m.group(1).split(","):
                    expected.add((name.strip(), lineno))
            m = re.match(r"#\s*(needs|raises):\s*(\w+)", line.strip())
            if m:
                flags[m.group(1)] = m.group(2)
            if "# modified-here" in line:
                flags["modified"] = lineno
    return expected, flags


def _run(path, **belt_kwargs):
    """Run a script under a seatbelt; returns (trap warnings, the seatbelt, the exception or None)."""
    error = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with seatbelt(**belt_kwargs) as belt:
            try:
                runpy.run_path(path, run_name="__main__")
            except Exception as e:  # noqa: BLE001 - the script's own failure is part of what is checked
                error = e
    traps = [w for w in caught if issubclass(w.category, TrapWarning)]
    # the seatbelt's own checks never warn from inside glasstorch (no NumPy overflow/invalid warnings)
    inside = [w for w in caught if os.sep + os.path.join("glasstorch", "inspection") in w.filename]
    assert not inside, [(w.category.__name__, w.filename, w.lineno, str(w.message)) for w in inside]
    return traps, belt, error


@pytest.fixture(params=["lone", "general"])
def seam_path(request):
    """Each trap both ways the seam can serve the glass: as the lone observer (``_seam._lone``: the usual
    case, no Tensor subclass taking part) and through its ``__torch_function__`` (as once some test of
    the session has defined such a subclass)."""
    import gc
    from glasstorch import _seam
    gc.collect()
    if request.param == "lone" and _seam._live_instances:
        pytest.skip("a Tensor subclass instance is alive")
    defined, _seam._subclasses_exist[0] = _seam._subclasses_exist[0], request.param == "general"
    try:
        yield request.param
    finally:
        _seam._subclasses_exist[0] = defined


@pytest.mark.parametrize("script", SCRIPTS)
def test_trap_script(script, capsys, seam_path):
    path = os.path.join(TRAPS, script)
    expected, flags = _expectations(path)
    if flags.get("needs") == "nn" and not HAVE_NN:
        pytest.skip("glasstorch.nn layers not available yet")
    traps, belt, error = _run(path)
    got = {(w.category.__name__, w.lineno) for w in traps}
    # every warning points into the user's script, never into glasstorch
    assert all(os.path.abspath(w.filename) == path for w in traps), [(w.filename, w.lineno) for w in traps]
    if "raises" in flags:
        assert type(error).__name__ == flags["raises"], error
    elif error is not None:
        raise error
    assert got == expected, "\n".join(f"{w.category.__name__}:{w.lineno}: {w.message}" for w in traps)
    # once per site
    assert len(traps) == len(got)
    for w in traps:
        assert "Fix" in str(w.message), str(w.message)   # each message says how to fix it
    if script.startswith("clean_"):
        assert belt.report().startswith("seatbelt: no traps found in ")
    else:
        assert len(belt.found) == len(expected)


def test_inplace_error_names_op_and_line():
    path = os.path.join(TRAPS, "inplace_modified_saved_value.py")
    _, flags = _expectations(path)
    for on in (False, True):   # always on: the core's check, seatbelt or not
        if on:
            _, _, error = _run(path)
        else:
            try:
                runpy.run_path(path, run_name="__main__")
                error = None
            except RuntimeError as e:
                error = e
        msg = str(error)
        assert "one of the variables needed for gradient computation has been modified by an inplace operation" in msg
        assert "mul_" in msg and f"inplace_modified_saved_value.py:{flags['modified']}" in msg


def test_messages_name_parameters_and_lines():
    traps, _, _ = _run(os.path.join(TRAPS, "cut_by_item.py"))
    (w,) = traps
    assert ".item()" in str(w.message) and "Fix:" in str(w.message)
    traps, _, _ = _run(os.path.join(TRAPS, "nan_from_log.py"))
    (w,) = traps
    msg = str(w.message)
    assert "log" in msg and "(2, 3)" in msg and "-inf" not in msg.split(":")[0]


def test_gaps_named_precisely():
    """The three gaps book-style code showed: the first NaN/inf is named where it appears (here in data
    with no graph yet, before any recorded op); a tensor re-created with torch.tensor and forced to require
    grad is named with where it was made; a list of losses is named."""
    traps, _, _ = _run(os.path.join(TRAPS, "nan_from_data_log.py"))
    (w,) = traps
    assert str(w.message).startswith("inf first appears in the forward pass here: log") and "(2, 3)" in str(w.message)
    traps, _, _ = _run(os.path.join(TRAPS, "forced_requires_grad_rewrap.py"))
    (w,) = traps
    assert "It was made by torch.tensor(...) at forced_requires_grad_rewrap.py:14" in str(w.message)
    assert "nothing uses it" in str(w.message)
    traps, _, _ = _run(os.path.join(TRAPS, "loss_kept_in_list.py"))
    (w,) = traps
    assert "the list 'losses'" in str(w.message) and "losses.append(loss.item())" in str(w.message)


@pytest.mark.skipif(not HAVE_NN, reason="glasstorch.nn layers not available yet")
def test_parameter_names_from_modules():
    traps, _, _ = _run(os.path.join(TRAPS, "cut_by_no_grad.py"))
    (w,) = traps
    assert "0.weight" in str(w.message) and "no_grad" in str(w.message)


def test_missing_zero_grad_counts_the_passes_held():
    """The message's count is the backward passes the .grad holds: after zero_grad(set_to_none=False)
    (an in-place zero_(), one version of its own) and two backward passes without it, two."""
    traps, _, _ = _run(os.path.join(TRAPS, "missing_zero_grad_after_zeroing_in_place.py"))
    (w,) = traps
    assert "summed over 2 backward passes" in str(w.message), str(w.message)
    traps, _, _ = _run(os.path.join(TRAPS, "missing_zero_grad.py"))
    (w,) = traps
    assert "summed over 2 backward passes" in str(w.message), str(w.message)


def test_accumulate_flag_silences_missing_zero_grad():
    traps, _, _ = _run(os.path.join(TRAPS, "missing_zero_grad.py"), accumulate=True)
    assert traps == []


def test_report_lists_traps_and_steps():
    _, belt, _ = _run(os.path.join(TRAPS, "total_loss_graph.py"))
    text = belt.report()
    assert text.startswith("seatbelt: 1 trap found in 4 steps:")
    assert "total_loss_graph.py:" in text and "GraphKeptAliveWarning" in text
    _, belt, _ = _run(os.path.join(TRAPS, "clean_gradient_accumulation.py"))
    assert belt.report() == "seatbelt: no traps found in 4 steps"


def test_report_printed_on_exit(capsys):
    with seatbelt(report=True):
        w = glasstorch.ones(2, requires_grad=True)
        (w * 2).sum().backward()
    assert capsys.readouterr().out.strip() == "seatbelt: no traps found in 1 backward pass"


def test_once_per_site_and_again_in_a_new_seatbelt():
    path = os.path.join(TRAPS, "missing_zero_grad.py")
    first, _, _ = _run(path)
    second, _, _ = _run(path)
    assert len(first) == len(second) == 1


def test_warning_classes():
    names = ["MissingZeroGradWarning", "ProbabilitiesToCrossEntropyWarning", "TrainModeInferenceWarning",
             "GraphKeptAliveWarning", "GraphCutWarning", "ForcedRequiresGradWarning", "NonLeafParameterWarning",
             "NonFiniteWarning"]
    for name in names:
        cls = getattr(inspection, name)
        assert issubclass(cls, TrapWarning) and issubclass(cls, UserWarning)
    covered = set()
    for script in SCRIPTS:
        covered |= {n for n, _ in _expectations(os.path.join(TRAPS, script))[0]}
    assert set(names) <= covered   # the corpus has at least one script per trap


def test_seatbelt_can_be_filtered_like_any_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=inspection.GraphKeptAliveWarning)
        with seatbelt():
            runpy.run_path(os.path.join(TRAPS, "total_loss_graph.py"), run_name="__main__")
    assert not [w for w in caught if issubclass(w.category, TrapWarning)]


# ------------------------------------------------------------------------------------------------
# Nothing is replaced, on or off: inspection watches through the seam
# ------------------------------------------------------------------------------------------------
def _snapshot():
    from glasstorch._tensor import Tensor
    mods = {name: dict(vars(m)) for name, m in sys.modules.items()
            if m is not None and name.startswith("glasstorch") and not name.startswith("glasstorch.inspection")}
    classes = [Tensor, glasstorch.optim.Optimizer, glasstorch.optim.SGD]
    if HAVE_NN:
        classes.append(glasstorch.nn.Module)
    return mods, {c: dict(vars(c)) for c in classes}


def _same(before, now):
    for cls, attrs in before[1].items():
        assert set(now[1][cls]) == set(attrs), cls
        for k, v in attrs.items():
            assert now[1][cls][k] is v, (cls, k)
    for name, attrs in before[0].items():
        for k, v in attrs.items():
            if callable(v):
                assert now[0].get(name, {}).get(k) is v, (name, k)


def test_nothing_is_replaced_on_or_off():
    w = glasstorch.ones(2, requires_grad=True)
    opt = glasstorch.optim.SGD([w], lr=0.1)
    (w * 2).sum().backward()
    opt.step()                     # (the optimizer wraps its class's step with the step hooks, as torch does)
    before = _snapshot()
    with seatbelt():
        with inspection.record():
            (w * 2).sum().backward()
            opt.step()
            assert _observer.active()
            _same(before, _snapshot())     # nothing is replaced while inspection is on either
    assert not _observer.active()
    _same(before, _snapshot())
    # and nothing is left behind: no mode, no engine observer, no global hook
    from glasstorch._seam import seam, _live_instances
    from glasstorch.nn.modules import module
    from glasstorch.optim import optimizer
    assert not seam.function_modes and not seam.engine_observers
    assert seam.on == bool(_live_instances)     # (on while a tensor of a test's Tensor subclass is alive)
    assert not module._global_forward_pre_hooks and not optimizer._global_optimizer_pre_hooks
    assert not optimizer._global_optimizer_post_hooks


def test_the_update_runs_unwatched_and_the_glass_watches_again():
    """The glass steps aside for the optimizer's update: alone on the stack, by pausing the seam (the
    function level off in this thread, the glass still on its stack); under a user's mode, by leaving
    the stack, so that the user's mode still sees the update. Either way it watches again after."""
    from glasstorch._seam import seam, _subclasses_exist
    from glasstorch.overrides import TorchFunctionMode

    class Spy(TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.names = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.names.append(getattr(func, "__name__", ""))
            return func(*args, **(kwargs or {}))

    w = glasstorch.ones(3, requires_grad=True)
    opt = glasstorch.optim.SGD([w], lr=0.1, momentum=0.9)
    during = []
    opt.register_step_pre_hook(lambda o, a, k: during.append((seam.on, len(seam.function_modes))))
    with seatbelt():
        for _ in range(2):
            opt.zero_grad()
            (w * 2).sum().backward()
            opt.step()
        if _subclasses_exist[0]:    # (a Tensor subclass taking part was defined: the glass leaves the stack)
            assert [n for _, n in during] == [0, 0]
        else:                       # paused: the function level off in this thread, the glass still there
            assert during == [(False, 1), (False, 1)]
        assert seam.on and len(seam.function_modes) == 1
        with Spy() as spy:
            opt.zero_grad()
            (w * 2).sum().backward()
            spy.names.clear()
            opt.step()
            assert during[-1] == (True, 1)          # the spy alone on the stack: it sees the update
            assert spy.names and len(seam.function_modes) == 2
        x = glasstorch.tensor([0.0])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            (x / x).sum()                           # the glass sees calls again: 0/0 is reported
        assert [w.category.__name__ for w in caught if issubclass(w.category, TrapWarning)] == ["NonFiniteWarning"]
    assert not seam.function_modes


@pytest.mark.parametrize("dtype, big", [("float32", 1e30), ("float64", 1e300), ("float16", 1e4)])
def test_the_nonfinite_check_passes_large_finite_values_and_reports_nan_and_inf(dtype, big):
    """The check first adds up the squares of an output (``seatbelt._finite``): finite values whose
    squares overflow that sum are then looked at one by one and not reported; an inf or a NaN is, once,
    at its op. The check itself reports no floating-point error (a RuntimeWarning from inspection)."""
    dt = getattr(glasstorch, dtype)
    x = glasstorch.full((64, 128), big, dtype=dt, requires_grad=True)
    with inspection.seatbelt(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = x * 1.0                             # finite, but the sum of its squares is not
        z = y[:, :1] * 0.0                      # (finite: no report)
        inf = y * big                           # expect: NonFiniteWarning (inf)
        nan = (z - 0.0) * inf[:, :1]            # 0 * inf: nan, but carried from the inf: no second report
        w = x[:1, :1] * float("nan")            # asked for (a nan given): not reported
    names = [w.category.__name__ for w in caught if issubclass(w.category, TrapWarning)]
    assert names == ["NonFiniteWarning"], names
    assert "inf first appears" in str(next(w.message for w in caught if issubclass(w.category, TrapWarning)))
    assert not [w for w in caught if "inspection" in w.filename], [str(w.message) for w in caught]
    assert bool(y.isfinite().all()) and not bool(inf.isfinite().any()) and bool(nan.isnan().all()) and w.isnan()


def test_import_before_the_seatbelt_is_still_seen():
    """A function imported by name before the seatbelt opened is the same function: it is seen."""
    code = ("import glasstorch as torch\n"
            "from glasstorch.nn.functional import cross_entropy, softmax\n"
            "from glasstorch.inspection import seatbelt\n"
            "W = torch.randn(4, 3, requires_grad=True)\n"
            "X, y = torch.randn(6, 4), torch.tensor([0, 1, 2, 0, 1, 2])\n"
            "with seatbelt() as belt:\n"
            "    loss = cross_entropy(softmax(X @ W, dim=1), y)\n"
            "    loss.backward()\n"
            "print([(c.__name__, line) for c, _, line, _ in belt.found])\n")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(HERE))
    env.pop("GLASSTORCH_SEATBELT", None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[('ProbabilitiesToCrossEntropyWarning', 7)]", out.stdout + out.stderr


def test_nested_and_exceptions():
    with pytest.raises(ZeroDivisionError):
        with seatbelt():
            with seatbelt():
                1 / 0
    assert not _observer.active()


def test_environment_variable_turns_it_on(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(open(os.path.join(TRAPS, "missing_zero_grad.py")).read() +
                      "\nimport glasstorch.inspection as I\nassert I._environment_seatbelt is not None\n")
    env = dict(os.environ, GLASSTORCH_SEATBELT="report", PYTHONPATH=os.path.dirname(HERE))
    # until `import glasstorch` imports glasstorch.inspection itself, the script's first line does
    code = "import glasstorch.inspection, runpy; runpy.run_path(%r, run_name='__main__')" % str(script)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "MissingZeroGradWarning" in out.stderr and "run.py:14" in out.stderr
    assert "seatbelt: 1 trap found in 4 steps" in out.stderr


def test_glasstorch_own_warnings_still_point_at_the_user():
    """A wrapper adds a frame; the core's warnings (stacklevel=2) must still name the user's line."""
    w = glasstorch.ones(2, requires_grad=True)
    y = w * 2
    for on in (False, True):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with seatbelt() if on else _nothing():
                y.grad
                line_grad = sys._getframe().f_lineno - 1
                glasstorch.tensor(w)
                line_tensor = sys._getframe().f_lineno - 1
        core = [c for c in caught if not issubclass(c.category, TrapWarning)]
        assert [(c.filename, c.lineno) for c in core] == [(__file__, line_grad), (__file__, line_tensor)], on
        assert "not a leaf Tensor is being accessed" in str(core[0].message)
        assert "To copy construct from a tensor" in str(core[1].message)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_traps_can_be_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error", TrapWarning)
        with pytest.raises(inspection.MissingZeroGradWarning):
            with seatbelt():
                runpy.run_path(os.path.join(TRAPS, "missing_zero_grad.py"), run_name="__main__")
    assert not _observer.active()


@pytest.mark.skipif(not HAVE_NN, reason="glasstorch.nn layers not available yet")
def test_example_script(capsys):
    example = runpy.run_path(os.path.join(os.path.dirname(HERE), "examples", "traps.py"), run_name="example")
    assert example["main"]([]) == 3
    out = capsys.readouterr().out
    for name in ("ProbabilitiesToCrossEntropyWarning", "MissingZeroGradWarning", "TrainModeInferenceWarning"):
        assert name in out
    assert out.count("Fix: ") == 3 and "seatbelt: 3 traps found in 45 steps" in out
    assert example["main"](["--fixed"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("seatbelt: no traps found in 45 steps")



@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_mode_under_the_seatbelt_sees_what_it_would_without_it(dtype):
    """The glass runs a function's body directly only when nothing is below it: a user's mode entered
    before the seatbelt still sees every call of a training step, as without a seatbelt, and the
    results are the same. (torch runs the same step under the same mode: the calls it sees are the
    oracle's.)"""
    import contextlib
    import numpy as np
    import torch

    def run(lib, belt):
        class Spy(lib.overrides.TorchFunctionMode):
            names = []

            def __torch_function__(self, func, types, args=(), kwargs=None):
                self.names.append(getattr(func, "__name__", repr(func)))
                return func(*args, **(kwargs or {}))
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 3)).to(getattr(lib, dtype))
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        x = lib.tensor(np.random.default_rng(1).standard_normal((5, 4)), dtype=getattr(lib, dtype))
        y = lib.tensor([0, 1, 2, 0, 1])
        Spy.names = []
        with Spy(), (seatbelt() if belt else contextlib.nullcontext()):
            opt.zero_grad()
            loss = lib.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            value = loss.item()
        return Spy.names, value, model[0].weight.grad.tolist()

    under = run(glasstorch, True)
    assert under == run(glasstorch, False)
    theirs = run(torch, False)      # (its own initial weights: the names only are compared)
    for name in ("linear", "relu", "cross_entropy", "backward", "item"):
        assert name in under[0] and name in theirs[0]
