"""The backward pass: walk the recorded graph from the outputs to the leaves.

In four named steps, as the books describe it:

1. ``_collect``   -- walk the graph once from the roots and count, for every node, how many
   gradients will flow into it (its dependencies);
2. the main loop  -- a node runs only when all of its dependencies have delivered their gradient,
   so it is called exactly once, after all of its consumers; among ready nodes the most recently
   created runs first, and a leaf's ``AccumulateGrad`` before any other (torch's order);
3. delivering     -- each gradient a node returns is reduced to its input's shape (broadcasting
   written once, in ``_validate``) and summed into the input buffer of the node it flows to; a
   leaf's ``AccumulateGrad`` adds it into ``.grad`` (``_accumulate``);
4. freeing        -- a node's saved values are released once it has run, unless ``retain_graph``.

The loop is iterative (a deep RNN graph would overflow Python's recursion) and runs with grad
mode off unless ``create_graph=True``, so backward pays nothing for recording by default.

``run_backward``, ``_collect`` and ``_accumulate`` are looked up by name at call time: the
inspection tools wrap them to watch a backward pass.
"""
import itertools
import math
import sys
import threading
import warnings
from heapq import heappush, heappop

from .. import _checks
from . import grad_mode
from .anomaly_mode import _anomaly
from .graph import AccumulateGrad
from .._seam import seam
from .._array import xp as _array_module, copy_preserving_layout, _dense, sum_ends as _sum_ends
from .._array.meta import touched as _meta_touched, MetaArray as _MetaArray, as_meta as _as_meta

_ndarray = _array_module.ndarray

_state = grad_mode._state
_getrefcount = sys.getrefcount


def _collect(roots):
    """Step 1: the dependency count of every node reachable from ``roots`` -- the roots too, 0 unless
    another root leads to them -- in the order they were reached (a dict keeps it: its keys are the
    nodes reached)."""
    deps = dict.fromkeys(roots, 0)
    stack = list(deps)
    while stack:
        for nxt, _ in stack.pop().next_functions:
            if nxt is None:
                continue
            if nxt in deps:
                deps[nxt] += 1
            else:
                deps[nxt] = 1
                stack.append(nxt)
    return deps


def _needed(reached, targets):
    """The nodes from which one of ``targets`` can be reached through at least one edge: only those
    run in autograd.grad. (A target's gradient is captured as it arrives; the target itself runs
    only if another target lies beyond it -- so torch never reads its saved values otherwise.)"""
    consumers = {}
    for node in reached:
        for nxt, _ in node.next_functions:
            if nxt is not None:
                consumers.setdefault(nxt, []).append(node)
    needed = set()
    stack = list(targets)
    while stack:
        for c in consumers.get(stack.pop(), ()):
            if c not in needed:
                needed.add(c)
                stack.append(c)
    return needed


def _sum_to(grad, shape):
    """Reduce a broadcast gradient (an array or a Tensor) back to the input's shape."""
    if grad.shape == shape:
        return grad
    lead = grad.ndim - len(shape)
    dims = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape) if s == 1 and grad.shape[i + lead] != 1)
    if lead and len(dims) == lead and type(grad) is _ndarray:
        # only the leading dims (a Linear's bias): their sum has the shape already, an array of its own
        # that AccumulateGrad takes over, where the sum kept as (1, n) and reshaped is a view it copies.
        # (A Tensor keeps torch's sum_to, sum then view: a create_graph backward records both nodes.)
        return _sum_ends(grad, lead)
    if dims:
        grad = grad.sum(dims, keepdim=True) if isinstance(grad, _Tensor()) else grad.sum(dims, keepdims=True)
    if lead or grad.shape != shape:
        grad = grad.reshape(shape)
    return grad


def _validate(node, i, g):
    """Bring gradient ``g`` (array or Tensor) for input ``i`` of ``node`` to that input's shape and dtype."""
    meta = node._input_meta[i]
    if meta is None:
        return g
    shape, dtype = meta
    gs = g.shape
    if gs != shape:
        lead = len(gs) - len(shape)
        if lead > 0 and gs[lead:] == shape and type(g) is _ndarray:
            # broadcast over leading dimensions only (a Linear's bias): nothing to check, and their sum
            # has the shape already (``_sum_to``'s first case, without finding its dimensions)
            g = _sum_ends(g, lead)
        else:
            try:
                # a gradient may be larger than its input only where the input was broadcast
                # (or be the input's elements in another shape: same count)
                if _checks.broadcast_shape(shape, tuple(gs)) != tuple(gs) and \
                        math.prod(gs) != math.prod(shape):
                    raise ValueError
                g = _sum_to(g, tuple(shape))
            except Exception:
                raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index {i} - got "
                                   f"{list(gs)} but expected shape compatible with {list(shape)}") from None
    # a real input of an op with a complex result gets the real part of its gradient (torch's formulas
    # say so with handle_r_to_c; here once for all of them, without NumPy's ComplexWarning). (An array,
    # the usual gradient, is asked first: NumPy's built-in dtypes are single objects, `is` first.)
    if type(g) is not _ndarray and isinstance(g, _Tensor()):
        if g._data.dtype != dtype.numpy_dtype:
            if g.is_complex() and not dtype.is_complex:
                g = g.real
            g = g.to(dtype)
    elif (dt := g.dtype) is not dtype.numpy_dtype and dt != dtype.numpy_dtype:
        if dt.kind == "c" and not dtype.is_complex:
            g = g.real
        g = g.astype(dtype.numpy_dtype)
    return g


_from_tensor = {}


def _tensor_attr(name):
    """``glasstorch._tensor.<name>`` (``Tensor``, ``_wrap``): that module imports this package, so it is
    imported at first use, and kept -- an import statement in a hot function costs ~1 us a call (the
    compiled MLP's backward made 13 of them a step)."""
    value = _from_tensor.get(name)
    if value is None:
        from .. import _tensor
        value = _from_tensor[name] = getattr(_tensor, name)
    return value


def _Tensor():
    return _tensor_attr("Tensor")


def _as_tensor(g):
    """A gradient handed to user code (hooks, custom Functions) is a Tensor."""
    if g is None or isinstance(g, _Tensor()):
        return g
    return _tensor_attr("_wrap")(g)


def _as_array(g):
    return g._data if isinstance(g, _Tensor()) else g


def run_backward(roots, root_grads, retain_graph, create_graph, capture=None, accumulate=True,
                 accumulate_only=None):
    """Run backward from ``roots`` (list of (node, output_nr)) seeded with ``root_grads`` (Tensors).

    ``capture``: {(node, output_nr): slot} -- gradients to return (autograd.grad) instead of or in
    addition to accumulating; ``accumulate_only``: the set of AccumulateGrad nodes allowed to
    write ``.grad`` (backward(inputs=...)), None for all. Returns the captured gradients (Tensors).

    The gradients flow as arrays, and built-in nodes run their formulas on arrays, unless
    ``create_graph`` (the formulas must record, for the next order) or a TorchDispatchMode is active
    (it must see the formulas' ops): then they flow as Tensors.
    """
    prev_enabled = _state.enabled
    _state.enabled = bool(create_graph)
    tensors = bool(create_graph) or bool(seam.dispatch_modes)   # (not for autocast: no mode to see)
    observers = seam.engine_observers
    node_events = None
    if observers:
        events = seam.engine_events     # (their methods, looked up when they were added)
        for method in events.backward_started:
            method(roots)
        if events.per_node:             # (when none wants each node's events, the loop skips them)
            node_events = events
    tasks = _tasks.stack
    tasks.append(GraphTask())
    try:
        grads = list(root_grads) if tensors else [g._data for g in root_grads]
        captured = _run(roots, grads, retain_graph, create_graph, capture, accumulate, accumulate_only, tensors,
                        node_events)
        if captured is not None and not tensors:
            captured = [_as_tensor(g) for g in captured]
        return captured
    finally:
        tasks.pop()
        _state.enabled = prev_enabled
        if observers:
            for method in seam.engine_events.backward_finished:
                method(roots)


class GraphTask:
    """The backward pass running now (torch's graph task): its id, and which nodes it will run
    (``torch._C._current_graph_task_id``, ``torch._C._will_engine_execute_node``, which hooks such as
    ``register_multi_grad_hook`` ask)."""
    _next_id = itertools.count().__next__

    def __init__(self):
        self.id = GraphTask._next_id()
        self.reached = ()      # the nodes reached from the roots (a dict keyed by them: _collect's counts)
        self.needed = None
        self.targets = ()      # captured tensors' nodes, backward(inputs=...)'s leaves: their hooks run

    def will_execute(self, node):
        if self.needed is not None:
            return node in self.needed or node in self.targets
        return node in self.reached


class _Tasks(threading.local):
    def __init__(self):
        self.stack = []     # the running backward passes, innermost last (checkpoint's run one inside)


_tasks = _Tasks()


def current_graph_task():
    """The innermost running backward pass in this thread, or None."""
    stack = _tasks.stack
    return stack[-1] if stack else None


def _run(roots, root_grads, retain_graph, create_graph, capture, accumulate, accumulate_only, tensors, node_events):
    # 1. dependencies
    deps = _collect([n for n, _ in roots])
    reached = deps      # (its keys)
    captured = [None] * len(capture) if capture else None
    needed = None
    if capture is not None and not accumulate:
        needed = _needed(reached, {n for n, _ in capture})
    elif accumulate_only is not None:
        # (backward(inputs=...): a non-leaf input's own node runs too, as torch's does -- its needed_ is set
        # on every output edge when accumulating -- though nothing of what it gives is used)
        captured_own = {n for n, _ in (capture or ())}
        needed = _needed(reached, accumulate_only | captured_own) | captured_own
    task = _tasks.stack[-1]
    task.reached, task.needed = reached, needed
    # the targets (captured tensors, backward(inputs=...)'s leaves): their hooks run though they need not
    captured_nodes = task.targets = ({n for n, _ in capture} if capture else set()) | (accumulate_only or set())

    # the input buffers: node -> [gradient per output of the node]. A gradient the engine summed
    # itself (a key of `summed`: its node, or (node, output_nr) past output 0) is seen by no one else:
    # more of its dtype (the key's value) can be added in place.
    buffers = {}
    summed = {}
    for (node, nr), g in zip(roots, root_grads):
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node.num_outputs
        buf[nr] = g if buf[nr] is None else buf[nr] + g

    ready = []  # a heap of (-creation number, node): the newest ready node first
    for node in buffers:
        if not deps[node]:
            heappush(ready, (-node._seq, node))

    # 2. the main loop
    check_nan = _anomaly.enabled and _anomaly.check_nan
    arrays = not tensors    # (the formulas run on arrays: the usual backward)
    free = not retain_graph
    node = None  # the next node to run, when it is known without asking the queue
    grads = None  # its gradients, when they were never put in `buffers` (see `following` below)
    while node is not None or ready:
        if node is None:
            node = heappop(ready)[1]
            grads = buffers.pop(node, None)
        elif grads is None:
            grads = buffers.pop(node, None)
        if grads is None:
            grads = [None] * node.num_outputs
        if node_events:
            for method in node_events.node_started:
                method(node)
        # (a node that need not run: nor its hooks -- but a target's hooks run, as they give its gradient)
        # (a class attribute read through the node is a full lookup, ~370 instructions at this site, which
        # sees every class of node: read once, and it says two things -- None is a formula node's
        # `_hooked` while it has no hooks: the usual node, which runs its formulas)
        hooked = node._hooked
        if (hooked is not None or node_events) and len(grads) < node.num_outputs:
            grads += [None] * (node.num_outputs - len(grads))    # (see "a slot past those made" below)
        if hooked and (needed is None or node in needed or node in captured_nodes):
            grads = _run_tensor_pre_hooks(node, grads, tensors)
        if capture is not None:
            for nr in range(len(grads)):
                slot = capture.get((node, nr))
                if slot is not None:
                    captured[slot] = grads[nr]

        if hooked is not None and type(node) is AccumulateGrad:
            if accumulate and (accumulate_only is None or node in accumulate_only):
                # `grads` holds the engine's only reference to the gradient (see _stealable)
                _accumulate(node, grads, create_graph, tensors)
                if node_events:
                    for method in node_events.accumulated:
                        method(node.variable, node.variable._grad)
            node = grads = None
            continue
        to_free = free      # (4. below: unless the formulas' own code freed them)
        if needed is not None and node not in needed:
            out = (None,) * len(node.next_functions)  # it need not run, but it still counts as done for its inputs
            runs_formulas = to_free = False     # (and keeps its saved values, as torch's does: it did not run)
        elif hooked and node._hooked:   # (a pre-hook may have added hooks: read again)
            out = _call_with_hooks(node, grads, tensors)
            runs_formulas = node._runs_formulas
        elif hooked is None or node._runs_formulas:     # (None: the usual node, see above)
            out = node._run_formulas(grads, arrays, free)    # (with free: its saved values freed too)
            to_free = False
            runs_formulas = True
        else:
            out = _call_node(node, grads, tensors)
            runs_formulas = False
        if arrays and _meta_touched.flag:
            out = _on_meta_if_grads_are(grads, out)
        if to_free:   # 4. the saved values are no longer needed
            node._free()
        if check_nan:
            _check_nan(node, out)
        if node_events:
            for method in node_events.node_finished:
                method(node, grads, out)

        # 3. deliver the gradients into the inputs' buffers. A node made ready while nothing else is
        # runs next, without the queue (`following`); when this edge gave it its only gradients, they
        # go to it as they are (`following_grads`), not through `buffers`.
        edges = node.next_functions
        # (the usual node's formulas give a gradient per edge: their lengths are not compared)
        if hooked is not None and len(out) != len(edges) or node._input_meta is not None:
            out = _per_edge(node, out, edges, formulas=runs_formulas and arrays)
            out_dtype = None      # (checked there)
        else:
            # NumPy promoted where torch would not (an int64 saved value times a float32 gradient): the
            # input had the output's dtype, so its gradient must have it too -- tested below per edge
            out_dtype = node._out_dtype if runs_formulas and arrays else None
        following = following_grads = None
        i = -1      # (the edges and gradients paired by index, not zip: a zip call is not specialised here,
        for nxt, nr in edges:   # ~1.3 k instructions a node with its tuples, ~0.5 k this way)
            i += 1
            if nxt is None:
                continue
            g = out[i]
            buf = buffers.get(nxt)
            if g is not None:
                # (NumPy's built-in dtypes are single objects: `is not` first spares the usual case the
                # dtype comparison, ~200 instructions per edge)
                if out_dtype is not None and (dt := g.dtype) is not out_dtype and dt != out_dtype:
                    g = g.astype(out_dtype)
                if buf is None:
                    # a slot for each output up to this one: the node's number of outputs is a class
                    # attribute, a full lookup at this site (~370 instructions an edge); the slots of later
                    # outputs are added when their gradients come, or when the node runs
                    if nr == 0:
                        buf = [g]
                    else:
                        buf = [None] * (nr + 1)
                        buf[nr] = g
                    kept = False      # (not in `buffers` yet)
                else:
                    kept = True
                    try:
                        prev = buf[nr]
                    except IndexError:      # (a slot past those made so far: see above)
                        buf += [None] * (nr + 1 - len(buf))
                        prev = None
                    if prev is None:
                        buf[nr] = g
                    elif create_graph or summed.get(nxt if nr == 0 else (nxt, nr)) is not \
                            (out_dtype if out_dtype is not None else g._data.dtype if tensors else g.dtype):
                        # (a slot is keyed by its node alone when it is the node's first: no tuple made.
                        # NumPy's built-in dtypes are single objects: another one, equal or not, sums
                        # here, as NumPy promotes; out_dtype is one g's equals, tested above. A 0-d sum
                        # is a NumPy scalar: not added to in place)
                        buf[nr] = prev = prev + g
                        if not create_graph and (tensors or type(prev) is _ndarray):
                            summed[nxt if nr == 0 else (nxt, nr)] = prev._data.dtype if tensors else prev.dtype
                    else:
                        # the engine's own sum, of g's dtype, takes g in place: of the same shape, or of one
                        # that broadcasts to it -- the same values as `prev + g`. A larger g (NumPy refuses
                        # to broadcast the output) sums as above. (The shapes are not read: ~1 k
                        # instructions a sum, two tuples made)
                        try:
                            if tensors:
                                prev._data += g._data
                            else:
                                prev += g
                        except ValueError:
                            buf[nr] = prev + g
            else:
                kept = True     # (nothing to keep: the node finds no buffer, or the one it has)
            left = deps[nxt] - 1
            if left:
                deps[nxt] = left
                if not kept:
                    buffers[nxt] = buf
                continue
            # (ready: its count is not read again)
            if following is None and not ready:
                following, following_grads = nxt, (None if kept else buf)
            else:
                if following is not None:
                    if following_grads is not None:
                        buffers[following] = following_grads
                    heappush(ready, (-following._seq, following))
                    following = following_grads = None
                if not kept:
                    buffers[nxt] = buf
                heappush(ready, (-nxt._seq, nxt))
        node, grads = following, following_grads
        # drop the loop's references: a leaf's gradient may then be stolen (`grads` holds the only one)
        out = g = prev = buf = following_grads = None
    return captured


def _per_edge(node, out, edges, formulas):
    """``out`` (a node's gradients) as one per edge of ``node``, each brought to its input's shape and
    dtype: a node that returned fewer gradients than it has edges (the rest are None), or one that
    recorded input metadata (``_validate``), or whose formulas' NumPy promoted a dtype torch keeps.
    The main loop's usual case -- as many gradients as edges, no metadata -- does not come here."""
    meta = node._input_meta
    fixed = []
    for i in range(len(edges)):
        g = out[i] if i < len(out) else None
        if g is not None:
            if meta is not None and meta[i] is not None:
                g = _validate(node, i, g)
            elif formulas and (dt := g.dtype) is not node._out_dtype and dt != node._out_dtype:
                g = g.astype(node._out_dtype)
        fixed.append(g)
    return fixed


def _on_meta_if_grads_are(grads, out):
    """A node's gradients on the meta device when the gradients it received are meta arrays: a
    formula that built a gradient with NumPy's own functions (``np.zeros(shape)`` then a scatter:
    max, sort, pooling, conv) made it on the CPU. Asked only when a meta array was touched (the
    flag the op layer also reads), so a CPU backward pays one attribute test per node."""
    _meta_touched.flag = False
    if any(type(g) is _MetaArray for g in grads):
        return _as_meta(out)
    return out


def _call_node(node, grads, tensors):
    """A node whose derivative is Python code on Tensors (a custom Function, CopySlices...)."""
    if not tensors:
        grads = [_as_tensor(g) for g in grads]
    if node.num_outputs == 1:
        out = node.backward(grads[0]) if grads[0] is not None else ()
    else:
        out = node.backward(*grads)
    if type(out) is not tuple:
        out = (out,)
    if not tensors:
        out = tuple(_as_array(g) for g in out)
    return out


def _call_with_hooks(node, grads, tensors):
    """Run a node that has hooks: pre-hooks on its incoming gradients, then its derivative, then
    hooks that see (and may replace) the gradients it returns. Hooks see Tensors."""
    grads = [_as_tensor(g) for g in grads]
    if node._pre_hooks:
        for hook in list(node._pre_hooks.values()):
            res = hook(tuple(grads))
            if res is not None:
                grads = list(res)
    if node._runs_formulas:
        out = node._run_formulas(grads if tensors else [_as_array(g) for g in grads], not tensors)
        out = tuple(_as_tensor(g) for g in out)
    elif node.num_outputs == 1:
        out = node.backward(grads[0]) if grads[0] is not None else (None,) * len(node.next_functions)
    else:
        out = node.backward(*grads)
    if type(out) is not tuple:
        out = (out,)
    if node._hooks:
        for hook in list(node._hooks.values()):
            res = hook(out, tuple(grads))
            if res is not None:
                out = tuple(res)
    if not tensors:
        out = tuple(_as_array(g) for g in out)
    return out


def _run_tensor_pre_hooks(node, grads, tensors):
    """Tensor.register_hook on an output of ``node`` (on a leaf: of its AccumulateGrad), and retain_grad()."""
    if type(node) is AccumulateGrad:
        if node.variable._backward_hooks and grads[0] is not None:
            g = _run_leaf_hooks(node.variable, _as_tensor(grads[0]))
            grads[0] = g if tensors else _as_array(g)
        return grads
    if node._tensor_pre_hooks:
        for nr, hooks in node._tensor_pre_hooks.items():
            for hook in list(hooks.values()):
                if grads[nr] is None:
                    continue
                g = _as_tensor(grads[nr])
                res = hook(g)
                if res is not None:
                    res = _checked_hook_result(hook, g, res)
                    grads[nr] = res if tensors else _as_array(res)
    if node._retain_grad_hooks:
        for nr, ref in node._retain_grad_hooks.items():
            t = ref()
            if t is not None and grads[nr] is not None:
                g = _as_tensor(grads[nr])
                with _accumulate_lock:
                    if t._grad is None:
                        t._grad = g if _state.enabled else _private_copy(g)
                    else:
                        t._grad = t._grad + g
    return grads


def _run_leaf_hooks(var, grad):
    """Tensor.register_hook on a leaf: each hook may replace the gradient."""
    for hook in list(var._backward_hooks.values()):
        res = hook(grad)
        if res is not None:
            grad = _checked_hook_result(hook, grad, res)
    return grad


def _private_array(grads, var):
    """The array that can become ``var.grad`` without a copy, or None: torch steals a gradient
    nobody else can see and copies one that is shared. Provably private here: only the engine's
    list refers to the array ``grads[0]`` (a Tensor over it, a saved value, a view, or the same
    gradient delivered to another input would add references), it has the leaf's shape, dtype and
    layout (:func:`_in_leaf_layout`), and it owns its memory -- or is a view of an array of that same
    shape and layout that nothing else refers to, which is taken instead: a column-major product
    handed back through ``t()``, as nn.Linear's weight gradient is (mm_mat2_backward's
    ``(grad^T @ x)^T``, then TBackward0's ``t()``)."""
    d = grads[0]
    v = var._data
    if not (type(d) is _ndarray and _getrefcount(d) <= 3   # the list, `d`, getrefcount's argument
            and d.shape == v.shape and d.dtype == v.dtype and _in_leaf_layout(d, v)):
        return None
    base = d.base
    if base is None:
        return d
    if type(base) is _ndarray and _getrefcount(base) <= 3 and base.base is None \
            and base.dtype == d.dtype and base.shape == d.shape and base.strides == d.strides:
        # (its references: d.base, `base`, getrefcount's argument)
        return base   # (the same dtype, shape and strides within its memory: the same elements)
    return None


def _in_leaf_layout(d, v):
    """torch's obeys_layout_contract: a gradient may become the leaf's ``.grad`` as it is when it has the
    leaf's strides (those of dims of size 1 aside) where the leaf is dense, else when it is row-major."""
    ds, vs = d.strides, v.strides
    if ds == vs:
        return True
    if _dense(v):
        return all(a == b for a, b, n in zip(ds, vs, d.shape) if n != 1)
    return d.flags.c_contiguous


def _checked_hook_result(hook, grad, res):
    """torch's contract for a tensor hook's replacement gradient: a tensor of the same size and
    type (a hook that changes them would store a wrong .grad or break the formula downstream)."""
    name = getattr(hook, "__name__", type(hook).__name__)
    from .._tensor import Tensor
    if not isinstance(res, Tensor):
        raise TypeError(f"expected Variable or None (got {type(res).__name__})")
    if res._data.shape != grad._data.shape:
        raise RuntimeError(f"hook '{name}' has changed the size of value")
    if res._data.dtype != grad._data.dtype:
        raise RuntimeError(f"hook '{name}' has changed the type of value (was {grad.type()} got {res.type()})")
    return res




# Accumulating into .grad reads it, then writes it: two threads running backward into the same
# leaf (hogwild training, a DataParallel-style replica per thread) must not interleave there, or
# one gradient is lost. One lock for all leaves, as the step is short; uncontended it costs a few
# tens of nanoseconds per leaf.
_accumulate_lock = threading.Lock()


def _accumulate(acc, grads, create_graph, tensors):
    """AccumulateGrad: add ``grads[0]`` into ``variable.grad`` (allocated on first use), then the
    post-accumulate hooks. ``grads`` is the engine's list, which holds the only engine reference."""
    var = acc.variable
    grad = grads[0]
    if grad is None:
        return
    if var._grad_fn is not None:  # (detach_()ed after use, then written in place with a history: torch refuses)
        raise RuntimeError("leaf variable has been moved into the graph interior")
    if not var._requires_grad:  # (torch drops it: a leaf detach_()ed after use)
        return
    if grad.shape != var._data.shape:  # (a leaf reshaped in place after use: torch refuses it too)
        raise RuntimeError(f"Function {acc.name()} was given an invalid gradient - got {list(grad.shape)} but "
                           f"expected shape compatible with {list(var._data.shape)}")
    del grad   # (the engine's list must hold the only reference: see _private_array)
    with _accumulate_lock:
        if tensors:
            _accumulate_tensor(var, grads, create_graph)
        else:
            _accumulate_array(var, grads)
    post = var._post_accumulate_grad_hooks
    if post:
        for hook in list(post.values()):
            hook(var)


def _accumulate_array(var, grads):
    _wrap = _tensor_attr("_wrap")
    old = var._grad
    if old is None:
        private = _private_array(grads, var)
        if private is not None:
            grads.clear()   # (the engine's list drops its reference: the leaf's is the only one)
            var._grad = _wrap(private)
        else:
            g, v = grads[0], var._data
            # laid out as the leaf where it is dense, else row-major: torch's clone_obey_contract
            var._grad = _wrap(copy_preserving_layout(g, v.dtype, like=v) if _dense(v)
                              else g.astype(v.dtype, order="C", copy=True))   # (the array's own method: meta, CuPy)
    elif _state.enabled or old._data.dtype != grads[0].dtype or old._data.shape != grads[0].shape \
            or not old._data.flags.writeable:
        var._grad = old + _wrap(grads[0])
    else:
        old._data += grads[0]  # torch accumulates in place when grad mode is off
        old._vc.version += 1


# The references to a gradient Tensor while `_accumulate_tensor` decides: the engine's list, and
# getrefcount's own argument (+1 for the local name). One more means someone else holds it.
def _stealable(grad, var):
    """Whether the Tensor ``grad`` can become ``var.grad`` without a copy (see _private_array)."""
    d = grad._data
    return (_getrefcount(grad) <= 3          # the list, `grad`, getrefcount's argument
            and _getrefcount(d) <= 3         # grad._data, `d`, getrefcount's argument
            and d.base is None and d.shape == var._data.shape and d.dtype == var._data.dtype)


def _private_copy(grad, var=None):
    """A copy of ``grad`` (no history) to become a ``.grad``: torch's AccumulateGrad copies a gradient it
    cannot take over; the copy is the engine's own work, not an op a dispatch mode sees as ``clone``.
    For a leaf ``var`` it is laid out as torch's ``clone_obey_contract`` lays it out: with the leaf's
    strides where the leaf is dense, else row-major (a weight's gradient computed as a transposed view,
    ``(x.T @ g).T``, becomes row-major as the weight is); a retained gradient keeps its own layout."""
    d = grad._data
    if var is None:
        return _as_tensor(copy_preserving_layout(d))
    v = var._data
    return _as_tensor(copy_preserving_layout(d, like=v) if _dense(v) else d.astype(d.dtype, order="C", copy=True))


def _accumulate_tensor(var, grads, create_graph):
    old = var._grad
    grad = grads[0]
    if old is None:
        if create_graph:
            # the gradient keeps its history (a graph of its own): the leaf holds that graph
            warnings.warn("Using backward() with create_graph=True will create a reference cycle between the "
                          "parameter and its gradient which can cause a memory leak. We recommend using "
                          "autograd.grad when creating the graph to avoid this. If you have to use this function, "
                          "make sure to reset the .grad fields of your parameters to None after use to break the "
                          "cycle and avoid the leak.", UserWarning, stacklevel=7)
            var._grad = grad if _stealable(grad, var) else grad.clone()
        elif _stealable(grad, var):
            var._grad = grad if grad._grad_fn is None and not grad._requires_grad else grad.detach()
        else:
            var._grad = _private_copy(grad, var)
    elif create_graph or _state.enabled or old._data.dtype != grad._data.dtype \
            or old._data.shape != grad._data.shape or not old._data.flags.writeable:
        var._grad = old + grad
    else:
        old._data += grad._data  # torch accumulates in place when grad mode is off
        old._vc.version += 1


def _check_nan(node, out):
    for i, g in enumerate(out):
        g = _as_array(g)
        if g is not None and g.dtype.kind in "fc" and bool(_array_module.isnan(g).any()):
            msg = f"Function '{node.name()}' returned nan values in its {i}th output."
            if node._anomaly_trace:
                warnings.warn("Error detected in " + node.name() + ". Traceback of forward call that caused the "
                              "error:\n" + "".join(node._anomaly_trace), RuntimeWarning, stacklevel=4)
                msg += "\nThe forward call that created it:\n" + "".join(node._anomaly_trace[-3:])
            raise RuntimeError(msg)
