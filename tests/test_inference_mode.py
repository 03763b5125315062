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
    # detach() / .data taken outside the mode: still inference tensors, but with a counter of their own
    # (from 0) that in-place writes outside the mode bump (they reach x's memory); inside the mode no bump
    "detach: marked, counted": lambda lib, x, y, z: _alias_written(lib, x, x.detach()),
    ".data: marked, counted": lambda lib, x, y, z: _alias_written(lib, x, x.data),
    "detach of a view": lambda lib, x, y, z: _alias_written(lib, x, x[1:].detach()),
    "detach twice": lambda lib, x, y, z: _alias_written(lib, x, x.detach().detach()),
    "detach: requires_grad_": lambda lib, x, y, z: x.detach().requires_grad_(),
    "detach: saved for backward": lambda lib, x, y, z: x.detach() * lib.ones(3, requires_grad=True),
    "detach: a view of it": lambda lib, x, y, z: _view_of_detached(lib, x),
    "detach: written inside": lambda lib, x, y, z: _detached_written_inside(lib, x),
    "detach inside the mode": lambda lib, x, y, z: _detached_inside(lib, x),
}


def _alias_written(lib, x, alias):
    before = alias._version
    alias.add_(1)
    return alias.is_inference(), before, alias._version, x.tolist(), alias.requires_grad


def _view_of_detached(lib, x):
    v = x.detach().view(3)
    try:
        v._version
        counted = True
    except RuntimeError:
        counted = False
    return v.is_inference(), counted, v.add_(1).tolist()


def _detached_written_inside(lib, x):
    d = x.detach()
    with lib.inference_mode():
        d.mul_(3)
    return d._version, x.tolist()


def _detached_inside(lib, x):
    with lib.inference_mode():
        d = x.detach()
    return d.is_inference(), d.add_(1)


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


def test_the_one_frame_entries_step_aside_while_any_thread_infers():
    """``x + y``'s entry makes its Tensor with no counter: while some thread is in inference mode
    (``ANYWHERE.detour``) it leaves the call to the op's, whose new tensor looks at this thread's mode."""
    import threading
    from glasstorch._seam import ANYWHERE
    from glasstorch._array import devices
    inside, outside = threading.Event(), threading.Event()
    made = {}

    def infer():
        with gt.inference_mode():
            made["flag inside"] = ANYWHERE.detour
            made["inside"] = gt.ones(2) + gt.ones(2)
            inside.set()
            outside.wait(10)

    x, y = gt.ones(2), gt.ones(2)
    worker = threading.Thread(target=infer)
    worker.start()
    inside.wait(10)
    made["other thread"] = x + y
    outside.set()
    worker.join(10)
    assert made["flag inside"] and made["inside"].is_inference() and not made["other thread"].is_inference()
    assert ANYWHERE.detour is devices.many      # (after every block: only a second device keeps it on)
    assert not (x + y).is_inference()


# ---- an in-place write refused outside the mode: torch's checks first, then the refusal, and nothing written --
# torch checks the arguments (memory, shapes, dtypes, the kernel's own), writes, and refuses at the version
# bump after; glasstorch makes the same checks in the same order and refuses before it writes (README,
# "Where glasstorch differs"; ops/_op._refuse_inference_write).
REFUSED_WRITES = {
    "add_": lambda lib, t: t.add_(1),
    "add_ of a tensor": lambda lib, t: t.sub_(lib.ones(3)),
    "mul_ through a view": lambda lib, t: t[1:].mul_(2),
    "setitem": lambda lib, t: t.__setitem__(0, 5.0),
    "setitem of a slice": lambda lib, t: t.__setitem__(slice(1, None), lib.tensor([4.0, 5.0])),
    "setitem by an index tensor": lambda lib, t: t.__setitem__(lib.tensor([2]), 5.0),
    "copy_": lambda lib, t: t.copy_(lib.full((3,), 7.0)),
    "zero_": lambda lib, t: t.zero_(),
    "fill_": lambda lib, t: t.fill_(4),
    "uniform_": lambda lib, t: t.uniform_(),
    "nn.init.normal_": lambda lib, t: lib.nn.init.normal_(t),
    "clamp_": lambda lib, t: t.clamp_(max=0),
    "exp_": lambda lib, t: t.exp_(),
    "+=": lambda lib, t: t.__iadd__(1),
    "index_put_": lambda lib, t: t.index_put_((lib.tensor([0]),), lib.tensor(9.0)),
    "masked_fill_": lambda lib, t: t.masked_fill_(t > 0, 3.0),
    "addmm_": lambda lib, t: t.view(3, 1).addmm_(lib.ones(3, 1), lib.ones(1, 1)),
    "out=": lambda lib, t: lib.add(lib.ones(3), 1, out=t),
    "resize_": lambda lib, t: t.resize_(5),
    "set_": lambda lib, t: t.set_(lib.zeros(2)),
    "add_ of a tensor that requires grad": lambda lib, t: t.add_(lib.ones(3, requires_grad=True)),
}

BAD_ARGUMENTS = {   # torch's argument errors come before its refusal; nothing is written either way
    "add_ of a wrong shape": lambda lib, t: t.add_(lib.ones(4)),
    "add_ of a complex tensor": lambda lib, t: t.add_(lib.ones(3, dtype=lib.complex64)),
    "copy_ of a wrong shape": lambda lib, t: t.copy_(lib.ones(4)),
    "setitem out of range": lambda lib, t: t.__setitem__(5, 1.0),
    "setitem of a wrong shape": lambda lib, t: t.__setitem__(slice(None), lib.ones(4)),
    "setitem by an index tensor out of range": lambda lib, t: t.__setitem__(lib.tensor([7]), 1.0),
    "index_put_ out of range": lambda lib, t: t.index_put_((lib.tensor([9]),), lib.tensor(9.0)),
    "fill_ of a 1-d value": lambda lib, t: t.fill_(lib.ones(2)),
    "clamp_ of nothing": lambda lib, t: t.clamp_(),
    "uniform_ of an empty range": lambda lib, t: t.uniform_(2, 1),
    "div_ with a bad rounding_mode": lambda lib, t: t.div_(2, rounding_mode="bad"),
    "add_ into an expanded tensor": lambda lib, t: t[:1].expand(3).add_(1),
    "add_ of an overlapping view": lambda lib, t: t[1:].add_(t[:2]),
    "out= of a complex result": lambda lib, t: lib.add(lib.ones(3, dtype=lib.complex64), 1, out=t),
    "add_ inside no_grad": lambda lib, t: _under_no_grad(lib, t),
}


def _under_no_grad(lib, t):
    with lib.no_grad():
        t.add_(lib.ones(4))


def _refused(lib, write):
    with lib.inference_mode():
        t = lib.ones(3)
    try:
        write(lib, t)
    except (RuntimeError, IndexError) as e:
        return t, (type(e).__name__, str(e).split("\n")[0])
    return t, "ok"


@pytest.mark.parametrize("name", list(REFUSED_WRITES) + list(BAD_ARGUMENTS))
def test_a_refused_write_raises_torchs_error_first(name):
    write = {**REFUSED_WRITES, **BAD_ARGUMENTS}[name]
    (_, ours), (_, theirs) = _refused(gt, write), _refused(torch, write)
    assert theirs != "ok" and ours == theirs


@pytest.mark.parametrize("name", REFUSED_WRITES)
def test_a_refused_write_leaves_the_tensor_as_it_was(name):
    """(torch's tensor holds the write it refused: glasstorch's is unchanged, in values and shape.)"""
    t, error = _refused(gt, REFUSED_WRITES[name])
    assert "Inplace update to inference tensor outside InferenceMode" in error[1]
    assert t.shape == (3,) and t.tolist() == [1.0, 1.0, 1.0] and t.is_inference()


@pytest.mark.parametrize("name", BAD_ARGUMENTS)
def test_bad_arguments_leave_the_tensor_as_it_was_in_both(name):
    for lib in (gt, torch):
        t, _ = _refused(lib, BAD_ARGUMENTS[name])
        assert t.tolist() == [1.0, 1.0, 1.0]


def test_inside_the_mode_the_same_writes_are_made():
    for name, write in REFUSED_WRITES.items():
        if name in ("set_", "resize_", "add_ of a tensor that requires grad"):
            continue
        with gt.inference_mode():
            t, t0 = gt.ones(3), torch.ones(3)
        with gt.inference_mode(), torch.inference_mode():
            gt.manual_seed(0)
            write(gt, t)
            write(torch, t0)
        assert (t.tolist() != [1.0, 1.0, 1.0]) == (t0.tolist() != [1.0, 1.0, 1.0]), name
