"""Every public function declared the one way: no old-form seam prelude (``if seam.on: return
seam.torch_function(...)`` at the top of a body) that ``@overridable`` could replace is left
(``python tools/seam_prelude.py`` converts them; the ones it leaves hand the seam something the
decorator does not, and keep working)."""
import importlib.util
import pathlib

import glasstorch

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _tool():
    spec = importlib.util.spec_from_file_location("seam_prelude", ROOT / "tools" / "seam_prelude.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_convertible_old_prelude_is_left():
    tool = _tool()
    convertible = {}
    for path in sorted((ROOT / "glasstorch").rglob("*.py")):
        if path.name != "_seam.py":
            n, _ = tool.convert(path, check=True)
            if n:
                convertible[str(path.relative_to(ROOT))] = n
    assert convertible == {}, f"run python tools/seam_prelude.py: {convertible}"


def test_the_tool_converts_the_old_form(tmp_path):
    """The conversion itself, on a file written in the old form: decorator per convention, the
    prelude gone, the import fixed; the converted functions hand a mode what the old ones did."""
    source = '''from glasstorch._seam import seam


def scale(input, factor, *, bias=0):
    """input * factor + bias"""
    if seam.on:
        return seam.torch_function(scale, (input, factor), {"bias": bias})
    return input * factor + bias


def shift(input, by=1):
    if seam.on:
        return seam.torch_function(shift, (input,), dict(by=by))
    return input + by


def odd(input, out=None):
    if seam.on:
        return seam.torch_function(odd, (input,), {} if out is None else {"out": out})
    return input


def other(input, *, out=None):
    if seam.on:
        return seam.torch_function(other, (input,), {"out": out} if out is not None else {"out": 1})
    return input
'''
    path = tmp_path / "old_form.py"
    path.write_text(source)
    tool = _tool()
    tool.ROOT = tmp_path
    converted, left = tool.convert(path)
    text = path.read_text()
    assert converted == 3 and len(left) == 1 and "other" in left[0]
    assert "@overridable\ndef scale(" in text and "@overridable(defaults_by_keyword=True)\ndef shift(" in text
    assert '@overridable(defaults_by_keyword=True, omitted=("out",))\ndef odd(' in text
    assert text.count("seam.torch_function") == 1 and "from glasstorch._seam import seam, overridable" in text

    spec = importlib.util.spec_from_file_location("old_form", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    seen = []

    class Log(glasstorch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append((func.__name__, len(args), kwargs))
            return func(*args, **(kwargs or {}))
    x = glasstorch.ones(2)
    with Log():
        assert module.scale(x, 2, bias=1).tolist() == [3.0, 3.0]
        assert module.shift(x).tolist() == [2.0, 2.0]
        module.odd(x), module.odd(x, out=x)
    seen = [call for call in seen if call[0] in ("scale", "shift", "odd")]     # (not tolist)
    assert seen[0] == ("scale", 2, {"bias": 1}) and seen[1] == ("shift", 1, {"by": 1})
    assert seen[2] == ("odd", 1, {}) and seen[3] == ("odd", 1, {"out": x})
