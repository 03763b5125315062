"""The seam and Tensor subclasses that take part in ``__torch_function__``: calls on plain tensors pay
nothing for such a subclass being defined, only while one of its tensors is alive; that tensor is
seen in every thread, also in one that was already running when it was made; every way of making
one counts (the constructor, ``as_subclass``, ``_make_subclass``, deepcopy, pickling, a Parameter
subclass). Behaviour is compared with torch where torch has it."""
import copy
import gc
import pickle
import threading

import pytest

import glasstorch
from glasstorch._seam import seam, _live_instances

torch = pytest.importorskip("torch")


def _logging_class(lib, log):
    class Logged(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs or {})
    return Logged


def _settle():
    gc.collect()
    return seam.on


def test_defining_a_subclass_leaves_plain_calls_alone_until_one_of_its_tensors_exists():
    log = []
    Logged = _logging_class(glasstorch, log)
    assert not _settle()                     # defined, no tensor of it: plain calls see no seam
    x = glasstorch.ones(3)
    t = x.as_subclass(Logged)
    assert seam.on                           # one is alive: every call looks at its arguments
    y = x + 1                                 # (a plain call: plain result, nothing logged)
    assert type(y) is glasstorch.Tensor and log == []
    z = glasstorch.add(t, x)
    assert type(z) is Logged and log == ["add"]
    del t, z
    assert not _settle()                     # the last one gone: plain calls are plain again
    assert type(x + 1) is glasstorch.Tensor


def test_a_tensor_made_in_one_thread_is_seen_in_a_thread_already_running():
    """The thread reads the seam's switch (off) before the subclass and its tensor exist; the tensor,
    made in the main thread and handed over, is still seen by the thread's calls (as in torch)."""
    def run(lib):
        log, box = [], {}
        started, handed = threading.Event(), threading.Event()

        def worker():
            lib.ones(2) * 2                       # (this thread has used the library: its state is set)
            started.set()
            handed.wait(10)
            out = lib.mul(box["t"], 2)
            box["result"] = (type(out).__name__, list(log))
        thread = threading.Thread(target=worker)
        thread.start()
        started.wait(10)
        Logged = _logging_class(lib, log)
        box["t"] = lib.ones(2).as_subclass(Logged)
        handed.set()
        thread.join(10)
        return box["result"]
    assert _settle() is False
    assert run(glasstorch) == run(torch) == ("Logged", ["mul"])


@pytest.mark.parametrize("make", [
    pytest.param(lambda cls: cls([1.0, 2.0]), id="constructor"),
    pytest.param(lambda cls: glasstorch.ones(2).as_subclass(cls), id="as_subclass"),
    pytest.param(lambda cls: glasstorch.Tensor._make_subclass(cls, glasstorch.ones(2)), id="_make_subclass"),
    pytest.param(lambda cls: copy.deepcopy(glasstorch.ones(2).as_subclass(cls)), id="deepcopy"),
    pytest.param(lambda cls: pickle.loads(pickle.dumps(glasstorch.ones(2).as_subclass(cls))), id="pickle"),
])
def test_every_way_of_making_one_is_counted(make):
    t = make(_Pickled)
    gc.collect()
    assert seam.on and any(r() is t for r in _live_instances)
    _Pickled.log.clear()
    t.exp()
    assert _Pickled.log == ["exp"]


class _Pickled(glasstorch.Tensor):
    """(at module level: pickle finds its class by name)"""
    log = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.log.append(func.__name__)
        return super().__torch_function__(func, types, args, kwargs or {})


class _LoggedParameter(glasstorch.nn.Parameter):
    seen = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.seen.append(func.__name__)
        with glasstorch._C.DisableTorchFunctionSubclass():
            return func(*args, **(kwargs or {}))


def test_a_parameter_subclass_with_its_own_torch_function_is_counted():
    p = _LoggedParameter(glasstorch.ones(2))
    assert _settle()
    _LoggedParameter.seen.clear()       # (glasstorch's Parameter() calls requires_grad_: seen; torch's is in C)
    glasstorch.mul(p, 2)
    assert _LoggedParameter.seen == ["mul"]
    del p
    assert not _settle()


def test_a_plain_parameter_is_not_counted():
    p = glasstorch.nn.Parameter(glasstorch.ones(2))
    assert not _settle() and not any(r() is p for r in _live_instances)


def test_a_mode_entered_inside_a_plain_call_still_sees_calls_while_a_subclass_tensor_lives():
    """While a subclass tensor is alive, a plain call runs as without the seam: a function mode it
    enters (checkpoint's, a user's) sees the calls inside it."""
    keep = glasstorch.ones(1).as_subclass(_logging_class(glasstorch, []))
    seen = []

    class Mode(glasstorch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return func(*args, **(kwargs or {}))
    with Mode():
        glasstorch.ones(2).exp()
    assert seen == ["ones", "exp"]
    assert keep is not None


def test_class_assignment_is_not_counted():
    """Where glasstorch differs (README): a tensor given a subclass by ``t.__class__ = cls`` is not
    counted, so while no tensor made as one is alive its calls run as a plain tensor's (torch
    dispatches them to the subclass)."""
    log = []
    Logged = _logging_class(glasstorch, log)
    assert not _settle()
    t = glasstorch.ones(2)
    t.__class__ = Logged
    out = t.exp()
    assert log == [] and type(out) is glasstorch.Tensor
    # torch's: the subclass sees it
    theirs_log = []
    u = torch.ones(2)
    u.__class__ = _logging_class(torch, theirs_log)
    assert type(u.exp()).__name__ == "Logged" and theirs_log == ["exp"]
