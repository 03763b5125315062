r"""``Parameter``: a tensor that a ``Module`` registers as something to train.

A Parameter is an ordinary :class:`Tensor` (``isinstance(p, Tensor)`` holds
and every op accepts it) with one extra meaning: assigned as a module
attribute, ``Module.__setattr__`` files it under ``_parameters``, so it shows up
in ``parameters()``, ``state_dict()`` and is moved by ``to()``.  A plain tensor
assigned the same way is just an attribute (a cache, an RNN's last state...).

``Parameter(t)`` shares ``t``'s array and is a fresh graph *leaf*, even when
``t`` came out of an operation: parameters are where gradients accumulate.

Lazy modules hold :class:`UninitializedParameter` / :class:`UninitializedBuffer`
until their first forward tells them the shapes; ``materialize(shape)`` then
turns them into a ``Parameter`` / ``Tensor`` in place (same object).
"""

import os
import sys
from collections import OrderedDict

from glasstorch._tensor import Tensor, _init, _wrap, new_object
from glasstorch.autograd.graph import check_inplace
from glasstorch._seam import _disabled_impl as _disabled_torch_function_impl

__all__ = ["Parameter", "UninitializedParameter", "is_lazy", "Buffer", "UninitializedBuffer", "UninitializedTensorMixin"]


def _empty(shape=(0,), device=None, dtype=None):
    import glasstorch

    return glasstorch.empty(shape, device=device, dtype=dtype)


class Parameter(Tensor):
    r"""A kind of Tensor that is to be considered a module parameter.

    Args:
        data (Tensor): parameter tensor; its array is shared, not copied.
            Default: an empty float tensor.
        requires_grad (bool, optional): if the parameter requires gradient.
            ``no_grad()`` does not change this default.  Default: ``True``

    Example::

        >>> import glasstorch as torch
        >>> w = torch.nn.Parameter(torch.ones(2) * 3)
        >>> w.is_leaf, w.requires_grad
        (True, True)
        >>> w
        Parameter containing:
        tensor([3., 3.], requires_grad=True)
    """

    # Parameters take no part in __torch_function__: ops on them return plain Tensors (torch's rule)
    __torch_function__ = _disabled_torch_function_impl

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _empty()
        self = new_object(cls)
        # A new leaf around the same array (what torch's _make_subclass does);
        # the version counter is shared, as with detach(), so in-place changes
        # through either one stay visible to the autograd checks of the other.
        _init(self, data._data)
        self._vc = data._vc
        # (torch's _make_subclass: no call a TorchFunctionMode or subclass sees, and its messages)
        if type(requires_grad) is not bool:
            raise TypeError(f"_make_subclass(): argument 'require_grad' (position 3) must be bool, "
                            f"not {type(requires_grad).__name__}")
        self._set_requires_grad(requires_grad, "Only Tensors of floating point and complex dtype can require gradients")
        return self

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, proto):
        # Hooks are not pickled (torch's rule); attributes set on the parameter are.
        state = self.__dict__
        if not state:
            return (_rebuild_parameter, (self.data, self.requires_grad, OrderedDict()))
        return (_rebuild_parameter_with_state, (self.data, self.requires_grad, OrderedDict(), dict(state)))


def _rebuild_parameter(data, requires_grad, backward_hooks):
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    param = Parameter(data, requires_grad)
    param.__dict__.update(state)
    return param


class _BufferMeta(type):
    # torch's Buffer(t) returns a plain tensor flagged ``_is_buffer``; this
    # makes ``isinstance(t, Buffer)`` recognise it.
    def __instancecheck__(self, instance) -> bool:
        if self is Buffer and isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False):
            return True
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    r"""Marks a tensor as a buffer: assigned as a module attribute it is
    registered with ``register_buffer`` (like BatchNorm's ``running_mean``).

    ``Buffer(t)`` returns ``t.detach()`` (a plain ``Tensor``) flagged as a
    buffer; ``persistent=False`` keeps it out of ``state_dict``.
    """

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = _empty()
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t


# The array of an uninitialized tensor lives in Tensor's own slot; the mixin
# below hides it behind a property that refuses to hand it to an operation.
_DATA_SLOT = Tensor.__dict__["_data"]


_OPS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ops")


def _calling_op(frame) -> str:
    """The op the user called: the outermost frame of the chain of frames in
    ``glasstorch/ops`` that led to reading the array (``mul``, not the helper
    ``operands`` that actually read it)."""
    name = frame.f_code.co_name
    while frame is not None and frame.f_code.co_filename.startswith(_OPS_DIR):
        name = frame.f_code.co_name
        frame = frame.f_back
    return name


def _uninitialized_error(cls_name: str, op: str) -> ValueError:
    return ValueError(
        f"Attempted to use an uninitialized parameter in {op}. "
        "This error happens when you are using a `LazyModule` or "
        f"explicitly manipulating `torch.nn.parameter.{cls_name}` "
        "objects. When using LazyModules Call `forward` with a dummy batch "
        "to initialize the parameters before calling torch functions"
    )


class UninitializedTensorMixin:
    r"""What ``UninitializedParameter`` and ``UninitializedBuffer`` share.

    Every operation reads a tensor's array through ``_data``; here that
    attribute raises torch's ``ValueError``, so using an uninitialized tensor
    in any op fails at once.  The few things allowed before materialisation
    (dtype, device, ``size()``, ``requires_grad``, and the conversions that
    ``Module.to``/``float``/``cuda`` apply) read the hidden empty array directly.
    """

    __slots__ = ()

    @property
    def _data(self):
        raise _uninitialized_error(type(self).__name__, _calling_op(sys._getframe(1)))

    @_data.setter
    def _data(self, value):
        _DATA_SLOT.__set__(self, value)
        self._layout_of = None

    def _placeholder(self) -> Tensor:
        """The empty tensor holding this one's dtype and device."""
        return _wrap(_DATA_SLOT.__get__(self))

    # -- allowed before materialisation ------------------------------------------------
    dtype = property(lambda self: self._placeholder().dtype)
    device = property(lambda self: self._placeholder().device)
    is_cuda = property(lambda self: self._placeholder().is_cuda)

    @property
    def data(self):
        return self._placeholder()

    @data.setter
    def data(self, value):
        # read the slot directly: ``value`` may itself be uninitialized
        _DATA_SLOT.__set__(self, _DATA_SLOT.__get__(value))
        self._layout_of = None

    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self._requires_grad = bool(value)

    def size(self, dim=None):
        return self._placeholder().size(dim)

    def is_floating_point(self):
        return self._placeholder().is_floating_point()

    def is_complex(self):
        return self._placeholder().is_complex()

    def get_device(self):
        return self._placeholder().get_device()

    def copy_(self, src, non_blocking=False):
        # allowed in torch too (its _allowed_methods): the hidden empty array takes src's values, which
        # only an empty or uninitialized src has -- load_state_dict of a lazy model's saved state (before
        # its first forward) into a lazy model copies one uninitialized parameter into another
        from glasstorch.autograd.grad_mode import is_grad_enabled
        check_inplace(self, self.requires_grad and is_grad_enabled())   # the leaf check comes first, as torch's
        source = src._placeholder() if isinstance(src, UninitializedTensorMixin) else src
        self._placeholder().copy_(source, non_blocking)
        return self

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. "
            "This error usually happens in `load_state_dict` when trying to load "
            "an uninitialized parameter into an initialized one. "
            "Call `forward` to initialize the parameters before accessing their attributes."
        )

    def materialize(self, shape, device=None, dtype=None) -> None:
        r"""Give the tensor its shape: allocate an (uninitialised) array of ``shape``
        with this tensor's dtype and device (or those given), and turn this
        object into a ``cls_to_become`` (``Parameter`` / ``Tensor``) in place.

        Args:
            shape (tuple): the shape for the materialized tensor.
            device (:class:`torch.device`): the desired device. Optional.
            dtype (:class:`torch.dtype`): the desired floating point type. Optional.
        """
        if device is None:
            device = self.data.device
        if dtype is None:
            dtype = self.data.dtype
        self.data = _empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    def share_memory_(self):
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. "
            "Call `forward` to initialize the parameters before calling "
            "`module.share_memory()`."
        )

    def __repr__(self) -> str:
        return f"<{self.__class__.__name__}>"

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad, self.data.device, self.data.dtype)
        memo[id(self)] = result
        return result


def _converting(name):
    """A conversion (``to``, ``float``, ``cuda``...) allowed on an uninitialized
    tensor: it converts the empty placeholder and returns an uninitialized tensor
    of the same kind holding it (``self`` when nothing changes), so that
    ``Module._apply`` keeps lazy parameters and buffers lazy and ``materialize``
    later uses the new dtype and device."""

    def method(self, *args, **kwargs):
        converted = getattr(self._placeholder(), name)(*args, **kwargs)
        if not isinstance(converted, Tensor):  # type() without arguments: the type name
            return converted
        array = _DATA_SLOT.__get__(converted)
        if array is _DATA_SLOT.__get__(self):
            return self
        out = new_object(type(self))
        _init(out, array, self._requires_grad)
        out.__dict__.update(self.__dict__)  # a buffer's `persistent` flag
        return out

    method.__name__ = name
    return method


for _name in ("to", "type", "cpu", "cuda", "half", "float", "double", "bfloat16", "char", "short", "int", "long"):
    setattr(UninitializedTensorMixin, _name, _converting(_name))
del _name


def is_lazy(param) -> bool:
    """Whether ``param`` is an ``UninitializedParameter`` or ``UninitializedBuffer``."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    r"""A parameter whose shape is not known yet (held by lazy modules).

    Only its dtype, device and ``requires_grad`` exist; using it in an
    operation raises ``ValueError`` and reading ``.shape`` raises
    ``RuntimeError``.  ``materialize(shape)`` turns it into a ``Parameter``.

    Example::

        >>> from glasstorch.nn.parameter import UninitializedParameter
        >>> p = UninitializedParameter()
        >>> p
        <UninitializedParameter>
        >>> p.materialize((2, 3))
        >>> type(p).__name__, p.shape
        ('Parameter', torch.Size([2, 3]))
    """

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        self = new_object(cls)
        _init(self, _empty((0,), device=device, dtype=dtype)._data, requires_grad)
        return self


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    r"""A buffer whose shape is not known yet; ``materialize(shape)`` turns it
    into a plain ``Tensor``."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        self = new_object(cls)
        _init(self, _empty((0,), device=device, dtype=dtype)._data, requires_grad)
        self.persistent = persistent
        self._is_buffer = True
        return self
