"""torch.nn.modules.module's global hooks (register_module_forward_pre_hook and friends): called for every
module, before its own hooks, in torch's order; found by a program-wide harness (tools/run_programs.py)."""
import pytest

torch = pytest.importorskip("torch")

import glasstorch as gt  # noqa: E402
from glasstorch.nn.modules import module as gt_module  # noqa: E402


def trace(lib, module_mod):
    """Run a two-layer net with global and per-module hooks; return the calls in order and the grads."""
    calls = []
    handles = [
        module_mod.register_module_forward_pre_hook(lambda m, a: calls.append(("gpre", type(m).__name__))),
        module_mod.register_module_forward_hook(lambda m, a, o: calls.append(("gfwd", type(m).__name__))),
        module_mod.register_module_forward_hook(
            lambda m, a, k, o: calls.append(("gfwd_kw", type(m).__name__, sorted(k))), with_kwargs=True),
        module_mod.register_module_full_backward_pre_hook(lambda m, go: calls.append(("gbpre", type(m).__name__))),
        module_mod.register_module_full_backward_hook(lambda m, gi, go: calls.append(("gbwd", type(m).__name__))),
    ]
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.ReLU())
    net[0].register_forward_pre_hook(lambda m, a: calls.append(("own_pre", type(m).__name__)))
    net[0].register_forward_hook(lambda m, a, o: calls.append(("own_fwd", type(m).__name__)))
    x = lib.ones(4, 3, requires_grad=True)
    net(x).sum().backward()
    for handle in handles:
        handle.remove()
    before = list(calls)
    net(x)   # the global hooks are removed: only the module's own two hooks run
    return before, calls[len(before):]


def test_global_hooks_order_matches_torch():
    ours, ours_after = trace(gt, gt_module)
    theirs, theirs_after = trace(torch, torch.nn.modules.module)
    assert ours == theirs
    assert ours_after == theirs_after == [("own_pre", "Linear"), ("own_fwd", "Linear")]
    assert ("own_pre", "Linear") in ours and ours.index(("gpre", "Linear")) < ours.index(("own_pre", "Linear"))


def test_global_hooks_are_removed_and_fast_path_returns():
    calls = []
    handle = gt_module.register_module_forward_pre_hook(lambda m, a: calls.append(1))
    layer = gt.nn.Linear(2, 2)
    layer(gt.ones(1, 2))
    handle.remove()
    layer(gt.ones(1, 2))
    assert calls == [1]
    assert not gt_module._global_forward_pre_hooks


def test_global_pre_hook_can_replace_args():
    handle = gt_module.register_module_forward_pre_hook(lambda m, a: (a[0] * 0,))
    try:
        out = gt.nn.Identity()(gt.ones(3))
    finally:
        handle.remove()
    assert out.tolist() == [0.0, 0.0, 0.0]


def test_mixing_global_full_and_regular_backward_hooks_raises_like_torch():
    handle = gt_module.register_module_full_backward_hook(lambda m, gi, go: None)
    try:
        with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks"):
            gt_module.register_module_backward_hook(lambda m, gi, go: None)
    finally:
        handle.remove()
        gt_module._global_is_full_backward_hook = None   # torch keeps the flag set too; reset for other tests
