"""torch.func's differentiation transforms, on glasstorch's tape-based autograd.

torch's functorch wraps tensors in levels; glasstorch records the function on the ordinary tape
and asks ``autograd.grad`` for what each transform returns:

* ``grad(f)(x)``: ``x`` enters as a fresh leaf that requires grad (or, when it already carries a
  history -- an enclosing transform's, or the user's -- as an alias of it, so the history goes
  on); ``autograd.grad(f(x), x)``.
* ``vjp(f, x)``: ``f(x)`` and a function that runs ``autograd.grad(f(x), x, v)``.
* ``jvp(f, x, t)``: forward mode by two reverse passes ("double vjp"): ``g(u) = J^T u`` is
  linear in ``u``, so its own vjp with ``t`` is ``J t``. Every op in ``f`` must have a double
  backward (torch's forward-mode formulas are not used).
* ``jacrev`` / ``jacfwd``: one vjp per element of the output, stacked (so ``jacfwd`` is computed
  in reverse mode: same values, same structure).
* ``hessian(f) = jacfwd(jacrev(f))``.

Inside a transform the tape records with ``create_graph=True``, so transforms nest
(``grad(grad(f))``, ``hessian``). At the outermost transform the results are detached unless
they depend on a tensor that required grad before the call (a parameter ``f`` closes over, an
argument that required grad), as torch's results are plain tensors there.
"""
import contextlib
import functools
import threading

from .. import autograd
from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ..utils._pytree import tree_flatten, tree_unflatten, tree_map, treespec_pprint

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian"]

_state = threading.local()


def _level():
    """How many transforms are running around the current call (per thread)."""
    return getattr(_state, "level", 0)


@contextlib.contextmanager
def _transform():
    _state.level = _level() + 1
    try:
        with enable_grad():
            yield
    finally:
        _state.level -= 1


def _wrap(x):
    """``x`` as an input of the function to differentiate: a new leaf that requires grad, or an
    alias of ``x`` when ``x`` already has a history (so an enclosing transform sees through)."""
    if not isinstance(x, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
    if x.requires_grad:
        return x.view_as(x)
    return x.detach().requires_grad_(True)


def _grad(outputs, inputs, grad_outputs=None, retain_graph=None):
    """autograd.grad of the outputs that carry a history, zeros for inputs they do not reach
    (torch.func gives zeros where autograd.grad would give None or refuse)."""
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs or [None] * len(outputs))
             if isinstance(o, Tensor) and o.requires_grad]
    if not pairs:
        return [x.new_zeros(x.shape) for x in inputs]
    grads = autograd.grad([o for o, _ in pairs], inputs, [g for _, g in pairs], retain_graph=retain_graph,
                          create_graph=is_grad_enabled(), allow_unused=True)
    return [g if g is not None else x.new_zeros(x.shape) for g, x in zip(grads, inputs)]


def _reaches_outside(tensors, own_leaves):
    """Whether the histories of ``tensors`` reach a leaf (or a tensor with a history) other than
    the transform's own inputs: then the result must keep its history, as torch's does."""
    own = {id(t) for t in own_leaves}
    seen, stack = set(), [t.grad_fn for t in tensors if isinstance(t, Tensor) and t.grad_fn is not None]
    stack += [None for t in tensors if isinstance(t, Tensor) and t.requires_grad and t.grad_fn is None
              and id(t) not in own]
    if None in stack:
        return True
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None and id(variable) not in own:
            return True
        stack.extend(next_node for next_node, _ in node.next_functions)
    return False


def _finish(tree, own_leaves):
    """At the outermost transform, results that only depend on the transform's own inputs are
    detached (plain tensors, as torch's)."""
    if _level() > 0:
        return tree
    leaves = [t for t in tree_flatten(tree)[0] if isinstance(t, Tensor)]
    if _reaches_outside(leaves, own_leaves):
        return tree
    return tree_map(lambda t: t.detach() if isinstance(t, Tensor) else t, tree)


def _own_leaves(wrapped):
    """The leaves ``_wrap`` made (aliases of tensors with a history are not the transform's)."""
    return [w for w in wrapped if w.grad_fn is None]


def _check_argnums(argnums, nargs):
    names = argnums if isinstance(argnums, tuple) else (argnums,)
    if isinstance(argnums, tuple) and len(argnums) == 0:
        raise RuntimeError("argnums must be non-empty")
    for a in names:
        if not isinstance(a, int):
            raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
        if not -nargs <= a < nargs:
            raise RuntimeError(f"Got argnum={a}, but only {nargs} positional inputs")
    if isinstance(argnums, tuple) and len(set(a % nargs for a in argnums)) != len(argnums):
        raise RuntimeError(f"argnums must be unique, got {argnums}")


def _wrap_argnums(args, argnums):
    """(args with the differentiated ones wrapped, the wrapped leaves, their structure)."""
    _check_argnums(argnums, len(args))
    picked = tuple(args[a] for a in argnums) if isinstance(argnums, tuple) else args[argnums]
    leaves, spec = tree_flatten(picked)
    wrapped = [_wrap(x) for x in leaves]
    new_picked = tree_unflatten(wrapped, spec)
    args = list(args)
    for i, a in enumerate(argnums if isinstance(argnums, tuple) else (argnums,)):
        args[a] = new_picked[i] if isinstance(argnums, tuple) else new_picked
    return args, wrapped, spec


def _check_aux(aux):
    for leaf in tree_flatten(aux)[0]:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(leaf)}")


def _split_aux(output, has_aux, api):
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True")
    _check_aux(output[1])
    return output


def grad_and_value(func, argnums=0, has_aux=False):
    """A function returning ``(grad, value)``: the gradient of ``func``'s scalar output with respect
    to the arguments ``argnums`` names (an int, or a tuple: then a tuple of gradients; an argument
    may be a pytree of tensors: its gradient has the same structure), and the output. With
    ``has_aux``, ``func`` returns ``(output, aux)`` and the result is ``(grad, (output, aux))``."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with _transform():
            args, wrapped, spec = _wrap_argnums(args, argnums)
            output, aux = _split_aux(func(*args, **kwargs), has_aux, "grad_and_value(f)(*args)")
            if not isinstance(output, Tensor):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got "
                                   f"{type(output)}")
            if output.dim() != 0:
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
                                   f"tensor with {output.dim()} dims. Maybe you wanted to use the vjp or jacrev "
                                   f"APIs instead?")
            grads = tree_unflatten(_grad([output], wrapped), spec)
        result = (grads, (output, aux)) if has_aux else (grads, output)
        return _finish(result, _own_leaves(wrapped))
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """A function returning the gradient of ``func``'s scalar output with respect to its arguments
    ``argnums`` (``(grad, aux)`` with ``has_aux``): ``grad(f)(x)`` is df/dx. Transforms compose:
    ``grad(grad(f))`` is the second derivative."""
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = inner(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


def vjp(func, *primals, has_aux=False):
    """``(func(*primals), vjp_fn)`` (``aux`` third with ``has_aux``): ``vjp_fn(cotangents)`` returns
    the vector-Jacobian products, a tuple with one entry per primal; it may be called many times."""
    with _transform():
        leaves, spec = tree_flatten(primals)
        wrapped = [_wrap(x) for x in leaves]
        output, aux = _split_aux(func(*tree_unflatten(wrapped, spec)), has_aux, "vjp(f, *primals)")
        out_leaves, out_spec = tree_flatten(output)
        for o in out_leaves:
            if not isinstance(o, Tensor):
                raise RuntimeError(f"Expected outputs of vjp(f, *primals) to be tensors, got unsupported type "
                                   f"{type(o)}")

    def vjp_fn(cotangents):
        ct_leaves, ct_spec = tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as pytree structure of "
                               f"outputs to the function. cotangents: {treespec_pprint(ct_spec)}, primal output: "
                               f"{treespec_pprint(out_spec)}")
        for o, c in zip(out_leaves, ct_leaves):
            if tuple(o.shape) != tuple(c.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of {c.shape} and output[0] has a "
                                   f"shape of {o.shape}.")
        grads = _grad(out_leaves, wrapped, ct_leaves, retain_graph=True)
        return _finish(tree_unflatten(grads, spec), _own_leaves(wrapped))

    output = _finish(output, _own_leaves(wrapped))
    if has_aux:
        return output, vjp_fn, _finish(aux, _own_leaves(wrapped))
    return output, vjp_fn


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(func(*primals), J @ tangents)`` (``aux`` third with ``has_aux``): the Jacobian-vector
    product, computed by two reverse passes (see the module's docstring)."""
    if not isinstance(primals, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be valid to "
                           "call f(*primals).")
    p_leaves, p_spec = tree_flatten(primals)
    t_leaves, t_spec = tree_flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(f"jvp(f, primals, tangents): Expected primals and tangents to have the same python "
                           f"structure. For example, if primals is a tuple of 3 tensors, tangents also must be. Got "
                           f"primals with structure {p_spec} and tangents with structure {t_spec}")
    for p, t in zip(p_leaves, t_leaves):
        if isinstance(p, Tensor) and isinstance(t, Tensor) and tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(f"Trying to set a forward gradient that has a different size than that of the "
                               f"original Tensor, this is not supported. Tensor is of size {list(p.shape)} while the "
                               f"given forward gradient is of size {list(t.shape)}.")
    with _transform():
        wrapped = [_wrap(x) for x in p_leaves]
        output, aux = _split_aux(func(*tree_unflatten(wrapped, p_spec)), has_aux, "jvp(f, primals, tangents)")
        out_leaves, out_spec = tree_flatten(output)
        # g(u) = J^T u is linear in u; its vjp with the tangents is J t
        dummies = [o.new_zeros(o.shape).requires_grad_(True) for o in out_leaves]
        g = _grad(out_leaves, wrapped, dummies, retain_graph=True)
        jvps = _grad(g, dummies, t_leaves, retain_graph=True)
    own = _own_leaves(wrapped) + dummies
    result = (_finish(output, own), _finish(tree_unflatten(jvps, out_spec), own))
    return result + (_finish(aux, own),) if has_aux else result


def _jacobian(func, argnums, has_aux, chunk_size, api):
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError(f"{api}: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with _transform():
            args, wrapped, spec = _wrap_argnums(args, argnums)
            output, aux = _split_aux(func(*args, **kwargs), has_aux, f"{api}(f, ...)(*args)")
            out_leaves, out_spec = tree_flatten(output)
            jacobians = []
            for o in out_leaves:
                if not isinstance(o, Tensor):
                    raise RuntimeError(f"{api}(f, ...)(*args): expected f(*args) to return only tensors, got "
                                       f"unsupported type {type(o)}")
                flat = o.reshape(-1)
                rows = [_grad([flat], wrapped, [_basis(flat, k)], retain_graph=True) for k in range(flat.numel())]
                per_input = []
                for i, x in enumerate(wrapped):
                    from ..ops.joining import stack
                    jac = stack([r[i] for r in rows]) if rows else x.new_zeros((0,) + tuple(x.shape))
                    per_input.append(jac.reshape(tuple(o.shape) + tuple(x.shape)))
                jacobians.append(tree_unflatten(per_input, spec))
        result = tree_unflatten(jacobians, out_spec)
        own = _own_leaves(wrapped)
        return (_finish(result, own), _finish(aux, own)) if has_aux else _finish(result, own)
    return wrapper


def _basis(flat, k):
    e = flat.new_zeros(flat.shape)
    e[k] = 1
    return e


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """A function returning the Jacobian of ``func`` with respect to the arguments ``argnums``
    names, by reverse mode: for an output of shape ``O`` and an input of shape ``I``, a tensor of
    shape ``O + I`` (pytrees of outputs and inputs give the nested structure torch gives)."""
    return _jacobian(func, argnums, has_aux, chunk_size, "jacrev")


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """torch.func.jacfwd: the same Jacobian as :func:`jacrev` (glasstorch computes it in reverse
    mode; README "Where glasstorch differs")."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got "
                           f"{randomness}")
    return _jacobian(func, argnums, has_aux, None, "jacfwd")


def hessian(func, argnums=0):
    """The Hessian of ``func`` (scalar output) with respect to the arguments ``argnums``:
    ``jacfwd(jacrev(func, argnums), argnums)``, of shape ``I + I``."""
    return jacfwd(jacrev(func, argnums), argnums)
