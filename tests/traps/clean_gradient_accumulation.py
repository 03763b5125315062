# Gradient accumulation done right: two backward passes per step, zero_grad after each step.
import glasstorch as torch

torch.manual_seed(0)
X, y = torch.randn(32, 3), torch.randn(32, 1)
w = torch.zeros(3, 1, requires_grad=True)
optimizer = torch.optim.SGD([w], lr=0.05)
accumulation_steps = 2
for i in range(8):
    xb, yb = X[4 * i:4 * i + 4], y[4 * i:4 * i + 4]
    loss = ((xb @ w - yb) ** 2).mean() / accumulation_steps
    loss.backward()
    if (i + 1) % accumulation_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
