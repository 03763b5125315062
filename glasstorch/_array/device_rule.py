"""torch's rule that an op's tensors lie on one device, checked before the op's kernel runs.

A CPU array and a CuPy array in one NumPy call are a TypeError from CuPy, in the middle of a
kernel (after an in-place op may have written part of its result); a CPU array and a meta array
give a meta result with no error at all. torch checks the devices of an op's tensor arguments
first and raises a RuntimeError naming both devices; so does the generated op call, through
:func:`check`, once ``state.many`` says that a second device has been used in this process (a
program on the CPU alone pays one attribute test per op).

The rule, as torch's:

* every tensor argument on one device, except a 0-d CPU tensor, which counts as a number (torch's
  TensorIterator lets one into a CUDA op; here any op takes one);
* the index tensors of indexing (``x[i]``, ``x[i] = v``: ``index.Tensor``, ``index_put``) may be on
  the CPU whatever the device of ``x``; a CUDA index into a CPU tensor is refused with torch's
  message. On meta, torch's meta kernels take a CPU ``index``/``indices`` argument for any op
  (``index_select``, ``gather``, ``scatter``, ``embedding``): so does glasstorch;
* the words: element-wise ops (torch's TensorIterator) say "Expected all tensors to be on the same
  device, but found at least two devices, cuda:0 and cpu!" (the first device other than the CPU,
  then the CPU, whatever the order of the arguments); the other ops name the first argument on
  another device than the first tensor's ("... but got mat2 is on cpu, different from other tensors
  on cuda:0 (when checking argument in method wrapper_CUDA_mm)"), as torch's generated wrappers;
  with meta involved, torch's meta functions' words ("Tensor on device cpu is not on the expected
  device meta!", the first tensor's device expected -- ``mat1``'s for addmm, as torch's), and none
  for an in-place op (torch's meta in-place kernels check no devices).

The CUDA words are torch 2.13's (read from its library's strings); they are checked against a GPU
run of torch only once ``tools/gpu_check.py`` has run on one.
"""
import numpy as np

from .meta import MetaArray


class _State:
    """``many``: a device other than the CPU has been used in this process (set by the array seam
    when a meta or CUDA array is first made)."""
    __slots__ = ("many",)

    def __init__(self):
        self.many = False


state = _State()

# ops whose ``indices`` may stay on the CPU when ``self`` is on a device (torch moves them over)
_INDEXING = frozenset({"index", "_unsafe_index", "index_put", "index_put_", "_index_put_impl_", "_unsafe_index_put"})
# arguments torch takes from the CPU whatever the op's device (it copies them to the host itself)
_HOST_ARGUMENTS = frozenset({"input_lengths", "target_lengths"})
# on meta, the argument whose device torch's meta function expects the others on (its output's)
_META_PRIMARY = {"addmm": "mat1"}
# the modules whose ops are element-wise, computed by torch's TensorIterator (its words for the error)
_ELEMENTWISE_MODULES = frozenset({"glasstorch.ops.pointwise", "glasstorch.ops.elementwise", "glasstorch.ops.special"})


def device_name(data):
    """The device of an array in torch's words: 'cpu', 'meta', 'cuda:0'."""
    if isinstance(data, (np.ndarray, np.generic)):
        return "cpu"
    if type(data) is MetaArray:
        return "meta"
    device = getattr(data, "device", None)      # (CuPy's array: its Device)
    return f"cuda:{getattr(device, 'id', 0)}"


def _tensors(op, args):
    """(argument name, array) of each tensor among an op's arguments, lists flattened."""
    for a, value in zip(op._schema.arguments, args):
        if a.is_tensor:
            data = getattr(value, "_data", None)
            if data is not None:
                yield a.name, data
        elif a.is_tensor_list and value is not None:
            for t in value:
                data = getattr(t, "_data", None)
                if data is not None:
                    yield a.name, data


def check(op, args):
    """Raise torch's RuntimeError when ``op``'s tensor arguments ``args`` (its arguments in schema
    order) lie on more than one device; see the module's docstring for the rule. Returns the
    device of the tensors ('cpu', 'meta', 'cuda:0'), None when there are none."""
    name = op._schema.name
    seen = []            # (argument name, device) of the tensors that must agree
    indices = []         # the same, for index tensors on another device than the CPU, or of indexing ops
    cpu_indices = []     # CPU index tensors of other ops: they must agree unless the tensors are meta
    for arg, data in _tensors(op, args):
        device = device_name(data)
        if device == "cpu" and data.ndim == 0:
            continue                                # (a 0-d CPU tensor: a number)
        if arg in _HOST_ARGUMENTS and device == "cpu":
            continue                                # (ctc_loss's lengths: torch reads them on the host)
        if arg in ("index", "indices"):
            if name in _INDEXING:
                indices.append(device)
                continue
            if device == "cpu":
                cpu_indices.append((len(seen), arg))
                continue
        seen.append((arg, device))
    if not seen:
        return "cpu" if indices or cpu_indices else None
    first = seen[0][1]
    if first != "meta":                             # (torch's meta kernels take CPU indices; CUDA ones do not)
        for position, arg in reversed(cpu_indices):
            seen.insert(position, (arg, "cpu"))
        first = seen[0][1]
    for device in indices:                          # indexing: CPU indices anywhere, device ones on their device
        if device != "cpu" and device != first:
            if "meta" in (device, first):
                raise RuntimeError(f"Tensor on device {device} is not on the expected device {first}!")
            raise RuntimeError(f"indices should be either on cpu or on the same device as the indexed tensor ({first})")
    for arg, device in seen[1:]:
        if device == first:
            continue
        if "meta" in (device, first):
            if op._functional is not None:   # (torch's meta in-place kernels check no devices: x.mul_(cpu) runs)
                return first
            # (torch's meta addmm expects its output on mat1's device and names the first tensor elsewhere)
            primary = dict(seen).get(_META_PRIMARY.get(name), first)
            other = next(d for _, d in seen if d != primary)
            raise RuntimeError(f"Tensor on device {other} is not on the expected device {primary}!")
        if getattr(op.kernel, "__module__", None) in _ELEMENTWISE_MODULES:
            accelerator = first if first != "cpu" else device
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                               f"{accelerator} and cpu!")
        overload = op._schema.overload
        wrapper = f"wrapper_CUDA_{name}" + (f"_{overload}" if overload and overload != "default" else "")
        raise RuntimeError(f"Expected all tensors to be on the same device, but got {arg} is on {device}, different "
                           f"from other tensors on {first} (when checking argument in method {wrapper})")
    return first
