"""The flat ("foreach") path of the optimizers: one vectorised update per parameter group.

torch's ``foreach`` implementations (``_multi_tensor_sgd``, ``_multi_tensor_adam``, ...) run the
update of all of a group's parameters as a few multi-tensor kernels instead of a Python loop of small
ops per parameter. The same idea, in NumPy's terms:

* the **state** of a group (momentum buffers, running averages, step counts) lives in one flat
  array per state key; each parameter's state tensor (``opt.state[p]["exp_avg"]``) is a view of its
  slice, so ``state_dict``, ``load_state_dict`` and ``opt.state[p]`` read and write as before;
* each step **gathers** the gradients (new tensors every step) into one flat array, runs the
  algorithm on whole flat arrays -- a handful of NumPy calls for the whole model, whatever its
  number of parameters -- and **writes** each parameter's slice of the result into it in place (one
  NumPy call per parameter), bumping the version counters exactly as the for-loop's in-place ops do
  (torch's foreach ops bump them the same way).

The arithmetic is the for-loop's (``sgd``, ``adam``, ``rmsprop``: the same operations in the same
order, in the parameters' dtype), so both paths give the same trajectories. The flat path is used
when ``foreach`` is None (the default) or True, or ``fused`` is True, and the group allows it
(:func:`usable`); otherwise, and with ``foreach=False``, the for-loop runs. (torch's CPU default is
its for-loop; glasstorch's is the flat path, which gives the same values.)
"""
from .. import _dtype
from .._array import xp
from .._tensor import bump_versions
from ..ops.creation import from_numpy

try:   # the interception seam, where the op core has one
    from .._seam import seam as _seam, _overloaded_args
except ImportError:   # a tree without it: nothing can watch single ops under no_grad
    _seam = None


def _observed(params):
    """Whether a TorchFunctionMode / TorchDispatchMode, or a Tensor subclass with __torch_function__
    among the tensors of this update, watches single ops: then the update runs as Tensor ops they
    can see, as torch's does. The subclass test is per call, as torch's ``has_torch_function`` is: a
    subclass defined somewhere in the process (which turns the seam on for every call) takes no
    part in an update whose parameters and gradients are plain tensors."""
    if _seam is None or not (_seam.on or _seam.dispatching):
        return False
    if _seam.dispatching or _seam.function_modes:
        return True
    tensors = list(params)
    tensors += [p.grad for p in params if p.grad is not None]
    return not _seam.subclass_disabled and bool(_overloaded_args(tensors, None))


def usable(group, params):
    """Whether ``params`` (the group's parameters that have a gradient) can take the flat path:
    ``foreach`` not False (or ``fused`` True), nothing watching single ops, and dense real floating
    CPU tensors of one dtype with gradients of their own dtype and shape (else the for-loop runs,
    which handles all)."""
    if (group.get("foreach") is False and not group.get("fused")) or not params or _observed(params):
        return False
    dt = params[0]._data.dtype
    if dt.kind != "f":   # (ml_dtypes' bfloat16 is kind "V": for-loop)
        return False
    for p in params:
        d, g = p._data, p._grad   # (nothing watches: the attribute, not the seam's property)
        if type(d) is not xp.ndarray or d.dtype != dt or g is None or type(g._data) is not xp.ndarray \
                or g._data.dtype != dt or g._data.shape != d.shape:
            return False
    return True


class FlatGroup:
    """A group's parameters laid end to end: where each one's slice is, and the flat state arrays.

    Made on the first flat step of a group and kept by the optimizer (``Optimizer._flat``); a step
    whose set of parameters with gradients differs makes a new one (the state moves over, copied).
    """

    def __init__(self, params):
        self.ids = [id(p) for p in params]
        self.shapes = [p._data.shape for p in params]
        self.slices = []
        start = 0
        for p in params:
            self.slices.append(slice(start, start + p._data.size))
            start += p._data.size
        self.size = start
        self.dtype = params[0]._data.dtype
        self.state = {}        # state key -> flat array
        self._gathered = {}    # reused buffers for gather()

    def matches(self, params):
        """Whether ``params`` are still the parameters laid out here, in their shapes (``p.data = ...``
        may have changed one)."""
        return len(params) == len(self.ids) and all(
            id(p) == i and p._data.shape == shape for p, i, shape in zip(params, self.ids, self.shapes))

    def gather(self, arrays, name):
        """``arrays`` end to end in one flat array (a buffer kept for ``name``, reused every step)."""
        out = self._gathered.get(name)
        if out is None:
            out = self._gathered[name] = xp.empty(self.size, self.dtype)
        xp.concatenate([a.reshape(-1) for a in arrays], out=out)
        return out

    def views(self, flat):
        """Each parameter's slice of ``flat``, in its shape."""
        return [flat[s].reshape(shape) for s, shape in zip(self.slices, self.shapes)]

    def state_array(self, states, key, init=None, scalar_dtype=None):
        """The flat array behind ``states[i][key]`` for every parameter, (re)made when needed.

        Each ``states[i][key]`` must be a view of this array; where one is not (the first step, a
        ``load_state_dict``, a state the user assigned), the values are copied into a new flat
        array and the state entries replaced by views of it. Entries missing everywhere are made
        from ``init`` ("zeros", or a flat array to copy). ``scalar_dtype``: one 0-dim tensor per
        parameter (``step``) instead of the parameter's shape.
        """
        arr = self.state.get(key)
        if arr is not None and all(s.get(key) is not None and s[key]._data.base is arr for s in states):
            return arr
        if scalar_dtype is not None:
            dt, slices, shapes = scalar_dtype, [slice(i, i + 1) for i in range(len(states))], [()] * len(states)
            arr = xp.zeros(len(states), dt)
        else:
            dt, slices, shapes = self.dtype, self.slices, self.shapes
            arr = xp.zeros(self.size, dt) if isinstance(init, str) or init is None else init.copy()
        for s, sl, shape in zip(states, slices, shapes):
            if s.get(key) is not None:
                arr[sl] = s[key]._data.reshape(-1)
            s[key] = from_numpy(arr[sl].reshape(shape))
        self.state[key] = arr
        return arr


def flat_group(optimizer, index, params):
    """The optimizer's FlatGroup for its group ``index`` and these parameters (kept between steps)."""
    cache = optimizer.__dict__.setdefault("_flat", {})
    fg = cache.get(index)
    if fg is None or not fg.matches(params):
        fg = cache[index] = FlatGroup(params)
    return fg


def scalar(value, dtype):
    """A Python number as a NumPy scalar of ``dtype`` (the for-loop's ops compute with exactly that)."""
    return dtype.type(value)


def add_into(params, fg, update, op_name):
    """``param += update`` slice by slice, in place, each a version bump named ``op_name``."""
    for p, u in zip(params, fg.views(update)):
        d = p._data
        xp.add(d, u, out=d)
    bump_versions(params, op_name)


def scale_params(params, factor, op_name):
    """``param *= factor`` in place (AdamW's decay), a version bump each."""
    for p in params:
        d = p._data
        xp.multiply(d, factor, out=d)
    bump_versions(params, op_name)


def bump(states, key, *op_names):
    """The version bumps the for-loop's in-place ops on ``states[i][key]`` would make."""
    bump_versions([s[key] for s in states], *op_names)


def same_state(states, key):
    """Whether every parameter has state ``key`` or none has (the flat path's precondition: the
    for-loop creates a parameter's state on the first step that sees its gradient, so a parameter
    that joins later starts where the others are not)."""
    have = [s.get(key) is not None for s in states]
    return all(have) or not any(have)


def step_count(states, fg):
    """Add one to every ``step`` (``step_t.add_(1)``) and return the count, which the group's
    parameters share; or, changing nothing, None when they don't (some skipped steps without a
    gradient, or joined later): the caller then runs the for-loop, whose bias corrections are per
    parameter."""
    arr = fg.state.get("step")
    if arr is None or not all("step" in s and s["step"]._data.base is arr for s in states):
        if not same_state(states, "step") or len({float(s["step"]) for s in states if "step" in s}) > 1:
            return None
        arr = fg.state_array(states, "step", scalar_dtype=_dtype.numpy_dtype(_scalar_dtype(states)))
    elif not (arr == arr[0]).all():
        return None
    arr += 1
    bump(states, "step", "add_")
    return float(arr[0])


def _scalar_dtype(states):
    from .optimizer import _get_scalar_dtype
    for s in states:
        if "step" in s:
            return _dtype.from_numpy_dtype(s["step"]._data.dtype)
    return _get_scalar_dtype()
