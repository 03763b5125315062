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
    cls = type(name, (_StructSeq,), namespace)
    globals()[name] = cls
    return cls


_VALUES_INDICES = ("values", "indices")
for _name in ("max", "min", "sort", "topk", "kthvalue", "median", "nanmedian", "mode", "cummax", "cummin"):
    _make(_name, _VALUES_INDICES)
    _make(_name + "_out", _VALUES_INDICES)   # what the call with out=(values, indices) returns
_make("aminmax", ("min", "max"))
_make("aminmax_out", ("min", "max"))
_make("slogdet", ("sign", "logabsdet"))
_make("linalg_slogdet", ("sign", "logabsdet"))
_make("linalg_eig", ("eigenvalues", "eigenvectors"))
_make("linalg_eigh", ("eigenvalues", "eigenvectors"))
_make("linalg_svd", ("U", "S", "Vh"))
_make("svd", ("U", "S", "V"))
_make("linalg_qr", ("Q", "R"))
_make("linalg_inv_ex", ("inverse", "info"))
_make("linalg_cholesky_ex", ("L", "info"))
_make("linalg_solve_ex", ("result", "info"))
_make("geqrf", ("a", "tau"))
_make("qr", ("Q", "R"))
for _name, _fields in (("qr", ("Q", "R")), ("svd", ("U", "S", "V")), ("slogdet", ("sign", "logabsdet")),
                       ("geqrf", ("a", "tau"))):
    _make(_name + "_out", _fields)
_make("frexp", ("mantissa", "exponent"))
_make("frexp_out", ("mantissa", "exponent"))
_make("histogram", ("hist", "bin_edges"))
_make("histogram_out", ("hist", "bin_edges"))
# what torch.linalg's functions with several results return when called with out=(...)
for _name, _fields in (("linalg_slogdet", ("sign", "logabsdet")), ("linalg_eig", ("eigenvalues", "eigenvectors")),
                       ("linalg_eigh", ("eigenvalues", "eigenvectors")), ("linalg_svd", ("U", "S", "Vh")),
                       ("linalg_qr", ("Q", "R")), ("linalg_inv_ex", ("inverse", "info")),
                       ("linalg_cholesky_ex", ("L", "info")), ("linalg_solve_ex", ("result", "info"))):
    _make(_name + "_out", _fields)
del _fields
del _name
