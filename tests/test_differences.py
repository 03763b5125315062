"""The documented differences from torch (README, 'Where glasstorch differs'), pinned down."""
import os
import subprocess
import sys

import glasstorch as gt


def test_tensor_with_a_shape_is_zero_filled():
    t = gt.Tensor(2, 3)
    assert tuple(t.shape) == (2, 3) and t.dtype == gt.float32 and not t.any().item()


def test_compile_and_jit_script_return_their_argument():
    m = gt.nn.Linear(2, 2)
    assert gt.compile(m) is m and gt.jit.script(m) is m
    f = lambda x: x * 2  # noqa: E731
    assert gt.compile(f) is f and gt.compile()(f) is f


def test_inference_mode_behaves_as_no_grad():
    w = gt.randn(2, requires_grad=True)
    with gt.inference_mode():
        y = w * 2
        assert gt.is_inference_mode_enabled() and not gt.is_grad_enabled()
    assert not y.requires_grad and (y * w).requires_grad   # used later in autograd without error


def test_training_stack_is_imported_on_first_use():
    code = "import sys, glasstorch; print('glasstorch.nn' in sys.modules); glasstorch.nn.Linear; " \
           "print('glasstorch.nn' in sys.modules)"
    env = {k: v for k, v in os.environ.items() if k != "GLASSTORCH_SEATBELT"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.stdout.split() == ["False", "True"], out.stderr


def test_malloc_tuning_can_be_turned_off():
    code = "import glasstorch._array as b; print(b.malloc_tuned)"
    on = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120).stdout.strip()
    off = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, GLASSTORCH_MALLOC_TUNING="0")).stdout.strip()
    assert off == "False"
    if sys.platform.startswith("linux"):
        assert on == "True"


def test_overlap_through_a_data_alias_is_not_checked():
    x = gt.arange(9.0)
    x.data[1:].add_(x[:-1])                            # torch raises: the memory overlaps
    assert x.tolist() == [0.0, 1.0, 3.0, 5.0, 7.0, 9.0, 11.0, 13.0, 15.0]


def test_in_place_view_op_under_no_grad_is_refused_at_the_leaf():
    import pytest
    x = gt.ones(2, 1, requires_grad=True)
    y = x * 1
    with gt.no_grad():
        y.squeeze_()
    with pytest.raises(RuntimeError, match="invalid gradient"):   # torch names SumBackward0
        y.sum().backward()


def test_strides_of_dims_of_size_one_may_differ():
    # README: NumPy chooses the strides of dims of size 1 (torch gives (1, 1) here); no element moves
    c = gt.zeros(3, 1).t().clone()
    assert c.stride() == (3, 1) and c.is_contiguous()
    assert gt.zeros(0, 3).stride() == (0, 0)
    y = gt.nn.functional.hardtanh(gt.tensor(0.25).expand(1))   # torch: stride (0,), glasstorch: (1,)
    import pytest
    with pytest.raises(RuntimeError, match="refer to a single memory location"):   # torch allows it
        y[::2] = y
