"""``torch.testing.assert_close``: two values, or two nested sequences/mappings of them, equal up to
a tolerance -- with torch's rules (``torch/testing/_comparison.py``) and its messages, word for word.

* Pairs are compared by kind: ``None`` with ``None``, Python bools, Python numbers, and tensor-likes
  (two Tensors, or two NumPy arrays); sequences and mappings item by item (a failure names the item:
  ``The failure occurred for item ['x'][1]``). Anything else is a TypeError.
* Tensors must agree in shape, device and (``check_dtype``) dtype, and (``check_stride``) strides.
* Close means ``|actual - expected| <= atol + rtol * |expected|`` elementwise (NaN only with
  ``equal_nan``). Without ``rtol``/``atol`` both come from the dtypes: float32 1.3e-6/1e-5, float64
  1e-7/1e-7, float16 1e-3/1e-5, bfloat16 1.6e-2/1e-5 (the larger of the two dtypes'); integers and
  bools must be equal.
* The message gives the number of mismatched elements and the greatest absolute and relative
  differences with their indices (a 0-dim tensor or a number: both values).
"""
import collections.abc
import math

import numpy as np

from .. import _dtype

# (rtol, atol) by dtype name: torch's _DTYPE_PRECISIONS
_PRECISIONS = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
               "float64": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}


class _Mismatch(Exception):
    def __init__(self, error, structural=False):
        self.error, self.structural = error, structural   # (structural: the containers differ; msg= is not used)


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Raise AssertionError unless ``actual`` and ``expected`` are close (see the module docstring)."""
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                         f"{'rtol' if rtol is None else 'atol'}.")
    options = dict(rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=check_device, check_dtype=check_dtype,
                   check_stride=check_stride)
    try:
        _compare(actual, expected, "", options)
    except _Mismatch as m:
        error = m.error
        if isinstance(error, AssertionError) and msg is not None and not m.structural:
            error = AssertionError(msg(str(error)) if callable(msg) else msg)
        raise error from None


def _fail(message, path, structural=False):
    if path:
        message += f"\n\nThe failure occurred for item {path}"
    raise _Mismatch(AssertionError(message), structural)


def _is_tensor_like(value):
    from .._tensor import Tensor
    return isinstance(value, (Tensor, np.ndarray))


def _compare(actual, expected, path, options):
    from .._tensor import Tensor
    if actual is None or expected is None:
        if actual is not expected:
            _fail(f"None mismatch: {actual} is not {expected}", path)
        return
    if isinstance(actual, bool) and isinstance(expected, bool):
        if actual is not expected:
            _fail(f"Booleans mismatch: {actual} is not {expected}", path)
        return
    numbers = (int, float, complex)
    if isinstance(actual, numbers) and isinstance(expected, numbers) and not isinstance(actual, bool) \
            and not isinstance(expected, bool):
        return _compare_numbers(actual, expected, path, options)
    if isinstance(actual, Tensor) and isinstance(expected, Tensor) or \
            isinstance(actual, np.ndarray) and isinstance(expected, np.ndarray):
        return _compare_tensors(actual, expected, path, options)
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            _fail(f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", path, True)
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, f"{path}[{i}]", options)
        return
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        missing = [k for k in expected if k not in actual]
        extra = [k for k in actual if k not in expected]
        if missing or extra:
            _fail(f"The keys of the mappings do not match:\nMissing keys in the actual mapping: {sorted(missing)}\n"
                  f"Additional keys in the actual mapping: {sorted(extra)}", path, True)
        for k in expected:
            _compare(actual[k], expected[k], f"{path}[{k!r}]", options)
        return
    raise _Mismatch(TypeError(f"No comparison pair was able to handle inputs of type {type(actual)} and "
                              f"{type(expected)}."))


def _is_sequence(value):
    return isinstance(value, collections.abc.Sequence) and not isinstance(value, str)


def _tolerances(dtype_names, options):
    if options["rtol"] is not None:
        return options["rtol"], options["atol"]
    pairs = [_PRECISIONS.get(name, (0.0, 0.0)) for name in dtype_names]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _scalar_message(actual, expected, rtol, atol, path):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    _fail(_mismatch_message("Scalars", f"Expected {expected} but got {actual}.", abs_diff, None, atol, rel_diff, None,
                            rtol), path)


def _mismatch_message(identifier, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol):
    equality = rtol == 0 and atol == 0

    def diff(kind, value, idx, tol):
        line = f"{kind.title()} difference: {value}" if idx is None else \
            f"Greatest {kind} difference: {value} at index {idx}"
        return line + ("" if equality else f" (up to {tol} allowed)") + "\n"
    message = f"{identifier} are not {'equal' if equality else 'close'}!\n\n{extra.strip()}\n"
    message += diff("absolute", abs_diff, abs_idx, atol) + diff("relative", rel_diff, rel_idx, rtol)
    return message.strip()


def _compare_numbers(actual, expected, path, options):
    if options["check_dtype"] and type(actual) is not type(expected):
        _fail(f"The (d)types do not match: {type(actual)} != {type(expected)}.", path)
    kinds = {int: "int64", float: "float64", complex: "complex128"}
    rtol, atol = _tolerances([kinds[type(actual)], kinds[type(expected)]], options)
    if _numbers_close(actual, expected, rtol, atol, options["equal_nan"]):
        return
    _scalar_message(actual, expected, rtol, atol, path)


def _numbers_close(a, e, rtol, atol, equal_nan):
    if a == e:
        return True
    if isinstance(a, complex) or isinstance(e, complex):
        if equal_nan and (a != a) and (e != e):
            return True
    elif math.isnan(a) or math.isnan(e):
        return equal_nan and math.isnan(a) and math.isnan(e)
    return abs(a - e) <= atol + rtol * abs(e)


def _attributes(value):
    """(shape text, device, dtype, strides, array) of a Tensor or an ndarray, as torch sees them."""
    from .._tensor import Tensor
    if isinstance(value, Tensor):
        return value.shape, str(value.device), value.dtype, value.stride(), value.detach().numpy()
    dtype = _dtype._BY_NUMPY[value.dtype]
    from .._tensor import Size
    return Size(value.shape), "cpu", dtype, tuple(s // value.itemsize for s in value.strides), value


def _compare_tensors(actual, expected, path, options):
    a_shape, a_device, a_dtype, a_stride, a = _attributes(actual)
    e_shape, e_device, e_dtype, e_stride, e = _attributes(expected)
    if a_shape != e_shape:
        _fail(f"The values for attribute 'shape' do not match: {a_shape} != {e_shape}.", path)
    if options["check_device"] and a_device != e_device:
        _fail(f"The values for attribute 'device' do not match: {a_device} != {e_device}.", path)
    if options["check_dtype"] and a_dtype is not e_dtype:
        _fail(f"The values for attribute 'dtype' do not match: {a_dtype} != {e_dtype}.", path)
    if options["check_stride"] and a_stride != e_stride:
        _fail(f"The values for attribute 'stride()' do not match: {a_stride} != {e_stride}.", path)
    rtol, atol = _tolerances([a_dtype.name, e_dtype.name], options)
    if a_dtype is not e_dtype:
        common = _dtype.promote_types(a_dtype, e_dtype).numpy_dtype
        a, e = a.astype(common), e.astype(common)
    if a.dtype.kind == "V" or a.dtype.name == "bfloat16":   # (ml_dtypes' bfloat16: compared as float32)
        a, e = a.astype(np.float32), e.astype(np.float32)
    matches = _isclose(a, e, rtol, atol, options["equal_nan"])
    if matches.all():
        return
    if a.ndim == 0:
        _scalar_message(a.item(), e.item(), rtol, atol, path)
    total = matches.size
    bad = total - int(matches.sum())
    extra = f"Mismatched elements: {bad} / {total} ({bad / total:.1%})"
    flat_a, flat_e, flat_m = a.reshape(-1), e.reshape(-1), matches.reshape(-1)
    if flat_a.dtype.kind not in "fc":
        flat_a, flat_e = flat_a.astype(np.int64), flat_e.astype(np.int64)
    with np.errstate(all="ignore"):
        abs_diff = np.abs(flat_a - flat_e)
        abs_diff[flat_m] = 0
        abs_idx = _argmax(abs_diff)
        divisor = np.abs(flat_e)
        if abs_diff.dtype.kind in "iu":   # torch divides integers in the default float dtype
            abs_diff_f = abs_diff.astype(_dtype.get_default_dtype().numpy_dtype)
            divisor = divisor.astype(abs_diff_f.dtype)
        else:
            abs_diff_f = abs_diff
        rel_diff = abs_diff_f / divisor
        rel_diff[flat_m] = 0
        rel_idx = _argmax(rel_diff)
    _fail(_mismatch_message("Tensor-likes", extra, abs_diff[abs_idx].item(), _index(abs_idx, a.shape), atol,
                            rel_diff[rel_idx].item(), _index(rel_idx, a.shape), rtol), path)


def _index(flat, shape):
    return tuple(int(i) for i in np.unravel_index(flat, shape))


def _argmax(values):
    """torch.max's index: a NaN wins (the first), else the first greatest."""
    nan = np.isnan(values) if values.dtype.kind in "fc" else None
    if nan is not None and nan.any():
        return int(np.argmax(nan))
    return int(np.argmax(values))


def _isclose(a, e, rtol, atol, equal_nan):
    if a.dtype.kind not in "fc":
        if rtol == 0 and atol == 0:
            return a == e
        a, e = a.astype(np.float64), e.astype(np.float64)     # (integers within a given tolerance)
    with np.errstate(all="ignore"):
        close = (a == e) | (np.abs(a - e) <= atol + rtol * np.abs(e))
        finite = np.isfinite(a) & np.isfinite(e)
        close = (a == e) | (close & finite)
    if equal_nan:
        close |= np.isnan(a) & np.isnan(e)
    return close
