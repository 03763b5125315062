r"""``Flatten`` and ``Unflatten``: reshape layers (views when the input allows)."""
from .module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    r"""Flatten dims start_dim..end_dim into one: (N, C, H, W) -> (N, C*H*W) by default."""

    __constants__ = ["start_dim", "end_dim"]

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    r"""Split dim ``dim`` into ``unflattened_size``: (N, 12) -> (N, 3, 4) with dim=1, (3, 4)."""

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if isinstance(dim, int):
            if not isinstance(unflattened_size, (tuple, list)) or not all(isinstance(s, int) for s in unflattened_size):
                raise TypeError("unflattened_size must be tuple of ints, but found type {}".format(
                    type(unflattened_size).__name__))
        elif isinstance(dim, str):
            raise TypeError("named tensors are not supported: dim must be an int")
        else:
            raise TypeError("invalid argument type for dim parameter")
        self.dim = dim
        self.unflattened_size = tuple(unflattened_size)

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
