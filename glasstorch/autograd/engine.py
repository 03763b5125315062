"""The backward pass: walk the recorded graph from the outputs to the leaves.

In four named steps, as the books describe it:

1. ``_collect``   -- walk the graph once from the roots and count, for every node, how many
   gradients will flow into it (its dependencies);
2. the main loop  -- a node runs only when all of its dependencies have delivered their gradient,
   so it is called exactly once, after all of its consumers; among ready nodes the most recently
   created runs first (torch's order);
3. ``_deliver``   -- each gradient a node returns is reduced to its input's shape (broadcasting
   written once, here) and summed into the buffer of the node it flows to; a leaf's
   ``AccumulateGrad`` adds it into ``.grad``;
4. freeing        -- a node's saved values are released once it has run, unless ``retain_graph``.

The loop is iterative (a deep RNN graph would overflow Python's recursion) and runs with grad
mode off unless ``create_graph=True``, so backward pays nothing for recording by default.
"""
import heapq
import sys

from . import grad_mode
from .anomaly_mode import _anomaly
from .graph import AccumulateGrad

_state = grad_mode._state


def _collect(roots):
    """Dependency counts of every node reachable from ``roots`` and a post-order of them."""
    deps = {}
    order = []
    seen = set()
    stack = [(r, False) for r in roots]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if node in seen:
            continue
        seen.add(node)
        stack.append((node, True))
        for nxt, _ in node.next_functions:
            if nxt is not None:
                deps[nxt] = deps.get(nxt, 0) + 1
                if nxt not in seen:
                    stack.append((nxt, False))
    return deps, order


def _needed(order, targets):
    """Nodes from which one of ``targets`` can be reached (only those run in autograd.grad)."""
    needed = set()
    for node in order:  # post-order: children before parents
        if node in targets or any(n in needed for n, _ in node.next_functions if n is not None):
            needed.add(node)
    return needed


def _sum_to(grad, shape):
    """Reduce a broadcast gradient back to the input's shape."""
    if grad.shape == shape:
        return grad
    lead = grad.dim() - len(shape)
    dims = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape) if s == 1 and grad.shape[i + lead] != 1)
    if dims:
        grad = grad.sum(dims, keepdim=True)
    if lead:
        grad = grad.reshape(shape)
    elif grad.shape != shape:
        grad = grad.reshape(shape)
    return grad


def _validate(node, i, g):
    meta = node._input_meta[i]
    if meta is None:
        return g
    shape, dtype = meta
    if g.shape != shape:
        try:
            g = _sum_to(g, shape)
        except Exception:
            raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index {i} - got "
                               f"{list(g.shape)} but expected shape compatible with {list(shape)}") from None
    if g.dtype is not dtype:
        g = g.to(dtype)
    return g


def run_backward(roots, root_grads, retain_graph, create_graph, capture=None, accumulate=True,
                 accumulate_only=None):
    """Run backward from ``roots`` (list of (node, output_nr)) seeded with ``root_grads``.

    ``capture``: {(node, output_nr): slot} -- gradients to return (autograd.grad) instead of or in
    addition to accumulating; ``accumulate_only``: the set of AccumulateGrad nodes allowed to
    write ``.grad`` (backward(inputs=...)), None for all. Returns the captured gradients.
    """
    prev_enabled = _state.enabled
    _state.enabled = bool(create_graph)
    try:
        return _run(roots, root_grads, retain_graph, create_graph, capture, accumulate, accumulate_only)
    finally:
        _state.enabled = prev_enabled


def _run(roots, root_grads, retain_graph, create_graph, capture, accumulate, accumulate_only):
    root_nodes = [n for n, _ in roots]
    deps, order = _collect(root_nodes)
    captured = [None] * len(capture) if capture else None
    needed = None
    if capture is not None and not accumulate:
        needed = _needed(order, {n for n, _ in capture})
    elif accumulate_only is not None:
        needed = _needed(order, accumulate_only | {n for n, _ in (capture or ())})

    buffers = {}
    for (node, nr), g in zip(roots, root_grads):
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node.num_outputs
        buf[nr] = g if buf[nr] is None else buf[nr] + g

    ready = []
    for node in set(root_nodes):
        if deps.get(node, 0) == 0:
            heapq.heappush(ready, (-node._seq, id(node), node))

    check_nan = _anomaly.enabled and _anomaly.check_nan
    while ready:
        node = heapq.heappop(ready)[2]
        grads = buffers.pop(node, None)
        if grads is None:
            grads = [None] * node.num_outputs
        run_it = needed is None or node in needed

        if node._tensor_pre_hooks is not None or node._retain_grad_hooks is not None:
            grads = _run_tensor_pre_hooks(node, grads)
        if capture is not None:
            for nr in range(len(grads)):
                slot = capture.get((node, nr))
                if slot is not None:
                    captured[slot] = grads[nr]

        if type(node) is AccumulateGrad:
            if run_it and accumulate and (accumulate_only is None or node in accumulate_only):
                _accumulate(node, grads[0], create_graph)
            continue
        if not run_it:
            _release(node, deps, ready)
            continue

        if node._pre_hooks:
            for hook in list(node._pre_hooks.values()):
                res = hook(tuple(grads))
                if res is not None:
                    grads = list(res)
        if node.num_outputs == 1:
            g0 = grads[0]
            if g0 is None:
                out = (None,) * len(node.next_functions)
            else:
                out = node.backward(g0)
        else:
            out = node.backward(*grads)
        if type(out) is not tuple:
            out = (out,)
        if node._hooks:
            for hook in list(node._hooks.values()):
                res = hook(out, tuple(grads))
                if res is not None:
                    out = tuple(res)
        if not retain_graph:
            node._free()
        if check_nan:
            _check_nan(node, out)

        meta = node._input_meta
        for i, (nxt, nr) in enumerate(node.next_functions):
            if nxt is None:
                continue
            g = out[i] if i < len(out) else None
            if g is not None:
                if meta is not None:
                    g = _validate(node, i, g)
                buf = buffers.get(nxt)
                if buf is None:
                    buf = buffers[nxt] = [None] * nxt.num_outputs
                prev = buf[nr]
                buf[nr] = g if prev is None else prev + g
            left = deps[nxt] - 1
            deps[nxt] = left
            if left == 0:
                heapq.heappush(ready, (-nxt._seq, id(nxt), nxt))
    return captured


def _release(node, deps, ready):
    """A node that need not run still counts as done for its inputs."""
    for nxt, _ in node.next_functions:
        if nxt is not None:
            deps[nxt] -= 1
            if deps[nxt] == 0:
                heapq.heappush(ready, (-nxt._seq, id(nxt), nxt))


def _run_tensor_pre_hooks(node, grads):
    grads = list(grads)
    if node._tensor_pre_hooks:
        for nr, hooks in node._tensor_pre_hooks.items():
            for hook in list(hooks.values()):
                if grads[nr] is None:
                    continue
                res = hook(grads[nr])
                if res is not None:
                    grads[nr] = res
    if node._retain_grad_hooks:
        for nr, ref in node._retain_grad_hooks.items():
            t = ref()
            if t is not None and grads[nr] is not None:
                g = grads[nr]
                if t._grad is None:
                    t._grad = g if _state.enabled else g.detach().clone()
                else:
                    t._grad = t._grad + g
    return grads


def _accumulate(acc, grad, create_graph):
    """AccumulateGrad: hooks on the leaf, then add into ``variable.grad`` (allocated on first use)."""
    var = acc.variable
    if grad is None:
        return
    hooks = var._backward_hooks
    if hooks:
        for hook in list(hooks.values()):
            res = hook(grad)
            if res is not None:
                grad = res
    if var._grad is None:
        if create_graph:
            var._grad = grad
        else:
            # torch steals a gradient nobody else holds and copies one that is shared (a grad
            # that AddBackward passed through unchanged may be another leaf's too).
            d = grad._data
            if sys.getrefcount(grad) > 4 or d.base is not None or not d.flags.writeable \
                    or d.shape != var._data.shape:
                grad = grad.detach().clone()
            else:
                grad = grad.detach()
            var._grad = grad
    elif create_graph or _state.enabled:
        var._grad = var._grad + grad
    else:
        g = var._grad
        if g._data.dtype != grad._data.dtype or g.shape != grad.shape:
            var._grad = g + grad
        else:
            g._data += grad._data
            g._vc.version += 1
    post = var._post_accumulate_grad_hooks
    if post:
        for hook in list(post.values()):
            hook(var)


def _check_nan(node, out):
    for i, g in enumerate(out):
        if g is not None and g.dtype.is_floating_point and bool(g.isnan().any()):
            msg = f"Function '{node.name()}' returned nan values in its {i}th output."
            if node._anomaly_trace:
                import warnings
                warnings.warn("Error detected in " + node.name() + ". Traceback of forward call that caused the "
                              "error:\n" + "".join(node._anomaly_trace), RuntimeWarning, stacklevel=3)
                msg += "\nThe forward call that created it:\n" + "".join(node._anomaly_trace[-3:])
            raise RuntimeError(msg)
