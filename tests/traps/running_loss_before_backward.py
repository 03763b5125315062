# The same trap, with the running total taken before backward().
import glasstorch as torch

torch.manual_seed(0)
X, y = torch.randn(16, 3), torch.randn(16, 1)
w = torch.zeros(3, 1, requires_grad=True)
optimizer = torch.optim.SGD([w], lr=0.1)
running = torch.zeros(())
for step in range(4):
    optimizer.zero_grad()
    loss = ((X @ w - y) ** 2).mean()
    running = 0.9 * running + 0.1 * loss  # expect: GraphKeptAliveWarning
    loss.backward()
    optimizer.step()
