# NaN made before a .detach() that breaks the graph: the warning names the op that made it (sqrt of a
# negative), not the ops after the cut that carry it on, nor the loss.
import glasstorch as torch

w = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
r = torch.sqrt(w - 1.5)  # expect: NonFiniteWarning
feature = r.detach() * 2 + 1
loss = (feature * w).sum()
loss.backward()
