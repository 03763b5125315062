"""Recurrent and attention layers: one training step each, glasstorch against torch in the same run.

1. LSTM language model (d2l's, concise): one-hot input (vocab 28) -> nn.LSTM(28, 256) -> Linear(256, 28)
   -> cross_entropy, 35 steps x batch 32, forward + backward + gradient clipping (clip_grad_norm_, 1.0)
   + SGD update.  Goal (issue 13): <= 1.3x torch.
2. One TransformerEncoderLayer (d_model 128, 4 heads, ffn 512, dropout 0, batch_first), sequence 64,
   batch 32, forward + backward of a mean-squared loss + Adam update.  Goal (issue 13): <= 1.1x torch.

Both libraries start from the same weights and inputs; one thread each (torch.set_num_threads(1),
NumPy's BLAS limited with threadpoolctl when it is installed); repetitions interleaved (glasstorch,
torch, glasstorch, ...); medians reported, with the interquartile range of the per-repetition ratio
(how noisy the machine was).

    python bench/bench_rnn.py [--reps 15] [--glasstorch PATH]

``--glasstorch PATH`` imports glasstorch from another checkout (to compare a tree before and after a
change in the same conditions).
"""
import argparse
import os
import statistics
import sys
import time

def _tree():
    """The checkout to import glasstorch from: --glasstorch PATH, else this one."""
    if "--glasstorch" in sys.argv:
        return os.path.abspath(sys.argv[sys.argv.index("--glasstorch") + 1])
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


sys.path.insert(0, _tree())

import numpy as np  # noqa: E402
import torch  # noqa: E402

import glasstorch as gt  # noqa: E402
from glasstorch.nn import functional as gF  # noqa: E402
from glasstorch.nn.modules.linear import Linear  # noqa: E402
from glasstorch.nn.modules.rnn import LSTM  # noqa: E402
from glasstorch.nn.modules.transformer import TransformerEncoderLayer  # noqa: E402

VOCAB, HIDDEN, STEPS, BATCH = 28, 256, 35, 32
D_MODEL, HEADS, FFN, SEQ = 128, 4, 512, 64


def copy_into(mine, theirs):
    mine.load_state_dict({k: gt.tensor(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()})


def lstm_lm_steps():
    """Two closures running one language-model training step: (glasstorch, torch)."""
    rnn_t, lin_t = torch.nn.LSTM(VOCAB, HIDDEN), torch.nn.Linear(HIDDEN, VOCAB)
    rnn_g, lin_g = LSTM(VOCAB, HIDDEN), Linear(HIDDEN, VOCAB)
    copy_into(rnn_g, rnn_t)
    copy_into(lin_g, lin_t)
    X = torch.randint(0, VOCAB, (BATCH, STEPS))
    Y = torch.randint(0, VOCAB, (BATCH, STEPS))
    Xg, Yg = gt.tensor(X.numpy()), gt.tensor(Y.numpy())

    def make(lib, F, rnn, lin, X, Y):
        params = list(rnn.parameters()) + list(lin.parameters())
        opt = lib.optim.SGD(params, lr=0.1)

        def step():
            out, _ = rnn(F.one_hot(X.T, VOCAB).to(lib.float32))
            loss = F.cross_entropy(lin(out.reshape(-1, HIDDEN)), Y.T.reshape(-1))
            opt.zero_grad()
            loss.backward()
            lib.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            return loss.item()
        return step
    return make(gt, gF, rnn_g, lin_g, Xg, Yg), make(torch, torch.nn.functional, rnn_t, lin_t, X, Y)


def encoder_layer_steps():
    layer_t = torch.nn.TransformerEncoderLayer(D_MODEL, HEADS, FFN, dropout=0.0, batch_first=True)
    layer_g = TransformerEncoderLayer(D_MODEL, HEADS, FFN, dropout=0.0, batch_first=True)
    copy_into(layer_g, layer_t)
    x = torch.randn(BATCH, SEQ, D_MODEL)
    xg = gt.tensor(x.numpy().copy())

    target = torch.randn(BATCH, SEQ, D_MODEL)
    target_g = gt.tensor(target.numpy().copy())

    def make(lib, F, layer, x, target):
        opt = lib.optim.Adam(layer.parameters(), lr=1e-3)

        def step():
            opt.zero_grad()
            loss = F.mse_loss(layer(x), target)
            loss.backward()
            opt.step()
            return loss.item()
        return step
    return make(gt, gF, layer_g, xg, target_g), make(torch, torch.nn.functional, layer_t, x, target)


def median_times(fns, reps):
    """Median wall and process (CPU) time of each closure over ``reps`` interleaved runs, and the
    quartiles of the per-repetition wall-time ratio of the first to the second (the noise). On a
    shared machine the process time is the steadier figure: it leaves out the time the process
    waited for a core."""
    for f in fns:  # warm-up (allocates .grad, optimizer state, caches)
        f()
        f()
    wall, cpu = [[] for _ in fns], [[] for _ in fns]
    for _ in range(reps):
        for i, f in enumerate(fns):
            t0, c0 = time.perf_counter(), time.process_time()
            f()
            cpu[i].append(time.process_time() - c0)
            wall[i].append(time.perf_counter() - t0)
    ratios = sorted(a / b for a, b in zip(wall[0], wall[1]))
    quartiles = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
    return [statistics.median(t) for t in wall], [statistics.median(t) for t in cpu], (quartiles[0], quartiles[2])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--glasstorch", default=None, help="import glasstorch from this checkout")
    args = parser.parse_args()
    print(f"glasstorch from {os.path.dirname(os.path.dirname(os.path.abspath(gt.__file__)))}")
    torch.set_num_threads(1)
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1)
    except ImportError:
        print("(threadpoolctl not installed: NumPy's BLAS may use several threads)")
    torch.manual_seed(0)
    gt.manual_seed(0)
    goals = {"LSTM LM step (clipping, SGD)": 1.3, "TransformerEncoderLayer step (Adam)": 1.1}
    for (name, goal), make in zip(goals.items(), (lstm_lm_steps, encoder_layer_steps)):
        ours, theirs = make()
        (a, b), (ca, cb), (q1, q3) = median_times([ours, theirs], args.reps)
        verdict = "ok" if ca / cb <= goal else "over goal"
        print(f"{name:36s} glasstorch {a * 1e3:7.1f} ms   torch {b * 1e3:7.1f} ms   ratio {a / b:4.2f}x "
              f"(per-rep IQR {q1:.2f}-{q3:.2f}); process time {ca * 1e3:.1f} / {cb * 1e3:.1f} ms = {ca / cb:4.2f}x "
              f"(goal <= {goal}x: {verdict})")


if __name__ == "__main__":
    main()
