"""The one recorder of aten op names the tests share: a TorchDispatchMode of either library (glasstorch
or torch) that writes down ``str(func)`` of every op it sees, forward and backward, and runs it.

    with recording(lib) as seen:           # seen.names: ["aten.mul.Tensor", "aten.add_.Tensor", ...]
        program(lib)

``keep`` (a predicate on the name) filters what is written down: torch's sequences also hold its
allocation and autograd-internal ops (``aten.clone`` for an in-place op's original self,
``aten.detach`` for a saved result, ``aten.ones_like`` for backward's seed), which tests compare
without.
"""
import importlib


def dispatch_mode_class(lib):
    """``lib.utils._python_dispatch.TorchDispatchMode``."""
    return importlib.import_module(lib.__name__ + ".utils._python_dispatch").TorchDispatchMode


def recorder(lib, keep=None):
    """A new recording TorchDispatchMode of ``lib`` (enter it with ``with``); its ``names`` list
    fills with the ops it sees that ``keep`` accepts (all without one)."""
    base = dispatch_mode_class(lib)

    class AtenLog(base):
        def __init__(self):
            super().__init__()
            self.names = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = str(func)
            if keep is None or keep(name):
                self.names.append(name)
            return func(*args, **(kwargs or {}))
    return AtenLog()


recording = recorder


def packet(name):
    """``"aten.add_.Tensor"`` -> ``"add_"``."""
    return name.split(".")[1]


def function_mode_names(lib, program):
    """The ``__name__`` of every function a TorchFunctionMode of ``lib`` sees while
    ``program(lib, x)`` runs, ``x`` being ``lib.ones(2)`` made before the mode is entered."""
    base = importlib.import_module(lib.__name__ + ".overrides").TorchFunctionMode
    seen = []

    class Log(base):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return func(*args, **(kwargs or {}))
    x = lib.ones(2)
    with Log():
        program(lib, x)
    return seen
