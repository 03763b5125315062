"""Complex tensors: their real and imaginary parts, their conjugate, and the real-pair view.

torch reaches the parts of a complex tensor through one view: ``view_as_real(z)`` sees each complex
number as a pair of reals (a new last dim of size 2), so ``z.real`` is ``view_as_real(z)[..., 0]`` and
``z.imag`` is ``view_as_real(z)[..., 1]`` (their nodes: ``SelectBackward0`` over
``ViewAsRealBackward0``), and writing into ``z.real`` writes into ``z``. ``view_as_complex`` is the
inverse view. NumPy gives both views without a copy: the real parts of a complex array, strided by half
an element, are the pairs.

Gradients of complex tensors follow torch's convention: the gradient is the conjugate Wirtinger
derivative, so for a real loss ``L``, ``z.grad = dL/d(re z) + 1j * dL/d(im z)``. A real part's gradient
``g`` flows back as ``g + 0j``; an imaginary part's as ``g * 1j``; the view pairs' gradient
``[gr, gi]`` as ``gr + 1j gi`` -- which is what ``view_as_complex`` of the pairs is.

Where glasstorch differs: NumPy has no lazy conjugate bit, so ``conj`` of a complex tensor is a new
tensor (torch returns a view with its conjugate bit set; ``is_conj()`` is always False here and
``resolve_conj`` returns its input).
"""
from .. import _dtype
from .._tensor import Tensor, _intercepted_property
from .._array import xp, as_strided, data_ptr, ascontiguousarray
from ._op import method, written_into_self
from .._ops import defop, node_classes_of
from .._seam import overridable, DisableTorchFunction

__getattr__ = node_classes_of(__name__)    # (the node classes declared here, by name: TanhBackward0)

__all__ = ["view_as_real", "view_as_complex", "real", "imag", "conj", "conj_physical", "resolve_conj",
           "resolve_neg", "is_conj"]

_REAL_OF = {xp.dtype("complex64"): xp.dtype("float32"), xp.dtype("complex128"): xp.dtype("float64")}
_COMPLEX_OF = {v: k for k, v in _REAL_OF.items()}


def _pairs(a):
    """The complex array ``a`` as real pairs, a view: shape ``a.shape + (2,)``."""
    parts = a.real                   # a view with a's strides, starting at the real part
    return as_strided(parts, a.shape + (2,), parts.strides + (parts.itemsize,))


def _view_as_real_kernel(self):
    if self.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return _pairs(self)


def _view_as_complex_kernel(self):
    if self.dtype not in _COMPLEX_OF:
        raise RuntimeError(f"view_as_complex is only supported for float and double tensors, but got a tensor of "
                           f"scalar type: {_dtype._BY_NUMPY[self.dtype]._legacy}")
    if self.ndim == 0 or self.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if not _views_as_complex(self):   # a gradient laid out otherwise (the user's call was checked)
        self = ascontiguousarray(self)
    return self.view(_COMPLEX_OF[self.dtype])[..., 0]


def _views_as_complex(a):
    """Whether the pairs of ``a`` sit side by side in memory, each pair aligned to a complex element."""
    item = a.itemsize
    return a.strides[-1] == item and all(s % (2 * item) == 0 for s in a.strides[:-1]) and \
        data_ptr(a) % (2 * item) == 0 if a.size else True


view_as_real_op = defop("view_as_real(Tensor(a) self) -> Tensor(a)", _view_as_real_kernel,
                        node="ViewAsRealBackward0",
                        self=lambda grad: view_as_complex_op(grad))
view_as_complex_op = defop("view_as_complex(Tensor(a) self) -> Tensor(a)", _view_as_complex_kernel,
                           node="ViewAsComplexBackward0",
                           self=lambda grad: view_as_real_op(grad))
# torch's conj is a view with the conjugate bit set; NumPy has none, so here the result is new memory
# (the schema's output alias is left out: an in-place op on the result does not reach the input)
conj_op = defop("conj(Tensor(a) self) -> Tensor", lambda self: xp.conj(self),
                node="ConjBackward0", self=lambda grad: conj_op(grad))
conj_physical_op = defop("conj_physical(Tensor self) -> Tensor", lambda self: xp.conj(self),
                         node="ConjPhysicalBackward0", self=lambda grad: conj_physical_op(grad))


@overridable
def view_as_real(input):
    """The complex tensor ``input`` seen as real pairs: shape ``input.shape + (2,)``, sharing memory."""
    return view_as_real_op(input)


@overridable
def view_as_complex(input):
    """The inverse of :func:`view_as_real`: a float tensor whose last dim holds (real, imaginary) pairs."""
    a = input._data
    if a.dtype in _COMPLEX_OF and a.ndim and a.shape[-1] == 2:
        if a.strides[-1] != a.itemsize and a.size:
            raise RuntimeError("Tensor must have a last dimension with stride 1")
        if not _views_as_complex(a):
            raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    return view_as_complex_op(input)


def _real_get(input):
    if not input.is_complex():
        return input
    return view_as_real(input).select(-1, 0)


def _imag_get(input):
    if not input.is_complex():
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return view_as_real(input).select(-1, 1)


@overridable
def real(input):
    """The real part: a view of a complex tensor (the tensor itself when it is real)."""
    return _real_get(input)


@overridable
def imag(input):
    """The imaginary part of a complex tensor, a view."""
    return _imag_get(input)


def _part_property(name, get_part):
    """``Tensor.real`` / ``Tensor.imag``: a view of the part; assigning to it writes into the tensor.
    Read on the seam as torch's (a mode sees ``Tensor.real.__get__``, not ``torch.real``); assigned off it."""
    def getter(self):
        return get_part(self)

    def setter(self, value):
        with DisableTorchFunction():    # (torch's setter is C++: a mode sees no call in it)
            get_part(self).copy_(value)
    getter.__name__ = getter.__qualname__ = setter.__name__ = setter.__qualname__ = name
    prop = _intercepted_property(overridable(getter), setter,
                                 doc=f"The {name} part (a view); assigning to it writes into the tensor.")
    setattr(Tensor, name, prop)
    prop.__set_name__(Tensor, name)     # (set after the class was made: Python does not call it then)


_part_property("real", _real_get)
_part_property("imag", _imag_get)


@method("conj")
@overridable
def conj(input):
    """The complex conjugate (a real tensor is its own conjugate: returned as is, as torch does)."""
    return conj_op(input) if input.is_complex() else input


@method("conj_physical")
@overridable
def conj_physical(input):
    return conj_physical_op(input) if input.is_complex() else input


# (torch's derivatives.yaml has an entry of its own for it: ConjPhysicalBackward1)
conj_physical__op = defop("conj_physical_(Tensor(a!) self) -> Tensor(a!)", written_into_self(conj_physical_op.kernel),
                          inplace=True, node="ConjPhysicalBackward1", self=lambda grad: conj_physical_op(grad))


@method()
@overridable
def conj_physical_(self):
    """In place: the conjugate written into ``self`` (aten.conj_physical_; a real tensor's values stay)."""
    return conj_physical__op._call(self)


@method()
@overridable
def resolve_conj(input):
    """Materialise a lazy conjugate: glasstorch's conj is never lazy, so this is the input."""
    return input


@method()
@overridable
def resolve_neg(input):
    """Materialise a lazy negation: glasstorch has none, so this is the input."""
    return input


@method("is_conj")
@overridable
def is_conj(input):
    return False

