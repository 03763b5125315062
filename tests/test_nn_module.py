"""nn.Module, Parameter, containers, hooks and lazy modules, against real torch.

Most tests build the same module tree twice -- once from ``torch.nn`` and once
from glasstorch -- out of tiny test modules with the same class names and
parameters made from the same NumPy arrays, then compare what both report:
names and order, reprs (exactly), error types and texts, hook calls, gradients.
"""

import copy
import pickle
import warnings
from collections import OrderedDict
from types import SimpleNamespace

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import glasstorch as gt  # noqa: E402
from glasstorch.nn.modules.container import (  # noqa: E402
    ModuleDict,
    ModuleList,
    ParameterDict,
    ParameterList,
    Sequential,
)
from glasstorch.nn.modules.lazy import LazyModuleMixin  # noqa: E402
from glasstorch.nn.modules.module import Module  # noqa: E402
from glasstorch.nn.parameter import (  # noqa: E402
    Buffer,
    Parameter,
    UninitializedBuffer,
    UninitializedParameter,
    is_lazy,
)
from glasstorch.nn.utils.hooks import RemovableHandle  # noqa: E402

# The two "libraries" the same test code runs against.
G = SimpleNamespace(
    lib=gt, Module=Module, Parameter=Parameter, Buffer=Buffer, Sequential=Sequential, ModuleList=ModuleList,
    ModuleDict=ModuleDict, ParameterList=ParameterList, ParameterDict=ParameterDict,
    LazyModuleMixin=LazyModuleMixin, UninitializedParameter=UninitializedParameter,
    UninitializedBuffer=UninitializedBuffer,
)
T = SimpleNamespace(
    lib=torch, Module=torch.nn.Module, Parameter=torch.nn.Parameter, Buffer=torch.nn.Buffer,
    Sequential=torch.nn.Sequential, ModuleList=torch.nn.ModuleList, ModuleDict=torch.nn.ModuleDict,
    ParameterList=torch.nn.ParameterList, ParameterDict=torch.nn.ParameterDict,
    LazyModuleMixin=torch.nn.modules.lazy.LazyModuleMixin, UninitializedParameter=torch.nn.UninitializedParameter,
    UninitializedBuffer=torch.nn.UninitializedBuffer,
)
BOTH = pytest.mark.parametrize("ns", [T, G], ids=["torch", "glasstorch"])

RNG = np.random.default_rng(0)
ARRAYS = {k: RNG.standard_normal(shape).astype(np.float32) for k, shape in
          {"w1": (4, 3), "b1": (4,), "w2": (2, 4), "b2": (2,), "s": (4,), "x": (5, 3)}.items()}


def classes(ns):
    """The test modules, defined against one library."""
    lib = ns.lib

    class Linear(ns.Module):
        def __init__(self, w, b=None):
            super().__init__()
            self.weight = ns.Parameter(lib.tensor(ARRAYS[w]))
            if b is None:
                self.register_parameter("bias", None)
            else:
                self.bias = ns.Parameter(lib.tensor(ARRAYS[b]))

        def forward(self, x):
            y = x @ self.weight.T
            return y if self.bias is None else y + self.bias

        def extra_repr(self):
            return (f"in_features={self.weight.shape[1]}, out_features={self.weight.shape[0]}, "
                    f"bias={self.bias is not None}")

    class Tanh(ns.Module):
        def forward(self, x):
            return lib.tanh(x)

    class Norm(ns.Module):
        """Buffers: persistent float, persistent int, non-persistent, and None."""

        def __init__(self):
            super().__init__()
            self.scale = ns.Parameter(lib.tensor(ARRAYS["s"]))
            self.register_buffer("running_mean", lib.zeros(4))
            self.register_buffer("num_batches_tracked", lib.tensor(0))
            self.register_buffer("cache", lib.ones(4), persistent=False)
            self.register_buffer("unused", None)

        def forward(self, x):
            return (x - self.running_mean) * self.scale

        def extra_repr(self):
            return "4,\nmultiline=True"

    class Net(ns.Module):
        def __init__(self):
            super().__init__()
            self.body = ns.Sequential(Linear("w1", "b1"), Tanh(), Norm())
            self.head = Linear("w2", "b2")
            self.tied = self.head  # a shared module: reported once
            self.empty = None  # a plain attribute (no module registered yet)
            self.register_module("missing", None)
            self.plain = lib.ones(2)  # a plain tensor attribute is not registered

        def forward(self, x):
            return self.head(self.body(x))

    return SimpleNamespace(Linear=Linear, Tanh=Tanh, Norm=Norm, Net=Net)


def to_np(t):
    return t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else np.asarray(t.detach()._data)


def error(fn):
    """(exception type name, message) raised by fn."""
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value).__name__, str(info.value)


def both(fn):
    """Run fn(ns) against torch and glasstorch and return both results."""
    return fn(T), fn(G)


# ---------------------------------------------------------------------------------------------
# Walking the tree
# ---------------------------------------------------------------------------------------------

def test_names_and_order_match_torch():
    def report(ns):
        net = classes(ns).Net()
        return dict(
            params=[n for n, _ in net.named_parameters()],
            params_dup=[n for n, _ in net.named_parameters(remove_duplicate=False)],
            params_prefixed=[n for n, _ in net.named_parameters(prefix="model")],
            params_local=[n for n, _ in net.body[0].named_parameters(recurse=False)],
            buffers=[n for n, _ in net.named_buffers()],
            modules=[(n, type(m).__name__) for n, m in net.named_modules()],
            modules_dup=[n for n, _ in net.named_modules(remove_duplicate=False)],
            children=[n for n, _ in net.named_children()],
            n_params=len(list(net.parameters())),
            n_modules=len(list(net.modules())),
            state=list(net.state_dict().keys()),
            metadata=dict(net.state_dict()._metadata),
        )

    t, g = both(report)
    assert g == t
    assert "head.weight" in g["params"] and "tied.weight" not in g["params"]  # the tree really was walked


def test_shared_parameter_appears_once():
    def report(ns):
        net = ns.Sequential(classes(ns).Linear("w1", "b1"), classes(ns).Tanh())
        net.add_module("again", net[0])
        p = ns.Parameter(ns.lib.ones(3))
        net.p1, net.p2 = p, p
        return ([n for n, _ in net.named_parameters()], [n for n, _ in net.named_parameters(remove_duplicate=False)],
                list(net.state_dict()))

    t, g = both(report)
    assert g == t


def test_plain_attributes_are_not_registered():
    net = classes(G).Net()
    assert "plain" in net.__dict__ and "plain" not in net._buffers
    assert isinstance(net.plain, gt.Tensor)


def test_getattr_setattr_delattr():
    def report(ns):
        lin = classes(ns).Linear("w1", "b1")
        out = [error(lambda: lin.foo)]
        lin.extra = 3
        w = lin.weight
        del lin.weight
        out.append("weight" in lin._parameters)
        lin.weight = w  # back into the registry
        out.append(list(lin._parameters))
        lin.scale = 1.0  # plain attribute, then overwritten by a parameter -> leaves __dict__
        lin.scale = ns.Parameter(ns.lib.ones(1))
        out.append(("scale" in lin.__dict__, "scale" in lin._parameters))
        lin.bias = None  # a parameter name accepts None
        out.append(lin.bias)
        lin.register_buffer("buf", ns.lib.zeros(2))
        lin.buf = ns.lib.ones(2)  # a tensor assigned to a buffer name stays a buffer
        out.append(to_np(lin._buffers["buf"]).tolist())
        lin.sub = ns.Module()
        lin.sub = None
        out.append(("sub" in lin._modules, lin.sub))
        out.append("weight" in dir(lin) and "extra" in dir(lin))
        return out

    t, g = both(report)
    assert g == t


def test_setattr_errors_match_torch():
    def report(ns):
        lib = ns.lib

        class Early(ns.Module):
            def __init__(self, what):
                if what == "param":
                    self.w = ns.Parameter(lib.ones(1))
                elif what == "module":
                    self.m = ns.Module()
                else:
                    self.register_buffer("b", lib.ones(1))

        out = [error(lambda w=w: Early(w)) for w in ("param", "module", "buffer")]
        lin = classes(ns).Linear("w1", "b1")
        out.append(error(lambda: setattr(lin, "weight", lib.ones(4, 3))))
        out.append(error(lambda: setattr(lin, "weight", lib.ones(4, 3, dtype=lib.float64))))
        out.append(error(lambda: setattr(lin, "weight", 3)))
        lin.sub = ns.Module()
        out.append(error(lambda: setattr(lin, "sub", lib.ones(1))))
        lin.register_buffer("buf", lib.ones(1))
        out.append(error(lambda: setattr(lin, "buf", [1.0])))
        out.append(error(lambda: lin.register_parameter("a.b", None)))
        out.append(error(lambda: lin.register_parameter("", None)))
        out.append(error(lambda: lin.register_parameter("sub", None)))
        out.append(error(lambda: lin.register_parameter("p", lib.ones(1))))
        out.append(error(lambda: lin.register_parameter(3, None)))
        out.append(error(lambda: lin.register_buffer("a.b", None)))
        out.append(error(lambda: lin.register_buffer("weight", lib.ones(1))))
        out.append(error(lambda: lin.register_buffer("x", 3)))
        out.append(error(lambda: lin.add_module("x", 3)))
        out.append(error(lambda: lin.add_module("a.b", ns.Module())))
        out.append(error(lambda: lin.add_module("weight", ns.Module())))
        out.append(error(lambda: ns.Module(3)))
        out.append(error(lambda: ns.Module(foo=3)))
        out.append(error(lambda: ns.Module()(1)))
        return out

    t, g = both(report)
    assert g == t
    assert g[0] == ("AttributeError", "cannot assign parameters before Module.__init__() call")
    assert g[3] == ("TypeError", "cannot assign 'torch.FloatTensor' as parameter 'weight' "
                                 "(torch.nn.Parameter or None expected)")


def test_buffer_marker_registers_a_buffer():
    def report(ns):
        m = ns.Module()
        m.a = ns.Buffer(ns.lib.ones(2))
        m.b = ns.Buffer(ns.lib.ones(2), persistent=False)
        return (type(m.a).__name__, list(m._buffers), list(m.state_dict()), isinstance(m.a, ns.Buffer),
                isinstance(ns.lib.ones(1), ns.Buffer))

    t, g = both(report)
    assert g == t


def test_get_submodule_parameter_buffer():
    def report(ns):
        net = classes(ns).Net()
        out = [type(net.get_submodule("body.0")).__name__, net.get_submodule("") is net,
               tuple(net.get_parameter("body.2.scale").shape), tuple(net.get_buffer("body.2.running_mean").shape)]
        out += [error(lambda: net.get_submodule("body.9")), error(lambda: net.get_submodule("head.weight")),
                error(lambda: net.get_parameter("body.2.running_mean")), error(lambda: net.get_parameter("head.nope")),
                error(lambda: net.get_buffer("head.weight"))]
        net.set_submodule("body.1", classes(ns).Linear("w1"))
        out.append(type(net.body[1]).__name__)
        out.append(error(lambda: net.set_submodule("body.7", ns.Module(), strict=True)))
        return out

    t, g = both(report)
    assert g == t


# ---------------------------------------------------------------------------------------------
# Printing
# ---------------------------------------------------------------------------------------------

def test_repr_matches_torch_exactly():
    def report(ns):
        c = classes(ns)
        net = c.Net()
        net.stack = ns.ModuleList([c.Tanh(), c.Tanh(), c.Tanh(), c.Linear("w1"), c.Linear("w1"), c.Tanh()])
        net.choice = ns.ModuleDict({"act": c.Tanh(), "lin": c.Linear("w2", "b2")})
        net.plist = ns.ParameterList([ns.Parameter(ns.lib.ones(2, 3)), ns.lib.zeros(4), "text"])
        net.pdict = ns.ParameterDict({"b": ns.lib.ones(2), "a": ns.lib.zeros(3, 1)})
        net.nested = ns.Sequential(ns.Sequential(c.Norm()), ns.ModuleList())
        return [repr(net), repr(ns.Module()), repr(ns.ModuleList()), repr(ns.Sequential()), str(net.head)]

    t, g = both(report)
    for a, b in zip(t, g):
        assert b == a


def test_parameter_repr_and_basics():
    t, g = both(lambda ns: [repr(ns.Parameter(ns.lib.tensor([1.0, 2.0]))),
                            repr(ns.Parameter(ns.lib.tensor([1.0, 2.0]), requires_grad=False)),
                            repr(ns.Parameter()),
                            repr(ns.Parameter(ns.lib.tensor([1, 2]), requires_grad=False)),
                            error(lambda: ns.Parameter(ns.lib.tensor([1, 2])))[0]])
    assert g == t


# ---------------------------------------------------------------------------------------------
# Parameter semantics
# ---------------------------------------------------------------------------------------------

def test_parameter_is_a_leaf_sharing_the_array():
    x = gt.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    p = Parameter(y)
    assert isinstance(p, gt.Tensor) and type(p) is Parameter
    assert p.is_leaf and p.grad_fn is None and p.requires_grad
    assert np.shares_memory(p._data, y._data)
    with gt.no_grad():
        p.add_(1)
    assert y.tolist() == [3.0, 5.0]  # same array
    # ops on parameters give plain tensors, and detach gives a plain tensor
    assert type(p * 2) is gt.Tensor and type(p.detach()) is gt.Tensor and type(p.data) is gt.Tensor


def test_parameter_deepcopy_and_pickle():
    p = Parameter(gt.tensor([1.0, 2.0]))
    p.tag = "keep"
    q = copy.deepcopy(p)
    assert type(q) is Parameter and q.requires_grad and not np.shares_memory(p._data, q._data)
    assert q.tolist() == [1.0, 2.0]
    r = pickle.loads(pickle.dumps(p))
    assert type(r) is Parameter and r.tag == "keep" and r.requires_grad and r.tolist() == [1.0, 2.0]
    r = pickle.loads(pickle.dumps(Parameter(gt.tensor([1.0]), requires_grad=False)))
    assert not r.requires_grad


class _Scale(Module):
    """Module-level (so that pickle finds the class), with a parameter and a buffer."""

    def __init__(self):
        super().__init__()
        self.w = Parameter(gt.tensor(ARRAYS["s"]))
        self.register_buffer("count", gt.tensor(3))

    def forward(self, x):
        return x * self.w


def test_module_deepcopy_and_pickle_keep_sharing():
    for clone in (copy.deepcopy, lambda m: pickle.loads(pickle.dumps(m))):
        shared = _Scale()
        net = Sequential(shared, _Scale(), shared)
        net.register_forward_hook(lambda m, a, out: None) if clone is copy.deepcopy else None
        net2 = clone(net)
        assert net2[2] is net2[0] and net2[0] is not shared  # sharing is preserved in the copy
        assert not np.shares_memory(net2[0].w._data, shared.w._data)
        assert [n for n, _ in net2.named_parameters()] == [n for n, _ in net.named_parameters()] == ["0.w", "1.w"]
        assert all(type(p) is Parameter and p.requires_grad for p in net2.parameters())
        assert net2[1].count.item() == 3 and net2.training
        x = gt.tensor(ARRAYS["s"])
        np.testing.assert_allclose(to_np(net2(x)), to_np(net(x)))


# ---------------------------------------------------------------------------------------------
# state_dict / load_state_dict
# ---------------------------------------------------------------------------------------------

def test_state_dict_values_are_detached_and_share_storage():
    net = classes(G).Net()
    sd = net.state_dict()
    assert type(sd) is OrderedDict
    w = sd["head.weight"]
    assert type(w) is gt.Tensor and not w.requires_grad
    with gt.no_grad():
        net.head.weight.mul_(0)
    assert not w.abs().sum().item()  # an in-place change to the model shows in the dict
    kept = net.state_dict(keep_vars=True)
    assert kept["head.weight"] is net.head.weight
    assert "body.2.cache" not in sd and "body.2.unused" not in sd and "body.2.running_mean" in sd


def test_state_dict_roundtrip_between_libraries():
    tnet, gnet = classes(T).Net(), classes(G).Net()
    with torch.no_grad():
        for p in tnet.parameters():
            p.mul_(-2)
    # torch -> glasstorch through numpy arrays
    result = gnet.load_state_dict({k: gt.tensor(v.numpy()) for k, v in tnet.state_dict().items()})
    assert repr(result) == "<All keys matched successfully>" and result.missing_keys == []
    x = ARRAYS["x"]
    np.testing.assert_allclose(to_np(gnet(gt.tensor(x))), tnet(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_load_state_dict_keeps_parameter_identity_and_dtype():
    lin = classes(G).Linear("w1", "b1")
    w = lin.weight
    lin.load_state_dict({"weight": gt.zeros(4, 3, dtype=gt.float64), "bias": gt.ones(4)})
    assert lin.weight is w and w.dtype == gt.float32 and w.abs().sum().item() == 0 and w.requires_grad


def test_load_state_dict_errors_match_torch():
    def report(ns):
        c = classes(ns)
        lib = ns.lib
        net = c.Net()
        sd = net.state_dict()
        out = []
        bad = OrderedDict(sd)
        del bad["head.bias"], bad["body.2.running_mean"]
        bad["head.weight"] = lib.zeros(4, 2)
        bad["body.0.bias"] = lib.zeros(3)
        bad["extra"] = lib.zeros(1)
        bad["body.5.weight"] = lib.zeros(1)
        bad["body.2.cache"] = lib.zeros(4)  # non-persistent: unexpected
        out.append(error(lambda: net.load_state_dict(bad)))
        # shape mismatches raise even when not strict (then they are the only errors listed)
        out.append(error(lambda: net.load_state_dict(bad, strict=False)))
        ok = OrderedDict(sd)
        ok["extra"] = lib.zeros(1)
        del ok["head.bias"]
        res = net.load_state_dict(ok, strict=False)
        out.append((res.missing_keys, res.unexpected_keys, repr(res)))
        out.append(repr(net.load_state_dict(sd)))
        out.append(error(lambda: net.load_state_dict([1, 2])))
        notensor = OrderedDict(sd)
        notensor["head.bias"] = [1.0, 2.0]
        out.append(error(lambda: net.load_state_dict(notensor)))
        # torch 0.3 checkpoints stored scalars as shape-(1,) vectors
        m = ns.Module()
        m.register_buffer("count", lib.tensor(0.0))
        m.load_state_dict({"count": lib.tensor([5.0])})
        out.append(float(m.count))
        return out

    t, g = both(report)
    assert g == t
    assert "size mismatch for head.weight: copying a param with shape torch.Size([4, 2]) from checkpoint, " \
           "the shape in current model is torch.Size([2, 4])." in g[0][1]


def test_load_state_dict_assign():
    def report(ns):
        lin = classes(ns).Linear("w1", "b1")
        lin.bias.requires_grad_(False)
        new_w = ns.lib.zeros(4, 3, dtype=ns.lib.float64)
        lin.load_state_dict({"weight": new_w, "bias": ns.lib.ones(4)}, assign=True)
        return (type(lin.weight).__name__, str(lin.weight.dtype), lin.weight.requires_grad, lin.bias.requires_grad,
                to_np(lin.bias).tolist())

    t, g = both(report)
    assert g == t


def test_state_dict_hooks_and_extra_state():
    def report(ns):
        calls = []

        class WithExtra(ns.Module):
            def __init__(self):
                super().__init__()
                self.w = ns.Parameter(ns.lib.ones(2))
                self.counter = 7

            def get_extra_state(self):
                return {"counter": self.counter}

            def set_extra_state(self, state):
                self.counter = state["counter"]

        m = ns.Sequential(WithExtra())
        m.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: calls.append(("pre", prefix, keep_vars)))
        m[0].register_state_dict_post_hook(lambda mod, sd, prefix, meta: calls.append(("post", prefix, list(sd))))
        m[0]._register_state_dict_hook(lambda mod, sd, prefix, meta: calls.append(("old", prefix, dict(meta))))
        sd = m.state_dict()
        sd["0._extra_state"] = {"counter": 9}
        m.register_load_state_dict_post_hook(lambda mod, keys: calls.append(("load_post", list(keys.missing_keys))))
        m[0].register_load_state_dict_pre_hook(
            lambda mod, sd, prefix, *rest: calls.append(("load_pre", prefix, sorted(sd))))
        m.load_state_dict(sd)
        calls.append(m[0].counter)
        out = [calls, error(lambda: m.load_state_dict({"0.w": ns.lib.ones(2)}))]
        return out

    t, g = both(report)
    assert g == t


def test_lazy_load_hook_materializes_from_checkpoint():
    def report(ns):
        lazy, full = lazy_classes(ns)()(), lazy_classes(ns)()()
        full(ns.lib.ones(5, 3))
        keys_before = [(k, type(v).__name__) for k, v in lazy.state_dict().items()]
        lazy.load_state_dict(full.state_dict())
        return keys_before, type(lazy).__name__, type(lazy.weight).__name__, tuple(lazy.weight.shape), \
            bool((to_np(lazy.weight) == to_np(full.weight)).all())

    t, g = both(report)
    assert g == t


# ---------------------------------------------------------------------------------------------
# Modes, conversion, gradients
# ---------------------------------------------------------------------------------------------

def test_train_eval_propagate():
    def report(ns):
        net = classes(ns).Net()
        out = [net.eval() is net, [m.training for m in net.modules()]]
        net.body.train()
        out.append([m.training for m in net.modules()])
        out.append(error(lambda: net.train("yes")))
        return out

    t, g = both(report)
    assert g == t
    assert g[1] == [False] * len(g[1])


def test_to_float64_keeps_identity_and_converts_grads_and_buffers():
    net = classes(G).Net()
    params = dict(net.named_parameters())
    net(gt.tensor(ARRAYS["x"])).sum().backward()
    grad_ids = {n: id(p.grad) for n, p in params.items()}
    assert net.to(gt.float64) is net
    for n, p in net.named_parameters():
        assert p is params[n] and type(p) is Parameter and p.dtype == gt.float64 and p.requires_grad and p.is_leaf
        assert p.grad.dtype == gt.float64 and id(p.grad) == grad_ids[n]
    assert net.body[2].running_mean.dtype == gt.float64
    assert net.body[2].num_batches_tracked.dtype == gt.int64  # integer buffers keep their dtype
    assert net.plain.dtype == gt.float32  # unregistered tensors are untouched
    y = net(gt.tensor(ARRAYS["x"], dtype=gt.float64))
    assert y.dtype == gt.float64
    net.float()
    assert params["head.weight"].dtype == gt.float32 and net.body[2].num_batches_tracked.dtype == gt.int64
    net.double().to(gt.zeros(1, dtype=gt.float32)).to("cpu").to(device="cpu", dtype=gt.float64).cpu().type(gt.float32)
    assert params["head.weight"].dtype == gt.float32


def test_to_argument_errors_match_torch():
    t, g = both(lambda ns: [error(lambda: classes(ns).Linear("w1").to(ns.lib.int64)),
                            str(classes(ns).Linear("w1").half().weight.dtype)])
    assert g == t


def test_zero_grad_and_requires_grad():
    def report(ns):
        net = classes(ns).Net()
        net(ns.lib.tensor(ARRAYS["x"])).sum().backward()
        out = [all(p.grad is not None for p in net.parameters())]
        net.zero_grad(set_to_none=False)
        out.append([float(p.grad.abs().sum()) for p in net.parameters()])
        net.zero_grad()
        out.append([p.grad for p in net.parameters()])
        net.body.requires_grad_(False)
        out.append([p.requires_grad for p in net.parameters()])
        return out

    t, g = both(report)
    assert g == t


def test_apply_visits_children_first():
    def report(ns):
        seen = []
        net = classes(ns).Net()
        assert net.apply(lambda m: seen.append(type(m).__name__)) is net
        return seen

    t, g = both(report)
    assert g == t


# ---------------------------------------------------------------------------------------------
# Hooks
# ---------------------------------------------------------------------------------------------

def test_forward_hooks_order_arguments_and_results():
    def report(ns):
        lib = ns.lib
        log = []
        lin = classes(ns).Linear("w1", "b1")

        def pre_a(m, args):
            log.append(("pre_a", len(args)))
            return args[0] * 2  # a single value is wrapped into a tuple

        def pre_kw(m, args, kwargs):
            log.append(("pre_kw", sorted(kwargs)))
            return args, {}

        def pre_first(m, args):
            log.append("pre_first")

        def post(m, args, out):
            log.append(("post", tuple(out.shape)))
            return out + 1

        def post_kw(m, args, kwargs, out):
            log.append(("post_kw", sorted(kwargs)))

        class Kw(ns.Module):
            def forward(self, x, scale=1.0):
                return x * scale

        handles = [lin.register_forward_pre_hook(pre_a), lin.register_forward_pre_hook(pre_first, prepend=True),
                   lin.register_forward_hook(post), lin.register_forward_hook(post_kw, with_kwargs=True)]
        x = lib.tensor(ARRAYS["x"])
        y = lin(x)
        log.append(to_np(y).round(4).tolist() == to_np(lin.forward(x * 2) + 1).round(4).tolist())
        for h in handles:
            h.remove()
        log.append((len(lin._forward_hooks), len(lin._forward_pre_hooks), len(lin._forward_hooks_with_kwargs)))
        k = Kw()
        k.register_forward_pre_hook(pre_kw, with_kwargs=True)
        log.append(to_np(k(lib.ones(2), scale=3.0)).tolist())  # the hook dropped the kwargs
        k.register_forward_pre_hook(lambda m, a, kw: 5, with_kwargs=True)
        log.append(error(lambda: k(lib.ones(2)))[0])
        return log

    t, g = both(report)
    assert g == t


def test_forward_hook_always_call_runs_on_error():
    def report(ns):
        log = []

        class Boom(ns.Module):
            def forward(self, x):
                raise ValueError("boom")

        m = Boom()
        m.register_forward_hook(lambda mod, args, out: log.append(("always", out)), always_call=True)
        m.register_forward_hook(lambda mod, args, out: log.append("normal"))
        log.append(error(lambda: m(1)))
        return log

    t, g = both(report)
    assert g == t


def _noop_hook(*args):
    return None


def test_removable_handle_context_manager_and_ids():
    m = Module()
    with m.register_forward_hook(_noop_hook) as h:
        assert isinstance(h, RemovableHandle) and h.id in m._forward_hooks
    assert not m._forward_hooks
    h1, h2 = m.register_forward_pre_hook(_noop_hook), m.register_forward_pre_hook(_noop_hook)
    assert h2.id > h1.id
    h = pickle.loads(pickle.dumps(h1))
    assert h.id == h1.id


def _backward_report(ns, hook_returns=None, pre_returns=None, x_requires_grad=True, y_requires_grad=True):
    """Run a two-input module with full backward hooks; report what the hooks saw and x's gradient."""
    lib = ns.lib
    log = []

    class Bilinear(ns.Module):
        def __init__(self):
            super().__init__()
            self.lin = classes(ns).Linear("w1", "b1")

        def forward(self, x, k, y):
            return self.lin(x) * k * y, self.lin(x).sum()

    m = Bilinear()

    def pre(mod, grad_output):
        log.append(("pre", [None if g is None else to_np(g).round(4).tolist() for g in grad_output]))
        return pre_returns(grad_output) if pre_returns else None

    def full(mod, grad_input, grad_output):
        log.append(("full", type(mod).__name__,
                    [None if g is None else to_np(g).round(4).tolist() for g in grad_input],
                    [None if g is None else to_np(g).round(4).tolist() for g in grad_output]))
        return hook_returns(grad_input) if hook_returns else None

    m.register_full_backward_pre_hook(pre)
    m.register_full_backward_hook(full)
    x = lib.tensor(ARRAYS["x"][:2], requires_grad=x_requires_grad)
    y = lib.tensor([2.0], requires_grad=x_requires_grad and y_requires_grad)
    out, total = m(x, 3.0, y)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        (out.sum() + total).backward()
    log.append(any("no inputs require gradients" in str(x.message) for x in w))
    if x_requires_grad:
        log.append(to_np(x.grad).round(4).tolist())
        log.append(None if y.grad is None else to_np(y.grad).round(4).tolist())
    log.append(to_np(m.lin.weight.grad).round(4).tolist())
    return log


def test_full_backward_hooks_match_torch():
    t, g = both(_backward_report)
    assert g == t
    assert g[1][0] == "full" and g[1][2][1] is None  # the non-tensor input's gradient is None


def test_full_backward_hook_replaces_grad_input():
    t, g = both(lambda ns: _backward_report(ns, hook_returns=lambda gi: (gi[0] * 0, None, gi[2] * 10)))
    assert g == t


def test_full_backward_pre_hook_replaces_grad_output():
    t, g = both(lambda ns: _backward_report(ns, pre_returns=lambda go: (go[0] * 2, go[1])))
    assert g == t


def test_full_backward_hook_with_some_inputs_not_requiring_grad():
    t, g = both(lambda ns: _backward_report(ns, y_requires_grad=False))
    assert g == t
    assert g[1][2][2] == [0.0]  # y does not require grad: its grad_input entry is a zero (as in torch)


def test_full_backward_hook_without_input_grad():
    t, g = both(lambda ns: _backward_report(ns, x_requires_grad=False))
    assert g == t
    assert g[-2] is True  # torch's warning about firing on the outputs


def test_full_backward_hook_errors():
    def report(ns):
        lin = classes(ns).Linear("w1", "b1")
        lin.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
        x = ns.lib.tensor(ARRAYS["x"], requires_grad=True)
        out = [error(lambda: lin(x).sum().backward())[1]]
        out.append(error(lambda: lin.register_backward_hook(lambda *a: None)))
        return out

    t, g = both(report)
    assert g == t


def test_module_hooks_survive_removal_and_fast_path():
    lin = classes(G).Linear("w1", "b1")
    calls = []
    h = lin.register_full_backward_hook(lambda m, gi, go: calls.append(1))
    h.remove()
    x = gt.tensor(ARRAYS["x"], requires_grad=True)
    y = lin(x)
    # no hooks left: the call is forward itself, no identity node is inserted
    assert y.grad_fn.name() != "BackwardHookFunctionBackward"
    y.sum().backward()
    assert calls == []


# ---------------------------------------------------------------------------------------------
# Containers
# ---------------------------------------------------------------------------------------------

def test_sequential_like_torch():
    def report(ns):
        c = classes(ns)
        lib = ns.lib
        out = []
        s = ns.Sequential(c.Linear("w1", "b1"), c.Tanh(), c.Linear("w2", "b2"))
        x = lib.tensor(ARRAYS["x"])
        out.append(to_np(s(x)).round(5).tolist())
        out.append([type(s[i]).__name__ for i in (0, -1, 1)])
        out.append(repr(s[1:]))
        out.append(type(s[::2]).__name__ + str(len(s[::2])))
        out.append(error(lambda: s[3]))
        out.append(error(lambda: s[-4]))
        s.append(c.Tanh()).insert(1, c.Norm()).extend([c.Tanh()])
        out.append(list(s._modules))
        out.append(type(s.pop(1)).__name__)
        del s[0]
        out.append(repr(s))
        del s[1:3]
        out.append(list(s._modules))
        s[0] = c.Norm()
        out.append(repr(s))
        out.append(repr(s + ns.Sequential(c.Tanh())))
        out.append(error(lambda: s + [1]))
        s2 = s * 2
        out.append((len(s2), s2[0] is s2[len(s)]))
        s += ns.Sequential(c.Tanh())
        out.append(len(s))
        od = ns.Sequential(OrderedDict([("fc", c.Linear("w1")), ("act", c.Tanh())]))
        out.append(([n for n, _ in od.named_parameters()], repr(od)))
        out.append(error(lambda: s.insert(0, 3))[0])
        out.append(error(lambda: s.insert(10, c.Tanh())))
        out.append([k for k in dir(s) if k.isdigit()])
        return out

    t, g = both(report)
    for a, b in zip(t, g):
        assert b == a


def test_module_list_like_torch():
    def report(ns):
        c = classes(ns)
        out = []
        ml = ns.ModuleList([c.Tanh(), c.Linear("w1")])
        ml.append(c.Tanh())
        ml.extend([c.Tanh(), c.Tanh()])
        ml.insert(1, c.Norm())
        out.append(repr(ml))
        out.append([type(m).__name__ for m in ml])
        out.append((type(ml[-1]).__name__, type(ml[1:3]).__name__, len(ml[1:3])))
        ml[0] = c.Linear("w2")
        del ml[1]
        out.append(list(ml._modules))
        out.append(type(ml.pop(0)).__name__)
        ml += [c.Tanh()]
        out.append(repr(ml))
        out.append(repr(ml + ns.ModuleList([c.Tanh()])))
        out.append(error(lambda: ml[10]))
        out.append(error(lambda: ml.extend(3)))
        out.append([n for n, _ in ns.ModuleList([c.Linear("w1", "b1"), c.Norm()]).named_parameters()])
        return out

    t, g = both(report)
    for a, b in zip(t, g):
        assert b == a


def test_module_dict_like_torch():
    def report(ns):
        c = classes(ns)
        out = []
        md = ns.ModuleDict({"z": c.Tanh(), "a": c.Linear("w1")})
        md.update([("m", c.Norm())])
        md.update(OrderedDict([("b", c.Tanh())]))
        md["c"] = c.Tanh()
        out.append(list(md.keys()))
        out.append(repr(md))
        out.append(("a" in md, len(md), type(md.pop("a")).__name__, list(md)))
        del md["z"]
        out.append([k for k, _ in md.items()])
        out.append(error(lambda: md.update(3)))
        out.append(error(lambda: md.update([("a", c.Tanh(), 3)])))
        out.append(error(lambda: md.update([3])))
        md.clear()
        out.append(len(md))
        return out

    t, g = both(report)
    assert g == t


def test_parameter_list_and_dict_like_torch():
    def report(ns):
        lib = ns.lib
        out = []
        pl = ns.ParameterList([lib.ones(2), ns.Parameter(lib.zeros(3), requires_grad=False)])
        pl.append(lib.ones(1, 2, dtype=lib.float64))
        pl.extend([5])
        out.append(repr(pl))
        out.append([type(p).__name__ for p in pl])
        out.append([n for n, _ in pl.named_parameters()])
        out.append((len(pl[1:]), type(pl[-2]).__name__))
        pl[0] = lib.zeros(4)
        out.append(tuple(pl[0].shape))
        out.append(error(lambda: pl.extend(lib.ones(2))))
        out.append(error(lambda: pl()))
        pd = ns.ParameterDict({"b": lib.ones(2), "a": lib.zeros(3)})
        pd.update([("z", lib.ones(1)), ("y", 3)])
        out.append(repr(pd))
        out.append(list(pd.keys()))
        out.append([n for n, _ in pd.named_parameters()])
        out.append((pd.get("nope", 1), "a" in pd, type(pd.pop("a")).__name__, pd.popitem()[0], list(pd)))
        out.append(list((pd | ns.ParameterDict({"q": lib.ones(1)})).keys()))
        out.append(pd.setdefault("n", None))
        out.append(error(lambda: pd[3]))
        pd.clear()
        out.append(len(pd))
        return out

    t, g = both(report)
    for a, b in zip(t, g):
        assert b == a


# ---------------------------------------------------------------------------------------------
# Lazy modules
# ---------------------------------------------------------------------------------------------

def lazy_classes(ns):
    lib = ns.lib

    class Linear(ns.Module):
        def __init__(self, in_features, out_features):
            super().__init__()
            self.in_features, self.out_features = in_features, out_features
            self.weight = ns.Parameter(lib.empty(out_features, in_features))
            self.register_buffer("count", lib.zeros(1))

        def forward(self, x):
            return x @ self.weight.T

        def extra_repr(self):
            return f"in_features={self.in_features}, out_features={self.out_features}"

    class LazyLinear(ns.LazyModuleMixin, Linear):
        cls_to_become = Linear

        def __init__(self, out_features=2):
            super().__init__(0, out_features)
            self.weight = ns.UninitializedParameter()
            self.count = ns.UninitializedBuffer()

        def initialize_parameters(self, x):
            if self.has_uninitialized_params():
                with lib.no_grad():
                    self.in_features = x.shape[-1]
                    self.weight.materialize((self.out_features, self.in_features))
                    self.weight.fill_(0.5)
                    self.count.materialize((1,))
                    self.count.zero_()

    return lambda: LazyLinear


def test_lazy_module_like_torch():
    def report(ns):
        lib = ns.lib
        LazyLinear = lazy_classes(ns)()
        m = LazyLinear()
        out = [repr(m), repr(m.weight), is_lazy(m.weight) if ns is G else torch.nn.parameter.is_lazy(m.weight),
               m.has_uninitialized_params(), str(m.weight.dtype), m.weight.requires_grad, tuple(m.weight.size())]
        out.append(error(lambda: m.weight.shape))
        out.append(error(lambda: m.weight + 1)[0])
        out.append(error(lambda: m.weight.share_memory_()))
        m.double()
        out.append(str(m.weight.dtype))
        y = m(lib.ones(4, 3, dtype=lib.float64))
        out += [repr(m), type(m).__name__, type(m.weight).__name__, str(m.weight.dtype), tuple(y.shape),
                to_np(y).tolist(), list(m._forward_pre_hooks), type(m.count).__name__]
        p = ns.UninitializedParameter(requires_grad=False)
        p.materialize((2,), dtype=lib.float64)
        out.append((type(p).__name__, str(p.dtype), p.requires_grad, tuple(p.shape)))
        b = ns.UninitializedBuffer()
        out.append((repr(b), b.requires_grad))
        b.materialize((3,))
        out.append((type(b).__name__, tuple(b.shape), isinstance(b, ns.Buffer)))
        q = copy.deepcopy(ns.UninitializedParameter())
        out.append(type(q).__name__)
        return out

    t, g = both(report)
    for a, b in zip(t, g):
        assert b == a
    assert g[8] == "ValueError" and g[12] == "Linear" and g[10] == "torch.float64"


def test_uninitialized_error_message():
    p = UninitializedParameter()
    with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter in .*"
                                         "torch.nn.parameter.UninitializedParameter"):
        p * 2


# ---------------------------------------------------------------------------------------------
# Docstring examples
# ---------------------------------------------------------------------------------------------

def test_docstring_examples_run():
    """The examples in the docstrings are executed (they use layers from other files,
    so this waits until ``glasstorch.nn`` exports them)."""
    import doctest

    import glasstorch.nn.modules.container as container_mod
    import glasstorch.nn.modules.module as module_mod
    import glasstorch.nn.parameter as parameter_mod
    import glasstorch.nn.utils.hooks as hooks_mod

    nn = pytest.importorskip("glasstorch.nn")
    for name in ("Module", "Linear", "Sequential", "ReLU", "BatchNorm1d"):
        if not hasattr(nn, name):
            pytest.skip(f"glasstorch.nn.{name} is not exported yet")
    for mod in (module_mod, container_mod, parameter_mod, hooks_mod):
        result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0, mod.__name__


# ------------------------------------------------------------------------------------------------
# Global module hooks (nn.modules.module.register_module_*): what a tool watching every module sees
# ------------------------------------------------------------------------------------------------
def _global_hooks_run(lib):
    """Every global hook kind installed around building and training a small model; returns what
    each saw, in order (module class names, argument and gradient shapes)."""
    from importlib import import_module
    mm = import_module(lib.__name__ + ".nn.modules.module")
    nn = lib.nn
    seen = []

    def shapes(ts):
        return tuple(None if t is None else tuple(t.shape) for t in ts)

    handles = [
        mm.register_module_parameter_registration_hook(lambda m, n, p: seen.append(("param", type(m).__name__, n))),
        mm.register_module_buffer_registration_hook(lambda m, n, b: seen.append(("buffer", type(m).__name__, n))),
        mm.register_module_module_registration_hook(lambda m, n, s: seen.append(("module", type(m).__name__, n))),
        mm.register_module_forward_pre_hook(lambda m, a: seen.append(("pre", type(m).__name__, shapes(a)))),
        mm.register_module_forward_hook(lambda m, a, o: seen.append(("fwd", type(m).__name__, tuple(o.shape)))),
        mm.register_module_forward_hook(lambda m, a, k, o: seen.append(("fwd_kw", type(m).__name__, sorted(k))),
                                        with_kwargs=True),
        mm.register_module_full_backward_pre_hook(lambda m, go: seen.append(("bwd_pre", type(m).__name__,
                                                                              shapes(go)))),
        mm.register_module_full_backward_hook(lambda m, gi, go: seen.append(("bwd", type(m).__name__, shapes(gi),
                                                                             shapes(go)))),
    ]
    try:
        model = nn.Sequential(nn.Linear(4, 5), nn.BatchNorm1d(5), nn.ReLU(), nn.Linear(5, 3))
        rng = np.random.default_rng(0)          # the same values in both libraries
        with lib.no_grad():
            for p in model.parameters():
                p.copy_(lib.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
        x = lib.from_numpy(rng.standard_normal((6, 4)).astype(np.float32)).requires_grad_()
        model(x).sum().backward()
        # a hook's result replaces the args / the output / the gradient, as each kind's does in torch
        h = mm.register_module_forward_pre_hook(lambda m, a: (a[0] * 2,) if isinstance(m, nn.ReLU) else None)
        h2 = mm.register_module_forward_hook(lambda m, a, o: o + 1 if isinstance(m, nn.Sequential) else None)
        h3 = mm.register_module_full_backward_hook(
            lambda m, gi, go: (gi[0] * 0,) if isinstance(m, nn.Linear) and gi[0] is not None else None)
        x.grad = None
        out = model(x)
        out.sum().backward()
        for handle in (h, h2, h3):
            handle.remove()
        result = (out.detach().numpy().round(5).tolist(), x.grad.numpy().tolist())
    finally:
        for handle in handles:
            handle.remove()
    model(x)                          # removed: nothing more is seen
    return seen, result


def test_global_module_hooks_match_torch():
    ours, theirs = _global_hooks_run(gt), _global_hooks_run(torch)
    assert ours[0] == theirs[0]
    assert ours[1][1] == theirs[1][1]     # the replaced gradient (zero through the first Linear)
    np.testing.assert_allclose(ours[1][0], theirs[1][0], rtol=1e-5, atol=1e-5)
    kinds = {e[0] for e in ours[0]}
    assert kinds == {"param", "buffer", "module", "pre", "fwd", "fwd_kw", "bwd_pre", "bwd"}


def test_global_backward_hook_kinds_do_not_mix():
    from glasstorch.nn.modules import module as mm
    h = mm.register_module_full_backward_hook(lambda *a: None)
    try:
        with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks"):
            mm.register_module_backward_hook(lambda *a: None)
    finally:
        h.remove()
