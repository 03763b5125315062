# exp of large scores overflows float32 to inf (softmax written without subtracting the max).
import glasstorch as torch

w = torch.tensor([[30.0], [40.0]], requires_grad=True)
x = torch.tensor([[1.0, 2.0], [2.0, 1.5]])
scores = x @ w
e = torch.exp(scores)  # expect: NonFiniteWarning
p = e / e.sum()
p[0].sum().backward()
