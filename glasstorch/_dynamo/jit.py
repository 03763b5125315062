"""Optional compiled loops (numba) for the generated code: the row-wise passes NumPy makes in many
sweeps -- layer norm's forward and backward, softmax's forward and backward -- each as one loop over
the rows; and passes NumPy makes two or three of where one does -- ReLU's backward, a Linear's bias add
with the ReLU after it, a residual add with the layer norm after it (and, backward, the residual's two
gradient terms added in layer norm's loop), mse_loss's forward and backward.

NumPy runs ``native_layer_norm`` as ~8 whole-array passes (the row means as a matrix-vector product,
the centred copy, its square, the variance, the scaling by rstd, weight and bias), each reading and
writing the (rows, n) array; one loop per row does it in two sweeps of a row held in L1. Measured
(bench/README.md, "Stop 26 (branch s26-fuse)"), float32, one thread, the Transformer's shapes:
layer norm forward over (2048, 128) 0.37 ms -> 0.06, its backward 0.66 -> 0.11, softmax's backward
over (8192, 64) 0.69 -> 0.22 (torch: 0.14, 0.15, 0.26), its forward 1.6 -> 0.74 (torch 0.37; numba's
own ``np.exp`` is a scalar libm call per element, slower than NumPy's: the loop has its own ``exp``).

Installed with ``pip install glasstorch[jit]``; imported only when a compiled graph that has one of
these ops is generated (never at ``import glasstorch``); without numba, or with
``torch._dynamo.config.jit = False`` (read when code is generated), the generated code calls the
NumPy kernels and formulas, whose bits eager's are. The loops are eager's arithmetic in another
order of summation (and fused multiply-adds, ``fastmath``'s ``contract``), so their float32 values
differ from eager's as torch's own differ from a float64 reference: by float32 rounding
(docs/compile.md, "Where compiled differs from eager"). Only float32 is compiled: float64 is the
precision tests' dtype, where eager's bits are the point; float32 is where the time goes.

The fastmath flags allow reassociating sums (so that they vectorize), contracting ``a * b + c`` and
ignoring the sign of zero; not ``nnan``/``ninf``, so that a nan or inf propagates as torch's does.
Compiled once per machine: numba caches the machine code (``cache=True``) beside this file or, when
that is not writable, in its user cache directory.
"""
import numpy as np

from . import config

_FASTMATH = {"reassoc", "contract", "nsz"}
_loaded = None          # None: not tried yet; False: numba absent; else the compiled kernels by name


def _layer_norm_rows(x, w, b, eps, out, mean, rstd, y, total, x_swapped, y_swapped):
    """out = (x - mean) * rstd * w + b per row of the 3-D row-major ``x`` (``out``: 2-D, row by row); mean and
    rstd (1 / sqrt(var + eps), the biased variance) per row, as ``native_layer_norm`` gives them. With ``y``
    (not None), the rows of ``x + y`` instead, that sum written into ``total`` (2-D, row by row) on the way: a
    residual add and the layer norm after it in one pass over memory. ``x_swapped``/``y_swapped``: that operand
    is the row-major array of the sum's first two dims swapped (a transposed residual: attention's output,
    sequence first). (numba compiles the two cases apart, ``y is None`` being decided by its type; the operands
    are row-major arrays because numba vectorizes a row only where it knows the row's elements adjacent.)"""
    d0, d1 = (x.shape[1], x.shape[0]) if x_swapped else (x.shape[0], x.shape[1])
    n = x.shape[2]
    inv_n = np.float32(1) / np.float32(n)
    for i0 in range(d0):
        for i1 in range(d1):
            i = i0 * d1 + i1
            if y is None:
                xi = x[i0, i1]
            else:
                xa = x[i1, i0] if x_swapped else x[i0, i1]
                ya = y[i1, i0] if y_swapped else y[i0, i1]
                xi = total[i]
                for j in range(n):
                    xi[j] = xa[j] + ya[j]
            s = np.float32(0)
            for j in range(n):
                s += xi[j]
            mu = s * inv_n
            v = np.float32(0)
            for j in range(n):
                d = xi[j] - mu
                v += d * d
            r = np.float32(1) / np.sqrt(v * inv_n + eps)
            mean[i] = mu
            rstd[i] = r
            oi = out[i]
            for j in range(n):
                oi[j] = (xi[j] - mu) * r * w[j] + b[j]


def _layer_norm_backward_rows(g, x, mean, rstd, w, dx, dw, db, g2):
    """The gradients of ``_layer_norm_rows``: with xhat = (x - mean) * rstd and g' = g * w,
    dx = rstd * (g' - mean(g') - xhat * mean(g' * xhat)) (the centred form eager's kernel uses for
    rows this long), dw = sum over rows of g * xhat, db = sum over rows of g. With ``g2`` (not None), the
    gradient is ``g + g2`` (a value read twice, a residual's: its two gradients added here, not in a pass of
    their own; numba compiles the two cases apart)."""
    rows, n = x.shape
    inv_n = np.float32(1) / np.float32(n)
    dw[:] = 0
    db[:] = 0
    for i in range(rows):
        mu, r = mean[i], rstd[i]
        mean_gw = np.float32(0)
        mean_gw_xhat = np.float32(0)
        for j in range(n):
            gij = g[i, j] if g2 is None else g[i, j] + g2[i, j]
            xhat = (x[i, j] - mu) * r
            gw = gij * w[j]
            mean_gw += gw
            mean_gw_xhat += gw * xhat
            dw[j] += gij * xhat
            db[j] += gij
        mean_gw *= inv_n
        mean_gw_xhat *= inv_n
        for j in range(n):
            gij = g[i, j] if g2 is None else g[i, j] + g2[i, j]
            xhat = (x[i, j] - mu) * r
            dx[i, j] = r * (gij * w[j] - mean_gw - xhat * mean_gw_xhat)


# expf as Cephes writes it (and vectorized libms after it): exp(t) = 2^k exp(r), k = round(t / ln 2), r = t - k ln 2
# (ln 2 in two parts, so that k ln 2 is exact), exp(r) a degree-7 polynomial (~1 ulp on |r| <= ln 2 / 2), 2^k
# made as a float32's exponent bits. numba's np.exp is a scalar libm call per element; this vectorizes.
_LOG2E, _LN2_HI, _LN2_LO = np.float32(1.442695), np.float32(0.693359375), np.float32(-2.12194440e-4)
_EXP_POLY = tuple(np.float32(c) for c in (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2,
                                          1.6666665459e-1, 5.0000001201e-1))
_EXP_MIN = np.float32(-87.33654)      # exp of less is below float32's smallest normal: taken as 0 (torch: a subnormal)


def _softmax_rows(x, out, exponent_bits, log):
    """out = exp(x - max) / sum(exp(x - max)) per row, or with ``log`` (log_softmax) ``(x - max) - log(sum(exp(x -
    max)))``, eager's formulas; a row holding nan or +inf, or only -inf, is nan, as eager's (its max minus itself
    is nan). ``exponent_bits``: an int32 scratch row. (log_softmax over a classifier's logits, rows of a few
    classes: NumPy's ~8 whole-array calls cost more per call than this loop's work; numba's own ``np.exp``, a
    scalar libm call, would take 14 us over 256x10, NumPy's kernel 18, this loop ~9.)

    The max is a bare compare-and-select, which skips nan (a scalar loop of ``maxss``, ~1 cycle an element;
    counting the nans beside it took ~0.15 ms more over the Transformer's scores); a nan is found afterwards:
    the row's sum of ``x - max`` is nan exactly when the row holds a nan, or its max is +inf or -inf
    (inf - inf), and it is added up in the exponential's loop, where it costs one vector add."""
    rows, n = x.shape
    c0, c1, c2, c3, c4, c5 = _EXP_POLY
    powers_of_two = exponent_bits.view(np.float32)
    for i in range(rows):
        xi, oi = x[i], out[i]
        m = xi[0]
        for j in range(n):
            v = xi[j]
            m = v if v > m else m
        nan_check = np.float32(0)
        for j in range(n):
            t = xi[j] - m
            nan_check += t
            tc = t if t > _EXP_MIN else _EXP_MIN
            k = np.floor(tc * _LOG2E + np.float32(0.5))
            r = tc - k * _LN2_HI - k * _LN2_LO
            p = ((((c0 * r + c1) * r + c2) * r + c3) * r + c4) * r + c5
            oi[j] = p * r * r + r + np.float32(1) if t > _EXP_MIN else np.float32(0)
            exponent_bits[j] = (np.int32(k) + np.int32(127)) << np.int32(23)
        if nan_check != nan_check:
            for j in range(n):
                oi[j] = np.nan
            continue
        s = np.float32(0)
        for j in range(n):
            e = oi[j] * powers_of_two[j]
            oi[j] = e
            s += e
        if log:
            lse = np.log(s)
            for j in range(n):
                oi[j] = (xi[j] - m) - lse
            continue
        inv = np.float32(1) / s
        for j in range(n):
            oi[j] *= inv


def _nll_losses(x, target, ignore_index, out):
    """nll_loss_forward's per-row losses with eager's arithmetic (``ops/nn_loss.py`` ``_nll_forward``, no class
    weights): ``-x[i, target[i]]`` for a kept row, 0 for an ignored one; returns the number of kept
    rows, or ``-1 - i`` for the first row ``i`` whose target is out of range (not ignored), as eager's check finds
    it."""
    rows, n = x.shape
    kept = 0
    for i in range(rows):
        t = target[i]
        if t == ignore_index:
            out[i] = np.float32(0)
            continue
        if t < 0 or t >= n:
            return -1 - i
        out[i] = -x[i, t]
        kept += 1
    return kept


def _log_softmax_nll_grad_rows(y, target, coef, ignore_index, out, exponent_bits):
    """``lowering.log_softmax_nll_grad``'s arithmetic per row -- ``c - exp(y) * (c + 0)`` at the row's target,
    ``0 - exp(y) * (c + 0)`` elsewhere, ``c`` the row's coefficient (0 for an ignored row) -- with
    ``_softmax_rows``'s exponential (a nan kept); returns -1, or ``-1 - i`` for the first row ``i`` whose target
    is out of range (not ignored). ``exponent_bits``: an int32 scratch row."""
    rows, n = y.shape
    c0, c1, c2, c3, c4, c5 = _EXP_POLY
    powers_of_two = exponent_bits.view(np.float32)
    zero = np.float32(0)
    for i in range(rows):
        t = target[i]
        c = coef
        if t == ignore_index:
            c = zero
            t = 0
        elif t < 0 or t >= n:
            return -1 - i
        cz = c + zero
        yi, oi = y[i], out[i]
        for j in range(n):
            v = yi[j]
            vc = v if v > _EXP_MIN else _EXP_MIN
            k = np.floor(vc * _LOG2E + np.float32(0.5))
            r = vc - k * _LN2_HI - k * _LN2_LO
            p = ((((c0 * r + c1) * r + c2) * r + c3) * r + c4) * r + c5
            oi[j] = p * r * r + r + np.float32(1) if v > _EXP_MIN else zero
            exponent_bits[j] = (np.int32(k) + np.int32(127)) << np.int32(23)
        at = oi[t] * powers_of_two[t] if yi[t] == yi[t] else yi[t]
        for j in range(n):
            e = oi[j] * powers_of_two[j]
            e = e if yi[j] == yi[j] else yi[j]
            oi[j] = zero - e * cz
        oi[t] = c - at * cz
    return -1


def _softmax_backward_rows(g, y, out):
    """out = y * (g - sum(g * y)) per row: softmax's vector-Jacobian product."""
    rows, n = y.shape
    for i in range(rows):
        s = np.float32(0)
        for j in range(n):
            s += g[i, j] * y[i, j]
        for j in range(n):
            out[i, j] = y[i, j] * (g[i, j] - s)


def _threshold_grad_flat(g, y, out):
    """ReLU's backward as ``lowering.threshold_grad`` computes it, bit for bit: the gradient where the
    result is positive or nan, +0 where it is masked (no fastmath: a select keeps the gradient's bits)."""
    for i in range(g.size):
        out[i] = 0 if y[i] <= 0 else g[i]


def _threshold_grad_in_place(g, y):
    """``_threshold_grad_flat`` into ``g`` itself. (Written apart: with ``out`` the same array as ``g``, LLVM's
    check that the two do not overlap fails and the loop runs unvectorized, ~10x slower.)"""
    for i in range(g.size):
        g[i] = 0 if y[i] <= 0 else g[i]


def _tanh_grad_flat(g, y, one, out):
    """tanh's backward, ``g * (1 - y * y)``, as the three ufuncs of ``lowering._tanh_grad`` compute it, bit for bit
    (no fastmath: each product and difference rounded to the arrays' dtype, ``one`` of it). Any C-contiguous
    arrays of one shape (numba views them flat itself: a reshape in Python costs more than the loop)."""
    gf, yf, of = g.reshape(-1), y.reshape(-1), out.reshape(-1)
    for i in range(gf.size):
        v = yf[i]
        of[i] = gf[i] * (one - v * v)


def _tanh_grad_in_place(g, y, one):
    """``_tanh_grad_flat`` into ``g`` itself (written apart, as ``_threshold_grad_in_place``: vectorized)."""
    gf, yf = g.reshape(-1), y.reshape(-1)
    for i in range(gf.size):
        v = yf[i]
        gf[i] = gf[i] * (one - v * v)


def _bias_relu_rows(p, b):
    """``p = relu(p + b)`` in place, ``b`` added to every row: ``addmm``'s bias added into its product, then
    ``relu``'s ``a < 0 ? 0 : a`` (which keeps -0 and nan), bit for bit (no fastmath)."""
    rows, n = p.shape
    zero = np.float32(0)
    for i in range(rows):
        for j in range(n):
            v = p[i, j] + b[j]
            p[i, j] = zero if v < zero else v


def _squared_error_sum(x, y):
    """sum((x - y)^2) over two flat arrays, accumulated in float64 (vectorized: ``reassoc``)."""
    s = 0.0
    for i in range(x.size):
        d = x[i] - y[i]
        s += np.float64(d * d)
    return s


def _scaled_difference(x, y, c, out):
    """out = (x - y) * c: ``mse_loss_backward``'s arithmetic, bit for bit (no fastmath)."""
    for i in range(x.size):
        out[i] = (x[i] - y[i]) * c


def _add_scaled(d, g, s):
    """``d += g * s`` over two C-contiguous arrays of one dtype (numba views them flat itself), as SGD's array path
    computes ``param.add_(grad, alpha=-lr)`` with NumPy's two ufuncs -- the product rounded to the dtype, then the
    sum -- bit for bit (no fastmath: no fused multiply-add), in one pass over memory where NumPy makes two and a
    new array for the product."""
    df, gf = d.reshape(-1), g.reshape(-1)
    for i in range(df.size):
        df[i] = df[i] + gf[i] * s


def _kernels():
    """The compiled loops by name, or None (numba is not installed). Compiled lazily, by numba, on
    their first call (or loaded from its cache)."""
    global _loaded
    if _loaded is None:
        try:
            import numba
        except ImportError:
            _loaded = False
        else:
            jit = numba.njit(cache=True, fastmath=_FASTMATH, nogil=True)
            _loaded = {f.__name__: jit(f) for f in (_layer_norm_rows, _layer_norm_backward_rows, _softmax_rows,
                                                      _softmax_backward_rows, _squared_error_sum, _log_softmax_nll_grad_rows)}
            exact = numba.njit(cache=True, nogil=True)
            _loaded.update({f.__name__: exact(f) for f in (_threshold_grad_flat, _threshold_grad_in_place,
                                                            _bias_relu_rows, _scaled_difference, _nll_losses,
                                                            _tanh_grad_flat, _tanh_grad_in_place, _add_scaled)})
    return _loaded or None


def enabled():
    """Whether generated code may use the compiled loops: ``config.jit`` on and numba installed."""
    return bool(config.jit) and _kernels() is not None


# -- what the code generator asks ----------------------------------------------------------------
def _float32_rows(node):
    """A float32 value of NumPy's (on the cpu device), row-major, not 0-d."""
    return node is not None and node.meta.get("device") == "cpu" and node.meta.get("dtype") is not None and \
        node.meta["dtype"].numpy_dtype == np.float32 and bool(node.meta.get("contiguous")) and \
        bool(node.meta.get("shape"))


def kernel(node, args):
    """A compiled stand-in for ``node``'s kernel (same arguments, same results), or None."""
    name = node.target.__name__
    if name == "native_layer_norm.default":
        inp, shape, w, b = args["input"], args["normalized_shape"], args["weight"], args["bias"]
        if len(shape) == 1 and all(_float32_rows(v) for v in (inp, w, b)) and tuple(w.meta["shape"]) == \
                tuple(b.meta["shape"]) == (inp.meta["shape"][-1],) and inp.meta["shape"][-1] > 0 and enabled():
            return layer_norm
    if name == "_softmax.default" and _last_dim_rows(node, args["self"], args["dim"]) and \
            not args["half_to_float"] and enabled():
        return softmax
    if name == "_log_softmax.default" and _last_dim_rows(node, args["self"], args["dim"]) and \
            _cross_entropy_rows(node) and not args["half_to_float"] and enabled():
        return log_softmax
    if name == "nll_loss_forward.default" and _nll_rows(args) and enabled():
        return nll_loss_forward
    if name == "mse_loss.default" and _mse_rows(args):
        return mse_loss
    return None


# Cross-entropy's loops (log_softmax's forward, nll's, their fused backward) save ~60 us a step whatever the batch's
# size (NumPy's calls on small arrays: their Python, not their arithmetic), which pays numba's import (~0.2 s, once
# per process) after a few thousand steps: for a training batch of this many rows or more, not a toy's few rows
# (a graph with no other loop then imports nothing).
CROSS_ENTROPY_LOOP_MIN_ROWS = 64


def _cross_entropy_rows(node):
    """A row-major float32 ``N x C`` value on the cpu, ``N >= CROSS_ENTROPY_LOOP_MIN_ROWS``, ``C >= 1``."""
    shape = tuple(node.meta.get("shape") or ())
    return _float32_rows(node) and len(shape) == 2 and shape[0] >= CROSS_ENTROPY_LOOP_MIN_ROWS and shape[1] >= 1


def _nll_rows(args):
    """``nll_loss_forward`` of a row-major float32 ``N x C`` input on the cpu (``_cross_entropy_rows``) and a 1-D
    target, no class weights, 'mean' or 'sum' (F.cross_entropy's usual call)."""
    x, target = args["self"], args["target"]
    return args.get("weight") is None and args.get("reduction") in (1, 2) and _cross_entropy_rows(x) and \
        target.meta.get("device") == "cpu" and len(target.meta.get("shape") or ()) == 1


def add_layer_norm_for(add, operands, norm, norm_args):
    """Whether ``norm`` (a ``native_layer_norm`` node, its arguments ``norm_args``) of ``add`` (an
    ``aten.add.Tensor`` of the nodes ``operands``, alpha 1, read by nothing else) runs as ``add_layer_norm``:
    two float32 values of the sum's shape (no broadcast), 2-D or 3-D, on the cpu, the sum row-major, the
    norm one ``layer_norm`` runs."""
    shape = tuple(add.meta.get("shape") or ())
    return len(shape) in (2, 3) and _float32_rows(add) and all(
        v.meta.get("device") == "cpu" and v.meta.get("dtype") == add.meta["dtype"] and tuple(v.meta.get("shape") or ())
        == shape for v in operands) and kernel(norm, norm_args) is layer_norm


def _mse_rows(args):
    """``mse_loss`` of two row-major float32 values of one shape (no broadcast), at least
    ``THRESHOLD_GRAD_MIN_SIZE`` elements, reduced by a mean or a sum."""
    x, y = args["self"], args["target"]
    return args.get("reduction", 1) in (1, 2) and _float32_rows(x) and _float32_rows(y) and \
        tuple(x.meta["shape"]) == tuple(y.meta["shape"]) and int(np.prod(x.meta["shape"])) >= THRESHOLD_GRAD_MIN_SIZE \
        and enabled()


# mse_loss's loops: from this size (its forward's float64 sum is not eager's float32 one: kept to the large values
# where the pass pays).
THRESHOLD_GRAD_MIN_SIZE = 1 << 18
# ReLU's loops (its backward; a Linear's bias add with the ReLU after it): NumPy makes two passes where the loop makes
# one, the same bits. Measured (one thread, min of 7, bench/README.md "Stop 30"): 16k elements (64x256) backward
# 11.9 -> 4.6 us, bias + ReLU 6.3 -> 1.4; 65k (an MLP's 256x256) 35.7 -> 11.2 and 22.3 -> 4.9; 262k 129 -> 39 and
# 87 -> 24. Below ~16k elements a step saves a few us per ReLU, which would take ~10^5 steps to pay numba's import
# and loading (~0.2 s, once per process) in a graph that needs nothing else of it; from it, ~10^4 steps or fewer
# (an MLP of 256-wide layers at batch 256: ~0.08 ms a step, ~2% of it).
RELU_LOOP_MIN_SIZE = 1 << 14


def threshold_grad_for(node):
    """Whether ReLU's backward at ``node`` (a float32/float64 relu) runs as the loop."""
    shape = node.meta.get("shape") or ()
    return node.meta.get("device") == "cpu" and int(np.prod(shape)) >= RELU_LOOP_MIN_SIZE and enabled()


# tanh's backward: NumPy's three ufuncs (y * y, 1 - that, g * that) pay ~0.8 us a call each on small arrays, the loop
# one call (32x32 float32: 2.5 -> 0.5 us; the chain's 50 a step: ~0.1 ms of ~1.2). From this size; below it, a graph
# of a few small tanh (a test's) would pay numba's import for nothing measurable.
TANH_GRAD_LOOP_MIN_SIZE = 1 << 10


def tanh_grad_for(node):
    """Whether tanh's backward at ``node`` (a float32/float64 tanh on the cpu) runs as the loop."""
    shape = node.meta.get("shape") or ()
    return node.meta.get("device") == "cpu" and int(np.prod(shape)) >= TANH_GRAD_LOOP_MIN_SIZE and enabled()


def tanh_grad(grad, result, out=None):
    """``g * (1 - y * y)`` (its three ufuncs' bits) in one pass over C-contiguous arrays of one shape and dtype
    (``out=``: the planner's buffer, which may be ``grad``'s own); other layouts: the three ufuncs."""
    if not (grad.flags.c_contiguous and result.flags.c_contiguous and grad.shape == result.shape
            and grad.dtype == result.dtype and grad.dtype in _ONE and (out is None or out.flags.c_contiguous)):
        t = np.multiply(result, result)
        np.subtract(1, t, out=t)
        return np.multiply(grad, t, out=out)
    if out is grad:         # (the planner's usual case: the dying gradient's buffer)
        _loaded["_tanh_grad_in_place"](grad, result, _ONE[grad.dtype])
        return out
    if out is None:
        out = np.empty_like(grad)
    _loaded["_tanh_grad_flat"](grad, result, _ONE[grad.dtype], out)
    return out


_ONE = {np.dtype(np.float32): np.float32(1), np.dtype(np.float64): np.float64(1)}


# SGD's update (optim/sgd.py, ``_arrays_sgd``) is eager code, not generated code: it never imports numba itself (an
# eager program does not pay numba's import), it takes the loop where a compiled graph has loaded numba already --
# ``torch.compile(loss_fn)`` leaves ``opt.step()`` eager, as torch's does. In the compiled MLP's step the loop takes
# ~85 us where NumPy's two passes and the new product array take ~180 (the product's memory is cold). From this
# size; below it NumPy's two ufunc calls cost about what numba's dispatch and the checks do (4096 float32: 2.3 us, 2.1).
ADD_SCALED_LOOP_MIN_SIZE = 1 << 12


def add_scaled(d, g, s):
    """``d += g * s`` in place (``s``: a NumPy scalar of ``d``'s dtype) as one loop, bit for bit NumPy's
    ``np.add(d, g * s, out=d)``; False, having changed nothing, where the loop does not apply: numba not loaded by
    a compiled graph of this process, ``config.jit`` off, a small operand, one that is not a C-contiguous NumPy
    array of ``d``'s shape and dtype (float32 or float64), a read-only ``d``, or operands that share memory."""
    if not _loaded or not config.jit or d.size < ADD_SCALED_LOOP_MIN_SIZE or type(d) is not np.ndarray \
            or type(g) is not np.ndarray or d.dtype not in _ONE or g.dtype != d.dtype or g.shape != d.shape \
            or not (d.flags.c_contiguous and g.flags.c_contiguous and d.flags.writeable) or np.may_share_memory(d, g):
        return False
    _loaded["_add_scaled"](d, g, s)
    return True


def addmm_relu_for(addmm, bias, mat1, mat2, relu):
    """Whether ``relu`` of ``addmm(bias, mat1, mat2)`` (seen through views) runs as ``addmm_relu``: float32 on the
    cpu, 2-D operands, a 1-D bias of the product's width, at least ``RELU_LOOP_MIN_SIZE`` elements (the
    FFN's first Linear and its ReLU, an MLP's hidden layers)."""
    shape = addmm.meta.get("shape") or ()
    return len(shape) == 2 and all(_float32_rows(v) for v in (addmm, bias, relu)) and \
        all(v.meta.get("dtype") == addmm.meta["dtype"] and len(v.meta.get("shape") or ()) == 2 for v in (mat1, mat2)) \
        and tuple(bias.meta["shape"]) == shape[-1:] and int(np.prod(shape)) >= RELU_LOOP_MIN_SIZE and enabled()


def addmm_relu(bias, mat1, mat2):
    """``relu(addmm(bias, mat1, mat2))`` as eager computes it (the product, the bias added into it, then ReLU),
    bit for bit, with the bias and ReLU in one pass over the product instead of two NumPy passes (a 2048x512
    product: ~0.5 ms for both in a Transformer step, the loop ~0.1-0.2; a 256x256 one: 22 -> 5 us). The addmm's own
    value is not kept."""
    p = mat1 @ mat2
    _loaded["_bias_relu_rows"](p, bias)
    return p


def _last_dim_rows(node, inp, dim):
    """Softmax over the last dimension, not empty, of a row-major float32 input, into a float32 result."""
    if not (_float32_rows(node) and _float32_rows(inp)):
        return False
    shape = node.meta["shape"]
    return dim % len(shape) == len(shape) - 1 and shape[-1] > 0


def formula(node, names, args):
    """A compiled stand-in for the derivative formula of ``node`` for its inputs ``names`` (same
    arguments, same results), or None."""
    name = node.target.__name__
    if name == "native_layer_norm.default" and kernel(node, args) is not None:
        return layer_norm_backward
    if name == "_softmax.default" and _last_dim_rows(node, node, args["dim"]) and enabled():
        return softmax_backward     # (the formula reads the result, not the input)
    if name == "mse_loss.default" and tuple(names) == ("self",) and _mse_rows(args):
        return mse_loss_backward
    return None


# -- the stand-ins: eager's kernel's and formula's signatures ------------------------------------
def layer_norm(input, normalized_shape, weight, bias, eps):
    """``native_layer_norm`` over the last dimension of a row-major float32 ``input``."""
    n = input.shape[-1]
    out = np.empty_like(input)
    stats = input.shape[:-1] + (1,)
    mean, rstd = np.empty(stats, np.float32), np.empty(stats, np.float32)
    _loaded["_layer_norm_rows"](input.reshape(1, -1, n), weight, bias, np.float32(eps), out.reshape(-1, n),
                                mean.reshape(-1), rstd.reshape(-1), None, None, False, False)
    return out, mean, rstd


def add_layer_norm(self, other, normalized_shape, weight, bias, eps):
    """``(s, native_layer_norm(s, ...))`` with ``s = self + other`` (float32, one shape, 2-D or 3-D; ``s``
    row-major, as eager's add makes it when ``self`` is): a residual add and the layer norm that reads it in one
    pass, each row of the sum written and normalized while it is in the L1 cache, where NumPy's add makes a
    pass of its own (0.04-0.08 ms on the Transformer's 2048x128, one operand transposed) -- with the same
    arithmetic as ``layer_norm`` after eager's add: the same bits. An operand laid out otherwise than row-major
    or transposed in its first two dims: the add, then ``layer_norm``."""
    n = self.shape[-1]
    total = np.empty(self.shape, np.float32)
    a, b = _rows_of(self), _rows_of(other)
    if a is None or b is None:
        np.add(self, other, out=total)
        return total, layer_norm(total, normalized_shape, weight, bias, eps)
    out = np.empty(self.shape, np.float32)
    stats = self.shape[:-1] + (1,)
    mean, rstd = np.empty(stats, np.float32), np.empty(stats, np.float32)
    _loaded["_layer_norm_rows"](a[0], weight, bias, np.float32(eps), out.reshape(-1, n), mean.reshape(-1),
                                rstd.reshape(-1), b[0], total.reshape(-1, n), a[1], b[1])
    return total, (out, mean, rstd)


def _rows_of(v):
    """``(array, swapped)``: ``v`` (2-D or 3-D) as a 3-D row-major array, or as the row-major array of its first
    two dims swapped (``swapped``); None if it is neither."""
    v = v if v.ndim == 3 else v[None]
    if v.flags.c_contiguous:
        return v, False
    t = v.transpose(1, 0, 2)
    return (t, True) if t.flags.c_contiguous else None


def layer_norm_backward(grad, input, normalized_shape, result1, result2, weight, bias, output_mask, other_grad=None):
    """``native_layer_norm``'s derivative formula (``native_layer_norm_backward``), for ``layer_norm``'s
    cases: (dx, dweight, dbias), None where ``output_mask`` says no. ``other_grad``: a second term of the
    output's gradient (the generated code's ``grad + other_grad``, added in the loop: the same values)."""
    n = input.shape[-1]
    g = np.ascontiguousarray(grad)    # (eager's kernel reads a contiguous copy too)
    g2 = None if other_grad is None else np.ascontiguousarray(other_grad).reshape(-1, n)
    dx, dw, db = np.empty_like(input), np.empty_like(weight), np.empty_like(bias)
    _loaded["_layer_norm_backward_rows"](g.reshape(-1, n), input.reshape(-1, n), result1.reshape(-1),
                                         result2.reshape(-1), weight, dx.reshape(-1, n), dw, db, g2)
    return tuple(v if keep else None for v, keep in zip((dx, dw, db), output_mask))


def mse_loss(self, target, reduction=1):
    """``mse_loss`` (mean or sum) of two row-major float32 arrays of one shape: one pass, summed in float64
    (eager sums the squares NumPy's pairwise way in float32: the two agree to float32 rounding)."""
    total = _loaded["_squared_error_sum"](self.reshape(-1), target.reshape(-1))
    if reduction == 1:
        return np.asarray(np.float32(total) / np.float32(self.size))
    return np.asarray(np.float32(total))


def mse_loss_backward(grad, self, target, reduction):
    """``mse_loss``'s formula for ``self``, ``(self - target) * (grad * 2 / numel)`` (or ``* 2`` for a sum),
    in one pass with eager's operations: eager's bits."""
    c = grad * (2.0 * (1.0 / self.size if reduction == 1 else 1.0))     # (eager's kernel: float32, 0-d)
    out = np.empty_like(self)
    _loaded["_scaled_difference"](self.reshape(-1), target.reshape(-1), np.float32(c), out.reshape(-1))
    return out


def threshold_grad(grad, result, out=None):
    """``lowering.threshold_grad``'s results (its signature: the planner may give ``out=``), bit for bit, in
    one pass over row-major arrays of one shape and dtype; other layouts call it."""
    from .lowering import threshold_grad as numpy_threshold_grad     # (lowering imports this module)
    if not (grad.flags.c_contiguous and result.flags.c_contiguous and grad.shape == result.shape
            and grad.dtype == result.dtype and (out is None or out.flags.c_contiguous)):
        return numpy_threshold_grad(grad, result, out)
    if out is None:
        out = np.empty_like(grad)
    elif out is grad:        # (the planner's usual case: the dying gradient's buffer; ``ctypes.data`` costs ~3 us)
        _loaded["_threshold_grad_in_place"](grad.reshape(-1), result.reshape(-1))
        return out
    _loaded["_threshold_grad_flat"](grad.reshape(-1), result.reshape(-1), out.reshape(-1))
    return out


def softmax(self, dim, half_to_float):
    """``_softmax`` over the last dimension of a row-major float32 input."""
    n = self.shape[-1]
    out = np.empty_like(self)
    _loaded["_softmax_rows"](self.reshape(-1, n), out.reshape(-1, n), np.empty(n, np.int32), False)
    return out


def log_softmax(self, dim, half_to_float):
    """``_log_softmax`` over the last dimension of a row-major float32 input."""
    n = self.shape[-1]
    out = np.empty_like(self)
    _loaded["_softmax_rows"](self.reshape(-1, n), out.reshape(-1, n), np.empty(n, np.int32), True)
    return out


def nll_loss_forward(self, target, weight, reduction, ignore_index):
    """``nll_loss_forward`` (no class weights, 'mean' or 'sum') of a row-major float32 ``N x C`` input, as eager's
    kernel computes it -- the same per-row losses, summed by NumPy as eager sums them, divided by the kept rows'
    count: eager's bits -- with the targets' check and the pick in one loop (eager's kernel: ~15 NumPy calls on
    arrays of N elements, 256 rows: ~12 us, the loop and the sum ~2.5). A target out of range raises eager's
    ``IndexError``."""
    losses = np.empty(self.shape[0], self.dtype)
    kept = _loaded["_nll_losses"](self, target, ignore_index, losses)
    if kept < 0:
        raise IndexError(f"Target {int(target[-1 - kept])} is out of bounds.")
    total = np.asarray(kept, self.dtype)
    loss = losses.sum(dtype=self.dtype)
    if reduction == 1:
        if kept:
            loss = loss / total
        else:
            with np.errstate(invalid="ignore", divide="ignore"):    # everything ignored: nan, as eager's
                loss = loss / total
    return np.asarray(loss, dtype=self.dtype), total


def log_softmax_nll_grad_for(log_softmax_node):
    """Whether cross-entropy's fused backward (``lowering.log_softmax_nll_grad``) over ``log_softmax_node``'s float32
    rows runs as the loop."""
    return _cross_entropy_rows(log_softmax_node) and enabled()


def log_softmax_nll_grad(grad, log_probs, target, total_weight, ignore_index, mean):
    """``lowering.log_softmax_nll_grad`` (its arguments, its results to float32 rounding: the exponential is the
    loop's) in one pass over the rows (256x10: ~30 us -> ~5). A target out of range raises eager's
    ``IndexError``."""
    coef = -(grad / total_weight) if mean else -grad
    out = np.empty_like(log_probs)
    bad = _loaded["_log_softmax_nll_grad_rows"](log_probs, target, np.float32(coef), ignore_index, out,
                                                np.empty(log_probs.shape[1], np.int32))
    if bad != -1:
        raise IndexError(f"Target {int(target[-1 - bad])} is out of bounds.")
    return out


def softmax_backward(grad, result, dim):
    """``_softmax``'s derivative formula over the last dimension of a row-major float32 result."""
    n = result.shape[-1]
    g = np.ascontiguousarray(grad)
    out = np.empty_like(result)
    _loaded["_softmax_backward_rows"](g.reshape(-1, n), result.reshape(-1, n), out.reshape(-1, n))
    return out


__all__ = ["enabled", "kernel", "formula", "threshold_grad_for", "addmm_relu_for", "addmm_relu", "add_layer_norm_for",
           "add_layer_norm", "mse_loss", "log_softmax", "nll_loss_forward",
           "log_softmax_nll_grad_for", "log_softmax_nll_grad", "tanh_grad_for", "tanh_grad",
           "mse_loss_backward", "layer_norm", "layer_norm_backward", "softmax", "softmax_backward", "threshold_grad"]
