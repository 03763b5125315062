# needs: nn
# The encoder runs inside a no_grad block but its parameters are in the optimizer: they never train.
import glasstorch as torch
from glasstorch import nn

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(6, 8), nn.Tanh())
head = nn.Linear(8, 1)
optimizer = torch.optim.SGD(list(encoder.parameters()) + list(head.parameters()), lr=0.1)
X, y = torch.randn(10, 6), torch.randn(10, 1)
for step in range(2):
    optimizer.zero_grad()
    with torch.no_grad():
        features = encoder(X)  # expect: GraphCutWarning
    loss = nn.functional.mse_loss(head(features), y)
    loss.backward()
    optimizer.step()
