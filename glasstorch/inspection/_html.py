"""How inspection results look in Jupyter: HTML for ``_repr_html_``, from their public attributes only.

A notebook cell that ends with ``explain(w)``, a ``record()`` or ``summary(loss)`` shows the sentence or
the table these functions build, instead of the object's ``repr``. Everything shown is escaped (names and
file names come from user code). No colours are set, so the notebook's light or dark theme applies; long
timelines are cut to ``MAX_ROWS`` rows with a line saying how many more there are (``str(rec)`` has
them all).
"""
import os
from html import escape

MAX_ROWS = 500
_TABLE = '<table style="font-size:90%">'
_CODE = '<code style="white-space:pre">{}</code>'


def _where(filename, lineno):
    return _CODE.format(escape(f"{os.path.basename(filename)}:{lineno}")) if filename else ""


def explanation(e):
    """The sentence, with its cause and (when known) the user's line, and the fix on a line of its own."""
    because, fix = (e.message.split(" Fix: ", 1) + [None])[:2]
    head = f"<b>{escape(e.name or 'tensor')}.grad</b> &middot; cause {_CODE.format(escape(repr(e.cause)))}"
    if e.how:
        head += f" &middot; by {_CODE.format(escape(e.how))}"
    if e.filename:
        head += f" &middot; at {_where(e.filename, e.lineno)}"
    parts = [f"<div>{head}", f"<p>{escape(because)}</p>"]
    if fix:
        parts.append(f"<p><b>Fix:</b> {escape(fix)}</p>")
    return "\n".join(parts) + "</div>"


def timeline(rec):
    """The recorded events as a table: #, event, node, detail, line."""
    events = list(rec.events)
    rows = [f"<tr><td>{e.index}</td><td>{escape(e.kind)}</td><td>{_CODE.format(escape(e.node))}</td>"
            f"<td style=\"text-align:left\">{escape(e.detail or '')}</td><td>{_where(e.filename, e.lineno)}</td></tr>"
            for e in events[:MAX_ROWS]]
    more = len(events) - MAX_ROWS
    caption = f"record: {len(events)} event{'s' * (len(events) != 1)}"
    if more > 0:
        caption += f" (the first {MAX_ROWS} shown; str() of the record has all)"
    return (f"<div><b>{escape(caption)}</b>\n{_TABLE}<thead><tr><th>#</th><th>event</th><th>node</th><th>detail</th>"
            f"<th>line</th></tr></thead><tbody>\n" + "\n".join(rows) + "\n</tbody></table>"
            + (f"<p>... {more} more events</p>" if more > 0 else "") + "</div>")


def graph_summary(s):
    """The summary's first line, then every op with its count and every leaf."""
    first = str(s).split("\n", 1)[0]
    ops = "".join(f"<tr><td>{_CODE.format(escape(name))}</td><td>{count}</td></tr>"
                  for name, count in sorted(s.ops.items(), key=lambda kv: (-kv[1], kv[0])))
    leaves = ", ".join(_CODE.format(escape(str(leaf))) for leaf in s.leaves) or "none"
    table = (f"{_TABLE}<thead><tr><th>node</th><th>count</th></tr></thead><tbody>{ops}</tbody></table>"
             if ops else "")
    return f"<div><p>{escape(first)}</p>{table}<p>leaves: {leaves}</p></div>"
