# A loop over raw tensors with an optimizer and F.cross_entropy; the loss logged with .item();
# old-style zeroing through .data. The seatbelt must stay silent.
import glasstorch as torch
import glasstorch.nn.functional as F

torch.manual_seed(0)
X, y = torch.randn(40, 5), torch.randint(0, 4, (40,))
W1 = (torch.randn(5, 16) * 0.3).requires_grad_()
W2 = (torch.randn(16, 4) * 0.3).requires_grad_()
optimizer = torch.optim.Adam([W1, W2], lr=0.01)
history = []
for step in range(5):
    logits = (X @ W1).relu() @ W2
    loss = F.cross_entropy(logits, y)
    loss.backward()
    optimizer.step()
    for p in (W1, W2):
        p.grad.data.zero_()
    history.append(loss.item())
    snapshot = W1.detach().clone()
print(history[-1] < history[0])
