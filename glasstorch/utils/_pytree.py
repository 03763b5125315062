"""torch.utils._pytree, the part glasstorch uses: ``tree_map`` over nested tuples, lists and dicts."""


def tree_map(fn, tree):
    """``tree`` with ``fn`` applied to each leaf (anything not a tuple, list or dict), the containers
    rebuilt as they were."""
    if isinstance(tree, (tuple, list)):
        return type(tree)(tree_map(fn, v) for v in tree)
    if isinstance(tree, dict):
        return {k: tree_map(fn, v) for k, v in tree.items()}
    return fn(tree)
