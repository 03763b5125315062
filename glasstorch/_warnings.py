"""Warnings that name the user's line.

glasstorch gives torch's warnings about how a function was called (a non-leaf's ``.grad`` read, a
tensor copy-constructed from a tensor...), and the line they must name is the user's: the first
frame outside glasstorch. A fixed ``stacklevel`` finds it only when the user called the function
directly; when a :class:`~glasstorch.overrides.TorchFunctionMode` is active (a user's, or the
inspection tools') the seam's frames come in between, and ``stacklevel=2`` would name them.
:func:`warn` looks for the user's frame instead, and gives the warning through that module's
registry, so Python's once-per-line filtering works as for any warning.
"""
import os
import sys
import warnings

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_GENERATED = "<glasstorch"      # the filenames of generated op code (glasstorch/_ops_codegen.py)
GLASSTORCH_PREFIXES = (_PACKAGE_DIR, _GENERATED)   # (for ``filename.startswith``, where a call is too many)


def is_glasstorch_file(filename):
    """Whether code from ``filename`` is part of glasstorch (its files, or its generated op code)."""
    return filename.startswith(GLASSTORCH_PREFIXES)


def user_frame(depth=1):
    """The innermost frame outside glasstorch, starting ``depth`` frames above the caller (None if
    the whole stack is glasstorch's)."""
    f = sys._getframe(depth + 1)
    while f is not None and is_glasstorch_file(f.f_code.co_filename):
        f = f.f_back
    return f


def warn(message, category=UserWarning):
    """``warnings.warn(message, category)`` at the user's line (see the module docstring)."""
    frame = user_frame(1)
    if frame is None:
        warnings.warn(message, category, stacklevel=2)
        return
    g = frame.f_globals
    filename = frame.f_code.co_filename
    # module_globals only serves linecache; for code with no file (python -c, exec) the loader it
    # names cannot give the source and raises
    warnings.warn_explicit(message, category, filename, frame.f_lineno, module=g.get("__name__", "__main__"),
                           registry=g.setdefault("__warningregistry__", {}),
                           module_globals=g if os.path.isfile(filename) else None)
