"""glasstorch: PyTorch's autograd and training stack, in readable Python over NumPy.

    import glasstorch as torch

The top level mirrors torch's: dtypes, tensor creation, every op as a function (and as a Tensor
method, attached where the op is defined in ``glasstorch/ops``), grad modes, and the subpackages
``autograd``, ``nn``, ``optim``, ``utils``, ``linalg``.

To run code that says ``import torch`` unchanged: ``python -m glasstorch run script.py``, or
``glasstorch.as_torch()`` first (docs/binding.md).
"""
from . import version  # noqa: F401
from .torch_version import __version__  # "2.13.0+glasstorch.0.1.0": the torch API level, then ours
from ._binding import as_torch, load_ipython_extension  # noqa: F401

from . import _dtype
from ._dtype import (dtype, float16, half, bfloat16, float32, float, float64, double, complex64, cfloat,
                     complex128, cdouble, uint8, int8, int16, short, int32, int, int64, long, bool,
                     get_default_dtype, set_default_dtype, promote_types, can_cast, finfo, iinfo)
from ._tensor import Tensor, Size, device
from ._tensor_str import set_printoptions
from . import autograd
from .autograd import (no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled,
                       is_inference_mode_enabled, is_anomaly_enabled)
from . import ops  # noqa: F401  (the op families; torch.ops.aten is ops.aten)
from .ops import pointwise as _pw, reduction as _red, shape as _shape, joining as _join, indexing as _idx, \
    linalg as _la, creation as _cr, complex as _cx, special as _sp, \
    elementwise as _ew, scan as _scan, distance as _dist, transformations as _tf, weight_norm as _wn, \
    spectral as _spec, pointwise_extra as _pwx, shape_extra as _shx, statistics as _stats
from .ops.creation import default_generator, range_ as range  # noqa: F401
from .ops.creation import _standard_gamma, _standard_gamma_grad, _sample_dirichlet, _dirichlet_grad  # noqa: F401
#   (torch's private draws and their gradients, which distributions use)
from ._prims_common.wrappers import out_wrapper as _out_wrapper, OUT_RULES as _out_rules
from ._seam import body_of as _body_of

# Each op family lists (in its __all__) the functions torch has at its top level; the others are
# Tensor methods only (x.view) or torch.linalg's. Those are put here, as torch has them, the ones
# torch gives `out=` with its rules (out_wrapper: torch.exp(x, out=y), where x.exp(out=y) is refused).
_FAMILY_NAMES = []
for _m in (_pw, _red, _shape, _join, _idx, _la, _cr, _cx, _sp, _ew, _scan, _dist, _tf, _wn, _spec, _pwx, _shx, _stats):
    for _name in _m.__all__:
        if _name not in globals():
            _fn = getattr(_m, _name)
            _code = _body_of(_fn).__code__ if _name in _out_rules else None
            if _code and "out" not in _code.co_varnames[:_code.co_argcount + _code.co_kwonlyargcount]:
                _fn = _out_wrapper(_fn, name=_name)
            globals()[_name] = _fn
            _FAMILY_NAMES.append(_name)
del _m, _name, _fn, _code, _body_of
_weight_norm = _wn._weight_norm   # (torch._weight_norm: what nn.utils' weight norms call)
from ._array.threads import (set_num_threads, get_num_threads, set_num_interop_threads,  # noqa: E402,F401
                             get_num_interop_threads)


def is_tensor(obj):
    return isinstance(obj, Tensor)


def is_floating_point(input):
    return input.is_floating_point()


def is_complex(input):
    return input.is_complex()


def numel(input):
    return input.numel()


def result_type(tensor1, tensor2):
    from .ops._op import result_dtype
    return result_dtype(tensor1, tensor2)


def use_deterministic_algorithms(mode, *, warn_only=False):
    pass


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,
            disable=False):
    """torch.compile: capture ``model`` (a function or an nn.Module) into a graph on its first call,
    guard what the capture assumed, and run the graph as generated array code from then on, its
    gradient through one ``CompiledFunctionBackward`` node. See ``glasstorch/_dynamo`` and
    ``docs/compile.md``."""
    from ._dynamo.eval_frame import compile as _compile
    return _compile(model, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode, options=options,
                    disable=disable)


def typename(obj):
    return obj.type() if isinstance(obj, Tensor) else type(obj).__name__


__all__ = sorted({
    "dtype", "float16", "half", "bfloat16", "float32", "float", "float64", "double", "complex64", "cfloat",
    "complex128", "cdouble", "uint8", "int8", "int16", "short", "int32", "int", "int64", "long", "bool",
    "get_default_dtype", "set_default_dtype", "promote_types", "finfo", "iinfo", "Tensor", "Size", "device", "set_printoptions",
    "no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled", "is_inference_mode_enabled",
    "is_anomaly_enabled", "default_generator", "range", "is_tensor", "is_floating_point", "is_complex", "numel",
    "result_type", "can_cast", "get_num_threads", "set_num_threads", "get_num_interop_threads", "set_num_interop_threads", "use_deterministic_algorithms", "compile",
    "typename", "strided", "preserve_format", "contiguous_format", "channels_last", "inf", "nan", "pi", "e",
    *_FAMILY_NAMES})

strided = "torch.strided"
from ._tensor import memory_format, preserve_format, contiguous_format, channels_last, channels_last_3d  # noqa: E402
from math import inf, nan, pi, e  # noqa: E402,F401

# The training stack and the namespaces around the core (torch.linalg, torch.cuda, ...) are imported on
# first use (PEP 562), so `import glasstorch` pays only for the core: `glasstorch.nn`, `glasstorch.linalg`,
# `import glasstorch.fft`, ... and `glasstorch.save` work as usual (bench/bench_import.py times it).
_LAZY_MODULES = ("linalg", "cuda", "jit", "nn", "optim", "utils", "distributions", "datasets", "inspection",
                 "serialization", "backends",
                 "accelerator", "amp", "cpu", "xpu", "mps", "functional", "hub", "vision", "torch_version",
                 "distributed", "multiprocessing", "overrides", "_C", "fft", "special", "compiler", "fx", "_dynamo",
                 "testing", "random", "func", "profiler")
# reachable as attributes but, as in torch, not in dir(torch) until first imported
_LAZY_UNLISTED_MODULES = ("onnx",)
_LAZY_NAMES = {"save": "serialization", "load": "serialization", "vmap": "func"}
# the legacy tensor types: constructors and isinstance tests (torch.FloatTensor, ...)
_LAZY_NAMES.update(dict.fromkeys((
    "DoubleTensor", "FloatTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor",
    "CharTensor", "ByteTensor", "BoolTensor"), "_legacy_types"))
# autocast and its state (torch keeps these on the top level)
_LAZY_NAMES.update(dict.fromkeys((
    "autocast", "is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype", "set_autocast_dtype",
    "is_autocast_cache_enabled", "set_autocast_cache_enabled", "autocast_increment_nesting",
    "autocast_decrement_nesting", "clear_autocast_cache", "is_autocast_cpu_enabled", "set_autocast_cpu_enabled",
    "get_autocast_cpu_dtype", "set_autocast_cpu_dtype", "get_autocast_gpu_dtype", "set_autocast_gpu_dtype"),
    "amp.autocast_mode"))
# torch's top level also carries these nn ops under their own names (torch.conv2d, torch.dropout, ...);
# only those whose signature there equals nn.functional's (torch.batch_norm and torch.embedding differ)
_LAZY_NAMES.update(dict.fromkeys((
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "dropout", "layer_norm", "group_norm",
    "max_pool1d", "max_pool2d", "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d", "pixel_shuffle",
    "cosine_similarity", "pairwise_distance", "selu", "celu", "prelu", "hardshrink", "threshold", "pixel_unshuffle",
    "conv_transpose3d", "max_pool3d", "bilinear", "rrelu"), "nn.functional"))
_LAZY_NAMES["constant_pad_nd"] = "ops.nn_pool"
# the whole recurrent networks nn.LSTM, nn.GRU and nn.RNN call (torch's _VF functions), and their cells
_LAZY_NAMES.update(dict.fromkeys(("lstm", "gru", "rnn_tanh", "rnn_relu", "lstm_cell", "gru_cell", "rnn_tanh_cell",
                                  "rnn_relu_cell"), "ops.nn_rnn"))


def __getattr__(name):
    import importlib
    if name in _LAZY_MODULES or name in _LAZY_UNLISTED_MODULES:
        return importlib.import_module("." + name, __name__)
    if name in _LAZY_NAMES:
        value = getattr(importlib.import_module("." + _LAZY_NAMES[name], __name__), name)
        if name in _out_rules and _LAZY_NAMES[name] == "nn.functional":   # torch.threshold(..., out=): F's has none
            value = _out_wrapper(value, name=name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'glasstorch' has no attribute '{name}'")


def __dir__():
    return sorted(set(globals()) | set(_LAZY_MODULES) | set(_LAZY_NAMES))

import os as _os  # noqa: E402
if _os.environ.get("GLASSTORCH_SEATBELT", "").strip().lower() not in ("", "0", "false", "no", "off"):
    from . import inspection  # noqa: E402,F401  (opens the script-wide seatbelt)
