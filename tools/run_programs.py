"""Run widely used public PyTorch programs under glasstorch's binding and under real torch; compare losses.

    python tools/run_programs.py run --src ~/src [--only mnist ...] [--force]
    python tools/run_programs.py report

Opt-in (it needs the programs' sources, which CI cannot fetch). ``--src`` is a directory holding
checkouts named as in :data:`PROGRAMS` (``examples`` = pytorch/examples, ``makemore``, ``minGPT``,
``nanoGPT`` = karpathy's). Each program runs unchanged, as its README runs it, with shortened training
(command-line arguments the program has: fewer epochs, steps or iterations; ``--dropout 0`` where the
program offers it) and stand-in data made by ``tools/books_data.py`` in the formats it reads (MNIST's
IDX files, WikiText-2's text files, a character-level ``input.txt``): once with
``python -m glasstorch run``'s binding (``torch`` = glasstorch), once with the real torch, each in its
own copy of the program's directory.

Step-for-step comparison needs the same random numbers in both runs, and glasstorch's generator is not
torch's. So both runs get the same *synchronised randomness* (``--no-sync`` turns it off):

- every parameter is set, just before the first forward of the outermost module that holds it (a global
  module forward pre-hook, ``torch.nn.modules.module.register_module_forward_pre_hook``, walking the
  module's whole tree in registration order: parameters a module reads without calling the submodule
  that holds them, as MultiheadAttention reads ``out_proj.weight``, are set too), to values drawn from
  one NumPy generator: uniform in +-1/sqrt(fan_in), constant-initialised vectors (norm weights, zero
  biases) kept. This replaces the program's own initialisation, identically in both runs;
- the program's own ``nn.init`` calls after that (``uniform_``, ``normal_``, ``trunc_normal_``,
  ``xavier_*``, ``kaiming_*``: d2l's ``init_cnn`` re-initialises after the lazy shapes are known) draw
  from another NumPy generator, with the bounds each framework computes; the framework's internal
  calls (a module's ``reset_parameters``) are left alone;
- ``torch.randn/rand/randint/randperm/randn_like/rand_like/normal/multinomial`` (and ``random_split``'s
  ``randperm``) draw from one seeded NumPy generator in both runs (so DataLoader shuffling, random
  batches, noise vectors and reparameterisations agree), and so do ``torch.nn.functional.dropout``
  and ``dropout1d/2d/3d`` (which ``nn.Dropout*`` call), and attention dropout (``F.scaled_dot_product_attention`` with ``dropout_p`` runs its math path with that
  mask: torch draws it inside its kernel); Python's ``random`` and NumPy's global generator are seeded
  alike. Other masks drawn inside a framework's own kernels (the dropout between ``nn.LSTM`` layers)
  are not synchronised: the programs run with ``--dropout 0`` where they offer it.

The program's printed losses are parsed per program (:data:`PROGRAMS`' ``loss`` regexes) and compared
step by step: the report gives the number of matched values, the first and last losses of both runs,
and the largest relative difference. Results and logs live under ``--work`` (resumable; ``--only``
reruns a subset by name substring).
"""
import argparse
import json
import os
import re
import runpy
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# one BLAS/OpenMP thread in both runs: a fair comparison, and a shared machine stays usable
ONE_THREAD = {name: "1" for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
DEFAULT_WORK = os.path.join(os.path.expanduser("~"), ".cache", "glasstorch-programs")
FRAMEWORKS = ("torch", "glasstorch")


class Program:
    """One run of a public program: `checkout/subdir` is copied per framework and `script` run there
    with `args`; `data(dir)` makes its stand-in data; `loss` finds its printed losses."""

    def __init__(self, name, checkout, subdir, script, args, loss, data=None, repo="", note="",
                 pythonpath=False, before=None):
        self.name, self.checkout, self.subdir, self.script = name, checkout, subdir, script
        self.args, self.loss, self.data, self.repo, self.note = args, re.compile(loss, re.M), data, repo, note
        self.pythonpath, self.before = pythonpath, before


def _books_data():
    sys.path.insert(0, HERE)
    import books_data
    return books_data


def mnist_data(program_dir):
    _books_data().make_mnist_for_programs(os.path.join(program_dir, "..", "data"))


def mnist_here_data(program_dir):
    _books_data().make_mnist_for_programs(os.path.join(program_dir, "data"))


def wikitext_data(program_dir):
    _books_data().make_wikitext(os.path.join(program_dir, "data", "wikitext-2"))


def chargpt_data(program_dir):
    _books_data().make_char_text(os.path.join(program_dir, "input.txt"))


def shakespeare_data(program_dir):
    _books_data().make_char_text(os.path.join(program_dir, "data", "shakespeare_char", "input.txt"))


EXAMPLES = "pytorch/examples"
# word_language_model prints its loss with 2 decimals; its perplexity exp(loss) says more
WLM_PPL = r"\| loss +[\d.]+ \| ppl +([\d.]+)$"
MNIST_LOSS = r"Train Epoch: \d+ \[\d+/\d+ \([\d.]+%\)\]\s+Loss: ([\d.]+)"

PROGRAMS = [
    Program("mnist", "examples", "mnist", "main.py", ["--epochs", "1", "--log-interval", "1"], MNIST_LOSS,
            mnist_data, EXAMPLES, "CNN with dropout, Adadelta, StepLR; 10 steps on 640 stand-in digits"),
    Program("word_language_model-LSTM", "examples", "word_language_model", "main.py",
            ["--epochs", "1", "--log-interval", "1", "--dropout", "0", "--model", "LSTM"],
            WLM_PPL, wikitext_data, EXAMPLES, "2-layer LSTM language model, plain SGD with clipping"),
    Program("word_language_model-GRU", "examples", "word_language_model", "main.py",
            ["--epochs", "1", "--log-interval", "1", "--dropout", "0", "--model", "GRU"],
            WLM_PPL, wikitext_data, EXAMPLES, "2-layer GRU language model"),
    Program("word_language_model-Transformer", "examples", "word_language_model", "main.py",
            ["--epochs", "1", "--log-interval", "1", "--dropout", "0", "--model", "Transformer", "--lr", "5"],
            WLM_PPL, wikitext_data, EXAMPLES, "nn.TransformerEncoder language model"),
    Program("time_sequence_prediction", "examples", "time_sequence_prediction", "train.py", ["--steps", "2"],
            r"^(?:test )?loss: ([\d.e-]+)", None, EXAMPLES, "LSTMCell sequence model, LBFGS, double precision",
            before=["generate_sine_wave.py"]),
    Program("regression", "examples", "regression", "main.py", [], r"Loss: ([\d.e-]+) after (\d+) batches", None,
            EXAMPLES, "polynomial fit with nn.Linear, manual SGD, until loss < 1e-3"),
    Program("vae", "examples", "vae", "main.py", ["--epochs", "1", "--log-interval", "1", "--no-accel"],
            r"Loss: ([\d.]+)$", mnist_data, EXAMPLES, "variational autoencoder, randn_like reparameterisation"),
    Program("dcgan", "examples", "dcgan", "main.py",
            ["--dataset", "fake", "--niter", "1", "--batchSize", "100", "--ngf", "8", "--ndf", "8", "--workers", "0",
             "--outf", "out"],
            r"Loss_D: ([\d.]+) Loss_G: ([\d.]+)", None, EXAMPLES, "DCGAN on torchvision's FakeData, 2 Adams"),
    Program("mnist_rnn", "examples", "mnist_rnn", "main.py", ["--epochs", "1", "--log-interval", "1"], MNIST_LOSS,
            mnist_data, EXAMPLES, "LSTM over image rows, Adadelta, StepLR"),
    Program("mnist_forward_forward", "examples", "mnist_forward_forward", "main.py",
            ["--epochs", "3", "--train_size", "640", "--test_size", "128", "--no_accel"],
            r"Loss:\s+([\d.]+)", mnist_here_data, EXAMPLES, "Hinton's forward-forward training, layer by layer"),
    Program("siamese_network", "examples", "siamese_network", "main.py",
            ["--epochs", "1", "--log-interval", "1", "--no-accel"], MNIST_LOSS, mnist_data, EXAMPLES,
            "siamese ResNet-18 on image pairs, BCELoss, Adadelta"),
    Program("makemore", "makemore", "", "makemore.py",
            ["-i", "names.txt", "-o", "out", "--max-steps", "41", "-n", "0", "--n-layer", "2", "--n-embd", "32"],
            r"step \d+ \| loss ([\d.]+)", None, "karpathy/makemore", "character-level transformer on names, AdamW"),
    Program("makemore-rnn", "makemore", "", "makemore.py",
            ["-i", "names.txt", "-o", "out", "--max-steps", "41", "-n", "0", "--type", "gru"],
            r"step \d+ \| loss ([\d.]+)", None, "karpathy/makemore", "character-level GRU on names"),
    Program("minGPT-chargpt", "minGPT", "projects/chargpt", "chargpt.py",
            ["--trainer.max_iters=31", "--trainer.num_workers=0", "--trainer.batch_size=8", "--data.block_size=32",
             "--model.embd_pdrop=0.0", "--model.resid_pdrop=0.0", "--model.attn_pdrop=0.0"],
            r"train loss ([\d.]+)", chargpt_data, "karpathy/minGPT", "gpt-mini on characters, AdamW",
            pythonpath=True),
    Program("nanoGPT-shakespeare_char", "nanoGPT", "", "train.py",
            ["config/train_shakespeare_char.py", "--device=cpu", "--compile=False", "--eval_iters=2",
             "--log_interval=1", "--block_size=32", "--batch_size=8", "--n_layer=2", "--n_head=2", "--n_embd=32",
             "--max_iters=20", "--lr_decay_iters=20", "--dropout=0.0", "--eval_interval=10"],
            r"iter \d+: loss ([\d.]+)", shakespeare_data, "karpathy/nanoGPT",
            "the README's CPU run of the baby GPT (smaller), AdamW, cosine schedule",
            before=["data/shakespeare_char/prepare.py"]),
]


# ----------------------------------------------------------------------------------------------------
# Inside one run: bind (or not), synchronise the randomness, run the script as __main__
# ----------------------------------------------------------------------------------------------------

def synchronise_randomness(torch, seed=0):
    """Same parameters and same random draws in the glasstorch and the torch run (module docstring)."""
    import random
    import numpy as np
    random.seed(seed)       # programs that also draw from Python's and NumPy's global generators
    np.random.seed(seed)    # (siamese_network picks its pairs with random.randint)
    import weakref
    init_rng, draw_rng = np.random.default_rng(seed), np.random.default_rng(seed + 1)
    # the parameters already set, by id -> a weak reference: an id alone is reused once its parameter
    # is freed, and the two frameworks free objects at different times (Step-by-Step ch. 8 skipped a
    # new GRUCell's weight under glasstorch only, shifting every later draw by one tensor)
    synced = {}

    def already_set(p):
        ref = synced.get(id(p))
        return ref is not None and ref() is p

    def set_parameters(module, args):
        if getattr(module, "has_uninitialized_params", lambda: False)():
            # a lazy module about to infer its shapes from these inputs: its own pre-hook, which runs
            # after this global one, would; it does it now (the hook then finds nothing left to do)
            # so that its parameters are set below
            module.initialize_parameters(*args)
        for _, p in module.named_parameters():
            if already_set(p) or p.grad is not None or torch.nn.parameter.is_lazy(p):
                continue   # lazy parameters of submodules: set when their module first runs
            synced[id(p)] = weakref.ref(p)
            values = p.detach().cpu().numpy()
            constant = p.dim() == 1 and (values == values.flat[0]).all()
            if constant and (values.size > 1 or values.flat[0] in (0.0, 1.0)):   # norm weights, zero biases
                continue
            fan_in = int(np.prod(p.shape[1:])) if p.dim() > 1 else p.shape[0]
            bound = 1.0 / np.sqrt(max(fan_in, 1))
            new = init_rng.uniform(-bound, bound, tuple(p.shape))
            with torch.no_grad():
                p.copy_(torch.tensor(new, dtype=p.dtype))
    torch.nn.modules.module.register_module_forward_pre_hook(set_parameters)

    def sizes(size, keyword=None):
        if not size and keyword is not None:   # torch.randn(size=(2, 20)) (d2l's read-write section)
            size = (keyword,)
        return tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list, torch.Size)) else tuple(size)

    def made(array, dtype, device, requires_grad=False, default=None):
        out = torch.tensor(array, dtype=dtype or default or torch.get_default_dtype(), device=device)
        return out.requires_grad_(requires_grad) if requires_grad else out

    def randn(*size, generator=None, dtype=None, device=None, requires_grad=False, **keywords):
        return made(draw_rng.standard_normal(sizes(size, keywords.get("size"))), dtype, device, requires_grad)

    def rand(*size, generator=None, dtype=None, device=None, requires_grad=False, **keywords):
        return made(draw_rng.random(sizes(size, keywords.get("size"))), dtype, device, requires_grad)

    def randint(*args, low=0, high=None, size=None, generator=None, dtype=None, device=None, **_):
        args = list(args)   # randint(high, size), randint(low, high, size), or any of them by keyword
        if size is None:
            size = args.pop()
        if len(args) == 2:
            low, high = args
        elif len(args) == 1:
            high = args[0]
        return made(draw_rng.integers(low, high, tuple(size)), dtype, device, default=torch.int64)

    def randperm(n, generator=None, dtype=None, device=None, **_):
        return made(draw_rng.permutation(n), dtype, device, default=torch.int64)

    original_normal = torch.normal

    def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None, device=None,
               requires_grad=False, **_):
        # torch.normal(mean, std, size) with numbers (d2l's scratch initialisations), or tensors
        # broadcast together; the drawn shape is that of the result, the draw stays differentiable-free
        if out is not None:
            return original_normal(mean, std, size, generator=generator, out=out)
        tensors = [x for x in (mean, std) if isinstance(x, torch.Tensor)]
        if tensors:
            shape = torch.broadcast_shapes(*(tuple(t.shape) for t in tensors))
            like = tensors[0]
            noise = made(draw_rng.standard_normal(tuple(shape)), dtype or like.dtype, device or like.device)
            return (noise * std + mean).detach()
        return made(draw_rng.standard_normal(sizes((size,))) * std + mean, dtype, device, requires_grad)

    def like(draw):
        def function(t, dtype=None, device=None, **_):
            return made(draw(tuple(t.shape)), dtype or t.dtype, device or t.device)
        return function

    def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
        # WeightedRandomSampler's draws (Step-by-Step's balanced sampler): per row of weights
        weights = input.detach().cpu().double().numpy()
        rows = weights.reshape(-1, weights.shape[-1])
        drawn = [draw_rng.choice(row.size, num_samples, replace=replacement, p=row / row.sum()) for row in rows]
        return made(np.stack(drawn).reshape(weights.shape[:-1] + (num_samples,)), None, input.device,
                    default=torch.int64)

    torch.randn, torch.rand, torch.randint, torch.randperm = randn, rand, randint, randperm
    torch.multinomial = multinomial
    # torch's random_split calls the randperm its module imported by name (``from torch import
    # randperm``): that name too (Step-by-Step's index_splitter; glasstorch's looks it up on the package)
    if hasattr(torch.utils.data.dataset, "randperm"):
        torch.utils.data.dataset.randperm = randperm
    torch.randn_like, torch.rand_like = like(draw_rng.standard_normal), like(draw_rng.random)
    torch.normal = normal

    def dropout(input, p=0.5, training=True, inplace=False):
        if not training or p == 0:
            return input
        keep = torch.tensor(dropout_rng.random(tuple(input.shape)) >= p, dtype=input.dtype, device=input.device)
        scale = keep / (1 - p) if p < 1 else keep
        return input.mul_(scale) if inplace else input * scale
    dropout_rng = np.random.default_rng(seed + 2)
    torch.nn.functional.dropout = dropout   # nn.Dropout calls F.dropout through the module, in both

    def feature_dropout(unbatched_dim):
        """F.dropout1d/2d/3d: whole channels (dims 0 and 1 of the batched input) kept or zeroed; torch
        adds the batch dim to an input of `unbatched_dim` dims (dropout2d never: a 2-D input is
        dropped element by element, a 3-D one channel-wise over dim 1)."""
        def function(input, p=0.5, training=True, inplace=False):
            if not training or p == 0:
                return input
            unbatched = input.dim() == unbatched_dim
            x = input.unsqueeze(0) if unbatched else input
            mask_shape = tuple(x.shape[:2]) + (1,) * (x.dim() - 2)
            keep = torch.tensor(dropout_rng.random(mask_shape) >= p, dtype=input.dtype, device=input.device)
            scale = (keep / (1 - p) if p < 1 else keep).reshape(mask_shape[1:] if unbatched else mask_shape)
            return input.mul_(scale) if inplace else input * scale
        return function
    torch.nn.functional.dropout1d = feature_dropout(2)
    torch.nn.functional.dropout2d = feature_dropout(None)
    torch.nn.functional.dropout3d = feature_dropout(4)

    original_attention = torch.nn.functional.scaled_dot_product_attention

    def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
                                     scale=None, enable_gqa=False):
        # torch drops attention weights inside its kernel: with dropout, the math path with the mask above
        if dropout_p == 0.0 or enable_gqa:
            return original_attention(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p,
                                      is_causal=is_causal, scale=scale, enable_gqa=enable_gqa)
        scores = query @ key.transpose(-2, -1) * (query.size(-1) ** -0.5 if scale is None else scale)
        if is_causal:
            attn_mask = torch.ones(query.size(-2), key.size(-2), dtype=torch.bool, device=query.device).tril()
        if attn_mask is not None and attn_mask.dtype == torch.bool:
            scores = scores.masked_fill(~attn_mask, float("-inf"))
        elif attn_mask is not None:
            scores = scores + attn_mask
        return dropout(torch.softmax(scores, dim=-1), dropout_p) @ value
    # nn.MultiheadAttention's functional form looks it up in torch.nn.functional, in both
    torch.nn.functional.scaled_dot_product_attention = scaled_dot_product_attention
    synchronise_init_calls(torch, np.random.default_rng(seed + 3))


def synchronise_init_calls(torch, rng):
    """The program's own ``nn.init`` calls (d2l's ``init_cnn``: ``xavier_uniform_`` after the lazy
    shapes are known) draw from ``rng`` in both runs, with the bounds each framework's ``nn.init``
    computes. Calls from inside the framework (a module's ``reset_parameters``) keep the originals:
    the two frameworks need not make the same calls there, and the forward hook above sets those
    parameters anyway."""
    import sys
    init = torch.nn.init

    def from_program():
        caller = sys._getframe(2).f_globals.get("__name__", "")
        return not caller.split(".")[0] in ("torch", "glasstorch")

    def drawing(name, draw):
        original = getattr(init, name)

        def function(tensor, *args, **kwargs):
            if not from_program():
                return original(tensor, *args, **kwargs)
            kwargs.pop("generator", None)
            values = draw(tensor, *args, **kwargs)
            with torch.no_grad():
                return tensor.copy_(torch.tensor(values.reshape(tuple(tensor.shape)), dtype=tensor.dtype))
        function.__name__ = name
        setattr(init, name, function)

    def xavier_std(tensor, gain):
        fan_in, fan_out = init._calculate_fan_in_and_fan_out(tensor)
        return gain * (2.0 / float(fan_in + fan_out)) ** 0.5

    def kaiming_std(tensor, a, mode, nonlinearity):
        return init.calculate_gain(nonlinearity, a) / init._calculate_correct_fan(tensor, mode) ** 0.5

    shape = lambda t: tuple(t.shape)
    drawing("uniform_", lambda t, a=0.0, b=1.0: rng.uniform(a, b, shape(t)))
    drawing("normal_", lambda t, mean=0.0, std=1.0: rng.normal(mean, std, shape(t)))
    drawing("xavier_uniform_", lambda t, gain=1.0: rng.uniform(-1, 1, shape(t)) * 3.0 ** 0.5 * xavier_std(t, gain))
    drawing("xavier_normal_", lambda t, gain=1.0: rng.normal(0, xavier_std(t, gain), shape(t)))
    drawing("kaiming_uniform_", lambda t, a=0, mode="fan_in", nonlinearity="leaky_relu":
            rng.uniform(-1, 1, shape(t)) * 3.0 ** 0.5 * kaiming_std(t, a, mode, nonlinearity))
    drawing("kaiming_normal_", lambda t, a=0, mode="fan_in", nonlinearity="leaky_relu":
            rng.normal(0, kaiming_std(t, a, mode, nonlinearity), shape(t)))

    def truncated(t, mean=0.0, std=1.0, a=-2.0, b=2.0):
        values = rng.normal(mean, std, shape(t))
        outside = (values < a) | (values > b)
        while outside.any():   # redraw what falls outside [a, b]
            values[outside] = rng.normal(mean, std, int(outside.sum()))
            outside = (values < a) | (values > b)
        return values
    drawing("trunc_normal_", truncated)


def launch(framework, sync, script, args):
    if framework == "glasstorch":
        import glasstorch
        glasstorch.as_torch()
    import torch
    torch.manual_seed(0)
    if sync:
        synchronise_randomness(torch)
    sys.argv = [script] + args
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")
    return 0


# ----------------------------------------------------------------------------------------------------
# The parent
# ----------------------------------------------------------------------------------------------------

def run_one(args, program, framework):
    work = os.path.abspath(args.work)
    source = os.path.join(os.path.abspath(args.src), program.checkout)
    base = os.path.join(work, framework, program.checkout)
    if not os.path.exists(os.path.join(base, ".copied")):
        shutil.copytree(source, base, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".git"))
        open(os.path.join(base, ".copied"), "w").close()
    cwd = os.path.join(base, program.subdir)
    if program.data:
        program.data(cwd)
    os.makedirs(os.path.join(work, "logs"), exist_ok=True)
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONHASHSEED="0", **ONE_THREAD)
    if program.pythonpath:
        env["PYTHONPATH"] = base + os.pathsep + env.get("PYTHONPATH", "")
    log_path = os.path.join(work, "logs", f"{program.name}.{framework}.log")
    start, status = time.time(), None
    python = args.torch_python if framework == "torch" and args.torch_python else args.python
    with open(log_path, "w") as log:
        for script in (program.before or []):   # data preparation scripts, under the same framework
            subprocess.run([python, os.path.abspath(__file__), "_launch", framework, "nosync", script],
                           cwd=cwd, stdout=log, stderr=subprocess.STDOUT, env=env)
        command = [python, os.path.abspath(__file__), "_launch", framework,
                   "nosync" if args.no_sync else "sync", program.script] + program.args
        try:
            status = subprocess.run(command, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, env=env,
                                    timeout=args.timeout).returncode
        except subprocess.TimeoutExpired:
            status = "timeout"
    with open(log_path) as f:
        output = f.read()
    losses = parse_losses(program, output)
    error = None
    if status != 0:
        tail = [line for line in output.strip().splitlines() if line.strip()]
        error = tail[-1][:400] if tail else str(status)
    result = {"name": program.name, "framework": framework, "status": status, "losses": losses,
              "error": error, "seconds": round(time.time() - start, 1)}
    os.makedirs(os.path.join(work, "results"), exist_ok=True)
    with open(os.path.join(work, "results", f"{program.name}.{framework}.json"), "w") as f:
        json.dump(result, f, indent=1)
    return result


def parse_losses(program, output):
    return [float(v) for match in program.loss.finditer(output) for v in match.groups()]


def load(work, program, framework):
    """A run's stored result, its losses parsed again from its log (the regexes may have changed)."""
    path = os.path.join(work, "results", f"{program.name}.{framework}.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        result = json.load(f)
    log_path = os.path.join(work, "logs", f"{program.name}.{framework}.log")
    if os.path.exists(log_path):
        with open(log_path) as f:
            result["losses"] = parse_losses(program, f.read())
    return result


def agreement(torch_losses, glass_losses):
    """(number compared, largest relative difference) over the losses both runs printed."""
    n = min(len(torch_losses), len(glass_losses))
    if n == 0:
        return 0, None
    worst = max(abs(a - b) / max(abs(a), 1e-12) for a, b in zip(torch_losses[:n], glass_losses[:n]))
    return n, worst


def command_report(args, selected):
    work = os.path.abspath(args.work)
    rows = []
    for program in selected:
        t, g = load(work, program, "torch"), load(work, program, "glasstorch")
        if t is None and g is None:
            continue
        n, worst = agreement(t["losses"] if t else [], g["losses"] if g else [])
        ok = lambda r: r is not None and r["status"] == 0   # noqa: E731
        if ok(t) and ok(g):
            status = "runs under both"
        elif ok(t):
            status = "fails under glasstorch: " + (g["error"] if g else "not run")
        elif ok(g):
            status = "fails under torch only: " + t["error"]
        else:
            status = "fails under both: " + ((t or {}).get("error") or "")
        fmt = lambda r: f"{r['losses'][0]:.4f} -> {r['losses'][-1]:.4f}" if r and r["losses"] else "-"  # noqa: E731
        diff = f"{worst:.1e}" if worst is not None else "-"
        rows.append((program.name, status, n, fmt(t), fmt(g), diff,
                     (t or {}).get("seconds"), (g or {}).get("seconds")))
        print(f"{program.name}: {status}\n    {n} losses compared, largest relative difference {diff}; "
              f"torch {fmt(t)} ({rows[-1][6]} s), glasstorch {fmt(g)} ({rows[-1][7]} s)")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("| program | result | losses compared | torch first -> last | glasstorch first -> last "
                    "| largest rel. diff | s torch / glasstorch |\n|---|---|---|---|---|---|---|\n")
            for name, status, n, ft, fg, diff, st, sg in rows:
                f.write(f"| {name} | {status} | {n} | {ft} | {fg} | {diff} | {st} / {sg} |\n")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["_launch"]:
        return launch(argv[1], argv[2] == "sync", argv[3], argv[4:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["run", "report", "list"])
    parser.add_argument("--src", default=".", help="directory holding the checkouts (examples, makemore, ...)")
    parser.add_argument("--work", default=DEFAULT_WORK)
    parser.add_argument("--only", action="append")
    parser.add_argument("--framework", choices=["both", "torch", "glasstorch"], default="both")
    parser.add_argument("--force", action="store_true")
    parser.add_argument("--no-sync", action="store_true", help="let each framework draw its own random numbers")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--torch-python", help="the interpreter for the torch runs, if not --python (one with "
                        "torchvision, for the programs that import it)")
    parser.add_argument("--timeout", type=int, default=900)
    parser.add_argument("--markdown")
    args = parser.parse_args(argv)
    selected = [p for p in PROGRAMS if not args.only or any(o in p.name for o in args.only)]
    if args.command == "list":
        for p in selected:
            print(f"{p.name}: {p.repo} {p.subdir}/{p.script} {' '.join(p.args)}")
        return 0
    if args.command == "run":
        frameworks = FRAMEWORKS if args.framework == "both" else (args.framework,)
        for program in selected:
            for framework in frameworks:
                if load(os.path.abspath(args.work), program, framework) and not args.force:
                    continue
                result = run_one(args, program, framework)
                print(f"{program.name} [{framework}]: status {result['status']}, {len(result['losses'])} losses, "
                      f"{result['seconds']} s", flush=True)
    command_report(args, selected)
    return 0


if __name__ == "__main__":
    sys.exit(main())
