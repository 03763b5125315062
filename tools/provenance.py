"""Which glasstorch files share code with PyTorch's or torchvision's own Python sources.

    python tools/provenance.py                      # against the installed torch (and torchvision, if any)
    python tools/provenance.py --torchvision DIR    # a torchvision package directory (e.g. unzipped wheel)

glasstorch reproduces torch's API, so its names, signatures, error messages and docstrings follow
torch's everywhere; some files go further and follow torch's implementation line by line. BSD-3-Clause
asks that such derived files keep the original copyright notice: NOTICE does that, and lists the files
this script finds. A line counts when it is at least 25 characters long (short lines such as
``return x`` or ``self.p = p`` say nothing about origin), is not a comment, and appears, after
whitespace is collapsed, in the upstream file that shares the most lines with it. A file is listed when
at least 15 such lines and 25% of its long lines are shared.
"""
import argparse
import collections
import os
import re
import sys

MIN_LEN, MIN_LINES, MIN_SHARE = 25, 15, 0.25
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def long_lines(path):
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            s = line.strip()
            if len(s) >= MIN_LEN and not s.startswith("#"):
                out.append(re.sub(r"\s+", " ", s))
    return out


def index(package_dir):
    """long line -> the upstream files (relative paths) that contain it."""
    where = collections.defaultdict(set)
    for root, _, files in os.walk(package_dir):
        for name in files:
            if name.endswith((".py", ".pyi")):
                path = os.path.join(root, name)
                for line in set(long_lines(path)):
                    where[line].add(os.path.relpath(path, package_dir))
    return where


def shared(ours, upstream_name, where):
    """[(file, shared lines, long lines, upstream file)] for files over the thresholds."""
    rows = []
    for root, _, files in os.walk(ours):
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(root, name)
            lines = long_lines(path)
            best = collections.Counter(f for line in lines for f in where.get(line, ()))
            if not best:
                continue
            upstream, count = best.most_common(1)[0]
            if count >= MIN_LINES and count / len(lines) >= MIN_SHARE:
                rows.append((os.path.relpath(path, ROOT), count, len(lines), f"{upstream_name}/{upstream}"))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--torch", help="torch package directory (default: the installed one)")
    parser.add_argument("--torchvision", help="torchvision package directory (default: the installed one)")
    args = parser.parse_args(argv)
    rows = []
    for name, given, ours in (("torch", args.torch, "glasstorch"), ("torchvision", args.torchvision, "glasstorch/vision")):
        directory = given
        if directory is None:
            try:
                directory = os.path.dirname(__import__(name).__file__)
            except ImportError:
                print(f"({name} is not installed: skipped; pass --{name} DIR)", file=sys.stderr)
                continue
        found = shared(os.path.join(ROOT, ours), name, index(directory))
        if name == "torch":  # glasstorch/vision is compared with torchvision, not torch
            found = [r for r in found if not r[0].startswith("glasstorch/vision/")]
        rows += found
    for path, count, total, upstream in sorted(rows):
        print(f"{path:55s} {count:4d}/{total:<4d} ({count / total:4.0%})  {upstream}")


if __name__ == "__main__":
    main()
