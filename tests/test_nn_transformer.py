"""nn.MultiheadAttention and the Transformer modules, against real torch.

Each case builds torch's module, copies its state_dict into ours (through NumPy), runs the same
inputs and masks through both, and compares outputs, attention weights and the gradients of
every parameter and input: tight in float64, loosely in float32.
"""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import glasstorch as gt  # noqa: E402
from glasstorch.nn.modules import transformer as TR  # noqa: E402
from glasstorch.nn.modules.normalization import LayerNorm  # noqa: E402

TOL = {torch.float64: dict(rtol=1e-9, atol=1e-11), torch.float32: dict(rtol=2e-4, atol=2e-5)}
E, HEADS, L, S, N = 8, 2, 4, 5, 3


def ours(t):
    if t is None:
        return None
    g = gt.tensor(t.detach().numpy().copy())
    return g.requires_grad_(t.requires_grad)


def copy_weights(mine, theirs):
    assert [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in mine.state_dict().items()]
    mine.load_state_dict({k: gt.tensor(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()})


def pair(cls, dtype=torch.float64, **kw):
    theirs = getattr(torch.nn, cls)(**kw).to(dtype)
    mine = getattr(TR, cls)(**kw).to(gt.float64 if dtype == torch.float64 else gt.float32)
    copy_weights(mine, theirs)
    return theirs, mine


def close(a, b, dtype, what=""):
    assert a is not None and b is not None, what
    assert tuple(a.shape) == tuple(b.shape), (what, a.shape, b.shape)
    np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), err_msg=what, **TOL[dtype])


def backward_and_compare(outs_t, outs_g, inputs_t, inputs_g, theirs, mine, dtype):
    """Compare the outputs, backward a random weighting of them, compare all gradients."""
    pairs = [(a, b) for a, b in zip(outs_t, outs_g) if a is not None]
    for i, (a, b) in enumerate(pairs):
        close(a, b, dtype, f"output {i}")
    weights = [torch.randn_like(a).masked_fill(a.isnan(), 0) for a, _ in pairs]
    sum((a.nan_to_num() * w).sum() for (a, _), w in zip(pairs, weights)).backward()
    sum((b.nan_to_num() * ours(w)).sum() for (_, b), w in zip(pairs, weights)).backward()
    for i, (a, b) in enumerate(zip(inputs_t, inputs_g)):
        if a is not None and a.requires_grad:
            close(a.grad, b.grad, dtype, f"input {i} grad")
    for (name, p), (name2, q) in zip(theirs.named_parameters(), mine.named_parameters()):
        assert name == name2
        close(p.grad, q.grad, dtype, name)


def randn(*shape, dtype=torch.float64, grad=True):
    return torch.randn(*shape, dtype=dtype, requires_grad=grad)


def masks(kind, dtype, batch_first=False):
    """(attn_mask, key_padding_mask) of one kind; no row is fully masked."""
    keep = torch.ones(L, S, dtype=torch.bool).tril(1)  # every query sees at least two keys
    padding = torch.tensor([[False] * S, [False] * 3 + [True] * 2, [False] * 4 + [True]])
    float_of = lambda m: torch.zeros(m.shape, dtype=dtype).masked_fill(m, float("-inf"))  # noqa: E731
    return {
        "none": (None, None),
        "bool2d": (~keep, None),
        "float2d": (float_of(~keep) + torch.randn(L, S, dtype=dtype) * 0.1, None),
        "bool3d": (~keep.expand(N * HEADS, L, S).clone(), None),
        "float3d": (torch.randn(N * HEADS, L, S, dtype=dtype), None),
        "padding_bool": (None, padding),
        "padding_float": (None, float_of(padding)),
        "both": (~keep, padding),
    }[kind]


# ---- MultiheadAttention ---------------------------------------------------------------------
MASK_KINDS = ["none", "bool2d", "float2d", "bool3d", "float3d", "padding_bool", "padding_float", "both"]


@pytest.mark.parametrize("need_weights", [True, False], ids=["weights", "sdpa"])
@pytest.mark.parametrize("kind", MASK_KINDS)
@pytest.mark.parametrize("batch_first", [False, True], ids=["seq_first", "batch_first"])
def test_mha_masks(kind, batch_first, need_weights):
    torch.manual_seed(0)
    theirs, mine = pair("MultiheadAttention", embed_dim=E, num_heads=HEADS, batch_first=batch_first)
    shape = lambda n: (N, n, E) if batch_first else (n, N, E)  # noqa: E731
    q, k, v = randn(*shape(L)), randn(*shape(S)), randn(*shape(S))
    qg, kg, vg = ours(q), ours(k), ours(v)
    attn_mask, kpm = masks(kind, torch.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch: "Support for mismatched key_padding_mask and attn_mask..."
        out_t = theirs(q, k, v, key_padding_mask=kpm, need_weights=need_weights, attn_mask=attn_mask)
        out_g = mine(qg, kg, vg, key_padding_mask=ours(kpm), need_weights=need_weights, attn_mask=ours(attn_mask))
    assert (out_g[1] is None) == (not need_weights)
    backward_and_compare(out_t, out_g, (q, k, v), (qg, kg, vg), theirs, mine, torch.float64)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("kw", [dict(), dict(kdim=5, vdim=3), dict(add_bias_kv=True), dict(add_zero_attn=True),
                                dict(bias=False), dict(add_bias_kv=True, add_zero_attn=True, kdim=6)],
                         ids=["plain", "kdim_vdim", "bias_kv", "zero_attn", "no_bias", "all"])
def test_mha_options(kw, dtype):
    torch.manual_seed(1)
    theirs, mine = pair("MultiheadAttention", dtype, embed_dim=E, num_heads=HEADS, **kw)
    q = randn(L, N, E, dtype=dtype)
    k, v = randn(S, N, kw.get("kdim", E), dtype=dtype), randn(S, N, kw.get("vdim", E), dtype=dtype)
    _, kpm = masks("padding_bool", dtype)
    qg, kg, vg = ours(q), ours(k), ours(v)
    out_t = theirs(q, k, v, key_padding_mask=kpm, average_attn_weights=False)
    out_g = mine(qg, kg, vg, key_padding_mask=ours(kpm), average_attn_weights=False)
    assert tuple(out_g[1].shape) == (N, HEADS, L, S + kw.get("add_bias_kv", 0) + kw.get("add_zero_attn", 0))
    backward_and_compare(out_t, out_g, (q, k, v), (qg, kg, vg), theirs, mine, dtype)


@pytest.mark.parametrize("need_weights", [True, False], ids=["weights", "sdpa"])
def test_mha_self_attention_and_causal(need_weights):
    torch.manual_seed(2)
    theirs, mine = pair("MultiheadAttention", embed_dim=E, num_heads=HEADS, batch_first=True)
    x = randn(N, L, E)
    xg = ours(x)
    causal = torch.nn.Transformer.generate_square_subsequent_mask(L, dtype=torch.float64)
    out_t = theirs(x, x, x, attn_mask=causal, is_causal=True, need_weights=need_weights)
    out_g = mine(xg, xg, xg, attn_mask=ours(causal), is_causal=True, need_weights=need_weights)
    backward_and_compare(out_t, out_g, (x,), (xg,), theirs, mine, torch.float64)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        mine(xg, xg, xg, is_causal=True)


@pytest.mark.parametrize("need_weights", [True, False], ids=["weights", "sdpa"])
def test_mha_unbatched(need_weights):
    torch.manual_seed(3)
    theirs, mine = pair("MultiheadAttention", embed_dim=E, num_heads=HEADS)
    q, k = randn(L, E), randn(S, E)
    attn_mask = torch.rand(HEADS, L, S) > 0.8
    attn_mask[..., 0] = False
    qg, kg = ours(q), ours(k)
    out_t = theirs(q, k, k, attn_mask=attn_mask, need_weights=need_weights)
    out_g = mine(qg, kg, kg, attn_mask=ours(attn_mask), need_weights=need_weights)
    backward_and_compare(out_t, out_g, (q, k), (qg, kg), theirs, mine, torch.float64)


def test_mha_eval_and_dropout():
    torch.manual_seed(4)
    theirs, mine = pair("MultiheadAttention", embed_dim=E, num_heads=HEADS, dropout=0.5, batch_first=True)
    x = torch.randn(N, L, E, dtype=torch.float64)
    theirs.eval()
    mine.eval()  # no dropout in eval: equal to torch (whose fast path it takes)
    with torch.no_grad():
        out_t = theirs(x, x, x)
    out_g = mine(ours(x), ours(x), ours(x))
    close(out_t[0], out_g[0], torch.float64)
    close(out_t[1], out_g[1], torch.float64)
    mine.train()
    w = mine(ours(x), ours(x), ours(x))[1]
    assert not np.allclose(w.detach().numpy(), out_g[1].detach().numpy())


def test_mha_graph_and_state_dict():
    theirs, mine = pair("MultiheadAttention", torch.float32, embed_dim=E, num_heads=HEADS)
    assert repr(theirs) == repr(mine)
    x = torch.randn(L, N, E)
    out_t, w_t = theirs(x, x, x)
    out_g, w_g = mine(ours(x), ours(x), ours(x))
    assert out_g.grad_fn.name() == out_t.grad_fn.name() == "ViewBackward0"
    assert w_g.grad_fn.name() == w_t.grad_fn.name() == "MeanBackward1"
    sep_t = torch.nn.MultiheadAttention(E, HEADS, kdim=3, vdim=4)
    sep_g = TR.MultiheadAttention(E, HEADS, kdim=3, vdim=4)
    assert list(sep_t.state_dict()) == list(sep_g.state_dict())
    assert sep_g.in_proj_weight is None and sep_g.k_proj_weight.shape == (E, 3)
    assert float(abs(mine.in_proj_bias).sum()) == 0.0 and float(abs(mine.out_proj.bias).sum()) == 0.0


def test_mha_errors():
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        TR.MultiheadAttention(6, 4)
    with pytest.raises(ValueError, match="embed_dim and num_heads must be greater than 0"):
        TR.MultiheadAttention(0, 2)
    mine, theirs = TR.MultiheadAttention(E, HEADS), torch.nn.MultiheadAttention(E, HEADS)
    cases = [
        lambda lib: (lib.randn(L, N, E), lib.randn(S, N, E), lib.randn(S, N, E), dict(attn_mask=lib.zeros(3, 3))),
        lambda lib: (lib.randn(L, N, E), lib.randn(S, N, E), lib.randn(S, N, E),
                     dict(key_padding_mask=lib.zeros(N, S + 1, dtype=lib.bool))),
        lambda lib: (lib.randn(L, N, E), lib.randn(S, N, E), lib.randn(S + 1, N, E), {}),
        lambda lib: (lib.randn(L, N, E), lib.randn(S, E), lib.randn(S, E), {}),
        lambda lib: (lib.randn(L, N, E), lib.randn(S, N, E), lib.randn(S, N, E),
                     dict(attn_mask=lib.zeros(L, S, dtype=lib.int64))),
    ]
    for case in cases:
        q, k, v, kw = case(torch)
        with pytest.raises(Exception) as et:
            theirs(q, k, v, **kw)
        q, k, v, kw = case(gt)
        with pytest.raises(type(et.value)) as eg:
            mine(q, k, v, **kw)
        assert str(eg.value) == str(et.value)


# ---- the Transformer layers ------------------------------------------------------------------
LAYER_KW = dict(d_model=E, nhead=HEADS, dim_feedforward=16, dropout=0.0)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("activation", ["relu", "gelu", "callable"])
@pytest.mark.parametrize("norm_first", [False, True], ids=["post_norm", "pre_norm"])
def test_encoder_layer(norm_first, activation, train, dtype):
    torch.manual_seed(5)
    act = (lambda x: x.sigmoid() * x) if activation == "callable" else activation
    theirs, mine = pair("TransformerEncoderLayer", dtype, norm_first=norm_first, activation=act, batch_first=True,
                        **LAYER_KW)
    theirs.train(train)
    mine.train(train)
    x = randn(N, S, E, dtype=dtype)
    xg = ours(x)
    _, kpm = masks("padding_float", dtype)  # float like the causal mask (mixing warns, in torch and here)
    causal = torch.nn.Transformer.generate_square_subsequent_mask(S, dtype=dtype)
    out_t = theirs(x, src_mask=causal, src_key_padding_mask=kpm)
    out_g = mine(xg, src_mask=ours(causal), src_key_padding_mask=ours(kpm))
    backward_and_compare((out_t,), (out_g,), (x,), (xg,), theirs, mine, dtype)
    assert mine.activation_relu_or_gelu == theirs.activation_relu_or_gelu


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("norm_first", [False, True], ids=["post_norm", "pre_norm"])
def test_decoder_layer(norm_first, activation, train, dtype):
    torch.manual_seed(6)
    theirs, mine = pair("TransformerDecoderLayer", dtype, norm_first=norm_first, activation=activation, **LAYER_KW)
    theirs.train(train)
    mine.train(train)
    tgt, memory = randn(L, N, E, dtype=dtype), randn(S, N, E, dtype=dtype)
    tg, mg = ours(tgt), ours(memory)
    causal = torch.nn.Transformer.generate_square_subsequent_mask(L, dtype=dtype)
    _, mem_kpm = masks("padding_bool", dtype)
    out_t = theirs(tgt, memory, tgt_mask=causal, memory_key_padding_mask=mem_kpm, tgt_is_causal=True)
    out_g = mine(tg, mg, tgt_mask=ours(causal), memory_key_padding_mask=ours(mem_kpm), tgt_is_causal=True)
    backward_and_compare((out_t,), (out_g,), (tgt, memory), (tg, mg), theirs, mine, dtype)


@pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")
def test_encoder_stack_and_nested_inference():
    torch.manual_seed(7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(batch_first=True, **LAYER_KW), 2,
                                             norm=torch.nn.LayerNorm(E)).double()
    mine = TR.TransformerEncoder(TR.TransformerEncoderLayer(batch_first=True, **LAYER_KW), 2,
                                 norm=LayerNorm(E)).double()
    copy_weights(mine, theirs)
    assert mine.use_nested_tensor and repr(mine) == repr(theirs)
    x = randn(N, S, E)
    xg = ours(x)
    _, kpm = masks("padding_bool", torch.float64)
    backward_and_compare((theirs(x, src_key_padding_mask=kpm),), (mine(xg, src_key_padding_mask=ours(kpm)),),
                         (x,), (xg,), theirs, mine, torch.float64)
    theirs.eval()
    mine.eval()
    with torch.no_grad(), gt.no_grad():  # torch's nested-tensor path: padded positions come out as zeros
        out_t = theirs(x, src_key_padding_mask=kpm)
        out_g = mine(xg, src_key_padding_mask=ours(kpm))
    close(out_t, out_g, torch.float64)
    with torch.no_grad(), gt.no_grad():
        causal = torch.nn.Transformer.generate_square_subsequent_mask(S, dtype=torch.float64)
        close(theirs(x, mask=causal), mine(xg, mask=ours(causal)), torch.float64)


def test_nested_tensor_warning():
    for layer_kw, reason in [(dict(), "self_attn.batch_first was not True"),
                             (dict(batch_first=True, norm_first=True), "norm_first was True"),
                             (dict(batch_first=True, activation=lambda x: x), "activation_relu_or_gelu was not True")]:
        with pytest.warns(UserWarning, match=reason):
            enc = TR.TransformerEncoder(TR.TransformerEncoderLayer(**LAYER_KW, **layer_kw), 1)
        assert not enc.use_nested_tensor
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        TR.TransformerEncoder(TR.TransformerEncoderLayer(**LAYER_KW), 1, enable_nested_tensor=False)


@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer(batch_first):
    torch.manual_seed(8)
    kw = dict(d_model=E, nhead=HEADS, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=16, dropout=0.0,
              batch_first=batch_first)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs, mine = pair("Transformer", **kw)
    assert repr(theirs) == repr(mine)
    shape = lambda n: (N, n, E) if batch_first else (n, N, E)  # noqa: E731
    src, tgt = randn(*shape(S)), randn(*shape(L))
    sg, tg = ours(src), ours(tgt)
    tgt_mask = torch.nn.Transformer.generate_square_subsequent_mask(L, dtype=torch.float64)
    _, kpm = masks("padding_bool", torch.float64)
    out_t = theirs(src, tgt, tgt_mask=tgt_mask, src_key_padding_mask=kpm, memory_key_padding_mask=kpm)
    out_g = mine(sg, tg, tgt_mask=ours(tgt_mask), src_key_padding_mask=ours(kpm), memory_key_padding_mask=ours(kpm))
    backward_and_compare((out_t,), (out_g,), (src, tgt), (sg, tg), theirs, mine, torch.float64)
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal to d_model"):
        mine(gt.randn(*shape(S)[:-1], E + 1), tg)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        mine(gt.randn(*((N + 1, S, E) if batch_first else (S, N + 1, E))), tg)


def test_square_subsequent_mask():
    for sz in (1, 4):
        t = torch.nn.Transformer.generate_square_subsequent_mask(sz)
        g = TR.Transformer.generate_square_subsequent_mask(sz)
        assert g.dtype == gt.float32 and g.tolist() == t.tolist()
    assert TR.Transformer.generate_square_subsequent_mask(3, dtype=gt.float64).dtype == gt.float64


def test_activation_errors_and_state_dicts():
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        TR.TransformerEncoderLayer(E, HEADS, activation="tanh")
    for cls in ("TransformerEncoderLayer", "TransformerDecoderLayer"):
        theirs, mine = getattr(torch.nn, cls)(E, HEADS, 16, bias=False), getattr(TR, cls)(E, HEADS, 16, bias=False)
        assert [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()] == \
            [(k, tuple(v.shape)) for k, v in mine.state_dict().items()]
        assert repr(theirs) == repr(mine)


@pytest.mark.parametrize("module", ["glasstorch.nn.modules.transformer"])
def test_docstring_examples(module):
    import doctest
    import importlib
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0


def test_out_proj_class_lives_where_torch_keeps_it_and_loads_as_a_safe_global():
    """pytorch/examples' word_language_model lists torch.nn.modules.linear.NonDynamicallyQuantizableLinear
    among torch.load's safe globals to reload its saved Transformer."""
    import io
    for lib in (gt, torch):
        cls = lib.nn.modules.linear.NonDynamicallyQuantizableLinear
        m = lib.nn.MultiheadAttention(4, 2)
        assert type(m.out_proj) is cls and issubclass(cls, lib.nn.Linear)
        buf = io.BytesIO()
        lib.save(m, buf)
        buf.seek(0)
        with lib.serialization.safe_globals([lib.nn.modules.activation.MultiheadAttention, cls]):
            back = lib.load(buf)
        assert type(back.out_proj) is cls and repr(back) == repr(m)
