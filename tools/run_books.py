"""Run the two books' PyTorch code cell by cell, under glasstorch's binding and under real torch.

    python tools/run_books.py run --d2l ~/src/d2l-en --sbs ~/src/PyTorchStepByStep [--only SUBSTR ...]
    python tools/run_books.py report [--markdown FILE]

Opt-in, not part of the test suite (it needs the books' sources, which CI cannot fetch):

- *d2l*: a checkout of ``d2l-ai/d2l-en`` at tag v1.0.3. Each section (``chapter_x/y.md``) is one
  notebook; its PyTorch cells are the ``{.python .input}`` blocks of the PyTorch tab -- marked
  ``%%tab pytorch`` or ``#@tab pytorch``, ``all`` or a list naming pytorch, or unmarked (d2l's
  ``config.ini`` makes pytorch the default tab) -- in the book's order (the ``toc`` blocks of the index files).
  ``if tab.selected('pytorch'):`` inside a cell is answered by d2lbook's ``tab`` object as the book's
  PyTorch build does. Needs ``pip install d2l==1.0.3`` (docs/binding.md has the install line).
- *sbs*: a checkout of ``dvgodoy/PyTorchStepByStep``; each ``ChapterNN.ipynb`` is a notebook, its
  code cells in order; its ``stepbystep/``, ``plots/``, ... packages are used as the book ships them.

Each notebook runs in a fresh process, in an IPython shell (magics such as ``%run -i`` and
``%%writefile`` work as in Jupyter), once with ``%load_ext glasstorch`` as its first cell and once
with the real torch, each in its own copy of the working directory. A cell's outcome is ok, or the
exception it raised (type, message, the innermost frames). The report compares them per cell:

- ``ok``: ran under both;
- ``glasstorch``: failed only under glasstorch (with its first error) -- the thing to fix;
- ``both``: failed under torch as well (missing data or package, network, GPU: the environment);
- ``torch``: failed only under torch;
- ``skipped``: not run under either (reason given: d2lbook's own cells, shell commands such as
  ``!pip``, the TensorBoard server magic).

What differs from running the books by hand, and only that (the *prelude*, run before the first
cell in both processes; the books' code itself is not edited):

- matplotlib draws with the Agg backend (``%matplotlib inline`` lines are dropped): figures are made,
  not shown;
- data the books download comes from small stand-ins made by ``tools/books_data.py`` in the formats
  the books read (d2l's ``../data``; d2l's ``download`` returns the stand-in file instead of fetching,
  and torchvision's CIFAR-10 checksums are those of the stand-in files); a download with no stand-in
  fails as without a network (so under both frameworks);
- training is shortened: the stand-in data sets hold one or two minibatches, d2l's ``Trainer`` runs at
  most ``--max-epochs`` epochs (default 2) whatever ``max_epochs`` a cell asks for, and d2l's older
  ``num_epochs`` training functions likewise (``train_ch6``, ``train_ch11``, ``train_concise_ch11``,
  ``train_ch13``, ``train_seq2seq``), and functions a section defines itself (bert-pretraining's
  ``train_bert``: at most ``5 * --max-epochs`` steps; the ``num_epochs`` of a section's ``train`` and
  ``train_fine_tuning``), and a literal ``num_epochs = 20`` written in a cell (ssd's inline loop,
  multiple-gpus-concise's ``train``) becomes ``min(20, MAX_EPOCHS)``; Step-by-Step's ``StepByStep.train(n_epochs)``
  runs at most ``--max-epochs * 5`` epochs; syne-tune's ``StoppingCriterion`` (the asynchronous
  hyperparameter-optimization sections) stops a tuning run after at most ``--max-wallclock`` seconds
  (the book's 12 minutes of wall clock each).
- the Python processes a notebook starts (syne-tune's trial workers) are bound to glasstorch in its
  glasstorch run, as the notebook itself (``tools/books_site/sitecustomize.py``); without that they
  would import the real torch of the books' environment.
- d2l's ``try_all_gpus()`` returns ``[cpu()]`` on a machine without a GPU, as its docstring says
  (d2l 1.0.3's returns ``[]``, so ``train_ch13`` -- the training of the computer-vision and NLP
  application chapters -- fails at ``devices[0]`` on any CPU, under torch too);
- torchvision's ImageNet checkpoints (``pretrained=True``: ResNet-18, ResNet-34) are random stand-ins
  in the runs' own ``TORCH_HOME`` (``books_data.make_pretrained_standins``), the same file for both;
- sockets time out after 5 s, so a cell that reaches for the network fails fast;
- both runs draw the same random numbers (``--no-sync`` turns it off): the synchronised randomness of
  ``tools/run_programs.py`` (parameters set at a module's first forward, ``torch.randn/rand/normal/...``
  and dropout drawn from shared NumPy generators), set up before the books' packages are imported.

The values the books plot are recorded per cell and compared between the runs: d2l's
``ProgressBoard.draw`` and ``Animator.add`` points (training and validation losses, accuracies), and
Step-by-Step's epoch losses (``StepByStep.losses`` and ``val_losses`` of each ``train`` call). The
report gives their largest relative difference per notebook (``report --table FILE`` writes the
Markdown table of docs/programs.md).

Results are kept per notebook and framework under the work directory (``results/``), with each run's
printed output (``logs/``): a second ``run`` skips what is already there (``--force`` reruns), so a
run can be stopped and resumed, and ``--only chapter_linear-regression`` (any substring of the
notebook name, repeatable) reruns a subset.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# one BLAS/OpenMP thread in both runs: a fair comparison, and a shared machine stays usable
ONE_THREAD = {name: "1" for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
FRAMEWORKS = ("torch", "glasstorch")
DEFAULT_WORK = os.path.join(os.path.expanduser("~"), ".cache", "glasstorch-books")


# ----------------------------------------------------------------------------------------------------
# Extracting the cells
# ----------------------------------------------------------------------------------------------------

FENCE = re.compile(r"^```\{\.python \.input[^}]*\}\s*\n(.*?)^```", re.M | re.S)
# a cell's tab: ``%%tab pytorch`` (the newer chapters) or ``#@tab pytorch`` (optimization, GANs,
# computational performance, computer vision, NLP, the appendices), a list or ``all``
TAB_MARKERS = ("%%tab", "#@tab")
TOC = re.compile(r"^```toc\s*\n(.*?)^```", re.M | re.S)


def toc_entries(index_path):
    """The entries of an index file's ``toc`` blocks, in order (option lines dropped)."""
    with open(index_path, encoding="utf-8") as f:
        text = f.read()
    return [line.strip() for block in TOC.findall(text) for line in block.splitlines()
            if line.strip() and not line.strip().startswith(":")]


def d2l_notebooks(root):
    """``(name, path)`` of every section of the book, in the book's order."""
    for chapter in toc_entries(os.path.join(root, "index.md")):
        chapter_dir = os.path.dirname(chapter)
        if not chapter_dir.startswith("chapter_"):
            continue
        for section in toc_entries(os.path.join(root, chapter + ".md")):
            section = section[:-3] if section.endswith(".md") else section   # "rs-async.md" in one toc
            path = os.path.join(root, chapter_dir, section + ".md")
            if os.path.exists(path):
                yield f"d2l/{chapter_dir}/{section}", path


def d2l_cells(path):
    """The PyTorch tab's code cells of one d2l section: a list of code strings (``%%tab`` dropped)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    cells = []
    for code in FENCE.findall(text):
        first, _, rest = code.partition("\n")
        marker = next((m for m in TAB_MARKERS if first.startswith(m)), None)
        if marker:
            tabs = {t.strip() for t in first[len(marker):].split(",")}
            if not tabs & {"pytorch", "all"}:
                continue
            code = rest
        cells.append(code)
    return cells


def sbs_notebooks(root):
    for name in sorted(os.listdir(root)):
        if re.fullmatch(r"Chapter[0-9A-Za-z.]+\.ipynb", name):
            yield f"sbs/{name[:-len('.ipynb')]}", os.path.join(root, name)


def sbs_cells(path):
    with open(path, encoding="utf-8") as f:
        notebook = json.load(f)
    return ["".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "code"]


def skip_reason(code):
    """Why a cell is not run under either framework, or None. Lines of ``%matplotlib`` are dropped
    elsewhere; these are cells with no PyTorch in them that need what a batch run does not have."""
    lines = [line.strip() for line in code.splitlines() if line.strip()]
    if not lines:
        return "empty"
    if any(line.startswith("%load_ext d2lbook") or line.startswith("tab.interact_select") for line in lines):
        return "d2lbook's tab switch"
    if any(line.startswith("!") for line in lines):
        return "shell command (" + next(l for l in lines if l.startswith("!"))[:40] + ")"
    if any(line.startswith(("%tensorboard", "%load_ext tensorboard")) for line in lines):
        return "TensorBoard server"
    return None


def runnable(code):
    """The cell as the runner executes it: ``%matplotlib ...`` lines dropped (the Agg backend stays), and
    epoch counts a cell writes inline capped (:func:`cap_inline_epochs`)."""
    code = "\n".join(line for line in code.splitlines() if not line.lstrip().startswith("%matplotlib"))
    return cap_inline_epochs(code)


def cap_inline_epochs(code):
    """``num_epochs = 20`` (or ``num_epochs, timer = 20, d2l.Timer()``, inside a function too) written
    in a cell becomes ``min(20, MAX_EPOCHS)``: the training loops d2l writes inline (ssd's, the
    ``train`` of multiple-gpus-concise) shortened as the d2l functions are. Only a literal integer is
    capped; a cell that is not Python (magics) is left as it is."""
    import ast
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code
    spans = []     # (line, start column, end column) of each integer assigned to num_epochs
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            if isinstance(target, ast.Name) and target.id == "num_epochs":
                values = [node.value]
            elif isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple) and \
                    len(target.elts) == len(node.value.elts):
                values = [v for t, v in zip(target.elts, node.value.elts)
                          if isinstance(t, ast.Name) and t.id == "num_epochs"]
            else:
                continue
            spans += [(v.lineno, v.col_offset, v.end_col_offset) for v in values
                      if isinstance(v, ast.Constant) and type(v.value) is int and v.lineno == v.end_lineno]
    lines = code.split("\n")
    for line, start, end in sorted(spans, reverse=True):
        # columns are UTF-8 byte offsets: slice the encoded line
        raw = lines[line - 1].encode()
        lines[line - 1] = (raw[:start] + b"min(" + raw[start:end] + b", MAX_EPOCHS)" + raw[end:]).decode()
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------------
# The prelude (run before the first cell, under both frameworks)
# ----------------------------------------------------------------------------------------------------

COMMON_PRELUDE = r'''
_RECORDED_LOSSES = []
import socket as _socket
_socket.setdefaulttimeout(5)
import matplotlib as _matplotlib
_matplotlib.use("Agg")
'''

D2L_PRELUDE = r'''
import functools as _functools, hashlib as _hashlib, os as _os


class _Tab:
    """d2lbook's `tab` object as the PyTorch build of the book answers it."""
    def selected(self, *tabs):
        names = [t for tab in tabs for t in ([tab] if isinstance(tab, str) else tab)]
        return "pytorch" in names or "all" in names

    def interact_select(self, *args, **kwargs):
        pass


tab = _Tab()

from d2l import torch as _d2l


def _offline_download(url, folder="../data", sha1_hash=None):
    """d2l.download, offline: the stand-in file of that name in `folder`, or the error a machine without
    a network gives."""
    if not url.startswith("http"):
        url, sha1_hash = _d2l.DATA_HUB[url]
    fname = _os.path.join(folder, url.split("/")[-1])
    if _os.path.exists(fname):
        return fname
    raise ConnectionError(f"offline run: no stand-in for {url} (tools/books_data.py)")


_d2l.download = _offline_download
_try_all_gpus = _d2l.try_all_gpus


def _all_gpus_or_cpu():
    """d2l.try_all_gpus as its docstring says it works: the GPUs, or ``[cpu()]`` if there is none (d2l
    1.0.3's returns ``[]`` then, and ``train_ch13`` fails at ``devices[0]`` on every CPU machine)."""
    return _try_all_gpus() or [_d2l.cpu()]


_d2l.try_all_gpus = _all_gpus_or_cpu


def _cap(function, name, cap):
    """Wrap a d2l training function so that its epoch argument `name` is at most `cap`."""
    import inspect
    signature = inspect.signature(function)

    @_functools.wraps(function)
    def capped(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        if name in bound.arguments:
            bound.arguments[name] = min(bound.arguments[name], cap)
        return function(*bound.args, **bound.kwargs)
    return capped


_init = _d2l.Trainer.__init__


def _trainer_init(self, max_epochs, *args, **kwargs):
    # d2l's save_hyperparameters reads the arguments from this frame's caller: call the original
    # __init__ directly with the capped value so that it records max_epochs = the cap
    _init(self, min(max_epochs, MAX_EPOCHS), *args, **kwargs)


_d2l.Trainer.__init__ = _trainer_init
_draw, _add = _d2l.ProgressBoard.draw, _d2l.Animator.add


def _recording_draw(self, x, y, label, every_n=1):
    # every point the book plots (losses, accuracies), before the board averages them
    _RECORDED_LOSSES.append(float(y))
    return _draw(self, x, y, label, every_n)


def _recording_add(self, x, y):
    _RECORDED_LOSSES.extend(float(v) for v in (y if hasattr(y, "__len__") else [y]) if v is not None)
    return _add(self, x, y)


_d2l.ProgressBoard.draw, _d2l.Animator.add = _recording_draw, _recording_add
for _name, _arg in (("train_ch6", "num_epochs"), ("train_ch11", "num_epochs"),
                    ("train_concise_ch11", "num_epochs"), ("train_ch13", "num_epochs"),
                    ("train_seq2seq", "num_epochs")):
    if hasattr(_d2l, _name):
        setattr(_d2l, _name, _cap(getattr(_d2l, _name), _arg, MAX_EPOCHS))

# training functions a section defines in its own cells (not in the d2l package): capped as soon as
# the cell defining them has run (a function without that argument is left as it is).
# bert-pretraining's train_bert counts steps, not epochs; `train` is the Kaggle sections' and
# neural-style's, `train_fine_tuning` fine-tuning's.
_SECTION_CAPS = {"train_bert": ("num_steps", 5 * MAX_EPOCHS), "train": ("num_epochs", MAX_EPOCHS),
                 "train_fine_tuning": ("num_epochs", MAX_EPOCHS)}


import inspect as _inspect


def _cap_section_functions(*_):
    namespace = get_ipython().user_ns
    for _name, (_arg, _limit) in _SECTION_CAPS.items():
        function = namespace.get(_name)
        if _inspect.isfunction(function) and not getattr(function, "_capped_by_runner", False):
            namespace[_name] = _cap(function, _arg, _limit)
            namespace[_name]._capped_by_runner = True


get_ipython().events.register("post_run_cell", _cap_section_functions)

try:   # CIFAR-10's checksums: those of the stand-in files
    import torchvision.datasets as _tvd
    _folder = _os.path.join("..", "data", "cifar-10-batches-py")

    def _md5(name):
        with open(_os.path.join(_folder, name), "rb") as f:
            return _hashlib.md5(f.read()).hexdigest()
    if _os.path.isdir(_folder):
        _tvd.CIFAR10.train_list = [[n, _md5(n)] for n, _ in _tvd.CIFAR10.train_list]
        _tvd.CIFAR10.test_list = [[n, _md5(n)] for n, _ in _tvd.CIFAR10.test_list]
        _tvd.CIFAR10.meta = dict(_tvd.CIFAR10.meta, md5=_md5(_tvd.CIFAR10.meta["filename"]))
except ImportError:
    pass
'''

SYNC_PRELUDE = r'''
import sys as _sys
_sys.path.insert(0, TOOLS)
import torch as _torch
from run_programs import synchronise_randomness as _synchronise
_torch.manual_seed(0)
_synchronise(_torch)
'''

SYNETUNE_PRELUDE = r'''
import syne_tune.stopping_criterion as _stopping
_stopping_init = _stopping.StoppingCriterion.__init__


def _capped_stopping_init(self, *args, **kwargs):
    """syne-tune's StoppingCriterion with its max_wallclock_time at most the runner's MAX_WALLCLOCK."""
    _stopping_init(self, *args, **kwargs)
    if self.max_wallclock_time is None or self.max_wallclock_time > MAX_WALLCLOCK:
        self.max_wallclock_time = MAX_WALLCLOCK


_stopping.StoppingCriterion.__init__ = _capped_stopping_init
'''

SBS_PRELUDE = r'''
import functools as _functools, importlib as _importlib


def _capped_train(train):
    @_functools.wraps(train)
    def capped(self, n_epochs, *args, **kwargs):
        seen, seen_val = len(self.losses), len(self.val_losses)
        try:
            return train(self, min(n_epochs, MAX_EPOCHS * 5), *args, **kwargs)
        finally:   # the epoch losses this call added, training's then validation's
            _RECORDED_LOSSES.extend(float(v) for v in self.losses[seen:] + self.val_losses[seen_val:]
                                    if v is not None)   # (no validation loader: None)
    return capped


for _version in ("v0", "v1", "v2", "v3", "v4"):
    try:
        _module = _importlib.import_module("stepbystep." + _version)
    except ImportError:
        continue
    _module.StepByStep.train = _capped_train(_module.StepByStep.train)
'''


# ----------------------------------------------------------------------------------------------------
# The worker: one notebook, one framework, one process
# ----------------------------------------------------------------------------------------------------

class CellTimeout(Exception):
    pass


def describe(error):
    """An exception as a record: type, message, and the innermost frames (file:line function)."""
    import traceback
    frames = traceback.extract_tb(error.__traceback__)
    inner = [f"{os.path.basename(f.filename)}:{f.lineno} {f.name}" for f in frames[-6:]]
    return {"type": type(error).__name__, "message": str(error)[:600], "frames": inner}


def worker(spec_path):
    import signal

    with open(spec_path) as f:
        spec = json.load(f)
    os.chdir(spec["cwd"])
    sys.path.insert(0, spec["cwd"])
    sys.argv = ["notebook"]
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance()
    shell.user_ns["MAX_EPOCHS"] = spec["max_epochs"]
    shell.user_ns["MAX_WALLCLOCK"] = spec["max_wallclock"]
    if spec["framework"] == "glasstorch":   # this process binds with %load_ext; its children at start
        os.environ["GLASSTORCH_BOOKS_BIND"] = "1"
    shell.user_ns["TOOLS"] = HERE
    results = {"framework": spec["framework"], "name": spec["name"], "cells": [], "finished": False}

    def save():
        with open(spec["result"] + ".tmp", "w") as f:
            json.dump(results, f, indent=1)
        os.replace(spec["result"] + ".tmp", spec["result"])

    def on_alarm(signum, frame):
        raise CellTimeout(f"cell ran longer than {spec['cell_timeout']} s")
    signal.signal(signal.SIGALRM, on_alarm)

    def execute(code):
        signal.alarm(spec["cell_timeout"])
        start = time.time()
        try:
            outcome = shell.run_cell(code, store_history=True)
        finally:
            signal.alarm(0)
        error = outcome.error_before_exec or outcome.error_in_exec
        record = {"seconds": round(time.time() - start, 2)}
        if error is None:
            record["status"] = "ok"
        else:
            record.update(status="error", error=describe(error))
        return record

    setup = (["%load_ext glasstorch"] if spec["framework"] == "glasstorch" else []) + spec["preludes"]
    for code in setup:
        record = execute(code)
        if record["status"] != "ok":
            results["prelude_error"] = record["error"]
            save()
            print("PRELUDE FAILED", record["error"], file=sys.stderr)
            return 2
    for index, cell in enumerate(spec["cells"]):
        print(f"\n===== cell {index} =====", flush=True)
        if cell["skip"]:
            record = {"status": "skipped", "reason": cell["skip"]}
        else:
            recorded = shell.user_ns.setdefault("_RECORDED_LOSSES", [])
            before = len(recorded)
            record = execute(cell["code"])
            record["losses"] = recorded[before:]
        record["index"] = index
        record["head"] = cell["code"].strip().splitlines()[0][:80] if cell["code"].strip() else ""
        results["cells"].append(record)
        save()
    results["finished"] = True
    save()
    return 0


# ----------------------------------------------------------------------------------------------------
# The parent: workspaces, notebooks, runs
# ----------------------------------------------------------------------------------------------------

# data a section reads from elsewhere than ``../data``: (chapter, the path it reads) -> a link to ``../data``
# (the naive-Bayes appendix downloads MNIST into ``./temp``)
D2L_DATA_LINKS = {("chapter_appendix-mathematics-for-deep-learning", "temp")}


def prepare_d2l(work, framework, source):
    """WORK/<framework>/d2l/: an empty directory per chapter (cells run there), `img` linked to the
    book's, `data` holding the stand-ins (one per framework, as downloads extract into it)."""
    base = os.path.join(work, framework, "d2l")
    data = os.path.join(base, "data")
    if not os.path.exists(os.path.join(data, ".made")):
        sys.path.insert(0, HERE)
        import books_data
        books_data.make_d2l(data)
        open(os.path.join(data, ".made"), "w").close()
    link = os.path.join(base, "img")
    if not os.path.lexists(link):          # (a link to a checkout without img/ dangles, but exists)
        os.symlink(os.path.join(os.path.abspath(source), "img"), link)
    return base


def prepare_sbs(work, framework, source):
    """WORK/<framework>/sbs/: a copy of the book's repository (its cells write files there), with the
    Rock Paper Scissors stand-in."""
    base = os.path.join(work, framework, "sbs")
    if not os.path.exists(os.path.join(base, ".made")):
        shutil.copytree(source, base, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns(".git", "images", "revision", "*.pdf"))
        sys.path.insert(0, HERE)
        import books_data
        books_data.make_rps(base)
        open(os.path.join(base, ".made"), "w").close()
    return base


def notebooks(args):
    """(name, cells, book) for every notebook selected by --only."""
    found = []
    if args.d2l:
        found += [(name, d2l_cells(path), "d2l") for name, path in d2l_notebooks(args.d2l)]
    if args.sbs:
        found += [(name, sbs_cells(path), "sbs") for name, path in sbs_notebooks(args.sbs)]
    if args.only:
        found = [n for n in found if any(part in n[0] for part in args.only)]
    return found


def result_path(work, name, framework):
    return os.path.join(work, "results", name.replace("/", "__") + f".{framework}.json")


def run_one(args, name, cells, book, framework):
    work = os.path.abspath(args.work)
    if book == "d2l":
        base = prepare_d2l(work, framework, args.d2l)
        cwd = os.path.join(base, name.split("/")[1])
        os.makedirs(cwd, exist_ok=True)
        for chapter, path in D2L_DATA_LINKS:
            if chapter == name.split("/")[1] and not os.path.lexists(os.path.join(cwd, path)):
                os.symlink(os.path.join("..", "data"), os.path.join(cwd, path))
        preludes = [COMMON_PRELUDE] + ([] if args.no_sync else [SYNC_PRELUDE]) + [D2L_PRELUDE]
        if any("syne_tune" in cell for cell in cells):
            preludes.append(SYNETUNE_PRELUDE)
    else:
        base = prepare_sbs(work, framework, args.sbs)
        cwd = base
        preludes = [COMMON_PRELUDE] + ([] if args.no_sync else [SYNC_PRELUDE]) + [SBS_PRELUDE]
    os.makedirs(cwd, exist_ok=True)
    for sub in ("results", "logs", "specs"):
        os.makedirs(os.path.join(work, sub), exist_ok=True)
    stem = name.replace("/", "__") + f".{framework}"
    spec = {"name": name, "framework": framework, "cwd": cwd, "preludes": preludes,
            "cells": [{"code": runnable(c), "skip": skip_reason(c)} for c in cells],
            "result": result_path(work, name, framework), "cell_timeout": args.cell_timeout,
            "max_epochs": args.max_epochs, "max_wallclock": args.max_wallclock}
    spec_path = os.path.join(work, "specs", stem + ".json")
    with open(spec_path, "w") as f:
        json.dump(spec, f)
    torch_home = os.path.join(work, "torch_home")
    if book == "d2l":
        sys.path.insert(0, HERE)
        import books_data
        books_data.make_pretrained_standins(torch_home)
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONHASHSEED="0", TORCH_HOME=torch_home, **ONE_THREAD)
    env.pop("GLASSTORCH_BOOKS_BIND", None)
    if framework == "glasstorch":
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [os.path.join(HERE, "books_site"),
                                                          env.get("PYTHONPATH")]))
    start = time.time()
    with open(os.path.join(work, "logs", stem + ".log"), "w") as log:
        try:
            subprocess.run([args.python, os.path.abspath(__file__), "_worker", spec_path], stdout=log,
                           stderr=subprocess.STDOUT, env=env, timeout=args.notebook_timeout, cwd=cwd)
        except subprocess.TimeoutExpired:
            print(f"  {framework}: notebook ran past {args.notebook_timeout} s; stopped")
    return time.time() - start


def command_run(args):
    selected = notebooks(args)
    frameworks = FRAMEWORKS if args.framework == "both" else (args.framework,)
    for name, cells, book in selected:
        for framework in frameworks:
            path = result_path(os.path.abspath(args.work), name, framework)
            if os.path.exists(path) and not args.force:
                with open(path) as f:
                    if json.load(f).get("finished"):
                        continue
            if not cells:   # a section with no PyTorch code: nothing to run, no process to start
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as f:
                    json.dump({"framework": framework, "name": name, "cells": [], "finished": True}, f)
                continue
            seconds = run_one(args, name, cells, book, framework)
            print(f"{name} [{framework}] {seconds:.0f} s", flush=True)
    command_report(args, selected)


# ----------------------------------------------------------------------------------------------------
# The report
# ----------------------------------------------------------------------------------------------------

def load(work, name, framework):
    path = result_path(work, name, framework)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def error_line(record):
    error = record["error"]
    return f"{error['type']}: {error['message'].splitlines()[0] if error['message'] else ''}"[:300]


def compare(torch_run, glass_run, n_cells):
    """Per cell: (status, detail)."""
    rows = []
    for index in range(n_cells):
        t = torch_run["cells"][index] if torch_run and index < len(torch_run["cells"]) else None
        g = glass_run["cells"][index] if glass_run and index < len(glass_run["cells"]) else None
        if t is None or g is None:
            rows.append(("not run", ""))
        elif t["status"] == "skipped":
            rows.append(("skipped", t["reason"]))
        elif t["status"] == "ok" and g["status"] == "ok":
            rows.append(("ok", ""))
        elif t["status"] == "ok":
            rows.append(("glasstorch", error_line(g) + "  @ " + " < ".join(reversed(g["error"]["frames"][-3:]))))
        elif g["status"] == "ok":
            rows.append(("torch", error_line(t)))
        else:
            rows.append(("both", error_line(t)))
    return rows


def loss_agreement(torch_run, glass_run):
    """(number of recorded values compared, largest relative difference or None, cells whose runs
    recorded different numbers of values) over the cells that ran under both."""
    compared, worst, uneven = 0, None, 0
    if not (torch_run and glass_run):
        return compared, worst, uneven
    for t, g in zip(torch_run["cells"], glass_run["cells"]):
        if t["status"] != "ok" or g["status"] != "ok":
            continue
        a, b = t.get("losses", []), g.get("losses", [])
        uneven += len(a) != len(b)
        for x, y in zip(a, b):
            if x != x and y != y:       # both NaN: agree
                continue
            difference = abs(x - y) / max(abs(x), 1e-12) if x == x and y == y else float("inf")
            worst = difference if worst is None else max(worst, difference)
            compared += 1
    return compared, worst, uneven


def table_row(name, rows, agreement, torch_run, glass_run):
    """One notebook as a row of docs/programs.md's table: notebook | cells run | result | loss diff."""
    counts = {}
    for status, _ in rows:
        counts[status] = counts.get(status, 0) + 1
    to_run = len(rows) - counts.get("skipped", 0)
    if not rows:
        result = "no PyTorch code cells"
    elif counts.get("glasstorch"):
        result = f"**{counts['glasstorch']} fail only under glasstorch**"
    elif counts.get("not run"):
        result = "not finished (notebook time limit)"
    else:
        result = "every cell that runs under torch runs"
    notes = []
    if counts.get("both"):
        firsts = sorted({detail.split(":")[0] + ": " + detail.split(":", 1)[1].strip()[:70]
                         for status, detail in rows if status == "both"})
        notes.append(f"{counts['both']} fail under torch too ({'; '.join(firsts[:2])})")
    if counts.get("torch"):
        notes.append(f"{counts['torch']} fail only under torch")
    if counts.get("skipped"):
        notes.append(f"{counts['skipped']} skipped")
    if notes:
        result += "; " + "; ".join(notes)
    compared, worst, uneven = agreement
    if compared == 0:
        loss = "-"
    else:
        loss = f"{worst:.1e} ({compared} values)"
        if uneven:
            loss += f", {uneven} cells recorded unequal counts"
    return f"| {name} | {counts.get('ok', 0)}/{to_run} | {result.replace('|', '/')} | {loss} |"


def command_report(args, selected=None):
    work = os.path.abspath(args.work)
    selected = selected if selected is not None else notebooks(args)
    totals = {}
    lines = []
    table = ["| notebook | cells run under both / cells to run | result | largest rel. diff of recorded losses |",
             "|---|---|---|---|"]
    for name, cells, _ in selected:
        torch_run, glass_run = load(work, name, "torch"), load(work, name, "glasstorch")
        if torch_run is None and glass_run is None:
            continue
        rows = compare(torch_run, glass_run, len(cells))
        agreement = loss_agreement(torch_run, glass_run)
        table.append(table_row(name, rows, agreement, torch_run, glass_run))
        counts = {}
        for status, _ in rows:
            counts[status] = counts.get(status, 0) + 1
            totals[status] = totals.get(status, 0) + 1
        summary = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        if agreement[0]:
            summary += f"; losses: {agreement[0]} compared, largest rel. diff {agreement[1]:.2e}"
        lines.append(f"{name}: {summary}")
        for run, fw in ((torch_run, "torch"), (glass_run, "glasstorch")):
            if run and run.get("prelude_error"):
                lines.append(f"    prelude failed under {fw}: {run['prelude_error']}")
        shown = 0
        for index, (status, detail) in enumerate(rows):
            if status in ("glasstorch", "torch") or (status == "both" and args.verbose):
                lines.append(f"    cell {index} [{status}] {cells[index].strip().splitlines()[0][:60]!r}: {detail}")
                shown += 1
    lines.append("TOTAL: " + ", ".join(f"{k} {v}" for k, v in sorted(totals.items())))
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("```\n" + text + "\n```\n")
    if args.table:
        with open(args.table, "w") as f:
            f.write("\n".join(table) + "\n")
    return totals


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["_worker"]:
        return worker(argv[1])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["run", "report", "list"])
    parser.add_argument("--d2l", help="a checkout of d2l-ai/d2l-en at v1.0.3")
    parser.add_argument("--sbs", help="a checkout of dvgodoy/PyTorchStepByStep")
    parser.add_argument("--work", default=DEFAULT_WORK, help="results, logs, stand-in data (default %(default)s)")
    parser.add_argument("--only", action="append", help="notebooks whose name contains this (repeatable)")
    parser.add_argument("--framework", choices=["both", "torch", "glasstorch"], default="both")
    parser.add_argument("--force", action="store_true", help="rerun notebooks that have results")
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter of the runs: needs glasstorch, torch, IPython, matplotlib, d2l==1.0.3")
    parser.add_argument("--max-epochs", type=int, default=2)
    parser.add_argument("--max-wallclock", type=float, default=60,
                        help="seconds: the most a syne-tune tuning run may take (default %(default)s)")
    parser.add_argument("--no-sync", action="store_true", help="let each framework draw its own random numbers")
    parser.add_argument("--table", help="report: also write the per-notebook Markdown table to this file")
    parser.add_argument("--cell-timeout", type=int, default=300)
    parser.add_argument("--notebook-timeout", type=int, default=1800)
    parser.add_argument("--markdown", help="report: also write it to this file")
    parser.add_argument("--verbose", action="store_true", help="report: show the cells failing under both")
    args = parser.parse_args(argv)
    if not (args.d2l or args.sbs):
        parser.error("give --d2l and/or --sbs")
    if args.command == "list":
        for name, cells, _ in notebooks(args):
            print(f"{name}: {len(cells)} cells, {sum(skip_reason(c) is None for c in cells)} to run")
        return 0
    if args.command == "run":
        command_run(args)
    else:
        command_report(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
