"""torch.profiler: time the ops a program runs.

    from glasstorch.profiler import profile, record_function, ProfilerActivity

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        with record_function("model_inference"):
            model(inputs)
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))

The events come from the seam's op level (glasstorch/autograd/profiler.py): each aten op the program
runs, forward and backward, and each ``record_function`` region; the table is torch's (CPU columns).
``schedule`` and ``step()`` record only the active steps and hand each finished cycle to
``on_trace_ready`` (``tensorboard_trace_handler`` writes it as a Chrome trace). Not measured:
device time, memory (``profile_memory``), FLOPs (``utils.flop_counter.FlopCounterMode`` counts them),
Python stacks.
"""
import enum
import os
import socket
import time

from ..autograd import profiler as _autograd_profiler
from ..autograd.profiler import record_function

__all__ = ["profile", "record_function", "ProfilerActivity", "ProfilerAction", "schedule",
           "tensorboard_trace_handler", "supported_activities"]


class ProfilerActivity(enum.Enum):
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities():
    return {ProfilerActivity.CPU}


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """What the profiler does at each step: skip ``skip_first`` steps, then cycles of ``wait``
    idle steps, ``warmup`` steps, ``active`` recorded steps (the last one saves), ``repeat`` times
    (0: for ever)."""
    def schedule_fn(step):
        if step < 0:
            raise AssertionError(f"Invalid step number {step}: step must be non-negative")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait and step < wait:
            return ProfilerAction.NONE
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return ProfilerAction.NONE
        if mod_step < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod_step < num_steps - 1 else ProfilerAction.RECORD_AND_SAVE
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError("Invalid profiler schedule arguments")
    if warmup == 0:
        import warnings
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)
    return schedule_fn


def _always_record(step):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """An ``on_trace_ready`` that writes each finished trace as ``<worker>.<time>.pt.trace.json``
    into ``dir_name`` (what TensorBoard's profiler plugin reads)."""
    def handler_fn(prof):
        os.makedirs(dir_name, exist_ok=True)
        name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        path = os.path.join(dir_name, f"{name}.{time.time_ns() // 1000000}.pt.trace.json")
        prof.export_chrome_trace(path)
    return handler_fn


class profile(_autograd_profiler.profile):
    """torch.profiler.profile: a context manager (or ``start()``/``stop()``) that records the ops
    run inside it; with a ``schedule``, call ``step()`` at the end of each step."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None):
        super().__init__(record_shapes=record_shapes)
        self.activities = set(activities) if activities else supported_activities()
        self.schedule = schedule if schedule is not None else _always_record
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self._recording = False

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        self._transit(self.current_action)

    def stop(self):
        if self._recording:
            self._finish_cycle(save=self.on_trace_ready is not None)

    def step(self):
        """The end of a step: the schedule says what the next one does."""
        previous = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        if previous == ProfilerAction.RECORD_AND_SAVE:
            self._finish_cycle(save=True)
        self._transit(self.current_action)

    def _transit(self, action):
        if action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE) and not self._recording:
            self._start()
            self._recording = True
        elif action in (ProfilerAction.NONE, ProfilerAction.WARMUP) and self._recording:
            self._finish_cycle(save=False)

    def _finish_cycle(self, save):
        self._stop()
        self._recording = False
        if save and self.on_trace_ready is not None:
            self.on_trace_ready(self)
