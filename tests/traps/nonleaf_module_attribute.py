# needs: nn
# raises: RuntimeError
# A module keeps a computed tensor as its "parameter": model.parameters() does not list it. Its graph
# (the multiplication, which saved its factor) is shared by every step, so the second backward fails
# with torch's "Trying to backward through the graph a second time"; the seatbelt says why.
import glasstorch as torch
from glasstorch import nn


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 1)
        self.scale = torch.ones(1, requires_grad=True) * 2.0  # expect: NonLeafParameterWarning

    def forward(self, x):
        return self.linear(x) * self.scale


torch.manual_seed(0)
model = Scaled()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
X, y = torch.randn(8, 3), torch.randn(8, 1)
for step in range(2):
    optimizer.zero_grad()
    loss = ((model(X) - y) ** 2).mean()
    loss.backward()
    optimizer.step()
