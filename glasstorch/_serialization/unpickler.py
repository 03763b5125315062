"""Reading ``data.pkl``: a pickle interpreter that runs nothing it was not told it may run.

A pickle is a program for a small stack machine. Two of its instructions make loading one as
dangerous as running it: GLOBAL imports any name (``os.system``) and REDUCE calls what is on the
stack with arguments from the file. ``torch.load(weights_only=True)`` answers with its own
interpreter that looks every GLOBAL up in an allowlist and lets REDUCE, NEWOBJ and BUILD act only
on what came from there. :class:`WeightsUnpickler` is that interpreter here: one small method per
opcode, and an allowlist (:func:`allowed_globals`) that maps torch's names onto glasstorch.

``weights_only=False`` uses :class:`FullUnpickler`, the standard library's unpickler: it runs
whatever the file says (torch's contract too: only for files you trust), but torch's names still
resolve to glasstorch's objects.
"""
import functools
import io
import pickle
from collections import Counter, OrderedDict
from struct import error as StructError, unpack

from . import rebuild, tensors
from .names import DTYPE_OF_STORAGE, STORAGE_OF_DTYPE, UNSUPPORTED_STORAGES, StorageType

UnpicklingError = pickle.UnpicklingError


class Refused(UnpicklingError):
    """The file asks for something the allowlist does not admit (as opposed to a damaged file)."""

# Modules never allowed, even when a user allowlists one of their names (torch's list).
BLOCKED_MODULES = ("sys", "os", "posix", "nt")


def _bytearray(data=b""):
    # torch allowlists bytearray for pickled bytearrays; an int argument would allocate that many bytes.
    if not isinstance(data, (bytes, bytearray)):
        raise UnpicklingError(f"corrupted checkpoint: bytearray of {type(data).__name__}")
    return bytearray(data)


def _encode(text, encoding="latin1"):
    # Protocol 2 pickles bytes as _codecs.encode(str, 'latin1'); nothing else is needed.
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise UnpicklingError(f"corrupted checkpoint: _codecs.encode({type(text).__name__}, {encoding!r})")
    return text.encode("latin1")


@functools.cache
def allowed_globals():
    """The names a weights-only load may use, and what each is here (torch's allowlist)."""
    table = {
        "collections.OrderedDict": OrderedDict,
        "collections.Counter": Counter,
        "builtins.set": set,
        "builtins.bytearray": _bytearray,
        "builtins.complex": complex,
        "_codecs.encode": _encode,
        "torch._utils._rebuild_tensor": rebuild.rebuild_tensor,
        "torch._utils._rebuild_tensor_v2": rebuild.rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": rebuild.rebuild_tensor_v3,
        "torch._utils._rebuild_parameter": rebuild.rebuild_parameter,
        "torch._utils._rebuild_meta_tensor_no_storage": rebuild.rebuild_meta_tensor_no_storage,
        "torch._utils._rebuild_parameter_with_state": rebuild.rebuild_parameter_with_state,
        "torch._tensor._rebuild_from_type_v2": rebuild.rebuild_from_type_v2,
        "torch.serialization._get_layout": rebuild.get_layout,
        "torch.Size": tensors.size,
        "torch.device": tensors.device,
        "torch.Tensor": tensors.tensor_type("Tensor"),
        "torch.nn.parameter.Parameter": tensors.tensor_type("Parameter"),
        "torch.storage.UntypedStorage": StorageType("torch.storage.UntypedStorage", None),
    }
    for dtype_name in STORAGE_OF_DTYPE:
        table[f"torch.{dtype_name}"] = tensors.dtype(dtype_name)
    for storage_name, dtype_name in DTYPE_OF_STORAGE.items():
        table[f"torch.{storage_name}"] = StorageType(f"torch.{storage_name}", dtype_name)
    for storage_name in UNSUPPORTED_STORAGES:
        table[f"torch.{storage_name}"] = rebuild.unsupported(f"torch.{storage_name}", "a storage type NumPy lacks")
    for torch_name, what in rebuild.UNSUPPORTED_REBUILDS.items():
        table[torch_name] = rebuild.unsupported(torch_name, what)
    return table


@functools.cache
def _callable_ids():
    """What REDUCE may call: the allowlisted functions and constructors, not dtypes, storage types
    or the Tensor/Parameter classes (those only serve as arguments)."""
    not_callable = (StorageType, tensors.tensor_type("Tensor"), tensors.tensor_type("Parameter"))
    return {id(value) for value in allowed_globals().values()
            if callable(value) and value not in not_callable and not isinstance(value, StorageType)}


# --- globals users allowlist: torch.serialization.add_safe_globals & co. ------------------------

_user_globals = set()


def _user_allowed():
    """``{"module.qualname": obj}`` for the objects users marked safe."""
    table = {}
    for entry in _user_globals:
        if isinstance(entry, tuple):
            if len(entry) != 2:
                raise ValueError(f"Expected tuple of length 2 (global, str of callable full path), "
                                 f"but got tuple of length: {len(entry)}")
            obj, name = entry
            if not isinstance(name, str):
                raise TypeError(f"Expected second item in tuple to be str of callable full path, "
                                f"but got: {type(name)}")
            table[name] = obj
        else:
            table[f"{entry.__module__}.{entry.__qualname__}"] = entry
    return table


def add_safe_globals(safe_globals):
    """Mark globals (classes, functions, or ``(obj, "module.name")``) as safe for ``weights_only`` loads."""
    _user_globals.update(safe_globals)


def get_safe_globals():
    return list(_user_globals)


def clear_safe_globals():
    _user_globals.clear()


class safe_globals:
    """Context manager that marks globals safe for ``weights_only`` loads inside the ``with`` block."""

    def __init__(self, safe_globals):
        self.safe_globals = list(safe_globals)

    def __enter__(self):
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc):
        _user_globals.difference_update(self.safe_globals)


# --- the weights-only interpreter ----------------------------------------------------------------

def _unsupported_global_message(full_path):
    # torch shows builtins by their bare name ("GLOBAL open")
    if full_path.startswith("builtins."):
        full_path = full_path[len("builtins."):]
    return (f"Unsupported global: GLOBAL {full_path} was not an allowed global by default. Please use "
            f"`torch.serialization.add_safe_globals([{full_path}])` or the "
            f"`torch.serialization.safe_globals([{full_path}])` context manager to allowlist this global "
            "if you trust this class/function.")


def find_allowed(module, name):
    """The object the global ``module.name`` stands for in a weights-only load, or UnpicklingError."""
    if module == "__builtin__":  # Python 2 pickles
        module = "builtins"
    full_path = f"{module}.{name}"
    if module in BLOCKED_MODULES:
        raise Refused(f"Trying to load unsupported GLOBAL {full_path} whose module {module} is blocked.")
    table = allowed_globals()
    if full_path in table:
        return table[full_path]
    user = _user_allowed()
    if full_path in user:
        return user[full_path]
    raise Refused(_unsupported_global_message(full_path))


class WeightsUnpickler:
    """Unpickles ``file`` (read, readline) allowing only the allowlisted globals.

    ``persistent_load(pid)`` turns a storage reference ``('storage', ...)`` into a LoadedStorage.
    Containers are limited as in torch: APPEND only to lists, SETITEM only to dicts, BUILD only on
    OrderedDicts and allowlisted user classes.
    """

    def __init__(self, file, persistent_load, *, encoding="utf-8"):
        self.read, self.readline = file.read, file.readline
        self.persistent_load = persistent_load
        self.encoding = encoding

    def load(self):
        self.stack, self.metastack, self.memo = [], [], {}
        self._user = _user_allowed()
        while True:
            opcode = self.read(1)
            if not opcode:
                raise UnpicklingError("corrupted checkpoint: pickle data was truncated")
            if opcode == pickle.STOP:
                return self.stack.pop()
            handler = _DISPATCH.get(opcode[0])
            if handler is None:
                raise UnpicklingError(f"corrupted checkpoint: Unsupported operand {opcode[0]} (a damaged pickle, "
                                      "or an opcode torch's weights-only loader does not take either)")
            try:
                handler(self)
            except (UnpicklingError, RuntimeError):
                raise
            except (IndexError, KeyError, TypeError, ValueError, AttributeError, OverflowError, StructError,
                    UnicodeDecodeError) as error:
                # a stack underflow, a missing memo entry, wrong arguments to a rebuild function...
                raise UnpicklingError(f"corrupted checkpoint: the pickle breaks at opcode {opcode!r}: "
                                      f"{type(error).__name__}: {error}") from None

    # reading operands
    def _exact(self, n):
        data = self.read(n)
        if len(data) != n:
            raise UnpicklingError("corrupted checkpoint: pickle data was truncated")
        return data

    def _unpack(self, fmt, n):
        return unpack(fmt, self._exact(n))[0]

    def _line(self):
        line = self.readline()
        if not line.endswith(b"\n"):
            raise UnpicklingError("corrupted checkpoint: pickle data was truncated")
        return line[:-1].decode("utf-8")

    def _push(self, value):
        self.stack.append(value)

    def _pop_mark(self):
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    # structure
    def proto(self):
        self._exact(1)

    def frame(self):
        self._exact(8)  # protocol 4 frames only group opcodes; the file is read sequentially anyway

    def mark(self):
        self.metastack.append(self.stack)
        self.stack = []

    def pop(self):
        self.stack.pop()

    def pop_mark(self):
        self._pop_mark()

    def dup(self):
        self._push(self.stack[-1])

    # plain values
    def none(self): self._push(None)
    def newtrue(self): self._push(True)
    def newfalse(self): self._push(False)
    def binint(self): self._push(self._unpack("<i", 4))
    def binint1(self): self._push(self._exact(1)[0])
    def binint2(self): self._push(self._unpack("<H", 2))
    def long1(self): self._push(int.from_bytes(self._exact(self._exact(1)[0]), "little", signed=True))
    def binfloat(self): self._push(self._unpack(">d", 8))

    def long4(self):
        n = self._unpack("<i", 4)
        if n < 0:
            raise UnpicklingError("corrupted checkpoint: LONG pickle has negative byte count")
        self._push(int.from_bytes(self._exact(n), "little", signed=True))

    def _text(self, n):
        return str(self._exact(n), "utf-8", "surrogatepass")

    def binunicode(self): self._push(self._text(self._unpack("<I", 4)))
    def short_binunicode(self): self._push(self._text(self._exact(1)[0]))
    def binunicode8(self): self._push(self._text(self._unpack("<Q", 8)))
    def binbytes(self): self._push(self._exact(self._unpack("<I", 4)))
    def short_binbytes(self): self._push(self._exact(self._exact(1)[0]))
    def binbytes8(self): self._push(self._exact(self._unpack("<Q", 8)))
    def bytearray8(self): self._push(bytearray(self._exact(self._unpack("<Q", 8))))

    def _py2_string(self, n):  # Python 2 str: text in the load's encoding, or bytes
        data = self._exact(n)
        self._push(data if self.encoding == "bytes" else data.decode(self.encoding))

    def short_binstring(self): self._py2_string(self._exact(1)[0])

    def binstring(self):
        n = self._unpack("<i", 4)
        if n < 0:
            raise UnpicklingError("corrupted checkpoint: BINSTRING pickle has negative byte count")
        self._py2_string(n)

    # containers
    def empty_tuple(self): self._push(())
    def tuple(self): self._push(tuple(self._pop_mark()))
    def tuple1(self): self.stack[-1] = (self.stack[-1],)
    def tuple2(self): self.stack[-2:] = [(self.stack[-2], self.stack[-1])]
    def tuple3(self): self.stack[-3:] = [(self.stack[-3], self.stack[-2], self.stack[-1])]
    def empty_list(self): self._push([])
    def empty_dict(self): self._push({})
    def empty_set(self): self._push(set())
    def frozenset(self): self._push(frozenset(self._pop_mark()))

    def _target(self, kinds, what):
        target = self.stack[-1]
        if type(target) not in kinds:
            raise Refused(f"Can only {what}, but got {type(target)}")
        return target

    def append(self):
        item = self.stack.pop()
        self._target((list,), "append to lists").append(item)

    def appends(self):
        items = self._pop_mark()
        self._target((list,), "extend lists").extend(items)

    def setitem(self):
        value, key = self.stack.pop(), self.stack.pop()
        self._target((dict, OrderedDict, Counter), "SETITEM for dict, collections.OrderedDict, "
                                                   "collections.Counter")[key] = value

    def setitems(self):
        items = self._pop_mark()
        target = self._target((dict, OrderedDict, Counter), "SETITEMS for dict, collections.OrderedDict, "
                                                            "collections.Counter")
        if len(items) % 2:
            raise UnpicklingError("corrupted checkpoint: SETITEMS needs key/value pairs")
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]

    def additems(self):
        items = self._pop_mark()
        self._target((set,), "add items to sets").update(items)

    # memo
    def binput(self): self.memo[self._exact(1)[0]] = self.stack[-1]
    def long_binput(self): self.memo[self._unpack("<I", 4)] = self.stack[-1]
    def memoize(self): self.memo[len(self.memo)] = self.stack[-1]

    def _get(self, index):
        if index not in self.memo:
            raise UnpicklingError(f"corrupted checkpoint: Memo value not found at index {index}")
        self._push(self.memo[index])

    def binget(self): self._get(self._exact(1)[0])
    def long_binget(self): self._get(self._unpack("<I", 4))

    # the risky ones: names, calls, object construction, external references
    def global_(self):
        module, name = self._line(), self._line()
        self._push(find_allowed(module, name))

    def stack_global(self):
        name, module = self.stack.pop(), self.stack.pop()
        if not isinstance(name, str) or not isinstance(module, str):
            raise UnpicklingError("corrupted checkpoint: STACK_GLOBAL requires str")
        self._push(find_allowed(module, name))

    def _user_class(self, obj):
        return any(obj is allowed for allowed in self._user.values())

    def reduce(self):
        args = self.stack.pop()
        func = self.stack[-1]
        if id(func) not in _callable_ids() and not self._user_class(func):
            message = f"Trying to call reduce for unrecognized function {func!r}"
            if hasattr(func, "__self__"):
                message += f" which belongs to {func.__self__!r}"
            raise Refused(message)
        if not isinstance(args, tuple):
            raise UnpicklingError(f"corrupted checkpoint: REDUCE arguments must be a tuple, got {type(args).__name__}")
        self.stack[-1] = func(*args)

    def newobj(self):
        args = self.stack.pop()
        cls = self.stack.pop()
        parameter = tensors.tensor_type("Parameter")
        if cls is parameter and parameter is not tensors.tensor_type("Tensor"):
            # Parameter.__new__(Parameter, data, requires_grad=True)
            self._push(rebuild.rebuild_parameter(args[0], args[1] if len(args) > 1 else True, None))
        elif cls in (OrderedDict, Counter) or (isinstance(cls, type) and self._user_class(cls)):
            self._push(cls.__new__(cls, *args))
        else:
            raise Refused("Can only create new object for nn.Parameter or classes allowlisted "
                                  f"via `add_safe_globals` but got {cls!r}")

    def build(self):
        state = self.stack.pop()
        inst = self.stack[-1]
        if type(inst) is OrderedDict:  # a state_dict carries its ``_metadata`` attribute this way
            if not isinstance(state, dict) or not all(isinstance(k, str) for k in state):
                raise UnpicklingError("corrupted checkpoint: an OrderedDict's state must map names to values")
            inst.__dict__.update(state)
        elif self._user_class(type(inst)):
            if hasattr(inst, "__setstate__"):
                inst.__setstate__(state)
            else:  # what pickle's BUILD does
                slotstate = None
                if isinstance(state, tuple) and len(state) == 2:
                    state, slotstate = state
                if state:
                    inst.__dict__.update(state)
                for key, value in (slotstate or {}).items():
                    setattr(inst, key, value)
        else:
            raise Refused("Can only build Tensor, Parameter, OrderedDict or types allowlisted via "
                                  f"`add_safe_globals`, but got {type(inst)}")

    def binpersid(self):
        pid = self.stack.pop()
        if type(pid) is not tuple or not pid:
            raise UnpicklingError(f"corrupted checkpoint: persistent_load id must be a tuple, but got {type(pid)}")
        kind = pid[0].decode("ascii") if isinstance(pid[0], bytes) else pid[0]
        if kind != "storage":
            raise Refused(f"Only persistent_load of storage is allowed, but got {kind!r}")
        self._push(self.persistent_load(pid))


_DISPATCH = {getattr(pickle, name.upper().rstrip("_"))[0]: getattr(WeightsUnpickler, name) for name in (
    "proto", "frame", "mark", "pop", "pop_mark", "dup", "none", "newtrue", "newfalse", "binint", "binint1",
    "binint2", "long1", "long4", "binfloat", "binunicode", "short_binunicode", "binunicode8", "binbytes",
    "short_binbytes", "binbytes8", "bytearray8", "short_binstring", "binstring", "empty_tuple", "tuple",
    "tuple1", "tuple2", "tuple3", "empty_list", "empty_dict", "empty_set", "frozenset", "append", "appends",
    "setitem", "setitems", "additems", "binput", "long_binput", "memoize", "binget", "long_binget",
    "global_", "stack_global", "reduce", "newobj", "build", "binpersid")}


class FullUnpickler(pickle.Unpickler):
    """The standard unpickler (``weights_only=False``): any global, with torch's names mapped here.

    torch's allowlisted names mean what they mean in a weights-only load; another ``torch.x.y``
    name resolves to ``glasstorch.x.y`` when glasstorch has it (a pickled ``torch.nn.Linear``
    becomes a ``glasstorch.nn.Linear``).
    """

    def __init__(self, file, persistent_load, **pickle_load_args):
        super().__init__(file, **pickle_load_args)
        self._persistent_load = persistent_load

    def persistent_load(self, pid):
        return self._persistent_load(pid)

    def find_class(self, module, name):
        table = allowed_globals()
        if f"{module}.{name}" in table:
            return table[f"{module}.{name}"]
        if module == "torch" or module.startswith("torch."):
            try:
                return super().find_class("glasstorch" + module[len("torch"):], name)
            except (ImportError, AttributeError):
                raise UnpicklingError(f"glasstorch has no counterpart of {module}.{name}, which the "
                                      "checkpoint uses") from None
        return super().find_class(module, name)


def unpickle(data, persistent_load, weights_only, **pickle_load_args):
    """Unpickle ``data`` (bytes or a binary file) with the interpreter ``weights_only`` asks for."""
    file = io.BytesIO(data) if isinstance(data, (bytes, bytearray)) else data
    if weights_only:
        return WeightsUnpickler(file, persistent_load, encoding=pickle_load_args.get("encoding", "utf-8")).load()
    return FullUnpickler(file, persistent_load, **pickle_load_args).load()
