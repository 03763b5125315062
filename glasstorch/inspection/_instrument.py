"""The hooks inspection puts into glasstorch while it is on, and takes out when it is off.

glasstorch's own code has no inspection in it. Opening the first inspection session (``record()``,
``seatbelt()``, ``GLASSTORCH_SEATBELT=1``) *installs* wrappers around a handful of functions and
methods; closing the last one puts the originals back, so with inspection off glasstorch runs exactly
its torch-like code, at no cost. Sessions are counted, so they nest; installing and removing happen
under a lock.

What is wrapped, and where it is looked up (a wrapper only works where the call finds it):

=================================  ===========================================  ======================
what                               why                                          patched where
=================================  ===========================================  ======================
``autograd.graph.connect``         every node creation (provenance, NaN check,   every ``glasstorch.*``
                                   graphs kept alive, timeline)                  module global bound to
                                                                                 it (ops import it by
                                                                                 name), and ``graph``
``engine.run_backward``            backward passes (roots, cuts resolved)        ``engine`` attribute
``engine._collect``                the nodes a backward reaches (free: the        ``engine`` global
                                   engine walks them anyway)
``engine._accumulate``             gradients into leaves (which, how many)       ``engine`` global
``Tensor.detach/.item/.numpy...``  where a path to the loss is cut                ``Tensor`` class
``Tensor._set_requires_grad``,     forced ``requires_grad = True``, and            ``Tensor`` class
``requires_grad_``                 ``requires_grad_()`` on a non-leaf
``Tensor.grad`` (getter)           ``.grad`` of a non-leaf read                   ``Tensor`` class
``glasstorch.tensor``              re-wrapping a tensor that requires grad        top-level attribute
``Optimizer`` step (global         missing ``zero_grad``, cut parameters          the optimizer's own
pre-hook), ``zero_grad``,                                                         hook registry, class
``add_param_group``
``Module.__call__``/``zero_grad``  train mode under ``no_grad``, names of params  ``Module`` class
``nn.functional.cross_entropy``    probabilities passed as logits                 module attribute and
                                                                                  globals bound to it
=================================  ===========================================  ======================

What the wrappers observe goes into :data:`tracker` (weak side tables: nothing here keeps a tensor or a
graph alive). ``record`` reads it into a timeline, ``explain`` into a sentence, and ``seatbelt``
turns it into warnings (it plugs its checks in as :data:`checks`).
"""
import os
import sys
import threading
import warnings
import weakref

from .._tensor import Tensor
from ..autograd import graph as _graph, engine as _engine, grad_mode as _grad_mode
from ..autograd.graph import AccumulateGrad

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_state = _grad_mode._state


# ----------------------------------------------------------------------------------------------
# Where the user is
# ----------------------------------------------------------------------------------------------
def user_site(depth=1):
    """``(frame, api)`` for the innermost frame outside glasstorch, ``depth`` frames above the caller.

    ``api`` is the outermost glasstorch frame (the function the user called), or None.
    """
    f = sys._getframe(depth + 1)
    api = None
    while f is not None and f.f_code.co_filename.startswith(_PKG):
        api = f
        f = f.f_back
    return f, api


def where_of(frame):
    return None if frame is None else (frame.f_code.co_filename, frame.f_lineno)


# ----------------------------------------------------------------------------------------------
# Weak side tables
# ----------------------------------------------------------------------------------------------
class IdTable:
    """``obj -> value`` without keeping ``obj`` alive and without calling its ``__eq__``/``__hash__``.

    (Tensors compare elementwise, so a WeakKeyDictionary can't hold them.) ``_d`` maps ``id(obj)`` to
    ``[weakref, value]``; hot paths read it directly.
    """
    __slots__ = ("_d", "_keys", "_drop", "__weakref__")

    def __init__(self):
        self._d = {}
        self._keys = {}          # weakref -> id, for the callback (one bound method, no closure per entry)
        selfref = weakref.ref(self)

        def drop(ref):
            table = selfref()
            if table is not None:
                key = table._keys.pop(ref, None)
                e = table._d.get(key)
                if e is not None and e[0] is ref:
                    del table._d[key]
        self._drop = drop

    def set(self, obj, value):
        key = id(obj)
        entry = self._d.get(key)
        if entry is not None and entry[0]() is obj:
            entry[1] = value
            return
        ref = weakref.ref(obj, self._drop)
        self._keys[ref] = key
        self._d[key] = [ref, value]

    def get(self, obj, default=None):
        entry = self._d.get(id(obj))
        if entry is not None and entry[0]() is obj:
            return entry[1]
        return default

    def pop(self, obj, default=None):
        entry = self._d.get(id(obj))
        if entry is not None and entry[0]() is obj:
            del self._d[id(obj)]
            self._keys.pop(entry[0], None)
            return entry[1]
        return default

    def __contains__(self, obj):
        entry = self._d.get(id(obj))
        return entry is not None and entry[0]() is obj

    def items(self):
        for ref, value in list(self._d.values()):
            obj = ref()
            if obj is not None:
                yield obj, value

    def __len__(self):
        return len(self._d)

    def clear(self):
        self._d.clear()
        self._keys.clear()


class Cut:
    """One place where a path to the loss was cut: ``how`` (e.g. ``"detach()"``), the user's line."""
    __slots__ = ("how", "filename", "lineno")

    def __init__(self, how, filename, lineno):
        self.how, self.filename, self.lineno = how, filename, lineno

    def __repr__(self):
        return f"Cut({self.how!r} at {self.filename}:{self.lineno})"


class LeafInfo:
    """What the tracker knows about one leaf's ``.grad``."""
    __slots__ = ("grad_id", "grad_version", "backwards", "stepped", "carried", "last_backward",
                 "first_line")

    def __init__(self):
        self.grad_id = None
        self.grad_version = -1
        self.backwards = 0          # backward passes summed into the current .grad
        self.stepped = False        # an optimizer step has used the current .grad
        self.carried = False        # the current .grad holds gradients from before that step
        self.last_backward = 0      # index of the last backward that gave this leaf a gradient
        self.first_line = None


class Tracker:
    """Everything observed while inspection is on (kept after it is switched off, for ``explain``)."""

    def __init__(self):
        self.ever_active = False
        self.backward_count = 0        # loss.backward() passes (not autograd.grad)
        self.step_count = 0            # optimizer steps
        self.leaves = IdTable()        # leaf tensor -> LeafInfo
        self.cut_of = IdTable()        # leaf tensor -> Cut that kept its gradient away
        self.cut_results = IdTable()   # tensor made by a cut -> Cut
        self.resets = IdTable()        # optimizer/module -> (filename, lineno, backward_count) of its last
        #                                zero_grad(set_to_none=True)
        self.forced = IdTable()        # leaf whose requires_grad the user switched on -> (filename, lineno)
        self.consumed = IdTable()      # root node of a finished backward -> backward index
        self.pending = {}              # id(source) -> (Cut, leaf weakrefs, weakref to the source node if
        #                                the graph was too big to note now, weakref to the source itself
        #                                (ids are reused)): cuts the next backward resolves
        self.nograd_modules = {}       # id(module) -> (module weakref, Cut): modules run under no_grad
        self.root_modules = IdTable()  # top-level modules called -> True (for parameter names)
        self.modules_seen = IdTable()  # every module called from user code -> whether it was top-level
        self.optimizers = IdTable()    # optimizers seen -> True
        self.last_order = None         # nodes the running backward reaches (from the engine's _collect)
        self.last_reached = None       # ids of leaves the last backward reached

    # -- names ----------------------------------------------------------------------------
    def param_name(self, t):
        """``model.0.weight``-style name of a parameter of a module seen, or None."""
        for mod, _ in self.root_modules.items():
            try:
                for name, p in mod.named_parameters():
                    if p is t:
                        return name
            except Exception:  # a half-built module: names are a nicety
                continue
        for opt, _ in self.optimizers.items():
            for group in opt.param_groups:
                names = group.get("param_names")
                if names:
                    for name, p in zip(names, group["params"]):
                        if p is t:
                            return name
        return None


tracker = Tracker()


class _Checks:
    """The seatbelt's checks; ``seatbelt.py`` replaces these no-ops while a seatbelt is on."""
    on = False

    def node(self, node, inputs, outputs):
        pass

    def step(self, optimizer, params):
        pass

    def backward_roots(self, roots):
        pass

    def module_call(self, module, frame, first):
        pass

    def cross_entropy(self, input):
        pass

    def add_param_group(self, optimizer, group, frame):
        pass

    def nonleaf_grad(self, t, frame):
        pass

    def requires_grad_nonleaf(self, t, frame):
        pass


checks = _Checks()
timelines = []        # open record() sessions
_PENDING_MAX = 256    # unresolved cuts kept at most (the oldest are dropped)


def _timeline(kind, *args):
    tid = threading.get_ident()
    for rec in timelines:
        if rec._thread == tid:
            rec._event(kind, *args)


# ----------------------------------------------------------------------------------------------
# The wrappers
# ----------------------------------------------------------------------------------------------
_orig = {}   # name -> original object


# frames searched above connect for the user's line: record <- op <- (a method wrapper <-) user
_NEAR_DEPTHS = (2, 3, 4)
_getframe = sys._getframe


def _connect(node, inputs, outputs, saved=(), saved_output=-1):
    _orig_connect(node, inputs, outputs, saved, saved_output)
    if timelines:
        f, _ = user_site(1)
        where = None
        if f is not None:
            where = node._inspect_where = (f.f_code.co_filename, f.f_lineno)
        _timeline("create", node, inputs, outputs, where)
    else:
        # Provenance: the user's line for a tensor made from a leaf, which is what explain() and the
        # seatbelt name (w = torch.randn(3, requires_grad=True) * 0.01, .to(device), .double().cuda()):
        # an op whose inputs that require grad are all leaves, or a one-input op continuing such a
        # chain. A layer's inner ops are skipped: looking at the stack is most of what this costs.
        # (Inlined, and probing frames 2..4 -- frame 1 is glasstorch's record() -- rather than
        # following f_back: Python builds a frame object for each frame looked at.)
        if len(inputs) == 1:
            x = inputs[0]
            fn = x._grad_fn if x is not None else _NO_NODE
            wanted = fn is None or (fn is not _NO_NODE and "_inspect_where" in fn.__dict__)
        else:
            wanted = True
            for x in inputs:
                if x is not None and x._grad_fn is not None:
                    wanted = False
                    break
        if wanted:
            for depth in _NEAR_DEPTHS:
                try:
                    f = _getframe(depth)
                except ValueError:
                    break
                if not f.f_code.co_filename.startswith(_PKG):
                    node._inspect_where = (f.f_code.co_filename, f.f_lineno)
                    break
    if checks.on:
        checks.node(node, inputs, outputs)
    return node


_NO_NODE = object()
_orig_connect = None


def user_where(depth=1):
    """(filename, lineno) of the innermost frame outside glasstorch, or None."""
    frame, _ = user_site(depth + 1)
    return where_of(frame)


def _run_backward(roots, root_grads, retain_graph, create_graph, *args, **kwargs):
    # the engine's optional arguments: capture (autograd.grad's outputs), accumulate, accumulate_only
    capture = args[0] if len(args) > 0 else kwargs.get("capture")
    accumulate = args[1] if len(args) > 1 else kwargs.get("accumulate", True)
    accumulate_only = args[2] if len(args) > 2 else kwargs.get("accumulate_only")
    t = tracker
    counted = accumulate and capture is None or accumulate_only is not None
    if counted:
        t.backward_count += 1
    if checks.on:
        checks.backward_roots(roots)
    if timelines:
        _timeline("backward", roots, retain_graph, user_where(1))
    outer, t.last_order = t.last_order, None     # (a backward inside a backward: checkpoint's recompute)
    try:
        return _orig["run_backward"](roots, root_grads, retain_graph, create_graph, *args, **kwargs)
    finally:
        order, t.last_order = t.last_order, outer
        if timelines:
            _timeline("backward_end", order)
        for node, _ in roots:
            if node is not None:
                t.consumed.set(node, t.backward_count)
        if counted and order is not None:
            _resolve_cuts(order)


def _collect(roots):
    result = _orig["_collect"](roots)     # (dependency counts, the nodes reached)
    tracker.last_order = result[1]
    if timelines:
        _timeline("reach", result[1])
    return result


def _accumulate(acc, grad, create_graph):
    var = acc.variable
    t = tracker
    e = t.leaves._d.get(id(var))
    info = e[1] if e is not None and e[0]() is var else None
    before = var._grad
    # is .grad still the very tensor the last backward left there, unchanged (not zeroed in place)?
    same = info is not None and before is not None and id(before) == info.grad_id and \
        before._vc.version == info.grad_version
    # zeroed through .data escapes the version counter: look at the values (only after a step)
    stale = same and info.stepped and not info.carried and bool(before._data.any())
    if grad is None:
        return _orig["_accumulate"](acc, grad, create_graph)
    shape = grad.shape if timelines else None
    # hand the gradient on without keeping a reference here: the engine steals a gradient (no copy)
    # only when it can prove nobody else holds it, by counting references
    box = [grad]
    del grad
    _orig["_accumulate"](acc, box.pop(), create_graph)   # (no *args: a tuple would hold it too)
    if info is None:
        info = LeafInfo()
        t.leaves.set(var, info)
    if not same or (info.stepped and not info.carried and not stale):
        info.backwards, info.stepped, info.carried = 1, False, False
    else:
        info.backwards += 1
        info.carried = info.carried or stale
    after = var._grad
    info.grad_id, info.grad_version = id(after), after._vc.version
    info.last_backward = t.backward_count
    if t.cut_of._d:
        t.cut_of.pop(var)
    if timelines:
        _timeline("accumulate", acc, var, shape, before)


def _resolve_cuts(order):
    """After a backward: the leaves behind each cut seen since the last one, that it did not reach."""
    t = tracker
    if not t.pending and not t.nograd_modules and not t.forced._d:
        t.last_reached = None   # (only the forced-requires_grad check reads it)
        return
    reached = {id(n.variable) for n in order if type(n) is AccumulateGrad}
    t.last_reached = reached
    if not t.pending and not t.nograd_modules:
        return
    seen = {id(n) for n in order}

    def cut_off(var, cut):
        if var is not None and var._requires_grad and id(var) not in reached and var._grad is None:
            t.cut_of.set(var, cut)
    for cut, leaves, source, _ in list(t.pending.values()):
        for ref in leaves:                       # noted when the cut happened
            cut_off(ref(), cut)
        node = source() if source is not None else None
        if node is None:                         # all noted then (or a big graph that has died since)
            continue
        stack = [node]
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            if type(node) is AccumulateGrad:
                cut_off(node.variable, cut)
                continue
            stack.extend(n for n, _ in node.next_functions)
    for ref, cut in list(t.nograd_modules.values()):
        module = ref()
        try:
            params = list(module.parameters()) if module is not None else ()
        except Exception:
            continue
        for p in params:
            cut_off(p, cut)
    t.pending.clear()
    t.nograd_modules.clear()


_CAPTURE_BUDGET = 48   # graph nodes walked when a cut happens (a small graph is then not kept alive)


def _leaves_within(node, budget=_CAPTURE_BUDGET):
    """(weak references to the leaves of ``node``'s graph found within ``budget`` nodes, whether that
    was all of the graph)."""
    leaves, seen, stack = [], {id(node)}, [node]
    while stack:
        n = stack.pop()
        if type(n) is AccumulateGrad:
            leaves.append(weakref.ref(n.variable))
            continue
        for nxt, _ in n.next_functions:
            if nxt is not None and id(nxt) not in seen:
                if len(seen) >= budget:
                    return leaves, False
                seen.add(id(nxt))
                stack.append(nxt)
    return leaves, True


def note_cut(tensor, out, how, frame):
    """``out`` was made from ``tensor`` (which requires grad) by ``how``, on the user's line ``frame``.

    Which leaves the cut keeps from the loss is known only after the next backward (those it does not
    reach). Nothing here keeps a graph alive: the leaves within a few dozen nodes are noted now (the
    graph of ``(x @ w).sum().item()`` dies at once); the rest of a big graph is walked at the backward,
    if it is still alive then.
    """
    t = tracker
    source = tensor._grad_fn
    out_is_tensor = isinstance(out, Tensor)
    if source is not None and source in t.consumed:
        if out_is_tensor:
            t.cut_results.set(out, Cut(how, frame.f_code.co_filename, frame.f_lineno))
        return   # loss.item() after loss.backward(): nothing is lost
    cut = Cut(how, frame.f_code.co_filename, frame.f_lineno)
    if out_is_tensor:
        t.cut_results.set(out, cut)
    owner = source if source is not None else tensor
    key = id(owner)
    noted = t.pending.get(key)
    if noted is not None and noted[3]() is owner:
        return   # this very graph's cut is noted already (loss.item() twice)
    # else a new key, or the id of a dead object that no backward resolved: ids are reused
    if noted is None and len(t.pending) >= _PENDING_MAX:
        t.pending.pop(next(iter(t.pending)))
    if source is None:                           # a leaf itself was cut (w.detach(), w.item())
        t.pending[key] = (cut, [weakref.ref(tensor)], None, weakref.ref(owner))
    else:
        leaves, complete = _leaves_within(source)
        t.pending[key] = (cut, leaves, None if complete else weakref.ref(source), weakref.ref(owner))
    if timelines:
        _timeline("cut", tensor, cut)


def _cutting(name, how):
    """A Tensor method whose result has no path back to ``self`` (detach, item, numpy, ...)."""
    orig = Tensor.__dict__[name]
    if name in ("detach", "item"):   # no arguments, and called inside glasstorch too: keep it lean
        def wrapper(self):
            out = orig(self)
            if self._requires_grad:
                f = sys._getframe(1)
                if not f.f_code.co_filename.startswith(_PKG):
                    note_cut(self, out, how, f)
            return out
        wrapper.__wrapped__ = orig
        wrapper.__name__ = getattr(orig, "__name__", name)
        wrapper.__doc__ = getattr(orig, "__doc__", None)
        return wrapper

    def wrapper(self, *args, **kwargs):
        out = orig(self, *args, **kwargs)
        if self._requires_grad:
            f = sys._getframe(1)
            if not f.f_code.co_filename.startswith(_PKG):
                note_cut(self, out, how, f)
        return out
    wrapper.__wrapped__ = orig
    wrapper.__name__ = getattr(orig, "__name__", name)
    wrapper.__doc__ = getattr(orig, "__doc__", None)
    return wrapper


def _casting(name):
    """A cast (``.long()``, ``.to(torch.int64)``...): a cut when the result can't carry a gradient."""
    orig = Tensor.__dict__[name]

    def wrapper(self, *args, **kwargs):
        out = orig(self, *args, **kwargs)
        if self._requires_grad and _state.enabled and isinstance(out, Tensor) and not out._requires_grad:
            f = sys._getframe(1)
            if not f.f_code.co_filename.startswith(_PKG):
                note_cut(self, out, f".{name}() (a cast to {out.dtype}, which has no gradient)", f)
        return out
    wrapper.__wrapped__ = orig
    wrapper.__name__ = getattr(orig, "__name__", name)
    wrapper.__doc__ = getattr(orig, "__doc__", None)
    return wrapper


def _data_property():
    orig = Tensor.__dict__["data"]

    def fget(self):
        out = orig.fget(self)
        if self._requires_grad:
            f = sys._getframe(1)
            if not f.f_code.co_filename.startswith(_PKG):
                note_cut(self, out, ".data", f)
        return out
    return property(fget, orig.fset, orig.fdel, orig.__doc__)


_SETTER_NAMES = {"requires_grad", "requires_grad_", "_set_requires_grad", "fset", "set_requires_grad"}


def _forcing_frame(depth):
    """The user's frame if the user wrote ``x.requires_grad = True`` / ``x.requires_grad_()`` directly
    (not a factory's ``requires_grad=True``, which reaches the setter from inside glasstorch)."""
    f = sys._getframe(depth + 1)
    while f is not None and f.f_code.co_filename.startswith(_PKG):
        if f.f_code.co_name not in _SETTER_NAMES:
            return None
        f = f.f_back
    return f


def _requires_grad_setter():
    """Wrap where requires_grad is actually set: ``Tensor._set_requires_grad`` if the core has it (the
    property's setter and ``requires_grad_()`` both call it), else the property's setter."""
    if "_set_requires_grad" in vars(Tensor):
        orig = Tensor.__dict__["_set_requires_grad"]

        def _set_requires_grad(self, value, *args, **kwargs):
            forced = value and not self._requires_grad and self._grad_fn is None
            orig(self, value, *args, **kwargs)
            if forced:
                _note_forced(self, _forcing_frame(1))
        _set_requires_grad.__wrapped__ = orig
        return "_set_requires_grad", _set_requires_grad
    orig = Tensor.__dict__["requires_grad"]

    def fset(self, value):
        forced = value and not self._requires_grad and self._grad_fn is None
        orig.fset(self, value)
        if forced:
            _note_forced(self, _forcing_frame(1))
    return "requires_grad", property(orig.fget, fset, orig.fdel, orig.__doc__)


def _note_forced(t, frame):
    if frame is not None and t._requires_grad:
        tracker.forced.set(t, (frame.f_code.co_filename, frame.f_lineno))


def _requires_grad_method():
    orig = Tensor.__dict__["requires_grad_"]

    def requires_grad_(self, requires_grad=True):
        if requires_grad and self._grad_fn is not None and checks.on:
            f = sys._getframe(1)
            if not f.f_code.co_filename.startswith(_PKG):
                checks.requires_grad_nonleaf(self, f)
        return orig(self, requires_grad)
    requires_grad_.__wrapped__ = orig
    requires_grad_.__doc__ = orig.__doc__
    return requires_grad_


def _grad_property():
    orig = Tensor.__dict__["grad"]
    fget0 = orig.fget

    def fget(self):
        if self._grad_fn is None:
            return self._grad       # a leaf: what the original getter returns, with no warning to give
        if checks.on and not self._retains_grad:
            f = sys._getframe(1)
            if not f.f_code.co_filename.startswith(_PKG):
                checks.nonleaf_grad(self, f)
        return call_warning_at_user(fget0, self)
    return property(fget, orig.fset, orig.fdel, orig.__doc__)


def call_warning_at_user(fn, *args, **kwargs):
    """``fn(*args, **kwargs)``, with the warnings it gives moved to the user's line.

    glasstorch's warnings use ``stacklevel`` to point at the caller; a wrapper adds a frame, which would
    point them at the wrapper. They are caught and given again at the first frame outside glasstorch,
    through that module's registry, so the usual once-per-line filtering still applies.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn(*args, **kwargs)
    if caught:
        frame, _ = user_site(1)
        for w in caught:
            if frame is not None and w.filename.startswith(_PKG):
                g = frame.f_globals
                warnings.warn_explicit(w.message, w.category, frame.f_code.co_filename, frame.f_lineno,
                                       module=g.get("__name__", "__main__"),
                                       registry=g.setdefault("__warningregistry__", {}),
                                       module_globals=g if os.path.isfile(frame.f_code.co_filename) else None)
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
    return result


def _tensor_factory(orig):
    def tensor(data, *args, **kwargs):
        out = call_warning_at_user(orig, data, *args, **kwargs)
        src = _grad_source(data)
        if src is not None:
            f = sys._getframe(1)
            if not f.f_code.co_filename.startswith(_PKG):
                note_cut(src, out, "torch.tensor(...) (re-wrapping copies the values, not the graph)", f)
        return out
    tensor.__wrapped__ = orig
    tensor.__doc__ = orig.__doc__
    return tensor


def _grad_source(data, depth=0):
    """The first tensor that requires grad in ``data`` (a tensor or a short nested list of them)."""
    if isinstance(data, Tensor):
        return data if data._requires_grad else None
    if depth < 2 and isinstance(data, (list, tuple)):
        for x in data[:64]:
            s = _grad_source(x, depth + 1)
            if s is not None:
                return s
    return None


def _seen_optimizer(optimizer):
    if id(optimizer) not in tracker.optimizers._d:
        tracker.optimizers.set(optimizer, True)


def _step_pre_hook(optimizer, args, kwargs):
    t = tracker
    _seen_optimizer(optimizer)
    leaves = t.leaves._d
    params = []   # (parameter, its LeafInfo or None)
    for group in optimizer.param_groups:
        for p in group["params"]:
            e = leaves.get(id(p))
            params.append((p, e[1] if e is not None and e[0]() is p else None))
    if checks.on:
        checks.step(optimizer, params)
    t.step_count += 1
    for p, info in params:
        if info is not None and p._grad is not None:
            info.stepped = True
    if timelines:
        _timeline("step", optimizer, user_where(1))


def _note_zero_grad(owner, params, set_to_none, frame, what):
    """``owner.zero_grad()`` ran (an optimizer or a module); ``params()`` lists what it resets."""
    t = tracker
    while frame is not None and frame.f_code.co_filename.startswith(_PKG):
        frame = frame.f_back    # called from inside glasstorch: the user's line is further out
    if set_to_none and frame is not None:
        t.resets.set(owner, (frame.f_code.co_filename, frame.f_lineno, t.backward_count))
    if timelines:
        _timeline("zero_grad", what, [p for p in params() if p._grad is not None], set_to_none, where_of(frame))


def reset_of(tensor):
    """(filename, lineno, backward count) of the last zero_grad(set_to_none=True) that covers ``tensor``."""
    best = None
    for owner, rec in tracker.resets.items():
        try:
            params = owner_params(owner)
        except Exception:
            continue
        if any(p is tensor for p in params) and (best is None or rec[2] >= best[2]):
            best = rec
    return best


def owner_params(owner):
    if hasattr(owner, "param_groups"):
        return [p for g in owner.param_groups for p in g["params"]]
    return list(owner.parameters())


def _optimizer_zero_grad(orig):
    def zero_grad(self, set_to_none=True):
        _seen_optimizer(self)
        _note_zero_grad(self, lambda: owner_params(self), set_to_none, sys._getframe(1), "optimizer")
        return orig(self, set_to_none)
    zero_grad.__wrapped__ = orig
    zero_grad.__doc__ = orig.__doc__
    return zero_grad


def _optimizer_add_param_group(orig):
    def add_param_group(self, param_group):
        tracker.optimizers.set(self, True)
        if checks.on and isinstance(param_group, dict):
            frame, _ = user_site(1)
            checks.add_param_group(self, param_group, frame)
        return orig(self, param_group)
    add_param_group.__wrapped__ = orig
    add_param_group.__doc__ = orig.__doc__
    return add_param_group


def _module_call(orig):
    def __call__(self, *args, **kwargs):
        f = sys._getframe(1)
        if not f.f_code.co_filename.startswith(_PKG):
            _user_module_call(self, f)
        return orig(self, *args, **kwargs)
    __call__.__wrapped__ = orig
    _module_call_codes.add(__call__.__code__)
    return __call__


_module_call_codes = set()


def _inside_module_call(frame):
    """Whether ``frame`` runs inside another module's call (a user forward() calling a submodule)."""
    f = frame.f_back
    while f is not None:
        if f.f_code in _module_call_codes:
            return True
        f = f.f_back
    return False


def _user_module_call(module, frame):
    """A module called from user code: the first call is looked at closely; calls under no_grad too."""
    t = tracker
    e = t.modules_seen._d.get(id(module))
    first = e is None or e[0]() is not module
    if not first and _state.enabled:
        return      # the hot path: a known module in a training step
    if _inside_module_call(frame):
        if first:
            t.modules_seen.set(module, False)
        return      # the outer module's call speaks for it
    if first:
        t.modules_seen.set(module, True)
        t.root_modules.set(module, True)
    if not _state.enabled and id(module) not in t.nograd_modules:
        t.nograd_modules[id(module)] = (weakref.ref(module),
                                        Cut("a no_grad block", frame.f_code.co_filename, frame.f_lineno))
    if checks.on:
        checks.module_call(module, frame, first)


def _module_zero_grad(orig):
    def zero_grad(self, set_to_none=True):
        _note_zero_grad(self, lambda: owner_params(self), set_to_none, sys._getframe(1), "module")
        return orig(self, set_to_none)
    zero_grad.__wrapped__ = orig
    zero_grad.__doc__ = orig.__doc__
    return zero_grad


def _cross_entropy(orig):
    def cross_entropy(input, target, *args, **kwargs):
        if checks.on and isinstance(input, Tensor):
            checks.cross_entropy(input)
        return orig(input, target, *args, **kwargs)
    cross_entropy.__wrapped__ = orig
    cross_entropy.__doc__ = orig.__doc__
    return cross_entropy


# ----------------------------------------------------------------------------------------------
# Installing and removing
# ----------------------------------------------------------------------------------------------
_CUTTING = {"detach": "detach()", "item": ".item()", "numpy": ".numpy()", "tolist": ".tolist()",
            "__float__": "float()", "__int__": "int()", "__array__": "a NumPy conversion (np.asarray)"}
_CASTS = ("to", "long", "int", "short", "char", "byte", "bool", "type")

_lock = threading.RLock()
_active = 0
_undo = []   # callables that put the originals back


def _set_attr(owner, name, value):
    """Replace ``owner.name`` (a class or module); remember how to put the original back."""
    had = name in vars(owner)
    old = vars(owner)[name] if had else None
    setattr(owner, name, value)

    def undo():
        if had:
            setattr(owner, name, old)
        else:
            delattr(owner, name)
    _undo.append(undo)


def _replace_everywhere(original, replacement):
    """Rebind every ``glasstorch.*`` module global that holds ``original`` (``from x import f`` copies)."""
    def swap(old, new):
        for mname, mod in list(sys.modules.items()):
            if mod is None or not (mname == "glasstorch" or mname.startswith("glasstorch.")) \
                    or mname.startswith(__package__):   # (our own wrappers must keep their names)
                continue
            d = getattr(mod, "__dict__", None)
            if not d:
                continue
            for k, v in list(d.items()):
                if v is old:
                    d[k] = new
    swap(original, replacement)
    # undo sweeps again, so a module imported while inspection was on is also put back
    _undo.append(lambda: swap(replacement, original))


_CONNECT_SIGNATURE = "(node, inputs, outputs, saved=(), saved_output=-1)"


def _install():
    global _orig_connect
    _orig["connect"] = _orig_connect = _graph.connect
    # the wrapper spells out connect's arguments (packing *args costs on every op): check they still match
    import inspect
    if str(inspect.signature(_graph.connect)) != _CONNECT_SIGNATURE:
        raise RuntimeError(f"glasstorch.inspection: autograd.graph.connect{inspect.signature(_graph.connect)} "
                           f"no longer matches the wrapper's {_CONNECT_SIGNATURE}; update _instrument._connect")
    _orig["run_backward"] = _engine.run_backward
    _orig["_collect"] = _engine._collect
    _orig["_accumulate"] = _engine._accumulate
    _replace_everywhere(_graph.connect, _connect)
    _replace_everywhere(_engine.run_backward, _run_backward)
    _set_attr(_engine, "_collect", _collect)
    _set_attr(_engine, "_accumulate", _accumulate)

    for name, how in _CUTTING.items():
        if name in vars(Tensor):
            _set_attr(Tensor, name, _cutting(name, how))
    for name in _CASTS:
        if name in vars(Tensor):
            _set_attr(Tensor, name, _casting(name))
    _set_attr(Tensor, "data", _data_property())
    _set_attr(Tensor, *_requires_grad_setter())
    _set_attr(Tensor, "requires_grad_", _requires_grad_method())
    _set_attr(Tensor, "grad", _grad_property())

    import glasstorch
    if "tensor" in vars(glasstorch):
        _set_attr(glasstorch, "tensor", _tensor_factory(glasstorch.tensor))

    try:
        from ..optim import optimizer as _optimizer
    except ImportError:
        _optimizer = None
    if _optimizer is not None:
        Optimizer = _optimizer.Optimizer
        handle = _optimizer.register_optimizer_step_pre_hook(_step_pre_hook)
        _undo.append(handle.remove)
        _set_attr(Optimizer, "zero_grad", _optimizer_zero_grad(Optimizer.zero_grad))
        _set_attr(Optimizer, "add_param_group", _optimizer_add_param_group(Optimizer.add_param_group))

    try:
        from ..nn.modules import module as _module
    except ImportError:
        _module = None
    if _module is not None and hasattr(_module, "Module"):
        Module = _module.Module
        _set_attr(Module, "__call__", _module_call(vars(Module)["__call__"]))
        _set_attr(Module, "zero_grad", _module_zero_grad(Module.zero_grad))

    try:
        from ..nn import functional as F
    except ImportError:
        F = None
    if F is not None and hasattr(F, "cross_entropy"):
        _replace_everywhere(F.cross_entropy, _cross_entropy(F.cross_entropy))


def _uninstall():
    while _undo:
        _undo.pop()()
    _orig.clear()


def acquire():
    """Open an inspection session (installs the wrappers if it is the first)."""
    global _active
    with _lock:
        if _active == 0:
            try:
                _install()
            except BaseException:
                _uninstall()
                raise
        _active += 1
        tracker.ever_active = True


def release():
    """Close an inspection session (removes the wrappers if it was the last)."""
    global _active
    with _lock:
        if _active <= 0:
            return
        _active -= 1
        if _active == 0:
            _uninstall()


def active():
    return _active > 0


__all__ = ["acquire", "release", "active", "tracker", "checks", "user_site", "note_cut"]
