# exp overflows to inf, then torch.where masks the inf away: the loss is finite, but exp's backward
# multiplies the zero gradient of the masked entries by inf (0 * inf = nan), so x.grad holds nan. The
# warning names the exp, where the first non-finite value appears, although the loss is finite.
import glasstorch as torch

x = torch.tensor([1.0, 2.0, 100.0], requires_grad=True)
big = torch.exp(x * 2)  # expect: NonFiniteWarning
safe = torch.where(x < 50, big, torch.zeros(3))
loss = safe.sum()
loss.backward()
assert torch.isfinite(loss).item() and not torch.isfinite(x.grad).all().item()
