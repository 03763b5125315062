"""Audit what a ``TorchFunctionMode`` is handed, glasstorch against real torch, over the op registry.

For each op of ``tests/opinfo.py`` and its first samples (the first dtype), the call is made under a
recording mode in torch and in glasstorch, and each call the mode sees -- ``func.__name__``, ``args``,
``kwargs`` (tensors as ``T``) -- is compared. A sample is then one of:

``same``        the mode sees the same calls with the same arguments in the same form
``documented``  the same calls, in glasstorch's documented form (README, "Where glasstorch differs"): a
                positional parameter given by keyword comes in ``args``, and one given its default
                explicitly is not handed on -- torch's call bound to glasstorch's function's signature
                and put in that form is exactly what glasstorch's mode was handed.
``name``        the same arguments, but ``func.__name__`` differs (torch's C++ names: ``fft_fft``,
                ``linalg_det``, ``log_sigmoid``, ``max_pool2d_with_indices``)
``differs``     anything else: other calls, other values handed on (a default handed that torch does
                not hand, a Python function's convention where torch's is a binding, ...)

Run: ``python tools/audit_modes.py [--show differs,name] [--limit N]`` (needs torch). It is a report,
exit status 0 whatever it finds; tests/test_overrides.py and test_seam_gaps.py are the gate.
"""
import argparse
import collections
import inspect
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
import torch  # noqa: E402
import glasstorch  # noqa: E402
import opinfo  # noqa: E402


def _plain(v):
    """A value as the comparison sees it: tensors as 'T', dtypes by name, containers element-wise."""
    if isinstance(v, (torch.Tensor, glasstorch.Tensor)):
        return "T"
    if isinstance(v, (list, tuple)):
        return tuple(_plain(x) for x in v)
    if isinstance(v, (torch.dtype, glasstorch.dtype)):
        return str(v).replace("torch.", "")
    return repr(v)


def seen(lib, info, sample):
    """The calls ``lib``'s mode is handed for one sample: [(func, args, kwargs)] (func is lib's)."""
    log = []

    class Recording(lib.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            log.append((func, args, kwargs))
            return func(*args, **kwargs)
    args, kwargs, _ = sample.build(lib)
    try:
        with Recording():
            info.fn(lib, *args, **kwargs)
    except Exception as e:     # (a sample that raises: the calls up to the error are compared)
        log.append((type(e), (), {}))
    return log


def _holds_default(p, value):
    return p.default is not p.empty and (value is p.default or type(value) is type(p.default) and value == p.default)


def _documented_form(signature, args, kwargs):
    """What glasstorch's documented convention hands a handler for the call ``(args, kwargs)``: bound
    to ``signature``, the positional parameters (however given) up to the last one not holding its
    default in ``args``, the keyword-only ones not holding theirs in ``kwargs``. None: does not bind."""
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError:
        return None
    positional, keywords = [], {}
    for name, p in signature.parameters.items():
        if p.kind is p.VAR_POSITIONAL:
            positional.extend((_plain(v), False) for v in bound.arguments.get(name, ()))
        elif p.kind is p.VAR_KEYWORD:
            keywords.update((k, _plain(v)) for k, v in bound.arguments.get(name, {}).items())
        elif p.kind is p.KEYWORD_ONLY:
            if name in bound.arguments and not _holds_default(p, bound.arguments[name]):
                keywords[name] = _plain(bound.arguments[name])
        else:
            value = bound.arguments.get(name, p.default)
            positional.append((_plain(value), _holds_default(p, value)))
    while positional and positional[-1][1]:
        positional.pop()
    return [v for v, _ in positional], keywords


def _name(func):
    return getattr(func, "__name__", str(func))


def classify(torch_calls, gt_calls):
    if len(torch_calls) != len(gt_calls):
        return "differs"
    verdict = "same"
    for (tf, ta, tk), (gf, ga, gk) in zip(torch_calls, gt_calls):
        if isinstance(tf, type) or isinstance(gf, type):   # (both raised here: the errors are test_ops's)
            if not (isinstance(tf, type) and isinstance(gf, type)):
                return "differs"
            continue
        same_form = ([_plain(a) for a in ta], {k: _plain(v) for k, v in tk.items()}) == \
            ([_plain(a) for a in ga], {k: _plain(v) for k, v in gk.items()})
        if not same_form:
            try:
                signature = inspect.signature(gf)
            except (TypeError, ValueError):
                return "differs"
            expected = _documented_form(signature, ta, tk)
            if expected is None or expected != ([_plain(a) for a in ga], {k: _plain(v) for k, v in gk.items()}):
                return "differs"
            verdict = "documented" if verdict == "same" else verdict
        if _name(tf) != _name(gf):
            verdict = "name" if verdict in ("same", "documented") else verdict
    return verdict


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--show", default="differs", help="comma-separated classes to list (differs,name,documented)")
    parser.add_argument("--samples", type=int, default=8, help="samples per op (the first dtype's)")
    args = parser.parse_args()
    show = set(args.show.split(","))
    counts = collections.Counter()
    for info in opinfo.op_db:
        try:
            samples = info.samples(info.dtypes[0])[:args.samples]
        except Exception:       # (a sample generator that needs what this machine lacks)
            continue
        worst, example = "same", None
        order = ("same", "documented", "name", "differs")
        for s in samples:
            t, g = seen(torch, info, s), seen(glasstorch, info, s)
            verdict = classify(t, g)
            if order.index(verdict) > order.index(worst):
                worst, example = verdict, (s, t, g)
        counts[worst] += 1
        if worst in show:
            s, t, g = example

            def fmt(calls):
                return [(_name(f), [_plain(a) for a in a_], {k: _plain(v) for k, v in k_.items()})
                        for f, a_, k_ in calls]
            print(f"{info.name} [{worst}]: {s!r}\n    torch {fmt(t)}\n    glasstorch {fmt(g)}")
    print(", ".join(f"{k} {counts[k]}" for k in ("same", "documented", "name", "differs")),
          f"(ops of tests/opinfo.py; each op classed by its worst sample of {args.samples})")


if __name__ == "__main__":
    main()
