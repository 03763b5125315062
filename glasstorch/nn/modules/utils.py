"""torch.nn.modules.utils: the argument helpers layers share, which third-party layers import too
(``from torch.nn.modules.utils import _pair``), and the state-dict prefix helper DDP checkpoints need."""
import collections.abc
from itertools import repeat

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n, name="parse"):
    """A parser making an n-tuple of one value (``_pair(3)`` is ``(3, 3)``); an iterable is kept as a tuple."""
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))
    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n):
    """(1, 2) -> (2, 2, 1, 1) for n = 2: a per-dim padding in F.pad's last-dim-first order."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults):
    """An adaptive pool's output size with its ``None`` entries taken from the input's sizes."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]


def consume_prefix_in_state_dict_if_present(state_dict, prefix):
    """Strip ``prefix`` from the keys of ``state_dict`` in place (``module.`` from a DDP checkpoint),
    and from its ``_metadata`` keys, as torch does."""
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is not None:
        for key in list(metadata.keys()):
            # the metadata of the root module has key "" and of a submodule "sub.module": the root's
            # prefix, "module", has no dot after it
            if len(key) == 0:
                continue
            if key == prefix.replace(".", "") or key.startswith(prefix):
                metadata[key[len(prefix):]] = metadata.pop(key)
