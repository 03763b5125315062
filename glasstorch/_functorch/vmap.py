"""torch.func.vmap as a loop: ``vmap(f)(x)`` calls ``f`` on each slice of ``x`` along the mapped
dim and stacks the results along ``out_dims``.

torch batches the ops themselves (one call of ``f`` sees tensors with a hidden batch dim); glasstorch
runs ``f`` once per batch element, so the values and gradients are torch's but the cost is a Python
loop, and ``randomness="error"`` is not enforced (each call of ``f`` draws its own random numbers, as
``randomness="different"``) -- README "Where glasstorch differs". The arguments, ``in_dims`` /
``out_dims`` pytrees, ``chunk_size`` and the errors are torch's.
"""
import functools

from .._tensor import Tensor
from ..ops.joining import stack
from ..utils._pytree import tree_flatten, tree_unflatten, LeafSpec

__all__ = ["vmap"]


def _fname(func):
    return getattr(func, "__name__", repr(func))


def _broadcast_dims(dims, tree, func, in_dims, what):
    """One in_dim per leaf of ``tree``: ``dims`` is an int/None for the whole tree or a pytree of
    the same structure (a prefix of it)."""
    if dims is None or isinstance(dims, int):
        return [dims] * len(tree_flatten(tree)[0])
    d_leaves, d_spec = tree_flatten(dims)
    t_leaves, t_spec = tree_flatten(tree)
    if isinstance(tree, (tuple, list, dict)) and type(dims) is type(tree) or type(dims) is tuple and \
            isinstance(tree, tuple):
        if len(dims) != len(tree):
            raise ValueError(f"vmap({_fname(func)}, in_dims={in_dims}, ...)(<inputs>): {what} is not compatible "
                             f"with the structure of `inputs`. {what} has structure {d_spec} but inputs has "
                             f"structure {t_spec}.")
        keys = list(tree) if isinstance(tree, dict) else range(len(tree))
        out = []
        for k in keys:
            if isinstance(tree, dict) and k not in dims:
                raise ValueError(f"vmap({_fname(func)}, in_dims={in_dims}, ...)(<inputs>): {what} is not "
                                 f"compatible with the structure of `inputs`.")
            out += _broadcast_dims(dims[k], tree[k], func, in_dims, what)
        return out
    raise ValueError(f"vmap({_fname(func)}, in_dims={in_dims}, ...)(<inputs>): {what} is not compatible with the "
                     f"structure of `inputs`. {what} has structure {d_spec} but inputs has structure {t_spec}.")


def _check_in_dims(in_dims, func):
    if not isinstance(in_dims, (int, tuple)) and in_dims is not None:
        raise ValueError(f"vmap({_fname(func)}, in_dims={in_dims}, ...): expected `in_dims` to be int or a "
                         f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Map ``func`` over a dim of its inputs: ``vmap(f, in_dims)(*args)`` stacks ``f`` applied to
    each slice along ``in_dims`` (an int for every argument, ``None`` for an unmapped one, or a
    tuple with one entry per argument, itself a pytree for a pytree argument), the results stacked
    along ``out_dims``. Keyword arguments are passed to every call unmapped."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got "
                           f"{randomness}")
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        _check_in_dims(in_dims, func)
        if isinstance(in_dims, tuple) and len(in_dims) != len(args):
            _, d_spec = tree_flatten(in_dims)
            _, a_spec = tree_flatten(args)
            raise ValueError(f"vmap({_fname(func)}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible "
                             f"with the structure of `inputs`. in_dims has structure {d_spec} but inputs has "
                             f"structure {a_spec}.")
        leaves, spec = tree_flatten(args)
        dims = _broadcast_dims(in_dims, args, func, in_dims, "in_dims")
        sizes = []
        for x, d in zip(leaves, dims):
            if d is None:
                continue
            if not isinstance(x, Tensor):
                raise ValueError(f"vmap({_fname(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an "
                                 f"input but the input is of type {type(x)}. We cannot vmap over non-Tensor "
                                 f"arguments, please use None as the respective in_dim")
            if not -x.dim() <= d < max(x.dim(), 0) or x.dim() == 0:
                raise ValueError(f"vmap({_fname(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some "
                                 f"input, but that input is a Tensor of dimensionality {x.dim()} so expected in_dim "
                                 f"to satisfy -{x.dim()} <= in_dim < {x.dim()}.")
            sizes.append(x.shape[d])
        if not sizes:
            raise ValueError(f"vmap({_fname(func)}, in_dims={in_dims}, ...)(<inputs>): at least one input must be "
                             f"mapped over (got in_dims={in_dims}, which maps over nothing)")
        if len(set(sizes)) > 1:
            raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                             f"{sizes} for the mapped dimension")
        results = []
        for i in range(sizes[0]):
            sliced = [x if d is None else x.select(d, i) for x, d in zip(leaves, dims)]
            results.append(func(*tree_unflatten(sliced, spec), **kwargs))
        return _stack_outputs(results, out_dims, func)
    return wrapped


def _stack_outputs(results, out_dims, func):
    out_leaves0, out_spec = tree_flatten(results[0])
    per_leaf = list(zip(*[tree_flatten(r)[0] for r in results])) if out_leaves0 else []
    if isinstance(out_dims, (int, type(None))):
        dims = [out_dims] * len(out_leaves0)
    else:
        d_leaves, d_spec = tree_flatten(out_dims)
        if out_spec.is_leaf() and len(d_leaves) == 1:
            dims = d_leaves
        elif len(d_leaves) != len(out_leaves0):
            raise ValueError(f"vmap({_fname(func)}, ...): out_dims is not compatible with the structure of `outputs`. "
                             f"out_dims has structure {d_spec} but outputs has structure {out_spec}.")
        else:
            dims = d_leaves
    stacked = []
    for values, d in zip(per_leaf, dims):
        if d is None:
            stacked.append(values[0])
            continue
        if not isinstance(values[0], Tensor):
            raise ValueError(f"vmap({_fname(func)}, ...): `{_fname(func)}` must only return Tensors, got type "
                             f"{type(values[0])}. Did you mean to set out_dims= to None for output?")
        stacked.append(stack(list(values), d))
    return tree_unflatten(stacked, out_spec) if not isinstance(out_spec, LeafSpec) else stacked[0]
