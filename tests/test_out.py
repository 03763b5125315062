"""``out=`` on torch's top-level functions, against torch: every op of the registry that takes it.

For each op in ``OUT_RULES`` with samples in ``tests/opinfo.py``, the same inputs through torch and
glasstorch with ``out=`` of the result's dtype (values, the returned object is ``out``, its version),
of other dtypes (torch's error, type and words, or the same cast values), of another shape (the
resize and its warning), and with an input that requires grad (autograd's refusal).
"""
import functools
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import glasstorch  # noqa: E402
from glasstorch._prims_common.wrappers import OUT_RULES  # noqa: E402

import opinfo  # noqa: E402

_DEFAULT_CALL = opinfo.OpInfo("_", samples=None).fn.__code__


# torch's composite out= paths of these make no autograd check and leave a history on out
# (NotImplemented, CopyBackwards) that a backward cannot use; glasstorch's out does not require grad
_OUT_KEEPS_HISTORY = {"softmax", "log_softmax", "inner", "diag", "heaviside", "linalg.matrix_norm", "linalg.norm", "linalg.eigvals",
                      "linalg.matrix_rank", "linalg.matrix_power"}   # (matrix_power of 0 or 1: a copy)


def _cases():
    seen = set()
    for info in opinfo.op_db:
        # (torch.linalg's entries call lib.linalg.<name>: out= goes to the same function)
        default = info.fn.__code__ is _DEFAULT_CALL or info.name.startswith("linalg.")
        if not default or info.name not in OUT_RULES or info.name in seen:
            continue
        seen.add(info.name)
        for dtype in dict.fromkeys(d for d in info.dtypes if d in ("float32", "float64", "int64", "bool")):
            yield pytest.param(info, dtype, id=f"{info.name}-{dtype}")


def _samples(info, dtype, n=2):
    return info.samples(dtype, requires_grad=False)[:n]


def _call(lib, info, sample, out):
    args, kwargs, _ = sample.build(lib)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = functools.reduce(getattr, info.name.split("."), lib)(*args, **kwargs, out=out)
        except Exception as e:  # noqa: BLE001 -- the error is what is compared
            result = e
    return result, [str(w.message) for w in caught if "resized" in str(w.message)]


def _empty_like(lib, ref, dtype=None, shape=None):
    """Outs for torch's result ``ref`` (a tensor or a tuple), in ``lib``."""
    if isinstance(ref, tuple):
        return tuple(_empty_like(lib, r, dtype, shape) for r in ref)
    dt = getattr(lib, str(dtype or ref.dtype).replace("torch.", ""))
    return lib.zeros(tuple(ref.shape) if shape is None else shape, dtype=dt)


# results defined up to the signs of vectors: LAPACK's choice may differ between two calls (the registry
# compares invariants of them; here the dtypes and shapes)
_UP_TO_SIGNS = {"linalg.eigh", "linalg.svd", "linalg.eig", "linalg.qr"}


def _same_outcome(ours, theirs, where):
    if isinstance(theirs, Exception) and "INTERNAL ASSERT FAILED" in str(theirs):
        # a torch bug, not its specification: ldexp(float, int, out=<another float dtype>) fails an internal
        # assert in torch 2.13; glasstorch casts into out as every element-wise op does (README)
        assert not isinstance(ours, Exception), f"{where}: glasstorch raised {ours!r}"
        return
    if isinstance(theirs, Exception):
        assert isinstance(ours, Exception), f"{where}: torch raised {theirs!r}, glasstorch returned"
        assert type(ours).__name__ == type(theirs).__name__ and \
            str(ours).split("\n")[0] == str(theirs).split("\n")[0], \
            f"{where}: {type(ours).__name__}: {ours} != {type(theirs).__name__}: {theirs}"
        return
    assert not isinstance(ours, Exception), f"{where}: glasstorch raised {ours!r}"
    ours_t = ours if isinstance(ours, tuple) else (ours,)
    theirs_t = theirs if isinstance(theirs, tuple) else (theirs,)
    assert type(ours).__name__ == type(theirs).__name__, where
    for o, t in zip(ours_t, theirs_t):
        assert str(o.dtype) == str(t.dtype).replace("torch.", "glasstorch.").replace("glasstorch.", "torch.") or \
            o.dtype.name == str(t.dtype).replace("torch.", ""), where
        assert tuple(o.shape) == tuple(t.shape), where
        if where.split("(")[0] in _UP_TO_SIGNS:
            continue
        np.testing.assert_allclose(o.detach().numpy().astype(float), t.detach().numpy().astype(float), rtol=1e-5, atol=1e-6,
                                   equal_nan=True, err_msg=where)


@pytest.mark.parametrize("info,dtype", list(_cases()))
def test_out_against_torch(info, dtype):
    for sample in _samples(info, dtype):
        args, kwargs, _ = sample.build(torch)
        try:
            ref = functools.reduce(getattr, info.name.split("."), torch)(*args, **kwargs)
        except Exception:  # noqa: BLE001 -- a sample torch refuses says nothing about out=
            continue
        if not isinstance(ref, (torch.Tensor, tuple)):
            continue
        where = f"{info.name}{sample!r} {dtype}"
        # out of the result's dtype and shape: the values, in out itself, its version moved on
        t_out, g_out = _empty_like(torch, ref), _empty_like(glasstorch, ref)
        theirs, _ = _call(torch, info, sample, t_out)
        ours, _ = _call(glasstorch, info, sample, g_out)
        _same_outcome(ours, theirs, where + " out=same dtype")
        if not isinstance(theirs, Exception):
            firsts = (ours if isinstance(ours, tuple) else (ours,), g_out if isinstance(g_out, tuple) else (g_out,))
            assert all(a is b for a, b in zip(*firsts)), where
            assert all(o._version == 1 for o in firsts[1]), where
        # other dtypes: torch's error, or the same values cast
        for odt in ("int64", "float64", "float32", "bool", "int32"):
            theirs, _ = _call(torch, info, sample, _empty_like(torch, ref, odt))
            ours, _ = _call(glasstorch, info, sample, _empty_like(glasstorch, ref, odt))
            _same_outcome(ours, theirs, f"{where} out={odt}")
        # another shape: resized, with torch's warning when out had elements
        for shape in ((0,), (7,)):
            t_res = _call(torch, info, sample, _empty_like(torch, ref, shape=shape))
            g_res = _call(glasstorch, info, sample, _empty_like(glasstorch, ref, shape=shape))
            _same_outcome(g_res[0], t_res[0], f"{where} out shape {shape}")
            assert [w[:60] for w in g_res[1]] == [w[:60] for w in t_res[1]], where
        # autograd: an input that requires grad is refused while grad mode records, not under no_grad
        if dtype.startswith("float"):
            rg = [leaf for leaf in sample.leaves if leaf.array.dtype.kind == "f"]
            for leaf in rg:
                leaf.requires_grad = True
            try:
                theirs, _ = _call(torch, info, sample, _empty_like(torch, ref))
                ours, _ = _call(glasstorch, info, sample, _empty_like(glasstorch, ref))
                _same_outcome(ours, theirs, where + " requires grad")
                if info.name not in _OUT_KEEPS_HISTORY and not isinstance(theirs, Exception):
                    assert ours.requires_grad == theirs.requires_grad, where
                with torch.no_grad(), glasstorch.no_grad():
                    theirs, _ = _call(torch, info, sample, _empty_like(torch, ref))
                    ours, _ = _call(glasstorch, info, sample, _empty_like(glasstorch, ref))
                _same_outcome(ours, theirs, where + " requires grad, no_grad")
            finally:
                for leaf in rg:
                    leaf.requires_grad = False


def test_rules_cover_the_registry():
    """The table has an entry for every op the registry tests here (a guard on the test itself)."""
    assert len(list(_cases())) > 100


def test_methods_refuse_out():
    x = glasstorch.randn(3)
    with pytest.raises(TypeError, match="unexpected keyword argument 'out'"):
        x.exp(out=glasstorch.empty(3))
    with pytest.raises(TypeError, match="no keyword arguments"):
        torch.randn(3).exp(out=torch.empty(3))


def test_resize_keeps_memory_of_a_large_enough_out():
    """torch's resize_ keeps the storage: a view of the old out sees the new values."""
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    for lib in (torch, glasstorch):
        o = lib.zeros(20)
        v = o[:]
        with pytest.warns(UserWarning, match="was resized"):
            r = lib.add(lib.from_numpy(a), 1, out=o)
        assert r is o and tuple(o.shape) == (2, 3)
        np.testing.assert_array_equal(v[:6].numpy(), a.reshape(-1) + 1)


def test_noncontiguous_out_keeps_its_strides():
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    for lib in (torch, glasstorch):
        o = lib.zeros(3, 2).t()
        lib.mul(lib.from_numpy(a), 2, out=o)
        assert o.stride() == (1, 2)
        np.testing.assert_array_equal(o.numpy(), a * 2)


def test_out_tuple_and_its_errors():
    x = np.random.default_rng(0).standard_normal((3, 4))
    for lib in (torch, glasstorch):
        t = lib.from_numpy(x)
        v, i = lib.empty(0, dtype=lib.float64), lib.empty(0, dtype=lib.long)
        r = lib.max(t, 1, out=(v, i))
        assert type(r).__name__ == "max_out" and r.values is v and r.indices is i
        np.testing.assert_array_equal(i.numpy(), x.argmax(1))
        with pytest.raises(TypeError, match="expected tuple of 2 elements but got 3"):
            lib.sort(t, out=(v, i, i))
        with pytest.raises(TypeError, match="argument 'out' must be Tensor, not str"):
            lib.exp(t, out="x")


def test_function_mode_sees_out():
    """A TorchFunctionMode is given the call with its out= (and may run it)."""
    seen = []

    class Spy(glasstorch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append((func.__name__, sorted(kwargs or {})))
            return func(*args, **(kwargs or {}))

    o = glasstorch.empty(3)
    with Spy():
        r = glasstorch.exp(glasstorch.zeros(3), out=o)
    assert r is o and ("exp", ["out"]) in seen
    np.testing.assert_array_equal(o.numpy(), np.ones(3))
