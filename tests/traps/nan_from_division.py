# Normalising rows by their sum when a row is all zeros: 0/0 = nan.
import glasstorch as torch

torch.manual_seed(0)
w = torch.tensor([1.0, 1.0, 1.0], requires_grad=True)
counts = torch.tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
weighted = counts * w
shares = weighted / weighted.sum(1, keepdim=True)  # expect: NonFiniteWarning
loss = (shares ** 2).sum()
loss.backward()
