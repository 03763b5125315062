"""torch.backends.cpu: what the CPU offers."""


def get_cpu_capability():
    """The vector instruction set torch's kernels were picked for; glasstorch's are NumPy's ('DEFAULT')."""
    return "DEFAULT"
