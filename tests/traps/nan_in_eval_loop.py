# An evaluation loop (no_grad, no backward, no optimizer): NaN from a log of negative outputs is
# still reported at its line -- a value leaving the step (.item()) is not needed for the check.
# needs: nn
import glasstorch as torch
from glasstorch import nn

torch.manual_seed(0)
model = nn.Linear(4, 3).eval()
batches = [torch.randn(8, 4) for _ in range(3)]
scores = []
with torch.no_grad():
    for xb in batches:
        out = model(xb)
        scores.append(torch.log(out))  # expect: NonFiniteWarning
