"""The main job: ``python -m glasstorch [train|linreg]``; ``run`` runs PyTorch programs unchanged.

train   trains a small convolutional network (d2l's LeNet, sized for 8x8 images) on the 8x8
        handwritten digits that ship with the package, with a progress bar, reports held-out
        accuracy, saves the model and draws its backward graph.
linreg  d2l's linear regression from scratch: synthetic data, hand-written SGD, prints the
        graph of the loss and the learned parameters.
run     python -m glasstorch run SCRIPT [ARGS...] | run -m MODULE [ARGS...]: the program runs with
        `import torch` bound to glasstorch (docs/binding.md).

Every argument is checked before anything is trained (argparse's own errors, exit status 2), and a model
already saved in --out is replaced only by one that scores at least as well on the held-out digits.
"""
import argparse
import difflib
import math
import os
import sys
import tempfile
import time

JOBS = ("train", "linreg", "run")
MODEL_FILE = "digits_lenet.pt"
NEXT_MODEL_FILE = "digits_lenet.new.pt"     # where a run's model goes when the saved one scores better
GRAPH_FILE = "digits_lenet_graph.svg"


# ---- arguments -----------------------------------------------------------------------------------

def positive_int(text):
    """argparse type: an integer >= 1 (0 epochs would "train" nothing; a batch of 0 cannot be drawn)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def learning_rate(text):
    """argparse type: a finite number > 0 (Adam with lr 0 leaves the model untrained; nan/inf wreck it)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number greater than 0, got {text}")
    return value


def seed_value(text):
    """argparse type: an integer in the range torch.manual_seed accepts."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if not -2 ** 63 <= value < 2 ** 64:
        raise argparse.ArgumentTypeError(f"must be in [-2**63, 2**64), as torch.manual_seed requires, got {value}")
    return value


def unwritable_reason(folder):
    """Why `folder` cannot receive the job's files (None if it can): it or a parent is not a directory, or
    no file can be created there. Probes by creating (and removing) a temporary file in the folder, or
    in its nearest existing parent if it does not exist yet (it is created after training)."""
    folder = os.path.abspath(folder)
    existing = folder
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        return f"{existing!r} is not a directory"
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as e:
        return f"cannot create files in {existing!r} (on the way to {folder!r}): {e.strerror or e}"
    return None


def build_parser():
    parser = argparse.ArgumentParser(
        prog="python -m glasstorch",
        description="Train a small network on the digits that ship with glasstorch (train), run d2l's linear "
                    "regression from scratch (linreg), or run a PyTorch program unchanged (run).",
        epilog="Without a job, `train` runs (flags given alone are train's: python -m glasstorch --epochs 3).")
    from .version import glasstorch, torch_api
    parser.add_argument("--version", action="version",
                        version=f"glasstorch {glasstorch} (torch API level {torch_api})")
    sub = parser.add_subparsers(dest="job", metavar="{train,linreg,run}")
    defaults = argparse.ArgumentDefaultsHelpFormatter
    t = sub.add_parser("train", formatter_class=defaults, help="train LeNet on the shipped 8x8 digits (the default)",
                       description="Train d2l's LeNet (scaled to 8x8 inputs) on the 8x8 digits shipped with "
                                   "glasstorch, report held-out accuracy, save the state_dict (real torch.load reads "
                                   "it) and draw the backward graph.")
    t.add_argument("--epochs", type=positive_int, default=12, help="passes over the 1,500 training digits")
    t.add_argument("--batch-size", type=positive_int, default=32, help="digits per optimizer step")
    t.add_argument("--lr", type=learning_rate, default=0.005, help="Adam's learning rate")
    t.add_argument("--seed", type=seed_value, default=0,
                   help="torch.manual_seed: the initial weights and the batch order")
    t.add_argument("--out", default="glasstorch_out",
                   help=f"folder for {MODEL_FILE} and {GRAPH_FILE} (created if needed; a model saved there "
                        f"earlier is replaced only by one at least as accurate, otherwise this run's goes to "
                        f"{NEXT_MODEL_FILE})")
    t.set_defaults(check=lambda args: check_train_args(t, args))
    sub.add_parser("linreg", help="linear regression from scratch, printing its graph",
                   description="d2l's linear regression from scratch: synthetic data, hand-written SGD.")
    sub.add_parser("run", help="run a PyTorch program unchanged: run SCRIPT [ARGS...] or run -m MODULE [ARGS...]",
                   add_help=False)
    return parser


def check_train_args(parser, args):
    """What argparse's types cannot check alone, before any training: where the files will go."""
    reason = unwritable_reason(args.out)
    if reason:
        parser.error(f"argument --out: {reason}")


def with_default_job(parser, argv):
    """`train` when no job is named (flags alone are train's); a helpful error for a word that is no job."""
    if not argv or argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version"):
        return ["train"] + argv
    if argv[0] not in JOBS and not argv[0].startswith("-"):
        word = argv[0]
        if word.endswith(".py") or os.path.exists(word):
            parser.error(f"{word!r} is not a job; to run a program: python -m glasstorch run {word}")
        close = difflib.get_close_matches(word, JOBS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        parser.error(f"unknown job {word!r}{hint}: choose from {', '.join(JOBS)}")
    return argv


# ---- progress ------------------------------------------------------------------------------------

def progress_bar(total, desc, stream=None):
    """A bar for one epoch's `total` batches: tqdm's when tqdm is installed, a plain one otherwise, and
    none when the output is not a terminal (a log gets the one line per epoch that the caller prints,
    not a carriage-return update per batch)."""
    stream = sys.stdout if stream is None else stream
    if not (hasattr(stream, "isatty") and stream.isatty()):
        return _NoBar()
    try:
        from tqdm import tqdm
    except ImportError:
        return _PlainBar(total, desc, stream)
    return _TqdmBar(tqdm(total=total, desc=desc, leave=False, file=stream, dynamic_ncols=True, unit="batch"))


class _NoBar:
    def advance(self, postfix):
        pass

    def close(self):
        pass


class _TqdmBar:
    """tqdm driven by hand: one update per batch. (Wrapping the loader and calling set_postfix_str with its
    default refresh=True redraws the count tqdm's iterator has not written back yet: the bar sat at 0%.)"""

    def __init__(self, bar):
        self.bar = bar

    def advance(self, postfix):
        self.bar.set_postfix_str(postfix, refresh=False)
        self.bar.update(1)

    def close(self):
        self.bar.refresh()      # the full bar, once, before it is cleared for the epoch's line
        self.bar.close()


class _PlainBar:
    """``epoch 3/12 [#########.....] 31/47 loss 0.412``, redrawn in place, erased at the end."""
    WIDTH = 30

    def __init__(self, total, desc, stream):
        self.total, self.desc, self.stream, self.done, self.shown = total, desc, stream, 0, 0

    def advance(self, postfix):
        self.done += 1
        filled = self.WIDTH * self.done // self.total
        line = f"{self.desc} [{'#' * filled}{'.' * (self.WIDTH - filled)}] {self.done}/{self.total} {postfix}"
        self.stream.write("\r" + line.ljust(self.shown))
        self.stream.flush()
        self.shown = len(line)

    def close(self):
        self.stream.write("\r" + " " * self.shown + "\r")
        self.stream.flush()


def _print_graph(tensor, params):
    """The backward graph as an indented tree (node names as torch prints them)."""
    names = {id(p): n for n, p in params.items()}
    seen = set()

    def walk(node, depth):
        if node is None:
            return
        label = type(node).__name__
        if hasattr(node, "variable"):
            v = node.variable
            label += f"  <- {names.get(id(v), 'leaf')} {tuple(v.shape)}"
        print("    " + "  " * depth + label + ("  (seen above)" if id(node) in seen else ""))
        if id(node) in seen:
            return
        seen.add(id(node))
        for nxt, _ in node.next_functions:
            walk(nxt, depth + 1)
    walk(tensor.grad_fn, 0)


def linreg(args):
    import glasstorch as torch
    torch.manual_seed(0)
    true_w, true_b = torch.tensor([2.0, -3.4]), 4.2
    X = torch.normal(0, 1, (1000, 2))
    y = X @ true_w + true_b + torch.normal(0, 0.01, (1000,))
    w = torch.normal(0, 0.01, size=(2,), requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    lr, batch = 0.03, 10
    for epoch in range(3):
        perm = torch.randperm(1000)
        for i in range(0, 1000, batch):
            idx = perm[i:i + batch]
            loss = ((X[idx] @ w + b - y[idx]) ** 2 / 2).sum()
            loss.backward()
            with torch.no_grad():
                for p in (w, b):
                    p -= lr * p.grad / batch
                    p.grad.zero_()
        with torch.no_grad():
            print(f"epoch {epoch + 1}, loss {float((((X @ w + b - y) ** 2) / 2).mean()):f}")
    loss = ((X[:batch] @ w + b - y[:batch]) ** 2 / 2).sum()
    print("\nThe graph of the loss (what backward() walks):")
    _print_graph(loss, {"w": w, "b": b})
    print(f"\nlearned w = {w.detach().tolist()}  (true {true_w.tolist()})")
    print(f"learned b = {b.item():.4f}  (true {true_b})")


def lenet():
    """d2l's LeNet, scaled to 8x8 inputs."""
    from glasstorch import nn
    return nn.Sequential(
        nn.Conv2d(1, 6, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2, 2),
        nn.Conv2d(6, 16, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2, 2),
        nn.Flatten(), nn.Linear(16 * 2 * 2, 64), nn.ReLU(), nn.Linear(64, 10))


def train(args):
    import glasstorch as torch
    from glasstorch import nn
    from glasstorch.datasets import Digits
    from glasstorch.utils.data import DataLoader
    from glasstorch.inspection import seatbelt, draw

    torch.manual_seed(args.seed)
    train_set, test_set = Digits(train=True), Digits(train=False)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    test_loader = DataLoader(test_set, batch_size=256)
    model = lenet()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    loss_fn = nn.CrossEntropyLoss()
    print(f"glasstorch {torch.__version__}: training on {len(train_set)} digits, testing on {len(test_set)}")
    print(model, flush=True)
    start = time.perf_counter()
    belt = seatbelt()  # watches the run for the silent training traps (docs/inspection.md)
    try:
        with belt:
            accuracy = _fit(model, optimizer, loss_fn, train_loader, test_loader, args)
    except KeyboardInterrupt:
        print(f"\ninterrupted: nothing was saved (a model in {args.out} is left as it was)", file=sys.stderr)
        sys.exit(130)
    seconds = time.perf_counter() - start
    print(f"trained in {seconds:.1f} s")
    print(belt.report())

    os.makedirs(args.out, exist_ok=True)
    path = save_model(model, accuracy, test_loader, args.out)

    X, y = next(iter(test_loader))
    loss = loss_fn(model(X[:4]), y[:4])
    params = dict(model.named_parameters())
    print("\nThe backward graph of the loss, as loss.grad_fn.next_functions links it:")
    _print_graph(loss, params)
    svg = os.path.join(args.out, GRAPH_FILE)
    draw(loss, params=params).save(svg)
    print(f"drew the graph to {svg}")
    print(f"\ndone: held-out accuracy {accuracy:.3f} after {args.epochs} epoch{'s' * (args.epochs != 1)} in "
          f"{seconds:.1f} s; model in {path}, graph in {svg}")


def save_model(model, accuracy, test_loader, out):
    """Save the state_dict as out/digits_lenet.pt, unless a model saved there earlier scores better on the
    held-out digits (or cannot be read as this network's): then it stays, and this run's model goes next to
    it. Returns the path written."""
    import glasstorch as torch
    path = os.path.join(out, MODEL_FILE)
    earlier = saved_accuracy(path, test_loader) if os.path.exists(path) else None
    if earlier is not None and not (isinstance(earlier, float) and accuracy >= earlier):
        kept = path
        path = os.path.join(out, NEXT_MODEL_FILE)
        why = (f"it scores {earlier:.3f} held-out accuracy, this run {accuracy:.3f}" if isinstance(earlier, float)
               else f"it is not a state_dict of this network ({earlier})")
        print(f"kept the model saved earlier in {kept}: {why}")
    torch.save(model.state_dict(), path)
    print(f"saved the model's state_dict to {path} (real PyTorch can torch.load it)")
    return path


def saved_accuracy(path, test_loader):
    """The held-out accuracy of the model saved at `path`, or a string saying why it cannot be read."""
    import glasstorch as torch
    model = lenet()
    try:
        model.load_state_dict(torch.load(path))
    except Exception as e:     # any file at all may sit there: it is kept, whatever is wrong with it
        return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}".rstrip(": ")
    return evaluate(model, test_loader)


def _fit(model, optimizer, loss_fn, train_loader, test_loader, args):
    """Train for args.epochs; one line per epoch (flushed, so a log shows progress); the last accuracy."""
    for epoch in range(args.epochs):
        model.train()
        total, n = 0.0, 0
        bar = progress_bar(len(train_loader), f"epoch {epoch + 1}/{args.epochs}")
        try:
            for X, y in train_loader:
                optimizer.zero_grad()
                loss = loss_fn(model(X), y)
                loss.backward()
                optimizer.step()
                total += loss.item() * len(y)
                n += len(y)
                bar.advance(f"loss {total / n:.3f}")
        finally:
            bar.close()
        accuracy = evaluate(model, test_loader)
        print(f"epoch {epoch + 1}: train loss {total / n:.4f}, held-out accuracy {accuracy:.3f}", flush=True)
    return accuracy


def evaluate(model, loader):
    import glasstorch as torch
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for X, y in loader:
            correct += int((model(X).argmax(1) == y).sum())
            total += len(y)
    return correct / total


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["run"]:  # everything after `run` belongs to the user's program: no parsing here
        from ._binding import run_main
        return run_main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(with_default_job(parser, argv))
    if hasattr(args, "check"):
        args.check(args)
    if args.job == "train":
        train(args)
    else:
        linreg(args)


if __name__ == "__main__":
    main()
