"""torch.set_num_threads / get_num_threads drive NumPy's BLAS threads; the default is one thread."""
import os
import subprocess
import sys

import pytest
import torch

import glasstorch as gt
from glasstorch._array import threads

threadpoolctl = pytest.importorskip("threadpoolctl")


def blas_threads():
    """What the BLAS libraries themselves report (threadpoolctl asks them, independently of us)."""
    return {pool["num_threads"] for pool in threadpoolctl.threadpool_info() if pool["user_api"] == "blas"}


@pytest.fixture
def restore_threads():
    before = gt.get_num_threads()
    yield
    gt.set_num_threads(before)


def fresh(code, **env):
    environ = {k: v for k, v in os.environ.items() if k not in threads._USER_CHOSE + ("GLASSTORCH_SEATBELT",)}
    environ.update(env)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environ, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_set_num_threads_sets_numpys_blas(restore_threads):
    for n in (2, 1, 3):
        gt.set_num_threads(n)
        assert gt.get_num_threads() == n and blas_threads() == {n}


def test_the_default_is_one_blas_thread_unless_the_environment_chose():
    code = ("import glasstorch as g, threadpoolctl; print(g.get_num_threads(), "
            "*[p['num_threads'] for p in threadpoolctl.threadpool_info() if p['user_api'] == 'blas'])")
    assert fresh(code) == ["1", "1"]
    two = str(min(2, os.cpu_count()))   # (OpenBLAS caps its threads at the number of cores)
    assert fresh(code, OMP_NUM_THREADS="2") == [two, two]          # OpenBLAS read it; glasstorch leaves it
    assert fresh(code, OPENBLAS_NUM_THREADS="2") == [two, two]


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True, None])
@pytest.mark.parametrize("name", ["set_num_threads", "set_num_interop_threads"])
def test_bad_counts_raise_as_torch(name, bad):
    with pytest.raises(RuntimeError) as theirs:
        getattr(torch, name)(bad)
    with pytest.raises(RuntimeError) as ours:
        getattr(gt, name)(bad)
    assert str(ours.value) == str(theirs.value)


def test_interop_threads_are_set_once(monkeypatch):
    monkeypatch.setattr(threads, "_interop", [None])
    assert gt.get_num_interop_threads() == (os.cpu_count() or 1)
    gt.set_num_interop_threads(3)
    assert gt.get_num_interop_threads() == 3
    with pytest.raises(RuntimeError, match="cannot set number of interop threads after parallel work has started"):
        gt.set_num_interop_threads(2)


def test_without_a_reachable_blas_set_warns_and_get_reports_the_request(monkeypatch):
    monkeypatch.setattr(threads, "_blas", [None])
    monkeypatch.setattr(threads, "_asked", [None])
    with pytest.warns(RuntimeWarning, match="pip install threadpoolctl"):
        gt.set_num_threads(4)
    assert gt.get_num_threads() == 4


def test_threadpoolctl_serves_when_numpys_openblas_is_not_found(monkeypatch, restore_threads):
    monkeypatch.setattr(threads, "_blas", [])
    monkeypatch.setattr(threads._OpenBLAS, "find", classmethod(lambda cls: None))
    gt.set_num_threads(2)
    assert isinstance(threads._blas[0], threads._Threadpoolctl)
    assert gt.get_num_threads() == 2 and blas_threads() == {2}


def test_openblas_packing_buffer_is_mapped_at_import_unless_turned_off():
    # (the speed itself is machine-specific, see threads.map_packing_buffer and bench/README.md;
    # this pins that the warm-up runs for NumPy's own OpenBLAS, and that its switch works)
    code = "import glasstorch._array as a, glasstorch._array.threads as t; print(a.blas_warmed, type(t._blas[0]).__name__)"
    warmed, blas = fresh(code)
    assert warmed == str(blas == "_OpenBLAS")
    assert fresh(code, GLASSTORCH_BLAS_WARMUP="0")[0] == "False"


def test_small_product_bound_only_for_openblas_small_kernels_on_one_thread(restore_threads, monkeypatch):
    blas = threads._controller()
    if isinstance(blas, threads._OpenBLAS):                # the core OpenBLAS itself reports (to threadpoolctl)
        same = [p for p in threadpoolctl.threadpool_info()
                if p.get("internal_api") == "openblas" and os.path.samefile(p["filepath"], blas.path)]
        assert all(p.get("architecture") == blas.core for p in same)
    gt.set_num_threads(1)
    for core, bound in (("SkylakeX", 10 ** 6), ("SapphireRapids", 10 ** 6), ("Haswell", 0), ("Zen", 0), (None, 0)):
        monkeypatch.setattr(threads, "_blas", [threads._OpenBLAS("lib", lambda n: None, lambda: 1, core)])
        assert threads.small_product_bound() == bound, core
    monkeypatch.setattr(threads, "_blas", [threads._OpenBLAS("lib", lambda n: None, lambda: 2, "SkylakeX")])
    assert threads.small_product_bound() == 0              # (the small kernels run on one thread)
    monkeypatch.setattr(threads, "_blas", [None])
    assert threads.small_product_bound() == 0
