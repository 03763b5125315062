"""Printing tensors exactly as torch prints them (a port of torch/_tensor_str.py's rules)."""
import math

from . import _dtype
from ._array import xp, as_numpy


class _PrintOptions:
    precision = 4
    threshold = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode = None


PRINT_OPTS = _PrintOptions()


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    if profile == "default":
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 4, 1000, 3, 80
    elif profile == "short":
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 2, 1000, 2, 80
    elif profile == "full":
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 4, math.inf, 3, 80
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    return dict(precision=PRINT_OPTS.precision, threshold=PRINT_OPTS.threshold, edgeitems=PRINT_OPTS.edgeitems,
                linewidth=PRINT_OPTS.linewidth, sci_mode=PRINT_OPTS.sci_mode)


class _Formatter:
    """The width and notation shared by every element of one tensor (torch's _Formatter): integer
    floats print as ``1.``, scientific notation when the values span more than 1000x, exceed 1e8
    or go below 1e-4 (unless set_printoptions(sci_mode=...) decides), padded to one width."""

    def __init__(self, values, floating):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        p = PRINT_OPTS.precision
        flat = values.reshape(-1)
        if not floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(str(v)))
            return
        finite = flat[xp.isfinite(flat) & (flat != 0)].astype("float64")
        if finite.size == 0:
            return
        a = xp.abs(finite)
        lo, hi = float(a.min()), float(a.max())
        self.int_mode = bool((finite == xp.ceil(finite)).all())
        self.sci_mode = (hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4) if PRINT_OPTS.sci_mode is None \
            else PRINT_OPTS.sci_mode
        vals = finite.tolist()
        if self.sci_mode:
            self.max_width = max(len(f"{v:.{p}e}") for v in vals)
        elif self.int_mode:
            self.max_width = max(len(f"{v:.0f}") + 1 for v in vals)
        else:
            self.max_width = max(len(f"{v:.{p}f}") for v in vals)

    def width(self):
        return self.max_width

    def format(self, value):
        p = PRINT_OPTS.precision
        if self.floating:
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{p}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{p}f}"
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _complex_str(value, fmt_re, fmt_im):
    real = fmt_re.format(value.real)
    imag = (fmt_im.format(value.imag) + "j").lstrip()
    return real + imag if imag[0] in "+-" else real + "+" + imag  # handles negative numbers, +0.0, -0.0


def _summarized(a):
    e = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.shape[0] > 2 * e:
        parts = [a[:e], a[-e:]]
    else:
        parts = [a]
    parts = [xp.stack([_summarized(x) for x in p]) if a.ndim > 1 and len(p) else p for p in parts]
    return xp.concatenate(parts) if len(parts) > 1 else parts[0]


def _vector_str(a, indent, summarize, fmt, fmt_im=None):
    element_length = fmt.width() + 2 + (fmt_im.width() + 1 if fmt_im is not None else 0)
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / element_length)))
    val = fmt.format if fmt_im is None else (lambda v: _complex_str(v, fmt, fmt_im))
    e = PRINT_OPTS.edgeitems
    if summarize and not e:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * e:
        data = [val(v) for v in a[:e].tolist()] + [" ..."] + [val(v) for v in a[-e:].tolist()]
    else:
        data = [val(v) for v in a.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str_with_formatter(a, indent, summarize, fmt, fmt_im=None):
    if a.ndim == 0:
        v = a.item()
        return fmt.format(v) if fmt_im is None else _complex_str(v, fmt, fmt_im)
    if a.ndim == 1:
        return _vector_str(a, indent, summarize, fmt, fmt_im)
    e = PRINT_OPTS.edgeitems
    if summarize and a.shape[0] > 2 * e:
        rows = list(range(e)) + [None] + list(range(a.shape[0] - e, a.shape[0]))
    else:
        rows = range(a.shape[0])
    slices = ["..." if i is None else _tensor_str_with_formatter(a[i], indent + 1, summarize, fmt, fmt_im)
              for i in rows]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def tensor_str(a, dtype, indent):
    """The bracketed body for array ``a`` (NumPy) of glasstorch ``dtype``."""
    if a.size == 0:
        return "[]"
    if dtype in (_dtype.float16, _dtype.bfloat16):
        a = a.astype("float32")
    summarize = a.size > PRINT_OPTS.threshold
    if dtype.is_complex:
        fmt_re = _Formatter(_summarized(a.real) if summarize else a.real, True)
        fmt_im = _Formatter(_summarized(a.imag) if summarize else a.imag, True)
        return _tensor_str_with_formatter(a, indent, summarize, fmt_re, fmt_im)
    fmt = _Formatter(_summarized(a) if summarize else a, dtype.is_floating_point)
    return _tensor_str_with_formatter(a, indent, summarize, fmt)


def _add_suffixes(s, suffixes, indent):
    parts = [s]
    last_line_len = len(s) - s.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(t, prefix="tensor("):
    indent = len(prefix)
    dtype = t.dtype
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    if t.device.type == "meta":     # no values to show: torch prints "..." and the size
        suffixes.append("size=" + str(tuple(t._data.shape)))
        if dtype is not _dtype.get_default_dtype():
            suffixes.append("dtype=" + repr(dtype))
        body = "..."
    elif t._data.size == 0:
        if t._data.ndim != 1:
            suffixes.append("size=" + str(tuple(t._data.shape)))
        if dtype is not _dtype.get_default_dtype():
            suffixes.append("dtype=" + repr(dtype))
        body = "[]"
    else:
        if dtype not in (_dtype.get_default_dtype(), _dtype.int64, _dtype.bool, _dtype.complex64):
            suffixes.append("dtype=" + repr(dtype))
        body = tensor_str(as_numpy(t._data), dtype, indent)
    if t._grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t._grad_fn).__name__}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
