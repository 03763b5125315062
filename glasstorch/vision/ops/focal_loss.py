"""torchvision.ops.sigmoid_focal_loss (RetinaNet's focal loss), in differentiable tensor ops as
torchvision writes it."""
import glasstorch as torch
import glasstorch.nn.functional as F

__all__ = ["sigmoid_focal_loss"]


def sigmoid_focal_loss(inputs, targets, alpha=0.25, gamma=2.0, reduction="none"):
    """Focal loss (Lin et al., 2017) of logits ``inputs`` against binary ``targets`` of the same
    shape: binary cross-entropy scaled by ``(1 - p_t) ** gamma`` (easy examples weigh less) and by
    ``alpha`` for positives, ``1 - alpha`` for negatives (``alpha = -1``: no weighting).
    ``reduction``: ``'none'``, ``'mean'`` or ``'sum'``."""
    if not (0 <= alpha <= 1) and alpha != -1:
        raise ValueError(f"Invalid alpha value: {alpha}. alpha must be in the range [0,1] or -1 for ignore.")
    p = torch.sigmoid(inputs)
    ce_loss = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce_loss * ((1 - p_t) ** gamma)
    if alpha >= 0:
        alpha_t = alpha * targets + (1 - alpha) * (1 - targets)
        loss = alpha_t * loss
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(
        f"Invalid Value for arg 'reduction': '{reduction} \n Supported reduction modes: 'none', 'mean', 'sum'")
