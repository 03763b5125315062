"""The interception seam: the one place where a call to a glasstorch op can be seen or taken over.

There are two levels, as in torch:

* the **function level** -- every public function and method (``torch.mul``, ``Tensor.add``,
  ``F.cross_entropy``, ``Tensor.item``...) is declared :func:`overridable`::

      @overridable
      def mul(input, other):
          ...

  The decorator puts one line in front of the function (written for its signature at its first
  call, :func:`_write_prelude`; ``inspect.getsource`` and ``help`` show the function's own)::

      return _r if ANYWHERE.on and (ANYWHERE.modes or type(input) not in PLAIN or type(other) not in PLAIN) \
          and (ANYWHERE.lone or seam.on) and (_r := seam.intercept(mul, (input, other), {})) is not PASS \
          else <mul's own body>(input, other)

  ``ANYWHERE.on`` (an attribute in a slot of one object, the cheapest read there is) is False unless something in some
  thread may want to see calls, so with nothing installed the cost of the seam is that one read and
  the call of the body. ``ANYWHERE.modes`` is True while some thread has a function mode; without
  one (a Tensor subclass instance alive somewhere), a call whose arguments are all of plain types
  (``Tensor``, numbers, ``None``, dtypes...) goes on at the cost of a set lookup per argument.
  Otherwise ``seam.on`` says whether this thread takes part (not read while a lone observer, below, is
  all there is: ``ANYWHERE.lone``), and :meth:`_Seam.intercept` takes the
  call through torch's ``__torch_function__`` protocol: the innermost active
  :class:`~glasstorch.overrides.TorchFunctionMode` first, then the arguments' Tensor subclasses that
  override ``__torch_function__`` (``glasstorch/overrides.py`` is the public side of this). When
  none of them is there to take it, ``intercept`` returns ``PASS`` and the function goes on with its
  body: the call is not made a second time. (The older form of the line, ``if seam.on: return
  seam.torch_function(mul, (input, other), {})`` at the top of the body, still works: it calls
  the function again, its own line switched off. ``tools/seam_prelude.py`` turns it into the
  decorator where that hands the seam the same call.)

  One mode is served more cheaply than the others: a glasstorch *observer* (a mode declaring
  ``_observe``, inspection's glass) while it is the one mode in the process and no Tensor subclass
  takes part (``_lone``). ``intercept`` then runs the call's body itself, with the process-wide
  ``ANYWHERE.on`` off (the calls the body makes go on as with nothing installed), and hands the
  result to the observer's ``_observe``; no ``__torch_function__`` call, no thread-local read. What
  it sees is what its ``__torch_function__`` would see at its place on the stack.

* the **op level** -- every primitive op (an :class:`~glasstorch._ops.OpOverload` such as
  ``aten.mul.Tensor``, which is what the public functions call and what backward formulas call)
  starts with ``if seam.dispatching: ...``. Active
  :class:`~glasstorch.utils._python_dispatch.TorchDispatchMode`\\ s see the op *below* autograd: its
  aten name, its arguments, and they run it (or not) and return its results; autograd then records
  the node around what they returned. The backward pass runs its formulas as ops too while a
  dispatch mode is on, so a FLOP counter sees the backward's matmuls.

The engine's events (a backward starting, each node run, each gradient accumulated) go to
``seam.engine_observers`` (see :func:`add_engine_observer`); the engine checks that list once per
backward, and calls the observers' methods from ``seam.engine_events`` (:class:`EngineEvents`), which
add and remove rebuild: looking each method up per event would cost every backward pass.

The state is thread-local, as torch's mode stacks are: a mode entered in one thread is not seen by
another. Tensor subclasses, though, are a process-wide matter: while an instance of one taking part
in ``__torch_function__`` is alive (made in any thread), ``seam.on`` and ``ANYWHERE.on`` are True
in every thread, and each call looks at its arguments' types (in its prelude, see above). The instances are counted (:func:`note_instance`) rather than the
classes, so that defining such a subclass -- a library may do it on import -- costs plain calls
nothing until one of its tensors exists (an instance can only be an argument while it is alive).
"""
import builtins
import functools
import inspect
import threading
import weakref

# Whether any Tensor subclass taking part in __torch_function__ has been defined. Process-wide, as
# class definitions are.
_subclasses_exist = [False]
# Weak references to the live instances of such subclasses: while there is one, seam.on is True in
# every thread that stores no value of its own (_Seam.on, see note_instance).
_live_instances = set()
# The idents of the threads whose function-mode stack is not empty (see ANYWHERE).
_threads_with_modes = set()
# ... and of those whose stack holds a mode that wants metadata queries (see ANYWHERE.metadata_on).
_threads_with_metadata_modes = set()
# The idents of the threads whose ``seam.dispatching`` is True (see ANYWHERE.dispatching).
_threads_dispatching = set()


class _Anywhere:
    """Process-wide: ``on`` is True while something in some thread may want to see calls -- a live
    instance of a Tensor subclass taking part in ``__torch_function__``, or a function mode on some
    thread's stack. Every public function reads it first (an attribute of one object, held in a slot:
    the cheapest read there is -- a class attribute costs ~3x more, the thread-local ``seam.on``, read
    only when this is True, ~10x -- and a write changes no type, whose attribute caches every such
    write would empty and whose versions CPython counts). ``modes`` is True while some
    thread has a function mode: while it is False (a subclass instance alive, no mode), a call
    whose arguments are all plain goes on without reading the thread-local state at all.

    ``metadata_on`` and ``metadata_modes`` are the same two flags for the **metadata queries**
    (``x.shape``, ``x.dim()``, ``x.dtype``... : the functions declared ``overridable(metadata=True)``),
    counting only the modes that want to see them. A mode says it does not by its class attribute
    ``_wants_metadata = False`` (glasstorch's own modes that only watch what calls make -- the glass of
    ``inspection``); then, with only such modes installed, a metadata query's prelude reads
    ``metadata_on`` (False) and goes to its body: it costs what it costs with nothing installed. It is
    a filter, not a promise: while any mode in any thread wants metadata (or a subclass instance is
    alive), a query goes through the seam as every call does, and a mode that opted out may then be
    handed it and must run it as any other call. A user's ``TorchFunctionMode`` wants metadata (the
    default, ``True``) and sees every query as torch hands it.

    ``dispatching`` is True while some thread's ``seam.dispatching`` is (a TorchDispatchMode active,
    CPU autocast on): the one-frame entries of the hot public functions (``overridable(direct=op)``)
    read it, where the thread-local flag costs ~600 machine instructions a read; while it is True
    they leave every call to the op's own call, which reads this thread's flag.

    ``lone`` is True while the seam has a lone observer (``_lone``): every public function's line
    then goes to :meth:`_Seam.intercept` without reading this thread's ``seam.on`` (~600 machine
    instructions, once for every call the observer sees). While ``_lone`` is set and ``on`` is True,
    the observer's thread has its ``seam.on`` True (it pauses by switching ``on`` off, and the calls
    its observed bodies make run with ``on`` off), and no other thread has a mode or is handed a
    subclass instance (those drop ``_lone``), so ``intercept`` tells the observer's calls by the
    thread's ident and hands any other thread's ``PASS`` after reading its state, as its ``seam.on``
    would have.

    ``detour`` is True while the one-frame entries must leave their calls to the seam's line (see
    ``hold_detour``): whenever ``on`` may be, and for the reasons of their own listed there."""
    __slots__ = ("on", "modes", "dispatching", "metadata_on", "metadata_modes", "lone", "detour")

    def __init__(self):
        self.on = self.modes = self.dispatching = self.metadata_on = self.metadata_modes = self.lone = False
        self.detour = False


ANYWHERE = _Anywhere()

# ``ANYWHERE.detour``: True while an op's one-frame entry (``_ops_codegen.entry_lines``) must leave every
# call to the seam's line: whenever ``on`` may be True (a thread has a function mode, a Tensor subclass
# instance taking part is alive: ``on``'s holders, whatever a lone observer's pauses make of ``on``),
# ``dispatching``, a second device in use (``_array``'s ``devices.many``: the device rule), inference
# mode in some thread (a new tensor's counter then looks at the mode). One slot read where the entry's
# first line read four flags in three objects (~9 bytecodes an op). Each cause's writer calls
# ``hold_detour`` after it changes; as for ``on``, "change, then switch on if off" there and "switch
# off, then look again" here leave the flag on whenever a cause holds, however threads interleave.
_detour_causes = set()


def hold_detour(cause=None, held=False):
    """Cause ``cause`` (a name: "devices", "inference") of ``ANYWHERE.detour`` now holds or not
    (``cause=None``: another cause changed: ``dispatching``, ``on``'s holders); bring the flag in step."""
    if cause is not None:
        (_detour_causes.add if held else _detour_causes.discard)(cause)
    if ANYWHERE.dispatching or _detour_causes or _threads_with_modes or _live_instances:
        if not ANYWHERE.detour:
            ANYWHERE.detour = True
    elif ANYWHERE.detour:
        ANYWHERE.detour = False
        if ANYWHERE.dispatching or _detour_causes or _threads_with_modes or _live_instances:
            ANYWHERE.detour = True


def _recount():
    """Recompute ``ANYWHERE``'s flags after an instance or a thread's last mode (or last mode that
    wants metadata) went away. (As in ``_instance_gone``: switch off, then look again, so that one
    made meanwhile in another thread, which found the switch still on, is not missed.)"""
    for flag, holders in (("modes", (_threads_with_modes,)), ("on", (_live_instances, _threads_with_modes)),
                          ("metadata_modes", (_threads_with_metadata_modes,)),
                          ("metadata_on", (_live_instances, _threads_with_metadata_modes))):
        if not any(holders):
            setattr(ANYWHERE, flag, False)
            if any(holders):
                setattr(ANYWHERE, flag, True)
    hold_detour()


# The lone observer: ``(mode, stack, state, ident, bodies)`` while one thread's function-mode stack holds
# exactly one mode that declares ``_observe`` (a glasstorch observer: inspection's glass) and nothing
# else anywhere takes part in __torch_function__ (no other thread's mode, no Tensor subclass, the
# protocol on); ``stack`` and ``state`` are that thread's mode stack and its thread-local dict, ``ident``
# its ident, ``bodies`` the mode's :func:`_observed_body` answers. ``_Seam.intercept`` then serves the
# mode without reading the thread-local state: the call's body, then ``mode._observe(func, args,
# kwargs, result)``; for a function in ``mode._handled``, its handler there. Kept by
# ``_Seam._set_lone`` whenever a thread's function-level state changes; dropped by anything that
# makes another party (a subclass defined, an instance made).
_NO_LONE = (None, None, None, None, None)
_lone = _NO_LONE
_get_ident = threading.get_ident


def _observed_body(mode, func, bodies):
    """What the lone observer ``mode``'s fast path runs for ``func`` (remembered in ``bodies``): the
    function's body, to run and hand to ``mode._observe``; None for a function the mode handles itself
    (``mode._handled``: its handler there is called); False for one the usual path serves (not
    a function :func:`overridable` made: a property's accessor, a function in the older form, a
    user's function handed through ``handle_torch_function``)."""
    if func in mode._handled:
        body = None
    else:
        body = body_of(func)
        if body is func:
            body = False
    bodies[func] = body
    return body


def _drop_lone():
    global _lone
    _lone = _NO_LONE
    ANYWHERE.lone = False


def _count_in(threads, ident, *flags):
    """Add thread ``ident`` to ``threads`` and switch ``ANYWHERE``'s ``flags`` on (each written only
    when it changes, as every writer of these flags does)."""
    threads.add(ident)
    for flag in flags:
        if not getattr(ANYWHERE, flag):
            setattr(ANYWHERE, flag, True)
    if "dispatching" in flags or "on" in flags:
        hold_detour()


class _Pass:
    """The type of ``PASS``."""
    __slots__ = ()

    def __repr__(self):
        return "PASS"


# What ``seam.intercept`` returns when nothing takes the call: the function goes on with its body.
PASS = _Pass()


class EngineEvents:
    """The engine observers' methods, one tuple per event, in the order the observers were added
    (built when one is added or removed, so an event costs a loop over the methods there are)."""
    __slots__ = ("backward_started", "node_started", "node_finished", "accumulated", "backward_finished",
                 "per_node")

    def __init__(self, observers=()):
        for event in self.__slots__[:-1]:
            setattr(self, event, tuple(m for m in (getattr(o, event, None) for o in observers) if m is not None))
        # whether any wants the per-node events (when none does, the engine's loop skips them)
        self.per_node = bool(self.node_started or self.node_finished or self.accumulated)


_NO_EVENTS = EngineEvents()


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
    counted = False          # whether this thread is in _threads_with_modes
    counted_metadata = False  # whether this thread is in _threads_with_metadata_modes
    dispatching = False      # the op level: some TorchDispatchMode is active, or CPU autocast is on
    counted_dispatching = False  # whether this thread is in _threads_dispatching
    autocast = None          # the dtype CPU autocast casts to while it is on (glasstorch/amp/autocast_mode.py)
    skip_one_hop = False     # the next interception is skipped (torch.overrides.redispatch_function)
    # the engine observers' methods, per event (add_engine_observer sets this thread's own; a class-level
    # default, so that a thread without observers has one key fewer in its state, which every op reads)
    engine_events = _NO_EVENTS

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
        self.dispatching = dispatching = bool(self.dispatch_modes) or self.autocast is not None
        if dispatching is not self.counted_dispatching:
            self._count_dispatching(dispatching)
        if bool(self.function_modes) is not self.counted or self._modes_want_metadata() is not self.counted_metadata:
            self._count()
        else:
            if self.on and not ANYWHERE.on:
                ANYWHERE.on = True      # (a mode entered during a pause, which had switched it off: see pause)
            self._set_lone()

    def _count_dispatching(self, dispatching):
        """Keep this thread's place in ``_threads_dispatching`` (and so ``ANYWHERE.dispatching``) in
        step with its ``dispatching`` (switched off as ``_recount`` does: off, then look again)."""
        self.counted_dispatching = dispatching
        if dispatching:
            _count_in(_threads_dispatching, threading.get_ident(), "dispatching")
        else:
            _threads_dispatching.discard(threading.get_ident())
            if not _threads_dispatching:
                ANYWHERE.dispatching = False
                if _threads_dispatching:
                    ANYWHERE.dispatching = True
                hold_detour()

    def _modes_want_metadata(self):
        """Whether a mode on this thread's stack wants the metadata queries (see ``ANYWHERE``)."""
        for mode in self.function_modes:
            if getattr(mode, "_wants_metadata", True):
                return True
        return False

    def _count(self):
        """Keep this thread's place in ``_threads_with_modes`` and ``_threads_with_metadata_modes``
        (and so ``ANYWHERE``) in step with its function-mode stack: whether it is empty, whether a
        mode on it wants metadata queries."""
        ident = threading.get_ident()
        went = False
        if self._modes_want_metadata():
            self.counted_metadata = True
            _count_in(_threads_with_metadata_modes, ident, "metadata_modes", "metadata_on")
        elif self.counted_metadata:
            self.counted_metadata = False
            _threads_with_metadata_modes.discard(ident)
            went = True
        if self.function_modes:
            self.counted = True
            _count_in(_threads_with_modes, ident, "modes", "on")
            if went:
                _recount()
        else:
            self.counted = False
            _threads_with_modes.discard(ident)
            _recount()
        self._set_lone()

    def _set_lone(self):
        """Make this thread's one mode the process's lone observer (see ``_lone``) when it is one and all
        there is, or drop the lone observer when that no longer holds. Called whenever this thread's
        function-level state changes (``_refresh``, ``_count``)."""
        global _lone
        modes = self.function_modes
        if (len(modes) == 1 and getattr(modes[0], "_observe", None) is not None and len(_threads_with_modes) == 1
                and not _subclasses_exist[0] and not _live_instances and not self.function_disabled
                and not self.subclass_disabled and not self.skip_one_hop):
            mode = modes[0]
            if _lone[0] is not mode:
                _lone = (mode, modes, self.__dict__, threading.get_ident(), {})
                ANYWHERE.lone = True
        elif _lone[0] is not None and (_lone[3] == threading.get_ident() or len(_threads_with_modes) != 1
                                       or _subclasses_exist[0] or _live_instances):
            _drop_lone()

    # -- the function level ---------------------------------------------------------------------
    def intercept(self, func, args, kwargs):
        """Hand the call ``func(*args, **kwargs)`` to the active function modes and the arguments'
        ``__torch_function__`` overrides, as torch's ``handle_torch_function`` does, and return
        what they return; ``PASS`` when none of them is there to take it (the function then goes
        on with its body). Called by the line :func:`overridable` puts in front of every public
        function, when ``seam.on`` is True."""
        # This thread's own values are read and written through its dict, found once: each attribute
        # of a thread-local object read or written finds the thread's dict anew (~600 machine
        # instructions, against ~50 for a dict's item), and this runs for every call a mode sees.
        # (The class-level defaults are the `get`s' defaults; `on` is a plain class attribute, so
        # writing the item is writing the attribute.)
        # (no lone observer: ``ident`` is None. No ``skip_one_hop`` to test: redispatch_function drops
        # the lone observer while its skip is pending, see _set_lone)
        mode, stack, state, ident, bodies = _lone
        if _get_ident() == ident and stack:
            # A lone observer (see ``_lone``): no thread-local state to read (it is ``state``), and the
            # call's body runs with the whole process's function level off (``ANYWHERE.on``: no other
            # thread has a mode, no subclass instance is alive), so that the calls it makes go on at the
            # cost they have with nothing installed, as with the mode off the stack and this thread's
            # ``on`` off, which they would otherwise each read. The mode is off the stack meanwhile as
            # for any mode's handler (a mode entered inside the call does not have it below).
            try:
                body = bodies[func]
            except KeyError:
                body = _observed_body(mode, func, bodies)
            except TypeError:       # an unhashable callable (a user's, through handle_torch_function)
                body = False
            if body:
                # a call the mode only looks at (the usual one: two paths, each with its own try, so
                # that this one tests nothing it need not; a call without keywords is made without
                # the copy of its empty dict that ``**kwargs`` makes)
                stack.pop()
                ANYWHERE.on = False
                try:
                    result = body(*args, **kwargs) if kwargs else body(*args)
                    mode._observe(func, args, kwargs, result)
                finally:
                    stack.append(mode)
                    ANYWHERE.on = True
                    if _lone[0] is not mode:    # the seam's state changed meanwhile: settled as _refresh does
                        self._refresh()
                if result is not NotImplemented:
                    return result
                raise TypeError(f"no implementation found for '{_qualified_name(func)}' on types that implement "
                                f"__torch_function__: []")
            if body is None:                    # one the mode handles: its handler
                stack.pop()
                ANYWHERE.on = False
                try:
                    result = mode._handled[func](mode, func, args, kwargs)
                finally:
                    if mode._retired:           # it left the stack from inside its handler
                        ANYWHERE.on = True
                        self._refresh()
                    else:
                        stack.append(mode)
                        ANYWHERE.on = True
                        if _lone[0] is not mode:
                            self._refresh()
                if result is not NotImplemented:
                    return result
                raise TypeError(f"no implementation found for '{_qualified_name(func)}' on types that implement "
                                f"__torch_function__: []")
        state = self.__dict__
        if state.get("skip_one_hop"):       # (redispatch_function: this call goes on to its body, once)
            state["skip_one_hop"] = False
            return PASS
        modes = state["function_modes"]
        if not modes and _subclasses_exist[0]:
            # the usual call while a subclass instance is alive: no mode, and arguments of exactly
            # Tensor or of a plain Python type, tested inline (this runs for every call then): the
            # function goes on with its body. (Were this thread's protocol off, `on` would be stored
            # False here and the call would not have come.)
            for a in args:
                if type(a) not in _PLAIN_TYPES and _overloads(a):
                    break
            else:
                for a in kwargs.values():
                    if type(a) not in _PLAIN_TYPES and _overloads(a):
                        break
                else:
                    return PASS
        if not _subclasses_exist[0]:
            # the usual case: no Tensor subclass with its own __torch_function__ exists, only modes
            # take part. The mode runs with itself popped, so the calls it makes are not seen by it
            # again; only `on` can change meanwhile, and it is set here directly (this runs for every
            # call a mode sees, and each read or write of this thread-local state costs).
            if modes and not state["function_disabled"]:
                mode = modes.pop()
                if not modes:
                    state.pop("on", None)   # (not False: a subclass defined meanwhile must be seen)
                try:
                    result = mode.__torch_function__(func, (), args, kwargs)
                finally:
                    if mode._retired:           # it left the stack from inside its handler
                        self._refresh()
                    else:
                        modes.append(mode)
                        state["on"] = True
                        # (a _refresh in the handler saw the stack empty, or without the metadata mode)
                        if not state.get("counted") or mode._wants_metadata and not state.get("counted_metadata"):
                            self._count()
                if result is not NotImplemented:
                    return result
            if not modes:
                return PASS
            raise TypeError(f"no implementation found for '{_qualified_name(func)}' on types that implement "
                            f"__torch_function__: []")
        if self.function_disabled or self.subclass_disabled and not modes:
            # here with nothing to do: a subclass was defined while this thread had the protocol off
            self._refresh()
            return PASS
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
                    if not self.counted or mode._wants_metadata and not self.counted_metadata:
                        self._count()
            if result is not NotImplemented:
                return result
        for arg in overloaded:
            result = type(arg).__torch_function__(func, types, args, kwargs)
            if result is not NotImplemented:
                return result
        if not overloaded and not self.function_modes:
            return PASS
        names = ", ".join(repr(t) for t in types)
        raise TypeError(f"no implementation found for '{_qualified_name(func)}' on types that implement "
                        f"__torch_function__: [{names}]")

    def torch_function(self, func, args, kwargs):
        """The older form of the prelude, ``if seam.on: return seam.torch_function(func, args,
        kwargs)`` at the top of a function's body: :meth:`intercept`, and when nothing takes the
        call, the function called again with the function level off for this thread (its own first
        line lets it through; what it calls is not looked at either)."""
        result = self.intercept(func, args, kwargs)
        if result is not PASS:
            return result
        self.on = False
        try:
            return func(*args, **kwargs)
        finally:
            self._refresh()

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
                self._count()
                return index
        elif mode in modes:
            index = modes.index(mode)
            modes.remove(mode)
        else:
            return None
        self._refresh()
        return index

    def pause(self, mode):
        """Let this thread's calls past the function level unseen for a while, where ``mode`` has
        nothing to see (the glass during an optimizer step): :meth:`set_mode_aside` in effect, at the
        price of one flag, for the usual case -- ``mode`` is all there is (the one mode on this
        thread's stack, no Tensor subclass taking part, the protocol not off). Only this thread's
        ``on`` goes off, as in a ``DisableTorchFunction`` block; the stack and the thread counts stay.
        Returns False, changing nothing, in any other case (then use set_mode_aside);
        :meth:`unpause` ends it.

        When no other thread has a mode (nor is a subclass instance alive), ``ANYWHERE.on`` goes off
        too, so that the calls made meanwhile (an optimizer's ``p.grad`` reads) stop at their
        prelude's first read instead of going on to this thread's ``on``. That is only a shortcut:
        this thread's ``on`` is what keeps them unseen, and whatever switches ``ANYWHERE.on`` back on
        meanwhile (a mode entered in another thread, a subclass instance made) leaves it correct."""
        state = self.__dict__       # (this thread's values through its dict, found once: see intercept)
        modes = state["function_modes"]
        if (len(modes) != 1 or modes[0] is not mode or _subclasses_exist[0] or state["function_disabled"]
                or state["subclass_disabled"]):
            return False
        state["on"] = False
        if len(_threads_with_modes) == 1 and not _live_instances:
            # (switch off, then look again, as _instance_gone does: a thread that counted itself in
            # meanwhile either is seen here or found the switch off and switched it on itself)
            ANYWHERE.on = False
            if len(_threads_with_modes) != 1 or _live_instances:
                ANYWHERE.on = True
        return True

    def unpause(self):
        """End a :meth:`pause`."""
        state = self.__dict__
        if not ANYWHERE.on and (_threads_with_modes or _live_instances):
            ANYWHERE.on = True          # (pause switched it off)
        if state["function_modes"] and not state["function_disabled"] and not state["subclass_disabled"]:
            state["on"] = True          # (what _refresh would find, as the mode is still there: the usual case)
        else:
            self._refresh()

    def put_mode_back(self, mode, index):
        """Return ``mode`` to the place :meth:`set_mode_aside` took it from (or the top, if the
        stack has shrunk since)."""
        modes = self.function_modes
        if mode in modes:
            return
        if not modes and not self.function_disabled and not self.subclass_disabled:
            modes.append(mode)
            self.on = True
            self._count()
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


seam = _Seam()


def pause_observer(mode):
    """``seam.pause(mode)`` in the calling thread, without reading its thread-local state while
    ``mode`` is the lone observer there (see ``_lone``, which holds that state): the glass pauses for
    every optimizer step, and each read of ``seam`` (a method's lookup too) finds the thread's dict
    anew. ``_lone`` set for ``mode`` in this thread is the usual case :meth:`_Seam.pause` looks for --
    the one mode on the stack, no Tensor subclass, the protocol on, no other thread with a mode, no
    subclass instance alive -- as whatever changes any of these settles ``_lone`` again."""
    lone, stack, state, ident, _ = _lone
    if lone is mode and stack and _get_ident() == ident:
        state["on"] = False
        ANYWHERE.on = False
        if len(_threads_with_modes) != 1 or _live_instances:    # (look again, as pause does)
            ANYWHERE.on = True
        return True
    return seam.pause(mode)


def unpause_observer(mode):
    """End a :func:`pause_observer` (``seam.unpause()``, the same way cheaper)."""
    lone, stack, state, ident, _ = _lone
    if lone is mode and stack and _get_ident() == ident:
        ANYWHERE.on = True
        state["on"] = True
    else:
        seam.unpause()


# -- the prelude of the public functions ---------------------------------------------------------
def overridable(fn=None, *, defaults_by_keyword=False, all_by_keyword=False, omitted=(), metadata=False,
                direct=None):
    """Decorator: ``fn`` as a public function that a TorchFunctionMode and Tensor subclasses'
    ``__torch_function__`` see (the function level, see the module docstring).

    What it returns is a function of ``fn``'s signature whose one line hands the call to
    :meth:`_Seam.intercept` when something may want it, and otherwise (or when nothing takes it)
    calls ``fn``. That line is written for ``fn``'s signature at the first call
    (:func:`_write_prelude`: ~10 ms for all of them, which ``import glasstorch`` does not pay).
    Its frame shows in tracebacks under ``fn``'s name, at the line of its first decorator.

    The call a handler sees is ``func(*args, **kwargs)`` with ``func`` the public function and, as
    torch's generated bindings hand on what the caller gave, the positional parameters in ``args``
    (``*args`` spread) up to the last one not holding its default, and the keyword-only ones not
    holding theirs in ``kwargs`` (:func:`_as_given`). ``defaults_by_keyword=True`` is torch's
    convention for a function written in Python (``handle_torch_function(relu, (input,), input,
    inplace=inplace)``): the positional parameters that have a default go in ``kwargs`` too;
    ``all_by_keyword=True`` puts them all there (``nn.init``'s: ``handle_torch_function(uniform_,
    (tensor,), tensor=tensor, a=a, b=b, generator=generator)``).

    ``omitted``, with one of those two, names parameters the handler is not given while they hold
    their default (which must be None, False or True), where torch's Python function hands on only
    what the caller gave (``Tensor.float``'s ``memory_format``). Neither costs anything on calls that
    nothing intercepts (the arguments are put together only for the handler).

    ``metadata=True`` declares a metadata query (``x.shape``, ``x.dim()``: it describes a tensor and
    makes nothing): its prelude reads ``ANYWHERE.metadata_on`` where others read ``ANYWHERE.on``, so
    it is passed over while only modes that do not want such queries are installed (the glass of
    ``inspection``; see ``ANYWHERE``). Every other mode, and every Tensor subclass, sees it as any
    call (:func:`is_metadata_query` tells which functions are such).

    ``direct=op`` (an op with a plain case, ``defop(plain=...)``) says that ``fn``, given Tensors, is
    a call of ``op`` with its own arguments in ``op``'s order (``add(input, other, *, alpha=1)`` is
    ``aten.add.Tensor``): the prelude then starts with the op's plain case, computed and recorded in
    the prelude's own frame when nothing is installed (``_ops_codegen.entry_lines``), and goes on as
    above otherwise. A handler is handed what it is handed without it: it sees no difference."""
    if omitted and not (defaults_by_keyword or all_by_keyword):
        raise TypeError("overridable: omitted= goes with defaults_by_keyword or all_by_keyword (without them, a "
                        "parameter holding its default is not handed on anyway)")
    if fn is None:
        return functools.partial(overridable, defaults_by_keyword=defaults_by_keyword, all_by_keyword=all_by_keyword,
                                 omitted=omitted, metadata=metadata, direct=direct)
    keywords = "all" if all_by_keyword else "defaulted" if defaults_by_keyword else None
    namespace = {"__builtins__": builtins, "_seam_impl": fn, "_seam_keywords": keywords, "_seam_omitted": omitted,
                 "_seam_anywhere": ANYWHERE, "_seam_local": seam, "_seam_intercept": seam.intercept,
                 "_seam_PASS": PASS, "_seam_write": _write_prelude, "_seam_plain": _PLAIN_TYPES,
                 "_seam_metadata": metadata, "_seam_direct": direct}
    public = type(fn)(_FIRST_CALL, namespace, fn.__name__)
    namespace["_seam_public"] = namespace["_seam_handed"] = public
    return functools.update_wrapper(public, fn)


# The code of a public function until its first call: it writes the real prelude and goes on (the
# names are the function's own namespace's, see overridable).
_FIRST_CALL = next(c for c in compile("def _(*args, **kwargs): return _seam_write(_seam_public)(*args, **kwargs)",
                                      "<glasstorch seam prelude>", "exec").co_consts if hasattr(c, "co_code"))


def alias(fn, name, owner=None):
    """``fn`` under another name, as a function object of its own (``Tensor.__add__`` beside
    ``Tensor.add``: torch's are two objects, and ``resolve_name`` names each by its own name). It
    runs ``fn``'s code, and hands the seam what ``fn`` hands (``x + y`` is seen as ``Tensor.add``,
    as in torch); it costs nothing more than ``fn``. Given the class ``owner`` it is named as its
    attribute there (``Tensor.__add__``: what pickle looks up)."""
    namespace = getattr(fn, "__globals__", None)
    same = type(fn)(fn.__code__, namespace, name, fn.__defaults__, fn.__closure__)
    same.__kwdefaults__ = fn.__kwdefaults__
    functools.update_wrapper(same, fn)
    same.__name__ = name
    if owner is not None:
        same.__module__, same.__qualname__ = owner.__module__, f"{owner.__qualname__}.{name}"
    else:
        same.__qualname__ = fn.__qualname__.rpartition(".")[0] + "." + name if "." in fn.__qualname__ else name
    if namespace.get("_seam_public") is fn:
        namespace.setdefault("_seam_aliases", []).append(same)    # (given fn's prelude when it is written)
    return same


def is_metadata_query(fn):
    """Whether ``fn`` is an :func:`overridable` function declared a metadata query (``metadata=True``);
    a property's accessor (``Tensor.shape.__get__``) is asked about its getter."""
    prop = getattr(fn, "__self__", None)
    if isinstance(prop, property) and getattr(fn, "__name__", None) == "__get__":
        fn = prop.fget
    namespace = getattr(fn, "__globals__", None)
    return namespace is not None and namespace.get("_seam_public") is fn and bool(namespace.get("_seam_metadata"))


def hand_as(fn, func):
    """Have the :func:`overridable` function ``fn`` hand the seam ``func`` as the function called (a
    property's accessor, ``Tensor.grad.__get__``, for its getter: what torch's handlers are given)."""
    fn.__globals__["_seam_handed"] = func


def body_of(fn):
    """The function an :func:`overridable` one calls (``fn`` itself for any other)."""
    namespace = getattr(fn, "__globals__", None)
    return namespace["_seam_impl"] if namespace is not None and namespace.get("_seam_public") is fn else fn


def named(fn, name):
    """``fn`` named ``name`` in tracebacks and profiles (a function a maker returns), and so the
    body of an :func:`overridable` one."""
    for f in {fn, body_of(fn)}:
        if f is not None:
            f.__code__ = f.__code__.replace(co_name=name, co_qualname=name)
            f.__name__ = f.__qualname__ = name
    return fn

# the prelude's code for each signature (the same for all the functions that share one)
_PRELUDES = {}


def _write_prelude(public):
    """Give ``public`` (made by :func:`overridable`) the code of its prelude, for its body's
    signature, and return it."""
    namespace = public.__globals__
    impl = namespace["_seam_impl"]
    params = inspect.signature(impl, follow_wrapped=False).parameters.values()
    by_keyword = namespace["_seam_keywords"]
    omitted = namespace.get("_seam_omitted", ())
    signature, call, positional, keywords = [], [], [], []
    for p in params:
        name = p.name
        if name == "_r" or name.startswith("_seam_"):
            raise TypeError(f"{impl.__qualname__}: parameter name {name!r} is the prelude's own")
        if p.kind is p.POSITIONAL_ONLY or p.kind is p.POSITIONAL_OR_KEYWORD:
            signature.append(name if p.default is p.empty else f"{name}=None")
            call.append(name)
            by_name = by_keyword == "all" or by_keyword == "defaulted" and p.default is not p.empty
            (keywords if by_name else positional).append(name)
        elif p.kind is p.VAR_POSITIONAL:
            signature.append("*" + name)
            call.append("*" + name)
            positional.append("*" + name)
        elif p.kind is p.KEYWORD_ONLY:
            if not any(x.startswith("*") for x in signature):
                signature.append("*")
            signature.append(name if p.default is p.empty else f"{name}=None")
            call.append(f"{name}={name}")
            keywords.append(name)
        else:
            signature.append("**" + name)
            call.append("**" + name)
            keywords.append("**" + name)
    if any(p.kind is p.POSITIONAL_ONLY for p in params) and "/" not in signature:
        signature.insert(sum(p.kind is p.POSITIONAL_ONLY for p in params), "/")
    args = f"({', '.join(positional)},)" if positional else "()"
    kwargs = "{" + ", ".join(k if k.startswith("**") else f"{k!r}: {k}" for k in keywords if k not in omitted) + "}"
    if by_keyword is None:
        # torch's bindings hand on what the caller gave: the call's arguments are put together as
        # given, for the handler only (see _as_given; ``omitted`` says nothing more here)
        kwargs = "{" + ", ".join(k if k.startswith("**") else f"{k!r}: {k}" for k in keywords) + "}"
        omitted = ()
        if not impl.__kwdefaults__ and not any(k.startswith("*") for k in positional + keywords):
            # the usual signature (no *args, **kwargs, or keyword-only parameter with a default): what
            # _as_given does, written into the line -- the trailing parameters that hold their default
            # left out (``linear(x, w)``: ``(x, w)``), no call made
            args = _trailing_defaults_dropped(positional, impl.__defaults__ or (), namespace)
        else:
            namespace["_seam_given"] = functools.partial(_as_given, impl.__defaults__ or () if not any(
                p.kind is p.VAR_POSITIONAL for p in params) else (), impl.__kwdefaults__ or {})
            args, kwargs = f"*_seam_given({args}, {kwargs})", ""
    for name in omitted:
        default = next((p.default for p in params if p.name == name), inspect.Parameter.empty)
        if not any(default is v for v in (None, False, True)):
            raise TypeError(f"{impl.__qualname__}: omitted parameter {name!r} must have the default None, False or "
                            f"True")
        # (a parameter with a default is handed by keyword under both conventions)
        kwargs = f"({kwargs} if {name} is {default} else {{**{kwargs}, {name!r}: {name}}})"
    # Whether an argument may take part: one of a type not known plain, or any given to *args or
    # **kwargs (tested in intercept). While only a subclass instance is alive somewhere, a call
    # whose arguments are all plain stops here, at a set lookup per argument.
    takes_part = " or ".join(f"type({p.name}) not in _seam_plain" if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                             else p.name for p in params) or "False"
    # (a metadata query reads the flags that count only the modes that want such queries: see ANYWHERE)
    on, modes = ("metadata_on", "metadata_modes") if namespace.get("_seam_metadata") else ("on", "modes")
    source = (f"def _({', '.join(signature)}): return _r if _seam_anywhere.{on} and (_seam_anywhere.{modes} or "
              f"{takes_part}) and (_seam_anywhere.lone or _seam_local.on) and (_r := _seam_intercept(_seam_handed, {', '.join(filter(None, (args, kwargs)))})) "
              f"is not _seam_PASS else _seam_impl({', '.join(call)})")
    if not _PLAIN_TYPES:
        _plain_types()
    direct = namespace.get("_seam_direct")
    if direct is not None:
        # the op's plain case first, then the line (see overridable): code of this function's own, its
        # lines kept for tracebacks and debuggers under a name of their own
        from ._ops_codegen import entry_lines, _compile      # (here: it imports this module)
        lines, names = entry_lines(direct, [p.name for p in params])
        head, _, line = source.partition(": return ")
        head = f"def {public.__name__}(" + head.partition("(")[2]
        source = "\n".join([head + ":", *lines, "    return " + line]) + "\n"
        namespace.update(names)
        scratch = {"__builtins__": builtins}
        _compile(source, f"<glasstorch: {public.__module__}.{public.__qualname__}>", scratch)
        public.__code__ = scratch[public.__name__].__code__.replace(co_name=public.__name__, co_qualname=public.__qualname__)
        public._entry_source = source
    else:
        code = _PRELUDES.get(source)
        if code is None:
            module = compile(source, "<glasstorch seam prelude>", "exec")
            code = _PRELUDES[source] = next(c for c in module.co_consts if hasattr(c, "co_code"))
        body = getattr(impl, "__code__", code)
        public.__code__ = code.replace(co_name=public.__name__, co_qualname=public.__qualname__,
                                       co_filename=body.co_filename, co_firstlineno=body.co_firstlineno)
    for f in (public, *namespace.get("_seam_aliases", ())):
        f.__code__ = public.__code__
        f.__defaults__ = impl.__defaults__
        f.__kwdefaults__ = impl.__kwdefaults__
    return public




def _trailing_defaults_dropped(positional, defaults, namespace):
    """The prelude's expression for the positional arguments as torch's bindings hand them on, for
    parameters ``positional`` (names) whose last ones have ``defaults``: the trailing ones that hold
    their default (the same object) left out, as :func:`_as_given` does. ``(a, b, c) if c is not
    _seam_default2 else (a, b)`` for ``f(a, b, c=None)``; the defaults are put in ``namespace`` (the
    function's own: functions of the same signature share the line's code, not their defaults)."""
    first = len(positional) - len(defaults)
    expression = f"({', '.join(positional[:first])},)" if first else "()"
    for i in range(first, len(positional)):
        namespace[f"_seam_default{i}"] = defaults[i - first]
        expression = f"({', '.join(positional[:i + 1])},) if {positional[i]} is not _seam_default{i} else {expression}"
        if i + 1 < len(positional):
            expression = f"({expression})"
    return expression


def _as_given(defaults, kwdefaults, args, kwargs):
    """The arguments of a call as torch's bindings hand them to ``__torch_function__``: those the
    caller gave (``torch.sum(x)`` is handed ``(x,)``, not ``(x, None, False)`` and ``dtype=None``).
    Called by the prelude of a function declared :func:`overridable` without keyword conventions,
    for the handler only. ``args``: the positional parameters' values, the last ones matching
    ``defaults`` (the function's ``__defaults__``, or ``()`` when it has ``*args``); ``kwargs``: the
    keyword ones, with their defaults ``kwdefaults``. What holds its default (the same object) is
    taken as not given: trailing positional ones are dropped, keyword ones left out.

    torch hands an argument given by keyword in ``kwargs`` (``torch.sum(x, dim=0)``: ``(x,)``,
    ``{'dim': 0}``); glasstorch cannot see how a positional parameter was given, and hands it in
    ``args`` (``(x, 0)``, ``{}``), as torch's dispatcher hands ops to a dispatch mode."""
    end, first = len(args), len(args) - len(defaults)
    while end > first and args[end - 1] is defaults[end - 1 - first]:
        end -= 1
    given = {k: v for k, v in kwargs.items() if v is not kwdefaults.get(k, _NOT_GIVEN)} if kwargs else kwargs
    return args[:end], given


_NOT_GIVEN = object()


def note_subclass_with_torch_function():
    """Called when a Tensor subclass taking part in ``__torch_function__`` is defined (its instances
    are then counted: :func:`note_instance`)."""
    _subclasses_exist[0] = True
    _drop_lone()


def note_instance(tensor):
    """Called for each new instance of a Tensor subclass taking part in ``__torch_function__``
    (``_tensor.new_object``): every thread's calls look at their arguments' types until the last
    such instance is gone."""
    # No lock: "add, then switch on if off" here and "switch off, then look again" in _instance_gone
    # leave the switch on whenever an instance is alive, however the threads interleave (each step
    # is atomic under the GIL). The switch is written only when it changes: writing a class
    # attribute empties the type's attribute cache.
    _live_instances.add(weakref.ref(tensor, _instance_gone))
    if _lone[0] is not None:
        _drop_lone()
    if not _Seam.on:
        _Seam.on = True
    if not ANYWHERE.on:
        ANYWHERE.on = True
    if not ANYWHERE.metadata_on:
        ANYWHERE.metadata_on = True
    if not ANYWHERE.detour:
        hold_detour()


def _instance_gone(ref):
    _live_instances.discard(ref)
    if not _live_instances:
        _Seam.on = False
        if _live_instances:     # one made meanwhile in another thread, which found the switch still on
            _Seam.on = True
        _recount()


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


def _plain_types():
    """Fill in ``_PLAIN_TYPES`` (at the first call: ``glasstorch.Tensor`` and the dtype, device and
    size types are among them)."""
    from ._tensor import Size, device
    from ._dtype import dtype
    _PLAIN_TYPES.update((_tensor_class(), int, float, bool, complex, str, type(None), slice, type(Ellipsis),
                         dtype, device, Size))


def _overloads(a):
    """Whether argument ``a`` (of a type not in ``_PLAIN_TYPES``) is, or is a list or tuple holding,
    an instance of a Tensor subclass."""
    tensor = _tensor_class()
    if not _PLAIN_TYPES:
        _plain_types()
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
    grads_out)``, ``accumulated(leaf, grad)``, ``backward_finished(roots)`` (looked up now: methods
    given to it later are not called); they must not change what they are given. Returns a function
    that removes the observer."""
    seam.engine_observers.append(observer)
    seam.engine_events = EngineEvents(seam.engine_observers)

    def remove():
        if observer in seam.engine_observers:
            seam.engine_observers.remove(observer)
            seam.engine_events = EngineEvents(seam.engine_observers)
    return remove
