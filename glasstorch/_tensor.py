"""Tensor: an array, its dtype and device, and its place in the autograd graph.

A Tensor holds

* ``_data``          the ndarray (NumPy, or CuPy on a GPU); views share it with their base;
* ``_requires_grad`` whether gradients flow to it;
* ``_grad_fn``       the Node that made it (None for a leaf) and ``_output_nr``, which of that
                     node's outputs it is;
* ``_grad``          the accumulated gradient of a leaf (or of a non-leaf after retain_grad());
* ``_vc``            the version counter, shared with every view of the same data, bumped by
                     every in-place op so backward can tell a saved value was overwritten. It is
                     made when first needed (``_vc`` is a property over the slot ``_counter``,
                     None until then: most tensors are never written, viewed or saved, and
                     their version is 0);
* ``_base``          for a view, the tensor whose memory it shares (always a non-view: the root),
                     with ``_creation_meta`` (how it was made) and ``_attr_version`` (the version
                     at which its ``grad_fn`` was last set: see ``autograd.graph.view_grad_fn``).

The op methods (``add``, ``sum``, ``view``...) are defined with their derivatives in
``glasstorch/ops`` and attached to this class there; this file keeps the protocol itself.
"""
import numbers
import threading
import weakref

from . import _dtype
from ._array import xp, device_type_of, as_numpy, MetaArray, root_array, storage_offset_of
from ._array.layout import element_strides
from ._array.plain_layout import layout_of
from . import autograd
from .autograd import grad_mode
from ._seam import (seam, hold_detour, note_instance, note_subclass_with_torch_function, DisableTorchFunctionSubclass,
                    _disabled_impl, overridable, hand_as)
from .autograd.graph import (AccumulateGrad, user_frame, new_hook_dict, _add_hook, view_grad_fn,
                             sync_views_requires_grad, DEFAULT, NO_GRAD_MODE, mark_detached_in_place)
from . import _warnings

_state = grad_mode._state
_DTYPE_OF = _dtype._BY_NUMPY


class Size(tuple):
    """torch.Size: a tuple of ints with torch's repr."""

    def __repr__(self):
        return f"torch.Size({list(self)})"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))

    def __reduce__(self):
        return (Size, (tuple(self),))


class device:
    """torch.device('cpu'), device('cuda', 0) or device('cuda:0')."""
    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, int) and not isinstance(type, bool):
            type, index = "cuda", type
        elif ":" in type:
            text = type
            type, idx = type.split(":", 1)
            if not idx.isdigit():  # 'cuda:x', 'cpu:0:1', 'cpu:-1'
                raise RuntimeError(f"Invalid device string: '{text}'")
            index = int(idx)
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        if type not in ("cpu", "cuda", "meta", "mps"):
            raise RuntimeError(f"Expected one of cpu, cuda, meta, mps device type at start of device string: {type}")
        self.type = type
        self.index = index

    def __repr__(self):
        return f"device(type='{self.type}')" if self.index is None else \
            f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))

    def __enter__(self):
        """``with torch.device("meta"):`` -- factories called inside without ``device=`` make their
        tensors on this device (``ops/creation.py`` keeps the default device)."""
        from .ops.creation import _enter_device
        _enter_device(self)
        return self

    def __exit__(self, *exc_info):
        from .ops.creation import _exit_device
        _exit_device(self)


_CPU = device("cpu")
_META = device("meta")


class memory_format:
    """torch.memory_format: how an op lays out a new tensor's elements. ``preserve_format`` (what
    clone() and the ``*_like`` functions default to): as the input's, when it has no gaps;
    ``contiguous_format``: row-major. ``channels_last`` is accepted and gives row-major here."""
    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return "torch." + self._name

    def __reduce__(self):
        return self._name  # (pickled as the module-level name)


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")


class _VersionCounter:
    """Shared by a tensor and its views (and detached aliases): bumped by every in-place op.

    It also remembers which in-place op bumped it last and where (for the error message when a
    saved value was modified), and ``views``: weak references to the views made without a history
    of their own (under no_grad, or while their base did not require grad). Such a view requires
    grad exactly when its base does (torch asks the base), so when an in-place op gives the base a
    history, or detach_() takes it away, they follow (``autograd.graph.sync_views_requires_grad``).
    The fields are class-level defaults, so making one costs no __init__; but ``version`` is
    also set on each plain counter when it is made (``make_counter``, the generated record's
    saved result), before it is shared: CPython 3.11 specialises reading an instance's attribute
    (~20 instructions), not a class default read through it (~370), and every saved tensor's
    version is read when it is saved and again at the backward.

    A tensor gets its counter lazily (``make_counter``): the first in-place write, view, detached
    alias, saved result or ``_version`` read that needs the object makes it; a tensor without one
    is at version 0 (nothing has bumped it) and shares its memory with no other tensor (sharing
    makes the counter first). An inference tensor's is made with it, as it marks the tensor.
    """
    version = 0
    last_op = None
    where = None
    views = None
    prune_at = 64  # when ``views`` grows to this length, the dead references are dropped
    inference = False  # (True for an inference tensor's: _InferenceVersionCounter)


class _InferenceVersionCounter(_VersionCounter):
    """The counter of a tensor made under ``inference_mode`` (and of its views): torch's inference
    tensors keep no version (``_version`` raises) and refuse in-place writes outside inference mode."""
    inference = True

    @property
    def version(self):
        return 0

    @version.setter
    def version(self, value):
        check_inference_write(self)


class _DetachedInferenceCounter(_VersionCounter):
    """The counter of ``detach()`` or ``.data`` of an inference tensor, taken outside inference mode:
    torch's result is still an inference tensor (``is_inference()``; it may not be saved for backward
    or require grad) but has a version counter of its own, from 0, that an in-place write outside
    inference mode bumps (the write is allowed: it reaches the inference tensor's memory) and one
    inside inference mode does not. Its views are plain inference tensors again (``make_view``)."""
    inference = True
    _count = 0

    @property
    def version(self):
        return self._count

    @version.setter
    def version(self, value):
        if not _state.inference:
            self._count = value


def _inference_alias_counter():
    """The counter of ``detach()`` / ``.data`` of an inference tensor: inside inference mode the
    inference tensor's kind, outside a counting one (torch's)."""
    return _InferenceVersionCounter() if _state.inference else _DetachedInferenceCounter()


_INPLACE_ON_INFERENCE = ("Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
                         "clone to get a normal tensor before doing inplace update.See "
                         "https://github.com/pytorch/rfcs/pull/17 for more details.")


def check_inference_write(vc):
    """torch's refusal of an in-place write into an inference tensor outside inference mode (called
    before an in-place op writes; the counter's setter is the backstop)."""
    if type(vc) is _InferenceVersionCounter and not _state.inference:
        raise RuntimeError(_INPLACE_ON_INFERENCE)


def _counter_by_mode():
    """A new tensor's counter while some thread is in inference mode: this thread's mode decides
    (an inference tensor's counter now; a plain tensor's when it is first needed)."""
    return _InferenceVersionCounter() if _state.inference else None


# A new tensor's counter is None (made when needed: make_counter), but an inference tensor's, which
# marks it (``is_inference()``), is made with it. Inference mode is per thread, but reading the
# thread's state costs every new tensor; so the state is read only while some thread is in
# inference mode (``_inference_blocks`` > 0).
_inference_blocks = 0
_inference_lock = threading.Lock()


def inference_block_entered(entered):
    """``inference_mode`` (on) began (``entered=True``) or ended in some thread."""
    global _inference_blocks
    with _inference_lock:
        _inference_blocks += 1 if entered else -1
        hold_detour("inference", _inference_blocks > 0)   # (the entries' new tensors have no counter to look up)


_counter_lock = threading.Lock()


def make_counter(t):
    """``t``'s version counter, made now if it has none yet (``t._counter or make_counter(t)`` is
    the hot paths' spelling of ``t._vc``). Under a lock: two threads making a view of one fresh
    tensor at once must not give the two views different counters. (acquire/release, not ``with``:
    ~1 k instructions less.)"""
    _counter_lock.acquire()
    try:
        vc = t._counter
        if vc is None:
            vc = _VersionCounter()
            vc.version = 0      # (an instance attribute: see _VersionCounter)
            t._counter = vc
        return vc
    finally:
        _counter_lock.release()


def count_the_set(t):
    """Start ``t`` at version 1, as torch's deep copies and unpickled/loaded tensors start: torch makes
    them empty and then ``set_``s them onto their storage, and that ``set_`` is an in-place write
    (``copy.deepcopy(t)._version == 1``; a meta tensor's copy is a clone, at 0). Code that compares
    ``_version`` before and after sees the same numbers as in torch."""
    (t._counter or make_counter(t)).version = 1


def bump_version(t, op_name):
    vc = t._counter or make_counter(t)
    vc.version += 1
    vc.last_op = op_name
    f = user_frame(2)
    vc.where = (f.f_code.co_filename, f.f_lineno) if f is not None else None


def bump_versions(tensors, *op_names):
    """``bump_version(t, name)`` for each tensor and each name in turn (an optimizer's in-place update
    of all its parameters), the user's line found once: the stack walk is most of a bump's cost."""
    if not tensors:   # (SGD without momentum: no buffers -- no stack walk)
        return
    f = user_frame(2)
    where = (f.f_code.co_filename, f.f_lineno) if f is not None else None
    for t in tensors:
        vc = t._counter or make_counter(t)
        vc.version += len(op_names)
        vc.last_op = op_names[-1]
        vc.where = where


class _intercepted_property(property):
    """A Tensor property that a function mode sees (``Tensor.grad.__get__``, ``Tensor.grad.__set__``),
    named as torch's descriptors are (``func.__self__.__name__ == 'grad'``): its getter and setter
    are :func:`~glasstorch._seam.overridable`, and hand the seam these accessors."""

    def __set_name__(self, owner, name):
        self.__name__ = name
        for fn, accessor in ((self.fget, self.__get__), (self.fset, self.__set__)):
            if fn is not None and getattr(fn, "__globals__", {}).get("_seam_public") is fn:
                hand_as(fn, accessor)


def _device_type_is(name):
    """A read-only ``is_<name>`` property, on the seam: whether the tensor is on a `name` device."""
    def is_on(self):
        return self.device.type == name
    is_on.__name__, is_on.__qualname__ = f"is_{name}", f"Tensor.is_{name}"    # (compile's capture knows them by that name)
    is_on.__doc__ = f"True if the Tensor is stored on a {name} device."
    return _intercepted_property(overridable(is_on))


def _constant_flag(name, value=False):
    """A read-only flag that is the same for every glasstorch tensor (``is_sparse``: none is), on the
    seam as torch's is (its Python layers read ``is_nested`` in MultiheadAttention's forward)."""
    def flag(self):
        return value
    flag.__name__, flag.__qualname__ = name, f"Tensor.{name}"     # (compile's capture knows them by that name)
    return _intercepted_property(overridable(flag))


class _TensorHooks:
    """A Tensor's rarely set autograd fields, together in its one slot ``_hooks`` (None until one is
    set): every new Tensor writes that slot where it wrote three (~6 bytecodes an op's result, and two
    slots fewer to clear when it goes)."""
    __slots__ = ("retains_grad", "backward", "post_accumulate")

    def __init__(self):
        self.retains_grad = False
        self.backward = self.post_accumulate = None


def _hook_field(name, default):
    """The Tensor attribute that reads and writes field ``name`` of its ``_hooks`` (``default`` while
    there are none)."""
    def get(self):
        hooks = self._hooks
        return default if hooks is None else getattr(hooks, name)

    def set(self, value):
        hooks = self._hooks
        if hooks is None:
            if value is default:
                return
            hooks = self._hooks = _TensorHooks()
        setattr(hooks, name, value)
    return property(get, set)


class Tensor:
    __slots__ = ("_data", "_requires_grad", "_grad_fn", "_grad", "_output_nr", "_counter", "_base",
                 "_hooks",  # the rarely set fields (_TensorHooks), None while all are at their defaults
                 "_accumulator",
                 "_creation_meta", "_attr_version",  # set on views only (see make_view), read only when _base is set
                 # the plain-layout key of the array ``_layout_of`` (_array/plain_layout; layout_facts): valid
                 # while that is ``_data``, so a new array anywhere leaves no stale facts in use; ``_layout``
                 # is read only then
                 "_layout_of", "_layout",
                 "__weakref__", "__dict__")
    __array_priority__ = 1000  # numpy_array * tensor -> Tensor.__rmul__
    __hash__ = object.__hash__

    # whether instances take part in __torch_function__ (a subclass's own, or the default one that
    # keeps results of its type): set by __init_subclass__; such instances are counted (new_object)
    _takes_part = False

    # what retain_grad, register_hook (on a leaf) and register_post_accumulate_grad_hook set, read where
    # they are used (the engine, .grad): fields of ``_hooks``, so a new tensor writes one slot for the three
    _retains_grad = _hook_field("retains_grad", False)
    _backward_hooks = _hook_field("backward", None)
    _post_accumulate_grad_hooks = _hook_field("post_accumulate", None)

    def __new__(cls, *args, **kwargs):
        # torch.Tensor(2, 3) / torch.Tensor(Size) -> a new float tensor of that shape (zero-filled here, where
        # torch leaves it uninitialised); torch.Tensor([1, 2]) -> a float tensor holding the data.
        self = new_object(cls)
        default = _dtype.get_default_dtype().numpy_dtype
        if len(args) == 1 and not isinstance(args[0], (int, Size)):
            from .ops.creation import _to_array
            data = _to_array(args[0], _dtype.get_default_dtype())
        else:
            shape = tuple(args[0]) if len(args) == 1 and isinstance(args[0], Size) else tuple(args)
            try:
                data = xp.zeros(shape, dtype=default)
            except MemoryError as e:
                from ._checks import memory_error
                raise memory_error(e) from None
        _init(self, data)
        return self

    def __init__(self, *args, **kwargs):
        pass

    # ---- __torch_function__: how a Tensor subclass takes part in every call ----------------
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        tf = getattr(cls, "__torch_function__", None)
        # glasstorch's own subclasses that keep the default (Buffer, the lazy modules' placeholders)
        # take no part, nor those that disable it (Parameter); one with its own does (vision's TVTensor)
        impl = getattr(tf, "__func__", tf)
        cls._takes_part = impl is not _disabled_impl and \
            (cls.__module__.split(".")[0] != "glasstorch" or impl is not Tensor.__dict__["__torch_function__"].__func__)
        if cls._takes_part:
            # a subclass inherits the default __torch_function__ (results become the subclass) or
            # has its own: either way, while one of its tensors is alive every call must look at its
            # arguments' types (new_object counts them)
            note_subclass_with_torch_function()

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """The default (torch's): run ``func`` with subclasses switched off, and return its Tensor
        results as ``cls`` (``as_subclass``), so a subclass's type survives the ops applied to it."""
        if kwargs is None:
            kwargs = {}
        if not all(issubclass(cls, t) for t in types):
            return NotImplemented
        with DisableTorchFunctionSubclass():
            result = func(*args, **kwargs)
            if func in _NO_WRAP:
                return result
            return _convert(result, cls)

    @overridable
    def as_subclass(self, cls):
        """A ``cls`` tensor over the same data, still in the graph (torch's ``as_subclass``)."""
        out = new_object(cls)
        for name in ("_data", "_requires_grad", "_grad_fn", "_output_nr", "_vc", "_base", "_accumulator"):
            object.__setattr__(out, name, getattr(self, name))
        if self._base is not None:     # a view stays one: how it was made, and since when its history holds
            out._creation_meta, out._attr_version = self._creation_meta, self._attr_version
        out._grad = None
        out._hooks = None
        out._layout_of = None
        return out

    @staticmethod
    def _make_subclass(cls, data, require_grad=False, **kwargs):
        """A new leaf of type ``cls`` sharing ``data``'s array and version counter (torch's helper
        for subclasses, which nn.Parameter uses)."""
        out = new_object(cls)
        _init(out, data._data, False)
        out._vc = data._vc
        if require_grad:
            out.requires_grad_(True)
        return out

    # ---- autograd state ---------------------------------------------------------------
    @_intercepted_property
    @overridable
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    @overridable
    def requires_grad(self, value):
        self._set_requires_grad(value, "only Tensors of floating point and complex dtype can require gradients",
                                by_assignment=True)

    @overridable
    def requires_grad_(self, requires_grad=True):
        self._set_requires_grad(requires_grad, "only Tensors of floating point dtype can require gradients")
        return self

    def _set_requires_grad(self, value, dtype_message, by_assignment=False):
        if not isinstance(value, bool):  # torch's parser: a bool, not 'yes' or 1
            if by_assignment:
                raise RuntimeError("requires_grad must be a bool")
            raise TypeError(f"requires_grad_(): argument 'requires_grad' (position 1) must be bool, "
                            f"not {type(value).__name__}")
        if value and self._counter is not None and self._counter.inference and not _state.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
        if self._grad_fn is not None:
            if value and not by_assignment:
                return  # requires_grad_() on a non-leaf that already requires grad: torch's no-op
            if value:  # `t.requires_grad = True` on a non-leaf: torch refuses the assignment itself
                raise RuntimeError("you can only change requires_grad flags of leaf variables.")
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to use a "
                               "computed variable in a subgraph that doesn't require differentiation use "
                               "var_no_grad = var.detach().")
        if value and self._data.dtype.kind not in "fc" and not _dtype.is_bfloat16_numpy(self._data.dtype):
            raise RuntimeError(dtype_message)
        self._requires_grad = bool(value)
        if self._base is None and self._counter is not None and self._counter.views:
            sync_views_requires_grad(self, bool(value))  # views made earlier require grad through their base

    @_intercepted_property
    @overridable
    def grad_fn(self):
        if self._base is not None:
            return view_grad_fn(self)  # regenerated if the base or a view of it was modified in place
        return self._grad_fn

    @_intercepted_property
    @overridable
    def is_leaf(self):
        return (self._grad_fn if self._base is None else view_grad_fn(self)) is None

    @_intercepted_property
    @overridable
    def output_nr(self):
        return max(self._output_nr, 0)

    @_intercepted_property
    @overridable
    def grad(self):
        if self._grad is None and self._grad_fn is not None and not self._retains_grad:
            _warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute "
                "won't be populated during autograd.backward(). If you indeed want the .grad field to be populated "
                "for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf "
                "Tensor by mistake, make sure you access the leaf Tensor instead. See "
                "github.com/pytorch/pytorch/pull/30531 for more information.", UserWarning)
        return self._grad

    @grad.setter
    @overridable
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                                f"{type(value).__name__}")
            if value._data.shape != self._data.shape:
                raise RuntimeError(f"attempting to assign a gradient of size '{list(value._data.shape)}' to a tensor "
                                   f"of size '{list(self._data.shape)}'. Please ensure that the gradient and the "
                                   "tensor are the same size")
            if value._data.dtype != self._data.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{_dtype.cpp_name(value.dtype)}' to a tensor with "
                    f"grad_dtype '{self.dtype._legacy}'. The gradient must match the tensor's grad_dtype (defaults "
                    "to the tensor's dtype). You can set the tensor's grad_dtype attribute with a specific dtype, or "
                    "None to allow any dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor and its "
                    "gradient may break downstream systems that assume they match.")
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    @_intercepted_property
    @overridable
    def retains_grad(self):
        return self._retains_grad

    @overridable
    def retain_grad(self):
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._grad_fn is None or self._retains_grad:
            return
        fn = self.grad_fn  # (a view re-derives its history first, as in torch)
        if fn._retain_grad_hooks is None:
            fn._retain_grad_hooks = {}
        fn._retain_grad_hooks[self._output_nr] = weakref.ref(self)
        fn._hooked = True
        self._retains_grad = True

    def _grad_accumulator(self):
        acc = self._accumulator() if self._accumulator is not None else None
        if acc is None:
            acc = AccumulateGrad(self)
            self._accumulator = weakref.ref(acc)
        return acc

    @overridable
    def register_hook(self, hook):
        """hook(grad) -> None or a replacement gradient, called when this tensor's gradient is computed."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is None:
            if self._backward_hooks is None:
                self._backward_hooks = new_hook_dict()
            return _add_hook(self._backward_hooks, hook)
        fn = self.grad_fn  # (a view re-derives its history first, as in torch)
        if fn._tensor_pre_hooks is None:
            fn._tensor_pre_hooks = {}
        hooks = fn._tensor_pre_hooks.get(self._output_nr)
        if hooks is None:
            hooks = fn._tensor_pre_hooks[self._output_nr] = new_hook_dict()
        fn._hooked = True
        return _add_hook(hooks, hook)

    @overridable
    def register_post_accumulate_grad_hook(self, hook):
        """hook(tensor), called after the gradient has been accumulated into this leaf's .grad."""
        if self._grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if self._post_accumulate_grad_hooks is None:
            self._post_accumulate_grad_hooks = new_hook_dict()
        return _add_hook(self._post_accumulate_grad_hooks, hook)

    @overridable(defaults_by_keyword=True)
    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate the gradient of this tensor w.r.t. the graph leaves into their ``.grad``
        (torch.autograd.backward; ``gradient`` is needed unless this tensor is a scalar)."""
        autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    @overridable
    def detach(self):
        out = _wrap(self._data)
        vc = self._counter or make_counter(self)
        # torch: a detached tensor shares the version counter (an inference tensor has none to share)
        out._counter = _inference_alias_counter() if vc.inference else vc
        return out

    @overridable
    def detach_(self):
        if self._base is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead. If you are using "
                               "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as "
                               "True, gradients are views of DDP buckets, and hence detach_() cannot be called on "
                               "these gradients. To fix this error, please refer to the Optimizer.zero_grad() "
                               "function in torch/optim/optimizer.py as the solution.")
        if self._grad_fn is not None:
            mark_detached_in_place(self)  # (a node that saved it with its history refuses it now)
        self._requires_grad = False
        if self._counter is not None and self._counter.views:
            sync_views_requires_grad(self, False)
        return self

    @_intercepted_property
    @overridable
    def data(self):
        out = _wrap(self._data)  # a new version counter: torch's .data escapes version tracking
        vc = self._counter
        if vc is not None and vc.inference:     # (still an inference tensor: torch's)
            out._counter = _inference_alias_counter()
        return out

    @data.setter
    @overridable
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be a Tensor, not {type(value).__name__}")
        self._data = value._data
        self._layout_of = None      # (no old array kept alive for its facts' sake)

    # _alias(): same data and version counter, no history (for saving a result without a cycle) --
    # _wrap's assignments with the shared counter, written below (_write_constructors): every op that
    # saves its result makes one, and _wrap would make a counter only to drop it

    def _as_output_of(self, node, output_nr=0):
        out = _wrap(self._data)
        out._counter = self._counter or make_counter(self)
        out._grad_fn = node
        out._output_nr = output_nr
        out._requires_grad = True
        return out

    @overridable
    def _is_view(self):
        """Whether this tensor is a view of another (torchviz and torch's internals ask)."""
        return self._base is not None

    @_intercepted_property
    @overridable
    def _version(self):
        vc = self._counter
        if type(vc) is _InferenceVersionCounter:
            raise RuntimeError("Inference tensors do not track version counter.")
        return 0 if vc is None else vc.version

    @overridable(metadata=True)
    def is_inference(self):
        """Whether the tensor was made under ``inference_mode`` (or is a view, a detached alias or the
        ``.data`` of one that was)."""
        vc = self._counter
        return vc is not None and vc.inference

    @property
    def _vc(self):
        """The version counter, made now if the tensor has none yet (see ``make_counter``)."""
        return self._counter or make_counter(self)

    @_vc.setter
    def _vc(self, vc):
        self._counter = vc

    @property
    def _base_tensor(self):
        return self._base

    # ---- metadata ---------------------------------------------------------------------
    @_intercepted_property
    @overridable(metadata=True)
    def shape(self):
        return Size(self._data.shape)

    @overridable(metadata=True)
    def size(self, dim=None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    @_intercepted_property
    @overridable(metadata=True)
    def dtype(self):
        return _DTYPE_OF[self._data.dtype]

    @_intercepted_property
    @overridable(metadata=True)
    def device(self):
        data = self._data
        if type(data) is xp.ndarray:
            return _CPU
        return _META if type(data) is MetaArray else device(device_type_of(data), 0)

    # the devices' flags, as torch has them (programs test ``input.is_cuda or input.is_xpu``)
    is_cuda, is_cpu, is_xpu, is_mps, is_ipu, is_xla, is_maia, is_mtia, is_vulkan = (
        _device_type_is(name) for name in ("cuda", "cpu", "xpu", "mps", "ipu", "xla", "maia", "mtia", "vulkan"))
    is_sparse, is_sparse_csr, is_nested, is_mkldnn, is_quantized = (
        _constant_flag(name) for name in ("is_sparse", "is_sparse_csr", "is_nested", "is_mkldnn", "is_quantized"))
    layout = _constant_flag("layout", "torch.strided")

    @_intercepted_property
    @overridable
    def is_meta(self):
        """True if the Tensor is a meta tensor: a shape, dtype and strides with no data."""
        return type(self._data) is MetaArray

    @overridable(metadata=True)
    def get_device(self):
        return -1 if self.device.type in ("cpu", "meta") else 0

    @overridable(metadata=True)
    def dim(self):
        return self._data.ndim

    ndimension = dim

    @_intercepted_property
    @overridable(metadata=True)
    def ndim(self):
        return self._data.ndim

    @overridable(metadata=True)
    def numel(self):
        return self._data.size

    nelement = numel

    @overridable(metadata=True)
    def element_size(self):
        return self._data.itemsize

    @_intercepted_property
    @overridable
    def itemsize(self):
        return self._data.itemsize

    @_intercepted_property
    @overridable
    def nbytes(self):
        return self._data.nbytes

    @overridable(metadata=True)
    def stride(self, dim=None):
        d = self._data
        st = element_strides(d.shape, d.strides, d.itemsize)
        return st if dim is None else st[_wrap_dim(dim, self._data.ndim)]

    @overridable(metadata=True)
    def storage_offset(self):
        return storage_offset_of(self._data)

    @overridable(metadata=True)
    def is_contiguous(self, *, memory_format=None):   # (keyword-only, as torch's)
        return bool(self._data.flags.c_contiguous)

    @overridable(metadata=True)
    def data_ptr(self):
        d = self._data
        return d.__array_interface__["data"][0] if type(d) is xp.ndarray else 0 if type(d) is MetaArray else \
            int(d.data.ptr)

    def untyped_storage(self):
        raise NotImplementedError("glasstorch tensors have no separate storage object; use data_ptr()")

    @overridable(metadata=True)
    def is_floating_point(self):
        return self._data.dtype.kind == "f" or self.dtype is _dtype.bfloat16

    @overridable(metadata=True)
    def is_complex(self):
        return self._data.dtype.kind == "c"

    @overridable(defaults_by_keyword=True)
    def type(self, dtype=None, non_blocking=False, **kwargs):
        """The legacy type name (``'torch.FloatTensor'``), or a copy converted to ``dtype``.

        ``dtype`` may be a dtype, a legacy type (``torch.cuda.DoubleTensor``) or its name.
        """
        if dtype is None:
            d = self.dtype
            return ("torch.cuda." if self.is_cuda else "torch.") + d._legacy + "Tensor"
        device = None
        if isinstance(dtype, str):
            from ._legacy_types import legacy_type_from_string
            dtype, device = legacy_type_from_string(dtype)
        elif dtype is Tensor:           # torch.Tensor itself: the default dtype
            dtype, device = _dtype.get_default_dtype(), "cpu"
        elif isinstance(dtype, type):   # a legacy type: torch.FloatTensor, torch.cuda.LongTensor
            dtype, device = dtype.dtype, dtype._device_type
        try:
            return self.to(dtype=dtype, device=device, non_blocking=non_blocking)
        except AssertionError as e:  # no CUDA: .to('cuda') is torch's AssertionError, .type(cuda type) its RuntimeError
            raise RuntimeError(str(e)) from None

    @overridable
    def __contains__(self, element):
        """``x in t``: whether any element of ``t`` equals ``x`` (a number or a tensor)."""
        if not isinstance(element, (Tensor, numbers.Number)):
            raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a "
                               f"{type(element)}.")
        return bool((self == element).any())

    @overridable(metadata=True)
    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    # ---- conversion ---------------------------------------------------------------------
    @overridable(defaults_by_keyword=True)
    def numpy(self, force=False):
        if self._requires_grad and _state.enabled and not force:   # (under no_grad torch lets it through)
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                               "instead.")
        if type(self._data) is not xp.ndarray and not force:
            raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use Tensor.cpu() to copy the "
                            "tensor to host memory first.")
        # (a view: the memory is the tensor's, the array object the caller's own -- torch's ndarray is
        # a new object too, and ``n.shape = ...`` must not reshape the tensor: see Tensor._layout_of)
        return _numpy_view(self._data)

    def __array__(self, dtype=None, copy=None):
        if seam.on:
            return seam.torch_function(Tensor.__array__, (self, dtype), {})
        if self._requires_grad and _state.enabled:  # np.asarray(t) is t.numpy(): torch refuses to let the graph
            # be bypassed -- while grad mode is on (gpytorch's plots read predictions under no_grad)
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                               "instead.")
        a = _numpy_view(self._data)
        return a if dtype is None else a.astype(dtype)

    def __array_wrap__(self, array, context=None, return_scalar=False):
        """What a NumPy ufunc on a tensor returns (``np.exp(t)``, ``np.add(t, arr)``, ``np.isnan(t)``):
        the result as a Tensor sharing its memory, as torch's ``__array_wrap__`` gives -- a bool result
        as uint8 (torch's old workaround, kept), a 0-dim one as a 0-dim tensor."""
        if seam.on:
            return seam.torch_function(Tensor.__array_wrap__, (self,), {"array": array})
        if array.dtype == bool:
            array = array.astype("uint8")
        from .ops.creation import from_numpy
        return from_numpy(xp.asarray(array))

    @overridable
    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        if type(self._data) is MetaArray:
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        return self._data.reshape(()).item() if self.dtype is not _dtype.bfloat16 else float(self._data.reshape(()))

    @overridable
    def tolist(self):
        a = as_numpy(self._data)
        if self.dtype is _dtype.bfloat16:
            a = a.astype("float32")
        return a.tolist()

    @overridable
    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        if type(self._data) is MetaArray:
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        return bool(self._data)

    @overridable
    def __float__(self):
        return float(self._scalar())

    @overridable
    def __int__(self):
        return int(self._scalar())

    def _scalar(self):
        """float(t), int(t): Python's conversions raise ValueError for a tensor of several elements."""
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self.item()

    @overridable
    def __index__(self):
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    @overridable
    def __complex__(self):
        return complex(self.item())

    def __format__(self, spec):
        if self._data.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    @overridable
    def __repr__(self, *, tensor_contents=None):
        from ._tensor_str import tensor_repr
        return tensor_repr(self)

    def __str__(self):
        return self.__repr__()  # (a subclass's repr: str(parameter) starts "Parameter containing:")

    @overridable    # (torch's: a mode is handed copy.deepcopy(t) as Tensor.__deepcopy__(t, memo))
    def __deepcopy__(self, memo):
        if not self.is_leaf:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                               "protocol at the moment.  If you were attempting to deepcopy a module, this may be "
                               "because of a torch.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        if id(self) in memo:
            return memo[id(self)]
        if type(self) is not Tensor and type(self.new_empty(())) is not type(self):
            # (torch makes a subclass's copy with new_empty, handed on through __torch_function__ with
            # subclasses disabled: it gives a plain tensor unless the subclass overrides new_empty)
            raise RuntimeError(_SUBCLASS_DEEPCOPY)
        new = new_object(type(self))
        _init(new, _deep_copied_array(self._data, memo), self._requires_grad)
        if type(self._data) is not MetaArray:   # (torch copies a meta tensor by a clone: no set_, version 0)
            count_the_set(new)
        if self._grad is not None:
            new._grad = self._grad.__deepcopy__(memo)
        if hasattr(self, "__dict__") and self.__dict__:
            import copy
            new.__dict__.update(copy.deepcopy(self.__dict__, memo))
        memo[id(self)] = new
        return new

    def __reduce_ex__(self, proto):
        # torch hands a subclass's pickling to __torch_function__ (a plain Tensor takes its fast
        # path, which a mode does not see as one call)
        if type(self) is not Tensor and seam.on:
            return seam.torch_function(Tensor.__reduce_ex__, (self, proto), {})
        return (_rebuild_tensor, (as_numpy(self._data), self._requires_grad, type(self)))

    def __setstate__(self, state):
        pass


_SUBCLASS_DEEPCOPY = ("The default implementation of __deepcopy__() for non-wrapper subclasses only works for subclass "
                      "types that implement new_empty() and for which that function returns another instance of the "
                      "same subclass. You should either properly implement new_empty() for your subclass or override "
                      "__deepcopy__() if it is intended behavior for new_empty() to return an instance of a different "
                      "type.")


def _deep_copied_array(d, memo):
    """``d``'s array in a deep copy. torch deep-copies a tensor's storage through the memo, so tensors
    that share memory share it in the copy too (``deepcopy([x, x[1:]])``: writing into the second
    copy changes the first): the memory ``d`` views is copied once per deepcopy, and ``d``'s copy is
    a view of that copy with ``d``'s offset and strides (torch's ``set_`` onto the copied storage)."""
    if type(d) is not xp.ndarray:
        return d.copy()
    root = root_array(d)
    if not (root.flags.c_contiguous or root.flags.f_contiguous):   # (no flat memory to copy)
        return d.copy()
    key = ("glasstorch deep-copied memory", id(root))   # (keyed apart from the memo's object ids)
    copied = memo.get(key)
    if copied is None:
        copied = memo[key] = root.copy(order="K")   # (the same layout: C or F, as the memory was)
        if d is root:
            return copied
    flat = copied.ravel(order="K")                  # (a view: the copy's memory in order)
    offset = d.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return xp.ndarray(d.shape, d.dtype, buffer=flat, offset=offset, strides=d.strides)


def _convert(result, cls):
    """The Tensors in ``result`` as ``cls`` (what the default __torch_function__ returns)."""
    if cls is Tensor:
        return result
    if isinstance(result, Tensor) and not isinstance(result, cls):
        return result.as_subclass(cls)
    if isinstance(result, (tuple, list)):
        # (as torch's: the type called with an iterable -- a Size, torch.return_types; a namedtuple of
        # collections', which takes its fields one by one, through its _make)
        make = getattr(type(result), "_make", type(result))
        return make(_convert(r, cls) for r in result)
    return result


# The properties torch intercepts: a mode sees ``Tensor.grad.__get__(t)``, ``Tensor.grad.__set__(t, g)``...
_GRAD, _DATA, _IS_LEAF, _REQUIRES_GRAD = (Tensor.__dict__[n] for n in ("grad", "data", "is_leaf", "requires_grad"))
_NO_WRAP = {_GRAD.__get__}   # functions whose results stay plain (torch: Tensor._base, .grad getters)


def new_object(cls):
    """A new, empty object of Tensor class ``cls`` (``object.__new__``): every instance of a subclass
    is made here, so that the seam knows when one taking part in ``__torch_function__`` is alive
    (``_seam.note_instance``). (An object given such a class by ``t.__class__ = cls`` is not seen:
    README, "Where glasstorch differs".)"""
    t = object.__new__(cls)
    if cls._takes_part:
        note_instance(t)
    return t


def _rebuild_tensor(array, requires_grad, cls=Tensor):
    t = new_object(cls)
    if type(array) is xp.ndarray:       # (unpickled: NumPy's usual dtype object, for the ops' plain case)
        array = _dtype.usual_dtype_view(array)
    _init(t, array, requires_grad)
    count_the_set(t)
    return t


_ndarray = xp.ndarray
_generic = xp.generic
_object_new = object.__new__   # (a module global: CPython 3.11 does not specialise reading an attribute of a class)
_asarray = xp.asarray


def _write_constructors():
    """``_init``, ``_wrap`` and ``Tensor._alias``: a new Tensor's fields written out (no call per field,
    nor per Tensor: ``_wrap`` is the hottest function in the package), from the one list of them,
    ``_ops_codegen.tensor_field_lines``, which the generated entries write out too."""
    from ._ops_codegen import tensor_field_lines, _compile
    by_mode = "_counter_by_mode() if _inference_blocks else None"
    source = "\n".join([
        "def _init(t, data, requires_grad=False):",
        *("    " + x for x in tensor_field_lines("t", "data", ["t._layout_of = None"], by_mode, "requires_grad")),
        "",
        "def _wrap(data):",
        "    if type(data) is not _ndarray and isinstance(data, _generic):",
        "        data = _asarray(data)  # NumPy turns 0-d results into scalars; a tensor keeps an array",
        "    t = _object_new(Tensor)",
        *("    " + x for x in tensor_field_lines("t", "data", ["t._layout_of = None"], by_mode)),
        "    return t",
        "",
        "def _alias(t):",
        "    out = _object_new(Tensor)",
        *("    " + x for x in tensor_field_lines("out", "t._data", ["out._layout_of = None"],
                                                 "t._counter or make_counter(t)")),
        "    return out",
    ]) + "\n"
    _compile(source, "<glasstorch: glasstorch._tensor constructors>", globals())
    _init.__doc__ = "Give the new object ``t`` the fields of a Tensor with no history around the array ``data``."
    _wrap.__doc__ = "A new Tensor (no history) around an array -- the constructor every op uses."
    _alias.__doc__ = "Same data and version counter, no history (for saving a result without a cycle)."
    _alias.__qualname__ = "Tensor._alias"
    for f in (_init, _wrap, _alias):
        f.__module__ = __name__


_write_constructors()
Tensor._alias = _alias
del _alias


def _numpy_view(array):
    """A NumPy array of ``array``'s memory that is not ``array`` itself (``Tensor.numpy``)."""
    out = as_numpy(array)
    return out.view() if out is array else out


def layout_facts(t):
    """The plain-layout key of ``t``'s array (``_array/plain_layout``), found now and kept on ``t``
    beside the array it is for (the one-frame entries read it: ``_ops_codegen.entry_lines``)."""
    data = t._data
    key = t._layout = layout_of(data)
    t._layout_of = data
    return key


def make_view(input, data, creation_meta=DEFAULT):
    """A new tensor over ``data`` (an array sharing ``input``'s memory) that is a view of ``input``,
    as torch's ``as_view``: the same version counter, ``_base`` the root of ``input``'s views,
    the creation meta (``creation_meta``, ``NO_GRAD_MODE`` under no_grad; a view of a view made
    under no_grad or by a multi-output op keeps its parent's), and requiring grad when the base
    does. The view op records its node after."""
    out = _wrap(data)
    vc = out._counter = input._counter or make_counter(input)
    if type(vc) is _DetachedInferenceCounter:   # (torch: a view of it keeps no version)
        vc = out._counter = _InferenceVersionCounter()
    enabled = _state.enabled
    if not enabled:
        creation_meta = NO_GRAD_MODE
    base = input._base
    if base is None:
        out._base = base = input
    else:
        out._base = base
        if creation_meta is DEFAULT:
            creation_meta = input._creation_meta  # torch's propagate_creation_meta
    out._creation_meta = creation_meta
    out._attr_version = vc.version
    if base._requires_grad:
        out._requires_grad = True
    if not (input._requires_grad and enabled):  # the view op records no history: track the base's flag
        views = vc.views
        if views is None:
            vc.views = [weakref.ref(out)]
        else:
            views.append(weakref.ref(out))
            if len(views) >= vc.prune_at:
                views[:] = [r for r in views if r() is not None]
                vc.prune_at = max(64, 2 * len(views))
    return out


def _wrap_dim(dim, ndim):
    """Normalise a possibly negative dim with torch's IndexError."""
    n = ndim if ndim > 0 else 1
    if dim < -n or dim >= n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


from . import _ops  # noqa: E402  (the op registry needs the Tensor class, which it can't import)
_ops._bind_tensor_module(Tensor, _wrap, make_view, make_counter, _VersionCounter)
