# The prediction re-created from NumPy values, then requires_grad switched on to make backward run.
import glasstorch as torch

torch.manual_seed(0)
X, y = torch.randn(16, 4), torch.randn(16, 1)
w = torch.randn(4, 1, requires_grad=True)
optimizer = torch.optim.SGD([w], lr=0.1)
optimizer.zero_grad()
pred = torch.from_numpy((X @ w).detach().numpy())  # expect: GraphCutWarning
pred.requires_grad_()  # expect: ForcedRequiresGradWarning
loss = ((pred - y) ** 2).mean()
loss.backward()
optimizer.step()
