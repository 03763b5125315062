"""torch.profiler / torch.autograd.profiler against torch: the events a program records (the ops,
their counts and shapes, the record_function regions and their nesting), the table's layout, the
schedule's steps, the trace handler's file, the errors."""
import json
import os
import re
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import glasstorch as gt  # noqa: E402


def _program(lib):
    m = lib.nn.Linear(4, 3)
    x = lib.tensor(np.ones((2, 4), np.float32))
    with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU], record_shapes=True) as prof:
        with lib.profiler.record_function("model_inference"):
            m(x).relu().sum()
    return prof


def test_events_and_regions_match_torch():
    t, g = _program(torch), _program(gt)
    t_avg = {e.key: e for e in t.key_averages()}
    g_avg = {e.key: e for e in g.key_averages()}
    # the primitive ops torch lists are listed, as often (torch also lists composites: aten::linear)
    for name in ("model_inference", "aten::addmm", "aten::t", "aten::relu", "aten::sum"):
        assert name in g_avg and g_avg[name].count == t_avg[name].count, name
    shapes = {str(e.input_shapes) for e in g.key_averages(group_by_input_shape=True) if e.key == "aten::addmm"}
    assert shapes == {str(e.input_shapes) for e in t.key_averages(group_by_input_shape=True)
                      if e.key == "aten::addmm"} == {"[[3], [2, 4], [4, 3], [], []]"}   # (beta, alpha: [])
    region = next(e for e in g.events() if e.name == "model_inference")
    assert region.is_user_annotation and region.cpu_parent is None
    assert {c.name for c in region.cpu_children} >= {"aten::addmm", "aten::relu", "aten::sum"}
    assert region.cpu_time_total >= sum(c.cpu_time_total for c in region.cpu_children) >= 0
    total = g.key_averages().self_cpu_time_total
    assert abs(total - region.cpu_time_total) < 1e-6 * max(total, 1)   # (every op ran inside the region)


def _layout(table):
    """The table without its numbers: the header, the rules, the names column, the footer's words."""
    lines = table.splitlines()
    return [re.sub(r"[0-9.]+(us|ms|s|%)|\b\d+\b", "#", line) for line in lines[:3]] + [lines[-1].split(":")[0]]


def test_table_layout_is_torchs():
    t, g = _program(torch), _program(gt)
    for kwargs in ({}, {"sort_by": "self_cpu_time_total", "row_limit": 3}):
        tt, gg = t.key_averages().table(**kwargs), g.key_averages().table(**kwargs)
        # (torch's name column fits its longest name, which may be a composite glasstorch does not list)
        assert [re.sub(r"^-+|^ +Name", "", line) for line in _layout(gg)] == \
            [re.sub(r"^-+|^ +Name", "", line) for line in _layout(tt)]
    rows = g.key_averages().table(sort_by="cpu_time_total", row_limit=2).splitlines()
    assert len(rows) == 3 + 2 + 2 and rows[3].split()[0] == "model_inference"
    shaped = g.key_averages(group_by_input_shape=True).table(row_limit=1)
    assert shaped.splitlines()[1].rstrip().endswith("Input Shapes")


def test_backward_ops_are_recorded_and_legacy_profile():
    x = gt.ones(3, 3, requires_grad=True)
    with gt.autograd.profiler.profile() as prof:
        (x @ x).sum().backward()
    names = [e.name for e in prof.function_events]
    assert names.count("aten::mm") == 3       # the forward's, and the backward's two
    with pytest.raises(RuntimeError, match="Profiler didn't finish running"):
        gt.autograd.profiler.profile().key_averages()
    with gt.autograd.profiler.profile(enabled=False) as off:
        x.sum()
    with pytest.raises(RuntimeError, match="didn't finish"):
        off.events()


def test_record_function_outside_a_profile_and_as_decorator():
    @gt.profiler.record_function("step")
    def step(x):
        return x * 2
    assert step(gt.ones(2)).tolist() == [2.0, 2.0]     # no profiler: nothing recorded, nothing fails
    with gt.profiler.profile() as prof:
        step(gt.ones(2))
    step_event = next(e for e in prof.events() if e.name == "step")
    assert [c.name for c in step_event.cpu_children] == ["aten::mul"]


def test_schedule_matches_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for kwargs in ({"wait": 1, "warmup": 1, "active": 2, "repeat": 2}, {"wait": 0, "warmup": 0, "active": 1},
                       {"wait": 2, "warmup": 1, "active": 3, "skip_first": 3}):
            ts, gs = torch.profiler.schedule(**kwargs), gt.profiler.schedule(**kwargs)
            assert [gs(i).name for i in range(20)] == [ts(i).name for i in range(20)], kwargs


def test_scheduled_profile_hands_each_cycle_to_on_trace_ready(tmp_path):
    cycles = []
    sched = gt.profiler.schedule(wait=1, warmup=1, active=2, repeat=2)
    with gt.profiler.profile(schedule=sched, on_trace_ready=lambda p: cycles.append(
            sum(e.name == "aten::mul" for e in p.events()))) as prof:
        for _ in range(10):
            gt.ones(2) * 2
            prof.step()
    assert cycles == [2, 2]          # two cycles, each with its two active steps
    handler = gt.profiler.tensorboard_trace_handler(str(tmp_path), worker_name="w")
    with gt.profiler.profile(on_trace_ready=handler):
        gt.ones(2) * 2
    files = os.listdir(tmp_path)
    assert len(files) == 1 and files[0].startswith("w.") and files[0].endswith(".pt.trace.json")
    trace = json.load(open(tmp_path / files[0]))["traceEvents"]
    assert any(e["name"] == "aten::mul" and e["ph"] == "X" for e in trace)
