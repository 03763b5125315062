"""torch.utils._pytree, the part torch.func needs: nested tuples, lists, dicts and namedtuples
("pytrees") flattened to their leaves and a ``TreeSpec`` that rebuilds them.

    >>> from glasstorch.utils._pytree import tree_flatten, tree_unflatten
    >>> leaves, spec = tree_flatten((1, {"a": 2, "b": [3, 4]}))
    >>> leaves
    [1, 2, 3, 4]
    >>> tree_unflatten([10, 20, 30, 40], spec)
    (10, {'a': 20, 'b': [30, 40]})

``TreeSpec``'s repr is torch's (error messages of torch.func print it).
"""
__all__ = ["TreeSpec", "LeafSpec", "tree_flatten", "tree_unflatten", "tree_map", "tree_leaves", "treespec_pprint"]


class TreeSpec:
    """The structure of a pytree: a node's type, its context (a dict's keys, a namedtuple's type)
    and the specs of its children; a leaf is a ``LeafSpec``."""

    def __init__(self, type, context, children_specs):
        self.type, self._context, self.children_specs = type, context, children_specs
        self.num_leaves = sum(c.num_leaves for c in children_specs)

    @property
    def num_children(self):
        return len(self.children_specs)

    def is_leaf(self):
        return False

    def __eq__(self, other):
        return (isinstance(other, TreeSpec) and self.type is other.type and self._context == other._context
                and self.children_specs == other.children_specs)

    def __repr__(self, indent=0):
        prefix = f"TreeSpec({self.type.__name__}, {self._context}, ["
        children = ""
        if self.num_children > 0:
            indent += 2
            children += self.children_specs[0].__repr__(indent)
            children += "," if self.num_children > 1 else ""
            children += ",".join("\n" + " " * indent + c.__repr__(indent) for c in self.children_specs[1:])
        return prefix + children + "])"

    def unflatten(self, leaves):
        return tree_unflatten(leaves, self)


class LeafSpec(TreeSpec):
    def __init__(self):
        super().__init__(None, None, [])
        self.num_leaves = 1

    def is_leaf(self):
        return True

    def __eq__(self, other):
        return isinstance(other, LeafSpec)

    def __repr__(self, indent=0):
        return "*"


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def tree_flatten(tree):
    """(the leaves in order, the TreeSpec of ``tree``)."""
    leaves = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree, leaves):
    if _is_namedtuple(tree):
        return TreeSpec(type(tree), type(tree), [_flatten(v, leaves) for v in tree])
    if isinstance(tree, (tuple, list)):
        return TreeSpec(type(tree), None, [_flatten(v, leaves) for v in tree])
    if isinstance(tree, dict):
        keys = list(tree)
        return TreeSpec(type(tree), keys, [_flatten(tree[k], leaves) for k in keys])
    leaves.append(tree)
    return LeafSpec()


def tree_unflatten(leaves, treespec):
    """The pytree of structure ``treespec`` holding ``leaves``."""
    leaves = list(leaves)
    if len(leaves) != treespec.num_leaves:
        raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec refers to a "
                         f"pytree that holds {treespec.num_leaves} items ({treespec}).")
    return _unflatten(iter(leaves), treespec)


def _unflatten(it, spec):
    if spec.is_leaf():
        return next(it)
    children = [_unflatten(it, c) for c in spec.children_specs]
    if spec.type is dict or isinstance(spec._context, list) and issubclass(spec.type, dict):
        return spec.type(zip(spec._context, children))
    if spec._context is not None:      # a namedtuple
        return spec.type(*children)
    return spec.type(children)


def tree_leaves(tree):
    return tree_flatten(tree)[0]


def tree_map(fn, tree):
    """``tree`` with ``fn`` applied to each leaf."""
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


class _DummyLeaf:
    def __repr__(self):
        return "*"


def treespec_pprint(treespec):
    """The structure as Python would print it, each leaf a ``*``: ``(*, [*, *])``."""
    return repr(tree_unflatten([_DummyLeaf() for _ in range(treespec.num_leaves)], treespec))
