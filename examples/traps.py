"""Three silent training bugs, and the seatbelt that catches them.

    python examples/traps.py           # the buggy version: three warnings, each with its line and its fix
    python examples/traps.py --fixed   # the same script with the three fixes: no warnings

The script trains a small classifier on the 8x8 digits that ship with glasstorch. Each planted bug
raises no error and still lets the loss go down a little, which is what makes it dangerous:

1. the model ends in ``nn.Softmax`` and the loss is ``nn.CrossEntropyLoss`` (softmax applied twice),
2. ``optimizer.zero_grad()`` is missing (every step re-applies all the earlier gradients),
3. the model is evaluated under ``no_grad`` but still in train mode (dropout stays on).

The same script runs on real PyTorch if you change the import (it has no seatbelt, of course).
"""
import argparse
import linecache
import os
import sys
import warnings

import glasstorch as torch
from glasstorch import nn
from glasstorch.datasets.digits import load_digits
from glasstorch.inspection import seatbelt, TrapWarning


def build_model(fixed):
    layers = [nn.Flatten(), nn.Linear(64, 64), nn.ReLU(), nn.Dropout(0.3), nn.Linear(64, 10)]
    if not fixed:
        layers.append(nn.Softmax(dim=1))      # bug 1: CrossEntropyLoss expects logits
    return nn.Sequential(*layers)


def train(fixed=False, epochs=3, batch_size=100):
    torch.manual_seed(0)
    images, labels = load_digits()
    X = torch.tensor(images, dtype=torch.float32) / 16
    y = torch.tensor(labels)
    X_train, y_train, X_test, y_test = X[:1500], y[:1500], X[1500:], y[1500:]

    model = build_model(fixed)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        model.train()
        for i in range(0, len(X_train), batch_size):
            xb, yb = X_train[i:i + batch_size], y_train[i:i + batch_size]
            if fixed:
                optimizer.zero_grad()         # bug 2 when missing: gradients pile up across steps
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
        if fixed:
            model.eval()                      # bug 3 when missing: dropout on during evaluation
        with torch.no_grad():
            accuracy = (model(X_test).argmax(dim=1) == y_test).float().mean().item()
        print(f"epoch {epoch + 1}: last batch loss {loss.item():.3f}, test accuracy {accuracy:.3f}")
    return model


def main(argv=None):
    parser = argparse.ArgumentParser(description="Three silent training bugs, and the seatbelt.")
    parser.add_argument("--fixed", action="store_true", help="run the corrected script")
    args = parser.parse_args(argv)

    print(f"Training the {'fixed' if args.fixed else 'buggy'} script under glasstorch.inspection.seatbelt()\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with seatbelt() as belt:
            train(fixed=args.fixed)
    traps = [w for w in caught if issubclass(w.category, TrapWarning)]
    for w in traps:
        source = linecache.getline(w.filename, w.lineno).strip()
        print(f"\n{os.path.basename(w.filename)}:{w.lineno}: {w.category.__name__}")
        print(f"    {source}")
        what, _, fix = str(w.message).partition(" Fix: ")
        print(f"  {what}")
        print(f"  Fix: {fix}")
    print()
    print(belt.report().splitlines()[0].rstrip(":"))
    return len(traps)


if __name__ == "__main__":
    sys.exit(0 if main() >= 0 else 1)
