"""inspection.record() (the timeline) and inspection.summary(), checked against what the graph is
(and, for node names and counts, against real torch's graph for the same code)."""
import doctest
import inspect
import sys
import threading

import pytest

import glasstorch
from glasstorch import inspection, nn
from glasstorch.inspection import record, summary, graph_signature

torch = pytest.importorskip("torch")
_observer = sys.modules["glasstorch.inspection._observer"]


def _line(offset=0):
    """The caller's line number (+ offset)."""
    return inspect.currentframe().f_back.f_lineno + offset


def _mlp(lib, seed=0):
    lib.manual_seed(seed)
    return lib.nn.Sequential(lib.nn.Linear(4, 5), lib.nn.ReLU(), lib.nn.Linear(5, 3))


def test_timeline_order_and_lines():
    w = glasstorch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x = glasstorch.tensor([0.5, -1.0, 2.0])
    with record(params={"w": w}) as rec:
        y = (w * x).sum()
        line_y = _line(-1)
        z = y.exp()
        line_z = _line(-1)
        z.backward()
        line_b = _line(-1)
    kinds = [e.kind for e in rec.events]
    assert kinds == ["create", "create", "create", "backward", "run", "free", "run", "run", "free", "accumulate",
                     "end"]
    created = [(e.node, e.lineno) for e in rec.events if e.kind == "create"]
    assert created == [("MulBackward0", line_y), ("SumBackward0", line_y), ("ExpBackward0", line_z)]
    assert rec.events[3].lineno == line_b and "retain_graph=False" in rec.events[3].detail
    # backward visits each node once, newest first, and frees a node's saved values right after it runs
    runs = [e.node for e in rec.events if e.kind == "run"]
    assert runs == ["ExpBackward0", "SumBackward0", "MulBackward0"]
    frees = [e for e in rec.events if e.kind == "free"]
    assert [e.node for e in frees] == ["ExpBackward0", "MulBackward0"]
    assert "result ()" in frees[0].detail and "(4 bytes)" in frees[0].detail   # exp saves its result
    assert "other (3,)" in frees[1].detail and "(12 bytes)" in frees[1].detail
    acc = [e for e in rec.events if e.kind == "accumulate"]
    assert acc[0].node == "w" and "new .grad (3,)" in acc[0].detail
    text = str(rec)
    assert text.splitlines()[0].split()[:3] == ["#", "event", "node"]
    assert f"test_inspection_record.py:{line_z}" in text


def test_retain_graph_and_second_accumulation():
    w = glasstorch.ones(2, requires_grad=True)
    with record(params={"w": w}) as rec:
        y = (w * w).sum()
        y.backward(retain_graph=True)
        y.backward()
    kinds = [e.kind for e in rec.events]
    assert kinds.count("retain") == 1 and kinds.count("free") == 1
    acc = [e.detail for e in rec.events if e.kind == "accumulate"]
    assert acc[0].startswith("new .grad") and acc[1].startswith("added to .grad")


def test_created_nodes_match_torch_graph():
    """The nodes the timeline saw created are the nodes of the graph, and torch's graph has the same."""
    gm, tm = _mlp(glasstorch), _mlp(torch)
    xs = [lib.randn(6, 4, generator=None) for lib in (glasstorch, torch)]
    targets = [lib.tensor([0, 1, 2, 0, 1, 2]) for lib in (glasstorch, torch)]
    with record() as rec:
        loss = glasstorch.nn.functional.cross_entropy(gm(xs[0]), targets[0])
    tloss = torch.nn.functional.cross_entropy(tm(xs[1]), targets[1])
    created = sorted(e.node for e in rec.events if e.kind == "create")
    in_graph = sorted(name for name, _ in graph_signature(loss) if name != "AccumulateGrad")
    torch_graph = sorted(name for name, _ in graph_signature(tloss) if name != "AccumulateGrad")
    assert created == in_graph == torch_graph


def test_parameter_names_from_modules_and_draw_marks_freed():
    model = _mlp(glasstorch)
    x, y = glasstorch.randn(3, 4), glasstorch.tensor([0, 1, 2])
    with record() as rec:
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
    names = {e.node for e in rec.events if e.kind == "accumulate"}
    assert names == {"0.weight", "0.bias", "2.weight", "2.bias"}
    freed = rec.freed_nodes()
    assert freed and all(n._saved is None for n in freed)
    d = rec.draw(loss)
    drawn_freed = {n.name for n in d.nodes if n.freed}
    assert drawn_freed == {n.name() for n in freed}
    leaves = {n.label.split("\n")[0] for n in d.nodes if n.kind == "leaf"}
    assert leaves == {"0.weight", "0.bias", "2.weight", "2.bias"}


def test_cut_zero_grad_and_step_events():
    w = glasstorch.ones(3, requires_grad=True)
    opt = glasstorch.optim.SGD([w], lr=0.1)
    with record() as rec:
        loss = (w * 2).sum()
        value = loss.item()
        line_item = _line(-1)
        loss.backward()
        opt.step()
        line_step = _line(-1)
        opt.zero_grad()
    by_kind = {e.kind: e for e in rec.events}
    assert by_kind["cut"].node == ".item()" and by_kind["cut"].lineno == line_item
    assert by_kind["step"].node == "SGD" and by_kind["step"].lineno == line_step
    assert by_kind["zero_grad"].detail == "1 gradients set to None"


def test_other_threads_are_not_recorded():
    w = glasstorch.ones(2, requires_grad=True)

    def work():
        (w * 3).sum()
    with record() as rec:
        t = threading.Thread(target=work)
        t.start()
        t.join()
        (w * 2).sum()
    assert [e.node for e in rec.events if e.kind == "create"] == ["MulBackward0", "SumBackward0"]


def test_nested_records_both_see_events():
    w = glasstorch.ones(2, requires_grad=True)
    with record() as outer:
        (w * 2).sum()
        with record() as inner:
            (w + 1).sum()
    assert len([e for e in outer.events if e.kind == "create"]) == 4
    assert len([e for e in inner.events if e.kind == "create"]) == 2
    assert not _observer.active()


def test_hooks_removed_after_backward():
    w = glasstorch.ones(2, requires_grad=True)
    with record():
        y = (w * w).sum()
        y.backward(retain_graph=True)
    node = y.grad_fn
    assert node._hooks is None and node.next_functions[0][0]._hooks is None
    assert not getattr(node, "_hooked", False)


def test_gradient_still_stolen_under_inspection():
    """Inspection must not change what the engine does: a private gradient still becomes .grad as is."""
    ids = []

    class Twice(glasstorch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            out = glasstorch.ones(4, 4)
            ids.append(id(out._data))
            return out
    w = glasstorch.randn(4, 4, requires_grad=True)
    for ctx in (record(), inspection.seatbelt()):
        w.grad = None
        with ctx:
            Twice.apply(w).sum().backward()
        assert id(w.grad._data) == ids[-1]   # (the engine hands gradients on as arrays: the same array)


# ------------------------------------------------------------------------------------------------
# summary
# ------------------------------------------------------------------------------------------------
def test_summary_counts_against_torch():
    gm, tm = _mlp(glasstorch), _mlp(torch)
    gx, tx = glasstorch.randn(6, 4), torch.randn(6, 4)
    loss = glasstorch.nn.functional.cross_entropy(gm(gx), glasstorch.tensor([0, 1, 2, 0, 1, 2]))
    tloss = torch.nn.functional.cross_entropy(tm(tx), torch.tensor([0, 1, 2, 0, 1, 2]))
    s = summary(loss, params=dict(gm.named_parameters()))
    sig = graph_signature(tloss)
    assert s.nodes == sum(1 for name, _ in sig if name != "AccumulateGrad")
    assert sorted(s.leaves) == sorted(n for n, _ in gm.named_parameters())
    assert s.depth == _torch_depth(tloss.grad_fn)
    assert s.saved_bytes > 0 and s.freed_nodes == 0
    loss.backward()
    after = summary(loss)
    assert after.saved_bytes == 0 and after.freed_nodes > 0
    assert "nodes, depth" in str(s) and "leaves" in str(s)


def _torch_depth(node):
    if node is None or type(node).__name__ == "AccumulateGrad":
        return 0
    return 1 + max([_torch_depth(n) for n, _ in node.next_functions] or [0])


def test_summary_saved_bytes_counts_each_buffer_once():
    x = glasstorch.randn(100, requires_grad=True)
    y = (x * x).sum()                  # MulBackward0 saves x twice: one buffer
    s = summary(y)
    assert s.saved_bytes == 400 and s.nodes == 2 and s.depth == 2 and s.ops == {"MulBackward0": 1,
                                                                               "SumBackward0": 1}
    assert summary(glasstorch.ones(2)).nodes == 0


def test_doctests():
    m = sys.modules["glasstorch.inspection.record"]
    assert doctest.testmod(m).failed == 0


def test_nested_backward_of_checkpoint():
    """checkpoint recomputes inside backward (a backward within a backward): both are recorded, and
    every hook is gone afterwards."""
    from glasstorch.utils.checkpoint import checkpoint
    w1 = glasstorch.randn(3, 3, requires_grad=True)
    w2 = glasstorch.randn(3, 3, requires_grad=True)
    x = glasstorch.randn(2, 3, requires_grad=True)
    with record(params={"w1": w1, "w2": w2, "x": x}) as rec:
        h = checkpoint(lambda t: (t @ w1).tanh(), x, use_reentrant=True)
        loss = (h @ w2).sum()
        loss.backward()
    kinds = [e.kind for e in rec.events]
    assert kinds.count("backward") == 2 and kinds.count("end") == 2
    # (the recompute runs on a detached copy of x: a leaf of its own)
    assert {e.node for e in rec.events if e.kind == "accumulate"} == {"w1", "w2", "x", "leaf (2, 3)"}
    last_runs = [e.node for e in rec.events if e.kind == "run"]
    assert last_runs[0] == "SumBackward0" and "MmBackward0" in last_runs
    node = loss.grad_fn
    while node is not None:
        assert not getattr(node, "_hooked", False) and node._hooks is None
        node = next((n for n, _ in node.next_functions if n is not None and n.name() != "AccumulateGrad"), None)
    assert w1.grad is not None and w2.grad is not None
