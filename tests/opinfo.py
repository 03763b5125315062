"""The op registry: one entry per op, its sample inputs declared once, shared by every op test.

In the manner of PyTorch's ``OpInfo`` (torch/testing/_internal/common_methods_invocations.py): an
``OpInfo`` names an op, says how to call it on a library (``fn(lib, *args, **kwargs)`` where ``lib`` is
``torch`` or ``glasstorch``, so one line serves both), which dtypes it takes, and a sample generator
that lists its inputs: shapes (with broadcasting, 0-dim, empty), non-contiguous layouts (transposed,
strided slices), every dim/keepdim variant, Python-number operands.

Samples hold NumPy arrays, not tensors: ``SampleInput.build(lib)`` turns each ``Leaf`` into a leaf
tensor of ``lib`` with the same values and the same strides, so torch and glasstorch see identical
inputs. This module does not import torch: ``test_ops_gradcheck.py`` uses it without torch.

The harness that runs the checks lives in ``test_ops.py`` (against torch) and
``test_ops_gradcheck.py`` (finite differences, no torch).

Adding an op: write a sample generator ``def _foo_samples(make, dtype)`` that yields
``SampleInput(make(shape, layout=..., low=..., high=...), 2, dim=1, ...)`` (``make`` gives leaves of the
test's dtype, requiring grad for floating dtypes; ``make.index``/``make.mask``/``make.distinct`` give
indices, masks and tie-free values), then ``register(OpInfo("foo", samples=_foo_samples, dtypes=...))``
(``fn=`` when the call is not ``lib.foo(*args)``). Every check then runs on it. A sample at a point
where the op is not differentiable says ``nondiff=True``; a difference from torch that is understood
goes in ``xfail={check: reason}``, which fails once the difference is gone.
"""
import math
import zlib

import numpy as np

FLOATS = ("float64", "float32")
INTS = ("int64",)
ALL_NUM = FLOATS + ("int64",)
CHECKS = ("forward", "dtype", "grad_fn", "grad", "gradgrad", "graph", "raise")


# ---------------------------------------------------------------------------------------------
# Sample inputs
# ---------------------------------------------------------------------------------------------
class Leaf:
    """A leaf tensor to be: its values, its memory layout and whether it requires grad.

    layout: 'contig'; 'T' (a transposed view of a contiguous array: strides reversed in the
    last two dims); 'slice' (every other element of a twice-as-wide last dim).
    """
    __slots__ = ("array", "layout", "requires_grad")

    def __init__(self, array, layout="contig", requires_grad=False):
        self.array, self.layout, self.requires_grad = np.asarray(array), layout, requires_grad

    def build(self, lib, device="cpu"):
        """A leaf tensor of ``lib`` on ``device``: the contiguous memory is made there, then viewed,
        so the leaf has the same strides on every device."""
        a = self.array

        def made(array):
            t = lib.from_numpy(array)
            return t if device == "cpu" else t.to(device)
        if self.layout == "T":
            t = made(np.ascontiguousarray(a.swapaxes(-1, -2))).transpose(-1, -2)
        elif self.layout == "slice":
            base = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
            base[..., ::2] = a
            t = made(base)[..., ::2]
        else:
            t = made(a.copy())
        t = t.detach()  # a leaf that keeps the strides
        if self.requires_grad:
            t.requires_grad_(True)
        return t

    def __repr__(self):
        lay = "" if self.layout == "contig" else f",{self.layout}"
        rg = ",rg" if self.requires_grad else ""
        return f"T{list(self.array.shape)}{self.array.dtype.name.replace('float', 'f').replace('int', 'i')}{lay}{rg}"


def _map(obj, fn):
    if isinstance(obj, Leaf):
        return fn(obj)
    if isinstance(obj, list):
        return [_map(o, fn) for o in obj]
    if isinstance(obj, tuple):
        return tuple(_map(o, fn) for o in obj)
    if isinstance(obj, dict):
        return {k: _map(v, fn) for k, v in obj.items()}
    return obj


def _leaves(obj, out):
    if isinstance(obj, Leaf):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _leaves(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            _leaves(o, out)
    return out


class SampleInput:
    """Positional and keyword arguments of one call; Leaf objects become tensors in ``build``.

    ``nondiff=True`` marks a sample at a point where the op is not differentiable (ties of a max,
    the norm of a zero vector, NaN/inf inputs): torch's rule for the gradient there is compared,
    but finite differences cannot check it.
    """

    def __init__(self, *args, desc=None, nondiff=False, **kwargs):
        self.args, self.kwargs, self.desc, self.nondiff = args, kwargs, desc, nondiff

    @property
    def leaves(self):
        return _leaves((self.args, self.kwargs), [])

    def build(self, lib, tensors=None, device="cpu"):
        """(args, kwargs, leaf tensors) for ``lib``, the leaves made on ``device``; ``tensors``
        replaces the leaves, in order."""
        made = {}
        supplied = iter(tensors) if tensors is not None else None

        def mk(leaf):
            if id(leaf) not in made:
                made[id(leaf)] = next(supplied) if supplied is not None else leaf.build(lib, device)
            return made[id(leaf)]
        args, kwargs = _map(self.args, mk), _map(self.kwargs, mk)
        order = []
        for leaf in self.leaves:
            if id(leaf) not in [id(x) for x in order]:
                order.append(leaf)
        return args, kwargs, [made[id(l)] for l in order]

    def numel(self):
        return sum(l.array.size for l in self.leaves)

    def __repr__(self):
        if self.desc:
            return self.desc
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return "(" + ", ".join(parts) + ")"


class Maker:
    """make(shape, ...) -> Leaf with random values of the sample's dtype (a seeded generator per op)."""

    def __init__(self, seed, dtype, requires_grad):
        self.rng = np.random.default_rng(seed)
        self.dtype = dtype
        self.requires_grad = requires_grad

    def __call__(self, shape=(), dtype=None, low=None, high=None, layout="contig", requires_grad=None,
                 values=None, exclude_zero=False):
        dtype = np.dtype(dtype or self.dtype)
        if layout == "T":  # the logical shape is what the op sees
            assert len(shape) >= 2
        if values is not None:
            a = np.asarray(values, dtype=dtype).reshape(shape) if shape != () or np.ndim(values) == 0 else \
                np.asarray(values, dtype=dtype)
        elif dtype.kind == "f":
            lo = -2.0 if low is None else low
            hi = 2.0 if high is None else high
            a = self.rng.uniform(lo, hi, shape).astype(dtype)
            if exclude_zero:
                a = np.where(np.abs(a) < 0.1, 0.37, a).astype(dtype)  # (0.37: no exact quotients)
        elif dtype.kind in "iu":
            lo = (0 if dtype.kind == "u" else -5) if low is None else low
            hi = 6 if high is None else high
            lo, hi = math.floor(lo), max(math.ceil(hi), math.floor(lo) + 1)
            a = self.rng.integers(lo, hi, shape).astype(dtype)
            if exclude_zero:
                a = np.where(a == 0, 1, a).astype(dtype)
        elif dtype.kind == "b":
            a = self.rng.random(shape) < 0.5
        elif dtype.kind == "c":
            lo = -2.0 if low is None else low
            hi = 2.0 if high is None else high
            a = (self.rng.uniform(lo, hi, shape) + 1j * self.rng.uniform(lo, hi, shape)).astype(dtype)
        else:
            raise TypeError(dtype)
        a = np.asarray(a)
        rg = self.requires_grad if requires_grad is None else requires_grad
        rg = rg and dtype.kind in "fc"
        return Leaf(a, layout, rg)

    def distinct(self, shape, layout="contig"):
        """Values without ties (where an op's order among equal values is unspecified, as topk's)."""
        n = int(np.prod(shape))
        vals = self.rng.permutation(n) - n // 2
        return self(shape, values=vals, layout=layout)

    def index(self, shape, high, low=0):
        """An int64 index tensor (never requires grad)."""
        return Leaf(self.rng.integers(low, high, shape).astype("int64"), "contig", False)

    def mask(self, shape):
        return Leaf(self.rng.random(shape) < 0.5, "contig", False)

    def perm(self, n):
        return Leaf(self.rng.permutation(n).astype("int64"), "contig", False)


class OpInfo:
    """One op: how to call it, on which dtypes, its samples, and which checks are known to differ.

    fn(lib, *args, **kwargs): the call, the same for torch and glasstorch (default: ``lib.<name>``).
    samples(make, dtype): yields SampleInput.
    grad / gradgrad: whether the op is differentiable (once / twice) in torch.
    xfail: {check: reason} -- a difference from torch that is known and explained (the harness
    asserts the check still fails, so a fix shows up).
    """

    def __init__(self, name, fn=None, *, samples, dtypes=FLOATS, grad=True, gradgrad=True, graph=True,
                 gradcheck=True, tol=None, xfail=None, nondeterministic_grad=False):
        self.name = name
        self.fn = fn if fn is not None else (lambda lib, *a, **k: getattr(lib, name)(*a, **k))
        self.sample_fn = samples
        self.dtypes = dtypes
        self.grad, self.gradgrad, self.graph = grad, gradgrad, graph
        self.gradcheck = gradcheck
        self.tol = tol or {}
        self.xfail = xfail or {}

    def torch_fn(self, *args, **kwargs):
        import torch
        return self.fn(torch, *args, **kwargs)

    def glasstorch_fn(self, *args, **kwargs):
        import glasstorch
        return self.fn(glasstorch, *args, **kwargs)

    def samples(self, dtype, requires_grad=None):
        if requires_grad is None:  # also for ops without a derivative: their outputs must not require grad
            requires_grad = np.dtype(dtype).kind in "fc"
        seed = zlib.crc32(f"{self.name}/{dtype}".encode())
        return list(self.sample_fn(Maker(seed, dtype, requires_grad), dtype))

    def __repr__(self):
        return f"OpInfo({self.name})"


# ---------------------------------------------------------------------------------------------
# Shapes, declared once
# ---------------------------------------------------------------------------------------------
# (shape, layout): 0-dim, empty, vectors, matrices, 3-D, and non-contiguous views
UNARY_SHAPES = [((), "contig"), ((0,), "contig"), ((5,), "contig"), ((3, 4), "contig"), ((2, 3, 4), "contig"),
                ((4, 3), "T"), ((3, 4), "slice"), ((1, 1), "contig"), ((2, 0, 3), "contig")]
# broadcasting pairs: equal, trailing, both-sides 1, 0-dim with n-dim, empty
BINARY_SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((4,), (3, 4)), ((3, 1), (1, 4)), ((2, 3, 4), (3, 1)),
                 ((), (3, 4)), ((3, 4), ()), ((), ()), ((0, 3), (3,)), ((5,), (1,))]
NONCONTIG_PAIRS = [(((4, 3), "T"), ((4, 3), "contig")), (((3, 4), "slice"), ((3, 4), "T"))]
# reductions: (shape, dims to try)
REDUCE_SHAPES = [((), [None, 0, -1]), ((5,), [None, 0, -1]), ((3, 4), [None, 0, 1, -1, (0, 1)]),
                 ((2, 3, 4), [None, 1, -1, (0, 2), (-1, 0)]), ((0, 3), [1]), ((4, 3), "T")]


def _shape_layouts(make):
    for shape, layout in UNARY_SHAPES:
        yield make(shape, layout=layout)


def unary_samples(low=None, high=None, exclude_zero=False, shapes=None):
    def gen(make, dtype):
        for shape, layout in shapes or UNARY_SHAPES:
            yield SampleInput(make(shape, low=low, high=high, layout=layout, exclude_zero=exclude_zero))
    return gen


def binary_samples(low=None, high=None, rlow=None, rhigh=None, exclude_zero=False, scalars=(2, -1.5, 0.5),
                   mixed=True, tensor_other=True, bool_operand=True):
    """Broadcasting pairs, non-contiguous pairs, tensor-scalar and mixed-dtype operands."""
    rlow = low if rlow is None else rlow
    rhigh = high if rhigh is None else rhigh

    def gen(make, dtype):
        if tensor_other:
            for sa, sb in BINARY_SHAPES:
                yield SampleInput(make(sa, low=low, high=high),
                                  make(sb, low=rlow, high=rhigh, exclude_zero=exclude_zero))
            for (sa, la), (sb, lb) in NONCONTIG_PAIRS:
                yield SampleInput(make(sa, low=low, high=high, layout=la),
                                  make(sb, low=rlow, high=rhigh, layout=lb, exclude_zero=exclude_zero))
        for s in scalars:
            if np.dtype(dtype).kind in "iub" and isinstance(s, float) and not mixed:
                continue
            yield SampleInput(make((3, 4), low=low, high=high), s)
        if tensor_other:
            # a 0-dim tensor does not decide the dtype of a dimensioned one (it promotes like a scalar)
            yield SampleInput(make((3,), low=low, high=high),
                              make((), dtype="float64" if dtype == "float32" else None, low=rlow, high=rhigh,
                                   exclude_zero=exclude_zero))
            if mixed and np.dtype(dtype).kind == "f":
                yield SampleInput(make((3,), low=low, high=high),
                                  make((3,), dtype="int64", low=1 if exclude_zero else -3, high=4,
                                       exclude_zero=exclude_zero))
                other = "float32" if dtype == "float64" else "float64"
                yield SampleInput(make((2, 3), low=low, high=high),
                                  make((3,), dtype=other, low=rlow, high=rhigh, exclude_zero=exclude_zero))
                yield SampleInput(make((3,), dtype="int64", low=1, high=4),
                                  make((2, 3), low=rlow, high=rhigh, exclude_zero=exclude_zero))
                if bool_operand:
                    yield SampleInput(make((3,), dtype="bool"),
                                      make((3,), low=rlow, high=rhigh, exclude_zero=exclude_zero))
                yield SampleInput(make((2, 3), low=low, high=high, requires_grad=False),
                                  make((2, 3), low=rlow, high=rhigh, exclude_zero=exclude_zero))
    return gen


def reduction_samples(keepdim=True, dims=True, nonempty=False, low=None, high=None, full=True, extra=None,
                      dim_required=False, tuple_dims=True, empty_dims=True):
    def gen(make, dtype):
        for shape, dlist in REDUCE_SHAPES:
            if dlist == "T":
                x = make(shape, layout="T", low=low, high=high)
                yield SampleInput(x, 0) if dims else SampleInput(x)
                if full and not dim_required:
                    yield SampleInput(x)
                continue
            if nonempty and 0 in shape:
                continue
            x = make(shape, low=low, high=high)
            if full and not dim_required:
                yield SampleInput(x)
            if not dims:
                continue
            if shape == (3, 4) and empty_dims:
                yield SampleInput(x, dim=())      # an empty dim list: torch reduces everything (mostly)
                yield SampleInput(x, dim=[0, -1], keepdim=True)
            for d in dlist:
                if d is None:
                    continue
                if isinstance(d, tuple) and not tuple_dims:
                    continue
                yield SampleInput(x, d)
                if keepdim:
                    yield SampleInput(x, dim=d, keepdim=True)
        for s in extra(make, dtype) if extra else ():
            yield s
    return gen


def ties_sample(make, dtype, shape=(3, 4)):
    """Integer-valued floats, so maxima tie (where torch's gradient rules for ties show)."""
    return make(shape, values=np.array([[1, 3, 3, 0], [2, 2, 2, 2], [-1, 0, 5, 5]]).reshape(shape))


# ---------------------------------------------------------------------------------------------
# The registry
# ---------------------------------------------------------------------------------------------
op_db = []


def register(*infos):
    op_db.extend(infos)


def _m(method):
    """fn calling a Tensor method: x.method(*rest)."""
    return lambda lib, x, *a, **k: getattr(x, method)(*a, **k)


# ---- unary pointwise --------------------------------------------------------------------------
_UNARY_DOMAINS = {
    "abs": {}, "sign": {}, "neg": {}, "reciprocal": dict(exclude_zero=True), "exp": {}, "exp2": {},
    "log": dict(low=0.1, high=3), "log2": dict(low=0.1, high=3), "log10": dict(low=0.1, high=3),
    "log1p": dict(low=-0.9, high=3), "expm1": {}, "sqrt": dict(low=0.1, high=3), "rsqrt": dict(low=0.1, high=3),
    "sin": {}, "cos": {}, "tan": dict(low=-1.2, high=1.2), "asin": dict(low=-0.9, high=0.9),
    "acos": dict(low=-0.9, high=0.9), "atan": {}, "sinh": {}, "cosh": {}, "tanh": {}, "sigmoid": {},
    "relu": dict(exclude_zero=True), "erf": {}, "erfc": {}, "erfinv": dict(low=-0.9, high=0.9), "floor": {}, "ceil": {}, "round": {}, "trunc": {}, "frac": {},
    "square": {},
}
for _name, _dom in _UNARY_DOMAINS.items():
    _dtypes = ALL_NUM + ("bool",)   # ints promote to float for exp/sin/...; some ops reject bool, as torch does
    register(OpInfo(_name, samples=unary_samples(**_dom), dtypes=_dtypes))
    register(OpInfo(_name + ".method", _m(_name), samples=unary_samples(**_dom), dtypes=FLOATS))

register(
    OpInfo("__neg__", lambda lib, x: -x, samples=unary_samples(), dtypes=ALL_NUM),
    OpInfo("__abs__", lambda lib, x: abs(x), samples=unary_samples(), dtypes=FLOATS),
    OpInfo("round.decimals", lambda lib, x: lib.round(x, decimals=2), samples=unary_samples(), dtypes=FLOATS),
    OpInfo("bool_not", lambda lib, x: ~x, samples=unary_samples(), dtypes=("bool", "int64")),
    OpInfo("logical_not", samples=unary_samples(), dtypes=("bool", "float32", "int64")),
    OpInfo("sigmoid.extreme", lambda lib, x: lib.sigmoid(x), dtypes=FLOATS,
           samples=lambda make, dt: [SampleInput(make((6,), values=[-800., -40., -1e-3, 0., 40., 800.]))]),
    OpInfo("exp.extreme", lambda lib, x: lib.exp(x), dtypes=FLOATS,
           samples=lambda make, dt: [SampleInput(make((4,), values=[-1000., 0., 50., 1000.]), nondiff=True)]),
)


# ---- binary pointwise -------------------------------------------------------------------------
def _alpha_samples(make, dtype):
    yield from binary_samples()(make, dtype)
    yield SampleInput(make((3, 4)), make((4,)), alpha=2)
    yield SampleInput(make((3, 4)), make((3, 4)), alpha=-0.5) if np.dtype(dtype).kind == "f" else \
        SampleInput(make((3, 4)), make((3, 4)), alpha=3)


register(
    OpInfo("add", samples=_alpha_samples, dtypes=ALL_NUM + ("bool",)),
    OpInfo("sub", samples=_alpha_samples, dtypes=ALL_NUM),
    OpInfo("mul", samples=binary_samples(), dtypes=ALL_NUM + ("bool",)),
    OpInfo("div", samples=binary_samples(exclude_zero=True), dtypes=ALL_NUM),
    OpInfo("div.trunc", lambda lib, a, b: lib.div(a, b, rounding_mode="trunc"),
           samples=binary_samples(exclude_zero=True), dtypes=ALL_NUM, gradgrad=False),
    OpInfo("div.floor", lambda lib, a, b: lib.div(a, b, rounding_mode="floor"),
           samples=binary_samples(exclude_zero=True), dtypes=ALL_NUM, gradgrad=False),
    OpInfo("__add__", lambda lib, a, b: a + b, samples=binary_samples(), dtypes=ALL_NUM),
    OpInfo("__radd__", lambda lib, a, b: b + a, samples=binary_samples(tensor_other=False), dtypes=ALL_NUM),
    OpInfo("__sub__", lambda lib, a, b: a - b, samples=binary_samples(), dtypes=ALL_NUM),
    OpInfo("__rsub__", lambda lib, a, b: b - a, samples=binary_samples(tensor_other=False), dtypes=ALL_NUM),
    OpInfo("__mul__", lambda lib, a, b: a * b, samples=binary_samples(), dtypes=ALL_NUM),
    OpInfo("__rmul__", lambda lib, a, b: b * a, samples=binary_samples(tensor_other=False), dtypes=ALL_NUM),
    OpInfo("__truediv__", lambda lib, a, b: a / b, samples=binary_samples(exclude_zero=True), dtypes=ALL_NUM),
    OpInfo("__rtruediv__", lambda lib, a, b: b / a, samples=binary_samples(exclude_zero=True, tensor_other=False,
                                                                         low=0.2, high=2), dtypes=ALL_NUM),
    OpInfo("__floordiv__", lambda lib, a, b: a // b, samples=binary_samples(exclude_zero=True), dtypes=ALL_NUM,
           grad=False),
    OpInfo("__rfloordiv__", lambda lib, a, b: b // a,
           samples=binary_samples(tensor_other=False, low=1, high=4), dtypes=ALL_NUM, grad=False),
    OpInfo("__mod__", lambda lib, a, b: a % b, samples=binary_samples(exclude_zero=True), dtypes=ALL_NUM),
    OpInfo("__rmod__", lambda lib, a, b: b % a, samples=binary_samples(tensor_other=False, low=1, high=4),
           dtypes=ALL_NUM, grad=False),
    OpInfo("remainder", samples=binary_samples(exclude_zero=True), dtypes=ALL_NUM),
    OpInfo("fmod", samples=binary_samples(exclude_zero=True), dtypes=ALL_NUM),
    OpInfo("pow", samples=binary_samples(low=0.2, high=2, rlow=-2, rhigh=2, scalars=(2, 3, 0.5, -1.5, 0, 1)),
           dtypes=FLOATS),
    OpInfo("pow.int", lambda lib, a, b: lib.pow(a, b),
           samples=binary_samples(low=-3, high=4, rlow=0, rhigh=4, scalars=(2, 3, 0)), dtypes=INTS),
    OpInfo("__pow__", lambda lib, a, b: a ** b, samples=binary_samples(low=0.2, high=2, scalars=(2, 0.5, -1)),
           dtypes=FLOATS),
    OpInfo("__rpow__", lambda lib, a, b: b ** a, samples=binary_samples(tensor_other=False, scalars=(2, 0.5, 3.0)),
           dtypes=FLOATS),
    # (atan2(bool, x): torch's backward negates the bool tensor and fails, as ours does)
    OpInfo("atan2", samples=binary_samples(exclude_zero=True, scalars=(), bool_operand=False), dtypes=FLOATS),
    OpInfo("maximum", samples=binary_samples(scalars=()), dtypes=ALL_NUM),
    OpInfo("minimum", samples=binary_samples(scalars=()), dtypes=ALL_NUM),
    OpInfo("fmax", samples=binary_samples(scalars=()), dtypes=ALL_NUM),
    OpInfo("fmin", samples=binary_samples(scalars=()), dtypes=ALL_NUM),
    OpInfo("fmax.ties", lambda lib, a, b: lib.fmax(a, b), dtypes=FLOATS,
           samples=lambda make, dt: [SampleInput(make((4,), values=[1, 2, 3, 4]), make((4,), values=[1, 0, 3, 5]),
                                                 nondiff=True)]),
    OpInfo("maximum.ties", lambda lib, a, b: lib.maximum(a, b), dtypes=FLOATS,
           samples=lambda make, dt: [SampleInput(make((4,), values=[1, 2, 3, 4]), make((4,), values=[1, 0, 3, 5]),
                                                 nondiff=True)]),
    OpInfo("minimum.ties", lambda lib, a, b: lib.minimum(a, b), dtypes=FLOATS,
           samples=lambda make, dt: [SampleInput(make((4,), values=[1, 2, 3, 4]), make((4,), values=[1, 0, 3, 5]),
                                                 nondiff=True)]),
)


# ---- comparisons and logic --------------------------------------------------------------------
for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    register(OpInfo(_name, samples=binary_samples(low=-2, high=3, scalars=(0, 1.5)), dtypes=ALL_NUM + ("bool",),
                    grad=False))
for _name, _sym in (("__eq__", "=="), ("__ne__", "!="), ("__lt__", "<"), ("__le__", "<="), ("__gt__", ">"),
                    ("__ge__", ">=")):
    register(OpInfo(_name, eval(f"lambda lib, a, b: a {_sym} b"),
                    samples=binary_samples(low=-2, high=3, scalars=(0, 1.5)), dtypes=("float32", "int64"),
                    grad=False))
for _name in ("logical_and", "logical_or", "logical_xor"):
    register(OpInfo(_name, samples=binary_samples(low=-1, high=2, scalars=()), dtypes=("bool", "float32", "int64"),
                    grad=False))
register(
    OpInfo("__and__", lambda lib, a, b: a & b, samples=binary_samples(scalars=(True,), mixed=False),
           dtypes=("bool", "int64"), grad=False),
    OpInfo("__or__", lambda lib, a, b: a | b, samples=binary_samples(scalars=(False,), mixed=False),
           dtypes=("bool", "int64"), grad=False),
    OpInfo("__xor__", lambda lib, a, b: a ^ b, samples=binary_samples(scalars=(True,), mixed=False),
           dtypes=("bool", "int64"), grad=False),
)


# ---- selection, clamping --------------------------------------------------------------------------
def _where_samples(make, dtype):
    for sa, sb in BINARY_SHAPES:
        shape = np.broadcast_shapes(sa, sb)
        yield SampleInput(make.mask(shape), make(sa), make(sb))
    yield SampleInput(make.mask((3, 1)), make((1, 4)), make((3, 4), layout="T"))
    yield SampleInput(make.mask((3, 4)), make((3, 4)), 0.0)
    yield SampleInput(make.mask((3, 4)), 1.5, make((3, 4)))
    yield SampleInput(make.mask((3, 4)), make((3, 4)), 2)


def _clamp_samples(make, dtype):
    f = np.dtype(dtype).kind == "f"
    for shape, layout in UNARY_SHAPES:
        yield SampleInput(make(shape, layout=layout), -0.5 if f else -1, 0.5 if f else 2)
    yield SampleInput(make((3, 4)), min=0.0 if f else 0)
    yield SampleInput(make((3, 4)), max=0.3 if f else 1)
    yield SampleInput(make((3, 4)), 1.0 if f else 2, -1.0 if f else -1, nondiff=True)   # min > max: all max
    yield SampleInput(make((3, 4)), make((3, 4), low=-2, high=0), make((4,), low=0, high=2))
    yield SampleInput(make((3, 4)), min=make((3, 1), low=-1, high=1))
    yield SampleInput(make((3, 4)), max=make((), low=-1, high=1))
    yield SampleInput(make((3, 4)), make((4,), low=0.5, high=1), make((3, 1), low=-1, high=0))  # min > max


def _clamp_one_side_samples(make, dtype):
    f = np.dtype(dtype).kind == "f"
    for shape, layout in UNARY_SHAPES:
        yield SampleInput(make(shape, layout=layout), 0.1 if f else 1)
    yield SampleInput(make((3, 4)), make((4,), low=-1, high=1))


def _lerp_samples(make, dtype):
    for sa, sb in BINARY_SHAPES[:6]:
        yield SampleInput(make(sa), make(sb), 0.3)
    yield SampleInput(make((3, 4)), make((3, 4)), make((3, 4), low=0, high=1))
    yield SampleInput(make((3, 4)), make((4,)), make((3, 1), low=0, high=1))
    yield SampleInput(make((3, 4), layout="T"), make((3, 4)), make((), low=0, high=1))


def _masked_fill_samples(make, dtype):
    f = np.dtype(dtype).kind == "f"
    yield SampleInput(make((3, 4)), make.mask((3, 4)), 0.5 if f else 7)
    yield SampleInput(make((3, 4)), make.mask((4,)), -1.0 if f else -1)
    yield SampleInput(make((3, 4), layout="T"), make.mask((3, 4)), 2.0 if f else 2)
    yield SampleInput(make(()), make.mask(()), 3.0 if f else 3)
    yield SampleInput(make((0, 2)), make.mask((0, 2)), 1.0 if f else 1)
    if f:
        yield SampleInput(make((3, 4)), make.mask((3, 4)), make(()))
        yield SampleInput(make((3, 4)), make.mask((3, 4)), float("-inf"))


def _nan_to_num_samples(make, dtype):
    vals = [1.0, float("nan"), float("inf"), -float("inf"), -2.0, 0.5]
    x = make((6,), values=vals)
    yield SampleInput(x)
    yield SampleInput(x, nan=1.5)
    yield SampleInput(x, posinf=10.0, neginf=-10.0)
    yield SampleInput(make((3, 4)))


register(
    OpInfo("where", samples=_where_samples, dtypes=ALL_NUM),
    OpInfo("where.method", lambda lib, c, a, b: a.where(c, b) if not isinstance(a, (int, float)) else
           lib.where(c, a, b), samples=_where_samples, dtypes=FLOATS),
    OpInfo("clamp", samples=_clamp_samples, dtypes=ALL_NUM),
    OpInfo("clip", samples=_clamp_samples, dtypes=FLOATS),
    OpInfo("clamp.method", _m("clamp"), samples=_clamp_samples, dtypes=FLOATS),
    OpInfo("clamp_min", samples=_clamp_one_side_samples, dtypes=ALL_NUM),   # ClampMinBackward0, not ClampBackward1
    OpInfo("clamp_max", samples=_clamp_one_side_samples, dtypes=ALL_NUM),
    OpInfo("lerp", samples=_lerp_samples, dtypes=FLOATS),
    OpInfo("masked_fill", samples=_masked_fill_samples, dtypes=ALL_NUM + ("bool",)),
    OpInfo("nan_to_num", samples=_nan_to_num_samples, dtypes=FLOATS),
)


# ---- reductions -----------------------------------------------------------------------------------
def _ties_extra(make, dtype):
    yield SampleInput(ties_sample(make, dtype), nondiff=True)
    yield SampleInput(ties_sample(make, dtype), 1, nondiff=True)
    yield SampleInput(ties_sample(make, dtype), 0, keepdim=True, nondiff=True)


def _var_extra(make, dtype):
    x = make((3, 4))
    yield SampleInput(x, 1, correction=0)
    yield SampleInput(x, (0, 1), correction=2, keepdim=True)
    yield SampleInput(x, correction=0)
    yield SampleInput(x, 0, unbiased=False)
    yield SampleInput(x, 1, True, True)
    yield SampleInput(make((1, 3)), 0)  # one element per group, correction 1: nan (and a warning)


def _norm_extra(make, dtype):
    x = make((3, 4), exclude_zero=True)
    for p in (1, 3, float("inf"), -float("inf"), 0.5):
        yield SampleInput(x, p)
        yield SampleInput(x, p, 1)
    yield SampleInput(x, 2, (0, 1), True)
    yield SampleInput(x, "fro")
    yield SampleInput(x, "nuc")
    yield SampleInput(x, "nuc", (0, 1), True)
    yield SampleInput(x, dim=0)
    yield SampleInput(make((3,), values=[0, 0, 0]), nondiff=True)  # the norm's gradient at 0 is 0, not nan


def _prod_samples(make, dtype):
    yield SampleInput(make((3, 4)), dim=(0, 1))     # torch's prod takes one dim only
    yield SampleInput(make((3, 4)), dim=-1, keepdim=True)
    yield SampleInput(make((4,)))
    yield SampleInput(make(()))
    yield SampleInput(make((3, 4)), 1)
    yield SampleInput(make((3, 4)), 0, keepdim=True)
    yield SampleInput(make((2, 3, 4)), -1)
    yield SampleInput(make((4, 3), layout="T"), 0)
    yield SampleInput(make((0, 3)), 1)
    yield SampleInput(make((0, 3)))
    f = np.dtype(dtype).kind == "f"
    yield SampleInput(make((3, 3), values=[[1, 0, 2], [0, 0, 3], [1, 2, 3]]), 1)  # zeros: exact gradient
    yield SampleInput(make((3,), values=[2, 0, 3]))
    if f:
        yield SampleInput(make((3, 3), values=[[1, 0, 2], [0, 0, 3], [1, 2, 3]]))


def _minmax_samples(make, dtype):
    yield SampleInput(make((3, 4)), dim=1, keepdim=True)
    yield SampleInput(make((3, 4)), (0, 1))         # max takes one dim
    for shape in ((5,), (3, 4), (2, 3, 4)):
        x = make(shape)
        yield SampleInput(x)
        yield SampleInput(x, 0)
        yield SampleInput(x, -1, keepdim=True)
    yield SampleInput(make(()))
    yield SampleInput(make(()), 0)
    yield SampleInput(make((4, 3), layout="T"), 1)
    yield SampleInput(make((0, 3)), 1)
    yield from _ties_extra(make, dtype)


def _arg_samples(make, dtype):
    for shape in ((5,), (3, 4), (2, 3, 4)):
        x = make(shape)
        yield SampleInput(x)
        yield SampleInput(x, 0)
        yield SampleInput(x, -1, keepdim=True)
    yield SampleInput(make(()))
    yield SampleInput(make((3, 4)), keepdim=True)
    yield SampleInput(make((4, 3), layout="T"), 1)
    yield SampleInput(ties_sample(make, dtype), 1, nondiff=True)
    yield SampleInput(ties_sample(make, dtype), nondiff=True)


def _softmax_samples(make, dtype):
    for shape, dims in (((5,), (0, -1)), ((3, 4), (0, 1, -1)), ((2, 3, 4), (1, -1)), ((), (0,)), ((0, 3), (1,))):
        for d in dims:
            yield SampleInput(make(shape), d)
    yield SampleInput(make((4, 3), layout="T"), 1)
    yield SampleInput(make((3,), values=[1000.0, 0.0, -1000.0]), 0)
    yield SampleInput(make((3, 4)), 1, dtype=None)


def _scan_samples(make, dtype):
    for shape, dims in (((5,), (0, -1)), ((3, 4), (0, 1)), ((2, 3, 4), (1,)), ((), (0,)), ((0, 3), (1,))):
        for d in dims:
            yield SampleInput(make(shape), d)
    yield SampleInput(make((4, 3), layout="T"), 0)


def _cumprod_samples(make, dtype):
    yield from _scan_samples(make, dtype)
    yield SampleInput(make((2, 4), values=[[1, 0, 2, 3], [0, 2, 0, 1]]), 1)


def _logsumexp_samples(make, dtype):
    for shape, dims in (((5,), (0, -1)), ((3, 4), (0, 1, (0, 1))), ((2, 3, 4), ((0, 2), 1)), ((), (0,))):
        for d in dims:
            yield SampleInput(make(shape), d)
            yield SampleInput(make(shape), d, True)
    yield SampleInput(make((4, 3), layout="T"), 1)
    yield SampleInput(make((3, 4)), dim=())
    yield SampleInput(make((3, 4)), dim=[0, 1], keepdim=True)
    if np.dtype(dtype).kind == "f":
        yield SampleInput(make((3,), values=[1000.0, 1000.0, -1000.0]), 0)
        yield SampleInput(make((2,), values=[-float("inf"), -float("inf")]), 0)


def _any_samples(make, dtype):
    for shape, dlist in REDUCE_SHAPES:
        if dlist == "T":
            continue
        x = make(shape, low=0, high=2) if np.dtype(dtype).kind != "b" else make.mask(shape)
        yield SampleInput(x)
        if shape == (3, 4):
            yield SampleInput(x, dim=())
            yield SampleInput(x, dim=(0, 1))
        for d in dlist:
            if d is not None and not isinstance(d, tuple):
                yield SampleInput(x, d)
                yield SampleInput(x, d, keepdim=True)


_MEAN_DTYPES = FLOATS
register(
    OpInfo("sum", samples=reduction_samples(), dtypes=ALL_NUM + ("bool",)),
    OpInfo("sum.method", _m("sum"), samples=reduction_samples(), dtypes=FLOATS),
    OpInfo("sum.dtype", lambda lib, x: x.sum(dtype=lib.float64), samples=unary_samples(), dtypes=("float32", "int64")),
    OpInfo("mean", samples=reduction_samples(), dtypes=ALL_NUM),
    OpInfo("mean.method", _m("mean"), samples=reduction_samples(), dtypes=FLOATS),
    OpInfo("prod", samples=_prod_samples, dtypes=ALL_NUM + ("bool",)),
    OpInfo("max", samples=_minmax_samples, dtypes=ALL_NUM + ("bool",)),
    OpInfo("min", samples=_minmax_samples, dtypes=ALL_NUM),
    OpInfo("max.method", _m("max"), samples=_minmax_samples, dtypes=FLOATS),
    OpInfo("max.binary", lambda lib, a, b: lib.max(a, b), samples=binary_samples(scalars=()), dtypes=FLOATS),
    OpInfo("amax", samples=reduction_samples(nonempty=True, extra=_ties_extra), dtypes=ALL_NUM),
    OpInfo("amin", samples=reduction_samples(nonempty=True, extra=_ties_extra), dtypes=ALL_NUM),
    OpInfo("argmax", samples=_arg_samples, dtypes=ALL_NUM, grad=False),
    OpInfo("argmin", samples=_arg_samples, dtypes=ALL_NUM, grad=False),
    # var/std(dim=()): torch's gradient is inf (it divides by n - 1 with n = 1), see test_ops.py
    OpInfo("var", samples=reduction_samples(extra=_var_extra, empty_dims=False), dtypes=ALL_NUM),
    OpInfo("std", samples=reduction_samples(extra=_var_extra, empty_dims=False), dtypes=ALL_NUM),
    OpInfo("norm", samples=reduction_samples(keepdim=False, extra=_norm_extra), dtypes=ALL_NUM),
    OpInfo("logsumexp", samples=_logsumexp_samples, dtypes=ALL_NUM),
    OpInfo("softmax", samples=_softmax_samples, dtypes=ALL_NUM),
    OpInfo("log_softmax", samples=_softmax_samples, dtypes=ALL_NUM),
    OpInfo("softmax.method", _m("softmax"), samples=_softmax_samples, dtypes=FLOATS),
    OpInfo("cumsum", samples=_scan_samples, dtypes=ALL_NUM + ("bool",)),
    OpInfo("cumsum.dtype", lambda lib, x, d: lib.cumsum(x, d, dtype=lib.float64), samples=_scan_samples,
           dtypes=("float32", "int64")),
    OpInfo("mean.dtype", lambda lib, x, *a, **k: lib.mean(x, *a, dtype=lib.float64, **k), samples=reduction_samples(),
           dtypes=("float32", "int64")),
    OpInfo("cumprod", samples=_cumprod_samples, dtypes=ALL_NUM),
    OpInfo("any", samples=_any_samples, dtypes=("bool", "float32", "int64"), grad=False),
    OpInfo("all", samples=_any_samples, dtypes=("bool", "float32", "int64"), grad=False),
)


# ---- matrix products ------------------------------------------------------------------------------
def _matmul_samples(make, dtype):
    pairs = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
             ((5, 2, 3), (3,)), ((3,), (5, 3, 4)), ((2, 3), (5, 3, 4)), ((5, 2, 3), (5, 3, 4)),
             ((2, 1, 2, 3), (5, 3, 4)), ((0, 3), (3, 2)), ((2, 0), (0, 3))]
    for sa, sb in pairs:
        yield SampleInput(make(sa), make(sb))
    yield SampleInput(make((2, 3), layout="T"), make((3, 4), layout="T"))
    yield SampleInput(make((5, 2, 3), layout="T"), make((3, 4), layout="slice"))


def _mm_samples(make, dtype):
    yield SampleInput(make((2, 3)), make((3, 4)))
    yield SampleInput(make((1, 1)), make((1, 1)))
    yield SampleInput(make((2, 3), layout="T"), make((3, 4), layout="slice"))
    yield SampleInput(make((0, 3)), make((3, 2)))


def _bmm_samples(make, dtype):
    yield SampleInput(make((4, 2, 3)), make((4, 3, 5)))
    yield SampleInput(make((2, 2, 3)), make((2, 3, 2)))
    yield SampleInput(make((4, 3, 2), layout="T"), make((4, 2, 5), layout="T"))


def _mv_samples(make, dtype):
    yield SampleInput(make((2, 3)), make((3,)))
    yield SampleInput(make((3, 2), layout="T"), make((2,), layout="slice"))


def _dot_samples(make, dtype):
    yield SampleInput(make((4,)), make((4,)))
    yield SampleInput(make((0,)), make((0,)))
    yield SampleInput(make((4,), layout="slice"), make((4,)))


def _outer_samples(make, dtype):
    yield SampleInput(make((3,)), make((4,)))
    yield SampleInput(make((3,), layout="slice"), make((1,)))


def _einsum_samples(make, dtype):
    yield SampleInput("...ij,...jk->...ik", make((2, 2, 3)), make((3, 4)))
    yield SampleInput("b...,b...->b", make((2, 3, 4)), make((2, 1, 4)))
    yield SampleInput("bii->bi", make((2, 3, 3)))
    yield SampleInput("ii", make((3, 3)))
    yield SampleInput("ji", make((2, 3)))
    yield SampleInput("i,i", make((3,)), make((3,)))
    yield SampleInput("bij,bjk->bik", [make((2, 2, 3)), make((2, 3, 4))])
    yield SampleInput("ij,jk->ik", make((2, 3), layout="T"), make((3, 4), layout="slice"))
    yield SampleInput("Ab,bC->AC", make((2, 3)), make((3, 2)))
    yield SampleInput("ij,jk->ik", make((2, 3)), make((3, 4)))
    yield SampleInput("bij,bjk->bik", make((2, 2, 3)), make((2, 3, 4)))
    yield SampleInput("i,i->", make((3,)), make((3,)))
    yield SampleInput("i,j->ij", make((3,)), make((4,)))
    yield SampleInput("ii->i", make((3, 3)))
    yield SampleInput("ij->ji", make((2, 3)))
    yield SampleInput("ij->", make((2, 3)))
    yield SampleInput("ij,ij->ij", make((2, 3)), make((2, 3)))
    yield SampleInput("ij,jk,kl->il", make((2, 3)), make((3, 4)), make((4, 2)))
    yield SampleInput("ij,jk", make((2, 3)), make((3, 4)))
    yield SampleInput("bhqd,bhkd->bhqk", make((2, 2, 3, 4)), make((2, 2, 5, 4)))


register(
    OpInfo("matmul", samples=_matmul_samples),
    OpInfo("__matmul__", lambda lib, a, b: a @ b, samples=_matmul_samples),
    OpInfo("matmul.int", lambda lib, a, b: a @ b, samples=_mm_samples, dtypes=INTS),
    OpInfo("mm", samples=_mm_samples),
    OpInfo("bmm", samples=_bmm_samples),
    OpInfo("mv", samples=_mv_samples),
    OpInfo("dot", samples=_dot_samples),
    OpInfo("outer", samples=_outer_samples),
    OpInfo("einsum", samples=_einsum_samples),
)


# ---- joining, repeating, selecting ------------------------------------------------------------------
def _cat_samples(make, dtype):
    yield SampleInput([make((2, 3)), make((4, 3))])
    yield SampleInput([make((2, 3)), make((2, 1)), make((2, 4), layout="slice")], 1)
    yield SampleInput([make((2, 3)), make((2, 3))], -1)
    yield SampleInput([make((2, 3))], 0)
    yield SampleInput([make((0, 3)), make((2, 3))], 0)
    yield SampleInput([make((2, 3)), make((0,))], 0)  # torch skips legacy empty 1-D tensors
    yield SampleInput([make((3, 2), layout="T"), make((2, 3), requires_grad=False)], 0)
    yield SampleInput([make((2,)), make((3,), dtype="int64")])
    yield SampleInput((make((2, 2, 2)), make((2, 1, 2))), dim=1)


def _stack_samples(make, dtype):
    yield SampleInput([make((2, 3)), make((2, 3))])
    yield SampleInput([make((2, 3)), make((2, 3)), make((3, 2), layout="T")], 1)
    yield SampleInput([make((2, 3)), make((2, 3))], -1)
    yield SampleInput([make(()), make(())])
    yield SampleInput([make((3,)), make((3,), requires_grad=False)], 0)


def _gather_samples(make, dtype):
    x = make((3, 4))
    yield SampleInput(x, 1, make.index((3, 2), 4))
    yield SampleInput(x, 0, make.index((2, 4), 3))
    yield SampleInput(x, 0, make.index((5, 2), 3))   # repeated indices: gradients accumulate
    yield SampleInput(make((4, 3), layout="T"), -1, make.index((4, 6), 3))
    yield SampleInput(make((2, 3, 4)), 2, make.index((2, 3, 1), 4))


def _scatter_samples(make, dtype):
    yield SampleInput(make((3, 4)), 1, Leaf(np.array([[0, 2], [3, 1], [1, 0]], "int64")), make((3, 2)))
    yield SampleInput(make((3, 4)), 0, Leaf(np.array([[2, 0, 1, 2]], "int64")), make((1, 4)))
    # src larger than index: torch's (and our) backward cannot shape src's gradient
    yield SampleInput(make((3, 4)), 0, Leaf(np.array([[2, 0, 1, 2]], "int64")), make((2, 5)), nondiff=True)
    yield SampleInput(make((3, 4)), 1, Leaf(np.array([[0], [3], [2]], "int64")), 1.5)
    yield SampleInput(make((4, 3), layout="T"), -1, Leaf(np.array([[1, 0]], "int64")), make((1, 2)))


def _scatter_add_samples(make, dtype):
    yield SampleInput(make((3, 4)), 1, Leaf(np.array([[0, 0], [3, 1], [1, 1]], "int64")), make((3, 2)))
    yield SampleInput(make((3, 4)), 0, make.index((5, 4), 3), make((5, 4)))
    yield SampleInput(make((3, 4)), 0, Leaf(np.array([[2, 0, 1, 2]], "int64")), make((2, 5)), nondiff=True)
    yield SampleInput(make((4, 3), layout="T"), 1, make.index((3, 6), 3), make((3, 6)))


def _index_select_samples(make, dtype):
    yield SampleInput(make((3, 4)), 0, Leaf(np.array([2, 0, 2], "int64")))
    yield SampleInput(make((3, 4)), 1, Leaf(np.array([3], "int64")))
    yield SampleInput(make((3, 4)), -1, Leaf(np.array([], "int64")))
    yield SampleInput(make((4, 3), layout="T"), 1, Leaf(np.array([1, 1, 0], "int64")))
    yield SampleInput(make((5,)), 0, Leaf(np.array(3, "int64")))


def _take_along_dim_samples(make, dtype):
    yield SampleInput(make((3, 4)), make.index((3, 2), 4), 1)
    yield SampleInput(make((3, 4)), make.index((1, 4), 3), 0)     # indices broadcast
    yield SampleInput(make((3, 4)), make.index((5,), 12))        # flattened
    yield SampleInput(make((2, 3, 4)), make.index((2, 3, 1), 4), -1)


def _repeat_samples(make, dtype):
    yield SampleInput(make((2, 3)), 2, 1)
    yield SampleInput(make((2, 3)), (1, 3))
    yield SampleInput(make((3,)), 2, 2)
    yield SampleInput(make(()), 3)
    yield SampleInput(make((3, 2), layout="T"), 2, 1, 2)
    yield SampleInput(make((2, 3)), 0, 1)


def _tile_samples(make, dtype):
    yield SampleInput(make((2, 3)), (2,))
    yield SampleInput(make((2, 3)), (2, 2))
    yield SampleInput(make((3,)), (2, 2))
    yield SampleInput(make((3, 2), layout="T"), (1, 2, 1))


def _flip_samples(make, dtype):
    yield SampleInput(make((3, 4)), (0,))
    yield SampleInput(make((3, 4)), [0, 1])
    yield SampleInput(make((2, 3, 4)), (-1, 0))
    yield SampleInput(make((3, 4), layout="slice"), (1,))
    yield SampleInput(make(()), ())


def _roll_samples(make, dtype):
    yield SampleInput(make((3, 4)), 1, 1)
    yield SampleInput(make((3, 4)), -2, 0)
    yield SampleInput(make((3, 4)), 5)              # flattened
    yield SampleInput(make((2, 3, 4)), (1, -1), (0, 2))
    yield SampleInput(make((4, 3), layout="T"), 1, 1)


def _sort_samples(make, dtype):
    yield SampleInput(make((5,)))
    yield SampleInput(make((3, 4)), 0)
    yield SampleInput(make((3, 4)), descending=True)
    yield SampleInput(make((2, 3, 4)), 1, True)
    yield SampleInput(make((4, 3), layout="T"), -1)
    yield SampleInput(make(()))
    yield SampleInput(make((6,), values=[3, 1, 3, 2, 1, 3]), stable=True, nondiff=True)
    yield SampleInput(make((6,), values=[3, 1, 3, 2, 1, 3]), descending=True, stable=True, nondiff=True)
    if np.dtype(dtype).kind == "f":
        yield SampleInput(make((4,), values=[1.0, float("nan"), -1.0, float("inf")]))
        yield SampleInput(make((4,), values=[1.0, float("nan"), -1.0, float("inf")]), descending=True)


def _topk_samples(make, dtype):
    # distinct values: which of several equal values topk returns is unspecified in torch
    yield SampleInput(make.distinct((5,)), 2)
    yield SampleInput(make.distinct((3, 4)), 2, 0)
    yield SampleInput(make.distinct((3, 4)), 3, largest=False)
    yield SampleInput(make.distinct((2, 3, 4)), 1, 1)
    yield SampleInput(make.distinct((4, 3), layout="T"), 2)
    yield SampleInput(make.distinct((5,)), 0)
    yield SampleInput(make.distinct((5,)), 5)


def _tri_samples(make, dtype):
    for k in (0, 1, -1, 5, -5):
        yield SampleInput(make((3, 4)), k)
    yield SampleInput(make((2, 3, 3)))
    yield SampleInput(make((4, 3), layout="T"), 1)


def _diag_samples(make, dtype):
    yield SampleInput(make((3,)))
    yield SampleInput(make((3,)), 1)
    yield SampleInput(make((3,)), -2)
    yield SampleInput(make((3, 4)))
    yield SampleInput(make((3, 4)), 1)
    yield SampleInput(make((3, 4)), -1)
    yield SampleInput(make((4, 3), layout="T"))


def _diagonal_samples(make, dtype):
    yield SampleInput(make((3, 4)))
    yield SampleInput(make((3, 4)), 1)
    yield SampleInput(make((3, 4)), -2)
    yield SampleInput(make((2, 3, 4)), 0, 1, 2)
    yield SampleInput(make((2, 3, 4)), 1, -1, 0)
    yield SampleInput(make((4, 3), layout="T"), 0)


register(
    OpInfo("cat", samples=_cat_samples, dtypes=ALL_NUM),
    OpInfo("stack", samples=_stack_samples, dtypes=ALL_NUM),
    OpInfo("gather", samples=_gather_samples, dtypes=ALL_NUM),
    OpInfo("scatter", samples=_scatter_samples, dtypes=FLOATS),
    OpInfo("scatter_add", samples=_scatter_add_samples, dtypes=FLOATS),
    OpInfo("index_select", samples=_index_select_samples, dtypes=ALL_NUM),
    OpInfo("take_along_dim", samples=_take_along_dim_samples, dtypes=FLOATS),
    OpInfo("repeat", _m("repeat"), samples=_repeat_samples, dtypes=ALL_NUM),
    OpInfo("tile", samples=_tile_samples, dtypes=FLOATS),
    OpInfo("flip", samples=_flip_samples, dtypes=ALL_NUM),
    OpInfo("roll", samples=_roll_samples, dtypes=FLOATS),
    OpInfo("sort", samples=_sort_samples, dtypes=ALL_NUM),
    OpInfo("argsort", samples=_sort_samples, dtypes=ALL_NUM, grad=False),
    OpInfo("topk", samples=_topk_samples, dtypes=ALL_NUM),
    OpInfo("tril", samples=_tri_samples, dtypes=ALL_NUM),
    OpInfo("triu", samples=_tri_samples, dtypes=ALL_NUM),
    OpInfo("diag", samples=_diag_samples, dtypes=ALL_NUM),
    OpInfo("diagonal", samples=_diagonal_samples, dtypes=FLOATS),
)


# ---- views --------------------------------------------------------------------------------------
def _view_samples(make, dtype):
    yield SampleInput(make((2, 3, 4)), 6, 4)
    yield SampleInput(make((2, 3, 4)), (4, -1))
    yield SampleInput(make((2, 3, 4)), -1)
    yield SampleInput(make(()), 1)
    yield SampleInput(make((1,)), ())
    yield SampleInput(make((0, 3)), 3, 0)
    yield SampleInput(make((3, 4), layout="slice"), 3, 2, 2)  # splitting a strided dim is still a view


def _reshape_samples(make, dtype):
    yield from _view_samples(make, dtype)
    yield SampleInput(make((4, 3), layout="T"), -1)          # needs a copy: clone + _unsafe_view
    yield SampleInput(make((3, 4), layout="slice"), 12)


def _flatten_samples(make, dtype):
    yield SampleInput(make((2, 3, 4)))
    yield SampleInput(make((2, 3, 4)), 1)
    yield SampleInput(make((2, 3, 4)), 0, 1)
    yield SampleInput(make((2, 3, 4)), -2, -1)
    yield SampleInput(make(()))
    yield SampleInput(make((5,)))
    yield SampleInput(make((4, 3), layout="T"))


def _unflatten_samples(make, dtype):
    yield SampleInput(make((6, 4)), 0, (2, 3))
    yield SampleInput(make((4, 6)), -1, (3, -1))
    yield SampleInput(make((4, 6)), 1, (6,))


def _permute_samples(make, dtype):
    yield SampleInput(make((2, 3, 4)), (2, 0, 1))
    yield SampleInput(make((2, 3, 4)), 1, 0, 2)
    yield SampleInput(make((2, 3, 4)), (-1, -2, -3))
    yield SampleInput(make(()), ())
    yield SampleInput(make((4, 3), layout="T"), (1, 0))


def _transpose_samples(make, dtype):
    yield SampleInput(make((2, 3, 4)), 0, 2)
    yield SampleInput(make((2, 3, 4)), -1, 1)
    yield SampleInput(make((3, 4)), 0, 0)
    yield SampleInput(make((4, 3), layout="T"), 0, 1)
    yield SampleInput(make(()), 0, -1)


def _t_samples(make, dtype):
    yield SampleInput(make((3, 4)))
    yield SampleInput(make((3,)))
    yield SampleInput(make(()))
    yield SampleInput(make((4, 3), layout="T"))


def _expand_samples(make, dtype):
    yield SampleInput(make((3, 1)), 3, 4)
    yield SampleInput(make((3, 1)), (2, 3, 4))
    yield SampleInput(make((4,)), -1)
    yield SampleInput(make((1, 4)), 3, -1)
    yield SampleInput(make(()), 2, 3)
    yield SampleInput(make((3, 4), layout="T"), 2, 3, 4)


def _expand_as_samples(make, dtype):
    yield SampleInput(make((3, 1)), make((2, 3, 4), requires_grad=False))
    yield SampleInput(make(()), make((3,), requires_grad=False))


def _squeeze_samples(make, dtype):
    yield SampleInput(make((1, 3, 1, 4)))
    yield SampleInput(make((1, 3, 1, 4)), 0)
    yield SampleInput(make((1, 3, 1, 4)), 1)
    yield SampleInput(make((1, 3, 1, 4)), -2)
    yield SampleInput(make((1, 3, 1, 4)), (0, 2))
    yield SampleInput(make(()))
    yield SampleInput(make(()), 0)
    yield SampleInput(make((1, 1)))


def _unsqueeze_samples(make, dtype):
    yield SampleInput(make((3, 4)), 0)
    yield SampleInput(make((3, 4)), -1)
    yield SampleInput(make((3, 4)), 1)
    yield SampleInput(make(()), 0)
    yield SampleInput(make((4, 3), layout="T"), 2)


def _narrow_samples(make, dtype):
    yield SampleInput(make((4, 5)), 0, 1, 2)
    yield SampleInput(make((4, 5)), 1, 0, 5)
    yield SampleInput(make((4, 5)), -1, 2, 0)
    yield SampleInput(make((4, 5)), 1, -3, 2)
    yield SampleInput(make((5, 4), layout="T"), 0, 3, 1)


def _select_samples(make, dtype):
    yield SampleInput(make((4, 5)), 0, 1)
    yield SampleInput(make((4, 5)), 1, -1)
    yield SampleInput(make((2, 3, 4)), -1, 3)
    yield SampleInput(make((5,)), 0, 2)
    yield SampleInput(make((5, 4), layout="T"), 1, 0)


def _unbind_samples(make, dtype):
    yield SampleInput(make((3, 4)))
    yield SampleInput(make((3, 4)), 1)
    yield SampleInput(make((2, 3, 4)), -1)
    yield SampleInput(make((4, 3), layout="T"), 0)


def _split_samples(make, dtype):
    yield SampleInput(make((5, 4)), 2)
    yield SampleInput(make((5, 4)), 2, 1)
    yield SampleInput(make((5, 4)), [1, 3, 1])
    yield SampleInput(make((5, 4)), (1, 3), -1)
    yield SampleInput(make((5, 4)), 10)
    yield SampleInput(make((4, 5), layout="T"), 3)
    yield SampleInput(make((5, 4)), [0, 5])


def _chunk_samples(make, dtype):
    yield SampleInput(make((5, 4)), 2)
    yield SampleInput(make((5, 4)), 3, 1)
    yield SampleInput(make((6, 4)), 3)
    yield SampleInput(make((5, 4)), 10)
    yield SampleInput(make((4, 5), layout="T"), 2, -1)


register(
    OpInfo("view", _m("view"), samples=_view_samples, dtypes=ALL_NUM),
    OpInfo("reshape", _m("reshape"), samples=_reshape_samples, dtypes=ALL_NUM),
    OpInfo("torch.reshape", lambda lib, x, *s: lib.reshape(x, s if len(s) != 1 or not isinstance(s[0], tuple)
                                                           else s[0]),
           samples=_reshape_samples),
    OpInfo("flatten", samples=_flatten_samples, dtypes=ALL_NUM),
    OpInfo("unflatten", samples=_unflatten_samples),
    OpInfo("permute", _m("permute"), samples=_permute_samples, dtypes=ALL_NUM),
    OpInfo("transpose", samples=_transpose_samples, dtypes=ALL_NUM),
    OpInfo("t", samples=_t_samples),
    OpInfo("T", lambda lib, x: x.T, samples=lambda make, dt: [SampleInput(make((3, 4))), SampleInput(make((2,)))]),
    OpInfo("mT", lambda lib, x: x.mT, samples=lambda make, dt: [SampleInput(make((2, 3, 4)))]),
    OpInfo("expand", _m("expand"), samples=_expand_samples, dtypes=ALL_NUM),
    OpInfo("expand_as", _m("expand_as"), samples=_expand_as_samples),
    OpInfo("squeeze", samples=_squeeze_samples, dtypes=ALL_NUM),
    OpInfo("unsqueeze", samples=_unsqueeze_samples, dtypes=ALL_NUM),
    OpInfo("narrow", samples=_narrow_samples, dtypes=ALL_NUM),
    OpInfo("select", samples=_select_samples, dtypes=ALL_NUM),
    OpInfo("unbind", samples=_unbind_samples, dtypes=ALL_NUM),
    OpInfo("split", samples=_split_samples, dtypes=ALL_NUM),
    OpInfo("chunk", samples=_chunk_samples, dtypes=ALL_NUM),
    OpInfo("clone", samples=unary_samples(), dtypes=ALL_NUM),
    OpInfo("contiguous", _m("contiguous"), samples=unary_samples(), dtypes=FLOATS),
)


# ---- indexing ---------------------------------------------------------------------------------------
def _index_list(make):
    """(description, index builder from a maker) for x of shape (4, 5, 6)."""
    return [
        ("int", 1), ("neg int", -1), ("slice", slice(1, 3)), ("step slice", slice(None, None, 2)),
        ("neg slice", slice(-3, -1)), ("slice past end", slice(2, 100)), ("empty slice", slice(3, 1)),
        ("int,slice", (2, slice(1, 4))), ("None", None), ("None mid", (slice(None), None, 1)),
        ("Ellipsis", Ellipsis), ("Ellipsis,int", (Ellipsis, 0)), ("int,Ellipsis,int", (1, Ellipsis, 2)),
        ("int tensor", make.index((3,), 4)), ("int tensor 2-D", make.index((2, 2), 4)),
        ("list", [0, 2, 2]), ("two tensors", (make.index((3,), 4), make.index((3,), 5))),
        ("broadcast tensors", (make.index((2, 1), 4), make.index((1, 3), 5))),
        ("tensor, slice", (make.index((3,), 4), slice(1, 3))),
        ("slice, tensor", (slice(None), make.index((2,), 5))),
        ("separated tensors", (make.index((2,), 4), slice(None), make.index((2,), 6))),
        ("bool mask", make.mask((4, 5, 6))), ("bool mask 1-D", make.mask((4,))),
        ("bool mask 2-D, int", (make.mask((4, 5)), 1)), ("slice, bool mask", (slice(None), make.mask((5,)))),
        ("True", True), ("False", False), ("empty int tensor", Leaf(np.zeros(0, "int64"))),
        ("neg int tensor", Leaf(np.array([-1, -4], "int64"))),
        ("tensor 0-d", Leaf(np.array(2, "int64"))),
        ("Ellipsis, None", (Ellipsis, None)),
        ("int, None, tensor", (0, None, make.index((2,), 5))),
    ]


def _getitem_samples(make, dtype):
    x = make((4, 5, 6))
    for desc, idx in _index_list(make):
        yield SampleInput(x, idx, desc=f"x[4,5,6][{desc}]")
    xt = make((4, 5, 6), layout="T")
    yield SampleInput(xt, (slice(None), make.index((3,), 5)), desc="xT[:, tensor]")
    yield SampleInput(make(()), None, desc="x0d[None]")
    yield SampleInput(make(()), Ellipsis, desc="x0d[...]")
    yield SampleInput(make(()), make.mask(()), desc="x0d[bool0d]")


def _getitem_fn(lib, x, idx):
    return x[idx]


def _setitem_samples(make, dtype):
    for desc, idx in _index_list(make):
        if desc in ("True", "False", "None", "Ellipsis, None", "None mid", "int, None, tensor"):
            continue
        yield SampleInput(make((4, 5, 6)), idx, 1.5 if np.dtype(dtype).kind == "f" else 3, desc=f"x[{desc}] = 1.5")
    yield SampleInput(make((4, 5, 6)), (1, slice(1, 3)), make((2, 6)), desc="x[1, 1:3] = t")
    yield SampleInput(make((4, 5, 6)), (slice(None), 0), make((6,)), desc="x[:, 0] = t (broadcast)")
    yield SampleInput(make((4, 5, 6)), make.index((2,), 4), make((2, 5, 6)), desc="x[int tensor] = t")
    yield SampleInput(make((4, 5, 6)), make.mask((4, 5)), make((6,)), desc="x[mask] = t")
    yield SampleInput(make((4, 5, 6)), Ellipsis, make(()), desc="x[...] = t0d")
    yield SampleInput(make((4, 5, 6), requires_grad=False), (1, slice(1, 3)), make((2, 6)),
                      desc="x[1, 1:3] = t (only t requires grad)")
    yield SampleInput(make((4, 5, 6), requires_grad=False), make.index((2,), 4), make((5, 6)),
                      desc="x[int tensor] = t (only t requires grad)")
    yield SampleInput(make((4, 5, 6)), 0, make((5, 6), dtype="int64" if np.dtype(dtype).kind == "f" else None),
                      desc="x[0] = int tensor")
    # small ones, for finite differences
    yield SampleInput(make((2, 3)), 0, make((3,)), desc="x[2,3][0] = t")
    yield SampleInput(make((2, 3)), (slice(None), 1), make(()), desc="x[2,3][:, 1] = t0d")
    # a repeated index: torch's gradient counts the value once per index, though one write survives
    yield SampleInput(make((2, 3)), Leaf(np.array([1, 1], "int64")), make((3,)), desc="x[2,3][[1, 1]] = t",
                      nondiff=True)
    yield SampleInput(make((2, 3)), Leaf(np.array([1, 0], "int64")), make((3,)), desc="x[2,3][[1, 0]] = t")
    yield SampleInput(make((2, 3)), Ellipsis, make((3,)), desc="x[2,3][...] = t")


def _setitem_fn(lib, x, idx, value):
    y = x.clone()      # a non-leaf, so the assignment is recorded (CopySlices)
    y[idx] = value
    return y


register(
    OpInfo("__getitem__", _getitem_fn, samples=_getitem_samples, dtypes=ALL_NUM),
    OpInfo("__setitem__", _setitem_fn, samples=_setitem_samples, dtypes=ALL_NUM),
)


# ---- in-place variants --------------------------------------------------------------------------------
def _inplace(method):
    def fn(lib, x, *a, **k):
        y = x.clone() if x.requires_grad else x.clone()  # in-place on a non-leaf, so autograd records it
        out = getattr(y, method)(*a, **k)
        assert out is y
        return y
    return fn


def _aug(op):
    def fn(lib, x, other):
        y = x.clone()
        if op == "+":
            y += other
        elif op == "-":
            y -= other
        elif op == "*":
            y *= other
        elif op == "/":
            y /= other
        return y
    return fn


def _inplace_binary_samples(exclude_zero=False, alpha=False):
    def gen(make, dtype):
        # the result keeps self's shape and dtype: other broadcasts to self
        for sa, sb in (((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 4), ()), ((), ()), ((2, 3, 4), (3, 1))):
            yield SampleInput(make(sa), make(sb, exclude_zero=exclude_zero))
        yield SampleInput(make((3, 4), layout="T"), make((3, 4), layout="slice", exclude_zero=exclude_zero))
        yield SampleInput(make((3, 4)), 2)
        if np.dtype(dtype).kind == "f":
            yield SampleInput(make((3, 4)), -0.5)
            yield SampleInput(make((3, 4)), make((4,), dtype="int64", exclude_zero=exclude_zero))
            yield SampleInput(make((3,)), make((3,), dtype="float64" if dtype == "float32" else "float32",
                                               exclude_zero=exclude_zero))
        if alpha:
            yield SampleInput(make((3, 4)), make((4,)), alpha=2)
    return gen


def _fill_samples(make, dtype):
    f = np.dtype(dtype).kind == "f"
    yield SampleInput(make((3, 4)), 1.5 if f else 2)
    yield SampleInput(make(()), -1)
    yield SampleInput(make((4, 3), layout="T"), 0)
    if f:
        yield SampleInput(make((3, 4)), make(()))


def _copy_samples(make, dtype):
    yield SampleInput(make((3, 4)), make((3, 4)))
    yield SampleInput(make((3, 4)), make((4,)))
    yield SampleInput(make((3, 4)), make(()))
    yield SampleInput(make((3, 4), layout="T"), make((3, 4), layout="slice"))
    other = "float32" if dtype == "float64" else "float64"
    yield SampleInput(make((3, 4)), make((3, 4), dtype=other))
    yield SampleInput(make((3, 4)), make((3, 4), dtype="int64"))


register(
    OpInfo("add_", _inplace("add_"), samples=_inplace_binary_samples(alpha=True), dtypes=ALL_NUM),
    OpInfo("sub_", _inplace("sub_"), samples=_inplace_binary_samples(alpha=True), dtypes=ALL_NUM),
    OpInfo("mul_", _inplace("mul_"), samples=_inplace_binary_samples(), dtypes=ALL_NUM),
    OpInfo("div_", _inplace("div_"), samples=_inplace_binary_samples(exclude_zero=True), dtypes=FLOATS),
    OpInfo("__iadd__", _aug("+"), samples=_inplace_binary_samples(), dtypes=ALL_NUM),
    OpInfo("__isub__", _aug("-"), samples=_inplace_binary_samples(), dtypes=ALL_NUM),
    OpInfo("__imul__", _aug("*"), samples=_inplace_binary_samples(), dtypes=ALL_NUM),
    OpInfo("__itruediv__", _aug("/"), samples=_inplace_binary_samples(exclude_zero=True), dtypes=FLOATS),
    OpInfo("zero_", _inplace("zero_"), samples=unary_samples(), dtypes=ALL_NUM),
    OpInfo("fill_", _inplace("fill_"), samples=_fill_samples, dtypes=ALL_NUM),
    OpInfo("copy_", _inplace("copy_"), samples=_copy_samples, dtypes=ALL_NUM),
    OpInfo("clamp_", _inplace("clamp_"), samples=_clamp_samples, dtypes=ALL_NUM),
    OpInfo("masked_fill_", _inplace("masked_fill_"), samples=_masked_fill_samples, dtypes=ALL_NUM),
    OpInfo("exp_", _inplace("exp_"), samples=unary_samples(), dtypes=FLOATS),
    OpInfo("relu_", _inplace("relu_"), samples=unary_samples(exclude_zero=True), dtypes=FLOATS),
)


# ---- in-place ops with derivatives of their own, and variants declared since (defop inplace=True / inplace_of)
def _inplace_functional(name):
    """``F.<name>`` on a copy of x (in place: autograd records it on the copy)."""
    def fn(lib, x, *a, **k):
        y = x.clone()
        out = getattr(lib.nn.functional, name)(y, *a, **k)
        assert out is y
        return y
    return fn


def _compare_inplace_samples(make, dtype):
    for sa, sb in (((3, 4), (3, 4)), ((3, 4), (4,)), ((), ())):
        yield SampleInput(make(sa), make(sb))
    yield SampleInput(make((3, 4), layout="T"), 0.25)
    yield SampleInput(make((3, 4)), make(()))


def _activation_inplace_samples(*extra):
    def gen(make, dtype):
        yield SampleInput(make((3, 4), exclude_zero=True), *extra)
        yield SampleInput(make((4, 3), layout="T", exclude_zero=True), *extra)
        yield SampleInput(make((), exclude_zero=True), *extra)
    return gen


def _index_copy_inplace_samples(make, dtype):
    yield SampleInput(make((4, 3)), 0, Leaf(np.array([3, 1])), make((2, 3)))
    yield SampleInput(make((3, 4)), 1, Leaf(np.array([0, 2])), make((3, 2)))


register(
    OpInfo("gt_", _inplace("gt_"), samples=_compare_inplace_samples, dtypes=ALL_NUM, gradcheck=False),
    OpInfo("eq_", _inplace("eq_"), samples=_compare_inplace_samples, dtypes=ALL_NUM, gradcheck=False),
    OpInfo("xlogy_", _inplace("xlogy_"), samples=unary_samples(low=0.1, high=2, shapes=[((3, 4), "contig")]),
           dtypes=FLOATS, gradgrad=False),
    OpInfo("polygamma_", _inplace("polygamma_"),
           samples=lambda make, dtype: iter([SampleInput(make((3, 4), low=0.5, high=3), 1)]), dtypes=FLOATS),
    OpInfo("logit_", _inplace("logit_"), samples=lambda make, dtype: iter(
        [SampleInput(make((3, 4), low=0.1, high=0.9)), SampleInput(make((3, 4), low=0.1, high=0.9), 0.2)]),
        dtypes=FLOATS),
    OpInfo("tril_", _inplace("tril_"), samples=lambda make, dtype: iter(
        [SampleInput(make((3, 4))), SampleInput(make((2, 4, 3), layout="T"), 1)]), dtypes=ALL_NUM),
    OpInfo("index_copy_", _inplace("index_copy_"), samples=_index_copy_inplace_samples, dtypes=ALL_NUM),
    OpInfo("F.leaky_relu_", _inplace_functional("leaky_relu_"), samples=_activation_inplace_samples(0.1)),
    OpInfo("F.elu_", _inplace_functional("elu_"), samples=_activation_inplace_samples(0.7)),
    OpInfo("F.celu_", _inplace_functional("celu_"), samples=_activation_inplace_samples(0.5)),
    OpInfo("F.threshold_", _inplace_functional("threshold_"), samples=_activation_inplace_samples(0.1, 2.0)),
    OpInfo("F.hardtanh_", _inplace_functional("hardtanh_"), samples=_activation_inplace_samples(-0.5, 0.5)),
    OpInfo("F.silu(inplace)", lambda lib, x: lib.nn.functional.silu(x.clone(), inplace=True),
           samples=_activation_inplace_samples()),
)


def get(name):
    for op in op_db:
        if op.name == name:
            return op
    raise KeyError(name)


# ---- beyond the issue's list: ops the nn and optim code relies on ----------------------------------
def _addmm_samples(make, dtype):
    yield SampleInput(make((4,)), make((2, 3)), make((3, 4)))
    yield SampleInput(make((2, 4)), make((2, 3)), make((3, 4)), beta=0.5, alpha=2)
    yield SampleInput(make((1, 4)), make((3, 2), layout="T"), make((3, 4)))
    yield SampleInput(make(()), make((2, 3)), make((3, 4)))


def _addc_samples(make, dtype):
    yield SampleInput(make((3, 4)), make((3, 4)), make((3, 4), exclude_zero=True))
    yield SampleInput(make((3, 4)), make((4,)), make((3, 1), exclude_zero=True), value=0.5)


def _masked_select_samples(make, dtype):
    yield SampleInput(make((3, 4)), make.mask((3, 4)))
    yield SampleInput(make((3, 4)), make.mask((4,)))
    yield SampleInput(make((4,)), make.mask((3, 4)))


def _index_add_samples(make, dtype):
    yield SampleInput(make((3, 4)), 0, Leaf(np.array([0, 2, 0], "int64")), make((3, 4)))
    yield SampleInput(make((3, 4)), 1, Leaf(np.array([3, 1], "int64")), make((3, 2)), alpha=2)


def _kth_samples(make, dtype):
    yield SampleInput(make.distinct((5,)), 2)
    yield SampleInput(make.distinct((3, 4)), 3, 1)
    yield SampleInput(make.distinct((3, 4)), 1, 0, True)


def _median_samples(make, dtype):
    yield SampleInput(make.distinct((5,)))
    yield SampleInput(make.distinct((3, 4)))
    yield SampleInput(make.distinct((3, 5)), 1)
    yield SampleInput(make.distinct((3, 4)), 0, True)


def _tensordot_samples(make, dtype):
    yield SampleInput(make((2, 3, 4)), make((3, 4, 5)), 2)
    yield SampleInput(make((2, 3)), make((3, 4)), 1)
    yield SampleInput(make((2, 3, 4)), make((4, 3, 2)), ([1, 2], [1, 0]))


def _square_samples(make, dtype):
    yield SampleInput(make((3, 3)) if False else Leaf(np.array([[2., 0.5, 0.1], [0.3, 1.5, -0.2], [0.1, 0.4, 3.]],
                                                               dtype), "contig", np.dtype(dtype).kind == "f"))
    yield SampleInput(Leaf(np.array([[[2., 1.], [0.5, 3.]], [[1., 0.2], [0.3, -2.]]], dtype), "contig",
                           np.dtype(dtype).kind == "f"))


register(
    OpInfo("addmm", samples=_addmm_samples),
    OpInfo("baddbmm", samples=lambda make, dt: [SampleInput(make((2, 3, 4)), make((2, 3, 2)), make((2, 2, 4))),
                                                 SampleInput(make((4,)), make((2, 3, 2)), make((2, 2, 4)),
                                                             beta=0.5, alpha=2)]),
    OpInfo("addcmul", samples=_addc_samples),
    OpInfo("addcdiv", samples=_addc_samples),
    OpInfo("masked_select", samples=_masked_select_samples, dtypes=ALL_NUM),
    OpInfo("index_add", samples=_index_add_samples),
    OpInfo("kthvalue", samples=_kth_samples, dtypes=ALL_NUM),
    OpInfo("median", samples=_median_samples, dtypes=ALL_NUM),
    OpInfo("tensordot", samples=_tensordot_samples),
    OpInfo("trace", samples=lambda make, dt: [SampleInput(make((3, 3))), SampleInput(make((2, 4)))]),
    OpInfo("nonzero", samples=lambda make, dt: [SampleInput(make((3, 4), low=-1, high=2)),
                                                 SampleInput(make((5,), low=-1, high=2))], dtypes=ALL_NUM, grad=False),
    OpInfo("movedim", samples=lambda make, dt: [SampleInput(make((2, 3, 4)), 0, 2), SampleInput(make((2, 3, 4)), (0, 1), (2, 0))]),
    OpInfo("linalg.det", lambda lib, x: lib.linalg.det(x), samples=_square_samples),
    OpInfo("linalg.inv", lambda lib, x: lib.linalg.inv(x), samples=_square_samples),
    OpInfo("linalg.norm", lambda lib, x, *a, **k: lib.linalg.norm(x, *a, **k),
           samples=lambda make, dt: [SampleInput(make((3, 4))), SampleInput(make((3, 4)), dim=1),
                                     SampleInput(make((5,)), 3)]),
    OpInfo("cummax", samples=lambda make, dt: [SampleInput(make.distinct((5,)), 0), SampleInput(make.distinct((3, 4)), 1)],
           dtypes=ALL_NUM),
    OpInfo("std_mean", samples=lambda make, dt: [SampleInput(make((3, 4)), 1), SampleInput(make((3, 4)))]),
    OpInfo("repeat_interleave", samples=lambda make, dt: [SampleInput(make((2, 3)), 2, 1), SampleInput(make((3,)), 2)]),
)


# ---- at the edges: zeros, constants, where torch's formulas choose a value (nondiff points) ---------
register(
    OpInfo("std.constant", lambda lib, x, *a: x.std(*a), dtypes=FLOATS,
           samples=lambda make, dt: [SampleInput(make((2, 3), values=np.ones((2, 3))), 1, nondiff=True),
                                     SampleInput(make((3,), values=[2., 2., 2.]), nondiff=True)]),
    OpInfo("pow.zeros", lambda lib, a, b: a ** b, dtypes=FLOATS,
           samples=lambda make, dt: [SampleInput(make((4,), values=[0., 0., 2., 0.]), make((4,), values=[0., 2., 0., -1.]),
                                                 nondiff=True),
                                     SampleInput(make((3,), values=[0., 1., 2.]), 0, nondiff=True)]),
    OpInfo("__rpow__.edge_bases", lambda lib, x, c: c ** x, dtypes=FLOATS,
           samples=lambda make, dt: [SampleInput(make((3,), values=[0., 2., -1.]), 0, nondiff=True),
                                     SampleInput(make((3,), values=[0., 2., -1.]), -2.0, nondiff=True)]),
    OpInfo("relu.zeros", lambda lib, x: lib.relu(x).norm(dim=0, keepdim=True), dtypes=FLOATS,
           samples=lambda make, dt: [SampleInput(make((1, 3), values=[[-1., 0., 2.]]), nondiff=True)]),
    OpInfo("clamp.at_bounds", lambda lib, x, lo, hi: x.clamp(lo, hi), dtypes=FLOATS,
           samples=lambda make, dt: [SampleInput(make((4,), values=[-1., 0., 1., 2.]), -1.0, 1.0, nondiff=True),
                                     SampleInput(make((3,), values=[0., 1., 2.]), make((3,), values=[0., 2., 1.]),
                                                 make((3,), values=[1., 1., 1.]), nondiff=True)]),
)


# ---- torch.nn.functional: activations, convolution, pooling, padding, resampling -------------------------
def _nnf(name, **fixed):
    """fn calling torch.nn.functional.<name>(*args, **fixed, **kwargs)."""
    return lambda lib, *a, **k: getattr(lib.nn.functional, name)(*a, **fixed, **k)


ACT_SHAPES = [((3, 4), "contig"), ((2, 3, 4), "contig"), ((4, 3), "T"), ((), "contig"), ((0, 3), "contig")]
# torch's kinks (0 for the relus, +-3 for the hard ones, +-lambd for the shrinks), where its formulas
# pick one side: compared with torch, not with finite differences
_KINKS = [-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 6.0]


def _act_samples(low=-4, high=4, kinks=True, **kwargs):
    def gen(make, dtype):
        for shape, layout in ACT_SHAPES:
            yield SampleInput(make(shape, low=low, high=high, layout=layout), **kwargs)
        if kinks and np.dtype(dtype).kind == "f":
            yield SampleInput(make((len(_KINKS),), values=_KINKS), nondiff=True, **kwargs)
    return gen


_ACTIVATIONS = [
    # name, kwargs, dtypes, gradgrad
    ("leaky_relu", {}, ALL_NUM, True), ("leaky_relu", {"negative_slope": 0.2}, FLOATS, True),
    ("elu", {}, ALL_NUM, True), ("elu", {"alpha": 0.5}, FLOATS, True), ("selu", {}, ALL_NUM, True),
    ("celu", {"alpha": 1.5}, ALL_NUM, True), ("gelu", {}, ALL_NUM, True), ("gelu", {"approximate": "tanh"}, FLOATS, True),
    ("silu", {}, ALL_NUM, True), ("mish", {}, ALL_NUM, True), ("softplus", {}, ALL_NUM, True),
    ("softplus", {"beta": 2.0, "threshold": 1.0}, FLOATS, True), ("logsigmoid", {}, ALL_NUM, True),
    ("hardtanh", {}, ALL_NUM, True), ("hardtanh", {"min_val": -0.5, "max_val": 2.0}, FLOATS, True),
    ("relu6", {}, ALL_NUM, True), ("hardsigmoid", {}, ALL_NUM, False), ("hardswish", {}, ALL_NUM, True),
    ("softshrink", {}, ALL_NUM, True), ("hardshrink", {"lambd": 0.3}, ALL_NUM, True),
    ("threshold", {"threshold": 0.1, "value": 2.0}, ALL_NUM, True), ("rrelu", {}, FLOATS, True),
    ("softsign", {}, FLOATS, True), ("tanhshrink", {}, FLOATS, True),
]
for _name, _kw, _dtypes, _gg in _ACTIVATIONS:
    register(OpInfo(f"nn.functional.{_name}" + "".join(f".{k}={v}" for k, v in _kw.items()), _nnf(_name, **_kw),
                    samples=_act_samples(), dtypes=_dtypes, gradgrad=_gg))


def _glu_samples(make, dtype):
    yield SampleInput(make((3, 4)))
    yield SampleInput(make((4, 3)), dim=0)
    yield SampleInput(make((2, 6, 2), layout="T"), 1)
    yield SampleInput(make((3, 3)))                      # odd: torch's error
    yield SampleInput(make(()))


def _prelu_samples(make, dtype):
    yield SampleInput(make((3, 4)), make((1,), low=0.1, high=0.5))
    yield SampleInput(make((2, 3, 4)), make((3,), low=0.1, high=0.5))
    yield SampleInput(make((2, 3, 2, 2), layout="T"), make((3,)))
    yield SampleInput(make((2, 3)), make((2,)))          # torch's channel mismatch error


register(
    OpInfo("nn.functional.glu", _nnf("glu"), samples=_glu_samples, dtypes=FLOATS + INTS),
    OpInfo("nn.functional.prelu", _nnf("prelu"), samples=_prelu_samples),
)


def _conv_samples(nd, transposed=False):
    def gen(make, dtype):
        size = (5, 4, 3)[:nd]
        for groups, stride, padding, dilation, bias in ((1, 1, 0, 1, True), (2, 2, 1, 1, False), (1, 1, 1, 2, True),
                                                        (2, 2, 0, 1, True)):
            if transposed:   # weight (in, out/groups, *k); output_padding < stride
                x = make((2, 4) + size)
                w = make((4, 6 // groups) + (2,) * nd)
                kw = dict(stride=stride, padding=padding, groups=groups, dilation=dilation,
                          output_padding=stride - 1)
            else:
                x = make((2, 4) + size)
                w = make((6, 4 // groups) + (2,) * nd)
                kw = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
            yield SampleInput(x, w, make((6,)) if bias else None, **kw)
        yield SampleInput(make((4,) + size), make((3, 4) + (2,) * nd))               # unbatched
        yield SampleInput(make((1, 1) + size[:nd]), make((1, 1) + (2,) * nd))       # small: finite differences
        yield SampleInput(make((2, 3) + size), make((3, 4) + (2,) * nd))            # channel mismatch: torch's error
    return gen


register(
    OpInfo("nn.functional.conv1d", _nnf("conv1d"), samples=_conv_samples(1), dtypes=FLOATS + INTS),
    OpInfo("nn.functional.conv2d", _nnf("conv2d"), samples=_conv_samples(2)),
    OpInfo("nn.functional.conv3d", _nnf("conv3d"), samples=_conv_samples(3), dtypes=("float64",)),
    OpInfo("nn.functional.conv_transpose1d", _nnf("conv_transpose1d"), samples=_conv_samples(1, True)),
    OpInfo("nn.functional.conv_transpose2d", _nnf("conv_transpose2d"), samples=_conv_samples(2, True)),
    OpInfo("nn.functional.conv_transpose3d", _nnf("conv_transpose3d"), samples=_conv_samples(3, True),
           dtypes=("float64",)),
    OpInfo("nn.functional.conv2d.same", _nnf("conv2d", padding="same"), dtypes=FLOATS,
           samples=lambda make, dt: [SampleInput(make((1, 2, 4, 5)), make((3, 2, 3, 3))),
                                     SampleInput(make((1, 2, 4, 5)), make((3, 2, 2, 2)))]),
    OpInfo("nn.functional.bilinear", _nnf("bilinear"),
           samples=lambda make, dt: [SampleInput(make((4, 2)), make((4, 3)), make((5, 2, 3)), make((5,))),
                                     SampleInput(make((2, 2, 2)), make((2, 2, 3)), make((2, 2, 3))),
                                     SampleInput(make((1, 2)), make((1, 2)), make((2, 2, 2)))]),
    OpInfo("nn.functional.embedding", lambda lib, idx, w, **k: lib.nn.functional.embedding(idx, w, **k),
           samples=lambda make, dt: [SampleInput(make.index((2, 3), 5), make((5, 3))),
                                     SampleInput(make.index((4,), 5), make((5, 2)), padding_idx=1),
                                     # (scale_grad_by_freq: torch's rescaled gradient is not the derivative)
                                     SampleInput(Leaf(np.array([1, 1, 3], "int64")), make((4, 2)),
                                                 scale_grad_by_freq=True, nondiff=True),
                                     SampleInput(Leaf(np.array([0, 7], "int64")), make((4, 2)))]),   # out of range
)


def _pool_samples(nd, make, dtype):
    size = (6, 5, 4)[:nd]
    yield SampleInput(make((2, 3) + size), 2)
    yield SampleInput(make((2, 3) + size), 3, 2, 1)
    yield SampleInput(make((3,) + size), 2, 1)                      # unbatched, overlapping windows
    yield SampleInput(make((2, 3) + size), 2, ceil_mode=True)
    yield SampleInput(make((1, 1) + (3,) * nd), 2, 1)               # small: finite differences
    yield SampleInput(make((1, 1) + (1,) * nd), 2)                  # output too small: torch's error


def _max_pool_samples(nd):
    def gen(make, dtype):
        yield from _pool_samples(nd, make, dtype)
        size = (6, 5, 4)[:nd]
        yield SampleInput(make((2, 3) + size), 3, 1, 1, 2, return_indices=True)    # dilation
        yield SampleInput(make((1, 2) + size, values=np.round(np.linspace(-2, 2, 2 * math.prod(size)) * 2) / 2),
                          2, return_indices=True, nondiff=True)                     # ties: the first wins
    return gen


def _avg_pool_samples(nd):
    def gen(make, dtype):
        yield from _pool_samples(nd, make, dtype)
        size = (6, 5, 4)[:nd]
        yield SampleInput(make((2, 3) + size), 3, 2, 1, count_include_pad=False)
        if nd > 1:
            yield SampleInput(make((2, 3) + size), 2, divisor_override=3)
    return gen


register(
    OpInfo("nn.functional.max_pool1d", _nnf("max_pool1d"), samples=_max_pool_samples(1), dtypes=FLOATS + INTS),
    OpInfo("nn.functional.max_pool2d", _nnf("max_pool2d"), samples=_max_pool_samples(2), dtypes=FLOATS + INTS),
    OpInfo("nn.functional.max_pool3d", _nnf("max_pool3d"), samples=_max_pool_samples(3)),
    OpInfo("nn.functional.avg_pool1d", _nnf("avg_pool1d"), samples=_avg_pool_samples(1)),
    OpInfo("nn.functional.avg_pool2d", _nnf("avg_pool2d"), samples=_avg_pool_samples(2), dtypes=FLOATS + INTS),
    OpInfo("nn.functional.avg_pool3d", _nnf("avg_pool3d"), samples=_avg_pool_samples(3)),
    OpInfo("nn.functional.lp_pool2d", _nnf("lp_pool2d"), gradgrad=False,
           samples=lambda make, dt: [SampleInput(make((2, 3, 4, 4), low=0.5, high=2), 2, 2),
                                     SampleInput(make((1, 1, 3, 3), low=0.5, high=2), 3.0, 2, 1)]),
    OpInfo("nn.functional.adaptive_avg_pool1d", _nnf("adaptive_avg_pool1d"),
           samples=lambda make, dt: [SampleInput(make((2, 3, 7)), 4), SampleInput(make((3, 7)), 3),
                                     SampleInput(make((1, 1, 5)), 2)]),
    OpInfo("nn.functional.adaptive_avg_pool2d", _nnf("adaptive_avg_pool2d"),
           samples=lambda make, dt: [SampleInput(make((2, 3, 7, 5)), (3, 2)), SampleInput(make((3, 6, 6)), 4),
                                     SampleInput(make((2, 3, 4, 4)), 1), SampleInput(make((2, 3, 5, 5)), (None, 2)),
                                     SampleInput(make((1, 1, 3, 4)), (2, 3)), SampleInput(make((4,)), 2)]),
    OpInfo("nn.functional.adaptive_max_pool1d", _nnf("adaptive_max_pool1d"),
           samples=lambda make, dt: [SampleInput(make.distinct((2, 3, 7)), 4, True), SampleInput(make((1, 1, 5)), 2)]),
    OpInfo("nn.functional.adaptive_max_pool2d", _nnf("adaptive_max_pool2d"),
           samples=lambda make, dt: [SampleInput(make.distinct((2, 3, 7, 5)), (3, 2), True),
                                     SampleInput(make.distinct((3, 6, 6)), 3),
                                     SampleInput(make((1, 1, 3, 4)), (2, 3))]),
)


def _pad_samples(mode):
    def gen(make, dtype):
        yield SampleInput(make((2, 3, 5)), (1, 2), mode=mode)
        yield SampleInput(make((2, 3, 4, 5)), (2, 1, 0, 2), mode=mode)
        yield SampleInput(make((1, 2, 3, 4, 5)), (1, 1, 2, 0, 1, 2), mode=mode)
        yield SampleInput(make((1, 2, 4)), (1, 1), mode=mode)
        if mode == "constant":
            yield SampleInput(make((3, 4)), (-1, 2, 1, -1), value=1.5)
        else:
            yield SampleInput(make((1, 1, 3, 3)), (1, 1), mode=mode)         # 4-d with 2 pads: torch's error
    return gen


register(*[OpInfo(f"nn.functional.pad.{mode}", _nnf("pad"), samples=_pad_samples(mode))
           for mode in ("constant", "reflect", "replicate", "circular")])


def _interp_samples(mode, nd):
    def gen(make, dtype):
        shape = (2, 3) + (4, 3, 2)[:nd]
        ac = {} if mode in ("nearest", "nearest-exact", "area") else {"align_corners": False}
        yield SampleInput(make(shape), scale_factor=2, mode=mode, **ac)
        yield SampleInput(make(shape), scale_factor=1.7, mode=mode, **ac)
        yield SampleInput(make(shape), size=(5, 2, 3)[:nd], mode=mode, **ac)
        if ac:
            yield SampleInput(make(shape), size=(5, 4, 3)[:nd], mode=mode, align_corners=True)
        yield SampleInput(make((1, 1) + (2,) * nd), size=(3,) * nd, mode=mode, **ac)
    return gen


register(*[OpInfo(f"nn.functional.interpolate.{mode}{nd}d", _nnf("interpolate"), samples=_interp_samples(mode, nd))
           for mode, nd in (("nearest", 1), ("nearest", 2), ("nearest", 3), ("nearest-exact", 1),
                            ("nearest-exact", 2), ("linear", 1), ("bilinear", 2), ("trilinear", 3), ("area", 1),
                            ("area", 2), ("area", 3))])
register(
    OpInfo("nn.functional.pixel_shuffle", _nnf("pixel_shuffle"),
           samples=lambda make, dt: [SampleInput(make((2, 8, 2, 3)), 2), SampleInput(make((4, 1, 1)), 2),
                                     SampleInput(make((1, 3, 2, 2)), 2)]),
    OpInfo("nn.functional.pixel_unshuffle", _nnf("pixel_unshuffle"),
           samples=lambda make, dt: [SampleInput(make((2, 2, 4, 6)), 2), SampleInput(make((1, 2, 2)), 2),
                                     SampleInput(make((1, 1, 3, 4)), 2)]),
)


# ---- reductions and linear algebra on the op seam: the overloads and ops not covered above ------------
def _nan_samples(make, dtype):
    yield SampleInput(make((3, 4)))
    yield SampleInput(make((3, 4)), 1, keepdim=True)
    if np.dtype(dtype).kind == "f":
        x = make((3, 4), values=[[1, np.nan, 2, 3], [np.nan, np.nan, 1, 0.5], [2, 2, 1, 0]])
        yield SampleInput(x)
        yield SampleInput(x, 1)
        yield SampleInput(x, (0, 1), keepdim=True)
        yield SampleInput(x, dim=[])


def _aminmax_samples(make, dtype):
    yield SampleInput(make((3, 4)))
    yield SampleInput(make((3, 4)), dim=1)
    yield SampleInput(make((3, 4)), dim=-2, keepdim=True)
    yield SampleInput(make((3, 4)), keepdim=True)
    yield SampleInput(make(()))
    yield SampleInput(ties_sample(make, dtype), dim=1, nondiff=True)
    yield SampleInput(make((0, 3)))


def _moments_samples(make, dtype):
    yield SampleInput(make((3, 4)), 1)
    yield SampleInput(make((3, 4)))
    yield SampleInput(make((3, 4)), (0, 1), keepdim=True)
    yield SampleInput(make((3, 4)), 0, unbiased=False)
    yield SampleInput(make((3, 4)), dim=1, correction=0, keepdim=True)
    yield SampleInput(make((2, 3, 4)), [0, 2])


def _mode_samples(make, dtype):
    # (the most frequent value is a tie of equal elements: not differentiable)
    yield SampleInput(make((3, 5), values=[[1, 2, 2, 3, 3], [4, 4, 4, 1, 0], [5, 6, 7, 8, 9]]), nondiff=True)
    yield SampleInput(make((3, 5), values=[[1, 2, 2, 3, 3], [4, 4, 4, 1, 0], [5, 6, 7, 8, 9]]), 0, True, nondiff=True)
    yield SampleInput(make((4,), values=[2, 1, 2, 1]), nondiff=True)


def _nanmedian_samples(make, dtype):
    yield from _median_samples(make, dtype)
    if np.dtype(dtype).kind == "f":
        # (a row of NaNs only gets an index that depends on torch's std::nth_element: not compared)
        x = make((3, 4), values=[[1, np.nan, 2, 3], [np.nan, np.nan, 5, np.nan], [2, -1, 1, 0]])
        yield SampleInput(x, 1)
        yield SampleInput(x)


def _median_nan_samples(make, dtype):
    x = make((2, 4), values=[[1, np.nan, 2, 3], [4, 0, -1, 2]])
    yield SampleInput(x, 1)
    yield SampleInput(x)


def _argsort_samples(make, dtype):
    yield SampleInput(make.distinct((3, 4)))
    yield SampleInput(make.distinct((3, 4)), 0, True)
    yield SampleInput(make((4,), values=[2, 1, 2, 1]), stable=True, nondiff=True)
    yield SampleInput(make((4,), values=[2, 1, 2, 1]), descending=True, stable=True, nondiff=True)


def _sort_stable_samples(make, dtype):
    yield SampleInput(make((5,), values=[2, 1, 2, 1, 0]), stable=True, nondiff=True)
    yield SampleInput(make((2, 3), values=[[3, 3, 1], [0, 2, 2]]), dim=0, descending=True, stable=True, nondiff=True)
    yield SampleInput(make.distinct((3, 4)), dim=1, descending=True, stable=False)


def _cummin_samples(make, dtype):
    yield SampleInput(make.distinct((5,)), 0)
    yield SampleInput(make.distinct((3, 4)), 1)
    yield SampleInput(make.distinct((3, 4)), -2)
    yield SampleInput(make(()), 0)


def _unique_samples(make, dtype):
    x = make((6,), values=[3, 1, 2, 3, 1, 5])
    yield SampleInput(x)
    yield SampleInput(x, return_inverse=True)
    yield SampleInput(x, return_counts=True)
    yield SampleInput(x, return_inverse=True, return_counts=True)
    yield SampleInput(make((3, 2), values=[[1, 2], [0, 1], [1, 2]]), dim=0, return_counts=True)


def _count_nonzero_samples(make, dtype):
    x = make((3, 4), low=-1, high=2)
    yield SampleInput(x)
    yield SampleInput(x, 1)
    yield SampleInput(x, (0, 1))
    yield SampleInput(x, dim=())


def _bincount_samples(make, dtype):
    yield SampleInput(Leaf(np.array([0, 1, 1, 3, 2, 1], "int64")))
    yield SampleInput(Leaf(np.array([0, 1, 1, 3], "int64")), minlength=6)
    yield SampleInput(Leaf(np.array([0, 1, 1, 3], "int64")), Leaf(np.array([0.5, 1.0, 2.0, 0.25])))
    yield SampleInput(Leaf(np.array([[0, 1]], "int64")))
    yield SampleInput(Leaf(np.array([0, -1], "int64")))


def _histc_samples(make, dtype):
    yield SampleInput(make((3, 4)))
    yield SampleInput(make((10,)), bins=4, min=-1, max=1)
    yield SampleInput(make((5,), values=[1, 1, 1, 1, 1]), bins=3)


def _searchsorted_samples(make, dtype):
    seq = Leaf(np.array([1, 3, 5, 7, 9], dtype))
    yield SampleInput(seq, Leaf(np.array([[3, 6, 9], [3, 6, 9]], dtype)))
    yield SampleInput(seq, Leaf(np.array([3, 6, 9], dtype)), right=True)
    yield SampleInput(seq, Leaf(np.array([3, 6, 9], dtype)), side="right", out_int32=True)
    yield SampleInput(Leaf(np.array([[1, 3, 5], [2, 4, 6]], dtype)), Leaf(np.array([[3, 6], [1, 5]], dtype)))


def _bucketize_samples(make, dtype):
    yield SampleInput(Leaf(np.array([[3, 6, 9], [1, 5, 10]], dtype)), Leaf(np.array([1, 3, 5, 7, 9], dtype)))
    yield SampleInput(Leaf(np.array([3, 6, 9], dtype)), Leaf(np.array([1, 3, 5, 7, 9], dtype)), right=True)


def _vdot_samples(make, dtype):
    yield SampleInput(make((4,)), make((4,)))
    yield SampleInput(make((4,), layout="slice"), make((4,)))


def _inner_samples(make, dtype):
    yield SampleInput(make((3,)), make((3,)))
    yield SampleInput(make((2, 3)), make((4, 3)))
    yield SampleInput(make((2, 3)), make((3,)))
    yield SampleInput(make(()), make((2, 3)))
    yield SampleInput(make((2, 3)), make((2, 4)))


def _kron_samples(make, dtype):
    yield SampleInput(make((2, 3)), make((2, 2)))
    yield SampleInput(make((3,)), make((4,)))
    yield SampleInput(make((3,)), make((2, 2)))
    yield SampleInput(make((3, 2), layout="T"), make((2,)))        # torch refuses a non-contiguous input


def _tensordot_full_samples(make, dtype):
    yield SampleInput(make((3, 4)), make((3, 4)), 2)
    yield SampleInput(make((3,)), make((3,)), 1)
    yield SampleInput(make((3,)), make((4,)), 0)
    yield SampleInput(make((3,)), make((3, 4)), ([0], [0]))


def _stable_seed(*key):
    """A seed from the arguments that is the same in every process (``hash()`` of a string is not:
    Python salts it per process, and a matrix drawn from it made float32 tolerances flaky)."""
    return zlib.crc32(repr(key).encode())


def _spd(make, dtype, shape):
    """A symmetric positive-definite matrix (batch): A A^T + n I from random A."""
    n = shape[-1]
    rng = np.random.default_rng(_stable_seed(shape, dtype))
    a = rng.standard_normal(shape)
    spd = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    return Leaf(spd.astype(dtype), "contig", np.dtype(dtype).kind == "f")


def _invertible(make, dtype, shape, layout="contig"):
    """A well-conditioned square matrix (batch): random, plus n on the diagonal."""
    n = shape[-1]
    rng = np.random.default_rng(_stable_seed(shape, dtype, layout))
    a = (rng.standard_normal(shape) + n * np.eye(n)).astype(dtype)
    return Leaf(a, layout, np.dtype(dtype).kind == "f")


def _det_samples(make, dtype):
    yield from _square_samples(make, dtype)
    yield SampleInput(_invertible(make, dtype, (2, 3, 3)))
    yield SampleInput(_invertible(make, dtype, (3, 3), layout="T"))
    yield SampleInput(make((2, 3)))                                  # not square: torch's error
    yield SampleInput(make((3,)))


def _singular_det_samples(make, dtype):
    yield SampleInput(make((2, 2), values=[[1, 2], [2, 4]]), nondiff=True)
    # Rank n-1: its gradient is torch's only where both LUs meet an exact zero pivot. torch factors the
    # transpose, and where that elimination rounds (a ratio of 1/3) its det is ~1e-16, not 0, and its
    # gradient the adjugate, depending on the LAPACK ([[1, 2, 3], [2, 4, 6], [0, 1, 1]]: 0 with OpenBLAS's
    # and AMD's MKL, the adjugate with MKL on an Intel AVX-512 CPU). Ratios of powers of two round nowhere.
    yield SampleInput(make((3, 3), values=[[1, 2, 4], [2, 4, 8], [4, 1, 2]]), nondiff=True)


def _standard_gamma_grad_samples(make, dtype):
    """Concentrations and draws over _standard_gamma_grad's three regimes (x < 0.8; alpha > 8; the rest),
    batched, broadcast and transposed."""
    yield SampleInput(make((3, 4), low=0.1, high=12), make((3, 4), low=0.01, high=15))
    yield SampleInput(make((4, 3), low=0.1, high=12, layout="T"), make((3,), low=0.01, high=15))


def _dirichlet_grad_samples(make, dtype):
    """Draws x, concentrations alpha and their totals (above alpha) over _dirichlet_grad's regimes."""
    yield SampleInput(make((3, 4), low=0.01, high=0.99), make((3, 4), low=0.2, high=5), make((3, 4), low=5.5, high=20))
    yield SampleInput(make((4, 3), low=0.01, high=0.99, layout="T"), make((4, 3), low=6.5, high=9),
                      make((3,), low=16, high=30))


def _solve_samples(make, dtype):
    A = _invertible(make, dtype, (3, 3))
    yield SampleInput(A, make((3,)))
    yield SampleInput(A, make((3, 2)))
    yield SampleInput(_invertible(make, dtype, (2, 3, 3)), make((3,)))
    yield SampleInput(_invertible(make, dtype, (2, 3, 3)), make((2, 3)))
    yield SampleInput(A, make((4, 3, 2)))
    yield SampleInput(A, make((2, 3)), left=False)
    yield SampleInput(A, make((4,)))                                 # incompatible shapes: torch's error


def _solve_triangular_samples(make, dtype):
    A = _invertible(make, dtype, (3, 3))
    yield SampleInput(A, make((3, 2)), upper=True)
    yield SampleInput(A, make((3, 2)), upper=False)
    yield SampleInput(A, make((2, 3)), upper=True, left=False)
    yield SampleInput(A, make((3, 2)), upper=False, unitriangular=True)
    yield SampleInput(_invertible(make, dtype, (2, 3, 3)), make((3, 1)), upper=True)


def _eigh_samples(make, dtype):
    yield SampleInput(_spd(make, dtype, (3, 3)))
    yield SampleInput(_spd(make, dtype, (2, 3, 3)))
    yield SampleInput(_spd(make, dtype, (3, 3)), "U")


def _symmetric(fn):
    """fn on the symmetric part of its input, so that finite differences (which perturb one element
    at a time) and the symmetric gradient torch returns for eigh/cholesky agree."""
    def on_symmetric(lib, A, *args, **kwargs):
        return fn(lib, (A + A.mT) / 2, *args, **kwargs)
    return on_symmetric


def _eigh_invariant(lib, A, *args):
    """eigh's outputs through functions that do not depend on the eigenvectors' signs."""
    L, V = lib.linalg.eigh(A, *args)
    return L, (V * V), V @ (L.unsqueeze(-1) * V.mT)


def _svd_samples(make, dtype):
    yield SampleInput(make((3, 3)))
    yield SampleInput(make((4, 3)))
    yield SampleInput(make((3, 4)))
    yield SampleInput(make((2, 3, 2)))
    yield SampleInput(make((4, 3)), False)


def _svd_invariant(lib, A, *args):
    """svd's outputs through functions that do not depend on the singular vectors' signs (and only
    the first k columns of U / rows of Vh, which full_matrices leaves unique)."""
    U, S, Vh = lib.linalg.svd(A, *args)
    k = S.shape[-1]
    U = U[..., :k] if U.shape[-1] != k else U
    Vh = Vh[..., :k, :] if Vh.shape[-2] != k else Vh
    return S, U.abs(), Vh.abs()


def _qr_samples(make, dtype):
    yield SampleInput(make((3, 3)))
    yield SampleInput(make((4, 3)))
    yield SampleInput(make((3, 4)))
    yield SampleInput(make((2, 4, 3)))
    yield SampleInput(make((3, 4)), "complete")
    yield SampleInput(make((4, 3)), "r", nondiff=True)          # R alone: no derivative (torch's error)
    yield SampleInput(make((3, 4)), "bad mode")


def _cholesky_samples(make, dtype):
    yield SampleInput(_spd(make, dtype, (3, 3)))
    yield SampleInput(_spd(make, dtype, (2, 3, 3)))
    yield SampleInput(_spd(make, dtype, (3, 3)), upper=True)


def _cholesky_factor(make, dtype, shape, upper=False):
    """A Cholesky factor (batch): a well-conditioned triangular matrix with a positive diagonal."""
    a = np.abs(_invertible(make, dtype, shape).array) * 0.3 + shape[-1] * np.eye(shape[-1], dtype=dtype)
    return Leaf((np.triu(a) if upper else np.tril(a)).astype(dtype), "contig", np.dtype(dtype).kind == "f")


def _cholesky_solve_samples(make, dtype):
    yield SampleInput(make((3, 2)), _cholesky_factor(make, dtype, (3, 3)))
    yield SampleInput(make((3, 2)), _cholesky_factor(make, dtype, (3, 3), upper=True), True)
    yield SampleInput(make((3, 2), layout="T"), _cholesky_factor(make, dtype, (2, 3, 3)))   # batch broadcast
    yield SampleInput(make((4, 1, 3, 2)), _cholesky_factor(make, dtype, (1, 2, 3, 3)), upper=False)
    yield SampleInput(make((2, 3, 1)), _cholesky_factor(make, dtype, (3, 3)))
    # errors, in torch's order: dimensions, dtypes, a square A, A's size against b's rows, the batch dims
    yield SampleInput(make((3,)), _cholesky_factor(make, dtype, (3, 3)))
    yield SampleInput(make((3, 2)), make((3,)))
    yield SampleInput(make((3, 2), dtype="float32" if dtype == "float64" else "float64"),
                      _cholesky_factor(make, dtype, (3, 3)))
    yield SampleInput(make((3, 2)), make((3, 4)))
    yield SampleInput(make((3, 2)), _cholesky_factor(make, dtype, (4, 4)))
    yield SampleInput(make((2, 3, 2)), _cholesky_factor(make, dtype, (4, 3, 3)))


def _pinv_samples(make, dtype):
    yield SampleInput(make((3, 3)))
    yield SampleInput(make((4, 3)))
    yield SampleInput(make((3, 4)))
    yield SampleInput(make((2, 3, 2)))


def _matrix_power_samples(make, dtype):
    A = _invertible(make, dtype, (3, 3))
    for n in (0, 1, 2, 3, 5, 6, -1, -2):
        yield SampleInput(A, n)
    yield SampleInput(_invertible(make, dtype, (2, 2, 2)), 3)
    yield SampleInput(make((2, 3)), 2)


def _matrix_norm_samples(make, dtype):
    x = make((3, 4))
    for ord in ("fro", "nuc", 1, -1, 2, -2, float("inf"), -float("inf")):
        yield SampleInput(x, ord)
    yield SampleInput(make((2, 3, 4)), "fro", (0, 2), True)
    yield SampleInput(make((2, 3, 4)), 1, (2, 0))
    yield SampleInput(make((2, 3, 4)), float("inf"), (-1, -2), True)
    yield SampleInput(make((2, 3, 4)), "nuc", (0, 1), True)
    yield SampleInput(make((3, 4)), 3)                               # unsupported order: torch's error


def _linalg_norm_samples(make, dtype):
    yield SampleInput(make((3, 4)))
    yield SampleInput(make((3, 4)), "fro")
    yield SampleInput(make((3, 4)), 2)
    yield SampleInput(make((3, 4)), -1)
    yield SampleInput(make((5,)), 3)
    yield SampleInput(make((5,)), float("inf"))
    yield SampleInput(make((2, 3, 4)), dim=(1, 2))
    yield SampleInput(make((2, 3, 4)), 1, dim=-1, keepdim=True)
    yield SampleInput(make((2, 3, 4)), 2)                            # ord without dim on 3-D: torch's error


def _cross_samples(make, dtype):
    yield SampleInput(make((4, 3)), make((4, 3)))
    yield SampleInput(make((3, 2)), make((3, 2)), dim=0)
    yield SampleInput(make((2, 4, 3)), make((4, 3)))
    yield SampleInput(make((4, 3)), make((4, 2)))


def _tensor_cross_samples(make, dtype):
    yield SampleInput(make((4, 3)), make((4, 3)), 1)
    yield SampleInput(make((3, 2)), make((3, 2)))                    # no dim: the first of size 3 (a warning)
    yield SampleInput(make((2, 2)), make((2, 2)))


def _matrix_rank_samples(make, dtype):
    yield SampleInput(make((3, 4)))
    yield SampleInput(make((3, 3), values=[[1, 2, 3], [2, 4, 6], [0, 1, 1]]))
    yield SampleInput(make((2, 3, 3)), atol=0.5)
    yield SampleInput(_spd(make, dtype, (3, 3)), hermitian=True)


def _eig_samples(make, dtype):
    yield SampleInput(make((3, 3), values=[[2, 1, 0], [1, 3, 1], [0, 1, 4]]))
    yield SampleInput(make((2, 2), values=[[4, 1], [2, 3]]))


def _eig_values(lib, A):
    L = lib.linalg.eigvals(A)
    return L


def _legacy_svd(lib, A, *args):
    U, S, V = lib.svd(A, *args)
    k = S.shape[-1]
    U = U[..., :k] if U.shape[-1] != k else U
    return S, U.abs(), V[..., :k].abs() if V.shape[-1] != k else V.abs()


register(
    OpInfo("nansum", samples=_nan_samples, dtypes=ALL_NUM),
    OpInfo("nanmean", samples=_nan_samples, dtypes=ALL_NUM),
    OpInfo("aminmax", samples=_aminmax_samples, dtypes=ALL_NUM),
    OpInfo("var_mean", samples=_moments_samples),
    OpInfo("std_mean.dims", lambda lib, *a, **k: lib.std_mean(*a, **k), samples=_moments_samples),
    OpInfo("mode", samples=_mode_samples, dtypes=ALL_NUM),
    OpInfo("nanmedian", samples=_nanmedian_samples, dtypes=ALL_NUM),
    OpInfo("median.nan", lambda lib, *a, **k: lib.median(*a, **k), samples=_median_nan_samples),
    OpInfo("argsort.stable", lambda lib, *a, **k: lib.argsort(*a, **k), samples=_argsort_samples, dtypes=ALL_NUM),
    OpInfo("sort.stable", lambda lib, *a, **k: lib.sort(*a, **k), samples=_sort_stable_samples, dtypes=ALL_NUM),
    OpInfo("cummin", samples=_cummin_samples, dtypes=ALL_NUM),
    OpInfo("unique", samples=_unique_samples, dtypes=ALL_NUM, gradcheck=False),
    OpInfo("count_nonzero", samples=_count_nonzero_samples, dtypes=ALL_NUM + ("bool",), grad=False),
    OpInfo("bincount", samples=_bincount_samples, dtypes=("int64",), grad=False),
    OpInfo("histc", samples=_histc_samples, dtypes=ALL_NUM, grad=False),
    OpInfo("searchsorted", samples=_searchsorted_samples, dtypes=ALL_NUM, grad=False),
    OpInfo("bucketize", samples=_bucketize_samples, dtypes=ALL_NUM, grad=False),
    OpInfo("logsumexp.method", _m("logsumexp"), samples=_logsumexp_samples),
    OpInfo("vdot", samples=_vdot_samples),
    OpInfo("inner", samples=_inner_samples),
    OpInfo("kron", samples=_kron_samples),
    OpInfo("tensordot.full", lambda lib, *a: lib.tensordot(*a), samples=_tensordot_full_samples),
    OpInfo("det.batched", lambda lib, x: lib.linalg.det(x), samples=_det_samples),
    OpInfo("det.singular", lambda lib, x: lib.det(x), samples=_singular_det_samples),
    OpInfo("Tensor.det", _m("det"), samples=_square_samples),
    OpInfo("linalg.slogdet", lambda lib, x: tuple(lib.linalg.slogdet(x)), samples=_det_samples),
    OpInfo("slogdet", lambda lib, x: tuple(lib.slogdet(x)), samples=_square_samples),
    OpInfo("inverse", samples=_det_samples),
    OpInfo("linalg.inv_ex", lambda lib, x: tuple(lib.linalg.inv_ex(x)), samples=_det_samples),
    OpInfo("linalg.solve", lambda lib, *a, **k: lib.linalg.solve(*a, **k), samples=_solve_samples),
    OpInfo("linalg.solve_ex", lambda lib, *a, **k: tuple(lib.linalg.solve_ex(*a, **k)), samples=_solve_samples),
    OpInfo("linalg.solve_triangular", lambda lib, *a, **k: lib.linalg.solve_triangular(*a, **k),
           samples=_solve_triangular_samples),
    # eigh and cholesky read one triangle: on the raw op finite differences disagree with the
    # symmetric gradient torch returns, so gradcheck runs on the symmetrised forms (".sym")
    OpInfo("linalg.eigh", _eigh_invariant, samples=_eigh_samples, gradcheck=False),
    OpInfo("linalg.eigh.sym", _symmetric(_eigh_invariant), samples=_eigh_samples),
    OpInfo("linalg.eigvalsh", lambda lib, *a: lib.linalg.eigvalsh(*a), samples=_eigh_samples, gradcheck=False),
    OpInfo("linalg.svd", _svd_invariant, samples=_svd_samples),
    OpInfo("linalg.svdvals", lambda lib, x, *a: lib.linalg.svdvals(x), samples=_svd_samples),
    OpInfo("svd", _legacy_svd, samples=_svd_samples),
    OpInfo("linalg.qr", lambda lib, *a: tuple(lib.linalg.qr(*a)), samples=_qr_samples),
    OpInfo("linalg.cholesky", lambda lib, *a, **k: lib.linalg.cholesky(*a, **k), samples=_cholesky_samples,
           gradcheck=False),
    OpInfo("linalg.cholesky.sym", _symmetric(lambda lib, *a, **k: lib.linalg.cholesky(*a, **k)),
           samples=_cholesky_samples),
    OpInfo("linalg.cholesky_ex", lambda lib, *a, **k: tuple(lib.linalg.cholesky_ex(*a, **k)),
           samples=_cholesky_samples, gradcheck=False),
    OpInfo("cholesky", lambda lib, x, upper=False: lib.cholesky(x, upper), samples=_cholesky_samples,
           gradcheck=False),
    # (float32: pinv's gradient goes through the pseudo-inverse itself, so its rounding is amplified)
    # (the kernel reads one triangle of the factor, torch's gradient is the whole matrix's: no finite differences)
    OpInfo("cholesky_solve", samples=_cholesky_solve_samples, gradcheck=False),
    # (torch's derivatives of these are not implemented: the values, layouts and devices are compared)
    OpInfo("_standard_gamma_grad", samples=_standard_gamma_grad_samples, grad=False, gradgrad=False, gradcheck=False),
    # (torch evaluates the Taylor series of its float32 results in float32; glasstorch in float64)
    OpInfo("_dirichlet_grad", samples=_dirichlet_grad_samples, grad=False, gradgrad=False, gradcheck=False,
           tol={"float32": (2e-3, 1e-5)}),
    OpInfo("linalg.pinv", lambda lib, x: lib.linalg.pinv(x), samples=_pinv_samples, tol={"float32": (2e-4, 2e-4)}),
    OpInfo("pinverse", samples=_pinv_samples, tol={"float32": (2e-4, 2e-4)}),
    OpInfo("linalg.matrix_power", lambda lib, *a: lib.linalg.matrix_power(*a), samples=_matrix_power_samples),
    OpInfo("matrix_power.method", _m("matrix_power"), samples=_matrix_power_samples),
    OpInfo("linalg.matrix_norm", lambda lib, *a, **k: lib.linalg.matrix_norm(*a, **k), samples=_matrix_norm_samples),
    OpInfo("linalg.norm.forms", lambda lib, *a, **k: lib.linalg.norm(*a, **k), samples=_linalg_norm_samples),
    OpInfo("linalg.vector_norm", lambda lib, *a, **k: lib.linalg.vector_norm(*a, **k),
           samples=reduction_samples(keepdim=True, extra=_norm_extra)),
    OpInfo("linalg.cross", lambda lib, *a, **k: lib.linalg.cross(*a, **k), samples=_cross_samples),
    OpInfo("cross", samples=_tensor_cross_samples),
    OpInfo("linalg.matrix_rank", lambda lib, *a, **k: lib.linalg.matrix_rank(*a, **k), samples=_matrix_rank_samples,
           grad=False),
    OpInfo("linalg.eigvals", _eig_values, samples=_eig_samples, gradgrad=False, gradcheck=False),
)


# ---- torch.nn.functional: losses, normalization, recurrent layers (ops/nn_loss.py, nn_norm.py, nn_rnn.py) ----

def _aten(name):
    """fn calling the aten op ``name`` ('nll_loss_forward.default') directly, as dispatch-level code does."""
    packet, overload = name.split(".")
    return lambda lib, *a, **k: getattr(getattr(lib.ops.aten, packet), overload)(*a, **k)


REDUCTIONS = ("mean", "sum", "none")
_SCALAR_OVERLOADS = ("a Python number operand records the .Tensor overload's node (AddBackward0, MulBackward0, "
                     "DivBackward0) until pointwise.py declares the .Scalar overloads (AddBackward1, MulBackward1, "
                     "DivBackward1)")


def _fixed(make, shape, values):
    """A leaf that never requires grad (targets, weights) with the given values."""
    return make(shape, values=values, requires_grad=False)


def _nll_samples(make, dtype):
    for reduction in REDUCTIONS:
        yield SampleInput(make((4, 5)), make.index((4,), 5), reduction=reduction)
        yield SampleInput(make((4, 5)), Leaf(np.array([1, -100, 4, 1], "int64")), reduction=reduction,
                          weight=make((5,), low=0.2, high=1.0, requires_grad=False))
    yield SampleInput(make((5,)), Leaf(np.array(2, "int64")))                         # one sample, 0-d target
    yield SampleInput(make((5,)), Leaf(np.array([3], "int64")), reduction="none")
    yield SampleInput(make((2, 3, 4)), make.index((2, 4), 3))                          # (N, C, L): nll_loss2d
    yield SampleInput(make((2, 3, 4)), make.index((2, 4), 3), reduction="none")
    yield SampleInput(make((2, 3, 2, 2), layout="T"), make.index((2, 2, 2), 3), ignore_index=1)
    yield SampleInput(make((2, 3, 2, 2)), make.index((2, 2, 2), 3), reduction="none",
                      weight=make((3,), low=0.2, high=1.0, requires_grad=False))
    yield SampleInput(make((2, 3, 2, 1, 2)), make.index((2, 2, 1, 2), 3), reduction="none")   # 5-D
    yield SampleInput(make((3, 4)), Leaf(np.array([-100, -100, -100], "int64")))      # all ignored: nan
    yield SampleInput(make((0, 4)), Leaf(np.zeros(0, "int64")), reduction="sum")
    # torch's errors
    yield SampleInput(make((3, 4)), Leaf(np.array([0, 1, 4], "int64")))                # out of range
    yield SampleInput(make((3, 4)), Leaf(np.array([0, 1], "int64")))                   # batch mismatch
    yield SampleInput(make((3, 4)), Leaf(np.array([0., 1., 2.], dtype)))               # float target
    yield SampleInput(make((3, 4)), make.index((3,), 4), weight=make((3,), requires_grad=False))
    yield SampleInput(make((2, 3, 4)), make.index((2, 5), 3))                          # target size
    yield SampleInput(make(()), Leaf(np.array(0, "int64")))


def _cross_entropy_samples(make, dtype):
    yield from _nll_samples(make, dtype)
    yield SampleInput(make((4, 5)), make.index((4,), 5), label_smoothing=0.2)
    yield SampleInput(make((4, 5)), Leaf(np.array([1, -100, 4, 1], "int64")), label_smoothing=0.1,
                      weight=make((5,), low=0.2, high=1.0, requires_grad=False))
    yield SampleInput(make((2, 3, 4)), make.index((2, 4), 3), label_smoothing=0.3, reduction="sum")
    probs = make((4, 5), low=0.0, high=1.0)                                           # class probabilities
    yield SampleInput(make((4, 5)), probs)
    yield SampleInput(make((4, 5)), probs, reduction="none", label_smoothing=0.1)
    yield SampleInput(make((4, 5)), make.index((4,), 5), label_smoothing=1.5)         # torch's errors
    yield SampleInput(make((4, 5)), probs, ignore_index=1)


def _pair_samples(extra=()):
    """(input, target) losses: every reduction, a target that requires grad, broadcasting, a layout."""
    def gen(make, dtype):
        for reduction in REDUCTIONS:
            yield SampleInput(make((3, 4)), make((3, 4)), reduction=reduction)
        yield SampleInput(make((3, 4), layout="T"), make((3, 4), requires_grad=False))
        yield SampleInput(make((3, 4)), make((4,)), reduction="sum")                   # broadcast (torch warns)
        yield SampleInput(make(()), make(()))
        yield SampleInput(make((0, 2)), make((0, 2)))                                  # mean of nothing: nan
        yield SampleInput(make((3,)), make((4,)))                                      # torch's error
        yield SampleInput(make((3,)), make((3,)), reduction="avg")                     # torch's error
        for kwargs in extra:
            yield SampleInput(make((3, 4)), make((3, 4)), **kwargs)
    return gen


def _bce_samples(make, dtype):
    for reduction in REDUCTIONS:
        yield SampleInput(make((3, 4), low=0.05, high=0.95), make((3, 4), low=0.0, high=1.0), reduction=reduction)
    yield SampleInput(make((3, 4), low=0.05, high=0.95), make((3, 4), low=0.0, high=1.0),
                      weight=make((4,), low=0.1, high=1.0, requires_grad=False))
    yield SampleInput(make((3, 4), low=0.05, high=0.95, layout="T"), make((3, 4), low=0.0, high=1.0,
                                                                          requires_grad=False), reduction="none",
                      weight=make((3, 4), low=0.1, high=1.0, requires_grad=False))
    yield SampleInput(make((4,), values=[0.0, 1.0, 0.5, 1.0]), make((4,), values=[0.0, 1.0, 1.0, 0.0]),
                      nondiff=True)                                                   # log 0: the -100 clamp
    yield SampleInput(make((3,), values=[0.5, 1.5, 0.2]), make((3,), low=0, high=1))  # torch's errors
    yield SampleInput(make((3,), low=0.1, high=0.9), make((4,), low=0, high=1))


def _bce_logits_samples(make, dtype):
    for reduction in REDUCTIONS:
        yield SampleInput(make((3, 4), low=-4, high=4), make((3, 4), low=0.0, high=1.0), reduction=reduction)
    yield SampleInput(make((3, 4)), make((3, 4), low=0.0, high=1.0),
                      weight=make((4,), low=0.1, high=1.0, requires_grad=False),
                      pos_weight=make((4,), low=0.5, high=3.0, requires_grad=False))
    yield SampleInput(make((3, 4), layout="T"), make((3, 4), low=0.0, high=1.0), reduction="sum",
                      pos_weight=make((3, 4), low=0.5, high=3.0, requires_grad=False))
    yield SampleInput(make((3,), values=[-40.0, 0.0, 40.0]), make((3,), low=0.0, high=1.0))   # saturated
    yield SampleInput(make((3,)), make((4,), low=0, high=1))                          # torch's error


def _pm_one(make, shape):
    rng = np.random.default_rng(math.prod(shape))
    return make(shape, values=rng.choice([-1.0, 1.0], shape), requires_grad=False)


def _soft_margin_samples(make, dtype):
    for reduction in REDUCTIONS:
        yield SampleInput(make((3, 4)), _pm_one(make, (3, 4)), reduction=reduction)
    yield SampleInput(make((3, 4), layout="T"), _pm_one(make, (3, 4)))


def _kl_div_samples(make, dtype):
    for reduction in ("mean", "sum", "none", "batchmean"):
        yield SampleInput(make((3, 4), low=-3, high=0), make((3, 4), low=0.0, high=1.0, requires_grad=False),
                          reduction=reduction)
    yield SampleInput(make((3, 4), low=-3, high=0), make((3, 4), low=-3, high=0), log_target=True,
                      reduction="batchmean")
    yield SampleInput(make((3, 4), low=-3, high=0), make((3, 4), values=np.linspace(0, 1, 12).reshape(3, 4),
                                                         requires_grad=False), reduction="sum")     # a 0 target


def _triple_samples(make, dtype):
    yield SampleInput(make((4, 3)), make((4, 3)), _pm_one(make, (4,)))
    yield SampleInput(make((4, 3)), make((4, 3)), _pm_one(make, (4,)), margin=0.3, reduction="sum")


register(
    OpInfo("nn.functional.nll_loss", _nnf("nll_loss"), samples=_nll_samples),
    OpInfo("nn.functional.cross_entropy", _nnf("cross_entropy"), samples=_cross_entropy_samples,
           xfail={"graph": _SCALAR_OVERLOADS, "grad_fn": _SCALAR_OVERLOADS}),
    OpInfo("nn.functional.mse_loss", _nnf("mse_loss"),
           samples=_pair_samples(extra=[{"weight": Leaf(np.linspace(0.1, 1, 12).reshape(3, 4))},
                                        {"weight": Leaf(np.linspace(0.1, 1, 12).reshape(3, 4)), "reduction": "sum"}])),
    OpInfo("nn.functional.l1_loss", _nnf("l1_loss"),
           samples=_pair_samples(extra=[{"weight": Leaf(np.linspace(0.1, 1, 12).reshape(3, 4))}])),
    OpInfo("nn.functional.smooth_l1_loss", _nnf("smooth_l1_loss"),
           samples=_pair_samples(extra=[{"beta": 0.5}, {"beta": 0.0, "reduction": "sum"}, {"beta": 2.5},
                                        {"beta": -1.0}])),
    OpInfo("nn.functional.huber_loss", _nnf("huber_loss"),
           samples=_pair_samples(extra=[{"delta": 0.5}, {"delta": 2.5, "reduction": "sum"}, {"delta": 0.0},
                                        {"weight": Leaf(np.linspace(0.1, 1, 12).reshape(3, 4))}])),
    OpInfo("nn.functional.binary_cross_entropy", _nnf("binary_cross_entropy"), samples=_bce_samples),
    OpInfo("nn.functional.binary_cross_entropy_with_logits", _nnf("binary_cross_entropy_with_logits"),
           samples=_bce_logits_samples),
    OpInfo("nn.functional.soft_margin_loss", _nnf("soft_margin_loss"), samples=_soft_margin_samples),
    OpInfo("nn.functional.kl_div", _nnf("kl_div"), samples=_kl_div_samples),
    OpInfo("nn.functional.margin_ranking_loss", _nnf("margin_ranking_loss"),
           samples=lambda make, dt: [SampleInput(make((5,)), make((5,)), _pm_one(make, (5,))),
                                     SampleInput(make((5,)), make((5,)), _pm_one(make, (5,)), margin=0.5,
                                                 reduction="none")],
           xfail={"graph": _SCALAR_OVERLOADS}),
    OpInfo("nn.functional.hinge_embedding_loss", _nnf("hinge_embedding_loss"),
           samples=lambda make, dt: [SampleInput(make((3, 4)), _pm_one(make, (3, 4))),
                                     SampleInput(make((3, 4)), _pm_one(make, (3, 4)), margin=0.5, reduction="sum")]),
    OpInfo("nn.functional.cosine_embedding_loss", _nnf("cosine_embedding_loss"), samples=_triple_samples,
           xfail={"graph": _SCALAR_OVERLOADS}),
    OpInfo("nn.functional.poisson_nll_loss", _nnf("poisson_nll_loss"),
           samples=lambda make, dt: [SampleInput(make((3, 4)), make((3, 4), low=0, high=3, requires_grad=False)),
                                     SampleInput(make((3, 4), low=0.5, high=3), make((3, 4), low=0, high=3,
                                                                                      requires_grad=False),
                                                 log_input=False, full=True, reduction="sum")],
           xfail={"graph": _SCALAR_OVERLOADS}),
    OpInfo("nn.functional.gaussian_nll_loss", _nnf("gaussian_nll_loss"),
           samples=lambda make, dt: [SampleInput(make((3, 4)), make((3, 4)), make((3, 4), low=0.2, high=2)),
                                     SampleInput(make((3, 4)), make((3, 4)), make((3, 1), low=0.2, high=2),
                                                 full=True, reduction="none")]),
    OpInfo("nn.functional.multilabel_soft_margin_loss", _nnf("multilabel_soft_margin_loss"),
           samples=lambda make, dt: [SampleInput(make((3, 4)), make((3, 4), low=0, high=1, requires_grad=False)),
                                     SampleInput(make((3, 4)), make((3, 4), low=0, high=1, requires_grad=False),
                                                 weight=make((4,), low=0.1, high=1, requires_grad=False),
                                                 reduction="none")]),
    OpInfo("nn.functional.triplet_margin_loss", _nnf("triplet_margin_loss"),
           samples=lambda make, dt: [SampleInput(make((4, 3)), make((4, 3)), make((4, 3))),
                                     SampleInput(make((4, 3)), make((4, 3)), make((4, 3)), swap=True, p=1,
                                                 margin=0.5, reduction="none")],
           xfail={"graph": _SCALAR_OVERLOADS + "; pairwise_distance's at::norm is NormBackward1 in torch, "
                                               "LinalgVectorNormBackward0 here until reduction.py declares "
                                               "norm.ScalarOpt_dim"}),
)


# the aten ops themselves, as dispatch-level code calls them: every output (total_weight too), and the
# *_backward ops differentiated once more (their own formulas: triple backward through the loss)
def _aten_loss_samples(make, dtype):
    for reduction in (0, 1, 2):
        g = make(() if reduction else (3, 4))
        yield SampleInput(g, make((3, 4)), make((3, 4)), reduction)


def _aten_nll_samples(make, dtype):
    t = Leaf(np.array([1, -100, 3], "int64"))
    for reduction in (0, 1, 2):
        yield SampleInput(make((3, 4)), t, None, reduction, -100)
        yield SampleInput(make((3, 4)), t, make((4,), low=0.2, high=1, requires_grad=False), reduction, -100)
    yield SampleInput(make((4,)), Leaf(np.array(2, "int64")), None, 0, -100)
    yield SampleInput(make((2, 3, 2, 2)), make.index((2, 2, 2), 3), None, 1, -100)    # 4-D: torch's error


def _aten_nll_backward_samples(make, dtype):
    t = Leaf(np.array([1, -100, 3], "int64"))
    w = make((4,), low=0.2, high=1, requires_grad=False)
    total = float(w.array[1] + w.array[3])       # what nll_loss_forward returns as total_weight
    for reduction in (0, 1, 2):
        g = make(() if reduction else (3,))
        yield SampleInput(g, make((3, 4)), t, w, reduction, -100, _fixed(make, (), total if reduction else 0.0))


register(
    OpInfo("aten.nll_loss_forward", _aten("nll_loss_forward.default"), samples=_aten_nll_samples,
           gradcheck=False),   # (total_weight is a float output with no gradient; F.nll_loss is gradchecked)
    OpInfo("aten.nll_loss2d_forward", _aten("nll_loss2d_forward.default"),
           samples=lambda make, dt: [SampleInput(make((2, 3, 2, 2)), make.index((2, 2, 2), 3), None, r, -100)
                                     for r in (0, 1, 2)] + [SampleInput(make((3, 4)), make.index((3,), 4), None, 1,
                                                                        -100)]),
    OpInfo("aten.nll_loss_backward", _aten("nll_loss_backward.default"), samples=_aten_nll_backward_samples),
    OpInfo("aten.mse_loss_backward", _aten("mse_loss_backward.default"), samples=_aten_loss_samples),
    OpInfo("aten.smooth_l1_loss_backward", _aten("smooth_l1_loss_backward.default"),
           samples=lambda make, dt: [SampleInput(*s.args, 0.7) for s in _aten_loss_samples(make, dt)]),
    OpInfo("aten.huber_loss_backward", _aten("huber_loss_backward.default"),
           samples=lambda make, dt: [SampleInput(*s.args, 0.7) for s in _aten_loss_samples(make, dt)]),
    OpInfo("aten.binary_cross_entropy_backward", _aten("binary_cross_entropy_backward.default"),
           samples=lambda make, dt: [SampleInput(make(() if r else (3, 4)), make((3, 4), low=0.1, high=0.9),
                                                 make((3, 4), low=0, high=1), w, r)
                                     for r in (0, 1, 2)
                                     for w in (None, make((3, 4), low=0.1, high=1, requires_grad=False))]),
    OpInfo("aten.soft_margin_loss_backward", _aten("soft_margin_loss_backward.default"),
           samples=lambda make, dt: [SampleInput(make(() if r else (3, 4)), make((3, 4)), _pm_one(make, (3, 4)), r)
                                     for r in (0, 1, 2)]),
)


def _running_stats(make, c):
    return make((c,), low=-0.5, high=0.5, requires_grad=False), make((c,), low=0.5, high=2.0, requires_grad=False)


def _batch_norm_samples(make, dtype):
    # (3, 2, 3, 4): rows of 12 elements, batch norm's row kernels (ops/nn_norm.py, _bn_rows)
    for shape, layout in (((4, 3), "contig"), ((2, 3, 5), "contig"), ((2, 3, 2, 3), "T"), ((3, 2, 3, 4), "contig")):
        c = shape[1]
        rm, rv = _running_stats(make, c)
        w, b = make((c,), low=0.5, high=1.5), make((c,))
        yield SampleInput(make(shape, layout=layout), rm, rv, w, b, True)
        yield SampleInput(make(shape), rm, rv, w, b, False, eps=1e-3)
        yield SampleInput(make(shape), None, None, training=True, momentum=0.3)
        yield SampleInput(make(shape), rm, rv, None, b, training=True)
    rm, rv = _running_stats(make, 3)
    yield SampleInput(make((0, 3)), rm, rv, make((3,)), make((3,)), True)              # empty batch
    # torch's errors
    yield SampleInput(make((4, 3)), rm, rv, make((4,)), None, True)                   # weight size
    yield SampleInput(make((4, 3)), None, None, None, None, False)                     # eval without stats
    yield SampleInput(make((1, 3)), rm, rv, None, None, True)                         # one value per channel
    yield SampleInput(make((4, 3)), rm, rv, None, None, True, eps=0.0)


def _layer_norm_samples(make, dtype):
    yield SampleInput(make((4, 5)), (5,), make((5,), low=0.5, high=1.5), make((5,)))
    yield SampleInput(make((2, 3, 4), layout="T"), (3, 4), make((3, 4)), make((3, 4)), eps=1e-3)
    yield SampleInput(make((2, 3, 4)), [4])
    yield SampleInput(make((5,)), (5,), make((5,)), make((5,)))                        # unbatched 1-D
    yield SampleInput(make((3, 4)), 4, make((4,)), None)
    yield SampleInput(make((3, 4)), (3, 4), None, make((3, 4)))
    yield SampleInput(make((3, 4)), (5,))                                              # torch's errors
    yield SampleInput(make((3, 4)), (4,), make((3,)))


def _group_norm_samples(make, dtype):
    yield SampleInput(make((2, 4, 3)), 2, make((4,), low=0.5, high=1.5), make((4,)))
    yield SampleInput(make((2, 6, 2, 2), layout="T"), 3, make((6,)), make((6,)), eps=1e-3)
    yield SampleInput(make((3, 4)), 2)
    yield SampleInput(make((2, 4, 5)), 1, None, make((4,)))
    yield SampleInput(make((2, 4, 3)), 3)                                             # torch's errors
    yield SampleInput(make((2, 4, 3)), 2, make((3,)))
    yield SampleInput(make((4,)), 2)


def _instance_norm_samples(make, dtype):
    rm, rv = _running_stats(make, 3)
    yield SampleInput(make((2, 3, 4)))
    yield SampleInput(make((2, 3, 2, 3), layout="T"), rm, rv, make((3,)), make((3,)), True, 0.2)
    yield SampleInput(make((2, 3, 4)), rm, rv, make((3,)), make((3,)), use_input_stats=False)
    yield SampleInput(make((2, 3, 1)))                                                # torch's error


def _aten_norm_samples(make, dtype):
    rm, rv = _running_stats(make, 3)
    yield SampleInput(make((4, 3)), make((3,)), make((3,)), rm, rv, True, 0.1, 1e-5)
    yield SampleInput(make((2, 3, 4)), None, None, None, None, True, 0.1, 1e-5)
    yield SampleInput(make((4, 3)), make((3,)), make((3,)), rm, rv, False, 0.1, 1e-5)   # eval: empty stats


def _aten_bn_backward_samples(make, dtype):
    x = make((4, 3))
    mean = _fixed(make, (3,), x.array.mean(0))
    invstd = _fixed(make, (3,), 1 / np.sqrt(x.array.var(0) + 1e-5))
    rm, rv = _running_stats(make, 3)
    w = make((3,), low=0.5, high=1.5)
    yield SampleInput(make((4, 3)), x, w, rm, rv, mean, invstd, True, 1e-5, [True, True, True])
    yield SampleInput(make((4, 3)), x, w, rm, rv, None, None, False, 1e-5, [True, True, False])
    yield SampleInput(make((4, 3)), x, None, None, None, mean, invstd, True, 1e-5, [True, False, False])


def _aten_ln_backward_samples(make, dtype):
    x = make((3, 4))
    mean = _fixed(make, (3, 1), x.array.mean(1, keepdims=True))
    rstd = _fixed(make, (3, 1), 1 / np.sqrt(x.array.var(1, keepdims=True) + 1e-5))
    w, b = make((4,), low=0.5, high=1.5), make((4,))
    yield SampleInput(make((3, 4)), x, [4], mean, rstd, w, b, [True, True, True])
    yield SampleInput(make((3, 4)), x, [4], mean, rstd, None, None, [True, False, False])


def _aten_gn_backward_samples(make, dtype):
    x = make((2, 4, 3))
    grouped = x.array.reshape(2, 2, 6)
    mean = _fixed(make, (2, 2), grouped.mean(2))
    rstd = _fixed(make, (2, 2), 1 / np.sqrt(grouped.var(2) + 1e-5))
    yield SampleInput(make((2, 4, 3)), x, mean, rstd, make((4,), low=0.5, high=1.5), 2, 4, 3, 2, [True, True, True])
    yield SampleInput(make((2, 4, 3)), x, mean, rstd, make((4,)), 2, 4, 3, 2, [True, False, True])


register(
    OpInfo("nn.functional.batch_norm", _nnf("batch_norm"), samples=_batch_norm_samples),
    OpInfo("nn.functional.layer_norm", _nnf("layer_norm"), samples=_layer_norm_samples),
    OpInfo("nn.functional.group_norm", _nnf("group_norm"), samples=_group_norm_samples),
    OpInfo("nn.functional.instance_norm", _nnf("instance_norm"), samples=_instance_norm_samples),
    # (gradcheck: the statistics outputs have no gradient, and the *_backward ops' formulas are total
    # derivatives that take the statistics as functions of the input, as torch's do; F.* are gradchecked)
    OpInfo("aten.native_batch_norm", _aten("native_batch_norm.default"), samples=_aten_norm_samples,
           gradcheck=False),
    OpInfo("aten.native_layer_norm", _aten("native_layer_norm.default"), gradcheck=False,
           samples=lambda make, dt: [SampleInput(make((3, 4)), [4], make((4,)), make((4,)), 1e-5),
                                     SampleInput(make((4,)), [4], None, None, 1e-5)]),
    OpInfo("aten.native_group_norm", _aten("native_group_norm.default"),
           samples=lambda make, dt: [SampleInput(make((2, 4, 3)), make((4,)), make((4,)), 2, 4, 3, 2, 1e-5),
                                     SampleInput(make((3, 2)), None, None, 3, 2, 1, 1, 1e-5)]),
    OpInfo("aten.native_batch_norm_backward", _aten("native_batch_norm_backward.default"),
           samples=_aten_bn_backward_samples, gradcheck=False),
    OpInfo("aten.native_layer_norm_backward", _aten("native_layer_norm_backward.default"),
           samples=_aten_ln_backward_samples, gradcheck=False),
    OpInfo("aten.native_group_norm_backward", _aten("native_group_norm_backward.default"),
           samples=_aten_gn_backward_samples, gradcheck=False,
           xfail={c: "torch records NotImplemented for native_group_norm_backward (its double backward goes "
                     "through a composite); glasstorch's has formulas (the same values: F.group_norm's gradgrad "
                     "matches torch)" for c in ("grad_fn", "graph", "grad")}),
)


def _mkldnn_rnn_layer(lib, *args, **kwargs):
    """torch's fused LSTM layer op: (output, h_n, c_n) -- its workspace, the fourth output, is each
    library's own layout."""
    return lib.ops.aten.mkldnn_rnn_layer.default(*args, **kwargs)[:3]


def _mkldnn_rnn_layer_samples(make, dtype):
    T, B, I, H = 3, 2, 3, 4
    for reverse in (False, True):
        yield SampleInput(make((T, B, I)), make((4 * H, I)), make((4 * H, H)), make((4 * H,)), make((4 * H,)),
                          make((B, H)), make((B, H)), reverse, [], 2, H, 1, True, False, False, True)
    yield SampleInput(make((T, B, I), requires_grad=False), make((4 * H, I)), make((4 * H, H)), make((4 * H,)),
                      make((4 * H,)), make((B, H), requires_grad=False), make((B, H)), False, [], 2, H, 2, True, False,
                      True, True)


register(
    # (float32 only: torch's mkldnn kernel refuses float64, where its nn.LSTM composes cells instead)
    OpInfo("aten.mkldnn_rnn_layer", _mkldnn_rnn_layer, samples=_mkldnn_rnn_layer_samples, dtypes=("float32",),
           tol={"float32": (1e-4, 1e-5)}),
)


# ---- complex tensors: parts, conjugate, the real-pair view ------------------------------------------
COMPLEX = ("complex128", "complex64")
_COMPLEX_SHAPES = [((), "contig"), ((5,), "contig"), ((3, 4), "contig"), ((4, 3), "T"), ((3, 4), "slice"),
                   ((2, 0), "contig")]
register(
    OpInfo("view_as_real", samples=unary_samples(shapes=_COMPLEX_SHAPES), dtypes=COMPLEX + ("float32",)),
    OpInfo("view_as_complex", dtypes=FLOATS + ("int64",),
           samples=lambda make, dt: [SampleInput(make((2,))), SampleInput(make((3, 2))), SampleInput(make((4, 3)))]),
    OpInfo("real", samples=unary_samples(shapes=_COMPLEX_SHAPES), dtypes=COMPLEX + FLOATS),
    OpInfo("imag", samples=unary_samples(shapes=_COMPLEX_SHAPES), dtypes=COMPLEX + FLOATS),
    OpInfo("Tensor.real", lambda lib, x: x.real * 2, samples=unary_samples(shapes=_COMPLEX_SHAPES), dtypes=COMPLEX),
    OpInfo("conj", samples=unary_samples(shapes=_COMPLEX_SHAPES), dtypes=COMPLEX + FLOATS),
    OpInfo("conj_physical", samples=unary_samples(shapes=_COMPLEX_SHAPES), dtypes=COMPLEX),
    OpInfo("abs.complex", lambda lib, x: x.abs(), samples=unary_samples(shapes=_COMPLEX_SHAPES, low=0.5),
           dtypes=COMPLEX),
)

# complex gradients: torch's are conjugate Wirtinger derivatives (its formulas conjugate their factors)
_COMPLEX_GRAD_UNARY = ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal", "sin",
                       "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
                       "sigmoid")
for _name in _COMPLEX_GRAD_UNARY:
    register(OpInfo(f"{_name}.complex", lambda lib, x, _name=_name: getattr(lib, _name)(x),
                    samples=unary_samples(shapes=_COMPLEX_SHAPES[1:4], low=0.5, high=1.5), dtypes=COMPLEX))
register(
    OpInfo("mul.complex", lambda lib, x, y: x * y, dtypes=COMPLEX,
           samples=lambda make, dt: [SampleInput(make((3, 4)), make((3, 4))), SampleInput(make((4, 3), layout="T"), make((3,)))]),
    OpInfo("div.complex", lambda lib, x, y: x / y, dtypes=COMPLEX,
           samples=lambda make, dt: [SampleInput(make((3, 4)), make((3, 4), low=0.5, high=1.5)),
                                     SampleInput(make((4, 3), layout="T"), make((3,), low=0.5, high=1.5))]),
)
register(
    OpInfo("mm.complex", lambda lib, a, b: a @ b, dtypes=COMPLEX,
           samples=lambda make, dt: [SampleInput(make((3, 4)), make((4, 2))), SampleInput(make((4, 3), layout="T"), make((3,)))]),
    OpInfo("bmm.complex", lambda lib, a, b: lib.bmm(a, b), dtypes=COMPLEX,
           samples=lambda make, dt: [SampleInput(make((2, 3, 4)), make((2, 4, 2)))]),
    OpInfo("dot.complex", lambda lib, a, b: lib.dot(a, b), dtypes=COMPLEX,
           samples=lambda make, dt: [SampleInput(make((4,)), make((4,)))]),
    OpInfo("vdot.complex", lambda lib, a, b: lib.vdot(a, b), dtypes=COMPLEX,
           samples=lambda make, dt: [SampleInput(make((4,)), make((4,)))]),
    OpInfo("addmm.complex", lambda lib, c, a, b: lib.addmm(c, a, b, alpha=2), dtypes=COMPLEX,
           samples=lambda make, dt: [SampleInput(make((3, 2)), make((3, 4)), make((4, 2)))]),
)


# ---- torch.fft --------------------------------------------------------------------------------------
def _fft_1d_samples(make, dtype):
    """Signal lengths odd and even, n padding and cropping, every norm, other dims, non-contiguous."""
    for shape, layout in [((5,), "contig"), ((6,), "contig"), ((3, 4), "contig"), ((4, 3), "T"), ((3, 4), "slice"),
                          ((2, 3, 5), "contig")]:
        yield SampleInput(make(shape, layout=layout))
    x = make((3, 5))
    for norm in ("backward", "forward", "ortho"):
        yield SampleInput(x, norm=norm)
    yield SampleInput(x, n=8)                  # zero-padded
    yield SampleInput(x, n=3, dim=0, norm="ortho")
    yield SampleInput(x, 2)                    # cropped
    yield SampleInput(x, None, 0)
    yield SampleInput(make((1,)))
    yield SampleInput(x, n=0)                  # errors: no points, a bad norm, a dim out of range, 0-dim
    yield SampleInput(x, norm="sideways")
    yield SampleInput(x, dim=2)
    yield SampleInput(make(()))


def _fft_nd_samples(two_d):
    def gen(make, dtype):
        for shape, layout in [((3, 4), "contig"), ((4, 3), "T"), ((3, 4), "slice"), ((2, 3, 5), "contig"),
                              ((3, 2), "contig")]:
            yield SampleInput(make(shape, layout=layout))
        x = make((2, 3, 4))
        for norm in ("forward", "ortho"):
            yield SampleInput(x, norm=norm)
        yield SampleInput(x, s=(4, 6))             # padded in both dims
        yield SampleInput(x, s=(2, -1), dim=(0, 2))
        yield SampleInput(x, s=(3, 2), dim=(2, 0))
        yield SampleInput(x, dim=(0, -1))
        if not two_d:
            yield SampleInput(x, dim=1)
            yield SampleInput(x, s=(5,))
            yield SampleInput(x)
        yield SampleInput(x, dim=(1, 1))            # errors
        yield SampleInput(x, s=(2, 2), dim=(0,))
        yield SampleInput(x, s=(1, 2, 3, 4), dim=None)
        yield SampleInput(x, s=(0, 2))
    return gen


def _irfft_1d_samples(make, dtype):
    for shape, layout in [((5,), "contig"), ((4,), "contig"), ((3, 4), "contig"), ((4, 3), "T"),
                          ((2, 3, 5), "contig")]:
        yield SampleInput(make(shape, layout=layout))
    x = make((3, 5))
    for norm in ("forward", "ortho"):
        yield SampleInput(x, norm=norm)
    yield SampleInput(x, n=9)        # odd output: the last bin is doubled too
    yield SampleInput(x, n=12)       # zero-padded bins
    yield SampleInput(x, n=4)        # cropped bins
    yield SampleInput(x, n=5, dim=0)
    yield SampleInput(make((3, 1)))  # errors: 2 * (1 - 1) = 0 points
    yield SampleInput(x, n=0)


def _irfft_nd_samples(two_d):
    def gen(make, dtype):
        for shape in [(3, 4), (2, 3, 5)]:
            yield SampleInput(make(shape))
        x = make((2, 3, 4))
        yield SampleInput(x, norm="ortho")
        yield SampleInput(x, s=(4, 7))
        yield SampleInput(x, s=(2, 4), dim=(2, 0))
        yield SampleInput(x, dim=(0, 1), norm="forward")
        if not two_d:
            yield SampleInput(x, s=(5,))
            yield SampleInput(x, dim=1)
        yield SampleInput(x, dim=(1, -2))
    return gen


def _fft_fn(name):
    return lambda lib, x, *a, **k: getattr(lib.fft, name)(x, *a, **k)


def _fft_real_view(name):
    """The transform's (real) pairs: what finite differences can check."""
    return lambda lib, x, *a, **k: lib.view_as_real(getattr(lib.fft, name)(x, *a, **k))


_REAL_IN = FLOATS + ("int64",)
for _name, _samples, _dtypes in [
        ("fft", _fft_1d_samples, _REAL_IN + COMPLEX), ("ifft", _fft_1d_samples, _REAL_IN + COMPLEX),
        ("rfft", _fft_1d_samples, _REAL_IN + COMPLEX), ("ihfft", _fft_1d_samples, FLOATS),
        ("irfft", _irfft_1d_samples, COMPLEX + FLOATS), ("hfft", _irfft_1d_samples, COMPLEX),
        ("fft2", _fft_nd_samples(True), FLOATS + COMPLEX), ("ifft2", _fft_nd_samples(True), FLOATS + COMPLEX),
        ("fftn", _fft_nd_samples(False), FLOATS + COMPLEX), ("ifftn", _fft_nd_samples(False), FLOATS + COMPLEX),
        ("rfft2", _fft_nd_samples(True), FLOATS + COMPLEX), ("rfftn", _fft_nd_samples(False), _REAL_IN),
        ("irfft2", _irfft_nd_samples(True), COMPLEX), ("irfftn", _irfft_nd_samples(False), COMPLEX + FLOATS)]:
    register(OpInfo("fft." + _name, _fft_fn(_name), samples=_samples, dtypes=_dtypes))
    if not _name.startswith(("irfft", "hfft")):
        # ifft/ihfft of a real input end in conj: torch's is a lazy view that view_as_real refuses
        lazy_conj = {"raise": "conj is not lazy here, so view_as_real accepts its result"} \
            if _name in ("ifft", "ihfft") else None
        register(OpInfo("fft." + _name + ".pairs", _fft_real_view(_name), samples=_samples, dtypes=("float64",),
                        xfail=lazy_conj))

register(
    OpInfo("fft.fftshift", lambda lib, x, *a, **k: lib.fft.fftshift(x, *a, **k),
           samples=lambda make, dt: [SampleInput(make((5,))), SampleInput(make((3, 4))), SampleInput(make((2, 3, 5)), dim=1),
                                     SampleInput(make((2, 3, 5)), dim=(0, -1))]),
    OpInfo("fft.ifftshift", lambda lib, x, *a, **k: lib.fft.ifftshift(x, *a, **k),
           samples=lambda make, dt: [SampleInput(make((5,))), SampleInput(make((3, 4))), SampleInput(make((2, 3, 5)), dim=1),
                                     SampleInput(make((2, 3, 5)), dim=(0, -1))]),
    OpInfo("fft.roundtrip",   # (the frequencies on x's device: torch refuses CPU ones beside a CUDA x too)
           lambda lib, x: lib.fft.irfft(lib.fft.rfft(x) * lib.fft.rfftfreq(x.shape[-1], device=x.device), n=x.shape[-1]),
           samples=lambda make, dt: [SampleInput(make((3, 8))), SampleInput(make((7,)))]),
)
del _name, _samples, _dtypes


# ---- torch.special -----------------------------------------------------------------------------------
def _special(name):
    return lambda lib, *a, **k: getattr(lib.special, name)(*a, **k)


def _values_samples(*value_lists, shapes=True):
    """Fixed points where the function's branches switch (series / asymptotic, tails), then random ones."""
    def gen(make, dtype):
        for values in value_lists:
            yield SampleInput(make((len(values),), values=values))
        if shapes:
            for shape, layout in [((3, 4), "contig"), ((4, 3), "T"), ((3, 4), "slice"), ((0,), "contig"), ((), "contig")]:
                yield SampleInput(make(shape, layout=layout, low=0.1, high=3))
    return gen


_BESSEL_POINTS = [-40., -31., -30., -5., -0.5, 0., 0.3, 2., 10., 29.9, 30.1, 50.]
_SPECIAL_UNARY = {
    "erfc": _values_samples([-3., -0.5, 0., 0.5, 2., 5.]),
    "erfcx": _values_samples([-3., -1., 0., 0.5, 3., 10., 24.9, 25.1, 100.]),
    "ndtr": _values_samples([-5., -1., 0., 0.5, 3.]),
    "ndtri": _values_samples([0.01, 0.3, 0.5, 0.7, 0.99]),
    "log_ndtr": _values_samples([-100., -40., -10., -1.01, -0.99, 0., 1., 5.]),
    "i0": _values_samples(_BESSEL_POINTS), "i0e": _values_samples([x for x in _BESSEL_POINTS if x != 0]),
    "i1": _values_samples(_BESSEL_POINTS), "i1e": _values_samples(_BESSEL_POINTS),
    "sinc": _values_samples([-2.5, -1., -0.3, 0.2, 1., 3.7]),
    "entr": _values_samples([0.1, 0.5, 1., 2.5]),
    "expit": _values_samples([-3., 0., 2.]), "exp2": _values_samples([-3., 0., 2.]),
    "expm1": _values_samples([-3., 0., 2.]), "log1p": _values_samples([-0.5, 0., 2.]),
    "gammaln": _values_samples([-2.5, -0.5, 0.3, 1., 2.5, 30.]),
    "digamma": _values_samples([-3.5, -2.2, -0.3, 0.1, 0.5, 1., 2.5, 7., 30., 200.]),
    "psi": _values_samples([-0.3, 0.5, 2.5]),
    "erf": _values_samples([-2., 0., 0.7]), "erfinv": _values_samples([-0.999, -0.5, 0., 0.3, 0.9]),
    "round": _values_samples([-2.7, -0.4, 0.3, 1.2, 2.6]),
}
for _name, _samples in _SPECIAL_UNARY.items():
    register(OpInfo("special." + _name, _special(_name), samples=_samples, dtypes=FLOATS + ("int64",)))


def _polygamma_samples(make, dtype):
    x = make((6,), values=[-2.5, -0.3, 0.1, 0.5, 2.5, 12.])
    for n in (0, 1, 2, 3):
        yield SampleInput(n, x)
    yield SampleInput(n, make((3, 4), low=0.2, high=3))
    yield SampleInput(-1, x)                    # an error


def _logit_samples(make, dtype):
    x = make((6,), values=[0.05, 0.2, 0.5, 0.7, 0.95, 0.99])
    yield SampleInput(x)
    yield SampleInput(x, eps=0.1)
    yield SampleInput(make((3, 4), low=0.05, high=0.95))


def _logit_outside_samples(make, dtype):
    """Outside (0, 1) and at its ends: NaN/inf, or 0 beyond the clamp (first derivative only: the second
    is NaN there in torch by the way its formula is written)."""
    yield SampleInput(make((4,), values=[-0.5, 0., 1., 1.5]), nondiff=True)
    yield SampleInput(make((4,), values=[-0.5, 0., 1., 1.5]), eps=1e-6, nondiff=True)


def _xlogy_samples(make, dtype):
    yield from binary_samples(low=0.1, high=3, rlow=0.1, rhigh=3, scalars=(2.5, 3))(make, dtype)
    if np.dtype(dtype).kind == "f":
        yield SampleInput(make((6,), values=[0., 0., 1., 2., 0., 0.]),
                          make((6,), values=[0., 2., 1., 0.5, float("nan"), -3.]), nondiff=True)
        yield SampleInput(make((3,), values=[0., 1., 2.]), -0.5, nondiff=True)
        yield SampleInput(make((3,), values=[0., 1., 2.]), 0, nondiff=True)
    yield SampleInput(2.5, make((3, 4), low=0.1, high=3))
    yield SampleInput(0, make((3,), low=0.1, high=3))


def _mvlgamma_samples(make, dtype):
    for p in (1, 2, 3):
        yield SampleInput(make((3, 4), low=1.5, high=4), p)
    yield SampleInput(make((3,), low=2, high=4), 0)     # an error


def _zeta_samples(make, dtype):
    yield SampleInput(make((5,), values=[1.5, 2., 3., 5., 7.]), make((5,), values=[0.5, 1., 2.5, 10., 0.01]))
    yield SampleInput(make((4,), values=[1., 0.5, 2., 3.]), make((4,), values=[1., 1., -1.5, -2.]))
    yield SampleInput(make((3,), values=[2., 3., 4.]), 2.0)
    yield SampleInput(2.0, make((3,), values=[1., 2., 3.]))


register(
    OpInfo("special.polygamma", _special("polygamma"), samples=_polygamma_samples),
    OpInfo("polygamma", samples=_polygamma_samples),
    OpInfo("polygamma.method", lambda lib, n, x: x.polygamma(n), samples=_polygamma_samples),
    OpInfo("special.logit", _special("logit"), samples=_logit_samples, dtypes=FLOATS + ("int64",)),
    OpInfo("logit.method", _m("logit"), samples=_logit_samples),
    OpInfo("special.logit.outside", _special("logit"), samples=_logit_outside_samples, gradgrad=False),
    # where finite differences can't go: the far tails, the ends, a kink, halves (values and torch's rule)
    OpInfo("special.ndtri.tails", _special("ndtri"), gradcheck=False,
           samples=_values_samples([1e-300, 1e-20, 1e-5, 1 - 1e-10], [0., 1., 1.5, -0.1], shapes=False)),
    OpInfo("special.i0e.zero", _special("i0e"), gradcheck=False,
           samples=_values_samples([-1., 0., 2.], shapes=False)),
    OpInfo("special.round.halves", _special("round"), gradcheck=False,
           samples=_values_samples([-2.5, -0.5, 0.5, 1.5, 2.5], shapes=False)),
    OpInfo("special.sinc.zero", _special("sinc"), gradgrad=False,   # (torch's second derivative is NaN at 0)
           samples=lambda make, dt: [SampleInput(make((3,), values=[-1., 0., 0.5]))]),
    OpInfo("special.xlogy", _special("xlogy"), samples=_xlogy_samples, dtypes=FLOATS + ("int64",)),
    OpInfo("xlogy", samples=_xlogy_samples),
    OpInfo("special.xlog1py", _special("xlog1py"), samples=_xlogy_samples, dtypes=FLOATS + ("int64",)),
    OpInfo("special.multigammaln", _special("multigammaln"), samples=_mvlgamma_samples),
    OpInfo("mvlgamma", samples=_mvlgamma_samples),
    OpInfo("special.zeta", _special("zeta"), samples=_zeta_samples, grad=False),
    OpInfo("i0", samples=unary_samples(), dtypes=ALL_NUM),
    OpInfo("sinc", samples=unary_samples(), dtypes=ALL_NUM),
    OpInfo("digamma", samples=unary_samples(low=0.1, high=4)),
    OpInfo("special.softmax", _special("softmax"), samples=_softmax_samples),
    OpInfo("special.log_softmax", _special("log_softmax"), samples=_softmax_samples),
    OpInfo("special.logsumexp", _special("logsumexp"), samples=_logsumexp_samples),
    OpInfo("special.round.decimals", lambda lib, x: lib.special.round(x, decimals=1), samples=unary_samples()),
)
del _name, _samples


# ---- breadth: copysign, logaddexp, shifts, logcumsumexp, unfold/fold, max_unpool, nonzero ---------------
def _shift_samples(make, dtype):
    x = make((3, 4), low=-20, high=20)
    yield SampleInput(x, 2)
    yield SampleInput(x, make((3, 4), low=0, high=5))
    yield SampleInput(x, make((4,), values=[0, 63, 64, 70]))     # past the width: 0 (or -1 for >> of a negative)
    yield SampleInput(make((3,), dtype="uint8", low=0, high=200), 7)
    yield SampleInput(make((3,), dtype="bool"), 1)
    yield SampleInput(make((3,), dtype="int32", low=-50, high=50), make((3,), dtype="int64", low=0, high=4))
    yield SampleInput(make((3,), dtype="float32"), 2)           # an error: floats don't shift


def _logcumsumexp_samples(make, dtype):
    for shape, dims in (((5,), (0, -1)), ((3, 4), (0, 1)), ((2, 3, 4), (1,)), ((), (0,)), ((0, 3), (1,))):
        for d in dims:
            yield SampleInput(make(shape), d)
    yield SampleInput(make((4, 3), layout="T"), 0)
    if np.dtype(dtype).kind == "f":
        yield SampleInput(make((4,), values=[-1000., 0., 1000., -np.inf]), 0, nondiff=True)


def _unfold_samples(make, dtype):
    yield SampleInput(make((7,)), 0, 2, 1)
    yield SampleInput(make((7,)), 0, 3, 2)        # windows that overlap, and an element no window reaches
    yield SampleInput(make((3, 8)), 1, 4, 4)
    yield SampleInput(make((3, 5, 2)), -2, 2, 3)
    yield SampleInput(make((4, 3), layout="T"), 0, 2, 1)
    yield SampleInput(make(()), 0, 1, 1)
    yield SampleInput(make((5,)), 0, 6, 1)        # errors
    yield SampleInput(make((5,)), 0, 2, 0)
    yield SampleInput(make((5,)), 1, 2, 1)


def _im2col_samples(make, dtype):
    yield SampleInput(make((2, 3, 4, 5)), 2)
    yield SampleInput(make((3, 4, 5)), (2, 3), dilation=1, padding=1, stride=2)
    yield SampleInput(make((1, 1, 3, 3)), 2)
    yield SampleInput(make((2, 3, 5, 6)), 2)
    yield SampleInput(make((2, 3, 5, 6)), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))
    yield SampleInput(make((3, 4, 4)), 3, padding=1)
    yield SampleInput(make((1, 1, 2, 2)), 3)            # errors: no block fits, a 2-D input
    yield SampleInput(make((3, 4)), 2)


def _col2im_samples(make, dtype):
    yield SampleInput(make((2, 12, 12)), (4, 5), 2)
    yield SampleInput(make((4, 4)), (3, 3), 2)
    yield SampleInput(make((2, 5, 12)), (4, 5), 2)                  # torch's error
    yield SampleInput(make((2, 12, 20)), (5, 6), 2)
    yield SampleInput(make((2, 18, 15)), (5, 6), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))
    yield SampleInput(make((36, 16)), (4, 4), 3, padding=1)
    yield SampleInput(make((1, 4, 3)), (3, 3), 2)       # errors: the wrong number of blocks, of channels
    yield SampleInput(make((1, 5, 4)), (3, 3), 2)


def _pool_indices(rng, shape, nd, k, s, p):
    """Indices as a max pool returns them: for each window, the flat in-plane index of one element in it
    (in the image, not the padding). Windows that overlap may pick the same element."""
    s = k if s is None else s
    spatial = shape[-nd:]
    out = [(n + 2 * p - k) // s + 1 for n in spatial]
    coords = []
    for d in range(nd):
        start = np.arange(out[d]) * s - p
        lo, hi = np.maximum(start, 0), np.minimum(start + k, spatial[d])
        grid_shape = [1] * nd
        grid_shape[d] = out[d]
        pick = rng.integers(0, 1 << 30, tuple(shape[:-nd]) + tuple(out)) % (hi - lo).reshape(grid_shape)
        coords.append(pick + lo.reshape(grid_shape))
    flat = np.zeros_like(coords[0])
    for d in range(nd):
        flat = flat * spatial[d] + coords[d]
    return Leaf(flat.astype("int64"), "contig", False), tuple(shape[:-nd]) + tuple(out)


def _unpool_samples(nd):
    def gen(make, dtype):
        for shape, k, s, p in [((2, 3) + (6,) * nd, 2, None, 0), ((1, 2) + (7,) * nd, 3, 2, 1),
                               ((2,) + (4,) * nd, 2, 1, 0)]:
            indices, pooled = _pool_indices(make.rng, shape, nd, k, s, p)
            values = make(pooled)
            # overlapping windows may pick one element twice: the unpool keeps one of the values, the
            # gradient reaches both (torch's rule; not a derivative finite differences can check)
            yield SampleInput(values, indices, k, stride=s, padding=p, nondiff=s is not None and s < k)
            if nd == 2:
                yield SampleInput(values, indices, k, stride=s, padding=p, output_size=list(shape))
        yield SampleInput(make((1, 1) + (2,) * nd), Leaf(np.full((1, 1) + (2,) * nd, 99), "contig", False), 2)
    return gen


register(
    OpInfo("copysign", samples=binary_samples(scalars=(2, -1.5, 0.0, -0.0)), dtypes=ALL_NUM),
    OpInfo("copysign.zeros", lambda lib, a, b: lib.copysign(a, b), gradgrad=False,   # (torch's is NaN at 0)
           samples=lambda make, dt: [SampleInput(make((4,), values=[0., -0., 1., -2.]),
                                                 make((4,), values=[-1., 1., -0., 0.]), nondiff=True)]),
    OpInfo("logaddexp", samples=binary_samples(scalars=()), dtypes=ALL_NUM),
    OpInfo("logaddexp2", samples=binary_samples(scalars=()), dtypes=ALL_NUM),
    OpInfo("logaddexp.extreme", lambda lib, a, b: lib.logaddexp(a, b), gradcheck=False,
           samples=lambda make, dt: [SampleInput(make((3,), values=[-1000., 1000., 0.]), make((3,), values=[-1000., 3., 800.]))]),
    OpInfo("bitwise_left_shift", samples=_shift_samples, dtypes=INTS),
    OpInfo("bitwise_right_shift", samples=_shift_samples, dtypes=INTS),
    OpInfo("__lshift__", lambda lib, a, b: a << b, samples=_shift_samples, dtypes=INTS),
    OpInfo("__rshift__", lambda lib, a, b: a >> b, samples=_shift_samples, dtypes=INTS),
    OpInfo("__rlshift__", lambda lib, a: 3 << a, samples=lambda make, dt: [SampleInput(make((4,), low=0, high=5))],
           dtypes=INTS),
    OpInfo("logcumsumexp", samples=_logcumsumexp_samples, dtypes=FLOATS + INTS),
    OpInfo("Tensor.unfold", lambda lib, x, *a: x.unfold(*a), samples=_unfold_samples),
    OpInfo("nn.functional.unfold", lambda lib, *a, **k: lib.nn.functional.unfold(*a, **k), samples=_im2col_samples),
    OpInfo("nn.functional.fold", lambda lib, *a, **k: lib.nn.functional.fold(*a, **k), samples=_col2im_samples),
    OpInfo("nn.functional.max_unpool1d", lambda lib, *a, **k: lib.nn.functional.max_unpool1d(*a, **k),
           samples=_unpool_samples(1)),
    OpInfo("nn.functional.max_unpool2d", lambda lib, *a, **k: lib.nn.functional.max_unpool2d(*a, **k),
           samples=_unpool_samples(2)),
    OpInfo("nn.functional.max_unpool3d", lambda lib, *a, **k: lib.nn.functional.max_unpool3d(*a, **k),
           samples=_unpool_samples(3)),
    OpInfo("nonzero.empty", lambda lib, x: lib.nonzero(x), dtypes=ALL_NUM, grad=False,
           samples=lambda make, dt: [SampleInput(make((0,))), SampleInput(make((0, 3))), SampleInput(make((2, 0, 3))),
                                     SampleInput(make((), values=2)), SampleInput(make((), values=0)),
                                     SampleInput(make((3, 4), values=np.zeros((3, 4))))]),
)


def _scatter_reduce_samples(make, dtype):
    floats = np.dtype(dtype).kind == "f"
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            x = make((3, 5))
            yield SampleInput(x, 1, make.index((3, 4), 5), make((3, 4)), reduce, include_self=include_self)
            yield SampleInput(make((4, 3)), 0, make.index((2, 3), 4), make((3, 3)), reduce, include_self=include_self)
        if floats:   # ties (amax/amin share the gradient) and zeros (prod's special cases)
            yield SampleInput(make((2, 3), values=[[1., 0., 3.], [2., 2., 0.]]), 1,
                              Leaf(np.array([[0, 1, 0, 2], [1, 1, 2, 2]]), "contig", False),
                              make((2, 4), values=[[1., 0., 2., 3.], [0., 0., 2., 0.]]), reduce, nondiff=True)
            yield SampleInput(make((2, 3), values=[[1., 2., 3.], [2., 2., 1.]]), 1,
                              Leaf(np.array([[0, 0, 0], [2, 2, 1]]), "contig", False),
                              make((2, 3), values=[[1., 1., 0.5], [2., 2., 2.]]), reduce, include_self=False,
                              nondiff=True)
    yield SampleInput(make((3,)), 0, make.index((2,), 3), make((2,)), "max")
    x = make((3, 4))
    yield SampleInput(x, 1, make.index((3, 4), 4), make((3, 4)), "add")          # errors
    yield SampleInput(x, 1, make.index((3, 4), 9), make((3, 4)), "sum")
    yield SampleInput(x, 1, make.index((4,), 4), make((4,)), "sum")
    yield SampleInput(x, 2, make.index((3, 4), 4), make((3, 4)), "sum")
    yield SampleInput(x, 1, make((3, 4)), make((3, 4)), "sum")
    yield SampleInput(x, 1, make.index((3, 4), 4), make((3, 4), dtype="float64" if dtype != "float64" else "float32"),
                      "sum")


register(
    # (double backward: not implemented here, pinned in test_breadth_ops.py)
    OpInfo("scatter_reduce", samples=_scatter_reduce_samples, gradgrad=False),
    OpInfo("scatter_reduce.int", lambda lib, *a, **k: lib.scatter_reduce(*a, **k), samples=_scatter_reduce_samples,
           dtypes=INTS),
    OpInfo("scatter_reduce.method", _m("scatter_reduce"), samples=_scatter_reduce_samples, gradgrad=False),
)


# ---- breadth: distances and norms (ops/distance.py), hypot, multi_dot ----------------------------------
def _cdist_samples(make, dtype):
    for p in (0, 1, 2, 3, 0.5, 1.5, math.inf):
        yield SampleInput(make((3, 4)), make((5, 4)), p=p)
    yield SampleInput(make((2, 3, 4)), make((5, 4)), p=2.0)                   # batch dims broadcast
    yield SampleInput(make((2, 1, 3, 4)), make((1, 2, 5, 4)), p=1.0)
    yield SampleInput(make((4, 3), layout="T"), make((4, 2), layout="T"), p=2.0)   # non-contiguous
    yield SampleInput(make((30, 3)), make((4, 3)))                             # > 25 rows: the matrix-product path
    yield SampleInput(make((2, 30, 3)), make((30, 3)))
    yield SampleInput(make((3, 4)), make((5, 4)), compute_mode="use_mm_for_euclid_dist")
    yield SampleInput(make((30, 3)), make((4, 3)), compute_mode="donot_use_mm_for_euclid_dist")
    yield SampleInput(make((3, 4), values=np.ones((3, 4))), make((2, 4), values=np.ones((2, 4))), p=2.0, nondiff=True)
    yield SampleInput(make((0, 4)), make((5, 4)))                              # empty
    yield SampleInput(make((3, 4)), make((5, 3)))                              # errors
    yield SampleInput(make((4,)), make((5, 4)))
    yield SampleInput(make((3, 4)), make((5, 4)), p=-1.0)
    yield SampleInput(make((2, 3, 4)), make((3, 5, 4)))
    yield SampleInput(make((3, 4)), make((5, 4)), compute_mode="sometimes")


def _dist_samples(make, dtype):
    for p in (1, 2, 3, 0.5, math.inf, -math.inf):
        yield SampleInput(make((3, 4)), make((4,)), p)
    yield SampleInput(make((4, 3), layout="T"), make((3, 4), layout="slice"))
    yield SampleInput(make(()), make((2,)), 2.5)
    yield SampleInput(make((3,)), make((2,)))                                  # error


def _renorm_samples(make, dtype):
    for p, dim, maxnorm in ((2, 0, 1.0), (1, 1, 2.0), (3, -1, 0.5), (1.5, 0, 5.0), (2, 1, 100.0)):
        yield SampleInput(make((3, 4)), p, dim, maxnorm)
    yield SampleInput(make((2, 3, 4)), 2, 1, 1.0)
    yield SampleInput(make((4, 3), layout="T"), 2, 0, 1.0)
    yield SampleInput(make((3,)), 2, 0, 1.0)                                   # errors
    yield SampleInput(make((3, 4)), -1, 0, 1.0)
    yield SampleInput(make((3, 4)), 2, 0, -1.0)
    yield SampleInput(make((3, 4)), 2, 2, 1.0)


def _hypot_samples(make, dtype):
    for a, b in BINARY_SHAPES:
        yield SampleInput(make(a, exclude_zero=True), make(b, exclude_zero=True))
    for (sa, la), (sb, lb) in NONCONTIG_PAIRS:
        yield SampleInput(make(sa, layout=la, exclude_zero=True), make(sb, layout=lb, exclude_zero=True))
    if dtype == "float64":   # no overflow or underflow in the squares
        yield SampleInput(make((3,), values=[1e200, -3e-200, 0.5]), make((3,), values=[1e200, 4e-200, 0.0]),
                          nondiff=True)


def _multi_dot_samples(make, dtype):
    yield SampleInput([make((2, 3)), make((3, 4))])
    yield SampleInput([make((2, 3)), make((3, 4)), make((4, 5))])
    yield SampleInput([make((6, 2)), make((2, 5)), make((5, 1))])             # the other order of three
    yield SampleInput([make((3,)), make((3, 4)), make((4, 2)), make((2,))])   # vectors at the ends
    yield SampleInput([make((10, 3)), make((3, 8)), make((8, 1)), make((1, 9)), make((9, 2))])
    yield SampleInput([make((4, 3), layout="T"), make((3, 2), layout="slice")])
    yield SampleInput([make((3,)), make((3,))])
    yield SampleInput([make((2, 3))])                                          # errors
    yield SampleInput([make((2, 2, 3)), make((3, 2))])
    yield SampleInput([make((2, 3)), make((3, 3, 3)), make((3, 2))])
    yield SampleInput([make((2, 3)), make((4, 3))])
    yield SampleInput([make((2, 3)), make((3, 2), dtype="float64" if dtype == "float32" else "float32")])


register(
    # (double backward of CdistBackward0 is not implemented in torch: _cdist_backward)
    OpInfo("cdist", samples=_cdist_samples, gradgrad=False),
    OpInfo("cdist.mm", lambda lib, *a, **k: lib.cdist(*a, **k), samples=lambda make, dt: [
        SampleInput(make((30, 3)), make((4, 3))), SampleInput(make((2, 30, 3)), make((30, 3))),
        SampleInput(make((3, 4)), make((5, 4)), compute_mode="use_mm_for_euclid_dist")]),
    OpInfo("dist", samples=_dist_samples),
    OpInfo("dist.method", _m("dist"), samples=_dist_samples),
    OpInfo("renorm", samples=_renorm_samples),
    OpInfo("renorm.method", _m("renorm"), samples=_renorm_samples),
    OpInfo("hypot", samples=_hypot_samples, dtypes=FLOATS + INTS),
    OpInfo("linalg.multi_dot", lambda lib, ts: lib.linalg.multi_dot(ts), samples=_multi_dot_samples),
)


# ---- breadth: diff, quantile/nanquantile, isin (reduction.py), rot90, put -----------------------------
def _diff_samples(make, dtype):
    for shape, dims in (((5,), (0, -1)), ((3, 4), (0, 1)), ((2, 3, 4), (1,))):
        for d in dims:
            for n in (1, 2):
                yield SampleInput(make(shape), n, d)
    yield SampleInput(make((3, 4)), 1, 1, make((3, 2)), make((3, 1)))          # prepend and append
    yield SampleInput(make((3, 4)), 2, 0, make((1, 4)))
    yield SampleInput(make((3, 4)), 1, 1, None, make((3, 2)))
    yield SampleInput(make((4, 3), layout="T"), 1, 0)
    yield SampleInput(make((3,)), 5)                                           # more than the dim: empty
    yield SampleInput(make((3,)), 0, 0, make((2,)))                            # n = 0: a copy
    yield SampleInput(make((3, 4), dtype="bool"), 1, 1)                        # xor
    yield SampleInput(make(()), 1)                                             # errors
    yield SampleInput(make((3,)), -1)
    yield SampleInput(make((3, 4)), 1, 1, make((4,)))
    yield SampleInput(make((3, 4)), 1, 0, make((2, 3)))
    yield SampleInput(make((3, 4)), 1, 2)


def _quantile_samples(ignore_nan):
    def gen(make, dtype):
        x = make.distinct((3, 5)) if False else make((3, 5))
        for q in (0.0, 0.3, 0.5, 1.0):
            yield SampleInput(make((7,)), q)
        qs = make((4,), values=[0.0, 0.25, 0.6, 1.0], requires_grad=False)
        for mode in ("linear", "lower", "higher", "midpoint", "nearest"):
            yield SampleInput(x, qs, 1, interpolation=mode)
            yield SampleInput(x, 0.4, 0, True, interpolation=mode)
        yield SampleInput(x, qs)
        yield SampleInput(x, qs, None, True)
        yield SampleInput(make((2, 3, 4)), qs, 1, True)
        yield SampleInput(make((2, 3, 4)), 0.7, -1)
        yield SampleInput(make((4, 3), layout="T"), qs, 0)
        yield SampleInput(make(()), 0.5)
        yield SampleInput(make(()), 0.5, 0, True)
        nan = make((2, 4), values=[[1.0, np.nan, 3.0, 2.0], [np.nan, np.nan, np.nan, np.nan]])
        yield SampleInput(nan, 0.5, 1, nondiff=True)
        yield SampleInput(nan, qs, 1, nondiff=True)
        yield SampleInput(make((0,)), 0.5)                                      # errors
        yield SampleInput(x, 1.5)
        yield SampleInput(x, make((1,), values=[1.5], requires_grad=False))
        yield SampleInput(x, make((1, 1), values=[[0.5]], requires_grad=False))
        yield SampleInput(x, 0.5, 2)
        yield SampleInput(x, 0.5, interpolation="cubic")
        yield SampleInput(make((3,), dtype="int64"), 0.5)
        yield SampleInput(x, make((1,), dtype="float64" if dtype == "float32" else "float32", values=[0.5]))
    return gen


def _isin_samples(make, dtype):
    elements = make((3, 4), low=-3, high=3)
    test = make((5,), low=-3, high=3)
    rounded = lambda leaf: Leaf(np.round(leaf.array), leaf.layout, False)    # equal values, so some are in
    elements, test = rounded(elements), rounded(test)
    for kw in ({}, {"invert": True}, {"assume_unique": True}):
        yield SampleInput(elements, test, **kw)
    yield SampleInput(elements, 1, invert=True)
    yield SampleInput(2, test)
    yield SampleInput(Leaf(np.round(make((4, 3), layout="T").array), "T", False), test)
    yield SampleInput(elements, Leaf(np.array([[1, 0], [-2, 5]]), "contig", False))    # another dtype, 2-D
    yield SampleInput(make((0,)), test)
    yield SampleInput(make((3,), dtype="bool"), test)                                  # error


def _rot90_samples(make, dtype):
    for k in (-1, 0, 1, 2, 3, 5):
        yield SampleInput(make((3, 4)), k)
    yield SampleInput(make((2, 3, 4)), 1, (1, 2))
    yield SampleInput(make((2, 3, 4)), 3, (-1, 0))
    yield SampleInput(make((4, 3), layout="T"), 1)
    yield SampleInput(make((3, 4)), 1, (0, 0))                                    # errors
    yield SampleInput(make((3, 4)), 1, (0,))
    yield SampleInput(make((3, 4)), 1, (0, 3))
    yield SampleInput(make((3,)), 1)
    yield SampleInput(make((3, 4)), 1, (0, -2))


def _put_samples(make, dtype):
    x = make((3, 4))
    yield SampleInput(x, Leaf(np.array([0, 5, -1]), "contig", False), make((3,)))
    yield SampleInput(x, Leaf(np.array([[0, 5], [2, 11]]), "contig", False), make((4,)), True)
    yield SampleInput(x, Leaf(np.array([1, 1, 2]), "contig", False), make((3,)), True)      # repeats add up
    yield SampleInput(make((4, 3), layout="T"), Leaf(np.array([1, 4]), "contig", False), make((2,)))
    yield SampleInput(x, Leaf(np.array([12]), "contig", False), make((1,)))                # errors
    yield SampleInput(x, Leaf(np.array([1]), "contig", False), make((2,)))
    yield SampleInput(x, Leaf(np.array([1.0]), "contig", False), make((1,)))


def _put_inplace(lib, x, index, source, accumulate=False):
    return (x * 1).put_(index, source, accumulate)


register(
    OpInfo("diff", samples=_diff_samples, dtypes=ALL_NUM),
    OpInfo("diff.method", _m("diff"), samples=_diff_samples),
    OpInfo("quantile", samples=_quantile_samples(False)),
    OpInfo("nanquantile", samples=_quantile_samples(True)),
    OpInfo("quantile.method", _m("quantile"), samples=_quantile_samples(False)),
    OpInfo("isin", samples=_isin_samples, dtypes=("float32", "int64"), grad=False),
    OpInfo("rot90", samples=_rot90_samples, dtypes=ALL_NUM),
    OpInfo("rot90.method", _m("rot90"), samples=_rot90_samples),
    OpInfo("put", samples=_put_samples, dtypes=ALL_NUM),
    OpInfo("Tensor.put_", _put_inplace, samples=_put_samples),
)


# ---- breadth: grid_sample, affine_grid (ops/nn_sampling.py) -------------------------------------------
def _grid(make, shape, low=-1.2, high=1.2):
    """Sampling points inside and a little outside [-1, 1] (no point exactly on a pixel: a kink)."""
    return make(shape, low=low, high=high)


def _grid_sample_samples(make, dtype):
    for mode in ("bilinear", "nearest", "bicubic"):
        for padding in ("zeros", "border", "reflection"):
            for align in (False, True):
                yield SampleInput(make((2, 3, 4, 5)), _grid(make, (2, 3, 2, 2)), mode=mode, padding_mode=padding,
                                  align_corners=align, nondiff=mode != "bilinear")
    yield SampleInput(make((1, 2, 3, 4)), _grid(make, (1, 5, 6, 2), -3.0, 3.0), padding_mode="reflection",
                      align_corners=False)                                   # several reflections
    yield SampleInput(make((1, 1, 3, 3)), _grid(make, (1, 2, 2, 2)), padding_mode="border", align_corners=True)
    yield SampleInput(make((2, 2, 4, 3), layout="T"), _grid(make, (2, 3, 2, 2)), align_corners=False)
    yield SampleInput(make((1, 2, 1, 1)), _grid(make, (1, 2, 2, 2)), padding_mode="reflection", align_corners=True)
    for padding in ("zeros", "border", "reflection"):                        # 3-D: trilinear
        yield SampleInput(make((1, 2, 3, 4, 3)), _grid(make, (1, 2, 2, 3, 3)), padding_mode=padding,
                          align_corners=padding == "border")
    yield SampleInput(make((1, 2, 3, 4, 3)), _grid(make, (1, 2, 2, 3, 3)), mode="nearest", align_corners=False,
                      nondiff=True)
    yield SampleInput(make((1, 1, 2, 2)), make((1, 2, 2, 3)), align_corners=False)    # errors
    yield SampleInput(make((1, 1, 2, 2)), make((2, 2, 2, 2)), align_corners=False)
    yield SampleInput(make((1, 1, 2, 2)), make((1, 2, 2, 2)), mode="cubic")
    yield SampleInput(make((1, 1, 2, 2)), make((1, 2, 2, 2)), padding_mode="wrap")
    yield SampleInput(make((1, 1, 0, 2)), make((1, 2, 2, 2)), align_corners=False)
    yield SampleInput(make((1, 2, 2)), make((1, 2, 2, 2)), align_corners=False)
    yield SampleInput(make((1, 1, 2, 2, 2)), make((1, 2, 2, 2, 3)), mode="bicubic", align_corners=False)
    yield SampleInput(make((1, 1, 2, 2)), make((1, 2, 2, 2), dtype="float64" if dtype == "float32" else "float32"),
                      align_corners=False)


def _affine_grid_samples(make, dtype):
    for align in (False, True):
        yield SampleInput(make((2, 2, 3)), (2, 3, 4, 5), align_corners=align)
        yield SampleInput(make((1, 3, 4)), (1, 2, 3, 4, 2), align_corners=align)
    yield SampleInput(make((2, 2, 3)), (2, 1, 1, 3), align_corners=False)
    yield SampleInput(make((2, 3, 2), layout="T"), (2, 1, 3, 3), align_corners=False)
    yield SampleInput(make((2, 2, 3)), (3, 3, 4, 5), align_corners=False)         # errors
    yield SampleInput(make((2, 2, 3)), (2, 3, 4), align_corners=False)
    yield SampleInput(make((2, 2, 3)), (2, 3, 0, 5), align_corners=False)
    yield SampleInput(make((2, 2, 3)), (2, 3, 4, 5, 6), align_corners=False)
    yield SampleInput(make((2, 3, 3)), (2, 3, 4, 5), align_corners=False)


register(
    OpInfo("nn.functional.grid_sample", lambda lib, *a, **k: lib.nn.functional.grid_sample(*a, **k),
           samples=_grid_sample_samples),
    OpInfo("nn.functional.affine_grid", lambda lib, *a, **k: lib.nn.functional.affine_grid(*a, **k),
           samples=_affine_grid_samples),
)


# ---- breadth: ctc_loss (ops/nn_ctc.py) ------------------------------------------------------------------
def _ctc(lib, x, *args, **kwargs):
    """ctc_loss of log_softmax(x): torch's CTC gradient is the one of normalized log-probabilities."""
    return lib.nn.functional.ctc_loss(x.log_softmax(-1), *args, **kwargs)


def _ctc_samples(make, dtype):
    ints = lambda values: Leaf(np.array(values, dtype="int64"), "contig", False)   # noqa: E731
    x = make((6, 2, 4))
    padded = ints([[1, 2, 2], [3, 1, 0]])
    for reduction in ("mean", "sum", "none"):
        yield SampleInput(x, padded, [6, 5], [3, 2], reduction=reduction)
    yield SampleInput(x, ints([1, 2, 2, 3, 1]), [6, 5], [3, 2])                     # concatenated targets
    yield SampleInput(x, padded, ints([6, 4]), ints([3, 1]), reduction="none")      # lengths as tensors
    yield SampleInput(x, padded, [6, 5], [0, 2], reduction="none")                  # an empty target
    yield SampleInput(x, ints([[2, 2, 2], [1, 1, 3]]), [6, 6], [3, 3], blank=3, reduction="sum")
    yield SampleInput(make((6, 4)), ints([1, 3]), [6], [2], reduction="none")        # unbatched
    yield SampleInput(make((8, 3, 5)), ints([[1, 2, 3, 4], [4, 4, 4, 1], [2, 1, 2, 1]]), [8, 7, 8], [4, 3, 2])
    yield SampleInput(x, padded, [2, 5], [3, 2], reduction="none", zero_infinity=True, nondiff=True)
    yield SampleInput(x, padded, [2, 5], [3, 2], reduction="sum", nondiff=True)      # inf loss, NaN gradient
    yield SampleInput(make((5, 3, 2), layout="T"), ints([[1], [1], [1]]), [5, 4, 3], [1, 1, 1])
    yield SampleInput(x, padded, [6, 5], [3, 2], reduction="avg")                   # errors
    yield SampleInput(x, padded, [6, 5], [3, 2], blank=4)
    yield SampleInput(x, padded, [6], [3, 2])
    yield SampleInput(x, padded, [7, 5], [3, 2])
    yield SampleInput(x, padded, [-1, 5], [3, 2])
    yield SampleInput(x, padded, [6, 5], [4, 2])
    yield SampleInput(x, padded, [6, 5], [-1, 2])
    yield SampleInput(x, ints([1, 2, 2, 3]), [6, 5], [3, 2])
    yield SampleInput(x, padded, Leaf(np.array([6.0, 5.0]), "contig", False), ints([3, 2]))
    yield SampleInput(x, padded, 6, 3)


register(
    # (double backward: not implemented in torch either -- _ctc_loss_backward has no derivative)
    OpInfo("nn.functional.ctc_loss", _ctc, samples=_ctc_samples, gradgrad=False),
)


# ---- breadth: torch.special's Bessel/Airy functions, polynomials, incomplete gamma -----------------------
_BESSEL_EDGES = [-20., -5.01, -5., -2.1, -0.5, -1e-6, 0., 1e-6, 0.4, 1.9, 2., 2.09, 4.99, 5., 7.9, 8., 8.4, 25., 104.]
_NO_GRAD_UNARY = ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
                  "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
                  "airy_ai", "spherical_bessel_j0")


def _no_grad_special_samples(make, dtype):
    if np.dtype(dtype).kind != "f":
        yield SampleInput(make((8,), values=[-20, -5, 0, 1, 2, 5, 8, 25]))
        return
    yield from _values_samples(_BESSEL_EDGES + [math.inf, -math.inf, math.nan])(make, dtype)
    yield SampleInput(make((30,), low=-30, high=30))


def _polynomial_samples(make, dtype):
    floats = np.dtype(dtype).kind == "f"
    x = make((5, 8), low=-1.5, high=1.5) if floats else make((5, 8), low=-2, high=3)
    degrees = Leaf(np.array([-1, 0, 1, 2, 3, 7, 9, 12], dtype=dtype), "contig", False)
    yield SampleInput(x, degrees)                                          # n broadcast over x's rows
    yield SampleInput(x, 4)                                                # n a number
    yield SampleInput(0.3, degrees)                                        # x a number
    if floats:
        yield SampleInput(make((4,), values=[-1., 1., 0., 0.5]), Leaf(np.array([3, 3, 10, 11], dtype=dtype), "contig", False))
        yield SampleInput(make((6,), values=[0.1, 0.3, 0.6, 0.9, 0., 1.]),
                          Leaf(np.array([5, 6, 7, 8, 9, 12], dtype=dtype), "contig", False))
        yield SampleInput(make((3,), values=[0.2, 0.7, -0.4]), Leaf(np.array([2.7, 9.5, -0.5], dtype=dtype), "contig", False))
        yield SampleInput(make((4, 3), layout="T"), Leaf(np.array([5, 10, 2], dtype=dtype), "contig", False))
    yield SampleInput(make((3,), dtype="bool"), 2)                         # error


def _igamma_samples(make, dtype):
    """(a, x): torch has no derivative for a (pinned in test_breadth_families.py), so a needs none here."""
    first = lambda shape, **kw: make(shape, requires_grad=False, **kw)    # noqa: E731
    a = first((4, 5), low=0.2, high=6)
    yield SampleInput(a, make((4, 5), low=0.05, high=9))
    yield SampleInput(a, make((5,), low=0.5, high=3))
    yield SampleInput(first((3,), low=0.5, high=4), make((4, 3), layout="T", low=0.1, high=5))
    yield SampleInput(first((7,), values=[0.5, 3., 30., 1., 0., 2., 1.]),
                      make((7,), values=[0.2, 0.4, 25., 1.5, 1., 0., 40.]), nondiff=True)
    yield SampleInput(first((3,), values=[2., 5., 0.7]), make((3,), values=[1e-3, 0.6, 1.05]))
    yield SampleInput(first((2,)), 2.0)                                    # error: other must be a tensor


for _name in _NO_GRAD_UNARY:
    register(OpInfo("special." + _name, _special(_name), samples=_no_grad_special_samples, dtypes=FLOATS + ("int64",),
                    grad=False))
for _name in ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
              "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
              "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"):
    register(OpInfo("special." + _name, _special(_name), samples=_polynomial_samples, dtypes=FLOATS + ("int64",),
                    grad=False))
register(
    OpInfo("igamma", samples=_igamma_samples),
    OpInfo("igammac", samples=_igamma_samples),
    OpInfo("special.gammainc", _special("gammainc"), samples=_igamma_samples),
    OpInfo("special.gammaincc", _special("gammaincc"), samples=_igamma_samples),
    OpInfo("igamma.method", _m("igamma"), samples=_igamma_samples),
)
del _name


# ---- breadth: torch.fft's Hermitian N-D transforms ------------------------------------------------------
for _name, _samples, _dtypes in [
        ("hfft2", _irfft_nd_samples(True), COMPLEX), ("hfftn", _irfft_nd_samples(False), COMPLEX + FLOATS),
        ("ihfft2", _fft_nd_samples(True), FLOATS), ("ihfftn", _fft_nd_samples(False), FLOATS + ("int64",))]:
    register(OpInfo("fft." + _name, _fft_fn(_name), samples=_samples, dtypes=_dtypes))
register(OpInfo("fft.ihfftn.complex_input", _fft_fn("ihfftn"), dtypes=COMPLEX,
                samples=lambda make, dt: [SampleInput(make((3, 4)))]),
         OpInfo("fft.hfftn.roundtrip", lambda lib, x: lib.fft.hfftn(lib.fft.ihfftn(x), s=x.shape),
                samples=lambda make, dt: [SampleInput(make((3, 4))), SampleInput(make((2, 3, 5)))]))
del _name, _samples, _dtypes


# ---- breadth: bilinear interpolation of bytes (torch's fixed-point kernel) ---------------------------------
def _uint8_interp_samples(make, dtype):
    img = make((2, 3, 5, 7), low=0, high=256)
    # (not (1, 1): torch 2.13's vectorized byte kernel fails an internal assert there for 3 channels)
    for size in ((9, 11), (3, 4), (5, 13), (10, 7), (1, 2), (2, 20)):
        for align in (False, True):
            yield SampleInput(img, size=size, mode="bilinear", align_corners=align)
    yield SampleInput(img, scale_factor=1.7, mode="bilinear", align_corners=False)
    yield SampleInput(img, scale_factor=(0.6, 2.3), mode="bilinear", align_corners=False, recompute_scale_factor=True)
    yield SampleInput(make((1, 1, 1, 1), low=0, high=256), size=(3, 2), mode="bilinear", align_corners=False)
    yield SampleInput(make((2, 3, 7), low=0, high=256), size=9, mode="linear", align_corners=False)   # errors
    yield SampleInput(make((1, 2, 2, 3, 4), low=0, high=256), size=(3, 3, 3), mode="trilinear", align_corners=False)


register(OpInfo("nn.functional.interpolate.bilinear.uint8", _nnf("interpolate"), samples=_uint8_interp_samples,
                dtypes=("uint8",), grad=False))


def _pdist_samples(make, dtype):
    for p in (0, 1, 2, 3, 0.5, 1.5, math.inf):
        yield SampleInput(make((5, 3)), p)
    yield SampleInput(make((4, 3), layout="T"))                                   # non-contiguous: a copy first
    yield SampleInput(make((3, 2), values=[[1., 2.], [1., 2.], [0., 5.]]), 2, nondiff=True)   # two equal rows
    yield SampleInput(make((1, 4)))                 # (not (0, n): torch 2.13's backward crashes the process there)
    yield SampleInput(make((3,)))                                                 # errors
    yield SampleInput(make((3, 2)), -1)


register(
    # (double backward: _pdist_backward has no derivative in torch)
    OpInfo("nn.functional.pdist", lambda lib, *a: lib.nn.functional.pdist(*a), samples=_pdist_samples, gradgrad=False),
    OpInfo("pdist", samples=_pdist_samples, gradgrad=False),
)


# ---- the indexing family's other primitive ops, and tensor[...] itself (ops/indexing.py) ----------
def _idx(values):
    return Leaf(np.array(values, "int64"))


def _getitem_samples(make, dtype):
    x = make((4, 3, 2))
    yield SampleInput(x, _idx([0, 2, 2]))                       # aten.index, a repeated index
    yield SampleInput(x, (slice(None), _idx([2, 0])))           # after a dim taken whole
    yield SampleInput(x, (_idx([0, 3]), 1, _idx([1, 0])))       # separated: the result's dims move to the front
    yield SampleInput(x, make.mask((4, 3)))                     # a boolean mask
    yield SampleInput(x, (1, slice(0, 2), None))                # views only: select, slice, unsqueeze
    yield SampleInput(make((4, 3), layout="T"), (_idx([1, 1]), slice(1, None)))


def _index_put_samples(make, dtype):
    yield SampleInput(make((4, 3)), (_idx([0, 2]),), make((2, 3)))
    yield SampleInput(make((4, 3)), (_idx([0, 2, 0]),), make((3,)), True)        # accumulate, broadcast values
    yield SampleInput(make((4, 3)), (_idx([3, 0]), _idx([2, 2])), make(()))      # one element per pair, a 0-d value


def _index_copy_samples(make, dtype):
    yield SampleInput(make((4, 3)), 0, _idx([3, 0]), make((2, 3)))
    yield SampleInput(make((4, 3)), 1, _idx([2]), make((4, 1)))


def _index_fill_samples(make, dtype):
    yield SampleInput(make((4, 3)), 0, _idx([3, 0, 3]), 2.5)
    yield SampleInput(make((4, 3)), 1, _idx([1]), make(()))                      # a tensor value: IndexFillBackward1


def _masked_scatter_samples(make, dtype):
    yield SampleInput(make((3, 4)), make.mask((3, 4)), make((12,)))
    yield SampleInput(make((3, 4)), make.mask((4,)), make((4, 4)))


def _take_samples(make, dtype):
    yield SampleInput(make((3, 4)), _idx([0, 11, 5, 5]))
    yield SampleInput(make((3, 4)), _idx([[1, -1], [2, 0]]))


def _diag_embed_samples(make, dtype):
    yield SampleInput(make((3,)))
    yield SampleInput(make((2, 3)), 1)
    yield SampleInput(make((2, 3)), -1, 0, 2)


register(
    OpInfo("__getitem__.index", lambda lib, x, index: x[index], samples=_getitem_samples),   # (aten.index's cases)
    OpInfo("index_put", samples=_index_put_samples),
    OpInfo("index_copy", samples=_index_copy_samples),
    OpInfo("index_fill", samples=_index_fill_samples),
    OpInfo("masked_scatter", samples=_masked_scatter_samples),
    OpInfo("take", samples=_take_samples),
    OpInfo("diag_embed", samples=_diag_embed_samples),
)


# ---- weight normalisation and the matrix functions under nn.utils.parametrizations (ops/weight_norm.py,
# ops/linalg.py) ------------------------------------------------------------------------------------------
def _weight_norm_samples(make, dtype):
    yield SampleInput(make((3, 4), low=0.5), make((3, 1)), 0)                  # the fused op, first dim
    yield SampleInput(make((2, 3, 4), low=0.5), make((1, 1, 4)), 2)            # the fused op, last dim
    yield SampleInput(make((2, 3, 4), low=0.5), make((1, 3, 1)), 1)            # torch's composite
    yield SampleInput(make((3, 4), layout="T", low=0.5), make(()), -1)         # over everything


def _norm_except_dim_samples(make, dtype):
    yield SampleInput(make((3, 4), low=0.5), 2, 0)
    yield SampleInput(make((2, 3, 4), low=0.5), 2, 1)
    yield SampleInput(make((2, 3, 4), low=0.5), 3, 2)
    yield SampleInput(make((3, 4), low=0.5), 2, -1)


def _matrix_exp_samples(make, dtype):
    yield SampleInput(make((3, 3), low=-1, high=1))
    yield SampleInput(make((2, 3, 3), low=-2, high=2))
    yield SampleInput(make((4, 4), layout="T", low=-3, high=3))    # scaled and squared
    yield SampleInput(make((1, 1)))


def _householder_product_samples(make, dtype):
    yield SampleInput(make((4, 3)), make((2,), low=0.2, high=1.5))
    yield SampleInput(make((3, 3)), make((3,), low=0.2, high=1.5))
    yield SampleInput(make((2, 5, 2)), make((2, 2), low=0.2, high=1.5))


register(
    OpInfo("_weight_norm", samples=_weight_norm_samples),
    OpInfo("norm_except_dim", samples=_norm_except_dim_samples),
    OpInfo("linalg.matrix_exp", lambda lib, x: lib.linalg.matrix_exp(x), samples=_matrix_exp_samples),
    OpInfo("matrix_exp", samples=_matrix_exp_samples),
    # (float32: the reflectors' products accumulate rounding differently from LAPACK's)
    OpInfo("linalg.householder_product", lambda lib, *a: lib.linalg.householder_product(*a),
           samples=_householder_product_samples, tol={"float32": (5e-4, 5e-4)}),
    OpInfo("orgqr", samples=_householder_product_samples, tol={"float32": (5e-4, 5e-4)}),
)


# ---- block_diag, cartesian_prod (ops/joining.py), addmv (ops/linalg.py), embedding_bag (ops/nn_conv.py) ---------
def _block_diag_samples(make, dtype):
    yield SampleInput(make((2, 3)), make((1, 2)), make((3,)), make(()))
    yield SampleInput(make((2, 2), layout="T"), make((0, 2)), make((1,)))
    yield SampleInput(make((3, 1)))


def _cartesian_prod_samples(make, dtype):
    yield SampleInput(make((2,)), make((3,)))
    yield SampleInput(make((2,)), make((1,)), make((3,), layout="slice"))
    yield SampleInput(make((4,)))


def _addmv_samples(make, dtype):
    yield SampleInput(make((2,)), make((2, 3)), make((3,)))
    yield SampleInput(make((2,)), make((3, 2), layout="T"), make((3,), layout="slice"), beta=0.5, alpha=2)
    yield SampleInput(make((1,)), make((4, 3)), make((3,)), beta=-1)         # the input broadcast
    yield SampleInput(make(()), make((2, 3)), make((3,)), alpha=0)
    yield SampleInput(make((2,)), make((2, 3)), make((3,)), beta=0)


def _addmv_inplace(lib, input, mat, vec, **kwargs):
    return input.clone().addmv_(mat, vec, **kwargs)


def _embedding_bag_samples(make, dtype):
    idx = _idx([0, 2, 4, 2, 1, 5, 5])
    for mode in ("sum", "mean", "max"):
        yield SampleInput(idx, make((6, 3)), _idx([0, 2, 2, 5]), mode=mode)            # an empty bag among them
        yield SampleInput(idx, make((6, 3)), _idx([0, 3]), mode=mode, padding_idx=2)
    yield SampleInput(_idx([[0, 1, 1], [3, 3, 5]]), make((6, 2), layout="T"), mode="mean")   # 2-D: fixed bags
    yield SampleInput(idx, make((6, 3)), _idx([0, 2, 5, 7]), mode="sum", include_last_offset=True,
                      per_sample_weights=make((7,)))
    # (scale_grad_by_freq scales the gradient on purpose: not the derivative, finite differences disagree)
    yield SampleInput(idx, make((6, 3)), _idx([0, 4]), mode="mean", scale_grad_by_freq=True, nondiff=True)


register(
    OpInfo("block_diag", samples=_block_diag_samples, dtypes=ALL_NUM),
    OpInfo("cartesian_prod", samples=_cartesian_prod_samples, dtypes=ALL_NUM),
    OpInfo("addmv", samples=_addmv_samples, dtypes=ALL_NUM),
    OpInfo("Tensor.addmv_", _addmv_inplace, samples=_addmv_samples),
    # (torch's double backward of embedding_bag raises "not implemented": so does glasstorch's)
    OpInfo("nn.functional.embedding_bag", lambda lib, *a, **k: lib.nn.functional.embedding_bag(*a, **k),
           samples=_embedding_bag_samples, gradgrad=False),
)


# ---- breadth: the element-wise ops of ops/pointwise_extra.py, stft/istft (ops/spectral.py) -------------------
def _int_pair_samples(make, dtype):
    yield SampleInput(make((3, 4), low=-30, high=30), make((4,), low=-30, high=30))
    yield SampleInput(make((5,), values=[0, 0, 12, -18, 7]), make((5,), values=[0, 5, 18, 12, -21]))
    yield SampleInput(make((3,), low=1, high=9), 6)
    yield SampleInput(make((3,), dtype="float64"), make((3,), dtype="float64"))   # an error: integers only


def _ldexp_samples(make, dtype):
    # an integer exponent below 0: torch's formula takes pow(2, other) in integers, 0 there (not the
    # derivative 2^other that finite differences see); glasstorch gives torch's
    yield SampleInput(make((3, 4)), Leaf(np.array([[-2, 0, 1, 3]]), "contig", False), nondiff=True)
    yield SampleInput(make((3, 4)), Leaf(np.array([[2, 0, 1, 3]]), "contig", False))
    yield SampleInput(make((4, 3), layout="T"), make((3,), low=-2, high=2))
    yield SampleInput(make(()), make((2,), low=-2, high=2))


def _parts_samples(make, dtype):
    yield SampleInput(make((3, 4), low=0.2, high=2), make((3, 4)))
    yield SampleInput(make((2, 1), low=0.2, high=2), make((3,)))
    yield SampleInput(make((4, 3), layout="T", low=0.2, high=2), make((4, 3), layout="slice"))
    yield SampleInput(make((2,)), make((2,), dtype="float32" if dtype == "float64" else "float64"))   # an error


def _angle_samples(make, dtype):
    yield from unary_samples(shapes=_COMPLEX_SHAPES)(make, dtype)
    if np.dtype(dtype).kind == "c":
        yield SampleInput(make((3,), values=[0j, 1 + 0j, -1j]), nondiff=True)      # |z| = 0: gradient 0
    elif np.dtype(dtype).kind == "f":
        yield SampleInput(make((5,), values=[-1.0, 0.0, -0.0, np.nan, 2.0]), nondiff=True)


def _heaviside_samples(make, dtype):
    yield SampleInput(make((5,), values=[-1.5, 0.0, 2.0, 0.0, -0.0]), make((5,)))
    yield SampleInput(make((2, 3)), make((3,)))
    yield SampleInput(make((2,)), make((2,), dtype="float32" if dtype == "float64" else "float64"))  # an error


def _stft_samples(make, dtype):
    yield SampleInput(make((2, 40)), 8, 2, window=make((8,)), return_complex=True)
    yield SampleInput(make((33,)), 8, window=make((6,)), win_length=6, center=False, return_complex=True)
    yield SampleInput(make((2, 40)), 8, 4, normalized=True, onesided=False, pad_mode="constant",
                      return_complex=True)
    yield SampleInput(make((2, 40)), 8)                                  # an error: return_complex is required


def _istft(lib, spec, window, n_fft, **kwargs):
    return lib.istft(lib.view_as_complex(spec), n_fft, window=window, **kwargs)


def _istft_samples(make, dtype):
    yield SampleInput(make((2, 5, 11, 2)), make((8,), low=0.5, high=1.5), 8, hop_length=2)
    yield SampleInput(make((5, 9, 2)), make((8,), low=0.5, high=1.5), 8, hop_length=4, length=30)
    yield SampleInput(make((8, 9, 2)), make((6,), low=0.5, high=1.5), 8, hop_length=2, win_length=6,
                      onesided=False, center=False)


register(
    OpInfo("divide", samples=binary_samples(exclude_zero=True), dtypes=FLOATS),
    OpInfo("multiply", samples=binary_samples(), dtypes=ALL_NUM),
    OpInfo("subtract", samples=binary_samples(), dtypes=FLOATS),
    OpInfo("true_divide", samples=binary_samples(exclude_zero=True), dtypes=ALL_NUM),
    OpInfo("arcsinh", samples=unary_samples()),
    OpInfo("arccosh", samples=unary_samples(low=1.1, high=3)),
    OpInfo("arctanh", samples=unary_samples(low=-0.9, high=0.9)),
    OpInfo("positive", samples=unary_samples(), dtypes=ALL_NUM + ("bool",)),
    OpInfo("deg2rad", samples=unary_samples(), dtypes=ALL_NUM),
    OpInfo("rad2deg", samples=unary_samples(), dtypes=ALL_NUM),
    OpInfo("angle", samples=_angle_samples, dtypes=COMPLEX + FLOATS + INTS),
    OpInfo("polar", samples=_parts_samples),
    OpInfo("complex", samples=_parts_samples),
    OpInfo("ldexp", samples=_ldexp_samples),
    OpInfo("frexp", samples=unary_samples(), dtypes=FLOATS + INTS),
    OpInfo("heaviside", samples=_heaviside_samples, gradcheck=False),
    OpInfo("nextafter", samples=_heaviside_samples, grad=False),
    OpInfo("gcd", samples=_int_pair_samples, dtypes=INTS),
    OpInfo("lcm", samples=_int_pair_samples, dtypes=INTS),
    OpInfo("stft", samples=_stft_samples),
    OpInfo("sgn.complex", lambda lib, x: lib.sgn(x), samples=unary_samples(shapes=_COMPLEX_SHAPES), dtypes=COMPLEX),
    OpInfo("istft", _istft, samples=_istft_samples),
)


# ---- breadth: ops/shape_extra.py and ops/statistics.py (torch's composites, built from the same ops) ----------
def _directional_split_samples(min_dims):
    def gen(make, dtype):
        shape = (4, 6, 2)[:max(min_dims, 2)] if min_dims < 3 else (2, 3, 4)
        yield SampleInput(make(shape), 2)
        yield SampleInput(make(shape), [1, 3])
        if min_dims == 1:
            yield SampleInput(make((6,)), 3)
        yield SampleInput(make(shape), 5)                          # errors: not divisible, too few dims
        yield SampleInput(make((4,) * (min_dims - 1) if min_dims > 1 else ()), 2)
    return gen


def _cov_samples(make, dtype):
    yield SampleInput(make((3, 6)))
    yield SampleInput(make((7,)))
    yield SampleInput(make((6, 3), layout="T"), correction=0)
    yield SampleInput(make((2, 5)), fweights=Leaf(np.array([1, 2, 0, 3, 1]), "contig", False),
                      aweights=make((5,), low=0.1, high=1.0, requires_grad=False))
    yield SampleInput(make((2, 5)), correction=2, aweights=make((5,), low=0.1, high=1.0))
    yield SampleInput(make((2, 2, 2)))                             # errors
    yield SampleInput(make((2, 3)), fweights=make((3,)))


def _trapezoid_samples(make, dtype):
    yield SampleInput(make((3, 5)))
    yield SampleInput(make((3, 5)), dx=0.5, dim=0)
    yield SampleInput(make((3, 5)), make((5,)))
    yield SampleInput(make((3, 5)), make((3, 5)), dim=1)
    yield SampleInput(make((4, 3), layout="T"), 2.0)
    yield SampleInput(make((3, 0)), nondiff=True)     # no samples: torch's zeros, which need no grad
    yield SampleInput(make((3, 5)), make((4,)))                   # an error: one x per sample


register(
    OpInfo("hsplit", samples=_directional_split_samples(1), dtypes=ALL_NUM),
    OpInfo("vsplit", samples=_directional_split_samples(2), dtypes=ALL_NUM),
    OpInfo("dsplit", samples=_directional_split_samples(3), dtypes=ALL_NUM),
    OpInfo("split_with_sizes", samples=lambda make, dt: [
        SampleInput(make((5, 3)), [2, 3]), SampleInput(make((3, 5)), [1, 0, 4], 1),
        SampleInput(make((5,)), [1, 2])], dtypes=ALL_NUM),
    OpInfo("msort", samples=lambda make, dt: [SampleInput(make.distinct((4, 3))), SampleInput(make.distinct((5,)))],
           dtypes=ALL_NUM),
    OpInfo("diagflat", samples=lambda make, dt: [SampleInput(make((2, 3))), SampleInput(make((4,)), 1),
                                                 SampleInput(make((3, 2), layout="T"), -2)], dtypes=ALL_NUM),
    OpInfo("vander", samples=lambda make, dt: [SampleInput(make((4,))), SampleInput(make((3,)), 5),
                                               SampleInput(make((3,)), N=2, increasing=True),
                                               SampleInput(make((3,)), 0), SampleInput(make((2, 2)))],
           dtypes=ALL_NUM, gradcheck=False),   # (torch's own backward of vander fails -- its cumprod's saved
    #                                            result is overwritten by the copy_ -- and glasstorch's as torch's)
    OpInfo("combinations", samples=lambda make, dt: [
        SampleInput(make((4,))), SampleInput(make((4,)), 3), SampleInput(make((3,)), with_replacement=True),
        SampleInput(make((3,)), 0), SampleInput(make((2,)), 3), SampleInput(make((2, 2)))], dtypes=ALL_NUM),
    OpInfo("cov", samples=_cov_samples),
    OpInfo("corrcoef", samples=lambda make, dt: [SampleInput(make((3, 6))), SampleInput(make((6,))),
                                                 SampleInput(make((4, 3), layout="T"))]),
    OpInfo("trapezoid", samples=_trapezoid_samples),
    OpInfo("trapz", lambda lib, *a, **k: lib.trapz(*a, **k), samples=_trapezoid_samples),
    OpInfo("cumulative_trapezoid", samples=_trapezoid_samples),
    OpInfo("logdet", samples=lambda make, dt: [
        SampleInput(make((3, 3), values=np.array([[2., 1, 0], [1, 3, 1], [0, 1, 4]]))),
        SampleInput(make((2, 2), values=np.array([[0., 1], [1, 0]]))),       # negative determinant: nan
        SampleInput(make((2, 3)))], gradgrad=False),
)


register(
    OpInfo("linalg.vander", lambda lib, *a, **k: lib.linalg.vander(*a, **k), dtypes=ALL_NUM,
           samples=lambda make, dt: [SampleInput(make((4,))), SampleInput(make((2, 3)), N=4),
                                     SampleInput(make(()), N=3), SampleInput(make((3,)), N=1)]),
    OpInfo("linalg.vecdot", lambda lib, *a, **k: lib.linalg.vecdot(*a, **k), dtypes=ALL_NUM,
           samples=lambda make, dt: [SampleInput(make((3, 4)), make((4,))), SampleInput(make((2, 3)), make((2, 3)), dim=0),
                                     SampleInput(make((4, 3), layout="T"), make((4, 3)))]),
    OpInfo("linalg.diagonal", lambda lib, *a, **k: lib.linalg.diagonal(*a, **k), dtypes=ALL_NUM,
           samples=lambda make, dt: [SampleInput(make((2, 3, 4))), SampleInput(make((3, 3)), offset=1),
                                     SampleInput(make((2, 3, 4)), dim1=0, dim2=2)]),
    OpInfo("linalg.matmul", lambda lib, *a: lib.linalg.matmul(*a),
           samples=lambda make, dt: [SampleInput(make((2, 3)), make((3,))), SampleInput(make((2, 2, 3)), make((3, 4)))]),
)


# ---- addbmm, addr and their in-place forms (ops/linalg.py) -------------------------------------------------------
def _addbmm_samples(make, dtype):
    yield SampleInput(make((2, 3)), make((4, 2, 5)), make((4, 5, 3)))
    yield SampleInput(make((3,)), make((2, 2, 4)), make((2, 4, 3), layout="T"), beta=0.5, alpha=2)   # the input broadcast
    yield SampleInput(make((2, 3)), make((2, 2, 4)), make((2, 4, 3)), beta=0)


def _addr_samples(make, dtype):
    yield SampleInput(make((2, 3)), make((2,)), make((3,)))
    yield SampleInput(make((1, 3)), make((2,)), make((3,), layout="slice"), beta=-1, alpha=2)      # the input broadcast
    yield SampleInput(make(()), make((4,)), make((2,)), alpha=0)
    yield SampleInput(make((2, 3)), make((2,)), make((3,)), beta=0)


def _inplace_samples(samples):
    """The samples of an in-place form: those whose input has the result's shape."""
    def inplace_samples(make, dtype):
        return [s for s in samples(make, dtype) if s.args[0].array.ndim == 2 and s.args[0].array.shape[0] != 1]
    return inplace_samples


register(
    OpInfo("addbmm", samples=_addbmm_samples),
    OpInfo("Tensor.addbmm_", lambda lib, input, b1, b2, **kwargs: input.clone().addbmm_(b1, b2, **kwargs),
           samples=_inplace_samples(_addbmm_samples)),
    OpInfo("addr", samples=_addr_samples, dtypes=ALL_NUM),
    OpInfo("Tensor.addr_", lambda lib, input, v1, v2, **kwargs: input.clone().addr_(v1, v2, **kwargs),
           samples=_inplace_samples(_addr_samples)),
)


# ---- a factory given out= (ops/creation.py: aten.zeros.out...): the values written into out, resized, in its
# dtype and on its device (out is a copy of the sample, without history: out= refuses inputs that require grad)
def _out_samples(make, dtype):
    yield SampleInput(make((0,)))
    yield SampleInput(make((2, 2)))
    yield SampleInput(make((2, 3)))


def _factory_out(factory):
    return lambda lib, out: factory(lib, out.detach().clone())


register(
    OpInfo("zeros.out", _factory_out(lambda lib, o: lib.zeros(2, 3, out=o)), samples=_out_samples, dtypes=ALL_NUM,
           grad=False),
    OpInfo("full.out", _factory_out(lambda lib, o: lib.full((3,), 2, out=o)), samples=_out_samples, dtypes=ALL_NUM,
           grad=False),
    OpInfo("eye.m_out", _factory_out(lambda lib, o: lib.eye(3, 2, out=o)), samples=_out_samples, dtypes=ALL_NUM,
           grad=False),
    OpInfo("arange.start_out", _factory_out(lambda lib, o: lib.arange(1, 9, 2, out=o)), samples=_out_samples,
           dtypes=ALL_NUM, grad=False),
    OpInfo("linspace.out", _factory_out(lambda lib, o: lib.linspace(-1, 1, 5, out=o)), samples=_out_samples,
           dtypes=FLOATS, grad=False),
    OpInfo("logspace.out", _factory_out(lambda lib, o: lib.logspace(0, 1, 4, out=o)), samples=_out_samples,
           dtypes=FLOATS, grad=False),
)


# ---- as_strided and as_strided_ (ops/shape.py): any geometry over the input's storage -------------------------
def _as_strided_samples(make, dtype):
    yield SampleInput(make((3, 4)), (2, 2), (1, 2), 1)
    yield SampleInput(make((3, 4)), (3, 3), (1, 1), desc="overlapping output")
    yield SampleInput(make((3, 4)), (2, 3), (0, 1), 2, desc="a stride of 0")
    yield SampleInput(make((3, 4), layout="T"), (2, 2), (3, 1), desc="of a transposed view")
    yield SampleInput(make((2, 3), layout="slice"), (2, 2), (3, 2), 1, desc="reaching elements the input skips")
    yield SampleInput(make((2, 3)), (0, 2), (1, 1), 3, desc="empty")
    yield SampleInput(make((4,)), (), (), 2, desc="0-d")


def _overlapping_input_samples(make, dtype):
    yield SampleInput(make((4,)), (2, 2), (1, 1), 1)
    yield SampleInput(make((4,)), (3,), (1,), 0)


register(
    OpInfo("as_strided", samples=_as_strided_samples, dtypes=ALL_NUM),
    OpInfo("as_strided.method", _m("as_strided"), samples=_as_strided_samples),
    OpInfo("as_strided.overlapping_input",      # (the input's own elements overlap: their gradient is shared)
           lambda lib, x, *a: x.expand(3, 4).as_strided(*a), samples=_overlapping_input_samples),
    OpInfo("Tensor.as_strided_", lambda lib, x, *a: x.clone().as_strided_(*a), samples=_as_strided_samples),
)


# ---- index_reduce (ops/scatter_reduce.py): one index per slice of source ---------------------------------------
def _index_reduce_samples(make, dtype):
    floats = np.dtype(dtype).kind == "f"
    for reduce in ("prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            yield SampleInput(make((3, 5)), 1, Leaf(np.array([4, 0, 4, 1]), "contig", False), make((3, 4)), reduce,
                              include_self=include_self)
            yield SampleInput(make((4, 3), layout="T"), 0, Leaf(np.array([2, 2, 0]), "contig", False),
                              make((3, 3), layout="slice"), reduce, include_self=include_self)
            yield SampleInput(make(()), 0, Leaf(np.array([0]), "contig", False), make(()), reduce,
                              include_self=include_self)
        if floats:   # ties (amax/amin share the gradient) and zeros (prod's special cases)
            yield SampleInput(make((2, 3), values=[[1., 0., 3.], [2., 2., 0.]]), 1,
                              Leaf(np.array([0, 1, 0, 2]), "contig", False),
                              make((2, 4), values=[[1., 0., 2., 3.], [0., 0., 2., 0.]]), reduce, nondiff=True)
    x = make((3, 4))
    yield SampleInput(x, 1, Leaf(np.array([0, 1]), "contig", False), make((3, 2)), "sum")              # errors
    yield SampleInput(x, 1, Leaf(np.array([[0, 1]]), "contig", False), make((3, 2)), "prod")
    yield SampleInput(x, 1, make((2,)), make((3, 2)), "prod")
    yield SampleInput(x, 1, Leaf(np.array([0, 1]), "contig", False),
                      make((3, 2), dtype="float64" if dtype != "float64" else "float32"), "prod")
    yield SampleInput(x, 1, Leaf(np.array([0, 1, 2]), "contig", False), make((3, 2)), "prod")
    yield SampleInput(x, 1, Leaf(np.array([0, 1]), "contig", False), make((2, 2)), "prod")
    yield SampleInput(x, 1, Leaf(np.array([0, 4]), "contig", False), make((3, 2)), "prod")
    yield SampleInput(x, 1, Leaf(np.array([-1, 0]), "contig", False), make((3, 2)), "prod")
    yield SampleInput(x, 2, Leaf(np.array([0, 1]), "contig", False), make((3, 2)), "prod")


register(
    OpInfo("index_reduce", samples=_index_reduce_samples, dtypes=ALL_NUM, gradgrad=False),
    OpInfo("index_reduce.method", _m("index_reduce"), samples=_index_reduce_samples, gradgrad=False),
    OpInfo("Tensor.index_reduce_", lambda lib, x, *a, **k: x.clone().index_reduce_(*a, **k),
           samples=_index_reduce_samples, gradgrad=False),
)
