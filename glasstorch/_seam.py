"""The interception seam: the one place where a call to a glasstorch op can be seen or taken over.

There are two levels, as in torch:

* the **function level** -- every public function and method (``torch.mul``, ``Tensor.add``,
  ``F.cross_entropy``, ``Tensor.item``...) starts with the same line::

      if seam.on:
          return seam.torch_function(mul, (input, other), {})

  ``seam.on`` is False unless something wants to see calls, so the cost of the seam is that one
  attribute read. When it is True the call goes through torch's ``__torch_function__`` protocol:
  the innermost active :class:`~glasstorch.overrides.TorchFunctionMode` first, then the arguments'
  Tensor subclasses that override ``__torch_function__`` (``glasstorch/overrides.py`` is the public
  side of this).

* the **op level** -- every primitive op (an :class:`~glasstorch._ops.OpOverload` such as
  ``aten.mul.Tensor``, which is what the public functions call and what backward formulas call)
  starts with ``if seam.dispatching: ...``. Active
  :class:`~glasstorch.utils._python_dispatch.TorchDispatchMode`\\ s see the op *below* autograd: its
  aten name, its arguments, and they run it (or not) and return its results; autograd then records
  the node around what they returned. The backward pass runs its formulas as ops too while a
  dispatch mode is on, so a FLOP counter sees the backward's matmuls.

The engine's events (a backward starting, each node run, each gradient accumulated) go to
``seam.engine_observers`` (see :func:`add_engine_observer`); the engine checks that list once per
backward.

The state is thread-local, as torch's mode stacks are: a mode entered in one thread is not seen by
another. Tensor subclasses, though, are a process-wide matter: while an instance of one taking part
in ``__torch_function__`` is alive (made in any thread), ``seam.on`` is True in every thread, and
each call looks at its arguments' types -- one cheap pass over them (``_overloaded_in``) when they
are plain Tensors and numbers. The instances are counted (:func:`note_instance`) rather than the
classes, so that defining such a subclass -- a library may do it on import -- costs plain calls
nothing until one of its tensors exists (an instance can only be an argument while it is alive).
"""
import threading
import weakref

# Whether any Tensor subclass taking part in __torch_function__ has been defined. Process-wide, as
# class definitions are.
_subclasses_exist = [False]
# Weak references to the live instances of such subclasses: while there is one, seam.on is True in
# every thread that stores no value of its own (_Seam.on, see note_instance).
_live_instances = set()


class _Seam(threading.local):
    """The per-thread state of the seam. Its flags are class-level defaults (a new thread starts
    with nothing installed) and are recomputed by :meth:`_refresh` whenever the state changes.

    ``on`` is special: a thread stores its own value only while it differs from what every thread
    shares -- True while a function mode is active in it, False while it has switched the protocol
    off (``DisableTorchFunction``, ``DisableTorchFunctionSubclass``, or inside a call that nothing
    intercepts). Otherwise the thread reads the class's value, True while an instance of a Tensor
    subclass taking part in ``__torch_function__`` is alive: one made in one thread is seen at once
    by every other, also by one that read ``on`` before. (A thread never stores False because no
    such instance existed when it looked: that False would hide one made a moment later.)"""
    on = False               # the function level: some mode, subclass or observer wants to see calls
    dispatching = False      # the op level: some TorchDispatchMode is active, or CPU autocast is on
    autocast = None          # the dtype CPU autocast casts to while it is on (glasstorch/amp/autocast_mode.py)

    def __init__(self):
        self.function_modes = []        # TorchFunctionMode stack, innermost last
        self.dispatch_modes = []        # TorchDispatchMode stack, innermost last
        self.dispatch_handling = 0      # how many __torch_dispatch__ calls are running (nested)
        self.function_disabled = 0      # DisableTorchFunction depth (modes and subclasses off)
        self.subclass_disabled = 0      # DisableTorchFunctionSubclass depth (subclasses off)
        self.engine_observers = []
        self._refresh()   # a thread started after a Tensor subclass was defined must see it too

    def _refresh(self):
        if self.function_disabled or self.subclass_disabled:
            self.on = bool(not self.function_disabled and self.function_modes)
        elif self.function_modes:
            self.on = True
        else:
            self.__dict__.pop("on", None)       # the value every thread shares (see the class docstring)
        self.dispatching = bool(self.dispatch_modes) or self.autocast is not None

    # -- the function level ---------------------------------------------------------------------
    def torch_function(self, func, args, kwargs):
        """Run ``func(*args, **kwargs)`` through the active function modes and the arguments'
        ``__torch_function__`` overrides, as torch's ``handle_torch_function`` does."""
        modes = self.function_modes
        if not modes and _subclasses_exist[0]:
            # the usual call while a subclass instance is alive: no mode, and arguments of exactly
            # Tensor or of a plain Python type, tested inline (this runs for every call then). The
            # function runs as it would without the seam (and what it calls too: its tensors are
            # plain); `on` is False meanwhile, so the function's own first line lets it through.
            # (Were this thread's protocol off, `on` would be stored False here and the call would
            # not have come: with no mode, it came through the value all threads share, restored after.)
            for a in args:
                if type(a) not in _PLAIN_TYPES and _overloads(a):
                    break
            else:
                for a in kwargs.values():
                    if type(a) not in _PLAIN_TYPES and _overloads(a):
                        break
                else:
                    self.on = False
                    try:
                        return func(*args, **kwargs)
                    finally:
                        self.__dict__.pop("on", None)
        if not _subclasses_exist[0]:
            # the usual case: no Tensor subclass with its own __torch_function__ exists, only modes
            # take part. The mode runs with itself popped, so the calls it makes are not seen by it
            # again; only `on` can change meanwhile, and it is set here directly (this runs for every
            # call a mode sees, and each read or write of this thread-local state costs).
            if modes and not self.function_disabled:
                mode = modes.pop()
                if not modes:
                    self.__dict__.pop("on", None)   # (not False: a subclass defined meanwhile must be seen)
                try:
                    result = mode.__torch_function__(func, (), args, kwargs)
                finally:
                    if mode._retired:           # it left the stack from inside its handler
                        self._refresh()
                    else:
                        modes.append(mode)
                        self.on = True
                if result is not NotImplemented:
                    return result
            if not modes:
                return _call_plain(self, func, args, kwargs)
            raise TypeError(f"no implementation found for '{_qualified_name(func)}' on types that implement "
                            f"__torch_function__: []")
        if self.function_disabled or self.subclass_disabled and not modes:
            # here with nothing to do: a subclass was defined while this thread had the protocol off
            self._refresh()
            return func(*args, **kwargs)
        if not self.subclass_disabled:
            overloaded = _overloaded_args(args, kwargs)
            types = tuple(type(a) for a in overloaded)
        else:
            overloaded, types = (), ()
        if modes and not self.function_disabled:
            mode = modes.pop()
            self.on = bool(modes) or bool(overloaded) or not self.subclass_disabled
            try:
                result = mode.__torch_function__(func, types, args, kwargs)
            finally:
                if mode._retired:
                    self._refresh()
                else:
                    modes.append(mode)
                    self.on = not self.function_disabled
            if result is not NotImplemented:
                return result
        for arg in overloaded:
            result = type(arg).__torch_function__(func, types, args, kwargs)
            if result is not NotImplemented:
                return result
        if not overloaded and not self.function_modes:
            return _call_plain(self, func, args, kwargs)
        names = ", ".join(repr(t) for t in types)
        raise TypeError(f"no implementation found for '{_qualified_name(func)}' on types that implement "
                        f"__torch_function__: [{names}]")

    def set_mode_aside(self, mode):
        """Take function ``mode`` off this thread's stack for a while (a tool that has nothing to
        see in some stretch of code, as the glass during an optimizer step); returns its place, for
        :meth:`put_mode_back`, or None when it was not on the stack. Runs twice a training step:
        the usual case (it is the only thing installed) sets ``on`` directly."""
        modes = self.function_modes
        if modes and modes[-1] is mode:
            index = len(modes) - 1
            modes.pop()
            if not modes and not self.function_disabled and not self.subclass_disabled:
                self.__dict__.pop("on", None)
                return index
        elif mode in modes:
            index = modes.index(mode)
            modes.remove(mode)
        else:
            return None
        self._refresh()
        return index

    def put_mode_back(self, mode, index):
        """Return ``mode`` to the place :meth:`set_mode_aside` took it from (or the top, if the
        stack has shrunk since)."""
        modes = self.function_modes
        if mode in modes:
            return
        if not modes and not self.function_disabled and not self.subclass_disabled:
            modes.append(mode)
            self.on = True
            return
        modes.insert(min(index, len(modes)), mode)
        self._refresh()

    # -- the op level ----------------------------------------------------------------------------
    def torch_dispatch(self, op, args, kwargs):
        """Hand primitive ``op`` to the innermost TorchDispatchMode; the mode runs below autograd."""
        mode = self.dispatch_modes.pop()
        self._refresh()
        self.dispatch_handling += 1
        try:
            types = tuple({type(a) for a in _flat_tensors(args, kwargs)})
            return mode.__torch_dispatch__(op, types, args, kwargs or {})
        finally:
            self.dispatch_handling -= 1
            self.dispatch_modes.append(mode)
            self._refresh()


def _call_plain(seam, func, args, kwargs):
    """Call ``func`` with the function level switched off (nothing left to intercept it). Every
    call pays this once a Tensor subclass with ``__torch_function__`` exists, so ``on`` is set
    directly (it is False while ``function_disabled`` is positive) and recomputed once after."""
    seam.function_disabled += 1
    seam.on = False
    try:
        return func(*args, **kwargs)
    finally:
        seam.function_disabled -= 1
        seam._refresh()


seam = _Seam()



def note_subclass_with_torch_function():
    """Called when a Tensor subclass taking part in ``__torch_function__`` is defined (its instances
    are then counted: :func:`note_instance`)."""
    _subclasses_exist[0] = True


def note_instance(tensor):
    """Called for each new instance of a Tensor subclass taking part in ``__torch_function__``
    (``_tensor.new_object``): every thread's calls look at their arguments' types until the last
    such instance is gone."""
    # No lock: "add, then switch on if off" here and "switch off, then look again" in _instance_gone
    # leave the switch on whenever an instance is alive, however the threads interleave (each step
    # is atomic under the GIL). The switch is written only when it changes: writing a class
    # attribute empties the type's attribute cache.
    _live_instances.add(weakref.ref(tensor, _instance_gone))
    if not _Seam.on:
        _Seam.on = True


def _instance_gone(ref):
    _live_instances.discard(ref)
    if not _live_instances:
        _Seam.on = False
        if _live_instances:     # one made meanwhile in another thread, which found the switch still on
            _Seam.on = True


def _flat_tensors(args, kwargs):
    from ._tensor import Tensor     # (here: _tensor imports this module)
    for a in list(args) + list((kwargs or {}).values()):
        if isinstance(a, Tensor):
            yield a
        elif isinstance(a, (list, tuple)):
            for b in a:
                if isinstance(b, Tensor):
                    yield b


# The types of arguments that cannot take part in __torch_function__, filled in at the first call
# (``glasstorch.Tensor`` is one; ``_tensor`` imports this module): the per-call test once a subclass
# instance is alive is one set lookup per argument.
_PLAIN_TYPES = set()


def _overloads(a):
    """Whether argument ``a`` (of a type not in ``_PLAIN_TYPES``) is, or is a list or tuple holding,
    an instance of a Tensor subclass."""
    tensor = _tensor_class()
    if not _PLAIN_TYPES:
        _PLAIN_TYPES.update((tensor, int, float, bool, complex, str, type(None), slice, type(Ellipsis)))
        if type(a) in _PLAIN_TYPES:
            return False
    if isinstance(a, tensor):
        return True
    if isinstance(a, (list, tuple)):
        for b in a:
            if type(b) is not tensor and isinstance(b, tensor):
                return True
    return False


def _overloaded_args(args, kwargs):
    """The arguments whose type overrides ``__torch_function__``, one per type, subclasses before
    their bases (torch's order). Once a Tensor subclass exists every call asks this (torch's
    per-call ``has_torch_function``): an argument of exactly ``Tensor``, or no tensor, is passed over
    at the cost of one type test."""
    tensor = _tensor_class()
    found = []
    for values in (args, kwargs.values() if kwargs else ()):
        for a in values:
            t = type(a)
            if t is tensor:
                continue
            if isinstance(a, tensor):
                _add_overloaded(found, a)
            elif isinstance(a, (list, tuple)):
                for b in a:
                    if type(b) is not tensor and isinstance(b, tensor):
                        _add_overloaded(found, b)
    return found


def _add_overloaded(found, a):
    """Add ``a`` to ``found`` if its type takes part and none of that type is there yet."""
    tf = getattr(type(a), "__torch_function__", None)
    if tf is None or getattr(tf, "__func__", tf) is _disabled_impl:
        return
    if any(type(a) is type(b) for b in found):
        return
    index = len(found)
    for i, b in enumerate(found):
        if issubclass(type(a), type(b)):
            index = i
            break
    found.insert(index, a)


_TENSOR = []


def _tensor_class():
    """``glasstorch.Tensor`` (imported at first use: ``_tensor`` imports this module)."""
    if not _TENSOR:
        from ._tensor import Tensor
        _TENSOR.append(Tensor)
    return _TENSOR[0]


def _disabled_impl(func, types, args=(), kwargs=None):
    """``torch._C._disabled_torch_function_impl``: the subclass takes no part (nn.Parameter's).
    A plain function, not a method: set as a class attribute it is called with ``func`` first."""
    with DisableTorchFunctionSubclass():
        return func(*args, **(kwargs or {}))


def _qualified_name(func):
    module = getattr(func, "__module__", None) or ""
    name = getattr(func, "__qualname__", None) or getattr(func, "__name__", repr(func))
    return f"{module}.{name}" if module else name


class DisableTorchFunctionSubclass:
    """``torch._C.DisableTorchFunctionSubclass``: inside it, Tensor subclasses' ``__torch_function__``
    is not consulted (modes still are)."""

    def __enter__(self):
        seam.subclass_disabled += 1
        seam._refresh()
        return self

    def __exit__(self, *exc):
        seam.subclass_disabled -= 1
        seam._refresh()


class DisableTorchFunction:
    """``torch._C.DisableTorchFunction``: inside it, neither modes nor subclasses are consulted."""

    def __enter__(self):
        seam.function_disabled += 1
        seam._refresh()
        return self

    def __exit__(self, *exc):
        seam.function_disabled -= 1
        seam._refresh()


# -- engine events ----------------------------------------------------------------------------------
def add_engine_observer(observer):
    """Have the backward engine report to ``observer`` (in this thread). The observer may define
    any of ``backward_started(roots)``, ``node_started(node)``, ``node_finished(node, grads_in,
    grads_out)``, ``accumulated(leaf, grad)``, ``backward_finished(roots)``; they must not change
    what they are given. Returns a function that removes the observer."""
    seam.engine_observers.append(observer)

    def remove():
        if observer in seam.engine_observers:
            seam.engine_observers.remove(observer)
    return remove
