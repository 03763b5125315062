"""The main job: ``python -m glasstorch [train|linreg]``; ``run`` runs PyTorch programs unchanged.

train   trains a small convolutional network (d2l's LeNet, sized for 8x8 images) on the 8x8
        handwritten digits that ship with the package, with a progress bar, reports held-out
        accuracy, saves the model and draws its backward graph.
linreg  d2l's linear regression from scratch: synthetic data, hand-written SGD, prints the
        graph of the loss and the learned parameters.
run     python -m glasstorch run SCRIPT [ARGS...] | run -m MODULE [ARGS...]: the program runs with
        `import torch` bound to glasstorch (docs/binding.md).
"""
import argparse
import os
import sys
import time


def _progress(iterable, total, desc):
    """tqdm when it is installed, a plain text bar when it is not."""
    try:
        from tqdm import tqdm
        return tqdm(iterable, total=total, desc=desc, leave=False, file=sys.stdout, ncols=80)
    except ImportError:
        return _PlainBar(iterable, total, desc)


class _PlainBar:
    def __init__(self, iterable, total, desc):
        self.iterable, self.total, self.desc = iterable, total, desc
        self.postfix = ""

    def set_postfix_str(self, s):
        self.postfix = s

    def __iter__(self):
        width = 30
        for i, item in enumerate(self.iterable, 1):
            yield item
            filled = int(width * i / self.total)
            sys.stdout.write(f"\r{self.desc} [{'#' * filled}{'.' * (width - filled)}] {i}/{self.total} {self.postfix}")
            sys.stdout.flush()
        sys.stdout.write("\r" + " " * (len(self.desc) + width + 40) + "\r")


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
    # d2l's LeNet, scaled to 8x8 inputs
    model = nn.Sequential(
        nn.Conv2d(1, 6, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2, 2),
        nn.Conv2d(6, 16, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2, 2),
        nn.Flatten(), nn.Linear(16 * 2 * 2, 64), nn.ReLU(), nn.Linear(64, 10))
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    loss_fn = nn.CrossEntropyLoss()
    print(f"glasstorch {torch.__version__}: training on {len(train_set)} digits, testing on {len(test_set)}")
    print(model)
    start = time.perf_counter()
    belt = seatbelt()  # watches the run for the silent training traps (docs/inspection.md)
    with belt:
        _fit(model, optimizer, loss_fn, train_loader, test_loader, args)
    print(f"trained in {time.perf_counter() - start:.1f} s")
    print(belt.report())

    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "digits_lenet.pt")
    torch.save(model.state_dict(), path)
    print(f"saved the model's state_dict to {path} (real PyTorch can torch.load it)")

    X, y = next(iter(test_loader))
    loss = loss_fn(model(X[:4]), y[:4])
    params = dict(model.named_parameters())
    print("\nThe backward graph of the loss, as loss.grad_fn.next_functions links it:")
    _print_graph(loss, params)
    svg = os.path.join(args.out, "digits_lenet_graph.svg")
    draw(loss, params=params).save(svg)
    print(f"drew the graph to {svg}")


def _fit(model, optimizer, loss_fn, train_loader, test_loader, args):
    for epoch in range(args.epochs):
        model.train()
        total, n = 0.0, 0
        bar = _progress(train_loader, len(train_loader), f"epoch {epoch + 1}/{args.epochs}")
        for X, y in bar:
            optimizer.zero_grad()
            loss = loss_fn(model(X), y)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(y)
            n += len(y)
            if hasattr(bar, "set_postfix_str"):
                bar.set_postfix_str(f"loss {total / n:.3f}")
        acc = evaluate(model, test_loader)
        print(f"epoch {epoch + 1}: train loss {total / n:.4f}, held-out accuracy {acc:.3f}")


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
    parser = argparse.ArgumentParser(prog="python -m glasstorch", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="job")
    t = sub.add_parser("train", help="train LeNet on the shipped 8x8 digits (the default)")
    t.add_argument("--epochs", type=int, default=12)
    t.add_argument("--batch-size", type=int, default=32)
    t.add_argument("--lr", type=float, default=0.005)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--out", default="glasstorch_out")
    sub.add_parser("linreg", help="linear regression from scratch, printing its graph")
    sub.add_parser("run", help="run a PyTorch program unchanged: run SCRIPT [ARGS...] or run -m MODULE [ARGS...]",
                   add_help=False)
    args = parser.parse_args(argv)
    if args.job in (None, "train"):
        if args.job is None:
            args = parser.parse_args(["train"] + argv)
        train(args)
    else:
        linreg(args)


if __name__ == "__main__":
    main()
