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
``Tensor.requires_grad`` (setter)  forced ``requires_grad = True``                ``Tensor`` class
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


def called_by_user(depth=1):
    """Whether the function ``depth`` frames up was called directly from code outside glasstorch."""
    return not sys._getframe(depth + 1).f_code.co_filename.startswith(_PKG)


def where_of(frame):
    return None if frame is None else (frame.f_code.co_filename, frame.f_lineno)


# ----------------------------------------------------------------------------------------------
# Weak side tables
# ----------------------------------------------------------------------------------------------
class IdTable:
    """``obj -> value`` without keeping ``obj`` alive and without calling its ``__eq__``/``__hash__``.

    (Tensors compare elementwise, so a WeakKeyDictionary can't hold them.)
    """
    __slots__ = ("_d", "__weakref__")

    def __init__(self):
        self._d = {}

    def set(self, obj, value):
        key = id(obj)
        entry = self._d.get(key)
        if entry is not None and entry[0]() is obj:
            entry[1] = value
            return
        selfref = weakref.ref(self)

        def drop(_, key=key):
            table = selfref()
            if table is not None:
                e = table._d.get(key)
                if e is not None and e[0]() is None:
                    del table._d[key]
        self._d[key] = [weakref.ref(obj, drop), value]

    def get(self, obj, default=None):
        entry = self._d.get(id(obj))
        if entry is not None and entry[0]() is obj:
            return entry[1]
        return default

    def pop(self, obj, default=None):
        entry = self._d.get(id(obj))
        if entry is not None and entry[0]() is obj:
            del self._d[id(obj)]
            return entry[1]
        return default

    def __contains__(self, obj):
        entry = self._d.get(id(obj))
        return entry is not None and entry[0]() is obj

    def has_id(self, key):
        return key in self._d

    def items(self):
        for ref, value in list(self._d.values()):
            obj = ref()
            if obj is not None:
                yield obj, value

    def __len__(self):
        return len(self._d)

    def clear(self):
        self._d.clear()


class Cut:
    """One place where a path to the loss was cut: ``how`` (e.g. ``"detach()"``), the user's line."""
    __slots__ = ("how", "filename", "lineno", "source")

    def __init__(self, how, filename, lineno, source=None):
        self.how, self.filename, self.lineno, self.source = how, filename, lineno, source

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
        self.resets = IdTable()        # leaf -> (filename, lineno, backward_count) of zero_grad(set_to_none)
        self.forced = IdTable()        # leaf whose requires_grad the user switched on -> (filename, lineno)
        self.consumed = IdTable()      # root node of a finished backward -> backward index
        self.pending = {}              # id(source) -> (source, Cut): cuts not yet resolved by a backward
        self.nograd_modules = {}       # id(module) -> (module, Cut): modules run under no_grad
        self.root_modules = IdTable()  # top-level modules called -> True (for parameter names)
        self.optimizers = IdTable()    # optimizers seen -> True
        self.last_order = None         # nodes the running backward reaches (from the engine's _collect)
        self.last_reached = None       # ids of leaves the last backward reached
        self.last_roots = ()

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

    def node(self, node, inputs, outputs, where):
        pass

    def step(self, optimizer):
        pass

    def backward_roots(self, roots):
        pass

    def module_call(self, module, frame):
        pass

    def cross_entropy(self, input, frame):
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


def _connect(node, inputs, outputs, saved=(), saved_output=-1):
    _orig["connect"](node, inputs, outputs, saved, saved_output)
    f = sys._getframe(1)
    api = None
    while f is not None and f.f_code.co_filename.startswith(_PKG):
        api = f
        f = f.f_back
    where = None if f is None else (f.f_code.co_filename, f.f_lineno, None if api is None else api.f_code.co_name)
    node._inspect_where = where
    if checks.on:
        checks.node(node, inputs, outputs, where)
    if timelines:
        _timeline("create", node, inputs, outputs, where)
    return node


def _run_backward(roots, root_grads, retain_graph, create_graph, capture=None, accumulate=True,
                  accumulate_only=None):
    t = tracker
    counted = accumulate and capture is None or accumulate_only is not None
    if counted:
        t.backward_count += 1
    if checks.on:
        checks.backward_roots(roots)
    frame, _ = user_site(1)
    if timelines:
        _timeline("backward", roots, retain_graph, where_of(frame))
    t.last_order = None
    try:
        return _orig["run_backward"](roots, root_grads, retain_graph, create_graph, capture, accumulate,
                                     accumulate_only)
    finally:
        order, t.last_order = t.last_order, None
        if timelines:
            _timeline("backward_end", order)
        for node, _ in roots:
            if node is not None:
                t.consumed.set(node, t.backward_count)
        t.last_roots = [n for n, _ in roots]
        if counted and order is not None:
            _resolve_cuts(order)


def _collect(roots):
    deps, order = _orig["_collect"](roots)
    tracker.last_order = order
    if timelines:
        _timeline("reach", order)
    return deps, order


def _accumulate(acc, grad, create_graph):
    var = acc.variable
    t = tracker
    info = t.leaves.get(var)
    before = var._grad
    # is .grad still the very tensor the last backward left there, unchanged (not zeroed in place)?
    same = info is not None and before is not None and id(before) == info.grad_id and \
        before._vc.version == info.grad_version
    # zeroed through .data escapes the version counter: look at the values (only after a step)
    stale = same and info.stepped and not info.carried and bool(before._data.any())
    if grad is None:
        return _orig["_accumulate"](acc, grad, create_graph)
    shape = grad.shape
    # hand the gradient on without keeping a reference here: the engine steals a gradient (no copy)
    # only when it can prove nobody else holds it, by counting references
    box = [grad]
    del grad
    _orig["_accumulate"](acc, box.pop(), create_graph)
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
    t.cut_of.pop(var)
    if timelines:
        _timeline("accumulate", acc, var, shape, before)


def _resolve_cuts(order):
    """After a backward: the leaves behind each cut seen since the last one, that it did not reach."""
    t = tracker
    reached = {id(n.variable) for n in order if type(n) is AccumulateGrad}
    t.last_reached = reached
    if not t.pending and not t.nograd_modules:
        return
    seen = {id(n) for n in order}
    for source, cut in list(t.pending.values()):
        if isinstance(source, Tensor):           # a leaf itself was cut (w.detach(), w.item())
            if id(source) not in reached and source._requires_grad:
                t.cut_of.set(source, cut)
            continue
        stack = [source]
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            if type(node) is AccumulateGrad:
                var = node.variable
                if id(var) not in reached and var._grad is None:
                    t.cut_of.set(var, cut)
                continue
            stack.extend(n for n, _ in node.next_functions)
    for module, cut in list(t.nograd_modules.values()):
        try:
            params = list(module.parameters())
        except Exception:
            continue
        for p in params:
            if p._requires_grad and id(p) not in reached and p._grad is None:
                t.cut_of.set(p, cut)
    t.pending.clear()
    t.nograd_modules.clear()


def note_cut(tensor, out, how, frame):
    """``out`` was made from ``tensor`` (which requires grad) by ``how``, on the user's line ``frame``."""
    t = tracker
    cut = Cut(how, frame.f_code.co_filename, frame.f_lineno)
    if isinstance(out, Tensor):
        t.cut_results.set(out, cut)
    source = tensor._grad_fn if tensor._grad_fn is not None else tensor
    if source is not tensor and source in t.consumed:   # loss.item() after loss.backward(): nothing lost
        return
    if id(source) in t.pending:
        return
    if len(t.pending) >= _PENDING_MAX:
        t.pending.pop(next(iter(t.pending)))
    cut.source = weakref.ref(source) if not isinstance(source, Tensor) else None
    t.pending[id(source)] = (source, cut)
    if timelines:
        _timeline("cut", tensor, cut)


def _cutting(name, how):
    """A Tensor method whose result has no path back to ``self`` (detach, item, numpy, ...)."""
    orig = Tensor.__dict__[name]

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
        if self._grad_fn is None:    # a leaf: the common case (optimizers read p.grad), kept to one test
            return fget0(self)
        if not self._retains_grad and checks.on:
            f = sys._getframe(1)
            if not f.f_code.co_filename.startswith(_PKG):
                checks.nonleaf_grad(self, f)
        return fget0(self)
    return property(fget, orig.fset, orig.fdel, orig.__doc__)


def _tensor_factory(orig):
    def tensor(data, *args, **kwargs):
        out = orig(data, *args, **kwargs)
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


def _step_pre_hook(optimizer, args, kwargs):
    t = tracker
    t.optimizers.set(optimizer, True)
    if checks.on:
        checks.step(optimizer)
    t.step_count += 1
    for group in optimizer.param_groups:
        for p in group["params"]:
            if p._grad is not None:
                info = t.leaves.get(p)
                if info is not None:
                    info.stepped = True
    if timelines:
        frame, _ = user_site(2)
        _timeline("step", optimizer, where_of(frame))


def _note_resets(params, set_to_none, frame, what):
    t = tracker
    where = where_of(frame)
    reset = []
    for p in params:
        if p._grad is not None:
            if set_to_none and where is not None:
                t.resets.set(p, (where[0], where[1], t.backward_count))
            reset.append(p)
    if timelines:
        _timeline("zero_grad", what, reset, set_to_none, where)


def _optimizer_zero_grad(orig):
    def zero_grad(self, set_to_none=True):
        frame, _ = user_site(1)
        t = tracker
        t.optimizers.set(self, True)
        _note_resets([p for g in self.param_groups for p in g["params"]], set_to_none, frame, "optimizer")
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


_local = threading.local()


def _module_call(orig):
    def __call__(self, *args, **kwargs):
        depth = getattr(_local, "depth", 0)
        if depth == 0:
            f = sys._getframe(1)
            if not f.f_code.co_filename.startswith(_PKG):
                _top_module_call(self, f)
        _local.depth = depth + 1
        try:
            return orig(self, *args, **kwargs)
        finally:
            _local.depth = depth
    __call__.__wrapped__ = orig
    return __call__


def _top_module_call(module, frame):
    t = tracker
    if module not in t.root_modules:
        t.root_modules.set(module, True)
    if not _state.enabled and id(module) not in t.nograd_modules:
        t.nograd_modules[id(module)] = (module, Cut("a no_grad block", frame.f_code.co_filename, frame.f_lineno))
    if checks.on:
        checks.module_call(module, frame)


def _module_zero_grad(orig):
    def zero_grad(self, set_to_none=True):
        frame, _ = user_site(1)
        try:
            params = list(self.parameters())
        except Exception:
            params = []
        _note_resets(params, set_to_none, frame, "module")
        return orig(self, set_to_none)
    zero_grad.__wrapped__ = orig
    zero_grad.__doc__ = orig.__doc__
    return zero_grad


def _cross_entropy(orig):
    def cross_entropy(input, target, *args, **kwargs):
        if checks.on and isinstance(input, Tensor):
            frame, _ = user_site(1)
            checks.cross_entropy(input, frame)
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


def _install():
    _orig["connect"] = _graph.connect
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
