"""The books' autograd examples, run unchanged on torch and on glasstorch.

d2l (Dive into Deep Learning) section 2.5 "Automatic Differentiation", and chapter 1 of "Deep Learning
with PyTorch Step-by-Step" (linear regression with autograd, the three attempts at the update, the
view that shares memory). Each example is a function of the library ``torch``; what it prints or
returns must be the same for both (values that come from each library's own random generator are
compared through what they determine, never hard-coded).
"""
import contextlib
import io
import warnings

import numpy as np
import pytest

torch_ = pytest.importorskip("torch")

import glasstorch as gt  # noqa: E402

BOTH = pytest.mark.parametrize("torch", [torch_, gt], ids=["torch", "glasstorch"])


def printed(fn, *args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn(*args)
    return out.getvalue()


# -- d2l 2.5 -----------------------------------------------------------------------------------------

def d2l_simple_function(torch):
    x = torch.arange(4.0)
    print(x)
    x.requires_grad_(True)  # Better create `x = torch.arange(4.0, requires_grad=True)`
    print(x.grad)  # The default value is None
    y = 2 * torch.dot(x, x)
    print(y)
    y.backward()
    print(x.grad)
    print(x.grad == 4 * x)
    x.grad.zero_()  # Reset the gradient
    y = x.sum()
    y.backward()
    print(x.grad)


def d2l_non_scalar(torch):
    x = torch.arange(4.0, requires_grad=True)
    y = x * x
    print(y)
    y.backward(gradient=torch.ones(len(y)))  # Faster: y.sum().backward()
    print(x.grad)


def d2l_detaching(torch):
    x = torch.arange(4.0, requires_grad=True)
    y = x * x
    u = y.detach()
    z = u * x
    z.sum().backward()
    print(x.grad == u)
    x.grad.zero_()
    y.sum().backward()
    print(x.grad == 2 * x)
    print(u, u.requires_grad, y.grad_fn.name())


def d2l_polynomial(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x ** 2 + 3 * x
    print(y)
    y.sum().backward()
    print(x.grad)
    y = x ** 2 + 3 * x
    y.sum().backward()  # a second backward call accumulates
    print(x.grad)
    print(y.grad)  # a non-leaf: None (and a warning)


def f(a):
    b = a * 2
    while b.norm() < 1000:
        b = b * 2
    if b.sum() > 0:
        c = b
    else:
        c = 100 * b
    return c


def d2l_control_flow(torch, a):
    a = torch.tensor(a, requires_grad=True)
    d = f(a)
    d.backward()
    print(a.grad == d / a)  # float32 rounding may make it False, in torch as well
    print(torch.isclose(a.grad, d / a))
    print(d.grad_fn)


@pytest.mark.parametrize("example", [d2l_simple_function, d2l_non_scalar, d2l_detaching, d2l_polynomial])
def test_d2l_examples_print_what_torch_prints(example):
    assert printed(example, gt) == printed(example, torch_)


@pytest.mark.parametrize("a", [0.3, -0.0123, 5.0, -2.0])
def test_d2l_control_flow(a):
    """The first line, ``a.grad == d / a``, compares float32 bits that one rounding of d / a decides: it
    may differ between CPUs, in torch as well, so only what the book means is compared: isclose, and
    the gradient itself to float32's precision."""
    ours, theirs = printed(d2l_control_flow, gt, a), printed(d2l_control_flow, torch_, a)
    assert ours.splitlines()[1] == theirs.splitlines()[1] == "tensor(True)"
    grads = []
    for lib in (gt, torch_):
        t = lib.tensor(a, requires_grad=True)
        f(t).backward()
        grads.append(t.grad.item())
    assert grads[0] == pytest.approx(grads[1], rel=2 * 2.0 ** -23)
    assert ours.splitlines()[1] == "tensor(True)"
    assert ours.splitlines()[2].split(" object")[0] == theirs.splitlines()[2].split(" object")[0]


@BOTH
def test_d2l_nonleaf_grad_warns(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x ** 2 + 3 * x
    with pytest.warns(UserWarning, match="is not a leaf Tensor is being accessed"):
        assert y.grad is None


# -- Step-by-Step, chapter 1 ---------------------------------------------------------------------------

def data():
    true_b, true_w, N = 1, 2, 100
    np.random.seed(42)
    x = np.random.rand(N, 1)
    epsilon = (.1 * np.random.randn(N, 1))
    y = true_b + true_w * x + epsilon
    idx = np.arange(N)
    np.random.shuffle(idx)
    train_idx = idx[:int(N * .8)]
    return x[train_idx], y[train_idx]


def sbs_views(torch):
    matrix = torch.ones((2, 3), dtype=torch.float)
    same_matrix = matrix.view(1, 6)
    same_matrix[0, 1] = 2.
    print(matrix)
    print(same_matrix)
    another_matrix = matrix.view(1, 6).clone().detach()
    another_matrix[0, 1] = 4.
    print(matrix)
    print(another_matrix)


def test_sbs_views_share_memory():
    assert printed(sbs_views, gt) == printed(sbs_views, torch_)


@BOTH
def test_sbs_new_tensor_warns_to_clone(torch):
    matrix = torch.ones((2, 3), dtype=torch.float)
    with pytest.warns(UserWarning, match="To copy construct from a tensor, it is recommended to use"):
        different_matrix = matrix.new_tensor(matrix.view(1, 6))
    different_matrix[0, 1] = 3.
    assert matrix[0, 1].item() == 1.0


def sbs_first_gradients(torch):
    x_train, y_train = data()
    device = 'cuda' if torch.cuda.is_available() else 'cpu'
    x_train_tensor = torch.as_tensor(x_train).float().to(device)
    y_train_tensor = torch.as_tensor(y_train).float().to(device)
    print(type(x_train_tensor).__name__, x_train_tensor.type(), x_train_tensor.dtype)
    torch.manual_seed(42)
    b = torch.randn(1, requires_grad=True, dtype=torch.float, device=device)
    w = torch.randn(1, requires_grad=True, dtype=torch.float, device=device)
    yhat = b + w * x_train_tensor
    error = (yhat - y_train_tensor)
    loss = (error ** 2).mean()
    loss.backward()
    print(error.requires_grad, yhat.requires_grad, b.requires_grad, w.requires_grad)
    print(y_train_tensor.requires_grad, x_train_tensor.requires_grad)
    print(yhat.grad_fn, error.grad_fn, loss.grad_fn)
    # the gradients the book first computes by hand
    e = error.detach().numpy()
    assert np.allclose(b.grad.numpy(), 2 * e.mean(), rtol=1e-5)
    assert np.allclose(w.grad.numpy(), 2 * (x_train * e).mean(), rtol=1e-5)
    g = b.grad.clone()
    yhat = b + w * x_train_tensor
    loss = ((yhat - y_train_tensor) ** 2).mean()
    loss.backward()  # gradients accumulate
    assert np.allclose(b.grad.numpy(), 2 * g.numpy())


def test_sbs_first_gradients():
    strip = lambda s: "\n".join(line.split(" object at ")[0] if "object at" not in line else  # noqa: E731
                                " ".join(p.split(" object at ")[0] for p in line.split(">")) for line in s.splitlines())
    assert strip(printed(sbs_first_gradients, gt)) == strip(printed(sbs_first_gradients, torch_))


def sbs_training(torch, attempt):
    x_train, y_train = data()
    device = 'cpu'
    x_train_tensor = torch.as_tensor(x_train).float().to(device)
    y_train_tensor = torch.as_tensor(y_train).float().to(device)
    lr = 0.1
    torch.manual_seed(42)
    b = torch.randn(1, requires_grad=True, dtype=torch.float, device=device)
    w = torch.randn(1, requires_grad=True, dtype=torch.float, device=device)
    n_epochs = 1000
    for epoch in range(n_epochs):
        yhat = b + w * x_train_tensor
        error = (yhat - y_train_tensor)
        loss = (error ** 2).mean()
        loss.backward()
        if attempt == "first":
            b = b - lr * b.grad
            w = w - lr * w.grad
        elif attempt == "second":
            b -= lr * b.grad
            w -= lr * w.grad
        else:
            with torch.no_grad():
                b -= lr * b.grad
                w -= lr * w.grad
        b.grad.zero_()
        w.grad.zero_()
    return b, w


def test_sbs_training_converges_like_torch():
    b, w = sbs_training(gt, "third")
    tb, tw = sbs_training(torch_, "third")
    # both reach the least-squares fit, whatever their random starting points
    assert np.allclose([b.item(), w.item()], [tb.item(), tw.item()], atol=1e-3)
    assert np.allclose([b.item(), w.item()], [1.0235, 1.9690], atol=1e-3)
    assert b.requires_grad and b.is_leaf and repr(b).endswith("requires_grad=True)")


@BOTH
def test_sbs_first_attempt_loses_the_leaf(torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(AttributeError, match="'NoneType' object has no attribute 'zero_'"):
            sbs_training(torch, "first")


@BOTH
def test_sbs_second_attempt_in_place_on_a_leaf(torch):
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        sbs_training(torch, "second")
