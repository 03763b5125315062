# Features computed through NumPy (a round trip through .detach().numpy() and torch.from_numpy).
import numpy as np
import glasstorch as torch

torch.manual_seed(0)
X, y = torch.randn(16, 4), torch.randn(16, 1)
W1 = torch.randn(4, 8, requires_grad=True)
W2 = torch.randn(8, 1, requires_grad=True)
optimizer = torch.optim.SGD([W1, W2], lr=0.01)
optimizer.zero_grad()
features = torch.from_numpy(np.tanh((X @ W1).detach().numpy()))  # expect: GraphCutWarning
loss = ((features @ W2 - y) ** 2).mean()
loss.backward()
optimizer.step()
