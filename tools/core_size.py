"""The size of glasstorch's core: the Tensor, autograd, the ops and the array seam.

    python tools/core_size.py [--files]

For each part it prints the physical lines and the lines of code (lines that hold something
other than blanks, comments and docstrings), so the size can be watched as the code grows; as
tinygrad says of its own line count, the aim is readable code, not code golf.
"""
import argparse
import io
import os
import tokenize

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "glasstorch")

PARTS = [  # (name, paths relative to glasstorch/: files, or directories taken whole)
    ("tensor", ["_tensor.py", "_dtype.py", "_tensor_str.py"]),
    ("autograd", ["autograd"]),
    ("ops", ["ops"]),
    ("_array", ["_array"]),
]


def python_files(path):
    full = os.path.join(ROOT, path)
    if os.path.isfile(full):
        return [full]
    found = []
    for directory, _, names in sorted(os.walk(full)):
        found += [os.path.join(directory, n) for n in sorted(names) if n.endswith(".py")]
    return found


def count(filename):
    """(physical lines, lines of code) of one Python file."""
    with open(filename, encoding="utf-8") as f:
        source = f.read()
    code_lines = set()
    previous = tokenize.INDENT
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        kind = tok.type
        if kind in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                    tokenize.ENDMARKER):
            previous = kind if kind != tokenize.COMMENT else previous
            continue
        # a string that is a statement on its own (module/class/function docstring) is documentation
        is_docstring = kind == tokenize.STRING and previous in (tokenize.INDENT, tokenize.DEDENT, tokenize.NEWLINE)
        if not is_docstring:
            code_lines.update(range(tok.start[0], tok.end[0] + 1))
        previous = kind
    return source.count("\n"), len(code_lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", action="store_true", help="also list every file")
    args = ap.parse_args()
    total_lines = total_code = 0
    print(f"{'part':<40}{'lines':>8}{'code':>8}")
    for name, paths in PARTS:
        part_lines = part_code = 0
        for path in paths:
            for filename in python_files(path):
                lines, code = count(filename)
                part_lines += lines
                part_code += code
                if args.files:
                    print(f"  {os.path.relpath(filename, os.path.dirname(ROOT)):<38}{lines:>8}{code:>8}")
        print(f"{name:<40}{part_lines:>8}{part_code:>8}")
        total_lines += part_lines
        total_code += part_code
    print(f"{'core total':<40}{total_lines:>8}{total_code:>8}")


if __name__ == "__main__":
    main()
