"""glasstorch.utils.data and glasstorch.datasets, checked against torch.utils.data.

The same datasets are built once with glasstorch and once with torch; batches,
collated structures and error messages must agree.  Shuffled orders cannot equal
torch's (different RNG bits), so for those we check reproducibility and that the
result is a permutation.
"""

import collections
import doctest
import gc
import multiprocessing
import os
import time
import warnings

import numpy as np
import pytest

import glasstorch
import glasstorch.datasets
from glasstorch.utils import data as gdata

torch = pytest.importorskip("torch")
tdata = torch.utils.data

Point = collections.namedtuple("Point", ["xy", "label"])


# --- comparing a glasstorch result with torch's ------------------------------

def assert_same(ours, theirs, path="batch"):
    """Same structure, container types, tensor dtypes, shapes and values."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, glasstorch.Tensor), f"{path}: {type(ours)} is not a Tensor"
        assert str(ours.dtype) == str(theirs.dtype), f"{path}: dtype {ours.dtype} != {theirs.dtype}"
        assert tuple(ours.shape) == tuple(theirs.shape), f"{path}: shape {tuple(ours.shape)} != {tuple(theirs.shape)}"
        np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy(), err_msg=path)
    elif isinstance(theirs, np.ndarray):
        assert isinstance(ours, np.ndarray) and ours.dtype == theirs.dtype, path
        np.testing.assert_array_equal(ours, theirs, err_msg=path)
    elif isinstance(theirs, collections.abc.Mapping):
        assert type(ours) is type(theirs), f"{path}: {type(ours)} != {type(theirs)}"
        assert list(ours) == list(theirs), f"{path}: keys {list(ours)} != {list(theirs)}"
        for key in theirs:
            assert_same(ours[key], theirs[key], f"{path}[{key!r}]")
    elif isinstance(theirs, (list, tuple)):
        assert type(ours) is type(theirs), f"{path}: {type(ours)} != {type(theirs)}"
        assert len(ours) == len(theirs), f"{path}: length {len(ours)} != {len(theirs)}"
        for i, (a, b) in enumerate(zip(ours, theirs)):
            assert_same(a, b, f"{path}[{i}]")
    else:
        assert type(ours) is type(theirs) and ours == theirs, f"{path}: {ours!r} != {theirs!r}"


def same_error(call_ours, call_theirs):
    """Both raise the same exception type with the same message."""
    with pytest.raises(Exception) as theirs:
        call_theirs()
    with pytest.raises(type(theirs.value)) as ours:
        call_ours()
    assert str(ours.value) == str(theirs.value)


# --- collate --------------------------------------------------------------------

def collate_cases(lib):
    """name -> a batch (list of samples), built with lib = glasstorch or torch."""
    T = lib.tensor
    return {
        "ints": [0, 1, 2],
        "floats": [0.5, 1.5],
        "bools": [True, False],
        "float32 tensors": [T([1.0, 2.0]), T([3.0, 4.0])],
        "int64 tensors": [T([[1]]), T([[2]])],
        "0-d tensors": [T(1.5), T(2.5)],
        "uint8 tensors": [T([1, 2], dtype=lib.uint8), T([3, 4], dtype=lib.uint8)],
        "int32 arrays": [np.array([1, 2], dtype=np.int32), np.array([3, 4], dtype=np.int32)],
        "float64 arrays": [np.zeros((2, 3)), np.ones((2, 3))],
        "0-d arrays": [np.array(1.5), np.array(2.5)],
        "float32 scalars": [np.float32(1), np.float32(2)],
        "int32 scalars": [np.int32(1), np.int32(2)],
        "bool scalars": [np.bool_(True), np.bool_(False)],
        "uint8 scalars": [np.uint8(1), np.uint8(200)],
        "strings": ["a", "b"],
        "bytes": [b"a", b"b"],
        "tuples": [(T([1.0]), 0, "x"), (T([2.0]), 1, "y")],
        "lists": [[1, 2.0], [3, 4.0]],
        "dicts": [{"x": T([1.0]), "y": 0}, {"x": T([2.0]), "y": 1}],
        "ordered dicts": [collections.OrderedDict(b=1, a=2.0), collections.OrderedDict(b=3, a=4.0)],
        "namedtuples": [Point(T([1.0, 2.0]), 1), Point(T([3.0, 4.0]), 2)],
        "nested": [
            {"img": (T([[1.0]]), np.array([1.0], dtype=np.float32)), "meta": {"id": 1, "name": "a", "tags": [1, 2]}},
            {"img": (T([[2.0]]), np.array([2.0], dtype=np.float32)), "meta": {"id": 2, "name": "b", "tags": [3, 4]}},
        ],
    }


COLLATE_CASES = [
    "ints", "floats", "bools", "float32 tensors", "int64 tensors", "0-d tensors", "uint8 tensors",
    "int32 arrays", "float64 arrays", "0-d arrays", "float32 scalars", "int32 scalars", "bool scalars",
    "uint8 scalars", "strings", "bytes", "tuples", "lists", "dicts", "ordered dicts", "namedtuples", "nested",
]


@pytest.mark.parametrize("case", COLLATE_CASES)
def test_default_collate_matches_torch(case):
    ours = gdata.default_collate(collate_cases(glasstorch)[case])
    theirs = tdata.default_collate(collate_cases(torch)[case])
    assert_same(ours, theirs)


@pytest.mark.parametrize("case", COLLATE_CASES)
def test_default_convert_matches_torch(case):
    # default_convert works on one sample; feed it each case's first sample.
    ours = gdata.default_convert(collate_cases(glasstorch)[case][0])
    theirs = tdata.default_convert(collate_cases(torch)[case][0])
    assert_same(ours, theirs)


def test_default_convert_leaves_string_arrays():
    arr = np.array(["a", "b"])
    assert gdata.default_convert(arr) is arr


def test_collate_keeps_autograd():
    a = glasstorch.tensor([1.0, 2.0], requires_grad=True)
    batch = gdata.default_collate([a, a * 2])
    batch.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [3.0, 3.0])


@pytest.mark.parametrize("make_batch", [
    lambda: [object(), object()],
    lambda: [None],
    lambda: [np.array(["a"]), np.array(["b"])],
    lambda: [[1, 2], [1]],
    lambda: [],
])
def test_default_collate_errors_match_torch(make_batch):
    same_error(lambda: gdata.default_collate(make_batch()), lambda: tdata.default_collate(make_batch()))


def test_custom_collate_fn_map():
    from glasstorch.utils.data._utils.collate import collate, default_collate_fn_map

    class Box:
        def __init__(self, v):
            self.v = v

    fn_map = {**default_collate_fn_map, Box: lambda batch, *, collate_fn_map: sum(b.v for b in batch)}
    assert collate([(Box(1), 2), (Box(3), 4)], collate_fn_map=fn_map)[0] == 4


# --- datasets -----------------------------------------------------------------

def test_tensor_dataset():
    x, y = glasstorch.arange(12.0).reshape(4, 3), glasstorch.arange(4)
    ds = gdata.TensorDataset(x, y)
    assert len(ds) == 4
    assert_same(ds[2], tdata.TensorDataset(torch.arange(12.0).reshape(4, 3), torch.arange(4))[2])
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        gdata.TensorDataset(x, glasstorch.arange(5))


def test_concat_subset_stack_chain():
    a, b = list(range(3)), list(range(10, 15))

    class Seq(gdata.Dataset):
        def __init__(self, items):
            self.items = items

        def __len__(self):
            return len(self.items)

        def __getitem__(self, i):
            return self.items[i]

    cat = Seq(a) + Seq(b)
    assert isinstance(cat, gdata.ConcatDataset)
    assert len(cat) == 8 and cat.cumulative_sizes == [3, 8]
    assert [cat[i] for i in range(8)] == a + b and cat[-1] == 14
    with pytest.raises(ValueError, match="absolute value of index should not exceed dataset length"):
        cat[-9]
    with pytest.raises(AssertionError, match="datasets should not be an empty iterable"):
        gdata.ConcatDataset([])

    sub = gdata.Subset(cat, [7, 0, 3])
    assert len(sub) == 3 and [sub[i] for i in range(3)] == [14, 0, 10]
    assert sub.__getitems__([0, 2]) == [14, 10]

    stack = gdata.StackDataset(Seq(a), Seq([5, 6, 7]))
    assert stack[1] == (1, 6) and stack.__getitems__([0, 2]) == [(0, 5), (2, 7)]
    named = gdata.StackDataset(x=Seq(a), y=Seq([5, 6, 7]))
    assert named[2] == {"x": 2, "y": 7} and named.__getitems__([1]) == [{"x": 1, "y": 6}]
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        gdata.StackDataset(Seq(a), Seq(b))

    class Stream(gdata.IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(self.n))

        def __len__(self):
            return self.n

    chain = Stream(2) + Stream(3)
    assert isinstance(chain, gdata.ChainDataset) and list(chain) == [0, 1, 0, 1, 2] and len(chain) == 5
    with pytest.raises(AssertionError, match="ConcatDataset does not support IterableDataset"):
        gdata.ConcatDataset([Stream(2)])


def test_dataset_base_errors():
    with pytest.raises(NotImplementedError, match="Subclasses of Dataset should implement __getitem__"):
        gdata.Dataset()[0]


@pytest.mark.parametrize("n, lengths", [
    (10, [3, 7]), (10, [0.3, 0.7]), (11, [0.5, 0.5]), (10, [0.1, 0.2, 0.3, 0.4]), (7, [1 / 3] * 3), (5, [5, 0]),
])
def test_random_split_lengths_match_torch(n, lengths):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a zero-length split warns, in both
        ours = gdata.random_split(range(n), lengths, generator=glasstorch.Generator().manual_seed(0))
        theirs = tdata.random_split(range(n), lengths, generator=torch.Generator().manual_seed(0))
    assert [len(s) for s in ours] == [len(s) for s in theirs]
    # The pieces are disjoint and cover the dataset.
    assert sorted(i for s in ours for i in s) == list(range(n))
    # A seeded generator gives the same split again.
    again = gdata.random_split(range(n), lengths, generator=glasstorch.Generator().manual_seed(0)) \
        if sum(lengths) else ours
    assert [list(s) for s in again] == [list(s) for s in ours]


@pytest.mark.parametrize("lengths", [[3, 3], [0.5, 0.6], [-0.5, 1.5], [11]])
def test_random_split_errors_match_torch(lengths):
    same_error(lambda: gdata.random_split(range(10), lengths), lambda: tdata.random_split(range(10), lengths))


def test_random_split_zero_length_warns():
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        gdata.random_split(range(2), [1.0, 0.0])


def test_subset_override_check():
    class Bad(gdata.Subset):
        def __getitem__(self, i):
            return 0

    with pytest.raises(NotImplementedError, match="overrides __getitem__ but not __getitems__"):
        Bad(range(3), [0])


# --- samplers ------------------------------------------------------------------

@pytest.mark.parametrize("batch_size, drop_last", [(1, False), (3, False), (3, True), (5, True), (20, False)])
def test_batch_sampler_matches_torch(batch_size, drop_last):
    ours = gdata.BatchSampler(gdata.SequentialSampler(range(10)), batch_size, drop_last)
    theirs = tdata.BatchSampler(tdata.SequentialSampler(range(10)), batch_size, drop_last)
    assert list(ours) == list(theirs) and len(ours) == len(theirs)


@pytest.mark.parametrize("make", [
    lambda m: m.BatchSampler(range(3), 0, False),
    lambda m: m.BatchSampler(range(3), True, False),
    lambda m: m.BatchSampler(range(3), 2, 1),
    lambda m: m.RandomSampler(range(3), replacement=1),
    lambda m: m.RandomSampler(range(3), num_samples=0),
    lambda m: m.RandomSampler([]),
    lambda m: m.WeightedRandomSampler([1.0, 2.0], 0),
    lambda m: m.WeightedRandomSampler([1.0, 2.0], 2, replacement=None),
    lambda m: m.WeightedRandomSampler([[1.0, 2.0]], 2),
    lambda m: m.DistributedSampler(range(3), num_replicas=2, rank=2),
    lambda m: m.DistributedSampler(range(3), num_replicas=2, rank=-1),
])
def test_sampler_errors_match_torch(make):
    same_error(lambda: make(gdata), lambda: make(tdata))


def is_permutation(indices, n):
    return sorted(indices) == list(range(n))


def test_random_sampler():
    g = lambda: glasstorch.Generator().manual_seed(7)  # noqa: E731
    first = list(gdata.RandomSampler(range(50), generator=g()))
    assert is_permutation(first, 50) and first != list(range(50))
    assert list(gdata.RandomSampler(range(50), generator=g())) == first

    # One generator, two epochs: two different permutations.
    sampler = gdata.RandomSampler(range(50), generator=g())
    epoch1, epoch2 = list(sampler), list(sampler)
    assert is_permutation(epoch2, 50) and epoch1 != epoch2

    # num_samples beyond the length: whole permutations, then part of one.
    long = list(gdata.RandomSampler(range(4), num_samples=10, generator=g()))
    assert len(long) == 10 and is_permutation(long[:4], 4) and is_permutation(long[4:8], 4)
    assert len(set(long[8:])) == 2

    with_replacement = gdata.RandomSampler(range(3), replacement=True, num_samples=100, generator=g())
    draws = list(with_replacement)
    assert len(with_replacement) == 100 and len(draws) == 100 and set(draws) == {0, 1, 2}

    # Without a generator, the global seed decides.
    glasstorch.manual_seed(3)
    a = list(gdata.RandomSampler(range(20)))
    glasstorch.manual_seed(3)
    assert list(gdata.RandomSampler(range(20))) == a


def test_subset_and_weighted_samplers():
    g = glasstorch.Generator().manual_seed(1)
    assert sorted(gdata.SubsetRandomSampler([5, 8, 13], generator=g)) == [5, 8, 13]

    draws = list(gdata.WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 200, generator=g))
    assert len(draws) == 200 and set(draws) == {1, 3}
    assert draws.count(3) > draws.count(1)  # weight 3 against 1: fails with probability ~1e-13
    distinct = list(gdata.WeightedRandomSampler([1.0, 1.0, 1.0, 1.0], 4, replacement=False, generator=g))
    assert is_permutation(distinct, 4)


@pytest.mark.parametrize("n, replicas, drop_last", [(10, 4, False), (10, 4, True), (3, 5, False), (12, 3, True)])
def test_distributed_sampler_matches_torch(n, replicas, drop_last):
    for rank in range(replicas):
        ours = gdata.DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        theirs = tdata.DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)


def test_distributed_sampler_shuffle():
    def shares(epoch, seed=0):
        samplers = [gdata.DistributedSampler(range(12), 3, r, seed=seed) for r in range(3)]
        for s in samplers:
            s.set_epoch(epoch)
        return [list(s) for s in samplers]

    epoch0 = shares(0)
    assert is_permutation([i for share in epoch0 for i in share], 12)  # disjoint, complete
    assert shares(0) == epoch0  # every process computes the same order
    assert shares(1) != epoch0  # set_epoch reshuffles
    assert shares(0, seed=5) != epoch0


# --- DataLoader against torch ---------------------------------------------------------

class Rows(gdata.Dataset):
    """Sample i: (row i of a float32 matrix, label i, {'id': i, 'name': str}), built with lib."""

    def __init__(self, lib, n=10):
        self.x = lib.from_numpy(np.arange(n * 3, dtype=np.float32).reshape(n, 3))
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return self.x[i], i, {"id": float(i), "name": f"s{i}"}


# torch's loader wants a torch Dataset; the class body works for both libraries.
class TorchRows(tdata.Dataset):
    __init__, __len__, __getitem__ = Rows.__init__, Rows.__len__, Rows.__getitem__


def both_loaders(**kwargs):
    n = kwargs.pop("n", 10)
    return gdata.DataLoader(Rows(glasstorch, n), **kwargs), tdata.DataLoader(TorchRows(torch, n), **kwargs)


@pytest.mark.parametrize("kwargs", [
    {},
    {"batch_size": 3},
    {"batch_size": 3, "drop_last": True},
    {"batch_size": 4, "num_workers": 2},
    {"batch_size": 1, "num_workers": 2, "prefetch_factor": 1},
    {"batch_size": None},
    {"batch_size": 2, "sampler": [9, 0, 4, 4, 7]},
    {"batch_sampler": [[3, 1], [0], [9, 8, 7]]},
    {"batch_size": 3, "collate_fn": lambda batch: [s[1] for s in batch]},
])
def test_dataloader_batches_match_torch(kwargs):
    ours, theirs = both_loaders(**kwargs)
    assert len(ours) == len(theirs)
    assert_same(list(ours), list(theirs))


def test_dataloader_explicit_samplers_match_torch():
    indices = [5, 2, 2, 8, 0, 9, 1]
    ours = gdata.DataLoader(Rows(glasstorch), batch_size=3, sampler=gdata.SubsetRandomSampler(indices))
    assert sorted(i for _, labels, _ in ours for i in labels.tolist()) == sorted(indices)
    g_ours = gdata.DataLoader(Rows(glasstorch), batch_sampler=gdata.BatchSampler(indices, 2, True))
    t_theirs = tdata.DataLoader(TorchRows(torch), batch_sampler=tdata.BatchSampler(indices, 2, True))
    assert_same(list(g_ours), list(t_theirs))


def test_dataloader_shuffle_reproducible_permutation():
    def labels(loader):
        return [i for _, y, _ in loader for i in y.tolist()]

    make = lambda: gdata.DataLoader(  # noqa: E731
        Rows(glasstorch, 30), batch_size=4, shuffle=True, generator=glasstorch.Generator().manual_seed(0))
    first = labels(make())
    assert is_permutation(first, 30) and first != list(range(30))
    assert labels(make()) == first
    loader = make()
    assert labels(loader) != labels(loader)  # each epoch reshuffles


class Stream(gdata.IterableDataset):
    """0 .. n-1, split between workers by get_worker_info()."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __iter__(self):
        info = gdata.get_worker_info()
        if info is None:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))


class TorchStream(tdata.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __iter__(self):
        info = tdata.get_worker_info()
        if info is None:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))


@pytest.mark.parametrize("kwargs", [
    {"batch_size": 3},
    {"batch_size": 3, "drop_last": True},
    {"batch_size": None},
    {"batch_size": 2, "num_workers": 2},
    {"batch_size": 2, "num_workers": 2, "drop_last": True},
])
def test_iterable_dataset_matches_torch(kwargs):
    ours = gdata.DataLoader(Stream(11), **kwargs)
    theirs = tdata.DataLoader(TorchStream(11), **kwargs)
    assert len(ours) == len(theirs)
    assert_same(list(ours), list(theirs))


def test_iterable_dataset_length_warning():
    class Liar(Stream):
        def __len__(self):
            return 2

    loader = gdata.DataLoader(Liar(4), batch_size=None)
    assert len(loader) == 2
    with pytest.warns(UserWarning, match="was reported to be 2"):
        list(loader)


@pytest.mark.parametrize("kwargs", [
    {"num_workers": -1},
    {"timeout": -1},
    {"prefetch_factor": 2},
    {"num_workers": 1, "prefetch_factor": -1},
    {"persistent_workers": True},
    {"shuffle": True, "sampler": [0, 1]},
    {"batch_sampler": [[0]], "batch_size": 2},
    {"batch_sampler": [[0]], "shuffle": True},
    {"batch_sampler": [[0]], "drop_last": True},
    {"batch_size": None, "drop_last": True},
    {"batch_size": 0},
    {"multiprocessing_context": "fork"},
    {"num_workers": 1, "multiprocessing_context": "no-such-method"},
    {"num_workers": 1, "multiprocessing_context": 3},
])
def test_dataloader_errors_match_torch(kwargs):
    same_error(lambda: gdata.DataLoader(Rows(glasstorch), **kwargs),
               lambda: tdata.DataLoader(TorchRows(torch), **kwargs))


@pytest.mark.parametrize("kwargs", [{"shuffle": True}, {"sampler": [0]}, {"batch_sampler": [[0]]}])
def test_iterable_dataset_option_errors_match_torch(kwargs):
    same_error(lambda: gdata.DataLoader(Stream(3), **kwargs), lambda: tdata.DataLoader(TorchStream(3), **kwargs))


def test_dataloader_attributes_frozen_after_init():
    loader = gdata.DataLoader(Rows(glasstorch))
    with pytest.raises(ValueError, match="batch_size attribute should not be set after DataLoader is initialized"):
        loader.batch_size = 4
    loader.num_workers = 0  # not part of the sampler pipeline: allowed, as in torch


def test_dataloader_timeout_without_workers_is_refused():
    with pytest.raises(AssertionError, match="requires timeout == 0"):
        iter(gdata.DataLoader(Rows(glasstorch), timeout=1))


def test_pin_memory_accepted_with_torchs_warning():
    with pytest.warns(UserWarning, match="'pin_memory' argument is set as true but no accelerator is found"):
        batches = list(gdata.DataLoader(Rows(glasstorch), batch_size=5, pin_memory=True))
    assert len(batches) == 2


def test_getitems_fast_path_is_used():
    class Batched(gdata.Dataset):
        calls = []

        def __len__(self):
            return 6

        def __getitem__(self, i):
            raise AssertionError("__getitems__ should be used")

        def __getitems__(self, indices):
            self.calls.append(list(indices))
            return [i * 10 for i in indices]

    batches = [b.tolist() for b in gdata.DataLoader(Batched(), batch_size=4)]
    assert batches == [[0, 10, 20, 30], [40, 50]] and Batched.calls == [[0, 1, 2, 3], [4, 5]]


# --- worker processes -------------------------------------------------------------

def live_workers():
    gc.collect()  # iterators caught in exception reference cycles shut down when collected
    return multiprocessing.active_children()


class Slow(gdata.Dataset):
    """Varying delays, so that workers finish out of order."""

    def __init__(self, n, fail_at=None, exit_at=None):
        self.n, self.fail_at, self.exit_at = n, fail_at, exit_at

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.fail_at:
            raise ValueError(f"bad sample {i}")
        if i == self.exit_at:
            os._exit(3)
        time.sleep(0.004 * ((7 * i) % 5))
        return glasstorch.tensor([float(i)]), i


def test_workers_keep_order():
    before = live_workers()
    loader = gdata.DataLoader(Slow(24), batch_size=2, num_workers=2)
    labels = [i for _, y in loader for i in y.tolist()]
    assert labels == list(range(24))
    assert live_workers() == before  # the epoch ended: workers are gone


def test_workers_out_of_order_when_asked():
    loader = gdata.DataLoader(Slow(24), batch_size=2, num_workers=2, in_order=False)
    assert is_permutation([i for _, y in loader for i in y.tolist()], 24)


def test_worker_exception_reraised_with_traceback():
    loader = gdata.DataLoader(Slow(10, fail_at=5), batch_size=2, num_workers=2)
    with pytest.raises(ValueError) as info:
        list(loader)
    message = str(info.value)
    assert message.startswith("Caught ValueError in DataLoader worker process 0.\nOriginal Traceback")
    assert "in __getitem__" in message and "bad sample 5" in message  # the worker's own traceback
    del info  # the traceback holds the iterator; dropping it stops the workers
    assert live_workers() == []


def test_worker_keyerror_is_readable():
    class Missing(gdata.Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return {}["nope"]

    with pytest.raises(KeyError) as info:
        list(gdata.DataLoader(Missing(), num_workers=1))
    assert "Caught KeyError in DataLoader worker process 0.\nOriginal Traceback" in str(info.value)


def test_dead_worker_is_an_error_not_a_hang():
    loader = gdata.DataLoader(Slow(10, exit_at=5), batch_size=2, num_workers=2)
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly") as info:
        list(loader)
    assert time.monotonic() - start < 5
    assert "exited with code 3" in str(info.value)
    assert live_workers() == []  # the surviving worker was shut down too


KILLED_MAIN_PROCESS = """
import os, sys
import glasstorch as torch
from glasstorch.utils.data import DataLoader, Dataset


class Big(Dataset):          # batches of 8 MB: more than a pipe holds, as a book's image batches
    def __len__(self):
        return 1000

    def __getitem__(self, i):
        return torch.zeros(3, 300, 300)


it = iter(DataLoader(Big(), batch_size=8, num_workers=2))
next(it)                     # the workers have prefetched batches nobody will read
print(" ".join(str(w.pid) for w in it._workers), flush=True)
os.kill(os.getpid(), 9)      # as the kernel's out-of-memory killer ends a notebook
"""


def test_workers_exit_when_the_main_process_is_killed(tmp_path):
    """A main process killed mid-epoch (SIGKILL: no shutdown, no done_event) leaves its workers to notice
    through the watchdog; they must exit, as torch's do, and not wait for ever to flush a batch into the
    pipe nobody reads (glasstorch's batches travel through the pipe, torch's through shared memory)."""
    import signal
    import subprocess
    import sys
    script = tmp_path / "killed.py"
    script.write_text(KILLED_MAIN_PROCESS)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(glasstorch.__file__))))
    assert out.returncode == -signal.SIGKILL, out.stderr
    pids = [int(pid) for pid in out.stdout.split()]
    assert len(pids) == 2
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(os.path.exists(f"/proc/{pid}") for pid in pids):
        time.sleep(0.2)
    alive = [pid for pid in pids if os.path.exists(f"/proc/{pid}")]
    for pid in alive:
        os.kill(pid, signal.SIGKILL)
    assert alive == [], "DataLoader workers outlived their killed main process"


def test_timeout():
    class Sleepy(gdata.Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            time.sleep(1)
            return i

    it = iter(gdata.DataLoader(Sleepy(), num_workers=1, timeout=0.2))
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0.2 seconds"):
        next(it)
    assert time.monotonic() - start < 2
    it._shutdown_workers()


class WhoAmI(gdata.Dataset):
    """Reports which worker loaded each sample, and that worker's seeds."""

    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = gdata.get_worker_info()
        return {
            "i": i,
            "worker": info.id,
            "num_workers": info.num_workers,
            "seed": info.seed,
            "same_dataset": info.dataset is self,
            "random": float(glasstorch.rand(1).item()),
            "np_random": float(np.random.rand()),
            "init": getattr(self, "initialised_by", None),
        }


def init_worker(worker_id):
    info = gdata.get_worker_info()
    assert info.id == worker_id
    info.dataset.initialised_by = worker_id


def test_worker_info_seeds_and_init_fn():
    assert gdata.get_worker_info() is None  # main process

    def run(seed):
        loader = gdata.DataLoader(WhoAmI(), batch_size=2, num_workers=2, worker_init_fn=init_worker,
                                  generator=glasstorch.Generator().manual_seed(seed))
        return [{k: v.tolist() if isinstance(v, glasstorch.Tensor) else v for k, v in b.items()} for b in loader]

    batches = run(0)
    assert [b["worker"] for b in batches] == [[0, 0], [1, 1], [0, 0], [1, 1]]  # round robin
    assert all(b["num_workers"] == [2, 2] and b["same_dataset"] == [True, True] for b in batches)
    assert all(b["init"] == b["worker"] for b in batches)
    seeds = {b["worker"][0]: b["seed"][0] for b in batches}
    assert seeds[1] == seeds[0] + 1  # base_seed + worker_id, as in torch
    # Each worker has its own random streams...
    assert batches[0]["random"] != batches[1]["random"] and batches[0]["np_random"] != batches[1]["np_random"]
    # ...fixed by the loader's generator.
    assert run(0) == batches and run(1) != batches


def test_worker_init_fn_error_is_reported():
    def bad_init(worker_id):
        raise RuntimeError("init failed")

    with pytest.raises(RuntimeError, match="Caught RuntimeError in DataLoader worker process 0"):
        list(gdata.DataLoader(Rows(glasstorch), num_workers=1, worker_init_fn=bad_init))


def test_tensors_cross_processes_with_their_dtypes():
    class Typed(gdata.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return (glasstorch.tensor([i], dtype=glasstorch.float32), glasstorch.tensor(i % 2 == 0),
                    glasstorch.tensor([i, i], dtype=glasstorch.uint8).reshape(2, 1).t())

    in_process = list(gdata.DataLoader(Typed(), batch_size=2))
    in_workers = list(gdata.DataLoader(Typed(), batch_size=2, num_workers=2))
    for a, b in zip(in_process, in_workers):
        for x, y in zip(a, b):
            assert x.dtype is y.dtype and tuple(x.shape) == tuple(y.shape)
            np.testing.assert_array_equal(x.numpy(), y.numpy())


def test_unpicklable_batch_is_an_error_not_a_hang():
    class Unpicklable(gdata.Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return lambda: i

    with pytest.raises(Exception, match="pickling a batch"):
        list(gdata.DataLoader(Unpicklable(), num_workers=1, collate_fn=lambda b: b))


def test_persistent_workers_are_reused():
    loader = gdata.DataLoader(Slow(9), batch_size=2, num_workers=2, persistent_workers=True)
    first = [y.tolist() for _, y in loader]
    pids = [w.pid for w in loader._iterator._workers]
    it = iter(loader)
    next(it)  # an epoch left unfinished: its prefetched batches must not leak into the next
    second = [y.tolist() for _, y in loader]
    assert first == second == [[0, 1], [2, 3], [4, 5], [6, 7], [8]]
    assert [w.pid for w in loader._iterator._workers] == pids and all(w.is_alive() for w in loader._iterator._workers)
    loader._iterator._shutdown_workers()
    assert not any(w.is_alive() for w in loader._iterator._workers)


def test_persistent_workers_with_iterable_dataset():
    loader = gdata.DataLoader(Stream(7), batch_size=2, num_workers=2, persistent_workers=True)
    expected = [b.tolist() for b in tdata.DataLoader(TorchStream(7), batch_size=2, num_workers=2)]
    assert [b.tolist() for b in loader] == expected
    assert [b.tolist() for b in loader] == expected
    loader._iterator._shutdown_workers()


def test_spawn_start_method():
    # A dataset from glasstorch itself: the spawned worker imports glasstorch, not this file (and torch).
    ds = gdata.TensorDataset(glasstorch.arange(6.0), glasstorch.arange(6))
    loader = gdata.DataLoader(ds, batch_size=3, num_workers=1, multiprocessing_context="spawn")
    assert [y.tolist() for _, y in loader] == [[0, 1, 2], [3, 4, 5]]


def test_tensor_pickling_for_multiprocessing():
    from multiprocessing.reduction import ForkingPickler
    import pickle

    leaf = glasstorch.tensor([1.0, 2.0], requires_grad=True)
    copy = pickle.loads(ForkingPickler.dumps(leaf))
    assert copy.requires_grad and copy.is_leaf and copy.dtype is glasstorch.float32
    np.testing.assert_array_equal(copy.detach().numpy(), [1.0, 2.0])
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor"):
        ForkingPickler.dumps(leaf * 2)


# --- the digits dataset ---------------------------------------------------------------

def test_load_digits():
    images, labels = glasstorch.datasets.load_digits()
    assert images.shape == (1797, 8, 8) and images.dtype == np.uint8
    assert labels.shape == (1797,) and labels.dtype == np.int64
    assert images.min() == 0 and images.max() == 16
    assert np.bincount(labels).tolist() == [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]


def test_digits_dataset():
    train, test = glasstorch.datasets.Digits(train=True), glasstorch.datasets.Digits(train=False)
    images, labels = glasstorch.datasets.load_digits()
    assert len(train) + len(test) == 1797 and len(test) == 297
    x, y = test[0]
    assert tuple(x.shape) == (1, 8, 8) and x.dtype is glasstorch.float32 and isinstance(y, int)
    np.testing.assert_allclose(x.numpy()[0], images[1500] / 16)
    assert y == labels[1500]
    assert set(np.unique(test.targets.numpy())) == set(range(10))  # every class in the test split
    x.mul_(0)  # samples are copies: the dataset is unchanged
    np.testing.assert_allclose(test[0][0].numpy()[0], images[1500] / 16)

    xb, yb = next(iter(gdata.DataLoader(train, batch_size=32, shuffle=True)))
    assert tuple(xb.shape) == (32, 1, 8, 8) and yb.dtype is glasstorch.int64
    assert 0.0 <= float(xb.min()) and float(xb.max()) <= 1.0

    flat = glasstorch.datasets.Digits(train=False, transform=lambda t: t.reshape(-1), target_transform=str)
    assert tuple(flat[0][0].shape) == (64,) and flat[0][1] == str(labels[1500])


# --- the examples in the docstrings run -------------------------------------------

@pytest.mark.parametrize("module", [
    "glasstorch.utils.data._utils.collate",
    "glasstorch.utils.data.dataset",
    "glasstorch.utils.data.sampler",
    "glasstorch.utils.data.dataloader",
    "glasstorch.datasets.digits",
])
def test_docstring_examples(module):
    import importlib

    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


def test_random_sampler_with_replacement_draws_lazily_like_torch():
    """makemore's InfiniteDataLoader: RandomSampler(replacement=True, num_samples=int(1e10)). torch draws
    32 indices at a time; drawing all of them first would need 80 GB."""
    import itertools
    from glasstorch.utils.data import RandomSampler
    sampler = RandomSampler(range(5), replacement=True, num_samples=int(1e10))
    first = list(itertools.islice(iter(sampler), 100))
    assert len(first) == 100 and set(first) <= set(range(5))
    assert len(sampler) == int(1e10)
    assert len(list(RandomSampler(range(5), replacement=True, num_samples=70))) == 70   # 2 chunks + 6


def test_a_subset_of_indices_indexes_a_tensor_as_in_torch():
    """Step-by-Step's index_splitter: random_split(torch.arange(n), ...) gives Subsets, and the book
    indexes x_tensor[train_idx] with them. torch treats a non-tuple sequence as one index when it has
    32 elements or more (or only plain numbers), else a shorter one holding tensors as a tuple of
    indices (with a deprecation warning); assignment too."""
    class Pair:                                    # any class with __len__ and __getitem__
        def __len__(self):
            return 2

        def __getitem__(self, i):
            if i >= 2:
                raise IndexError(i)
            return i

    def run(lib):
        x = lib.arange(100.).reshape(50, 2)
        big = lib.utils.data.Subset(lib.arange(50), list(range(49, 9, -1)))
        out = [x[big].tolist(), x[Pair()].tolist()]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out.append(lib.arange(2500.).reshape(50, 50)[lib.utils.data.Subset(lib.arange(50), [3, 4])].item())
        out.append([str(w.message)[:40] for w in caught])
        y = x.clone()
        y[big] = 0.0
        return out + [y.sum().item()]
    assert run(glasstorch) == run(torch)


def test_loader_and_sampler_seeds_are_drawn_as_torch_draws_them(monkeypatch):
    """torch seeds a shuffling sampler and a loader's workers with empty((), int64).random_(), never
    torch.randint: a program that replaces or counts randint's draws sees the same ones as with torch."""
    def no_randint(*args, **kwargs):
        raise AssertionError("the loader drew its seed with randint")
    monkeypatch.setattr(glasstorch, "randint", no_randint)
    glasstorch.manual_seed(3)
    first = [b.tolist() for b in gdata.DataLoader(glasstorch.arange(10), batch_size=5, shuffle=True)]
    glasstorch.manual_seed(3)
    again = [b.tolist() for b in gdata.DataLoader(glasstorch.arange(10), batch_size=5, shuffle=True)]
    assert first == again and sorted(sum(first, [])) == list(range(10))
