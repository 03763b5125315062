"""The models checked against torchvision (tools/vision_reference.py records, test_vision_models.py
compares): constructor arguments, a fixed input, and fixed weights that both sides compute the same
way from the parameter's name and shape (so the logits can be compared without shipping weights)."""
import zlib

import numpy as np

# name -> (num_classes, input shape): small inputs (the adaptive pooling makes any size >= 32 valid)
MODELS = {"alexnet": (10, (1, 3, 64, 64)), "vgg11": (10, (1, 3, 32, 32)), "vgg16": (10, (1, 3, 32, 32)),
          "vgg11_bn": (10, (1, 3, 32, 32)), "resnet18": (10, (2, 3, 32, 32)), "resnet34": (10, (1, 3, 40, 40)),
          "inception_v3": (10, (1, 3, 75, 75))}   # (75x75: Inception v3's smallest input)


def model_input(shape):
    return np.random.default_rng(7).standard_normal(shape).astype(np.float32)


def model_weights(key, shape, dtype):
    """A deterministic value for a state_dict entry: smooth in the index, scaled like a sensible
    initialisation (1/sqrt(fan_in) for weights, near-identity for batch norm), so that activations
    neither vanish nor blow up through 34 layers."""
    if "int" in dtype:                                    # num_batches_tracked
        return np.zeros(shape, dtype=np.int64)
    n = int(np.prod(shape)) if shape else 1
    phase = zlib.crc32(key.encode()) % 1000 / 100.0
    wave = np.sin(np.arange(n, dtype=np.float64) * 0.7311 + phase).reshape(shape)
    leaf = key.rsplit(".", 1)[-1]
    if leaf == "running_var":
        values = 1.0 + 0.2 * np.abs(wave)
    elif leaf == "running_mean":
        values = 0.05 * wave
    elif len(shape) == 1 and leaf == "weight":            # batch norm's gamma
        values = 1.0 + 0.1 * wave
    elif len(shape) == 1:                                 # biases, beta
        values = 0.02 * wave
    else:
        values = wave * np.sqrt(3.0 / int(np.prod(shape[1:])))
    return values.astype(np.float32)
