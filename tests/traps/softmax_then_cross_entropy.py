# needs: nn
# The model ends in nn.Softmax and the loss is nn.CrossEntropyLoss, which applies log_softmax
# itself: softmax twice, a squashed loss, vanishing gradients.
import glasstorch as torch
from glasstorch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3), nn.Softmax(dim=1))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
X, y = torch.randn(12, 4), torch.randint(0, 3, (12,))
for step in range(2):
    optimizer.zero_grad()
    loss = criterion(model(X), y)  # expect: ProbabilitiesToCrossEntropyWarning
    loss.backward()
    optimizer.step()
