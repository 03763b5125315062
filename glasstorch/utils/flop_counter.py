"""torch.utils.flop_counter: count the floating-point operations a block of code runs.

    >>> import glasstorch as torch
    >>> from glasstorch.utils.flop_counter import FlopCounterMode
    >>> model = torch.nn.Linear(4, 3)
    >>> with FlopCounterMode(display=False) as counter:
    ...     model(torch.randn(2, 4)).sum().backward()
    >>> counter.get_total_flops()        # forward addmm 2*2*4*3, backward mm (weight) 2*3*2*4
    96

It stands on the seam's op level: a TorchDispatchMode (``glasstorch/utils/_python_dispatch.py``) that
sees every primitive op, ``aten.mm.default`` and the like, of the forward and of the backward (while a
dispatch mode is on, the engine runs the derivative formulas as ops). The ops with a formula here
(matrix products, convolutions, attention) are counted, as torch counts them -- the same formulas,
copied from torch's -- and attributed to the modules running (a :class:`ModuleTracker`):
``get_flop_counts()`` gives ``{"Global": {aten.mm: 600, ...}, "Sequential": {...}, "Sequential.0":
{...}}``.
"""
import warnings
from collections import defaultdict
from functools import wraps
from math import prod

from .._tensor import Tensor
from .._ops import aten
from ._python_dispatch import TorchDispatchMode
from ._pytree import tree_map
from .module_tracker import ModuleTracker

__all__ = ["FlopCounterMode", "register_flop_formula"]


def get_shape(i):
    return i.shape if isinstance(i, Tensor) else i


def shape_wrapper(f):
    """A formula on shapes, called with the op's tensors: their shapes are passed instead."""
    @wraps(f)
    def nf(*args, out_val=None, **kwargs):
        args, kwargs, out_shape = tree_map(get_shape, (args, kwargs, out_val))
        return f(*args, out_shape=out_shape, **kwargs)
    return nf


# Formulas by op name, so that an op declared later (each family moves to `defop` in its turn) is
# counted as soon as it exists; `flop_registry` holds the packets that exist now.
_formulas_by_name = {}
flop_registry = {}


def register_flop_formula(targets, get_raw=False):
    """Decorator: ``formula(*shapes, out_shape=..., **kwargs) -> int`` counts the flops of the ops
    ``targets`` (an op packet such as ``torch.ops.aten.mm``, its name, or a list of them); with
    ``get_raw`` it gets the tensors themselves."""
    def register_fun(flop_formula):
        if not get_raw:
            flop_formula = shape_wrapper(flop_formula)
        for target in targets if isinstance(targets, (list, tuple)) else (targets,):
            name = target if isinstance(target, str) else getattr(target, "__name__", None)
            if name is None or not isinstance(target, str) and not hasattr(target, "overloads"):
                raise ValueError(f"register_flop_formula(targets): expected each target to be "
                                 f"OpOverloadPacket (i.e. torch.ops.mylib.foo), got {target} which is of type "
                                 f"{type(target)}")
            if name in _formulas_by_name:
                raise RuntimeError(f"duplicate registrations for {target}")
            _formulas_by_name[name] = flop_formula
            packet = getattr(aten, name, None) if isinstance(target, str) else target
            if packet is not None:
                flop_registry[packet] = flop_formula
        return flop_formula
    return register_fun


def _registry():
    """The formulas by op packet, for the packets that exist now."""
    for name, formula in _formulas_by_name.items():
        packet = getattr(aten, name, None)
        if packet is not None and packet not in flop_registry:
            flop_registry[packet] = formula
    return flop_registry


# ---- the formulas (torch's) --------------------------------------------------------------------------
@register_flop_formula("mm")
def mm_flop(a_shape, b_shape, *args, out_shape=None, **kwargs):
    """Count flops for matmul."""
    m, k = a_shape
    k2, n = b_shape
    if k != k2:
        raise AssertionError(f"matmul: inner dimensions must match (k == k2), got {k} and {k2}")
    return m * n * 2 * k


@register_flop_formula("addmm")
def addmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs):
    """Count flops for addmm."""
    return mm_flop(a_shape, b_shape)


@register_flop_formula("bmm")
def bmm_flop(a_shape, b_shape, out_shape=None, **kwargs):
    """Count flops for the bmm operation."""
    b, m, k = a_shape
    b2, k2, n = b_shape
    if b != b2:
        raise AssertionError(f"bmm: batch dimensions must match (b == b2), got {b} and {b2}")
    if k != k2:
        raise AssertionError(f"bmm: inner dimensions must match (k == k2), got {k} and {k2}")
    return b * m * n * 2 * k


@register_flop_formula("baddbmm")
def baddbmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs):
    """Count flops for the baddbmm operation."""
    return bmm_flop(a_shape, b_shape)


def conv_flop_count(x_shape, w_shape, out_shape, transposed=False):
    """Count flops for convolution: for each point of the output (of the input, for a transposed
    convolution), the filter times the input and output channels, times the batch. Only the
    multiplications (and their additions) are counted, not the bias."""
    batch_size = x_shape[0]
    conv_shape = (x_shape if transposed else out_shape)[2:]
    c_out, c_in, *filter_size = w_shape
    return prod(conv_shape) * prod(filter_size) * batch_size * c_out * c_in * 2


@register_flop_formula(["convolution", "_convolution"])
def conv_flop(x_shape, w_shape, _bias, _stride, _padding, _dilation, transposed, *args, out_shape=None, **kwargs):
    """Count flops for convolution."""
    return conv_flop_count(x_shape, w_shape, out_shape, transposed=transposed)


@register_flop_formula("convolution_backward")
def conv_backward_flop(grad_out_shape, x_shape, w_shape, _bias, _stride, _padding, _dilation, transposed,
                       _output_padding, _groups, output_mask, out_shape, **kwargs):
    """Count flops for the backward of a convolution: the input's gradient is a transposed
    convolution of the output's gradient with the weight, the weight's a convolution of the input
    with the output's gradient."""
    def t(shape):
        return [shape[1], shape[0]] + list(shape[2:])
    flop_count = 0
    if output_mask[0]:
        grad_input_shape = get_shape(out_shape[0])
        flop_count += conv_flop_count(grad_out_shape, w_shape, grad_input_shape, not transposed)
    if output_mask[1]:
        grad_weight_shape = get_shape(out_shape[1])
        if transposed:
            flop_count += conv_flop_count(t(grad_out_shape), t(x_shape), t(grad_weight_shape), transposed=False)
        else:
            flop_count += conv_flop_count(t(x_shape), t(grad_out_shape), t(grad_weight_shape), transposed=False)
    return flop_count


def sdpa_flop_count(query_shape, key_shape, value_shape):
    """Count flops for self-attention (grouped-query attention too: fewer key/value heads)."""
    b, h_q, s_q, d_q = query_shape
    _b2, h_kv, s_k, _d2 = key_shape
    _b3, _h3, _s3, d_v = value_shape
    total_flops = bmm_flop((b * h_q, s_q, d_q), (b * h_q, d_q, s_k))
    total_flops += bmm_flop((b * h_q, s_q, s_k), (b * h_q, s_k, d_v))
    return total_flops


@register_flop_formula(["_scaled_dot_product_efficient_attention", "_scaled_dot_product_flash_attention"])
def sdpa_flop(query_shape, key_shape, value_shape, *args, out_shape=None, **kwargs):
    """Count flops for self-attention."""
    return sdpa_flop_count(query_shape, key_shape, value_shape)


def sdpa_backward_flop_count(grad_out_shape, query_shape, key_shape, value_shape):
    b, h_q, s_q, d_q = query_shape
    _b2, h_kv, s_k, _d2 = key_shape
    _b3, _h3, _s3, d_v = value_shape
    total_flops = bmm_flop((b * h_q, s_q, d_q), (b * h_q, d_q, s_k))        # the scores, recomputed
    total_flops += bmm_flop((b * h_q, s_q, d_v), (b * h_q, d_v, s_k))       # through scores @ v
    total_flops += bmm_flop((b * h_q, s_k, s_q), (b * h_q, s_q, d_v))
    total_flops += bmm_flop((b * h_q, s_q, s_k), (b * h_q, s_k, d_q))       # through q @ k
    total_flops += bmm_flop((b * h_q, d_q, s_q), (b * h_q, s_q, s_k))
    return total_flops


@register_flop_formula(["_scaled_dot_product_efficient_attention_backward",
                        "_scaled_dot_product_flash_attention_backward"])
def sdpa_backward_flop(grad_out_shape, query_shape, key_shape, value_shape, *args, out_shape=None, **kwargs):
    """Count flops for self-attention backward."""
    return sdpa_backward_flop_count(grad_out_shape, query_shape, key_shape, value_shape)


# ---- the table -----------------------------------------------------------------------------------------
suffixes = ["", "K", "M", "B", "T"]


def get_suffix_str(number):
    """The suffix for a number of flops (1.01B shows as 1001M, not 1.001B)."""
    index = max(0, min(len(suffixes) - 1, (len(str(number)) - 2) // 3))
    return suffixes[index]


def convert_num_with_suffix(number, suffix):
    index = suffixes.index(suffix)
    return f"{number / 1000 ** index:.3f}" + suffixes[index]


def convert_to_percent_str(num, denom):
    if denom == 0:
        return "0%"
    return f"{num / denom:.2%}"


def _table(rows, header):
    """A plain-text table, first column left-aligned, the others right-aligned (torch uses
    ``tabulate``; glasstorch adds no dependency for this)."""
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]

    def line(r):
        return "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
    return "\n".join([line(header), "  ".join("-" * w for w in widths)] + [line(r) for r in rows])


class FlopCounterMode:
    """A context manager that counts the flops run inside it, by module (torch's API).

    Args:
        mods: not needed (torch's deprecated argument; a warning says so).
        depth: how deep in the module hierarchy ``get_table()`` goes.
        display: print the table when the block ends.
        custom_mapping: ``{op packet: formula}`` to count more ops, or count them differently.

    ``get_total_flops()``, ``get_flop_counts()`` (``{module name: {op packet: flops}}``, with
    ``"Global"`` for everything), ``get_table(depth)``.
    """

    def __init__(self, mods=None, depth=2, display=True, custom_mapping=None):
        self.flop_counts = defaultdict(lambda: defaultdict(int))
        self.depth = depth
        self.display = display
        self.mode = None
        if custom_mapping is None:
            custom_mapping = {}
        if mods is not None:
            warnings.warn("mods argument is not needed anymore, you can stop passing it", stacklevel=2)
        self.flop_registry = {**_registry(),
                              **{k: v if getattr(v, "_get_raw", False) else shape_wrapper(v)
                                 for k, v in custom_mapping.items()}}
        self.mod_tracker = ModuleTracker()

    def get_total_flops(self):
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self):
        """The flop counts: ``{module name: {op packet: flops}}``."""
        return {k: dict(v) for k, v in self.flop_counts.items()}

    def get_table(self, depth=None):
        if depth is None:
            depth = self.depth
        if depth is None:
            depth = 999999
        header = ["Module", "FLOP", "% Total"]
        values = []
        global_flops = self.get_total_flops()
        global_suffix = get_suffix_str(global_flops)
        is_global_subsumed = False

        def process_mod(mod_name, depth):
            nonlocal is_global_subsumed
            total_flops = sum(self.flop_counts[mod_name].values())
            is_global_subsumed |= total_flops >= global_flops
            padding = " " * depth
            rows = [[padding + mod_name, convert_num_with_suffix(total_flops, global_suffix),
                     convert_to_percent_str(total_flops, global_flops)]]
            for k, v in self.flop_counts[mod_name].items():
                rows.append([padding + " - " + str(k), convert_num_with_suffix(v, global_suffix),
                             convert_to_percent_str(v, global_flops)])
            return rows

        for mod in sorted(self.flop_counts.keys()):
            if mod == "Global":
                continue
            mod_depth = mod.count(".") + 1
            if mod_depth > depth:
                continue
            values.extend(process_mod(mod, mod_depth - 1))
        # "Global" only when some flops are outside every module
        if "Global" in self.flop_counts and not is_global_subsumed:
            for value in values:
                value[0] = " " + value[0]
            values = process_mod("Global", 0) + values
        if not values:
            values = [["Global", "0", "0%"]]
        return _table(values, header)

    # not reentrant, as torch's
    def __enter__(self):
        self.flop_counts.clear()
        self.mod_tracker.__enter__()
        self.mode = _FlopCounterMode(self)
        self.mode.__enter__()
        return self

    def __exit__(self, *args):
        if self.mode is None:
            raise AssertionError("Internal error: FlopCounter.__exit__ called but mode is None")
        b = self.mode.__exit__(*args)
        self.mode = None
        self.mod_tracker.__exit__()
        if self.display:
            print(self.get_table(self.depth))
        return b

    def _count_flops(self, func_packet, out, args, kwargs):
        if func_packet in self.flop_registry:
            flop_count = self.flop_registry[func_packet](*args, **kwargs, out_val=out)
            for par in set(self.mod_tracker.parents):
                self.flop_counts[par][func_packet] += flop_count
        return out


class _FlopCounterMode(TorchDispatchMode):
    def __init__(self, counter):
        super().__init__()
        self.counter = counter

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs if kwargs else {}
        out = func(*args, **kwargs)
        return self.counter._count_flops(func._overloadpacket, out, args, kwargs)
