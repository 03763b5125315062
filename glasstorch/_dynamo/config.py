"""torch._dynamo.config: the knobs glasstorch's compile reads."""
# how many specialisations (cache entries) one compiled function keeps before running eagerly
recompile_limit = 8
cache_size_limit = recompile_limit      # the older name
# accepted for torch's scripts; glasstorch always specialises shapes (see README, "Where glasstorch differs")
automatic_dynamic_shapes = True
capture_scalar_outputs = False
suppress_errors = False
verbose = False
# glasstorch's own: a Linear's weight gradient computed in the weight's layout as one statement, ``g.T @ x``
# (the product eager's two formulas make -- mm_mat2_backward's ``(g.T @ x).T``, then t()'s -- bit for
# bit); likewise bmm's gradients in their operands' layouts (attention's q, k, v; lowering.bmm_grad: a
# column-major operand's may differ from eager's in the last bit). False: the formulas called. Read when
# code is generated.
weight_grad_in_weight_layout = True
# glasstorch's own: a bias's gradient (a gradient summed over every dim but the last, as a Linear's or a
# broadcast add's bias gets it) computed as one matrix-vector product with ones, ``ones @ g.reshape(-1, n)``
# (BLAS's gemv reads the gradient once, 2-4x faster than NumPy's reduction over the rows), as eager's
# softmax sums its rows of more than 16 (ops/reduction.py ``_sum_kept``); another order of summation than eager's
# ``g.sum(0)``, so it may differ from eager's in float32 rounding. False: eager's sums, bit for bit. Read when
# code is generated.
bias_grad_as_gemv = True
# glasstorch's own: the generated code runs layer norm's and softmax's forward and backward (float32)
# and ReLU's backward on large arrays as compiled loops when numba is installed (``pip install
# glasstorch[jit]``; _dynamo/jit.py): one or two passes over memory where NumPy makes several; layer norm
# and softmax equal eager's to float32 rounding, ReLU's backward bit for bit; a large Linear followed by ReLU
# runs its bias add and ReLU as one loop over the product, bit for bit; a residual add runs in the loop of the
# layer norm after it (the sum bit for bit eager's add); a large float32 mse_loss is one pass
# each way (its forward sums in float64: eager's to float32 rounding; its backward bit for bit). False: NumPy's
# kernels, eager's bits. Read when code is generated -- and by SGD's step, which runs its update of a large
# parameter as one loop (bit for bit) once a compiled graph has loaded numba (jit.add_scaled).
jit = True
