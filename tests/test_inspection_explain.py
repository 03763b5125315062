"""inspection.explain(): the cause and the user's line, for every cause."""
import inspect
import sys

import numpy as np
import pytest

import glasstorch as torch
from glasstorch import nn
from glasstorch.inspection import explain, record, seatbelt, Explanation
from glasstorch.inspection.explain import CAUSES

_instrument = sys.modules["glasstorch.inspection._instrument"]


def _line(offset=0):
    return inspect.currentframe().f_back.f_lineno + offset


def _check(e, cause, line=None, how=None):
    assert isinstance(e, Explanation)
    assert e.cause == cause, str(e)
    assert e.cause in CAUSES
    if line is not None:
        assert e.filename == __file__ and e.lineno == line, repr(e)
    if how is not None:
        assert e.how == how, e.how
    text = str(e)
    assert text == e.message and ".grad" in text


def test_has_grad():
    w = torch.ones(3, requires_grad=True)
    with record():
        (w * 2).sum().backward()
        (w * 2).sum().backward()
    e = explain(w)
    _check(e, "has_grad")
    assert "summed over 2 backward passes" in str(e)


def test_not_requires_grad():
    x = torch.ones(3)
    e = explain(x)
    _check(e, "not_requires_grad")
    assert "x does not require grad" in str(e) and "requires_grad=True" in str(e)


def test_not_requires_grad_made_by_detach_names_the_line():
    w = torch.ones(3, requires_grad=True)
    with record():
        h = (w * 2).detach()
        line = _line(-1)
    _check(explain(h), "not_requires_grad", line, "detach()")


@pytest.mark.parametrize("op, how", [("to", ".to()"), ("double", ".double()"), ("mul", "a multiplication (*)")])
def test_non_leaf(op, how):
    with record():
        if op == "to":
            w = torch.randn(3, requires_grad=True).to(torch.float64)
            line = _line(-1)
        elif op == "double":
            w = torch.randn(3, requires_grad=True).double()
            line = _line(-1)
        else:
            w = torch.randn(3, requires_grad=True) * 0.01
            line = _line(-1)
        (w * 2).sum().backward()
    e = explain(w)
    _check(e, "non_leaf", line, how)
    assert "w is not a leaf" in str(e) and "requires_grad" in str(e)


def test_non_leaf_without_inspection_still_names_the_op():
    w = torch.randn(3, requires_grad=True).to(torch.float64)
    e = explain(w)
    assert e.cause == "non_leaf" and e.lineno is None and "ToCopyBackward0" not in str(e)
    assert "a copy to another dtype or device" in str(e)


def test_no_backward():
    w = torch.ones(3, requires_grad=True)
    with record():
        loss = (w * 2).sum()
        e = explain(w)
    _check(e, "no_backward")
    assert loss.requires_grad


def test_reset_by_zero_grad():
    w = torch.ones(3, requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.1)
    with record():
        (w * 2).sum().backward()
        opt.step()
        opt.zero_grad()
        line = _line(-1)
    _check(explain(w), "reset", line, "zero_grad()")


def test_reset_by_module_zero_grad():
    model = nn.Linear(2, 1)
    with record():
        model(torch.ones(1, 2)).sum().backward()
        model.zero_grad()
        line = _line(-1)
    e = explain(model.weight)
    _check(e, "reset", line)
    assert e.name == "weight"


def test_unused():
    a = torch.ones(2, requires_grad=True)
    unused = torch.ones(2, requires_grad=True)
    with record():
        (a * 3).sum().backward()
    e = explain(unused)
    _check(e, "unused")
    assert "unused is not part of the loss" in str(e)


def _cut(kind):
    """Run a small loss with the path from ``w`` cut by ``kind``; returns (w, the cutting line)."""
    w = torch.randn(3, requires_grad=True)
    v = torch.randn(3, requires_grad=True)
    x = torch.randn(4, 3)
    with record():
        if kind == "detach":
            h = (x @ w).detach()
            line = _line(-1)
        elif kind == "item":
            h = (x @ w).sum().item()
            line = _line(-1)
        elif kind == "numpy":
            h = torch.from_numpy(np.tanh((x @ w).detach().numpy()))
            line = _line(-1)
        elif kind == "tensor":
            h = torch.tensor(x @ w)
            line = _line(-1)
        elif kind == "long":
            h = (x @ w * 10).long()
            line = _line(-1)
        elif kind == "data":
            h = (x @ w).data
            line = _line(-1)
        loss = ((x @ v) * h).sum()
        loss.backward()
    return w, line


@pytest.mark.parametrize("kind, how", [("detach", "detach()"), ("item", ".item()"), ("numpy", "detach()"),
                                       ("tensor", "torch.tensor(...)"), ("long", ".long()"), ("data", ".data")])
def test_cut(kind, how, recwarn):
    w, line = _cut(kind)
    e = explain(w)
    _check(e, "cut", line, how)
    assert "cut by" in str(e)


def test_cut_by_no_grad_block():
    encoder, head = nn.Linear(3, 4), nn.Linear(4, 1)
    with record():
        with torch.no_grad():
            h = encoder(torch.randn(2, 3))
            line = _line(-1)
        head(h).sum().backward()
    e = explain(encoder.weight)
    _check(e, "cut", line, "a no_grad block")
    assert "no_grad" in str(e)
    _check(explain(head.weight), "has_grad")


def test_cut_is_forgotten_once_the_gradient_arrives():
    w, _ = _cut("detach")
    with record():
        (w * 2).sum().backward()
    _check(explain(w), "has_grad")


def test_explain_under_seatbelt_and_names():
    model = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    with seatbelt():
        out = model[1](model[0](torch.randn(2, 3)).detach())
        line = _line(-1)
        out.sum().backward()
    e = explain(model[0].weight)
    _check(e, "cut", line, "detach()")
    assert e.name == "weight" or e.name.endswith("weight")
    assert explain(model[0].weight, name="encoder.weight").message.startswith("encoder.weight.grad is None")


def test_bad_input():
    with pytest.raises(TypeError, match="Tensor"):
        explain([1, 2])


def test_doctest():
    import doctest
    assert doctest.testmod(sys.modules["glasstorch.inspection.explain"]).failed == 0


def test_cuts_keep_no_graph_alive():
    import gc
    import weakref
    w = torch.randn(3, requires_grad=True)
    v = torch.randn(3, requires_grad=True)
    with record():
        y = w
        for _ in range(100):               # a graph bigger than what is noted at the cut
            y = y * 1.0
        big = weakref.ref(y.grad_fn)
        y.sum().item()
        small = (v * 2).sum()
        small_ref = weakref.ref(small.grad_fn)
        small.item()
        del y, small
        gc.collect()
        assert big() is None and small_ref() is None
        (torch.ones(1, requires_grad=True) * 2).sum().backward()
    _check(explain(v), "cut", None, ".item()")
    e = explain(w)   # the far end of the big graph died before the backward: the nearest leaf is all that
    assert e.cause in ("cut", "unused")   # could be noted, and w is 100 nodes away


def test_a_cut_is_noted_even_when_a_dead_graph_had_the_same_id():
    """Cuts are noted by id(source node) until the next backward resolves them; a dead graph's entry
    whose id a new node reuses must not hide the new cut (this made test_cuts_keep_no_graph_alive
    depend on which tests ran before it)."""
    import weakref
    from glasstorch.inspection._instrument import Cut, tracker
    v = torch.randn(3, requires_grad=True)
    with record():
        loss = (v * 2).sum()
        gone = torch.ones(1)  # stands for the dead graph whose id the new source node reuses
        stale = (Cut("detach()", "elsewhere.py", 1), [], None, weakref.ref(gone))
        tracker.pending[id(loss.grad_fn)] = stale
        loss.item()
        (torch.ones(1, requires_grad=True) * 2).sum().backward()
    _check(explain(v), "cut", None, ".item()")
