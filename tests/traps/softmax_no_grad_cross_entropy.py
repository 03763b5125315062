# PyTorch issue #55902's second false negative: during evaluation nothing requires grad, so there is no
# grad_fn to look at; the rows of the input are still probabilities.
import glasstorch as torch
import glasstorch.nn.functional as F

torch.manual_seed(0)
W = torch.randn(4, 3, requires_grad=True)
X, y = torch.randn(10, 4), torch.randint(0, 3, (10,))
with torch.no_grad():
    probs = (X @ W).softmax(dim=1)
    val_loss = F.cross_entropy(probs, y)  # expect: ProbabilitiesToCrossEntropyWarning
print(f"validation loss {val_loss.item():.3f}")
