"""Recurrent and attention layers: one training step each, glasstorch against torch in the same run.

1. LSTM language model (d2l's, concise): one-hot input (vocab 28) -> nn.LSTM(28, 256) -> Linear(256, 28)
   -> cross_entropy, 35 steps x batch 32, forward + backward + SGD update.  Goal: <= 1.6x torch.
2. One TransformerEncoderLayer (d_model 128, 4 heads, ffn 512, dropout 0, batch_first), sequence 64,
   batch 32, forward + backward.  Goal: <= 1.4x torch.

Both libraries start from the same weights and inputs; one thread each (torch.set_num_threads(1),
NumPy's BLAS limited with threadpoolctl when it is installed); repetitions interleaved (glasstorch,
torch, glasstorch, ...); medians reported.

    python bench/bench_rnn.py [--reps 15]
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

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
            opt.step()
            return loss.item()
        return step
    return make(gt, gF, rnn_g, lin_g, Xg, Yg), make(torch, torch.nn.functional, rnn_t, lin_t, X, Y)


def encoder_layer_steps():
    layer_t = torch.nn.TransformerEncoderLayer(D_MODEL, HEADS, FFN, dropout=0.0, batch_first=True)
    layer_g = TransformerEncoderLayer(D_MODEL, HEADS, FFN, dropout=0.0, batch_first=True)
    copy_into(layer_g, layer_t)
    x = torch.randn(BATCH, SEQ, D_MODEL, requires_grad=True)
    xg = gt.tensor(x.detach().numpy()).requires_grad_()

    def make(layer, x):
        def step():
            layer.zero_grad()
            x.grad = None
            y = layer(x)
            y.sum().backward()
            return y
        return step
    return make(layer_g, xg), make(layer_t, x)


def median_times(fns, reps):
    for f in fns:  # warm-up (allocates .grad, optimizer state, caches)
        f()
    times = [[] for _ in fns]
    for _ in range(reps):
        for i, f in enumerate(fns):
            t0 = time.perf_counter()
            f()
            times[i].append(time.perf_counter() - t0)
    return [statistics.median(t) for t in times]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=15)
    args = parser.parse_args()
    torch.set_num_threads(1)
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1)
    except ImportError:
        print("(threadpoolctl not installed: NumPy's BLAS may use several threads)")
    torch.manual_seed(0)
    gt.manual_seed(0)
    goals = {"LSTM language model step": 1.6, "TransformerEncoderLayer fwd+bwd": 1.4}
    for (name, goal), make in zip(goals.items(), (lstm_lm_steps, encoder_layer_steps)):
        ours, theirs = make()
        a, b = median_times([ours, theirs], args.reps)
        verdict = "ok" if a / b <= goal else "over goal"
        print(f"{name:34s} glasstorch {a * 1e3:7.1f} ms   torch {b * 1e3:7.1f} ms   ratio {a / b:4.2f}x "
              f"(goal <= {goal}x: {verdict})")


if __name__ == "__main__":
    main()
