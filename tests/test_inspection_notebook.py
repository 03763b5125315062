"""Inspection results in Jupyter: explain(), record() and summary() display as a sentence or a table.

IPython's own display formatter is asked what a notebook would show (its 'text/html' entry), so these
tests check what Jupyter calls, not only that a method exists.
"""
from html import escape

import pytest

import glasstorch as torch
from glasstorch.inspection import explain, record, summary


def notebook_html(obj):
    formatters = pytest.importorskip("IPython.core.formatters")
    data, _ = formatters.DisplayFormatter().format(obj)
    return data.get("text/html")


def test_explanation_shows_its_sentence_cause_line_and_fix():
    w = torch.ones(3, requires_grad=True)
    with record():
        y = w.detach() * 2                          # the path from w is cut here
        (y.sum() * torch.ones(1, requires_grad=True)).sum().backward()
    e = explain(w)
    html = notebook_html(e)
    assert html is not None and "<Explanation" not in html
    assert e.cause == "cut" and "cause <code" in html and "&#x27;cut&#x27;" in html
    because, fix = e.message.split(" Fix: ", 1)
    assert escape(because) in html and f"<b>Fix:</b> {escape(fix)}" in html
    assert f"test_inspection_notebook.py:{e.lineno}" in html and "detach()" in html


def test_explanation_html_is_escaped():
    e = explain(torch.ones(2), name="<w & b>")
    html = notebook_html(e)
    assert "&lt;w &amp; b&gt;.grad" in html and "<w &" not in html
    assert e.cause == "not_requires_grad"


def test_record_shows_its_timeline_as_a_table():
    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with record(params={"w": w}) as rec:
        loss = (w * torch.tensor([0.5, -1.0, 2.0])).sum().exp()
        loss.backward()
    html = notebook_html(rec)
    assert html is not None and "<record of" not in html
    assert html.count("<tr>") == len(rec.events) + 1 and f"record: {len(rec.events)} events" in html
    for e in rec.events:
        assert f"<td>{e.index}</td><td>{e.kind}</td>" in html and escape(e.node) in html
    assert "ExpBackward0" in html and "MulBackward0" in html and "test_inspection_notebook.py:" in html


def test_a_long_record_is_cut_in_the_notebook_but_not_in_str(monkeypatch):
    from glasstorch.inspection import _html
    monkeypatch.setattr(_html, "MAX_ROWS", 3)
    w = torch.ones(2, requires_grad=True)
    with record() as rec:
        (w * 2).sum().exp().backward()
    html = notebook_html(rec)
    assert html.count("<tr>") == 3 + 1 and f"... {len(rec.events) - 3} more events" in html
    assert len(str(rec).splitlines()) == len(rec.events) + 1


def test_summary_shows_its_sentence_every_op_and_every_leaf():
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    loss = torch.nn.functional.cross_entropy(model(torch.randn(5, 4)), torch.tensor([0, 2, 1, 0, 1]))
    s = summary(loss, params=dict(model.named_parameters()))
    html = notebook_html(s)
    assert html is not None and "GraphSummary(" not in html
    assert escape(str(s).splitlines()[0]) in html
    for op, count in s.ops.items():
        assert f"<td><code style=\"white-space:pre\">{op}</code></td><td>{count}</td>" in html
    assert all(f">{leaf}</code>" in html for leaf in ("0.weight", "0.bias", "2.weight", "2.bias"))
