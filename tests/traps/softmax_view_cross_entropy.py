# PyTorch issue #55902's first false negative: an op (here a view) between the softmax and the loss,
# so the loss's input is not a SoftmaxBackward0 output any more.
import glasstorch as torch
import glasstorch.nn.functional as F

torch.manual_seed(0)
W = torch.randn(5, 3, requires_grad=True)
X, y = torch.randn(2, 4, 5), torch.randint(0, 3, (8,))
probs = F.softmax(X @ W, dim=-1)
loss = F.cross_entropy(probs.view(-1, 3), y)  # expect: ProbabilitiesToCrossEntropyWarning
loss.backward()
