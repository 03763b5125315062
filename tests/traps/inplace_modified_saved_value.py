# raises: RuntimeError
# An in-place op overwrites a value backward needs (always checked, seatbelt or not).
import glasstorch as torch

x = torch.randn(4, requires_grad=True)
y = x.sigmoid()
y.mul_(2)  # modified-here
y.sum().backward()
