# needs: nn
# zero_grad() called once, before the loop, instead of once per iteration.
import glasstorch as torch
from glasstorch import nn

torch.manual_seed(0)
model = nn.Linear(4, 2)
criterion = nn.MSELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
X, Y = torch.randn(16, 4), torch.randn(16, 2)
optimizer.zero_grad()
for step in range(3):
    loss = criterion(model(X), Y)
    loss.backward()
    optimizer.step()  # expect: MissingZeroGradWarning
