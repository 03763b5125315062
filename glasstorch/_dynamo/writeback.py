"""What runs around a graph that changed its inputs in place: reading each input where it lives at
call time, and writing the graph's new values back into them afterwards (the epilogue of torch's
functionalization; ``capture.Capture._in_place`` captured the writes as out-of-place ops)."""


def input_reader(source, namespace, name):
    """The source of an expression that finds a graph input at run time (``args``/``kwargs`` in scope):
    an argument's path, a bound parameter or buffer, or the ``.grad`` of either."""
    if source[0] == "arg":
        return source[1]
    if source[0] == "grad":
        _, owner, path, _ = source
        if path is not None:
            return f"{path}._grad"
        namespace[name] = owner
        return f"{name}._grad"
    namespace[name] = source[1]
    return name


def write_back(target, new, bumps, op):
    """Copy a graph's new value of an input into the input's memory, and bump its version counter as
    the eager in-place ops did (``bumps`` of them, ``op`` the last): functionalization's epilogue."""
    if new is not target:
        target._data[...] = new._data
    vc = target._vc
    vc.version += bumps
    vc.last_op = op
