# Two models, two optimizers, the generator's output detached for the discriminator's step (a cut that
# is meant: the generator gets its gradient from its own loss). The seatbelt must stay silent.
import glasstorch as torch
import glasstorch.nn.functional as F

torch.manual_seed(0)
G = torch.randn(4, 6, requires_grad=True)
D = torch.randn(6, 1, requires_grad=True)
opt_g = torch.optim.Adam([G], lr=1e-3)
opt_d = torch.optim.Adam([D], lr=1e-3)
real = torch.randn(8, 6)
for step in range(3):
    z = torch.randn(8, 4)
    fake = torch.tanh(z @ G)
    opt_d.zero_grad()
    d_loss = F.binary_cross_entropy_with_logits(real @ D, torch.ones(8, 1)) + \
        F.binary_cross_entropy_with_logits(fake.detach() @ D, torch.zeros(8, 1))
    d_loss.backward()
    opt_d.step()
    opt_g.zero_grad()
    g_loss = F.binary_cross_entropy_with_logits(fake @ D, torch.ones(8, 1))
    g_loss.backward()
    opt_g.step()
