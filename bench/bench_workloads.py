"""The book-sized workloads of issue 13, glasstorch against torch in the same run.

Every row is one training step (or one forward) of a workload the books run eagerly, timed as the
median over interleaved repetitions (glasstorch, torch, glasstorch, torch, ...) so that a slower
moment of a shared machine hits both; the ratio column is the median of the per-repetition ratios
glasstorch / torch (each repetition's pair ran back to back), and its spread is their 25th-75th
percentile (how noisy the figure is). Times are wall-clock
(what a user waits); the CPU-time ratio beside it (process time, all threads) is steadier on a shared
machine with one thread, and shows threads that spin instead of working when it exceeds the wall ratio.

  chain        200 small float32 ops on 32x32 tensors that require grad (h + b, h * w, h.tanh(),
               h @ w, repeated), then .sum().backward()
  chain-nograd the same 200 ops under no_grad, forward only
               (both chain rows also time the NumPy floor: the same arithmetic, and for `chain` the
               backward's formulas, by hand on arrays -- bench/chain_numpy.py -- in the same
               interleaving: what no layer on NumPy can beat, and what the goal leaves per op)
  mlp          784-256-256-10 (ReLU), batch 256, cross_entropy, optim.SGD(lr=0.1)
               (also its NumPy floor: the step by hand on arrays, in torch's GEMM layouts,
               numpy_mlp_step; its losses follow torch's step after step)
  lenet        LeNet with ReLU and MaxPool2d, 1x28x28, batch 128, cross_entropy, optim.SGD(lr=0.1)
  lstm         language model: one-hot (vocab 28) -> nn.LSTM(28, 256) -> Linear(256, 28), 35 steps x
               batch 32, cross_entropy, clip_grad_norm_(max_norm=1), optim.SGD(lr=1)
  lstm-d2l     the same model at the sizes d2l's recurrent chapters train it (d2l.TimeMachine(batch_size=1024,
               num_steps=32), num_hiddens=32): nn.LSTM(28, 32), 32 steps x batch 1024 (no goal in issue 13;
               added at stop 35, where it read 1.82x)
  transformer  nn.TransformerEncoderLayer(d_model 128, 4 heads, ffn 512, dropout 0, batch_first),
               sequence 64, batch 32, loss = mean of squares, optim.Adam(lr=1e-3)

Both frameworks start from the same weights (drawn once with NumPy and copied into both) and the
same batch; the first losses are compared before timing, so both run the same computation.

Threads (--threads): "1" and "2" set torch.set_num_threads(n) and limit NumPy's BLAS to n threads
with threadpoolctl (both frameworks; glasstorch's own thread setting is not used, so the script runs
on any tree); "default" touches neither (each framework's own default). --busy starts a second
process spinning on one core for the whole run (a busy laptop).

Also, for mlp and lenet, minor page faults per step (memory the allocator gave back to the kernel
and must map and zero again); and with --rss, the peak resident memory of each workload's training
step, each framework alone in a fresh process; and with --import, `import glasstorch` against
`import torch` in fresh interpreters.

    python bench/bench_workloads.py                        # all rows, one thread, ~3-6 minutes
    python bench/bench_workloads.py --threads 2 --busy     # two threads, one core kept busy
    python bench/bench_workloads.py --rows mlp,lenet --reps 31
    python bench/bench_workloads.py --rows none --import --rss

Devices (--device cuda): both frameworks run every row on the GPU (glasstorch through CuPy, torch
CUDA eager on the same GPU), with a synchronize before each clock read so queued kernels count; the
first losses are compared as on the CPU. Without a GPU for either framework the script says so and
exits with status 2 (tools/gpu_check.sh runs it on a GPU machine).

    python bench/bench_workloads.py --device cuda --rows chain,mlp,lenet,transformer

Only public torch API is used (nn modules, nn.functional, optim, no_grad): the script runs on any
glasstorch tree. The figures are a benchmark, not a test.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402

ROWS = ("chain", "chain-nograd", "mlp", "lenet", "lstm", "lstm-d2l", "transformer")
GOALS = {"chain": 0.8, "chain-nograd": 0.8, "mlp": 1.0, "lenet": 1.0, "lstm": 1.3, "transformer": 1.1}
# on a GPU (issue 15): within 1.5x of torch CUDA eager for the MLP and the Transformer layer
CUDA_GOALS = {"mlp": 1.5, "transformer": 1.5}
FAULT_ROWS = ("mlp", "lenet")


# ---------------------------------------------------------------------------------------- models

def _mlp(nn):
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))


def _lenet(nn):
    return nn.Sequential(nn.Conv2d(1, 6, kernel_size=5, padding=2), nn.ReLU(), nn.MaxPool2d(kernel_size=2, stride=2),
                         nn.Conv2d(6, 16, kernel_size=5), nn.ReLU(), nn.MaxPool2d(kernel_size=2, stride=2),
                         nn.Flatten(), nn.Linear(16 * 5 * 5, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                         nn.Linear(84, 10))


VOCAB, HIDDEN, STEPS, BATCH = 28, 256, 35, 32
LM_SIZES = {"lstm": (HIDDEN, STEPS, BATCH), "lstm-d2l": (32, 32, 1024)}   # (hidden, steps, batch)
D_MODEL, HEADS, FFN, SEQ = 128, 4, 512, 64
CHAIN_OPS, CHAIN_SIZE = 200, 32


class _LanguageModel:
    """d2l's concise RNN language model: one-hot input, nn.LSTM, a Linear decoder over the vocabulary."""

    def __init__(self, T, device, hidden):
        self.T, self.hidden = T, hidden
        self.rnn = T.nn.LSTM(VOCAB, hidden).to(device)
        self.head = T.nn.Linear(hidden, VOCAB).to(device)

    def parameters(self):
        return list(self.rnn.parameters()) + list(self.head.parameters())

    def __call__(self, X):   # X: (batch, steps) token ids
        F = self.T.nn.functional
        out, _ = self.rnn(F.one_hot(X.T, VOCAB).to(self.T.float32))
        return self.head(out.reshape(-1, self.hidden))


def _same_weights(T, params, seed):
    """Fill ``params`` with one seeded NumPy draw, so both frameworks start from the same point."""
    rng = np.random.default_rng(seed)
    with T.no_grad():
        for p in params:
            scale = 0.1 if p.dim() > 1 else 0.01
            p.copy_(T.tensor((rng.standard_normal(tuple(p.shape)) * scale).astype(np.float32), device=p.device))


def make_step(T, row, seed=0, device="cpu"):
    """A closure running one step of ``row`` in framework ``T`` (glasstorch or torch) on ``device``;
    returns the loss."""
    rng = np.random.default_rng(seed + 1)
    F = T.nn.functional

    def tensor(array, **kwargs):
        return T.tensor(array, device=device, **kwargs)
    if row in ("chain", "chain-nograd"):
        x, w, b = (tensor(a.astype(np.float32), requires_grad=True) for a in (
            rng.standard_normal((CHAIN_SIZE, CHAIN_SIZE)), rng.standard_normal((CHAIN_SIZE, CHAIN_SIZE)) / CHAIN_SIZE ** 0.5,
            rng.standard_normal((CHAIN_SIZE, CHAIN_SIZE)) * 0.1))

        def forward():
            h = x
            for _ in range(CHAIN_OPS // 4):
                h = h + b
                h = h * w
                h = h.tanh()
                h = h @ w
            return h.sum()

        if row == "chain-nograd":
            def step():
                with T.no_grad():
                    return forward()
        else:
            def step():
                x.grad = w.grad = b.grad = None
                loss = forward()
                loss.backward()
                return loss
        return step

    if row in ("mlp", "lenet"):
        model = (_mlp if row == "mlp" else _lenet)(T.nn).to(device)
        _same_weights(T, model.parameters(), seed)
        shape = (256, 784) if row == "mlp" else (128, 1, 28, 28)
        X = tensor(rng.standard_normal(shape).astype(np.float32))
        y = tensor(rng.integers(0, 10, shape[0]))
        opt = T.optim.SGD(model.parameters(), lr=0.1)

        def step():
            opt.zero_grad()
            loss = F.cross_entropy(model(X), y)
            loss.backward()
            opt.step()
            return loss
        return step

    if row in LM_SIZES:
        hidden, steps, batch = LM_SIZES[row]
        model = _LanguageModel(T, device, hidden)
        _same_weights(T, model.parameters(), seed)
        X = tensor(rng.integers(0, VOCAB, (batch, steps)))
        Y = tensor(rng.integers(0, VOCAB, (batch, steps)))
        params = list(model.parameters())   # (a generator would be spent by the optimizer: nothing clipped)
        opt = T.optim.SGD(params, lr=1.0)

        def step():
            opt.zero_grad()
            loss = F.cross_entropy(model(X), Y.T.reshape(-1))
            loss.backward()
            T.nn.utils.clip_grad_norm_(params, max_norm=1.0)
            opt.step()
            return loss
        return step

    if row == "transformer":
        layer = T.nn.TransformerEncoderLayer(D_MODEL, HEADS, FFN, dropout=0.0, batch_first=True).to(device)
        _same_weights(T, layer.parameters(), seed)
        with T.no_grad():   # LayerNorm weights near one, as initialised
            for name, p in layer.named_parameters():
                if name.startswith("norm") and name.endswith("weight"):
                    p.add_(1.0)
        x = tensor(rng.standard_normal((BATCH, SEQ, D_MODEL)).astype(np.float32))
        opt = T.optim.Adam(layer.parameters(), lr=1e-3)

        def step():
            opt.zero_grad()
            loss = (layer(x) ** 2).mean()
            loss.backward()
            opt.step()
            return loss
        return step
    raise ValueError(f"unknown row {row!r}; rows are {', '.join(ROWS)}")


# --------------------------------------------------------------------------------------- timing

def _no_sync():
    pass


def _timed(fn, iters, sync=_no_sync):
    """(wall, process CPU) milliseconds per call; ``sync`` waits for a GPU's queued work, before the
    clock starts and before it is read."""
    sync()
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(iters):
        fn()
    sync()
    return (time.perf_counter() - t0) / iters * 1e3, (time.process_time() - c0) / iters * 1e3


def _iters_for(fn, sync, target_ms=60.0):
    """Steps per timed repetition: enough for ~target_ms, so short rows are not timer noise."""
    once = _timed(fn, 1, sync)[0]
    return max(1, min(50, int(target_ms / max(once, 1e-3))))


def _quantile(xs, q):
    xs = sorted(xs)
    i = (len(xs) - 1) * q
    lo, hi = int(i), min(int(i) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (i - lo)


def _minor_faults():
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def numpy_chain_step(row, seed=0):
    """The chain rows by hand on NumPy arrays (bench/chain_numpy.py), from make_step's arrays: the floor."""
    from chain_numpy import chain_step
    rng = np.random.default_rng(seed + 1)
    x, w, b = (a.astype(np.float32) for a in (
        rng.standard_normal((CHAIN_SIZE, CHAIN_SIZE)), rng.standard_normal((CHAIN_SIZE, CHAIN_SIZE)) / CHAIN_SIZE ** 0.5,
        rng.standard_normal((CHAIN_SIZE, CHAIN_SIZE)) * 0.1))
    step = chain_step(x, w, b, "nograd" if row == "chain-nograd" else "fwdbwd", CHAIN_OPS)
    return lambda: step() if row == "chain-nograd" else step()[0]


def numpy_mlp_step(seed=0):
    """The mlp row by hand on float32 arrays, from make_step's data and weights: the floor. Each GEMM in
    the layout torch's eager uses (``x @ W.T`` on the weight's transposed view, ``W``'s gradient as
    ``g.T @ x`` in the weight's layout, ``g @ W``), the bias added into the product, ReLU's mask,
    log-softmax and the mean NLL with its gradient, the bias gradients as column sums, and SGD's
    update in place -- no Tensor, autograd or checks."""
    rng = np.random.default_rng(seed + 1)
    X = rng.standard_normal((256, 784)).astype(np.float32)
    y = rng.integers(0, 10, 256)
    wrng = np.random.default_rng(seed)      # _same_weights' draws, in parameters() order
    params = []
    for shape in ((256, 784), (256,), (256, 256), (256,), (10, 256), (10,)):
        params.append((wrng.standard_normal(shape) * (0.1 if len(shape) > 1 else 0.01)).astype(np.float32))
    rows = np.arange(256)

    def step():
        W1, b1, W2, b2, W3, b3 = params
        a1 = X @ W1.T
        a1 += b1
        h1 = np.maximum(a1, 0)
        a2 = h1 @ W2.T
        a2 += b2
        h2 = np.maximum(a2, 0)
        z = h2 @ W3.T
        z += b3
        z -= z.max(1, keepdims=True)
        e = np.exp(z)
        s = e.sum(1, keepdims=True)
        loss = np.log(s[:, 0]).mean() - z[rows, y].mean()
        g3 = e / s                                   # d loss / d z = (softmax - onehot) / N
        g3[rows, y] -= 1
        g3 /= 256
        grads = [None, None, g3.T @ h2, g3.sum(0)]
        g2 = g3 @ W3
        g2 *= a2 > 0
        grads[0:2] = [g2.T @ h1, g2.sum(0)]
        g1 = g2 @ W2
        g1 *= a1 > 0
        grads = [g1.T @ X, g1.sum(0)] + grads
        for p, g in zip(params, grads):
            g *= 0.1
            p -= g
        return loss
    return step


def compare(row, gt, torch, reps, device="cpu"):
    """Median ms of each, the ratio, its spread, page faults per step (mlp, lenet, on the CPU), and
    for the chain rows and the mlp on the CPU the NumPy floor's median ms (timed in the same interleaving)."""
    ours, theirs = make_step(gt, row, device=device), make_step(torch, row, device=device)
    floor = None
    if device == "cpu" and row in ("chain", "chain-nograd"):
        floor = numpy_chain_step(row)
    elif device == "cpu" and row == "mlp":
        floor = numpy_mlp_step()
    sync_ours, sync_theirs = ((gt.cuda.synchronize, torch.cuda.synchronize) if device == "cuda"
                              else (_no_sync, _no_sync))
    la, lb = ours().item(), theirs().item()   # also the warm-up: .grad and optimizer state exist now
    assert abs(la - lb) <= 1e-3 * max(1.0, abs(lb)), f"{row}: first losses differ: glasstorch {la}, torch {lb}"
    if floor is not None:
        lf = float(floor())
        assert abs(lf - lb) <= 1e-3 * max(1.0, abs(lb)), f"{row}: NumPy floor's loss {lf}, torch {lb}"
    ours(), theirs()
    iters = _iters_for(theirs, sync_theirs)
    a, b, f = [], [], []
    for _ in range(reps):
        a.append(_timed(ours, iters, sync_ours))
        b.append(_timed(theirs, iters, sync_theirs))
        if floor is not None:
            f.append(_timed(floor, iters))
    wall_a, wall_b = [x[0] for x in a], [x[0] for x in b]
    ratios = [x / y for x, y in zip(wall_a, wall_b)]
    cpu_ratio = statistics.median(x[1] for x in a) / statistics.median(x[1] for x in b)
    out = dict(row=row, ours=statistics.median(wall_a), torch=statistics.median(wall_b), iters=iters,
               ratio=statistics.median(ratios), lo=_quantile(ratios, 0.25),
               hi=_quantile(ratios, 0.75), cpu_ratio=cpu_ratio)
    if f:
        out["floor"] = statistics.median(x[0] for x in f)
        out["floor_cpu_ratio"] = statistics.median(x[1] for x in f) / statistics.median(x[1] for x in b)
    if row in FAULT_ROWS and device == "cpu" and sys.platform.startswith("linux"):
        steps = 10
        f0 = _minor_faults()
        for _ in range(steps):
            ours()
        f1 = _minor_faults()
        for _ in range(steps):
            theirs()
        f2 = _minor_faults()
        out["faults"] = ((f1 - f0) / steps, (f2 - f1) / steps)
    return out


def _set_threads(n, torch):
    """n threads for torch and for every BLAS/OpenMP pool in the process (NumPy's included)."""
    if n == "default":
        return None
    from threadpoolctl import threadpool_limits
    limiter = threadpool_limits(limits=int(n))
    torch.set_num_threads(int(n))
    return limiter


def _spinner():
    """A second process keeping one core busy (what a laptop running a browser looks like to us)."""
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


# ---------------------------------------------------------------------------- fresh processes

def _run_child(args, extra_env=None):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for k, v in (extra_env or {}).items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    out = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, check=True)
    return out.stdout.strip()


def import_times(runs):
    """`import glasstorch`, `import torch` and `import numpy` (what glasstorch's figure includes) in
    fresh interpreters, interleaved: medians of (wall ms, CPU ms), and glasstorch's fastest/slowest wall.

    The modules' bytecode is cached (in a temporary ``PYTHONPYCACHEPREFIX``, written by one untimed
    run first), as an installed package's is: with ``PYTHONDONTWRITEBYTECODE`` set, as on the
    project's shared machine, every run would compile glasstorch's sources again (~30% more)."""
    import tempfile
    code = ("import time; t0 = time.perf_counter(); c0 = time.process_time(); import {}; "
            "print(time.perf_counter() - t0, time.process_time() - c0)")
    with tempfile.TemporaryDirectory() as cache:
        env = {"PYTHONPYCACHEPREFIX": cache, "PYTHONDONTWRITEBYTECODE": None}
        for name in ("glasstorch", "torch", "numpy"):
            _run_child(["-c", code.format(name)], env)
        times = {"glasstorch": [], "torch": [], "numpy": []}
        for _ in range(runs):
            for name, out in times.items():
                out.append([float(v) * 1e3 for v in _run_child(["-c", code.format(name)], env).split()])
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in times.items()}
    walls = [w for w, _ in times["glasstorch"]]
    return med, min(walls), max(walls)


def _status_kb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def rss_child(framework, row, threads):
    """(In a fresh process) the peak RSS of the process over 3 training steps, and the steps' own
    share: that peak less the memory held once the framework is imported and the model built."""
    import importlib
    T = importlib.import_module(framework)
    if threads != "default":
        from threadpoolctl import threadpool_limits
        threadpool_limits(limits=int(threads))
        if framework == "torch":
            T.set_num_threads(int(threads))
    step = make_step(T, row)
    base = _status_kb("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:   # resets the peak (VmHWM) to the current RSS
        f.write("5")
    for _ in range(3):
        step()
    peak = _status_kb("VmHWM")
    print(peak / 1024, (peak - base) / 1024)


def rss_table(rows, threads):
    result = {}
    for row in rows:
        g = [float(v) for v in _run_child([__file__, "--rss-child", "glasstorch", row, "--threads", threads]).split()]
        t = [float(v) for v in _run_child([__file__, "--rss-child", "torch", row, "--threads", threads]).split()]
        result[row] = (g, t)
    return result


# ---------------------------------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default=",".join(ROWS), help="comma-separated, or 'none'")
    ap.add_argument("--reps", type=int, default=21)
    ap.add_argument("--threads", default="1", help="1, 2, ... or 'default' (see the docstring)")
    ap.add_argument("--busy", action="store_true", help="keep one core busy with a second process")
    ap.add_argument("--import", dest="imports", action="store_true", help="also time the imports")
    ap.add_argument("--import-runs", type=int, default=11)
    ap.add_argument("--rss", action="store_true", help="also peak RSS per workload, in fresh processes")
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                    help="where both frameworks run the rows (cuda: glasstorch through CuPy, torch CUDA)")
    ap.add_argument("--rss-child", nargs=2, metavar=("FRAMEWORK", "ROW"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.rss_child:
        return rss_child(*args.rss_child, args.threads)

    rows = [] if args.rows == "none" else args.rows.split(",")
    spinner = _spinner() if args.busy else None
    try:
        import torch
        import glasstorch as gt
        if args.device == "cuda" and not (gt.cuda.is_available() and torch.cuda.is_available()):
            print(f"--device cuda: no GPU (glasstorch.cuda.is_available() {gt.cuda.is_available()}, "
                  f"torch.cuda.is_available() {torch.cuda.is_available()}); nothing was measured", file=sys.stderr)
            sys.exit(2)
        _set_threads(args.threads, torch)
        if args.device == "cuda":
            print(f"device: {torch.cuda.get_device_name()} (glasstorch: {gt.cuda.get_device_name()}, "
                  f"CuPy {sys.modules['cupy'].__version__})")
        print(f"glasstorch {gt.__version__}, torch {torch.__version__}, numpy {np.__version__}, "
              f"Python {sys.version.split()[0]}; threads: {args.threads}; busy core: {'yes' if args.busy else 'no'}; "
              f"load average before: {os.getloadavg()[0]:.1f}; {args.reps} interleaved repetitions")
        if rows:
            print()
            print("| workload | glasstorch ms | torch ms | ratio | spread (p25-p75) | CPU-time ratio | goal "
                  "| faults/step (gt, torch) | NumPy floor ms (/ torch; CPU time) |")
            print("|---|---|---|---|---|---|---|---|---|")
        goals = CUDA_GOALS if args.device == "cuda" else GOALS

        def goal(row):
            return f"<= {goals[row]}x" if row in goals else "-"
        for row in rows:
            r = compare(row, gt, torch, args.reps, args.device)
            faults = "{:.0f}, {:.0f}".format(*r["faults"]) if "faults" in r else ""
            floor = (f"{r['floor']:.2f} ({r['floor'] / r['torch']:.2f}x; CPU {r['floor_cpu_ratio']:.2f}x)"
                     if "floor" in r else "")
            print(f"| {row} | {r['ours']:.2f} | {r['torch']:.2f} | {r['ratio']:.2f}x | {r['lo']:.2f}-{r['hi']:.2f} "
                  f"| {r['cpu_ratio']:.2f}x | {goal(row)} | {faults} | {floor} |", flush=True)
        if args.imports:
            med, gmin, gmax = import_times(args.import_runs)
            (g, gc), (t, tc), (n, nc) = med["glasstorch"], med["torch"], med["numpy"]
            print(f"\nimport glasstorch: {g:.0f} ms wall, {gc:.0f} ms CPU (wall fastest {gmin:.0f}, slowest {gmax:.0f}); "
                  f"import torch: {t:.0f} ms wall, {tc:.0f} ms CPU; import numpy (part of glasstorch's): "
                  f"{n:.0f} ms wall, {nc:.0f} ms CPU; medians of {args.import_runs}, bytecode cached", flush=True)
        if args.rss:
            print("\n| workload | glasstorch peak RSS MB (step's own) | torch peak RSS MB (step's own) | ratio |")
            print("|---|---|---|---|")
            for row, (g, t) in rss_table([r for r in ROWS if r != "chain-nograd"], args.threads).items():
                print(f"| {row} | {g[0]:.0f} ({g[1]:.1f}) | {t[0]:.0f} ({t[1]:.1f}) | {g[0] / t[0]:.2f} |", flush=True)
        print(f"\nload average after: {os.getloadavg()[0]:.1f}")
    finally:
        if spinner is not None:
            spinner.kill()
            spinner.wait()


if __name__ == "__main__":
    main()
