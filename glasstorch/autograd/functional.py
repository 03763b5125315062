"""torch.autograd.functional: jacobian, hessian, vjp, jvp, hvp, vhp built on autograd.grad."""


def _tuple(x):
    from .._tensor import Tensor
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _prepare(inputs, create_graph):
    return tuple(x.detach().requires_grad_(True) if not create_graph or not x.requires_grad else x.view_as(x)
                 for x in _tuple(inputs))


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    from . import grad
    from .grad_mode import enable_grad
    is_t = not isinstance(inputs, (tuple, list))
    with enable_grad():
        xs = _prepare(inputs, create_graph)
        out = func(*xs)
        gs = grad(_tuple(out), xs, v, create_graph=create_graph, allow_unused=True)
    from ..ops.creation import zeros_like
    gs = tuple(g if g is not None else zeros_like(x) for g, x in zip(gs, xs))
    out = out if create_graph else (out.detach() if not isinstance(out, tuple) else tuple(o.detach() for o in out))
    return out, (gs[0] if is_t else gs)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """J[i][j] = d outputs[i] / d inputs[j], each of shape out_i.shape + in_j.shape."""
    from . import grad
    from .grad_mode import enable_grad
    from ..ops.creation import zeros_like, zeros
    from ..ops.joining import stack
    is_in_t = not isinstance(inputs, (tuple, list))
    with enable_grad():
        xs = _prepare(inputs, create_graph)
        out = func(*xs)
        is_out_t = not isinstance(out, (tuple, list))
        outs = _tuple(out)
        jac = []
        for o in outs:
            rows = [[] for _ in xs]
            flat = o.reshape(-1)
            for k in range(flat.numel()):
                if o.requires_grad:
                    gs = grad(flat[k], xs, retain_graph=True, create_graph=create_graph, allow_unused=True)
                else:
                    gs = (None,) * len(xs)
                for i, (g, x) in enumerate(zip(gs, xs)):
                    rows[i].append(g if g is not None else zeros_like(x))
            jac.append(tuple(
                (stack(r).reshape(o.shape + x.shape) if r else zeros(o.shape + x.shape, dtype=x.dtype))
                if create_graph else
                (stack(r).reshape(o.shape + x.shape).detach() if r else zeros(o.shape + x.shape, dtype=x.dtype))
                for r, x in zip(rows, xs)))
    if is_out_t and is_in_t:
        return jac[0][0]
    if is_out_t:
        return jac[0]
    if is_in_t:
        return tuple(j[0] for j in jac)
    return tuple(jac)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    from . import grad
    is_in_t = not isinstance(inputs, (tuple, list))

    def jac_fn(*xs):
        out = func(*xs)
        gs = grad(out, xs, create_graph=True, allow_unused=True)
        from ..ops.creation import zeros_like
        return tuple(g if g is not None else zeros_like(x) for g, x in zip(gs, xs))
    h = jacobian(jac_fn, _tuple(inputs), create_graph=create_graph)
    if is_in_t:
        return h[0][0]
    return h


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """Forward-mode product via the double-vjp trick: J v = d/du (u^T J)^T v."""
    from . import grad
    from .grad_mode import enable_grad
    from ..ops.creation import zeros_like
    is_in_t = not isinstance(inputs, (tuple, list))
    with enable_grad():
        xs = _prepare(inputs, True)
        out = func(*xs)
        outs = _tuple(out)
        us = tuple(zeros_like(o).requires_grad_(True) for o in outs)
        gs = grad(outs, xs, us, create_graph=True, allow_unused=True)
        vs = _tuple(v) if v is not None else tuple(zeros_like(x) + 1 for x in xs)
        pairs = [(g, vv) for g, vv in zip(gs, vs) if g is not None]
        res = grad([g for g, _ in pairs], us, [vv for _, vv in pairs], create_graph=create_graph, allow_unused=True)
    res = tuple(r if r is not None else zeros_like(o) for r, o in zip(res, outs))
    out = out.detach() if not isinstance(out, tuple) else tuple(o.detach() for o in out)
    return out, (res[0] if not isinstance(func(*_tuple(inputs)), tuple) else res)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    from . import grad
    from .grad_mode import enable_grad
    is_in_t = not isinstance(inputs, (tuple, list))
    with enable_grad():
        xs = _prepare(inputs, True)
        out = func(*xs)
        gs = grad(out, xs, create_graph=True)
        res = grad(gs, xs, _tuple(v), create_graph=create_graph, allow_unused=True)
    return out.detach(), (res[0] if is_in_t else res)


hvp = vhp
