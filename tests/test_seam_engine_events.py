"""The engine's events as observers get them (glasstorch._seam.add_engine_observer): each observer's
methods are looked up when it is added (seam.engine_events), called in the order the observers
were added, and no more once it is removed. glasstorch's own API (torch has no such hook), so the
expected events are those of the graph built here: its nodes, by the names torch gives them."""
import threading

import numpy as np
import pytest
import torch

import glasstorch
from glasstorch._seam import seam, add_engine_observer


class Log:
    def __init__(self, name, out):
        self.name, self.out = name, out

    def backward_started(self, roots):
        self.out.append((self.name, "start", [n.name() for n, _ in roots]))

    def backward_finished(self, roots):
        self.out.append((self.name, "end"))


class NodeLog(Log):
    def node_started(self, node):
        self.out.append((self.name, "node", node.name()))

    def accumulated(self, leaf, grad):
        self.out.append((self.name, "acc", tuple(grad.shape)))


def _graph(lib, dtype):
    x = lib.tensor(np.random.default_rng(0).standard_normal((3, 4)), dtype=dtype, requires_grad=True)
    return x, (x.exp() * 2).sum()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_observers_get_the_events_in_order_and_none_after_removal(dtype):
    out = []
    remove_a = add_engine_observer(Log("a", out))
    remove_b = add_engine_observer(NodeLog("b", out))
    try:
        assert seam.engine_events.per_node
        x, loss = _graph(glasstorch, getattr(glasstorch, dtype))
        loss.backward()
        tx, tloss = _graph(torch, getattr(torch, dtype))
        # the nodes the engine ran, as torch names them (root first, the leaf's accumulation last)
        names, node = [], tloss.grad_fn
        while node is not None:
            names.append(node.name())
            node = node.next_functions[0][0] if node.next_functions else None
        assert out[0] == ("a", "start", [names[0]])
        assert out[1] == ("b", "start", [names[0]])
        assert [e[2] for e in out if e[1] == "node"] == names
        assert ("b", "acc", (3, 4)) in out
        assert out[-2:] == [("a", "end"), ("b", "end")]
        remove_b()
        assert not seam.engine_events.per_node      # (the engine skips the per-node events again)
        out.clear()
        _graph(glasstorch, getattr(glasstorch, dtype))[1].backward()
        assert out == [("a", "start", [names[0]]), ("a", "end")]
    finally:
        remove_a()
        remove_b()
    assert not seam.engine_observers and not seam.engine_events.backward_started
    out.clear()
    _graph(glasstorch, glasstorch.float32)[1].backward()
    assert out == []


def test_observers_are_per_thread():
    out = []
    remove = add_engine_observer(Log("main", out))
    try:
        def other():
            _graph(glasstorch, glasstorch.float32)[1].backward()
        t = threading.Thread(target=other)
        t.start()
        t.join()
        assert out == []        # the other thread's backward is not this thread's observer's
    finally:
        remove()
