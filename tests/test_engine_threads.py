"""backward() from several threads into the same leaves: no gradient is lost (torch's
AccumulateGrad holds a lock; so does glasstorch's _accumulate).

A tiny ``sys.setswitchinterval`` makes Python switch threads every few bytecodes; the expected
sums are exact (integers in float64), so one lost update fails the test.
"""
import sys
import threading

import pytest

import glasstorch as gt


@pytest.fixture
def tiny_switch_interval():
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


def _hammer(n_threads, passes, work):
    errors = []
    barrier = threading.Barrier(n_threads)

    def run():
        try:
            barrier.wait()
            for _ in range(passes):
                work()
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=run) for _ in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_concurrent_backward_into_one_linear_loses_nothing(tiny_switch_interval):
    # NumPy lets go of the GIL while it adds large arrays, so without the lock two threads' in-place
    # `grad += g` really run at once and updates are lost (a few percent of them, here)
    gt.manual_seed(0)
    layer = gt.nn.Linear(256, 256).double()
    x = gt.ones(2, 256, dtype=gt.float64)
    n_threads, passes = 4, 100

    _hammer(n_threads, passes, lambda: layer(x).sum().backward())

    total = n_threads * passes
    # d/dW of sum(x W^T + b) is the column sums of x (2 each); d/db is the batch size (2)
    assert layer.weight.grad.min().item() == layer.weight.grad.max().item() == 2.0 * total
    assert layer.bias.grad.min().item() == layer.bias.grad.max().item() == 2.0 * total


def test_concurrent_first_accumulation_keeps_every_gradient(tiny_switch_interval):
    # the other race the lock closes: two threads both find .grad None and both set it
    for _ in range(20):
        w = gt.zeros(5, dtype=gt.float64, requires_grad=True)
        _hammer(2, 1, lambda: (w * 1.0).sum().backward())
        assert w.grad.tolist() == [2.0] * 5
