"""torch.backends.mkldnn (oneDNN): not used by glasstorch; ``enabled`` is kept for programs that set it."""

enabled = True
deterministic = False


def is_available():
    return False
