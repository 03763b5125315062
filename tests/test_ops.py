"""Every op in the registry (tests/opinfo.py) against real torch, by one harness.

For each (op, dtype) the harness runs every sample through torch and glasstorch and checks:

* forward   -- values (float64: rtol 1e-7; float32: rtol 1e-5), NaN where torch has NaN
* dtype     -- each output's dtype and shape, and whether it requires grad
* grad_fn   -- ``type(out.grad_fn).__name__`` against torch's ``out.grad_fn.name()``
* graph     -- the multiset of node names walked from the outputs (what torch records is the spec)
* grad      -- gradients of every input that requires grad, for a random upstream gradient
* gradgrad  -- double backward: grads with create_graph=True, then the gradient of
               sum(grad * w) w.r.t. the inputs and the upstream gradient (float64, where torch can)
* raise     -- a sample torch rejects must be rejected with the same exception type

The rest of this file: type promotion, printing (repr), error messages, creation functions, and
in-place semantics.
"""
import math
import warnings
from collections import Counter

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import glasstorch as gt  # noqa: E402
from opinfo import op_db  # noqa: E402

TOL = {"float64": (1e-7, 1e-9), "float32": (2e-5, 2e-5), "float16": (2e-3, 2e-3)}


# ---------------------------------------------------------------------------------------------
# The harness
# ---------------------------------------------------------------------------------------------
def _flat(out):
    if isinstance(out, (tuple, list)):
        return [x for o in out for x in _flat(o)]
    return [out]


def _np(t):
    return t.detach().numpy(force=True)  # force: torch's gradients may be ZeroTensors


def _close(g, t, dtype_name, tol=None):
    """None if the arrays agree, else a short description of the difference."""
    if g.shape != t.shape:
        return f"shape {g.shape} != torch {t.shape}"
    if t.dtype.kind in "biu" or g.dtype.kind in "biu":
        if not np.array_equal(g, t):
            return f"values differ:\n  glasstorch {g.tolist()}\n  torch      {t.tolist()}"
        return None
    rtol, atol = tol or TOL.get(t.dtype.name, TOL.get(dtype_name, TOL["float32"]))
    try:
        np.testing.assert_allclose(g, t, rtol=rtol, atol=atol, equal_nan=True)
    except AssertionError as e:
        return "values differ" + str(e).split("Mismatched", 1)[-1][:600]
    return None


def _graph_names(fns):
    seen, names, stack = {}, Counter(), [f for f in fns if f is not None]
    while stack:
        fn = stack.pop()
        if id(fn) in seen:
            continue
        seen[id(fn)] = fn  # keep alive: torch's Python node wrappers are made on demand
        names[fn.name()] += 1
        stack.extend(n for n, _ in fn.next_functions if n is not None)
    return names


class _Failures:
    def __init__(self):
        self.items = []

    def add(self, check, sample, msg):
        self.items.append((check, f"[{check}] {sample!r}: {msg}"))


def _random_like(rng, t):
    return rng.standard_normal(tuple(t.shape)).astype(str(t.dtype).replace("torch.", ""))


def _grads(lib, outs, leaves, upstream, create_graph=False):
    return lib.autograd.grad(outs, leaves, upstream, allow_unused=True, create_graph=create_graph)


def run_sample(op, sample, dtype, fails, rng):
    t_args, t_kwargs, t_leaves = sample.build(torch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            t_out = op.fn(torch, *t_args, **t_kwargs)
        except Exception as e:  # torch rejects it: so must we, with the same exception type
            g_args, g_kwargs, _ = sample.build(gt)
            try:
                op.fn(gt, *g_args, **g_kwargs)
            except type(e):
                return
            except Exception as ge:
                fails.add("raise", sample, f"torch raised {type(e).__name__}({e}), glasstorch {type(ge).__name__}({ge})")
                return
            fails.add("raise", sample, f"torch raised {type(e).__name__}({e}); glasstorch did not")
            return
        g_args, g_kwargs, g_leaves = sample.build(gt)
        try:
            g_out = op.fn(gt, *g_args, **g_kwargs)
        except Exception as e:
            fails.add("forward", sample, f"glasstorch raised {type(e).__name__}: {e}")
            return
    t_flat, g_flat = _flat(t_out), _flat(g_out)
    if len(t_flat) != len(g_flat):
        fails.add("forward", sample, f"{len(g_flat)} outputs, torch has {len(t_flat)}")
        return
    for i, (to, go) in enumerate(zip(t_flat, g_flat)):
        if not isinstance(to, torch.Tensor):
            if to != go and not (isinstance(to, float) and math.isnan(to) and math.isnan(go)):
                fails.add("forward", sample, f"output {i}: {go!r} != torch {to!r}")
            continue
        if not isinstance(go, gt.Tensor):
            fails.add("forward", sample, f"output {i} is {type(go).__name__}, torch gives a Tensor")
            continue
        if repr(go.dtype) != str(to.dtype) or tuple(go.shape) != tuple(to.shape):
            fails.add("dtype", sample, f"output {i}: {go.dtype} {tuple(go.shape)} != torch {to.dtype} "
                                       f"{tuple(to.shape)}")
            continue
        msg = _close(_np(go), _np(to), dtype, op.tol.get(dtype))
        if msg:
            fails.add("forward", sample, f"output {i}: {msg}")
        if go.requires_grad != to.requires_grad:
            fails.add("dtype", sample, f"output {i}: requires_grad {go.requires_grad} != torch {to.requires_grad}")
        # the node's class name and its name() (they differ for torch::autograd::CopySlices)
        tn = (type(to.grad_fn).__name__, to.grad_fn.name()) if to.grad_fn is not None else None
        gn = (type(go.grad_fn).__name__, go.grad_fn.name()) if go.grad_fn is not None else None
        if tn != gn:
            fails.add("grad_fn", sample, f"output {i}: grad_fn {gn} != torch {tn}")
    if op.graph:
        tg = _graph_names([o.grad_fn for o in t_flat if isinstance(o, torch.Tensor)])
        gg = _graph_names([o.grad_fn for o in g_flat if isinstance(o, gt.Tensor)])
        if tg != gg:
            fails.add("graph", sample, f"nodes {dict(gg - tg)} extra, {dict(tg - gg)} missing")

    # -- first derivative -----------------------------------------------------------------------
    for to, go in zip(t_flat, g_flat):
        if isinstance(to, torch.Tensor) and to.grad_fn is not None and \
                to.grad_fn.name() == "torch::autograd::NotImplemented" and go.requires_grad:
            try:
                go.sum().backward()
                fails.add("grad", sample, "backward through a NotImplemented node did not raise")
            except RuntimeError as e:
                if "is not implemented" not in str(e):
                    fails.add("grad", sample, f"backward through a NotImplemented node: {e}")
    diff = [i for i, o in enumerate(t_flat) if isinstance(o, torch.Tensor) and o.requires_grad
            and o.grad_fn is not None and o.grad_fn.name() != "torch::autograd::NotImplemented"]
    t_in = [x for x in t_leaves if x.requires_grad]
    g_in = [x for x in g_leaves if x.requires_grad]
    if not op.grad or not diff or not t_in:
        return
    if any(not g_flat[i].requires_grad for i in diff):
        return  # already reported
    ups = [_random_like(rng, t_flat[i]) for i in diff]
    t_up = [torch.from_numpy(u) for u in ups]
    g_up = [gt.from_numpy(u.copy()) for u in ups]
    try:
        t_g = _grads(torch, [t_flat[i] for i in diff], t_in, t_up)
    except RuntimeError:  # torch cannot differentiate this sample (scatter with a larger src): nothing to compare
        return
    try:
        g_g = _grads(gt, [g_flat[i] for i in diff], g_in, g_up)
    except Exception as e:
        fails.add("grad", sample, f"glasstorch backward raised {type(e).__name__}: {e}")
        return
    for k, (tg_, gg_) in enumerate(zip(t_g, g_g)):
        if (tg_ is None) != (gg_ is None):
            fails.add("grad", sample, f"input {k}: grad {'None' if gg_ is None else 'a tensor'}, torch "
                                      f"{'None' if tg_ is None else 'a tensor'}")
        elif tg_ is not None:
            if repr(gg_.dtype) != str(tg_.dtype):
                fails.add("grad", sample, f"input {k}: grad dtype {gg_.dtype} != torch {tg_.dtype}")
            msg = _close(_np(gg_), _np(tg_), dtype, op.tol.get(dtype))
            if msg:
                fails.add("grad", sample, f"input {k}: {msg}")

    # -- second derivative ------------------------------------------------------------------------
    if not op.gradgrad or dtype != "float64":
        return
    t_args, t_kwargs, t_leaves = sample.build(torch)
    g_args, g_kwargs, g_leaves = sample.build(gt)
    t_flat, g_flat = _flat(op.fn(torch, *t_args, **t_kwargs)), _flat(op.fn(gt, *g_args, **g_kwargs))
    t_in = [x for x in t_leaves if x.requires_grad]
    g_in = [x for x in g_leaves if x.requires_grad]
    t_up = [torch.from_numpy(u).requires_grad_() for u in ups]
    g_up = [gt.from_numpy(u.copy()).requires_grad_() for u in ups]
    try:
        t_g = _grads(torch, [t_flat[i] for i in diff], t_in, t_up, create_graph=True)
    except RuntimeError:
        return
    try:
        g_g = _grads(gt, [g_flat[i] for i in diff], g_in, g_up, create_graph=True)
    except Exception as e:
        fails.add("gradgrad", sample, f"glasstorch backward(create_graph=True) raised {type(e).__name__}: {e}")
        return
    live = [k for k, g in enumerate(t_g) if g is not None and g.requires_grad]
    if not live:
        return
    ws = [rng.standard_normal(tuple(t_g[k].shape)) for k in live]
    t_s = sum((t_g[k] * torch.from_numpy(w)).sum() for k, w in zip(live, ws))
    try:
        g_s = sum((g_g[k] * gt.from_numpy(w.copy())).sum() for k, w in zip(live, ws))
        if not g_s.requires_grad:
            fails.add("gradgrad", sample, "first gradients do not require grad with create_graph=True")
            return
        g_gg = _grads(gt, g_s, g_in + g_up, None)
    except Exception as e:
        fails.add("gradgrad", sample, f"glasstorch double backward raised {type(e).__name__}: {e}")
        return
    t_gg = _grads(torch, t_s, t_in + t_up, None)
    for k, (tg_, gg_) in enumerate(zip(t_gg, g_gg)):
        a = np.zeros(1) if tg_ is None else _np(tg_)
        b = np.zeros(1) if gg_ is None else _np(gg_)
        if tg_ is None or gg_ is None:   # None and all-zero gradients are the same derivative here
            a, b = (np.zeros_like(b) if tg_ is None else a), (np.zeros_like(a) if gg_ is None else b)
        msg = _close(b, a, dtype, op.tol.get(dtype))
        if msg:
            fails.add("gradgrad", sample, f"input {k}: {msg}")


def _cases():
    for op in op_db:
        for dtype in op.dtypes:
            yield pytest.param(op, dtype, id=f"{op.name}-{dtype}")


@pytest.mark.parametrize("op,dtype", list(_cases()))
def test_op(op, dtype):
    fails = _Failures()
    rng = np.random.default_rng(0)
    samples = op.samples(dtype)
    assert samples, "an op without samples tests nothing"
    for sample in samples:
        run_sample(op, sample, dtype, fails, rng)
    failed = {c for c, _ in fails.items}
    unexpected = [m for c, m in fails.items if c not in op.xfail]
    if unexpected:
        pytest.fail(f"{op.name} ({dtype}): {len(unexpected)} differences from torch\n" + "\n".join(unexpected[:25]),
                    pytrace=False)
    fixed = [c for c in op.xfail if c not in failed]
    assert not fixed, f"{op.name}: the known differences {fixed} no longer occur: remove them from xfail"
    if failed:
        pytest.xfail("; ".join(f"{c}: {op.xfail[c]}" for c in sorted(failed)))


def test_registry_covers_the_issue_list():
    """Every op the issue names has an entry (a missing op would silently go untested)."""
    names = {op.name.split(".")[0] for op in op_db}
    wanted = """__add__ __sub__ __mul__ __truediv__ __floordiv__ __mod__ __pow__ __matmul__ __radd__ __rsub__
        __rmul__ __rtruediv__ __rpow__ __neg__ eq ne lt le gt ge logical_and logical_or logical_xor logical_not
        abs sign neg reciprocal exp exp2 log log2 log10 log1p expm1 sqrt rsqrt sin cos tan asin acos atan atan2
        sinh cosh tanh sigmoid relu erf clamp clip floor ceil round trunc frac where maximum minimum lerp
        masked_fill nan_to_num sum mean prod max min amax amin argmax argmin var std norm logsumexp softmax
        log_softmax cumsum cumprod any all matmul mm bmm mv dot outer einsum cat stack gather scatter
        scatter_add index_select take_along_dim repeat tile flip roll topk sort argsort tril triu diag diagonal
        view reshape flatten unflatten permute transpose t expand expand_as squeeze unsqueeze narrow select
        unbind split chunk __getitem__ __setitem__ add_ sub_ mul_ div_ zero_ fill_ copy_ clamp_ masked_fill_
        __iadd__ __isub__ __imul__ __itruediv__""".split()
    assert not [w for w in wanted if w not in names]
