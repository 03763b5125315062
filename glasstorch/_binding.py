"""The binding: ``import torch`` and ``import torchvision`` give glasstorch, so PyTorch programs run unchanged.

Three ways to turn it on (docs/binding.md)::

    python -m glasstorch run train.py --epochs 3      # a script, with its own arguments
    python -m glasstorch run -m mypackage.train        # a module, as python -m runs it
    import glasstorch; glasstorch.as_torch()           # from inside a program or a notebook
    %load_ext glasstorch                               # in IPython / Jupyter

How it works. Python asks the finders on ``sys.meta_path``, in order, for a module it has not
imported yet. ``as_torch()`` puts :class:`TorchAliasFinder` first. Asked for ``torch`` or any
``torch.X.Y``, it answers with glasstorch's own module ``glasstorch.X.Y`` -- the very object that
``import glasstorch.X.Y`` gives, imported on first request like any module -- and Python files it in
``sys.modules`` under the torch name as well. ``torchvision.X`` maps to ``glasstorch.vision.X``. So
``torch.nn.functional is glasstorch.nn.functional``, there is one copy of every module, and a
library that imports torch afterwards (d2l, torchviz, a trainer) gets glasstorch too. Nothing else
is changed: no module's attributes are rewritten, no function is replaced.

A name glasstorch does not have is refused at once with a ModuleNotFoundError that says so, instead
of falling through to a real torch that may be installed: one process never mixes the two.
"""
import importlib
import importlib.machinery
import importlib.util
import os
import sys

__all__ = ["as_torch", "is_bound", "load_ipython_extension", "TorchAliasFinder", "run_main"]

# The top-level names the binding answers for, and the glasstorch package behind each.
BOUND_PACKAGES = {"torch": "glasstorch", "torchvision": "glasstorch.vision"}


def _target(name):
    """The glasstorch module that stands for `name` ('torch.nn.functional' -> 'glasstorch.nn.functional'),
    or None when `name` is not under a bound package."""
    top, dot, rest = name.partition(".")
    package = BOUND_PACKAGES.get(top)
    if package is None:
        return None
    return package + dot + rest


class TorchAliasFinder:
    """Finds ``torch.*`` / ``torchvision.*`` and loads them as glasstorch's module objects (a meta path
    finder and its loader, by the protocol Python's import system calls; no ABC needed).

    ``find_spec`` checks that the glasstorch module exists (without running it); ``create_module``
    imports it and hands Python that object instead of a new one; ``exec_module`` has nothing to
    run. Python's import machinery stamps the torch-named spec on the module it created -- here an
    existing glasstorch module -- so ``exec_module`` gives the module its own spec back: after the
    import, ``glasstorch.nn.__spec__`` is what it was before."""

    def find_spec(self, fullname, path=None, target=None):
        glass_name = _target(fullname)
        if glass_name is None:
            return None
        try:
            glass_spec = importlib.util.find_spec(glass_name)
        except ModuleNotFoundError:
            glass_spec = None
        if glass_spec is None:
            top = fullname.partition(".")[0]
            raise ModuleNotFoundError(
                f"No module named '{fullname}': glasstorch, which stands in for {top} here, has no "
                f"{fullname} (it would be {glass_name}). glasstorch implements part of PyTorch; "
                f"see docs/binding.md for what is bound.", name=fullname)
        return importlib.machinery.ModuleSpec(
            fullname, self, origin=glass_spec.origin, is_package=glass_spec.submodule_search_locations is not None,
            loader_state={"target": glass_name})

    def create_module(self, spec):
        module = importlib.import_module(spec.loader_state["target"])
        spec.loader_state["own_spec"] = module.__spec__
        return module

    def exec_module(self, module):
        # The module ran when glasstorch imported it; only give it back the spec Python replaced.
        module.__spec__ = module.__spec__.loader_state["own_spec"]

    def __repr__(self):
        return "<glasstorch's torch binding: torch -> glasstorch, torchvision -> glasstorch.vision>"


_FINDER = TorchAliasFinder()


def is_bound():
    """Whether ``import torch`` gives glasstorch in this process."""
    return _FINDER in sys.meta_path


def _foreign_modules():
    """The names of already imported torch/torchvision modules that are not glasstorch's."""
    foreign = []
    for name, module in list(sys.modules.items()):
        if module is None or _target(name) is None:
            continue
        if not getattr(module, "__name__", "").startswith("glasstorch"):
            foreign.append(name)
    return foreign


def _refuse_real_torch(foreign):
    top = foreign[0].partition(".")[0]
    module = sys.modules.get(top) or sys.modules[foreign[0]]
    where = getattr(module, "__file__", None) or "an unknown location"
    version = getattr(module, "__version__", None)
    what = f"{top} {version} from {where}" if version else f"{top} from {where}"
    raise RuntimeError(
        f"glasstorch.as_torch(): the real {top} is already imported in this process ({what}), so "
        f"`import {top}` can no longer be bound to glasstorch: the code that imported it holds real "
        f"{top} objects, and mixing them with glasstorch's would go wrong silently. Bind before anything "
        f"imports {top}: run the program with `python -m glasstorch run script.py`, or call "
        f"glasstorch.as_torch() (in IPython: %load_ext glasstorch) first -- in a notebook, restart the "
        f"kernel and do it in the first cell.")


def as_torch():
    """Make ``import torch`` (every ``torch.*`` submodule glasstorch has) and ``import torchvision``
    give glasstorch's own modules, in this process, from now on. Returns the glasstorch module.

    Call it before anything imports torch; calling it again does nothing. If the real PyTorch is
    already imported, it raises RuntimeError (mixing the two would silently go wrong).

    >>> import glasstorch
    >>> torch = glasstorch.as_torch()          # doctest: +SKIP
    >>> import torch.nn.functional as F        # doctest: +SKIP
    >>> F is glasstorch.nn.functional          # doctest: +SKIP
    True
    """
    import glasstorch
    if not is_bound():
        foreign = _foreign_modules()
        if foreign:
            _refuse_real_torch(foreign)
        sys.meta_path.insert(0, _FINDER)
    return glasstorch


def load_ipython_extension(ipython):
    """``%load_ext glasstorch``: bind torch to glasstorch in this IPython kernel (as :func:`as_torch`)."""
    as_torch()


# -- python -m glasstorch run ------------------------------------------------------------------------

_USAGE = """usage: python -m glasstorch run SCRIPT [ARGS...]
       python -m glasstorch run -m MODULE [ARGS...]

Run a PyTorch program unchanged, with `import torch` (and every torch.* submodule) bound to glasstorch
and `import torchvision` to glasstorch.vision. SCRIPT or MODULE sees ARGS in sys.argv, as it would
under `python SCRIPT ARGS` or `python -m MODULE ARGS`."""

# Frames of the launcher itself (by their module), left out of the traceback of an error in the
# user's program (only those before the program's first frame). runpy and importlib are frozen
# modules: their frames have no file to compare.
_LAUNCHER_MODULES = {__name__, "runpy", "importlib._bootstrap", "importlib._bootstrap_external"}


def _run_user_code(run):
    """Call `run` (which executes the user's program); an exception from the program is printed as
    Python would print it for ``python SCRIPT`` -- the user's frames, not the launcher's -- and
    the process exits with status 1. ``sys.exit(n)`` in the program exits with n as usual."""
    try:
        run()
    except Exception as exc:
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_globals.get("__name__") in _LAUNCHER_MODULES:
            tb = tb.tb_next
        sys.excepthook(type(exc), exc.with_traceback(tb), tb)
        sys.exit(1)


def run_main(argv):
    """``python -m glasstorch run ...``: bind, set up sys.argv and sys.path as Python would for the
    program, and run it as ``__main__``. Returns nothing; exits with the program's status."""
    import runpy
    if not argv or argv[0] in ("-h", "--help"):
        print(_USAGE, file=sys.stdout if argv else sys.stderr)
        sys.exit(0 if argv else 2)
    if argv[0] == "-m":
        if len(argv) < 2:
            print(_USAGE + "\n\npython -m glasstorch run: error: -m needs a module name", file=sys.stderr)
            sys.exit(2)
        module, args = argv[1], argv[2:]
        as_torch()
        if importlib.util.find_spec(module) is None:
            print(f"python -m glasstorch run: No module named {module}", file=sys.stderr)
            sys.exit(1)
        sys.argv = [module, *args]       # run_module puts the module's file in argv[0], as -m does
        _run_user_code(lambda: runpy.run_module(module, run_name="__main__", alter_sys=True))
        return
    script, args = argv[0], argv[1:]
    if not os.path.exists(script):
        print(f"python -m glasstorch run: can't open file {os.path.abspath(script)!r}: "
              f"[Errno 2] No such file or directory", file=sys.stderr)
        sys.exit(2)
    as_torch()
    sys.argv = [script, *args]
    if not sys.flags.safe_path and sys.path:
        # `python -m glasstorch` put the working directory first; `python SCRIPT` puts the script's
        # directory there (a directory or zip with __main__.py is put there by run_path itself).
        if os.path.isdir(script) or not script.endswith(".py") and _is_zip(script):
            del sys.path[0]
        else:
            sys.path[0] = os.path.dirname(os.path.realpath(script))
    _run_user_code(lambda: runpy.run_path(script, run_name="__main__"))


def _is_zip(path):
    import zipfile
    return zipfile.is_zipfile(path)
