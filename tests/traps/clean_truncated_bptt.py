# Truncated backpropagation through time: the hidden state is detached between chunks (a meant cut),
# and an input-gradient (saliency) computed with a fresh leaf. The seatbelt must stay silent.
import glasstorch as torch

torch.manual_seed(0)
W_xh = (torch.randn(3, 5) * 0.3).requires_grad_()
W_hh = (torch.randn(5, 5) * 0.3).requires_grad_()
W_out = (torch.randn(5, 1) * 0.3).requires_grad_()
optimizer = torch.optim.SGD([W_xh, W_hh, W_out], lr=0.05)
sequence, target = torch.randn(12, 2, 3), torch.randn(12, 2, 1)
h = torch.zeros(2, 5)
for start in range(0, 12, 4):
    h = h.detach()
    optimizer.zero_grad()
    loss = 0
    for t in range(start, start + 4):
        h = torch.tanh(sequence[t] @ W_xh + h @ W_hh)
        loss = loss + ((h @ W_out - target[t]) ** 2).mean()
    loss.backward()
    optimizer.step()

x = sequence[0].clone().requires_grad_(True)
saliency_loss = (torch.tanh(x @ W_xh) @ W_out).sum()
saliency_loss.backward()
print(x.grad.shape)
