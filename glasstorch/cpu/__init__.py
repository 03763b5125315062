"""torch.cpu: the CPU's side of the device-agnostic API (``torch.cpu.amp``, ``synchronize``, ...).

It exists so that code written for any device (``getattr(torch, device_type).synchronize()``)
runs on the CPU: there is one CPU device, always available, and nothing to wait for.
"""

__all__ = ["is_available", "is_initialized", "synchronize", "current_device", "set_device", "device_count"]


def is_available():
    return True


def is_initialized():
    return True


def synchronize(device=None):
    """Waits for all kernels on the CPU to finish: there is nothing asynchronous to wait for."""


def current_device():
    return "cpu"


def set_device(device):
    """Sets the current device; on the CPU it does nothing (it exists for device-agnostic code)."""


def device_count():
    return 1


def __getattr__(name):
    if name == "amp":
        import importlib
        return importlib.import_module(".amp", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
