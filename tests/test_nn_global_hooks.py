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


def hooks_removing_hooks(lib, module_mod):
    """One-shot hooks that remove themselves (or, from a global hook, a module's own hook) while the
    module runs: torch takes the hooks as they are at the call, so the removed ones still run that
    time. (glasstorch iterated the live dicts: 'OrderedDict mutated during iteration'.)"""
    calls = []
    net = lib.nn.Linear(2, 2)
    handles = {}

    def once(name):
        def hook(*args):
            calls.append(name)
            handles[name].remove()
        return hook

    def global_pre(module, args):
        calls.append("global_pre")
        handles["global_pre"].remove()
        handles["own_pre2"].remove()   # another hook of this call: it still runs this time
    handles["global_pre"] = module_mod.register_module_forward_pre_hook(global_pre)
    handles["global_fwd"] = module_mod.register_module_forward_hook(once("global_fwd"))
    handles["own_pre"] = net.register_forward_pre_hook(once("own_pre"))
    handles["own_pre2"] = net.register_forward_pre_hook(lambda m, a: calls.append("own_pre2"))
    handles["own_fwd"] = net.register_forward_hook(once("own_fwd"))
    try:
        net(lib.ones(1, 2))
        net(lib.ones(1, 2))
    finally:
        for handle in handles.values():
            handle.remove()
    return calls


def test_hooks_removed_during_the_call_run_that_time_like_torch():
    ours = hooks_removing_hooks(gt, gt_module)
    assert ours == hooks_removing_hooks(torch, torch.nn.modules.module)
    assert ours == ["global_pre", "own_pre", "own_pre2", "global_fwd", "own_fwd"]
