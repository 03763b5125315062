"""gradcheck / gradgradcheck: compare autograd's gradients with central finite differences."""


class GradcheckError(RuntimeError):
    pass


def _flat_inputs(inputs):
    from .._tensor import Tensor
    if isinstance(inputs, Tensor):
        return (inputs,)
    return tuple(inputs)


def _numerical_jacobian(fn, inputs, eps):
    """J[i][j, k] = d out_j / d input_i[k] by central differences (float64 inputs expected)."""
    from .. import _tensor
    from .._array import xp
    from .grad_mode import no_grad
    jac = []
    with no_grad():
        for x in inputs:
            if not (isinstance(x, _tensor.Tensor) and x._requires_grad):
                jac.append(None)
                continue
            data = x._data  # perturbed in place, element by element in C order (views included:
            cols = []       # reshape(-1) of a non-contiguous input would perturb a copy)
            for idx in xp.ndindex(data.shape):
                orig = data[idx].item()
                data[idx] = orig + eps
                plus = _outputs_flat(fn(*inputs))
                data[idx] = orig - eps
                minus = _outputs_flat(fn(*inputs))
                data[idx] = orig
                cols.append((plus - minus) / (2 * eps))
            jac.append(cols)
    return jac


def _outputs_flat(out):
    from .._tensor import Tensor
    from .._array import xp
    outs = (out,) if isinstance(out, Tensor) else tuple(o for o in out if isinstance(o, Tensor))
    return xp.concatenate([o._data.reshape(-1).astype("float64") for o in outs]) if outs else xp.zeros(0)


def _analytical_jacobian(fn, inputs, create_graph=False):
    from .._tensor import Tensor
    from .._array import xp
    from . import grad as autograd_grad
    out = fn(*inputs)
    outs = (out,) if isinstance(out, Tensor) else tuple(o for o in out if isinstance(o, Tensor))
    diff_inputs = [x for x in inputs if isinstance(x, Tensor) and x._requires_grad]
    rows = []  # rows[j] = gradient of flat output j w.r.t. each input
    for o in outs:
        if not o._requires_grad:
            for _ in range(o.numel()):
                rows.append([xp.zeros(x._data.size) for x in diff_inputs])
            continue
        for j in range(o.numel()):
            g = xp.zeros(o._data.size, dtype=o._data.dtype)
            g[j] = 1
            from ..ops.creation import from_numpy
            gs = autograd_grad(o, diff_inputs, from_numpy(g.reshape(o._data.shape)), retain_graph=True,
                               allow_unused=True)
            rows.append([xp.zeros(x._data.size) if gi is None else gi._data.reshape(-1).astype("float64")
                         for gi, x in zip(gs, diff_inputs)])
    return rows, diff_inputs


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False, fast_mode=False,
              masked=None):
    """True if autograd's Jacobian matches finite differences (inputs should be float64)."""
    from .._array import xp
    inputs = _flat_inputs(inputs)
    for x in inputs:
        if getattr(x, "_requires_grad", False) and x._data.dtype != xp.float64:
            import warnings
            warnings.warn("Input #0 requires gradient and is not a double precision floating point or complex. This "
                          "check will likely fail if all the inputs are not of double precision floating point or "
                          "complex. ")
    numerical = _numerical_jacobian(func, inputs, eps)
    rows, diff_inputs = _analytical_jacobian(func, inputs)
    numerical = [n for n in numerical if n is not None]
    for i, cols in enumerate(numerical):
        num = xp.stack(cols, axis=1) if cols else xp.zeros((len(rows), 0))
        ana = xp.stack([r[i] for r in rows], axis=0) if rows else xp.zeros((0, len(cols)))
        if num.shape != ana.shape or not xp.allclose(ana, num, rtol=rtol, atol=atol):
            if raise_exception:
                raise GradcheckError(f"Jacobian mismatch for output 0 with respect to input {i},\n"
                                     f"numerical:{num}\nanalytical:{ana}\n")
            return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, gen_non_contig_grad_outputs=False,
                  raise_exception=True, **kwargs):
    """gradcheck of the function inputs -> d(func)/d(inputs) . grad_outputs (second derivatives)."""
    from .._tensor import Tensor
    from . import grad as autograd_grad
    from ..ops.creation import randn_like
    from .. import _dtype
    inputs = _flat_inputs(inputs)
    out = func(*inputs)
    outs = (out,) if isinstance(out, Tensor) else tuple(out)
    if grad_outputs is None:
        grad_outputs = tuple(randn_like(o, dtype=_dtype.float64).requires_grad_(True) for o in outs)
    grad_outputs = _flat_inputs(grad_outputs)
    n = len(inputs)

    def first_grad(*args):
        from .grad_mode import enable_grad
        xs, gos = args[:n], args[n:]
        with enable_grad():  # gradcheck evaluates it under no_grad for the finite differences
            return _first_grad(xs, gos)

    def _first_grad(xs, gos):
        o = func(*xs)
        os_ = (o,) if isinstance(o, Tensor) else tuple(o)
        diff = [x for x in xs if isinstance(x, Tensor) and x._requires_grad]
        gs = autograd_grad(os_, diff, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)
    return gradcheck(first_grad, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
