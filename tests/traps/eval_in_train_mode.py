# needs: nn
# Evaluation under no_grad, but model.eval() is never called: dropout keeps dropping activations.
import glasstorch as torch
from glasstorch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
X, y = torch.randn(20, 4), torch.randint(0, 2, (20,))
for step in range(2):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(X), y)
    loss.backward()
    optimizer.step()
with torch.no_grad():
    accuracy = (model(X).argmax(1) == y).float().mean()  # expect: TrainModeInferenceWarning
print(f"accuracy {accuracy.item():.2f}")
