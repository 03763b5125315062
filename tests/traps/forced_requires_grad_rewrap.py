# A penalty computed in NumPy from the detached weights, re-created with torch.tensor and given
# requires_grad = True so that adding it to the loss "works": backward runs without an error, but
# the penalty's gradient reaches no weight, so it regularises nothing.
import numpy as np
import glasstorch as torch

torch.manual_seed(0)
X, y = torch.randn(16, 4), torch.randn(16, 1)
w = torch.randn(4, 1, requires_grad=True)
optimizer = torch.optim.SGD([w], lr=0.1)
for step in range(2):
    optimizer.zero_grad()
    loss = ((X @ w - y) ** 2).mean()
    penalty = torch.tensor(0.01 * np.abs(w.detach().numpy()).sum())
    penalty.requires_grad = True  # expect: ForcedRequiresGradWarning
    loss = loss + penalty
    loss.backward()
    optimizer.step()
