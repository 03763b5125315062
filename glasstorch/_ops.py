"""Primitive ops: one definition each, as torch's ``native_functions.yaml`` + ``derivatives.yaml``.

A primitive op is declared once, with :func:`defop`::

    mul = defop("mul.Tensor(Tensor self, Tensor other) -> Tensor",
                kernel=_mul_arrays,                      # the forward, on arrays
                node="MulBackward0",                     # the node torch records
                self=lambda grad, other: grad * other,   # one derivative formula per input,
                other=lambda grad, self: grad * self)    # reading what it names

and becomes ``aten.mul.Tensor``, an :class:`OpOverload`. That one object is

* **the op below autograd** -- called with arrays it runs the kernel and returns arrays. Backward
  formulas call ops this way, so the engine's usual backward runs on arrays, with no Tensor or
  Node made per formula step.
* **the op with autograd** -- called with Tensors it runs the kernel on their arrays, wraps the
  results (as views of an input where the schema says ``Tensor(a)``) and, when grad mode is on
  and an input requires grad, records the node: a class named as torch names it, whose saved
  values are exactly what the formulas of the inputs that need a gradient read. Formulas called
  with Tensors record nodes in turn, which is double backward (``create_graph=True``).
* **the op-level interception point** -- active TorchDispatchModes see every call, forward and
  backward, as ``aten.mul.Tensor`` (``glasstorch/_seam.py``); compile's tracer does too, and its
  generated code calls ``op.kernel`` directly.

What a formula may name (its parameters are looked up by name):

=====================  =====================================================================
``grad``               the gradient of the op's output (of its first differentiable output)
``grads``              the gradients of all outputs, a list (None where none flowed)
an input's name        that input (saved for backward, version-checked)
``result``, or the     the op's output(s) (saved without a reference cycle)
outputs' names
a parameter's name     its value (a number, a dim, a tuple...): exposed as ``_saved_<name>``
``<input>_sizes``      the input's shape, saved instead of the input (``_saved_<input>_sym_sizes``)
``<input>_strides``    its strides, in elements (``_saved_<input>_sym_strides``)
``<input>_numel``      its number of elements (``_saved_<input>_sym_numel``)
``<input>_dtype``      the input's dtype
``<input>_device``     the input's device
``<input>_geometry``   its (sizes, strides, storage offset): torch's ``TensorGeometry``
=====================  =====================================================================

A formula keyed by several inputs (``joint={("input", "weight"): f}``) returns a tuple, one
gradient per input, and may also name ``output_mask``: which of them are needed.

The registry is browsable as torch's is: ``glasstorch.ops.aten.mul.Tensor``, with ``.name()``,
``.kernel``, ``.node`` and ``._schema``.
"""
import inspect
import re
import sys
import threading

from ._seam import seam
from ._array import xp, array_types, array_errors, translate_array_error, on_new_array_type, meta as _meta
from ._array import device_rule as _device_rule
from .autograd import grad_mode
from .autograd.graph import FormulaNode, node_helpers, user_frame, MULTI_OUTPUT_NODE, DEFAULT, _GLASSTORCH_FILES
from . import _ops_codegen as _codegen

_state = grad_mode._state

_Tensor = None           # glasstorch._tensor.Tensor, bound by _tensor.py when it is imported
_wrap = None             # glasstorch._tensor._wrap
_view_of = None          # glasstorch._tensor.make_view


def _bind_tensor_module(tensor_cls, wrap, view_of, make_counter, new_counter):
    """Called once by ``_tensor.py`` (which imports this module, so it can't be imported here)."""
    global _Tensor, _wrap, _view_of
    _Tensor, _wrap, _view_of = tensor_cls, wrap, view_of
    _CALL_HELPERS.update(_Tensor=tensor_cls, _wrap=wrap, _view_of=view_of, _alias=tensor_cls._alias,
                         _make_counter=make_counter, _NewCounter=new_counter)
    _NODE_HELPERS.update(_Tensor=tensor_cls, _alias=tensor_cls._alias, _NewCounter=new_counter)


# -----------------------------------------------------------------------------------------------
# The schema: "name.overload(Tensor self, int dim=0, *, bool keepdim=False) -> Tensor"
# -----------------------------------------------------------------------------------------------
class Argument:
    # (plain attributes, not properties: ~400 schemas are read many times each while
    # ``import glasstorch`` declares the ops)
    __slots__ = ("name", "type", "default", "kwarg_only", "alias", "has_default", "is_tensor", "is_tensor_list")

    def __init__(self, name, type_, default, kwarg_only, alias):
        self.name, self.type, self.default, self.kwarg_only, self.alias = name, type_, default, kwarg_only, alias
        self.has_default = default is not _NO_DEFAULT
        tensor = type_.startswith("Tensor")
        self.is_tensor_list = tensor and type_.endswith("[]")
        self.is_tensor = tensor and not self.is_tensor_list

    def __repr__(self):
        return f"{self.type} {self.name}" + ("" if self.default is _NO_DEFAULT else f"={self.default!r}")


_NO_DEFAULT = object()
_LITERALS = {"None": None, "True": True, "False": False, "[]": (), "inf": float("inf"), "-inf": float("-inf")}


def _literal(text):
    if text in _LITERALS:
        return _LITERALS[text]
    if text.startswith("[") and text.endswith("]"):
        return tuple(_literal(t.strip()) for t in text[1:-1].split(",") if t.strip())
    if text.startswith(("'", '"')):
        return text[1:-1]
    try:
        return int(text)
    except ValueError:
        return float(text)


class Schema:
    """A parsed op signature (torch's ``FunctionSchema``, the part glasstorch needs)."""

    def __init__(self, text):
        m = re.fullmatch(_SIGNATURE, text)
        if m is None:
            raise ValueError(f"bad op schema: {text!r}")
        self.text = text
        self.name, self.overload = m.group(1), m.group(2) or "default"
        self.arguments = []
        kwarg_only = False
        for part in _split_top(m.group(3)):
            if part == "*":
                kwarg_only = True
                continue
            decl, _, default = part.partition("=")
            type_, name = decl.rsplit(None, 1)
            alias = re.search(_ALIAS, type_) if "(" in type_ else None
            self.arguments.append(Argument(name, re.sub(_ALIAS, "", type_) if alias else type_,
                                           _literal(default.strip()) if default else _NO_DEFAULT,
                                           kwarg_only, alias.group(1) if alias else None))
        # an argument written in place: Tensor(a!)
        self.mutates = "!" in m.group(3) and re.search(_WRITTEN, m.group(3)) is not None
        ret = m.group(4)
        self.returns_list = ret.replace(" ", "").endswith("[]") and not ret.startswith("(")
        parts = _split_top(ret[1:-1]) if ret.startswith("(") else [ret]
        self.returns = []       # [(name or None, alias or None)]
        for i, part in enumerate(parts):
            bits = part.split()
            alias = re.search(_ALIAS, bits[0])
            self.returns.append((bits[1] if len(bits) > 1 else None, alias.group(1) if alias else None))
        self.returns_tuple = ret.startswith("(")

    def __str__(self):
        return self.text


# (the patterns as text: ``re`` compiles each at the first schema parsed and keeps it; compiling them at
# import, when no schema is parsed yet, cost ~2% of ``import glasstorch``)
_SIGNATURE = r"\s*([\w]+)(?:\.(\w+))?\((.*)\)\s*->\s*(.+?)\s*"
_WRITTEN = r"\(\w!\)"
# an alias annotation: Tensor(a) a view of input a, Tensor(a!) written in place, Tensor(a -> *) an input whose
# aliases are the elements of a returned list (split's, unbind's)
_ALIAS = r"\((\w)(?:!| -> \*)?\)"


def _split_top(text):
    """Split at commas that are not inside brackets."""
    if "(" not in text and "[" not in text:     # most schemas: no nesting to track
        return [p for p in (part.strip() for part in text.split(",")) if p]
    parts, depth, start = [], 0, 0
    for m in re.finditer(_PUNCTUATION, text):
        ch = m.group()
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif depth == 0:
            parts.append(text[start:m.start()].strip())
            start = m.end()
    if text[start:].strip():
        parts.append(text[start:].strip())
    return parts


_PUNCTUATION = r"[,()\[\]]"


# -----------------------------------------------------------------------------------------------
# OpOverload: one primitive op
# -----------------------------------------------------------------------------------------------
class _Declared:
    """An attribute an op has once its declaration is read (``_schema``, ``node``...; see
    :func:`defop`): the first read declares the op (:func:`_declare`), which sets the attribute on
    it; the op's own value then shadows this descriptor (it has no ``__set__``), so later reads find
    it in the op's ``__dict__`` and call nothing."""

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, op, owner=None):
        if op is None:
            return self
        if _declare(op):
            try:
                return op.__dict__[self.name]
            except KeyError:    # (an attribute of in-place variants only: ``_saves_original``)
                pass
        raise AttributeError(f"'OpOverload' object has no attribute '{self.name}'")


class _GeneratedCall:
    """``op._source`` (and the other attributes :func:`_ops_codegen.install_call` sets): the first
    read generates the op's call, which sets them on the op, shadowing this descriptor."""

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, op, owner=None):
        if op is None:
            return self
        _declare(op)
        _codegen.install_call(op, _CALL_HELPERS)
        return op.__dict__[self.name]


class OpOverload:
    """``aten.<name>.<overload>``: a primitive op -- its kernel, its derivative, its interception.

    Call it with Tensors (autograd records its node) or with arrays (the kernel alone).

    An op is made by :func:`defop` with its declaration unread; the first call, or the first read of
    an attribute the declaration gives (``op._schema``, ``op.node``: the :class:`_Declared`
    descriptors below), reads it (:func:`_declare`): ``import glasstorch`` declares ~500 ops, of
    which a program calls a few dozen. Its call is generated at its first call
    (``_ops_codegen.install_call``). One class throughout: nothing changes an op's class.

    Calling an op calls what its ``__call__`` slot holds, as :class:`OpOverloadPacket` does (Python
    looks ``__call__`` up on the type, and finds the slot's descriptor there, which reads the
    callable from the op: C code, no frame of the op's): ``_first_call`` bound to the op until its
    first call, then the generated call bound to it (``op._call``). So each op has its own call
    without a class of its own, and ``op(x, y)`` costs one frame, the generated one.
    """
    __slots__ = ("__call__", "__dict__", "__weakref__")

    # what the declaration gives (set by _declare_from, through _fill)
    _schema, kernel, node = _Declared(), _Declared(), _Declared()
    _arg_names, _arg_index, _defaults = _Declared(), _Declared(), _Declared()
    _tensor_positions, _list_positions, _view_of, _makes_views = _Declared(), _Declared(), _Declared(), _Declared()
    _returns_tuple, _returns_list, _mutates, _writes_out = _Declared(), _Declared(), _Declared(), _Declared()
    _inplace, _functional, _may_overlap, _refuse_aliases = _Declared(), _Declared(), _Declared(), _Declared()
    _saves_original, _plain = _Declared(), _Declared()
    # what the generated call gives (set by _ops_codegen.install_call)
    _source, _namespace = _GeneratedCall(), _GeneratedCall()
    _declared = False

    def __init__(self, name, overload, declaration):
        self.__name__ = self.__qualname__ = f"{name}.{overload}"
        self.__module__ = "torch._ops.aten"
        self._overloadpacket = None
        self._declaration = declaration
        if declaration[1] is not None and declaration[-1] is None:
            # (read by declarations of other ops: tril_ wraps tril's; an op with a plain case has its
            # kernel written when it is declared, see defop)
            self.kernel = declaration[1]
        self.__call__ = self._first_call

    def _fill(self, schema, kernel, node_cls):
        """The attributes the declaration gives (from ``_declare_from``)."""
        self._schema = schema
        self.kernel = kernel
        self.node = node_cls               # the Node class recorded (None: not differentiable)
        args = schema.arguments
        self._arg_names = tuple(a.name for a in args)
        self._arg_index = {a.name: i for i, a in enumerate(args)}
        self._defaults = tuple(a.default for a in args)
        tensors, lists, alias_of = [], [], {}
        for i, a in enumerate(args):
            if a.is_tensor:
                tensors.append(i)
            elif a.is_tensor_list:
                lists.append(i)
            if a.alias is not None:
                alias_of[a.alias] = i
        self._tensor_positions, self._list_positions = tuple(tensors), tuple(lists)
        # an output that aliases an input (a view): the input's position, per output
        self._view_of = tuple(alias_of.get(alias) if alias else None for _, alias in schema.returns)
        self._makes_views = any(v is not None for v in self._view_of)
        self._returns_tuple = schema.returns_tuple
        self._returns_list = schema.returns_list
        self._mutates = schema.mutates
        # an in-place op (``defop(..., inplace_of=functional)`` or ``inplace=True``): its out-of-place
        # twin, whose node and formulas it records (None: its own), and torch's memory rules for its
        # write (see ops/_op._check_inplace)
        self._inplace = False
        self._functional = None
        self._may_overlap, self._refuse_aliases = False, "partial"
        # an out= overload (``zeros.out``: its last argument ``*, Tensor(a!) out``, which it returns):
        # the kernel computes the values in out's dtype and on its device, the call writes them into
        # ``out`` (ops/_op.run_out_op)
        self._writes_out = bool(args) and args[-1].name == "out" and args[-1].kwarg_only and schema.mutates \
            and schema.returns == [(None, args[-1].alias)]

    def name(self):
        return f"aten::{self.__name__}"

    def __deepcopy__(self, memo=None):
        return self     # (torch's: an op is one object; a deep-copied graph calls the same ops)

    def __repr__(self):
        return f"aten.{self.__name__}"

    def __hash__(self):
        return id(self)

    @property
    def overloadpacket(self):
        return self._overloadpacket

    @property
    def _opname(self):
        return self._schema.name

    # The call is generated per op (``_ops_codegen.op_call_source``): see ``op._source``. Until the
    # op's first call, these two stand in (``_first_call`` in the ``__call__`` slot, ``_call`` as the
    # class's method): they declare the op and generate its call (``_ops_codegen.install_call``
    # binds it as ``op._call`` and puts it in the slot), then defer to it.
    def _first_call(self, *args, **kwargs):
        _declare(self)
        _codegen.install_call(self, _CALL_HELPERS)
        return self(*args, **kwargs)

    def _call(self, *args, **kwargs):
        _declare(self)
        _codegen.install_call(self, _CALL_HELPERS)     # (it binds the generated call as ``self._call``)
        return self._call(*args, **kwargs)

    def _split_args(self, args):
        """``args`` (every argument, in schema order) as a call passes them: (positional, kwargs)."""
        kwargs = {a.name: v for a, v in zip(self._schema.arguments, args) if a.kwarg_only}
        positional = tuple(v for a, v in zip(self._schema.arguments, args) if not a.kwarg_only)
        return positional, kwargs

    def _args_for_mode(self, args):
        """``args`` (every argument, in schema order) as torch's dispatcher hands them to a Python
        mode (``parseIValuesToPyArgsKwargs``): keyword-only ones only where they differ from their
        default, positional ones up to the last that differs from its default, and a list argument
        (``int[]``, ``Tensor[]``) as a list. Returns (positional, kwargs)."""
        positional, kwargs, end = [], {}, 0
        for a, v in zip(self._schema.arguments, args):
            if type(v) is tuple and a.type.rstrip("?").endswith("]"):
                v = list(v)
            if a.kwarg_only:
                if not (a.has_default and _is_default(v, a.default)):
                    kwargs[a.name] = v
            else:
                positional.append(v)
                if not (a.has_default and _is_default(v, a.default)):
                    end = len(positional)
        return tuple(positional[:end]), kwargs

    def _dispatch_below_autograd(self, args):
        """Hand the call to the innermost TorchDispatchMode, with grad mode off: the mode runs below
        autograd, so the ops it calls record nothing. Returns what the mode returned."""
        positional, kwargs = self._args_for_mode(args)
        enabled = _state.enabled
        _state.enabled = False
        try:
            return seam.torch_dispatch(self, positional, kwargs)
        finally:
            _state.enabled = enabled

    def _dispatched(self, args):
        """The call as a TorchDispatchMode sees it: below autograd; the node is recorded around
        whatever the mode returns. ``args``: every argument, in schema order."""
        if seam.autocast is not None:   # CPU autocast: torch's Autocast key, above autograd
            from .amp.autocast_mode import autocast_call
            return autocast_call(self, args)
        enabled = _state.enabled
        outputs = self._dispatch_below_autograd(args)
        if enabled and self.node is not None:
            inputs = []
            for i in self.node._edge_positions:
                a = args[i]
                if isinstance(a, (list, tuple)):
                    inputs.extend(x if isinstance(x, _Tensor) else None for x in a)
                else:
                    inputs.append(a if isinstance(a, _Tensor) else None)
            if any(t is not None and t._requires_grad for t in inputs):
                self.node._record(self, args, inputs, outputs)
        if enabled and self._makes_views:
            _restore_view_meta(self, args, outputs)
        return outputs


def _is_default(value, default):
    """Whether argument ``value`` is its schema ``default`` as torch compares IValues: same kind
    (``1`` is not ``True``; ``1.0`` is not ``1``), same value; a list equal element by element."""
    if value is default:
        return True
    if isinstance(value, (list, tuple)):
        return isinstance(default, tuple) and len(value) == len(default) and \
            all(_is_default(v, d) for v, d in zip(value, default))
    return type(value) is type(default) and type(value) in (bool, int, float, str) and value == default


def _restore_view_meta(op, args, outputs):
    """The views a dispatch mode's call made were made below autograd, with grad mode off, so
    ``make_view`` marked them as made under no_grad; autograd was on around the op: give them the
    creation meta they have without a mode (an in-place op on them is then allowed, as in torch)."""
    multi = op._returns_list or op._returns_tuple
    for k, out in enumerate(outputs if multi else (outputs,)):
        i = op._view_of[0] if op._returns_list else op._view_of[k]
        if i is None or not isinstance(out, _Tensor) or out._base is None:
            continue
        source = args[i]
        out._creation_meta = MULTI_OUTPUT_NODE if multi else \
            source._creation_meta if source._base is not None else DEFAULT


_FLOAT64 = xp.dtype("float64")


def _narrow_0d(result, inputs):
    """A 0-d float64 kernel result whose floating inputs were all narrower: NumPy 1.x's value-based
    casting widened it (a 0-d float32 times a Python float); torch keeps the inputs' type. Only
    called under NumPy 1.x, by the generated op calls."""
    narrow = None
    for a in inputs:
        dt = getattr(a, "dtype", None)
        if dt is None or getattr(a, "ndim", 0):
            continue                    # (a non-0-d input: NumPy's promotion was not value-based)
        if dt.kind == "f" or dt.name == "bfloat16":
            if dt == _FLOAT64:
                return result
            narrow = dt if narrow is None or dt.itemsize > narrow.itemsize else narrow
    return result if narrow is None else result.astype(narrow)


def _autograd_first(op, args):
    """Called where an op's kernel raised: raise first what torch's autograd layer would have.
    torch's autograd kernel of an op runs before the op's kernel; when the op records (grad mode on,
    a differentiable input requires grad) it reads the grad_fn of each such input to link the new
    node, which raises for a view made under no_grad whose base was modified in place since (an
    empty one among them: ``v.max()`` then says so, not that an empty tensor has no maximum).
    glasstorch reads them when recording, after its kernel: the common path, which succeeds, pays
    nothing for this order."""
    if not _state.enabled:
        return
    tensor = _CALL_HELPERS["_Tensor"]
    for i in op.node._edge_positions:
        arg = args[i]
        for t in arg if isinstance(arg, (list, tuple)) else (arg,):
            if isinstance(t, tensor) and t._requires_grad:
                t.grad_fn   # (raises as torch's does)


_ARRAY_TYPES = array_types()
_ARRAY_ERRORS = array_errors()
# the names the generated code uses (see _ops_codegen)
_CALL_HELPERS = {"seam": seam, "_state": _state, "_main_grad": grad_mode.main_grad, "_main_mark": grad_mode.main_mark,
                 "_ARRAY_TYPES": _ARRAY_TYPES, "_ARRAY_ERRORS": _ARRAY_ERRORS,
                 "_translate": translate_array_error, "_meta_touched": _meta.touched,
                 "_settle": _meta.settle, "_devices": _device_rule.state, "_check_devices": _device_rule.check, "_narrow_0d": _narrow_0d, "_FLOAT64": _FLOAT64,
                 "_FLOAT32": xp.dtype("float32"), "_ndarray": xp.ndarray, "_generic": xp.generic, "_MULTI_OUTPUT_NODE": MULTI_OUTPUT_NODE,
                 "_user_frame": user_frame, "_autograd_first": _autograd_first,
                 "_getframe": sys._getframe, "_GLASSTORCH_FILES": _GLASSTORCH_FILES}
_NODE_HELPERS = node_helpers()
_CALL_HELPERS.update(_NODE_HELPERS)      # (an op's generated call records its node inline: _ops_codegen.record_lines)


def _bind_inplace_helpers(run_inplace, check_no_overlap, check_aliases, write_into, run_out):
    """Called once by ``ops/_op.py`` (which holds torch's in-place rules and imports ``_tensor``,
    which imports this module): what an in-place variant's generated call uses -- the path that
    checks everything and records or dispatches, the memory checks of the common path -- and what
    an out= overload's uses (``run_out``)."""
    _CALL_HELPERS.update(_run_inplace=run_inplace, _check_no_overlap=check_no_overlap,
                         _check_aliases=check_aliases, _write_into=write_into, _run_out=run_out)


class OpOverloadPacket:
    """``aten.<name>``: the overloads of one op. Calling it calls the ``default`` overload (or the
    first one declared)."""

    # Calling the packet calls what its ``__call__`` slot holds: its first overload's generated call,
    # bound (``op._call``: until the op's first call ``OpOverload._call`` stands in, which generates
    # it and hands the packet the generated one, ``_ops_codegen.install_call``). Python looks
    # ``__call__`` up on the type, and finds the slot's descriptor there, which reads the bound call
    # from the packet (C code, no frame of the packet's): ``aten.mm(grad, other)`` costs one frame,
    # the generated one. Backward formulas on arrays call packets, and a ``def __call__(self, *args,
    # **kwargs)`` here, repacking the arguments, was ~2.5k instructions of each chain step.
    __slots__ = ("__call__", "__dict__")

    # (what ``inspect.signature`` of a packet gives: torch's)
    __signature__ = inspect.Signature([inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL),
                                       inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD)])

    def __init__(self, name):
        self._qualified_op_name = f"aten::{name}"
        self.__name__ = name
        self._overloads = {}
        self._first = None

    def overloads(self):
        return list(self._overloads)

    def _add(self, op, overload):
        self._overloads[overload] = op
        setattr(self, overload, op)
        op._overloadpacket = self
        if self._first is None or overload == "default":
            self._first = op
            self.__call__ = op._call

    def __repr__(self):
        return f"aten.{self.__name__}"


# the op families that `import glasstorch` leaves for first use (torch.nn's): looked up when a name is missing
_LAZY_OP_MODULES = ("nn_activation", "nn_conv", "nn_pool", "nn_norm", "nn_loss", "nn_rnn")


class _Namespace:
    """``ops.aten``: the op packets by name."""

    def __init__(self, name):
        self._name = name
        self._all_loaded = False

    def __repr__(self):
        return f"torch.ops.{self._name}"

    def __getattr__(self, name):
        # only for a name not declared yet: torch.nn's op families load on first use, but an op exists
        # as soon as torch is imported (torch.ops.aten.native_batch_norm before any nn code ran)
        if name.startswith("__") or self.__dict__.get("_all_loaded", True):
            raise AttributeError(f"'_OpNamespace' '{self._name}' object has no attribute '{name}'")
        self._all_loaded = True
        import importlib
        for module in _LAZY_OP_MODULES:
            importlib.import_module(f"glasstorch.ops.{module}")
        return getattr(self, name)


class _Ops:
    """``torch.ops``: the namespaces of ops (glasstorch has ``aten``)."""

    def __init__(self):
        self.aten = _Namespace("aten")


ops = _Ops()
aten = ops.aten


def _recognise_array_type(array_type):
    """A kind of array that became possible after import (CuPy's, imported on the first GPU
    question): every op's generated call tests its arguments against ``_ARRAY_TYPES`` (a tuple, the
    fastest test), so each op's namespace gets the longer tuple."""
    global _ARRAY_TYPES
    if array_type in _ARRAY_TYPES:
        return
    _ARRAY_TYPES = _ARRAY_TYPES + (array_type,)
    _CALL_HELPERS["_ARRAY_TYPES"] = _ARRAY_TYPES
    for packet in list(vars(aten).values()):
        if isinstance(packet, OpOverloadPacket):
            for op in packet._overloads.values():
                generated = op.__dict__.get("_namespace")   # (None: not called yet, made from _CALL_HELPERS when it is)
                if generated is not None:
                    generated["_ARRAY_TYPES"] = _ARRAY_TYPES


on_new_array_type(_recognise_array_type)


def defop(schema, kernel=None, node=None, joint=None, output_differentiability=None, inplace_of=None,
          inplace=False, may_overlap=False, refuse_aliases="partial", plain=None, **formulas):
    """Declare a primitive op: its schema, its kernel (the forward on arrays), and, when it is
    differentiable, the name of the node torch records and one formula per differentiable input
    (``joint`` for formulas that give several inputs' gradients at once; ``<input>=None`` for a tensor
    input torch declares ``non_differentiable``, such as indices: it is no edge of the node). Returns the OpOverload,
    also reachable as ``aten.<name>.<overload>``.

    ``output_differentiability`` (torch's derivatives.yaml key of that name): one bool per output;
    an output marked False never requires grad (``native_batch_norm``'s saved statistics), and when a
    formula reads it, it is handed over without history.

    ``inplace_of``: the op is the in-place variant of that out-of-place op (``add_.Tensor`` of
    ``add.Tensor``; its schema writes its first argument, ``Tensor(a!) self``, and returns it). It
    records that op's node with its formulas, as torch's derivatives.yaml serves both, reading
    ``self``'s value from before the write (torch's ``original_self``) and ``result`` as ``self``
    after it. Its kernel writes into the array of ``self`` (and returns it); without one given, the
    out-of-place kernel's result is written there (``ops/_op.write_into``). ``may_overlap`` and
    ``refuse_aliases``: torch's memory rules for the write (``ops/_op._check_inplace``).

    ``plain``: the op's common case, a :class:`Plain` (``Plain("{self} + {other}", SAME_LAYOUT)``):
    an expression on its arrays and the guard under which it is the whole of the op. It is declared
    once and written, inline, into the op's kernel (``op.kernel``: the plain case, else ``kernel``,
    which then need not repeat it), into its generated call, and into the one-frame entries of the
    public functions declared ``overridable(direct=op)`` (``_ops_codegen.entry_lines``).

    ``inplace=True``: an in-place op with a derivative of its own (torch's derivatives.yaml entry
    for the in-place op itself: ``zero_``, ``fill_.Scalar``, ``gt_.Scalar``), declared with its
    node and formulas (or none: not differentiable, ``self`` keeps its history) and a kernel that
    writes into ``self``; it is called, checked and recorded as an in-place variant is.

    The declaration is read when the op is first used (called, or any attribute of it read that
    only the schema gives: ``op._schema``, ``op.node``...; see :class:`_Declared`),
    not here: ``import glasstorch`` declares ~500 ops, of which a program calls a few dozen, and
    parsing their schemas and making their node classes was a third of the import. A mistake in a
    declaration is reported then (``tests/test_lazy_imports.py`` declares every op)."""
    name, _, overload = schema.partition("(")[0].strip().partition(".")
    overload = overload or "default"
    op = OpOverload(name, overload, (schema, kernel, node, joint, output_differentiability, inplace_of,
                                     inplace, may_overlap, refuse_aliases, formulas, plain))
    if node is not None and inplace_of is None:
        # the module's node classes by name (``pointwise.TanhBackward0``: ``node_classes_of``)
        _NODE_OPS.setdefault(sys._getframe(1).f_globals.get("__name__"), {}).setdefault(node, op)
    packet = aten.__dict__.get(name)
    if packet is None:
        packet = OpOverloadPacket(name)
        setattr(aten, name, packet)
    packet._add(op, overload)
    return op


class Plain:
    """An op's common case (``defop(..., plain=Plain(expression, guard))``), declared once: where
    ``guard`` holds, ``expression`` is the whole of the op -- no type promotion, no layout rule, no
    error to raise -- and the kernel, the op's generated call and the one-frame public entries
    (``_ops_codegen``) all compute it inline, without a call.

    ``expression``: Python on the op's arrays, named by the schema in braces (``"{self} + {other}"``;
    ``names`` binds the functions it calls: ``Plain("{self}.dot({mat2})", MATRICES)``). ``guard``: a
    template over the op's tensor arguments in order (``{0}``, ``{1}``: one of the guards below,
    which may use locals ``_s``, ``_d``...), of arrays of exactly the array type -- anything else
    (a number, a meta or CuPy array) is for the kernel given to ``defop``. Arguments that are not
    tensors must hold their schema default (the same object) for the plain case to apply.

    ``keys``: the same guard asked of the tensors' layout keys (:class:`Keys`; ``_array/plain_layout``),
    which the one-frame entries of the public functions read from the Tensors instead of the arrays'
    attributes."""

    def __init__(self, expression, guard, keys=None, **names):
        self.expression, self.guard, self.keys, self.names = expression, guard, keys, names

    def __repr__(self):
        return f"Plain({self.expression!r}, {self.guard!r}, keys={self.keys!r})"


# The guards of the plain cases (see Plain). An element-wise pair: two NumPy arrays of one dtype and
# one shape, the first row-major, no dim of size 1 or 0 -- NumPy's result is then row-major whatever
# the second's layout (the first vetoes every other order of the dims), and so is torch's (the first
# operand decides the order where it can, ``like_operands``). A dim of size 1 is left out because
# NumPy may give it its own stride (see ``like_input``), a broadcast operand or a number because they
# take part in the layout decision. (Each array attribute read costs ~300-600 instructions: five is
# what the question takes.)
SAME_LAYOUT = ("type({0}) is _ndarray and type({1}) is _ndarray and {0}.dtype is {1}.dtype "
               "and (_s := {0}.shape) == {1}.shape and 1 not in _s and 0 not in _s and {0}.flags.c_contiguous")
# ... of a floating dtype (division: int / int is computed in floating point)
SAME_LAYOUT_FLOATING = SAME_LAYOUT + " and {0}.dtype.kind in 'fc'"
# One row-major float32 or float64 array, no dim of size 1 or 0: a unary op's result is laid out as
# it is (``like_input``), and no op refuses these dtypes or computes them in another.
ROW_MAJOR_FLOAT = ("type({0}) is _ndarray and ((_d := {0}.dtype) is _FLOAT32 or _d is _FLOAT64) "
                   "and 1 not in (_s := {0}.shape) and 0 not in _s and {0}.flags.c_contiguous")
# Two matrices that multiply, of one dtype, float32 or float64, the inner size not 1: BLAS's product
# (``ndarray.dot``) is torch's, row-major.
MATRICES = ("type({0}) is _ndarray and type({1}) is _ndarray and len(_sa := {0}.shape) == 2 "
            "and len(_sb := {1}.shape) == 2 and _sa[1] == _sb[0] and _sa[1] != 1 "
            "and ((_d := {0}.dtype) is _FLOAT32 or _d is _FLOAT64) and {1}.dtype is _d")


class Keys:
    """A plain case's guard asked of its Tensors' layout keys (``Tensor._layout``, one interned
    :class:`~glasstorch._array.plain_layout.Layout` per shape, dtype and density): ``test``, a template
    over the keys in order (``{0}``, ``{1}``), true only where the arrays' guard holds; ``result``, the
    result's key in terms of them (None: not known from them, the result's facts are computed when
    asked); ``exact``: the test holds exactly where the arrays' guard does (otherwise an entry asks
    the arrays where the keys say no). The keys are compared by identity: the same key, the same
    shape and dtype -- two slot reads where the arrays' guard reads five NumPy attributes."""

    def __init__(self, test, result=None, exact=False):
        self.test, self.result, self.exact = test, result, exact

    def __repr__(self):
        return f"Keys({self.test!r}, result={self.result!r}, exact={self.exact})"


# SAME_LAYOUT by the keys: one key, dense (so the second operand row-major too: a transposed one goes
# to the arrays' guard); the result has the operands' layout (an op whose result keeps their dtype)
SAME_LAYOUT_KEYS = Keys("{0}.dense and {0} is {1}", result="{0}")
SAME_LAYOUT_FLOATING_KEYS = Keys("{0}.dense_inexact and {0} is {1}", result="{0}")
# ROW_MAJOR_FLOAT by the key, for an op whose result keeps the input's dtype
ROW_MAJOR_FLOAT_KEYS = Keys("{0}.dense_float", result="{0}", exact=True)
# MATRICES (and the op's own size rule, ``_small(shape_a, shape_b)``, a name of its Plain): the
# product's key, remembered by the first key per second key (``plain_layout.matrix_product``)
MATRICES_KEYS = Keys("((_ko := {0}.products.get({1})) or _ko is None and (_ko := _matrix_product({0}, {1}, _small)))",
                     result="_ko", exact=True)


_DECLARING = threading.RLock()
_NODE_OPS = {}      # module name -> {node class name: the op that records it}, as defop saw them


def _declare(op):
    """Read ``op``'s declaration (see :func:`defop`): its schema, node class, in-place rules. Returns
    whether ``op`` is declared now (False: it is being declared, by this thread, further up)."""
    with _DECLARING:    # (another thread waits for this one's declaration; this one's reentry is refused)
        declaration = op.__dict__.pop("_declaration", None)
        if declaration is None:
            return op._declared
        try:
            _declare_from(op, *declaration)
        except BaseException:
            op._declaration = declaration
            raise
        return True


def _declare_from(op, schema, kernel, node, joint, output_differentiability, inplace_of, inplace, may_overlap,
                  refuse_aliases, formulas, plain):
    parsed = Schema(schema)
    node_cls = None
    if inplace_of is not None or inplace:
        _check_inplace_variant(parsed, inplace_of, node, formulas, joint)
        node_cls = inplace_of.node if inplace_of is not None else None
        if kernel is None:
            kernel = _write_kernel(parsed.name, inplace_of.kernel)
    if node is not None and inplace_of is None:
        node_cls = _node_class(node, parsed, formulas, joint or {})
        if output_differentiability is not None:
            if len(output_differentiability) != len(parsed.returns):
                raise ValueError(f"{node}: output_differentiability needs one bool per output of {parsed}")
            node_cls._output_differentiability = tuple(bool(d) for d in output_differentiability)
    op._plain = plain
    if plain is not None:
        op._general_kernel = kernel
        kernel = _codegen.plain_kernel(op, parsed, kernel, plain)
    op._fill(parsed, kernel, node_cls)
    if inplace_of is not None or inplace:
        op._inplace, op._functional = True, inplace_of
        op._may_overlap, op._refuse_aliases = may_overlap, refuse_aliases
        op._saves_original = node_cls is not None and any(
            ("tensor", parsed.arguments[0].name) in specs for _, _, _, specs in node_cls._formula_table)
    if node_cls is not None and inplace_of is None:
        node_cls._op = op
        _codegen.install_node(node_cls, _NODE_HELPERS)
    op._declared = True


def declare_all():
    """Declare every op defop has been given so far (a test's check of all declarations; the
    registry's ops are otherwise declared at first use). Returns them."""
    ops_ = [op for packet in list(vars(aten).values()) if isinstance(packet, OpOverloadPacket)
            for op in packet._overloads.values()]
    for op in ops_:
        _declare(op)
    return ops_


def node_classes_of(module_name):
    """A ``__getattr__`` (PEP 562) for an op module: the node classes of the ops it declares, by
    name (``glasstorch.ops.pointwise.TanhBackward0``), each made when its op is declared."""
    declared = _NODE_OPS.setdefault(module_name, {})

    def __getattr__(name):
        op = declared.get(name)
        if op is None:
            raise AttributeError(f"module '{module_name}' has no attribute '{name}'")
        return op.node
    return __getattr__


def _check_inplace_variant(schema, functional, node, formulas, joint):
    """An in-place op's declaration: a schema that writes its first argument and returns it; for a
    variant (``functional`` given), the same arguments as its out-of-place twin (whose node and
    formulas it records), nothing of its own."""
    args = schema.arguments
    if not (schema.mutates and args and args[0].alias and schema.returns == [(None, args[0].alias)]):
        raise ValueError(f"{schema}: an in-place variant writes its first argument, Tensor(a!) self, and returns it")
    if "_run_inplace" not in _CALL_HELPERS:
        raise RuntimeError("in-place variants are declared after glasstorch.ops._op is imported")
    if functional is None:
        return
    twin = functional._schema.arguments
    if [(a.name, a.kwarg_only) for a in args] != [(a.name, a.kwarg_only) for a in twin]:
        raise ValueError(f"{schema}: the arguments of {functional._schema} are not the same")
    if node is not None or formulas or joint:
        raise ValueError(f"{schema}: an in-place variant records {functional!r}'s node; it declares no formulas")


def _write_kernel(name, functional_kernel):
    """The kernel of an in-place variant that has none of its own: the out-of-place kernel's result,
    written into ``self`` with torch's checks (``ops/_op.write_into``)."""
    write_into = _CALL_HELPERS["_write_into"]

    def kernel(self, *args, **kwargs):
        write_into(self, functional_kernel(self, *args, **kwargs))
        return self
    kernel.__name__ = kernel.__qualname__ = f"{name}_kernel"
    return kernel


def _parameter_names(fn):
    """The names of ``fn``'s parameters, in order. A plain function's come from its code object:
    ``inspect.signature`` is ~20x slower, and ``import glasstorch`` reads ~350 formulas."""
    code = getattr(fn, "__code__", None)
    if code is None or code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS) \
            or hasattr(fn, "__wrapped__") or hasattr(fn, "__signature__"):
        return tuple(inspect.signature(fn).parameters)
    return code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]


# the nodes torch writes by hand rather than generates from derivatives.yaml: their name() has
# their C++ namespace (torch::autograd::NotImplemented, torch::autograd::CopyBackwards)
_HAND_WRITTEN_NODES = ("NotImplemented", "CopyBackwards")


def _qualified_name(node):
    """``name()`` of a node torch writes by hand (``_HAND_WRITTEN_NODES``)."""
    return "torch::autograd::" + type(node).__name__


def _node_class(name, schema, formulas, joint):
    """The Node subclass for an op: named as torch names it, with its formula table."""
    args = {a.name: a for a in schema.arguments}
    non_differentiable = {k for k, f in formulas.items() if f is None}
    formulas = {k: f for k, f in formulas.items() if f is not None}
    out_names = [n or ("result" if len(schema.returns) == 1 else f"result{i}")
                 for i, (n, _) in enumerate(schema.returns)]
    groups = [((k,), f, False) for k, f in formulas.items()] + \
        [((k,) if isinstance(k, str) else tuple(k), f, True) for k, f in joint.items()]
    for names, _, _ in groups + [((n,), None, False) for n in non_differentiable]:
        for n in names:
            if n not in args or not (args[n].is_tensor or args[n].is_tensor_list):
                raise ValueError(f"{name}: formula for '{n}', which is not a tensor input of {schema}")
    # edges: the tensor inputs in schema order (a Tensor[] input gives one edge per element)
    edge_positions = tuple(i for i, a in enumerate(schema.arguments)
                           if (a.is_tensor or a.is_tensor_list) and a.name not in non_differentiable)
    saved_tensors = []      # names of the tensors (inputs/outputs) some formula reads
    table = []              # (input names, formula, joint, argument specs)
    for names, fn, is_joint in groups:
        specs = []
        for p in _parameter_names(fn):
            if p in ("grad", "grads", "output_mask"):
                specs.append((p, None))
            elif p in args and (args[p].is_tensor or args[p].is_tensor_list) or p in out_names:
                if p not in saved_tensors:
                    saved_tensors.append(p)
                specs.append(("tensor", p))
            elif p in args:
                specs.append(("value", p))
            elif p.endswith("_sizes") and p[:-6] in args:
                specs.append(("sizes", p[:-6]))
            elif p.endswith("_strides") and p[:-8] in args:
                specs.append(("strides", p[:-8]))
            elif p.endswith("_numel") and p[:-6] in args:
                specs.append(("numel", p[:-6]))
            elif p.endswith("_dtype") and p[:-6] in args:
                specs.append(("dtype", p[:-6]))
            elif p.endswith("_device") and p[:-7] in args:
                specs.append(("device", p[:-7]))
            elif p.endswith("_geometry") and p[:-9] in args:
                specs.append(("geometry", p[:-9]))
            else:
                raise ValueError(f"{name}: formula for {names} reads '{p}', which {schema} does not have")
        table.append((names, fn, is_joint, tuple(specs)))
    hand_written = {"name": _qualified_name} if name in _HAND_WRITTEN_NODES else {}
    return type(name, (FormulaNode,), {
        **hand_written,
        "__module__": "torch.autograd",
        "__doc__": f"The backward of aten.{schema.name}.{schema.overload}: {schema}",
        "saved_names": tuple(saved_tensors),
        "num_outputs": len(schema.returns) if not schema.returns_list else 1,
        "_schema": schema,
        "_edge_positions": edge_positions,
        "_formula_table": tuple(table),
        "_out_names": tuple(out_names),
        "_list_inputs": frozenset(a.name for a in schema.arguments if a.is_tensor_list),
        "_op_arg_index": {a.name: i for i, a in enumerate(schema.arguments)},
        "_output_differentiability": None,     # or one bool per output (defop's argument)
    })
