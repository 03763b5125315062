r"""L-BFGS: a quasi-Newton method that builds a curvature model from the last few steps (Nocedal, 1980).

Newton's method steps by ``-H^{-1} g``. BFGS approximates the inverse Hessian from how the gradient
changed along the steps taken (``s_k = x_{k+1} - x_k``, ``y_k = g_{k+1} - g_k``); the limited-memory
variant keeps only the last ``history_size`` pairs and applies the approximation to ``g`` with the
two-loop recursion, never forming a matrix::

    q = -g
    for k = newest .. oldest:  a_k = rho_k s_k.q ;  q -= a_k y_k        (rho_k = 1 / y_k.s_k)
    r = H_diag * q                                                      (H_diag = s.y / y.y, newest pair)
    for k = oldest .. newest:  b = rho_k y_k.r ;  r += (a_k - b) s_k
    d = r                                                               the search direction

Each ``step(closure)`` runs up to ``max_iter`` such iterations, calling the closure (which must
zero the gradients, recompute the loss, call ``backward()`` and return the loss) to re-evaluate;
the step length is ``lr`` (the first iteration ever scales it by ``1 / sum|g|``), or is found by a
line search satisfying the strong Wolfe conditions (``line_search_fn="strong_wolfe"``). It stops
early when the gradient or the progress fall below ``tolerance_grad`` / ``tolerance_change``.

All parameters are handled as one flat vector, and the curvature history is optimizer-wide: it is
kept in the state of the first parameter (so that ``load_state_dict`` casts it with the
parameters). This file is torch's ``torch/optim/lbfgs.py`` (itself ported from Lua torch's
``optim``), step for step, so that trajectories agree.
"""
import glasstorch
from .optimizer import Optimizer, _check_lr, _evaluate_closure, _to_scalar
from ..autograd.grad_mode import no_grad

__all__ = ["LBFGS"]


def _number(x):
    """A 0-dim tensor as a Python number, where torch passes it to an op's ``alpha=`` (a Scalar)."""
    return x.item() if isinstance(x, glasstorch.Tensor) else x


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimizer of the cubic through two points with their values and slopes, clamped to ``bounds``.

    ``d1 = g1 + g2 - 3 (f1 - f2) / (x1 - x2)``, ``d2 = sqrt(d1^2 - g1 g2)``; the minimizer is
    ``x2 - (x2 - x1) (g2 + d2 - d1) / (g2 - g1 + 2 d2)`` (written from the farther point). Without a
    real ``d2`` (no minimum) it returns the middle of the bounds.
    """
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = d2_square.sqrt()
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """A step length ``t`` along ``d`` satisfying the strong Wolfe conditions (Nocedal & Wright, alg. 3.5/3.6).

    Sufficient decrease ``f(x + t d) <= f + c1 t g.d`` and curvature ``|g(x + t d).d| <= c2 |g.d|``.
    First a *bracketing* phase grows ``t`` until an interval is known to contain such a point, then
    a *zoom* phase shrinks the interval by cubic interpolation. ``obj_func(x, t, d)`` returns the
    loss and flat gradient at ``x + t d``. Returns ``(f_new, g_new, t, number of evaluations)``.
    """
    d_norm = d.abs().max()
    g = g.clone()
    # evaluate objective and gradient using initial step
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)

    # bracket an interval containing a point satisfying the Wolfe criteria
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        # check conditions
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.clone()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.clone()], [gtd_prev, gtd_new]
            break

        # interpolate
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step))

        # next step
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.clone(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1

    # reached max number of iterations?
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # zoom phase: we now have a point satisfying the criteria, or a bracket around it. We refine
    # the bracket until we find the exact point satisfying the criteria.
    insuf_progress = False
    # find high and low points in bracket
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        # line-search bracket is so small
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break

        # compute new trial value
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])

        # Test that we are making sufficient progress: if ``t`` is so close to a boundary that we
        # made insufficient progress in the last step, or ``t`` is at one of the boundaries, move it
        # to ``0.1 * len(bracket)`` away from the nearest boundary point.
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            # interpolation close to boundary
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                # evaluate at 0.1 away from boundary
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False

        # Evaluate new point
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1

        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            # Armijo condition not satisfied or not lower than lowest point
            bracket[high_pos] = t
            bracket_f[high_pos] = f_new
            bracket_g[high_pos] = g_new.clone()
            bracket_gtd[high_pos] = gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                # Wolfe conditions satisfied
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                # old high becomes new low
                bracket[high_pos] = bracket[low_pos]
                bracket_f[high_pos] = bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]

            # new point becomes new low
            bracket[low_pos] = t
            bracket_f[low_pos] = f_new
            bracket_g[low_pos] = g_new.clone()
            bracket_gtd[low_pos] = gtd_new

    t = bracket[low_pos]
    return bracket_f[low_pos], bracket_g[low_pos], t, ls_func_evals


class LBFGS(Optimizer):
    """Implements L-BFGS (heavily inspired by minFunc); see the module docstring.

    It takes one parameter group only, and ``step`` requires the closure.
    It needs ``param_bytes * (history_size + 1)`` bytes of memory.

    Args:
        params (iterable): the (real) tensors to optimize.
        lr (float or Tensor): learning rate (default: 1).
        max_iter (int): the most iterations per ``step`` (default: 20).
        max_eval (int): the most closure evaluations per ``step`` (default: ``max_iter * 5 // 4``).
        tolerance_grad (float): stop when ``max |g| <= tolerance_grad`` (default: 1e-7).
        tolerance_change (float): stop when the loss or the parameters change less (default: 1e-9).
        history_size (int): how many ``(s, y)`` pairs to keep (default: 100).
        line_search_fn (str): ``"strong_wolfe"`` or None, a fixed step (default: None).

    Example (a quadratic bowl is solved in one step)::

        >>> import glasstorch as torch
        >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = torch.optim.LBFGS([w], line_search_fn="strong_wolfe")
        >>> def closure():
        ...     opt.zero_grad()
        ...     loss = ((w - torch.tensor([3.0, 4.0])) ** 2).sum()
        ...     loss.backward()
        ...     return loss
        >>> opt.step(closure)
        tensor(40., grad_fn=<SumBackward0>)
        >>> w.detach()
        tensor([3., 4.])
    """

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        _check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                        tolerance_change=tolerance_change, history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)

        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        if any(p.is_complex() for p in self._params):
            raise NotImplementedError("glasstorch's LBFGS does not support complex parameters yet "
                                      "(torch flattens them with view_as_real, which glasstorch lacks)")
        self._numel_cache = None

    # -------------------------------------------------------------- the parameters as one flat vector
    def _numel(self):
        if self._numel_cache is None:
            self._numel_cache = sum(p.numel() for p in self._params)
        return self._numel_cache

    def _gather_flat_grad(self):
        """All gradients as one vector (zeros for a parameter without one)."""
        views = [glasstorch.zeros(p.numel(), dtype=p.dtype, device=p.device) if p.grad is None else p.grad.view(-1)
                 for p in self._params]
        return glasstorch.cat(views, 0)

    def _add_grad(self, step_size, update):
        """``params += step_size * update``, with ``update`` a flat vector."""
        step_size = _number(step_size)
        offset = 0
        for p in self._params:
            numel = p.numel()
            p.add_(update[offset:offset + numel].view_as(p), alpha=step_size)
            offset += numel
        if offset != self._numel():
            raise AssertionError(f"Expected offset {offset} to equal {self._numel()}")

    def _clone_param(self):
        return [p.clone() for p in self._params]

    def _set_param(self, params_data):
        for p, pdata in zip(self._params, params_data, strict=True):
            p.copy_(pdata)

    def _directional_evaluate(self, closure, x, t, d):
        """Loss and flat gradient at ``x + t d``; the parameters are put back to ``x`` afterwards."""
        self._add_grad(t, d)
        loss = float(_evaluate_closure(closure))
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    # -------------------------------------------------------------- the algorithm
    @no_grad()
    def step(self, closure):
        """Run up to ``max_iter`` L-BFGS iterations; returns the loss of the first closure call.

        Args:
            closure (callable): re-evaluates the model (zero grads, forward, backward) and returns the loss.
        """
        if len(self.param_groups) != 1:
            raise AssertionError(f"Expected exactly one param_group, but got {len(self.param_groups)}")

        group = self.param_groups[0]
        lr = _to_scalar(group["lr"])
        max_iter = group["max_iter"]
        max_eval = group["max_eval"]
        tolerance_grad = group["tolerance_grad"]
        tolerance_change = group["tolerance_change"]
        line_search_fn = group["line_search_fn"]
        history_size = group["history_size"]

        # LBFGS has only global state; it is registered as the first parameter's, which helps with
        # casting in load_state_dict.
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        # evaluate initial f(x) and df/dx
        orig_loss = _evaluate_closure(closure)
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1

        flat_grad = self._gather_flat_grad()
        opt_cond = flat_grad.abs().max() <= tolerance_grad

        # optimal condition
        if opt_cond:
            return orig_loss

        # the state left by the previous step
        d = state.get("d")
        t = state.get("t")
        old_dirs = state.get("old_dirs")
        old_stps = state.get("old_stps")
        ro = state.get("ro")
        H_diag = state.get("H_diag")
        prev_flat_grad = state.get("prev_flat_grad")
        prev_loss = state.get("prev_loss")

        n_iter = 0
        # optimize for a max of max_iter iterations
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1

            # ---- compute the descent direction
            if state["n_iter"] == 1:
                d = flat_grad.neg()
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                # do lbfgs update (update memory)
                y = flat_grad.sub(prev_flat_grad)
                s = d.mul(t)
                ys = y.dot(s)  # y*s
                if ys > 1e-10:
                    # updating memory
                    if len(old_dirs) == history_size:
                        # shift history by one (limited-memory)
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    # store new direction/step
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    # update scale of initial Hessian approximation
                    H_diag = ys / y.dot(y)  # (y*y)

                # compute the approximate (L-BFGS) inverse Hessian multiplied by the gradient
                num_old = len(old_dirs)
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = state["al"]

                # iteration in L-BFGS loop collapsed to use just one buffer
                q = flat_grad.neg()
                for i in range(num_old - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q.add_(old_dirs[i], alpha=-_number(al[i]))

                # multiply by initial Hessian; r/d is the final direction
                d = r = glasstorch.mul(q, H_diag)
                for i in range(num_old):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r.add_(old_stps[i], alpha=_number(al[i] - be_i))

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone()
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss

            # ---- compute the step length
            # reset initial guess for step size
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr
            else:
                t = lr

            # directional derivative
            gtd = flat_grad.dot(d)  # g * d

            # directional derivative is below tolerance
            if gtd > -tolerance_change:
                break

            # optional line search: user function
            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = self._clone_param()

                def obj_func(x, t, d):
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = flat_grad.abs().max() <= tolerance_grad
            else:
                # no line search, simply move with fixed-step
                self._add_grad(t, d)
                if n_iter != max_iter:
                    # re-evaluate function only if not in last iteration: in a stochastic setting
                    # there is no use re-evaluating the function here
                    loss = float(_evaluate_closure(closure))
                    flat_grad = self._gather_flat_grad()
                    opt_cond = flat_grad.abs().max() <= tolerance_grad
                    ls_func_evals = 1

            # update func eval
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            # ---- check conditions
            if n_iter == max_iter:
                break
            if current_evals >= max_eval:
                break
            # optimal condition
            if opt_cond:
                break
            # lack of progress
            if d.mul(t).abs().max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state["d"] = d
        state["t"] = t
        state["old_dirs"] = old_dirs
        state["old_stps"] = old_stps
        state["ro"] = ro
        state["H_diag"] = H_diag
        state["prev_flat_grad"] = prev_flat_grad
        state["prev_loss"] = prev_loss

        return orig_loss
