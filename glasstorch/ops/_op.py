"""What the public functions of every op family share (the ops themselves are ``defop``
declarations, ``glasstorch/_ops.py``):

* ``operands``, ``promote_arrays``, ``result_dtype`` -- torch's type promotion for a binary op (the
  operands that need none of it, nor the layout rule, are an op's plain case: ``_ops.Plain``);
* ``method``    -- expose a function as a Tensor method too (``x.exp()`` and ``torch.exp(x)``);
* ``_check_inplace``, ``run_inplace_op``, ``write_into`` -- torch's rules for an in-place op, what an
  in-place op's generated call uses (``defop(..., inplace_of=...)`` or ``inplace=True``);
  ``written_into_self`` -- an in-place kernel made from an out-of-place one;
* ``inplace``   -- the in-place form of an op torch has none of (glasstorch's ``x.isnan_()``): the
  out-of-place op, its result written into ``self``.
"""
import functools
import weakref

from .. import _checks, _dtype
from .._tensor import Tensor, _wrap, bump_version, check_inference_write, make_counter, _InferenceVersionCounter
from ..autograd import grad_mode
from ..autograd.graph import edge_of, rebase_history, check_inplace
from .._array import xp, overlap, array_errors, translate_array_error, copy_preserving_layout
from .._seam import seam, ANYWHERE, PASS, alias
from .._prims_common.wrappers import resize_output
from .. import _ops

_state = grad_mode._state
_DTYPE_OF = _dtype._BY_NUMPY
_FLOAT_KINDS = "fc"


def method(*names):
    """Decorator: also make ``fn`` a Tensor method (under its own name, or the names given). An
    operator among the names (``@method("add", "__add__", "__radd__")``) is given a function object
    of its own, as torch's are (``_seam.alias``): ``resolve_name`` names it by its own name
    (``torch.Tensor.__add__``), and a function mode still sees ``x + y`` as ``Tensor.add``, as
    torch's does; it costs nothing more than ``fn``."""
    def deco(fn):
        for n in names or (fn.__name__,):
            operator = n.startswith("__") and n.endswith("__") and n != fn.__name__
            setattr(Tensor, n, alias(fn, n, Tensor) if operator else fn)
        return fn
    return deco


def accepts_numpy_names(sequence_name=None):
    """Decorator (under ``@method()``), making ``fn`` a public function as :func:`overridable` does:
    torch's argument parser also takes NumPy's names, ``axis`` for
    ``dim`` and ``keepdims`` for ``keepdim`` (d2l writes ``X.sum(axis=0, keepdims=True)``), and the list
    of an op that also takes it spread out (``x.flip(1)``, ``x.permute(1, 0)``) by its schema name,
    ``sequence_name`` (Step-by-Step writes ``torch.flip(x, dims=[1])``); the remap costs nothing
    without keywords."""
    def decorate(fn):
        @functools.wraps(fn)
        def accepting(*args, **kwargs):
            # (the seam's prelude, see _seam.overridable: here the handler sees the call as made)
            if ANYWHERE.on and seam.on and (result := seam.intercept(accepting, args, kwargs)) is not PASS:
                return result
            if kwargs:
                if "axis" in kwargs:
                    kwargs["dim"] = kwargs.pop("axis")
                if "keepdims" in kwargs:
                    kwargs["keepdim"] = kwargs.pop("keepdims")
                if sequence_name is not None and sequence_name in kwargs:
                    if len(args) > 1:   # given twice: Python's own message, as torch's parser says it
                        raise TypeError(f"{fn.__name__}() got multiple values for argument '{sequence_name}'")
                    args = args + (kwargs.pop(sequence_name),)
            try:
                return fn(*args, **kwargs)
            except AttributeError:  # torch.sum([1, 2]): torch's TypeError, not "'list' has no attribute '_data'"
                if args and not isinstance(args[0], Tensor) and fn.__name__ not in ("cat", "stack"):
                    raise _checks.not_a_tensor(fn.__name__, args[0]) from None
                raise
        return accepting
    return decorate


def as_tensor_arg(x, like=None):
    """Turn a Python number or array argument into a Tensor (for ops that need a tensor)."""
    if isinstance(x, Tensor):
        return x
    from .creation import tensor as _t
    if isinstance(x, (bool, int, float)) and like is not None:
        dt = _dtype.result_type_of((), (), (_dtype.scalar_dtype(x),))
        if like._data.dtype.kind in _FLOAT_KINDS and not isinstance(x, bool) or \
                (isinstance(x, int) and like._data.dtype.kind in "iu"):
            dt = like.dtype
            if isinstance(x, int) and not isinstance(x, bool) and dt.numpy_dtype.kind in "iu":
                # a scalar operand wraps into the tensor's integer dtype (torch: where(u8, -2) is 254),
                # which torch.tensor(-2, dtype=uint8) itself refuses
                return _t(x).to(dt)
        return _t(x, dtype=dt)
    return _t(x)


def result_dtype(*args):
    """torch.result_type over tensors and Python numbers."""
    dims, zeros, scalars = [], [], []
    for a in args:
        if isinstance(a, Tensor):
            (dims if a._data.ndim else zeros).append(_DTYPE_OF[a._data.dtype])
        elif a is not None:
            scalars.append(_dtype.scalar_dtype(a))
    return _dtype.result_type_of(dims, zeros, scalars)


def operands(a, b):
    """The arrays (``b`` may stay a number) to compute ``a op b`` in torch's result dtype, for a Tensor
    ``a`` and a Tensor or a number ``b``: :func:`promote_arrays` on their arrays."""
    return promote_arrays(a._data, b._data if isinstance(b, Tensor) else b)


def _cpu_scalars_as_numbers(a, b):
    """Arrays of two devices (the device rule let a 0-d CPU tensor through): the 0-d CPU one as a
    NumPy scalar, as torch hands a CPU scalar to a CUDA kernel as a number (CuPy refuses a host
    array among its operands, and takes a scalar)."""
    return (a[()] if type(a) is xp.ndarray and not a.ndim else a), (b[()] if type(b) is xp.ndarray and not b.ndim else b)


_ndarray = xp.ndarray


def _converted(x, dtype):
    """``x`` as ``dtype``, laid out as the temporary torch's TensorIterator makes of an operand of
    another dtype on the CPU (``x.to(dtype)``: preserve_format, i.e. ``x``'s own strides where it is
    dense, dims of size 1 included, else dense strides in the order of ``x``'s, a broadcast dim
    left where it is): the result's layout is then decided on that copy. A ``(1, 2, 2, 1)`` tensor
    of strides ``(2, 0, 0, 2)`` converts to a contiguous one, so ``a.double() * b`` is row-major where
    ``a.double()`` is contiguous; NumPy's ``astype`` would put a broadcast dim innermost (a float64
    (2,) times an expanded float32 (3, 2) came out column-major; fuzz seed 796183947388)."""
    if type(x) is xp.ndarray and x.ndim and not (x.flags.c_contiguous and x.size and 1 not in x.shape):
        return copy_preserving_layout(x, dtype)
    return x.astype(dtype)


def promote_arrays(a, b, number_as_array=False):
    """Arrays (``b`` may stay a number) to compute ``a op b`` in torch's result dtype (the one place of
    torch's type promotion for a binary op, kernels and public functions alike): ``a`` an array, ``b``
    an array or a number.

    ``number_as_array``: a Python number with a float32/float64 NumPy array comes back as a read-only
    0-d array of that dtype (:func:`_number_operand`) -- for kernels that hand ``b`` straight to a
    ufunc (``+ - * /``), where NumPy takes a 0-d array ~1 us faster than a number.

    A 0-d array (or NumPy scalar) takes part as a 0-dim tensor does: it changes the result dtype only
    if it is of a higher category (float64 0-d times float32 is float32). A Python number is "weak",
    as in torch: it keeps the array's dtype within its category (an int tensor times a float is of the
    default float dtype). NumPy 1.x's value-based casting would compute a 0-d float32 array times a
    Python float in float64: a 0-d ``a`` gets ``b`` as an array of its dtype."""
    if type(b) is _ndarray or isinstance(b, _ops._ARRAY_TYPES):   # (read at each call: CuPy's type joins it when CuPy is imported)
        ta, tb = a.dtype, b.dtype
        if ta is tb or ta == tb:
            return (a, b) if type(a) is type(b) else _cpu_scalars_as_numbers(a, b)
        dims, zeros = [], []
        (dims if a.ndim else zeros).append(_DTYPE_OF[ta])
        (dims if b.ndim else zeros).append(_DTYPE_OF[tb])
        rt = _dtype.result_type_of(dims, zeros, ()).numpy_dtype
        a, b = (a if ta == rt else _converted(a, rt)), (b if tb == rt else _converted(b, rt))
        return (a, b) if type(a) is type(b) else _cpu_scalars_as_numbers(a, b)
    tb = type(b)
    if number_as_array and (tb is float or tb is int) and type(a) is _ndarray and a.ndim:
        numbers = _NUMBER_OPERANDS.get(a.dtype)
        if numbers is not None:
            operand = numbers.get(b)
            return a, (operand if operand is not None else _number_operand(numbers, a.dtype, b))
    k = a.dtype.kind
    if tb is float:
        if k in "biu":
            a = a.astype(_dtype.get_default_dtype().numpy_dtype)
    elif tb is int:
        if k in "iu":
            info = xp.iinfo(a.dtype)
            if not info.min <= b <= info.max:  # torch wraps around; NumPy refuses: wrap explicitly
                b = xp.array(b).astype(a.dtype)[()]
        elif k == "b":
            a = a.astype("int64")
    elif tb is bool:
        pass
    elif tb is complex:
        if k != "c":
            a = a.astype("complex64" if a.dtype != xp.float64 else "complex128")
    elif isinstance(b, (int, float)):  # NumPy's scalars and friends behave like Python numbers
        return promote_arrays(a, b.item() if hasattr(b, "item") else float(b))
    else:
        raise TypeError(f"unsupported operand type: 'Tensor' and '{tb.__name__}'")
    if not a.ndim:  # NumPy 1.x would compute a 0-d float32 times a float (or an int32 plus an int) in 64 bits
        b = a.dtype.type(b)   # (a NumPy scalar: a 0-d NumPy array would be host memory to CuPy)
    return a, b


# The 0-d arrays that numbers become with float32/float64 operands (``promote_arrays(...,
# number_as_array=True)``), per dtype, by value: NumPy 2 resolves a Python number's (weak) dtype at
# every ufunc call, ~1 us on a small array that a 0-d array of the array's dtype does not pay
# (``c * 2``, c (64, 1) float32: 2.1 us in NumPy, 1.0 with the 0-d array). The value is the same one
# NumPy would compute with (the number cast to the array's dtype, as torch's CPU kernels cast a
# scalar to their float32/float64 opmath), so the result is bit for bit the number's.
_NUMBER_OPERANDS = {xp.dtype(xp.float32): {}, xp.dtype(xp.float64): {}}
_NUMBER_OPERANDS_MAX = 256   # values kept per dtype (a program of ever new numbers converts each anew)
_EXACT_INT = 2 ** 24         # ints converted: those float32 holds exactly (larger ones stay numbers)


def _number_operand(numbers, dtype, b):
    """``b`` (a Python float or int) as the 0-d array ``promote_arrays`` hands on in its place, kept
    in ``numbers`` -- or ``b`` itself where a cached array could be wrong or would not pay: zeros
    (``-0.0 == 0.0``, one dict key, two values), NaN (never equal to itself: never found again) and
    large ints (kept out of any rounding question)."""
    if not b or b != b or (type(b) is int and not -_EXACT_INT < b < _EXACT_INT):
        return b
    operand = xp.array(b, dtype)
    operand.flags.writeable = False     # (shared by every call with this number)
    if len(numbers) < _NUMBER_OPERANDS_MAX:
        numbers[b] = operand
    return operand


def float_array(t):
    """The array of ``t`` for an op that computes in floating point (ints promote to the default)."""
    d = t._data
    if d.dtype.kind in _FLOAT_KINDS or _dtype.is_bfloat16_numpy(d.dtype):
        return d
    return d.astype(_dtype.get_default_dtype().numpy_dtype)




def kernel_not_implemented(kernel_name, dtype):
    """torch's error for an array dtype a kernel is not built for ('"elu_cpu" not implemented for 'Long'')."""
    return NotImplementedError(f'"{kernel_name}" not implemented for \'{_DTYPE_OF[dtype]._legacy}\'')


def check_floating(x, kernel_name):
    """Refuse, as torch's floating-point kernels do, an array that is not floating point."""
    if x.dtype.kind not in _FLOAT_KINDS and not _dtype.is_bfloat16_numpy(x.dtype):
        raise kernel_not_implemented(kernel_name, x.dtype)


def _check_inplace(self, others=(), may_overlap=False, refuse_aliases="partial", rehearse=None):
    """torch's rules for an in-place op on ``self``, checked before it writes.

    Returns whether autograd records the op (grad mode on, and ``self`` or one of ``others``
    requires grad): then the op creates its node from the inputs' current histories (``self``'s
    old one first), writes, bumps the version, and hands the node to ``rebase_history``, which
    moves it onto the base when ``self`` is a view (torch's CopySlices).

    Memory, as torch checks it: only the ops that write one value everywhere (``may_overlap``:
    fill_, zero_, masked_fill_, index_put_) may write into a tensor whose elements share memory
    (an expanded one); no input in ``others`` may share part of ``self``'s memory
    (``x[1:].add_(x[:-1])``), and with ``refuse_aliases="any"`` not even all of it (``x.add_(x)``
    is fine, ``x[idx] = x`` is not; ``None``: the inputs were read before the write, as fill_'s).

    An inference tensor outside inference mode is refused after the memory checks and
    ``rehearse()`` (the kernel's argument checks, run on a scratch copy), but before anything is
    written: see :func:`_refuse_inference_write`.
    """
    vc = self._counter or make_counter(self)    # (made now if self has none: the write bumps it)
    if vc.inference:        # (every in-place op runs this: the common case reads one attribute)
        _refuse_inference_write(self, others, may_overlap, refuse_aliases, rehearse)
    involved = False
    if _state.enabled:  # autograd's checks come first, as in torch (they run before the kernel's)
        involved = self._requires_grad
        if not involved:
            for o in others:
                if isinstance(o, Tensor) and o._requires_grad:
                    involved = True
                    break
        if involved:
            check_inplace(self, involved)
            # torch takes every input's history before the kernel runs: a view that may not be
            # re-derived raises here, before the memory checks below
            for o in others:
                if isinstance(o, Tensor) and o._base is not None and o._requires_grad:
                    edge_of(o)
    _check_memory(self, vc, others, may_overlap, refuse_aliases)
    return involved


def _check_memory(self, vc, others, may_overlap, refuse_aliases):
    """torch's memory checks of an in-place write (``_check_inplace``)."""
    if not may_overlap and 0 in self._data.strides:
        _check_no_overlap(self)
    for o in others if refuse_aliases else ():
        # (tensors sharing memory share a version counter -- views, detach() -- but for .data and
        # a second from_numpy of one array; only those pay for the memory test. One with no counter
        # yet shares nothing: its slot, not _vc, which would make one)
        if isinstance(o, Tensor) and o._counter is vc:
            _check_aliases(self._data, o._data, refuse_aliases)


def _refuse_inference_write(self, others, may_overlap, refuse_aliases, rehearse):
    """The in-place write into an inference tensor outside inference mode, refused before it writes.

    torch checks the op's arguments, WRITES, and only then refuses (the refusal sits in the version
    bump that follows the kernel): its argument errors come first, and a caller that catches the
    error holds a tensor that changed although it was told the update "is not allowed" -- an
    inference tensor has no version counter, so nothing can tell later that it did (a cache of
    embeddings computed under inference_mode, say). glasstorch makes the same checks in the same
    order -- memory, then the kernel's own (``rehearse``: the kernel run on a scratch copy of the
    array) -- and refuses with torch's error, leaving the tensor as it was (README, "Where
    glasstorch differs")."""
    if _state.inference or type(self._counter) is not _InferenceVersionCounter:
        return     # (a detached alias's counter counts: its writes are allowed)
    _check_memory(self, self._counter, others, may_overlap, refuse_aliases)
    if rehearse is not None:
        rehearse()
    check_inference_write(self._counter)


def _check_aliases(target, source, refuse_aliases):
    """torch's refusal of an input array that shares part of the written-to array's memory (all of it
    too, with ``refuse_aliases="any"``)."""
    lap = overlap(target, source)
    if lap == "partial" or lap == "full" and refuse_aliases == "any":
        raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to "
                           "tensor refer to a single memory location. Please clone() the tensor before "
                           "performing the operation.")


def _check_no_overlap(self):
    """torch's refusal of a written-to tensor (or array) whose elements share memory."""
    d = self._data if isinstance(self, Tensor) else self
    if d.size and any(st == 0 and n > 1 for st, n in zip(d.strides, d.shape)):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a single "
                           "memory location. Please clone() the tensor before performing the operation.")


def inplace(self, op_name, fn, *args, **kwargs):
    """Run out-of-place ``fn(self, *args)`` and write the result into ``self`` (torch's x.op_()).

    With autograd involved, the derivative must see ``self``'s value from before the write, so the
    op runs on a copy that carries ``self``'s history (torch saves ``original_self`` the same way);
    after the write ``self`` takes over the op's node (``rebase_history``: onto the base through
    CopySlices when ``self`` is a view), and a result the derivative saved is ``self`` itself, so
    modifying ``self`` in place again before backward is caught by the version check, as in torch.
    """
    others = args + tuple(kwargs.values()) if kwargs else args    # (x.clamp_(min=y): y is an input too)
    if _check_inplace(self, others):
        return inplace_recorded(self, op_name, fn, *args, **kwargs)
    with grad_mode.no_grad():
        result = fn(self, *args, **kwargs)
    _write(self, result, op_name)
    return self


def inplace_recorded(self, op_name, fn, *args, **kwargs):
    """The recording half of :func:`inplace`, for an op that has made torch's checks itself
    (``_check_inplace`` returned True): ``fn`` runs on a copy of ``self`` that carries ``self``'s
    history, its result is written into ``self``, and ``self`` takes over the node."""
    src = _history_carrier(self, copy=True)
    result = fn(src, *args, **kwargs)
    _write(self, result, op_name)
    node = result._grad_fn
    if node is not None:
        _take_over(self, node)
    return self


def _history_carrier(self, copy):
    """A stand-in for ``self``'s value before an in-place write (torch's ``original_self``): a
    tensor with ``self``'s history -- its array a copy when a formula will read that value, else
    ``self``'s own (only its shape and dtype are read)."""
    src = _wrap(self._data.copy() if copy else self._data)
    if self._requires_grad:
        fn_self, nr = edge_of(self)
        if fn_self is not None:
            src._requires_grad = True
            src._grad_fn, src._output_nr = fn_self, nr
    return src


def _take_over(self, node):
    """After the write: ``self`` takes ``node`` as its history (through CopySlices onto its base
    when it is a view), and a result the node saved is ``self`` itself."""
    saved_result = _saved_result_is(node, self)
    rebase_history(self, node)
    if self._base is not None and saved_result:
        # torch saves the result of an in-place op on a view with the view's new history
        node._result_fn = weakref.ref(self._grad_fn)


_ARRAY_ERRORS = array_errors()


def run_inplace_op(op, args):
    """An in-place variant (``defop(..., inplace_of=...)``, e.g. ``aten.add_.Tensor``) when autograd
    may record it, a TorchDispatchMode is on or ``self`` is an inference tensor -- the rare path of
    its generated call, which makes all of torch's checks (``_check_inplace``). ``args``: the call's
    arguments in schema order.

    As torch's generated code does: the out-of-place twin's node is recorded before the write, from
    ``self``'s old history (and its old value, when a formula reads it: torch's ``original_self``),
    its result standing for ``self``; the write is the kernel's, or the dispatch mode's (which sees
    ``aten.add_.Tensor`` below autograd and runs it); then ``self`` takes the node over."""
    self = args[0]
    involved = _check_inplace(self, tuple(args[i] for i in op._tensor_positions[1:]),
                              op._may_overlap, op._refuse_aliases, lambda: _rehearse(op, args))
    node_cls = op.node
    node = None
    if involved and node_cls is not None:
        # recorded before the write, as torch saves its inputs: an input that is self (x.addcmul_(x, y))
        # is saved at its old version, and backward refuses it once the write has moved it on
        original = _history_carrier(self, op._saves_original)
        call_args = (original,) + tuple(args[1:])
        inputs = [call_args[i] if isinstance(call_args[i], Tensor) else None for i in node_cls._edge_positions]
        node = node_cls._record(op._functional or op, call_args, inputs, _wrap(self._data))
    if seam.dispatching:
        op._dispatch_below_autograd(args)
    else:
        _run_kernel(op, args, self._data)
        bump_version(self, op._schema.name)
    if node is not None:
        _take_over(self, node)   # (the result, self's array, stands for self)
    return self


def _run_kernel(op, args, target):
    """An in-place variant's kernel, writing into array ``target`` (``args[0]``'s, or a scratch copy)."""
    positional, kwargs = op._split_args((target,) + tuple(
        a._data if isinstance(a, Tensor) else [x._data if isinstance(x, Tensor) else x for x in a]
        if isinstance(a, list) else a for a in args[1:]))   # (a list: index_put_'s indices)
    try:
        op.kernel(*positional, **kwargs)
    except _ARRAY_ERRORS as e:
        raise translate_array_error(e, op, args) from None


def _rehearse(op, args):
    """The kernel's argument checks for an in-place op that will be refused (``_refuse_inference_write``):
    the kernel writes into a scratch copy of ``self``'s array, so its errors come first, as torch's."""
    if not seam.dispatching:
        _run_kernel(op, args, args[0]._data.copy())


def run_out_op(op, args):
    """An out= overload called with Tensors (``aten.zeros.out``; its generated call comes here):
    torch's autograd layer first -- no argument may require grad while grad mode is on --, then a
    TorchDispatchMode sees the op, or the kernel computes the values in ``out``'s dtype and on its
    device and they are written into ``out``, resized to their shape (the same shape keeps its
    strides). ``out``'s version moves on; ``out`` is returned. ``args``: the call's arguments in
    schema order, ``out`` last.

    torch's factories (no tensor among the inputs: ``zeros.out``, ``arange.start_out``) resize ``out``
    with ``resize_``, silently, and their autograd error names the op ``aten::zeros()``; an op that
    reads tensors (``normal.Tensor_Tensor_out``) resizes with ``resize_output``, which warns when
    ``out`` had elements, and its error says ``normal()``."""
    out = args[-1]
    if not isinstance(out, Tensor):
        raise TypeError(f"{op._schema.name}(): argument 'out' must be Tensor, not {_checks.type_name(out)}")
    factory = len(op._tensor_positions) == 1
    if _state.enabled and any(isinstance(a, Tensor) and a._requires_grad for a in args):
        raise RuntimeError(f"{'aten::' if factory else ''}{op._schema.name}(): functions with out=... arguments don't "
                           "support automatic differentiation, but one of the arguments requires grad.")
    if seam.dispatching:
        return op._dispatch_below_autograd(args)
    positional, kwargs = op._split_args(tuple(a._data if isinstance(a, Tensor) else a for a in args))
    try:
        values = op.kernel(*positional, **kwargs)
    except _ARRAY_ERRORS as e:
        raise translate_array_error(e, op, args) from None
    check_inference_write(out._counter)    # (after the kernel's errors, before the write: _refuse_inference_write)
    target = resize_output(out, values.shape, warn=not factory)
    target[...] = values
    bump_version(out, op._schema.name)
    return out


def _triangle_zeroed_in_place(d):
    """Whether torch's tril_/triu_ zero the elements of array ``d`` where they lie: so they do when
    its batches of matrices follow one another in memory (checkTrilTriuBatchContiguous: always for
    up to 3 dims; a stride-0 or size-1 first dim is skipped). Otherwise torch computes into a new
    tensor and ``copy_``s it back, and that copy refuses a tensor whose elements share memory."""
    if d.ndim <= 3:
        return True
    expected = d.shape[-1] * d.shape[-2]
    for i in range(d.ndim - 3, -1, -1):
        stride = d.strides[i] // d.itemsize
        if i == 0 and (stride == 0 or d.shape[0] == 1):
            continue
        if stride != expected:
            return False
        expected *= d.shape[i]
    return True


def _saved_result_is(node, self):
    """The node saved its result, which the in-place op has just written into ``self``: save
    ``self`` (at its new version) instead. Returns whether it did. (A defop node names its saved
    outputs in ``_result_slots``; a hand-written node has one ``_result_index``.)"""
    slots = node._result_slots if node._runs_formulas else \
        ((node._result_index,) if node._result_index >= 0 else None)
    if not slots or not node._saved:
        return False
    saved, versions = list(node._saved), list(node._versions_at_save)
    for i in slots:
        saved[i], versions[i] = self._alias(), self._vc.version
    node._saved, node._versions_at_save = tuple(saved), tuple(versions)
    return True


def _write(self, result, op_name):
    write_into(self._data, result._data)
    bump_version(self, op_name)


def can_cast(source, target):
    """torch's canCast (``_dtype.can_cast``) on NumPy dtypes."""
    return _dtype.can_cast(_DTYPE_OF[source], _DTYPE_OF[target])


def write_into(target, d):
    """Write array ``d`` (an op's result) into array ``target``, with torch's checks: the result's
    dtype must cast to the target's (float into int is refused), its shape broadcast to it."""
    if d.dtype != target.dtype and not can_cast(d.dtype, target.dtype):
        raise RuntimeError(f"result type {_DTYPE_OF[d.dtype]._legacy} can't be cast to the desired output "
                           f"type {_DTYPE_OF[target.dtype]._legacy}")
    if d.shape != target.shape:
        try:
            xp.broadcast_shapes(d.shape, target.shape)
            if xp.broadcast_shapes(d.shape, target.shape) != target.shape:
                raise ValueError
        except ValueError:
            raise RuntimeError(f"output with shape {list(target.shape)} doesn't match the broadcast shape "
                               f"{list(xp.broadcast_shapes(d.shape, target.shape)) if _bc(d.shape, target.shape) else list(d.shape)}") from None
    if 0 in target.strides:  # an expanded target (masked_fill_ ...): write only what changed, as torch's
        changed = d != target   # kernel does, or an aliased element gets its old value (a NaN kept is no change)
        if d.dtype.kind in "fc":
            changed &= ~(xp.isnan(d) & xp.isnan(target))
        xp.copyto(target, d, where=changed)
    else:
        target[...] = d


def written_into_self(kernel):
    """The kernel of an in-place op declared with ``defop(..., inplace=True)`` from an out-of-place
    kernel: its result written into ``self``, with torch's checks (``write_into``)."""
    def kernel_(self, *args, **kwargs):
        write_into(self, kernel(self, *args, **kwargs))
        return self
    name = getattr(kernel, "__name__", "kernel")
    kernel_.__name__ = kernel_.__qualname__ = name.replace("_kernel", "__kernel") if "_kernel" in name else name + "_"
    return kernel_


def computed_into_self(kernel):
    """The kernel of an in-place variant torch computes as its out-of-place op with ``self`` as the
    output (``addmm_``, ``cumsum_``: structured kernels): the result must have ``self``'s dtype and
    shape exactly, or torch's "Bad in-place call" (no casting, no broadcasting, as ``write_into``
    allows for the element-wise ones)."""
    def kernel_(self, *args, **kwargs):
        result = kernel(self, *args, **kwargs)
        if result.dtype != self.dtype:
            raise RuntimeError(f"Bad in-place call: input tensor dtype {_dtype.cpp_name(self.dtype)} and output "
                               f"tensor dtype {_dtype.cpp_name(result.dtype)} should match")
        if result.shape != self.shape:
            raise RuntimeError(f"Bad in-place call: input tensor size {list(self.shape)} and output tensor size "
                               f"{list(result.shape)} should match")
        self[...] = result
        return self
    name = getattr(kernel, "__name__", "kernel")
    kernel_.__name__ = kernel_.__qualname__ = name.replace("_kernel", "__kernel") if "_kernel" in name else name + "_"
    return kernel_


def _bc(a, b):
    try:
        xp.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


_ops._bind_inplace_helpers(run_inplace_op, _check_no_overlap, _check_aliases, write_into, run_out_op)
