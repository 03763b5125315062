"""torch.autograd.Function: user-defined ops on the same Node mechanism as the built-in ones.

``ctx`` *is* the node that ``apply`` records (as in torch): ``y.grad_fn`` of ``Exp.apply(x)`` is
an ``ExpBackward`` whose ``backward`` calls ``Exp.backward(ctx, grad)``.
"""
import functools

from . import grad_mode
from .engine import _Tensor   # (glasstorch._tensor imports this package: the class is looked up at first use)
from .graph import Node, connect, rebase_history, set_history, version_of, IN_CUSTOM_FUNCTION

_state = grad_mode._state


class FunctionCtx:
    """What forward can tell backward: saved tensors, non-differentiable outputs, dirty inputs."""

    def save_for_backward(self, *tensors):
        for t in tensors:
            if t is not None and not _is_tensor(t):
                raise TypeError("save_for_backward can only save variables, but argument 0 is of type "
                                f"{type(t).__name__}")
        self._to_save = tensors

    def save_for_forward(self, *tensors):
        self._to_save_fwd = tensors

    def mark_non_differentiable(self, *args):
        self._non_differentiable = set(map(id, args))

    def mark_dirty(self, *args):
        self._dirty = set(map(id, args))

    def set_materialize_grads(self, value):
        self.materialize_grads = value


def _is_tensor(x):
    return isinstance(x, _Tensor())


class BackwardCFunction(Node, FunctionCtx):
    """The node (and ctx) of a custom Function."""
    _forward_cls = None
    materialize_grads = True
    _to_save = ()
    _non_differentiable = frozenset()
    _dirty = frozenset()
    needs_input_grad = ()

    @property
    def saved_tensors(self):
        return self._unpack_saved()

    saved_variables = saved_tensors

    def backward(self, *grads):
        if self.materialize_grads:
            grads = tuple(g if g is not None else self._zeros_for(i) for i, g in enumerate(grads))
        result = self._forward_cls.backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n_args = len(self._arg_is_tensor)
        if len(result) > n_args and all(r is None for r in result[n_args:]):
            result = result[:n_args]  # (torch allows trailing Nones)
        if len(result) != n_args:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients "
                               f"(expected {n_args}, got {len(result)})")
        return tuple(_checked_gradient(self, i, r, meta)
                     for i, (r, meta) in enumerate(zip(result, self._input_meta_of_args)) if meta is not False)

    def _zeros_for(self, i):
        from ..ops.creation import zeros
        shape, dtype = self._output_meta[i]
        return zeros(shape, dtype=dtype)


def _checked_gradient(node, i, grad, meta):
    """torch's validate_outputs for a custom Function's gradient ``grad`` of argument ``i``: a
    tensor (or None) whose shape the input's expands to (it is summed back to the input's shape)
    and cast to the input's dtype. ``meta``: (shape, dtype) of the input, None if it needs none."""
    if grad is None or meta is None:  # (for an input needing no gradient it is passed on as is, as torch)
        return grad
    if not _is_tensor(grad):
        raise RuntimeError(f"expected Variable or None (got {type(grad).__name__})")
    shape, dtype = meta
    if grad._data.shape != shape:
        if not _expandable(shape, grad._data.shape):
            raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index {i} - got "
                               f"{list(grad._data.shape)} but expected shape compatible with {list(shape)}")
        from .engine import _sum_to
        grad = _sum_to(grad, shape)
    if grad._data.dtype != dtype:
        grad = grad.to(_dtype_of(dtype))
    return grad


def _expandable(shape, target):
    """Whether ``shape`` broadcasts to ``target`` (torch's is_expandable_to)."""
    if len(shape) > len(target):
        return False
    return all(s == t or s == 1 for s, t in zip(reversed(shape), reversed(target)))


def _dtype_of(np_dtype):
    from .._dtype import _BY_NUMPY
    return _BY_NUMPY[np_dtype]


class FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        cls._backward_cls = backward_cls
        super().__init__(name, bases, attrs)


class Function(metaclass=FunctionMeta):
    """Subclass with static ``forward(ctx, *args)`` and ``backward(ctx, *grads)``; call ``apply``."""

    def __init__(self, *args, **kwargs):
        import warnings
        warnings.warn(f"{self.__class__} should not be instantiated. Methods on autograd functions are all static, "
                      "so you should invoke them on the class itself.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please use new-style "
                           "autograd function with static forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError

    @classmethod
    def apply(cls, *args, **kwargs):
        Tensor = _Tensor()
        node = cls._backward_cls.__new__(cls._backward_cls)
        # per argument: whether it is a tensor; False (not a tensor: no gradient slot), None (a tensor needing no
        # gradient) or (shape, dtype) its gradient must have (torch checks a custom backward's results); whether
        # it needs a gradient. (One pass over the arguments: a compiled graph's call passes ~10.)
        is_tensor, meta, needs, inputs = [], [], [], []
        for a in args:
            if isinstance(a, Tensor):
                inputs.append(a)
                is_tensor.append(True)
                if a._requires_grad:
                    d = a._data
                    meta.append((d.shape, d.dtype))
                    needs.append(True)
                else:
                    meta.append(None)
                    needs.append(False)
            else:
                is_tensor.append(False)
                meta.append(False)
                needs.append(False)
        node._arg_is_tensor = is_tensor = tuple(is_tensor)
        node._input_meta_of_args = tuple(meta)
        node.needs_input_grad = needs = tuple(needs)
        inputs = tuple(inputs)
        uses_setup = cls.setup_context is not Function.setup_context
        with grad_mode.no_grad():
            if uses_setup:
                output = cls.forward(*args, **kwargs)
                cls.setup_context(node, args, output)
            else:
                output = cls.forward(node, *args, **kwargs)
        is_tuple = isinstance(output, tuple)
        outputs = output if is_tuple else (output,)
        record = _state.enabled and True in needs
        # decide differentiability on the objects forward returned, before any is replaced by an alias
        non_diff = [isinstance(o, Tensor) and id(o) in node._non_differentiable for o in outputs]
        new_outputs = []
        for o in outputs:
            if isinstance(o, Tensor) and record:
                if id(o) in node._dirty:
                    from .._tensor import bump_version
                    bump_version(o, cls.__name__)
                elif any(o is a for a in inputs):  # an input returned as-is: torch returns a view of it
                    from .._tensor import make_view
                    o = make_view(o, o._data.view(), IN_CUSTOM_FUNCTION)
                elif o._base is not None:  # a view made in forward: in-place ops on it are refused later
                    o._creation_meta = IN_CUSTOM_FUNCTION
                elif o._grad_fn is not None or o._requires_grad:
                    o = o._alias()
            new_outputs.append(o)
        if record:
            diff = tuple(o if isinstance(o, Tensor) and not nd and o._data.dtype.kind in "fc" else None
                         for o, nd in zip(new_outputs, non_diff))
            node._output_meta = tuple((o.shape, o.dtype) if isinstance(o, Tensor) else None for o in new_outputs)
            saved = tuple(node._to_save)
            # inputs modified in place (mark_dirty) take the node as their new history after it is linked
            dirty = [i for i, o in enumerate(diff) if o is not None and id(o) in node._dirty]
            linked = tuple(None if i in dirty else o for i, o in enumerate(diff))
            connect(node, inputs, linked if len(linked) > 1 or is_tuple else (linked[0] if linked[0] is not None else ()))
            for i in dirty:
                o = diff[i]
                if o._base is not None:
                    rebase_history(o, node)
                else:
                    set_history(o, node, i)
            for o in linked:
                if o is not None and o._base is not None:
                    o._attr_version = o._vc.version  # (its history is set now, as torch's set_gradient_edge)
            node.num_outputs = len(new_outputs)
            if saved:
                node._saved = saved
                node._versions_at_save = tuple(version_of(t) if t is not None else 0 for t in saved)
            for o, nd in zip(new_outputs, non_diff):
                if nd:
                    o._requires_grad = False
        else:
            node._saved = tuple(node._to_save)
            node._versions_at_save = tuple(version_of(t) if t is not None else 0 for t in node._saved)
        return tuple(new_outputs) if is_tuple else new_outputs[0]


def once_differentiable(fn):
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with grad_mode.no_grad():
            return fn(ctx, *args)
    return wrapper


class InplaceFunction(Function):
    pass


class NestedIOFunction(Function):
    pass
