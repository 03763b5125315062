"""torch.cuda: GPUs through CuPy when it is installed and a device is present."""
from ._array import cuda_available, cuda_device_count


def is_available():
    return cuda_available()


def device_count():
    return cuda_device_count()


def current_device():
    return 0


def synchronize(device=None):
    if cuda_available():
        from ._array import namespace
        namespace("cuda").cuda.Device().synchronize()


def manual_seed(seed):
    pass


def manual_seed_all(seed):
    pass


def empty_cache():
    pass


def is_bf16_supported():
    return cuda_available()


def get_device_name(device=None):
    if not cuda_available():
        raise RuntimeError("No CUDA GPUs are available")
    from ._array import namespace
    return namespace("cuda").cuda.runtime.getDeviceProperties(0)["name"].decode()
