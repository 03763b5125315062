"""The lazy version counter: a tensor's counter is made when something first needs it (an in-place
write, a view or detached alias sharing it, a saved result, ``_version``), and until then the tensor
is at version 0 and shares its memory with no other tensor. Every path the laziness creates must
keep torch's semantics: each case below runs on torch and glasstorch and the two must observe the
same values, gradients, versions and errors (``test_views_inplace.same``); a few glasstorch-only
tests check the laziness itself and its thread safety.
"""
import copy
import io
import pickle
import threading

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import glasstorch as gt  # noqa: E402
from test_views_inplace import same  # noqa: E402

_DATA = np.array([0.5, -1.25, 2.0, 0.75], dtype=np.float32)


def _fresh(L, requires_grad=False):
    """A new leaf of four float32 values (no counter yet in glasstorch)."""
    return L.tensor(_DATA.copy(), requires_grad=requires_grad)


def _computed(L):
    """A new non-leaf result, made under no_grad (no counter yet in glasstorch)."""
    with L.no_grad():
        return _fresh(L) * 2


# ---- views and detached aliases of a tensor that has no counter yet ---------------------------

def _view_then_write_base(L):
    a = _computed(L)
    v = a[1:]
    a.add_(1)
    return v, v._version, a._version, v._base is a


def _view_then_write_view(L):
    a = _computed(L)
    v = a[:2]
    v.mul_(3)
    return a, a._version, v._version


def _view_of_view_then_write_base(L):
    a = _computed(L)
    v = a.view(2, 2)[0]
    a.zero_()
    return v, v._version


def _detach_then_write(L):
    x = _fresh(L, True)
    w = _fresh(L, True)
    y = x * w                       # saves x (never versioned) for w's gradient
    x.detach().mul_(2)              # shares x's counter: y's backward must refuse
    y.sum().backward()
    return x.grad, w.grad


def _detach_then_write_unsaved(L):
    x = _fresh(L, True)
    y = x + 1                       # saves nothing: the write is fine
    d = x.detach()
    d.mul_(2)
    y.sum().backward()
    return x.grad, x._version, d._version


def _detach_of_fresh_result(L):
    a = _computed(L)
    d = a.detach()
    d.add_(1)
    return a, a._version, d._version


def _data_does_not_share(L):
    a = _computed(L)
    a.data.add_(1)                  # torch: .data escapes version tracking
    return a, a._version


@pytest.mark.parametrize("case", [_view_then_write_base, _view_then_write_view, _view_of_view_then_write_base,
                                  _detach_then_write, _detach_then_write_unsaved, _detach_of_fresh_result,
                                  _data_does_not_share], ids=lambda f: f.__name__.strip("_"))
def test_views_and_aliases_of_a_fresh_tensor(case):
    same(case)


# ---- saved values: their version is read without making a counter ---------------------------

def _saved_then_modified(L):
    x = _fresh(L, True)
    a = x + 0                       # a new result, no counter
    y = a * a                       # saves a twice, at version 0
    a.add_(1)
    y.sum().backward()
    return x.grad


def _saved_then_view_modified(L):
    x = _fresh(L, True)
    a = x + 0
    y = a * a
    a[1:].zero_()                   # the counter is made after saving, by the view
    y.sum().backward()
    return x.grad


def _saved_then_viewed_not_modified(L):
    x = _fresh(L, True)
    a = x + 0
    y = a * a
    v = a[1:]
    y.sum().backward()
    return x.grad, v._version


def _saved_result_modified(L):
    x = _fresh(L, True)
    y = x.tanh()                    # saves its result (an alias sharing y's counter)
    z = y * 1
    y.add_(1)
    z.sum().backward()              # (z's backward does not read y: fine)
    y2 = x.tanh()
    y2.mul_(2)
    y2.sum().backward()             # tanh's backward reads its saved result: refused
    return x.grad


def _saved_leaf_modified_under_no_grad(L):
    w = _fresh(L, True)
    x = _fresh(L)
    y = (x * w).sum()               # saves x (a leaf without a counter) for w's gradient
    with L.no_grad():
        x.add_(1)
    y.backward()
    return w.grad


def _saved_and_version_read_first(L):
    x = _fresh(L, True)
    a = x * 1
    before = a._version             # reading _version first
    y = a.exp() * a
    a.sub_(1)
    after = a._version
    try:
        y.sum().backward()
    except RuntimeError as e:
        return before, after, str(e).split("\n")[0]
    return before, after


def _inplace_ops_saving_their_result(L):
    out = []
    for name in ("exp_", "tanh_", "sigmoid_", "relu_"):
        x = _fresh(L, True)
        a = x.clone()
        getattr(a, name)()
        a.sum().backward()
        out.append((x.grad, a._version))
    return out


def _custom_function_saves_a_fresh_input(L):
    class Square(L.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t * t

        @staticmethod
        def backward(ctx, g):
            t, = ctx.saved_tensors
            return 2 * t * g

    x = _fresh(L, True)
    a = x + 0
    y = Square.apply(a)
    ok = L.autograd.grad(y.sum(), x, retain_graph=True)[0]
    a.mul_(2)
    y.sum().backward()
    return ok, x.grad


@pytest.mark.parametrize("case", [_saved_then_modified, _saved_then_view_modified, _saved_then_viewed_not_modified,
                                  _saved_result_modified, _saved_leaf_modified_under_no_grad,
                                  _saved_and_version_read_first, _inplace_ops_saving_their_result,
                                  _custom_function_saves_a_fresh_input], ids=lambda f: f.__name__.strip("_"))
def test_saved_values_of_fresh_tensors(case):
    same(case)


# ---- memory shared or not: what "same counter" decides ----------------------------------------

def _partial_overlap_refused(L):
    a = _computed(L)
    a[1:].add_(a[:-1])


def _full_alias_allowed(L):
    a = _computed(L)
    a.add_(a)
    return a, a._version


def _distinct_fresh_tensors(L):
    a, b = _computed(L), _computed(L)
    a.add_(b)
    a[1:] = b[:-1]
    return a, a._version, b._version


def _setitem_from_own_view_refused(L):
    a = _computed(L)
    a[1:] = a[:-1]


def _index_put_of_itself_refused(L):
    a = _computed(L)
    a[L.tensor([0, 1, 2, 3])] = a


def _setitem_from_detached_alias(L):
    a = _computed(L)
    a[1:] = a.detach()[:-1]


@pytest.mark.parametrize("case", [_partial_overlap_refused, _full_alias_allowed, _distinct_fresh_tensors,
                                  _setitem_from_own_view_refused, _index_put_of_itself_refused,
                                  _setitem_from_detached_alias], ids=lambda f: f.__name__.strip("_"))
def test_memory_checks_with_fresh_tensors(case):
    same(case)


# ---- Parameter, subclasses, copies, inference tensors -----------------------------------------

def _parameter_shares_its_datas_counter(L):
    d = _fresh(L)
    p = L.nn.Parameter(d)
    d.add_(1)
    first = p._version
    with L.no_grad():
        p.mul_(2)
    return first, d._version, p._version, d


def _parameter_saved_then_modified(L):
    p = L.nn.Parameter(_fresh(L))
    y = (p * p).sum()
    with L.no_grad():
        p.add_(1)
    y.backward()
    return p.grad


def _as_subclass_shares(L):
    class Sub(L.Tensor):
        pass

    a = _computed(L)
    s = a.as_subclass(Sub)
    a.add_(1)
    return s._version, a._version, type(s).__name__


def _deepcopy_is_independent(L):
    a = _fresh(L, True)
    b = copy.deepcopy(a)
    start = b._version              # (torch's copy starts at 1: its deepcopy ends with a set_)
    with L.no_grad():
        b.add_(1)
    return start, a._version, b._version, a, b


def _modified_after_saving(L, t, *others):
    """Save ``t`` for a gradient, write it in place under no_grad, and report how backward refused
    (the versions relative to ``t``'s start; the start itself is compared in test_copies_start_at_version_1)."""
    start = t._version
    y = (t * t).sum() if t.requires_grad else (t * others[0]).sum()
    with L.no_grad():
        t.add_(1)
    try:
        y.backward()
    except RuntimeError as e:
        return t._version - start, str(e).split(":")[0]


def _pickled_tensor(L):
    a = _computed(L)
    a.add_(1)
    b = pickle.loads(pickle.dumps(a))
    return b, _modified_after_saving(L, b, _fresh(L, True)), a._version


def _pickled_parameter(L):
    p = pickle.loads(pickle.dumps(L.nn.Parameter(_fresh(L))))
    (p * p).sum().backward()
    return p.grad, _modified_after_saving(L, p)


def _inference_tensor(L):
    with L.inference_mode():
        t = L.ones(3)
        v = t[1:]
        t.add_(1)
    out = [t.is_inference(), v.is_inference(), t.clone()]   # (torch writes, then refuses: values first)
    for f in (lambda: t._version, lambda: t.add_(1), lambda: v.mul_(2), lambda: t.requires_grad_()):
        try:
            f()
            out.append("ok")
        except RuntimeError as e:
            out.append(str(e))
    return out


def _normal_tensor_under_inference_mode(L):
    a = _computed(L)
    with L.inference_mode():
        a.add_(1)                   # a normal tensor written inside the mode: its version moves
        b = a * 2
    return a._version, a.is_inference(), b.is_inference()


def _inference_tensor_saved(L):
    with L.inference_mode():
        t = L.ones(4)
    w = _fresh(L, True)
    return (t * w).sum()


@pytest.mark.parametrize("case", [_parameter_shares_its_datas_counter, _parameter_saved_then_modified,
                                  _as_subclass_shares, _deepcopy_is_independent,
                                  _pickled_tensor, _pickled_parameter, _inference_tensor,
                                  _normal_tensor_under_inference_mode, _inference_tensor_saved],
                         ids=lambda f: f.__name__.strip("_"))
def test_parameters_copies_and_inference_tensors(case):
    same(case)


# ---- where a tensor starts: torch makes copies and loaded tensors with a set_ (version 1) ---------

def _load(L, obj, **kw):
    buf = io.BytesIO()
    L.save(obj, buf)
    buf.seek(0)
    return L.load(buf, **kw)


def _file_load(L, obj, tmp_path, **kw):
    path = str(tmp_path / f"{L.__name__}.pt")
    L.save(obj, path)
    return L.load(path, **kw)


START_VERSIONS = {
    "deepcopy": lambda L, _: copy.deepcopy(_computed(L)),
    "deepcopy of a written tensor": lambda L, _: copy.deepcopy(_computed(L).add_(1)),
    "deepcopy of a view": lambda L, _: copy.deepcopy(_computed(L)[1:]),
    "deepcopy of an empty int tensor": lambda L, _: copy.deepcopy(L.zeros(0, dtype=L.int64)),
    "deepcopy of a leaf and its grad": lambda L, _: (lambda c: (c, c.grad))(copy.deepcopy(_with_grad(L))),
    "deepcopy of a meta tensor (a clone)": lambda L, _: copy.deepcopy(L.empty(3, device="meta")),
    "deepcopy of a Parameter (a clone)": lambda L, _: copy.deepcopy(L.nn.Parameter(_fresh(L))),
    "deepcopy of a module": lambda L, _: [copy.deepcopy(L.nn.BatchNorm1d(2)).running_mean,
                                          copy.deepcopy(L.nn.BatchNorm1d(2)).weight],
    "deepcopy of an inference tensor": lambda L, _: copy.deepcopy(_inference_ones(L)),
    "pickle": lambda L, _: pickle.loads(pickle.dumps(_computed(L))),
    "pickle of a Parameter": lambda L, _: pickle.loads(pickle.dumps(L.nn.Parameter(_fresh(L)))),
    "pickle of a tensor and its view": lambda L, _: pickle.loads(pickle.dumps([_fresh(L), _fresh(L)[1:]])),
    "load": lambda L, _: _load(L, _computed(L)),
    "load of a state_dict": lambda L, _: list(_load(L, L.nn.Linear(2, 2).state_dict()).values()),
    "load of a Parameter": lambda L, _: _load(L, L.nn.Parameter(_fresh(L))),
    "load weights_only=False": lambda L, _: _load(L, {"a": _fresh(L)}, weights_only=False)["a"],
    "load with mmap": lambda L, tmp: _file_load(L, _fresh(L), tmp, mmap=True),
    "load of a meta tensor (no storage)": lambda L, _: _load(L, L.empty(3, device="meta")),
}


def _with_grad(L):
    x = _fresh(L, True)
    x.grad = _fresh(L)
    return x


def _inference_ones(L):
    with L.inference_mode():
        return L.ones(2)


@pytest.mark.parametrize("how", list(START_VERSIONS))
def test_copies_start_at_version_1(how, tmp_path):
    """torch's deepcopy and rebuild end with ``set_`` (an in-place write): the copy's ``_version`` is 1,
    not 0; a Parameter's deepcopy and a meta tensor's are clones (0). After a write both count on."""
    def case(L):
        made = START_VERSIONS[how](L, tmp_path)
        tensors = made if isinstance(made, (list, tuple)) else [made]
        before = [t._version for t in tensors]
        with L.no_grad():
            tensors[0].add_(1)
        return before, [t._version for t in tensors], [t.is_inference() for t in tensors]
    assert same(case)[0] != "raised"


# ---- glasstorch only: the laziness itself, and threads ----------------------------------------

def test_a_new_tensor_has_no_counter_until_one_is_needed():
    """(The point of the laziness: an op's result that is never written, viewed or saved makes no
    counter. A change that makes one for every tensor again shows here, not only in a benchmark.)"""
    x = _fresh(gt, True)
    assert x._counter is None
    with gt.no_grad():
        a = x * 2 + 1
    assert a._counter is None and a._version == 0 and a._counter is None   # (_version makes none)
    y = x * x                                   # saves x: its version is read, no counter made
    assert x._counter is None and y._counter is None
    z = y.tanh()                                # saves its result: an alias, which shares z's counter
    assert z._counter is not None and z.grad_fn._saved[0]._counter is z._counter
    v = a[1:]                                   # a view shares its base's counter
    assert a._counter is not None and v._counter is a._counter
    (z.sum() + y.sum()).backward()
    assert x._counter is None


def test_views_made_in_threads_share_the_bases_counter():
    """Two threads making the first view of one tensor at once get one counter (make_counter's lock)."""
    n_threads, rounds = 4, 200
    barrier = threading.Barrier(n_threads)
    bases = [_computed(gt) for _ in range(rounds)]
    views = [[None] * rounds for _ in range(n_threads)]

    def work(k):
        for r, base in enumerate(bases):
            barrier.wait()
            views[k][r] = base[k:]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r, base in enumerate(bases):
        base.add_(1)
        assert all(views[k][r]._vc is base._vc and views[k][r]._version == 1 for k in range(n_threads))
