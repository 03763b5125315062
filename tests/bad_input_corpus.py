"""The bad-input corpus: erroneous and edge-case calls PyTorch users really make.

Each case is ``(name, call)`` where ``call(T)`` runs the same program on a torch-like module ``T``
(real torch, or glasstorch). tests/test_bad_input.py runs every case on both and compares what
happens: the exception type must be torch's (or both succeed), and glasstorch's message must name the
problem. Cases are grouped by family and most families are generated from a table, so a new op or a
new kind of mistake is one line.

Helpers take ``T`` and build small inputs deterministically (no randomness: both libraries must see
the same values).
"""
import io
import math


def R(T, *shape, dtype=None):
    """A float tensor 0, 1, 2, ... of the given shape (deterministic, so both libraries agree)."""
    n = math.prod(shape)
    return T.arange(float(n), dtype=dtype or T.float32).reshape(shape)


def I(T, *shape):
    n = math.prod(shape)
    return T.arange(n).reshape(shape)


CASES = []


def case(name):
    def deco(fn):
        CASES.append((name, fn))
        return fn
    return deco


def add(name, fn):
    CASES.append((name, fn))


# --- Broadcasting: shapes that cannot broadcast, on every binary op people use ------------------
_BINARY = {
    "add": lambda T, a, b: T.add(a, b), "sub": lambda T, a, b: a - b, "mul": lambda T, a, b: a * b,
    "div": lambda T, a, b: a / b, "floor_divide": lambda T, a, b: a // b, "remainder": lambda T, a, b: a % b,
    "pow": lambda T, a, b: T.pow(a, b), "maximum": lambda T, a, b: T.maximum(a, b),
    "minimum": lambda T, a, b: T.minimum(a, b), "atan2": lambda T, a, b: T.atan2(a, b),
    "where": lambda T, a, b: T.where(a > 1, a, b), "eq": lambda T, a, b: a == b, "lt": lambda T, a, b: a < b,
    "ge": lambda T, a, b: T.ge(a, b), "fmod": lambda T, a, b: T.fmod(a, b), "hypot": lambda T, a, b: T.hypot(a, b),
    "clamp_min_tensor": lambda T, a, b: T.clamp(a, min=b), "clamp_max_tensor": lambda T, a, b: T.clamp(a, max=b),
    "lerp": lambda T, a, b: T.lerp(a, b, 0.5), "allclose": lambda T, a, b: T.allclose(a, b),
    "isclose": lambda T, a, b: T.isclose(a, b), "copysign": lambda T, a, b: T.copysign(a, b),
    "fmax": lambda T, a, b: T.fmax(a, b), "logaddexp": lambda T, a, b: T.logaddexp(a, b),
    "xlogy": lambda T, a, b: T.xlogy(a, b), "iadd": lambda T, a, b: a.add_(b), "imul": lambda T, a, b: a.mul_(b),
    "addcmul": lambda T, a, b: T.addcmul(a, a, b), "addcdiv": lambda T, a, b: T.addcdiv(a, a, b),
    "cosine_similarity": lambda T, a, b: T.nn.functional.cosine_similarity(a, b),
    "pairwise_distance": lambda T, a, b: T.nn.functional.pairwise_distance(a, b),
    "mse_loss": lambda T, a, b: T.nn.functional.mse_loss(a, b),
    "l1_loss": lambda T, a, b: T.nn.functional.l1_loss(a, b),
    "smooth_l1_loss": lambda T, a, b: T.nn.functional.smooth_l1_loss(a, b),
    "bce": lambda T, a, b: T.nn.functional.binary_cross_entropy(T.sigmoid(a), T.sigmoid(b)),
    "bce_logits": lambda T, a, b: T.nn.functional.binary_cross_entropy_with_logits(a, b),
    "logical_and": lambda T, a, b: T.logical_and(a, b), "bitwise_and": lambda T, a, b: T.bitwise_and(a.long(), b.long()),
}
for _op, _fn in _BINARY.items():
    add(f"broadcast/{_op}", lambda T, f=_fn: f(T, R(T, 2, 3), R(T, 4)))
for _op in ("add", "mul", "maximum", "where", "atan2", "pow"):
    add(f"broadcast/{_op}/3d", lambda T, f=_BINARY[_op]: f(T, R(T, 2, 3, 4), R(T, 3, 3)))
add("broadcast/iadd_grows_self", lambda T: R(T, 3).add_(R(T, 2, 3)))
add("broadcast/expand_bad", lambda T: R(T, 2, 3).expand(4, 3))
add("broadcast/expand_fewer_dims", lambda T: R(T, 2, 3).expand(3))
add("broadcast/broadcast_tensors", lambda T: T.broadcast_tensors(R(T, 2), R(T, 3)))
add("broadcast/broadcast_to", lambda T: T.broadcast_to(R(T, 2, 3), (3, 3)))
add("broadcast/broadcast_shapes", lambda T: T.broadcast_shapes((2, 3), (4,)))
add("broadcast/expand_as", lambda T: R(T, 2, 3).expand_as(R(T, 4)))
add("broadcast/masked_fill_mask_shape", lambda T: R(T, 2, 3).masked_fill(T.ones(4, dtype=T.bool), 0.0))
add("broadcast/out_of_place_inplace_mul", lambda T: R(T, 1, 3).mul_(R(T, 2, 3)))

# --- Matrix products: wrong inner sizes, wrong ranks ---------------------------------------------
add("linalg/mm_inner", lambda T: T.mm(R(T, 2, 3), R(T, 4, 5)))
add("linalg/mm_1d", lambda T: T.mm(R(T, 3), R(T, 3, 2)))
add("linalg/mm_3d", lambda T: T.mm(R(T, 2, 2, 2), R(T, 2, 2)))
add("linalg/matmul_inner", lambda T: T.matmul(R(T, 2, 3), R(T, 4, 5)))
add("linalg/matmul_0d", lambda T: T.matmul(T.tensor(1.0), R(T, 3)))
add("linalg/matmul_batch", lambda T: T.matmul(R(T, 2, 3, 4), R(T, 3, 4, 5)))
add("linalg/matmul_vec", lambda T: R(T, 3) @ R(T, 4))
add("linalg/matmul_mat_vec", lambda T: R(T, 2, 3) @ R(T, 4))
add("linalg/bmm_2d", lambda T: T.bmm(R(T, 2, 3), R(T, 3, 2)))
add("linalg/bmm_batch", lambda T: T.bmm(R(T, 2, 3, 4), R(T, 3, 4, 5)))
add("linalg/bmm_inner", lambda T: T.bmm(R(T, 2, 3, 4), R(T, 2, 5, 5)))
add("linalg/mv_inner", lambda T: T.mv(R(T, 2, 3), R(T, 4)))
add("linalg/mv_2d_vec", lambda T: T.mv(R(T, 2, 3), R(T, 3, 1)))
add("linalg/dot_size", lambda T: T.dot(R(T, 3), R(T, 4)))
add("linalg/dot_2d", lambda T: T.dot(R(T, 2, 2), R(T, 2, 2)))
add("linalg/dot_dtype", lambda T: T.dot(R(T, 3), I(T, 3)))
add("linalg/mm_dtype", lambda T: T.mm(R(T, 2, 2), R(T, 2, 2, dtype=T.float64)))
add("linalg/matmul_dtype", lambda T: R(T, 2, 2) @ I(T, 2, 2))
add("linalg/addmm_shape", lambda T: T.addmm(R(T, 4, 4), R(T, 2, 3), R(T, 3, 5)))
add("linalg/addmm_inner", lambda T: T.addmm(R(T, 2, 5), R(T, 2, 3), R(T, 4, 5)))
add("linalg/outer_2d", lambda T: T.outer(R(T, 2, 2), R(T, 3)))
add("linalg/inner_size", lambda T: T.inner(R(T, 3), R(T, 4)))
add("linalg/einsum_bad", lambda T: T.einsum("ij,jk->ik", R(T, 2, 3), R(T, 4, 5)))
add("linalg/einsum_operands", lambda T: T.einsum("ij,jk->ik", R(T, 2, 3)))
add("linalg/tensordot", lambda T: T.tensordot(R(T, 2, 3), R(T, 4, 5), dims=1))
add("linalg/inverse_singular", lambda T: T.linalg.inv(T.zeros(3, 3)))
add("linalg/inverse_nonsquare", lambda T: T.inverse(R(T, 2, 3)))
add("linalg/cholesky_not_pd", lambda T: T.linalg.cholesky(-T.eye(3)))
add("linalg/cholesky_old", lambda T: T.cholesky(-T.eye(2)))
add("linalg/det_nonsquare", lambda T: T.det(R(T, 2, 3)))
add("linalg/det_1d", lambda T: T.linalg.det(R(T, 3)))
add("linalg/solve_singular", lambda T: T.linalg.solve(T.zeros(2, 2), R(T, 2)))
add("linalg/solve_shape", lambda T: T.linalg.solve(T.eye(2), R(T, 3)))
add("linalg/inv_int", lambda T: T.linalg.inv(I(T, 2, 2)))
add("linalg/norm_bad_ord", lambda T: T.linalg.norm(R(T, 3), ord="fro"))
add("linalg/cross_size", lambda T: T.linalg.cross(R(T, 2), R(T, 2)))
add("linalg/trace_1d", lambda T: T.trace(R(T, 3)))
add("linalg/diag_3d", lambda T: T.diag(R(T, 2, 2, 2)))

# --- Dims out of range ----------------------------------------------------------------------------
_DIM_OPS = {
    "sum": lambda T, x, d: x.sum(d), "mean": lambda T, x, d: x.mean(d), "prod": lambda T, x, d: x.prod(d),
    "max": lambda T, x, d: x.max(d), "min": lambda T, x, d: x.min(dim=d), "argmax": lambda T, x, d: x.argmax(d),
    "argmin": lambda T, x, d: T.argmin(x, d), "amax": lambda T, x, d: T.amax(x, d), "std": lambda T, x, d: x.std(d),
    "var": lambda T, x, d: x.var(d), "logsumexp": lambda T, x, d: T.logsumexp(x, d), "norm": lambda T, x, d: x.norm(dim=d),
    "cumsum": lambda T, x, d: x.cumsum(d), "cumprod": lambda T, x, d: T.cumprod(x, d), "softmax": lambda T, x, d: x.softmax(d),
    "log_softmax": lambda T, x, d: T.log_softmax(x, d), "F.softmax": lambda T, x, d: T.nn.functional.softmax(x, dim=d),
    "squeeze": lambda T, x, d: x.squeeze(d), "unsqueeze": lambda T, x, d: x.unsqueeze(d + 1),
    "transpose": lambda T, x, d: x.transpose(0, d), "flatten": lambda T, x, d: x.flatten(d),
    "flip": lambda T, x, d: x.flip(d), "roll": lambda T, x, d: x.roll(1, d), "sort": lambda T, x, d: x.sort(d),
    "argsort": lambda T, x, d: x.argsort(d), "topk": lambda T, x, d: x.topk(1, d), "chunk": lambda T, x, d: x.chunk(2, d),
    "split": lambda T, x, d: x.split(1, d), "unbind": lambda T, x, d: x.unbind(d), "select": lambda T, x, d: x.select(d, 0),
    "narrow": lambda T, x, d: x.narrow(d, 0, 1), "gather": lambda T, x, d: x.gather(d, I(T, 2, 3) * 0),
    "index_select": lambda T, x, d: x.index_select(d, I(T, 1)), "movedim": lambda T, x, d: x.movedim(0, d),
    "all": lambda T, x, d: (x > 0).all(d), "any": lambda T, x, d: (x > 0).any(d), "count_nonzero": lambda T, x, d: T.count_nonzero(x, d),
    "median": lambda T, x, d: x.median(d), "mode": lambda T, x, d: x.mode(d), "kthvalue": lambda T, x, d: x.kthvalue(1, d),
    "diff": lambda T, x, d: T.diff(x, dim=d), "normalize": lambda T, x, d: T.nn.functional.normalize(x, dim=d),
    "cummax": lambda T, x, d: T.cummax(x, d), "size": lambda T, x, d: x.size(d), "stride": lambda T, x, d: x.stride(d),
    "unflatten": lambda T, x, d: x.unflatten(d, (1, 2)), "permute_dup": lambda T, x, d: x.permute(0, 0),
    "permute_len": lambda T, x, d: x.permute(0, 1, 2),
}
for _op, _fn in _DIM_OPS.items():
    add(f"dim/{_op}/2", lambda T, f=_fn: f(T, R(T, 2, 3), 2))
for _op in ("sum", "softmax", "squeeze", "transpose", "cumsum", "max", "argmax", "select", "size", "flatten"):
    add(f"dim/{_op}/-3", lambda T, f=_DIM_OPS[_op]: f(T, R(T, 2, 3), -3))
add("dim/cat", lambda T: T.cat([R(T, 2, 3), R(T, 2, 3)], dim=2))
add("dim/stack", lambda T: T.stack([R(T, 2, 3), R(T, 2, 3)], dim=4))
add("dim/sum_tuple_dup", lambda T: R(T, 2, 3).sum((0, 0)))
add("dim/sum_tuple_range", lambda T: R(T, 2, 3).sum((0, 5)))
add("dim/0d_sum_1", lambda T: T.tensor(1.0).sum(1))
add("dim/0d_softmax_1", lambda T: T.tensor(1.0).softmax(1))
add("dim/float_dim", lambda T: R(T, 2, 3).sum(1.0))
add("dim/str_dim", lambda T: R(T, 2, 3).sum("a"))
add("dim/squeeze_tuple", lambda T: R(T, 1, 3).squeeze((0, 3)))

# --- Indices out of range, bad index types --------------------------------------------------------
add("index/int_range", lambda T: R(T, 3)[3])
add("index/neg_range", lambda T: R(T, 3)[-4])
add("index/2d_range", lambda T: R(T, 2, 3)[0, 3])
add("index/too_many", lambda T: R(T, 2, 3)[0, 0, 0])
add("index/0d_int", lambda T: T.tensor(1.0)[0])
add("index/float", lambda T: R(T, 3)[1.5])
add("index/str", lambda T: R(T, 3)["a"])
add("index/none_list_float", lambda T: R(T, 3)[[0.5, 1.0]])
add("index/long_tensor_range", lambda T: R(T, 3)[T.tensor([0, 5])])
add("index/long_tensor_neg", lambda T: R(T, 3)[T.tensor([-4])])
add("index/float_tensor", lambda T: R(T, 3)[T.tensor([0.0, 1.0])])
add("index/bool_mask_shape", lambda T: R(T, 3)[T.tensor([True, False])])
add("index/bool_mask_2d_shape", lambda T: R(T, 2, 3)[T.ones(3, 2, dtype=T.bool)])
add("index/list_range", lambda T: R(T, 3)[[0, 3]])
add("index/empty_list", lambda T: R(T, 3)[[]])
add("index/setitem_range", lambda T: R(T, 3).__setitem__(3, 1.0))
add("index/setitem_shape", lambda T: R(T, 2, 3).__setitem__(0, R(T, 4)))
add("index/setitem_list_range", lambda T: R(T, 3).__setitem__([0, 5], 1.0))
add("index/slice_step0", lambda T: R(T, 3)[::0])
add("index/slice_neg_step", lambda T: R(T, 3)[::-1])
add("index/slice_float", lambda T: R(T, 3)[0:1.5])
add("index/gather_range", lambda T: R(T, 2, 3).gather(1, T.tensor([[0, 5], [1, 0]])))
add("index/gather_float_index", lambda T: R(T, 2, 3).gather(1, T.tensor([[0.0]])))
add("index/gather_rank", lambda T: R(T, 2, 3).gather(1, T.tensor([0, 1])))
add("index/scatter_range", lambda T: T.zeros(2, 3).scatter(1, T.tensor([[5]]), 1.0))
add("index/scatter_float_index", lambda T: T.zeros(2, 3).scatter(1, T.tensor([[0.0]]), 1.0))
add("index/scatter_add_dtype", lambda T: T.zeros(2, 3).scatter_add(1, T.tensor([[0]]), I(T, 1, 1)))
add("index/index_select_range", lambda T: R(T, 2, 3).index_select(0, T.tensor([2])))
add("index/index_select_float", lambda T: R(T, 2, 3).index_select(0, T.tensor([0.0])))
add("index/index_select_2d_index", lambda T: R(T, 2, 3).index_select(0, T.tensor([[0]])))
add("index/index_add_shape", lambda T: T.zeros(3, 2).index_add(0, T.tensor([0, 1]), R(T, 3, 2)))
add("index/index_add_range", lambda T: T.zeros(3, 2).index_add(0, T.tensor([5]), R(T, 1, 2)))
add("index/index_fill_range", lambda T: T.zeros(3).index_fill(0, T.tensor([5]), 1.0))
add("index/take_range", lambda T: R(T, 2, 3).take(T.tensor([6])))
add("index/embedding_range", lambda T: T.nn.functional.embedding(T.tensor([5]), R(T, 3, 2)))
add("index/embedding_float", lambda T: T.nn.functional.embedding(T.tensor([1.0]), R(T, 3, 2)))
add("index/embedding_module_range", lambda T: T.nn.Embedding(3, 2)(T.tensor([3])))
add("index/one_hot_range", lambda T: T.nn.functional.one_hot(T.tensor([3]), 3))
add("index/one_hot_float", lambda T: T.nn.functional.one_hot(T.tensor([1.0]), 3))
add("index/one_hot_negative", lambda T: T.nn.functional.one_hot(T.tensor([-1]), 3))
add("index/masked_select_shape", lambda T: R(T, 3).masked_select(T.tensor([True, False])))
add("index/masked_fill_float_mask", lambda T: R(T, 3).masked_fill(T.tensor([1.0, 0.0, 1.0]), 0.0))
add("index/masked_fill_tensor_value_1d", lambda T: R(T, 3).masked_fill(T.tensor([True, False, True]), R(T, 2)))
add("index/narrow_range", lambda T: R(T, 3).narrow(0, 2, 2))
add("index/select_range", lambda T: R(T, 2, 3).select(1, 3))
add("index/topk_k", lambda T: R(T, 3).topk(4))
add("index/kthvalue_k", lambda T: R(T, 3).kthvalue(4))
add("index/repeat_interleave_neg", lambda T: R(T, 3).repeat_interleave(-1))

# --- Shapes: view/reshape/cat/stack ----------------------------------------------------------------
add("shape/view_size", lambda T: R(T, 2, 3).view(4, 2))
add("shape/view_two_minus1", lambda T: R(T, 2, 3).view(-1, -1))
add("shape/view_neg", lambda T: R(T, 2, 3).view(-2, 3))
add("shape/view_float", lambda T: R(T, 2, 3).view(2.0, 3))
add("shape/view_noncontig", lambda T: R(T, 2, 3).t().view(6))
add("shape/view_dtype_str", lambda T: R(T, 2, 3).view("float64"))
add("shape/reshape_size", lambda T: R(T, 2, 3).reshape(5))
add("shape/reshape_minus1_bad", lambda T: R(T, 2, 3).reshape(-1, 4))
add("shape/reshape_minus1_zero", lambda T: T.zeros(0).reshape(-1, 0))
add("shape/reshape_str", lambda T: R(T, 2, 3).reshape("a"))
add("shape/cat_shapes", lambda T: T.cat([R(T, 2, 3), R(T, 2, 4)]))
add("shape/cat_ranks", lambda T: T.cat([R(T, 2, 3), R(T, 3)]))
add("shape/cat_empty_list", lambda T: T.cat([]))
add("shape/cat_list_of_lists", lambda T: T.cat([R(T, 2), [1.0, 2.0]]))
add("shape/cat_tensor_not_seq", lambda T: T.cat(R(T, 2, 3)))
add("shape/cat_0d", lambda T: T.cat([T.tensor(1.0), T.tensor(2.0)]))
add("shape/cat_legacy_empty", lambda T: T.cat([T.tensor([]), R(T, 2, 3)]).shape)
add("shape/cat_dtypes", lambda T: T.cat([R(T, 2), I(T, 2)]).dtype)
add("shape/stack_shapes", lambda T: T.stack([R(T, 2), R(T, 3)]))
add("shape/stack_empty", lambda T: T.stack([]))
add("shape/stack_ints", lambda T: T.stack([1, 2]))
add("shape/stack_tensor", lambda T: T.stack(R(T, 2, 3)).shape)
add("shape/hstack_shape", lambda T: T.hstack([R(T, 2, 3), R(T, 3, 3)]))
add("shape/vstack_shape", lambda T: T.vstack([R(T, 2, 3), R(T, 2, 4)]))
add("shape/split_sizes_sum", lambda T: R(T, 6).split([2, 3]))
add("shape/split_zero", lambda T: R(T, 6).split(0))
add("shape/chunk_zero", lambda T: R(T, 6).chunk(0))
add("shape/repeat_fewer", lambda T: R(T, 2, 3).repeat(2))
add("shape/repeat_neg", lambda T: R(T, 2).repeat(-1, 1))
add("shape/tile_neg", lambda T: T.tile(R(T, 2), (-1,)))
add("shape/expand_neg_new", lambda T: R(T, 3).expand(-1, 3))
add("shape/unflatten_size", lambda T: R(T, 6).unflatten(0, (4, 2)))
add("shape/squeeze_non1", lambda T: R(T, 2, 3).squeeze(0).shape)
add("shape/t_3d", lambda T: R(T, 2, 2, 2).t())
add("shape/permute_none", lambda T: R(T, 2, 3).permute())
add("shape/flatten_start_after_end", lambda T: R(T, 2, 3, 4).flatten(2, 1))
add("shape/diag_embed_ok", lambda T: T.diag_embed(R(T, 2)).shape)
add("shape/unfold_size", lambda T: R(T, 3).unfold(0, 4, 1))
add("shape/unfold_step0", lambda T: R(T, 3).unfold(0, 2, 0))
add("shape/view_as_shape", lambda T: R(T, 6).view_as(R(T, 4)))
add("shape/reshape_as", lambda T: R(T, 6).reshape_as(R(T, 4)))
add("shape/resize_as_size_neg", lambda T: T.zeros(-1))

# --- Creation: bad sizes, dtypes, values -----------------------------------------------------------
add("create/zeros_neg", lambda T: T.zeros(2, -3))
add("create/ones_float_size", lambda T: T.ones(2.5))
add("create/empty_neg", lambda T: T.empty(-1))
add("create/randn_neg", lambda T: T.randn(-2))
add("create/rand_str", lambda T: T.rand("3"))
add("create/full_bad_size", lambda T: T.full(3, 1.0))
add("create/full_neg", lambda T: T.full((-1,), 1.0))
add("create/eye_neg", lambda T: T.eye(-1))
add("create/arange_step0", lambda T: T.arange(0, 10, 0))
add("create/arange_wrong_sign", lambda T: T.arange(0, 10, -1))
add("create/arange_nan", lambda T: T.arange(0, float("nan")))
add("create/arange_inf", lambda T: T.arange(0, float("inf")))
add("create/linspace_neg_steps", lambda T: T.linspace(0, 1, -1))
add("create/linspace_no_steps", lambda T: T.linspace(0, 1))
add("create/randint_low_ge_high", lambda T: T.randint(5, 5, (2,)))
add("create/randint_no_size", lambda T: T.randint(5))
add("create/randint_float_dtype", lambda T: T.randint(0, 5, (2,), dtype=T.float32).dtype)
add("create/randperm_neg", lambda T: T.randperm(-1))
add("create/dtype_str", lambda T: T.zeros(2, dtype="float32"))
add("create/dtype_numpy_type", lambda T: T.zeros(2, dtype=float))
add("create/dtype_int_obj", lambda T: T.tensor([1.0], dtype=3))
add("create/tensor_ragged", lambda T: T.tensor([[1, 2], [3]]))
add("create/tensor_str", lambda T: T.tensor(["a"]))
add("create/tensor_str_scalar", lambda T: T.tensor("a"))
add("create/tensor_none", lambda T: T.tensor(None))
add("create/tensor_dict", lambda T: T.tensor({"a": 1}))
add("create/tensor_mixed_list", lambda T: T.tensor([R(T, 2), R(T, 2)]))
add("create/tensor_overflow_2_64", lambda T: T.tensor(2 ** 64))
add("create/tensor_overflow_2_63", lambda T: T.tensor([2 ** 63]))
add("create/tensor_uint8_300", lambda T: T.tensor(300, dtype=T.uint8))
add("create/tensor_int8_200", lambda T: T.tensor([200], dtype=T.int8))
add("create/tensor_int32_big", lambda T: T.tensor([2 ** 40], dtype=T.int32))
add("create/tensor_neg_uint8", lambda T: T.tensor(-1, dtype=T.uint8))
add("create/tensor_float_to_int_dtype", lambda T: T.tensor(1.5, dtype=T.int64).item())
add("create/tensor_nan_to_int", lambda T: T.tensor(float("nan"), dtype=T.int64))
add("create/tensor_inf_to_int", lambda T: T.tensor([float("inf")], dtype=T.int32))
add("create/full_int_overflow", lambda T: T.full((2,), 2 ** 70))
add("create/zeros_like_str", lambda T: T.zeros_like("a"))
add("create/ones_like_list", lambda T: T.ones_like([1, 2]))
add("create/empty_huge", lambda T: T.empty(2 ** 62))
add("create/zeros_huge", lambda T: T.zeros(2 ** 40, 2 ** 20))
add("create/randn_huge", lambda T: T.randn(2 ** 40, 2 ** 20))
add("create/rand_too_big", lambda T: T.rand(2 ** 62))
add("create/repeat_huge", lambda T: T.ones(3).repeat(2 ** 40, 2 ** 18))
add("type/backward_gradient_int_grad_dtype", lambda T: _grad_after(T, lambda x: (x * 2).backward(T.tensor([1, 1]))))
add("create/device_bad", lambda T: T.zeros(2, device="gpu"))
add("create/device_bad_index", lambda T: T.device("cuda:x"))
add("create/device_neg_index", lambda T: T.device("cpu", -2))
add("create/device_int_str", lambda T: T.device("cpu:0:1"))
add("create/from_numpy_list", lambda T: T.from_numpy([1, 2]))
add("create/as_tensor_str", lambda T: T.as_tensor("abc"))
add("create/tensor_requires_grad_int", lambda T: T.tensor([1, 2], requires_grad=True))
add("create/zeros_requires_grad_int", lambda T: T.zeros(2, dtype=T.int64, requires_grad=True))
add("create/requires_grad_int_", lambda T: T.tensor([1, 2]).requires_grad_())
add("create/normal_neg_std", lambda T: T.normal(0.0, -1.0, (2,)))
add("create/normal_neg_std_tensor", lambda T: T.normal(T.zeros(2), -T.ones(2)))
add("create/bernoulli_p_gt_1", lambda T: T.bernoulli(T.tensor([1.5])))
add("create/bernoulli_p_neg", lambda T: T.bernoulli(T.tensor([-0.5])))
add("create/multinomial_neg", lambda T: T.multinomial(T.tensor([-1.0, 1.0]), 1))
add("create/multinomial_zero", lambda T: T.multinomial(T.tensor([0.0, 0.0]), 1))
add("create/multinomial_too_many", lambda T: T.multinomial(T.tensor([1.0, 1.0]), 3))
add("create/randn_generator_int", lambda T: T.randn(2, generator=3))
add("create/manual_seed_huge", lambda T: T.manual_seed(2 ** 70))
add("create/manual_seed_str", lambda T: T.manual_seed("a"))
add("create/manual_seed_float", lambda T: T.manual_seed(1.5))
add("create/set_default_dtype_int", lambda T: T.set_default_dtype(T.int64))
add("create/set_default_dtype_str", lambda T: T.set_default_dtype("float32"))
add("create/set_grad_enabled_str", lambda T: T.set_grad_enabled("yes"))
add("create/uniform_from_gt_to", lambda T: T.empty(2).uniform_(1.0, 0.0))
add("create/random_to_le_from", lambda T: T.empty(2).random_(5, 5))

# --- Dtypes: what torch refuses between dtypes ------------------------------------------------------
add("dtype/mean_int", lambda T: I(T, 3).mean())
add("dtype/mean_dtype_int", lambda T: R(T, 3).mean(dtype=T.int64))
add("dtype/std_int", lambda T: I(T, 3).std())
add("dtype/var_int", lambda T: I(T, 3).var())
add("dtype/softmax_int", lambda T: I(T, 3).softmax(0))
add("dtype/log_softmax_int", lambda T: T.log_softmax(I(T, 3), 0))
add("dtype/mse_loss_int", lambda T: T.nn.functional.mse_loss(I(T, 3), I(T, 3)))
add("dtype/l1_loss_int", lambda T: T.nn.functional.l1_loss(I(T, 3), I(T, 3)))
add("dtype/cross_entropy_float_target_shape", lambda T: T.nn.functional.cross_entropy(R(T, 2, 3), T.tensor([0.0, 1.0])))
add("dtype/cross_entropy_int_input", lambda T: T.nn.functional.cross_entropy(I(T, 2, 3), T.tensor([0, 1])))
add("type/cross_entropy_list_target", lambda T: T.nn.functional.cross_entropy(R(T, 3, 4), [1, 2, 3]))
add("type/cross_entropy_list_input", lambda T: T.nn.functional.cross_entropy([[1.0, 2.0]], T.tensor([0])))
add("type/nll_loss_list_target", lambda T: T.nn.functional.nll_loss(R(T, 3, 4), [1, 2, 3]))
add("type/nll_loss_list_input", lambda T: T.nn.functional.nll_loss([[1.0, 2.0]], T.tensor([0])))
add("dtype/nll_loss_float_target", lambda T: T.nn.functional.nll_loss(R(T, 2, 3), T.tensor([0.0, 1.0])))
add("dtype/nll_loss_int32_target", lambda T: T.nn.functional.nll_loss(R(T, 2, 3), T.tensor([0, 1], dtype=T.int32)).shape)
add("dtype/linear_int", lambda T: T.nn.Linear(3, 2)(I(T, 2, 3)))
add("dtype/linear_double", lambda T: T.nn.Linear(3, 2)(R(T, 2, 3, dtype=T.float64)))
add("dtype/conv_double", lambda T: T.nn.Conv2d(1, 1, 2)(R(T, 1, 1, 3, 3, dtype=T.float64)))
add("dtype/conv_int", lambda T: T.nn.Conv2d(1, 1, 2)(I(T, 1, 1, 3, 3)))
add("dtype/embedding_float_weight_int_idx32", lambda T: T.nn.Embedding(3, 2)(T.tensor([1], dtype=T.int32)).shape)
add("dtype/bitwise_float", lambda T: T.bitwise_and(R(T, 2), R(T, 2)))
add("dtype/invert_float", lambda T: ~R(T, 2))
add("dtype/lshift_float", lambda T: R(T, 2) << 1)
add("dtype/sqrt_int_ok", lambda T: T.sqrt(I(T, 2)).dtype)
add("dtype/iadd_float_into_int", lambda T: I(T, 2).add_(R(T, 2)))
add("dtype/imul_float_into_int", lambda T: I(T, 2).mul_(1.5))
add("dtype/idiv_int", lambda T: I(T, 2).div_(2))
add("dtype/ifloordiv_bool", lambda T: T.tensor([True]).add_(T.tensor([True])).dtype)
add("dtype/iadd_into_bool", lambda T: T.tensor([True]).add_(1))
add("dtype/neg_bool", lambda T: -T.tensor([True]))
add("dtype/sub_bool", lambda T: T.tensor([True]) - T.tensor([False]))
add("dtype/isub_bool_scalar", lambda T: T.tensor([1.0]) - True)
add("dtype/grad_int", lambda T: T.autograd.grad(I(T, 2).sum(), I(T, 2)))
add("dtype/backward_int_tensor", lambda T: I(T, 2).sum().backward())
add("dtype/type_bad", lambda T: R(T, 2).type("bad"))
add("dtype/type_bad_torch_name", lambda T: R(T, 2).type("torch.NotAType"))
add("dtype/to_str", lambda T: R(T, 2).to("float64"))
add("dtype/to_int", lambda T: R(T, 2).to(5))
add("dtype/to_bad_kw", lambda T: R(T, 2).to(dtype="float32"))
add("dtype/item_many", lambda T: R(T, 2).item())
add("dtype/item_empty", lambda T: T.zeros(0).item())
add("dtype/float_many", lambda T: float(R(T, 2)))
add("dtype/int_many", lambda T: int(R(T, 2)))
add("dtype/bool_many", lambda T: bool(R(T, 2)))
add("dtype/bool_empty", lambda T: bool(T.zeros(0)))
add("dtype/index_many", lambda T: [1, 2, 3][R(T, 2).long()])
add("dtype/index_float_0d", lambda T: [1, 2, 3][T.tensor(1.0)])
add("dtype/len_0d", lambda T: len(T.tensor(1.0)))
add("dtype/iter_0d", lambda T: list(T.tensor(1.0)))
add("dtype/numpy_requires_grad", lambda T: R(T, 2).requires_grad_().numpy())
add("dtype/np_array_requires_grad", lambda T: __import__("numpy").asarray(R(T, 2).requires_grad_()))
add("dtype/tolist_ok", lambda T: R(T, 2).tolist())
add("dtype/clamp_no_bounds", lambda T: R(T, 2).clamp())
add("dtype/clamp_min_gt_max", lambda T: R(T, 3).clamp(2, 1).tolist())
add("dtype/histc_int", lambda T: T.histc(I(T, 4)))
add("dtype/histc_bins0", lambda T: T.histc(R(T, 4), bins=0))
add("dtype/histc_max_lt_min", lambda T: T.histc(R(T, 4), bins=2, min=3, max=1))
add("dtype/bincount_neg", lambda T: T.bincount(T.tensor([-1, 2])))
add("dtype/bincount_float", lambda T: T.bincount(T.tensor([1.0])))
add("dtype/bincount_2d", lambda T: T.bincount(I(T, 2, 2)))
add("dtype/bincount_weights_shape", lambda T: T.bincount(T.tensor([1, 2]), weights=R(T, 3)))
add("dtype/where_cond_float", lambda T: T.where(R(T, 2), R(T, 2), R(T, 2)))
add("dtype/logical_not_ok", lambda T: T.logical_not(R(T, 2)).dtype)
add("dtype/isnan_ok", lambda T: T.isnan(I(T, 2)).tolist())
add("dtype/round_decimals_int", lambda T: T.round(I(T, 2), decimals=1))
add("dtype/ceil_bool", lambda T: T.ceil(T.tensor([True])))
add("dtype/abs_bool", lambda T: T.abs(T.tensor([True])))
add("dtype/erfinv_int_ok", lambda T: T.erfinv(T.tensor([0])).dtype)
add("dtype/pow_int_neg_exp", lambda T: T.pow(T.tensor([2]), -1))
add("dtype/int_pow_neg_tensor", lambda T: T.tensor([2]) ** T.tensor([-1]))
add("dtype/div_mode_bad", lambda T: T.div(R(T, 2), 2, rounding_mode="round"))
add("dtype/int_div_zero", lambda T: T.tensor([1]) // T.tensor([0]))
add("dtype/int_remainder_zero", lambda T: T.tensor([1]) % T.tensor([0]))
add("dtype/fmod_int_zero", lambda T: T.fmod(T.tensor([1]), 0))

# --- Empty tensors -----------------------------------------------------------------------------
add("empty/max", lambda T: T.zeros(0).max())
add("empty/min", lambda T: T.zeros(0).min())
add("empty/amax", lambda T: T.zeros(0).amax())
add("empty/amin", lambda T: T.amin(T.zeros(0, 3), 0))
add("empty/argmax", lambda T: T.zeros(0).argmax())
add("empty/argmin", lambda T: T.zeros(0).argmin())
add("empty/max_dim", lambda T: T.zeros(0, 3).max(0))
add("empty/max_dim_ok", lambda T: T.zeros(0, 3).max(1).values.shape)
add("empty/median", lambda T: T.zeros(0).median())
add("empty/kthvalue", lambda T: T.zeros(0).kthvalue(1))
add("empty/sum", lambda T: T.zeros(0).sum().item())
add("empty/mean", lambda T: T.zeros(0).mean().item())
add("empty/prod", lambda T: T.zeros(0).prod().item())
add("empty/std", lambda T: T.zeros(0).std().item())
add("empty/logsumexp", lambda T: T.logsumexp(T.zeros(0), 0).item())
add("empty/softmax", lambda T: T.zeros(0).softmax(0).shape)
add("empty/topk", lambda T: T.zeros(0).topk(1))
add("empty/mm", lambda T: T.mm(T.zeros(2, 0), T.zeros(0, 3)).tolist())
add("empty/cat", lambda T: T.cat([T.zeros(0, 3), T.zeros(0, 3)]).shape)
add("empty/linear", lambda T: T.nn.Linear(3, 2)(T.zeros(0, 3)).shape)
add("empty/cross_entropy", lambda T: T.nn.functional.cross_entropy(T.zeros(0, 3), T.zeros(0, dtype=T.long)).item())
add("empty/mse", lambda T: T.nn.functional.mse_loss(T.zeros(0), T.zeros(0)).item())
add("empty/batchnorm", lambda T: T.nn.BatchNorm1d(3)(T.zeros(0, 3)))
add("empty/batchnorm_one", lambda T: T.nn.BatchNorm1d(3)(T.zeros(1, 3)))
add("empty/conv", lambda T: T.nn.Conv2d(1, 1, 2)(T.zeros(0, 1, 3, 3)).shape)
add("empty/index", lambda T: T.zeros(0)[0])
add("empty/item", lambda T: T.zeros(0).item())
add("empty/quantile", lambda T: T.quantile(T.zeros(0), 0.5).item())
add("empty/quantile_q_range", lambda T: T.quantile(R(T, 3), 1.5))
add("empty/multinomial", lambda T: T.multinomial(T.zeros(0), 1))
add("empty/randint_empty", lambda T: T.randint(0, 5, (0,)).shape)
add("empty/unique", lambda T: T.unique(T.zeros(0)).shape)
add("empty/sort", lambda T: T.zeros(0).sort().values.shape)
add("empty/cumsum", lambda T: T.zeros(0).cumsum(0).shape)
add("empty/norm", lambda T: T.zeros(0).norm().item())
add("empty/histc", lambda T: T.histc(T.zeros(0), bins=3).tolist())
add("empty/bincount", lambda T: T.bincount(T.zeros(0, dtype=T.long)).tolist())
add("empty/layer_norm", lambda T: T.nn.LayerNorm(3)(T.zeros(0, 3)).shape)
add("empty/pool", lambda T: T.nn.functional.max_pool2d(T.zeros(1, 1, 0, 0), 2))
add("empty/embedding_bag", lambda T: T.nn.Embedding(3, 2)(T.zeros(0, dtype=T.long)).shape)

# --- Wrong argument types -----------------------------------------------------------------------
add("type/add_str", lambda T: R(T, 2) + "a")
add("type/add_list", lambda T: T.add(R(T, 2), [1.0, 2.0]))
add("type/add_none", lambda T: R(T, 2) + None)
add("type/mul_str", lambda T: R(T, 2) * "a")
add("type/exp_list", lambda T: T.exp([1.0]))
add("type/exp_float", lambda T: T.exp(1.0))
add("type/sum_list", lambda T: T.sum([1, 2]))
add("type/matmul_list", lambda T: R(T, 2) @ [1.0, 2.0])
add("type/mm_numpy", lambda T: T.mm(R(T, 2, 2), __import__("numpy").ones((2, 2), "float32")))
add("type/relu_numpy", lambda T: T.relu(__import__("numpy").ones(2)))
add("type/sigmoid_int", lambda T: T.sigmoid(3))
add("type/cat_none", lambda T: T.cat([R(T, 2), None]))
add("type/cat_tuple_ok", lambda T: T.cat((R(T, 2), R(T, 2))).shape)
add("type/stack_numpy", lambda T: T.stack([__import__("numpy").ones(2)]))
add("type/view_list_of_str", lambda T: R(T, 6).view(["a"]))
add("type/reshape_tensor_arg", lambda T: R(T, 6).reshape(R(T, 2)))
add("type/repeat_float", lambda T: R(T, 2).repeat(2.0))
add("type/transpose_str", lambda T: R(T, 2, 2).transpose("a", 1))
add("type/topk_float_k", lambda T: R(T, 3).topk(1.0))
add("type/requires_grad_str", lambda T: R(T, 2).requires_grad_("yes").requires_grad)
add("type/requires_grad_attr_str", lambda T: setattr(R(T, 2), "requires_grad", "yes"))
add("type/grad_assign_list", lambda T: setattr(R(T, 2).requires_grad_(), "grad", [1.0, 2.0]))
add("type/grad_assign_shape", lambda T: setattr(R(T, 2).requires_grad_(), "grad", R(T, 3)))
add("type/grad_assign_dtype", lambda T: setattr(R(T, 2).requires_grad_(), "grad", R(T, 2, dtype=T.float64)))
add("type/data_assign_list", lambda T: setattr(R(T, 2), "data", [1.0]))
add("type/shape_assign", lambda T: setattr(R(T, 2), "shape", (1, 2)))
add("type/unknown_method", lambda T: R(T, 2).not_a_method())
add("type/unknown_kwarg", lambda T: T.sum(R(T, 2), axis_name=0))
add("type/sum_axis_kw_ok", lambda T: T.sum(R(T, 2, 2), axis=0).tolist())
add("type/softmax_no_dim", lambda T: T.softmax(R(T, 2)))
add("type/too_many_args", lambda T: T.exp(R(T, 2), R(T, 2), R(T, 2)))
add("type/clamp_str", lambda T: R(T, 2).clamp(min="a"))
add("type/full_fill_str", lambda T: T.full((2,), "a"))
add("type/fill_tensor_1d", lambda T: R(T, 2).fill_(R(T, 2)))
add("type/index_put_str", lambda T: R(T, 2).__setitem__(0, "a"))
add("type/setitem_list_value", lambda T: R(T, 2).__setitem__(0, [1.0, 2.0]))
add("type/T_1d_ok", lambda T: R(T, 3).T.shape)
add("type/mT_1d", lambda T: R(T, 3).mT)
add("type/in_str", lambda T: "a" in R(T, 3))
add("type/hash_unhashable_ok", lambda T: hash(R(T, 3)) is not None)
add("type/no_grad_call_wrong", lambda T: T.no_grad(1))
add("type/backward_on_nonscalar", lambda T: R(T, 2).requires_grad_().mul(2).backward())
add("type/backward_no_grad", lambda T: R(T, 2).sum().backward())
add("type/backward_gradient_shape", lambda T: R(T, 2).requires_grad_().mul(2).backward(R(T, 3)))
add("type/backward_gradient_int", lambda T: R(T, 2).requires_grad_().mul(2).backward(T.tensor([1, 1])))
add("type/backward_gradient_list", lambda T: R(T, 2).requires_grad_().mul(2).backward([1.0, 1.0]))
add("type/backward_inputs_empty", lambda T: R(T, 2).requires_grad_().sum().backward(inputs=[]))
add("type/backward_inputs_nonleaf_ok", lambda T: R(T, 2).requires_grad_().sum().backward(inputs=[R(T, 2).requires_grad_()]))
add("type/grad_unused", lambda T: T.autograd.grad(R(T, 2).requires_grad_().sum(), [R(T, 2).requires_grad_()]))
add("type/grad_nonscalar", lambda T: T.autograd.grad(R(T, 2).requires_grad_() * 2, [R(T, 2).requires_grad_()]))
add("type/grad_input_not_tensor", lambda T: T.autograd.grad(R(T, 2).requires_grad_().sum(), [1.0]))


@case("autograd/second_backward")
def _second_backward(T):
    x = R(T, 2).requires_grad_()
    y = (x * x).sum()
    y.backward()
    y.backward()


@case("autograd/second_backward_scalar_ops")
def _second_backward_scalar(T):
    x = T.tensor(2.0, requires_grad=True)
    y = x * 3 + 1
    y.backward()
    y.backward()


@case("autograd/second_backward_exp")
def _second_backward_exp(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp().sum()
    y.backward()
    y.backward()


@case("autograd/inplace_on_leaf")
def _inplace_leaf(T):
    x = R(T, 2).requires_grad_()
    x.add_(1)


@case("autograd/inplace_version")
def _inplace_version(T):
    x = R(T, 2).requires_grad_()
    y = x.exp()
    z = y * 2
    y.add_(1)
    z.sum().backward()
    x.grad.tolist()


@case("autograd/inplace_version_sigmoid")
def _inplace_version_sigmoid(T):
    x = R(T, 2).requires_grad_()
    y = x.sigmoid()
    y.mul_(2)
    y.sum().backward()


@case("autograd/view_of_leaf_inplace")
def _view_leaf(T):
    x = R(T, 4).requires_grad_()
    x[0] = 1.0


@case("autograd/grad_of_nonleaf")
def _grad_nonleaf(T):
    import warnings
    x = R(T, 2).requires_grad_()
    y = x * 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return y.grad


@case("autograd/retain_grad_no_grad")
def _retain_grad(T):
    R(T, 2).retain_grad()


@case("autograd/detach_inplace_then_backward")
def _detach(T):
    x = R(T, 2).requires_grad_()
    y = x.exp()
    y.detach().zero_()
    y.sum().backward()


@case("autograd/requires_grad_nonleaf_false")
def _rg_nonleaf(T):
    x = R(T, 2).requires_grad_()
    (x * 2).requires_grad_(False)


@case("autograd/hook_not_callable")
def _hook(T):
    R(T, 2).requires_grad_().register_hook(3)


@case("autograd/hook_no_grad")
def _hook_no_grad(T):
    R(T, 2).register_hook(lambda g: g)


@case("autograd/function_wrong_grads")
def _function_grads(T):
    class F(T.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g

    x = R(T, 2).requires_grad_()
    F.apply(x, x).sum().backward()


@case("autograd/function_bad_grad_shape")
def _function_grad_shape(T):
    class F(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return T.ones(5)

    x = R(T, 2).requires_grad_()
    F.apply(x).sum().backward()


@case("autograd/function_called_directly")
def _function_direct(T):
    class F(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

    F()(R(T, 2))


# --- Mismatched devices ---------------------------------------------------------------------------
add("device/to_cuda", lambda T: R(T, 2).to("cuda"))
add("device/cuda_method", lambda T: R(T, 2).cuda())
add("device/zeros_cuda", lambda T: T.zeros(2, device="cuda"))
add("device/module_cuda", lambda T: T.nn.Linear(2, 2).cuda())
add("device/meta_add_cpu", lambda T: T.zeros(2, device="meta") + R(T, 2))
add("device/meta_item", lambda T: T.zeros(2, device="meta").sum().item())
add("device/meta_tolist", lambda T: T.zeros(2, device="meta").tolist())
add("device/meta_numpy", lambda T: T.zeros(2, device="meta").numpy())
add("device/meta_mm_cpu", lambda T: T.mm(T.zeros(2, 2, device="meta"), R(T, 2, 2)))
add("device/meta_linear_cpu_input", lambda T: T.nn.Linear(2, 2, device="meta")(R(T, 2)))
add("device/meta_cat_cpu", lambda T: T.cat([T.zeros(2, device="meta"), R(T, 2)]))
add("device/meta_print_ok", lambda T: repr(T.zeros(2, device="meta")) != "")
add("device/load_map_location_cuda", lambda T: T.load(_saved(T), map_location="cuda"))
# (torch.cuda.set_device(0) on a CPU-only torch raises AssertionError or an internal AttributeError depending
# on what ran before it: torch's answer is not stable, so it is not in the corpus)
add("device/cuda_device_count_ok", lambda T: T.cuda.device_count())
add("device/device_type_bad", lambda T: T.device("tpu"))
add("device/device_int_ok", lambda T: str(T.device("cpu", 0)))


def _saved(T, obj=None):
    buf = io.BytesIO()
    T.save(R(T, 2) if obj is None else obj, buf)
    buf.seek(0)
    return buf


# --- Modules: constructor arguments and wrong inputs ----------------------------------------------
_NN = [
    ("Linear_neg", lambda T: T.nn.Linear(-1, 2)),
    ("Linear_float", lambda T: T.nn.Linear(2.5, 2)),
    ("Linear_str", lambda T: T.nn.Linear("3", 2)),
    ("Linear_zero_ok", lambda T: T.nn.Linear(0, 2).weight.shape),
    ("Conv2d_stride0", lambda T: T.nn.Conv2d(1, 1, 3, stride=0)(R(T, 1, 1, 5, 5))),
    ("Conv2d_kernel0", lambda T: T.nn.Conv2d(1, 1, 0)),
    ("Conv2d_groups", lambda T: T.nn.Conv2d(3, 4, 3, groups=2)),
    ("Conv2d_groups0", lambda T: T.nn.Conv2d(3, 3, 3, groups=0)),
    ("Conv2d_padding_mode", lambda T: T.nn.Conv2d(1, 1, 3, padding_mode="mirror")),
    ("Conv2d_padding_str", lambda T: T.nn.Conv2d(1, 1, 3, padding="full")),
    ("Conv2d_same_stride", lambda T: T.nn.Conv2d(1, 1, 3, padding="same", stride=2)),
    ("Conv2d_neg_padding", lambda T: T.nn.Conv2d(1, 1, 3, padding=-1)(R(T, 1, 1, 5, 5))),
    ("Conv2d_channels", lambda T: T.nn.Conv2d(3, 4, 3)(R(T, 1, 1, 5, 5))),
    ("Conv2d_small_input", lambda T: T.nn.Conv2d(1, 1, 5)(R(T, 1, 1, 3, 3))),
    ("Conv2d_2d_input", lambda T: T.nn.Conv2d(1, 1, 2)(R(T, 3, 3))),
    ("Conv2d_5d_input", lambda T: T.nn.Conv2d(1, 1, 2)(R(T, 1, 1, 1, 3, 3))),
    ("Conv1d_channels", lambda T: T.nn.Conv1d(2, 1, 2)(R(T, 1, 3, 5))),
    ("Conv1d_dilation0", lambda T: T.nn.Conv1d(1, 1, 2, dilation=0)(R(T, 1, 1, 5))),
    ("F.conv2d_weight_rank", lambda T: T.nn.functional.conv2d(R(T, 1, 1, 4, 4), R(T, 3, 3))),
    ("F.conv2d_bias_size", lambda T: T.nn.functional.conv2d(R(T, 1, 1, 4, 4), R(T, 2, 1, 3, 3), bias=R(T, 3))),
    ("ConvTranspose2d_out_padding", lambda T: T.nn.ConvTranspose2d(1, 1, 3, stride=1, output_padding=2)(R(T, 1, 1, 3, 3))),
    ("MaxPool2d_kernel0", lambda T: T.nn.MaxPool2d(0)(R(T, 1, 1, 4, 4))),
    ("MaxPool2d_pad_big", lambda T: T.nn.MaxPool2d(2, padding=2)(R(T, 1, 1, 4, 4))),
    ("MaxPool2d_big_kernel", lambda T: T.nn.MaxPool2d(5)(R(T, 1, 1, 4, 4))),
    ("MaxPool2d_2d_input_ok", lambda T: T.nn.MaxPool2d(2)(R(T, 1, 4, 4)).shape),
    ("MaxPool2d_1d_input", lambda T: T.nn.MaxPool2d(2)(R(T, 4))),
    ("AvgPool2d_stride0", lambda T: T.nn.AvgPool2d(2, stride=0)(R(T, 1, 1, 4, 4))),
    ("AdaptiveAvgPool2d_zero", lambda T: T.nn.AdaptiveAvgPool2d(0)(R(T, 1, 1, 4, 4)).shape),
    ("AdaptiveAvgPool2d_neg", lambda T: T.nn.AdaptiveAvgPool2d(-1)(R(T, 1, 1, 4, 4))),
    ("BatchNorm2d_channels", lambda T: T.nn.BatchNorm2d(3)(R(T, 2, 4, 2, 2))),
    ("BatchNorm1d_3d_channels", lambda T: T.nn.BatchNorm1d(3)(R(T, 2, 4, 5))),
    ("BatchNorm2d_3d_input", lambda T: T.nn.BatchNorm2d(3)(R(T, 3, 2, 2))),
    ("BatchNorm1d_1d_input", lambda T: T.nn.BatchNorm1d(3)(R(T, 3))),
    ("LayerNorm_shape", lambda T: T.nn.LayerNorm(4)(R(T, 2, 3))),
    ("LayerNorm_neg", lambda T: T.nn.LayerNorm(-1)),
    ("GroupNorm_divisible", lambda T: T.nn.GroupNorm(2, 3)),
    ("GroupNorm_channels", lambda T: T.nn.GroupNorm(2, 4)(R(T, 1, 6, 2))),
    ("Dropout_p", lambda T: T.nn.Dropout(1.5)),
    ("Dropout_neg", lambda T: T.nn.Dropout(-0.1)),
    ("F.dropout_p", lambda T: T.nn.functional.dropout(R(T, 2), p=2.0)),
    ("Dropout2d_p", lambda T: T.nn.Dropout2d(p=-1)),
    ("Embedding_neg", lambda T: T.nn.Embedding(-1, 2)),
    ("Embedding_padding_idx", lambda T: T.nn.Embedding(3, 2, padding_idx=5)),
    ("Embedding_float_input", lambda T: T.nn.Embedding(3, 2)(T.tensor([0.0]))),
    ("RNN_input_size", lambda T: T.nn.RNN(3, 4)(R(T, 5, 2, 2))),
    ("RNN_2d_ok", lambda T: T.nn.RNN(3, 4)(R(T, 5, 3))[0].shape),
    ("RNN_4d", lambda T: T.nn.RNN(3, 4)(R(T, 1, 5, 2, 3))),
    ("RNN_nonlinearity", lambda T: T.nn.RNN(3, 4, nonlinearity="sigmoid")),
    ("RNN_hidden_shape", lambda T: T.nn.RNN(3, 4)(R(T, 5, 2, 3), R(T, 1, 2, 5))),
    ("LSTM_hidden_not_tuple", lambda T: T.nn.LSTM(3, 4)(R(T, 5, 2, 3), R(T, 1, 2, 4))),
    ("LSTM_hidden_shape", lambda T: T.nn.LSTM(3, 4)(R(T, 5, 2, 3), (R(T, 1, 2, 4), R(T, 1, 3, 4)))),
    ("LSTM_dropout_p", lambda T: T.nn.LSTM(3, 4, dropout=2)),
    ("LSTM_proj", lambda T: T.nn.LSTM(3, 4, proj_size=4)),
    ("GRU_num_layers0", lambda T: T.nn.GRU(3, 4, num_layers=0)),
    ("GRU_hidden0", lambda T: T.nn.GRU(3, 0)),
    ("MultiheadAttention_heads", lambda T: T.nn.MultiheadAttention(5, 2)),
    ("TransformerEncoderLayer_heads", lambda T: T.nn.TransformerEncoderLayer(5, 2)),
    ("TransformerEncoderLayer_activation", lambda T: T.nn.TransformerEncoderLayer(4, 2, activation="swish")),
    ("Flatten_dims", lambda T: T.nn.Flatten(2, 1)(R(T, 2, 3, 4))),
    ("Unflatten_size", lambda T: T.nn.Unflatten(1, (2, 2))(R(T, 2, 3))),
    ("Softmax_dim_range", lambda T: T.nn.Softmax(dim=2)(R(T, 2, 3))),
    ("Sequential_not_module", lambda T: T.nn.Sequential(T.nn.Linear(2, 2), 3)),
    ("Sequential_call_nonmodule_ok", lambda T: len(T.nn.Sequential())),
    ("Sequential_index", lambda T: T.nn.Sequential(T.nn.Linear(2, 2))[3]),
    ("ModuleList_append_int", lambda T: T.nn.ModuleList().append(3)),
    ("ModuleDict_key_int", lambda T: T.nn.ModuleDict({1: T.nn.Linear(2, 2)})),
    ("ModuleDict_key_dot", lambda T: T.nn.ModuleDict({"a.b": T.nn.Linear(2, 2)})),
    ("ParameterList_bad", lambda T: T.nn.ParameterList([3])[0]),
    ("Parameter_list", lambda T: T.nn.Parameter([1.0])),
    ("Parameter_int", lambda T: T.nn.Parameter(T.tensor([1]))),
    ("register_parameter_tensor", lambda T: T.nn.Module().register_parameter("w", R(T, 2))),
    ("register_parameter_dot", lambda T: T.nn.Module().register_parameter("a.b", T.nn.Parameter(R(T, 2)))),
    ("register_parameter_empty", lambda T: T.nn.Module().register_parameter("", None)),
    ("register_buffer_int", lambda T: T.nn.Module().register_buffer("b", 3)),
    ("register_buffer_dot", lambda T: T.nn.Module().register_buffer("a.b", R(T, 2))),
    ("add_module_not_module", lambda T: T.nn.Module().add_module("m", 3)),
    ("add_module_name_type", lambda T: T.nn.Module().add_module(3, T.nn.Linear(2, 2))),
    ("setattr_param_over_tensor", lambda T: setattr(T.nn.Linear(2, 2), "weight", R(T, 2, 2))),
    ("module_no_forward", lambda T: T.nn.Module()(R(T, 2))),
    ("module_getattr", lambda T: T.nn.Linear(2, 2).not_there),
    ("linear_shape", lambda T: T.nn.Linear(3, 2)(R(T, 2, 4))),
    ("linear_0d", lambda T: T.nn.Linear(3, 2)(T.tensor(1.0))),
    ("F.linear_weight", lambda T: T.nn.functional.linear(R(T, 2, 3), R(T, 3, 2))),
    ("F.linear_bias", lambda T: T.nn.functional.linear(R(T, 2, 3), R(T, 2, 3), R(T, 3))),
    ("load_state_dict_missing", lambda T: T.nn.Linear(2, 2).load_state_dict({})),
    ("load_state_dict_shape", lambda T: T.nn.Linear(2, 2).load_state_dict({"weight": R(T, 3, 3), "bias": R(T, 2)})),
    ("load_state_dict_unexpected", lambda T: T.nn.Linear(2, 2).load_state_dict(
        {"weight": R(T, 2, 2), "bias": R(T, 2), "extra": R(T, 1)})),
    ("load_state_dict_not_dict", lambda T: T.nn.Linear(2, 2).load_state_dict([1, 2])),
    ("load_state_dict_value_type", lambda T: T.nn.Linear(2, 2).load_state_dict({"weight": [[1.0]], "bias": R(T, 2)})),
    ("to_bad", lambda T: T.nn.Linear(2, 2).to("bad")),
    ("to_int_dtype", lambda T: T.nn.Linear(2, 2).to(T.int64)),
    ("apply_not_callable", lambda T: T.nn.Linear(2, 2).apply(3)),
    ("train_str", lambda T: T.nn.Linear(2, 2).train("no")),
    ("get_submodule", lambda T: T.nn.Sequential(T.nn.Linear(2, 2)).get_submodule("5")),
    ("get_parameter", lambda T: T.nn.Linear(2, 2).get_parameter("w")),
    ("init_fan_1d", lambda T: T.nn.init.kaiming_uniform_(T.empty(3))),
    ("init_xavier_1d", lambda T: T.nn.init.xavier_normal_(T.empty(3))),
    ("init_orthogonal_1d", lambda T: T.nn.init.orthogonal_(T.empty(3))),
    ("init_nonlinearity", lambda T: T.nn.init.kaiming_normal_(T.empty(3, 3), nonlinearity="swish")),
    ("init_calculate_gain", lambda T: T.nn.init.calculate_gain("bad")),
    ("init_trunc_normal_a_gt_b", lambda T: T.nn.init.trunc_normal_(T.empty(3), a=2, b=1).shape),
    ("init_sparse_1d", lambda T: T.nn.init.sparse_(T.empty(3), 0.5)),
    ("init_eye_3d", lambda T: T.nn.init.eye_(T.empty(2, 2, 2))),
    ("clip_grad_norm_type", lambda T: T.nn.utils.clip_grad_norm_(T.nn.Linear(2, 2).parameters(), "a")),
    ("clip_grad_nonfinite", lambda T: _clip_nonfinite(T)),
    ("pad_sequence_shapes", lambda T: T.nn.utils.rnn.pad_sequence([R(T, 2, 3), R(T, 2, 4)])),
    ("pack_padded_unsorted", lambda T: T.nn.utils.rnn.pack_padded_sequence(R(T, 3, 2, 1), [1, 3])),
    ("pack_padded_zero_len", lambda T: T.nn.utils.rnn.pack_padded_sequence(R(T, 3, 2, 1), [3, 0])),
    ("pack_padded_too_long", lambda T: T.nn.utils.rnn.pack_padded_sequence(R(T, 3, 2, 1), [5, 1])),
    ("F.pad_odd", lambda T: T.nn.functional.pad(R(T, 2, 2), (1,))),
    ("F.pad_mode", lambda T: T.nn.functional.pad(R(T, 1, 2, 2), (1, 1), mode="wrap")),
    ("F.pad_too_long", lambda T: T.nn.functional.pad(R(T, 2), (1, 1, 1, 1))),
    ("F.pad_reflect_big", lambda T: T.nn.functional.pad(R(T, 1, 1, 2), (3, 3), mode="reflect")),
    ("F.interpolate_mode", lambda T: T.nn.functional.interpolate(R(T, 1, 1, 2, 2), scale_factor=2, mode="cubic")),
    ("F.interpolate_both", lambda T: T.nn.functional.interpolate(R(T, 1, 1, 2, 2), size=4, scale_factor=2)),
    ("F.interpolate_none", lambda T: T.nn.functional.interpolate(R(T, 1, 1, 2, 2))),
    ("F.interpolate_2d_input", lambda T: T.nn.functional.interpolate(R(T, 2, 2), size=4, mode="bilinear")),
    ("F.softmax_no_dim_ok", lambda T: _quiet(lambda: T.nn.functional.softmax(R(T, 2, 3))).shape),
    ("F.gelu_approx", lambda T: T.nn.functional.gelu(R(T, 2), approximate="fast")),
    ("F.leaky_relu_str", lambda T: T.nn.functional.leaky_relu(R(T, 2), "a")),
    ("F.relu_inplace_leaf", lambda T: T.nn.functional.relu(R(T, 2).requires_grad_(), inplace=True)),
    ("F.unfold_bad", lambda T: T.nn.functional.unfold(R(T, 1, 1, 2, 2), kernel_size=3)),
    ("F.fold_bad", lambda T: T.nn.functional.fold(R(T, 1, 4, 3), output_size=(3, 3), kernel_size=2)),
    ("F.grid_sample_shape", lambda T: T.nn.functional.grid_sample(R(T, 1, 1, 2, 2), R(T, 1, 2, 2, 3), align_corners=False)),
    ("F.embedding_weight_1d", lambda T: T.nn.functional.embedding(T.tensor([0]), R(T, 3))),
]
for _name, _fn in _NN:
    add(f"nn/{_name}", _fn)


def _quiet(fn):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def _clip_nonfinite(T):
    lin = T.nn.Linear(2, 2)
    lin(R(T, 1, 2)).sum().backward()
    lin.weight.grad.fill_(float("nan"))
    T.nn.utils.clip_grad_norm_(lin.parameters(), 1.0, error_if_nonfinite=True)


# --- Losses: shapes, targets, reductions ------------------------------------------------------------
_F = "nn.functional"
_LOSS = [
    ("ce_target_range", lambda T: T.nn.functional.cross_entropy(R(T, 2, 3), T.tensor([0, 3]))),
    ("ce_target_neg", lambda T: T.nn.functional.cross_entropy(R(T, 2, 3), T.tensor([0, -5]))),
    ("ce_batch_mismatch", lambda T: T.nn.functional.cross_entropy(R(T, 2, 3), T.tensor([0, 1, 2]))),
    ("ce_target_2d", lambda T: T.nn.functional.cross_entropy(R(T, 2, 3), T.tensor([[0], [1]]))),
    ("ce_1d_input_2d_target", lambda T: T.nn.functional.cross_entropy(R(T, 3), T.tensor([[0]]))),
    ("ce_prob_target_shape", lambda T: T.nn.functional.cross_entropy(R(T, 2, 3), R(T, 2, 4))),
    ("ce_weight_size", lambda T: T.nn.functional.cross_entropy(R(T, 2, 3), T.tensor([0, 1]), weight=R(T, 4))),
    ("ce_reduction", lambda T: T.nn.functional.cross_entropy(R(T, 2, 3), T.tensor([0, 1]), reduction="avg")),
    ("ce_label_smoothing", lambda T: T.nn.functional.cross_entropy(R(T, 2, 3), T.tensor([0, 1]), label_smoothing=2.0)),
    ("ce_ignore_index_ok", lambda T: T.nn.functional.cross_entropy(R(T, 2, 3), T.tensor([0, -100])).item()),
    ("ce_0d_input", lambda T: T.nn.functional.cross_entropy(T.tensor(1.0), T.tensor(0))),
    ("CrossEntropyLoss_args_swapped", lambda T: T.nn.CrossEntropyLoss()(T.tensor([0, 1]), R(T, 2, 3))),
    ("nll_target_range", lambda T: T.nn.functional.nll_loss(R(T, 2, 3), T.tensor([0, 7]))),
    ("nll_3d_target", lambda T: T.nn.functional.nll_loss(R(T, 2, 3, 4), T.tensor([0, 1]))),
    ("mse_shape_warns_then_error", lambda T: _quiet(lambda: T.nn.functional.mse_loss(R(T, 2, 3), R(T, 3, 2)))),
    ("mse_reduction", lambda T: T.nn.functional.mse_loss(R(T, 2), R(T, 2), reduction="avg")),
    ("mse_size_average_ok", lambda T: _quiet(lambda: T.nn.functional.mse_loss(R(T, 2), R(T, 2), size_average=False)).item()),
    ("MSELoss_reduction", lambda T: T.nn.MSELoss(reduction="bad")(R(T, 2), R(T, 2))),
    ("bce_out_of_range", lambda T: T.nn.functional.binary_cross_entropy(T.tensor([1.5]), T.tensor([1.0]))),
    ("bce_neg_input", lambda T: T.nn.functional.binary_cross_entropy(T.tensor([-0.5]), T.tensor([1.0]))),
    ("bce_shape", lambda T: T.nn.functional.binary_cross_entropy(T.tensor([0.5, 0.5]), T.tensor([1.0]))),
    ("bce_int_target", lambda T: T.nn.functional.binary_cross_entropy(T.tensor([0.5]), T.tensor([1]))),
    ("bce_logits_shape", lambda T: T.nn.functional.binary_cross_entropy_with_logits(R(T, 2, 1), R(T, 2))),
    ("bce_logits_int_target", lambda T: T.nn.functional.binary_cross_entropy_with_logits(R(T, 2), T.tensor([1, 0]))),
    ("bce_logits_pos_weight_shape", lambda T: T.nn.functional.binary_cross_entropy_with_logits(
        R(T, 2, 3), R(T, 2, 3), pos_weight=R(T, 2))),
    ("kl_div_shape", lambda T: T.nn.functional.kl_div(R(T, 2, 3), R(T, 3, 3), reduction="batchmean")),
    ("huber_delta_neg", lambda T: T.nn.functional.huber_loss(R(T, 2), R(T, 2), delta=-1.0)),
    ("smooth_l1_beta_neg", lambda T: T.nn.functional.smooth_l1_loss(R(T, 2), R(T, 2), beta=-1.0)),
    ("margin_ranking_shape", lambda T: T.nn.functional.margin_ranking_loss(R(T, 2), R(T, 3), R(T, 2))),
    ("ctc_bad", lambda T: T.nn.functional.ctc_loss(R(T, 2, 1, 3), T.tensor([[1, 1, 1]]), [2], [3])),
    ("triplet_shape", lambda T: T.nn.functional.triplet_margin_loss(R(T, 2, 3), R(T, 2, 4), R(T, 2, 3))),
]
for _name, _fn in _LOSS:
    add(f"loss/{_name}", _fn)


# --- Optimizers and schedulers ---------------------------------------------------------------------
def _params(T):
    return T.nn.Linear(2, 2).parameters()


_OPTIM = [
    ("SGD_lr_neg", lambda T: T.optim.SGD(_params(T), lr=-1)),
    ("SGD_momentum_neg", lambda T: T.optim.SGD(_params(T), lr=0.1, momentum=-0.5)),
    ("SGD_weight_decay_neg", lambda T: T.optim.SGD(_params(T), lr=0.1, weight_decay=-1)),
    ("SGD_nesterov_no_momentum", lambda T: T.optim.SGD(_params(T), lr=0.1, nesterov=True)),
    ("SGD_lr_str", lambda T: T.optim.SGD(_params(T), lr="0.1")),
    ("SGD_lr_tensor_ok", lambda T: type(T.optim.SGD(_params(T), lr=T.tensor(0.1))).__name__),
    ("SGD_empty", lambda T: T.optim.SGD([], lr=0.1)),
    ("SGD_tensor_params", lambda T: T.optim.SGD(R(T, 2).requires_grad_(), lr=0.1)),
    ("SGD_dict_params_no_params", lambda T: T.optim.SGD([{"lr": 0.1}], lr=0.1)),
    ("SGD_nonleaf_param", lambda T: T.optim.SGD([R(T, 2).requires_grad_() * 2], lr=0.1)),
    ("SGD_int_param", lambda T: T.optim.SGD([T.tensor([1])], lr=0.1)),
    ("SGD_duplicate_params", lambda T: _quiet(lambda: T.optim.SGD([_shared(T), _shared(T)], lr=0.1))),
    ("SGD_param_in_two_groups", lambda T: _two_groups(T)),
    ("SGD_module_not_params", lambda T: T.optim.SGD(T.nn.Linear(2, 2), lr=0.1)),
    ("SGD_unknown_kw", lambda T: T.optim.SGD(_params(T), lr=0.1, betas=(0.9, 0.99))),
    ("SGD_dampening_nesterov", lambda T: T.optim.SGD(_params(T), lr=0.1, momentum=0.9, dampening=0.5, nesterov=True)),
    ("Adam_lr_neg", lambda T: T.optim.Adam(_params(T), lr=-1e-3)),
    ("Adam_beta1", lambda T: T.optim.Adam(_params(T), betas=(1.0, 0.999))),
    ("Adam_beta2_neg", lambda T: T.optim.Adam(_params(T), betas=(0.9, -0.1))),
    ("Adam_eps_neg", lambda T: T.optim.Adam(_params(T), eps=-1)),
    ("Adam_wd_neg", lambda T: T.optim.Adam(_params(T), weight_decay=-1)),
    ("Adam_betas_len", lambda T: T.optim.Adam(_params(T), betas=(0.9,))),
    ("AdamW_beta", lambda T: T.optim.AdamW(_params(T), betas=(0.9, 1.5))),
    ("AdamW_lr_neg", lambda T: T.optim.AdamW(_params(T), lr=-1)),
    ("RMSprop_alpha", lambda T: T.optim.RMSprop(_params(T), alpha=-1)),
    ("RMSprop_momentum", lambda T: T.optim.RMSprop(_params(T), momentum=-1)),
    ("RMSprop_lr", lambda T: T.optim.RMSprop(_params(T), lr=-1)),
    ("Adagrad_lr_decay", lambda T: T.optim.Adagrad(_params(T), lr_decay=-1)),
    ("Adagrad_init_acc", lambda T: T.optim.Adagrad(_params(T), initial_accumulator_value=-1)),
    ("Adadelta_rho", lambda T: T.optim.Adadelta(_params(T), rho=1.5)),
    ("Adamax_beta", lambda T: T.optim.Adamax(_params(T), betas=(2.0, 0.9))),
    ("NAdam_momentum_decay", lambda T: T.optim.NAdam(_params(T), momentum_decay=-1)),
    ("RAdam_eps", lambda T: T.optim.RAdam(_params(T), eps=-1)),
    ("ASGD_lr", lambda T: T.optim.ASGD(_params(T), lr=-1)),
    ("Rprop_etas", lambda T: T.optim.Rprop(_params(T), etas=(1.5, 0.5))),
    ("Rprop_step_sizes", lambda T: T.optim.Rprop(_params(T), step_sizes=(1.0, 0.1)).param_groups[0]["step_sizes"]),
    ("LBFGS_no_closure", lambda T: T.optim.LBFGS(_params(T)).step()),
    ("load_state_dict_groups", lambda T: T.optim.SGD(_params(T), lr=0.1).load_state_dict(
        {"state": {}, "param_groups": []})),
    ("load_state_dict_sizes", lambda T: _optim_sizes(T)),
    ("load_state_dict_not_dict", lambda T: T.optim.SGD(_params(T), lr=0.1).load_state_dict([1])),
    ("add_param_group_dup", lambda T: _add_group_dup(T)),
    ("add_param_group_not_dict", lambda T: T.optim.SGD(_params(T), lr=0.1).add_param_group([R(T, 2)])),
    ("zero_grad_str_ok", lambda T: T.optim.SGD(_params(T), lr=0.1).zero_grad("yes")),
    ("step_closure_not_callable", lambda T: T.optim.SGD(_params(T), lr=0.1).step(3)),
    ("StepLR_not_optimizer", lambda T: T.optim.lr_scheduler.StepLR(3, 1)),
    ("StepLR_no_step_size", lambda T: T.optim.lr_scheduler.StepLR(T.optim.SGD(_params(T), lr=0.1))),
    ("LambdaLR_wrong_count", lambda T: T.optim.lr_scheduler.LambdaLR(T.optim.SGD(_params(T), lr=0.1), [lambda e: 1, lambda e: 1])),
    ("MultiStepLR_unsorted_ok", lambda T: T.optim.lr_scheduler.MultiStepLR(T.optim.SGD(_params(T), lr=0.1), [3, 1]).last_epoch),
    ("OneCycleLR_no_total", lambda T: T.optim.lr_scheduler.OneCycleLR(T.optim.SGD(_params(T), lr=0.1), max_lr=1.0)),
    ("OneCycleLR_pct", lambda T: T.optim.lr_scheduler.OneCycleLR(T.optim.SGD(_params(T), lr=0.1), max_lr=1.0,
                                                                 total_steps=10, pct_start=2)),
    ("OneCycleLR_overstep", lambda T: _overstep(T)),
    ("CosineAnnealingWarmRestarts_T0", lambda T: T.optim.lr_scheduler.CosineAnnealingWarmRestarts(
        T.optim.SGD(_params(T), lr=0.1), T_0=0)),
    ("CosineAnnealingWarmRestarts_Tmult", lambda T: T.optim.lr_scheduler.CosineAnnealingWarmRestarts(
        T.optim.SGD(_params(T), lr=0.1), T_0=2, T_mult=0)),
    ("ReduceLROnPlateau_mode", lambda T: T.optim.lr_scheduler.ReduceLROnPlateau(T.optim.SGD(_params(T), lr=0.1), mode="up")),
    ("ReduceLROnPlateau_factor", lambda T: T.optim.lr_scheduler.ReduceLROnPlateau(T.optim.SGD(_params(T), lr=0.1), factor=1.0)),
    ("ReduceLROnPlateau_threshold_mode", lambda T: T.optim.lr_scheduler.ReduceLROnPlateau(
        T.optim.SGD(_params(T), lr=0.1), threshold_mode="x")),
    ("ExponentialLR_no_gamma", lambda T: T.optim.lr_scheduler.ExponentialLR(T.optim.SGD(_params(T), lr=0.1))),
    ("LinearLR_factor", lambda T: T.optim.lr_scheduler.LinearLR(T.optim.SGD(_params(T), lr=0.1), start_factor=0)),
    ("LinearLR_end_factor", lambda T: T.optim.lr_scheduler.LinearLR(T.optim.SGD(_params(T), lr=0.1), end_factor=2)),
    ("SequentialLR_milestones", lambda T: _seq_lr(T)),
    ("CyclicLR_mode", lambda T: T.optim.lr_scheduler.CyclicLR(T.optim.SGD(_params(T), lr=0.1, momentum=0.9),
                                                             0.01, 0.1, mode="sawtooth")),
    ("CyclicLR_momentum_none", lambda T: T.optim.lr_scheduler.CyclicLR(T.optim.Adagrad(_params(T), lr=0.1), 0.01, 0.1)),
]
for _name, _fn in _OPTIM:
    add(f"optim/{_name}", _fn)


def _shared(T, _cache={}):
    key = T.__name__
    if key not in _cache:
        _cache[key] = T.nn.Parameter(R(T, 2))
    return _cache[key]


def _two_groups(T):
    p = T.nn.Parameter(R(T, 2))
    T.optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1)


def _optim_sizes(T):
    a = T.optim.SGD(T.nn.Linear(2, 2).parameters(), lr=0.1)
    b = T.optim.SGD([T.nn.Parameter(R(T, 2))], lr=0.1)
    b.load_state_dict(a.state_dict())


def _add_group_dup(T):
    p = T.nn.Parameter(R(T, 2))
    opt = T.optim.SGD([p], lr=0.1)
    opt.add_param_group({"params": [p]})


def _overstep(T):
    opt = T.optim.SGD(_params(T), lr=0.1)
    s = T.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=2)
    for _ in range(4):
        opt.step()
        s.step()


def _seq_lr(T):
    opt = T.optim.SGD(_params(T), lr=0.1)
    a = T.optim.lr_scheduler.StepLR(opt, 1)
    b = T.optim.lr_scheduler.StepLR(opt, 1)
    T.optim.lr_scheduler.SequentialLR(opt, [a, b], milestones=[1, 2])


# --- DataLoader and datasets -------------------------------------------------------------------
def _ds(T):
    return T.utils.data.TensorDataset(R(T, 4, 2), I(T, 4))


def _first(loader):
    return next(iter(loader))


_DATA = [
    ("batch_size0", lambda T: T.utils.data.DataLoader(_ds(T), batch_size=0)),
    ("batch_size_neg", lambda T: T.utils.data.DataLoader(_ds(T), batch_size=-1)),
    ("batch_size_float", lambda T: T.utils.data.DataLoader(_ds(T), batch_size=2.0)),
    ("batch_size_str", lambda T: T.utils.data.DataLoader(_ds(T), batch_size="2")),
    ("num_workers_neg", lambda T: T.utils.data.DataLoader(_ds(T), num_workers=-1)),
    ("shuffle_and_sampler", lambda T: T.utils.data.DataLoader(_ds(T), shuffle=True,
                                                              sampler=T.utils.data.SequentialSampler(range(4)))),
    ("batch_sampler_and_batch_size", lambda T: T.utils.data.DataLoader(
        _ds(T), batch_size=2, batch_sampler=T.utils.data.BatchSampler(range(4), 2, False))),
    ("batch_sampler_and_shuffle", lambda T: T.utils.data.DataLoader(
        _ds(T), shuffle=True, batch_sampler=T.utils.data.BatchSampler(range(4), 2, False))),
    ("timeout_neg", lambda T: T.utils.data.DataLoader(_ds(T), timeout=-1)),
    ("prefetch_no_workers", lambda T: T.utils.data.DataLoader(_ds(T), prefetch_factor=2)),
    ("persistent_no_workers", lambda T: T.utils.data.DataLoader(_ds(T), persistent_workers=True)),
    ("collate_not_callable_iter", lambda T: _first(T.utils.data.DataLoader(_ds(T), collate_fn=3))),
    ("shuffle_str_ok", lambda T: len(T.utils.data.DataLoader(_ds(T), shuffle="yes"))),
    ("drop_last_len", lambda T: len(T.utils.data.DataLoader(_ds(T), batch_size=3, drop_last=True))),
    ("list_dataset_ok", lambda T: _first(T.utils.data.DataLoader([1, 2, 3], batch_size=2)).tolist()),
    ("dataset_not_indexable", lambda T: _first(T.utils.data.DataLoader(3))),
    ("collate_ragged", lambda T: _first(T.utils.data.DataLoader([R(T, 2), R(T, 3)], batch_size=2))),
    ("collate_str_ok", lambda T: _first(T.utils.data.DataLoader(["a", "b"], batch_size=2))),
    ("collate_none", lambda T: _first(T.utils.data.DataLoader([None, None], batch_size=2))),
    ("collate_object", lambda T: _first(T.utils.data.DataLoader([object(), object()], batch_size=2))),
    ("collate_mixed_dict_keys", lambda T: _first(T.utils.data.DataLoader([{"a": 1}, {"b": 2}], batch_size=2))),
    ("dataset_index_error", lambda T: _first(T.utils.data.DataLoader(_BadDataset(), batch_size=2))),
    ("TensorDataset_sizes", lambda T: T.utils.data.TensorDataset(R(T, 3), R(T, 4))),
    ("TensorDataset_index", lambda T: _ds(T)[10]),
    ("random_split_sum", lambda T: T.utils.data.random_split(range(10), [3, 3])),
    ("random_split_fraction", lambda T: T.utils.data.random_split(range(10), [0.5, 0.6])),
    ("random_split_neg", lambda T: T.utils.data.random_split(range(10), [-1, 11])),
    ("Subset_index", lambda T: T.utils.data.Subset(range(3), [5])[0]),
    ("ConcatDataset_empty", lambda T: T.utils.data.ConcatDataset([])),
    ("ConcatDataset_index", lambda T: T.utils.data.ConcatDataset([range(2), range(2)])[9]),
    ("RandomSampler_num_samples", lambda T: T.utils.data.RandomSampler(range(3), num_samples=0)),
    ("RandomSampler_replacement_str", lambda T: T.utils.data.RandomSampler(range(3), replacement="yes")),
    ("BatchSampler_size0", lambda T: T.utils.data.BatchSampler(range(3), 0, False)),
    ("BatchSampler_drop_last_str", lambda T: T.utils.data.BatchSampler(range(3), 2, "no")),
    ("WeightedRandomSampler_neg", lambda T: list(T.utils.data.WeightedRandomSampler([-1.0, 1.0], 2))),
    ("WeightedRandomSampler_num", lambda T: T.utils.data.WeightedRandomSampler([1.0, 1.0], 0)),
    ("SubsetRandomSampler_ok", lambda T: sorted(T.utils.data.SubsetRandomSampler([2, 0]))),
    ("len_iterable_dataset", lambda T: len(T.utils.data.DataLoader(_Iterable(T)))),
    ("iterable_shuffle", lambda T: T.utils.data.DataLoader(_Iterable(T), shuffle=True)),
    ("iterable_sampler", lambda T: T.utils.data.DataLoader(_Iterable(T), sampler=[0, 1])),
    ("worker_init_not_callable", lambda T: _first(T.utils.data.DataLoader(_ds(T), num_workers=1, worker_init_fn=3))),
    ("multiprocessing_context_bad", lambda T: T.utils.data.DataLoader(_ds(T), num_workers=1,
                                                                      multiprocessing_context="bad")),
]
for _name, _fn in _DATA:
    add(f"data/{_name}", _fn)


class _BadDataset:
    def __len__(self):
        return 4

    def __getitem__(self, i):
        raise KeyError(f"no item {i}")


def _Iterable(T):
    class It(T.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(3))
    return It()


# --- save / load ----------------------------------------------------------------------------------
def _tmp(name):
    import tempfile
    import os
    d = tempfile.mkdtemp(prefix="gt_bad_input_")
    return os.path.join(d, name)


def _garbage(T, data):
    p = _tmp("g.pt")
    with open(p, "wb") as f:
        f.write(data)
    return T.load(p)


def _truncated(T):
    buf = _saved(T)
    return T.load(io.BytesIO(buf.getvalue()[:40]))


class _Custom:
    pass


def _save_load_custom(T):
    buf = io.BytesIO()
    T.save({"x": _Custom()}, buf)
    buf.seek(0)
    return T.load(buf)


_IO = [
    ("load_missing", lambda T: T.load("/nonexistent/dir/model.pt")),
    ("load_dir", lambda T: T.load("/tmp")),
    ("load_empty_file", lambda T: _garbage(T, b"")),
    ("load_text", lambda T: _garbage(T, b"hello, not a checkpoint")),
    ("load_zip_not_torch", lambda T: _garbage(T, _zip_bytes())),
    ("load_truncated", lambda T: _truncated(T)),
    ("load_none", lambda T: T.load(None)),
    ("load_int", lambda T: T.load(3)),
    ("load_custom_weights_only", lambda T: _save_load_custom(T)),
    ("load_map_location_bad", lambda T: T.load(_saved(T), map_location="gpu")),
    ("load_map_location_int_type", lambda T: T.load(_saved(T), map_location=3.5)),
    ("load_map_location_cpu_ok", lambda T: T.load(_saved(T), map_location="cpu").tolist()),
    ("load_pickle_module_weights_only", lambda T: T.load(_saved(T), pickle_module=__import__("pickle"), weights_only=True)),
    ("save_to_missing_dir", lambda T: T.save(R(T, 2), "/nonexistent/dir/model.pt")),
    ("save_to_dir", lambda T: T.save(R(T, 2), "/tmp")),
    ("save_lambda", lambda T: T.save(lambda x: x, io.BytesIO())),
    ("save_local_class", lambda T: T.save(_local_instance(), io.BytesIO())),
    ("save_to_int", lambda T: T.save(R(T, 2), 3)),
    ("save_to_readonly_buffer", lambda T: T.save(R(T, 2), io.BytesIO(b"x").getbuffer())),
    ("save_generator", lambda T: T.save((i for i in range(2)), io.BytesIO())),
    ("save_module_ok", lambda T: T.save(T.nn.Linear(2, 2).state_dict(), io.BytesIO())),
    ("load_state_dict_from_list", lambda T: T.nn.Linear(2, 2).load_state_dict(T.load(_saved(T, [R(T, 2)])))),
]
for _name, _fn in _IO:
    add(f"io/{_name}", _fn)


def _zip_bytes():
    import zipfile
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("hello.txt", "hi")
    return buf.getvalue()


def _local_instance():
    class Local:
        pass
    return Local()


class _MisuseTarget:
    pass


# --- Tensor misc: in-place on views, sizes, printing --------------------------------------------
_MISC = [
    ("expand_inplace", lambda T: R(T, 1, 3).expand(2, 3).add_(1)),
    ("set_requires_grad_nonleaf_ok", lambda T: (R(T, 2).requires_grad_() * 2).requires_grad),
    ("resize_neg", lambda T: R(T, 2).resize_(-1)),
    ("size_kw", lambda T: R(T, 2).size(dim=3)),
    ("numel_arg", lambda T: R(T, 2).numel(0)),
    ("new_zeros_neg", lambda T: R(T, 2).new_zeros(-1)),
    ("new_tensor_ragged", lambda T: R(T, 2).new_tensor([[1], [2, 3]])),
    ("clone_memory_format", lambda T: R(T, 2).clone(memory_format="x")),
    ("contiguous_ok", lambda T: R(T, 2, 3).t().contiguous().is_contiguous()),
    ("float_to_bool_in_if", lambda T: bool(R(T, 2, 2) > 0)),
    ("nonzero_as_tuple_ok", lambda T: len(T.nonzero(R(T, 3), as_tuple=True))),
    ("where_one_arg_ok", lambda T: len(T.where(R(T, 3) > 0))),
    ("where_two_args", lambda T: T.where(R(T, 3) > 0, R(T, 3))),
    ("lerp_weight_tensor_shape", lambda T: T.lerp(R(T, 2), R(T, 2), R(T, 3))),
    ("cdist_dims", lambda T: T.cdist(R(T, 2, 3), R(T, 2, 4))),
    ("cdist_p_neg", lambda T: T.cdist(R(T, 2, 3), R(T, 2, 3), p=-1)),
    ("meshgrid_indexing", lambda T: T.meshgrid(R(T, 2), R(T, 2), indexing="xx")),
    ("tril_1d", lambda T: T.tril(R(T, 3))),
    ("triu_indices_neg", lambda T: T.triu_indices(-1, 3)),
    ("flip_dup", lambda T: R(T, 2, 2).flip(0, 0)),
    ("rot90_dims", lambda T: T.rot90(R(T, 2, 2), 1, (0, 0))),
    ("cumsum_no_dim", lambda T: R(T, 3).cumsum()),
    ("unique_dim_range", lambda T: T.unique(R(T, 3), dim=1)),
    ("searchsorted_dims", lambda T: T.searchsorted(R(T, 2, 3), R(T, 3, 1))),
    ("bucketize_2d_boundaries", lambda T: T.bucketize(R(T, 3), R(T, 2, 2))),
    ("sort_stable_kw_ok", lambda T: R(T, 3).sort(stable=True).values.tolist()),
    ("std_unbiased_correction", lambda T: R(T, 3).std(unbiased=True, correction=1)),
    ("var_dof_too_big", lambda T: R(T, 1).var().isnan().item()),
    ("norm_p_str", lambda T: R(T, 3).norm(p="bad")),
    ("dist_shape", lambda T: T.dist(R(T, 2), R(T, 3))),
    ("renorm_maxnorm_neg", lambda T: T.renorm(R(T, 2, 2), 2, 0, -1)),
    ("diagonal_dims_same", lambda T: R(T, 2, 2).diagonal(0, 0, 0)),
    ("chain_matmul_empty", lambda T: T.linalg.multi_dot([])),
    ("kron_ok", lambda T: T.kron(R(T, 2), R(T, 2)).shape),
    ("complex_unsupported_ok", lambda T: T.zeros(2).is_complex()),
    ("tensor_split_zero", lambda T: T.tensor_split(R(T, 3), 0)),
    ("clamp_tensor_and_number", lambda T: T.clamp(R(T, 3), min=R(T, 3), max=1.0).tolist()),
    ("sum_out_wrong_dtype", lambda T: T.sum(R(T, 3), dim=0, out=T.zeros((), dtype=T.int64))),
    ("add_out_shape_ok", lambda T: _quiet(lambda: T.add(R(T, 2), R(T, 2), out=T.zeros(2))).tolist()),
    ("add_out_not_tensor", lambda T: T.add(R(T, 2), R(T, 2), out=[0, 0])),
    ("add_alpha_float_int", lambda T: T.add(I(T, 2), I(T, 2), alpha=0.5)),
    ("sub_bool_alpha", lambda T: T.sub(R(T, 2), R(T, 2), alpha=True).tolist()),
    ("equal_shapes_ok", lambda T: T.equal(R(T, 2), R(T, 3))),
    ("allclose_dtypes", lambda T: T.allclose(R(T, 2), I(T, 2))),
    ("isin_ok", lambda T: T.isin(I(T, 3), I(T, 2)).tolist()),
    ("masked_scatter_shape", lambda T: R(T, 3).masked_scatter(T.tensor([True, True, True]), R(T, 2))),
    ("index_put_accum_shape", lambda T: R(T, 3).index_put_((T.tensor([0]),), R(T, 2), accumulate=True)),
    ("put_range", lambda T: R(T, 3).put_(T.tensor([5]), T.tensor([1.0]))),
    ("einsum_letters", lambda T: T.einsum("i1->i", R(T, 3))),
    ("grad_mode_decorator_arg", lambda T: T.enable_grad(3)),
    ("inference_mode_backward", lambda T: _inference_backward(T)),
    ("no_grad_backward", lambda T: _no_grad_backward(T)),
    ("detect_anomaly_nan", lambda T: _anomaly(T)),
]
for _name, _fn in _MISC:
    add(f"misc/{_name}", _fn)


def _inference_backward(T):
    with T.inference_mode():
        x = R(T, 2)
    x.requires_grad_()


def _no_grad_backward(T):
    x = R(T, 2).requires_grad_()
    with T.no_grad():
        y = x * 2
    y.sum().backward()


def _anomaly(T):
    import warnings
    x = T.tensor([0.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with T.autograd.detect_anomaly():
            (x.sqrt() * 0).sum().backward()
            (x / x).sum().backward()


# --- out= (torch writes into it, resizes it, or refuses) ---------------------------------------------
def _no_grad_bare(T):
    @T.no_grad
    def double(x):
        return x * 2
    return double(R(T, 2).requires_grad_()).requires_grad


_OUT = [
    ("add_into", lambda T: _filled_out(T, lambda o: T.add(R(T, 2), 1, out=o), T.zeros(2))),
    ("add_int_out", lambda T: T.add(R(T, 2), 1, out=T.zeros(2, dtype=T.int64))),
    ("add_requires_grad", lambda T: T.add(R(T, 2).requires_grad_(), 1, out=T.zeros(2))),
    ("add_resize_empty", lambda T: T.add(R(T, 3), 1, out=T.zeros(0)).shape),
    ("cat_into_double", lambda T: T.cat([R(T, 2)], out=T.zeros(2, dtype=T.float64)).dtype),
    ("stack_out_list", lambda T: T.stack([R(T, 2)], out=[1])),
    ("zeros_into_long", lambda T: T.zeros(3, out=T.ones(3, dtype=T.int64)).dtype),
    ("zeros_dtype_mismatch", lambda T: T.zeros(3, dtype=T.float64, out=T.ones(3))),
    ("arange_into", lambda T: _filled_out(T, lambda o: T.arange(4, out=o), T.zeros(4))),
    ("randn_out_requires_grad", lambda T: T.randn(2, out=T.zeros(2, requires_grad=True))),
    ("no_grad_bare_decorator", _no_grad_bare),
    ("tensor_neg_into_uint8_ok", lambda T: T.tensor([-1, 255], dtype=T.uint8).tolist()),
    ("tensor_float_big_into_int32", lambda T: T.tensor([3e9], dtype=T.int32)),
    ("where_uint8_scalar_ok", lambda T: T.where(T.tensor([True, False]), T.tensor([1, 2], dtype=T.uint8), -2).tolist()),
    ("index_list_of_floats_ok", lambda T: R(T, 3)[[0.7, 2.2]].tolist()),
]


def _filled_out(T, call, out):
    result = call(out)
    return result is out, out.tolist()


for _name, _fn in _OUT:
    add(f"out/{_name}", _fn)


def _grad_after(T, run):
    x = R(T, 2).requires_grad_()
    run(x)
    return x.grad


# --- Allocations that cannot fit: torch's RuntimeError naming the bytes, on every path ---------------
# Sizes past any address space (over 2**48 bytes), so the allocation fails at once everywhere, also
# where the kernel overcommits memory. Expanded (stride-0) inputs cost nothing until copied.
BIG = (10**7, 10**8)


def _huge(T, dtype=None):
    """A 10**15-element tensor that takes no memory (one element, expanded)."""
    return T.ones(1, dtype=dtype or T.float32).expand(10**15)


ALLOCATIONS = [
    ("zeros", lambda T: T.zeros(*BIG)),
    ("empty", lambda T: T.empty(BIG)),
    ("full", lambda T: T.full(BIG, 2.0)),
    ("randn", lambda T: T.randn(*BIG)),
    ("randint", lambda T: T.randint(0, 10, BIG)),
    ("arange", lambda T: T.arange(10**15)),
    ("linspace_double", lambda T: T.linspace(0, 1, 10**15, dtype=T.float64)),
    ("eye", lambda T: T.eye(10**8)),
    ("legacy_Tensor_sizes", lambda T: T.Tensor(*BIG)),
    ("legacy_FloatTensor", lambda T: T.FloatTensor(*BIG)),
    ("new_zeros", lambda T: T.ones(2).new_zeros(BIG)),
    ("new_full", lambda T: T.ones(2).new_full(BIG, 1.0)),
    ("empty_like_expanded", lambda T: T.empty_like(_huge(T))),
    ("contiguous", lambda T: _huge(T).contiguous()),
    ("clone", lambda T: _huge(T).clone()),
    ("reshape_copy", lambda T: T.ones(2, 1).expand(2, 10**15).t().reshape(-1)),
    ("view_as_copy", lambda T: T.ones(2, 1).expand(2, 10**15).t().flatten()),
    ("add", lambda T: _huge(T) + 1),
    ("exp", lambda T: _huge(T).exp()),
    ("to_double", lambda T: _huge(T).to(T.float64)),
    ("float", lambda T: _huge(T, T.float64).float()),
    ("as_tensor_dtype", lambda T: T.as_tensor(_huge(T), dtype=T.float64)),
    ("outer", lambda T: T.outer(T.ones(10**8), T.ones(10**8))),
    ("matmul", lambda T: T.ones(10**8, 1) @ T.ones(1, 10**8)),
    ("repeat", lambda T: T.ones(10).repeat(10**14)),
    ("cat", lambda T: T.cat([_huge(T), _huge(T)])),
    ("one_hot", lambda T: T.nn.functional.one_hot(T.zeros(10**8, dtype=T.int64), 10**8)),
    ("multinomial", lambda T: T.multinomial(T.ones(2), 10**15, replacement=True)),
    ("nn_Linear", lambda T: T.nn.Linear(10**8, 10**8)),
    ("nn_Embedding", lambda T: T.nn.Embedding(10**8, 10**8)),
    ("nn_Conv2d", lambda T: T.nn.Conv2d(10**5, 10**5, 100)),
    ("nn_LSTM", lambda T: T.nn.LSTM(10**8, 10**8)),
    ("nn_LayerNorm", lambda T: T.nn.LayerNorm(10**15)),
    ("Parameter_empty", lambda T: T.nn.Parameter(T.empty(10**15))),
]
for _name, _fn in ALLOCATIONS:
    add(f"alloc/{_name}", _fn)
