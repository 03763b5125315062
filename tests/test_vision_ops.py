"""glasstorch.vision.ops (torchvision.ops under the binding) against torchvision.

Two oracles:
- torchvision's own results, recorded by ``tools/vision_reference.py ops`` into
  tests/fixtures/vision_ops.npz (torch 2.13.0, torchvision 0.28.0): the box utilities and
  ``sigmoid_focal_loss`` (torchvision's Python), and ``roi_align`` through torchvision's pure-PyTorch
  reference ``_roi_align`` -- values and gradients, float32 and float64. torchvision's C++ kernels
  (``nms``, ``roi_pool``, ``roi_align``) do not load with the CPU torch build of this environment
  ("Couldn't load custom C++ ops"), so they could not be recorded.
- for those three kernels, the NumPy references below, written loop by loop from torchvision's CPU
  kernels (``torchvision/csrc/ops/cpu/{nms,roi_pool,roi_align}_kernel.cpp``, documented in
  glasstorch's modules' docstrings); the roi_align reference is itself checked against the
  recorded ``_roi_align`` results, where both apply (RoIs inside the image), and d2l's rcnn section
  prints roi_pool's result for its example, checked here too.
"""
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import glasstorch as torch
from glasstorch.vision import ops

import vision_ops_cases

FIXTURE = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "vision_ops.npz"))
TOLERANCE = {"float32": dict(rtol=2e-5, atol=2e-6), "float64": dict(rtol=1e-12, atol=1e-12)}


# -- torchvision's recorded results ---------------------------------------------------------------------

@pytest.mark.parametrize("dtype", vision_ops_cases.DTYPES)
@pytest.mark.parametrize("name,case", vision_ops_cases.CASES, ids=[name for name, _ in vision_ops_cases.CASES])
def test_matches_torchvision(name, case, dtype):
    result = case(torch, ops, dtype)
    recorded = {key.split("/")[2]: FIXTURE[key] for key in FIXTURE.files if key.startswith(f"{name}/{dtype}/")}
    assert set(result) == set(recorded)
    for key, value in result.items():
        expected = recorded[key]
        assert value is not None, key
        assert value.numpy().dtype == expected.dtype, key
        assert tuple(value.shape) == expected.shape, key
        np.testing.assert_allclose(value.numpy(), expected, err_msg=key, **TOLERANCE[dtype])


# -- NumPy references of the C++ kernels ----------------------------------------------------------------

def reference_nms(boxes, scores, threshold):
    order = sorted(range(len(scores)), key=lambda i: -scores[i])      # Python's sort is stable
    keep, suppressed = [], set()
    for position, i in enumerate(order):
        if i in suppressed:
            continue
        keep.append(i)
        for j in order[position + 1:]:
            w = max(0.0, min(boxes[i][2], boxes[j][2]) - max(boxes[i][0], boxes[j][0]))
            h = max(0.0, min(boxes[i][3], boxes[j][3]) - max(boxes[i][1], boxes[j][1]))
            area_i = (boxes[i][2] - boxes[i][0]) * (boxes[i][3] - boxes[i][1])
            area_j = (boxes[j][2] - boxes[j][0]) * (boxes[j][3] - boxes[j][1])
            if w * h / (area_i + area_j - w * h) > threshold:
                suppressed.add(j)
    return keep


def c_round(v):
    return math.floor(v + 0.5) if v >= 0 else -math.floor(-v + 0.5)


def reference_roi_pool(x, rois, scale, ph_n, pw_n):
    """Forward values, and the input gradient of sum(output * weights) for given weights."""
    n, c_n, height, width = x.shape
    out = np.zeros((len(rois), c_n, ph_n, pw_n))
    source = {}
    for k, roi in enumerate(rois):
        b = int(roi[0])
        sw, sh, ew, eh = (c_round(v * scale) for v in roi[1:])
        bin_h, bin_w = max(eh - sh + 1, 1) / ph_n, max(ew - sw + 1, 1) / pw_n
        for ph in range(ph_n):
            for pw in range(pw_n):
                h0 = min(max(math.floor(ph * bin_h) + sh, 0), height)
                h1 = min(max(math.ceil((ph + 1) * bin_h) + sh, 0), height)
                w0 = min(max(math.floor(pw * bin_w) + sw, 0), width)
                w1 = min(max(math.ceil((pw + 1) * bin_w) + sw, 0), width)
                for c in range(c_n):
                    best, where = None, None
                    for h in range(h0, h1):
                        for w in range(w0, w1):
                            if best is None or x[b, c, h, w] > best:
                                best, where = x[b, c, h, w], (b, c, h, w)
                    out[k, c, ph, pw] = 0.0 if best is None else best
                    source[k, c, ph, pw] = where
    return out, source


def reference_roi_align_samples(roi, scale, ph_n, pw_n, ratio, aligned, height, width):
    """{(ph, pw): [(weight, y, x), ...]} with the count division folded into the weights."""
    offset = 0.5 if aligned else 0.0
    sw, sh, ew, eh = (v * scale - offset for v in roi[1:])
    rw, rh = ew - sw, eh - sh
    if not aligned:
        rw, rh = max(rw, 1.0), max(rh, 1.0)
    bin_h, bin_w = rh / ph_n, rw / pw_n
    grid_h = ratio if ratio > 0 else math.ceil(rh / ph_n)
    grid_w = ratio if ratio > 0 else math.ceil(rw / pw_n)
    count = max(grid_h * grid_w, 1)
    samples = {}
    for ph in range(ph_n):
        for pw in range(pw_n):
            taps = samples[ph, pw] = []
            for iy in range(grid_h):
                y = sh + ph * bin_h + (iy + 0.5) * bin_h / grid_h
                for ix in range(grid_w):
                    xx = sw + pw * bin_w + (ix + 0.5) * bin_w / grid_w
                    yy = y
                    if yy < -1.0 or yy > height or xx < -1.0 or xx > width:
                        continue
                    yy, xx = max(yy, 0.0), max(xx, 0.0)
                    yl, xl = int(yy), int(xx)
                    if yl >= height - 1:
                        yl = yh = height - 1
                        yy = float(yl)
                    else:
                        yh = yl + 1
                    if xl >= width - 1:
                        xl = xh = width - 1
                        xx = float(xl)
                    else:
                        xh = xl + 1
                    ly, lx = yy - yl, xx - xl
                    for wgt, py, px in (((1 - ly) * (1 - lx), yl, xl), ((1 - ly) * lx, yl, xh),
                                        (ly * (1 - lx), yh, xl), (ly * lx, yh, xh)):
                        taps.append((wgt / count, py, px))
    return samples


def reference_roi_align(x, rois, scale, ph_n, pw_n, ratio, aligned, weights):
    """Forward values and the input gradient of sum(output * weights)."""
    out = np.zeros((len(rois), x.shape[1], ph_n, pw_n))
    grad = np.zeros_like(x)
    for k, roi in enumerate(rois):
        b = int(roi[0])
        for (ph, pw), taps in reference_roi_align_samples(roi, scale, ph_n, pw_n, ratio, aligned,
                                                          x.shape[2], x.shape[3]).items():
            for wgt, py, px in taps:
                out[k, :, ph, pw] += wgt * x[b, :, py, px]
                grad[b, :, py, px] += wgt * weights[k, :, ph, pw]
    return out, grad


def random_rois(rng, k, n, height, width, spread=1.5):
    """RoIs anywhere around the image, leaving it, tiny, and degenerate (x2 < x1) ones included."""
    a = rng.uniform(-0.5 * width, spread * width, (k, 2))
    b = a + rng.uniform(-2.0, 0.8 * width, (k, 2))
    boxes = np.stack([a[:, 0], a[:, 1] * height / width, b[:, 0], b[:, 1] * height / width], 1)
    return np.concatenate([rng.integers(0, n, (k, 1)), boxes], 1)


# -- roi_align ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("output_size,scale,ratio,aligned", [
    ((2, 3), 1.0, -1, False), (3, 0.5, 2, False), ((3, 2), 0.25, -1, True), (2, 1.0, 1, True), (1, 2.0, 3, False)])
def test_roi_align_matches_kernel_reference(output_size, scale, ratio, aligned, dtype):
    rng = np.random.default_rng(11)
    x = rng.normal(size=(2, 3, 7, 9))
    rois = random_rois(rng, 8, 2, 7 / scale, 9 / scale)
    ph_n, pw_n = (output_size, output_size) if isinstance(output_size, int) else output_size
    weights = rng.uniform(-1, 1, (8, 3, ph_n, pw_n))
    xt = torch.tensor(x, dtype=getattr(torch, dtype), requires_grad=True)
    out = ops.roi_align(xt, torch.tensor(rois, dtype=getattr(torch, dtype)), output_size, scale, ratio, aligned)
    (out * torch.tensor(weights, dtype=out.dtype)).sum().backward()
    expected, expected_grad = reference_roi_align(x, rois, scale, ph_n, pw_n, ratio, aligned, weights)
    np.testing.assert_allclose(out.detach().numpy(), expected, **TOLERANCE[dtype])
    np.testing.assert_allclose(xt.grad.numpy(), expected_grad, **TOLERANCE[dtype])


@pytest.mark.parametrize("name", [name for name, _ in vision_ops_cases.CASES if name.startswith("roi_align")])
def test_roi_align_reference_matches_torchvision_python_reference(name):
    """The loop reference above agrees with torchvision's ``_roi_align`` (recorded, float64)."""
    rng = np.random.default_rng(9)
    x = rng.normal(size=(2, 3, 10, 12))
    case = dict(roi_align_adaptive=((2, 3), 1.0, -1, False), roi_align_ratio2_scaled=((3, 3), 0.5, 2, False),
                roi_align_aligned=((4, 2), 1.0, -1, True), roi_align_aligned_ratio1=((2, 2), 0.25, 1, True))[name]
    (ph_n, pw_n), scale, ratio, aligned = case
    boxes = np.array([[0.0, 0.0, 11.0, 9.0], [1.2, 2.7, 8.9, 6.1], [3.3, 3.1, 3.6, 3.9],
                      [0.5, 0.5, 5.5, 8.5], [6.0, 1.0, 11.0, 4.0]]) / scale
    rois = np.concatenate([[[0], [1], [0], [1], [1]], boxes], axis=1)
    weights = vision_ops_cases._weights((5, 3, ph_n, pw_n), 99)
    out, grad = reference_roi_align(x, rois, scale, ph_n, pw_n, ratio, aligned, weights)
    np.testing.assert_allclose(out, FIXTURE[f"{name}/float64/out"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grad, FIXTURE[f"{name}/float64/grad_x"], rtol=1e-12, atol=1e-12)


def test_roi_align_outside_the_image_is_zero_and_gradcheck():
    x = torch.rand(1, 2, 5, 6, dtype=torch.float64, requires_grad=True)
    far = torch.tensor([[0, 20.0, 20.0, 30.0, 30.0]], dtype=torch.float64)
    assert ops.roi_align(x, far, 2).abs().sum().item() == 0
    rois = torch.tensor([[0, 0.3, 0.7, 4.1, 3.9], [0, -1.5, 2.2, 3.0, 6.5]], dtype=torch.float64)
    assert torch.autograd.gradcheck(lambda t: ops.roi_align(t, rois, (2, 3), 1.0, 2, True), (x,))


# -- roi_pool -------------------------------------------------------------------------------------------

def test_roi_pool_d2l_rcnn_example():
    """d2l's rcnn section (its printed result)."""
    X = torch.arange(16.).reshape(1, 1, 4, 4)
    rois = torch.Tensor([[0, 0, 0, 20, 20], [0, 0, 10, 30, 30]])
    out = ops.roi_pool(X, rois, output_size=(2, 2), spatial_scale=0.1)
    assert out.tolist() == [[[[5.0, 6.0], [9.0, 10.0]]], [[[9.0, 11.0], [13.0, 15.0]]]]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("output_size,scale", [((2, 3), 1.0), (3, 0.5), (1, 0.25), ((4, 4), 2.0)])
def test_roi_pool_matches_kernel_reference(output_size, scale, dtype):
    rng = np.random.default_rng(12)
    x = rng.normal(size=(2, 3, 7, 9))
    rois = random_rois(rng, 8, 2, 7 / scale, 9 / scale)
    rois[:2, 1:] = np.array([[1.5, 0.5, 4.5, 2.5], [-0.5, 2.5, 6.5, 6.5]]) / scale   # halves: C round
    ph_n, pw_n = (output_size, output_size) if isinstance(output_size, int) else output_size
    weights = rng.uniform(-1, 1, (8, 3, ph_n, pw_n))
    xt = torch.tensor(x, dtype=getattr(torch, dtype), requires_grad=True)
    out = ops.roi_pool(xt, torch.tensor(rois, dtype=getattr(torch, dtype)), output_size, scale)
    (out * torch.tensor(weights, dtype=out.dtype)).sum().backward()
    expected, source = reference_roi_pool(x, rois, scale, ph_n, pw_n)
    expected_grad = np.zeros_like(x)
    for index, where in source.items():
        if where is not None:
            expected_grad[where] += weights[index]
    np.testing.assert_allclose(out.detach().numpy(), expected, **TOLERANCE[dtype])
    np.testing.assert_allclose(xt.grad.numpy(), expected_grad, **TOLERANCE[dtype])


def test_roi_pool_list_of_boxes_and_modules():
    x = torch.rand(2, 1, 6, 6)
    boxes = [torch.tensor([[0.0, 0.0, 3.0, 3.0]]), torch.tensor([[1.0, 1.0, 5.0, 4.0], [2.0, 2.0, 4.0, 4.0]])]
    rois = torch.tensor([[0, 0.0, 0.0, 3.0, 3.0], [1, 1.0, 1.0, 5.0, 4.0], [1, 2.0, 2.0, 4.0, 4.0]])
    assert torch.equal(ops.roi_pool(x, boxes, 2), ops.roi_pool(x, rois, 2))
    assert torch.equal(ops.RoIPool(2, 1.0)(x, boxes), ops.roi_pool(x, rois, 2))
    assert torch.equal(ops.RoIAlign((2, 2), 1.0, 2)(x, boxes), ops.roi_align(x, rois, 2, 1.0, 2))
    assert repr(ops.RoIPool((2, 3), 0.5)) == "RoIPool(output_size=(2, 3), spatial_scale=0.5)"
    assert repr(ops.RoIAlign(7, 0.25, 2, True)) == \
        "RoIAlign(output_size=7, spatial_scale=0.25, sampling_ratio=2, aligned=True)"
    assert ops.roi_pool(x, torch.zeros(0, 5), 3).shape == (0, 1, 3, 3)


def test_roi_errors_as_torchvision():
    x = torch.rand(1, 1, 4, 4)
    with pytest.raises(AssertionError, match=r"Tensor\[K, 5\]"):
        ops.roi_pool(x, torch.zeros(2, 4), 2)
    with pytest.raises(AssertionError, match=r"List\[Tensor\[L, 4\]\]"):
        ops.roi_align(x, [torch.zeros(2, 5)], 2)
    with pytest.raises(RuntimeError, match="same type"):
        ops.roi_align(x, torch.zeros(1, 5, dtype=torch.float64), 2)


# -- nms ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("threshold", [0.0, 0.3, 0.5, 0.7, 1.0])
def test_nms_matches_kernel_reference(threshold, dtype):
    rng = np.random.default_rng(13)
    boxes = vision_ops_cases._boxes(60, 14)
    scores = rng.uniform(size=60).round(1)           # ties: kept in index order
    keep = ops.nms(torch.tensor(boxes, dtype=getattr(torch, dtype)),
                   torch.tensor(scores, dtype=getattr(torch, dtype)), threshold)
    assert keep.dtype == torch.int64
    assert keep.tolist() == reference_nms(boxes.astype(dtype).astype(float).tolist(),
                                          scores.astype(dtype).astype(float).tolist(), threshold)


def test_batched_nms_both_strategies_agree_with_per_category_reference():
    rng = np.random.default_rng(15)
    for n in (40, 1200):                              # 1200 boxes: above 4,000 coordinates, one nms per class
        boxes = vision_ops_cases._boxes(n, 16)
        scores = rng.uniform(size=n)
        idxs = rng.integers(0, 4, n)
        keep = ops.batched_nms(torch.tensor(boxes), torch.tensor(scores), torch.tensor(idxs), 0.4).tolist()
        expected = []
        for category in range(4):
            members = np.flatnonzero(idxs == category)
            expected += [members[i] for i in reference_nms(boxes[members].tolist(), scores[members].tolist(), 0.4)]
        assert keep == sorted(expected, key=lambda i: -scores[i])


def test_nms_empty_and_errors():
    assert ops.nms(torch.zeros(0, 4), torch.zeros(0), 0.5).tolist() == []
    assert ops.batched_nms(torch.zeros(0, 4), torch.zeros(0), torch.zeros(0, dtype=torch.int64), 0.5).dtype == torch.int64
    with pytest.raises(RuntimeError, match="boxes should be a 2d tensor, got 3D"):
        ops.nms(torch.zeros(1, 2, 4), torch.zeros(1), 0.5)
    with pytest.raises(RuntimeError, match="boxes should have 4 elements in dimension 1, got 5"):
        ops.nms(torch.zeros(2, 5), torch.zeros(2), 0.5)
    with pytest.raises(RuntimeError, match="same number of elements in dimension 0, got 2 and 3"):
        ops.nms(torch.zeros(2, 4), torch.zeros(3), 0.5)


# -- box utilities: errors ------------------------------------------------------------------------------

def test_box_errors_as_torchvision():
    boxes = torch.rand(3, 4)
    with pytest.raises(ValueError, match="Unsupported Bounding Box Conversions for given in_fmt xyxy and out_fmt xyz"):
        ops.box_convert(boxes, "xyxy", "xyz")
    with pytest.raises(ValueError, match="Unsupported Bounding Box area for given format xywhr"):
        ops.box_area(boxes, fmt="xywhr")
    with pytest.raises(ValueError, match="Invalid alpha value: 2"):
        ops.sigmoid_focal_loss(boxes, boxes, alpha=2)
    with pytest.raises(ValueError, match="Invalid Value for arg 'reduction'"):
        ops.sigmoid_focal_loss(boxes, boxes, reduction="max")
    assert ops.box_convert(boxes, "xywh", "xywh") is not boxes


def test_rotated_formats_refused_clearly():
    """Deliberate difference: torchvision 0.28's rotated boxes are not implemented (README)."""
    with pytest.raises(NotImplementedError, match="rotated format 'cxcywhr' is not implemented"):
        ops.box_convert(torch.rand(2, 5), "cxcywhr", "xywhr")
    with pytest.raises(NotImplementedError, match="rotated format 'xywhr'"):
        ops.box_iou(torch.rand(2, 5), torch.rand(2, 5), fmt="xywhr")


def test_torchvision_ops_under_the_binding():
    code = ("import glasstorch; glasstorch.as_torch()\n"
            "import torchvision, torch\n"
            "from torchvision.ops import roi_pool\n"
            "import torchvision.ops.boxes as boxes\n"
            "assert torchvision.ops is glasstorch.vision.ops and boxes is glasstorch.vision.ops.boxes\n"
            "print(roi_pool(torch.arange(16.).reshape(1, 1, 4, 4), torch.Tensor([[0, 0, 0, 20, 20]]), 2, 0.1).tolist())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[[[[5.0, 6.0], [9.0, 10.0]]]]"
