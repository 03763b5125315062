"""torch.backends.opt_einsum: glasstorch's einsum contracts pairwise in the order written."""

enabled = True
strategy = "auto"


def is_available():
    return False
