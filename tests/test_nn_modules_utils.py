"""torch.nn.modules.utils against torch: the tuple parsers and the state-dict prefix helper."""
import collections

import pytest

torch = pytest.importorskip("torch")
import torch.nn.modules.utils as theirs  # noqa: E402
import glasstorch.nn.modules.utils as ours  # noqa: E402


@pytest.mark.parametrize("name", ["_single", "_pair", "_triple", "_quadruple"])
@pytest.mark.parametrize("value", [3, (1, 2), [4, 5, 6], range(2), 2.5])
def test_ntuple_parsers(name, value):
    assert getattr(ours, name)(value) == getattr(theirs, name)(value)
    assert getattr(ours, name).__name__ == getattr(theirs, name).__name__


def test_reverse_repeat_tuple_and_list_with_default():
    assert ours._reverse_repeat_tuple((1, 2, 3), 2) == theirs._reverse_repeat_tuple((1, 2, 3), 2)
    assert ours._list_with_default([None, 3], [1, 8, 9, 10]) == theirs._list_with_default([None, 3], [1, 8, 9, 10])
    assert ours._list_with_default(5, [1, 2]) == theirs._list_with_default(5, [1, 2])
    for mod in (ours, theirs):
        with pytest.raises(ValueError, match="Input dimension should be at least 3"):
            mod._list_with_default([None, 3], [1, 2])


def test_consume_prefix_in_state_dict_if_present():
    def make():
        d = collections.OrderedDict([("module.a", 1), ("module.b.c", 2), ("other", 3)])
        d._metadata = collections.OrderedDict([("", {}), ("module", {}), ("module.b", {}), ("x", {})])
        return d
    a, b = make(), make()
    ours.consume_prefix_in_state_dict_if_present(a, "module.")
    theirs.consume_prefix_in_state_dict_if_present(b, "module.")
    assert list(a.items()) == list(b.items()) and list(a._metadata) == list(b._metadata)


def test_importable_under_the_binding():
    import subprocess
    import sys
    code = ("import glasstorch; glasstorch.as_torch(); from torch.nn.modules.utils import _pair, "
            "consume_prefix_in_state_dict_if_present; print(_pair(2))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "(2, 2)", out.stderr
