"""The pointwise ops declared with ``defop`` (pow, atan2, maximum/minimum, where, the clamp family, lerp,
masked_fill, nan_to_num, remainder/fmod/floor_divide, addcmul/addcdiv, zero_/fill_/copy_), against
real torch: the node torch records and the values it exposes (``_saved_exponent``, ``_saved_min``...),
the op sequences a TorchFunctionMode and a TorchDispatchMode see, complex gradients (conjugated as
torch's derivatives.yaml writes them), and double backward.

(``tests/opinfo.py`` runs these ops' real-valued samples through the full harness: values, dtypes,
gradients, second derivatives, bad inputs. What is here is what that harness does not cover.)
"""
import numpy as np
import pytest

import glasstorch
from aten_log import recorder, packet

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(19)
X = RNG.standard_normal((3, 4))
Y = RNG.standard_normal((3, 4))
W = RNG.uniform(0.1, 0.9, (3, 4))
MASK = RNG.standard_normal((3, 4)) > 0


def _leaves(lib, *arrays, requires_grad=True, dtype="float64"):
    return [lib.tensor(a.astype(dtype), requires_grad=requires_grad) for a in arrays]


# every op of the family, as torch's Python API calls it: (id, f(lib, x, y, w, mask))
PROGRAMS = [
    ("pow_scalar", lambda L, x, y, w, m: x ** 3),
    ("pow_half", lambda L, x, y, w, m: x.abs().pow(0.5)),
    ("pow_tensor", lambda L, x, y, w, m: x.abs().pow(y)),
    ("rpow", lambda L, x, y, w, m: 2 ** x),
    ("rpow_zero_base", lambda L, x, y, w, m: 0 ** x),
    ("square", lambda L, x, y, w, m: x.square()),
    ("float_power", lambda L, x, y, w, m: L.float_power(x, 2)),
    ("atan2", lambda L, x, y, w, m: L.atan2(x, y)),
    ("maximum", lambda L, x, y, w, m: L.maximum(x, y)),
    ("minimum", lambda L, x, y, w, m: L.minimum(x, y)),
    ("where", lambda L, x, y, w, m: L.where(L.from_numpy(m), x, y)),
    ("where_number", lambda L, x, y, w, m: L.where(L.from_numpy(m), x, 0.5)),
    ("where_method", lambda L, x, y, w, m: x.where(L.from_numpy(m), y)),
    ("clamp", lambda L, x, y, w, m: x.clamp(-0.5, 0.5)),
    ("clamp_min_kw", lambda L, x, y, w, m: x.clamp(min=0)),
    ("clip", lambda L, x, y, w, m: x.clip(max=0.2)),
    ("clamp_tensor", lambda L, x, y, w, m: x.clamp(y, y + 1)),
    ("clamp_tensor_min", lambda L, x, y, w, m: L.clamp(x, min=y)),
    ("clamp_min", lambda L, x, y, w, m: L.clamp_min(x, 0.1)),
    ("clamp_max", lambda L, x, y, w, m: x.clamp_max(0.1)),
    ("clamp_min_tensor", lambda L, x, y, w, m: x.clamp_min(y)),
    ("clamp_max_tensor", lambda L, x, y, w, m: L.clamp_max(x, y)),
    ("lerp", lambda L, x, y, w, m: x.lerp(y, 0.25)),
    ("lerp_tensor", lambda L, x, y, w, m: L.lerp(x, y, w)),
    ("masked_fill", lambda L, x, y, w, m: x.masked_fill(L.from_numpy(m), 2.0)),
    ("masked_fill_tensor", lambda L, x, y, w, m: x.masked_fill(L.from_numpy(m), y[0, 0])),
    ("nan_to_num", lambda L, x, y, w, m: (x / (x > 0)).nan_to_num(posinf=3.0)),
    ("remainder", lambda L, x, y, w, m: x % 0.7),
    ("remainder_tensor", lambda L, x, y, w, m: L.remainder(x, y.abs() + 0.5)),
    ("fmod", lambda L, x, y, w, m: L.fmod(x, 0.7)),
    ("fmod_tensor", lambda L, x, y, w, m: x.fmod(y.abs() + 0.5)),
    ("addcmul", lambda L, x, y, w, m: L.addcmul(x, y, w, value=0.5)),
    ("addcdiv", lambda L, x, y, w, m: x.addcdiv(y, w, value=-2)),
    ("zero_", lambda L, x, y, w, m: (x * 1).zero_()),
    ("fill_", lambda L, x, y, w, m: (x * 1).fill_(3)),
    ("fill_tensor", lambda L, x, y, w, m: (x * 1).fill_(y[1, 1])),
    ("copy_", lambda L, x, y, w, m: (x * 1).copy_(y[0])),
    ("pow_", lambda L, x, y, w, m: (x * 1).pow_(2)),
    ("clamp_", lambda L, x, y, w, m: (x * 1).clamp_(-0.5, 0.5)),
    ("lerp_", lambda L, x, y, w, m: (x * 1).lerp_(y, 0.5)),
    ("masked_fill_", lambda L, x, y, w, m: (x * 1).masked_fill_(L.from_numpy(m), 0.0)),
    ("addcmul_", lambda L, x, y, w, m: (x * 1).addcmul_(y, w, value=3)),
    ("addcdiv_", lambda L, x, y, w, m: (x * 1).addcdiv_(y, w)),
]
NOT_DIFFERENTIABLE = {
    "floor_divide": lambda L, x, y, w, m: x // y,
    "floor_divide_number": lambda L, x, y, w, m: x // 2,
    "rmod": lambda L, x, y, w, m: 2 % x,
}


def _run(lib, program, dtype="float64"):
    x, y, w = _leaves(lib, X, Y, W, dtype=dtype)
    return program(lib, x, y, w, MASK), (x, y, w)


def _non_tensor_saved(node):
    return {a: getattr(node, a) for a in dir(node)
            if a.startswith("_saved_") and not isinstance(getattr(node, a), (torch.Tensor, glasstorch.Tensor))}


@pytest.mark.parametrize("name,program", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_node_saved_values_and_gradients_as_torch(name, program):
    (ours, our_leaves), (theirs, their_leaves) = _run(glasstorch, program), _run(torch, program)
    node, their_node = ours.grad_fn, theirs.grad_fn
    assert type(node).__name__ == type(their_node).__name__ and node.name() == their_node.name()
    # the parameters torch exposes (_saved_exponent, _saved_min/_saved_max, _saved_weight, _saved_value...)
    assert _non_tensor_saved(node) == _non_tensor_saved(their_node)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy())
    upstream = RNG.standard_normal(tuple(theirs.shape))
    ours.backward(glasstorch.tensor(upstream))
    theirs.backward(torch.tensor(upstream))
    for a, b in zip(our_leaves, their_leaves):
        assert (a.grad is None) == (b.grad is None)
        if b.grad is not None:
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(NOT_DIFFERENTIABLE))
def test_ops_without_a_derivative_record_torchs_not_implemented_node(name):
    (ours, _), (theirs, _) = _run(glasstorch, NOT_DIFFERENTIABLE[name]), _run(torch, NOT_DIFFERENTIABLE[name])
    assert ours.requires_grad and theirs.requires_grad
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__ == "NotImplemented"
    assert ours.grad_fn.name() == theirs.grad_fn.name() == "torch::autograd::NotImplemented"
    with pytest.raises(RuntimeError) as theirs_error:
        theirs.sum().backward()
    with pytest.raises(RuntimeError, match=f"^{theirs_error.value.args[0].splitlines()[0]}"):
        ours.sum().backward()


# ------------------------------------------------------------------------------------------------
# What modes see
# ------------------------------------------------------------------------------------------------
def _dispatch_seen(lib, program):
    x, y, w = _leaves(lib, X, Y, W, requires_grad=False)
    mask = lib.from_numpy(MASK)
    with recorder(lib) as seen:
        program(lib, x, y, w, mask)
    return seen.names


def _function_seen(lib, program):
    class Seen(lib.overrides.TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.names = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.names.append(func.__name__)
            return func(*args, **(kwargs or {}))
    x, y, w = _leaves(lib, X, Y, W, requires_grad=False)
    mask = lib.from_numpy(MASK)
    with Seen() as seen:
        program(lib, x, y, w, mask)
    return seen.names


# small programs over the family's out-of-place ops (the mask is made outside: comparisons are not
# this family's aten ops yet), and the in-place ops that are aten ops of their own
MODE_PROGRAMS = {
    "clamp": lambda L, x, y, w, m: (x.clamp(-1, 1), x.clamp(min=0), L.clamp(x, y, None), x.clamp_min(0),
                                    x.clamp_max(y), x.clip(0, 1)),
    "pow": lambda L, x, y, w, m: (x ** 2, 2 ** x, x.pow(w), L.pow(2, x), x.square()),
    "select": lambda L, x, y, w, m: (L.where(m, x, y), L.maximum(x, y), L.minimum(x, y), L.atan2(x, y)),
    "division": lambda L, x, y, w, m: (x % 2, x % w, 2 % w, L.fmod(x, 2), L.fmod(x, w), x // 2, x // w),
    "lerp": lambda L, x, y, w, m: (x.lerp(y, 0.3), L.lerp(x, y, w), x.masked_fill(m, 0.), x.nan_to_num(),
                                   L.addcmul(x, x, y, value=2), L.addcdiv(x, x, w)),
    "fill": lambda L, x, y, w, m: (x.fill_(2), y.zero_(), w.copy_(x)),
}
FAMILY = ("clamp", "clamp_min", "clamp_max", "pow", "where", "maximum", "minimum", "atan2", "remainder", "fmod",
          "floor_divide", "lerp", "masked_fill", "nan_to_num", "addcmul", "addcdiv", "zero_", "fill_", "copy_")


def _family_only(names):
    """The ops of this family (torch's sequence also has its tensor-creation and copy ops)."""
    return [n for n in names if n.split(".")[1] in FAMILY]


@pytest.mark.parametrize("name", sorted(MODE_PROGRAMS))
def test_dispatch_mode_sees_torchs_aten_ops(name):
    ours, theirs = (_dispatch_seen(lib, MODE_PROGRAMS[name]) for lib in (glasstorch, torch))
    assert ours == _family_only(theirs) and ours


@pytest.mark.parametrize("name", sorted(MODE_PROGRAMS))
def test_function_mode_sees_torchs_calls(name):
    ours, theirs = (_function_seen(lib, MODE_PROGRAMS[name]) for lib in (glasstorch, torch))
    assert ours == theirs


INPLACE_METHODS = lambda L, x, y, w, m: (x.pow_(2), x.clamp_(0, 1), x.clamp_min_(0.1), x.lerp_(y, 0.5),  # noqa: E731
                                        x.masked_fill_(m, 1.), x.nan_to_num_(), x.atan2_(y), x.remainder_(2),
                                        x.fmod_(2), x.addcmul_(y, w), x.addcdiv_(y, w), x.square_())


def test_function_mode_sees_the_in_place_methods():
    ours, theirs = (_function_seen(lib, INPLACE_METHODS) for lib in (glasstorch, torch))
    assert ours == theirs


# In-place ops are aten ops of their own (aten.add_.Tensor, Tensor(a!) self), seen as torch's are, with
# and without autograd, on views and with broadcast operands; torch's autograd-internal ops (clone of
# the original self, detach of a saved result, backward's seed) are left out of its sequence.
_TORCH_INTERNALS = ("clone", "detach", "ones_like", "ones", "scalar_tensor", "empty_like", "zeros_like", "expand",
                    "copy_", "lift_fresh", "_to_copy", "view", "ge", "le", "logical_and_", "logical_and")
# each program: steps, each run on a fresh x (an intermediate when autograd is on, so that a result
# one step saves is not written by the next)
IN_PLACE_PROGRAMS = {
    "arithmetic": [lambda L, x, y, w: x.add_(y), lambda L, x, y, w: x.sub_(w, alpha=2),
                   lambda L, x, y, w: x.mul_(0.5), lambda L, x, y, w: x.div_(w), lambda L, x, y, w: x.add_(1),
                   lambda L, x, y, w: x.mul_(y), lambda L, x, y, w: x.div_(2.0).sub_(y)],
    "broadcast": [lambda L, x, y, w: x.add_(y[0]), lambda L, x, y, w: x.mul_(w[:, :1]),
                  lambda L, x, y, w: x.addcmul_(y, w[0], value=0.5), lambda L, x, y, w: x.addcdiv_(y[1], w)],
    "unary": [lambda L, x, y, w: x.tanh_(), lambda L, x, y, w: x.exp_(), lambda L, x, y, w: x.sigmoid_(),
              lambda L, x, y, w: x.neg_().relu_(), lambda L, x, y, w: x.abs_().sqrt_(),
              lambda L, x, y, w: x.floor_(), lambda L, x, y, w: x.round_(), lambda L, x, y, w: x.round_(decimals=1)],
    "clamp": [lambda L, x, y, w: x.clamp_(-0.5, 0.5), lambda L, x, y, w: x.clamp_(min=y),
              lambda L, x, y, w: x.clamp_min_(0.1), lambda L, x, y, w: x.clamp_max_(w),
              lambda L, x, y, w: x.clip_(0, 1)],
    "others": [lambda L, x, y, w: x.abs_().pow_(2), lambda L, x, y, w: x.abs_().pow_(w),
               lambda L, x, y, w: x.square_(), lambda L, x, y, w: x.lerp_(y, 0.3), lambda L, x, y, w: x.lerp_(y, w),
               lambda L, x, y, w: x.atan2_(y), lambda L, x, y, w: x.remainder_(0.7), lambda L, x, y, w: x.fmod_(w),
               lambda L, x, y, w: x.nan_to_num_(), lambda L, x, y, w: x.masked_fill_(L.from_numpy(MASK), 1.0)],
    "views": [lambda L, x, y, w: x[0].add_(y[1]), lambda L, x, y, w: x[:, 1].mul_(w[0, 0]),
              lambda L, x, y, w: x.t().exp_(), lambda L, x, y, w: x[1:].clamp_(0, 1),
              lambda L, x, y, w: x.view(-1)[::2].sub_(1)],
}


def _in_place_run(lib, program, dtype, requires_grad):
    """The program's steps, each on a fresh ``x`` (an intermediate when ``requires_grad``), then one
    backward: the aten ops seen forward (without torch's internals), the values, the gradients and
    the nodes of the results."""
    leaves = _leaves(lib, X, Y, W, dtype=dtype, requires_grad=requires_grad)
    log = recorder(lib, keep=lambda name: packet(name) not in _TORCH_INTERNALS)
    xs = []
    for step in program:
        x = leaves[0] * 1 if requires_grad else leaves[0].clone()
        with log:
            step(lib, x, *leaves[1:])
        xs.append(x)
    nodes = [type(x.grad_fn).__name__ for x in xs] if requires_grad else None
    if requires_grad:   # (the backward formulas' own ops are other tests')
        sum((x * lib.tensor(W.astype(dtype))).sum() for x in xs).backward()
    grads = [None if t.grad is None else t.grad.numpy() for t in leaves]
    return log.names, np.stack([x.detach().numpy() for x in xs]), grads, nodes


@pytest.mark.parametrize("requires_grad", [False, True], ids=["no_autograd", "autograd"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(IN_PLACE_PROGRAMS))
def test_dispatch_mode_sees_in_place_ops_as_torch(name, dtype, requires_grad):
    ours, theirs = (_in_place_run(lib, IN_PLACE_PROGRAMS[name], dtype, requires_grad) for lib in (glasstorch, torch))
    assert ours[0] == theirs[0]
    assert any(packet.split(".")[1].endswith("_") for packet in ours[0])
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5, atol=1e-6)
    for g_ours, g_theirs in zip(ours[2], theirs[2]):
        assert (g_ours is None) == (g_theirs is None)
        if g_ours is not None:
            assert g_ours.dtype == g_theirs.dtype
            np.testing.assert_allclose(g_ours, g_theirs, rtol=1e-5, atol=1e-6)
    assert ours[3] == theirs[3]


def test_in_place_op_records_torchs_node_and_saved_values():
    """mul_ saves self's value from before the write (torch's original_self), exp_ its result as self
    itself (written again, backward raises); the in-place op moves the version on once."""
    for lib in (glasstorch, torch):
        a, b = _leaves(lib, X, Y)
        y = a * 1
        y.mul_(b)
        assert type(y.grad_fn).__name__ == "MulBackward0" and y._version == 1
        np.testing.assert_allclose(y.grad_fn._saved_self.detach().numpy(), X)
        z = a * 1
        z.exp_()
        assert z.grad_fn._saved_result is not None and type(z.grad_fn).__name__ == "ExpBackward0"
        z.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()


def test_in_place_op_errors_as_torch():
    """torch's refusals, before anything is written: a leaf that requires grad, a result type that
    does not cast to self's, a shape that does not broadcast to self's."""
    for lib in (glasstorch, torch):
        a, b = _leaves(lib, X, Y)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
            a.add_(b)
        i = lib.ones(3, dtype=lib.int64)
        with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
            i.add_(0.5 * lib.ones(3))
        with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
            i.exp_()
        s = lib.ones(3)
        with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"):
            s.mul_(lib.ones(2, 3))
        assert s.tolist() == [1.0, 1.0, 1.0] and i.tolist() == [1, 1, 1]


# in-place writes across dtypes: torch's canCast (integers of any size and sign into one another; no float
# into an integer, no complex into a real, nothing but bool into bool) and its bool/alpha rules
IN_PLACE_DTYPE_CASES = {
    "int_div": lambda L: L.ones(3, dtype=L.int64).div_(2),
    "bool_add_bool": lambda L: L.ones(3, dtype=L.bool).add_(True),
    "bool_add_int": lambda L: L.ones(3, dtype=L.bool).add_(1),
    "bool_sub": lambda L: L.ones(3, dtype=L.bool).sub_(L.ones(3, dtype=L.bool)),
    "int_alpha_float": lambda L: L.ones(3, dtype=L.int64).add_(L.ones(3, dtype=L.int64), alpha=0.5),
    "bool_alpha": lambda L: L.ones(3).sub_(L.ones(3), alpha=True),
    "uint8_add_int8": lambda L: L.ones(3, dtype=L.uint8).add_(L.ones(3, dtype=L.int8)),
    "int8_add_int64_wraps": lambda L: L.ones(3, dtype=L.int8).add_(L.ones(3, dtype=L.int64) * 300),
    "int_addcmul_float": lambda L: L.ones(3, dtype=L.int64).addcmul_(L.ones(3), L.ones(3)),
    "float32_add_float64": lambda L: L.ones(3).add_(L.ones(3, dtype=L.float64) / 3),
    "float_add_complex": lambda L: L.ones(3).add_(L.ones(3, dtype=L.complex64)),
    "int_exp": lambda L: L.ones(3, dtype=L.int64).exp_(),
    "broadcast_into_smaller": lambda L: L.ones(3).mul_(L.ones(2, 3)),
    "shapes_that_do_not_broadcast": lambda L: L.ones(3).add_(L.ones(2)),
    "overlapping_input": lambda L: (lambda x: x[1:].add_(x[:-1]))(L.ones(4)),
    "expanded_target": lambda L: L.ones(3).expand(2, 3).add_(1),
}


@pytest.mark.parametrize("name", sorted(IN_PLACE_DTYPE_CASES))
def test_in_place_dtypes_and_refusals_as_torch(name):
    results = []
    for lib in (glasstorch, torch):
        try:
            r = IN_PLACE_DTYPE_CASES[name](lib)
            results.append((str(r.dtype), r.tolist()))
        except RuntimeError as e:
            results.append(str(e).splitlines()[0])
    assert results[0] == results[1]


def test_in_place_variant_source_is_generated():
    """The in-place variant is a defop of its own: its generated call writes through its kernel."""
    op = glasstorch.ops.aten.add_.Tensor
    assert op._schema.mutates and op.node is glasstorch.ops.aten.add.Tensor.node
    assert "_kernel(" in op._source and "_run_inplace(" in op._source


# ------------------------------------------------------------------------------------------------
# Complex gradients: conjugate Wirtinger derivatives, as torch's formulas write them (.conj())
# ------------------------------------------------------------------------------------------------
Z = RNG.standard_normal((2, 3)) + 1j * RNG.standard_normal((2, 3))
V = RNG.standard_normal((2, 3)) + 1j * RNG.standard_normal((2, 3))
COMPLEX_PROGRAMS = [
    ("pow_2", lambda L, z, v: z ** 2),
    ("pow_3", lambda L, z, v: z.pow(3)),
    ("pow_half", lambda L, z, v: z ** 0.5),
    ("pow_complex_exponent", lambda L, z, v: z ** (0.5 + 1j)),
    ("pow_tensor", lambda L, z, v: z.pow(v)),
    ("rpow", lambda L, z, v: 2 ** z),
    ("rpow_complex_base", lambda L, z, v: (1 + 2j) ** z),
    ("square", lambda L, z, v: z.square()),
    ("addcmul", lambda L, z, v: L.addcmul(z, z, v, value=2)),
    ("addcdiv", lambda L, z, v: L.addcdiv(z, v, z, value=0.5)),
    ("lerp", lambda L, z, v: z.lerp(v, 0.3)),
    ("lerp_tensor", lambda L, z, v: L.lerp(z, v, z)),
    ("where", lambda L, z, v: L.where(L.from_numpy(MASK[:2, :3]), z, v)),
    ("masked_fill", lambda L, z, v: z.masked_fill(L.from_numpy(MASK[:2, :3]), 1j)),
    ("copy_", lambda L, z, v: (z * 1).copy_(v)),
]


@pytest.mark.parametrize("name,program", COMPLEX_PROGRAMS, ids=[p[0] for p in COMPLEX_PROGRAMS])
@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
def test_complex_gradients_as_torch(name, program, dtype):
    grads = []
    upstream = RNG.standard_normal(Z.shape) + 1j * RNG.standard_normal(Z.shape)
    for lib in (glasstorch, torch):
        z, v = _leaves(lib, Z, V, dtype=dtype)
        out = program(lib, z, v)
        out.backward(lib.tensor(upstream.astype(dtype)))
        grads.append((out.detach().numpy(), z.grad.numpy(), None if v.grad is None else v.grad.numpy()))
    tol = 1e-12 if dtype == "complex128" else 2e-5
    for ours, theirs in zip(*grads):
        assert (ours is None) == (theirs is None)
        if theirs is not None:
            assert ours.dtype == theirs.dtype
            np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol)


# ------------------------------------------------------------------------------------------------
# Double backward: the second derivatives, and which of them are defined (zeros, not None)
# ------------------------------------------------------------------------------------------------
SECOND_ORDER = [p for p in PROGRAMS if p[0] in (
    "pow_scalar", "pow_half", "pow_tensor", "rpow", "atan2", "maximum", "minimum", "where", "where_number",
    "clamp", "clamp_tensor", "clamp_min", "clamp_max_tensor", "lerp", "lerp_tensor", "masked_fill",
    "masked_fill_tensor", "nan_to_num", "remainder_tensor", "fmod_tensor", "addcmul", "addcdiv", "fill_tensor",
    "copy_", "clamp_", "pow_")]


@pytest.mark.parametrize("name,program", SECOND_ORDER, ids=[p[0] for p in SECOND_ORDER])
def test_double_backward_as_torch(name, program):
    results = []
    for lib in (glasstorch, torch):
        out, leaves = _run(lib, program)
        upstream = lib.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)), requires_grad=True)
        firsts = lib.autograd.grad(out, leaves, upstream, create_graph=True, allow_unused=True)
        used = [g for g in firsts if g is not None and g.requires_grad]
        total = sum(((g * g).sum() for g in used), lib.tensor(0.0, dtype=lib.float64))
        seconds = lib.autograd.grad(total, list(leaves) + [upstream], allow_unused=True) if used else ()
        results.append(([None if g is None else (g.requires_grad, g.detach().numpy()) for g in firsts],
                        [None if g is None else g.numpy() for g in seconds]))
    (our_first, our_second), (their_first, their_second) = results
    assert [f is None or f[0] for f in our_first] == [f is None or f[0] for f in their_first]
    for ours, theirs in zip(our_first + our_second, their_first + their_second):
        assert (ours is None) == (theirs is None)
        if theirs is not None:
            np.testing.assert_allclose(ours[1] if isinstance(ours, tuple) else ours,
                                       theirs[1] if isinstance(theirs, tuple) else theirs, rtol=1e-10, atol=1e-12)
    assert len(our_second) == len(their_second)


def test_complex_pow_at_a_zero_base_as_torch():
    """pow_backward_exponent's rule at x = 0: the derivative in y is 0 where y is real and >= 0
    (torch checks imag(y) == 0 and real(y) >= 0), else result * log(0) (NaN/inf, as torch)."""
    base = np.array([0, 0, 0, 0, 1 + 1j])
    exponent = np.array([2, -1, 1 + 1j, 0.5j, 2])
    grads = []
    for lib in (glasstorch, torch):
        x, y = _leaves(lib, base, exponent, dtype="complex128")
        (x ** y).backward(lib.ones(5, dtype=lib.complex128))
        grads.append(y.grad.numpy())
        z = lib.tensor(exponent.astype("complex128"), requires_grad=True)
        (0 ** z).backward(lib.ones(5, dtype=lib.complex128))
        grads.append(z.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[2], rtol=1e-15)   # (NaN where torch has NaN)
    np.testing.assert_allclose(grads[1], grads[3], rtol=1e-15)


COMPARISONS = lambda L, x, y, w, m: (x > 0, x < y, x >= y, x <= 0, x == y, x != y, x.gt(y), x.less(y),  # noqa: E731
                                    L.greater_equal(x, y), L.not_equal(x, 0), L.logical_and(m, m), m & m,
                                    m | m, m ^ m, L.bitwise_and(m, m), x.where(m, y))


def test_function_mode_sees_comparisons_and_logic_under_torchs_names():
    ours, theirs = (_function_seen(lib, COMPARISONS) for lib in (glasstorch, torch))
    assert ours == theirs


@pytest.mark.parametrize("name", ["fmax", "fmin", "maximum", "minimum"])
def test_fmax_fmin_ignore_nan_where_maximum_minimum_propagate_it(name):
    a = np.array([1.0, np.nan, 2.0, np.nan, 3.0, -1.0])
    b = np.array([np.nan, 1.0, 2.0, np.nan, 1.0, 0.5])
    results = []
    for lib in (glasstorch, torch):
        x, y = _leaves(lib, a, b)
        out = getattr(lib, name)(x, y)
        out.backward(lib.arange(1.0, 7.0, dtype=lib.float64))
        results.append((type(out.grad_fn).__name__, out.detach().numpy(), x.grad.numpy(), y.grad.numpy()))
    assert results[0][0] == results[1][0]
    for ours, theirs in zip(results[0][1:], results[1][1:]):
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("call", ["clamp_(min=b)", "clamp_(max=b)", "clamp_(min=b, max=b + 1)", "clip_(min=b)",
                                  "lerp_(end=b, weight=0.3)", "addcmul_(tensor1=b, tensor2=b)"])
def test_inplace_with_a_tensor_passed_by_keyword_records_it(call):
    """An in-place op on a tensor that needs no gradient, whose keyword tensor does: torch records
    the op (the result requires grad, the gradient reaches the keyword's leaf)."""
    results = []
    for lib in (torch, glasstorch):
        a = lib.tensor([0.1, -1.5, 2.0, 0.7], dtype=lib.float64)
        b = lib.tensor([0.5, -1.0, 1.0, 0.2], dtype=lib.float64, requires_grad=True)
        out = eval("a." + call, {"a": a, "b": b})
        assert out is a
        (a * lib.arange(1.0, 5.0, dtype=lib.float64)).sum().backward()
        results.append((type(a.grad_fn).__name__, a.detach().numpy(), b.grad.numpy()))
    (name_t, value_t, grad_t), (name_g, value_g, grad_g) = results
    assert name_g == name_t       # (values to an ulp: torch's vectorised lerp uses a fused multiply-add)
    np.testing.assert_allclose(value_g, value_t, rtol=1e-14)
    np.testing.assert_allclose(grad_g, grad_t, rtol=1e-14)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("threshold", [0, 0.5, -1.0])
def test_threshold_backward_bit_for_bit_as_torch(dtype, threshold):
    # ReLU's backward masks by the bits of the gradient (no np.where): -0, inf and nan gradients kept
    # where unmasked, +0 where masked (an inf gradient at a masked element too), a nan input unmasked;
    # contiguous, transposed, broadcast and 0-d operands
    s = RNG.standard_normal((6, 5)).astype(dtype)
    g = RNG.standard_normal((6, 5)).astype(dtype)
    s[0, :3], s[1, :2] = np.nan, (0.0, -0.0)
    g[2, :4], g[3, 0], s[3, 0] = (np.inf, -np.inf, np.nan, -0.0), np.inf, -2
    cases = [(g, s), (g.T, s.T), (g[:1], s), (g[2, 0], s[2, 0]), (g[2], s[2:4])]
    for a, b in cases:
        theirs = torch.ops.aten.threshold_backward(torch.tensor(a), torch.tensor(b), threshold).numpy()
        ours = glasstorch.ops.aten.threshold_backward(glasstorch.tensor(a), glasstorch.tensor(b), threshold).numpy()
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        assert np.array_equal(ours, theirs, equal_nan=True) and np.array_equal(np.signbit(ours), np.signbit(theirs))


def test_in_place_bool_alpha_is_refused_with_the_seam_on(monkeypatch):
    """alpha=True equals 1: the method handing the call to the seam (on once any Tensor subclass
    exists) must still pass it on, or sub_(alpha=True) subtracts silently (the full suite's order
    found it)."""
    from glasstorch._seam import seam

    class Sub(glasstorch.Tensor):
        pass
    keep = glasstorch.ones(1).as_subclass(Sub)      # (the seam is on while a tensor of it is alive)
    assert seam.on and keep is not None
    for name in ("add_", "sub_"):
        with pytest.raises(RuntimeError, match="Boolean alpha only supported"):
            getattr(glasstorch.ones(3), name)(glasstorch.ones(3), alpha=True)


def _bitwise_run(lib):
    """The bitwise ops and their in-place forms (operators, methods, numbers, bools) under a
    recording dispatch mode, then the values and torch's refusals."""
    x, y = lib.tensor([1, 2, 3]), lib.tensor([3, 1, 0])
    b = x > 1
    with recorder(lib) as seen:
        r = [x & y, x & 2, 2 & x, x | y, b ^ b, x & True, x.bitwise_and(y), lib.bitwise_or(x, 2)]
        x.bitwise_xor_(2)
        b &= b
        b |= True
        x ^= y
        x[1:].bitwise_or_(y[:2])
    errors = []
    for bad in (lambda: x.float() & 1, lambda: x & 1.5, lambda: b.__iand__(x), lambda: x[:2].__iand__(y)):
        with pytest.raises((RuntimeError, NotImplementedError)) as e:
            bad()
        errors.append((e.type.__name__, str(e.value)))
    return seen.names, [t.tolist() for t in r], x.tolist(), b.tolist(), errors


def test_bitwise_ops_in_place_are_torchs_aten_ops():
    ours, theirs = _bitwise_run(glasstorch), _bitwise_run(torch)
    assert ours == theirs
    assert "aten.bitwise_and_.Tensor" in ours[0] and "aten.bitwise_or_.Scalar" in ours[0]


@pytest.mark.parametrize("dtype", ["int8", "int64", "uint8", "bool", "float32"])
@pytest.mark.parametrize("call", ["clamp_(0.5, 1.5)", "clamp_min_(0.5)", "clamp_max_(0.5)", "clip_(0.5)",
                                  "clamp_(min=lib.tensor(0.5))", "clamp_(0, 1)", "clamp_(max=2)"])
def test_clamp_in_place_cast_errors_as_torch(dtype, call):
    # clamp's meta function names the target's C++ type ("long int"); clamp by tensors says "Long"
    def run(lib):
        x = lib.zeros(3, dtype=getattr(lib, dtype))
        try:
            eval("x." + call, {"x": x, "lib": lib})
        except RuntimeError as e:
            return "error", str(e)
        return x.tolist(), str(x.dtype)
    assert run(glasstorch) == run(torch)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("fn", ["sigmoid", "silu", "mish"])
def test_sigmoid_family_keeps_its_relative_precision_far_out_on_the_negative_side(fn, dtype):
    # sigmoid as 0.5 + 0.5 tanh(x / 2) cancelled for large negative x: float32 sigmoid(-20) was 0 and
    # silu's gradient at -15 8% off (fuzzer seed 796173388776). torch computes 1 / (1 + exp(-x)) and
    # x / (1 + exp(-x)), float16 and bfloat16 in float32, rounded once
    values = [-100.0, -88.0, -40.0, -20.0, -15.3, -12.0, -1.0, -0.3, 0.0, 0.7, 3.0, 20.0]
    f = {"sigmoid": lambda L, x: L.sigmoid(x), "silu": lambda L, x: L.nn.functional.silu(x),
         "mish": lambda L, x: L.nn.functional.mish(x)}[fn]
    out = {}
    for lib in (torch, glasstorch):
        x = lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)
        y = f(lib, x)
        y.backward(lib.ones_like(y))
        out[lib.__name__] = (y.detach().float().numpy(), x.grad.float().numpy())
    rtol = {"float64": 1e-13, "float32": 1e-6, "float16": 1e-3, "bfloat16": 8e-3}[dtype]
    for mine, theirs in zip(out["glasstorch"], out["torch"]):
        np.testing.assert_allclose(mine, theirs, rtol=rtol, atol=0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_number_operands_of_arithmetic_bit_for_bit_as_torch(dtype):
    """``+ - * /`` with a Python number: the kernels hand NumPy a cached read-only 0-d array of the
    tensor's dtype in the number's place (``promote_arrays(..., number_as_array=True)``, faster than a
    number in NumPy 2). Values (bits, signs of zero, inf, nan), dtypes and strides stay torch's, on
    plain, transposed, expanded and stepped tensors, the second call (the cached operand) as the first;
    results stay writable."""
    base = RNG.standard_normal((4, 1, 3)).astype(dtype)
    views = {"plain": lambda t: t, "transposed": lambda t: t.transpose(0, 2),
             "expanded": lambda t: t.expand(4, 2, 3), "stepped": lambda t: t[::2]}
    numbers = (2, 0.1, -3.5, 7, 2 ** 30, 1e30, 1e300, -0.0, 0, float("nan"), float("-inf"))
    calls = {"mul": lambda t, n: t * n, "add": lambda t, n: t + n, "sub": lambda t, n: t - n,
             "rsub": lambda t, n: n - t, "div": lambda t, n: t / n, "add alpha": lambda t, n: t.add(n, alpha=0.5)}
    for view_name, view in views.items():
        for n in numbers:
            for call_name, call in calls.items():
                want = call(view(torch.tensor(base)), n)
                for _ in range(2):
                    got = call(view(glasstorch.tensor(base)), n)
                    where = (view_name, n, call_name)
                    assert got.dtype.__repr__() == repr(want.dtype) and got.stride() == want.stride(), where
                    g, w = got.numpy(), want.numpy()
                    assert np.array_equal(g, w, equal_nan=True) and np.array_equal(np.signbit(g), np.signbit(w)), where
    y = glasstorch.ones(3, dtype=getattr(glasstorch, dtype)) * 2
    y[0] = 5.0
    assert y.tolist() == [5.0, 2.0, 2.0] and (glasstorch.ones(2, dtype=y.dtype) * 2).tolist() == [2.0, 2.0]
