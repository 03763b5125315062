# Zeroing in place every step -- optimizer.zero_grad(set_to_none=False), a module's zero_grad(), and
# the .grad's own zero_() -- and a parameter group added half-way. The seatbelt must stay silent.
import glasstorch as torch
from glasstorch import nn

torch.manual_seed(0)
X, y = torch.randn(32, 3), torch.randn(32, 1)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
scale = torch.ones(1, requires_grad=True)
for epoch in range(6):
    if epoch == 2:
        optimizer.add_param_group({"params": [scale]})
    if epoch % 3 == 0:
        optimizer.zero_grad(set_to_none=False)
    elif epoch % 3 == 1:
        model.zero_grad()
        scale.grad = None
    else:
        for p in list(model.parameters()) + [scale]:
            if p.grad is not None:
                p.grad.zero_()
    loss = ((model(X) * scale - y) ** 2).mean()
    loss.backward()
    optimizer.step()
