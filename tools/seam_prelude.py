"""Moves public functions from the old seam prelude to ``@overridable`` (glasstorch/_seam.py).

The old form, two lines at the top of a function's body::

    def add(input, other, *, alpha=1):
        if seam.on:
            return seam.torch_function(add, (input, other), {"alpha": alpha})
        ...

becomes a decorator right above the ``def`` (and the two lines go)::

    @overridable
    def add(input, other, *, alpha=1):
        ...

A prelude is converted only when the decorator hands the seam exactly what it handed: the function
itself (its name, ``globals()["name"]``, or ``Class.name`` in a class body), every positional
parameter in the tuple and the keyword-only ones in the dict (``@overridable``, which since stop 27
hands only those the caller gave, as torch's bindings do), or the positional
parameters without a default in the tuple and the others in the dict (``@overridable(
defaults_by_keyword=True)``, torch's convention for functions written in Python), an argument left
out while it holds its default None, False or True (``{} if out is None else {"out": out}``,
``(input,) if p is None else (input, p)``: ``@overridable(omitted=("out",))``). A function under
``@accepts_numpy_names`` loses its prelude alone (that decorator's wrapper asks the seam, with the
arguments as the caller gave them). Any other prelude is left as it is, and listed: the old form
keeps working (it calls the function a second time when nothing takes the call; inside
``redispatch_function`` its calls are not seen).

Why the ones left (stop 26) are left, by kind:

* the function handed is not the ``def`` itself but the public function a maker makes of it, under a
  name given at run time (``shape._at_least``'s ``fn``, creation's
  ``factory`` under ``functools.wraps``): the decorator hands the function it decorates;
* it hands a subset of its parameters, or one of them in another place than its signature's, as
  torch's handlers are given them: ``Tensor.__array__`` (without NumPy 2's ``copy``),
  ``Tensor.__array_wrap__`` (``array`` as a keyword), ``Tensor.cuda`` and ``unravel_index`` (a
  positional parameter as a keyword): the decorator would change what a handler is given;
* ``nn.functional.one_hot`` is under ``_checks.allocates`` (a wrapper of its own; ``ops/nn_conv.py``).

    python tools/seam_prelude.py [--check] [files...]     # default: every file under glasstorch/

``--check`` changes nothing and exits 1 if a prelude could be converted.
"""
import argparse
import ast
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
# decorators that return the function they are given (a Tensor method binding): the module-level
# name is then the function itself, and @overridable goes below them
_TRANSPARENT = ("method",)


def _docstring_offset(fn):
    b = fn.body
    return 1 if b and isinstance(b[0], ast.Expr) and isinstance(b[0].value, ast.Constant) \
        and isinstance(b[0].value.value, str) else 0


def _old_prelude(fn):
    """The old prelude's If node and its seam.torch_function call, or None."""
    i = _docstring_offset(fn)
    if len(fn.body) <= i + 1:
        return None
    st = fn.body[i]
    if not (isinstance(st, ast.If) and ast.unparse(st.test) == "seam.on" and not st.orelse and len(st.body) == 1):
        return None
    ret = st.body[0]
    if not (isinstance(ret, ast.Return) and isinstance(ret.value, ast.Call)
            and ast.unparse(ret.value.func) == "seam.torch_function" and len(ret.value.args) == 3
            and not ret.value.keywords):
        return None
    return st, ret.value


def _names_tuple(node, vararg=None):
    """['a', '*rest'] for ``(a, *rest)``, ``(a,) + rest`` or (``rest`` being the function's
    ``*rest``) ``rest``; None for anything else."""
    if vararg is not None and isinstance(node, ast.Name) and node.id == vararg:
        return ["*" + vararg]
    if vararg is not None and isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) \
            and isinstance(node.right, ast.Name) and node.right.id == vararg:
        head = _names_tuple(node.left)
        return None if head is None else head + ["*" + vararg]
    if not isinstance(node, ast.Tuple):
        return None
    out = []
    for e in node.elts:
        if isinstance(e, ast.Name):
            out.append(e.id)
        elif isinstance(e, ast.Starred) and isinstance(e.value, ast.Name):
            out.append("*" + e.value.id)
        else:
            return None
    return out


def _names_dict(node):
    """['k', '**kw'] for ``{"k": k, **kw}`` or ``dict(k=k)``; None for anything else."""
    out = []
    if isinstance(node, ast.Dict):
        for k, v in zip(node.keys, node.values):
            if k is None and isinstance(v, ast.Name):
                out.append("**" + v.id)
            elif isinstance(k, ast.Constant) and isinstance(v, ast.Name) and k.value == v.id:
                out.append(v.id)
            else:
                return None
        return out
    if isinstance(node, ast.Call) and ast.unparse(node.func) == "dict" and len(node.args) <= 1:
        if node.args:       # dict(numpy_names, dtype=dtype)
            if not isinstance(node.args[0], ast.Name):
                return None
            out.append("**" + node.args[0].id)
        for kw in node.keywords:
            if kw.arg is None and isinstance(kw.value, ast.Name):
                out.append("**" + kw.value.id)
            elif isinstance(kw.value, ast.Name) and kw.arg == kw.value.id:
                out.append(kw.arg)
            else:
                return None
        return out
    if isinstance(node, ast.Name):      # the function's **kwargs, handed as they are
        return ["**" + node.id]
    return None


def _omitting(node, parse):
    """An argument left out while it holds its default, ``X if a is None else Y`` (or ``Y if a else X``,
    ``a``'s default then None or False), Y being X and ``a``: (X's names, the name ``a``) when
    ``parse`` reads both; None for anything else."""
    if not isinstance(node, ast.IfExp):
        return None
    test = node.test
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Is) and \
            isinstance(test.left, ast.Name) and isinstance(test.comparators[0], ast.Constant):
        name, without, with_it = test.left.id, node.body, node.orelse
    elif isinstance(test, ast.Name):
        name, without, with_it = test.id, node.orelse, node.body
    else:
        return None
    short, full = parse(without), parse(with_it)
    if short is None or full is None or sorted(full) != sorted(short + [name]):
        return None
    return short, name


def _omitted_default(fn, name):
    """The default of ``fn``'s parameter ``name`` as source (None when it has none)."""
    a = fn.args
    params = a.posonlyargs + a.args
    defaults = dict(zip([p.arg for p in params[len(params) - len(a.defaults):]], a.defaults))
    defaults.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None})
    d = defaults.get(name)
    return None if d is None else ast.unparse(d)


def _expected(fn, by_keyword):
    a = fn.args
    positional, keywords = [], []
    params = a.posonlyargs + a.args
    first_default = len(params) - len(a.defaults)
    for i, p in enumerate(params):
        (keywords if by_keyword and i >= first_default else positional).append(p.arg)
    if a.vararg:
        positional.append("*" + a.vararg.arg)
    keywords += [p.arg for p in a.kwonlyargs]
    if a.kwarg:
        keywords.append("**" + a.kwarg.arg)
    return positional, keywords


def _sorted(expected):
    return expected[0], sorted(expected[1])


def _is_self(node, fn, cls, src):
    """Whether ``node`` names function ``fn`` itself: its name, ``globals()["name"]``, ``Class.name``
    in the class's body, or ``Tensor.name`` in a module that sets ``Tensor.name = name``."""
    text = ast.unparse(node)
    if text in (fn.name, f"globals()[{fn.name!r}]", f'globals()["{fn.name}"]'):
        return True
    if cls is not None:
        return text == f"{cls}.{fn.name}"
    if text == f"Tensor.{fn.name}":
        for line in src.splitlines():
            targets, _, values = line.partition(" = ")
            if not line.startswith(" ") and values:
                t = [x.strip() for x in targets.split(",")]
                v = [x.strip() for x in values.split(",")]
                if len(t) == len(v) and (text, fn.name) in zip(t, v):
                    return True
    return False


def convert(path, check=False):
    """Convert the preludes of one file; returns (converted, [reasons left])."""
    src = path.read_text()
    if "seam.torch_function" not in src:
        return 0, []
    tree = ast.parse(src)
    lines = src.splitlines(True)
    edits, left = [], []     # edits: (first line index to delete, last, decorator line or None, def line index)

    def visit(node, cls):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, child.name if cls is None and node is tree else None)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found = _old_prelude(child)
                if found is not None:
                    handle(child, cls, *found)
                visit(child, None)
            else:
                visit(child, cls)

    def handle(fn, cls, st, call):
        where = f"{path.relative_to(ROOT)}:{st.lineno} {fn.name}"
        decos = [ast.unparse(d.func if isinstance(d, ast.Call) else d) for d in fn.decorator_list]
        if not _is_self(call.args[0], fn, cls, src):
            left.append(f"{where}: hands the seam {ast.unparse(call.args[0])}, not the function itself")
            return
        if "accepts_numpy_names" in decos:
            edits.append((st.lineno - 1, st.end_lineno - 1, None, fn.lineno - 1))
            return
        others = [d for d in decos if d not in _TRANSPARENT]
        if others:
            left.append(f"{where}: decorated with {', '.join(others)}")
            return
        # (the keywords' order is not compared: a dict's order means nothing to a handler)
        vararg = fn.args.vararg and fn.args.vararg.arg
        omitted = []
        keywords = _names_dict(call.args[2])
        if keywords is None:        # {} if out is None else {"out": out}; dict(a=a, **<that>)
            keywords = _omitting(call.args[2], _names_dict)
            if keywords is None and isinstance(call.args[2], ast.Call) and ast.unparse(call.args[2].func) == "dict" \
                    and not call.args[2].args and call.args[2].keywords and call.args[2].keywords[-1].arg is None:
                head = ast.Call(func=call.args[2].func, args=[], keywords=call.args[2].keywords[:-1])
                tail = _omitting(call.args[2].keywords[-1].value, _names_dict)
                keywords = None if tail is None or _names_dict(head) is None else (_names_dict(head) + tail[0], tail[1])
            if keywords is not None:
                keywords, name = keywords
                omitted.append(name)
                keywords = keywords + [name]
        positional = _names_tuple(call.args[1], vararg)
        if positional is None:      # (input,) if p is None else (input, p)
            positional = _omitting(call.args[1], lambda n: _names_tuple(n, vararg))
            if positional is not None:
                positional, name = positional
                omitted.append(name)
                positional = positional + [name]
        got = (positional, None if keywords is None else sorted(keywords))
        if any(_omitted_default(fn, n) not in ("None", "False", "True") for n in omitted):
            got = (None, None)      # (the decorator omits only an argument at its default None, False or True)
        quoted = ", ".join('"' + n + '"' for n in omitted)
        options = [f"omitted=({quoted},)"] if omitted else []
        if got == _sorted(_expected(fn, False)):
            deco = "@overridable"   # (which hands on only what the caller gave: omitted= is for the keyword forms)
        elif got == _sorted(_expected(fn, True)):
            deco = f"@overridable({', '.join(['defaults_by_keyword=True'] + options)})"
        else:
            left.append(f"{where}: hands the seam {ast.unparse(call.args[1])}, {ast.unparse(call.args[2])}")
            return
        edits.append((st.lineno - 1, st.end_lineno - 1, deco, fn.lineno - 1))

    visit(tree, None)
    if check or not edits:
        return len(edits), left
    for first, last, deco, def_line in sorted(edits, reverse=True):
        # a comment line right after the prelude that explains it goes with it? no: only the If itself
        del lines[first:last + 1]
        if deco is not None:
            indent = re.match(r"\s*", lines[def_line]).group(0)
            lines.insert(def_line, indent + deco + "\n")
    text = "".join(lines)
    text = _fix_imports(text)
    path.write_text(text)
    return len(edits), left


def _fix_imports(text):
    """Import ``overridable`` next to ``seam`` (and drop ``seam`` where nothing else uses it)."""
    m = re.search(r"^from (\.+|glasstorch\.)_seam import (\([^)]*\)|[^\n]*)$", text, re.M)
    if m is None:
        return text
    names = [n.strip() for n in m.group(2).strip("()").replace("\n", " ").split(",") if n.strip()]
    rest = text[:m.start()] + text[m.end():]
    if "@overridable" in text and "overridable" not in names:
        names.append("overridable")
    if "seam" in names and not re.search(r"\bseam\b", rest):
        names.remove("seam")
    line = f"from {m.group(1)}_seam import {', '.join(names)}"
    if len(line) > 110:
        line = f"from {m.group(1)}_seam import ({', '.join(names)})"
        cut = line.rfind(", ", 0, 110)
        line = line[:cut + 1] + "\n" + " " * (len(f"from {m.group(1)}_seam import (")) + line[cut + 2:]
    return text[:m.start()] + (line if names else "") + text[m.end():]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    parser.add_argument("files", nargs="*")
    opts = parser.parse_args()
    files = [pathlib.Path(f).resolve() for f in opts.files] or sorted((ROOT / "glasstorch").rglob("*.py"))
    total, left = 0, []
    for f in files:
        if f.name == "_seam.py":
            continue
        n, why = convert(f, opts.check)
        total += n
        left += why
    print(f"{'convertible' if opts.check else 'converted'}: {total}; left in the old form: {len(left)}")
    for line in left:
        print("  " + line)
    return 1 if opts.check and total else 0


if __name__ == "__main__":
    sys.exit(main())
