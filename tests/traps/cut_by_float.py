# Scores collected as Python floats (float(tensor) is .item()): the graph stops there.
import glasstorch as torch

torch.manual_seed(0)
X, y = torch.randn(8, 3), torch.randn(8)
w = torch.randn(3, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
optimizer = torch.optim.SGD([w, b], lr=0.1)
optimizer.zero_grad()
scores = torch.tensor([float(x @ w) for x in X])  # expect: GraphCutWarning
loss = ((scores + b - y) ** 2).mean()
loss.backward()
optimizer.step()
