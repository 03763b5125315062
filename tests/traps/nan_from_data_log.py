# Log-transformed features where a raw value is 0: log(0) = -inf appears here, in data that requires
# no gradient (no graph is recorded yet), and only reaches the loss later.
import glasstorch as torch

torch.manual_seed(0)
raw = torch.tensor([[1.0, 2.0, 0.0], [3.0, 1.0, 2.0]])
features = torch.log(raw)  # expect: NonFiniteWarning
w = torch.randn(3, 1, requires_grad=True)
loss = (features @ w).pow(2).mean()
loss.backward()
