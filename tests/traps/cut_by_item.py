# A scale factor taken out with .item(): the tensor that computed it gets no gradient.
import glasstorch as torch

torch.manual_seed(0)
X, y = torch.randn(16, 4), torch.randn(16, 1)
w_gate = torch.randn(4, 1, requires_grad=True)
w_out = torch.randn(4, 1, requires_grad=True)
optimizer = torch.optim.SGD([w_gate, w_out], lr=0.01)
optimizer.zero_grad()
gate = torch.sigmoid(X @ w_gate).mean().item()  # expect: GraphCutWarning
loss = ((gate * (X @ w_out) - y) ** 2).mean()
loss.backward()
optimizer.step()
