"""torch.backends.opt_einsum: glasstorch's einsum contracts pairwise in the order written.

torch turns this on only when the opt_einsum package is installed; glasstorch never uses it, so the
switches read as torch's do without that package: ``enabled`` False, ``strategy`` None."""

enabled = False
strategy = None


def is_available():
    return False
