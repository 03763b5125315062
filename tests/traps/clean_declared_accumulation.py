# Accumulation across steps on purpose (a running gradient), declared to the seatbelt.
import glasstorch as torch
from glasstorch.inspection import expect_accumulation

torch.manual_seed(0)
X, y = torch.randn(16, 3), torch.randn(16, 1)
w = torch.zeros(3, 1, requires_grad=True)
optimizer = expect_accumulation(torch.optim.SGD([w], lr=0.01))
for step in range(3):
    loss = ((X @ w - y) ** 2).mean()
    loss.backward()
    optimizer.step()
