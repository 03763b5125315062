"""Record real torchvision's results as the fixtures glasstorch.vision is tested against.

    python tools/vision_reference.py            # in a venv with torchvision (not glasstorch's):
                                                #   pip install torch==2.14.1 torchvision==0.29.1 pillow

It writes tests/fixtures/vision_transforms.npz + .json (every case of tests/vision_cases.py: the
output array, and its kind, mode or dtype; and the reprs of transform objects) and
tests/fixtures/vision_models.json (for each model: state_dict keys and shapes, parameter count, the
printed module, and the logits for a fixed input under fixed weights; see `model_weights`).
The test suite needs neither torchvision nor this script; rerun it when the cases change
(``python tools/vision_reference.py models NAME ...`` records only those models;
``python tools/vision_reference.py ops`` records tests/fixtures/vision_ops.npz, the cases of
tests/vision_ops_cases.py on torchvision.ops).
"""
import json
import os
import sys
import types

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
sys.path.insert(0, os.path.join(ROOT, "tests"))

import vision_cases  # noqa: E402
from vision_models_spec import MODELS, model_input, model_weights  # noqa: E402


def library():
    import torch
    import torchvision
    from PIL import Image
    from torchvision import transforms as T
    from torchvision.transforms import v2
    import torchvision.transforms.functional as F
    import torchvision.transforms.v2.functional as F2
    lib = types.SimpleNamespace(torch=torch, T=T, F=F, v2=v2, F2=F2, Image=Image, utils=torchvision.utils,
                                models=torchvision.models, torchvision_version=torchvision.__version__)
    lib.x = vision_cases.Inputs(torch, Image)
    return lib


def transforms_reference(lib):
    arrays, described = {}, {}
    for name, case in vision_cases.CASES:
        array, description = vision_cases.as_record(case(lib), lib.Image, lib.torch.Tensor)
        arrays[name] = array
        described[name] = description
    reprs = {name: repr(make(lib)) for name, make in vision_cases.REPRS.items()}
    np.savez_compressed(os.path.join(FIXTURES, "vision_transforms.npz"), **arrays)
    with open(os.path.join(FIXTURES, "vision_transforms.json"), "w") as f:
        json.dump({"torch": lib.torch.__version__, "torchvision": lib.torchvision_version,
                   "results": described, "reprs": reprs}, f, indent=1, sort_keys=True)
    print(f"{len(arrays)} transform cases, {len(reprs)} reprs")


def models_reference(lib, names=None):
    """Record every model of MODELS, or only `names` (merged into the existing file)."""
    torch = lib.torch
    record = {}
    path = os.path.join(FIXTURES, "vision_models.json")
    if names:
        with open(path) as f:
            record = json.load(f)
    for name, (num_classes, input_shape) in MODELS.items():
        if names and name not in names:
            continue
        model = getattr(lib.models, name)(weights=None, num_classes=num_classes).eval()
        state = model.state_dict()
        with torch.no_grad():
            for key, value in state.items():
                value.copy_(torch.from_numpy(model_weights(key, tuple(value.shape), str(value.dtype))))
            logits = model(torch.from_numpy(model_input(input_shape)))
        record[name] = {
            "keys": [[key, list(value.shape), str(value.dtype).replace("torch.", "")] for key, value in state.items()],
            "parameters": sum(p.numel() for p in model.parameters()),
            "repr": repr(model),
            "logits": logits.numpy().astype(float).round(6).tolist(),
        }
        print(name, record[name]["parameters"], "parameters")
    with open(path, "w") as f:
        json.dump(record, f, indent=0)


def ops_reference():
    """Record tests/vision_ops_cases.py on torchvision.ops (float32 and float64) into
    tests/fixtures/vision_ops.npz. ``roi_align`` is torchvision's pure-PyTorch ``_roi_align`` (called
    without its lazy ``torch.compile`` wrapper): the wheel's C++ kernels need not load for this."""
    import torch
    import torchvision
    import torchvision.ops
    from torchvision.ops.roi_align import _roi_align
    import vision_ops_cases

    def roi_align(input, rois, output_size, spatial_scale, sampling_ratio, aligned):
        height, width = (output_size, output_size) if isinstance(output_size, int) else output_size
        return _roi_align.__wrapped__(input, rois, spatial_scale, height, width, sampling_ratio, aligned)

    ops = types.SimpleNamespace(**{name: getattr(torchvision.ops, name) for name in dir(torchvision.ops)})
    ops.roi_align = roi_align
    arrays = {}
    for name, case in vision_ops_cases.CASES:
        for dtype in vision_ops_cases.DTYPES:
            for key, value in case(torch, ops, dtype).items():
                arrays[f"{name}/{dtype}/{key}"] = value.detach().numpy()
    arrays["versions"] = np.array([torch.__version__, torchvision.__version__])
    np.savez_compressed(os.path.join(FIXTURES, "vision_ops.npz"), **arrays)
    print(f"{len(vision_ops_cases.CASES)} ops cases, {len(arrays) - 1} arrays")


if __name__ == "__main__":
    os.makedirs(FIXTURES, exist_ok=True)
    if sys.argv[1:2] == ["ops"]:       # python tools/vision_reference.py ops: torchvision.ops only
        ops_reference()
        sys.exit()
    lib = library()
    if sys.argv[1:2] == ["models"]:    # python tools/vision_reference.py models inception_v3: those only
        models_reference(lib, sys.argv[2:])
    else:
        transforms_reference(lib)
        models_reference(lib)
