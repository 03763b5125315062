"""Writes each op's autograd code from its definition, as torch generates ``VariableType`` from its
YAML files: three short, straight-line Python functions per op, specialised to its schema and
formula table, so that no op pays for interpreting a table on every call.

* ``OpOverload.__call__`` -- arrays in: the kernel alone; Tensors in: the kernel on their arrays,
  the results wrapped (as views where the schema says ``Tensor(a)``), then the node recorded if an
  input requires grad;
* ``Node._record``        -- the node for one call: edges, history, and saved exactly what the
  formulas of the inputs that need a gradient read. For an op with one output and single-Tensor
  inputs (most ops) the same lines (``record_lines``) are also written into its ``__call__``, so
  the usual forward makes no ``_record``/``connect`` call; ``_record`` serves in-place variants and
  dispatch modes;
* ``Node._run_formulas``  -- backward: each needed formula, given what it reads (a one-expression
  lambda written out in it: ``inline_formula``).

Each is written and compiled at its first use (an op's first call: ``_GeneratedOnFirstUse``).
The source is kept (``op._source``, ``NodeClass._source``) and registered with ``linecache``, so
tracebacks, debuggers and ``inspect.getsource`` show the generated lines::

    >>> print(glasstorch.ops.aten.mul.Tensor._source)
"""
import ast
import copy
import dis
import builtins
import keyword
import linecache
import types

from ._seam import seam
from ._array import xp
from .autograd import grad_mode
from .autograd.graph import connect

_state = grad_mode._state
# "grad mode is on", as the hot paths ask it: after the inputs' ``_requires_grad`` (slot reads), which
# under no_grad often settle it alone, and through the main thread's process-wide copy of the mode
# (grad_mode.main_grad: a thread-local read costs ~600 instructions, a third of a small op's Python)
_GRAD_ON = grad_mode.GRAD_ON


def _py(name):
    """A schema argument name as a Python identifier."""
    return name + "_" if keyword.iskeyword(name) else name


# NumPy 1.x computes with 0-d arrays as with Python numbers ("value-based casting"): when every
# operand is 0-d, a float32 one times a Python float is a float64. Kernels write their constants in
# the array's own type where it matters, but a 0-d result of a kernel that mixes them would still
# come out float64 where torch keeps float32; under NumPy 1.x only, each op's generated call narrows
# such a result back (see ``_ops._narrow_0d``). NumPy 2 (NEP 50) needs none of it.
_VALUE_BASED_CASTING = int(xp.__version__.split(".")[0]) < 2


def _compile(source, filename, namespace):
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)


# -----------------------------------------------------------------------------------------------
# OpOverload.__call__
# -----------------------------------------------------------------------------------------------
def _call_parts(args):
    """The generated call's pieces: argument names, its signature, the call passing them on, the
    kernel's call (tensors as their arrays ``_a<i>``)."""
    names = [_py(a.name) for a in args]
    sig, kw = [], False
    for i, (a, n) in enumerate(zip(args, names)):
        if a.kwarg_only and not kw:
            sig.append("*")
            kw = True
        sig.append(n if not a.has_default else f"{n}=_D[{i}]")
    call = ", ".join(f"{n}={n}" if a.kwarg_only else n for a, n in zip(args, names))
    kernel_call = ", ".join(f"{n}={'_a%d' % i if (a.is_tensor or a.is_tensor_list) else n}" if a.kwarg_only
                            else ('_a%d' % i if (a.is_tensor or a.is_tensor_list) else n)
                            for i, (a, n) in enumerate(zip(args, names)))
    return names, sig, call, kernel_call


def op_call_source(op):
    """The source of ``op``'s ``__call__`` (see the module docstring)."""
    if op._inplace:
        return inplace_call_source(op)
    if op._writes_out:
        return out_call_source(op)
    schema = op._schema
    args = schema.arguments
    names, sig, call, kernel_call = _call_parts(args)
    lines = [f"def __call__(_op, {', '.join(sig)}):"]
    probe = next((i for i, a in enumerate(args) if a.is_tensor or a.is_tensor_list), None)
    if probe is not None:
        p = names[probe]
        if args[probe].is_tensor_list:
            lines.append(f"    if {p} and isinstance({p}[0], _ARRAY_TYPES):")
        else:
            lines.append(f"    if isinstance({p}, _ARRAY_TYPES):")
        if op._plain is not None:   # (the plain case inline here too: a backward formula's step makes one frame)
            lines.append(f"        if {plain_guard(op, names, lambda i: names[i])}:")
            lines.append(f"            return {plain_expression(op, lambda i: names[i])}")
            lines.append(f"        return _general({call})")
        else:
            lines.append(f"        return _kernel({call})   # arrays in: a backward formula's step")
    all_args = "(" + "".join(f"{n}, " for n in names) + ")"
    lines.append("    if seam.dispatching:")
    lines.append(f"        return _op._dispatched({all_args})")
    if probe is not None:   # a second device in use: torch's rule that the tensors share one, before the kernel
        lines.append("    if _devices.many:")
        lines.append(f"        _check_devices(_op, {all_args})")
    for i, (a, n) in enumerate(zip(args, names)):
        if a.is_tensor:
            lines.append(f"    _a{i} = {n}._data if isinstance({n}, _Tensor) else {n}")
        elif a.is_tensor_list:
            lines.append(f"    _a{i} = [_x._data if isinstance(_x, _Tensor) else _x for _x in {n}]")
    kernel_lines = [f"_result = _kernel({kernel_call})"]
    if op._plain is not None:   # the common case inline (see _ops.Plain), the general kernel otherwise
        lines.append(f"    if {plain_guard(op, names, lambda i: f'_a{i}')}:")
        lines.append(f"        _result = {plain_expression(op, lambda i: f'_a{i}')}")
        lines.append("    else:")
        kernel_lines = [f"_result = _general({kernel_call})"]
    indent = "        " if op._plain is not None else "    "
    lines.append(indent + "try:")
    lines.append(indent + "    " + kernel_lines[0])
    lines.append(indent + "except _ARRAY_ERRORS as _e:")
    if op.node is not None:   # (torch's autograd layer runs before its kernel: its errors come first)
        lines.append(indent + f"    _autograd_first(_op, {all_args})")
    lines.append(indent + f"    raise _translate(_e, _op, {all_args}) from None")
    if op.node is not None:
        lines.append(indent + "except Exception:")
        lines.append(indent + f"    _autograd_first(_op, {all_args})")
        lines.append(indent + "    raise")
    if probe is not None:   # a meta array took part: the device rule, and meta outputs (a CPU op pays one test)
        lines.append("    if _meta_touched.flag:")
        lines.append(f"        _result = _settle(_op, {all_args}, _result)")
    if _VALUE_BASED_CASTING and not (schema.returns_tuple or schema.returns_list) \
            and not any("ScalarType" in a.type for a in args):
        tensors = ", ".join(f"_a{i}" for i, a in enumerate(args) if a.is_tensor)
        if tensors:
            lines.append("    if _result.ndim == 0 and _result.dtype == _FLOAT64:   # (NumPy 1.x: see _ops_codegen)")
            lines.append(f"        _result = _narrow_0d(_result, ({tensors},))")
    lines.append(f"    _out = {_wrap_expression(op, names)}")
    if op.node is not None:
        requires, inputs = [], []
        edges = op.node._edge_positions      # the differentiable tensor inputs
        for i, (a, n) in enumerate(zip(args, names)):
            if i not in edges:
                continue
            if a.is_tensor:
                requires.append(f"(_a{i} is not {n} and {n}._requires_grad)")
                inputs.append(f"({n} if _a{i} is not {n} else None)")
            elif a.is_tensor_list:
                requires.append(f"any(isinstance(_x, _Tensor) and _x._requires_grad for _x in {n})")
                inputs.append(f"*[_x if isinstance(_x, _Tensor) else None for _x in {n}]")
        lines.append(f"    if ({' or '.join(requires)}) and {_GRAD_ON}:")
        if _inline_record(op.node):     # the node recorded here, without a _record call
            lines += [f"        _i{k} = {x}" for k, x in enumerate(inputs)]
            lines += record_lines(op.node, lambda i: names[i], "        ")
        else:
            lines.append(f"        _record(_op, {all_args}, [{', '.join(inputs)}], _out)")
    lines.append("    return _out")
    return "\n".join(lines) + "\n"


def inplace_call_source(op):
    """The source of an in-place variant's ``__call__`` (``aten.add_.Tensor``): arrays in, the kernel
    writes into the first; Tensors in, the kernel writes into ``self``'s array and its version moves
    on. The optimizers' hot path, so the common case is written out here rather than called: torch's
    memory checks (``ops/_op._check_inplace``) inline, the version bump inline. When autograd
    records the op, a TorchDispatchMode is to see it, or ``self`` is an inference tensor,
    ``ops/_op.run_inplace_op`` takes over (the rare path: all of torch's checks, in its order)."""
    args = op._schema.arguments
    names, sig, call, kernel_call = _call_parts(args)
    target = names[0]
    all_args = "(" + "".join(f"{n}, " for n in names) + ")"
    others = [(i, n) for i, (a, n) in enumerate(zip(args, names)) if a.is_tensor and i]
    requires = "".join(f" or isinstance({n}, _Tensor) and {n}._requires_grad" for _, n in others)
    edges = op.node._edge_positions if op.node is not None else ()
    requires += "".join(f" or any(isinstance(_x, _Tensor) and _x._requires_grad for _x in {n})"
                        for i, (a, n) in enumerate(zip(args, names)) if a.is_tensor_list and i in edges)
    lines = [f"def __call__(_op, {', '.join(sig)}):",
             f"    if isinstance({target}, _ARRAY_TYPES):",
             f"        return _kernel({call})   # arrays in: the kernel writes into {target}",
             "    if _devices.many:   # a second device in use: torch's rule that the tensors share one",
             f"        _check_devices(_op, {all_args})",
             f"    _vc = {target}._counter or _make_counter({target})",
             f"    if _vc.inference or seam.dispatching or ({target}._requires_grad{requires}) and {_GRAD_ON}:",
             f"        return _run_inplace(_op, {all_args})   # autograd records it, a dispatch mode sees it",
             f"    _a0 = {target}._data"]
    if not op._may_overlap:
        lines += ["    if 0 in _a0.strides:   # (an expanded self: elements that share memory)",
                  f"        _check_no_overlap({target})"]
    for i, n in others:
        lines += [f"    if isinstance({n}, _Tensor):",
                  f"        _a{i} = {n}._data"]
        if op._refuse_aliases:      # (only tensors that share a version counter may share memory;
            # one that has none yet shares nothing)
            lines += [f"        if {n}._counter is _vc:",
                      f"            _check_aliases(_a0, _a{i}, {op._refuse_aliases!r})"]
        lines += ["    else:",
                  f"        _a{i} = {n}"]
    for i, (a, n) in enumerate(zip(args, names)):
        if a.is_tensor_list:    # (index_put_'s indices: no memory of self's)
            lines.append(f"    _a{i} = [_x._data if isinstance(_x, _Tensor) else _x for _x in {n}]")
    lines += ["    try:",
              f"        _kernel({kernel_call})",
              "    except _ARRAY_ERRORS as _e:",
              f"        raise _translate(_e, _op, {all_args}) from None",
              "    _vc.version += 1   # (ops/_op.bump_version's steps)",
              f"    _vc.last_op = {op._schema.name!r}",
              "    _f = _getframe(1)   # (user_frame's walk to the user's line, written out)",
              "    while _f is not None and _f.f_code.co_filename.startswith(_GLASSTORCH_FILES):",
              "        _f = _f.f_back",
              "    _vc.where = (_f.f_code.co_filename, _f.f_lineno) if _f is not None else None",
              f"    return {target}"]
    return "\n".join(lines) + "\n"


def out_call_source(op):
    """The source of an out= overload's ``__call__`` (``aten.zeros.out``): arrays in, the kernel's
    values for ``out`` (in its dtype, on its device); Tensors in, ``ops/_op.run_out_op`` writes them
    into ``out`` with torch's checks (autograd's refusal, a dispatch mode, the resize)."""
    args = op._schema.arguments
    names, sig, call, _ = _call_parts(args)
    all_args = "(" + "".join(f"{n}, " for n in names) + ")"
    return "\n".join([f"def __call__(_op, {', '.join(sig)}):",
                      f"    if isinstance({names[-1]}, _ARRAY_TYPES):",
                      f"        return _kernel({call})   # arrays in: the values to write into {names[-1]}",
                      f"    return _run_out(_op, {all_args})"]) + "\n"


def _wrap_expression(op, names):
    if op._returns_list:
        v = op._view_of[0]
        return (f"[_view_of({names[v]}, _r, _MULTI_OUTPUT_NODE) for _r in _result]" if v is not None
                else "[_wrap(_r) for _r in _result]")
    if op._returns_tuple:
        # an output may be undefined (None), as torch's convolution_backward's masked-off gradients are
        parts = [f"_view_of({names[v]}, _result[{k}], _MULTI_OUTPUT_NODE)" if v is not None else
                 f"(_wrap(_result[{k}]) if _result[{k}] is not None else None)"
                 for k, v in enumerate(op._view_of)]
        return "(" + ", ".join(parts) + ",)"
    v = op._view_of[0]
    return "_wrap(_result)" if v is None else f"_view_of({names[v]}, _result)"


# -----------------------------------------------------------------------------------------------
# The plain case (_ops.Plain): in the kernel, the op's call and the public functions' entries
# -----------------------------------------------------------------------------------------------
def plain_guard(op, names, array):
    """The test that ``op``'s plain case applies: its guard on the arrays (``array(i)``: the
    expression of tensor argument ``i``'s array), the other arguments at their defaults (``names``:
    their expressions, by position)."""
    args = op._schema.arguments
    tensors = [array(i) for i, a in enumerate(args) if a.is_tensor]
    defaults = [f"{names[i]} is _D[{i}]" for i, a in enumerate(args) if not a.is_tensor]
    return " and ".join(defaults + [op._plain.guard.format(*tensors)])


def plain_expression(op, array):
    """``op``'s plain case's expression on the arrays ``array(i)``."""
    args = op._schema.arguments
    return op._plain.expression.format(**{a.name: array(i) for i, a in enumerate(args) if a.is_tensor})


def plain_kernel(op, schema, general, plain):
    """``op``'s kernel (``op.kernel``): its plain case inline (see ``_ops.Plain``), else ``general``,
    the kernel given to ``defop``. Written when the op is declared."""
    args = schema.arguments
    names, sig, call, _ = _call_parts(args)
    name = getattr(general, "__name__", "kernel")
    op_view = types.SimpleNamespace(_schema=schema, _plain=plain)
    lines = [f"def {name}({', '.join(sig)}):",
             f"    if {plain_guard(op_view, names, lambda i: names[i])}:",
             f"        return {plain_expression(op_view, lambda i: names[i])}",
             f"    return _general({call})"]
    ns = dict(_plain_helpers())
    ns.update(plain.names, _general=general, _D=tuple(a.default for a in args),
              __name__=getattr(general, "__module__", None) or __name__)   # (NumPy's warnings: see install_call)
    source = "\n".join(lines) + "\n"
    _compile(source, f"<glasstorch: aten.{op.__name__} kernel>", ns)
    kernel = ns[name]
    kernel.__module__ = getattr(general, "__module__", None)    # (device_rule reads it: element-wise or not)
    kernel.__qualname__ = getattr(general, "__qualname__", name)
    kernel._source = source
    return kernel


def entry_lines(op, params, indent="    "):
    """The lines that put ``op``'s plain case at the top of a public function whose body, given
    Tensors, is a call of ``op`` (``torch.add``, ``Tensor.__add__``: ``overridable(direct=op)``), and
    the names they use. ``params``: the public function's parameter names, one per argument of
    ``op``, in its order. The seam's prelude follows them (``_seam._write_prelude``).

    With nothing installed anywhere (``ANYWHERE.detour``: no function mode, no Tensor subclass alive, no
    dispatch mode, no CPU autocast, one device, no thread in inference mode), the Tensor arguments of
    exactly ``Tensor``, the others at their defaults, the arrays in the plain case's guard: what ``op``'s generated call does in
    that case, in the same frame -- the expression, ``_tensor._wrap``'s lines, the node recorded
    (``record_lines``) -- so that ``h + b`` is one Python frame, not six (the prelude, the public body,
    the op's call, its kernel, the guard, the wrap). Anything else goes on to the prelude's line,
    which does what it did. The generated call's other steps have nothing to do in this case: no
    meta array took part (``_meta_touched``), the kernel raises nothing, a dtype is kept."""
    args = op._schema.arguments
    if op._plain is None:
        raise TypeError(f"overridable(direct={op!r}): the op declares no plain case (defop(plain=...))")
    if len(params) != len(args) or any(a.is_tensor_list for a in args):
        raise TypeError(f"overridable(direct={op!r}): the function's parameters {params} are not the op's "
                        f"{[a.name for a in args]}")
    tensors = [(i, p) for i, (a, p) in enumerate(zip(args, params)) if a.is_tensor]
    inner = indent + "    "
    lines = [indent + "if not _ANYWHERE.detour and "
             + " and ".join(f"type({p}) is _Tensor" for _, p in tensors) + ":"]
    lines += [inner + f"_a{i} = {p}._data" for i, p in tensors]
    keys = op._plain.keys
    if keys is None:
        lines.append(inner + f"if {plain_guard(op, params, lambda i: f'_a{i}')}:")
        facts = ["_out._layout_of = None"]
    else:
        # the guard asked of the Tensors' layout keys (_ops.Keys): each kept beside its array, valid while
        # that array is the Tensor's (``_layout_of``), else found now and kept (_tensor.layout_facts)
        lines += [inner + f"_k{i} = {p}._layout if {p}._layout_of is _a{i} else _layout_facts({p})" for i, p in tensors]
        test = "(" + keys.test.format(*(f"_k{i}" for i, _ in tensors)) + ")"
        defaults = [f"{params[i]} is _D[{i}]" for i, a in enumerate(args) if not a.is_tensor]
        if keys.result is not None:     # the result's key: a false value where the keys do not decide
            lines.append(inner + f"_ko = {test} and {keys.result.format(*(f'_k{i}' for i, _ in tensors))}")
            test = "_ko"
        cond = test if keys.exact else f"({test} or {op._plain.guard.format(*(f'_a{i}' for i, _ in tensors))})"
        lines.append(inner + f"if {' and '.join(defaults + [cond])}:")
        facts = (["_out._layout_of = None"] if keys.result is None else
                 ["_out._layout_of = _result", "_out._layout = _ko"] if keys.exact else
                 ["_out._layout_of = _result if _ko else None", "_out._layout = _ko"])
    # (a 0-d result comes back from NumPy as a scalar; where the keys decide, the result's key says
    # whether it is 0-d, one slot read where the type test is two global reads and a call)
    scalar = "not _ko.shape and " if keys is not None and keys.exact and keys.result is not None else ""
    body = [f"_result = {plain_expression(op, lambda i: f'_a{i}')}",
            f"if {scalar}type(_result) is not _ndarray and isinstance(_result, _generic):",
            "    _result = _asarray(_result)   # (a 0-d result: a NumPy scalar)",
            *new_tensor_lines("_out", "_result", facts, "None")]   # (no inference mode anywhere: ANYWHERE.detour)
    if op.node is not None:
        edges = op.node._edge_positions
        # (grad mode first: under no_grad the inputs that require grad -- a model's parameters -- would not
        # settle it, while under grad mode an op's inputs mostly do require it, and are read anyway)
        body.append(f"if {_GRAD_ON} and ({' or '.join(f'{params[i]}._requires_grad' for i in edges)}):")
        if _inline_record(op.node):
            same = None if keys is None or keys.result is None else \
                " and ".join(["_ko"] + [f"_k{i} is _ko" for i in edges])
            # (keys that decide the plain case alone are real keys there: sizes and strides read from them)
            body += record_lines(op.node, lambda i: params[i], "    ", same,
                                 (lambda i: f"_k{i}") if keys is not None and keys.exact else None,
                                 [params[i] for i in edges])
        else:
            all_args = "(" + "".join(f"{p}, " for p in params) + ")"
            body.append(f"    _record(_op, {all_args}, [{''.join(params[i] + ', ' for i in edges)}], _out)")
    body.append("return _out")
    lines += [inner + "    " + b for b in body]
    from . import _tensor
    from ._seam import ANYWHERE
    names = dict(op._namespace)
    names.update(_op=op, _ANYWHERE=ANYWHERE, _asarray=xp.asarray, _layout_facts=_tensor.layout_facts,
                 __name__=names["__name__"] if "__name__" in names else __name__)   # (see install_call)
    return lines, names


def new_tensor_lines(var, data, facts, counter):
    """The lines that make ``var`` a new Tensor with no history around the array ``data``, with the
    layout-fact lines ``facts`` and the version counter ``counter`` (expressions): ``_tensor._wrap``'s
    steps written out."""
    return [f"{var} = _new(_Tensor)", *tensor_field_lines(var, data, facts, counter)]


def tensor_field_lines(var, data, facts, counter, requires_grad="False"):
    """The assignments that give the new object ``var`` every field of a Tensor with no history (the
    one list of them: ``_tensor._init``, ``_wrap`` and ``Tensor._alias`` are written from it too)."""
    return [f"{var}._data = {data}",
            *facts,
            f"{var}._requires_grad = {requires_grad}",
            f"{var}._grad_fn = None",
            f"{var}._grad = None",
            f"{var}._output_nr = 0",
            f"{var}._counter = {counter}",
            f"{var}._base = None",
            f"{var}._hooks = None",
            f"{var}._accumulator = None"]


def _plain_helpers():
    from ._ops import _CALL_HELPERS       # (here: _ops imports this module)
    return {k: _CALL_HELPERS[k] for k in ("_ndarray", "_FLOAT32", "_FLOAT64")}


class _GeneratedOnFirstUse:
    """A node class's attribute (``_record``, ``_run_formulas``, ``_source``) whose code is
    written and compiled the first time it is looked up. Compiling every op's call and every node's
    code at import was half of ``import glasstorch``'s time (~650 ``compile`` calls), while a
    program uses a few dozen ops. ``install`` compiles and replaces these descriptors with the plain
    attributes, so only the first lookup pays (two threads racing here both compile the same code)."""

    def __init__(self, install, name):
        self.install, self.name = install, name

    def __get__(self, obj, owner):
        self.install()
        return getattr(owner, self.name) if obj is None else getattr(obj, self.name)


def install_call(op, namespace):
    """Give ``op`` its ``__call__``, generated from its declaration and bound to it (``op._call``),
    its ``_source`` and the ``_namespace`` the code runs in. Called at the op's first call (or when
    ``op._source`` is first read), so that ``import glasstorch`` compiles nothing for the ~400 ops a
    program mostly never calls. (Two threads racing here both make the same code; the last one's
    stays.)

    The bound call goes into the op's ``__call__`` slot (``OpOverload``), which calling the op object
    calls; ``op._call`` is the way in for the hot public functions (``Tensor.add_``): calling the op
    object goes through its type's ``__call__`` slot, which packs keyword arguments into a dict
    (``op(x, y, alpha=2)``: about twice a plain call's cost); a bound method passes them on as they
    are. (Until the first call ``OpOverload._call`` stands in.)"""
    if "_namespace" in op.__dict__:
        return
    source = op_call_source(op)
    ns = dict(namespace)
    ns.update(_kernel=op.kernel, _D=op._defaults, _cls=op.node, _general=op.__dict__.get("_general_kernel"),
              _RESULT_SLOTS=result_slots(op.node) if op.node is not None else None,
              _record=op.node._record if op.node is not None and not op._inplace else None)
    if op._plain is not None:
        ns.update(op._plain.names)
        # (the plain case computes here: NumPy's floating-point warnings are named after this module,
        # which the filter of glasstorch/_array silences as glasstorch's own)
        ns["__name__"] = getattr(op._general_kernel, "__module__", None) or __name__
    _compile(source, f"<glasstorch: aten.{op.__name__}>", ns)
    op._source, op._namespace = source, ns
    op.__call__ = op._call = types.MethodType(ns["__call__"], op)
    packet = op._overloadpacket
    if packet is not None and packet._first is op:
        packet.__call__ = op._call      # (what calling the packet calls: see OpOverloadPacket)


# -----------------------------------------------------------------------------------------------
# The node: _record and _run_formulas
# -----------------------------------------------------------------------------------------------
class _Layout:
    """Where each tensor input's edges are, at generation time (constants) or at run time (after a
    ``Tensor[]`` input, whose length is known only then)."""

    def __init__(self, schema, edge_positions):
        args = schema.arguments
        self.position = {}      # input name -> argument position
        self.edges = {}         # input name -> (start expr, end expr)
        self.is_list = {}
        start, dynamic, setup = 0, False, []
        for p in edge_positions:
            a = args[p]
            self.position[a.name] = p
            self.is_list[a.name] = a.is_tensor_list
            if a.is_tensor_list:
                s = f"_s_{a.name}"
                setup.append(f"    {s} = {start}")
                end = f"({s} + len(_args[{p}]))"
                self.edges[a.name] = (s, end)
                start, dynamic = end, True
            else:
                self.edges[a.name] = (str(start), f"{start} + 1") if not dynamic else (start, f"{start} + 1")
                start = f"{start} + 1" if dynamic else start + 1
        self.setup = setup
        self.dynamic = dynamic

    def requires(self, name, source="_inputs"):
        a, b = self.edges[name]
        if not self.is_list[name]:
            return f"({source}[{a}] is not None and {source}[{a}]._requires_grad)"
        return f"any(_t is not None and _t._requires_grad for _t in {source}[{a}:{b}])"

    def needed(self, name):
        a, b = self.edges[name]
        if not self.is_list[name]:
            return f"(_e[{a}][0] is not None)"
        return f"any(_x[0] is not None for _x in _e[{a}:{b}])"


def _inline_record(cls):
    """Whether ``cls``'s recording can be written into its op's generated call (no ``_record`` call):
    one output, and inputs that are single Tensors (a ``Tensor[]`` input makes the edges' count vary)."""
    schema = cls._schema
    return not (schema.returns_list or schema.returns_tuple) and not _Layout(schema, cls._edge_positions).dynamic


def node_record_source(cls):
    """The source of ``cls._record(op, args, inputs, out)``: args are the call's arguments in schema
    order, inputs one Tensor-or-None per edge."""
    schema = cls._schema
    layout = _Layout(schema, cls._edge_positions)
    lines = ["def _record(_op, _args, _inputs, _out):"]
    if not layout.dynamic and not (schema.returns_list or schema.returns_tuple):
        lines += [f"    _i{k} = _inputs[{k}]" for k in range(len(layout.edges))]
        lines += record_lines(cls, lambda i: f"_args[{i}]", "    ")
        lines.append("    return _node")
        return "\n".join(lines) + "\n"
    lines.append("    _node = " + _new_node(cls))
    lines += layout.setup
    if layout.dynamic:
        ranges = ", ".join(f"{n!r}: ({a}, {b})" for n, (a, b) in layout.edges.items())
        lines.append(f"    _node._edge_ranges = {{{ranges}}}")
    need_lines = ["    _e = _node.next_functions"]
    # (after connect: an input with an edge -- torch's should_compute_output -- not merely one that
    # requires grad: a view made under no_grad has none, and its partner operand is not saved)
    for name in layout.edges:
        need_lines.append(f"    _r_{name} = {layout.needed(name)}")
    # outputs, and what the gradient must be brought back to for inputs of another shape/dtype
    if schema.returns_list:
        lines.append("    _outs = _out")
        lines.append("    _node.num_outputs = len(_out)")
        lines.append("    _ref = _outs[0]._data")
    elif schema.returns_tuple:   # the first defined output (an output may be undefined: None)
        lines.append("    _outs = _out")
        # (mostly the first: no generator made for it)
        lines.append("    _ref = (_outs[0] if _outs[0] is not None else next(_o for _o in _outs if _o is not None))._data")
    else:
        lines.append("    _outs = (_out,)")
        lines.append("    _ref = _out._data")
    lines.append("    _node._out_dtype = _ref.dtype")
    if layout.dynamic:      # (inputs counted per call: _input_meta's loop)
        lines += ["    _meta = _input_meta(_inputs, _ref)", "    if _meta is not None:", "        _node._input_meta = _meta"]
    else:
        lines += ["    " + line for line in _input_meta_lines(schema, [f"_inputs[{i}]" for i in range(len(layout.edges))])]
    diff = cls._output_differentiability
    if not (schema.returns_list or schema.returns_tuple):
        lines.append("    connect(_node, _inputs, _out)")
    elif diff is None:
        lines.append("    connect(_node, _inputs, tuple(_o if _differentiable(_o) else None for _o in _outs))")
    else:   # outputs torch declares not differentiable get no history
        outs = "".join(f"(_outs[{k}] if _differentiable(_outs[{k}]) else None), " if d else "None, "
                       for k, d in enumerate(diff))
        lines.append(f"    connect(_node, _inputs, ({outs}))")
    lines += need_lines
    lines += _saved_lines(cls, lambda i: f"_args[{i}]", "    ")
    lines.append("    return _node")
    return "\n".join(lines) + "\n"


def _input_meta_lines(schema, inputs, known=False):
    """record_lines' lines that keep, on ``_node``, the shape and dtype of an input that differs from
    the output's (``_ref``'s): what the engine reduces or casts its gradient to. ``inputs``: the
    inputs' expressions; ``known``: they are Tensors (else each may be None)."""
    if not inputs:
        return []
    some = "" if known else "{0} is not None and "
    lines = []
    # mostly every input has the output's shape and dtype: said inline, without _input_meta's call
    # and loop (which then decides, for an input that differs, whether it requires grad)
    differs = " or ".join(f"({some.format(t)}({t}._data.shape != _shape or {t}._data.dtype != _dt))"
                          for t in inputs)
    meta = ["_shape, _dt = _ref.shape, _node._out_dtype",
            f"if {differs}:"] + ["    " + line for line in _meta_lines(inputs, known)]
    if all(alias for _, alias in schema.returns) and not schema.mutates:
        # a view op's formula gives its input's own shape: the engine has nothing to reduce, and only
        # a view with another dtype (view_as_real) needs the input's dtype kept, to cast its gradient
        # back (an in-place op, Tensor(a!), is no view: copy_'s source may have been broadcast)
        other_dtype = " or ".join(f"({some.format(t)}{t}._data.dtype != _ref.dtype)" for t in inputs)
        lines.append(f"if {other_dtype}:")
        lines += ["    " + m for m in meta]
    else:
        lines += meta
    return lines


def _meta_lines(inputs, known=False):
    """``autograd.graph._input_meta`` written out for the inputs ``inputs`` (expressions, each a
    Tensor or -- unless ``known`` -- None), from the output's ``_shape`` and ``_dt``: no call, no
    loop over a list (a Linear's addmm differs from its output in all three inputs' shapes)."""
    n = len(inputs)
    lines = ["_meta = ("]
    for t in inputs:
        some = "" if known else f"{t} is not None and "
        lines.append(f"    ({t}._data.shape, _BY_NUMPY[{t}._data.dtype]) if {some}{t}._requires_grad "
                     f"and ({t}._data.shape != _shape or {t}._data.dtype != _dt) else None,")
    lines += [")",
              f"if _meta != {(None,) * n!r}:",
              "    _node._input_meta = _meta"]
    return lines


def _new_node(cls):
    """The expression that makes a node of ``cls`` in the generated code. A class with neither its own
    ``__new__`` nor ``__init__`` (every op's node class) is called: CPython then makes the object
    without the argument tuple ``object.__new__(cls)`` is called with (~300 instructions less a node)."""
    if type(cls) is type and cls.__new__ is object.__new__ and cls.__init__ is object.__init__:
        return "_cls()"
    return "_new(_cls)"


def record_lines(cls, arg, indent, same_keys=None, key=None, inputs=None):
    """The lines that record a node of ``cls`` (one output ``_out``, single-Tensor inputs ``_i0``,
    ``_i1``... -- None for an argument that is no Tensor -- and argument ``i`` read as ``arg(i)``),
    leaving it in ``_node``: ``connect``'s work written out for this op's inputs (each edge as
    ``autograd.graph.edge_of`` finds it) and what the formulas read saved. Used by ``_record`` and
    written into the op's generated call, where the recording is most of autograd's cost per op.

    ``same_keys``: a condition that says, from the layout keys of a one-frame entry
    (``entry_lines``), that every input has the output's shape and dtype (the key ``_ko``'s): then
    no array is asked. ``key``: see ``_saved_lines``. ``inputs``: the inputs' expressions where
    each is known to be a plain ``Tensor`` (a one-frame entry's parameters, which its guard says
    are): no test for None, nor for another type where a saved input's version is read."""
    schema = cls._schema
    layout = _Layout(schema, cls._edge_positions)
    n_inputs = len(layout.edges)
    known = inputs is not None
    if not known:
        inputs = [f"_i{k}" for k in range(n_inputs)]
    lines = ["_node = " + _new_node(cls)]
    head = ["_ref = _out._data", "_node._out_dtype = _ref.dtype"] + _input_meta_lines(schema, inputs, known)
    if same_keys is not None:
        lines += [f"if {same_keys}:   # (the layout keys say so: every input is of the output's shape and dtype)",
                  "    _node._out_dtype = _ko.dtype",
                  "else:"] + ["    " + line for line in head]
    else:
        lines += head
    # the edges (connect / edge_of, written out per input), and whether each input has one (torch's
    # should_compute_output -- not merely whether it requires grad: a view made under no_grad has
    # none, and its partner operand is not saved): an op's result and a leaf always have one
    for k, (t, name) in enumerate(zip(inputs, layout.edges)):
        lines += [f"if {'' if known else f'{t} is None or '}not {t}._requires_grad:",
                  f"    _e{k} = _NO_EDGE",
                  f"    _r_{name} = False",
                  "else:",
                  f"    _fn = {t}._grad_fn",
                  f"    if {t}._base is not None and (_fn is None or {t}._attr_version != {t}._vc.version):",
                  f"        _e{k} = _view_edge({t})   # a view made under no_grad, or one to re-derive from its base",
                  f"        _r_{name} = _e{k}[0] is not None",
                  "    elif _fn is None:   # a leaf: its AccumulateGrad, while one is alive, else a new one",
                  f"        _e{k} = (_a if (_a := {t}._accumulator) is not None and (_a := _a()) is not None "
                  f"else {t}._grad_accumulator(), 0)",
                  f"        _r_{name} = True",
                  "    else:",
                  f"        _e{k} = (_fn, {t}._output_nr)",
                  f"        _r_{name} = True"]
    lines += [f"_node.next_functions = ({''.join(f'_e{k}, ' for k in range(n_inputs))})",
              "_node._seq = next(_seqs)",
              "if _anomaly.enabled:",
              "    _node._anomaly_trace = _forward_trace()",
              "_out._grad_fn = _node",
              "_out._requires_grad = True"]
    return [indent + line for line in lines] + _saved_lines(cls, arg, indent, key, known)


def _saved_lines(cls, arg, indent, key=None, known=False):
    """The lines that save, on ``_node``, what the formulas of the inputs that need a gradient read
    (``_r_<input>``: whether it does; argument ``i`` read as ``arg(i)``, outputs from ``_outs``
    or, for one output, ``_out``). ``key``: where a one-frame entry holds argument ``i``'s layout key
    (``key(i)``, ``entry_lines``), its sizes and a dense one's strides are read from the key.
    ``known``: every Tensor argument is a plain ``Tensor`` (``record_lines``' ``inputs``)."""
    schema = cls._schema
    table = cls._formula_table
    single = not (schema.returns_list or schema.returns_tuple)
    layout_key = key
    lines = []
    need = []       # per formula: whether it runs (a name; one input's is its ``_r_`` itself)
    for k, (names, _, _, _) in enumerate(table):
        if len(names) == 1:
            need.append(f"_r_{names[0]}")
        else:
            need.append(f"_need{k}")
            lines.append(f"_need{k} = {' or '.join('_r_' + n for n in names)}")
    # parameters the needed formulas read (per formula: its lines, and those when it is not needed)
    blocks = []
    for k, (names, _, _, specs) in enumerate(table):
        body = []
        for kind, key in specs:
            if kind == "value":
                body.append(f"_node._saved_{key} = {arg(cls._op_arg_index[key])}")
            elif kind == "sizes" and key not in cls._list_inputs and layout_key is not None:
                body.append(f"_node._saved_{key}_sym_sizes = {layout_key(cls._op_arg_index[key])}.shape")
            elif kind == "sizes" and key not in cls._list_inputs:   # (inline: mm saves two per call)
                body.append(f"_node._saved_{key}_sym_sizes = tuple({arg(cls._op_arg_index[key])}._data.shape)")
            elif kind == "sizes":
                body.append(f"_node._saved_{key}_sym_sizes = _sizes({arg(cls._op_arg_index[key])})")
            elif kind == "strides" and layout_key is not None:
                k_ = layout_key(cls._op_arg_index[key])
                body.append(f"_node._saved_{key}_sym_strides = {k_}.strides or _strides({arg(cls._op_arg_index[key])})")
            elif kind == "strides":
                body.append(f"_node._saved_{key}_sym_strides = _strides({arg(cls._op_arg_index[key])})")
            elif kind == "numel":
                body.append(f"_node._saved_{key}_sym_numel = {arg(cls._op_arg_index[key])}._data.size")
            elif kind == "dtype":
                body.append(f"_node._saved_{key}_dtype = {arg(cls._op_arg_index[key])}.dtype")
            elif kind == "device":
                body.append(f"_node._saved_{key}_device = {arg(cls._op_arg_index[key])}.device")
            elif kind == "geometry":
                body.append(f"_node._saved_{key}_geometry = _geometry({arg(cls._op_arg_index[key])})")
        blocks.append((body, []))
    # the saved tensors, and the version each is saved at. A plain Tensor's version is read inline:
    # 0 while it has no counter (saving it does not make one), else a plain counter's count (compared
    # by type: ``inference`` and a fresh counter's ``version`` are class attributes, which CPython
    # 3.11 reads unspecialised, ~370 instructions each). Nothing saved -- an absent ``Tensor?`` such
    # as nll_loss's weight -- is at 0; anything else -- a number, a list, a subclass, an inference
    # tensor, which may not be saved -- goes through _version.
    slots, versioned, after = [], set(), []
    for slot, name in enumerate(cls.saved_names):
        readers = [k for k, (_, _, _, specs) in enumerate(table) if ("tensor", name) in specs]
        guard = _save_guard(cls, schema, table, name, readers)
        cond = None if guard is None else need[guard]
        v = f"_v{slot}"
        if name in cls._out_names and single:
            # The op's one result: a new tensor (_wrap's) that no other thread has seen yet, or a view,
            # which has its base's counter. The alias must share a counter; a new result's is made here,
            # without make_counter's lock (~0.9 k instructions less per op that saves its result), and
            # is at version 0. (Tensor._alias written out: one frame fewer for every op that saves its result)
            save = ["_c = _out._counter",
                    "if _c is None:   # (a new result: see _saved_lines)",
                    "    _c = _NewCounter()",
                    "    _c.version = 0   # (an instance attribute: see _tensor._VersionCounter)",
                    "    _out._counter = _c",
                    f"    {v}_version = 0",
                    "else:",
                    f"    {v}_version = _c.version if type(_c) is _NewCounter else _version(_out)",
                    *new_tensor_lines(v, "_out._data", [f"{v}._layout_of = None"], "_c")]
            after += [f"if {cond}:"] + ["    " + x for x in save] + ["else:", f"    {v} = None", f"    {v}_version = 0"] \
                if cond else save
            versioned.add(v)
        elif name in cls._out_names:
            nr = cls._out_names.index(name)
            expr = f"_alias(_outs[{nr}])" if not schema.returns_tuple else \
                f"(_alias(_outs[{nr}]) if _outs[{nr}] is not None else None)"   # (an undefined output)
            after.append(f"{v} = {expr} if ({cond}) else None" if cond else f"{v} = {expr}")
        elif known and schema.arguments[cls._op_arg_index[name]].is_tensor:
            expr = arg(cls._op_arg_index[name])
            save = [f"{v} = {expr}",
                    f"{v}_version = 0 if (_c := {expr}._counter) is None else _c.version "
                    f"if type(_c) is _NewCounter else _version({expr})"]
            if guard is None:
                after += save
            else:   # (with the parameters its formula reads: one test)
                blocks[guard][0].extend(save)
                blocks[guard][1].extend([f"{v} = None", f"{v}_version = 0"])
            versioned.add(v)
        else:
            expr = arg(cls._op_arg_index[name])
            after.append(f"{v} = {expr} if ({cond}) else None" if cond else f"{v} = {expr}")
        slots.append(v)
    for k, (body, orelse) in enumerate(blocks):
        if body:
            lines.append(f"if {need[k]}:")
            lines += ["    " + b for b in body]
            if orelse:
                lines += ["else:"] + ["    " + b for b in orelse]
    lines += after
    if slots:
        tup = "(" + "".join(s + ", " for s in slots) + ")"
        lines.append(f"_node._saved = {tup}")
        for s in slots:
            if s not in versioned:
                lines += [f"if type({s}) is _Tensor:",
                          f"    _c = {s}._counter",
                          f"    {s}_version = 0 if _c is None else _c.version if type(_c) is _NewCounter else _version({s})",
                          f"elif {s} is None:",
                          f"    {s}_version = 0",
                          "else:",
                          f"    {s}_version = _version({s})"]
        versions = "".join(f"{s}_version, " for s in slots)
        if versioned.issuperset(slots):
            # (Tensors' versions, ints: mostly all 0, and then a constant, no tuple made and freed per node)
            # (compared with 0, not truth-tested: CPython specialises an int comparison, not an int's truth)
            lines.append(f"_node._versions_at_save = {(0,) * len(slots)!r} if "
                         f"{' and '.join(f'{s}_version == 0' for s in slots)} else ({versions})")
        else:
            lines.append(f"_node._versions_at_save = ({versions})")
        if result_slots(cls):
            lines.append("_node._result_slots = _RESULT_SLOTS")
    return [indent + line for line in lines]


def result_slots(cls):
    """{slot of ``_saved``: output number} for the outputs a node of ``cls`` saves that are read with
    their history in double backward (the generated code's ``_RESULT_SLOTS``; None when none)."""
    results = {}
    for slot, name in enumerate(cls.saved_names):
        if name in cls._out_names:
            nr = cls._out_names.index(name)
            if cls._output_differentiability is None or cls._output_differentiability[nr]:
                results[slot] = nr
    return results or None


def _save_guard(cls, schema, table, name, readers):
    """The formula (its index in the table) whose input's need the node keeps saved tensor ``name``
    for -- None: always, as torch's codegen (gen_variable_type.py, guard_for) decides: only an input of an op with more than one
    differentiable input, a plain Tensor read by exactly one formula for one input, is kept just
    when that input has an edge (``x * y`` keeps ``x`` only for ``y``'s gradient). A result, the
    input of a one-input op (``exp``, ``max``), or a ``*_backward`` op's input is always kept, so
    modifying it in place is an error at backward even when no gradient flows back to the input."""
    if name in cls._out_names or "backward" in schema.name or len(readers) != 1:
        return None
    args = schema.arguments
    if any(a.is_tensor_list for a in args) or args[cls._op_arg_index[name]].type != "Tensor":
        return None
    if len({n for names, _, _, _ in table for n in names}) <= 1 or len(table[readers[0]][0]) != 1:
        return None
    return readers[0]


# A formula written as a one-expression lambda (most are) is written into ``_run_formulas`` as its
# expression, its parameters replaced by what the call would have passed: the backward then makes no
# frame for it (~1 k instructions per formula and node). The formula stays what the table holds and
# what everything else calls (compile's derived backward, ``node.backward``); its text is found from
# the positions its code records, and used only if that text compiles to the very same code. The
# names it reads from its module (``conj``, ``aten``, helpers) are bound when the node class is
# generated, as ``_g<k>_<name>``: the op modules' functions and modules, which nothing rebinds.
_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.NamedExpr, ast.Await,
           ast.Yield, ast.YieldFrom)
_lambda_cache = {}


def _lambda_parts(fn):
    """(parameter names, body expression AST, {global name: value}) of a formula that is a plain
    one-expression lambda whose source is at hand, else None."""
    try:
        return _lambda_cache[fn]
    except (KeyError, TypeError):
        pass
    parts = _read_lambda(fn)
    try:
        _lambda_cache[fn] = parts
    except TypeError:
        pass
    return parts


def _read_lambda(fn):
    code = getattr(fn, "__code__", None)
    if code is None or getattr(fn, "__name__", None) != "<lambda>" or code.co_freevars or code.co_cellvars \
            or fn.__defaults__ or fn.__kwdefaults__ or code.co_kwonlyargcount or code.co_flags & 0x0C:
        return None
    lines = linecache.getlines(code.co_filename)
    spans = [p for p in code.co_positions() if None not in p and p[2:] != (0, 0)]
    if not lines or not spans:
        return None
    first, col = min((p[0], p[2]) for p in spans)
    last, end = max((p[1], p[3]) for p in spans)
    if last > len(lines):
        return None
    chunk = [line.encode() for line in lines[first - 1:last]]     # (the offsets count UTF-8 bytes)
    chunk[-1] = chunk[-1][:end]
    chunk[0] = chunk[0][col:]
    text = "(" + b"".join(chunk).decode() + ")"
    params = code.co_varnames[:code.co_argcount]
    try:
        body = ast.parse(text, mode="eval").body
        twin = compile(f"lambda {', '.join(params)}: {text}", code.co_filename, "eval")
    except SyntaxError:
        return None
    twin = next((c for c in twin.co_consts if isinstance(c, types.CodeType)), None)
    if twin is None or _instructions(twin) != _instructions(code) or (twin.co_consts, twin.co_varnames) != \
            (code.co_consts, code.co_varnames):
        return None
    if any(isinstance(n, _SCOPES) for n in ast.walk(body)):
        return None
    names = {}
    for n in ast.walk(body):
        if isinstance(n, ast.Name) and n.id not in params:
            if n.id in fn.__globals__:
                names[n.id] = fn.__globals__[n.id]
            elif hasattr(builtins, n.id):
                names[n.id] = getattr(builtins, n.id)
            else:
                return None     # (not defined yet: the lambda looks it up at each call)
    return params, body, names


def _instructions(code):
    # (a method call compiles to LOAD_METHOD, or to LOAD_ATTR where the compiler's context says so:
    # the same call either way)
    return [("LOAD_ATTR" if i.opname == "LOAD_METHOD" else i.opname, i.argrepr.replace("NULL + ", ""))
            for i in dis.get_instructions(code)]


class _Inline(ast.NodeTransformer):
    def __init__(self, args, k, names):
        self.args, self.k, self.names, self.temps = args, k, names, 0

    def visit_Name(self, node):
        if node.id in self.args:
            return ast.parse(self.args[node.id], mode="eval").body
        return ast.Name(f"_g{self.k}_{node.id}", node.ctx)

    def visit_Call(self, node):
        # a helper that declares the case where it returns its one argument as it is (``conj`` of a
        # real array: ``_array_identity``, a guard on ``{0}``) is asked that guard inline, and called
        # only when it fails
        f = node.func
        guard = getattr(self.names.get(f.id), "_array_identity", None) if isinstance(f, ast.Name) \
            and f.id not in self.args else None
        node = self.generic_visit(node)
        if guard is None or len(node.args) != 1 or node.keywords or isinstance(node.args[0], ast.Starred):
            return node
        self.temps += 1
        temp = f"_x{self.k}_{self.temps}"
        # (the argument is computed once: its first mention in the guard names it)
        test = guard.replace("{0}", f"({temp} := {ast.unparse(node.args[0])})", 1).replace("{0}", temp)
        test = ast.parse(test, mode="eval").body
        node.args[0] = ast.Name(temp, ast.Load())
        return ast.IfExp(test, ast.Name(temp, ast.Load()), node)


def inline_formula(fn, call, k):
    """The expression of formula ``k`` (``fn``) with its parameters replaced by ``call``'s argument
    texts, or None when it is called (see ``_lambda_parts``)."""
    parts = _lambda_parts(fn)
    if parts is None:
        return None
    params, body, names = parts
    return ast.unparse(_Inline(dict(zip(params, call)), k, names).visit(copy.deepcopy(body))),


def node_run_source(cls):
    """The source of ``cls._run_formulas(node, grads, arrays, free=False)``; ``free``: release the saved
    values once the formulas have read them (the engine's step 4 without ``retain_graph``, done here, where
    the node's class is known: the engine's attribute reads at one place see every class of node, which
    CPython 3.11 does not specialise, ~300 instructions each)."""
    schema = cls._schema
    layout = _Layout(schema, cls._edge_positions)
    table = cls._formula_table
    lines = ["def _run_formulas(_node, grads, _arrays, _free=False):",
             "    _e = _node.next_functions",
             "    _gin = [None] * len(_e)"]
    if schema.returns_list or schema.returns_tuple:
        # the engine makes a slot for each output up to the last one given a gradient (engine._run): the
        # formulas read them all
        lines += ["    if len(grads) < _node.num_outputs:",
                  "        grads = grads + [None] * (_node.num_outputs - len(grads))"]
    if layout.dynamic:
        lines.append("    _rg = _node._edge_ranges")
        for n in layout.edges:
            a = f"_rg[{n!r}][0]"
            b = f"_rg[{n!r}][1]"
            layout.edges[n] = (a, b)
    name_needed = {}
    for n in layout.edges:
        lines.append(f"    _n_{n} = {layout.needed(n)}")
        name_needed[n] = f"_n_{n}"
    reads_tensors = any(kind == "tensor" for _, _, _, specs in table for kind, _ in specs)
    if reads_tensors:
        # torch's generated apply() unpacks every saved variable first, whichever gradients are asked
        # for: a saved tensor modified in place raises even when no formula would have read it
        names = cls.saved_names
        if schema.returns_list or any(n in cls._list_inputs for n in names):
            lines.append("    _v = _node._unpack_values(_arrays)")
        else:
            # the usual backward (arrays) unpacks inline what FormulaNode._unpack_values does for a
            # saved value that is no list -- None, a number (version -1) or a tensor, version-checked
            # -- without its call, list and loop (~1.5 k instructions per node)
            lines += ["    if _arrays:",
                      "        _s = _node._saved",
                      "        if _s is None:",
                      "            raise RuntimeError(_FREED_MESSAGE)",
                      "        _sv = _node._versions_at_save"]
            for i in range(len(names)):
                # (a tensor with no counter yet is at version 0: reading it does not make one)
                lines += [f"        _t{i} = _s[{i}]",
                          f"        if _t{i} is not None and _sv[{i}] != -1:",
                          f"            _c = _t{i}._counter",
                          f"            if (0 if _c is None else _c.version) != _sv[{i}] or _t{i}._output_nr < 0:"
                          "   # (modified, or detached in place)",
                          "                _check_all_saved(_node, _s, _sv)",
                          f"            _t{i} = _t{i}._data"]
            lines += ["        _v = (" + "".join(f"_t{i}, " for i in range(len(names))) + ")",
                      "    else:",
                      "        _v = _node._unpack_values(False)"]
    lines.append("    grad = grads[0]")
    for k, (names, fn, joint, specs) in enumerate(table):
        need = " or ".join(name_needed[n] for n in names)
        call = []
        reads_grad = False
        for kind, key in specs:
            if kind == "grad":
                call.append("grad")
                reads_grad = True
            elif kind == "grads":
                call.append("grads")
            elif kind == "output_mask":
                call.append("(" + "".join(name_needed[n] + ", " for n in names) + ")")
            elif kind == "tensor":
                call.append(f"_v[{cls.saved_names.index(key)}]")
            elif kind == "value":
                call.append(f"_node._saved_{key}")
            elif kind in ("sizes", "strides"):
                call.append(f"_node._saved_{key}_sym_{kind}")
            elif kind == "numel":
                call.append(f"_node._saved_{key}_sym_numel")
            else:                       # dtype, device, geometry
                call.append(f"_node._saved_{key}_{kind}")
        cond = f"({need})" + (" and grad is not None" if reads_grad else "")
        lines.append(f"    if {cond}:")
        inlined = inline_formula(fn, call, k)
        lines.append(f"        _r = {inlined[0] if inlined else f'_f{k}(' + ', '.join(call) + ')'}")
        parts = [(names[0], "_r")] if not joint else [(n, f"_r[{j}]") for j, n in enumerate(names)]
        for n, expr in parts:
            a, b = layout.edges[n]
            if layout.is_list[n]:
                lines.append(f"        if {expr} is not None:")
                lines.append(f"            _gin[{a}:{b}] = list({expr})")
            else:
                lines.append(f"        _gin[{a}] = {expr}")
    covered = {n for names, _, _, _ in table for n in names}
    # an input with no formula: torch's error when its gradient is needed -- its NotImplemented node
    # (an op without derivatives) names the op, a not_implemented("...") formula names what it says,
    # mostly the op too
    message = f"derivative for aten::{schema.name} is not implemented" if cls.__name__ == "NotImplemented" \
        else f"the derivative for '{schema.name}' is not implemented."
    for n in layout.edges:
        if n not in covered:
            lines.append(f"    if {name_needed[n]}:")
            lines.append(f"        raise RuntimeError({message!r})")
    if cls.saved_names:
        lines += ["    if _free:",
                  "        _node._saved = None"]
    lines.append("    return _gin")
    return "\n".join(lines) + "\n"


def install_node(cls, helpers):
    """Give node class ``cls`` its ``_record`` and ``_run_formulas``, generated from its formula table
    at their first use (see ``_GeneratedOnFirstUse``)."""

    def install():
        if "_run_formulas" in cls.__dict__ and not isinstance(cls.__dict__["_run_formulas"], _GeneratedOnFirstUse):
            return
        ns = dict(helpers)
        # (__name__: the formulas written out here compute here, and NumPy's floating-point warnings are
        # named after this module, which the filter of glasstorch/_array silences as glasstorch's own)
        ns.update(_cls=cls, connect=connect, _RESULT_SLOTS=result_slots(cls), _ndarray=xp.ndarray,
                  __name__=__name__)
        for k, (_, fn, _, _) in enumerate(cls._formula_table):
            ns[f"_f{k}"] = fn
            inlined = _lambda_parts(fn)
            if inlined is not None:
                ns.update({f"_g{k}_{name}": value for name, value in inlined[2].items()})
        source = node_record_source(cls) + "\n\n" + node_run_source(cls)
        _compile(source, f"<glasstorch: {cls.__name__}>", ns)
        cls._record, cls._run_formulas, cls._source = staticmethod(ns["_record"]), ns["_run_formulas"], source

    for name in ("_record", "_run_formulas", "_source"):
        setattr(cls, name, _GeneratedOnFirstUse(install, name))
