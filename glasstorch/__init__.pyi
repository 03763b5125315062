# Type stubs for glasstorch's top level: what mypy and pyright see of `import glasstorch as torch`.
#
# The top level is assembled at run time (every op module's public functions are exported by
# `_export`, the training stack loads on first use), which a type checker cannot follow; this stub
# states it. The creation functions, the grad modes, save/load and the dtypes carry torch's own
# signatures (torch/_C/_VariableFunctions.pyi); every other top-level name is reached through
# `__getattr__` and typed `Any` (unchecked, never a false error). Subpackages (nn, optim, utils, ...)
# are read from their source. tests/test_typing.py checks this file against the running package.
import builtins
import os
from collections.abc import Sequence
from typing import IO, Any, SupportsIndex, SupportsInt, overload

import numpy

from . import (accelerator as accelerator, amp as amp, autograd as autograd, backends as backends, cpu as cpu,
               cuda as cuda, datasets as datasets, distributed as distributed, distributions as distributions,
               func as func, functional as functional, hub as hub, inspection as inspection, jit as jit,
               linalg as linalg, mps as mps, multiprocessing as multiprocessing, nn as nn, optim as optim,
               profiler as profiler, serialization as serialization, torch_version as torch_version, utils as utils,
               version as version, vision as vision, xpu as xpu)
from ._binding import as_torch as as_torch, load_ipython_extension as load_ipython_extension
from ._dtype import (bfloat16 as bfloat16, bool as bool, can_cast as can_cast, cdouble as cdouble,
                     cfloat as cfloat, complex64 as complex64, complex128 as complex128, double as double, dtype as dtype,
                     finfo as finfo, float as float, float16 as float16, float32 as float32, float64 as float64,
                     get_default_dtype as get_default_dtype, half as half, iinfo as iinfo, int as int, int8 as int8,
                     int16 as int16, int32 as int32, int64 as int64, long as long, promote_types as promote_types,
                     set_default_dtype as set_default_dtype, short as short, uint8 as uint8)
from ._tensor import Size as Size, Tensor as Tensor, device as device
from ._tensor_str import set_printoptions as set_printoptions
from .autograd import (enable_grad as enable_grad, inference_mode as inference_mode,
                       is_anomaly_enabled as is_anomaly_enabled, is_grad_enabled as is_grad_enabled,
                       is_inference_mode_enabled as is_inference_mode_enabled, no_grad as no_grad,
                       set_grad_enabled as set_grad_enabled)
from .ops.creation import Generator as Generator, default_generator as default_generator
from .torch_version import TorchVersion

# `float`, `int` and `bool` are dtypes here, as in torch: annotations use these names instead
_int = builtins.int
_float = builtins.float
_bool = builtins.bool
_complex = builtins.complex
_Number = _int | _float | _bool
_Device = device | str | _int
_Size = Sequence[_int]
_File = str | os.PathLike[str] | IO[bytes]

__version__: TorchVersion
inf: _float
nan: _float
pi: _float
e: _float

# ---- creation (torch's overloads: sizes as separate ints, or one sequence)
def tensor(data: Any, *, dtype: dtype | None = None, device: _Device | None = None, requires_grad: _bool = False,
           pin_memory: _bool = False) -> Tensor: ...
def as_tensor(data: Any, dtype: dtype | None = None, device: _Device | None = None) -> Tensor: ...
def from_numpy(ndarray: numpy.ndarray, /) -> Tensor: ...
@overload
def zeros(size: _Size, *, out: Tensor | None = None, dtype: dtype | None = None, layout: Any = None,
          device: _Device | None = None, requires_grad: _bool = False, pin_memory: _bool = False) -> Tensor: ...
@overload
def zeros(*size: _int, out: Tensor | None = None, dtype: dtype | None = None, layout: Any = None,
          device: _Device | None = None, requires_grad: _bool = False, pin_memory: _bool = False) -> Tensor: ...
@overload
def ones(size: _Size, *, out: Tensor | None = None, dtype: dtype | None = None, layout: Any = None,
         device: _Device | None = None, requires_grad: _bool = False, pin_memory: _bool = False) -> Tensor: ...
@overload
def ones(*size: _int, out: Tensor | None = None, dtype: dtype | None = None, layout: Any = None,
         device: _Device | None = None, requires_grad: _bool = False, pin_memory: _bool = False) -> Tensor: ...
@overload
def empty(size: _Size, *, out: Tensor | None = None, dtype: dtype | None = None, layout: Any = None,
          device: _Device | None = None, requires_grad: _bool = False, pin_memory: _bool = False,
          memory_format: Any = None) -> Tensor: ...
@overload
def empty(*size: _int, out: Tensor | None = None, dtype: dtype | None = None, layout: Any = None,
          device: _Device | None = None, requires_grad: _bool = False, pin_memory: _bool = False,
          memory_format: Any = None) -> Tensor: ...
def full(size: _Size, fill_value: _Number | _complex, *, out: Tensor | None = None, dtype: dtype | None = None,
         layout: Any = None, device: _Device | None = None, requires_grad: _bool = False) -> Tensor: ...
@overload
def rand(size: _Size, *, generator: Generator | None = None, out: Tensor | None = None, dtype: dtype | None = None,
         layout: Any = None, device: _Device | None = None, requires_grad: _bool = False,
         pin_memory: _bool = False) -> Tensor: ...
@overload
def rand(*size: _int, generator: Generator | None = None, out: Tensor | None = None, dtype: dtype | None = None,
         layout: Any = None, device: _Device | None = None, requires_grad: _bool = False,
         pin_memory: _bool = False) -> Tensor: ...
@overload
def randn(size: _Size, *, generator: Generator | None = None, out: Tensor | None = None, dtype: dtype | None = None,
          layout: Any = None, device: _Device | None = None, requires_grad: _bool = False,
          pin_memory: _bool = False) -> Tensor: ...
@overload
def randn(*size: _int, generator: Generator | None = None, out: Tensor | None = None, dtype: dtype | None = None,
          layout: Any = None, device: _Device | None = None, requires_grad: _bool = False,
          pin_memory: _bool = False) -> Tensor: ...
@overload
def randint(high: _int, size: _Size, *, generator: Generator | None = None, out: Tensor | None = None,
            dtype: dtype | None = None, layout: Any = None, device: _Device | None = None,
            requires_grad: _bool = False) -> Tensor: ...
@overload
def randint(low: _int, high: _int, size: _Size, *, generator: Generator | None = None, out: Tensor | None = None,
            dtype: dtype | None = None, layout: Any = None, device: _Device | None = None,
            requires_grad: _bool = False) -> Tensor: ...
def randperm(n: _int, *, generator: Generator | None = None, out: Tensor | None = None, dtype: dtype | None = None,
             layout: Any = None, device: _Device | None = None, requires_grad: _bool = False,
             pin_memory: _bool = False) -> Tensor: ...
def normal(mean: Tensor | _float = 0.0, std: Tensor | _float = 1.0, size: _Size | None = None, *,
           generator: Generator | None = None, out: Tensor | None = None, dtype: dtype | None = None,
           device: _Device | None = None, requires_grad: _bool = False) -> Tensor: ...
@overload
def arange(end: _Number, /, *, out: Tensor | None = None, dtype: dtype | None = None, layout: Any = None,
           device: _Device | None = None, requires_grad: _bool = False) -> Tensor: ...
@overload
def arange(start: _Number, end: _Number, step: _Number = 1, *, out: Tensor | None = None,
           dtype: dtype | None = None, layout: Any = None, device: _Device | None = None,
           requires_grad: _bool = False) -> Tensor: ...
def linspace(start: _Number | Tensor, end: _Number | Tensor, steps: _int, *, out: Tensor | None = None,
             dtype: dtype | None = None, layout: Any = None, device: _Device | None = None,
             requires_grad: _bool = False) -> Tensor: ...
def logspace(start: _Number | Tensor, end: _Number | Tensor, steps: _int, base: _float = 10.0, *,
             dtype: dtype | None = None, device: _Device | None = None, requires_grad: _bool = False) -> Tensor: ...
def eye(n: _int, m: _int | None = None, *, out: Tensor | None = None, dtype: dtype | None = None,
        layout: Any = None, device: _Device | None = None, requires_grad: _bool = False) -> Tensor: ...
def zeros_like(input: Tensor, *, dtype: dtype | None = None, layout: Any = None, device: _Device | None = None,
               requires_grad: _bool = False, memory_format: Any = None) -> Tensor: ...
def ones_like(input: Tensor, *, dtype: dtype | None = None, layout: Any = None, device: _Device | None = None,
              requires_grad: _bool = False, memory_format: Any = None) -> Tensor: ...
def empty_like(input: Tensor, *, dtype: dtype | None = None, layout: Any = None, device: _Device | None = None,
               requires_grad: _bool = False, memory_format: Any = None) -> Tensor: ...
def full_like(input: Tensor, fill_value: _Number | _complex, *, dtype: dtype | None = None, layout: Any = None,
              device: _Device | None = None, requires_grad: _bool = False, memory_format: Any = None) -> Tensor: ...
def rand_like(input: Tensor, *, dtype: dtype | None = None, device: _Device | None = None,
              requires_grad: _bool = False, memory_format: Any = None) -> Tensor: ...
def randn_like(input: Tensor, *, dtype: dtype | None = None, device: _Device | None = None,
               requires_grad: _bool = False, memory_format: Any = None) -> Tensor: ...

# ---- joining
def cat(tensors: Sequence[Tensor], dim: _int = 0, *, out: Tensor | None = None) -> Tensor: ...
def concat(tensors: Sequence[Tensor], dim: _int = 0, *, out: Tensor | None = None) -> Tensor: ...
def stack(tensors: Sequence[Tensor], dim: _int = 0, *, out: Tensor | None = None) -> Tensor: ...

# ---- randomness
def manual_seed(seed: SupportsInt | SupportsIndex) -> Generator: ...
def seed() -> _int: ...
def initial_seed() -> _int: ...

# ---- the rest of the top level
def is_tensor(obj: Any) -> _bool: ...
def numel(input: Tensor) -> _int: ...
def save(obj: object, f: _File, pickle_module: Any = None, pickle_protocol: _int = 2,
         _use_new_zipfile_serialization: _bool = True, _disable_byteorder_record: _bool = False) -> None: ...
def load(f: _File, map_location: Any = None, pickle_module: Any = None, *, weights_only: _bool | None = None,
         mmap: _bool | None = None, **pickle_load_args: Any) -> Any: ...

# every other top-level name (the ~300 ops exported from glasstorch/ops, lazily loaded names): untyped
def __getattr__(name: str) -> Any: ...
