"""glasstorch.optim.lr_scheduler against real torch: learning-rate sequences, state dicts, errors.

Each case builds the same optimizer (two param groups) and scheduler in both libraries, steps both
50 times, and requires the recorded learning rates (and momenta, for OneCycleLR) to be *equal*:
the schedules are Python float arithmetic, so the same formulas give the same bits.
"""
import doctest
import warnings

import pytest

torch = pytest.importorskip("torch")
import glasstorch  # noqa: E402
import glasstorch.optim.lr_scheduler  # noqa: E402

N_STEPS = 50


def make_optimizer(lib, name="SGD", **kwargs):
    p1 = lib.zeros(3, requires_grad=True)
    p2 = lib.zeros(2, requires_grad=True)
    defaults = {"SGD": dict(momentum=0.9), "Adam": {}, "Adagrad": {}}[name]
    return getattr(lib.optim, name)([{"params": [p1]}, {"params": [p2], "lr": 0.05}],
                                    lr=0.1, **{**defaults, **kwargs})


def _record(opt, sched):
    groups = [{k: g[k] for k in ("lr", "momentum", "betas") if k in g} for g in opt.param_groups]
    return groups, list(sched.get_last_lr())


def run_schedule(lib, make, optimizer="SGD", steps=N_STEPS, metrics=None):
    """Step optimizer and scheduler ``steps`` times; record the groups' lr/momentum and get_last_lr()."""
    opt = make_optimizer(lib, optimizer)
    S = lib.optim.lr_scheduler
    sched = make(S, opt)
    history = [_record(opt, sched)]
    for i in range(steps):
        opt.step()
        if metrics is None:
            sched.step()
        else:
            sched.step(metrics[i])
        history.append(_record(opt, sched))
    return history, sched, opt


SCHEDULES = {
    "StepLR": lambda S, o: S.StepLR(o, step_size=7, gamma=0.5),
    "MultiStepLR": lambda S, o: S.MultiStepLR(o, milestones=[5, 12, 12, 30], gamma=0.3),
    "ExponentialLR": lambda S, o: S.ExponentialLR(o, gamma=0.93),
    "CosineAnnealingLR": lambda S, o: S.CosineAnnealingLR(o, T_max=20),
    "CosineAnnealingLR-cycles": lambda S, o: S.CosineAnnealingLR(o, T_max=10, eta_min=0.001),
    "LambdaLR": lambda S, o: S.LambdaLR(o, lambda e: 1.0 / (1.0 + e)),
    "LambdaLR-per-group": lambda S, o: S.LambdaLR(o, [lambda e: 0.9 ** e, lambda e: 1.0 + 0.1 * e]),
    "MultiplicativeLR": lambda S, o: S.MultiplicativeLR(o, lambda e: 0.95),
    "LinearLR": lambda S, o: S.LinearLR(o),
    "LinearLR-custom": lambda S, o: S.LinearLR(o, start_factor=0.25, end_factor=0.9, total_iters=8),
    "ConstantLR": lambda S, o: S.ConstantLR(o, factor=0.5, total_iters=4),
    "PolynomialLR": lambda S, o: S.PolynomialLR(o, total_iters=30, power=2.0),
    "OneCycleLR-cos": lambda S, o: S.OneCycleLR(o, max_lr=1.0, total_steps=N_STEPS),
    "OneCycleLR-linear": lambda S, o: S.OneCycleLR(o, max_lr=[1.0, 0.3], total_steps=N_STEPS,
                                                   anneal_strategy="linear", pct_start=0.25),
    "OneCycleLR-three-phase": lambda S, o: S.OneCycleLR(o, max_lr=0.5, epochs=5, steps_per_epoch=10,
                                                        three_phase=True, base_momentum=0.8, max_momentum=0.9),
    "OneCycleLR-no-momentum": lambda S, o: S.OneCycleLR(o, max_lr=0.5, total_steps=N_STEPS, cycle_momentum=False,
                                                        div_factor=10.0, final_div_factor=100.0),
    "SequentialLR-warmup-cosine": lambda S, o: S.SequentialLR(
        o, [S.LinearLR(o, start_factor=0.1, total_iters=5), S.CosineAnnealingLR(o, T_max=20)], milestones=[5]),
    "SequentialLR-three": lambda S, o: S.SequentialLR(
        o, [S.ConstantLR(o, factor=0.2, total_iters=10), S.ExponentialLR(o, gamma=0.9),
            S.StepLR(o, step_size=4, gamma=0.5)], milestones=[3, 20]),
    "ChainedScheduler": lambda S, o: S.ChainedScheduler(
        [S.ConstantLR(o, factor=0.1, total_iters=2), S.ExponentialLR(o, gamma=0.9)]),
    "CosineAnnealingWarmRestarts": lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=5, T_mult=2, eta_min=0.01),
    "CyclicLR-triangular": lambda S, o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4),
    "CyclicLR-triangular2": lambda S, o: S.CyclicLR(o, base_lr=[0.01, 0.02], max_lr=[0.1, 0.5], step_size_up=3,
                                                    step_size_down=7, mode="triangular2",
                                                    base_momentum=[0.7, 0.75], max_momentum=0.95),
    "CyclicLR-exp_range": lambda S, o: S.CyclicLR(o, base_lr=0.01, max_lr=0.2, step_size_up=5, mode="exp_range",
                                                  gamma=0.95),
    "CyclicLR-scale_fn-iterations": lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=2, step_size_down=3,
                                                            scale_fn=lambda x: 1 / (1 + 0.1 * x),
                                                            scale_mode="iterations"),
    "CyclicLR-scale_fn-cycle-no-momentum": lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=6, mode="bogus",
                                                                   scale_fn=lambda x: 0.8 ** x,
                                                                   cycle_momentum=False),
}


@pytest.mark.parametrize("case", SCHEDULES)
def test_lr_sequence_equals_torch(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, sched, _ = run_schedule(glasstorch, SCHEDULES[case])
        theirs, tsched, _ = run_schedule(torch, SCHEDULES[case])
    assert ours == theirs
    assert len({tuple(h[1]) for h in ours}) > 1  # the schedule did change the lr
    # every value in a scheduler's state dict (floats, lists, Counters, nested dicts) compares by ==
    assert sched.state_dict() == tsched.state_dict()


@pytest.mark.parametrize("case", ["OneCycleLR-cos", "OneCycleLR-three-phase", "CyclicLR-triangular2",
                                  "CyclicLR-exp_range"])
def test_momentum_cycling_moves_adams_beta1(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, _, opt = run_schedule(glasstorch, SCHEDULES[case], optimizer="Adam")
        theirs, _, _ = run_schedule(torch, SCHEDULES[case], optimizer="Adam")
    assert ours == theirs
    assert len({h[0][0]["betas"][0] for h in ours}) > 2 and ours[-1][0][0]["betas"][1] == 0.999


def test_one_cycle_too_many_steps():
    for lib in (glasstorch, torch):
        opt = make_optimizer(lib)
        sched = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(3):
                opt.step()
                sched.step()
            with pytest.raises(ValueError, match="Tried to step 4 times. The specified number of total steps is 3"):
                sched.step()


METRICS = [1.0, 0.9, 0.9, 0.95, 0.85, 0.8499, 0.86, 0.86, 0.87, 0.7, 0.7, 0.7, 0.7, 0.71, 0.69, 0.69] * 3 + [0.5, 0.5]
PLATEAUS = {
    "defaults-patience-2": lambda S, o: S.ReduceLROnPlateau(o, patience=2),
    "max-mode": lambda S, o: S.ReduceLROnPlateau(o, mode="max", patience=1, factor=0.5),
    "abs-threshold": lambda S, o: S.ReduceLROnPlateau(o, threshold=0.02, threshold_mode="abs", patience=1),
    "cooldown-min-lr": lambda S, o: S.ReduceLROnPlateau(o, patience=0, cooldown=2, factor=0.5, min_lr=[0.01, 0.02]),
    "eps": lambda S, o: S.ReduceLROnPlateau(o, patience=0, factor=0.5, eps=0.02),
}


@pytest.mark.parametrize("case", PLATEAUS)
def test_reduce_lr_on_plateau_equals_torch(case):
    metrics = [-m for m in METRICS] if case == "max-mode" else METRICS
    ours, sched, _ = run_schedule(glasstorch, PLATEAUS[case], steps=len(metrics), metrics=metrics)
    theirs, tsched, _ = run_schedule(torch, PLATEAUS[case], steps=len(metrics), metrics=metrics)
    assert ours == theirs
    assert len({tuple(h[1]) for h in ours}) > 1
    assert sched.state_dict() == tsched.state_dict()


def test_reduce_lr_on_plateau_accepts_a_tensor_metric():
    opt = make_optimizer(glasstorch)
    sched = glasstorch.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=0)
    sched.step(glasstorch.tensor(1.0))
    sched.step(glasstorch.tensor(2.0))
    assert sched.get_last_lr() == pytest.approx([0.01, 0.005])


@pytest.mark.parametrize("case", ["StepLR", "CosineAnnealingLR-cycles", "OneCycleLR-cos",
                                  "SequentialLR-warmup-cosine", "LambdaLR", "MultiStepLR", "CyclicLR-triangular2",
                                  "CyclicLR-exp_range", "CyclicLR-scale_fn-iterations"])
def test_state_dict_round_trip_resumes(case):
    """Save optimizer and scheduler after 20 steps, load them into fresh ones: the rest is unchanged."""
    make = SCHEDULES[case]
    S = glasstorch.optim.lr_scheduler
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full, _, _ = run_schedule(glasstorch, make)

        opt = make_optimizer(glasstorch)
        sched = make(S, opt)
        for _ in range(20):
            opt.step()
            sched.step()
        opt_state, sched_state = opt.state_dict(), sched.state_dict()

        opt2 = make_optimizer(glasstorch)
        sched2 = make(S, opt2)
        opt2.load_state_dict(opt_state)
        sched2.load_state_dict(sched_state)
        resumed = [_record(opt2, sched2)]
        for _ in range(N_STEPS - 20):
            opt2.step()
            sched2.step()
            resumed.append(_record(opt2, sched2))
    assert resumed == full[20:]


def test_initial_lr_and_base_lrs():
    opt = make_optimizer(glasstorch)
    sched = glasstorch.optim.lr_scheduler.StepLR(opt, step_size=2)
    assert [g["initial_lr"] for g in opt.param_groups] == [0.1, 0.05] == sched.base_lrs
    assert sched.last_epoch == 0 and sched.get_last_lr() == [0.1, 0.05]


def test_resuming_with_last_epoch():
    """last_epoch >= 0 needs initial_lr in the groups; the first step then uses the closed form."""
    for lib in (glasstorch, torch):
        opt = make_optimizer(lib)
        with pytest.raises(KeyError, match="param 'initial_lr' is not specified in param_groups\\[0\\]"):
            lib.optim.lr_scheduler.StepLR(opt, step_size=2, last_epoch=3)
    seqs = []
    for lib in (glasstorch, torch):
        opt = make_optimizer(lib)
        for g in opt.param_groups:
            g["initial_lr"] = g["lr"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sched = lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10, last_epoch=4)
            seq = [sched.get_last_lr()]
            for _ in range(8):
                opt.step()
                sched.step()
                seq.append(sched.get_last_lr())
        seqs.append(seq)
    assert seqs[0] == seqs[1]


def test_step_with_epoch_uses_closed_form_and_warns():
    seqs = []
    for lib in (glasstorch, torch):
        opt = make_optimizer(lib)
        sched = lib.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
        opt.step()
        with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)` was not necessary"):
            sched.step(7)
        seqs.append(sched.get_last_lr())
    assert seqs[0] == seqs[1] == [0.1 * 0.25, 0.05 * 0.25]


def test_warnings_like_torch():
    opt = make_optimizer(glasstorch)
    sched = glasstorch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    with pytest.warns(UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before `optimizer.step\\(\\)`"):
        sched.step()
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        sched.get_lr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the right order warns about nothing
        opt2 = make_optimizer(glasstorch)
        sched2 = glasstorch.optim.lr_scheduler.ExponentialLR(opt2, gamma=0.5)
        opt2.step()
        sched2.step()


def _error(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
    except Exception as e:  # noqa: BLE001 - we compare whatever torch raises
        return type(e).__name__, str(e)
    return None


BAD_SCHEDULERS = {
    "not an optimizer": lambda S, o: S.StepLR(object(), step_size=2),
    "ConstantLR factor": lambda S, o: S.ConstantLR(o, factor=1.5),
    "LinearLR start": lambda S, o: S.LinearLR(o, start_factor=0),
    "LinearLR end": lambda S, o: S.LinearLR(o, end_factor=2.0),
    "LambdaLR count": lambda S, o: S.LambdaLR(o, [lambda e: 1.0]),
    "MultiplicativeLR callable": lambda S, o: S.MultiplicativeLR(o, 0.5),
    "OneCycleLR steps": lambda S, o: S.OneCycleLR(o, max_lr=1.0),
    "OneCycleLR total_steps": lambda S, o: S.OneCycleLR(o, max_lr=1.0, total_steps=0),
    "OneCycleLR epochs": lambda S, o: S.OneCycleLR(o, max_lr=1.0, epochs=-1, steps_per_epoch=3),
    "OneCycleLR pct_start": lambda S, o: S.OneCycleLR(o, max_lr=1.0, total_steps=10, pct_start=1.5),
    "OneCycleLR anneal": lambda S, o: S.OneCycleLR(o, max_lr=1.0, total_steps=10, anneal_strategy="exp"),
    "OneCycleLR max_lr list": lambda S, o: S.OneCycleLR(o, max_lr=[1.0], total_steps=10),
    "ReduceLROnPlateau factor": lambda S, o: S.ReduceLROnPlateau(o, factor=1.0),
    "ReduceLROnPlateau mode": lambda S, o: S.ReduceLROnPlateau(o, mode="up"),
    "ReduceLROnPlateau threshold_mode": lambda S, o: S.ReduceLROnPlateau(o, threshold_mode="pct"),
    "ReduceLROnPlateau min_lr": lambda S, o: S.ReduceLROnPlateau(o, min_lr=[0.1]),
    "SequentialLR milestones": lambda S, o: S.SequentialLR(o, [S.StepLR(o, 2), S.StepLR(o, 3)], milestones=[]),
    "SequentialLR empty": lambda S, o: S.SequentialLR(o, [], milestones=[]),
    "SequentialLR plateau": lambda S, o: S.SequentialLR(o, [S.StepLR(o, 2), S.ReduceLROnPlateau(o)], [2]),
    "ChainedScheduler empty": lambda S, o: S.ChainedScheduler([]),
    "WarmRestarts T_0": lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=0),
    "WarmRestarts T_mult": lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0),
    "CyclicLR mode": lambda S, o: S.CyclicLR(o, 0.01, 0.1, mode="bogus"),
    "CyclicLR base_lr list": lambda S, o: S.CyclicLR(o, [0.01], 0.1),
    "CyclicLR max_momentum list": lambda S, o: S.CyclicLR(o, 0.01, 0.1, max_momentum=[0.9, 0.9, 0.9]),
}


@pytest.mark.parametrize("case", BAD_SCHEDULERS)
def test_errors_match_torch(case):
    ours = _error(lambda: BAD_SCHEDULERS[case](glasstorch.optim.lr_scheduler, make_optimizer(glasstorch)))
    theirs = _error(lambda: BAD_SCHEDULERS[case](torch.optim.lr_scheduler, make_optimizer(torch)))
    assert theirs is not None and ours == theirs


@pytest.mark.parametrize("make", [lambda S, o: S.OneCycleLR(o, max_lr=1.0, total_steps=10),
                                  lambda S, o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1)], ids=["OneCycleLR", "CyclicLR"])
def test_momentum_cycling_needs_momentum(make):
    for lib in (glasstorch, torch):
        with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
            make(lib.optim.lr_scheduler, make_optimizer(lib, "Adagrad"))


def test_docstring_examples_run():
    result = doctest.testmod(glasstorch.optim.lr_scheduler, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


# ----------------------------------------------------------------------------- third-party schedulers
def third_party_schedulers(S):
    """Three schedulers as published projects write them against torch's API (``_LRScheduler``).

    WarmupMultiStepLR is maskrcnn-benchmark's; GradualWarmupScheduler is ildoonet's
    pytorch-gradual-warmup-lr (it overrides ``step`` and drives another scheduler);
    CosineAnnealingWarmupRestarts is katsura-jp's (it overrides ``step`` and writes the groups itself).
    """
    import math
    from bisect import bisect_right

    class WarmupMultiStepLR(S._LRScheduler):
        def __init__(self, optimizer, milestones, gamma=0.1, warmup_factor=1.0 / 3, warmup_iters=5,
                     warmup_method="linear", last_epoch=-1):
            self.milestones = milestones
            self.gamma = gamma
            self.warmup_factor = warmup_factor
            self.warmup_iters = warmup_iters
            self.warmup_method = warmup_method
            super(WarmupMultiStepLR, self).__init__(optimizer, last_epoch)

        def get_lr(self):
            warmup_factor = 1
            if self.last_epoch < self.warmup_iters:
                alpha = float(self.last_epoch) / self.warmup_iters
                warmup_factor = self.warmup_factor * (1 - alpha) + alpha
            return [base_lr * warmup_factor * self.gamma ** bisect_right(self.milestones, self.last_epoch)
                    for base_lr in self.base_lrs]

    class GradualWarmupScheduler(S._LRScheduler):
        def __init__(self, optimizer, multiplier, total_epoch, after_scheduler=None):
            self.multiplier = multiplier
            self.total_epoch = total_epoch
            self.after_scheduler = after_scheduler
            self.finished = False
            super(GradualWarmupScheduler, self).__init__(optimizer)

        def get_lr(self):
            if self.last_epoch > self.total_epoch:
                if self.after_scheduler:
                    if not self.finished:
                        self.after_scheduler.base_lrs = [base_lr * self.multiplier for base_lr in self.base_lrs]
                        self.finished = True
                    return self.after_scheduler.get_last_lr()
                return [base_lr * self.multiplier for base_lr in self.base_lrs]
            return [base_lr * ((self.multiplier - 1.) * self.last_epoch / self.total_epoch + 1.)
                    for base_lr in self.base_lrs]

        def step(self, epoch=None, metrics=None):
            if self.finished and self.after_scheduler:
                if epoch is None:
                    self.after_scheduler.step(None)
                else:
                    self.after_scheduler.step(epoch - self.total_epoch)
                self._last_lr = self.after_scheduler.get_last_lr()
            else:
                return super(GradualWarmupScheduler, self).step(epoch)

    class CosineAnnealingWarmupRestarts(S._LRScheduler):
        def __init__(self, optimizer, first_cycle_steps, cycle_mult=1., max_lr=0.1, min_lr=0.001, warmup_steps=0,
                     gamma=1., last_epoch=-1):
            self.first_cycle_steps = first_cycle_steps
            self.cycle_mult = cycle_mult
            self.base_max_lr = max_lr
            self.max_lr = max_lr
            self.min_lr = min_lr
            self.warmup_steps = warmup_steps
            self.gamma = gamma
            self.cur_cycle_steps = first_cycle_steps
            self.cycle = 0
            self.step_in_cycle = last_epoch
            super(CosineAnnealingWarmupRestarts, self).__init__(optimizer, last_epoch)
            self.init_lr()

        def init_lr(self):
            self.base_lrs = []
            for param_group in self.optimizer.param_groups:
                param_group['lr'] = self.min_lr
                self.base_lrs.append(self.min_lr)

        def get_lr(self):
            if self.step_in_cycle == -1:
                return self.base_lrs
            elif self.step_in_cycle < self.warmup_steps:
                return [(self.max_lr - base_lr) * self.step_in_cycle / self.warmup_steps + base_lr
                        for base_lr in self.base_lrs]
            return [base_lr + (self.max_lr - base_lr) * (1 + math.cos(
                math.pi * (self.step_in_cycle - self.warmup_steps) / (self.cur_cycle_steps - self.warmup_steps))) / 2
                for base_lr in self.base_lrs]

        def step(self, epoch=None):
            if epoch is None:
                epoch = self.last_epoch + 1
                self.step_in_cycle = self.step_in_cycle + 1
                if self.step_in_cycle >= self.cur_cycle_steps:
                    self.cycle += 1
                    self.step_in_cycle = self.step_in_cycle - self.cur_cycle_steps
                    self.cur_cycle_steps = int((self.cur_cycle_steps - self.warmup_steps) * self.cycle_mult) \
                        + self.warmup_steps
            self.max_lr = self.base_max_lr * (self.gamma ** self.cycle)
            self.last_epoch = math.floor(epoch)
            for param_group, lr in zip(self.optimizer.param_groups, self.get_lr()):
                param_group['lr'] = lr

    return {
        "WarmupMultiStepLR": lambda o: WarmupMultiStepLR(o, milestones=[10, 25], gamma=0.5),
        "GradualWarmupScheduler": lambda o: GradualWarmupScheduler(
            o, multiplier=4, total_epoch=5, after_scheduler=S.CosineAnnealingLR(o, T_max=30)),
        "CosineAnnealingWarmupRestarts": lambda o: CosineAnnealingWarmupRestarts(
            o, first_cycle_steps=12, cycle_mult=1.5, max_lr=0.2, min_lr=0.005, warmup_steps=3, gamma=0.8),
    }


@pytest.mark.parametrize("case", ["WarmupMultiStepLR", "GradualWarmupScheduler", "CosineAnnealingWarmupRestarts"])
def test_third_party_subclasses_of_LRScheduler(case):
    runs = []
    for lib in (glasstorch, torch):
        opt = make_optimizer(lib)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sched = third_party_schedulers(lib.optim.lr_scheduler)[case](opt)
            lrs = [[g["lr"] for g in opt.param_groups]]
            for _ in range(N_STEPS):
                opt.step()
                sched.step()
                lrs.append([g["lr"] for g in opt.param_groups])
        state = sched.state_dict()
        state.pop("after_scheduler", None)   # a scheduler object, from each library
        # CosineAnnealingWarmupRestarts overrides step() and never sets _last_lr: in torch too,
        # get_last_lr() then raises AttributeError
        last = _error(sched.get_last_lr) if case == "CosineAnnealingWarmupRestarts" else sched.get_last_lr()
        runs.append((lrs, state, last))
    assert runs[0][0] == runs[1][0] and len({tuple(x) for x in runs[0][0]}) > 5
    assert runs[0][1] == runs[1][1]
    assert runs[0][2][0] == runs[1][2][0] if case == "CosineAnnealingWarmupRestarts" else runs[0][2] == runs[1][2]


def test_LRScheduler_old_name_and_namespace():
    S = glasstorch.optim.lr_scheduler
    assert issubclass(S._LRScheduler, S.LRScheduler) and S._LRScheduler is not S.LRScheduler
    assert isinstance(S.StepLR(make_optimizer(glasstorch), 2), S.LRScheduler)
    assert S.__all__ == torch.optim.lr_scheduler.__all__


class _Decay:
    """A scale_fn that is a callable object: its attributes go into the scheduler's state dict."""

    def __init__(self, rate):
        self.rate = rate

    def __call__(self, x):
        return self.rate ** x


def test_cyclic_lr_state_dict_keeps_a_callable_objects_state():
    states = []
    for lib in (glasstorch, torch):
        opt = make_optimizer(lib)
        sched = lib.optim.lr_scheduler.CyclicLR(opt, 0.01, 0.1, step_size_up=2, scale_fn=_Decay(0.5))
        opt.step()
        sched.step()
        states.append(sched.state_dict())
        assert states[-1]["_scale_fn_custom"] == {"rate": 0.5} and "_scale_fn_ref" not in states[-1]
    assert states[0] == states[1]

    fn = _Decay(0.9)
    sched2 = glasstorch.optim.lr_scheduler.CyclicLR(make_optimizer(glasstorch), 0.01, 0.1, scale_fn=fn)
    sched2.load_state_dict(dict(states[0]))
    assert fn.rate == 0.5 and sched2.last_epoch == 1
    lam = glasstorch.optim.lr_scheduler.CyclicLR(make_optimizer(glasstorch), 0.01, 0.1, scale_fn=lambda x: 1.0)
    assert lam.state_dict()["_scale_fn_custom"] is None   # a function is not saved
