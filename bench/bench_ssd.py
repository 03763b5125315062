"""d2l's TinySSD (Dive into Deep Learning, section 14.7, "Single Shot Multibox Detection") forward
on a batch of 32 3x256x256 images, written from the book's code, in one framework per process so
that trees and torch can be interleaved by the caller on a shared machine:

    python bench/bench_ssd.py                  # glasstorch: forward, ms (process CPU time)
    FW=torch python bench/bench_ssd.py         # torch
    python bench/bench_ssd.py --backward       # forward + the book's loss + backward
    python bench/bench_ssd.py --profile        # cProfile of one forward, by own time
    python bench/bench_ssd.py --ops            # time per aten op (glasstorch: a TorchDispatchMode)

The book's pieces: ``base_net`` (three down-sampling blocks 3-16-32-64: two 3x3 conv + BatchNorm
+ ReLU, then 2x2 max pooling), ``down_sample_blk(64, 128)``, two ``down_sample_blk(128, 128)``,
``AdaptiveMaxPool2d((1, 1))``; after each, ``multibox_prior`` with the book's sizes and ratios and
the class and box predictors (3x3 convolutions); the predictions flattened (``permute`` +
``flatten``) and concatenated.
"""
import argparse
import os
import statistics
import time

import numpy as np

if os.environ.get("FW") == "torch":
    import torch
    from torch import nn
    from torch.nn import functional as F
    torch.set_num_threads(1)
else:
    import glasstorch as torch
    from glasstorch import nn
    from glasstorch.nn import functional as F

try:
    from threadpoolctl import threadpool_limits
    _BLAS_LIMIT = threadpool_limits(1)
except ImportError:
    pass


def multibox_prior(data, sizes, ratios):
    """Anchor boxes centred on each pixel (d2l 14.4)."""
    in_height, in_width = data.shape[-2:]
    device, num_sizes, num_ratios = data.device, len(sizes), len(ratios)
    boxes_per_pixel = (num_sizes + num_ratios - 1)
    size_tensor = torch.tensor(sizes, device=device)
    ratio_tensor = torch.tensor(ratios, device=device)
    offset_h, offset_w = 0.5, 0.5
    steps_h = 1.0 / in_height
    steps_w = 1.0 / in_width
    center_h = (torch.arange(in_height, device=device) + offset_h) * steps_h
    center_w = (torch.arange(in_width, device=device) + offset_w) * steps_w
    shift_y, shift_x = torch.meshgrid(center_h, center_w, indexing='ij')
    shift_y, shift_x = shift_y.reshape(-1), shift_x.reshape(-1)
    w = torch.cat((size_tensor * torch.sqrt(ratio_tensor[0]),
                   sizes[0] * torch.sqrt(ratio_tensor[1:]))) * in_height / in_width
    h = torch.cat((size_tensor / torch.sqrt(ratio_tensor[0]),
                   sizes[0] / torch.sqrt(ratio_tensor[1:])))
    anchor_manipulations = torch.stack((-w, -h, w, h)).T.repeat(in_height * in_width, 1) / 2
    out_grid = torch.stack([shift_x, shift_y, shift_x, shift_y], dim=1).repeat_interleave(boxes_per_pixel, dim=0)
    output = out_grid + anchor_manipulations
    return output.unsqueeze(0)


def cls_predictor(num_inputs, num_anchors, num_classes):
    return nn.Conv2d(num_inputs, num_anchors * (num_classes + 1), kernel_size=3, padding=1)


def bbox_predictor(num_inputs, num_anchors):
    return nn.Conv2d(num_inputs, num_anchors * 4, kernel_size=3, padding=1)


def flatten_pred(pred):
    return torch.flatten(pred.permute(0, 2, 3, 1), start_dim=1)


def concat_preds(preds):
    return torch.cat([flatten_pred(p) for p in preds], dim=1)


def down_sample_blk(in_channels, out_channels):
    blk = []
    for _ in range(2):
        blk.append(nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1))
        blk.append(nn.BatchNorm2d(out_channels))
        blk.append(nn.ReLU())
        in_channels = out_channels
    blk.append(nn.MaxPool2d(2))
    return nn.Sequential(*blk)


def base_net():
    blk = []
    num_filters = [3, 16, 32, 64]
    for i in range(len(num_filters) - 1):
        blk.append(down_sample_blk(num_filters[i], num_filters[i + 1]))
    return nn.Sequential(*blk)


def get_blk(i):
    if i == 0:
        return base_net()
    if i == 1:
        return down_sample_blk(64, 128)
    if i == 4:
        return nn.AdaptiveMaxPool2d((1, 1))
    return down_sample_blk(128, 128)


def blk_forward(X, blk, size, ratio, cls_predictor, bbox_predictor):
    Y = blk(X)
    anchors = multibox_prior(Y, sizes=size, ratios=ratio)
    cls_preds = cls_predictor(Y)
    bbox_preds = bbox_predictor(Y)
    return (Y, anchors, cls_preds, bbox_preds)


sizes = [[0.2, 0.272], [0.37, 0.447], [0.54, 0.619], [0.71, 0.79], [0.88, 0.961]]
ratios = [[1, 2, 0.5]] * 5
num_anchors = len(sizes[0]) + len(ratios[0]) - 1


class TinySSD(nn.Module):
    def __init__(self, num_classes, **kwargs):
        super().__init__(**kwargs)
        self.num_classes = num_classes
        idx_to_in_channels = [64, 128, 128, 128, 128]
        for i in range(5):
            setattr(self, f'blk_{i}', get_blk(i))
            setattr(self, f'cls_{i}', cls_predictor(idx_to_in_channels[i], num_anchors, num_classes))
            setattr(self, f'bbox_{i}', bbox_predictor(idx_to_in_channels[i], num_anchors))

    def forward(self, X):
        anchors, cls_preds, bbox_preds = [None] * 5, [None] * 5, [None] * 5
        for i in range(5):
            X, anchors[i], cls_preds[i], bbox_preds[i] = blk_forward(
                X, getattr(self, f'blk_{i}'), sizes[i], ratios[i],
                getattr(self, f'cls_{i}'), getattr(self, f'bbox_{i}'))
        anchors = torch.cat(anchors, dim=1)
        cls_preds = concat_preds(cls_preds)
        cls_preds = cls_preds.reshape(cls_preds.shape[0], -1, self.num_classes + 1)
        bbox_preds = concat_preds(bbox_preds)
        return anchors, cls_preds, bbox_preds


def make(batch=32):
    torch.manual_seed(0)
    net = TinySSD(num_classes=1)
    X = torch.tensor(np.random.default_rng(0).standard_normal((batch, 3, 256, 256)).astype(np.float32))
    return net, X


def step(net, X, backward):
    anchors, cls_preds, bbox_preds = net(X)
    if backward:   # (the book's loss shapes, with made-up targets: what the backward costs is the point)
        loss = F.cross_entropy(cls_preds.reshape(-1, 2), torch.zeros(cls_preds.shape[0] * cls_preds.shape[1],
                               dtype=torch.long)) + F.l1_loss(bbox_preds, torch.zeros_like(bbox_preds))
        loss.backward()
    return anchors, cls_preds, bbox_preds


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--backward", action="store_true")
    p.add_argument("--profile", action="store_true")
    p.add_argument("--ops", action="store_true")
    args = p.parse_args()
    net, X = make(args.batch)
    step(net, X, args.backward)
    if args.profile:
        import cProfile
        import pstats
        cProfile.runctx("step(net, X, args.backward)", globals(), locals(), "/tmp/bench_ssd.prof")
        pstats.Stats("/tmp/bench_ssd.prof").sort_stats("tottime").print_stats(25)
        return
    if args.ops:
        from collections import defaultdict
        from glasstorch.utils._python_dispatch import TorchDispatchMode
        spent, count = defaultdict(float), defaultdict(int)

        class Timer(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                t = time.process_time()
                out = func(*args, **(kwargs or {}))
                spent[str(func)] += time.process_time() - t
                count[str(func)] += 1
                return out
        with Timer():
            step(net, X, args.backward)
        for name in sorted(spent, key=spent.get, reverse=True)[:20]:
            print(f"{spent[name] * 1e3:9.1f} ms  {count[name]:5d}  {name}")
        return
    times = []
    for _ in range(args.reps):
        t = time.process_time()
        step(net, X, args.backward)
        times.append((time.process_time() - t) * 1e3)
    print(f"{os.environ.get('FW', 'glasstorch')} TinySSD {'fwd+bwd' if args.backward else 'forward'} batch "
          f"{args.batch}: median {statistics.median(times):.0f} ms (CPU), min {min(times):.0f}")


if __name__ == "__main__":
    main()
