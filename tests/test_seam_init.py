"""What a TorchFunctionMode sees while nn modules are built and nn.init runs, against torch: the
init functions torch routes through ``handle_torch_function`` (uniform_, normal_, constant_,
kaiming_uniform_) are seen as one call each (what they do inside is not), the others as the Tensor
calls they make, in torch's order.

Left out of the comparison (glasstorch differs, README "Where glasstorch differs"): attribute
accessors (``grad_fn.__get__``, ``shape.__get__``...: torch's Parameter reads some that glasstorch's
does not), and ``Tensor.dim``, ``Tensor.size``, ``Tensor.is_contiguous``, which glasstorch does not
route through the seam (they run inside most ops; a mode sees the ops)."""
import pytest
import torch

import glasstorch
from aten_log import function_mode_names

_NOT_SEEN_IN_GLASSTORCH = {"dim", "size", "is_contiguous"}

BUILDS = {
    "linear": lambda lib, x: lib.nn.Linear(3, 4),
    "linear_no_bias": lambda lib, x: lib.nn.Linear(3, 4, bias=False),
    "conv2d": lambda lib, x: lib.nn.Conv2d(1, 2, 3),
    "layer_norm": lambda lib, x: lib.nn.LayerNorm(4),
    "embedding": lambda lib, x: lib.nn.Embedding(5, 3),
    "embedding_padding": lambda lib, x: lib.nn.Embedding(5, 3, padding_idx=1),
    "batch_norm2d": lambda lib, x: lib.nn.BatchNorm2d(3),
    "lstm": lambda lib, x: lib.nn.LSTM(3, 4),
    "gru_2_layers": lambda lib, x: lib.nn.GRU(2, 3, num_layers=2),
    "init_uniform": lambda lib, x: lib.nn.init.uniform_(lib.empty(3, 4), -1, 1),
    "init_normal": lambda lib, x: lib.nn.init.normal_(lib.empty(3, 4)),
    "init_constant": lambda lib, x: lib.nn.init.constant_(lib.empty(3, 4), 0.5),
    "init_kaiming_uniform": lambda lib, x: lib.nn.init.kaiming_uniform_(lib.empty(3, 4)),
    "init_xavier_uniform": lambda lib, x: lib.nn.init.xavier_uniform_(lib.empty(3, 4)),
    "init_zeros": lambda lib, x: lib.nn.init.zeros_(lib.empty(3, 4)),
}


def _seen(lib, build):
    return [n for n in function_mode_names(lib, build)
            if n not in ("__get__", "__set__") and n not in _NOT_SEEN_IN_GLASSTORCH]


@pytest.mark.parametrize("name", sorted(BUILDS))
def test_a_function_mode_sees_torch_calls_while_modules_are_built(name):
    ours, theirs = (_seen(lib, BUILDS[name]) for lib in (glasstorch, torch))
    assert ours == theirs
    assert ours     # (something is seen: the comparison cannot pass on two empty lists)


def test_init_functions_hand_their_arguments_by_name_as_torch():
    """``handle_torch_function(uniform_, (tensor,), tensor=tensor, a=a, b=b, generator=generator)``:
    the mode gets no positional argument, all of them by keyword."""
    def calls(lib):
        seen = []

        class Log(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                seen.append((func.__name__, len(args), sorted(kwargs or {})))
                return func(*args, **(kwargs or {}))
        t = lib.empty(3, 4)
        with Log():
            lib.nn.init.uniform_(t, -1, 1)
            lib.nn.init.kaiming_uniform_(t, a=2)
        return seen
    assert calls(glasstorch) == calls(torch)
