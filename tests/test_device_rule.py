"""The device rule (glasstorch/_array/device_rule.py), kernels that allocate on their input's device
(``_array.zeros_like`` and friends), and the CuPy stand-in (tests/_fake_cupy.py) itself.

Meta cases are compared with torch's meta device. The CUDA cases run where glasstorch finds a GPU
-- a real one (tools/gpu_check.py), or the stand-in under ``pytest --device fakecuda``, which is no
GPU check: it shows where glasstorch mixes host and device arrays, nothing about a GPU's numbers.
Their expected words are torch 2.13's (its library's strings), unchecked against torch on a GPU.
"""
import importlib.util
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import glasstorch  # noqa: E402
from glasstorch import _array  # noqa: E402


def _outcome(fn):
    try:
        r = fn()
        return ("ok", r.device.type if hasattr(r, "device") else repr(r))
    except Exception as e:  # noqa: BLE001 - we compare whatever torch raises
        return (type(e).__name__, str(e))


# ---- meta against torch's meta device -------------------------------------------------------
META_CASES = {
    "F.linear(meta input, CPU weight and bias): mat1's device expected":
        lambda L: L.nn.functional.linear(L.ones(2, 3, device="meta"), L.ones(4, 3), L.ones(4)),
    "F.linear(CPU input, meta weight and bias)":
        lambda L: L.nn.functional.linear(L.ones(2, 3), L.ones(4, 3, device="meta"), L.ones(4, device="meta")),
    "meta[CPU index]": lambda L: L.ones(2, 3, device="meta")[L.tensor([0, 1])],
    "meta[CPU mask]": lambda L: L.ones(2, 3, device="meta")[L.tensor([True, False])],
    "meta.index_select(CPU index)": lambda L: L.ones(2, 3, device="meta").index_select(0, L.tensor([0, 1])),
    "meta.gather(CPU index)": lambda L: L.ones(2, 3, device="meta").gather(0, L.zeros(2, 3, dtype=L.long)),
    "meta.scatter_(CPU index)":
        lambda L: L.ones(2, 3, device="meta").scatter_(0, L.zeros(2, 3, dtype=L.long), L.ones(2, 3, device="meta")),
    "embedding(CPU indices, meta weight)":
        lambda L: L.nn.functional.embedding(L.tensor([0, 1]), L.ones(3, 3, device="meta")),
    "meta.index_put_(CPU indices)":
        lambda L: L.ones(2, 3, device="meta").index_put_((L.tensor([0, 1]),), L.ones(2, 3, device="meta")),
    "meta x[CPU index] = v": lambda L: L.ones(2, 3, device="meta").__setitem__(L.tensor([0, 1]), 1.0),
    "meta.add_(CPU) in place: torch's meta kernels do not check":
        lambda L: L.ones(2, 3, device="meta").add_(L.ones(2, 3)),
    "CPU + meta": lambda L: L.ones(2, 3) + L.ones(2, 3, device="meta"),
    "cat([meta, CPU])": lambda L: L.cat([L.ones(2, device="meta"), L.ones(2)]),
}


@pytest.mark.parametrize("name", META_CASES)
def test_mixing_with_meta_as_torch(name):
    assert _outcome(lambda: META_CASES[name](glasstorch)) == _outcome(lambda: META_CASES[name](torch))


def test_saved_indices_are_a_tuple_as_torchs():
    for lib in (glasstorch, torch):
        x = lib.randn(3, 4, requires_grad=True)
        saved = x.unsqueeze(0)[:, lib.tensor([0, 2])].grad_fn._saved_indices
        assert type(saved) is tuple and saved[0] is None and saved[1].tolist() == [0, 2]


# ---- CUDA: a GPU, or the stand-in (pytest --device fakecuda) ---------------------------------
needs_cuda = pytest.mark.skipif(not glasstorch.cuda.is_available(),
                                reason="needs glasstorch.cuda (a GPU, or pytest --device fakecuda)")
_EVERYWHERE = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
CUDA_CASES = {    # (call on a CPU tensor c, a CUDA tensor g) -> torch 2.13's message
    "c + g": (lambda c, g, F: c + g, _EVERYWHERE),
    "g + c": (lambda c, g, F: g + c, _EVERYWHERE),
    "c.add_(g)": (lambda c, g, F: c.add_(g), _EVERYWHERE),
    "where(mask, g, c)": (lambda c, g, F: glasstorch.where(g > 0, g, c), _EVERYWHERE),
    "g @ c.T": (lambda c, g, F: g @ c.T, "Expected all tensors to be on the same device, but got mat2 is on cpu, "
                "different from other tensors on cuda:0 (when checking argument in method wrapper_CUDA_mm)"),
    "F.linear(g, CPU weight and bias)": (
        lambda c, g, F: F.linear(g, glasstorch.ones(4, 3), glasstorch.ones(4)),
        "Expected all tensors to be on the same device, but got mat1 is on cuda:0, different from other tensors "
        "on cpu (when checking argument in method wrapper_CUDA_addmm)"),
    "cat([c, g])": (lambda c, g, F: glasstorch.cat([c, g]), "but got tensors is on cuda:0, different from other "
                    "tensors on cpu"),
    "c[CUDA index]": (lambda c, g, F: c[glasstorch.tensor([0, 1], device="cuda")],
                      "indices should be either on cpu or on the same device as the indexed tensor (cpu)"),
    # an unstructured CUDA kernel: torchgen names its wrapper wrapper_CUDA_<overload>_<op> (the overload empty)
    "g.index_select(0, CPU index)": (lambda c, g, F: g.index_select(0, glasstorch.tensor([0])),
                                     "Expected all tensors to be on the same device, but got index is on cpu, "
                                     "different from other tensors on cuda:0 (when checking argument in method "
                                     "wrapper_CUDA__index_select)"),
    "dot(g, c)": (lambda c, g, F: glasstorch.dot(g.reshape(-1), c.reshape(-1)),
                  "but got tensor is on cpu, different from other tensors on cuda:0 (when checking argument in method "
                  "wrapper_CUDA__dot)"),
    # an element-wise op whose CUDA wrapper checks devices (it is not declared device_check: NoCheck)
    "logaddexp(g, c)": (lambda c, g, F: glasstorch.logaddexp(g, c),
                        "but got other is on cpu, different from other tensors on cuda:0 (when checking argument in "
                        "method wrapper_CUDA_logaddexp)"),
}


@needs_cuda
@pytest.mark.parametrize("name", CUDA_CASES)
def test_mixing_cpu_and_cuda_raises_before_the_kernel(name):
    call, words = CUDA_CASES[name]
    c, g = glasstorch.ones(2, 3), glasstorch.ones(2, 3, device="cuda")
    before = c.tolist()
    with pytest.raises(RuntimeError) as e:
        call(c, g, glasstorch.nn.functional)
    assert words in str(e.value)
    assert c.tolist() == before          # (checked before the kernel: nothing written)


@needs_cuda
def test_cuda_takes_cpu_indices_and_cpu_scalars_as_torch():
    g = glasstorch.arange(6.0, device="cuda").reshape(2, 3)
    i = glasstorch.tensor([1, 0])
    assert g[i].device.type == "cuda" and g[i].cpu().tolist() == [[3.0, 4.0, 5.0], [0.0, 1.0, 2.0]]
    h = g.clone()
    h[i] = 7.0
    assert h.cpu().tolist() == [[7.0] * 3] * 2
    assert (g * glasstorch.tensor(2.0)).cpu().tolist() == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]


def test_the_cuda_wrapper_names_are_torchs():
    """glasstorch/_array/cuda_device_checks.py (which CUDA kernels check devices, and the name each says)
    is what torch's own code generator makes of torch's native_functions.yaml for glasstorch's ops: an
    op added since fails here until tools/gen_cuda_device_checks.py is run again."""
    pytest.importorskip("yaml")
    pytest.importorskip("torchgen")
    if not torch.__version__.startswith("2.13.0"):   # (the table is 2.13's; another torch's yaml differs)
        pytest.skip(f"the table was generated from torch 2.13.0's native_functions.yaml, this is {torch.__version__}")
    spec = importlib.util.spec_from_file_location("gen_cuda_device_checks", os.path.join(
        os.path.dirname(__file__), os.pardir, "tools", "gen_cuda_device_checks.py"))
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    with open(gen.TARGET) as f:
        assert f.read() == gen.render(), "run: python tools/gen_cuda_device_checks.py"
    from glasstorch._array import cuda_device_checks as table
    assert table.CHECKED["mm"] == "wrapper_CUDA_mm" and table.CHECKED["index_select"] == "wrapper_CUDA__index_select"
    assert table.CHECKED["addmm"] == "wrapper_CUDA_addmm" and "add.Tensor" in table.UNCHECKED


@needs_cuda
def test_kernels_that_built_host_arrays_run_on_cuda():
    """Kernels that made NumPy arrays beside device ones (a number operand as a NumPy 0-d, run starts,
    a host divisor): on CUDA as on the CPU. (The op registry covers the rest: tests/test_ops.py.)"""
    c = glasstorch.tensor([1, 1, 2, 3, 3, 1])
    for out, expected in zip(glasstorch.unique_consecutive(c.cuda(), return_inverse=True, return_counts=True),
                             glasstorch.unique_consecutive(c, return_inverse=True, return_counts=True)):
        assert out.device.type == "cuda" and out.cpu().tolist() == expected.tolist()
    x = glasstorch.arange(6.0).reshape(2, 3)
    assert glasstorch.copysign(x.cuda(), -1.0).cpu().tolist() == glasstorch.copysign(x, -1.0).tolist()
    assert (3 << c.cuda()).cpu().tolist() == (3 << c).tolist()


# ---- kernels allocate on their input's device -------------------------------------------------
def _stand_in():
    """tests/_fake_cupy.py as a plain module (not installed as ``cupy``: the process keeps its CPU answers)."""
    spec = importlib.util.spec_from_file_location("_fake_cupy_plain", os.path.join(os.path.dirname(__file__),
                                                                                   "_fake_cupy.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("make", ["cpu", "meta", "stand-in"])
def test_allocation_helpers_allocate_on_the_references_device(make):
    ref = {"cpu": lambda: np.ones((2, 3), np.float32), "meta": lambda: _array.meta.zeros((2, 3), np.float32),
           "stand-in": lambda: _stand_in().ones((2, 3), dtype=np.float32)}[make]()
    for out in (_array.zeros_like(ref, (4,)), _array.empty_like(ref, (4,)), _array.full_like(ref, 2, (4,), "int64"),
                _array.arange_like(ref, 4), _array.asarray_like(ref, 2.5)):
        assert type(out) is type(ref), out
    assert _array.zeros_like(ref, (4, 5)).shape == (4, 5) and _array.zeros_like(ref, (4,)).dtype == np.float32
    assert _array.full_like(ref, 2, (4,), "int64").dtype == np.int64
    assert _array.zeros_like(ref.T, (3, 2)).strides == (8, 4)        # row-major whatever ref's layout


def test_the_stand_in_refuses_host_memory_as_cupy_does():
    cp = _stand_in()
    a = cp.asarray([1.0, 2.0])
    with pytest.raises(TypeError, match="Implicit conversion to a NumPy array is not allowed"):
        np.asarray(a)
    with pytest.raises(TypeError, match="Unsupported type <class 'numpy.ndarray'>"):
        a + np.ones(2)
    with pytest.raises(TypeError, match="Unsupported type"):
        np.concatenate([a, np.ones(2)])
    assert isinstance(a + 1, cp.ndarray) and isinstance(np.sum(a), cp.ndarray) and np.sum(a).ndim == 0
    assert cp.asnumpy(a * 2).tolist() == [2.0, 4.0] and a.get().tolist() == [1.0, 2.0]
    a[np.array([0])] = np.array([5.0])                  # (host indices and values are copied over, as CuPy does)
    assert a.tolist() == [5.0, 2.0]
    assert not isinstance(a, np.ndarray)
