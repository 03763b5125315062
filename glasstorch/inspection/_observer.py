"""How inspection watches glasstorch: through the seam, as any user's tool could.

Inspection changes nothing in glasstorch -- no function, method, class or module attribute is
replaced, so it sees a call however the user imported the function (``from
glasstorch.nn.functional import cross_entropy`` before a seatbelt opened is seen like
``F.cross_entropy``). Opening the first inspection session in a thread (``record()``,
``seatbelt()``, ``GLASSTORCH_SEATBELT=1``) puts four observers in place; closing the last one takes
them away, and glasstorch runs with nothing watching:

==================================  ==============================================  =========================================
observer                            sees                                            used for
==================================  ==============================================  =========================================
:class:`Glass`, a                   every public call (``torch.mul``, ``F.linear``,  the nodes each call recorded and the user's
``TorchFunctionMode``               ``x.detach()``, ``w.grad``, ``loss.backward``)   line; cuts (``.item()``, ``.detach()``,
                                    with its arguments and its result               ``.data``, casts, ``torch.tensor(t)``);
                                                                                    ``requires_grad`` forced; ``.grad`` read or
                                                                                    reset; the first NaN/inf; graphs kept alive;
                                                                                    probabilities given to ``cross_entropy``
:class:`BackwardWatch`, an          a backward pass starting and ending, each       which leaves got a gradient (and how many
engine observer                     node it runs, each gradient accumulated         backward passes summed into ``.grad``);
                                                                                    the timeline's run/free events
a global module forward pre-hook    every module call                               parameter names, train mode under no_grad
                                                                                    modules run under no_grad
global optimizer step hooks         every ``optimizer.step()``                      missing ``zero_grad``, cut parameters
==================================  ==============================================  =========================================

(``glasstorch/_seam.py`` explains the seam: the one check every public function starts with, and
the engine's observer list.) The mode is thread-local, as torch's modes are: a session watches the
thread that opened it.

What the observers see goes into :data:`tracker` (weak side tables: nothing here keeps a tensor or
a graph alive). ``record`` reads it into a timeline, ``explain`` into a sentence, and ``seatbelt``
turns it into warnings (it plugs its checks in with :func:`set_checks`).
"""
import os
import sys
import threading
import weakref
from itertools import chain
from operator import attrgetter, itemgetter

from .._tensor import Tensor
from .. import _seam
from .._seam import (seam, add_engine_observer, body_of, is_metadata_query, _Seam, _FIRST_CALL as _seam_first_call,
                     _subclasses_exist, pause_observer, unpause_observer)
from .._warnings import is_glasstorch_file, GLASSTORCH_PREFIXES
from ..overrides import TorchFunctionMode
from .. import autograd
from ..autograd import grad_mode as _grad_mode
from ..ops import creation, nn_loss
from ..autograd.graph import AccumulateGrad, version_of
from ..optim import optimizer as _optimizer
from ..nn.modules import module as _module

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_state = _grad_mode._state
_main_grad = _grad_mode.main_grad
_main_mark = _grad_mode.main_mark
_SEAM_CALL = _Seam.intercept.__code__   # the seam's frame between a call and the modes
_OLD_PRELUDE = _Seam.torch_function.__code__  # (between the function and the seam, in the old form)
_FIRST_CALL = _seam_first_call   # (between a function's first caller and the function: it writes its prelude)


# ----------------------------------------------------------------------------------------------
# Where the user is
# ----------------------------------------------------------------------------------------------
def user_site(depth=1):
    """``(frame, api)`` for the innermost frame outside glasstorch, ``depth`` frames above the caller.

    ``api`` is the outermost glasstorch frame (the function the user called), or None.
    """
    f = sys._getframe(depth + 1)
    api = None
    while f is not None and is_glasstorch_file(f.f_code.co_filename):
        api = f
        f = f.f_back
    return f, api


def where_of(frame):
    return None if frame is None else (frame.f_code.co_filename, frame.f_lineno)


def user_where(depth=1):
    """(filename, lineno) of the innermost frame outside glasstorch, or None."""
    frame, _ = user_site(depth + 1)
    return where_of(frame)


def caller_of_call(start=1):
    """The frame that called the function the glass is handling now: above the seam's frame is the
    function's own frame (its guard line), and above that its caller. The seam's frame is looked for
    from ``start`` frames up (a handler that knows its depth starts there: the walk is per step)."""
    f = sys._getframe(start)
    while f is not None and f.f_code is not _SEAM_CALL:
        f = f.f_back
    if f is None:
        return None
    f = f.f_back          # the function's frame (or, in the old form, the seam's prelude's)
    if f is not None and f.f_code is _OLD_PRELUDE:
        f = f.f_back
    caller = f.f_back if f is not None else None
    if caller is not None and caller.f_code is _FIRST_CALL:   # (a function's first call: its prelude's writer)
        caller = caller.f_back
    return caller


def _user_caller(start=1):
    """The caller of the function being handled, if that is the user's code (not glasstorch's:
    ``p.grad`` read by an optimizer, ``x.detach()`` inside a layer). ``start``: as caller_of_call's,
    counted from here."""
    f = caller_of_call(start + 1)
    return f if f is not None and not is_glasstorch_file(f.f_code.co_filename) else None


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
        self._keys = {}          # id(weakref) -> id(obj), for the callback (one function, no closure per
        #                          entry; by id, as an ndarray's weakref can't be hashed)
        selfref = weakref.ref(self)

        def drop(ref):
            table = selfref()
            if table is not None:
                key = table._keys.pop(id(ref), None)
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
        self._keys[id(ref)] = key
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
            self._keys.pop(id(entry[0]), None)
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


class StepInfo:
    """What the tracker knows about one optimizer's last step (see ``_step_pre_hook``): per parameter,
    in ``param_groups`` order, the ``.grad`` it used (id and version) and how many backward passes that
    ``.grad`` held; the backward count then; what happened to those ``.grad``s since."""
    __slots__ = ("param_ids", "grad_ids", "versions", "backwards", "step_backward", "since", "zeroed", "data_taken")

    def __init__(self):
        self.param_ids = self.grad_ids = self.versions = ()   # (id(None) for a parameter with no .grad)
        self.backwards = None       # backward passes summed into each .grad; None: not counted (see since)
        self.step_backward = 0
        self.since = 0              # backward passes between the step before and that one
        self.zeroed = False         # this optimizer's zero_grad() ran since
        self.data_taken = set()     # indices of the .grads whose .data was taken since (zeroed through it?)


class Tracker:
    """Everything observed while inspection is on (kept after it is switched off, for ``explain``)."""

    def __init__(self):
        self.ever_active = False
        self.backward_count = 0        # loss.backward() passes (not autograd.grad)
        self.step_count = 0            # optimizer steps
        self.step_infos = IdTable()    # optimizer -> StepInfo
        self.cut_of = IdTable()        # leaf tensor -> Cut that kept its gradient away
        self.cut_results = IdTable()   # tensor made by a cut -> Cut
        self.made_from_data = IdTable()  # tensor made by torch.tensor/as_tensor/from_numpy -> (how, where)
        self.resets = IdTable()        # optimizer/module (or a leaf reset by hand) -> (filename, lineno,
        #                                backward_count) of the line that last set its .grad(s) to None
        self.forced = IdTable()        # leaf whose requires_grad the user switched on -> (filename, lineno)
        self.grad_read = IdTable()     # forced leaf whose .grad the user read -> True
        # (the root node of a finished backward carries that backward's index as ``_inspect_backward``:
        # see consumed_by; an attribute of the node, not a weak table, as it is set on every backward)
        self.pending = {}              # id(source) -> (Cut, leaf weakrefs, weakref to the source node if
        #                                the graph was too big to note now, weakref to the source itself):
        #                                cuts the next backward resolves
        self.nograd_modules = {}       # id(module) -> (module weakref, Cut): modules run under no_grad
        self.root_modules = IdTable()  # top-level modules called -> True (for parameter names)
        self.modules_seen = IdTable()  # every module called -> whether the user called it at top level
        self.optimizers = IdTable()    # optimizers seen -> True
        self.last_reached = None       # ids of the leaves the last backward reached (when something asks)
        self.grad_of = {}              # id(a parameter's .grad at the last step) -> (StepInfo, index): made
        self.grad_of_step = -1         # from step_infos when asked (a .data read), at this step_count

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

    def optimized(self):
        """ids of the parameters every optimizer seen holds."""
        return {id(p) for opt, _ in self.optimizers.items() for g in opt.param_groups for p in g["params"]}


tracker = Tracker()


def consumed_by(node):
    """The index of the last backward pass that ran from ``node`` (a root), or None."""
    return getattr(node, "_inspect_backward", None)
_modules_seen_d = tracker.modules_seen._d    # (read directly by the module hook, on every module call)


class Checks:
    """The seatbelt's checks; ``seatbelt.py`` plugs in its own (:func:`set_checks`) while one is open."""
    on = False

    def call(self, func, args, kwargs, out, made):
        """A public call returned ``out``; ``made``: the node it recorded last (or None)."""

    def step(self, optimizer, params):
        pass

    def backward_roots(self, roots, frame):
        """A backward pass starts from ``roots``, called on the user's line ``frame``."""

    def module_call(self, module, frame, first):
        pass

    def add_param_group(self, optimizer, group, frame):
        pass

    def nonleaf_grad(self, t, frame):
        pass

    def requires_grad_nonleaf(self, t, frame):
        pass


checks = Checks()
timelines = []        # open record() sessions
_PENDING_MAX = 256    # unresolved cuts kept at most (the oldest are dropped)


def set_checks(new):
    """Plug in the seatbelt's checks (or, with None, the no-ops)."""
    global checks
    checks = new if new is not None else Checks()


def _timeline(kind, *args):
    tid = threading.get_ident()
    for rec in timelines:
        if rec._thread == tid:
            rec._event(kind, *args)


# ----------------------------------------------------------------------------------------------
# The glass: a TorchFunctionMode that sees every public call
# ----------------------------------------------------------------------------------------------
class Glass(TorchFunctionMode):
    """Inspection's function mode. Most calls are run and then looked at (:meth:`after`); a few
    (cuts, ``requires_grad``, ``.grad``, ``torch.tensor``, ``cross_entropy``, ``backward``) have a
    handler of their own (:data:`_HANDLERS`). It has nothing to do with metadata queries (``x.shape``,
    ``x.dim()``), which then skip the seam while it is the only mode installed (``_wants_metadata``)."""

    _wants_metadata = False
    _handled = {}     # function -> its handler (_HANDLERS, filled by _build_handlers); every other call: _observe

    def __init__(self):
        super().__init__()
        self.mark = 0                  # the newest node seen: a call's new nodes are the newer ones
        self.aside = None              # while it stands back (an optimizer step): its place in the mode
        #                                stack, or _PAUSED (seam.pause)
        self.backward_call = None      # (counted, retain_graph) of the backward call being run
        # this thread's function-mode stack (the glass is entered in the thread that makes it): while the
        # seam hands the glass a call, what is left on it is what is below the glass (see __torch_function__)
        self.stack = seam.function_modes

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if kwargs is None:
            kwargs = {}
        try:
            handler = _HANDLERS.get(func)
        except TypeError:     # an unhashable callable (a user's, through handle_torch_function)
            handler = None
        if handler is not None:
            return handler(self, func, args, kwargs)
        # (the function's body directly when nothing is below the glass -- a mode, a Tensor subclass:
        # its prelude would only find the function level off and call it, a Python call more for
        # every call seen; the same in the handlers the training step meets. Below it: a mode left on
        # this thread's stack, or maybe a subclass's instance. Read so, not as the thread-local
        # seam.on, which costs ~600 machine instructions a read)
        out = (func if self.stack or _subclasses_exist[0] else _BODIES.get(func) or _body(func))(*args, **kwargs)
        self._observe(func, args, kwargs, out)
        return out

    def _observe(self, func, args, kwargs, out):
        """A call it has no handler for returned ``out``: :meth:`after`. The seam calls this itself,
        after running the call, while the glass is alone (``TorchFunctionMode._observe``: the usual case,
        no ``__torch_function__`` hop for the calls of ``_handled``'s complement)."""
        # (after(), written out for the usual result, a Tensor: this runs for every call)
        if type(out) is not Tensor:
            return self.after(func, args, kwargs, out)
        fn = out._grad_fn
        if fn is None or fn._seq <= self.mark:
            fn = None       # (no node made by this call)
        elif timelines:
            self._made(fn)
        else:
            # (_made's usual case written out: no record(), and the node is made from another call's
            # node, so nobody will ask for its line)
            edges = fn.next_functions
            if len(edges) == 1:
                n = edges[0][0]
                if n is None or type(n) is AccumulateGrad or hasattr(n, "_inspect_where"):
                    self._made(fn)
                else:
                    self.mark = fn._seq
            else:
                for n, _ in edges:
                    if n is not None and type(n) is not AccumulateGrad:
                        self.mark = fn._seq
                        break
                else:
                    self._made(fn)
        if checks.on:
            checks.call(func, args, kwargs, out, fn)

    def after(self, func, args, kwargs, out):
        """Look at a call that returned ``out``: the nodes it recorded get the user's line (when
        someone will want it), record() logs them, the seatbelt checks the call."""
        made = None
        if isinstance(out, Tensor):
            fn = out._grad_fn
            if fn is not None and fn._seq > self.mark:
                made = self._made(fn)
        elif type(out) in (tuple, list):
            newest = None
            for o in out:
                if isinstance(o, Tensor) and o._grad_fn is not None and o._grad_fn._seq > self.mark:
                    if newest is None or o._grad_fn._seq > newest._seq:
                        newest = o._grad_fn
            if newest is not None:
                made = self._made(newest, out)
        if checks.on:
            checks.call(func, args, kwargs, out, made)

    def _made(self, fn, outs=None):
        """A call made the node ``fn`` (the newest of its outputs'): note it; returns it.

        Only what someone will ask for is noted. record() logs every node the call recorded (those
        inside it too: the t() of F.linear); otherwise only the output's node gets the user's line,
        and only when it is made from leaves (w = torch.randn(3, requires_grad=True) * 0.01,
        .to(device), .double().cuda(): what explain() and the seatbelt name) by a call in the user's
        code -- a layer's calls are skipped: looking at the stack is most of what this costs.
        """
        mark = self.mark
        self.mark = fn._seq
        if timelines and any(rec._thread == threading.get_ident() for rec in timelines):
            self._log_new_nodes(outs if outs is not None else (fn,), mark)
            return fn
        edges = fn.next_functions
        if len(edges) == 1:
            n = edges[0][0]
            if not (n is None or type(n) is AccumulateGrad or hasattr(n, "_inspect_where")):
                return fn
        else:
            for n, _ in edges:
                if n is not None and type(n) is not AccumulateGrad:
                    return fn
        caller = _user_caller()
        if caller is not None:
            fn._inspect_where = (caller.f_code.co_filename, caller.f_lineno)
        return fn

    def _log_new_nodes(self, outs, mark):
        """record(): every node recorded since the last call seen that ``outs`` lead to (the call's
        own, and those of calls without the seam's check that fed it), oldest first, with the
        user's line."""
        new, seen, stack, top = [], set(), [], {}
        for o in outs:
            fn = o if not isinstance(o, Tensor) else o._grad_fn
            if fn is not None and not isinstance(fn, Tensor) and fn._seq > mark:
                if isinstance(o, Tensor):
                    top.setdefault(id(fn), o)
                if id(fn) not in seen:
                    seen.add(id(fn))
                    stack.append(fn)
        while stack:
            node = stack.pop()
            new.append(node)
            for nxt, _ in node.next_functions:
                if nxt is not None and id(nxt) not in seen and mark < nxt._seq < _LEAF_SEQ:
                    seen.add(id(nxt))
                    stack.append(nxt)
        new.sort(key=_seq_of)
        where = user_where(3)
        for node in new:
            node._inspect_where = where
            _timeline("create", node, where, top.get(id(node)))


_LEAF_SEQ = AccumulateGrad._seq      # a leaf's AccumulateGrad: the newest of all, never a call's


def _seq_of(node):
    return node._seq


# ---- the handlers ----------------------------------------------------------------------------
def _cutting(how):
    """A function whose result has no path back to its tensor (detach, item, numpy, .data...)."""
    def handle(glass, func, args, kwargs):
        run = func if glass.stack or _subclasses_exist[0] else _BODIES.get(func) or _body(func)   # (as the glass does)
        out = run(*args, **kwargs)
        t = args[0]
        if t._requires_grad:
            source = t._grad_fn
            if source is not None and not isinstance(out, Tensor) and hasattr(source, "_inspect_backward"):
                return out      # loss.item() after loss.backward(): nothing is lost, and nothing to name
            frame = _user_caller()
            if frame is not None:
                note_cut(t, out, how, frame)
        return out
    return handle


def _taking_data(glass, func, args, kwargs, _cut=_cutting(".data")):
    """``t.data``: a cut when ``t`` requires grad; taken from a leaf's ``.grad``, a way to zero it that the
    version counter does not see (``p.grad.data.zero_()``)."""
    t = args[0]
    if not t._requires_grad and tracker.step_infos._d:
        if tracker.grad_of_step != tracker.step_count:
            # (built here rather than at every step: .data of a .grad is rare, steps are not)
            tracker.grad_of = {gid: (record, i) for _, record in tracker.step_infos.items()
                               for i, gid in enumerate(record.grad_ids) if gid != _NONE_ID}
            tracker.grad_of_step = tracker.step_count
        found = tracker.grad_of.get(id(t))
        if found is not None:
            found[0].data_taken.add(found[1])
    return _cut(glass, func, args, kwargs)


def _casting(glass, func, args, kwargs):
    """A cast (``.long()``, ``.to(torch.int64)``, ``.type(...)``): a cut when the result can't carry a
    gradient (and, for a float cast, a node made from a leaf: .to(device) on a parameter)."""
    out = func(*args, **kwargs)
    glass.after(func, args, kwargs, out)
    t = args[0]
    if t._requires_grad and _state.enabled and isinstance(out, Tensor) and not out._requires_grad:
        frame = _user_caller()
        if frame is not None:
            note_cut(t, out, f".{func.__name__}() (a cast to {out.dtype}, which has no gradient)", frame)
    return out


def _creating(how):
    """torch.tensor / as_tensor / from_numpy: remember that the result was made from data (and, for a
    tensor that requires grad given as the data, that re-wrapping cut its path)."""
    def handle(glass, func, args, kwargs):
        data = args[0] if args else kwargs.get("data")
        out = func(*args, **kwargs)
        frame = _user_caller()
        if frame is not None and isinstance(out, Tensor):
            if not isinstance(data, Tensor):
                tracker.made_from_data.set(out, (how, where_of(frame)))
            src = _grad_source(data)
            if src is not None and out is not src and not out._requires_grad:
                note_cut(src, out, f"{how} (re-wrapping copies the values, not the graph)", frame)
        glass.after(func, args, kwargs, out)
        return out
    return handle


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


def _setting_requires_grad(glass, func, args, kwargs):
    """``t.requires_grad = value`` / ``t.requires_grad_(value)``: forced on a leaf the user wrote it on."""
    t = args[0]
    value = args[1] if len(args) > 1 else kwargs.get("requires_grad", True)
    forced = value and not t._requires_grad and t._grad_fn is None
    nonleaf = value and t._grad_fn is not None
    frame = _user_caller() if forced or (nonleaf and checks.on) else None
    if nonleaf and frame is not None and func.__name__ == "requires_grad_":
        checks.requires_grad_nonleaf(t, frame)
    out = func(*args, **kwargs)
    if forced and frame is not None and t._requires_grad:
        tracker.forced.set(t, where_of(frame))
    return out


def _reading_grad(glass, func, args, kwargs):
    """``t.grad``: a non-leaf's (the seatbelt's NonLeafParameterWarning), a forced leaf's (its
    gradient is used after all)."""
    t = args[0]
    if t._grad_fn is not None and not t._retains_grad and checks.on:
        caller = _user_caller()
        if caller is not None:
            checks.nonleaf_grad(t, caller)
    if tracker.forced._d and t in tracker.forced:
        tracker.grad_read.set(t, True)
    return func(*args, **kwargs)


def _setting_grad(glass, func, args, kwargs):
    """``t.grad = None`` written by the user: the gradient reset (explain's "reset")."""
    t = args[0]
    if args[1] is None and t._grad is not None:
        frame = _user_caller()
        if frame is not None:
            tracker.resets.set(t, (frame.f_code, frame.f_lasti, tracker.backward_count))
    return func(*args, **kwargs)


def _zero_grad(glass, func, args, kwargs):
    """``optimizer.zero_grad()`` / ``module.zero_grad()``: the gradients reset, at the user's line
    (explain's "reset"); record() logs the call."""
    owner = args[0]
    set_to_none = kwargs.get("set_to_none", args[1] if len(args) > 1 else True)
    # (_user_caller(2), written out for the usual case -- the seam one frame up (two with the glass's
    # __torch_function__ between), the function's own frame above it, then its caller: this runs every step)
    f = sys._getframe(1)
    if f.f_code is _GLASS_CALL:
        f = f.f_back
    frame = f.f_back.f_back if f.f_code is _SEAM_CALL and f.f_back.f_code is not _OLD_PRELUDE else None
    if frame is None or frame.f_code is _FIRST_CALL:
        frame = _user_caller(2)
    elif frame.f_code.co_filename.startswith(GLASSTORCH_PREFIXES):
        frame = None
    frame = frame or user_site(1)[0]
    is_optimizer = hasattr(owner, "param_groups")
    if is_optimizer:
        entry = tracker.step_infos._d.get(id(owner))
        if entry is not None and entry[0]() is owner:
            entry[1].zeroed = True       # (its next step need not compare the .grads with this one's)
        elif id(owner) not in tracker.optimizers._d:     # (one that has stepped is known)
            _seen_optimizer(owner)
    if set_to_none and frame is not None:
        reset = (frame.f_code, frame.f_lasti, tracker.backward_count)    # (the line: see reset_of)
        entry = tracker.resets._d.get(id(owner))        # (resets.set, written out: every step)
        if entry is not None and entry[0]() is owner:
            entry[1] = reset
        else:
            tracker.resets.set(owner, reset)
    if timelines:
        params = [p for p in owner_params(owner) if p._grad is not None]
        _timeline("zero_grad", "optimizer" if is_optimizer else "module", params, set_to_none, where_of(frame))
    run = func if glass.stack or _subclasses_exist[0] else _BODIES.get(func) or _body(func)    # (as the glass does)
    return run(*args, **kwargs)


def _reading_is_leaf(glass, func, args, kwargs):
    """``t.is_leaf`` read by an optimizer checking the parameters it is given (``add_param_group``): a
    non-leaf given to it."""
    out = func(*args, **kwargs)
    if not out and checks.on:
        caller = caller_of_call()
        if caller is not None and caller.f_code is _ADD_PARAM_GROUP_CODE[0]:
            optimizer = caller.f_locals.get("self")
            if optimizer is not None:
                _seen_optimizer(optimizer)
                frame, _ = user_site(1)
                checks.add_param_group(optimizer, {"params": [args[0]]}, frame)
    return out


def _backward_call(counted):
    """``loss.backward()``, ``autograd.backward`` (counted as a training step's backward) and
    ``autograd.grad`` (not): what the engine observer can't tell from the roots."""
    def handle(glass, func, args, kwargs):
        retain = kwargs.get("retain_graph")
        create = kwargs.get("create_graph", False)
        # (the frame that called it: the user's line, unless glasstorch called it -- looked for further
        # out only when something is reported)
        # (caller_of_call(2), written out for the usual case, as in _zero_grad: every step's backward)
        f = sys._getframe(1)
        if f.f_code is _GLASS_CALL:
            f = f.f_back
        frame = f.f_back.f_back if f.f_code is _SEAM_CALL and f.f_back.f_code is not _OLD_PRELUDE else None
        if frame is None or frame.f_code is _FIRST_CALL:
            frame = caller_of_call(2)     # (2: this handler, then the glass or the seam)
        glass.backward_call = (counted, bool(retain if retain is not None else create), frame)
        try:
            run = func if glass.stack or _subclasses_exist[0] else _BODIES.get(func) or _body(func)   # (as the glass does)
            return run(*args, **kwargs)
        finally:
            glass.backward_call = None
    return handle


_HANDLERS = Glass._handled
# (a handler is called by the seam itself while the glass is alone -- ``TorchFunctionMode._handled`` --,
# else by the glass's __torch_function__: the handlers that look for the seam's frame step over this one)
_GLASS_CALL = Glass.__torch_function__.__code__
_BODIES = {}        # public function -> its body (the seam's body_of), for the calls the glass runs


def _body(func):
    """What the glass calls to run ``func`` when nothing is below it: its body (found once)."""
    body = _BODIES[func] = body_of(func)
    return body
_ADD_PARAM_GROUP_CODE = [None]
_CUTTING = {"detach": "detach()", "item": ".item()", "numpy": ".numpy()", "tolist": ".tolist()",
            "__float__": "float()", "__int__": "int()", "__array__": "a NumPy conversion (np.asarray)"}
_CASTS = ("to", "type", "long", "int", "short", "char", "byte", "bool", "half", "float", "double", "bfloat16")


def _build_handlers():
    """The functions with a handler, found where they are defined (nothing of theirs is replaced)."""
    for name, how in _CUTTING.items():
        _HANDLERS[vars(Tensor)[name]] = _cutting(how)
    _HANDLERS[Tensor.data.__get__] = _taking_data
    for name in _CASTS:
        if name in vars(Tensor):
            _HANDLERS[vars(Tensor)[name]] = _casting
    _HANDLERS[creation.tensor] = _creating("torch.tensor(...)")
    _HANDLERS[creation.as_tensor] = _creating("torch.as_tensor(...)")
    _HANDLERS[creation.from_numpy] = _creating("torch.from_numpy(...)")
    _HANDLERS[Tensor.requires_grad.__set__] = _setting_requires_grad
    _HANDLERS[Tensor.requires_grad_] = _setting_requires_grad
    _HANDLERS[Tensor.grad.__get__] = _reading_grad
    _HANDLERS[Tensor.grad.__set__] = _setting_grad
    _HANDLERS[Tensor.is_leaf.__get__] = _reading_is_leaf
    _HANDLERS[_optimizer.Optimizer.zero_grad] = _zero_grad
    _HANDLERS[_module.Module.zero_grad] = _zero_grad
    _HANDLERS[Tensor.backward] = _backward_call(True)
    _HANDLERS[autograd.backward] = _backward_call(True)
    _HANDLERS[autograd.grad] = _backward_call(False)
    for attr in vars(Tensor).values():        # (the seam's metadata queries: see _querying)
        func = attr.__get__ if isinstance(attr, property) else attr
        if is_metadata_query(func):
            _HANDLERS[func] = _querying


def _querying(glass, func, args, kwargs):
    """A metadata query (``x.dim()``, ``x.shape``, ``len(x)``): it makes no node and cuts nothing, so
    the glass runs it and looks no further (users' modes see these calls, as torch's do). With the
    glass alone they skip the seam (``Glass._wants_metadata``); this serves them while another mode
    wants them."""
    return func(*args, **kwargs)


def _build_training_codes():
    """The optimizer's and module's methods whose calls the glass recognises by their frames."""
    if _ADD_PARAM_GROUP_CODE[0] is not None:
        return
    _ADD_PARAM_GROUP_CODE[0] = _optimizer.Optimizer.add_param_group.__code__


# ----------------------------------------------------------------------------------------------
# Cuts: noted when they happen, resolved by the next backward
# ----------------------------------------------------------------------------------------------
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
    if source is not None and hasattr(source, "_inspect_backward"):
        if out_is_tensor:
            t.cut_results.set(out, Cut(how, frame.f_code.co_filename, frame.f_lineno))
        return   # loss.item() after loss.backward(): nothing is lost
    cut = Cut(how, frame.f_code.co_filename, frame.f_lineno)
    if out_is_tensor:
        t.cut_results.set(out, cut)
    origin = source if source is not None else tensor
    key = id(origin)
    noted = t.pending.get(key)
    if noted is not None and noted[3]() is origin:
        return   # (the same source, cut again; an entry of a dead graph whose id was reused is replaced)
    if len(t.pending) >= _PENDING_MAX:
        t.pending.pop(next(iter(t.pending)))
    if source is None:                           # a leaf itself was cut (w.detach(), w.item())
        t.pending[key] = (cut, [weakref.ref(tensor)], None, weakref.ref(origin))
    else:
        leaves, complete = _leaves_within(source)
        t.pending[key] = (cut, leaves, None if complete else weakref.ref(source), weakref.ref(origin))
    if timelines:
        _timeline("cut", tensor, cut)


def _resolve_cuts(reached):
    """After a backward that gave the leaves ``reached`` (ids) a gradient: the leaves behind each cut
    seen since the last one that it did not reach."""
    t = tracker
    if not t.pending and not t.nograd_modules:
        return

    def cut_off(var, cut):
        if var is not None and var._requires_grad and id(var) not in reached and var._grad is None:
            t.cut_of.set(var, cut)
    for cut, leaves, source, _ in list(t.pending.values()):
        for ref in leaves:                       # noted when the cut happened
            cut_off(ref(), cut)
        node = source() if source is not None else None
        seen = set()
        stack = [node] if node is not None else []   # a big graph still alive: walk it now
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


# ----------------------------------------------------------------------------------------------
# The engine's events
# ----------------------------------------------------------------------------------------------
class BackwardWatch:
    """The engine observer: each backward pass starting and ending. It takes no per-node or
    per-gradient events (each would cost every node of every backward); which leaves a pass reached is
    read off the graph afterwards, and only when a cut or a forced ``requires_grad`` waits for it."""

    def __init__(self, glass):
        self.glass = glass
        self.passes = []         # per running backward (nested: checkpoint's recompute): whether it counts

    def backward_started(self, roots):
        call = self.glass.backward_call
        self.glass.backward_call = None        # (a backward inside this one is not that call)
        if call is not None:
            counted, retain, frame = call
        else:
            counted, retain, frame = True, False, caller_of_call() or sys._getframe(1)
        t = tracker
        if counted:
            t.backward_count += 1
        self.passes.append(counted)
        if checks.on:
            checks.backward_roots(roots, frame)
        if timelines:
            _timeline("backward", roots, retain, where_of(_outside(frame)))

    def backward_finished(self, roots):
        counted = self.passes.pop()
        t = tracker
        for node, _ in roots:
            if node is not None:
                node._inspect_backward = t.backward_count
        if counted:
            if t.pending or t.nograd_modules or t.forced._d:
                t.last_reached = _leaves_reached(roots)
                _resolve_cuts(t.last_reached)
            else:
                t.last_reached = None
        if timelines:
            _timeline("backward_end")


def _outside(frame):
    """``frame``, or the first frame outside glasstorch above it."""
    while frame is not None and is_glasstorch_file(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


def _leaves_reached(roots):
    """ids of the leaves (with a gradient now) that the graph behind ``roots`` leads to."""
    reached, seen = set(), set()
    stack = [n for n, _ in roots if n is not None]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if type(n) is AccumulateGrad:
            if n.variable._grad is not None:
                reached.add(id(n.variable))
            continue
        stack.extend(m for m, _ in n.next_functions if m is not None)
    return reached


class NodeWatch:
    """The engine observer record() adds (one per thread): each node run, whether its saved values
    were freed, each gradient accumulated into a leaf."""

    def node_started(self, node):
        _timeline("node_started", node)

    def node_finished(self, node, grads_in, grads_out):
        _timeline("node_finished", node, grads_in)

    def accumulated(self, var, grad):
        if grad is not None:
            _timeline("accumulate", var, tuple(grad.shape))


# ----------------------------------------------------------------------------------------------
# Modules and optimizers
# ----------------------------------------------------------------------------------------------
def _seen_optimizer(optimizer):
    if id(optimizer) not in tracker.optimizers._d:
        tracker.optimizers.set(optimizer, True)


def _step_pre_hook(optimizer, args, kwargs):
    """Before ``optimizer.step()``: which parameters' ``.grad`` was carried over from the step before.

    Only the versions say, so nothing is watched per backward: the engine adds a gradient into an
    unchanged ``.grad`` in place, bumping its version once per backward pass, and ``zero_()`` bumps
    it once more. A ``.grad`` that is the very one the last step used, to which every backward pass
    since added and which nothing zeroed in place (nor, as far as can be seen, through ``.data``,
    which escapes the version counter) still holds the old gradient."""
    lone = _seam._lone      # (_session_glass(), written out: twice a step)
    glass = lone[0] if lone[0] in _session_glasses and lone[3] == _get_ident() else _thread.glass
    if glass is None:
        return
    t = tracker
    entry = t.step_infos._d.get(id(optimizer))     # (step_infos.get, written out: this runs every step)
    if entry is not None and entry[0]() is optimizer:
        record = entry[1]
    else:
        _seen_optimizer(optimizer)
        record = StepInfo()
        t.step_infos.set(optimizer, record)
    # The parameters' .grads and their versions, read by C loops (this runs every step, for every
    # parameter); compared one by one with the last step's only when this optimizer's zero_grad() did
    # not run since (which leaves every .grad new, or zeroed in place: nothing carried over).
    params = list(_flatten(map(_PARAMS, optimizer.param_groups)))
    grads = list(map(_GRAD, params))
    grad_ids = list(map(id, grads))
    missing = _NONE_ID in grad_ids
    # (the counters read, not made: a .grad without one is at version 0 -- see make_counter)
    if missing:
        versions = [-1 if g is None else version_of(g) for g in grads]
    else:
        counters = list(map(_COUNTER, grads))
        # (.grads made afresh by the backward, as after zero_grad(): none has a counter, all at 0)
        versions = ([0] * len(counters) if counters.count(None) == len(counters)
                    else [0 if c is None else c.version for c in counters])
    count = t.backward_count
    param_ids = list(map(id, params))
    if record.zeroed or not record.grad_ids:
        carried, backwards = (), None
    else:
        carried, backwards = _carried_over(record, params, param_ids, grad_ids, versions, count - record.step_backward)
    record.param_ids, record.grad_ids, record.versions, record.backwards = param_ids, grad_ids, versions, backwards
    record.since, record.step_backward, record.zeroed = count - record.step_backward, count, False
    if record.data_taken:
        record.data_taken = set()
    if checks.on and (carried or missing or t.forced._d):    # (nothing to check otherwise)
        checks.step(optimizer, carried, missing)
    t.step_count += 1
    if timelines:
        _timeline("step", optimizer, user_where(1))
    # The update itself (in-place arithmetic on the parameters, under no_grad) has nothing to show:
    # the glass stands back until the step returns, so the step runs at full speed. Not for a step
    # with a closure, which runs a forward and backward pass. (_stand_back, written out.)
    if len(args) == 1 and "closure" not in kwargs:
        glass.aside = _PAUSED if pause_observer(glass) else seam.set_mode_aside(glass)


_PARAMS, _GRAD, _COUNTER = itemgetter("params"), attrgetter("_grad"), attrgetter("_counter")
_flatten = chain.from_iterable
_NONE_ID = id(None)


def _carried_over(record, params, param_ids, grad_ids, versions, since):
    """``(carried, backwards)``: (parameter, backward passes its .grad holds) for each parameter whose
    .grad is the one the last step (``record``) used, with every one of the ``since`` backward passes
    since added into it; and per parameter, the passes its .grad holds."""
    same = param_ids == record.param_ids
    index = None if same else {pid: j for j, pid in enumerate(record.param_ids)}
    old_ids, old_versions, old_backwards, taken = record.grad_ids, record.versions, record.backwards, record.data_taken
    carried, backwards = [], []
    for i, gid in enumerate(grad_ids):
        j = i if same else index.get(param_ids[i])
        version = versions[i]
        if j is None or gid == _NONE_ID or gid != old_ids[j]:
            backwards.append(version + 1)                # a new .grad (or none)
            continue
        added = version - old_versions[j]
        if added > 0 and added == since and j not in taken:
            # (not counted at that step: a new .grad holds one pass per version, one zeroed in place
            # no more than the passes since the step before)
            held = (old_backwards[j] if old_backwards is not None else min(old_versions[j] + 1, record.since)) + added
            carried.append((params[i], held))
            backwards.append(held)
        else:
            backwards.append(added)
    return carried, backwards


def _step_post_hook(optimizer, args, kwargs):
    lone = _seam._lone      # (_session_glass(), written out)
    glass = lone[0] if lone[0] in _session_glasses and lone[3] == _get_ident() else _thread.glass
    if glass is not None:
        aside = glass.aside
        if aside is not None:
            glass.aside = None
            if aside is _PAUSED:
                unpause_observer(glass)
            else:
                seam.put_mode_back(glass, aside)


_PAUSED = "paused"      # Glass.aside while the seam is paused for it (its place in the stack unchanged)


def _stand_back(glass, back=False):
    """Let calls past the glass unseen (``back``: paused, or taken off the mode stack when more than
    the glass is there), or have it watch again."""
    if back:
        glass.aside = _PAUSED if pause_observer(glass) else seam.set_mode_aside(glass)
    elif glass.aside is not None:
        aside, glass.aside = glass.aside, None
        if aside is _PAUSED:
            unpause_observer(glass)
        else:
            seam.put_mode_back(glass, aside)


def _module_pre_hook(module, args):
    if id(module) in _modules_seen_d and (_main_grad.enabled if _main_mark._is_owned() else _state.enabled):
        # the hot path: a known module in a training step (an entry of the table is dropped when its
        # object dies -- the weak reference's callback -- so an id in it is that of a live module seen).
        # Grad mode as the ops' hot paths read it (grad_mode.GRAD_ON): the main thread's, process-wide,
        # without the thread-local read (~500 machine instructions, five times a step here), the main
        # thread known by the lock it holds (grad_mode.main_mark), without a get_ident call
        return
    t = tracker
    e = _modules_seen_d.get(id(module))
    first = e is None or e[0]() is not module
    glass = _session_glass()
    if glass is None:
        return
    if glass.aside is not None:        # a step that raised: the glass watches again
        _stand_back(glass)
    frame = _module_caller(module)
    if frame is None or is_glasstorch_file(frame.f_code.co_filename):
        if first:
            t.modules_seen.set(module, False)    # called by glasstorch (a Sequential's child)
        return
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


_CALL_CODES = set()    # id of Module.__call__'s code (torch's _call_impl), filled when nn is imported


def _module_caller(module):
    """The frame that called ``module(...)``: the one above the module's own ``__call__`` frame."""
    f = sys._getframe(2)
    for _ in range(8):
        if f is None:
            return None
        if id(f.f_code) in _CALL_CODES and f.f_locals.get("self") is module:
            return f.f_back
        f = f.f_back
    return None


def _inside_module_call(frame):
    """Whether ``frame`` runs inside another module's call (a user forward() calling a submodule)."""
    f = frame.f_back
    while f is not None:
        if id(f.f_code) in _CALL_CODES:
            return True
        f = f.f_back
    return False


def reset_of(tensor):
    """(filename, lineno, backward count) of the last line that set ``tensor.grad`` to None: a
    ``zero_grad()`` of an optimizer or module holding it, or the user's own ``t.grad = None``."""
    best = tracker.resets.get(tensor)
    for owner, rec in tracker.resets.items():
        if owner is tensor or not hasattr(owner, "parameters") and not hasattr(owner, "param_groups"):
            continue
        try:
            params = owner_params(owner)
        except Exception:
            continue
        if any(p is tensor for p in params) and (best is None or rec[2] >= best[2]):
            best = rec
    if best is None:
        return None
    # (the resets hold the code and the instruction where it happened, as a frame gives them at no cost:
    # a line number is found by reading the code's line table, and zero_grad() runs every step)
    code, lasti, count = best
    return code.co_filename, line_at(code, lasti), count


def line_at(code, lasti):
    """The line of ``code`` that its instruction at offset ``lasti`` (a frame's ``f_lasti``) is on."""
    for start, end, line in code.co_lines():
        if start <= lasti < end and line is not None:
            return line
    return code.co_firstlineno


def owner_params(owner):
    if hasattr(owner, "param_groups"):
        return [p for g in owner.param_groups for p in g["params"]]
    return list(owner.parameters())


# ----------------------------------------------------------------------------------------------
# Opening and closing
# ----------------------------------------------------------------------------------------------
class _ThreadState(threading.local):
    sessions = 0        # open inspection sessions in this thread
    glass = None        # this thread's Glass, while a session is open
    remove_watch = None
    recording = 0       # open record() sessions in this thread
    remove_node_watch = None


_thread = _ThreadState()
_session_glasses = set()     # the glasses acquire() opened (one per thread with a session open)
_get_ident = threading.get_ident


def _session_glass():
    """This thread's glass while a session is open in it, else None: ``_thread.glass``, found
    without reading the thread-local state while the glass is the seam's lone observer (the usual
    case: the optimizer step hooks ask twice a step)."""
    lone = _seam._lone
    if lone[0] in _session_glasses and lone[3] == _get_ident():
        return lone[0]
    return _thread.glass
_lock = threading.RLock()
_threads_watching = 0        # threads with a session open (the global hooks serve them all)
_global_handles = []


def acquire():
    """Open an inspection session in this thread (the observers go in place with the first)."""
    global _threads_watching
    with _lock:
        st = _thread
        if st.sessions == 0:
            if not _HANDLERS:
                _build_handlers()
            if _threads_watching == 0:
                _install_global_hooks()
            _threads_watching += 1
            glass = Glass()
            glass.__enter__()
            st.glass = glass
            _session_glasses.add(glass)
            st.remove_watch = add_engine_observer(BackwardWatch(glass))
        st.sessions += 1
        tracker.ever_active = True


def release():
    """Close an inspection session in this thread (the observers go with the last)."""
    global _threads_watching
    with _lock:
        st = _thread
        if st.sessions <= 0:
            return
        st.sessions -= 1
        if st.sessions:
            return
        glass = st.glass
        _stand_back(glass)
        _session_glasses.discard(glass)
        glass.__exit__(None, None, None)
        st.remove_watch()
        st.glass = st.remove_watch = None
        _threads_watching -= 1
        if _threads_watching == 0:
            while _global_handles:
                _global_handles.pop().remove()


def _install_global_hooks():
    _build_training_codes()
    _CALL_CODES.add(id(_module.Module._call_impl.__code__))
    _global_handles.append(_optimizer.register_optimizer_step_pre_hook(_step_pre_hook))
    _global_handles.append(_optimizer.register_optimizer_step_post_hook(_step_post_hook))
    _global_handles.append(_module.register_module_forward_pre_hook(_module_pre_hook))


def active():
    """Whether an inspection session is open in this thread."""
    return _thread.sessions > 0


def start_recording(rec):
    """Open ``rec`` (a record()) in this thread: a session, the timeline, and the node observer."""
    acquire()
    with _lock:
        timelines.append(rec)
        if _thread.recording == 0:
            _thread.remove_node_watch = add_engine_observer(NodeWatch())
        _thread.recording += 1


def stop_recording(rec):
    with _lock:
        if rec in timelines:
            timelines.remove(rec)
            _thread.recording -= 1
            if _thread.recording == 0:
                _thread.remove_node_watch()
                _thread.remove_node_watch = None
    release()


__all__ = ["acquire", "release", "active", "tracker", "checks", "set_checks", "user_site", "note_cut", "Glass"]
