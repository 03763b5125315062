"""Device discovery against torch's CPU-only build: torch.accelerator, torch.xpu, torch.mps, torch.cpu, torch.cuda.

The oracle is the torch wheel of the test machine, which has no accelerator; on a machine with a
GPU (glasstorch through CuPy) the answers differ from that wheel's, so those comparisons are skipped
and the GPU checks at the end run instead.
"""
import sys
import warnings

import pytest

torch = pytest.importorskip("torch")
import glasstorch  # noqa: E402

HAS_GPU = glasstorch.cuda.is_available()
cpu_only = pytest.mark.skipif(HAS_GPU or torch.cuda.is_available(), reason="compares with torch's CPU-only answers")


def _outcome(fn):
    """What a call does: ('ok', value) or (exception type, message); warnings are recorded too."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = fn()
            result = ("ok", repr(value) if not callable(value) else "callable")
        except Exception as e:  # noqa: BLE001 - we compare whatever torch raises
            result = (type(e).__name__, str(e))
    return result, [(w.category.__name__, str(w.message)) for w in caught]


ACCELERATOR_CALLS = {
    "is_available": lambda A: A.is_available(),
    "current_accelerator": lambda A: A.current_accelerator(),
    "current_accelerator(check_available=True)": lambda A: A.current_accelerator(check_available=True),
    "device_count": lambda A: A.device_count(),
    "current_device_index": lambda A: A.current_device_index(),
    "current_device_idx (deprecated)": lambda A: A.current_device_idx(),
    "set_device_index(0)": lambda A: A.set_device_index(0),
    "set_device_idx(0) (deprecated)": lambda A: A.set_device_idx(0),
    "set_device_index(-1)": lambda A: A.set_device_index(-1),
    "set_device_index('cuda:0')": lambda A: A.set_device_index("cuda:0"),
    "synchronize()": lambda A: A.synchronize(),
    "synchronize(0)": lambda A: A.synchronize(0),
    "device_index(0)": lambda A: A.device_index(0).__enter__(),
    "device_index(None)": lambda A: A.device_index(None).__enter__(),
    "get_device_capability": lambda A: A.get_device_capability(),
    "empty_cache": lambda A: A.empty_cache(),
    "memory_allocated": lambda A: A.memory_allocated(),
    "memory_reserved": lambda A: A.memory_reserved(),
    "memory_stats": lambda A: A.memory_stats(),
    "max_memory_allocated": lambda A: A.max_memory_allocated(),
    "reset_peak_memory_stats": lambda A: A.reset_peak_memory_stats(),
    "get_memory_info": lambda A: A.get_memory_info(),
    "current_stream": lambda A: A.current_stream(),
    "Graph()": lambda A: A.Graph(),
}


@cpu_only
@pytest.mark.parametrize("call", ACCELERATOR_CALLS)
def test_accelerator_answers_as_torch_without_an_accelerator(call):
    assert _outcome(lambda: ACCELERATOR_CALLS[call](glasstorch.accelerator)) == \
        _outcome(lambda: ACCELERATOR_CALLS[call](torch.accelerator))


def test_accelerator_namespace():
    assert set(glasstorch.accelerator.__all__) == set(torch.accelerator.__all__)
    for name in torch.accelerator.__all__:
        assert hasattr(glasstorch.accelerator, name), name


def test_official_examples_first_line():
    """``device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"``."""
    for lib in (glasstorch, torch):
        device = lib.accelerator.current_accelerator().type if lib.accelerator.is_available() else "cpu"
        x = lib.ones(2, device=device)
        assert x.device.type == device


XPU_CALLS = ["is_available", "is_initialized", "device_count", "is_bf16_supported", "is_tf32_supported",
             "get_arch_list", "get_gencode_flags", "empty_cache", "memory_allocated", "memory_reserved",
             "max_memory_allocated", "max_memory_reserved", "memory_stats", "seed", "seed_all", "get_rng_state_all",
             "current_device", "synchronize", "init", "get_device_name", "get_device_properties",
             "get_device_capability", "mem_get_info", "get_rng_state", "initial_seed"]


@pytest.mark.parametrize("name", XPU_CALLS)
def test_xpu_answers_as_torch_without_xpu(name):
    assert _outcome(getattr(glasstorch.xpu, name)) == _outcome(getattr(torch.xpu, name))


@pytest.mark.parametrize("call", ["set_device(0)", "manual_seed(0)", "manual_seed_all(1)"])
def test_xpu_calls_with_arguments(call):
    assert _outcome(lambda: eval("glasstorch.xpu." + call)) == _outcome(lambda: eval("torch.xpu." + call))


MPS_CALLS = {
    "is_available": lambda M: M.is_available(), "device_count": lambda M: M.device_count(),
    "manual_seed": lambda M: M.manual_seed(3), "seed": lambda M: M.seed(), "get_rng_state": lambda M: M.get_rng_state(),
    "synchronize": lambda M: M.synchronize(), "empty_cache": lambda M: M.empty_cache(),
    "set_per_process_memory_fraction": lambda M: M.set_per_process_memory_fraction(0.5),
    "current_allocated_memory": lambda M: M.current_allocated_memory(),
    "driver_allocated_memory": lambda M: M.driver_allocated_memory(),
    "recommended_max_memory": lambda M: M.recommended_max_memory(),
    "compile_shader": lambda M: M.compile_shader("kernel void f() {}"),
}


@pytest.mark.parametrize("call", MPS_CALLS)
def test_mps_answers_as_torch_without_mps(call):
    assert _outcome(lambda: MPS_CALLS[call](glasstorch.mps)) == _outcome(lambda: MPS_CALLS[call](torch.mps))


def test_backends_mps_and_cpu_module():
    assert glasstorch.backends.mps.is_available() is torch.backends.mps.is_available() is False
    for name in ("is_available", "is_initialized", "current_device", "device_count", "synchronize"):
        assert _outcome(getattr(glasstorch.cpu, name)) == _outcome(getattr(torch.cpu, name))
    assert glasstorch.cpu.set_device("cpu") is None


@cpu_only
@pytest.mark.parametrize("name", ["is_available", "device_count", "current_device", "synchronize",
                                  "memory_allocated", "memory_reserved", "is_initialized"])
def test_cuda_without_a_gpu_answers_as_torch(name):
    assert _outcome(getattr(glasstorch.cuda, name)) == _outcome(getattr(torch.cuda, name))


@pytest.mark.skipif(not HAS_GPU, reason="needs a GPU (CuPy)")
def test_accelerator_on_a_gpu():
    A = glasstorch.accelerator
    assert A.is_available() and A.current_accelerator() == glasstorch.device("cuda")
    assert A.current_accelerator().type == "cuda" and A.device_count() >= 1
    assert A.current_device_index() == 0
    with A.device_index(0):
        assert A.current_device_index() == 0
    A.set_device_index(0)
    A.synchronize()
    A.synchronize("cuda:0")
    x = glasstorch.ones(1000, device="cuda")
    if not getattr(sys.modules.get("cupy"), "IS_FAKE", False):   # (the stand-in has no device memory to count)
        assert A.memory_allocated() >= 4000 and A.memory_reserved() >= A.memory_allocated()
    free, total = A.get_memory_info()
    assert 0 < free <= total
    assert glasstorch.float32 in A.get_device_capability()["supported_dtypes"]
    with pytest.raises(ValueError, match="cpu doesn't match the current accelerator cuda"):
        A.set_device_index("cpu")
    del x
    A.empty_cache()


_FAKE_CUPY_CHECK = r"""
import numpy as np
import glasstorch
assert glasstorch.cuda.is_available() is False   # the first GPU question imports "CuPy" (the stand-in)
import cupy
from glasstorch.ops import _op, nn_conv, pointwise, reduction, special
f, a = cupy.ndarray, np.ones(2, "float32")
# a 0-d double array of the new type promotes as a 0-d array does (not as a Python number)
assert _op.promote_arrays(a, f(np.float64(2)))[1].dtype == _op.promote_arrays(a, np.array(2.0))[1].dtype
assert nn_conv._cat([f([1.]), f([2.])], 0).tolist() == [1., 2.]
for call, words in [(lambda: reduction._isin_kernel(f([True]), np.array([1])), "isin(): Bool"),
                    (lambda: pointwise._lerp_kernel(a, f(np.ones(2)), 0.5), "for `end` but got dtype double"),
                    (lambda: pointwise._masked_fill_kernel(a, np.ones(2, bool), f([1., 2.])), "0-dimensional value"),
                    (lambda: special._polynomial_kernel("x", None)(f([1j]), 2), "ComplexDouble")]:
    try:
        call()
    except (RuntimeError, NotImplementedError) as e:
        assert words in str(e), e
    else:
        raise AssertionError("the new array type was taken for a number")
print("recognised")
"""


def test_an_array_type_imported_after_glasstorch_is_recognised_by_every_op_module():
    """CuPy is imported at the first GPU question, after the op modules: its array type must reach
    every place that tells arrays from numbers (one tuple, ``_ops._ARRAY_TYPES``, grown by
    ``_recognise_array_type``). A stand-in CuPy (tests/fixtures/fake_cupy: its own ndarray type, no
    device) is imported the way the real one is, in a fresh process."""
    import os
    import subprocess
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(here, "fixtures", "fake_cupy"),
                                                       os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run([sys.executable, "-c", _FAKE_CUPY_CHECK], env=env, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0 and "recognised" in run.stdout, run.stderr[-2000:]


# ---- the one-shot GPU check (tools/gpu_check.py) and its parts, where there is no GPU ---------
def _run_tool(*command):
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return subprocess.run([sys.executable, *command], cwd=root, capture_output=True, text=True, timeout=300)


@pytest.mark.skipif(HAS_GPU, reason="checks what happens without a GPU")
def test_gpu_check_without_a_gpu_says_so_and_does_not_pass():
    import importlib.util
    import os
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools", "gpu_check.py")
    spec = importlib.util.spec_from_file_location("gpu_check", path)
    gpu_check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gpu_check)
    if gpu_check.find_gpu() is not None:
        pytest.skip("this machine has a GPU (nvidia-smi lists one)")
    run = _run_tool("tools/gpu_check.py", "--no-install")
    assert run.returncode == 2
    assert "NO GPU FOUND" in run.stdout and "CUDA is UNVERIFIED" in run.stdout and "passed" not in run.stdout
    assert gpu_check._pytest_line("x\n== 3 passed, 1 xfailed in 2.0s ==\n") == "3 passed, 1 xfailed in 2.0s"


@pytest.mark.skipif(HAS_GPU, reason="checks what happens without a GPU")
def test_cuda_test_run_and_gpu_benchmark_refuse_to_run_without_a_gpu():
    """``pytest --device cuda`` stops before any test (it would otherwise report every op failed, or
    worse, nothing run as a pass); the benchmark exits with status 2 and measures nothing."""
    run = _run_tool("-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_devices.py", "-k",
                    "accelerator_namespace", "--device", "cuda")
    assert run.returncode == 4 and "glasstorch.cuda.is_available() is False" in run.stdout + run.stderr
    run = _run_tool("bench/bench_workloads.py", "--device", "cuda", "--rows", "mlp", "--reps", "1")
    assert run.returncode == 2 and "no GPU" in run.stderr and "|" not in run.stdout


def test_gpu_check_fails_when_a_gpu_is_listed_but_cupy_finds_none(tmp_path):
    """The script's path past the GPU search, here: a stand-in ``nvidia-smi`` lists a GPU and the
    stand-in CuPy (tests/fixtures/fake_cupy) finds no device -- the summary says glasstorch does not
    see the GPU, that nothing was tested or measured, and the check fails."""
    import os
    import subprocess
    import sys
    fake_smi = tmp_path / "nvidia-smi"
    fake_smi.write_text("#!/bin/sh\necho 'GPU 0: Stand-in GPU (UUID: GPU-0)'\n")
    fake_smi.chmod(0o755)
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, PATH=f"{tmp_path}{os.pathsep}{os.environ['PATH']}",
               PYTHONPATH=os.pathsep.join([os.path.join(here, "fixtures", "fake_cupy"), os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run([sys.executable, "tools/gpu_check.py", "--no-install"], cwd=os.path.dirname(here), env=env,
                         capture_output=True, text=True, timeout=300)
    summary = run.stdout.split("== SUMMARY", 1)[-1]
    assert run.returncode == 1, run.stdout[-2000:] + run.stderr[-2000:]
    assert "GPU: GPU 0: Stand-in GPU" in summary and "glasstorch sees the GPU (CuPy): NO" in summary
    assert "CUDA tests: NOT RUN" in summary and "GPU benchmarks: NOT RUN" in summary
    assert "CUDA check: FAILED or incomplete" in summary
