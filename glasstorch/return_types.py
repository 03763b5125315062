"""torch.return_types: the named tuples that ops with several results return.

``torch.max(x, 1)`` is a ``torch.return_types.max``: a tuple ``(values, indices)`` whose items are
also ``.values`` and ``.indices``; ``torch.linalg.svd(A)`` a ``torch.return_types.linalg_svd`` with
``.U``, ``.S`` and ``.Vh``. As torch's (structseq) types, each is built from one sequence::

    >>> import glasstorch as torch
    >>> r = torch.return_types.max((torch.tensor(3.), torch.tensor(0)))
    >>> r.values, r.indices
    (tensor(3.), tensor(0))
"""


class _StructSeq(tuple):
    """A tuple whose items also have names (``_fields``)."""
    __slots__ = ()
    _fields = ()

    def __new__(cls, sequence):
        values = tuple(sequence)
        if len(values) != len(cls._fields):
            raise TypeError(f"torch.return_types.{cls.__name__}() takes a {len(cls._fields)}-sequence "
                            f"({len(values)}-sequence given)")
        return tuple.__new__(cls, values)

    def __repr__(self):
        items = ",\n".join(f"{name}={value!r}" for name, value in zip(self._fields, self))
        return f"torch.return_types.{type(self).__name__}(\n{items})"

    def __reduce__(self):
        return type(self), (tuple(self),)


def _field(i):
    return property(lambda self: tuple.__getitem__(self, i))


def _make(name, fields):
    namespace = {"__slots__": (), "_fields": fields, "__module__": "torch.return_types",
                 "__qualname__": name, "__doc__": f"torch.return_types.{name}({', '.join(fields)})"}
    namespace.update((f, _field(i)) for i, f in enumerate(fields))
    # (setdefault: of two threads making the same type at once, both get the one kept)
    return globals().setdefault(name, type(name, (_StructSeq,), namespace))


# Each type is made when first asked for (``__getattr__``): ``import glasstorch`` made all 50 (1-2% of
# the import), where a program meets a few. The names and fields, as torch has them:
_FIELDS = {}
_VALUES_INDICES = ("values", "indices")
for _name in ("max", "min", "sort", "topk", "kthvalue", "median", "nanmedian", "mode", "cummax", "cummin"):
    _FIELDS[_name] = _FIELDS[_name + "_out"] = _VALUES_INDICES   # (_out: what the call with out=(...) returns)
for _name, _fields in (("aminmax", ("min", "max")), ("slogdet", ("sign", "logabsdet")),
                       ("linalg_slogdet", ("sign", "logabsdet")), ("linalg_eig", ("eigenvalues", "eigenvectors")),
                       ("linalg_eigh", ("eigenvalues", "eigenvectors")), ("linalg_svd", ("U", "S", "Vh")),
                       ("svd", ("U", "S", "V")), ("linalg_qr", ("Q", "R")), ("linalg_inv_ex", ("inverse", "info")),
                       ("linalg_cholesky_ex", ("L", "info")), ("linalg_solve_ex", ("result", "info")),
                       ("geqrf", ("a", "tau")), ("qr", ("Q", "R")), ("frexp", ("mantissa", "exponent")),
                       ("histogram", ("hist", "bin_edges"))):
    # (torch.linalg's functions with several results, called with out=(...), return the _out types too)
    _FIELDS[_name] = _FIELDS[_name + "_out"] = _fields
del _name, _fields


def __getattr__(name):
    fields = _FIELDS.get(name)
    if fields is None:
        raise AttributeError(f"module 'torch.return_types' has no attribute '{name}'")
    return _make(name, fields)


def __dir__():
    return sorted(set(globals()) | set(_FIELDS))
