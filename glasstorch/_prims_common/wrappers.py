"""``out=``: writing an op's result into a tensor the caller gives, once for every op.

torch accepts ``out=`` on most of its top-level functions (``torch.add(a, b, out=c)``,
``torch.sum(x, 0, out=o)``, ``torch.max(x, 1, out=(values, indices))``), never on Tensor methods.
Its rules are the same everywhere (torch's own Python-level version is ``out_wrapper`` in
``torch/_prims_common/wrappers.py``):

1. **autograd**: with grad mode on, no argument may require grad, ``out`` included --
   ``add(): functions with out=... arguments don't support automatic differentiation, but one of
   the arguments requires grad.`` (checked before anything runs);
2. **dtype**: each op family checks the result's dtype against ``out``'s in its own way (the
   ``OUT_RULES`` table below, measured on torch: most element-wise ops cast when the cast is
   safe, matmul-like ops want the exact dtype, reductions compute in ``out``'s dtype...);
3. **shape**: an ``out`` of another shape is resized -- with torch's deprecation warning when it
   had elements -- reusing its memory when it is contiguous and large enough, as torch's
   ``resize_`` does (a view of the old ``out`` then sees the new values);
4. the result is written (``out`` keeps its strides when its shape was right), ``out``'s version
   moves on, and ``out`` is what the call returns (the ``*_out`` named tuple of the outs for an op
   with several results).

:func:`out_wrapper` gives a function these rules; ``glasstorch/__init__.py`` applies it to the
functions of ``OUT_RULES`` as it puts them on the top level, so ``x.exp(out=y)`` stays the
TypeError it is in torch. A function that takes ``out=`` itself (``cat``, ``add``, the
factories...) writes through :func:`write_out`, the same rules.
"""
import functools
import math

from .. import _dtype, _seam, _warnings
from .._checks import type_name
from ..autograd import grad_mode

seam = _seam.seam
_state = grad_mode._state


# --- the dtype rules -------------------------------------------------------------------------------------------
can_cast = _dtype.can_cast   # (torch's canCast)


def _cast(name, result, out, args=()):          # TensorIterator's element-wise ops (cast_common_dtype_to_outputs)
    if not can_cast(result, out):
        return RuntimeError(f"result type {result._legacy} can't be cast to the desired output type {out._legacy}")


def _same(name, result, out, args=()):          # unary ops that do not promote (neg, floor, clamp...)
    if result is not out:
        return RuntimeError(f"Found dtype {out._legacy} but expected {result._legacy}")


def _exact(name, result, out, args=()):         # structured kernels that allocate in the input's dtype (mm, gather...)
    if result is not out:
        return RuntimeError(f"Expected out tensor to have dtype {_dtype.cpp_name(result)}, but got "
                            f"{_dtype.cpp_name(out)} instead")


def _cat(name, result, out, args=()):
    if not can_cast(result, out):
        return TypeError(f"torch.cat(): input types can't be cast to the desired output type {out._legacy}")


def _where(name, result, out, args=()):
    if result is not out:
        return RuntimeError(f"Expected out type to be {result._legacy} but got {out._legacy}")


def _bool_only(name, result, out, args=()):     # all / any
    if out is not _dtype.bool:
        return RuntimeError(f"{name} only supports bool tensor for result, got: {out._legacy}")


def _any(name, result, out, args=()):           # comparisons and logical ops write into any dtype
    return None


def _matching(message):
    """A rule that wants ``out``'s dtype to be the result's, with the op's own message
    (``{result}``/``{out}``: the dtypes' names)."""
    def rule(name, result, out, args=()):
        if result is not out:
            return RuntimeError(message.format(result=result._legacy, out=out._legacy))
    return rule


def _matmul(name, result, out, args):
    """matmul checks as dot does when both sides are vectors, as mm does otherwise."""
    dims = [getattr(a, "ndim", 2) for a in args[:2]]
    if dims == [1, 1]:
        return _DOT(name, result, out)
    if dims == [2, 1] and result is not out:
        return RuntimeError(f"addmv input tensors must have the same dtype, but got {out._legacy}, {result._legacy}, "
                            f"and {result._legacy}")
    return _exact(name, result, out)


def _max_min(name, result, out, args):
    """max/min: along a dim (values, indices) as a structured kernel; of two tensors as maximum;
    of everything, any safe cast."""
    if len(args) > 1 and not isinstance(args[1], (int, tuple, list)):
        return _cast(name, result, out)
    if len(args) > 1:
        return _exact(name, result, out)
    if not can_cast(result, out):
        return RuntimeError("Expected canCast( typeMetaToScalarType(self.dtype()), typeMetaToScalarType(out.dtype())) "
                            "to be true, but got false.  (Could this error message be improved?  If so, please "
                            "report an enhancement request to PyTorch.)")


def _diag(name, result, out, args):
    """diag of a vector first checks the cast, then (as of a matrix) the exact dtype."""
    if getattr(args[0], "ndim", 2) == 1 and not can_cast(result, out):
        return RuntimeError(f"diag: result type {result._legacy} can't be cast to the desired out= type {out._legacy}")
    return _exact(name, result, out)


def _histc(name, result, out, args=()):
    if result is not out:
        return RuntimeError(f"torch.histogram: input tensor and hist tensor should have the same dtype, but got input "
                            f"{_dtype.cpp_name(result)} and hist {_dtype.cpp_name(out)}")


def _mvlgamma(name, result, out, args=()):   # (torch's message names the result type twice)
    if not can_cast(result, out):
        return RuntimeError(f"mvlgamma: result type {result._legacy} can't be cast to the desired output type "
                            f"{result._legacy}")


def _median_indices(name, result, out, args=()):
    if out is not _dtype.int64:   # (torch names a bool tensor's type by its C++ class)
        got = "CPUBoolType" if out is _dtype.bool else f"torch.{out._legacy}Tensor"
        return RuntimeError(f"Expected tensor for argument #1 'indices' to have scalar type Long; but got {got} "
                            f"instead (while checking arguments for median)")


def _mean(name, result, out, args=()):
    if len(args) > 1:   # (torch's mean over dims names the result type Float whatever it is)
        if not can_cast(result, out):
            return RuntimeError(f"result type Float can't be cast to the desired output type {out._legacy}")
        return None
    if not can_cast(result, out):
        return RuntimeError(f"mean.dtype_out(): input types can't be cast to the desired output type {out._legacy}")


def _logsumexp(name, result, out, args=()):
    if not (out.is_floating_point or out.is_complex):
        return RuntimeError(f"logsumexp(): Expected floating point type for result tensor, but got: {out._legacy}")


def _searchsorted(name, result, out, args=()):
    """searchsorted/bucketize: out must be the int32 or int64 that ``out_int32`` asks for."""
    if result is not out:
        return RuntimeError(f"torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or "
                            f"Long(int64) depending on whether out_int32 flag is True, but we got output tensor's dtype "
                            f"{out._legacy} and out_int32 flag is {result is _dtype.int32}")


def _castable(message):
    """A rule that wants ``out``'s dtype to be one the result casts to safely, with the op's message."""
    def rule(name, result, out, args=()):
        if not can_cast(result, out):
            return RuntimeError(message.format(result=result._legacy, out=out._legacy))
    return rule


def _castable_then_exact(message):
    """matrix_power: the safe cast is checked first, then the exact dtype (as mm's out does)."""
    castable = _castable(message)

    def rule(name, result, out, args=()):
        return castable(name, result, out, args) or _exact(name, result, out, args)
    return rule


_MATRIX_POWER_CAST = ("matrix_power: Expected result to be safely castable from {result} dtype, but got result with "
                      "dtype {out}")


def _matrix_power(name, result, out, args=()):
    """matrix_power(A, 0 or 1) copies (the identity, A) into out: any safe cast; a power computed
    by products writes as mm does: the exact dtype, after the same cast check."""
    if len(args) > 1 and args[1] in (0, 1):
        return _castable(_MATRIX_POWER_CAST)(name, result, out, args)
    return _castable_then_exact(_MATRIX_POWER_CAST)(name, result, out, args)


def _cpp_matching(message):
    """As :func:`_matching`, the dtypes named as C++ names them (``float``, ``long int``)."""
    def rule(name, result, out, args=()):
        if result is not out:
            return RuntimeError(message.format(result=_dtype.cpp_name(result), out=_dtype.cpp_name(out)))
    return rule


_DOT = _matching("result dtype {out} does not match input dtype {result}")
_IN_OUT_MATCH = _matching("Expected the dtype for input and out to match, but got {result} for input's dtype and "
                          "{out} for out's dtype.")
cast_rule = _cast
REDUCE = "reduce"   # the reduction computes in out's dtype: torch.sum(x, 0, out=long_tensor) is sum(dtype=long)

# Each function of torch's top level that takes ``out=``, with how it checks the dtype. Measured on
# torch 2.13 (tests/test_out.py compares every one that has samples in the op registry).
OUT_RULES = {
    **dict.fromkeys((
        "acos", "acosh", "asin", "asinh", "atan", "atanh", "arccos", "arccosh", "arcsin", "arcsinh", "arctan",
        "arctanh", "atan2", "arctan2", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide",
        "addcdiv", "addcmul", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "cos", "cosh",
        "deg2rad", "rad2deg", "digamma", "erf", "erfinv", "exp", "exp2", "expm1", "fmax",
        "fmin", "fmod", "kron", "lerp", "lgamma", "log", "log10", "log1p", "log2", "maximum", "minimum",
        "outer", "ger", "pow", "reciprocal", "remainder", "rsqrt", "sigmoid", "sin", "sinh", "sqrt",
        "square", "tan", "tanh", "floor_divide", "std", "var", "nextafter",
        "gcd", "lcm", "logical_not", "add", "copysign", "logaddexp", "logaddexp2", "hypot", "bitwise_left_shift",
        "bitwise_right_shift", "xlogy", "special_ndtr", "polygamma", "logit", "i0", "sinc", "erfc",
        "igamma", "igammac", "special_xlog1py", "special_zeta", "angle", "addr"), _cast),
    **dict.fromkeys(("abs", "absolute", "ceil", "floor", "round", "trunc", "fix", "frac", "sign", "sgn", "neg",
                     "negative", "clamp", "clamp_min", "clamp_max", "clip", "conj_physical"), _same),
    **dict.fromkeys(("addmm", "addmv", "baddbmm", "bmm", "mm", "cross", "gather", "index_add",
                     "index_copy", "log_softmax", "softmax", "norm", "scatter", "scatter_add",
                     "scatter_reduce", "index_reduce", "take_along_dim", "tril", "triu", "argmax", "argmin", "isin", "sort",
                     "msort", "topk", "aminmax"), _exact),
    **dict.fromkeys(("eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal",
                     "not_equal", "logical_and", "logical_or", "logical_xor", "isneginf", "isposinf", "signbit"),
                    _any),
    **dict.fromkeys(("all", "any"), _bool_only),
    **dict.fromkeys(("cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "row_stack",
                     "column_stack"), _cat),
    **dict.fromkeys(("sum", "prod", "cumsum", "cumprod", "nansum"), REDUCE),
    "addbmm": _matching("self and mat2 must have the same dtype, but got {out} and {result}"),   # (out is addmm's self)
    "where": _where,
    "matmul": _matmul,
    "dot": _DOT,
    "vdot": _DOT,
    "inner": _matching("tensordot: Expected the output tensor to have dtype {result}, but got an output tensor "
                       "with dtype {out}"),
    "amax": _IN_OUT_MATCH,
    "amin": _IN_OUT_MATCH,
    "index_select": _matching("index_select(): self and result must have the same scalar type"),
    "masked_select": _matching("masked_select(): self and result must have the same scalar type"),
    "take": _matching("take(): self and out expected to have the same dtype, but got self.dtype = {result} and "
                      "out.dtype = {out}"),
    "nan_to_num": _matching("nan_to_num: dtype of out: {out} should be same as input: {result}"),
    "nonzero": _matching("nonzero: Expected out tensor to have scalar type {result} but got scalar type{out}"),
    "diag": _diag,
    "logsumexp": _logsumexp,
    "mvlgamma": _mvlgamma,
    "mean": _mean,
    "cummax": _matching("expected scalar_type {result} but found {out}"),
    "logcumsumexp": _matching("expected scalar_type {result} but found {out}"),
    "mv": _matching("addmv input tensors must have the same dtype, but got {out}, {result}, and {result}"),
    "histc": _histc,
    "cummin": _matching("expected scalar_type {result} but found {out}"),
    # an op with several results: a rule for each
    "kthvalue": (_matching("output values must be of same type as input"),
                 _matching("output indices must be of scalar type Long")),
    "mode": (_matching("expected scalar type '{result}' but got '{out}' for values output"),
             _matching("expected scalar type 'Long' but got '{out}' for indices output")),
    **dict.fromkeys(("median", "nanmedian"), (
        _matching("Expected tensor for 'values' to have the same type as tensor for argument #2 'self'; but type "
                  "torch.{out}Tensor does not equal torch.{result}Tensor (while checking arguments for median)"),
        _median_indices)),
    "max": _max_min,
    "min": _max_min,
    # torch.linalg's functions (glasstorch/linalg.py gives them out= by these rules)
    **dict.fromkeys(("linalg.det", "linalg.inv", "linalg.solve", "linalg.cholesky", "linalg.vector_norm",
                     "linalg.cross", "linalg.eigvalsh", "linalg.svdvals"), _exact),
    **dict.fromkeys(("linalg.slogdet", "linalg.eigh", "linalg.qr", "linalg.svd", "linalg.inv_ex", "linalg.solve_ex",
                     "linalg.cholesky_ex"), _exact),
    "linalg.matrix_power": _matrix_power,
    "linalg.pinv": _castable("linalg.pinv: Expected result to be safely castable from {result} dtype, but got result "
                             "with dtype {out}"),
    "linalg.householder_product": _castable("torch.linalg.householder_product: Expected result to be safely castable "
                                            "from {result} dtype, but got result with dtype {out}"),
    "linalg.eigvals": _castable("torch.linalg.eigvals: Expected eigenvalues to be safely castable from {result} dtype, "
                                "but got eigenvalues with dtype {out}"),
    "linalg.eig": (_castable("torch.linalg.eig: Expected eigenvalues to be safely castable from {result} dtype, but "
                             "got eigenvalues with dtype {out}"),
                   _castable("torch.linalg.eig: Expected eigenvectors to be safely castable from {result} dtype, but "
                             "got eigenvectors with dtype {out}")),
    "linalg.matrix_norm": _matching("linalg.matrix_norm expected out tensor dtype {result} but got: {out}"),
    "linalg.norm": _matching("linalg.norm expected out tensor dtype {result} but got: {out}"),
    "linalg.solve_triangular": _matching("expected scalar type {result} but found {out}"),
    "linalg.multi_dot": _cpp_matching("multi_dot(): expected out tensor to have dtype {result} but got {out}"),
    "linalg.matrix_rank": _castable("torch.linalg.matrix_rank: Expected result to be safely castable from {result} "
                                    "dtype, but got result with dtype {out}"),
    # more of torch's top level (measured on torch 2.13 by tools/audit_breadth.py's out= walk)
    **dict.fromkeys(("inverse", "diagonal_copy"), _exact),
    **dict.fromkeys(("qr", "svd", "slogdet"), _exact),
    **dict.fromkeys(("bucketize", "searchsorted"), _searchsorted),
    "cholesky": _castable("cholesky: Expected result to be safely castable from {result} dtype, but got result with "
                          "dtype {out}"),
    "matrix_power": _matrix_power,
    "float_power": _matching("the output given to float_power has dtype {out} but the operation's result requires "
                             "dtype {result}"),
    "hardshrink": _same,
    "threshold": _cast,
    "multinomial": _matching("multinomial expects Long tensor out, got: {out}"),
    "bernoulli": _any,
    "geqrf": (_castable("torch.geqrf: Expected a to be safely castable from {result} dtype, but got a with dtype {out}"),
              _castable("torch.geqrf: Expected tau to be safely castable from {result} dtype, but got tau with dtype "
                        "{out}")),
    "nanmean": REDUCE,
    "heaviside": _matching("heaviside is not yet implemented for tensors with different dtypes."),
    "ldexp": _castable("ldexp can't be cast to the desired output type {out}"),
}
# The kernel a reduction computing in out's dtype runs refuses some dtypes, with torch's message
_REDUCE_REFUSES = {"cumsum": lambda d, x: d is _dtype.bool, "cumprod": lambda d, x: d is _dtype.bool,
                   "nansum": lambda d, x: not d.is_floating_point and getattr(x, "is_floating_point", bool)(),
                   "nanmean": lambda d, x: not d.is_floating_point and getattr(x, "is_floating_point", bool)()}
_never = (lambda d, x: False)
_KERNEL_NAMES = {"cumsum": "cumsum_out_cpu", "cumprod": "cumprod_out_cpu", "nansum": "nansum_cpu",
                 "nanmean": "nansum_cpu"}
# torch's argument parser offers out= only with a dim for these: (its message, for a call without one)
_OUT_NEEDS_DIM = {"sum": "combination", "prod": "combination", "median": "missing", "nanmedian": "missing"}
# ops whose out= path in torch makes no autograd check (inner goes through tensordot's composite out)
_NO_AUTOGRAD_CHECK = frozenset(("inner", "softmax", "log_softmax", "diag", "heaviside",
                                # (composites whose out= copies the result in: torch's out then requires grad)
                                "linalg.matrix_norm", "linalg.norm", "linalg.eigvals", "linalg.matrix_rank"))
# calls whose out= path in torch is a copy, with no autograd check (matrix_power(A, 0 or 1): the identity or A)
_COPIED_WHEN = {"linalg.matrix_power": lambda args, _: len(args) > 1 and args[1] in (0, 1)}
# ops with several results whose kernel checks the last out's dtype first
_CHECKED_LAST_FIRST = frozenset(("median", "nanmedian"))
# the name torch's autograd message gives an alias: the op it stands for
_OP_NAMES = {"absolute": "abs", "arccos": "acos", "arccosh": "acosh", "arcsin": "asin", "arcsinh": "asinh",
             "arctan": "atan", "arctanh": "atanh", "arctan2": "atan2", "subtract": "sub", "multiply": "mul",
             "divide": "div", "true_divide": "div", "clip": "clamp", "negative": "neg", "fix": "trunc",
             "concat": "cat", "concatenate": "cat", "greater": "gt", "greater_equal": "ge", "less": "lt",
             "less_equal": "le", "not_equal": "ne", "ger": "outer", "hstack": "cat", "vstack": "cat",
             "row_stack": "cat", "dstack": "cat", "column_stack": "cat", "msort": "sort", "kron": "mul",
             "outer": "mul", "square": "pow", "norm": "linalg_vector_norm", "cross": "linalg_cross",
             "take_along_dim": "gather", "nanmean": "nansum", "inverse": "linalg_inv_ex",
             # torch.linalg's: the aten op whose out= variant refuses autograd
             "linalg.det": "_linalg_det", "linalg.slogdet": "_linalg_slogdet", "linalg.inv": "linalg_inv_ex",
             "linalg.inv_ex": "linalg_inv_ex", "linalg.solve": "_linalg_solve_ex",
             "linalg.solve_ex": "_linalg_solve_ex",
             "linalg.cholesky": "linalg_cholesky_ex", "linalg.cholesky_ex": "linalg_cholesky_ex",
             "linalg.pinv": "linalg_pinv", "linalg.matrix_power": "matmul", "linalg.vector_norm": "linalg_vector_norm",
             "linalg.cross": "linalg_cross", "linalg.multi_dot": "mm",
             "linalg.householder_product": "linalg_householder_product",
             "linalg.solve_triangular": "linalg_solve_triangular", "linalg.eigvalsh": "_linalg_eigh",
             "linalg.eigh": "_linalg_eigh", "linalg.svdvals": "_linalg_svd", "linalg.svd": "_linalg_svd",
             "linalg.qr": "linalg_qr", "linalg.eig": "linalg_eig"}


# --- the wrapper -----------------------------------------------------------------------------------------------
def out_wrapper(fn, rule=None, name=None):
    """``fn`` that also takes ``out=`` (a Tensor, or a tuple of them for an op with several results),
    with torch's rules (see the module's docstring). Without ``out`` it is ``fn``'s call, nothing more."""
    name = name or fn.__name__
    rule = rule if rule is not None else OUT_RULES[name]
    # an op whose out= overload is written down (``aten.bernoulli.out``: what a dispatch mode sees)
    writes_out = getattr(fn, "writes_out", None)

    @functools.wraps(fn)
    def with_out(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        if seam.on:   # a TorchFunctionMode sees torch.add(..., out=c) as torch's does
            return seam.torch_function(with_out, args, dict(kwargs, out=out))
        if writes_out is not None:
            return writes_out(*args, out=out, **kwargs)
        if name in _OUT_NEEDS_DIM and len(args) < 2 and "dim" not in kwargs:
            raise _parser_error(name, args, kwargs)
        if rule is REDUCE and kwargs.get("dtype") is None:
            dtype = getattr(out, "dtype", None)
            if dtype is not None and _REDUCE_REFUSES.get(name, _never)(dtype, args[0] if args else None):
                raise NotImplementedError(f'"{_KERNEL_NAMES[name]}" not implemented for \'{dtype._legacy}\'')
            kwargs["dtype"] = dtype
        return write_out(name, fn(*args, **kwargs), out, rule, args + tuple(kwargs.values()))
    with_out.adds_out = True    # (its signature is fn's and out=: overrides.get_testing_overrides reads this)
    return with_out


def _parser_error(name, args, kwargs):
    """torch's argument parser's TypeError for out= given where its signature has none."""
    if _OUT_NEEDS_DIM[name] == "missing":
        return TypeError(f'{name}() missing 1 required positional arguments: "dim"')
    got = ", ".join([type_name(a) if type_name(a) != "glasstorch.Tensor" else "Tensor" for a in args] +
                    [f"{k}={type(v).__name__}" for k, v in kwargs.items()] + ["out=Tensor"])
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but expected one of:")


def check_autograd(name, args, kwargs, out):
    """torch's VariableType refuses an out= call of a differentiable op in which something requires
    grad (grad mode on). Called with the result among ``args``: an op with no derivative
    (comparisons, argmax, nonzero...) gives a result that does not require grad, and passes."""
    if not _state.enabled or name in _NO_AUTOGRAD_CHECK:
        return
    from .._tensor import Tensor
    for value in (*args, *kwargs.values(), out):
        for t in (value if isinstance(value, (tuple, list)) else (value,)):
            if isinstance(t, Tensor) and t._requires_grad:
                raise RuntimeError(f"{_OP_NAMES.get(name, name)}(): functions with out=... arguments don't support "
                                   f"automatic differentiation, but one of the arguments requires grad.")


def write_out(name, result, out, rule=_cast, args=()):
    """Write ``result`` (a Tensor, or a tuple of them) into ``out`` by torch's rules; returns ``out``
    (for several results, the ``torch.return_types.<name>_out`` of the outs)."""
    from .._tensor import Tensor
    if isinstance(result, Tensor):
        if not isinstance(out, Tensor):
            raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type_name(out)}")
        if not _COPIED_WHEN.get(name, _never)(args, None):
            check_autograd(name, (result,), {}, out)
        _write_one(name, result, out, rule, args)
        return out
    if not isinstance(out, (tuple, list)) or not all(isinstance(o, Tensor) for o in out):
        raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not {type_name(out)}")
    if len(out) != len(result):
        raise TypeError(f"expected tuple of {len(result)} elements but got {len(out)}")
    check_autograd(name, tuple(result), {}, tuple(out))
    rules = rule if isinstance(rule, tuple) else (rule,) * len(out)
    order = range(len(out) - 1, -1, -1) if name in _CHECKED_LAST_FIRST else range(len(out))
    for i in order:   # every dtype checked before anything is written
        _check_dtype(name, result[i], out[i], rules[i], args)
    for r, o in zip(result, out):
        _write_one(name, r, o, None, args)
    from .. import return_types
    kind = getattr(return_types, f"{type(result).__name__}_out", None)
    return kind(out) if kind is not None else type(result)(out)


def _check_dtype(name, result, out, rule, args):
    if rule is not REDUCE and rule is not None:
        error = rule(name, result.dtype, out.dtype, args)
        if error is not None:
            raise error


def _write_one(name, result, out, rule, args):
    from .._tensor import bump_version, check_inference_write
    from .._array import xp, overlap
    from ..ops._op import _check_no_overlap
    _check_dtype(name, result, out, rule, args)
    check_inference_write(out._vc)
    target = resize_output(out, result._data.shape, warn=name not in _RESIZED_SILENTLY)
    if 0 in target.strides:
        _check_no_overlap(out)
    r = result._data
    if r is not target and overlap(r, target) == "partial":
        raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to tensor refer "
                           "to a single memory location. Please clone() the tensor before performing the operation.")
    xp.copyto(target, r, casting="unsafe")
    bump_version(out, name)


# ops whose out= torch resizes with ``resize_`` (no warning), not ``resize_output``
_RESIZED_SILENTLY = frozenset(("addbmm",))


def resize_output(out, shape, warn=True):
    """``out``'s array, resized to ``shape`` as torch's ``resize_output`` does: a warning when it had
    elements (``warn=False``: as its ``resize_`` does, the factories' out= overloads); its memory kept
    when it is contiguous and large enough."""
    o = out._data
    if o.shape == shape:
        return o
    if o.size and warn:
        _warnings.warn(f"An output with one or more elements was resized since it had shape {list(o.shape)}, which "
                      f"does not match the required output shape {list(shape)}. This behavior is deprecated, and in "
                      f"a future PyTorch release outputs will not be resized unless they have zero elements. You can "
                      f"explicitly reuse an out tensor t by resizing it, inplace, to zero elements with t.resize_(0).",
                      UserWarning)
    from .._array import empty_like as _empty_like
    n = math.prod(shape)
    flags = getattr(o, "flags", None)    # (a meta array has none: it gets a new one)
    if flags is not None and flags.c_contiguous and o.size >= n:
        new = o.reshape(-1)[:n].reshape(shape)
    else:
        new = _empty_like(o, shape)
    out._data = new
    out._layout_of = None
    return new
