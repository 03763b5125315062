"""An optimizer unpickled from an older version (groups lacking newer options, ``step`` kept as a Python
number) is completed by ``__setstate__`` as torch completes it: the same options with the same defaults,
and the scalar states as 0-dim tensors."""
import copy

import pytest
import torch

import glasstorch as gt

NAMES = ["SGD", "Adam", "AdamW", "Adadelta", "Adagrad", "Adamax", "ASGD", "NAdam", "RAdam", "RMSprop", "Rprop"]


def _stepped(lib, name):
    w = lib.nn.Parameter(lib.tensor([1.0, -2.0, 3.0]))
    opt = getattr(lib.optim, name)([w], lr=0.01, **({"momentum": 0.9} if name == "SGD" else {}))
    (w * w).sum().backward()
    opt.step()
    return opt


def _as_if_old(opt):
    """The pickled state of ``opt`` with every optional group option dropped and ``step`` a float."""
    state = copy.copy(opt.__getstate__())
    keep = {"params", "lr", "betas", "eps", "weight_decay", "momentum", "dampening", "rho", "lr_decay", "lambd",
            "alpha", "t0", "etas", "step_sizes", "momentum_decay", "initial_accumulator_value"}
    state["param_groups"] = [{k: v for k, v in g.items() if k in keep} for g in state["param_groups"]]
    state["state"] = {p: {k: (float(v) if k == "step" else v) for k, v in s.items()}
                      for p, s in state["state"].items()}
    return state


@pytest.mark.parametrize("name", NAMES)
def test_setstate_completes_an_old_optimizer_as_torch(name):
    completed = {}
    for lib in (torch, gt):
        opt = _stepped(lib, name)
        old = _as_if_old(opt)
        fresh = object.__new__(type(opt))
        fresh.__setstate__(old)
        completed[lib] = fresh
    t, g = completed[torch], completed[gt]
    assert g.param_groups[0].keys() == t.param_groups[0].keys()
    for key in t.param_groups[0]:
        if key != "params":
            assert g.param_groups[0][key] == t.param_groups[0][key], key
    (t_state,), (g_state,) = t.state.values(), g.state.values()
    assert g_state.keys() == t_state.keys()
    if "step" in t_state:
        assert gt.is_tensor(g_state["step"]) and torch.is_tensor(t_state["step"])
        assert g_state["step"].dtype == gt.float32 and float(g_state["step"]) == float(t_state["step"]) == 1.0
