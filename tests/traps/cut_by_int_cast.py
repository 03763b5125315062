# An integer cast on the path to the loss: integers carry no gradient.
import glasstorch as torch

torch.manual_seed(0)
X, y = torch.randn(8, 3), torch.randn(8, 1)
w_q = torch.randn(3, 1, requires_grad=True)
w = torch.randn(3, 1, requires_grad=True)
optimizer = torch.optim.SGD([w_q, w], lr=0.1)
optimizer.zero_grad()
levels = (X @ w_q * 4).long()  # expect: GraphCutWarning
loss = ((levels.float() * (X @ w) - y) ** 2).mean()
loss.backward()
optimizer.step()
