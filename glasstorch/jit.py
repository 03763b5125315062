"""torch.jit: glasstorch has no TorchScript; script/trace return the module or function unchanged,
which keeps code that scripts a model for speed working (it runs eagerly)."""


def script(obj, *args, **kwargs):
    return obj


def trace(func, example_inputs=None, *args, **kwargs):
    return func


def ignore(fn=None, **kwargs):
    return fn if fn is not None else (lambda f: f)


def unused(fn):
    return fn


def export(fn):
    return fn


def is_scripting():
    return False


def is_tracing():
    return False


class ScriptModule:
    pass
