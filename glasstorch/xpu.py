"""torch.xpu: Intel GPUs, which glasstorch does not have.

The queries answer as torch's build without XPU support does — ``is_available()`` False,
``device_count()`` 0, empty memory statistics — and the functions that need a device raise its
``AssertionError: Torch not compiled with XPU enabled``. Seeding is accepted and ignored, as torch
queues it for a device that never comes.
"""
from collections import OrderedDict

__all__ = ["current_device", "device_count", "empty_cache", "get_arch_list", "get_device_capability",
           "get_device_name", "get_device_properties", "get_gencode_flags", "get_rng_state", "get_rng_state_all",
           "init", "initial_seed", "is_available", "is_bf16_supported", "is_initialized", "is_tf32_supported",
           "manual_seed", "manual_seed_all", "max_memory_allocated", "max_memory_reserved", "mem_get_info",
           "memory_allocated", "memory_reserved", "memory_stats", "seed", "seed_all", "set_device",
           "set_rng_state", "synchronize"]


def _not_compiled(*args, **kwargs):
    raise AssertionError("Torch not compiled with XPU enabled")


def is_available():
    return False


def is_initialized():
    return False


def device_count():
    return 0


def is_bf16_supported(including_emulation=True):
    return False


def is_tf32_supported():
    return False


def get_arch_list():
    return []


def get_gencode_flags():
    return ""


def empty_cache():
    pass


def memory_stats(device=None):
    return OrderedDict()


def memory_allocated(device=None):
    return 0


max_memory_allocated = memory_reserved = max_memory_reserved = memory_allocated


def manual_seed(seed):
    pass


def manual_seed_all(seed):
    pass


def seed():
    pass


def seed_all():
    pass


def get_rng_state_all():
    return []


# Everything that needs an XPU device.
current_device = synchronize = init = set_device = get_device_name = get_device_properties = \
    get_device_capability = mem_get_info = get_rng_state = set_rng_state = initial_seed = _not_compiled
