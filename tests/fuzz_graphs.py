"""Random expression graphs run side by side in glasstorch and torch: the differential fuzzer.

A *program* is a short list of steps over a pool of tensors: a few leaves (some requiring grad,
some zero-filled buffers to write into), then ops chosen at random from the catalogue below --
element-wise and reduction ops with broadcasting (reductions over one or several dims, norms,
activations, losses), products of two pool tensors (matmul's dot/mv/mm/bmm/broadcast paths,
linear, outer), cat/stack, gathers and scatters, views (slicing, select, transpose, view,
expand, diagonal, unfold, unbind/split/tensor_split), advanced indexing, in-place ops on
intermediates, on views and on leaves under no_grad, chained indexing writes (``x[i][j] = y``)
and chained in-place ops (``x.abs_().add_(0.5)``), retain_grad, detach -- and
a final phase that backpropagates from a random weighting of some results: ``backward()``, or
``autograd.grad`` with optional double backward.

``generate(seed)`` picks the steps by running them in torch as it goes (so every step is legal
for the shapes at hand, values stay finite, and sort-like ops see no ties); ``run(lib,
program)`` replays a program in ``torch`` or ``glasstorch`` and records a *trace*: after every
step, the value and metadata of what it made or modified (shape, dtype, requires_grad, is_leaf,
grad_fn name, ``_version``, ``is_contiguous``, whether it is a view) or the error it raised;
then every live tensor again, the node names of the loss's graph, and the gradients.
``compare(torch_trace, glasstorch_trace)`` lists the differences, each of one kind:

* ``value``  -- a forward value, shape or dtype differs;
* ``grad``   -- a gradient differs (or is None on one side only);
* ``crash``  -- glasstorch raised where torch did not;
* ``error``  -- torch raised and glasstorch did not, or raised another error;
* ``meta``   -- requires_grad, is_leaf, grad_fn name, ``_version``, ``is_contiguous``, is-view,
  or the graph's node names differ.

A program that computes in float32 is compared to float32 precision; a value or gradient that still
differs counts only if glasstorch's is clearly further than torch's from the truth -- the program run
again in float64 under torch (``Runner(promote=True)``, ``_rounding``): an ill-conditioned float32
program differs by its rounding alone.

Every op is one line of Python (a template over ``x``, ``y`` and the parameters ``p``), run by
``exec`` with ``torch`` bound to the library under test, so ``render(program)`` prints a failing
program as a torch script to paste and debug. ``tests/test_fuzz_graphs.py`` runs a fixed slice in
CI; ``tools/fuzz_graphs.py --minutes 10`` runs it for as long as asked and counts.
"""
import math
import random
import re
import warnings
from collections import Counter
from itertools import accumulate

import numpy as np

# ---------------------------------------------------------------------------------------------
# The catalogue. kind: "new" (``out`` is a new tensor), "multi" (``out`` is a tuple of them),
# "inplace" (modifies ``x``), "meta" (changes autograd state of ``x``). arity: how many pool
# tensors it reads (x, y). choose(rng, xs) returns the parameters, or None when the op does not
# apply to these inputs; it reads the torch tensors of the generating run.
# ---------------------------------------------------------------------------------------------
OPS = {}


class Op:
    def __init__(self, name, kind, arity, code, choose, weight, needs):
        self.name, self.kind, self.arity, self.source = name, kind, arity, code
        self.code = compile(code, f"<fuzz op {name}>", "exec")
        self.choose, self.weight, self.needs = choose, weight, needs


def op(name, code, kind="new", arity=1, weight=1.0, needs=None):
    """Register an op: ``code`` is one statement over x, y, p (and ``torch``); the decorated
    function chooses its parameters. ``needs``: "bcast" (y broadcasts with x), "into" (y
    broadcasts to x's shape), "same" (y has x's shape)."""
    def deco(choose):
        OPS[name] = Op(name, kind, arity, code, choose, weight, needs)
        return choose
    return deco


def _always(rng, xs):
    return ()


def _dim(rng, x):
    return rng.randrange(x.dim()) if x.dim() else None


def _bounded(x, limit=8.0):
    return bool(x.detach().abs().max() < limit) if x.numel() else True


def _no_ties(x, d):
    """Sort-like ops route gradients by position; with ties torch's choice is unspecified."""
    if x.numel() == 0:
        return True
    s = x.detach().sort(d).values
    return not bool((s.diff(dim=d) == 0).any()) if s.shape[d] > 1 else True


def _off_integers(rng, xs):
    """floor and frac jump at the integers: x must not come within 1e-5 (relative) of one, 0 aside
    (zero buffers and zero_ give exact zeros). Near an integer a last-bit difference upstream becomes
    a difference of 1: torch's CPU sqrt (MKL's) is not correctly rounded -- one float64 result in
    80 is an ulp from NumPy's, which is -- and frac(1 + 2e-16) is 2e-16 where frac(1 - 2e-16) is
    1 (seed 796164192940)."""
    x = xs[0].detach()
    if x.numel() == 0 or not x.is_floating_point():
        return ()
    near = (x - x.round()).abs() <= 1e-5 * x.abs().clamp(min=1)
    return None if bool((near & (x != 0)).any()) else ()


def _off_zero(rng, xs):
    """atan2 and sign jump at 0 (atan2(0, y) is pi for y < 0, 0 for y > 0): no input may come within
    1e-5 of 0 without being 0. A value that is 0 in truth and rounding noise in fact -- the sum of a
    layer_norm's outputs, 2e-16 in one library and -2e-16 in the other -- would otherwise turn the
    libraries' last bits into a difference of pi (seed 796179586231)."""
    for x in xs:
        x = x.detach()
        if x.numel() and x.is_floating_point() and bool(((x.abs() <= 1e-5) & (x != 0)).any()):
            return None
    return ()


def _atan2_inputs(rng, xs):
    """``_off_zero``, and no exact 0 in ``x`` where ``y`` is <= 0: there ``atan2(x, y)`` is +-pi (or +-0)
    by the sign of that zero alone, and torch's own sign of a zero is not defined by its inputs --
    ``minimum(-0., 0.)`` gives its first operand in torch's scalar loop and its second in the 16-wide
    vector loop, a product's -0 summed into a GEMM's +0 accumulator comes out +0 (seeds 796184069864,
    796184098978). A zero where ``y`` > 0 is kept: atan2 gives that zero back."""
    if _off_zero(rng, xs) is None:
        return None
    x, y = (t.detach() for t in xs[:2])
    if x.is_floating_point() and y.is_floating_point() and x.numel() and y.numel():
        try:
            if bool(((x == 0) & (y <= 0)).any()):
                return None
        except RuntimeError:    # (shapes that do not broadcast: the op's own error decides)
            pass
    return ()


def _spread(x, d):
    """Whether the values along ``d`` differ (in every slice)."""
    x = x.detach()
    return x.numel() == 0 or bool(((x.amax(d) - x.amin(d)) > 1e-3).all())


def _register_unary():
    simple = {
        "neg": "out = -x", "sin": "out = x.sin()", "cos": "out = torch.cos(x)", "tanh": "out = x.tanh()",
        "sigmoid": "out = torch.sigmoid(x)", "relu": "out = torch.relu(x)", "abs": "out = x.abs()",
        "square": "out = x * x", "sqrt1p": "out = (x * x + 1).sqrt()", "log1p_abs": "out = x.abs().log1p()",
        "leaky_relu": "out = torch.nn.functional.leaky_relu(x, 0.1)",
        "hardtanh": "out = torch.nn.functional.hardtanh(x, -0.5, 0.5)",
        "softplus": "out = torch.nn.functional.softplus(x)", "gelu": "out = torch.nn.functional.gelu(x)",
        "silu": "out = torch.nn.functional.silu(x)", "elu": "out = torch.nn.functional.elu(x)",
        "clone": "out = x.clone()", "contiguous": "out = x.contiguous()", "detach": "out = x.detach()",
        "sum_all": "out = x.sum()", "mean_all": "out = x.mean()", "max_all": "out = x.max()",
        "min_all": "out = x.min()", "norm_all": "out = x.norm()", "float32": "out = x.float()",
        "float64": "out = x.double()", "sign_mul": "out = x * x.sign()", "rsub": "out = 1.5 - x",
    }
    for name, code in simple.items():
        op(name, code, weight=0.5)(_always)

    @op("exp", "out = x.exp()", weight=0.5)
    def _(rng, xs):
        return () if _bounded(xs[0], 6) else None

    @op("pow", "out = (x.abs() + 0.5) ** p", weight=0.5)
    def _(rng, xs):
        return rng.choice([0.5, 1.5, 2, 3])

    @op("scale", "out = x * p[0] + p[1]", weight=0.5)
    def _(rng, xs):
        return (rng.choice([2.0, -0.5, 3]), rng.choice([0, 1.0, -2]))

    @op("clamp", "out = x.clamp(p[0], p[1])", weight=0.5)
    def _(rng, xs):
        return rng.choice([(-0.5, 0.5), (None, 0.3), (-0.2, None)])

    for name in ("sum", "mean", "amax", "amin", "logsumexp", "var", "std", "norm", "prod", "max", "min"):
        code = {"max": "out = x.max(p[0], keepdim=p[1]).values", "min": "out = x.min(p[0], keepdim=p[1]).values",
                "var": "out = x.var(p[0], keepdim=p[1])", "std": "out = x.std(p[0], keepdim=p[1])",
                "norm": "out = x.norm(dim=p[0], keepdim=p[1])"}.get(name, f"out = x.{name}(p[0], keepdim=p[1])")

        @op(name + "_dim", code, weight=0.4)
        def _(rng, xs, name=name):
            x = xs[0]
            d = _dim(rng, x)
            if d is None or (name in ("max", "min") and not _no_ties(x, d)):
                return None
            if name in ("var", "std") and (x.shape[d] < 2 or not _spread(x, d)):
                return None  # (the derivative of the spread of equal values is 0/0: rounding noise)
            if name == "norm" and x.numel() and not bool((x.detach().abs().amax(d) > 1e-3).all()):
                return None
            return (d, rng.random() < 0.5)

    for name in ("softmax", "log_softmax", "cumsum", "cumprod"):
        @op(name, f"out = x.{name}(p)", weight=0.4)
        def _(rng, xs):
            return _dim(rng, xs[0])

    @op("sort", "out = x.sort(p[0], descending=p[1]).values", weight=0.3)
    def _(rng, xs):
        d = _dim(rng, xs[0])
        return None if d is None or not _no_ties(xs[0], d) else (d, rng.random() < 0.5)

    @op("topk", "out = x.topk(p[1], p[0]).values", weight=0.3)
    def _(rng, xs):
        d = _dim(rng, xs[0])
        if d is None or not _no_ties(xs[0], d) or xs[0].shape[d] == 0:
            return None
        return (d, rng.randint(1, xs[0].shape[d]))

    @op("cummax", "out = x.cummax(p).values", weight=0.3)
    def _(rng, xs):
        d = _dim(rng, xs[0])
        return None if d is None or not _no_ties(xs[0], d) else d

    @op("einsum", "out = torch.einsum('...,...->...', x, x)", weight=0.2)
    def _(rng, xs):
        return ()

    @op("index_reversed", "out = x[..., torch.arange(x.shape[-1] - 1, -1, -1)]", weight=0.2)
    def _(rng, xs):
        return None if xs[0].dim() == 0 else ()

    @op("matmul_self", "out = x @ x.mT", weight=0.4)
    def _(rng, xs):
        return () if xs[0].dim() >= 2 else None

    @op("matmul_const", "out = x @ p", weight=0.4)
    def _(rng, xs):
        x = xs[0]
        if x.dim() == 0:
            return None
        return _consts(rng, (x.shape[-1], rng.randint(1, 4)), str(x.dtype))

    @op("flip", "out = x.flip(p)", weight=0.3)
    def _(rng, xs):
        return None if xs[0].dim() == 0 else (_dim(rng, xs[0]),)

    @op("roll", "out = x.roll(1, p)", weight=0.3)
    def _(rng, xs):
        return _dim(rng, xs[0])

    @op("cat_self", "out = torch.cat([x, x * 2], p)", weight=0.3)
    def _(rng, xs):
        return _dim(rng, xs[0])

    @op("masked_fill", "out = x.masked_fill(x > p, 0.5)", weight=0.3)
    def _(rng, xs):
        return rng.choice([0.0, 0.5, -0.5])

    @op("index_adv", "out = x[p]", weight=0.4)
    def _(rng, xs):
        x = xs[0]
        if x.dim() == 0 or x.shape[0] == 0:
            return None
        return np.array([rng.randrange(x.shape[0]) for _ in range(rng.randint(1, 4))], dtype=np.int64)

    @op("index_adv_dim1", "out = x[:, p]", weight=0.3)
    def _(rng, xs):
        x = xs[0]
        if x.dim() < 2 or x.shape[1] == 0:
            return None
        return np.array([rng.randrange(x.shape[1]) for _ in range(rng.randint(1, 3))], dtype=np.int64)

    @op("index_mask", "out = x[x > p]", weight=0.3)
    def _(rng, xs):
        return rng.choice([0.0, 0.3, -0.3])

    @op("gather", "out = x.gather(p[0], p[1])", weight=0.3)
    def _(rng, xs):
        x = xs[0]
        d = _dim(rng, x)
        if d is None or x.shape[d] == 0:
            return None
        shape = tuple(x.shape)
        idx = np.array([rng.randrange(shape[d]) for _ in range(int(np.prod(shape)))], dtype=np.int64).reshape(shape)
        return (d, idx)


def _consts(rng, shape, dtype="torch.float64"):
    a = np.random.default_rng(rng.randrange(2 ** 31)).uniform(-1, 1, shape)
    return a.astype(np.float32 if dtype == "torch.float32" else np.float64)


def _register_binary():
    binary = {"add": "out = x + y", "sub": "out = x - y", "mul": "out = x * y", "div": "out = x / (y * y + 1)",
              "maximum": "out = torch.maximum(x, y)", "minimum": "out = torch.minimum(x, y)",
              "atan2": "out = torch.atan2(x, y)", "lerp": "out = torch.lerp(x, y, 0.3)",
              "where": "out = torch.where(x > y, x, y * 2)", "mul_sum": "out = x * y.sum()",
              "hypot_like": "out = (x * x + y * y + 1).sqrt()"}
    for name, code in binary.items():
        op(name, code, arity=2, weight=0.6, needs="bcast")(_atan2_inputs if name == "atan2" else _always)

    @op("cat2", "out = torch.cat([x, y], p)", arity=2, weight=0.3, needs="same")
    def _(rng, xs):
        return _dim(rng, xs[0])

    @op("stack2", "out = torch.stack([x, y], p)", arity=2, weight=0.3, needs="same")
    def _(rng, xs):
        return rng.randrange(xs[0].dim() + 1)


def _slice_params(rng, n):
    start = rng.choice([None, 0, rng.randrange(-n, n) if n else 0, 1])
    stop = rng.choice([None, n, rng.randrange(-n, n + 1) if n else 0, n + 2])
    step = rng.choice([None, 1, 1, 2])
    return (start, stop, step)


def _register_views():
    @op("select_int", "out = x[p]", weight=0.8)
    def _(rng, xs):
        x = xs[0]
        return None if x.dim() == 0 or x.shape[0] == 0 else rng.randrange(-x.shape[0], x.shape[0])

    @op("slice0", "out = x[p[0]:p[1]:p[2]]", weight=0.8)
    def _(rng, xs):
        return None if xs[0].dim() == 0 else _slice_params(rng, xs[0].shape[0])

    @op("slice1", "out = x[:, p[0]:p[1]:p[2]]", weight=0.5)
    def _(rng, xs):
        return None if xs[0].dim() < 2 else _slice_params(rng, xs[0].shape[1])

    @op("select_last", "out = x[..., p]", weight=0.5)
    def _(rng, xs):
        x = xs[0]
        return None if x.dim() == 0 or x.shape[-1] == 0 else rng.randrange(x.shape[-1])

    for name, code in {"none_index": "out = x[None]", "alias": "out = x[...]", "full_slice": "out = x[:]",
                       "full_slice2": "out = x[:, :]", "t": "out = x.t()", "mT": "out = x.mT",
                       "view_flat": "out = x.view(-1)", "flatten": "out = x.flatten()",
                       "squeeze_all": "out = x.squeeze()", "unsqueeze0": "out = x.unsqueeze(0)",
                       "diagonal": "out = x.diagonal()", "T": "out = x.T"}.items():
        @op(name, code, weight=0.4)
        def _(rng, xs, name=name):
            x = xs[0]
            if name in ("t",) and x.dim() > 2 or name in ("mT", "diagonal", "full_slice2") and x.dim() < 2:
                return None
            return ()

    @op("narrow", "out = x.narrow(p[0], p[1], p[2])", weight=0.4)
    def _(rng, xs):
        x = xs[0]
        d = _dim(rng, x)
        if d is None:
            return None
        n = x.shape[d]
        start = rng.randrange(n + 1)
        return (d, start, rng.randrange(n - start + 1))

    @op("select", "out = x.select(p[0], p[1])", weight=0.4)
    def _(rng, xs):
        x = xs[0]
        d = _dim(rng, x)
        return None if d is None or x.shape[d] == 0 else (d, rng.randrange(-x.shape[d], x.shape[d]))

    @op("transpose", "out = x.transpose(p[0], p[1])", weight=0.5)
    def _(rng, xs):
        x = xs[0]
        return None if x.dim() < 2 else tuple(rng.sample(range(x.dim()), 2))

    @op("permute", "out = x.permute(p)", weight=0.4)
    def _(rng, xs):
        x = xs[0]
        return None if x.dim() < 2 else tuple(rng.sample(range(x.dim()), x.dim()))

    @op("view", "out = x.view(p)", weight=0.6)
    def _(rng, xs):
        return _new_shape(rng, xs[0])

    @op("reshape", "out = x.reshape(p)", weight=0.5)
    def _(rng, xs):
        return _new_shape(rng, xs[0])

    @op("unsqueeze", "out = x.unsqueeze(p)", weight=0.4)
    def _(rng, xs):
        return rng.randrange(-xs[0].dim() - 1, xs[0].dim() + 1)

    @op("squeeze", "out = x.squeeze(p)", weight=0.3)
    def _(rng, xs):
        return _dim(rng, xs[0])

    @op("expand", "out = x.expand(p)", weight=0.5)
    def _(rng, xs):
        shape = list(xs[0].shape)
        shape = [rng.randint(2, 3) if s == 1 and rng.random() < 0.7 else s for s in shape]
        if rng.random() < 0.5 or shape == list(xs[0].shape):
            shape = [rng.randint(1, 3)] + shape
        return tuple(shape)

    @op("diagonal_off", "out = x.diagonal(p[0], p[1], p[2])", weight=0.3)
    def _(rng, xs):
        x = xs[0]
        if x.dim() < 2:
            return None
        d1, d2 = rng.sample(range(x.dim()), 2)
        return (rng.randint(-1, 1), d1, d2)

    @op("movedim", "out = x.movedim(p[0], p[1])", weight=0.2)
    def _(rng, xs):
        x = xs[0]
        return None if x.dim() < 2 else (rng.randrange(x.dim()), rng.randrange(x.dim()))

    @op("unbind", "out = x.unbind(p)", kind="multi", weight=0.4)
    def _(rng, xs):
        x = xs[0]
        d = _dim(rng, x)
        return None if d is None or not 0 < x.shape[d] <= 4 else d

    @op("split", "out = x.split(p[0], p[1])", kind="multi", weight=0.4)
    def _(rng, xs):
        x = xs[0]
        d = _dim(rng, x)
        return None if d is None or x.shape[d] == 0 else (rng.randint(1, max(1, x.shape[d] - 1)), d)

    @op("chunk", "out = x.chunk(p[0], p[1])", kind="multi", weight=0.2)
    def _(rng, xs):
        x = xs[0]
        d = _dim(rng, x)
        return None if d is None else (rng.randint(1, 3), d)


def _new_shape(rng, x):
    """A shape with x's number of elements: a split or merge of dims, sometimes with -1."""
    shape = list(x.shape)
    choice = rng.random()
    if len(shape) >= 2 and choice < 0.4:
        i = rng.randrange(len(shape) - 1)
        shape[i:i + 2] = [shape[i] * shape[i + 1]]
    elif choice < 0.7:
        n = int(np.prod(shape)) if shape else 1
        divisors = [k for k in range(1, n + 1) if n % k == 0] or [0]
        k = rng.choice(divisors)
        shape = [k, n // k if k else rng.randint(0, 2)]
    else:
        shape = shape + [1]
    if shape and rng.random() < 0.3:
        shape[rng.randrange(len(shape))] = -1
    return tuple(shape)


def _register_inplace():
    scalar = {"mul_s": "x.mul_(p)", "add_s": "x.add_(p)", "div_s": "x.div_(p)", "imul_s": "x *= p"}
    for name, code in scalar.items():
        @op(name, code, kind="inplace", weight=0.4)
        def _(rng, xs):
            return rng.choice([2.0, -0.5, 1.5])

    unary = {"exp_": "x.exp_()", "tanh_": "x.tanh_()", "sigmoid_": "x.sigmoid_()", "relu_": "x.relu_()",
             "neg_": "x.neg_()", "sin_": "x.sin_()", "abs_": "x.abs_()", "zero_": "x.zero_()",
             "square_": "x.square_()", "clamp_": "x.clamp_(-0.5, 0.5)", "pow_": "x.pow_(2)",
             "relu_inplace_fn": "torch.nn.functional.relu(x, inplace=True)",
             "masked_fill_": "x.masked_fill_(x > 0.2, 0.0)", "fill_s": "x.fill_(1.25)",
             "detach_": "x.detach_()", "retain_grad": "x.retain_grad()",
             "requires_grad_": "x.requires_grad_()"}
    for name, code in unary.items():
        kind = "meta" if name in ("detach_", "retain_grad", "requires_grad_") else "inplace"

        @op(name, code, kind=kind, weight=0.25 if kind == "meta" else 0.35)
        def _(rng, xs, name=name):
            x = xs[0]
            if name in ("exp_", "square_", "pow_") and not _bounded(x, 6):
                return None
            if name == "requires_grad_" and (x._base is not None or x.grad_fn is not None or x.dtype not in _FLOATS):
                return None
            return ()

    with_y = {"mul_t": "x.mul_(y)", "add_t": "x.add_(y, alpha=0.5)", "iadd_t": "x += y", "sub_t": "x.sub_(y)",
              "div_t": "x.div_(y * y + 1)", "copy_": "x.copy_(y)", "addcmul_": "x.addcmul_(y, y, value=0.5)",
              "lerp_": "x.lerp_(y, 0.5)", "fill_t": "x.fill_(y.sum())",
              "set_full": "x[:] = y", "set_ellipsis_all": "x[...] = y"}
    for name, code in with_y.items():
        @op(name, code, kind="inplace", arity=2, weight=0.4, needs=None if name == "fill_t" else "into")
        def _(rng, xs, name=name):
            if name in ("mul_t", "addcmul_") and not _bounded(xs[1], 6):
                return None
            return ()

    @op("unsqueeze_", "x.unsqueeze_(p)", kind="inplace", weight=0.15)
    def _(rng, xs):
        return rng.randrange(-xs[0].dim() - 1, xs[0].dim() + 1)

    @op("squeeze_", "x.squeeze_()", kind="inplace", weight=0.1)
    def _(rng, xs):
        return ()

    @op("t_", "x.t_()", kind="inplace", weight=0.1)
    def _(rng, xs):
        return None if xs[0].dim() > 2 else ()

    @op("set_int", "x[p] = y", kind="inplace", arity=2, weight=0.6, needs="into_item")
    def _(rng, xs):
        x = xs[0]
        return None if x.dim() == 0 or x.shape[0] == 0 else rng.randrange(-x.shape[0], x.shape[0])

    @op("set_int_scalar", "x[p[0]] = p[1]", kind="inplace", weight=0.3)
    def _(rng, xs):
        x = xs[0]
        return None if x.dim() == 0 or x.shape[0] == 0 else (rng.randrange(x.shape[0]), rng.choice([0.0, 2.5]))

    @op("set_slice", "x[p[0]:p[1]:p[2]] = y", kind="inplace", arity=2, weight=0.5, needs="into_slice")
    def _(rng, xs):
        return None if xs[0].dim() == 0 else _slice_params(rng, xs[0].shape[0])

    @op("set_chain", "x[p[0]][p[1]] = y", kind="inplace", arity=2, weight=0.6, needs="into_chain")
    def _(rng, xs):
        x = xs[0]
        if x.dim() < 2 or x.shape[0] == 0 or x.shape[1] == 0:
            return None
        return (rng.randrange(x.shape[0]), rng.randrange(x.shape[1]))

    @op("set_chain_slice", "x[p[0]][:] = y", kind="inplace", arity=2, weight=0.4, needs="into_item")
    def _(rng, xs):
        x = xs[0]
        return None if x.dim() < 1 or x.shape[0] == 0 else rng.randrange(x.shape[0])

    @op("set_last", "x[..., p] = y", kind="inplace", arity=2, weight=0.4, needs="into_last")
    def _(rng, xs):
        x = xs[0]
        return None if x.dim() == 0 or x.shape[-1] == 0 else rng.randrange(x.shape[-1])

    @op("set_adv", "x[p] = y", kind="inplace", arity=2, weight=0.4, needs="into_adv")
    def _(rng, xs):
        x = xs[0]
        if x.dim() == 0 or x.shape[0] == 0:
            return None
        return np.array(rng.sample(range(x.shape[0]), rng.randint(1, x.shape[0])), dtype=np.int64)

    @op("set_mask", "x[x > p] = y.sum()", kind="inplace", arity=2, weight=0.3)
    def _(rng, xs):
        return rng.choice([0.0, 0.5])

    @op("set_view_flat", "x.view(-1)[p] = y.sum()", kind="inplace", arity=2, weight=0.3)
    def _(rng, xs):
        return None if xs[0].numel() == 0 else rng.randrange(xs[0].numel())

    @op("set_t", "x.t()[p] = y", kind="inplace", arity=2, weight=0.3, needs="into_t")
    def _(rng, xs):
        x = xs[0]
        return None if x.dim() != 2 or x.shape[1] == 0 else rng.randrange(x.shape[1])

    @op("view_mul_", "x[p[0]].mul_(p[1])", kind="inplace", weight=0.4)
    def _(rng, xs):
        x = xs[0]
        return None if x.dim() == 0 or x.shape[0] == 0 else (rng.randrange(x.shape[0]), rng.choice([2.0, -1.0]))

    @op("select_add_", "x.select(p[0], p[1]).add_(y.sum())", kind="inplace", arity=2, weight=0.3)
    def _(rng, xs):
        x = xs[0]
        d = _dim(rng, x)
        return None if d is None or x.shape[d] == 0 else (d, rng.randrange(x.shape[d]))

    @op("slice_tanh_", "x[p[0]:p[1]:p[2]].tanh_()", kind="inplace", weight=0.3)
    def _(rng, xs):
        return None if xs[0].dim() == 0 else _slice_params(rng, xs[0].shape[0])

    @op("diag_add_", "x.diagonal().add_(p)", kind="inplace", weight=0.3)
    def _(rng, xs):
        return None if xs[0].dim() < 2 else rng.choice([0.5, 1e-3])

    @op("diag_fill_", "x.diagonal().fill_(y.sum())", kind="inplace", arity=2, weight=0.3)
    def _(rng, xs):
        return None if xs[0].dim() < 2 else ()

    @op("index_add_", "x.index_add_(0, p[0], p[1])", kind="inplace", weight=0.2)
    def _(rng, xs):
        x = xs[0]
        if x.dim() == 0 or x.shape[0] == 0:
            return None
        idx = np.array([rng.randrange(x.shape[0]) for _ in range(rng.randint(1, 3))], dtype=np.int64)
        return (idx, _consts(rng, (len(idx),) + tuple(x.shape[1:]), str(x.dtype)))

    @op("index_fill_", "x.index_fill_(p[0], p[1], 0.75)", kind="inplace", weight=0.2)
    def _(rng, xs):
        x = xs[0]
        d = _dim(rng, x)
        if d is None or x.shape[d] == 0:
            return None
        return (d, np.array([rng.randrange(x.shape[d])], dtype=np.int64))


def _two_dims(rng, x):
    return tuple(sorted(rng.sample(range(x.dim()), 2))) if x.dim() >= 2 else None


def _index(rng, n, k):
    return np.array([rng.randrange(n) for _ in range(k)], dtype=np.int64)


def _matmul_fits(x, y):
    """Whether x @ y is defined (torch's matmul: dot, mv, mm, bmm, broadcast batches)."""
    if x.dim() == 0 or y.dim() == 0:
        return False
    inner_y = y.shape[0] if y.dim() == 1 else y.shape[-2]
    return x.shape[-1] == inner_y and _broadcastable(x.shape[:-2], y.shape[:-2])


def _cat_fits(x, y):
    return x.dim() == y.dim() and x.dim() > 0 and sum(a != b for a, b in zip(x.shape, y.shape)) <= 1


def _register_wider():
    """More of torch's surface: reductions over several dims, norms, activations, products of two
    pool tensors, gathers and scatters, losses, views with overlap (unfold), chained in-place ops."""
    unary = {
        "sqrt": "out = (x.abs() + 0.1).sqrt()", "rsqrt": "out = (x * x + 0.25).rsqrt()",
        "log": "out = (x.abs() + 0.1).log()", "reciprocal": "out = (x * x + 0.5).reciprocal()",
        "atan": "out = x.atan()", "erf": "out = torch.erf(x)", "asinh": "out = x.asinh()",
        "floor": "out = x.floor()", "frac": "out = x.frac()", "sign": "out = x.sign()",
        "hardswish": "out = torch.nn.functional.hardswish(x)", "mish": "out = torch.nn.functional.mish(x)",
        "logsigmoid": "out = torch.nn.functional.logsigmoid(x)", "relu6": "out = torch.nn.functional.relu6(x * 4)",
        "selu": "out = torch.nn.functional.selu(x)", "softsign": "out = torch.nn.functional.softsign(x)",
        "hardsigmoid": "out = torch.nn.functional.hardsigmoid(x * 3)",
        "rpow": "out = 2 ** x", "square_fn": "out = torch.square(x)", "xlogy_self": "out = x * (x * x + 1).log()",
    }
    for name, code in unary.items():
        op(name, code, weight=0.25)({"floor": _off_integers, "frac": _off_integers, "sign": _off_zero}.get(name, _always))

    @op("clamp_min_only", "out = torch.clamp(x, min=p)", weight=0.2)
    def _(rng, xs):
        return rng.choice([-0.3, 0.0, 0.4])

    for name, code in {"sum_dims": "out = x.sum(p[0], keepdim=p[1])", "mean_dims": "out = x.mean(p[0], keepdim=p[1])",
                       "amax_dims": "out = x.amax(p[0], keepdim=p[1])", "nansum_dims": "out = x.nansum(p[0])",
                       "var_dims": "out = x.var(p[0], keepdim=p[1], correction=0)"}.items():
        @op(name, code, weight=0.3)
        def _(rng, xs, name=name):
            x = xs[0]
            dims = _two_dims(rng, x)
            if dims is None or name == "var_dims" and (x.numel() < 2 or not _spread(x.detach().flatten(), 0)):
                return None
            return (dims, rng.random() < 0.5)

    @op("vector_norm", "out = torch.linalg.vector_norm(x, p[0], p[1], keepdim=p[2])", weight=0.3)
    def _(rng, xs):
        x = xs[0]
        d = _dim(rng, x)
        if d is None or x.shape[d] == 0 or not bool((x.detach().abs().amax(d) > 1e-3).all()):
            return None
        order = rng.choice([1, 2, 3, float("inf")])
        if order == float("inf") and not _no_ties(x.detach().abs(), d):
            return None
        return (order, d, rng.random() < 0.5)

    @op("normalize", "out = torch.nn.functional.normalize(x, dim=p)", weight=0.25)
    def _(rng, xs):
        return _dim(rng, xs[0])

    @op("median_dim", "out = x.median(p).values", weight=0.2)
    def _(rng, xs):
        d = _dim(rng, xs[0])
        return None if d is None or xs[0].shape[d] == 0 or not _no_ties(xs[0], d) else d

    @op("kthvalue", "out = x.kthvalue(p[1], p[0]).values", weight=0.2)
    def _(rng, xs):
        d = _dim(rng, xs[0])
        if d is None or xs[0].shape[d] == 0 or not _no_ties(xs[0], d):
            return None
        return (d, rng.randint(1, xs[0].shape[d]))

    @op("tril", "out = x.tril(p)", weight=0.2)
    def _(rng, xs):
        return None if xs[0].dim() < 2 else rng.randint(-1, 1)

    @op("triu", "out = x.triu(p)", weight=0.2)
    def _(rng, xs):
        return None if xs[0].dim() < 2 else rng.randint(-1, 1)

    @op("repeat", "out = x.repeat(p)", weight=0.2)
    def _(rng, xs):
        return tuple(rng.randint(1, 2) for _ in range(xs[0].dim() + rng.randint(0, 1)))

    @op("index_select", "out = x.index_select(p[0], p[1])", weight=0.25)
    def _(rng, xs):
        x = xs[0]
        d = _dim(rng, x)
        return None if d is None or x.shape[d] == 0 else (d, _index(rng, x.shape[d], rng.randint(1, 4)))

    @op("take_along_dim", "out = torch.take_along_dim(x, p[1], p[0])", weight=0.2)
    def _(rng, xs):
        x = xs[0]
        d = _dim(rng, x)
        if d is None or x.shape[d] == 0:
            return None
        shape = list(x.shape)
        shape[d] = rng.randint(1, 3)
        return (d, _index(rng, x.shape[d], int(np.prod(shape))).reshape(shape))

    @op("masked_select", "out = x.masked_select(x > p)", weight=0.2)
    def _(rng, xs):
        return rng.choice([0.0, 0.5])

    @op("scatter_add", "out = x.scatter_add(p[0], p[1], p[2])", weight=0.25)
    def _(rng, xs):
        x = xs[0]
        d = _dim(rng, x)
        if d is None or x.shape[d] == 0:
            return None
        idx = _index(rng, x.shape[d], x.numel()).reshape(tuple(x.shape))
        return (d, idx, _consts(rng, tuple(x.shape), str(x.dtype)))

    @op("scatter_perm", "out = x.scatter(p[0], p[1], x * 2)", weight=0.2)
    def _(rng, xs):
        x = xs[0]
        d = _dim(rng, x)
        if d is None or x.shape[d] == 0:
            return None
        # a permutation along d in every slice: each place written once (repeats would be unspecified)
        idx = np.argsort(np.random.default_rng(rng.randrange(2 ** 31)).random(tuple(x.shape)), axis=d)
        return (d, idx.astype(np.int64))

    @op("pad", "out = torch.nn.functional.pad(x, p[0], value=p[1])", weight=0.2)
    def _(rng, xs):
        x = xs[0]
        if x.dim() == 0:
            return None
        return (tuple(rng.randint(0, 2) for _ in range(2 * rng.randint(1, min(2, x.dim())))), rng.choice([0.0, 1.5]))

    @op("trace", "out = x.trace()", weight=0.15)
    def _(rng, xs):
        return None if xs[0].dim() != 2 else ()

    @op("diag", "out = torch.diag(x, p)", weight=0.15)
    def _(rng, xs):
        return None if xs[0].dim() not in (1, 2) else rng.randint(-1, 1)

    @op("diag_embed", "out = torch.diag_embed(x)", weight=0.15)
    def _(rng, xs):
        return None if xs[0].dim() == 0 or xs[0].numel() > 16 else ()

    @op("layer_norm", "out = torch.nn.functional.layer_norm(x, x.shape[-1:])", weight=0.2)
    def _(rng, xs):
        x = xs[0]
        return None if x.dim() == 0 or x.shape[-1] < 2 or not _spread(x, -1) else ()

    @op("cross_entropy", "out = torch.nn.functional.cross_entropy(x, p[0], reduction=p[1])", weight=0.2)
    def _(rng, xs):
        x = xs[0]
        if x.dim() != 2 or 0 in x.shape:
            return None
        return (_index(rng, x.shape[1], x.shape[0]), rng.choice(["mean", "sum", "none"]))

    # two pool tensors
    @op("matmul2", "out = x @ y", arity=2, weight=0.4, needs=_matmul_fits)
    def _(rng, xs):
        return ()

    @op("linear2", "out = torch.nn.functional.linear(x, y, p[0])", arity=2, weight=0.25,
        needs=lambda x, y: x.dim() >= 1 and y.dim() == 2 and y.shape[1] == x.shape[-1])
    def _(rng, xs):
        x, y = xs
        return (None,) if rng.random() < 0.5 else (_consts(rng, (y.shape[0],), str(x.dtype)),)

    @op("outer2", "out = torch.outer(x.flatten(), y.flatten())", arity=2, weight=0.2)
    def _(rng, xs):
        return None if xs[0].numel() * xs[1].numel() > 64 else ()

    @op("cat_along", "out = torch.cat([x, y], p)", arity=2, weight=0.3, needs=_cat_fits)
    def _(rng, xs):
        x, y = xs
        differ = [d for d in range(x.dim()) if x.shape[d] != y.shape[d]]
        return differ[0] if differ else _dim(rng, x)

    @op("pow_t", "out = (x.abs() + 0.5) ** y", arity=2, weight=0.3, needs="bcast")
    def _(rng, xs):
        return () if _bounded(xs[1], 3) else None

    @op("clamp_t", "out = torch.clamp(x, min=y, max=y + 0.5)", arity=2, weight=0.3, needs="into")
    def _(rng, xs):
        return ()

    @op("mse_loss", "out = torch.nn.functional.mse_loss(x, y, reduction=p)", arity=2, weight=0.2, needs="same")
    def _(rng, xs):
        return rng.choice(["mean", "sum", "none"])

    @op("smooth_l1", "out = torch.nn.functional.smooth_l1_loss(x, y, beta=0.5)", arity=2, weight=0.15, needs="same")
    def _(rng, xs):
        return ()

    @op("bce_logits", "out = torch.nn.functional.binary_cross_entropy_with_logits(x, y.sigmoid())", arity=2,
        weight=0.15, needs="same")
    def _(rng, xs):
        return ()

    @op("where_t", "out = torch.where(y > 0, x, x * x)", arity=2, weight=0.3, needs="bcast")
    def _(rng, xs):
        return ()

    @op("expand_as", "out = x.expand_as(y)", arity=2, weight=0.2,
        needs=lambda x, y: len(x.shape) <= len(y.shape) and all(a in (1, b) for a, b in zip(reversed(x.shape), reversed(y.shape))))
    def _(rng, xs):
        return ()

    @op("view_as", "out = x.view_as(y)", arity=2, weight=0.2, needs=lambda x, y: x.numel() == y.numel())
    def _(rng, xs):
        return ()

    # views
    @op("unfold", "out = x.unfold(p[0], p[1], p[2])", weight=0.3)
    def _(rng, xs):
        x = xs[0]
        d = _dim(rng, x)
        if d is None or x.shape[d] == 0:
            return None
        return (d, rng.randint(1, x.shape[d]), rng.randint(1, 2))

    @op("swapaxes", "out = x.swapaxes(p[0], p[1])", weight=0.2)
    def _(rng, xs):
        return _two_dims(rng, xs[0])

    @op("unflatten", "out = x.unflatten(p[0], p[1])", weight=0.2)
    def _(rng, xs):
        x = xs[0]
        d = _dim(rng, x)
        if d is None or x.shape[d] < 2:
            return None
        n = x.shape[d]
        k = rng.choice([k for k in range(1, n + 1) if n % k == 0])
        return (d, (k, -1))

    @op("split_sizes", "out = x.split(p[0], p[1])", kind="multi", weight=0.2)
    def _(rng, xs):
        x = xs[0]
        d = _dim(rng, x)
        if d is None or x.shape[d] < 2:
            return None
        first = rng.randint(1, x.shape[d] - 1)
        return ([first, x.shape[d] - first], d)

    @op("tensor_split", "out = x.tensor_split(p[0], p[1])", kind="multi", weight=0.15)
    def _(rng, xs):
        d = _dim(rng, xs[0])
        return None if d is None else (rng.randint(1, 3), d)

    # in-place
    chained = {"abs_add_sqrt_": "x.abs_().add_(0.5).sqrt_()", "mul_add_": "x.mul_(0.5).add_(1.0)",
               "clamp_min_": "x.clamp_(min=-0.2)", "tril_": "x.tril_()",
               "t_mul_": "x.t().mul_(2.0)", "row_zero_": "x[0].zero_()", "data_mul_": "x.data.mul_(2.0)",
               "transpose_": "x.transpose_(0, -1)",
               "sigmoid_twice": "x.sigmoid_().mul_(2.0)", "floor_": "x.floor_()"}
    for name, code in chained.items():
        @op(name, code, kind="inplace", weight=0.2)
        def _(rng, xs, name=name):
            x = xs[0]
            if name == "t_mul_" and x.dim() != 2 or name == "tril_" and x.dim() < 2:
                return None
            if name == "row_zero_" and (x.dim() == 0 or x.shape[0] < 2):
                return None
            return _off_integers(rng, xs) if name == "floor_" else ()

    @op("clamp_t_", "x.clamp_(min=y)", kind="inplace", arity=2, weight=0.2, needs="into")
    def _(rng, xs):
        return ()

    @op("addcdiv_", "x.addcdiv_(y, y * y + 1, value=0.5)", kind="inplace", arity=2, weight=0.2, needs="into")
    def _(rng, xs):
        return ()

    @op("index_put_acc", "x.index_put_((p,), y.sum(), accumulate=True)", kind="inplace", arity=2, weight=0.2)
    def _(rng, xs):
        x = xs[0]
        if x.dim() == 0 or x.shape[0] == 0 or 0 in x.stride():
            return None  # (accumulating into an expanded tensor: deprecated in torch, its sums run per alias)
        return _index(rng, x.shape[0], rng.randint(1, 4))

    @op("set_adv2", "x[p[0], p[1]] = y.sum()", kind="inplace", arity=2, weight=0.2)
    def _(rng, xs):
        x = xs[0]
        if x.dim() < 2 or 0 in x.shape[:2]:
            return None
        k = rng.randint(1, 3)
        return (_index(rng, x.shape[0], k), _index(rng, x.shape[1], k))

    @op("scatter_add_", "x.scatter_add_(p[0], p[1], y)", kind="inplace", arity=2, weight=0.2, needs="same")
    def _(rng, xs):
        x = xs[0]
        d = _dim(rng, x)
        if d is None or x.shape[d] == 0:
            return None
        return (d, _index(rng, x.shape[d], x.numel()).reshape(tuple(x.shape)))

    @op("scatter_value_", "x.scatter_(p[0], p[1], 0.25)", kind="inplace", weight=0.2)
    def _(rng, xs):
        x = xs[0]
        d = _dim(rng, x)
        if d is None or x.shape[d] == 0:
            return None
        shape = list(x.shape)
        shape[d] = 1
        return (d, _index(rng, x.shape[d], int(np.prod(shape))).reshape(shape))


_FLOATS = None  # (torch's floating dtypes, set on first generate: this module does not import torch)

_register_unary()
_register_binary()
_register_views()
_register_inplace()
_register_wider()


# ---------------------------------------------------------------------------------------------
# Running a program
# ---------------------------------------------------------------------------------------------
class Program:
    """leaves: [(shape, dtype name, requires_grad, "rand" | "zeros")]; steps: [(op name, input
    indices, params, grad_enabled)]; final: (output indices, mode, create_graph, inputs)."""

    def __init__(self, seed, leaves, steps, final):
        self.seed, self.leaves, self.steps, self.final = seed, leaves, steps, final
        self.counts = {}  # step -> how many tensors a multi-output step made (for render)
        self.casts = {}   # step -> whether a cast step returned its input itself (for Runner(promote=True))


def _lib_params(lib, p, promote=False):
    """Parameters as the library wants them: NumPy arrays become its tensors (``promote``: float32
    arrays become float64 ones, of the same values)."""
    if isinstance(p, np.ndarray):
        return lib.from_numpy(p.astype(np.float64) if promote and p.dtype == np.float32 else p.copy())
    if isinstance(p, tuple):
        return tuple(_lib_params(lib, q, promote) for q in p)
    return p


# In the float64 replay of a program that computes in float32 (``Runner(promote=True)``), a cast
# (x.float(), x.double()) makes a float64 tensor -- x itself where the cast returned x in the
# program (x was of the target dtype already), a copy where it copied, so that the replay's
# tensors alias as the program's do (``Program.casts``).
_CASTS = {"float32": "torch.float32", "float64": "torch.float64"}
_PROMOTED_CAST = {True: compile("out = x", "<fuzz cast, promoted>", "exec"),
                  False: compile("out = x.to(torch.float64, copy=True)", "<fuzz cast, promoted>", "exec")}


def _weights(rng, shape, dtype):
    """Standard normal weights of ``dtype`` that are float32 numbers, so that the float64 replay
    of a float32 program (``Runner(promote=True)``) weights its results by the same values."""
    return rng.standard_normal(tuple(shape)).astype(np.float32).astype(str(dtype).split(".")[-1])


def _error_key(e):
    """An error as the trace compares it: its type and the start of its message, with the node a
    message names masked (which node of a view chain is named is a detail). torch failing one of its
    own internal asserts (a torch bug, "... INTERNAL ASSERT FAILED at ...") reads as TORCH_ASSERT."""
    msg = re.sub(r"(?i)(output \d+ of )\w+", r"\1<node>", str(e).strip().split("\n")[0])
    if "INTERNAL ASSERT FAILED" in msg:
        return type(e).__name__, TORCH_ASSERT
    return type(e).__name__, msg[:40]


TORCH_ASSERT = "INTERNAL ASSERT FAILED"   # torch's own bug: the program is not compared there (torch_assert)


def _observe(lib, t):
    """What the trace keeps of a tensor: its value (a copy) and its metadata."""
    if not isinstance(t, lib.Tensor):
        return ("not a tensor", type(t).__name__), None
    value = np.array(t.detach().numpy(), copy=True)
    try:
        fn = t.grad_fn
        fn_name = None if fn is None else fn.name()
    except Exception as e:  # torch regenerates a view's grad_fn here, which may raise
        kind, msg = _error_key(e)
        fn_name = TORCH_ASSERT if msg == TORCH_ASSERT else "raised " + kind
    try:
        leaf = t.is_leaf
    except Exception as e:
        leaf = "raised " + _error_key(e)[0]
    shape = (str(t.dtype), tuple(t.shape))
    meta = (("requires_grad", t.requires_grad), ("is_leaf", leaf), ("grad_fn", fn_name), ("_version", t._version),
            ("is_contiguous", t.is_contiguous()), ("is_view", t._base is not None))
    return shape, (value, meta)


def _node_names(fn):
    seen, names, stack = set(), Counter(), [fn] if fn is not None else []
    while stack:
        f = stack.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        names[f.name()] += 1
        stack.extend(n for n, _ in f.next_functions if n is not None)
    return tuple(sorted(names.items()))


class Runner:
    """Runs a program's steps in one library, recording the trace. ``promote``: run it in float64
    wherever it would compute in float32 -- the same float32 numbers as leaves, parameters and
    weights, float64 arithmetic (the truth that float32 results are measured against: ``compare``)."""

    def __init__(self, lib, program, promote=False):
        self.lib = lib
        self.program = program
        self.promote = promote
        self.values = []
        self.trace = []   # [(label, kind, payload)]: kind "obs" (shape, (value, meta)), "error", "grads", "names"
        rng = np.random.default_rng(program.seed)
        for i, (shape, dtype, rg, fill) in enumerate(program.leaves):
            a = rng.uniform(-2, 2, shape) if fill == "rand" else np.zeros(shape)
            a = a.astype(dtype)
            t = lib.from_numpy(a.astype(np.float64) if promote else a)
            if rg:
                t.requires_grad_()
            self.values.append(t)

    def step(self, k, step):
        name, args, params, grad_enabled = step
        op_ = OPS[name]
        xs = [self.values[i] for i in args]
        label = f"step {k} ({name})"
        if any(x is None for x in xs):
            self.trace.append((label, "skipped", None))
            return "skipped"
        ns = {"torch": self.lib, "p": _lib_params(self.lib, params, self.promote)}
        code = op_.code
        if name in _CASTS:
            if self.promote:
                code = _PROMOTED_CAST[self.program.casts[k]]
            else:
                self.program.casts.setdefault(k, str(xs[0].dtype) == _CASTS[name])
        ns["x"] = xs[0]
        if len(xs) > 1:
            ns["y"] = xs[1]
        try:
            if grad_enabled:   # (as it is at the top level: no context manager to enter)
                exec(code, ns)
            else:
                with self.lib.no_grad():
                    exec(code, ns)
        except Exception as e:
            self.trace.append((label, "error", _error_key(e)))
            if op_.kind in ("new", "multi"):
                self.values.append(None)
            return "error"
        if op_.kind == "new":
            self.values.append(ns["out"])
            self.trace.append((label, "obs", _observe(self.lib, ns["out"])))
        elif op_.kind == "multi":
            outs = ns["out"]
            self.trace.append((label, "count", len(outs)))
            self.program.counts.setdefault(k, len(outs))
            for o in outs:
                self.values.append(o)
                self.trace.append((label, "obs", _observe(self.lib, o)))
        else:
            self.trace.append((label, "obs", _observe(self.lib, xs[0])))
        return "ok"

    def finish(self):
        """Observe every live tensor, then backpropagate as the program's final phase says."""
        lib = self.lib
        for i, v in enumerate(self.values):
            if v is not None:
                self.trace.append((f"final value {i}", "obs", _observe(lib, v)))
        outputs, mode, create_graph, wrt = self.program.final
        if not outputs:
            return
        rng = np.random.default_rng(self.program.seed + 1)
        try:
            loss = None
            for i in outputs:
                v = self.values[i]
                w = lib.from_numpy(_weights(rng, v.shape, v.dtype))
                term = (v * w).sum()
                loss = term if loss is None else loss + term
            self.trace.append(("loss graph", "names", _node_names(loss.grad_fn)))
            leaves = [v for v in self.values[:len(self.program.leaves)] if v is not None and v.requires_grad]
            retained = [v for v in self.values if v is not None and v.retains_grad]
            if mode == "backward":
                loss.backward()
                grads = [v.grad for v in leaves] + [v.grad for v in retained]
                self.trace.append(("backward grads", "grads", _grads(grads)))
                return
            inputs = leaves + [self.values[i] for i in wrt]
            grads = lib.autograd.grad(loss, inputs, allow_unused=True, create_graph=create_graph)
            self.trace.append(("autograd.grad", "grads", _grads(grads)))
            if not create_graph:
                return
            live = [(g, i) for i, g in enumerate(grads) if g is not None and g.requires_grad]
            self.trace.append(("gradients requiring grad", "names", tuple(i for _, i in live)))
            s = None
            for g, i in live:
                w = lib.from_numpy(_weights(np.random.default_rng(self.program.seed + 2 + i), g.shape, g.dtype))
                term = (g * w).sum()
                s = term if s is None else s + term
            grads2 = lib.autograd.grad(s, inputs, allow_unused=True) if s is not None else [None] * len(inputs)
            self.trace.append(("double backward", "grads2", _grads(grads2)))
        except Exception as e:
            self.trace.append(("final phase", "error", _error_key(e)))


def _grads(grads):
    return [None if g is None else np.array(g.detach().numpy(force=True) if hasattr(g, "numpy") else g, copy=True)
            for g in grads]


def run(lib, program, promote=False):
    """Replay ``program`` in ``lib`` (torch or glasstorch); returns its trace (``promote``: in
    float64 where it computes in float32, see ``Runner``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = Runner(lib, program, promote)
        for k, step in enumerate(program.steps):
            r.step(k, step)
        r.finish()
    return r.trace


# ---------------------------------------------------------------------------------------------
# Generating a program (by running it in torch as it is chosen)
# ---------------------------------------------------------------------------------------------
_KIND_WEIGHTS = {"new": 0.42, "view": 0.22, "inplace": 0.28, "multi": 0.03, "meta": 0.05}
_VIEW_OPS = {"select_int", "slice0", "slice1", "select_last", "none_index", "alias", "full_slice", "full_slice2", "t",
             "mT", "view_flat", "flatten", "squeeze_all", "unsqueeze0", "diagonal", "T", "narrow", "select",
             "transpose", "permute", "view", "reshape", "unsqueeze", "squeeze", "expand", "diagonal_off", "movedim",
             "unfold", "swapaxes", "unflatten", "expand_as", "view_as"}


_INPLACE_VIEW_OPS = {"unsqueeze_", "squeeze_", "t_", "transpose_"}


def _by_kind():
    """{kind: (its ops, their cumulative weights)} (``random.choices`` with cum_weights picks as with
    the weights, without summing them again at every step)."""
    groups = {}
    for o in OPS.values():
        k = "view" if o.name in _VIEW_OPS else o.kind
        groups.setdefault(k, []).append(o)
    return {k: (ops, list(accumulate(o.weight for o in ops))) for k, ops in groups.items()}


_GROUPS = _by_kind()
_KINDS, _KIND_CUM_WEIGHTS = list(_KIND_WEIGHTS), list(accumulate(_KIND_WEIGHTS.values()))


def _fits(needs, x, y, torch):
    """Whether y can be the second input of an op with requirement ``needs`` on x."""
    if callable(needs):
        return needs(x, y)
    if needs == "bcast":
        return _broadcastable(x.shape, y.shape)
    try:
        target = _target_shape(needs, x)
    except (ValueError, IndexError):
        return False
    if needs == "same":
        return y.shape == x.shape
    if target is None:  # (the slice's length is known only with the parameters: any y, torch decides)
        return y.dim() <= x.dim()
    return len(y.shape) <= len(target) and all(b in (1, a) for a, b in zip(reversed(target), reversed(y.shape)))


def _target_shape(needs, x):
    """The shape of the part of x that an op with requirement ``needs`` writes y into (None: known
    only with the parameters, or not a write)."""
    if needs in ("into", "same", "bcast"):
        return x.shape
    if needs == "into_item":
        return x.shape[1:]
    if needs == "into_chain":
        return x.shape[2:]
    if needs == "into_last":
        return x.shape[:-1]
    if needs == "into_t":
        return x.shape[:1]
    return None


def _broadcastable(a, b):
    """Whether shapes a and b broadcast together (NumPy's broadcast_shapes costs ten times more;
    torch's imports its compiler)."""
    return all(m == n or m == 1 or n == 1 for m, n in zip(reversed(a), reversed(b)))


def generate(seed, torch, max_steps=10):
    """A random program, chosen by running it in ``torch``; returns (program, torch's trace) --
    the trace of a fresh replay when some tried step had to be undone."""
    global _FLOATS
    if _FLOATS is None:
        _FLOATS = (torch.float32, torch.float64)
    rng = random.Random(seed)
    rank = rng.choice([0, 1, 1, 2, 2, 2, 3, 3])
    base = tuple(rng.randint(1, 4) for _ in range(rank))
    dtype = "float64" if rng.random() < 0.85 else "float32"
    leaves = []
    for i in range(rng.randint(1, 3)):
        k = rng.randint(0, rank)
        shape = tuple(s if rng.random() < 0.8 else 1 for s in base[rank - k:])
        leaves.append((shape, dtype, i == 0 or rng.random() < 0.6, "rand"))
    if rng.random() < 0.6:
        leaves.append((base, dtype, False, "zeros"))   # a buffer to write results into
    if rng.random() < 0.3:
        leaves.append((base, dtype, False, "rand"))    # data that needs no gradient
    program = Program(seed, leaves, [], ((), "backward", False, ()))
    runner = Runner(torch, program)
    clean = True   # no tried step was undone: the generating run is a replay
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k in range(rng.randint(2, max_steps)):
            for _attempt in range(12):
                step = _choose_step(rng, runner, torch)
                if step is None:
                    continue
                program.steps.append(step)
                n_values, n_trace = len(runner.values), len(runner.trace)
                status = runner.step(len(program.steps) - 1, step)
                if status == "error" and "INTERNAL ASSERT" in runner.trace[-1][2][1]:
                    # a bug of torch's own (retain_grad, detach_, then an in-place op): not a behaviour to
                    # compare against; leave the step out (the replay below starts from a clean torch)
                    program.steps.pop()
                    del runner.values[n_values:], runner.trace[n_trace:]
                    clean = False
                    break
                if status == "ok" and OPS[step[0]].kind in ("new", "multi") and not _sane(runner.values[n_values:]):
                    program.steps.pop()            # a new value that overflows or is huge: undo, try another
                    del runner.values[n_values:], runner.trace[n_trace:]
                    clean = False
                    continue
                break
        program.final = _choose_final(rng, runner, torch)
        runner.finish()
    return program, (runner.trace if clean else run(torch, program))


def _sane(values):
    for v in values:
        if v is None:
            continue
        d = v.detach()
        if d.numel() and not bool((d.abs() < 1e4).all()):
            return False
    return True


def _pick(rng, live):
    """A pool index, the recent ones more likely (chains grow long): index i has weight i + 1."""
    n = len(live)
    if len(_TRIANGLE) < n:
        _TRIANGLE.extend((k + 1) * (k + 2) // 2 for k in range(len(_TRIANGLE), n + 16))
    return rng.choices(live, cum_weights=_TRIANGLE[:n])[0]


_TRIANGLE = []   # the cumulative weights 1, 3, 6, 10, ... of _pick


def _choose_step(rng, runner, torch):
    live = [i for i, v in enumerate(runner.values) if v is not None]
    kind = rng.choices(_KINDS, cum_weights=_KIND_CUM_WEIGHTS)[0]
    group, cum_weights = _GROUPS[kind]
    o = rng.choices(group, cum_weights=cum_weights)[0]
    xi = _pick(rng, live)
    x = runner.values[xi]
    args = [xi]
    if o.arity == 2:
        candidates = [i for i in live if o.needs is None or _fits(o.needs, x, runner.values[i], torch)]
        if not candidates:
            return None
        args.append(_pick(rng, candidates))
    if o.kind == "inplace" and (_unchecked_overlap(x) or o.arity == 2 and _undefined_aliasing(x, runner.values[args[1]], o)):
        return None
    if o.name in _INPLACE_VIEW_OPS and x._base is None and x.requires_grad and x.grad_fn is None:
        return None  # (torch 2.13 accepts x.t_() on such a leaf, and a double backward through it then crashes
        #             the process: seed 796151930179 before this rule). Not x.is_leaf: on a view, reading
        #             it makes torch re-derive the view's history, which the program then does not do --
        #             and torch's in-place check reads the history as last derived (seeds 796152536277, 796152537409)
    params = o.choose(rng, [runner.values[i] for i in args])
    if params is None:
        return None
    grad_enabled = rng.random() > (0.25 if kind in ("inplace", "view") else 0.05)
    if o.name in _INPLACE_VIEW_OPS:
        grad_enabled = True  # (under no_grad torch would refuse the old node's gradient shape: not modelled)
    return (o.name, tuple(args), params, grad_enabled)


def _undefined_aliasing(x, y, o):
    """An in-place op on x reading y, where y shares part of x's memory in a way torch cannot check
    (one of them has gaps or repeats): its result then depends on the order in which torch's kernel
    visits the elements, which is not specified. (Where both are dense torch raises, and the
    programs keep that case: glasstorch must raise too.)"""
    if "y.sum()" in o.source or x.numel() == 0 or y.numel() == 0:
        return False
    if x.untyped_storage().data_ptr() != y.untyped_storage().data_ptr():
        return False
    if x.data_ptr() == y.data_ptr() and x.stride() == y.stride() and x.shape == y.shape and o.needs == "into":
        return False  # the same elements, each read where it is written (x.mul_(x), x.copy_(x)): well defined
        #               -- not so a write into part of x, or by index (x[idx] = x with a permutation idx:
        #               torch's index_put_ reads rows it has already written, seed 796164156376)
    if o.needs != "into" and (x.dtype != y.dtype or not _addresses(x).isdisjoint(_addresses(y))):
        return True   # a write into part of x from elements of x (x[..., 1] = x.t()[..., 0]): where the part
        #               and y overlap, torch's copy reads elements it has already written (seed 796173494890);
        #               the part is chosen later, so any overlap with x leaves the op out
    if y.numel() < math.prod(_target_shape(o.needs, x) or ()):
        return True   # y is broadcast over the written part, so it repeats its elements as well (x[0] =
        #               x.diagonal() of shape (4, 1): torch's copy writes row after row: seed 796157876153)
    return not (_dense(x) and _dense(y))


def _addresses(t):
    """The storage positions of t's elements (the fuzzer's tensors are small)."""
    positions = [t.storage_offset()]
    for n, stride in zip(t.shape, t.stride()):
        positions = [p + i * stride for p in positions for i in range(n)]
    return set(positions)


def _unchecked_overlap(t):
    """Whether t repeats elements in a way torch does not check before writing (an unfold with
    overlapping windows): an in-place op's result then depends on the order of its kernel's
    visits, which is not specified. (An expanded tensor, with a stride 0, torch refuses: kept.)"""
    dims = sorted((st, n) for st, n in zip(t.stride(), t.shape) if n > 1)
    if not dims or dims[0][0] == 0:
        return False
    reach = 0
    for stride, n in dims:
        if stride <= reach:
            return True
        reach += stride * (n - 1)
    return False


def _dense(t):
    expected = 1
    for stride, n in sorted((st, n) for st, n in zip(t.stride(), t.shape) if n != 1):
        if stride != expected:
            return False
        expected *= n
    return True


def _choose_final(rng, runner, torch):
    rg = [i for i, v in enumerate(runner.values) if v is not None and v.requires_grad
          and v.dtype in _FLOATS]
    if not rg:
        return ((), "backward", False, ())
    outputs = sorted(set([rg[-1]] + rng.sample(rg, min(len(rg), rng.randint(0, 2)))))
    mode = "backward" if rng.random() < 0.5 else "grad"
    create_graph = mode == "grad" and rng.random() < 0.5
    n_leaves = len(runner.program.leaves)
    inner = [i for i in rg if i >= n_leaves]
    wrt = tuple(sorted(rng.sample(inner, min(len(inner), rng.randint(0, 2))))) if mode == "grad" else ()
    return (tuple(outputs), mode, create_graph, wrt)


# ---------------------------------------------------------------------------------------------
# Comparing traces
# ---------------------------------------------------------------------------------------------
KINDS = ("value", "grad", "crash", "error", "meta", "torch_assert")   # (torch_assert: torch's bug, not compared)


SINGLE_TOLERANCE = (2e-4, 1e-5)   # (rtol, atol) of a program that computes in float32
DOUBLE_TOLERANCE = (1e-7, 1e-9)   # ... and of one that computes in float64
WORSE = 4   # how much further than torch's a float32 result must be from the truth to count


def _close(a, b, single):
    """Equal values (float64 programs: to 1e-7; ``single``: a program computing in float32)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.tobytes() == b.tobytes():  # (the common case, and the quickest test)
        return True
    if a.dtype.kind not in "fc":
        return False
    rtol, atol = SINGLE_TOLERANCE if single or a.dtype != np.float64 else DOUBLE_TOLERANCE
    with np.errstate(invalid="ignore", over="ignore"):
        ok = (np.abs(a - b) <= atol + rtol * np.abs(b)) | (a == b) | (np.isnan(a) & np.isnan(b))
    return bool(ok.all())


def _error(a, truth):
    """How far ``a`` is from ``truth``, in units of the float32 tolerance at the truth (the
    largest over the elements; a NaN or infinity the truth does not have is infinitely far)."""
    rtol, atol = SINGLE_TOLERANCE
    a, truth = a.astype(np.float64), truth.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        d = np.abs(a - truth)
        d = np.where((a == truth) | (np.isnan(a) & np.isnan(truth)), 0.0, d)
        d = np.where(np.isnan(d), np.inf, d) / (atol + rtol * np.abs(np.nan_to_num(truth)))
    return float(d.max()) if d.size else 0.0


def _rounding(ours, torchs, truth):
    """Whether glasstorch's float32 result ``ours``, which differs from torch's float32 result
    ``torchs`` by more than the float32 tolerance, is as good as torch's: ``truth`` is the same
    program run in float64 under torch (``Runner(promote=True)``). A float32 program that is
    ill-conditioned -- a layer_norm of nearly equal values, silu's gradient far out on the
    negative side, a difference of nearly equal numbers -- turns the rounding of each library's
    own (equally valid) order of operations into differences larger than any fixed tolerance;
    neither result is the truth. The rule: with e(X) the largest element-wise |X - truth| in
    units of the float32 tolerance (atol 1e-5 + rtol 2e-4 * |truth|), the difference is
    rounding when e(ours) <= 1 (glasstorch is right, torch is the one off) or e(ours) <= WORSE *
    e(torch) (both are off, glasstorch by at most 4 times torch's error). A wrong formula or
    kernel is off by far more than its rounding (the planted bugs of tests/test_fuzz_graphs.py
    are found in float32 as in float64)."""
    if truth is None or ours.shape != truth.shape or ours.dtype.kind != "f" or truth.dtype.kind != "f":
        return False
    e = _error(ours, truth)
    return e <= 1 or e <= WORSE * _error(torchs, truth)


def compare(expected, actual, single=False, truth=None):
    """The differences between torch's trace (``expected``) and glasstorch's: [(kind, where, what)]
    (``single``: the program computes in float32, compare to its precision; ``truth``: the trace
    of the program run in float64 under torch, which tells a float32 rounding difference from a
    wrong value: ``_rounding``. It is read up to the first step where it takes another path than
    ``expected`` -- raises where float32 did not, or the other way round -- and no further.)"""
    diffs = []
    truth = iter(truth) if truth is not None else None
    for (label, kind, t), (label2, kind2, g) in zip(expected, actual):
        r = None
        if truth is not None:
            label3, kind3, r = next(truth, (None, None, None))
            if (label3, kind3) != (label, kind):
                truth, r = None, None
        if label != label2:   # (one side raised where the other went on)
            what = "crash" if kind2 == "error" else "error" if kind == "error" else "value"
            diffs.append((what, label, f"trace out of step: glasstorch at {label2}, torch at {label} {t!r:.100}"))
            break
        if kind == "error" and t[1] == TORCH_ASSERT:
            diffs.append(("torch_assert", label, f"torch failed its own internal assert ({t[0]}); glasstorch {g}"))
            break   # (what follows in torch's trace is no longer torch's answer)
        if kind == "error" or kind2 == "error":
            if kind != "error":
                diffs.append(("crash", label, f"glasstorch raised {g}"))
            elif kind2 != "error":
                diffs.append(("error", label, f"torch raised {t}, glasstorch did not"))
            elif t != g:
                diffs.append(("error", label, f"torch raised {t}, glasstorch {g}"))
            continue
        if kind != kind2:
            diffs.append(("value", label, f"glasstorch recorded {kind2} {g!r:.200}, torch {kind} {t!r:.200}"))
            continue
        if kind == "obs":
            (t_shape, t_rest), (g_shape, g_rest) = t, g
            if t_shape != g_shape:
                diffs.append(("value", label, f"shape/dtype {g_shape} vs torch {t_shape}"))
                continue
            if t_rest is None:
                continue
            truth_value = r[1][0] if r is not None and r[1] is not None else None
            if not _close(g_rest[0], t_rest[0], single) and not (single and _rounding(g_rest[0], t_rest[0], truth_value)):
                diffs.append(("value", label, f"values differ:\n  glasstorch {g_rest[0]!r}\n  torch      {t_rest[0]!r}"
                              + _truth_line(truth_value)))
            for (name, tv), (_, gv) in zip(t_rest[1], g_rest[1]):
                if tv == TORCH_ASSERT:
                    diffs.append(("torch_assert", label, f"{name}: torch failed its own internal assert reading it; "
                                                         f"glasstorch {gv!r}"))
                elif tv != gv:
                    diffs.append(("meta", label, f"{name}: glasstorch {gv!r}, torch {tv!r}"))
        elif kind in ("grads", "grads2"):
            for i, (a, b) in enumerate(zip(g, t)):
                if a is None and b is None:
                    continue
                if (a is None or b is None) and kind == "grads2":  # a None and an all-zero second derivative agree
                    z = a if a is not None else b
                    if not z.any():
                        continue
                truth_grad = r[i] if r is not None and i < len(r) else None
                if a is None or b is None:
                    diffs.append(("grad", label, f"gradient {i}: glasstorch {a!r}, torch {b!r}"))
                elif not _close(a, b, single) and not (single and _rounding(a, b, truth_grad)):
                    diffs.append(("grad", label, f"gradient {i} differs:\n  glasstorch {a!r}\n  torch      {b!r}"
                                  + _truth_line(truth_grad)))
        elif kind in ("names", "count", "skipped"):
            if t != g:
                diffs.append(("meta" if kind == "names" else "value", label, f"glasstorch {g!r}, torch {t!r}"))
    if len(expected) != len(actual) and not diffs:
        diffs.append(("crash", "end", f"trace lengths {len(actual)} vs torch {len(expected)}"))
    return diffs


def _truth_line(truth):
    return "" if truth is None else f"\n  float64    {truth!r}"


def check(seed, torch, glasstorch, on_glasstorch=None):
    """Generate program ``seed``, run it in both libraries; returns (program, differences).
    ``on_glasstorch()``, if given, is called between torch's run and glasstorch's (the tool marks
    which of the two a process that dies was running)."""
    program, expected = generate(seed, torch)
    if on_glasstorch is not None:
        on_glasstorch()
    try:
        actual = run(glasstorch, program)
    except Exception as e:  # the runner catches the op's errors; anything else is glasstorch's crash
        return program, [("crash", "runner", f"{type(e).__name__}: {e}")]
    single = computes_in_float32(program)
    diffs = compare(expected, actual, single=single)
    if single and any(d[0] in ("value", "grad") for d in diffs):   # (rounding, or wrong? ask the truth)
        diffs = compare(expected, actual, single=True, truth=run(torch, program, promote=True))
    return program, diffs


def computes_in_float32(program):
    """Whether some of the program's arithmetic is float32 (a float32 leaf, or an x.float())."""
    return any(leaf[1] == "float32" for leaf in program.leaves) or any(st[0] == "float32" for st in program.steps)


def render(program):
    """The program as a torch script (``import glasstorch as torch`` runs it in glasstorch)."""
    lines = ["import numpy as np", "import torch", f"rng = np.random.default_rng({program.seed})"]
    names = []
    for i, (shape, dtype, rg, fill) in enumerate(program.leaves):
        src = f"rng.uniform(-2, 2, {shape})" if fill == "rand" else f"np.zeros({shape})"
        lines.append(f"v{i} = torch.from_numpy({src}.astype('{dtype}'))" + (".requires_grad_()" if rg else ""))
        names.append(f"v{i}")
    for k, (name, args, params, grad_enabled) in enumerate(program.steps):
        o = OPS[name]
        code = o.source
        for var, i in zip("xy", args):
            code = _subst(code, var, f"v{i}")
        if isinstance(params, tuple):
            for i, q in enumerate(params):
                code = code.replace(f"p[{i}]", _render_param(q))
        code = _subst(code, "p", _render_param(params))
        n = len(names)
        if o.kind == "new":
            code = code.replace("out =", f"v{n} =", 1)
            names.append(f"v{n}")
        elif o.kind == "multi":
            outs = [f"v{n + i}" for i in range(program.counts.get(k, 0))]
            code = code.replace("out =", (", ".join(outs) + ("," if len(outs) == 1 else "")) + " =", 1)
            names += outs
        indent = ""
        if not grad_enabled:
            lines.append("with torch.no_grad():")
            indent = "    "
        lines.append(f"{indent}{code}    # step {k}")
    lines.append(f"# final: outputs {program.final[0]}, {program.final[1]}, create_graph={program.final[2]}, "
                 f"also w.r.t. {program.final[3]}")
    return "\n".join(lines)


def _subst(code, var, text):
    return re.sub(rf"\b{var}\b", text, code)


def _render_param(p):
    if isinstance(p, np.ndarray):
        return f"torch.tensor({p.tolist()})"
    if isinstance(p, tuple):
        return "(" + ", ".join(_render_param(q) for q in p) + ("," if len(p) == 1 else "") + ")"
    return repr(p)


def summarize(results):
    """{kind: number of programs with at least one difference of that kind}."""
    counts = Counter()
    for diffs in results:
        for kind in {d[0] for d in diffs}:
            counts[kind] += 1
    return counts
