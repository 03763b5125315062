# A detach() in the middle of the model: the first layer never gets a gradient.
import glasstorch as torch

torch.manual_seed(0)
X, y = torch.randn(16, 4), torch.randn(16, 1)
W1 = torch.randn(4, 8, requires_grad=True)
W2 = torch.randn(8, 1, requires_grad=True)
optimizer = torch.optim.SGD([W1, W2], lr=0.01)
for step in range(2):
    optimizer.zero_grad()
    hidden = (X @ W1).relu().detach()  # expect: GraphCutWarning
    loss = ((hidden @ W2 - y) ** 2).mean()
    loss.backward()
    optimizer.step()
