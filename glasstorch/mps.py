"""torch.mps: Apple's Metal GPUs, which glasstorch does not have (see also ``torch.backends.mps``).

As torch on a machine without MPS: ``is_available()`` False, ``device_count()`` 0,
``manual_seed`` accepted, and the functions that need the device raise its RuntimeError
``Cannot execute <function>() without MPS backend.``
"""

__all__ = ["compile_shader", "device_count", "get_rng_state", "manual_seed", "seed", "set_rng_state",
           "synchronize", "empty_cache", "set_per_process_memory_fraction", "current_allocated_memory",
           "driver_allocated_memory", "recommended_max_memory", "is_available"]


def _without_mps(native_name):
    def unavailable(*args, **kwargs):
        raise RuntimeError(f"Cannot execute {native_name}() without MPS backend.")
    return unavailable


def is_available():
    return False


def device_count():
    return 0


def manual_seed(seed):
    pass


def compile_shader(source):
    raise RuntimeError("MPS is not available")


get_rng_state = _without_mps("getDefaultGenerator")
set_rng_state = _without_mps("getDefaultGenerator")
seed = _without_mps("getDefaultGenerator")
synchronize = _without_mps("deviceSynchronize")
empty_cache = _without_mps("emptyCache")
set_per_process_memory_fraction = _without_mps("setMemoryFraction")
current_allocated_memory = _without_mps("getCurrentAllocatedMemory")
driver_allocated_memory = _without_mps("getDriverAllocatedMemory")
recommended_max_memory = _without_mps("getRecommendedMaxMemory")
