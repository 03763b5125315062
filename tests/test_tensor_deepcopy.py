"""``copy.deepcopy`` of tensors that share memory: torch deep-copies the storage through the memo, so
the copies share memory as the originals did (a write into one copy shows in the other), each with
its own offset and strides -- checked against torch for views, transposes, strided and expanded
views, in either order, and for an F-ordered tensor alone."""
import copy

import pytest
import torch

import glasstorch as gt


def _x(lib):
    return lib.arange(12.).reshape(3, 4)


GROUPS = {
    "x, x[1:]": lambda x: [x, x[1:]],
    "x[1:], x": lambda x: [x[1:], x],
    "x.t(), x": lambda x: [x.t(), x],
    "even and odd columns": lambda x: [x[:, ::2], x[:, 1::2]],
    "a column, x": lambda x: [x[:, 1], x],
    "expanded row, x": lambda x: [x[0].expand(3, 4), x],
    "dict of a flat slice and x": lambda x: {"a": x.view(-1)[3:7], "b": x},
    "a tuple inside a list": lambda x: [(x[2:], 1), x[1]],
}


def _copied(lib, name):
    x = _x(lib)
    c = copy.deepcopy(GROUPS[name](x))
    flat = list(c.values()) if isinstance(c, dict) else [v[0] if isinstance(v, tuple) else v for v in c]
    flat[0].fill_(-1.0)                      # (the write must show wherever the copies share memory)
    return ([v.tolist() for v in flat], [v.stride() for v in flat], [v.storage_offset() for v in flat],
            [v.is_contiguous() for v in flat], x.tolist())      # (the originals untouched)


@pytest.mark.parametrize("name", GROUPS)
def test_deep_copies_share_memory_as_torchs(name):
    assert _copied(gt, name) == _copied(torch, name)


def test_a_lone_tensor_keeps_its_layout_and_owns_its_memory():
    def layout(lib):
        f = lib.ones(3, 2).t().contiguous().t()
        c = copy.deepcopy(f)
        c.fill_(2.0)
        return c.stride(), c.is_contiguous(), f.tolist()
    assert layout(gt) == layout(torch)
    x = gt.ones(4)
    assert copy.deepcopy(x)._data.base is None    # (the common case: a copy, not a view of one)


def test_separate_deepcopies_do_not_share():
    x = gt.arange(4.)
    a, b = copy.deepcopy(x), copy.deepcopy(x[1:])
    a.fill_(0.0)
    assert b.tolist() == [1.0, 2.0, 3.0]


def _subclass_copies(lib):
    class Plain(lib.Tensor):
        pass

    class Logged(lib.Tensor):
        log = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            cls.log.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs or {})

    class WithNewEmpty(lib.Tensor):
        def new_empty(self, *args, **kwargs):
            return lib.Tensor.new_empty(self, *args, **kwargs).as_subclass(WithNewEmpty)

    class Disabled(lib.Tensor):
        __torch_function__ = lib._C._disabled_torch_function_impl

    out = []
    for cls in (Plain, Logged, WithNewEmpty, Disabled):
        try:
            c = copy.deepcopy(lib.ones(2).as_subclass(cls))
            out.append((type(c).__name__, c.tolist(), c._version))
        except RuntimeError as e:
            out.append(("RuntimeError", str(e)))
    return out, Logged.log, type(copy.deepcopy(lib.nn.Parameter(lib.ones(2)))).__name__


def test_a_subclass_is_deep_copied_only_through_its_new_empty_as_in_torch():
    """torch makes the copy with ``new_empty``: a subclass whose new_empty gives a plain tensor is
    refused (Parameter has its own __deepcopy__)."""
    assert _subclass_copies(gt) == _subclass_copies(torch)
