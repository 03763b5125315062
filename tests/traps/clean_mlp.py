# needs: nn
# An ordinary classifier: zero_grad/backward/step, a running loss as a number, evaluation in eval mode
# under no_grad, back to train mode. The seatbelt must stay silent.
import glasstorch as torch
from glasstorch import nn

torch.manual_seed(0)
X, y = torch.randn(64, 10), torch.randint(0, 3, (64,))
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 3))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for epoch in range(3):
    model.train()
    total_loss = 0.0
    for i in range(0, 64, 16):
        xb, yb = X[i:i + 16], y[i:i + 16]
        optimizer.zero_grad()
        logits = model(xb)
        loss = criterion(logits, yb)
        loss.backward()
        optimizer.step()
        total_loss += loss.item()
        accuracy = (logits.argmax(dim=1) == yb).float().mean().item()
    model.eval()
    with torch.no_grad():
        val_logits = model(X)
        val_loss = criterion(val_logits, y).item()
        probs = torch.softmax(val_logits, dim=1)
        predictions = probs.argmax(dim=1).numpy()
print(f"train {total_loss / 4:.3f}  val {val_loss:.3f}")
