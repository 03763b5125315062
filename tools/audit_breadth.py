"""Audit issue 9 ("breadth: the rest of the torch API ordinary programs reach for") against real torch.

Every name and behaviour the issue lists is one item here, run on torch (the oracle) and on glasstorch
with the same code, and printed as ``ok``, ``differs`` (with what differs) or ``missing`` (a name or
module glasstorch does not have). Then two systematic walks:

* ``out=``: every public function of ``torch._C._VariableFunctions`` that has an ``out`` overload in
  ``torch.ops.aten``: does glasstorch's function of that name accept ``out=``?  (signature, or a call)
* public names: ``dir()`` of torch, torch.Tensor, torch.nn.functional, torch.linalg, torch.special,
  torch.fft against glasstorch's -- what glasstorch lacks.

Run: ``python tools/audit_breadth.py`` (needs torch; ``--names`` prints every missing name, ``--quiet``
only the summary). Exit status 0 whatever it finds: it is a report, the tests are the gate.
"""
import argparse
import contextlib
import inspect
import io
import os
import sys
import tempfile
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import torch  # noqa: E402
import glasstorch as gt  # noqa: E402

ITEMS = []


def item(family, name):
    """Register ``fn(lib) -> value`` as an audit item, run on torch and on glasstorch and compared."""
    def deco(fn):
        ITEMS.append((family, name, fn))
        return fn
    return deco


class Missing(Exception):
    pass


def _plain(v):
    """A value both libraries' results can be compared as."""
    if isinstance(v, (torch.Tensor, gt.Tensor)):
        out = {"dtype": str(v.dtype), "shape": tuple(v.shape)}
        if v.dtype not in (torch.bfloat16,) and str(v.dtype) != "torch.bfloat16":
            out["values"] = v.detach().cpu().numpy() if isinstance(v, torch.Tensor) else v.detach().numpy()
        else:
            out["values"] = v.detach().float().numpy()
        return out
    if isinstance(v, (list, tuple)):
        return type(v).__name__, [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, (torch.dtype, gt.dtype)):
        return str(v)
    if isinstance(v, (torch.Size, gt.Size)):
        return tuple(v)
    if isinstance(v, type):
        return v.__name__
    return v


def _compare(a, b, path="result"):
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return f"{path}: keys {sorted(a)} vs {sorted(b)}"
        for k in a:
            d = _compare(a[k], b[k], f"{path}[{k!r}]")
            if d:
                return d
        return None
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        if len(a) != len(b):
            return f"{path}: {len(a)} items vs {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = _compare(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return f"{path}: shape {a.shape} vs {b.shape}"
        if a.dtype.kind in "fc" or b.dtype.kind in "fc":
            ok = np.allclose(a, b, rtol=1e-4, atol=1e-5, equal_nan=True)
        else:
            ok = np.array_equal(a, b)
        return None if ok else f"{path}: values differ (max |diff| {np.max(np.abs(a.astype(complex) - b)):.3g})"
    if isinstance(a, (tuple, list, dict)) != isinstance(b, (tuple, list, dict)):
        return f"{path}: {a!r:.60} vs {b!r:.60}"
    if isinstance(a, float) and isinstance(b, float):
        return None if np.isclose(a, b, rtol=1e-5, atol=1e-7, equal_nan=True) else f"{path}: {a} vs {b}"
    return None if a == b else f"{path}: {a!r:.80} vs {b!r:.80}"


def _run(fn, lib):
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        try:
            return "value", _plain(fn(lib))
        except (AttributeError, ImportError, ModuleNotFoundError) as e:
            if lib is gt:
                raise Missing(f"{type(e).__name__}: {e}") from None
            return "error", (type(e).__name__, str(e).split("\n")[0][:120])
        except Exception as e:  # noqa: BLE001
            return "error", (type(e).__name__, str(e).split("\n")[0][:120])


def _errors_agree(want, got):
    """Same exception type, and torch's message's first words in glasstorch's."""
    if want[0] != got[0]:
        return False
    head = want[1][:40]
    return head in got[1] or got[1][:40] in want[1]


# Where glasstorch deliberately differs from torch 2.13 (README, "Where glasstorch differs"): a differing
# result there is reported as "documented", not "differs".
DOCUMENTED = {
    "ndarray * Tensor": "README: ndarray op tensor is a Tensor; torch 2.13 (NumPy 2) raises TypeError",
    "ndarray - Tensor (float32 array)": "the same",
    "Tensor == ndarray / Tensor < ndarray": "the same (torch 2.13 refuses Tensor < ndarray)",
    "requires_grad Tensor + ndarray keeps the graph": "the same (torch 2.13 goes through NumPy and refuses)",
    "SparseAdam on a sparse Embedding": "README: no sparse tensors; Embedding(sparse=True) gives dense gradients, "
                                        "which SparseAdam refuses with torch's error",
}


def audit_items():
    rows = []
    for family, name, fn in ITEMS:
        try:
            want = _run(fn, torch)
            got = _run(fn, gt)
        except Missing as e:
            rows.append((family, name, "missing", str(e)[:150]))
            continue
        if want[0] != got[0]:
            rows.append((family, name, "differs", f"torch {want[0]} {want[1]!s:.90} / glasstorch {got[0]} "
                                                  f"{got[1]!s:.90}"))
        elif want[0] == "error":
            rows.append((family, name, "ok" if _errors_agree(want[1], got[1]) else "differs",
                         "" if _errors_agree(want[1], got[1]) else f"torch {want[1]} / glasstorch {got[1]}"))
        else:
            d = _compare(want[1], got[1])
            rows.append((family, name, "differs" if d else "ok", d or ""))
        if rows[-1][2] == "differs" and name in DOCUMENTED:
            rows[-1] = (family, name, "documented", DOCUMENTED[name])
    return rows


def _grad_of(lib, make, fn, *shapes, dtype="float64", seed=0):
    """fn's value and the gradient of sum(fn * weights) to each input."""
    rng = np.random.default_rng(seed)
    xs = [lib.tensor(make(rng, s), dtype=getattr(lib, dtype), requires_grad=True) for s in shapes]
    y = fn(*xs)
    w = lib.tensor(np.random.default_rng(seed + 9).standard_normal(tuple(y.shape)), dtype=y.dtype)
    (y * w).sum().backward()
    return [y.detach()] + [x.grad for x in xs]


def _normal(rng, s):
    return rng.standard_normal(s)


def _positive(rng, s):
    return rng.uniform(0.5, 2.0, s)


def _unit(rng, s):
    return rng.uniform(0.05, 0.95, s)


# ---- device discovery -------------------------------------------------------------------------------------
for _n in ("is_available", "current_accelerator", "device_count", "current_device_index"):
    item("device discovery", f"torch.accelerator.{_n}()")(lambda lib, _n=_n: getattr(lib.accelerator, _n)())
item("device discovery", "torch.accelerator.__all__ names")(
    lambda lib: sorted(n for n in torch.accelerator.__all__ if not hasattr(lib.accelerator, n)))
item("device discovery", "torch.backends.mps.is_available/is_built")(
    lambda lib: (lib.backends.mps.is_available(), lib.backends.mps.is_built()))
item("device discovery", "torch.xpu.is_available/device_count")(
    lambda lib: (lib.xpu.is_available(), lib.xpu.device_count()))
item("device discovery", "torch.mps.is_available/device_count")(
    lambda lib: (lib.backends.mps.is_available(), lib.mps.device_count()))
item("device discovery", "torch.cuda.is_available/device_count")(
    lambda lib: (lib.cuda.is_available(), lib.cuda.device_count()))
item("device discovery", "backends flags (cudnn.benchmark, deterministic, allow_tf32, mkldnn)")(
    lambda lib: (lib.backends.cudnn.benchmark, lib.backends.cudnn.deterministic,
                 lib.backends.cuda.matmul.allow_tf32, lib.backends.mkldnn.is_available() in (True, False)))


# ---- modules programs import ------------------------------------------------------------------------------
def _fixed_params(lib, model):
    """Give every parameter the same values in both libraries (their random streams differ)."""
    with lib.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(lib.tensor(np.random.default_rng(i).uniform(-0.5, 0.5, tuple(p.shape)), dtype=p.dtype))
    return model


def _lin(lib):
    return _fixed_params(lib, lib.nn.Linear(4, 3))


item("modules", "nn.parallel.DataParallel pass-through")(
    lambda lib: (lambda m: (type(m).__name__, type(m.module).__name__, m(lib.ones(2, 4))))(
        lib.nn.parallel.DataParallel(_lin(lib))))
item("modules", "nn.DataParallel is nn.parallel.DataParallel")(
    lambda lib: lib.nn.DataParallel is lib.nn.parallel.DataParallel)
item("modules", "nn.parallel.DistributedDataParallel without a process group: error")(
    lambda lib: lib.nn.parallel.DistributedDataParallel(_lin(lib)))
item("modules", "torch.functional.__all__ names")(
    lambda lib: sorted(n for n in torch.functional.__all__ if not hasattr(lib.functional, n)))
item("modules", "torch.hub names (load, load_state_dict_from_url, get_dir, set_dir, list, help, "
                "download_url_to_file)")(
    lambda lib: sorted(n for n in ("load", "load_state_dict_from_url", "get_dir", "set_dir", "list", "help",
                                   "download_url_to_file") if not hasattr(lib.hub, n)))


def _hub_local(lib):
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "hubconf.py"), "w") as f:
            f.write("dependencies = []\n"
                    "def tiny(n=3):\n"
                    "    import glasstorch as torch\n" if lib is gt else "    import torch\n")
        with open(os.path.join(d, "hubconf.py"), "w") as f:
            f.write(f"dependencies = []\ndef tiny(n=3):\n    import {lib.__name__} as torch\n"
                    f"    torch.manual_seed(0)\n    return torch.nn.Linear(n, 2)\n")
        m = lib.hub.load(d, "tiny", source="local", n=4)
        return (lib.hub.list(d, source="local"), m.weight)


item("modules", "torch.hub.load(local dir) and hub.list")(_hub_local)


def _hub_cache(lib):
    with tempfile.TemporaryDirectory() as d:
        old = lib.hub._hub_dir      # (restored as it was: None follows TORCH_HOME, a set_dir path would not)
        lib.hub.set_dir(d)
        try:
            os.makedirs(os.path.join(d, "checkpoints"))
            lib.save({"w": lib.arange(3.0)}, os.path.join(d, "checkpoints", "weights-abc.pth"))
            return lib.hub.load_state_dict_from_url("https://example.invalid/x/weights-abc.pth", progress=False)
        finally:
            lib.hub._hub_dir = old


item("modules", "torch.hub.load_state_dict_from_url served from <hub_dir>/checkpoints")(_hub_cache)


def _onnx_roundtrip(lib):
    import onnxruntime
    m = _lin(lib)
    x = lib.ones(2, 4)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.onnx")
        lib.onnx.export(m, (x,), path, input_names=["x"], output_names=["y"], dynamo=False) if lib is torch else \
            lib.onnx.export(m, (x,), path, input_names=["x"], output_names=["y"])
        sess = onnxruntime.InferenceSession(path)
        return sess.run(None, {"x": x.numpy()})[0]


item("modules", "torch.onnx.export -> onnxruntime")(_onnx_roundtrip)
item("modules", "torch.onnx.is_in_onnx_export()")(lambda lib: lib.onnx.is_in_onnx_export())
for _n in torch.special.__all__:
    item("torch.special", f"special.{_n} exists")(lambda lib, _n=_n: hasattr(lib.special, _n))
for _n in ("expit", "erf", "erfc", "erfinv", "gammaln", "digamma", "i0", "i0e", "i1", "i1e", "ndtr", "ndtri",
           "log_ndtr", "sinc", "entr", "logit", "expm1", "exp2", "log1p", "round", "psi", "erfcx", "bessel_j0",
           "bessel_j1", "spherical_bessel_j0", "modified_bessel_i0", "modified_bessel_k0"):
    _dom = _unit if _n in ("erfinv", "ndtri", "logit") else (_positive if _n.startswith(("gammaln", "digamma", "psi", "modified_bessel_k")) else _normal)
    item("torch.special", f"special.{_n} value+grad")(
        lambda lib, _n=_n, _dom=_dom: _grad_of(lib, _dom, getattr(lib.special, _n), (7,))
        if _n not in ("round", "bessel_j0", "bessel_j1", "spherical_bessel_j0", "modified_bessel_i0",
                      "modified_bessel_k0", "ndtri", "erfcx", "log_ndtr", "i1", "i1e")
        else getattr(lib.special, _n)(lib.tensor(_dom(np.random.default_rng(0), (7,)))))
item("torch.special", "special.logsumexp/softmax/log_softmax/xlogy/xlog1py/zeta/multigammaln/polygamma")(
    lambda lib: [lib.special.logsumexp(lib.arange(6.0).view(2, 3), 1), lib.special.softmax(lib.arange(3.0), 0),
                 lib.special.log_softmax(lib.arange(3.0), 0), lib.special.xlogy(lib.tensor([0., 2.]), 3.0),
                 lib.special.xlog1py(lib.tensor([0., 2.]), 3.0), lib.special.zeta(lib.tensor([2., 3.]), 1.0),
                 lib.special.multigammaln(lib.tensor([2.5, 3.0]), 2), lib.special.polygamma(1, lib.tensor([1.5]))])

_FFTS = {"fft": (8,), "ifft": (8,), "rfft": (8,), "irfft": (5,), "hfft": (5,), "ihfft": (8,), "fft2": (4, 6),
         "ifft2": (4, 6), "rfft2": (4, 6), "irfft2": (4, 5), "fftn": (2, 4, 6), "ifftn": (2, 4, 6),
         "rfftn": (2, 4, 6), "irfftn": (2, 4, 5), "hfft2": (4, 5), "ihfft2": (4, 6), "hfftn": (2, 4, 5),
         "ihfftn": (2, 4, 6)}
for _n, _s in _FFTS.items():
    item("torch.fft", f"fft.{_n} value+grad")(
        lambda lib, _n=_n, _s=_s: _grad_of(lib, _normal, lambda x: getattr(lib.fft, _n)(x).abs(), _s))
for _n in ("fftfreq", "rfftfreq"):
    item("torch.fft", f"fft.{_n}")(lambda lib, _n=_n: getattr(lib.fft, _n)(7, 0.5))
for _n in ("fftshift", "ifftshift"):
    item("torch.fft", f"fft.{_n}")(lambda lib, _n=_n: getattr(lib.fft, _n)(lib.arange(10).view(2, 5)))
item("torch.fft", "fft.__all__ names")(lambda lib: sorted(n for n in torch.fft.__all__ if not hasattr(lib.fft, n)))
for _kw in ({}, {"center": False}, {"normalized": True, "onesided": False}):
    item("stft", f"stft/istft round trip {_kw}")(
        lambda lib, _kw=_kw: (lambda x, w: _grad_of(lib, _normal, lambda s: lib.istft(
            lib.stft(s, 16, 4, window=w, return_complex=True, **_kw), 16, 4, window=w, **_kw), (2, 64)))(
            None, lib.hann_window(16) + (0.1 if _kw.get("center") is False else 0)))
item("stft", "stft without return_complex: error")(lambda lib: lib.stft(lib.ones(64), 16))
for _n in ("hann_window", "hamming_window", "bartlett_window", "blackman_window", "kaiser_window"):
    item("stft", f"{_n}(10) / periodic=False")(lambda lib, _n=_n: [getattr(lib, _n)(10),
                                                                   getattr(lib, _n)(10, periodic=False)])

# ---- legacy tensor types ----------------------------------------------------------------------------------
for _n in ("FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "ByteTensor", "BoolTensor"):
    item("legacy types", f"{_n}(2, 3) / {_n}([1, 0]) / x.type({_n}) / isinstance")(
        lambda lib, _n=_n: (lambda T: [T(2, 3).shape, T(2, 3).dtype, T([1, 0]), lib.ones(2).type(T),
                                       isinstance(lib.ones(2).type(T), T), isinstance(lib.ones(2, dtype=lib.float16), T),
                                       lib.ones(2).type(T).type()])(getattr(lib, _n)))
item("legacy types", "x.type('torch.DoubleTensor') / x.type() / torch.Tensor(2, 3)")(
    lambda lib: [lib.ones(2).type("torch.DoubleTensor"), lib.ones(2).type(), lib.Tensor(2, 3).shape,
                 lib.Tensor([1, 2]).dtype])


# ---- optimizers and schedulers ----------------------------------------------------------------------------
def _train(lib, make_opt, steps=6, closure=False, sparse=False):
    lib.manual_seed(0)
    if sparse:
        model = lib.nn.Embedding(5, 3, sparse=True)
        data = lib.tensor([[0, 2], [1, 4]])
    else:
        model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 1))
        data = lib.tensor(np.linspace(-1, 1, 15).reshape(5, 3), dtype=lib.float32)
    _fixed_params(lib, model)
    opt = make_opt(lib, model.parameters())
    losses = []
    for _ in range(steps):
        def step_closure():
            opt.zero_grad()
            loss = model(data).pow(2).mean()
            loss.backward()
            return loss
        if closure:
            losses.append(opt.step(step_closure).item())
        else:
            losses.append(step_closure().item())
            opt.step()
    return losses, [p.detach() for p in model.parameters()]


_OPTIMIZERS = {
    "LBFGS(line_search_fn='strong_wolfe')": (lambda lib, p: lib.optim.LBFGS(p, lr=1, line_search_fn="strong_wolfe"),
                                             True),
    "LBFGS()": (lambda lib, p: lib.optim.LBFGS(p, lr=0.5), True),
    "NAdam": (lambda lib, p: lib.optim.NAdam(p, lr=0.01), False),
    "NAdam(decoupled_weight_decay)": (lambda lib, p: lib.optim.NAdam(p, lr=0.01, weight_decay=0.1,
                                                                     decoupled_weight_decay=True), False),
    "RAdam": (lambda lib, p: lib.optim.RAdam(p, lr=0.01), False),
    "Adamax": (lambda lib, p: lib.optim.Adamax(p, lr=0.01), False),
    "ASGD": (lambda lib, p: lib.optim.ASGD(p, lr=0.01, t0=2), False),
    "Rprop": (lambda lib, p: lib.optim.Rprop(p, lr=0.01), False),
    "Adagrad": (lambda lib, p: lib.optim.Adagrad(p, lr=0.1), False),
    "Adadelta": (lambda lib, p: lib.optim.Adadelta(p), False),
    "RMSprop(centered, momentum)": (lambda lib, p: lib.optim.RMSprop(p, lr=0.01, centered=True, momentum=0.5),
                                    False),
    "AdamW(amsgrad)": (lambda lib, p: lib.optim.AdamW(p, lr=0.01, amsgrad=True), False),
    "SGD(nesterov)": (lambda lib, p: lib.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True), False),
    "Adafactor": (lambda lib, p: lib.optim.Adafactor(p, lr=0.01), False),
}
for _n, (_make, _closure) in _OPTIMIZERS.items():
    item("optimizers", _n)(lambda lib, _make=_make, _closure=_closure: _train(lib, _make, closure=_closure))
item("optimizers", "SparseAdam on a sparse Embedding")(
    lambda lib: _train(lib, lambda lib, p: lib.optim.SparseAdam(list(p), lr=0.1), sparse=True))
item("optimizers", "torch.optim.__all__ names")(
    lambda lib: sorted(n for n in torch.optim.__all__ if not hasattr(lib.optim, n)))

_SCHEDULERS = {
    "LambdaLR": lambda S, o: S.LambdaLR(o, lambda e: 0.9 ** e),
    "MultiplicativeLR": lambda S, o: S.MultiplicativeLR(o, lambda e: 0.95),
    "StepLR": lambda S, o: S.StepLR(o, 3, 0.5),
    "MultiStepLR": lambda S, o: S.MultiStepLR(o, [2, 5], 0.3),
    "ConstantLR": lambda S, o: S.ConstantLR(o, 0.5, 4),
    "LinearLR": lambda S, o: S.LinearLR(o, 0.2, 1.0, 5),
    "ExponentialLR": lambda S, o: S.ExponentialLR(o, 0.9),
    "SequentialLR": lambda S, o: S.SequentialLR(o, [S.ConstantLR(o, 0.5, 2), S.ExponentialLR(o, 0.9)], [3]),
    "CosineAnnealingLR": lambda S, o: S.CosineAnnealingLR(o, 5, 0.01),
    "ChainedScheduler": lambda S, o: S.ChainedScheduler([S.ConstantLR(o, 0.5, 2), S.ExponentialLR(o, 0.9)]),
    "ReduceLROnPlateau": lambda S, o: S.ReduceLROnPlateau(o, patience=1),
    "CyclicLR": lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=3),
    "CyclicLR(exp_range)": lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=2, mode="exp_range", gamma=0.9),
    "CosineAnnealingWarmRestarts": lambda S, o: S.CosineAnnealingWarmRestarts(o, 3, 2),
    "OneCycleLR": lambda S, o: S.OneCycleLR(o, 0.1, total_steps=12),
    "OneCycleLR(linear, three_phase)": lambda S, o: S.OneCycleLR(o, 0.1, total_steps=12, anneal_strategy="linear",
                                                                 three_phase=True),
    "PolynomialLR": lambda S, o: S.PolynomialLR(o, 6, 2.0),
}


def _lrs(lib, make):
    p = lib.nn.Parameter(lib.zeros(2))
    opt = lib.optim.SGD([p], lr=0.1, momentum=0.9)
    sched = make(lib.optim.lr_scheduler, opt)
    out = []
    for epoch in range(10):
        opt.step()
        if type(sched).__name__ == "ReduceLROnPlateau":
            sched.step(1.0)
        else:
            sched.step()
        out.append(round(opt.param_groups[0]["lr"], 10))
    out.append(round(opt.param_groups[0].get("momentum", 0), 10))
    return out


for _n, _make in _SCHEDULERS.items():
    item("schedulers", _n)(lambda lib, _make=_make: _lrs(lib, _make))
item("schedulers", "lr_scheduler.__all__ names")(
    lambda lib: sorted(n for n in torch.optim.lr_scheduler.__all__ if not hasattr(lib.optim.lr_scheduler, n)))
item("schedulers", "LRScheduler / _LRScheduler subclassed by a third-party scheduler")(
    lambda lib: (lambda C: _lrs(lib, lambda S, o: C(o)))(type("Warm", (lib.optim.lr_scheduler._LRScheduler,), {
        "get_lr": lambda self: [b * min(1.0, (self.last_epoch + 1) / 4) for b in self.base_lrs]})))
item("schedulers", "_LRScheduler subclasses LRScheduler")(
    lambda lib: issubclass(lib.optim.lr_scheduler._LRScheduler, lib.optim.lr_scheduler.LRScheduler))


# ---- mixed precision --------------------------------------------------------------------------------------
def _autocast_dtypes(lib):
    x = lib.ones(2, 4)
    w = lib.ones(3, 4)
    img = lib.ones(1, 2, 5, 5)
    with lib.autocast(device_type="cpu", dtype=lib.bfloat16):
        r = {"linear": lib.nn.functional.linear(x, w), "matmul": x @ w.t(), "mm": lib.mm(x, w.t()),
             "bmm": lib.bmm(x[None], w.t()[None]), "addmm": lib.addmm(lib.ones(3), x, w.t()),
             "conv2d": lib.nn.functional.conv2d(img, lib.ones(3, 2, 3, 3)),
             "relu": lib.relu(x), "add": x + 1, "exp": lib.exp(x), "softmax": lib.softmax(x, 1),
             "layer_norm": lib.nn.functional.layer_norm(x, (4,)), "sum": x.sum(),
             "mse_loss": lib.nn.functional.mse_loss(x, x), "cross_entropy": lib.nn.functional.cross_entropy(
                 x, lib.tensor([0, 1])), "linear->relu": lib.relu(lib.nn.functional.linear(x, w)),
             "bf16 + fp32": lib.nn.functional.linear(x, w) + x[:, :3],
             "baddbmm": lib.baddbmm(lib.ones(1, 2, 3), x[None], w.t()[None]),
             "conv_transpose2d": lib.nn.functional.conv_transpose2d(img, lib.ones(2, 3, 3, 3)),
             "topk": lib.topk(x, 2)[0], "prod": lib.prod(x), "cumsum": lib.cumsum(x, 0),
             "binary_cross_entropy_with_logits": lib.nn.functional.binary_cross_entropy_with_logits(x, x),
             "group_norm": lib.nn.functional.group_norm(img, 1), "pdist": lib.nn.functional.pdist(x),
             "cdist": lib.cdist(x, x), "log_softmax": lib.log_softmax(x, 1), "norm": lib.norm(x),
             "mean": x.mean(), "pow": x.pow(2), "sigmoid": x.sigmoid()}
    return {k: str(v.dtype) if v is not None else None for k, v in r.items()}


item("mixed precision", "autocast(cpu, bfloat16): result dtypes of 29 ops")(_autocast_dtypes)
def _autocast_fp16(lib):
    with lib.autocast("cpu", dtype=lib.float16):
        inside = [(lib.ones(2, 2) @ lib.ones(2, 2)).dtype, lib.is_autocast_enabled("cpu"),
                  lib.get_autocast_dtype("cpu")]
    return inside + [lib.is_autocast_enabled("cpu")]


item("mixed precision", "autocast(cpu, float16)")(_autocast_fp16)
item("mixed precision", "torch.is_autocast_enabled('cpu') / get_autocast_dtype('cpu')")(
    lambda lib: (lib.is_autocast_enabled("cpu"), lib.get_autocast_dtype("cpu")))


def _scaler(lib, make):
    model = _fixed_params(lib, lib.nn.Linear(3, 1))
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    scaler = make(lib)
    out = []
    for i in range(3):
        opt.zero_grad()
        loss = model(lib.ones(2, 3) * (i + 1)).pow(2).mean()
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        out.append(model.weight.grad.clone())
        scaler.step(opt)
        scaler.update()
        out.append(float(scaler.get_scale()) if scaler.is_enabled() else 1.0)
    return out + [model.weight.detach(), scaler.is_enabled(), sorted(scaler.state_dict())]


item("mixed precision", "torch.amp.GradScaler('cpu')")(lambda lib: _scaler(lib, lambda lib: lib.amp.GradScaler("cpu")))
item("mixed precision", "torch.amp.GradScaler(enabled=False)")(
    lambda lib: _scaler(lib, lambda lib: lib.amp.GradScaler("cpu", enabled=False)))
item("mixed precision", "torch.cuda.amp.GradScaler() without CUDA (disabled)")(
    lambda lib: _scaler(lib, lambda lib: lib.cuda.amp.GradScaler()))
item("mixed precision", "torch.cpu.amp.autocast()")(
    lambda lib: (lambda ctx: (ctx.__enter__(), str((lib.ones(2, 2) @ lib.ones(2, 2)).dtype),
                              ctx.__exit__(None, None, None))[1])(lib.cpu.amp.autocast()))


# ---- op arguments -----------------------------------------------------------------------------------------
def _out(lib, fn):
    out = lib.empty(0)
    r = fn(out)
    return [out, r is out]


_OUT_CALLS = {
    "matmul": lambda lib, o: lib.matmul(lib.ones(2, 3), lib.ones(3, 2), out=o),
    "add": lambda lib, o: lib.add(lib.ones(2), 3, alpha=2, out=o),
    "cat": lambda lib, o: lib.cat([lib.ones(2), lib.zeros(3)], out=o),
    "stack": lambda lib, o: lib.stack([lib.ones(2), lib.zeros(2)], out=o),
    "sum": lambda lib, o: lib.sum(lib.ones(2, 3), 1, out=o),
    "mean": lambda lib, o: lib.mean(lib.ones(2, 3), 1, out=o),
    "mm": lambda lib, o: lib.mm(lib.ones(2, 3), lib.ones(3, 2), out=o),
    "bmm": lambda lib, o: lib.bmm(lib.ones(1, 2, 3), lib.ones(1, 3, 2), out=o),
    "exp": lambda lib, o: lib.exp(lib.ones(3), out=o),
    "clamp": lambda lib, o: lib.clamp(lib.arange(5.0), 1, 3, out=o),
    "where": lambda lib, o: lib.where(lib.tensor([True, False]), lib.ones(2), lib.zeros(2), out=o),
    "arange": lambda lib, o: lib.arange(5.0, out=o),
    "linspace": lambda lib, o: lib.linspace(0, 1, 5, out=o),
    "zeros": lambda lib, o: lib.zeros(2, 3, out=o),
    "max(dim)": lambda lib, o: lib.max(lib.arange(6.0).view(2, 3), 1, out=(lib.empty(0), lib.empty(0, dtype=lib.long))),
    "sort": lambda lib, o: lib.sort(lib.tensor([3.0, 1.0, 2.0]), out=(lib.empty(0), lib.empty(0, dtype=lib.long))),
    "topk": lambda lib, o: lib.topk(lib.tensor([3.0, 1.0, 2.0]), 2, out=(lib.empty(0), lib.empty(0, dtype=lib.long))),
    "index_select": lambda lib, o: lib.index_select(lib.arange(5.0), 0, lib.tensor([1, 3]), out=o),
    "gather": lambda lib, o: lib.gather(lib.arange(5.0), 0, lib.tensor([1, 3]), out=o),
    "linalg.vector_norm": lambda lib, o: lib.linalg.vector_norm(lib.arange(5.0), out=o),
    "linalg.inv": lambda lib, o: lib.linalg.inv(lib.eye(2) * 2, out=o),
    "einsum (no out in torch)": lambda lib, o: lib.einsum("ij->ji", lib.ones(2, 3), out=o),
    "cumsum": lambda lib, o: lib.cumsum(lib.arange(5.0), 0, out=o),
    "pow": lambda lib, o: lib.pow(lib.arange(5.0), 2, out=o),
    "x.add(out=) (Tensor method: TypeError in torch)": lambda lib, o: lib.ones(2).add(1, out=o),
    "x.exp(out=) (Tensor method)": lambda lib, o: lib.ones(2).exp(out=o),
    "out= with requires_grad input: error": lambda lib, o: lib.exp(lib.ones(2, requires_grad=True), out=o),
}
for _n, _f in _OUT_CALLS.items():
    item("out=", _n)(lambda lib, _f=_f: _out(lib, lambda o: _f(lib, o)))

item("out=", "randn (random values: shape and identity)")(
    lambda lib: (lambda o: (lib.randn(2, 3, out=o) is o, tuple(o.shape)))(lib.empty(0)))

item("keywords", "flip(dims=[0])")(lambda lib: lib.flip(lib.arange(6).view(2, 3), dims=[0]))
item("keywords", "x.flip(dims=(1,))")(lambda lib: lib.arange(6).view(2, 3).flip(dims=(1,)))
item("keywords", "std_mean(x, dim=1, correction=0)")(lambda lib: lib.std_mean(lib.arange(6.0).view(2, 3), dim=1,
                                                                              correction=0))
item("keywords", "var_mean(x, dim=(0, 1), keepdim=True, unbiased=False)")(
    lambda lib: lib.var_mean(lib.arange(6.0).view(2, 3), dim=(0, 1), keepdim=True, unbiased=False))
item("keywords", "var(x, 1, correction=2) / std(x, correction=0)")(
    lambda lib: [lib.var(lib.arange(6.0).view(2, 3), 1, correction=2), lib.arange(6.0).std(correction=0)])
item("keywords", "sum(axis=0, keepdims=True)")(lambda lib: lib.arange(6.0).view(2, 3).sum(axis=0, keepdims=True))
item("keywords", "x.permute(dims=[1, 0]) / x.repeat(repeats=..)")(
    lambda lib: [lib.ones(2, 3).permute(dims=[1, 0]).shape])
item("keywords", "torch.max(input=x, dim=0)")(lambda lib: lib.max(input=lib.arange(6.0).view(2, 3), dim=0))
item("keywords", "torch.cat(tensors=[...], dim=0) / torch.concat / torch.concatenate(axis=)")(
    lambda lib: [lib.cat(tensors=[lib.ones(2)], dim=0), lib.concat([lib.ones(1)]), lib.concatenate([lib.ones(1)],
                                                                                                    axis=0)])
item("keywords", "x.transpose(dim0=0, dim1=1) / x.squeeze(dim=0) / x.unsqueeze(dim=1)")(
    lambda lib: [lib.ones(2, 3).transpose(dim0=0, dim1=1).shape, lib.ones(1, 3).squeeze(dim=0).shape,
                 lib.ones(3).unsqueeze(dim=1).shape])

item("numpy", "Tensor + ndarray")(lambda lib: (lambda r: (type(r).__name__, r))(lib.ones(3) + np.arange(3.0)))
item("numpy", "ndarray * Tensor")(lambda lib: (lambda r: (type(r).__name__, r))(np.arange(3.0) * lib.ones(3)))
item("numpy", "ndarray - Tensor (float32 array)")(
    lambda lib: (lambda r: (type(r).__name__, r))(np.arange(3, dtype=np.float32) - lib.ones(3)))
item("numpy", "np.exp(Tensor)")(lambda lib: (lambda r: (type(r).__name__, r))(np.exp(lib.ones(3))))
item("numpy", "np.add(Tensor, Tensor)")(lambda lib: (lambda r: (type(r).__name__, r))(np.add(lib.ones(3), lib.ones(3))))
item("numpy", "np.sum(Tensor)")(lambda lib: (lambda r: (type(r).__name__, r))(np.sum(lib.ones(3))))
item("numpy", "np.asarray(Tensor) / np.array(Tensor, dtype)")(
    lambda lib: [np.asarray(lib.ones(3)), np.array(lib.ones(2), dtype=np.int64)])
item("numpy", "Tensor == ndarray / Tensor < ndarray")(
    lambda lib: [lib.arange(3.0) == np.arange(3.0), lib.arange(3.0) < np.ones(3)])
item("numpy", "np.float64 * Tensor / Tensor * np.float32")(
    lambda lib: [np.float64(2) * lib.ones(2), lib.ones(2) * np.float32(2), np.int64(2) + lib.ones(2, dtype=lib.long)])
item("numpy", "requires_grad Tensor + ndarray keeps the graph")(
    lambda lib: (lambda x: (lambda r: (r.requires_grad, type(r.grad_fn).__name__))(x + np.ones(2)))(
        lib.ones(2, requires_grad=True)))

# ---- ops --------------------------------------------------------------------------------------------------
item("ops", "logcumsumexp value+grad")(lambda lib: _grad_of(lib, _normal, lambda x: lib.logcumsumexp(x, 1), (3, 5)))
item("ops", "copysign value+grad")(lambda lib: _grad_of(lib, _normal, lib.copysign, (4,), (4,)))
item("ops", "logaddexp value+grad")(lambda lib: _grad_of(lib, _normal, lib.logaddexp, (4,), (4,)))
item("ops", "logaddexp2 value+grad")(lambda lib: _grad_of(lib, _normal, lib.logaddexp2, (4,), (4,)))
item("ops", "<< / >> / bitwise_left_shift / bitwise_right_shift")(
    lambda lib: (lambda a: [a << 2, a >> 1, lib.bitwise_left_shift(a, lib.tensor([1, 2, 3, 4])),
                            lib.bitwise_right_shift(a, 1), 3 << a, a.bitwise_left_shift(1),
                            lib.tensor([1, 2], dtype=lib.uint8) << 7])(lib.tensor([1, -2, 8, 100])))
item("ops", "Tensor.unfold value+grad")(lambda lib: _grad_of(lib, _normal, lambda x: x.unfold(1, 3, 2), (2, 7)))
item("ops", "F.unfold / F.fold value+grad")(
    lambda lib: _grad_of(lib, _normal, lambda x: lib.nn.functional.fold(
        lib.nn.functional.unfold(x, 2, padding=1, stride=1), (4, 5), 2, padding=1), (1, 2, 4, 5)))
for _d, _shape in ((1, (1, 2, 8)), (2, (1, 2, 4, 6)), (3, (1, 1, 4, 4, 4))):
    item("ops", f"max_unpool{_d}d (F and nn.MaxUnpool{_d}d) value+grad")(
        lambda lib, _d=_d, _shape=_shape: _grad_of(lib, _normal, lambda x: (lambda p: getattr(
            lib.nn, f"MaxUnpool{_d}d")(2)(*p) + getattr(lib.nn.functional, f"max_unpool{_d}d")(*p, 2))(
            getattr(lib.nn.functional, f"max_pool{_d}d")(x, 2, return_indices=True)), _shape))
item("ops", "view(dtype) bit reinterpretation")(
    lambda lib: [lib.tensor([1.0, -2.0]).view(lib.int32), lib.tensor([1.0]).view(lib.int16),
                 lib.tensor([1, 2], dtype=lib.int32).view(lib.float32), lib.tensor([1.0], dtype=lib.float64).view(
                     lib.uint8)])
item("ops", "advanced indexing: nested lists, tuples of lists")(
    lambda lib: (lambda x: [x[[[0, 1], [1, 0]]], x[[0, 1], [1, 2]], x[([0, 1], [2, 0])], x[[[0], [1]], [[1, 2]]],
                            x[..., [0, 0]], x[[True, False]], x[[0, 1]]])(lib.arange(12).view(3, 4)))
item("ops", "nonzero on empty input: shape (0, ndim)")(
    lambda lib: [lib.nonzero(lib.zeros(0, 3)), lib.zeros(2, 0, 4).nonzero(), lib.zeros(0).nonzero(as_tuple=True)])
item("ops", "pad(mode='circular') value+grad")(
    lambda lib: _grad_of(lib, _normal, lambda x: lib.nn.functional.pad(x, (1, 2, 2, 1), mode="circular"),
                         (1, 2, 3, 4)))
item("ops", "uint8 bilinear interpolate rounding")(
    lambda lib: lib.nn.functional.interpolate(lib.tensor(np.random.default_rng(0).integers(0, 256, (1, 2, 5, 7)),
                                                         dtype=lib.uint8), size=(8, 11), mode="bilinear",
                                              align_corners=False))
item("ops", "uint8 bilinear interpolate antialias downscale")(
    lambda lib: lib.nn.functional.interpolate(lib.tensor(np.random.default_rng(0).integers(0, 256, (1, 2, 9, 9)),
                                                         dtype=lib.uint8), size=(4, 5), mode="bilinear",
                                              antialias=True))
item("ops", "scatter_reduce prod with zeros value+grad")(
    lambda lib: (lambda x, s: (lambda y: (y.sum().backward(), y, x.grad, s.grad)[1:])(
        x.scatter_reduce(0, lib.tensor([0, 0, 1, 1]), s, "prod")))(
        lib.tensor([2.0, 0.0], requires_grad=True), lib.tensor([0.0, 3.0, 4.0, 0.0], requires_grad=True)))
for _r in ("sum", "mean", "amax", "amin", "prod"):
    item("ops", f"scatter_reduce {_r} include_self=False")(
        lambda lib, _r=_r: lib.arange(4.0).scatter_reduce(0, lib.tensor([0, 0, 2, 3, 3]),
                                                          lib.tensor([1.0, 5, -2, 7, 0]), _r, include_self=False))
item("ops", "scatter_reduce bad reduce: error")(
    lambda lib: lib.zeros(3).scatter_reduce(0, lib.tensor([0]), lib.ones(1), "max"))
item("ops", "scatter_reduce index dtype: error")(
    lambda lib: lib.zeros(3).scatter_reduce(0, lib.tensor([0.0]), lib.ones(1), "sum"))

# ---- errors -----------------------------------------------------------------------------------------------
item("errors", "diagonal(dim1 == dim2)")(lambda lib: lib.ones(3, 3).diagonal(0, 1, 1))
item("errors", "flip with repeated dims")(lambda lib: lib.ones(2, 3).flip([0, 0]))
item("errors", "max_pool2d kernel exceeds padded input")(lambda lib: lib.nn.functional.max_pool2d(lib.ones(1, 1, 2, 2), 3))
item("errors", "avg_pool2d padding > half kernel")(lambda lib: lib.nn.functional.avg_pool2d(lib.ones(1, 1, 4, 4), 2,
                                                                                           padding=2))
item("errors", "max_pool1d padding > half kernel")(lambda lib: lib.nn.functional.max_pool1d(lib.ones(1, 1, 8), 2,
                                                                                           padding=2))
item("errors", "conv2d kernel exceeds padded input")(
    lambda lib: lib.nn.functional.conv2d(lib.ones(1, 1, 2, 2), lib.ones(1, 1, 3, 3)))
item("errors", "conv1d wrong channels")(lambda lib: lib.nn.functional.conv1d(lib.ones(1, 2, 5), lib.ones(1, 3, 3)))
item("errors", "linspace negative steps")(lambda lib: lib.linspace(0, 1, -1))
item("errors", "arange bad step sign")(lambda lib: lib.arange(0, 5, -1))
item("errors", "cat of mismatched shapes")(lambda lib: lib.cat([lib.ones(2, 3), lib.ones(2, 4)]))
item("errors", "matmul shape mismatch")(lambda lib: lib.ones(2, 3) @ lib.ones(2, 3))
item("errors", "view of non-contiguous")(lambda lib: lib.ones(2, 3).t().view(6))


# ---- systematic walks -------------------------------------------------------------------------------------
def _torch_functions_with_out():
    """The public torch functions whose Python binding takes ``out=`` in at least one overload: read from
    torch's own type stub of ``torch._C._VariableFunctions`` (the binding's signatures)."""
    import ast
    stub = os.path.join(os.path.dirname(torch.__file__), "_C", "_VariableFunctions.pyi")
    with open(stub) as f:
        tree = ast.parse(f.read())
    names = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)
             and any(a.arg == "out" for a in node.args.kwonlyargs + node.args.args)}
    return sorted(n for n in names if not n.startswith("_") and hasattr(torch, n))


def _accepts_out(fn):
    try:
        sig = inspect.signature(fn, follow_wrapped=False)   # (out_wrapper's own signature)
    except (TypeError, ValueError):
        return None
    ps = sig.parameters
    if "out" in ps:
        return True
    if any(p.kind is p.VAR_KEYWORD for p in ps.values()):
        return None      # unknown from the signature: **kwargs
    return False


def out_walk():
    """Every public torch function that takes ``out=``: glasstorch's has it / takes out= / doesn't."""
    names = _torch_functions_with_out()
    missing_fn, no_out, unknown, ok = [], [], [], []
    for n in names:
        fn = getattr(gt, n, None)
        if fn is None:
            missing_fn.append(n)
            continue
        a = _accepts_out(fn)
        (ok if a else no_out if a is False else unknown).append(n)
    return names, ok, no_out, unknown, missing_fn


def _public(obj):
    return {n for n in dir(obj) if not n.startswith("_")}


NAMESPACES = [("torch", lambda m: m), ("torch.Tensor", lambda m: m.Tensor),
              ("torch.nn.functional", lambda m: m.nn.functional), ("torch.linalg", lambda m: m.linalg),
              ("torch.special", lambda m: m.special), ("torch.fft", lambda m: m.fft),
              ("torch.nn", lambda m: m.nn), ("torch.optim", lambda m: m.optim)]


def names_walk():
    rows = []
    for label, get in NAMESPACES:
        theirs, ours = _public(get(torch)), _public(get(gt))
        rows.append((label, len(theirs), len(theirs & ours), sorted(theirs - ours)))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--names", action="store_true", help="print every missing public name")
    ap.add_argument("--quiet", action="store_true", help="only the summary")
    args = ap.parse_args()

    rows = audit_items()
    counts = {"ok": 0, "documented": 0, "differs": 0, "missing": 0}
    for family, name, status, detail in rows:
        counts[status] += 1
        if not args.quiet and (status != "ok" or not args.names):
            print(f"{status:8} [{family}] {name}" + (f"  -- {detail}" if detail else ""))
    print(f"\nitems: {len(rows)}  ok {counts['ok']}  documented difference {counts['documented']}  "
          f"differs {counts['differs']}  missing {counts['missing']}")

    names, ok, no_out, unknown, missing_fn = out_walk()
    print(f"\nout=: {len(names)} public torch functions take out= (torch's _VariableFunctions.pyi); glasstorch: takes out= {len(ok)}, "
          f"does not {len(no_out)}, unknown (**kwargs) {len(unknown)}, function missing {len(missing_fn)}")
    if not args.quiet:
        print("  no out=: " + " ".join(no_out))
        print("  unknown: " + " ".join(unknown))
        if args.names:
            print("  function missing: " + " ".join(missing_fn))

    print("\npublic names (torch's, and how many glasstorch has):")
    for label, n, have, lacking in names_walk():
        print(f"  {label:22} {have:5}/{n:<5} missing {len(lacking)}")
        if args.names:
            print("    " + " ".join(lacking))


if __name__ == "__main__":
    main()
