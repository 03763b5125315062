# Linear regression with an optimizer, but optimizer.zero_grad() is never called:
# every step re-applies all the earlier gradients (they accumulate in .grad).
import glasstorch as torch

torch.manual_seed(0)
X = torch.randn(32, 3)
y = X @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.1
w = torch.zeros(3, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
optimizer = torch.optim.SGD([w, b], lr=0.05)
for epoch in range(4):
    loss = ((X @ w + b - y) ** 2).mean()
    loss.backward()
    optimizer.step()  # expect: MissingZeroGradWarning
