# requires_grad_() on a computed tensor does nothing (it is not a leaf and already requires grad).
import glasstorch as torch

torch.manual_seed(0)
w = torch.randn(4, 1, requires_grad=True)
out = torch.randn(3, 4) @ w
out.requires_grad_()  # expect: ForcedRequiresGradWarning
out.sum().backward()
