# log_softmax output given to cross_entropy: log_softmax twice (same value, wasted work, unclear intent).
import glasstorch as torch
import glasstorch.nn.functional as F

torch.manual_seed(0)
W = torch.randn(4, 3, requires_grad=True)
X, y = torch.randn(6, 4), torch.randint(0, 3, (6,))
log_probs = F.log_softmax(X @ W, dim=1)
loss = F.cross_entropy(log_probs, y)  # expect: ProbabilitiesToCrossEntropyWarning
loss.backward()
