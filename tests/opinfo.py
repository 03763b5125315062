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

    def build(self, lib):
        a = self.array
        if self.layout == "T":
            t = lib.from_numpy(np.ascontiguousarray(a.swapaxes(-1, -2))).transpose(-1, -2)
        elif self.layout == "slice":
            base = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
            base[..., ::2] = a
            t = lib.from_numpy(base)[..., ::2]
        else:
            t = lib.from_numpy(a.copy())
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

    def build(self, lib, tensors=None):
        """(args, kwargs, leaf tensors) for ``lib``; ``tensors`` replaces the leaves, in order."""
        made = {}
        supplied = iter(tensors) if tensors is not None else None

        def mk(leaf):
            if id(leaf) not in made:
                made[id(leaf)] = next(supplied) if supplied is not None else leaf.build(lib)
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
        else:
            raise TypeError(dtype)
        a = np.asarray(a)
        rg = self.requires_grad if requires_grad is None else requires_grad
        rg = rg and dtype.kind == "f"
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
            requires_grad = np.dtype(dtype).kind == "f"
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


def get(name):
    for op in op_db:
        if op.name == name:
            return op
    raise KeyError(name)


# ---- beyond the list: ops the nn and optim code relies on ----------------------------------
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
    OpInfo("square", samples=unary_samples(), dtypes=ALL_NUM + ("bool",)),
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
