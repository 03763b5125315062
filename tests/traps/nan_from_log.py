# Cross entropy written by hand on probabilities that reach exactly 0: log(0) = -inf, then nan.
import glasstorch as torch

torch.manual_seed(0)
logits = torch.tensor([[20.0, -120.0, 0.0], [0.5, 0.2, 0.1]], requires_grad=True)
labels = torch.tensor([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
probs = logits.exp() / logits.exp().sum(1, keepdim=True)
log_probs = probs.log()  # expect: NonFiniteWarning
loss = -(labels * log_probs).sum(1).mean()
loss.backward()
