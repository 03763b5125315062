# "element 0 of tensors does not require grad" silenced with loss.requires_grad = True: backward now runs,
# but reaches no parameter (the graph was cut by the detach above), so nothing trains.
import glasstorch as torch

torch.manual_seed(0)
X, y = torch.randn(16, 4), torch.randn(16, 1)
w = torch.randn(4, 1, requires_grad=True)
optimizer = torch.optim.SGD([w], lr=0.1)
for step in range(2):
    optimizer.zero_grad()
    pred = (X @ w).detach()  # expect: GraphCutWarning
    loss = ((pred - y) ** 2).mean()
    loss.requires_grad = True  # expect: ForcedRequiresGradWarning
    loss.backward()
    optimizer.step()
