"""nn.RNN / nn.GRU / nn.LSTM, the cells and packed sequences, against real torch.

Each case builds torch's module, copies its state_dict into ours (through NumPy), runs the same
input through both, and compares outputs, final states and the gradients of every parameter,
of the input and of the initial states: tight in float64, loosely in float32.
"""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import glasstorch as gt  # noqa: E402
from glasstorch.nn.modules import rnn as R  # noqa: E402
from glasstorch.nn.utils import _packing as P  # noqa: E402
from glasstorch.ops import nn_rnn  # noqa: E402
import torch.nn.utils.rnn as TP  # noqa: E402

TOL = {torch.float64: dict(rtol=1e-9, atol=1e-11), torch.float32: dict(rtol=2e-4, atol=2e-5)}
MODES = {"RNN_TANH": ("RNN", {}), "RNN_RELU": ("RNN", {"nonlinearity": "relu"}), "GRU": ("GRU", {}),
         "LSTM": ("LSTM", {})}
T_LEN, BATCH, IN, HID = 5, 3, 4, 6


def ours(t, requires_grad=None):
    """A glasstorch copy of a torch tensor (a fresh leaf)."""
    g = gt.tensor(t.detach().numpy().copy())
    return g.requires_grad_(t.requires_grad if requires_grad is None else requires_grad)


def pair(cls_name, dtype=torch.float64, **kw):
    """torch's module and ours with the same weights."""
    theirs = getattr(torch.nn, cls_name)(**kw).to(dtype)
    mine = getattr(R, cls_name)(**kw).to(gt.float64 if dtype == torch.float64 else gt.float32)
    mine.load_state_dict({k: gt.tensor(v.numpy().copy()) for k, v in theirs.state_dict().items()})
    return theirs, mine


def close(a, b, dtype, what=""):
    assert a is not None and b is not None, what
    np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), err_msg=what, **TOL[dtype])


def flatten_state(state):
    return list(state) if isinstance(state, tuple) else [state]


def run_both(theirs, mine, x, hx, dtype):
    """Forward both, backward a random weighting of every output, compare everything."""
    gx = ours(x)
    ghx = None if hx is None else (tuple(ours(h) for h in hx) if isinstance(hx, tuple) else ours(hx))
    out_t, st_t = theirs(x, hx)
    out_g, st_g = mine(gx, ghx)
    outs_t, outs_g = [out_t] + flatten_state(st_t), [out_g] + flatten_state(st_g)
    for i, (a, b) in enumerate(zip(outs_t, outs_g)):
        assert tuple(a.shape) == tuple(b.shape), (i, a.shape, b.shape)
        close(a, b, dtype, f"output {i}")
    weights = [torch.randn_like(a) for a in outs_t]
    sum(((a * w).sum() for a, w in zip(outs_t, weights))).backward()
    sum(((b * ours(w, False)).sum() for b, w in zip(outs_g, weights))).backward()
    for (name, p), (name2, q) in zip(theirs.named_parameters(), mine.named_parameters()):
        assert name == name2
        close(p.grad, q.grad, dtype, name)
    close(x.grad, gx.grad, dtype, "input grad")
    if hx is not None:
        for i, (a, b) in enumerate(zip(flatten_state(hx), flatten_state(ghx))):
            close(a.grad, b.grad, dtype, f"hx[{i}] grad")
    return out_g, st_g


def make_input(batch_first, dtype, batched=True):
    shape = (BATCH, T_LEN, IN) if batch_first else (T_LEN, BATCH, IN)
    return torch.randn(shape if batched else (T_LEN, IN), dtype=dtype, requires_grad=True)


def make_state(mode, n, batched, dtype, proj=0):
    lead = (n, BATCH) if batched else (n,)
    h = torch.randn(lead + (proj or HID,), dtype=dtype, requires_grad=True)
    if mode == "LSTM":
        return h, torch.randn(lead + (HID,), dtype=dtype, requires_grad=True)
    return h


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("with_h0", [False, True], ids=["zero_h0", "h0"])
@pytest.mark.parametrize("batch_first", [False, True], ids=["seq_first", "batch_first"])
@pytest.mark.parametrize("bidirectional", [False, True], ids=["uni", "bi"])
@pytest.mark.parametrize("num_layers", [1, 2])
@pytest.mark.parametrize("mode", list(MODES))
def test_against_torch(mode, num_layers, bidirectional, batch_first, with_h0, dtype):
    torch.manual_seed(hash((mode, num_layers, bidirectional, batch_first, with_h0)) % 2**31)
    cls, extra = MODES[mode]
    theirs, mine = pair(cls, dtype, input_size=IN, hidden_size=HID, num_layers=num_layers,
                        bidirectional=bidirectional, batch_first=batch_first, **extra)
    n = num_layers * (2 if bidirectional else 1)
    hx = make_state(mode, n, True, dtype) if with_h0 else None
    run_both(theirs, mine, make_input(batch_first, dtype), hx, dtype)


@pytest.mark.parametrize("with_h0", [False, True], ids=["zero_h0", "h0"])
@pytest.mark.parametrize("batch_first", [False, True], ids=["seq_first", "batch_first"])
@pytest.mark.parametrize("mode", list(MODES))
def test_unbatched(mode, batch_first, with_h0):
    torch.manual_seed(1)
    cls, extra = MODES[mode]
    theirs, mine = pair(cls, input_size=IN, hidden_size=HID, num_layers=2, bidirectional=True,
                        batch_first=batch_first, **extra)
    hx = make_state(mode, 4, False, torch.float64) if with_h0 else None
    out, state = run_both(theirs, mine, make_input(batch_first, torch.float64, batched=False), hx, torch.float64)
    assert out.shape == (T_LEN, 2 * HID)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("bias", [True, False])
def test_lstm_proj_size(bias, dtype):
    torch.manual_seed(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch: "LSTM with projections is not supported with oneDNN"
        theirs, mine = pair("LSTM", dtype, input_size=IN, hidden_size=HID, num_layers=2, bidirectional=True,
                            proj_size=2, bias=bias)
        run_both(theirs, mine, make_input(False, dtype), make_state("LSTM", 4, True, dtype, proj=2), dtype)
    assert mine.weight_hr_l1_reverse.shape == (2, HID)


@pytest.mark.parametrize("mode", ["GRU", "RNN_TANH"])
def test_without_bias(mode):
    torch.manual_seed(3)
    cls, extra = MODES[mode]
    theirs, mine = pair(cls, input_size=IN, hidden_size=HID, num_layers=2, bias=False, **extra)
    run_both(theirs, mine, make_input(False, torch.float64), None, torch.float64)


@pytest.mark.parametrize("kw", [dict(num_layers=3, bidirectional=True), dict(bias=False, batch_first=True),
                                dict(proj_size=2, num_layers=2), dict(proj_size=3, bidirectional=True, bias=False)])
@pytest.mark.parametrize("cls", ["RNN", "GRU", "LSTM"])
def test_state_dict_matches_torch(cls, kw):
    if "proj_size" in kw and cls != "LSTM":
        for lib in (torch.nn, R):
            with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM"):
                getattr(lib, cls)(3, 5, **kw)
        return
    gt.manual_seed(0)  # the spread check below is statistical: fixed draws keep it deterministic
    theirs, mine = getattr(torch.nn, cls)(3, 5, **kw), getattr(R, cls)(3, 5, **kw)
    assert [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in mine.state_dict().items()]
    assert theirs._flat_weights_names == mine._flat_weights_names
    assert [[tuple(w.shape) for w in ws] for ws in theirs.all_weights] == \
        [[tuple(w.shape) for w in ws] for ws in mine.all_weights]
    assert repr(theirs) == repr(mine)
    bound = 1 / np.sqrt(5)  # torch's init: U(-1/sqrt(hidden), 1/sqrt(hidden)) for every parameter
    flat = gt.cat([p.detach().reshape(-1) for p in mine.parameters()])
    assert flat.abs().max().item() <= bound          # every parameter inside torch's range...
    assert flat.std().item() > bound / 4             # ...and spread over it (U(-b, b) has std b/sqrt(3))


# ---- the step product's paths ---------------------------------------------------------------
# How the LSTM's and the plain RNN's step products are made depends on the BLAS (nn_rnn._step_preactivations):
# with small-matrix kernels (a small-product bound), in column blocks, and for a narrow input
# (input_size <= state size // 2) as Z = [h_prev | x | 1] times all the weights at once; otherwise one
# product per step added to a projection of all steps. The weight gradients come from one GEMM over Z's
# columns in every case (_z_weight_grads). ``products`` sets the bound these tests run under, whatever this
# machine's BLAS: "one" (none: one product per step), "small blocks" (16 columns a block: the plain RNN's
# products fold too) and "blocks" (which cuts the LSTM's backward product too). With HID = 20, input sizes 1 and 10 are narrow and 11 and 25 wide; a second layer's input
# (20, or 40 bidirectional) is wide; proj_size=8 makes 4 narrow and 10 wide.
HID_BLOCKS = 20


@pytest.fixture(params=["one", "small blocks", "blocks"])
def products(request, monkeypatch):
    bound = {"one": 0, "small blocks": 1536, "blocks": 4096}[request.param]
    monkeypatch.setattr(nn_rnn._blas, "small_product_bound", lambda: bound)
    return request.param


def test_the_blocks_cover_the_product(monkeypatch):
    a = np.zeros((3, 32), np.float32)
    monkeypatch.setattr(nn_rnn._blas, "small_product_bound", lambda: 3072)
    assert nn_rnn._product_blocks(a, 3, 32, 80) == ((0, 32), (32, 64), (64, 80))       # 3072 / 96 = 32 columns
    assert nn_rnn._product_blocks(a.astype(np.float64), 3, 20, 80) == ((0, 48), (48, 80))   # 51 -> 48 (8 per 64 B)
    assert nn_rnn._product_blocks(a, 3, 80, 20) == ((0, 20),)     # 12 columns: under 64 bytes, so one product
    assert nn_rnn._product_blocks(a, 49, 1, 80) == ((0, 80),)     # more than 48 rows: one product
    monkeypatch.setattr(nn_rnn._blas, "small_product_bound", lambda: 0)
    assert nn_rnn._product_blocks(a, 3, 32, 80) == ((0, 80),)
    out = np.empty((3, 80), np.float32)
    b = np.random.default_rng(0).standard_normal((32, 80)).astype(np.float32)
    a = np.random.default_rng(1).standard_normal((3, 32)).astype(np.float32)
    nn_rnn._matmul_blocks(a, b, out, ((0, 32), (32, 64), (64, 80)))
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("input_size", [1, 10, 11, 25])
@pytest.mark.parametrize("mode,extra", [("RNN_TANH", {}), ("RNN_RELU", {}), ("GRU", {}), ("LSTM", {}),
                                        ("LSTM", {"proj_size": 8})], ids=["tanh", "relu", "gru", "lstm", "proj"])
def test_narrow_and_wide_inputs(mode, extra, input_size, bias, dtype, products):
    torch.manual_seed(input_size)
    cls, kw = MODES[mode]
    theirs, mine = pair(cls, dtype, input_size=input_size, hidden_size=HID_BLOCKS, num_layers=2, bidirectional=True,
                        bias=bias, **kw, **extra)
    hx = tuple(torch.randn(4, BATCH, n, dtype=dtype, requires_grad=True)
               for n in ((extra.get("proj_size", HID_BLOCKS), HID_BLOCKS) if mode == "LSTM" else (HID_BLOCKS,)))
    run_both(theirs, mine, torch.randn(T_LEN, BATCH, input_size, dtype=dtype, requires_grad=True),
             hx if mode == "LSTM" else hx[0], dtype)


@pytest.mark.parametrize("input_size", [2, 15])
@pytest.mark.parametrize("frozen", [("weight_ih_l0",), ("weight_hh_l0",), ("bias_ih_l0",), ("bias_hh_l0",),
                                    ("bias_ih_l0", "bias_hh_l0"), ("weight_ih_l0", "weight_hh_l0"),
                                    ("weight_hh_l0", "bias_ih_l0", "bias_hh_l0")])
def test_only_the_wanted_weight_gradients(frozen, input_size, products):
    """A frozen parameter gets no gradient and the others the right one: the weight gradients' GEMM spans only
    the columns of Z the wanted ones need."""
    torch.manual_seed(7)
    theirs, mine = pair("LSTM", input_size=input_size, hidden_size=HID_BLOCKS)
    for m in (theirs, mine):
        for name in frozen:
            getattr(m, name).requires_grad_(False)
    x = torch.randn(T_LEN, BATCH, input_size, dtype=torch.float64)
    out_t, _ = theirs(x)
    out_g, _ = mine(ours(x))
    w = torch.randn_like(out_t)
    (out_t * w).sum().backward()
    (out_g * ours(w, False)).sum().backward()
    for (name, p), (_, q) in zip(theirs.named_parameters(), mine.named_parameters()):
        if name in frozen:
            assert p.grad is None and q.grad is None, name
        else:
            close(p.grad, q.grad, torch.float64, name)
            assert q.grad.is_contiguous(), name


@pytest.mark.parametrize("mode", list(MODES))
def test_packed_narrow_input(mode, products):
    torch.manual_seed(8)
    cls, extra = MODES[mode]
    theirs, mine = pair(cls, input_size=2, hidden_size=HID_BLOCKS, bidirectional=True, **extra)
    lengths = [5, 4, 2, 2]
    x = torch.randn(5, 4, 2, dtype=torch.float64, requires_grad=True)
    gx = ours(x)
    out_t, _ = theirs(TP.pack_padded_sequence(x, lengths))
    out_g, _ = mine(P.pack_padded_sequence(gx, lengths))
    close(out_t.data, out_g.data, torch.float64, "output")
    w = torch.randn_like(out_t.data)
    (out_t.data * w).sum().backward()
    (out_g.data * ours(w, False)).sum().backward()
    close(x.grad, gx.grad, torch.float64, "input grad")
    for (name, p), (_, q) in zip(theirs.named_parameters(), mine.named_parameters()):
        close(p.grad, q.grad, torch.float64, name)


# ---- packed sequences ----------------------------------------------------------------------
@pytest.mark.parametrize("enforce_sorted", [True, False], ids=["sorted", "unsorted"])
@pytest.mark.parametrize("mode", list(MODES))
def test_packed_sequence(mode, enforce_sorted):
    torch.manual_seed(4)
    cls, extra = MODES[mode]
    theirs, mine = pair(cls, input_size=IN, hidden_size=HID, num_layers=2, bidirectional=True, **extra)
    lengths = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
    x = torch.randn(5, 4, IN, dtype=torch.float64, requires_grad=True)
    gx = ours(x)
    hx = make_state(mode, 4, True, torch.float64)
    hx = tuple(h[:, :1].repeat(1, 4, 1).detach().requires_grad_() for h in hx) if mode == "LSTM" else \
        hx[:, :1].repeat(1, 4, 1).detach().requires_grad_()
    ghx = tuple(ours(h) for h in hx) if mode == "LSTM" else ours(hx)
    out_t, st_t = theirs(TP.pack_padded_sequence(x, lengths, enforce_sorted=enforce_sorted), hx)
    out_g, st_g = mine(P.pack_padded_sequence(gx, lengths, enforce_sorted=enforce_sorted), ghx)
    assert isinstance(out_g, P.PackedSequence)
    assert out_t.batch_sizes.tolist() == out_g.batch_sizes.tolist()
    pad_t, len_t = TP.pad_packed_sequence(out_t, batch_first=True)
    pad_g, len_g = P.pad_packed_sequence(out_g, batch_first=True)
    assert len_t.tolist() == len_g.tolist()
    outs_t, outs_g = [pad_t] + flatten_state(st_t), [pad_g] + flatten_state(st_g)
    weights = [torch.randn_like(a) for a in outs_t]
    for a, b in zip(outs_t, outs_g):
        close(a, b, torch.float64)
    sum(((a * w).sum() for a, w in zip(outs_t, weights))).backward()
    sum(((b * ours(w, False)).sum() for b, w in zip(outs_g, weights))).backward()
    close(x.grad, gx.grad, torch.float64, "input grad")
    for a, b in zip(flatten_state(hx), flatten_state(ghx)):
        close(a.grad, b.grad, torch.float64, "hx grad")
    for (name, p), (_, q) in zip(theirs.named_parameters(), mine.named_parameters()):
        close(p.grad, q.grad, torch.float64, name)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths", [[4, 4, 2, 1], [2, 4, 1, 3]])
def test_pack_pad_roundtrip(lengths, batch_first):
    torch.manual_seed(5)
    x = torch.randn((4, 4, 2) if batch_first else (4, 4, 2), dtype=torch.float64, requires_grad=True)
    gx = ours(x)
    sorted_ = lengths == sorted(lengths, reverse=True)
    pt = TP.pack_padded_sequence(x, lengths, batch_first=batch_first, enforce_sorted=sorted_)
    pg = P.pack_padded_sequence(gx, lengths, batch_first=batch_first, enforce_sorted=sorted_)
    close(pt.data, pg.data, torch.float64)
    assert pg.data.grad_fn.name() == pt.data.grad_fn.name() if sorted_ else True
    for a, b in zip(pt[1:], pg[1:]):
        assert (a is None and b is None) or a.tolist() == b.tolist()
    yt, lt = TP.pad_packed_sequence(pt, batch_first=batch_first, padding_value=-2.0, total_length=6)
    yg, lg = P.pad_packed_sequence(pg, batch_first=batch_first, padding_value=-2.0, total_length=6)
    close(yt, yg, torch.float64)
    assert lt.tolist() == lg.tolist() and lg.dtype == gt.int64
    w = torch.randn_like(yt)
    (yt * w).sum().backward()
    (yg * ours(w, False)).sum().backward()
    close(x.grad, gx.grad, torch.float64)


def test_pack_sequence_helpers():
    seqs = [torch.tensor([1, 2]), torch.tensor([3, 4, 5]), torch.tensor([6])]
    gseqs = [gt.tensor(s.numpy()) for s in seqs]
    for enforce in (False,):
        pt, pg = TP.pack_sequence(seqs, enforce_sorted=enforce), P.pack_sequence(gseqs, enforce_sorted=enforce)
        assert [t.tolist() for t in pt] == [t.tolist() for t in pg]
        assert [s.tolist() for s in TP.unpack_sequence(pt)] == [s.tolist() for s in P.unpack_sequence(pg)]
    for side in ("left", "right"):
        for bf in (False, True):
            assert TP.pad_sequence(seqs, bf, -1, side).tolist() == P.pad_sequence(gseqs, bf, -1, side).tolist()
    padded = TP.pad_sequence(seqs)
    assert [s.tolist() for s in TP.unpad_sequence(padded.clone(), torch.tensor([2, 3, 1]))] == \
        [s.tolist() for s in P.unpad_sequence(gt.tensor(padded.numpy()), gt.tensor([2, 3, 1]))]
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
        P.pack_sequence(gseqs)
    with pytest.raises(RuntimeError, match="has to be greater than 0"):
        P.pack_padded_sequence(gt.zeros(3, 2), [3, 0])
    with pytest.raises(RuntimeError, match="to be equal to batch_size"):
        P.pack_padded_sequence(gt.zeros(3, 2), [3])
    with pytest.raises(ValueError, match="Expected total_length to be at least"):
        P.pad_packed_sequence(P.pack_sequence(gseqs, enforce_sorted=False), total_length=2)
    p = P.pack_sequence([gt.ones(3, 2), gt.ones(1, 2)]).double()
    assert p.data.dtype == gt.float64 and p.batch_sizes.dtype == gt.int64


# ---- cells ------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_hx", [False, True])
@pytest.mark.parametrize("cls,kw", [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}), ("GRUCell", {}),
                                    ("LSTMCell", {}), ("GRUCell", {"bias": False})])
def test_cells(cls, kw, with_hx, batched, dtype):
    torch.manual_seed(6)
    theirs, mine = pair(cls, dtype, input_size=IN, hidden_size=HID, **kw)
    x = torch.randn((BATCH, IN) if batched else (IN,), dtype=dtype, requires_grad=True)
    hx = None
    if with_hx:
        hx = make_state("LSTM" if cls == "LSTMCell" else "", 1, batched, dtype)
        hx = tuple(h[0].detach().requires_grad_() for h in hx) if cls == "LSTMCell" else \
            hx[0].detach().requires_grad_()
    gx = ours(x)
    ghx = None if hx is None else (tuple(ours(h) for h in hx) if isinstance(hx, tuple) else ours(hx))
    outs_t, outs_g = flatten_state(theirs(x, hx)), flatten_state(mine(gx, ghx))
    for a, b in zip(outs_t, outs_g):
        assert tuple(a.shape) == tuple(b.shape)
        close(a, b, dtype)
    weights = [torch.randn_like(a) for a in outs_t]
    sum(((a * w).sum() for a, w in zip(outs_t, weights))).backward()
    sum(((b * ours(w, False)).sum() for b, w in zip(outs_g, weights))).backward()
    close(x.grad, gx.grad, dtype)
    for (name, p), (_, q) in zip(theirs.named_parameters(), mine.named_parameters()):
        close(p.grad, q.grad, dtype, name)
    if hx is not None:
        for a, b in zip(flatten_state(hx), flatten_state(ghx)):
            close(a.grad, b.grad, dtype)
    assert [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in mine.state_dict().items()]
    assert repr(theirs) == repr(mine)


def test_cell_graph_is_made_of_ops():
    cell = R.LSTMCell(3, 4)
    h, c = cell(gt.randn(2, 3))
    assert h.grad_fn.name() == "MulBackward0" and c.grad_fn.name() == "AddBackward0"
    assert R.RNNCell(3, 4)(gt.randn(2, 3)).grad_fn.name() == "TanhBackward0"


# ---- behaviour ----------------------------------------------------------------------------
def test_graph_matches_torch_names():
    theirs, mine = pair("LSTM", torch.float32, input_size=IN, hidden_size=HID)
    x = torch.randn(T_LEN, BATCH, IN)
    out_t, (h_t, _) = theirs(x)
    out_g, (h_g, _) = mine(ours(x))
    assert out_g.grad_fn.name() == out_t.grad_fn.name() == "MkldnnRnnLayerBackward0"
    assert h_g.grad_fn.name() == h_t.grad_fn.name() == "StackBackward0"
    assert h_g.grad_fn.next_functions[0] == (out_g.grad_fn, 1)
    assert len(out_g.grad_fn.next_functions) >= len(out_t.grad_fn.next_functions) == 7
    assert out_g.grad_fn._saved_weight0 is mine.weight_ih_l0


def test_inplace_change_of_saved_weight_is_caught():
    lstm = R.LSTM(3, 4)
    out, _ = lstm(gt.randn(2, 1, 3))
    with gt.no_grad():
        lstm.weight_hh_l0.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_second_backward_needs_retain_graph():
    gru = R.GRU(3, 4)
    out, h = gru(gt.randn(2, 1, 3))
    out.sum().backward(retain_graph=True)
    out.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        out.sum().backward()


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN_TANH"])
def test_double_backward(mode):
    """create_graph=True differentiates a recomputation from the cells: compare with torch (float64,
    where torch runs the composite path too)."""
    torch.manual_seed(7)
    cls, extra = MODES[mode]
    theirs, mine = pair(cls, input_size=3, hidden_size=4, bidirectional=True, **extra)
    x = torch.randn(3, 2, 3, dtype=torch.float64, requires_grad=True)
    gx = ours(x)
    (gt_,) = torch.autograd.grad(theirs(x)[0].pow(2).sum(), x, create_graph=True)
    (gg,) = gt.autograd.grad(mine(gx)[0].pow(2).sum(), gx, create_graph=True)
    close(gt_, gg, torch.float64)
    gt_.pow(2).sum().backward()
    gg.pow(2).sum().backward()
    close(x.grad, gx.grad, torch.float64)
    for (name, p), (_, q) in zip(theirs.named_parameters(), mine.named_parameters()):
        close(p.grad, q.grad, torch.float64, name)


@pytest.mark.parametrize("mode", list(MODES))
def test_fused_op_equals_its_reference(mode):
    """The fused layer and its step-by-step definition agree, packed and reversed included."""
    gen = np.random.default_rng(8)
    G = nn_rnn.GATES[mode]
    arrays = [gen.standard_normal(s) * 0.5 for s in [(6, 3), (3, 2), (3, 2), (G * 2, 3), (G * 2, 2),
                                                     (G * 2,), (G * 2,)]]
    seeds = [gen.standard_normal(s) for s in [(6, 2), (3, 2), (3, 2)]]

    def run(fn):
        x, hx, cx, *w = [gt.tensor(a, requires_grad=True) for a in arrays]
        out, h, c = fn(mode, x, hx, cx if mode == "LSTM" else None, tuple(w) + (None,), reverse=True,
                       batch_sizes=[3, 2, 1])
        loss = (out * gt.tensor(seeds[0])).sum() + (h * gt.tensor(seeds[1])).sum()
        if c is not None:
            loss = loss + (c * gt.tensor(seeds[2])).sum()
        loss.backward()
        return [out, h] + [t.grad for t in [x, hx] + w] + ([c, cx.grad] if c is not None else [])

    for a, b in zip(run(nn_rnn.rnn_layer), run(nn_rnn.rnn_layer_reference)):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-13)


def test_dropout_between_layers():
    gt.manual_seed(0)
    lstm = R.LSTM(3, 8, num_layers=2, dropout=0.5)
    x = gt.randn(4, 2, 3)
    lstm.eval()
    a, b = lstm(x)[0], lstm(x)[0]
    assert gt.equal(a, b)
    lstm.train()
    c = lstm(x)[0]
    assert not gt.allclose(a, c)
    c.sum().backward()
    assert lstm.weight_ih_l0.grad is not None
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        R.GRU(3, 4, dropout=0.3)
    with pytest.raises(ValueError, match="dropout should be a number in range"):
        R.GRU(3, 4, dropout=1.5)


def test_conversions_and_reassignment():
    lstm = R.LSTM(3, 4).double()
    assert lstm(gt.randn(2, 1, 3, dtype=gt.float64))[0].dtype == gt.float64
    assert all(w.dtype == gt.float64 for w in lstm._flat_weights)
    lstm.weight_hh_l0 = gt.nn.parameter.Parameter(gt.zeros(16, 4, dtype=gt.float64))
    assert lstm._flat_weights[1] is lstm.weight_hh_l0


def _errors(make_t, make_g, *args):
    with pytest.raises(Exception) as et:
        make_t(*[a if not callable(a) else a(torch) for a in args])
    with pytest.raises(type(et.value)) as eg:
        make_g(*[a if not callable(a) else a(gt) for a in args])
    assert str(eg.value) == str(et.value)


@pytest.mark.parametrize("cls", ["RNN", "GRU", "LSTM"])
def test_errors_match_torch(cls):
    state = (lambda lib, s: (lib.randn(*s), lib.randn(*s))) if cls == "LSTM" else (lambda lib, s: lib.randn(*s))
    theirs, mine = getattr(torch.nn, cls)(3, 4), getattr(R, cls)(3, 4)
    cases = [
        (lambda lib: lib.randn(2, 2, 2, 3), None),                       # 4-D input
        (lambda lib: lib.randn(2, 2, 5), None),                          # wrong input_size
        (lambda lib: lib.randn(2, 2, 3, dtype=lib.float64), None),       # dtype mismatch
        (lambda lib: lib.randn(2, 2, 3), lambda lib: state(lib, (1, 3, 4))),   # wrong batch in hx
        (lambda lib: lib.randn(2, 2, 3), lambda lib: state(lib, (3, 4))),      # 2-D hx for 3-D input
        (lambda lib: lib.randn(2, 3), lambda lib: state(lib, (1, 1, 4))),      # 3-D hx for 2-D input
    ]
    for x, hx in cases:
        _errors(lambda *a: theirs(*a), lambda *a: mine(*a), x, hx if hx is not None else (lambda lib: None))
    for kw in (dict(nonlinearity="sigmoid"),) if cls == "RNN" else ():
        with pytest.raises(ValueError, match="Unknown nonlinearity 'sigmoid'"):
            R.RNN(3, 4, **kw)
    for bad in (dict(hidden_size=0), dict(num_layers=0), dict(bias=1)):
        kw = dict(input_size=3, hidden_size=4, **{k: v for k, v in bad.items() if k != "hidden_size"})
        if "hidden_size" in bad:
            kw["hidden_size"] = 0
        with pytest.raises(Exception) as et:
            getattr(torch.nn, cls)(**kw)
        with pytest.raises(type(et.value), match=str(et.value)):
            getattr(R, cls)(**kw)


def test_cell_errors_match_torch():
    for cls in ("LSTMCell", "GRUCell", "RNNCell"):
        theirs, mine = getattr(torch.nn, cls)(3, 4), getattr(R, cls)(3, 4)
        st = (lambda lib, s: (lib.randn(*s), lib.randn(*s))) if cls == "LSTMCell" else (lambda lib, s: lib.randn(*s))
        for x, hx in [(lambda lib: lib.randn(2, 5), lambda lib: None),
                      (lambda lib: lib.randn(2, 3), lambda lib: st(lib, (3, 4))),
                      (lambda lib: lib.randn(2, 3), lambda lib: st(lib, (2, 5))),
                      (lambda lib: lib.randn(2, 3, 3), lambda lib: None)]:
            _errors(lambda *a: theirs(*a), lambda *a: mine(*a), x, hx)


# ---- a d2l-style language model step -----------------------------------------------------------
def _grad_clipping(params, theta, lib):
    """d2l's grad_clipping, the same code for both libraries."""
    norm = lib.sqrt(sum(lib.sum(p.grad ** 2) for p in params))
    if norm > theta:
        for p in params:
            p.grad[:] *= theta / norm


def test_language_model_step_matches_torch():
    """One-hot -> LSTM -> Linear -> cross_entropy -> clipping -> SGD, two steps with the state carried
    over (d2l's RNN language model, concise version)."""
    from glasstorch.nn import functional as F
    from glasstorch.nn.modules.linear import Linear
    torch.manual_seed(9)
    vocab, hidden, steps, batch = 11, 16, 7, 4
    rnn_t, rnn_g = pair("LSTM", torch.float32, input_size=vocab, hidden_size=hidden)
    lin_t, lin_g = torch.nn.Linear(hidden, vocab), Linear(hidden, vocab)
    lin_g.load_state_dict({k: gt.tensor(v.numpy().copy()) for k, v in lin_t.state_dict().items()})
    params_t = list(rnn_t.parameters()) + list(lin_t.parameters())
    params_g = list(rnn_g.parameters()) + list(lin_g.parameters())
    sides = {"t": dict(lib=torch, F=torch.nn.functional, rnn=rnn_t, lin=lin_t, params=params_t,
                       opt=torch.optim.SGD(params_t, lr=1.0), state=None),
             "g": dict(lib=gt, F=F, rnn=rnn_g, lin=lin_g, params=params_g,
                       opt=gt.optim.SGD(params_g, lr=1.0), state=None)}
    for _ in range(3):
        X, Y = torch.randint(0, vocab, (batch, steps)), torch.randint(0, vocab, (batch, steps))
        losses = []
        for key, s in sides.items():
            lib = s["lib"]
            Xs, Ys = (X, Y) if key == "t" else (gt.tensor(X.numpy()), gt.tensor(Y.numpy()))
            if s["state"] is not None:
                s["state"] = tuple(h.detach() for h in s["state"])
            out, s["state"] = s["rnn"](s["F"].one_hot(Xs.T, vocab).to(lib.float32), s["state"])
            logits = s["lin"](out.reshape(-1, out.shape[-1]))
            loss = s["F"].cross_entropy(logits, Ys.T.reshape(-1))
            s["opt"].zero_grad()
            loss.backward()
            _grad_clipping(s["params"], 1.0, lib)
            s["opt"].step()
            losses.append(loss.item())
        assert abs(losses[0] - losses[1]) < 1e-5
    for p, q in zip(params_t, params_g):
        np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("module", ["glasstorch.nn.modules.rnn", "glasstorch.nn.utils._packing", "glasstorch.ops.nn_rnn"])
def test_docstring_examples(module):
    import doctest
    import importlib
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_saturated_gates(mode, dtype):
    """Pre-activations in the hundreds: the fused kernels' sigmoids ((1 + tanh(z/2)) / 2, the LSTM's with
    its i, f, o weights halved) reach exactly 0 and 1 with no overflow or NaN, and the gradients through
    the flat ends match torch's."""
    torch.manual_seed(11)
    cls, extra = MODES[mode]
    theirs, mine = pair(cls, dtype, input_size=IN, hidden_size=HID, **extra)
    with torch.no_grad():
        x = torch.randn(T_LEN, BATCH, IN, dtype=dtype) * 60
    x.requires_grad_(True)
    out, _ = run_both(theirs, mine, x, None, dtype)
    assert np.isfinite(out.detach().numpy()).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_aligned_arrays_start_on_a_cache_line(dtype):
    like = np.zeros(3, dtype)
    for shape in [(7,), (5, 3), (2, 3, 4), (0,)]:
        a = nn_rnn._aligned_empty(like, shape)
        assert a.shape == shape and a.dtype == dtype and a.flags.c_contiguous and a.flags.writeable
        assert a.ctypes.data % 64 == 0 or a.size == 0       # (an empty array has no elements to place)
    w = np.arange(12.0, dtype=dtype).reshape(3, 4)[:, ::2]       # (a strided source)
    c = nn_rnn._aligned_copy(w)
    assert c.ctypes.data % 64 == 0 and c.flags.c_contiguous and np.array_equal(c, w)
