# Each step's loss kept in a list for a plot afterwards: every element still holds its step's whole
# graph (the nodes and the values they saved), so memory grows step after step.
import glasstorch as torch

torch.manual_seed(0)
X, y = torch.randn(16, 3), torch.randn(16, 1)
w = torch.zeros(3, 1, requires_grad=True)
optimizer = torch.optim.SGD([w], lr=0.1)
losses = []
for step in range(4):
    optimizer.zero_grad()
    loss = ((X @ w - y) ** 2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss)  # expect: GraphKeptAliveWarning
print(f"first {losses[0].item():.3f}, last {losses[-1].item():.3f}")
