"""torch.backends: the flags the books and common programs read and write, with torch's names and defaults."""
import warnings

import pytest

import glasstorch
from glasstorch import backends

torch = pytest.importorskip("torch")

# (submodule, attribute) that programs write or read: the books' set_seed, d2l's device probes, issue 8's list
FLAGS = [("cudnn", "enabled"), ("cudnn", "benchmark"), ("cudnn", "deterministic"), ("cudnn", "allow_tf32"),
         ("cudnn", "benchmark_limit"), ("mkldnn", "enabled"), ("mkldnn", "deterministic"),
         ("opt_einsum", "enabled"), ("opt_einsum", "strategy")]
PROBES = [("cudnn", "is_available"), ("mps", "is_available"), ("mps", "is_built"), ("mkl", "is_available"),
          ("mkldnn", "is_available"), ("openmp", "is_available"), ("opt_einsum", "is_available"),
          ("cuda", "is_built"), ("cuda", "is_flash_attention_available"), ("cpu", "get_cpu_capability")]


@pytest.mark.parametrize("sub,name", FLAGS)
def test_flags_have_torchs_defaults(sub, name):
    assert getattr(getattr(backends, sub), name) == getattr(getattr(torch.backends, sub), name)


@pytest.mark.parametrize("sub,name", PROBES)
def test_probes_answer_with_torchs_types(sub, name):
    ours, theirs = getattr(getattr(backends, sub), name)(), getattr(getattr(torch.backends, sub), name)()
    assert type(ours) is type(theirs)
    if sub in ("cudnn", "mps", "cuda"):   # no accelerator in the CPU build the tests use: both say False
        assert ours == theirs


def test_cuda_matmul_flags():
    for name in ("allow_tf32", "allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction"):
        assert getattr(backends.cuda.matmul, name) == getattr(torch.backends.cuda.matmul, name), name


def test_godoys_set_seed_writes_the_cudnn_flags():
    def set_seed(seed=42):                       # Deep Learning with PyTorch Step-by-Step, StepByStep.set_seed
        backends.cudnn.deterministic = True
        backends.cudnn.benchmark = False
        glasstorch.manual_seed(seed)
    try:
        set_seed()
        assert glasstorch.backends.cudnn.deterministic is True and glasstorch.backends.cudnn.benchmark is False
    finally:
        backends.cudnn.deterministic = False


def test_flags_context_managers_set_and_restore():
    with backends.cudnn.flags(enabled=False, deterministic=True):
        assert backends.cudnn.enabled is False and backends.cudnn.deterministic is True
    assert backends.cudnn.enabled is True and backends.cudnn.deterministic is False
    with pytest.raises(ValueError):
        with backends.mkldnn.flags(enabled=False):
            assert backends.mkldnn.enabled is False
            raise ValueError
    assert backends.mkldnn.enabled is True
    with backends.mkl.verbose(backends.mkl.VERBOSE_ON), backends.mkldnn.verbose(backends.mkldnn.VERBOSE_ON_CREATION):
        pass
    assert (backends.mkl.VERBOSE_ON, backends.mkldnn.VERBOSE_ON_CREATION) == \
        (torch.backends.mkl.VERBOSE_ON, torch.backends.mkldnn.VERBOSE_ON_CREATION)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with backends.cuda.sdp_kernel(enable_flash=False, enable_math=True):
            assert not backends.cuda.flash_sdp_enabled() and backends.cuda.math_sdp_enabled()
    assert backends.cuda.flash_sdp_enabled()
    assert any(issubclass(w.category, FutureWarning) and "sdp_kernel()` is deprecated" in str(w.message)
               for w in caught)


def test_the_libraries_glasstorch_does_not_use_say_so_where_torchs_cpu_build_says_true():
    """A deliberate difference (docs/binding.md, "torch.backends"): torch's x86-64 CPU build has MKL,
    oneDNN and OpenMP and says True; glasstorch computes with NumPy and says False, so a program that picks
    a code path by these probes takes the one that does not assume them."""
    for sub in ("mkl", "mkldnn", "openmp"):
        ours, theirs = getattr(backends, sub).is_available(), getattr(torch.backends, sub).is_available()
        assert ours is False and type(theirs) is bool, sub
