"""The seam and Tensor subclasses that take part in ``__torch_function__``: calls on plain tensors pay
nothing for such a subclass being defined, only while one of its tensors is alive; that tensor is
seen in every thread, also in one that was already running when it was made; every way of making
one counts (the constructor, ``as_subclass``, ``_make_subclass``, deepcopy, pickling, a Parameter
subclass). Behaviour is compared with torch where torch has it."""
import copy
import gc
import os
import pickle
import subprocess
import sys
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


# Run in a new interpreter, where no tensor of any Tensor subclass is alive (another test's may be,
# here), importing glasstorch alone: what must hold there.
_FRESH_PROCESS_CHECKS = """
import gc, threading
import glasstorch as lib
from glasstorch._seam import seam

def settle():
    gc.collect()
    return seam.on

# defining a subclass leaves plain calls alone until one of its tensors exists
log = []
class Logged(lib.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        log.append(func.__name__)
        return super().__torch_function__(func, types, args, kwargs or {})
assert not settle()
x = lib.ones(3)
t = x.as_subclass(Logged)
assert seam.on                                  # one is alive: every call looks at its arguments
y = x + 1
assert type(y) is lib.Tensor and log == []      # (a plain call: plain result, nothing seen)
z = lib.add(t, x)
assert type(z) is Logged and log == ["add"]
del t, z
assert not settle()                             # the last one gone: plain calls are plain again

# a tensor given the class by __class__ assignment is not counted (README, "Where glasstorch differs")
u = lib.ones(2)
u.__class__ = Logged
out = u.exp()
assert log == ["add"] and type(out) is lib.Tensor, (log, type(out))
del u, out
assert not settle()

# a tensor made in one thread is seen in a thread already running (which read the switch, off, before)
box = {}
started, handed = threading.Event(), threading.Event()
def worker():
    lib.ones(2) * 2
    started.set()
    handed.wait(10)
    out = lib.mul(box["t"], 2)
    box["result"] = (type(out).__name__, list(log))
thread = threading.Thread(target=worker)
thread.start()
started.wait(10)
box["t"] = lib.ones(2).as_subclass(Logged)
handed.set()
thread.join(10)
assert box["result"] == ("Logged", ["add", "mul"]), box
print("ok")
"""


def test_subclass_tensors_switch_the_seam_on_and_off_in_every_thread():
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, PYTHONPATH=os.path.dirname(here))
    out = subprocess.run([sys.executable, "-c", _FRESH_PROCESS_CHECKS], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stdout + out.stderr


def test_torch_sees_a_tensor_made_in_one_thread_in_a_thread_already_running():
    """(torch's side of the thread check above.)"""
    log, box = [], {}
    started, handed = threading.Event(), threading.Event()

    def worker():
        torch.ones(2) * 2
        started.set()
        handed.wait(10)
        out = torch.mul(box["t"], 2)
        box["result"] = (type(out).__name__, list(log))
    thread = threading.Thread(target=worker)
    thread.start()
    started.wait(10)
    box["t"] = torch.ones(2).as_subclass(_logging_class(torch, log))
    handed.set()
    thread.join(10)
    assert box["result"] == ("Logged", ["mul"])


def test_torch_counts_class_assignment():
    """(torch's side of the __class__ assignment above: the subclass sees the call.)"""
    log = []
    u = torch.ones(2)
    u.__class__ = _logging_class(torch, log)
    assert type(u.exp()).__name__ == "Logged" and log == ["exp"]


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

    def new_empty(self, *args, **kwargs):   # (what torch's deepcopy of a subclass needs: the subclass back)
        return glasstorch.Tensor.new_empty(self, *args, **kwargs).as_subclass(type(self))

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
    counted = len(_live_instances)
    del p
    gc.collect()
    assert len(_live_instances) == counted - 1      # (gone from the count with it)


def test_a_plain_parameter_is_not_counted():
    p = glasstorch.nn.Parameter(glasstorch.ones(2))
    gc.collect()
    assert not any(r() is p for r in _live_instances)


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


@pytest.mark.parametrize("lib", [torch, glasstorch], ids=["torch", "glasstorch"])
def test_the_default_torch_function_returns_sizes_and_return_types_as_torch(lib):
    """A subclass that hands every call to ``Tensor.__torch_function__``: a ``Size`` and a
    ``torch.return_types`` result keep their types, the tensors in them become the subclass."""
    class Sub(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return super().__torch_function__(func, types, args, kwargs)
    s = lib.ones(2, 3).as_subclass(Sub)
    assert s.shape == (2, 3) and type(s.shape) is lib.Size and type(s.size()) is lib.Size
    values, indices = out = s.max(0)
    assert type(out).__name__ == "max" and type(values) is Sub and type(indices) is Sub
    assert type(out.values) is Sub
