# Summing the loss tensor for a report keeps every iteration's graph alive (memory grows each step).
import glasstorch as torch

torch.manual_seed(0)
X, y = torch.randn(16, 3), torch.randn(16, 1)
w = torch.zeros(3, 1, requires_grad=True)
optimizer = torch.optim.SGD([w], lr=0.1)
total_loss = 0
for step in range(4):
    optimizer.zero_grad()
    loss = ((X @ w - y) ** 2).mean()
    loss.backward()
    optimizer.step()
    total_loss += loss  # expect: GraphKeptAliveWarning
print(f"mean loss {total_loss.item() / 4:.3f}")
