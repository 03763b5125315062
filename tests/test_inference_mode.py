"""Tensors made under inference_mode are torch's inference tensors: marked (``is_inference()``, views
too, results of ops outside the mode not), no version counter, refused as saved values, refused for
in-place writes and ``requires_grad_()`` outside the mode -- each against torch's behaviour and words."""
import pytest
import torch

import glasstorch as gt


def _made_inside(lib):
    with lib.inference_mode():
        x = lib.ones(3)
        y = x * 2
    with lib.no_grad():
        z = lib.ones(3)
    return x, y, z


CASES = {
    "marks": lambda lib, x, y, z: (x.is_inference(), y.is_inference(), z.is_inference()),
    "a view of one is one": lambda lib, x, y, z: (x[1:].is_inference(), x.view(3, 1).is_inference()),
    "an op outside makes a normal tensor": lambda lib, x, y, z: ((x * 2).is_inference(), x.clone().is_inference()),
    "no version counter": lambda lib, x, y, z: x._version,
    "in-place outside": lambda lib, x, y, z: x.add_(1),
    "in-place through a view": lambda lib, x, y, z: x[1:].mul_(2),
    "setitem outside": lambda lib, x, y, z: x.__setitem__(0, 5.0),
    "fill_ outside": lambda lib, x, y, z: x.fill_(0),
    "requires_grad_ outside": lambda lib, x, y, z: x.requires_grad_(),
    "saved for backward": lambda lib, x, y, z: x * lib.ones(3, requires_grad=True),
    "not saved: add": lambda lib, x, y, z: float((x + lib.ones(3, requires_grad=True)).sum().detach()),
    "mode off": lambda lib, x, y, z: _off(lib),
    "in-place inside": lambda lib, x, y, z: _inside(lib, x),
}


def _off(lib):
    with lib.inference_mode(False):
        return lib.ones(2).is_inference()


def _inside(lib, x):
    with lib.inference_mode():
        x.add_(1)
    return x.tolist(), x.is_inference()


def _outcome(lib, name):
    try:
        return "ok", CASES[name](lib, *_made_inside(lib))
    except RuntimeError as e:
        return "RuntimeError", str(e)


@pytest.mark.parametrize("name", CASES)
def test_inference_tensors_behave_as_torchs(name):
    assert _outcome(gt, name) == _outcome(torch, name)


def test_a_view_made_outside_the_mode_shares_the_refusal():
    with gt.inference_mode():
        x = gt.zeros(4)
    v = x[::2]
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode"):
        v.zero_()
    assert x.tolist() == [0.0] * 4


def test_inference_mode_is_per_thread():
    import threading
    inside, outside = threading.Event(), threading.Event()
    made = {}

    def infer():
        with gt.inference_mode():
            inside.set()
            outside.wait(10)
            made["inside"] = gt.ones(1)

    worker = threading.Thread(target=infer)
    worker.start()
    inside.wait(10)
    made["other thread"] = gt.ones(1)        # made while the worker is in inference mode
    outside.set()
    worker.join(10)
    assert made["inside"].is_inference() and not made["other thread"].is_inference()
    assert not gt.ones(1).is_inference()      # and after every block ended
