"""torch.torch_version: ``TorchVersion``, the string that ``torch.__version__`` is.

Programs compare torch's version in three ways, and all three must give the answer they would give
with the torch release glasstorch reproduces::

    torch.__version__ >= "1.13"                      # a string: compared as a version, not letter by letter
    torch.__version__ >= (2, 0)                      # a tuple of release numbers
    packaging.version.parse(torch.__version__) >= packaging.version.Version("2.0")

``TorchVersion`` is a ``str`` (it prints, splits and formats as one) whose comparisons parse both
sides as PEP 440 versions, as torch's does. torch leans on the ``packaging`` library for the parsing;
glasstorch's only runtime dependency is NumPy, so the ordering is written out here (`_sort_key`).
A side that is not a valid version falls back to plain string comparison, as in torch.
"""
import re
from collections.abc import Iterable

from .version import __version__ as internal_version

__all__ = ["TorchVersion"]

# PEP 440's grammar (its appendix B), case-insensitive: [N!]N(.N)*[{a|b|rc}N][.postN][.devN][+local]
# (as text: ``re`` compiles it at the first comparison and keeps it; compiled at import, it was ~1% of
# ``import glasstorch``, for programs that mostly never compare versions)
_VERSION = r"""
    ^\s*v?
    (?:(?P<epoch>[0-9]+)!)?
    (?P<release>[0-9]+(?:\.[0-9]+)*)
    (?:[-_.]?(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pre_n>[0-9]+)?)?
    (?:-(?P<post_n1>[0-9]+)|[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>[0-9]+)?)?
    (?:[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>[0-9]+)?)?
    (?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?
    \s*$"""

_PRE_RANK = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2, "pre": 2, "preview": 2}


class InvalidVersion(ValueError):
    """The string is not a PEP 440 version."""


def _sort_key(text):
    """A tuple that orders versions as PEP 440 (and ``packaging.version.Version``) does.

    Release numbers compare with trailing zeros ignored (2.0 == 2.0.0); a development release comes
    before its pre-releases, which come before the release, which comes before its post-releases;
    a local label (``+cpu``) sorts after the same version without one."""
    m = re.match(_VERSION, text, re.VERBOSE | re.IGNORECASE)
    if m is None:
        raise InvalidVersion(f"Invalid version: {text!r}")
    release = tuple(int(part) for part in m["release"].split("."))
    while len(release) > 1 and release[-1] == 0:
        release = release[:-1]
    post = m["post_n1"] or m["post_n2"] or ("0" if m["post_l"] else None)
    dev = m["dev_n"] or ("0" if m["dev_l"] else None)
    if m["pre_l"]:
        pre = (1, _PRE_RANK[m["pre_l"].lower()], int(m["pre_n"] or 0))
    else:  # 1.0.dev0 sorts before 1.0a0; a final release sorts after its pre-releases
        pre = (0,) if dev is not None and post is None else (2,)
    local = ()
    if m["local"]:  # numeric segments sort after alphanumeric ones, numerically
        local = tuple((1, int(seg), "") if seg.isdigit() else (0, 0, seg.lower())
                      for seg in re.split(r"[-_.]", m["local"]))
    return (int(m["epoch"] or 0), release, pre,
            (0,) if post is None else (1, int(post)),
            (1,) if dev is None else (0, int(dev)),
            (0,) if not local else (1,) + local)


def _as_version_text(other):
    """The other side of a comparison as a version string: a string, a Version object, or a tuple
    of release numbers ((2, 0) -> "2.0")."""
    if isinstance(other, str):
        return other
    if hasattr(other, "release") and hasattr(other, "public"):  # packaging.version.Version and kin
        return str(other)
    if isinstance(other, Iterable):
        return ".".join(str(item) for item in other)
    raise InvalidVersion(f"Invalid version: {other!r}")


class TorchVersion(str):
    """A string that compares as a version, against strings, tuples and ``packaging`` Versions.

    >>> from glasstorch.torch_version import TorchVersion
    >>> TorchVersion("2.13.0+cpu") > "2.2", TorchVersion("2.13.0") >= (2, 0), TorchVersion("2.0") == "2"
    (True, True, True)
    """

    __slots__ = ()

    def _compare(self, other, method):
        try:
            mine, theirs = _sort_key(self), _sort_key(_as_version_text(other))
        except InvalidVersion:  # 'parrot' is not a version: compare as strings
            return getattr(str, method)(self, other)
        return getattr(mine, method)(theirs)

    def __gt__(self, other):
        return self._compare(other, "__gt__")

    def __lt__(self, other):
        return self._compare(other, "__lt__")

    def __ge__(self, other):
        return self._compare(other, "__ge__")

    def __le__(self, other):
        return self._compare(other, "__le__")

    def __eq__(self, other):
        return self._compare(other, "__eq__")

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = str.__hash__


__version__ = TorchVersion(internal_version)
