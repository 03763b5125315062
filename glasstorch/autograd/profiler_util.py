"""The profiler's events and its table (torch/autograd/profiler_util.py's CPU part).

A :class:`FunctionEvent` is one timed region: an aten op the profiler's dispatch mode ran, or a
``record_function`` block; its children are the events that ran inside it, and its *self* time is
its time minus theirs. ``EventList.key_averages()`` groups them by name (and input shapes) into
:class:`FunctionEventAvg` rows; ``table()`` prints those as torch prints them.
"""
import json

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg"]


def _format_time(time_us):
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us, total_time_us):
    if total_time_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_time_us:.2f}%"


class FunctionEvent:
    """One timed region: ``name``, its start and end (microseconds), the input shapes (when the
    profiler records them), the event it ran inside (``cpu_parent``) and those inside it."""

    def __init__(self, id, name, start_us, end_us=None, input_shapes=None, is_user_annotation=False):
        self.id, self.name = id, name
        self.start_us, self.end_us = start_us, end_us
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.is_user_annotation = is_user_annotation
        self.cpu_parent, self.cpu_children = None, []
        self.count = 1

    key = property(lambda self: self.name)
    cpu_time_total = property(lambda self: self.end_us - self.start_us)
    self_cpu_time_total = property(lambda self: self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children))
    cpu_time = cpu_time_total

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} cpu_time={_format_time(self.cpu_time_total)} "
                f"start_us={self.start_us:.3f} end_us={self.end_us:.3f} "
                f"cpu_children={[c.id for c in self.cpu_children]} "
                f"input_shapes={self.input_shapes}>")


class FunctionEventAvg:
    """The events of one name (and input shapes, when grouped so) added up."""

    def __init__(self, key, input_shapes=None):
        self.key, self.input_shapes = key, input_shapes if input_shapes is not None else []
        self.count = 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.is_user_annotation = False

    def add(self, event):
        self.count += event.count
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        self.is_user_annotation = event.is_user_annotation
        return self

    @property
    def cpu_time(self):
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={_format_time(self.self_cpu_time_total)} "
                f"cpu_time={_format_time(self.cpu_time)} input_shapes={self.input_shapes}>")


class EventList(list):
    """A list of events (or of their averages) that prints as torch's profiler table."""

    def key_averages(self, group_by_input_shapes=False):
        groups = {}
        for event in self:
            key = (event.key, str(event.input_shapes)) if group_by_input_shapes else event.key
            if key not in groups:
                groups[key] = FunctionEventAvg(event.key, event.input_shapes if group_by_input_shapes else None)
            groups[key].add(event)
        return EventList(groups.values())

    @property
    def self_cpu_time_total(self):
        return sum(event.self_cpu_time_total for event in self)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        """torch's table: Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time avg, # of Calls
        (and Input Shapes when recorded), sorted by ``sort_by`` (an attribute: ``"cpu_time_total"``,
        ``"self_cpu_time_total"``, ``"count"``), and the total of the self times."""
        return _build_table(self, sort_by, header, row_limit, max_name_column_width, max_shapes_column_width,
                            top_level_events_only, time_unit)

    def export_chrome_trace(self, path):
        """The events in the Chrome trace format (open it in chrome://tracing or Perfetto)."""
        trace = [{"name": e.name, "ph": "X", "ts": e.start_us, "dur": e.cpu_time_total, "pid": 0, "tid": 0,
                  "cat": "user_annotation" if e.is_user_annotation else "cpu_op",
                  "args": {"Input Dims": e.input_shapes}} for e in self]
        with open(path, "w") as f:
            json.dump({"traceEvents": trace}, f)

    def __str__(self):
        return self.table()


def _build_table(events, sort_by, header, row_limit, max_name_column_width, max_shapes_column_width,
                 top_level_events_only, time_unit):
    if len(events) == 0:
        return ""
    if sort_by is not None:
        events = EventList(sorted(events, key=lambda evt: getattr(evt, sort_by), reverse=True))
    has_input_shapes = any(evt.input_shapes for evt in events)
    name_width = min(max(len(evt.key) for evt in events) + 4, max_name_column_width)
    shapes_width = min(max(len(str(evt.input_shapes)) for evt in events) + 4, max_shapes_column_width)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"]
    widths = [name_width] + [12] * 6
    if has_input_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_width)
    row_format = "".join("{: >" + str(w) + "}  " for w in widths)
    header_sep = "".join("-" * w + "  " for w in widths)
    line_length = sum(w + 2 for w in widths) - 2
    total = sum(evt.self_cpu_time_total for evt in events)

    def fmt(time_us):
        units = {"s": 1e6, "ms": 1e3, "us": 1.0}
        return f"{time_us / units[time_unit]:.3f}{time_unit}" if time_unit in units else _format_time(time_us)

    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_events_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [header_sep, row_format.format(*headers), header_sep]
    shown = 0
    for evt in events:
        if shown == row_limit:
            break
        if top_level_events_only and getattr(evt, "cpu_parent", None) is not None:
            continue
        shown += 1
        name = evt.key
        if len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        row = [name, _format_time_share(evt.self_cpu_time_total, total), fmt(evt.self_cpu_time_total),
               _format_time_share(evt.cpu_time_total, total), fmt(evt.cpu_time_total), fmt(evt.cpu_time), evt.count]
        if has_input_shapes:
            row.append(str(evt.input_shapes)[:shapes_width])
        lines.append(row_format.format(*row))
    lines += [header_sep, f"Self CPU time total: {fmt(total)}"]
    return "".join(line + "\n" for line in lines)
