"""Memory planning for the generated code: liveness, buffer reuse, and element-wise chains fused
into NumPy ``out=`` calls.

The code generator describes each line of a generated function as a :class:`Stmt` before writing
it: an element-wise ufunc (``np.multiply(a, b)``), a matmul, or any other expression (a kernel
call, a view, a formula). :func:`plan` then walks the lines in order, knowing when each value is
read for the last time (its *liveness*), and decides where each element-wise result and each
matmul goes:

* into an operand's array, when that operand dies on this line and the generated code owns it
  (``relu = np.maximum(addmm, _c2, out=addmm)``): an element-wise *chain* -- ``add``, ``mul``,
  ``tanh`` one after the other, or the three ufuncs of ``g * (1 - r * r)`` -- then runs in one
  buffer, with no intermediate array allocated;
* else into a dead array of the same shape and dtype (``out=g_mm_3``), one some earlier line made
  and no live value can reach any more (the *pool*);
* else a new array, as NumPy allocates it.

A gradient added up from several uses (``g_w = g_w + ...``) becomes ``g_w += _t4`` with the term
computed into a dead buffer: the backward of a weight read 50 times allocates nothing per use.

What is never written into: the function's inputs (parameters, arguments, the backward's saved
values and incoming gradients -- autograd may run a backward twice with ``retain_graph``), what the
function returns or saves, arrays made by code the planner cannot see into (a kernel, a formula,
an eager island: their results are treated as views of everything they read, and the island's
context keeps its inputs), and an array while any view of it lives. A buffer takes a result only
when shape, dtype and row-major layout agree with the array NumPy would have made, so the values
are bit for bit those of the plain expression (tests/test_compile.py pins them against eager).
"""
import re

_NAME = re.compile(r"(?<![.\w'\"])[A-Za-z_]\w*")
# ufuncs whose every element is one correctly rounded operation: the same bits in any memory order,
# so in the backward their result may go into a row-major buffer whatever the operands' layout
_EXACT = {"np.add", "np.subtract", "np.multiply", "np.divide", "np.negative"}


class U:
    """An element-wise ufunc applied to operands (source strings or nested ``U``): a lowered
    derivative such as ``U("np.multiply", g, U("np.subtract", "1", U("np.multiply", r, r)))``.
    Every array in the tree has the shape and dtype of its result."""
    __slots__ = ("ufunc", "operands")

    def __init__(self, ufunc, *operands):
        self.ufunc, self.operands = ufunc, operands

    def source(self):
        return f"{self.ufunc}({', '.join(o.source() if isinstance(o, U) else o for o in self.operands)})"


class Reshape(str):
    """A source string ``name.reshape(shape)``: when ``name`` is the generated code's own row-major array,
    the result is that array under another shape, and the planner treats it as the array itself (an
    element-wise op may run in it once nothing else reads it); otherwise, as any expression, a view of
    what it reads."""
    __slots__ = ()


class Stmt:
    """One line of generated code.

    ``kind``: ``"ufunc"`` (element-wise: ``ufunc(*operands)``, may take ``out=``), ``"matmul"``
    (``operands[0] @ operands[1]``, may take a dead buffer as ``out=``) or ``"text"`` (``text``,
    the right-hand side; with no targets, a whole line such as ``return``). ``shape``/``dtype``:
    the result's, where known. ``owned``: a ``"text"`` result is a new array (else it is taken to
    be a view of whatever it reads). ``row_major``: the result is C-contiguous (for ``"ufunc"``:
    the result NumPy would make is, given the operands'; the planner checks the operands too).
    ``expr``: how to write a ``"ufunc"``/``"matmul"`` that gets no buffer (``a + b``). ``reshape``: a
    ``"text"`` that reshapes the one value it reads (see :class:`Reshape`)."""
    __slots__ = ("targets", "kind", "ufunc", "operands", "text", "shape", "dtype", "owned", "row_major", "comment",
                 "expr", "any_layout", "reshape")

    def __init__(self, targets, kind="text", text=None, ufunc=None, operands=(), shape=None, dtype=None, owned=False,
                 row_major=False, comment="", expr=None, any_layout=False, reshape=False):
        self.targets = [targets] if isinstance(targets, str) else list(targets)
        self.kind, self.text, self.ufunc, self.operands = kind, text, ufunc, tuple(operands)
        self.shape = tuple(shape) if shape is not None else None
        self.dtype, self.owned, self.row_major, self.comment, self.expr = dtype, owned, row_major, comment, expr
        self.any_layout = any_layout     # the result may be laid out row-major whatever its operands' layout
        self.reshape = reshape or isinstance(text, Reshape)

    def plain_source(self):
        if self.kind == "text":
            return self.text
        if self.expr is not None:
            return self.expr
        if self.kind == "matmul":
            return f"{self.operands[0]} @ {self.operands[1]}"
        return f"{self.ufunc}({', '.join(self.operands)})"


def flatten(expr, target, shape, dtype, temp, comment=""):
    """Statements computing ``expr`` (a source string or a :class:`U` tree) into ``target``; the
    inner ufuncs of the tree become temporaries named by ``temp()``."""
    if isinstance(expr, Reshape):
        return [Stmt(target, text=expr, comment=comment, shape=shape, dtype=dtype)]
    if not isinstance(expr, U):
        return [Stmt(target, text=expr, comment=comment)]
    stmts = []
    operands = []
    for o in expr.operands:
        if isinstance(o, U):
            name = temp()
            stmts += flatten(o, name, shape, dtype, temp)
            operands.append(name)
        else:
            operands.append(o)
    kind = "matmul" if expr.ufunc == "np.matmul" else "ufunc"
    stmts.append(Stmt(target, kind, ufunc=expr.ufunc, operands=operands, shape=shape, dtype=dtype, comment=comment,
                      row_major=True,        # (row-major operands give a row-major result: checked when planned)
                      any_layout=expr.ufunc in _EXACT))
    return stmts


class _Buffer:
    """An array the generated code made: its shape, dtype and layout, the values that may alias it
    (still live), and the names bound to it, each with the shape it sees the array in (a reshape of
    the array is bound to it too; ``out=<name>`` needs a name of the result's shape)."""
    __slots__ = ("shape", "dtype", "row_major", "live", "names")

    def __init__(self, shape, dtype, row_major):
        self.shape, self.dtype, self.row_major = shape, dtype, row_major
        self.live = 0
        self.names = {}

    def name_for(self, stmt):
        """A name bound to this array with ``stmt``'s result shape, if it may take that result; else None."""
        if not self.row_major or stmt.shape is None or self.dtype != stmt.dtype:
            return None
        return min((n for n, shape in self.names.items() if shape == stmt.shape), default=None)


class _Value:
    """One definition of a name: the buffers it may alias, its layout and shape, its last reader."""
    __slots__ = ("name", "buffers", "row_major", "shape", "last_use", "holder")

    def __init__(self, name, row_major=False, shape=None, last_use=-1):
        self.name, self.row_major, self.shape, self.last_use = name, row_major, shape, last_use
        self.buffers = frozenset()
        self.holder = False        # bound to its buffer itself (not to a view of it)


def plan(stmts, inputs, row_major_inputs=(), shapes=None):
    """The source lines of ``stmts`` with buffers chosen. ``inputs``: the names bound before the
    first line (never written into); ``row_major_inputs``: those known to be C-contiguous;
    ``shapes``: the inputs' shapes where known."""
    shapes = shapes or {}
    env = {name: _Value(name, name in row_major_inputs, shapes.get(name)) for name in inputs}
    uses, defs = [], []
    for i, s in enumerate(stmts):          # liveness: each definition of a name is a value of its own
        read = [env[n] for n in sorted(_names(s)) if n in env]
        for v in read:
            v.last_use = i
        uses.append(read)
        defs.append([])
        for t in s.targets:
            env[t] = _Value(t, shape=s.shape, last_use=i)     # (read by nothing: dies where it is made)
            defs[-1].append(env[t])
    pool, lines, bound = [], [], {}
    for i, s in enumerate(stmts):
        read = uses[i]
        out, out_name = _choose(s, read, pool, i)
        lines.append(_emit(s, out_name))
        if s.kind == "ufunc":
            row_major = out is not None or (s.row_major and all(v.row_major for v in read if _full(v, s)))
        else:
            row_major = s.kind == "matmul" or s.row_major
        for value in defs[i]:
            old = bound.get(value.name)
            if old is not None:            # the name is rebound: its old array is no longer reachable by it
                for b in old.buffers:
                    b.names.pop(value.name, None)
            value.row_major = row_major
            holder = True                  # the name is bound to the buffer itself (not to a view of it)
            if out is not None:
                value.buffers = frozenset((out,))
            elif s.kind != "text" or s.owned:
                value.buffers = frozenset((_Buffer(s.shape, s.dtype, row_major and s.shape is not None),))
            elif len(read) == 1 and s.text == read[0].name:    # ``a = b``: the same array, another name
                value.buffers, value.row_major, value.shape = read[0].buffers, read[0].row_major, read[0].shape
                holder = read[0].holder
            elif s.reshape and s.shape is not None and len(read) == 1 and read[0].holder and read[0].row_major:
                value.buffers, value.row_major = read[0].buffers, True     # the same array, another shape
            else:                          # as far as the planner knows, a view of everything it reads
                value.buffers = frozenset(b for v in read for b in v.buffers)
                holder = False
            value.holder = holder
            for b in value.buffers:
                b.live += 1
                if holder:
                    b.names[value.name] = value.shape
            bound[value.name] = value
        for v in dict.fromkeys([v for v in read if v.last_use <= i] + [v for v in defs[i] if v.last_use <= i]):
            for b in v.buffers:
                b.live -= 1
                if b.live == 0 and b.names:
                    pool.append(b)
    return lines


def _names(s):
    """The names a statement reads (over-approximated: a name in a string or keyword counts too)."""
    if s.kind == "text":
        return set(_NAME.findall(s.text or ""))
    found = set()
    for o in s.operands:
        found.update(_NAME.findall(o))
    return found


def _full(value, s):
    """Whether an operand has the result's shape (a broadcast operand does not decide the layout)."""
    return value.shape is None or value.shape == s.shape


def _choose(s, read, pool, i):
    """The buffer ``s`` writes into, and a name bound to it; (None, None): a new array."""
    if s.kind not in ("ufunc", "matmul") or s.shape is None or not s.row_major:
        return None, None
    if s.kind == "ufunc":
        if not s.any_layout and not all(v.row_major for v in read if _full(v, s)):
            return None, None              # NumPy would lay the result out otherwise: let it
        by_name = {v.name: v for v in read}
        for o in s.operands:               # an operand dying here, made by this code, aliased by nothing else
            v = by_name.get(o)
            if v is not None and v.last_use == i and len(v.buffers) == 1:
                b = next(iter(v.buffers))
                if b.live == 1 and o in b.names and b.name_for(s) is not None and b.names[o] == s.shape:
                    return b, o
    for k, b in enumerate(pool):           # a dead array of the same shape and dtype
        name = b.name_for(s)
        if name is not None and b.live == 0:
            del pool[k]
            return b, name
    return None, None


def _emit(s, out_name):
    if not s.targets:
        return f"    {s.text}" + (f"   # {s.comment}" if s.comment else "")
    target = ", ".join(s.targets)
    if out_name is None:
        return f"    {target} = {s.plain_source()}" + (f"   # {s.comment}" if s.comment else "")
    note = [s.comment] if s.comment else []
    if out_name not in s.targets:
        note.append(f"into {out_name}'s memory")
    note = f"   # {', '.join(note)}" if note else ""
    if s.ufunc == "np.add" and s.targets == [s.operands[0]] == [out_name]:
        return f"    {target} += {s.operands[1]}{note}"
    if s.kind == "matmul":
        return f"    {target} = np.matmul({s.operands[0]}, {s.operands[1]}, out={out_name}){note}"
    return f"    {target} = {s.ufunc}({', '.join(s.operands)}, out={out_name}){note}"


__all__ = ["U", "Reshape", "Stmt", "flatten", "plan"]
