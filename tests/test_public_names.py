"""The public names are torch's, and only torch's: ``__all__`` everywhere, no internals on the top
level, one ``RemovableHandle``, the modules where torch keeps things (checked against real torch)."""
import importlib

import pytest

import glasstorch
from glasstorch import nn

torch = pytest.importorskip("torch")

FAMILIES = ["pointwise", "reduction", "shape", "joining", "indexing", "linalg", "creation"]
# glasstorch's own: the digits, the glass, the torchvision subset, the binding (as_torch, %load_ext glasstorch)
GLASSTORCH_OWN = {"datasets", "inspection", "vision", "as_torch", "load_ipython_extension"}


def _public(module):
    return {n for n in dir(module) if not n.startswith("_")}


def test_top_level_is_torchs():
    assert _public(glasstorch) - _public(torch) == GLASSTORCH_OWN
    assert set(glasstorch.__all__) <= _public(torch)
    assert all(hasattr(glasstorch, n) for n in glasstorch.__all__)
    for internal in ("record", "method", "operands", "make_node_class", "inplace", "broadcast_error", "sum_to",
                     "promote_arrays", "result_dtype", "as_tensor_arg", "float_array", "view", "expand", "to"):
        assert not hasattr(glasstorch, internal), internal


def test_hasattr_does_not_raise():
    assert hasattr(glasstorch, "nn") and hasattr(glasstorch, "overrides") and hasattr(glasstorch, "utils")
    assert hasattr(glasstorch, "testing") and hasattr(glasstorch, "random")
    assert hasattr(glasstorch, "library") is False      # (glasstorch has no torch.library yet)
    assert hasattr(glasstorch, "no_such_name") is False


@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_lists_what_torch_has_at_its_top_level(family):
    module = importlib.import_module("glasstorch.ops." + family)
    assert set(module.__all__) <= _public(torch)
    defined = {n for n, obj in vars(module).items() if not n.startswith("_") and callable(obj)
               and getattr(obj, "__module__", None) == module.__name__}
    # a function of the family that torch has at its top level is listed (else it would go missing there)
    assert {n for n in defined if hasattr(torch, n)} <= set(module.__all__)
    for name in module.__all__:   # (the top level's may be the family's given out=: torch.exp(x, out=y))
        top = getattr(glasstorch, name)
        assert top is getattr(module, name) or getattr(top, "__wrapped__", None) is getattr(module, name) \
            or name in ("range",), name


# (torch.nn declares no __all__: `from torch.nn import *` gives functional, init, parallel... too)
@pytest.mark.parametrize("package", ["glasstorch", "glasstorch.nn.modules", "glasstorch.nn.utils",
                                     "glasstorch.utils", "glasstorch.utils.data", "glasstorch.optim",
                                     "glasstorch.autograd", "glasstorch.distributions", "glasstorch.inspection",
                                     "glasstorch.ops", "glasstorch.backends", "glasstorch.overrides",
                                     "glasstorch.utils.hooks", "glasstorch.utils.flop_counter"])
def test_packages_declare_all(package):
    module = importlib.import_module(package)
    assert module.__all__ and all(hasattr(module, n) for n in module.__all__)


def test_one_removable_handle():
    from glasstorch._hooks import RemovableHandle
    assert glasstorch.utils.hooks.RemovableHandle is RemovableHandle
    assert glasstorch.nn.utils.hooks.RemovableHandle is RemovableHandle
    assert glasstorch.autograd.graph.RemovableHandle is RemovableHandle
    x = glasstorch.ones(2, requires_grad=True)
    handles = [x.register_hook(lambda g: None), (x * 2).register_hook(lambda g: None),
               (x * 2).grad_fn.register_hook(lambda gi, go: None), (x * 2).grad_fn.register_prehook(lambda g: None),
               x.register_post_accumulate_grad_hook(lambda t: None),
               nn.Linear(2, 2).register_forward_hook(lambda *a: None),
               glasstorch.optim.SGD([x], lr=0.1).register_step_pre_hook(lambda *a: None),
               glasstorch.nn.modules.module.register_module_forward_pre_hook(lambda *a: None)]
    assert all(isinstance(h, glasstorch.utils.hooks.RemovableHandle) for h in handles)
    ids = [h.id for h in handles]
    assert len(set(ids)) == len(ids)        # one counter for all
    for h in handles:
        h.remove()
    t = torch.ones(2, requires_grad=True)
    assert isinstance(t.register_hook(lambda g: None), torch.utils.hooks.RemovableHandle)   # (torch's, likewise)


def test_modules_where_torch_keeps_them():
    for lib, prefix in ((glasstorch, "glasstorch"), (torch, "torch")):
        assert lib.nn.MultiheadAttention.__module__ == prefix + ".nn.modules.activation"
        assert lib.nn.functional.multi_head_attention_forward.__module__ == prefix + ".nn.functional"
        assert lib.nn.modules.linear.NonDynamicallyQuantizableLinear.__name__ == "NonDynamicallyQuantizableLinear"
        assert lib.utils.hooks.RemovableHandle.__name__ == "RemovableHandle"


def _broadcasting_calls(lib):
    o = lib.ones
    return {
        "add": lambda: o(2, 3) + o(4, 3), "add_last_dim": lambda: o(2, 3) + o(3, 4), "mul_3d": lambda: o(5, 1, 3) * o(2, 4, 1),
        "add_": lambda: o(2, 3).add_(o(3, 4)), "pow": lambda: o(2, 3) ** o(3, 4), "eq": lambda: o(2, 3) == o(3, 4),
        "maximum": lambda: lib.maximum(o(2, 3), o(3, 4)), "atan2": lambda: lib.atan2(o(2, 3), o(5, 3)),
        "xlogy": lambda: lib.xlogy(o(2, 3), o(3, 4)), "where": lambda: lib.where(o(2, 3) > 0, o(3), o(4, 1)),
        "where_condition": lambda: lib.where(o(4, 1) > 0, o(2, 3), o(3)),
        "clamp": lambda: lib.clamp(o(2, 3), o(4, 1), o(3)), "addcmul": lambda: lib.addcmul(o(2, 3), o(4, 3), o(2, 1)),
        "addcdiv": lambda: lib.addcdiv(o(2, 3), o(3), o(5, 3)), "lerp": lambda: lib.lerp(o(2, 3), o(4, 3), 0.5),
        "lerp_weight": lambda: lib.lerp(o(2, 3), o(2, 3), o(4, 3)),
        "broadcast_tensors": lambda: lib.broadcast_tensors(o(2, 3), o(3, 4)),
        "masked_fill": lambda: o(2, 3).masked_fill(o(4, 3, dtype=lib.bool), 0.0),
        "masked_select": lambda: lib.masked_select(o(2, 3), o(3, 4, dtype=lib.bool)),
        "matmul": lambda: o(2, 3, 4) @ o(5, 4, 2), "normal": lambda: lib.normal(o(2, 3), o(3, 4)),
        "mse_loss": lambda: lib.nn.functional.mse_loss(o(2, 3), o(4, 3))}


@pytest.mark.parametrize("case", list(_broadcasting_calls(glasstorch)))
def test_one_broadcast_error(case):
    """Every op that broadcasts reports shapes that do not, in torch's words and with torch's choice
    of the pair and dimension (one builder of it, _checks.broadcast_error: torch's infer_size, from
    the last dimension back)."""
    def run(lib):
        with pytest.raises(RuntimeError) as info:
            import warnings
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _broadcasting_calls(lib)[case]()
        return str(info.value).split("\n")[0]
    ours, theirs = run(glasstorch), run(torch)
    assert ours == theirs


def test_dtype_names_from_one_table():
    from glasstorch import _dtype
    from glasstorch._serialization.names import STORAGE_OF_DTYPE
    for d in _dtype.ALL:
        t = getattr(torch, d.name)
        assert STORAGE_OF_DTYPE[d.name] == _dtype.storage_name(d)
        assert glasstorch.ones(1, dtype=d).type() == torch.ones(1, dtype=t).type()
    w = glasstorch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="dtype 'double' to a tensor with grad_dtype 'Float'"):
        w.grad = glasstorch.ones(2, dtype=glasstorch.float64)


def test_tensor_methods_are_named_functions():
    # a lambda bound as a method shows as `<lambda>` in tracebacks, help() and a function mode's func
    # (issue 10: real named functions for Tensor methods)
    import types
    lambdas = sorted(name for name, value in vars(glasstorch.Tensor).items()
                     if isinstance(value, types.FunctionType) and value.__name__ == "<lambda>")
    assert lambdas == []
    assert glasstorch.Tensor.cpu.__qualname__ == "Tensor.cpu" and glasstorch.Tensor.type_as.__name__ == "type_as"


def test_the_readme_layout_table_names_every_file_family():
    """Issue 10: the README's layout table names every file and package of glasstorch/ (a new one is
    added to it)."""
    import pathlib
    import re
    root = pathlib.Path(__file__).resolve().parent.parent
    rows = [line.split("|")[1] for line in (root / "README.md").read_text().splitlines() if line.startswith("| `")]
    named = {name.rstrip("/").rpartition("/")[2] for row in rows for name in re.findall(r"`([^`]+)`", row)}
    entries = {p.name for p in (root / "glasstorch").iterdir()
               if p.name not in ("__pycache__", "py.typed") and p.suffix != ".pyi"}
    assert sorted(entries - named) == []


def test_inspection_replaces_no_attribute_of_another_module():
    """Issue 10: the glass stands on the seam only. No ``setattr`` on, and no assignment to an attribute
    of, anything the inspection package imports (a module, a class, a function of the core)."""
    import ast
    import pathlib
    package = pathlib.Path(glasstorch.__file__).parent / "inspection"
    found = []
    for path in sorted(package.glob("*.py")):
        tree = ast.parse(path.read_text())
        imported = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                imported |= {(a.asname or a.name).split(".")[0] for a in node.names}
        for node in ast.walk(tree):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
            for t in targets:
                base = t
                while isinstance(base, ast.Attribute):
                    base = base.value
                if isinstance(t, ast.Attribute) and isinstance(base, ast.Name) and base.id in imported:
                    found.append(f"{path.name}:{node.lineno} {ast.unparse(t)} = ...")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr") \
                    and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id in imported:
                found.append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
    assert found == []
