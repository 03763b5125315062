"""torch.autograd.Variable, the legacy alias: Variable(t) is a detached tensor sharing t's data, every
tensor is an instance of it; checked against torch's own legacy constructor."""
import warnings

import pytest

import glasstorch
from glasstorch.autograd import Variable

torch = pytest.importorskip("torch")


def both(build):
    return build(glasstorch), build(torch)


def test_variable_returns_a_detached_tensor_sharing_the_data():
    for lib in (glasstorch, torch):
        t = lib.ones(2, requires_grad=True)
        v = lib.autograd.Variable(t)
        assert type(v) is lib.Tensor and v is not t
        assert not v.requires_grad and v.grad_fn is None and v.is_leaf
        with lib.no_grad():
            t[0] = 5.0
        assert v.tolist() == [5.0, 1.0]                  # same data, not a copy
        w = lib.autograd.Variable(lib.ones(3), requires_grad=True)
        (w * w).sum().backward()
        assert w.requires_grad and w.is_leaf and w.grad.tolist() == [2.0, 2.0, 2.0]
        p = lib.autograd.Variable(lib.nn.Parameter(lib.ones(1)))
        assert type(p) is lib.Tensor                     # a Parameter's data comes back as a plain tensor


def test_isinstance_is_true_for_every_tensor_and_only_tensors():
    for lib in (glasstorch, torch):
        V = lib.autograd.Variable
        assert isinstance(lib.ones(1), V) and isinstance(lib.nn.Parameter(lib.ones(1)), V)
        assert not isinstance(3, V) and not isinstance([1.0], V)
        assert not issubclass(lib.Tensor, V)             # torch's metaclass overrides instance checks only
    from glasstorch.autograd.variable import Variable as from_module
    assert from_module is Variable


def test_no_data_name_and_flags_as_torch_parses_them():
    ours, theirs = both(lambda lib: lib.autograd.Variable())
    assert ours.shape == theirs.shape == (0,) and str(ours.dtype) == str(theirs.dtype)
    ours, theirs = both(lambda lib: lib.autograd.Variable(lib.ones(1), 2, name="x"))   # any integer is a flag
    assert ours.requires_grad and theirs.requires_grad and ours.name == theirs.name == "x"


@pytest.mark.parametrize("args, kwargs", [
    (([1.0, 2.0],), {}),                                     # TypeError: data has to be a tensor
    (("t", "yes"), {}),                                      # TypeError: not an integer
    (("t",), {"foo": 1}),                                    # TypeError: unknown keyword
    (("long", True), {}),                                    # RuntimeError: integer tensors can't require grad
    (("t",), {"_grad_fn": "t"}),                             # TypeError: _grad_fn must be a Function
])
def test_bad_arguments_raise_torchs_errors(args, kwargs):
    def call(lib):
        def resolve(a):
            return lib.ones(1) if a == "t" else lib.ones(1, dtype=lib.long) if a == "long" else a
        try:
            lib.autograd.Variable(*map(resolve, args), **{k: resolve(v) for k, v in kwargs.items()})
        except Exception as e:   # noqa: BLE001 -- the type is what is compared
            return e
        raise AssertionError("no error")
    ours, theirs = both(call)
    assert type(ours) is type(theirs), (ours, theirs)
    if "foo" not in kwargs:
        assert str(ours) == str(theirs)


def test_volatile_warns_and_does_nothing():
    for lib in (glasstorch, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            v = lib.autograd.Variable(lib.ones(1), volatile=True)
        assert not v.requires_grad
        assert any("volatile was removed" in str(w.message) for w in caught)


def test_from_torch_autograd_import_variable_under_the_binding(tmp_path):
    import subprocess
    import sys
    script = tmp_path / "legacy.py"
    script.write_text("import torch\nfrom torch.autograd import Variable\nimport torch.autograd.variable as m\n"
                      "x = Variable(torch.randn(2, 3), requires_grad=True)\ny = (x * 2).sum()\ny.backward()\n"
                      "print(torch.autograd.Variable is m.Variable, isinstance(x, Variable), x.grad.sum().item())\n")
    out = subprocess.run([sys.executable, "-m", "glasstorch", "run", str(script)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True", "12.0"]
