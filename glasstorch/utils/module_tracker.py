"""torch.utils.module_tracker: which modules are running now, in the forward and in the backward.

Built, as torch's is, on the global module hooks (``nn.modules.module.register_module_forward_pre_hook``
and ``register_module_forward_hook``) and on ``autograd.graph.register_multi_grad_hook``: a module's
backward starts when the gradients with respect to its outputs are computed, and ends when those
with respect to its inputs are. The end of a backward pass (torch queues an engine callback) comes
from the engine's events (``glasstorch._seam.add_engine_observer``).
"""
import logging
import weakref

from .._tensor import Tensor
from .._seam import add_engine_observer
from ..autograd.graph import register_multi_grad_hook
from ..nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook

__all__ = ["ModuleTracker"]

logger = logging.getLogger(__name__)


def _tensors_in(value):
    """The tensors in a module's inputs or outputs (nested tuples, lists and dicts)."""
    if isinstance(value, Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _tensors_in(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _tensors_in(v)


class ModuleTracker:
    """A context manager that tracks the ``nn.Module`` hierarchy during execution.

    ``parents`` is the set of the fully qualified names of the modules running now (``"Global"``
    always among them: ``{"Global", "Sequential", "Sequential.0"}``); ``is_bw`` says whether a
    backward pass is running. As in torch, ``parents`` is set back to ``{"Global"}`` when a backward
    pass in which a module's backward started ends.
    """

    def __init__(self):
        self.parents = {"Global"}
        self._known_modules = weakref.WeakKeyDictionary()
        self._seen_modules = weakref.WeakSet()
        self._has_callback = False
        self._backwards = 0      # backward passes running (in the thread that entered the tracker)
        self._hooks = []

    @property
    def is_bw(self):
        """Whether a backward pass is running now."""
        return self._backwards > 0

    # -- the engine's events (torch: the graph task id, and a callback queued on the engine) ----------
    def backward_started(self, roots):
        self._backwards += 1

    def backward_finished(self, roots):
        self._backwards -= 1
        if self._has_callback and not self._backwards:
            self.parents = {"Global"}
            self._has_callback = False

    # -- names ---------------------------------------------------------------------------------------
    def _get_mod_name(self, mod):
        if mod not in self._known_modules:
            self._known_modules[mod] = type(mod).__name__
        mod_name = self._known_modules[mod]
        if mod not in self._seen_modules:
            for name, submod in mod.named_children():
                self._known_modules[submod] = f"{mod_name}.{name}"
                self._get_mod_name(submod)
            self._seen_modules.add(mod)
        return mod_name

    def _get_append_fn(self, name, is_bw):
        def fn(*args):
            if is_bw:
                self._has_callback = True
            if name in self.parents:
                logger.info("The module hierarchy tracking seems to be broken as this Module was already entered. "
                            "%s during %s", name, "backward" if is_bw else "forward")
            self.parents.add(name)
        return fn

    def _get_pop_fn(self, name, is_bw):
        def fn(*args):
            if name in self.parents:
                self.parents.remove(name)
            else:
                logger.info("The Module hierarchy tracking is confused as we're exiting a Module that was never "
                            "entered. %s during %s", name, "backward" if is_bw else "forward")
        return fn

    # -- the module hooks ----------------------------------------------------------------------------
    def _fw_pre_hook(self, mod, input):
        name = self._get_mod_name(mod)
        self._get_append_fn(name, False)()
        tensors = [a for a in _tensors_in(input) if a._requires_grad]
        if tensors:
            self._hooks.append(register_multi_grad_hook(tensors, self._get_pop_fn(name, True)))

    def _fw_post_hook(self, mod, input, output):
        name = self._get_mod_name(mod)
        self._get_pop_fn(name, False)()
        tensors = [a for a in _tensors_in(output) if a._requires_grad]
        if tensors:
            self._hooks.append(register_multi_grad_hook(tensors, self._get_append_fn(name, True)))

    def __enter__(self):
        self._fw_pre_handle = register_module_forward_pre_hook(self._fw_pre_hook)
        self._fw_post_handle = register_module_forward_hook(self._fw_post_hook)
        self._remove_observer = add_engine_observer(self)
        return self

    def __exit__(self, *args):
        self._fw_pre_handle.remove()
        self._fw_post_handle.remove()
        self._remove_observer()
        for hook in self._hooks:
            hook.remove()
        self._hooks.clear()
