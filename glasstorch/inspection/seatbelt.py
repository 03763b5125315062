"""The seatbelt: warnings for the training bugs that raise no error.

    with glasstorch.inspection.seatbelt():      # or GLASSTORCH_SEATBELT=1 python train.py
        train(model)

Each trap has its own warning class (all subclasses of :class:`TrapWarning`, a ``UserWarning``), is
reported once per site, and the warning's ``filename``/``lineno`` point at the user's line where the
fix goes (not at glasstorch). Every message says what happened, why it matters and how to fix it.

======================================  =====================================================  ==========================
warning                                 when                                                   line
======================================  =====================================================  ==========================
:class:`MissingZeroGradWarning`         ``optimizer.step()`` uses a ``.grad`` that still holds  the ``step()``
                                        gradients from before the previous step
:class:`ProbabilitiesToCrossEntropy...` softmax / log_softmax output (or rows of               the loss call
                                        probabilities) passed to ``cross_entropy`` as logits
:class:`TrainModeInferenceWarning`      a model with Dropout/BatchNorm in train mode run        the model call
                                        under ``no_grad`` / ``inference_mode``
:class:`GraphKeptAliveWarning`          a loss's graph kept alive after its backward             the ``+=``
                                        (``total_loss += loss``): it grows every step
:class:`GraphCutWarning`                a parameter the optimizer holds got no gradient         the cut
                                        because ``.item()``/``detach()``/... cut its path
:class:`ForcedRequiresGradWarning`      ``requires_grad = True`` on a tensor with no path to     the assignment
                                        any parameter (or ``requires_grad_()`` on a non-leaf)
:class:`NonLeafParameterWarning`        a non-leaf tensor given to an optimizer, kept on a      where it became a non-leaf
                                        module, or whose ``.grad`` is read
:class:`NonFiniteWarning`               the first op of the forward pass that makes NaN/inf      that op's line
                                        from finite inputs
:class:`UnevenBatchWarning`             DistributedDataParallel: this rank's batch differs from   the model call
                                        the other ranks' (reported by DDP's own code)
======================================  =====================================================  ==========================

Without a seatbelt nothing is checked and nothing is installed: glasstorch behaves like torch.
"""
import atexit
import linecache
import math
import os
import re
import sys
import warnings
import weakref

import glasstorch
from .._array import xp as _numpy, namespace, device_type_of
from ..autograd import grad_mode as _grad_mode
from ..autograd.graph import AccumulateGrad
from .._tensor import Tensor
from ..nn import functional
from . import _observer
from ._observer import tracker, IdTable

__all__ = ["seatbelt", "Seatbelt", "expect_accumulation", "TrapWarning", "MissingZeroGradWarning",
           "ProbabilitiesToCrossEntropyWarning", "TrainModeInferenceWarning", "GraphKeptAliveWarning",
           "GraphCutWarning", "ForcedRequiresGradWarning", "NonLeafParameterWarning", "NonFiniteWarning",
           "UnevenBatchWarning"]

_state = _grad_mode._state


class TrapWarning(UserWarning):
    """A training bug that raises no error (base class of the seatbelt's warnings)."""


class MissingZeroGradWarning(TrapWarning):
    """``optimizer.step()`` with gradients accumulated across steps (``zero_grad()`` missing)."""


class ProbabilitiesToCrossEntropyWarning(TrapWarning):
    """Probabilities (softmax output) passed to ``cross_entropy``, which expects logits."""


class TrainModeInferenceWarning(TrapWarning):
    """A model with Dropout or BatchNorm evaluated under ``no_grad`` while still in train mode."""


class GraphKeptAliveWarning(TrapWarning):
    """A loss's graph kept alive across steps (``total_loss += loss``): memory grows every step."""


class GraphCutWarning(TrapWarning):
    """A parameter got no gradient because the path to the loss was cut."""


class ForcedRequiresGradWarning(TrapWarning):
    """``requires_grad = True`` set where it can't help (no path to a parameter, or a non-leaf)."""


class NonLeafParameterWarning(TrapWarning):
    """A tensor meant as a parameter is not a leaf, so it is never updated."""


class NonFiniteWarning(TrapWarning):
    """Where NaN or inf first appears in the forward pass."""


class UnevenBatchWarning(TrapWarning):
    """DistributedDataParallel ranks ran batches of different sizes: their graphs differ."""


# ----------------------------------------------------------------------------------------------
# Emitting: once per site, at the user's line
# ----------------------------------------------------------------------------------------------
_belts = []           # open seatbelts, outermost first
_sites = set()        # (category, filename, lineno) already reported while a seatbelt is on


def _warn(category, message, where, frame=None):
    """Warn ``category`` at ``where`` = (filename, lineno), once per site."""
    if where is None:
        return
    filename, lineno = where[0], where[1]
    key = (category, filename, lineno)
    if key in _sites:
        return
    _sites.add(key)
    for belt in _belts:
        belt.found.append((category, filename, lineno, message))
    g = frame.f_globals if frame is not None and frame.f_code.co_filename == filename else None
    module = g.get("__name__", "__main__") if g else os.path.splitext(os.path.basename(filename))[0]
    # module_globals only serves linecache; for code with no file (python -c, exec) the loader
    # it names cannot give the source and raises
    warnings.warn_explicit(message, category, filename, lineno, module=module,
                           module_globals=g if os.path.isfile(filename) else None)


def _line(where):
    """``train.py:12`` for a (filename, lineno, ...) tuple."""
    return f"{os.path.basename(where[0])}:{where[1]}" if where else "an unknown line"


def _name(t):
    """A parameter's name (``fc.weight``) if a module or optimizer names it, else its shape."""
    n = tracker.param_name(t)
    return n if n is not None else f"a tensor of shape {tuple(t.shape)}"


def _where_made(t):
    """(filename, lineno, api) of the op that made non-leaf ``t``, when inspection saw it."""
    fn = t._grad_fn
    return getattr(fn, "_inspect_where", None) if fn is not None else None


# ----------------------------------------------------------------------------------------------
# The checks (plugged into the observers while a seatbelt is on)
# ----------------------------------------------------------------------------------------------
# Functions that cannot turn finite values into NaN/inf (their outputs are not looked at; one is
# non-finite only if an input was): views, copies, joins, and the bounded or numerically stable ones.
_CANT_MAKE_NONFINITE = {
    "view", "view_as", "reshape", "reshape_as", "permute", "transpose", "t", "expand", "expand_as", "squeeze",
    "unsqueeze", "flatten", "unflatten", "contiguous", "clone", "detach", "cat", "concat", "concatenate", "stack",
    "hstack", "vstack", "repeat", "flip", "roll", "__getitem__", "index_select", "gather", "narrow", "select",
    "unbind", "split", "chunk", "tril", "triu", "diagonal", "relu", "relu_", "neg", "__neg__", "abs", "sigmoid",
    "tanh", "softmax", "log_softmax", "nll_loss", "cross_entropy", "hardtanh", "leaky_relu", "threshold",
    "max_pool1d", "max_pool2d", "max_pool3d", "dropout", "linear_", "requires_grad_", "retain_grad",
    "register_hook", "backward", "item", "tolist", "numpy", "__bool__", "__float__", "__int__", "__index__"}
_PASSING_ON = set()         # those functions (filled from the names when the first seatbelt opens)


def _passing_on_functions():
    """The function objects named in _CANT_MAKE_NONFINITE, where glasstorch defines them."""
    found = set()
    for namespace in (glasstorch, functional, Tensor):
        for name in _CANT_MAKE_NONFINITE:
            f = getattr(namespace, name, None)
            if callable(f):
                found.add(f)
                # (torch.hstack is the function given out=; the seam sees the one it wraps)
                found.add(getattr(f, "__wrapped__", f))
    return found


# The same, as the nodes those functions record.
_CANT_MAKE_NONFINITE_NODES = {
    "ViewBackward0", "UnsafeViewBackward0", "PermuteBackward0", "TransposeBackward0", "TBackward0", "ExpandBackward0",
    "SqueezeBackward0", "SqueezeBackward1", "SqueezeBackward2", "UnsqueezeBackward0", "SliceBackward0",
    "SelectBackward0", "CloneBackward0", "AliasBackward0", "CatBackward0", "StackBackward0", "RepeatBackward0",
    "FlipBackward0", "RollBackward0", "IndexBackward0", "ReluBackward0", "NegBackward0", "UnbindBackward0",
    "SplitBackward0", "SplitWithSizesBackward0", "ReshapeAliasBackward0", "TrilBackward0", "TriuBackward0",
    "DiagonalBackward0", "GatherBackward0", "MaxPool2DWithIndicesBackward0", "AbsBackward0", "SigmoidBackward0",
    "TanhBackward0", "SoftmaxBackward0", "LogSoftmaxBackward0", "NllLossBackward0", "HardtanhBackward0",
    "LeakyReluBackward0", "ThresholdBackward0", "AsStridedBackward0"}
# Node names of ops whose output is raw scores (a Linear/conv layer's), never rows of probabilities.
_LOGIT_MAKERS = {"AddmmBackward0", "MmBackward0", "ConvolutionBackward0", "BmmBackward0", "UnsafeViewBackward0",
                 "MvBackward0", "LinearBackward0"}
_GRAPH_CONTAINERS = (list, tuple, dict)
_CROSS_ENTROPY = functional.cross_entropy


class _SeatbeltChecks(_observer.Checks):
    on = True

    def __init__(self):
        self.accumulate = False
        self.expected = IdTable()      # optimizers declared to accumulate
        self.chains = IdTable()        # node -> set of backward indices whose graphs it keeps alive
        self.consumers = IdTable()     # node -> weakrefs to the nodes built on its (scalar) output
        self.scanned = IdTable()       # modules already scanned for non-leaf tensors
        self.nonfinite = IdTable()     # arrays seen non-finite (reported, or carrying an earlier report)
        self.roots_by_line = {}        # (filename, lineno) of a backward() -> weakrefs to the roots it ran from

    # -- every public call: NaN/inf, graphs kept alive ----------------------------------------
    def call(self, func, args, kwargs, out, made):
        if isinstance(out, Tensor):
            d = out._data
            if func is _CROSS_ENTROPY and args and isinstance(args[0], Tensor):
                # (checked here, once its loss is made, not by a handler of its own: a step's loss is
                # one call, and logits from a linear layer need no look at their values)
                fn = args[0]._grad_fn
                if fn is None or type(fn).__name__ not in _LOGIT_MAKERS:
                    self.cross_entropy(args[0])
            if func in _PASSING_ON:
                # it can't make non-finite values, only pass an input's on: known if the input was seen
                if self.nonfinite._d:
                    for x in _tensors_in(args, kwargs):
                        if _known(self.nonfinite, x):
                            self.nonfinite.set(d, True)
                            break
            # (_finite, written out for NumPy's float32 and float64: this runs for most calls)
            elif (not _finite_number(_vdot(d, d)) and not _all_true(_isfinite(d), axis=None)
                  if type(d) is _ndarray and d.dtype.char in "fd" else d.dtype.kind in "fc" and not _finite(d)):
                self._nonfinite(func, args, kwargs, out, made)
            if made is not None and d.size == 1:
                # graphs kept alive are held by scalars (a running total of losses): look only at those
                self._kept_alive(made, args, out)
        elif type(out) in (tuple, list) and func not in _PASSING_ON:
            for o in out:
                if isinstance(o, Tensor) and o._data.dtype.kind in "fc" and not _finite(o._data):
                    self._nonfinite(func, args, kwargs, o, made)
                    break

    def _nonfinite(self, func, args, kwargs, out, made):
        """``out`` of ``func(*args, **kwargs)`` holds NaN or inf: report where it first appeared."""
        seen = self.nonfinite
        if _known(seen, out):
            return
        seen.set(out._data, True)
        name = getattr(func, "__name__", None) or str(func)
        inputs = list(_tensors_in(args, kwargs))
        if not inputs or any(isinstance(v, float) and not math.isfinite(v) for v in _values_in(args, kwargs)):
            return      # made from data, or asked for (masked_fill(mask, -inf), torch.full(..., inf))
        xp = _ns(out._data)
        bad_leaf = None
        for x in inputs:
            if x._data.dtype.kind in "fc" and not bool(xp.isfinite(x._data).all()):
                if _known(seen, x) or x._grad_fn is not None and _carried_through(seen, x._grad_fn):
                    return  # carried from an earlier op, reported there
                bad_leaf = x
        d = out._data
        what = "nan" if bool(xp.isnan(d).any()) else "inf"
        op = name.strip("_")
        if op.startswith("r") and op[1:] in _REFLECTED:
            op = op[1:]
        recorded = f" ({made.name()})" if made is not None else ""
        shapes = ", ".join(str(tuple(x.shape)) for x in inputs)
        if bad_leaf is None:
            msg = (f"{what} first appears in the forward pass here: {op}{recorded} of input shapes [{shapes}] "
                   f"turned finite values into {what}, so the loss and every gradient will be {what}. ")
            msg += "Fix: " + _NONFINITE_FIX.get(op, "check this op's inputs (log of 0, division by 0, sqrt of a "
                                                    "negative, exp overflow) or clamp them first.")
        elif bad_leaf._grad_fn is not None:
            # made by a function without the seam's check (so the seatbelt did not see it): name its node
            node = bad_leaf._grad_fn
            msg = (f"{what} first appears in the forward pass here: {op}{recorded} got a tensor of shape "
                   f"{tuple(bad_leaf.shape)} that {node.name()} made, which already contains {what}. Fix: check "
                   f"that op's inputs (log of 0, division by 0, sqrt of a negative, exp overflow) or clamp them "
                   f"first.")
        else:
            role = _name(bad_leaf) if bad_leaf._requires_grad else f"the input of shape {tuple(bad_leaf.shape)}"
            msg = (f"{what} enters the forward pass here: {op}{recorded} got {role}, which already contains {what} "
                   f"(it is a leaf: data or a parameter). Fix: if it is a parameter, an earlier step's gradient was "
                   f"not finite (lower the learning rate, clip gradients); if it is data, clean it "
                   f"(torch.nan_to_num, or drop the rows).")
        _warn(NonFiniteWarning, msg, _observer.user_where(1))

    def _kept_alive(self, node, args, out):
        """Does ``node`` (made by a call on ``args`` that returned ``out``) hold on to a graph that a
        backward pass already went through?

        ``chains`` marks such nodes with the backward passes whose graphs they keep alive: a node made
        from a loss after its backward (``total_loss += loss``), or, through ``consumers`` (which
        scalar-input nodes were built on which node), one made before it (``running = running + loss``
        then ``loss.backward()``). Two different passes kept alive by one node is the trap. The inputs'
        nodes are read off ``node``'s edges: an in-place op (``total_loss += loss`` on a tensor) has
        already given its first argument the new node.
        """
        chains = self.chains
        chd = chains._d
        backs = None
        for fn, _ in node.next_functions:
            if fn is None:
                continue
            if chd and id(fn) in chd:
                c = chains.get(fn)
                if c is not None:
                    backs = set(c) if backs is None else backs | c
            b = getattr(fn, "_inspect_backward", None)
            if b is not None:
                backs = {b} if backs is None else backs | {b}
        for a in args:      # (_tensors_in, written out: this runs for every call made from a scalar)
            if isinstance(a, Tensor):
                xs = (a,)
            elif type(a) in (list, tuple):
                xs = a
            else:
                continue
            for x in xs:
                if not isinstance(x, Tensor) or x._data.size != 1:
                    continue
                fn = node.next_functions[0][0] if x is out else x._grad_fn    # (in place: its old node)
                if fn is None or fn is node:
                    continue
                users = self.consumers.get(fn)
                if users is None:
                    self.consumers.set(fn, [weakref.ref(node)])
                else:
                    users.append(weakref.ref(node))
        if backs is None:
            return
        chains.set(node, backs)
        where = _observer.user_where(1) if len(backs) >= 2 else None
        if where is not None:
            n = _count_nodes(node)
            msg = (f"this line keeps the graphs of {len(backs)} losses alive after their backward(): the "
                   f"result still points into every earlier loss's graph, now {n} autograd nodes, and it "
                   f"grows by one graph per step (memory and time grow until the loop ends). Fix: for a running "
                   f"total, add the number, not the tensor: total_loss += loss.item() (or loss.detach()).")
            _warn(GraphKeptAliveWarning, msg, where)

    def _mark_consumers(self, root, index):
        """Backward pass ``index`` runs from ``root``: every node built on it keeps its graph alive."""
        stack = [root]
        seen = set()
        while stack:
            n = stack.pop()
            for ref in self.consumers.get(n, ()):
                c = ref()
                if c is not None and id(c) not in seen:
                    seen.add(id(c))
                    backs = self.chains.get(c)
                    self.chains.set(c, {index} if backs is None else backs | {index})
                    stack.append(c)

    def _kept_in_container(self, alive, frame):
        """Losses kept in a list (``losses.append(loss)``) across steps: each keeps its graph alive.

        A backward from the same line as earlier ones, while two or more of those earlier roots are
        still alive (``alive``: their ids; see backward_roots), means something holds the old losses. If a
        list (tuple, dict) in the calling frames holds them, that is the trap; a running total is the
        chains' case (``_kept_alive``)."""
        frame = _observer._outside(frame)
        if frame is None:
            return
        where = (frame.f_code.co_filename, frame.f_lineno)
        found = _container_holding(frame, alive)
        if found is None:
            return
        name, container, frame = found
        kind = type(container).__name__
        held = len(alive)
        line = _adding_line(frame, name) or where
        msg = (f"the {kind} '{name}' keeps the losses of earlier steps, and with each its whole graph ({held}+ graphs "
               f"now, autograd nodes and the values they saved), alive after their backward(): memory grows by one "
               f"graph per step. Fix: keep the number, not the tensor: {name}.append(loss.item()) (or "
               f"loss.detach()).")
        _warn(GraphKeptAliveWarning, msg, line)

    # -- optimizer.step(): missing zero_grad, cut parameters, forced leaves ----------------
    def step(self, optimizer, carried, missing):
        """``carried``: (parameter, backward passes its .grad holds) for the parameters whose .grad was
        carried over from the previous step; ``missing``: some parameter has no .grad."""
        if tracker.forced._d:
            self._forced_and_unused()
        if carried and not (self.accumulate or optimizer in self.expected):
            backwards = max(held for _, held in carried)
            carried = [p for p, _ in carried]
            frame, _ = _observer.user_site(1)
            more = f" (and {len(carried) - 1} more)" if len(carried) > 1 else ""
            msg = (f"optimizer.step() is using gradients summed over {backwards} backward passes: the .grad of "
                   f"{_name(carried[0])}{more} was not cleared after the previous step, so every step also "
                   f"re-applies the old gradients. Fix: call optimizer.zero_grad() once per iteration (before "
                   f"loss.backward()). If you accumulate on purpose, say so: "
                   f"glasstorch.inspection.expect_accumulation(optimizer) or seatbelt(accumulate=True).")
            _warn(MissingZeroGradWarning, msg, _observer.where_of(frame), frame)
        if not missing:
            return

        params = _observer.owner_params(optimizer)
        by_cut = {}
        for p in params:
            if p._grad is None and p._requires_grad:
                cut = tracker.cut_of.get(p)
                if cut is not None:
                    by_cut.setdefault((cut.filename, cut.lineno), (cut, []))[1].append(p)
        for (filename, lineno), (cut, ps) in by_cut.items():
            names = ", ".join(_name(p) for p in ps[:4]) + (f" and {len(ps) - 4} more" if len(ps) > 4 else "")
            if cut.how == "a no_grad block":
                fix = ("run the forward pass that feeds the loss outside torch.no_grad() (or, if these parameters "
                       "are meant to be frozen, set requires_grad=False and leave them out of the optimizer)")
            else:
                fix = ("keep tensors on the path to the loss (use the tensor itself; call .item()/.detach()/"
                       ".numpy() only for logging, on a copy that does not feed the loss; torch.stack instead of "
                       "torch.tensor([...]))")
            msg = (f"{names} got no gradient, so optimizer.step() leaves it unchanged: the path from it to the "
                   f"loss was cut here by {cut.how}. Fix: {fix}.")
            _warn(GraphCutWarning, msg, (filename, lineno))

        reached = tracker.last_reached
        if reached and all(p._grad is None for p in params):
            forced = [(t, w) for t, w in tracker.forced.items() if id(t) in reached]
            if forced and len(forced) == len(reached):
                for t, w in forced:
                    self._forced_message(t, w, "the backward pass stopped at it: no parameter of the optimizer "
                                               "got a gradient")

    def _forced_and_unused(self):
        """A leaf given ``requires_grad = True`` that the last backward reached, whose gradient nothing
        uses: no optimizer holds it and its ``.grad`` was never read. Re-created from detached data
        (``torch.tensor(np_value)``) and added to the loss, it makes ``backward()`` "work" while the
        path to the parameters it stands for is cut."""
        reached = tracker.last_reached
        if not reached or not tracker.forced._d:
            return
        optimized = None
        for t, where in tracker.forced.items():
            if id(t) not in reached or t in tracker.grad_read:
                continue
            if optimized is None:
                optimized = tracker.optimized()
            if id(t) in optimized:
                continue
            self._forced_message(t, where, "backward() gives it a gradient, but nothing uses it: no optimizer holds "
                                           "it and its .grad is never read, so it stands in for values whose own "
                                           "path to the parameters was cut")

    def _forced_message(self, t, where, what):
        cut = tracker.cut_results.get(t)
        made = tracker.made_from_data.get(t)
        origin = f" It was made by {cut.how} at {_line((cut.filename, cut.lineno))}." if cut else \
            f" It was made by {made[0]} at {_line(made[1])}, from values with no graph." if made and made[1] else ""
        recent = [c for c, *_ in tracker.pending.values()]
        if not cut and recent:
            c = recent[-1]
            origin += f" The last cut seen before it: {c.how} at {_line((c.filename, c.lineno))}."
        msg = (f"requires_grad = True was set here on a tensor of shape {tuple(t.shape)} that has no path to any "
               f"parameter, which silences \"element 0 of tensors does not require grad\" but fixes nothing: {what}."
               f"{origin} Fix: remove this line and find where the path to the parameters was cut (.item(), "
               f".detach(), .numpy(), torch.tensor(...), a no_grad block, an integer cast).")
        _warn(ForcedRequiresGradWarning, msg, where)

    def backward_roots(self, roots, frame):
        """``frame``: the one that called backward() (the user's, usually)."""
        if frame is not None:
            # the roots of the backward() calls from this place, to tell losses kept in a list
            # (_kept_in_container, called only when two earlier ones are alive: this runs every step)
            # (the place as its code and instruction: a code object's hash is costly, and a line number
            # is found by reading the code's line table)
            where = (id(frame.f_code), frame.f_lasti)
            refs = self.roots_by_line.get(where)
            if refs is None:
                refs = self.roots_by_line[where] = []
            alive = None
            if refs:
                if len(refs) == 1 and refs[0]() is None:
                    refs.clear()        # the usual loop: the last step's loss is gone (no comprehension to run)
                else:
                    refs[:] = [r for r in refs[-8:] if r() is not None]
                    if len(refs) >= 2:
                        alive = {id(r()) for r in refs} - {id(n) for n, _ in roots}  # (a root backwarded again)
            for node, _ in roots:
                if node is not None and type(node) is not AccumulateGrad:
                    refs.append(weakref.ref(node))
            if alive is not None and len(alive) >= 2:
                self._kept_in_container(alive, frame)
        if self.consumers._d:
            for node, _ in roots:
                if node is not None and id(node) in self.consumers._d:
                    self._mark_consumers(node, tracker.backward_count)
        for node, _ in roots if tracker.forced._d else ():
            if type(node) is AccumulateGrad:
                where = tracker.forced.get(node.variable)
                if where is not None:
                    self._forced_message(node.variable, where, "backward() from it only gives it a .grad of ones")

    def requires_grad_nonleaf(self, t, frame):
        op = _describe_op(t)
        msg = (f"requires_grad_() on a tensor made by {op} does nothing: it is not a leaf, and it already requires "
               f"grad through its graph (torch ignores this call). Fix: remove it; if its gradient is what you want, "
               f"call .retain_grad() before backward(); if it is meant as a parameter, make the leaf itself require "
               f"grad.")
        _warn(ForcedRequiresGradWarning, msg, _observer.where_of(frame), frame)

    # -- modules: train mode under no_grad, non-leaf attributes ---------------------------
    def module_call(self, module, frame, first):
        if first or module not in self.scanned:
            self.scanned.set(module, True)
            self._scan_attributes(module, frame)
        if _state.enabled or not getattr(module, "training", False):
            return
        active = []
        for name, m in module.named_modules():
            if getattr(m, "training", False) and _stochastic(m):
                active.append((name or type(m).__name__, m))
        if not active:
            return
        listed = ", ".join(f"'{n}' ({type(m).__name__})" for n, m in active[:3])
        kinds = {("dropout" if "Dropout" in type(m).__name__ else "batchnorm") for _, m in active}
        effects = []
        if "dropout" in kinds:
            effects.append("dropout zeroes activations at random")
        if "batchnorm" in kinds:
            effects.append("batch norm normalises with this batch's statistics and overwrites its running averages")
        mode = "inference_mode" if _state.inference else "no_grad"
        msg = (f"{type(module).__name__} runs under torch.{mode}() but is still in train mode: {listed} "
               f"{'behave' if len(active) > 1 else 'behaves'} as in training ({'; '.join(effects)}), so the "
               f"evaluation is wrong and changes from run to run. Fix: call model.eval() before evaluating, and "
               f"model.train() before training again.")
        _warn(TrainModeInferenceWarning, msg, _observer.where_of(frame), frame)

    def _scan_attributes(self, module, frame):
        try:
            mods = list(module.named_modules())
        except Exception:
            return
        for prefix, m in mods:
            for key, v in list(vars(m).items()):
                if isinstance(v, Tensor) and v._grad_fn is not None and v._requires_grad:
                    name = f"{prefix}.{key}" if prefix else key
                    where = _where_made(v) or _observer.where_of(frame)
                    msg = (f"{type(module).__name__}.{name} is a tensor made by {_describe_op(v)}, not a leaf "
                           f"and not an nn.Parameter: model.parameters() does not include it, so no optimizer "
                           f"updates it and it stays at its initial value. Fix: wrap the initial value in "
                           f"nn.Parameter (e.g. self.{key} = nn.Parameter(torch.randn(...) * 0.01)).")
                    _warn(NonLeafParameterWarning, msg, where, frame)

    def add_param_group(self, optimizer, group, frame):
        params = group.get("params")
        if isinstance(params, Tensor):
            params = [params]
        try:
            params = list(params)
        except TypeError:
            return
        for p in params:
            if isinstance(p, tuple) and len(p) == 2:
                p = p[1]
            if isinstance(p, Tensor) and p._grad_fn is not None and not p._retains_grad:
                where = _where_made(p) or _observer.where_of(frame)
                msg = (f"the optimizer was given a tensor of shape {tuple(p.shape)} made by {_describe_op(p)}: it "
                       f"is not a leaf, so it can't be updated (torch refuses it: \"can't optimize a non-leaf "
                       f"Tensor\"). Fix: create the parameter as a leaf -- put requires_grad=True (or "
                       f".requires_grad_()) after the last op, e.g. (torch.randn(3) * 0.01).requires_grad_(), or "
                       f"torch.randn(3, device=device, requires_grad=True) instead of .to(device) afterwards.")
                _warn(NonLeafParameterWarning, msg, where, frame)

    def nonleaf_grad(self, t, frame):
        made = _where_made(t)
        where = made or _observer.where_of(frame)
        msg = (f"reading .grad of a tensor made by {_describe_op(t)} (shape {tuple(t.shape)}): it is not a leaf, "
               f"so backward() never fills its .grad (None) and an update through it is lost. Fix: if it is meant "
               f"as a parameter, make it a leaf: put requires_grad=True after the last op, e.g. "
               f"(torch.randn(3) * 0.01).requires_grad_(), or create it on its device directly; if you want an "
               f"intermediate gradient, call .retain_grad() before backward().")
        _warn(NonLeafParameterWarning, msg, where, frame if made is None else None)

    # -- losses ------------------------------------------------------------------------------
    def cross_entropy(self, input):
        fn = input._grad_fn
        name = type(fn).__name__ if fn is not None else None
        kind = None
        if name == "SoftmaxBackward0":
            kind = "softmax"
        elif name == "LogSoftmaxBackward0":
            kind = "log_softmax"
        elif name not in _LOGIT_MAKERS and input._data.dtype.kind == "f" and input._data.ndim >= 1:
            kind = _probability_rows(input._data)   # probabilities that went through another op
        if kind is None:
            return
        if kind == "log_softmax":
            msg = ("cross_entropy was given log_softmax output: cross_entropy applies log_softmax itself, so it "
                   "is applied twice. The value happens to be the same (log_softmax is idempotent), but the "
                   "computation is wasted and the intent unclear. Fix: pass the logits (the layer before "
                   "log_softmax), or use F.nll_loss / nn.NLLLoss on log_softmax output.")
        else:
            msg = ("cross_entropy was given probabilities (softmax output) as if they were logits: it applies "
                   "log_softmax itself, so the softmax is applied twice, the loss is squashed into a narrow "
                   "range and the gradients nearly vanish (training stalls). Fix: pass the logits (remove the "
                   "softmax from the model; apply it only when you want probabilities for display).")
        frame, _ = _observer.user_site(1)
        _warn(ProbabilitiesToCrossEntropyWarning, msg, _observer.where_of(frame), frame)


def _tensors_in(args, kwargs):
    """The tensors among a call's arguments (and in a list or tuple argument of tensors)."""
    for a in args:
        if isinstance(a, Tensor):
            yield a
        elif type(a) in (list, tuple) and a and isinstance(a[0], Tensor):
            for b in a:
                if isinstance(b, Tensor):
                    yield b
    if kwargs:
        for a in kwargs.values():
            if isinstance(a, Tensor):
                yield a


def _known(seen, t):
    """Whether the values of ``t`` were already seen non-finite (its array, or the array it views)."""
    if not seen._d:
        return False
    d = t._data
    return d in seen or (getattr(d, "base", None) is not None and d.base in seen)


def _carried_through(seen, node, budget=8):
    """Whether ``node`` -- recorded by a function the seatbelt does not see (one without the seam's
    check) -- only passed on values already seen non-finite: it can't make them (a view), or what it
    saved holds them."""
    stack, visited = [node], set()
    while stack and len(visited) < budget:
        n = stack.pop()
        if n is None or id(n) in visited or type(n) is AccumulateGrad:
            continue
        visited.add(id(n))
        if n.name() in _CANT_MAKE_NONFINITE_NODES:
            return True
        for v in n._saved or ():
            for x in (v if isinstance(v, (list, tuple)) else (v,)):
                if isinstance(x, Tensor) and _known(seen, x):
                    return True
        stack.extend(m for m, _ in n.next_functions)
    return False


def _values_in(args, kwargs):
    yield from args
    if kwargs:
        yield from kwargs.values()


_REFLECTED = {"add", "sub", "mul", "div", "truediv", "pow", "matmul", "floordiv", "mod"}


def _container_holding(frame, roots, frames=6):
    """``(name, container, frame)`` for a list/tuple/dict variable in ``frame`` or the frames above it
    whose last elements include a tensor made by one of the nodes ``roots`` (ids), or None."""
    def holds(c, depth=0):
        items = c.values() if isinstance(c, dict) else c
        try:
            tail = list(items)[-16:]
        except TypeError:
            return False
        for v in tail:
            if isinstance(v, Tensor):
                if v._grad_fn is not None and id(v._grad_fn) in roots:
                    return True
            elif depth == 0 and isinstance(v, _GRAPH_CONTAINERS) and holds(v, 1):
                return True
        return False
    while frame is not None and frames > 0:
        for name, v in list(frame.f_locals.items()):
            if isinstance(v, _GRAPH_CONTAINERS) and not name.startswith("__") and holds(v):
                return name, v, frame
        frame = frame.f_back
        frames -= 1
    return None


def _adding_line(frame, name):
    """(filename, lineno) of the line in ``frame``'s code that adds to ``name`` (``name.append(...)``,
    ``name += [...]``, ``name[k] = ...``), or None."""
    pattern = re.compile(r"\b" + re.escape(name) + r"\s*(\.(append|extend|insert|appendleft)\s*\(|\+=|\[[^\]]*\]\s*=[^=])")
    code = frame.f_code
    filename = code.co_filename
    lines = sorted({ln for _, _, ln in code.co_lines() if ln is not None})
    for ln in lines:
        if pattern.search(linecache.getline(filename, ln)):
            return filename, ln
    return None


def _finite(d):
    """Whether every value of ``d`` is finite.

    A NumPy float32 or float64 array is first asked for the sum of its squares, ``vdot(d, d)``: one
    BLAS call, no temporary array (2.4x fewer instructions than isfinite and its reduction, which
    make and read an array of booleans). The sum is finite when every value is -- a NaN or an inf
    makes it NaN or inf, and squares can't add up to inf - inf -- so only a sum that came out
    non-finite (a non-finite value, or finite ones so large that the sum overflowed) has the values
    looked at one by one (isfinite). Of NumPy's products, vdot is the one that reports no
    floating-point error (``dot`` and ``sum`` report "overflow encountered" for large finite values,
    the ones a diverging run goes through, which ``-W error`` turns into an exception); isfinite
    reports none either. The seatbelt runs this for the output of every call it sees (written out
    in ``_SeatbeltChecks.call``)."""
    if type(d) is _ndarray:
        return d.dtype.char in "fd" and _finite_number(_vdot(d, d)) or bool(_all_true(_isfinite(d), axis=None))
    return bool(_ns(d).isfinite(d).all())


_ndarray = _numpy.ndarray
_isfinite = _numpy.isfinite
_all_true = _numpy.logical_and.reduce
# (NumPy's C function itself, past its __array_function__ dispatcher: the dispatcher calls a Python
# function, ``numpy._core.multiarray.vdot``, on every call -- few instructions, but a Python call run
# cold, twice a training step; the arrays here are always ndarrays, which dispatch to it anyway)
_vdot = getattr(_numpy.vdot, "_implementation", _numpy.vdot)
_finite_number = math.isfinite


def _ns(a):
    """The array library of ``a`` (NumPy, or CuPy on a GPU)."""
    return _numpy if type(a) is _numpy.ndarray else namespace(device_type_of(a))


def _probability_rows(d):
    """'softmax' if every row along the class dim is a probability vector, 'log_softmax' if log-probabilities."""
    if d.size < 2:
        return None
    axis = 1 if d.ndim >= 2 else 0
    c = d.shape[axis]
    if c < 2 or d.size // c < 1:
        return None
    lo, hi = float(d.min()), float(d.max())
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return None
    if lo >= 0.0 and hi <= 1.0:
        if float(abs(d.sum(axis=axis, dtype="float64") - 1.0).max()) < 1e-4:
            return "softmax"
    elif hi <= 0.0:
        xp = _ns(d)
        lse = xp.log(xp.exp(d.astype("float64")).sum(axis=axis))
        if float(abs(lse).max()) < 1e-4:
            return "log_softmax"
    return None


def _stochastic(m):
    """Dropout with p > 0 or BatchNorm: modules whose train and eval behaviour differ."""
    for cls in type(m).__mro__:
        n = cls.__name__
        if "Dropout" in n:
            return getattr(m, "p", 1.0) > 0
        if "BatchNorm" in n:
            return True
    return False


def _count_nodes(node):
    seen = {id(node)}
    stack = [node]
    while stack:
        n = stack.pop()
        for nxt, _ in n.next_functions:
            if nxt is not None and id(nxt) not in seen:
                seen.add(id(nxt))
                stack.append(nxt)
    return len(seen)


_OP_WORDS = {"MulBackward0": "a multiplication (*)", "DivBackward0": "a division (/)", "AddBackward0": "an addition (+)",
             "SubBackward0": "a subtraction (-)", "ToCopyBackward0": "a copy to another dtype or device",
             "ViewBackward0": ".view()", "ReshapeAliasBackward0": ".reshape()", "TBackward0": ".t()",
             "CloneBackward0": ".clone()", "ExpandBackward0": ".expand()", "SqueezeBackward0": ".squeeze()",
             "UnsqueezeBackward0": ".unsqueeze()", "PermuteBackward0": ".permute()",
             "TransposeBackward0": ".transpose()", "NegBackward0": "a negation (-x)"}
_NONFINITE_FIX = {
    "log": "log(0) is -inf and log of a negative is nan; use torch.log(x + eps) or clamp(min=eps), or "
                    "work with logits (F.log_softmax, F.cross_entropy, F.binary_cross_entropy_with_logits).",
    "div": "add an epsilon to the denominator or mask the zeros.",
    "sqrt": "clamp(min=0) first (sqrt of a negative is nan) (and add eps: its gradient at 0 is inf).",
    "exp": "subtract the max first, as torch.logsumexp and F.softmax do (exp overflows above ~88 in float32).",
    "pow": "check the base's range (a fractional power of a negative, or 0 to a negative power).",
}


def _describe_op(t):
    """How ``t`` was made, in the user's words: '.to() at train.py:3' or 'a multiplication (*)'."""
    fn = t._grad_fn
    if fn is None:
        return "no op (a leaf)"
    name = fn.name()
    where = getattr(fn, "_inspect_where", None)
    words = _source_op(where, name) or _OP_WORDS.get(name) or f"{name}"
    return f"{words} at {_line(where)}" if where else words


def _source_op(where, node_name):
    """For a copy node, the method written on the user's line (.to(), .float(), .cuda()...)."""
    if where is None or node_name != "ToCopyBackward0":
        return None
    text = linecache.getline(where[0], where[1])
    m = re.search(r"\.(to|cuda|cpu|float|double|half|bfloat16|type_as|type)\(", text)
    return f".{m.group(1)}()" if m else None


# ----------------------------------------------------------------------------------------------
# The public context manager
# ----------------------------------------------------------------------------------------------
_checks = _SeatbeltChecks()


class seatbelt:
    """Warn about the silent training traps while this block runs (see the module docstring).

    Args:
        accumulate: gradient accumulation across ``optimizer.step()`` calls is intended (no
            :class:`MissingZeroGradWarning`).
        report: print :meth:`report` when the block ends.

    ``with seatbelt() as belt: ...`` then ``belt.report()`` gives a one-paragraph summary
    (``"seatbelt: no traps found in 200 steps"``), and ``belt.found`` the warnings as
    ``(category, filename, lineno, message)``. Seatbelts nest; one warning per site while any is open.
    """

    def __init__(self, accumulate=False, report=False):
        self.accumulate = accumulate
        self.print_report = report
        self.found = []
        self._steps0 = self._backwards0 = 0
        self._steps = self._backwards = None

    def __enter__(self):
        if not _PASSING_ON:
            _PASSING_ON.update(_passing_on_functions())
        _observer.acquire()
        _belts.append(self)
        self._steps0, self._backwards0 = tracker.step_count, tracker.backward_count
        self._steps = self._backwards = None
        _checks.accumulate = any(b.accumulate for b in _belts)
        _observer.set_checks(_checks)
        return self

    def __exit__(self, *exc):
        self._steps = tracker.step_count - self._steps0
        self._backwards = tracker.backward_count - self._backwards0
        if self in _belts:
            _belts.remove(self)
        if not _belts:
            _observer.set_checks(None)
            _sites.clear()
            _checks.chains.clear()
            _checks.consumers.clear()
            _checks.nonfinite.clear()
            _checks.roots_by_line.clear()
        else:
            _checks.accumulate = any(b.accumulate for b in _belts)
        _observer.release()
        if self.print_report:
            print(self.report())
        return False

    def report(self):
        """``'seatbelt: no traps found in N steps'``, or the traps found, one line each."""
        steps = self._steps if self._steps is not None else tracker.step_count - self._steps0
        backwards = self._backwards if self._backwards is not None else tracker.backward_count - self._backwards0
        count = f"{steps} step{'s' * (steps != 1)}" if steps or not backwards else \
            f"{backwards} backward pass{'es' * (backwards != 1)}"
        if not self.found:
            return f"seatbelt: no traps found in {count}"
        lines = [f"seatbelt: {len(self.found)} trap{'s' * (len(self.found) != 1)} found in {count}:"]
        for category, filename, lineno, message in self.found:
            lines.append(f"  {os.path.basename(filename)}:{lineno}  {category.__name__}: {message}")
        return "\n".join(lines)


Seatbelt = seatbelt


def expect_accumulation(optimizer):
    """Declare that ``optimizer`` steps with gradients accumulated on purpose; returns ``optimizer``."""
    _checks.expected.set(optimizer, True)
    return optimizer


def _from_environment():
    """``GLASSTORCH_SEATBELT=1`` (or ``report``): a seatbelt around the whole script."""
    value = os.environ.get("GLASSTORCH_SEATBELT", "").strip().lower()
    if value in ("", "0", "false", "no", "off"):
        return None
    belt = seatbelt()
    belt.__enter__()
    if value == "report":
        atexit.register(lambda: print(belt.report(), file=sys.stderr))
    return belt
