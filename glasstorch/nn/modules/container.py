r"""Containers: modules whose job is to hold other modules or parameters so
that they are registered (seen by ``parameters()``, ``state_dict()``, ``to()``...).

A Python list or dict of layers assigned to ``self`` is *not* registered:
``__setattr__`` only recognises a ``Module`` or a ``Parameter``.  Wrap it in
``ModuleList`` / ``ModuleDict`` / ``ParameterList`` / ``ParameterDict``.  Each
container stores its entries in the ordinary registries under string keys
(``"0"``, ``"1"``, ... for the lists), which is why the state-dict keys of
``Sequential(Linear, ReLU, Linear)`` are ``"0.weight"``, ``"2.weight"``.
"""

import operator
from collections import OrderedDict
from collections import abc as container_abcs
from itertools import chain, islice

from glasstorch._tensor import Tensor
from glasstorch.nn.parameter import Parameter

from .module import Module, _addindent, _typename

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]


def _abs_index(idx, size: int) -> int:
    """``idx`` as a non-negative position, with IndexError for out of range (like a list)."""
    idx = operator.index(idx)
    if not (-size <= idx < size):
        raise IndexError(f"index {idx} is out of range")
    return idx % size


class Sequential(Module):
    r"""A sequential container: ``forward`` feeds its input to the first module,
    each output to the next, and returns the last output.

    Modules are added in the order passed to the constructor, or as an
    ``OrderedDict`` of named modules::

        model = nn.Sequential(nn.Conv2d(1, 20, 5), nn.ReLU(), nn.Conv2d(20, 64, 5), nn.ReLU())

        model = nn.Sequential(OrderedDict([
            ("conv1", nn.Conv2d(1, 20, 5)),
            ("relu1", nn.ReLU()),
        ]))

    Unlike :class:`ModuleList` (a list of modules, no ``forward``), the
    modules of a ``Sequential`` are connected in a cascade.  Indexing by an int
    returns a module, by a slice a new ``Sequential`` sharing the modules.
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _get_item_by_idx(self, iterator, idx):
        """Get the idx-th item of the iterator."""
        idx = _abs_index(idx, len(self))
        return next(islice(iterator, idx, None))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(OrderedDict(list(self._modules.items())[idx]))
        return self._get_item_by_idx(self._modules.values(), idx)

    def __setitem__(self, idx: int, module: Module) -> None:
        key: str = self._get_item_by_idx(self._modules.keys(), idx)
        return setattr(self, key, module)

    def __delitem__(self, idx) -> None:
        if isinstance(idx, slice):
            for key in list(self._modules.keys())[idx]:
                delattr(self, key)
        else:
            key = self._get_item_by_idx(self._modules.keys(), idx)
            delattr(self, key)
        # renumber so the keys stay "0", "1", ... (named keys become numbers too, as in torch)
        str_indices = [str(i) for i in range(len(self._modules))]
        self._modules = OrderedDict(zip(str_indices, self._modules.values(), strict=True))

    def __len__(self) -> int:
        return len(self._modules)

    def __add__(self, other) -> "Sequential":
        if isinstance(other, Sequential):
            ret = Sequential()
            for layer in self:
                ret.append(layer)
            for layer in other:
                ret.append(layer)
            return ret
        raise ValueError(
            f"add operator supports only objects of Sequential class, but {str(type(other))} is given."
        )

    def pop(self, key):
        """Remove the module at ``key`` and return it."""
        v = self[key]
        del self[key]
        return v

    def __iadd__(self, other):
        if isinstance(other, Sequential):
            offset = len(self)
            for i, module in enumerate(other):
                self.add_module(str(i + offset), module)
            return self
        raise ValueError(
            f"add operator supports only objects of Sequential class, but {str(type(other))} is given."
        )

    def __mul__(self, other: int) -> "Sequential":
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        combined = Sequential()
        offset = 0
        for _ in range(other):
            for module in self:  # the same module objects, repeated (shared parameters)
                combined.add_module(str(offset), module)
                offset += 1
        return combined

    def __rmul__(self, other: int) -> "Sequential":
        return self.__mul__(other)

    def __imul__(self, other: int):
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        len_original = len(self)
        offset = len(self)
        for _ in range(other - 1):
            for i in range(len_original):
                self.add_module(str(i + offset), self._modules[str(i)])
            offset += len_original
        return self

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def __iter__(self):
        return iter(self._modules.values())

    def forward(self, input):
        for module in self:
            input = module(input)
        return input

    def append(self, module: Module) -> "Sequential":
        r"""Append a given module to the end."""
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module) -> "Sequential":
        r"""Insert ``module`` before position ``index`` (negative counts from the end)."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not (-n <= index <= n):
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        return self

    def extend(self, sequential) -> "Sequential":
        r"""Append every module of an iterable (e.g. another Sequential)."""
        for layer in sequential:
            self.append(layer)
        return self


class ModuleList(Module):
    r"""Holds submodules in a list.

    Indexable like a Python list, but the modules it contains are registered
    and visible to all :class:`Module` methods::

        class MyModule(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.linears = nn.ModuleList([nn.Linear(10, 10) for i in range(10)])

            def forward(self, x):
                for l in self.linears:
                    x = l(x)
                return x

    Its repr compresses runs of identical entries: ``(0-9): 10 x Linear(...)``.
    """

    def __init__(self, modules=None) -> None:
        super().__init__()
        if modules is not None:
            self += modules

    def _get_abs_string_index(self, idx):
        """Get the absolute index for the list of modules, as the registry key."""
        return str(_abs_index(idx, len(self)))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(list(self._modules.values())[idx])
        return self._modules[self._get_abs_string_index(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        idx = self._get_abs_string_index(idx)
        return setattr(self, str(idx), module)

    def __delitem__(self, idx) -> None:
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, self._get_abs_string_index(idx))
        # renumber so the keys stay "0", "1", ...
        str_indices = [str(i) for i in range(len(self._modules))]
        self._modules = OrderedDict(zip(str_indices, self._modules.values(), strict=True))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other) -> "ModuleList":
        combined = ModuleList()
        for i, module in enumerate(chain(self, other)):
            combined.add_module(str(i), module)
        return combined

    def __repr__(self) -> str:
        """Like Module's repr, but a run of entries with equal reprs prints once
        as ``(start-end): n x <repr>``."""
        list_of_reprs = [repr(item) for item in self]
        if len(list_of_reprs) == 0:
            return self._get_name() + "()"

        start_end_indices = [[0, 0]]
        repeated_blocks = [list_of_reprs[0]]
        for i, r in enumerate(list_of_reprs[1:], 1):
            if r == repeated_blocks[-1]:
                start_end_indices[-1][1] += 1
                continue
            start_end_indices.append([i, i])
            repeated_blocks.append(r)

        lines = []
        main_str = self._get_name() + "("
        for (start_id, end_id), b in zip(start_end_indices, repeated_blocks, strict=True):
            local_repr = f"({start_id}): {b}"
            if start_id != end_id:
                n = end_id - start_id + 1
                local_repr = f"({start_id}-{end_id}): {n} x {b}"
            lines.append(_addindent(local_repr, 2))

        main_str += "\n  " + "\n  ".join(lines) + "\n"
        main_str += ")"
        return main_str

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def insert(self, index: int, module: Module) -> None:
        r"""Insert a given module before a given index in the list."""
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def append(self, module: Module) -> "ModuleList":
        r"""Append a given module to the end of the list."""
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key):
        """Remove the module at ``key`` and return it."""
        v = self[key]
        del self[key]
        return v

    def extend(self, modules) -> "ModuleList":
        r"""Append modules from a Python iterable to the end of the list."""
        if not isinstance(modules, container_abcs.Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got " + type(modules).__name__)
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self


def _update_pairs(container, kind: str, values) -> None:
    """``container[k] = v`` for each ``(k, v)`` of an iterable of pairs, with
    the dict-style errors of ``ModuleDict.update`` / ``ParameterDict.update``."""
    for j, m in enumerate(values):
        if not isinstance(m, container_abcs.Iterable):
            raise TypeError(f"{kind} update sequence element #{j} should be Iterable; is" + type(m).__name__)
        if not len(m) == 2:
            raise ValueError(f"{kind} update sequence element #{j} has length {len(m)}; 2 is required")
        container[m[0]] = m[1]


class ModuleDict(Module):
    r"""Holds submodules in a dictionary (ordered by insertion).

    Indexable like a Python dict, but the modules it contains are registered::

        self.choices = nn.ModuleDict({"conv": nn.Conv2d(10, 10, 3), "pool": nn.MaxPool2d(3)})
        self.activations = nn.ModuleDict([["lrelu", nn.LeakyReLU()], ["prelu", nn.PReLU()]])

    ``update`` keeps the order of an ``OrderedDict``, a ``dict``, another
    ``ModuleDict`` or an iterable of pairs.
    """

    def __init__(self, modules=None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def clear(self) -> None:
        """Remove all items from the ModuleDict."""
        self._modules.clear()

    def pop(self, key: str) -> Module:
        r"""Remove key from the ModuleDict and return its module."""
        v = self[key]
        del self[key]
        return v

    def keys(self):
        r"""Return an iterable of the ModuleDict keys."""
        return self._modules.keys()

    def items(self):
        r"""Return an iterable of the ModuleDict key/value pairs."""
        return self._modules.items()

    def values(self):
        r"""Return an iterable of the ModuleDict values."""
        return self._modules.values()

    def update(self, modules) -> None:
        r"""Update the ModuleDict from a mapping or an iterable of ``(key, module)``
        pairs, overwriting existing keys."""
        if not isinstance(modules, container_abcs.Iterable):
            raise TypeError(
                "ModuleDict.update should be called with an iterable of key/value pairs, but got "
                + type(modules).__name__
            )
        if isinstance(modules, (OrderedDict, ModuleDict, container_abcs.Mapping)):
            for key, module in modules.items():
                self[key] = module
        else:
            _update_pairs(self, "ModuleDict", modules)

    # forward is left unimplemented: a dict of modules has no single computation


def _tensor_entry_repr(p, type_name: str) -> str:
    """``'Parameter containing: [torch.float32 of size 3x4]'`` for the container reprs."""
    size_str = "x".join(str(size) for size in p.size())
    device_str = f" ({p.device})" if p.device.type == "cuda" else ""
    kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
    return f"{kind} containing: [{type_name} of size {size_str}{device_str}]"


class ParameterList(Module):
    r"""Holds parameters in a list.

    Used like a Python list; tensors stored in it become :class:`Parameter` s
    (the constructor, item assignment, ``append`` and ``extend`` convert any
    tensor) and are registered under ``"0"``, ``"1"``, ...  Other objects are
    stored as plain attributes::

        self.params = nn.ParameterList([nn.Parameter(torch.randn(10, 10)) for i in range(10)])
    """

    def __init__(self, values=None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _get_abs_string_index(self, idx):
        """Get the absolute index for the list, as the attribute name."""
        return str(_abs_index(idx, len(self)))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            start, stop, step = idx.indices(len(self))
            out = self.__class__()
            for i in range(start, stop, step):
                out.append(self[i])
            return out
        idx = self._get_abs_string_index(idx)
        return getattr(self, str(idx))

    def __setitem__(self, idx: int, param) -> None:
        # entries are attributes: a Parameter is registered by __setattr__,
        # anything else becomes a plain attribute
        idx = self._get_abs_string_index(idx)
        if isinstance(param, Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        return setattr(self, str(idx), param)

    def __len__(self) -> int:
        return self._size

    def __iter__(self):
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters):
        return self.extend(parameters)

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def append(self, value) -> "ParameterList":
        """Append a given value at the end of the list."""
        new_idx = len(self)
        self._size += 1
        self[new_idx] = value
        return self

    def extend(self, values) -> "ParameterList":
        """Append values from a Python iterable to the end of the list."""
        # a tensor is iterable, but extending by its rows is never what is meant
        if not isinstance(values, container_abcs.Iterable) or isinstance(values, Tensor):
            raise TypeError("ParameterList.extend should be called with an iterable, but got " + type(values).__name__)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        child_lines = []
        for k, p in enumerate(self):
            if isinstance(p, Tensor):
                child_lines.append("  (" + str(k) + "): " + _tensor_entry_repr(p, str(p.dtype)))
            else:
                child_lines.append("  (" + str(k) + "): Object of type: " + type(p).__name__)
        return "\n".join(child_lines)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    r"""Holds parameters in a dictionary (ordered by insertion).

    Used like a Python dict; tensors stored in it become :class:`Parameter` s
    and are registered under their key.  ``update`` with a plain ``dict``
    inserts its keys in sorted order (an ``OrderedDict``, another
    ``ParameterDict`` or an iterable of pairs keeps its order)::

        self.params = nn.ParameterDict({"left": nn.Parameter(torch.randn(5, 10)),
                                        "right": nn.Parameter(torch.randn(5, 10))})
    """

    def __init__(self, parameters=None) -> None:
        super().__init__()
        self._keys: dict = {}  # a dict used as an ordered set of the keys
        if parameters is not None:
            self.update(parameters)

    def _key_to_attr(self, key: str) -> str:
        if not isinstance(key, str):
            raise TypeError(
                "Index given to ParameterDict cannot be used as a key as it is "
                f"not a string (type is '{type(key).__name__}'). Open an issue on "
                "github if you need non-string keys."
            )
        return key

    def __getitem__(self, key: str):
        attr = self._key_to_attr(key)
        return getattr(self, attr)

    def __setitem__(self, key: str, value) -> None:
        self._keys[key] = None
        attr = self._key_to_attr(key)
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, attr, value)

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        attr = self._key_to_attr(key)
        delattr(self, attr)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(self._keys)

    def copy(self) -> "ParameterDict":
        """Return a copy of this ParameterDict (sharing the parameters)."""
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def __contains__(self, key: str) -> bool:
        return key in self._keys

    def setdefault(self, key: str, default=None):
        """Return ``self[key]``, first inserting ``default`` if ``key`` is missing."""
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        """Remove all items from the ParameterDict."""
        for k in self._keys.copy():
            del self[k]

    def pop(self, key: str):
        r"""Remove key from the ParameterDict and return its parameter."""
        v = self[key]
        del self[key]
        return v

    def popitem(self):
        """Remove and return the last inserted ``(key, parameter)`` pair."""
        k, _ = self._keys.popitem()
        # restore the key so that `del self[k]` finds it
        self._keys[k] = None
        val = self[k]
        del self[k]
        return k, val

    def get(self, key: str, default=None):
        r"""Return the parameter for ``key`` if present, else ``default``."""
        return self[key] if key in self else default

    def fromkeys(self, keys, default=None) -> "ParameterDict":
        r"""Return a new ParameterDict with the given keys, all set to ``default``."""
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        r"""Return an iterable of the ParameterDict keys."""
        return self._keys.keys()

    def items(self):
        r"""Return an iterable of the ParameterDict key/value pairs."""
        return ((k, self[k]) for k in self._keys)

    def values(self):
        r"""Return an iterable of the ParameterDict values."""
        return (self[k] for k in self._keys)

    def update(self, parameters) -> None:
        r"""Update the ParameterDict from a mapping or an iterable of ``(key, value)``
        pairs, overwriting existing keys."""
        if not isinstance(parameters, container_abcs.Iterable):
            raise TypeError(
                "ParametersDict.update should be called with an iterable of key/value pairs, but got "
                + type(parameters).__name__
            )
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            for key, parameter in parameters.items():
                self[key] = parameter
        elif isinstance(parameters, container_abcs.Mapping):
            for key, parameter in sorted(parameters.items()):
                self[key] = parameter
        else:
            _update_pairs(self, "ParameterDict", parameters)

    def extra_repr(self) -> str:
        child_lines = []
        for k, p in self.items():
            if isinstance(p, Tensor):
                # torch prints the legacy type name here ("torch.FloatTensor")
                child_lines.append("  (" + str(k) + "): " + _tensor_entry_repr(p, _typename(p)))
            else:
                child_lines.append("  (" + str(k) + "): Object of type: " + type(p).__name__)
        return "\n".join(child_lines)

    def __call__(self, input):
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other: "ParameterDict") -> "ParameterDict":
        copy = self.copy()
        copy.update(other)
        return copy

    def __ror__(self, other: "ParameterDict") -> "ParameterDict":
        copy = other.copy()
        copy.update(self)
        return copy

    def __ior__(self, other: "ParameterDict"):
        self.update(other)
        return self
