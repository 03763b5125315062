"""torch.fx.passes: what glasstorch has of torch's graph passes (``shape_prop``)."""
