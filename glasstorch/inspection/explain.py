"""Why is ``.grad`` None? ``explain(tensor)`` answers in one sentence.

    >>> import glasstorch as torch
    >>> from glasstorch.inspection import explain, record
    >>> w = torch.ones(3, requires_grad=True)
    >>> with record():
    ...     loss = (w * 2).sum().item() * torch.ones(1, requires_grad=True)   # .item() cuts w off
    ...     loss.sum().backward()
    >>> e = explain(w)
    >>> e.cause
    'cut'
    >>> e.how
    '.item()'

The causes, in the order they are checked:

================  ======================================================================================
``has_grad``      ``.grad`` is set (nothing to explain)
``non_leaf``      the tensor was made by an op (``.to()``, ``.float()``, ``.cuda()``, ``* 0.01``...) from a leaf:
                  backward fills the leaf's ``.grad``, not this one's
``not_requires_grad``  ``requires_grad`` is False, so no gradient is computed for it
``reset``         ``zero_grad()`` (``set_to_none=True``) cleared it after the last backward that reached it
``cut``           its path to the loss was cut: ``detach()``, ``.item()``, ``.numpy()``, ``.data``,
                  ``torch.tensor(...)`` re-wrapping, an integer cast, or a ``no_grad`` block
``no_backward``   a graph uses it, but no backward pass has gone through that graph yet
``unused``        no backward that ran reaches it (it does not take part in the loss)
================  ======================================================================================

``.filename``/``.lineno`` give the user's line that made the non-leaf, cut the path or reset the
gradient, whenever glasstorch knows it: lines are recorded while inspection is on (inside
``record()``, ``seatbelt()``, or with ``GLASSTORCH_SEATBELT=1``), at no cost otherwise.
"""
import os
import sys

from .._tensor import Tensor
from ..autograd.graph import AccumulateGrad
from . import _observer
from ._observer import tracker
from .seatbelt import _describe_op, _source_op, _OP_WORDS
from .._warnings import is_glasstorch_file

__all__ = ["explain", "Explanation", "CAUSES"]

CAUSES = ("has_grad", "non_leaf", "not_requires_grad", "reset", "cut", "no_backward", "unused")

_UNWATCHED = (" (glasstorch was not watching when this happened: run the code inside "
              "glasstorch.inspection.record() or seatbelt() to learn the line.)")


class Explanation:
    """Why a tensor's ``.grad`` is what it is. ``str()`` is the sentence; ``.cause`` one of :data:`CAUSES`.

    Attributes: ``cause``, ``name`` (what the tensor is called), ``how`` (the op that cut the path or made
    the non-leaf, e.g. ``'detach()'``, ``'.to()'``), ``filename``/``lineno`` (the user's line, or None),
    ``message``.
    """

    def __init__(self, cause, message, name, how=None, where=None):
        self.cause = cause
        self.message = message
        self.name = name
        self.how = how
        self.filename = where[0] if where else None
        self.lineno = where[1] if where else None

    def __str__(self):
        return self.message

    def __repr__(self):
        at = f" at {os.path.basename(self.filename)}:{self.lineno}" if self.filename else ""
        return f"<Explanation cause={self.cause!r}{at}>"

    def _repr_html_(self):  # Jupyter shows the sentence, not the repr
        from ._html import explanation
        return explanation(self)


def explain(tensor, name=None):
    """Explain ``tensor.grad``: why it is None (or that it is set). Returns an :class:`Explanation`.

    ``name``: what to call the tensor in the sentence; by default its parameter name (``fc.weight``) or
    the caller's variable name for it.
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"explain() expects a Tensor, but got {type(tensor).__name__}")
    name = name or _name_of(tensor, sys._getframe(1))
    t = tracker

    if tensor._grad is not None:
        # (each backward adds into .grad in place, bumping its version once: the passes summed, unless it
        # was also changed in place otherwise)
        passes = tensor._grad._vc.version + 1
        n = f" (summed over {passes} backward passes)" if passes > 1 else ""
        return Explanation("has_grad", f"{name}.grad is set: a tensor of shape {tuple(tensor._grad.shape)}{n}.",
                           name)

    if tensor._grad_fn is not None:
        return _non_leaf(tensor, name)

    if not tensor._requires_grad:
        cut = t.cut_results.get(tensor)
        if cut is not None:
            msg = (f"{name}.grad is None because {name} does not require grad: it was made by {cut.how} at "
                   f"{_line(cut)}, which gives a tensor with no history. Fix: use the tensor before that "
                   f"call if the gradient should flow, or start a new leaf with {name}.requires_grad_().")
            return Explanation("not_requires_grad", msg, name, _short(cut.how), (cut.filename, cut.lineno))
        msg = (f"{name}.grad is None because {name} does not require grad, so no gradient is computed for it. Fix: "
               f"create it with requires_grad=True (e.g. torch.zeros(3, requires_grad=True)), or call "
               f"{name}.requires_grad_() before using it (nn.Parameter does this for module weights).")
        return Explanation("not_requires_grad", msg, name)

    # a leaf that requires grad and has no .grad
    if not t.ever_active:
        return _unwatched(tensor, name)
    reset = _observer.reset_of(tensor)
    if reset is not None and t.backward_count == reset[2]:       # reset, and no backward since
        msg = (f"{name}.grad is None because zero_grad() (set_to_none=True, the default) cleared it at "
               f"{_line(reset)}, after the last backward pass; the next loss.backward() fills it again. "
               f"If you read gradients, do it between backward() and zero_grad().")
        return Explanation("reset", msg, name, "zero_grad()", reset)
    cut = t.cut_of.get(tensor)
    if cut is not None:
        if cut.how == "a no_grad block":
            why = f"it was used inside a no_grad block (the call at {_line(cut)}), which records no graph"
            fix = "run the forward pass that feeds the loss outside torch.no_grad()"
        else:
            why = f"the path from {name} to the loss was cut by {cut.how} at {_line(cut)}"
            fix = ("keep the tensor itself on the path to the loss: call .item()/.detach()/.numpy() only on "
                   "values for logging, use torch.stack/torch.cat instead of torch.tensor([...]), keep float dtypes")
        msg = (f"{name}.grad is None because {why}: the value left the graph there, so backward() from the loss "
               f"never reaches {name}. Fix: {fix}.")
        return Explanation("cut", msg, name, _short(cut.how), (cut.filename, cut.lineno))
    if t.backward_count == 0 or _in_live_graph(tensor):
        msg = (f"{name}.grad is None because no backward pass has gone through the graph that uses {name} "
               f"yet: gradients appear in .grad only after loss.backward().")
        return Explanation("no_backward", msg, name)
    msg = (f"{name}.grad is None because {name} is not part of the loss: none of the {t.backward_count} backward "
           f"pass{'es' * (t.backward_count != 1)} that ran reached it. Check that the forward pass "
           f"uses it (a layer defined but not called in forward(), a branch not taken).")
    return Explanation("unused", msg, name)


def _in_live_graph(tensor):
    """Whether a recorded graph that is still alive uses ``tensor`` (its AccumulateGrad node exists)."""
    return tensor._accumulator is not None and tensor._accumulator() is not None


def _non_leaf(tensor, name):
    fn = tensor._grad_fn
    where = getattr(fn, "_inspect_where", None)
    how = _source_op(where, fn.name()) or _OP_WORDS.get(fn.name()) or fn.name()
    leaves = _leaves(fn)
    if leaves:
        names = [_name_of(v, None) if tracker.param_name(v) is None else tracker.param_name(v) for v in leaves[:2]]
        src = f"from the leaf {names[0]}" if len(leaves) == 1 else f"from the leaves {', '.join(names)}"
        goes = f"backward() puts the gradient into {names[0] if len(leaves) == 1 else 'those leaves'}'s .grad"
    else:
        src, goes = "", "backward() fills .grad only for leaves"
    retain = " (or call .retain_grad() on it before backward() if you only want to read its gradient)"
    msg = (f"{name}.grad is None because {name} is not a leaf: it was made by {_describe_op(tensor)} {src}, so "
           f"{goes}, not into {name}.grad. Fix: make {name} itself the leaf -- create it with its final dtype/device "
           f"and requires_grad=True (torch.randn(3, device=device, requires_grad=True)), or apply the op first and "
           f"then .requires_grad_(){retain}.")
    return Explanation("non_leaf", " ".join(msg.split()), name, how, where)


def _unwatched(tensor, name):
    if _in_live_graph(tensor):
        msg = (f"{name}.grad is None: a live graph uses {name}, but no backward pass through it has filled "
               f"its .grad (none has run, or zero_grad() cleared it since).{_UNWATCHED}")
        return Explanation("no_backward", msg, name)
    msg = (f"{name}.grad is None: no recorded graph uses {name} now, so either it is not part of the loss or "
           f"its path to the loss was cut (.item(), detach(), .numpy(), no_grad).{_UNWATCHED}")
    return Explanation("unused", msg, name)


def _leaves(node, limit=4):
    out, seen, stack = [], set(), [node]
    while stack and len(out) < limit:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        if type(n) is AccumulateGrad:
            out.append(n.variable)
            continue
        stack.extend(reversed([m for m, _ in n.next_functions]))
    return out


def _name_of(tensor, frame):
    """The parameter name, else a variable in the caller's frame bound to ``tensor``, else 'the tensor'."""
    n = tracker.param_name(tensor)
    if n is not None:
        return n
    while frame is not None:
        for scope in (frame.f_locals, frame.f_globals):
            for k, v in scope.items():
                if v is tensor and not k.startswith("_"):
                    return k
        frame = frame.f_back if is_glasstorch_file(frame.f_code.co_filename) else None
    return f"the tensor of shape {tuple(tensor.shape)}"


def _line(where):
    if hasattr(where, "filename"):
        where = (where.filename, where.lineno)
    return f"{os.path.basename(where[0])}:{where[1]}"


def _short(how):
    """'.long() (a cast to torch.int64, ...)' -> '.long()'."""
    return how.split(" (")[0]
