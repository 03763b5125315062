"""glasstorch.functional (torch.functional): the functions glasstorch has, re-exported; the rest named as missing."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import glasstorch  # noqa: E402
import glasstorch.functional as F  # noqa: E402

_rng = np.random.default_rng(2)
A = _rng.standard_normal((3, 4))
B = _rng.standard_normal((4, 2))
V = _rng.standard_normal(3)

CALLS = {
    "einsum": lambda F, lib: F.einsum("ij,jk->ik", lib.tensor(A), lib.tensor(B)),
    "tensordot": lambda F, lib: F.tensordot(lib.tensor(A), lib.tensor(B), dims=1),
    "norm": lambda F, lib: F.norm(lib.tensor(A), p=2, dim=1, keepdim=True),
    "norm-fro": lambda F, lib: F.norm(lib.tensor(A)),
    "meshgrid": lambda F, lib: F.meshgrid(lib.tensor(V), lib.tensor(V[:2]), indexing="ij"),
    "split": lambda F, lib: F.split(lib.tensor(A), [1, 3], dim=1),
    "unique": lambda F, lib: F.unique(lib.tensor([3, 1, 3, 2]), return_inverse=True, return_counts=True),
    "broadcast_tensors": lambda F, lib: F.broadcast_tensors(lib.tensor(V).reshape(3, 1), lib.tensor(V[:2])),
    "broadcast_shapes": lambda F, lib: F.broadcast_shapes((3, 1), (1, 2)),
    "atleast_1d": lambda F, lib: F.atleast_1d(lib.tensor(1.5)),
    "block_diag": lambda F, lib: F.block_diag(lib.tensor(A), lib.tensor(V)),
    "cartesian_prod": lambda F, lib: F.cartesian_prod(lib.tensor(V), lib.tensor(V[:2])),
    "cdist": lambda F, lib: F.cdist(lib.tensor(A), lib.tensor(A)),
    "chain_matmul": lambda F, lib: F.chain_matmul(lib.tensor(A), lib.tensor(B)),
    "atleast_2d": lambda F, lib: F.atleast_2d(lib.tensor(V), lib.tensor(2.0)),
}


def _flat(x):
    """A result (tensor, tuple of tensors, Size) as a flat list of numbers and its structure."""
    if isinstance(x, (tuple, list)) and not (x and isinstance(x[0], int)):
        parts = [_flat(v) for v in x]
        return [n for p in parts for n in p[0]], [p[1] for p in parts]
    if hasattr(x, "tolist"):
        return np.ravel(x.tolist()).tolist(), tuple(x.shape)
    return list(x), len(x)


@pytest.mark.parametrize("name", CALLS)
def test_reexported_functions_match_torch(name):
    ours, our_structure = _flat(CALLS[name](F, glasstorch))
    theirs, their_structure = _flat(CALLS[name](torch.functional, torch))
    assert our_structure == their_structure
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_same_objects_as_the_top_level():
    for name in F.__all__:
        if hasattr(F, name):
            assert getattr(F, name) is getattr(glasstorch, name), name


def test_namespace_and_missing_names():
    assert F.__all__ == torch.functional.__all__
    with pytest.raises(AttributeError, match="torch.functional.lu is not in glasstorch yet"):
        F.lu
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        F.nothing
    assert "lu" not in dir(F) and "einsum" in dir(F) and "stft" in dir(F)
    assert glasstorch.functional is F
