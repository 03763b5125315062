"""glasstorch's own modes that only watch (inspection's glass): the seam's two shortcuts for them, and
that users' modes, inside and outside them, see every call as torch hands it.

1. A mode with ``_wants_metadata = False`` is not handed the metadata queries (``x.shape``,
   ``x.dim()``...) while it is the only kind installed: they skip the seam (``ANYWHERE.metadata_on``).
   A user's mode in the same thread (inside or outside it) or in another thread sees them all.
2. The glass is a mode, ordered as one by its place in the stack: a user's mode entered inside a
   seatbelt sees each call first, and the glass sees the calls the user's mode makes (and their
   results); entered outside, the glass sees each call first and what the user's mode returned for
   it. Either way the user's mode sees every call as it does without a seatbelt.
"""
import threading

import pytest

import glasstorch
from glasstorch import _seam
from glasstorch._seam import ANYWHERE, seam, is_metadata_query

torch = pytest.importorskip("torch")


def _name(func):
    n = getattr(func, "__name__", None) or repr(func)
    if n in ("__get__", "__set__"):
        return f"{func.__self__.__name__}.{n}"
    return n


def _logging_mode(lib, seen, wants_metadata=True):
    class Log(lib.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(_name(func))
            return func(*args, **(kwargs or {}))
    if not wants_metadata:
        Log._wants_metadata = False
    return Log()


def _program(lib):
    """A little of everything: metadata queries, ops, a layer, a backward, ``.grad``."""
    lib.manual_seed(0)
    layer = lib.nn.Linear(3, 2)
    x = lib.ones(4, 3, requires_grad=True)
    y = layer(x * 2)
    y.dim(), y.shape, y.size(1), y.dtype, len(y), y.ndim, y.is_contiguous(), y.numel()
    y.relu().sum().backward()
    return x.grad


# the metadata queries glasstorch declares (Tensor's methods and properties that only describe a tensor)
_QUERIES = {"dim", "ndimension", "size", "numel", "nelement", "stride", "storage_offset", "element_size", "is_contiguous",
            "data_ptr", "is_floating_point", "is_complex", "get_device", "is_inference", "__len__", "shape", "dtype",
            "device", "ndim"}


def test_the_metadata_queries_are_declared_on_the_seam():
    declared = set()
    for name, attr in vars(glasstorch.Tensor).items():
        func = attr.__get__ if isinstance(attr, property) else attr
        if is_metadata_query(func):
            declared.add(name)
    assert declared == _QUERIES
    # the rest of the seam's functions are not queries: ops, .grad, backward
    assert not is_metadata_query(glasstorch.Tensor.grad.__get__)
    assert not is_metadata_query(glasstorch.Tensor.add)
    assert not is_metadata_query(glasstorch.nn.functional.linear)


def test_a_mode_that_wants_no_metadata_is_not_handed_queries():
    seen = []
    with _logging_mode(glasstorch, seen, wants_metadata=False):
        assert ANYWHERE.on and ANYWHERE.modes and not ANYWHERE.metadata_on and not ANYWHERE.metadata_modes
        grad = _program(glasstorch)
    assert not any(n.split(".")[0] in _QUERIES for n in seen), seen
    assert "linear" in seen and "backward" in seen and "relu" in seen
    assert grad is not None and grad.shape == (4, 3)
    assert not (ANYWHERE.on or ANYWHERE.modes or ANYWHERE.metadata_on or ANYWHERE.metadata_modes)


@pytest.mark.parametrize("where", ["inside", "outside"])
def test_a_users_mode_beside_it_sees_every_query_as_torch_hands_them(where):
    """A user's mode inside (entered after) or outside (before) the opt-out mode sees what it sees
    alone under torch, metadata queries included (and the opt-out mode is then handed them too,
    and runs them)."""
    theirs = []
    with _logging_mode(torch, theirs):
        _program(torch)
    ours, other = [], []
    user, quiet = _logging_mode(glasstorch, ours), _logging_mode(glasstorch, other, wants_metadata=False)
    first, second = (quiet, user) if where == "inside" else (user, quiet)
    with first, second:
        assert ANYWHERE.metadata_on
        _program(glasstorch)
    assert ours == theirs
    assert "dim" in ours and "shape.__get__" in ours
    assert not (ANYWHERE.on or ANYWHERE.metadata_on)


def test_a_users_mode_in_another_thread_turns_the_queries_back_on():
    entered, done = threading.Event(), threading.Event()
    seen_there = []

    def other_thread():
        with _logging_mode(glasstorch, seen_there):
            entered.set()
            done.wait(10)
    t = threading.Thread(target=other_thread)
    seen = []
    with _logging_mode(glasstorch, seen, wants_metadata=False):
        t.start()
        assert entered.wait(10)
        assert ANYWHERE.metadata_on and ANYWHERE.metadata_modes
        x = glasstorch.ones(2, 3)
        assert x.shape == (2, 3) and x.dim() == 2      # handed to the opt-out mode, which runs them
        done.set()
        t.join()
        assert not ANYWHERE.metadata_on and ANYWHERE.on
        x.dim()
    assert seen == ["ones", "shape.__get__", "dim"], seen    # (the second dim() came after the other mode left)
    assert seen_there == []
    assert not (ANYWHERE.on or ANYWHERE.metadata_on)


def test_a_tensor_subclass_still_sees_queries_beside_an_opt_out_mode():
    seen = []

    class Sub(glasstorch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(_name(func))
            return super().__torch_function__(func, types, args, kwargs)
    s = glasstorch.ones(2, 3).as_subclass(Sub)
    with _logging_mode(glasstorch, [], wants_metadata=False):
        s.dim(), s.shape
    assert seen[-2:] == ["dim", "shape.__get__"]
    del s


def test_the_counts_follow_a_mode_entered_and_left_inside_a_handler():
    """A user's mode entered inside the opt-out mode's handling of a call (and left there) leaves the
    thread counted as it was."""
    from glasstorch.overrides import TorchFunctionMode

    class Quiet(TorchFunctionMode):
        _wants_metadata = False

        def __torch_function__(self, func, types, args=(), kwargs=None):
            with _logging_mode(glasstorch, []):
                assert ANYWHERE.metadata_on
            return func(*args, **(kwargs or {}))
    with Quiet():
        glasstorch.ones(2) + 1
        assert seam.counted and not seam.counted_metadata and not ANYWHERE.metadata_on
    assert not _seam._threads_with_modes and not _seam._threads_with_metadata_modes


def test_the_counts_are_restored_after_a_handler_that_refreshes_the_seam():
    """A user's mode above the opt-out mode, whose handler refreshes the seam's state while it is off
    the stack (here ``DisableTorchFunctionSubclass``): put back, it is counted as wanting metadata."""
    from glasstorch._seam import DisableTorchFunctionSubclass
    seen = []

    class User(glasstorch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(_name(func))
            with DisableTorchFunctionSubclass():
                assert not seam.counted_metadata      # (only the opt-out mode is on the stack now)
            return func(*args, **(kwargs or {}))
    with _logging_mode(glasstorch, [], wants_metadata=False), User():
        x = glasstorch.ones(2)
        assert seam.counted_metadata and ANYWHERE.metadata_on
        x.dim()
    assert seen == ["ones", "dim"]


# ------------------------------------------------------------------------------------------------
# 2. the glass: its order relative to users' modes
# ------------------------------------------------------------------------------------------------
def _mlp_step(lib, optimizer=True):
    """A small training step (without the optimizer: torch's makes calls glasstorch's does not, see
    README's "Where glasstorch differs"); returns the loss."""
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 3))
    opt = lib.optim.SGD(model.parameters(), lr=0.1) if optimizer else None
    x, y = lib.randn(5, 4), lib.tensor([0, 1, 2, 0, 1])
    if opt is not None:
        opt.zero_grad()
    loss = lib.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    if opt is not None:
        opt.step()
    return loss.item()


@pytest.mark.parametrize("where", ["inside", "outside"])
def test_a_users_mode_inside_or_outside_a_seatbelt_sees_what_it_sees_without_it(where):
    """A user's mode sees the same calls with a seatbelt open (entered before or after it) as
    without: the forward, loss and backward as under torch; the whole step, optimizer included, as
    glasstorch's without a seatbelt."""
    import warnings
    from glasstorch import inspection
    for optimizer in (False, True):
        expected = []
        with _logging_mode(glasstorch if optimizer else torch, expected):
            _mlp_step(glasstorch if optimizer else torch, optimizer)
        ours = []
        user, belt = _logging_mode(glasstorch, ours), inspection.seatbelt()
        first, second = (belt, user) if where == "inside" else (user, belt)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with first, second:
                _mlp_step(glasstorch, optimizer)
        assert ours == expected
        assert "linear" in ours and "backward" in ours and "dim" in ours     # (a metadata query too)
        assert not [w for w in caught if issubclass(w.category, inspection.TrapWarning)]
        assert not seam.function_modes and not ANYWHERE.on


@pytest.mark.parametrize("where, named", [("inside", "sqrt"), ("outside", "linear")])
def test_the_glass_sees_the_calls_and_results_of_its_place_in_the_stack(where, named):
    """A user's mode that makes linear's result NaN (``(out - 4).sqrt()`` in its handler). Inside the
    seatbelt it gets linear first: the glass sees linear's own result, then the user's calls (made
    with the glass below it), and names ``sqrt``. Outside, the glass gets linear first and hands it
    on; the user's calls are made with both modes off, and the glass sees linear return NaN: it
    names ``linear``."""
    import warnings
    from glasstorch import inspection

    class Poison(glasstorch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            return (out - 4).sqrt() if func is glasstorch.nn.functional.linear else out
    user, belt = Poison(), inspection.seatbelt()
    first, second = (belt, user) if where == "inside" else (user, belt)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with first, second:
            w = glasstorch.ones(4, 3, requires_grad=True)
            glasstorch.nn.functional.linear(glasstorch.ones(2, 3), w).sum()
    found = [str(w.message) for w in caught if issubclass(w.category, inspection.NonFiniteWarning)]
    assert len(found) == 1, found
    assert found[0].startswith(f"nan first appears in the forward pass here: {named} "), found[0]


# ------------------------------------------------------------------------------------------------
# 3. the glass's pause (an optimizer step): ANYWHERE.on goes off only while no other thread has a mode
# ------------------------------------------------------------------------------------------------
def _seen_in_step(hook):
    """A seatbelt's training step whose optimizer calls ``hook(seen)`` inside its (paused) step."""
    import gc
    gc.collect()
    assert not _seam._live_instances
    # (the pause is for the usual case only: as if no earlier test had defined a Tensor subclass)
    defined, _seam._subclasses_exist[0] = _seam._subclasses_exist[0], False
    try:
        return _step(hook)
    finally:
        _seam._subclasses_exist[0] = defined


def _step(hook):
    from glasstorch import inspection
    seen = []

    class Stepping(glasstorch.optim.SGD):
        def step(self, closure=None):
            hook(seen)
            return super().step(closure)
    glasstorch.manual_seed(0)
    layer = glasstorch.nn.Linear(3, 2)
    opt = Stepping(layer.parameters(), lr=0.1)
    with inspection.seatbelt():
        opt.zero_grad()
        layer(glasstorch.ones(4, 3)).sum().backward()
        opt.step()
        assert ANYWHERE.on and seam.on       # (the step over: both back on)
    return seen


def test_the_pause_switches_the_process_wide_flag_off_and_back_on():
    def hook(seen):
        seen.append((ANYWHERE.on, seam.on, len(seam.function_modes)))
    assert _seen_in_step(hook) == [(False, False, 1)]     # (the glass still on the stack)
    assert not ANYWHERE.on and not _seam._threads_with_modes


@pytest.mark.parametrize("wants_metadata", [True, False])
def test_a_mode_entered_during_the_pause_sees_its_calls(wants_metadata):
    # (one that wants no metadata queries changes none of the thread's counts: _refresh must still
    # switch the flag back on)
    def hook(seen):
        with _logging_mode(glasstorch, seen, wants_metadata):
            glasstorch.ones(2) + 1
    assert _seen_in_step(hook) == ["ones", "add"]


def test_a_mode_in_another_thread_during_the_pause_sees_its_calls():
    def hook(seen):
        def other():
            with _logging_mode(glasstorch, seen, False):
                glasstorch.ones(2) * 2
        t = threading.Thread(target=other)
        t.start()
        t.join()
        glasstorch.ones(2) * 2        # (this thread's calls: still unseen)
    assert _seen_in_step(hook) == ["ones", "mul"]


def test_the_pause_leaves_the_flag_on_while_another_thread_has_a_mode():
    entered, done = threading.Event(), threading.Event()
    seen_there = []

    def other():
        with _logging_mode(glasstorch, seen_there):
            entered.set()
            done.wait(10)
            glasstorch.zeros(1)
    t = threading.Thread(target=other)
    t.start()
    assert entered.wait(10)
    try:
        def hook(seen):
            seen.append(ANYWHERE.on)
        assert _seen_in_step(hook) == [True]
    finally:
        done.set()
        t.join()
    assert seen_there == ["zeros"]


# ------------------------------------------------------------------------------------------------
# 5. the lone observer: a mode with ``_observe`` alone in the process is served without its
#    __torch_function__ (``_seam._lone``); what it sees, and what others see, is unchanged
# ------------------------------------------------------------------------------------------------
def _observer(seen, handled=()):
    """A mode that logs each call and its result's type, the process-wide flag as it sees it, and how
    it was reached; its handlers (for the functions named in ``handled``) call ``inner(func)``."""
    class Observer(glasstorch.overrides.TorchFunctionMode):
        _wants_metadata = False
        _handled = {}

        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            handler = self._handled.get(func)
            if handler is not None:
                return handler(self, func, args, kwargs)
            out = func(*args, **kwargs)
            self._observe(func, args, kwargs, out, how="__torch_function__")
            return out

        def _observe(self, func, args, kwargs, out, how="observed"):
            seen.append((_name(func), type(out).__name__, ANYWHERE.on, how))

    def handle(mode, func, args, kwargs):
        seen.append((_name(func), "handled", ANYWHERE.on, mode not in seam.function_modes))
        return Observer.inner(func, args, kwargs)
    for f in handled:
        Observer._handled[f] = handle
    Observer.inner = staticmethod(lambda func, args, kwargs: func(*args, **kwargs))
    return Observer()


@pytest.fixture
def no_subclass():
    """The lone observer's case: no Tensor subclass taking part (as if no earlier test had defined one)."""
    import gc
    gc.collect()
    assert not _seam._live_instances
    defined, _seam._subclasses_exist[0] = _seam._subclasses_exist[0], False
    try:
        yield
    finally:
        _seam._subclasses_exist[0] = defined


def test_a_lone_observer_sees_each_call_once_and_nothing_made_inside_it(no_subclass):
    seen, user_seen = [], []
    x, w = glasstorch.ones(2, 3), glasstorch.ones(4, 3, requires_grad=True)
    obs = _observer(seen, handled=[glasstorch.Tensor.sum])
    with obs:
        assert _seam._lone[0] is obs
        y = glasstorch.nn.functional.linear(x, w)      # (its body calls t() and addmm: not seen)
        y.sum()
        y.relu()
        assert _seam._lone[0] is obs and seam.function_modes == [obs] and ANYWHERE.on
    assert _seam._lone[0] is None and not ANYWHERE.on
    # the body and the handler run with the process-wide flag off and the observer off the stack
    assert seen == [("linear", "Tensor", False, "observed"), ("sum", "handled", False, True),
                    ("relu", "Tensor", False, "observed")]
    # a plain mode at its place sees the same calls
    with _logging_mode(glasstorch, user_seen, wants_metadata=False):
        y = glasstorch.nn.functional.linear(x, w)
        y.sum()
        y.relu()
    assert user_seen == [name for name, *_ in seen]


def test_a_mode_entered_inside_an_observed_call_does_not_have_the_observer_below_it(no_subclass):
    seen, user_seen = [], []
    obs = _observer(seen, handled=[glasstorch.Tensor.sum])

    def inner(func, args, kwargs):
        with _logging_mode(glasstorch, user_seen):
            assert seam.function_modes[0] is not obs and ANYWHERE.on
            glasstorch.ones(2) * 3
        return func(*args, **kwargs)
    type(obs).inner = staticmethod(inner)
    with obs:
        glasstorch.ones(2).sum()
        assert seam.function_modes == [obs] and _seam._lone[0] is obs and ANYWHERE.on and seam.on
        glasstorch.zeros(1) + 1
    assert user_seen == ["ones", "mul"]
    assert [name for name, *_ in seen] == ["ones", "sum", "zeros", "add"]


def test_an_error_in_an_observed_call_leaves_the_seam_as_it_was(no_subclass):
    seen = []
    obs = _observer(seen)
    with obs:
        with pytest.raises(RuntimeError):
            glasstorch.nn.functional.linear(glasstorch.ones(2, 3), glasstorch.ones(4, 5))
        assert seam.function_modes == [obs] and _seam._lone[0] is obs and ANYWHERE.on
        glasstorch.ones(1)
    assert [name for name, *_ in seen] == ["ones", "ones", "ones"]      # (not linear: it raised)
    assert not ANYWHERE.on and not seam.function_modes


def test_a_mode_in_another_thread_ends_the_lone_path_and_each_sees_its_own_calls(no_subclass):
    seen, there = [], []
    entered, done = threading.Event(), threading.Event()
    a = glasstorch.ones(2)

    def other():
        with _logging_mode(glasstorch, there):
            entered.set()
            done.wait(10)
            a - 1
    obs = _observer(seen)
    with obs:
        a * 2
        t = threading.Thread(target=other)
        t.start()
        assert entered.wait(10)
        try:
            assert _seam._lone[0] is None           # (two threads with modes: the usual path)
            a + 2
        finally:
            done.set()
            t.join()
        a / 2                                       # (not lone again until this thread's state changes)
    assert seen == [("mul", "Tensor", False, "observed"), ("add", "Tensor", True, "__torch_function__"),
                    ("div", "Tensor", True, "__torch_function__")]
    assert there == ["sub"]
    with obs:
        a * 3                                       # (entered again: lone)
    assert seen[-1] == ("mul", "Tensor", False, "observed")


def test_the_seatbelt_alone_is_the_lone_observer(no_subclass):
    from glasstorch import inspection
    with inspection.seatbelt():
        glass = seam.function_modes[0]
        assert _seam._lone[0] is glass
        with _logging_mode(glasstorch, []):     # (a user's mode above it: the usual path)
            assert _seam._lone[0] is None
        assert _seam._lone[0] is glass
    assert _seam._lone[0] is None


def test_another_threads_calls_pass_the_lone_observer_unseen(no_subclass):
    # (while the observer is lone, every prelude goes to the seam on ANYWHERE.lone without reading its
    # thread's seam.on: a thread without a mode is told by its ident and its calls go on unseen)
    seen, results = [], []
    a = glasstorch.ones(2)
    ready, go = threading.Event(), threading.Event()

    def other():
        ready.set()
        go.wait(10)
        results.append((a * 3).tolist())
        results.append(glasstorch.nn.functional.relu(a - 2).tolist())
        results.append((ANYWHERE.on, ANYWHERE.lone, seam.on))
    obs = _observer(seen)
    t = threading.Thread(target=other)
    t.start()
    assert ready.wait(10)
    with obs:
        assert _seam._lone[0] is obs and ANYWHERE.lone
        go.set()
        t.join()
        a + 1
        assert _seam._lone[0] is obs and ANYWHERE.lone
    assert not ANYWHERE.lone
    assert results == [[3.0, 3.0], [0.0, 0.0], (True, True, False)]
    assert seen == [("add", "Tensor", False, "observed")]


def test_the_lone_flag_follows_the_lone_observer(no_subclass):
    obs = _observer([])
    with obs:
        assert ANYWHERE.lone
        with _logging_mode(glasstorch, []):     # (a user's mode above it: the usual path)
            assert not ANYWHERE.lone
        assert ANYWHERE.lone
        with glasstorch.overrides.DisableTorchFunction():
            assert not ANYWHERE.lone
        assert ANYWHERE.lone
    assert not ANYWHERE.lone and _seam._lone[0] is None


def test_the_observers_pause_keeps_the_seams_state(no_subclass):
    obs = _observer([])
    with obs:
        assert _seam.pause_observer(obs)
        assert not ANYWHERE.on and not seam.on and seam.function_modes == [obs] and _seam._lone[0] is obs
        _seam.unpause_observer(obs)
        assert ANYWHERE.on and seam.on and seam.function_modes == [obs]
    with obs, _logging_mode(glasstorch, []):    # (not the lone observer: seam.pause's answer)
        assert not _seam.pause_observer(obs)


def test_redispatch_function_skips_one_hop_past_a_lone_observer_as_past_a_mode(no_subclass):
    """``redispatch_function`` of a function of the user's own (not overridable) skips the next
    interception: the lone observer's path, which does not look at that skip, steps aside meanwhile
    (``ANYWHERE.lone`` off) and comes back after; what the observer sees is what a plain mode at its
    place sees."""
    x = glasstorch.ones(2, 3)
    during = []

    def mine(t):
        during.append((ANYWHERE.lone, _seam._lone[0] is None))
        return t.relu().sum()     # (the first hop is skipped: relu's body runs unseen)

    seen, user_seen = [], []
    obs = _observer(seen)
    with obs:
        out = glasstorch.overrides.redispatch_function(mine, (), (x,), {})
        assert ANYWHERE.lone and _seam._lone[0] is obs and not seam.skip_one_hop
        x.relu()
    assert float(out) == 6.0 and during == [(False, True)]
    with _logging_mode(glasstorch, user_seen, wants_metadata=False):
        glasstorch.overrides.redispatch_function(mine, (), (x,), {})
        x.relu()
    assert [name for name, *_ in seen] == user_seen == ["sum", "relu"]
