# d2l-style parameters scaled after creation: "* 0.01" makes w a non-leaf, so w.grad stays None.
import glasstorch as torch

torch.manual_seed(0)
X, y = torch.randn(20, 2), torch.randn(20, 1)
w = torch.randn(2, 1, requires_grad=True) * 0.01  # expect: NonLeafParameterWarning
b = torch.zeros(1, requires_grad=True)
loss = ((X @ w + b - y) ** 2).mean()
loss.backward()
with torch.no_grad():
    for param in (w, b):
        if param.grad is not None:
            param -= 0.1 * param.grad
