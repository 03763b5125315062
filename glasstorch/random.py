"""torch.random: the default generator's seed and state, and ``fork_rng`` -- a region whose random
draws leave the global state as they found it (programs wrap an evaluation or an augmentation in it)."""
import contextlib

from .ops.creation import manual_seed, seed, initial_seed, get_rng_state, set_rng_state  # noqa: F401

__all__ = ["set_rng_state", "get_rng_state", "manual_seed", "seed", "initial_seed", "fork_rng",
           "thread_safe_generator"]


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type=None):
    """Restore the CPU generator's state (and the given accelerator devices', when there are any) on
    leaving. ``enabled=False`` does nothing; ``device_type="meta"`` neither, as in torch."""
    if device_type == "meta" or not enabled:
        yield
        return
    import importlib
    try:       # (torch's default: the current accelerator's type, else cuda -- the CPU's state is always kept)
        device_mod = importlib.import_module("glasstorch." + (device_type or "cuda"))
    except ImportError:
        raise RuntimeError(f"torch has no module of `{device_type}`, you should register a module by "
                           "`torch._register_device_module`.") from None
    if devices is None:
        devices = list(range(device_mod.device_count())) if hasattr(device_mod, "device_count") else []
    cpu_state = get_rng_state()
    device_states = [device_mod.get_rng_state(d) for d in devices]
    try:
        yield
    finally:
        set_rng_state(cpu_state)
        for d, state in zip(devices, device_states):
            device_mod.set_rng_state(state, d)


def thread_safe_generator():
    """The generator of the DataLoader worker thread this runs in; None elsewhere (the global one)."""
    from .utils.data import get_worker_info
    info = get_worker_info()
    return getattr(info, "generator", None) if info is not None else None
