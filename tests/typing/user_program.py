"""A small program as people write it for PyTorch (d2l / Step-by-Step style), on glasstorch: mypy must
find no error in it, as it finds none in the same program on torch (tests/test_typing.py)."""
import math
import os
import tempfile

import numpy as np

import glasstorch as torch
import glasstorch.nn.functional as F
from glasstorch import nn
from glasstorch.utils.data import DataLoader, Dataset, TensorDataset


class Net(nn.Module):
    def __init__(self, n_in: int, n_hidden: int = 16) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(n_in, n_hidden), nn.ReLU(), nn.Dropout(0.1))
        self.head = nn.Linear(n_hidden, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x))


class Squares(Dataset):
    def __len__(self) -> int:
        return 10

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        x = torch.tensor([float(i)])
        return x, x ** 2


def accuracy(model: nn.Module, X: torch.Tensor, y: torch.Tensor) -> float:
    model.eval()
    with torch.no_grad():
        return (model(X).argmax(dim=1) == y).float().mean().item()


def main() -> None:
    torch.manual_seed(0)
    device = torch.device("cpu")
    X = torch.randn(200, 4)
    y = (X.sum(dim=1) > 0).long()
    loader = DataLoader(TensorDataset(X, y), batch_size=20, shuffle=True)
    model = Net(4).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(3):
        model.train()
        total = 0.0
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            total += loss.item() * len(yb)
        sched.step()
        print(f"epoch {epoch}: {total / len(X):.3f}, acc {accuracy(model, X, y):.2f}")
    w = torch.zeros(3, requires_grad=True)
    b = torch.ones(1, dtype=torch.float32)
    z = (w * torch.arange(3.0) + b).pow(2).sum()
    z.backward()
    assert w.grad is not None
    print(w.grad.numpy(), w.grad.tolist(), math.sqrt(z.item()))
    a = torch.from_numpy(np.ones((2, 3), dtype=np.float32))
    print(a.shape[0] * a.size(1), a.view(-1).shape, a.reshape(3, 2).T, a.mean(dim=0, keepdim=True))
    print(torch.cat([a, a], dim=0).unsqueeze(0).squeeze(0).permute(1, 0).contiguous().dtype)
    print(F.softmax(a, dim=1), F.relu(a), torch.stack([a, a]).max(dim=0).values, a[a > 0].numel())
    for xb, yb in DataLoader(Squares(), batch_size=5):
        print(xb.shape, yb.dtype)
    with tempfile.TemporaryDirectory() as tmp:
        torch.save(model.state_dict(), os.path.join(tmp, "prog.pt"))
        model.load_state_dict(torch.load(os.path.join(tmp, "prog.pt")))
    print(torch.__version__, torch.float64, torch.eye(2) @ torch.ones(2, 2), torch.linspace(0, 1, 5))


if __name__ == "__main__":
    main()
