# A parameter moved to a dtype after requires_grad=True: torch refuses it ("can't optimize a non-leaf
# Tensor"); the seatbelt says where it became a non-leaf and how to create it instead.
import glasstorch as torch

torch.manual_seed(0)
w = torch.randn(3, 1, requires_grad=True).to(torch.float64)  # expect: NonLeafParameterWarning
try:
    optimizer = torch.optim.SGD([w], lr=0.1)
except ValueError as error:
    print("ValueError:", error)
