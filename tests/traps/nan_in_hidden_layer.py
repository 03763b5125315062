# NaN made in the middle of a multi-layer model (a log of a layer's negative outputs): the warning names
# the op and the line inside forward() where it first appears, not the model call or a later layer.
# needs: nn
import glasstorch as torch
from glasstorch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(4, 8), nn.Linear(8, 8), nn.Linear(8, 2)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        h = torch.log(self.fc2(h))  # expect: NonFiniteWarning
        return self.fc3(h)


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(16, 4), torch.randint(0, 2, (16,))
optimizer.zero_grad()
loss = nn.functional.cross_entropy(model(x), y)
loss.backward()
optimizer.step()     # (the nan gradients make fc1..fc3 nan: a second step would also report them entering)
