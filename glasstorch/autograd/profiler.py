"""torch.autograd.profiler: ``profile`` (the older spelling of ``torch.profiler.profile``) and
``record_function``, over one recorder that both use.

While a profiler records, a :class:`~glasstorch.utils._python_dispatch.TorchDispatchMode` times every
aten op the program runs (the seam's op level: the primitive ops, forward and backward, as a FLOP
counter sees them -- ``aten::addmm``, ``aten::t``; not the composites torch also lists, such as
``aten::linear``), and each ``record_function`` block is an event around the ops inside it.
Only CPU time is measured (glasstorch's ops run on the CPU, or on CuPy's stream without device timing).
"""
import threading
import time

from ..utils._python_dispatch import TorchDispatchMode
from .profiler_util import EventList, FunctionEvent

__all__ = ["profile", "record_function", "EventList"]

_active = threading.local()     # .recorder: the recorder of the profile running in this thread


def _now_us():
    return time.perf_counter_ns() / 1000.0


def _shapes(args):
    from .._tensor import Tensor
    shapes = []
    for a in args:
        if isinstance(a, Tensor):
            shapes.append(list(a.shape))
        elif isinstance(a, (list, tuple)) and a and all(isinstance(t, Tensor) for t in a):
            shapes.append([list(t.shape) for t in a])
        else:
            shapes.append([])
    return shapes


def _schema_order(schema, args, kwargs):
    """The call's arguments in the schema's order, the ones not given included (torch lists an
    input shape for every argument of the op: ``[]`` for a number)."""
    given = list(args)
    for argument in schema.arguments[len(args):]:
        given.append((kwargs or {}).get(argument.name))
    return given


class _Recorder(TorchDispatchMode):
    """Collects the events of one profile: ops through the dispatch seam, regions by hand."""

    def __init__(self, record_shapes):
        super().__init__()
        self.record_shapes = record_shapes
        self.events, self.stack = [], []

    def open(self, name, input_shapes=None, is_user_annotation=False):
        event = FunctionEvent(len(self.events), name, _now_us(), input_shapes=input_shapes,
                              is_user_annotation=is_user_annotation)
        if self.stack:
            event.cpu_parent = self.stack[-1]
            self.stack[-1].cpu_children.append(event)
        self.events.append(event)
        self.stack.append(event)
        return event

    def close(self, event):
        event.end_us = _now_us()
        if self.stack and self.stack[-1] is event:
            self.stack.pop()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        event = self.open(f"aten::{func._schema.name.split('::')[-1]}",
                          _shapes(_schema_order(func._schema, args, kwargs)) if self.record_shapes else None)
        try:
            return func(*args, **(kwargs or {}))
        finally:
            self.close(event)


class profile:
    """Record the time of every op run inside the block; ``key_averages().table()`` prints them.

        with torch.autograd.profiler.profile() as prof:
            model(x)
        print(prof.key_averages().table(sort_by="self_cpu_time_total"))
    """

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False, use_cpu=True,
                 experimental_config=None, acc_events=False, custom_trace_id_callback=None):
        self.enabled = enabled
        self.record_shapes = record_shapes
        self._recorder = None
        self.function_events = None

    def __enter__(self):
        if self.enabled:
            self._start()
        return self

    def __exit__(self, *exc):
        if self.enabled:
            self._stop()
        return False

    def _start(self):
        if getattr(_active, "recorder", None) is not None:
            raise RuntimeError("Profiler is already enabled on this thread")
        self._recorder = _Recorder(self.record_shapes)
        _active.recorder = self._recorder
        self._recorder.__enter__()

    def _stop(self):
        recorder, self._recorder = self._recorder, None
        if recorder is None:
            return
        recorder.__exit__(None, None, None)
        _active.recorder = None
        for event in recorder.stack:           # (a region left open: it ends with the profile)
            event.end_us = _now_us()
        self.function_events = EventList(recorder.events)

    def _check_finish(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")

    def events(self):
        self._check_finish()
        return self.function_events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        self._check_finish()
        return self.function_events.key_averages(group_by_input_shape)

    def table(self, sort_by=None, row_limit=100, **kwargs):
        self._check_finish()
        return self.function_events.table(sort_by=sort_by, row_limit=row_limit, **kwargs)

    def export_chrome_trace(self, path):
        self._check_finish()
        return self.function_events.export_chrome_trace(path)

    @property
    def self_cpu_time_total(self):
        self._check_finish()
        return self.function_events.self_cpu_time_total

    def __str__(self):
        return self.table() if self.function_events is not None else "<unfinished profile>"


class record_function:
    """Mark a region (``with record_function("forward"):`` or ``@record_function("step")``): while
    a profiler records, it is one event named ``name`` around the ops inside it."""

    def __init__(self, name, args=None):
        self.name, self.args = name, args
        self._event = self._recorder = None

    def __enter__(self):
        self._recorder = getattr(_active, "recorder", None)
        if self._recorder is not None:
            self._event = self._recorder.open(self.name, is_user_annotation=True)
        return self

    def __exit__(self, *exc):
        if self._recorder is not None and self._event is not None:
            self._recorder.close(self._event)
        self._event = self._recorder = None
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)
        return wrapped
