# needs: nn
# BatchNorm left in train mode under inference_mode: it normalises with the test batch's statistics and
# overwrites its running averages with them.
import glasstorch as torch
from glasstorch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 1))
X = torch.randn(10, 3)


def predict(batch):
    with torch.inference_mode():
        return model(batch)  # expect: TrainModeInferenceWarning


first = predict(X)
second = predict(X)
