# zero_grad(set_to_none=False) zeroes the .grads in place for the first epochs, then a refactor drops
# the call: from then on each step also re-applies the earlier gradients.
import glasstorch as torch

torch.manual_seed(0)
X = torch.randn(32, 3)
y = X @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.1
w = torch.zeros(3, 1, requires_grad=True)
optimizer = torch.optim.SGD([w], lr=0.05)
for epoch in range(4):
    if epoch < 2:
        optimizer.zero_grad(set_to_none=False)
    loss = ((X @ w - y) ** 2).mean()
    loss.backward()
    optimizer.step()  # expect: MissingZeroGradWarning
