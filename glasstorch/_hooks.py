"""``RemovableHandle``: the handle every ``register_*_hook`` returns (``torch.utils.hooks.RemovableHandle``).

It lives here, in a module of the core that imports nothing of glasstorch, because the core
(tensor hooks, graph-node hooks) hands it out as well as ``nn`` and ``optim``; ``glasstorch.utils.hooks``
and ``glasstorch.nn.utils.hooks`` re-export it.
"""
import weakref
from collections import OrderedDict
from typing import Any

__all__ = ["RemovableHandle", "unserializable_hook"]


class RemovableHandle:
    r"""A handle which provides the capability to remove a hook.

    Every ``register_*_hook`` stores the hook in an ordered dict under a fresh
    integer id and returns one of these.  The handle only holds *weak*
    references to the dicts, so keeping a handle does not keep a module alive.

    Args:
        hooks_dict (dict): A dictionary of hooks, indexed by hook ``id``.
        extra_dict (Union[dict, List[dict]]): An additional dictionary or list of
            dictionaries whose keys will be deleted when the same keys are
            removed from ``hooks_dict`` (e.g. the "this hook takes kwargs" flags).

    Every hook registry in glasstorch hands these out (modules, optimizers, tensors, graph nodes),
    so ``isinstance(t.register_hook(f), torch.utils.hooks.RemovableHandle)`` holds, as in torch.

    Example::

        >>> import glasstorch.nn as nn
        >>> m = nn.Module()
        >>> handle = m.register_forward_hook(lambda mod, args, out: None)
        >>> len(m._forward_hooks)
        1
        >>> handle.remove()
        >>> len(m._forward_hooks)
        0
    """

    id: int
    next_id: int = 0  # one counter for all handles: ids order hooks globally

    def __init__(self, hooks_dict: Any, *, extra_dict: Any = None) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1

        self.extra_dict_ref: tuple = ()
        if isinstance(extra_dict, dict):
            self.extra_dict_ref = (weakref.ref(extra_dict),)
        elif isinstance(extra_dict, list):
            self.extra_dict_ref = tuple(weakref.ref(d) for d in extra_dict)

    def remove(self) -> None:
        hooks_dict = self.hooks_dict_ref()
        if hooks_dict is not None and self.id in hooks_dict:
            del hooks_dict[self.id]
        for ref in self.extra_dict_ref:
            extra_dict = ref()
            if extra_dict is not None and self.id in extra_dict:
                del extra_dict[self.id]

    # Weak references cannot be pickled: store the dicts themselves.
    def __getstate__(self):
        return (self.hooks_dict_ref(), self.id, tuple(ref() for ref in self.extra_dict_ref))

    def __setstate__(self, state) -> None:
        if state[0] is None:
            # the dict died before pickling: point at a fresh one (a dead handle)
            self.hooks_dict_ref = weakref.ref(OrderedDict())
        else:
            self.hooks_dict_ref = weakref.ref(state[0])
        self.id = state[1]
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)
        if len(state) < 3 or state[2] is None:
            self.extra_dict_ref = ()
        else:
            self.extra_dict_ref = tuple(weakref.ref(d) for d in state[2])

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, type: Any, value: Any, tb: Any) -> None:
        self.remove()


def unserializable_hook(f):
    """Mark a function as an unserializable hook (suppresses the warning on save)."""
    f.__torch_unserializable__ = True
    return f
