"""torch.random against torch: fork_rng restores the generator's state; the names torch has."""
import pytest

torch = pytest.importorskip("torch")
import glasstorch  # noqa: E402


def test_fork_rng_restores_the_state():
    for lib in (torch, glasstorch):
        lib.random.manual_seed(3)
        first = lib.rand(3).tolist()
        lib.random.manual_seed(3)
        with lib.random.fork_rng():
            lib.rand(7)
        assert lib.rand(3).tolist() == first
        lib.random.manual_seed(3)
        with lib.random.fork_rng(enabled=False):
            lib.rand(7)
        assert lib.rand(3).tolist() != first
        with lib.random.fork_rng(device_type="meta"):
            pass
        assert lib.random.thread_safe_generator() is None


def test_names():
    assert sorted(glasstorch.random.__all__) == sorted(torch.random.__all__)
    for name in glasstorch.random.__all__:
        assert callable(getattr(glasstorch.random, name))
    assert glasstorch.random.initial_seed() == glasstorch.initial_seed()
    with pytest.raises(RuntimeError, match="torch has no module of `nodevice`"):
        with glasstorch.random.fork_rng(device_type="nodevice"):
            pass
